/*
 * read_records.c - the README's reading example as a program: every record of a
 * trace in time order, its CPU and raw timestamp, then how many there were.
 *   cc read_records.c $(pkg-config --cflags --libs etlkit) -o read_records
 *   ./read_records trace.etl
 */
#include <stdio.h>
#include <etlkit/etlkit.h>

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: read_records FILE.etl\n");
        return 64;
    }
    etl_reader *r;
    etl_iter *it;
    etl_record rec;
    etl_diag d;
    if (etl_reader_open(argv[1], NULL, &r, &d) != ETL_OK) {
        fprintf(stderr, "%s: %s\n", argv[1], d.msg);
        return 2;
    }
    if (etl_iter_open(r, ETL_ORDER_TIME, &it) != ETL_OK) {
        fprintf(stderr, "%s: out of memory\n", argv[1]);
        etl_reader_close(r);
        return 1;
    }
    unsigned long long n = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) { /* rec is a view: valid until the next call */
        printf("%u %llu\n", rec.cpu, (unsigned long long)rec.ts);
        n++;
    }
    etl_iter_close(it);
    etl_reader_close(r);
    printf("records: %llu\n", n);
    return 0;
}

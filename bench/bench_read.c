/*
 * bench_read.c - how fast etlkit reads: open + index, file-order walk, time-order
 * walk, and decoding every kernel event (compact batches expanded), on the files
 * given. Best of N runs, wall clock. A measurement, never a test.
 *
 *   bench_read [-n RUNS] FILE...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "etlkit/etlkit.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static volatile uint64_t sink;

typedef struct result {
    double open_s, file_s, time_s, decode_s;
    uint64_t records, events, switches, bytes;
} result;

static int run(const char *path, result *best, int first)
{
    result r = {0};
    etl_reader *rd;
    etl_diag d;
    double t0 = now();
    if (etl_reader_open(path, NULL, &rd, &d) != ETL_OK) {
        fprintf(stderr, "bench_read: %s: %s\n", path, d.msg);
        return -1;
    }
    r.open_s = now() - t0;
    r.bytes = etl_reader_file_size(rd);
    etl_iter *it;
    etl_record rec;
    for (int order = 0; order < 2; order++) {
        t0 = now();
        etl_iter_open(rd, order ? ETL_ORDER_TIME : ETL_ORDER_FILE, &it);
        uint64_t n = 0, s = 0;
        while (etl_iter_next(it, &rec) == ETL_OK) {
            n++;
            s += rec.ts;
        }
        etl_iter_close(it);
        sink += s;
        r.records = n;
        *(order ? &r.time_s : &r.file_s) = now() - t0;
    }
    /* Decode everything, expanding batches as a scheduler model would. */
    unsigned ncpu = etl_reader_cpu_count(rd) ? etl_reader_cpu_count(rd) : 1;
    etl_batch_expand_cpu *cpus = calloc(ncpu, sizeof *cpus);
    etl_batch_expander x;
    etl_batch_expand_init(&x, cpus, ncpu);
    unsigned bias = etl_max_wait_reason_for_build(etl_reader_header(rd)->provider_version);
    t0 = now();
    etl_iter_open(rd, ETL_ORDER_TIME, &it);
    etl_event ev;
    etl_cswitch sw;
    uint64_t s = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (etl_event_decode(&rec, &ev) != ETL_OK) continue;
        r.events++;
        if (ev.kind == ETL_EVENT_CCSWAP_BATCH) {
            etl_batch_expand_begin(&x, rec.cpu, rec.payload, bias, (uint8_t)rec.version);
            while (etl_batch_expand_next(&x, &sw) == ETL_OK) {
                r.switches++;
                s += sw.old_tid;
            }
        } else if (ev.kind == ETL_EVENT_CSWITCH) {
            r.switches++;
            s += ev.u.cswitch.old_tid;
        }
    }
    while (etl_batch_expand_finish(&x, &sw) == ETL_OK) r.switches++;
    etl_iter_close(it);
    r.decode_s = now() - t0;
    sink += s;
    free(cpus);
    etl_reader_close(rd);
    if (first || r.open_s < best->open_s) best->open_s = r.open_s;
    if (first || r.file_s < best->file_s) best->file_s = r.file_s;
    if (first || r.time_s < best->time_s) best->time_s = r.time_s;
    if (first || r.decode_s < best->decode_s) best->decode_s = r.decode_s;
    best->records = r.records;
    best->events = r.events;
    best->switches = r.switches;
    best->bytes = r.bytes;
    return 0;
}

int main(int argc, char **argv)
{
    int runs = 5, i = 1;
    if (argc > 2 && strcmp(argv[1], "-n") == 0) {
        runs = atoi(argv[2]);
        i = 3;
    }
    if (i >= argc) {
        fprintf(stderr, "usage: bench_read [-n RUNS] FILE...\n");
        return 64;
    }
    printf("%-34s %10s %10s %9s %9s %9s %9s %10s %10s\n", "file", "MB", "records", "open ms", "file MB/s",
           "time MB/s", "dec MB/s", "Mrec/s", "switches");
    for (; i < argc; i++) {
        result b = {0};
        for (int k = 0; k < runs; k++)
            if (run(argv[i], &b, k == 0) != 0) return 1;
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        double mb = (double)b.bytes / 1e6;
        printf("%-34s %10.1f %10llu %9.2f %9.0f %9.0f %9.0f %10.1f %10llu\n", name, mb,
               (unsigned long long)b.records, b.open_s * 1e3, mb / b.file_s, mb / b.time_s, mb / b.decode_s,
               (double)b.records / b.time_s / 1e6, (unsigned long long)b.switches);
    }
    return 0;
}

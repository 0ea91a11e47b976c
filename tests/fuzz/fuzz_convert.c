/*
 * fuzz_convert.c - etl_convert on arbitrary bytes, to compact and to full: it must
 * never crash, and whatever it writes must read back as an undamaged trace, but for
 * the buffers the input misses or that cannot be read whole: the output misses at least
 * the numbers convert leaves out for them (etl_convert_missing: to compact, a switch with
 * no known new thread adds one), each a bad buffer, and nothing else.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"
#include "writer/writer_internal.h"

static char in_path[64], out_path[64];

static void check_output(uint64_t missing, uint64_t left)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open(out_path, NULL, &r, &d) != ETL_OK) abort(); /* convert said OK: it must read */
    etl_iter *it;
    if (etl_iter_open(r, ETL_ORDER_TIME, &it) != ETL_OK) abort();
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
    }
    const etl_stats *os = etl_iter_stats_get(it);
    uint64_t out_missing = etl_reader_buffers_missing(r);
    /* To compact, a switch with no known new thread that another follows is one more (convert.c cut_unknown). */
    if (left < missing || out_missing < left) abort();
    /* Each missing buffer is one bad buffer (a file cut short: truncated too); nothing else is damage. */
    if (os->bad_buffers != out_missing || os->truncated_buffers > out_missing || os->bad_records ||
        os->decompress_errors || os->unsupported_buffers || os->bad_times)
        abort();
    etl_iter_close(it);
    etl_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!in_path[0]) {
        snprintf(in_path, sizeof in_path, "/tmp/etlkit-fuzz-convert-%d-in.etl", (int)getpid());
        snprintf(out_path, sizeof out_path, "/tmp/etlkit-fuzz-convert-%d-out.etl", (int)getpid());
    }
    FILE *f = fopen(in_path, "wb");
    if (!f) return 0;
    fwrite(data, 1, size, f);
    fclose(f);
    uint64_t missing = 0, left = 0; /* the input's missing buffers; the numbers the output leaves out for them */
    etl_reader *in;
    etl_diag din;
    if (etl_reader_open(in_path, NULL, &in, &din) == ETL_OK) {
        missing = etl_reader_buffers_missing(in);
        etl_iter *it; /* a reading in time order first: the buffers it cannot read are left out too */
        if (etl_iter_open(in, ETL_ORDER_TIME, &it) == ETL_OK) {
            etl_record rec;
            while (etl_iter_next(it, &rec) == ETL_OK) {
            }
            etl_iter_close(it);
        }
        left = etl_convert_missing(in);
        etl_reader_close(in);
    }
    for (int mode = ETL_CSWITCH_FULL; mode <= ETL_CSWITCH_COMPACT; mode++) {
        etl_convert_options o = {0};
        o.sz = sizeof o;
        o.cswitch = mode;
        o.compress = 0;
        o.buffer_size = 4096; /* small output buffers: many flushes, little disk */
        o.bias = -1;
        etl_convert_stats st;
        etl_diag d;
        if (etl_convert(in_path, out_path, &o, &st, &d) == ETL_OK) check_output(missing, left);
    }
    unlink(in_path);
    unlink(out_path);
    return 0;
}

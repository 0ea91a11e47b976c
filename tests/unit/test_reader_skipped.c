/*
 * test_reader_skipped.c - records the iterators pass over inside the file are a gap of their CPU
 * (etl_reader_cpu_skipped, explore19 F7): a record that does not frame loses the rest of its
 * buffer, from the last record read before it. Time order and the walks over CPUs note the same
 * place; file order, which knows no CPU's time, notes none; a file read whole has none.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/container.h"
#include "synthtruth.h"

static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* A 4-CPU CSwitch trace, 4 KiB buffers; damaged: the marker of the 10th record of CPU 1's middle buffer zeroed. */
static void make(const char *path, bool damaged)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "seed", "23");
    st_set(&o, "duration", "0.3");
    st_set(&o, "cswitch", "full");
    st_set(&o, "buffer-size", "4K");
    st_truth t;
    st_run(path, &o, &t);
    st_free(&t);
    if (!damaged) return;
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fread(b, 1, n, f), n);
    size_t offs[4096], k = 0;
    for (size_t off = 4096; off + 0x48 <= n && k < 4096; off += 4096) /* buffer 0 holds the logfile header */
        if ((b[off + 0x28] | (b[off + 0x29] & 7) << 8) == 1) offs[k++] = off;
    assert_true(k > 4);
    size_t o2 = offs[k / 2] + 0x48;
    for (int i = 0; i < 10; i++) o2 += ((size_t)(b[o2 + 4] | b[o2 + 5] << 8) + 7) & ~(size_t)7;
    assert_true(u32(b + o2) != 0);
    memset(b + o2, 0, 4);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

static etl_reader *open_quiet(const char *path)
{
    etl_reader *r = NULL;
    etl_reader_options ro = {0};
    ro.sz = sizeof ro;
    assert_int_equal(etl_reader_open(path, &ro, &r, NULL), ETL_OK);
    return r;
}

/* How many of CPU 1's record times (the records read, distinct) the skip is after: 1, the last before it. */
static unsigned hits(const etl_reader *r, const uint64_t *ts, size_t n)
{
    unsigned h = 0;
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || ts[i] != ts[i - 1]) && etl_reader_cpu_skipped(r, 1, ts[i], ts[i] + 1)) h++;
    return h;
}

static void test_skipped(void **state)
{
    (void)state;
    char path[256], clean[256];
    st_tmp(path, sizeof path, "skipped", "d.etl");
    st_tmp(clean, sizeof clean, "skipped", "u.etl");
    make(path, true);
    make(clean, false);

    /* Time order: CPU 1's skip is after its last record read before it, and nowhere else. */
    etl_reader *r = open_quiet(path);
    assert_false(etl_reader_cpu_skipped(r, 1, 0, UINT64_MAX)); /* not read yet */
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    uint64_t *ts = malloc(100000 * sizeof *ts);
    assert_non_null(ts);
    size_t n = 0;
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK)
        if (rec.cpu == 1 && (rec.has & ETL_REC_TS) && n < 100000) ts[n++] = rec.ts;
    assert_true(etl_iter_stats_get(it)->bad_records >= 1);
    etl_iter_close(it);
    assert_true(etl_reader_cpu_skipped(r, 1, 0, UINT64_MAX));
    for (unsigned c = 0; c < 4; c++)
        if (c != 1) assert_false(etl_reader_cpu_skipped(r, c, 0, UINT64_MAX));
    assert_int_equal(hits(r, ts, n), 1);
    etl_reader_close(r);

    /* The walks over CPUs (per-CPU cursors, as the scheduler's source and the per-CPU run read): the same place. */
    r = open_quiet(path);
    uint8_t want[4] = {1, 1, 1, 1};
    assert_int_equal(etl_iter_open_cpu_walks(r, want, 4, true, &it), ETL_OK);
    for (unsigned k = 0; k < etl_iter_walk_count(it); k++) {
        etl_walk w;
        etl_krec kr;
        while (etl_iter_next_buffer_of(it, k, &w) == ETL_OK)
            while (etl_walk_next(&w, &kr) != ETL_WALK_END) {
            }
    }
    etl_iter_close(it);
    for (unsigned c = 0; c < 4; c++) assert_int_equal(etl_reader_cpu_skipped(r, c, 0, UINT64_MAX), c == 1);
    assert_int_equal(hits(r, ts, n), 1);
    etl_reader_close(r);

    /* File order knows no CPU's time: it notes nothing. */
    r = open_quiet(path);
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    while (etl_iter_next(it, &rec) == ETL_OK) {
    }
    etl_iter_close(it);
    assert_false(etl_reader_cpu_skipped(r, 1, 0, UINT64_MAX));
    etl_reader_close(r);

    /* A file read whole has none. */
    r = open_quiet(clean);
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    while (etl_iter_next(it, &rec) == ETL_OK) {
    }
    etl_iter_close(it);
    for (unsigned c = 0; c < 4; c++) assert_false(etl_reader_cpu_skipped(r, c, 0, UINT64_MAX));
    etl_reader_close(r);
    free(ts);
    unlink(path);
    unlink(clean);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_skipped)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

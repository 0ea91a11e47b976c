/*
 * test_regressions.c - every input in tests/data/regressions (fuzzer and review
 * finds) through the whole read path, in both orders with every event decoded and
 * batches expanded, and through convert both ways. Each must finish, without a
 * crash (the sanitizer build checks memory), and whatever convert writes must
 * read back undamaged, but for the buffers the input misses: the output misses
 * them too (at least as many: cli/convert_gaps), and nothing else.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"
#include "etlkit/sched.h"
#include "etlkit/usage.h"
#include "writer/writer_internal.h"

#define DIR_PATH ETLKIT_TEST_DATA "/regressions"

static void walk(etl_reader *r, etl_order order)
{
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, order, &it), ETL_OK);
    unsigned ncpu = etl_reader_cpu_count(r) ? etl_reader_cpu_count(r) : 1;
    etl_batch_expand_cpu *cpus = calloc(ncpu, sizeof *cpus);
    etl_batch_expander x;
    assert_int_equal(etl_batch_expand_init(&x, cpus, ncpu), ETL_OK);
    etl_record rec;
    etl_event ev;
    etl_cswitch sw;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (etl_event_decode(&rec, &ev) == ETL_OK && ev.kind == ETL_EVENT_CCSWAP_BATCH) {
            etl_batch_expand_begin(&x, rec.cpu, rec.payload, 40, (uint8_t)rec.version);
            while (etl_batch_expand_next(&x, &sw) == ETL_OK) {
            }
        }
    }
    while (etl_batch_expand_finish(&x, &sw) == ETL_OK) {
    }
    etl_iter_close(it);
    free(cpus);
}

/* The scheduler model and its aggregations: no negative duration, whatever the input. */
static void model(etl_reader *r)
{
    etl_usage u;
    memset(&u, 0, sizeof u);
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_usage_add, .ctx = &u};
    etl_usage_options uo = {.sz = sizeof uo, .interval_ns = 1000000};
    etl_sched_source *s;
    etl_sched *m;
    assert_int_equal(etl_sched_source_open(r, NULL, &s), ETL_OK);
    assert_int_equal(etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), &mo, &m), ETL_OK);
    assert_int_equal(etl_usage_init(&u, m, &uo), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(m, &ev);
    uint64_t end = etl_sched_end_ts(r, etl_sched_source_stats_get(s)->last_ts);
    etl_sched_finish(m, end);
    etl_usage_finish(&u, etl_clock_ns(etl_reader_clock(r), end));
    for (size_t i = 0; i < u.nthreads; i++) {
        assert_true(u.threads[i].cpu_ns >= 0);
        assert_true(u.threads[i].ready.sum_ns >= 0);
        assert_true(u.threads[i].wait_ns >= 0);
    }
    for (size_t c = 0; c < u.ncpus; c++) assert_true(u.cpus[c].busy_ns >= 0 && u.cpus[c].idle_ns >= 0);
    etl_usage_free(&u);
    etl_sched_close(m);
    etl_sched_source_close(s);
}

static void one(const char *path)
{
    etl_reader *r;
    etl_diag d;
    uint64_t missing = 0, left = 0; /* the input's missing buffers; the numbers convert leaves out for them */
    if (etl_reader_open(path, NULL, &r, &d) == ETL_OK) {
        missing = etl_reader_buffers_missing(r);
        walk(r, ETL_ORDER_FILE);
        walk(r, ETL_ORDER_TIME);
        left = etl_convert_missing(r); /* after a reading in time order: the buffers it could not read too */
        model(r);
        etl_reader_close(r);
    }
    char out[64];
    snprintf(out, sizeof out, "/tmp/etlkit-regression-%d.etl", (int)getpid());
    for (int mode = ETL_CSWITCH_KEEP; mode <= ETL_CSWITCH_COMPACT; mode++) {
        etl_convert_options o = {0};
        o.sz = sizeof o;
        o.cswitch = mode;
        o.compress = -1;
        o.bias = -1;
        etl_convert_stats st;
        if (etl_convert(path, out, &o, &st, &d) != ETL_OK) continue;
        assert_int_equal(etl_reader_open(out, NULL, &r, &d), ETL_OK);
        etl_iter *it;
        assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
        etl_record rec;
        while (etl_iter_next(it, &rec) == ETL_OK) {
        }
        const etl_stats *os = etl_iter_stats_get(it);
        uint64_t out_missing = etl_reader_buffers_missing(r);
        /* The input's holes and tail, none lost (left >= missing: a buffer with an impossible SequenceNumber
           fills one of the input's gaps, not the output's). */
        assert_true(left >= missing);
        /* At least those: convert finds more itself (a damaged batch expanded, a switch with no known new thread to
           compact), each one more hole. */
        assert_true(out_missing >= left);
        /* Each missing buffer is one bad buffer (a file cut short: truncated too); nothing else is damage. */
        assert_int_equal(os->bad_buffers, out_missing);
        assert_true(os->truncated_buffers <= out_missing);
        assert_false(os->bad_records || os->decompress_errors || os->unsupported_buffers || os->bad_times);
        etl_iter_close(it);
        etl_reader_close(r);
    }
    unlink(out);
}

static void test_regression_inputs(void **state)
{
    (void)state;
    DIR *dir = opendir(DIR_PATH);
    assert_non_null(dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".etl") != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", DIR_PATH, e->d_name);
        print_message("%s\n", e->d_name);
        one(path);
        n++;
    }
    closedir(dir);
    assert_true(n > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_regression_inputs)};
    return cmocka_run_group_tests_name("regressions", tests, NULL, NULL);
}

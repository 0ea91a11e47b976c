/*
 * test_regressions.c - every input in tests/data/regressions (fuzzer and review
 * finds) through the whole read path, in both orders with every event decoded and
 * batches expanded, and through convert both ways. Each must finish, without a
 * crash (the sanitizer build checks memory), and whatever convert writes must
 * read back undamaged.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"

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

static void one(const char *path)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open(path, NULL, &r, &d) == ETL_OK) {
        walk(r, ETL_ORDER_FILE);
        walk(r, ETL_ORDER_TIME);
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
        assert_false(etl_stats_damaged(etl_iter_stats(it)));
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

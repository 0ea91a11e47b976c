/*
 * test_api_null.c - the public API's cleanup calls take NULL as the handles' close calls do (a program's
 * cleanup path may free what it never made: they crashed); etl_profile_options_init's defaults select
 * every sample (a zeroed struct selects PID 0, Idle); arguments out of range are refused, never answered
 * with ETL_OK or a value that looks real.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <limits.h>
#include <stdint.h>
#include <cmocka.h>
#include "etlkit/etlkit.h"
#include "etlkit/compare.h"
#include "etlkit/pmc.h"
#include "etlkit/profile.h"
#include "etlkit/sched.h"
#include "etlkit/spinlocks.h"
#include "etlkit/usage.h"
#include "etlkit/waitchain.h"
#include "etlkit/wakeups.h"
#include "etlkit/writer.h"

static void test_free_null(void **state)
{
    (void)state;
    etl_usage_free(NULL);
    etl_profile_free(NULL);
    etl_profile_butterfly_free(NULL);
    etl_spinlocks_free(NULL);
    etl_pmc_free(NULL);
    etl_wakeups_free(NULL);
    etl_chain_free(NULL);
    etl_summary_free(NULL);
    etl_compare_free(NULL);
    etl_record_cache_free(NULL);
    etl_reader_close(NULL);
    etl_iter_close(NULL);
    etl_sched_close(NULL);
    etl_sched_source_close(NULL);
    etl_diag d = {0};
    assert_int_equal(etl_writer_close(NULL, 0, &d), ETL_OK); /* crashed: flushed first */
    assert_int_equal(etl_writer_close(NULL, 0, NULL), ETL_OK);
}

static void test_profile_options_init(void **state)
{
    (void)state;
    etl_profile_options o;
    etl_profile_options_init(&o);
    assert_int_equal(o.sz, sizeof o);
    assert_true(o.pid == -1 && o.tid == -1);
    assert_null(o.process);
    assert_true(o.v1 <= o.v0); /* the whole trace */
    assert_false(o.no_stacks);
}

static void test_bad_arguments(void **state)
{
    (void)state;
    etl_reader *r;
    etl_diag d = {0};
    assert_int_equal(etl_reader_open_memory(NULL, 100, NULL, &r, &d), ETL_E_INVALID_ARG); /* was "only 100 bytes" */
    assert_null(r);
    r = (etl_reader *)&d;
    assert_int_equal(etl_reader_open(NULL, NULL, &r, &d), ETL_E_INVALID_ARG); /* crashed: strcmp on NULL */
    assert_null(r);
    assert_int_equal(etl_reader_open(NULL, NULL, &r, NULL), ETL_E_INVALID_ARG);
    assert_int_equal(etl_reader_open(ETLKIT_SHARED_DIR "/samples/lxcore-x64.etl", NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, (etl_order)7, &it), ETL_E_INVALID_ARG); /* was OK, yielding nothing */
    assert_null(it);
    assert_true(etl_reader_buffer_cpu(r, etl_reader_buffer_count(r)) == UINT_MAX); /* was CPU 0 */
    etl_sched *m;
    assert_int_equal(etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), NULL, &m), ETL_OK);
    int64_t edges[] = {100000, 10000, 1000, 0}; /* descending: the bins would be wrong */
    etl_usage_options uo = {.sz = sizeof uo, .ready_hist_lo = edges, .ready_hist_bins = 4};
    etl_usage u;
    assert_int_equal(etl_usage_init(&u, m, &uo), ETL_E_INVALID_ARG);
    etl_usage_free(&u);
    int64_t ascending[] = {0, 1000, 10000, 100000};
    uo.ready_hist_lo = ascending;
    assert_int_equal(etl_usage_init(&u, m, &uo), ETL_OK);
    etl_usage_free(&u);
    etl_sched_close(m);
    etl_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_profile_options_init),
        cmocka_unit_test(test_bad_arguments),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

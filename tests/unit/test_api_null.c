/*
 * test_api_null.c - the public API's cleanup calls take NULL as the handles' close calls do (a program's
 * cleanup path may free what it never made: they crashed), and etl_profile_options_init's defaults select
 * every sample (a zeroed struct selects PID 0, Idle).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_free_null),
        cmocka_unit_test(test_profile_options_init),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

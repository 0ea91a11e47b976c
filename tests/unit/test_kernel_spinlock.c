/*
 * test_kernel_spinlock.c - spin lock sampling: the parameters' minimums and
 * messages, and the three conditions of spec 8.1 on hand-computed sequences.
 */
#include <string.h>
#include "testutil.h"
#include "etlkit/kernel.h"

static etl_spinlock_info cfg(uint32_t spin, uint32_t acquire, uint32_t contention, uint32_t hold)
{
    etl_spinlock_info c = {spin, acquire, contention, hold, true};
    return c;
}

static void test_defaults(void **state)
{
    (void)state;
    etl_spinlock_info d = etl_spinlock_info_defaults();
    assert_int_equal(d.spin_lock_spin_threshold, 1);
    assert_int_equal(d.spin_lock_acquire_sample_rate, 1000);
    assert_int_equal(d.spin_lock_contention_sample_rate, 1);
    assert_int_equal(d.spin_lock_hold_threshold, 1000000);
    assert_true(d.has_hold_threshold);
    assert_int_equal(etl_spinlock_info_validate(&d, NULL), ETL_OK);
}

static void expect_rejected(etl_spinlock_info c, const char *field, const char *minimum)
{
    etl_diag diag;
    memset(&diag, 0, sizeof diag);
    assert_int_equal(etl_spinlock_info_validate(&c, &diag), ETL_E_INVALID_ARG);
    assert_int_equal(diag.status, ETL_E_INVALID_ARG);
    assert_true(diag.file_offset == UINT64_MAX);
    if (!strstr(diag.msg, field) || !strstr(diag.msg, minimum))
        fail_msg("message \"%s\" should name %s and %s", diag.msg, field, minimum);
}

static void test_validation(void **state)
{
    (void)state;
    expect_rejected(cfg(0, 1000, 1, 0), "SpinLockSpinThreshold", "minimum 1");
    expect_rejected(cfg(1, 999, 1, 0), "SpinLockAcquireSampleRate", "minimum 1000");
    expect_rejected(cfg(1, 1000, 0, 0), "SpinLockContentionSampleRate", "minimum 1");
    expect_rejected(cfg(1, 1000, 1, 999999), "SpinLockHoldThreshold", "1000000");
    expect_rejected(cfg(1, 1000, 1, 1), "SpinLockHoldThreshold", "0 or at least");

    etl_diag diag;
    memset(&diag, 0, sizeof diag);
    etl_spinlock_info low = cfg(1, 999, 1, 0);
    assert_int_equal(etl_spinlock_info_validate(&low, &diag), ETL_E_INVALID_ARG);
    assert_string_equal(diag.msg, "SpinLockAcquireSampleRate 999 is below the minimum 1000");

    /* at the minimums, hold threshold 0 (off), and the 0x10-byte form ignoring it */
    etl_spinlock_info ok[3] = {cfg(1, 1000, 1, 0), cfg(7, 5000, 3, 1000000), cfg(1, 1000, 1, 5)};
    ok[2].has_hold_threshold = false;
    for (unsigned i = 0; i < 3; i++)
        assert_int_equal(etl_spinlock_info_validate(&ok[i], NULL), ETL_OK);
}

static void test_init(void **state)
{
    (void)state;
    etl_spinlock_sampler s;
    etl_spinlock_cpu_counters per_cpu[2] = {{5, 5}, {5, 5}};
    etl_spinlock_info bad = cfg(1, 10, 1, 0);
    assert_int_equal(etl_spinlock_sampler_init(&s, &bad, per_cpu, 2), ETL_E_INVALID_ARG);
    etl_spinlock_info d = etl_spinlock_info_defaults();
    assert_int_equal(etl_spinlock_sampler_init(&s, &d, NULL, 2), ETL_E_INVALID_ARG);
    assert_int_equal(etl_spinlock_sampler_init(&s, &d, per_cpu, 2), ETL_OK);
    assert_true(per_cpu[0].contended == 0 && per_cpu[1].uncontended == 0);
    /* an unknown processor counts nothing */
    assert_false(etl_spinlock_should_log(&s, 2, 5, 0));
    assert_true(per_cpu[0].contended == 0 && per_cpu[1].contended == 0);
}

/* Defaults: every contended acquisition, every 1000th uncontended one per CPU. */
static void test_default_sampling(void **state)
{
    (void)state;
    etl_spinlock_sampler s;
    etl_spinlock_cpu_counters per_cpu[2];
    etl_spinlock_info d = etl_spinlock_info_defaults();
    assert_int_equal(etl_spinlock_sampler_init(&s, &d, per_cpu, 2), ETL_OK);
    unsigned logged = 0;
    for (unsigned i = 1; i <= 2500; i++) {
        bool log = etl_spinlock_should_log(&s, 0, 0, 100);
        assert_int_equal(log, i % 1000 == 0);
        logged += log;
    }
    assert_int_equal(logged, 2);
    for (unsigned i = 0; i < 10; i++) assert_true(etl_spinlock_should_log(&s, 0, 1 + i, 100));
    assert_int_equal(per_cpu[0].uncontended, 2500);
    assert_int_equal(per_cpu[0].contended, 10);
    /* CPU 1 counts on its own: its 999th is not logged, its 1000th is */
    for (unsigned i = 1; i < 1000; i++) assert_false(etl_spinlock_should_log(&s, 1, 0, 0));
    assert_true(etl_spinlock_should_log(&s, 1, 0, 0));
}

/* Rule 2: spins >= SpinThreshold and contended count a multiple of the rate. */
static void test_contention_rule(void **state)
{
    (void)state;
    etl_spinlock_sampler s;
    etl_spinlock_cpu_counters per_cpu[1];
    etl_spinlock_info c = cfg(10, 1000, 3, 0);
    assert_int_equal(etl_spinlock_sampler_init(&s, &c, per_cpu, 1), ETL_OK);
    /*            spins:  5   12  12  3   20  10  9   0   11  10 */
    /* contended count:   1   2   3   4   5   6   7   -   8   9  */
    static const uint32_t spins[] = {5, 12, 12, 3, 20, 10, 9, 0, 11, 10};
    static const bool want[] = {0, 0, 1, 0, 0, 1, 0, 0, 0, 1};
    for (unsigned i = 0; i < sizeof spins / sizeof spins[0]; i++)
        assert_int_equal(etl_spinlock_should_log(&s, 0, spins[i], 0), want[i]);
    assert_int_equal(per_cpu[0].contended, 9);
    assert_int_equal(per_cpu[0].uncontended, 1);

    /* a multiple of the rate with too few spins is not logged */
    c = cfg(10, 1000, 1, 0);
    assert_int_equal(etl_spinlock_sampler_init(&s, &c, per_cpu, 1), ETL_OK);
    assert_false(etl_spinlock_should_log(&s, 0, 9, 0));
    assert_true(etl_spinlock_should_log(&s, 0, 10, 0));
}

/* Rule 3: no spins and uncontended count a multiple of AcquireSampleRate. */
static void test_acquire_rule(void **state)
{
    (void)state;
    etl_spinlock_sampler s;
    etl_spinlock_cpu_counters per_cpu[1];
    etl_spinlock_info c = cfg(1, 1500, 1, 0);
    assert_int_equal(etl_spinlock_sampler_init(&s, &c, per_cpu, 1), ETL_OK);
    unsigned logged_at[3], n = 0;
    for (unsigned i = 1; i <= 4500; i++) {
        /* contended acquisitions in between do not move the uncontended count */
        if (i % 7 == 0) assert_true(etl_spinlock_should_log(&s, 0, 2, 0));
        if (etl_spinlock_should_log(&s, 0, 0, 0)) logged_at[n++] = i;
    }
    assert_int_equal(n, 3);
    assert_true(logged_at[0] == 1500 && logged_at[1] == 3000 && logged_at[2] == 4500);
}

/* Rule 1: held for more than SpinLockHoldThreshold cycles, whatever the counts. */
static void test_hold_rule(void **state)
{
    (void)state;
    etl_spinlock_sampler s;
    etl_spinlock_cpu_counters per_cpu[1];
    etl_spinlock_info c = cfg(100, 1000, 50, 2000000);
    assert_int_equal(etl_spinlock_sampler_init(&s, &c, per_cpu, 1), ETL_OK);
    assert_false(etl_spinlock_should_log(&s, 0, 0, 1999999));
    assert_int_equal(etl_spinlock_should_log(&s, 0, 0, 2000000), !ETL_SPINLOCK_HOLD_RULE_STRICT);
    assert_true(etl_spinlock_should_log(&s, 0, 0, 2000001));
    assert_true(etl_spinlock_should_log(&s, 0, 3, UINT64_MAX)); /* too few spins, held long */
    assert_int_equal(per_cpu[0].uncontended, 3);
    assert_int_equal(per_cpu[0].contended, 1);

    /* threshold 0 turns the rule off; so does the 0x10-byte form */
    c = cfg(100, 1000, 50, 0);
    assert_int_equal(etl_spinlock_sampler_init(&s, &c, per_cpu, 1), ETL_OK);
    assert_false(etl_spinlock_should_log(&s, 0, 0, UINT64_MAX));
    c = (etl_spinlock_info){100, 1000, 50, 1000000, false};
    assert_int_equal(etl_spinlock_sampler_init(&s, &c, per_cpu, 1), ETL_OK);
    assert_false(etl_spinlock_should_log(&s, 0, 0, UINT64_MAX));

    /* the default threshold, one cycle either side */
    etl_spinlock_info d = etl_spinlock_info_defaults();
    assert_int_equal(etl_spinlock_sampler_init(&s, &d, per_cpu, 1), ETL_OK);
    assert_false(etl_spinlock_should_log(&s, 0, 0, 999999));
    assert_false(etl_spinlock_should_log(&s, 0, 0, 1000000));
    assert_true(etl_spinlock_should_log(&s, 0, 0, 1000001));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_validation),
        cmocka_unit_test(test_init),
        cmocka_unit_test(test_default_sampling),
        cmocka_unit_test(test_contention_rule),
        cmocka_unit_test(test_acquire_rule),
        cmocka_unit_test(test_hold_rule),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

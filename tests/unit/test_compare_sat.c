/*
 * test_compare_sat.c - compare on amounts near the limits of int64 (issue 18): what a damaged
 * trace could make of a window or a CPU's busy time before its times were checked, and what a
 * hostile EndTime can still make. The window, the sums and the changes saturate instead of
 * wrapping (signed overflow: UBSan flagged gather, the change sort and --fail-if's delta).
 */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/compare.h"

/* A finished etl_usage with two CPUs busy a, b over [v0, v1]: no threads, processes or waits. */
static void usage(etl_usage *u, etl_usage_cpu *cpus, int64_t v0, int64_t v1, int64_t a, int64_t b)
{
    memset(u, 0, sizeof *u);
    memset(cpus, 0, 2 * sizeof *cpus);
    u->o.sz = sizeof u->o;
    u->o.v0 = v0;
    u->o.v1 = v1;
    cpus[0].busy_ns = a;
    cpus[1].busy_ns = b;
    u->cpus = cpus;
    u->ncpus = 2;
}

static void test_limits(void **state)
{
    (void)state;
    etl_usage x, y;
    etl_usage_cpu cx[2], cy[2];
    /* A window across the whole range, busy times whose sum passes INT64_MAX. */
    usage(&x, cx, INT64_MIN, INT64_MAX, INT64_MAX / 2 + 1, INT64_MAX / 2 + 1);
    usage(&y, cy, 0, 1000000000, 1000, 1000);
    etl_compare c;
    assert_int_equal(etl_compare_build(&c, &x, &y), ETL_OK);
    assert_true(c.window_before == INT64_MAX); /* wrapped: -1 */
    assert_true(c.total.before[ETL_CMP_CPU] >= 0);
    assert_true(c.total.after[ETL_CMP_CPU] == 2000);

    /* --fail-if's change: after - before saturates, its sign kept. */
    etl_cmp_expr e;
    char err[256];
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 1s", &e, err, sizeof err), ETL_OK);
    int64_t delta;
    int found;
    c.total.before[ETL_CMP_CPU] = INT64_MIN + 1;
    c.total.after[ETL_CMP_CPU] = INT64_MAX;
    assert_int_equal(etl_cmp_expr_eval(&c, &e, &delta, &found), 1);
    assert_true(found);
    assert_true(delta == INT64_MAX);
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 10%", &e, err, sizeof err), ETL_OK);
    c.total.before[ETL_CMP_CPU] = -1;
    assert_int_equal(etl_cmp_expr_eval(&c, &e, &delta, &found), 1);
    assert_true(delta == INT64_MAX);
    c.total.before[ETL_CMP_CPU] = INT64_MAX;
    c.total.after[ETL_CMP_CPU] = INT64_MIN;
    assert_int_equal(etl_cmp_expr_eval(&c, &e, &delta, &found), 0);
    assert_true(delta < 0);

    /* A relative gate compares the change exactly: +10.004 % crosses "> 10%" (it was cut to 10.00 % and passed);
     * exactly +10 % does not; the change shown is rounded. */
    c.total.before[ETL_CMP_CPU] = 10000000;
    c.total.after[ETL_CMP_CPU] = 11000400;
    assert_int_equal(etl_cmp_expr_eval(&c, &e, &delta, &found), 1);
    assert_true(delta == 1000);
    c.total.after[ETL_CMP_CPU] = 11000000;
    assert_int_equal(etl_cmp_expr_eval(&c, &e, &delta, &found), 0);
    c.total.after[ETL_CMP_CPU] = 8999950; /* -10.0005 %: below -10 %, shown -10.00 % */
    assert_int_equal(etl_cmp_expr_parse("cpu(total) < -10%", &e, err, sizeof err), ETL_OK);
    assert_int_equal(etl_cmp_expr_eval(&c, &e, &delta, &found), 1);
    assert_true(delta == -1000);
    /* Amounts per second of window are rounded, not cut: 2 ns in 3 ns is 666,666,667 ns/s. */
    assert_true(etl_per_second(2, 3) == 666666667);
    assert_true(etl_per_second(-2, 3) == -666666667);
    assert_true(etl_per_second(1, 3) == 333333333);
    /* A threshold finer than its step is refused, never cut: 1e-5 % was read as 0 %. */
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 1e-5%", &e, err, sizeof err), ETL_E_INVALID_ARG);
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 10.005%", &e, err, sizeof err), ETL_E_INVALID_ARG);
    assert_int_equal(etl_cmp_expr_parse("switches(total) > 1.0001", &e, err, sizeof err), ETL_E_INVALID_ARG);
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 10.01%", &e, err, sizeof err), ETL_OK);
    assert_true(e.threshold == 1001);
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 1.5e-2%", &e, err, sizeof err), ETL_E_INVALID_ARG);
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > 2.5e-1%", &e, err, sizeof err), ETL_OK);
    assert_true(e.threshold == 25);
    etl_compare_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_limits),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

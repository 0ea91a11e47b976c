/*
 * test_pmc_damage.c - pmc's counts and ratios on damaged or partial input: every count is over the selection the
 * slices are (the switches with counters were the whole trace's beside a window's slices), and a figure that cannot
 * be computed is unknown (-1), never 0.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/pmc.h"

/* One slice [si, nso) on cpu by the idle thread; in or out NULL: a head or tail slice; n counters at each end (0: a
 * switch without). */
static void row(etl_pmc *p, uint32_t cpu, int64_t si, int64_t nso, unsigned n, const uint64_t *in,
                const uint64_t *out)
{
    etl_cswitch a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (in && n) a.known = ETL_CSW_PMC, a.pmc_count = (uint8_t)n, memcpy(a.pmc, in, n * sizeof *in);
    if (out && n) b.known = ETL_CSW_PMC, b.pmc_count = (uint8_t)n, memcpy(b.pmc, out, n * sizeof *out);
    etl_sched_row r;
    memset(&r, 0, sizeof r);
    r.new_thread = ETL_SCHED_IDLE;
    r.cpu = cpu;
    r.in = in ? &a : NULL;
    r.out = out ? &b : NULL;
    r.si = si;
    r.nso = nso;
    etl_pmc_add(p, &r);
}

static void init(etl_pmc *p, int64_t v0, int64_t v1)
{
    etl_pmc_options o;
    etl_pmc_options_init(&o); /* cycles, instructions, llc, branch */
    o.v0 = v0;
    o.v1 = v1;
    assert_int_equal(etl_pmc_init(p, NULL, &o), ETL_OK);
}

/* The switches with and without counters are the window's, as the slices are; the columns stay the trace's. */
static void test_switches_in_window(void **state)
{
    (void)state;
    static const uint64_t a[4] = {1000, 1000, 1, 1}, b[4] = {4000, 5000, 2, 2};
    etl_pmc p;
    init(&p, 1000000, 2000000);
    row(&p, 0, 0, 1000, 4, NULL, a);                /* head slice: no switch-in */
    row(&p, 0, 1000, 2000, 4, a, b);                /* before the window */
    row(&p, 0, 1500000, 1501000, 4, a, b);          /* in it */
    row(&p, 1, 1600000, 1601000, 4, a, NULL);       /* in it, no counters at its switch-out */
    row(&p, 1, 1700000, 1701000, 0, a, NULL);       /* in it, a switch-in without counters */
    row(&p, 1, 3000000, 3001000, 4, a, b);          /* after it */
    assert_int_equal(etl_pmc_finish(&p, 5000000), ETL_OK);
    assert_int_equal(p.total.slices, 1);
    assert_int_equal(p.counters, 4);
    assert_int_equal(p.switches_pmc, 2);
    assert_int_equal(p.switches_no_pmc, 1);
    assert_int_equal(p.slices_unpaired, 0);
    etl_pmc_free(&p);

    /* A window of nothing: no switch either. */
    init(&p, 9000000, 9500000);
    row(&p, 0, 1000, 2000, 4, a, b);
    assert_int_equal(etl_pmc_finish(&p, 10000000), ETL_OK);
    assert_int_equal(p.total.slices, 0);
    assert_int_equal(p.switches_pmc, 0);
    assert_int_equal(p.switches_no_pmc, 0);
    assert_int_equal(p.counters, 4);
    etl_pmc_free(&p);
}

/* No instruction over cycles that counted: an instructions counter that did not count, no IPC of 0 (nor CPI, MPKI). */
static void test_instructions_not_counted(void **state)
{
    (void)state;
    etl_pmc p;
    init(&p, 0, 0);
    p.counters = 4;
    etl_pmc_sums s;
    memset(&s, 0, sizeof s);
    s.slices = 10;
    s.cpu_ns = 1000000;
    s.delta[0] = 3000000; /* cycles */
    s.delta[2] = 5;       /* LLC misses */
    etl_pmc_ratios r;
    etl_pmc_ratios_of(&p, &s, &r);
    assert_int_equal(r.ipc_x1000, -1);
    assert_int_equal(r.cpi_x1000, -1);
    assert_int_equal(r.llc_mpki_x1000, -1);
    assert_int_equal(r.branch_mpki_x1000, -1);
    assert_int_equal(r.ghz_x1000, 3000);
    s.delta[1] = 1500000; /* counted: 0.5 */
    etl_pmc_ratios_of(&p, &s, &r);
    assert_int_equal(r.ipc_x1000, 500);
    assert_int_equal(r.cpi_x1000, 2000);
    etl_pmc_free(&p);
}

/*
 * CPU 1's switches carry 2 counters, CPU 0's 4 (a damaged or hostile trace): LLC and branch misses are counted on
 * CPU 0 only. Their sums over both CPUs' slices were CPU 0's read as the whole, and the LLC MPKI divided CPU 0's
 * misses by both CPUs' instructions (half the truth here); CPU 1's row read 0 misses. Now partial: unknown.
 */
static void test_slots_missing_on_a_cpu(void **state)
{
    (void)state;
    static const uint64_t a[4] = {1000, 1000, 10, 10}, b[4] = {3001000, 2001000, 1010, 2010};
    etl_pmc p;
    init(&p, 0, 0);
    row(&p, 0, 0, 1000000, 4, a, b);
    row(&p, 1, 0, 1000000, 2, a, b);
    assert_int_equal(etl_pmc_finish(&p, 2000000), ETL_OK);
    assert_int_equal(p.counters, 4);
    assert_int_equal(p.total.slices, 2);
    assert_int_equal(p.slices_by_count[2], 1);
    assert_int_equal(p.slices_by_count[4], 1);
    etl_pmc_ratios r;
    etl_pmc_ratios_of(&p, &p.total, &r);
    assert_int_equal(r.ipc_x1000, 667); /* cycles and instructions: every slice has them */
    assert_int_equal(r.llc_mpki_x1000, -1);
    assert_int_equal(r.branch_mpki_x1000, -1);
    assert_true(p.total.partial >> 2 & 1);
    assert_true(p.total.partial >> 3 & 1);
    assert_false(p.total.partial & 3);
    assert_int_equal(p.threads[0].s.partial, p.total.partial);
    /* CPU 0 whole, CPU 1 without slots 2 and 3 (not 0 misses). */
    assert_false(p.cpus[0].partial & 0xF);
    etl_pmc_ratios_of(&p, &p.cpus[0], &r);
    assert_int_equal(r.llc_mpki_x1000, 500);
    assert_int_equal(p.cpus[1].partial & 0xF, 0xC);
    etl_pmc_ratios_of(&p, &p.cpus[1], &r);
    assert_int_equal(r.llc_mpki_x1000, -1);
    assert_int_equal(r.ipc_x1000, 667);
    etl_pmc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_switches_in_window),
        cmocka_unit_test(test_instructions_not_counted),
        cmocka_unit_test(test_slots_missing_on_a_cpu),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_pmc_sums.c - a PMC sum past 2^64 is not known (etl_pmc_sums.saturated), never
 * read as one: a slot of another kind is not checked for jumps (ETL_PMC_MAX_HZ bounds
 * the named ones), so two CPUs' counters that each jumped by 2^63 made a total that
 * stopped at UINT64_MAX, below its own CPUs' sum, and pmc printed it, exit 0. One CPU's
 * deltas cannot pass 2^64 (its counter would wrap); threads, processes and the total can.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/pmc.h"

/* One slice [si, nso) on cpu by the idle thread, between switches with counters in and out. */
static void row(etl_pmc *p, uint32_t cpu, int64_t si, int64_t nso, const uint64_t *in, const uint64_t *out)
{
    etl_cswitch a, b;
    memset(&a, 0, sizeof a);
    a.known = ETL_CSW_PMC;
    a.pmc_count = 3;
    b = a;
    memcpy(a.pmc, in, 3 * sizeof *in);
    memcpy(b.pmc, out, 3 * sizeof *out);
    etl_sched_row r;
    memset(&r, 0, sizeof r);
    r.new_thread = ETL_SCHED_IDLE;
    r.cpu = cpu;
    r.in = &a;
    r.out = &b;
    r.si = si;
    r.nso = nso;
    etl_pmc_add(p, &r);
}

static void test_other_slot_saturates(void **state)
{
    (void)state;
    etl_pmc p;
    etl_pmc_options o;
    etl_pmc_options_init(&o);
    o.nkinds = 3;
    o.kinds[0] = ETL_PMC_CYCLES;
    o.kinds[1] = ETL_PMC_INSTRUCTIONS;
    o.kinds[2] = ETL_PMC_OTHER;
    assert_int_equal(etl_pmc_init(&p, NULL, &o), ETL_OK);
    uint64_t a[] = {1000, 1000, 5}, b[] = {3001000, 4001000, 5 + (1ull << 63)};
    row(&p, 0, 0, 1000000, a, b);
    row(&p, 1, 0, 1000000, a, b);
    assert_int_equal(etl_pmc_finish(&p, 2000000), ETL_OK);
    /* Each CPU: its sum, known. */
    assert_int_equal(p.ncpus, 2);
    assert_int_equal(p.cpus[0].delta[2], 1ull << 63);
    assert_int_equal(p.cpus[0].saturated, 0);
    /* The idle thread and the total: slot 2 past 2^64, said; cycles and instructions known. */
    assert_int_equal(p.total.saturated, 1u << 2);
    assert_int_equal(p.total.delta[0], 6000000);
    assert_int_equal(p.nthreads, 1);
    assert_int_equal(p.threads[0].s.saturated, 1u << 2);
    assert_int_equal(p.nprocesses, 1);
    assert_int_equal(p.processes[0].s.saturated, 1u << 2);
    etl_pmc_ratios r;
    etl_pmc_ratios_of(&p, &p.total, &r);
    assert_int_equal(r.ipc_x1000, 1333);
    etl_pmc_free(&p);
}

/* A ratio of a saturated sum is not known. */
static void test_ratio_of_saturated(void **state)
{
    (void)state;
    etl_pmc p;
    etl_pmc_options o;
    etl_pmc_options_init(&o); /* cycles, instructions, llc, branch */
    assert_int_equal(etl_pmc_init(&p, NULL, &o), ETL_OK);
    p.counters = 4;
    etl_pmc_sums s;
    memset(&s, 0, sizeof s);
    s.slices = 1;
    s.cpu_ns = 1000;
    s.delta[0] = 3000, s.delta[1] = 2000, s.delta[2] = UINT64_MAX, s.delta[3] = 10;
    s.saturated = 1u << 2;
    etl_pmc_ratios r;
    etl_pmc_ratios_of(&p, &s, &r);
    assert_int_equal(r.ipc_x1000, 667);
    assert_int_equal(r.llc_mpki_x1000, -1);
    assert_int_equal(r.branch_mpki_x1000, 5000);
    s.saturated = 1u << 0;
    etl_pmc_ratios_of(&p, &s, &r);
    assert_int_equal(r.ipc_x1000, -1);
    assert_int_equal(r.cpi_x1000, -1);
    assert_int_equal(r.ghz_x1000, -1);
    etl_pmc_free(&p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_other_slot_saturates),
        cmocka_unit_test(test_ratio_of_saturated),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

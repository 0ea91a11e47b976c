/*
 * test_spinlocks_bounds.c - spin lock aggregates cost what their caps allow, whatever
 * the trace (issue 18 #7): a million lock addresses make ETL_SPIN_MAX_CELLS cells and
 * as many locks and pairs, no more (the rest counted in cells_dropped, the totals and
 * bounds exact); the distinct (cell, thread) pairs stop at ETL_SPIN_MAX_DISTINCT and
 * the hold and wait values at max_values, each counted.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/spinlocks.h"

static etl_clock clock_10mhz(void)
{
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    return c;
}

static void init(etl_spinlocks *s, const etl_clock *c, size_t max_values)
{
    etl_spinlocks_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.params = etl_spinlock_info_defaults();
    o.params.has_hold_threshold = true;
    o.mhz = 3000;
    o.ncpu = 2;
    o.max_values = max_values;
    assert_int_equal(etl_spinlocks_init(s, c, &o), ETL_OK);
}

static void add(etl_spinlocks *s, uint64_t lock, uint32_t tid, uint32_t wait, uint64_t ts)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SPINLOCK;
    ev.ts = ts;
    ev.cpu = (uint16_t)(ts & 1);
    ev.u.spinlock.spin_lock_address = lock;
    ev.u.spinlock.caller_address = 0xfffff80000100000ull;
    ev.u.spinlock.acquire_time = 1000;
    ev.u.spinlock.release_time = 1100;
    ev.u.spinlock.wait_time_in_cycles = wait;
    ev.u.spinlock.spin_count = 1;
    ev.u.spinlock.thread_id = tid;
    ev.u.spinlock.irql = 2;
    etl_spinlocks_add(s, &ev);
}

/* A million locks: 65,536 of them aggregated, the others counted; the totals over every event. */
static void test_many_locks(void **state)
{
    (void)state;
    etl_clock c = clock_10mhz();
    etl_spinlocks s;
    init(&s, &c, 0);
    uint32_t n = 1u << 20;
    for (uint32_t i = 0; i < n; i++) add(&s, 0xffff800000000000ull + (uint64_t)i * 64, 8, 50, i);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_int_equal(s.nlocks, ETL_SPIN_MAX_CELLS);
    assert_int_equal(s.npairs, ETL_SPIN_MAX_CELLS);
    assert_int_equal(s.ncallers, 1);
    assert_int_equal(s.cells_dropped, n - ETL_SPIN_MAX_CELLS);
    assert_int_equal(s.total.a.events, n);
    assert_int_equal(s.total.a.w_wait, (uint64_t)n * 50);
    assert_int_equal(s.contended.est, n);
    assert_int_equal(s.locks[0].a.events, 1);
    assert_int_equal(s.distinct_dropped, 0);
    etl_spinlocks_free(&s);
}

/* Values past max_values are not kept (counted); the percentiles are over those kept. */
static void test_values_budget(void **state)
{
    (void)state;
    etl_clock c = clock_10mhz();
    etl_spinlocks s;
    init(&s, &c, 1000);
    for (uint32_t i = 0; i < 2000; i++) add(&s, 0x1000, 8, i < 500 ? 7 : 9, i);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    /* Each event keeps a hold and a wait value: the first 500 events fill the budget. */
    assert_int_equal(s.values_dropped, 1500 * 2);
    assert_int_equal(s.cells_dropped, 0);
    assert_int_equal(s.total.a.events, 2000);
    assert_int_equal(s.locks[0].wait_p99, 7);
    assert_int_equal(s.locks[0].a.max_wait, 9);
    etl_spinlocks_free(&s);
}

/* Distinct threads past ETL_SPIN_MAX_DISTINCT pairs: counted; the counts are lower bounds. */
static void test_distinct_cap(void **state)
{
    (void)state;
    etl_clock c = clock_10mhz();
    etl_spinlocks s;
    init(&s, &c, 0);
    uint32_t n = ETL_SPIN_MAX_DISTINCT / 2 + 1000;
    for (uint32_t i = 0; i < n; i++) add(&s, 0x1000, 4 * (i + 1), 50, i);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_true(s.distinct_dropped > 0);
    assert_true(s.total.nthreads + s.locks[0].nthreads + 4 <= ETL_SPIN_MAX_DISTINCT);
    assert_true(s.total.nthreads > ETL_SPIN_MAX_DISTINCT / 2 - 1000);
    assert_int_equal(s.total.a.events, n);
    etl_spinlocks_free(&s);
}

/*
 * A SpinLock released before it was acquired (explore10 H: it entered the hold mean and p50 as 0)
 * has no hold: left out of the hold figures (as an irq event), counted with where the first lies;
 * the other figures still count it.
 */
static void test_backwards_hold(void **state)
{
    (void)state;
    etl_clock c = clock_10mhz();
    etl_spinlocks s;
    init(&s, &c, 0);
    static const uint64_t acq[] = {1000, 1000, 5000, 1000}, rel[] = {1100, 1300, 4000, 1500};
    for (unsigned i = 0; i < 4; i++) {
        etl_sched_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = ETL_SCHED_SPINLOCK;
        ev.ts = 10 * (i + 1); /* 1 us apart */
        ev.cpu = 1;
        ev.u.spinlock.spin_lock_address = 0x1000;
        ev.u.spinlock.caller_address = 0x2000;
        ev.u.spinlock.acquire_time = acq[i];
        ev.u.spinlock.release_time = rel[i];
        ev.u.spinlock.wait_time_in_cycles = 10;
        ev.u.spinlock.spin_count = 1;
        ev.u.spinlock.interrupt_count = i == 3; /* an irq event: left out as before */
        etl_spinlocks_add(&s, &ev);
    }
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_int_equal(s.backwards_hold, 1);
    assert_int_equal(s.backwards_first_cpu, 1);
    assert_int_equal(s.backwards_first_ns, 3000);
    const etl_spin_group *g[] = {&s.total, &s.locks[0], &s.pairs[0]};
    for (unsigned k = 0; k < 3; k++) {
        assert_int_equal(g[k]->a.events, 4);
        assert_int_equal(g[k]->a.no_hold, 1);
        assert_int_equal(g[k]->a.irq, 1);
        assert_int_equal(g[k]->a.w_nonirq, 2);
        assert_int_equal(g[k]->a.w_hold, 400);
        assert_int_equal(g[k]->mean_hold, 200);
        assert_int_equal(g[k]->hold_p50, 100);
        assert_int_equal(g[k]->hold_p99, 300);
        assert_int_equal(g[k]->a.w_wait, 40);
    }
    etl_spinlocks_free(&s);
}

/*
 * Events lost (explore10 E: "contended 3106 (true count 3106..3106)", truth 3188): a lost event may
 * have been a logged multiple, so the bounds keep their minimum and lose their maximum.
 */
static void test_lost_bounds(void **state)
{
    (void)state;
    etl_clock c = clock_10mhz();
    etl_spinlocks s[2];
    for (unsigned k = 0; k < 2; k++) {
        init(&s[k], &c, 0);
        for (uint32_t i = 0; i < 100; i++) add(&s[k], 0x1000, 8, 50, i);
        if (k) s[k].lost = ETL_SPIN_LOST_DAMAGED;
        assert_int_equal(etl_spinlocks_finish(&s[k], 1000000000), ETL_OK);
    }
    assert_true(s[0].contended.hi_known && s[0].uncontended.hi_known && s[0].acquisitions.hi_known);
    assert_int_equal(s[0].contended.lo, 100);
    assert_int_equal(s[0].contended.hi, 100);
    const etl_spin_bounds *b0[] = {&s[0].acquisitions, &s[0].uncontended, &s[0].contended};
    const etl_spin_bounds *b1[] = {&s[1].acquisitions, &s[1].uncontended, &s[1].contended};
    for (unsigned k = 0; k < 3; k++) {
        assert_false(b1[k]->hi_known);
        assert_int_equal(b1[k]->hi, 0);
        assert_int_equal(b1[k]->lo, b0[k]->lo);
        assert_int_equal(b1[k]->est, b0[k]->est);
    }
    for (unsigned k = 0; k < 2; k++) etl_spinlocks_free(&s[k]);
}

/* The sampling parameters: the kernel's defaults, H none before Windows 8.1 unless given, and their sources. */
static void test_params_for_trace(void **state)
{
    (void)state;
    etl_spin_params sp;
    etl_spin_params_init(&sp);
    assert_true(sp.p.has_hold_threshold && sp.p.spin_lock_hold_threshold != 0);
    assert_true(etl_spin_params_assumed(&sp));
    etl_logfile_header h;
    memset(&h, 0, sizeof h);
    h.os_major = 6, h.os_minor = 3;
    etl_spin_params_for_trace(&sp, &h); /* 8.1: H stands */
    assert_int_equal(sp.src[3], ETL_SPIN_SRC_DEFAULT);
    h.os_minor = 2;
    etl_spin_params_for_trace(&sp, &h); /* 8: none */
    assert_int_equal(sp.p.spin_lock_hold_threshold, 0);
    assert_string_equal(etl_spin_param_source(sp.src[3]), "none before Windows 8.1");
    etl_spin_params_init(&sp);
    for (unsigned i = 0; i < 4; i++) sp.src[i] = ETL_SPIN_SRC_GIVEN;
    sp.p.spin_lock_hold_threshold = 5;
    etl_spin_params_for_trace(&sp, &h); /* given: kept */
    assert_int_equal(sp.p.spin_lock_hold_threshold, 5);
    assert_false(etl_spin_params_assumed(&sp));
    assert_string_equal(etl_spin_param_source(ETL_SPIN_SRC_GIVEN), "given");
    assert_string_equal(etl_spin_param_source(ETL_SPIN_SRC_DEFAULT), "default");
}

/* The 3 largest entries of a histogram, largest first, ties to the lower index, in whole percent to the nearest. */
static void test_top_shares(void **state)
{
    (void)state;
    const uint64_t h[5] = {1, 6, 0, 6, 2};
    unsigned idx[3];
    int64_t pct[3];
    assert_int_equal(etl_spin_top_shares(h, 5, 15, idx, pct), 3);
    assert_int_equal(idx[0], 1), assert_int_equal(idx[1], 3), assert_int_equal(idx[2], 4);
    assert_int_equal(pct[0], 40), assert_int_equal(pct[1], 40), assert_int_equal(pct[2], 13);
    const uint64_t one[3] = {0, 0, 3};
    assert_int_equal(etl_spin_top_shares(one, 3, 3, idx, pct), 1);
    assert_int_equal(idx[0], 2), assert_int_equal(pct[0], 100);
    assert_int_equal(etl_spin_top_shares(one, 3, 0, idx, pct), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_many_locks),
        cmocka_unit_test(test_values_budget),
        cmocka_unit_test(test_distinct_cap),
        cmocka_unit_test(test_backwards_hold),
        cmocka_unit_test(test_lost_bounds),
        cmocka_unit_test(test_params_for_trace),
        cmocka_unit_test(test_top_shares),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

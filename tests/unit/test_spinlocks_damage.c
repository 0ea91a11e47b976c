/*
 * test_spinlocks_damage.c - a SpinLock event whose AcquireTime and ReleaseTime are no hold the kernel measured
 * (a time of 0, a hold past the DPC watchdog's 120 s, a ReleaseTime that is not the event's own cycle-clock time)
 * has no hold: left out of the hold figures, counted with where the first lies, and classed by its spins alone.
 * An AcquireTime of 0 was a hold of ReleaseTime cycles: hours, printed as the lock's maximum, classed L.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/spinlocks.h"

static void init(etl_spinlocks *s, const etl_clock *c, uint32_t mhz)
{
    etl_spinlocks_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.params = etl_spinlock_info_defaults();
    o.params.has_hold_threshold = true;
    o.mhz = mhz;
    o.ncpu = 2;
    assert_int_equal(etl_spinlocks_init(s, c, &o), ETL_OK);
}

static void add(etl_spinlocks *s, uint64_t ts, uint16_t cpu, uint64_t acq, uint64_t rel, uint32_t spins)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SPINLOCK;
    ev.ts = ts;
    ev.cpu = cpu;
    ev.u.spinlock.spin_lock_address = 0x1000;
    ev.u.spinlock.caller_address = 0x2000;
    ev.u.spinlock.acquire_time = acq;
    ev.u.spinlock.release_time = rel;
    ev.u.spinlock.wait_time_in_cycles = 10;
    ev.u.spinlock.spin_count = spins;
    ev.u.spinlock.irql = 2;
    etl_spinlocks_add(s, &ev);
}

/* The hold figures of the total, the lock and the pair: only the events of a hold the kernel can measure. */
static void check_holds(const etl_spinlocks *s, uint64_t events, uint64_t bad, uint64_t w_nonirq, uint64_t w_hold,
                        uint64_t max_hold)
{
    const etl_spin_group *g[] = {&s->total, &s->locks[0], &s->pairs[0]};
    for (unsigned k = 0; k < 3; k++) {
        assert_int_equal(g[k]->a.events, events);
        assert_int_equal(g[k]->a.bad_hold, bad);
        assert_int_equal(g[k]->a.w_nonirq, w_nonirq);
        assert_int_equal(g[k]->a.w_hold, w_hold);
        assert_int_equal(g[k]->a.max_hold, max_hold);
        assert_true(g[k]->hold_p99 <= max_hold);
    }
}

/* QPC clock, 3000 MHz: a time of 0 and a hold past 120 s are damage; 119 s is a (long) hold. */
static void test_zero_and_long(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.type = ETL_CLOCK_QPC;
    c.ticks_per_sec = 10000000;
    etl_spinlocks s;
    init(&s, &c, 3000);
    assert_int_equal(s.max_hold_cycles, 360000000000ull);
    const uint64_t rel = 66146547140100ull; /* 6 hours of a 3 GHz TSC */
    add(&s, 10, 0, rel - 100, rel, 1);                      /* a hold of 100 */
    add(&s, 20, 1, 0, rel, 1);                              /* AcquireTime 0: no hold of 6 hours */
    add(&s, 30, 0, rel, 0, 0);                              /* ReleaseTime 0 */
    add(&s, 40, 0, 0, 0, 0);                                /* both */
    add(&s, 50, 1, rel - 360000000001ull, rel, 0);          /* 120 s and a cycle */
    add(&s, 60, 1, rel - 119ull * 3000000000ull, rel, 1);   /* 119 s: kept, classed L */
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_int_equal(s.impossible_hold, 4);
    assert_int_equal(s.impossible_first_ns, 2000);
    assert_int_equal(s.impossible_first_cpu, 1);
    assert_int_equal(s.impossible_first_acquire, 0);
    assert_int_equal(s.impossible_first_release, rel);
    assert_int_equal(s.backwards_hold, 0);
    check_holds(&s, 6, 4, 2, 100 + 119ull * 3000000000ull, 119ull * 3000000000ull);
    /* Classed by their spins alone: AcquireTime 0 with a spin is C, the holds of no spin U (weight A), not L. */
    assert_int_equal(s.total.a.cls[ETL_SPIN_L], 1);
    assert_int_equal(s.total.a.cls[ETL_SPIN_C], 2);
    assert_int_equal(s.total.a.cls[ETL_SPIN_U], 3);
    assert_int_equal(s.total.a.est_acq, 1 + 2 + 3 * 1000);
    assert_int_equal(s.total.a.w_wait, 10 * s.total.a.est_acq);
    etl_spinlocks_free(&s);
}

/* No CPU speed in the header: the limit is 120 s at 10 GHz, no CPU counts faster. */
static void test_no_mhz(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.type = ETL_CLOCK_QPC;
    c.ticks_per_sec = 10000000;
    etl_spinlocks s;
    init(&s, &c, 0);
    assert_int_equal(s.max_hold_cycles, 1200000000000ull);
    add(&s, 10, 0, 1000, 1000 + 1200000000000ull, 1);
    add(&s, 20, 0, 1000, 1001 + 1200000000000ull, 1);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_int_equal(s.impossible_hold, 1);
    check_holds(&s, 2, 1, 1, 1200000000000ull, 1200000000000ull);
    etl_spinlocks_free(&s);
}

/*
 * CPU-cycle clock: the event's timestamp is the TSC read as it is logged, just after the release. A ReleaseTime
 * past it (by more than a millisecond) or before it by more than any hold lasts is not this event's: damage, whatever
 * the hold reads.
 */
static void test_cycle_clock(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.type = ETL_CLOCK_CPU_CYCLES;
    c.ticks_per_sec = 3000000000ull;
    const uint64_t t = 40000000000000ull;
    c.t0 = t - 3000000000ull;
    etl_spinlocks s;
    init(&s, &c, 3000);
    add(&s, t, 0, t - 500, t, 1);                                      /* released at the event's time */
    add(&s, t + 100, 0, t - 400, t + 99, 1);                           /* just before it */
    add(&s, t + 200, 0, t + 200, t + 200 + 3000000ull, 1);             /* exactly 1 ms after: the slack */
    add(&s, t + 300, 1, t + 300, t + 301 + 3000000ull, 1);             /* past it */
    add(&s, t + 400, 0, t + 400 - 361000000000ull, t + 400 - 360999999000ull, 1); /* 120.33 s before it */
    assert_int_equal(etl_spinlocks_finish(&s, 10000000000), ETL_OK);
    assert_int_equal(s.impossible_hold, 2);
    assert_int_equal(s.impossible_first_cpu, 1);
    assert_int_equal(s.impossible_first_ns, 1000000100);
    check_holds(&s, 5, 2, 3, 500 + 499 + 3000000, 3000000);
    etl_spinlocks_free(&s);
}

/* An impossible event of another thread (a selection) is left out as the others are: not counted as the selection's. */
static int only_tid_8(void *ctx, const etl_sched_event *ev)
{
    (void)ctx;
    return ev->u.spinlock.thread_id == 8;
}

static void test_selection(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.type = ETL_CLOCK_QPC;
    c.ticks_per_sec = 10000000;
    etl_spinlocks_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.mhz = 3000;
    o.select = only_tid_8;
    etl_spinlocks s;
    assert_int_equal(etl_spinlocks_init(&s, &c, &o), ETL_OK);
    add(&s, 10, 0, 0, 5000, 1); /* thread 0: filtered */
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_int_equal(s.filtered, 1);
    assert_int_equal(s.impossible_hold, 0);
    etl_spinlocks_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_zero_and_long),
        cmocka_unit_test(test_no_mhz),
        cmocka_unit_test(test_cycle_clock),
        cmocka_unit_test(test_selection),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

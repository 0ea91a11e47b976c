/*
 * test_spinlocks_values.c - a spin lock percentile with no value under it is unknown
 * (ETL_SPIN_UNKNOWN), never 0: a lock first seen after the values budget ran out
 * (max_values; on the CLI 2^26 values, a trace of some 33 million events) kept none,
 * and its hold and wait p50/p99 read 0 cycles while its maxima were 500 and 70; a lock
 * whose every event took an interrupt has no hold value either. Nor is a mean, share or rate
 * of a weighted sum that passed 2^64.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/spinlocks.h"

static void add(etl_spinlocks *s, uint64_t lock, uint64_t hold, uint32_t wait, uint32_t irq, uint64_t ts)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SPINLOCK;
    ev.ts = ts;
    ev.u.spinlock.spin_lock_address = lock;
    ev.u.spinlock.caller_address = 0xfffff80000100000ull;
    ev.u.spinlock.acquire_time = 1000;
    ev.u.spinlock.release_time = 1000 + hold;
    ev.u.spinlock.wait_time_in_cycles = wait;
    ev.u.spinlock.spin_count = 3;
    ev.u.spinlock.thread_id = 8;
    ev.u.spinlock.interrupt_count = irq;
    etl_spinlocks_add(s, &ev);
}

static const etl_spin_group *lock_of(const etl_spinlocks *s, uint64_t lock)
{
    for (size_t i = 0; i < s->nlocks; i++)
        if (s->locks[i].lock == lock) return &s->locks[i];
    fail_msg("lock %llx not found", (unsigned long long)lock);
    return NULL;
}

static void test_budget_spent(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    etl_spinlocks_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.mhz = 3000;
    o.ncpu = 1;
    o.max_values = 4; /* lock A's two events fill it */
    etl_spinlocks s;
    assert_int_equal(etl_spinlocks_init(&s, &c, &o), ETL_OK);
    add(&s, 0xA0, 100, 50, 0, 10);
    add(&s, 0xA0, 100, 50, 0, 20);
    add(&s, 0xB0, 500, 70, 0, 30);
    add(&s, 0xB0, 500, 70, 0, 40);
    add(&s, 0xC0, 900, 60, 1, 50); /* took an interrupt: no hold value; its wait is past the budget */
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_int_equal(s.values_dropped, 5);
    const etl_spin_group *a = lock_of(&s, 0xA0), *b = lock_of(&s, 0xB0), *k = lock_of(&s, 0xC0);
    assert_int_equal(a->hold_p50, 100);
    assert_int_equal(a->wait_p99, 50);
    /* B: events, maxima, means, but no value kept: its percentiles are unknown, not 0. */
    assert_int_equal(b->a.events, 2);
    assert_int_equal(b->a.max_hold, 500);
    assert_int_equal(b->mean_hold, 500);
    assert_true(b->hold_p50 == ETL_SPIN_UNKNOWN && b->hold_p99 == ETL_SPIN_UNKNOWN);
    assert_true(b->wait_p50 == ETL_SPIN_UNKNOWN && b->wait_p99 == ETL_SPIN_UNKNOWN);
    assert_true(k->hold_p99 == ETL_SPIN_UNKNOWN && k->wait_p99 == ETL_SPIN_UNKNOWN);
    /* The total: over the values kept (A's). */
    assert_int_equal(s.total.hold_p99, 100);
    etl_spinlocks_free(&s);
}

/* Every event of a lock took an interrupt: no hold value, so no hold percentile; its waits have one. */
static void test_all_irq(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    etl_spinlocks s;
    etl_spinlocks_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    assert_int_equal(etl_spinlocks_init(&s, &c, &o), ETL_OK);
    add(&s, 0xA0, 100, 50, 2, 10);
    add(&s, 0xA0, 300, 40, 1, 20);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    const etl_spin_group *a = lock_of(&s, 0xA0);
    assert_true(a->hold_p50 == ETL_SPIN_UNKNOWN && a->hold_p99 == ETL_SPIN_UNKNOWN);
    assert_int_equal(a->wait_p50, 40);
    assert_int_equal(a->wait_p99, 50);
    etl_spinlocks_free(&s);
}

/* No event at all: the total's percentiles are unknown too. */
static void test_no_event(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    etl_spinlocks s;
    assert_int_equal(etl_spinlocks_init(&s, &c, NULL), ETL_OK);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    assert_true(s.total.hold_p50 == ETL_SPIN_UNKNOWN && s.total.wait_p99 == ETL_SPIN_UNKNOWN);
    etl_spinlocks_free(&s);
}

/*
 * A weighted sum past 2^64 (A = 2^32 - 1, which the kernel takes, and two uncontended waits of 2^32 - 1 cycles): the
 * sum reads UINT64_MAX, and the mean wait (1073741805 cycles), the % of CPU and the rates were made of it. Now the
 * means are ETL_SPIN_UNKNOWN and the shares and rates of that sum -1; the others stay; the rates are implausible.
 */
static void test_saturated_sum(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    etl_spinlocks_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.params = etl_spinlock_info_defaults();
    o.params.has_hold_threshold = true;
    o.params.spin_lock_acquire_sample_rate = UINT32_MAX;
    o.mhz = 3000;
    o.ncpu = 1;
    etl_spinlocks s;
    assert_int_equal(etl_spinlocks_init(&s, &c, &o), ETL_OK);
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SPINLOCK;
    ev.u.spinlock.spin_lock_address = 0xA0;
    ev.u.spinlock.acquire_time = 1000;
    ev.u.spinlock.release_time = 1100;
    ev.u.spinlock.wait_time_in_cycles = UINT32_MAX; /* uncontended (no spin): weight A */
    for (unsigned i = 0; i < 2; i++) {
        ev.ts = 10 + i;
        etl_spinlocks_add(&s, &ev);
    }
    ev.ts = 20;
    ev.u.spinlock.spin_lock_address = 0xB0; /* contended, weight 1: its own row stays known */
    ev.u.spinlock.wait_time_in_cycles = 300;
    ev.u.spinlock.spin_count = 5;
    etl_spinlocks_add(&s, &ev);
    assert_int_equal(etl_spinlocks_finish(&s, 1000000000), ETL_OK);
    const etl_spin_group *t = &s.total;
    assert_true(t->a.saturated);
    assert_true(t->a.w_wait == UINT64_MAX);
    assert_true(t->mean_wait == ETL_SPIN_UNKNOWN);
    assert_int_equal(t->acq_pct, -1);
    /* Σw and Σw·spins did not saturate: their rates, the collision and the mean spins stand. */
    assert_int_equal(t->a.est_acq, 2ull * UINT32_MAX + 1);
    assert_true(t->acq_rate > 0 && t->collision_pct >= 0);
    assert_int_equal(t->mean_hold, 100);
    assert_true(etl_spinlocks_rates_implausible(&s));
    const etl_spin_group *b = lock_of(&s, 0xB0);
    assert_false(b->a.saturated);
    assert_int_equal(b->mean_wait, 300);
    assert_true(b->acq_pct >= 0);
    etl_spinlocks_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_budget_spent),
        cmocka_unit_test(test_all_irq),
        cmocka_unit_test(test_no_event),
        cmocka_unit_test(test_saturated_sum),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

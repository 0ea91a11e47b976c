/*
 * test_model_lost.c - what the model cannot know after a switch it had to drop: a switch whose time is
 * before its CPU's last one (a buffer whose times went back, taken by the reader at its CPU's time) is
 * dropped, so the CPU's chain misses it. The slice it lay in is of no known thread (it was given to the
 * next switch's old thread, switched in at a time nobody knows), and a thread that switched out before it
 * has its next switch-in's previous switch-out and Ready unknown (it may have run in the lost slice).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/sched.h"

typedef struct seen {
    etl_sched_row rows[32];
    size_t n;
} seen;

static void on_row(void *ctx, const etl_sched_row *r)
{
    seen *s = ctx;
    if (s->n < 32) s->rows[s->n++] = *r;
}

static void push_switch(etl_sched *m, uint16_t cpu, uint32_t new_tid, uint32_t old_tid, uint64_t ts)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SWITCH;
    ev.cpu = cpu;
    ev.ts = ts;
    ev.u.sw.ts = ts;
    ev.u.sw.cpu = cpu;
    ev.u.sw.new_tid = new_tid;
    ev.u.sw.old_tid = old_tid;
    ev.u.sw.old_state = 5; /* Waiting */
    ev.u.sw.known = ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_STATE | ETL_CSW_TIME | ETL_CSW_CPU;
    assert_int_equal(etl_sched_push(m, &ev), ETL_OK);
}

static const etl_sched_row *row_at(const seen *s, uint16_t cpu, uint64_t si_ts)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->rows[i].cpu == cpu && s->rows[i].si_ts == si_ts && !(s->rows[i].flags & ETL_ROW_HEAD)) return &s->rows[i];
    fail_msg("no row of CPU %u at %llu", cpu, (unsigned long long)si_ts);
    return NULL;
}

static void test_dropped_switch(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    seen s = {.n = 0};
    etl_sched_options o = {.sz = sizeof o, .on_row = on_row, .ctx = &s};
    etl_sched *m;
    assert_int_equal(etl_sched_open(&c, 2, &o, &m), ETL_OK);
    push_switch(m, 0, 8, 0, 100);  /* CPU 0: 8 in */
    push_switch(m, 0, 9, 8, 200);  /* 8 out (waiting), 9 in */
    push_switch(m, 1, 7, 0, 250);  /* CPU 1 */
    push_switch(m, 0, 10, 9, 150); /* CPU 0's time goes back: dropped (9 out, 10 in, at a time not known) */
    assert_int_equal(etl_sched_stats_get(m)->time_backwards, 1);
    push_switch(m, 0, 0, 10, 300); /* 10 out: it came in at the dropped switch */
    push_switch(m, 1, 8, 7, 400);  /* 8 in again */
    assert_int_equal(etl_sched_finish(m, 500), ETL_OK);

    /* [200, 300) on CPU 0: 9 was planned, 10 went out; who ran from when is lost with the dropped switch. */
    const etl_sched_row *r = row_at(&s, 0, 200);
    assert_int_equal(r->new_tid, UINT32_MAX);
    assert_int_equal(r->new_thread, ETL_SCHED_NONE);
    /* 8 switched out at 200, before the lost switch: it may have run again in the lost slice. */
    r = row_at(&s, 1, 400);
    assert_int_equal(r->new_tid, 8);
    assert_false(r->flags & ETL_ROW_PREV);
    assert_false(r->flags & ETL_ROW_READY_TIME);
    assert_true(r->flags & ETL_ROW_LOST);
    assert_int_equal(etl_sched_rows_lost(m), 1);
    /* Slices after it are known again. */
    r = row_at(&s, 0, 300);
    assert_int_equal(r->new_tid, 0);
    etl_sched_close(m);
}

static void push_ready(etl_sched *m, uint16_t cpu, uint32_t tid, uint64_t ts)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_READY;
    ev.cpu = cpu;
    ev.ts = ts;
    ev.u.ready.thread_id = tid;
    assert_int_equal(etl_sched_push(m, &ev), ETL_OK);
}

/*
 * A switch whose OldThreadId names a thread that cannot have been running (it went out waiting and nothing
 * readied it): a damaged field, not a last-moment change. Its "switch-out" was taken
 * as the thread's previous one, so its next switch-in waited from there (a 3.4 ms "ready" of a waiting thread,
 * ready max 410 us -> 3.4 ms, exit 0, in a trace with one OldThreadId changed).
 */
static void test_impossible_old_thread(void **state)
{
    (void)state;
    etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    seen s = {.n = 0};
    etl_sched_options o = {.sz = sizeof o, .on_row = on_row, .ctx = &s};
    etl_sched *m;
    assert_int_equal(etl_sched_open(&c, 3, &o, &m), ETL_OK);
    push_switch(m, 0, 8, 0, 100);
    push_ready(m, 1, 9, 120);
    push_switch(m, 1, 9, 0, 150);
    push_switch(m, 0, 0, 8, 200);  /* 8 out, waiting */
    push_switch(m, 0, 0, 8, 300);  /* planned idle, "8" out: 8 waits, unreadied */
    push_ready(m, 1, 8, 400);      /* 8 readied */
    push_switch(m, 1, 8, 9, 450);  /* 8 in */
    /* A thread readied since its wait can be switched in at the last moment: its switch-out stands. */
    push_ready(m, 1, 9, 460);
    push_switch(m, 0, 0, 9, 480);  /* planned idle, 9 out (readied at 460) */
    push_ready(m, 2, 9, 500);
    push_switch(m, 2, 9, 0, 520);
    assert_int_equal(etl_sched_finish(m, 700), ETL_OK);
    assert_int_equal(etl_sched_stats_get(m)->cswitch_chain_mismatch, 2);
    const etl_sched_row *r = row_at(&s, 1, 450);
    assert_int_equal(r->new_tid, 8);
    assert_true(r->flags & ETL_ROW_PREV);
    assert_int_equal(r->lso_ts, 200); /* its real switch-out, not the damaged one at 300 */
    assert_true(r->flags & ETL_ROW_READY_TIME);
    assert_int_equal(r->rt_ts, 400);
    r = row_at(&s, 2, 520);
    assert_int_equal(r->new_tid, 9);
    assert_true(r->flags & ETL_ROW_PREV);
    assert_int_equal(r->lso_ts, 480);
    etl_sched_close(m);
}

/*
 * A thread readied before its own Waiting switch-out, or in the same tick (R <= P: spec analyses 1, RT = max(t(R),
 * LSO)), is readied, as switch_in takes it: a later switch that names it its old thread against the plan is its
 * real switch-out. could_run judged it by t(R) > LSO alone, dropped that switch-out, and its next switch-in waited
 * from the older one.
 */
static void test_readied_before_own_switch_out(void **state)
{
    (void)state;
    for (uint64_t r_ts = 440; r_ts <= 450; r_ts += 10) { /* before P, and in P's own tick */
        etl_clock c;
        memset(&c, 0, sizeof c);
        c.ticks_per_sec = 10000000;
        seen s = {.n = 0};
        etl_sched_options o = {.sz = sizeof o, .on_row = on_row, .ctx = &s};
        etl_sched *m;
        assert_int_equal(etl_sched_open(&c, 3, &o, &m), ETL_OK);
        push_ready(m, 1, 9, 120);
        push_switch(m, 1, 9, 0, 150);  /* 9 in */
        push_ready(m, 0, 9, r_ts);     /* 9 readied while still running */
        push_switch(m, 1, 0, 9, 450);  /* 9 out, waiting: readied already (RT = 450) */
        push_switch(m, 0, 0, 0, 460);
        push_switch(m, 0, 0, 9, 480);  /* planned idle, 9 out: a last-moment change, 9 was ready */
        push_ready(m, 2, 9, 500);
        push_switch(m, 2, 9, 0, 520);
        assert_int_equal(etl_sched_finish(m, 700), ETL_OK);
        assert_int_equal(etl_sched_stats_get(m)->cswitch_chain_mismatch, 1);
        const etl_sched_row *r = row_at(&s, 2, 520);
        assert_int_equal(r->new_tid, 9);
        assert_true(r->flags & ETL_ROW_PREV);
        assert_int_equal(r->lso_ts, 480); /* its switch-out at 480 stands, not the one at 450 */
        assert_true(r->flags & ETL_ROW_READY_TIME);
        assert_int_equal(r->rt_ts, 500);
        etl_sched_close(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dropped_switch),
        cmocka_unit_test(test_impossible_old_thread),
        cmocka_unit_test(test_readied_before_own_switch_out),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

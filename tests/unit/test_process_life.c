/*
 * test_process_life.c - a process instance's life in the scheduler model (explore15 F1):
 * Process/Defunct (0x0327) is a rundown's listing of a process object that has exited but
 * is still referenced, not the process's end at the rundown. It never moves an End already
 * seen; its ExitTime (v5, a FILETIME) is the end when given, on the session clock as the
 * spec converts FILETIMEs; a process known only from a Defunct lived until then (start no
 * later than its end); without ExitTime the rundown's time is the latest it can have ended.
 * A Start of the PID after an ended instance is a new instance.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "etlkit/sched.h"

enum {
    T0 = 100000000,                       /* the header record's tick (10 s of 100 ns ticks) */
    START = ETL_HOOK_PROCESS_START,
    END = ETL_HOOK_PROCESS_END,
    DCSTART = ETL_HOOK_PROCESS_DC_START,
    DEFUNCT = ETL_HOOK_PROCESS_DEFUNCT
};
#define START_TIME UINT64_C(132273837477445790) /* FILETIME of T0 */
#define NO_EXIT UINT64_MAX

static etl_sched *open_model(void)
{
    static etl_clock c;
    memset(&c, 0, sizeof c);
    c.type = ETL_CLOCK_QPC;
    c.ticks_per_sec = 10000000;
    c.t0 = T0;
    c.start_time = START_TIME;
    c.ns_mul = 100;
    etl_sched *m;
    assert_int_equal(etl_sched_open(&c, 2, NULL, &m), ETL_OK);
    return m;
}

static void push_process(etl_sched *m, uint16_t hook, uint32_t pid, uint64_t ts, const char *image, uint64_t exit_time)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_PROCESS;
    ev.hook = hook;
    ev.ts = ts;
    ev.u.process.known = ETL_PROC_IDS | ETL_PROC_IMAGE;
    ev.u.process.version = exit_time != NO_EXIT ? 5 : 4;
    ev.u.process.process_id = pid;
    ev.u.process.image_file_name.text = (etl_span){(const uint8_t *)image, strlen(image)};
    ev.u.process.image_file_name.terminated = true;
    if (exit_time != NO_EXIT) {
        ev.u.process.known |= ETL_PROC_EXIT_TIME;
        ev.u.process.exit_time = exit_time;
    }
    assert_int_equal(etl_sched_push(m, &ev), ETL_OK);
}

/* The instances of pid, in order; returns how many. */
static size_t instances(const etl_sched *m, uint32_t pid, const etl_sched_process *out[4])
{
    size_t n, k = 0;
    const etl_sched_process *p = etl_sched_processes(m, &n);
    for (size_t i = 0; i < n; i++)
        if (p[i].pid == pid && k < 4) out[k++] = &p[i];
    return k;
}

/* gc-threads-x64's conhost.exe 34292: End at 858.065 s, Defunct at 863.813 s; the End is its end. */
static void test_defunct_keeps_end(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    push_process(m, START, 100, T0 + 1000, "a.exe", NO_EXIT);
    push_process(m, END, 100, T0 + 2000, "a.exe", NO_EXIT);
    push_process(m, DEFUNCT, 100, T0 + 50000, "a.exe", START_TIME + 1900);
    push_process(m, START, 101, T0 + 1000, "b.exe", NO_EXIT);
    push_process(m, END, 101, T0 + 2000, "b.exe", NO_EXIT);
    push_process(m, DEFUNCT, 101, T0 + 50000, "b.exe", NO_EXIT);
    assert_int_equal(etl_sched_finish(m, T0 + 60000), ETL_OK);
    const etl_sched_process *p[4];
    for (uint32_t pid = 100; pid <= 101; pid++) {
        assert_int_equal(instances(m, pid, p), 1);
        assert_true(p[0]->started && p[0]->ended);
        assert_int_equal(p[0]->start_ts, T0 + 1000);
        assert_int_equal(p[0]->end_ts, T0 + 2000);
    }
    etl_sched_close(m);
}

/* ExitTime is the end: before the trace (gc-threads' 356 Defunct-only processes) or in it. */
static void test_defunct_exit_time(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    /* known only from the Defunct, exited 1 s before the trace's start */
    push_process(m, DEFUNCT, 200, T0 + 50000, "dxgiadaptercache.exe", START_TIME - 10000000);
    /* listed at the start, exited 3000 ticks in: ExitTime, not the rundown */
    push_process(m, DCSTART, 300, T0, "c.exe", NO_EXIT);
    push_process(m, DEFUNCT, 300, T0 + 50000, "c.exe", START_TIME + 3000);
    /* an ExitTime past the rundown (clocks disagree): the rundown is the latest end */
    push_process(m, DEFUNCT, 400, T0 + 50000, "d.exe", START_TIME + 90000);
    /* no ExitTime (v4): ended by the rundown, no later */
    push_process(m, DEFUNCT, 500, T0 + 50000, "smss.exe", NO_EXIT);
    /* an ExitTime before its Start (clocks again): not an end before its start */
    push_process(m, START, 600, T0 + 4000, "e.exe", NO_EXIT);
    push_process(m, DEFUNCT, 600, T0 + 50000, "e.exe", START_TIME + 3990);
    /* an ExitTime the clock cannot hold (0: before its tick 0): the rundown's time */
    push_process(m, DEFUNCT, 700, T0 + 50000, "f.exe", 0);
    assert_int_equal(etl_sched_finish(m, T0 + 60000), ETL_OK);
    const etl_sched_process *p[4];
    const char *names = etl_sched_names(m);

    assert_int_equal(instances(m, 200, p), 1);
    assert_string_equal(names + p[0]->name, "dxgiadaptercache.exe");
    assert_false(p[0]->started);
    assert_true(p[0]->ended);
    assert_int_equal(p[0]->end_ts, T0 - 10000000);
    assert_int_equal(p[0]->start_ts, p[0]->end_ts);

    assert_int_equal(instances(m, 300, p), 1);
    assert_true(p[0]->started && p[0]->ended);
    assert_int_equal(p[0]->start_ts, T0);
    assert_int_equal(p[0]->end_ts, T0 + 3000);

    assert_int_equal(instances(m, 400, p), 1);
    assert_int_equal(p[0]->end_ts, T0 + 50000);
    assert_int_equal(p[0]->start_ts, T0 + 50000);

    assert_int_equal(instances(m, 500, p), 1);
    assert_false(p[0]->started);
    assert_true(p[0]->ended);
    assert_int_equal(p[0]->end_ts, T0 + 50000);

    assert_int_equal(instances(m, 600, p), 1);
    assert_int_equal(p[0]->start_ts, T0 + 4000);
    assert_int_equal(p[0]->end_ts, T0 + 4000);

    assert_int_equal(instances(m, 700, p), 1);
    assert_int_equal(p[0]->end_ts, T0 + 50000);
    etl_sched_close(m);
}

/* A Start of a PID whose instance ended (known from a Defunct or an End alone) is a new process. */
static void test_start_after_ended(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    push_process(m, DEFUNCT, 200, T0 + 100, "old.exe", START_TIME - 10000000);
    push_process(m, START, 200, T0 + 5000, "new.exe", NO_EXIT);
    push_process(m, END, 201, T0 + 100, "old.exe", NO_EXIT);
    push_process(m, START, 201, T0 + 5000, "new.exe", NO_EXIT);
    assert_int_equal(etl_sched_finish(m, T0 + 60000), ETL_OK);
    const etl_sched_process *p[4];
    const char *names = etl_sched_names(m);
    for (uint32_t pid = 200; pid <= 201; pid++) {
        assert_int_equal(instances(m, pid, p), 2);
        assert_string_equal(names + p[0]->name, "old.exe");
        assert_true(p[0]->ended && !p[0]->started);
        assert_string_equal(names + p[1]->name, "new.exe");
        assert_true(p[1]->started && !p[1]->ended);
        assert_int_equal(p[1]->start_ts, T0 + 5000);
    }
    etl_sched_close(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defunct_keeps_end),
        cmocka_unit_test(test_defunct_exit_time),
        cmocka_unit_test(test_start_after_ended),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

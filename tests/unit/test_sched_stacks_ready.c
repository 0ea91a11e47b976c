/*
 * test_sched_stacks_ready.c - which Readying Thread Stack a row gets, on byte-built traces
 * (the writer's events, each walk where Windows logs it: after its event, on its CPU).
 *
 *   - a race: X is readied (on another CPU) just before its own switch-out, so the row's
 *     Ready Time is that switch-out (spec analyses §1, RT = max(t(R), LSO)), later than the
 *     ReadyThread. The stack is the ReadyThread's walk, found by R's own time (the row's
 *     ready_ns), not by RT (it was none: looked up at RT, where no ReadyThread is);
 *   - the readier readies and switches out at once, the ReadyThread's walk logged after that
 *     CSwitch: the walk is still the ReadyThread's;
 *   - a thread switched in readies another in the same clock tick: the second walk of that
 *     time, the readier's, is the ReadyThread's (the CSwitch's walk came already; it was
 *     refused as a repeat of the CSwitch's: no stack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/schedstacks.h"
#include "etlkit/writer.h"

static char dir[512];
#define T0 1000000ull
#define KFRAME 0xfffff80000001000ull /* kernel addresses: a walk's first part */

static int setup(void **state)
{
    (void)state;
    return tu_tmpdir_make(dir, sizeof dir, "sched-stacks-ready");
}

static int teardown(void **state)
{
    (void)state;
    return tu_tmpdir_remove(dir);
}

static void put(etl_writer *w, uint16_t cpu, uint16_t hook, uint8_t version, uint64_t ts, const uint8_t *p, size_t n)
{
    etl_write_event ev = {0};
    ev.cpu = cpu;
    ev.header = ETL_WH_PERFINFO;
    ev.version = version;
    ev.hook = hook;
    ev.ts = ts;
    ev.payload = p;
    ev.len = n;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
}

static void cswitch(etl_writer *w, uint16_t cpu, uint64_t ts, uint32_t new_tid, uint32_t old_tid, uint8_t old_state)
{
    etl_cswitch sw;
    memset(&sw, 0, sizeof sw);
    sw.new_tid = new_tid;
    sw.old_tid = old_tid;
    sw.new_priority = 8;
    sw.old_priority = 8;
    sw.old_state = old_state;
    sw.old_wait_reason = old_state == 5 ? 6 : 0;
    sw.old_ideal_processor = 0;
    uint8_t p[32];
    size_t n;
    assert_int_equal(etl_cswitch_encode(&sw, 4, p, sizeof p, &n), ETL_OK);
    put(w, cpu, ETL_HOOK_CSWITCH, 4, ts, p, n);
}

static void ready(etl_writer *w, uint16_t cpu, uint64_t ts, uint32_t tid)
{
    etl_ready_thread r = {tid, 1, 1, 0, 0};
    uint8_t p[16];
    size_t n;
    assert_int_equal(etl_ready_thread_encode(&r, p, sizeof p, &n), ETL_OK);
    put(w, cpu, ETL_HOOK_READY_THREAD, 2, ts, p, n);
}

/* A kernel walk of two frames, the first mark (tells the stacks apart), logged at at. */
static void walk(etl_writer *w, uint16_t cpu, uint64_t at, uint64_t event_ts, uint32_t tid, uint64_t mark)
{
    uint64_t f[2] = {KFRAME + mark, KFRAME + 0x100};
    etl_stackwalk s;
    memset(&s, 0, sizeof s);
    s.event_timestamp = event_ts;
    s.stack_process = 4;
    s.stack_thread = tid;
    s.frame_count = 2;
    uint8_t p[64];
    size_t n;
    assert_int_equal(etl_stackwalk_encode(&s, f, 8, p, sizeof p, &n), ETL_OK);
    put(w, cpu, ETL_HOOK_STACKWALK, 2, at, p, n);
}

enum { X = 10, A = 20, Y = 30, B = 40, Z = 50 };

/*
 * CPU 0 runs X, then Y; CPU 1 runs A, B, the readiers. Written in time order (each CPU's events are,
 * and the reader merges them).
 */
static void make(const char *path)
{
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.ncpu = 2;
    o.start_ts = T0;
    etl_groupmask_set(&o.group_mask, ETL_PERF_CONTEXT_SWITCH);
    etl_groupmask_set(&o.group_mask, ETL_PERF_DISPATCHER);
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    cswitch(w, 1, T0 + 50, A, 0, 2);
    cswitch(w, 0, T0 + 100, X, 0, 2);
    /* 1. The race: A readies X at 900 on CPU 1; X switches out (waiting) at 1000 on CPU 0, in at 2000. */
    ready(w, 1, T0 + 900, X);
    walk(w, 1, T0 + 901, T0 + 900, A, 0x11);
    cswitch(w, 0, T0 + 1000, 0, X, 5);
    cswitch(w, 0, T0 + 2000, X, 0, 2);
    walk(w, 0, T0 + 2001, T0 + 2000, X, 0x22);
    /* 2. X runs Y at 2500, Y waits at 2800; A readies Y at 3000 and at once switches out to B (3005), the
     *    ReadyThread's walk logged after that CSwitch (3006, then the CSwitch's at 3007); Y in at 3100. */
    cswitch(w, 0, T0 + 2500, Y, X, 5);
    cswitch(w, 0, T0 + 2800, 0, Y, 5);
    ready(w, 1, T0 + 3000, Y);
    cswitch(w, 1, T0 + 3005, B, A, 5);
    walk(w, 1, T0 + 3006, T0 + 3000, A, 0x33);
    walk(w, 1, T0 + 3007, T0 + 3005, B, 0x44);
    cswitch(w, 0, T0 + 3100, Y, 0, 2);
    /* 3. Y waits at 3500; B switches out to Z at 4000 and Z readies Y in the same tick, each walked after its
     *    event: two walks of time 4000 by Z, the CSwitch's first. Y in at 4100. */
    cswitch(w, 0, T0 + 3500, 0, Y, 5);
    cswitch(w, 1, T0 + 4000, Z, B, 5);
    walk(w, 1, T0 + 4000, T0 + 4000, Z, 0x55);
    ready(w, 1, T0 + 4000, Y);
    walk(w, 1, T0 + 4001, T0 + 4000, Z, 0x66);
    cswitch(w, 0, T0 + 4100, Y, 0, 2);
    cswitch(w, 0, T0 + 5000, 0, Y, 5);
    cswitch(w, 1, T0 + 5000, 0, Z, 5);
    assert_int_equal(etl_writer_close(w, T0 + 6000, &d), ETL_OK);
}

typedef struct rows {
    etl_sched_stacks *s;
    uint64_t si[3];       /* the switch-ins looked at */
    uint32_t stack[3][2]; /* their New Thread and Readying Thread stacks */
    uint32_t readier[3];
    bool seen[3];
} rows;

static void on_row(void *ctx, const etl_sched_row *r)
{
    rows *x = ctx;
    for (int k = 0; k < 3; k++)
        if (!(r->flags & ETL_ROW_HEAD) && r->si_ts == x->si[k]) {
            x->seen[k] = true;
            x->stack[k][0] = etl_sched_stacks_row_new(x->s, r);
            x->stack[k][1] = etl_sched_stacks_row_readying(x->s, r);
            x->readier[k] = r->flags & ETL_ROW_READIED ? r->readier_tid : UINT32_MAX;
        }
}

/* The first frame of a stack less KFRAME (its mark), or -1 for none. */
static long long mark(etl_sched_stacks *s, uint32_t id)
{
    if (id == ETL_SCHED_STACK_NONE) return -1;
    uint32_t n;
    const etl_profile_frame *f = etl_sched_stacks_frames(s, id, &n);
    assert_true(n == 2);
    return (long long)(f[0].address - KFRAME);
}

static void test_readying_stack(void **state)
{
    (void)state;
    char path[600];
    snprintf(path, sizeof path, "%s/ready.etl", dir);
    make(path);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    rows x = {0};
    x.si[0] = T0 + 2000, x.si[1] = T0 + 3100, x.si[2] = T0 + 4100;
    assert_int_equal(etl_sched_stacks_build(r, &x.s), ETL_OK);
    etl_sched_source *src;
    assert_int_equal(etl_sched_source_open(r, NULL, &src), ETL_OK);
    etl_sched_options mo = {sizeof mo, on_row, &x, false, NULL, r};
    etl_sched *m;
    assert_int_equal(etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), &mo, &m), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(src, &ev) == ETL_OK) etl_sched_push(m, &ev);
    etl_sched_finish(m, etl_sched_end_ts(r, etl_sched_source_stats_get(src)->last_ts));
    for (int k = 0; k < 3; k++) assert_true(x.seen[k]);
    /* 1: readied by A, Ready Time its switch-out; the walk at the ReadyThread (900) */
    assert_int_equal(x.readier[0], A);
    assert_int_equal(mark(x.s, x.stack[0][0]), 0x22);
    assert_int_equal(mark(x.s, x.stack[0][1]), 0x11);
    /* 2: the ReadyThread's walk after the readier's switch-out */
    assert_int_equal(x.readier[1], A);
    assert_int_equal(mark(x.s, x.stack[1][1]), 0x33);
    /* 3: the second walk of the tick is the ReadyThread's */
    assert_int_equal(x.readier[2], Z);
    assert_int_equal(mark(x.s, x.stack[2][1]), 0x66);
    const etl_sched_stacks_stats *st = etl_sched_stacks_stats_get(x.s);
    assert_int_equal(st->walks_repeated, 0);
    assert_int_equal(st->ready_walked, 3);
    etl_sched_close(m);
    etl_sched_source_close(src);
    etl_sched_stacks_free(x.s);
    etl_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_readying_stack)};
    return cmocka_run_group_tests(tests, setup, teardown);
}

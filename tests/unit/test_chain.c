/*
 * test_chain.c - wait chains against the simulator's ground truth.
 *
 * A trace with ALPC client/server pairs, lock hand-overs and I/O completions is
 * synthesized with its truth captured. For waits the truth knows (a client's
 * WrLpcReply, lock and I/O waits), the chain from the wait's switch-out to the
 * switch-in must: start with that wait, readied by the truth's `by_tid` (the
 * ALPC server for WrLpcReply); descend into exactly that thread over exactly
 * that interval; at every hop, name the readier the truth names for the wait
 * it ended (DPC readyings are leaves); tile every node's interval with its
 * segments, so that the critical path adds up to the interval to the
 * nanosecond; never hold a thread twice on one path; respect --depth and --min.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"
#include "etlkit/sched.h"
#include "etlkit/wakeups.h"
#include "etlkit/waitchain.h"
#include "synthtruth.h"

typedef st_truth truth;


static char path[512];
static truth T;
static etl_reader *R;

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/etlkit-chain-%d.etl", dir && *dir ? dir : "/tmp", (int)getpid());
    etl_synth_options o;
    etl_synth_options_init(&o);
    const char *kv[][2] = {{"seed", "4"}, {"cpus", "2"}, {"threads", "40"}, {"processes", "8"}, {"duration", "0.4"},
                           {"load", "70"}, {"churn", "20"}};
    etl_diag d;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (etl_synth_set(&o, kv[i][0], kv[i][1], &d) != ETL_OK) return -1;
    st_run(path, &o, &T);
    return etl_reader_open(path, NULL, &R, &d) == ETL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    etl_reader_close(R);
    st_free(&T);
    unlink(path);
    return 0;
}

static int64_t ns(uint64_t ts) { return etl_clock_ns(etl_reader_clock(R), ts); }

/* The truth's readying that ended tid's wait at canonical time t (the ReadyThread at RT), or NULL. */
static const etl_synth_ready *ready_at(uint32_t tid, int64_t t)
{
    const etl_synth_ready *best = NULL;
    for (size_t i = 0; i < T.nrd; i++)
        if (T.rd[i].tid == tid && ns(T.rd[i].time) == t) best = &T.rd[i];
    return best;
}

static void run(const etl_chain_options *o, etl_chain *c)
{
    assert_int_equal(etl_chain_init(c, o), ETL_OK);
    assert_int_equal(etl_chain_run(R, c, -1, NULL), ETL_OK);
}

/* Structure: segments tile each node; a descent covers its segment exactly; no thread twice on a path. */
static void check_structure(const etl_chain *c)
{
    assert_true(c->nnodes >= 1);
    for (size_t i = 0; i < c->nnodes; i++) {
        const etl_chain_node *n = &c->nodes[i];
        assert_true(n->count >= 1);
        int64_t at = n->start;
        for (uint32_t k = n->first; k < n->first + n->count; k++) {
            const etl_chain_seg *s = &c->segs[k];
            assert_int_equal(s->start, at);
            assert_true(s->end > s->start);
            at = s->end;
            if (s->child != UINT32_MAX) {
                const etl_chain_node *ch = &c->nodes[s->child];
                assert_int_equal(s->state, ETL_CHAIN_WAITING);
                assert_int_equal(ch->start, s->start);
                assert_int_equal(ch->end, s->end);
                assert_int_equal(ch->depth, n->depth + 1);
                assert_int_equal(ch->parent, i);
                assert_int_equal(ch->tid, s->waker_tid);
                assert_true(ch->depth <= (c->o.no_descent ? 0 : c->o.depth));
                assert_true(s->end - s->start >= c->o.min_ns);
                for (uint32_t p = (uint32_t)i; p != UINT32_MAX; p = c->nodes[p].parent)
                    assert_true(c->nodes[p].thread != ch->thread);
            } else if (s->state == ETL_CHAIN_WAITING) {
                assert_true(s->leaf != ETL_LEAF_NONE);
            }
        }
        assert_int_equal(at, n->end);
    }
    int64_t sum = 0, tot = 0;
    for (size_t i = 0; i < c->npath; i++) sum += c->path[i].ns;
    for (unsigned s = 0; s < 6; s++) tot += c->totals[s];
    assert_int_equal(sum, c->nodes[0].end - c->nodes[0].start);
    assert_int_equal(tot, sum);
}

/* Every hop's readier is the truth's by_tid for the readying that ended that wait. */
static unsigned check_readiers(const etl_chain *c)
{
    unsigned checked = 0;
    for (size_t i = 0; i < c->nnodes; i++) {
        const etl_chain_node *n = &c->nodes[i];
        for (uint32_t k = n->first; k < n->first + n->count; k++) {
            const etl_chain_seg *s = &c->segs[k];
            if (s->state != ETL_CHAIN_WAITING || !s->has_waker || s->end == n->end) continue;
            const etl_synth_ready *r = ready_at(n->tid, s->end);
            if (!r) fail_msg("tid %u: no truth readying at %lld", n->tid, (long long)s->end);
            if (r->flags & ETL_READY_EXECUTING_DPC) {
                assert_int_equal(s->waker, ETL_WAKER_DPC);
                assert_int_equal(s->leaf, ETL_LEAF_DPC);
            } else if (s->waker == ETL_WAKER_THREAD) {
                if (s->waker_tid != r->by_tid)
                    fail_msg("tid %u wait ending %lld: readier %u, truth %u", n->tid, (long long)s->end, s->waker_tid,
                             r->by_tid);
            }
            checked++;
        }
    }
    return checked;
}

/* Switch-outs waiting for `reason`, with the truth's next switch-in of the same thread. */
typedef struct wait_iv {
    uint32_t tid;
    uint64_t out, in;
} wait_iv;

static size_t waits(const char *reason, wait_iv *out, size_t cap, uint64_t min_ticks)
{
    size_t n = 0;
    for (size_t i = 0; i < T.nsw && n < cap; i++) {
        const etl_synth_switch *s = &T.sw[i];
        const char *rn = etl_wait_reason_name(s->old_wait_reason);
        if (!s->old_tid || s->old_state != 5 || !rn || strcmp(rn, reason) != 0) continue;
        for (size_t k = i + 1; k < T.nsw; k++)
            if (T.sw[k].new_tid == s->old_tid) {
                if (T.sw[k].time - s->time >= min_ticks) out[n++] = (wait_iv){s->old_tid, s->time, T.sw[k].time};
                break;
            }
    }
    return n;
}

static void test_alpc(void **state)
{
    (void)state;
    wait_iv w[40];
    size_t n = waits("WrLpcReply", w, 40, 1000 /* 100 us at 10 MHz */);
    assert_true(n >= 5);
    unsigned descended = 0, hops = 0;
    for (size_t i = 0; i < n; i++) {
        etl_chain c;
        etl_chain_options o = {.sz = sizeof o, .tid = w[i].tid, .has_at = true, .at = ns(w[i].in), .min_ns = 50000};
        run(&o, &c);
        assert_int_equal(c.status, ETL_CHAIN_OK);
        check_structure(&c);
        hops += check_readiers(&c);
        /* The interval is the wait's gap: switch-out to switch-in. */
        assert_int_equal(c.nodes[0].tid, w[i].tid);
        assert_int_equal(c.nodes[0].start, ns(w[i].out));
        assert_int_equal(c.nodes[0].end, ns(w[i].in));
        const etl_chain_seg *s = &c.segs[c.nodes[0].first];
        assert_int_equal(s->state, ETL_CHAIN_WAITING);
        assert_string_equal(etl_wait_reason_name(s->reason), "WrLpcReply");
        /* Readied by the ALPC server, as the truth says, and the chain descends into it. */
        const etl_synth_ready *r = ready_at(w[i].tid, s->end);
        assert_non_null(r);
        assert_int_equal(r->why, ETL_SYNTH_READY_LPC);
        assert_int_equal(s->waker, ETL_WAKER_THREAD);
        assert_int_equal(s->waker_tid, r->by_tid);
        if (s->end - s->start >= 50000) {
            assert_true(s->child != UINT32_MAX);
            assert_int_equal(c.nodes[s->child].tid, r->by_tid);
            descended++;
        }
        assert_true(c.passes >= 2);
        etl_chain_free(&c);
    }
    assert_true(descended >= 3);
    assert_true(hops >= n);
}

/* Lock and I/O waits: thread readiers descend, DPC readiers are leaves. */
static void test_locks_and_io(void **state)
{
    (void)state;
    static const char *const reasons[] = {"WrPushLock", "WrQueue", "Executive", "UserRequest"};
    unsigned dpc = 0, thread = 0;
    for (size_t j = 0; j < 4; j++) {
        wait_iv w[10];
        size_t n = waits(reasons[j], w, 10, 5000);
        for (size_t i = 0; i < n; i++) {
            etl_chain c;
            etl_chain_options o = {.sz = sizeof o, .tid = w[i].tid, .has_at = true, .at = ns(w[i].in), .min_ns = -1};
            run(&o, &c);
            assert_int_equal(c.status, ETL_CHAIN_OK);
            check_structure(&c);
            check_readiers(&c);
            const etl_chain_seg *s = &c.segs[c.nodes[0].first];
            if (s->state == ETL_CHAIN_WAITING && s->has_waker) {
                if (s->waker == ETL_WAKER_DPC) dpc++;
                if (s->waker == ETL_WAKER_THREAD) thread++;
            }
            etl_chain_free(&c);
        }
    }
    assert_true(dpc > 0);
    assert_true(thread > 0);
}

/* --depth and --min: no node deeper than asked, leaves marked; depth 0 keeps the root alone. */
static void test_limits(void **state)
{
    (void)state;
    wait_iv w[40];
    size_t n = waits("WrLpcReply", w, 10, 1000);
    n += waits("WrQueue", w + n, 10, 20000);
    n += waits("UserRequest", w + n, 10, 20000);
    unsigned deep = 0;
    for (size_t i = 0; i < n; i++) {
        etl_chain full, d1, d0, big;
        etl_chain_options o = {.sz = sizeof o, .tid = w[i].tid, .has_at = true, .at = ns(w[i].in), .min_ns = -1};
        run(&o, &full);
        check_structure(&full);
        uint32_t maxd = 0;
        for (size_t k = 0; k < full.nnodes; k++)
            if (full.nodes[k].depth > maxd) maxd = full.nodes[k].depth;
        o.depth = 1;
        run(&o, &d1);
        check_structure(&d1);
        for (size_t k = 0; k < d1.nnodes; k++) assert_true(d1.nodes[k].depth <= 1);
        if (maxd >= 2) {
            deep++;
            bool leaf = false;
            for (size_t k = 0; k < d1.nsegs; k++) leaf |= d1.segs[k].leaf == ETL_LEAF_DEPTH;
            assert_true(leaf);
            assert_true(d1.passes < full.passes);
        }
        o.no_descent = true;
        run(&o, &d0);
        check_structure(&d0);
        assert_int_equal(d0.nnodes, 1);
        assert_int_equal(d0.passes, 2);
        o.no_descent = false;
        o.depth = 0;
        o.min_ns = INT64_MAX / 4;
        run(&o, &big);
        assert_int_equal(big.nnodes, 1);
        /* The same interval split the same way at the root, whatever the descent. */
        assert_int_equal(d0.nodes[0].count, full.nodes[0].count);
        for (uint32_t k = 0; k < d0.nodes[0].count; k++) {
            assert_int_equal(d0.segs[k].start, full.segs[k].start);
            assert_int_equal(d0.segs[k].state, full.segs[k].state);
        }
        etl_chain_free(&full);
        etl_chain_free(&d1);
        etl_chain_free(&d0);
        etl_chain_free(&big);
    }
    assert_true(deep > 0);
}

/* Without --at: the thread's longest off-CPU gap; with a process name: its threads' longest. */
static void test_defaults(void **state)
{
    (void)state;
    uint32_t tid = 0;
    for (size_t i = 0; i < T.nsw && !tid; i++)
        if (T.sw[i].old_state == 5 && strcmp(etl_wait_reason_name(T.sw[i].old_wait_reason), "WrLpcReply") == 0)
            tid = T.sw[i].old_tid;
    /* The truth's longest gap of tid: switch-out to next switch-in. */
    int64_t longest = 0;
    for (size_t i = 0; i < T.nsw; i++) {
        if (T.sw[i].old_tid != tid) continue;
        for (size_t k = i + 1; k < T.nsw; k++)
            if (T.sw[k].new_tid == tid) {
                int64_t g = ns(T.sw[k].time) - ns(T.sw[i].time);
                if (g > longest) longest = g;
                break;
            }
    }
    etl_chain c;
    etl_chain_options o = {.sz = sizeof o, .tid = tid};
    run(&o, &c);
    assert_int_equal(c.status, ETL_CHAIN_OK);
    check_structure(&c);
    assert_int_equal(c.nodes[0].end - c.nodes[0].start, longest);
    etl_chain_free(&c);

    etl_sched *m;
    o = (etl_chain_options){.sz = sizeof o, .process = "svchost"};
    assert_int_equal(etl_chain_init(&c, &o), ETL_OK);
    assert_int_equal(etl_chain_run(R, &c, -1, &m), ETL_OK);
    assert_int_equal(c.status, ETL_CHAIN_OK);
    check_structure(&c);
    assert_string_equal(etl_sched_process_name(m, c.nodes[0].thread), "svchost.exe");
    etl_sched_close(m);
    etl_chain_free(&c);

    /* No such thread: why, and the nearest TIDs (999999 is past them all: the largest first). */
    o = (etl_chain_options){.sz = sizeof o, .tid = 999999};
    assert_int_equal(etl_chain_init(&c, &o), ETL_OK);
    assert_int_equal(etl_chain_run(R, &c, -1, &m), ETL_OK);
    assert_int_equal(c.status, ETL_CHAIN_NO_THREAD);
    assert_int_equal(c.nnodes, 0);
    etl_sched_found f;
    assert_int_equal(etl_chain_why_empty(&c, m, 1, &f), ETL_CHAIN_WHY_NOT_IN_TRACE);
    assert_string_equal(etl_chain_why_name(ETL_CHAIN_WHY_NOT_IN_TRACE), "no_such_thread");
    assert_int_equal(f.what, ETL_ASKED_NO_THREAD);
    assert_true(f.nnear >= 1 && f.nnear <= ETL_CHAIN_NEAR_MAX);
    size_t nt;
    const etl_sched_thread *th = etl_sched_threads(m, &nt);
    uint32_t top = 0;
    for (size_t i = 0; i < nt; i++)
        if (th[i].tid > top) top = th[i].tid;
    assert_int_equal(etl_sched_thread_at(m, f.near[0])->tid, top);
    assert_int_equal(etl_chain_why_empty(&c, m, 0, &f), ETL_CHAIN_WHY_NO_SWITCHES);
    /* The questions the reports ask of a model. */
    assert_int_equal(etl_sched_find_asked(m, -1, NULL, &f), ETL_ASKED_NOTHING);
    assert_int_equal(etl_sched_find_asked(m, 0, NULL, &f), ETL_ASKED_IDLE);
    assert_int_equal(etl_sched_find_asked(m, top, NULL, &f), ETL_ASKED_FOUND);
    assert_int_equal(etl_sched_thread_at(m, f.thread)->tid, top);
    assert_int_equal(etl_sched_find_asked(m, top, "nosuchprocess", &f), ETL_ASKED_NO_PROCESS);
    assert_int_equal(f.nnear, 0);
    assert_int_equal(etl_sched_find_asked(m, -1, "SVCHOST", &f), ETL_ASKED_FOUND);
    assert_false(f.by_pid);
    assert_int_equal(etl_sched_find_asked(m, -1, "svc", &f), ETL_ASKED_NO_PROCESS);
    assert_true(f.nnear >= 1); /* whose name contains it */
    assert_int_equal(etl_sched_find_asked(m, -1, "99999999999999999999999", &f), ETL_ASKED_NO_PROCESS);
    assert_true(f.by_pid);
    assert_int_equal(f.pid, UINT32_MAX);
    assert_true(f.nnear >= 1); /* the nearest PIDs */
    assert_int_equal(etl_sched_find_asked(m, -1, "+4", &f), ETL_ASKED_NO_PROCESS);
    assert_false(f.by_pid); /* a name */
    /* An id as a person gives it: decimal digits only, saturating. */
    uint64_t id = 0;
    assert_true(etl_sched_id_arg("0936", &id));
    assert_int_equal(id, 936);
    assert_true(etl_sched_id_arg("99999999999999999999999", &id));
    assert_true(id == UINT64_MAX);
    assert_false(etl_sched_id_arg("+4", &id));
    assert_false(etl_sched_id_arg(" 4", &id));
    assert_false(etl_sched_id_arg("0x3a8", &id));
    assert_false(etl_sched_id_arg("", &id));
    assert_false(etl_sched_id_arg(NULL, &id));
    etl_sched_close(m);
    etl_chain_free(&c);
}

/* Hand-made events: a readying cycle (A readies B, B readies A) and readiers that never ran. */
static void push_sw(etl_sched *m, uint64_t ts, uint16_t cpu, uint32_t old, uint32_t new_tid, uint8_t state)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SWITCH;
    ev.ts = ts;
    ev.cpu = cpu;
    ev.u.sw.ts = ts;
    ev.u.sw.cpu = cpu;
    ev.u.sw.known = ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_STATE |
                    ETL_CSW_WAIT_REASON;
    ev.u.sw.old_tid = old;
    ev.u.sw.new_tid = new_tid;
    ev.u.sw.old_state = state;
    ev.u.sw.old_wait_reason = 15;
    etl_sched_push(m, &ev);
}

static void push_ready(etl_sched *m, uint64_t ts, uint16_t cpu, uint32_t tid)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_READY;
    ev.ts = ts;
    ev.cpu = cpu;
    ev.u.ready.thread_id = tid;
    etl_sched_push(m, &ev);
}

static void feed(etl_chain *c)
{
    etl_clock clk = {.type = ETL_CLOCK_QPC, .ticks_per_sec = 1000000000, .t0 = 0};
    etl_sched *m;
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_chain_row, .ctx = c};
    assert_int_equal(etl_sched_open(&clk, 2, &mo, &m), ETL_OK);
    etl_chain_bind(c, m);
    /* CPU 0: A(1) runs, waits at 1000; B(2) on CPU 1 runs until 5000 but first waits 1500..4000 readied by A?
     * A is waiting then: the readier seen is whoever runs on CPU 0, here C(3). C was readied by B. */
    push_sw(m, 100, 0, 0, 1, 2);      /* A in on CPU 0 */
    push_sw(m, 110, 1, 0, 2, 2);      /* B in on CPU 1 */
    push_sw(m, 1000, 0, 1, 3, 5);     /* A waits; C in on CPU 0 */
    push_sw(m, 1500, 1, 2, 0, 5);     /* B waits */
    push_ready(m, 4000, 0, 2);        /* C readies B */
    push_sw(m, 4100, 1, 0, 2, 2);     /* B in */
    push_ready(m, 4500, 1, 3);        /* B readies C (C was running: a ready while runnable, harmless) */
    push_sw(m, 4600, 0, 3, 0, 5);     /* C waits */
    push_ready(m, 8000, 1, 1);        /* B readies A */
    push_ready(m, 8000, 1, 3);        /* B readies C */
    push_sw(m, 8100, 0, 0, 1, 2);     /* A in */
    push_sw(m, 9000, 1, 2, 3, 5);     /* B waits, C in */
    etl_sched_finish(m, 10000);
    assert_int_equal(etl_chain_end_pass(c), ETL_OK);
    etl_sched_close(m);
}

static void test_handmade(void **state)
{
    (void)state;
    etl_chain c;
    etl_chain_options o = {.sz = sizeof o, .tid = 1, .has_at = true, .at = 8100, .min_ns = 1};
    assert_int_equal(etl_chain_init(&c, &o), ETL_OK);
    while (etl_chain_next_pass(&c)) feed(&c);
    assert_int_equal(c.status, ETL_CHAIN_OK);
    check_structure(&c);
    /* A waited 1000..8000 readied by B, ready 8000..8100; B over 1000..8000: running, waiting 1500..4000 readied
     * by C, ready, running. C over 1500..4000 runs the whole time. */
    assert_int_equal(c.nodes[0].start, 1000);
    assert_int_equal(c.nodes[0].end, 8100);
    assert_int_equal(c.segs[c.nodes[0].first].waker_tid, 2);
    assert_true(c.nnodes >= 3);
    assert_int_equal(c.nodes[1].tid, 2);
    assert_int_equal(c.nodes[2].tid, 3);
    assert_int_equal(c.totals[ETL_CHAIN_READY], 100 + 100);
    etl_sched_found f;
    assert_int_equal(etl_chain_why_empty(&c, NULL, 1, &f), ETL_CHAIN_WHY_NOT_EMPTY); /* not empty: nothing to explain */
    assert_string_equal(etl_chain_why_name(ETL_CHAIN_WHY_NOT_EMPTY), "");
    assert_string_equal(etl_chain_why_name(99), "?");
    /* The summary: A's 7000 waiting on B, of which B waited 2500 on C; B ran 4400 and was ready 100, C ran 2500. */
    etl_chain_summary s;
    assert_int_equal(etl_chain_summarize(&c, &s), ETL_OK);
    assert_int_equal(s.interval_ns, 7100);
    assert_int_equal(s.by_state[ETL_CHAIN_WAITING], 7000);
    assert_int_equal(s.by_state[ETL_CHAIN_READY], 100);
    assert_int_equal(s.by_state[ETL_CHAIN_RUNNING], 0);
    assert_int_equal(s.nlevels, 2);
    assert_int_equal(s.levels[0].wait_ns, 7000);
    assert_int_equal(s.levels[0].key.waker_tid, 2);
    assert_int_equal(s.levels[0].ran_ns, 500 + 3900);
    assert_int_equal(s.levels[0].ready_ns, 100);
    assert_int_equal(s.levels[1].wait_ns, 2500);
    assert_int_equal(s.levels[1].key.waker_tid, 3);
    assert_int_equal(s.levels[1].ran_ns, 2500);
    assert_int_equal(s.levels[1].ready_ns, 0);
    etl_chain_summary_free(&s);
    etl_chain_free(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_handmade),   cmocka_unit_test(test_alpc),     cmocka_unit_test(test_locks_and_io),
        cmocka_unit_test(test_limits),     cmocka_unit_test(test_defaults),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

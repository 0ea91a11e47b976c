/*
 * test_wakeups.c - `wakeups` against the simulator's ground truth: every switch
 * whose old thread is the idle thread, charged to the readier of the thread it
 * switches in, recomputed here from the truth's switch and ready records alone
 * (the ReadyThread that readied the thread: the last logged one since its
 * previous switch-in, none when it was switched out runnable; DPC when its flag
 * says so, else by_tid), must match what the library reads back from the file.
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
#include "base/idmap.h"
#include "synthtruth.h"

typedef st_truth truth;

static void synth(const char *path, const char *seed, const char *cpus, const char *format, truth *t)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    const char *kv[][2] = {{"seed", seed},         {"cpus", cpus},     {"threads", "40"},   {"processes", "8"},
                           {"duration", "0.3"},     {"cswitch", format}, {"churn", "50"},     {"buffer-size", "16K"}};
    etl_diag d;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (etl_synth_set(&o, kv[i][0], kv[i][1], &d) != ETL_OK) fail_msg("%s: %s", kv[i][0], d.msg);
    st_run(path, &o, t);
}

typedef struct tstate {
    bool has_in, has_out, has_r, out_runnable;
    bool r_known;   /* the readying CPU's thread was known to the model (spec §0 "Readier") */
    uint64_t in_ts, r_ts;
    const etl_synth_ready *r;
} tstate;

typedef struct expect {
    uint64_t total, by_kind[4];
    etl_idmap by_tid; /* readier tid -> count */
} expect;

static void compute(const truth *t, expect *e, bool compact)
{
    memset(e, 0, sizeof *e);
    etl_idmap_init(&e->by_tid);
    etl_idmap states;
    etl_idmap_init(&states);
    tstate *st = calloc(t->nsw + t->nrd + 1, sizeof *st);
    size_t nst = 0;
    bool *last = calloc(t->nsw + 1, sizeof *last);
    for (size_t i = 0; compact && i < t->nsw; i++) {
        bool later = false;
        for (size_t k = i + 1; k < t->nsw && !later; k++) later = t->sw[k].cpu == t->sw[i].cpu;
        last[i] = !later;
    }
    /*
     * The model knows who runs on a CPU until a compact CPU's last switch, and before its first switch too (the old
     * thread that switch names, read ahead): a CPU that never switches is unknown.
     */
    uint8_t cpu_known[ETL_SYNTH_MAX_CPUS] = {0};
    for (size_t i = 0; i < t->nsw; i++) cpu_known[t->sw[i].cpu] = 1;
    size_t n;
    st_item *it = st_timeline(t, &n);
#define STATE(tid)                                                                                                   \
    (etl_idmap_get(&states, (tid)) != ETL_IDMAP_EMPTY ? &st[etl_idmap_get(&states, (tid))]                          \
                                                      : (etl_idmap_put(&states, (tid), (uint32_t)nst), &st[nst++]))
    for (size_t k = 0; k < n; k++) {
        if (it[k].kind == 0) {
            const etl_synth_ready *r = &t->rd[it[k].i];
            tstate *x = STATE(r->tid);
            x->has_r = true;
            x->r_ts = r->time;
            x->r = r;
            x->r_known = cpu_known[r->cpu];
            continue;
        }
        const etl_synth_switch *s = &t->sw[it[k].i];
        cpu_known[s->cpu] = !last[it[k].i];
        if (s->old_tid) {
            tstate *o = STATE(s->old_tid);
            o->has_out = true;
            o->out_runnable = s->old_state == 1 || s->old_state == 2 || s->old_state == 3 || s->old_state == 7;
        }
        if (!s->new_tid) continue;
        tstate *x = STATE(s->new_tid);
        bool cand = x->has_r && (!x->has_in || x->r_ts > x->in_ts);
        if (s->old_tid == 0) {
            e->total++;
            etl_waker_kind kind = ETL_WAKER_UNKNOWN;
            if (last[it[k].i]) kind = ETL_WAKER_UNKNOWN; /* a compact CPU's last switch: new thread not recorded */
            else if (x->has_out && x->out_runnable) kind = ETL_WAKER_UNKNOWN;
            else if (cand && (x->r->flags & ETL_READY_EXECUTING_DPC)) kind = ETL_WAKER_DPC;
            else if (cand && !x->r_known) kind = ETL_WAKER_UNKNOWN;
            else if (cand && x->r->by_tid == 0) kind = ETL_WAKER_IDLE;
            else if (cand) kind = ETL_WAKER_THREAD;
            e->by_kind[kind]++;
            if (kind == ETL_WAKER_THREAD) {
                uint32_t v = etl_idmap_get(&e->by_tid, x->r->by_tid);
                etl_idmap_put(&e->by_tid, x->r->by_tid, v == ETL_IDMAP_EMPTY ? 1 : v + 1);
            }
        }
        if (!last[it[k].i]) {
            x->has_in = true;
            x->in_ts = s->time;
        }
    }
#undef STATE
    free(it);
    free(st);
    free(last);
    etl_idmap_free(&states);
}

static void check(const char *seed, const char *cpus, const char *format)
{
    char path[512];
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/etlkit-wakeups-%d.etl", dir && *dir ? dir : "/tmp", (int)getpid());
    truth t;
    synth(path, seed, cpus, format, &t);
    expect e;
    compute(&t, &e, strcmp(format, "compact") == 0);

    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_sched_source *s;
    assert_int_equal(etl_sched_source_open(r, NULL, &s), ETL_OK);
    etl_wakeups w;
    etl_sched *m;
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_wakeups_add, .ctx = &w, .reader = r};
    assert_int_equal(etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), &mo, &m), ETL_OK);
    etl_wakeups_options wo = {.sz = sizeof wo};
    assert_int_equal(etl_wakeups_init(&w, m, &wo), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(m, &ev);
    etl_sched_finish(m, etl_sched_end_ts(r, etl_sched_source_stats_get(s)->last_ts));
    assert_int_equal(etl_wakeups_finish(&w), ETL_OK);

    if (w.total != e.total || memcmp(w.by_kind, e.by_kind, sizeof w.by_kind) != 0)
        fail_msg("%s/%s: total %llu (thread %llu idle %llu dpc %llu unknown %llu); truth %llu (%llu %llu %llu %llu)",
                 format, seed, (unsigned long long)w.total, (unsigned long long)w.by_kind[0],
                 (unsigned long long)w.by_kind[1], (unsigned long long)w.by_kind[2], (unsigned long long)w.by_kind[3],
                 (unsigned long long)e.total, (unsigned long long)e.by_kind[0], (unsigned long long)e.by_kind[1],
                 (unsigned long long)e.by_kind[2], (unsigned long long)e.by_kind[3]);
    assert_true(e.total > 100);
    assert_true(e.by_kind[ETL_WAKER_DPC] > 0 && e.by_kind[ETL_WAKER_THREAD] > 0);
    /* Per readier thread: every row's count equals the truth's, and the rows cover the truth's threads. */
    uint64_t sum = 0, per_cpu = 0, hist = w.idle_unknown, cst = w.cstate_unknown;
    size_t nthread_rows = 0;
    for (size_t i = 0; i < w.nthreads; i++) {
        const etl_wakeup_waker *x = &w.threads[i];
        sum += x->count;
        if (i) assert_true(w.threads[i - 1].count >= x->count);
        if (x->kind != ETL_WAKER_THREAD) {
            assert_int_equal(x->count, e.by_kind[x->kind]);
            continue;
        }
        nthread_rows++;
        uint32_t tid = etl_sched_thread_at(m, x->thread)->tid;
        uint32_t want = etl_idmap_get(&e.by_tid, tid);
        if (want == ETL_IDMAP_EMPTY || want != x->count)
            fail_msg("%s/%s: readier tid %u: %llu wake-ups, truth %d", format, seed, tid, (unsigned long long)x->count,
                     want == ETL_IDMAP_EMPTY ? -1 : (int)want);
    }
    assert_int_equal(nthread_rows, e.by_tid.count);
    assert_int_equal(sum, w.total);
    sum = 0;
    for (size_t i = 0; i < w.nprocesses; i++) sum += w.processes[i].count;
    assert_int_equal(sum, w.total);
    for (size_t c = 0; c < w.ncpus; c++) per_cpu += w.per_cpu[c];
    for (unsigned b = 0; b < ETL_WAKEUP_IDLE_BUCKETS; b++) hist += w.idle_hist[b];
    for (unsigned c = 0; c < 256; c++) cst += w.cstate[c];
    assert_int_equal(per_cpu, w.total);
    assert_int_equal(hist, w.total); /* the unknown ones (a CPU's first) beside the histogram */
    assert_true(w.idle_unknown <= w.ncpus);
    assert_int_equal(cst, w.total);
    /* C-states: the simulator leaves C1, or C2 after at least 1 ms idle; compact records carry none. */
    if (strcmp(format, "full") == 0) {
        uint64_t c2 = 0, c2_truth = 0;
        for (size_t i = 0; i < t.nsw; i++)
            if (t.sw[i].old_tid == 0 && t.sw[i].previous_cstate == 2) c2_truth++;
        c2 = w.cstate[2];
        assert_int_equal(c2, c2_truth);
        assert_int_equal(w.cstate_unknown, 0);
    } else {
        assert_int_equal(w.cstate_unknown, w.total);
    }
    etl_wakeups_free(&w);
    etl_sched_close(m);
    etl_sched_source_close(s);
    etl_reader_close(r);
    etl_idmap_free(&e.by_tid);
    st_free(&t);
    unlink(path);
}

static void test_full(void **state)
{
    (void)state;
    check("3", "4", "full");
    check("11", "2", "full");
}

static void test_compact(void **state)
{
    (void)state;
    check("5", "4", "compact");
}

/* A window: only switch-ins inside it count. */
static void test_window(void **state)
{
    (void)state;
    etl_clock clk = {.type = ETL_CLOCK_QPC, .ticks_per_sec = 1000000000, .t0 = 0};
    etl_wakeups w;
    etl_sched *m;
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_wakeups_add, .ctx = &w};
    assert_int_equal(etl_sched_open(&clk, 1, &mo, &m), ETL_OK);
    etl_wakeups_options wo = {.sz = sizeof wo, .v0 = 150, .v1 = 400};
    assert_int_equal(etl_wakeups_init(&w, m, &wo), ETL_OK);
    /* idle -> 7 at 100, 7 -> idle at 120, idle -> 7 at 200 (readied by a DPC at 190), 7 -> idle 300, idle -> 7 500. */
    uint64_t ts[] = {100, 120, 190, 200, 300, 500};
    for (size_t i = 0; i < 6; i++) {
        etl_sched_event ev;
        memset(&ev, 0, sizeof ev);
        ev.ts = ts[i];
        if (ts[i] == 190) {
            ev.kind = ETL_SCHED_READY;
            ev.u.ready.thread_id = 7;
            ev.u.ready.flags = ETL_READY_EXECUTING_DPC;
        } else {
            ev.kind = ETL_SCHED_SWITCH;
            ev.u.sw.ts = ts[i];
            ev.u.sw.known = ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_STATE;
            bool in = ts[i] == 100 || ts[i] == 200 || ts[i] == 500;
            ev.u.sw.new_tid = in ? 7 : 0;
            ev.u.sw.old_tid = in ? 0 : 7;
            ev.u.sw.old_state = in ? 2 : 5;
        }
        etl_sched_push(m, &ev);
    }
    etl_sched_finish(m, 600);
    assert_int_equal(etl_wakeups_finish(&w), ETL_OK);
    assert_int_equal(w.total, 1);
    assert_int_equal(w.by_kind[ETL_WAKER_DPC], 1);
    assert_int_equal(w.idle_hist[0], 1); /* 80 ns idle */
    assert_int_equal(w.idle_ns, 80);
    etl_wakeups_free(&w);
    etl_sched_close(m);
}

/* The names the reports print for a readier that is not a thread. */
static void test_kind_names(void **state)
{
    (void)state;
    assert_string_equal(etl_waker_kind_name(ETL_WAKER_THREAD), "Thread");
    assert_string_equal(etl_waker_kind_name(ETL_WAKER_IDLE), "Idle");
    assert_string_equal(etl_waker_kind_name(ETL_WAKER_DPC), "DPC");
    assert_string_equal(etl_waker_kind_name(ETL_WAKER_UNKNOWN), "Unknown");
    assert_string_equal(etl_waker_kind_name((etl_waker_kind)99), "Unknown");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kind_names),
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

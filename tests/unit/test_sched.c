/*
 * test_sched.c - the scheduler model and its aggregations against the
 * simulator's ground truth.
 *
 * For each flavour (CPU count, pointer size, clock, full / compact / both,
 * compression) a trace is synthesized with its truth captured in memory. The
 * expected answers are computed here from the truth records alone (every
 * switch with its true new thread, every ReadyThread with `logged`), by the
 * spec's rules (analyses.md §1, §2), then compared with what the model reads
 * back from the file: CPU time per thread and per CPU to the nanosecond, idle
 * and unknown time, switch counts, Ready and Waits per thread, per wait reason,
 * exact nearest-rank percentiles, and (for clocks of 10 MHz, where a tick is
 * exactly 100 ns) the truth's own per-thread running totals. A compact trace
 * must give the same answers as the full trace of the same seed, but for each
 * CPU's last slice, whose thread a batch does not record.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"
#include "etlkit/sched.h"
#include "etlkit/usage.h"
#include "base/idmap.h"
#include "sched/usage_slice.h"
#include "sched/latency.h"
#include "sched/usage_slice.h"
#include "synthtruth.h"

typedef st_truth truth;


/* ---- expected answers from the truth -------------------------------------------------------- */

typedef struct exp_thread {
    uint32_t tid;
    int64_t cpu_ns;
    uint64_t switches;
    uint64_t voluntary, involuntary; /* switch-outs waiting, runnable (a Terminated one is neither) */
    int64_t *ready;   /* every Ready value (`all` variant) */
    size_t nready, capready;
    uint64_t woken;
    uint64_t wait_count;
    int64_t wait_ns;
    /* walking state */
    bool has_in, has_out;
    uint64_t in_ts, out_ts;
    uint8_t out_state, out_reason;
    bool has_r;
    uint64_t r_ts;
} exp_thread;

typedef struct expected {
    exp_thread *t;
    size_t n;
    etl_idmap map;
    int64_t *busy, *idle, *unknown;
    uint64_t *cpu_switches;
    unsigned ncpu;
    uint64_t reason_count[64];
    int64_t reason_ns[64], reason_max[64];
    int64_t *all;
    size_t nall;
} expected;

static exp_thread *ethr(expected *e, uint32_t tid)
{
    uint32_t i = etl_idmap_get(&e->map, tid);
    if (i != ETL_IDMAP_EMPTY) return &e->t[i];
    e->t = realloc(e->t, (e->n + 1) * sizeof *e->t);
    memset(&e->t[e->n], 0, sizeof e->t[e->n]);
    e->t[e->n].tid = tid;
    etl_idmap_put(&e->map, tid, (uint32_t)e->n);
    return &e->t[e->n++];
}

static bool waiting(uint8_t s) { return s == 5 || s == 6 || s == 9; }
static bool runnable(uint8_t s) { return s == 1 || s == 2 || s == 3 || s == 7; }

static void add_cpu(expected *e, uint32_t tid, bool known, unsigned cpu, int64_t a, int64_t b)
{
    if (!known) e->unknown[cpu] += b - a;
    else if (tid == 0) e->idle[cpu] += b - a;
    else {
        e->busy[cpu] += b - a;
        ethr(e, tid)->cpu_ns += b - a;
    }
}

static void compute(expected *e, const truth *t, const etl_clock *clk, bool compact_tail, uint64_t end_ts)
{
    memset(e, 0, sizeof *e);
    etl_idmap_init(&e->map);
    e->ncpu = t->meta.ncpu;
    e->busy = calloc(e->ncpu, sizeof *e->busy);
    e->idle = calloc(e->ncpu, sizeof *e->idle);
    e->unknown = calloc(e->ncpu, sizeof *e->unknown);
    e->cpu_switches = calloc(e->ncpu, sizeof *e->cpu_switches);
    /* A compact CPU's last switch does not record its new thread: no switch-in is known there. */
    bool *last = calloc(t->nsw + 1, sizeof *last);
    for (unsigned c = 0; compact_tail && c < e->ncpu; c++) {
        size_t li = SIZE_MAX;
        for (size_t i = 0; i < t->nsw; i++)
            if (t->sw[i].cpu == c) li = i;
        if (li != SIZE_MAX) last[li] = true;
    }
    /* Slices, per CPU: the truth's switches of each CPU are in time order. */
    for (unsigned c = 0; c < e->ncpu; c++) {
        const etl_synth_switch *prev = NULL;
        for (size_t i = 0; i < t->nsw; i++) {
            const etl_synth_switch *s = &t->sw[i];
            if (s->cpu != c) continue;
            e->cpu_switches[c]++;
            if (s->new_tid && !last[i]) ethr(e, s->new_tid)->switches++;
            if (s->old_tid && waiting(s->old_state)) ethr(e, s->old_tid)->voluntary++;
            if (s->old_tid && runnable(s->old_state)) ethr(e, s->old_tid)->involuntary++;
            if (!prev) add_cpu(e, s->old_tid, true, c, 0, etl_clock_ns(clk, s->time));
            else add_cpu(e, prev->new_tid, true, c, etl_clock_ns(clk, prev->time), etl_clock_ns(clk, s->time));
            prev = s;
        }
        if (prev) add_cpu(e, prev->new_tid, !compact_tail, c, etl_clock_ns(clk, prev->time), etl_clock_ns(clk, end_ts));
    }
    /* Ready and Waits: every switch and logged ReadyThread in time order (one thread's are strictly ordered). */
    size_t n;
    st_item *it = st_timeline(t, &n);
    e->all = malloc((t->nsw + 1) * sizeof *e->all);
    for (size_t k = 0; k < n; k++) {
        if (it[k].kind == 0) {
            const etl_synth_ready *r = &t->rd[it[k].i];
            exp_thread *x = ethr(e, r->tid);
            x->has_r = true;
            x->r_ts = r->time;
            continue;
        }
        const etl_synth_switch *s = &t->sw[it[k].i];
        if (s->old_tid) {
            exp_thread *o = ethr(e, s->old_tid);
            o->has_out = true;
            o->out_ts = s->time;
            o->out_state = s->old_state;
            o->out_reason = s->old_wait_reason;
        }
        if (!s->new_tid || last[it[k].i]) continue;
        exp_thread *x = ethr(e, s->new_tid);
        bool cand = x->has_r && (!x->has_in || x->r_ts > x->in_ts);
        bool has_rt = false;
        uint64_t rt = 0;
        if (x->has_out && runnable(x->out_state)) {
            has_rt = true;
            rt = x->out_ts;
        } else if (cand) {
            has_rt = true;
            rt = x->has_out && x->out_ts > x->r_ts ? x->out_ts : x->r_ts;
            x->woken++;
        }
        if (has_rt) {
            int64_t v = etl_clock_ns(clk, s->time) - etl_clock_ns(clk, rt);
            if (x->nready == x->capready) {
                x->capready = x->capready ? 2 * x->capready : 16;
                x->ready = realloc(x->ready, x->capready * sizeof *x->ready);
            }
            x->ready[x->nready++] = v;
            e->all[e->nall++] = v;
            if (x->has_out && waiting(x->out_state)) {
                int64_t w = etl_clock_ns(clk, rt) - etl_clock_ns(clk, x->out_ts);
                x->wait_count++;
                x->wait_ns += w;
                unsigned rc = x->out_reason & 63;
                e->reason_count[rc]++;
                e->reason_ns[rc] += w;
                if (w > e->reason_max[rc]) e->reason_max[rc] = w;
            }
        }
        x->has_in = true;
        x->in_ts = s->time;
    }
    free(it);
    free(last);
}

static void expected_free(expected *e)
{
    for (size_t i = 0; i < e->n; i++) free(e->t[i].ready);
    free(e->t);
    free(e->busy);
    free(e->idle);
    free(e->unknown);
    free(e->cpu_switches);
    free(e->all);
    etl_idmap_free(&e->map);
}

static int cmp64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank, computed the textbook way (r = ceil(p * N / 100), 1-based), independently of the library. */
static int64_t rank(int64_t *v, size_t n, unsigned pct10)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp64);
    size_t r = 1;
    while ((uint64_t)r * 1000 < (uint64_t)pct10 * n) r++;
    return v[r - 1];
}

/* ---- reading back ---------------------------------------------------------------------------- */

typedef struct result {
    etl_reader *r;
    etl_sched *m;
    etl_usage u;
    uint64_t end_ts;
    etl_sched_source_stats src;
} result;

/* Read back with Ready values kept in memory up to latency_budget bytes (0: the default). */
/* The ready histogram asked of etl_usage: lower edges in ns (values below the first count in bin 0 too). */
static const int64_t hist_lo[] = {100, 1000, 10000, 100000, 1000000};
#define NHIST (sizeof hist_lo / sizeof hist_lo[0])

/* Read back with a selection of threads (etl_usage_select, ctx the result: its model), NULL: every thread. */
static void read_back_select(const char *path, result *res, size_t latency_budget, etl_usage_select_fn sel)
{
    memset(res, 0, sizeof *res);
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &res->r, &d), ETL_OK);
    etl_sched_source *s;
    assert_int_equal(etl_sched_source_open(res->r, NULL, &s), ETL_OK);
    etl_sched_options mo = {sizeof mo, etl_usage_add, &res->u, false, NULL, res->r};
    assert_int_equal(etl_sched_open(etl_reader_clock(res->r), etl_reader_cpu_count(res->r), &mo, &res->m), ETL_OK);
    etl_usage_options uo = {sizeof uo, 0, 0, 5, 0, false, latency_budget, 0, 0, hist_lo, NHIST};
    assert_int_equal(etl_usage_init(&res->u, res->m, &uo), ETL_OK);
    if (sel) assert_int_equal(etl_usage_select(&res->u, sel, res), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(res->m, &ev);
    res->src = *etl_sched_source_stats_get(s);
    res->end_ts = etl_sched_end_ts(res->r, res->src.last_ts);
    etl_sched_finish(res->m, res->end_ts);
    assert_int_equal(etl_usage_finish(&res->u, etl_clock_ns(etl_reader_clock(res->r), res->end_ts)), ETL_OK);
    etl_sched_source_close(s);
}

static void read_back_budget(const char *path, result *res, size_t latency_budget)
{
    read_back_select(path, res, latency_budget, NULL);
}

static void read_back(const char *path, result *res) { read_back_budget(path, res, 0); }

static void result_free(result *res)
{
    etl_usage_free(&res->u);
    etl_sched_close(res->m);
    etl_reader_close(res->r);
}

static const etl_usage_thread *find(const result *res, uint32_t tid)
{
    for (size_t i = 0; i < res->u.nthreads; i++)
        if (etl_sched_thread_at(res->m, res->u.threads[i].thread)->tid == tid) return &res->u.threads[i];
    return NULL;
}

static void check(const char *what, const truth *t, const result *res, bool compact)
{
    const etl_clock *clk = etl_reader_clock(res->r);
    /*
     * The window ends at the later of the last record and EndTime (spec §1, Trace edges): here the
     * rundown written after the simulation's end, so each CPU's last slice runs a few ticks longer
     * than in the truth's totals.
     */
    if (res->end_ts < t->end.end || res->end_ts < res->src.last_ts)
        fail_msg("%s: trace end %llu, truth %llu, last record %llu", what, (unsigned long long)res->end_ts,
                 (unsigned long long)t->end.end, (unsigned long long)res->src.last_ts);
    assert_int_equal(clk->t0, t->meta.start);
    expected e;
    compute(&e, t, clk, compact, res->end_ts);
    const etl_sched_stats *ms = etl_sched_stats_get(res->m);
    assert_int_equal(ms->switches, t->nsw);
    assert_int_equal(ms->cswitch_chain_mismatch, 0);
    assert_int_equal(ms->time_backwards, 0);
    int64_t window = etl_clock_ns(clk, res->end_ts);
    for (unsigned c = 0; c < e.ncpu; c++) {
        const etl_usage_cpu *k = &res->u.cpus[c];
        if (k->busy_ns != e.busy[c] || k->idle_ns != e.idle[c] || k->unknown_ns != e.unknown[c] ||
            k->switches != e.cpu_switches[c])
            fail_msg("%s: cpu %u: busy %lld idle %lld unknown %lld switches %llu; truth %lld %lld %lld %llu", what, c,
                     (long long)k->busy_ns, (long long)k->idle_ns, (long long)k->unknown_ns,
                     (unsigned long long)k->switches, (long long)e.busy[c], (long long)e.idle[c],
                     (long long)e.unknown[c], (unsigned long long)e.cpu_switches[c]);
        assert_int_equal(k->busy_ns + k->idle_ns + k->unknown_ns, window);
    }
    for (size_t i = 0; i < e.n; i++) {
        exp_thread *x = &e.t[i];
        const etl_usage_thread *g = find(res, x->tid);
        if (!g) {
            if (x->cpu_ns || x->nready) fail_msg("%s: tid %u missing", what, x->tid);
            continue;
        }
        int64_t sum = 0;
        for (size_t k = 0; k < x->nready; k++) sum += x->ready[k];
        if (g->cpu_ns != x->cpu_ns || g->switches != x->switches || g->ready.count != x->nready ||
            g->ready.sum_ns != sum || g->wait_count != x->wait_count || g->wait_ns != x->wait_ns ||
            g->woken.count != x->woken || g->voluntary != x->voluntary || g->involuntary != x->involuntary)
            fail_msg("%s: tid %u: cpu %lld switches %llu (out %llu/%llu) ready %llu/%lld woken %llu waits %llu/%lld; "
                     "truth cpu %lld switches %llu (out %llu/%llu) ready %zu/%lld woken %llu waits %llu/%lld",
                     what, x->tid, (long long)g->cpu_ns, (unsigned long long)g->switches,
                     (unsigned long long)g->voluntary, (unsigned long long)g->involuntary,
                     (unsigned long long)g->ready.count, (long long)g->ready.sum_ns, (unsigned long long)g->woken.count,
                     (unsigned long long)g->wait_count, (long long)g->wait_ns, (long long)x->cpu_ns,
                     (unsigned long long)x->switches, (unsigned long long)x->voluntary,
                     (unsigned long long)x->involuntary, x->nready, (long long)sum, (unsigned long long)x->woken,
                     (unsigned long long)x->wait_count, (long long)x->wait_ns);
        assert_int_equal(g->ready.p50_ns, rank(x->ready, x->nready, 500));
        assert_int_equal(g->ready.p90_ns, rank(x->ready, x->nready, 900));
        assert_int_equal(g->ready.p99_ns, rank(x->ready, x->nready, 990));
        assert_int_equal(g->ready.max_ns, x->nready ? x->ready[x->nready - 1] : 0);
    }
    assert_int_equal(res->u.ready_all.count, e.nall);
    /* The histogram filled in the same pass holds the same values, each in its bin. */
    uint64_t hist[NHIST] = {0};
    for (size_t k = 0; k < e.nall; k++) {
        size_t b = NHIST - 1;
        while (b > 0 && (int64_t)e.all[k] < hist_lo[b]) b--;
        hist[b]++;
    }
    for (size_t b = 0; b < NHIST; b++)
        if (res->u.ready_hist[b] != hist[b])
            fail_msg("%s: ready histogram bin %zu: %llu, truth %llu", what, b, (unsigned long long)res->u.ready_hist[b],
                     (unsigned long long)hist[b]);
    assert_int_equal(res->u.ready_all.p50_ns, rank(e.all, e.nall, 500));
    assert_int_equal(res->u.ready_all.p99_ns, rank(e.all, e.nall, 990));
    assert_int_equal(res->u.ready_all.p999_ns, rank(e.all, e.nall, 999));
    for (unsigned rc = 0; rc < 64; rc++) {
        const etl_usage_reason *r = &res->u.reasons[rc];
        if (r->count != e.reason_count[rc] || r->wait_ns != e.reason_ns[rc] || r->max_ns != e.reason_max[rc])
            fail_msg("%s: reason %u: %llu/%lld/%lld, truth %llu/%lld/%lld", what, rc, (unsigned long long)r->count,
                     (long long)r->wait_ns, (long long)r->max_ns, (unsigned long long)e.reason_count[rc],
                     (long long)e.reason_ns[rc], (long long)e.reason_max[rc]);
    }
    /* Longest waits: the top one is the largest wait of any reason. */
    int64_t top = 0;
    for (unsigned rc = 0; rc < 64; rc++)
        if (e.reason_max[rc] > top) top = e.reason_max[rc];
    if (res->u.n_longest_waits) assert_int_equal(res->u.longest_waits[0].dur_ns, top);
    /* At 10 MHz a tick is exactly 100 ns: the truth's own running totals, to the tick. */
    if (t->meta.ticks_per_sec == 10000000 && !compact) {
        for (size_t i = 0; i < t->ntt; i++) {
            const etl_usage_thread *g = find(res, t->tt[i].tid);
            int64_t want = (int64_t)t->tt[i].running * 100;
            for (unsigned c = 0; c < t->meta.ncpu; c++) {
                uint32_t last = 0;
                for (size_t k = 0; k < t->nsw; k++)
                    if (t->sw[k].cpu == c) last = t->sw[k].new_tid;
                if (last == t->tt[i].tid) want += etl_clock_ns(clk, res->end_ts) - etl_clock_ns(clk, t->end.end);
            }
            if ((g ? g->cpu_ns : 0) != want)
                fail_msg("%s: tid %u: cpu %lld ns, truth running %llu ticks", what, t->tt[i].tid,
                         (long long)(g ? g->cpu_ns : 0), (unsigned long long)t->tt[i].running);
            if (g) assert_int_equal(g->switches, t->tt[i].switches_in);
        }
    }
    expected_free(&e);
}

typedef struct flavour {
    const char *bits, *clock, *format, *cpus;
    bool z;
} flavour;

static const flavour flavours[] = {
    {"64", "qpc", "full", "4", false},     {"64", "qpc", "compact", "4", false}, {"64", "qpc", "both", "3", true},
    {"32", "cycles", "full", "2", false},  {"32", "system", "compact", "4", true}, {"64", "cycles", "compact", "8", true},
    {"64", "system", "full", "1", false},
};

static void synth(const flavour *f, const char *seed, const char *format, const char *path, truth *t)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "seed", seed);
    st_set(&o, "cpus", f->cpus);
    st_set(&o, "threads", "40");
    st_set(&o, "processes", "8");
    st_set(&o, "duration", "0.25");
    st_set(&o, "pointer-size", f->bits);
    st_set(&o, "clock", f->clock);
    st_set(&o, "cswitch", format);
    st_set(&o, "buffer-size", "16K");
    st_set(&o, "churn", "100");
    st_set(&o, f->z ? "compress" : "no-compress", NULL);
    st_run(path, &o, t);
}

static void test_truth_flavours(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        const flavour *f = &flavours[i];
        char path[512], what[128], seed[16];
        snprintf(what, sizeof what, "%s-%s-%s-%scpu%s", f->bits, f->clock, f->format, f->cpus, f->z ? "-z" : "");
        snprintf(seed, sizeof seed, "%zu", 7 + i);
        st_tmp(path, sizeof path, "sched", "t.etl");
        truth t;
        synth(f, seed, f->format, path, &t);
        result res;
        read_back(path, &res);
        check(what, &t, &res, strcmp(f->format, "compact") == 0);
        if (strcmp(f->format, "compact") == 0) assert_true(res.src.compact_switches > 0);
        if (strcmp(f->format, "both") == 0) assert_true(res.src.duplicates_dropped > 0);
        result_free(&res);
        st_free(&t);
        unlink(path);
    }
}

/* The same seed written as full CSwitch events and as compact batches: the same answers but for the tails. */
static void test_compact_equals_full(void **state)
{
    (void)state;
    const flavour f = {"64", "qpc", "full", "4", false};
    char pf[512], pc[512];
    st_tmp(pf, sizeof pf, "sched", "full.etl");
    st_tmp(pc, sizeof pc, "sched", "compact.etl");
    truth tf, tc;
    synth(&f, "99", "full", pf, &tf);
    synth(&f, "99", "compact", pc, &tc);
    assert_int_equal(tf.nsw, tc.nsw);
    result rf, rc;
    read_back(pf, &rf);
    read_back(pc, &rc);
    /* Threads running at the end differ only by their tail; everything else is equal. */
    uint32_t tail_tid[64];
    unsigned ntail = 0;
    for (unsigned c = 0; c < tf.meta.ncpu && c < 64; c++) {
        uint32_t last = 0;
        for (size_t i = 0; i < tf.nsw; i++)
            if (tf.sw[i].cpu == c) last = tf.sw[i].new_tid;
        tail_tid[ntail++] = last;
    }
    size_t compared = 0;
    for (size_t i = 0; i < rf.u.nthreads; i++) {
        uint32_t tid = etl_sched_thread_at(rf.m, rf.u.threads[i].thread)->tid;
        const etl_usage_thread *a = &rf.u.threads[i], *b = find(&rc, tid);
        assert_non_null(b);
        bool tail = false;
        for (unsigned k = 0; k < ntail; k++) tail |= tail_tid[k] == tid;
        if (!tail) {
            assert_int_equal(a->cpu_ns, b->cpu_ns);
            compared++;
        }
        assert_int_equal(a->switches, b->switches);
        assert_int_equal(a->ready.count, b->ready.count);
        assert_int_equal(a->ready.sum_ns, b->ready.sum_ns);
        assert_int_equal(a->ready.p99_ns, b->ready.p99_ns);
        assert_int_equal(a->wait_count, b->wait_count);
        assert_int_equal(a->wait_ns, b->wait_ns);
    }
    assert_true(compared > 10);
    for (unsigned r = 0; r < 64; r++) {
        assert_int_equal(rf.u.reasons[r].count, rc.u.reasons[r].count);
        assert_int_equal(rf.u.reasons[r].wait_ns, rc.u.reasons[r].wait_ns);
    }
    result_free(&rf);
    result_free(&rc);
    st_free(&tf);
    st_free(&tc);
    unlink(pf);
    unlink(pc);
}

static void same_latency(const char *what, const etl_latency *a, const etl_latency *b)
{
    if (memcmp(a, b, sizeof *a) != 0)
        fail_msg("%s: count %llu/%llu sum %lld/%lld p50 %lld/%lld p90 %lld/%lld p99 %lld/%lld p999 %lld/%lld max %lld/%lld",
                 what, (unsigned long long)a->count, (unsigned long long)b->count, (long long)a->sum_ns,
                 (long long)b->sum_ns, (long long)a->p50_ns, (long long)b->p50_ns, (long long)a->p90_ns,
                 (long long)b->p90_ns, (long long)a->p99_ns, (long long)b->p99_ns, (long long)a->p999_ns,
                 (long long)b->p999_ns, (long long)a->max_ns, (long long)b->max_ns);
}

/*
 * Ready values past the memory budget go to a temporary file and their percentiles are
 * read in passes: the same numbers as in memory, for every thread, process and the whole
 * trace, whatever the budget (one value: every thread and process by histogram; a few
 * thousand: groups of processes, big ones by histogram).
 */
static void test_latency_spilled(void **state)
{
    (void)state;
    const flavour fl[] = {{"64", "qpc", "full", "4", false}, {"32", "cycles", "compact", "3", true}};
    for (size_t f = 0; f < sizeof fl / sizeof fl[0]; f++) {
        char path[512];
        st_tmp(path, sizeof path, "sched", "spill.etl");
        truth t;
        synth(&fl[f], "17", fl[f].format, path, &t);
        result a;
        read_back(path, &a);
        assert_true(a.u.ready_all.count > 5000);
        const size_t budgets[] = {4, 4 * 500, 4 * 5000, 4 * (size_t)a.u.ready_all.count / 2};
        for (size_t k = 0; k < sizeof budgets / sizeof budgets[0]; k++) {
            result b;
            read_back_budget(path, &b, budgets[k]);
            assert_non_null(b.u.priv->spill); /* it did spill */
            char what[128];
            snprintf(what, sizeof what, "%s budget %zu", fl[f].format, budgets[k]);
            check(what, &t, &b, strcmp(fl[f].format, "compact") == 0);
            same_latency(what, &a.u.ready_all, &b.u.ready_all);
            same_latency(what, &a.u.woken_all, &b.u.woken_all);
            assert_int_equal(a.u.nthreads, b.u.nthreads);
            for (size_t i = 0; i < a.u.nthreads; i++) {
                assert_int_equal(a.u.threads[i].thread, b.u.threads[i].thread);
                same_latency(what, &a.u.threads[i].ready, &b.u.threads[i].ready);
                same_latency(what, &a.u.threads[i].woken, &b.u.threads[i].woken);
            }
            assert_int_equal(a.u.nprocesses, b.u.nprocesses);
            for (size_t i = 0; i < a.u.nprocesses; i++) {
                assert_int_equal(a.u.processes[i].process, b.u.processes[i].process);
                same_latency(what, &a.u.processes[i].ready, &b.u.processes[i].ready);
            }
            result_free(&b);
        }
        result_free(&a);
        st_free(&t);
        unlink(path);
    }
}

/*
 * Ready values spilled to a directory that cannot take them: finish fails with an I/O
 * status and a diagnostic naming the directory, never percentiles of nothing (it used
 * to print "Ready latency of 0 switch-ins ... p99 0 ns" with exit 0).
 */
static void test_latency_spill_fails(void **state)
{
    (void)state;
    const flavour fl = {"64", "qpc", "full", "4", false};
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "seed", "5");
    st_set(&o, "cpus", "4");
    st_set(&o, "threads", "60");
    st_set(&o, "duration", "3");
    st_set(&o, "cswitch", fl.format);
    char path[512];
    st_tmp(path, sizeof path, "sched", "spillfail.etl");
    truth t;
    st_run(path, &o, &t);
    char dir[600];
    snprintf(dir, sizeof dir, "%s.missing-dir", path);
    setenv("TMPDIR", dir, 1);
    result res;
    memset(&res, 0, sizeof res);
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &res.r, &d), ETL_OK);
    etl_sched_source *s;
    assert_int_equal(etl_sched_source_open(res.r, NULL, &s), ETL_OK);
    etl_sched_options mo = {sizeof mo, etl_usage_add, &res.u, false, NULL, res.r};
    assert_int_equal(etl_sched_open(etl_reader_clock(res.r), etl_reader_cpu_count(res.r), &mo, &res.m), ETL_OK);
    etl_usage_options uo = {sizeof uo, 0, 0, 5, 0, false, 4, 0, 0, NULL, 0};
    assert_int_equal(etl_usage_init(&res.u, res.m, &uo), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(res.m, &ev);
    etl_sched_finish(res.m, etl_sched_end_ts(res.r, etl_sched_source_stats_get(s)->last_ts));
    etl_sched_source_close(s);
    unsetenv("TMPDIR");
    assert_int_equal(etl_usage_finish(&res.u, 0), ETL_E_IO);
    const etl_diag *why = etl_usage_diag(&res.u);
    assert_int_equal(why->status, ETL_E_IO);
    assert_non_null(strstr(why->msg, dir));
    assert_non_null(strstr(why->msg, "No such file or directory"));
    result_free(&res);
    st_free(&t);
    unlink(path);
}

/* The threads of odd TID (ctx: the result, whose model names them). */
static bool odd_tid(void *ctx, uint32_t thread)
{
    const etl_sched_thread *t = etl_sched_thread_at(((result *)ctx)->m, thread);
    return t && (t->tid & 4) != 0; /* TIDs are multiples of 4 */
}

/*
 * A selection of threads (waits --thread/--process) counts in every answer, not the threads alone (explore9 F1:
 * the ready totals, the reasons and the longest intervals were the whole machine's): each selected thread's
 * numbers as without the selection, the whole's the sum of theirs, the longest intervals theirs, no CPU told.
 */
static void test_usage_select(void **state)
{
    (void)state;
    char path[512];
    st_tmp(path, sizeof path, "sched", "select.etl");
    truth t;
    synth(&flavours[0], "11", "full", path, &t);
    result a, b;
    read_back(path, &a);
    read_back_select(path, &b, 0, odd_tid);
    uint64_t n = 0, ready = 0, woken = 0, waits = 0;
    int64_t ready_ns = 0, wait_ns = 0, wait_max = 0, ready_max = 0;
    for (size_t i = 0; i < a.u.nthreads; i++) {
        const etl_usage_thread *x = &a.u.threads[i];
        if (!odd_tid(&a, x->thread)) continue;
        const etl_usage_thread *y = find(&b, etl_sched_thread_at(a.m, x->thread)->tid);
        assert_non_null(y);
        same_latency("selected thread", &x->ready, &y->ready);
        same_latency("selected thread", &x->woken, &y->woken);
        assert_int_equal(x->wait_count, y->wait_count);
        assert_int_equal(x->wait_ns, y->wait_ns);
        n++;
        ready += x->ready.count;
        ready_ns += x->ready.sum_ns;
        woken += x->woken.count;
        waits += x->wait_count;
        wait_ns += x->wait_ns;
        if (x->wait_max_ns > wait_max) wait_max = x->wait_max_ns;
        if (x->ready.count && x->ready.max_ns > ready_max) ready_max = x->ready.max_ns;
    }
    assert_true(n > 3 && n < a.u.nthreads);
    assert_int_equal(b.u.nthreads, n);
    assert_true(ready < a.u.ready_all.count);
    assert_int_equal(b.u.ready_all.count, ready);
    assert_int_equal(b.u.ready_all.sum_ns, ready_ns);
    assert_int_equal(b.u.ready_all.max_ns, ready_max);
    assert_int_equal(b.u.woken_all.count, woken);
    uint64_t rc = 0;
    int64_t rns = 0;
    for (unsigned c = 0; c < 64; c++) {
        rc += b.u.reasons[c].count;
        rns += b.u.reasons[c].wait_ns;
    }
    assert_int_equal(rc, waits);
    assert_int_equal(rns, wait_ns);
    assert_true(b.u.n_longest_waits > 0 && b.u.n_longest_ready > 0);
    assert_int_equal(b.u.longest_waits[0].dur_ns, wait_max);
    assert_int_equal(b.u.longest_ready[0].dur_ns, ready_max);
    for (size_t i = 0; i < b.u.n_longest_waits; i++) assert_true(odd_tid(&b, b.u.longest_waits[i].thread));
    for (size_t i = 0; i < b.u.n_longest_ready; i++) assert_true(odd_tid(&b, b.u.longest_ready[i].thread));
    assert_int_equal(b.u.ncpus, 0); /* a CPU's idle time is the machine's */
    /* Intervals would read as the machine's busy time: refused. */
    etl_usage u;
    etl_usage_options uo = {.sz = sizeof uo, .interval_ns = 1000000};
    assert_int_equal(etl_usage_init(&u, a.m, &uo), ETL_OK);
    assert_int_equal(etl_usage_select(&u, odd_tid, &a), ETL_E_INVALID_ARG);
    etl_usage_free(&u);
    result_free(&a);
    result_free(&b);
    st_free(&t);
    unlink(path);
}

/* Percentiles by nearest rank on hand-made values. */
static void test_percentile(void **state)
{
    (void)state;
    int64_t v[] = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    assert_int_equal(etl_percentile_sorted(v, 10, 500), 50);
    assert_int_equal(etl_percentile_sorted(v, 10, 900), 90);
    assert_int_equal(etl_percentile_sorted(v, 10, 990), 100);
    assert_int_equal(etl_percentile_sorted(v, 10, 1), 10);
    assert_int_equal(etl_percentile_sorted(v, 1, 500), 10);
    assert_int_equal(etl_percentile_sorted(v, 0, 500), 0);
    assert_int_equal(etl_percentile_sorted(v, 3, 500), 20); /* ceil(1.5) = 2 */
}

/* lat_select_n (direct reads, the two-vector search, the histograms) against lat_select's plain binary search. */
static void test_select_n(void **state)
{
    (void)state;
    uint64_t x = 0x9E3779B97F4A7C15ull;
    const size_t shapes[][2] = {{1, 50}, {2, 7}, {2, 3000}, {5, 100}, {40, 12000}, {300, 2000}};
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        size_t k = shapes[s][0], per = shapes[s][1];
        lat_vec *v = calloc(k, sizeof *v);
        const lat_vec **pv = calloc(k, sizeof *pv);
        uint64_t n = 0;
        for (size_t i = 0; i < k; i++) {
            size_t m = i % 3 == 2 ? 0 : per + i; /* some empty */
            for (size_t j = 0; j < m; j++) {
                x ^= x << 13, x ^= x >> 7, x ^= x << 17;
                /* small values with many repeats, wide ones, and a few over 32 bits */
                uint64_t val = j % 97 == 5 ? (1ull << 32) + (x % 1000) : j % 2 ? x % 64 : x % 5000000;
                assert_true(lat_push(&v[i], val));
                n++;
            }
            lat_sort(&v[i]);
            pv[i] = &v[i];
        }
        uint64_t ranks[] = {1, 2, n / 2, n * 9 / 10, n - 1, n, n + 1, 0}, got[8];
        lat_select_n(pv, k, ranks, 8, got);
        for (size_t q = 0; q < 8; q++) {
            uint64_t want = lat_select(pv, k, ranks[q]);
            if (got[q] != want) fail_msg("k %zu per %zu rank %llu: %llu, not %llu", k, per,
                                         (unsigned long long)ranks[q], (unsigned long long)got[q],
                                         (unsigned long long)want);
        }
        for (size_t i = 0; i < k; i++) lat_free(&v[i]);
        free(v);
        free(pv);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentile),
        cmocka_unit_test(test_select_n),
        cmocka_unit_test(test_truth_flavours),
        cmocka_unit_test(test_compact_equals_full),
        cmocka_unit_test(test_latency_spilled),
        cmocka_unit_test(test_latency_spill_fails),
        cmocka_unit_test(test_usage_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

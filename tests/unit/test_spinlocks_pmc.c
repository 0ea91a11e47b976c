/*
 * test_spinlocks_pmc.c - the spin lock and PMC aggregations (etlkit/spinlocks.h, etlkit/pmc.h)
 * against the simulator's ground truth.
 *
 * Traces are synthesized with their truth captured in memory (as test_sched.c
 * does). The expected answers are computed here from the truth records alone,
 * by the spec's rules (analyses.md §5, §6), independently of the library:
 *
 *   spin locks  every sampled release is an event; its class is re-derived from
 *               its fields and the parameters the simulator sampled with; per
 *               lock, caller, pair, AcquireMode and in total: event and class
 *               counts, weighted estimates and sums, maxima, nearest-rank p50 and
 *               p99, distinct threads and CPUs. The true counts (every release,
 *               sampled or not) must lie within the stated bounds.
 *   PMC         consecutive switches of a CPU: the difference of their counters
 *               goes to the later switch's old thread; per TID, idle, per CPU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"
#include "etlkit/sched.h"
#include "etlkit/spinlocks.h"
#include "etlkit/pmc.h"
#include "synthtruth.h"

/* num / den to the nearest, a half up: the library's one rounding of what people read. */
static int64_t near(unsigned __int128 num, uint64_t den)
{
    return (int64_t)((num + den / 2) / den);
}

typedef st_truth truth;

/* Options as name=value pairs, NULL-terminated; a name without '=' is a flag. */
static void synth(const char *path, const char *const *opts, truth *t)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "threads", "30");
    st_set(&o, "processes", "6");
    st_set(&o, "buffer-size", "32K");
    for (size_t i = 0; opts[i]; i++) {
        char name[64];
        const char *eq = strchr(opts[i], '=');
        size_t n = eq ? (size_t)(eq - opts[i]) : strlen(opts[i]);
        snprintf(name, sizeof name, "%.*s", (int)n, opts[i]);
        st_set(&o, name, eq ? eq + 1 : NULL);
    }
    st_run(path, &o, t);
}

/* ---- reading back ------------------------------------------------------------------------------ */

typedef struct result {
    etl_reader *r;
    etl_sched *m;
    etl_spinlocks s;
    etl_pmc p;
} result;

/* The selection read_back gives the spin lock aggregation (none: NULL). */
static int (*g_select)(void *ctx, const etl_sched_event *ev);
static void *g_select_ctx;

static void read_back(const char *path, const etl_spinlock_info *params, int64_t v0, int64_t v1,
                      const etl_pmc_options *po, result *res)
{
    memset(res, 0, sizeof *res);
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &res->r, &d), ETL_OK);
    etl_sched_source *src;
    assert_int_equal(etl_sched_source_open(res->r, NULL, &src), ETL_OK);
    etl_sched_options mo = {sizeof mo, etl_pmc_add, &res->p, false, NULL, res->r};
    assert_int_equal(etl_sched_open(etl_reader_clock(res->r), etl_reader_cpu_count(res->r), &mo, &res->m), ETL_OK);
    etl_spinlocks_options so = {sizeof so, v0, v1, *params, etl_reader_header(res->r)->cpu_speed_mhz,
                                etl_reader_cpu_count(res->r), 0, g_select, g_select_ctx};
    assert_int_equal(etl_spinlocks_init(&res->s, etl_reader_clock(res->r), &so), ETL_OK);
    etl_pmc_options p = *po;
    p.v0 = v0;
    p.v1 = v1;
    assert_int_equal(etl_pmc_init(&res->p, res->m, &p), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(src, &ev) == ETL_OK) {
        etl_spinlocks_add(&res->s, &ev);
        etl_sched_push(res->m, &ev);
    }
    uint64_t end = etl_sched_end_ts(res->r, etl_sched_source_stats_get(src)->last_ts);
    etl_sched_finish(res->m, end);
    int64_t end_ns = etl_clock_ns(etl_reader_clock(res->r), end);
    assert_int_equal(etl_spinlocks_finish(&res->s, end_ns), ETL_OK);
    assert_int_equal(etl_pmc_finish(&res->p, end_ns), ETL_OK);
    etl_sched_source_close(src);
}

static void result_free(result *res)
{
    etl_spinlocks_free(&res->s);
    etl_pmc_free(&res->p);
    etl_sched_close(res->m);
    etl_reader_close(res->r);
}

/* ---- spin locks: expected from the truth ---------------------------------------------------------- */

static int cmp64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank, the textbook way: r = ceil(p * N / 100), 1-based. */
static uint64_t rank(uint64_t *v, size_t n, unsigned pct10)
{
    if (!n) return 0;
    qsort(v, n, sizeof *v, cmp64);
    size_t r = 1;
    while ((uint64_t)r * 1000 < (uint64_t)pct10 * n) r++;
    return v[r - 1];
}

static size_t uniq(uint64_t *v, size_t n)
{
    qsort(v, n, sizeof *v, cmp64);
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (!k || v[i] != v[k - 1]) v[k++] = v[i];
    return k;
}

typedef struct expv {
    uint64_t events, cls[4], contended, irq, est, est_cont, w_wait, w_wait_c, w_spins, w_hold, w_nonirq;
    uint64_t max_hold, max_wait, max_spins, hold_p50, hold_p99, wait_p50, wait_p99;
    size_t nthreads, ncpus;
    uint64_t *tids, *cpus;
} expv;

enum { G_LOCK, G_CALLER, G_PAIR, G_MODE, G_TOTAL };

static bool in_group(const etl_synth_spinlock *x, unsigned kind, const etl_spin_group *g)
{
    switch (kind) {
    case G_LOCK: return x->lock.spin_lock_address == g->lock;
    case G_CALLER: return x->lock.caller_address == g->caller;
    case G_PAIR: return x->lock.spin_lock_address == g->lock && x->lock.caller_address == g->caller;
    case G_MODE: return x->lock.acquire_mode == g->mode;
    default: return true;
    }
}

static bool in_window(const etl_clock *clk, uint64_t ts, int64_t v0, int64_t v1)
{
    int64_t ns = etl_clock_ns(clk, ts);
    return ns >= v0 && ns < v1;
}

/* The spec's class rule (§5), written out again. */
static unsigned klass(const etl_spinlock_info *p, const etl_synth_spinlock *x, uint64_t *w)
{
    uint32_t h = p->has_hold_threshold ? p->spin_lock_hold_threshold : 0;
    if (h != 0 && x->hold_cycles > h) return *w = 1, 0;
    if (x->lock.spin_count >= p->spin_lock_spin_threshold) return *w = p->spin_lock_contention_sample_rate, 1;
    if (x->lock.spin_count == 0) return *w = p->spin_lock_acquire_sample_rate, 2;
    return *w = 1, 3;
}

static void expect(const truth *t, const etl_clock *clk, const etl_spinlock_info *p, int64_t v0, int64_t v1,
                   unsigned kind, const etl_spin_group *g, expv *e)
{
    memset(e, 0, sizeof *e);
    uint64_t *hold = malloc((t->nsl + 1) * sizeof *hold), *wait = malloc((t->nsl + 1) * sizeof *wait);
    e->tids = malloc((t->nsl + 1) * sizeof *e->tids);
    e->cpus = malloc((t->nsl + 1) * sizeof *e->cpus);
    size_t nh = 0, nw = 0;
    for (size_t i = 0; i < t->nsl; i++) {
        const etl_synth_spinlock *x = &t->sl[i];
        if (!x->sampled || !in_window(clk, x->time, v0, v1) || !in_group(x, kind, g)) continue;
        uint64_t w;
        unsigned c = klass(p, x, &w);
        e->events++;
        e->cls[c]++;
        e->est += w;
        e->w_wait += w * x->lock.wait_time_in_cycles;
        e->w_spins += w * x->lock.spin_count;
        if (x->lock.spin_count) {
            e->contended++;
            e->est_cont += w;
            e->w_wait_c += w * x->lock.wait_time_in_cycles;
        }
        if (x->lock.interrupt_count) {
            e->irq++;
        } else {
            e->w_hold += w * x->hold_cycles;
            e->w_nonirq += w;
            if (x->hold_cycles > e->max_hold) e->max_hold = x->hold_cycles;
            hold[nh++] = x->hold_cycles;
        }
        if (x->lock.wait_time_in_cycles > e->max_wait) e->max_wait = x->lock.wait_time_in_cycles;
        if (x->lock.spin_count > e->max_spins) e->max_spins = x->lock.spin_count;
        wait[nw++] = x->lock.wait_time_in_cycles;
        e->tids[e->nthreads++] = x->lock.thread_id;
        e->cpus[e->ncpus++] = x->cpu;
    }
    e->hold_p50 = nh ? rank(hold, nh, 500) : ETL_SPIN_UNKNOWN; /* no value: no percentile */
    e->hold_p99 = nh ? rank(hold, nh, 990) : ETL_SPIN_UNKNOWN;
    e->wait_p50 = nw ? rank(wait, nw, 500) : ETL_SPIN_UNKNOWN;
    e->wait_p99 = nw ? rank(wait, nw, 990) : ETL_SPIN_UNKNOWN;
    e->nthreads = uniq(e->tids, e->nthreads);
    e->ncpus = uniq(e->cpus, e->ncpus);
    free(hold);
    free(wait);
}

static void check_group(const char *what, const truth *t, const etl_clock *clk, const etl_spinlock_info *p,
                        int64_t v0, int64_t v1, unsigned kind, const etl_spin_group *g)
{
    expv e;
    expect(t, clk, p, v0, v1, kind, g, &e);
    const etl_spin_acc *a = &g->a;
    if (a->events != e.events || a->cls[0] != e.cls[0] || a->cls[1] != e.cls[1] || a->cls[2] != e.cls[2] ||
        a->cls[3] != e.cls[3] || a->est_acq != e.est || a->est_contended != e.est_cont || a->w_wait != e.w_wait ||
        a->w_wait_contended != e.w_wait_c || a->w_spins != e.w_spins || a->w_hold != e.w_hold ||
        a->w_nonirq != e.w_nonirq || a->irq != e.irq || a->contended != e.contended)
        fail_msg("%s: group %u %llx/%llx/%u: events %llu (L%llu C%llu U%llu X%llu) est %llu/%llu wait %llu spins %llu "
                 "hold %llu/%llu irq %llu; truth %llu (L%llu C%llu U%llu X%llu) est %llu/%llu wait %llu spins %llu hold "
                 "%llu/%llu irq %llu",
                 what, kind, (unsigned long long)g->lock, (unsigned long long)g->caller, g->mode,
                 (unsigned long long)a->events, (unsigned long long)a->cls[0], (unsigned long long)a->cls[1],
                 (unsigned long long)a->cls[2], (unsigned long long)a->cls[3], (unsigned long long)a->est_acq,
                 (unsigned long long)a->est_contended, (unsigned long long)a->w_wait, (unsigned long long)a->w_spins,
                 (unsigned long long)a->w_hold, (unsigned long long)a->w_nonirq, (unsigned long long)a->irq,
                 (unsigned long long)e.events, (unsigned long long)e.cls[0], (unsigned long long)e.cls[1],
                 (unsigned long long)e.cls[2], (unsigned long long)e.cls[3], (unsigned long long)e.est,
                 (unsigned long long)e.est_cont, (unsigned long long)e.w_wait, (unsigned long long)e.w_spins,
                 (unsigned long long)e.w_hold, (unsigned long long)e.w_nonirq, (unsigned long long)e.irq);
    assert_int_equal(a->max_hold, e.max_hold);
    assert_int_equal(a->max_wait, e.max_wait);
    assert_int_equal(a->max_spins, e.max_spins);
    assert_int_equal(g->hold_p50, e.hold_p50);
    assert_int_equal(g->hold_p99, e.hold_p99);
    assert_int_equal(g->wait_p50, e.wait_p50);
    assert_int_equal(g->wait_p99, e.wait_p99);
    assert_int_equal(g->mean_wait, e.est ? near(e.w_wait, e.est) : 0);
    assert_int_equal(g->mean_hold, e.w_nonirq ? near(e.w_hold, e.w_nonirq) : 0);
    assert_int_equal(g->nthreads, e.nthreads);
    assert_int_equal(g->ncpus, e.ncpus);
    for (size_t i = 0; i < e.nthreads; i++) assert_int_equal(g->tids[i], e.tids[i]);
    for (size_t i = 0; i < e.ncpus; i++) assert_int_equal(g->cpus[i], e.cpus[i]);
    assert_false(a->saturated);
    free(e.tids);
    free(e.cpus);
}

/* The number of distinct groups of a kind among the sampled events in the window. */
static size_t ngroups(const truth *t, const etl_clock *clk, int64_t v0, int64_t v1, unsigned kind)
{
    uint64_t *k = malloc((t->nsl + 1) * sizeof *k);
    size_t n = 0;
    for (size_t i = 0; i < t->nsl; i++) {
        const etl_synth_spinlock *x = &t->sl[i];
        if (!x->sampled || !in_window(clk, x->time, v0, v1)) continue;
        k[n++] = kind == G_LOCK     ? x->lock.spin_lock_address
                 : kind == G_CALLER ? x->lock.caller_address
                 : kind == G_PAIR   ? x->lock.spin_lock_address * 0x9E3779B97F4A7C15ull ^ x->lock.caller_address
                                    : x->lock.acquire_mode;
    }
    n = uniq(k, n);
    free(k);
    return n;
}

static void check_spinlocks(const char *what, const truth *t, const result *res, int64_t v0, int64_t v1)
{
    const etl_clock *clk = etl_reader_clock(res->r);
    const etl_spinlock_info *p = &t->meta.spinlock_info;
    const etl_spinlocks *s = &res->s;
    if (v1 <= v0) v1 = s->o.v1;
    /* The parameters the library used are the ones the simulator sampled with. */
    assert_int_equal(s->o.params.spin_lock_spin_threshold, p->spin_lock_spin_threshold);
    assert_int_equal(s->o.params.spin_lock_acquire_sample_rate, p->spin_lock_acquire_sample_rate);
    assert_int_equal(s->o.params.spin_lock_contention_sample_rate, p->spin_lock_contention_sample_rate);
    assert_int_equal(s->o.params.spin_lock_hold_threshold, p->spin_lock_hold_threshold);
    assert_int_equal(s->nlocks, ngroups(t, clk, v0, v1, G_LOCK));
    assert_int_equal(s->ncallers, ngroups(t, clk, v0, v1, G_CALLER));
    assert_int_equal(s->npairs, ngroups(t, clk, v0, v1, G_PAIR));
    assert_int_equal(s->nmodes, ngroups(t, clk, v0, v1, G_MODE));
    assert_true(s->nlocks > 3);
    for (size_t i = 0; i < s->nlocks; i++) check_group(what, t, clk, p, v0, v1, G_LOCK, &s->locks[i]);
    for (size_t i = 0; i < s->ncallers; i++) check_group(what, t, clk, p, v0, v1, G_CALLER, &s->callers[i]);
    for (size_t i = 0; i < s->npairs; i++) check_group(what, t, clk, p, v0, v1, G_PAIR, &s->pairs[i]);
    for (size_t i = 0; i < s->nmodes; i++) check_group(what, t, clk, p, v0, v1, G_MODE, &s->modes[i]);
    check_group(what, t, clk, p, v0, v1, G_TOTAL, &s->total);
    /* Ordered by Σw·wait, then Σw·hold, descending. */
    for (size_t i = 1; i < s->nlocks; i++)
        assert_true(s->locks[i - 1].a.w_wait > s->locks[i].a.w_wait ||
                    (s->locks[i - 1].a.w_wait == s->locks[i].a.w_wait &&
                     s->locks[i - 1].a.w_hold >= s->locks[i].a.w_hold));
    /* The true counts, every release sampled or not, lie within the stated bounds. */
    uint64_t all = 0, cont = 0, unc = 0;
    for (size_t i = 0; i < t->nsl; i++) {
        if (!in_window(clk, t->sl[i].time, v0, v1)) continue;
        all++;
        if (t->sl[i].lock.spin_count) cont++;
        else unc++;
    }
    const etl_spin_bounds *b[] = {&s->acquisitions, &s->uncontended, &s->contended};
    uint64_t truev[] = {all, unc, cont};
    for (unsigned k = 0; k < 3; k++) {
        if (truev[k] < b[k]->lo || (b[k]->hi_known && truev[k] > b[k]->hi))
            fail_msg("%s: bound %u: true %llu outside %llu..%llu%s (estimate %llu)", what, k,
                     (unsigned long long)truev[k], (unsigned long long)b[k]->lo, (unsigned long long)b[k]->hi,
                     b[k]->hi_known ? "" : " (no upper)", (unsigned long long)b[k]->est);
    }
    assert_int_equal(s->acquisitions.est, s->total.a.est_acq);
    assert_int_equal(s->contended.est, s->total.a.est_contended);
    assert_int_equal(s->acquisitions.hi_known, p->spin_lock_spin_threshold <= 1);
    /* % acquisition from cycles(W) = |W| ns * MHz / 1000 over every CPU, to the nearest 10^-4 %. */
    __int128 mcyc = (__int128)(v1 - v0) * (t->meta.cycles_per_sec / 1000000) * t->meta.ncpu;
    assert_int_equal(s->total.acq_pct, (int64_t)(((__int128)s->total.a.w_wait * 1000000000 + mcyc / 2) / mcyc));
    print_message("%s: %llu events, %zu locks, %zu callers; acquisitions %llu in %llu..%llu (estimate %llu)\n", what,
                  (unsigned long long)s->total.a.events, s->nlocks, s->ncallers, (unsigned long long)all,
                  (unsigned long long)s->acquisitions.lo, (unsigned long long)s->acquisitions.hi,
                  (unsigned long long)s->acquisitions.est);
}

static etl_spinlock_info params_of(const truth *t)
{
    return t->meta.spinlock_info;
}

static void test_spinlocks_defaults(void **state)
{
    (void)state;
    static const char *const flav[][8] = {
        {"seed=11", "cpus=4", "duration=0.5", "lock-rate=40000", "lock-contention=8", NULL},
        {"seed=12", "cpus=3", "duration=0.4", "lock-rate=30000", "pointer-size=32", "clock=cycles", "cswitch=compact",
         NULL},
        {"seed=13", "cpus=8", "duration=0.3", "lock-rate=20000", "clock=system", "compress", NULL},
    };
    for (size_t f = 0; f < sizeof flav / sizeof flav[0]; f++) {
        char path[512], what[32];
        st_tmp(path, sizeof path, "rx", "sl.etl");
        snprintf(what, sizeof what, "defaults-%zu", f);
        truth t;
        synth(path, flav[f], &t);
        etl_spinlock_info p = params_of(&t);
        etl_spinlock_info d = etl_spinlock_info_defaults();
        assert_int_equal(p.spin_lock_acquire_sample_rate, d.spin_lock_acquire_sample_rate);
        assert_true(t.end.spinlocks_sampled > 100);
        etl_pmc_options po;
        etl_pmc_options_init(&po);
        result res;
        read_back(path, &p, 0, 0, &po, &res);
        assert_int_equal(res.s.events, t.end.spinlocks_sampled);
        check_spinlocks(what, &t, &res, 0, 0);
        assert_true(res.s.total.a.cls[ETL_SPIN_U] > 0);
        assert_true(res.s.total.a.cls[ETL_SPIN_C] > 0);
        assert_int_equal(res.s.total.a.cls[ETL_SPIN_X], 0);
        /* A window in the middle: only the events released in it. */
        int64_t end = res.s.o.v1;
        result_free(&res);
        read_back(path, &p, end / 4, end / 2, &po, &res);
        check_spinlocks(what, &t, &res, end / 4, end / 2);
        assert_true(res.s.outside > 0);
        result_free(&res);
        st_free(&t);
        unlink(path);
    }
}

/* A selection of threads: the TIDs whose remainder by 4 is r. */
static int select_mod4(void *ctx, const etl_sched_event *ev)
{
    return ev->u.spinlock.thread_id / 4 % 4 == *(const unsigned *)ctx;
}

/*
 * The bounds of a selection of threads (`spinlocks --process/--thread`, explore10 A): each CPU's
 * sampling counter counts every thread's acquisitions, so they come from every event; the
 * selection's true counts (its releases, sampled or not) lie within them, and its figures are its
 * events' alone. Bounds from the selection's events alone left the truth outside (contended with
 * M = 7 here: 4 of 33 processes outside).
 */
static void test_spinlocks_selection(void **state)
{
    (void)state;
    static const char *const opts[] = {"seed=8", "duration=0.6", "lock-rate=50000", "lock-contention=20",
                                       "contention-rate=7", "hold-threshold=0", NULL};
    char path[512];
    st_tmp(path, sizeof path, "rx", "sls.etl");
    truth t;
    synth(path, opts, &t);
    etl_spinlock_info p = params_of(&t);
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    unsigned outside = 0;
    for (unsigned r = 0; r < 4; r++) {
        g_select = select_mod4;
        g_select_ctx = &r;
        result res;
        read_back(path, &p, 0, 0, &po, &res);
        g_select = NULL;
        const etl_spinlocks *s = &res.s;
        uint64_t all = 0, cont = 0, unc = 0, seen = 0;
        for (size_t i = 0; i < t.nsl; i++) {
            const etl_synth_spinlock *x = &t.sl[i];
            if (x->lock.thread_id / 4 % 4 != r) continue;
            all++;
            if (x->lock.spin_count) cont++;
            else unc++;
            seen += x->sampled;
        }
        assert_int_equal(s->total.a.events, seen);
        assert_int_equal(s->filtered + seen, s->events);
        assert_true(s->filtered > 0);
        assert_true(s->bounds_selection);
        const etl_spin_bounds *b[] = {&s->acquisitions, &s->uncontended, &s->contended};
        uint64_t truev[] = {all, unc, cont};
        for (unsigned k = 0; k < 3; k++) {
            if (truev[k] < b[k]->lo || (b[k]->hi_known && truev[k] > b[k]->hi)) {
                print_error("selection %u: bound %u: true %llu outside %llu..%llu (estimate %llu)\n", r, k,
                            (unsigned long long)truev[k], (unsigned long long)b[k]->lo, (unsigned long long)b[k]->hi,
                            (unsigned long long)b[k]->est);
                outside++;
            }
        }
        assert_int_equal(s->acquisitions.est, s->total.a.est_acq);
        result_free(&res);
    }
    assert_int_equal(outside, 0);
    st_free(&t);
    unlink(path);
}

/* Parameters other than the defaults, set in the simulator and given to the analysis. */
static void test_spinlocks_params(void **state)
{
    (void)state;
    static const char *const opts[] = {"seed=21", "cpus=4", "duration=0.5", "lock-rate=40000", "lock-contention=20",
                                       "spin-threshold=4", "acquire-rate=2000", "contention-rate=3",
                                       "hold-threshold=1500000", NULL};
    char path[512];
    st_tmp(path, sizeof path, "rx", "slp.etl");
    truth t;
    synth(path, opts, &t);
    etl_spinlock_info p = params_of(&t);
    assert_int_equal(p.spin_lock_spin_threshold, 4);
    assert_int_equal(p.spin_lock_acquire_sample_rate, 2000);
    assert_int_equal(p.spin_lock_contention_sample_rate, 3);
    assert_int_equal(p.spin_lock_hold_threshold, 1500000);
    assert_true(p.has_hold_threshold);
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    result res;
    read_back(path, &p, 0, 0, &po, &res);
    check_spinlocks("params", &t, &res, 0, 0);
    assert_false(res.s.acquisitions.hi_known); /* S > 1: contentions with fewer spins are invisible */
    assert_true(res.s.total.a.cls[ETL_SPIN_L] > 0);
    result_free(&res);
    /* The same trace read with the defaults: weights differ, so do the estimates (and the classes). */
    etl_spinlock_info d = etl_spinlock_info_defaults();
    d.has_hold_threshold = true;
    read_back(path, &d, 0, 0, &po, &res);
    uint64_t w;
    uint64_t est = 0;
    for (size_t i = 0; i < t.nsl; i++) {
        if (!t.sl[i].sampled) continue;
        klass(&d, &t.sl[i], &w);
        est += w;
    }
    assert_int_equal(res.s.total.a.est_acq, est);
    result_free(&res);
    st_free(&t);
    unlink(path);
}

/* ---- PMC --------------------------------------------------------------------------------------- */

typedef struct pexp {
    uint32_t tid;
    uint64_t slices, d[ETL_PMC_MAX];
    int64_t ns;
} pexp;

static pexp *pfind(pexp **v, size_t *n, uint32_t tid)
{
    for (size_t i = 0; i < *n; i++)
        if ((*v)[i].tid == tid) return &(*v)[i];
    *v = realloc(*v, (*n + 1) * sizeof **v);
    memset(&(*v)[*n], 0, sizeof **v);
    (*v)[*n].tid = tid;
    return &(*v)[(*n)++];
}

static void check_pmc(const char *what, const truth *t, const result *res, int64_t v0, int64_t v1)
{
    const etl_clock *clk = etl_reader_clock(res->r);
    const etl_pmc *p = &res->p;
    unsigned n = t->meta.pmc_count;
    if (v1 <= v0) v1 = p->o.v1;
    assert_int_equal(p->counters, n);
    assert_int_equal(p->pmc_counter_reset, 0);
    pexp *e = NULL;
    size_t ne = 0;
    pexp total;
    memset(&total, 0, sizeof total);
    for (unsigned c = 0; c < t->meta.ncpu; c++) {
        const etl_synth_switch *prev = NULL;
        pexp cpu;
        memset(&cpu, 0, sizeof cpu);
        for (size_t i = 0; i < t->nsw; i++) {
            const etl_synth_switch *s = &t->sw[i];
            if (s->cpu != c) continue;
            if (prev && in_window(clk, prev->time, v0, v1)) {
                pexp *x = pfind(&e, &ne, s->old_tid);
                int64_t ns = etl_clock_ns(clk, s->time) - etl_clock_ns(clk, prev->time);
                x->slices++;
                x->ns += ns;
                cpu.slices++;
                cpu.ns += ns;
                for (unsigned k = 0; k < n; k++) {
                    x->d[k] += s->pmc[k] - prev->pmc[k];
                    cpu.d[k] += s->pmc[k] - prev->pmc[k];
                }
            }
            prev = s;
        }
        assert_true(c < p->ncpus);
        assert_int_equal(p->cpus[c].slices, cpu.slices);
        assert_int_equal(p->cpus[c].cpu_ns, cpu.ns);
        for (unsigned k = 0; k < n; k++) assert_int_equal(p->cpus[c].delta[k], cpu.d[k]);
        total.slices += cpu.slices;
        for (unsigned k = 0; k < n; k++) total.d[k] += cpu.d[k];
    }
    assert_int_equal(p->total.slices, total.slices);
    for (unsigned k = 0; k < n; k++) assert_int_equal(p->total.delta[k], total.d[k]);
    /* Per TID (a reused TID's instances summed); the idle thread is TID 0. */
    pexp *g = NULL;
    size_t ng = 0;
    for (size_t i = 0; i < p->nthreads; i++) {
        const etl_sched_thread *st = etl_sched_thread_at(res->m, p->threads[i].thread);
        pexp *x = pfind(&g, &ng, st ? st->tid : 0);
        x->slices += p->threads[i].s.slices;
        x->ns += p->threads[i].s.cpu_ns;
        for (unsigned k = 0; k < n; k++) x->d[k] += p->threads[i].s.delta[k];
        if (i) { /* sorted by cycles, descending */
            assert_true(p->threads[i - 1].s.delta[0] >= p->threads[i].s.delta[0]);
        }
    }
    assert_int_equal(ng, ne);
    for (size_t i = 0; i < ne; i++) {
        pexp *x = pfind(&g, &ng, e[i].tid);
        if (x->slices != e[i].slices || x->ns != e[i].ns || memcmp(x->d, e[i].d, sizeof x->d) != 0)
            fail_msg("%s: tid %u: slices %llu ns %lld cycles %llu instructions %llu; truth %llu %lld %llu %llu", what,
                     e[i].tid, (unsigned long long)x->slices, (long long)x->ns, (unsigned long long)x->d[0],
                     (unsigned long long)x->d[1], (unsigned long long)e[i].slices, (long long)e[i].ns,
                     (unsigned long long)e[i].d[0], (unsigned long long)e[i].d[1]);
    }
    /* Processes add up to the total. */
    etl_pmc_sums sum;
    memset(&sum, 0, sizeof sum);
    for (size_t i = 0; i < p->nprocesses; i++) {
        sum.slices += p->processes[i].s.slices;
        for (unsigned k = 0; k < n; k++) sum.delta[k] += p->processes[i].s.delta[k];
    }
    assert_int_equal(sum.slices, p->total.slices);
    for (unsigned k = 0; k < n; k++) assert_int_equal(sum.delta[k], p->total.delta[k]);
    /* Ratios from the sums. */
    etl_pmc_ratios r;
    for (size_t i = 0; i < p->nthreads; i++) {
        const etl_pmc_sums *s = &p->threads[i].s;
        etl_pmc_ratios_of(p, s, &r);
        if (n >= 2 && s->delta[0]) {
            assert_int_equal(r.ipc_x1000, near((unsigned __int128)s->delta[1] * 1000, s->delta[0]));
            assert_int_equal(r.ghz_x1000, near((unsigned __int128)s->delta[0] * 1000, (uint64_t)s->cpu_ns));
        }
        if (n >= 2 && s->delta[1]) assert_int_equal(r.cpi_x1000, near((unsigned __int128)s->delta[0] * 1000, s->delta[1]));
        if (n >= 3 && s->delta[1])
            assert_int_equal(r.llc_mpki_x1000, near((unsigned __int128)s->delta[2] * 1000000, s->delta[1]));
        if (n < 3) assert_int_equal(r.llc_mpki_x1000, -1);
        if (n >= 4 && s->delta[1])
            assert_int_equal(r.branch_mpki_x1000, near((unsigned __int128)s->delta[3] * 1000000, s->delta[1]));
        assert_int_equal(r.branch_miss_pct_x100, -1); /* no `branches` counter */
    }
    print_message("%s: %zu threads, %llu slices, IPC %lld/1000\n", what, p->nthreads,
                  (unsigned long long)p->total.slices,
                  (long long)(etl_pmc_ratios_of(p, &p->total, &r), r.ipc_x1000));
    free(e);
    free(g);
}

static void test_pmc(void **state)
{
    (void)state;
    static const char *const flav[][8] = {
        {"seed=31", "cpus=4", "duration=0.3", "pmc=4", NULL},
        {"seed=32", "cpus=2", "duration=0.3", "pmc=2", "pointer-size=32", "clock=cycles", "churn=200", NULL},
        {"seed=33", "cpus=6", "duration=0.2", "pmc=4", "clock=system", "compress", NULL},
    };
    for (size_t f = 0; f < sizeof flav / sizeof flav[0]; f++) {
        char path[512], what[32];
        st_tmp(path, sizeof path, "rx", "pmc.etl");
        snprintf(what, sizeof what, "pmc-%zu", f);
        truth t;
        synth(path, flav[f], &t);
        etl_spinlock_info p = params_of(&t);
        etl_pmc_options po;
        etl_pmc_options_init(&po);
        result res;
        read_back(path, &p, 0, 0, &po, &res);
        assert_int_equal(res.p.switches_no_pmc, 0);
        check_pmc(what, &t, &res, 0, 0);
        int64_t end = res.p.o.v1;
        result_free(&res);
        read_back(path, &p, end / 3, end / 2, &po, &res);
        check_pmc(what, &t, &res, end / 3, end / 2);
        result_free(&res);
        st_free(&t);
        unlink(path);
    }
}

/* Compact batches carry no counters: nothing is charged, and the report can say so. */
static void test_pmc_compact(void **state)
{
    (void)state;
    static const char *const opts[] = {"seed=41", "duration=0.1", "pmc=4", "cswitch=compact", NULL};
    char path[512];
    st_tmp(path, sizeof path, "rx", "pmcc.etl");
    truth t;
    synth(path, opts, &t);
    etl_spinlock_info p = params_of(&t);
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    result res;
    read_back(path, &p, 0, 0, &po, &res);
    assert_int_equal(res.p.switches_pmc, 0);
    assert_true(res.p.switches_no_pmc > 0);
    assert_int_equal(res.p.nthreads, 0);
    assert_int_equal(res.p.total.slices, 0);
    result_free(&res);
    st_free(&t);
    unlink(path);
}

/* Counter names and a counter that goes backwards. */
/* One row by hand on CPU cpu: the slice [si, nso) between two switches with counters in and out. */
static void pmc_row(etl_pmc *p, uint32_t cpu, int64_t si, int64_t nso, const uint64_t *in, const uint64_t *out,
                    unsigned n)
{
    etl_cswitch a, b;
    memset(&a, 0, sizeof a);
    a.known = ETL_CSW_PMC;
    a.pmc_count = (uint8_t)n;
    b = a;
    memcpy(a.pmc, in, n * sizeof *in);
    memcpy(b.pmc, out, n * sizeof *out);
    etl_sched_row row;
    memset(&row, 0, sizeof row);
    row.new_thread = ETL_SCHED_IDLE;
    row.cpu = cpu;
    row.in = &a;
    row.out = &b;
    row.si = si;
    row.nso = nso;
    etl_pmc_add(p, &row);
}

/*
 * A counter jump no CPU can make (explore10 B: one flipped bit gave 4484 GHz, exit 0) drops the slice
 * and is counted with where the first lies: cycles past ETL_PMC_MAX_HZ over the slice (plus
 * ETL_PMC_SLACK_NS), instructions past ETL_PMC_MAX_PER_CYCLE a cycle of it; slots of other kinds are
 * not checked. At the limit a slice still counts.
 */
static void test_pmc_implausible(void **state)
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
    /* 1 ms at 3 GHz: counted. */
    uint64_t a[] = {1000, 1000, 0}, b[] = {3001000, 4001000, 1ull << 60};
    pmc_row(&p, 0, 0, 1000000, a, b, 3);
    /* Cycles exactly at the limit: (1 ms + 10 us) at 10 GHz = 10,100,000: counted. */
    uint64_t c[] = {b[0] + 10100000, b[1], b[2]};
    pmc_row(&p, 0, 1000000, 2000000, b, c, 3);
    /* One cycle more: dropped. */
    uint64_t d[] = {c[0] + 10100001, c[1], c[2]};
    pmc_row(&p, 1, 2000000, 3000000, c, d, 3);
    /* Bit 40 of the cycles on a 4.6 us slice (4484 GHz): dropped, and it is the first by time. */
    uint64_t e[] = {a[0] + (1ull << 40), a[1], a[2]};
    pmc_row(&p, 2, 500, 5100, a, e, 3);
    /* Instructions past 16 a cycle of the limit: dropped; at it: counted. */
    uint64_t f[] = {a[0], a[1] + 16 * 10100000ull + 1, a[2]}, g[] = {a[0], a[1] + 16 * 10100000ull, a[2]};
    pmc_row(&p, 3, 3000000, 4000000, a, f, 3);
    pmc_row(&p, 3, 4000000, 5000000, a, g, 3);
    assert_int_equal(etl_pmc_finish(&p, 6000000), ETL_OK);
    assert_int_equal(p.pmc_implausible, 3);
    assert_int_equal(p.pmc_counter_reset, 0);
    assert_int_equal(p.total.slices, 3);
    assert_int_equal(p.implausible_first.cpu, 2);
    assert_int_equal(p.implausible_first.si, 500);
    assert_int_equal(p.implausible_first.nso, 5100);
    assert_int_equal(p.implausible_first.slot, 0);
    assert_int_equal(p.implausible_first.delta, 1ull << 40);
    assert_int_equal(p.total.delta[0], 3000000 + 10100000);
    etl_pmc_free(&p);
}

/*
 * A slice of no known thread (the model's unknown slice across a lost buffer, explore10 D: 152 ms
 * counted in its CPU's and the total's sums, in no thread's) counts nowhere: the total stays the sum
 * of the threads.
 */
static void test_pmc_unknown_thread(void **state)
{
    (void)state;
    etl_pmc p;
    etl_pmc_options o;
    etl_pmc_options_init(&o);
    assert_int_equal(etl_pmc_init(&p, NULL, &o), ETL_OK);
    uint64_t a[] = {0, 0, 0, 0}, b[] = {3000, 2000, 10, 5};
    pmc_row(&p, 0, 0, 1000, a, b, 4);
    etl_cswitch x, y;
    memset(&x, 0, sizeof x);
    x.known = ETL_CSW_PMC;
    x.pmc_count = 4;
    y = x;
    memcpy(y.pmc, b, sizeof b);
    etl_sched_row row;
    memset(&row, 0, sizeof row);
    row.new_thread = ETL_SCHED_NONE;
    row.in = &x;
    row.out = &y;
    row.si = 1000;
    row.nso = 2000;
    etl_pmc_add(&p, &row);
    assert_int_equal(etl_pmc_finish(&p, 3000), ETL_OK);
    assert_int_equal(p.slices_unknown, 1);
    assert_int_equal(p.total.slices, 1);
    assert_int_equal(p.total.cpu_ns, 1000);
    assert_int_equal(p.cpus[0].slices, 1);
    assert_int_equal(p.nthreads, 1);
    assert_int_equal(p.threads[0].s.delta[0], p.total.delta[0]);
    etl_pmc_free(&p);
}

static void test_pmc_names_reset(void **state)
{
    (void)state;
    assert_int_equal(etl_pmc_kind_from_name("Cycles"), ETL_PMC_CYCLES);
    assert_int_equal(etl_pmc_kind_from_name("instructions"), ETL_PMC_INSTRUCTIONS);
    assert_int_equal(etl_pmc_kind_from_name("llc"), ETL_PMC_LLC_MISSES);
    assert_int_equal(etl_pmc_kind_from_name("branch"), ETL_PMC_BRANCH_MISSES);
    assert_int_equal(etl_pmc_kind_from_name("branches"), ETL_PMC_BRANCHES);
    assert_int_equal(etl_pmc_kind_from_name("l2"), ETL_PMC_OTHER);
    /* Rows by hand: a slice whose counter went backwards is dropped whole. */
    etl_pmc p;
    etl_pmc_options o;
    etl_pmc_options_init(&o);
    o.nkinds = 4;
    o.kinds[0] = ETL_PMC_INSTRUCTIONS;
    o.kinds[1] = ETL_PMC_CYCLES;
    o.kinds[2] = ETL_PMC_BRANCHES;
    o.kinds[3] = ETL_PMC_BRANCH_MISSES;
    assert_int_equal(etl_pmc_init(&p, NULL, &o), ETL_OK);
    etl_cswitch a, b, c;
    memset(&a, 0, sizeof a);
    a.known = ETL_CSW_PMC;
    a.pmc_count = 4;
    b = c = a;
    uint64_t va[] = {1000, 2000, 100, 10}, vb[] = {3000, 3000, 300, 15}, vc[] = {2500, 4000, 400, 20};
    memcpy(a.pmc, va, sizeof va);
    memcpy(b.pmc, vb, sizeof vb);
    memcpy(c.pmc, vc, sizeof vc);
    etl_sched_row row;
    memset(&row, 0, sizeof row);
    row.new_thread = ETL_SCHED_IDLE;
    row.in = &a;
    row.out = &b;
    row.si = 0;
    row.nso = 1000;
    etl_pmc_add(&p, &row);
    row.in = &b;
    row.out = &c;
    row.si = 1000;
    row.nso = 2000;
    etl_pmc_add(&p, &row);
    assert_int_equal(etl_pmc_finish(&p, 5000), ETL_OK);
    assert_int_equal(p.pmc_counter_reset, 1);
    assert_int_equal(p.total.slices, 1);
    assert_int_equal(p.nthreads, 1);
    assert_int_equal(p.threads[0].thread, ETL_SCHED_IDLE);
    etl_pmc_ratios r;
    etl_pmc_ratios_of(&p, &p.total, &r);
    assert_int_equal(r.ipc_x1000, 2000);           /* 2000 instructions / 1000 cycles */
    assert_int_equal(r.branch_miss_pct_x100, 250); /* 5 / 200 = 2.50 % */
    assert_int_equal(r.ghz_x1000, 1000);           /* 1000 cycles in 1000 ns */
    assert_int_equal(r.llc_mpki_x1000, -1);
    /* Rounded to the nearest, never cut: 2 instructions in 3 cycles is an IPC of 0.667, a CPI of 1.500. */
    etl_pmc_sums s3 = p.total;
    s3.delta[0] = 2, s3.delta[1] = 3, s3.delta[2] = 3, s3.delta[3] = 2, s3.cpu_ns = 3000;
    etl_pmc_ratios_of(&p, &s3, &r);
    assert_int_equal(r.ipc_x1000, 667);
    assert_int_equal(r.cpi_x1000, 1500);
    assert_int_equal(r.branch_miss_pct_x100, 6667); /* 66.67 % */
    assert_int_equal(r.ghz_x1000, 1);               /* 0.001 GHz: 3 cycles in 3000 ns */
    /* A cycles counter that did not count (explore10 C: CPI 0.000 and GHz 0.000 beside IPC "-"): no IPC, CPI or
     * GHz; the others stand. */
    s3.delta[1] = 0;
    etl_pmc_ratios_of(&p, &s3, &r);
    assert_int_equal(r.ipc_x1000, -1);
    assert_int_equal(r.cpi_x1000, -1);
    assert_int_equal(r.ghz_x1000, -1);
    assert_int_equal(r.branch_miss_pct_x100, 6667);
    etl_pmc_free(&p);
}

/* The class rule on hand-made events, at the edges. */
static void test_classify(void **state)
{
    (void)state;
    etl_spinlock_info p = {4, 2000, 3, 1000000, true};
    etl_spinlock e;
    memset(&e, 0, sizeof e);
    uint64_t w;
    e.acquire_time = 10;
    e.release_time = 10 + 1000000; /* exactly H: not L (strict ">") */
    assert_int_equal(etl_spin_classify(&p, &e, &w), ETL_SPIN_U);
    assert_int_equal(w, 2000);
    e.release_time++;
    assert_int_equal(etl_spin_classify(&p, &e, &w), ETL_SPIN_L);
    assert_int_equal(w, 1);
    e.release_time = 20;
    e.spin_count = 3;
    assert_int_equal(etl_spin_classify(&p, &e, &w), ETL_SPIN_X);
    e.spin_count = 4;
    assert_int_equal(etl_spin_classify(&p, &e, &w), ETL_SPIN_C);
    assert_int_equal(w, 3);
    p.has_hold_threshold = false; /* before 6.3: no hold rule */
    e.release_time = 10 + 5000000;
    assert_int_equal(etl_spin_classify(&p, &e, &w), ETL_SPIN_C);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_classify),
        cmocka_unit_test(test_pmc_names_reset),
        cmocka_unit_test(test_pmc_implausible),
        cmocka_unit_test(test_pmc_unknown_thread),
        cmocka_unit_test(test_spinlocks_defaults),
        cmocka_unit_test(test_spinlocks_params),
        cmocka_unit_test(test_spinlocks_selection),
        cmocka_unit_test(test_pmc),
        cmocka_unit_test(test_pmc_compact),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

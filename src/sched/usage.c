/*
 * usage.c - CPU time, switch counts, ready latency and waits from the model's
 * rows (spec analyses.md §2), clipped to a window.
 *
 * Accumulators are indexed by thread instance (dense indices), so adding a row
 * is a few additions; ready-latency values are kept per thread, 4 bytes each, in
 * two vectors (readied by a ReadyThread, and the others), because exact
 * nearest-rank percentiles need them all (latency.h selects ranks without copying).
 */
#include <stdlib.h>
#include <string.h>
#include "base/sort.h"
#include "etlkit/usage.h"
#include "base/idmap.h"
#include "base/sat.h"
#include "sched/latency.h"
#include "sched/usage_slice.h"
#include "sched/latspill.h"
#include "base/diag.h"
#include "base/spool.h"
#include "base/opts.h"

/* The first failure is kept: a value that could not be counted makes every answer unknown. */
static void usage_fail(struct etl_usage_priv *p, etl_status st)
{
    if (p->failed != ETL_OK || st == ETL_OK) return;
    etl_status why = p->spill && st != ETL_E_NOMEM ? etl_spool_diag(p->spill->sp, &p->diag) : ETL_OK;
    if (why != ETL_OK) st = why;
    else etl_diag_set(&p->diag, st, 0, "%s", etl_status_str(st));
    p->failed = st;
}

uint64_t etl_usage_ready_lost(const etl_usage *u)
{
    if (!u->priv) return 0;
    /*
     * Without a ReadyThread in the trace a switch-in's Ready is known only from a preempted previous switch-out:
     * what the loss took is that switch-out (P unknown). One whose P is known (waiting) lacks its Ready for want of
     * ReadyThread events, lost records or not.
     */
    if (u->model && !etl_sched_ready_events(u->model)) return u->priv->lost_prev;
    return u->priv->lost;
}

const etl_diag *etl_usage_diag(const etl_usage *u)
{
    return u->priv ? &u->priv->diag : NULL;
}


/* floor(t / len), len > 0: intervals are numbered from the trace start, times before it too. */
static int64_t interval_of(int64_t t, int64_t len)
{
    int64_t k = t / len;
    return t % len < 0 ? k - 1 : k;
}

etl_status etl_usage_init(etl_usage *u, const etl_sched *model, const etl_usage_options *o)
{
    memset(u, 0, sizeof *u);
    u->model = model;
    etl_opts_take(&u->o, sizeof u->o, o);
    /* The histogram's edges must ascend: others would count into the wrong bins with ETL_OK */
    for (uint32_t b = 1; u->o.ready_hist_lo && b < u->o.ready_hist_bins; b++)
        if (u->o.ready_hist_lo[b] <= u->o.ready_hist_lo[b - 1]) return ETL_E_INVALID_ARG;
    if (!u->o.longest) u->o.longest = 10;
    u->bucket_stride = model && etl_sched_cpu_count(model) ? etl_sched_cpu_count(model) : 1;
    u->priv = calloc(1, sizeof *u->priv);
    u->longest_waits = calloc(u->o.longest, sizeof *u->longest_waits);
    u->longest_ready = calloc(u->o.longest, sizeof *u->longest_ready);
    if (u->o.ready_hist_bins && !u->o.ready_hist_lo) u->o.ready_hist_bins = 0;
    if (u->o.ready_hist_bins) u->ready_hist = calloc(u->o.ready_hist_bins, sizeof *u->ready_hist);
    if (!u->priv || !u->longest_waits || !u->longest_ready || (u->o.ready_hist_bins && !u->ready_hist)) {
        etl_usage_free(u);
        return ETL_E_NOMEM;
    }
    etl_idmap_init(&u->priv->bucket_map);
    if (u->o.interval_ns > 0) u->priv->bucket_k0 = interval_of(u->o.v0, u->o.interval_ns);
    return ETL_OK;
}

etl_status etl_usage_select(etl_usage *u, etl_usage_select_fn select, void *ctx)
{
    if (!u || !u->priv) return ETL_E_INVALID_ARG; /* not initialised */
    /* A selection's intervals would read as the machine's busy time: not asked together. */
    if (u->o.interval_ns > 0 && select) return ETL_E_INVALID_ARG;
    u->priv->select = select;
    u->priv->select_ctx = ctx;
    return ETL_OK;
}

etl_usage_thread *etl_usage_grow_thread(etl_usage *u, uint32_t i)
{
    struct etl_usage_priv *p = u->priv;
    if (i >= p->cap) {
        /* Grown by doubling, but only seen[] is written now: untouched entries take no memory. */
        size_t cap = p->cap ? p->cap : 256;
        while (cap <= i) cap *= 2;
        etl_usage_thread *t = realloc(p->t, cap * sizeof *t);
        if (t) p->t = t;
        uint8_t *s = realloc(p->seen, cap);
        if (s) p->seen = s;
        if (!t || !s) goto oom;
        if (!u->o.no_latency) { /* CPU time alone keeps no values */
            lat_vec *w = realloc(p->woken, cap * sizeof *w);
            if (w) p->woken = w;
            lat_vec *o = realloc(p->other, cap * sizeof *o);
            if (o) p->other = o;
            if (!w || !o) goto oom;
        }
        if (p->spilled) {
            uint32_t *c = realloc(p->spilled, 2 * cap * sizeof *c);
            if (!c) goto oom;
            memset(c + 2 * p->cap, 0, 2 * (cap - p->cap) * sizeof *c);
            p->spilled = c;
        }
        memset(s + p->cap, 0, cap - p->cap);
        p->cap = cap;
    }
    if (!p->seen[i]) { /* first row of thread i: its entries start now */
        etl_usage_thread *t = &p->t[i];
        memset(t, 0, sizeof *t);
        t->thread = i;
        t->first_ns = t->last_ns = -1;
        if (!u->o.no_latency) {
            memset(&p->woken[i], 0, sizeof p->woken[i]);
            memset(&p->other[i], 0, sizeof p->other[i]);
        }
        p->seen[i] = 1;
    }
    return &p->t[i];
oom:
    usage_fail(p, ETL_E_NOMEM);
    return NULL;
}

etl_usage_cpu *etl_usage_grow_cpu(etl_usage *u, unsigned c)
{
    if (c >= u->ncpus) {
        etl_usage_cpu *p = realloc(u->cpus, (c + 1u) * sizeof *p);
        if (!p) {
            usage_fail(u->priv, ETL_E_NOMEM);
            return NULL;
        }
        memset(p + u->ncpus, 0, (c + 1u - u->ncpus) * sizeof *p);
        u->cpus = p;
        u->ncpus = c + 1u;
    }
    return &u->cpus[c];
}

/* Keeps the n longest, descending; ties by start, CPU, TID. */
static bool longer(const etl_usage_interval *a, const etl_usage_interval *b)
{
    if (a->dur_ns != b->dur_ns) return a->dur_ns > b->dur_ns;
    if (a->start_ns != b->start_ns) return a->start_ns < b->start_ns;
    if (a->cpu != b->cpu) return a->cpu < b->cpu;
    return a->tid < b->tid;
}

static void keep_longest(etl_usage_interval *top, size_t *n, size_t cap, const etl_usage_interval *x)
{
    if (*n == cap && !longer(x, &top[cap - 1])) return;
    size_t i = *n < cap ? (*n)++ : cap - 1;
    while (i > 0 && longer(x, &top[i - 1])) {
        top[i] = top[i - 1];
        i--;
    }
    top[i] = *x;
}

uint64_t etl_usage_max_intervals(size_t ncpus)
{
    uint64_t by_cells = ETL_USAGE_MAX_CPU_CELLS / (ncpus ? ncpus : 1);
    return by_cells < ETL_USAGE_MAX_BUCKETS ? by_cells : ETL_USAGE_MAX_BUCKETS;
}

/* Intervals kept in memory, by doubling up to the most there may be (zeroed: idle until a slice says not). */
static bool grow_buckets(etl_usage *u, size_t need)
{
    size_t max = (size_t)etl_usage_max_intervals(u->bucket_stride);
    size_t nb = u->nbuckets ? u->nbuckets : 64;
    while (nb < need) nb *= 2;
    if (nb > max) nb = max; /* need is at most max */
    size_t w = u->bucket_stride;
    int64_t *p = realloc(u->bucket_cpu_busy, (nb ? nb : 1) * w * sizeof *p);
    if (p) u->bucket_cpu_busy = p;
    int64_t *q = realloc(u->priv->bucket_cpu_idle, (nb ? nb : 1) * w * sizeof *q);
    if (q) u->priv->bucket_cpu_idle = q;
    if (!p || !q) {
        usage_fail(u->priv, ETL_E_NOMEM);
        return false;
    }
    memset(p + u->nbuckets * w, 0, (nb - u->nbuckets) * w * sizeof *p);
    memset(q + u->nbuckets * w, 0, (nb - u->nbuckets) * w * sizeof *q);
    u->nbuckets = nb;
    return true;
}

/* A cell as spilled: its key's high and low halves, busy ns low and high (spool records are 4-byte aligned). */
#define CELL_WORDS 4u
/* Cells a spool record: 32 KiB. */
#define CELL_BLOCK 2048u

/* The spill of cells failed: why (its temporary file, or memory). */
static void cells_failed(struct etl_usage_priv *p)
{
    if (p->failed != ETL_OK) return;
    etl_status why = p->cells ? etl_spool_diag(p->cells, &p->diag) : ETL_OK;
    if (why == ETL_OK) usage_fail(p, ETL_E_NOMEM);
    else p->failed = why;
}

/*
 * The cells in memory reached their budget (ETL_USAGE_MAX_PROCESS_CELLS): they go to the spool and the map
 * starts again, so a cell may be there more than once (finish adds them up). Which cells
 * finish keeps is only known once the processes are ranked, at the end.
 */
static bool cells_spill(struct etl_usage_priv *p)
{
    if (!p->cells) {
        p->cells = etl_spool_open(1u << 20);
        p->cells_out = malloc(sizeof *p->cells_out);
        if (!p->cells || !p->cells_out) {
            free(p->cells_out);
            p->cells_out = NULL;
            cells_failed(p);
            return false;
        }
        etl_spool_stream_init(p->cells_out, p->cells);
    }
    uint32_t *blk = malloc(CELL_BLOCK * CELL_WORDS * sizeof *blk);
    if (!blk) {
        cells_failed(p);
        return false;
    }
    bool ok = true;
    for (size_t i = 0; ok && i < p->nbv; i += CELL_BLOCK) {
        size_t n = p->nbv - i < CELL_BLOCK ? p->nbv - i : CELL_BLOCK;
        for (size_t k = 0; k < n; k++) {
            uint64_t key = p->bucket_keys[i + k], v = (uint64_t)p->bucket_vals[i + k];
            uint32_t *c = blk + CELL_WORDS * k;
            c[0] = (uint32_t)(key >> 32);
            c[1] = (uint32_t)key;
            c[2] = (uint32_t)v;
            c[3] = (uint32_t)(v >> 32);
        }
        ok = etl_spool_append(p->cells_out, blk, n * CELL_WORDS * sizeof *blk);
    }
    free(blk);
    if (!ok) {
        cells_failed(p);
        return false;
    }
    etl_idmap_clear(&p->bucket_map);
    p->nbv = 0;
    return true;
}

/*
 * A cell's key: bucket << 32 | process + 1, or, for a thread of no process yet (seen before its
 * DCStart, which adopts it later), CELL_BY_THREAD | bucket << 32 | thread: finish counts it to the
 * process the thread has then, as the totals do.
 */
#define CELL_BY_THREAD (1ull << 63)

/*
 * The busy piece [a, b) of a process (a cell key's low half, above) on CPU c, split at the interval
 * edges: the intervals are [t0 + k·len, t0 + (k+1)·len) ∩ W (spec §2), aligned to the trace start,
 * not to the window's, so that an interval has the same numbers with or without --range.
 */
/* The piece of [a, b) in a's interval: its length and bucket (grown to hold it); false when there is none to keep. */
static bool interval_piece(etl_usage *u, int64_t a, int64_t b, int64_t *piece, size_t *bk)
{
    struct etl_usage_priv *pv = u->priv;
    int64_t len = u->o.interval_ns, k0 = pv->bucket_k0;
    int64_t ka = interval_of(a, len);
    /* Past the most intervals there may be, finish refuses the interval: nothing to keep. */
    if (ka < k0 || (uint64_t)ka - (uint64_t)k0 >= etl_usage_max_intervals(u->bucket_stride)) return false;
    int64_t end;
    if (__builtin_mul_overflow(ka + 1, len, &end)) end = INT64_MAX;
    *piece = (b < end ? b : end) - a;
    *bk = (size_t)((uint64_t)ka - (uint64_t)k0);
    return *bk < u->nbuckets || grow_buckets(u, *bk + 1);
}

static void add_bucket(etl_usage *u, uint64_t who, int64_t a, int64_t b, uint16_t c)
{
    struct etl_usage_priv *pv = u->priv;
    int64_t piece;
    size_t bk;
    while (a < b && pv->failed == ETL_OK) {
        if (!interval_piece(u, a, b, &piece, &bk)) return;
        if (c < u->bucket_stride) add_sat(&u->bucket_cpu_busy[bk * u->bucket_stride + c], piece);
        uint64_t key = (uint64_t)bk << 32 | who;
        uint32_t idx = etl_idmap_get(&pv->bucket_map, key);
        if (idx == ETL_IDMAP_EMPTY) {
            uint32_t budget = u->o.interval_cells_budget ? u->o.interval_cells_budget : ETL_USAGE_MAX_PROCESS_CELLS;
            if (pv->nbv >= budget && !cells_spill(pv)) return;
            if (pv->nbv == pv->capbv) {
                size_t cap = pv->capbv ? pv->capbv * 2 : 256;
                int64_t *v = realloc(pv->bucket_vals, cap * sizeof *v);
                if (v) pv->bucket_vals = v;
                uint64_t *kk = realloc(pv->bucket_keys, cap * sizeof *kk);
                if (kk) pv->bucket_keys = kk;
                if (!v || !kk) {
                    usage_fail(pv, ETL_E_NOMEM);
                    return;
                }
                pv->capbv = cap;
            }
            idx = (uint32_t)pv->nbv;
            if (etl_idmap_put(&pv->bucket_map, key, idx) != ETL_OK) {
                usage_fail(pv, ETL_E_NOMEM);
                return;
            }
            pv->nbv++;
            pv->bucket_vals[idx] = 0;
            pv->bucket_keys[idx] = key;
        }
        add_sat(&pv->bucket_vals[idx], piece);
        a += piece;
    }
}

/* Ready values held in memory, by default (4 bytes each). */
#define LATENCY_BUDGET (16u << 20)

static size_t latency_budget(const etl_usage *u)
{
    return u->o.latency_budget ? u->o.latency_budget : LATENCY_BUDGET;
}

/* Past the budget: every value under 32 bits so far goes to the spill, and every one after. */
static void spill_start(etl_usage *u)
{
    struct etl_usage_priv *p = u->priv;
    p->spill = malloc(sizeof *p->spill);
    p->spilled = calloc(2 * (p->cap ? p->cap : 1), sizeof *p->spilled);
    if (!p->spill || !p->spilled || !lat_spill_init(p->spill, latency_budget(u))) {
        free(p->spill);
        free(p->spilled);
        p->spill = NULL;
        p->spilled = NULL;
        p->spill_failed = true;
        return;
    }
    for (size_t i = 0; i < p->cap; i++) {
        if (!p->seen[i]) continue;
        for (int w = 0; w < 2; w++) {
            lat_vec *x = w ? &p->other[i] : &p->woken[i];
            for (size_t k = 0; k < x->n; k++)
                if (!lat_spill_push(p->spill, (uint32_t)i << 1 | !w, x->v[k])) usage_fail(p, ETL_E_IO);
            p->spilled[2 * i + (size_t)w] = (uint32_t)x->n;
            free(x->v); /* the values over 32 bits stay */
            x->v = NULL;
            x->n = x->cap = 0;
        }
    }
    p->lat_values = 0;
}

/* One Ready value of thread x, readied by a ReadyThread (woken) or not. */
static void lat_add(etl_usage *u, uint32_t x, bool woken, uint64_t v)
{
    struct etl_usage_priv *p = u->priv;
    if (p->spill && v < UINT32_MAX) {
        if (!lat_spill_push(p->spill, x << 1 | woken, (uint32_t)v)) usage_fail(p, ETL_E_IO);
        p->spilled[2 * (size_t)x + !woken]++;
        return;
    }
    if (!lat_push(woken ? &p->woken[x] : &p->other[x], v)) usage_fail(p, ETL_E_NOMEM);
    if (v < UINT32_MAX && ++p->lat_values > latency_budget(u) / 4 && !p->spill_failed) spill_start(u);
}

/* The histogram's bin of a Ready value: the last lower edge at or below it (the first bin below them all). */
static void hist_add(etl_usage *u, int64_t v)
{
    const int64_t *lo = u->o.ready_hist_lo;
    uint32_t a = 0, b = u->o.ready_hist_bins - 1;
    while (a < b) {
        uint32_t m = a + (b - a + 1) / 2;
        if (lo[m] <= v) a = m;
        else b = m - 1;
    }
    u->ready_hist[a]++;
}

/* An idle piece [a, b) of CPU c, split at the interval edges as add_bucket's: what is neither busy nor idle is unknown. */
static void add_idle_bucket(etl_usage *u, int64_t a, int64_t b, uint16_t c)
{
    struct etl_usage_priv *pv = u->priv;
    int64_t piece;
    size_t bk;
    while (a < b && pv->failed == ETL_OK && c < u->bucket_stride) {
        if (!interval_piece(u, a, b, &piece, &bk)) return;
        add_sat(&pv->bucket_cpu_idle[bk * u->bucket_stride + c], piece);
        a += piece;
    }
}

int64_t etl_usage_interval_cpu_unknown_ns(const etl_usage *u, size_t b, size_t c)
{
    if (b >= u->nbuckets || c >= u->bucket_stride || !u->priv || !u->priv->bucket_cpu_idle) return 0;
    int64_t s, e, known = u->bucket_cpu_busy[b * u->bucket_stride + c];
    etl_usage_interval_bounds(u, b, &s, &e);
    add_sat(&known, u->priv->bucket_cpu_idle[b * u->bucket_stride + c]);
    return e - s > known ? e - s - known : 0;
}

void etl_usage_add(void *ctx, const etl_sched_row *row)
{
    etl_usage *u = ctx;
    int64_t a, used;
    bool head = (row->flags & ETL_ROW_HEAD) != 0;
    uint32_t x = row->new_thread;
    /* A selection counts its threads' rows alone, in every answer (not the threads table only: explore9 F1). */
    etl_usage_select_fn sel = u->priv->select;
    if (sel && (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE || !sel(u->priv->select_ctx, x))) return;
    etl_usage_thread *t = usage_slice(u, row->cpu, row->si, row->nso, x, head, usage_out_of(row->out), &a, &used);
    /* Busy per interval as per CPU: not idle, and not a slice whose thread is unknown (unknown_ns). */
    if (u->o.interval_ns > 0 && used > 0 && x != ETL_SCHED_IDLE && x != ETL_SCHED_NONE && row->cpu < u->ncpus) {
        const etl_sched_thread *st = etl_sched_thread_at(u->model, x);
        uint64_t who = st && st->process != ETL_SCHED_NONE ? (uint64_t)st->process + 1u : CELL_BY_THREAD | x;
        add_bucket(u, who, a, a + used, row->cpu);
    }
    if (u->o.interval_ns > 0 && used > 0 && x == ETL_SCHED_IDLE && row->cpu < u->ncpus) add_idle_bucket(u, a, a + used, row->cpu);
    if (!t) return;
    if (head) return;
    if ((row->flags & ETL_ROW_LOST) && usage_in_window(&u->o, row->si)) {
        u->priv->lost++;
        if (!(row->flags & ETL_ROW_PREV)) u->priv->lost_prev++;
    }
    etl_usage_interval iv;
    memset(&iv, 0, sizeof iv);
    iv.thread = x;
    iv.tid = row->new_tid;
    iv.cpu = row->cpu;
    iv.has_readier = (row->flags & ETL_ROW_READIED) != 0;
    iv.readier_tid = row->readier_tid;
    iv.readier_thread = row->readier_thread;
    iv.ready_cpu = row->ready_cpu;
    iv.ready_flags = row->ready.flags;
    if (row->flags & ETL_ROW_READY_TIME) {
        int64_t rs;
        int64_t ready = usage_clip(&u->o, row->rt, row->si, &rs);
        /* Counted when some of [RT, SI) lies in the window; one of no length (or times gone back) when its point
         * does: one that ends where the window starts lies before it (explore14 F1). */
        if (ready > 0 || (row->rt >= row->si && usage_in_window(&u->o, row->si))) {
            if (!u->o.no_latency) lat_add(u, x, iv.has_readier, (uint64_t)ready);
            if (u->ready_hist) hist_add(u, ready);
            iv.start_ns = rs;
            iv.dur_ns = ready;
            keep_longest(u->longest_ready, &u->n_longest_ready, u->o.longest, &iv);
        }
        if ((row->flags & ETL_ROW_PREV) && (row->flags & ETL_ROW_WAITED)) {
            int64_t ws;
            int64_t wait = usage_clip(&u->o, row->lso, row->rt, &ws);
            if (wait > 0 || (row->lso >= row->rt && usage_in_window(&u->o, row->rt))) {
                t->wait_count++;
                add_sat(&t->wait_ns, wait);
                if (wait > t->wait_max_ns) t->wait_max_ns = wait;
                etl_usage_reason *r = &u->reasons[row->prev_wait_reason & 63];
                r->code = row->prev_wait_reason & 63;
                r->count++;
                add_sat(&r->wait_ns, wait);
                if (wait > r->max_ns) r->max_ns = wait;
                iv.start_ns = ws;
                iv.dur_ns = wait;
                iv.reason = row->prev_wait_reason;
                keep_longest(u->longest_waits, &u->n_longest_waits, u->o.longest, &iv);
            }
        }
    }
}

usage_acc *usage_part_grow_thread(usage_part *u, uint32_t i)
{
    if (i >= u->cap) {
        size_t cap = u->cap ? u->cap : 256;
        while (cap <= i) cap *= 2;
        usage_acc *t = realloc(u->t, cap * sizeof *t);
        if (t) u->t = t;
        uint8_t *s = realloc(u->seen, cap);
        if (s) u->seen = s;
        if (!t || !s) {
            u->oom = true;
            return NULL;
        }
        memset(s + u->cap, 0, cap - u->cap);
        u->cap = cap;
    }
    if (!u->seen[i]) {
        u->t[i] = (usage_acc){.first_ns = -1, .last_ns = -1};
        u->seen[i] = 1;
    }
    return &u->t[i];
}

etl_usage_cpu *usage_part_grow_cpu(usage_part *u, unsigned c)
{
    if (c >= u->ncpus) {
        etl_usage_cpu *p = realloc(u->cpus, (c + 1u) * sizeof *p);
        if (!p) {
            u->oom = true;
            return NULL;
        }
        memset(p + u->ncpus, 0, (c + 1u - u->ncpus) * sizeof *p);
        u->cpus = p;
        u->ncpus = c + 1u;
    }
    return &u->cpus[c];
}

/* The run's states are usage_part (the consumer's cpu_time): CPU time alone, compact. */
static void *percpu_open(void *ctx)
{
    const etl_usage *u = ctx;
    usage_part *w = calloc(1, sizeof *w);
    if (w) w->o = u->o;
    return w;
}

/* Adds a part into u, its thread index i as u's map[i]. */
static etl_status percpu_merge(void *ctx, void *state, const etl_sched *model, const uint32_t *map, size_t n)
{
    etl_usage *u = ctx;
    const usage_part *w = state;
    if (w->oom) return ETL_E_NOMEM;
    if (u->priv->select) return ETL_E_UNSUPPORTED; /* slices, not rows: a selection is asked of rows */
    u->priv->percpu = true;
    if (!u->model) {
        u->model = model;
        u->bucket_stride = etl_sched_cpu_count(model) ? etl_sched_cpu_count(model) : 1;
    }
    u->rows += w->rows;
    for (size_t c = 0; c < w->ncpus; c++) {
        const etl_usage_cpu *x = &w->cpus[c];
        etl_usage_cpu *y = usage_cpu(u, (unsigned)c);
        if (!y) return ETL_E_NOMEM;
        add_sat(&y->busy_ns, x->busy_ns);
        add_sat(&y->idle_ns, x->idle_ns);
        add_sat(&y->unknown_ns, x->unknown_ns);
        y->switches += x->switches;
    }
    for (size_t i = 0; i < w->cap && i < n; i++) {
        if (!w->seen[i]) continue;
        const usage_acc *x = &w->t[i];
        etl_usage_thread *y = usage_thread(u, map[i]);
        if (!y) return ETL_E_NOMEM;
        add_sat(&y->cpu_ns, x->cpu_ns);
        y->switches += x->switches;
        y->voluntary += x->voluntary;
        y->involuntary += x->involuntary;
        if (x->first_ns >= 0 && (y->first_ns < 0 || x->first_ns < y->first_ns)) y->first_ns = x->first_ns;
        if (x->last_ns > y->last_ns) y->last_ns = x->last_ns;
    }
    return ETL_OK;
}

static void percpu_close(void *ctx, void *state)
{
    (void)ctx;
    usage_part *w = state;
    free(w->t);
    free(w->seen);
    free(w->cpus);
    free(w);
}

void etl_usage_percpu(etl_usage *u, etl_sched_percpu_consumer *c)
{
    /* CPU time alone, as cpu reads it: the run adds the slices itself (usage_slice.h), no row is built. */
    *c = (etl_sched_percpu_consumer){u, percpu_open, NULL, percpu_merge, percpu_close, true};
}

int64_t etl_percentile_sorted(const int64_t *v, size_t n, unsigned per_mille)
{
    if (n == 0) return 0;
    /* r = max(1, ceil(p * N / 100)) with p in per mille: ceil(per_mille * N / 1000). */
    uint64_t r = ((uint64_t)per_mille * n + 999) / 1000;
    if (r < 1) r = 1;
    if (r > n) r = n;
    return v[r - 1];
}

/* Fills l from the union of k sorted vectors. */
static void latency(etl_latency *l, const lat_vec *const *x, size_t k)
{
    memset(l, 0, sizeof *l);
    uint64_t n = 0, sum = 0, max = 0;
    for (size_t i = 0; i < k; i++) {
        n += lat_count(x[i]);
        if (__builtin_add_overflow(sum, lat_sum(x[i]), &sum)) sum = UINT64_MAX;
        if (lat_count(x[i]) && lat_max(x[i]) > max) max = lat_max(x[i]);
    }
    if (!n) return;
    l->count = n;
    l->sum_ns = lat_clamp64(sum);
    uint64_t r[4] = {lat_rank(n, 500), lat_rank(n, 900), lat_rank(n, 990), lat_rank(n, 999)}, v[4];
    lat_select_n(x, k, r, 4, v);
    l->p50_ns = lat_clamp64(v[0]);
    l->p90_ns = lat_clamp64(v[1]);
    l->p99_ns = lat_clamp64(v[2]);
    l->p999_ns = lat_clamp64(v[3]);
    l->max_ns = lat_clamp64(max);
}

/* A thread's process as an index into pmap: its process instance, or nproc for none. */
static size_t proc_slot(const etl_usage *u, uint32_t thread, size_t nproc)
{
    const etl_sched_thread *st = etl_sched_thread_at(u->model, thread);
    return st && st->process < nproc ? st->process : nproc;
}

/* The values over 32 bits of some vectors, sorted: an exact target's own. */
static uint64_t *big_of(const lat_vec *const *x, size_t k, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < k; i++) total += x[i]->nbig;
    uint64_t *b = malloc((total ? total : 1) * sizeof *b);
    if (!b) return NULL;
    size_t m = 0;
    for (size_t i = 0; i < k; i++) {
        if (!x[i]->nbig) continue; /* its list may be NULL */
        memcpy(b + m, x[i]->big, x[i]->nbig * sizeof *b);
        m += x[i]->nbig;
    }
    lat_vec tmp = {.big = b, .nbig = m};
    lat_sort(&tmp);
    *n = m;
    return b;
}

/*
 * Percentiles when the values were spilled (latspill.h), within the budget's memory:
 * threads are read back a group at a time (the spill passed over once a group), whole
 * processes together where they fit, so that a process's values are its threads'
 * loaded vectors; what does not fit one group (a thread or a process with more values
 * than the budget) and the whole trace's values are selected by histograms in passes.
 */
static etl_status latencies_spilled(etl_usage *u, const uint32_t *kidx, const uint32_t *pmap, size_t nproc_model)
{
    struct etl_usage_priv *p = u->priv;
    lat_spill *sp = p->spill;
    if (!lat_spill_end(sp)) return ETL_E_IO; /* the caller says why */
    size_t cap = p->cap, np = u->nprocesses;
    uint64_t budget = latency_budget(u) / 4;
    /* Each instance's process slot; the instances by process (counting sort). */
    uint32_t *proc_of = malloc((cap ? cap : 1) * sizeof *proc_of), *by_proc = malloc((cap ? cap : 1) * sizeof *by_proc);
    size_t *first = calloc(np + 2, sizeof *first);
    int32_t *local = malloc((cap ? cap : 1) * sizeof *local);
    lat_target *tg = NULL;
    size_t ntg = 0, captg = 0;
    uint64_t **bigs = NULL;
    size_t nbigs = 0;
    etl_status st = proc_of && by_proc && first && local ? ETL_OK : ETL_E_NOMEM;
    for (size_t i = 0; st == ETL_OK && i < cap; i++) {
        proc_of[i] = p->seen[i] ? pmap[proc_slot(u, (uint32_t)i, nproc_model)] : UINT32_MAX;
        local[i] = -1;
        if (proc_of[i] != UINT32_MAX) first[proc_of[i] + 1]++;
    }
    for (size_t j = 0; st == ETL_OK && j < np; j++) first[j + 1] += first[j];
    for (size_t i = 0; st == ETL_OK && i < cap; i++)
        if (proc_of[i] != UINT32_MAX) by_proc[first[proc_of[i]]++] = (uint32_t)i;
    for (size_t j = np; st == ETL_OK && j > 0; j--) first[j] = first[j - 1]; /* back to each process's start */
    if (first) first[0] = 0;

#define VALUES(i) ((uint64_t)p->spilled[2 * (i)] + p->spilled[2 * (i) + 1])
    /* A target for the histograms: its big values gathered now. */
#define TARGET(kind_, id_, vecs, nvecs, out_)                                                     \
    do {                                                                                           \
        if (ntg == captg) {                                                                        \
            size_t c2 = captg ? captg * 2 : 16;                                                    \
            lat_target *t2 = realloc(tg, c2 * sizeof *t2);                                         \
            uint64_t **b2 = realloc(bigs, c2 * sizeof *b2);                                        \
            if (t2) tg = t2;                                                                       \
            if (b2) bigs = b2;                                                                     \
            if (!t2 || !b2) { st = ETL_E_NOMEM; break; }                                           \
            captg = c2;                                                                            \
        }                                                                                          \
        size_t nb_;                                                                                \
        uint64_t *b_ = big_of(vecs, nvecs, &nb_);                                                  \
        if (!b_) { st = ETL_E_NOMEM; break; }                                                      \
        bigs[nbigs++] = b_;                                                                        \
        tg[ntg++] = (lat_target){kind_, (uint32_t)(id_), b_, nb_, out_};                           \
    } while (0)

    /* Groups of whole processes (or, for a process past the budget, of its threads) that fit. */
    lat_vec *gv = NULL;
    size_t gcap = 0;
    size_t gi = 0;       /* next position in by_proc */
    while (st == ETL_OK && gi < first[np]) {
        size_t from = gi, to = gi;
        uint64_t vals = 0;
        /* whole processes while they fit */
        for (size_t j = proc_of[by_proc[gi]]; j < np; j++) {
            uint64_t pv = 0;
            for (size_t q = first[j]; q < first[j + 1]; q++) pv += VALUES(by_proc[q]);
            if (to > from && vals + pv > budget) break;
            if (pv > budget) { /* alone too big: its threads in groups, the process by histogram */
                if (to > from) break;
                if (gi == first[j]) { /* its first group: the process's target, once */
                    const lat_vec **vs = malloc(2 * (first[j + 1] - first[j]) * sizeof *vs);
                    if (!vs) { st = ETL_E_NOMEM; break; }
                    size_t nv = 0;
                    for (size_t q = first[j]; q < first[j + 1]; q++) {
                        vs[nv++] = &p->woken[by_proc[q]];
                        vs[nv++] = &p->other[by_proc[q]];
                    }
                    TARGET(LAT_PROCESS, j, vs, nv, &u->processes[j].ready);
                    free(vs);
                }
                /* its threads: as many as fit this group, the rest in the next ones */
                for (; to < first[j + 1]; to++) {
                    uint64_t tv = VALUES(by_proc[to]);
                    if (to > from && vals + tv > budget) break;
                    vals += tv;
                }
                break;
            }
            vals += pv;
            to = first[j + 1];
        }
        if (st != ETL_OK) break;
        if (to == from) to = from + 1; /* cannot happen: a group takes one thread at least */
        /* A process is whole in the group when its threads all are. */
        size_t n = to - from;
        if (n > gcap) {
            lat_vec *g2 = realloc(gv, 2 * n * sizeof *g2);
            if (!g2) { st = ETL_E_NOMEM; break; }
            gv = g2;
            gcap = n;
        }
        memset(gv, 0, 2 * n * sizeof *gv);
        bool alone_too_big = n == 1 && VALUES(by_proc[from]) > budget;
        for (size_t q = from; q < to; q++) local[by_proc[q]] = (int32_t)(q - from);
        if (!alone_too_big) {
            lat_spill_rewind(sp);
            const uint32_t *pairs;
            size_t npairs;
            while ((pairs = lat_spill_block(sp, &npairs)) != NULL)
                for (size_t e = 0; e < npairs; e++) {
                    uint32_t key = pairs[2 * e], th = key >> 1;
                    if (th < cap && local[th] >= 0) lat_push(&gv[2 * (size_t)local[th] + !(key & 1)], pairs[2 * e + 1]);
                }
        }
        for (size_t q = from; q < to; q++) {
            uint32_t i = by_proc[q];
            size_t l = q - from;
            etl_usage_thread *t = &u->threads[kidx[i]];
            if (alone_too_big) { /* more values than the budget: by histogram */
                const lat_vec *both[2] = {&p->woken[i], &p->other[i]};
                TARGET(LAT_THREAD, i, both, 2, &t->ready);
                TARGET(LAT_THREAD_WOKEN, i, both, 1, &t->woken);
            } else {
                for (int w = 0; w < 2; w++) { /* the values over 32 bits, kept in memory */
                    const lat_vec *src = w ? &p->other[i] : &p->woken[i];
                    for (size_t b = 0; b < src->nbig; b++) lat_push(&gv[2 * l + (size_t)w], src->big[b]);
                    lat_sort(&gv[2 * l + (size_t)w]);
                }
                const lat_vec *both[2] = {&gv[2 * l], &gv[2 * l + 1]};
                latency(&t->ready, both, 2);
                latency(&t->woken, both, 1);
            }
            local[i] = -1;
        }
        /* Processes wholly in the group: from their threads' vectors. */
        for (size_t q = from; q < to && !alone_too_big;) {
            size_t j = proc_of[by_proc[q]], e = first[j + 1] < to ? first[j + 1] : to;
            if (first[j] >= from && first[j + 1] <= to) {
                const lat_vec **vs = malloc(2 * (e - q) * sizeof *vs);
                if (!vs) { st = ETL_E_NOMEM; break; }
                for (size_t r = q; r < e; r++) {
                    vs[2 * (r - q)] = &gv[2 * (r - from)];
                    vs[2 * (r - q) + 1] = &gv[2 * (r - from) + 1];
                }
                latency(&u->processes[j].ready, vs, 2 * (e - q));
                free(vs);
            }
            q = e;
        }
        for (size_t l = 0; l < 2 * n; l++) lat_free(&gv[l]);
        gi = to;
    }
    free(gv);
    /* The whole trace: every value, and the woken ones. */
    if (st == ETL_OK) {
        size_t nv = 0;
        const lat_vec **vs = malloc(2 * (cap ? cap : 1) * sizeof *vs);
        if (!vs) st = ETL_E_NOMEM;
        for (size_t i = 0; vs && i < cap; i++)
            if (p->seen[i]) vs[nv++] = &p->woken[i];
        size_t nwoken = nv;
        for (size_t i = 0; vs && i < cap; i++)
            if (p->seen[i]) vs[nv++] = &p->other[i];
        if (vs) TARGET(LAT_ALL, 0, vs, nv, &u->ready_all);
        if (vs && st == ETL_OK) TARGET(LAT_WOKEN, 0, vs, nwoken, &u->woken_all);
        free(vs);
    }
#undef TARGET
#undef VALUES
    if (st == ETL_OK && !lat_spill_latency(sp, tg, ntg, proc_of, cap))
        st = etl_spool_error(sp->sp) ? ETL_E_IO : ETL_E_NOMEM; /* reading back failed, or memory */
    for (size_t i = 0; i < nbigs; i++) free(bigs[i]);
    free(bigs);
    free(tg);
    free(proc_of);
    free(by_proc);
    free(first);
    free(local);
    return st;
}

static int by_cpu_desc_thread(const void *a, const void *b)
{
    const etl_usage_thread *x = a, *y = b;
    if (x->cpu_ns != y->cpu_ns) return x->cpu_ns > y->cpu_ns ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int by_cpu_desc_process(const void *a, const void *b)
{
    const etl_usage_process *x = a, *y = b;
    if (x->cpu_ns != y->cpu_ns) return x->cpu_ns > y->cpu_ns ? -1 : 1;
    return x->process < y->process ? -1 : x->process > y->process;
}

static etl_status finish(etl_usage *u, int64_t end_ns);


/* The intervals [k·len, (k+1)·len) that meet [v0, v1): none for an empty window. */
static uint64_t intervals_over(int64_t v0, int64_t v1, int64_t len)
{
    if (v1 <= v0) return 0;
    return (uint64_t)interval_of(v1 - 1, len) - (uint64_t)interval_of(v0, len) + 1u;
}

/* The intervals of the window; none when no CPU had a slice (a trace without switches). */
static uint64_t interval_count(const etl_usage *u, int64_t v0, int64_t v1, int64_t len)
{
    return u->ncpus ? intervals_over(v0, v1, len) : 0;
}

/*
 * The shortest length L that makes at most max intervals of [v0, v1), and so does every longer
 * one. Aligned to the trace start, a window of W ns meets at most floor((W - 1) / L) + 2
 * intervals, so floor((W - 1) / (max - 1)) + 1 is safe; shorter ones down to ceil(W / max) may
 * fit too (a window that starts on an edge), taken while every one does: a few steps.
 */
static int64_t fit_length(int64_t v0, int64_t v1, uint64_t max)
{
    uint64_t w = (uint64_t)v1 - (uint64_t)v0;
    if (w == 0) return 1;
    uint64_t lo = w / max + (w % max != 0), l = max > 1 ? (w - 1) / (max - 1) + 1 : w;
    if (l > (uint64_t)INT64_MAX) l = (uint64_t)INT64_MAX;
    for (int i = 0; i < 64 && l > lo && l > 1 && intervals_over(v0, v1, (int64_t)(l - 1)) <= max; i++) l--;
    return (int64_t)l;
}

void etl_usage_interval_bounds(const etl_usage *u, size_t b, int64_t *start_ns, int64_t *end_ns)
{
    int64_t len = u->o.interval_ns > 0 ? u->o.interval_ns : 1, s, e;
    int64_t k = interval_of(u->o.v0, len) + (int64_t)b;
    /* The first and the last may be shorter: cut by the window (an interval of it starts before its end). */
    if (__builtin_mul_overflow(k, len, &s) || s < u->o.v0) s = u->o.v0;
    if (__builtin_mul_overflow(k + 1, len, &e) || e > u->o.v1) e = u->o.v1;
    *start_ns = s;
    *end_ns = e;
}

uint64_t etl_usage_intervals(const etl_usage *u, int64_t end_ns, uint64_t *n, int64_t *window_ns, int64_t *fit_ns)
{
    int64_t v0 = u->o.v0, v1 = u->o.v1;
    etl_window_clip(&v0, &v1, end_ns);
    uint64_t max = etl_usage_max_intervals(u->bucket_stride);
    int64_t len = u->o.interval_ns > 0 ? u->o.interval_ns : 1;
    *n = interval_count(u, v0, v1, len);
    *window_ns = v1 - v0;
    *fit_ns = fit_length(v0, v1, max);
    return max;
}

/* One top process's cell while they are gathered: its interval, its rank in processes[], its busy ns. */
typedef struct top_cell {
    uint32_t bucket, rank;
    int64_t ns;
} top_cell;

static int by_bucket_rank(const void *a, const void *b)
{
    const top_cell *x = a, *y = b;
    if (x->bucket != y->bucket) return x->bucket < y->bucket ? -1 : 1;
    return x->rank < y->rank ? -1 : x->rank > y->rank;
}

typedef struct top_cells {
    top_cell *v;
    size_t n, cap;
} top_cells;

/* A cell (key as in bucket_map) of a process ranked below the cut: kept. */
static bool top_add(const etl_usage *u, top_cells *t, const uint32_t *rank, size_t nproc, size_t nbuckets, uint64_t key,
                    int64_t ns)
{
    uint32_t proc = (uint32_t)key - 1u;
    size_t slot = key & CELL_BY_THREAD ? proc_slot(u, (uint32_t)key, nproc) : proc < nproc ? proc : nproc;
    size_t bk = (size_t)((key & ~CELL_BY_THREAD) >> 32);
    if (rank[slot] == UINT32_MAX || bk >= nbuckets) return true;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        top_cell *v = realloc(t->v, cap * sizeof *v);
        if (!v) return false;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n++] = (top_cell){(uint32_t)bk, rank[slot], ns};
    return true;
}

/*
 * Every interval of the window: each CPU's busy time (zero past the last slice), and the
 * cells of the first interval_processes processes, now that they are ranked, from memory
 * and the spill; only those are kept, sparse. rank[] is by process slot (finish's pmap),
 * overwritten here.
 */
static etl_status intervals(etl_usage *u, uint32_t *rank, size_t nproc)
{
    struct etl_usage_priv *p = u->priv;
    if (p->percpu) {
        etl_diag_set(&p->diag, ETL_E_UNSUPPORTED, 0, "intervals need the rows in time order, not CPU by CPU");
        p->failed = ETL_E_UNSUPPORTED;
        return ETL_E_UNSUPPORTED;
    }
    uint64_t max = etl_usage_max_intervals(u->bucket_stride);
    uint64_t want = interval_count(u, u->o.v0, u->o.v1, u->o.interval_ns);
    if (want > max) {
        etl_diag_set(&p->diag, ETL_E_RANGE, 0, "%llu intervals of %lld ns, more than %llu", (unsigned long long)want,
                     (long long)u->o.interval_ns, (unsigned long long)max);
        p->failed = ETL_E_RANGE;
        return ETL_E_RANGE;
    }
    if (want > u->nbuckets && !grow_buckets(u, (size_t)want)) return ETL_E_NOMEM;
    u->nbuckets = (size_t)want;
    size_t top = u->o.interval_processes ? u->o.interval_processes : 10;
    if (top > u->nprocesses) top = u->nprocesses;
    for (size_t i = 0; i <= nproc; i++) rank[i] = UINT32_MAX;
    for (size_t j = 0; j < top; j++) {
        uint32_t proc = u->processes[j].process;
        rank[proc < nproc ? proc : nproc] = (uint32_t)j;
    }
    top_cells t = {0};
    bool ok = true;
    for (size_t i = 0; ok && i < p->nbv; i++)
        ok = top_add(u, &t, rank, nproc, u->nbuckets, p->bucket_keys[i], p->bucket_vals[i]);
    if (ok && p->cells) {
        etl_spool_rewind(p->cells_out);
        const uint8_t *r;
        size_t n;
        while (ok && (r = etl_spool_next(p->cells_out, &n)) != NULL) {
            const uint32_t *c = (const uint32_t *)(const void *)r; /* spool records are 4-byte aligned */
            for (size_t k = 0; ok && k < n / (CELL_WORDS * sizeof *c); k++, c += CELL_WORDS)
                ok = top_add(u, &t, rank, nproc, u->nbuckets, (uint64_t)c[0] << 32 | c[1],
                             (int64_t)((uint64_t)c[3] << 32 | c[2]));
        }
        if (ok && etl_spool_error(p->cells)) {
            free(t.v);
            cells_failed(p);
            return p->failed;
        }
    }
    /* By interval, then rank; a cell spilled more than once is added up. */
    etl_sort(t.v, t.n, sizeof *t.v, by_bucket_rank);
    size_t m = 0;
    for (size_t i = 0; i < t.n; i++) {
        top_cell *last = m ? &t.v[m - 1] : NULL;
        if (last && last->bucket == t.v[i].bucket && last->rank == t.v[i].rank) add_sat(&last->ns, t.v[i].ns);
        else t.v[m++] = t.v[i];
    }
    u->bucket_cells = ok ? malloc((m ? m : 1) * sizeof *u->bucket_cells) : NULL;
    u->bucket_first = ok ? calloc(u->nbuckets + 1, sizeof *u->bucket_first) : NULL;
    if (!u->bucket_cells || !u->bucket_first) {
        free(t.v);
        return ETL_E_NOMEM;
    }
    for (size_t i = 0; i < m; i++) {
        u->bucket_cells[i] = (etl_usage_cell){t.v[i].rank, t.v[i].ns};
        u->bucket_first[t.v[i].bucket + 1]++;
    }
    for (size_t b = 0; b < u->nbuckets; b++) u->bucket_first[b + 1] += u->bucket_first[b];
    free(t.v);
    return ETL_OK;
}

int64_t etl_usage_interval_process_ns(const etl_usage *u, size_t b, size_t j)
{
    if (!u->bucket_first || b >= u->nbuckets) return 0;
    /* A bucket's cells are by process index: a binary search. */
    size_t lo = u->bucket_first[b], hi = u->bucket_first[b + 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->bucket_cells[mid].process < j) lo = mid + 1;
        else hi = mid;
    }
    return lo < u->bucket_first[b + 1] && u->bucket_cells[lo].process == j ? u->bucket_cells[lo].busy_ns : 0;
}

etl_status etl_usage_finish(etl_usage *u, int64_t end_ns)
{
    struct etl_usage_priv *p = u->priv;
    if (!p) return ETL_E_INVALID_ARG; /* not initialised, or init failed */
    /* Finished before (finish always makes processes[], and a failure stays in p->failed): nothing changes. */
    if (p->failed == ETL_OK && u->processes) return ETL_OK;
    etl_status st = p->failed != ETL_OK                                    ? p->failed
                    : u->model && etl_sched_status(u->model) != ETL_OK ? ETL_E_NOMEM /* the model lost rows */
                                                                       : finish(u, end_ns);
    if (st != ETL_OK) usage_fail(p, st);
    return p->failed;
}

static etl_status finish(etl_usage *u, int64_t end_ns)
{
    struct etl_usage_priv *p = u->priv;
    etl_window_clip(&u->o.v0, &u->o.v1, end_ns);
    /* A CPU's time is the machine's: with a selection, no CPU is told (its idle time was not counted). */
    if (p->select) {
        free(u->cpus);
        u->cpus = NULL;
        u->ncpus = 0;
    }
    /*
     * Every processor of the machine is listed, one that ran no slice too (its time unknown, as below); a trace
     * with no switch at all stays an empty report.
     */
    unsigned nmodel = u->model ? etl_sched_cpu_count(u->model) : 0;
    if (u->ncpus && nmodel > u->ncpus && !etl_usage_grow_cpu(u, nmodel - 1)) return ETL_E_NOMEM;
    /*
     * A CPU's time that no slice covers is unknown: a CPU below the last one seen with no switch
     * in the window (its buffers lost, or a file cut short), so that busy + idle + unknown is the
     * window on every CPU listed.
     */
    if (u->ncpus) {
        for (size_t c = 0; c < u->ncpus; c++) {
            etl_usage_cpu *x = &u->cpus[c];
            int64_t seen = x->busy_ns, w = u->o.v1 - u->o.v0;
            add_sat(&seen, x->idle_ns);
            add_sat(&seen, x->unknown_ns);
            if (seen < w) x->unknown_ns += w - seen;
        }
    }
    size_t nthr = 0;
    for (size_t i = 0; i < p->cap; i++) nthr += p->seen[i];
    /* Two vectors a thread: the whole trace's set, and per process, as pointers. */
    bool lat = !u->o.no_latency;
    const lat_vec **all = malloc((2 * nthr + 1) * sizeof *all), **pv = malloc((2 * nthr + 1) * sizeof *pv);
    size_t nproc_model = 0;
    etl_sched_processes(u->model, &nproc_model);
    /* processes[]: one per process instance with threads, plus one for threads of no process. */
    uint32_t *pmap = malloc((nproc_model + 1) * sizeof *pmap);
    u->processes = calloc(nproc_model + 1, sizeof *u->processes);
    /* The process latencies' bounds (at most nproc_model + 1 processes), taken now so that their lack fails here. */
    size_t *start = lat ? calloc(nproc_model + 2, sizeof *start) : NULL;
    if (!all || !pv || !pmap || !u->processes || (lat && !start)) {
        free(all);
        free(pv);
        free(pmap);
        free(start);
        return ETL_E_NOMEM;
    }
    for (size_t i = 0; i <= nproc_model; i++) pmap[i] = UINT32_MAX;
    size_t nall = 0, nwoken = 0, k = 0;
    /* Spilled values: their percentiles are read off the spill once the threads are in place. */
    bool spilled = lat && p->spill;
    uint32_t *kidx = spilled ? malloc((p->cap ? p->cap : 1) * sizeof *kidx) : NULL;
    if (spilled && !kidx) {
        free(all);
        free(pv);
        free(pmap);
        free(start);
        return ETL_E_NOMEM;
    }
    if (spilled) lat = false; /* the in-memory way below is not for them */
    for (size_t i = 0; i < p->cap; i++) {
        if (!p->seen[i]) continue;
        if (kidx) kidx[i] = (uint32_t)k;
        /* The threads with rows move to the front, in instance order: they become u->threads. */
        etl_usage_thread *t = &p->t[k++];
        if (t != &p->t[i]) *t = p->t[i];
        if (lat) {
            lat_sort(&p->woken[i]);
            lat_sort(&p->other[i]);
            const lat_vec *both[2] = {&p->woken[i], &p->other[i]};
            latency(&t->ready, both, 2);
            latency(&t->woken, both, 1);
            all[nall++] = &p->woken[i]; /* woken first: the woken variant is all[0..nwoken) */
            nwoken++;
        }
        size_t pk = proc_slot(u, (uint32_t)i, nproc_model);
        if (pmap[pk] == UINT32_MAX) {
            pmap[pk] = (uint32_t)u->nprocesses++;
            u->processes[pmap[pk]].process = pk < nproc_model ? (uint32_t)pk : ETL_SCHED_NONE;
        }
        etl_usage_process *pr = &u->processes[pmap[pk]];
        add_sat(&pr->cpu_ns, t->cpu_ns);
        pr->switches += t->switches;
        pr->threads++;
        pr->wait_count += t->wait_count;
        add_sat(&pr->wait_ns, t->wait_ns);
    }
    u->nthreads = k;
    u->threads = p->t;
    p->t = NULL;
    for (size_t i = 0; lat && i < p->cap; i++)
        if (p->seen[i]) all[nall++] = &p->other[i];
    /* Process latencies: the vectors of their threads, grouped by process slot in one pass. */
    if (lat) {
        for (size_t i = 0; i < p->cap; i++)
            if (p->seen[i]) start[pmap[proc_slot(u, (uint32_t)i, nproc_model)] + 1] += 2;
        for (size_t j = 0; j < u->nprocesses; j++) start[j + 1] += start[j];
        for (size_t i = 0; i < p->cap; i++) {
            if (!p->seen[i]) continue;
            size_t j = pmap[proc_slot(u, (uint32_t)i, nproc_model)];
            pv[start[j]++] = &p->woken[i];
            pv[start[j]++] = &p->other[i];
        }
        /* start[j] now ends process j; it began where j - 1 ended. */
        for (size_t j = 0; j < u->nprocesses; j++) {
            size_t from = j ? start[j - 1] : 0;
            latency(&u->processes[j].ready, pv + from, start[j] - from);
        }
    }
    free(start);
    if (lat) {
        latency(&u->ready_all, all, nall);
        latency(&u->woken_all, all, nwoken);
    }
    etl_status st = ETL_OK;
    if (spilled) st = latencies_spilled(u, kidx, pmap, nproc_model);
    free(kidx);
    etl_sort(u->processes, u->nprocesses, sizeof *u->processes, by_cpu_desc_process);
    etl_sort(u->threads, u->nthreads, sizeof *u->threads, by_cpu_desc_thread);
    if (st == ETL_OK && u->o.interval_ns > 0) st = intervals(u, pmap, nproc_model);
    free(all);
    free(pv);
    free(pmap);
    return st;
}

void etl_usage_free(etl_usage *u)
{
    if (!u) return; /* as the handles' close: a cleanup path may free what it never made */
    struct etl_usage_priv *p = u->priv;
    if (p) {
        for (size_t i = 0; p->woken && i < p->cap; i++) {
            if (!p->seen[i]) continue; /* never initialised */
            lat_free(&p->woken[i]);
            lat_free(&p->other[i]);
        }
        free(p->t);
        free(p->woken);
        free(p->other);
        free(p->seen);
        free(p->bucket_vals);
        free(p->bucket_keys);
        free(p->bucket_cpu_idle);
        etl_idmap_free(&p->bucket_map);
        if (p->cells_out) etl_spool_stream_free(p->cells_out);
        free(p->cells_out);
        if (p->cells) etl_spool_close(p->cells);
        if (p->spill) lat_spill_free(p->spill);
        free(p->spill);
        free(p->spilled);
        free(p);
    }
    free(u->threads);
    free(u->processes);
    free(u->cpus);
    free(u->longest_waits);
    free(u->longest_ready);
    free(u->bucket_cpu_busy);
    free(u->bucket_cells);
    free(u->bucket_first);
    free(u->ready_hist);
    memset(u, 0, sizeof *u);
}

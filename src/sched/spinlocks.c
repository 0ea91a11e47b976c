/*
 * spinlocks.c - spin lock aggregates (spec analyses.md §5) from SpinLock
 * (0x0529) events.
 *
 * Every event is classed by re-evaluating the kernel's logging rules (KE §8.1)
 * on its own fields: L (held longer than H: always logged, weight 1), C (spins
 * >= S: 1 in M contentions per CPU, weight M), U (no spin: 1 in A per CPU,
 * weight A), else unexplained (weight 1). Events accumulate per cell (lock,
 * caller, AcquireMode); finish folds the cells into the per lock, caller, pair
 * and mode rows, so an event costs four hash lookups and two set insertions.
 *
 * Percentiles are exact nearest ranks over events: each cell keeps its hold
 * (events without interrupts) and wait cycles, 4 bytes each (sched/latency.h),
 * and a group's rank is selected across its cells' sorted vectors.
 *
 * Bounds (a trace of a million lock addresses, or of a billion events, costs no
 * more than these): a lock, caller or pair enters its table only with a cell of
 * its own, cells stop at ETL_SPIN_MAX_CELLS, the distinct (cell, thread or CPU)
 * pairs at ETL_SPIN_MAX_DISTINCT, the values at max_values; what does not fit is
 * counted (cells_dropped, distinct_dropped, values_dropped), the totals stay exact.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/sat.h"
#include "base/sort.h"
#include "etlkit/spinlocks.h"
#include "base/idmap.h"
#include "sched/latency.h"
#include "base/opts.h"

typedef struct cell {
    uint32_t lock, caller, pair;
    uint8_t mode;
    etl_spin_acc a;
    lat_vec hold, wait;
} cell;

/* The distinct-set index of the total (no cell has it). */
#define TOTAL_CELL ETL_SPIN_MAX_CELLS

typedef struct addr_tab {
    etl_idmap map;
    uint64_t *v;
    size_t n, cap;
} addr_tab;

struct etl_spinlocks_priv {
    addr_tab locks, callers, pairs; /* pairs: key lock << 32 | caller */
    etl_idmap cell_map;             /* pair << 6 | mode -> cell */
    cell *cells;
    size_t ncell, capcell;
    etl_idmap seen;                 /* cell << 33 | what << 32 | value (what 0: tid, 1: cpu) */
    uint32_t *pools[5];             /* tids and cpus of each kind's groups */
    uint64_t values;                /* hold and wait values kept */
    etl_spin_cpu *others;           /* per CPU, the events o.select left out: for the bounds only */
    size_t nothers;
    uint64_t *known_until;          /* per header CPU, etl_reader_cpu_known_until (losses; NULL: every CPU whole) */
    unsigned nknown;
    bool oom;                       /* an allocation failed: finish fails (a cap is counted, memory is not) */
    bool finished;                  /* finish ran: a second call returns its status and changes nothing */
    etl_status finish_st;
};

static void sat_add(etl_spin_acc *a, uint64_t *acc, uint64_t v)
{
    if (__builtin_add_overflow(*acc, v, acc)) {
        *acc = UINT64_MAX;
        a->saturated = true;
    }
}

static uint64_t sat_mul(etl_spin_acc *a, uint64_t x, uint64_t y)
{
    uint64_t r;
    if (__builtin_mul_overflow(x, y, &r)) {
        a->saturated = true;
        return UINT64_MAX;
    }
    return r;
}

/* The class under p of an event held hold cycles (0: no hold known, so never L). */
static etl_spin_class classify(const etl_spinlock_info *p, const etl_spinlock *e, uint64_t hold, uint64_t *weight)
{
    uint32_t h = p->has_hold_threshold ? p->spin_lock_hold_threshold : 0;
    uint32_t s = p->spin_lock_spin_threshold ? p->spin_lock_spin_threshold : 1;
    if (h && hold > h) {
        *weight = 1;
        return ETL_SPIN_L;
    }
    if (e->spin_count >= s) {
        *weight = p->spin_lock_contention_sample_rate ? p->spin_lock_contention_sample_rate : 1;
        return ETL_SPIN_C;
    }
    if (e->spin_count == 0) {
        *weight = p->spin_lock_acquire_sample_rate ? p->spin_lock_acquire_sample_rate : 1;
        return ETL_SPIN_U;
    }
    *weight = 1;
    return ETL_SPIN_X;
}

etl_spin_class etl_spin_classify(const etl_spinlock_info *p, const etl_spinlock *e, uint64_t *weight)
{
    return classify(p, e, etl_spinlock_hold_cycles(e), weight);
}

etl_status etl_spinlocks_init(etl_spinlocks *s, const etl_clock *clock, const etl_spinlocks_options *o)
{
    memset(s, 0, sizeof *s);
    s->clock = clock;
    s->o.params = etl_spinlock_info_defaults();
    etl_opts_take(&s->o, sizeof s->o, o);
    /*
     * The trace does not record the parameters: all zero (a zeroed struct) is "not given" and takes the kernel's
     * defaults, as a shorter sz and the CLI do; any other set the kernel refuses is no sampling the events had
     * (S = A = M = 0 made every event weigh 1 and the bounds exact).
     */
    const etl_spinlock_info *pi = &s->o.params;
    if (!pi->spin_lock_spin_threshold && !pi->spin_lock_acquire_sample_rate && !pi->spin_lock_contention_sample_rate &&
        !pi->spin_lock_hold_threshold && !pi->has_hold_threshold)
        s->o.params = etl_spinlock_info_defaults();
    if (etl_spinlock_info_validate(&s->o.params, NULL) != ETL_OK) {
        memset(s, 0, sizeof *s);
        return ETL_E_INVALID_ARG;
    }
    if (!s->o.max_values) s->o.max_values = ETL_SPIN_MAX_VALUES;
    s->max_hold_cycles = (uint64_t)ETL_SPIN_MAX_HOLD_S * (s->o.mhz ? s->o.mhz : ETL_SPIN_MAX_HOLD_MHZ) * 1000000u;
    s->priv = calloc(1, sizeof *s->priv);
    if (!s->priv) return ETL_E_NOMEM;
    struct etl_spinlocks_priv *p = s->priv;
    etl_idmap_init(&p->locks.map);
    etl_idmap_init(&p->callers.map);
    etl_idmap_init(&p->pairs.map);
    etl_idmap_init(&p->cell_map);
    etl_idmap_init(&p->seen);
    return ETL_OK;
}

/* The index of key in t, added if new; UINT32_MAX when out of memory. */
static uint32_t tab_get(addr_tab *t, uint64_t key)
{
    uint32_t i = etl_idmap_get(&t->map, key);
    if (i != ETL_IDMAP_EMPTY) return i;
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        uint64_t *v = realloc(t->v, cap * sizeof *v);
        if (!v) return UINT32_MAX;
        t->v = v;
        t->cap = cap;
    }
    if (etl_idmap_put(&t->map, key, (uint32_t)t->n) != ETL_OK) return UINT32_MAX;
    t->v[t->n] = key;
    return (uint32_t)t->n++;
}

/* Whether an event's hold is known: released before acquired, or times no hold can have, are not. */
enum { HOLD_OK, HOLD_BACKWARDS, HOLD_IMPOSSIBLE };

/* hs: HOLD_* (a hold not known is left out of the hold figures, counted by why). */
static void acc_add(etl_spin_acc *a, const etl_spinlock *e, etl_spin_class c, uint64_t w, uint64_t hold, unsigned hs)
{
    bool cont = e->spin_count > 0, irq = e->interrupt_count > 0;
    a->events++;
    a->cls[c]++;
    sat_add(a, &a->est_acq, w);
    uint64_t ww = sat_mul(a, w, e->wait_time_in_cycles);
    sat_add(a, &a->w_wait, ww);
    sat_add(a, &a->w_spins, sat_mul(a, w, e->spin_count));
    if (cont) {
        a->contended++;
        sat_add(a, &a->est_contended, w);
        sat_add(a, &a->w_wait_contended, ww);
    }
    if (irq) {
        a->irq++;
    } else if (hs == HOLD_BACKWARDS) {
        a->no_hold++;
    } else if (hs == HOLD_IMPOSSIBLE) {
        a->bad_hold++;
    } else {
        sat_add(a, &a->w_hold, sat_mul(a, w, hold));
        sat_add(a, &a->w_nonirq, w);
        if (hold > a->max_hold) a->max_hold = hold;
    }
    if (e->wait_time_in_cycles > a->max_wait) a->max_wait = e->wait_time_in_cycles;
    if (e->spin_count > a->max_spins) a->max_spins = e->spin_count;
    a->irql[e->irql < ETL_SPIN_IRQLS - 1 ? e->irql : ETL_SPIN_IRQLS - 1]++;
    a->mode[e->acquire_mode < ETL_SPIN_MODES - 1 ? e->acquire_mode : ETL_SPIN_MODES - 1]++;
}

static void acc_merge(etl_spin_acc *d, const etl_spin_acc *x)
{
    d->events += x->events;
    for (unsigned k = 0; k < ETL_SPIN_CLASSES; k++) d->cls[k] += x->cls[k];
    d->contended += x->contended;
    d->irq += x->irq;
    d->no_hold += x->no_hold;
    d->bad_hold += x->bad_hold;
    sat_add(d, &d->est_acq, x->est_acq);
    sat_add(d, &d->est_contended, x->est_contended);
    sat_add(d, &d->w_wait, x->w_wait);
    sat_add(d, &d->w_wait_contended, x->w_wait_contended);
    sat_add(d, &d->w_spins, x->w_spins);
    sat_add(d, &d->w_hold, x->w_hold);
    sat_add(d, &d->w_nonirq, x->w_nonirq);
    if (x->max_hold > d->max_hold) d->max_hold = x->max_hold;
    if (x->max_wait > d->max_wait) d->max_wait = x->max_wait;
    if (x->max_spins > d->max_spins) d->max_spins = x->max_spins;
    for (unsigned k = 0; k < ETL_SPIN_IRQLS; k++) d->irql[k] += x->irql[k];
    for (unsigned k = 0; k < ETL_SPIN_MODES; k++) d->mode[k] += x->mode[k];
    d->saturated |= x->saturated;
}

/* The event's cell; NULL past the cap (nothing of it added) or out of memory. */
static cell *cell_of(etl_spinlocks *s, const etl_spinlock *e)
{
    struct etl_spinlocks_priv *p = s->priv;
    uint8_t mode = e->acquire_mode & 0x3F;
    /* The cell if it exists, looked up without adding its lock, caller or pair. */
    uint32_t li = etl_idmap_get(&p->locks.map, e->spin_lock_address);
    uint32_t ci = etl_idmap_get(&p->callers.map, e->caller_address);
    uint32_t pi = li != ETL_IDMAP_EMPTY && ci != ETL_IDMAP_EMPTY ? etl_idmap_get(&p->pairs.map, (uint64_t)li << 32 | ci)
                                                                  : ETL_IDMAP_EMPTY;
    if (pi != ETL_IDMAP_EMPTY) {
        uint32_t k = etl_idmap_get(&p->cell_map, (uint64_t)pi << 6 | mode);
        if (k != ETL_IDMAP_EMPTY) return &p->cells[k];
    }
    /* A new cell: locks, callers and pairs enter the tables with cells alone, so the cap bounds them too. */
    if (p->ncell >= ETL_SPIN_MAX_CELLS) return NULL;
    li = tab_get(&p->locks, e->spin_lock_address);
    ci = tab_get(&p->callers, e->caller_address);
    if (li == UINT32_MAX || ci == UINT32_MAX) goto oom;
    pi = tab_get(&p->pairs, (uint64_t)li << 32 | ci);
    if (pi == UINT32_MAX) goto oom;
    uint64_t key = (uint64_t)pi << 6 | mode;
    if (p->ncell == p->capcell) {
        size_t cap = p->capcell ? p->capcell * 2 : 64;
        cell *c = realloc(p->cells, cap * sizeof *c);
        if (!c) goto oom;
        p->cells = c;
        p->capcell = cap;
    }
    if (etl_idmap_put(&p->cell_map, key, (uint32_t)p->ncell) != ETL_OK) goto oom;
    cell *c = &p->cells[p->ncell++];
    memset(c, 0, sizeof *c);
    c->lock = li;
    c->caller = ci;
    c->pair = pi;
    c->mode = mode;
    return c;
oom:
    p->oom = true;
    return NULL;
}

static void seen_put(etl_spinlocks *s, uint64_t cellix, unsigned what, uint32_t v)
{
    struct etl_spinlocks_priv *p = s->priv;
    uint64_t key = cellix << 33 | (uint64_t)what << 32 | v;
    if (etl_idmap_get(&p->seen, key) != ETL_IDMAP_EMPTY) return;
    if (p->seen.count >= ETL_SPIN_MAX_DISTINCT) s->distinct_dropped++;
    else if (etl_idmap_put(&p->seen, key, 0) != ETL_OK) p->oom = true;
}

/* One value into a cell's vector, within the budget. */
static void value_put(etl_spinlocks *s, lat_vec *v, uint64_t x)
{
    struct etl_spinlocks_priv *p = s->priv;
    if (p->values >= s->o.max_values) {
        s->values_dropped++;
        return;
    }
    if (!lat_push(v, x)) {
        p->oom = true;
        return;
    }
    p->values++;
}

/* One event into its CPU's counts by class (grown as CPUs appear; out of memory fails finish). */
static void cpu_count(etl_spinlocks *s, etl_spin_cpu **v, size_t *n, uint32_t cpu, etl_spin_class c,
                      const etl_spinlock *e)
{
    if (cpu >= *n) {
        size_t nn = (size_t)cpu + 1;
        etl_spin_cpu *x = realloc(*v, nn * sizeof *x);
        if (!x) {
            s->priv->oom = true; /* bounds without this CPU's events would be wrong, not wide */
            return;
        }
        memset(x + *n, 0, (nn - *n) * sizeof *x);
        *v = x;
        *n = nn;
    }
    etl_spin_cpu *k = &(*v)[cpu];
    switch (c) {
    case ETL_SPIN_L:
        if (e->spin_count) k->l1++;
        else k->l0++;
        break;
    case ETL_SPIN_C: k->c++; break;
    case ETL_SPIN_U: k->u++; break;
    default: k->x++; break;
    }
}

/*
 * Whether the event's times are a hold the kernel measured (etl_spinlocks.impossible_hold). AcquireTime and
 * ReleaseTime are TSC readings: 0 is the reset's, and no hold lasts past the DPC watchdog. On the CPU-cycle clock
 * the event's own timestamp is the TSC read as it is logged, just after the release, on the same CPU.
 */
static unsigned hold_state(const etl_spinlocks *s, const etl_sched_event *ev)
{
    const etl_spinlock *e = &ev->u.spinlock;
    if (!e->acquire_time || !e->release_time) return HOLD_IMPOSSIBLE;
    if (e->release_time < e->acquire_time) return HOLD_BACKWARDS;
    if (e->release_time - e->acquire_time > s->max_hold_cycles) return HOLD_IMPOSSIBLE;
    uint64_t ms = s->max_hold_cycles / (ETL_SPIN_MAX_HOLD_S * 1000u); /* a millisecond's slack after it */
    if (s->clock && s->clock->type == ETL_CLOCK_CPU_CYCLES &&
        (e->release_time > ev->ts ? e->release_time - ev->ts > ms : ev->ts - e->release_time > s->max_hold_cycles))
        return HOLD_IMPOSSIBLE;
    return HOLD_OK;
}

void etl_spinlocks_add(etl_spinlocks *s, const etl_sched_event *ev)
{
    if (ev->kind != ETL_SCHED_SPINLOCK || !s->priv) return;
    const etl_spinlock *e = &ev->u.spinlock;
    s->events++;
    int64_t ns = etl_clock_ns(s->clock, ev->ts);
    if (ns < s->o.v0 || (s->o.v1 > s->o.v0 && ns >= s->o.v1)) {
        s->outside++;
        return;
    }
    struct etl_spinlocks_priv *p = s->priv;
    unsigned hs = hold_state(s, ev);
    uint64_t hold = hs == HOLD_OK ? e->release_time - e->acquire_time : 0, w;
    etl_spin_class c = classify(&s->o.params, e, hold, &w);
    /* Per CPU, for the bounds: a CPU's sampling counter counts every thread's acquisitions. */
    if (s->o.select && !s->o.select(s->o.select_ctx, ev)) {
        s->filtered++;
        cpu_count(s, &p->others, &p->nothers, ev->cpu, c, e);
        return;
    }
    cpu_count(s, &s->cpus, &s->ncpus, ev->cpu, c, e);
    if (hs == HOLD_BACKWARDS && !s->backwards_hold++) {
        s->backwards_first_ns = ns;
        s->backwards_first_cpu = ev->cpu;
    }
    if (hs == HOLD_IMPOSSIBLE && !s->impossible_hold++) {
        s->impossible_first_ns = ns;
        s->impossible_first_cpu = ev->cpu;
        s->impossible_first_acquire = e->acquire_time;
        s->impossible_first_release = e->release_time;
    }
    if (hs == HOLD_OK && s->o.params.has_hold_threshold && s->o.params.spin_lock_hold_threshold &&
        hold == s->o.params.spin_lock_hold_threshold)
        s->hold_at_threshold++;
    acc_add(&s->total.a, e, c, w, hold, hs);
    seen_put(s, TOTAL_CELL, 0, e->thread_id);
    seen_put(s, TOTAL_CELL, 1, ev->cpu);
    cell *x = cell_of(s, e);
    if (!x) {
        s->cells_dropped++;
        s->values_dropped++;
        return;
    }
    acc_add(&x->a, e, c, w, hold, hs);
    if (!e->interrupt_count && hs == HOLD_OK) value_put(s, &x->hold, hold);
    value_put(s, &x->wait, e->wait_time_in_cycles);
    seen_put(s, (uint64_t)(x - p->cells), 0, e->thread_id);
    seen_put(s, (uint64_t)(x - p->cells), 1, ev->cpu);
}

/* ---- finish ---------------------------------------------------------------------------- */

enum { K_LOCK = 0, K_CALLER, K_PAIR, K_MODE, K_TOTAL };

static uint32_t group_of(const struct etl_spinlocks_priv *p, unsigned kind, size_t cellix)
{
    if (cellix == TOTAL_CELL) return 0;
    const cell *c = &p->cells[cellix];
    switch (kind) {
    case K_LOCK: return c->lock;
    case K_CALLER: return c->caller;
    case K_PAIR: return c->pair;
    default: return c->mode;
    }
}

static uint64_t rank_of(uint64_t n, unsigned per_mille)
{
    uint64_t r = (per_mille * n + 999) / 1000;
    return r < 1 ? 1 : r;
}

/* Distinct TIDs and CPUs per group of a kind, into a pool the groups point into. */
static etl_status distinct(etl_spinlocks *s, unsigned kind, etl_spin_group *g, size_t ng)
{
    struct etl_spinlocks_priv *p = s->priv;
    etl_idmap *m = &p->seen;
    size_t n = 0;
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].val != ETL_IDMAP_EMPTY && ((m->slots[i].key >> 33) == TOTAL_CELL) == (kind == K_TOTAL)) n++;
    uint64_t *k = malloc((n ? n : 1) * sizeof *k);
    if (!k) return ETL_E_NOMEM;
    size_t j = 0;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].val == ETL_IDMAP_EMPTY) continue;
        uint64_t key = m->slots[i].key, cx = key >> 33;
        if ((cx == TOTAL_CELL) != (kind == K_TOTAL)) continue;
        k[j++] = (uint64_t)group_of(p, kind, (size_t)cx) << 33 | (key & 0x1FFFFFFFFull);
    }
    etl_sort_u64(k, n);
    uint32_t *pool = malloc((n ? n : 1) * sizeof *pool);
    if (!pool) {
        free(k);
        return ETL_E_NOMEM;
    }
    p->pools[kind] = pool;
    size_t np = 0;
    for (size_t i = 0; i < n; i++) {
        if (i && k[i] == k[i - 1]) continue;
        uint64_t gi = k[i] >> 33;
        unsigned what = (unsigned)(k[i] >> 32) & 1;
        if (gi >= ng) continue;
        etl_spin_group *x = &g[gi];
        pool[np] = (uint32_t)k[i];
        if (what == 0) {
            if (!x->nthreads) x->tids = &pool[np];
            x->nthreads++;
        } else {
            if (!x->ncpus) x->cpus = &pool[np];
            x->ncpus++;
        }
        np++;
    }
    free(k);
    return ETL_OK;
}

/* A weighted sum that saturated reads UINT64_MAX (sat_add, sat_mul): not the sum, so nothing made of it is known. */
static bool sum_known(const etl_spin_acc *a, uint64_t sum)
{
    return !a->saturated || sum != UINT64_MAX;
}

/* NCPU of the shares and rates: the trace's count, or more when events named more CPUs. */
static unsigned ncpu_of(const etl_spinlocks *s) { return s->o.ncpu > s->ncpus ? s->o.ncpu : (unsigned)s->ncpus; }

/*
 * The rates and shares are over the CPU time the file holds (known_ns): |W|·NCPU, less each CPU's time after its
 * last record in a file cut short, where no event could be seen. A rate is then estimates·NCPU / known_ns, the
 * machine's rate over the time known of it (estimates / |W| when every CPU is whole).
 */
static void ratios(const etl_spinlocks *s, etl_spin_group *g, unsigned ncpu)
{
    const etl_spin_acc *a = &g->a;
    int64_t known = s->known_ns;
    __int128 n = ncpu ? ncpu : 1;
    bool acq = sum_known(a, a->est_acq), cont = sum_known(a, a->est_contended), wait = sum_known(a, a->w_wait);
    bool wait_c = sum_known(a, a->w_wait_contended), spins = sum_known(a, a->w_spins);
    bool hold = sum_known(a, a->w_hold) && sum_known(a, a->w_nonirq);
    g->mean_wait = !acq || !wait ? ETL_SPIN_UNKNOWN : a->est_acq ? (uint64_t)div_round_sat(a->w_wait, a->est_acq) : 0;
    g->mean_hold = !hold ? ETL_SPIN_UNKNOWN : a->w_nonirq ? (uint64_t)div_round_sat(a->w_hold, a->w_nonirq) : 0;
    g->mean_spins_x1000 = !acq || !spins ? ETL_SPIN_UNKNOWN
                          : a->est_acq   ? (uint64_t)div_round_sat((__int128)a->w_spins * 1000, a->est_acq)
                                         : 0;
    /* cycles(W)·NCPU in thousandths of a cycle (ns x MHz), so the share is not cut twice */
    __int128 mcyc = (__int128)(known > 0 ? known : 0) * s->o.mhz;
    g->acq_pct = mcyc > 0 && wait ? div_round_sat((__int128)a->w_wait * 1000000000, mcyc) : -1;
    g->cont_pct = mcyc > 0 && wait_c ? div_round_sat((__int128)a->w_wait_contended * 1000000000, mcyc) : -1;
    /* -1: unknown, as acq_pct: a share of no acquisition, a rate over a 0 ns window (never a 0 made up). */
    g->collision_pct = a->est_acq && acq && cont ? div_round_sat((__int128)a->est_contended * 1000000, a->est_acq) : -1;
    g->acq_rate = known > 0 && acq ? div_round_sat((__int128)a->est_acq * 1000000000000 * n, known) : -1;
    g->cont_rate = known > 0 && cont ? div_round_sat((__int128)a->est_contended * 1000000000000 * n, known) : -1;
    g->spin_rate = known > 0 && spins ? div_round_sat((__int128)a->w_spins * 1000000000000 * n, known) : -1;
}

static int cmp_group(const void *pa, const void *pb)
{
    const etl_spin_group *x = pa, *y = pb;
    if (x->a.w_wait != y->a.w_wait) return x->a.w_wait > y->a.w_wait ? -1 : 1;
    if (x->a.w_hold != y->a.w_hold) return x->a.w_hold > y->a.w_hold ? -1 : 1;
    if (x->lock != y->lock) return x->lock < y->lock ? -1 : 1;
    if (x->caller != y->caller) return x->caller < y->caller ? -1 : 1;
    return x->mode < y->mode ? -1 : x->mode > y->mode;
}

/* Folds cells into groups of a kind: sums, percentiles over the union of their cells' values. */
static etl_status fold(etl_spinlocks *s, unsigned kind, etl_spin_group **out, size_t *nout)
{
    struct etl_spinlocks_priv *p = s->priv;
    size_t ng = kind == K_LOCK ? p->locks.n : kind == K_CALLER ? p->callers.n : kind == K_PAIR ? p->pairs.n
              : kind == K_MODE ? 64 : 1;
    etl_spin_group *g = calloc(ng ? ng : 1, sizeof *g);
    size_t *start = calloc(ng + 1, sizeof *start);
    size_t *order = malloc((p->ncell ? p->ncell : 1) * sizeof *order);
    const lat_vec **hv = malloc((p->ncell ? p->ncell : 1) * sizeof *hv);
    const lat_vec **wv = malloc((p->ncell ? p->ncell : 1) * sizeof *wv);
    etl_status st = ETL_E_NOMEM;
    if (!g || !start || !order || !hv || !wv) goto out;
    for (size_t i = 0; i < ng; i++) {
        if (kind == K_LOCK) g[i].lock = p->locks.v[i];
        else if (kind == K_CALLER) g[i].caller = p->callers.v[i];
        else if (kind == K_PAIR) {
            g[i].lock = p->locks.v[p->pairs.v[i] >> 32];
            g[i].caller = p->callers.v[(uint32_t)p->pairs.v[i]];
        } else if (kind == K_MODE) g[i].mode = (uint32_t)i;
    }
    /* Cells by group (counting sort). */
    for (size_t c = 0; c < p->ncell; c++) start[kind == K_TOTAL ? 1 : group_of(p, kind, c) + 1]++;
    for (size_t i = 0; i < ng; i++) start[i + 1] += start[i];
    size_t *pos = calloc(ng ? ng : 1, sizeof *pos);
    if (!pos) goto out;
    for (size_t c = 0; c < p->ncell; c++) {
        uint32_t gi = kind == K_TOTAL ? 0 : group_of(p, kind, c);
        order[start[gi] + pos[gi]++] = c;
    }
    free(pos);
    for (size_t i = 0; i < ng; i++) {
        size_t k = 0;
        uint64_t nh = 0, nw = 0;
        for (size_t j = start[i]; j < start[i + 1]; j++) {
            const cell *c = &p->cells[order[j]];
            if (kind != K_TOTAL) acc_merge(&g[i].a, &c->a);
            hv[k] = &c->hold;
            wv[k] = &c->wait;
            nh += lat_count(&c->hold);
            nw += lat_count(&c->wait);
            k++;
        }
        /* No value kept (none had one, or the budget ran out before the group's first): no percentile, not 0. */
        g[i].hold_p50 = nh ? lat_select(hv, k, rank_of(nh, 500)) : ETL_SPIN_UNKNOWN;
        g[i].hold_p99 = nh ? lat_select(hv, k, rank_of(nh, 990)) : ETL_SPIN_UNKNOWN;
        g[i].wait_p50 = nw ? lat_select(wv, k, rank_of(nw, 500)) : ETL_SPIN_UNKNOWN;
        g[i].wait_p99 = nw ? lat_select(wv, k, rank_of(nw, 990)) : ETL_SPIN_UNKNOWN;
    }
    if (kind == K_TOTAL) {
        g[0].a = s->total.a;
    }
    st = distinct(s, kind, g, ng);
    if (st != ETL_OK) goto out;
    unsigned ncpu = ncpu_of(s);
    size_t n = 0;
    for (size_t i = 0; i < ng; i++) {
        if (!g[i].a.events) continue;
        ratios(s, &g[i], ncpu);
        g[n++] = g[i];
    }
    if (kind != K_TOTAL) etl_sort(g, n, sizeof *g, cmp_group);
    *out = g;
    *nout = n;
    g = NULL;
out:
    free(g);
    free(start);
    free(order);
    free(hv);
    free(wv);
    return st;
}

/*
 * Bounds of the true counts (spec §5 "Exact scaling is impossible"). On each CPU the kernel logs
 * every N-th event of a running count that started at an unknown phase: k logged multiples mean
 * between N(k-1)+1 and N(k+1)-1 events (and at least those seen). An L event may also have been
 * such a multiple (one event per release), so the multiples are k..k+#L. Contentions with fewer than
 * S spins are never logged unless L: with S > 1 there is no upper bound.
 *
 * The count runs over every thread's acquisitions on the CPU: with a selection of threads (o.select
 * left some out), the bounds come from every event, then the selection's share of them: at least its
 * events seen, at most the CPU's maximum less the events of the others seen (any acquisition not
 * logged may have been the selection's). Narrower would be wrong: k of the selection's events on a
 * CPU say nothing of how many of its acquisitions went unlogged between other threads' multiples.
 */
static void bounds(etl_spinlocks *s)
{
    const etl_spinlock_info *pr = &s->o.params;
    const struct etl_spinlocks_priv *p = s->priv;
    uint64_t a = pr->spin_lock_acquire_sample_rate ? pr->spin_lock_acquire_sample_rate : 1;
    uint64_t m = pr->spin_lock_contention_sample_rate ? pr->spin_lock_contention_sample_rate : 1;
    bool s1 = pr->spin_lock_spin_threshold <= 1;
    unsigned ncpu = ncpu_of(s);
    if (p->nothers > ncpu) ncpu = (unsigned)p->nothers;
    bool sel = s->filtered > 0;
    etl_spin_bounds u = {0, 0, 0, true}, c = {0, 0, 0, s1};
    for (unsigned i = 0; i < ncpu; i++) {
        const etl_spin_cpu z = {0, 0, 0, 0, 0};
        etl_spin_cpu k = i < s->ncpus ? s->cpus[i] : z, o = i < p->nothers ? p->others[i] : z;
        /* The CPU's whole sequence: the selection's events and the others'. */
        etl_spin_cpu w = {k.u + o.u, k.c + o.c, k.l0 + o.l0, k.l1 + o.l1, k.x + o.x};
        uint64_t seen_u = w.u + w.l0, lo_u = w.u ? a * (w.u - 1) + 1 : 0;
        uint64_t hi_u = a * (w.u + w.l0 + 1) - 1;
        uint64_t seen_c = w.c + w.l1 + w.x, lo_c = w.c ? m * (w.c - 1) + 1 : 0;
        uint64_t hi_c = m * (w.c + w.l1 + 1) - 1;
        if (sel) {
            u.lo += k.u + k.l0;
            u.hi += hi_u - (o.u + o.l0);
            c.lo += k.c + k.l1 + k.x;
            c.hi += hi_c - (o.c + o.l1 + o.x);
        } else {
            u.lo += lo_u > seen_u ? lo_u : seen_u;
            u.hi += hi_u;
            c.lo += lo_c > seen_c ? lo_c : seen_c;
            c.hi += hi_c;
        }
        u.est += a * k.u + k.l0;
        c.est += m * k.c + k.l1 + k.x;
    }
    /* A lost event may have been a logged multiple: k seen still mean at least N(k-1)+1, no most. */
    if (s->lost) u.hi_known = c.hi_known = false;
    if (!u.hi_known) u.hi = 0;
    if (!c.hi_known) c.hi = 0;
    s->bounds_selection = sel;
    s->uncontended = u;
    s->contended = c;
    bool both = u.hi_known && c.hi_known;
    s->acquisitions = (etl_spin_bounds){u.est + c.est, u.lo + c.lo, both ? u.hi + c.hi : 0, both};
}

void etl_spinlocks_losses(etl_spinlocks *s, const etl_reader *r, const etl_stats *damage)
{
    const etl_logfile_header *h = etl_reader_header(r);
    if (h->events_lost || h->buffers_lost) s->lost |= ETL_SPIN_LOST_HEADER;
    for (size_t i = 0; i < etl_reader_buffer_count(r); i++)
        if (etl_reader_buffer_flags(r, i) & (ETL_BUFFER_FLAG_EVENTS_LOST | ETL_BUFFER_FLAG_BUFFER_LOST)) {
            s->lost |= ETL_SPIN_LOST_FLAGGED;
            break;
        }
    if ((damage && etl_stats_damaged(damage)) || etl_stats_damaged(etl_reader_stats_get(r)))
        s->lost |= ETL_SPIN_LOST_DAMAGED;
    /* A file cut short holds each CPU until its last record: the rates are over that time (ratios). */
    struct etl_spinlocks_priv *p = s->priv;
    unsigned ncpu = etl_reader_processors(r);
    if (!p || p->known_until || !ncpu) return;
    bool cut = false;
    for (unsigned k = 0; k < ncpu && !cut; k++) cut = etl_reader_cpu_known_until(r, k) != UINT64_MAX;
    if (!cut) return;
    p->known_until = malloc(ncpu * sizeof *p->known_until);
    if (!p->known_until) {
        p->oom = true; /* finish fails rather than give rates over time the file does not hold */
        return;
    }
    for (unsigned k = 0; k < ncpu; k++) p->known_until[k] = etl_reader_cpu_known_until(r, k);
    p->nknown = ncpu;
}

/* Σ over CPUs of the window's time (etl_spinlocks.window_cpu_ns) and of what the file holds of it (known_ns). */
static void known_cpu_ns(etl_spinlocks *s)
{
    const struct etl_spinlocks_priv *p = s->priv;
    int64_t w = s->o.v1 - s->o.v0, sum = 0, whole = 0;
    if (w < 0) w = 0;
    unsigned ncpu = ncpu_of(s);
    if (!ncpu) ncpu = 1; /* as the shares were: no CPU named, one */
    for (unsigned k = 0; k < ncpu; k++) {
        int64_t t = w;
        if (k < p->nknown && p->known_until[k] != UINT64_MAX) {
            /* 0: no record of the CPU at all; else its last record's time, in the window or not */
            int64_t e = p->known_until[k] ? etl_clock_ns(s->clock, p->known_until[k]) : s->o.v0;
            t = e < s->o.v1 ? e - s->o.v0 : w;
            if (t < 0) t = 0;
        }
        if (__builtin_add_overflow(sum, t, &sum)) sum = INT64_MAX;
        if (__builtin_add_overflow(whole, w, &whole)) whole = INT64_MAX;
    }
    s->known_ns = sum;
    s->window_cpu_ns = whole;
}

static etl_status spinlocks_finish(etl_spinlocks *s, int64_t end_ns);

etl_status etl_spinlocks_finish(etl_spinlocks *s, int64_t end_ns)
{
    struct etl_spinlocks_priv *p = s->priv;
    if (!p) return ETL_E_INVALID_ARG; /* not initialised, or init failed */
    if (!p->finished) {
        p->finish_st = spinlocks_finish(s, end_ns);
        p->finished = true;
    }
    return p->finish_st;
}

static etl_status spinlocks_finish(etl_spinlocks *s, int64_t end_ns)
{
    struct etl_spinlocks_priv *p = s->priv;
    if (p->oom) return ETL_E_NOMEM;
    etl_window_clip(&s->o.v0, &s->o.v1, end_ns);
    known_cpu_ns(s);
    for (size_t i = 0; i < p->ncell; i++) {
        lat_sort(&p->cells[i].hold);
        lat_sort(&p->cells[i].wait);
    }
    etl_status st;
    etl_spin_group *t = NULL;
    size_t nt = 0;
    if ((st = fold(s, K_LOCK, &s->locks, &s->nlocks)) != ETL_OK ||
        (st = fold(s, K_CALLER, &s->callers, &s->ncallers)) != ETL_OK ||
        (st = fold(s, K_PAIR, &s->pairs, &s->npairs)) != ETL_OK ||
        (st = fold(s, K_MODE, &s->modes, &s->nmodes)) != ETL_OK || (st = fold(s, K_TOTAL, &t, &nt)) != ETL_OK)
        return st;
    if (nt) s->total = t[0];
    else {
        unsigned ncpu = ncpu_of(s);
        ratios(s, &s->total, ncpu);
        s->total.hold_p50 = s->total.hold_p99 = s->total.wait_p50 = s->total.wait_p99 = ETL_SPIN_UNKNOWN;
    }
    free(t);
    bounds(s);
    return ETL_OK;
}

void etl_spinlocks_free(etl_spinlocks *s)
{
    if (!s) return; /* as the handles' close: a cleanup path may free what it never made */
    struct etl_spinlocks_priv *p = s->priv;
    if (p) {
        for (size_t i = 0; i < p->ncell; i++) {
            lat_free(&p->cells[i].hold);
            lat_free(&p->cells[i].wait);
        }
        free(p->cells);
        addr_tab *tabs[] = {&p->locks, &p->callers, &p->pairs};
        for (unsigned i = 0; i < 3; i++) {
            etl_idmap_free(&tabs[i]->map);
            free(tabs[i]->v);
        }
        etl_idmap_free(&p->cell_map);
        etl_idmap_free(&p->seen);
        free(p->others);
        free(p->known_until);
        for (unsigned i = 0; i < 5; i++) free(p->pools[i]);
        free(p);
    }
    free(s->locks);
    free(s->callers);
    free(s->pairs);
    free(s->modes);
    free(s->cpus);
    memset(s, 0, sizeof *s);
}

/* ---- the sampling parameters ----------------------------------------------------------------- */

void etl_spin_params_init(etl_spin_params *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->p = etl_spinlock_info_defaults();
    sp->p.has_hold_threshold = true;
}

void etl_spin_params_for_trace(etl_spin_params *sp, const etl_logfile_header *h)
{
    if (sp->src[3] != ETL_SPIN_SRC_GIVEN && (h->os_major < 6 || (h->os_major == 6 && h->os_minor < 3))) {
        sp->p.spin_lock_hold_threshold = 0;
        sp->src[3] = ETL_SPIN_SRC_NONE_BEFORE_8_1;
    }
}

const char *etl_spin_param_source(unsigned src)
{
    return src == ETL_SPIN_SRC_GIVEN ? "given" : src == ETL_SPIN_SRC_NONE_BEFORE_8_1 ? "none before Windows 8.1" : "default";
}

bool etl_spin_params_assumed(const etl_spin_params *sp)
{
    for (unsigned i = 0; i < 4; i++)
        if (sp->src[i] != ETL_SPIN_SRC_GIVEN) return true;
    return false;
}

bool etl_spinlocks_rates_implausible(const etl_spinlocks *s)
{
    /* acq_pct is in ten-thousandths of a percent; a Σw·wait past 2^64 cycles is more than any window's CPUs have
     * (195 years of one at 3 GHz), though its share is not known */
    return s->total.acq_pct > 100 * 10000 || !sum_known(&s->total.a, s->total.a.w_wait);
}

unsigned etl_spin_top_shares(const uint64_t *h, unsigned n, uint64_t total, unsigned idx[3], int64_t pct[3])
{
    unsigned k = 0;
    for (; total && k < 3; k++) {
        unsigned best = n;
        for (unsigned i = 0; i < n; i++) {
            bool taken = false;
            for (unsigned j = 0; j < k; j++) taken |= idx[j] == i;
            if (!taken && h[i] && (best == n || h[i] > h[best])) best = i;
        }
        if (best == n) break;
        idx[k] = best;
        pct[k] = div_round_sat((__int128)h[best] * 100, total);
    }
    return k;
}

const char *etl_spin_lost_text(uint32_t lost, char *out, size_t cap)
{
    snprintf(out, cap, "the trace lost events (%s%s%s%s%s): a lost event may have been a logged one, so the true "
             "counts have no upper bound",
             lost & ETL_SPIN_LOST_HEADER ? "EventsLost or BuffersLost in the header" : "",
             lost & ETL_SPIN_LOST_HEADER && lost & ~ETL_SPIN_LOST_HEADER ? "; " : "",
             lost & ETL_SPIN_LOST_FLAGGED ? "buffers flagged EVENTS_LOST or BUFFER_LOST" : "",
             lost & ETL_SPIN_LOST_FLAGGED && lost & ETL_SPIN_LOST_DAMAGED ? "; " : "",
             lost & ETL_SPIN_LOST_DAMAGED ? "buffers missing, damaged or cut" : "");
    return out;
}

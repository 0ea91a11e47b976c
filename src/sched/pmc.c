/*
 * pmc.c - PMC counters per thread and process (spec analyses.md §6).
 *
 * A CSwitch may carry up to 7 counters read on its CPU at the switch; they are
 * cumulative per CPU. The model's row for a slice [SI, NSO) holds both
 * switches (in, out): when both carry counters, out - in of each counter is
 * what the slice's thread (the observed one, the idle thread too) spent. A
 * counter that went backwards drops the whole slice (pmc_counter_reset), so
 * the ratios are always over the same slices; so does a pair of switches with
 * different counter counts, and a jump no CPU can make (ETL_PMC_MAX_HZ,
 * pmc_implausible). The head slice (no switch-in) and the tail slice (no
 * switch-out) get nothing. A slice counts in the window when SI does.
 *
 * Memory: sums per thread instance and per CPU; nothing per row.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/sat.h"
#include "base/sort.h"
#include "etlkit/pmc.h"
#include "base/opts.h"

struct etl_pmc_priv {
    etl_pmc_sums *t;      /* by instance */
    size_t cap;
    etl_pmc_sums idle;
    bool oom;             /* a sum could not grow: finish fails */
    bool finished;        /* finish ran: a second call returns its status and changes nothing */
    etl_status finish_st;
};

static const struct {
    const char *name;
    etl_pmc_kind k;
} kind_names[] = {
    {"cycles", ETL_PMC_CYCLES},
    {"cpu-cycles", ETL_PMC_CYCLES},
    {"instructions", ETL_PMC_INSTRUCTIONS},
    {"inst", ETL_PMC_INSTRUCTIONS},
    {"instr", ETL_PMC_INSTRUCTIONS},
    {"llc", ETL_PMC_LLC_MISSES},
    {"llc-misses", ETL_PMC_LLC_MISSES},
    {"cache-misses", ETL_PMC_LLC_MISSES},
    {"branch", ETL_PMC_BRANCH_MISSES},
    {"branch-misses", ETL_PMC_BRANCH_MISSES},
    {"branch-mispredicts", ETL_PMC_BRANCH_MISSES},
    {"branches", ETL_PMC_BRANCHES},
    {"branch-instructions", ETL_PMC_BRANCHES},
};

etl_pmc_kind etl_pmc_kind_from_name(const char *name)
{
    for (size_t i = 0; i < sizeof kind_names / sizeof kind_names[0]; i++)
        if (strcasecmp(name, kind_names[i].name) == 0) return kind_names[i].k;
    return ETL_PMC_OTHER;
}

const char *etl_pmc_kind_name(etl_pmc_kind k)
{
    switch (k) {
    case ETL_PMC_CYCLES: return "cycles";
    case ETL_PMC_INSTRUCTIONS: return "instructions";
    case ETL_PMC_LLC_MISSES: return "llc";
    case ETL_PMC_BRANCH_MISSES: return "branch";
    case ETL_PMC_BRANCHES: return "branches";
    default: return "other";
    }
}

void etl_pmc_options_init(etl_pmc_options *o)
{
    memset(o, 0, sizeof *o);
    o->sz = sizeof *o;
    o->nkinds = 4;
    o->kinds[0] = ETL_PMC_CYCLES;
    o->kinds[1] = ETL_PMC_INSTRUCTIONS;
    o->kinds[2] = ETL_PMC_LLC_MISSES;
    o->kinds[3] = ETL_PMC_BRANCH_MISSES;
}

etl_status etl_pmc_init(etl_pmc *p, const etl_sched *model, const etl_pmc_options *o)
{
    memset(p, 0, sizeof *p);
    p->model = model;
    etl_pmc_options_init(&p->o);
    etl_opts_take(&p->o, sizeof p->o, o);
    if (p->o.nkinds > ETL_PMC_MAX) p->o.nkinds = ETL_PMC_MAX;
    for (unsigned k = p->o.nkinds; k < ETL_PMC_MAX; k++) p->o.kinds[k] = ETL_PMC_OTHER;
    p->priv = calloc(1, sizeof *p->priv);
    return p->priv ? ETL_OK : ETL_E_NOMEM;
}

int etl_pmc_slot(const etl_pmc *p, etl_pmc_kind k)
{
    for (unsigned i = 0; i < p->o.nkinds && i < ETL_PMC_MAX; i++)
        if (p->o.kinds[i] == k) return (int)i;
    return -1;
}

static void sums_add(etl_pmc_sums *d, const etl_pmc_sums *x, unsigned n)
{
    d->slices += x->slices;
    if (__builtin_add_overflow(d->cpu_ns, x->cpu_ns, &d->cpu_ns)) d->cpu_ns = INT64_MAX;
    d->saturated |= x->saturated;
    d->partial |= x->partial;
    for (unsigned k = 0; k < n; k++)
        if (__builtin_add_overflow(d->delta[k], x->delta[k], &d->delta[k])) {
            d->delta[k] = UINT64_MAX; /* not the sum: said, so that it is not read as one */
            d->saturated |= (uint8_t)(1u << k);
        }
}

static etl_pmc_sums *thread_sums(etl_pmc *p, uint32_t i)
{
    struct etl_pmc_priv *v = p->priv;
    if (i == ETL_SCHED_IDLE) return &v->idle;
    if (i >= ETL_SCHED_NONE) return NULL;
    if (i >= v->cap) {
        size_t cap = v->cap ? v->cap : 256;
        while (cap <= i) cap *= 2;
        /* calloc, not realloc and memset: the zero pages of the new tail take no memory until used. */
        etl_pmc_sums *t = calloc(cap, sizeof *t);
        if (!t) return NULL;
        if (v->cap) memcpy(t, v->t, v->cap * sizeof *t);
        free(v->t);
        v->t = t;
        v->cap = cap;
    }
    return &v->t[i];
}

void etl_pmc_add(void *ctx, const etl_sched_row *row)
{
    etl_pmc *p = ctx;
    if (!p->priv) return;
    const etl_cswitch *in = row->in, *out = row->out;
    /* The columns are every row's counters; the switches are counted over what the slices are: the window. */
    if (in && (in->known & ETL_CSW_PMC) && in->pmc_count > p->counters) p->counters = in->pmc_count;
    if (!in) return; /* the head slice: no switch-in */
    if (row->si < p->o.v0 || (p->o.v1 > p->o.v0 && row->si >= p->o.v1)) return;
    if (in->known & ETL_CSW_PMC) p->switches_pmc++;
    else p->switches_no_pmc++;
    if (!out) return; /* the tail slice: no counter at its end */
    if (!(in->known & ETL_CSW_PMC) || !(out->known & ETL_CSW_PMC)) {
        p->slices_unpaired++;
        return;
    }
    if (in->pmc_count != out->pmc_count) {
        p->pmc_count_mismatch++;
        return;
    }
    /* A slice of no known thread (the model's unknown slice across a lost buffer): its counters ran over
     * what the file lost, so it counts nowhere, not in its CPU's or the total's sums either. */
    if (row->new_thread == ETL_SCHED_NONE) {
        p->slices_unknown++;
        return;
    }
    unsigned n = in->pmc_count < ETL_PMC_MAX ? in->pmc_count : ETL_PMC_MAX;
    etl_pmc_sums one;
    memset(&one, 0, sizeof one);
    for (unsigned k = 0; k < n; k++) {
        if (out->pmc[k] < in->pmc[k]) {
            p->pmc_counter_reset++;
            return;
        }
        one.delta[k] = out->pmc[k] - in->pmc[k];
    }
    /* The most cycles the slice can hold (ETL_PMC_MAX_HZ), and the most of any per-cycle event. */
    int64_t dur = row->nso > row->si ? row->nso - row->si : 0;
    unsigned __int128 max_cy = ((unsigned __int128)dur + ETL_PMC_SLACK_NS) * ETL_PMC_MAX_HZ / 1000000000u;
    for (unsigned k = 0; k < n; k++) {
        etl_pmc_kind kind = k < p->o.nkinds ? p->o.kinds[k] : ETL_PMC_OTHER;
        if (kind == ETL_PMC_OTHER) continue;
        unsigned __int128 lim = kind == ETL_PMC_CYCLES ? max_cy : max_cy * ETL_PMC_MAX_PER_CYCLE;
        if (one.delta[k] <= lim) continue;
        if (!p->pmc_implausible++ || row->si < p->implausible_first.si) {
            p->implausible_first.si = row->si;
            p->implausible_first.nso = row->nso;
            p->implausible_first.cpu = row->cpu;
            p->implausible_first.slot = k;
            p->implausible_first.delta = one.delta[k];
        }
        return;
    }
    one.slices = 1;
    one.cpu_ns = row->nso - row->si;
    one.partial = (uint8_t)(0x7Fu & ~((1u << n) - 1)); /* the slots this slice has no count of */
    /* Out of memory fails finish: a total that is not the sum of its rows is not printed. */
    etl_pmc_sums *t = thread_sums(p, row->new_thread);
    if (!t) {
        p->priv->oom = true;
        return;
    }
    if (row->cpu >= p->ncpus) {
        size_t nc = (size_t)row->cpu + 1;
        etl_pmc_sums *c = realloc(p->cpus, nc * sizeof *c);
        if (!c) {
            p->priv->oom = true;
            return;
        }
        memset(c + p->ncpus, 0, (nc - p->ncpus) * sizeof *c);
        p->cpus = c;
        p->ncpus = nc;
    }
    sums_add(t, &one, n);
    sums_add(&p->cpus[row->cpu], &one, n);
    sums_add(&p->total, &one, n);
    p->slices_by_count[n]++;
}

/* Adds what one thread of etl_sched_percpu_run gathered into into, from's index i as into's map[i]. */
static etl_status pmc_merge(etl_pmc *into, const etl_pmc *from, const uint32_t *map, size_t n)
{
    const struct etl_pmc_priv *f = from->priv;
    if (!f || f->oom || !into->priv) return ETL_E_NOMEM;
    for (size_t i = 0; i < f->cap && i < n; i++) {
        if (!f->t[i].slices) continue;
        etl_pmc_sums *t = thread_sums(into, map[i]);
        if (!t) return ETL_E_NOMEM;
        sums_add(t, &f->t[i], ETL_PMC_MAX);
    }
    sums_add(&into->priv->idle, &f->idle, ETL_PMC_MAX);
    if (from->ncpus > into->ncpus) {
        etl_pmc_sums *c = realloc(into->cpus, from->ncpus * sizeof *c);
        if (!c) return ETL_E_NOMEM;
        memset(c + into->ncpus, 0, (from->ncpus - into->ncpus) * sizeof *c);
        into->cpus = c;
        into->ncpus = from->ncpus;
    }
    for (size_t c = 0; c < from->ncpus; c++) sums_add(&into->cpus[c], &from->cpus[c], ETL_PMC_MAX);
    sums_add(&into->total, &from->total, ETL_PMC_MAX);
    if (from->counters > into->counters) into->counters = from->counters;
    into->switches_pmc += from->switches_pmc;
    into->switches_no_pmc += from->switches_no_pmc;
    into->slices_unpaired += from->slices_unpaired;
    into->slices_unknown += from->slices_unknown;
    into->pmc_counter_reset += from->pmc_counter_reset;
    into->pmc_count_mismatch += from->pmc_count_mismatch;
    for (unsigned k = 0; k <= ETL_PMC_MAX; k++) into->slices_by_count[k] += from->slices_by_count[k];
    if (from->pmc_implausible && (!into->pmc_implausible || from->implausible_first.si < into->implausible_first.si))
        into->implausible_first = from->implausible_first;
    into->pmc_implausible += from->pmc_implausible;
    return ETL_OK;
}

static void *percpu_open(void *ctx)
{
    const etl_pmc *p = ctx;
    etl_pmc *w = malloc(sizeof *w);
    if (w && etl_pmc_init(w, NULL, &p->o) != ETL_OK) {
        etl_pmc_free(w);
        free(w);
        w = NULL;
    }
    return w;
}

static etl_status percpu_merge(void *ctx, void *state, const etl_sched *model, const uint32_t *map, size_t n)
{
    etl_pmc *p = ctx;
    if (!p->model) p->model = model;
    return pmc_merge(p, state, map, n);
}

static void percpu_close(void *ctx, void *state)
{
    (void)ctx;
    etl_pmc_free(state);
    free(state);
}

void etl_pmc_percpu(etl_pmc *p, etl_sched_percpu_consumer *c)
{
    *c = (etl_sched_percpu_consumer){p, percpu_open, etl_pmc_add, percpu_merge, percpu_close, false};
}

/* The sort key: cycles when a slot is named so, else the first counter. */
static _Thread_local int g_sort_slot;

static int cmp_sums(const etl_pmc_sums *x, const etl_pmc_sums *y)
{
    uint64_t a = x->delta[g_sort_slot], b = y->delta[g_sort_slot];
    if (a != b) return a > b ? -1 : 1;
    return x->cpu_ns > y->cpu_ns ? -1 : x->cpu_ns < y->cpu_ns;
}

static int cmp_thread(const void *pa, const void *pb)
{
    const etl_pmc_thread *x = pa, *y = pb;
    int c = cmp_sums(&x->s, &y->s);
    return c ? c : x->thread < y->thread ? -1 : x->thread > y->thread;
}

static int cmp_process(const void *pa, const void *pb)
{
    const etl_pmc_process *x = pa, *y = pb;
    int c = cmp_sums(&x->s, &y->s);
    return c ? c : x->process < y->process ? -1 : x->process > y->process;
}

static etl_status pmc_finish(etl_pmc *p, int64_t end_ns);

etl_status etl_pmc_finish(etl_pmc *p, int64_t end_ns)
{
    struct etl_pmc_priv *v = p->priv;
    if (!v) return ETL_E_INVALID_ARG; /* not initialised, or init failed */
    if (!v->finished) {
        v->finish_st = pmc_finish(p, end_ns);
        v->finished = true;
    }
    return v->finish_st;
}

static etl_status pmc_finish(etl_pmc *p, int64_t end_ns)
{
    struct etl_pmc_priv *v = p->priv;
    if (v->oom || (p->model && etl_sched_status(p->model) != ETL_OK)) return ETL_E_NOMEM; /* rows were lost */
    etl_window_clip(&p->o.v0, &p->o.v1, end_ns);
    /* Every CPU of the trace has its sums, 0 too: one with no slice counted (a window or selection of none) is not
     * missing from the list. */
    size_t ncpu = p->model ? etl_sched_cpu_count(p->model) : 0;
    if (ncpu > p->ncpus) {
        etl_pmc_sums *c = realloc(p->cpus, ncpu * sizeof *c);
        if (!c) return ETL_E_NOMEM;
        memset(c + p->ncpus, 0, (ncpu - p->ncpus) * sizeof *c);
        p->cpus = c;
        p->ncpus = ncpu;
    }
    size_t nt = 0;
    for (size_t i = 0; i < v->cap; i++) nt += v->t[i].slices != 0;
    nt += v->idle.slices != 0;
    p->threads = calloc(nt ? nt : 1, sizeof *p->threads);
    /* Processes: one per process instance index, plus NONE and IDLE at the end. */
    size_t nproc = 0;
    if (p->model) etl_sched_processes(p->model, &nproc);
    etl_pmc_process *pr = calloc(nproc + 2, sizeof *pr);
    if (!p->threads || !pr) {
        free(pr);
        return ETL_E_NOMEM;
    }
    for (size_t i = 0; i < v->cap; i++) {
        if (!v->t[i].slices) continue;
        p->threads[p->nthreads++] = (etl_pmc_thread){(uint32_t)i, v->t[i]};
        const etl_sched_thread *t = p->model ? etl_sched_thread_at(p->model, (uint32_t)i) : NULL;
        size_t j = t && t->process < nproc ? t->process : nproc;
        sums_add(&pr[j].s, &v->t[i], ETL_PMC_MAX);
        pr[j].threads++;
    }
    if (v->idle.slices) {
        p->threads[p->nthreads++] = (etl_pmc_thread){ETL_SCHED_IDLE, v->idle};
        pr[nproc + 1].s = v->idle;
        pr[nproc + 1].threads = 1;
    }
    size_t n = 0;
    for (size_t j = 0; j < nproc + 2; j++) {
        if (!pr[j].s.slices) continue;
        pr[n] = pr[j];
        pr[n].process = j < nproc ? (uint32_t)j : j == nproc ? ETL_SCHED_NONE : ETL_SCHED_IDLE;
        n++;
    }
    p->processes = pr;
    p->nprocesses = n;
    int slot = etl_pmc_slot(p, ETL_PMC_CYCLES);
    g_sort_slot = slot >= 0 ? slot : 0;
    etl_sort(p->threads, p->nthreads, sizeof *p->threads, cmp_thread);
    etl_sort(p->processes, p->nprocesses, sizeof *p->processes, cmp_process);
    return ETL_OK;
}

static int64_t ratio(uint64_t num, uint64_t den, int64_t scale)
{
    if (!den) return -1;
    return div_round_sat((__int128)num * scale, den);
}

void etl_pmc_ratios_of(const etl_pmc *p, const etl_pmc_sums *s, etl_pmc_ratios *out)
{
    int cy = etl_pmc_slot(p, ETL_PMC_CYCLES), in = etl_pmc_slot(p, ETL_PMC_INSTRUCTIONS);
    int llc = etl_pmc_slot(p, ETL_PMC_LLC_MISSES), bm = etl_pmc_slot(p, ETL_PMC_BRANCH_MISSES);
    int br = etl_pmc_slot(p, ETL_PMC_BRANCHES);
    bool have_cy = cy >= 0 && (unsigned)cy < p->counters, have_in = in >= 0 && (unsigned)in < p->counters;
    bool have_llc = llc >= 0 && (unsigned)llc < p->counters, have_bm = bm >= 0 && (unsigned)bm < p->counters;
    bool have_br = br >= 0 && (unsigned)br < p->counters;
    /* A saturated or partial sum is not known: no ratio of it. */
    unsigned unknown = (unsigned)(s->saturated | s->partial);
    have_cy = have_cy && !(unknown >> cy & 1), have_in = have_in && !(unknown >> in & 1);
    have_llc = have_llc && !(unknown >> llc & 1), have_bm = have_bm && !(unknown >> bm & 1);
    have_br = have_br && !(unknown >> br & 1);
    /* No instruction over cycles that counted is an instructions counter that did not count (a switch alone retires
     * thousands), not an IPC of 0; CPI and the misses per 1,000 instructions have it as divisor. */
    out->ipc_x1000 = have_cy && have_in && s->delta[in] ? ratio(s->delta[in], s->delta[cy], 1000) : -1;
    /* CPI is 1/IPC (spec §6): none without cycles, as IPC; 0 cycles over any CPU time is a counter that
     * did not count (a PMU a VM does not run), not a CPU that did no cycle: no GHz either. */
    out->cpi_x1000 = have_cy && have_in && s->delta[cy] ? ratio(s->delta[cy], s->delta[in], 1000) : -1;
    out->llc_mpki_x1000 = have_llc && have_in ? ratio(s->delta[llc], s->delta[in], 1000000) : -1;
    out->branch_mpki_x1000 = have_bm && have_in ? ratio(s->delta[bm], s->delta[in], 1000000) : -1;
    out->branch_miss_pct_x100 = have_bm && have_br ? ratio(s->delta[bm], s->delta[br], 10000) : -1;
    out->ghz_x1000 = have_cy && s->cpu_ns > 0 && s->delta[cy] ? ratio(s->delta[cy], (uint64_t)s->cpu_ns, 1000) : -1;
}

void etl_pmc_free(etl_pmc *p)
{
    if (!p) return; /* as the handles' close: a cleanup path may free what it never made */
    if (p->priv) free(p->priv->t);
    free(p->priv);
    free(p->threads);
    free(p->processes);
    free(p->cpus);
    memset(p, 0, sizeof *p);
}

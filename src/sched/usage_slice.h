/*
 * usage_slice.h - the CPU-time part of a "CPU Usage (Precise)" row: what etl_usage_add
 * does with a row's slice [SI, NSO), and what the model CPU by CPU (percpu.c) does with
 * the same slice without building the row. One rule, two callers.
 */
#ifndef ETLKIT_SRC_SCHED_USAGE_SLICE_H
#define ETLKIT_SRC_SCHED_USAGE_SLICE_H

#include "etlkit/usage.h"
#include "base/sat.h"
#include "sched/latency.h"
#include "base/idmap.h"

struct etl_usage_priv {
    etl_usage_thread *t;  /* by instance */
    lat_vec *woken;       /* by instance: Ready values of switch-ins readied by a ReadyThread */
    lat_vec *other;       /* by instance: the other Ready values (preempted, quantum end) */
    uint8_t *seen;        /* by instance: has a row in the window */
    size_t cap;
    struct lat_spill *spill; /* the Ready values past the budget, once it was passed */
    uint32_t *spilled;    /* by instance, two each (woken, other): its values in the spill */
    uint64_t lat_values;  /* Ready values under 32 bits held in memory */
    bool spill_failed;    /* no spill to be had: all stays in memory */
    etl_status failed;    /* the first accumulation that failed: finish returns it */
    etl_diag diag;        /* and says why */
    etl_idmap bucket_map; /* cell key (usage.c: bucket << 32 | process + 1, or by thread) -> index in bucket_vals */
    int64_t bucket_k0;    /* the number of the window's first interval, from the trace start */
    int64_t *bucket_vals;
    uint64_t *bucket_keys;
    int64_t *bucket_cpu_idle; /* [bucket * bucket_stride + cpu], as bucket_cpu_busy: the rest is unknown */
    size_t nbv, capbv;
    struct etl_spool *cells;            /* the cells past ETL_USAGE_MAX_PROCESS_CELLS, once passed */
    struct etl_spool_stream *cells_out;
    bool percpu;          /* gathered CPU by CPU: no intervals */
    etl_usage_select_fn select; /* the threads counted (etl_usage_select), NULL: all */
    void *select_ctx;
    uint64_t lost, lost_prev; /* rows ETL_ROW_LOST with SI in the window (selected), and of those P unknown too */
};

/* The accumulators of thread instance i and of CPU c, grown on first use (NULL: out of memory). */
etl_usage_thread *etl_usage_grow_thread(etl_usage *u, uint32_t i);
etl_usage_cpu *etl_usage_grow_cpu(etl_usage *u, unsigned c);

static inline etl_usage_thread *usage_thread(etl_usage *u, uint32_t i)
{
    struct etl_usage_priv *p = u->priv;
    return i < p->cap && p->seen[i] ? &p->t[i] : etl_usage_grow_thread(u, i);
}

static inline etl_usage_cpu *usage_cpu(etl_usage *u, unsigned c)
{
    return c < u->ncpus ? &u->cpus[c] : etl_usage_grow_cpu(u, c);
}

/* Overlap of [a, b) with the window (v1 <= v0: no end); *ca = its start. */
static inline int64_t usage_clip(const etl_usage_options *o, int64_t a, int64_t b, int64_t *ca)
{
    if (a < o->v0) a = o->v0;
    if (o->v1 > o->v0 && b > o->v1) b = o->v1;
    *ca = a;
    int64_t d;
    return b > a ? (__builtin_sub_overflow(b, a, &d) ? INT64_MAX : d) : 0;
}

static inline bool usage_in_window(const etl_usage_options *o, int64_t t)
{
    return t >= o->v0 && (o->v1 <= o->v0 || t < o->v1);
}

/* The switch-out that ends a slice, as the CPU time needs it. */
/* A switch-out's kind: waiting (voluntary), runnable (involuntary), neither (Terminated, Initialized), unknown. */
enum { USAGE_OUT_NONE = 0, USAGE_OUT_WAITING, USAGE_OUT_RUNNABLE, USAGE_OUT_UNKNOWN, USAGE_OUT_OTHER };

static inline int usage_out_of(const etl_cswitch *out)
{
    if (!out) return USAGE_OUT_NONE;
    if (!(out->known & ETL_CSW_STATE)) return USAGE_OUT_UNKNOWN;
    switch (out->old_state) {
    case 5: case 6: case 9: return USAGE_OUT_WAITING;           /* Waiting, Transition, WaitingForProcessInSwap */
    case 1: case 2: case 3: case 7: return USAGE_OUT_RUNNABLE;  /* Ready, Running, Standby, DeferredReady */
    default: return USAGE_OUT_OTHER;                            /* Terminated: it left, neither kind (spec §2) */
    }
}

/* Where a slice falls in the window: its clipped start and length, and what it counts. */
typedef struct usage_cut {
    int64_t a, used;
    bool counted_in;   /* a switch-in in the window (not the head slice) */
    bool out_counted;  /* its switch-out is in the window */
} usage_cut;

static inline usage_cut usage_cut_of(const etl_usage_options *o, int64_t si, int64_t nso, bool head, int out)
{
    usage_cut k;
    k.used = usage_clip(o, si, nso, &k.a);
    k.counted_in = !head && usage_in_window(o, si);
    k.out_counted = out != USAGE_OUT_NONE && usage_in_window(o, nso);
    return k;
}

static inline void usage_cpu_add(etl_usage_cpu *c, uint32_t x, const usage_cut *k)
{
    if (x == ETL_SCHED_IDLE) add_sat(&c->idle_ns, k->used);
    else if (x == ETL_SCHED_NONE) add_sat(&c->unknown_ns, k->used);
    else add_sat(&c->busy_ns, k->used);
    if (k->counted_in) c->switches++;
}

/* A thread's part, on its six accumulators (an etl_usage_thread's, or a usage_acc's). */
static inline void usage_thread_add(int64_t *cpu_ns, uint64_t *switches, uint64_t *voluntary, uint64_t *involuntary,
                                    int64_t *first_ns, int64_t *last_ns, int out, const usage_cut *k)
{
    add_sat(cpu_ns, k->used);
    if (k->counted_in) ++*switches;
    if (k->used > 0 || k->counted_in) {
        if (*first_ns < 0 || k->a < *first_ns) *first_ns = k->a;
        if (k->a + k->used > *last_ns) *last_ns = k->a + k->used;
    }
    if (k->out_counted) {
        if (out == USAGE_OUT_WAITING) ++*voluntary;
        else if (out == USAGE_OUT_RUNNABLE) ++*involuntary;
    }
}

/*
 * Slice [si, nso) of thread x (an instance, ETL_SCHED_IDLE or ETL_SCHED_NONE) on CPU c,
 * a head slice or not, ended by a switch-out of kind out (USAGE_OUT_*): CPU time of the
 * CPU and the thread, switch counts, first and last times, voluntary and involuntary
 * switch-outs. Returns the thread's accumulators (NULL for idle and unknown threads),
 * and the clipped start in *a, its length in *used.
 */
static inline etl_usage_thread *usage_slice(etl_usage *u, uint16_t cpu, int64_t si, int64_t nso, uint32_t x,
                                            bool head, int out, int64_t *a, int64_t *used)
{
    u->rows++;
    *a = *used = 0;
    etl_usage_cpu *c = usage_cpu(u, cpu);
    if (!c) return NULL;
    usage_cut k = usage_cut_of(&u->o, si, nso, head, out);
    *a = k.a;
    *used = k.used;
    usage_cpu_add(c, x, &k);
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return NULL;
    etl_usage_thread *t = usage_thread(u, x);
    if (t) usage_thread_add(&t->cpu_ns, &t->switches, &t->voluntary, &t->involuntary, &t->first_ns, &t->last_ns, out, &k);
    return t;
}

/*
 * One thread's share of CPU time in a run CPU by CPU (percpu.c): the same accumulators
 * as etl_usage's, 48 bytes a thread instead of etl_usage_thread's 192, merged into an
 * etl_usage when the run ends.
 */
typedef struct usage_acc {
    int64_t cpu_ns;
    uint64_t switches, voluntary, involuntary;
    int64_t first_ns, last_ns;
} usage_acc;

typedef struct usage_part {
    etl_usage_options o;
    usage_acc *t;      /* by the run's thread index: valid where seen */
    uint8_t *seen;     /* has a row */
    size_t cap;
    etl_usage_cpu *cpus;
    size_t ncpus;
    uint64_t rows;
    bool oom;
} usage_part;

/* The part's accumulators of thread i and CPU c, grown on first use (NULL: out of memory). */
usage_acc *usage_part_grow_thread(usage_part *u, uint32_t i);
etl_usage_cpu *usage_part_grow_cpu(usage_part *u, unsigned c);

/* usage_slice into a part. */
static inline void usage_part_slice(usage_part *u, uint16_t cpu, int64_t si, int64_t nso, uint32_t x, bool head,
                                    int out)
{
    u->rows++;
    etl_usage_cpu *c = cpu < u->ncpus ? &u->cpus[cpu] : usage_part_grow_cpu(u, cpu);
    if (!c) return;
    usage_cut k = usage_cut_of(&u->o, si, nso, head, out);
    usage_cpu_add(c, x, &k);
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return;
    usage_acc *t = x < u->cap && u->seen[x] ? &u->t[x] : usage_part_grow_thread(u, x);
    if (!t) return;
    usage_thread_add(&t->cpu_ns, &t->switches, &t->voluntary, &t->involuntary, &t->first_ns, &t->last_ns, out, &k);
}

#endif

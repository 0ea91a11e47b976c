/*
 * usage_slice.h - the CPU-time part of a "CPU Usage (Precise)" row: what etl_usage_add
 * does with a row's slice [SI, NSO), and what the model CPU by CPU (percpu.c) does with
 * the same slice without building the row. One rule, two callers.
 */
#ifndef ETLKIT_SRC_SCHED_USAGE_SLICE_H
#define ETLKIT_SRC_SCHED_USAGE_SLICE_H

#include "etlkit/report.h"
#include "base/sat.h"
#include "sched/latency.h"
#include "base/idmap.h"

struct etl_usage_priv {
    etl_usage_thread *t;  /* by instance */
    lat_vec *woken;       /* by instance: Ready values of switch-ins readied by a ReadyThread */
    lat_vec *other;       /* by instance: the other Ready values (preempted, quantum end) */
    uint8_t *seen;        /* by instance: has a row in the window */
    size_t cap;
    etl_idmap bucket_map; /* (bucket << 32 | process + 1) -> index in bucket_vals */
    int64_t *bucket_vals;
    uint64_t *bucket_keys;
    size_t nbv, capbv;
};

/* The accumulators of thread instance i and of CPU c, grown on first use (NULL: out of memory). */
etl_usage_thread *etl_usage_grow_thread(etl_usage *u, uint32_t i);
etl_usage_cpu *etl_usage_grow_cpu(etl_usage *u, unsigned c);

static inline etl_usage_thread *usage_thread(etl_usage *u, uint32_t i)
{
    struct etl_usage_priv *p = u->priv;
    if (i >= p->cap) return etl_usage_grow_thread(u, i);
    p->seen[i] = 1;
    return &p->t[i];
}

static inline etl_usage_cpu *usage_cpu(etl_usage *u, unsigned c)
{
    return c < u->ncpus ? &u->cpus[c] : etl_usage_grow_cpu(u, c);
}

/* Overlap of [a, b) with the window; *ca = its start. */
static inline int64_t usage_clip(const etl_usage *u, int64_t a, int64_t b, int64_t *ca)
{
    if (a < u->o.v0) a = u->o.v0;
    if (u->o.v1 > u->o.v0 && b > u->o.v1) b = u->o.v1;
    *ca = a;
    int64_t d;
    return b > a ? (__builtin_sub_overflow(b, a, &d) ? INT64_MAX : d) : 0;
}

static inline bool usage_in_window(const etl_usage *u, int64_t t)
{
    return t >= u->o.v0 && (u->o.v1 <= u->o.v0 || t < u->o.v1);
}

/* The switch-out that ends a slice, as the CPU time needs it. */
enum { USAGE_OUT_NONE = 0, USAGE_OUT_WAITING, USAGE_OUT_RUNNABLE, USAGE_OUT_UNKNOWN };

static inline int usage_out_of(const etl_cswitch *out)
{
    if (!out) return USAGE_OUT_NONE;
    if (!(out->known & ETL_CSW_STATE)) return USAGE_OUT_UNKNOWN;
    return out->old_state == 5 || out->old_state == 6 || out->old_state == 9 ? USAGE_OUT_WAITING : USAGE_OUT_RUNNABLE;
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
    *used = usage_clip(u, si, nso, a);
    bool counted_in = !head && usage_in_window(u, si);
    if (x == ETL_SCHED_IDLE) add_sat(&c->idle_ns, *used);
    else if (x == ETL_SCHED_NONE) add_sat(&c->unknown_ns, *used);
    else add_sat(&c->busy_ns, *used);
    if (counted_in) c->switches++;
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return NULL;
    etl_usage_thread *t = usage_thread(u, x);
    if (!t) return NULL;
    add_sat(&t->cpu_ns, *used);
    if (counted_in) t->switches++;
    if (*used > 0 || counted_in) {
        if (t->first_ns < 0 || *a < t->first_ns) t->first_ns = *a;
        if (*a + *used > t->last_ns) t->last_ns = *a + *used;
    }
    if (out != USAGE_OUT_NONE && usage_in_window(u, nso)) {
        if (out == USAGE_OUT_WAITING) t->voluntary++;
        else if (out == USAGE_OUT_RUNNABLE) t->involuntary++;
    }
    return t;
}

#endif

/*
 * wakeups.c - who wakes idle CPUs (spec analyses.md §3, issue 10): every row
 * whose old thread is the idle thread is a wake-up of that CPU, charged to the
 * new thread's readier: the thread that ran on the readying CPU, `DPC` when
 * the ReadyThread says ExecutingDpc (the interrupted thread is no waker), the
 * idle thread itself, or `Unknown` (no ReadyThread: a preempted thread placed
 * again, a compact CPU's last switch, a trace without PERF_DISPATCHER).
 *
 * Memory: one counter per thread instance and per CPU; nothing per row.
 */
#include <stdlib.h>
#include <string.h>
#include "base/sort.h"
#include "etlkit/wakeups.h"
#include "base/opts.h"

struct etl_wakeups_priv {
    uint64_t *by_thread;   /* by instance */
    size_t cap;
    bool oom;              /* a count was lost: no answer (etl_wakeups_finish) */
    bool finished;         /* finish ran: a second call returns its status and changes nothing */
    etl_status finish_st;
};

etl_waker_kind etl_row_waker(const etl_sched_row *row)
{
    if (!(row->flags & ETL_ROW_READIED)) return ETL_WAKER_UNKNOWN;
    if (row->ready.flags & ETL_READY_EXECUTING_DPC) return ETL_WAKER_DPC;
    if (row->readier_thread == ETL_SCHED_IDLE) return ETL_WAKER_IDLE;
    if (row->readier_thread == ETL_SCHED_NONE) return ETL_WAKER_UNKNOWN;
    return ETL_WAKER_THREAD;
}

etl_status etl_wakeups_init(etl_wakeups *w, const etl_sched *model, const etl_wakeups_options *o)
{
    memset(w, 0, sizeof *w);
    if (!model) return ETL_E_INVALID_ARG; /* the readiers' threads and processes are the model's */
    w->model = model;
    etl_opts_take(&w->o, sizeof w->o, o);
    w->priv = calloc(1, sizeof *w->priv);
    return w->priv ? ETL_OK : ETL_E_NOMEM;
}

static bool in_window(const etl_wakeups *w, int64_t t)
{
    return t >= w->o.v0 && (w->o.v1 <= w->o.v0 || t < w->o.v1);
}

static unsigned idle_bucket(int64_t ns)
{
    int64_t lim = 10000; /* 10 us */
    unsigned b = 0;
    while (b < ETL_WAKEUP_IDLE_BUCKETS - 1 && ns >= lim) {
        b++;
        lim *= 10;
    }
    return b;
}

void etl_wakeups_add(void *ctx, const etl_sched_row *row)
{
    etl_wakeups *w = ctx;
    if (row->old_thread != ETL_SCHED_IDLE || row->new_thread == ETL_SCHED_IDLE || (row->flags & ETL_ROW_HEAD) ||
        !row->in || !in_window(w, row->si))
        return;
    w->total++;
    etl_waker_kind k = etl_row_waker(row);
    w->by_kind[k]++;
    if (k == ETL_WAKER_THREAD) {
        struct etl_wakeups_priv *p = w->priv;
        uint32_t x = row->readier_thread;
        if (x >= p->cap) {
            size_t cap = p->cap ? p->cap : 256;
            while (cap <= x) cap *= 2;
            uint64_t *v = realloc(p->by_thread, cap * sizeof *v);
            if (!v) {
                p->oom = true;
                goto rest;
            }
            memset(v + p->cap, 0, (cap - p->cap) * sizeof *v);
            p->by_thread = v;
            p->cap = cap;
        }
        p->by_thread[x]++;
    }
rest:;
    const etl_cswitch *e = row->in;
    if ((e->known & ETL_CSW_PREVIOUS_CSTATE) && !(e->source == ETL_CSW_SRC_CSWITCH && e->version < 2))
        w->cstate[e->previous_cstate]++;
    else
        w->cstate_unknown++;
    if (row->flags & ETL_ROW_OLD_SI_UNKNOWN) {
        w->idle_unknown++; /* idle since before the trace, or across a slice of no known thread */
    } else {
        int64_t idle = row->si - row->prev_switch;
        if (idle < 0) idle = 0;
        w->idle_hist[idle_bucket(idle)]++;
        w->idle_ns += idle;
    }
    if (row->cpu >= w->ncpus) {
        uint64_t *v = realloc(w->per_cpu, (row->cpu + 1u) * sizeof *v);
        if (!v) {
            w->priv->oom = true;
            return;
        }
        memset(v + w->ncpus, 0, (row->cpu + 1u - w->ncpus) * sizeof *v);
        w->per_cpu = v;
        w->ncpus = row->cpu + 1u;
    }
    w->per_cpu[row->cpu]++;
}

const char *etl_waker_kind_name(etl_waker_kind k)
{
    switch (k) {
    case ETL_WAKER_THREAD: return "Thread";
    case ETL_WAKER_IDLE: return "Idle";
    case ETL_WAKER_DPC: return "DPC";
    default: return "Unknown";
    }
}

static int by_count_desc(const void *a, const void *b)
{
    const etl_wakeup_waker *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->process != y->process) return x->process < y->process ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

static etl_status wakeups_finish(etl_wakeups *w);

etl_status etl_wakeups_finish(etl_wakeups *w)
{
    struct etl_wakeups_priv *p = w->priv;
    if (!p || !w->model) return ETL_E_INVALID_ARG; /* not initialised, or init failed */
    if (!p->finished) {
        p->finish_st = wakeups_finish(w);
        p->finished = true;
    }
    return p->finish_st;
}

static etl_status wakeups_finish(etl_wakeups *w)
{
    struct etl_wakeups_priv *p = w->priv;
    if (etl_sched_status(w->model) != ETL_OK || p->oom) return ETL_E_NOMEM; /* threads or counts lost: no answer */
    /* Every CPU of the trace has its count, 0 too: a CPU that never woke (or none of a selection's) is not missing. */
    size_t ncpu = etl_sched_cpu_count(w->model);
    if (ncpu > w->ncpus) {
        uint64_t *v = realloc(w->per_cpu, ncpu * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        memset(v + w->ncpus, 0, (ncpu - w->ncpus) * sizeof *v);
        w->per_cpu = v;
        w->ncpus = ncpu;
    }
    size_t n = 3;
    for (size_t i = 0; i < p->cap; i++) n += p->by_thread[i] != 0;
    size_t nproc_model = 0;
    etl_sched_processes(w->model, &nproc_model);
    w->threads = calloc(n, sizeof *w->threads);
    w->processes = calloc(n, sizeof *w->processes);
    uint32_t *pmap = malloc((nproc_model + 1) * sizeof *pmap);
    if (!w->threads || !w->processes || !pmap) {
        free(pmap);
        return ETL_E_NOMEM;
    }
    for (size_t i = 0; i <= nproc_model; i++) pmap[i] = UINT32_MAX;
    size_t k = 0, np = 0;
    for (size_t i = 0; i < p->cap; i++) {
        if (!p->by_thread[i]) continue;
        const etl_sched_thread *t = etl_sched_thread_at(w->model, (uint32_t)i);
        uint32_t proc = t && t->process < nproc_model ? t->process : ETL_SCHED_NONE;
        w->threads[k++] = (etl_wakeup_waker){ETL_WAKER_THREAD, (uint32_t)i, proc, p->by_thread[i]};
        size_t slot = proc == ETL_SCHED_NONE ? nproc_model : proc;
        if (pmap[slot] == UINT32_MAX) {
            pmap[slot] = (uint32_t)np;
            w->processes[np++] = (etl_wakeup_waker){ETL_WAKER_THREAD, ETL_SCHED_NONE, proc, 0};
        }
        w->processes[pmap[slot]].count += p->by_thread[i];
    }
    static const uint8_t others[] = {ETL_WAKER_DPC, ETL_WAKER_IDLE, ETL_WAKER_UNKNOWN};
    for (size_t j = 0; j < 3; j++) {
        uint64_t c = w->by_kind[others[j]];
        if (!c) continue;
        etl_wakeup_waker x = {others[j], ETL_SCHED_NONE, ETL_SCHED_NONE, c};
        w->threads[k++] = x;
        w->processes[np++] = x;
    }
    w->nthreads = k;
    w->nprocesses = np;
    etl_sort(w->threads, k, sizeof *w->threads, by_count_desc);
    etl_sort(w->processes, np, sizeof *w->processes, by_count_desc);
    free(pmap);
    return ETL_OK;
}

void etl_wakeups_free(etl_wakeups *w)
{
    if (!w) return; /* as the handles' close: a cleanup path may free what it never made */
    if (w->priv) free(w->priv->by_thread);
    free(w->priv);
    free(w->per_cpu);
    free(w->threads);
    free(w->processes);
    memset(w, 0, sizeof *w);
}

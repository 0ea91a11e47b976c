/*
 * etlkit/wakeups.h - who wakes idle CPUs (spec analyses.md §3): etl_wakeups_add is
 * an etl_sched_row_fn: every switch-in whose old thread is the idle thread,
 * attributed to the new thread's readier (a thread, a DPC or Unknown), per readier
 * thread and process, with the C-states left and the idle time before the wake.
 * Everything is in canonical nanoseconds, as etl_sched_row has them.
 */
#ifndef ETLKIT_WAKEUPS_H
#define ETLKIT_WAKEUPS_H

#include "etlkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Who readied a thread (spec §3: the readier thread, `DPC (CPU n)`, or `Unknown`). */
typedef enum etl_waker_kind {
    ETL_WAKER_THREAD = 0,  /* a thread instance (etl_sched_thread_at) */
    ETL_WAKER_IDLE,        /* the idle thread, without the ExecutingDpc flag */
    ETL_WAKER_DPC,         /* ReadyThread flag ExecutingDpc */
    ETL_WAKER_UNKNOWN      /* no ReadyThread for this switch-in, or nothing known ran on its CPU */
} etl_waker_kind;


#define ETL_WAKEUP_IDLE_BUCKETS 7  /* idle time before the wake: <10us <100us <1ms <10ms <100ms <1s >=1s */

typedef struct etl_wakeup_waker {
    uint8_t kind;          /* etl_waker_kind */
    uint32_t thread;       /* with ETL_WAKER_THREAD: instance; else ETL_SCHED_NONE */
    uint32_t process;      /* process instance, or ETL_SCHED_NONE (by_process rows of DPC / Unknown / Idle) */
    uint64_t count;
} etl_wakeup_waker;

typedef struct etl_wakeups_options {
    size_t sz;             /* sizeof(etl_wakeups_options) */
    int64_t v0, v1;        /* count switch-ins with v0 <= SI < v1; v1 <= v0: no upper bound */
} etl_wakeups_options;

typedef struct etl_wakeups {
    etl_wakeups_options o;
    const etl_sched *model;
    uint64_t total;                 /* switch-ins from the idle thread in the window */
    uint64_t by_kind[4];            /* by etl_waker_kind */
    uint64_t cstate[256];           /* PreviousCState of the switch-in, when known */
    uint64_t cstate_unknown;        /* compact records and CSwitch v1 carry none */
    uint64_t idle_hist[ETL_WAKEUP_IDLE_BUCKETS]; /* Old Switch-In Time of the idle thread */
    int64_t idle_ns;                /* sum of those idle times */
    uint64_t *per_cpu;              /* [ncpus]; after finish, every CPU of the model (0 for one that never woke) */
    size_t ncpus;
    /* after finish: descending count, ties by kind then instance */
    etl_wakeup_waker *threads;      /* one row per readier thread, plus DPC, Idle and Unknown rows */
    size_t nthreads;
    etl_wakeup_waker *processes;    /* the same summed per process instance */
    size_t nprocesses;
    struct etl_wakeups_priv *priv;
    /* Wake-ups whose idle time is not known (ETL_ROW_OLD_SI_UNKNOWN), in neither idle_hist nor idle_ns: a CPU's first
       switch, whose idle began before the trace, or one after a slice of no known thread (buffers missing). */
    uint64_t idle_unknown;
} etl_wakeups;

/* model is required (the readiers are its threads): ETL_E_INVALID_ARG without one (w zeroed: free is safe). */
ETL_API etl_status etl_wakeups_init(etl_wakeups *w, const etl_sched *model, const etl_wakeups_options *o);
/* An etl_sched_row_fn (ctx = the etl_wakeups). */
ETL_API void etl_wakeups_add(void *ctx, const etl_sched_row *row);
/*
 * The rows by readier. ETL_E_NOMEM: threads or counts were lost, no answer; ETL_E_INVALID_ARG: w not initialised.
 * Once finished, a later call changes nothing and returns the first call's status.
 */
ETL_API etl_status etl_wakeups_finish(etl_wakeups *w);
ETL_API void etl_wakeups_free(etl_wakeups *w);
/* The readier of a row as spec §3 classifies it (the row's new thread's ReadyThread). */
ETL_API etl_waker_kind etl_row_waker(const etl_sched_row *row);
/* "Thread", "Idle", "DPC" or "Unknown" (also for a value out of the enum). */
ETL_API const char *etl_waker_kind_name(etl_waker_kind k);

#ifdef __cplusplus
}
#endif
#endif

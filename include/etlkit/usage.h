/*
 * etlkit/usage.h - aggregations of the scheduler model's rows (spec analyses.md
 * §2): CPU time per thread, process and CPU, per interval, switch counts,
 * ready latency with exact nearest-rank percentiles, waits per reason and the
 * longest single intervals. Everything is in canonical nanoseconds and clipped
 * to a window [v0, v1).
 *
 * Feed it rows (etl_usage_add is an etl_sched_row_fn), then etl_usage_finish
 * computes percentiles and sorts; the results are plain arrays.
 */
#ifndef ETLKIT_USAGE_H
#define ETLKIT_USAGE_H

#include "etlkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Per-interval utilisation covers every interval of the window, at most this many
 * (fewer past 167 CPUs: ETL_USAGE_MAX_CPU_CELLS (interval, CPU) cells): finish refuses
 * more (ETL_E_RANGE) rather than leave any out; see etl_usage_intervals.
 */
#define ETL_USAGE_MAX_BUCKETS 100000
#define ETL_USAGE_MAX_CPU_CELLS (1u << 24)
/* (interval, process) cells held in memory while gathering, by default; past it they go to a temporary file. */
#define ETL_USAGE_MAX_PROCESS_CELLS (1u << 20)

/* Ready-latency statistics of one set of intervals. */
typedef struct etl_latency {
    uint64_t count;
    int64_t sum_ns;
    int64_t p50_ns, p90_ns, p99_ns, p999_ns, max_ns; /* nearest rank; 0 when count is 0: unknown, not 0 */
} etl_latency;

typedef struct etl_usage_thread {
    uint32_t thread;          /* instance index (etl_sched_thread_at) */
    int64_t cpu_ns;           /* CPU Usage (in view) */
    uint64_t switches;        /* switch-ins in the window */
    uint64_t voluntary;       /* switch-outs in a waiting state */
    uint64_t involuntary;     /* switch-outs runnable (preempted, quantum end) */
    int64_t first_ns, last_ns;/* first switch-in, last switch-out in the window (-1: none) */
    etl_latency ready;        /* `all` variant */
    etl_latency woken;        /* rows with a ReadyThread */
    uint64_t wait_count;
    int64_t wait_ns;
    int64_t wait_max_ns;
} etl_usage_thread;

typedef struct etl_usage_process {
    uint32_t process;         /* instance index, or ETL_SCHED_NONE for threads of no known process */
    int64_t cpu_ns;
    uint64_t switches;
    uint32_t threads;         /* threads with any row in the window */
    etl_latency ready;
    uint64_t wait_count;
    int64_t wait_ns;
} etl_usage_process;

typedef struct etl_usage_cpu {
    int64_t busy_ns, idle_ns, unknown_ns; /* unknown: a compact CPU's last slice, whose thread is not recorded */
    uint64_t switches;
} etl_usage_cpu;

typedef struct etl_usage_reason {
    uint8_t code;             /* KWAIT_REASON */
    uint64_t count;
    int64_t wait_ns, max_ns;
} etl_usage_reason;

/* One long interval (a wait or a ready delay). */
typedef struct etl_usage_interval {
    int64_t start_ns, dur_ns;
    uint32_t thread;          /* the thread that waited / was ready */
    uint32_t tid;
    uint16_t cpu;             /* where it was switched in */
    uint8_t reason;           /* wait reason (waits) */
    uint8_t has_readier;
    uint32_t readier_tid, readier_thread;
    uint16_t ready_cpu;
    uint8_t ready_flags;
} etl_usage_interval;

typedef struct etl_usage_options {
    size_t sz;
    int64_t v0, v1;           /* window, canonical ns; v1 <= v0: the whole trace; finish clips it to the end */
    uint32_t longest;         /* how many longest waits / ready delays to keep (default 10) */
    int64_t interval_ns;      /* > 0: utilisation per interval of this length, from the trace start */
    bool no_latency;          /* skip Ready values and percentiles (CPU time only: no memory per row) */
    /*
     * Bytes of Ready values kept in memory (4 a value); past it they go to a temporary file
     * and the percentiles are read from it in passes, exact all the same (0: 16 MiB).
     */
    size_t latency_budget;
    /* With interval_ns: each interval's busy time of this many processes, the first of processes[] (0: 10). */
    uint32_t interval_processes;
    /* (interval, process) cells held in memory while gathering (0: ETL_USAGE_MAX_PROCESS_CELLS). */
    uint32_t interval_cells_budget;
    /*
     * ready_hist_bins > 0: a histogram of the Ready values ready_all takes, filled in the same pass
     * (etl_usage.ready_hist): bin b counts the values v with ready_hist_lo[b] <= v < ready_hist_lo[b + 1]
     * (the last bin has no end, the first takes what is below it too); the lower edges ascend strictly, in ns
     * (else etl_usage_init refuses: ETL_E_INVALID_ARG).
     */
    const int64_t *ready_hist_lo;
    uint32_t ready_hist_bins;
} etl_usage_options;

/* One process's busy time in one interval (etl_usage.bucket_cells). */
typedef struct etl_usage_cell {
    uint32_t process;         /* index in processes[], below interval_processes */
    int64_t busy_ns;          /* > 0 */
} etl_usage_cell;

typedef struct etl_usage {
    etl_usage_options o;
    const etl_sched *model;
    etl_usage_thread *threads;   /* after finish: every thread with a row in the window */
    size_t nthreads;
    etl_usage_process *processes;
    size_t nprocesses;
    etl_usage_cpu *cpus;
    size_t ncpus;
    etl_usage_reason reasons[64]; /* by code; count 0 = none */
    etl_latency ready_all;       /* over every non-idle row */
    etl_latency woken_all;
    etl_usage_interval *longest_waits, *longest_ready; /* descending, n_* each */
    size_t n_longest_waits, n_longest_ready;
    uint64_t rows;
    /*
     * Per interval, after finish: every interval of the window, aligned to the trace start
     * (etl_usage_interval_bounds), the first and the last maybe shorter. Each CPU's busy ns, and the busy ns of the
     * first interval_processes processes of processes[], sparse: interval b's nonzero ones are
     * bucket_cells[bucket_first[b] .. bucket_first[b + 1]), by process index (see
     * etl_usage_interval_process_ns).
     */
    size_t nbuckets;
    uint64_t interval_cells_dropped; /* 0: no cell is dropped any more (kept for the report's JSON) */
    size_t bucket_stride;        /* the trace's CPU count */
    int64_t *bucket_cpu_busy;    /* [bucket * bucket_stride + cpu] */
    etl_usage_cell *bucket_cells;
    size_t *bucket_first;        /* nbuckets + 1 entries */
    struct etl_usage_priv *priv;
    uint64_t *ready_hist;        /* o.ready_hist_bins counts, when asked for */
} etl_usage;

/* v1 may be unknown until the end: pass v1 <= v0 and give the end to finish. */
ETL_API etl_status etl_usage_init(etl_usage *u, const etl_sched *model, const etl_usage_options *o);
/*
 * The threads to count (`waits --thread/--process`), set after init, before the first row: a row counts only when
 * select(ctx, its thread instance) is true, asked when the row is made, and idle and unknown slices then count
 * nowhere. A thread's process may be known only later (a thread adopted by the end rundown): `waits` decides
 * the selection on a first pass of the model (instance indices are the same on every pass of a trace). Every answer is then the selected threads' alone: threads,
 * processes, ready_all, woken_all, reasons, longest_* and the histogram; no CPU is told (ncpus 0: a CPU's idle
 * time is the machine's). ETL_E_INVALID_ARG with interval_ns (the intervals would read as the machine's busy
 * time); not for etl_usage_percpu (its merge fails with ETL_E_UNSUPPORTED: slices are not rows).
 */
typedef bool (*etl_usage_select_fn)(void *ctx, uint32_t thread);
ETL_API etl_status etl_usage_select(etl_usage *u, etl_usage_select_fn select, void *ctx);
/* An etl_sched_row_fn (ctx = the etl_usage). */
ETL_API void etl_usage_add(void *ctx, const etl_sched_row *row);
/*
 * A consumer for etl_sched_percpu_run that gathers into u, initialised with no model
 * (the run's model is set when the threads' shares are merged): CPU time, switches,
 * voluntary and involuntary switch-outs, first and last times, the fields cpu reads.
 * Not the Ready values or waits (the per-CPU rows do not carry them), nor intervals
 * (the process a slice counts for there is its thread's at the slice's time): with
 * interval_ns, finish fails with ETL_E_UNSUPPORTED.
 */
ETL_API void etl_usage_percpu(etl_usage *u, etl_sched_percpu_consumer *c);
/*
 * Computes percentiles, totals and orderings (threads and processes by CPU time, descending),
 * with the window clipped to end (the trace's end: nothing happens after it). ETL_E_INVALID_ARG: u not
 * initialised. Once finished, a later call changes nothing and returns the first call's status (end_ns is then not read).
 */
ETL_API etl_status etl_usage_finish(etl_usage *u, int64_t end_ns);
/*
 * Why the gathering or finish failed (a row that could not be counted makes every
 * answer unknown, so finish returns the first failure): out of memory, or the
 * temporary file of spilled Ready values (its directory and the system's reason).
 */
ETL_API const etl_diag *etl_usage_diag(const etl_usage *u);
/*
 * The intervals finish makes of the window it settles on for a trace ending at end_ns
 * (the window clipped to [v0, end_ns]): *n of them over *window_ns. Returns the most
 * it may make; when *n is more, finish fails with ETL_E_RANGE, and *fit_ns is the
 * shortest interval that makes no more.
 */
ETL_API uint64_t etl_usage_intervals(const etl_usage *u, int64_t end_ns, uint64_t *n, int64_t *window_ns, int64_t *fit_ns);
/* The most intervals over ncpus CPUs: ETL_USAGE_MAX_BUCKETS, or ETL_USAGE_MAX_CPU_CELLS / ncpus. */
ETL_API uint64_t etl_usage_max_intervals(size_t ncpus);
/*
 * Interval b of the window after finish: [t0 + k·interval_ns, t0 + (k+1)·interval_ns) ∩ [v0, v1)
 * (spec §2), aligned to the trace start, so the first and the last may be shorter.
 */
ETL_API void etl_usage_interval_bounds(const etl_usage *u, size_t b, int64_t *start_ns, int64_t *end_ns);
/*
 * Unknown ns of CPU c in interval b, after finish: the interval's time that is neither busy (bucket_cpu_busy) nor
 * idle: slices of no known thread, and time no slice covers (records lost, a file cut short), as etl_usage_cpu's
 * unknown_ns over the window.
 */
ETL_API int64_t etl_usage_interval_cpu_unknown_ns(const etl_usage *u, size_t b, size_t c);
/* Busy ns of process j (an index in processes[]) in interval b: 0 when none, or j is not kept. */
ETL_API int64_t etl_usage_interval_process_ns(const etl_usage *u, size_t b, size_t j);
ETL_API void etl_usage_free(etl_usage *u);
/*
 * Whether u's Waits can be known: only a switch-in readied by a ReadyThread has one (spec §1
 * rule 3), so with none in the window (a trace without ReadyThread events) every count and
 * time of waiting is unknown, not 0. A wait counted in the window is such a one too, its
 * switch-in past the window's end.
 */
static inline bool etl_usage_waits_known(const etl_usage *u)
{
    if (u->woken_all.count) return true;
    for (size_t i = 0; i < sizeof u->reasons / sizeof u->reasons[0]; i++)
        if (u->reasons[i].count) return true;
    return false;
}

/*
 * Switch-ins (of the selected threads) in the window whose Ready Time lost records made unknown (ETL_ROW_LOST),
 * which no Ready value or wait counts. In a trace without ReadyThread events, those whose previous switch-out was
 * lost alone (a preemption there would have given the Ready): the others lack it for want of ReadyThread events.
 * Known once the rows are in (after etl_usage_finish); 0 for a usage gathered CPU by CPU (no rows, no Ready).
 */
ETL_API uint64_t etl_usage_ready_lost(const etl_usage *u);

/* Nearest-rank percentile p/1000 (p = 500 for p50) of v[0..n) sorted ascending. */
ETL_API int64_t etl_percentile_sorted(const int64_t *v, size_t n, unsigned per_mille);

#ifdef __cplusplus
}
#endif
#endif

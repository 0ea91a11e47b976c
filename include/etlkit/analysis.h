/*
 * etlkit/analysis.h - the questions asked after "where did the CPU go" (spec
 * analyses.md §3): who wakes idle CPUs, why one thread was slow (its wait
 * chain), and what changed between two traces.
 *
 *   wakeups    etl_wakeups_add is an etl_sched_row_fn: every switch-in whose old
 *              thread is the idle thread, attributed to the new thread's readier
 *              (a thread, a DPC or Unknown), per readier thread and process,
 *              with the C-states left and the idle time before the wake.
 *   waitchain  a thread's time over [from, at] split into running, ready and
 *              waiting segments; a waiting segment readied by another thread
 *              descends into what that thread did meanwhile. Several passes
 *              over the trace, each streaming: the caller runs the model once
 *              per pass with etl_chain_row as its row callback, so memory holds
 *              only the rows of the threads on the chain, inside their intervals.
 *   compare    two etl_usage results (what `cpu` and `waits` print) matched by
 *              process and thread name, per second of window, and a tiny
 *              threshold language (--fail-if) for CI gates.
 *
 * Everything is in canonical nanoseconds, as etl_sched_row has them.
 */
#ifndef ETLKIT_ANALYSIS_H
#define ETLKIT_ANALYSIS_H

#include "etlkit/sched.h"
#include "etlkit/report.h"

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

/* ---- wakeups ------------------------------------------------------------------ */

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
    uint64_t *per_cpu;              /* [ncpus] */
    size_t ncpus;
    /* after finish: descending count, ties by kind then instance */
    etl_wakeup_waker *threads;      /* one row per readier thread, plus DPC, Idle and Unknown rows */
    size_t nthreads;
    etl_wakeup_waker *processes;    /* the same summed per process instance */
    size_t nprocesses;
    struct etl_wakeups_priv *priv;
} etl_wakeups;

ETL_API etl_status etl_wakeups_init(etl_wakeups *w, const etl_sched *model, const etl_wakeups_options *o);
/* An etl_sched_row_fn (ctx = the etl_wakeups). */
ETL_API void etl_wakeups_add(void *ctx, const etl_sched_row *row);
ETL_API etl_status etl_wakeups_finish(etl_wakeups *w);
ETL_API void etl_wakeups_free(etl_wakeups *w);
/* The readier of a row as spec §3 classifies it (the row's new thread's ReadyThread). */
ETL_API etl_waker_kind etl_row_waker(const etl_sched_row *row);

/* ---- waitchain ---------------------------------------------------------------- */

typedef enum etl_chain_state {
    ETL_CHAIN_RUNNING = 1,  /* [SI, NSO) */
    ETL_CHAIN_READY,        /* [RT, SI): readied or preempted, not yet running */
    ETL_CHAIN_WAITING,      /* [LSO, RT): switched out waiting, until readied */
    ETL_CHAIN_OFFCPU,       /* off the CPU, not split: no ReadyThread or no known previous switch-out */
    ETL_CHAIN_UNKNOWN       /* no row of the thread covers this time (before its first sight, lost events) */
} etl_chain_state;

/* Why a waiting segment was not descended into. */
typedef enum etl_chain_leaf {
    ETL_LEAF_NONE = 0,      /* not a waiting segment, or descended (child != UINT32_MAX) */
    ETL_LEAF_DPC,           /* readied from a DPC */
    ETL_LEAF_IDLE,          /* readier was the idle thread */
    ETL_LEAF_UNKNOWN,       /* readier unknown */
    ETL_LEAF_SHORT,         /* shorter than min_ns */
    ETL_LEAF_DEPTH,         /* the depth limit */
    ETL_LEAF_CYCLE,         /* the readier is already on the path */
    ETL_LEAF_NOMEM
} etl_chain_leaf;

typedef struct etl_chain_seg {
    uint8_t state;          /* etl_chain_state */
    uint8_t reason;         /* waiting / ready / off-CPU: the previous switch-out's wait reason */
    uint8_t has_reason;
    uint8_t leaf;           /* etl_chain_leaf */
    int64_t start, end;     /* canonical ns, end > start */
    uint16_t cpu;           /* the CPU of the switch-in that ended (or is) this segment */
    uint8_t waker;          /* etl_waker_kind, for waiting segments with a ReadyThread */
    uint8_t has_waker;
    uint32_t waker_thread;  /* ETL_WAKER_THREAD: its instance */
    uint32_t waker_tid;
    uint16_t ready_cpu;
    uint32_t child;         /* index of the node descended into, UINT32_MAX if none */
} etl_chain_seg;

/* One thread over one interval: segments[first .. first + count) tile [start, end) exactly. */
typedef struct etl_chain_node {
    uint32_t thread;        /* instance */
    uint32_t tid;
    int64_t start, end;
    uint32_t depth;         /* 0 for the root */
    uint32_t parent;        /* the parent node, UINT32_MAX for the root */
    uint32_t parent_seg;    /* the segment (index into segs) it explains, UINT32_MAX for the root */
    uint32_t first, count;  /* its segments in etl_chain.segs */
} etl_chain_node;

/* The critical path: every nanosecond of the root interval charged to the deepest segment covering it. */
typedef struct etl_chain_path {
    uint32_t thread;
    uint8_t state;          /* etl_chain_state (waiting: a leaf wait) */
    uint8_t reason, has_reason;
    uint32_t depth;
    int64_t ns;
} etl_chain_path;

typedef struct etl_chain_options {
    size_t sz;              /* sizeof(etl_chain_options) */
    uint32_t tid;           /* the thread; 0 with process set: the process's slowest interval */
    const char *process;    /* image name ("svchost" matches "svchost.exe") or decimal PID */
    bool has_at;
    int64_t at;             /* the end of the interval; default: the end of the longest off-CPU gap */
    bool has_from;
    int64_t from;           /* default: the start of the off-CPU gap before `at` */
    int64_t v0, v1;         /* the default search looks at switch-ins in [v0, v1) (v1 <= v0: all) */
    unsigned depth;         /* deepest descent; 0: the default, 8 */
    bool no_descent;        /* leaves only (--depth 0) */
    int64_t min_ns;         /* shortest wait descended into; 0: the default, 1 ms; < 0: any length */
} etl_chain_options;

typedef enum etl_chain_status {
    ETL_CHAIN_OK = 0,
    ETL_CHAIN_NO_THREAD,    /* no switch-in of the thread (or process) */
    ETL_CHAIN_NO_INTERVAL   /* the thread has no off-CPU gap, or --at is outside its life, or from >= at */
} etl_chain_status;

typedef struct etl_chain {
    etl_chain_options o;
    const etl_sched *model;  /* the model of the current pass (names of instances) */
    etl_chain_status status;
    unsigned passes;         /* passes done */
    etl_chain_node *nodes;   /* nodes[0] is the root; children after their parents */
    size_t nnodes;
    etl_chain_seg *segs;
    size_t nsegs;
    etl_chain_path *path;    /* descending ns; the sum is root.end - root.start */
    size_t npath;
    int64_t totals[6];       /* by etl_chain_state over the critical path */
    struct etl_chain_priv *priv;
} etl_chain;

/*
 * Usage:
 *     etl_chain_init(&c, &opts);
 *     while (etl_chain_next_pass(&c)) {
 *         open a model with on_row = etl_chain_row, ctx = &c; etl_chain_bind(&c, model);
 *         push every event (stop early when etl_chain_pass_done(&c)), finish the model;
 *         etl_chain_end_pass(&c);
 *     }
 *     c.status, c.nodes, c.segs, c.path ...
 *     etl_chain_free(&c);
 * Instances are numbered by the model in event order, so every pass sees the same indices.
 */
ETL_API etl_status etl_chain_init(etl_chain *c, const etl_chain_options *o);
ETL_API bool etl_chain_next_pass(etl_chain *c);
ETL_API void etl_chain_bind(etl_chain *c, const etl_sched *model);
ETL_API void etl_chain_row(void *ctx, const etl_sched_row *row);
/* True when the rows this pass needs have all been seen (the rest of the trace can be skipped). */
ETL_API bool etl_chain_pass_done(const etl_chain *c);
ETL_API etl_status etl_chain_end_pass(etl_chain *c);
ETL_API void etl_chain_free(etl_chain *c);
/*
 * Every pass on an open reader (each pass a new source and model over r; bias as
 * etl_sched_source_options). The last pass's model (names of the instances) goes
 * to *model when model is not NULL (close it with etl_sched_close), else is closed.
 */
ETL_API etl_status etl_chain_run(etl_reader *r, etl_chain *c, int bias, etl_sched **model);

ETL_API const char *etl_chain_state_name(unsigned state);  /* "running", "ready", "waiting", "off-cpu", "unknown" */
ETL_API const char *etl_chain_leaf_name(unsigned leaf);    /* "dpc", "idle", "unknown", "short", "depth", "cycle", ... */

/* ---- compare ------------------------------------------------------------------ */

typedef enum etl_cmp_metric {
    ETL_CMP_CPU = 0,        /* CPU time, ns per second of window */
    ETL_CMP_WAIT,           /* waiting time (Waits), ns per second of window */
    ETL_CMP_SWITCHES,       /* switch-ins per second of window, in thousandths (fixed point, 3 decimals) */
    ETL_CMP_READY_P50,      /* ready latency percentiles, ns (not normalised) */
    ETL_CMP_READY_P90,
    ETL_CMP_READY_P99,
    ETL_CMP_READY_MAX,
    ETL_CMP_NMETRICS
} etl_cmp_metric;

typedef enum etl_cmp_scope {
    ETL_CMP_TOTAL = 0,      /* the whole trace */
    ETL_CMP_PROCESS,        /* processes of this image name, summed */
    ETL_CMP_THREAD,         /* threads of this "process/thread name" */
    ETL_CMP_REASON          /* a wait reason (wait only) */
} etl_cmp_scope;

/* One matched name: its metrics in both traces (per second of window where the metric says so). */
typedef struct etl_cmp_row {
    char *name;             /* image name; "image/thread name" for threads; the reason's name */
    uint8_t scope;          /* etl_cmp_scope */
    uint8_t in_before, in_after;
    uint8_t p_exact;        /* percentiles exact (one process instance of this name in each trace) */
    int64_t before[ETL_CMP_NMETRICS], after[ETL_CMP_NMETRICS];
} etl_cmp_row;

typedef struct etl_compare {
    int64_t window_before, window_after; /* ns */
    etl_cmp_row total;
    etl_cmp_row *processes, *threads, *reasons;
    size_t nprocesses, nthreads, nreasons;
} etl_compare;

/*
 * Matches two finished etl_usage results (with latency: no_latency false). Rows are sorted by the
 * biggest absolute change of CPU time (reasons: of waiting time), then by name.
 */
ETL_API etl_status etl_compare_build(etl_compare *c, const etl_usage *before, const etl_usage *after);
ETL_API void etl_compare_free(etl_compare *c);
/* A row by scope and name (case-insensitive; "svchost" matches "svchost.exe"); NULL if absent. */
ETL_API const etl_cmp_row *etl_compare_find(const etl_compare *c, unsigned scope, const char *name);
/* Per-second value: v * 10^9 / window, floored. */
ETL_API int64_t etl_per_second(int64_t v, int64_t window_ns);

/*
 * --fail-if EXPR:   METRIC '(' SCOPE ')' OP THRESHOLD
 *   METRIC     cpu | wait | switches | ready_p50 | ready_p90 | ready_p99 | ready_max
 *   SCOPE      total | process=NAME | thread=PROCESS/THREADNAME | reason=WAITREASON (wait only)
 *   OP         > | >= | < | <=   (compares the change AFTER - BEFORE)
 *   THRESHOLD  [+|-]NUMBER followed by % (relative change), a time unit ns|us|ms|s (cpu, wait, ready_*),
 *              or nothing (switches, per second)
 * e.g. "cpu(total) > +10%", "cpu(process=svchost) > +5ms", "ready_p99(process=dwm) > +20%",
 * "wait(reason=WrQueue) > +1s". Spaces are ignored.
 */
typedef struct etl_cmp_expr {
    uint8_t metric, scope, op; /* op: 0 >, 1 >=, 2 <, 3 <= */
    uint8_t relative;          /* threshold in hundredths of a percent */
    int64_t threshold;         /* ns (per second for cpu/wait), thousandths of a switch per second, or 1/100 % */
    char name[256];
} etl_cmp_expr;

/* ETL_OK, or ETL_E_INVALID_ARG with a one-line reason in err[cap]. */
ETL_API etl_status etl_cmp_expr_parse(const char *s, etl_cmp_expr *e, char *err, size_t cap);
/*
 * 1 if the change crosses the threshold, 0 if not. *delta gets AFTER - BEFORE (or hundredths of a
 * percent for a relative threshold; a name absent from BEFORE with a value in AFTER is +infinity,
 * INT64_MAX); *found is 0 when the name is in neither trace (never crossed).
 */
ETL_API int etl_cmp_expr_eval(const etl_compare *c, const etl_cmp_expr *e, int64_t *delta, int *found);
ETL_API const char *etl_cmp_metric_name(unsigned metric);

#ifdef __cplusplus
}
#endif
#endif

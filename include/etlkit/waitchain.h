/*
 * etlkit/waitchain.h - why one thread was slow (spec analyses.md §3): its time over
 * [from, at] split into running, ready and waiting segments; a waiting segment
 * readied by another thread descends into what that thread did meanwhile. Several
 * passes over the trace, each streaming: the caller runs the model once per pass
 * with etl_chain_row as its row callback (or etl_chain_run does it all), so memory
 * holds only the rows of the threads on the chain, inside their intervals.
 * Everything is in canonical nanoseconds, as etl_sched_row has them.
 */
#ifndef ETLKIT_WAITCHAIN_H
#define ETLKIT_WAITCHAIN_H

#include "etlkit/sched.h"
#include "etlkit/schedstacks.h"

#ifdef __cplusplus
extern "C" {
#endif


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
 * etl_sched_source_options.bias: 0 or less, from the OS build). The last pass's model (names of the instances) goes
 * to *model when model is not NULL (close it with etl_sched_close), else is closed.
 */
ETL_API etl_status etl_chain_run(etl_reader *r, etl_chain *c, int bias, etl_sched **model);

/* "running", "ready", "waiting", "off-cpu", "unknown"; "?" for 0 and past the enum. */
ETL_API const char *etl_chain_state_name(unsigned state);
/* "dpc", "idle", "unknown", "short", "depth", "cycle", "out-of-memory"; NULL for ETL_LEAF_NONE (no leaf), "?" past
   the enum. */
ETL_API const char *etl_chain_leaf_name(unsigned leaf);

/* ---- beyond the chain (chain_query.c) --------------------------------------------- */

/*
 * A waiting (or off-CPU) segment i of node n: where it blocked, the walk at the
 * switch-in that ended the wait (the end of the ready segment after it, or the start
 * of the running one), and its readier's, the walk at the ReadyThread (the wait's end,
 * on ready_cpu). ETL_SCHED_STACK_NONE: none (stk NULL: the trace walks none).
 */
ETL_API uint32_t etl_chain_blocking_stack(const etl_chain *c, const etl_sched_stacks *stk, const etl_chain_node *n,
                                          uint32_t i);
ETL_API uint32_t etl_chain_readier_stack(const etl_sched_stacks *stk, const etl_chain_seg *s);
/* The events those two look up, every segment's: for etl_sched_stacks_build_only, so that the stacks kept are the
   chain's (memory by the chain, not the trace). *v malloc'd (free it); ETL_E_NOMEM. */
ETL_API etl_status etl_chain_stack_events(const etl_chain *c, etl_sched_stacks_event **v, size_t *n);
/* The biggest waiting group of the nodes: same readier and reason, its segment in *key; its total (0: none). */
ETL_API int64_t etl_chain_top_wait(const etl_chain *c, const uint32_t *nodes, size_t nn, etl_chain_seg *key);

/*
 * The chain in one sentence's numbers: the root's time by state, and the biggest waiting
 * group (etl_chain_top_wait) level by level: the root's, then that of the nodes descended
 * into from it, with what those nodes did besides waiting, and so on down.
 */
typedef struct etl_chain_summary_level {
    int64_t wait_ns;        /* the group's total (> 0) */
    etl_chain_seg key;      /* one of its segments: its readier and reason */
    int64_t ran_ns;         /* the nodes descended into from the group: their running time */
    int64_t ready_ns;       /* and their ready time (their waits: the next level) */
} etl_chain_summary_level;

typedef struct etl_chain_summary {
    int64_t interval_ns;    /* the root's */
    int64_t by_state[6];    /* the root's segments, by etl_chain_state */
    size_t nlevels;         /* 0: the root never waited */
    etl_chain_summary_level *levels;
} etl_chain_summary;

/* ETL_E_NOMEM or ETL_OK; free with etl_chain_summary_free (also after a failure). */
ETL_API etl_status etl_chain_summarize(const etl_chain *c, etl_chain_summary *s);
ETL_API void etl_chain_summary_free(etl_chain_summary *s);

/* When there is no chain: the close matches of the thread or process asked for. */
#define ETL_CHAIN_NEAR_MAX 5

/* What a --thread TID or --process NAME|PID finds in a model (etl_sched_find_asked). */
typedef enum etl_sched_asked {
    ETL_ASKED_FOUND = 0,    /* the thread (.thread: its latest instance), or a process of that name or PID */
    ETL_ASKED_IDLE,         /* thread 0: the idle thread, never a thread of its own */
    ETL_ASKED_NO_THREAD,    /* no thread has that TID: .near holds the nearest TIDs' instances */
    ETL_ASKED_NO_PROCESS,   /* no process has that name or PID: .near holds the close ones' process instances */
    ETL_ASKED_NOTHING       /* tid < 0 and process NULL: nothing was asked */
} etl_sched_asked;

typedef struct etl_sched_found {
    etl_sched_asked what;
    uint32_t thread;        /* found by TID: its latest instance; else ETL_SCHED_NONE */
    bool by_pid;            /* the process was asked by PID (decimal digits only) */
    uint32_t pid;           /* that PID (UINT32_MAX: past 32 bits, which no process has) */
    size_t nnear;
    uint32_t near[ETL_CHAIN_NEAR_MAX];
} etl_sched_found;

/* tid < 0: none asked; process NULL: none. The TID is looked at first, as the reports select. */
ETL_API etl_sched_asked etl_sched_find_asked(const etl_sched *m, int64_t tid, const char *process,
                                             etl_sched_found *f);

/* Why a chain came out empty (c->status not ETL_CHAIN_OK), most telling first. */
typedef enum etl_chain_why {
    ETL_CHAIN_WHY_NOT_EMPTY = 0,   /* c->status is ETL_CHAIN_OK: there is a chain */
    ETL_CHAIN_WHY_NO_SWITCHES,     /* the trace has no context switches */
    ETL_CHAIN_WHY_NO_INTERVAL,     /* the thread switched in, but no interval fits the options */
    ETL_CHAIN_WHY_NONE_ASKED,      /* options.tid 0 and no process: thread 0, or a TID past 32 bits */
    ETL_CHAIN_WHY_NEVER_SWITCHED_IN, /* the thread or process is in the trace, never on a CPU */
    ETL_CHAIN_WHY_NOT_IN_TRACE     /* no such thread or process: f->near, the close matches */
} etl_chain_why;

/*
 * With ETL_CHAIN_WHY_NO_INTERVAL, a tid and an --at: whether the thread's first switch-in after it has no known
 * previous switch-out or Ready Time because records were lost before it (ETL_ROW_LOST): the gap --at lies in
 * has no known start, and a --from gives it one.
 */
ETL_API bool etl_chain_gap_lost(const etl_chain *c);
/* switches: the model's count over the whole trace (etl_sched_stats.switches). */
ETL_API etl_chain_why etl_chain_why_empty(const etl_chain *c, const etl_sched *m, uint64_t switches,
                                          etl_sched_found *f);
/* The machine key (waitchain --json's "error"): "no_switches", "no_interval", "no_such_thread" (NONE_ASKED too: a
   TID 0 or past 32 bits is no thread's), "never_switched_in"; "" for NOT_EMPTY, "?" past the enum. */
ETL_API const char *etl_chain_why_name(unsigned why);
/* Thread instances of the TIDs nearest to tid (one per TID, its latest), nearest first; how many. */
ETL_API size_t etl_sched_near_tids(const etl_sched *m, uint32_t tid, uint32_t found[ETL_CHAIN_NEAR_MAX]);
/* Process instances whose name contains want (their order, a name once), or with the PIDs nearest to pid. */
ETL_API size_t etl_sched_near_processes(const etl_sched *m, const char *want, bool by_pid, uint32_t pid,
                                        uint32_t found[ETL_CHAIN_NEAR_MAX]);
/* Whether a thread or process id given by a person (--process PID, --thread TID) is one: decimal digits only, as
   every report prints ids ("0936" is 936, never octal; "+4", " 4" and "0x3a8" are names), and which (*id,
   saturating at UINT64_MAX, which no thread or process has). The reports, the chain and their notes all read it so. */
ETL_API bool etl_sched_id_arg(const char *s, uint64_t *id);
/* Whether a process is want (the image name, ".exe" optional, any case) or has PID pid (by_pid). */
ETL_API bool etl_sched_process_named(const etl_sched *m, const char *want, bool by_pid, uint32_t pid);
/* Its image name, "Unknown" when the trace never names it. */
ETL_API const char *etl_sched_process_image(const etl_sched *m, const etl_sched_process *p);

#ifdef __cplusplus
}
#endif
#endif

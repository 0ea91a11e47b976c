/*
 * etlkit/sched.h - the scheduler model: who ran where, who waited on what, who
 * woke whom (spec analyses.md §0-§2).
 *
 * Two layers, both pull-driven and allocation-free per event:
 *
 *   source   etl_sched_source_next(): the scheduler's events of a trace in time
 *            order: CSwitch events and compact batches alike as switches
 *            (batches expanded; their switches read ahead of the other records,
 *            since a batch is logged when it is flushed, after the events of its
 *            period), ReadyThread, Thread, SetName, Process and SpinLock.
 *   model    etl_sched_push(): consumes those events and calls back with one
 *            "CPU Usage (Precise)" row per switch-in once the row is complete
 *            (at the next switch on that CPU, or at the end), with Ready Time,
 *            the readying thread, waits and the previous and next states.
 *
 * Times: every row carries raw timestamps (session clock ticks) and canonical
 * nanoseconds since the trace start, t = floor((ts - t0) * 10^9 / F), so that
 * durations are differences of canonical times and sums are exact.
 *
 * Threads and processes are instances, not ids: a TID or PID that is reused is
 * a new instance with its own name and lifetime. The idle thread (TID 0) is one
 * per CPU and never belongs to a process (ETL_SCHED_IDLE).
 */
#ifndef ETLKIT_SCHED_H
#define ETLKIT_SCHED_H

#include "etlkit/container.h"
#include "etlkit/kernel.h"
#include "etlkit/ccswap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- time-ordered scheduler events ------------------------------------------ */

typedef enum etl_sched_kind {
    ETL_SCHED_SWITCH = 1, /* u.sw: CSwitch or expanded compact record */
    ETL_SCHED_READY,      /* u.ready */
    ETL_SCHED_THREAD,     /* u.thread; hook tells Start/End/DCStart/DCEnd */
    ETL_SCHED_SET_NAME,   /* u.set_name */
    ETL_SCHED_PROCESS,    /* u.process; hook tells Start/End/DCStart/DCEnd/Defunct */
    ETL_SCHED_SPINLOCK    /* u.spinlock */
} etl_sched_kind;

typedef struct etl_sched_event {
    etl_sched_kind kind;
    uint16_t cpu;
    uint16_t hook;
    uint64_t ts;          /* raw session clock */
    union {
        etl_cswitch sw;
        etl_ready_thread ready;
        etl_thread thread;
        etl_thread_setname set_name;
        etl_process process;
        etl_spinlock spinlock;
    } u;                  /* strings are views into the record: valid until the next call */
} etl_sched_event;

typedef struct etl_sched_source_options {
    size_t sz;            /* sizeof(etl_sched_source_options) */
    /* StateWr bias for compact batches (the writing kernel's MaximumWaitReason, 1..54); 0 or less: from the OS build
       (no kernel has 0, so a zeroed struct reads them right) */
    int bias;
    uint32_t skip;        /* kinds not to decode or return: bits 1u << ETL_SCHED_READY, ... */
    /*
     * Threads that read and decode (0 or 1: the caller's alone). With n > 1, up to n
     * workers each read a share of the CPUs and the caller merges their streams: the
     * events and their order are the same as with one. The reader's diagnostic
     * callback is then called from the workers, one call at a time.
     */
    unsigned threads;
} etl_sched_source_options;

typedef struct etl_sched_source_stats {
    uint64_t switches;            /* switches returned */
    uint64_t full_switches;       /* of which from CSwitch events */
    uint64_t compact_switches;    /* of which from compact batches */
    uint64_t duplicates_dropped;  /* switches of the form a CPU did not show first (traces with both) */
    uint64_t undecodable;         /* scheduler records whose payload did not decode */
    uint64_t late_batches;        /* batches merged when seen, not read ahead (no group mask said so) */
    uint64_t broken_chains;       /* compact switches whose successor was lost (new thread unknown) */
    uint64_t last_ts;             /* largest record timestamp seen */
    uint64_t bad_state;           /* compact switches whose state is > 9 under the bias: state unknown */
    uint64_t bad_priority;        /* compact (Lite) switches whose priority is outside 0..31: priority unknown */
} etl_sched_source_stats;       /* with threads, complete once next returned ETL_END */

typedef struct etl_sched_source etl_sched_source;

/* The reader must outlive the source. */
ETL_API etl_status etl_sched_source_open(etl_reader *r, const etl_sched_source_options *opts,
                                 etl_sched_source **out);
/* ETL_OK with the next event, ETL_END at the end. Never fails on bad input. */
ETL_API etl_status etl_sched_source_next(etl_sched_source *s, etl_sched_event *ev);
/* The same without the copy: *ev points into the source, valid until the next call. */
ETL_API etl_status etl_sched_source_next_ref(etl_sched_source *s, const etl_sched_event **ev);
ETL_API const etl_sched_source_stats *etl_sched_source_stats_get(const etl_sched_source *s);
/* The container's damage counters over every cursor the source reads. */
ETL_API void etl_sched_source_damage(const etl_sched_source *s, etl_stats *out);
/* Bytes of the file consumed so far (progress bars). */
ETL_API uint64_t etl_sched_source_progress(const etl_sched_source *s);
ETL_API void etl_sched_source_close(etl_sched_source *s);

/* ---- the model ---------------------------------------------------------------- */

#define ETL_SCHED_IDLE UINT32_MAX   /* the thread index of a CPU's idle thread */
#define ETL_SCHED_NONE (UINT32_MAX - 1) /* no thread (unknown readier, no process) */

/* A thread instance. */
typedef struct etl_sched_thread {
    uint32_t tid;
    uint32_t pid;          /* UINT32_MAX when no Thread event named its process */
    uint32_t process;      /* process instance index, or ETL_SCHED_NONE */
    uint32_t name;         /* offset of its name in etl_sched_names(), 0 = "" */
    uint64_t start_ts;     /* Start/DCStart time, or first sight */
    uint64_t end_ts;       /* End time, 0 if none */
    uint8_t started;       /* a Start or DCStart event was seen */
    uint8_t ended;         /* an End event was seen */
    uint8_t base_priority; /* from Thread v3+, 0 if unknown */
} etl_sched_thread;

/* A process instance. */
typedef struct etl_sched_process {
    uint32_t pid;
    uint32_t name;         /* ImageFileName, offset in etl_sched_names() */
    uint32_t command_line;
    uint64_t start_ts, end_ts;
    uint8_t started, ended;
} etl_sched_process;

/* Bits of etl_sched_row.flags. */
enum {
    ETL_ROW_HEAD = 1u << 0,        /* the head slice [t0, first switch): no switch-in event */
    ETL_ROW_TAIL = 1u << 1,        /* runs to the trace end: no next switch-out (NSO = t_end) */
    ETL_ROW_PREV = 1u << 2,        /* P known: LSO and the New Prev columns are valid */
    ETL_ROW_READY_TIME = 1u << 3,  /* RT known: Ready valid (and Waits when PREV) */
    ETL_ROW_READIED = 1u << 4,     /* R present: readier, flags, adjust are valid */
    ETL_ROW_WAITED = 1u << 5,      /* Count: Waits = 1 (P waiting) */
    ETL_ROW_MISMATCH = 1u << 6,    /* the switch-in planned another thread (cswitch_chain_mismatch) */
    ETL_ROW_OLD_SI_UNKNOWN = 1u << 7, /* prev_switch not known: the CPU's first switch (prev_switch = si), or the slice
                                        before it is of no known thread (lost switches may lie in it) */
    ETL_ROW_LOST = 1u << 8         /* records of some CPU lost since X's previous switch-in may have held a later
                                      ReadyThread or switch-out of X: R (and RT unless P is known runnable) not known,
                                      and P not known when the loss may lie after it (then Count: Waits is unknown too) */
};

/* One "CPU Usage (Precise)" row: thread X switched in on cpu at SI, out at NSO. */
typedef struct etl_sched_row {
    uint32_t flags;              /* ETL_ROW_* */
    uint16_t cpu;
    uint32_t new_tid, old_tid;   /* X (observed) and e's old thread */
    uint32_t new_thread;         /* instance index of X, or ETL_SCHED_IDLE */
    uint32_t old_thread;
    uint64_t si_ts, nso_ts;      /* raw */
    int64_t si, nso;             /* canonical ns */
    uint64_t lso_ts, rt_ts;      /* raw, with PREV / READY_TIME */
    int64_t lso, rt;             /* canonical ns */
    int64_t prev_switch;         /* time of the previous switch on this CPU (Old Switch-In Time), ns */
    uint32_t readier_tid;        /* with READIED: the thread running on R's CPU at R */
    uint32_t readier_thread;     /* its instance, ETL_SCHED_IDLE, or ETL_SCHED_NONE (Unknown) */
    uint32_t first_readier_tid;  /* the first candidate's readier (wait chains) */
    uint16_t ready_cpu;          /* R's CPU */
    etl_ready_thread ready;      /* R itself (AdjustReason, Increment, Flags) */
    uint32_t ready_while_runnable; /* candidates ignored because P was runnable */
    /* P: X's previous switch-out (with PREV) */
    uint8_t prev_state, prev_wait_reason, prev_wait_mode;
    int8_t prev_out_priority;
    uint32_t prev_known;         /* ETL_CSW_* bits of P */
    const etl_cswitch *in;       /* e, the switch-in (NULL for a HEAD row) */
    const etl_cswitch *out;      /* N, the next switch-out (NULL for a TAIL row) */
    /* With READIED: R's own time, raw and canonical ns; RT is later when R came before P (Waits 0). */
    uint64_t ready_ts;
    int64_t ready_ns;
} etl_sched_row;

typedef void (*etl_sched_row_fn)(void *ctx, const etl_sched_row *row);

/* A ReadyThread as the model reads it: who was readied and who readied it (spec §0 "Readier"). */
typedef struct etl_sched_ready {
    uint64_t ts;
    int64_t ns;
    uint16_t cpu;               /* the readying CPU */
    etl_ready_thread ready;     /* the event's fields */
    uint32_t thread;            /* the readied thread's instance */
    uint32_t readier_tid;       /* the thread running on cpu at that moment, UINT32_MAX if unknown */
    uint32_t readier_thread;    /* its instance, ETL_SCHED_IDLE, or ETL_SCHED_NONE (Unknown) */
} etl_sched_ready;

typedef void (*etl_sched_ready_fn)(void *ctx, const etl_sched_ready *r);

typedef struct etl_sched_stats {
    uint64_t switches;
    uint64_t rows;
    uint64_t cswitch_chain_mismatch; /* a switch's old thread is not the previous switch's new one */
    uint64_t ready_unmatched;        /* ReadyThread events with no later switch-in of their thread */
    uint64_t ready_while_runnable;
    uint64_t time_backwards;         /* events earlier than the previous one (ignored) */
    uint64_t threads, processes;     /* instances */
    uint64_t unknown_threads;        /* instances made from a switch or ReadyThread alone */
    /* Damage (the input is not what a kernel writes): */
    uint64_t repeated_starts;        /* Thread Starts of a thread started, not ended, never switched since it was
                                        made: the same instance, not a new one */
    uint64_t over_limit;             /* events of threads or processes past ETL_SCHED_MAX_INSTANCES (their own
                                        lookups, each: they name no instance), names past
                                        ETL_SCHED_MAX_NAME_BYTES and switches on a CPU past ETL_SCHED_MAX_CPUS
                                        (left out) */
} etl_sched_stats;

/*
 * What a model keeps, whatever the trace: thread instances and process instances (each
 * up to this many; a real trace's are a few hundred thousand at most) and the bytes of
 * their names. Past a limit, what would need more is left out and counted (over_limit).
 */
#define ETL_SCHED_MAX_INSTANCES (1u << 20)
#define ETL_SCHED_MAX_CPUS 4096u /* a switch's CPU below it (Windows has at most 2048 logical processors) */
#define ETL_SCHED_MAX_NAME_BYTES (64u << 20)

typedef struct etl_sched etl_sched;

typedef struct etl_sched_options {
    size_t sz;            /* sizeof(etl_sched_options) */
    etl_sched_row_fn on_row;
    void *ctx;
    bool complete_only;   /* drop the head and tail slices (WPA-like) */
    etl_sched_ready_fn on_ready; /* optional: every ReadyThread with its readier */
    /*
     * Optional: the trace's reader. When its file misses buffers (etl_reader_buffers_missing),
     * nothing is made of what they held: a switch whose old thread is not the one planned
     * (a buffer of that CPU lost between them) makes its slice unknown, so does a slice that
     * spans where a missing buffer may have held its CPU's records (etl_reader_cpu_gaps), and
     * each CPU's last slice stops at the CPU's last record (etl_reader_cpu_known_until): the
     * rest is unknown.
     */
    const etl_reader *reader;
} etl_sched_options;

/* ncpu: the trace's CPU count (more are added as switches name them). */
ETL_API etl_status etl_sched_open(const etl_clock *clock, unsigned ncpu, const etl_sched_options *opts,
                          etl_sched **out);
/*
 * One event, in time order. A switch is placed by the decoded record's own u.sw.cpu and u.sw.ts
 * (the source sets them equal to cpu and ts; a caller that makes its own events sets both).
 */
ETL_API etl_status etl_sched_push(etl_sched *m, const etl_sched_event *ev);
/*
 * Whether etl_sched_push would take ev as it stands: false for a switch it passes over (one
 * earlier than both the event before it and its CPU's last switch, which would break the
 * CPU's chain: time_backwards; one on a CPU past ETL_SCHED_MAX_CPUS: over_limit). For a
 * consumer of the same events that must keep the switches the model keeps (a timeline).
 */
ETL_API bool etl_sched_takes(const etl_sched *m, const etl_sched_event *ev);
/*
 * End of trace at raw time end_ts (the later of the last record and EndTime):
 * closes every CPU's last row (NSO = end, or its last record's time when the file misses
 * buffers: etl_sched_options.reader) and emits them.
 */
ETL_API etl_status etl_sched_finish(etl_sched *m, uint64_t end_ts);
/*
 * ETL_E_NOMEM once an allocation of the model failed (a thread, process, name or CPU was
 * left out without a count): its rows and everything gathered from them are then wrong,
 * and the aggregations' finish calls fail with it. ETL_OK otherwise. finish returns it too.
 */
ETL_API etl_status etl_sched_status(const etl_sched *m);

/*
 * A report's window [*v0, *v1) on a trace that ends at end_ns (ns from its start): no end
 * given (v1 <= v0) or one past the trace's end is the end, since nothing happens after it
 * (busy + idle + unknown = the window on every CPU); a start past the end is the end.
 */
static inline void etl_window_clip(int64_t *v0, int64_t *v1, int64_t end_ns)
{
    if (*v1 <= *v0 || *v1 > end_ns) *v1 = end_ns;
    if (*v0 > *v1) *v0 = *v1;
}
ETL_API void etl_sched_close(etl_sched *m);

ETL_API const etl_sched_stats *etl_sched_stats_get(const etl_sched *m);
/* Rows so far whose Ready Time or previous switch-out lost records made unknown (ETL_ROW_LOST). */
ETL_API uint64_t etl_sched_rows_lost(const etl_sched *m);
ETL_API unsigned etl_sched_cpu_count(const etl_sched *m);
/* The thread and process instances so far (indices are stable). */
ETL_API const etl_sched_thread *etl_sched_threads(const etl_sched *m, size_t *n);
ETL_API const etl_sched_process *etl_sched_processes(const etl_sched *m, size_t *n);
/* The name pool: NUL-terminated UTF-8 strings at the offsets the instances hold. */
ETL_API const char *etl_sched_names(const etl_sched *m);
/* The instance a thread index names (NULL for IDLE / NONE). */
ETL_API const etl_sched_thread *etl_sched_thread_at(const etl_sched *m, uint32_t index);
ETL_API const etl_sched_process *etl_sched_process_at(const etl_sched *m, uint32_t index);
/*
 * The instance a TID names at this point of the stream (its latest Start/DCStart, or
 * its first sight): ETL_SCHED_IDLE for TID 0, ETL_SCHED_NONE for a TID never seen.
 */
ETL_API uint32_t etl_sched_thread_of(const etl_sched *m, uint32_t tid);
/* "image" of a thread's process: the name, "Idle" for IDLE, "Unknown" when none. */
ETL_API const char *etl_sched_process_name(const etl_sched *m, uint32_t thread_index);

/*
 * A TID named by an event the model is not given (a switch read elsewhere): the
 * instance it names now, made (unknown, started at ts) on first sight, as a switch
 * pushed at this point would make it. ETL_SCHED_IDLE for TID 0.
 */
ETL_API uint32_t etl_sched_see(etl_sched *m, uint32_t tid, uint64_t ts);

/* The trace end a reader implies: the later of the source's last record and EndTime on the session clock. */
ETL_API uint64_t etl_sched_end_ts(const etl_reader *r, uint64_t last_record_ts);

/* ---- the model CPU by CPU --------------------------------------------------------- */

/*
 * Reports whose rows need only their own CPU's switches (CPU time, PMC deltas) need
 * not merge the CPUs' streams, which is most of the cost of time order:
 * etl_sched_percpu_run reads each CPU on its own, on up to `threads` threads, and gives
 * each thread's rows to a consumer state of its own. The rows are the model's, field
 * for field, but for what depends on other CPUs, which they leave out: the flags
 * ETL_ROW_PREV, READY_TIME, READIED and WAITED are never set. Their thread indices
 * (new_thread, old_thread) are the state's own, dense from 0; when every CPU is read,
 * merge() gets each state with the map from its indices to the instances of the
 * model the run returns (which holds the threads, processes and names the
 * time-ordered run would, in the same order).
 *
 * Where only the time-ordered model is exact (a CPU whose time goes back, a CPU that
 * logs both CSwitch events and compact batches, batches the trace's group mask did
 * not announce), it returns ETL_E_UNSUPPORTED before calling merge(): run the source
 * and the model instead.
 */
typedef struct etl_sched_percpu_consumer {
    void *ctx;
    void *(*open)(void *ctx);                         /* a state for one thread; NULL: out of memory */
    etl_sched_row_fn row;                             /* called with a state, from its thread */
    /* map[i] is model's instance of the state's thread index i (i < n); the caller's thread, states in order */
    etl_status (*merge)(void *ctx, void *state, const etl_sched *model, const uint32_t *map, size_t n);
    void (*close)(void *ctx, void *state);
    /*
     * Set by etl_usage_percpu: the states gather CPU time alone, and the run adds each
     * row's slice to them itself, as etl_usage_add would, without building rows or
     * decoding more of a switch than the slice needs. row is not called.
     */
    bool cpu_time;
} etl_sched_percpu_consumer;

typedef struct etl_sched_percpu_options {
    size_t sz;             /* sizeof(etl_sched_percpu_options) */
    int bias;              /* as etl_sched_source_options.bias: 0 or less, from the OS build */
    unsigned threads;      /* threads that read (0 or 1: the caller's alone) */
    bool complete_only;    /* as etl_sched_options.complete_only */
    /* Called now and then on the caller's thread with the bytes of the file read so far. */
    void (*progress)(void *ctx, uint64_t bytes);
    void *progress_ctx;
    /* Bytes of Thread and Process records kept in memory; more spill to a temporary file (0: 4 MiB). */
    size_t spool_budget;
    /* Filled with why when the run fails (out of memory, or the temporary file's directory and reason). */
    etl_diag *diag;
} etl_sched_percpu_options;

typedef struct etl_sched_percpu_result {
    etl_sched *model;               /* instances, processes, names; the caller closes it */
    etl_sched_stats stats;          /* the model's counters, as the time-ordered run counts them */
    etl_sched_source_stats source;  /* the source's counters, likewise */
    etl_stats damage;               /* the container's damage counters */
    uint64_t end_ts;                /* etl_sched_end_ts of the run */
} etl_sched_percpu_result;

/*
 * Never reads ReadyThread or SpinLock events (the rows do not need them). ETL_OK with
 * *out filled; ETL_E_UNSUPPORTED (see above) or ETL_E_NOMEM with nothing to close.
 */
ETL_API etl_status etl_sched_percpu_run(etl_reader *r, const etl_sched_percpu_options *opts,
                                const etl_sched_percpu_consumer *c, etl_sched_percpu_result *out);

/*
 * ReadyThread events pushed so far (of a thread it could name): 0 at the end, the trace logs none (the DISPATCHER
 * flag was off), and no Waits or readier can be known, damage or not.
 */
ETL_API uint64_t etl_sched_ready_events(const etl_sched *m);

#ifdef __cplusplus
}
#endif
#endif

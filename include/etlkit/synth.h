/*
 * etlkit/synth.h - a seeded, deterministic simulator of a multi-CPU Windows
 * machine whose every context switch is known, written as an NT Kernel Logger
 * ETL file (through etlkit/writer.h) plus the ground truth.
 *
 *     etl_synth_options o;
 *     etl_synth_options_init(&o);                    // the defaults (the "small" preset)
 *     etl_synth_set(&o, "cpus", "8", &diag);         // any option by its CLI name
 *     o.on_truth = etl_synth_truth_jsonl;  o.truth_ctx = file;   // optional
 *     etl_synth_run("out.etl", &o, &summary, &diag);
 *
 * The machine: CPUs 0..ncpu-1, each running one thread or its idle thread (TID
 * 0); processes and threads with base priorities (normal 8, foreground 9-10,
 * a few real-time 16+, a few idle-priority 0-4) and dynamic priorities (an
 * unwait boost, capped at 15, that decays by one at each quantum end, or a
 * lock-ownership boost that is removed whole at quantum end); CPU bursts of
 * lognormal length; waits with the kernel's KWAIT_REASONs, ended by a timer or
 * I/O DPC, by another running thread, or (ALPC) by the client or server;
 * preemption of a lower-priority thread (old state Ready, WrPreempted); quantum
 * end at a clock tick (old state Ready, WrQuantumEnd); thread and process
 * creation and exit; spin lock acquisitions; PMC counters. Every choice comes
 * from one PRNG stream seeded by `seed`; the same options give the same bytes.
 * Modelling choices are listed in the README ("Synthetic traces").
 *
 * Units: every time in the truth is a raw session clock value ("ticks" of
 * the chosen clock). NewThreadWaitTime is in clock-interrupt ticks
 * (TimerResolution): the number of tick boundaries between the moment the
 * thread became ready and its switch-in, saturated at 131071 (the compact
 * field's maximum) in every format. Spin lock times are CPU cycles.
 */
#ifndef ETLKIT_SYNTH_H
#define ETLKIT_SYNTH_H

#include <stdio.h>
#include "etlkit/base.h"
#include "etlkit/kernel.h"
#include "etlkit/ccswap.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How switches are logged (--cswitch). */
typedef enum etl_synth_cswitch_format {
    ETL_SYNTH_CSWITCH_FULL = 1,    /* CSwitch 0x0524 events */
    ETL_SYNTH_CSWITCH_COMPACT = 2, /* compact batches 0x0525 */
    ETL_SYNTH_CSWITCH_BOTH = 3
} etl_synth_cswitch_format;

#define ETL_SYNTH_MAX_CPUS 256u
#define ETL_SYNTH_MAX_THREADS 200000u
#define ETL_SYNTH_MAX_PMC 4u
#define ETL_SYNTH_WAIT_TIME_MAX 131071u /* 2^17 - 1: NewThreadWaitTime saturates here */

/* ---- ground truth ---------------------------------------------------------- */

typedef enum etl_synth_rec_type {
    ETL_SYNTH_REC_META = 0,     /* first: the run's parameters */
    ETL_SYNTH_REC_SWITCH,       /* one context switch */
    ETL_SYNTH_REC_READY,        /* one ReadyThread (always logged when ready_events) */
    ETL_SYNTH_REC_SPINLOCK,     /* one spin lock release (sampled or not) */
    ETL_SYNTH_REC_THREAD,       /* Thread start/end/dcstart/dcend/setname */
    ETL_SYNTH_REC_PROCESS,      /* Process start/end/dcstart/dcend */
    ETL_SYNTH_REC_BATCH,        /* one 0x0525 event written */
    ETL_SYNTH_REC_THREAD_TOTAL, /* per thread, at its exit or at the end */
    ETL_SYNTH_REC_CPU_TOTAL,    /* per CPU, at the end: the idle thread's share */
    ETL_SYNTH_REC_END,          /* last */
    /* --stacks only (numbered after END so that the others keep their values): */
    ETL_SYNTH_REC_IMAGE,        /* Image DCStart/Load/Unload/DCEnd */
    ETL_SYNTH_REC_SAMPLE,       /* one SampledProfile, with its stack */
    ETL_SYNTH_REC_STACK         /* the stack walk of a CSwitch or ReadyThread */
} etl_synth_rec_type;

/* Why a switch happened. */
typedef enum etl_synth_why {
    ETL_SYNTH_WHY_WAIT = 0,    /* the old thread entered a wait */
    ETL_SYNTH_WHY_PREEMPT,     /* a readied higher-priority thread took the CPU */
    ETL_SYNTH_WHY_QUANTUM,     /* quantum end with an equal or higher priority thread ready */
    ETL_SYNTH_WHY_EXIT,        /* the old thread terminated */
    ETL_SYNTH_WHY_IDLE_EXIT    /* the old thread was the idle thread */
} etl_synth_why;

typedef struct etl_synth_switch {
    uint64_t time;                /* raw; also the CSwitch header time and the compact record time */
    uint16_t cpu;
    uint8_t why;                  /* etl_synth_why (JSON: wait, preempt, quantum, exit, idle) */
    uint32_t old_tid, new_tid;    /* 0 = that CPU's idle thread */
    uint32_t old_pid, new_pid;
    int8_t old_priority, new_priority;
    int8_t old_base_priority, new_base_priority;
    uint8_t old_state;            /* KTHREAD_STATE: 5 Waiting, 1 Ready, 4 Terminated, 2 (idle) */
    uint8_t old_wait_reason;      /* KWAIT_REASON */
    uint8_t old_wait_mode;        /* 0 KernelMode, 1 UserMode */
    uint8_t previous_cstate;      /* old thread idle: 1 (C1) or 2 (idle >= 1 ms) */
    uint8_t old_ideal_processor;
    uint32_t new_wait_time;       /* clock ticks, saturated at ETL_SYNTH_WAIT_TIME_MAX */
    int32_t old_remaining_quantum; /* (quantum target - cycles run) / 1024 */
    uint8_t pmc_count;
    uint64_t pmc[ETL_SYNTH_MAX_PMC]; /* counter values written on the CSwitch header */
    bool cswitch;                 /* written as a 0x0524 event */
    bool compact;                 /* added to a compact batch */
    uint8_t form;                 /* etl_ccswap_form of its record (compact) */
    uint32_t batch;               /* index of its batch among this CPU's batches (compact) */
    uint32_t batch_record;        /* its record index in that batch */
} etl_synth_switch;

/* Why a thread was readied. */
typedef enum etl_synth_ready_why {
    ETL_SYNTH_READY_TIMER = 0, /* timer DPC (DelayExecution, periodic waits) */
    ETL_SYNTH_READY_IO,        /* I/O completion DPC */
    ETL_SYNTH_READY_THREAD,    /* signalled by the thread running on the readying CPU */
    ETL_SYNTH_READY_LPC,       /* ALPC request or reply */
    ETL_SYNTH_READY_NEW        /* a new thread */
} etl_synth_ready_why;

typedef struct etl_synth_ready {
    uint64_t time;
    uint16_t cpu;                 /* the readying CPU: where the 0x0532 event is */
    uint8_t why;                  /* etl_synth_ready_why (JSON: timer, io, thread, lpc, new) */
    uint32_t tid;                 /* the thread readied */
    uint32_t by_tid;              /* the thread running on the readying CPU (0: idle) */
    uint8_t adjust_reason;
    int8_t adjust_increment;
    uint8_t flags;                /* ETL_READY_* */
    uint8_t wait_reason;          /* the wait it ends (0 for a new thread) */
    int8_t old_priority, new_priority; /* before and after the boost */
    bool logged;                  /* a 0x0532 event was written */
} etl_synth_ready;

typedef struct etl_synth_spinlock {
    uint64_t time;                /* raw time of the release (= the 0x0529 header time when sampled) */
    uint16_t cpu;
    bool sampled;                 /* etl_spinlock_should_log said yes: a 0x0529 event was written */
    etl_spinlock lock;            /* the event's fields (thread_id, times in cycles, ...) */
    uint64_t hold_cycles;         /* release_time - acquire_time */
} etl_synth_spinlock;

typedef enum etl_synth_life_event {
    ETL_SYNTH_LIFE_START = 0,
    ETL_SYNTH_LIFE_END,
    ETL_SYNTH_LIFE_DC_START,
    ETL_SYNTH_LIFE_DC_END,
    ETL_SYNTH_LIFE_SET_NAME
} etl_synth_life_event;

/* Thread states at DCStart (etl_synth_thread.state). */
typedef enum etl_synth_thread_state {
    ETL_SYNTH_TS_WAITING = 0,
    ETL_SYNTH_TS_READY,
    ETL_SYNTH_TS_STANDBY,
    ETL_SYNTH_TS_RUNNING,
    ETL_SYNTH_TS_TERMINATED
} etl_synth_thread_state;

typedef struct etl_synth_thread {
    uint64_t time;
    uint16_t cpu;
    uint8_t event;                /* etl_synth_life_event */
    uint16_t hook;                /* 0x0501..0x0504, 0x0548 */
    uint32_t tid, pid;
    uint32_t header_tid, header_pid; /* the SYSTEM header's ids (creator for a start); 0 for PERFINFO */
    int8_t base_priority;
    uint8_t state;                /* etl_synth_thread_state at the event's time */
    uint8_t wait_reason;          /* when waiting */
    uint16_t on_cpu;              /* when running or standby */
    const char *name;             /* "" when unnamed */
} etl_synth_thread;

typedef struct etl_synth_process {
    uint64_t time;
    uint16_t cpu;
    uint8_t event;                /* etl_synth_life_event (no SET_NAME) */
    uint16_t hook;                /* 0x0301..0x0304 */
    uint32_t pid, parent_pid, session_id;
    int32_t exit_status;
    uint32_t header_tid, header_pid;
    const char *image;
    const char *command_line;
} etl_synth_process;

typedef struct etl_synth_batch {
    uint64_t time;                /* the 0x0525 header time */
    uint16_t cpu;
    uint32_t index;               /* this CPU's batch number, from 0 */
    uint64_t first_time, last_time;
    uint32_t records;
    uint32_t bytes;               /* event data size */
    uint8_t reason;               /* etl_ccswap_flush_reason */
} etl_synth_batch;

/*
 * Per thread, over [start, end] of the trace (raw ticks; the META and END
 * records give start and end):
 *   running  sum of the intervals from a switch-in to the next switch-out
 *            (a thread running at start counts from start, one running at the
 *            end until end);
 *   ready    from readied (ReadyThread time), preempted or quantum-ended
 *            (switch-out time) or created, to the next switch-in (standby
 *            included);
 *   waiting  from a switch-out in state Waiting to the ReadyThread time.
 * running + ready + waiting = the thread's lifetime inside [start, end].
 */
typedef struct etl_synth_thread_total {
    uint32_t tid, pid;
    uint64_t running, ready, waiting;
    uint32_t switches_in, switches_out;
    uint64_t created, exited;     /* raw: start (threads alive at start) or the new thread's
                                     ReadyThread time; the Terminated switch-out, 0 if alive */
    int8_t base_priority;
    const char *name;
} etl_synth_thread_total;

/* Per CPU: the idle thread's running time and the CPU's switch count. */
typedef struct etl_synth_cpu_total {
    uint16_t cpu;
    uint64_t idle;                /* time the idle thread ran, in [start, end] */
    uint64_t busy;                /* end - start - idle */
    uint32_t switches;
    uint32_t batches;
    uint64_t pmc[ETL_SYNTH_MAX_PMC]; /* counter values at the end */
} etl_synth_cpu_total;

/* How a stack was logged (--stack-form). */
typedef enum etl_synth_stack_form {
    ETL_SYNTH_STACK_PLAIN = 1,  /* one StackWalk/Stack 0x1820 */
    ETL_SYNTH_STACK_CACHED = 2, /* StackKeyKernel 0x1825 and/or StackKeyUser 0x1826 references */
    ETL_SYNTH_STACK_BOTH = 3    /* the option only: alternating per event on each CPU */
} etl_synth_stack_form;

#define ETL_SYNTH_STACK_MAX 64u /* frames of a synthetic stack, kernel and user parts together */

/*
 * An image event (--stacks). event: ETL_SYNTH_LIFE_DC_START (start rundown),
 * _START (Load 0x030A), _END (Unload 0x1402), _DC_END (end rundown: not an
 * unload). pid 0 for the kernel's images.
 */
typedef struct etl_synth_image {
    uint64_t time;
    uint16_t cpu;
    uint8_t event;                /* etl_synth_life_event (JSON: dcstart, load, unload, dcend) */
    uint16_t hook;
    uint32_t pid;
    uint64_t base, size;
    uint32_t time_date_stamp, checksum;
    const char *name;             /* "ntdll.dll" */
    const char *path;             /* the FileName logged */
} etl_synth_image;

/*
 * A SampledProfile (--stacks): the thread running on cpu (tid 0: its idle
 * thread) at time. module is the image containing ip (NULL when none does:
 * the JIT region), offset = ip - its base. stack: depth frames, innermost
 * first, the kernel part then the user part, the whole stack as the walks
 * log it (depth 0: no walk); form: etl_synth_stack_form of the walk.
 */
typedef struct etl_synth_sample {
    uint64_t time;
    uint16_t cpu;
    uint32_t tid, pid;
    uint64_t ip;
    uint16_t count;
    const char *module;
    uint64_t offset;
    const uint64_t *stack;
    uint32_t depth;
    uint8_t form;
} etl_synth_sample;

/* The stack walk of a CSwitch (the new thread's stack) or a ReadyThread (the readying thread's). */
typedef struct etl_synth_stack {
    uint64_t time;                /* the event's time (the walks' EventTimeStamp) */
    uint16_t cpu;
    uint16_t hook;                /* ETL_HOOK_CSWITCH or ETL_HOOK_READY_THREAD (JSON: cswitch, readythread) */
    uint32_t tid, pid;            /* StackThread, StackProcess */
    const uint64_t *stack;
    uint32_t depth;
    uint8_t form;
} etl_synth_stack;

typedef struct etl_synth_meta {
    uint64_t seed;
    uint32_t ncpu, pointer_size, clock_type, os_build, bias, cswitch_format, pmc_count;
    uint64_t ticks_per_sec;       /* session clock units per second */
    uint64_t timer_tick;          /* one clock-interrupt tick in session units (NewThreadWaitTime unit) */
    uint64_t cycles_per_sec;      /* the cycle counter's rate (spin lock times) */
    uint64_t start;               /* raw: where the totals begin (trace start) */
    uint64_t header_ts;           /* raw time of the logfile header */
    bool spinlocks;
    etl_spinlock_info spinlock_info;
    bool stacks;                  /* --stacks (the JSON line has these two only then) */
    uint32_t profile_interval;    /* 100 ns units */
    const char *modules;          /* --modules as given (NULL: none; the JSON line has it only then) */
} etl_synth_meta;

typedef struct etl_synth_end {
    uint64_t end;                 /* raw: where the totals end */
    uint64_t switches, ready, spinlocks, spinlocks_sampled, batches;
} etl_synth_end;

typedef struct etl_synth_rec {
    uint8_t type;                 /* etl_synth_rec_type */
    union {
        etl_synth_meta meta;
        etl_synth_switch sw;
        etl_synth_ready ready;
        etl_synth_spinlock spinlock;
        etl_synth_thread thread;
        etl_synth_process process;
        etl_synth_batch batch;
        etl_synth_thread_total thread_total;
        etl_synth_cpu_total cpu_total;
        etl_synth_end end;
        etl_synth_image image;
        etl_synth_sample sample;
        etl_synth_stack stack;
    } u;
} etl_synth_rec;

/*
 * Receives each truth record as the simulation makes it (each CPU's records in
 * time order; the thread_total of an exited thread at its exit, the others,
 * the cpu_totals and the end record last), on the thread that called
 * etl_synth_run. Return non-zero to stop the run: etl_synth_run returns ETL_E_IO
 * (diag: "the run was stopped by on_truth ...", the callback's own reason is its
 * to tell) and leaves no file at its path. The strings are valid during the call only.
 */
typedef int (*etl_synth_truth_fn)(void *ctx, const etl_synth_rec *rec);

/*
 * A truth sink writing one JSON object per line to ctx, a FILE *. Keys:
 * "type" ("meta", "switch", "ready", "spinlock", "thread", "process",
 * "batch", "thread_total", "cpu_total", "end"; with --stacks "image",
 * "sample", "stack") then the struct's fields by the names above (a
 * sample's "module" null and no "offset" when no image holds its ip; no
 * "stack" when it has no walk). Returns non-zero after a write error.
 */
ETL_API int etl_synth_truth_jsonl(void *ctx, const etl_synth_rec *rec);

/* ---- options -------------------------------------------------------------- */

/* Progress: done out of total (bytes with a size target, else simulated ns). */
typedef void (*etl_synth_progress_fn)(void *ctx, uint64_t done, uint64_t total);

typedef struct etl_synth_options {
    size_t sz;                    /* sizeof(etl_synth_options) */
    uint64_t seed;                /* seed */
    uint32_t ncpu;                /* cpus: 1..256 */
    uint32_t threads;             /* threads alive at the start (idle threads not counted) */
    uint32_t processes;           /* processes alive at the start, System included (Idle not) */
    uint64_t duration_ns;         /* duration: simulated time to trace (0 = no limit) */
    uint64_t target_bytes;        /* size: stop once the writer has written this much (0 = no limit) */
    uint32_t clock_type;          /* clock: ETL_CLOCK_QPC, _SYSTEM_TIME, _CPU_CYCLES */
    unsigned pointer_size;        /* pointer-size: 4 or 8 */
    uint32_t buffer_size;         /* buffer-size */
    bool compress;                /* compress */
    unsigned cswitch_format;      /* cswitch: etl_synth_cswitch_format */
    unsigned pmc_count;           /* pmc: 0..4 counters on each CSwitch */
    bool ready_events;            /* ready-thread: log ReadyThread (PERF_DISPATCHER) */
    bool spinlocks;               /* spinlocks: model and log spin locks (PERF_SPINLOCK) */
    etl_spinlock_info spinlock_info; /* spin-threshold, acquire-rate, contention-rate, hold-threshold */
    uint32_t lock_rate;           /* lock-rate: acquisitions per second of thread running time */
    uint32_t lock_contention;     /* lock-contention: contended acquisitions per 10000 */
    uint32_t churn;               /* churn: thread creations per simulated second */
    uint32_t load;                /* load: target busy share of all CPUs, percent (1..100) */
    uint32_t os_build;            /* os-build: >= 9200 */
    uint64_t perf_freq;           /* perf-freq: QPC ticks per second */
    uint32_t cpu_mhz;             /* cpu-mhz: the cycle counter's rate */
    uint32_t timer_resolution;    /* timer-resolution: clock tick, 100 ns units */
    const char *log_file_name;    /* the LogFileName in the header (not the path, for reproducible bytes) */
    etl_synth_truth_fn on_truth;  /* optional */
    void *truth_ctx;
    etl_synth_progress_fn on_progress; /* optional, called about every 64 Ki events */
    void *progress_ctx;
    bool stacks;                  /* stacks: modules, SampledProfile and stack walks (off: not a byte changes) */
    uint32_t profile_interval;    /* profile-interval: 100 ns units, per CPU (10000 = 1 ms) */
    unsigned stack_form;          /* stack-form: etl_synth_stack_form */
    /*
     * modules (with --stacks; NULL: none): up to 4 modules given with their
     * identity, "NAME,BASE,SIZE,TIMESTAMP,GUID,AGE,PDB,RVA[,RVA...]" separated
     * by ';' (numbers decimal or 0x hex, GUID as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx, or
     * "none": no identity events, as a trace not merged with xperf -merge).
     * They stand in for the app DLL (process k gets the (k mod n)-th), with their
     * Image events followed by ImageID and DbgID_RSDS, and their stack frames
     * at exactly base + one of the RVAs (a symbols test's functions). The text
     * must outlive the run.
     */
    const char *modules;
} etl_synth_options;

/*
 * The defaults, which are the "small" preset. etl_synth_validate and etl_synth_run read the caller's
 * struct by base.h's rule (its first sz bytes over these defaults; NULL or sz 0: the defaults), so a
 * struct filled by a program built against an older etlkit runs with the defaults for the members it
 * does not know. But this call, etl_synth_preset, etl_synth_set and etl_synth_get write or read this
 * version's whole struct, whatever sz says (it is not set yet when init is called): a program built
 * against an older etlkit must not call them with its smaller struct (rebuild it, or fill the struct
 * by hand from sz on).
 */
ETL_API void etl_synth_options_init(etl_synth_options *o);

/* Applies a preset ("small" or "large") over o; ETL_E_INVALID_ARG for another name. */
ETL_API etl_status etl_synth_preset(etl_synth_options *o, const char *name, etl_diag *diag);

/*
 * Sets one option by its command-line name, without the dashes ("cpus",
 * "duration", "no-spinlocks", ...). value is NULL for flags. Numbers accept
 * K/M/G (powers of 1024) for sizes and a decimal fraction for the duration
 * in seconds. ETL_E_INVALID_ARG with a message in diag for an unknown name, a
 * missing or malformed value or a value out of range, a NULL o or name.
 */
ETL_API etl_status etl_synth_set(etl_synth_options *o, const char *name, const char *value, etl_diag *diag);

/* One row of the option table, for --help. */
typedef struct etl_synth_option_desc {
    const char *name;     /* "cpus" */
    const char *arg;      /* "N", or NULL for a flag */
    const char *help;     /* one line */
} etl_synth_option_desc;

/* The option table (*n rows). */
ETL_API const etl_synth_option_desc *etl_synth_option_table(size_t *n);

/* The option's current value in o as text ("4", "qpc", "on"), into out[cap]. */
ETL_API void etl_synth_get(const etl_synth_options *o, const char *name, char *out, size_t cap);

/*
 * Checks the whole set: ranges, a stop condition, and the spin lock sampling
 * parameters with etl_spinlock_info_validate (the message names the field and
 * the kernel minimum). ETL_E_INVALID_ARG with the message in diag.
 */
ETL_API etl_status etl_synth_validate(const etl_synth_options *o, etl_diag *diag);

/* ---- running ---------------------------------------------------------------- */

typedef struct etl_synth_summary {
    uint64_t events;              /* events written (etl_writer_events): the file's records less buffer 0's two
                                   * header records (the logfile header and its extension) */
    uint64_t bytes;               /* file size; 0 when a run that failed removed it (etl_synth_run) */
    uint64_t buffers;
    uint64_t switches;
    uint64_t cswitch_events;
    uint64_t batches;             /* 0x0525 events */
    uint64_t ready_events;
    uint64_t spinlock_acquisitions;
    uint64_t spinlock_events;
    uint64_t thread_events;       /* 0x0501..0x0504, 0x0548 */
    uint64_t process_events;      /* 0x0301..0x0304 */
    uint64_t threads_created, threads_exited, processes_created, processes_exited;
    uint64_t start_ts, end_ts;    /* raw start and end of the totals */
    uint64_t ticks_per_sec;
    uint64_t simulated_ns;        /* end - start in nanoseconds */
    etl_ccswap_encoder_stats ccswap;
    uint64_t samples;             /* --stacks: SampledProfile events */
    uint64_t stack_events;        /* 0x1820, 0x1823..0x1826 */
    uint64_t image_events;        /* 0x030A, 0x1402..0x1404 */
} etl_synth_summary;

/*
 * Simulates and writes path (truncated). Validates o first (ETL_E_INVALID_ARG, nothing
 * written); o NULL: the defaults. ETL_E_INVALID_ARG for a NULL path. ETL_E_IO for a write
 * error or when on_truth asked to stop; ETL_E_NOMEM. On any error once path was created
 * (a write that failed, a stop) it is removed: no partial trace is left (what path held
 * before is gone too: it was truncated), and summary's events, bytes and buffers are 0, as
 * for nothing written (the rest tells the simulation as far as it ran). What path names is
 * left when it is not a regular file (a symbolic link, a device): the numbers tell what was
 * written through it. summary may be NULL. All memory is allocated up front and freed on return.
 * Where the C library has POSIX threads built in (glibc 2.34+, macOS) the
 * writer and its compression run on a second thread; the bytes are the same
 * either way (a size target is checked at fixed points of the event stream).
 */
ETL_API etl_status etl_synth_run(const char *path, const etl_synth_options *o, etl_synth_summary *summary,
                         etl_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

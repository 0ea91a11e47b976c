/*
 * synth_internal.h - shared by the simulator's files (src/synth): the PRNG,
 * the event queue, the world's templates and the machine state.
 *
 *   rng.c      PRNG and libm-free distributions (reproducible everywhere)
 *   heap.c     indexed binary heap of timed events
 *   world.c    behaviour profiles, process templates, names, addresses, SIDs
 *   sim.c      the machine: placement, switches, waits, quanta, locks, churn
 *   emit.c     events through the kernel codecs, truth records
 *   pipe.c     events to the writer (on a second thread where available)
 *   stacks.c   --stacks: modules, call stacks, samples, stack walks, the key cache
 *   truth.c    the JSON-lines truth sink
 *   options.c  defaults, presets, options by name, validation
 */
#ifndef ETLKIT_SYNTH_INTERNAL_H
#define ETLKIT_SYNTH_INTERNAL_H

#include "etlkit/synth.h"
#include "etlkit/writer.h"
#include "etlkit/event.h"

/* ---- rng.c ------------------------------------------------------------------ */

typedef struct synth_rng {
    uint64_t s[4];
} synth_rng;

void synth_rng_seed(synth_rng *r, uint64_t seed);

/* xoshiro256** */
static inline uint64_t synth_rng_u64(synth_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

uint64_t synth_rng_below(synth_rng *r, uint64_t n); /* [0, n) */
double synth_rng_unit(synth_rng *r);                /* (0, 1) */
bool synth_rng_chance(synth_rng *r, double p);
double synth_rng_exp(synth_rng *r, double mean);
double synth_rng_normal(synth_rng *r);
double synth_rng_lognormal(synth_rng *r, double median, double sigma);
double synth_log(double x);
double synth_exp(double x);

/* ---- heap.c ----------------------------------------------------------------- */

typedef struct synth_heap_entry {
    uint64_t time;
    uint64_t seq_slot; /* sequence << 24 | slot: ties pop in the order they were set */
} synth_heap_entry;

typedef struct synth_heap {
    synth_heap_entry *e; /* heap-ordered */
    uint32_t *pos;       /* slot -> index in e, UINT32_MAX if absent */
    uint32_t n, cap;
} synth_heap;

#define SYNTH_HEAP_MAX_SLOTS (1u << 24)

etl_status synth_heap_init(synth_heap *h, uint32_t slots);
void synth_heap_free(synth_heap *h);
void synth_heap_set(synth_heap *h, uint32_t slot, uint64_t time, uint64_t seq);
void synth_heap_remove(synth_heap *h, uint32_t slot);
const synth_heap_entry *synth_heap_top(const synth_heap *h); /* NULL when empty */
uint32_t synth_heap_slot(const synth_heap_entry *e);

/* ---- pipe.c ------------------------------------------------------------------- */

typedef struct synth_pipe synth_pipe;
etl_status synth_pipe_open(synth_pipe **out, etl_writer *w, uint64_t target_bytes);
void synth_pipe_write(synth_pipe *p, const etl_write_event *ev); /* copies; errors are sticky */
uint64_t synth_pipe_bytes(const synth_pipe *p); /* writer bytes as of the last chunk commit */
etl_status synth_pipe_error(synth_pipe *p);
etl_status synth_pipe_close(synth_pipe *p);     /* writes what is queued; the first error */

/* ---- world.c ------------------------------------------------------------------ */

/* KWAIT_REASON values the model uses. */
enum {
    WR_EXECUTIVE = 0,
    WR_PAGE_IN = 2,
    WR_DELAY_EXECUTION = 4,
    WR_USER_REQUEST = 6,
    WR_WR_USER_REQUEST = 13,
    WR_WR_QUEUE = 15,
    WR_WR_LPC_RECEIVE = 16,
    WR_WR_LPC_REPLY = 17,
    WR_WR_TERMINATED = 22,
    WR_WR_RESOURCE = 27,
    WR_WR_PUSH_LOCK = 28,
    WR_WR_QUANTUM_END = 30,
    WR_WR_PREEMPTED = 32,
    WR_WR_FAST_MUTEX = 34,
    WR_WR_ALERT_BY_THREAD_ID = 37
};

/* KTHREAD_STATE values. */
enum { KS_READY = 1, KS_RUNNING = 2, KS_TERMINATED = 4, KS_WAITING = 5 };

/* Who ends a wait. */
enum {
    WK_TIMER = 0,   /* timer DPC on the thread's last CPU, at a clock tick */
    WK_IO,          /* I/O completion DPC */
    WK_THREAD,      /* a running thread on some CPU (a DPC if none runs) */
    WK_LPC_RECV,    /* an ALPC client's request */
    WK_LPC_REPLY,   /* the ALPC server's reply */
    WK_PERIODIC     /* a periodic DPC (audio engine) */
};

enum {
    PF_KWORKER = 0, /* System worker threads */
    PF_KRT,         /* System real-time threads */
    PF_ZERO,        /* the zero page thread (priority 0) */
    PF_UI,          /* GUI threads: WrUserRequest */
    PF_WORKER,      /* thread pool workers: WrQueue */
    PF_COMPUTE,     /* long CPU bursts */
    PF_IO,          /* I/O bound */
    PF_TIMER,       /* Sleep() loops */
    PF_LPCSRV,      /* ALPC servers */
    PF_LOCKY,       /* lock-heavy: push locks, resources, WaitOnAddress */
    PF_AUDIO,       /* MMCSS real-time audio */
    PF_BACKGROUND,  /* idle-priority background work */
    PF_COUNT
};

typedef struct synth_wait_choice {
    uint8_t reason; /* KWAIT_REASON */
    uint8_t kind;   /* WK_* */
    uint16_t weight;
} synth_wait_choice;

typedef struct synth_profile {
    const char *name;
    double burst_us, burst_sigma, burst_max_us;
    double p_continue; /* a burst end just starts the next burst */
    double p_lpc;      /* a burst end makes an ALPC call (if a server waits) */
    bool lpc_server;
    synth_wait_choice waits[6];
    const char *const *names;
    unsigned nnames;
    double p_named;
    double wait_scale; /* multiplies the I/O and thread-signalled wait lengths */
} synth_profile;

typedef struct synth_wait_param {
    double med_us, sigma; /* wait length (WK_IO, WK_THREAD) */
    uint8_t mode;         /* KPROCESSOR_MODE */
    uint8_t adjust_reason;
    int8_t adjust_increment;
} synth_wait_param;

typedef struct synth_proc_template {
    const char *image;
    const char *command_line;
    uint8_t session;
    uint8_t sid;        /* SID_* */
    uint8_t class_base; /* priority class base */
    bool foreground;
    struct {
        uint8_t profile;
        uint8_t weight;
    } mix[6];
} synth_proc_template;

enum { SID_SYSTEM = 0, SID_LOCAL_SERVICE, SID_NETWORK_SERVICE, SID_DWM, SID_USER };
enum { TPL_SYSTEM = 0 };

extern const synth_profile synth_profiles[PF_COUNT];
extern const synth_proc_template synth_templates[];
extern const unsigned synth_template_count;
/* Templates used, in order, for the initial processes after System, and for new ones. */
extern const uint8_t synth_initial_order[];
extern const unsigned synth_initial_order_count;
extern const uint8_t synth_dynamic_templates[];
extern const unsigned synth_dynamic_template_count;

const synth_wait_param *synth_wait_param_of(unsigned reason, unsigned kind);
double synth_sleep_us(synth_rng *r); /* a Sleep() argument for DelayExecution */
double synth_sleep_mean_us(void);
/* For the load estimate: mean busy time per wake-up, and mean wait split into
 * the part the wait factor scales (I/O, signals) and the fixed part (timers). */
double synth_profile_busy_us(unsigned profile);
void synth_profile_wait_us(unsigned profile, double tick_us, double *scaled, double *fixed);

/* ---- the machine ----------------------------------------------------------------- */

enum { TS_FREE = 0, TS_WAIT, TS_READY, TS_STANDBY, TS_RUN };

/*
 * Per-CPU heap slots (after the thread slots): RUN is the running thread's
 * next event, the earliest of its burst end, its quantum end and its pending
 * spin lock release; DISPATCH is a Standby thread taking the CPU.
 */
enum { CS_RUN = 0, CS_DISPATCH, CS_COUNT };

#define SYNTH_NAME_MAX 48

typedef struct sthread {
    uint32_t tid;
    uint32_t proc;            /* process index */
    uint8_t state;            /* TS_* */
    uint8_t profile;          /* PF_* */
    int8_t base, prio;
    uint8_t boost_whole;      /* the boost above base goes whole at quantum end (AdjustReason 2) */
    uint8_t wait_reason, wait_mode, wait_kind;
    uint8_t name_pending;     /* sets its name (SetName) at its next burst end */
    uint16_t ideal_cpu, last_cpu, cpu, wake_cpu;
    int32_t qnext, qprev;     /* ready queue links */
    int32_t lpc_peer;         /* server: the client awaiting a reply; client: its server */
    uint32_t pool_pos;        /* index in the ALPC server pool while waiting there */
    uint64_t quantum;         /* full quantum, session units */
    int64_t quantum_left;
    uint64_t q_start;         /* when the quantum_left was last charged */
    uint64_t burst_end;       /* running: when the current burst ends */
    uint64_t burst_left;      /* preempted mid-burst: what remains */
    uint64_t ready_since;     /* became ready (NewThreadWaitTime) */
    uint64_t acct_since;      /* start of the current state interval (totals) */
    uint64_t t_running, t_ready, t_waiting;
    uint32_t sw_in, sw_out;
    uint64_t created, exit_at;  /* exit_at 0: lives for ever */
    uint64_t period, phase;     /* periodic waits */
    uint32_t ipc_x1024, llc_div, br_div; /* PMC model */
    uint64_t stack_base, stack_limit, user_stack_base, user_stack_limit;
    uint64_t win32_start, teb;
    char name[SYNTH_NAME_MAX];
} sthread;

typedef struct sproc {
    uint32_t pid, parent_pid;
    uint8_t tmpl;
    bool alive, dynamic;
    uint32_t session;
    uint32_t nthreads;
    uint32_t next_ideal;
    uint64_t key, dtb;
    uint8_t sid[68];
    uint8_t sid_len;
} sproc;

typedef struct scpu {
    int32_t cur;              /* running thread, -1 = the idle thread */
    int32_t standby;          /* thread selected to run next, -1 = none */
    uint64_t next_free;       /* first time this CPU may log an event at */
    uint64_t idle_since;
    uint64_t acct_since;
    uint64_t t_idle;
    uint32_t switches;
    /* the pending spin lock acquisition of the running thread */
    uint64_t quantum_at;      /* the running thread's quantum end check (a clock tick) */
    bool lock_on;             /* an acquisition is pending (its first attempt at lock_a) */
    bool lock_drawn;          /* ... and drawn: its window [lock_a, lock_r] is open */
    uint64_t lock_a;          /* first attempt (session units) */
    uint64_t lock_r;          /* release */
    uint32_t lock_site;
    uint32_t lock_wait, lock_spin, lock_hold;
    uint8_t lock_irql, lock_depth, lock_caller;
    uint32_t lock_interrupts;
    uint64_t pmc[ETL_SYNTH_MAX_PMC];
    uint64_t pmc_time;
    uint32_t batch_index, batch_records;
} scpu;

#define SYNTH_LOCK_SITES 64

typedef struct synth_stacks synth_stacks; /* stacks.c */

typedef struct synth {
    etl_synth_options o;
    synth_rng rng;
    etl_writer *w;
    synth_pipe *pipe;
    etl_status err;
    etl_diag *diag;

    /* clock */
    uint64_t ups;             /* session units per second */
    uint64_t cps;             /* cycles per second */
    uint64_t cyc_num, cyc_den; /* cycles = (units - cyc_origin) * num / den + cyc_base */
    uint64_t cyc_origin, cyc_base;
    double units_per_us;
    double wait_factor;       /* scales I/O and signalled waits to reach o.load */
    uint64_t tick;            /* one clock tick in session units */
    uint64_t header_ts;       /* the logfile header's time = trace start */
    uint64_t start, end;      /* totals interval */
    uint64_t stop_at;         /* stop when the next event is later (UINT64_MAX: none) */
    uint64_t now;
    bool tracing;

    /* formats */
    unsigned ptr;
    unsigned bias;
    unsigned cswitch_version, thread_version;
    bool thread_names;
    bool full, compact;
    uint32_t user_sid[3];

    /* model */
    uint32_t ncpu;
    scpu *cpu;
    sthread *th;
    uint32_t th_cap, th_alive;
    uint32_t *th_free;
    uint32_t th_nfree;
    sproc *pr;
    uint32_t pr_cap, pr_used; /* slots 0 (Idle) and 1 (System) are fixed */
    uint32_t *order;          /* rundown scratch, th_cap entries */
    uint32_t *pr_start;       /* rundown scratch, pr_cap + 1 entries */
    int32_t rq_head[32], rq_tail[32];
    uint32_t rq_mask;
    int8_t *preempt_prio;     /* per CPU: see update_pp */
    uint32_t scan_start;
    uint64_t idle_mask[ETL_SYNTH_MAX_CPUS / 64];
    uint64_t busy_mask[ETL_SYNTH_MAX_CPUS / 64];
    uint32_t *lpc_pool;
    uint32_t lpc_n;
    uint32_t next_id;

    synth_heap wakes;         /* slot i: thread i's wake-up */
    synth_heap cpuq;          /* slot - slot_cpu0: CPU events, churn, tracing on */
    uint64_t seq;
    uint32_t slot_cpu0, slot_churn, slot_trace_on;
    uint32_t slot_prof0, slot_image; /* --stacks: per-CPU profile timers, image loads/unloads */
    synth_stacks *stk;        /* --stacks state, NULL when off */

    /* spin locks */
    uint64_t lock_addr[SYNTH_LOCK_SITES];
    uint64_t lock_callers[SYNTH_LOCK_SITES][3];
    uint8_t lock_mode[SYNTH_LOCK_SITES];
    uint16_t lock_hot[SYNTH_LOCK_SITES];      /* contention weight, 100 = average */
    uint32_t lock_hold_med[SYNTH_LOCK_SITES]; /* cycles */
    uint32_t lock_cum[SYNTH_LOCK_SITES];      /* cumulative pick weights */
    double lock_hot_mean;                     /* popularity-weighted mean of lock_hot */
    etl_spinlock_sampler sampler;
    etl_spinlock_cpu_counters *spin_ctr;

    /* compact batches */
    etl_ccswap_encoder enc;
    etl_ccswap_encoder_cpu *enc_cpu;

    etl_synth_summary sum;
    uint64_t pops;
    uint64_t spin_sampled;
} synth;

/* world.c: the initial world and new threads/processes */
uint32_t synth_new_id(synth *s);
int32_t synth_spawn_process(synth *s, unsigned tmpl, uint32_t parent_pid, bool dynamic);
int32_t synth_spawn_thread(synth *s, uint32_t proc, int profile, uint64_t t, bool dynamic);
void synth_init_lock_sites(synth *s);
const char *synth_image(const synth *s, uint32_t proc);
const char *synth_command_line(const synth *s, uint32_t proc);
uint64_t synth_affinity(const synth *s);

/* emit.c: events (only while tracing) and truth */
bool synth_truth(synth *s, const etl_synth_rec *rec);
void synth_emit_cswitch(synth *s, unsigned cpu, const etl_cswitch *cs, const uint64_t *pmc);
void synth_emit_batch(synth *s, const etl_ccswap_batch *b, uint64_t ts);
void synth_emit_ready(synth *s, unsigned cpu, uint64_t ts, const etl_ready_thread *r);
void synth_emit_spinlock(synth *s, unsigned cpu, uint64_t ts, const etl_spinlock *l);
/* hthread: the thread whose ids go in the SYSTEM header (-1: ids 0, as rundown events have). */
void synth_emit_thread(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, uint32_t thread,
                       int32_t hthread);
void synth_emit_idle_thread(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, unsigned idle_cpu);
void synth_emit_set_name(synth *s, unsigned cpu, uint64_t ts, uint32_t thread);
/* Start/End: SYSTEM header with hthread's ids; DCStart/DCEnd: PERFINFO header. */
void synth_emit_process(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, uint32_t proc,
                        int32_t hthread, int32_t exit_status);
void synth_emit_idle_process(synth *s, unsigned cpu, uint64_t ts, uint16_t hook);

/* The first failure of a run (emit.c), kept with its reason. */
void synth_fail(synth *s, etl_status st, const char *what);
/* One event to the writer (emit.c): for stacks.c. */
void synth_write(synth *s, unsigned cpu, uint8_t header, uint8_t version, uint16_t hook, uint32_t tid,
                 uint32_t pid, uint64_t ts, const void *payload, size_t len);
/* A header value of synth_write's meaning "the payload is a whole record, header included" (pipe.c writes it as is). */
#define SYNTH_RAW_RECORD 0xFFu
/* ASCII to UTF-16LE, no terminator (emit.c). */
etl_kstr synth_u16(const char *a, uint8_t *buf, size_t cap);

/* sim.c: CPU c's next log time from t (strictly increasing per CPU). */
uint64_t synth_reserve(synth *s, unsigned c, uint64_t t);
void synth_hset(synth *s, uint32_t slot, uint64_t t);

/* ---- stacks.c (only called when s->stk) ------------------------------------------------ */

/* The hooks' test: off by default, kept off the hot paths' straight line. */
#if defined(__GNUC__) || defined(__clang__)
#define SYNTH_STACKS(s) __builtin_expect((s)->stk != NULL, 0)
#else
#define SYNTH_STACKS(s) ((s)->stk != NULL)
#endif

etl_status synth_stacks_init(synth *s);
/*
 * --modules' text checked (out NULL) or parsed into out[4] (*n of them); err
 * says what is wrong. ETL_E_INVALID_ARG, ETL_E_RANGE (a value too large).
 */
typedef struct synth_module synth_module;
etl_status synth_modules_parse(const char *spec, synth_module *out, unsigned *n, char *err, size_t cap);   /* before the world is made */
void synth_stacks_free(synth *s);
void synth_stacks_process_new(synth *s, uint32_t proc);
void synth_stacks_thread_new(synth *s, uint32_t thread);
/* Tracing starts at t (after the rundown): CollectionStart, the timers, the image plan. */
void synth_stacks_start(synth *s, uint64_t t);
/* The kernel's images (proc 0) or a process's, in a rundown, on CPU 0 at t. */
void synth_stacks_rundown(synth *s, uint32_t proc, uint64_t t, bool end);
/* A heap slot of stacks.c came due. */
void synth_stacks_on_slot(synth *s, uint32_t slot, uint64_t t);
/*
 * A switch at ts on c, traced (after its CSwitch, if logged; the new thread is
 * s->cpu[c].cur): the new thread's walk, then the old one's deferred parts and next stack.
 */
void synth_stacks_switch(synth *s, unsigned c, uint64_t ts, uint8_t why);
/* After a ReadyThread at ts on c. */
void synth_stacks_ready(synth *s, unsigned c, uint64_t ts, uint8_t flags);
/* Thread i exits on c at t (before its Thread End): its deferred parts. */
void synth_stacks_exit(synth *s, unsigned c, uint64_t t, uint32_t i);
/* A process starts (after its Process Start) or ends (before its Process End) on c at t. */
void synth_stacks_process_start(synth *s, unsigned c, uint64_t t, uint32_t proc, uint32_t thread);
void synth_stacks_process_end(synth *s, unsigned c, uint64_t t, uint32_t proc, uint32_t thread);
/* Tracing stops at e (before the end rundown): deferred parts, CollectionEnd, the key rundown. */
void synth_stacks_finish(synth *s, uint64_t e);

#endif

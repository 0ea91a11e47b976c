/*
 * etlkit/spinlocks.h - spin lock contention (spec analyses.md §5): the aggregation
 * behind `etlkit spinlocks`, fed from a run of the scheduler model (etlkit/sched.h)
 * and clipped to a window [v0, v1) of canonical nanoseconds (v1 <= v0: the whole
 * trace, the end given to finish). etl_spinlocks_add() takes every source event
 * (others are ignored); one SpinLock event counts in the window if its time does.
 * Aggregated per (lock, caller, AcquireMode) cell, then per lock, caller,
 * (lock, caller) pair, AcquireMode and in total.
 *
 * Memory: per cell, the hold and wait cycles of its events (4 bytes each; exact
 * nearest-rank p50/p99 need them all, up to ETL_SPIN_MAX_VALUES in all) and one
 * entry per distinct (cell, thread) and (cell, CPU), up to ETL_SPIN_MAX_DISTINCT.
 * Cells are capped at ETL_SPIN_MAX_CELLS, and so are the locks, callers and pairs
 * they are made of: the events of a lock or caller that would need a cell past it
 * are counted in the totals (cells_dropped), not per lock, caller or pair. So,
 * whatever the trace: about 150 MB for the cells and their groups, 48 MB for the
 * distinct sets, 256 MiB for the values.
 */
#ifndef ETLKIT_SPINLOCKS_H
#define ETLKIT_SPINLOCKS_H

#include "etlkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif


/* Classes of a SpinLock event by the rule that logged it (re-evaluated on its fields). */
typedef enum etl_spin_class {
    ETL_SPIN_L = 0,   /* held longer than H (H != 0): always logged, weight 1 */
    ETL_SPIN_C,       /* spins >= S: 1 in M contentions per CPU, weight M */
    ETL_SPIN_U,       /* spins == 0: 1 in A uncontended acquisitions per CPU, weight A */
    ETL_SPIN_X,       /* none of these (0 < spins < S, hold <= H): spinlock_unexplained, weight 1 */
    ETL_SPIN_CLASSES
} etl_spin_class;

#define ETL_SPIN_IRQLS 32      /* IRQL 0..30; the last bucket is 31 and above */
#define ETL_SPIN_MODES 6       /* AcquireMode 0..4 (etl_spinlock_acquire_mode_name); the last bucket: others */
#define ETL_SPIN_MAX_CELLS (1u << 16)     /* (lock, caller, AcquireMode) cells */
#define ETL_SPIN_MAX_DISTINCT (1u << 21)  /* (cell, thread) and (cell, CPU) pairs, for the distinct counts */
#define ETL_SPIN_MAX_VALUES (1u << 26)    /* hold and wait values kept for the percentiles, by default */
#define ETL_SPIN_UNKNOWN UINT64_MAX       /* a percentile of no value, a mean of a saturated sum (etl_spin_group) */
/*
 * The longest hold an event can report (Choice): a spin lock keeps its CPU at DISPATCH_LEVEL or above, where the DPC
 * watchdog bug-checks the machine (DPC_WATCHDOG_VIOLATION) after 120 s. Past it at the nominal MHz (at 10 GHz when
 * the header has none), the event's AcquireTime and ReleaseTime are no hold the kernel measured.
 */
#define ETL_SPIN_MAX_HOLD_S 120
#define ETL_SPIN_MAX_HOLD_MHZ 10000       /* the rate assumed without CpuSpeedInMHz: no CPU counts faster */

/*
 * Sums over a set of events. w is the event's weight (1, M, A, 1 by class).
 * Sums saturate at UINT64_MAX (saturated says so): a weighted sum that reads UINT64_MAX with saturated is not known,
 * nor is any mean, share or rate made of it (ETL_SPIN_UNKNOWN, -1).
 */
typedef struct etl_spin_acc {
    uint64_t events;
    uint64_t cls[ETL_SPIN_CLASSES];
    uint64_t contended;       /* events with spins > 0 */
    uint64_t irq;             /* events with InterruptCount > 0: left out of the hold figures */
    uint64_t no_hold;         /* other events with ReleaseTime < AcquireTime: left out of the hold figures too */
    uint64_t est_acq;         /* Σw: estimated acquisitions */
    uint64_t est_contended;   /* Σw over spins > 0 */
    uint64_t w_wait;          /* Σw·WaitTimeInCycles */
    uint64_t w_wait_contended;/* Σw·wait over spins > 0 */
    uint64_t w_spins;         /* Σw·SpinCount */
    uint64_t w_hold;          /* Σw·hold over events without interrupts and with a hold */
    uint64_t w_nonirq;        /* Σw over those events (the mean hold's denominator) */
    uint64_t max_hold;        /* over those events */
    uint64_t max_wait, max_spins;
    uint64_t irql[ETL_SPIN_IRQLS];
    uint64_t mode[ETL_SPIN_MODES];
    bool saturated;
    uint64_t bad_hold;        /* other events whose times are no hold (etl_spinlocks.impossible_hold): left out too */
} etl_spin_acc;

/* One row: a lock, a caller, a (lock, caller) pair, an AcquireMode, or the total. */
typedef struct etl_spin_group {
    uint64_t lock;            /* SpinLockAddress (locks, pairs) */
    uint64_t caller;          /* CallerAddress (callers, pairs) */
    uint32_t mode;            /* AcquireMode (modes) */
    etl_spin_acc a;
    /* Percentiles: ETL_SPIN_UNKNOWN when no value underlies them (no such event, or none of the group's values kept:
       values_dropped); over the values kept, when some were not. */
    uint64_t hold_p50, hold_p99;  /* nearest rank over the events without interrupts (cycles) */
    uint64_t wait_p50, wait_p99;  /* nearest rank over the events (cycles) */
    uint64_t mean_wait, mean_hold;/* weighted sum / weights (cycles); ETL_SPIN_UNKNOWN of a saturated sum */
    uint64_t mean_spins_x1000;    /* Σw·spins / Σw, thousandths; ETL_SPIN_UNKNOWN of a saturated sum */
    int64_t acq_pct;          /* % acquisition: 100·Σw·wait / (cycles(W)·NCPU), 10^-4 %; -1 without MHz or a window,
                                 or of a saturated sum (so are the others) */
    int64_t cont_pct;         /* % contention: the same over contended events */
    int64_t collision_pct;    /* 100·est_contended / est_acq, 10^-4 %; -1 without acquisitions */
    int64_t acq_rate, cont_rate, spin_rate; /* estimates per second of the window, thousandths; -1 for a 0 ns window */
    /* (the means, shares and rates are rounded to the nearest, a half up) */
    uint32_t nthreads, ncpus; /* distinct ThreadIds and CPUs seen */
    const uint32_t *tids;     /* nthreads TIDs, ascending */
    const uint32_t *cpus;     /* ncpus CPU numbers, ascending */
} etl_spin_group;

/* Counts of one CPU's events by class (the bounds are per CPU). */
typedef struct etl_spin_cpu {
    uint64_t u, c, l0, l1, x; /* U, C, L uncontended, L contended, unexplained */
} etl_spin_cpu;

/* Bounds on a true count: lo <= true <= hi; hi_known false: no upper bound (S > 1, or events lost: lost). */
typedef struct etl_spin_bounds {
    uint64_t est, lo, hi;
    bool hi_known;
} etl_spin_bounds;

/* Why the events may be incomplete (etl_spinlocks_losses): the bounds then have no maximum. */
enum {
    ETL_SPIN_LOST_HEADER = 1u << 0,  /* the header's EventsLost or BuffersLost */
    ETL_SPIN_LOST_FLAGGED = 1u << 1, /* a buffer flagged EVENTS_LOST or BUFFER_LOST */
    ETL_SPIN_LOST_DAMAGED = 1u << 2  /* buffers or records missing, damaged or cut (etl_stats_damaged) */
};

typedef struct etl_spinlocks_options {
    size_t sz;                /* sizeof(etl_spinlocks_options) */
    int64_t v0, v1;           /* window, canonical ns; v1 <= v0: the whole trace (set by finish) */
    etl_spinlock_info params; /* S, A, M, H; H applies only with has_hold_threshold; all 0: the defaults (init) */
    uint32_t mhz;             /* CpuSpeedInMHz: cycles(W) = |W| ns * MHz / 1000; 0 = unknown */
    unsigned ncpu;            /* the trace's CPU count (NCPU); more are added as events name them */
    size_t max_values;        /* hold and wait values kept, at most (0: ETL_SPIN_MAX_VALUES) */
    /*
     * A selection of threads (NULL: every event): an event in the window it returns 0 for is left
     * out of every figure but the bounds, which need each CPU's whole sequence (its sampling counter
     * is shared by all threads): a selection's bounds are then wide (see bounds_selection).
     */
    int (*select)(void *ctx, const etl_sched_event *ev);
    void *select_ctx;
} etl_spinlocks_options;

typedef struct etl_spinlocks {
    etl_spinlocks_options o;
    const etl_clock *clock;
    /* After finish, each sorted by Σw·wait, then Σw·hold (both descending), then address. */
    etl_spin_group *locks, *callers, *pairs, *modes;
    size_t nlocks, ncallers, npairs, nmodes;
    etl_spin_group total;
    etl_spin_cpu *cpus;       /* per CPU, ncpus */
    size_t ncpus;
    etl_spin_bounds acquisitions, uncontended, contended; /* the true counts in the window */
    uint64_t events;          /* SpinLock events seen, in the window or not */
    uint64_t outside;         /* ... of which outside the window */
    uint64_t filtered;        /* ... of which in the window but left out by o.select */
    uint32_t lost;            /* ETL_SPIN_LOST_* (etl_spinlocks_losses): events may be missing, the bounds have no
                                 maximum (a missing event may have been a logged multiple; the minimum holds) */
    bool bounds_selection;    /* filtered > 0: the bounds are a selection's, from every event of each CPU: at least
                                 the selection's events seen, at most the CPU's maximum less the others' events seen */
    uint64_t cells_dropped;   /* events of cells past ETL_SPIN_MAX_CELLS (in the totals, not per lock) */
    uint64_t values_dropped;  /* hold/wait values not kept (past max_values, out of memory): percentiles inexact */
    uint64_t distinct_dropped;/* (cell, thread or CPU) pairs past ETL_SPIN_MAX_DISTINCT: thread and CPU counts
                                 are lower bounds */
    uint64_t hold_at_threshold; /* events held exactly H cycles (">" vs ">=" is unknown) */
    uint64_t backwards_hold;  /* ReleaseTime < AcquireTime: no hold (left out of the hold figures, as irq ones) */
    int64_t backwards_first_ns; /* the first one's time (canonical ns) and CPU, with backwards_hold */
    uint32_t backwards_first_cpu;
    /*
     * Events whose AcquireTime and ReleaseTime are no hold the kernel measured: either is 0 (the TSC reads 0 only at
     * reset), the hold is past max_hold_cycles, or, on the CPU-cycle clock (where the event's timestamp is the
     * TSC read just after the release), ReleaseTime is after the event's time or earlier by more than
     * max_hold_cycles. Damage: no hold, left out of the hold figures, classed by their spins alone (as
     * backwards_hold's are: rule 1 cannot be evaluated).
     */
    uint64_t impossible_hold;
    int64_t impossible_first_ns;     /* the first one's time (canonical ns), CPU and times */
    uint32_t impossible_first_cpu;
    uint64_t impossible_first_acquire, impossible_first_release;
    uint64_t max_hold_cycles;        /* ETL_SPIN_MAX_HOLD_S at o.mhz (ETL_SPIN_MAX_HOLD_MHZ when 0); set by init */
    /*
     * After finish: the CPU time (ns) of the window the file holds, Σ over the CPUs: |W|·NCPU, less each CPU's time
     * after its last record when the file is cut short (etl_spinlocks_losses learns where). The rates (estimates·NCPU
     * / known_ns) and the % CPU shares are over it: no event could be seen in the time after a cut.
     */
    int64_t known_ns;
    int64_t window_cpu_ns;           /* after finish: |W|·NCPU, known_ns's whole (the file cut short when more) */
    struct etl_spinlocks_priv *priv;
} etl_spinlocks;

/*
 * The sampling parameters a run takes (the trace does not record them) and where each came from:
 * the kernel's defaults, given by the user, or none for H before Windows 8.1.
 */
enum { ETL_SPIN_SRC_DEFAULT, ETL_SPIN_SRC_GIVEN, ETL_SPIN_SRC_NONE_BEFORE_8_1 };
typedef struct etl_spin_params {
    etl_spinlock_info p;      /* S, A, M, H; has_hold_threshold set */
    uint8_t src[4];           /* S, A, M, H: ETL_SPIN_SRC_* */
} etl_spin_params;
/* The kernel's defaults (etl_spinlock_info_defaults), each from ETL_SPIN_SRC_DEFAULT. */
ETL_API void etl_spin_params_init(etl_spin_params *sp);
/* What the trace's OS allows: SpinLockHoldThreshold exists from Windows 8.1 (6.3), so none before unless given. */
ETL_API void etl_spin_params_for_trace(etl_spin_params *sp, const etl_logfile_header *h);
/* A source's name as the outputs give it: "default", "given", "none before Windows 8.1". */
ETL_API const char *etl_spin_param_source(unsigned src);
/* Why a selection's bounds are wide (etl_spinlocks.bounds_selection), for people: one sentence, no final stop. */
#define ETL_SPIN_SELECTION_NOTE                                                                                    \
    "the bounds of a selection of threads are wide: a CPU's sampling counter counts every thread's acquisitions, " \
    "so any acquisition not logged may have been the selection's (at least its events seen, at most the CPU's "   \
    "maximum less the other threads' events seen)"
/* What loses the bounds' maximum (etl_spinlocks.lost: ETL_SPIN_LOST_*), for people, into out[cap]; out. */
ETL_API const char *etl_spin_lost_text(uint32_t lost, char *out, size_t cap);
/* Whether any parameter is assumed rather than given. */
ETL_API bool etl_spin_params_assumed(const etl_spin_params *sp);
/*
 * After finish: more than every CPU's time spent acquiring (total.acq_pct past 100 %, or Σw·wait past 2^64). Each rate
 * alone is one the kernel takes, so the numbers stand as defined; the events cannot have been
 * sampled at these rates, which the caller should say.
 */
ETL_API bool etl_spinlocks_rates_implausible(const etl_spinlocks *s);

/*
 * The (at most) 3 largest entries of a histogram h[0..n) of total counts, largest first (ties to the
 * lower index): their indexes and shares in whole percent, to the nearest. Their number (0 when total is 0).
 */
ETL_API unsigned etl_spin_top_shares(const uint64_t *h, unsigned n, uint64_t total, unsigned idx[3], int64_t pct[3]);

/* The class and weight of one event under params (H applies only with has_hold_threshold and H != 0). */
ETL_API etl_spin_class etl_spin_classify(const etl_spinlock_info *params, const etl_spinlock *e, uint64_t *weight);

/*
 * params all zero (a zeroed struct, as a sz short of them) takes the kernel's defaults (etl_spinlock_info_defaults,
 * as the CLI without --spin-*; for a trace before Windows 8.1 set them from etl_spin_params_for_trace). Parameters
 * the kernel refuses (etl_spinlock_info_validate) give ETL_E_INVALID_ARG, s zeroed (free is safe).
 */
ETL_API etl_status etl_spinlocks_init(etl_spinlocks *s, const etl_clock *clock, const etl_spinlocks_options *o);
/* Any source event; only ETL_SCHED_SPINLOCK counts. Never fails (out of memory: counted as dropped). */
ETL_API void etl_spinlocks_add(etl_spinlocks *s, const etl_sched_event *ev);
/*
 * What may have lost events, from the reader's header and buffer flags and the damage the run found
 * (may be NULL): sets s->lost (ETL_SPIN_LOST_*). Before finish: with any, the bounds have no maximum.
 */
ETL_API void etl_spinlocks_losses(etl_spinlocks *s, const etl_reader *r, const etl_stats *damage);
/*
 * Folds the cells into groups, percentiles, bounds and ratios; end_ns closes an open window. ETL_E_NOMEM: no
 * answer; ETL_E_INVALID_ARG: s not initialised. Once finished, a later call changes nothing and returns the first call's status (end_ns is then not read).
 */
ETL_API etl_status etl_spinlocks_finish(etl_spinlocks *s, int64_t end_ns);
ETL_API void etl_spinlocks_free(etl_spinlocks *s);

#ifdef __cplusplus
}
#endif
#endif

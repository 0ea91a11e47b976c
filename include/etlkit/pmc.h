/*
 * etlkit/pmc.h - hardware counters per thread (spec analyses.md §6): the
 * aggregation behind `etlkit pmc`. etl_pmc_add() is an etl_sched_row_fn: a row
 * whose switch-in and next switch-out both carry counters charges their
 * difference to the row's thread (the observed one; the idle thread too), clipped
 * to a window [v0, v1) of canonical nanoseconds. Sums are kept per thread instance
 * and per CPU, nothing per row.
 */
#ifndef ETLKIT_PMC_H
#define ETLKIT_PMC_H

#include "etlkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif


#define ETL_PMC_MAX 7   /* counters a CSwitch header can carry */

/*
 * A counter jump no CPU can make (a flipped bit, a bad read): a slice whose cycles exceed
 * ETL_PMC_MAX_HZ over its duration plus ETL_PMC_SLACK_NS (the counters and the time are not read at
 * the same instant), or whose instructions, LLC misses, branch misses or branches exceed
 * ETL_PMC_MAX_PER_CYCLE times that many cycles, is dropped whole and counted (pmc_implausible), as a
 * counter that went backwards is. No core clocks at 10 GHz (turbo and overclocking records stay
 * below) and none retires 16 instructions a cycle; slots of other kinds (an occupancy event may
 * count dozens a cycle) are not checked.
 */
#define ETL_PMC_MAX_HZ 10000000000ull
#define ETL_PMC_SLACK_NS 10000
#define ETL_PMC_MAX_PER_CYCLE 16

/* What a counter slot counts (the file does not say: the user names the slots). */
typedef enum etl_pmc_kind {
    ETL_PMC_OTHER = 0,
    ETL_PMC_CYCLES,
    ETL_PMC_INSTRUCTIONS,
    ETL_PMC_LLC_MISSES,      /* "llc" */
    ETL_PMC_BRANCH_MISSES,   /* "branch": mispredicted branches */
    ETL_PMC_BRANCHES         /* "branches": branch instructions */
} etl_pmc_kind;

/* "cycles", "instructions", "llc", "branch", "branches" (a few aliases too); else ETL_PMC_OTHER. */
ETL_API etl_pmc_kind etl_pmc_kind_from_name(const char *name);
ETL_API const char *etl_pmc_kind_name(etl_pmc_kind k);

typedef struct etl_pmc_sums {
    uint64_t slices;          /* slices counted */
    int64_t cpu_ns;           /* their CPU time (NSO - SI, whole) */
    uint64_t delta[ETL_PMC_MAX]; /* Σ counter deltas (saturating) */
    /* Bit k: delta[k] passed UINT64_MAX, so it is not known (it reads UINT64_MAX). Only with jumps no counter makes
       (a damaged trace: one CPU's counter that jumps up, back, and up again; several CPUs' jumps), in slots of
       other kinds (named kinds are checked: ETL_PMC_MAX_HZ). The total has every bit a thread, process or CPU has. */
    uint8_t saturated;
    /* Bit k: a slice of these sums carried no slot k (its switches carried fewer counters: a damaged or hostile
       trace whose CPUs' switches differ), so delta[k] is of some slices only: not known, nor any ratio of it. Bits
       at or past etl_pmc.counters are of no column. */
    uint8_t partial;
} etl_pmc_sums;

/* Ratios from sums (spec §6), rounded to the nearest (a half up); each is -1 when its counters are not named, or
 * partial, or the divisor is 0, CPI and GHz are -1 too when ΣCycles is 0 (a cycles counter that did not count), IPC when
 * ΣInstructions is 0 (an instructions counter that did not count), and any when a sum it takes is saturated. */
typedef struct etl_pmc_ratios {
    int64_t ipc_x1000;        /* ΣInstructions / ΣCycles */
    int64_t cpi_x1000;        /* ΣCycles / ΣInstructions */
    int64_t llc_mpki_x1000;   /* 1000·ΣLLC misses / ΣInstructions */
    int64_t branch_mpki_x1000;/* 1000·ΣBranch misses / ΣInstructions */
    int64_t branch_miss_pct_x100; /* 100·ΣBranch misses / ΣBranches */
    int64_t ghz_x1000;        /* ΣCycles / ΣCPU ns */
} etl_pmc_ratios;

typedef struct etl_pmc_thread {
    uint32_t thread;          /* instance index, or ETL_SCHED_IDLE (every CPU's idle thread together) */
    etl_pmc_sums s;
} etl_pmc_thread;

typedef struct etl_pmc_process {
    uint32_t process;         /* instance, ETL_SCHED_NONE (threads of no known process) or ETL_SCHED_IDLE */
    uint32_t threads;
    etl_pmc_sums s;
} etl_pmc_process;

typedef struct etl_pmc_options {
    size_t sz;                /* sizeof(etl_pmc_options) */
    int64_t v0, v1;           /* window: a slice counts if its switch-in time is in [v0, v1) */
    unsigned nkinds;          /* slots named; later slots are ETL_PMC_OTHER */
    etl_pmc_kind kinds[ETL_PMC_MAX];
} etl_pmc_options;

typedef struct etl_pmc {
    etl_pmc_options o;
    const etl_sched *model;
    /* After finish, by Σcycles (the first slot when no slot is cycles), descending. */
    etl_pmc_thread *threads;
    size_t nthreads;
    etl_pmc_process *processes;
    size_t nprocesses;
    etl_pmc_sums *cpus;       /* per CPU; after finish with a model, every CPU of it (0 for one with no slice) */
    size_t ncpus;
    etl_pmc_sums total;
    unsigned counters;        /* the most counters a switch carried (every row's, in the window or not) */
    uint64_t switches_pmc;    /* switch-ins with counters (rows' switch-ins), in the window as the slices are */
    uint64_t switches_no_pmc; /* switch-ins without, in the window */
    uint64_t slices_unpaired; /* rows in the window whose switch-in or switch-out lacks counters */
    uint64_t slices_unknown;  /* rows of no known thread (across a lost buffer): counted nowhere */
    uint64_t pmc_counter_reset;  /* slices dropped: a counter went backwards */
    uint64_t pmc_count_mismatch; /* slices dropped: the two switches carry different counter counts */
    uint64_t pmc_implausible; /* slices dropped: a counter jumped more than a CPU can count (ETL_PMC_MAX_HZ) */
    uint64_t slices_by_count[ETL_PMC_MAX + 1]; /* slices counted, by the counters their switches carry: those with
                                                  fewer than counters make their slots' sums partial */
    struct {                  /* the first of them (the lowest switch-in time), with pmc_implausible */
        int64_t si, nso;      /* the slice, canonical ns */
        uint32_t cpu;
        unsigned slot;        /* the counter that jumped */
        uint64_t delta;
    } implausible_first;
    struct etl_pmc_priv *priv;
} etl_pmc;

/* The default names by position, as `etlkit synth --pmc` writes them: cycles, instructions, llc, branch. */
ETL_API void etl_pmc_options_init(etl_pmc_options *o);
ETL_API etl_status etl_pmc_init(etl_pmc *p, const etl_sched *model, const etl_pmc_options *o);
/* An etl_sched_row_fn (ctx = the etl_pmc). */
ETL_API void etl_pmc_add(void *ctx, const etl_sched_row *row);
/* A consumer for etl_sched_percpu_run that gathers into p (initialised with no model): see etl_usage_percpu. */
ETL_API void etl_pmc_percpu(etl_pmc *p, etl_sched_percpu_consumer *c);
/*
 * Sorts and sums (end_ns closes an open window). ETL_E_NOMEM: rows were lost, no answer; ETL_E_INVALID_ARG: p not
 * initialised. Once finished, a later call changes nothing and returns the first call's status (end_ns is then not read).
 */
ETL_API etl_status etl_pmc_finish(etl_pmc *p, int64_t end_ns);
ETL_API void etl_pmc_free(etl_pmc *p);
ETL_API void etl_pmc_ratios_of(const etl_pmc *p, const etl_pmc_sums *s, etl_pmc_ratios *out);
/* The slot of a kind, or -1 when no slot has that name. */
ETL_API int etl_pmc_slot(const etl_pmc *p, etl_pmc_kind k);

#ifdef __cplusplus
}
#endif
#endif

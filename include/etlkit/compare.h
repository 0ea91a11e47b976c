/*
 * etlkit/compare.h - what changed between two traces (spec analyses.md §3): two
 * etl_usage results (what `cpu` and `waits` print) matched by process and thread
 * name, per second of window, and a tiny threshold language (--fail-if) for CI
 * gates.
 */
#ifndef ETLKIT_COMPARE_H
#define ETLKIT_COMPARE_H

#include "etlkit/usage.h"

#ifdef __cplusplus
extern "C" {
#endif


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
    ETL_CMP_REASON          /* a wait reason (wait and switches: waits per second) */
} etl_cmp_scope;

/* One matched name: its metrics in both traces (per second of window where the metric says so). */
typedef struct etl_cmp_row {
    char *name;             /* image name; "image/thread name" for threads; the reason's name */
    uint8_t scope;          /* etl_cmp_scope */
    uint8_t in_before, in_after;
    uint8_t p_exact;        /* percentiles exact (one process instance of this name in each trace) */
    /*
     * Bit m (1u << metric): before[m] / after[m] is known; an unknown value is 0 and means nothing.
     * Amounts (cpu, wait, switches) are unknown on a side whose window is 0 ns or holds no CPU time
     * (a trace without switches), wait amounts on a side where no switch-in had a ReadyThread (no
     * wait can be measured); they are known and 0 for a name absent from a side otherwise. A
     * percentile (and a reason's longest wait) is unknown where it has no value: a name absent from
     * a side, or no Ready value of it there. When one side has ReadyThread events and the other none,
     * the other's percentiles are unknown: there they cover only preempted switch-ins (spec §1 rule
     * 2), another population, so their change means nothing.
     */
    uint8_t known_before, known_after;
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

/*
 * A side of a comparison beyond its rows (apart from etl_compare, whose size is part of the ABI): its CPU time
 * in the window of no known thread (Σ etl_usage_cpu.unknown_ns: buffers lost, a file cut short, a compact CPU's
 * last slice) and its CPU time (busy + idle + unknown); damaged: its reading found records lost (the caller's
 * etl_stats_damaged). Amounts count the known time only; what the unknown time held could change them.
 * no_ready: its trace has no ReadyThread event (etl_compare_sides sets it), so its waits are unknown for that,
 * damage or not (a bool beside damaged: the struct's size and layout are 0.2's).
 */
typedef struct etl_cmp_side {
    int64_t unknown_ns, cputime_ns;
    bool damaged;
    bool no_ready;
} etl_cmp_side;
/* sides[0] BEFORE's, sides[1] AFTER's, from the results etl_compare_build matched (damaged false: set it). */
ETL_API void etl_compare_sides(const etl_usage *before, const etl_usage *after, etl_cmp_side sides[2]);
ETL_API void etl_compare_free(etl_compare *c);
/* A row by scope and name (case-insensitive; "svchost" matches "svchost.exe"); NULL if absent or name is NULL
   (the total: name is not read). */
ETL_API const etl_cmp_row *etl_compare_find(const etl_compare *c, unsigned scope, const char *name);
/*
 * The relative change of a row's metric, AFTER against BEFORE, in hundredths of a percent to the
 * nearest (a half away from zero), as a gate's line shows it: ETL_CMP_CHANGE_VALUE with *out;
 * _NEW (_NEW_NEG) from 0 to a positive (negative) value; _NONE when it cannot be computed (a side
 * unknown, or 0 to 0). *out is 0 but for _VALUE.
 */
enum { ETL_CMP_CHANGE_NONE, ETL_CMP_CHANGE_VALUE, ETL_CMP_CHANGE_NEW, ETL_CMP_CHANGE_NEW_NEG };
ETL_API int etl_cmp_change_pct(const etl_cmp_row *r, unsigned metric, int64_t *out);
/* Per-second value: v * 10^9 / window, to the nearest (a half away from zero); 0 for a window <= 0. */
ETL_API int64_t etl_per_second(int64_t v, int64_t window_ns);

/*
 * --fail-if EXPR:   METRIC '(' SCOPE ')' OP THRESHOLD
 *   METRIC     cpu | wait | switches | ready_p50 | ready_p90 | ready_p99 | ready_max
 *   SCOPE      total | process=NAME | thread=PROCESS/THREADNAME | reason=WAITREASON (wait, switches)
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
 * 1 if the change crosses the threshold, 0 if not, -1 if the change cannot be computed (the value
 * is unknown on a side: see etl_cmp_row.known_*; a gate should fail on it, never pass). *delta gets
 * AFTER - BEFORE (or hundredths of a percent for a relative threshold; from 0 to a value is
 * +infinity, INT64_MAX, from 0 to 0 is 0 %), 0 when -1; *found is 0 when the name is in neither
 * trace (never crossed).
 */
ETL_API int etl_cmp_expr_eval(const etl_compare *c, const etl_cmp_expr *e, int64_t *delta, int *found);
/*
 * etl_cmp_expr_eval judged on what each side's unknown time could hold (sides: etl_compare_sides'): a cpu gate
 * is decided only when both ends of what it allows cross alike (its CPU time between the known and the known
 * plus the unknown time; a thread's plus at most the window; *delta is the known time's); a wait, switches or
 * ready gate on a damaged side with unknown time cannot be computed (nothing bounds what it held; a compact
 * trace's last slices hide no switch-in but their own, which every reading lacks alike), and so is one whose value
 * is unknown only on damaged sides with unknown time (their waits all lost with the records; not a side whose trace
 * has no ReadyThread, no_ready, whose waits are unknown undamaged: that gate fails). *undecided: the sides
 * whose unknown time left the gate undecided (bit 0 BEFORE, bit 1 AFTER), 0 when it was decided or failed for
 * another reason. sides NULL: as etl_cmp_expr_eval, which judges the known values alone.
 */
ETL_API int etl_cmp_expr_judge(const etl_compare *c, const etl_cmp_side sides[2], const etl_cmp_expr *e,
                               int64_t *delta, int *found, unsigned *undecided);
ETL_API const char *etl_cmp_metric_name(unsigned metric);

#ifdef __cplusplus
}
#endif
#endif

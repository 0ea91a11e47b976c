/*
 * rep_json.h - each scheduler report's --json object, written by one function that the
 * command and the report page share: `etlkit cpu FILE --json --top N` prints exactly the
 * object the page embeds under "cpu" (and so for waits, spinlocks, pmc and wakeups).
 *
 * Each <report>_json writes the members of the object (the caller opens and closes it);
 * a->top, a->process and a->thread select the rows as the command line does, and a->skip
 * (the event kinds the command's run leaves out, REP_SKIP_*) decides which anomaly
 * counters it reports, so that a page that ran every kind in one pass says what the
 * command says.
 */
#ifndef ETLKIT_CLI_REP_JSON_H
#define ETLKIT_CLI_REP_JSON_H

#include "etlkit/symbols.h"
#include <limits.h>
#include "report.h"
#include "etlkit/wakeups.h"
#include "etlkit/spinlocks.h"
#include "etlkit/pmc.h"
#include "etlkit/profile.h"

/* The event kinds each command's run skips (rep_args.skip). */
#define REP_SKIP_CPU (1u << ETL_SCHED_READY | 1u << ETL_SCHED_SPINLOCK)
#define REP_SKIP_WAITS 0u
#define REP_SKIP_SPINLOCKS (1u << ETL_SCHED_READY | 1u << ETL_SCHED_SWITCH)
#define REP_SKIP_PMC (1u << ETL_SCHED_READY | 1u << ETL_SCHED_SPINLOCK)
#define REP_SKIP_WAKEUPS 0u

/* --top as spinlocks was given it: not at all (then 20 rows for people, SPIN_LIST_TOP in JSON and CSV). */
#define SPIN_TOP_UNSET UINT_MAX
#define SPIN_LIST_TOP 1000u

/* The window, "file" and "num_cpus" (when ncpu > 0) members every report's object starts with. */
void rep_json_head(jw *w, const rep_run *run, int64_t v0, int64_t v1, uint64_t ncpu);
/*
 * A histogram as the array key of {lo: bin's lower bound, hi: the next bin's (null for the
 * last), "count"}: n bins, bin i from lo_ns[i].
 */
void rep_json_bins(jw *w, const char *key, const char *lo, const char *hi, const int64_t *lo_ns,
                   const uint64_t *count, unsigned n);
/* The "anomalies" member as a run that skipped the kinds in skip reports them. */
void rep_json_anomalies_as(const rep_run *run, jw *w, uint32_t skip);

/* cpu: per CPU, the top processes and threads; per interval too when intervals and u has them. */
void cpu_json(jw *w, const rep_run *run, const etl_usage *u, const rep_args *a, int intervals);

/* waits: by_ready is u's threads sorted by time not running (waits_sort), the order the rows take. */
void waits_sort(etl_usage_thread *t, size_t n);
void waits_json(jw *w, const rep_run *run, const etl_usage *u, const etl_usage_thread *by_ready, const rep_args *a);

/* spinlocks: sp the sampling parameters in effect and where each came from. */
void spinlocks_json(jw *w, const rep_run *run, const etl_spinlocks *s, const etl_spin_params *sp, uint64_t filtered,
                    const rep_args *a);

/* pmc: the counters' names as --counters gave them (labels empty and named 0 without it). */
void pmc_json(jw *w, const rep_run *run, const etl_pmc *p, const char (*labels)[32], int named, const rep_args *a);

/* wakeups: over the run's window. */
void wakeups_json(jw *w, const rep_run *run, const etl_wakeups *wk, const rep_args *a);

/*
 * profile (cmd_profile.c): the members `etlkit profile FILE --json --top N` prints (top 0: every row; s NULL: no
 * symbols); r: the trace p was read from (its header's losses).
 */
void profile_json(jw *w, const etl_reader *r, const char *path, const etl_profile *p, unsigned top, etl_symbols *s);

#endif

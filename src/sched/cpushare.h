/*
 * cpushare.h - what the time-ordered source (source.c) and the model CPU by CPU
 * (percpu.c) decide the same way: which hooks the model reads, whether a trace logs
 * compact switches, and how the CPUs are dealt to threads.
 */
#ifndef ETLKIT_SRC_SCHED_CPUSHARE_H
#define ETLKIT_SRC_SCHED_CPUSHARE_H

#include <stdbool.h>
#include <stdint.h>
#include "etlkit/sched.h"
#include "etlkit/ccswap.h"

/* The model's kind of event a kernel hook is (ETL_SCHED_*), 0 for the hooks the model does not use. */
static inline unsigned etl_sched_kind_of(uint16_t h)
{
    if (h == ETL_HOOK_CSWITCH || h == ETL_HOOK_CSWITCH_BATCH) return ETL_SCHED_SWITCH;
    if (h == ETL_HOOK_READY_THREAD) return ETL_SCHED_READY;
    if (h == ETL_HOOK_SPINLOCK) return ETL_SCHED_SPINLOCK;
    if (h >= ETL_HOOK_THREAD_START && h <= ETL_HOOK_THREAD_DC_END) return ETL_SCHED_THREAD;
    if (h == ETL_HOOK_THREAD_SET_NAME) return ETL_SCHED_SET_NAME;
    if ((h >= ETL_HOOK_PROCESS_START && h <= ETL_HOOK_PROCESS_DC_END) || h == ETL_HOOK_PROCESS_DEFUNCT)
        return ETL_SCHED_PROCESS;
    return 0;
}

/* Threads at most that read one trace: the merge and the model are the limit long before. */
#define ETL_SCHED_MAX_WORKERS 16

/*
 * Whether the trace logs compact switches, so that each CPU's batches are read ahead
 * of its other records: the group mask of the first records decides; no mask, assume so.
 */
bool etl_sched_logs_compact(etl_reader *r);

/*
 * The CPUs with buffers dealt to at most n shares (share[c] = its share + 1, 0 for a
 * CPU without buffers), by buffer count, the busiest first to the lightest share;
 * share 0 counts weight0 times its load (its thread may have more to do). Returns the
 * number of shares, 0 when out of memory.
 */
unsigned etl_sched_deal_cpus(etl_reader *r, unsigned n, unsigned weight0, uint8_t *share);

/*
 * A compact batch (its record at rec, in the buffer w holds) has been expanded by x: if x
 * stopped it at a switch time outside the session window (its bad_time moved past
 * before), that is told and counted as damage of the record (etl_walk_bad_time).
 */
void etl_sched_batch_checked(const etl_walk *w, const uint8_t *rec, const etl_batch_expander *x, uint64_t before);

#endif

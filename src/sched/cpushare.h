/*
 * cpushare.h - what the time-ordered source (source.c) and the model CPU by CPU
 * (percpu.c) decide the same way: whether a trace logs compact switches, and how
 * the CPUs are dealt to threads.
 */
#ifndef ETLKIT_SRC_SCHED_CPUSHARE_H
#define ETLKIT_SRC_SCHED_CPUSHARE_H

#include <stdbool.h>
#include <stdint.h>
#include "etlkit/container.h"

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

#endif

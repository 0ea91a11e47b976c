/*
 * model_priv.h - what the per-CPU run (percpu.c) asks of the model beyond its
 * public API.
 */
#ifndef ETLKIT_SRC_SCHED_MODEL_PRIV_H
#define ETLKIT_SRC_SCHED_MODEL_PRIV_H

#include <stdbool.h>
#include "etlkit/sched.h"

/*
 * on: every Start of a thread started and not ended makes a new instance, as if it had
 * run since (its first pass over the lifetime records, which knows no switch: every
 * place an instance may change becomes a boundary that its sightings then decide).
 */
void etl_sched_restarts_new(etl_sched *m, bool on);
/* Where CPU cpu's last slice stops in a file that misses buffers: its last record if its end is missing. */
uint64_t etl_sched_cpu_end(const etl_reader *r, unsigned cpu, uint64_t end_ts);

#endif

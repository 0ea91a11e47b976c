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

/* Where a missing buffer may have held a CPU's records (etl_reader_cpu_gaps), and the next one a slice may span. */
typedef struct etl_gap_cursor {
    const etl_ts_span *gap;
    size_t n, next;
} etl_gap_cursor;

/*
 * Whether the slice (si, t) spans one of them: switches lost there, so who ran is not known even
 * when the switches on its two sides agree. A CPU's slices come in time order: the spans before
 * si are passed for good.
 */
static inline bool etl_gap_spans(etl_gap_cursor *g, uint64_t si, uint64_t t)
{
    while (g->next < g->n && g->gap[g->next].hi <= si) g->next++;
    return g->next < g->n && g->gap[g->next].lo < t;
}

#endif

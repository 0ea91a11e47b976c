/*
 * sched_stack_rows.c - the switches' stacks in the exported tables: each slice's
 * new_stack_id (its New Thread Stack) and readying_stack_id (its Readying Thread
 * Stack), and those stacks' frames in the stack table, beside the profile's.
 *
 * One id space: the slices are written during the model's pass, before the
 * profile's pass knows its stacks, so the switches' stacks take the ids from 0
 * (their etl_sched_stacks ids) and the profile's come after them (stack_base).
 * A sample stack equal to a switch stack is written under both ids (rare: a
 * switch's stack ends in the kernel's swap-context frames, a sample's rarely).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "etlkit/export.h"
#include "etlkit/schedstacks.h"
#include "etlkit/symbols.h"
#include "export/rows_internal.h"
#include "stacks/label_whole.h"

etl_status etl_export_rows_open_stacks(etl_export_rows *x, etl_reader *r)
{
    /* sample too: its stack ids come after the switches' (stack_base), filled alone or not */
    if (x->stacks ||
        !(etl_rows_want(x, ETL_TABLE_SLICE) || etl_rows_want(x, ETL_TABLE_STACK) || etl_rows_want(x, ETL_TABLE_SAMPLE)) ||
        !etl_sched_stacks_logged(r))
        return ETL_OK;
    etl_sched_stacks *s;
    etl_status st = etl_sched_stacks_build_threads(r, x->o.threads, &s);
    if (st != ETL_OK) return st;
    uint64_t n = etl_sched_stacks_stats_get(s)->stacks;
    uint8_t *used = n <= UINT32_MAX / 2 ? calloc(n ? n : 1, 1) : NULL;
    if (!used) {
        etl_sched_stacks_free(s);
        return n <= UINT32_MAX / 2 ? ETL_E_NOMEM : ETL_E_RANGE;
    }
    x->stack_used = used;
    x->stacks = s;
    if (x->o.symbols) etl_sched_stacks_set_symbols(s, x->o.symbols, ETL_SYMBOLS_OFFSET);
    x->stack_base = (uint32_t)n;
    return ETL_OK;
}

void etl_rows_slice_stacks(etl_export_rows *x, const etl_sched_row *r, bool values)
{
    uint32_t id[2] = {etl_sched_stacks_row_new(x->stacks, r), etl_sched_stacks_row_readying(x->stacks, r)};
    for (unsigned k = 0; k < 2; k++) {
        if (id[k] == ETL_SCHED_STACK_NONE || id[k] >= x->stack_base) continue;
        if (values) etl_rows_vi(x, 25 + k, id[k]);
        x->stack_used[id[k]] = 1;
    }
}

const etl_sched_stacks *etl_export_rows_stacks(const etl_export_rows *x)
{
    return x ? x->stacks : NULL;
}

bool etl_export_rows_damaged(const etl_export_rows *x)
{
    return x && (x->profile_damaged || (x->stacks && etl_stats_damaged(etl_sched_stacks_damage(x->stacks))));
}

etl_status etl_export_rows_sched_stacks(etl_export_rows *x)
{
    if (!x->stacks || !etl_rows_want(x, ETL_TABLE_STACK)) return x->failed ? ETL_E_IO : ETL_OK;
    char addr[24], sym[1200];
    for (uint32_t id = 0; id < x->stack_base && !x->failed; id++) {
        if (!x->stack_used[id]) continue;
        uint32_t n;
        const etl_profile_frame *f = etl_sched_stacks_frames(x->stacks, id, &n);
        for (uint32_t d = 0; d < n; d++) {
            snprintf(addr, sizeof addr, "0x%" PRIx64, f[d].address);
            etl_rows_clear(x, ETL_TABLE_STACK);
            etl_rows_vi(x, 0, id);
            etl_rows_vi(x, 1, d);
            etl_rows_vs(x, 2, addr);
            if (f[d].image != ETL_PROFILE_NONE) etl_rows_vi(x, 3, f[d].image);
            char *label = NULL; /* whole: two names cut alike would read as one function */
            if (x->o.symbols &&
                !(label = etl_sched_label_whole(x->stacks, &f[d], sym, sizeof sym, NULL)))
                return ETL_E_NOMEM;
            if (label) etl_rows_vs(x, 4, label);
            etl_rows_emit(x, ETL_TABLE_STACK);
            if (label != sym) free(label);
        }
    }
    return x->failed ? ETL_E_IO : ETL_OK;
}

/*
 * rows_internal.h - the table producer's state and its row helpers, shared by
 * tables.c (the scheduler's tables) and profile_rows.c (image, stack, sample).
 */
#ifndef ETLKIT_EXPORT_ROWS_INTERNAL_H
#define ETLKIT_EXPORT_ROWS_INTERNAL_H

#include "etlkit/export.h"

#define MAXCOLS 32

struct etl_export_rows {
    etl_export_rows_options o;
    etl_clock clock;
    etl_export_rows_stats st;
    int failed;
    bool profile_damaged; /* etl_export_rows_profile's pass found damage */
    etl_value v[MAXCOLS];
    struct etl_sched_stacks *stacks;       /* the switches' stacks (sched_stack_rows.c), NULL: none */
    uint8_t *stack_used;                   /* by their id: a slice row names it */
    uint32_t stack_base;                   /* the profile's stack ids come after the switches' (ids never collide) */
    /* by CPU, where its last slice (the model's tail) ends: finish writes the rest to the trace end as unknown */
    struct etl_rows_tail { uint64_t ts; int64_t ns; bool set; } *tails;
    unsigned ntails;
};

static inline bool etl_rows_want(const etl_export_rows *x, etl_table_id t)
{
    return !x->failed && (x->o.tables >> t & 1u);
}

static inline void etl_rows_clear(etl_export_rows *x, etl_table_id t)
{
    unsigned n = etl_export_tables()[t].ncols;
    for (unsigned i = 0; i < n; i++) x->v[i].kind = ETL_VALUE_NULL;
}

static inline void etl_rows_vi(etl_export_rows *x, unsigned k, int64_t v)
{
    x->v[k].kind = ETL_VALUE_INT;
    x->v[k].i = v;
}

/* A signed column: an unsigned value past INT64_MAX is NULL (only hostile files have them). */
static inline void etl_rows_vu(etl_export_rows *x, unsigned k, uint64_t v)
{
    if (v <= INT64_MAX) etl_rows_vi(x, k, (int64_t)v);
}

/* An ETL_COLUMN_UINT64 column: every value, its bits in i (each sink writes what its format holds). */
static inline void etl_rows_vu64(etl_export_rows *x, unsigned k, uint64_t v)
{
    x->v[k].kind = ETL_VALUE_INT;
    x->v[k].i = (int64_t)v;
}

static inline void etl_rows_vs(etl_export_rows *x, unsigned k, const char *s)
{
    if (!s) return;
    x->v[k].kind = ETL_VALUE_TEXT;
    x->v[k].s = s;
}

static inline void etl_rows_emit(etl_export_rows *x, etl_table_id t)
{
    if (x->failed) return;
    x->st.rows[t]++;
    if (x->o.on_row(x->o.ctx, t, x->v)) x->failed = 1;
}

static inline bool etl_rows_in_window(const etl_export_rows *x, int64_t t)
{
    return !x->o.has_range || (t >= x->o.v0 && t < x->o.v1);
}

/*
 * The slice's new_stack_id and readying_stack_id (sched_stack_rows.c), marked for the stack table; values: set
 * in the slice row being built (false: the slice table is not filled, the stack table still has the row's stacks).
 */
void etl_rows_slice_stacks(etl_export_rows *x, const etl_sched_row *r, bool values);

#endif

/* rep_columns.c - see rep_columns.h. */
#include "rep_columns.h"
#include <string.h>

static uint32_t thread_of(const col_def *c, const void *row)
{
    uint32_t x;
    memcpy(&x, (const char *)row + c->off, sizeof x);
    return x;
}

static const etl_sched *model_of(const void *ctx) { return (*(const rep_run *const *)ctx)->model; }

void rep_col_tid(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    uint32_t x = thread_of(c, row);
    const etl_sched_thread *t = etl_sched_thread_at(model_of(ctx), x);
    if (x == ETL_SCHED_IDLE) cv_u64(v, 0);
    else if (t) cv_u64(v, t->tid);
    else cv_null(v);
}

void rep_col_pid(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    uint32_t x = thread_of(c, row);
    const etl_sched_thread *t = etl_sched_thread_at(model_of(ctx), x);
    if (x == ETL_SCHED_IDLE) cv_u64(v, 0);
    else if (t && t->pid != UINT32_MAX) cv_u64(v, t->pid);
    else cv_null(v);
}

void rep_col_process(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    uint32_t x = thread_of(c, row);
    cv_str(v, x == ETL_SCHED_NONE ? "Unknown" : etl_sched_process_name(model_of(ctx), x));
}

void rep_col_label(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    cv_str(v, rep_process_label(model_of(ctx), thread_of(c, row), v->buf));
}

void rep_col_name(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    uint32_t x = thread_of(c, row);
    cv_str(v, x == ETL_SCHED_IDLE ? "Idle" : rep_thread_name(model_of(ctx), x));
}

/*
 * rep_columns.h - the columns every report's thread rows share (TID, PID, process, its
 * "image (PID)" label, thread name), as getters for columns.h's tables. The row's thread
 * instance is the uint32_t at the column's offset; ctx points at what starts with the
 * run's `const rep_run *` (a report's rows context, or the address of that pointer).
 * The idle thread is TID 0 of PID 0, "Idle"; a thread the model does not know has nulls.
 */
#ifndef ETLKIT_CLI_REP_COLUMNS_H
#define ETLKIT_CLI_REP_COLUMNS_H

#include "columns.h"
#include "report.h"

void rep_col_tid(const col_def *c, const void *ctx, const void *row, col_val *v);
void rep_col_pid(const col_def *c, const void *ctx, const void *row, col_val *v);
void rep_col_process(const col_def *c, const void *ctx, const void *row, col_val *v);
void rep_col_label(const col_def *c, const void *ctx, const void *row, col_val *v);
void rep_col_name(const col_def *c, const void *ctx, const void *row, col_val *v);

/*
 * The five columns of a row type T whose field F is the thread: TID in every form, PID and
 * process in JSON only, the label ("Process" for people, "process" in CSV, process_label in
 * JSON) and the name.
 */
#define REP_THREAD_COLS(T, F)                                                          \
    {"=TID", "tid", "tid", COL_COUNT, 0, rep_col_tid, offsetof(T, F)},                 \
    {NULL, NULL, "pid", COL_COUNT, 0, rep_col_pid, offsetof(T, F)},                    \
    {NULL, NULL, "process", COL_TEXT, 0, rep_col_process, offsetof(T, F)},             \
    {"Process", "process", "process_label", COL_TEXT, 0, rep_col_label, offsetof(T, F)}, \
    {"Thread name", "name", "name", COL_TEXT, 0, rep_col_name, offsetof(T, F)}

#endif

/*
 * etlkit/export.h - the scheduler model's data as tables (SQLite, CSV) and as
 * timelines (Perfetto protobuf, ftrace text) for the tools people already use.
 *
 * Tables: one schema, defined once (etl_export_schema), from which the SQLite
 * tables, the CSV headers, `etlkit export --schema` and docs/schema.md all come.
 * A table producer (etl_xtab) turns the scheduler's events, the model's rows and
 * ReadyThreads into rows of typed values and hands each to a sink: the SQLite
 * loader below (library etlkit_export, linked with libsqlite3) or the CLI's CSV
 * writer. Nothing is kept per event; the thread and process tables are written
 * at the end from the model's instances.
 *
 * Timelines: etl_xtrace writes the switches and ReadyThreads as they come, in
 * time order, as Perfetto `etw_events` bundles (one buffer per CPU, flushed as a
 * packet when full) or as ftrace text lines (spec perfetto.md §2-§7).
 */
#ifndef ETLKIT_EXPORT_H
#define ETLKIT_EXPORT_H

#include <stdio.h>
#include "etlkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the schema ------------------------------------------------------------------ */

typedef enum etl_xtable_id {
    ETL_XT_TRACE = 0,
    ETL_XT_PROCESS,
    ETL_XT_THREAD,
    ETL_XT_CSWITCH,
    ETL_XT_SLICE,
    ETL_XT_THREAD_STATE,
    ETL_XT_READY,
    ETL_XT_SPINLOCK,
    ETL_XT_PMC,
    ETL_XT_ENUM_NAME,
    ETL_XT_COUNT
} etl_xtable_id;

typedef struct etl_xcolumn {
    const char *name;
    const char *type;     /* SQLite declared type: "INTEGER" or "TEXT" */
    const char *desc;
} etl_xcolumn;

typedef struct etl_xtable {
    const char *name;
    const char *desc;
    const etl_xcolumn *cols;
    unsigned ncols;
    const char *const *indexes; /* "CREATE INDEX ..." statements, NULL-terminated */
} etl_xtable;

typedef struct etl_xview {
    const char *name;
    const char *desc;
    const char *sql;              /* the CREATE VIEW statement */
    const etl_xcolumn *cols;      /* its columns, for the documentation (type = affinity) */
    unsigned ncols;
} etl_xview;

/* The tables, indexed by etl_xtable_id. */
ETL_API const etl_xtable *etl_export_tables(void);
ETL_API const etl_xview *etl_export_views(size_t *n);
/* The table of a name, or -1. */
ETL_API int etl_export_table_find(const char *name);
/* The schema as Markdown (docs/schema.md is exactly this). */
ETL_API void etl_export_schema_markdown(FILE *f);

/* ---- rows ------------------------------------------------------------------------ */

enum { ETL_XV_NULL = 0, ETL_XV_INT = 1, ETL_XV_TEXT = 2 };

typedef struct etl_xval {
    int kind;             /* ETL_XV_* */
    int64_t i;
    const char *s;        /* UTF-8, valid during the call */
} etl_xval;

/* A sink receives each row (ncols values, in the schema's column order). Non-zero return: stop (error). */
typedef int (*etl_xrow_fn)(void *ctx, etl_xtable_id table, const etl_xval *v);

typedef struct etl_xtab_options {
    size_t sz;                /* sizeof(etl_xtab_options) */
    etl_xrow_fn on_row;
    void *ctx;
    uint32_t tables;          /* bit per etl_xtable_id to fill; 0 = all (trace and enum_name always) */
    bool has_range;
    int64_t v0, v1;           /* with has_range: the window [v0, v1), canonical ns */
    const char *trace_id;     /* recorded in `trace` */
    const char *target;       /* "sqlite", "csv", ... recorded in `trace` */
} etl_xtab_options;

typedef struct etl_xtab_stats {
    uint64_t rows[ETL_XT_COUNT];
} etl_xtab_stats;

typedef struct etl_xtab etl_xtab;

ETL_API etl_status etl_xtab_open(const etl_clock *clock, const etl_xtab_options *o, etl_xtab **out);
/* Every source event, before the model sees it (cswitch, spinlock, pmc rows). */
ETL_API void etl_xtab_event(etl_xtab *x, const etl_sched_event *ev);
/* Every model row (an etl_sched_row_fn): slice and thread_state rows. */
ETL_API void etl_xtab_row(void *x, const etl_sched_row *row);
/* Every ReadyThread with its readier (an etl_sched_ready_fn): ready rows. */
ETL_API void etl_xtab_ready(void *x, const etl_sched_ready *r);

/* What the trace table records besides the header. */
typedef struct etl_xtab_end {
    const etl_reader *reader;
    const char *path;
    const etl_sched *model;
    const etl_sched_source_stats *source;
    const etl_stats *damage;
    uint64_t end_ts;
} etl_xtab_end;

/* Writes thread, process, trace and enum_name; returns non-zero if a sink call failed (now or before). */
ETL_API int etl_xtab_finish(etl_xtab *x, const etl_xtab_end *end);
ETL_API const etl_xtab_stats *etl_xtab_stats_get(const etl_xtab *x);
ETL_API void etl_xtab_close(etl_xtab *x);

/* ---- SQLite (library etlkit_export) ---------------------------------------------- */

typedef struct etl_xsqlite etl_xsqlite;

/*
 * Opens (creates) the database at path, which must be new or empty, and creates
 * the tables; then rows go through etl_xsqlite_row (an etl_xrow_fn) in large
 * transactions. etl_xsqlite_close(.., commit=1) commits, creates the indexes and
 * views, and closes. Errors: a message in err[256].
 */
ETL_API etl_status etl_xsqlite_open(const char *path, etl_xsqlite **out, char err[256]);
ETL_API int etl_xsqlite_row(void *ctx, etl_xtable_id table, const etl_xval *v);
ETL_API etl_status etl_xsqlite_close(etl_xsqlite *s, int commit, char err[256]);

/* ---- timelines: Perfetto and ftrace ---------------------------------------------- */

typedef enum etl_xtrace_format { ETL_XTRACE_PERFETTO = 1, ETL_XTRACE_FTRACE = 2 } etl_xtrace_format;

typedef struct etl_xtrace_options {
    size_t sz;
    etl_xtrace_format format;
    bool has_range;
    int64_t v0, v1;
} etl_xtrace_options;

typedef struct etl_xtrace_stats {
    uint64_t switches, ready, names, packets, lines;
    uint64_t negative_times;  /* events before the trace start, written at 0 */
} etl_xtrace_stats;

typedef struct etl_xtrace etl_xtrace;

/* Writes to f (not closed by etl_xtrace_close). */
ETL_API etl_status etl_xtrace_open(FILE *f, const etl_clock *clock, const etl_xtrace_options *o, etl_xtrace **out);
/* Every source event (switches, names), before the model sees it. */
ETL_API void etl_xtrace_event(etl_xtrace *w, const etl_sched_event *ev);
/* Every ReadyThread with its readier (the model's on_ready). */
ETL_API void etl_xtrace_ready(void *w, const etl_sched_ready *r);
/* Flushes what is buffered; ETL_E_IO if a write failed. */
ETL_API etl_status etl_xtrace_finish(etl_xtrace *w);
ETL_API const etl_xtrace_stats *etl_xtrace_stats_get(const etl_xtrace *w);
ETL_API void etl_xtrace_close(etl_xtrace *w);

/* ftrace's prev_state letter for a KTHREAD_STATE ("R", "S", "D", "X"); unknown states give "R". */
ETL_API const char *etl_ftrace_state(unsigned state, bool known);

#ifdef __cplusplus
}
#endif
#endif

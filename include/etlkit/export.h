/*
 * etlkit/export.h - the scheduler model's data as tables (SQLite, CSV) and as
 * timelines (Perfetto protobuf, ftrace text) for the tools people already use.
 *
 * Tables: one schema, defined once (etl_export_tables), from which the SQLite
 * tables, the CSV headers, `etlkit export --schema` and docs/schema.md all come.
 * A table producer (etl_export_rows) turns the scheduler's events, the model's rows and
 * ReadyThreads into rows of typed values and hands each to a sink: the SQLite
 * loader, the CSV writer or the Parquet writer below (library etlkit_export, linked with libsqlite3 and libzstd). Nothing is kept per event; the thread and process tables are written
 * at the end from the model's instances. The sampled profile's tables (image, stack, sample) and
 * Perfetto samples come from a pass of their own: etl_export_rows_profile, etl_timeline_profile (below).
 *
 * Timelines: etl_timeline writes the switches and ReadyThreads as they come, in
 * time order, as Perfetto `etw_events` bundles (one buffer per CPU, flushed as a
 * packet when full) or as ftrace text lines (spec perfetto.md §2-§7).
 */
#ifndef ETLKIT_EXPORT_H
#define ETLKIT_EXPORT_H

#include <stdio.h>
#include "etlkit/sched.h"
#include "etlkit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the schema ------------------------------------------------------------------ */

typedef enum etl_table_id {
    ETL_TABLE_TRACE = 0,
    ETL_TABLE_PROCESS,
    ETL_TABLE_THREAD,
    ETL_TABLE_CSWITCH,
    ETL_TABLE_SLICE,
    ETL_TABLE_THREAD_STATE,
    ETL_TABLE_READY,
    ETL_TABLE_SPINLOCK,
    ETL_TABLE_PMC,
    ETL_TABLE_ENUM_NAME,
    ETL_TABLE_IMAGE,        /* the profile's tables (etl_export_rows_profile below): empty without samples and images */
    ETL_TABLE_STACK,
    ETL_TABLE_SAMPLE,
    ETL_TABLE_COUNT
} etl_table_id;

/*
 * A column's storage in the Parquet export, declared once beside its SQLite type
 * (etl_column_def.kind): the type (low byte) and flags. 0 is the SQLite type's
 * default: a nullable INT64 for INTEGER, a nullable UTF-8 string for TEXT, with a
 * dictionary tried for either.
 */
enum {
    ETL_COLUMN_DEFAULT = 0,
    ETL_COLUMN_INT8,          /* INT32 + INT(8, signed) */
    ETL_COLUMN_INT16,         /* INT32 + INT(16, signed) */
    ETL_COLUMN_INT32,         /* INT32 + INT(32, signed) */
    ETL_COLUMN_INT64,         /* INT64 + INT(64, signed) */
    ETL_COLUMN_UINT8,         /* INT32 + INT(8, unsigned) */
    ETL_COLUMN_UINT16,        /* INT32 + INT(16, unsigned) */
    ETL_COLUMN_UINT32,        /* INT32 + INT(32, unsigned) */
    ETL_COLUMN_BOOL,          /* BOOLEAN: a 0/1 flag (SQLite and CSV keep 0 and 1) */
    ETL_COLUMN_TIMESTAMP_NS,  /* INT64 + TIMESTAMP(NANOS, UTC): ns since 1970 */
    ETL_COLUMN_TEXT,          /* BYTE_ARRAY + STRING (UTF-8) */
    ETL_COLUMN_UINT64,        /* INT64 + INT(64, unsigned): etl_value.i holds the value's 64 bits (read it as
                                 uint64_t); SQLite, whose INTEGER is signed, stores one past INT64_MAX as NULL */
    ETL_COLUMN_TYPE_MASK = 0xFF,
    ETL_COLUMN_NOT_NULL = 1u << 8,  /* never NULL (REQUIRED): a NULL is an error */
    ETL_COLUMN_DELTA = 1u << 9,     /* DELTA_BINARY_PACKED (INT64 only): times and counters */
    ETL_COLUMN_PLAIN = 1u << 10     /* no dictionary: values that rarely repeat */
};

typedef struct etl_column_def {
    const char *name;
    const char *type;     /* SQLite declared type: "INTEGER" or "TEXT" */
    const char *desc;
    unsigned kind;        /* Parquet storage: ETL_COLUMN_* type | flags (0: from type) */
} etl_column_def;

typedef struct etl_table_def {
    const char *name;
    const char *desc;
    const etl_column_def *cols;
    unsigned ncols;
    const char *const *indexes; /* "CREATE INDEX ..." statements, NULL-terminated */
    const char *order;          /* the Parquet files' row order in each row group ("cpu,ts"); NULL: as produced */
} etl_table_def;

typedef struct etl_view_def {
    const char *name;
    const char *desc;
    const char *sql;              /* the CREATE VIEW statement */
    const etl_column_def *cols;      /* its columns, for the documentation (type = affinity) */
    unsigned ncols;
} etl_view_def;

/* The tables, indexed by etl_table_id. */
ETL_API const etl_table_def *etl_export_tables(void);
ETL_API const etl_view_def *etl_export_views(size_t *n);
/* The table of a name, or -1. */
ETL_API int etl_export_table_find(const char *name);
/* The schema as Markdown (docs/schema.md is exactly this). */
ETL_API void etl_export_schema_markdown(FILE *f);

/* ---- rows ------------------------------------------------------------------------ */

enum { ETL_VALUE_NULL = 0, ETL_VALUE_INT = 1, ETL_VALUE_TEXT = 2 };

typedef struct etl_value {
    int kind;             /* ETL_VALUE_* */
    int64_t i;            /* in an ETL_COLUMN_UINT64 column: the unsigned value's bits */
    const char *s;        /* UTF-8, valid during the call */
} etl_value;

/* A sink receives each row (ncols values, in the schema's column order). Non-zero return: stop (error). */
typedef int (*etl_row_sink_fn)(void *ctx, etl_table_id table, const etl_value *v);

typedef struct etl_export_rows_options {
    size_t sz;                /* sizeof(etl_export_rows_options) */
    etl_row_sink_fn on_row;
    void *ctx;
    uint32_t tables;          /* bit per etl_table_id to fill; 0 = all (trace and enum_name always) */
    bool has_range;
    int64_t v0, v1;           /* with has_range: the window [v0, v1), canonical ns */
    const char *trace_id;     /* recorded in `trace` */
    const char *target;       /* "sqlite", "csv", ... recorded in `trace` */
    /* The `stack` table's `symbol` column: module!function+0xoff (etlkit/symbols.h); NULL: the column is NULL. */
    struct etl_symbols *symbols;
    unsigned threads;         /* for the profile's and the scheduler stacks' passes: 0 or 1, the caller's alone */
} etl_export_rows_options;

typedef struct etl_export_rows_stats {
    uint64_t rows[ETL_TABLE_COUNT];
} etl_export_rows_stats;

typedef struct etl_export_rows etl_export_rows;

ETL_API etl_status etl_export_rows_open(const etl_clock *clock, const etl_export_rows_options *o, etl_export_rows **out);
/*
 * A trace_id from the trace's bytes, for a trace with no name (standard input): "sha256-" and the first 16
 * hex digits of their SHA-256, as `sha256sum` prints it, so two traces never share one and the same trace
 * always gets it. The length written (cap >= 24; 0 and "" when smaller).
 */
ETL_API size_t etl_export_content_id(const etl_reader *r, char *out, size_t cap);
/* Every source event, before the model sees it (cswitch, spinlock, pmc rows). */
ETL_API void etl_export_rows_event(etl_export_rows *x, const etl_sched_event *ev);
/* Every model row (an etl_sched_row_fn): slice and thread_state rows. */
ETL_API void etl_export_rows_row(void *x, const etl_sched_row *row);
/* Every ReadyThread with its readier (an etl_sched_ready_fn): ready rows. */
ETL_API void etl_export_rows_ready(void *x, const etl_sched_ready *r);

/* What the trace table records besides the header. */
typedef struct etl_export_rows_end {
    const etl_reader *reader;
    const char *path;
    const etl_sched *model;
    const etl_sched_source_stats *source;
    const etl_stats *damage;
    uint64_t end_ts;
} etl_export_rows_end;

/* Writes thread, process, trace and enum_name; returns non-zero if a sink call failed (now or before). */
ETL_API int etl_export_rows_finish(etl_export_rows *x, const etl_export_rows_end *end);
ETL_API const etl_export_rows_stats *etl_export_rows_stats_get(const etl_export_rows *x);
ETL_API void etl_export_rows_close(etl_export_rows *x);

/* ---- SQLite (library etlkit_export) ---------------------------------------------- */

typedef struct etl_sqlite_sink etl_sqlite_sink;

/*
 * Opens (creates) the database at path, which must be new or empty, and creates
 * the tables; then rows go through etl_sqlite_sink_row (an etl_row_sink_fn) in large
 * transactions. etl_sqlite_sink_close(.., commit=1) commits, creates the indexes and
 * views, and closes; closed without a commit (or a commit that fails), a file the sink
 * made is removed. A NULL or empty path is refused (ETL_E_INVALID_ARG: SQLite would
 * make a temporary database). Errors: a message in err[256].
 */
ETL_API etl_status etl_sqlite_sink_open(const char *path, etl_sqlite_sink **out, char err[256]);
ETL_API int etl_sqlite_sink_row(void *ctx, etl_table_id table, const etl_value *v);
ETL_API etl_status etl_sqlite_sink_close(etl_sqlite_sink *s, int commit, char err[256]);
/*
 * The values of ETL_COLUMN_UINT64 columns past INT64_MAX stored as NULL so far (SQLite's INTEGER is
 * signed 64-bit), and the first one's "table.column" in where (when not NULL; "" when none).
 */
ETL_API uint64_t etl_sqlite_sink_nulled(const etl_sqlite_sink *s, char where[64]);

/* ---- CSV (library etlkit_export) ------------------------------------------------- */

/*
 * A directory OUT with one OUT/<table>.csv per table written (RFC 4180, a header
 * row, CRLF, each row's first column the trace_id), under the output rules of
 * `etlkit export` (a temporary directory renamed into place when complete; nothing
 * left behind by a failure or a signal):
 *
 *     etl_csv_sink *c;
 *     etl_csv_sink_check(dir, &o, &c, &diag);   before reading anything: a refusal costs nothing
 *     etl_csv_sink_create(c, &diag);            the temporary directory, its files and header rows
 *     ... rows through etl_csv_sink_row (an etl_row_sink_fn, ctx c) ...
 *     etl_csv_sink_finish(c, &diag);            flushes and closes the files
 *     etl_csv_sink_close(c, commit);            renames into place (commit) or removes; frees c
 */
typedef struct etl_csv_sink etl_csv_sink;

typedef struct etl_csv_sink_options {
    size_t sz;                /* sizeof(etl_csv_sink_options) */
    uint32_t tables;          /* bit per etl_table_id to write; 0 = all (trace and enum_name always) */
    const char *trace_id;     /* every row's first column */
    bool force;               /* an existing OUT is written over (its tables replaced as one, those not written
                                 removed; other files kept) */
    const char *input;        /* the trace read: never replaced, whatever its name ("-", NULL: none) */
    /* What close meets while committing (a table that cannot be moved into place), as it happens. */
    etl_diag_fn on_diag;
    void *diag_ctx;
    bool no_trace_id;         /* no first trace_id column (a dataset's partition: its path holds the ID) */
} etl_csv_sink_options;

/*
 * Refuses what the output rules refuse: ETL_E_INVALID_ARG when dir, or a table's
 * file in it that force would replace or remove, is the input; ETL_E_IO when
 * something is there without force, it is not a directory (or a symbolic link), or
 * a table's file there is a directory; with the reason in diag. ETL_OK with *out
 * to create later.
 */
ETL_API etl_status etl_csv_sink_check(const char *dir, const etl_csv_sink_options *o, etl_csv_sink **out, etl_diag *diag);
/* Creates the temporary directory and the tables' files. ETL_E_IO with "OUT: reason". */
ETL_API etl_status etl_csv_sink_create(etl_csv_sink *c, etl_diag *diag);
ETL_API int etl_csv_sink_row(void *ctx, etl_table_id table, const etl_value *v);
/* Flushes and closes the files: ETL_E_IO with "OUT/<table>.csv: reason" if a row or this failed. */
ETL_API etl_status etl_csv_sink_finish(etl_csv_sink *c, etl_diag *diag);
/*
 * commit: finishes if not done, then puts the directory in place (over an existing
 * one, its tables as one: on a failure the old ones are put back); ETL_E_IO if that
 * failed, told through on_diag, and ours are removed.
 * !commit: removes everything created. Frees c (NULL: nothing).
 */
ETL_API etl_status etl_csv_sink_close(etl_csv_sink *c, bool commit);

/* ---- datasets: several traces at once (library etlkit_export) -------------------- */

/*
 * A Hive-partitioned dataset DS of many traces, for engines that read such a tree
 * whole (DuckDB, Spark, Trino/Athena): each table as DS/<table>/trace_id=<ID>/part-0.<ext>,
 * the ID in the path and not in the files (Spark refuses a column that is both).
 * The traces are exported in parallel (jobs), each through the format's sink into
 * DS/_tmp/<ID>/ and its files then renamed into their partitions, so every partition
 * in place is complete, whatever ends the run (a signal, kill -9, a full disk).
 * A trace is complete once its record DS/_traces/<ID>.json is written (after its
 * partitions); DS/_manifest.json, written at the end (a new file renamed into place),
 * holds every complete trace's record, sorted by ID, and this run's failures.
 * resume: traces with a record (same format, input size and sha256, etlkit version and
 * options) are kept as they are and the rest exported, a trace's old partitions removed
 * only once its new export is complete; an existing DS that is neither a dataset
 * (_traces/) nor empty is refused; an interrupted run resumed gives the same files and the
 * same manifest as an uninterrupted one. DS/_tmp is etlkit's: emptied by each run.
 *
 * The format is a name in a small table of sinks (dataset.c, `formats`), each with
 * the CSV sink's shape (check, create, row, finish, close): "csv" and "parquet".
 */

/* Which format names etl_dataset_export knows: the extension of their files, or NULL. */
ETL_API const char *etl_dataset_format_ext(const char *format);

/*
 * A trace's ID from its path: the base name without a final ".etl" (any case), bytes
 * other than ASCII letters, digits, '-', '_' and '.' made '_', a leading '.' made '_'
 * (no hidden files), at most cap - 1 bytes (cap >= 2); "trace" when nothing is left.
 * The length written.
 */
ETL_API size_t etl_dataset_trace_id(const char *path, char *out, size_t cap);

/* One trace's outcome, told to on_trace as it ends (one call at a time, from any thread). */
typedef struct etl_dataset_trace {
    size_t index;             /* in inputs[] */
    const char *path, *id;
    bool skipped;             /* resume: complete already, left as it was */
    etl_status status;        /* ETL_OK; ETL_E_NOT_ETL; ETL_E_IO, ETL_E_NOMEM, ...: not in the dataset */
    char msg[320];            /* a failure's reason, naming the file */
    bool damaged;             /* exported, but the input had damage (the record's anomalies say which) */
    uint64_t rows;            /* rows written, every table */
    /* Exported, with what the symbols could not do (a PDB whose llvm-pdbutil was stopped): the first such line; "" none. */
    char symbols_msg[320];
    /* Exported now: what the session lost while tracing (its logfile header's EventsLost, BuffersLost). */
    uint32_t events_lost, buffers_lost;
    /*
     * Failed, and DS keeps an earlier run's export of this ID (of another file, or other options): its
     * partitions and record stay, among the manifest's traces, as a failed run leaves what it would replace.
     */
    bool earlier_kept;
} etl_dataset_trace;

typedef struct etl_dataset_options {
    size_t sz;                /* sizeof(etl_dataset_options) */
    const char *format;       /* "csv" (etl_dataset_format_ext); NULL: "csv" */
    uint32_t tables;          /* bit per etl_table_id; 0 = all (trace and enum_name always) */
    unsigned jobs;            /* traces exported at once; 0 = the CPUs */
    bool resume;              /* keep the traces DS has complete, export the rest */
    bool force;               /* an existing DS is written into (without resume: every trace again) */
    bool has_range;
    int64_t v0, v1;           /* with has_range: the window [v0, v1), canonical ns */
    int bias;                 /* StateWr bias for compact batches (etl_sched_source_options); 0 or less: from the OS build */
    void (*on_trace)(void *ctx, const etl_dataset_trace *t);
    void *ctx;
    /*
     * A symbol path (etlkit/symbols.h) for the stack table's symbol column; NULL: none. Its entries
     * that are not folders are passed over: check it first (etl_symbols_open_with) to refuse or tell them.
     */
    const char *symbols;
    /* When the run ends with the manifest written: the traces DS holds (this run's and earlier runs'); NULL: not wanted. */
    size_t *held;
} etl_dataset_options;

typedef struct etl_dataset_result {
    size_t exported, skipped, failed, damaged;
} etl_dataset_result;

/*
 * Exports inputs[0..n) into the dataset dir. Refused before anything is read or
 * written: ETL_E_INVALID_ARG for an unknown format or two inputs with one ID (the
 * reason in diag: rename one); ETL_E_IO for a DS that exists without resume or force,
 * or is not a directory (a symbolic link included), or cannot be created. Then
 * ETL_OK when every trace was exported or kept (res->damaged counts those whose input
 * had damage), ETL_E_IO with res->failed > 0 when some were not (each told through
 * on_trace; the others are exported all the same), ETL_E_IO or ETL_E_NOMEM with diag
 * when DS's own files (its folders, the manifest) could not be written.
 */
ETL_API etl_status etl_dataset_export(const char *dir, const char *const *inputs, size_t n,
                                      const etl_dataset_options *o, etl_dataset_result *res, etl_diag *diag);
/* ---- Parquet (library etlkit_export) --------------------------------------------- */

/*
 * A directory OUT with one OUT/<table>.parquet per table written, the CSV sink's
 * tables and columns (trace_id first, unless no_trace_id) with the schema's types
 * (etl_column_def.kind): INT32/INT64 with INT(bits, signed) logical types,
 * BOOLEAN flags, UTF-8 strings, NULLs as nulls. Row groups of about 1 M rows
 * (fewer for wide tables: at most 64 MiB of values are buffered per table, and one
 * more row group is being written by a thread of the sink), sorted
 * by the table's order (etl_table_def.order, e.g. cpu then time), with min/max
 * statistics; dictionary, DELTA_BINARY_PACKED or PLAIN values; zstd pages. The
 * output rules and calls are the CSV sink's:
 *
 *     etl_parquet_sink *p;
 *     etl_parquet_sink_check(dir, &o, &p, &diag);
 *     etl_parquet_sink_create(p, &diag);
 *     ... rows through etl_parquet_sink_row (an etl_row_sink_fn, ctx p) ...
 *     etl_parquet_sink_finish(p, &diag);        the last row groups and the footers
 *     etl_parquet_sink_close(p, commit);
 */
typedef struct etl_parquet_sink etl_parquet_sink;

typedef struct etl_parquet_sink_options {
    size_t sz;                /* sizeof(etl_parquet_sink_options) */
    uint32_t tables;          /* bit per etl_table_id to write; 0 = all (trace and enum_name always) */
    const char *trace_id;     /* the first column's value */
    bool force;               /* an existing OUT is written over (as etl_csv_sink_options.force) */
    const char *input;        /* the trace read: never replaced, whatever its name ("-", NULL: none) */
    etl_diag_fn on_diag;      /* what close meets while committing, as it happens */
    void *diag_ctx;
    bool no_trace_id;         /* a Hive partition: the path holds the trace_id, no column */
} etl_parquet_sink_options;

/* As etl_csv_sink_check: ETL_E_INVALID_ARG (dir is the input), ETL_E_IO (refused), ETL_OK. */
ETL_API etl_status etl_parquet_sink_check(const char *dir, const etl_parquet_sink_options *o, etl_parquet_sink **out,
                                          etl_diag *diag);
/* Creates the temporary directory and the tables' files. ETL_E_IO with "OUT: reason". */
ETL_API etl_status etl_parquet_sink_create(etl_parquet_sink *p, etl_diag *diag);
/* A row; non-zero when it failed (a write, memory, or a value its column's type refuses: finish says which). */
ETL_API int etl_parquet_sink_row(void *ctx, etl_table_id table, const etl_value *v);
/* Writes the last row groups and the footers, closes the files: ETL_E_IO etc. with "OUT/<table>.parquet: reason". */
ETL_API etl_status etl_parquet_sink_finish(etl_parquet_sink *p, etl_diag *diag);
/* As etl_csv_sink_close: commit puts OUT (or each table) in place, !commit removes everything; frees p. */
ETL_API etl_status etl_parquet_sink_close(etl_parquet_sink *p, bool commit);

/* ---- timelines: Perfetto and ftrace ---------------------------------------------- */

typedef enum etl_timeline_format { ETL_TIMELINE_PERFETTO = 1, ETL_TIMELINE_FTRACE = 2 } etl_timeline_format;

typedef struct etl_timeline_options {
    size_t sz;
    etl_timeline_format format;
    bool has_range;
    int64_t v0, v1;
    unsigned threads;         /* for etl_timeline_profile's pass (etl_profile_options.threads) */
    /*
     * Perfetto: the samples' frames named by function (module!function, etlkit/symbols.h);
     * NULL: module+0xoff. Borrowed: it must outlive etl_timeline_profile.
     */
    struct etl_symbols *symbols;
    /*
     * Optional: the trace's reader. Where it lost a CPU's records (a missing buffer, records passed
     * over, the CPU's records ending before the trace: etl_reader_cpu_gaps, etl_reader_cpu_skipped,
     * etl_reader_cpu_known_until), the thread that ran is switched out at the CPU's last record
     * before the loss to the unknown thread (4294967295, state 255), which is switched out to the
     * old thread of the CPU's next switch at its time: a hole, never a thread running across it.
     */
    const struct etl_reader *reader;
} etl_timeline_options;

typedef struct etl_timeline_stats {
    uint64_t switches, ready, names, packets, lines;
    uint64_t negative_times;  /* events before the trace start, written at 0 */
    uint64_t unknown_switches; /* switches to and from the unknown thread where records were lost (options.reader), not in switches */
} etl_timeline_stats;

typedef struct etl_timeline etl_timeline;

/* Writes to f (not closed by etl_timeline_close). */
ETL_API etl_status etl_timeline_open(FILE *f, const etl_clock *clock, const etl_timeline_options *o, etl_timeline **out);
/* Every source event (switches, names), before the model sees it. */
ETL_API void etl_timeline_event(etl_timeline *w, const etl_sched_event *ev);
/* Every ReadyThread with its readier (the model's on_ready). */
ETL_API void etl_timeline_ready(void *w, const etl_sched_ready *r);
/* Flushes what is buffered; ETL_E_IO if a write failed. */
ETL_API etl_status etl_timeline_finish(etl_timeline *w);
ETL_API const etl_timeline_stats *etl_timeline_stats_get(const etl_timeline *w);
ETL_API void etl_timeline_close(etl_timeline *w);

/* ftrace's prev_state letter for a KTHREAD_STATE ("R", "S", "D", "X"); unknown states give "R". */
ETL_API const char *etl_ftrace_state(unsigned state, bool known);

/*
 * The sampled profile in the exports: the tables
 * image, stack and sample (SQLite, CSV) and Perfetto callstack samples.
 *
 * The profile is a pass of its own over the trace (etl_profile_run_each), run
 * only when the trace logs samples or images (etl_export_profile_logged: a look
 * at its first records), so a scheduler-only export costs what it did.
 */
/*
 * Whether r logs SampledProfile or Image events: the session's first group
 * mask that is not empty (PROFILE, LOADER), or one of those events among its
 * first 4096 records when no such mask comes before them.
 */
ETL_API bool etl_export_profile_logged(etl_reader *r);

/*
 * Profiles r (the window of x's options) and writes its rows through x: sample
 * (one per SampledProfile, its utid from model's thread instances), then image
 * and stack. ETL_OK; ETL_E_NOMEM, an iterator's error; ETL_E_IO when a sink call
 * failed (etl_export_rows_finish says so too).
 */
ETL_API etl_status etl_export_rows_profile(etl_export_rows *x, etl_reader *r, const etl_sched *model);
/* Whether etl_export_rows_profile's pass found the input damaged (an Image event's impossible ImageSize, say). */
ETL_API bool etl_export_rows_profile_damaged(const etl_export_rows *x);

/*
 * The switches' stacks (etlkit/schedstacks.h): etl_export_rows_open_stacks, before
 * the model's rows, builds them when the trace walks stacks at its CSwitch or
 * ReadyThread events and the slice, stack or sample table is wanted (else does
 * nothing); x keeps them. Each slice row then gets new_stack_id and readying_stack_id;
 * after the rows, etl_export_rows_sched_stacks writes those stacks' frames to the
 * stack table (the slices' that would be written, the slice table filled or not).
 * Their ids come first, the profile's after them (etl_export_rows_profile adds
 * their count): one id space, no id twice, each table's ids whichever are filled.
 * ETL_OK; ETL_E_NOMEM, an iterator's error (open); ETL_E_IO a sink call failed.
 */
ETL_API etl_status etl_export_rows_open_stacks(etl_export_rows *x, etl_reader *r);
ETL_API etl_status etl_export_rows_sched_stacks(etl_export_rows *x);
/* The stacks etl_export_rows_open_stacks built, for what they lack (etl_sched_stacks_note); NULL: none. */
ETL_API const struct etl_sched_stacks *etl_export_rows_stacks(const etl_export_rows *x);
/*
 * Whether the passes of x's own found the input damaged beyond what the scheduler's source met: the
 * profile's (etl_export_rows_profile_damaged) or the switches' stacks' (etl_sched_stacks_damage: a stack
 * record of the other pointer size, an impossible ImageSize). The export's exit status 3 as the source's.
 */
ETL_API bool etl_export_rows_damaged(const etl_export_rows *x);

/*
 * Perfetto: profiles r (the timeline's window) and writes its samples as
 * PerfSample packets with interned callstacks (mappings, frames, callstacks) on
 * a sequence of their own, for the UI's flame graph. ETL_OK; ETL_E_NOMEM; ETL_E_IO.
 */
ETL_API etl_status etl_timeline_profile(etl_timeline *w, etl_reader *r);
/* Whether etl_timeline_profile's pass found the input damaged. */
ETL_API bool etl_timeline_profile_damaged(const etl_timeline *w);

#ifdef __cplusplus
}
#endif
#endif

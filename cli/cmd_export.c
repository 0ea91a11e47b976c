/*
 * cmd_export.c - `etlkit export`: the trace as SQLite tables, CSV files, a
 * Perfetto trace or ftrace text (etlkit/export.h does the work).
 *
 * Output rules, every command's (base/outfile.h): the output is written under a
 * temporary name in its directory and renamed into place when complete, so a
 * failed or interrupted export leaves nothing behind and whatever was at OUT
 * stays as it was; an existing OUT (a symbolic link too) is refused unless
 * --force, and a link is then replaced, never written through; nothing is
 * removed but what this run created. For --to csv, OUT is a directory: a new one
 * is renamed into place whole; with --force over an existing one, its
 * OUT/<table>.csv files are replaced as one, those this run does not write
 * (--tables) removed, so that it holds one export, and other files are left alone;
 * one of them that is the input is refused (64) before anything is read (the CSV
 * sink, etl_csv_sink, keeps these rules for its directory); --to parquet likewise
 * with OUT/<table>.parquet (etl_parquet_sink); either replaces the other's table
 * files too (src/export/sink_files.h). --to sqlite: the journals SQLite
 * keeps under OUT's name (OUT-journal, OUT-wal, OUT-shm) count as OUT (sidecars_*).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include "symbols_cli.h"
#include "report.h"
#include "etlkit/export.h"
#include "etlkit/schedstacks.h"
#include "export_dataset.h"
#include "base/diag.h"
#include "base/outfile.h"
#include "base/platform.h"
#include "base/sigclean.h"

enum { TO_NONE = 0, TO_SQLITE, TO_CSV, TO_PERFETTO, TO_FTRACE, TO_PARQUET };

static const cli_cmd export_cmd = {
    "export", "FILE --to sqlite|csv|parquet|perfetto|ftrace -o OUT [OPTIONS]\nFILE... --to csv|parquet -o DS [--jobs N] [--resume] [OPTIONS]\n--schema",
    "Writes the trace's scheduler data for other tools, streaming (the trace is never held\n"
    "in memory):\n"
    "  sqlite    one SQLite file: tables trace, process, thread, cswitch, slice,\n"
    "            thread_state, ready, spinlock, pmc, enum_name, image, stack, sample\n"
    "            (the sampled profile: empty without samples and images), and the views\n"
    "            cpu_by_thread, cpu_by_cpu, waits_by_reason, waits_by_thread\n"
    "            (equal to `etlkit cpu` and `etlkit waits`); opens in the sqlite3 shell\n"
    "  csv       a directory OUT with one OUT/<table>.csv per table (RFC 4180, header row,\n"
    "            a first trace_id column), for DuckDB, Spark, pandas, ClickHouse\n"
    "  parquet   a directory OUT with one OUT/<table>.parquet per table: the csv columns\n"
    "            typed (integers of their width, booleans, UTF-8 strings, NULLs), zstd,\n"
    "            per-CPU tables in (cpu, time) order, for DuckDB, Spark, Trino, pandas\n"
    "  perfetto  a Perfetto protobuf trace (ETW events: CSwitch, ReadyThread, names; the\n"
    "            samples with their stacks as PerfSample packets) for ui.perfetto.dev and\n"
    "            trace_processor (v53 or later)\n"
    "  ftrace    ftrace text (sched_switch, sched_waking, sched_blocked_reason) for\n"
    "            Perfetto's legacy importer, Catapult and Trace Compass\n"
    "Several FILEs (or --dataset) make a Hive-partitioned dataset DS for DuckDB, Spark and\n"
    "Trino: DS/<table>/trace_id=<ID>/part-0.csv, ID the FILE's base name without .etl\n"
    "(other than letters, digits, '-', '_' and '.' made '_'; two FILEs with one ID are\n"
    "refused), no trace_id column in the files; the traces exported in parallel (--jobs),\n"
    "each table moved into place when complete; DS/_manifest.json lists every trace (source,\n"
    "size, sha256, etlkit version, anomalies, diagnostics, rows per table) and the failures.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged (exported anyway,\n"
    "the damage recorded in the trace table), 64 usage. A dataset: 0 every trace in it, 3\n"
    "every trace in it but some inputs damaged, 1 some traces failed (each named on stderr;\n"
    "the others exported all the same) or DS could not be written, 64 usage.\n"};

/* ---- the output: a temporary name, renamed into place (base/outfile; the CSV sink's own) ------ */

typedef struct out_path {
    etl_outfile of;     /* sqlite, perfetto, ftrace */
    etl_csv_sink *csv;      /* csv: the sink owns its directory */
    etl_parquet_sink *pq;   /* parquet: the same */
    bool sqlite;            /* OUT's SQLite journals go with it (sidecars_*) */
    bool force;
    const char *input;
} out_path;

static void out_tell(void *cmd, const etl_diag *d) { fprintf(stderr, "%s %s: %s\n", prog, (const char *)cmd, d->msg); }

/*
 * SQLite finds a database's rollback journal and WAL by its name (OUT-journal, OUT-wal,
 * with OUT-shm the WAL's index), not by the file: an old one left beside OUT by a writer
 * that died would be replayed by the next client that opens OUT, its pages over the new
 * export (the tables gone, or a malformed file). So each is OUT's as much as OUT: without
 * --force one there is refused as OUT is; with it, removed as OUT is replaced, before the
 * rename (a crash between leaves the old OUT without its journal, never the new one with
 * the old journal). A symbolic link there is removed itself, never what it names; anything
 * else (a directory) is refused; one that is the input, by any name, is a usage error.
 */
static const char *const sidecar_suffix[] = {"-journal", "-wal", "-shm"};
enum { SIDECARS = sizeof sidecar_suffix / sizeof sidecar_suffix[0] };

/* Whether fi is the input file (same device and inode; "-" is standard input). */
static bool same_as_input(const etl_file_info *fi, const char *input)
{
    etl_file_info in;
    return input && fi->has_id &&
           (strcmp(input, "-") == 0 ? etl_fstat(STDIN_FILENO, &in) : etl_stat(input, true, &in)) == 0 && in.has_id &&
           in.dev == fi->dev && in.ino == fi->ino;
}

/*
 * One sidecar: 0 none there (or, remove, removed), else the exit status after one line.
 * when: "" before anything is read, " (made during the export)" at the rename.
 */
static int sidecar_one(const char *cmd, const char *out, const char *suffix, bool force, const char *input,
                       bool remove, const char *when)
{
    size_t n = strlen(out) + strlen(suffix) + 1;
    char *p = malloc(n);
    if (!p) {
        fprintf(stderr, "%s %s: out of memory\n", prog, cmd);
        return EXIT_IO;
    }
    snprintf(p, n, "%s%s", out, suffix);
    etl_file_info ls, st;
    int rc = EXIT_OK;
    if (etl_stat(p, false, &ls) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "%s %s: %s: %s\n", prog, cmd, p, strerror(errno));
            rc = EXIT_IO;
        }
    } else if (same_as_input(&ls, input) || (ls.is_link && etl_stat(p, true, &st) == 0 && same_as_input(&st, input))) {
        fprintf(stderr, "%s %s: %s: the input file, where SQLite looks for %s's journal (--force would remove it); "
                "nothing written\n", prog, cmd, p, out);
        rc = EXIT_USAGE;
    } else if (!ls.is_reg && !ls.is_link) {
        fprintf(stderr, "%s %s: %s: not a regular file, where SQLite looks for %s's journal; nothing written\n", prog,
                cmd, p, out);
        rc = EXIT_IO;
    } else if (!force) {
        fprintf(stderr, "%s %s: %s exists%s: SQLite would replay this old journal into the new %s; use --force to "
                "remove it\n", prog, cmd, p, when, out);
        rc = EXIT_IO;
    } else if (remove && etl_unlink(p) != 0 && errno != ENOENT) {
        fprintf(stderr, "%s %s: %s: cannot remove the old journal: %s; nothing written\n", prog, cmd, p,
                strerror(errno));
        rc = EXIT_IO;
    }
    free(p);
    return rc;
}

/* Before anything is read: what the sidecars' rule refuses (nothing removed yet). */
static int sidecars_check(const char *cmd, const char *out, bool force, const char *input)
{
    for (int i = 0; i < SIDECARS; i++) {
        int rc = sidecar_one(cmd, out, sidecar_suffix[i], force, input, false, "");
        if (rc != EXIT_OK) return rc;
    }
    return EXIT_OK;
}

/* Refuses, before reading anything, what the output rules refuse (outfile.h). */
static int out_check(const char *cmd, const char *path, int to, int force, const char *input, uint32_t tables,
                     const char *trace_id, out_path *o)
{
    memset(o, 0, sizeof *o);
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st;
    if (to == TO_CSV) {
        etl_csv_sink_options co = {.sz = sizeof co, .tables = tables, .trace_id = trace_id, .force = force,
                               .input = input, .on_diag = out_tell, .diag_ctx = (void *)cmd};
        st = etl_csv_sink_check(path, &co, &o->csv, &d);
    } else if (to == TO_PARQUET) {
        etl_parquet_sink_options po = {.sz = sizeof po, .tables = tables, .trace_id = trace_id, .force = force,
                                       .input = input, .on_diag = out_tell, .diag_ctx = (void *)cmd};
        st = etl_parquet_sink_check(path, &po, &o->pq, &d);
    } else {
        st = etl_outfile_check(path, &o->of, &d);
        if (st == ETL_OK) st = etl_outfile_may_replace(&o->of, path, force, input, &d);
        o->sqlite = to == TO_SQLITE;
        o->force = force != 0;
        o->input = input;
        int rc = st == ETL_OK && o->sqlite ? sidecars_check(cmd, path, o->force, input) : EXIT_OK;
        if (rc != EXIT_OK) {
            etl_outfile_discard(&o->of);
            return rc;
        }
    }
    if (st == ETL_OK) return EXIT_OK;
    fprintf(stderr, "%s %s: %s\n", prog, cmd, d.msg);
    etl_outfile_discard(&o->of);
    return st == ETL_E_INVALID_ARG ? EXIT_USAGE : EXIT_IO;
}

/* Creates the temporary file (f: opened on it, or NULL for SQLite, which opens it by name) or directory. */
static int out_create(const char *cmd, out_path *o, FILE **f)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st = o->csv  ? etl_csv_sink_create(o->csv, &d)
                    : o->pq ? etl_parquet_sink_create(o->pq, &d)
                            : etl_outfile_create(&o->of, f, &d);
    if (st == ETL_OK) return EXIT_OK;
    fprintf(stderr, "%s %s: %s\n", prog, cmd, d.msg);
    return EXIT_IO;
}

/* Forgets the output before anything was written: nothing of ours stays. */
static void out_discard(out_path *o)
{
    etl_csv_sink_close(o->csv, false);
    o->csv = NULL;
    etl_parquet_sink_close(o->pq, false);
    o->pq = NULL;
    etl_outfile_discard(&o->of);
}

/* Removes what we created (failure) or renames it into place (success). */
static int out_finish(const char *cmd, const char *path, out_path *o, int ok)
{
    int rc = EXIT_OK;
    if (o->csv) {
        if (etl_csv_sink_close(o->csv, ok) != ETL_OK) rc = EXIT_IO; /* told through out_tell */
        o->csv = NULL;
        return rc;
    }
    if (o->pq) {
        if (etl_parquet_sink_close(o->pq, ok) != ETL_OK) rc = EXIT_IO; /* told through out_tell */
        o->pq = NULL;
        return rc;
    }
    etl_diag d;
    memset(&d, 0, sizeof d);
    /* SQLite's journals of the old OUT go first, then the rename; no signal ends it between. */
    if (ok && o->sqlite) etl_sigclean_hold();
    for (int i = 0; ok && o->sqlite && rc == EXIT_OK && i < SIDECARS; i++)
        rc = sidecar_one(cmd, path, sidecar_suffix[i], o->force, o->input, true, " (made during the export)");
    if (ok && rc == EXIT_OK && etl_outfile_commit(&o->of, path, &d) != ETL_OK) {
        fprintf(stderr, "%s %s: %s\n", prog, cmd, d.msg);
        rc = EXIT_IO;
    }
    if (ok && o->sqlite) etl_sigclean_release();
    etl_outfile_discard(&o->of);
    return rc;
}

/* ---- the run -------------------------------------------------------------------------------- */

typedef struct xrun {
    etl_export_rows *tab;
    etl_timeline *tr;
    const etl_sched *model; /* the run's: the timelines keep the switches it keeps */
} xrun;

static void x_row(void *ctx, const etl_sched_row *r)
{
    xrun *x = ctx;
    if (x->tab) etl_export_rows_row(x->tab, r);
}

static void x_ready(void *ctx, const etl_sched_ready *r)
{
    xrun *x = ctx;
    if (x->tab) etl_export_rows_ready(x->tab, r);
    if (x->tr) etl_timeline_ready(x->tr, r);
}

static void x_event(void *ctx, const etl_sched_event *ev)
{
    xrun *x = ctx;
    if (x->tab) etl_export_rows_event(x->tab, ev);
    if (x->tr && etl_sched_takes(x->model, ev)) etl_timeline_event(x->tr, ev);
}

/* --tables LIST: the tables to fill. */
static int parse_tables(const cli_opt *o, const char *list, char *err, size_t cap)
{
    uint32_t *mask = o->dst;
    *mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = etl_export_table_find(t);
        if (i < 0) return snprintf(err, cap, "--tables: no table '%s' (see --schema)", t);
        *mask |= 1u << i;
    }
    return !*mask;
}

/* Several FILEs (or --dataset): the dataset path, cli/export_dataset.c. */
static int export_dataset(const char *const *files, size_t n, const char *to_name, const char *out, int force,
                          int resume, unsigned jobs, uint32_t tables, const char *trace_id, const char *symbols,
                          const rep_args *a)
{
    /* The formats the dataset layer has a sink for (src/export/dataset.c, its table). */
    if (!etl_dataset_format_ext(to_name))
        return cli_usage_error("export", "a dataset (several FILEs) is not written --to %s: --to csv or parquet", to_name);
    if (trace_id) return cli_usage_error("export", "--trace-id names one trace: with several FILEs each one's ID is "
                                         "its base name");
    if (strcmp(out, "-") == 0) return cli_usage_error("export", "a dataset needs a directory, not standard output");
    /* Each trace is read by name, twice (its sha256 for the record, then its rows): standard input cannot be one. */
    for (size_t i = 0; i < n; i++)
        if (strcmp(files[i], "-") == 0)
            return cli_usage_error("export", "a dataset reads its traces from files: standard input (-) cannot be one");
    /* The symbol path checked once, before any trace is read (each trace then opens its own). */
    etl_symbols *check = NULL;
    int rc = cli_symbols_open("export", symbols, &check);
    if (rc != EXIT_OK) return rc;
    etl_symbols_close(check);
    cli_dataset_args da = {.out = out, .format = to_name, .tables = tables, .jobs = jobs, .resume = resume != 0,
                           .force = force != 0, .quiet = a->quiet != 0, .has_range = a->has_range != 0,
                           .v0 = a->v0, .v1 = a->v1, .bias = a->bias,
                           .symbols = symbols ? symbols : etl_getenv("ETLKIT_SYMBOL_PATH")};
    return cli_export_dataset(files, n, &da);
}

int cmd_export(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "export");
    int to = TO_NONE, force = 0, resume = 0, dataset = 0;
    unsigned jobs = 0;
    const char *out = NULL, *trace_id = NULL, *to_name = NULL;
    uint32_t tables = 0;
    int schema = 0;
    const char *symbols = NULL; /* --symbols: the stack table's symbol column */
    etl_symbols *syms = NULL;
    static const char *const to_words[] = {"sqlite", "csv", "perfetto", "ftrace", "parquet", NULL};
    static const int to_vals[] = {TO_SQLITE, TO_CSV, TO_PERFETTO, TO_FTRACE, TO_PARQUET};
    const cli_opt own[] = {
        {.kind = CLI_OPT_ENUM, .name = "to", .arg = "FORMAT", .help = "the target (required)", .dst = &to,
         .words = to_words, .vals = to_vals, .need = "sqlite, csv, parquet, perfetto or ftrace", .flags = CLI_OPT_REQUIRED},
        {.kind = CLI_OPT_STRING, .name = "output", .short_name = 'o', .arg = "OUT", .dst = &out, .need = "a path",
         .flags = CLI_OPT_REQUIRED | CLI_OPT_NONEMPTY,
         .help = "the file (the directory for csv and parquet) to write; - is standard output for perfetto and ftrace"},
        CLI_FLAG("force", 0, "replace an existing OUT (else refused); a symbolic link is replaced itself, never "
                 "written through; sqlite: an old OUT-journal, OUT-wal or OUT-shm (SQLite would replay it into OUT) "
                 "removed with it. A csv or parquet directory: its table files (.csv and .parquet) replaced as one (those "
                 "not written removed), other files kept. A dataset: every trace exported into an existing DS again", &force, 1),
        {.kind = CLI_OPT_CUSTOM, .name = "tables", .arg = "LIST", .parse = parse_tables, .dst = &tables,
         .need = "table names",
         .help = "sqlite, csv and parquet: fill only these tables (comma-separated); trace and enum_name are always written. "
                 "A view only when every table it reads is filled (cpu_by_thread: slice, thread, process; the others: slice)"},
        CLI_STRING("trace-id", 0, "ID", "the trace_id of the rows (default: FILE's base name, .etl kept; standard input's: sha256- and the first 16 hex digits of its bytes' SHA-256; a dataset's "
                   "ID drops it)", "a value", &trace_id),
        CLI_FLAG("dataset", 0, "write a dataset DS (as several FILEs do) even from one FILE", &dataset, 1),
        CLI_UINT("jobs", "N", "a dataset: traces exported at once (default: the CPUs available)", "a count, 1..256",
                 &jobs, 1, 256),
        CLI_FLAG("resume", 0, "a dataset: complete an existing DS (an interrupted run): the traces it holds "
                 "complete are kept, the others exported", &resume, 1),
        {.kind = CLI_OPT_FLAG, .name = "schema", .dst = &schema, .min = 1, .flags = CLI_OPT_ACTION,
         .help = "print the table schema (Markdown, as docs/schema.md) and exit"},
        CLI_SYMBOLS_OPT(&symbols),
        CLI_END};
    cli_opt common[REP_OPTS_MAX];
    rep_options(&a, REP_OPT_RANGE | REP_OPT_MAX_WAIT_REASON | REP_OPT_THREADS | REP_OPT_QUIET, common);
    cli_opt_find(common, "range")->help = "only events in this window, from the trace start: seconds or ms/us/ns "
                                          "(slices overlapping it are kept whole)";
    cli_opt_find(common, "quiet")->help = "no warnings about the input, no summary";
    cli_opt_find(common, "threads")->help = "threads that read the trace (default: the CPUs available); the output is "
                                            "the same with any N. A dataset reads each trace with one, --jobs at once";
    const cli_opt table[] = {CLI_INCLUDE(own), CLI_INCLUDE(common), CLI_END};
    /* As many FILEs as arguments (a dataset's); one is today's export. */
    cli_cmd cmd = export_cmd;
    cmd.max_operands = argc > 1 ? (unsigned)argc : 1;
    const char **files = calloc(cmd.max_operands, sizeof *files);
    if (!files) {
        fprintf(stderr, "%s export: out of memory\n", prog);
        return EXIT_IO;
    }
    int pr = cli_opts_parse(&cmd, table, argc, argv, files);
    size_t nfiles = 0;
    while (nfiles < cmd.max_operands && files[nfiles]) nfiles++;
    a.path = files[0];
    if (pr == CLI_OPTS_ACTION) {
        free(files);
        etl_export_schema_markdown(stdout);
        return cli_stdout_done("export");
    }
    if (pr == CLI_OPTS_RUN && (nfiles > 1 || dataset)) {
        int drc = export_dataset(files, nfiles, to_words[to - 1], out, force, resume, jobs, tables, trace_id, symbols, &a);
        free(files);
        return drc;
    }
    free(files);
    if (pr != CLI_OPTS_RUN) return pr;
    if (jobs || resume) return cli_usage_error("export", "--jobs and --resume are for a dataset (several FILEs, or --dataset)");
    to_name = to_words[to - 1];
    if (tables && (to == TO_PERFETTO || to == TO_FTRACE))
        return cli_usage_error("export", "--tables is for --to sqlite, csv and parquet");
    if (symbols && to == TO_FTRACE) return cli_usage_error("export", "--symbols: ftrace text has no stacks to name");
    int to_stdout = strcmp(out, "-") == 0;
    if (to_stdout && (to == TO_SQLITE || to == TO_CSV || to == TO_PARQUET))
        return cli_usage_error("export", "--to %s needs a path, not standard output", to_name);
    /* Standard input has no name: its rows' trace_id comes from its bytes, once read (below). */
    bool id_of_bytes = !trace_id && strcmp(a.path, "-") == 0;
    if (!trace_id) trace_id = etl_path_base(a.path);

    out_path op;
    memset(&op, 0, sizeof op);
    int rc = to_stdout ? EXIT_OK : out_check("export", out, to, force, a.path, tables, trace_id, &op);
    if (rc != EXIT_OK) return rc;
    xrun x = {0};
    a.on_ready = x_ready;
    rep_run run;
    int tabular = to == TO_SQLITE || to == TO_CSV || to == TO_PARQUET;
    /* the symbol path (the stack table's, Perfetto's samples'), before the trace is read: a folder not there fails here */
    if ((tabular || to == TO_PERFETTO) && (rc = cli_symbols_open("export", symbols, &syms)) != EXIT_OK) {
        out_discard(&op);
        return rc;
    }
    rc = rep_run_open(&run, &a, tabular ? x_row : NULL, &x, x_event);
    if (rc != EXIT_OK) {
        etl_symbols_close(syms);
        out_discard(&op);
        return rc;
    }
    x.model = run.model;
    /*
     * "-" as every stdin export's trace_id made one trace of a fleet's: the bytes' digest instead. OUT
     * was checked before stdin was read (a refusal costs no input); the CSV and Parquet sinks, which
     * hold the ID, are made again with it (nothing of them was created yet).
     */
    char content_id[32];
    if (id_of_bytes && tabular) {
        etl_export_content_id(run.in.reader, content_id, sizeof content_id);
        trace_id = content_id;
        if (op.csv || op.pq) {
            out_discard(&op);
            if ((rc = out_check("export", out, to, force, a.path, tables, trace_id, &op)) != EXIT_OK) {
                etl_symbols_close(syms);
                rep_run_close(&run);
                return rc;
            }
        }
        if (!a.quiet)
            fprintf(stderr, "%s export: standard input: trace_id %s (from its bytes' SHA-256; --trace-id ID names "
                    "it)\n", prog, trace_id);
    }
    FILE *f = to_stdout ? stdout : NULL;
    if (!to_stdout && (rc = out_create("export", &op, to == TO_PERFETTO || to == TO_FTRACE ? &f : NULL)) != EXIT_OK) {
        etl_symbols_close(syms);
        out_discard(&op);
        rep_run_close(&run);
        return rc;
    }
    const etl_clock *clk = etl_reader_clock(run.in.reader);
    etl_sqlite_sink *db = NULL;
    /* Every failure names the output and says why (the errno's text, or SQLite's). */
    const char *oname = to_stdout ? "standard output" : out;
    char err[512] = "", why[256] = "";
    int fail = 0;
    if (tabular) {
        etl_export_rows_options xo = {.sz = sizeof xo,
                               .on_row = to == TO_SQLITE ? etl_sqlite_sink_row
                                         : to == TO_CSV  ? etl_csv_sink_row
                                                         : etl_parquet_sink_row,
                               .tables = tables,
                               .has_range = a.has_range != 0,
                               .v0 = a.v0,
                               .v1 = a.v1,
                               .trace_id = trace_id,
                               .target = to_name,
                               .threads = a.threads};
        if (to == TO_SQLITE) {
            if (etl_sqlite_sink_open(op.of.tmp, &db, why) != ETL_OK) {
                snprintf(err, sizeof err, "%s: %s", out, why);
                fail = 1;
            }
            xo.ctx = db;
        } else {
            xo.ctx = to == TO_CSV ? (void *)op.csv : (void *)op.pq;
        }
        /* the symbols' pass only when the stack table will be filled: samples or the switches' stacks */
        if (!fail && (etl_export_profile_logged(run.in.reader) || etl_sched_stacks_logged(run.in.reader))) {
            if (cli_symbols_scan("export", syms, run.in.reader) != EXIT_OK) {
                fail = 1;
                run.told = true;
            }
        } else { /* no frame to name: no symbol column, as without a path */
            etl_symbols_close(syms);
            syms = NULL;
        }
        xo.symbols = syms;
        if (!fail && etl_export_rows_open(clk, &xo, &x.tab) != ETL_OK) fail = 1;
    } else {
        setvbuf(f, NULL, _IOFBF, 1u << 18);
        /* Perfetto's sample frames by function name: the symbols' pass only when the trace has samples. */
        if (syms && etl_export_profile_logged(run.in.reader)) {
            if (cli_symbols_scan("export", syms, run.in.reader) != EXIT_OK) {
                fail = 1;
                run.told = true;
            }
        } else {
            etl_symbols_close(syms);
            syms = NULL;
        }
        etl_timeline_options to_o = {.sz = sizeof to_o,
                                   .format = to == TO_PERFETTO ? ETL_TIMELINE_PERFETTO : ETL_TIMELINE_FTRACE,
                                   .has_range = a.has_range != 0,
                                   .v0 = a.v0,
                                   .v1 = a.v1,
                                   .threads = a.threads,
                                   .symbols = syms,
                                   .reader = run.in.reader};
        if (!fail && etl_timeline_open(f, clk, &to_o, &x.tr) != ETL_OK) fail = 1;
    }
    /* The switches' stacks, for the slice rows and the stack table: only when the trace walks them. */
    if (!fail && x.tab) {
        etl_status sst = etl_export_rows_open_stacks(x.tab, run.in.reader);
        if (sst != ETL_OK) {
            snprintf(err, sizeof err, "the switches' stacks: %s", etl_status_str(sst));
            fail = 1;
        }
    }
    if (!fail) {
        rep_run_go(&run, &a);
        /* The model left threads out: the export would be incomplete, so it is not put in place. */
        if (run.model_failed) {
            fail = 1;
            run.told = true;
            snprintf(err, sizeof err, "out of memory: the scheduler model left threads out");
        }
        if (!fail && x.tab && etl_export_rows_sched_stacks(x.tab) != ETL_OK) fail = 1;
        if (!fail && x.tab && !a.quiet) cli_sched_stacks_notes("export", a.path, etl_export_rows_stacks(x.tab));
        /* The profile's tables: a pass of their own, only when the trace logs samples or images. */
        if (!fail && x.tab && etl_export_profile_logged(run.in.reader)) {
            etl_status pst = etl_export_rows_profile(x.tab, run.in.reader, run.model);
            if (pst != ETL_OK) {
                if (pst != ETL_E_IO) snprintf(err, sizeof err, "the profile's tables: %s", etl_status_str(pst));
                fail = 1;
            }
        }
        if (x.tab) {
            etl_export_rows_end end = {.reader = run.in.reader,
                                .path = a.path,
                                .model = run.model,
                                .source = etl_sched_source_stats_get(run.src),
                                .damage = &run.damage,
                                .end_ts = run.end_ts};
            if (etl_export_rows_finish(x.tab, &end)) fail = 1;
        }
        if (!fail && x.tr && etl_export_profile_logged(run.in.reader)) {
            etl_status pst = etl_timeline_profile(x.tr, run.in.reader);
            if (pst != ETL_OK && pst != ETL_E_IO) {
                snprintf(err, sizeof err, "the profile's samples: %s", etl_status_str(pst));
                fail = 1;
            }
        }
        if (x.tr && etl_timeline_finish(x.tr) != ETL_OK) {
            /* finish leaves the failure's errno */
            snprintf(err, sizeof err, "%s: %s", oname, strerror(f ? etl_write_errno(f) : errno));
            fail = 1;
        }
    }
    /* Values SQLite cannot hold (schema.md): told even with --quiet, as they are not in OUT. */
    char nulled_at[64];
    uint64_t nulled = etl_sqlite_sink_nulled(db, nulled_at);
    if (db && etl_sqlite_sink_close(db, !fail, why) != ETL_OK) fail = 1;
    if (db && why[0] && !err[0]) snprintf(err, sizeof err, "%s: %s", out, why); /* a failed row's reason too */
    etl_diag cd;
    if (op.csv && etl_csv_sink_finish(op.csv, &cd) != ETL_OK) {
        if (!err[0]) snprintf(err, sizeof err, "%s", cd.msg);
        fail = 1;
    }
    /* The last row groups and the footers; a value a column refused is named here (a row failed before). */
    if (op.pq && etl_parquet_sink_finish(op.pq, &cd) != ETL_OK) {
        if (!err[0]) snprintf(err, sizeof err, "%s", cd.msg);
        fail = 1;
    }
    if (f && !to_stdout && fclose(f) != 0 && !fail) {
        snprintf(err, sizeof err, "%s: %s", out, strerror(errno));
        fail = 1;
    }
    if (fail) fprintf(stderr, "%s export: %s\n", prog, err[0] ? err : "out of memory");
    int orc = to_stdout ? EXIT_OK : out_finish("export", out, &op, !fail);
    if (!fail && orc == EXIT_OK && nulled)
        fprintf(stderr, "%s export: %s: %llu value%s past 9223372036854775807 (the first in %s) stored as NULL: SQLite's "
                "INTEGER is signed 64-bit; --to parquet or --to csv holds them\n", prog, out,
                (unsigned long long)nulled, nulled == 1 ? "" : "s", nulled_at);
    if (!fail && orc == EXIT_OK && !a.quiet) {
        if (x.tab) {
            const etl_export_rows_stats *s = etl_export_rows_stats_get(x.tab);
            const etl_table_def *t = etl_export_tables();
            uint64_t total = 0, sched = 0;
            for (int i = 0; i < ETL_TABLE_COUNT; i++) total += s->rows[i];
            for (int i = ETL_TABLE_CSWITCH; i <= ETL_TABLE_PMC; i++) sched += s->rows[i];
            fprintf(stderr, "%s export: %s: %llu rows", prog, out, (unsigned long long)total);
            uint32_t filled = tables ? tables : (1u << ETL_TABLE_COUNT) - 1, sched_tables = 0;
            for (int i = ETL_TABLE_CSWITCH; i <= ETL_TABLE_PMC; i++) sched_tables |= 1u << i;
            if (!(filled & sched_tables)) {
                /* --tables left the scheduler's out: the tables asked for, by name (the trace's switches unsaid) */
                for (int i = 0, k = 0; i < ETL_TABLE_COUNT; i++)
                    if (filled >> i & 1u && i != ETL_TABLE_TRACE && i != ETL_TABLE_ENUM_NAME)
                        fprintf(stderr, "%s%s %llu", k++ ? ", " : " (", t[i].name, (unsigned long long)s->rows[i]);
                fprintf(stderr, "%s\n", filled & ~(1u << ETL_TABLE_TRACE | 1u << ETL_TABLE_ENUM_NAME) ? ")" : "");
            } else {
                /* The scheduler's tables by name; a trace with none of their events says so, not "()". */
                if (!sched) fprintf(stderr, " (no context switch, ReadyThread, spin lock or PMC rows)");
                for (int i = ETL_TABLE_CSWITCH, k = 0; i <= ETL_TABLE_PMC; i++)
                    if (s->rows[i])
                        fprintf(stderr, "%s%s %llu", k++ ? ", " : " (", t[i].name, (unsigned long long)s->rows[i]);
                fprintf(stderr, "%s\n", sched ? ")" : "");
            }
        } else if (x.tr && !to_stdout) {
            const etl_timeline_stats *s = etl_timeline_stats_get(x.tr);
            fprintf(stderr, "%s export: %s: %llu switches, %llu ReadyThreads", prog, out,
                    (unsigned long long)s->switches, (unsigned long long)s->ready);
            /* where records were lost: the unknown thread's own switches, said as they are not the trace's */
            if (s->unknown_switches)
                fprintf(stderr, ", %llu switches to or from the unknown thread (4294967295) where records were lost",
                        (unsigned long long)s->unknown_switches);
            fputc('\n', stderr);
        }
    }
    /* The profile's and the scheduler stacks' passes read the file again: damage only they meet (an impossible
       ImageSize, a stack record of the other pointer size) is the input's too. */
    bool prof_damaged = etl_export_rows_damaged(x.tab) || etl_timeline_profile_damaged(x.tr);
    etl_export_rows_close(x.tab);
    etl_timeline_close(x.tr);
    cli_symbols_close(syms);
    rc = rep_run_close(&run);
    if (fail || orc != EXIT_OK) return EXIT_IO;
    return rc == EXIT_OK && prof_damaged ? EXIT_DAMAGED : rc;
}

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
 * is renamed into place whole; with --force over an existing one, each
 * OUT/<table>.csv is replaced and other files are left alone.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "report.h"
#include "etlkit/export.h"
#include "base/diag.h"
#include "base/outfile.h"
#include "base/platform.h"
#include "base/sigclean.h"

enum { TO_NONE = 0, TO_SQLITE, TO_CSV, TO_PERFETTO, TO_FTRACE };

static void help(void)
{
    printf("Usage: %s export FILE --to sqlite|csv|perfetto|ftrace -o OUT [OPTIONS]\n"
           "       %s export --schema\n\n"
           "Writes the trace's scheduler data for other tools, streaming (the trace is never held\n"
           "in memory):\n"
           "  sqlite    one SQLite file: tables trace, process, thread, cswitch, slice,\n"
           "            thread_state, ready, spinlock, pmc, enum_name, and the views\n"
           "            cpu_by_thread, cpu_by_cpu, waits_by_reason, waits_by_thread\n"
           "            (equal to `etlkit cpu` and `etlkit waits`); opens in the sqlite3 shell\n"
           "  csv       a directory OUT with one OUT/<table>.csv per table (RFC 4180, header row,\n"
           "            a first trace_id column), for DuckDB, Spark, pandas, ClickHouse\n"
           "  perfetto  a Perfetto protobuf trace (ETW events: CSwitch, ReadyThread, names) for\n"
           "            ui.perfetto.dev and trace_processor (v53 or later)\n"
           "  ftrace    ftrace text (sched_switch, sched_waking, sched_blocked_reason) for\n"
           "            Perfetto's legacy importer, Catapult and Trace Compass\n\n"
           "  --to FORMAT              the target (required)\n"
           "  -o, --output OUT         the file (the directory for csv) to write; - is standard\n"
           "                           output for perfetto and ftrace\n"
           "  --force                  replace an existing OUT (else refused); a symbolic link is\n"
           "                           replaced itself, never written through\n"
           "  --range START END        only events in this window, from the trace start: seconds or\n"
           "                           ms/us/ns (slices overlapping it are kept whole)\n"
           "  --tables LIST            sqlite and csv: fill only these tables (comma-separated);\n"
           "                           trace and enum_name are always written\n"
           "  --trace-id ID            the trace_id of the rows (default: FILE's base name)\n"
           "  --max-wait-reason N      StateWr bias of compact batches, 1..54 (default: from the OS build)\n"
           "  --schema                 print the table schema (Markdown, as docs/schema.md) and exit\n"
           "  --threads N              threads that read the trace (default: the CPUs available);\n"
           "                           the output is the same with any N\n"
           "  --quiet                  no warnings about the input, no summary\n"
           "  -h, --help               this help\n\n"
           "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged (exported anyway,\n"
           "the damage recorded in the trace table), 64 usage.\n",
           prog, prog);
}

/* ---- the output: a temporary name, renamed into place (base/outfile) ------------------------ */

typedef struct out_path {
    etl_outfile of;
    char *files[ETL_XT_COUNT]; /* csv: files we created in of.tmp */
    int clean[ETL_XT_COUNT];   /* their signal cleanup slots + 1 */
} out_path;

/* Refuses, before reading anything, what the output rules refuse (outfile.h). */
static int out_check(const char *cmd, const char *path, int to, int force, const char *input, out_path *o)
{
    memset(o, 0, sizeof *o);
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st = to == TO_CSV ? etl_outfile_check_dir(path, &o->of, &d) : etl_outfile_check(path, &o->of, &d);
    if (st == ETL_OK) st = etl_outfile_may_replace(&o->of, path, force, input, &d);
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
    if ((o->of.dir ? etl_outfile_create_dir(&o->of, &d) : etl_outfile_create(&o->of, f, &d)) == ETL_OK) return EXIT_OK;
    fprintf(stderr, "%s %s: %s\n", prog, cmd, d.msg);
    return EXIT_IO;
}

static void out_drop_file(out_path *o, int t, int remove)
{
    if (remove) etl_unlink(o->files[t]);
    etl_sigclean_remove(o->clean[t] - 1); /* after the unlink or the rename */
    o->clean[t] = 0;
    free(o->files[t]);
    o->files[t] = NULL;
}

/* Removes what we created (failure) or renames it into place (success). */
static int out_finish(const char *cmd, const char *path, out_path *o, int ok)
{
    int rc = EXIT_OK;
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (ok && o->of.dir && o->of.exists && !o->of.is_link) {
        /* --force over a directory: our tables replace theirs, one by one; other files stay. */
        for (int t = 0; t < ETL_XT_COUNT; t++) {
            if (!o->files[t]) continue;
            const char *name = strrchr(o->files[t], '/') + 1;
            size_t n = strlen(path) + strlen(name) + 2;
            char *dst = malloc(n);
            if (!dst || (snprintf(dst, n, "%s/%s", path, name), etl_rename(o->files[t], dst) != 0)) {
                fprintf(stderr, "%s %s: %s: cannot move %s into place: %s\n", prog, cmd, path, name,
                        dst ? strerror(errno) : "out of memory");
                rc = EXIT_IO;
            } else {
                out_drop_file(o, t, 0);
            }
            free(dst);
        }
        ok = 0; /* what is left in the temporary directory goes */
    } else if (ok && etl_outfile_commit(&o->of, path, &d) != ETL_OK) {
        fprintf(stderr, "%s %s: %s\n", prog, cmd, d.msg);
        ok = 0;
        rc = EXIT_IO;
    }
    /* Renamed with their directory, or ours to remove. */
    for (int t = 0; t < ETL_XT_COUNT; t++)
        if (o->files[t]) out_drop_file(o, t, !ok);
    etl_outfile_discard(&o->of);
    return rc;
}

/* ---- the CSV sink: OUT/<table>.csv through csv_field -------------------------------------- */

typedef struct csv_sink {
    FILE *f[ETL_XT_COUNT];
    const char *trace_id;
    int failed;
    int err;      /* the first failure's errno */
    int err_t;    /* ... and its table */
} csv_sink;

static void csv_fail(csv_sink *c, int t)
{
    if (!c->failed) {
        c->err = errno ? errno : EIO;
        c->err_t = t;
    }
    c->failed = 1;
}

static int csv_open(csv_sink *c, out_path *o, uint32_t tables)
{
    const etl_xtable *t = etl_export_tables();
    for (int i = 0; i < ETL_XT_COUNT; i++) {
        if (!(tables >> i & 1u)) continue;
        size_t n = strlen(o->of.tmp) + strlen(t[i].name) + 8;
        o->files[i] = malloc(n);
        if (!o->files[i]) return -1;
        snprintf(o->files[i], n, "%s/%s.csv", o->of.tmp, t[i].name);
        c->f[i] = etl_fopen(o->files[i], "wbx");
        if (!c->f[i]) {
            free(o->files[i]);
            o->files[i] = NULL;
            return -1;
        }
        o->clean[i] = etl_sigclean_add(o->files[i], false) + 1;
        setvbuf(c->f[i], NULL, _IOFBF, 1u << 18);
        csv_field(c->f[i], "trace_id");
        for (unsigned k = 0; k < t[i].ncols; k++) {
            fputc(',', c->f[i]);
            csv_field(c->f[i], t[i].cols[k].name);
        }
        fputs("\r\n", c->f[i]);
    }
    return 0;
}

static int csv_row(void *ctx, etl_xtable_id table, const etl_xval *v)
{
    csv_sink *c = ctx;
    FILE *f = c->f[table];
    if (!f) return 0;
    unsigned n = etl_export_tables()[table].ncols;
    csv_field(f, c->trace_id);
    char num[24];
    for (unsigned k = 0; k < n; k++) {
        fputc(',', f);
        if (v[k].kind == ETL_XV_INT) {
            num[fmt_i64(num, v[k].i)] = 0;
            fputs(num, f);
        } else if (v[k].kind == ETL_XV_TEXT) {
            csv_field(f, v[k].s);
        }
    }
    /* The error flag stays set: any failed write of the row shows here, errno still its reason. */
    if (fputs("\r\n", f) == EOF || ferror(f)) {
        csv_fail(c, table);
        return -1;
    }
    return 0;
}

static int csv_close(csv_sink *c)
{
    for (int i = 0; i < ETL_XT_COUNT; i++) {
        if (!c->f[i]) continue;
        if (fflush(c->f[i]) != 0 || ferror(c->f[i])) csv_fail(c, i);
        if (fclose(c->f[i]) != 0) csv_fail(c, i);
        c->f[i] = NULL;
    }
    return c->failed;
}

/* ---- the run -------------------------------------------------------------------------------- */

typedef struct xrun {
    etl_xtab *tab;
    etl_xtrace *tr;
} xrun;

static void x_row(void *ctx, const etl_sched_row *r)
{
    xrun *x = ctx;
    if (x->tab) etl_xtab_row(x->tab, r);
}

static void x_ready(void *ctx, const etl_sched_ready *r)
{
    xrun *x = ctx;
    if (x->tab) etl_xtab_ready(x->tab, r);
    if (x->tr) etl_xtrace_ready(x->tr, r);
}

static void x_event(void *ctx, const etl_sched_event *ev)
{
    xrun *x = ctx;
    if (x->tab) etl_xtab_event(x->tab, ev);
    if (x->tr) etl_xtrace_event(x->tr, ev);
}

static int parse_tables(const char *list, uint32_t *mask)
{
    *mask = 0;
    char buf[512];
    snprintf(buf, sizeof buf, "%s", list);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int i = etl_export_table_find(t);
        if (i < 0) return cli_usage_error("export", "--tables: no table '%s' (see --schema)", t);
        *mask |= 1u << i;
    }
    if (!*mask) return cli_usage_error("export", "--tables needs table names");
    return EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "export");
    int to = TO_NONE, force = 0;
    const char *out = NULL, *trace_id = NULL, *to_name = NULL;
    uint32_t tables = 0;
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(o)) {
            help();
            return EXIT_OK;
        } else if (strcmp(o, "--schema") == 0) {
            etl_export_schema_markdown(stdout);
            return fflush(stdout) == 0 && !ferror(stdout) ? EXIT_OK : EXIT_IO;
        } else if (strcmp(o, "--to") == 0) {
            if (!v) return cli_usage_error("export", "--to needs sqlite, csv, perfetto or ftrace");
            to = strcmp(v, "sqlite") == 0 ? TO_SQLITE : strcmp(v, "csv") == 0 ? TO_CSV
               : strcmp(v, "perfetto") == 0 ? TO_PERFETTO : strcmp(v, "ftrace") == 0 ? TO_FTRACE : TO_NONE;
            if (to == TO_NONE) return cli_usage_error("export", "--to must be sqlite, csv, perfetto or ftrace, not '%s'", v);
            to_name = v;
            i++;
        } else if (strcmp(o, "-o") == 0 || strcmp(o, "--output") == 0) {
            if (!v || !*v) return cli_usage_error("export", "%s needs a path", o);
            out = v;
            i++;
        } else if (strcmp(o, "--force") == 0) {
            force = 1;
        } else if (strcmp(o, "--tables") == 0) {
            if (!v) return cli_usage_error("export", "--tables needs table names");
            int rc = parse_tables(v, &tables);
            if (rc != EXIT_OK) return rc;
            i++;
        } else if (strcmp(o, "--trace-id") == 0) {
            if (!v || !*v) return cli_usage_error("export", "--trace-id needs a value");
            trace_id = v;
            i++;
        } else if (strcmp(o, "--range") == 0 || strcmp(o, "--quiet") == 0 || strcmp(o, "-q") == 0 ||
                   strcmp(o, "--max-wait-reason") == 0 || strcmp(o, "--threads") == 0) {
            int r = rep_arg(&a, argc, argv, &i);
            if (r == EXIT_USAGE) return r;
        } else if (o[0] == '-' && o[1]) {
            return cli_usage_error("export", "unknown option '%s'", o);
        } else if (!a.path) {
            a.path = o;
        } else {
            return cli_usage_error("export", "one FILE only");
        }
    }
    if (!a.path) return cli_usage_error("export", "no FILE given");
    if (to == TO_NONE) return cli_usage_error("export", "--to sqlite|csv|perfetto|ftrace is required");
    if (!out) return cli_usage_error("export", "-o OUT is required");
    if (tables && (to == TO_PERFETTO || to == TO_FTRACE))
        return cli_usage_error("export", "--tables is for --to sqlite and csv");
    int to_stdout = strcmp(out, "-") == 0;
    if (to_stdout && (to == TO_SQLITE || to == TO_CSV))
        return cli_usage_error("export", "--to %s needs a path, not standard output", to_name);
    if (!trace_id) {
        trace_id = etl_path_base(a.path);
    }

    out_path op;
    memset(&op, 0, sizeof op);
    int rc = to_stdout ? EXIT_OK : out_check("export", out, to, force, a.path, &op);
    if (rc != EXIT_OK) return rc;
    xrun x = {0};
    a.on_ready = x_ready;
    rep_run run;
    rc = rep_run_open(&run, &a, to == TO_SQLITE || to == TO_CSV ? x_row : NULL, &x, x_event);
    if (rc != EXIT_OK) {
        etl_outfile_discard(&op.of);
        return rc;
    }
    FILE *f = to_stdout ? stdout : NULL;
    if (!to_stdout && (rc = out_create("export", &op, to == TO_PERFETTO || to == TO_FTRACE ? &f : NULL)) != EXIT_OK) {
        etl_outfile_discard(&op.of);
        rep_run_close(&run);
        return rc;
    }
    const etl_clock *clk = etl_reader_clock(run.in.reader);
    etl_xsqlite *db = NULL;
    csv_sink csv;
    memset(&csv, 0, sizeof csv);
    csv.trace_id = trace_id;
    /* Every failure names the output and says why (the errno's text, or SQLite's). */
    const char *oname = to_stdout ? "standard output" : out;
    char err[512] = "", why[256] = "";
    int fail = 0;
    if (to == TO_SQLITE || to == TO_CSV) {
        etl_xtab_options xo = {.sz = sizeof xo,
                               .on_row = to == TO_SQLITE ? etl_xsqlite_row : csv_row,
                               .tables = tables,
                               .has_range = a.has_range != 0,
                               .v0 = a.v0,
                               .v1 = a.v1,
                               .trace_id = trace_id,
                               .target = to_name};
        uint32_t mask = tables ? tables : (1u << ETL_XT_COUNT) - 1;
        mask |= 1u << ETL_XT_TRACE | 1u << ETL_XT_ENUM_NAME;
        if (to == TO_SQLITE) {
            if (etl_xsqlite_open(op.of.tmp, &db, why) != ETL_OK) {
                snprintf(err, sizeof err, "%s: %s", out, why);
                fail = 1;
            }
            xo.ctx = db;
        } else {
            if (csv_open(&csv, &op, mask)) {
                snprintf(err, sizeof err, "%s: %s", out, strerror(errno));
                fail = 1;
            }
            xo.ctx = &csv;
        }
        if (!fail && etl_xtab_open(clk, &xo, &x.tab) != ETL_OK) fail = 1;
    } else {
        setvbuf(f, NULL, _IOFBF, 1u << 18);
        etl_xtrace_options to_o = {.sz = sizeof to_o,
                                   .format = to == TO_PERFETTO ? ETL_XTRACE_PERFETTO : ETL_XTRACE_FTRACE,
                                   .has_range = a.has_range != 0,
                                   .v0 = a.v0,
                                   .v1 = a.v1};
        if (etl_xtrace_open(f, clk, &to_o, &x.tr) != ETL_OK) fail = 1;
    }
    if (!fail) {
        rep_run_go(&run, &a);
        /* The model left threads out: the export would be incomplete, so it is not put in place. */
        if (run.model_failed) {
            fail = 1;
            run.told = true;
            snprintf(err, sizeof err, "out of memory: the scheduler model left threads out");
        }
        if (x.tab) {
            etl_xtab_end end = {.reader = run.in.reader,
                                .path = a.path,
                                .model = run.model,
                                .source = etl_sched_source_stats_get(run.src),
                                .damage = &run.damage,
                                .end_ts = run.end_ts};
            if (etl_xtab_finish(x.tab, &end)) fail = 1;
        }
        if (x.tr && etl_xtrace_finish(x.tr) != ETL_OK) {
            snprintf(err, sizeof err, "%s: %s", oname, strerror(errno)); /* finish leaves the failure's errno */
            fail = 1;
        }
    }
    if (db && etl_xsqlite_close(db, !fail, why) != ETL_OK) fail = 1;
    if (db && why[0] && !err[0]) snprintf(err, sizeof err, "%s: %s", out, why); /* a failed row's reason too */
    if (to == TO_CSV && csv_close(&csv)) {
        if (!err[0])
            snprintf(err, sizeof err, "%s/%s.csv: %s", out, etl_export_tables()[csv.err_t].name, strerror(csv.err));
        fail = 1;
    }
    if (f && !to_stdout && fclose(f) != 0 && !fail) {
        snprintf(err, sizeof err, "%s: %s", out, strerror(errno));
        fail = 1;
    }
    if (fail) fprintf(stderr, "%s export: %s\n", prog, err[0] ? err : "out of memory");
    int orc = to_stdout ? EXIT_OK : out_finish("export", out, &op, !fail);
    if (!fail && orc == EXIT_OK && !a.quiet) {
        if (x.tab) {
            const etl_xtab_stats *s = etl_xtab_stats_get(x.tab);
            const etl_xtable *t = etl_export_tables();
            uint64_t total = 0;
            for (int i = 0; i < ETL_XT_COUNT; i++) total += s->rows[i];
            fprintf(stderr, "%s export: %s: %llu rows (", prog, out, (unsigned long long)total);
            for (int i = ETL_XT_CSWITCH, k = 0; i <= ETL_XT_PMC; i++)
                if (s->rows[i]) fprintf(stderr, "%s%s %llu", k++ ? ", " : "", t[i].name, (unsigned long long)s->rows[i]);
            fprintf(stderr, ")\n");
        } else if (x.tr && !to_stdout) {
            const etl_xtrace_stats *s = etl_xtrace_stats_get(x.tr);
            fprintf(stderr, "%s export: %s: %llu switches, %llu ReadyThreads\n", prog, out,
                    (unsigned long long)s->switches, (unsigned long long)s->ready);
        }
    }
    etl_xtab_close(x.tab);
    etl_xtrace_close(x.tr);
    rc = rep_run_close(&run);
    if (fail || orc != EXIT_OK) return EXIT_IO;
    return rc;
}

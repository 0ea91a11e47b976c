/*
 * csv.c - the CSV sink (export.h, etl_csv_sink_*): a directory OUT with one
 * OUT/<table>.csv per table, RFC 4180 (a header row, CRLF line ends, fields quoted
 * only when they must be, an empty text as "" and a NULL as nothing), each row's
 * first column the trace_id (none with no_trace_id: a dataset's partition, whose
 * path holds it); fed the table rows of tables.c as the SQLite sink is.
 *
 * The directory follows the output rules of base/outfile.h: checked before
 * anything is read, written as a new temporary directory beside OUT and renamed
 * into place whole when complete. Over an existing directory (force), the
 * OUT/<table>.csv files, and the OUT/<table>.parquet of a Parquet export
 * (sink_files.h), are replaced as one (etl_outfile_commit): afterwards OUT holds
 * this export's tables and no other table's file (one not written, with tables,
 * is removed; one of the other format too), or, when a step failed, its old files
 * as they were; other files are left alone. One of those files that is the input, or is not a regular
 * file or a link, is refused before anything is written. A failed or interrupted
 * export leaves nothing behind: the files and the directory we created are
 * removed, on a signal too (base/sigclean.h).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "base/diag.h"
#include "base/opts.h"
#include "base/outfile.h"
#include "base/platform.h"
#include "base/sigclean.h"
#include "export/sink_files.h"
#include "out/csv.h"
#include "out/num.h"

struct etl_csv_sink {
    etl_outfile of;
    char *path;                 /* OUT as the user gave it, for messages and the moves */
    uint32_t tables;            /* the tables written (trace and enum_name always) */
    const char *trace_id;
    bool no_trace_id;           /* no first trace_id column */
    etl_diag_fn on_diag;
    void *diag_ctx;
    FILE *f[ETL_TABLE_COUNT];
    char *files[ETL_TABLE_COUNT];  /* the files we created in of.tmp */
    int clean[ETL_TABLE_COUNT];    /* their signal cleanup slots + 1 */
    etl_sink_files names;       /* every table's file in every format: the files of ours in OUT (sink_files.h) */
    int failed;
    int err;                    /* the first failure's errno */
    int err_t;                  /* ... and its table */
};

static void fail(etl_csv_sink *c, int t)
{
    if (!c->failed) {
        c->err = errno ? errno : EIO;
        c->err_t = t;
    }
    c->failed = 1;
}

etl_status etl_csv_sink_check(const char *dir, const etl_csv_sink_options *opts, etl_csv_sink **out, etl_diag *diag)
{
    /* The caller's first sz bytes over the defaults (base/opts.h: an older, smaller struct, or none) */
    etl_csv_sink_options oo = {.sz = sizeof oo};
    etl_opts_take(&oo, sizeof oo, opts);
    const etl_csv_sink_options *o = &oo;
    *out = NULL;
    etl_csv_sink *c = calloc(1, sizeof *c);
    if (!c || !(c->path = strdup(dir))) {
        free(c);
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        return ETL_E_NOMEM;
    }
    etl_status st = etl_outfile_check_dir(dir, &c->of, diag);
    if (st == ETL_OK && c->of.exists && !c->of.is_link) st = etl_sink_not_dataset(dir, "csv", o->input, diag);
    if (st == ETL_OK) st = etl_outfile_may_replace(&c->of, dir, o->force, o->input, diag);
    c->tables = (o->tables ? o->tables : (1u << ETL_TABLE_COUNT) - 1) | 1u << ETL_TABLE_TRACE | 1u << ETL_TABLE_ENUM_NAME;
    /* Over an existing directory every table's file, in either format, is ours: those not written this time go too. */
    uint32_t ours = etl_sink_files_init(&c->names, ETL_SINK_CSV, c->tables);
    if (st == ETL_OK)
        st = etl_outfile_dir_files(&c->of, dir, c->names.names, ETL_SINK_FILES, "", ours, o->input, diag);
    if (st != ETL_OK) {
        etl_outfile_discard(&c->of);
        free(c->path);
        free(c);
        return st;
    }
    c->trace_id = o->trace_id ? o->trace_id : "";
    c->no_trace_id = o->no_trace_id;
    c->on_diag = o->on_diag;
    c->diag_ctx = o->diag_ctx;
    *out = c;
    return ETL_OK;
}

etl_status etl_csv_sink_create(etl_csv_sink *c, etl_diag *diag)
{
    etl_status st = etl_outfile_create_dir(&c->of, diag);
    if (st != ETL_OK) return st;
    const etl_table_def *t = etl_export_tables();
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        if (!(c->tables >> i & 1u)) continue;
        size_t n = strlen(c->of.tmp) + strlen(t[i].name) + 8;
        c->files[i] = malloc(n);
        etl_sigclean_hold(); /* created and registered as one: a signal between would leave the file */
        if (c->files[i]) {
            snprintf(c->files[i], n, "%s%s%s.csv", c->of.tmp, etl_path_sep(c->of.tmp, NULL), t[i].name);
            c->f[i] = etl_fopen(c->files[i], "wbx");
        }
        if (c->f[i]) c->clean[i] = etl_sigclean_add(c->files[i], false) + 1;
        etl_sigclean_release();
        if (!c->f[i]) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", c->path, strerror(errno));
            free(c->files[i]);
            c->files[i] = NULL;
            return ETL_E_IO;
        }
        setvbuf(c->f[i], NULL, _IOFBF, 1u << 18);
        if (!c->no_trace_id) csv_field(c->f[i], "trace_id");
        for (unsigned k = 0; k < t[i].ncols; k++) {
            if (k || !c->no_trace_id) fputc(',', c->f[i]);
            csv_field(c->f[i], t[i].cols[k].name);
        }
        fputs("\r\n", c->f[i]);
    }
    return ETL_OK;
}

int etl_csv_sink_row(void *ctx, etl_table_id table, const etl_value *v)
{
    etl_csv_sink *c = ctx;
    FILE *f = c->f[table];
    if (!f) return 0;
    const etl_table_def *t = &etl_export_tables()[table];
    unsigned n = t->ncols;
    if (!c->no_trace_id) csv_field(f, c->trace_id);
    char num[24];
    for (unsigned k = 0; k < n; k++) {
        if (k || !c->no_trace_id) fputc(',', f);
        if (v[k].kind == ETL_VALUE_INT) {
            /* An unsigned 64-bit column's bits as the unsigned decimal they are. */
            bool u64 = (t->cols[k].kind & ETL_COLUMN_TYPE_MASK) == ETL_COLUMN_UINT64;
            num[u64 ? fmt_u64(num, (uint64_t)v[k].i) : fmt_i64(num, v[k].i)] = 0;
            fputs(num, f);
        } else if (v[k].kind == ETL_VALUE_TEXT) {
            csv_field(f, v[k].s);
        }
    }
    /* The error flag stays set: any failed write of the row shows here, errno still its reason. */
    if (fputs("\r\n", f) == EOF || ferror(f)) {
        fail(c, table);
        return -1;
    }
    return 0;
}

etl_status etl_csv_sink_finish(etl_csv_sink *c, etl_diag *diag)
{
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        if (!c->f[i]) continue;
        if (fflush(c->f[i]) != 0 || ferror(c->f[i])) fail(c, i);
        if (fclose(c->f[i]) != 0) fail(c, i);
        c->f[i] = NULL;
    }
    if (!c->failed) return ETL_OK;
    etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s%s%s.csv: %s", c->path, etl_path_sep(c->path, NULL),
                 etl_export_tables()[c->err_t].name,
                 strerror(c->err));
    return ETL_E_IO;
}

static void drop_file(etl_csv_sink *c, int t, int remove)
{
    if (remove) etl_unlink(c->files[t]);
    etl_sigclean_remove(c->clean[t] - 1); /* after the unlink or the rename */
    c->clean[t] = 0;
    free(c->files[t]);
    c->files[t] = NULL;
}

static void tell(etl_csv_sink *c, etl_diag *d)
{
    if (c->on_diag) c->on_diag(c->diag_ctx, d);
}

etl_status etl_csv_sink_close(etl_csv_sink *c, bool commit)
{
    if (!c) return ETL_OK;
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st = ETL_OK;
    if (commit && etl_csv_sink_finish(c, &d) != ETL_OK) { /* not finished yet, and it fails now */
        tell(c, &d);
        commit = false;
        st = ETL_E_IO;
    }
    for (int i = 0; i < ETL_TABLE_COUNT; i++) { /* an abort before finish: closed, to be removed */
        if (c->f[i]) fclose(c->f[i]);
        c->f[i] = NULL;
    }
    /* A new directory renamed into place, or over an existing one our tables replaced as one (outfile.h). */
    if (commit && etl_outfile_commit(&c->of, c->path, &d) != ETL_OK) {
        tell(c, &d);
        commit = false;
        st = ETL_E_IO;
    }
    /* Renamed with their directory, or ours to remove. */
    for (int t = 0; t < ETL_TABLE_COUNT; t++)
        if (c->files[t]) drop_file(c, t, !commit);
    etl_outfile_discard(&c->of);
    free(c->path);
    free(c);
    return st;
}

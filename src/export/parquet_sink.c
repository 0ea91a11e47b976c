/*
 * parquet_sink.c - the Parquet sink (export.h, etl_parquet_sink_*): a directory
 * OUT with one OUT/<table>.parquet per table (parquet_writer.c), fed the table
 * rows of tables.c as the CSV and SQLite sinks are, each row's first column the
 * trace_id unless the caller writes a Hive partition (no_trace_id). Each table's
 * columns, types and row order come from the schema (schema.c).
 *
 * The directory follows the output rules of base/outfile.h as the CSV sink's
 * does: checked before anything is read, written as a new temporary directory
 * beside OUT and renamed into place whole when complete; over an existing
 * directory (force), the OUT/<table>.parquet files, and the OUT/<table>.csv of a
 * CSV export (sink_files.h), are replaced as one (this export's tables, none of
 * another's in either format; or the old ones as they were when a step failed)
 * and other files are left alone; a failed or interrupted export leaves
 * nothing behind (base/sigclean.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "base/diag.h"
#include "base/opts.h"
#include "base/outfile.h"
#include "base/platform.h"
#include "base/sigclean.h"
#include "export/sink_files.h"
#include "export/parquet.h"

#define PQ_MAXCOLS 40

struct etl_parquet_sink {
    etl_outfile of;
    char *path;                 /* OUT as the user gave it, for messages and the moves */
    uint32_t tables;
    char *trace_id;
    bool no_trace_id;
    etl_diag_fn on_diag;
    void *diag_ctx;
    FILE *f[ETL_TABLE_COUNT];
    pq_writer *w[ETL_TABLE_COUNT];
    pq_scratch *scratch;        /* the writers' working memory, shared */
    pq_worker *worker;          /* their row groups' writer thread (NULL: inline) */
    char *files[ETL_TABLE_COUNT];  /* the files we created in of.tmp */
    int clean[ETL_TABLE_COUNT];    /* their signal cleanup slots + 1 */
    etl_sink_files names;       /* every table's file in every format: the files of ours in OUT (sink_files.h) */
    etl_column_def cols[ETL_TABLE_COUNT][PQ_MAXCOLS]; /* trace_id, then the table's */
    etl_value row[PQ_MAXCOLS];
    etl_status st;              /* the first failure */
    int err_t;                  /* ... its table */
    char err[200];              /* ... and its reason */
};

static void fail(etl_parquet_sink *p, int t, etl_status st, const char *why)
{
    if (p->st != ETL_OK) return;
    p->st = st;
    p->err_t = t;
    snprintf(p->err, sizeof p->err, "%s", why);
}

etl_status etl_parquet_sink_check(const char *dir, const etl_parquet_sink_options *opts, etl_parquet_sink **out,
                                  etl_diag *diag)
{
    /* The caller's first sz bytes over the defaults (base/opts.h: an older, smaller struct, or none) */
    etl_parquet_sink_options oo = {.sz = sizeof oo};
    etl_opts_take(&oo, sizeof oo, opts);
    const etl_parquet_sink_options *o = &oo;
    *out = NULL;
    etl_parquet_sink *p = calloc(1, sizeof *p);
    if (!p || !(p->path = strdup(dir)) || !(p->trace_id = strdup(o->trace_id ? o->trace_id : ""))) {
        if (p) free(p->path);
        free(p);
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        return ETL_E_NOMEM;
    }
    etl_status st = etl_outfile_check_dir(dir, &p->of, diag);
    if (st == ETL_OK && p->of.exists && !p->of.is_link) st = etl_sink_not_dataset(dir, "parquet", o->input, diag);
    if (st == ETL_OK) st = etl_outfile_may_replace(&p->of, dir, o->force, o->input, diag);
    p->tables = (o->tables ? o->tables : (1u << ETL_TABLE_COUNT) - 1) | 1u << ETL_TABLE_TRACE | 1u << ETL_TABLE_ENUM_NAME;
    /* Over an existing directory every table's file, in either format, is ours: those not written this time go too. */
    uint32_t ours = etl_sink_files_init(&p->names, ETL_SINK_PARQUET, p->tables);
    if (st == ETL_OK)
        st = etl_outfile_dir_files(&p->of, dir, p->names.names, ETL_SINK_FILES, "", ours, o->input, diag);
    if (st != ETL_OK) {
        etl_outfile_discard(&p->of);
        free(p->trace_id);
        free(p->path);
        free(p);
        return st;
    }
    p->no_trace_id = o->no_trace_id;
    p->on_diag = o->on_diag;
    p->diag_ctx = o->diag_ctx;
    *out = p;
    return ETL_OK;
}

etl_status etl_parquet_sink_create(etl_parquet_sink *p, etl_diag *diag)
{
    etl_status st = etl_outfile_create_dir(&p->of, diag);
    if (st != ETL_OK) return st;
    const etl_table_def *t = etl_export_tables();
    p->worker = pq_worker_new(); /* once: all the writers write through it, or all inline */
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        if (!(p->tables >> i & 1u)) continue;
        unsigned n = 0;
        if (!p->no_trace_id)
            p->cols[i][n++] = (etl_column_def){"trace_id", "TEXT", "the trace", ETL_COLUMN_TEXT | ETL_COLUMN_NOT_NULL};
        for (unsigned k = 0; k < t[i].ncols && n < PQ_MAXCOLS; k++) p->cols[i][n++] = t[i].cols[k];
        size_t len = strlen(p->of.tmp) + strlen(t[i].name) + 10;
        p->files[i] = malloc(len);
        etl_sigclean_hold(); /* created and registered as one: a signal between would leave the file */
        if (p->files[i]) {
            snprintf(p->files[i], len, "%s%s%s.parquet", p->of.tmp, etl_path_sep(p->of.tmp, NULL), t[i].name);
            p->f[i] = etl_fopen(p->files[i], "wbx");
        }
        if (p->f[i]) p->clean[i] = etl_sigclean_add(p->files[i], false) + 1;
        etl_sigclean_release();
        if (!p->f[i]) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", p->path, p->files[i] ? strerror(errno) : "out of memory");
            free(p->files[i]);
            p->files[i] = NULL;
            return ETL_E_IO;
        }
        setvbuf(p->f[i], NULL, _IOFBF, 1u << 18);
        if (!p->scratch && !(p->scratch = pq_scratch_new())) {
            etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
            return ETL_E_NOMEM;
        }
        pq_writer_options wo = {.order = t[i].order, .scratch = p->scratch, .worker = p->worker};
        st = pq_writer_open(p->f[i], p->cols[i], n, &wo, &p->w[i]);
        if (st != ETL_OK) {
            etl_diag_set(diag, st, UINT64_MAX, "%s%s%s.parquet: %s", p->path, etl_path_sep(p->path, NULL), t[i].name,
                         etl_status_str(st));
            return st;
        }
    }
    return ETL_OK;
}

int etl_parquet_sink_row(void *ctx, etl_table_id table, const etl_value *v)
{
    etl_parquet_sink *p = ctx;
    pq_writer *w = p->w[table];
    if (!w) return 0;
    if (p->st != ETL_OK) return -1;
    const etl_value *row = v;
    if (!p->no_trace_id) { /* the trace_id first: the row copied behind it */
        unsigned n = etl_export_tables()[table].ncols;
        p->row[0] = (etl_value){.kind = ETL_VALUE_TEXT, .s = p->trace_id};
        memcpy(p->row + 1, v, (n < PQ_MAXCOLS - 1 ? n : PQ_MAXCOLS - 1) * sizeof *v);
        row = p->row;
    }
    etl_status st = pq_writer_row(w, row);
    if (st == ETL_OK) return 0;
    fail(p, table, st, pq_writer_error(w));
    return -1;
}

etl_status etl_parquet_sink_finish(etl_parquet_sink *p, etl_diag *diag)
{
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        if (!p->f[i]) continue;
        etl_status ws = p->w[i] && p->st == ETL_OK ? pq_writer_finish(p->w[i]) : ETL_OK;
        if (ws != ETL_OK) fail(p, i, ws, pq_writer_error(p->w[i]));
        pq_writer_close(p->w[i]);
        p->w[i] = NULL;
        errno = 0;
        if (fclose(p->f[i]) != 0) fail(p, i, ETL_E_IO, strerror(errno ? errno : EIO));
        p->f[i] = NULL;
    }
    if (p->st == ETL_OK) return ETL_OK;
    etl_diag_set(diag, p->st, UINT64_MAX, "%s%s%s.parquet: %s", p->path, etl_path_sep(p->path, NULL),
                 etl_export_tables()[p->err_t].name,
                 p->err[0] ? p->err : etl_status_str(p->st));
    return p->st;
}

static void drop_file(etl_parquet_sink *p, int t, int remove)
{
    if (remove) etl_unlink(p->files[t]);
    etl_sigclean_remove(p->clean[t] - 1); /* after the unlink or the rename */
    p->clean[t] = 0;
    free(p->files[t]);
    p->files[t] = NULL;
}

static void tell(etl_parquet_sink *p, etl_diag *d)
{
    if (p->on_diag) p->on_diag(p->diag_ctx, d);
}

etl_status etl_parquet_sink_close(etl_parquet_sink *p, bool commit)
{
    if (!p) return ETL_OK;
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st = ETL_OK;
    if (commit && etl_parquet_sink_finish(p, &d) != ETL_OK) { /* not finished yet, and it fails now */
        tell(p, &d);
        commit = false;
        st = d.status ? d.status : ETL_E_IO;
    }
    for (int i = 0; i < ETL_TABLE_COUNT; i++) { /* an abort before finish: closed, to be removed */
        pq_writer_close(p->w[i]);
        p->w[i] = NULL;
        if (p->f[i]) fclose(p->f[i]);
        p->f[i] = NULL;
    }
    /* A new directory renamed into place, or over an existing one our tables replaced as one (outfile.h). */
    if (commit && etl_outfile_commit(&p->of, p->path, &d) != ETL_OK) {
        tell(p, &d);
        commit = false;
        st = ETL_E_IO;
    }
    for (int t = 0; t < ETL_TABLE_COUNT; t++)
        if (p->files[t]) drop_file(p, t, !commit);
    etl_outfile_discard(&p->of);
    pq_worker_free(p->worker); /* after the writers (closed above) */
    pq_scratch_free(p->scratch);
    free(p->trace_id);
    free(p->path);
    free(p);
    return st;
}

/*
 * dataset.c - several traces as one Hive-partitioned dataset (export.h,
 * etl_dataset_export): DS/<table>/trace_id=<ID>/part-0.<ext>, exported in parallel.
 *
 * Each trace is a job, taken by the next free worker (the caller's thread and
 * jobs - 1 threads of the platform layer): it reads the trace once through the
 * source, the model and the table producer (as `etlkit export` does), into the
 * format's sink writing DS/_tmp/<ID>/<table>.<ext> (a temporary directory renamed
 * into place by the sink), then renames each file into its partition, then writes
 * DS/_traces/<ID>.json: its record, the mark that the trace is complete. Nothing a
 * trace writes is shared with another, so the workers take no lock but to tell the
 * caller (on_trace). Before a trace is exported, whatever an earlier run left of it
 * (record first, then partitions) is removed, so a partial trace never stays.
 *
 * The manifest is written once, at the end, from the records in DS/_traces sorted
 * by ID: a run resumed after a kill gives the same bytes as one never interrupted
 * (there are no times in it). A record holds what the single export tells on
 * stderr and in its trace table: the source path as given, its size and sha256, the
 * etlkit version, the anomaly counters `etlkit cpu --json` names, the reader's
 * diagnostics (the first 20), the rows per table and the format.
 *
 * Formats: `formats` below, one entry per sink with the CSV sink's shape; its
 * options are made from one fmt_options, so adding a format is one adapter and
 * one entry.
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "etlkit/schedstacks.h"
#include "etlkit/symbols.h"
#include "base/diag.h"
#include "base/diagkeep.h"
#include "base/opts.h"
#include "base/outfile.h"
#include "base/platform.h"
#include "base/sha256.h"
#include "base/sigclean.h"
#include "out/json.h"

/* ---- formats ------------------------------------------------------------------------------ */

/* What every sink's options hold (the CSV sink's; the Parquet sink has the same fields). */
typedef struct fmt_options {
    uint32_t tables;
    const char *trace_id;
    const char *input;
    etl_diag_fn on_diag;
    void *diag_ctx;
} fmt_options;

typedef struct fmt {
    const char *name, *ext;
    etl_status (*check)(const char *dir, const fmt_options *o, void **out, etl_diag *diag);
    etl_status (*create)(void *sink, etl_diag *diag);
    etl_row_sink_fn row;
    etl_status (*finish)(void *sink, etl_diag *diag);
    etl_status (*close)(void *sink, bool commit);
} fmt;

static etl_status csv_check(const char *dir, const fmt_options *o, void **out, etl_diag *diag)
{
    etl_csv_sink_options co = {.sz = sizeof co, .tables = o->tables, .trace_id = o->trace_id, .input = o->input,
                               .on_diag = o->on_diag, .diag_ctx = o->diag_ctx, .no_trace_id = true};
    etl_csv_sink *c = NULL;
    etl_status st = etl_csv_sink_check(dir, &co, &c, diag);
    *out = c;
    return st;
}
static etl_status csv_create(void *s, etl_diag *d) { return etl_csv_sink_create(s, d); }
static etl_status csv_finish(void *s, etl_diag *d) { return etl_csv_sink_finish(s, d); }
static etl_status csv_close(void *s, bool commit) { return etl_csv_sink_close(s, commit); }

static etl_status parquet_check(const char *dir, const fmt_options *o, void **out, etl_diag *diag)
{
    etl_parquet_sink_options po = {.sz = sizeof po, .tables = o->tables, .trace_id = o->trace_id, .input = o->input,
                                   .on_diag = o->on_diag, .diag_ctx = o->diag_ctx, .no_trace_id = true};
    etl_parquet_sink *p = NULL;
    etl_status st = etl_parquet_sink_check(dir, &po, &p, diag);
    *out = p;
    return st;
}
static etl_status parquet_create(void *s, etl_diag *d) { return etl_parquet_sink_create(s, d); }
static etl_status parquet_finish(void *s, etl_diag *d) { return etl_parquet_sink_finish(s, d); }
static etl_status parquet_close(void *s, bool commit) { return etl_parquet_sink_close(s, commit); }

static const fmt formats[] = {
    {"csv", "csv", csv_check, csv_create, etl_csv_sink_row, csv_finish, csv_close},
    {"parquet", "parquet", parquet_check, parquet_create, etl_parquet_sink_row, parquet_finish, parquet_close},
};

static const fmt *fmt_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof formats / sizeof formats[0]; i++)
        if (strcmp(formats[i].name, name) == 0) return &formats[i];
    return NULL;
}

const char *etl_dataset_format_ext(const char *format)
{
    const fmt *f = fmt_find(format);
    return f ? f->ext : NULL;
}

/* ---- IDs ---------------------------------------------------------------------------------- */

size_t etl_dataset_trace_id(const char *path, char *out, size_t cap)
{
    const char *b = etl_path_base(path);
    size_t n = strlen(b);
    if (n >= 4 && (b[n - 4] == '.') && (b[n - 3] | 0x20) == 'e' && (b[n - 2] | 0x20) == 't' &&
        (b[n - 1] | 0x20) == 'l')
        n -= 4;
    if (n > cap - 1) n = cap - 1;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                  c == '_' || (c == '.' && i > 0);
        out[i] = ok ? (char)c : '_';
    }
    if (n == 0) {
        n = cap - 1 < 5 ? cap - 1 : 5;
        memcpy(out, "trace", n);
    }
    out[n] = 0;
    return n;
}

/* Case-insensitive, as the file systems of Windows and macOS compare names. */
static int id_cmp(const char *a, const char *b)
{
    for (;; a++, b++) {
        int x = (unsigned char)*a, y = (unsigned char)*b;
        if (x >= 'A' && x <= 'Z') x += 32;
        if (y >= 'A' && y <= 'Z') y += 32;
        if (x != y || !x) return x - y;
    }
}

/* ---- paths -------------------------------------------------------------------------------- */

enum { ID_MAX = 160 };

/*
 * dir + "/" + the parts, joined: malloc'd, or NULL. The separator is the one dir uses (etl_path_sep:
 * '\\' on Windows after \\?\, where '/' is none), the parts' own '/' included.
 */
static char *join(const char *dir, const char *a, const char *b, const char *c)
{
    size_t n = strlen(dir) + strlen(a) + (b ? strlen(b) : 0) + (c ? strlen(c) : 0) + 2;
    char *p = malloc(n), sep;
    const char *glue = etl_path_sep(dir, &sep);
    if (!p) return NULL;
    int k = snprintf(p, n, "%s%s", dir, glue);
    snprintf(p + k, n - (size_t)k, "%s%s%s", a, b ? b : "", c ? c : "");
    for (char *q = p + k; *q; q++)
        if (*q == '/') *q = sep;
    return p;
}

static int mkdir_ok(const char *path) { return etl_mkdir(path) == 0 || errno == EEXIST ? 0 : -1; }

/* Removes dir/name (a file, or a directory of files); 0 or -1 with errno (ENOENT is success). */
typedef struct rm_ctx {
    const char *dir;
    int err;
    int depth;               /* levels below it that may still be removed */
} rm_ctx;

static int rm_entry(void *ctx, const char *name, bool is_dir);

/*
 * Removes path, a file or a folder with depth levels below it at most (a deeper one is
 * not etlkit's: ENOTEMPTY, nothing of it removed).
 */
static int rm_tree(const char *path, bool is_dir, int depth)
{
    if (!is_dir) return etl_unlink(path) == 0 || errno == ENOENT ? 0 : -1;
    if (depth < 0) {
        errno = ENOTEMPTY;
        return -1;
    }
    rm_ctx r = {path, 0, depth - 1};
    if (etl_dir_each(path, rm_entry, &r) != 0) return errno == ENOENT ? 0 : -1;
    if (r.err) {
        errno = r.err;
        return -1;
    }
    return etl_rmdir(path) == 0 || errno == ENOENT ? 0 : -1;
}

static int rm_entry(void *ctx, const char *name, bool is_dir)
{
    rm_ctx *r = ctx;
    char *p = join(r->dir, name, NULL, NULL);
    if (!p || rm_tree(p, is_dir, r->depth) != 0) r->err = p ? errno : ENOMEM;
    free(p);
    return 0;
}

/* The input's sha256 as hex and its size; -1 with errno. */
static int sha_of(const char *path, char sha[65], uint64_t *size)
{
    uint8_t digest[32];
    if (etl_sha256_file(path, digest, size) != 0) return -1;
    etl_sha256_hex(digest, sha);
    return 0;
}

/* ---- one trace ---------------------------------------------------------------------------- */

typedef struct job {
    const char *path;
    char id[ID_MAX];
    bool done;                /* resume: complete already */
    etl_dataset_trace out;
    etl_diag_keep diag;       /* the reader's diagnostics, as the single export keeps them */
} job;

/* An input's file (dev, ino), and its job: sorted, to tell an input among DS's files. */
typedef struct input_id {
    uint64_t dev, ino;
    const job *j;
} input_id;

typedef struct run {
    const char *dir;
    const fmt *f;
    const etl_dataset_options *o;
    uint32_t tables;          /* the tables the sink writes */
    job *jobs;
    size_t n;
    atomic_size_t next;
    etl_mutex *mu;
    char sig[160];            /* the options that shape the rows (tables, window, bias): a record of others is stale */
} run;

static void on_reader_diag(void *ctx, const etl_diag *d)
{
    etl_diag_keep_add(&((job *)ctx)->diag, d);
}

/* The symbolizer's (a PDB whose llvm-pdbutil was stopped, a folder gone since the check): the first kept. */
static void symbols_diag(void *ctx, const etl_diag *d)
{
    job *j = ctx;
    if (!j->out.symbols_msg[0]) snprintf(j->out.symbols_msg, sizeof j->out.symbols_msg, "%s", d->msg);
}

static void sink_diag(void *ctx, const etl_diag *d)
{
    job *j = ctx;
    if (!j->out.msg[0]) snprintf(j->out.msg, sizeof j->out.msg, "%s", d->msg);
}

/* The model's and the exports' callbacks. */
static void x_row(void *x, const etl_sched_row *r) { etl_export_rows_row(x, r); }
static void x_ready(void *x, const etl_sched_ready *r) { etl_export_rows_ready(x, r); }

static etl_status fail(job *j, etl_status st, const char *fmt_, ...) __attribute__((format(printf, 3, 4)));
static etl_status fail(job *j, etl_status st, const char *fmt_, ...)
{
    if (!j->out.msg[0]) {
        va_list ap;
        va_start(ap, fmt_);
        vsnprintf(j->out.msg, sizeof j->out.msg, fmt_, ap);
        va_end(ap);
    }
    return st;
}

/* Whether name is a partition's file: part-0.<ext>, whatever the format that wrote it. */
static bool is_part(const char *name) { return strncmp(name, "part-0.", 7) == 0 && name[7]; }

typedef struct part_rm {
    const char *dir;
    int err;
} part_rm;

static int rm_part(void *ctx, const char *name, bool is_dir)
{
    part_rm *c = ctx;
    if (is_dir || !is_part(name)) return 0;
    char *p = join(c->dir, name, NULL, NULL);
    if (!p || (etl_unlink(p) != 0 && errno != ENOENT)) c->err = p ? errno : ENOMEM;
    free(p);
    return 0;
}

/*
 * Removes what an earlier run left of the trace: its record first (it is no longer complete), then its
 * partitions' files in every format (a dataset made before formats were checked may hold the other's).
 */
static etl_status forget(run *R, job *j)
{
    char *rec = join(R->dir, "_traces/", j->id, ".json");
    etl_status st = ETL_OK;
    if (!rec) st = fail(j, ETL_E_NOMEM, "out of memory");
    else if (etl_unlink(rec) != 0 && errno != ENOENT)
        st = fail(j, ETL_E_IO, "%s: %s", rec, strerror(errno));
    free(rec);
    const etl_table_def *t = etl_export_tables();
    for (int i = 0; st == ETL_OK && i < ETL_TABLE_COUNT; i++) {
        char sub[256];
        snprintf(sub, sizeof sub, "/trace_id=%s", j->id);
        char *part = join(R->dir, t[i].name, sub, NULL);
        part_rm c = {part, 0};
        if (!part) st = fail(j, ETL_E_NOMEM, "out of memory");
        else if (etl_dir_each(part, rm_part, &c) != 0 && errno != ENOENT)
            st = fail(j, ETL_E_IO, "%s: %s", part, strerror(errno));
        else if (c.err)
            st = fail(j, ETL_E_IO, "%s: %s", part, strerror(c.err));
        /* A partition folder holding files not ours stays, with them. */
        else if (etl_rmdir(part) != 0 && errno != ENOENT && errno != ENOTEMPTY && errno != EEXIST)
            st = fail(j, ETL_E_IO, "%s: %s", part, strerror(errno));
        free(part);
    }
    return st;
}

/* Moves DS/_tmp/<ID>/<table>.<ext> into DS/<table>/trace_id=<ID>/part-0.<ext>. */
static etl_status place(run *R, job *j)
{
    const etl_table_def *t = etl_export_tables();
    char *tmp = join(R->dir, "_tmp/", j->id, NULL);
    if (!tmp) return fail(j, ETL_E_NOMEM, "out of memory");
    etl_status st = ETL_OK;
    for (int i = 0; st == ETL_OK && i < ETL_TABLE_COUNT; i++) {
        if (!(R->tables >> i & 1u)) continue;
        char sub[256], name[64];
        snprintf(sub, sizeof sub, "/trace_id=%s", j->id);
        snprintf(name, sizeof name, "%s.%s", t[i].name, R->f->ext);
        char *part = join(R->dir, t[i].name, sub, NULL);
        char *dst = part ? join(part, "part-0.", R->f->ext, NULL) : NULL;
        char *src = join(tmp, name, NULL, NULL);
        if (!dst || !src) st = fail(j, ETL_E_NOMEM, "out of memory");
        else if (mkdir_ok(part) != 0 || etl_rename(src, dst) != 0)
            st = fail(j, ETL_E_IO, "%s: cannot move the %s table into place: %s", R->dir, t[i].name, strerror(errno));
        free(part);
        free(dst);
        free(src);
    }
    if (st == ETL_OK && etl_rmdir(tmp) != 0) st = fail(j, ETL_E_IO, "%s: %s", tmp, strerror(errno));
    free(tmp);
    return st;
}

typedef struct anomaly {
    const char *key;
    uint64_t v;
} anomaly;

/* The record DS/_traces/<ID>.json, written under a temporary name and renamed (base/outfile.h). */
static etl_status write_record(run *R, job *j, uint64_t size, const char *sha, const anomaly *an, size_t nan,
                               const etl_export_rows_stats *rows)
{
    char *path = join(R->dir, "_traces/", j->id, ".json");
    if (!path) return fail(j, ETL_E_NOMEM, "out of memory");
    etl_outfile of;
    etl_diag d = {0};
    FILE *f = NULL;
    etl_status st = etl_outfile_check(path, &of, &d);
    if (st == ETL_OK) st = etl_outfile_create(&of, &f, &d);
    if (st == ETL_OK) {
        /* The JSON writer escapes strings in a static buffer (out/json.c): one record at a time. */
        etl_mutex_lock(R->mu);
        jw w;
        jw_init(&w, f);
        jw_obj(&w, NULL);
        jw_str(&w, "id", j->id);
        jw_str(&w, "source", j->path);
        jw_u64(&w, "size", size);
        jw_str(&w, "sha256", sha);
        jw_str(&w, "etlkit_version", etl_version());
        jw_str(&w, "format", R->f->name);
        jw_str(&w, "options", R->sig);
        jw_bool(&w, "damaged", j->out.damaged);
        jw_obj(&w, "anomalies");
        for (size_t i = 0; i < nan; i++) jw_u64(&w, an[i].key, an[i].v);
        jw_obj_end(&w);
        jw_u64(&w, "diagnostics_total", j->diag.n + j->diag.more);
        jw_arr(&w, "diagnostics");
        for (unsigned i = 0; i < j->diag.n; i++) {
            jw_obj(&w, NULL);
            jw_u64(&w, "file_offset", j->diag.off[i]);
            jw_str(&w, "message", j->diag.text[i]);
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        jw_obj(&w, "rows");
        const etl_table_def *t = etl_export_tables();
        for (int i = 0; i < ETL_TABLE_COUNT; i++)
            if (R->tables >> i & 1u) jw_u64(&w, t[i].name, rows->rows[i]);
        jw_obj_end(&w);
        jw_obj_end(&w);
        jw_end(&w);
        etl_mutex_unlock(R->mu);
        if (fflush(f) != 0 || ferror(f)) {
            etl_diag_set(&d, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            st = ETL_E_IO;
        }
        if (fclose(f) != 0 && st == ETL_OK) {
            etl_diag_set(&d, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            st = ETL_E_IO;
        }
        if (st == ETL_OK) st = etl_outfile_commit(&of, path, &d);
    }
    etl_outfile_discard(&of);
    free(path);
    return st == ETL_OK ? ETL_OK : fail(j, st, "%s", d.msg);
}

/* Reads the trace into the sink: as cmd_export does for one, without its messages. */
static etl_status export_one(run *R, job *j)
{
    etl_status st;
    uint64_t size = 0;
    char sha[65];
    if (sha_of(j->path, sha, &size) != 0) return fail(j, ETL_E_IO, "%s: %s", j->path, strerror(errno));

    etl_reader_options ro = {sizeof ro, on_reader_diag, j};
    etl_reader *r = NULL;
    etl_diag d = {0};
    st = etl_reader_open(j->path, &ro, &r, &d);
    if (st != ETL_OK) return fail(j, st, "%s: %s", j->path, d.msg[0] ? d.msg : etl_status_str(st));

    char *tmp = join(R->dir, "_tmp/", j->id, NULL);
    void *sink = NULL;
    etl_export_rows *x = NULL;
    etl_symbols *sym = NULL;
    etl_sched_source *src = NULL;
    etl_sched *model = NULL;
    bool sink_made = false;
    fmt_options fo = {.tables = R->o->tables, .trace_id = j->id, .input = j->path, .on_diag = sink_diag,
                      .diag_ctx = j};
    if (!tmp) st = fail(j, ETL_E_NOMEM, "out of memory");
    if (st == ETL_OK && (st = R->f->check(tmp, &fo, &sink, &d)) != ETL_OK) st = fail(j, st, "%s", d.msg);
    if (st == ETL_OK && (st = R->f->create(sink, &d)) != ETL_OK) st = fail(j, st, "%s", d.msg);
    sink_made = st == ETL_OK;
    const etl_clock *clk = etl_reader_clock(r);
    if (st == ETL_OK) {
        /* The stack table's symbol column: the trace's own symbolizer, when it has stacks to name. */
        if (R->o->symbols && (etl_export_profile_logged(r) || etl_sched_stacks_logged(r))) {
            /* the caller checked the path (etl_dataset_options.symbols): a folder gone since is passed over */
            etl_symbols_options yo = {.sz = sizeof yo, .path = R->o->symbols, .lenient = true, .on_diag = symbols_diag,
                                      .diag_ctx = j};
            etl_status yst = etl_symbols_open_with(&yo, &sym, NULL);
            if (yst == ETL_OK) yst = etl_symbols_scan(sym, r);
            if (yst != ETL_OK) st = fail(j, yst, "%s: symbols: %s", j->path, etl_status_str(yst));
        }
        etl_export_rows_options xo = {.sz = sizeof xo, .on_row = R->f->row, .ctx = sink, .tables = R->o->tables, .symbols = sym,
                                      .has_range = R->o->has_range, .v0 = R->o->v0, .v1 = R->o->v1,
                                      .trace_id = j->id, .target = R->f->name};
        etl_sched_source_options so = {.sz = sizeof so, .bias = R->o->bias > 0 ? R->o->bias : -1, .threads = 1};
        if (etl_export_rows_open(clk, &xo, &x) != ETL_OK || etl_sched_source_open(r, &so, &src) != ETL_OK)
            st = fail(j, ETL_E_NOMEM, "%s: out of memory", j->path);
        etl_sched_options mo = {sizeof mo, x_row, x, false, x_ready, r};
        if (st == ETL_OK && etl_sched_open(clk, etl_reader_processors(r), &mo, &model) != ETL_OK)
            st = fail(j, ETL_E_NOMEM, "%s: out of memory", j->path);
        etl_status sst = st == ETL_OK ? etl_export_rows_open_stacks(x, r) : ETL_OK;
        if (sst != ETL_OK) st = fail(j, sst, "%s: the switches' stacks: %s", j->path, etl_status_str(sst));
    }
    etl_stats damage;
    memset(&damage, 0, sizeof damage);
    if (st == ETL_OK) {
        const etl_sched_event *ev;
        while (etl_sched_source_next_ref(src, &ev) == ETL_OK) {
            etl_export_rows_event(x, ev);
            etl_sched_push(model, ev);
        }
        uint64_t end_ts = etl_sched_end_ts(r, etl_sched_source_stats_get(src)->last_ts);
        if (etl_sched_finish(model, end_ts) != ETL_OK)
            st = fail(j, ETL_E_NOMEM, "%s: out of memory: the scheduler model left threads out", j->path);
        etl_sched_source_damage(src, &damage);
        if (st == ETL_OK) st = etl_export_rows_sched_stacks(x); /* a sink's failure: told below */
        if (st == ETL_OK && etl_export_profile_logged(r)) {
            etl_status pst = etl_export_rows_profile(x, r, model);
            if (pst != ETL_OK) st = fail(j, pst, "%s: the profile's tables: %s", j->path, etl_status_str(pst));
        }
        etl_export_rows_end end = {.reader = r, .path = j->path, .model = model,
                                   .source = etl_sched_source_stats_get(src), .damage = &damage, .end_ts = end_ts};
        if (etl_export_rows_finish(x, &end) && st == ETL_OK) st = ETL_E_IO; /* the sink's reason, below */
    }
    if (sink_made && R->f->finish(sink, &d) != ETL_OK) st = fail(j, ETL_E_IO, "%s", d.msg);
    if (sink && R->f->close(sink, st == ETL_OK) != ETL_OK && st == ETL_OK) st = ETL_E_IO; /* told by sink_diag */
    if (st == ETL_E_IO) fail(j, st, "%s: cannot write the dataset", j->path);
    /*
     * What an earlier run left of the trace goes only now, its new export complete beside it;
     * a signal meanwhile waits for the new partitions to be in place (sigclean.h), so that the
     * trace is never left with the tables of two runs, or some of one run's.
     */
    if (st == ETL_OK) {
        etl_sigclean_hold();
        st = forget(R, j);
        if (st == ETL_OK) st = place(R, j);
        etl_sigclean_release();
    }
    if (st == ETL_OK) {
        const etl_logfile_header *h = etl_reader_header(r);
        const etl_sched_stats *m = etl_sched_stats_get(model);
        const etl_sched_source_stats *s = etl_sched_source_stats_get(src);
        /* The counters `etlkit cpu --json` reports as "anomalies", every one, zeros too. */
        const anomaly an[] = {
            {"events_lost", h->events_lost},
            {"buffers_lost", h->buffers_lost},
            {"bad_buffers", damage.bad_buffers},
            {"decompress_errors", damage.decompress_errors},
            {"truncated_buffers", damage.truncated_buffers},
            {"broken_chains", s->broken_chains},
            {"bad_state", s->bad_state},
            {"bad_priority", s->bad_priority},
            {"duplicates_dropped", s->duplicates_dropped},
            {"undecodable", s->undecodable},
            {"cswitch_chain_mismatch", m->cswitch_chain_mismatch},
            {"time_backwards", m->time_backwards},
            {"ready_unmatched", m->ready_unmatched},
            {"unknown_threads", m->unknown_threads},
            {"repeated_starts", m->repeated_starts},
            {"over_limit", m->over_limit},
        };
        /* Damage as the single export's exit status 3 counts it; the session's own loss is not damage. */
        j->out.damaged =
            etl_stats_damaged(&damage) || m->repeated_starts || m->over_limit || etl_export_rows_damaged(x);
        j->out.events_lost = h->events_lost;
        j->out.buffers_lost = h->buffers_lost;
        const etl_export_rows_stats *rs = etl_export_rows_stats_get(x);
        for (int i = 0; i < ETL_TABLE_COUNT; i++) j->out.rows += rs->rows[i];
        st = write_record(R, j, size, sha, an, sizeof an / sizeof an[0], rs);
    }
    etl_sched_close(model);
    etl_sched_source_close(src);
    etl_export_rows_close(x);
    etl_symbols_close(sym);
    etl_reader_close(r);
    free(tmp);
    return st;
}

static void tell(run *R, job *j)
{
    if (!R->o->on_trace) return;
    etl_mutex_lock(R->mu);
    R->o->on_trace(R->o->ctx, &j->out);
    etl_mutex_unlock(R->mu);
}

static void worker(void *p)
{
    run *R = p;
    for (;;) {
        size_t i = atomic_fetch_add(&R->next, 1);
        if (i >= R->n) return;
        job *j = &R->jobs[i];
        if (j->done) continue; /* told before the workers started */
        j->out.status = export_one(R, j);
        etl_diag_keep_free(&j->diag); /* told in its record */
        if (j->out.status != ETL_OK && !j->out.msg[0])
            snprintf(j->out.msg, sizeof j->out.msg, "%s: %s", j->path, etl_status_str(j->out.status));
        /* An earlier export of the ID stays (removed only once a new one is complete): the dataset still has it. */
        if (j->out.status != ETL_OK) {
            char *rec = join(R->dir, "_traces/", j->id, ".json");
            etl_file_info fi;
            j->out.earlier_kept = rec && etl_stat(rec, false, &fi) == 0;
            free(rec);
        }
        tell(R, j);
    }
}

/* ---- resume ------------------------------------------------------------------------------- */

/* Reads a small file whole (NUL-terminated): malloc'd, or NULL with errno. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = etl_fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    char *b = malloc(cap);
    while (b) {
        len += fread(b + len, 1, cap - len - 1, f);
        if (len < cap - 1) break;
        char *nb = realloc(b, cap *= 2);
        if (!nb) free(b);
        b = nb;
    }
    int bad = ferror(f);
    fclose(f);
    if (!b || bad) {
        free(b);
        errno = b ? EIO : ENOMEM;
        return NULL;
    }
    b[len] = 0;
    if (n) *n = len;
    return b;
}

/* A record's field as jw writes it ("key":value, no spaces): where its value starts, or NULL. */
static const char *field(const char *rec, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(rec, k);
    return p ? p + strlen(k) : NULL;
}

/* A record's text field equal to want (jw writes it "key":"value", escaped: only plain values compare equal). */
static bool field_is(const char *rec, const char *key, const char *want)
{
    const char *v = field(rec, key);
    size_t n = strlen(want);
    return v && v[0] == '"' && strncmp(v + 1, want, n) == 0 && v[n + 1] == '"';
}

/*
 * Whether the trace is complete in DS: its record is there, of this format, this etlkit's,
 * made with the same options (tables, window, bias), for a file of the same size and
 * sha256 as the input now (a new recording under an old name is exported again). Another
 * format's record is an error (one dataset, one format).
 */
static int complete(run *R, job *j, etl_diag *diag)
{
    char *path = join(R->dir, "_traces/", j->id, ".json");
    char *rec = path ? slurp(path, NULL) : NULL;
    free(path);
    if (!rec) return 0;
    const char *fmt_ = field(rec, "format"), *sz = field(rec, "size");
    int r = 0;
    etl_file_info fi;
    char sha[65];
    uint64_t size;
    if (fmt_ && !field_is(rec, "format", R->f->name)) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s holds another format than %s (trace %s)", R->dir,
                     R->f->name, j->id);
        r = -1;
    } else if (fmt_ && sz && field_is(rec, "etlkit_version", etl_version()) && field_is(rec, "options", R->sig) &&
               etl_stat(j->path, true, &fi) == 0 && strtoull(sz, NULL, 10) == fi.size &&
               sha_of(j->path, sha, &size) == 0 && size == fi.size && field_is(rec, "sha256", sha)) {
        const char *dmg = field(rec, "damaged");
        j->out.damaged = dmg && strncmp(dmg, "true", 4) == 0;
        r = 1;
    }
    free(rec);
    return r;
}

/* ---- the manifest ------------------------------------------------------------------------- */

typedef struct names {
    char **v;
    size_t n, cap;
    int oom;
} names;

static int collect(void *ctx, const char *name, bool is_dir)
{
    names *s = ctx;
    size_t len = strlen(name);
    if (is_dir || name[0] == '.' || len < 6 || strcmp(name + len - 5, ".json") != 0) return 0;
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 64;
        char **nv = realloc(s->v, nc * sizeof *nv);
        if (!nv) return s->oom = 1;
        s->v = nv;
        s->cap = nc;
    }
    if (!(s->v[s->n] = strdup(name))) return s->oom = 1;
    s->n++;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* DS/_manifest.json: the dataset's format and tables, every record in DS/_traces by ID, this run's failures. */
static etl_status write_manifest(run *R, etl_diag *diag)
{
    char *tdir = join(R->dir, "_traces", NULL, NULL), *path = join(R->dir, "_manifest.json", NULL, NULL);
    names s = {0};
    etl_status st = ETL_OK;
    if (!tdir || !path) st = ETL_E_NOMEM;
    else if (etl_dir_each(tdir, collect, &s) != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", tdir, strerror(errno));
        st = ETL_E_IO;
    } else if (s.oom) st = ETL_E_NOMEM;
    if (st == ETL_E_NOMEM) etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
    if (s.n) qsort(s.v, s.n, sizeof *s.v, by_name);
    etl_outfile of;
    memset(&of, 0, sizeof of);
    FILE *f = NULL;
    if (st == ETL_OK) st = etl_outfile_check(path, &of, diag);
    if (st == ETL_OK) st = etl_outfile_create(&of, &f, diag);
    if (st == ETL_OK) {
        const etl_table_def *t = etl_export_tables();
        fprintf(f, "{\"format\":");
        json_str(f, R->f->name);
        fprintf(f, ",\"layout\":\"<table>/trace_id=<id>/part-0.%s\",\"etlkit_version\":", R->f->ext);
        json_str(f, etl_version());
        fprintf(f, ",\"tables\":[");
        for (int i = 0, k = 0; i < ETL_TABLE_COUNT; i++)
            if (R->tables >> i & 1u) fprintf(f, "%s\"%s\"", k++ ? "," : "", t[i].name);
        fprintf(f, "],\n\"traces\":[\n");
        for (size_t i = 0; st == ETL_OK && i < s.n; i++) {
            char *rp = join(tdir, s.v[i], NULL, NULL);
            size_t n = 0;
            char *rec = rp ? slurp(rp, &n) : NULL;
            if (!rec) {
                etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", rp ? rp : tdir, strerror(errno));
                st = ETL_E_IO;
            } else {
                while (n && (rec[n - 1] == '\n' || rec[n - 1] == '\r')) n--;
                fwrite(rec, 1, n, f);
                fputs(i + 1 < s.n ? ",\n" : "\n", f);
            }
            free(rec);
            free(rp);
        }
        fprintf(f, "],\n\"failed\":[");
        for (size_t i = 0, k = 0; i < R->n; i++) {
            job *j = &R->jobs[i];
            if (j->done || j->out.status == ETL_OK) continue;
            fprintf(f, "%s\n{\"id\":", k++ ? "," : "");
            json_str(f, j->id);
            fprintf(f, ",\"source\":");
            json_str(f, j->path);
            fprintf(f, ",\"error\":");
            json_str(f, j->out.msg);
            fprintf(f, ",\"earlier_export_kept\":%s}", j->out.earlier_kept ? "true" : "false");
        }
        fprintf(f, "]}\n");
        if (fflush(f) != 0 || ferror(f)) {
            if (st == ETL_OK) etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            st = ETL_E_IO;
        }
        if (fclose(f) != 0 && st == ETL_OK) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
            st = ETL_E_IO;
        }
        if (st == ETL_OK) st = etl_outfile_commit(&of, path, diag);
        if (st == ETL_OK && R->o->held) *R->o->held = s.n;
    }
    etl_outfile_discard(&of);
    for (size_t i = 0; i < s.n; i++) free(s.v[i]);
    free(s.v);
    free(tdir);
    free(path);
    return st;
}

/* ---- the run ------------------------------------------------------------------------------ */

/* Removes dir's temporary files of base/outfile.h (".NAME.XXXXXXXX.tmp") that a killed run left. */
typedef struct tmp_ctx {
    const char *dir;
    int err;
} tmp_ctx;

/* Whether name is outfile's temporary of a .json file of ours: ".NAME.json.XXXXXXXX.tmp", 8 hex digits. */
static bool our_tmp(const char *name)
{
    size_t n = strlen(name);
    if (name[0] != '.' || n < 1 + 5 + 1 + 8 + 4 || strcmp(name + n - 4, ".tmp") != 0 || name[n - 13] != '.') return false;
    for (size_t i = n - 12; i < n - 4; i++)
        if (!isxdigit((unsigned char)name[i])) return false;
    return strncmp(name + n - 18, ".json", 5) == 0;
}

static int rm_tmp(void *ctx, const char *name, bool is_dir)
{
    tmp_ctx *c = ctx;
    if (is_dir || !our_tmp(name)) return 0;
    char *p = join(c->dir, name, NULL, NULL);
    if (!p || (etl_unlink(p) != 0 && errno != ENOENT)) c->err = p ? errno : ENOMEM;
    free(p);
    return 0;
}

static int clean_tmp(const char *dir)
{
    tmp_ctx c = {dir, 0};
    if (etl_dir_each(dir, rm_tmp, &c) != 0) return errno == ENOENT ? 0 : -1;
    errno = c.err;
    return c.err ? -1 : 0;
}

static int not_empty(void *ctx, const char *name, bool is_dir)
{
    (void)name, (void)is_dir;
    *(bool *)ctx = false;
    return 0;
}

/* Whether dir holds nothing (a folder that cannot be listed is not empty). */
static bool dir_empty(const char *dir)
{
    bool empty = true;
    return etl_dir_each(dir, not_empty, &empty) == 0 && empty;
}

/* ---- the inputs: never among what the run removes or replaces -------------------------------- */

typedef struct in_check {
    const char *dir;          /* the folder walked (walk_entry) */
    const input_id *ids;
    size_t n;
    int depth;                /* levels below it still walked */
    bool (*only)(const char *name); /* the entries looked at (NULL: all) */
    char *hit;                /* the first file that is an input: malloc'd */
    const job *hit_job;
} in_check;

static int by_id(const void *a, const void *b)
{
    const input_id *x = a, *y = b;
    if (x->dev != y->dev) return x->dev < y->dev ? -1 : 1;
    return x->ino < y->ino ? -1 : x->ino > y->ino;
}

/* Whether path (itself, or what it links to) is an input: remembered in c. */
static bool is_input(in_check *c, const char *path)
{
    etl_file_info fi[2];
    bool have[2] = {etl_stat(path, false, &fi[0]) == 0, false};
    if (have[0] && fi[0].is_link) have[1] = etl_stat(path, true, &fi[1]) == 0;
    for (int k = 0; k < 2 && !c->hit; k++) {
        if (!have[k] || !fi[k].has_id) continue;
        input_id key = {fi[k].dev, fi[k].ino, NULL};
        const input_id *m = bsearch(&key, c->ids, c->n, sizeof key, by_id);
        if (m) {
            c->hit = strdup(path);
            c->hit_job = m->j;
        }
    }
    return c->hit != NULL;
}

static int walk_entry(void *ctx, const char *name, bool is_dir)
{
    in_check *c = ctx;
    if (c->only && !c->only(name)) return 0;
    char *p = join(c->dir, name, NULL, NULL);
    if (!p) return 0;
    if (is_dir && c->depth > 0) {
        in_check sub = *c;
        sub.dir = p;
        sub.depth--;
        etl_dir_each(p, walk_entry, &sub);
        c->hit = sub.hit;
        c->hit_job = sub.hit_job;
    } else if (!is_dir) {
        is_input(c, p);
    }
    free(p);
    return c->hit != NULL;
}

/* dir's entries (down depth levels; only: those names) that are an input. */
static void walk(in_check *c, const char *dir, int depth, bool (*only)(const char *name))
{
    in_check w = *c;
    w.dir = dir;
    w.depth = depth;
    w.only = only;
    if (dir) etl_dir_each(dir, walk_entry, &w);
    c->hit = w.hit;
    c->hit_job = w.hit_job;
}

/*
 * Refuses (ETL_E_INVALID_ARG) an input that is one of the files this run may remove or
 * replace in an existing DS: the staging folder's, the records and their temporaries, the
 * manifest, and the traces' partition files (every table's: an earlier run may have written
 * others), itself or what it links to, whatever its name.
 */
static etl_status inputs_safe(run *R, etl_diag *diag)
{
    input_id *ids = calloc(R->n ? R->n : 1, sizeof *ids);
    if (!ids) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        return ETL_E_NOMEM;
    }
    in_check c = {.ids = ids};
    for (size_t i = 0; i < R->n; i++) {
        etl_file_info fi;
        if (etl_stat(R->jobs[i].path, true, &fi) == 0 && fi.has_id) ids[c.n++] = (input_id){fi.dev, fi.ino, &R->jobs[i]};
    }
    qsort(ids, c.n, sizeof *ids, by_id);
    char *tmp = join(R->dir, "_tmp", NULL, NULL), *tr = join(R->dir, "_traces", NULL, NULL);
    char *man = join(R->dir, "_manifest.json", NULL, NULL);
    walk(&c, tmp, 2, NULL);
    walk(&c, tr, 0, NULL);
    walk(&c, R->dir, 0, our_tmp);
    if (man) is_input(&c, man);
    const etl_table_def *t = etl_export_tables();
    for (size_t i = 0; !c.hit && i < R->n; i++)
        for (int k = 0; !c.hit && k < ETL_TABLE_COUNT; k++) {
            char sub[256];
            snprintf(sub, sizeof sub, "/trace_id=%s", R->jobs[i].id);
            char *part = join(R->dir, t[k].name, sub, NULL);
            if (part) walk(&c, part, 0, is_part); /* forget() removes each, whatever its format */
            free(part);
        }
    free(tmp);
    free(tr);
    free(man);
    free(ids);
    if (!c.hit) return ETL_OK;
    if (strcmp(c.hit, c.hit_job->path) == 0)
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s: the input is a file the dataset would replace or remove; "
                     "nothing written", c.hit);
    else
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s is the input %s: the dataset would replace or remove it; "
                     "nothing written", c.hit, c.hit_job->path);
    free(c.hit);
    return ETL_E_INVALID_ARG;
}

/* The dataset's format as its records and manifest name it: the first other than this run's. */
typedef struct held {
    char *tdir;
    const char *want;
    char format[16];
    char where[ID_MAX + 16];  /* "trace ID" or "_manifest.json" */
    int err;
} held;

/* rec's "format" value (jw's "format":"name"): whether it is another than h->want, remembered in h. */
static bool other_format(held *h, const char *rec, const char *where)
{
    const char *v = field(rec, "format");
    if (!v || *v != '"' || field_is(rec, "format", h->want)) return false;
    size_t n = strcspn(v + 1, "\"\n");
    if (n >= sizeof h->format) n = sizeof h->format - 1;
    memcpy(h->format, v + 1, n);
    h->format[n] = 0;
    snprintf(h->where, sizeof h->where, "%s", where);
    return true;
}

static int held_record(void *ctx, const char *name, bool is_dir)
{
    held *h = ctx;
    size_t len = strlen(name);
    if (is_dir || name[0] == '.' || len < 6 || strcmp(name + len - 5, ".json") != 0) return 0;
    char *p = join(h->tdir, name, NULL, NULL);
    char *rec = p ? slurp(p, NULL) : NULL;
    char where[ID_MAX + 16];
    snprintf(where, sizeof where, "trace %.*s", (int)(len - 5 < ID_MAX ? len - 5 : ID_MAX), name);
    bool hit = rec && other_format(h, rec, where);
    if (!rec && errno != ENOENT) h->err = p ? errno : ENOMEM;
    free(rec);
    free(p);
    return hit || h->err;
}

/*
 * Refuses (ETL_E_INVALID_ARG) a run in another format than the dataset's: one dataset, one format,
 * or a reader of one format misses the other's traces and the manifest's format is wrong for them.
 * The records say it (each trace's), and the manifest (the last run's).
 */
static etl_status same_format(run *R, etl_diag *diag)
{
    held h = {.tdir = join(R->dir, "_traces", NULL, NULL), .want = R->f->name};
    char *man = join(R->dir, "_manifest.json", NULL, NULL);
    etl_status st = ETL_OK;
    if (!h.tdir || !man) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        st = ETL_E_NOMEM;
    } else if (etl_dir_each(h.tdir, held_record, &h) != 0 && errno != ENOENT) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", h.tdir, strerror(errno));
        st = ETL_E_IO;
    } else if (h.err) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", h.tdir, strerror(h.err));
        st = ETL_E_IO;
    } else if (!h.format[0]) {
        char *rec = slurp(man, NULL); /* absent: no run has ended yet */
        if (rec) other_format(&h, rec, "_manifest.json");
        free(rec);
    }
    if (st == ETL_OK && h.format[0]) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s is a %s dataset (%s), not %s: a dataset holds one format; "
                     "export into it with --to %s, or into a new folder", R->dir, h.format, h.where, R->f->name,
                     h.format);
        st = ETL_E_INVALID_ARG;
    }
    free(h.tdir);
    free(man);
    return st;
}

/* DS itself and its folders: refused or made, before any trace is read. */
static etl_status prepare(run *R, etl_diag *diag)
{
    const etl_dataset_options *o = R->o;
    etl_file_info fi;
    if (etl_stat(R->dir, false, &fi) == 0) {
        if (fi.is_link || !fi.is_dir) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: exists and is not a directory%s", R->dir,
                         fi.is_link ? " (a symbolic link)" : "");
            return ETL_E_IO;
        }
        if (!o->resume && !o->force) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: exists (use --resume to complete it, --force to export "
                         "every trace into it again)", R->dir);
            return ETL_E_IO;
        }
        /* Written into only when it is a dataset already, or empty: nothing of anyone else's is removed. */
        char *tr = join(R->dir, "_traces", NULL, NULL);
        etl_file_info ti;
        bool dataset = tr && etl_stat(tr, false, &ti) == 0 && ti.is_dir && !ti.is_link;
        free(tr);
        if (!dataset && !dir_empty(R->dir)) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: exists and is not an etlkit dataset (no _traces folder): "
                         "refused, nothing in it touched", R->dir);
            return ETL_E_IO;
        }
        etl_status ist = dataset ? same_format(R, diag) : ETL_OK;
        if (ist == ETL_OK) ist = inputs_safe(R, diag);
        if (ist != ETL_OK) return ist;
    } else if (errno != ENOENT || etl_mkdir(R->dir) != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", R->dir, strerror(errno));
        return ETL_E_IO;
    }
    /* _tmp holds only what a killed run left: emptied. */
    char *tmp = join(R->dir, "_tmp", NULL, NULL), *tr = join(R->dir, "_traces", NULL, NULL);
    etl_status st = ETL_OK;
    if (!tmp || !tr) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        st = ETL_E_NOMEM;
    } else if (rm_tree(tmp, true, 2) != 0 || mkdir_ok(tmp) != 0 || mkdir_ok(tr) != 0 || clean_tmp(tr) != 0 ||
               clean_tmp(R->dir) != 0) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", R->dir, strerror(errno));
        st = ETL_E_IO;
    }
    const etl_table_def *t = etl_export_tables();
    for (int i = 0; st == ETL_OK && i < ETL_TABLE_COUNT; i++) {
        if (!(R->tables >> i & 1u)) continue;
        char *p = join(R->dir, t[i].name, NULL, NULL);
        if (!p || mkdir_ok(p) != 0) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", p ? p : R->dir, p ? strerror(errno) : "out of memory");
            st = ETL_E_IO;
        }
        free(p);
    }
    free(tmp);
    free(tr);
    return st;
}

etl_status etl_dataset_export(const char *dir, const char *const *inputs, size_t n, const etl_dataset_options *o,
                              etl_dataset_result *res, etl_diag *diag)
{
    memset(res, 0, sizeof *res);
    etl_diag_set(diag, ETL_OK, UINT64_MAX, "%s", "");
    etl_dataset_options opt = {.sz = sizeof opt, .format = "csv"};
    etl_opts_take(&opt, sizeof opt, o);
    o = &opt;
    run R = {.dir = dir, .o = o, .n = n};
    if (!(R.f = fmt_find(o->format ? o->format : "csv"))) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "no dataset format '%s'", o->format ? o->format : "");
        return ETL_E_INVALID_ARG;
    }
    R.tables = (o->tables ? o->tables : (1u << ETL_TABLE_COUNT) - 1) | 1u << ETL_TABLE_TRACE |
               1u << ETL_TABLE_ENUM_NAME;
    int sl = snprintf(R.sig, sizeof R.sig, "tables=%" PRIx32 " bias=%d symbols=%d", R.tables, o->bias > 0 ? o->bias : 0,
                      o->symbols != NULL);
    if (o->has_range) snprintf(R.sig + sl, sizeof R.sig - (size_t)sl, " range=%" PRId64 ",%" PRId64, o->v0, o->v1);
    if (!(R.jobs = calloc(n ? n : 1, sizeof *R.jobs)) || !(R.mu = etl_mutex_new())) {
        free(R.jobs);
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        return ETL_E_NOMEM;
    }
    etl_status st = ETL_OK;
    for (size_t i = 0; i < n; i++) {
        job *j = &R.jobs[i];
        j->path = inputs[i];
        etl_dataset_trace_id(inputs[i], j->id, sizeof j->id);
        j->out = (etl_dataset_trace){.index = i, .path = j->path, .id = j->id};
        /* Two traces, one ID: refused (quadratic, but over command-line arguments). */
        for (size_t k = 0; st == ETL_OK && k < i; k++)
            if (id_cmp(R.jobs[k].id, j->id) == 0) {
                /* One file named twice (the same name, ./a/../a, a link) cannot be renamed apart: say so. */
                etl_file_info a, b;
                if (etl_stat(R.jobs[k].path, true, &a) == 0 && etl_stat(j->path, true, &b) == 0 && a.has_id &&
                    b.has_id && a.dev == b.dev && a.ino == b.ino)
                    etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s and %s are one file, given twice: give it once",
                                 R.jobs[k].path, j->path);
                else if (strcmp(R.jobs[k].id, j->id) == 0)
                    etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX,
                                 "%s and %s have one trace ID, '%s' (the base name): rename one", R.jobs[k].path,
                                 j->path, j->id);
                else
                    etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX,
                                 "%s and %s have one trace ID, '%s' and '%s' (the base names, compared without case, "
                                 "as Windows and macOS compare file names): rename one",
                                 R.jobs[k].path, j->path, R.jobs[k].id, j->id);
                st = ETL_E_INVALID_ARG;
            }
    }
    if (st == ETL_OK) st = prepare(&R, diag);
    for (size_t i = 0; st == ETL_OK && o->resume && i < n; i++) {
        int c = complete(&R, &R.jobs[i], diag);
        if (c < 0) st = ETL_E_INVALID_ARG;
        R.jobs[i].done = c > 0;
    }
    if (st == ETL_OK) {
        for (size_t i = 0; i < n; i++)
            if (R.jobs[i].done) {
                R.jobs[i].out.skipped = true;
                res->skipped++;
                if (R.jobs[i].out.damaged) res->damaged++;
                tell(&R, &R.jobs[i]);
            }
        /*
         * The signal handler is installed by the first registration (sigclean.h): made here, on
         * this thread, before the workers register their files at once.
         */
        etl_sigclean_remove(etl_sigclean_add(dir, true));
        unsigned jobs = o->jobs ? o->jobs : etl_cpu_count();
        if (jobs > n - res->skipped) jobs = (unsigned)(n - res->skipped);
        etl_os_thread **th = jobs > 1 ? calloc(jobs - 1, sizeof *th) : NULL;
        for (unsigned i = 0; th && i + 1 < jobs; i++) th[i] = etl_thread_start(worker, &R); /* NULL: fewer */
        worker(&R);
        for (unsigned i = 0; th && i + 1 < jobs; i++) etl_thread_join(th[i]);
        free(th);
        for (size_t i = 0; i < n; i++) {
            job *j = &R.jobs[i];
            if (j->done) continue;
            if (j->out.status != ETL_OK) res->failed++;
            else res->exported++;
            if (j->out.status == ETL_OK && j->out.damaged) res->damaged++;
        }
        st = write_manifest(&R, diag);
        /* The staging folder, empty unless something failed half way. */
        char *tmp = join(dir, "_tmp", NULL, NULL);
        if (tmp) etl_rmdir(tmp);
        free(tmp);
        if (st == ETL_OK && res->failed) {
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%llu of %llu traces not exported", (unsigned long long)res->failed,
                         (unsigned long long)n);
            st = ETL_E_IO;
        }
    }
    etl_mutex_free(R.mu);
    free(R.jobs);
    return st;
}

/*
 * sqlite.c - the SQLite loader (library etlkit_export, linked with Debian's
 * libsqlite3): tables from schema.c, one prepared INSERT per table, rows in
 * large transactions with the journal and syncs off while loading (the file is a
 * temporary one until the export succeeds, so a crash loses nothing of value),
 * then the indexes and the views (each only when the tables it reads were filled).
 */
#include <errno.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "base/platform.h"
#include "export/schema_internal.h"

#define ROWS_PER_TRANSACTION 1000000u

struct etl_sqlite_sink {
    sqlite3 *db;
    sqlite3_stmt *ins[ETL_TABLE_COUNT];
    uint64_t in_tx;
    int failed;
    char err[256];
    char *made;      /* the path, when the sink made the file: closed without a commit, it goes */
    uint64_t nulled; /* UINT64 values past INT64_MAX stored as NULL: SQLite's INTEGER is signed */
    char nulled_at[64];
};

/* SQLite's message, and the system's reason when a call failed (a full disk, a size limit). */
static void set_err(etl_sqlite_sink *s, const char *msg)
{
    int e = sqlite3_system_errno(s->db);
    if (!e) sqlite3_file_control(s->db, "main", SQLITE_FCNTL_LAST_ERRNO, &e); /* the file's own, kept */
    if (e) snprintf(s->err, sizeof s->err, "%s (%s)", msg, strerror(e));
    else snprintf(s->err, sizeof s->err, "%s", msg);
}

static int exec(etl_sqlite_sink *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    set_err(s, msg ? msg : sqlite3_errmsg(s->db));
    sqlite3_free(msg);
    return -1;
}

static void fail(etl_sqlite_sink *s, char err[256])
{
    if (err) snprintf(err, 256, "%s", s->err[0] ? s->err : sqlite3_errmsg(s->db));
}

/*
 * The tables the export filled, as `trace` lists them (tables.c); all when it does not say
 * (rows from another producer): a view is made only over tables that were filled.
 */
static uint32_t filled_tables(etl_sqlite_sink *s)
{
    uint32_t all = (1u << ETL_TABLE_COUNT) - 1, m = all;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM trace WHERE key = '" ETL_TRACE_KEY_TABLES "'", -1, &st, NULL) ==
            SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        const char *v = (const char *)sqlite3_column_text(st, 0);
        m = etl_export_tables_parse(v);
        if (!m) m = all; /* not a list of ours */
    }
    sqlite3_finalize(st);
    return m;
}

/* Closes the database; a file the sink made and did not commit is removed (no tables of nothing left behind). */
static void close_db(etl_sqlite_sink *s)
{
    for (int i = 0; i < ETL_TABLE_COUNT; i++) sqlite3_finalize(s->ins[i]);
    sqlite3_close(s->db);
    if (s->made) (void)etl_unlink(s->made);
    free(s->made);
    free(s);
}

etl_status etl_sqlite_sink_open(const char *path, etl_sqlite_sink **out, char err[256])
{
    *out = NULL;
    if (!path || !*path) { /* SQLite would make a temporary database: the rows would go nowhere */
        snprintf(err, 256, "no database path");
        return ETL_E_INVALID_ARG;
    }
    etl_sqlite_sink *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, 256, "%s (%s)", etl_status_str(ETL_E_NOMEM), strerror(ENOMEM));
        return ETL_E_NOMEM;
    }
    etl_file_info fi;
    if (etl_stat(path, false, &fi) != 0 && !(s->made = strdup(path))) {
        free(s);
        snprintf(err, 256, "%s (%s)", etl_status_str(ETL_E_NOMEM), strerror(ENOMEM));
        return ETL_E_NOMEM;
    }
    /*
     * A libsqlite3 built with URIs on (SQLITE_USE_URI, as Debian's is) reads a name beginning with "file:" as a
     * URI whatever the flags: "file:d/x.db" would open d/x.db, and the file we were given would stay empty. A
     * relative path is made "./file:...", which SQLite takes as the path it is.
     */
    char *uri_safe = NULL;
    if (strncmp(path, "file:", 5) == 0) {
        size_t n = strlen(path) + 3;
        if (!(uri_safe = malloc(n))) {
            free(s->made);
            free(s);
            snprintf(err, 256, "%s (%s)", etl_status_str(ETL_E_NOMEM), strerror(ENOMEM));
            return ETL_E_NOMEM;
        }
        snprintf(uri_safe, n, "./%s", path);
    }
    int orc = sqlite3_open_v2(uri_safe ? uri_safe : path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    free(uri_safe);
    if (orc != SQLITE_OK) {
        /* No handle, or SQLITE_NOMEM: memory, not the file, failed. */
        bool nomem = !s->db || (orc & 0xff) == SQLITE_NOMEM;
        if (nomem) snprintf(err, 256, "%s (%s)", etl_status_str(ETL_E_NOMEM), strerror(ENOMEM));
        else snprintf(err, 256, "%s: %s", path, sqlite3_errmsg(s->db));
        close_db(s);
        return nomem ? ETL_E_NOMEM : ETL_E_IO;
    }
    /* The load: no journal, no syncs, one writer; 64 MiB of page cache bounds the memory. */
    if (exec(s, "PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
                "PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -65536; PRAGMA temp_store = FILE; PRAGMA threads = 2")) {
        fail(s, err);
        close_db(s);
        return ETL_E_IO;
    }
    const etl_table_def *t = etl_export_tables();
    char sql[4096];
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        size_t n = (size_t)snprintf(sql, sizeof sql, "CREATE TABLE %s (", t[i].name);
        for (unsigned c = 0; c < t[i].ncols; c++)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s%s %s", c ? ", " : "", t[i].cols[c].name, t[i].cols[c].type);
        snprintf(sql + n, sizeof sql - n, ")");
        if (exec(s, sql)) {
            fail(s, err);
            close_db(s);
            return ETL_E_IO;
        }
        n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s VALUES (", t[i].name);
        for (unsigned c = 0; c < t[i].ncols; c++) n += (size_t)snprintf(sql + n, sizeof sql - n, "%s?", c ? ", " : "");
        snprintf(sql + n, sizeof sql - n, ")");
        if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, &s->ins[i], NULL) != SQLITE_OK) {
            fail(s, err);
            close_db(s);
            return ETL_E_IO;
        }
    }
    if (exec(s, "BEGIN")) {
        fail(s, err);
        close_db(s);
        return ETL_E_IO;
    }
    *out = s;
    return ETL_OK;
}

int etl_sqlite_sink_row(void *ctx, etl_table_id table, const etl_value *v)
{
    etl_sqlite_sink *s = ctx;
    if (s->failed) return -1;
    sqlite3_stmt *st = s->ins[table];
    const etl_table_def *t = &etl_export_tables()[table];
    unsigned n = t->ncols;
    for (unsigned c = 0; c < n; c++) {
        int rc;
        bool u64 = (t->cols[c].kind & ETL_COLUMN_TYPE_MASK) == ETL_COLUMN_UINT64;
        if (v[c].kind == ETL_VALUE_INT && u64 && v[c].i < 0) { /* past INT64_MAX: NULL, counted */
            if (!s->nulled++) snprintf(s->nulled_at, sizeof s->nulled_at, "%s.%s", t->name, t->cols[c].name);
            rc = sqlite3_bind_null(st, (int)c + 1);
        } else if (v[c].kind == ETL_VALUE_INT) rc = sqlite3_bind_int64(st, (int)c + 1, v[c].i);
        else if (v[c].kind == ETL_VALUE_TEXT) /* static: stepped before this call returns */
            rc = sqlite3_bind_text(st, (int)c + 1, v[c].s, -1, SQLITE_STATIC);
        else rc = sqlite3_bind_null(st, (int)c + 1);
        if (rc != SQLITE_OK) goto bad;
    }
    if (sqlite3_step(st) != SQLITE_DONE) goto bad;
    sqlite3_reset(st);
    if (++s->in_tx >= ROWS_PER_TRANSACTION) {
        s->in_tx = 0;
        if (exec(s, "COMMIT; BEGIN")) {
            s->failed = 1;
            return -1;
        }
    }
    return 0;
bad:
    set_err(s, sqlite3_errmsg(s->db));
    sqlite3_reset(st);
    s->failed = 1;
    return -1;
}

etl_status etl_sqlite_sink_close(etl_sqlite_sink *s, int commit, char err[256])
{
    if (!s) return ETL_OK;
    etl_status rc = ETL_OK;
    if (commit && !s->failed) {
        const etl_table_def *t = etl_export_tables();
        size_t nv;
        const etl_view_def *v = etl_export_views(&nv);
        int bad = exec(s, "COMMIT");
        for (int i = 0; !bad && i < ETL_TABLE_COUNT; i++)
            for (unsigned k = 0; !bad && t[i].indexes[k]; k++) bad = exec(s, t[i].indexes[k]);
        uint32_t filled = bad ? 0 : filled_tables(s);
        for (size_t i = 0; !bad && i < nv; i++)
            if ((etl_export_view_reads(i) & filled) == etl_export_view_reads(i)) bad = exec(s, v[i].sql);
        /* Statistics for the query planner (sampled: a second on 15 M rows), and the ordinary journal back. */
        if (!bad) bad = exec(s, "PRAGMA analysis_limit = 1000; ANALYZE; PRAGMA journal_mode = DELETE");
        if (bad) rc = ETL_E_IO;
    } else if (commit) {
        rc = ETL_E_IO;
    }
    if (rc != ETL_OK || s->failed) fail(s, err); /* a failed row's reason, committing or not */
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        sqlite3_finalize(s->ins[i]);
        s->ins[i] = NULL;
    }
    if (sqlite3_close(s->db) != SQLITE_OK && rc == ETL_OK) {
        snprintf(err, 256, "%s", sqlite3_errmsg(s->db));
        rc = ETL_E_IO;
    }
    s->db = NULL;
    if (s->made && (!commit || rc != ETL_OK)) (void)etl_unlink(s->made);
    free(s->made);
    free(s);
    return rc;
}

uint64_t etl_sqlite_sink_nulled(const etl_sqlite_sink *s, char where[64])
{
    if (where) snprintf(where, 64, "%s", s && s->nulled ? s->nulled_at : "");
    return s ? s->nulled : 0;
}

/*
 * test_export_csv.c - the CSV sink (export.h, etl_csv_sink_*): the files of the tables
 * asked for, their header rows and RFC 4180 quoting byte for byte, the output
 * rules (a refusal before anything is written, --force over a directory replacing
 * our tables as one, those not written removed, a failure half way undone, and
 * keeping other files; never the input) and an abort leaving nothing behind.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/export.h"

static char root[256]; /* a fresh directory per test */

static int setup(void **state)
{
    (void)state;
    snprintf(root, sizeof root, "/tmp/etlkit-csv-XXXXXX");
    return mkdtemp(root) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    return system(cmd) == 0 ? 0 : -1;
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    static char buf[1 << 16];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    return buf;
}

/* Entries of dir, "." and ".." aside. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    for (struct dirent *e; (e = readdir(d));)
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static void told(void *ctx, const etl_diag *d)
{
    (void)ctx;
    fail_msg("told: %s", d->msg);
}

/* The header row of a table as the schema says: trace_id, then its columns. */
static void want_header(char *out, size_t cap, etl_table_id t)
{
    const etl_table_def *x = &etl_export_tables()[t];
    size_t n = (size_t)snprintf(out, cap, "trace_id");
    for (unsigned k = 0; k < x->ncols; k++) n += (size_t)snprintf(out + n, cap - n, ",%s", x->cols[k].name);
    snprintf(out + n, cap - n, "\r\n");
}

/* A cswitch row: the first columns an integer, a negative one, text that must be quoted, "", NULL. */
static int cswitch_row(etl_csv_sink *c, etl_value *v, unsigned *ncols)
{
    const etl_table_def *x = &etl_export_tables()[ETL_TABLE_CSWITCH];
    *ncols = x->ncols;
    assert_true(x->ncols >= 6);
    for (unsigned k = 0; k < x->ncols; k++) v[k] = (etl_value){.kind = ETL_VALUE_NULL};
    v[0] = (etl_value){.kind = ETL_VALUE_INT, .i = 1234567890123};
    v[1] = (etl_value){.kind = ETL_VALUE_INT, .i = INT64_MIN};
    v[2] = (etl_value){.kind = ETL_VALUE_TEXT, .s = "a,b \"q\"\r\nz"};
    v[3] = (etl_value){.kind = ETL_VALUE_TEXT, .s = ""};
    v[5] = (etl_value){.kind = ETL_VALUE_TEXT, .s = "plain"};
    return etl_csv_sink_row(c, ETL_TABLE_CSWITCH, v);
}

static void test_files_and_quoting(void **state)
{
    (void)state;
    char out[300], path[400], want[4096];
    snprintf(out, sizeof out, "%s/out", root);
    etl_csv_sink_options o = {.sz = sizeof o, .tables = 1u << ETL_TABLE_CSWITCH, .trace_id = "t,1", .on_diag = told};
    etl_csv_sink *c;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_OK);
    assert_int_equal(entries(root), 0); /* a check writes nothing */
    assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
    etl_value v[64];
    unsigned n;
    assert_int_equal(cswitch_row(c, v, &n), 0);
    etl_value t[64];
    for (unsigned k = 0; k < etl_export_tables()[ETL_TABLE_PMC].ncols; k++) t[k] = (etl_value){.kind = ETL_VALUE_INT, .i = 1};
    assert_int_equal(etl_csv_sink_row(c, ETL_TABLE_PMC, t), 0); /* a table not asked for: dropped */
    assert_int_equal(etl_csv_sink_finish(c, &d), ETL_OK);
    assert_int_equal(entries(root), 1); /* only the temporary directory so far */
    assert_int_equal(etl_csv_sink_close(c, true), ETL_OK);

    /* The tables asked for, with trace and enum_name always. */
    assert_int_equal(entries(out), 3);
    snprintf(path, sizeof path, "%s/trace.csv", out);
    want_header(want, sizeof want, ETL_TABLE_TRACE);
    assert_string_equal(slurp(path), want);
    snprintf(path, sizeof path, "%s/enum_name.csv", out);
    want_header(want, sizeof want, ETL_TABLE_ENUM_NAME);
    assert_string_equal(slurp(path), want);
    snprintf(path, sizeof path, "%s/cswitch.csv", out);
    want_header(want, sizeof want, ETL_TABLE_CSWITCH);
    size_t w = strlen(want);
    w += (size_t)snprintf(want + w, sizeof want - w, "\"t,1\",1234567890123,-9223372036854775808,"
                                                     "\"a,b \"\"q\"\"\r\nz\",\"\",,plain");
    for (unsigned k = 6; k < n; k++) want[w++] = ',';
    snprintf(want + w, sizeof want - w, "\r\n");
    assert_string_equal(slurp(path), want);
    assert_int_equal(entries(root), 1); /* renamed into place: nothing else left */
}

/* An abort after rows were written leaves nothing: no OUT, no temporary directory. */
static void test_abort_leaves_nothing(void **state)
{
    (void)state;
    char out[300];
    snprintf(out, sizeof out, "%s/out", root);
    etl_csv_sink_options o = {.sz = sizeof o, .trace_id = "t", .on_diag = told};
    etl_csv_sink *c;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
    assert_int_equal(entries(root), 1);
    etl_value v[64];
    unsigned n;
    assert_int_equal(cswitch_row(c, v, &n), 0);
    assert_int_equal(etl_csv_sink_close(c, false), ETL_OK); /* before finish, too */
    assert_int_equal(entries(root), 0);
    assert_int_equal(etl_csv_sink_close(NULL, false), ETL_OK);
}

/*
 * The options by the ABI rule (base/opts.h): none are every default, and an older, smaller struct gets the
 * defaults past its sz, never the bytes after it (it read them as force, tables and input: UBSan's invalid bool).
 */
static void test_options_abi(void **state)
{
    (void)state;
    char out[300];
    etl_csv_sink *c;
    etl_diag d;
    snprintf(out, sizeof out, "%s/none", root);
    assert_int_equal(etl_csv_sink_check(out, NULL, &c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_close(c, true), ETL_OK);
    assert_int_equal(entries(out), ETL_TABLE_COUNT); /* every table */
    struct {
        etl_csv_sink_options o;
        unsigned char junk[64];
    } old;
    memset(&old, 0x7F, sizeof old);
    old.o.sz = offsetof(etl_csv_sink_options, tables);
    snprintf(out, sizeof out, "%s/old", root);
    assert_int_equal(etl_csv_sink_check(out, &old.o, &c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_close(c, true), ETL_OK);
    assert_int_equal(entries(out), ETL_TABLE_COUNT); /* not the tables 0x7F7F7F7F names */
}

/* An existing OUT: refused without force; with it, our tables replace theirs and other files stay. */
static void test_existing_directory(void **state)
{
    (void)state;
    char out[300], path[400];
    snprintf(out, sizeof out, "%s/out", root);
    assert_int_equal(mkdir(out, 0777), 0);
    snprintf(path, sizeof path, "%s/notes.txt", out);
    FILE *f = fopen(path, "w");
    fputs("mine\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/cswitch.csv", out);
    f = fopen(path, "w");
    fputs("old\n", f);
    fclose(f);

    etl_csv_sink_options o = {.sz = sizeof o, .tables = 1u << ETL_TABLE_CSWITCH, .trace_id = "t", .on_diag = told};
    etl_csv_sink *c = (etl_csv_sink *)&o;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_E_IO);
    assert_null(c);
    assert_true(d.msg[0]);

    o.force = true;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
    etl_value v[64];
    unsigned n;
    assert_int_equal(cswitch_row(c, v, &n), 0);
    assert_int_equal(etl_csv_sink_finish(c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_close(c, true), ETL_OK);
    assert_int_equal(entries(out), 4); /* notes.txt, and trace, cswitch, enum_name */
    snprintf(path, sizeof path, "%s/notes.txt", out);
    assert_string_equal(slurp(path), "mine\n");
    snprintf(path, sizeof path, "%s/cswitch.csv", out);
    assert_non_null(strstr(slurp(path), "\"\",,plain,"));
    assert_int_equal(entries(root), 1); /* the emptied temporary directory is gone */
}

/* The input is never the output, whatever its name (here a symbolic link to it); a file is no directory. */
static void test_input_refused(void **state)
{
    (void)state;
    char in[300], out[300];
    snprintf(in, sizeof in, "%s/in.etl", root);
    snprintf(out, sizeof out, "%s/out", root);
    FILE *f = fopen(in, "w");
    fclose(f);
    assert_int_equal(symlink(in, out), 0);
    etl_csv_sink_options o = {.sz = sizeof o, .force = true, .input = in};
    etl_csv_sink *c;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_E_INVALID_ARG);
    assert_null(c);
    /* -o naming the input: a usage error, as for a file output, before "not a directory". */
    assert_int_equal(etl_csv_sink_check(in, &o, &c, &d), ETL_E_INVALID_ARG);
    assert_null(c);
    assert_int_equal(entries(root), 2);
}

/* ---- --force over an existing directory: its tables replaced as one ---------------------- */

static void put(const char *dir, const char *name, const char *text)
{
    char path[400];
    int n = snprintf(path, sizeof path, "%s/%s", dir, name);
    assert_true(n > 0 && (size_t)n < sizeof path); /* checked: a Release build's -Wformat-truncation */
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

static char told_msg[256];
static void keep_told(void *ctx, const etl_diag *d)
{
    (void)ctx;
    snprintf(told_msg, sizeof told_msg, "%s", d->msg);
}

/* out: an earlier export's 13 tables ("old <table>") and a file of the user's. */
static void old_export(char *out, size_t cap)
{
    snprintf(out, cap, "%s/out", root);
    assert_int_equal(mkdir(out, 0777), 0);
    char name[64], text[80];
    for (int t = 0; t < ETL_TABLE_COUNT; t++) {
        snprintf(name, sizeof name, "%s.csv", etl_export_tables()[t].name);
        snprintf(text, sizeof text, "old %s\n", etl_export_tables()[t].name);
        put(out, name, text);
    }
    put(out, "notes.txt", "mine\n");
}

/* Every old table as it was, but skip (-1: none), and the user's file. */
static void old_intact(const char *out, int skip)
{
    char path[400], text[80];
    for (int t = 0; t < ETL_TABLE_COUNT; t++) {
        if (t == skip) continue;
        snprintf(path, sizeof path, "%s/%s.csv", out, etl_export_tables()[t].name);
        snprintf(text, sizeof text, "old %s\n", etl_export_tables()[t].name);
        const char *got = slurp(path);
        assert_non_null(got);
        assert_string_equal(got, text);
    }
    snprintf(path, sizeof path, "%s/notes.txt", out);
    assert_string_equal(slurp(path), "mine\n");
}

/* With --tables: the tables not written go too, so that OUT holds one export; other files stay. */
static void test_force_one_export(void **state)
{
    (void)state;
    char out[300], path[400];
    old_export(out, sizeof out);
    etl_csv_sink_options o = {.sz = sizeof o, .tables = 1u << ETL_TABLE_CSWITCH, .trace_id = "t", .force = true,
                              .on_diag = told};
    etl_csv_sink *c;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
    assert_int_equal(etl_csv_sink_close(c, true), ETL_OK);
    assert_int_equal(entries(out), 4); /* trace, cswitch, enum_name, notes.txt */
    snprintf(path, sizeof path, "%s/thread.csv", out);
    assert_null(slurp(path));
    snprintf(path, sizeof path, "%s/cswitch.csv", out);
    assert_int_equal(strncmp(slurp(path), "trace_id,", 9), 0); /* ours: the header row */
    snprintf(path, sizeof path, "%s/notes.txt", out);
    assert_string_equal(slurp(path), "mine\n");
    assert_int_equal(entries(root), 1); /* no temporary, no old copy left */
}

/* A directory where a table goes: refused before anything is written. */
static void test_force_directory_refused(void **state)
{
    (void)state;
    char out[300], path[400];
    old_export(out, sizeof out);
    snprintf(path, sizeof path, "%s/pmc.csv", out);
    assert_int_equal(unlink(path), 0);
    assert_int_equal(mkdir(path, 0777), 0);
    etl_csv_sink_options o = {.sz = sizeof o, .trace_id = "t", .force = true, .on_diag = told};
    etl_csv_sink *c;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_E_IO);
    assert_null(c);
    assert_non_null(strstr(d.msg, "pmc.csv"));
    old_intact(out, ETL_TABLE_PMC);
    assert_int_equal(entries(root), 1);
}

/*
 * A rename that fails half way, moving the old tables aside (a directory appeared at
 * slice.csv after the check: trace..cswitch were aside already), or moving ours in (our
 * pmc.csv gone: every old table aside, trace..spinlock of ours in): everything is put
 * back, OUT as it was, and ours removed.
 */
static void test_force_undone(void **state)
{
    (void)state;
    for (int step = 0; step < 2; step++) {
        char out[300], path[700];
        if (step) assert_int_equal(teardown(NULL), 0), assert_int_equal(setup(NULL), 0);
        old_export(out, sizeof out);
        etl_csv_sink_options o = {.sz = sizeof o, .trace_id = "t", .force = true, .on_diag = keep_told};
        etl_csv_sink *c;
        etl_diag d;
        assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_OK);
        assert_int_equal(etl_csv_sink_create(c, &d), ETL_OK);
        assert_int_equal(etl_csv_sink_finish(c, &d), ETL_OK);
        if (step == 0) { /* someone's directory at slice.csv, with a file in it */
            snprintf(path, sizeof path, "%s/slice.csv", out);
            assert_int_equal(unlink(path), 0);
            assert_int_equal(mkdir(path, 0777), 0);
            put(path, "keep.txt", "theirs\n");
        } else { /* our pmc.csv gone from the temporary directory */
            DIR *dir = opendir(root);
            struct dirent *e;
            while ((e = readdir(dir)) && strncmp(e->d_name, ".out.", 5) != 0) continue;
            assert_non_null(e);
            snprintf(path, sizeof path, "%s/%s/pmc.csv", root, e->d_name);
            closedir(dir);
            assert_int_equal(unlink(path), 0);
        }
        told_msg[0] = 0;
        assert_int_equal(etl_csv_sink_close(c, true), ETL_E_IO);
        assert_non_null(strstr(told_msg, step == 0 ? "slice.csv" : "pmc.csv"));
        assert_non_null(strstr(told_msg, "as it was"));
        old_intact(out, step == 0 ? ETL_TABLE_SLICE : -1);
        if (step == 0) {
            snprintf(path, sizeof path, "%s/slice.csv/keep.txt", out);
            assert_string_equal(slurp(path), "theirs\n");
        }
        assert_int_equal(entries(out), ETL_TABLE_COUNT + 1);
        assert_int_equal(entries(root), 1); /* ours removed */
    }
}

/* A table file there that is the input (or links to it), written or removed by --force: refused. */
static void test_force_input_refused(void **state)
{
    (void)state;
    char out[300], in[400], link[400];
    old_export(out, sizeof out);
    snprintf(in, sizeof in, "%s/slice.csv", out);
    etl_csv_sink_options o = {.sz = sizeof o, .trace_id = "t", .force = true, .input = in, .on_diag = told};
    etl_csv_sink *c;
    etl_diag d;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_E_INVALID_ARG);
    assert_null(c);
    /* Through a link to it, and a table this run does not write (it would be removed). */
    snprintf(in, sizeof in, "%s/pmc.csv", out);
    snprintf(link, sizeof link, "%s/in.etl", root);
    assert_int_equal(symlink(in, link), 0);
    o.input = link;
    o.tables = 1u << ETL_TABLE_CSWITCH;
    assert_int_equal(etl_csv_sink_check(out, &o, &c, &d), ETL_E_INVALID_ARG);
    assert_null(c);
    old_intact(out, -1);
    assert_int_equal(entries(root), 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_files_and_quoting, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_leaves_nothing, setup, teardown),
        cmocka_unit_test_setup_teardown(test_existing_directory, setup, teardown),
        cmocka_unit_test_setup_teardown(test_input_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_one_export, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_directory_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_undone, setup, teardown),
        cmocka_unit_test_setup_teardown(test_force_input_refused, setup, teardown),
        cmocka_unit_test_setup_teardown(test_options_abi, setup, teardown),
    };
    return cmocka_run_group_tests_name("export_csv", tests, NULL, NULL);
}

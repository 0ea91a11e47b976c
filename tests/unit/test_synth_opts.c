/*
 * test_synth_opts.c - etl_synth_run and etl_synth_validate read the caller's options by base.h's
 * rule (explore30 F4): an older program's smaller struct, whatever its memory holds past sz, runs
 * with the defaults for the members it does not know; NULL or sz 0 are the defaults. And F6: the
 * summary's events are the file's records less buffer 0's two header records; etl_synth_set with
 * a NULL name says so in diag; on_truth stopping the run is not called an I/O error and leaves no
 * file at the path; a NULL path has a message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"

static char tmpdir[256];

static int setup(void **s)
{
    (void)s;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "synthopts");
}

static int teardown(void **s)
{
    (void)s;
    return tu_tmpdir_remove(tmpdir);
}

/* The whole file, for comparing two runs. */
static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long len = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *p = malloc((size_t)len + 1);
    assert_non_null(p);
    assert_int_equal(fread(p, 1, (size_t)len, f), (size_t)len);
    fclose(f);
    *n = (size_t)len;
    return p;
}

static void same_file(const char *a, const char *b)
{
    size_t na, nb;
    char *pa = slurp(a, &na), *pb = slurp(b, &nb);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    free(pa);
    free(pb);
}

static void test_older_struct(void **s)
{
    (void)s;
    char ref[512], old[512], none[512];
    snprintf(ref, sizeof ref, "%s/ref.etl", tmpdir);
    snprintf(old, sizeof old, "%s/old.etl", tmpdir);
    snprintf(none, sizeof none, "%s/none.etl", tmpdir);
    etl_synth_options d;
    etl_synth_options_init(&d);
    etl_diag g;
    etl_synth_summary sum;
    assert_int_equal(etl_synth_run(ref, &d, &sum, &g), ETL_OK);
    /* A program built before stacks .. modules were appended: its struct ends at stacks; junk after it. */
    etl_synth_options o;
    etl_synth_options_init(&o);
    memset((char *)&o + offsetof(etl_synth_options, stacks), 0xAB, sizeof o - offsetof(etl_synth_options, stacks));
    o.sz = offsetof(etl_synth_options, stacks);
    memset(&g, 0, sizeof g);
    assert_int_equal(etl_synth_validate(&o, &g), ETL_OK);
    assert_int_equal(etl_synth_run(old, &o, &sum, &g), ETL_OK);
    same_file(ref, old);
    /* NULL and sz 0: the defaults. */
    assert_int_equal(etl_synth_validate(NULL, &g), ETL_OK);
    assert_int_equal(etl_synth_run(none, NULL, &sum, &g), ETL_OK);
    same_file(ref, none);
    memset(&o, 0xCD, sizeof o);
    o.sz = 0;
    assert_int_equal(etl_synth_run(none, &o, &sum, &g), ETL_OK);
    same_file(ref, none);
    /* A member the older struct knows is read: its own seed changes the bytes. */
    etl_synth_options_init(&o);
    o.seed = 2;
    o.sz = offsetof(etl_synth_options, stacks);
    assert_int_equal(etl_synth_run(old, &o, &sum, &g), ETL_OK);
    size_t na, nb;
    char *pa = slurp(ref, &na), *pb = slurp(old, &nb);
    assert_true(na != nb || memcmp(pa, pb, na) != 0);
    free(pa);
    free(pb);
}

/* Reads path: its records (every buffer, file order) and whether the reader found damage. */
static uint64_t records(const char *path)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    uint64_t n = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) n++;
    assert_false(etl_stats_damaged(etl_iter_stats_get(it)));
    etl_iter_close(it);
    etl_reader_close(r);
    return n;
}

static int stop_after;
static int stopper(void *ctx, const etl_synth_rec *rec)
{
    (void)ctx, (void)rec;
    return --stop_after < 0;
}

static void test_summary_and_messages(void **s)
{
    (void)s;
    char path[512];
    snprintf(path, sizeof path, "%s/sum.etl", tmpdir);
    etl_synth_options o;
    etl_synth_options_init(&o);
    etl_diag d;
    assert_int_equal(etl_synth_set(&o, "duration", "0.2", &d), ETL_OK);
    etl_synth_summary sum;
    assert_int_equal(etl_synth_run(path, &o, &sum, &d), ETL_OK);
    assert_int_equal(sum.events + 2, records(path)); /* synth.h: less buffer 0's two header records */

    /* etl_synth_set with a NULL name: a message of its own, not the last call's. */
    assert_int_equal(etl_synth_set(&o, "no-such", "1", &d), ETL_E_INVALID_ARG);
    char before[256];
    snprintf(before, sizeof before, "%s", d.msg);
    assert_int_equal(etl_synth_set(&o, NULL, "1", &d), ETL_E_INVALID_ARG);
    assert_true(d.msg[0]);
    assert_string_not_equal(d.msg, before);
    assert_int_equal(etl_synth_set(NULL, "cpus", "1", &d), ETL_E_INVALID_ARG);
    assert_true(d.msg[0]);

    /* A NULL path: a message. */
    memset(&d, 0, sizeof d);
    assert_int_equal(etl_synth_run(NULL, &o, &sum, &d), ETL_E_INVALID_ARG);
    assert_true(d.msg[0]);

    /* on_truth stops the run (a 2 s trace, past its first buffer): ETL_E_IO, not called an I/O error, no file. */
    etl_synth_options_init(&o);
    o.on_truth = stopper;
    stop_after = 20000;
    memset(&d, 0, sizeof d);
    assert_int_equal(etl_synth_run(path, &o, &sum, &d), ETL_E_IO);
    assert_non_null(strstr(d.msg, "on_truth"));
    assert_null(strstr(d.msg, "i/o error"));
    struct stat sb;
    assert_int_not_equal(stat(path, &sb), 0);
    /* The summary's numbers of the file removed are 0, as for nothing written: they were the partial file's. */
    assert_int_equal(sum.bytes, 0);
    assert_int_equal(sum.events, 0);
    assert_int_equal(sum.buffers, 0);
    assert_true(sum.switches > 0); /* the simulation's own, as far as it ran */

#ifndef _WIN32
    /* ... but what the caller named is left when it is not a regular file: the run wrote through a symbolic link
     * (or to a device), and removing the name would lose the caller's link or device node (reviewer71). */
    char target[600];
    snprintf(target, sizeof target, "%s.target", path);
    FILE *t = fopen(target, "wb");
    assert_non_null(t);
    fclose(t);
    assert_int_equal(symlink(target, path), 0);
    stop_after = 20000;
    memset(&d, 0, sizeof d);
    assert_int_equal(etl_synth_run(path, &o, &sum, &d), ETL_E_IO);
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    /* The file written through the link is left: the summary tells its size. */
    assert_int_equal(stat(target, &sb), 0);
    assert_true(sb.st_size > 0);
    assert_int_equal(sum.bytes, (uint64_t)sb.st_size);
    assert_true(sum.events > 0);
    unlink(path);
    unlink(target);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_older_struct),
        cmocka_unit_test(test_summary_and_messages),
    };
    return cmocka_run_group_tests_name("synth_opts", tests, setup, teardown);
}

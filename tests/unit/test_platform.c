/*
 * test_platform.c - the platform layer's answers that differ between POSIX and Windows
 * (src/base/platform.h), on each system (the Windows side under wine: make test-windows):
 * how a name is joined to a directory, when two names are one file, a read-only file
 * removed, environment variables in UTF-8, a stream into memory that cannot be had, an
 * output that another program made while ours was written (never replaced).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifndef _WIN32
#include <dirent.h>
#endif
#include <cmocka.h>
#include "base/outfile.h"
#include "base/platform.h"
#include "testutil.h"
#ifdef _WIN32
#define WIN32_LEAN_AND_MEAN
#include <windows.h>
#endif

static char dir[512]; /* a new directory for the test, the current one while it runs */

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/etlkit-platform-XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(dir) || chdir(dir) != 0) return -1;
    return 0;
}

static void touch(const char *path)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs("x", f);
    fclose(f);
}

/* W7/W11: a name goes below a directory with the separator the directory uses; none after one. */
static void test_path_sep(void **state)
{
    (void)state;
    char sep = 0;
    assert_string_equal(etl_path_sep("out/", &sep), "");
    assert_string_equal(etl_path_sep("a/out", &sep), "/");
    assert_int_equal(sep, '/');
#ifdef _WIN32
    assert_string_equal(etl_path_sep("out", &sep), "\\"); /* none: Windows' own */
    assert_string_equal(etl_path_sep("a\\b/out", &sep), "/"); /* the last one */
    assert_string_equal(etl_path_sep("a/b\\out", &sep), "\\");
    assert_string_equal(etl_path_sep("out\\", &sep), "");
    assert_string_equal(etl_path_sep("C:", &sep), ""); /* C:name is in drive C's current directory */
    /* \\?\ passes the name as it is: '/' is a character there, not a separator */
    assert_string_equal(etl_path_sep("\\\\?\\C:/x/out", &sep), "\\");
    assert_int_equal(sep, '\\');
#else
    assert_string_equal(etl_path_sep("out", &sep), "/");
    assert_string_equal(etl_path_sep("a\\b", &sep), "/"); /* a character of the name */
    assert_string_equal(etl_path_sep("/", &sep), "");
#endif
}

/* W4: two spellings of one output; the names compared as the system compares them. */
static void test_outfile_same(void **state)
{
    (void)state;
    assert_int_equal(etl_mkdir("sub"), 0);
    assert_true(etl_outfile_same("x.etl", "x.etl"));
    assert_true(etl_outfile_same("x.etl", "./x.etl"));
    assert_true(etl_outfile_same("sub/../x.etl", "x.etl"));
    assert_true(etl_outfile_same("sub/x.etl", "./sub/x.etl"));
    assert_false(etl_outfile_same("sub/x.etl", "x.etl"));
    assert_false(etl_outfile_same("x.etl", "y.etl"));
    char abs[600];
    snprintf(abs, sizeof abs, "%s/x.etl", dir);
    assert_true(etl_outfile_same(abs, "x.etl"));
#ifdef _WIN32
    assert_true(etl_name_same("x.etl", "X.ETL"));
    assert_true(etl_name_same("x.etl", "x.etl. ")); /* Windows drops trailing dots and spaces */
    assert_true(etl_name_same("\xc3\xa9.etl", "\xc3\x89.ETL")); /* é, É: NTFS folds beyond ASCII */
    assert_true(etl_outfile_same("x.etl", ".\\X.etl"));
    assert_true(etl_outfile_same("SUB\\x.etl", "sub/x.etl"));
#else
    assert_false(etl_name_same("x.etl", "X.ETL"));
    assert_false(etl_outfile_same("x.etl", "X.ETL"));
    assert_int_equal(symlink(".", "here"), 0);
    assert_true(etl_outfile_same("here/x.etl", "x.etl")); /* the directory by a link: one */
    unlink("here");
#endif
    assert_int_equal(etl_rmdir("sub"), 0);
}

/* The number of entries of the current directory but . and .. */
static int entries(void)
{
    int n = 0;
#ifdef _WIN32
    WIN32_FIND_DATAA fd;
    HANDLE h = FindFirstFileA("*", &fd);
    if (h == INVALID_HANDLE_VALUE) return 0;
    do n += strcmp(fd.cFileName, ".") && strcmp(fd.cFileName, "..");
    while (FindNextFileA(h, &fd));
    FindClose(h);
#else
    DIR *d = opendir(".");
    assert_non_null(d);
    for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
#endif
    return n;
}

/*
 * An output that was not there at the check, and that another program made while ours was written, a file
 * or a directory, stays as it is: the commit fails (what --force consented to replace was what was there),
 * says so, and our temporary goes. Before, the rename replaced it, exit 0.
 */
static void test_outfile_appeared(void **state)
{
    (void)state;
    etl_outfile of;
    etl_diag d = {0};
    assert_int_equal(etl_outfile_check("out.bin", &of, &d), ETL_OK);
    assert_int_equal(etl_outfile_may_replace(&of, "out.bin", true, NULL, &d), ETL_OK);
    FILE *f = NULL;
    assert_int_equal(etl_outfile_create(&of, &f, &d), ETL_OK);
    fputs("ours", f);
    fclose(f);
    touch("out.bin"); /* theirs: "x" */
    assert_int_equal(etl_outfile_commit(&of, "out.bin", &d), ETL_E_IO);
    assert_non_null(strstr(d.msg, "another program"));
    etl_outfile_discard(&of);
    f = fopen("out.bin", "rb");
    assert_non_null(f);
    char buf[8] = {0};
    assert_int_equal(fread(buf, 1, sizeof buf, f), 1);
    fclose(f);
    assert_string_equal(buf, "x");
    assert_int_equal(entries(), 1); /* our temporary gone */
    assert_int_equal(etl_unlink("out.bin"), 0);

    /* A directory output (export --to csv): one made meanwhile stays, empty, ours gone. */
    memset(&d, 0, sizeof d);
    assert_int_equal(etl_outfile_check_dir("tables", &of, &d), ETL_OK);
    assert_int_equal(etl_outfile_create_dir(&of, &d), ETL_OK);
    assert_int_equal(etl_mkdir("tables"), 0);
    assert_int_equal(etl_outfile_commit(&of, "tables", &d), ETL_E_IO);
    etl_outfile_discard(&of);
    assert_int_equal(entries(), 1);
    assert_int_equal(etl_rmdir("tables"), 0);

    /* Nothing there at the commit either: ours goes into place. */
    assert_int_equal(etl_outfile_check("out.bin", &of, &d), ETL_OK);
    assert_int_equal(etl_outfile_create(&of, &f, &d), ETL_OK);
    fputs("ours", f);
    fclose(f);
    assert_int_equal(etl_outfile_commit(&of, "out.bin", &d), ETL_OK);
    etl_outfile_discard(&of);
    assert_int_equal(entries(), 1);
    assert_int_equal(etl_unlink("out.bin"), 0);
}

/* W6: a read-only file goes as POSIX unlink removes it (Windows refused it: the old table stayed). */
static void test_unlink_read_only(void **state)
{
    (void)state;
    touch("ro.txt");
    assert_int_equal(chmod("ro.txt", 0444), 0);
    assert_int_equal(etl_unlink("ro.txt"), 0);
    etl_file_info fi;
    assert_int_equal(etl_stat("ro.txt", false, &fi), -1);
    assert_int_equal(errno, ENOENT);
    assert_int_equal(etl_unlink("ro.txt"), -1);
    assert_int_equal(errno, ENOENT);
}

/* W3: a variable's value in UTF-8, whatever the ANSI code page (msvcrt's getenv gave é as 0xE9, 日本 as ??). */
static void test_getenv_utf8(void **state)
{
    (void)state;
    const char *want = "/tmp/\xc3\xa9\xe6\x97\xa5\xe6\x9c\xac"; /* /tmp/é日本 */
#ifdef _WIN32
    assert_true(SetEnvironmentVariableW(L"ETLKIT_TEST_ENV", L"/tmp/\u00e9\u65e5\u672c"));
#else
    assert_int_equal(setenv("ETLKIT_TEST_ENV", want, 1), 0);
#endif
    const char *v = etl_getenv("ETLKIT_TEST_ENV");
    assert_non_null(v);
    assert_string_equal(v, want);
    assert_ptr_equal(etl_getenv("ETLKIT_TEST_ENV"), v); /* kept: the same value, the same string */
    /* Changed: the new value; the old string still valid (the life of the process). */
    assert_int_equal(setenv("ETLKIT_TEST_ENV", "two", 1), 0);
    assert_string_equal(etl_getenv("ETLKIT_TEST_ENV"), "two");
    assert_string_equal(v, want);
    assert_int_equal(unsetenv("ETLKIT_TEST_ENV"), 0);
    assert_null(etl_getenv("ETLKIT_TEST_ENV"));
    assert_null(etl_getenv("ETLKIT_TEST_NEVER_SET"));
}

/*
 * W2: a stream into memory is a temporary file in TMPDIR on Windows: one that cannot be made
 * is NULL with errno and the folder to name (report said nothing and wrote a page without its
 * data); POSIX needs no folder.
 */
static void test_memstream_no_tmpdir(void **state)
{
    (void)state;
    char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    assert_int_equal(setenv("TMPDIR", "no-such-dir", 1), 0);
    char *buf = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &buf, &n);
#ifdef _WIN32
    assert_null(f);
    assert_int_equal(errno, ENOENT);
    assert_non_null(ms.dir);
    assert_string_equal(ms.dir, "no-such-dir");
#else
    assert_non_null(f);
    assert_null(ms.dir);
    fputs("page data", f);
    assert_int_equal(etl_memstream_close(&ms), 0);
    assert_string_equal(buf, "page data");
    assert_int_equal(n, 9);
    free(buf);
#endif
    /* A folder that is there: the bytes back, on both. */
    assert_int_equal(setenv("TMPDIR", ".", 1), 0);
    f = etl_memstream_open(&ms, &buf, &n);
    assert_non_null(f);
    fputs("page data", f);
    assert_int_equal(etl_memstream_close(&ms), 0);
    assert_string_equal(buf, "page data");
    assert_int_equal(n, 9);
    free(buf);
    if (old) setenv("TMPDIR", old, 1);
    else unsetenv("TMPDIR");
    free(old);
}

static int teardown(void **state)
{
    (void)state;
    if (chdir("/") != 0) return -1;
    return etl_rmdir(dir) == 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_path_sep),
        cmocka_unit_test(test_outfile_same),
        cmocka_unit_test(test_outfile_appeared),
        cmocka_unit_test(test_unlink_read_only),
        cmocka_unit_test(test_getenv_utf8),
        cmocka_unit_test(test_memstream_no_tmpdir),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

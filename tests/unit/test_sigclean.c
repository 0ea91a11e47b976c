/*
 * test_sigclean.c - the signal cleanup's held sections (sigclean.h, etl_sigclean_hold): a
 * SIGTERM that comes inside one ends the process only at the release, its registered
 * temporary removed then; sections nest; outside one the signal ends the run at once, as
 * before. A mapped file cut short under a read (SIGBUS) removes them too. Each case runs in a
 * child process (fork), which the signal ends: Linux's.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "testutil.h"
#include "base/sigclean.h"

#ifndef _WIN32
#include <signal.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[256];

static int setup(void **state)
{
    (void)state;
    return tu_tmpdir_make(root, sizeof root, "sigclean");
}

static int teardown(void **state)
{
    (void)state;
    return tu_tmpdir_remove(root);
}

static int there(const char *name)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", root, name);
    struct stat st;
    return stat(p, &st) == 0;
}

static void touch(const char *name)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", root, name);
    FILE *f = fopen(p, "w");
    if (f) fclose(f);
}

/*
 * In a child: "tmp" registered, `holds` sections entered, SIGTERM sent to itself, then the
 * sections left one by one, a mark ("in0", "in1", ...) made before each release and "after"
 * once all are left. The child's end: its status.
 */
static int run(int holds)
{
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGTERM, SIG_DFL);
        char p[400];
        snprintf(p, sizeof p, "%s/tmp", root);
        touch("tmp");
        etl_sigclean_add(p, false);
        for (int i = 0; i < holds; i++) etl_sigclean_hold();
        kill(getpid(), SIGTERM);
        for (int i = holds; i-- > 0;) {
            char mark[16];
            snprintf(mark, sizeof mark, "in%d", i);
            touch(mark);
            etl_sigclean_release();
        }
        touch("after");
        _exit(0);
    }
    int status = 0;
    assert_true(pid > 0);
    assert_int_equal(waitpid(pid, &status, 0), pid);
    return status;
}

/* Outside a section: the end at once, the temporary removed (as before sections existed). */
static void test_no_section(void **state)
{
    (void)state;
    int st = run(0);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    assert_false(there("tmp"));
    assert_false(there("after"));
}

/* Inside one: the section runs to its release, then the end, the temporary removed. */
static void test_section_finishes(void **state)
{
    (void)state;
    int st = run(1);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    assert_true(there("in0"));
    assert_false(there("after"));
    assert_false(there("tmp"));
}

/* Nested: the end waits for the outer release. */
static void test_nested(void **state)
{
    (void)state;
    int st = run(2);
    assert_true(WIFSIGNALED(st));
    assert_int_equal(WTERMSIG(st), SIGTERM);
    assert_true(there("in1"));
    assert_true(there("in0"));
    assert_false(there("after"));
    assert_false(there("tmp"));
}

/*
 * The input cut short while mapped (export of a log being rotated): the read faults, SIGBUS ends the
 * process, and the temporary goes with it, in a held section too (a fault cannot wait). It stayed.
 */
static void test_sigbus(void **state)
{
    (void)state;
    for (int holds = 0; holds < 2; holds++) {
        fflush(NULL);
        pid_t pid = fork();
        if (pid == 0) {
            signal(SIGBUS, SIG_DFL); /* cmocka's handler otherwise: the first registration installs ours */
            char p[400], in[400];
            snprintf(p, sizeof p, "%s/tmp", root);
            snprintf(in, sizeof in, "%s/input", root);
            touch("tmp");
            etl_sigclean_add(p, false);
            int fd = open(in, O_RDWR | O_CREAT | O_TRUNC, 0600);
            long page = sysconf(_SC_PAGESIZE);
            if (fd < 0 || ftruncate(fd, 4 * page) != 0) _exit(3);
            volatile const char *m = mmap(NULL, (size_t)(4 * page), PROT_READ, MAP_SHARED, fd, 0);
            if (m == MAP_FAILED || ftruncate(fd, page) != 0) _exit(4);
            if (holds) etl_sigclean_hold();
            char c = m[3 * page]; /* past the end now */
            (void)c;
            touch("after");
            _exit(0);
        }
        int status = 0;
        assert_true(pid > 0);
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFSIGNALED(status));
        assert_int_equal(WTERMSIG(status), SIGBUS);
        assert_false(there("after"));
        assert_false(there("tmp"));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_sigbus, setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_section, setup, teardown),
        cmocka_unit_test_setup_teardown(test_section_finishes, setup, teardown),
        cmocka_unit_test_setup_teardown(test_nested, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void test_skipped(void **state)
{
    (void)state;
    skip(); /* fork and kill: Linux's; Windows' console handler waits for the section instead */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_skipped)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif

/*
 * test_threads.c - base/platform's threads: etl_call_once runs its function once however
 * many threads race to it, and every caller returns only once it has (its writes seen);
 * a thread from etl_thread_start blocks the signals a user sends and keeps those its
 * own calls raise, leaving the caller's mask as it was (POSIX).
 */
#include <signal.h>
#include <stdatomic.h>
#include "testutil.h"
#include "base/platform.h"

#define RACERS 6

static etl_once_flag once = ETL_ONCE_INIT;
static atomic_int once_calls;
static atomic_int gate;
static int once_value; /* written by the once function alone: callers read it unguarded */

static void once_init(void)
{
    atomic_fetch_add(&once_calls, 1);
    /* Long enough that the other racers arrive while it runs. */
    for (volatile unsigned i = 0; i < 2000000; i++) {
    }
    once_value = 42;
}

typedef struct racer {
    int seen;
} racer;

static void race(void *arg)
{
    racer *r = arg;
    atomic_fetch_add(&gate, 1);
    while (atomic_load(&gate) < RACERS) {
    }
    etl_call_once(&once, once_init);
    r->seen = once_value;
}

static void test_call_once(void **state)
{
    (void)state;
    racer rs[RACERS] = {{0}};
    etl_os_thread *t[RACERS] = {0};
    for (unsigned i = 1; i < RACERS; i++) {
        t[i] = etl_thread_start(race, &rs[i]);
        assert_non_null(t[i]);
    }
    race(&rs[0]);
    for (unsigned i = 1; i < RACERS; i++) etl_thread_join(t[i]);
    assert_int_equal(atomic_load(&once_calls), 1);
    for (unsigned i = 0; i < RACERS; i++) assert_int_equal(rs[i].seen, 42);
    etl_call_once(&once, once_init); /* later: returns at once, runs nothing */
    assert_int_equal(atomic_load(&once_calls), 1);
}

#ifndef _WIN32
/* The mask of the calling thread (sigprocmask reads the calling thread's on Linux). */
static sigset_t mask_now(void)
{
    sigset_t s;
    sigemptyset(&s);
    sigprocmask(SIG_BLOCK, NULL, &s);
    return s;
}

static void read_mask(void *arg) { *(sigset_t *)arg = mask_now(); }

static void test_thread_signals(void **state)
{
    (void)state;
    sigset_t before = mask_now(), in_thread;
    etl_os_thread *t = etl_thread_start(read_mask, &in_thread);
    assert_non_null(t);
    etl_thread_join(t);
    sigset_t after = mask_now();
    static const int user[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGALRM};
    static const int own[] = {SIGXFSZ, SIGPIPE, SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof user / sizeof user[0]; i++) assert_true(sigismember(&in_thread, user[i]));
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) assert_false(sigismember(&in_thread, own[i]));
    for (int sig = 1; sig < 32; sig++) assert_int_equal(sigismember(&before, sig), sigismember(&after, sig));
}
#endif

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_call_once),
#ifndef _WIN32
        cmocka_unit_test(test_thread_signals),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

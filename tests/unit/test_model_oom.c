/*
 * test_model_oom.c - a model whose allocation failed says so: etl_sched_status and
 * etl_sched_finish return ETL_E_NOMEM, and the aggregations over it (etl_usage,
 * etl_wakeups) refuse to finish, so no report prints an answer with threads left out
 * uncounted. The allocation failure is real: a child process under an address-space
 * limit pushes Thread Starts of distinct TIDs until the model cannot grow. Skipped under
 * the sanitizers, which reserve terabytes of address space.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/sched.h"
#include "etlkit/usage.h"
#include "etlkit/wakeups.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif

#ifndef SANITIZED
/* The child's checks, as its exit status: 0 all held, 10 + n the nth failed, 77 the limit never bit. */
static int child(void)
{
    static etl_clock c;
    c.ticks_per_sec = 10000000;
    etl_sched *m;
    if (etl_sched_open(&c, 2, NULL, &m) != ETL_OK) return 11;
    etl_usage u;
    etl_usage_options uo = {.sz = sizeof uo};
    if (etl_usage_init(&u, m, &uo) != ETL_OK) return 12;
    etl_wakeups w;
    etl_wakeups_options wo = {.sz = sizeof wo};
    if (etl_wakeups_init(&w, m, &wo) != ETL_OK) return 13;
    /* About 40 MB past what is mapped now: the model's doubled arrays for a million threads need more. */
    struct rlimit rl;
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!f || fscanf(f, "%lu", &pages) != 1) return 14;
    fclose(f);
    rl.rlim_cur = rl.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (40u << 20);
    if (setrlimit(RLIMIT_AS, &rl) != 0) return 15;
    for (uint32_t tid = 4; tid < 4 * ETL_SCHED_MAX_INSTANCES && etl_sched_status(m) == ETL_OK; tid += 4) {
        etl_sched_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = ETL_SCHED_THREAD;
        ev.hook = ETL_HOOK_THREAD_START;
        ev.ts = tid;
        ev.u.thread.known = ETL_THR_IDS;
        ev.u.thread.thread_id = tid;
        ev.u.thread.process_id = 4;
        etl_sched_push(m, &ev);
    }
    if (etl_sched_status(m) == ETL_OK) return 77;
    if (etl_sched_finish(m, 1u << 30) != ETL_E_NOMEM) return 16;
    if (etl_usage_finish(&u, 100) != ETL_E_NOMEM) return 17;
    if (etl_wakeups_finish(&w) != ETL_E_NOMEM) return 18;
    return 0;
}
#endif

static void test_model_oom_is_an_error(void **state)
{
    (void)state;
#ifdef SANITIZED
    skip();
#else
    fflush(NULL);
    pid_t p = fork();
    assert_true(p >= 0);
    if (p == 0) _exit(child());
    int st;
    assert_int_equal(waitpid(p, &st, 0), p);
    assert_true(WIFEXITED(st));
    if (WEXITSTATUS(st) == 77) skip(); /* the limit never bit: nothing to check */
    assert_int_equal(WEXITSTATUS(st), 0);
#endif
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_model_oom_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

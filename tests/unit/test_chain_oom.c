/*
 * test_chain_oom.c - a wait chain whose allocations fail one after another (explore17 F9): each
 * run either is the chain of a run without failure (nodes, segments, critical path and its totals,
 * passes) or fails with ETL_E_NOMEM, never a chain with a wait turned "unknown" or its descent
 * gone. chain.c is compiled in here with allocators that fail at the Nth call of its own, so the
 * failure is real, at each of the chain's allocations in turn (push_seg, path_add, add_node,
 * add_request...).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

static long fail_at = -1, calls;
static void *t_malloc(size_t n) { return ++calls == fail_at ? NULL : malloc(n); }
static void *t_calloc(size_t a, size_t b) { return ++calls == fail_at ? NULL : calloc(a, b); }
static void *t_realloc(void *p, size_t n) { return ++calls == fail_at ? NULL : realloc(p, n); }
#define malloc t_malloc
#define calloc t_calloc
#define realloc t_realloc
#include "sched/chain.c"
#undef malloc
#undef calloc
#undef realloc

#include "etlkit/synth.h"
#include "synthtruth.h"

static char path[512];
static etl_reader *R;
static uint32_t client; /* a thread that waits on WrLpcReply: its chain descends into the server */

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/etlkit-chain-oom-%d.etl", dir && *dir ? dir : "/tmp", (int)getpid());
    etl_synth_options o;
    etl_synth_options_init(&o);
    const char *kv[][2] = {{"seed", "4"}, {"cpus", "2"}, {"threads", "40"}, {"processes", "8"}, {"duration", "0.4"},
                           {"load", "70"}, {"churn", "20"}};
    etl_diag d;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (etl_synth_set(&o, kv[i][0], kv[i][1], &d) != ETL_OK) return -1;
    st_truth t;
    st_run(path, &o, &t);
    for (size_t i = 0; i < t.nsw && !client; i++)
        if (t.sw[i].old_state == 5 && strcmp(etl_wait_reason_name(t.sw[i].old_wait_reason), "WrLpcReply") == 0)
            client = t.sw[i].old_tid;
    st_free(&t);
    return etl_reader_open(path, NULL, &R, &d) == ETL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    etl_reader_close(R);
    unlink(path);
    return 0;
}

/* What a chain says, as one comparable value. */
typedef struct shape {
    etl_status st;
    etl_chain_status status;
    unsigned passes;
    size_t nnodes, nsegs, npath;
    int64_t totals[6];
    int64_t path_ns, unknown_segs;
} shape;

static shape chain_of(void)
{
    etl_chain c;
    etl_chain_options o = {.sz = sizeof o, .tid = client, .min_ns = -1};
    shape s;
    memset(&s, 0, sizeof s);
    s.st = etl_chain_init(&c, &o);
    if (s.st == ETL_OK) s.st = etl_chain_run(R, &c, -1, NULL);
    if (s.st == ETL_OK) {
        s.status = c.status;
        s.passes = c.passes;
        s.nnodes = c.nnodes;
        s.nsegs = c.nsegs;
        s.npath = c.npath;
        memcpy(s.totals, c.totals, sizeof s.totals);
        for (size_t i = 0; i < c.npath; i++) s.path_ns += c.path[i].ns;
        for (size_t i = 0; i < c.nsegs; i++) s.unknown_segs += c.segs[i].state == ETL_CHAIN_UNKNOWN;
    }
    etl_chain_free(&c);
    return s;
}

static void test_chain_allocations_fail(void **state)
{
    (void)state;
    fail_at = -1;
    calls = 0;
    shape want = chain_of();
    assert_int_equal(want.st, ETL_OK);
    assert_int_equal(want.status, ETL_CHAIN_OK);
    assert_true(want.nnodes > 1); /* a descent, so that every kind of allocation is met */
    long total = calls, failed = 0;
    assert_true(total > 4);
    for (long n = 1; n <= total; n++) {
        fail_at = n;
        calls = 0;
        shape got = chain_of();
        if (got.st != ETL_OK) {
            if (got.st != ETL_E_NOMEM) fail_msg("allocation %ld of %ld: status %d", n, total, (int)got.st);
            failed++;
            continue;
        }
        if (memcmp(&got, &want, sizeof got) != 0)
            fail_msg("allocation %ld of %ld failed: ETL_OK with another chain (%zu nodes, %zu segments, %zu on the "
                     "path, %lld unknown; want %zu, %zu, %zu, %lld)",
                     n, total, got.nnodes, got.nsegs, got.npath, (long long)got.unknown_segs, want.nnodes, want.nsegs,
                     want.npath, (long long)want.unknown_segs);
    }
    fail_at = -1;
    assert_true(failed > 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_chain_allocations_fail)};
    return cmocka_run_group_tests(tests, setup, teardown);
}

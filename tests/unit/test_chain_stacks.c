/*
 * test_chain_stacks.c - a wait chain's stacks from a table that keeps its events only.
 *
 * waitchain showed the stacks of a few waits from a table of every walked CSwitch and
 * ReadyThread of the trace (1.7 GB on a 1 GB trace: explore29 F1). The chain now lists
 * the events it looks up (etl_chain_stack_events) and the table keeps those alone
 * (etl_sched_stacks_build_only). On a synthesized trace with stacks: every stack the
 * chain shows is the one the whole table gives, the walks are counted as before, and
 * the events the chain does not show have none. The same for a table of one kind
 * (etl_sched_stacks_build_kind: waits --by stack, --by readying-stack).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"
#include "etlkit/schedstacks.h"
#include "etlkit/waitchain.h"
#include "synthtruth.h"

static char dir[512], path[600];
static st_truth T;
static etl_reader *R;

static int setup(void **state)
{
    (void)state;
    if (tu_tmpdir_make(dir, sizeof dir, "chain-stacks") != 0) return -1;
    snprintf(path, sizeof path, "%s/chain.etl", dir);
    etl_synth_options o;
    etl_synth_options_init(&o);
    const char *kv[][2] = {{"seed", "5"}, {"cpus", "2"}, {"threads", "30"}, {"processes", "6"}, {"duration", "0.3"},
                           {"stacks", NULL}, {"stack-form", "both"}};
    etl_diag d;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (etl_synth_set(&o, kv[i][0], kv[i][1], &d) != ETL_OK) {
            fprintf(stderr, "synth %s: %s\n", kv[i][0], d.msg);
            return -1;
        }
    st_run(path, &o, &T);
    return etl_reader_open(path, NULL, &R, &d) == ETL_OK ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    etl_reader_close(R);
    st_free(&T);
    return tu_tmpdir_remove(dir);
}

/* The frames of stack id in s, as one comparable string. */
static void frames_of(etl_sched_stacks *s, uint32_t id, char *out, size_t cap)
{
    out[0] = 0;
    if (id == ETL_SCHED_STACK_NONE) return;
    uint32_t n;
    const etl_profile_frame *f = etl_sched_stacks_frames(s, id, &n);
    size_t k = 0;
    for (uint32_t i = 0; i < n && k + 48 < cap; i++)
        k += (size_t)snprintf(out + k, cap - k, "%llx:%u;", (unsigned long long)f[i].address, f[i].image);
}

static void test_only_the_chain(void **state)
{
    (void)state;
    /* A thread that waited (state 5), its longest gap, any wait descended into. */
    uint32_t tid = 0;
    for (size_t i = 0; i < T.nsw && !tid; i++)
        if (T.sw[i].old_state == 5 && T.sw[i].old_tid) tid = T.sw[i].old_tid;
    assert_true(tid != 0);
    etl_chain c;
    etl_chain_options o = {.sz = sizeof o, .tid = tid, .min_ns = -1};
    assert_int_equal(etl_chain_init(&c, &o), ETL_OK);
    assert_int_equal(etl_chain_run(R, &c, -1, NULL), ETL_OK);
    assert_int_equal(c.status, ETL_CHAIN_OK);

    etl_sched_stacks_event *want;
    size_t nwant;
    assert_int_equal(etl_chain_stack_events(&c, &want, &nwant), ETL_OK);
    assert_true(nwant > 0);
    etl_sched_stacks *all, *only, *none;
    assert_int_equal(etl_sched_stacks_build_threads(R, 1, &all), ETL_OK);
    assert_int_equal(etl_sched_stacks_build_only(R, 2, want, nwant, &only), ETL_OK);
    assert_int_equal(etl_sched_stacks_build_only(R, 1, want, 0, &none), ETL_OK);

    /* The walks are attached and counted as before; only the stacks kept differ. */
    const etl_sched_stacks_stats *sa = etl_sched_stacks_stats_get(all), *so = etl_sched_stacks_stats_get(only);
    assert_int_equal(sa->cswitch_events, so->cswitch_events);
    assert_int_equal(sa->cswitch_walked, so->cswitch_walked);
    assert_int_equal(sa->ready_walked, so->ready_walked);
    assert_true(sa->cswitch_walked > 100);
    assert_true(so->stacks <= nwant);
    assert_true(sa->stacks > so->stacks);
    assert_int_equal(etl_sched_stacks_stats_get(none)->stacks, 0);

    /* Every stack the chain shows is the whole table's. */
    unsigned shown = 0;
    char fa[8192], fo[8192];
    for (size_t k = 0; k < c.nnodes; k++) {
        const etl_chain_node *n = &c.nodes[k];
        for (uint32_t i = n->first; i < n->first + n->count; i++) {
            uint32_t ids[2][2] = {{etl_chain_blocking_stack(&c, all, n, i), etl_chain_readier_stack(all, &c.segs[i])},
                                  {etl_chain_blocking_stack(&c, only, n, i), etl_chain_readier_stack(only, &c.segs[i])}};
            for (int w = 0; w < 2; w++) {
                assert_int_equal(ids[0][w] == ETL_SCHED_STACK_NONE, ids[1][w] == ETL_SCHED_STACK_NONE);
                frames_of(all, ids[0][w], fa, sizeof fa);
                frames_of(only, ids[1][w], fo, sizeof fo);
                assert_string_equal(fa, fo);
                shown += ids[0][w] != ETL_SCHED_STACK_NONE;
            }
        }
    }
    assert_true(shown > 0);

    /* An event the chain does not look up has a stack in the whole table, none in the chain's. */
    size_t nimg;
    etl_sched_stacks_images(all, &nimg);
    unsigned other = 0;
    for (size_t i = 0; i < T.nsw && !other; i++) {
        int64_t ns = etl_clock_ns(etl_reader_clock(R), T.sw[i].time);
        bool asked = false;
        for (size_t k = 0; k < nwant; k++) asked |= !want[k].ready && want[k].cpu == T.sw[i].cpu && want[k].ns == ns;
        if (!asked && etl_sched_stacks_cswitch(all, T.sw[i].cpu, ns) != ETL_SCHED_STACK_NONE) {
            assert_int_equal(etl_sched_stacks_cswitch(only, T.sw[i].cpu, ns), ETL_SCHED_STACK_NONE);
            other++;
        }
    }
    assert_int_equal(other, 1);

    /* Refusals. */
    etl_sched_stacks *x = NULL;
    assert_int_equal(etl_sched_stacks_build_only(R, 1, NULL, 3, &x), ETL_E_INVALID_ARG);
    assert_null(x);
    assert_int_equal(etl_sched_stacks_build_only(NULL, 1, NULL, 0, &x), ETL_E_INVALID_ARG);
    assert_int_equal(etl_sched_stacks_build_only(R, 1, NULL, 0, NULL), ETL_E_INVALID_ARG);

    etl_sched_stacks_free(all);
    etl_sched_stacks_free(only);
    etl_sched_stacks_free(none);
    free(want);
    etl_chain_free(&c);
}

/* Whether kind's stacks (CSwitch: ready 0) of the truth's events in s equal all's, or, with none, s has none of them. */
static unsigned compare_kind(etl_sched_stacks *all, etl_sched_stacks *s, int ready, int none)
{
    char fa[8192], fs[8192];
    unsigned n = 0;
    size_t count = ready ? T.nrd : T.nsw;
    for (size_t i = 0; i < count; i++) {
        uint16_t cpu = ready ? T.rd[i].cpu : T.sw[i].cpu;
        int64_t ns = etl_clock_ns(etl_reader_clock(R), ready ? T.rd[i].time : T.sw[i].time);
        uint32_t a = ready ? etl_sched_stacks_ready(all, cpu, ns) : etl_sched_stacks_cswitch(all, cpu, ns);
        uint32_t b = ready ? etl_sched_stacks_ready(s, cpu, ns) : etl_sched_stacks_cswitch(s, cpu, ns);
        if (none) {
            assert_int_equal(b, ETL_SCHED_STACK_NONE);
            continue;
        }
        frames_of(all, a, fa, sizeof fa);
        frames_of(s, b, fs, sizeof fs);
        assert_string_equal(fa, fs);
        n += a != ETL_SCHED_STACK_NONE;
    }
    return n;
}

/* waits --by stack keeps the CSwitches' stacks alone, --by readying-stack the ReadyThreads': the same stacks, the
   walks counted as before, and none of the other kind (which took a third of the memory for nothing). */
static void test_one_kind(void **state)
{
    (void)state;
    etl_sched_stacks *all, *sw, *rd;
    assert_int_equal(etl_sched_stacks_build_threads(R, 2, &all), ETL_OK);
    assert_int_equal(etl_sched_stacks_build_kind(R, 2, false, &sw), ETL_OK);
    assert_int_equal(etl_sched_stacks_build_kind(R, 1, true, &rd), ETL_OK);
    const etl_sched_stacks_stats *sa = etl_sched_stacks_stats_get(all);
    for (int k = 0; k < 2; k++) {
        const etl_sched_stacks_stats *sk = etl_sched_stacks_stats_get(k ? rd : sw);
        assert_int_equal(sa->cswitch_walked, sk->cswitch_walked);
        assert_int_equal(sa->ready_walked, sk->ready_walked);
        assert_true(sk->stacks > 0 && sk->stacks < sa->stacks);
    }
    assert_true(compare_kind(all, sw, 0, 0) > 100);
    assert_true(compare_kind(all, rd, 1, 0) > 100);
    compare_kind(all, sw, 1, 1);
    compare_kind(all, rd, 0, 1);
    etl_sched_stacks *x = NULL;
    assert_int_equal(etl_sched_stacks_build_kind(NULL, 1, false, &x), ETL_E_INVALID_ARG);
    assert_null(x);
    etl_sched_stacks_free(all);
    etl_sched_stacks_free(sw);
    etl_sched_stacks_free(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_only_the_chain), cmocka_unit_test(test_one_kind)};
    return cmocka_run_group_tests(tests, setup, teardown);
}

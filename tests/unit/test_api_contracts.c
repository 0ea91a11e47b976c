/*
 * test_api_contracts.c - the public API's edges a caller meets first (explore16 F1-F5): a zeroed options struct
 * reads a trace right (bias 0, spin lock params 0), a second *_finish changes nothing, an index past a list or a
 * missing model is refused rather than read, the name helpers never return what printf cannot take, and an options
 * sz that ends inside a member does not take half of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"
#include "etlkit/sched.h"
#include "etlkit/usage.h"
#include "etlkit/wakeups.h"
#include "etlkit/pmc.h"
#include "etlkit/spinlocks.h"
#include "etlkit/profile.h"
#include "etlkit/waitchain.h"
#include "etlkit/compare.h"
#include "etlkit/writer.h"
#include "base/opts.h"
#include "synthtruth.h"

static char g_compact[512], g_full[512];

static void synth(const char *path, const char *const kv[][2], size_t n)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    for (size_t i = 0; i < n; i++) st_set(&o, kv[i][0], kv[i][1]);
    st_truth t;
    st_run(path, &o, &t);
    st_free(&t);
}

static int setup(void **state)
{
    (void)state;
    st_tmp(g_compact, sizeof g_compact, "apic", "compact.etl");
    st_tmp(g_full, sizeof g_full, "apic", "full.etl");
    const char *const c[][2] = {{"seed", "4"}, {"cswitch", "compact"}, {"duration", "0.3"}};
    const char *const f[][2] = {{"seed", "3"}, {"pmc", "4"}, {"stacks", NULL}, {"duration", "0.3"}};
    synth(g_compact, c, 3);
    synth(g_full, f, 4);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_compact);
    unlink(g_full);
    return 0;
}

static etl_reader *open_r(const char *path)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open(path, NULL, &r, &d) != ETL_OK) fail_msg("%s: %s", path, d.msg);
    return r;
}

/* What the switches' states and wait reasons say: a digest that a wrong bias changes. */
typedef struct sw_digest {
    uint64_t n, states[16], reasons_sum, waiting;
} sw_digest;

static sw_digest source_digest(etl_reader *r, const etl_sched_source_options *o)
{
    sw_digest d;
    memset(&d, 0, sizeof d);
    etl_sched_source *s;
    assert_int_equal(etl_sched_source_open(r, o, &s), ETL_OK);
    const etl_sched_event *ev;
    while (etl_sched_source_next_ref(s, &ev) == ETL_OK) {
        if (ev->kind != ETL_SCHED_SWITCH) continue;
        d.n++;
        d.states[ev->u.sw.old_state & 15]++;
        d.reasons_sum += ev->u.sw.old_wait_reason;
        d.waiting += ev->u.sw.old_state == 5;
    }
    etl_sched_source_close(s);
    return d;
}

static void percpu_counts(etl_reader *r, int bias, uint64_t *vol, uint64_t *invol)
{
    etl_usage u;
    etl_usage_options uo = {.sz = sizeof uo, .no_latency = true};
    assert_int_equal(etl_usage_init(&u, NULL, &uo), ETL_OK);
    etl_sched_percpu_consumer pc;
    etl_usage_percpu(&u, &pc);
    etl_sched_percpu_options po = {.sz = sizeof po, .bias = bias};
    etl_sched_percpu_result res;
    assert_int_equal(etl_sched_percpu_run(r, &po, &pc, &res), ETL_OK);
    assert_int_equal(etl_usage_finish(&u, etl_clock_ns(etl_reader_clock(r), res.end_ts)), ETL_OK);
    *vol = *invol = 0;
    for (size_t i = 0; i < u.nthreads; i++) *vol += u.threads[i].voluntary, *invol += u.threads[i].involuntary;
    etl_sched_close(res.model);
    etl_usage_free(&u);
}

/* F1: bias 0 (a zeroed struct) is "from the OS build", as < 0: no kernel has MaximumWaitReason 0. */
static void test_bias_zero(void **state)
{
    (void)state;
    etl_reader *r = open_r(g_compact);
    etl_sched_source_options neg = {.sz = sizeof neg, .bias = -1}, zero = {.sz = sizeof zero};
    sw_digest a = source_digest(r, &neg), b = source_digest(r, &zero);
    assert_true(a.n > 1000);
    assert_true(a.waiting > 100);
    assert_int_equal(b.n, a.n);
    assert_int_equal(b.waiting, a.waiting);
    assert_int_equal(b.reasons_sum, a.reasons_sum);
    assert_memory_equal(b.states, a.states, sizeof a.states);
    uint64_t v1, i1, v0, i0;
    percpu_counts(r, -1, &v1, &i1);
    percpu_counts(r, 0, &v0, &i0);
    assert_true(v1 > 100);
    assert_int_equal(v0, v1);
    assert_int_equal(i0, i1);
    etl_reader_close(r);
}

/* F1 in convert: compact batches expanded to CSwitch events with a zeroed bias are those of bias -1. */
static void test_convert_bias_zero(void **state)
{
    (void)state;
    char a[512], b[512];
    st_tmp(a, sizeof a, "apic", "conv-neg.etl");
    st_tmp(b, sizeof b, "apic", "conv-zero.etl");
    etl_convert_options neg = {.sz = sizeof neg, .cswitch = ETL_CSWITCH_FULL, .compress = -1, .bias = -1};
    etl_convert_options zero = {.sz = sizeof zero, .cswitch = ETL_CSWITCH_FULL, .compress = -1};
    etl_convert_stats st;
    etl_diag d;
    assert_int_equal(etl_convert(g_compact, a, &neg, &st, &d), ETL_OK);
    assert_true(st.switches_expanded > 1000);
    assert_int_equal(etl_convert(g_compact, b, &zero, &st, &d), ETL_OK);
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1};
    etl_reader *ra = open_r(a), *rb = open_r(b);
    sw_digest x = source_digest(ra, &so), y = source_digest(rb, &so);
    assert_true(x.waiting > 100);
    assert_int_equal(y.n, x.n);
    assert_int_equal(y.waiting, x.waiting);
    assert_int_equal(y.reasons_sum, x.reasons_sum);
    assert_memory_equal(y.states, x.states, sizeof x.states);
    etl_reader_close(ra);
    etl_reader_close(rb);
    unlink(a);
    unlink(b);
}

typedef struct all {
    etl_usage u;
    etl_wakeups w;
    etl_pmc p;
} all;

static void all_row(void *ctx, const etl_sched_row *row)
{
    all *a = ctx;
    etl_usage_add(&a->u, row);
    etl_wakeups_add(&a->w, row);
    etl_pmc_add(&a->p, row);
}

/* F2: a second finish returns the first's status and changes nothing (it overflowed pmc's rows, crashed usage). */
static void test_finish_twice(void **state)
{
    (void)state;
    etl_reader *r = open_r(g_full);
    etl_sched_source *src;
    assert_int_equal(etl_sched_source_open(r, NULL, &src), ETL_OK);
    all a;
    etl_sched_options mo = {.sz = sizeof mo, .on_row = all_row, .ctx = &a, .reader = r};
    etl_sched *m;
    assert_int_equal(etl_sched_open(etl_reader_clock(r), etl_reader_processors(r), &mo, &m), ETL_OK);
    etl_usage_options uo = {.sz = sizeof uo};
    assert_int_equal(etl_usage_init(&a.u, m, &uo), ETL_OK);
    assert_int_equal(etl_wakeups_init(&a.w, m, NULL), ETL_OK);
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    assert_int_equal(etl_pmc_init(&a.p, m, &po), ETL_OK);
    etl_spinlocks s;
    etl_spinlocks_options so = {.sz = sizeof so, .params = etl_spinlock_info_defaults(), .mhz = 3000, .ncpu = 4};
    assert_int_equal(etl_spinlocks_init(&s, etl_reader_clock(r), &so), ETL_OK);
    const etl_sched_event *ev;
    while (etl_sched_source_next_ref(src, &ev) == ETL_OK) {
        etl_spinlocks_add(&s, ev);
        etl_sched_push(m, ev);
    }
    uint64_t end = etl_sched_end_ts(r, etl_sched_source_stats_get(src)->last_ts);
    int64_t end_ns = etl_clock_ns(etl_reader_clock(r), end);
    assert_int_equal(etl_sched_finish(m, end), ETL_OK);
    assert_int_equal(etl_usage_finish(&a.u, end_ns), ETL_OK);
    assert_int_equal(etl_wakeups_finish(&a.w), ETL_OK);
    assert_int_equal(etl_pmc_finish(&a.p, end_ns), ETL_OK);
    assert_int_equal(etl_spinlocks_finish(&s, end_ns), ETL_OK);
    assert_true(a.u.nthreads > 10 && a.w.nthreads > 3 && a.p.nthreads > 10 && s.nlocks > 0);
    /* Copies of what the first finish gave, the arrays' contents too. */
    etl_usage u1;
    etl_wakeups w1;
    etl_pmc p1;
    etl_spinlocks s1;
    memcpy(&u1, &a.u, sizeof u1); /* bytes, padding too: compared as bytes below */
    memcpy(&w1, &a.w, sizeof w1);
    memcpy(&p1, &a.p, sizeof p1);
    memcpy(&s1, &s, sizeof s1);
    etl_usage_thread *ut = malloc(u1.nthreads * sizeof *ut);
    etl_usage_process *up = malloc(u1.nprocesses * sizeof *up);
    etl_pmc_thread *pt = malloc(p1.nthreads * sizeof *pt);
    etl_wakeup_waker *wt = malloc(w1.nthreads * sizeof *wt);
    etl_spin_group *sl = malloc(s1.nlocks * sizeof *sl);
    memcpy(ut, u1.threads, u1.nthreads * sizeof *ut);
    memcpy(up, u1.processes, u1.nprocesses * sizeof *up);
    memcpy(pt, p1.threads, p1.nthreads * sizeof *pt);
    memcpy(wt, w1.threads, w1.nthreads * sizeof *wt);
    memcpy(sl, s1.locks, s1.nlocks * sizeof *sl);
    for (int k = 0; k < 2; k++) { /* the same end, then another: neither is read again */
        int64_t e = k ? end_ns / 2 : end_ns;
        assert_int_equal(etl_usage_finish(&a.u, e), ETL_OK);
        assert_int_equal(etl_wakeups_finish(&a.w), ETL_OK);
        assert_int_equal(etl_pmc_finish(&a.p, e), ETL_OK);
        assert_int_equal(etl_spinlocks_finish(&s, e), ETL_OK);
        /* The same arrays (a new one leaked the first), holding the same rows. */
        assert_memory_equal(&a.u, &u1, sizeof u1);
        assert_memory_equal(&a.w, &w1, sizeof w1);
        assert_memory_equal(&a.p, &p1, sizeof p1);
        assert_memory_equal(&s, &s1, sizeof s1);
        assert_memory_equal(a.u.threads, ut, u1.nthreads * sizeof *ut);
        assert_memory_equal(a.u.processes, up, u1.nprocesses * sizeof *up);
        assert_memory_equal(a.p.threads, pt, p1.nthreads * sizeof *pt);
        assert_memory_equal(a.w.threads, wt, w1.nthreads * sizeof *wt);
        assert_memory_equal(s.locks, sl, s1.nlocks * sizeof *sl);
    }
    free(ut);
    free(up);
    free(pt);
    free(wt);
    free(sl);
    etl_usage_free(&a.u);
    etl_wakeups_free(&a.w);
    etl_pmc_free(&a.p);
    etl_spinlocks_free(&s);
    /* Finish on what was never initialised (zeroed, or freed): refused. */
    assert_int_equal(etl_usage_finish(&a.u, end_ns), ETL_E_INVALID_ARG);
    assert_int_equal(etl_wakeups_finish(&a.w), ETL_E_INVALID_ARG);
    assert_int_equal(etl_pmc_finish(&a.p, end_ns), ETL_E_INVALID_ARG);
    assert_int_equal(etl_spinlocks_finish(&s, end_ns), ETL_E_INVALID_ARG);
    etl_sched_close(m);
    etl_sched_source_close(src);
    etl_reader_close(r);
}

/* The acquisition bounds of g_full's spin lock events under o. */
static etl_status spin_bounds(const etl_spinlocks_options *o, etl_spin_bounds *b)
{
    etl_reader *r = open_r(g_full);
    etl_spinlocks s;
    etl_status st = etl_spinlocks_init(&s, etl_reader_clock(r), o);
    if (st == ETL_OK) {
        etl_sched_source *src;
        assert_int_equal(etl_sched_source_open(r, NULL, &src), ETL_OK);
        const etl_sched_event *ev;
        while (etl_sched_source_next_ref(src, &ev) == ETL_OK) etl_spinlocks_add(&s, ev);
        etl_sched_source_close(src);
        assert_true(s.events > 10);
        st = etl_spinlocks_finish(&s, INT64_MAX);
        *b = s.acquisitions;
    }
    etl_spinlocks_free(&s);
    etl_reader_close(r);
    return st;
}

/* F3: zeroed params are "not given" (the kernel's defaults, as the CLI takes), params the kernel refuses are refused. */
static void test_spin_params(void **state)
{
    (void)state;
    etl_spinlocks_options def = {.sz = sizeof def, .params = etl_spinlock_info_defaults(), .mhz = 3000, .ncpu = 4};
    etl_spinlocks_options zero = {.sz = sizeof zero, .mhz = 3000, .ncpu = 4};
    etl_spin_bounds a, b;
    assert_int_equal(spin_bounds(&def, &a), ETL_OK);
    assert_int_equal(spin_bounds(&zero, &b), ETL_OK);
    assert_true(a.hi > a.lo); /* sampled: not exact */
    assert_int_equal(b.est, a.est);
    assert_int_equal(b.lo, a.lo);
    assert_int_equal(b.hi, a.hi);
    assert_int_equal(b.hi_known, a.hi_known);
    /* One refused field, the others set: no sampling the events had. */
    etl_spinlocks_options bad = def;
    bad.params.spin_lock_acquire_sample_rate = 999;
    assert_int_equal(spin_bounds(&bad, &b), ETL_E_INVALID_ARG);
    bad = def;
    bad.params.spin_lock_spin_threshold = 0;
    assert_int_equal(spin_bounds(&bad, &b), ETL_E_INVALID_ARG);
    etl_spinlocks s;
    memset(&s, 0xAB, sizeof s);
    assert_int_equal(etl_spinlocks_init(&s, NULL, &bad), ETL_E_INVALID_ARG);
    assert_int_equal(etl_spinlocks_finish(&s, 0), ETL_E_INVALID_ARG);
    etl_spinlocks_free(&s); /* zeroed: safe */
}

/* F4: an index past a list, a missing model: refused, never read. */
static void test_out_of_range(void **state)
{
    (void)state;
    etl_reader *r = open_r(g_full);
    etl_profile p;
    assert_int_equal(etl_profile_run(r, NULL, &p), ETL_OK);
    assert_true(p.nstacks > 0 && p.nfunctions > 0);
    uint32_t n = 77;
    etl_profile_stack_frames(&p, p.stacks[0].stack, &n);
    assert_true(n > 0);
    uint32_t ids[] = {(uint32_t)p.nstacks + 1000000, UINT32_MAX, UINT32_MAX - 1};
    for (size_t i = 0; i < 3; i++) {
        n = 77;
        assert_null(etl_profile_stack_frames(&p, ids[i], &n));
        assert_int_equal(n, 0);
    }
    char lab[64] = "x";
    assert_true(etl_profile_function_label(&p, 0, lab, sizeof lab) > 0);
    memset(lab, 'x', sizeof lab);
    assert_int_equal(etl_profile_function_label(&p, (uint32_t)p.nfunctions, lab, sizeof lab), 0);
    assert_string_equal(lab, "");
    assert_int_equal(etl_profile_function_label(&p, UINT32_MAX, lab, 0), 0);
    etl_profile_free(&p);
    n = 77; /* a freed profile holds no stack */
    assert_null(etl_profile_stack_frames(&p, 0, &n));
    assert_int_equal(n, 0);
    etl_wakeups w;
    memset(&w, 0xAB, sizeof w);
    assert_int_equal(etl_wakeups_init(&w, NULL, NULL), ETL_E_INVALID_ARG);
    assert_int_equal(etl_wakeups_finish(&w), ETL_E_INVALID_ARG);
    etl_wakeups_free(&w);
    etl_reader_close(r);
}

/* F5: names printf can take, a NULL name refused, a sz inside a member not taking half of it. */
static void test_names_and_sz(void **state)
{
    (void)state;
    assert_string_equal(etl_chain_leaf_name(99), "?");
    assert_string_equal(etl_chain_leaf_name(8), "?");
    assert_null(etl_chain_leaf_name(ETL_LEAF_NONE)); /* no leaf: the CLI writes "leaf": null */
    assert_string_equal(etl_chain_leaf_name(ETL_LEAF_DPC), "dpc");
    assert_string_equal(etl_chain_state_name(99), "?");
    etl_compare c;
    memset(&c, 0, sizeof c);
    assert_null(etl_compare_find(&c, ETL_CMP_PROCESS, NULL));
    assert_null(etl_compare_find(&c, ETL_CMP_THREAD, NULL));
    assert_non_null(etl_compare_find(&c, ETL_CMP_TOTAL, NULL));
    /* sz ending inside v1: v1 keeps its default (half of it was taken); the whole members before it are taken. */
    etl_usage_options d = {.sz = sizeof d, .v0 = 5, .v1 = 7, .longest = 3};
    etl_usage_options half = {.sz = offsetof(etl_usage_options, v1) + 4, .v0 = 100, .v1 = 0x0000000100000002ll};
    etl_opts_take(&d, sizeof d, &half);
    assert_int_equal(d.sz, sizeof d);
    assert_int_equal(d.v0, 100);
    assert_int_equal(d.v1, 7);
    assert_int_equal(d.longest, 3);
    /* A valid sz (each version's sizeof) is taken whole. */
    etl_usage_options e = {.sz = sizeof e, .v0 = 5, .v1 = 7};
    half.sz = offsetof(etl_usage_options, longest);
    etl_opts_take(&e, sizeof e, &half);
    assert_int_equal(e.v1, 0x0000000100000002ll);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bias_zero),
        cmocka_unit_test(test_convert_bias_zero),
        cmocka_unit_test(test_finish_twice), cmocka_unit_test(test_spin_params),
        cmocka_unit_test(test_out_of_range), cmocka_unit_test(test_names_and_sz),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

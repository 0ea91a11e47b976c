/*
 * test_compare.c - `compare`: a trace against itself changes nothing; a higher
 * --load (same seed) raises CPU time in the expected direction; --fail-if
 * thresholds are crossed exactly when the change passes them; the expression
 * parser accepts the documented forms and rejects the rest with a reason; what
 * cannot be computed (a 0 ns window, a percentile of no value, waits without
 * ReadyThread) is unknown and a gate on it cannot pass.
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
#include "etlkit/compare.h"

typedef struct trace {
    char path[512];
    etl_reader *r;
    etl_sched *m;
    etl_usage u;
} trace;

/* extra = extra_v: one more synth option (NULL: none); v0 < v1: the window of etl_usage, ns. */
static void make_in(trace *t, const char *name, const char *load, const char *duration, const char *extra,
                    const char *extra_v, int64_t v0, int64_t v1)
{
    const char *dir = getenv("TMPDIR");
    snprintf(t->path, sizeof t->path, "%s/etlkit-compare-%d-%s.etl", dir && *dir ? dir : "/tmp", (int)getpid(), name);
    etl_synth_options o;
    etl_synth_options_init(&o);
    const char *kv[][2] = {{"seed", "21"}, {"cpus", "4"}, {"threads", "40"}, {"duration", duration}, {"load", load}};
    etl_diag d;
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++)
        if (etl_synth_set(&o, kv[i][0], kv[i][1], &d) != ETL_OK) fail_msg("%s", d.msg);
    if (extra && etl_synth_set(&o, extra, extra_v, &d) != ETL_OK) fail_msg("%s", d.msg);
    if (etl_synth_run(t->path, &o, NULL, &d) != ETL_OK) fail_msg("synth: %s", d.msg);
    assert_int_equal(etl_reader_open(t->path, NULL, &t->r, &d), ETL_OK);
    etl_sched_source *s;
    assert_int_equal(etl_sched_source_open(t->r, NULL, &s), ETL_OK);
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_usage_add, .ctx = &t->u};
    assert_int_equal(etl_sched_open(etl_reader_clock(t->r), etl_reader_cpu_count(t->r), &mo, &t->m), ETL_OK);
    etl_usage_options uo = {.sz = sizeof uo, .v0 = v0, .v1 = v1};
    assert_int_equal(etl_usage_init(&t->u, t->m, &uo), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(t->m, &ev);
    uint64_t end = etl_sched_end_ts(t->r, etl_sched_source_stats_get(s)->last_ts);
    etl_sched_finish(t->m, end);
    assert_int_equal(etl_usage_finish(&t->u, etl_clock_ns(etl_reader_clock(t->r), end)), ETL_OK);
    etl_sched_source_close(s);
}

static void make(trace *t, const char *name, const char *load, const char *duration)
{
    make_in(t, name, load, duration, NULL, NULL, 0, 0);
}

static void drop(trace *t)
{
    etl_usage_free(&t->u);
    etl_sched_close(t->m);
    etl_reader_close(t->r);
    unlink(t->path);
}

static int64_t busy(const etl_usage *u)
{
    int64_t b = 0;
    for (size_t c = 0; c < u->ncpus; c++) b += u->cpus[c].busy_ns;
    return b;
}

static int crossed(const etl_compare *c, const char *expr)
{
    etl_cmp_expr e;
    char err[200];
    if (etl_cmp_expr_parse(expr, &e, err, sizeof err) != ETL_OK) fail_msg("'%s': %s", expr, err);
    int64_t d;
    int found;
    int r = etl_cmp_expr_eval(c, &e, &d, &found);
    assert_true(found);
    return r;
}

static void test_self(void **state)
{
    (void)state;
    trace a;
    make(&a, "self", "35", "0.3");
    etl_compare c;
    assert_int_equal(etl_compare_build(&c, &a.u, &a.u), ETL_OK);
    assert_true(c.nprocesses > 3 && c.nthreads > 3 && c.nreasons > 3);
    const etl_cmp_row *all[3] = {c.processes, c.threads, c.reasons};
    size_t n[3] = {c.nprocesses, c.nthreads, c.nreasons};
    for (unsigned s = 0; s < 3; s++)
        for (size_t i = 0; i < n[s]; i++) {
            assert_true(all[s][i].in_before && all[s][i].in_after);
            assert_memory_equal(all[s][i].before, all[s][i].after, sizeof all[s][i].before);
        }
    assert_memory_equal(c.total.before, c.total.after, sizeof c.total.before);
    /* Normalised per second of window, from exactly what etl_usage reports. */
    assert_int_equal(c.total.before[ETL_CMP_CPU], etl_per_second(busy(&a.u), a.u.o.v1 - a.u.o.v0));
    assert_int_equal(c.total.before[ETL_CMP_READY_P99], a.u.ready_all.p99_ns);
    assert_false(crossed(&c, "cpu(total) > 0%"));
    assert_true(crossed(&c, "cpu(total) >= 0%"));
    assert_false(crossed(&c, "cpu(total) > 0ns"));
    assert_false(crossed(&c, "wait(reason=WrQueue) > +1ns"));
    assert_false(crossed(&c, "ready_p99(process=svchost) > +0%"));
    assert_false(crossed(&c, "switches(total) < 0"));
    /* Process rows sum to the total CPU (every thread has one process row). */
    int64_t sum = 0;
    for (size_t i = 0; i < c.nprocesses; i++) sum += c.processes[i].before[ETL_CMP_CPU];
    /* (each rounded to the nearest: within half a ns per second of it) */
    assert_true(sum <= c.total.before[ETL_CMP_CPU] + (int64_t)c.nprocesses &&
                sum >= c.total.before[ETL_CMP_CPU] - (int64_t)c.nprocesses);
    etl_compare_free(&c);
    drop(&a);
}

static void test_load(void **state)
{
    (void)state;
    trace lo, hi;
    make(&lo, "lo", "20", "0.3");
    make(&hi, "hi", "80", "0.3");
    etl_compare c;
    assert_int_equal(etl_compare_build(&c, &lo.u, &hi.u), ETL_OK);
    assert_true(c.total.after[ETL_CMP_CPU] > c.total.before[ETL_CMP_CPU]);
    assert_true(crossed(&c, "cpu(total) > +10%"));
    assert_false(crossed(&c, "cpu(total) < 0%"));
    /* The threshold is crossed exactly at the change: d - 1 ns crosses, d does not (>), d does (>=). */
    int64_t d = c.total.after[ETL_CMP_CPU] - c.total.before[ETL_CMP_CPU];
    char e[128];
    snprintf(e, sizeof e, "cpu(total) > +%lldns", (long long)(d - 1));
    assert_true(crossed(&c, e));
    snprintf(e, sizeof e, "cpu(total) > %lldns", (long long)d);
    assert_false(crossed(&c, e));
    snprintf(e, sizeof e, "cpu(total) >= %lldns", (long long)d);
    assert_true(crossed(&c, e));
    /* Reversed, the direction flips. */
    etl_compare r;
    assert_int_equal(etl_compare_build(&r, &hi.u, &lo.u), ETL_OK);
    assert_true(crossed(&r, "cpu(total) < -10%"));
    assert_false(crossed(&r, "cpu(total) > 0%"));
    /* Sorted by the biggest change of CPU time. */
    for (size_t i = 1; i < c.nprocesses; i++) {
        int64_t x = c.processes[i - 1].after[0] - c.processes[i - 1].before[0];
        int64_t y = c.processes[i].after[0] - c.processes[i].before[0];
        assert_true((x < 0 ? -x : x) >= (y < 0 ? -y : y));
    }
    etl_compare_free(&c);
    etl_compare_free(&r);
    drop(&lo);
    drop(&hi);
}

/* Traces of different lengths: amounts per second of each window. */
static void test_lengths(void **state)
{
    (void)state;
    trace s, l;
    make(&s, "short", "35", "0.2");
    make(&l, "long", "35", "0.4");
    etl_compare c;
    assert_int_equal(etl_compare_build(&c, &s.u, &l.u), ETL_OK);
    assert_true(c.window_after > c.window_before);
    assert_int_equal(c.total.before[ETL_CMP_CPU], etl_per_second(busy(&s.u), c.window_before));
    assert_int_equal(c.total.after[ETL_CMP_CPU], etl_per_second(busy(&l.u), c.window_after));
    /* Four CPUs: never more than 4 s of CPU per second. */
    assert_true(c.total.after[ETL_CMP_CPU] <= 4000000000);
    etl_compare_free(&c);
    drop(&s);
    drop(&l);
    assert_int_equal(etl_per_second(5, 2000000000), 3); /* 2.5 ns/s: a half away from zero */
    assert_int_equal(etl_per_second(3000000, 1000000000), 3000000);
}

static void test_parse(void **state)
{
    (void)state;
    etl_cmp_expr e;
    char err[200];
    assert_int_equal(etl_cmp_expr_parse("cpu(total) > +10%", &e, err, sizeof err), ETL_OK);
    assert_int_equal(e.metric, ETL_CMP_CPU);
    assert_int_equal(e.scope, ETL_CMP_TOTAL);
    assert_true(e.relative);
    assert_int_equal(e.threshold, 1000);
    assert_int_equal(etl_cmp_expr_parse("cpu(process=svchost.exe)>+5ms", &e, err, sizeof err), ETL_OK);
    assert_int_equal(e.scope, ETL_CMP_PROCESS);
    assert_string_equal(e.name, "svchost.exe");
    assert_int_equal(e.threshold, 5000000);
    assert_int_equal(etl_cmp_expr_parse("ready_p99(process=dwm) > +20%", &e, err, sizeof err), ETL_OK);
    assert_int_equal(e.metric, ETL_CMP_READY_P99);
    assert_int_equal(etl_cmp_expr_parse("wait(reason=WrQueue) > +1s", &e, err, sizeof err), ETL_OK);
    assert_int_equal(e.threshold, 1000000000);
    assert_int_equal(etl_cmp_expr_parse("wait(total) <= -1.5ms", &e, err, sizeof err), ETL_OK);
    assert_int_equal(e.op, 3);
    assert_int_equal(e.threshold, -1500000);
    assert_int_equal(etl_cmp_expr_parse("switches(thread=a.exe/worker) > 12.5", &e, err, sizeof err), ETL_OK);
    assert_int_equal(e.threshold, 12500);
    static const char *const bad[] = {"",
                                      "cpu",
                                      "cpu(total)",
                                      "cpu(total) > ",
                                      "cpu(total) = 5ms",
                                      "cpu(total) > 5",
                                      "cpu(total) > 5 parsecs",
                                      "switches(total) > 5ms",
                                      "heat(total) > 5%",
                                      "cpu(everything) > 5%",
                                      "cpu(process=) > 5%",
                                      "cpu(thread=worker) > 5%",
                                      "ready_p99(reason=WrQueue) > 5%",
                                      "cpu(total) > 99999999999999999999s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        if (etl_cmp_expr_parse(bad[i], &e, err, sizeof err) != ETL_E_INVALID_ARG) fail_msg("accepted '%s'", bad[i]);
        assert_true(err[0] != 0);
    }
}

#define B(m) (1u << (m))
#define AMOUNTS (B(ETL_CMP_CPU) | B(ETL_CMP_WAIT) | B(ETL_CMP_SWITCHES))
#define PERCENTILES (B(ETL_CMP_READY_P50) | B(ETL_CMP_READY_P90) | B(ETL_CMP_READY_P99) | B(ETL_CMP_READY_MAX))

/* 1, 0 or -1 (cannot be computed), found or not. */
static int eval(const etl_compare *c, const char *expr, int64_t *d)
{
    etl_cmp_expr e;
    char err[200];
    if (etl_cmp_expr_parse(expr, &e, err, sizeof err) != ETL_OK) fail_msg("'%s': %s", expr, err);
    int found;
    int r = etl_cmp_expr_eval(c, &e, d, &found);
    assert_true(found);
    return r;
}

/*
 * What cannot be computed is unknown, never 0 (before: a window clipped to 0 ns read 0 ns/s on
 * every row and every gate passed; a name absent from BEFORE had percentiles 0 there).
 */
static void test_unknown(void **state)
{
    (void)state;
    trace full, past, lo, hi, nort;
    make(&full, "full", "35", "0.3");
    make_in(&past, "past", "35", "0.3", NULL, NULL, 500000000, 600000000); /* past the end: 0 ns */
    make_in(&lo, "churnlo", "20", "0.3", "churn", "20", 0, 0);             /* processes come and go: */
    make_in(&hi, "churnhi", "80", "0.3", "churn", "20", 0, 0);             /* names in one trace only */
    make_in(&nort, "nort", "35", "0.3", "no-ready-thread", NULL, 0, 0);
    int64_t d;

    /* A 0 ns window: no amount and no percentile is known, every gate on it cannot be computed. */
    etl_compare c;
    assert_int_equal(etl_compare_build(&c, &full.u, &past.u), ETL_OK);
    assert_int_equal(c.window_after, 0);
    assert_int_equal(c.total.known_before, AMOUNTS | PERCENTILES);
    assert_int_equal(c.total.known_after, 0);
    const etl_cmp_row *all[3] = {c.processes, c.threads, c.reasons};
    size_t n[3] = {c.nprocesses, c.nthreads, c.nreasons};
    for (unsigned s = 0; s < 3; s++)
        for (size_t i = 0; i < n[s]; i++) assert_int_equal(all[s][i].known_after, 0);
    assert_int_equal(eval(&c, "cpu(total) > +10%", &d), -1);
    assert_int_equal(d, 0);
    assert_int_equal(eval(&c, "cpu(total) < -10%", &d), -1);
    assert_int_equal(eval(&c, "switches(total) > 1", &d), -1);
    assert_int_equal(eval(&c, "ready_p99(total) > +1ms", &d), -1);
    assert_int_equal(eval(&c, "wait(reason=WrQueue) > +1s", &d), -1);
    etl_compare_free(&c);

    /*
     * Names absent from a side: their amounts there are 0 (known), their percentiles and longest
     * waits of no value (unknown).
     */
    assert_int_equal(etl_compare_build(&c, &lo.u, &hi.u), ETL_OK);
    size_t absent = 0;
    const etl_cmp_row *rows[2] = {c.processes, c.threads};
    size_t nrows[2] = {c.nprocesses, c.nthreads};
    for (unsigned s = 0; s < 2; s++)
        for (size_t i = 0; i < nrows[s]; i++) {
            const etl_cmp_row *r = &rows[s][i];
            if (r->in_before) {
                assert_true(r->known_before & B(ETL_CMP_CPU));
                continue;
            }
            absent++;
            assert_int_equal(r->known_before, AMOUNTS);
            assert_int_equal(r->before[ETL_CMP_CPU], 0);
            for (unsigned m = ETL_CMP_READY_P50; m < ETL_CMP_NMETRICS; m++) assert_int_equal(r->before[m], 0);
        }
    for (size_t i = 0; i < c.nreasons; i++)
        if (!c.reasons[i].in_before) assert_int_equal(c.reasons[i].known_before, B(ETL_CMP_WAIT) | B(ETL_CMP_SWITCHES));
    assert_true(absent > 0);
    /* A gate on a percentile of an absent name cannot be computed; on its CPU it is a +infinite change. */
    for (size_t i = 0; i < c.nprocesses; i++) {
        if (c.processes[i].in_before) continue;
        char e[400];
        snprintf(e, sizeof e, "ready_p99(process=%s) > +20%%", c.processes[i].name);
        assert_int_equal(eval(&c, e, &d), -1);
        snprintf(e, sizeof e, "ready_p99(process=%s) < -20%%", c.processes[i].name);
        assert_int_equal(eval(&c, e, &d), -1);
        snprintf(e, sizeof e, "cpu(process=%s) > +20%%", c.processes[i].name);
        assert_int_equal(eval(&c, e, &d), c.processes[i].after[ETL_CMP_CPU] > 0);
        break;
    }
    etl_compare_free(&c);

    /* Without ReadyThread events no wait can be measured (spec §1 rule 3): waiting time unknown, not 0. */
    assert_int_equal(etl_compare_build(&c, &full.u, &nort.u), ETL_OK);
    assert_true(c.total.known_after & B(ETL_CMP_CPU));
    assert_false(c.total.known_after & B(ETL_CMP_WAIT));
    assert_int_equal(eval(&c, "wait(total) > +10%", &d), -1);
    assert_int_equal(eval(&c, "wait(reason=WrQueue) < -10%", &d), -1);
    assert_int_equal(eval(&c, "switches(reason=WrQueue) < 0", &d), -1);
    assert_true(eval(&c, "cpu(total) > -100%", &d) == 1);
    for (size_t i = 0; i < c.nthreads; i++) assert_false(c.threads[i].known_after & B(ETL_CMP_WAIT));
    /*
     * Its Ready values cover only preempted switch-ins (spec §1 rule 2): against a side with
     * ReadyThread events they are unknown, every percentile gate cannot be computed (explore10 F);
     * the side with them keeps its values.
     */
    assert_int_equal(c.total.known_after & PERCENTILES, 0);
    assert_int_equal(c.total.known_before & PERCENTILES, PERCENTILES);
    assert_int_equal(eval(&c, "ready_p99(total) > 0%", &d), -1);
    assert_int_equal(eval(&c, "ready_p50(total) < +1ms", &d), -1);
    for (size_t i = 0; i < c.nprocesses; i++) assert_int_equal(c.processes[i].known_after & PERCENTILES, 0);
    for (size_t i = 0; i < c.nthreads; i++) assert_int_equal(c.threads[i].known_after & PERCENTILES, 0);
    etl_compare_free(&c);
    assert_int_equal(etl_compare_build(&c, &nort.u, &full.u), ETL_OK); /* either side */
    assert_int_equal(c.total.known_before & PERCENTILES, 0);
    assert_int_equal(eval(&c, "ready_max(total) > 0%", &d), -1);
    etl_compare_free(&c);
    /* Both without: the same population on both sides, compared. */
    assert_int_equal(etl_compare_build(&c, &nort.u, &nort.u), ETL_OK);
    assert_int_equal(c.total.known_before & PERCENTILES, PERCENTILES);
    assert_int_equal(eval(&c, "ready_p99(total) > 0%", &d), 0);
    etl_compare_free(&c);

    drop(&full);
    drop(&past);
    drop(&lo);
    drop(&hi);
    drop(&nort);
}

/* A row's relative change, as the table and JSON show it, is rounded as the gate's line is (explore10 G). */
static void test_change_pct(void **state)
{
    (void)state;
    etl_cmp_row r;
    memset(&r, 0, sizeof r);
    r.known_before = r.known_after = B(ETL_CMP_CPU);
    int64_t v;
    const int64_t cases[][3] = {{102013, 144855, 4200},  /* +41.9964 %: truncated it read +41.99 */
                                {1000000, 981515, -185}, /* -1.8485 % */
                                {-200, -100, 5000},      /* a negative base: the change over |b| */
                                {3, 4, 3333}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        r.before[ETL_CMP_CPU] = cases[i][0];
        r.after[ETL_CMP_CPU] = cases[i][1];
        assert_int_equal(etl_cmp_change_pct(&r, ETL_CMP_CPU, &v), ETL_CMP_CHANGE_VALUE);
        assert_int_equal(v, cases[i][2]);
    }
    r.before[ETL_CMP_CPU] = 0;
    assert_int_equal(etl_cmp_change_pct(&r, ETL_CMP_CPU, &v), ETL_CMP_CHANGE_NEW);
    r.after[ETL_CMP_CPU] = -1;
    assert_int_equal(etl_cmp_change_pct(&r, ETL_CMP_CPU, &v), ETL_CMP_CHANGE_NEW_NEG);
    r.after[ETL_CMP_CPU] = 0;
    assert_int_equal(etl_cmp_change_pct(&r, ETL_CMP_CPU, &v), ETL_CMP_CHANGE_NONE);
    r.before[ETL_CMP_CPU] = 5, r.known_after = 0;
    assert_int_equal(etl_cmp_change_pct(&r, ETL_CMP_CPU, &v), ETL_CMP_CHANGE_NONE);
    assert_int_equal(v, 0);
    assert_int_equal(etl_cmp_change_pct(&r, ETL_CMP_NMETRICS, &v), ETL_CMP_CHANGE_NONE);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_self),
        cmocka_unit_test(test_load),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_unknown),
        cmocka_unit_test(test_change_pct),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

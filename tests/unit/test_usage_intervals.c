/*
 * test_usage_intervals.c - etl_usage per interval (issue 18) against a dense answer computed here
 * from the model's rows: every interval of the window is there (an idle or quiet end too), each
 * CPU's busy time per interval is the rows' (and busy + idle + unknown = the interval's length),
 * the sparse cells of the top processes equal the dense matrix's, with the cells in memory or
 * spilled to a temporary file; the window clipped to the trace's end; more intervals than the
 * limit refused with the shortest that fits; intervals from a run CPU by CPU refused. A thread's
 * time counts to the process it has at the end, as the totals count it: one seen before its
 * DCStart (a head slice before the start rundown) is adopted by that DCStart's process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/sched.h"
#include "etlkit/usage.h"
#include "etlkit/synth.h"
#include "synthtruth.h"

/* A row as the reference needs it: its CPU, slice, thread, and the thread's process then (it counts to the one the
 * thread has at the end). */
typedef struct ref_row {
    uint16_t cpu;
    int64_t si, nso;
    uint32_t thread, process_then;
} ref_row;

typedef struct run {
    etl_usage u;
    etl_sched *m;
    ref_row *rows;
    size_t n, cap;
    int64_t end_ns;
    unsigned ncpu;
} run;

static void on_row(void *ctx, const etl_sched_row *row)
{
    run *r = ctx;
    etl_usage_add(&r->u, row);
    if (r->n == r->cap) {
        r->cap = r->cap ? 2 * r->cap : 4096;
        r->rows = realloc(r->rows, r->cap * sizeof *r->rows);
        assert_non_null(r->rows);
    }
    uint32_t x = row->new_thread, proc = ETL_SCHED_NONE;
    const etl_sched_thread *t = x != ETL_SCHED_IDLE && x != ETL_SCHED_NONE ? etl_sched_thread_at(r->m, x) : NULL;
    if (t) proc = t->process;
    r->rows[r->n++] = (ref_row){row->cpu, row->si, row->nso, x, proc};
}

/* The trace through the time-ordered model into r->u with these options; the rows kept too. */
static etl_status run_trace(run *r, const char *path, const etl_usage_options *uo)
{
    memset(r, 0, sizeof *r);
    etl_reader *rd;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &rd, &d), ETL_OK);
    etl_sched_source *s;
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1, .threads = 1};
    assert_int_equal(etl_sched_source_open(rd, &so, &s), ETL_OK);
    etl_sched_options mo = {.sz = sizeof mo, .on_row = on_row, .ctx = r};
    assert_int_equal(etl_sched_open(etl_reader_clock(rd), etl_reader_cpu_count(rd), &mo, &r->m), ETL_OK);
    assert_int_equal(etl_usage_init(&r->u, r->m, uo), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(r->m, &ev);
    uint64_t end = etl_sched_end_ts(rd, etl_sched_source_stats_get(s)->last_ts);
    etl_sched_finish(r->m, end);
    r->end_ns = etl_clock_ns(etl_reader_clock(rd), end);
    r->ncpu = etl_sched_cpu_count(r->m);
    etl_status st = etl_usage_finish(&r->u, r->end_ns);
    etl_sched_source_close(s);
    etl_reader_close(rd);
    return st;
}

static void run_free(run *r)
{
    etl_usage_free(&r->u);
    etl_sched_close(r->m);
    free(r->rows);
}

static int64_t overlap(int64_t a, int64_t b, int64_t s, int64_t e)
{
    if (a < s) a = s;
    if (b > e) b = e;
    return b > a ? b - a : 0;
}

/* Every check of one run against the dense answer from its rows; returns the rows of threads adopted since. */
static size_t check_run(const char *path, int64_t v0, int64_t v1, int64_t len, uint32_t top, uint32_t cells_budget)
{
    run r;
    etl_usage_options uo = {.sz = sizeof uo, .v0 = v0, .v1 = v1, .interval_ns = len, .no_latency = true,
                            .interval_processes = top, .interval_cells_budget = cells_budget};
    assert_int_equal(run_trace(&r, path, &uo), ETL_OK);
    const etl_usage *u = &r.u;
    /* The window: clipped to the end. */
    int64_t w1 = v1 > v0 && v1 < r.end_ns ? v1 : r.end_ns, w0 = v0 < w1 ? v0 : w1;
    assert_int_equal(u->o.v0, w0);
    assert_int_equal(u->o.v1, w1);
    for (size_t c = 0; c < u->ncpus; c++)
        assert_int_equal(u->cpus[c].busy_ns + u->cpus[c].idle_ns + u->cpus[c].unknown_ns, w1 - w0);
    /* Every interval: [k·len, (k+1)·len) ∩ window, aligned to the trace start (spec §2), not to w0. */
    int64_t k0 = w0 / len;
    size_t nb = w1 > w0 ? (size_t)((w1 - 1) / len - k0 + 1) : 0;
    assert_int_equal(u->nbuckets, nb);
    assert_int_equal(u->bucket_stride, r.ncpu);
    size_t nproc = 0;
    etl_sched_processes(r.m, &nproc);
    int64_t *busy = calloc(nb * r.ncpu + 1, sizeof *busy), *other = calloc(nb * r.ncpu + 1, sizeof *other);
    int64_t *cell = calloc(nb * (nproc + 1) + 1, sizeof *cell);
    assert_true(busy && other && cell);
    size_t adopted = 0;
    bool *has_rows = calloc(r.ncpu + 1, sizeof *has_rows); /* a CPU that logged no switch has none: unknown */
    assert_non_null(has_rows);
    for (size_t i = 0; i < r.n; i++) {
        const ref_row *x = &r.rows[i];
        assert_true(x->cpu < r.ncpu);
        has_rows[x->cpu] = true;
        bool is_busy = x->thread != ETL_SCHED_IDLE && x->thread != ETL_SCHED_NONE;
        const etl_sched_thread *t = is_busy ? etl_sched_thread_at(r.m, x->thread) : NULL;
        uint32_t proc = t ? t->process : ETL_SCHED_NONE;
        adopted += proc != ETL_SCHED_NONE && x->process_then == ETL_SCHED_NONE;
        for (size_t b = 0; b < nb; b++) {
            int64_t s = (k0 + (int64_t)b) * len, e = s + len < w1 ? s + len : w1;
            if (s < w0) s = w0;
            int64_t d = overlap(x->si, x->nso, s, e);
            if (!d) continue;
            (is_busy ? busy : other)[b * r.ncpu + x->cpu] += d;
            if (is_busy) cell[b * (nproc + 1) + (proc < nproc ? proc : nproc)] += d;
        }
    }
    for (unsigned c = 0; c < r.ncpu; c++) {
        int64_t sum = 0;
        for (size_t b = 0; b < nb; b++) {
            int64_t s = (k0 + (int64_t)b) * len, e = s + len < w1 ? s + len : w1;
            if (s < w0) s = w0;
            int64_t bs, be;
            etl_usage_interval_bounds(u, b, &bs, &be);
            assert_int_equal(bs, s);
            assert_int_equal(be, e);
            assert_int_equal(u->bucket_cpu_busy[b * r.ncpu + c], busy[b * r.ncpu + c]);
            /* busy + idle + unknown = the interval, on every CPU that has rows */
            if (has_rows[c]) assert_int_equal(busy[b * r.ncpu + c] + other[b * r.ncpu + c], e - s);
            sum += u->bucket_cpu_busy[b * r.ncpu + c];
        }
        if (c < u->ncpus) assert_int_equal(sum, u->cpus[c].busy_ns);
    }
    /* The top processes' cells: the dense matrix's columns of processes[0 .. top). */
    size_t n = top ? top : 10, kept = 0;
    if (n > u->nprocesses) n = u->nprocesses;
    for (size_t b = 0; b < nb; b++) {
        for (size_t j = 0; j < n; j++) {
            uint32_t p = u->processes[j].process;
            int64_t want = cell[b * (nproc + 1) + (p < nproc ? p : nproc)];
            assert_int_equal(etl_usage_interval_process_ns(u, b, j), want);
            kept += want != 0;
        }
        assert_int_equal(etl_usage_interval_process_ns(u, b, n), 0); /* not kept */
    }
    assert_int_equal(u->bucket_first[nb], kept); /* sparse: the nonzero ones only */
    free(busy);
    free(other);
    free(cell);
    free(has_rows);
    run_free(&r);
    return adopted;
}

static const char *const traces[] = {"synth-64-qpc-full.etl", "synth-64-qpc-compact.etl", "synth-32-system-compact.etl",
                                     "synth-64-qpc-both-z.etl"};

static void path_of(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", ETLKIT_TEST_DATA, name);
}

static void test_dense_answer(void **state)
{
    (void)state;
    char path[1024];
    for (size_t t = 0; t < sizeof traces / sizeof traces[0]; t++) {
        path_of(path, sizeof path, traces[t]);
        static const int64_t lens[] = {1000000, 7000000, 50000000, 5000000000};
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            check_run(path, 0, 0, lens[k], 0, 0);                        /* the whole trace */
            check_run(path, 50000000, 250000000, lens[k], 3, 0);         /* a window */
            check_run(path, 100000000, 100000000000, lens[k], 1000, 0);  /* past the end: clipped */
        }
        /* The spill: 7 cells in memory at a time, the rest through the temporary file, same answer. */
        check_run(path, 0, 0, 1000000, 0, 7);
        check_run(path, 20000000, 0, 3000000, 1000, 1);
        /* A window wholly past the end: empty, at the end. */
        check_run(path, 500000000000, 600000000000, 1000000, 0, 0);
    }
}

/*
 * Threads that ran before their DCStart (a CPU's head slice before the start rundown): their time counts to the
 * process that adopts them, in memory and spilled (fifth exploratory round, F8: the interval lost it, its processes
 * added up to less than its busy time).
 */
static void test_adopted_threads(void **state)
{
    (void)state;
    char dir[512], path[1024];
    assert_int_equal(tu_tmpdir_make(dir, sizeof dir, "intervals"), 0);
    snprintf(path, sizeof path, "%s/adopt.etl", dir);
    etl_synth_options o;
    etl_synth_options_init(&o);
    const char *kv[][2] = {{"seed", "394766"}, {"cpus", "13"},         {"threads", "30"},     {"processes", "8"},
                           {"duration", "1ms"}, {"clock", "system"},   {"pointer-size", "32"}, {"buffer-size", "8K"},
                           {"pmc", "2"},        {"no-spinlocks", NULL}, {"cpu-mhz", "1000"}};
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) st_set(&o, kv[i][0], kv[i][1]);
    st_truth t;
    st_run(path, &o, &t);
    st_free(&t);
    assert_true(check_run(path, 0, 0, 100000, 1000, 0) > 0);
    assert_true(check_run(path, 0, 0, 100000, 1000, 1) > 0);
    assert_true(check_run(path, 0, 50000, 7000, 3, 0) > 0);
    assert_int_equal(tu_tmpdir_remove(dir), 0);
}

/* More intervals than the limit: finish refuses (nothing truncated), and names the shortest that fits. */
static void test_refused(void **state)
{
    (void)state;
    char path[1024];
    path_of(path, sizeof path, traces[0]);
    run r;
    etl_usage_options uo = {.sz = sizeof uo, .interval_ns = 1, .no_latency = true};
    assert_int_equal(run_trace(&r, path, &uo), ETL_E_RANGE);
    assert_non_null(strstr(etl_usage_diag(&r.u)->msg, "more than 100000"));
    uint64_t n;
    int64_t win, fit;
    assert_int_equal(etl_usage_intervals(&r.u, r.end_ns, &n, &win, &fit), ETL_USAGE_MAX_BUCKETS);
    assert_true(win > 0);
    assert_int_equal(n, (uint64_t)win);
    assert_int_equal(fit, (win + ETL_USAGE_MAX_BUCKETS - 1) / ETL_USAGE_MAX_BUCKETS);
    int64_t end = r.end_ns;
    run_free(&r);
    /* The shortest that fits does; one less does not. */
    uo.interval_ns = fit;
    assert_int_equal(run_trace(&r, path, &uo), ETL_OK);
    assert_true(r.u.nbuckets <= ETL_USAGE_MAX_BUCKETS);
    assert_int_equal(r.u.nbuckets, (size_t)((end + fit - 1) / fit));
    run_free(&r);
    uo.interval_ns = fit - 1;
    assert_int_equal(run_trace(&r, path, &uo), ETL_E_RANGE);
    run_free(&r);
    /*
     * A window off the intervals' edges (they are the trace start's) meets one more than
     * ceil(window / T) at times: the length named fits, and so does every longer one.
     */
    uo.interval_ns = 1;
    uo.v0 = 3;
    assert_int_equal(run_trace(&r, path, &uo), ETL_E_RANGE);
    assert_int_equal(etl_usage_intervals(&r.u, r.end_ns, &n, &win, &fit), ETL_USAGE_MAX_BUCKETS);
    run_free(&r);
    for (int64_t l = fit; l < fit + 4; l++) {
        uo.interval_ns = l;
        assert_int_equal(run_trace(&r, path, &uo), ETL_OK);
        assert_true(r.u.nbuckets <= ETL_USAGE_MAX_BUCKETS);
        int64_t bs, be;
        etl_usage_interval_bounds(&r.u, 0, &bs, &be);
        assert_int_equal(bs, 3);
        assert_int_equal(be, l);
        run_free(&r);
    }
    /* Fewer past 167 CPUs: 2^24 (interval, CPU) cells. */
    assert_int_equal(etl_usage_max_intervals(4), ETL_USAGE_MAX_BUCKETS);
    assert_int_equal(etl_usage_max_intervals(256), ETL_USAGE_MAX_CPU_CELLS / 256);
}

/* A run CPU by CPU has no intervals: asking for them is an error, not empty intervals. */
static void test_percpu_refused(void **state)
{
    (void)state;
    char path[1024];
    path_of(path, sizeof path, traces[0]);
    etl_reader *rd;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &rd, &d), ETL_OK);
    etl_usage u;
    etl_usage_options uo = {.sz = sizeof uo, .interval_ns = 1000000, .no_latency = true};
    assert_int_equal(etl_usage_init(&u, NULL, &uo), ETL_OK);
    etl_sched_percpu_consumer c;
    etl_usage_percpu(&u, &c);
    etl_sched_percpu_options po = {.sz = sizeof po, .bias = -1, .threads = 1};
    etl_sched_percpu_result res;
    assert_int_equal(etl_sched_percpu_run(rd, &po, &c, &res), ETL_OK);
    assert_int_equal(etl_usage_finish(&u, etl_clock_ns(etl_reader_clock(rd), res.end_ts)), ETL_E_UNSUPPORTED);
    etl_usage_free(&u);
    etl_sched_close(res.model);
    etl_reader_close(rd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dense_answer),
        cmocka_unit_test(test_adopted_threads),
        cmocka_unit_test(test_refused),
        cmocka_unit_test(test_percpu_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

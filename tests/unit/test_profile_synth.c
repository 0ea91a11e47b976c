/*
 * test_profile_synth.c - etl_profile_run against the simulator's ground truth.
 *
 * synth --stacks knows every sample it logs: its thread, process, InstructionPointer,
 * the module holding it, and the whole stack its walks carry (plain or by key,
 * kernel and user parts, user parts deferred, keys reused). For several machines
 * (64- and 32-bit, each walk form, compressed buffers, a churn of threads and
 * images), the profile of the trace must give exactly that: the samples, those with
 * a stack, those in no module, per thread, per process and per module, the interval,
 * and each sample's stack frame for frame (as the multiset of (thread, stack)).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/profile.h"
#include "etlkit/synth.h"
#include "profcmp.h"

/* One truth sample as a comparable line: "tid pid walked frame,frame,..." (the IP alone without a walk). */
typedef struct truth {
    char **lines;
    size_t n, cap;
    char **modules;              /* the module of each sample's IP ("Unknown" for none) */
    uint32_t interval;
} truth;

static char *stack_line(uint32_t tid, uint32_t pid, bool walked, const uint64_t *f, uint32_t n)
{
    size_t cap = 64 + (size_t)n * 20, o = 0;
    char *s = malloc(cap);
    assert_non_null(s);
    o += (size_t)snprintf(s + o, cap - o, "%u %u %d ", tid, pid, walked);
    for (uint32_t i = 0; i < n; i++) o += (size_t)snprintf(s + o, cap - o, "%s%llx", i ? "," : "", (unsigned long long)f[i]);
    return s;
}

static int capture(void *ctx, const etl_synth_rec *rec)
{
    truth *t = ctx;
    if (rec->type == ETL_SYNTH_REC_META) t->interval = rec->u.meta.profile_interval;
    if (rec->type != ETL_SYNTH_REC_SAMPLE) return 0;
    const etl_synth_sample *s = &rec->u.sample;
    if (t->n == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 1024;
        t->lines = realloc(t->lines, t->cap * sizeof *t->lines);
        t->modules = realloc(t->modules, t->cap * sizeof *t->modules);
        assert_true(t->lines && t->modules);
    }
    /* The idle thread is process 0 whatever the simulator calls it. */
    t->lines[t->n] = s->depth ? stack_line(s->tid, s->tid ? s->pid : 0, true, s->stack, s->depth)
                              : stack_line(s->tid, s->tid ? s->pid : 0, false, &s->ip, 1);
    t->modules[t->n] = strdup(s->module ? s->module : "Unknown");
    t->n++;
    return 0;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* How many of sorted v[0, n) equal s. */
static size_t count_of(char **v, size_t n, const char *s)
{
    size_t c = 0;
    for (size_t i = 0; i < n; i++) c += !strcmp(v[i], s);
    return c;
}

static void check(const char *const *opts)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/etlkit-profile-synth-%d.etl", (int)getpid());
    etl_synth_options o;
    etl_synth_options_init(&o);
    etl_diag d;
    assert_int_equal(etl_synth_set(&o, "stacks", NULL, &d), ETL_OK);
    for (const char *const *p = opts; *p; p += 2)
        if (etl_synth_set(&o, p[0], p[1], &d) != ETL_OK) fail_msg("--%s %s: %s", p[0], p[1] ? p[1] : "", d.msg);
    truth t = {0};
    o.on_truth = capture;
    o.truth_ctx = &t;
    etl_synth_summary sum;
    assert_int_equal(etl_synth_run(path, &o, &sum, &d), ETL_OK);
    assert_true(t.n > 100);

    etl_reader *r;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_profile p;
    etl_profile_options po = {.sz = sizeof po, .pid = -1, .tid = -1};
    assert_int_equal(etl_profile_run(r, &po, &p), ETL_OK);
    profcmp_no_stacks(r, &po, &p);

    /* Totals. */
    size_t walked = 0, unknown = 0;
    for (size_t i = 0; i < t.n; i++) {
        walked += strstr(t.lines[i], " 1 ") != NULL;
        unknown += !strcmp(t.modules[i], "Unknown");
    }
    assert_int_equal(p.samples, t.n);
    assert_int_equal(p.samples_in_trace, t.n);
    assert_int_equal(p.with_stack, walked);
    assert_int_equal(p.unknown, unknown);
    assert_true(unknown > 0 && walked < t.n && walked > t.n / 2); /* the machine exercises both */
    assert_true(p.interval_logged);
    assert_int_equal(p.interval_ns, (int64_t)t.interval * 100);
    assert_int_equal(p.key_refs_unresolved, 0);
    assert_int_equal(p.user_parts_dropped, 0);
    assert_false(etl_stats_damaged(&p.st));

    /* Every (thread, stack) group of the profile is that many truth samples, and they add up. */
    qsort(t.lines, t.n, sizeof *t.lines, cmp_str);
    uint64_t total = 0;
    for (size_t i = 0; i < p.nstacks; i++) {
        const etl_profile_stack *s = &p.stacks[i];
        const etl_profile_thread *th = &p.threads[s->thread];
        uint32_t n;
        const etl_profile_frame *f = etl_profile_stack_frames(&p, s->stack, &n);
        uint64_t addr[2 * ETL_STACK_MAX_FRAMES];
        for (uint32_t k = 0; k < n; k++) addr[k] = f[k].address;
        char *line = stack_line(th->tid, th->pid, s->walked, addr, n);
        size_t want = count_of(t.lines, t.n, line);
        if (want != s->samples) fail_msg("stack %s: %zu samples in the truth, %llu in the profile", line, want,
                                         (unsigned long long)s->samples);
        free(line);
        total += s->samples;
    }
    assert_int_equal(total, t.n);

    /* Per module: the truth's module of each IP. */
    for (size_t m = 0; m < p.nmodules; m++) {
        size_t want = 0;
        for (size_t i = 0; i < t.n; i++) want += !strcmp(t.modules[i], p.modules[m].name);
        if (want != p.modules[m].samples)
            fail_msg("module %s: %zu samples in the truth, %llu in the profile", p.modules[m].name, want,
                     (unsigned long long)p.modules[m].samples);
    }
    /* Per thread and per process: from the lines' "tid pid". */
    for (size_t i = 0; i < p.nthreads; i++) {
        char prefix[32];
        int len = snprintf(prefix, sizeof prefix, "%u %u ", p.threads[i].tid, p.threads[i].pid);
        uint64_t want = 0;
        for (size_t k = 0; k < t.n; k++) want += !strncmp(t.lines[k], prefix, (size_t)len);
        assert_int_equal(p.threads[i].samples, want);
    }
    for (size_t i = 0; i < p.nprocesses; i++) {
        uint64_t want = 0;
        for (size_t k = 0; k < t.n; k++) {
            unsigned tid, pid;
            assert_int_equal(sscanf(t.lines[k], "%u %u", &tid, &pid), 2);
            want += pid == p.processes[i].pid;
        }
        assert_int_equal(p.processes[i].samples, want);
    }

    etl_profile_free(&p);
    etl_reader_close(r);
    for (size_t i = 0; i < t.n; i++) {
        free(t.lines[i]);
        free(t.modules[i]);
    }
    free(t.lines);
    free(t.modules);
    unlink(path);
}

static void test_64_both(void **state)
{
    (void)state;
    static const char *const o[] = {"duration", "0.5", "seed", "5", "churn", "60", NULL};
    check(o);
}

static void test_64_cached_compressed(void **state)
{
    (void)state;
    static const char *const o[] = {"duration", "0.4", "seed", "7", "stack-form", "cached", "compress", NULL,
                                    "cpus", "8", NULL};
    check(o);
}

static void test_32_plain(void **state)
{
    (void)state;
    static const char *const o[] = {"duration", "0.4", "seed", "9", "pointer-size", "32", "stack-form", "plain",
                                    "profile-interval", "5000", NULL};
    check(o);
}

static void test_32_cached_cycles(void **state)
{
    (void)state;
    static const char *const o[] = {"duration", "0.4", "seed", "11", "pointer-size", "32", "stack-form", "cached",
                                    "clock", "cycles", NULL};
    check(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_64_both),
        cmocka_unit_test(test_64_cached_compressed),
        cmocka_unit_test(test_32_plain),
        cmocka_unit_test(test_32_cached_cycles),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * reports_cli.c - the scheduler reports through the CLI, as a script would use them.
 *
 *   reports_cli ETLKIT SAMPLES_DIR
 *
 * On synthesized traces (full and compact): the fixed --json keys are there; busy +
 * idle + unknown = CPUs x window on every CPU; threads and processes add up to the
 * busy time; a window split in two adds up to the whole, to the nanosecond; the
 * --interval columns add up to the busy time; waits by reason add up to the
 * threads' waits; `switches` has one row per switch-in and its CPU Usage (in view)
 * adds up to CPUs x window; --csv writes WPA's headers with a BOM and CRLF. On the
 * real samples (no switches): one line, exit 0, and an empty --json report.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

static const char *cli, *samples;
static char full[512], compact[512];

/* Runs etlkit with args; returns its stdout (malloc'd) and exit status. */
static char *run(const char *args, int *status)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", cli, args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 4096) buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    int st = pclose(f);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

static json_t *run_json(const char *args)
{
    int st;
    char *out = run(args, &st);
    if (st != 0) fail_msg("etlkit %s: exit %d", args, st);
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    if (!j) fail_msg("etlkit %s: invalid JSON: %s", args, err.text);
    free(out);
    return j;
}

static json_int_t num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) fail_msg("key '%s' missing or not an integer", key);
    return json_integer_value(v);
}

static void has_keys(json_t *o, const char *keys)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", keys);
    for (char *k = strtok(buf, " "); k; k = strtok(NULL, " "))
        if (!json_object_get(o, k)) fail_msg("key '%s' missing", k);
}

static int setup(void **state)
{
    (void)state;
    const char *dir = getenv("TMPDIR");
    snprintf(full, sizeof full, "%s/etlkit-reports-%d-full.etl", dir && *dir ? dir : "/tmp", (int)getpid());
    snprintf(compact, sizeof compact, "%s/etlkit-reports-%d-compact.etl", dir && *dir ? dir : "/tmp", (int)getpid());
    char args[1200];
    int st;
    snprintf(args, sizeof args, "synth --seed 5 --cpus 4 --duration 0.5 -o '%s'", full);
    free(run(args, &st));
    if (st) return -1;
    snprintf(args, sizeof args, "synth --seed 5 --cpus 4 --duration 0.5 --cswitch compact --compress -o '%s'", compact);
    free(run(args, &st));
    return st ? -1 : 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(full);
    unlink(compact);
    return 0;
}

/* cpu --json: keys and the totals that must add up. */
static void cpu_totals(const char *path)
{
    char args[700];
    snprintf(args, sizeof args, "cpu --json '%s'", path);
    json_t *j = run_json(args);
    has_keys(j, "window cpus processes threads busy_ns idle_ns anomalies");
    json_t *w = json_object_get(j, "window");
    json_int_t window = num(w, "end_ns") - num(w, "start_ns");
    assert_true(window > 0);
    size_t i;
    json_t *v;
    json_int_t busy = 0, ncpu = 0;
    json_array_foreach(json_object_get(j, "cpus"), i, v) {
        has_keys(v, "cpu busy_ns idle_ns switches");
        assert_int_equal(num(v, "busy_ns") + num(v, "idle_ns") + num(v, "unknown_ns"), window);
        busy += num(v, "busy_ns");
        ncpu++;
    }
    assert_int_equal(ncpu, 4);
    assert_int_equal(busy, num(j, "busy_ns"));
    json_int_t tsum = 0, psum = 0;
    json_array_foreach(json_object_get(j, "threads"), i, v) {
        has_keys(v, "tid pid process name cpu_ns switches first_ns last_ns");
        tsum += num(v, "cpu_ns");
    }
    json_array_foreach(json_object_get(j, "processes"), i, v) {
        has_keys(v, "pid name cpu_ns switches threads");
        psum += num(v, "cpu_ns");
    }
    assert_int_equal(tsum, busy);
    assert_int_equal(psum, busy);
    json_decref(j);
}

static void test_cpu_totals(void **state)
{
    (void)state;
    cpu_totals(full);
    cpu_totals(compact);
}

/* [0, 200ms) + [200ms, end) = the whole, per thread, to the nanosecond. */
static void test_range_split(void **state)
{
    (void)state;
    char args[700];
    snprintf(args, sizeof args, "cpu --json '%s'", full);
    json_t *all = run_json(args);
    json_int_t end = num(json_object_get(all, "window"), "end_ns");
    snprintf(args, sizeof args, "cpu --json --range 0 200ms '%s'", full);
    json_t *a = run_json(args);
    snprintf(args, sizeof args, "cpu --json --range 200000000ns %lldns '%s'", (long long)end, full);
    json_t *b = run_json(args);
    assert_int_equal(num(json_object_get(a, "window"), "end_ns"), 200000000);
    size_t i, k;
    json_t *v, *x;
    json_int_t checked = 0;
    json_array_foreach(json_object_get(all, "threads"), i, v) {
        json_int_t tid = num(v, "tid"), sum = 0;
        json_array_foreach(json_object_get(a, "threads"), k, x) if (num(x, "tid") == tid) sum += num(x, "cpu_ns");
        json_array_foreach(json_object_get(b, "threads"), k, x) if (num(x, "tid") == tid) sum += num(x, "cpu_ns");
        assert_int_equal(sum, num(v, "cpu_ns"));
        checked++;
    }
    assert_true(checked > 10);
    assert_int_equal(num(a, "busy_ns") + num(b, "busy_ns"), num(all, "busy_ns"));
    assert_int_equal(num(a, "idle_ns") + num(b, "idle_ns"), num(all, "idle_ns"));
    json_decref(all);
    json_decref(a);
    json_decref(b);
}

static void test_intervals(void **state)
{
    (void)state;
    char args[700];
    snprintf(args, sizeof args, "cpu --json --interval 100ms '%s'", full);
    json_t *j = run_json(args);
    size_t i;
    json_t *v;
    json_int_t sum = 0, n = 0;
    json_array_foreach(json_object_get(j, "intervals"), i, v) {
        has_keys(v, "start_ns end_ns busy_ns cpus processes");
        assert_true(num(v, "end_ns") - num(v, "start_ns") <= 100000000);
        sum += num(v, "busy_ns");
        n++;
    }
    assert_int_equal(n, 6); /* 0.5 s of simulation plus the rundown: 6 columns of 100 ms */
    assert_int_equal(sum, num(j, "busy_ns"));
    json_decref(j);
    /* The text output shows the same columns as a table of busy shares. */
    int st;
    snprintf(args, sizeof args, "cpu --interval 100ms '%s'", full);
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    char *tab = strstr(out, "Busy share per interval");
    assert_non_null(tab);
    unsigned rows = 0;
    for (char *p = strchr(tab, '\n'); p && p[1] == ' '; p = strchr(p + 1, '\n')) rows++;
    assert_int_equal(rows, 1 + 6); /* the heading and one row an interval */
    free(out);
}

static void test_waits(void **state)
{
    (void)state;
    char args[700];
    snprintf(args, sizeof args, "waits --json --top 0 '%s'", compact);
    json_t *j = run_json(args);
    has_keys(j, "window threads by_reason longest_waits longest_ready ready");
    size_t i;
    json_t *v;
    json_int_t tw = 0, rw = 0, tc = 0, rc = 0;
    json_array_foreach(json_object_get(j, "threads"), i, v) {
        has_keys(v, "tid pid process name ready_count ready_ns ready_p50_ns ready_p90_ns ready_p99_ns ready_max_ns "
                    "wait_count wait_ns woken_count");
        assert_true(num(v, "ready_p50_ns") <= num(v, "ready_p90_ns"));
        assert_true(num(v, "ready_p99_ns") <= num(v, "ready_max_ns"));
        tw += num(v, "wait_ns");
        tc += num(v, "wait_count");
    }
    json_array_foreach(json_object_get(j, "by_reason"), i, v) {
        has_keys(v, "code reason count wait_ns max_ns");
        rw += num(v, "wait_ns");
        rc += num(v, "count");
    }
    assert_true(tc > 0);
    assert_int_equal(tw, rw);
    assert_int_equal(tc, rc);
    json_t *lw = json_object_get(j, "longest_waits");
    assert_true(json_array_size(lw) > 0);
    has_keys(json_array_get(lw, 0), "tid cpu start_ns duration_ns reason readier");
    json_decref(j);
}

/* switches: one row per switch-in; their in-view usage covers every CPU's window exactly. */
static void test_switches(void **state)
{
    (void)state;
    char args[700];
    snprintf(args, sizeof args, "cpu --json '%s'", full);
    json_t *cpu = run_json(args);
    json_int_t window = num(json_object_get(cpu, "window"), "end_ns"), nsw = 0;
    size_t i;
    json_t *v;
    json_array_foreach(json_object_get(cpu, "cpus"), i, v) nsw += num(v, "switches");
    snprintf(args, sizeof args, "switches --json '%s'", full);
    int st;
    char *out = run(args, &st);
    assert_int_equal(st, 0);
    json_int_t rows = 0, usage = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
        json_error_t err;
        json_t *r = json_loads(line, 0, &err);
        if (!r) fail_msg("switches: invalid JSON line: %s", err.text);
        if (!json_object_get(r, "head")) rows++;
        usage += num(r, "cpu_usage_in_view_ns");
        json_decref(r);
    }
    free(out);
    assert_int_equal(rows, nsw);
    assert_int_equal(usage, 4 * window);
    snprintf(args, sizeof args, "switches --csv '%s'", full);
    out = run(args, &st);
    assert_int_equal(st, 0);
    assert_memory_equal(out, "\xEF\xBB\xBF" "CPU,New Process,New Thread Id", 32);
    assert_non_null(strstr(out, "Switch-In Time (s)"));
    assert_non_null(strstr(out, "Ready (\xC2\xB5s)"));
    assert_non_null(strstr(out, "\r\n"));
    free(out);
    json_decref(cpu);
}

/* The real samples have no switches: a line that says so, exit 0, an empty --json report. */
static void test_samples(void **state)
{
    (void)state;
    static const char *const cmds[] = {"cpu", "waits", "switches"};
    char args[1200];
    for (unsigned c = 0; c < 3; c++) {
        int st;
        snprintf(args, sizeof args, "%s '%s/kernel-shutdown-x64.etl'", cmds[c], samples);
        char *out = run(args, &st);
        assert_int_equal(st, 0);
        assert_non_null(strstr(out, "no context switches"));
        free(out);
    }
    snprintf(args, sizeof args, "cpu --json '%s/lxcore-x64.etl'", samples);
    json_t *j = run_json(args);
    assert_int_equal(json_array_size(json_object_get(j, "threads")), 0);
    json_decref(j);
}

static void test_usage_errors(void **state)
{
    (void)state;
    static const char *const bad[] = {"cpu", "cpu --range 1", "cpu --range 2 1 x.etl", "cpu --range 1parsec 2 x.etl",
                                      "waits --longest 0 x.etl", "cpu --interval 0 x.etl", "switches --bogus x.etl",
                                      "cpu --max-wait-reason 0 x.etl", "cpu a.etl b.etl"};
    for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int st;
        free(run(bad[i], &st));
        if (st != 64) fail_msg("etlkit %s: exit %d, want 64", bad[i], st);
    }
    int st;
    free(run("cpu /nonexistent.etl", &st));
    assert_int_equal(st, 1);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: reports_cli ETLKIT SAMPLES_DIR\n");
        return 2;
    }
    cli = argv[1];
    samples = argv[2];
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_cpu_totals), cmocka_unit_test(test_range_split), cmocka_unit_test(test_intervals),
        cmocka_unit_test(test_waits),      cmocka_unit_test(test_switches),    cmocka_unit_test(test_samples),
        cmocka_unit_test(test_usage_errors),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

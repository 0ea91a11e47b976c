/*
 * golden.c - the CLI over one real sample against what an independent decoder
 * read in it (../shared/expected, made with dissect.etl).
 *
 *   golden ETLKIT SAMPLE EXPECTED_DIR
 *
 * 1. `etlkit dump --order file --format jsonl` agrees with NAME.events.jsonl.gz on
 *    every key the expected line has, for every record, and has as many records.
 * 2. `etlkit info --json` carries every key of NAME.header.json with the same value.
 * 3. `etlkit dump --order time` yields the same records, each CPU's in
 *    non-decreasing time and the whole stream in non-decreasing time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include <zlib.h>

static const char *cli, *sample, *expected_dir, *name;

static FILE *run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s'", cli, args, sample);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    return f;
}

static void check_exit(FILE *f)
{
    int st = pclose(f);
    assert_int_equal(st, 0);
}

static json_t *parse_line(const char *line, size_t lineno, const char *what)
{
    json_error_t err;
    json_t *j = json_loads(line, 0, &err);
    if (!j) fail_msg("%s line %zu: invalid JSON: %s", what, lineno, err.text);
    return j;
}

/* Every key of `want` is in `got` with an equal value. */
static void same_keys(json_t *want, json_t *got, const char *where, size_t lineno)
{
    const char *key;
    json_t *v;
    json_object_foreach(want, key, v) {
        json_t *g = json_object_get(got, key);
        if (!g) fail_msg("%s %zu: key '%s' missing", where, lineno, key);
        if (!json_equal(v, g)) {
            char *a = json_dumps(v, JSON_ENCODE_ANY), *b = json_dumps(g, JSON_ENCODE_ANY);
            fail_msg("%s %zu: key '%s': expected %s, got %s", where, lineno, key, a, b);
        }
    }
}

static void test_file_order(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.events.jsonl.gz", expected_dir, name);
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    FILE *f = run("dump --order file --format jsonl");
    static char want_line[1 << 16], got_line[1 << 16];
    size_t n = 0;
    for (;;) {
        char *w = gzgets(gz, want_line, sizeof want_line);
        char *g = fgets(got_line, sizeof got_line, f);
        if (!w && !g) break;
        n++;
        if (!w) fail_msg("record %zu: etlkit has more records than expected", n);
        if (!g) fail_msg("record %zu: etlkit stopped before the expected records ended", n);
        json_t *jw = parse_line(w, n, "expected"), *jg = parse_line(g, n, "etlkit");
        same_keys(jw, jg, "record", n);
        json_decref(jw);
        json_decref(jg);
    }
    gzclose(gz);
    check_exit(f);
    print_message("%s: %zu records match\n", name, n);
}

static void test_info(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.header.json", expected_dir, name);
    json_error_t err;
    json_t *want = json_load_file(path, 0, &err);
    assert_non_null(want);
    FILE *f = run("info --json");
    json_t *got = json_loadf(f, 0, &err);
    if (!got) fail_msg("info --json: invalid JSON: %s", err.text);
    check_exit(f);
    same_keys(want, got, "info --json key set", 0);
    /* A clean sample has no recovery counter set. */
    json_t *rec = json_object_get(got, "recovery");
    assert_non_null(rec);
    assert_int_equal(json_integer_value(json_object_get(rec, "bad_buffers")), 0);
    assert_int_equal(json_integer_value(json_object_get(rec, "bad_records")), 0);
    json_decref(want);
    json_decref(got);
}

static void test_time_order(void **state)
{
    (void)state;
    FILE *f = run("dump --order time --format jsonl");
    static char line[1 << 16];
    static long long cpu_last[4096];
    for (size_t i = 0; i < 4096; i++) cpu_last[i] = -1;
    long long last = -1;
    size_t n = 0, file_n = 0;
    while (fgets(line, sizeof line, f)) {
        n++;
        json_t *j = parse_line(line, n, "etlkit");
        json_t *ts = json_object_get(j, "ts");
        long long cpu = json_integer_value(json_object_get(j, "cpu"));
        assert_true(cpu >= 0 && cpu < 4096);
        if (ts) {
            long long t = json_integer_value(ts);
            if (t < cpu_last[cpu]) fail_msg("record %zu: cpu %lld goes back in time (%lld < %lld)", n, cpu, t, cpu_last[cpu]);
            if (t < last) fail_msg("record %zu: merged stream goes back in time (%lld < %lld)", n, t, last);
            cpu_last[cpu] = t;
            last = t;
        }
        json_decref(j);
    }
    check_exit(f);
    f = run("dump --order file --format jsonl");
    while (fgets(line, sizeof line, f)) file_n++;
    check_exit(f);
    assert_int_equal(n, file_n);
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: golden ETLKIT SAMPLE EXPECTED_DIR\n");
        return 2;
    }
    cli = argv[1];
    sample = argv[2];
    expected_dir = argv[3];
    name = strrchr(sample, '/') ? strrchr(sample, '/') + 1 : sample;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_file_order),
        cmocka_unit_test(test_info),
        cmocka_unit_test(test_time_order),
    };
    return cmocka_run_group_tests_name(name, tests, NULL, NULL);
}

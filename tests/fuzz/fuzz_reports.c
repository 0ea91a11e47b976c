/*
 * fuzz_reports.c - every report of the command line on arbitrary bytes, end to end: the
 * model, each report's aggregation and its text, JSON and CSV writers, run in process as
 * `etlkit <cmd> FILE [--json|--csv]` would run them. Besides crashes, leaks and undefined
 * behaviour, it checks what a user relies on:
 *   - every JSON output parses (jansson) and no "*_ns" number in it is negative (but the times
 *     of events, which may precede the trace's start);
 *   - in `cpu --json`, each CPU's busy + idle + unknown is the window's length, and the
 *     window is never negative;
 *   - every CSV row has the header's column count (RFC 4180 quoting);
 *   - text outputs carry no control byte but newline (names from the trace are escaped).
 * The first byte picks the command and its options (--range, --top, --threads, --interval); the
 * rest is the file.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "common.h"

static char in_path[64], out_path[64];
static int quiet = -1; /* a descriptor on /dev/null for the commands' stderr; -1: keep it */

static void paths(void)
{
    if (in_path[0]) return;
    snprintf(in_path, sizeof in_path, "/tmp/fuzz_reports-%d.etl", (int)getpid());
    snprintf(out_path, sizeof out_path, "/tmp/fuzz_reports-%d.out", (int)getpid());
    /*
     * The commands' warnings would bury the fuzzer's own lines: they go to /dev/null while a
     * command runs. To see a crash's report when reproducing it, set FUZZ_REPORTS_STDERR=1.
     */
    if (!getenv("FUZZ_REPORTS_STDERR")) quiet = open("/dev/null", O_WRONLY);
}

/* Runs fn(argv) with stdout into out_path (and stderr quiet); its exit status. */
static int run(int (*fn)(int, char **), char **argv)
{
    int argc = 0;
    while (argv[argc]) argc++;
    fflush(stdout);
    fflush(stderr);
    int saved = dup(1), saved_err = quiet >= 0 ? dup(2) : -1;
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (saved < 0 || fd < 0) abort();
    dup2(fd, 1);
    close(fd);
    if (saved_err >= 0) dup2(quiet, 2);
    int rc = fn(argc, argv);
    fflush(stdout);
    clearerr(stdout);
    fflush(stderr);
    dup2(saved, 1);
    close(saved);
    if (saved_err >= 0) {
        dup2(saved_err, 2);
        close(saved_err);
    }
    return rc;
}

static const char *current = ""; /* the command being checked, for the report */

static void fail(const char *why)
{
    fprintf(stderr, "fuzz_reports: %s: %s (its output: %s)\n", current, why, out_path);
    abort();
}

static char *slurp(size_t *n)
{
    FILE *f = fopen(out_path, "rb");
    if (!f) abort();
    size_t cap = 1 << 16, len = 0;
    char *b = malloc(cap + 1);
    size_t k;
    while (b && (k = fread(b + len, 1, cap - len, f)) > 0) {
        len += k;
        if (len == cap) {
            char *c = realloc(b, 2 * cap + 1);
            if (!c) break;
            b = c;
            cap *= 2;
        }
    }
    fclose(f);
    if (!b) abort();
    b[len] = 0;
    *n = len;
    return b;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/*
 * Times of events (switches' columns) are ns from the logfile header's time and may precede it (the
 * time rule allows records from 60 s before it, as dump's `ns` says); every other "*_ns" is a
 * duration or a time in the window, never negative.
 */
static int event_time(const char *k)
{
    static const char *const times[] = {"switch_in_ns", "next_switch_out_ns", "last_switch_out_ns", "ready_time_ns",
                                        "old_switch_in_ns"};
    for (size_t i = 0; i < sizeof times / sizeof times[0]; i++)
        if (strcmp(k, times[i]) == 0) return 1;
    return 0;
}

/* No "*_ns" integer below zero anywhere in the tree (a duration or a time in the window). */
static void no_negative_ns(const json_t *v, int signed_ok)
{
    const char *k;
    json_t *x;
    size_t i;
    if (json_is_object(v)) {
        json_object_foreach((json_t *)v, k, x) {
            if (!signed_ok && json_is_number(x) && ends_with(k, "_ns") && !event_time(k) && json_number_value(x) < 0)
                fail("a negative *_ns value");
            no_negative_ns(x, signed_ok);
        }
    } else if (json_is_array(v)) {
        json_array_foreach(v, i, x) no_negative_ns(x, signed_ok);
    }
}

static json_int_t geti(const json_t *o, const char *k)
{
    json_t *x = json_object_get(o, k);
    if (!json_is_integer(x)) fail("a missing integer");
    return json_integer_value(x);
}

/* cpu --json: each CPU's parts add up to the window. */
static void cpu_adds_up(const json_t *root)
{
    json_t *w = json_object_get(root, "window"), *cpus = json_object_get(root, "cpus");
    if (!w || !json_is_array(cpus)) return; /* the no-switches object */
    json_int_t len = geti(w, "end_ns") - geti(w, "start_ns");
    if (len < 0) fail("a negative window");
    size_t i;
    json_t *c;
    json_array_foreach(cpus, i, c) {
        json_int_t sum = geti(c, "busy_ns") + geti(c, "idle_ns") + geti(c, "unknown_ns");
        if (sum != len) fail("a CPU's busy + idle + unknown is not the window");
    }
}

static void check_value(const char *cmd, json_t *root, int signed_ok)
{
    no_negative_ns(root, signed_ok);
    if (strcmp(cmd, "cpu") == 0) cpu_adds_up(root);
    json_decref(root);
}

/*
 * Parses JSON text; jansson holds integers in int64, so a u64 past it (a PMC counter, a raw
 * time) is read again as reals, which still checks the syntax and the signs.
 */
static json_t *parse(const char *p, size_t n)
{
    json_error_t e;
    json_t *v = json_loadb(p, n, 0, &e);
    if (!v && strstr(e.text, "too big integer")) v = json_loadb(p, n, JSON_DECODE_INT_AS_REAL, &e);
    if (!v) fail(e.text);
    return v;
}

/* One JSON object, or JSON lines for switches; nothing printed is fine (the status said why). */
static void check_json(const char *cmd, int signed_ok)
{
    size_t n;
    char *b = slurp(&n);
    if (strcmp(cmd, "switches") == 0) {
        for (char *p = b, *nl; p < b + n; p = nl + 1) {
            nl = memchr(p, '\n', (size_t)(b + n - p));
            if (!nl) fail("a JSON line without its newline");
            check_value(cmd, parse(p, (size_t)(nl - p)), signed_ok);
        }
    } else if (n) {
        check_value(cmd, parse(b, n), signed_ok);
    }
    free(b);
}

/* Fields of one CSV record from *p (RFC 4180); moves *p past its line end. -1 when malformed. */
static long csv_record(const char **p, const char *end)
{
    long fields = 1;
    const char *s = *p;
    int quoted = 0;
    while (s < end) {
        char ch = *s++;
        if (quoted) {
            if (ch == '"') {
                if (s < end && *s == '"') s++;
                else quoted = 0;
            }
        } else if (ch == '"') {
            quoted = 1;
        } else if (ch == ',') {
            fields++;
        } else if (ch == '\n') {
            break;
        }
    }
    *p = s;
    return quoted ? -1 : fields;
}

static void check_csv(void)
{
    size_t n;
    char *b = slurp(&n);
    const char *p = b, *end = b + n;
    if (n >= 3 && memcmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3;
    long header = -1;
    while (p < end) {
        long f = csv_record(&p, end);
        if (f < 0) fail("an unterminated quoted CSV field");
        if (header < 0) header = f;
        else if (f != header) fail("a CSV row whose column count is not the header's");
    }
    free(b);
}

static void check_text(void)
{
    size_t n;
    char *b = slurp(&n);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)b[i];
        if ((c < 0x20 && c != '\n') || c == 0x7F) fail("a control byte in text output");
    }
    free(b);
}

typedef struct cmd {
    const char *name;
    int (*fn)(int, char **);
} cmd;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    paths();
    uint8_t sel = data[0];
    FILE *f = fopen(in_path, "wb");
    if (!f) abort();
    if (fwrite(data + 1, 1, size - 1, f) != size - 1) abort();
    fclose(f);
    static const cmd cmds[] = {{"cpu", cmd_cpu},           {"waits", cmd_waits}, {"switches", cmd_switches},
                               {"spinlocks", cmd_spinlocks}, {"pmc", cmd_pmc},     {"wakeups", cmd_wakeups}};
    /*
     * The first byte: its low five bits the options (a range, its end, two threads, a top, an interval
     * for cpu), its high three which command (0-5 one of cmds in its three formats, 6 compare alone,
     * 7 all of them: slower, so mutations mostly run one).
     */
    unsigned which = sel >> 5;
    const char *range0 = (sel & 1) ? "1ms" : NULL, *range1 = (sel & 2) ? "3s" : "20ms";
    const char *threads = (sel & 4) ? "2" : "1";
    const char *top = (sel & 8) ? "3" : "0";
    for (size_t c = 0; c < sizeof cmds / sizeof cmds[0]; c++) {
        if (which != c && which != 7) continue;
        for (int fmt = 0; fmt < 3; fmt++) {
            char *argv[16];
            int k = 0;
            argv[k++] = (char *)cmds[c].name;
            argv[k++] = in_path;
            if (fmt == 1) argv[k++] = "--json";
            if (fmt == 2) argv[k++] = "--csv";
            if (range0) {
                argv[k++] = "--range";
                argv[k++] = (char *)range0;
                argv[k++] = (char *)range1;
            }
            argv[k++] = "--threads";
            argv[k++] = (char *)threads;
            if (strcmp(cmds[c].name, "switches") != 0) {
                argv[k++] = "--top";
                argv[k++] = (char *)top;
            }
            if (c == 0 && (sel & 16)) {
                argv[k++] = "--interval";
                argv[k++] = "1ms";
            }
            argv[k] = NULL;
            static char what[128];
            snprintf(what, sizeof what, "%s %s", cmds[c].name, fmt == 1 ? "--json" : fmt == 2 ? "--csv" : "(text)");
            current = what;
            int rc = run(cmds[c].fn, argv);
            if (rc != EXIT_OK && rc != EXIT_DAMAGED) continue; /* not an ETL file, or refused: said why */
            if (fmt == 1) check_json(cmds[c].name, 0);
            else if (fmt == 2) check_csv();
            else check_text();
        }
    }
    if (which != 6 && which != 7) return 0;
    /* compare with itself: deltas may be negative, the JSON must parse. */
    char *cargv[] = {"compare", in_path, in_path, "--json", "--allow-empty", NULL};
    current = "compare --json";
    int rc = run(cmd_compare, cargv);
    if (rc == EXIT_OK || rc == EXIT_DAMAGED) check_json("compare", 1);
    return 0;
}

/*
 * report_check.c - `etlkit report` against the --json reports.
 *
 *   report_check ETLKIT SAMPLES_DIR WORKDIR
 *
 * On synthesized traces (full with PMC counters, compact, PMC with spin locks) and a real sample: the
 * page is well formed (a strict tag balance check: every element closed in order, void elements only as
 * void, attributes quoted, one JSON block); its JSON block (id etlkit-data) holds under cpu, waits,
 * spinlocks, pmc and wakeups exactly what `etlkit <cmd> FILE --json --top N` prints (byte for byte,
 * N the page's --top, its --range, --complete-only and --max-wait-reason passed alike); its own data
 * agrees with the commands: the trace's facts with `info`, the utilisation with `cpu --interval`, the
 * ready histogram adds up to the ready count, the wait chain with `waitchain`; every section is there.
 * A real sample without context switches gives a short valid page saying so; a truncated trace gives a
 * page that shows its damage (exit 3) with info's recovery counters; a refused output (a directory, a
 * FIFO) leaves nothing behind. A trace with samples gets the flame graph section and, in the block,
 * what `etlkit profile --json` prints and the flame graph's tree; one without, neither.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include <jansson.h>

static const char *cli, *samples, *work;
static size_t decode_flags; /* jansson's: test_profile reads integers past 2^63 (Unknown's offsets) as reals */
static char full[512], compact[512], pmcspin[512];

static char *slurp_stream(FILE *f, size_t *len)
{
    size_t n = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    size_t k;
    while ((k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += k;
        if (cap - n < 4096) buf = realloc(buf, cap *= 2);
    }
    buf[n] = 0;
    if (len) *len = n;
    return buf;
}

/* Runs etlkit with args; returns its stdout (malloc'd) and exit status. */
static char *run(const char *args, int *status)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s 2>/dev/null", cli, args);
    FILE *f = popen(cmd, "r");
    assert_non_null(f);
    char *buf = slurp_stream(f, NULL);
    int st = pclose(f);
    *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    return buf;
}

static json_t *run_json(const char *fmt, ...)
{
    char args[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    int st;
    char *out = run(args, &st);
    if (st != 0 && st != 3) fail_msg("etlkit %s: exit %d", args, st);
    json_error_t err;
    json_t *j = json_loads(out, 0, &err);
    if (!j) fail_msg("etlkit %s: invalid JSON: %s", args, err.text);
    free(out);
    return j;
}

static char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    char *b = slurp_stream(f, len);
    fclose(f);
    return b;
}

/* ---- a strict well-formedness check of the page ---------------------------------------------- */

static int is_void(const char *t)
{
    static const char *const v[] = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        if (strcmp(t, v[i]) == 0) return 1;
    return 0;
}

/* Fails unless every element is closed in order; returns the number of elements. */
static size_t check_well_formed(const char *h)
{
    char stack[64][32];
    size_t depth = 0, elements = 0;
    const char *p = h;
    if (strncmp(p, "<!DOCTYPE html>", 15) != 0) fail_msg("no <!DOCTYPE html> first");
    p += 15;
    while ((p = strchr(p, '<'))) {
        if (strncmp(p, "<!--", 4) == 0) {
            const char *e = strstr(p, "-->");
            if (!e) fail_msg("unclosed comment");
            p = e + 3;
            continue;
        }
        int close = p[1] == '/';
        const char *q = p + 1 + close;
        char tag[32];
        size_t n = 0;
        while ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') || *q == '-') {
            if (n + 1 >= sizeof tag) fail_msg("tag name too long near %.40s", p);
            tag[n++] = *q++;
        }
        tag[n] = 0;
        if (!n) fail_msg("a bare '<' in text near: %.60s", p);
        /* Attributes: name="value" pairs, values quoted, no '<' inside the tag. */
        int self = 0;
        while (*q && *q != '>') {
            if (*q == '<') fail_msg("'<' inside a tag near %.60s", p);
            if (*q == '=') {
                q++;
                if (*q != '"') fail_msg("unquoted attribute value near %.60s", p);
                const char *e = strchr(q + 1, '"');
                if (!e) fail_msg("unclosed attribute value");
                if (memchr(q + 1, '<', (size_t)(e - q - 1))) fail_msg("'<' in an attribute value near %.60s", p);
                q = e + 1;
                continue;
            }
            if (*q == '/' && q[1] == '>') self = 1;
            q++;
        }
        if (!*q) fail_msg("unclosed tag at the end");
        q++;
        if (close) {
            if (!depth || strcmp(stack[depth - 1], tag) != 0)
                fail_msg("</%s> closes <%s>", tag, depth ? stack[depth - 1] : "(nothing)");
            depth--;
        } else {
            elements++;
            if (!self && !is_void(tag)) {
                if (depth == 64) fail_msg("nesting too deep");
                strcpy(stack[depth++], tag);
                /* Raw text elements: their content up to the closing tag. */
                if (strcmp(tag, "script") == 0 || strcmp(tag, "style") == 0) {
                    char end[40];
                    snprintf(end, sizeof end, "</%s>", tag);
                    const char *e = strstr(q, end);
                    if (!e) fail_msg("unclosed <%s>", tag);
                    q = e;
                }
            } else if (self && is_void(tag)) {
                fail_msg("void element <%s/> written as self-closing", tag);
            }
        }
        p = q;
    }
    if (depth) fail_msg("<%s> never closed", stack[depth - 1]);
    return elements;
}

/* The JSON block of the page, as written (escaped for HTML). */
static char *page_block(const char *html)
{
    const char *open = "<script type=\"application/json\" id=\"etlkit-data\">";
    const char *a = strstr(html, open) + strlen(open);
    const char *e = strstr(a, "</script>");
    char *b = malloc((size_t)(e - a) + 1);
    memcpy(b, a, (size_t)(e - a));
    b[e - a] = 0;
    return b;
}

/* The JSON block of the page. */
static json_t *page_data(const char *html)
{
    const char *open = "<script type=\"application/json\" id=\"etlkit-data\">";
    const char *a = strstr(html, open);
    if (!a) fail_msg("no JSON block in the page");
    if (strstr(a + 1, open)) fail_msg("two JSON blocks");
    a += strlen(open);
    const char *e = strstr(a, "</script>");
    if (!e) fail_msg("unclosed JSON block");
    json_error_t err;
    json_t *j = json_loadb(a, (size_t)(e - a), decode_flags, &err);
    if (!j) fail_msg("the JSON block does not parse: %s (line %d)", err.text, err.line);
    return j;
}

static json_t *make_page(const char *trace, const char *extra, int want_status, char **html_out, const char *name)
{
    char out[600], args[2048];
    snprintf(out, sizeof out, "%s/%s.html", work, name);
    snprintf(args, sizeof args, "report '%s' -o '%s' --force %s", trace, out, extra ? extra : "");
    int st;
    free(run(args, &st));
    if (st != want_status) fail_msg("etlkit %s: exit %d, expected %d", args, st, want_status);
    size_t len;
    char *html = slurp(out, &len);
    if (strlen(html) != len) fail_msg("a NUL byte in the page");
    check_well_formed(html);
    static const char *const ids[] = {"trace", "utilisation", "top", "ready", "waits", "locks-pmc", "wakeups-chain"};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char id[64];
        snprintf(id, sizeof id, "<section id=\"%s\"", ids[i]);
        if (!strstr(html, id)) fail_msg("section %s missing", ids[i]);
    }
    if (strstr(html, "http://") || strstr(html, "https://") || strstr(html, "src=\""))
        fail_msg("the page refers to something outside itself");
    json_t *j = page_data(html);
    if (html_out) *html_out = html;
    else free(html);
    return j;
}

/* ---- comparisons ------------------------------------------------------------------------------- */

static void same(json_t *a, const char *ka, json_t *b, const char *kb, const char *what)
{
    json_t *x = json_object_get(a, ka), *y = json_object_get(b, kb ? kb : ka);
    if (!x || !y) fail_msg("%s: key %s/%s missing (%p %p)", what, ka, kb ? kb : ka, (void *)x, (void *)y);
    if (!json_equal(x, y)) {
        char *sx = json_dumps(x, JSON_ENCODE_ANY), *sy = json_dumps(y, JSON_ENCODE_ANY);
        fail_msg("%s: %s = %.200s in the page, %.200s in the report", what, ka, sx, sy);
    }
}

static void same_keys(json_t *a, json_t *b, const char *keys, const char *what)
{
    char buf[512];
    snprintf(buf, sizeof buf, "%s", keys);
    for (char *k = strtok(buf, " "); k; k = strtok(NULL, " ")) same(a, k, b, NULL, what);
}

static json_int_t num(json_t *o, const char *key)
{
    json_t *v = json_object_get(o, key);
    if (!json_is_integer(v)) fail_msg("key '%s' missing or not an integer", key);
    return json_integer_value(v);
}

static void compare_trace(const char *trace, json_t *page)
{
    json_t *info = run_json("info --json '%s'", trace);
    json_t *t = json_object_get(page, "trace");
    same_keys(t, info, "file_size os_major os_minor os_build num_cpus cpu_mhz pointer_size clock_type clock_name "
                       "ticks_per_second start_time_utc events_lost buffers_lost records kernel_flags",
              "trace vs info");
    /* by_hook: the same counts, hook by hook */
    json_t *ph = json_object_get(t, "by_hook"), *ih = json_object_get(info, "by_hook");
    assert_int_equal(json_array_size(ph), json_array_size(ih));
    for (size_t i = 0; i < json_array_size(ph); i++) {
        same(json_array_get(ph, i), "hook", json_array_get(ih, i), NULL, "by_hook");
        same(json_array_get(ph, i), "count", json_array_get(ih, i), NULL, "by_hook");
    }
    json_t *pr = json_object_get(t, "recovery"), *ir = json_object_get(info, "recovery");
    same_keys(pr, ir, "bad_buffers bad_records skipped_bytes truncated_buffers decompress_errors unsupported_buffers",
              "recovery vs info");
    json_t *se = json_object_get(t, "scheduler_events");
    if (!num(pr, "bad_buffers")) { /* whole traces: the model read what info counts */
        same(se, "ready_thread_events", info, NULL, "scheduler events");
        same(se, "spinlock_events", info, NULL, "scheduler events");
        same(se, "thread_events", info, NULL, "scheduler events");
        same(se, "process_events", info, NULL, "scheduler events");
        same(se, "full_switches", info, "cswitch_events", "scheduler events");
        same(se, "compact_switches", info, "compact_switches", "scheduler events");
    }
    json_decref(info);
}

/* The utilisation per interval: every column of every CPU, and of the stacked processes, as `cpu --interval`. */
static void compare_utilisation(const char *trace, const char *range, json_t *page)
{
    json_t *u = json_object_get(page, "utilisation");
    json_t *cpu = run_json("cpu --json --top 0 --interval %lldns %s '%s'", (long long)num(u, "interval_ns"), range, trace);
    same(page, "window", cpu, NULL, "window");
    json_t *iv = json_object_get(cpu, "intervals");
    json_t *ucpus = json_object_get(u, "cpus");
    size_t ncols = (size_t)num(u, "intervals");
    assert_true(ncols >= 1 && ncols <= 1000);
    for (size_t b = 0; b < ncols; b++) {
        json_t *col = json_array_get(iv, b);
        for (size_t c = 0; c < json_array_size(ucpus); c++) {
            json_int_t want = col ? json_integer_value(json_array_get(json_object_get(col, "cpus"), c)) : 0;
            json_int_t got = json_integer_value(json_array_get(json_array_get(ucpus, c), b));
            if (want != got) fail_msg("interval %zu cpu %zu: %lld in the page, %lld in cpu --json", b, c, (long long)got,
                                      (long long)want);
        }
        json_t *procs = json_object_get(u, "processes");
        for (size_t j = 0; j < json_array_size(procs); j++) {
            json_t *cj = col ? json_array_get(json_object_get(col, "processes"), j) : NULL;
            json_int_t want = cj ? num(cj, "busy_ns") : 0;
            json_int_t got = json_integer_value(json_array_get(json_object_get(json_array_get(procs, j), "busy_ns"), b));
            if (want != got) fail_msg("interval %zu process %zu: %lld vs %lld", b, j, (long long)got, (long long)want);
            if (cj) same(json_array_get(procs, j), "name", cj, NULL, "interval process");
        }
    }
    json_decref(cpu);
}

/*
 * Under cpu, waits, spinlocks, pmc and wakeups the page holds what those commands print with --json
 * --top N and the page's other options: equal as JSON and, escaped as the page escapes its block, byte
 * for byte. keep_anomalies 0: spinlocks' anomaly counters are not compared (a damaged trace: the
 * command's run skips the switches, so threads only they name are unknown to it, not to the page).
 */
static void compare_commands(const char *trace, const char *opts, unsigned top, const char *html, json_t *page,
                             int keep_anomalies)
{
    static const char *const cmds[] = {"cpu", "waits", "spinlocks", "pmc", "wakeups"};
    char *block = page_block(html);
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++) {
        char args[2048];
        snprintf(args, sizeof args, "%s '%s' --json --top %u %s", cmds[i], trace, top, opts);
        int st;
        char *out = run(args, &st);
        if (st != 0 && st != 3) fail_msg("etlkit %s: exit %d", args, st);
        json_error_t err;
        json_t *want = json_loads(out, 0, &err);
        if (!want) fail_msg("etlkit %s: invalid JSON: %s", args, err.text);
        json_t *got = json_object_get(page, cmds[i]);
        if (!got) fail_msg("the page has no %s", cmds[i]);
        if (!keep_anomalies && strcmp(cmds[i], "spinlocks") == 0) {
            json_object_del(want, "anomalies");
            got = json_deep_copy(got);
            json_object_del(got, "anomalies");
        } else {
            json_incref(got);
            /* byte for byte: the member as the page wrote it */
            size_t n = strlen(out);
            if (n && out[n - 1] == '\n') out[--n] = 0;
            char *esc = malloc(6 * n + 32), *q = esc;
            q += sprintf(q, "\"%s\":", cmds[i]);
            for (size_t k = 0; k < n; k++) {
                const char *r = out[k] == '<' ? "\\u003c" : out[k] == '>' ? "\\u003e" : out[k] == '&' ? "\\u0026" : NULL;
                if (r) q += sprintf(q, "%s", r);
                else *q++ = out[k];
            }
            *q = 0;
            if (!strstr(block, esc)) fail_msg("%s: the page's member is not the bytes `etlkit %s` prints", cmds[i], args);
            free(esc);
        }
        if (!json_equal(got, want)) {
            char *sg = json_dumps(got, JSON_COMPACT), *sw = json_dumps(want, JSON_COMPACT);
            fail_msg("%s: the page holds %.300s, `etlkit %s` prints %.300s", cmds[i], sg, args, sw);
        }
        json_decref(got);
        json_decref(want);
        free(out);
    }
    free(block);
}

/* The page's own: the ready histogram holds every Ready value once; the wait chain is waitchain's. */
static void compare_own(const char *trace, json_t *page)
{
    json_int_t sum = 0;
    size_t i;
    json_t *bin;
    json_array_foreach(json_object_get(json_object_get(page, "ready"), "histogram"), i, bin) sum += num(bin, "count");
    assert_int_equal(sum, num(json_object_get(json_object_get(page, "waits"), "ready"), "ready_count"));
    json_t *c = json_object_get(page, "waitchain");
    if (!json_is_null(c)) {
        json_t *cj = run_json("waitchain --json --thread %lld --from %lldns --at %lldns --depth %lld --min %lldns '%s'",
                              (long long)num(c, "tid"), (long long)num(c, "from_ns"), (long long)num(c, "at_ns"),
                              (long long)num(c, "depth"), (long long)num(c, "min_ns"), trace);
        json_t *pp = json_object_get(c, "critical_path"), *jp = json_object_get(cj, "critical_path");
        if (!jp) fail_msg("waitchain --json has no critical_path");
        assert_true(json_array_size(pp) > 0);
        for (size_t k = 0; k < json_array_size(pp); k++) {
            json_t *a = json_array_get(pp, k), *b = json_array_get(jp, k);
            same_keys(a, b, "tid state depth", "critical path");
            same(a, "ns", b, NULL, "critical path");
        }
        json_decref(cj);
    }
}

/* ---- tests --------------------------------------------------------------------------------------- */

static void synth_page(const char *trace, const char *name)
{
    char *html;
    json_t *page = make_page(trace, "--title 'Synth <test> & \"quotes\"'", 0, &html, name);
    assert_true(json_is_true(json_object_get(page, "has_switches")));
    assert_string_equal(json_string_value(json_object_get(page, "title")), "Synth <test> & \"quotes\"");
    assert_non_null(strstr(html, "<title>Synth &lt;test&gt; &amp; &quot;quotes&quot;</title>"));
    assert_non_null(strstr(html, "No damage"));
    compare_trace(trace, page);
    compare_utilisation(trace, "", page);
    compare_commands(trace, "", 25, html, page, 1);
    compare_own(trace, page);
    /* about 500 columns, never more */
    json_int_t cols = num(json_object_get(page, "utilisation"), "intervals");
    assert_true(cols >= 150 && cols <= 501);
    free(html);
    json_decref(page);
}

static void test_full(void **state)
{
    (void)state;
    synth_page(full, "full");
}

static void test_compact(void **state)
{
    (void)state;
    synth_page(compact, "compact");
}

static void test_pmc_spinlocks(void **state)
{
    (void)state;
    synth_page(pmcspin, "pmcspin");
    /* --top, and the options the page passes on to the reports */
    char *html;
    json_t *page = make_page(pmcspin, "--top 3 --complete-only --max-wait-reason 30", 0, &html, "pmcspin-opts");
    assert_true(json_integer_value(json_object_get(json_object_get(page, "spinlocks"), "events")) > 0);
    assert_true(json_integer_value(json_object_get(json_object_get(page, "pmc"), "switches_with_pmc")) > 0);
    compare_commands(pmcspin, "--complete-only --max-wait-reason 30", 3, html, page, 1);
    free(html);
    json_decref(page);
}

static void test_range(void **state)
{
    (void)state;
    char *html;
    json_t *page = make_page(full, "--range 0.5 1250ms --top 7", 0, &html, "range");
    json_t *w = json_object_get(page, "window");
    assert_int_equal(num(w, "start_ns"), 500000000);
    assert_int_equal(num(w, "end_ns"), 1250000000);
    compare_utilisation(full, "--range 0.5 1250ms", page);
    compare_commands(full, "--range 0.5 1250ms", 7, html, page, 1);
    compare_own(full, page);
    free(html);
    json_decref(page);
}

static void test_no_switches(void **state)
{
    (void)state;
    char trace[600], *html;
    snprintf(trace, sizeof trace, "%s/kernel-shutdown-x64.etl", samples);
    if (access(trace, R_OK) != 0) skip();
    json_t *page = make_page(trace, NULL, 0, &html, "noswitch");
    assert_true(json_is_false(json_object_get(page, "has_switches")));
    assert_non_null(strstr(html, "No context switches in this trace"));
    assert_null(json_object_get(page, "utilisation"));
    assert_true(strlen(html) < 200000); /* short */
    compare_trace(trace, page);
    compare_commands(trace, "", 25, html, page, 1);
    free(html);
    json_decref(page);
}

/* The member name of the page's block is, byte for byte, what `etlkit ARGS` prints (escaped as the page escapes). */
static void same_bytes(const char *html, const char *name, const char *args)
{
    int st;
    char *out = run(args, &st);
    if (st != 0 && st != 3) fail_msg("etlkit %s: exit %d", args, st);
    size_t n = strlen(out);
    if (n && out[n - 1] == '\n') out[--n] = 0;
    char *esc = malloc(6 * n + 64), *q = esc, *block = page_block(html);
    q += sprintf(q, "\"%s\":", name);
    for (size_t k = 0; k < n; k++) {
        const char *r = out[k] == '<' ? "\\u003c" : out[k] == '>' ? "\\u003e" : out[k] == '&' ? "\\u0026" : NULL;
        if (r) q += sprintf(q, "%s", r);
        else *q++ = out[k];
    }
    *q = 0;
    if (!strstr(block, esc)) fail_msg("%s: the page's member is not the bytes `etlkit %s` prints", name, args);
    free(esc);
    free(block);
    free(out);
}

/*
 * A trace with samples: section 8 and its data, "profile" as `etlkit profile --json --top 25` prints it
 * (with --range too), "flame" a tree of the samples: the root holds them all, each node's children
 * hold at most its samples (the processes exactly all), parents come first. Without samples: neither.
 */
static void test_profile(void **state)
{
    (void)state;
    char trace[600], args[2048], *html;
    snprintf(trace, sizeof trace, "%s/perfview-x64-compressed.etl", samples);
    if (access(trace, R_OK) != 0) skip();
    static const char *const ranges[] = {"", "--range 2 5"};
    decode_flags = JSON_DECODE_INT_AS_REAL;
    for (size_t r = 0; r < 2; r++) {
        json_t *page = make_page(trace, ranges[r], 0, &html, r ? "profile-range" : "profile");
        if (!strstr(html, "<section id=\"flame\"")) fail_msg("no flame graph section");
        snprintf(args, sizeof args, "profile '%s' --json --top 25 %s", trace, ranges[r]);
        same_bytes(html, "profile", args);
        json_t *prof = json_object_get(page, "profile"), *fl = json_object_get(page, "flame");
        json_t *nodes = json_object_get(fl, "nodes");
        json_int_t total = (json_int_t)json_number_value(json_object_get(prof, "samples"));
        assert_true(total > 0);
        assert_int_equal((json_int_t)json_number_value(json_object_get(fl, "samples")), total);
        size_t n = json_array_size(nodes);
        assert_true(n > 10);
        json_int_t *kids = calloc(n, sizeof *kids);
        for (size_t i = 0; i < n; i++) {
            json_t *e = json_array_get(nodes, i);
            json_int_t parent = (json_int_t)json_number_value(json_array_get(e, 0)),
                       v = (json_int_t)json_number_value(json_array_get(e, 1));
            const char *label = json_string_value(json_array_get(e, 2));
            if (!label || !label[0]) fail_msg("node %zu: no label", i);
            if (i == 0) {
                assert_int_equal(parent, -1);
                assert_int_equal(v, total);
                continue;
            }
            if (parent < 0 || (size_t)parent >= i) fail_msg("node %zu: parent %lld not before it", i, (long long)parent);
            if (v <= 0) fail_msg("node %zu: %lld samples", i, (long long)v);
            kids[parent] += v;
        }
        assert_int_equal(kids[0], total); /* every sample has a process */
        for (size_t i = 0; i < n; i++) {
            json_int_t v = (json_int_t)json_number_value(json_array_get(json_array_get(nodes, i), 1));
            if (kids[i] > v) fail_msg("node %zu: children hold %lld samples, it %lld", i, (long long)kids[i], (long long)v);
        }
        free(kids);
        free(html);
        json_decref(page);
    }
    decode_flags = 0;
    json_t *page = make_page(compact, NULL, 0, &html, "no-profile");
    assert_null(json_object_get(page, "profile"));
    assert_null(json_object_get(page, "flame"));
    assert_null(strstr(html, "<section id=\"flame\""));
    free(html);
    json_decref(page);
}

static void test_damaged(void **state)
{
    (void)state;
    char cut[600], cmd[2000], *html;
    snprintf(cut, sizeof cut, "%s/cut.etl", work);
    struct stat st;
    assert_int_equal(stat(full, &st), 0);
    /* Cut in the middle of a buffer: the end of the file is lost. */
    snprintf(cmd, sizeof cmd, "head -c %lld '%s' > '%s'", (long long)(st.st_size / 2 + 12345), full, cut);
    assert_int_equal(system(cmd), 0);
    json_t *page = make_page(cut, NULL, 3, &html, "damaged");
    assert_true(json_is_true(json_object_get(json_object_get(page, "trace"), "damaged")));
    assert_non_null(strstr(html, "This trace is damaged"));
    assert_true(num(json_object_get(json_object_get(page, "trace"), "recovery"), "truncated_buffers") > 0);
    compare_trace(cut, page);
    compare_utilisation(cut, "", page);
    compare_commands(cut, "", 25, html, page, 0);
    free(html);
    json_decref(page);
}

static void test_outputs(void **state)
{
    (void)state;
    char dir[600], fifo[600], args[2000];
    int st;
    /* A directory and a FIFO are refused before reading; nothing is created beside them. */
    snprintf(dir, sizeof dir, "%s/outdir", work);
    mkdir(dir, 0755);
    snprintf(args, sizeof args, "report '%s' -o '%s'", full, dir);
    free(run(args, &st));
    assert_int_equal(st, 1);
    snprintf(fifo, sizeof fifo, "%s/outdir/fifo", work);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    snprintf(args, sizeof args, "report '%s' -o '%s'", full, fifo);
    free(run(args, &st));
    assert_int_equal(st, 1);
    snprintf(args, sizeof args, "ls -A '%s' | wc -l", dir);
    char *n = NULL;
    FILE *f = popen(args, "r");
    n = slurp_stream(f, NULL);
    pclose(f);
    assert_int_equal(atoi(n), 1); /* the FIFO alone */
    free(n);
    unlink(fifo);
    rmdir(dir);
    /* The input as the output: refused, the trace untouched, --force or not. */
    snprintf(args, sizeof args, "report '%s' -o '%s' --force", full, full);
    free(run(args, &st));
    assert_int_equal(st, 64);
    /* An existing file is replaced only with --force. */
    char old[600];
    snprintf(old, sizeof old, "%s/old.html", work);
    f = fopen(old, "w");
    fputs("mine\n", f);
    fclose(f);
    snprintf(args, sizeof args, "report '%s' -o '%s'", full, old);
    free(run(args, &st));
    assert_int_equal(st, 1);
    n = slurp(old, NULL);
    assert_string_equal(n, "mine\n");
    free(n);
    snprintf(args, sizeof args, "report '%s' -o '%s' --force", full, old);
    free(run(args, &st));
    assert_int_equal(st, 0);
    n = slurp(old, NULL);
    assert_non_null(strstr(n, "<!DOCTYPE html>"));
    free(n);
    unlink(old);
    /* Usage errors */
    snprintf(args, sizeof args, "report '%s'", full);
    free(run(args, &st));
    assert_int_equal(st, 64);
    snprintf(args, sizeof args, "report '%s' -o x.html --json", full);
    free(run(args, &st));
    assert_int_equal(st, 64);
}

static int setup(void **state)
{
    (void)state;
    char cmd[2000];
    snprintf(full, sizeof full, "%s/full.etl", work);
    snprintf(compact, sizeof compact, "%s/compact.etl", work);
    snprintf(pmcspin, sizeof pmcspin, "%s/pmcspin.etl", work);
    snprintf(cmd, sizeof cmd,
             "'%s' synth --quiet --pmc 4 --seed 7 -o '%s' --force && "
             "'%s' synth --quiet --cswitch compact --seed 8 -o '%s' --force && "
             "'%s' synth --quiet --pmc 2 --spinlocks --seed 9 -o '%s' --force",
             cli, full, cli, compact, cli, pmcspin);
    return system(cmd) == 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: report_check ETLKIT SAMPLES_DIR WORKDIR\n");
        return 2;
    }
    cli = argv[1];
    samples = argv[2];
    work = argv[3];
    mkdir(work, 0755);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),       cmocka_unit_test(test_compact), cmocka_unit_test(test_pmc_spinlocks),
        cmocka_unit_test(test_range),
        cmocka_unit_test(test_no_switches), cmocka_unit_test(test_damaged), cmocka_unit_test(test_outputs),
        cmocka_unit_test(test_profile),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}

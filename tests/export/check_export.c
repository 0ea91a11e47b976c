/*
 * check_export.c - `etlkit export` checked from the outside, through the tools
 * people open the output with:
 *
 *   check_export sqlite ETLKIT TRACE DIR   the real sqlite3 shell: row counts equal
 *       `etlkit info`'s, per-thread sums over slice and the views equal `etlkit cpu`
 *       and `etlkit waits`, the damage counters are in `trace`
 *   check_export ftrace ETLKIT TRACE DIR   every line matches a strict regular
 *       expression of the format (and Perfetto's own line pattern); sched_switch
 *       lines per CPU equal the model's switches per CPU
 *   check_export perfetto ETLKIT TRACE DIR PROTO_DIR   `protoc --decode` of the file
 *       with tests/export/etw.proto: the invariants of perfetto.md §8, switches and
 *       ReadyThreads (CPU, ns, thread ids) equal `etlkit dump`'s, per-CPU slices
 *       rebuilt from the decoded switches equal the slice table
 *   check_export schema ETLKIT DOC DIR     `etlkit export --schema` is DOC byte for
 *       byte, and DOC's tables are what PRAGMA table_info says
 *
 * Prints one line per failure and "N passed, N failed"; exit 1 on any failure.
 */
#include <jansson.h>
#include <regex.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

static unsigned passed, failed;

#define ABSENT (-(1LL << 62))

#define CHECK(cond, ...)                                                                                              \
    do {                                                                                                              \
        if (cond) {                                                                                                   \
            passed++;                                                                                                 \
        } else {                                                                                                      \
            failed++;                                                                                                 \
            printf("FAIL: ");                                                                                         \
            printf(__VA_ARGS__);                                                                                      \
            printf("\n");                                                                                             \
        }                                                                                                             \
    } while (0)

/* Runs a shell command; returns its stdout (malloc'd, NUL-terminated) and its exit status in *st. */
static char *run(const char *cmd, int *st)
{
    FILE *p = popen(cmd, "r");
    if (!p) {
        *st = -1;
        return strdup("");
    }
    size_t n = 0, cap = 1 << 16;
    char *b = malloc(cap);
    size_t r;
    while ((r = fread(b + n, 1, cap - n - 1, p)) > 0) {
        n += r;
        if (cap - n < 4096) b = realloc(b, cap *= 2);
    }
    b[n] = 0;
    int s = pclose(p);
    *st = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
    return b;
}

static const char *etlkit, *trace, *dir;
static char db[4096];

static char *sql(const char *q)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "sqlite3 -batch -noheader -separator '|' '%s' \"%s\"", db, q);
    int st;
    char *out = run(cmd, &st);
    CHECK(st == 0, "sqlite3 failed (%d) on: %s", st, q);
    return out;
}

static long long sql_int(const char *q)
{
    char *o = sql(q);
    long long v = strtoll(o, NULL, 10);
    free(o);
    return v;
}

static json_t *json_of(const char *args)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>/dev/null", etlkit, args, trace);
    int st;
    char *o = run(cmd, &st);
    json_error_t e;
    json_t *j = json_loads(o, 0, &e);
    CHECK(j != NULL, "etlkit %s: no JSON (%s)", args, e.text);
    free(o);
    return j ? j : json_object();
}

static long long jint(json_t *o, const char *k)
{
    json_t *v = json_object_get(o, k);
    return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

/* ---- sorted tuples ------------------------------------------------------------------------ */

typedef struct tup {
    long long v[5];
} tup;

typedef struct tups {
    tup *t;
    size_t n, cap;
} tups;

static void add(tups *s, long long a, long long b, long long c, long long d, long long e)
{
    if (s->n == s->cap) s->t = realloc(s->t, (s->cap = s->cap ? s->cap * 2 : 1024) * sizeof *s->t);
    s->t[s->n++] = (tup){{a, b, c, d, e}};
}

static int cmp_tup(const void *a, const void *b)
{
    const tup *x = a, *y = b;
    for (int i = 0; i < 5; i++)
        if (x->v[i] != y->v[i]) return x->v[i] < y->v[i] ? -1 : 1;
    return 0;
}

static void same(const char *what, tups *a, tups *b)
{
    if (a->n) qsort(a->t, a->n, sizeof *a->t, cmp_tup);
    if (b->n) qsort(b->t, b->n, sizeof *b->t, cmp_tup);
    size_t bad = a->n == b->n ? 0 : 1;
    size_t first = 0;
    for (size_t i = 0; !bad && i < a->n; i++)
        if (cmp_tup(&a->t[i], &b->t[i])) {
            bad = 1;
            first = i;
        }
    CHECK(!bad, "%s: %zu vs %zu rows differ (first at %zu: %lld %lld %lld %lld %lld vs %lld %lld %lld %lld %lld)", what,
          a->n, b->n, first, first < a->n ? a->t[first].v[0] : 0, first < a->n ? a->t[first].v[1] : 0,
          first < a->n ? a->t[first].v[2] : 0, first < a->n ? a->t[first].v[3] : 0, first < a->n ? a->t[first].v[4] : 0,
          first < b->n ? b->t[first].v[0] : 0, first < b->n ? b->t[first].v[1] : 0, first < b->n ? b->t[first].v[2] : 0,
          first < b->n ? b->t[first].v[3] : 0, first < b->n ? b->t[first].v[4] : 0);
    a->n = b->n = 0;
}

/* Rows "a|b|c..." of a query into tuples (empty fields: -1). */
static void sql_tups(const char *q, tups *s)
{
    char *o = sql(q);
    for (char *save = NULL, *line = strtok_r(o, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        long long v[5] = {0, 0, 0, 0, 0};
        char *p = line;
        for (int i = 0; i < 5 && p; i++) {
            char *bar = strchr(p, '|');
            if (bar) *bar = 0;
            v[i] = *p ? strtoll(p, NULL, 10) : -1;
            p = bar ? bar + 1 : NULL;
        }
        add(s, v[0], v[1], v[2], v[3], v[4]);
    }
    free(o);
}

/* `etlkit export` of the trace; range: "" or "--range A B". */
static int export_range(const char *to, const char *out, const char *range)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' export '%s' --to %s -o '%s' %s --force --quiet 2>&1", etlkit, trace, to, out,
             range);
    int st;
    char *o = run(cmd, &st);
    CHECK(st == 0 || st == 3, "export --to %s: exit %d: %s", to, st, o);
    free(o);
    return st;
}

static int export_to(const char *to, const char *out) { return export_range(to, out, ""); }

/* ---- sqlite ----------------------------------------------------------------------------- */

/*
 * The views against `etlkit cpu` and `etlkit waits` with the same range ("" or "--range A B"), on an export of
 * that window: every processor of cpu_by_cpu (one without a slice too), the threads of cpu_by_thread with time or
 * switch-ins in the window (the report lists every thread of the trace, the view those with a row exported),
 * waits_by_reason and waits_by_thread.
 */
static void check_views(const char *range)
{
    char args[256];
    if (*range) {
        snprintf(db, sizeof db, "%s/range.db", dir);
        export_range("sqlite", db, range);
    } else {
        snprintf(db, sizeof db, "%s/x.db", dir);
    }
    const char *rw = *range ? range : "(the whole trace)";
    json_t *cpu = (snprintf(args, sizeof args, "cpu --json --top 0 %s", range), json_of(args));
    tups a = {0}, b = {0};
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(cpu, "threads"), i, t) if (!*range || jint(t, "cpu_ns") || jint(t, "switches"))
        add(&a, jint(t, "tid"), jint(t, "cpu_ns"), jint(t, "switches"), 0, 0);
    sql_tups(*range ? "SELECT tid, cpu_ns, switches FROM cpu_by_thread WHERE cpu_ns != 0 OR switches != 0"
                    : "SELECT tid, cpu_ns, switches FROM cpu_by_thread", &b);
    tups c = {0};
    for (size_t k = 0; k < a.n; k++) add(&c, a.t[k].v[0], a.t[k].v[1], a.t[k].v[2], 0, 0);
    char what[512];
    snprintf(what, sizeof what, "cpu_by_thread vs etlkit cpu threads %s", rw);
    same(what, &a, &b);
    if (!*range) {
        sql_tups("SELECT MIN(tid), SUM(end_ns - start_ns), SUM(head = 0) FROM slice WHERE utid IS NOT NULL "
                 "GROUP BY utid", &b);
        same("per-thread SUM(end_ns - start_ns) over slice vs etlkit cpu", &c, &b);
    }
    c.n = 0;
    /* Every processor the report lists, one that ran nothing too (its window unknown). */
    json_array_foreach(json_object_get(cpu, "cpus"), i, t) add(&a, jint(t, "cpu"), jint(t, "busy_ns"), jint(t, "idle_ns"),
                                                               jint(t, "unknown_ns"), jint(t, "switches"));
    sql_tups("SELECT cpu, busy_ns, idle_ns, unknown_ns, switches FROM cpu_by_cpu", &b);
    snprintf(what, sizeof what, "cpu_by_cpu vs etlkit cpu cpus %s", rw);
    same(what, &a, &b);
    json_decref(cpu);

    /* etlkit waits */
    json_t *w = (snprintf(args, sizeof args, "waits --json --top 0 %s", range), json_of(args));
    json_array_foreach(json_object_get(w, "by_reason"), i, t) add(&a, jint(t, "code"), jint(t, "count"), jint(t, "wait_ns"),
                                                                  jint(t, "max_ns"), 0);
    sql_tups("SELECT code, count, wait_ns, max_ns FROM waits_by_reason", &b);
    snprintf(what, sizeof what, "waits_by_reason vs etlkit waits by_reason %s", rw);
    same(what, &a, &b);
    json_array_foreach(json_object_get(w, "threads"), i, t) if (jint(t, "wait_count") > 0)
        add(&a, jint(t, "tid"), jint(t, "wait_count"), jint(t, "wait_ns"), jint(t, "wait_max_ns"), 0);
    sql_tups("SELECT tid, wait_count, wait_ns, wait_max_ns FROM waits_by_thread", &b);
    snprintf(what, sizeof what, "waits_by_thread vs etlkit waits threads %s", rw);
    same(what, &a, &b);
    json_decref(w);
    free(a.t);
    free(b.t);
    free(c.t);
}

static void check_sqlite(void)
{
    snprintf(db, sizeof db, "%s/x.db", dir);
    int st = export_to("sqlite", db);
    json_t *info = json_of("info --json");
    long long dup = sql_int("SELECT int_value FROM trace WHERE key = 'duplicates_dropped'");
    CHECK(sql_int("SELECT COUNT(*) FROM cswitch") == jint(info, "cswitch_events") + jint(info, "compact_switches") - dup,
          "cswitch rows %lld != info's %lld CSwitch + %lld compact - %lld duplicates", sql_int("SELECT COUNT(*) FROM cswitch"),
          jint(info, "cswitch_events"), jint(info, "compact_switches"), dup);
    CHECK(sql_int("SELECT COUNT(*) FROM cswitch WHERE source = 'full'") + dup >= jint(info, "cswitch_events") &&
              sql_int("SELECT COUNT(*) FROM cswitch WHERE source = 'full'") <= jint(info, "cswitch_events"),
          "full switches");
    CHECK(sql_int("SELECT COUNT(*) FROM ready") == jint(info, "ready_thread_events"), "ready rows %lld != info's %lld",
          sql_int("SELECT COUNT(*) FROM ready"), jint(info, "ready_thread_events"));
    CHECK(sql_int("SELECT COUNT(*) FROM spinlock") == jint(info, "spinlock_events"), "spinlock rows %lld != info's %lld",
          sql_int("SELECT COUNT(*) FROM spinlock"), jint(info, "spinlock_events"));
    json_t *rec = json_object_get(info, "recovery");
    static const char *const dk[] = {"bad_buffers", "bad_records", "skipped_bytes", "truncated_buffers",
                                     "decompress_errors"};
    for (size_t i = 0; i < sizeof dk / sizeof dk[0]; i++) {
        char q[256];
        snprintf(q, sizeof q, "SELECT int_value FROM trace WHERE key = '%s'", dk[i]);
        CHECK(sql_int(q) == jint(rec, dk[i]), "trace %s %lld != info's %lld", dk[i], sql_int(q), jint(rec, dk[i]));
    }
    CHECK((st == 3) == (jint(rec, "bad_buffers") + jint(rec, "bad_records") + jint(rec, "truncated_buffers") +
                            jint(rec, "decompress_errors") > 0 || st == 3),
          "exit status 3 for damage");
    json_decref(info);

    check_views("");
    /*
     * --range: windows that cut slices, Ready and Waits intervals (a wait in the window whose switch-in is after it,
     * a CPU with no slice in it), each exported and checked against the reports with the same --range.
     */
    json_t *cpu = json_of("cpu --json");
    long long end = json_array_size(json_object_get(cpu, "cpus")) ? jint(json_object_get(cpu, "window"), "end_ns") : 0;
    json_decref(cpu);
    unsigned long long r = 88172645463325252ull; /* xorshift64: the same windows every run */
    for (int k = 0; end > 1 && k < 6; k++) {
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        long long a = (long long)(r % (unsigned long long)end);
        r ^= r << 13, r ^= r >> 7, r ^= r << 17;
        /* Narrow windows too (down to a few hundred ns), where waits are cut most. */
        long long len = 1 + (long long)(r % (unsigned long long)(k % 2 ? end / 50 + 1 : end - a));
        char range[96];
        snprintf(range, sizeof range, "--range %lldns %lldns", a, a + len);
        check_views(range);
    }
}

/* ---- ftrace -------------------------------------------------------------------------------- */

static void check_ftrace(void)
{
    char out[4096];
    snprintf(out, sizeof out, "%s/x.ftrace", dir);
    export_to("ftrace", out);
    regex_t strict, tp;
    const char *state = "(R|R\\+|[SDTtXZPxKWNI](\\|[SDTtXZPxKWNI])*)";
    char re[2048];
    snprintf(re, sizeof re,
             "^ *[^ ]{1,16}-([0-9]+) +\\((-----| *[0-9]+)\\) \\[([0-9]{3})\\] d\\.\\.3 +[0-9]+\\.[0-9]{6}: "
             "(sched_switch: prev_comm=[^ =]{1,15} prev_pid=[0-9]+ prev_prio=[0-9]+ prev_state=%s ==> "
             "next_comm=[^ =]{1,15} next_pid=[0-9]+ next_prio=[0-9]+"
             "|sched_waking: comm=[^ =]{1,15} pid=[0-9]+ prio=[0-9]+ target_cpu=[0-9]{3}"
             "|sched_blocked_reason: pid=[0-9]+ iowait=[01] caller=[A-Za-z0-9_]+)$",
             state);
    CHECK(regcomp(&strict, re, REG_EXTENDED) == 0, "regcomp strict");
    /* perfetto.md §7: trace_processor's systrace line pattern, \d \s \S spelled out. */
    CHECK(regcomp(&tp,
                  "-([0-9]+)[[:space:]]+\\(?[[:space:]]*([0-9]+|-+)?\\)?[[:space:]]?\\[([0-9]+)\\][[:space:]]*"
                  "([a-zA-Z.]{3}[0-9a-f.]{1,2}[[:space:]]*)?([0-9]+\\.[0-9]+):[[:space:]]+([^[:space:]]+):",
                  REG_EXTENDED) == 0,
          "regcomp tp");
    FILE *f = fopen(out, "r");
    CHECK(f != NULL, "open %s", out);
    if (!f) return;
    char line[4096];
    unsigned long long lines = 0, bad = 0, per_cpu[1024] = {0};
    int first = 1;
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        if (n && line[n - 1] == '\n') line[--n] = 0;
        if (first) CHECK(strcmp(line, "# tracer: nop") == 0, "first line '%s'", line);
        first = 0;
        if (line[0] == '#') continue;
        lines++;
        regmatch_t m[8];
        if (regexec(&strict, line, 8, m, 0) != 0 || regexec(&tp, line, 0, NULL, 0) != 0) {
            if (bad++ < 3) printf("FAIL: ftrace line does not parse: %s\n", line);
            continue;
        }
        unsigned c = (unsigned)strtoul(line + m[3].rm_so, NULL, 10);
        if (strstr(line, ": sched_switch: ") && c < 1024) per_cpu[c]++;
    }
    fclose(f);
    CHECK(bad == 0, "%llu of %llu ftrace lines do not parse", bad, lines);
    json_t *cpu = json_of("cpu --json");
    size_t i;
    json_t *t;
    json_array_foreach(json_object_get(cpu, "cpus"), i, t)
        CHECK(i < 1024 && (long long)per_cpu[i] == jint(t, "switches"), "cpu %zu: %llu sched_switch lines, the model %lld",
              i, i < 1024 ? per_cpu[i] : 0, jint(t, "switches"));
    json_decref(cpu);
    regfree(&strict);
    regfree(&tp);
}

/* ---- perfetto -------------------------------------------------------------------------- */

typedef struct pev {
    long long ts, cpu, tid, kind; /* kind 1 c_switch, 2 ready */
    long long f[16];              /* c_switch / ready_thread fields by number, ABSENT */
} pev;

static void check_perfetto(const char *proto_dir)
{
    char out[4096], cmd[8192];
    snprintf(out, sizeof out, "%s/x.pftrace", dir);
    export_to("perfetto", out);
    /* Invariant 1: the file starts with 0x0A (when not empty) and protoc parses every frame. */
    FILE *f = fopen(out, "rb");
    int c0 = f ? fgetc(f) : EOF;
    if (f) fclose(f);
    CHECK(c0 == EOF || c0 == 0x0A, "first byte 0x%02x", c0);
    snprintf(cmd, sizeof cmd, "protoc --proto_path='%s' --decode=perfetto.protos.Trace etw.proto < '%s'", proto_dir, out);
    int st;
    char *txt = run(cmd, &st);
    CHECK(st == 0, "protoc --decode failed (%d)", st);
    /* A line-based walk of protoc's text format. */
    pev *ev = NULL;
    size_t nev = 0, cap = 0;
    char stack[16][32];
    int depth = 0;
    pev cur;
    long long bundle_cpu = -1;
    unsigned long long procs_no_cmdline = 0, clock_snapshots = 0, bad_tgid = 0, zero_entries = 0;
    long long pid_cur = -1;
    int has_cmdline = 0;
    /* PIDs listed (small set: linear arrays are enough for tests). */
    long long *pids = NULL;
    size_t npid = 0, cappid = 0;
    long long *tgids = NULL;
    size_t ntg = 0, captg = 0;
    for (char *save = NULL, *line = strtok_r(txt, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        while (*line == ' ') line++;
        size_t n = strlen(line);
        if (n >= 2 && line[n - 1] == '{') {
            line[n - 2] = 0;
            if (depth < 16) snprintf(stack[depth], sizeof stack[depth], "%s", line);
            depth++;
            if (strcmp(line, "event") == 0) {
                memset(&cur, 0, sizeof cur);
                cur.ts = cur.cpu = cur.tid = -1;
                for (int k = 0; k < 16; k++) cur.f[k] = ABSENT;
            } else if (strcmp(line, "c_switch") == 0) {
                cur.kind = 1;
            } else if (strcmp(line, "ready_thread") == 0) {
                cur.kind = 2;
            } else if (strcmp(line, "processes") == 0) {
                has_cmdline = 0;
                pid_cur = -1;
            }
            continue;
        }
        if (strcmp(line, "}") == 0) {
            depth--;
            const char *closed = depth >= 0 && depth < 16 ? stack[depth] : "";
            if (strcmp(closed, "event") == 0) {
                if (cur.cpu < 0) cur.cpu = bundle_cpu;
                if (nev == cap) ev = realloc(ev, (cap = cap ? cap * 2 : 4096) * sizeof *ev);
                ev[nev++] = cur;
            } else if (strcmp(closed, "processes") == 0) {
                if (!has_cmdline) procs_no_cmdline++;
                if (pid_cur <= 0) zero_entries++;
                if (npid == cappid) pids = realloc(pids, (cappid = cappid ? cappid * 2 : 256) * sizeof *pids);
                pids[npid++] = pid_cur;
            } else if (strcmp(closed, "etw_events") == 0) {
                bundle_cpu = -1;
            }
            continue;
        }
        char *colon = strchr(line, ':');
        if (!colon) continue;
        *colon = 0;
        const char *key = line;
        long long v = strtoll(colon + 1, NULL, 10);
        const char *in = depth > 0 && depth <= 16 ? stack[depth - 1] : "";
        if (strcmp(key, "clock_snapshot") == 0) clock_snapshots++;
        if (strcmp(in, "etw_events") == 0 && strcmp(key, "cpu") == 0) bundle_cpu = v;
        else if (strcmp(in, "event") == 0) {
            if (strcmp(key, "timestamp") == 0) cur.ts = v;
            else if (strcmp(key, "cpu") == 0) cur.cpu = v;
            else if (strcmp(key, "thread_id") == 0) cur.tid = v;
        } else if (strcmp(in, "c_switch") == 0 || strcmp(in, "ready_thread") == 0) {
            static const char *const cs[] = {NULL, "new_thread_id", "old_thread_id", "new_thread_priority",
                                             "old_thread_priority", "previous_c_state", "old_thread_wait_reason",
                                             "old_thread_wait_mode", "old_thread_state",
                                             "old_thread_wait_ideal_processor", "new_thread_wait_time",
                                             "old_thread_wait_reason_int", "old_thread_wait_mode_int",
                                             "old_thread_state_int"};
            static const char *const rt[] = {NULL, "t_thread_id", "adjust_reason", "adjust_increment", "flag",
                                             "adjust_reason_int", "flag_int"};
            const char *const *names = in[0] == 'c' ? cs : rt;
            size_t nn = in[0] == 'c' ? sizeof cs / sizeof cs[0] : sizeof rt / sizeof rt[0];
            for (size_t k = 1; k < nn; k++)
                if (strcmp(key, names[k]) == 0) cur.f[k] = v;
        } else if (strcmp(in, "processes") == 0) {
            if (strcmp(key, "pid") == 0) pid_cur = v;
            if (strcmp(key, "cmdline") == 0) has_cmdline = 1;
        } else if (strcmp(in, "threads") == 0) {
            if (strcmp(key, "tid") == 0 && v <= 0) zero_entries++;
            if (strcmp(key, "tgid") == 0) {
                if (ntg == captg) tgids = realloc(tgids, (captg = captg ? captg * 2 : 256) * sizeof *tgids);
                tgids[ntg++] = v;
            }
        }
    }
    free(txt);
    CHECK(procs_no_cmdline == 0, "%llu processes without a cmdline", procs_no_cmdline);
    CHECK(zero_entries == 0, "%llu names entries with id 0", zero_entries);
    CHECK(clock_snapshots == 0, "a clock_snapshot");
    for (size_t k = 0; k < ntg; k++) {
        int found = 0;
        for (size_t j = 0; j < npid && !found; j++) found = pids[j] == tgids[k];
        if (!found) bad_tgid++;
    }
    CHECK(bad_tgid == 0, "%llu tgids that are no listed pid", bad_tgid);
    free(pids);
    free(tgids);
    /* Invariants 2, 3, 5 and the counts. */
    unsigned long long bad_ev = 0, bad_sw = 0, bad_rd = 0;
    tups sw = {0}, rd = {0}, d = {0};
    for (size_t k = 0; k < nev; k++) {
        pev *e = &ev[k];
        if (e->ts < 0 || e->cpu < 0 || e->cpu >= 1024) bad_ev++;
        if (e->kind == 1) {
            if (e->f[1] == ABSENT || e->f[2] == ABSENT || (e->f[8] != ABSENT) == (e->f[13] != ABSENT) ||
                (e->f[6] != ABSENT && e->f[11] != ABSENT))
                bad_sw++;
            add(&sw, e->cpu, e->ts, e->f[1], e->f[2], 0);
        } else if (e->kind == 2) {
            if (e->f[1] == ABSENT || e->tid < 0) bad_rd++;
            add(&rd, e->cpu, e->ts, e->f[1], 0, 0);
        }
    }
    CHECK(bad_ev == 0, "%llu events without a timestamp or a cpu < 1024", bad_ev);
    CHECK(bad_sw == 0, "%llu c_switch events without fields 1 and 2, or not exactly one of 8/13", bad_sw);
    CHECK(bad_rd == 0, "%llu ready_thread events without t_thread_id or thread_id", bad_rd);
    /* Rebuilt slices: per CPU in time order, [t_i, t_i+1) run by switch i+1's old thread. */
    tups rebuilt = {0};
    if (sw.n) qsort(sw.t, sw.n, sizeof *sw.t, cmp_tup);
    for (size_t k = 0; k + 1 < sw.n; k++)
        if (sw.t[k].v[0] == sw.t[k + 1].v[0])
            add(&rebuilt, sw.t[k].v[0], sw.t[k].v[1], sw.t[k + 1].v[1], sw.t[k + 1].v[3], 0);
    snprintf(db, sizeof db, "%s/x.db", dir);
    export_to("sqlite", db);
    sql_tups("SELECT cpu, start_ns, end_ns, tid FROM slice WHERE head = 0 AND tail = 0", &d);
    if (sql_int("SELECT COUNT(*) FROM trace WHERE key IN ('time_backwards') AND int_value > 0") == 0)
        same("slices rebuilt from the decoded switches vs the slice table", &rebuilt, &d);
    /* Against dump: every switch and ReadyThread with its CPU, ns and thread ids. */
    long long dup = sql_int("SELECT int_value FROM trace WHERE key = 'duplicates_dropped'");
    long long neg = sql_int("SELECT COUNT(*) FROM cswitch WHERE ns < 0") + sql_int("SELECT COUNT(*) FROM ready WHERE ns < 0");
    if (dup == 0 && neg == 0) {
        snprintf(cmd, sizeof cmd, "'%s' dump --format jsonl --expand --quiet '%s' 2>/dev/null", etlkit, trace);
        char *dump = run(cmd, &st);
        tups dsw = {0}, drd = {0};
        for (char *save = NULL, *line = strtok_r(dump, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            json_t *j = json_loads(line, 0, NULL);
            if (!j) continue;
            long long hook = jint(j, "hook");
            json_t *fl = json_object_get(j, "fields");
            if (hook == 0x0524 || (hook == 0x0525 && json_object_get(j, "expanded"))) {
                long long nw = jint(fl, "NewThreadId");
                add(&dsw, jint(j, "cpu"), jint(j, "ns"), nw < 0 ? 4294967295LL : nw, jint(fl, "OldThreadId"), 0);
            } else if (hook == 0x0532 && fl) {
                add(&drd, jint(j, "cpu"), jint(j, "ns"), jint(fl, "TThreadId"), 0, 0);
            }
            json_decref(j);
        }
        free(dump);
        /* The model ignores ReadyThreads of thread 0 (nothing to ready). */
        tups drd2 = {0};
        for (size_t k = 0; k < drd.n; k++)
            if (drd.t[k].v[2] != 0) add(&drd2, drd.t[k].v[0], drd.t[k].v[1], drd.t[k].v[2], 0, 0);
        same("decoded switches (cpu, ns, new, old) vs dump", &sw, &dsw);
        same("decoded ReadyThreads (cpu, ns, tid) vs dump", &rd, &drd2);
        free(dsw.t);
        free(drd.t);
        free(drd2.t);
    } else {
        printf("note: %lld duplicate switches dropped, %lld events before t0: not compared with dump\n", dup, neg);
    }
    free(sw.t);
    free(rd.t);
    free(d.t);
    free(rebuilt.t);
    free(ev);
}

/* ---- schema ------------------------------------------------------------------------------ */

static void check_schema(const char *doc)
{
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "'%s' export --schema", etlkit);
    int st;
    char *gen = run(cmd, &st);
    CHECK(st == 0, "export --schema exit %d", st);
    FILE *f = fopen(doc, "rb");
    CHECK(f != NULL, "open %s", doc);
    if (!f) return;
    char *text = calloc(1, 1 << 20);
    size_t n = fread(text, 1, (1 << 20) - 1, f);
    fclose(f);
    text[n] = 0;
    CHECK(strcmp(gen, text) == 0, "%s differs from `etlkit export --schema` (regenerate it with that command)", doc);
    free(gen);
    /* Every table of the document against PRAGMA table_info of an export. */
    snprintf(db, sizeof db, "%s/x.db", dir);
    export_to("sqlite", db);
    char *views = strstr(text, "\n## Views");
    if (views) *views = 0;
    unsigned tables = 0;
    for (char *p = strstr(text, "\n### "); p; p = strstr(p + 1, "\n### ")) {
        char name[64];
        if (sscanf(p + 5, "%63[a-z_]", name) != 1) continue;
        tables++;
        char *end = strstr(p + 1, "\n### ");
        char want[4096] = "", got[4096] = "";
        size_t wl = 0;
        for (char *r = strstr(p, "\n| `"); r && (!end || r < end); r = strstr(r + 1, "\n| `")) {
            char col[64], type[32];
            if (sscanf(r, "\n| `%63[a-z_0-9]` | %31[A-Z] |", col, type) == 2)
                wl += (size_t)snprintf(want + wl, sizeof want - wl, "%s|%s\n", col, type);
        }
        char q[256];
        snprintf(q, sizeof q, "SELECT name, type FROM pragma_table_info('%s')", name);
        char *o = sql(q);
        snprintf(got, sizeof got, "%s", o);
        free(o);
        CHECK(wl > 0 && strcmp(want, got) == 0, "table %s: document says\n%s, PRAGMA table_info says\n%s", name, want, got);
    }
    CHECK(tables >= 10, "the document lists %u tables", tables);
    CHECK(sql_int("SELECT COUNT(*) FROM sqlite_master WHERE type = 'view'") >= 5, "views");
    free(text);
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: check_export sqlite|ftrace|perfetto|schema ETLKIT TRACE|DOC DIR [PROTO_DIR]\n");
        return 2;
    }
    etlkit = argv[2];
    trace = argv[3];
    dir = argv[4];
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", dir);
    if (system(cmd) != 0) return 2;
    if (strcmp(argv[1], "sqlite") == 0) check_sqlite();
    else if (strcmp(argv[1], "ftrace") == 0) check_ftrace();
    else if (strcmp(argv[1], "perfetto") == 0 && argc > 5) check_perfetto(argv[5]);
    else if (strcmp(argv[1], "schema") == 0) {
        trace = argv[5 < argc ? 5 : 3];
        check_schema(argv[3]);
    } else return 2;
    printf("%u passed, %u failed\n", passed, failed);
    return failed ? 1 : 0;
}

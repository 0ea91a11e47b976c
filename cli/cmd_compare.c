/* cmd_compare.c - `etlkit compare`: the cpu and waits reports of two traces side by side, and CI gates. */
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "base/sat.h"
#include "etlkit/compare.h"

#define MAX_FAIL_IF 32

static const cli_cmd compare_cmd = {
    "compare", "BEFORE.etl AFTER.etl [OPTIONS]",
    "The cpu and waits reports of two traces side by side, matched by name (ids differ\n"
    "between traces): processes by image name (instances of one name summed), threads by\n"
    "\"image/thread name\", waits by reason. CPU time, waiting time and switch-ins are per\n"
    "second of each trace's window, so traces of different lengths compare; ready latency\n"
    "percentiles are durations, as measured (for a name with several instances, the largest\n"
    "instance's, an upper bound). Rows are sorted by the biggest change. What cannot be\n"
    "computed (a percentile of a name absent from a trace, waiting time without ReadyThread\n"
    "events) is \"-\" in text and null in JSON, never 0.\n",
    {"BEFORE.etl", "AFTER.etl"}, 2, 2,
    "Exit status: 0 ok, 1 a --fail-if threshold was crossed or its change cannot be computed\n"
    "(or an I/O error), 2 not an ETL file, or no context switch in it or in its window,\n"
    "3 input damaged (also when the only failed gates are those its unknown CPU time left\n"
    "undecided), 64 usage.\n"};

/* Whether a row's value of metric m is known on a side (0 BEFORE, 1 AFTER): an unknown one prints blank. */
static int known(const etl_cmp_row *r, int side, unsigned m)
{
    return ((side ? r->known_after : r->known_before) >> m) & 1;
}

static int both_known(const etl_cmp_row *r, unsigned m)
{
    return known(r, 0, m) && known(r, 1, m);
}

static const char *fmt_rel(char out[32], const etl_cmp_row *r, unsigned m)
{
    int64_t v;
    switch (etl_cmp_change_pct(r, m, &v)) {
    case ETL_CMP_CHANGE_NEW: return strcpy(out, "new");
    case ETL_CMP_CHANGE_NEW_NEG: return strcpy(out, "-new");
    case ETL_CMP_CHANGE_NONE: return strcpy(out, "-");
    }
    char t[32];
    fmt_fixed(t, v, 2);
    snprintf(out, 32, "%s%.20s%%", v > 0 ? "+" : "", t);
    return out;
}

static const char *fmt_delta(char out[32], int64_t d)
{
    char t[32];
    fmt_dur(t, d < 0 ? -d : d);
    snprintf(out, 32, "%s%.24s", d < 0 ? "-" : d > 0 ? "+" : "", t);
    return out;
}

/* A duration, "-" when unknown. */
static const char *fmt_dur_k(char out[32], const etl_cmp_row *r, int side, unsigned m)
{
    if (!known(r, side, m)) return strcpy(out, "-");
    return fmt_dur(out, side ? r->after[m] : r->before[m]);
}

/* A per-second count (3 decimals), "-" when unknown. */
static const char *fmt_rate_k(char out[32], const etl_cmp_row *r, int side, unsigned m)
{
    if (!known(r, side, m)) return strcpy(out, "-");
    return fmt_fixed(out, side ? r->after[m] : r->before[m], 3);
}

/* The change AFTER - BEFORE, "-" when a side is unknown. */
static const char *fmt_change_k(char out[32], const etl_cmp_row *r, unsigned m)
{
    if (!both_known(r, m)) return strcpy(out, "-");
    return fmt_delta(out, sub_sat(r->after[m], r->before[m]));
}

static void json_k(jw *w, const char *key, const etl_cmp_row *r, int side, unsigned m)
{
    if (known(r, side, m)) jw_i64(w, key, side ? r->after[m] : r->before[m]);
    else jw_null(w, key);
}

static void json_rel(jw *w, const char *key, const etl_cmp_row *r, unsigned m)
{
    int64_t v;
    if (etl_cmp_change_pct(r, m, &v) == ETL_CMP_CHANGE_VALUE) jw_fixed(w, key, v, 2);
    else jw_null(w, key);
}

static void json_delta(jw *w, const char *key, const etl_cmp_row *r, unsigned m)
{
    if (both_known(r, m)) jw_i64(w, key, sub_sat(r->after[m], r->before[m]));
    else jw_null(w, key);
}

static void json_pair(jw *w, const char *key, const etl_cmp_row *r, unsigned m, const char *unit)
{
    char k[64];
    snprintf(k, sizeof k, "before_%s%s", key, unit);
    json_k(w, k, r, 0, m);
    snprintf(k, sizeof k, "after_%s%s", key, unit);
    json_k(w, k, r, 1, m);
    snprintf(k, sizeof k, "delta_%s%s", key, unit);
    json_delta(w, k, r, m);
    snprintf(k, sizeof k, "delta_%s_pct", key);
    json_rel(w, k, r, m);
}

static void json_switches(jw *w, const char *prefix, const etl_cmp_row *r)
{
    char k[64];
    for (int side = 0; side < 2; side++) {
        snprintf(k, sizeof k, "%s_%s", side ? "after" : "before", prefix);
        if (known(r, side, ETL_CMP_SWITCHES)) jw_fixed(w, k, side ? r->after[ETL_CMP_SWITCHES] : r->before[ETL_CMP_SWITCHES], 3);
        else jw_null(w, k);
    }
}

static void json_row(jw *w, const etl_cmp_row *r)
{
    jw_bool(w, "in_before", r->in_before);
    jw_bool(w, "in_after", r->in_after);
    /* The keys for CPU: before_cpu_ns, after_cpu_ns, delta_ns, delta_pct (ns per second of window). */
    json_k(w, "before_cpu_ns", r, 0, ETL_CMP_CPU);
    json_k(w, "after_cpu_ns", r, 1, ETL_CMP_CPU);
    json_delta(w, "delta_ns", r, ETL_CMP_CPU);
    json_rel(w, "delta_pct", r, ETL_CMP_CPU);
    json_pair(w, "wait", r, ETL_CMP_WAIT, "_ns");
    json_switches(w, "switches_per_s", r);
    json_pair(w, "ready_p50", r, ETL_CMP_READY_P50, "_ns");
    json_pair(w, "ready_p99", r, ETL_CMP_READY_P99, "_ns");
    json_pair(w, "ready_max", r, ETL_CMP_READY_MAX, "_ns");
    jw_bool(w, "ready_exact", r->p_exact);
}

/* Lines that hold a path hold the longest one (they were cut at 240 bytes: reviewer70 F1). */
#define UNKNOWN_LINE (4096 + 200)          /* unknown_line's: a path and the sentence */
#define WHY_MAX (2 * UNKNOWN_LINE + 100)   /* a gate's why: both sides' lines */
#define DELTA_MAX (WHY_MAX + 32)           /* fmt_gate_delta's: "cannot be computed: " and the why */

typedef struct gate {
    const char *text;
    etl_cmp_expr e;
    int crossed, found;    /* crossed: 1, 0, or -1 when the change cannot be computed (the gate fails) */
    unsigned unknown_time; /* crossed -1 because of these sides' unknown CPU time (bit 0 BEFORE, 1 AFTER) */
    int64_t delta;
    char why[WHY_MAX];     /* crossed -1: what is unknown, and where (two sides: two lines) */
} gate;

/* "FILE: X of its Y CPU time is unknown", the line that says a side's amounts count its known time only. */
static void unknown_line(char *out, size_t cap, const etl_cmp_side *s, const char *path)
{
    char u[32], t[32];
    snprintf(out, cap, "%s: %s of its %s CPU time is unknown (buffers lost, the file cut short, or a compact trace's "
             "last slices)", path, fmt_dur(u, s->unknown_ns), fmt_dur(t, s->cputime_ns));
}

/* Why a gate's change cannot be computed: the side whose value is unknown, and what it lacks. */
static void gate_why(gate *g, const etl_compare *c, const etl_cmp_side *sides, const char *pb, const char *pa)
{
    if (g->unknown_time) {
        /* Each side whose unknown time left it undecided (both: the two lines, joined). */
        char line[2][UNKNOWN_LINE] = {"", ""};
        for (int k = 0; k < 2; k++)
            if (g->unknown_time & (1u << k)) unknown_line(line[k], sizeof line[k], &sides[k], k ? pa : pb);
        snprintf(g->why, sizeof g->why, "%s%s%s%s", line[0], line[0][0] && line[1][0] ? "; " : "", line[1],
                 g->e.metric == ETL_CMP_CPU ? ": the change could cross either way"
                 : g->unknown_time == 3     ? ": the waits and switch-ins they held are not seen"
                                            : ": the waits and switch-ins it held are not seen");
        return;
    }
    const etl_cmp_row *r = etl_compare_find(c, g->e.scope, g->e.name);
    unsigned m = g->e.metric;
    int side = r && known(r, 0, m) ? 1 : 0;
    const char *path = side ? pa : pb;
    const etl_cmp_row *t = &c->total;
    int64_t window = side ? c->window_after : c->window_before;
    if (window <= 0)
        snprintf(g->why, sizeof g->why, "%s's window is 0 ns", path);
    else if (!known(t, side, ETL_CMP_CPU))
        snprintf(g->why, sizeof g->why, "no CPU time is known in %s (no context switch in its window)", path);
    else if (m == ETL_CMP_WAIT || (g->e.scope == ETL_CMP_REASON && m == ETL_CMP_SWITCHES))
        snprintf(g->why, sizeof g->why, "no wait is known in %s (no switch-in with a ReadyThread)", path);
    else if (r && !(side ? r->in_after : r->in_before))
        snprintf(g->why, sizeof g->why, "%s is not in %s", r->name, path);
    else if (m >= ETL_CMP_READY_P50 && !known(t, side, ETL_CMP_WAIT))
        snprintf(g->why, sizeof g->why,
                 "%s has no ReadyThread: its ready latency covers only preempted switch-ins, not comparable", path);
    else
        snprintf(g->why, sizeof g->why, "no Ready value in %s", path);
}

static const char *fmt_gate_delta(char out[DELTA_MAX], const gate *g)
{
    if (!g->found) return strcpy(out, "not in either trace");
    if (g->crossed < 0) {
        snprintf(out, DELTA_MAX, "cannot be computed: %s", g->why);
        return out;
    }
    if (g->e.relative) {
        if (g->delta == INT64_MAX) return strcpy(out, "+inf%");
        if (g->delta == INT64_MIN) return strcpy(out, "-inf%");
        char t[32];
        fmt_fixed(t, g->delta, 2);
        snprintf(out, DELTA_MAX, "%s%s%%", g->delta > 0 ? "+" : "", t);
    } else if (g->e.metric == ETL_CMP_SWITCHES) {
        char t[32];
        fmt_fixed(t, g->delta, 3);
        snprintf(out, DELTA_MAX, "%s%s/s", g->delta > 0 ? "+" : "", t);
    } else {
        char t[32];
        snprintf(out, DELTA_MAX, "%s%s", fmt_delta(t, g->delta),
                 g->e.metric == ETL_CMP_CPU || g->e.metric == ETL_CMP_WAIT ? "/s" : "");
    }
    return out;
}

/* before, after: the sides' files, windows and anomalies (what each session lost, as every report's JSON). */
static void print_json(const rep_run *const runs[2], const etl_compare *c, const etl_cmp_side *sides, unsigned top,
                       const gate *g, size_t ng, int failed)
{
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w, NULL);
    for (int k = 0; k < 2; k++) {
        jw_obj(&w, k ? "after" : "before");
        jw_str(&w, "file", runs[k]->in.path);
        jw_i64(&w, "window_ns", k ? c->window_after : c->window_before);
        /* CPU time of no known thread: the amounts count the rest */
        jw_i64(&w, "unknown_ns", sides[k].unknown_ns);
        rep_json_anomalies(runs[k], &w);
        jw_obj_end(&w);
    }
    jw_str(&w, "units", "cpu, wait: ns per second of window; switches: per second; ready: ns");
    jw_obj(&w, "total");
    json_row(&w, &c->total);
    jw_obj_end(&w);
    jw_arr(&w, "processes");
    for (size_t i = 0; i < c->nprocesses && (!top || i < top); i++) {
        jw_obj(&w, NULL);
        jw_str(&w, "name", c->processes[i].name);
        json_row(&w, &c->processes[i]);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr(&w, "threads");
    for (size_t i = 0; i < c->nthreads && (!top || i < top); i++) {
        const char *n = c->threads[i].name, *s = strchr(n, '/');
        char proc[512];
        snprintf(proc, sizeof proc, "%.*s", s ? (int)(s - n) : (int)strlen(n), n);
        jw_obj(&w, NULL);
        jw_str(&w, "process", proc);
        jw_str(&w, "name", s ? s + 1 : "");
        json_row(&w, &c->threads[i]);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr(&w, "reasons");
    for (size_t i = 0; i < c->nreasons; i++) {
        const etl_cmp_row *r = &c->reasons[i];
        jw_obj(&w, NULL);
        jw_str(&w, "reason", r->name);
        json_pair(&w, "wait", r, ETL_CMP_WAIT, "_ns");
        json_switches(&w, "waits_per_s", r);
        json_k(&w, "before_max_ns", r, 0, ETL_CMP_READY_MAX);
        json_k(&w, "after_max_ns", r, 1, ETL_CMP_READY_MAX);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr(&w, "fail_if");
    for (size_t i = 0; i < ng; i++) {
        jw_obj(&w, NULL);
        jw_str(&w, "expr", g[i].text);
        jw_bool(&w, "found", g[i].found);
        if (g[i].found && g[i].crossed >= 0 && g[i].delta != INT64_MAX && g[i].delta != INT64_MIN) {
            if (g[i].e.relative) jw_fixed(&w, "delta_pct", g[i].delta, 2);
            else if (g[i].e.metric == ETL_CMP_SWITCHES) jw_fixed(&w, "delta", g[i].delta, 3);
            else jw_i64(&w, "delta_ns", g[i].delta);
        } else {
            jw_null(&w, g[i].e.relative ? "delta_pct" : "delta");
        }
        /* null: the change cannot be computed, and the gate fails (why says what is unknown) */
        if (g[i].crossed < 0) {
            jw_null(&w, "crossed");
            jw_str(&w, "why", g[i].why);
        } else {
            jw_bool(&w, "crossed", g[i].crossed);
        }
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_bool(&w, "failed", failed);
    jw_obj_end(&w);
    jw_end(&w);
}

static void table(const char *title, const etl_compare *c, const etl_cmp_row *v, size_t n, unsigned top, int reasons)
{
    if (!n) return;
    printf("\n%s\n", title);
    static const char *const hp[] = {"Name", "=CPU before", "=CPU after", "=Change", "=%", "=Ready p99 before",
                                     "=Ready p99 after", "=Waiting before", "=Waiting after"};
    static const char *const hr[] = {"Reason", "=Waiting before", "=Waiting after", "=Change", "=%",
                                     "=Waits/s before", "=Waits/s after", "=Longest before", "=Longest after"};
    tbl t;
    tbl_init(&t, 9, reasons ? hr : hp);
    for (size_t i = 0; i < n && (!top || i < top); i++) {
        const etl_cmp_row *r = &v[i];
        char b[8][32];
        unsigned m = reasons ? ETL_CMP_WAIT : ETL_CMP_CPU;
        const char *name = r->name[0] ? r->name : "\"\""; /* an empty image name, as every report shows it */
        char nm[600];
        if (!reasons) {
            size_t k = strlen(r->name);
            /* new or gone only where that side can tell: it has CPU time known */
            const char *label = !r->in_before && known(&c->total, 0, ETL_CMP_CPU)  ? " [new]"
                                : !r->in_after && known(&c->total, 1, ETL_CMP_CPU) ? " [gone]" : "";
            snprintf(nm, sizeof nm, "%s%s%s", name, k && r->name[k - 1] == '/' ? "(unnamed)" : "", label);
            name = nm;
        }
        const char *row[9];
        row[0] = name;
        row[1] = fmt_dur_k(b[0], r, 0, m);
        row[2] = fmt_dur_k(b[1], r, 1, m);
        row[3] = fmt_change_k(b[2], r, m);
        row[4] = fmt_rel(b[3], r, m);
        if (reasons) {
            row[5] = fmt_rate_k(b[4], r, 0, ETL_CMP_SWITCHES);
            row[6] = fmt_rate_k(b[5], r, 1, ETL_CMP_SWITCHES);
            row[7] = fmt_dur_k(b[6], r, 0, ETL_CMP_READY_MAX);
            row[8] = fmt_dur_k(b[7], r, 1, ETL_CMP_READY_MAX);
        } else {
            row[5] = fmt_dur_k(b[4], r, 0, ETL_CMP_READY_P99);
            row[6] = fmt_dur_k(b[5], r, 1, ETL_CMP_READY_P99);
            row[7] = fmt_dur_k(b[6], r, 0, ETL_CMP_WAIT);
            row[8] = fmt_dur_k(b[7], r, 1, ETL_CMP_WAIT);
        }
        tbl_row(&t, row);
    }
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
}

/* An amount per second of window ("X/s"), "-" when unknown. */
static const char *fmt_per_s(char out[40], const etl_cmp_row *r, int side, unsigned m)
{
    char t[32];
    if (!known(r, side, m)) return strcpy(out, "-");
    if (m == ETL_CMP_SWITCHES) fmt_fixed(t, side ? r->after[m] : r->before[m], 3);
    else fmt_dur(t, side ? r->after[m] : r->before[m]);
    snprintf(out, 40, "%s/s", t);
    return out;
}

static void print_text(const char *pb, const char *pa, const etl_compare *c, const etl_cmp_side *sides, unsigned top,
                       const gate *g, size_t ng)
{
    char b1[40], b2[40], b3[32], b4[32];
    printf("etlkit compare: %s (%s) -> %s (%s); amounts per second of window\n", pb, fmt_dur(b1, c->window_before),
           pa, fmt_dur(b2, c->window_after));
    for (int k = 0; k < 2; k++) {
        char line[UNKNOWN_LINE];
        if (sides[k].unknown_ns <= 0) continue;
        unknown_line(line, sizeof line, &sides[k], k ? pa : pb);
        printf("note: %s: amounts count the known time only; a gate it could change cannot be computed\n", line);
    }
    const etl_cmp_row *t = &c->total;
    printf("\nCPU busy      %s -> %s  %s (%s)\n", fmt_per_s(b1, t, 0, ETL_CMP_CPU), fmt_per_s(b2, t, 1, ETL_CMP_CPU),
           fmt_change_k(b3, t, ETL_CMP_CPU), fmt_rel(b4, t, ETL_CMP_CPU));
    printf("Waiting       %s -> %s  %s (%s)\n", fmt_per_s(b1, t, 0, ETL_CMP_WAIT), fmt_per_s(b2, t, 1, ETL_CMP_WAIT),
           fmt_change_k(b3, t, ETL_CMP_WAIT), fmt_rel(b4, t, ETL_CMP_WAIT));
    printf("Switch-ins    %s -> %s (%s)\n", fmt_per_s(b1, t, 0, ETL_CMP_SWITCHES), fmt_per_s(b2, t, 1, ETL_CMP_SWITCHES),
           fmt_rel(b4, t, ETL_CMP_SWITCHES));
    for (unsigned m = ETL_CMP_READY_P50; m <= ETL_CMP_READY_MAX; m++)
        printf("Ready %-7s %s -> %s  %s (%s)\n", etl_cmp_metric_name(m) + 6, fmt_dur_k(b1, t, 0, m),
               fmt_dur_k(b2, t, 1, m), fmt_change_k(b3, t, m), fmt_rel(b4, t, m));
    table("Processes by change of CPU time (per second of window)", c, c->processes, c->nprocesses, top, 0);
    table("Threads (image/thread name) by change of CPU time", c, c->threads, c->nthreads, top, 0);
    table("Waits by reason, by change of waiting time (per second of window)", c, c->reasons, c->nreasons, top, 1);
    if (ng) printf("\n");
    for (size_t i = 0; i < ng; i++) {
        char d[DELTA_MAX];
        printf("%s  %s: %s\n", g[i].crossed ? "FAIL" : "ok  ", g[i].text, fmt_gate_delta(d, &g[i]));
    }
}

typedef struct side {
    rep_run run;
    etl_usage u;
    int rc;
} side;

static int run_one(rep_args *a, const char *path, side *s, int allow_empty)
{
    memset(s, 0, sizeof *s);
    a->path = path;
    etl_usage_options uo = {.sz = sizeof uo, .v0 = a->v0, .v1 = a->has_range ? a->v1 : a->v0, .longest = 1};
    int rc = rep_run_open(&s->run, a, etl_usage_add, &s->u, NULL);
    if (rc != EXIT_OK) return rc;
    if (etl_usage_init(&s->u, s->run.model, &uo) != ETL_OK) {
        fprintf(stderr, "%s compare: out of memory\n", prog);
        rep_run_close(&s->run);
        return EXIT_IO;
    }
    /* The note that --range was clipped comes after the checks below: a refused side gets one line. */
    rep_args q = *a;
    q.quiet = 1;
    rep_run_go(&s->run, &q);
    if (etl_usage_finish(&s->u, s->run.end_ns) != ETL_OK) return rep_usage_failed(&s->run, &s->u, "compare");
    /*
     * Every change against nothing is -100 % or "new": a gate would pass on a trace recorded without
     * CSWITCH, or on a window that holds nothing (a --range past the end, or between two switches).
     */
    if (!allow_empty) {
        uint64_t in_window = 0;
        for (size_t c = 0; c < s->u.ncpus; c++) in_window += s->u.cpus[c].switches;
        char t0[32], t1[32], te[32];
        fmt_fixed(t0, s->run.v0 / 1000, 6);
        fmt_fixed(t1, s->run.v1 / 1000, 6);
        fmt_fixed(te, s->run.end_ns / 1000, 6);
        const char *ra = a->has_range ? a->range_text[0] : "", *rb = a->has_range ? a->range_text[1] : "";
        int refused = 1;
        if (s->run.mstats.switches == 0)
            fprintf(stderr,
                    "%s compare: %s has no context switches (no CSwitch events or compact batches), nothing to "
                    "compare; record with the CSWITCH kernel flag, or pass --allow-empty\n",
                    prog, path);
        else if (s->run.v1 <= s->run.v0 && a->has_range)
            fprintf(stderr,
                    "%s compare: %s ends at %s s: --range %s %s holds none of it (0 ns), nothing to compare; "
                    "choose a range inside the trace, or pass --allow-empty\n",
                    prog, path, te, ra, rb);
        else if (s->run.v1 <= s->run.v0)
            fprintf(stderr, "%s compare: %s has a window of 0 ns, nothing to compare; pass --allow-empty to compare "
                    "anyway\n", prog, path);
        else if (in_window == 0)
            fprintf(stderr,
                    "%s compare: %s has no context switch in its window %s s .. %s s%s%s%s%s%s, nothing to compare; "
                    "choose a wider range, or pass --allow-empty\n",
                    prog, path, t0, t1, a->has_range ? " (--range " : "", ra, a->has_range ? " " : "", rb,
                    a->has_range ? ")" : "");
        else
            refused = 0;
        if (refused) {
            etl_usage_free(&s->u);
            rep_run_close(&s->run);
            return EXIT_NOT_ETL;
        }
    }
    rep_run_window(&s->run, a);
    return EXIT_OK;
}

/* The --fail-if gates, in the order given. */
typedef struct gates {
    gate g[MAX_FAIL_IF];
    size_t n;
} gates;

static int fail_if(const cli_opt *o, const char *v, char *err, size_t cap)
{
    gates *gs = o->dst;
    if (gs->n == MAX_FAIL_IF) return snprintf(err, cap, "at most %d --fail-if", MAX_FAIL_IF);
    gate *g = &gs->g[gs->n];
    memset(g, 0, sizeof *g);
    g->text = v;
    char why[200];
    if (etl_cmp_expr_parse(v, &g->e, why, sizeof why) != ETL_OK)
        return snprintf(err, cap, "--fail-if '%s': %s", v, why);
    gs->n++;
    return 0;
}

int cmd_compare(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "compare");
    const char *paths[2] = {NULL, NULL};
    gates gs;
    gs.n = 0;
    int top_set = 0, allow_empty = 0;
    const cli_opt own[] = {
        {.kind = CLI_OPT_CUSTOM, .name = "fail-if", .arg = "EXPR", .parse = fail_if, .dst = &gs,
         .need = "an expression, e.g. 'cpu(total) > +10%'",
         .help = "exit 1 when the change AFTER - BEFORE crosses a threshold\n"
                 "(repeatable; any crossing fails):\n"
                 "  METRIC(SCOPE) OP THRESHOLD\n"
                 "METRIC  cpu | wait | switches | ready_p50 | ready_p90 |\n"
                 "        ready_p99 | ready_max\n"
                 "SCOPE   total | process=NAME | thread=PROCESS/THREADNAME |\n"
                 "        reason=WAITREASON (wait, switches)\n"
                 "OP      > >= < <=\n"
                 "THRESHOLD  [+|-]N% (relative change, steps of 0.01%),\n"
                 "        [+|-]N with ns, us (or \xc2\xb5s), ms or s (cpu and wait:\n"
                 "        per second of window), or a plain number (switches\n"
                 "        per second, steps of 0.001); N may have a power of ten\n"
                 "e.g. 'cpu(total) > +10%'  'cpu(process=svchost) > +5ms'\n"
                 "     'ready_p99(process=dwm) > +20%'  'wait(reason=WrQueue) > +1s'\n"
                 "A name missing from BEFORE but present in AFTER is +infinite %\n"
                 "(cpu, wait, switches); a change that cannot be computed (a\n"
                 "value unknown on a side, e.g. its ready_p99) fails; a name in\n"
                 "neither trace never fails (a warning says so).\n"},
        CLI_FLAG("allow-empty", 0, "compare a trace with no context switches, or a window with none (--range past "
                 "its end: 0 ns); by default an error, exit 2. What cannot be computed is shown as -, and a gate on it "
                 "fails", &allow_empty, 1),
        CLI_END};
    cli_opt common[REP_OPTS_MAX];
    rep_options(&a, REP_OPT_JSON | REP_OPT_TOP | REP_OPT_RANGE | REP_OPT_MAX_WAIT_REASON | REP_OPT_THREADS |
                        REP_OPT_QUIET, common);
    cli_opt *top_opt = cli_opt_find(common, "top");
    top_opt->help = "the N biggest changes of each table (default 20; 0 = all)";
    top_opt->seen = &top_set;
    cli_opt_find(common, "range")->help = "the same window of both traces";
    cli_opt_find(common, "quiet")->help = "no warnings about the inputs";
    const cli_opt table[] = {CLI_INCLUDE(own), CLI_INCLUDE(common), CLI_END};
    int pr = cli_opts_parse(&compare_cmd, table, argc, argv, paths);
    if (pr != CLI_OPTS_RUN) return pr;
    if (strcmp(paths[0], "-") == 0 && strcmp(paths[1], "-") == 0)
        return cli_usage_error("compare", "standard input can be only one of the two");
    gate *g = gs.g;
    size_t ng = gs.n;
    unsigned top = top_set ? a.top : a.format == FMT_JSON ? 0 : 20;
    side *s = calloc(2, sizeof *s);
    if (!s) {
        fprintf(stderr, "%s compare: out of memory\n", prog);
        return EXIT_IO;
    }
    int rc = run_one(&a, paths[0], &s[0], allow_empty);
    if (rc != EXIT_OK) {
        free(s);
        return rc;
    }
    rc = run_one(&a, paths[1], &s[1], allow_empty);
    if (rc != EXIT_OK) {
        etl_usage_free(&s[0].u);
        rep_run_close(&s[0].run);
        free(s);
        return rc;
    }
    etl_compare c;
    int status = EXIT_OK, failed = 0, failed_known = 0;
    if (etl_compare_build(&c, &s[0].u, &s[1].u) != ETL_OK) {
        fprintf(stderr, "%s compare: out of memory\n", prog);
        status = EXIT_IO;
    } else {
        etl_cmp_side sides[2];
        etl_compare_sides(&s[0].u, &s[1].u, sides);
        for (int k = 0; k < 2; k++) sides[k].damaged = etl_stats_damaged(&s[k].run.damage);
        for (size_t i = 0; i < ng; i++) {
            g[i].crossed = etl_cmp_expr_judge(&c, sides, &g[i].e, &g[i].delta, &g[i].found, &g[i].unknown_time);
            if (g[i].crossed < 0) gate_why(&g[i], &c, sides, paths[0], paths[1]);
            failed |= g[i].crossed != 0; /* a change that cannot be computed never passes */
            failed_known |= g[i].crossed > 0 || (g[i].crossed < 0 && !g[i].unknown_time);
            if (!g[i].found)
                fprintf(stderr, "%s compare: --fail-if '%s': no such name in either trace\n", prog, g[i].text);
        }
        for (int k = 0; k < 2 && !a.quiet; k++) {
            char line[UNKNOWN_LINE];
            if (sides[k].unknown_ns <= 0) continue;
            unknown_line(line, sizeof line, &sides[k], paths[k]);
            fprintf(stderr, "%s compare: note: %s: amounts count the known time only\n", prog, line);
        }
        if (a.format == FMT_JSON) {
            const rep_run *const runs[2] = {&s[0].run, &s[1].run};
            print_json(runs, &c, sides, top, g, ng, failed);
        } else {
            print_text(paths[0], paths[1], &c, sides, top, g, ng);
        }
        etl_compare_free(&c);
    }
    for (int k = 0; k < 2; k++) {
        etl_usage_free(&s[k].u);
        int r = rep_run_close(&s[k].run);
        if (r > status && status != EXIT_IO) status = r;
    }
    free(s);
    if (cli_stdout_done("compare") != EXIT_OK) return EXIT_IO;
    if (status == EXIT_IO || status == EXIT_NOT_ETL) return status;
    /*
     * A gate decided on what is known (or failed for another reason than lost time) is a verdict: 1, on
     * damaged input too. A gate only the unknown time left undecided is the damage's: 3 says the input
     * is damaged, never a regression made of lost data.
     */
    if (failed_known) return 1;
    if (status == EXIT_DAMAGED) return status;
    return failed ? 1 : status;
}

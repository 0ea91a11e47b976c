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
    "instance's, an upper bound). Rows are sorted by the biggest change.\n",
    {"BEFORE.etl", "AFTER.etl"}, 2, 2,
    "Exit status: 0 ok, 1 a --fail-if threshold was crossed (or an I/O error), 2 not an ETL\n"
    "file or no context switches in it, 3 input damaged, 64 usage.\n"};

/* Hundredths of a percent of the change, or INT64_MAX when before is 0 and after is not. */
static int64_t rel(int64_t b, int64_t a)
{
    if (b == 0) return a == 0 ? 0 : a > 0 ? INT64_MAX : INT64_MIN;
    __int128 r = ((__int128)a - b) * 10000 / (b < 0 ? -(__int128)b : b);
    /* INT64_MAX and INT64_MIN say "new": a finite change stops short of them. */
    return r >= INT64_MAX ? INT64_MAX - 1 : r <= INT64_MIN ? INT64_MIN + 1 : (int64_t)r;
}

static const char *fmt_rel(char out[32], int64_t b, int64_t a)
{
    int64_t r = rel(b, a);
    if (r == INT64_MAX) return strcpy(out, "new");
    if (r == INT64_MIN) return strcpy(out, "-new");
    char t[32];
    fmt_fixed(t, r, 2);
    snprintf(out, 32, "%s%.20s%%", r > 0 ? "+" : "", t);
    return out;
}

static const char *fmt_delta(char out[32], int64_t d)
{
    char t[32];
    fmt_dur(t, d < 0 ? -d : d);
    snprintf(out, 32, "%s%.24s", d < 0 ? "-" : d > 0 ? "+" : "", t);
    return out;
}

static void json_pair(jw *w, const char *key, const etl_cmp_row *r, unsigned m, const char *unit)
{
    char k[64];
    int64_t b = r->before[m], a = r->after[m];
    snprintf(k, sizeof k, "before_%s%s", key, unit);
    jw_i64(w, k, b);
    snprintf(k, sizeof k, "after_%s%s", key, unit);
    jw_i64(w, k, a);
    snprintf(k, sizeof k, "delta_%s%s", key, unit);
    jw_i64(w, k, a - b);
    snprintf(k, sizeof k, "delta_%s_pct", key);
    int64_t rr = rel(b, a);
    if (rr == INT64_MAX || rr == INT64_MIN) jw_null(w, k);
    else jw_fixed(w, k, rr, 2);
}

static void json_switches(jw *w, const char *prefix, const etl_cmp_row *r)
{
    char k[64];
    snprintf(k, sizeof k, "before_%s", prefix);
    jw_fixed(w, k, r->before[ETL_CMP_SWITCHES], 3);
    snprintf(k, sizeof k, "after_%s", prefix);
    jw_fixed(w, k, r->after[ETL_CMP_SWITCHES], 3);
}

static void json_row(jw *w, const etl_cmp_row *r)
{
    jw_bool(w, "in_before", r->in_before);
    jw_bool(w, "in_after", r->in_after);
    /* The keys for CPU: before_cpu_ns, after_cpu_ns, delta_ns, delta_pct (ns per second of window). */
    jw_i64(w, "before_cpu_ns", r->before[ETL_CMP_CPU]);
    jw_i64(w, "after_cpu_ns", r->after[ETL_CMP_CPU]);
    jw_i64(w, "delta_ns", sub_sat(r->after[ETL_CMP_CPU], r->before[ETL_CMP_CPU]));
    int64_t rr = rel(r->before[ETL_CMP_CPU], r->after[ETL_CMP_CPU]);
    if (rr == INT64_MAX || rr == INT64_MIN) jw_null(w, "delta_pct");
    else jw_fixed(w, "delta_pct", rr, 2);
    json_pair(w, "wait", r, ETL_CMP_WAIT, "_ns");
    json_switches(w, "switches_per_s", r);
    json_pair(w, "ready_p50", r, ETL_CMP_READY_P50, "_ns");
    json_pair(w, "ready_p99", r, ETL_CMP_READY_P99, "_ns");
    json_pair(w, "ready_max", r, ETL_CMP_READY_MAX, "_ns");
    jw_bool(w, "ready_exact", r->p_exact);
}

typedef struct gate {
    const char *text;
    etl_cmp_expr e;
    int crossed, found;
    int64_t delta;
} gate;

static const char *fmt_gate_delta(char out[48], const gate *g)
{
    if (!g->found) return strcpy(out, "not in either trace");
    if (g->e.relative) {
        if (g->delta == INT64_MAX) return strcpy(out, "+inf%");
        if (g->delta == INT64_MIN) return strcpy(out, "-inf%");
        char t[32];
        fmt_fixed(t, g->delta, 2);
        snprintf(out, 48, "%s%s%%", g->delta > 0 ? "+" : "", t);
    } else if (g->e.metric == ETL_CMP_SWITCHES) {
        char t[32];
        fmt_fixed(t, g->delta, 3);
        snprintf(out, 48, "%s%s/s", g->delta > 0 ? "+" : "", t);
    } else {
        char t[32];
        snprintf(out, 48, "%s%s", fmt_delta(t, g->delta),
                 g->e.metric == ETL_CMP_CPU || g->e.metric == ETL_CMP_WAIT ? "/s" : "");
    }
    return out;
}

static void print_json(const char *pb, const char *pa, const etl_compare *c, unsigned top, const gate *g, size_t ng,
                       int failed)
{
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w, NULL);
    jw_obj(&w, "before");
    jw_str(&w, "file", pb);
    jw_i64(&w, "window_ns", c->window_before);
    jw_obj_end(&w);
    jw_obj(&w, "after");
    jw_str(&w, "file", pa);
    jw_i64(&w, "window_ns", c->window_after);
    jw_obj_end(&w);
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
        jw_i64(&w, "before_max_ns", r->before[ETL_CMP_READY_MAX]);
        jw_i64(&w, "after_max_ns", r->after[ETL_CMP_READY_MAX]);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr(&w, "fail_if");
    for (size_t i = 0; i < ng; i++) {
        jw_obj(&w, NULL);
        jw_str(&w, "expr", g[i].text);
        jw_bool(&w, "found", g[i].found);
        if (g[i].found && g[i].delta != INT64_MAX && g[i].delta != INT64_MIN) {
            if (g[i].e.relative) jw_fixed(&w, "delta_pct", g[i].delta, 2);
            else if (g[i].e.metric == ETL_CMP_SWITCHES) jw_fixed(&w, "delta", g[i].delta, 3);
            else jw_i64(&w, "delta_ns", g[i].delta);
        } else {
            jw_null(&w, g[i].e.relative ? "delta_pct" : "delta");
        }
        jw_bool(&w, "crossed", g[i].crossed);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_bool(&w, "failed", failed);
    jw_obj_end(&w);
    jw_end(&w);
}

static void table(const char *title, const etl_cmp_row *v, size_t n, unsigned top, int reasons)
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
            snprintf(nm, sizeof nm, "%s%s%s", name, k && r->name[k - 1] == '/' ? "(unnamed)" : "",
                     !r->in_before ? " [new]" : !r->in_after ? " [gone]" : "");
            name = nm;
        }
        const char *row[9];
        row[0] = name;
        row[1] = fmt_dur(b[0], r->before[m]);
        row[2] = fmt_dur(b[1], r->after[m]);
        row[3] = fmt_delta(b[2], sub_sat(r->after[m], r->before[m]));
        row[4] = fmt_rel(b[3], r->before[m], r->after[m]);
        if (reasons) {
            row[5] = fmt_fixed(b[4], r->before[ETL_CMP_SWITCHES], 3);
            row[6] = fmt_fixed(b[5], r->after[ETL_CMP_SWITCHES], 3);
            row[7] = fmt_dur(b[6], r->before[ETL_CMP_READY_MAX]);
            row[8] = fmt_dur(b[7], r->after[ETL_CMP_READY_MAX]);
        } else {
            row[5] = fmt_dur(b[4], r->before[ETL_CMP_READY_P99]);
            row[6] = fmt_dur(b[5], r->after[ETL_CMP_READY_P99]);
            row[7] = fmt_dur(b[6], r->before[ETL_CMP_WAIT]);
            row[8] = fmt_dur(b[7], r->after[ETL_CMP_WAIT]);
        }
        tbl_row(&t, row);
    }
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
}

static void print_text(const char *pb, const char *pa, const etl_compare *c, unsigned top, const gate *g, size_t ng)
{
    char b1[32], b2[32], b3[32], b4[32];
    printf("etlkit compare: %s (%s) -> %s (%s); amounts per second of window\n", pb, fmt_dur(b1, c->window_before),
           pa, fmt_dur(b2, c->window_after));
    const etl_cmp_row *t = &c->total;
    printf("\nCPU busy      %s/s -> %s/s  %s (%s)\n", fmt_dur(b1, t->before[ETL_CMP_CPU]),
           fmt_dur(b2, t->after[ETL_CMP_CPU]), fmt_delta(b3, sub_sat(t->after[ETL_CMP_CPU], t->before[ETL_CMP_CPU])),
           fmt_rel(b4, t->before[ETL_CMP_CPU], t->after[ETL_CMP_CPU]));
    printf("Waiting       %s/s -> %s/s  %s (%s)\n", fmt_dur(b1, t->before[ETL_CMP_WAIT]),
           fmt_dur(b2, t->after[ETL_CMP_WAIT]), fmt_delta(b3, sub_sat(t->after[ETL_CMP_WAIT], t->before[ETL_CMP_WAIT])),
           fmt_rel(b4, t->before[ETL_CMP_WAIT], t->after[ETL_CMP_WAIT]));
    printf("Switch-ins    %s/s -> %s/s (%s)\n", fmt_fixed(b1, t->before[ETL_CMP_SWITCHES], 3),
           fmt_fixed(b2, t->after[ETL_CMP_SWITCHES], 3),
           fmt_rel(b4, t->before[ETL_CMP_SWITCHES], t->after[ETL_CMP_SWITCHES]));
    for (unsigned m = ETL_CMP_READY_P50; m <= ETL_CMP_READY_MAX; m++)
        printf("Ready %-7s %s -> %s  %s (%s)\n", etl_cmp_metric_name(m) + 6, fmt_dur(b1, t->before[m]),
               fmt_dur(b2, t->after[m]), fmt_delta(b3, sub_sat(t->after[m], t->before[m])), fmt_rel(b4, t->before[m], t->after[m]));
    table("Processes by change of CPU time (per second of window)", c->processes, c->nprocesses, top, 0);
    table("Threads (image/thread name) by change of CPU time", c->threads, c->nthreads, top, 0);
    table("Waits by reason, by change of waiting time (per second of window)", c->reasons, c->nreasons, top, 1);
    if (ng) printf("\n");
    for (size_t i = 0; i < ng; i++) {
        char d[48];
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
    rep_run_go(&s->run, a);
    if (etl_usage_finish(&s->u, s->run.end_ns) != ETL_OK) return rep_usage_failed(&s->run, &s->u, "compare");
    /* Every change against nothing is -100 %: a gate would pass on a trace recorded without CSWITCH. */
    if (!allow_empty && s->run.mstats.switches == 0) {
        fprintf(stderr,
                "%s compare: %s has no context switches (no CSwitch events or compact batches), nothing to "
                "compare; record with the CSWITCH kernel flag, or pass --allow-empty\n",
                prog, path);
        etl_usage_free(&s->u);
        rep_run_close(&s->run);
        return EXIT_NOT_ETL;
    }
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
                 "THRESHOLD  [+|-]N% (relative change), [+|-]N with ns, us,\n"
                 "        ms or s (cpu and wait: per second of window), or a\n"
                 "        plain number (switches per second)\n"
                 "e.g. 'cpu(total) > +10%'  'cpu(process=svchost) > +5ms'\n"
                 "     'ready_p99(process=dwm) > +20%'  'wait(reason=WrQueue) > +1s'\n"
                 "A name missing from BEFORE but present in AFTER is +infinite %;\n"
                 "a name in neither trace never fails (a warning says so).\n"},
        CLI_FLAG("allow-empty", 0, "compare a trace with no context switches (by default an error, exit 2: every "
                 "change against it would be -100 %)", &allow_empty, 1),
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
    int status = EXIT_OK, failed = 0;
    if (etl_compare_build(&c, &s[0].u, &s[1].u) != ETL_OK) {
        fprintf(stderr, "%s compare: out of memory\n", prog);
        status = EXIT_IO;
    } else {
        for (size_t i = 0; i < ng; i++) {
            g[i].crossed = etl_cmp_expr_eval(&c, &g[i].e, &g[i].delta, &g[i].found);
            failed |= g[i].crossed;
            if (!g[i].found)
                fprintf(stderr, "%s compare: --fail-if '%s': no such name in either trace\n", prog, g[i].text);
        }
        if (a.format == FMT_JSON) print_json(paths[0], paths[1], &c, top, g, ng, failed);
        else print_text(paths[0], paths[1], &c, top, g, ng);
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
    return failed ? 1 : status;
}

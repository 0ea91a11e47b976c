/* cmd_wakeups.c - `etlkit wakeups`: who wakes idle CPUs, per process and thread (like UIforETW's IdleWakeups). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "columns.h"
#include "etlkit/wakeups.h"

static const cli_cmd wakeups_cmd = {
    "wakeups", "FILE [OPTIONS]",
    "Who wakes idle CPUs: every switch-in whose old thread is the idle thread, charged to\n"
    "the readier of the thread switched in (the thread running where its ReadyThread was\n"
    "logged; `DPC` when it was readied from a DPC; `Idle`; `Unknown` when no ReadyThread\n"
    "readied it), per process and thread, per second of the window, with the C-states left\n"
    "(PreviousCState, when the switch carries it) and the idle time before each wake.\n"
    "--process and --thread select the threads woken.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

typedef struct ctx {
    etl_wakeups w;
    rep_args *a;
    rep_run *run;
} ctx;

static void on_row(void *p, const etl_sched_row *row)
{
    ctx *c = p;
    if ((c->a->process || c->a->thread >= 0) && !rep_thread_selected(c->a, c->run->model, row->new_thread)) return;
    etl_wakeups_add(&c->w, row);
}

static const char *const idle_labels[ETL_WAKEUP_IDLE_BUCKETS] = {"< 10 us", "10-100 us", "100 us-1 ms", "1-10 ms",
                                                                 "10-100 ms", "100 ms-1 s", ">= 1 s"};
static const int64_t idle_lo[ETL_WAKEUP_IDLE_BUCKETS] = {0, 10000, 100000, 1000000, 10000000, 100000000, 1000000000};

/* The waker's process name and PID; a waker that is not a thread by its kind ("Idle": PID 0). */
static const char *proc_of(const rep_run *run, const etl_wakeup_waker *x, char name[256], uint32_t *pid)
{
    if (x->kind != ETL_WAKER_THREAD) {
        *pid = x->kind == ETL_WAKER_IDLE ? 0 : UINT32_MAX;
        return strcpy(name, etl_waker_kind_name(x->kind));
    }
    return rep_process_name(run->model, x->process, name, pid);
}

/* A share of no wake-up is unknown: "-", not 0. */
static const char *pct(char out[32], uint64_t part, uint64_t whole)
{
    return whole ? fmt_fixed(out, rep_pct100((int64_t)part, (int64_t)whole), 2) : strcpy(out, "-");
}

/* Wake-ups per second of a 0 ns window (--range clipped at the trace's end) are unknown: "-", not 0. */
static const char *rate_text(char out[32], uint64_t n, int64_t window)
{
    return window > 0 ? fmt_fixed(out, rep_rate(n, window), 3) : strcpy(out, "-");
}

/* ---- the wakers' columns (by process, by thread): text, CSV and JSON from one table each ---- */

typedef struct rows_ctx {
    const rep_run *run;
    int64_t window;
    uint64_t total;
} rows_ctx;

#define GETTER(name) static void name(const col_def *col, const void *cx, const void *row, col_val *v)
#define X ((const etl_wakeup_waker *)row)
#define C ((const rows_ctx *)cx)
GETTER(g_pid)
{
    (void)col;
    uint32_t pid;
    proc_of(C->run, X, v->buf, &pid);
    if (pid != UINT32_MAX) cv_u64(v, pid);
    else cv_null(v);
}
GETTER(g_pname)
{
    (void)col;
    uint32_t pid;
    cv_str(v, proc_of(C->run, X, v->buf, &pid));
}
/* For people, an empty image name shows as "" (text_name); threads of no known process read "Unknown process", not
 * "Unknown" as the wake-ups of no known readier do (both were "Unknown -"). */
GETTER(g_pname_text)
{
    g_pname(col, cx, row, v);
    if (X->kind == ETL_WAKER_THREAD && !etl_sched_process_at(C->run->model, X->process)) v->s = "Unknown process";
    else v->s = text_name(v->s);
}
/* Who woke (etl_waker_kind): the JSON and CSV rows' key, since a thread's process may be "Unknown" as a waker is. */
GETTER(g_waker)
{
    (void)col, (void)cx;
    static const char *const keys[] = {"thread", "idle", "dpc", "unknown"};
    cv_str(v, keys[X->kind < 4 ? X->kind : ETL_WAKER_UNKNOWN]);
}
GETTER(g_rate)
{
    (void)col;
    if (C->window > 0) cv_i64(v, rep_rate(X->count, C->window));
    else cv_null(v);
}
GETTER(g_pct)
{
    (void)col;
    cv_i64(v, rep_pct100((int64_t)X->count, (int64_t)C->total));
}
GETTER(g_tid)
{
    (void)col;
    const etl_sched_thread *t = etl_sched_thread_at(C->run->model, X->thread);
    if (t) cv_u64(v, t->tid);
    else if (X->kind == ETL_WAKER_IDLE) cv_u64(v, 0);
    else cv_null(v);
}
/* The thread's process: "image (PID)" for people, "Idle (0)", "DPC" or "Unknown" without a thread. */
GETTER(g_plabel)
{
    (void)col;
    if (etl_sched_thread_at(C->run->model, X->thread)) cv_str(v, rep_process_label(C->run->model, X->thread, v->buf));
    else cv_str(v, X->kind == ETL_WAKER_IDLE ? "Idle (0)" : etl_waker_kind_name(X->kind));
}
/* The thread's name; without a thread, the waker's kind in JSON and nothing for people. */
GETTER(g_name)
{
    (void)col;
    int known = etl_sched_thread_at(C->run->model, X->thread) != NULL;
    cv_str(v, known ? rep_thread_name(C->run->model, X->thread) : etl_waker_kind_name(X->kind));
}
GETTER(g_name_text)
{
    (void)col;
    int known = etl_sched_thread_at(C->run->model, X->thread) != NULL;
    cv_str(v, known ? rep_thread_name(C->run->model, X->thread) : "");
}
#undef X
#undef C

#define COUNT offsetof(etl_wakeup_waker, count)
static const col_def process_cols[] = {
    {"Process", NULL, NULL, COL_TEXT, 0, g_pname_text, 0},
    {"=PID", NULL, "pid", COL_COUNT, 0, g_pid, 0},
    {NULL, NULL, "name", COL_TEXT, 0, g_pname, 0},
    {"=Wake-ups", NULL, "count", COL_COUNT, 0, col_u64_at, COUNT},
    {"=Per second", NULL, "per_second", COL_FIXED, 3, g_rate, 0},
    {"=%", NULL, NULL, COL_FIXED, 2, g_pct, 0},
    {NULL, NULL, "waker", COL_TEXT, 0, g_waker, 0},
};
static const col_def thread_cols[] = {
    {"=TID", "tid", "tid", COL_COUNT, 0, g_tid, 0},
    {NULL, NULL, "pid", COL_COUNT, 0, g_pid, 0},
    {NULL, NULL, "process", COL_TEXT, 0, g_pname, 0},
    {"Process", "process", NULL, COL_TEXT, 0, g_plabel, 0},
    {NULL, NULL, "name", COL_TEXT, 0, g_name, 0},
    {"Thread name", "name", NULL, COL_TEXT, 0, g_name_text, 0},
    {"=Wake-ups", "count", "count", COL_COUNT, 0, col_u64_at, COUNT},
    {"=Per second", "per_second", "per_second", COL_FIXED | COL_NULL_EMPTY, 3, g_rate, 0},
    {"=%", "pct", NULL, COL_FIXED, 2, g_pct, 0},
    {NULL, "waker", "waker", COL_TEXT, 0, g_waker, 0},
};
#undef COUNT
#define NPROCESS_COLS (sizeof process_cols / sizeof process_cols[0])
#define NTHREAD_COLS (sizeof thread_cols / sizeof thread_cols[0])

void wakeups_json(jw *j, const rep_run *run, const etl_wakeups *w, const rep_args *a)
{
    int64_t window = run->v1 - run->v0;
    rep_json_head(j, run, run->v0, run->v1, 0);
    jw_u64(j, "total", w->total);
    if (window > 0) jw_fixed(j, "per_second", rep_rate(w->total, window), 3);
    else jw_null(j, "per_second"); /* a 0 ns window: no rate */
    jw_obj(j, "by_waker");
    jw_u64(j, "thread", w->by_kind[ETL_WAKER_THREAD]);
    jw_u64(j, "dpc", w->by_kind[ETL_WAKER_DPC]);
    jw_u64(j, "idle", w->by_kind[ETL_WAKER_IDLE]);
    jw_u64(j, "unknown", w->by_kind[ETL_WAKER_UNKNOWN]);
    jw_obj_end(j);
    rows_ctx rc = {run, window, w->total};
    jw_arr(j, "by_process");
    for (size_t i = 0; i < w->nprocesses && (!a->top || i < a->top); i++)
        cols_json_row(j, NULL, process_cols, NPROCESS_COLS, &rc, &w->processes[i]);
    jw_arr_end(j);
    jw_arr(j, "by_thread");
    for (size_t i = 0; i < w->nthreads && (!a->top || i < a->top); i++)
        cols_json_row(j, NULL, thread_cols, NTHREAD_COLS, &rc, &w->threads[i]);
    jw_arr_end(j);
    jw_arr(j, "cstates");
    for (unsigned c = 0; c < 256; c++) {
        if (!w->cstate[c]) continue;
        jw_obj(j, NULL);
        jw_u64(j, "cstate", c);
        jw_u64(j, "count", w->cstate[c]);
        jw_obj_end(j);
    }
    jw_arr_end(j);
    jw_u64(j, "cstate_unknown", w->cstate_unknown);
    rep_json_bins(j, "idle_before", "min_ns", "max_ns", idle_lo, w->idle_hist, ETL_WAKEUP_IDLE_BUCKETS);
    jw_i64(j, "idle_ns", w->idle_ns);
    jw_u64(j, "idle_unknown", w->idle_unknown);
    jw_arr(j, "by_cpu");
    for (size_t c = 0; c < w->ncpus; c++) jw_u64(j, NULL, w->per_cpu[c]);
    jw_arr_end(j);
    rep_json_anomalies_as(run, j, a->skip);
}

static void print_text(const rep_args *a, const rep_run *run, const etl_wakeups *w, int64_t window)
{
    char b1[32], b3[32];
    int csv = a->format == FMT_CSV;
    rows_ctx rc = {run, window, w->total};
    if (!csv) {
        rep_print_header(run, "etlkit wakeups");
        printf("\n%llu idle wake-ups, %s per second: %llu by threads, %llu by DPCs, %llu by the idle thread, "
               "%llu unknown\n",
               (unsigned long long)w->total, rate_text(b1, w->total, window),
               (unsigned long long)w->by_kind[ETL_WAKER_THREAD], (unsigned long long)w->by_kind[ETL_WAKER_DPC],
               (unsigned long long)w->by_kind[ETL_WAKER_IDLE], (unsigned long long)w->by_kind[ETL_WAKER_UNKNOWN]);
        printf("\nWoken by process\n");
        tbl t;
        cols_tbl_init(&t, process_cols, NPROCESS_COLS, 0);
        for (size_t i = 0; i < w->nprocesses && (!rep_top(a, 20) || i < rep_top(a, 20)); i++)
            cols_tbl_row(&t, process_cols, NPROCESS_COLS, 0, &rc, &w->processes[i]);
        tbl_print_text(&t, stdout, "  ");
        tbl_free(&t);
        printf("\nWoken by thread\n");
    }
    tbl t;
    cols_tbl_init(&t, thread_cols, NTHREAD_COLS, csv);
    unsigned limit = rep_top(a, csv ? 0 : 20);
    for (size_t i = 0; i < w->nthreads && (!limit || i < limit); i++)
        cols_tbl_row(&t, thread_cols, NTHREAD_COLS, csv, &rc, &w->threads[i]);
    if (csv) tbl_print_sheet(&t, stdout);
    else tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
    if (csv) return;
    printf("\nC-states left (PreviousCState)\n");
    for (unsigned c = 0; c < 256; c++)
        if (w->cstate[c])
            printf("  C%u  %llu (%s%%)\n", c, (unsigned long long)w->cstate[c], pct(b1, w->cstate[c], w->total));
    if (w->cstate_unknown)
        printf("  not recorded  %llu (compact records and CSwitch v1 carry none)\n",
               (unsigned long long)w->cstate_unknown);
    uint64_t timed = w->total - w->idle_unknown; /* the wake-ups whose idle time is known */
    printf("\nIdle time before the wake (mean %s%s)\n",
           timed ? fmt_dur(b3, w->idle_ns / (int64_t)timed) : strcpy(b3, "-"), /* the mean of none: unknown */
           /* both causes of ETL_ROW_OLD_SI_UNKNOWN: the CPU's first switch, or one after a slice of no known thread */
           w->idle_unknown ? "; unknown: idle since before the trace, or across records lost" : "");
    static const char *const ih[] = {"Idle for", "=Wake-ups", "=%"};
    tbl_init(&t, 3, ih);
    for (unsigned b = 0; b < ETL_WAKEUP_IDLE_BUCKETS; b++) {
        char cnt[24];
        snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)w->idle_hist[b]);
        const char *r[] = {idle_labels[b], cnt, pct(b1, w->idle_hist[b], timed)};
        tbl_row(&t, r);
    }
    if (w->idle_unknown) {
        char cnt[24];
        snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)w->idle_unknown);
        const char *r[] = {"unknown", cnt, "-"}; /* not a share of the timed ones */
        tbl_row(&t, r);
    }
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
    printf("\nPer CPU:");
    for (size_t c = 0; c < w->ncpus; c++) printf(" %zu: %llu", c, (unsigned long long)w->per_cpu[c]);
    printf("\n");
    rep_print_anomalies(run, stdout);
}

int cmd_wakeups(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "wakeups");
    a.range_help = "only the wake-ups switched in within this window, from the trace start (seconds, or ms/us/ns: "
                   "--range 1.5 2500ms), each whole: the idle time before one is not clipped";
    int pr = rep_parse(&a, &wakeups_cmd, NULL, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    ctx c;
    memset(&c, 0, sizeof c);
    rep_run run;
    c.a = &a;
    c.run = &run;
    int rc = rep_run_open(&run, &a, on_row, &c, NULL);
    if (rc != EXIT_OK) return rc;
    etl_wakeups_options wo = {.sz = sizeof wo, .v0 = a.v0, .v1 = a.has_range ? a.v1 : a.v0};
    if (etl_wakeups_init(&c.w, run.model, &wo) != ETL_OK) {
        fprintf(stderr, "%s wakeups: out of memory\n", prog);
        rep_run_close(&run);
        return EXIT_IO;
    }
    rep_run_go(&run, &a);
    if (etl_wakeups_finish(&c.w) != ETL_OK) {
        fprintf(stderr, "%s wakeups: out of memory\n", prog);
        run.told = true;
        etl_wakeups_free(&c.w);
        rep_run_close(&run);
        return EXIT_IO;
    }
    int64_t window = run.v1 - run.v0;
    rep_no_match(&run, &a);
    if (rep_no_switches(&run, &a) && a.format == FMT_TEXT) {
    } else if (a.format == FMT_JSON) {
        jw j;
        jw_init(&j, stdout);
        jw_obj(&j, NULL);
        wakeups_json(&j, &run, &c.w, &a);
        jw_obj_end(&j);
        jw_end(&j);
    } else {
        print_text(&a, &run, &c.w, window);
    }
    etl_wakeups_free(&c.w);
    rc = rep_run_close(&run);
    if (cli_stdout_done("wakeups") != EXIT_OK) return EXIT_IO;
    return rc;
}

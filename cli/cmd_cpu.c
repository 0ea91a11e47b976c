/* cmd_cpu.c - `etlkit cpu`: CPU time per CPU, process and thread (WPA's CPU Usage (Precise) by process). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "rep_columns.h"

static const cli_cmd cpu_cmd = {
    "cpu", "FILE [OPTIONS]",
    "CPU time per CPU, per process and per thread, from the context switches (CSwitch\n"
    "events or compact batches): each switch-in runs until the next switch on its CPU.\n"
    "Busy + idle = the window on every CPU; threads and processes sorted by CPU time.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

/* ---- the threads' columns: text, CSV and JSON from one table ---- */

typedef struct rows_ctx {
    const rep_run *run;
    int64_t win;              /* CPU-seconds of the window, for % CPU */
} rows_ctx;

#define GETTER(name) static void name(const col_def *col, const void *ctx, const void *row, col_val *v)
#define T ((const etl_usage_thread *)row)
/* A share of a 0 ns window (--range clipped at the trace's end) is unknown, not 0. */
static void share(col_val *v, int64_t part, int64_t whole)
{
    if (whole > 0) cv_i64(v, rep_pct100(part, whole));
    else cv_null(v);
}

GETTER(g_pct)
{
    (void)col;
    share(v, T->cpu_ns, ((const rows_ctx *)ctx)->win);
}
/* A time, or null when there is none in the window (a thread seen only outside --range), not a -1. */
GETTER(g_time)
{
    col_i64_at(col, ctx, row, v);
    if (v->i < 0) cv_null(v);
}
#undef T

#define AT(f) offsetof(etl_usage_thread, f)
static const col_def thread_cols[] = {
    REP_THREAD_COLS(etl_usage_thread, thread),
    {"=CPU time", "cpu_ns", "cpu_ns", COL_NS, 0, col_i64_at, AT(cpu_ns)},
    {"=% CPU", "cpu_pct", NULL, COL_FIXED | COL_NULL_EMPTY, 2, g_pct, 0},
    {"=Switches", "switches", "switches", COL_COUNT, 0, col_u64_at, AT(switches)},
    {"=Voluntary", "voluntary", "voluntary", COL_COUNT, 0, col_u64_at, AT(voluntary)},
    {"=Involuntary", "involuntary", "involuntary", COL_COUNT, 0, col_u64_at, AT(involuntary)},
    {NULL, NULL, "first_ns", COL_NS, 0, g_time, AT(first_ns)},
    {NULL, NULL, "last_ns", COL_NS, 0, g_time, AT(last_ns)},
};
#undef AT
#define NTHREAD_COLS (sizeof thread_cols / sizeof thread_cols[0])

static int process_selected(const rep_args *a, const rep_run *run, const etl_usage *u, const etl_usage_process *p)
{
    if (!a->process && a->thread < 0) return 1;
    for (size_t i = 0; i < u->nthreads; i++) {
        const etl_sched_thread *t = etl_sched_thread_at(run->model, u->threads[i].thread);
        uint32_t proc = t->process < (uint32_t)-2 ? t->process : ETL_SCHED_NONE;
        if (proc == p->process && rep_thread_selected(a, run->model, u->threads[i].thread)) return 1;
    }
    return 0;
}

/* ---- the processes' columns: text and JSON from one table (--csv lists the threads) ---- */

#define P ((const etl_usage_process *)row)
GETTER(g_pname)
{
    (void)col;
    uint32_t pid;
    cv_str(v, rep_process_name(((const rows_ctx *)ctx)->run->model, P->process, v->buf, &pid));
}
/* For people, an empty image name shows as "" (text_name). */
GETTER(g_pname_text)
{
    g_pname(col, ctx, row, v);
    v->s = text_name(v->s);
}
GETTER(g_ppid)
{
    (void)col;
    char name[256];
    uint32_t pid;
    rep_process_name(((const rows_ctx *)ctx)->run->model, P->process, name, &pid);
    if (pid != UINT32_MAX) cv_u64(v, pid);
    else cv_null(v);
}
GETTER(g_ppct)
{
    (void)col;
    share(v, P->cpu_ns, ((const rows_ctx *)ctx)->win);
}
#undef P

#define AT(f) offsetof(etl_usage_process, f)
static const col_def process_cols[] = {
    {"Process", NULL, NULL, COL_TEXT, 0, g_pname_text, 0},
    {"=PID", NULL, "pid", COL_COUNT, 0, g_ppid, 0},
    {NULL, NULL, "name", COL_TEXT, 0, g_pname, 0},
    {"=CPU time", NULL, "cpu_ns", COL_NS, 0, col_i64_at, AT(cpu_ns)},
    {"=% CPU", NULL, NULL, COL_FIXED, 2, g_ppct, 0},
    {"=Threads", NULL, NULL, COL_COUNT, 0, col_u32_at, AT(threads)},
    {NULL, NULL, "switches", COL_COUNT, 0, col_u64_at, AT(switches)},
    {"=Switches", NULL, NULL, COL_COUNT, 0, col_u64_at, AT(switches)},
    {NULL, NULL, "threads", COL_COUNT, 0, col_u32_at, AT(threads)},
};
#undef AT
#define NPROCESS_COLS (sizeof process_cols / sizeof process_cols[0])

/* ---- the CPUs' columns: text and JSON from one table (the total's row for people only) ---- */

typedef struct cpu_row {
    etl_usage_cpu k;
    size_t cpu;               /* SIZE_MAX: every CPU's total */
    int64_t whole;            /* what the busy share is of */
} cpu_row;

#define R ((const cpu_row *)row)
GETTER(g_cpu)
{
    (void)col, (void)ctx;
    if (R->cpu == SIZE_MAX) cv_str(v, "all");
    else cv_u64(v, R->cpu);
}
GETTER(g_busy_pct)
{
    (void)col, (void)ctx;
    share(v, R->k.busy_ns, R->whole);
}
#undef R

#define AT(f) offsetof(cpu_row, k.f)
static const col_def cpu_cols[] = {
    {"=CPU", NULL, "cpu", COL_COUNT, 0, g_cpu, 0},
    {"=Busy", NULL, "busy_ns", COL_NS, 0, col_i64_at, AT(busy_ns)},
    {"=Idle", NULL, "idle_ns", COL_NS, 0, col_i64_at, AT(idle_ns)},
    {"=Unknown", NULL, "unknown_ns", COL_NS, 0, col_i64_at, AT(unknown_ns)},
    {"=Busy %", NULL, NULL, COL_FIXED, 2, g_busy_pct, 0},
    {"=Switches", NULL, "switches", COL_COUNT, 0, col_u64_at, AT(switches)},
};
#undef AT
#define NCPU_COLS (sizeof cpu_cols / sizeof cpu_cols[0])

/* Every CPU's times and switches added up (saturating). */
static etl_usage_cpu cpus_total(const etl_usage *u)
{
    etl_usage_cpu t = {0, 0, 0, 0};
    for (size_t c = 0; c < u->ncpus; c++) {
        add_sat(&t.busy_ns, u->cpus[c].busy_ns);
        add_sat(&t.idle_ns, u->cpus[c].idle_ns);
        add_sat(&t.unknown_ns, u->cpus[c].unknown_ns);
        t.switches += u->cpus[c].switches;
    }
    return t;
}

void cpu_json(jw *w, const rep_run *run, const etl_usage *u, const rep_args *a, int intervals)
{
    rep_json_head(w, run, u->o.v0, u->o.v1, u->ncpus);
    jw_arr(w, "cpus");
    for (size_t c = 0; c < u->ncpus; c++) {
        cpu_row r = {u->cpus[c], c, 0};
        cols_json_row(w, NULL, cpu_cols, NCPU_COLS, NULL, &r);
    }
    jw_arr_end(w);
    etl_usage_cpu all = cpus_total(u);
    jw_i64(w, "busy_ns", all.busy_ns);
    jw_i64(w, "idle_ns", all.idle_ns);
    jw_i64(w, "unknown_ns", all.unknown_ns);
    jw_arr(w, "processes");
    unsigned shown = 0;
    for (size_t i = 0; i < u->nprocesses && (!a->top || shown < a->top); i++) {
        const etl_usage_process *p = &u->processes[i];
        if (!process_selected(a, run, u, p)) continue;
        shown++;
        rows_ctx rc = {run, 0};
        cols_json_row(w, NULL, process_cols, NPROCESS_COLS, &rc, p);
    }
    jw_arr_end(w);
    jw_arr(w, "threads");
    shown = 0;
    for (size_t i = 0; i < u->nthreads && (!a->top || shown < a->top); i++) {
        if (!rep_thread_selected(a, run->model, u->threads[i].thread)) continue;
        shown++;
        rows_ctx rc = {run, 0};
        cols_json_row(w, NULL, thread_cols, NTHREAD_COLS, &rc, &u->threads[i]);
    }
    jw_arr_end(w);
    if (intervals && u->o.interval_ns > 0) {
        size_t np = u->nprocesses < (a->top ? a->top : 10) ? u->nprocesses : (a->top ? a->top : 10);
        jw_arr(w, "intervals");
        for (size_t b = 0; b < u->nbuckets; b++) {
            int64_t s, e;
            etl_usage_interval_bounds(u, b, &s, &e);
            jw_obj(w, NULL);
            jw_i64(w, "start_ns", s);
            jw_i64(w, "end_ns", e);
            int64_t tot = 0;
            jw_arr(w, "cpus");
            for (size_t c = 0; c < u->bucket_stride; c++) {
                int64_t v = u->bucket_cpu_busy[b * u->bucket_stride + c];
                add_sat(&tot, v);
                jw_i64(w, NULL, v);
            }
            jw_arr_end(w);
            jw_i64(w, "busy_ns", tot);
            jw_arr(w, "processes");
            /* The interval's cells are by process index, only the nonzero ones kept. */
            size_t cell = u->bucket_first[b], cell_end = u->bucket_first[b + 1];
            for (size_t j = 0; j < np; j++) {
                char label[256];
                uint32_t pid;
                rep_process_name(run->model, u->processes[j].process, label, &pid);
                jw_obj(w, NULL);
                if (pid != UINT32_MAX) jw_u64(w, "pid", pid);
                else jw_null(w, "pid");
                jw_str(w, "name", label);
                int64_t pb = 0;
                if (cell < cell_end && u->bucket_cells[cell].process == j) pb = u->bucket_cells[cell++].busy_ns;
                jw_i64(w, "busy_ns", pb);
                jw_obj_end(w);
            }
            jw_arr_end(w);
            /* neither busy nor idle: records lost, a thread not known (idle would hide it); after the
             * keys there were, which keep their places */
            int64_t unk = 0;
            jw_arr(w, "unknown_cpus");
            for (size_t c = 0; c < u->bucket_stride; c++) {
                int64_t v = etl_usage_interval_cpu_unknown_ns(u, b, c);
                add_sat(&unk, v);
                jw_i64(w, NULL, v);
            }
            jw_arr_end(w);
            jw_i64(w, "unknown_ns", unk);
            jw_obj_end(w);
        }
        jw_arr_end(w);
    }
    rep_json_anomalies_as(run, w, a->skip);
}

/*
 * --interval for people: per interval, each CPU's and the machine's busy share; when some of the window is unknown
 * (records lost, a thread not known), the machine's unknown share too, so that it does not read as idle.
 * -1: out of memory.
 */
static int print_intervals(const etl_usage *u)
{
    size_t nc = u->bucket_stride < 64 ? u->bucket_stride : 64;
    bool unknown = false;
    for (size_t c = 0; c < u->ncpus; c++) unknown |= u->cpus[c].unknown_ns > 0;
    const char **head = calloc(nc + 3, sizeof *head);
    char (*names)[16] = calloc(nc, sizeof *names);
    char (*cells)[32] = calloc(nc + 3, sizeof *cells);
    const char **row = calloc(nc + 3, sizeof *row);
    tbl t;
    int rc = -1;
    if (!head || !names || !cells || !row) goto out;
    head[0] = "=Start (s)";
    for (size_t c = 0; c < nc; c++) {
        snprintf(names[c], sizeof names[c], "=CPU %zu %%", c);
        head[c + 1] = names[c];
    }
    head[nc + 1] = "=All %";
    head[nc + 2] = "=Unknown %";
    if (tbl_init(&t, (unsigned)nc + 2 + unknown, head) != 0) {
        tbl_free(&t);
        goto out;
    }
    rc = 0;
    for (size_t b = 0; b < u->nbuckets; b++) {
        int64_t s, e;
        etl_usage_interval_bounds(u, b, &s, &e);
        int64_t all = 0;
        fmt_fixed(cells[0], s / 1000, 6);
        row[0] = cells[0];
        for (size_t c = 0; c < u->bucket_stride; c++) add_sat(&all, u->bucket_cpu_busy[b * u->bucket_stride + c]);
        for (size_t c = 0; c < nc; c++) {
            fmt_fixed(cells[c + 1], rep_pct100(u->bucket_cpu_busy[b * u->bucket_stride + c], e - s), 2);
            row[c + 1] = cells[c + 1];
        }
        fmt_fixed(cells[nc + 1], rep_pct100(all, mul_sat(e - s, (int64_t)u->bucket_stride)), 2);
        row[nc + 1] = cells[nc + 1];
        int64_t unk = 0;
        for (size_t c = 0; c < u->bucket_stride; c++) add_sat(&unk, etl_usage_interval_cpu_unknown_ns(u, b, c));
        fmt_fixed(cells[nc + 2], rep_pct100(unk, mul_sat(e - s, (int64_t)u->bucket_stride)), 2);
        row[nc + 2] = cells[nc + 2];
        if (tbl_row(&t, row) != 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0) {
        printf("\nBusy share per interval\n");
        if (unknown)
            printf("(Unknown %%: the share of all CPUs' time whose thread is not known: records lost, a file cut short, "
                   "a compact trace's last slices, or slices dropped by --complete-only; a CPU %% counts it as not busy, "
                   "as All %% does)\n");
        if (nc < u->bucket_stride)
            printf("(CPUs 0 to %zu of %zu; All %% and --json cover every CPU)\n", nc - 1, u->bucket_stride);
        tbl_print_text(&t, stdout, "  ");
    }
    tbl_free(&t);
out:
    free(head);
    free(names);
    free(cells);
    free(row);
    return rc;
}

/* -1: out of memory for the intervals' table. */
static int print_table(const rep_args *a, const rep_run *run, const etl_usage *u)
{
    /* A damaged time can make the window span centuries: the CPU-seconds saturate. */
    int64_t win = mul_sat(u->o.v1 - u->o.v0, (int64_t)(u->ncpus ? u->ncpus : 1));
    if (a->format == FMT_TEXT) {
        rep_print_header(run, "etlkit cpu");
        printf("\n");
        tbl t;
        cols_tbl_init(&t, cpu_cols, NCPU_COLS, 0);
        for (size_t c = 0; c < u->ncpus; c++) {
            cpu_row r = {u->cpus[c], c, u->o.v1 - u->o.v0};
            cols_tbl_row(&t, cpu_cols, NCPU_COLS, 0, NULL, &r);
        }
        cpu_row all = {cpus_total(u), SIZE_MAX, win};
        cols_tbl_row(&t, cpu_cols, NCPU_COLS, 0, NULL, &all);
        tbl_print_text(&t, stdout, "");
        tbl_free(&t);
        printf("\n");
        cols_tbl_init(&t, process_cols, NPROCESS_COLS, 0);
        rows_ctx prc = {run, win};
        unsigned shown = 0;
        for (size_t i = 0; i < u->nprocesses && (!rep_top(a, 20) || shown < rep_top(a, 20)); i++) {
            const etl_usage_process *p = &u->processes[i];
            if (!process_selected(a, run, u, p)) continue;
            shown++;
            cols_tbl_row(&t, process_cols, NPROCESS_COLS, 0, &prc, p);
        }
        tbl_print_text(&t, stdout, "");
        tbl_free(&t);
        printf("\n");
    }
    tbl t;
    int csv = a->format == FMT_CSV;
    cols_tbl_init(&t, thread_cols, NTHREAD_COLS, csv);
    rows_ctx rc = {run, win};
    unsigned shown = 0;
    unsigned limit = rep_top(a, csv ? 0 : 20);
    for (size_t i = 0; i < u->nthreads && (!limit || shown < limit); i++) {
        const etl_usage_thread *x = &u->threads[i];
        if (!rep_thread_selected(a, run->model, x->thread)) continue;
        shown++;
        cols_tbl_row(&t, thread_cols, NTHREAD_COLS, csv, &rc, x);
    }
    if (a->format == FMT_CSV) tbl_print_sheet(&t, stdout);
    else tbl_print_text(&t, stdout, "");
    tbl_free(&t);
    if (a->format == FMT_TEXT && u->o.interval_ns > 0 && u->nbuckets && print_intervals(u) != 0) return -1;
    if (a->format == FMT_TEXT) rep_print_anomalies(run, stdout);
    return 0;
}

typedef struct interval_arg {
    int64_t ns;
    const char *text; /* as given, for the refusal */
} interval_arg;

/* --interval as given, for the refusal. */
static int interval_given(const cli_opt *o, const char *value, char *err, size_t cap)
{
    (void)err, (void)cap;
    ((interval_arg *)o->ctx)->text = value;
    return 0;
}

/* A length as --interval takes it, exactly: "20us", "20.001us", "1.5s". */
static const char *interval_text(char out[32], int64_t ns)
{
    static const struct { int64_t per; const char *unit; } units[] = {
        {1000000000, "s"}, {1000000, "ms"}, {1000, "us"}, {1, "ns"}};
    size_t k = 0;
    while (k < 3 && ns < units[k].per) k++;
    int64_t per = units[k].per, whole = ns / per, frac = ns % per;
    int digits = 0;
    for (int64_t p = per; p > 1; p /= 10) digits++;
    while (frac && frac % 10 == 0) {
        frac /= 10;
        digits--;
    }
    if (frac) snprintf(out, 32, "%lld.%0*lld%s", (long long)whole, digits, (long long)frac, units[k].unit);
    else snprintf(out, 32, "%lld%s", (long long)whole, units[k].unit);
    return out;
}

/*
 * Every interval of the window or none: more than the most kept is refused (exit 64) with the
 * shortest interval that fits, before anything is printed.
 */
static int intervals_refused(const etl_usage *u, const rep_run *run, const interval_arg *interval)
{
    uint64_t n;
    int64_t win, fit;
    uint64_t max = etl_usage_intervals(u, run->end_ns, &n, &win, &fit);
    if (n <= max) return 0;
    char w[32], f[32], cpus[48] = "";
    if (max < ETL_USAGE_MAX_BUCKETS) snprintf(cpus, sizeof cpus, " on %zu CPUs", u->bucket_stride);
    fprintf(stderr, "%s cpu: --interval %s makes %llu intervals over %s, more than %llu%s; use --interval %s or more\n",
            prog, interval->text, (unsigned long long)n, fmt_dur(w, win), (unsigned long long)max, cpus,
            interval_text(f, fit));
    return 1;
}

int cmd_cpu(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "cpu");
    interval_arg iv = {0, NULL};
    /* CPU time needs the switches and the names, not who readied whom nor the spin locks. */
    a.skip = REP_SKIP_CPU;
    const cli_opt own[] = {
        {.kind = CLI_OPT_DURATION, .name = "interval", .arg = "T", .dst = &iv.ns, .min = 1, .check = interval_given,
         .ctx = &iv, .need = "a positive time such as 100ms",
         .help = "also the utilisation per interval of T (e.g. 100ms), per CPU and per top process, slices split at "
                 "interval edges"},
        CLI_END};
    int pr = rep_parse(&a, &cpu_cmd, own, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    int64_t interval = iv.ns;
    etl_usage u;
    /* Per interval, the processes print_json shows: --top's, 10 when all (0). */
    etl_usage_options uo = {sizeof uo, a.v0, a.has_range ? a.v1 : a.v0, 10, interval, true, 0, a.top ? a.top : 10, 0, NULL, 0};
    if (etl_usage_init(&u, NULL, &uo) != ETL_OK) {
        fprintf(stderr, "%s cpu: out of memory\n", prog);
        return EXIT_IO;
    }
    /* CPU by CPU, unless intervals need each row's process at its time (only time order knows it). */
    etl_sched_percpu_consumer pc;
    etl_usage_percpu(&u, &pc);
    rep_run run;
    int rc = rep_run_percpu(&run, &a, interval ? NULL : &pc);
    if (rc == REP_TIME_ORDER) {
        etl_usage_free(&u);
        rc = rep_run_start(&run, &a, etl_usage_add, &u, NULL);
        if (rc == EXIT_OK && etl_usage_init(&u, run.model, &uo) != ETL_OK) {
            fprintf(stderr, "%s cpu: out of memory\n", prog);
            rc = EXIT_IO;
        }
        if (rc != EXIT_OK) {
            rep_run_close(&run);
            return rc;
        }
        rep_run_go(&run, &a);
    } else if (rc != EXIT_OK) {
        etl_usage_free(&u);
        return rc;
    }
    if (interval && intervals_refused(&u, &run, &iv)) {
        etl_usage_free(&u);
        rep_run_close(&run);
        return EXIT_USAGE;
    }
    if (etl_usage_finish(&u, run.end_ns) != ETL_OK) return rep_usage_failed(&run, &u, "cpu");
    rep_no_match(&run, &a);
    if (rep_no_switches(&run, &a) && a.format == FMT_TEXT) {
        /* said so; an empty table is no answer (CSV gets its header row: a spreadsheet reads the columns) */
    } else if (a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        cpu_json(&w, &run, &u, &a, 1);
        jw_obj_end(&w);
        jw_end(&w);
    } else {
        if (print_table(&a, &run, &u) != 0) {
            fprintf(stderr, "%s cpu: out of memory\n", prog);
            etl_usage_free(&u);
            rep_run_close(&run);
            return EXIT_IO;
        }
    }
    etl_usage_free(&u);
    return rep_finish(&run, "cpu");
}

/* cmd_waits.c - `etlkit waits`: ready latency and waits per thread and per wait reason. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "base/sort.h"
#include "report.h"
#include "rep_json.h"
#include "rep_columns.h"
#include "waits_stacks.h"
#include "symbols_cli.h"

static const cli_cmd waits_cmd = {
    "waits", "FILE [OPTIONS]",
    "Why threads were not running: Ready (from readied or preempted to switched in) and\n"
    "Waits (from switched out waiting to readied), per thread, per wait reason, and the\n"
    "longest single intervals with who readied the thread. Ready percentiles are exact\n"
    "nearest-rank values over every switch-in whose Ready Time is known (`ready_*`) and\n"
    "over those readied by a ReadyThread event (`woken_*`).\n"
    "--by stack charges the waits and ready time to each switch-in's New Thread Stack\n"
    "(where the thread had blocked), --by readying-stack to its Readying Thread Stack\n"
    "(where its readier was): a tree of callers, root first (--top N children per frame,\n"
    "frames under 0.5% of the time counted, not shown), or --flat by function; the totals\n"
    "are the waits' totals, time without a stack on its own line.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

static int by_ready_desc(const void *a, const void *b)
{
    const etl_usage_thread *x = a, *y = b;
    int64_t kx = x->ready.sum_ns + x->wait_ns, ky = y->ready.sum_ns + y->wait_ns;
    if (kx != ky) return kx > ky ? -1 : 1;
    return x->thread < y->thread ? -1 : x->thread > y->thread;
}

/* The mean, percentiles and max of no value are unknown: null, never 0 (the count and the sum are 0). */
static void json_latency(jw *w, const char *prefix, const etl_latency *l)
{
    char k[32];
    snprintf(k, sizeof k, "%s_count", prefix);
    jw_u64(w, k, l->count);
    snprintf(k, sizeof k, "%s_ns", prefix);
    jw_i64(w, k, l->sum_ns);
    static const char *const keys[] = {"mean", "p50", "p90", "p99", "p999", "max"};
    const int64_t vals[] = {l->count ? l->sum_ns / (int64_t)l->count : 0, l->p50_ns, l->p90_ns, l->p99_ns, l->p999_ns,
                            l->max_ns};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        snprintf(k, sizeof k, "%s_%s_ns", prefix, keys[i]);
        if (l->count) jw_i64(w, k, vals[i]);
        else jw_null(w, k);
    }
}

/* A thread's ids as the threads' columns give them, under keys with a prefix ("readier_"). */
static void thread_ids(jw *w, const rep_run *run, uint32_t thread, const char *prefix)
{
    typedef struct one { uint32_t thread; } one;
    static const col_def ids[] = {REP_THREAD_COLS(one, thread)};
    one row = {thread};
    col_val v;
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char k[32];
        snprintf(k, sizeof k, "%s%s", prefix, ids[i].json);
        ids[i].get(&ids[i], &run, &row, &v);
        cols_json_val(w, k, &ids[i], &v);
    }
}

/* ---- the threads' columns: text, CSV and JSON from one table ---- */

/* The threads' rows' context: the run first (REP_THREAD_COLS read it), and whether Waits can be known. */
typedef struct waits_ctx {
    const rep_run *run;
    int waits_known;
} waits_ctx;


#define GETTER(name) static void name(const col_def *col, const void *ctx, const void *row, col_val *v)
/* A statistic of the etl_latency at col->off: null when it holds no value (the mean, percentiles, max of none). */
static void lat_stat(const col_def *col, const void *row, col_val *v, size_t at)
{
    etl_latency l;
    memcpy(&l, (const char *)row + col->off, sizeof l);
    int64_t x;
    memcpy(&x, (const char *)&l + at, sizeof x);
    if (l.count) cv_i64(v, x);
    else cv_null(v);
}
#define LAT_GETTER(name, m) GETTER(name) { (void)ctx; lat_stat(col, row, v, offsetof(etl_latency, m)); }
LAT_GETTER(g_p50, p50_ns)
LAT_GETTER(g_p90, p90_ns)
LAT_GETTER(g_p99, p99_ns)
LAT_GETTER(g_p999, p999_ns)
LAT_GETTER(g_max, max_ns)
#undef LAT_GETTER
/* The mean of the etl_latency at col->off: floor(sum / count), null for no value. */
GETTER(g_mean)
{
    (void)ctx;
    etl_latency l;
    memcpy(&l, (const char *)row + col->off, sizeof l);
    if (l.count) cv_i64(v, l.sum_ns / (int64_t)l.count);
    else cv_null(v);
}
/* A count or time of waiting: null when Waits cannot be known (etl_usage_waits_known). */
GETTER(g_wait_u64)
{
    if (((const waits_ctx *)ctx)->waits_known) col_u64_at(col, ctx, row, v);
    else cv_null(v);
}
GETTER(g_wait_i64)
{
    if (((const waits_ctx *)ctx)->waits_known) col_i64_at(col, ctx, row, v);
    else cv_null(v);
}

#define AT(f) offsetof(etl_usage_thread, f)
#define LAT(f, m) offsetof(etl_usage_thread, f) + offsetof(etl_latency, m)
static const col_def thread_cols[] = {
    REP_THREAD_COLS(etl_usage_thread, thread),
    {"=Ready", "ready_count", "ready_count", COL_COUNT, 0, col_u64_at, LAT(ready, count)},
    {"=Total ready", "ready_ns", "ready_ns", COL_NS, 0, col_i64_at, LAT(ready, sum_ns)},
    {"=Mean", "ready_mean_ns", "ready_mean_ns", COL_NS | COL_NULL_EMPTY, 0, g_mean, AT(ready)},
    {"=p50", "ready_p50_ns", "ready_p50_ns", COL_NS | COL_NULL_EMPTY, 0, g_p50, AT(ready)},
    {"=p90", "ready_p90_ns", "ready_p90_ns", COL_NS | COL_NULL_EMPTY, 0, g_p90, AT(ready)},
    {"=p99", "ready_p99_ns", "ready_p99_ns", COL_NS | COL_NULL_EMPTY, 0, g_p99, AT(ready)},
    {NULL, NULL, "ready_p999_ns", COL_NS | COL_NULL_EMPTY, 0, g_p999, AT(ready)},
    {"=Max", "ready_max_ns", "ready_max_ns", COL_NS | COL_NULL_EMPTY, 0, g_max, AT(ready)},
    {NULL, NULL, "woken_count", COL_COUNT, 0, col_u64_at, LAT(woken, count)},
    {NULL, NULL, "woken_ns", COL_NS, 0, col_i64_at, LAT(woken, sum_ns)},
    {NULL, NULL, "woken_mean_ns", COL_NS | COL_NULL_EMPTY, 0, g_mean, AT(woken)},
    {NULL, NULL, "woken_p50_ns", COL_NS | COL_NULL_EMPTY, 0, g_p50, AT(woken)},
    {NULL, NULL, "woken_p90_ns", COL_NS | COL_NULL_EMPTY, 0, g_p90, AT(woken)},
    {NULL, NULL, "woken_p99_ns", COL_NS | COL_NULL_EMPTY, 0, g_p99, AT(woken)},
    {NULL, NULL, "woken_p999_ns", COL_NS | COL_NULL_EMPTY, 0, g_p999, AT(woken)},
    {NULL, NULL, "woken_max_ns", COL_NS | COL_NULL_EMPTY, 0, g_max, AT(woken)},
    {"=Waits", "wait_count", "wait_count", COL_COUNT | COL_NULL_EMPTY, 0, g_wait_u64, AT(wait_count)},
    {"=Total waiting", "wait_ns", "wait_ns", COL_NS | COL_NULL_EMPTY, 0, g_wait_i64, AT(wait_ns)},
    {NULL, NULL, "wait_max_ns", COL_NS | COL_NULL_EMPTY, 0, g_wait_i64, AT(wait_max_ns)},
};
#undef AT
#undef LAT
#define NTHREAD_COLS (sizeof thread_cols / sizeof thread_cols[0])

static void json_intervals(jw *w, const rep_run *run, const char *key, const etl_usage_interval *v, size_t n,
                           int waits)
{
    jw_arr(w, key);
    for (size_t i = 0; i < n; i++) {
        jw_obj(w, NULL);
        thread_ids(w, run, v[i].thread, "");
        jw_u64(w, "cpu", v[i].cpu);
        jw_i64(w, "start_ns", v[i].start_ns);
        jw_i64(w, "end_ns", v[i].start_ns + v[i].dur_ns);
        jw_i64(w, "duration_ns", v[i].dur_ns);
        if (waits) {
            jw_u64(w, "reason_code", v[i].reason);
            const char *rn = etl_wait_reason_name(v[i].reason);
            if (rn) jw_str(w, "reason", rn);
            else jw_null(w, "reason");
        }
        if (v[i].has_readier) {
            if (v[i].ready_flags & ETL_READY_EXECUTING_DPC) jw_str(w, "readier", "DPC");
            else if (v[i].readier_thread == ETL_SCHED_NONE) jw_str(w, "readier", "Unknown");
            else jw_str(w, "readier", "thread");
            thread_ids(w, run, v[i].readier_thread, "readier_");
            jw_u64(w, "ready_cpu", v[i].ready_cpu);
            jw_bool(w, "ready_in_dpc", (v[i].ready_flags & ETL_READY_EXECUTING_DPC) != 0);
        } else {
            jw_null(w, "readier");
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

void waits_sort(etl_usage_thread *t, size_t n) { etl_sort(t, n, sizeof *t, by_ready_desc); }

void waits_json(jw *w, const rep_run *run, const etl_usage *u, const etl_usage_thread *by_ready, const rep_args *a)
{
    rep_json_head(w, run, u->o.v0, u->o.v1, 0);
    jw_obj(w, "ready");
    json_latency(w, "ready", &u->ready_all);
    json_latency(w, "woken", &u->woken_all);
    jw_obj_end(w);
    /* false: every wait count and time below is null, and by_reason is empty (no Waits could be measured) */
    jw_bool(w, "waits_known", etl_usage_waits_known(u));
    /* switch-ins in the window (of the selected threads) whose Ready (and Waits) lost records made unknown: not in
     * the numbers above */
    jw_u64(w, "ready_lost", etl_usage_ready_lost(u));
    jw_arr(w, "threads");
    unsigned shown = 0;
    waits_ctx wc = {run, etl_usage_waits_known(u)};
    /* --thread/--process: the usage counted the selected threads' rows alone (waits_select), every member too. */
    for (size_t i = 0; i < u->nthreads && (!a->top || shown < a->top); i++) {
        const etl_usage_thread *t = &by_ready[i];
        shown++;
        cols_json_row(w, NULL, thread_cols, NTHREAD_COLS, &wc, t);
    }
    jw_arr_end(w);
    jw_arr(w, "by_reason");
    for (unsigned c = 0; c < 64; c++) {
        const etl_usage_reason *r = &u->reasons[c];
        if (!r->count) continue;
        jw_obj(w, NULL);
        jw_u64(w, "code", c);
        const char *rn = etl_wait_reason_name(c);
        if (rn) jw_str(w, "reason", rn);
        else jw_null(w, "reason");
        jw_u64(w, "count", r->count);
        jw_i64(w, "wait_ns", r->wait_ns);
        jw_i64(w, "max_ns", r->max_ns);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    json_intervals(w, run, "longest_waits", u->longest_waits, u->n_longest_waits, 1);
    json_intervals(w, run, "longest_ready", u->longest_ready, u->n_longest_ready, 0);
    rep_json_anomalies_as(run, w, a->skip);
}

static const char *readier_label(const rep_run *run, const etl_usage_interval *v, char out[300])
{
    char label[256];
    if (!v->has_readier) return strcpy(out, "-");
    if (v->ready_flags & ETL_READY_EXECUTING_DPC) {
        snprintf(out, 300, "DPC (CPU %u)", v->ready_cpu);
        return out;
    }
    if (v->readier_thread == ETL_SCHED_NONE) return strcpy(out, "Unknown");
    rep_process_label(run->model, v->readier_thread, label);
    const etl_sched_thread *t = etl_sched_thread_at(run->model, v->readier_thread);
    snprintf(out, 300, "%s tid %u", label, t ? t->tid : 0);
    return out;
}

static void print_intervals(const rep_run *run, const char *title, const etl_usage_interval *v, size_t n, int waits)
{
    if (!n) return;
    printf("\n%s\n", title);
    static const char *const hw[] = {"=Duration", "=Start (s)", "=CPU", "=TID", "Process", "Reason", "Readied by"};
    static const char *const hr[] = {"=Duration", "=Start (s)", "=CPU", "=TID", "Process", "Readied by"};
    tbl t;
    tbl_init(&t, waits ? 7 : 6, waits ? hw : hr);
    for (size_t i = 0; i < n; i++) {
        char d[32], s[32], c[16], tid[16], label[256], rd[300];
        const etl_sched_thread *th = etl_sched_thread_at(run->model, v[i].thread);
        snprintf(c, sizeof c, "%u", v[i].cpu);
        snprintf(tid, sizeof tid, "%u", th ? th->tid : 0);
        const char *rn = waits ? etl_wait_reason_name(v[i].reason) : "-";
        char rc[8];
        if (!rn) {
            snprintf(rc, sizeof rc, "%u", v[i].reason);
            rn = rc;
        }
        const char *who = v[i].has_readier || waits ? readier_label(run, &v[i], rd) : "(preempted: ready from its switch-out)";
        const char *r[] = {fmt_dur(d, v[i].dur_ns), fmt_fixed(s, v[i].start_ns / 1000, 6), c, tid,
                           rep_process_label(run->model, v[i].thread, label), waits ? rn : who, who};
        tbl_row(&t, r);
    }
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
}

/*
 * The switch-ins of the window (of the selected threads) lost records left without a Ready Time or a wait, which no
 * number counts: a line, if any (cmd: on stderr, with the file). Without ReadyThread events no wait is known anyway:
 * what was lost is a switch-out that would have given the Ready (etl_usage_ready_lost counts those).
 */
static void print_lost(const rep_run *run, const rep_args *a, const etl_usage *u, FILE *f, const char *cmd)
{
    uint64_t n = etl_usage_ready_lost(u);
    if (!n) return;
    if (cmd) fprintf(f, "%s %s: note: %s: ", prog, cmd, run->in.path);
    else fputs("note: ", f);
    bool one = n == 1, ready = etl_sched_ready_events(run->model) != 0;
    fprintf(f, "%llu switch-in%s%s%s %s no known Ready%s: records lost since %s thread's previous switch-in (the "
            "warnings say where) may have held %s\n",
            (unsigned long long)n, one ? "" : "s", a->has_range ? " in the window" : "",
            a->process || a->thread >= 0 ? " of the selected threads" : "", one ? "has" : "have",
            ready ? " or Waits" : "", one ? "its" : "their",
            ready ? "its ReadyThread or switch-out" : "its switch-out (a preempted one gives the Ready; the trace has no "
            "ReadyThread events)");
}

/* Why every wait is unknown (etl_usage_waits_known is false), in one line. */
static const char *waits_unknown_why(const rep_args *a, uint64_t ready_events, uint64_t lost)
{
    /* The trace has none, or none of them readied a switch-in of the window (of the selected threads): the first,
     * lost records or not, is why. */
    if (!ready_events) return "Waits unknown: the trace has no ReadyThread events (the DISPATCHER flag was not on)";
    if (lost) return "Waits unknown: records were lost before the switch-ins (the warnings say where)";
    return a->process || a->thread >= 0
               ? "Waits unknown: no switch-in of the selected threads in the window was readied by a ReadyThread event"
               : "Waits unknown: no switch-in in the window was readied by a ReadyThread event";
}

static void print_table(const rep_args *a, const rep_run *run, const etl_usage *u, uint64_t ready_events)
{
    char b[8][32];
    if (a->format == FMT_TEXT) {
        rep_print_header(run, "etlkit waits");
        const etl_latency *l = &u->ready_all;
        printf("\nReady latency of %llu switch-ins: mean %s, p50 %s, p90 %s, p99 %s, max %s\n",
               (unsigned long long)l->count, rep_lat_dur(b[0], l, l->count ? l->sum_ns / (int64_t)l->count : 0),
               rep_lat_dur(b[1], l, l->p50_ns), rep_lat_dur(b[2], l, l->p90_ns), rep_lat_dur(b[3], l, l->p99_ns),
               rep_lat_dur(b[4], l, l->max_ns));
        l = &u->woken_all;
        printf("  of which readied by a ReadyThread: %llu, p50 %s, p99 %s, max %s\n", (unsigned long long)l->count,
               rep_lat_dur(b[1], l, l->p50_ns), rep_lat_dur(b[3], l, l->p99_ns), rep_lat_dur(b[4], l, l->max_ns));
        printf("\nWaits by reason\n");
        static const char *const rh[] = {"Reason", "=Code", "=Count", "=Total", "=Max"};
        tbl t;
        tbl_init(&t, 5, rh);
        /* Biggest total first. */
        unsigned order[64], n = 0;
        for (unsigned c = 0; c < 64; c++)
            if (u->reasons[c].count) order[n++] = c;
        for (unsigned i = 1; i < n; i++)
            for (unsigned j = i; j > 0 && u->reasons[order[j]].wait_ns > u->reasons[order[j - 1]].wait_ns; j--) {
                unsigned x = order[j];
                order[j] = order[j - 1];
                order[j - 1] = x;
            }
        for (unsigned i = 0; i < n; i++) {
            const etl_usage_reason *r = &u->reasons[order[i]];
            char code[8], cnt[24];
            snprintf(code, sizeof code, "%u", order[i]);
            snprintf(cnt, sizeof cnt, "%llu", (unsigned long long)r->count);
            const char *rn = etl_wait_reason_name(order[i]);
            const char *row[] = {rn ? rn : code, code, cnt, fmt_dur(b[0], r->wait_ns), fmt_dur(b[1], r->max_ns)};
            tbl_row(&t, row);
        }
        /* None known: the reason, not an empty table (which would read as no waits). */
        if (etl_usage_waits_known(u)) tbl_print_text(&t, stdout, "  ");
        else printf("  %s\n", waits_unknown_why(a, ready_events, etl_usage_ready_lost(u)));
        tbl_free(&t);
        printf("\nThreads by time not running (ready + waiting)\n");
    }
    tbl t;
    int csv = a->format == FMT_CSV;
    cols_tbl_init(&t, thread_cols, NTHREAD_COLS, csv);
    unsigned shown = 0, limit = rep_top(a, csv ? 0 : 20);
    waits_ctx wc = {run, etl_usage_waits_known(u)};
    for (size_t i = 0; i < u->nthreads && (!limit || shown < limit); i++) {
        const etl_usage_thread *x = &u->threads[i];
        shown++;
        cols_tbl_row(&t, thread_cols, NTHREAD_COLS, csv, &wc, x);
    }
    if (csv && !wc.waits_known && u->nthreads && !a->quiet) /* blank cells: why, on stderr */
        fprintf(stderr, "%s waits: note: %s: %s\n", prog, run->in.path,
                waits_unknown_why(a, ready_events, etl_usage_ready_lost(u)));
    if (a->format == FMT_CSV) tbl_print_sheet(&t, stdout);
    else tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
    if (a->format == FMT_TEXT) {
        print_intervals(run, "Longest waits", u->longest_waits, u->n_longest_waits, 1);
        print_intervals(run, "Longest ready delays", u->longest_ready, u->n_longest_ready, 0);
        rep_print_anomalies(run, stdout);
        print_lost(run, a, u, stdout, NULL);
    }
}

/*
 * --thread/--process: the thread instances they select once the whole trace is read, so that a thread adopted
 * by a later DCStart or DCEnd counts to its process (as in cpu, the threads table and waitchain), not only its rows
 * after the adoption. Learnt by a first pass of the model alone (the same events make the same instances), then
 * asked of each row by the usage and by --by alike.
 */
typedef struct waits_sel {
    uint8_t *on;   /* by thread instance */
    size_t n;
} waits_sel;

static bool waits_select(void *p, uint32_t thread)
{
    const waits_sel *s = p;
    return thread < s->n && s->on[thread];
}

/*
 * Opens run for the rows' consumer; with --thread/--process, after a first pass that learns the selection. The
 * first pass's source is the only one opened before it (a source reads ahead as soon as it is opened: one
 * abandoned unread would have told problems the run tells again), and what it tells is forgotten: the run tells it.
 */
static int waits_open(rep_run *run, const rep_args *a, etl_sched_row_fn on_row, void *ctx,
                      void (*on_event)(void *, const etl_sched_event *), waits_sel *sel)
{
    if (!a->process && a->thread < 0) return rep_run_open(run, a, on_row, ctx, on_event);
    memset(run, 0, sizeof *run);
    int rc = cli_open(&run->in, a->path, a->quiet);
    if (rc != EXIT_OK) return rc;
    rep_args q = *a;
    q.quiet = 1; /* the second pass tells what there is to tell */
    /* Held before the source starts: its threads tell what they meet into the keep from then on. */
    cli_diag_hold(&run->in);
    rc = rep_run_start(run, &q, NULL, NULL, NULL);
    if (rc != EXIT_OK) return rc;
    rep_run_go(run, &q);
    size_t n;
    etl_sched_threads(run->model, &n);
    sel->n = n;
    sel->on = calloc(n ? n : 1, 1);
    if (!sel->on || run->model_failed) {
        fprintf(stderr, "%s waits: out of memory\n", prog);
        rep_run_close(run);
        return EXIT_IO;
    }
    for (size_t i = 0; i < n; i++) sel->on[i] = rep_thread_selected(a, run->model, (uint32_t)i) != 0;
    etl_sched_close(run->model);
    etl_sched_source_close(run->src);
    run->model = NULL;
    run->src = NULL;
    cli_diag_release(&run->in, 0); /* its source closed: the run is done again and tells them again */
    return rep_run_start(run, a, on_row, ctx, on_event);
}

/* --by stack: the model's rows of the selected threads, charged to their stacks as etl_usage counts them. */
typedef struct by_ctx {
    etl_wait_stacks *w;
    waits_sel sel;
} by_ctx;

static void by_row(void *p, const etl_sched_row *row)
{
    by_ctx *c = p;
    if (!c->w) return;
    /* idle and unknown slices pass: etl_wait_stacks_row counts neither, as etl_usage_add with a selection */
    if (c->sel.on && row->new_thread != ETL_SCHED_IDLE && row->new_thread != ETL_SCHED_NONE &&
        !waits_select(&c->sel, row->new_thread))
        return;
    etl_wait_stacks_row(c->w, row);
}

static int waits_by_stack(const rep_args *a, int readying, int flat, const char *symbols)
{
    rep_run run;
    by_ctx c = {NULL, {NULL, 0}};
    /* the symbol path before the trace is read: a folder that is not there fails here */
    etl_symbols *sym = NULL;
    int rc = cli_symbols_open("waits", symbols, &sym);
    if (rc != EXIT_OK) return rc;
    rc = waits_open(&run, a, by_row, &c, NULL, &c.sel);
    if (rc != EXIT_OK) {
        free(c.sel.on);
        etl_symbols_close(sym);
        return rc;
    }
    etl_sched_stacks *s = NULL;
    /* A function's frames are one node with symbols (no offset): the tree and the list go by function. */
    /* Only the kind the tree is of: the other's stacks would take memory (a third of the walks) for nothing. */
    rc = cli_sched_stacks_open("waits", run.in.reader, a->threads, 0, readying ? CLI_STACKS_READYING : CLI_STACKS_NEW,
                               NULL, 0, &s, &sym);
    if (rc == EXIT_OK && !(c.w = etl_wait_stacks_new(s, readying, a->v0, a->has_range ? a->v1 : a->v0))) {
        fprintf(stderr, "%s waits: %s: stacks: out of memory\n", prog, a->path);
        rc = EXIT_IO;
    }
    if (rc != EXIT_OK) {
        etl_sched_stacks_free(s);
        cli_symbols_close(sym);
        rep_run_close(&run);
        free(c.sel.on);
        return rc;
    }
    rep_run_go(&run, a);
    waits_stacks_damage(&run, s);
    rep_no_match(&run, a);
    int bad = waits_stacks_print(c.w, s, sym, readying, &run, a, flat, rep_top(a, a->format == FMT_JSON ? 0 : 10));
    if (!bad && !a->quiet) cli_sched_stacks_notes("waits", a->path, s); /* what the stacks lack (explore9 F4) */
    etl_wait_stacks_free(c.w);
    etl_sched_stacks_free(s);
    cli_symbols_close(sym);
    free(c.sel.on);
    if (bad) {
        fprintf(stderr, "%s waits: out of memory\n", prog);
        rep_run_close(&run);
        return EXIT_IO;
    }
    return rep_finish(&run, "waits");
}

/* The usage the rows go to, and the ReadyThread events seen (none: the trace has none, say so). */
typedef struct waits_run {
    etl_usage u;
    uint64_t ready_events;
} waits_run;

static void count_ready(void *ctx, const etl_sched_event *ev)
{
    if (ev->kind == ETL_SCHED_READY) ((waits_run *)ctx)->ready_events++;
}

int cmd_waits(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "waits");
    unsigned longest = 10;
    const char *by = NULL, *symbols = NULL;
    int flat = 0;
    const cli_opt own[] = {
        CLI_UINT("longest", "N", "how many longest waits and ready delays to list, 1 to 100000 (default 10)",
                 "a count from 1 to 100000", &longest, 1, 100000),
        CLI_STRING("by", 0, "stack|readying-stack", "charge the time to each row's New Thread Stack or Readying "
                   "Thread Stack (a tree of callers)", "stack or readying-stack", &by),
        CLI_FLAG("flat", 0, "with --by: by function rather than as a tree", &flat, 1),
        CLI_SYMBOLS_OPT(&symbols),
        CLI_END};
    int pr = rep_parse(&a, &waits_cmd, own, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    if (by && strcmp(by, "stack") != 0 && strcmp(by, "readying-stack") != 0)
        return cli_usage_error("waits", "--by: '%s' is neither stack nor readying-stack", by);
    if (flat && !by) return cli_usage_error("waits", "--flat goes with --by stack or --by readying-stack");
    if (symbols && !by) return cli_usage_error("waits", "--symbols goes with --by stack or --by readying-stack");
    if (by && a.format == FMT_CSV) return cli_usage_error("waits", "--by has no --csv form: text or --json");
    if (by) return waits_by_stack(&a, strcmp(by, "readying-stack") == 0, flat, symbols);
    waits_run wr;
    memset(&wr, 0, sizeof wr);
    rep_run run;
    waits_sel sel = {NULL, 0};
    etl_usage_options uo = {.sz = sizeof uo, .v0 = a.v0, .v1 = a.has_range ? a.v1 : a.v0, .longest = longest};
    /* wr starts with u: etl_usage_add's ctx. --thread/--process: every member counts the selected threads' rows
     * alone (explore9 F1) */
    int rc = waits_open(&run, &a, etl_usage_add, &wr, count_ready, &sel);
    if (rc != EXIT_OK) {
        free(sel.on);
        return rc;
    }
    if (etl_usage_init(&wr.u, run.model, &uo) != ETL_OK) {
        fprintf(stderr, "%s waits: out of memory\n", prog);
        free(sel.on);
        rep_run_close(&run);
        return EXIT_IO;
    }
    if (sel.on) (void)etl_usage_select(&wr.u, waits_select, &sel); /* no intervals: ETL_OK */
    rep_run_go(&run, &a);
    if (etl_usage_finish(&wr.u, run.end_ns) != ETL_OK) {
        free(sel.on);
        return rep_usage_failed(&run, &wr.u, "waits");
    }
    waits_sort(wr.u.threads, wr.u.nthreads);
    rep_no_match(&run, &a);
    if (rep_no_switches(&run, &a) && a.format == FMT_TEXT) {
    } else if (a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        waits_json(&w, &run, &wr.u, wr.u.threads, &a);
        jw_obj_end(&w);
        jw_end(&w);
    } else {
        print_table(&a, &run, &wr.u, wr.ready_events);
    }
    if (a.format != FMT_TEXT && !a.quiet) print_lost(&run, &a, &wr.u, stderr, "waits"); /* text: with the notes */
    etl_usage_free(&wr.u);
    free(sel.on);
    return rep_finish(&run, "waits");
}

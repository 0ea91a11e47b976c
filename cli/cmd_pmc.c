/* cmd_pmc.c - `etlkit pmc`: PMC counter deltas per thread and process, IPC and misses (spec §6). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "rep_columns.h"
#include "etlkit/pmc.h"

static const cli_cmd pmc_cmd = {
    "pmc", "FILE [OPTIONS]",
    "Hardware counters per thread and per process from the PMC values CSwitch events carry\n"
    "(cumulative per CPU): each slice's thread is charged the difference between its switch-in\n"
    "and its switch-out on the same CPU (the idle thread too); a slice counts in the window when\n"
    "its switch-in does. Ratios from sums: IPC, CPI, LLC and branch misses per 1,000 instructions,\n"
    "branch miss % (with a `branches` counter), GHz over the counted CPU time. Compact batches\n"
    "carry no counters.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

typedef struct ctx {
    etl_pmc p;
    const rep_args *a;
    const rep_run *run;
    char labels[ETL_PMC_MAX][32];
    int named;            /* --counters given */
    unsigned trace_pmc;   /* the most counters a switch of the trace carries, selected or not */
} ctx;

static void on_row(void *v, const etl_sched_row *row)
{
    ctx *c = v;
    /* Whatever --process and --thread select: a selection of no switch is not a trace without counters. */
    if (row->in && (row->in->known & ETL_CSW_PMC) && row->in->pmc_count > c->trace_pmc) c->trace_pmc = row->in->pmc_count;
    if ((c->a->process || c->a->thread >= 0) && !rep_thread_selected(c->a, c->run->model, row->new_thread)) return;
    etl_pmc_add(&c->p, row);
}

/* A slot's name for people: its kind's, else --counters' label, else "PMC n". */
static const char *column_name(etl_pmc_kind k, const char *label, unsigned slot, char out[48])
{
    switch (k) {
    case ETL_PMC_CYCLES: return "Cycles";
    case ETL_PMC_INSTRUCTIONS: return "Instructions";
    case ETL_PMC_LLC_MISSES: return "LLC misses";
    case ETL_PMC_BRANCH_MISSES: return "Branch misses";
    case ETL_PMC_BRANCHES: return "Branches";
    default:
        if (label[0]) snprintf(out, 48, "%s", label);
        else snprintf(out, 48, "PMC %u", slot);
        return out;
    }
}

/* A process's name and PID (the idle threads' process is "Idle", PID 0). */
static const char *proc_of(const rep_run *run, uint32_t process, char name[256], uint32_t *pid)
{
    if (process != ETL_SCHED_IDLE) return rep_process_name(run->model, process, name, pid);
    *pid = 0;
    return strcpy(name, "Idle");
}

/* ---- the rows' columns (process, thread, CPU, total): text, CSV and JSON from one table each ---- */

/*
 * What the getters share. The counters' columns are made for the trace: one per slot, named by
 * --counters (people's header, the CSV header, and the JSON key, unique within "counters").
 */
typedef struct rows_ctx {
    const rep_run *run;       /* first: rep_columns' getters read it */
    const etl_pmc *p;
    size_t sums;              /* where the row's etl_pmc_sums is */
    int all;                  /* the total's row among the processes */
    char head[ETL_PMC_MAX][52], csv[ETL_PMC_MAX][48], key[ETL_PMC_MAX][48];
} rows_ctx;

#define GETTER(name) static void name(const col_def *col, const void *cx, const void *row, col_val *v)
#define C ((const rows_ctx *)cx)
#define S ((const etl_pmc_sums *)((const char *)row + C->sums))
GETTER(g_slices)
{
    (void)col;
    cv_u64(v, S->slices);
}
GETTER(g_cpu_ns)
{
    (void)col;
    cv_i64(v, S->cpu_ns);
}
/* The slot col->off's sum: null when it passed 2^64 (saturated: not the sum) or is of some slices only (partial). */
GETTER(g_delta)
{
    if ((S->saturated | S->partial) >> col->off & 1) cv_null(v);
    else cv_u64(v, S->delta[col->off]);
}
static void put_deltas(jw *w, const char *key, const void *cx, const void *row)
{
    jw_arr(w, key);
    for (unsigned k = 0; k < C->p->counters; k++) {
        if ((S->saturated | S->partial) >> k & 1) jw_null(w, NULL);
        else jw_u64(w, NULL, S->delta[k]);
    }
    jw_arr_end(w);
}
GETTER(g_deltas)
{
    (void)col, (void)cx, (void)row;
    cv_put(v, put_deltas);
}
/* The ratio at col->off in etl_pmc_ratios: null when its counters are not named or its divisor is 0. */
GETTER(g_ratio)
{
    etl_pmc_ratios r;
    etl_pmc_ratios_of(C->p, S, &r);
    int64_t x;
    memcpy(&x, (const char *)&r + col->off, sizeof x);
    if (x < 0) cv_null(v);
    else cv_i64(v, x);
}
GETTER(g_cpu)
{
    (void)col;
    cv_u64(v, (uint64_t)(S - C->p->cpus));
}
#define P ((const etl_pmc_process *)row)
GETTER(g_pname)
{
    (void)col;
    uint32_t pid;
    proc_of(C->run, P->process, v->buf, &pid);
    cv_str(v, v->buf);
}
/* For people, an empty image name shows as "" (text_name); the total's row is "all". */
GETTER(g_pname_text)
{
    if (C->all) {
        cv_str(v, "all");
        return;
    }
    g_pname(col, cx, row, v);
    v->s = text_name(v->s);
}
GETTER(g_ppid)
{
    (void)col;
    uint32_t pid;
    if (C->all) {
        cv_none(v);
        return;
    }
    proc_of(C->run, P->process, v->buf, &pid);
    if (pid != UINT32_MAX) cv_u64(v, pid);
    else cv_null(v);
}
GETTER(g_pthreads)
{
    (void)col;
    if (C->all) cv_none(v);
    else cv_u64(v, P->threads);
}
#undef P
/* The thread's name as the model has it (the idle thread has none). */
GETTER(g_tname)
{
    uint32_t x;
    memcpy(&x, (const char *)row + col->off, sizeof x);
    cv_str(v, rep_thread_name(C->run->model, x));
}
#undef S
#undef C

static const col_def process_keys[] = {
    {"Process", NULL, NULL, COL_TEXT, 0, g_pname_text, 0},
    {"=PID", NULL, "pid", COL_COUNT, 0, g_ppid, 0},
    {NULL, NULL, "name", COL_TEXT, 0, g_pname, 0},
    {"=Threads", NULL, "threads", COL_COUNT, 0, g_pthreads, 0},
};
#define AT offsetof(etl_pmc_thread, thread)
static const col_def thread_keys[] = {
    {"=TID", "tid", "tid", COL_COUNT, 0, rep_col_tid, AT},
    {NULL, NULL, "pid", COL_COUNT, 0, rep_col_pid, AT},
    {NULL, NULL, "process", COL_TEXT, 0, rep_col_process, AT},
    {"Process", "process", "process_label", COL_TEXT, 0, rep_col_label, AT},
    {"Thread name", "name", "name", COL_TEXT, 0, g_tname, AT},
};
#undef AT
static const col_def cpu_keys[] = {
    {"=CPU", NULL, "cpu", COL_COUNT, 0, g_cpu, 0},
};
#define R(f) COL_FIXED | COL_NULL_EMPTY, 3, g_ratio, offsetof(etl_pmc_ratios, f)
/* A row's sums: slices, CPU time, the counters (one column per slot, inserted at COUNTERS_AT), the ratios. */
static const col_def sum_cols[] = {
    {NULL, NULL, "slices", COL_COUNT, 0, g_slices, 0},
    {"=CPU time", "cpu_ns", "cpu_ns", COL_NS, 0, g_cpu_ns, 0},
    {"=Slices", "slices", NULL, COL_COUNT, 0, g_slices, 0},
    {NULL, NULL, "deltas", COL_COUNT, 0, g_deltas, 0},
    {NULL, NULL, "counters", COL_OBJ, 0, NULL, 0},
#define COUNTERS_AT 5
    {NULL, NULL, NULL, COL_END, 0, NULL, 0},
    {"=IPC", "ipc", "ipc", R(ipc_x1000)},
    {"=CPI", "cpi", "cpi", R(cpi_x1000)},
    {"=LLC MPKI", "llc_mpki", "llc_mpki", R(llc_mpki_x1000)},
    {"=Branch MPKI", "branch_mpki", "branch_mpki", R(branch_mpki_x1000)},
    {"=Branch miss %", "branch_miss_pct", "branch_miss_pct", COL_FIXED | COL_NULL_EMPTY, 2, g_ratio,
     offsetof(etl_pmc_ratios, branch_miss_pct_x100)},
    {"=GHz", "ghz", "ghz", R(ghz_x1000)},
};
#undef R
#define NSUM_COLS (sizeof sum_cols / sizeof sum_cols[0])
#define MAX_COLS (5 + NSUM_COLS + ETL_PMC_MAX)

/* The counters' names for a trace whose slots are p's and labels (as --counters gave them). */
static void rows_init(rows_ctx *rc, const rep_run *run, const etl_pmc *p, const char (*labels)[32])
{
    memset(rc, 0, sizeof *rc);
    rc->run = run;
    rc->p = p;
    for (unsigned k = 0; k < p->counters; k++) {
        char b[48];
        snprintf(rc->head[k], sizeof rc->head[k], "=%s", column_name(p->o.kinds[k], labels[k], k, b));
        char *key = rc->key[k];
        if (p->o.kinds[k] != ETL_PMC_OTHER) snprintf(key, 48, "%s", etl_pmc_kind_name(p->o.kinds[k]));
        else if (labels[k][0]) snprintf(key, 48, "%s", labels[k]);
        else snprintf(key, 48, "pmc%u", k);
        /* Keys must be unique: a key an earlier slot has (a repeated label, or a label such as "pmc1" that is
         * another slot's own key) gets its slot number, again until none has it (each try is longer, so at most
         * one per earlier slot: a label of 31 bytes and 6 suffixes fit). */
        for (unsigned j = 0; j < k;) {
            if (strcmp(rc->key[j], key) != 0) {
                j++;
                continue;
            }
            snprintf(key + strlen(key), 48 - strlen(key), "_%u", k);
            j = 0;
        }
        /* The CSV header the same (a reader by column name takes the first of two alike). */
        size_t kn = strlen(key) < sizeof rc->csv[k] ? strlen(key) : sizeof rc->csv[k] - 1; /* (snprintf: a false
                                                        -Werror=restrict under -fsanitize=thread) */
        memcpy(rc->csv[k], key, kn);
        rc->csv[k][kn] = 0;
    }
}

/* A table's columns: its keys, then the sums with a column per counter. Returns how many. */
static size_t make_cols(const rows_ctx *rc, const col_def *keys, size_t nkeys, col_def out[MAX_COLS])
{
    size_t n = 0;
    for (size_t i = 0; i < nkeys; i++) out[n++] = keys[i];
    for (size_t i = 0; i < NSUM_COLS; i++) {
        if (i == COUNTERS_AT)
            for (unsigned k = 0; k < rc->p->counters; k++)
                out[n++] = (col_def){rc->head[k], rc->csv[k], rc->key[k], COL_COUNT | COL_NULL_EMPTY, 0, g_delta, k};
        out[n++] = sum_cols[i];
    }
    return n;
}

/* The rows of one list: n of them, each sz bytes from first, with the sums at sums. */
static void json_rows(jw *w, rows_ctx *rc, const char *key, const col_def *keys, size_t nkeys, const void *first,
                      size_t sz, size_t n, size_t sums)
{
    col_def cols[MAX_COLS];
    size_t nc = make_cols(rc, keys, nkeys, cols);
    rc->sums = sums;
    jw_arr(w, key);
    for (size_t i = 0; i < n; i++) cols_json_row(w, NULL, cols, nc, rc, (const char *)first + i * sz);
    jw_arr_end(w);
}

/* The slices counted whose switches carry fewer counters than the columns (their slots' sums are partial). */
static uint64_t slices_short(const etl_pmc *p)
{
    uint64_t n = 0;
    for (unsigned k = 0; k < p->counters && k <= ETL_PMC_MAX; k++) n += p->slices_by_count[k];
    return n;
}

void pmc_json(jw *w, const rep_run *run, const etl_pmc *p, const char (*labels)[32], int named, const rep_args *a)
{
    rep_json_head(w, run, p->o.v0, p->o.v1, etl_sched_cpu_count(run->model));
    jw_arr(w, "counters");
    for (unsigned k = 0; k < p->counters; k++) {
        char b[48];
        jw_obj(w, NULL);
        jw_u64(w, "slot", k);
        jw_str(w, "kind", etl_pmc_kind_name(p->o.kinds[k]));
        jw_str(w, "name", column_name(p->o.kinds[k], labels[k], k, b));
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_str(w, "counters_named_by", named ? "--counters" : "position (etlkit synth --pmc order; not in the trace)");
    jw_u64(w, "switches_with_pmc", p->switches_pmc);
    jw_u64(w, "switches_without_pmc", p->switches_no_pmc);
    jw_u64(w, "slices_unpaired", p->slices_unpaired);
    jw_u64(w, "slices_unknown", p->slices_unknown);
    jw_u64(w, "pmc_counter_reset", p->pmc_counter_reset);
    jw_u64(w, "pmc_count_mismatch", p->pmc_count_mismatch);
    jw_u64(w, "slices_short", slices_short(p));
    jw_u64(w, "pmc_implausible", p->pmc_implausible);
    if (p->pmc_implausible) {
        char b[48];
        jw_obj(w, "pmc_implausible_first");
        jw_u64(w, "cpu", p->implausible_first.cpu);
        jw_i64(w, "start_ns", p->implausible_first.si);
        jw_i64(w, "end_ns", p->implausible_first.nso);
        jw_u64(w, "slot", p->implausible_first.slot);
        jw_str(w, "counter", column_name(p->o.kinds[p->implausible_first.slot], labels[p->implausible_first.slot],
                                         p->implausible_first.slot, b));
        jw_u64(w, "delta", p->implausible_first.delta);
        jw_obj_end(w);
    } else {
        jw_null(w, "pmc_implausible_first");
    }
    jw_arr(w, "sums_saturated"); /* the slots whose sums are past 2^64: null where they are */
    for (unsigned k = 0; k < p->counters; k++)
        if (p->total.saturated >> k & 1) jw_u64(w, NULL, k);
    jw_arr_end(w);
    rows_ctx rc;
    rows_init(&rc, run, p, labels);
    col_def cols[MAX_COLS];
    cols_json_row(w, "total", cols, make_cols(&rc, NULL, 0, cols), &rc, &p->total);
    size_t np = a->top && a->top < p->nprocesses ? a->top : p->nprocesses;
    size_t nt = a->top && a->top < p->nthreads ? a->top : p->nthreads;
    json_rows(w, &rc, "processes", process_keys, 4, p->processes, sizeof *p->processes, np,
              offsetof(etl_pmc_process, s));
    json_rows(w, &rc, "threads", thread_keys, 5, p->threads, sizeof *p->threads, nt, offsetof(etl_pmc_thread, s));
    json_rows(w, &rc, "cpus", cpu_keys, 1, p->cpus, sizeof *p->cpus, p->ncpus, 0);
    rep_json_anomalies_as(run, w, a->skip);
}

/* A table of rows for people or a spreadsheet: n rows, each sz bytes from first, with the sums at sums. */
static void table_rows(tbl *t, rows_ctx *rc, const col_def *cols, size_t nc, int csv, const void *first, size_t sz,
                       size_t n, size_t sums)
{
    rc->sums = sums;
    for (size_t i = 0; i < n; i++) cols_tbl_row(t, cols, nc, csv, rc, (const char *)first + i * sz);
}

static void threads_table(const rep_args *a, const rep_run *run, const ctx *c, int csv)
{
    rows_ctx rc;
    rows_init(&rc, run, &c->p, c->labels);
    col_def cols[MAX_COLS];
    size_t nc = make_cols(&rc, thread_keys, 5, cols);
    tbl t;
    if (cols_tbl_init(&t, cols, nc, csv)) return;
    unsigned limit = rep_top(a, csv ? 0 : 20);
    size_t n = limit && limit < c->p.nthreads ? limit : c->p.nthreads;
    table_rows(&t, &rc, cols, nc, csv, c->p.threads, sizeof *c->p.threads, n, offsetof(etl_pmc_thread, s));
    if (csv) tbl_print_sheet(&t, stdout);
    else tbl_print_text(&t, stdout, "");
    tbl_free(&t);
}

/*
 * The slices dropped for a jump no CPU can make, and where the first lies. Without --counters the kinds are a guess
 * (synth's order): a trace whose slot 0 counts instructions (UIforETW's InstructionRetired,UnhaltedCoreCycles) passes
 * 10 G "cycles" a second at an IPC of 3, so the guess is named as a cause beside damage.
 */
static void implausible_text(FILE *f, const etl_pmc *p, const char (*labels)[32], int named)
{
    char b[48], t0[32], d[32];
    unsigned k = p->implausible_first.slot;
    fprintf(f, "%llu slices dropped: a counter jumped more than a CPU can count (cycles past %llu GHz, or past %u "
            "events a cycle: pmc_implausible); the first on CPU %u at %s s (a %s slice): %s +%llu",
            (unsigned long long)p->pmc_implausible, ETL_PMC_MAX_HZ / 1000000000ull, ETL_PMC_MAX_PER_CYCLE,
            p->implausible_first.cpu, fmt_fixed(t0, p->implausible_first.si / 1000, 6),
            fmt_dur(d, p->implausible_first.nso - p->implausible_first.si), column_name(p->o.kinds[k], labels[k], k, b),
            (unsigned long long)p->implausible_first.delta);
    if (!named)
        fprintf(f, " (or slot %u does not count %s: the slots are named by position, as etlkit synth --pmc writes "
                "them; name the trace's with --counters)", k, etl_pmc_kind_name(p->o.kinds[k]));
}

/* The counters whose sums passed 2^64 (the total has every row's): only jumps no counter makes get there. */
static void saturated_text(FILE *f, const etl_pmc *p, const char (*labels)[32])
{
    char b[48];
    fprintf(f, "the sum of ");
    for (unsigned k = 0, n = 0; k < p->counters; k++) {
        if (!(p->total.saturated >> k & 1)) continue;
        fprintf(f, "%s", n++ ? ", " : "");
        text_str(f, column_name(p->o.kinds[k], labels[k], k, b));
    }
    fprintf(f, " is past 2^64, more than any counter counts (a slot of another kind is not checked for jumps: "
            "--counters names the kinds): not known, \"-\" where it is");
}

static void short_text(FILE *f, const char *lead, const etl_pmc *p)
{
    uint64_t n = slices_short(p);
    if (!n) return;
    fprintf(f, "%s%llu slices counted carry fewer than the %u counters other switches carry (slices_short): a slot's "
            "sum over slices some of which lack it is not known, \"-\" there, nor any ratio of it\n", lead,
            (unsigned long long)n, p->counters);
}

/* The cycles or instructions counter that never counted over the slices: its ratios are unknown, said why. */
static void idle_counters_text(FILE *f, const char *lead, const etl_pmc *p)
{
    static const struct {
        etl_pmc_kind k;
        const char *name, *what;
    } dead[] = {{ETL_PMC_CYCLES, "Cycles", "IPC, CPI and GHz"},
                {ETL_PMC_INSTRUCTIONS, "Instructions", "IPC, CPI and the misses per 1,000 instructions"}};
    for (unsigned i = 0; i < 2; i++) {
        int k = etl_pmc_slot(p, dead[i].k);
        if (k < 0 || (unsigned)k >= p->counters || !p->total.slices || p->total.delta[k] || p->total.saturated >> k & 1)
            continue;
        char d[32];
        fprintf(f, "%sthe %s counter (slot %d) never counted (0 over %s of CPU time): %s cannot be computed\n", lead,
                dead[i].name, k, fmt_dur(d, p->total.cpu_ns), dead[i].what);
    }
}

static void print_text(const rep_args *a, const rep_run *run, const ctx *c)
{
    const etl_pmc *p = &c->p;
    rep_print_header(run, "etlkit pmc");
    printf("Counters: ");
    for (unsigned k = 0; k < p->counters; k++) {
        char b[48];
        printf("%s", k ? ", " : "");
        text_str(stdout, column_name(p->o.kinds[k], c->labels[k], k, b));
    }
    printf(c->named ? " (as --counters names them)\n"
                    : " (by position, as etlkit synth --pmc writes them: the trace does not say; see --counters)\n");
    printf("%llu switches with counters, %llu without; %llu slices counted", (unsigned long long)p->switches_pmc,
           (unsigned long long)p->switches_no_pmc, (unsigned long long)p->total.slices);
    if (p->slices_unpaired) printf(", %llu without counters at one end", (unsigned long long)p->slices_unpaired);
    if (p->slices_unknown)
        printf(", %llu of no known thread left out (across a lost buffer)", (unsigned long long)p->slices_unknown);
    printf("\n");
    printf("\nProcesses\n");
    rows_ctx rc;
    rows_init(&rc, run, p, c->labels);
    col_def cols[MAX_COLS];
    size_t nc = make_cols(&rc, process_keys, 4, cols);
    tbl t;
    if (cols_tbl_init(&t, cols, nc, 0) == 0) {
        unsigned limit = rep_top(a, 20);
        size_t n = limit && limit < p->nprocesses ? limit : p->nprocesses;
        table_rows(&t, &rc, cols, nc, 0, p->processes, sizeof *p->processes, n, offsetof(etl_pmc_process, s));
        rc.all = 1;
        table_rows(&t, &rc, cols, nc, 0, &p->total, 0, 1, 0);
        rc.all = 0;
        tbl_print_text(&t, stdout, "");
    }
    tbl_free(&t);
    printf("\nThreads\n");
    threads_table(a, run, c, 0);
    printf("\nPer CPU\n");
    nc = make_cols(&rc, cpu_keys, 1, cols);
    if (cols_tbl_init(&t, cols, nc, 0) == 0) {
        table_rows(&t, &rc, cols, nc, 0, p->cpus, sizeof *p->cpus, p->ncpus, 0);
        tbl_print_text(&t, stdout, "");
    }
    tbl_free(&t);
    if (p->pmc_counter_reset)
        printf("note: %llu slices dropped: a counter went backwards (pmc_counter_reset)\n",
               (unsigned long long)p->pmc_counter_reset);
    if (p->pmc_count_mismatch)
        printf("note: %llu slices dropped: their two switches carry different numbers of counters\n",
               (unsigned long long)p->pmc_count_mismatch);
    idle_counters_text(stdout, "note: ", p);
    short_text(stdout, "note: ", p);
    if (p->pmc_implausible) {
        printf("note: ");
        implausible_text(stdout, p, c->labels, c->named);
        printf("\n");
    }
    if (p->total.saturated) {
        printf("note: ");
        saturated_text(stdout, p, c->labels);
        printf("\n");
    }
    rep_print_anomalies(run, stdout);
}

typedef struct opts {
    ctx *c;
    etl_pmc_options *po;
} opts;

/* --counters A,B,...: each slot's label and kind. */
static int pmc_counters(const cli_opt *opt, const char *s, char *err, size_t cap)
{
    opts *o = opt->dst;
    ctx *c = o->c;
    if (!*s) return -1;
    unsigned n = 0;
    memset(o->po->kinds, 0, sizeof o->po->kinds);
    memset(c->labels, 0, sizeof c->labels);
    while (*s) {
        size_t len = strcspn(s, ",");
        if (n == ETL_PMC_MAX) return snprintf(err, cap, "--counters names at most %d slots", ETL_PMC_MAX);
        if (len >= sizeof c->labels[n]) return snprintf(err, cap, "--counters: a name is too long");
        memcpy(c->labels[n], s, len);
        c->labels[n][len] = 0;
        o->po->kinds[n] = etl_pmc_kind_from_name(c->labels[n]);
        /* A kind named twice: the ratios would take the first slot and ignore the other. */
        for (unsigned j = 0; j < n; j++)
            if (o->po->kinds[n] != ETL_PMC_OTHER && o->po->kinds[j] == o->po->kinds[n])
                return snprintf(err, cap, "--counters: %s named twice (slots %u and %u)",
                                etl_pmc_kind_name(o->po->kinds[n]), j, n);
        n++;
        s += len;
        if (*s == ',') s++;
    }
    o->po->nkinds = n;
    c->named = 1;
    return 0;
}

int cmd_pmc(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "pmc");
    a.skip = REP_SKIP_PMC; /* counters ride on the switches */
    ctx c;
    memset(&c, 0, sizeof c);
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    opts o = {&c, &po};
    const cli_opt own[] = {
        {.kind = CLI_OPT_CUSTOM, .name = "counters", .arg = "A,B,...", .parse = pmc_counters, .dst = &o,
         .need = "names, e.g. cycles,instructions",
         .help = "what each counter slot counts, in order: cycles, instructions, llc (LLC misses), branch "
                 "(mispredicted branches), branches, or any other label (default: cycles,instructions,llc,branch, "
                 "the order `etlkit synth --pmc` writes; the trace does not record it)"},
        CLI_END};
    a.range_help = "only the slices switched in within this window, from the trace start (seconds, or ms/us/ns: "
                   "--range 1.5 2500ms), each whole: counters cannot be split, so a slice is not clipped";
    int pr = rep_parse(&a, &pmc_cmd, own, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    rep_run run;
    c.a = &a;
    c.run = &run;
    po.v0 = a.v0;
    po.v1 = a.has_range ? a.v1 : a.v0;
    if (etl_pmc_init(&c.p, NULL, &po) != ETL_OK) {
        fprintf(stderr, "%s pmc: out of memory\n", prog);
        etl_pmc_free(&c.p);
        return EXIT_IO;
    }
    /* CPU by CPU, unless --process or --thread select rows by what their thread is at their time. */
    etl_sched_percpu_consumer pc;
    etl_pmc_percpu(&c.p, &pc);
    int rc = rep_run_percpu(&run, &a, a.process || a.thread >= 0 ? NULL : &pc);
    if (rc == REP_TIME_ORDER) {
        etl_pmc_free(&c.p);
        rc = rep_run_start(&run, &a, on_row, &c, NULL);
        if (rc == EXIT_OK && etl_pmc_init(&c.p, run.model, &po) != ETL_OK) {
            fprintf(stderr, "%s pmc: out of memory\n", prog);
            rc = EXIT_IO;
        }
        if (rc != EXIT_OK) {
            etl_pmc_free(&c.p);
            rep_run_close(&run);
            return rc;
        }
        rep_run_go(&run, &a);
    } else if (rc != EXIT_OK) {
        etl_pmc_free(&c.p);
        return rc;
    }
    rep_no_match(&run, &a);
    if (c.p.counters < c.trace_pmc) c.p.counters = c.trace_pmc; /* the columns are the trace's counters */
    if (etl_pmc_finish(&c.p, run.end_ns) != ETL_OK) {
        fprintf(stderr, "%s pmc: out of memory\n", prog);
        run.told = true;
        rc = EXIT_IO;
    } else if (a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        pmc_json(&w, &run, &c.p, c.labels, c.named, &a);
        jw_obj_end(&w);
        jw_end(&w);
    } else if (rep_no_switches(&run, &a)) {
        if (a.format == FMT_CSV) threads_table(&a, &run, &c, 1);
    } else if (!c.p.counters) { /* the trace's, not a selection's or window's: one of no slice has none */
        if (a.format == FMT_TEXT)
            printf("%s: no PMC counters on the context switches in this trace (none configured, or compact "
                   "batches, which carry none): nothing to report\n",
                   run.in.path);
        else threads_table(&a, &run, &c, 1);
    } else if (a.format == FMT_CSV) {
        threads_table(&a, &run, &c, 1);
        /* The CSV has no line for them: the text's notes on stderr, so the slices dropped are told (explore24 F2). */
        if (c.p.pmc_counter_reset && !a.quiet)
            fprintf(stderr, "%s pmc: %s: note: %llu slices dropped: a counter went backwards (pmc_counter_reset)\n",
                    prog, run.in.path, (unsigned long long)c.p.pmc_counter_reset);
        if (c.p.pmc_count_mismatch && !a.quiet)
            fprintf(stderr, "%s pmc: %s: note: %llu slices dropped: their two switches carry different numbers of "
                    "counters (pmc_count_mismatch)\n", prog, run.in.path, (unsigned long long)c.p.pmc_count_mismatch);
        if (c.p.slices_unpaired && !a.quiet)
            fprintf(stderr, "%s pmc: %s: note: %llu slices not counted: without counters at one end (slices_unpaired)\n",
                    prog, run.in.path, (unsigned long long)c.p.slices_unpaired);
        if (!a.quiet) {
            char lead[600];
            snprintf(lead, sizeof lead, "%s pmc: %s: note: ", prog, run.in.path);
            idle_counters_text(stderr, lead, &c.p);
            short_text(stderr, lead, &c.p);
        }
    } else {
        print_text(&a, &run, &c);
    }
    /* Names past the slots the switches carry name nothing: said, not dropped silently. */
    if (rc == EXIT_OK && c.named && c.p.counters && po.nkinds > c.p.counters && !a.quiet) {
        fprintf(stderr, "%s pmc: %s: warning: --counters names %u slots, the switches carry %u counters: ", prog,
                run.in.path, po.nkinds, c.p.counters);
        for (unsigned k = c.p.counters; k < po.nkinds; k++) {
            fprintf(stderr, "%s", k > c.p.counters ? ", " : "");
            text_str(stderr, c.labels[k]);
        }
        fprintf(stderr, " name%s no counter\n", po.nkinds - c.p.counters > 1 ? "" : "s");
    }
    /* A jump no CPU can make is damage: said on stderr whatever the format, exit 3; so is a sum past 2^64. */
    int implausible = rc == EXIT_OK && (c.p.pmc_implausible || c.p.total.saturated);
    if (rc == EXIT_OK && c.p.pmc_implausible && !a.quiet) {
        fprintf(stderr, "%s pmc: %s: warning: ", prog, run.in.path);
        implausible_text(stderr, &c.p, c.labels, c.named);
        fprintf(stderr, "\n");
    }
    if (rc == EXIT_OK && c.p.total.saturated && !a.quiet) {
        fprintf(stderr, "%s pmc: %s: warning: ", prog, run.in.path);
        saturated_text(stderr, &c.p, c.labels);
        fprintf(stderr, "\n");
    }
    etl_pmc_free(&c.p);
    int rc2 = rep_finish(&run, "pmc");
    if (rc != EXIT_OK) return rc;
    return rc2 == EXIT_OK && implausible ? EXIT_DAMAGED : rc2;
}

/* cmd_profile.c - `etlkit profile`: CPU Usage (Sampled) by process, thread, module and function; --folded, --butterfly. */
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "columns.h"
#include "rep_json.h"
#include "etlkit/profile.h"
#include "symbols_cli.h"
#include "base/platform.h"
#include "stacks/label_whole.h"

static const cli_cmd profile_cmd = {
    "profile", "FILE [OPTIONS]",
    "Where the CPU time went, from the SampledProfile interrupts (PerfInfo 0x0F2E) and the\n"
    "stack walks logged with them: samples and their share per process, thread, module (the\n"
    "image holding the sampled address) and function (module+offset; module!function+0xoff with\n"
    "--symbols and the PDBs), as WPA's\n"
    "CPU Usage (Sampled). Code no image covers (JIT code, some kernel areas) is Unknown.\n"
    "--folded writes collapsed stacks for flamegraph.pl, inferno or speedscope.\n",
    {"FILE"}, 1, 1,
    "Text tables show 20 rows each unless --top says otherwise; JSON and CSV show all;\n"
    "--folded writes every stack (no --top). A share of no samples is -.\n"
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

static const char *const by_words[] = {"process", "thread", "module", "function"};

typedef struct args {
    rep_args a;
    const char *by;         /* --by LIST */
    etl_profile_by keys[4];
    unsigned nkeys;
    int folded;
    const char *butterfly;
    const char *symbols;    /* --symbols PATH */
} args;

/* The symbolizer of --symbols or $ETLKIT_SYMBOL_PATH, NULL without one: the getters' labels come from it. */
static etl_symbols *syms;

/* --by: a comma-separated list of process, thread, module, function, each once. */
static int by_check(const cli_opt *o, const char *value, char *err, size_t cap)
{
    args *g = o->ctx;
    g->nkeys = 0;
    const char *s = value;
    while (*s) {
        size_t n = strcspn(s, ",");
        unsigned k = 0;
        while (k < 4 && !(strlen(by_words[k]) == n && !strncmp(by_words[k], s, n))) k++;
        if (k == 4 || g->nkeys == 4) {
            snprintf(err, cap, "--by: '%.*s' is not process, thread, module or function", (int)n, s);
            return 1;
        }
        for (unsigned j = 0; j < g->nkeys; j++)
            if (g->keys[j] == (etl_profile_by)k) {
                snprintf(err, cap, "--by: '%s' given twice", by_words[k]);
                return 1;
            }
        g->keys[g->nkeys++] = (etl_profile_by)k;
        s += n;
        if (*s == ',') s++;
    }
    if (!g->nkeys) {
        snprintf(err, cap, "--by needs a list such as process,module,function");
        return 1;
    }
    return 0;
}

/* ---- rows: text and JSON from one table each; ctx is the profile ---- */

#define GETTER(name) static void name(const col_def *col, const void *ctx, const void *row, col_val *v)
#define PROF ((const etl_profile *)ctx)

static void cv_pct(col_val *v, const etl_profile *p, uint64_t n)
{
    cv_i64(v, rep_pct100((int64_t)n, (int64_t)p->samples));
}

static const char *process_label(const etl_profile_process *pr, char out[256])
{
    if (pr->pid == ETL_PROFILE_NONE) snprintf(out, 256, "%s", pr->name);
    else snprintf(out, 256, "%s (%" PRIu32 ")", text_name(pr->name), pr->pid);
    return out;
}

#define PR ((const etl_profile_process *)row)
GETTER(g_proc_pid)
{
    (void)col, (void)ctx;
    if (PR->pid == ETL_PROFILE_NONE) cv_null(v);
    else cv_u64(v, PR->pid);
}
GETTER(g_proc_name) { (void)col, (void)ctx, cv_str(v, PR->name); }
GETTER(g_proc_label) { (void)col, (void)ctx, cv_str(v, process_label(PR, v->buf)); }
GETTER(g_proc_samples) { (void)col, (void)ctx, cv_u64(v, PR->samples); }
GETTER(g_proc_pct) { (void)col, cv_pct(v, PROF, PR->samples); }
#undef PR

static const col_def process_cols[] = {
    {"Process", NULL, NULL, COL_TEXT, 0, g_proc_label, 0},
    {NULL, NULL, "pid", COL_COUNT, 0, g_proc_pid, 0},
    {NULL, NULL, "name", COL_TEXT, 0, g_proc_name, 0},
    {"=Samples", NULL, "samples", COL_COUNT, 0, g_proc_samples, 0},
    {"=%", NULL, NULL, COL_FIXED, 2, g_proc_pct, 0},
};

#define TH ((const etl_profile_thread *)row)
GETTER(g_th_tid) { (void)col, (void)ctx, cv_u64(v, TH->tid); }
GETTER(g_th_pid)
{
    (void)col, (void)ctx;
    if (TH->pid == ETL_PROFILE_NONE) cv_null(v);
    else cv_u64(v, TH->pid);
}
GETTER(g_th_process) { (void)col, cv_str(v, PROF->processes[TH->process].name); }
GETTER(g_th_label) { (void)col, cv_str(v, process_label(&PROF->processes[TH->process], v->buf)); }
GETTER(g_th_name) { (void)col, (void)ctx, cv_str(v, TH->name); }
GETTER(g_th_samples) { (void)col, (void)ctx, cv_u64(v, TH->samples); }
GETTER(g_th_stack) { (void)col, (void)ctx, cv_u64(v, TH->with_stack); }
GETTER(g_th_pct) { (void)col, cv_pct(v, PROF, TH->samples); }
#undef TH

static const col_def thread_cols[] = {
    {"=TID", NULL, "tid", COL_COUNT, 0, g_th_tid, 0},
    {NULL, NULL, "pid", COL_COUNT, 0, g_th_pid, 0},
    {NULL, NULL, "process", COL_TEXT, 0, g_th_process, 0},
    {"Process", NULL, NULL, COL_TEXT, 0, g_th_label, 0},
    {"Thread name", NULL, "name", COL_TEXT, 0, g_th_name, 0},
    {"=Samples", NULL, "samples", COL_COUNT, 0, g_th_samples, 0},
    {"=%", NULL, NULL, COL_FIXED, 2, g_th_pct, 0},
    {"=With stack", NULL, "with_stack", COL_COUNT, 0, g_th_stack, 0},
};

#define MO ((const etl_profile_module *)row)
GETTER(g_mod_name) { (void)col, (void)ctx, cv_str(v, MO->name); }
GETTER(g_mod_samples) { (void)col, (void)ctx, cv_u64(v, MO->samples); }
GETTER(g_mod_pct) { (void)col, cv_pct(v, PROF, MO->samples); }
#undef MO

static const col_def module_cols[] = {
    {"Module", NULL, "module", COL_TEXT, 0, g_mod_name, 0},
    {"=Samples", NULL, "samples", COL_COUNT, 0, g_mod_samples, 0},
    {"=%", NULL, NULL, COL_FIXED, 2, g_mod_pct, 0},
};

/* Function row i's label into buf[cap]. Its whole length. */
static size_t fn_label_in(const etl_profile *p, uint32_t i, char *buf, size_t cap)
{
    return syms ? etl_symbols_function_row_label(syms, p, i, ETL_SYMBOLS_OFFSET, buf, cap)
                : etl_profile_function_label(p, i, buf, cap);
}

/* Function row i's label whole: in buf[cap] when it fits, else in *room (a caller's own, grown; valid until its next
 * call: one per column), a C++ name from a PDB being longer than a cell's room. Short of memory, cut to buf. */
static const char *fn_label(const etl_profile *p, uint32_t i, char *buf, size_t cap, char **room, size_t *roomcap)
{
    size_t n = fn_label_in(p, i, buf, cap);
    if (n < cap) return buf;
    if (n >= *roomcap) {
        char *g = realloc(*room, n + 1);
        if (!g) return buf;
        *room = g;
        *roomcap = n + 1;
    }
    fn_label_in(p, i, *room, *roomcap);
    return *room;
}

#define FN ((const etl_profile_function *)row)
GETTER(g_fn_label)
{
    (void)col;
    static char *room;
    static size_t roomcap;
    cv_str(v, fn_label(PROF, (uint32_t)(FN - PROF->functions), v->buf, sizeof v->buf, &room, &roomcap));
}
/* With symbols only (no key otherwise): the function's name, its source file and line, null when the PDB has none. */
GETTER(g_fn_symbol)
{
    (void)col;
    etl_symbol y;
    if (!syms) cv_none(v);
    else if (etl_symbols_find_function(syms, PROF, (uint32_t)(FN - PROF->functions), &y)) cv_str(v, y.function);
    else cv_null(v);
}
GETTER(g_fn_file)
{
    (void)col;
    etl_symbol y;
    if (!syms) cv_none(v);
    else if (etl_symbols_find_function(syms, PROF, (uint32_t)(FN - PROF->functions), &y) && y.file) cv_str(v, y.file);
    else cv_null(v);
}
GETTER(g_fn_line)
{
    (void)col;
    etl_symbol y;
    if (!syms) cv_none(v);
    else if (etl_symbols_find_function(syms, PROF, (uint32_t)(FN - PROF->functions), &y) && y.file) cv_u64(v, y.line);
    else cv_null(v);
}
GETTER(g_fn_module) { (void)col, cv_str(v, PROF->modules[FN->module].name); }
/* As a "0x..." string: an Unknown function's offset is its address, past JSON's portable integers. */
GETTER(g_fn_offset)
{
    (void)col, (void)ctx;
    v->buf[fmt_hex(v->buf, FN->offset)] = 0;
    cv_str(v, v->buf);
}
GETTER(g_fn_samples) { (void)col, (void)ctx, cv_u64(v, FN->samples); }
GETTER(g_fn_pct) { (void)col, cv_pct(v, PROF, FN->samples); }
#undef FN

static const col_def function_cols[] = {
    {"Function", NULL, "function", COL_TEXT, 0, g_fn_label, 0},
    {NULL, NULL, "module", COL_TEXT, 0, g_fn_module, 0},
    {NULL, NULL, "offset", COL_TEXT, 0, g_fn_offset, 0},
    {NULL, NULL, "symbol", COL_TEXT, 0, g_fn_symbol, 0},
    {NULL, NULL, "file", COL_TEXT, 0, g_fn_file, 0},
    {NULL, NULL, "line", COL_COUNT, 0, g_fn_line, 0},
    {"=Samples", NULL, "samples", COL_COUNT, 0, g_fn_samples, 0},
    {"=%", NULL, NULL, COL_FIXED, 2, g_fn_pct, 0},
};

/* A pivot row: its group's name at its depth. */
typedef struct pivot_ctx {
    const etl_profile *p;
} pivot_ctx;

static const char *group_name(const etl_profile *p, const etl_profile_row *r, char out[256])
{
    switch (r->by) {
    case ETL_PROFILE_BY_PROCESS: return process_label(&p->processes[r->index], out);
    case ETL_PROFILE_BY_THREAD: {
        const etl_profile_thread *t = &p->threads[r->index];
        if (t->name[0]) snprintf(out, 256, "%s (%" PRIu32 ")", text_name(t->name), t->tid);
        else snprintf(out, 256, "Thread (%" PRIu32 ")", t->tid);
        return out;
    }
    case ETL_PROFILE_BY_MODULE: return p->modules[r->index].name;
    default: {
        static char *room;
        static size_t roomcap;
        return fn_label(p, r->index, out, 256, &room, &roomcap);
    }
    }
}

#define RW ((const etl_profile_row *)row)
GETTER(g_row_group)
{
    (void)col;
    char name[256];
    const char *s = group_name(PROF, RW, name);
    size_t ind = 2 * (RW->depth < 4 ? RW->depth : 4), n = strlen(s);
    if (n > sizeof v->buf - 1 - ind) n = sizeof v->buf - 1 - ind;
    memset(v->buf, ' ', ind);
    memcpy(v->buf + ind, s, n);
    v->buf[ind + n] = 0;
    cv_str(v, v->buf);
}
GETTER(g_row_by) { (void)col, (void)ctx, cv_str(v, by_words[RW->by]); }
GETTER(g_row_depth) { (void)col, (void)ctx, cv_u64(v, RW->depth); }
GETTER(g_row_name) { (void)col, cv_str(v, group_name(PROF, RW, v->buf)); }
GETTER(g_row_samples) { (void)col, (void)ctx, cv_u64(v, RW->samples); }
GETTER(g_row_pct) { (void)col, cv_pct(v, PROF, RW->samples); }
#undef RW

static const col_def pivot_cols[] = {
    {"Group", NULL, NULL, COL_TEXT, 0, g_row_group, 0},
    {NULL, "depth", "depth", COL_COUNT, 0, g_row_depth, 0},
    {NULL, "by", "by", COL_TEXT, 0, g_row_by, 0},
    {NULL, "group", "group", COL_TEXT, 0, g_row_name, 0},
    {"=Samples", "samples", "samples", COL_COUNT, 0, g_row_samples, 0},
    {"=%", "percent", NULL, COL_FIXED, 2, g_row_pct, 0},
};
#undef PROF
#define NCOLS(c) (sizeof c / sizeof c[0])

/* ---- output ---- */

static void text_table(const char *title, const col_def *cols, size_t nc, const etl_profile *p, const void *rows,
                       size_t sz, size_t n, unsigned top)
{
    if (top && n > top) n = top;
    tbl t;
    if (cols_tbl_init(&t, cols, nc, 0)) return;
    for (size_t i = 0; i < n; i++) cols_tbl_row(&t, cols, nc, 0, p, (const char *)rows + i * sz);
    printf("\n%s\n", title);
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
}

static void json_rows(jw *w, const char *key, const col_def *cols, size_t nc, const etl_profile *p,
                      const void *rows, size_t sz, size_t n, unsigned top)
{
    if (top && n > top) n = top;
    jw_arr(w, key);
    for (size_t i = 0; i < n; i++) cols_json_row(w, NULL, cols, nc, p, (const char *)rows + i * sz);
    jw_arr_end(w);
}

/* A share of the samples as text: "-" when there are none to share (0 of 0 is no 0.00%). */
static const char *share(char out[32], uint64_t part, uint64_t whole)
{
    if (!whole) return strcpy(out, "-");
    fmt_fixed(out, rep_pct100((int64_t)part, (int64_t)whole), 2);
    return strcat(out, "%");
}

static void print_header(const char *path, const etl_profile *p)
{
    char a[32], b[32], d[32], iv[32];
    printf("Profile: %s, window %s s .. %s s (%s)\n", path, fmt_fixed(a, p->v0 / 1000, 6), fmt_fixed(b, p->v1 / 1000, 6),
           fmt_dur(d, p->v1 - p->v0));
    printf("%" PRIu64 " samples, every %s (%s), %" PRIu64 " with a stack (%s), %" PRIu64 " in no module (%s)\n",
           p->samples, fmt_dur(iv, p->interval_ns), p->interval_logged ? "as logged" : "no interval logged: the default",
           p->with_stack, share(a, p->with_stack, p->samples), p->unknown, share(b, p->unknown, p->samples));
}

/* etl_profile_anomaly_get's count (the profile is a finished run's: it has one). */
static uint64_t anomaly(const etl_profile *p, etl_profile_anomaly which)
{
    uint64_t n = 0;
    (void)etl_profile_anomaly_get(p, which, &n);
    return n;
}

/*
 * What the numbers leave out or decided, on standard error whatever the output form (the folded stacks and
 * the JSON too: a stack that lacks its part looks whole), as the other reports' notes. The JSON has the
 * counts under anomalies; an impossible ImageSize is damage, told as a warning where it lies.
 */
static void print_notes(const char *path, const etl_profile *p)
{
    static const char *const fmt[] = {
        "%s stack references have no definition of their part (kernel or user) next for their key, so theirs was "
        "lost: those samples' stacks lack that part; a reference whose own definition was lost while the key's next "
        "one holds the same part takes that one: some stacks may then be another sample's",
        "%s samples stopped waiting for a deferred user stack (more than 4096 waiting on a thread): their stacks "
        "lack the user part",
        "%s stack walks had more than 192 frames (Windows logs at most 192): the innermost 192 are kept",
        "%s samples are of threads no Thread event names: their process is the one their stack walk names",
        "%s samples' stack walks name another process than their thread's: the thread's is taken",
        "the sampling interval changed %s times during the trace: the first is shown",
        "%s stack walks repeat a kernel part a sample had already (a damaged event time or thread): refused",
        "%s samples' stacks do not begin at their sampled address: a few are normal (Windows's walk may begin beside "
        "it: 2 of 6,318 walked samples in a real trace); more mean lost records: such a stack lacks a part (a kernel "
        "address with its user part alone, which reads as the whole stack)",
        "%s stack references took their key's next definition of their part while the trace lost records between "
        "the two: their own may have been lost, so those samples' stacks may be another sample's"};
    const uint64_t v[] = {p->key_refs_unresolved, p->user_parts_dropped, anomaly(p, ETL_PROFILE_WALKS_CUT),
                          anomaly(p, ETL_PROFILE_PROCESS_FROM_WALK), anomaly(p, ETL_PROFILE_PROCESS_DISAGREES),
                          p->interval_changes, anomaly(p, ETL_PROFILE_WALKS_REPEATED),
                          anomaly(p, ETL_PROFILE_STACKS_NOT_AT_IP), anomaly(p, ETL_PROFILE_KEY_REFS_UNCERTAIN)};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        if (!v[i]) continue;
        char n[32];
        fprintf(stderr, "%s profile: note: ", prog);
        text_str(stderr, path);
        fputs(": ", stderr);
        fprintf(stderr, fmt[i], col_u64(n, v[i]));
        fputc('\n', stderr);
    }
}

static void json_head(jw *w, const char *path, const etl_profile *p)
{
    jw_str(w, "file", path);
    jw_obj(w, "window");
    jw_i64(w, "start_ns", p->v0);
    jw_i64(w, "end_ns", p->v1);
    jw_obj_end(w);
    jw_u64(w, "samples", p->samples);
    jw_u64(w, "samples_in_trace", p->samples_in_trace);
    jw_i64(w, "interval_ns", p->interval_ns);
    jw_bool(w, "interval_logged", p->interval_logged);
    jw_u64(w, "with_stack", p->with_stack);
    jw_u64(w, "unknown_samples", p->unknown);
}

/* The anomalies (what the session lost while tracing first, from r's header), then the other counts and the symbols. */
static void json_anomalies(jw *w, const etl_reader *r, const etl_profile *p)
{
    jw_obj(w, "anomalies");
    cli_json_session_lost(w, r);
    jw_u64(w, "key_refs_unresolved", p->key_refs_unresolved);
    jw_u64(w, "user_parts_dropped", p->user_parts_dropped);
    jw_u64(w, "interval_changes", p->interval_changes);
    jw_u64(w, "walks_cut", anomaly(p, ETL_PROFILE_WALKS_CUT));
    jw_u64(w, "walks_repeated", anomaly(p, ETL_PROFILE_WALKS_REPEATED));
    jw_u64(w, "image_sizes_bad", anomaly(p, ETL_PROFILE_IMAGE_SIZES_BAD));
    jw_u64(w, "process_from_walk", anomaly(p, ETL_PROFILE_PROCESS_FROM_WALK));
    jw_u64(w, "process_disagrees", anomaly(p, ETL_PROFILE_PROCESS_DISAGREES));
    jw_u64(w, "stacks_not_at_ip", anomaly(p, ETL_PROFILE_STACKS_NOT_AT_IP));
    jw_u64(w, "key_refs_uncertain", anomaly(p, ETL_PROFILE_KEY_REFS_UNCERTAIN));
    jw_u64(w, "addresses_noncanonical", anomaly(p, ETL_PROFILE_ADDRESSES_NONCANONICAL));
    jw_obj_end(w);
    jw_u64(w, "walks_of_other_events", p->walks_other);
    cli_symbols_json(w, syms);
}

static int print_pivot(const args *g, const etl_reader *r, const etl_profile *p)
{
    etl_profile_row *rows;
    size_t n;
    unsigned top = rep_top(&g->a, g->a.format == FMT_TEXT ? 20 : 0);
    if (etl_profile_pivot(p, g->keys, g->nkeys, top, &rows, &n) != ETL_OK) return -1;
    if (g->a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        json_head(&w, g->a.path, p);
        jw_arr(&w, "by");
        for (unsigned k = 0; k < g->nkeys; k++) jw_str(&w, NULL, by_words[g->keys[k]]);
        jw_arr_end(&w);
        json_rows(&w, "rows", pivot_cols, NCOLS(pivot_cols), p, rows, sizeof *rows, n, 0);
        json_anomalies(&w, r, p);
        jw_obj_end(&w);
        jw_end(&w);
    } else {
        tbl t;
        int csv = g->a.format == FMT_CSV;
        if (!cols_tbl_init(&t, pivot_cols, NCOLS(pivot_cols), csv)) {
            for (size_t i = 0; i < n; i++) cols_tbl_row(&t, pivot_cols, NCOLS(pivot_cols), csv, p, &rows[i]);
            if (!csv) {
                print_header(g->a.path, p);
                putchar('\n');
                tbl_print_text(&t, stdout, "");
            } else {
                tbl_print_sheet(&t, stdout);
            }
            tbl_free(&t);
        }
    }
    free(rows);
    return 0;
}

void profile_json(jw *w, const etl_reader *r, const char *path, const etl_profile *p, unsigned top, etl_symbols *s)
{
    etl_symbols *before = syms;
    syms = s;
    json_head(w, path, p);
    json_rows(w, "processes", process_cols, NCOLS(process_cols), p, p->processes, sizeof *p->processes,
              p->nprocesses, top);
    json_rows(w, "threads", thread_cols, NCOLS(thread_cols), p, p->threads, sizeof *p->threads, p->nthreads, top);
    json_rows(w, "modules", module_cols, NCOLS(module_cols), p, p->modules, sizeof *p->modules, p->nmodules, top);
    json_rows(w, "functions", function_cols, NCOLS(function_cols), p, p->functions, sizeof *p->functions,
              p->nfunctions, top);
    json_anomalies(w, r, p);
    syms = before;
}

static void print_lists(const args *g, const etl_reader *r, const etl_profile *p)
{
    if (g->a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        profile_json(&w, r, g->a.path, p, g->a.top, syms);
        jw_obj_end(&w);
        jw_end(&w);
        return;
    }
    unsigned top = rep_top(&g->a, 20);
    print_header(g->a.path, p);
    text_table("Processes", process_cols, NCOLS(process_cols), p, p->processes, sizeof *p->processes, p->nprocesses,
               top);
    text_table("Threads", thread_cols, NCOLS(thread_cols), p, p->threads, sizeof *p->threads, p->nthreads, top);
    text_table("Modules", module_cols, NCOLS(module_cols), p, p->modules, sizeof *p->modules, p->nmodules, top);
    text_table("Functions", function_cols, NCOLS(function_cols), p, p->functions, sizeof *p->functions,
               p->nfunctions, top);
}

/* etl_profile_frame_label as a labeler (etl_label_whole's). */
static size_t frame_label(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out, size_t cap)
{
    (void)ctx;
    return etl_profile_frame_label(p, f, out, cap);
}

/* Callers or callees: a JSON array under key (w), or a text table under title. Names whole (a C++ template's). */
static void print_edges(jw *w, const char *key, const char *title, const etl_profile *p, const etl_profile_edge *e,
                        size_t n, unsigned top, uint64_t total, bool by_name)
{
    char small[256], pct[32], num[32];
    etl_profile_labeler lab = !syms ? frame_label : by_name ? etl_symbols_function_label : etl_symbols_frame_label;
    if (top && n > top) n = top;
    if (w) jw_arr(w, key);
    else printf("\n%s\n", title);
    for (size_t i = 0; i < n; i++) {
        char *buf = etl_label_whole(lab, syms, p, &e[i].frame, small, sizeof small, NULL);
        if (!buf) buf = small; /* short of memory: the name cut */
        if (w) {
            jw_obj(w, NULL);
            jw_str(w, "function", buf);
            jw_u64(w, "samples", e[i].samples);
            jw_obj_end(w);
        } else {
            printf("  %12s %7s%%  %s\n", col_u64(num, e[i].samples),
                   fmt_fixed(pct, rep_pct100((int64_t)e[i].samples, (int64_t)total), 2), buf);
        }
        if (buf != small) free(buf);
    }
    if (w) jw_arr_end(w);
}

/* A function as the tables print it: module+0xOFFSET (etl_profile_butterfly_get's check, made before the run). */
static bool is_label(const char *s)
{
    const char *plus = strrchr(s, '+');
    if (!plus || plus[1] != '0' || (plus[2] != 'x' && plus[2] != 'X') || !plus[3]) return false;
    return plus[3 + strspn(plus + 3, "0123456789abcdefABCDEF")] == 0;
}

static int print_butterfly(const args *g, const etl_reader *r, const etl_profile *p)
{
    etl_profile_butterfly b;
    /* module+0xOFFSET: that address; anything else names a function (module!function) through the symbols */
    bool by_name = !is_label(g->butterfly);
    etl_status st = by_name ? etl_profile_butterfly_by(p, g->butterfly, etl_symbols_function_label, syms, &b)
                            : etl_profile_butterfly_get(p, g->butterfly, &b);
    if (st != ETL_OK && st != ETL_END) return -1; /* the label was checked: out of memory */
    unsigned top = rep_top(&g->a, g->a.format == FMT_TEXT ? 20 : 0);
    if (g->a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        json_head(&w, g->a.path, p);
        jw_str(&w, "function", g->butterfly);
        jw_u64(&w, "total", b.total);
        jw_u64(&w, "self", b.self);
        print_edges(&w, "callers", NULL, p, b.callers, b.ncallers, top, b.total, by_name);
        print_edges(&w, "callees", NULL, p, b.callees, b.ncallees, top, b.total, by_name);
        json_anomalies(&w, r, p);
        jw_obj_end(&w);
        jw_end(&w);
    } else {
        char a[32], c[32];
        print_header(g->a.path, p);
        printf("\n%s: in the stack of %" PRIu64 " samples (%s), the innermost frame of %" PRIu64 " (%s)\n",
               g->butterfly, b.total, share(a, b.total, p->samples), b.self, share(c, b.self, p->samples));
        if (st == ETL_END) printf("no sampled stack holds it\n");
        print_edges(NULL, NULL, "Callers (the frame outside it)", p, b.callers, b.ncallers, top, b.total, by_name);
        print_edges(NULL, NULL, "Callees (the frame inside it)", p, b.callees, b.ncallees, top, b.total, by_name);
    }
    etl_profile_butterfly_free(&b);
    return 0;
}

static void on_progress(void *bar, uint64_t done, uint64_t total)
{
    (void)total;
    cli_progress_update(bar, done);
}

int cmd_profile(int argc, char **argv)
{
    args g;
    memset(&g, 0, sizeof g);
    rep_args_init(&g.a, "profile");
    const cli_opt own[] = {
        {.kind = CLI_OPT_STRING, .name = "by", .arg = "LIST", .dst = &g.by, .check = by_check, .ctx = &g,
         .help = "one table grouped by these keys in this order, comma-separated: process, thread, module, "
                 "function (e.g. --by process,module,function, as WPA's columns left of the bar)",
         .flags = CLI_OPT_NONEMPTY},
        CLI_FLAG("folded", 0, "collapsed stacks, one line per thread and stack: "
                 "\"process (pid);thread (tid);root;...;leaf COUNT\" for flamegraph.pl, inferno, speedscope",
                 &g.folded, 1),
        CLI_STRING("butterfly", 0, "FUNCTION", "callers and callees of one function, as the tables name it "
                   "(module+0xOFFSET), or with --symbols by name (module!function)",
                   "a function such as ntdll.dll+0x9f8a4", &g.butterfly),
        CLI_SYMBOLS_OPT(&g.symbols),
        CLI_END};
    int pr = rep_parse(&g.a, &profile_cmd, own,
                       REP_OPT_JSON | REP_OPT_CSV | REP_OPT_RANGE | REP_OPT_TOP | REP_OPT_PROCESS | REP_OPT_THREAD |
                           REP_OPT_QUIET | REP_OPT_THREADS,
                       argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    if (g.folded + (g.butterfly != NULL) + (g.by != NULL) > 1)
        return cli_usage_error("profile", "--folded, --butterfly and --by are one each: give one");
    if (g.folded && g.a.format != FMT_TEXT) return cli_usage_error("profile", "--folded has one format: no --json, --csv");
    /* Every stack, never the heaviest N: the folded counts sum to the samples, as a flame graph needs. */
    if (g.folded && g.a.top_set)
        return cli_usage_error("profile", "--top has no meaning with --folded (every stack is written: the counts "
                                          "sum to the samples)");
    if (g.a.format == FMT_CSV && !g.by && !g.folded && !g.butterfly) {
        /* A spreadsheet gets the finest groups: every column is a pivot key. */
        static const etl_profile_by all[] = {ETL_PROFILE_BY_PROCESS, ETL_PROFILE_BY_THREAD, ETL_PROFILE_BY_MODULE,
                                             ETL_PROFILE_BY_FUNCTION};
        memcpy(g.keys, all, sizeof all);
        g.nkeys = 4;
        g.by = "process,thread,module,function";
    }
    if (g.butterfly && g.a.format == FMT_CSV) return cli_usage_error("profile", "--butterfly has no --csv form");
    const char *env_path = etl_getenv("ETLKIT_SYMBOL_PATH");
    bool want_syms = g.symbols || (env_path && *env_path);
    if (g.butterfly && !is_label(g.butterfly) && want_syms && !strchr(g.butterfly, '!'))
        return cli_usage_error("profile", "--butterfly: '%s' is neither module+0xOFFSET nor module!function",
                               g.butterfly);
    if (g.butterfly && !is_label(g.butterfly) && !want_syms) /* before reading the trace, as every usage error */
        return cli_usage_error("profile", "--butterfly: '%s' is not a function as profile prints it (module+0xOFFSET)",
                               g.butterfly);

    /* the symbol path before the trace: a folder that is not there fails here, at no cost */
    int rc = cli_symbols_open("profile", g.symbols, &syms);
    if (rc != EXIT_OK) return rc;
    cli_input in;
    rc = cli_open(&in, g.a.path, g.a.quiet);
    if (rc != EXIT_OK) {
        etl_symbols_close(syms);
        syms = NULL;
        return rc;
    }
    cli_progress bar;
    cli_progress_start(&bar, 2 * etl_reader_file_size(in.reader));
    uint64_t pid = 0;
    bool by_pid = g.a.process && etl_sched_id_arg(g.a.process, &pid);
    /* A number no process has selects none, as in the other reports, never all. */
    if (by_pid && pid > UINT32_MAX) pid = (uint64_t)UINT32_MAX + 1;
    etl_profile_options o = {.sz = sizeof o,
                             .v0 = g.a.v0,
                             .v1 = g.a.has_range ? g.a.v1 : g.a.v0,
                             .pid = by_pid ? (int64_t)pid : -1,
                             .process = by_pid ? NULL : g.a.process,
                             .tid = g.a.thread,
                             .progress = on_progress,
                             .progress_ctx = &bar,
                             .threads = g.a.threads,
                             .no_stacks = !g.folded && !g.butterfly}; /* the lists need no stack's frames */
    etl_profile p;
    etl_status st = etl_profile_run(in.reader, &o, &p);
    cli_progress_end(&bar);
    if (st == ETL_OK) rep_range_note(&g.a, g.a.path, p.v1, p.v0, p.v1); /* clipped at the end: v1 is the end */
    if (st == ETL_OK && (rc = cli_symbols_scan("profile", syms, in.reader)) != EXIT_OK) {
        etl_symbols_close(syms);
        syms = NULL;
        etl_profile_free(&p);
        cli_close(&in, NULL);
        return rc;
    }
    int out = 0;
    if (st == ETL_OK && !p.samples_in_trace && g.a.format == FMT_TEXT && !g.folded) {
        printf("%s: no sampled profile in this trace (no PerfInfo SampleProf events: record with xperf -on "
               "PROC_THREAD+LOADER+PROFILE or wpr -start CPU): nothing to report\n", g.a.path);
    } else if (st == ETL_OK) {
        if (g.folded) {
            /* A failed write: cli_stdout_done says so. Out of memory: said below, exit 1 (lines written so far
             * stay written: the lines are built before the first is written, so most failures write none). */
            etl_status fst = etl_profile_write_folded_with(&p, stdout, syms ? etl_symbols_function_label : NULL, syms);
            if (fst == ETL_E_NOMEM) out = -1;
        }
        else if (g.butterfly) out = print_butterfly(&g, in.reader, &p);
        else if (g.by) out = print_pivot(&g, in.reader, &p);
        else print_lists(&g, in.reader, &p);
        if (!g.a.quiet) print_notes(g.a.path, &p);
    }
    etl_stats damage = p.st;
    cli_symbols_close(syms);
    syms = NULL;
    etl_profile_free(&p);
    if (st != ETL_OK || out < 0) {
        fprintf(stderr, "%s profile: %s: %s\n", prog, g.a.path, etl_status_str(st != ETL_OK ? st : ETL_E_NOMEM));
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    if (out > 0) {
        cli_close(&in, NULL);
        return out;
    }
    rc = cli_stdout_done("profile");
    int crc = cli_close(&in, &damage);
    return rc != EXIT_OK ? rc : crc;
}

/*
 * report_page.h - the parts of `etlkit report`'s page (report_html.c, report_charts.c,
 * report_tables.c, report_json.c) and what cmd_report.c hands them: the options, the
 * aggregations of the pass and the trace facts.
 */
#ifndef ETLKIT_CLI_REPORT_PAGE_H
#define ETLKIT_CLI_REPORT_PAGE_H

#include <stdio.h>
#include "report.h"
#include "rep_json.h"
#include "html.h"
#include "columns.h"
#include "etlkit/wakeups.h"
#include "etlkit/waitchain.h"
#include "etlkit/summary.h"
#include "etlkit/spinlocks.h"
#include "etlkit/pmc.h"
#include "etlkit/symbols.h"
#include "etlkit/profile.h"
#include "base/platform.h"

#define COLUMNS 500     /* utilisation intervals across the window, at most */
#define STACKED 7       /* processes drawn in the stacked chart; the rest is "other" */
#define HIST_BINS 23
#define CHAIN_DEPTH 3   /* levels of the wait chain followed on the page */

/* Ready-latency histogram: 1-2-5 steps from 1 us to 10 s (log scale), lower edges in ns. */
extern const int64_t hist_lo[HIST_BINS];

/* cli/report/report.css and report.js, NUL-terminated: CMakeLists.txt generates them from the files. */
extern const char report_css[], report_js[];
/* cli/report/flame.css and flame.js: section 8's, written only on pages with samples. */
extern const char flame_css[], flame_js[];


typedef struct opts {
    const char *out;
    const char *title;
    int force;                /* replace an existing output */
    const char *symbols;      /* --symbols PATH */
} opts;

typedef struct rctx {
    etl_usage u;
    etl_wakeups w;
    etl_pmc p;
    etl_spinlocks s;
    etl_spin_params spin;         /* the spin lock sampling parameters, as `etlkit spinlocks` takes them */
    int have_u, have_w, have_p, have_s;
    uint64_t ev[8];           /* source events by etl_sched_kind */
} rctx;

typedef struct page {
    FILE *f;
    const rep_args *a;
    const opts *o;
    rep_run *run;
    rctx *c;
    etl_summary *fa;          /* the trace's facts (etl_summary_run) */
    etl_usage_thread *by_ready; /* c->u's threads as `etlkit waits` orders them (waits_sort) */
    int switches;              /* the trace has context switches */
    int64_t v0, v1, win;       /* window */
    unsigned ncpu;
    unsigned top;
    int64_t interval;
    size_t ncols;
    etl_chain *chain;          /* NULL: not run */
    etl_sched *chain_model;
    int64_t chain_from, chain_at;
    uint32_t chain_tid;
    const etl_profile *prof;   /* the sampled profile; NULL: the trace has no SampledProfile event */
    etl_symbols *syms;         /* --symbols or $ETLKIT_SYMBOL_PATH; NULL: frames are module+offset */
    char failed[512];          /* why a part of the page could not be made (page_fail): the page fails, exit 1 */
} page;

const char *secs(char out[32], int64_t ns);
const char *pct_text(char out[32], int64_t part, int64_t whole);
const char *proc_label_pid(const etl_sched *m, uint32_t process, char out[256]);
const char *reason_text(char out[16], unsigned code);
const char *readier_text(const etl_sched *m, const etl_usage_interval *v, char out[320]);
void td(FILE *f, const char *text);
void tdn(FILE *f, int64_t v, const char *text);
void table_head(FILE *f, const char *caption, const char *const *cols, size_t n, int sortable);
void table_end(FILE *f);
void section_open(FILE *f, const char *id, const char *title, const char *how);
void note(FILE *f, const char *cls, const char *text);
void write_page(page *pg);
/* A part made in memory (etl_memstream) could not be: the first reason, naming the temporary directory if one was used. */
void page_fail(page *pg, const etl_memstream *ms);
void sec_trace(page *pg);
void no_switches(page *pg, const char *id, const char *title, int first);
unsigned heat(int64_t busy, int64_t len);
int64_t col_len(const page *pg, size_t b);
int64_t cpu_busy(const page *pg, size_t b, size_t c);
int64_t proc_busy(const page *pg, size_t b, size_t j);
double col_start_x(const page *pg, double x0, double cw, size_t b);
double col_end_x(const page *pg, double x0, double cw, size_t b);
void time_axis(FILE *f, double x0, double w, double y, const page *pg);
void sec_utilisation(page *pg);
void sec_top(page *pg);
double log10_approx(double x);
const char *bin_label(char out[48], unsigned b);
void intervals_table(page *pg, const char *caption, const etl_usage_interval *v, size_t n, int waits);
void sec_ready(page *pg);
int by_wait_desc(const void *a, const void *b);
void sec_waits(page *pg);
void sec_locks_pmc(page *pg);
const char *waker_proc(const etl_sched *m, const etl_wakeup_waker *x, char out[256]);
void sec_wakeups_chain(page *pg);
void json_pid(jw *w, uint32_t pid);
void write_json(jw *w, const page *pg);
/* Section 8 (report_flame.c): the flame graph, and its data under "flame"; -1: out of memory. */
void sec_flame(page *pg);
int flame_json(jw *w, const etl_profile *p, etl_symbols *syms);

#endif

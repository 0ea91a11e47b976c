/*
 * cmd_report.c - `etlkit report FILE -o report.html`: one self-contained HTML
 * page with the trace at a glance and the scheduler reports in pictures.
 *
 * The page is a formatter of library results, nothing more: one streaming pass
 * through the scheduler model feeds etl_usage (CPU time, per-interval
 * utilisation, ready latency, waits), etl_wakeups, etl_pmc and etl_spinlocks
 * together; a cheap file-order pass over the record framing gives the facts
 * `info` shows (records by hook, kernel flags, recovery counters); the wait
 * chain of the longest wait takes the chain's own passes, which stop early.
 *
 * The charts are inline SVG written here (no script needed to read them; each
 * has a text alternative), a colour-blind-safe palette in CSS variables for
 * light and dark mode, a print stylesheet, and a little inline script for hover
 * details and table sorting. Every number shown is also in a JSON block
 * (<script type="application/json" id="etlkit-data">), written with the shared
 * JSON writer; tests compare it with the --json reports. Size is bounded by the
 * aggregation (about 500 intervals, top-N tables), never by the event count.
 *
 * The output goes through base/outfile, as every command's does: a temporary
 * file beside the target, created before the passes and renamed into place when
 * complete (removed on a failure or a signal); "-o -" writes standard output.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "html.h"
#include "etlkit/analysis.h"
#include "etlkit/event.h"
#include "etlkit/reports_extra.h"
#include "base/diag.h"
#include "base/outfile.h"

#define COLUMNS 500     /* utilisation intervals across the window, at most */
#define STACKED 7       /* processes drawn in the stacked chart; the rest is "other" */
#define HIST_BINS 23
#define CHAIN_DEPTH 3   /* levels of the wait chain followed on the page */

/* Ready-latency histogram: 1-2-5 steps from 1 us to 10 s (log scale), lower edges in ns. */
static const int64_t hist_lo[HIST_BINS] = {
    0,         1000,      2000,      5000,       10000,      20000,      50000,      100000,
    200000,    500000,    1000000,   2000000,    5000000,    10000000,   20000000,   50000000,
    100000000, 200000000, 500000000, 1000000000, 2000000000, 5000000000, 10000000000};

typedef struct opts {
    const char *out;
    const char *title;
    int force;                /* replace an existing output */
} opts;

typedef struct rctx {
    etl_usage u;
    etl_wakeups w;
    etl_pmc p;
    etl_spinlocks s;
    int have_u, have_w, have_p, have_s;
    uint64_t hist[HIST_BINS];
    uint64_t ev[8];           /* source events by etl_sched_kind */
} rctx;

/* The file-order facts `info` shows. */
typedef struct facts {
    uint64_t records;
    uint64_t *by_hook;        /* 65536 */
    etl_groupmask flags;
    uint64_t group_mask_events;
    uint32_t kernel_event_version;
    uint64_t last_ts;         /* the largest record timestamp */
    etl_stats st;
    int ok;
} facts;

/* ---- the pass ------------------------------------------------------------------------------ */

static int64_t overlap(const etl_usage *u, int64_t a, int64_t b)
{
    if (a < u->o.v0) a = u->o.v0;
    if (u->o.v1 > u->o.v0 && b > u->o.v1) b = u->o.v1;
    return b > a ? b - a : 0;
}

static int in_window(const etl_usage *u, int64_t t)
{
    return t >= u->o.v0 && (u->o.v1 <= u->o.v0 || t < u->o.v1);
}

static void on_row(void *p, const etl_sched_row *row)
{
    rctx *c = p;
    etl_usage_add(&c->u, row);
    if (c->have_w) etl_wakeups_add(&c->w, row);
    if (c->have_p) etl_pmc_add(&c->p, row);
    /* The histogram takes the Ready values etl_usage takes (its `all` variant). */
    if ((row->flags & ETL_ROW_HEAD) || !(row->flags & ETL_ROW_READY_TIME) || row->new_thread == ETL_SCHED_IDLE ||
        row->new_thread == ETL_SCHED_NONE)
        return;
    int64_t ready = overlap(&c->u, row->rt, row->si);
    if (!(ready > 0 || in_window(&c->u, row->si))) return;
    unsigned b = HIST_BINS - 1;
    while (b > 0 && ready < hist_lo[b]) b--;
    c->hist[b]++;
}

static void on_event(void *p, const etl_sched_event *ev)
{
    rctx *c = p;
    if ((unsigned)ev->kind < 8) c->ev[ev->kind]++;
    if (c->have_s) etl_spinlocks_add(&c->s, ev);
}

static void facts_pass(etl_reader *r, facts *f)
{
    memset(f, 0, sizeof *f);
    f->by_hook = calloc(65536, sizeof *f->by_hook);
    etl_iter *it = NULL;
    if (!f->by_hook || etl_iter_open(r, ETL_ORDER_FILE, &it) != ETL_OK) return;
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        f->records++;
        if (rec.has & ETL_REC_HOOK) f->by_hook[rec.hook]++;
        if ((rec.has & ETL_REC_TS) && rec.ts > f->last_ts) f->last_ts = rec.ts;
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook) || (hook != ETL_HOOK_HEADER_EXTENSION && hook != ETL_HOOK_GROUP_MASKS_END))
            continue;
        etl_event ev;
        if (etl_event_decode(&rec, &ev) != ETL_OK || ev.kind != ETL_EVENT_GROUP_MASK) continue;
        f->group_mask_events++;
        for (int i = 0; i < 8; i++) f->flags.masks[i] |= ev.u.group_mask.masks[i];
        if (ev.u.group_mask.kernel_event_version) f->kernel_event_version = ev.u.group_mask.kernel_event_version;
    }
    f->st = *etl_iter_stats(it);
    etl_iter_close(it);
    f->ok = 1;
}

/* ---- small formatting helpers ---------------------------------------------------------------- */

/* Hundredths of a percent of part over whole, rounded down. */
static int64_t pct100(int64_t part, int64_t whole)
{
    return whole > 0 ? (int64_t)((__int128)part * 10000 / whole) : 0;
}

/* Thousandths of an event per second of the window. */
static int64_t rate(uint64_t n, int64_t window)
{
    return window > 0 ? (int64_t)((__int128)n * 1000000000000 / window) : 0;
}

static const char *secs(char out[32], int64_t ns)
{
    char t[32];
    snprintf(out, 32, "%s s", fmt_fixed(t, ns / 1000, 6));
    return out;
}

static const char *pct_text(char out[32], int64_t part, int64_t whole)
{
    char t[32];
    snprintf(out, 32, "%s%%", fmt_fixed(t, pct100(part, whole), 2));
    return out;
}

static const char *u64s(char out[32], uint64_t v)
{
    out[fmt_u64(out, v)] = 0;
    return out;
}

static const char *proc_label(const etl_sched *m, uint32_t process, char out[256], uint32_t *pid)
{
    const etl_sched_process *sp = etl_sched_process_at(m, process);
    *pid = sp ? sp->pid : UINT32_MAX;
    if (!sp) return strcpy(out, "Unknown");
    snprintf(out, 256, "%s", sp->name ? etl_sched_names(m) + sp->name : "Unknown");
    return out;
}

static const char *proc_label_pid(const etl_sched *m, uint32_t process, char out[256])
{
    uint32_t pid;
    char name[256];
    proc_label(m, process, name, &pid);
    if (pid == UINT32_MAX) return strcpy(out, name);
    snprintf(out, 256, "%.240s (%u)", name, pid); /* a name is cut, never the PID */
    return out;
}

static const char *reason_text(char out[16], unsigned code)
{
    const char *n = etl_wait_reason_name(code);
    if (n) return n;
    snprintf(out, 16, "%u", code);
    return out;
}

/* Who readied the thread of a long interval: "image (PID) tid N", "DPC (CPU n)", "Unknown", "-". */
static const char *readier_text(const etl_sched *m, const etl_usage_interval *v, char out[320])
{
    char label[256];
    if (!v->has_readier) return strcpy(out, "-");
    if (v->ready_flags & ETL_READY_EXECUTING_DPC) {
        snprintf(out, 320, "DPC (CPU %u)", v->ready_cpu);
        return out;
    }
    if (v->readier_thread == ETL_SCHED_NONE) return strcpy(out, "Unknown");
    rep_process_label(m, v->readier_thread, label);
    const etl_sched_thread *t = etl_sched_thread_at(m, v->readier_thread);
    snprintf(out, 320, "%s tid %u", label, t ? t->tid : 0);
    return out;
}

/* ---- HTML pieces ------------------------------------------------------------------------------- */

static void td(FILE *f, const char *text)
{
    fputs("<td>", f);
    html_text(f, text);
    fputs("</td>", f);
}

/* A numeric cell: right-aligned, with the raw value for sorting. */
static void tdn(FILE *f, int64_t v, const char *text)
{
    fprintf(f, "<td class=\"n\" data-v=\"%lld\">", (long long)v);
    html_text(f, text);
    fputs("</td>", f);
}

static void table_head(FILE *f, const char *caption, const char *const *cols, size_t n, int sortable)
{
    fprintf(f, "<div class=\"tw\"><table%s><caption>", sortable ? " class=\"sortable\"" : "");
    html_text(f, caption);
    fputs("</caption><thead><tr>", f);
    for (size_t i = 0; i < n; i++) {
        int num = cols[i][0] == '=';
        fprintf(f, "<th scope=\"col\"%s>", num ? " class=\"n\"" : "");
        html_text(f, cols[i] + num);
        fputs("</th>", f);
    }
    fputs("</tr></thead><tbody>\n", f);
}

static void table_end(FILE *f) { fputs("</tbody></table></div>\n", f); }

static void section_open(FILE *f, const char *id, const char *title, const char *how)
{
    fprintf(f, "<section id=\"%s\" aria-labelledby=\"%s-h\"><h2 id=\"%s-h\">", id, id, id);
    html_text(f, title);
    fputs("</h2>\n<p class=\"how\">", f);
    html_text(f, how);
    fputs("</p>\n", f);
}

static void note(FILE *f, const char *cls, const char *text)
{
    fprintf(f, "<p class=\"%s\">", cls);
    html_text(f, text);
    fputs("</p>\n", f);
}

/* ---- the page's sections ----------------------------------------------------------------------- */

typedef struct page {
    FILE *f;
    const rep_args *a;
    const opts *o;
    rep_run *run;
    rctx *c;
    facts *fa;
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
} page;

static void sec_trace(page *pg)
{
    FILE *f = pg->f;
    const etl_logfile_header *h = etl_reader_header(pg->run->in.reader);
    const etl_clock *clk = etl_reader_clock(pg->run->in.reader);
    char b1[64], b2[64], b3[64];
    section_open(f, "trace", "1. The trace",
                 "What was recorded: the machine, the clock and the window, the events by kind, the kernel flags "
                 "of the session, and any damage or lost events (numbers below cover what could be read).");
    fputs("<dl class=\"facts\">", f);
#define FACT(k, ...) (fputs("<dt>", f), html_text(f, k), fputs("</dt><dd>", f), html_textf(f, __VA_ARGS__), fputs("</dd>", f))
    FACT("File", "%s (%llu bytes)", pg->run->in.path, (unsigned long long)etl_reader_file_size(pg->run->in.reader));
    FACT("OS", "Windows %u.%u build %u", h->os_major, h->os_minor, h->provider_version);
    FACT("CPUs", "%u (%u MHz nominal), %u-bit", h->num_processors, h->cpu_speed_mhz, h->pointer_size * 8);
    FACT("Clock", "%s (%u), %llu ticks/s", clock_type_name(h->clock_type), h->clock_type,
         (unsigned long long)clk->ticks_per_sec);
    etl_filetime_format(h->start_time, b1);
    FACT("Started (UTC)", "%s", b1);
    FACT("Window", "%s to %s (%s)", secs(b1, pg->v0), secs(b2, pg->v1), fmt_dur(b3, pg->win));
    FACT("Records", "%llu", (unsigned long long)pg->fa->records);
    FACT("Events lost", "%u events, %u buffers (as the session counted them)", h->events_lost, h->buffers_lost);
#undef FACT
    fputs("</dl>\n", f);
    /* Kernel flags */
    fputs("<h3>Kernel flags</h3>\n<p class=\"flags\">", f);
    if (pg->fa->group_mask_events) {
        const char *names[256];
        size_t n = etl_groupmask_names(&pg->fa->flags, names, 256);
        for (size_t i = 0; i < n && i < 256; i++) {
            fputs("<code>", f);
            html_text(f, names[i]);
            fputs("</code> ", f);
        }
        if (!n) fputs("none", f);
    } else {
        html_text(f, "not recorded (no group-mask event in the trace)");
    }
    fputs("</p>\n", f);
    /* Events by kind: the scheduler's, then the most frequent hooks. */
    const etl_sched_source_stats *ss = etl_sched_source_stats_get(pg->run->src);
    static const char *const sh[] = {"Scheduler event", "=Count"};
    table_head(f, "Scheduler events as the model read them", sh, 2, 0);
    struct {
        const char *k;
        uint64_t v;
    } se[] = {{"Context switches", ss->switches},
              {"  from CSwitch events", ss->full_switches},
              {"  from compact batches", ss->compact_switches},
              {"ReadyThread", pg->c->ev[ETL_SCHED_READY]},
              {"SpinLock", pg->c->ev[ETL_SCHED_SPINLOCK]},
              {"Thread (start, end, rundown)", pg->c->ev[ETL_SCHED_THREAD]},
              {"Thread names (SetName)", pg->c->ev[ETL_SCHED_SET_NAME]},
              {"Process (start, end, rundown)", pg->c->ev[ETL_SCHED_PROCESS]}};
    for (size_t i = 0; i < sizeof se / sizeof se[0]; i++) {
        fputs("<tr>", f);
        td(f, se[i].k);
        tdn(f, (int64_t)se[i].v, u64s(b1, se[i].v));
        fputs("</tr>\n", f);
    }
    table_end(f);
    /* Records by hook, most frequent first (at most 15). */
    uint32_t order[16];
    size_t no = 0;
    for (unsigned k = 0; k < 65536; k++) {
        uint64_t v = pg->fa->by_hook[k];
        if (!v) continue;
        size_t i = no < 15 ? no++ : 15;
        if (i == 15 && v <= pg->fa->by_hook[order[14]]) continue;
        if (i == 15) i = 14;
        while (i > 0 && pg->fa->by_hook[order[i - 1]] < v) {
            order[i] = order[i - 1];
            i--;
        }
        order[i] = k;
    }
    static const char *const hh[] = {"Hook", "Event", "=Records"};
    table_head(f, "Records by kind (kernel hooks, the 15 most frequent)", hh, 3, 1);
    for (size_t i = 0; i < no; i++) {
        const char *name = etl_hook_name((uint16_t)order[i]);
        snprintf(b2, sizeof b2, "0x%04x", order[i]);
        fputs("<tr>", f);
        td(f, b2);
        td(f, name ? name : "");
        tdn(f, (int64_t)pg->fa->by_hook[order[i]], u64s(b1, pg->fa->by_hook[order[i]]));
        fputs("</tr>\n", f);
    }
    table_end(f);
    /* Damage */
    const etl_stats *st = &pg->fa->st;
    int damaged = etl_stats_damaged(st) || etl_stats_damaged(&pg->run->damage);
    fputs("<h3>Damage and lost events</h3>\n", f);
    if (!damaged && !h->events_lost && !h->buffers_lost) {
        note(f, "ok", "No damage: every buffer was read whole, and the session lost no event.");
    } else {
        fputs("<div class=\"warn\" role=\"note\"><p><strong>", f);
        html_text(f, damaged ? "This trace is damaged: parts of it were skipped." : "The session lost events.");
        fputs("</strong> ", f);
        html_text(f, "Counts and times below cover what could be read; a thread whose switches were lost may show "
                     "less CPU time and longer waits than it had.");
        fputs("</p><ul>", f);
        struct {
            const char *k;
            uint64_t v;
        } dm[] = {{"events the session lost (EventsLost)", h->events_lost},
                  {"buffers the session lost (BuffersLost)", h->buffers_lost},
                  {"damaged buffers skipped in whole or part", st->bad_buffers},
                  {"records that could not be framed", st->bad_records},
                  {"bytes of event data skipped", st->skipped_bytes},
                  {"buffers cut by the end of the file", st->truncated_buffers},
                  {"compressed buffers that did not expand", st->decompress_errors},
                  {"buffers in an unsupported compression", st->unsupported_buffers}};
        for (size_t i = 0; i < sizeof dm / sizeof dm[0]; i++)
            if (dm[i].v) fputs("<li>", f), html_textf(f, "%llu %s", (unsigned long long)dm[i].v, dm[i].k), fputs("</li>", f);
        if (st->first_problem_offset != UINT64_MAX)
            fputs("<li>", f), html_textf(f, "first problem at offset 0x%llx: %s", (unsigned long long)st->first_problem_offset,
                                         st->first_problem), fputs("</li>", f);
        fputs("</ul></div>\n", f);
    }
    /* The model's anomaly counters, as the text reports print them. */
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    if (m) {
        rep_print_anomalies(pg->run, m);
        fclose(m);
        if (n) {
            fputs("<details><summary>Anomalies the scheduler model counted</summary><ul>", f);
            for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
                fputs("<li>", f);
                html_text(f, strncmp(line, "note: ", 6) == 0 ? line + 6 : line);
                fputs("</li>", f);
            }
            fputs("</ul></details>\n", f);
        }
        free(buf);
    }
    fputs("</section>\n", f);
}

static void no_switches(page *pg, const char *id, const char *title, int first)
{
    section_open(pg->f, id, title, "This section needs the context switches of the trace.");
    note(pg->f, "none", first ? "No context switches in this trace (no CSwitch events or compact batches): nothing to "
                                "show here or below. Record with the kernel flags PROC_THREAD+CSWITCH (xperf -on "
                                "PROC_THREAD+LOADER+CSWITCH) to get them."
                              : "No context switches in this trace.");
    fputs("</section>\n", pg->f);
}

/* Heat level of busy over len: h0 for none, h1..h9 by ninths. */
static unsigned heat(int64_t busy, int64_t len)
{
    if (busy <= 0 || len <= 0) return 0;
    int64_t l = (int64_t)((__int128)busy * 9 / len);
    return 1 + (unsigned)(l > 8 ? 8 : l);
}

static int64_t col_len(const page *pg, size_t b)
{
    int64_t s = pg->v0 + (int64_t)b * pg->interval, e = s + pg->interval;
    return (e > pg->v1 ? pg->v1 : e) - s;
}

static int64_t cpu_busy(const page *pg, size_t b, size_t c)
{
    const etl_usage *u = &pg->c->u;
    return b < u->nbuckets && c < u->bucket_stride ? u->bucket_cpu_busy[b * u->bucket_stride + c] : 0;
}

static int64_t proc_busy(const page *pg, size_t b, size_t j)
{
    return etl_usage_interval_process_ns(&pg->c->u, b, j); /* the first 10 processes are kept: STACKED are drawn */
}

/* x of the end of column b: the last column may be shorter than the interval, and is drawn so. */
static double col_end_x(const page *pg, double x0, double cw, size_t b)
{
    return x0 + b * cw + cw * (double)col_len(pg, b) / (double)pg->interval;
}

static void time_axis(FILE *f, double x0, double w, double y, const page *pg)
{
    for (int k = 0; k <= 4; k++) {
        char t[32];
        /* time maps onto columns: the window ends where the last (maybe shorter) column ends */
        double x = x0 + w / (double)pg->ncols * ((double)pg->win * k / 4) / (double)pg->interval;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"tick\"/>", x, y - 4, x, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\" text-anchor=\"%s\">", x, y + 12,
                k == 0 ? "start" : k == 4 ? "end" : "middle");
        html_text(f, secs(t, pg->v0 + (int64_t)((__int128)pg->win * k / 4)));
        fputs("</text>", f);
    }
    fputc('\n', f);
}

static void sec_utilisation(page *pg)
{
    FILE *f = pg->f;
    const etl_usage *u = &pg->c->u;
    char b1[32], b2[32], b3[32];
    char how[512];
    snprintf(how, sizeof how,
             "How busy the CPUs were over time. Each row of the heat strip is one CPU, each column one interval of "
             "%s (%zu columns); the darker the cell, the larger the share of the interval the CPU ran a thread other "
             "than idle. The last row is all CPUs together. Below, the CPU time of the %d busiest processes per "
             "interval, stacked, as a share of all CPUs. Hover a column for its numbers.",
             fmt_dur(b1, pg->interval), pg->ncols, STACKED);
    section_open(f, "utilisation", "2. CPU utilisation over time", how);
    enum { X0 = 70, W = 900 };
    double cw = (double)W / (double)pg->ncols;
    unsigned rh = pg->ncpu > 64 ? 4 : pg->ncpu > 32 ? 8 : 14;
    unsigned rows = pg->ncpu + 1;
    unsigned h = rows * rh + rh / 2 + 22;
    fprintf(f, "<figure class=\"chart\"><svg id=\"heat\" viewBox=\"0 0 %u %u\" role=\"img\" aria-labelledby=\"heat-t heat-d\" "
               "data-util=\"1\" data-x0=\"%d\" data-cw=\"%.6f\" data-rh=\"%u\" data-y0=\"0\" data-rows=\"%u\">"
               "<title id=\"heat-t\">Utilisation per CPU and interval (heat strip)</title><desc id=\"heat-d\">",
            X0 + W + 10, h, X0, cw, rh, pg->ncpu);
    for (unsigned c = 0; c < pg->ncpu && c < u->ncpus; c++)
        html_textf(f, "CPU %u busy %s of the window; ", c, pct_text(b1, u->cpus[c].busy_ns, pg->win));
    fputs("the table below the charts gives the same per CPU.</desc>\n", f);
    for (unsigned r = 0; r < rows; r++) {
        int total = r == pg->ncpu;
        double y = r * rh + (total ? rh / 2 : 0);
        if (rh >= 8 || total || r % 8 == 0) {
            fprintf(f, "<text x=\"%d\" y=\"%.1f\" class=\"lab\">", X0 - 6, y + rh - 3);
            if (total) fputs("all", f);
            else fprintf(f, "CPU %u", r);
            fputs("</text>", f);
        }
        /* Runs of one level drawn as one rectangle. */
        size_t b = 0;
        while (b < pg->ncols) {
            unsigned lv;
            size_t e = b;
            unsigned first = 0;
            for (; e < pg->ncols; e++) {
                int64_t busy = 0, len = col_len(pg, e);
                if (total) {
                    for (unsigned c = 0; c < pg->ncpu; c++) add_sat(&busy, cpu_busy(pg, e, c));
                    len = mul_sat(len, pg->ncpu);
                } else {
                    busy = cpu_busy(pg, e, r);
                }
                lv = heat(busy, len);
                if (e == b) first = lv;
                else if (lv != first) break;
            }
            fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%u\" class=\"h%u\"/>", X0 + b * cw, y,
                    col_end_x(pg, X0, cw, e - 1) - (X0 + b * cw), rh - (rh > 4), first);
            b = e;
        }
        fputc('\n', f);
    }
    time_axis(f, X0, W, h - 12, pg);
    fputs("</svg>\n<figcaption class=\"legend\">Busy share of the interval: ", f);
    for (unsigned lv = 0; lv < 10; lv++) {
        fprintf(f, "<span class=\"sw h%u\"></span>", lv);
        if (lv == 0) fputs("0 ", f);
        else if (lv == 9) fputs("&gt; 89% ", f);
        else fprintf(f, "%u&ndash;%u%% ", (lv - 1) * 100 / 9 + (lv > 1), lv * 100 / 9);
    }
    fputs("</figcaption></figure>\n", f);

    /* Stacked processes */
    size_t np = u->nprocesses < STACKED ? u->nprocesses : STACKED;
    enum { SH = 200 };
    fprintf(f, "<figure class=\"chart\"><svg id=\"stack\" viewBox=\"0 0 %d %d\" role=\"img\" aria-labelledby=\"stack-t "
               "stack-d\" data-util=\"1\" data-x0=\"%d\" data-cw=\"%.6f\"><title id=\"stack-t\">CPU time of the top "
               "processes per interval, stacked (share of all CPUs)</title><desc id=\"stack-d\">",
            X0 + W + 10, SH + 40, X0, cw);
    for (size_t j = 0; j < np; j++) {
        char lab[256];
        html_textf(f, "%s: %s over the window (%s of all CPUs); ", proc_label_pid(pg->run->model, u->processes[j].process, lab),
                   fmt_dur(b1, u->processes[j].cpu_ns), pct_text(b2, u->processes[j].cpu_ns, pg->win * pg->ncpu));
    }
    fputs("other processes: the rest.</desc>\n", f);
    for (int k = 0; k <= 4; k++) {
        double y = 10 + SH - SH * k / 4.0;
        fprintf(f, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" class=\"grid\"/><text x=\"%d\" y=\"%.1f\" "
                   "class=\"lab\">%d%%</text>",
                X0, y, X0 + W, y, X0 - 6, y + 4, k * 25);
    }
    int64_t *below = calloc(pg->ncols, sizeof *below);
    if (below) {
        for (size_t j = 0; j <= np; j++) {
            int other = j == np;
            char lab[256];
            fprintf(f, "<path class=\"c%zu\" d=\"", other ? (size_t)HTML_NCOLORS - 1 : j);
            /* Upper edge left to right, lower edge back: steps, one per interval. */
            int64_t *top = malloc(pg->ncols * sizeof *top);
            if (!top) break;
            for (size_t b = 0; b < pg->ncols; b++) {
                int64_t v;
                if (other) {
                    v = 0;
                    for (unsigned c = 0; c < pg->ncpu; c++) v += cpu_busy(pg, b, c);
                    for (size_t q = 0; q < np; q++) v -= proc_busy(pg, b, q);
                    if (v < 0) v = 0;
                } else {
                    v = proc_busy(pg, b, j);
                }
                top[b] = below[b] + v;
            }
            for (size_t b = 0; b < pg->ncols; b++) {
                int64_t cap = col_len(pg, b) * pg->ncpu;
                double y = 10 + SH - (cap > 0 ? (double)top[b] / (double)cap * SH : 0);
                if (b == 0) fprintf(f, "M%d %.1f", X0, y);
                else fprintf(f, "V%.1f", y);
                fprintf(f, "H%.2f", col_end_x(pg, X0, cw, b));
            }
            for (size_t b = pg->ncols; b-- > 0;) {
                int64_t cap = col_len(pg, b) * pg->ncpu;
                double y = 10 + SH - (cap > 0 ? (double)below[b] / (double)cap * SH : 0);
                fprintf(f, "V%.1fH%.2f", y, X0 + b * cw);
            }
            fputs("Z\"><title>", f);
            if (other) html_text(f, "other processes");
            else
                html_textf(f, "%s: %s (%s of all CPUs)", proc_label_pid(pg->run->model, u->processes[j].process, lab),
                           fmt_dur(b1, u->processes[j].cpu_ns), pct_text(b2, u->processes[j].cpu_ns, pg->win * pg->ncpu));
            fputs("</title></path>\n", f);
            memcpy(below, top, pg->ncols * sizeof *top);
            free(top);
        }
        free(below);
    }
    time_axis(f, X0, W, SH + 28, pg);
    fputs("</svg>\n<figcaption class=\"legend\">", f);
    for (size_t j = 0; j <= np; j++) {
        char lab[256];
        fprintf(f, "<span class=\"sw c%zu\"></span>", j == np ? (size_t)HTML_NCOLORS - 1 : j);
        html_text(f, j == np ? "other" : proc_label_pid(pg->run->model, u->processes[j].process, lab));
        fputs(" ", f);
    }
    fputs("</figcaption></figure>\n", f);

    /* Text alternative: per CPU */
    static const char *const ch[] = {"=CPU", "=Busy", "=Idle", "=Unknown", "=Busy %", "=Peak interval", "=Switches"};
    fputs("<details><summary>Per CPU (table)</summary>\n", f);
    table_head(f, "CPU time per CPU over the window, and its busiest interval", ch, 7, 1);
    for (unsigned c = 0; c < pg->ncpu && c < u->ncpus; c++) {
        const etl_usage_cpu *k = &u->cpus[c];
        int64_t peak = 0;
        for (size_t b = 0; b < pg->ncols; b++) {
            int64_t p = pct100(cpu_busy(pg, b, c), col_len(pg, b));
            if (p > peak) peak = p;
        }
        char cs[16], pk[32];
        snprintf(cs, sizeof cs, "%u", c);
        snprintf(pk, sizeof pk, "%s%%", fmt_fixed(b3, peak, 2));
        fputs("<tr>", f);
        tdn(f, c, cs);
        tdn(f, k->busy_ns, fmt_dur(b1, k->busy_ns));
        tdn(f, k->idle_ns, fmt_dur(b2, k->idle_ns));
        tdn(f, k->unknown_ns, fmt_dur(b3, k->unknown_ns));
        tdn(f, pct100(k->busy_ns, pg->win), pct_text(b1, k->busy_ns, pg->win));
        tdn(f, peak, pk);
        tdn(f, (int64_t)k->switches, u64s(b2, k->switches));
        fputs("</tr>\n", f);
    }
    table_end(f);
    fputs("</details>\n</section>\n", f);
}

static void sec_top(page *pg)
{
    FILE *f = pg->f;
    const etl_usage *u = &pg->c->u;
    const etl_sched *m = pg->run->model;
    char b1[32], b2[32], b3[32];
    section_open(f, "top", "3. Top processes and threads by CPU time",
                 "Where the CPU time went: each process's and thread's CPU Usage (Precise) summed over the window "
                 "(idle excluded); % is of all CPUs over the window. Click a column heading to sort.");
    int64_t all = pg->win * pg->ncpu;
    size_t nb = u->nprocesses < 15 ? u->nprocesses : 15;
    html_bar bars[15];
    char lab[15][256], txt[15][64];
    for (size_t i = 0; i < nb; i++) {
        proc_label_pid(m, u->processes[i].process, lab[i]);
        snprintf(txt[i], sizeof txt[i], "%s (%s)", fmt_dur(b1, u->processes[i].cpu_ns),
                 pct_text(b2, u->processes[i].cpu_ns, all));
        bars[i] = (html_bar){.label = lab[i], .value = u->processes[i].cpu_ns, .text = txt[i], .color = 0};
    }
    html_hbars(f, "top-proc-bars", "CPU time of the busiest processes", bars, nb);
    static const char *const ph[] = {"Process", "=PID", "=CPU time", "=% CPU", "=Threads", "=Switches"};
    table_head(f, "Processes by CPU time", ph, 6, 1);
    for (size_t i = 0; i < u->nprocesses && i < pg->top; i++) {
        const etl_usage_process *p = &u->processes[i];
        uint32_t pid;
        char name[256], ps[16];
        proc_label(m, p->process, name, &pid);
        snprintf(ps, sizeof ps, pid == UINT32_MAX ? "-" : "%u", pid);
        fputs("<tr>", f);
        td(f, name);
        tdn(f, pid == UINT32_MAX ? -1 : (int64_t)pid, ps);
        tdn(f, p->cpu_ns, fmt_dur(b1, p->cpu_ns));
        tdn(f, pct100(p->cpu_ns, all), pct_text(b2, p->cpu_ns, all));
        tdn(f, p->threads, u64s(b3, p->threads));
        tdn(f, (int64_t)p->switches, u64s(b1, p->switches));
        fputs("</tr>\n", f);
    }
    table_end(f);
    static const char *const th[] = {"=TID", "Process", "Thread name", "=CPU time", "=% CPU", "=Switches",
                                     "=Voluntary", "=Involuntary"};
    table_head(f, "Threads by CPU time", th, 8, 1);
    for (size_t i = 0; i < u->nthreads && i < pg->top; i++) {
        const etl_usage_thread *t = &u->threads[i];
        const etl_sched_thread *st = etl_sched_thread_at(m, t->thread);
        char label[256], tid[16];
        snprintf(tid, sizeof tid, "%u", st ? st->tid : 0);
        fputs("<tr>", f);
        tdn(f, st ? st->tid : 0, tid);
        td(f, rep_process_label(m, t->thread, label));
        td(f, rep_thread_name(m, t->thread));
        tdn(f, t->cpu_ns, fmt_dur(b1, t->cpu_ns));
        tdn(f, pct100(t->cpu_ns, all), pct_text(b2, t->cpu_ns, all));
        tdn(f, (int64_t)t->switches, u64s(b3, t->switches));
        tdn(f, (int64_t)t->voluntary, u64s(b1, t->voluntary));
        tdn(f, (int64_t)t->involuntary, u64s(b2, t->involuntary));
        fputs("</tr>\n", f);
    }
    table_end(f);
    fputs("</section>\n", f);
}

/* log10(x) for x >= 1, close enough to draw (no libm): whole decades, then the atanh series of the rest. */
static double log10_approx(double x)
{
    double l = 0;
    while (x >= 10) {
        x /= 10;
        l += 1;
    }
    double y = (x - 1) / (x + 1), y2 = y * y, t = y, ln = 0;
    for (int k = 1; k < 40; k += 2) {
        ln += t / k;
        t *= y2;
    }
    return l + 2 * ln / 2.302585092994046;
}

static const char *bin_label(char out[48], unsigned b)
{
    char x[32], y[32];
    if (b == 0) return strcpy(out, "< 1 us");
    if (b == HIST_BINS - 1) {
        snprintf(out, 48, ">= %s", fmt_dur(x, hist_lo[b]));
        return out;
    }
    snprintf(out, 48, "%s to %s", fmt_dur(x, hist_lo[b]), fmt_dur(y, hist_lo[b + 1]));
    return out;
}

static void intervals_table(page *pg, const char *caption, const etl_usage_interval *v, size_t n, int waits)
{
    FILE *f = pg->f;
    const etl_sched *m = pg->run->model;
    static const char *const hw[] = {"=Duration", "=Start", "=CPU", "=TID", "Process", "Thread name", "Reason",
                                     "Readied by"};
    static const char *const hr[] = {"=Duration", "=Start", "=CPU", "=TID", "Process", "Thread name", "Readied by"};
    if (!n) {
        note(f, "none", waits ? "No wait with a known readying in the window." : "No ready delay in the window.");
        return;
    }
    table_head(f, caption, waits ? hw : hr, waits ? 8 : 7, 1);
    for (size_t i = 0; i < n; i++) {
        const etl_sched_thread *st = etl_sched_thread_at(m, v[i].thread);
        char d[32], s[32], c[16], tid[16], label[256], rd[320], rc[16];
        snprintf(c, sizeof c, "%u", v[i].cpu);
        snprintf(tid, sizeof tid, "%u", st ? st->tid : v[i].tid);
        fputs("<tr>", f);
        tdn(f, v[i].dur_ns, fmt_dur(d, v[i].dur_ns));
        tdn(f, v[i].start_ns, secs(s, v[i].start_ns));
        tdn(f, v[i].cpu, c);
        tdn(f, st ? st->tid : v[i].tid, tid);
        td(f, rep_process_label(m, v[i].thread, label));
        td(f, rep_thread_name(m, v[i].thread));
        if (waits) td(f, reason_text(rc, v[i].reason));
        td(f, waits || v[i].has_readier ? readier_text(m, &v[i], rd) : "(preempted: ready from its switch-out)");
        fputs("</tr>\n", f);
    }
    table_end(f);
}

static void sec_ready(page *pg)
{
    FILE *f = pg->f;
    const etl_usage *u = &pg->c->u;
    const etl_sched *m = pg->run->model;
    char b[8][32];
    section_open(f, "ready", "4. Ready latency",
                 "How long threads waited for a CPU once they could run: Ready = switch-in time minus Ready Time "
                 "(readied, or preempted), over every switch-in whose Ready Time is known. The histogram's bins "
                 "grow by 1-2-5 steps and its bar heights are on a log scale, so rare long delays stay visible; "
                 "percentiles are exact (nearest rank).");
    const etl_latency *l = &u->ready_all;
    fputs("<p class=\"summary\">", f);
    html_textf(f, "%llu switch-ins: mean %s, p50 %s, p90 %s, p99 %s, p99.9 %s, max %s.", (unsigned long long)l->count,
               fmt_dur(b[0], l->count ? l->sum_ns / (int64_t)l->count : 0), fmt_dur(b[1], l->p50_ns),
               fmt_dur(b[2], l->p90_ns), fmt_dur(b[3], l->p99_ns), fmt_dur(b[4], l->p999_ns), fmt_dur(b[5], l->max_ns));
    l = &u->woken_all;
    html_textf(f, " Of which readied by a ReadyThread event: %llu, p50 %s, p99 %s, max %s.", (unsigned long long)l->count,
               fmt_dur(b[1], l->p50_ns), fmt_dur(b[3], l->p99_ns), fmt_dur(b[4], l->max_ns));
    fputs("</p>\n", f);
    /* Histogram: vertical bars, log-scale heights. */
    enum { X0 = 50, W = 880, H = 180 };
    uint64_t max = 0;
    for (unsigned i = 0; i < HIST_BINS; i++)
        if (pg->c->hist[i] > max) max = pg->c->hist[i];
    double lmax = max ? log10_approx((double)max + 1) : 1;
    double bw = (double)W / HIST_BINS;
    fprintf(f, "<figure class=\"chart\"><svg id=\"ready-hist\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-labelledby=\"ready-hist-t ready-hist-d\"><title id=\"ready-hist-t\">Ready latency histogram "
               "(switch-ins per latency bin, log scale)</title><desc id=\"ready-hist-d\">",
            X0 + W + 10, H + 62);
    int any = 0;
    for (unsigned i = 0; i < HIST_BINS; i++) {
        if (!pg->c->hist[i]) continue;
        char bl[48];
        html_textf(f, "%s%s: %llu", any++ ? "; " : "", bin_label(bl, i), (unsigned long long)pg->c->hist[i]);
    }
    if (!any) fputs("No switch-in with a known Ready Time.", f);
    fputs("</desc>\n", f);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"tick\"/>", X0, H + 22, X0 + W, H + 22);
    for (unsigned i = 0; i < HIST_BINS; i++) {
        char bl[48];
        double hgt = pg->c->hist[i] ? log10_approx((double)pg->c->hist[i] + 1) / lmax * H : 0;
        if (pg->c->hist[i] && hgt < 1) hgt = 1;
        fprintf(f, "<g><title>");
        html_textf(f, "%s: %llu switch-ins", bin_label(bl, i), (unsigned long long)pg->c->hist[i]);
        fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"c0\"/>", X0 + i * bw + 1,
                H + 22 - hgt, bw - 2, hgt);
        if (pg->c->hist[i])
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"val\" text-anchor=\"middle\">%llu</text>", X0 + (i + 0.5) * bw,
                    H + 18 - hgt, (unsigned long long)pg->c->hist[i]);
        fputs("</g>", f);
        if (i % 3 == 1 || i == 0) {
            char x[32];
            fprintf(f, "<text x=\"%.1f\" y=\"%d\" class=\"ax\" text-anchor=\"middle\">", X0 + i * bw, H + 38);
            html_text(f, i == 0 ? "0" : fmt_dur(x, hist_lo[i]));
            fputs("</text>", f);
        }
    }
    fputs("\n</svg></figure>\n", f);
    /* Per top process */
    static const char *const ph[] = {"Process", "=PID", "=Switch-ins", "=Mean", "=p50", "=p90", "=p99", "=Max"};
    table_head(f, "Ready latency of the processes with the most CPU time", ph, 8, 1);
    for (size_t i = 0; i < u->nprocesses && i < 10; i++) {
        const etl_usage_process *p = &u->processes[i];
        const etl_latency *x = &p->ready;
        uint32_t pid;
        char name[256], ps[16];
        proc_label(m, p->process, name, &pid);
        snprintf(ps, sizeof ps, pid == UINT32_MAX ? "-" : "%u", pid);
        int64_t mean = x->count ? x->sum_ns / (int64_t)x->count : 0;
        fputs("<tr>", f);
        td(f, name);
        tdn(f, pid == UINT32_MAX ? -1 : (int64_t)pid, ps);
        tdn(f, (int64_t)x->count, u64s(b[0], x->count));
        tdn(f, mean, fmt_dur(b[1], mean));
        tdn(f, x->p50_ns, fmt_dur(b[2], x->p50_ns));
        tdn(f, x->p90_ns, fmt_dur(b[3], x->p90_ns));
        tdn(f, x->p99_ns, fmt_dur(b[4], x->p99_ns));
        tdn(f, x->max_ns, fmt_dur(b[5], x->max_ns));
        fputs("</tr>\n", f);
    }
    table_end(f);
    fputs("<h3>Longest ready delays</h3>\n", f);
    intervals_table(pg, "The longest single ready delays (a preempted thread is ready from its switch-out)",
                    u->longest_ready, u->n_longest_ready, 0);
    fputs("</section>\n", f);
}

static int by_wait_desc(const void *a, const void *b)
{
    const etl_usage_reason *x = a, *y = b;
    if (x->wait_ns != y->wait_ns) return x->wait_ns > y->wait_ns ? -1 : 1;
    return x->code < y->code ? -1 : x->code > y->code;
}

static void sec_waits(page *pg)
{
    FILE *f = pg->f;
    const etl_usage *u = &pg->c->u;
    char b1[32], b2[32], rc[16];
    section_open(f, "waits", "5. Waits by reason",
                 "Why threads were off the CPU without being ready: Waits = Ready Time minus the previous switch-out, "
                 "for switch-outs in a waiting state, summed by the wait reason of that switch-out. The longest single "
                 "waits follow, each with the thread that readied the waiter (the thread running on the readying "
                 "CPU, or the DPC).");
    etl_usage_reason r[64];
    size_t n = 0;
    for (unsigned c = 0; c < 64; c++)
        if (u->reasons[c].count) r[n] = u->reasons[c], r[n++].code = (uint8_t)c;
    qsort(r, n, sizeof *r, by_wait_desc);
    html_bar bars[64];
    char txt[64][96];
    for (size_t i = 0; i < n; i++) {
        snprintf(txt[i], sizeof txt[i], "%s in %llu waits (max %s)", fmt_dur(b1, r[i].wait_ns),
                 (unsigned long long)r[i].count, fmt_dur(b2, r[i].max_ns));
        const char *rn = etl_wait_reason_name(r[i].code);
        bars[i] = (html_bar){.label = rn ? rn : "?", .value = r[i].wait_ns, .text = txt[i], .color = 2};
        if (!rn) bars[i].label = reason_text(rc, r[i].code);
    }
    if (n) html_hbars(f, "wait-bars", "Total waiting time by wait reason", bars, n);
    else note(f, "none", "No wait in the window (or no ReadyThread events to end them).");
    fputs("<h3>Longest waits</h3>\n", f);
    intervals_table(pg, "The longest single waits and who readied the thread", u->longest_waits, u->n_longest_waits, 1);
    fputs("</section>\n", f);
}

static void sec_locks_pmc(page *pg)
{
    FILE *f = pg->f;
    rctx *c = pg->c;
    char b[8][32];
    section_open(f, "locks-pmc", "6. Spin locks and PMC counters",
                 "Spin locks from the sampled SpinLock events (PERF_SPINLOCK): each event stands for 1, M or A "
                 "acquisitions by the kernel's sampling rule, so totals are estimates (bounds where they exist); "
                 "locks are ordered by estimated cycles spent waiting. PMC counters read at each context switch give "
                 "per-thread instructions per cycle (IPC) and cache misses per 1000 instructions (MPKI).");
    fputs("<h3>Spin locks</h3>\n", f);
    const etl_spinlocks *s = &c->s;
    if (!c->have_s || !s->events) {
        note(f, "none", "This trace has no spin lock events (PERF_SPINLOCK was not enabled).");
    } else {
        fputs("<p class=\"summary\">", f);
        html_textf(f, "%llu SpinLock events; estimated acquisitions %llu (between %llu and ", (unsigned long long)s->events,
                   (unsigned long long)s->acquisitions.est, (unsigned long long)s->acquisitions.lo);
        if (s->acquisitions.hi_known) html_textf(f, "%llu), ", (unsigned long long)s->acquisitions.hi);
        else html_text(f, "no upper bound), ");
        html_textf(f, "contended %llu. Sampling: spin threshold %u, 1 in %u uncontended, 1 in %u contended, hold threshold "
                      "%u cycles (as `etlkit spinlocks` assumes them).",
                   (unsigned long long)s->contended.est, s->o.params.spin_lock_spin_threshold,
                   s->o.params.spin_lock_acquire_sample_rate, s->o.params.spin_lock_contention_sample_rate,
                   s->o.params.spin_lock_hold_threshold);
        fputs("</p>\n", f);
        size_t nl = s->nlocks < 10 ? s->nlocks : 10;
        html_bar bars[10];
        char lab[10][32], txt[10][64];
        for (size_t i = 0; i < nl; i++) {
            snprintf(lab[i], sizeof lab[i], "0x%016llx", (unsigned long long)s->locks[i].lock);
            snprintf(txt[i], sizeof txt[i], "%llu cycles", (unsigned long long)s->locks[i].a.w_wait);
            bars[i] = (html_bar){.label = lab[i], .value = (int64_t)(s->locks[i].a.w_wait > INT64_MAX ? INT64_MAX : s->locks[i].a.w_wait),
                                 .text = txt[i], .color = 5};
        }
        html_hbars(f, "lock-bars", "Estimated cycles spent waiting, per spin lock (weighted by the sampling)", bars, nl);
        static const char *const lh[] = {"Lock", "=Events", "=Est. acquisitions", "=Est. contended", "=Collision %",
                                         "=Wait mean (cycles)", "=Wait max", "=Hold p99", "=% CPU acquiring"};
        table_head(f, "Spin locks by estimated waiting", lh, 9, 1);
        for (size_t i = 0; i < s->nlocks && i < pg->top; i++) {
            const etl_spin_group *g = &s->locks[i];
            char addr[32];
            snprintf(addr, sizeof addr, "0x%016llx", (unsigned long long)g->lock);
            fputs("<tr>", f);
            td(f, addr);
            tdn(f, (int64_t)g->a.events, u64s(b[0], g->a.events));
            tdn(f, (int64_t)g->a.est_acq, u64s(b[1], g->a.est_acq));
            tdn(f, (int64_t)g->a.est_contended, u64s(b[2], g->a.est_contended));
            snprintf(b[3], 32, "%s%%", fmt_fixed(b[7], g->collision_pct, 4));
            tdn(f, g->collision_pct, b[3]);
            tdn(f, (int64_t)g->mean_wait, u64s(b[4], g->mean_wait));
            tdn(f, (int64_t)g->a.max_wait, u64s(b[5], g->a.max_wait));
            tdn(f, (int64_t)g->hold_p99, u64s(b[6], g->hold_p99));
            if (g->acq_pct >= 0) snprintf(b[3], 32, "%s%%", fmt_fixed(b[7], g->acq_pct, 4));
            else strcpy(b[3], "-");
            tdn(f, g->acq_pct, b[3]);
            fputs("</tr>\n", f);
        }
        table_end(f);
    }
    fputs("<h3>PMC counters per thread</h3>\n", f);
    const etl_pmc *p = &c->p;
    if (!c->have_p || !p->switches_pmc) {
        note(f, "none", "This trace has no PMC counters on its context switches (none configured, or compact batches, "
                        "which carry none).");
    } else {
        etl_pmc_ratios r;
        etl_pmc_ratios_of(p, &p->total, &r);
        fputs("<p class=\"summary\">", f);
        html_textf(f, "%llu switch-ins with %u counters (named by position, as `etlkit synth --pmc` writes them: cycles, "
                      "instructions, LLC misses, branch misses). All threads: IPC %s, LLC MPKI %s.",
                   (unsigned long long)p->switches_pmc, p->counters,
                   r.ipc_x1000 >= 0 ? fmt_fixed(b[0], r.ipc_x1000, 3) : "-",
                   r.llc_mpki_x1000 >= 0 ? fmt_fixed(b[1], r.llc_mpki_x1000, 3) : "-");
        fputs("</p>\n", f);
        static const char *const ph[] = {"=TID", "Process", "Thread name", "=CPU time", "=Cycles", "=Instructions",
                                         "=IPC", "=LLC MPKI", "=Branch MPKI"};
        table_head(f, "Threads by cycles", ph, 9, 1);
        int cyc = etl_pmc_slot(p, ETL_PMC_CYCLES), ins = etl_pmc_slot(p, ETL_PMC_INSTRUCTIONS);
        for (size_t i = 0; i < p->nthreads && i < pg->top; i++) {
            const etl_pmc_thread *t = &p->threads[i];
            const etl_sched_thread *st = etl_sched_thread_at(pg->run->model, t->thread);
            char label[256], tid[16];
            etl_pmc_ratios x;
            etl_pmc_ratios_of(p, &t->s, &x);
            snprintf(tid, sizeof tid, "%u", st ? st->tid : 0);
            uint64_t cv = cyc >= 0 ? t->s.delta[cyc] : 0, iv = ins >= 0 ? t->s.delta[ins] : 0;
            fputs("<tr>", f);
            tdn(f, st ? st->tid : 0, tid);
            td(f, t->thread == ETL_SCHED_IDLE ? "Idle (0)" : rep_process_label(pg->run->model, t->thread, label));
            td(f, t->thread == ETL_SCHED_IDLE ? "Idle" : rep_thread_name(pg->run->model, t->thread));
            tdn(f, t->s.cpu_ns, fmt_dur(b[0], t->s.cpu_ns));
            tdn(f, (int64_t)(cv > INT64_MAX ? INT64_MAX : cv), cyc >= 0 ? u64s(b[1], cv) : "-");
            tdn(f, (int64_t)(iv > INT64_MAX ? INT64_MAX : iv), ins >= 0 ? u64s(b[2], iv) : "-");
            tdn(f, x.ipc_x1000, x.ipc_x1000 >= 0 ? fmt_fixed(b[3], x.ipc_x1000, 3) : "-");
            tdn(f, x.llc_mpki_x1000, x.llc_mpki_x1000 >= 0 ? fmt_fixed(b[4], x.llc_mpki_x1000, 3) : "-");
            tdn(f, x.branch_mpki_x1000, x.branch_mpki_x1000 >= 0 ? fmt_fixed(b[5], x.branch_mpki_x1000, 3) : "-");
            fputs("</tr>\n", f);
        }
        table_end(f);
    }
    fputs("</section>\n", f);
}

static const char *waker_kind_name(unsigned k)
{
    return k == ETL_WAKER_DPC ? "DPC" : k == ETL_WAKER_IDLE ? "Idle" : k == ETL_WAKER_THREAD ? "thread" : "Unknown";
}

static const char *waker_proc(const etl_sched *m, const etl_wakeup_waker *x, char out[256])
{
    if (x->kind != ETL_WAKER_THREAD) return strcpy(out, x->kind == ETL_WAKER_IDLE ? "Idle (0)" : waker_kind_name(x->kind));
    return proc_label_pid(m, x->process, out);
}

static void sec_wakeups_chain(page *pg)
{
    FILE *f = pg->f;
    const etl_wakeups *w = &pg->c->w;
    char b1[32], b2[32], b3[32];
    section_open(f, "wakeups-chain", "7. Idle wake-ups and the wait chain of the longest wait",
                 "Who takes CPUs out of idle: every switch-in from the idle thread, attributed to whoever readied the "
                 "new thread (a thread, a DPC, or unknown); frequent wake-ups cost power. Then the wait chain of the "
                 "longest single wait: what the waiting thread did, and what its readier did meanwhile, down to the "
                 "leaves; the critical path charges every nanosecond to the deepest segment that explains it.");
    fputs("<h3>Idle wake-ups</h3>\n", f);
    if (!pg->c->have_w || !w->total) {
        note(f, "none", "No switch-in from the idle thread in the window.");
    } else {
        fputs("<p class=\"summary\">", f);
        html_textf(f, "%llu wake-ups, %s per second: %llu by threads, %llu by DPCs, %llu by the idle thread, %llu unknown.",
                   (unsigned long long)w->total, fmt_fixed(b1, rate(w->total, pg->win), 3),
                   (unsigned long long)w->by_kind[ETL_WAKER_THREAD], (unsigned long long)w->by_kind[ETL_WAKER_DPC],
                   (unsigned long long)w->by_kind[ETL_WAKER_IDLE], (unsigned long long)w->by_kind[ETL_WAKER_UNKNOWN]);
        fputs("</p>\n", f);
        size_t nb = w->nprocesses < 12 ? w->nprocesses : 12;
        html_bar bars[12];
        char lab[12][256], txt[12][64];
        for (size_t i = 0; i < nb; i++) {
            waker_proc(pg->run->model, &w->processes[i], lab[i]);
            snprintf(txt[i], sizeof txt[i], "%llu (%s/s)", (unsigned long long)w->processes[i].count,
                     fmt_fixed(b2, rate(w->processes[i].count, pg->win), 3));
            bars[i] = (html_bar){.label = lab[i], .value = (int64_t)w->processes[i].count, .text = txt[i], .color = 4};
        }
        html_hbars(f, "wake-bars", "Idle wake-ups by the readier's process", bars, nb);
        fputs("<p class=\"summary\">", f);
        html_text(f, "C-states left (PreviousCState):");
        int any = 0;
        for (unsigned cs = 0; cs < 256; cs++)
            if (w->cstate[cs]) html_textf(f, "%s C%u %llu", any++ ? "," : "", cs, (unsigned long long)w->cstate[cs]);
        if (w->cstate_unknown)
            html_textf(f, "%s not recorded %llu (compact records and CSwitch v1 carry none)", any ? "," : "",
                       (unsigned long long)w->cstate_unknown);
        fputs(".</p>\n", f);
    }
    fputs("<h3>Wait chain of the longest wait</h3>\n", f);
    const etl_chain *c = pg->chain;
    if (!c || c->status != ETL_CHAIN_OK || !c->nnodes) {
        note(f, "none", pg->chain ? "The wait chain could not be built for the longest wait."
                                  : "No wait with a known end in the window: no chain to follow.");
    } else {
        const etl_sched *m = pg->chain_model;
        const etl_chain_node *root = &c->nodes[0];
        char label[256];
        fputs("<p class=\"summary\">", f);
        char mn[32];
        html_textf(f, "Thread %u of %s (%s) waited from %s to %s (%s): %zu intervals of threads on the chain, followed "
                      "%u levels deep into waits of at least %s (etlkit waitchain --thread %u --from %lldns --at %lldns "
                      "goes deeper).",
                   root->tid, rep_process_label(m, root->thread, label), rep_thread_name(m, root->thread),
                   secs(b1, root->start), secs(b2, root->end), fmt_dur(b3, root->end - root->start), c->nnodes,
                   c->o.depth, fmt_dur(mn, c->o.min_ns), root->tid, (long long)root->start, (long long)root->end);
        fputs("</p>\n", f);
        /* The root's segments as a timeline. */
        enum { X0 = 10, W = 900 };
        int64_t len = root->end - root->start;
        fputs("<figure class=\"chart\"><svg id=\"chain-line\" viewBox=\"0 0 920 46\" role=\"img\" "
              "aria-labelledby=\"chain-line-t chain-line-d\"><title id=\"chain-line-t\">The waiting thread's time, "
              "by state</title><desc id=\"chain-line-d\">",
              f);
        for (uint32_t i = root->first; i < root->first + root->count; i++)
            html_textf(f, "%s %s; ", etl_chain_state_name(c->segs[i].state), fmt_dur(b1, c->segs[i].end - c->segs[i].start));
        fputs("</desc>\n", f);
        for (uint32_t i = root->first; i < root->first + root->count; i++) {
            const etl_chain_seg *sg = &c->segs[i];
            double x = X0 + (len > 0 ? (double)(sg->start - root->start) / (double)len * W : 0);
            double wd = len > 0 ? (double)(sg->end - sg->start) / (double)len * W : 0;
            unsigned col = sg->state == ETL_CHAIN_RUNNING ? 2 : sg->state == ETL_CHAIN_READY ? 1
                         : sg->state == ETL_CHAIN_WAITING ? 0 : 7;
            char rs[16];
            fprintf(f, "<rect x=\"%.2f\" y=\"4\" width=\"%.2f\" height=\"22\" class=\"c%u\"><title>", x, wd < 0.5 ? 0.5 : wd,
                    col);
            html_textf(f, "%s%s%s %s from %s", etl_chain_state_name(sg->state), sg->has_reason ? " " : "",
                       sg->has_reason ? reason_text(rs, sg->reason) : "", fmt_dur(b1, sg->end - sg->start),
                       secs(b2, sg->start));
            fputs("</title></rect>", f);
        }
        fputs("<text x=\"10\" y=\"42\" class=\"ax\">", f);
        html_text(f, secs(b1, root->start));
        fputs("</text><text x=\"910\" y=\"42\" class=\"ax\" text-anchor=\"end\">", f);
        html_text(f, secs(b1, root->end));
        fputs("</text></svg><figcaption class=\"legend\"><span class=\"sw c2\"></span>running <span class=\"sw c1\">"
              "</span>ready <span class=\"sw c0\"></span>waiting <span class=\"sw c7\"></span>off-CPU or unknown"
              "</figcaption></figure>\n",
              f);
        static const char *const ph[] = {"=TID", "Process", "Thread name", "State", "Reason", "=Depth", "=Time",
                                         "=Share"};
        table_head(f, "Critical path: where the interval's time went", ph, 8, 1);
        for (size_t i = 0; i < c->npath && i < pg->top; i++) {
            const etl_chain_path *p = &c->path[i];
            const etl_sched_thread *st = etl_sched_thread_at(m, p->thread);
            char tid[16], rs[16], dp[16];
            snprintf(tid, sizeof tid, "%u", st ? st->tid : 0);
            snprintf(dp, sizeof dp, "%u", p->depth);
            fputs("<tr>", f);
            tdn(f, st ? st->tid : 0, tid);
            td(f, rep_process_label(m, p->thread, label));
            td(f, rep_thread_name(m, p->thread));
            td(f, etl_chain_state_name(p->state));
            td(f, p->has_reason ? reason_text(rs, p->reason) : "");
            tdn(f, p->depth, dp);
            tdn(f, p->ns, fmt_dur(b1, p->ns));
            tdn(f, pct100(p->ns, len), pct_text(b2, p->ns, len));
            fputs("</tr>\n", f);
        }
        table_end(f);
    }
    fputs("</section>\n", f);
}

/* ---- the JSON block ------------------------------------------------------------------------------ */

static void json_latency(jw *w, const etl_latency *l)
{
    jw_u64(w, "count", l->count);
    jw_i64(w, "sum_ns", l->sum_ns);
    jw_i64(w, "mean_ns", l->count ? l->sum_ns / (int64_t)l->count : 0);
    jw_i64(w, "p50_ns", l->p50_ns);
    jw_i64(w, "p90_ns", l->p90_ns);
    jw_i64(w, "p99_ns", l->p99_ns);
    jw_i64(w, "p999_ns", l->p999_ns);
    jw_i64(w, "max_ns", l->max_ns);
}

static void json_pid(jw *w, uint32_t pid)
{
    if (pid != UINT32_MAX) jw_u64(w, "pid", pid);
    else jw_null(w, "pid");
}

static void json_intervals(jw *w, const page *pg, const char *key, const etl_usage_interval *v, size_t n, int waits)
{
    const etl_sched *m = pg->run->model;
    jw_arr(w, key);
    for (size_t i = 0; i < n; i++) {
        const etl_sched_thread *st = etl_sched_thread_at(m, v[i].thread);
        char label[256], rd[320];
        jw_obj(w, NULL);
        jw_u64(w, "tid", st ? st->tid : v[i].tid);
        jw_str(w, "process_label", rep_process_label(m, v[i].thread, label));
        jw_str(w, "name", rep_thread_name(m, v[i].thread));
        jw_u64(w, "cpu", v[i].cpu);
        jw_i64(w, "start_ns", v[i].start_ns);
        jw_i64(w, "duration_ns", v[i].dur_ns);
        if (waits) jw_u64(w, "reason_code", v[i].reason);
        jw_str(w, "readier", readier_text(m, &v[i], rd));
        if (v[i].has_readier && !(v[i].ready_flags & ETL_READY_EXECUTING_DPC) && v[i].readier_thread != ETL_SCHED_NONE) {
            const etl_sched_thread *rt = etl_sched_thread_at(m, v[i].readier_thread);
            jw_u64(w, "readier_tid", rt ? rt->tid : 0);
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

static void write_json(jw *w, const page *pg)
{
    const rctx *c = pg->c;
    const etl_usage *u = &c->u;
    const etl_sched *m = pg->run->model;
    const etl_logfile_header *h = etl_reader_header(pg->run->in.reader);
    const etl_clock *clk = etl_reader_clock(pg->run->in.reader);
    char buf[512];
    jw_obj(w, NULL);
    jw_u64(w, "etlkit_report", 1);
    jw_str(w, "version", ETLKIT_VERSION_STRING);
    jw_str(w, "title", pg->o->title ? pg->o->title : "");
    jw_str(w, "file", pg->run->in.path);
    jw_obj(w, "window");
    jw_i64(w, "start_ns", pg->v0);
    jw_i64(w, "end_ns", pg->v1);
    jw_obj_end(w);
    /* 1. the trace (keys as `etlkit info --json`) */
    jw_obj(w, "trace");
    jw_u64(w, "file_size", etl_reader_file_size(pg->run->in.reader));
    jw_u64(w, "os_major", h->os_major);
    jw_u64(w, "os_minor", h->os_minor);
    jw_u64(w, "os_build", h->provider_version);
    jw_u64(w, "num_cpus", h->num_processors);
    jw_u64(w, "cpu_mhz", h->cpu_speed_mhz);
    jw_u64(w, "pointer_size", h->pointer_size);
    jw_u64(w, "clock_type", h->clock_type);
    jw_str(w, "clock_name", clock_type_name(h->clock_type));
    jw_u64(w, "ticks_per_second", clk->ticks_per_sec);
    etl_filetime_format(h->start_time, buf);
    jw_str(w, "start_time_utc", buf);
    jw_u64(w, "events_lost", h->events_lost);
    jw_u64(w, "buffers_lost", h->buffers_lost);
    jw_u64(w, "records", pg->fa->records);
    jw_arr(w, "kernel_flags");
    if (pg->fa->group_mask_events) {
        const char *names[256];
        size_t n = etl_groupmask_names(&pg->fa->flags, names, 256);
        for (size_t i = 0; i < n && i < 256; i++) jw_str(w, NULL, names[i]);
    }
    jw_arr_end(w);
    jw_arr(w, "by_hook");
    for (unsigned k = 0; k < 65536; k++) {
        if (!pg->fa->by_hook[k]) continue;
        jw_obj(w, NULL);
        jw_u64(w, "hook", k);
        jw_u64(w, "count", pg->fa->by_hook[k]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    const etl_sched_source_stats *ss = etl_sched_source_stats_get(pg->run->src);
    jw_obj(w, "scheduler_events");
    jw_u64(w, "switches", ss->switches);
    jw_u64(w, "full_switches", ss->full_switches);
    jw_u64(w, "compact_switches", ss->compact_switches);
    jw_u64(w, "ready_thread_events", c->ev[ETL_SCHED_READY]);
    jw_u64(w, "spinlock_events", c->ev[ETL_SCHED_SPINLOCK]);
    jw_u64(w, "thread_events", c->ev[ETL_SCHED_THREAD]);
    jw_u64(w, "set_name_events", c->ev[ETL_SCHED_SET_NAME]);
    jw_u64(w, "process_events", c->ev[ETL_SCHED_PROCESS]);
    jw_obj_end(w);
    const etl_stats *st = &pg->fa->st;
    jw_obj(w, "recovery");
    jw_u64(w, "bad_buffers", st->bad_buffers);
    jw_u64(w, "bad_records", st->bad_records);
    jw_u64(w, "skipped_bytes", st->skipped_bytes);
    jw_u64(w, "truncated_buffers", st->truncated_buffers);
    jw_u64(w, "decompress_errors", st->decompress_errors);
    jw_u64(w, "unsupported_buffers", st->unsupported_buffers);
    jw_obj_end(w);
    jw_bool(w, "damaged", etl_stats_damaged(st) || etl_stats_damaged(&pg->run->damage));
    jw_obj_end(w);
    jw_bool(w, "has_switches", pg->switches);
    rep_json_anomalies(pg->run, w);
    if (!pg->switches) {
        jw_obj_end(w);
        return;
    }
    /* 2, 3: cpu (keys as `etlkit cpu --json`) */
    int64_t busy = 0, idle = 0, unknown = 0;
    jw_obj(w, "cpu");
    jw_u64(w, "num_cpus", u->ncpus);
    jw_arr(w, "cpus");
    for (size_t k = 0; k < u->ncpus; k++) {
        add_sat(&busy, u->cpus[k].busy_ns);
        add_sat(&idle, u->cpus[k].idle_ns);
        add_sat(&unknown, u->cpus[k].unknown_ns);
        jw_obj(w, NULL);
        jw_u64(w, "cpu", k);
        jw_i64(w, "busy_ns", u->cpus[k].busy_ns);
        jw_i64(w, "idle_ns", u->cpus[k].idle_ns);
        jw_i64(w, "unknown_ns", u->cpus[k].unknown_ns);
        jw_u64(w, "switches", u->cpus[k].switches);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_i64(w, "busy_ns", busy);
    jw_i64(w, "idle_ns", idle);
    jw_i64(w, "unknown_ns", unknown);
    jw_arr(w, "processes");
    for (size_t i = 0; i < u->nprocesses && i < pg->top; i++) {
        const etl_usage_process *p = &u->processes[i];
        uint32_t pid;
        char name[256];
        proc_label(m, p->process, name, &pid);
        jw_obj(w, NULL);
        json_pid(w, pid);
        jw_str(w, "name", name);
        jw_i64(w, "cpu_ns", p->cpu_ns);
        jw_u64(w, "switches", p->switches);
        jw_u64(w, "threads", p->threads);
        jw_obj(w, "ready");
        json_latency(w, &p->ready);
        jw_obj_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "threads");
    for (size_t i = 0; i < u->nthreads && i < pg->top; i++) {
        const etl_usage_thread *t = &u->threads[i];
        const etl_sched_thread *sth = etl_sched_thread_at(m, t->thread);
        char label[256];
        jw_obj(w, NULL);
        jw_u64(w, "tid", sth->tid);
        json_pid(w, sth->pid);
        jw_str(w, "process_label", rep_process_label(m, t->thread, label));
        jw_str(w, "name", rep_thread_name(m, t->thread));
        jw_i64(w, "cpu_ns", t->cpu_ns);
        jw_u64(w, "switches", t->switches);
        jw_u64(w, "voluntary", t->voluntary);
        jw_u64(w, "involuntary", t->involuntary);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
    /* 2: per interval (what `etlkit cpu --json --interval` gives, by columns) */
    jw_obj(w, "utilisation");
    jw_i64(w, "start_ns", pg->v0);
    jw_i64(w, "interval_ns", pg->interval);
    jw_u64(w, "intervals", pg->ncols);
    jw_arr(w, "cpus");
    for (size_t k = 0; k < pg->ncpu; k++) {
        jw_arr(w, NULL);
        for (size_t b = 0; b < pg->ncols; b++) jw_i64(w, NULL, cpu_busy(pg, b, k));
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "processes");
    size_t np = u->nprocesses < STACKED ? u->nprocesses : STACKED;
    for (size_t j = 0; j < np; j++) {
        uint32_t pid;
        char name[256];
        proc_label(m, u->processes[j].process, name, &pid);
        jw_obj(w, NULL);
        json_pid(w, pid);
        jw_str(w, "name", name);
        jw_arr(w, "busy_ns");
        for (size_t b = 0; b < pg->ncols; b++) jw_i64(w, NULL, proc_busy(pg, b, j));
        jw_arr_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_u64(w, "cells_dropped", u->interval_cells_dropped);
    jw_obj_end(w);
    /* 4, 5: waits (keys as `etlkit waits --json`) */
    jw_obj(w, "ready");
    jw_obj(w, "all");
    json_latency(w, &u->ready_all);
    jw_obj_end(w);
    jw_obj(w, "woken");
    json_latency(w, &u->woken_all);
    jw_obj_end(w);
    jw_arr(w, "histogram");
    for (unsigned i = 0; i < HIST_BINS; i++) {
        jw_obj(w, NULL);
        jw_i64(w, "lo_ns", hist_lo[i]);
        if (i + 1 < HIST_BINS) jw_i64(w, "hi_ns", hist_lo[i + 1]);
        else jw_null(w, "hi_ns");
        jw_u64(w, "count", c->hist[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    json_intervals(w, pg, "longest_ready", u->longest_ready, u->n_longest_ready, 0);
    jw_obj_end(w);
    jw_obj(w, "waits");
    jw_arr(w, "by_reason");
    for (unsigned k = 0; k < 64; k++) {
        const etl_usage_reason *r = &u->reasons[k];
        if (!r->count) continue;
        const char *rn = etl_wait_reason_name(k);
        jw_obj(w, NULL);
        jw_u64(w, "code", k);
        if (rn) jw_str(w, "reason", rn);
        else jw_null(w, "reason");
        jw_u64(w, "count", r->count);
        jw_i64(w, "wait_ns", r->wait_ns);
        jw_i64(w, "max_ns", r->max_ns);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    json_intervals(w, pg, "longest_waits", u->longest_waits, u->n_longest_waits, 1);
    jw_obj_end(w);
    /* 6: spin locks (as `etlkit spinlocks --json`), PMC (as `etlkit pmc --json`) */
    const etl_spinlocks *s = &c->s;
    if (c->have_s && s->events) {
        jw_obj(w, "spinlocks");
        jw_u64(w, "events", s->events);
        jw_obj(w, "acquisitions");
        jw_u64(w, "est", s->acquisitions.est);
        jw_u64(w, "lo", s->acquisitions.lo);
        if (s->acquisitions.hi_known) jw_u64(w, "hi", s->acquisitions.hi);
        else jw_null(w, "hi");
        jw_obj_end(w);
        jw_u64(w, "contended_est", s->contended.est);
        jw_arr(w, "locks");
        for (size_t i = 0; i < s->nlocks && i < pg->top; i++) {
            const etl_spin_group *g = &s->locks[i];
            snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)g->lock);
            jw_obj(w, NULL);
            jw_str(w, "lock", buf);
            jw_u64(w, "events", g->a.events);
            jw_u64(w, "est_acquisitions", g->a.est_acq);
            jw_u64(w, "est_contended", g->a.est_contended);
            jw_fixed(w, "collision_pct", g->collision_pct, 4);
            jw_u64(w, "wait_total", g->a.w_wait);
            jw_u64(w, "wait_mean", g->mean_wait);
            jw_u64(w, "wait_max", g->a.max_wait);
            jw_u64(w, "hold_p99", g->hold_p99);
            if (g->acq_pct >= 0) jw_fixed(w, "acquisition_cpu_pct", g->acq_pct, 4);
            else jw_null(w, "acquisition_cpu_pct");
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    } else {
        jw_null(w, "spinlocks");
    }
    const etl_pmc *p = &c->p;
    if (c->have_p && p->switches_pmc) {
        jw_obj(w, "pmc");
        jw_u64(w, "switches_with_pmc", p->switches_pmc);
        jw_u64(w, "counters", p->counters);
        etl_pmc_ratios r;
        jw_arr(w, "threads");
        for (size_t i = 0; i < p->nthreads && i < pg->top; i++) {
            const etl_pmc_thread *t = &p->threads[i];
            const etl_sched_thread *sth = etl_sched_thread_at(m, t->thread);
            jw_obj(w, NULL);
            jw_u64(w, "tid", sth ? sth->tid : 0);
            jw_i64(w, "cpu_ns", t->s.cpu_ns);
            jw_arr(w, "deltas");
            for (unsigned k = 0; k < p->counters; k++) jw_u64(w, NULL, t->s.delta[k]);
            jw_arr_end(w);
            etl_pmc_ratios_of(p, &t->s, &r);
            if (r.ipc_x1000 >= 0) jw_fixed(w, "ipc", r.ipc_x1000, 3);
            else jw_null(w, "ipc");
            if (r.llc_mpki_x1000 >= 0) jw_fixed(w, "llc_mpki", r.llc_mpki_x1000, 3);
            else jw_null(w, "llc_mpki");
            if (r.branch_mpki_x1000 >= 0) jw_fixed(w, "branch_mpki", r.branch_mpki_x1000, 3);
            else jw_null(w, "branch_mpki");
            jw_obj_end(w);
        }
        jw_arr_end(w);
        etl_pmc_ratios_of(p, &p->total, &r);
        if (r.ipc_x1000 >= 0) jw_fixed(w, "ipc", r.ipc_x1000, 3);
        else jw_null(w, "ipc");
        if (r.llc_mpki_x1000 >= 0) jw_fixed(w, "llc_mpki", r.llc_mpki_x1000, 3);
        else jw_null(w, "llc_mpki");
        jw_obj_end(w);
    } else {
        jw_null(w, "pmc");
    }
    /* 7: wake-ups (as `etlkit wakeups --json`), the wait chain (as `etlkit waitchain --json`) */
    const etl_wakeups *wk = &c->w;
    if (c->have_w) {
        jw_obj(w, "wakeups");
        jw_u64(w, "total", wk->total);
        jw_fixed(w, "per_second", rate(wk->total, pg->win), 3);
        jw_obj(w, "by_waker");
        jw_u64(w, "thread", wk->by_kind[ETL_WAKER_THREAD]);
        jw_u64(w, "dpc", wk->by_kind[ETL_WAKER_DPC]);
        jw_u64(w, "idle", wk->by_kind[ETL_WAKER_IDLE]);
        jw_u64(w, "unknown", wk->by_kind[ETL_WAKER_UNKNOWN]);
        jw_obj_end(w);
        jw_arr(w, "by_process");
        for (size_t i = 0; i < wk->nprocesses && i < 12; i++) {
            char name[256];
            jw_obj(w, NULL);
            jw_str(w, "label", waker_proc(m, &wk->processes[i], name));
            jw_u64(w, "count", wk->processes[i].count);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    } else {
        jw_null(w, "wakeups");
    }
    const etl_chain *ch = pg->chain;
    if (ch && ch->status == ETL_CHAIN_OK && ch->nnodes) {
        const etl_sched *cm = pg->chain_model;
        jw_obj(w, "waitchain");
        jw_u64(w, "tid", ch->nodes[0].tid);
        jw_i64(w, "from_ns", ch->nodes[0].start);
        jw_i64(w, "at_ns", ch->nodes[0].end);
        jw_u64(w, "nodes", ch->nnodes);
        jw_u64(w, "depth", ch->o.depth);
        jw_i64(w, "min_ns", ch->o.min_ns);
        jw_arr(w, "critical_path");
        for (size_t i = 0; i < ch->npath && i < pg->top; i++) {
            const etl_chain_path *pp = &ch->path[i];
            const etl_sched_thread *sth = etl_sched_thread_at(cm, pp->thread);
            jw_obj(w, NULL);
            jw_u64(w, "tid", sth ? sth->tid : 0);
            jw_str(w, "state", etl_chain_state_name(pp->state));
            if (pp->has_reason) jw_u64(w, "reason_code", pp->reason);
            jw_u64(w, "depth", pp->depth);
            jw_i64(w, "ns", pp->ns);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    } else {
        jw_null(w, "waitchain");
    }
    jw_obj_end(w);
}

/* ---- the page ----------------------------------------------------------------------------------- */

static const char css[] =
    ":root{color-scheme:light dark;--bg:#fff;--fg:#1b1b1f;--mute:#5b5e66;--line:#d4d6db;--panel:#f4f5f7;"
    "--warn-bg:#fff3df;--warn-fg:#6b3b00;--ok:#1d6b3f;"
    "--c0:#0072B2;--c1:#E69F00;--c2:#009E73;--c3:#CC79A7;--c4:#56B4E9;--c5:#D55E00;--c6:#F0E442;--c7:#9a9a9a;"
    "--h0:#f3f6fa;--h1:#deebf7;--h2:#c6dbef;--h3:#9ecae1;--h4:#6baed6;--h5:#4292c6;--h6:#2171b5;--h7:#08519c;"
    "--h8:#08306b;--h9:#041c40}\n"
    "@media (prefers-color-scheme:dark){:root{--bg:#15171b;--fg:#e4e6ea;--mute:#a3a7b0;--line:#3a3e46;"
    "--panel:#1e2126;--warn-bg:#3b2a10;--warn-fg:#ffd08a;--ok:#7fd3a0;--c0:#3d9be0;--c7:#8a8a8a;"
    "--h0:#1e2126;--h1:#13304d;--h2:#17406a;--h3:#1b5187;--h4:#2263a3;--h5:#2f78bd;--h6:#4a90d0;--h7:#6faade;"
    "--h8:#9bc6ea;--h9:#d0e6f7}}\n"
    "*{box-sizing:border-box}body{margin:0;background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,-apple-system,"
    "'Segoe UI',Roboto,'Noto Sans',sans-serif}\n"
    "header,main,footer{max-width:1100px;margin:0 auto;padding:0 20px}header{padding-top:18px}"
    "h1{font-size:1.6em;margin:.2em 0}h2{font-size:1.3em;margin:1.6em 0 .3em;padding-top:.6em;border-top:1px solid "
    "var(--line)}h3{font-size:1.05em;margin:1.2em 0 .3em}.sub,.how,figcaption,caption,footer{color:var(--mute)}"
    ".how{max-width:75ch;margin-top:0}\n"
    "nav ol{display:flex;flex-wrap:wrap;gap:4px 16px;padding:0;margin:.6em 0;list-style:none}nav a{color:inherit}"
    "a{color:var(--c0)}code{font-family:ui-monospace,monospace;font-size:.9em;background:var(--panel);"
    "padding:0 .25em;border-radius:3px}\n"
    "dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px;margin:.5em 0}dt{font-weight:600}dd{margin:0}"
    ".flags code{display:inline-block;margin:1px 0}\n"
    ".warn{background:var(--warn-bg);color:var(--warn-fg);border-left:4px solid var(--c5);padding:.4em .9em;"
    "margin:.6em 0}.ok{color:var(--ok)}.none{font-style:italic;color:var(--mute)}.summary{max-width:90ch}\n"
    "figure.chart{margin:.6em 0}svg{width:100%;height:auto;display:block;font-size:11px}svg text{fill:var(--fg)}"
    "svg .lab{text-anchor:end}svg .ax{fill:var(--mute)}svg .tick,svg .grid{stroke:var(--line)}"
    "svg .val{fill:var(--mute)}\n"
    ".c0{fill:var(--c0);background:var(--c0)}.c1{fill:var(--c1);background:var(--c1)}.c2{fill:var(--c2);"
    "background:var(--c2)}.c3{fill:var(--c3);background:var(--c3)}.c4{fill:var(--c4);background:var(--c4)}"
    ".c5{fill:var(--c5);background:var(--c5)}.c6{fill:var(--c6);background:var(--c6)}.c7{fill:var(--c7);"
    "background:var(--c7)}\n"
    ".h0{fill:var(--h0);background:var(--h0)}.h1{fill:var(--h1);background:var(--h1)}.h2{fill:var(--h2);"
    "background:var(--h2)}.h3{fill:var(--h3);background:var(--h3)}.h4{fill:var(--h4);background:var(--h4)}"
    ".h5{fill:var(--h5);background:var(--h5)}.h6{fill:var(--h6);background:var(--h6)}.h7{fill:var(--h7);"
    "background:var(--h7)}.h8{fill:var(--h8);background:var(--h8)}.h9{fill:var(--h9);background:var(--h9)}\n"
    ".legend{font-size:.85em}.sw{display:inline-block;width:.9em;height:.9em;vertical-align:-.1em;margin:0 .25em 0 .5em;"
    "border:1px solid var(--line)}\n"
    ".tw{overflow-x:auto}table{border-collapse:collapse;margin:.6em 0;font-size:.9em;font-variant-numeric:tabular-nums}"
    "caption{text-align:left;padding:.2em 0}th,td{padding:2px 10px;border-bottom:1px solid var(--line);text-align:left;"
    "vertical-align:top}th{background:var(--panel)}.n{text-align:right}th button{all:inherit;cursor:pointer;padding:0}"
    "th[aria-sort=ascending] button::after{content:' \\25B2'}th[aria-sort=descending] button::after{content:' \\25BC'}\n"
    "details{margin:.6em 0}summary{cursor:pointer;color:var(--c0)}\n"
    "#tip{position:fixed;z-index:9;pointer-events:none;max-width:380px;background:var(--bg);color:var(--fg);"
    "border:1px solid var(--line);box-shadow:0 2px 8px rgba(0,0,0,.25);padding:6px 9px;font-size:12px;"
    "border-radius:4px}#tip[hidden]{display:none}#tip ul{margin:.2em 0 0;padding-left:1.1em}\n"
    "footer{margin:2em auto;font-size:.85em}\n"
    "@media print{:root{color-scheme:light;--bg:#fff;--fg:#000;--mute:#444;--line:#bbb;--panel:#eee;--c0:#0072B2;"
    "--c7:#9a9a9a;--h0:#f3f6fa;--h1:#deebf7;--h2:#c6dbef;--h3:#9ecae1;--h4:#6baed6;--h5:#4292c6;--h6:#2171b5;"
    "--h7:#08519c;--h8:#08306b;--h9:#041c40;--warn-bg:#fff3df;--warn-fg:#6b3b00}nav,#tip{display:none}"
    "body{font-size:11pt}header,main,footer{max-width:none}figure,table,tr,.warn{break-inside:avoid}"
    "h2,h3{break-after:avoid}details{display:block}details>summary{display:none}"
    "*{-webkit-print-color-adjust:exact;print-color-adjust:exact}}\n";

static const char script[] =
    "(function(){'use strict';\n"
    "var D=JSON.parse(document.getElementById('etlkit-data').textContent);\n"
    "var tip=document.getElementById('tip');\n"
    "function dur(ns){var a=Math.abs(ns);if(a>=1e9)return(ns/1e9).toFixed(3)+' s';if(a>=1e6)return(ns/1e6).toFixed(3)+' ms';"
    "if(a>=1e3)return(ns/1e3).toFixed(3)+' \\u00b5s';return ns+' ns';}\n"
    "function sec(ns){return(ns/1e9).toFixed(6)+' s';}\n"
    "function pc(v,w){return w>0?(100*v/w).toFixed(1)+'%':'-';}\n"
    "function esc(s){return String(s).replace(/[&<>\"']/g,function(c){return'&#'+c.charCodeAt(0)+';';});}\n"
    "function place(e){var x=e.clientX+14,y=e.clientY+14;tip.hidden=false;if(x+tip.offsetWidth>innerWidth)"
    "x=e.clientX-tip.offsetWidth-10;if(y+tip.offsetHeight>innerHeight)y=e.clientY-tip.offsetHeight-10;"
    "tip.style.left=Math.max(0,x)+'px';tip.style.top=Math.max(0,y)+'px';}\n"
    "var U=D.utilisation;\n"
    "if(U){Array.prototype.forEach.call(document.querySelectorAll('svg[data-util]'),function(svg){\n"
    " var x0=+svg.getAttribute('data-x0'),cw=+svg.getAttribute('data-cw'),rh=+(svg.getAttribute('data-rh')||0),"
    "rows=+(svg.getAttribute('data-rows')||0);\n"
    " svg.addEventListener('mousemove',function(e){\n"
    "  var pt=svg.createSVGPoint();pt.x=e.clientX;pt.y=e.clientY;var p=pt.matrixTransform(svg.getScreenCTM().inverse());\n"
    "  var b=Math.floor((p.x-x0)/cw);if(b<0||b>=U.intervals){tip.hidden=true;return;}\n"
    "  var s=U.start_ns+b*U.interval_ns,en=Math.min(s+U.interval_ns,D.window.end_ns),len=en-s,n=U.cpus.length,tot=0;\n"
    "  for(var c=0;c<n;c++)tot+=U.cpus[c][b]||0;\n"
    "  var h='<b>'+sec(s)+' to '+sec(en)+'</b><br>all CPUs: '+pc(tot,len*n)+' busy';\n"
    "  if(rh>0){var r=Math.floor(p.y/rh);if(r>=0&&r<rows)h+='<br>CPU '+r+': '+pc(U.cpus[r][b]||0,len)+' busy ('+dur(U.cpus[r][b]||0)+')';}\n"
    "  h+='<ul>';U.processes.forEach(function(q){var v=q.busy_ns[b]||0;if(v>0)h+='<li>'+esc(q.name)+"
    "(q.pid===null?'':' ('+q.pid+')')+': '+dur(v)+' ('+pc(v,len*n)+')</li>';});\n"
    "  tip.innerHTML=h+'</ul>';place(e);});\n"
    " svg.addEventListener('mouseleave',function(){tip.hidden=true;});});}\n"
    "Array.prototype.forEach.call(document.querySelectorAll('table.sortable'),function(t){\n"
    " var ths=t.tHead.rows[0].cells;\n"
    " Array.prototype.forEach.call(ths,function(th,i){var b=document.createElement('button');b.type='button';"
    "b.textContent=th.textContent;th.textContent='';th.appendChild(b);\n"
    "  b.addEventListener('click',function(){var asc=th.getAttribute('aria-sort')==='descending';\n"
    "   Array.prototype.forEach.call(ths,function(x){x.removeAttribute('aria-sort');});\n"
    "   th.setAttribute('aria-sort',asc?'ascending':'descending');\n"
    "   var tb=t.tBodies[0],rs=Array.prototype.slice.call(tb.rows);\n"
    "   rs.sort(function(x,y){var a=x.cells[i],c=y.cells[i],va=a.getAttribute('data-v'),vc=c.getAttribute('data-v'),"
    "r=(va!==null&&vc!==null)?(+va)-(+vc):a.textContent.localeCompare(c.textContent);return asc?r:-r;});\n"
    "   rs.forEach(function(r){tb.appendChild(r);});});});});\n"
    "document.documentElement.setAttribute('data-js','ok');\n"
    "})();\n";

static void write_page(page *pg)
{
    FILE *f = pg->f;
    const char *title = pg->o->title;
    char deftitle[300], b1[32], b2[32], b3[32];
    if (!title) {
        const char *base = strrchr(pg->run->in.path, '/');
        snprintf(deftitle, sizeof deftitle, "etlkit report: %s", base ? base + 1 : pg->run->in.path);
        title = deftitle;
    }
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<meta name=\"color-scheme\" content=\"light dark\">\n"
          "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; "
          "script-src 'unsafe-inline'; img-src data:\">\n",
          f);
    fprintf(f, "<meta name=\"generator\" content=\"etlkit %s\">\n<title>", ETLKIT_VERSION_STRING);
    html_text(f, title);
    fprintf(f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<header>\n<h1>", css);
    html_text(f, title);
    fputs("</h1>\n<p class=\"sub\">", f);
    html_textf(f, "%s, window %s to %s (%s), %u CPUs. Written by etlkit %s: a self-contained page, no network needed.",
               pg->run->in.path, secs(b1, pg->v0), secs(b2, pg->v1), fmt_dur(b3, pg->win), pg->ncpu,
               ETLKIT_VERSION_STRING);
    fputs("</p>\n<nav aria-label=\"Sections\"><ol><li><a href=\"#trace\">1. The trace</a></li>"
          "<li><a href=\"#utilisation\">2. Utilisation</a></li><li><a href=\"#top\">3. Top processes</a></li>"
          "<li><a href=\"#ready\">4. Ready latency</a></li><li><a href=\"#waits\">5. Waits</a></li>"
          "<li><a href=\"#locks-pmc\">6. Spin locks, PMC</a></li><li><a href=\"#wakeups-chain\">7. Wake-ups, wait chain"
          "</a></li></ol></nav>\n</header>\n<main>\n",
          f);
    sec_trace(pg);
    if (!pg->switches) {
        no_switches(pg, "utilisation", "2. CPU utilisation over time", 1);
        no_switches(pg, "top", "3. Top processes and threads by CPU time", 0);
        no_switches(pg, "ready", "4. Ready latency", 0);
        no_switches(pg, "waits", "5. Waits by reason", 0);
        no_switches(pg, "locks-pmc", "6. Spin locks and PMC counters", 0);
        no_switches(pg, "wakeups-chain", "7. Idle wake-ups and the wait chain of the longest wait", 0);
    } else {
        sec_utilisation(pg);
        sec_top(pg);
        sec_ready(pg);
        sec_waits(pg);
        sec_locks_pmc(pg);
        sec_wakeups_chain(pg);
    }
    fputs("</main>\n<footer><p>", f);
    html_textf(f, "Generated by etlkit %s. Definitions: CPU Usage (Precise) rows as WPA computes them; every number "
                  "on this page is also in the JSON block with id etlkit-data, the same values as etlkit cpu, waits, "
                  "spinlocks, pmc, wakeups and waitchain with --json print.",
               ETLKIT_VERSION_STRING);
    fputs("</p></footer>\n<div id=\"tip\" role=\"tooltip\" hidden></div>\n", f);
    /* The data, through the shared JSON writer. */
    char *buf = NULL;
    size_t n = 0;
    FILE *m = open_memstream(&buf, &n);
    if (m) {
        jw w;
        jw_init(&w, m);
        write_json(&w, pg);
        fclose(m);
        html_json_block(f, "etlkit-data", buf, n);
        free(buf);
    }
    fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
}

/* ---- the command ---------------------------------------------------------------------------------- */

static void help(void)
{
    printf("Usage: %s report FILE -o REPORT.html [OPTIONS]\n\n"
           "One self-contained HTML page about a trace, to open in any browser, offline, or to\n"
           "attach to a bug report: the trace's facts and damage, CPU utilisation over time per\n"
           "CPU (heat strip) with the top processes stacked, top processes and threads by CPU\n"
           "time, ready latency (histogram, percentiles per process, longest delays), waits by\n"
           "reason with the longest waits and their readiers, spin locks and PMC counters when\n"
           "the trace has them, idle wake-ups and the wait chain of the longest wait. Charts are\n"
           "inline SVG with text alternatives; a JSON block holds every number shown.\n\n"
           "  -o, --output FILE        the page to write (required; - is standard output); written\n"
           "                           under a temporary name beside it, renamed into place when\n"
           "                           complete\n"
           "  --force                  replace an existing FILE (else refused); a symbolic link is\n"
           "                           replaced itself, never written through\n"
           "  --title TEXT             the page's title (default: etlkit report: FILE)\n"
           "  --range START END        only this window, from the trace start: seconds, or with\n"
           "                           a ms/us/ns suffix (e.g. --range 1.5 2500ms)\n"
           "  --top N                  rows of each table (default 25)\n"
           "  --complete-only          drop each CPU's head and tail slice (WPA-like)\n"
           "  --max-wait-reason N      StateWr bias of compact batches, 1..54 (default: from the OS build)\n"
           "  --quiet                  no warnings about the input\n"
           "\nExit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged (the page is\n"
           "written and shows the damage), 64 usage.\n",
           prog);
}

static int report_option(void *ctx, int argc, char **argv, int *i)
{
    opts *o = ctx;
    const char *a = argv[*i];
    if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
        if (*i + 1 >= argc || !argv[*i + 1][0]) return cli_usage_error("report", "%s needs a file name", a);
        o->out = argv[++*i];
        return 1;
    }
    if (strcmp(a, "--force") == 0) {
        o->force = 1;
        return 1;
    }
    if (strcmp(a, "--title") == 0) {
        if (*i + 1 >= argc) return cli_usage_error("report", "--title needs a text");
        o->title = argv[++*i];
        return 1;
    }
    return 0;
}

int cmd_report(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "report");
    opts o = {0};
    int pr = rep_parse(&a, argc, argv, help, report_option, &o);
    if (pr >= 0) return pr;
    if (a.format != FMT_TEXT) return cli_usage_error("report", "the report is HTML: --json and --csv are not its options");
    if (a.process || a.thread >= 0) return cli_usage_error("report", "--process and --thread are not options of report");
    if (!o.out) return cli_usage_error("report", "no output given: -o REPORT.html");
    /* "-" is standard output, as for export; a file follows the output rules of base/outfile.h. */
    int to_stdout = strcmp(o.out, "-") == 0;
    etl_outfile of;
    memset(&of, 0, sizeof of);
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (!to_stdout) { /* before reading anything: a refusal costs nothing */
        etl_status ck = etl_outfile_check(o.out, &of, &d);
        if (ck == ETL_OK) ck = etl_outfile_may_replace(&of, o.out, o.force, a.path, &d);
        if (ck != ETL_OK) {
            fprintf(stderr, "%s report: %s\n", prog, d.msg);
            etl_outfile_discard(&of);
            return ck == ETL_E_INVALID_ARG ? EXIT_USAGE : EXIT_IO;
        }
    }
    rctx *c = calloc(1, sizeof *c);
    if (!c) {
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    rep_run run;
    int rc = rep_run_open(&run, &a, on_row, c, on_event);
    if (rc != EXIT_OK) {
        free(c);
        etl_outfile_discard(&of);
        return rc;
    }
    /* The temporary file now, not after the passes: a directory we cannot write costs nothing. */
    FILE *f = stdout;
    if (!to_stdout && etl_outfile_create(&of, &f, &d) != ETL_OK) {
        fprintf(stderr, "%s report: %s\n", prog, d.msg);
        rep_run_close(&run);
        free(c);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    etl_reader *r = run.in.reader;
    const etl_logfile_header *h = etl_reader_header(r);
    int64_t v1o = a.has_range ? a.v1 : a.v0;
    /*
     * The file-order facts first: besides what `info` counts, the last record's time gives the
     * trace end the model will find, so the interval (about COLUMNS across the window) is known
     * before the pass.
     */
    facts fa;
    facts_pass(r, &fa);
    int64_t end_guess = etl_clock_ns(etl_reader_clock(r), etl_sched_end_ts(r, fa.last_ts));
    int64_t wend = a.has_range && a.v1 < end_guess ? a.v1 : end_guess, wlen; /* a range past the end is clipped */
    if (__builtin_sub_overflow(wend, a.v0, &wlen)) wlen = wend > a.v0 ? INT64_MAX : INT64_MIN;
    int64_t want = wlen > 0 ? wlen / COLUMNS + (wlen % COLUMNS != 0) : 1000000; /* rounded up, without overflow */
    /* A round length people read in the hover: 1, 2 or 5 times a power of ten, at least 1 us (200..500 columns). */
    int64_t interval = 1000;
    for (int64_t dec = 1000; interval < want && dec <= INT64_MAX / 10; dec *= 10) {
        if (dec >= want) interval = dec;
        else if (2 * dec >= want) interval = 2 * dec;
        else if (5 * dec >= want) interval = 5 * dec;
        else interval = 10 * dec;
    }
    etl_usage_options uo = {.sz = sizeof uo, .v0 = a.v0, .v1 = v1o, .longest = 10, .interval_ns = interval};
    etl_wakeups_options wo = {.sz = sizeof wo, .v0 = a.v0, .v1 = v1o};
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    po.v0 = a.v0;
    po.v1 = v1o;
    etl_spinlock_info params = etl_spinlock_info_defaults();
    params.has_hold_threshold = true;
    if (h->os_major < 6 || (h->os_major == 6 && h->os_minor < 3)) params.spin_lock_hold_threshold = 0;
    etl_spinlocks_options so = {.sz = sizeof so, .v0 = a.v0, .v1 = v1o, .params = params, .mhz = h->cpu_speed_mhz,
                                .ncpu = etl_reader_cpu_count(r)};
    if (etl_usage_init(&c->u, run.model, &uo) != ETL_OK) {
        fprintf(stderr, "%s report: out of memory\n", prog);
        rep_run_close(&run);
        free(fa.by_hook);
        free(c);
        if (!to_stdout) fclose(f);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    c->have_u = 1;
    c->have_w = etl_wakeups_init(&c->w, run.model, &wo) == ETL_OK;
    c->have_p = etl_pmc_init(&c->p, run.model, &po) == ETL_OK;
    c->have_s = etl_spinlocks_init(&c->s, etl_reader_clock(r), &so) == ETL_OK;
    /* A section that cannot be computed fails the page: a page without it would say there is none. */
    const char *failed = c->have_w && c->have_p && c->have_s && fa.ok ? NULL : "out of memory";
    rep_run_go(&run, &a);
    if (!failed && etl_usage_finish(&c->u, run.end_ns) != ETL_OK) failed = etl_usage_diag(&c->u)->msg;
    if (!failed && etl_wakeups_finish(&c->w) != ETL_OK) failed = "wake-ups: out of memory";
    if (!failed && etl_pmc_finish(&c->p, run.end_ns) != ETL_OK) failed = "PMC: out of memory";
    if (!failed) {
        if (c->s.o.ncpu < etl_sched_cpu_count(run.model)) c->s.o.ncpu = etl_sched_cpu_count(run.model);
        if (etl_spinlocks_finish(&c->s, run.end_ns) != ETL_OK) failed = "spin locks: out of memory";
    }
    if (!failed && run.model_failed) failed = "out of memory: the scheduler model left threads out";
    if (failed) {
        fprintf(stderr, "%s report: %s\n", prog, failed);
        run.told = true;
        if (c->have_s) etl_spinlocks_free(&c->s);
        if (c->have_p) etl_pmc_free(&c->p);
        if (c->have_w) etl_wakeups_free(&c->w);
        etl_usage_free(&c->u);
        free(c);
        free(fa.by_hook);
        rep_run_close(&run);
        if (!to_stdout) fclose(f);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    page pg = {.a = &a, .o = &o, .run = &run, .c = c, .fa = &fa};
    pg.switches = etl_sched_stats_get(run.model)->switches != 0;
    pg.v0 = c->u.o.v0;
    pg.v1 = c->u.o.v1;
    pg.win = pg.v1 - pg.v0;
    pg.ncpu = (unsigned)c->u.bucket_stride;
    if (pg.ncpu < c->u.ncpus) pg.ncpu = (unsigned)c->u.ncpus;
    pg.top = a.top ? a.top : 25;
    pg.interval = interval;
    uint64_t wl = pg.win > 0 ? (uint64_t)pg.win : 0;
    pg.ncols = (size_t)(wl / (uint64_t)interval + (wl % (uint64_t)interval != 0));
    if (pg.ncols == 0) pg.ncols = 1;

    /* The wait chain of the longest wait: the chain's own passes over the same reader. */
    etl_chain chain;
    memset(&chain, 0, sizeof chain);
    etl_status chain_st = ETL_OK;
    if (pg.switches && c->u.n_longest_waits && c->u.longest_waits[0].dur_ns > 0) {
        const etl_usage_interval *lw = &c->u.longest_waits[0];
        const etl_sched_thread *st = etl_sched_thread_at(run.model, lw->thread);
        etl_chain_options co = {.sz = sizeof co, .tid = st ? st->tid : lw->tid, .has_at = true,
                                .at = lw->start_ns + lw->dur_ns, .has_from = true, .from = lw->start_ns,
                                .v0 = pg.v0, .v1 = pg.v1, .depth = CHAIN_DEPTH};
        /*
         * A chain costs a pass over the trace per level: the page keeps it to CHAIN_DEPTH levels and
         * descends only into waits of at least 1/200 of the interval (1 ms at least), so that a long
         * trace's report stays a few passes; `etlkit waitchain` goes deeper.
         */
        co.min_ns = lw->dur_ns / 200 > 1000000 ? lw->dur_ns / 200 : 1000000;
        pg.chain_from = co.from;
        pg.chain_at = co.at;
        pg.chain_tid = co.tid;
        /* Its passes fail only for memory: a page that said "no interval" then would be wrong. */
        if (etl_chain_init(&chain, &co) != ETL_OK) chain_st = ETL_E_NOMEM;
        else pg.chain = &chain;
        if (pg.chain) chain_st = etl_chain_run(r, &chain, a.bias, &pg.chain_model);
    }

    etl_status st = ETL_OK;
    int bad = 0, err = 0;
    if (chain_st == ETL_OK) {
        pg.f = f;
        write_page(&pg);
        /* A failed write leaves the error flag set and fails again on the flush: errno says why. */
        bad = fflush(f) != 0 || ferror(f);
        err = errno;
    }
    if (!to_stdout && fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (chain_st != ETL_OK) {
        st = chain_st;
        etl_diag_set(&d, st, UINT64_MAX, "the wait chain: %s", etl_status_str(st));
    } else if (bad) {
        st = ETL_E_IO;
        etl_diag_set(&d, st, UINT64_MAX, "%s: cannot write the page: %s", to_stdout ? "standard output" : o.out,
                     strerror(err));
    }
    if (st == ETL_OK && !to_stdout) st = etl_outfile_commit(&of, o.out, &d);
    etl_outfile_discard(&of);
    if (pg.chain) etl_chain_free(&chain);
    if (pg.chain_model) etl_sched_close(pg.chain_model);
    free(fa.by_hook);
    if (c->have_s) etl_spinlocks_free(&c->s);
    if (c->have_p) etl_pmc_free(&c->p);
    if (c->have_w) etl_wakeups_free(&c->w);
    etl_usage_free(&c->u);
    free(c);
    rc = rep_run_close(&run);
    if (st != ETL_OK) {
        fprintf(stderr, "%s report: %s\n", prog, d.msg[0] ? d.msg : etl_status_str(st));
        return EXIT_IO;
    }
    return rc;
}

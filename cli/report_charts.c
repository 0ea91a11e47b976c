/* report_charts.c - the report page's trace facts, utilisation over time (SVG heat strip and stacked chart) and top tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "base/platform.h"


void sec_trace(page *pg)
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
    FACT("Clock", "%s (%u), %llu ticks/s", etl_clock_type_name(h->clock_type), h->clock_type,
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
        tdn(f, (int64_t)se[i].v, col_u64(b1, se[i].v));
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
        tdn(f, (int64_t)pg->fa->by_hook[order[i]], col_u64(b1, pg->fa->by_hook[order[i]]));
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
    etl_memstream ms;
    FILE *m = etl_memstream_open(&ms, &buf, &n);
    if (!m) {
        page_fail(pg, &ms); /* the page would say the model counted none */
    } else {
        rep_print_anomalies(pg->run, m);
        if (etl_memstream_close(&ms) != 0) page_fail(pg, &ms);
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

void no_switches(page *pg, const char *id, const char *title, int first)
{
    section_open(pg->f, id, title, "This section needs the context switches of the trace.");
    note(pg->f, "none", first ? "No context switches in this trace (no CSwitch events or compact batches): nothing to "
                                "show here or below. Record with the kernel flags PROC_THREAD+CSWITCH (xperf -on "
                                "PROC_THREAD+LOADER+CSWITCH) to get them."
                              : "No context switches in this trace.");
    fputs("</section>\n", pg->f);
}

/* A heat strip cell more than half unknown (sec_utilisation): hatched, not a level. */
#define HEAT_UNKNOWN 100u

/* Heat level of busy over len: h0 for none, h1..h9 by ninths. */
unsigned heat(int64_t busy, int64_t len)
{
    if (busy <= 0 || len <= 0) return 0;
    int64_t l = (int64_t)((__int128)busy * 9 / len);
    return 1 + (unsigned)(l > 8 ? 8 : l);
}

/* Column b is interval b of cpu --interval: aligned to the trace start, the first and the last maybe cut. */
int64_t col_len(const page *pg, size_t b)
{
    int64_t s, e;
    etl_usage_interval_bounds(&pg->c->u, b, &s, &e);
    return e - s;
}

/*
 * Column b sits at x0 + b * cw, the first interval's edge at x0 (at or before v0: a window off the
 * edges starts inside its first column); x of a time of column b, as an offset from its edge.
 */
static double col_x(const page *pg, double x0, double cw, size_t b, int64_t t)
{
    int64_t edge = (pg->v0 / pg->interval + (int64_t)b) * pg->interval;
    return x0 + b * cw + cw * (double)(t - edge) / (double)pg->interval;
}

double col_start_x(const page *pg, double x0, double cw, size_t b)
{
    int64_t s, e;
    etl_usage_interval_bounds(&pg->c->u, b, &s, &e);
    return col_x(pg, x0, cw, b, s);
}

int64_t cpu_busy(const page *pg, size_t b, size_t c)
{
    const etl_usage *u = &pg->c->u;
    return b < u->nbuckets && c < u->bucket_stride ? u->bucket_cpu_busy[b * u->bucket_stride + c] : 0;
}

int64_t proc_busy(const page *pg, size_t b, size_t j)
{
    return etl_usage_interval_process_ns(&pg->c->u, b, j); /* the first 10 processes are kept: STACKED are drawn */
}

/* x of the end of column b: the first and the last column may be shorter than the interval, and are drawn so. */
double col_end_x(const page *pg, double x0, double cw, size_t b)
{
    int64_t s, e;
    etl_usage_interval_bounds(&pg->c->u, b, &s, &e);
    return col_x(pg, x0, cw, b, e);
}

void time_axis(FILE *f, double x0, double w, double y, const page *pg)
{
    for (int k = 0; k <= 4; k++) {
        char t[32];
        /* time maps onto columns: the window ends where the last (maybe shorter) column ends */
        double lead = (double)(pg->v0 % pg->interval); /* the window's start inside the first column */
        double x = x0 + w / (double)pg->ncols * (lead + (double)pg->win * k / 4) / (double)pg->interval;
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"tick\"/>", x, y - 4, x, y);
        fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"ax\" text-anchor=\"%s\">", x, y + 12,
                k == 0 ? "start" : k == 4 ? "end" : "middle");
        html_text(f, secs(t, pg->v0 + (int64_t)((__int128)pg->win * k / 4)));
        fputs("</text>", f);
    }
    fputc('\n', f);
}

void sec_utilisation(page *pg)
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
    /*
     * A cell more than half of whose interval is unknown (records lost, a thread not known) is hatched grey, not the
     * idle colour: drawn (and its legend given) only on a page that has one, so other pages stay as they were.
     */
    bool any_unknown = false;
    for (unsigned c = 0; c < pg->ncpu && !any_unknown; c++)
        for (size_t b = 0; b < pg->ncols && !any_unknown; b++)
            any_unknown = 2 * etl_usage_interval_cpu_unknown_ns(u, b, c) > col_len(pg, b);
    if (any_unknown)
        fputs("<defs><pattern id=\"hu\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
              "patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"#bbb\"/><line x1=\"0\" y1=\"0\" "
              "x2=\"0\" y2=\"4\" stroke=\"#777\" stroke-width=\"2\"/></pattern></defs>\n", f);
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
                int64_t busy = 0, len = col_len(pg, e), unk = 0;
                if (total) {
                    for (unsigned c = 0; c < pg->ncpu; c++) {
                        add_sat(&busy, cpu_busy(pg, e, c));
                        add_sat(&unk, etl_usage_interval_cpu_unknown_ns(u, e, c));
                    }
                    len = mul_sat(len, pg->ncpu);
                } else {
                    busy = cpu_busy(pg, e, r);
                    unk = etl_usage_interval_cpu_unknown_ns(u, e, r);
                }
                lv = any_unknown && 2 * unk > len ? HEAT_UNKNOWN : heat(busy, len);
                if (e == b) first = lv;
                else if (lv != first) break;
            }
            double bx = col_start_x(pg, X0, cw, b);
            if (first == HEAT_UNKNOWN)
                fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%u\" class=\"hu\" fill=\"url(#hu)\"/>", bx, y,
                        col_end_x(pg, X0, cw, e - 1) - bx, rh - (rh > 4));
            else
                fprintf(f, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%u\" class=\"h%u\"/>", bx, y,
                        col_end_x(pg, X0, cw, e - 1) - bx, rh - (rh > 4), first);
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
    if (any_unknown)
        fputs("<svg width=\"12\" height=\"12\" class=\"sw\" aria-hidden=\"true\"><rect width=\"12\" height=\"12\" "
              "fill=\"url(#hu)\"/></svg> unknown: more than half of the interval's "
              "time has no known thread (records lost, a compact trace's last slices, or slices dropped by "
              "--complete-only), not idle ", f);
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
    /* Both edges taken once: a chart without its paths would be a page with numbers left out (exit 1 instead). */
    int64_t *below = calloc(pg->ncols, sizeof *below), *top = malloc(pg->ncols * sizeof *top);
    if (!below || !top) {
        errno = ENOMEM;
        page_fail(pg, &(etl_memstream){0});
    } else {
        for (size_t j = 0; j <= np; j++) {
            int other = j == np;
            char lab[256];
            fprintf(f, "<path class=\"c%zu\" d=\"", other ? (size_t)HTML_NCOLORS - 1 : j);
            /* Upper edge left to right, lower edge back: steps, one per interval. */
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
                if (b == 0 && pg->v0 % pg->interval == 0) fprintf(f, "M%d %.1f", X0, y);
                else if (b == 0) fprintf(f, "M%.2f %.1f", col_start_x(pg, X0, cw, 0), y);
                else fprintf(f, "V%.1f", y);
                fprintf(f, "H%.2f", col_end_x(pg, X0, cw, b));
            }
            for (size_t b = pg->ncols; b-- > 0;) {
                int64_t cap = col_len(pg, b) * pg->ncpu;
                double y = 10 + SH - (cap > 0 ? (double)below[b] / (double)cap * SH : 0);
                fprintf(f, "V%.1fH%.2f", y, col_start_x(pg, X0, cw, b));
            }
            fputs("Z\"><title>", f);
            if (other) html_text(f, "other processes");
            else
                html_textf(f, "%s: %s (%s of all CPUs)", proc_label_pid(pg->run->model, u->processes[j].process, lab),
                           fmt_dur(b1, u->processes[j].cpu_ns), pct_text(b2, u->processes[j].cpu_ns, pg->win * pg->ncpu));
            fputs("</title></path>\n", f);
            memcpy(below, top, pg->ncols * sizeof *top);
        }
    }
    free(below);
    free(top);
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
            int64_t p = rep_pct100(cpu_busy(pg, b, c), col_len(pg, b));
            if (p > peak) peak = p;
        }
        char cs[16], pk[32];
        snprintf(cs, sizeof cs, "%u", c);
        if (u->nbuckets) snprintf(pk, sizeof pk, "%s%%", fmt_fixed(b3, peak, 2));
        else strcpy(pk, "-"); /* a 0 ns window has no interval */
        fputs("<tr>", f);
        tdn(f, c, cs);
        tdn(f, k->busy_ns, fmt_dur(b1, k->busy_ns));
        tdn(f, k->idle_ns, fmt_dur(b2, k->idle_ns));
        tdn(f, k->unknown_ns, fmt_dur(b3, k->unknown_ns));
        tdn(f, rep_pct100(k->busy_ns, pg->win), pct_text(b1, k->busy_ns, pg->win));
        tdn(f, peak, pk);
        tdn(f, (int64_t)k->switches, col_u64(b2, k->switches));
        fputs("</tr>\n", f);
    }
    table_end(f);
    fputs("</details>\n</section>\n", f);
}

void sec_top(page *pg)
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
        rep_process_name(m, p->process, name, &pid);
        snprintf(ps, sizeof ps, pid == UINT32_MAX ? "-" : "%u", pid);
        fputs("<tr>", f);
        td(f, name);
        tdn(f, pid == UINT32_MAX ? -1 : (int64_t)pid, ps);
        tdn(f, p->cpu_ns, fmt_dur(b1, p->cpu_ns));
        tdn(f, rep_pct100(p->cpu_ns, all), pct_text(b2, p->cpu_ns, all));
        tdn(f, p->threads, col_u64(b3, p->threads));
        tdn(f, (int64_t)p->switches, col_u64(b1, p->switches));
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
        tdn(f, rep_pct100(t->cpu_ns, all), pct_text(b2, t->cpu_ns, all));
        tdn(f, (int64_t)t->switches, col_u64(b3, t->switches));
        tdn(f, (int64_t)t->voluntary, col_u64(b1, t->voluntary));
        tdn(f, (int64_t)t->involuntary, col_u64(b2, t->involuntary));
        fputs("</tr>\n", f);
    }
    table_end(f);
    fputs("</section>\n", f);
}

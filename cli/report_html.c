/*
 * report_html.c - the report page's frame: formatting helpers, table and section markup, the page; its CSS
 * and script are cli/report/report.css and report.js, embedded at build time (report_css, report_js; flame.css
 * and flame.js on pages with samples).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "base/platform.h"

const char *secs(char out[32], int64_t ns)
{
    char t[32];
    snprintf(out, 32, "%s s", fmt_fixed(t, ns / 1000, 6));
    return out;
}

const char *pct_text(char out[32], int64_t part, int64_t whole)
{
    if (whole <= 0) return strcpy(out, "-"); /* a share of nothing (a 0 ns window): unknown, not 0.00% */
    char t[32];
    snprintf(out, 32, "%s%%", fmt_fixed(t, rep_pct100(part, whole), 2));
    return out;
}

const char *proc_label_pid(const etl_sched *m, uint32_t process, char out[256])
{
    uint32_t pid;
    char name[256];
    rep_process_name(m, process, name, &pid);
    if (pid == UINT32_MAX) return strcpy(out, name);
    snprintf(out, 256, "%.240s (%u)", name, pid); /* a name is cut, never the PID */
    return out;
}

const char *reason_text(char out[16], unsigned code)
{
    const char *n = etl_wait_reason_name(code);
    if (n) return n;
    snprintf(out, 16, "%u", code);
    return out;
}

/* Who readied the thread of a long interval: "image (PID) tid N", "DPC (CPU n)", "Unknown", "-". */
const char *readier_text(const etl_sched *m, const etl_usage_interval *v, char out[320])
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

void td(FILE *f, const char *text)
{
    fputs("<td>", f);
    html_text(f, text);
    fputs("</td>", f);
}

/* A numeric cell: right-aligned, with the raw value for sorting. */
void tdn(FILE *f, int64_t v, const char *text)
{
    fprintf(f, "<td class=\"n\" data-v=\"%lld\">", (long long)v);
    html_text(f, text);
    fputs("</td>", f);
}

void table_head(FILE *f, const char *caption, const char *const *cols, size_t n, int sortable)
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

void table_end(FILE *f) { fputs("</tbody></table></div>\n", f); }

void section_open(FILE *f, const char *id, const char *title, const char *how)
{
    fprintf(f, "<section id=\"%s\" aria-labelledby=\"%s-h\"><h2 id=\"%s-h\">", id, id, id);
    html_text(f, title);
    fputs("</h2>\n<p class=\"how\">", f);
    html_text(f, how);
    fputs("</p>\n", f);
}

void note(FILE *f, const char *cls, const char *text)
{
    fprintf(f, "<p class=\"%s\">", cls);
    html_text(f, text);
    fputs("</p>\n", f);
}


void page_fail(page *pg, const etl_memstream *ms)
{
    int e = errno;
    if (pg->failed[0]) return;
    if (ms->dir)
        snprintf(pg->failed, sizeof pg->failed,
                 "cannot use a temporary file in %s (set TMPDIR to choose another directory): %s", ms->dir, strerror(e));
    else
        snprintf(pg->failed, sizeof pg->failed, "the page's data: %s", strerror(e));
}

void write_page(page *pg)
{
    FILE *f = pg->f;
    const char *title = pg->o->title;
    char deftitle[300], b1[32], b2[32], b3[32];
    if (!title) {
        snprintf(deftitle, sizeof deftitle, "etlkit report: %s", etl_path_base(pg->run->in.path));
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
    fprintf(f, "</title>\n<style>\n%s%s</style>\n</head>\n<body>\n<header>\n<h1>", report_css,
            pg->prof ? flame_css : "");
    html_text(f, title);
    fputs("</h1>\n<p class=\"sub\">", f);
    html_textf(f, "%s, window %s to %s (%s), %u CPUs. Written by etlkit %s: a self-contained page, no network needed.",
               pg->run->in.path, secs(b1, pg->v0), secs(b2, pg->v1), fmt_dur(b3, pg->win), pg->ncpu,
               ETLKIT_VERSION_STRING);
    fputs("</p>\n<nav aria-label=\"Sections\"><ol><li><a href=\"#trace\">1. The trace</a></li>"
          "<li><a href=\"#utilisation\">2. Utilisation</a></li><li><a href=\"#top\">3. Top processes</a></li>"
          "<li><a href=\"#ready\">4. Ready latency</a></li><li><a href=\"#waits\">5. Waits</a></li>"
          "<li><a href=\"#locks-pmc\">6. Spin locks, PMC</a></li><li><a href=\"#wakeups-chain\">7. Wake-ups, wait chain"
          "</a></li>",
          f);
    if (pg->prof) fputs("<li><a href=\"#flame\">8. Flame graph</a></li>", f);
    fputs("</ol></nav>\n</header>\n<main>\n", f);
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
    if (pg->prof) sec_flame(pg);
    fputs("</main>\n<footer><p>", f);
    html_textf(f, "Generated by etlkit %s. Definitions: CPU Usage (Precise) rows as WPA computes them; every number "
                  "on this page is also in the JSON block with id etlkit-data, the same values as etlkit cpu, waits, "
                  "spinlocks, pmc, wakeups and waitchain with --json print.",
               ETLKIT_VERSION_STRING);
    fputs("</p></footer>\n<div id=\"tip\" role=\"tooltip\" hidden></div>\n", f);
    /* The data, through the shared JSON writer. */
    char *buf = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *m = etl_memstream_open(&ms, &buf, &n);
    if (!m) {
        page_fail(pg, &ms); /* a page without its data has no numbers for its script: none is written */
    } else {
        jw w;
        jw_init(&w, m);
        write_json(&w, pg);
        if (etl_memstream_close(&ms) != 0) page_fail(pg, &ms);
        else html_json_block(f, "etlkit-data", buf, n);
        free(buf);
    }
    /* flame.js runs inside report.js's function, before the line that says the script finished. */
    const char *last = pg->prof ? strstr(report_js, "document.documentElement.setAttribute('data-js'") : NULL;
    if (last)
        fprintf(f, "<script>\n%.*s%s%s</script>\n</body>\n</html>\n", (int)(last - report_js), report_js, flame_js,
                last);
    else
        fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", report_js);
}

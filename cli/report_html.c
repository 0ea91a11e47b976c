/* report_html.c - the report page's frame: formatting helpers, table and section markup, the CSS and script, the page. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "base/platform.h"

/* Hundredths of a percent of part over whole, rounded down. */
int64_t pct100(int64_t part, int64_t whole)
{
    return whole > 0 ? (int64_t)((__int128)part * 10000 / whole) : 0;
}

/* Thousandths of an event per second of the window. */
int64_t rate(uint64_t n, int64_t window)
{
    return window > 0 ? (int64_t)((__int128)n * 1000000000000 / window) : 0;
}

const char *secs(char out[32], int64_t ns)
{
    char t[32];
    snprintf(out, 32, "%s s", fmt_fixed(t, ns / 1000, 6));
    return out;
}

const char *pct_text(char out[32], int64_t part, int64_t whole)
{
    char t[32];
    snprintf(out, 32, "%s%%", fmt_fixed(t, pct100(part, whole), 2));
    return out;
}

const char *u64s(char out[32], uint64_t v)
{
    out[fmt_u64(out, v)] = 0;
    return out;
}

const char *proc_label(const etl_sched *m, uint32_t process, char out[256], uint32_t *pid)
{
    const etl_sched_process *sp = etl_sched_process_at(m, process);
    *pid = sp ? sp->pid : UINT32_MAX;
    if (!sp) return strcpy(out, "Unknown");
    snprintf(out, 256, "%s", sp->name ? etl_sched_names(m) + sp->name : "Unknown");
    return out;
}

const char *proc_label_pid(const etl_sched *m, uint32_t process, char out[256])
{
    uint32_t pid;
    char name[256];
    proc_label(m, process, name, &pid);
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
    etl_memstream ms;
    FILE *m = etl_memstream_open(&ms, &buf, &n);
    if (m) {
        jw w;
        jw_init(&w, m);
        write_json(&w, pg);
        etl_memstream_close(&ms);
        html_json_block(f, "etlkit-data", buf, n);
        free(buf);
    }
    fprintf(f, "<script>\n%s</script>\n</body>\n</html>\n", script);
}

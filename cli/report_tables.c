/* report_tables.c - the report page's ready latency, waits, spin locks and PMC, wake-ups and wait chain sections. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "spinlocks_out.h"


/* log10(x) for x >= 1, close enough to draw (no libm): whole decades, then the atanh series of the rest. */
double log10_approx(double x)
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

const char *bin_label(char out[48], unsigned b)
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

void intervals_table(page *pg, const char *caption, const etl_usage_interval *v, size_t n, int waits)
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

void sec_ready(page *pg)
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
               rep_lat_dur(b[0], l, l->count ? l->sum_ns / (int64_t)l->count : 0), rep_lat_dur(b[1], l, l->p50_ns),
               rep_lat_dur(b[2], l, l->p90_ns), rep_lat_dur(b[3], l, l->p99_ns), rep_lat_dur(b[4], l, l->p999_ns),
               rep_lat_dur(b[5], l, l->max_ns));
    l = &u->woken_all;
    html_textf(f, " Of which readied by a ReadyThread event: %llu, p50 %s, p99 %s, max %s.", (unsigned long long)l->count,
               rep_lat_dur(b[1], l, l->p50_ns), rep_lat_dur(b[3], l, l->p99_ns), rep_lat_dur(b[4], l, l->max_ns));
    fputs("</p>\n", f);
    /* Histogram: vertical bars, log-scale heights. */
    enum { X0 = 50, W = 880, H = 180 };
    uint64_t max = 0;
    for (unsigned i = 0; i < HIST_BINS; i++)
        if (pg->c->u.ready_hist[i] > max) max = pg->c->u.ready_hist[i];
    double lmax = max ? log10_approx((double)max + 1) : 1;
    double bw = (double)W / HIST_BINS;
    fprintf(f, "<figure class=\"chart\"><svg id=\"ready-hist\" viewBox=\"0 0 %d %d\" role=\"img\" "
               "aria-labelledby=\"ready-hist-t ready-hist-d\"><title id=\"ready-hist-t\">Ready latency histogram "
               "(switch-ins per latency bin, log scale)</title><desc id=\"ready-hist-d\">",
            X0 + W + 10, H + 62);
    int any = 0;
    for (unsigned i = 0; i < HIST_BINS; i++) {
        if (!pg->c->u.ready_hist[i]) continue;
        char bl[48];
        html_textf(f, "%s%s: %llu", any++ ? "; " : "", bin_label(bl, i), (unsigned long long)pg->c->u.ready_hist[i]);
    }
    if (!any) fputs("No switch-in with a known Ready Time.", f);
    fputs("</desc>\n", f);
    fprintf(f, "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" class=\"tick\"/>", X0, H + 22, X0 + W, H + 22);
    for (unsigned i = 0; i < HIST_BINS; i++) {
        char bl[48];
        double hgt = pg->c->u.ready_hist[i] ? log10_approx((double)pg->c->u.ready_hist[i] + 1) / lmax * H : 0;
        if (pg->c->u.ready_hist[i] && hgt < 1) hgt = 1;
        fprintf(f, "<g><title>");
        html_textf(f, "%s: %llu switch-ins", bin_label(bl, i), (unsigned long long)pg->c->u.ready_hist[i]);
        fprintf(f, "</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"c0\"/>", X0 + i * bw + 1,
                H + 22 - hgt, bw - 2, hgt);
        if (pg->c->u.ready_hist[i])
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"val\" text-anchor=\"middle\">%llu</text>", X0 + (i + 0.5) * bw,
                    H + 18 - hgt, (unsigned long long)pg->c->u.ready_hist[i]);
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
        rep_process_name(m, p->process, name, &pid);
        snprintf(ps, sizeof ps, pid == UINT32_MAX ? "-" : "%u", pid);
        int64_t mean = x->count ? x->sum_ns / (int64_t)x->count : 0;
        fputs("<tr>", f);
        td(f, name);
        tdn(f, pid == UINT32_MAX ? -1 : (int64_t)pid, ps);
        tdn(f, (int64_t)x->count, col_u64(b[0], x->count));
        tdn(f, mean, rep_lat_dur(b[1], x, mean));
        tdn(f, x->p50_ns, rep_lat_dur(b[2], x, x->p50_ns));
        tdn(f, x->p90_ns, rep_lat_dur(b[3], x, x->p90_ns));
        tdn(f, x->p99_ns, rep_lat_dur(b[4], x, x->p99_ns));
        tdn(f, x->max_ns, rep_lat_dur(b[5], x, x->max_ns));
        fputs("</tr>\n", f);
    }
    table_end(f);
    fputs("<h3>Longest ready delays</h3>\n", f);
    intervals_table(pg, "The longest single ready delays (a preempted thread is ready from its switch-out)",
                    u->longest_ready, u->n_longest_ready, 0);
    fputs("</section>\n", f);
}

int by_wait_desc(const void *a, const void *b)
{
    const etl_usage_reason *x = a, *y = b;
    if (x->wait_ns != y->wait_ns) return x->wait_ns > y->wait_ns ? -1 : 1;
    return x->code < y->code ? -1 : x->code > y->code;
}

void sec_waits(page *pg)
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
    else if (!etl_usage_waits_known(u))
        note(f, "none", "Waits unknown: no switch-in in the window was readied by a ReadyThread event (a trace "
                        "without them: the DISPATCHER flag was not on).");
    else note(f, "none", "No wait in the window.");
    fputs("<h3>Longest waits</h3>\n", f);
    intervals_table(pg, "The longest single waits and who readied the thread", u->longest_waits, u->n_longest_waits, 1);
    fputs("</section>\n", f);
}

void sec_locks_pmc(page *pg)
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
        html_textf(f, "contended %llu. Sampling: spin threshold %u, 1 in %u uncontended, 1 in %u contended, hold threshold ",
                   (unsigned long long)s->contended.est, s->o.params.spin_lock_spin_threshold,
                   s->o.params.spin_lock_acquire_sample_rate, s->o.params.spin_lock_contention_sample_rate);
        /* None before Windows 8.1 (no H in the trace's parameters), as `etlkit spinlocks` says: not 0 cycles. */
        if (s->o.params.has_hold_threshold && s->o.params.spin_lock_hold_threshold)
            html_textf(f, "%u cycles", s->o.params.spin_lock_hold_threshold);
        else
            html_text(f, "none");
        html_text(f, " (as `etlkit spinlocks` assumes them).");
        fputs("</p>\n", f);
        char cut[256];
        if (spinlocks_cut(s)) { /* the % CPU column is over the time the file holds */
            spinlocks_known_text(s, cut, sizeof cut);
            cut[0] = 'T';
            strcat(cut, ".");
            note(f, "warn", cut);
        }
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
            tdn(f, (int64_t)g->a.events, col_u64(b[0], g->a.events));
            tdn(f, (int64_t)g->a.est_acq, col_u64(b[1], g->a.est_acq));
            tdn(f, (int64_t)g->a.est_contended, col_u64(b[2], g->a.est_contended));
            if (g->collision_pct >= 0) snprintf(b[3], 32, "%s%%", fmt_fixed(b[7], g->collision_pct, 4));
            else strcpy(b[3], "-"); /* of a saturated sum */
            tdn(f, g->collision_pct, b[3]);
            if (g->mean_wait != ETL_SPIN_UNKNOWN) tdn(f, (int64_t)g->mean_wait, col_u64(b[4], g->mean_wait));
            else tdn(f, -1, "-");
            tdn(f, (int64_t)g->a.max_wait, col_u64(b[5], g->a.max_wait));
            if (g->hold_p99 != ETL_SPIN_UNKNOWN) tdn(f, (int64_t)g->hold_p99, col_u64(b[6], g->hold_p99));
            else tdn(f, -1, "-"); /* no hold value: every event took an interrupt, or none was kept */
            if (g->acq_pct >= 0) snprintf(b[3], 32, "%s%%", fmt_fixed(b[7], g->acq_pct, 4));
            else strcpy(b[3], "-");
            tdn(f, g->acq_pct, b[3]);
            fputs("</tr>\n", f);
        }
        table_end(f);
    }
    fputs("<h3>PMC counters per thread</h3>\n", f);
    const etl_pmc *p = &c->p;
    if (!c->have_p || !p->counters) { /* the trace's counters (switches_pmc is the window's) */
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
            /* A slot's sum that passed 2^64 or is of some slices only is not the sum: "-", as `etlkit pmc` says. */
            unsigned unknown = t->s.saturated | t->s.partial;
            bool ck = cyc >= 0 && !(unknown >> cyc & 1), ik = ins >= 0 && !(unknown >> ins & 1);
            uint64_t cv = ck ? t->s.delta[cyc] : 0, iv = ik ? t->s.delta[ins] : 0;
            fputs("<tr>", f);
            tdn(f, st ? st->tid : 0, tid);
            td(f, t->thread == ETL_SCHED_IDLE ? "Idle (0)" : rep_process_label(pg->run->model, t->thread, label));
            td(f, t->thread == ETL_SCHED_IDLE ? "Idle" : rep_thread_name(pg->run->model, t->thread));
            tdn(f, t->s.cpu_ns, fmt_dur(b[0], t->s.cpu_ns));
            tdn(f, ck ? (int64_t)(cv > INT64_MAX ? INT64_MAX : cv) : -1, ck ? col_u64(b[1], cv) : "-");
            tdn(f, ik ? (int64_t)(iv > INT64_MAX ? INT64_MAX : iv) : -1, ik ? col_u64(b[2], iv) : "-");
            tdn(f, x.ipc_x1000, x.ipc_x1000 >= 0 ? fmt_fixed(b[3], x.ipc_x1000, 3) : "-");
            tdn(f, x.llc_mpki_x1000, x.llc_mpki_x1000 >= 0 ? fmt_fixed(b[4], x.llc_mpki_x1000, 3) : "-");
            tdn(f, x.branch_mpki_x1000, x.branch_mpki_x1000 >= 0 ? fmt_fixed(b[5], x.branch_mpki_x1000, 3) : "-");
            fputs("</tr>\n", f);
        }
        table_end(f);
    }
    fputs("</section>\n", f);
}

const char *waker_proc(const etl_sched *m, const etl_wakeup_waker *x, char out[256])
{
    if (x->kind != ETL_WAKER_THREAD) return strcpy(out, x->kind == ETL_WAKER_IDLE ? "Idle (0)" : etl_waker_kind_name(x->kind));
    /* A thread of no known process is not the waker "Unknown" (no known readier): etlkit wakeups' label. */
    if (!etl_sched_process_at(m, x->process)) return strcpy(out, "Unknown process");
    return proc_label_pid(m, x->process, out);
}

void sec_wakeups_chain(page *pg)
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
                   (unsigned long long)w->total, fmt_fixed(b1, rep_rate(w->total, pg->win), 3),
                   (unsigned long long)w->by_kind[ETL_WAKER_THREAD], (unsigned long long)w->by_kind[ETL_WAKER_DPC],
                   (unsigned long long)w->by_kind[ETL_WAKER_IDLE], (unsigned long long)w->by_kind[ETL_WAKER_UNKNOWN]);
        fputs("</p>\n", f);
        size_t nb = w->nprocesses < 12 ? w->nprocesses : 12;
        html_bar bars[12];
        char lab[12][256], txt[12][64];
        for (size_t i = 0; i < nb; i++) {
            waker_proc(pg->run->model, &w->processes[i], lab[i]);
            snprintf(txt[i], sizeof txt[i], "%llu (%s/s)", (unsigned long long)w->processes[i].count,
                     fmt_fixed(b2, rep_rate(w->processes[i].count, pg->win), 3));
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
            tdn(f, rep_pct100(p->ns, len), pct_text(b2, p->ns, len));
            fputs("</tr>\n", f);
        }
        table_end(f);
    }
    fputs("</section>\n", f);
}

/* ---- the JSON block ------------------------------------------------------------------------------ */

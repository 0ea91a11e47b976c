/* cmd_spinlocks.c - `etlkit spinlocks`: spin lock contention per lock, caller, pair and AcquireMode (spec §5). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "columns.h"
#include "etlkit/spinlocks.h"

/* The rows of each list JSON and CSV give without --top: the output stays a few MB whatever the trace. */
/* rep_args.top before parsing: --top not given. */

static const char spin_about[] =
    "Spin lock contention from SpinLock events (PERF_SPINLOCK): per lock address, per caller\n"
    "(release function) address, per (lock, caller) pair and per AcquireMode: events, estimated\n"
    "acquisitions and contentions, spins, wait and hold cycles (mean, p99, max; hold without the\n"
    "events that took interrupts), % of CPU spent acquiring, IRQL and mode mix, threads and CPUs.\n"
    "The kernel logs 1 in A uncontended and 1 in M contended acquisitions per CPU and every lock\n"
    "held longer than H cycles; each event is weighted by the rule that logged it, so counts and\n"
    "sums are estimates, with bounds on the true totals. The trace does not record S, A, M, H:\n"
    "the kernel's defaults are assumed unless given.\n";

/* The most rows of each list (0: all) a format gives. */
static unsigned list_top(const rep_args *a)
{
    if (a->top != SPIN_TOP_UNSET) return a->top;
    return a->format == FMT_TEXT ? 20 : SPIN_LIST_TOP;
}

typedef struct ctx {
    etl_spinlocks s;
    const rep_args *a;
    const rep_run *run;
    uint64_t filtered;    /* events of other threads */
} ctx;

/* --thread by the event's ThreadId; --process by the process of the thread that id names now. */
static int selected(const ctx *c, uint32_t tid)
{
    const rep_args *a = c->a;
    if (a->thread >= 0 && tid != (uint64_t)a->thread) return 0;
    return !a->process || rep_thread_selected(a, c->run->model, etl_sched_thread_of(c->run->model, tid));
}

/* Called before the model sees the event: its names are those of the event's moment. */
static void on_event(void *p, const etl_sched_event *ev)
{
    ctx *c = p;
    if (ev->kind != ETL_SCHED_SPINLOCK) return;
    if ((c->a->thread >= 0 || c->a->process) && !selected(c, ev->u.spinlock.thread_id)) {
        c->filtered++;
        return;
    }
    etl_spinlocks_add(&c->s, ev);
}

/* ---- output ------------------------------------------------------------------------------ */

typedef struct params_src {
    const char *s, *a, *m, *h; /* where each came from */
    int any_assumed;
} params_src;

enum { K_LOCKS, K_CALLERS, K_PAIRS, K_MODES, K_TOTAL };
static const char *const kind_key[] = {"lock", "caller", "pair", "mode", "total"};

static const char *hex(char out[32], uint64_t v)
{
    snprintf(out, 32, "0x%016llx", (unsigned long long)v);
    return out;
}

static const char *mode_name(uint32_t m)
{
    const char *n = etl_spinlock_acquire_mode_name(m);
    return n ? n : "Other";
}

static void json_bounds(jw *w, const char *key, const etl_spin_bounds *b)
{
    jw_obj(w, key);
    jw_u64(w, "estimate", b->est);
    jw_u64(w, "min", b->lo);
    if (b->hi_known) jw_u64(w, "max", b->hi);
    else jw_null(w, "max");
    jw_obj_end(w);
}

static void json_group(jw *w, const char *key, const etl_spin_group *g, unsigned kind)
{
    char b[32];
    const etl_spin_acc *a = &g->a;
    jw_obj(w, key);
    if (kind == K_LOCKS || kind == K_PAIRS) jw_str(w, "lock", hex(b, g->lock));
    if (kind == K_CALLERS || kind == K_PAIRS) jw_str(w, "caller", hex(b, g->caller));
    if (kind == K_MODES) {
        jw_u64(w, "mode", g->mode);
        jw_str(w, "mode_name", mode_name(g->mode));
    }
    jw_u64(w, "events", a->events);
    jw_obj(w, "classes");
    jw_u64(w, "hold", a->cls[ETL_SPIN_L]);
    jw_u64(w, "contended", a->cls[ETL_SPIN_C]);
    jw_u64(w, "uncontended", a->cls[ETL_SPIN_U]);
    jw_u64(w, "unexplained", a->cls[ETL_SPIN_X]);
    jw_obj_end(w);
    jw_u64(w, "contended_events", a->contended);
    jw_u64(w, "est_acquisitions", a->est_acq);
    jw_u64(w, "est_contended", a->est_contended);
    jw_fixed(w, "collision_pct", g->collision_pct, 4);
    if (g->acq_pct >= 0) {
        jw_fixed(w, "acquisition_cpu_pct", g->acq_pct, 4);
        jw_fixed(w, "contention_cpu_pct", g->cont_pct, 4);
    } else {
        jw_null(w, "acquisition_cpu_pct");
        jw_null(w, "contention_cpu_pct");
    }
    jw_obj(w, "rates_per_s");
    jw_fixed(w, "acquisitions", g->acq_rate, 3);
    jw_fixed(w, "contentions", g->cont_rate, 3);
    jw_fixed(w, "spins", g->spin_rate, 3);
    jw_obj_end(w);
    jw_obj(w, "spins");
    jw_u64(w, "total", a->w_spins);
    jw_fixed(w, "mean", (int64_t)g->mean_spins_x1000, 3);
    jw_u64(w, "max", a->max_spins);
    jw_obj_end(w);
    jw_obj(w, "wait_cycles");
    jw_u64(w, "total", a->w_wait);
    jw_u64(w, "total_contended", a->w_wait_contended);
    jw_u64(w, "mean", g->mean_wait);
    jw_u64(w, "p50", g->wait_p50);
    jw_u64(w, "p99", g->wait_p99);
    jw_u64(w, "max", a->max_wait);
    jw_obj_end(w);
    jw_obj(w, "hold_cycles");
    jw_u64(w, "total", a->w_hold);
    jw_u64(w, "weight", a->w_nonirq);
    jw_u64(w, "mean", g->mean_hold);
    jw_u64(w, "p50", g->hold_p50);
    jw_u64(w, "p99", g->hold_p99);
    jw_u64(w, "max", a->max_hold);
    jw_obj_end(w);
    jw_u64(w, "irq_skipped", a->irq);
    jw_arr(w, "irql");
    for (unsigned i = 0; i < ETL_SPIN_IRQLS; i++) {
        if (!a->irql[i]) continue;
        jw_obj(w, NULL);
        jw_u64(w, "irql", i);
        jw_u64(w, "count", a->irql[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "modes");
    for (unsigned i = 0; i < ETL_SPIN_MODES; i++) {
        if (!a->mode[i]) continue;
        jw_obj(w, NULL);
        if (i + 1 < ETL_SPIN_MODES) jw_u64(w, "mode", i);
        else jw_null(w, "mode");
        jw_str(w, "name", i + 1 < ETL_SPIN_MODES ? mode_name(i) : "Other");
        jw_u64(w, "count", a->mode[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_u64(w, "threads", g->nthreads);
    jw_arr(w, "tids");
    for (uint32_t i = 0; i < g->nthreads; i++) jw_u64(w, NULL, g->tids[i]);
    jw_arr_end(w);
    jw_u64(w, "cpus", g->ncpus);
    jw_arr(w, "cpu_list");
    for (uint32_t i = 0; i < g->ncpus; i++) jw_u64(w, NULL, g->cpus[i]);
    jw_arr_end(w);
    jw_bool(w, "saturated", a->saturated);
    jw_obj_end(w);
}

static void json_params(jw *w, const etl_spinlock_info *p, const spin_params *src, uint32_t mhz)
{
    jw_obj(w, "sampling");
    jw_u64(w, "spin_threshold", p->spin_lock_spin_threshold);
    jw_u64(w, "acquire_sample_rate", p->spin_lock_acquire_sample_rate);
    jw_u64(w, "contention_sample_rate", p->spin_lock_contention_sample_rate);
    jw_u64(w, "hold_threshold", p->has_hold_threshold ? p->spin_lock_hold_threshold : 0);
    jw_obj(w, "source");
    jw_str(w, "spin_threshold", src->s);
    jw_str(w, "acquire_sample_rate", src->a);
    jw_str(w, "contention_sample_rate", src->m);
    jw_str(w, "hold_threshold", src->h);
    jw_obj_end(w);
    jw_bool(w, "exact", 0);
    jw_str(w, "note", "every N-th acquisition per CPU from an unknown counter phase: k events mean N*k +/- (N-1) per "
                      "CPU; an L event may also have been the N-th; contentions with fewer than S spins are not "
                      "logged unless held longer than H; the trace does not record S, A, M, H");
    if (mhz) jw_u64(w, "cpu_mhz", mhz);
    else jw_null(w, "cpu_mhz");
    jw_obj_end(w);
}

void spin_params_defaults(spin_params *sp)
{
    memset(sp, 0, sizeof *sp);
    sp->p = etl_spinlock_info_defaults();
    sp->p.has_hold_threshold = true;
    sp->s = sp->a = sp->m = sp->h = "default";
}

void spin_params_for_trace(spin_params *sp, const etl_logfile_header *h)
{
    /* SpinLockHoldThreshold exists from Windows 8.1 (6.3): before it no lock is logged for its hold alone. */
    if (!sp->have_h && (h->os_major < 6 || (h->os_major == 6 && h->os_minor < 3))) {
        sp->p.spin_lock_hold_threshold = 0;
        sp->h = "none before Windows 8.1";
    }
    sp->any_assumed = strcmp(sp->s, "given") || strcmp(sp->a, "given") || strcmp(sp->m, "given") ||
                      strcmp(sp->h, "given");
}

void spinlocks_json(jw *w, const rep_run *run, const etl_spinlocks *s, const spin_params *src, uint64_t filtered,
                    const rep_args *a)
{
    rep_json_head(w, run, s->o.v0, s->o.v1, etl_sched_cpu_count(run->model));
    json_params(w, &s->o.params, src, s->o.mhz);
    jw_u64(w, "events", s->events);
    jw_u64(w, "events_outside_window", s->outside);
    jw_u64(w, "events_filtered", filtered);
    jw_obj(w, "estimates");
    json_bounds(w, "acquisitions", &s->acquisitions);
    json_bounds(w, "uncontended", &s->uncontended);
    json_bounds(w, "contended", &s->contended);
    jw_obj_end(w);
    jw_str(w, "total_note", "per lock and caller estimates have no bounds: each CPU's counter is shared by all locks");
    json_group(w, "total", &s->total, K_TOTAL);
    const etl_spin_group *lists[] = {s->locks, s->callers, s->pairs, s->modes};
    size_t counts[] = {s->nlocks, s->ncallers, s->npairs, s->nmodes};
    static const char *const keys[] = {"locks", "callers", "pairs", "modes"};
    unsigned top = list_top(a);
    for (unsigned k = 0; k < 4; k++) {
        jw_arr(w, keys[k]);
        for (size_t i = 0; i < counts[k] && (!top || i < top); i++) json_group(w, NULL, &lists[k][i], k);
        jw_arr_end(w);
    }
    /* How many each list has: the arrays above hold the first `top` of them. */
    jw_obj(w, "groups");
    for (unsigned k = 0; k < 4; k++) jw_u64(w, keys[k], counts[k]);
    if (top) jw_u64(w, "top", top);
    else jw_null(w, "top");
    jw_obj_end(w);
    jw_arr(w, "per_cpu");
    for (size_t i = 0; i < s->ncpus; i++) {
        const etl_spin_cpu *k = &s->cpus[i];
        if (!(k->u | k->c | k->l0 | k->l1 | k->x)) continue;
        jw_obj(w, NULL);
        jw_u64(w, "cpu", i);
        jw_u64(w, "uncontended", k->u);
        jw_u64(w, "contended", k->c);
        jw_u64(w, "hold_uncontended", k->l0);
        jw_u64(w, "hold_contended", k->l1);
        jw_u64(w, "unexplained", k->x);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    rep_json_anomalies_as(run, w, a->skip);
    jw_obj(w, "spinlock_anomalies");
    jw_u64(w, "spinlock_unexplained", s->total.a.cls[ETL_SPIN_X]);
    jw_u64(w, "irq_skipped", s->total.a.irq);
    jw_u64(w, "hold_at_threshold", s->hold_at_threshold);
    jw_u64(w, "release_before_acquire", s->backwards_hold);
    jw_u64(w, "cells_dropped", s->cells_dropped);
    jw_u64(w, "values_dropped", s->values_dropped);
    jw_u64(w, "distinct_dropped", s->distinct_dropped);
    jw_obj_end(w);
}

/* The top entries of a histogram as "2:90% 5:10%". */
static const char *mix(char *out, size_t cap, const uint64_t *h, unsigned n, uint64_t total, int modes)
{
    out[0] = 0;
    if (!total) return out;
    unsigned used[3] = {0};
    size_t len = 0;
    for (unsigned r = 0; r < 3; r++) {
        unsigned best = n;
        for (unsigned i = 0; i < n; i++) {
            int taken = 0;
            for (unsigned j = 0; j < r; j++) taken |= used[j] == i;
            if (!taken && h[i] && (best == n || h[i] > h[best])) best = i;
        }
        if (best == n) break;
        used[r] = best;
        char nm[24];
        static const char *const short_modes[ETL_SPIN_MODES] = {"Spin", "Queued", "ExShared", "ExExclusive",
                                                                "ExConverted", "Other"};
        if (modes) snprintf(nm, sizeof nm, "%s", short_modes[best]);
        else snprintf(nm, sizeof nm, best + 1 < ETL_SPIN_IRQLS ? "%u" : "%u+", best);
        len += (size_t)snprintf(out + len, cap - len, "%s%s:%llu%%", r ? " " : "", nm,
                                (unsigned long long)(h[best] * 100 / total));
        if (len >= cap) break;
    }
    return out;
}

#define NCOLS 18
static const char *const text_head[NCOLS] = {
    "=Events", "=Est. acq", "=Est. cont", "=Collision %", "=% CPU acq", "=Spins mean", "=Spins max",
    "=Wait mean", "=Wait p99", "=Wait max", "=Hold mean", "=Hold p99", "=Hold max", "=IRQ skip", "IRQL", "Mode",
    "=Threads", "=CPUs"};

/* The value columns of a row for people. */
static void text_cells(const etl_spin_group *g, char b[NCOLS][48])
{
    const etl_spin_acc *a = &g->a;
    col_u64(b[0], a->events);
    col_u64(b[1], a->est_acq);
    col_u64(b[2], a->est_contended);
    fmt_fixed(b[3], g->collision_pct / 100, 2);
    if (g->acq_pct >= 0) fmt_fixed(b[4], g->acq_pct, 4);
    else strcpy(b[4], "-");
    fmt_fixed(b[5], (int64_t)g->mean_spins_x1000 / 10, 2);
    col_u64(b[6], a->max_spins);
    col_u64(b[7], g->mean_wait);
    col_u64(b[8], g->wait_p99);
    col_u64(b[9], a->max_wait);
    col_u64(b[10], g->mean_hold);
    col_u64(b[11], g->hold_p99);
    col_u64(b[12], a->max_hold);
    col_u64(b[13], a->irq);
    mix(b[14], 48, a->irql, ETL_SPIN_IRQLS, a->events, 0);
    mix(b[15], 48, a->mode, ETL_SPIN_MODES, a->events, 1);
    col_u64(b[16], g->nthreads);
    col_u64(b[17], g->ncpus);
}

static void text_table(const char *title, const etl_spin_group *g, size_t n, unsigned kind, unsigned top)
{
    const char *head[NCOLS + 2];
    unsigned nk = kind == K_PAIRS ? 2 : 1;
    head[0] = kind == K_CALLERS ? "Caller" : kind == K_MODES ? "AcquireMode" : "Lock";
    if (kind == K_PAIRS) head[1] = "Caller";
    memcpy(head + nk, text_head, sizeof text_head);
    tbl t;
    if (tbl_init(&t, NCOLS + nk, head)) return;
    for (size_t i = 0; i < n && i < top; i++) {
        char keys[2][32], b[NCOLS][48];
        const char *row[NCOLS + 2];
        if (kind == K_CALLERS) row[0] = hex(keys[0], g[i].caller);
        else if (kind == K_MODES) row[0] = mode_name(g[i].mode);
        else row[0] = hex(keys[0], g[i].lock);
        if (kind == K_PAIRS) row[1] = hex(keys[1], g[i].caller);
        text_cells(&g[i], b);
        for (unsigned k = 0; k < NCOLS; k++) row[nk + k] = b[k];
        tbl_row(&t, row);
    }
    printf("\n%s (%zu; wait and hold in cycles, sorted by total wait)\n", title, n);
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
}

static const char *bound_text(char out[96], const etl_spin_bounds *b)
{
    if (b->hi_known) snprintf(out, 96, "%llu (true count %llu..%llu)", (unsigned long long)b->est,
                              (unsigned long long)b->lo, (unsigned long long)b->hi);
    else snprintf(out, 96, "%llu (true count at least %llu; no upper bound with S > 1)", (unsigned long long)b->est,
                  (unsigned long long)b->lo);
    return out;
}

static void print_params_text(const etl_spinlock_info *p, const spin_params *src, uint32_t mhz)
{
    printf("Sampling: spin threshold S=%u (%s), acquire rate A=1/%u (%s), contention rate M=1/%u (%s), "
           "hold threshold H=",
           p->spin_lock_spin_threshold, src->s, p->spin_lock_acquire_sample_rate, src->a,
           p->spin_lock_contention_sample_rate, src->m);
    if (p->has_hold_threshold && p->spin_lock_hold_threshold) printf("%u cycles (%s)", p->spin_lock_hold_threshold, src->h);
    else printf("none (%s)", src->h);
    if (mhz) printf("; CPU %u MHz (nominal)\n", mhz);
    else printf("; CPU speed unknown: no %% of CPU\n");
    if (src->any_assumed)
        printf("The trace does not record these; the defaults above are assumed. If it was recorded with others,\n"
               "give --spin-threshold, --acquire-rate, --contention-rate, --hold-threshold.\n");
    printf("Estimates cannot be exact: each CPU logs every N-th acquisition from an unknown counter phase, an\n"
           "event held past H may also have been the N-th, and contentions with fewer than S spins are not logged.\n");
}

static void print_text(const rep_args *a, const rep_run *run, const ctx *c, const spin_params *src)
{
    const etl_spinlocks *s = &c->s;
    const etl_spin_acc *t = &s->total.a;
    char b1[96], b2[96], b3[96], f1[32], f2[32], f3[32];
    rep_print_header(run, "etlkit spinlocks");
    print_params_text(&s->o.params, src, s->o.mhz);
    printf("\n%llu events in the window: %llu held > H, %llu contended (spins >= S), %llu uncontended, "
           "%llu unexplained; %llu left out of hold figures (interrupts)\n",
           (unsigned long long)t->events, (unsigned long long)t->cls[ETL_SPIN_L],
           (unsigned long long)t->cls[ETL_SPIN_C], (unsigned long long)t->cls[ETL_SPIN_U],
           (unsigned long long)t->cls[ETL_SPIN_X], (unsigned long long)t->irq);
    printf("Estimated acquisitions %s\n  uncontended %s\n  contended %s\n", bound_text(b1, &s->acquisitions),
           bound_text(b2, &s->uncontended), bound_text(b3, &s->contended));
    if (s->total.acq_pct >= 0)
        printf("CPU spent acquiring %s%% (contended %s%%); collision %s%%; %s acquisitions/s\n",
               fmt_fixed(f1, s->total.acq_pct, 4), fmt_fixed(f2, s->total.cont_pct, 4),
               fmt_fixed(f3, s->total.collision_pct / 100, 2), fmt_fixed(b1, s->total.acq_rate, 3));
    printf("Per lock and caller estimates have no bounds: a CPU's sampling counter is shared by all locks.\n");
    unsigned top = list_top(a) ? list_top(a) : UINT_MAX;
    text_table("Locks", s->locks, s->nlocks, K_LOCKS, top);
    text_table("Callers (release functions)", s->callers, s->ncallers, K_CALLERS, top);
    text_table("Lock and caller pairs", s->pairs, s->npairs, K_PAIRS, top);
    text_table("AcquireMode", s->modes, s->nmodes, K_MODES, top);
    if (t->cls[ETL_SPIN_X])
        printf("note: %llu events fit no logging rule under these parameters (spinlock_unexplained): "
               "are S, A, M, H right?\n", (unsigned long long)t->cls[ETL_SPIN_X]);
    if (s->hold_at_threshold)
        printf("note: %llu events held exactly H cycles (whether the kernel logs > H or >= H is unknown)\n",
               (unsigned long long)s->hold_at_threshold);
    if (s->cells_dropped)
        printf("note: %llu events of locks and callers past the limit of %u (lock, caller, AcquireMode) cells are in the "
               "totals and estimates, not per lock, caller, pair or mode nor in percentiles\n",
               (unsigned long long)s->cells_dropped, ETL_SPIN_MAX_CELLS);
    if (s->values_dropped > s->cells_dropped)
        printf("note: %llu hold and wait values not kept (past %llu, or out of memory): percentiles inexact\n",
               (unsigned long long)(s->values_dropped - s->cells_dropped), (unsigned long long)s->o.max_values);
    if (s->distinct_dropped)
        printf("note: %llu (lock, thread or CPU) pairs past the limit of %u not kept: thread and CPU counts are lower "
               "bounds\n", (unsigned long long)s->distinct_dropped, ETL_SPIN_MAX_DISTINCT);
    if (c->filtered) printf("note: %llu events of other threads left out\n", (unsigned long long)c->filtered);
    rep_print_anomalies(run, stdout);
}

static const char *const csv_head[] = {
    "kind", "lock", "caller", "mode", "events", "class_hold", "class_contended", "class_uncontended",
    "class_unexplained", "est_acquisitions", "est_contended", "collision_pct", "acquisition_cpu_pct",
    "contention_cpu_pct", "spins_total", "spins_mean", "spins_max", "wait_total", "wait_mean", "wait_p50", "wait_p99",
    "wait_max", "hold_total", "hold_mean", "hold_p50", "hold_p99", "hold_max", "irq_skipped", "threads", "cpus"};
#define CSV_NCOLS (sizeof csv_head / sizeof csv_head[0])

static void csv_row(tbl *t, const etl_spin_group *g, unsigned kind)
{
    char b[CSV_NCOLS][32];
    const char *row[CSV_NCOLS];
    const etl_spin_acc *a = &g->a;
    strcpy(b[0], kind_key[kind]);
    if (kind == K_LOCKS || kind == K_PAIRS) hex(b[1], g->lock);
    else b[1][0] = 0;
    if (kind == K_CALLERS || kind == K_PAIRS) hex(b[2], g->caller);
    else b[2][0] = 0;
    if (kind == K_MODES) col_u64(b[3], g->mode);
    else b[3][0] = 0;
    col_u64(b[4], a->events);
    for (unsigned k = 0; k < 4; k++) col_u64(b[5 + k], a->cls[k]);
    col_u64(b[9], a->est_acq);
    col_u64(b[10], a->est_contended);
    fmt_fixed(b[11], g->collision_pct, 4);
    if (g->acq_pct >= 0) {
        fmt_fixed(b[12], g->acq_pct, 4);
        fmt_fixed(b[13], g->cont_pct, 4);
    } else {
        b[12][0] = b[13][0] = 0;
    }
    col_u64(b[14], a->w_spins);
    fmt_fixed(b[15], (int64_t)g->mean_spins_x1000, 3);
    col_u64(b[16], a->max_spins);
    col_u64(b[17], a->w_wait);
    col_u64(b[18], g->mean_wait);
    col_u64(b[19], g->wait_p50);
    col_u64(b[20], g->wait_p99);
    col_u64(b[21], a->max_wait);
    col_u64(b[22], a->w_hold);
    col_u64(b[23], g->mean_hold);
    col_u64(b[24], g->hold_p50);
    col_u64(b[25], g->hold_p99);
    col_u64(b[26], a->max_hold);
    col_u64(b[27], a->irq);
    col_u64(b[28], g->nthreads);
    col_u64(b[29], g->ncpus);
    for (unsigned k = 0; k < CSV_NCOLS; k++) row[k] = b[k];
    tbl_row(t, row);
}

static void print_csv(const rep_args *a, const ctx *c)
{
    const etl_spinlocks *s = &c->s;
    tbl t;
    if (tbl_init(&t, CSV_NCOLS, csv_head)) return;
    if (s->total.a.events) csv_row(&t, &s->total, K_TOTAL);
    const etl_spin_group *lists[] = {s->locks, s->callers, s->pairs, s->modes};
    size_t counts[] = {s->nlocks, s->ncallers, s->npairs, s->nmodes};
    unsigned top = list_top(a);
    for (unsigned k = 0; k < 4; k++)
        for (size_t i = 0; i < counts[k] && (!top || i < top); i++) csv_row(&t, &lists[k][i], k);
    tbl_print_csv(&t, stdout, 0);
    tbl_free(&t);
}

/* ---- options ------------------------------------------------------------------------------ */

typedef struct opts {
    etl_spinlock_info params;
    params_src src;
    int have_h;
} opts;

/* An S, A, M or H given: the output says so. */
static int spin_given(const cli_opt *o, const char *value, char *err, size_t cap)
{
    (void)value, (void)err, (void)cap;
    *(const char **)o->ctx = "given";
    return 0;
}

int cmd_spinlocks(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "spinlocks");
    /* Spin locks need the events and the thread names at their moment: not the switches or readyings. */
    a.skip = REP_SKIP_SPINLOCKS;
    a.top = SPIN_TOP_UNSET;
    opts o = {etl_spinlock_info_defaults(), {"default", "default", "default", "default", 0}, 0};
    const cli_opt own[] = {
        {.kind = CLI_OPT_UINT, .name = "spin-threshold", .arg = "N", .help = "SpinLockSpinThreshold S (default 1)",
         .dst = &o.params.spin_lock_spin_threshold, .size = 4, .max = UINT32_MAX, .need = "a number",
         .check = spin_given, .ctx = &o.src.s},
        {.kind = CLI_OPT_UINT, .name = "acquire-rate", .arg = "N",
         .help = "SpinLockAcquireSampleRate A (default 1000)", .dst = &o.params.spin_lock_acquire_sample_rate,
         .size = 4, .max = UINT32_MAX, .need = "a number", .check = spin_given, .ctx = &o.src.a},
        {.kind = CLI_OPT_UINT, .name = "contention-rate", .arg = "N",
         .help = "SpinLockContentionSampleRate M (default 1)", .dst = &o.params.spin_lock_contention_sample_rate,
         .size = 4, .max = UINT32_MAX, .need = "a number", .check = spin_given, .ctx = &o.src.m},
        {.kind = CLI_OPT_UINT, .name = "hold-threshold", .arg = "CYCLES",
         .help = "SpinLockHoldThreshold H (default 1000000; 0 = none; none before Windows 8.1 unless given)",
         .dst = &o.params.spin_lock_hold_threshold, .size = 4, .max = UINT32_MAX, .need = "a number",
         .check = spin_given, .ctx = &o.src.h, .seen = &o.have_h},
        CLI_END};
    char epilogue[600];
    snprintf(epilogue, sizeof epilogue,
             "--process and --thread select events by their ThreadId. --top applies to every list: by\n"
             "default the text shows 20 of each, JSON and CSV %u (the totals are always over every event).\n"
             "Locks, callers and pairs are kept in %u (lock, caller, AcquireMode) cells: the events of\n"
             "further ones count in the totals, not per lock (the output says how many).\n"
             "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n",
             SPIN_LIST_TOP, ETL_SPIN_MAX_CELLS);
    const cli_cmd cmd = {"spinlocks", "FILE [OPTIONS]", spin_about, {"FILE"}, 1, 1, epilogue};
    int pr = rep_parse(&a, &cmd, own, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    spin_params sp = {o.params, o.src.s, o.src.a, o.src.m, o.src.h, 0, o.have_h};
    sp.p.has_hold_threshold = true;
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_spinlock_info_validate(&sp.p, &d) != ETL_OK)
        return cli_usage_error("spinlocks", "%s (the kernel refuses it)", d.msg);
    ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    rep_run run;
    c.run = &run;
    int rc = rep_run_open(&run, &a, NULL, &c, on_event);
    if (rc != EXIT_OK) return rc;
    const etl_logfile_header *h = etl_reader_header(run.in.reader);
    spin_params_for_trace(&sp, h);
    etl_spinlocks_options so = {sizeof so, a.v0, a.has_range ? a.v1 : a.v0, sp.p, h->cpu_speed_mhz,
                                etl_reader_cpu_count(run.in.reader), 0};
    if (etl_spinlocks_init(&c.s, etl_reader_clock(run.in.reader), &so) != ETL_OK) {
        fprintf(stderr, "%s spinlocks: out of memory\n", prog);
        etl_spinlocks_free(&c.s);
        rep_run_close(&run);
        return EXIT_IO;
    }
    rep_run_go(&run, &a);
    if (c.s.o.ncpu < etl_sched_cpu_count(run.model)) c.s.o.ncpu = etl_sched_cpu_count(run.model);
    if (etl_spinlocks_finish(&c.s, run.end_ns) != ETL_OK) {
        fprintf(stderr, "%s spinlocks: out of memory\n", prog);
        rc = EXIT_IO;
    } else if (a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        spinlocks_json(&w, &run, &c.s, &sp, c.filtered, &a);
        jw_obj_end(&w);
        jw_end(&w);
    } else if (!c.s.events) {
        if (a.format == FMT_TEXT)
            printf("%s: no spin lock events in this trace (PERF_SPINLOCK was not enabled): nothing to report\n",
                   run.in.path);
        else print_csv(&a, &c);
    } else if (a.format == FMT_CSV) {
        print_csv(&a, &c);
    } else {
        print_text(&a, &run, &c, &sp);
    }
    if (rc == EXIT_OK && a.format != FMT_TEXT && a.top == SPIN_TOP_UNSET && !a.quiet &&
        (c.s.nlocks > SPIN_LIST_TOP || c.s.ncallers > SPIN_LIST_TOP || c.s.npairs > SPIN_LIST_TOP))
        fprintf(stderr, "%s spinlocks: %s: the first %u of %zu locks, %zu callers and %zu pairs listed (the most "
                "waited on; --top N for more, 0 for all)\n", prog, run.in.path, SPIN_LIST_TOP, c.s.nlocks, c.s.ncallers,
                c.s.npairs);
    etl_spinlocks_free(&c.s);
    int rc2 = rep_finish(&run, "spinlocks");
    return rc == EXIT_OK ? rc2 : rc;
}

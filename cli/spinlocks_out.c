/*
 * spinlocks_out.c - `etlkit spinlocks`' outputs: the rows' columns (lock, caller, pair, AcquireMode, total; per
 * CPU) declared once and rendered to text, JSON (also the report page's) and CSV, and the text's notes.
 */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "columns.h"
#include "spinlocks_out.h"
#include "etlkit/spinlocks.h"

/* The most rows of each list (0: all) a format gives. */
unsigned spinlocks_list_top(const rep_args *a)
{
    if (a->top != SPIN_TOP_UNSET) return a->top;
    return a->format == FMT_TEXT ? 20 : SPIN_LIST_TOP;
}

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

/* The notes on the bounds (a selection's, lost events), joined; 0 when none. */
static int bounds_note(char *out, size_t cap, const etl_spinlocks *s)
{
    char l[256];
    out[0] = 0;
    if (s->bounds_selection) snprintf(out, cap, "%s", ETL_SPIN_SELECTION_NOTE);
    if (s->lost)
        snprintf(out + strlen(out), cap - strlen(out), "%s%s", out[0] ? "; " : "",
                 etl_spin_lost_text(s->lost, l, sizeof l));
    return out[0] != 0;
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

/* The top entries of a histogram (etl_spin_top_shares) as "2:90% 5:10%". */
static const char *mix(char *out, size_t cap, const uint64_t *h, unsigned n, uint64_t total, int modes)
{
    static const char *const short_modes[ETL_SPIN_MODES] = {"Spin", "Queued", "ExShared", "ExExclusive",
                                                            "ExConverted", "Other"};
    unsigned idx[3];
    int64_t pct[3];
    size_t len = 0;
    out[0] = 0;
    for (unsigned r = 0, k = etl_spin_top_shares(h, n, total, idx, pct); r < k && len < cap; r++) {
        char nm[24];
        if (modes) snprintf(nm, sizeof nm, "%s", short_modes[idx[r]]);
        else snprintf(nm, sizeof nm, idx[r] + 1 < n ? "%u" : "%u+", idx[r]); /* the last: that IRQL or above */
        len += (size_t)snprintf(out + len, cap - len, "%s%s:%lld%%", r ? " " : "", nm, (long long)pct[r]);
    }
    return out;
}

/* ---- the rows' columns (lock, caller, pair, AcquireMode, total): text, CSV and JSON from one table ---- */

/* What the getters share: the list the row is in (K_*), and the CPUs' array for per_cpu's rows. */
typedef struct rows_ctx {
    unsigned kind;
    const etl_spin_cpu *cpus;
} rows_ctx;

#define GETTER(name) static void name(const col_def *col, const void *cx, const void *row, col_val *v)
#define PUTTER(name) static void name(jw *w, const char *key, const void *cx, const void *row)
#define G ((const etl_spin_group *)row)
#define KIND (((const rows_ctx *)cx)->kind)
/* A key column is in the rows of the kinds in its mask (col->off), left out of the others. */
#define IN_KIND (col->off & 1u << KIND)
GETTER(g_kind)
{
    (void)col, (void)row;
    cv_str(v, kind_key[KIND]);
}
GETTER(g_lock)
{
    if (IN_KIND) cv_str(v, hex(v->buf, G->lock));
    else cv_none(v);
}
GETTER(g_caller)
{
    if (IN_KIND) cv_str(v, hex(v->buf, G->caller));
    else cv_none(v);
}
GETTER(g_mode)
{
    if (IN_KIND) cv_u64(v, G->mode);
    else cv_none(v);
}
GETTER(g_mode_name)
{
    if (IN_KIND) cv_str(v, mode_name(G->mode));
    else cv_none(v);
}
/* The % of CPU acquiring and contending: null without the CPU's speed, or of a saturated sum. */
GETTER(g_cpu_pct)
{
    col_i64_at(col, cx, row, v);
    if (v->i < 0) cv_null(v);
}
/* A weighted sum (Σw, Σw·wait, ...): null when it saturated (it reads UINT64_MAX: not the sum). */
GETTER(g_wsum)
{
    col_u64_at(col, cx, row, v);
    if (G->a.saturated && v->u == UINT64_MAX) cv_null(v);
}
/* A weighted mean: null of no event, or of a saturated sum (ETL_SPIN_UNKNOWN). */
GETTER(g_mean)
{
    uint64_t x;
    memcpy(&x, (const char *)row + col->off, sizeof x);
    if (!G->a.events || x == ETL_SPIN_UNKNOWN) cv_null(v);
    else if (COL_UNIT(col->unit) == COL_FIXED) col_i64_at(col, cx, row, v); /* thousandths: COL_FIXED reads an i64 */
    else cv_u64(v, x);
}
GETTER(g_mean_hold)
{
    if (G->a.w_nonirq) g_mean(col, cx, row, v);
    else cv_null(v);
}
/* A share or rate the library could not compute (-1: no acquisition, a 0 ns window): null, not 0. */
GETTER(g_known)
{
    col_i64_at(col, cx, row, v);
    if (v->i < 0) cv_null(v);
}
/* A max of the group's events (wait, spins): null when it has none. */
GETTER(g_of_events)
{
    if (!G->a.events) cv_null(v);
    else col_u64_at(col, cx, row, v);
}
/* The max of the events without interrupts (hold): null when none is left. */
GETTER(g_of_holds)
{
    if (G->a.w_nonirq) col_u64_at(col, cx, row, v);
    else cv_null(v);
}
/* A percentile: null when no value underlies it (ETL_SPIN_UNKNOWN: no such event, or none of its values kept). */
GETTER(g_rank)
{
    col_u64_at(col, cx, row, v);
    if (v->u == ETL_SPIN_UNKNOWN) cv_null(v);
}
GETTER(g_irql_mix)
{
    (void)col, (void)cx;
    cv_str(v, mix(v->buf, 48, G->a.irql, ETL_SPIN_IRQLS, G->a.events, 0));
}
GETTER(g_mode_mix)
{
    (void)col, (void)cx;
    cv_str(v, mix(v->buf, 48, G->a.mode, ETL_SPIN_MODES, G->a.events, 1));
}
GETTER(g_saturated)
{
    (void)col, (void)cx;
    cv_bool(v, G->a.saturated);
}
PUTTER(put_irql)
{
    (void)cx;
    jw_arr(w, key);
    for (unsigned i = 0; i < ETL_SPIN_IRQLS; i++) {
        if (!G->a.irql[i]) continue;
        jw_obj(w, NULL);
        jw_u64(w, "irql", i);
        jw_u64(w, "count", G->a.irql[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}
PUTTER(put_modes)
{
    (void)cx;
    jw_arr(w, key);
    for (unsigned i = 0; i < ETL_SPIN_MODES; i++) {
        if (!G->a.mode[i]) continue;
        jw_obj(w, NULL);
        if (i + 1 < ETL_SPIN_MODES) jw_u64(w, "mode", i);
        else jw_null(w, "mode");
        jw_str(w, "name", i + 1 < ETL_SPIN_MODES ? mode_name(i) : "Other");
        jw_u64(w, "count", G->a.mode[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}
/* The distinct TIDs and CPUs, ascending. */
PUTTER(put_tids)
{
    (void)cx;
    jw_arr(w, key);
    for (uint32_t i = 0; i < G->nthreads; i++) jw_u64(w, NULL, G->tids[i]);
    jw_arr_end(w);
}
PUTTER(put_cpus)
{
    (void)cx;
    jw_arr(w, key);
    for (uint32_t i = 0; i < G->ncpus; i++) jw_u64(w, NULL, G->cpus[i]);
    jw_arr_end(w);
}
GETTER(g_irql)
{
    (void)col, (void)cx, (void)row;
    cv_put(v, put_irql);
}
GETTER(g_modes)
{
    (void)col, (void)cx, (void)row;
    cv_put(v, put_modes);
}
GETTER(g_tids)
{
    (void)col, (void)cx, (void)row;
    cv_put(v, put_tids);
}
GETTER(g_cpu_list)
{
    (void)col, (void)cx, (void)row;
    cv_put(v, put_cpus);
}
GETTER(g_cpu)
{
    (void)col;
    cv_u64(v, (uint64_t)((const etl_spin_cpu *)row - ((const rows_ctx *)cx)->cpus));
}
#undef G
#undef KIND
#undef IN_KIND

#define M(k) (1u << (k))
#define U(f) COL_COUNT, 0, col_u64_at, offsetof(etl_spin_group, f)
#define W(f) COL_COUNT | COL_NULL_EMPTY, 0, g_wsum, offsetof(etl_spin_group, f)
#define U32(f) COL_COUNT, 0, col_u32_at, offsetof(etl_spin_group, f)
#define KNOWN(d, f) COL_FIXED | COL_NULL_EMPTY, d, g_known, offsetof(etl_spin_group, f)
#define EV(f) COL_COUNT | COL_NULL_EMPTY, 0, g_of_events, offsetof(etl_spin_group, f)
#define HOLD(f) COL_COUNT | COL_NULL_EMPTY, 0, g_of_holds, offsetof(etl_spin_group, f)
#define RANK(f) COL_COUNT | COL_NULL_EMPTY, 0, g_rank, offsetof(etl_spin_group, f)
#define OBJ(key) {NULL, NULL, key, COL_OBJ, 0, NULL, 0}
#define END {NULL, NULL, NULL, COL_END, 0, NULL, 0}
/* The key columns first (NKEY_COLS), each with the mask of the kinds that have it. */
static const col_def group_cols[] = {
    {NULL, "kind", NULL, COL_TEXT, 0, g_kind, 0},
    {"Lock", "lock", "lock", COL_TEXT, 0, g_lock, M(K_LOCKS) | M(K_PAIRS)},
    {"Caller", "caller", "caller", COL_TEXT, 0, g_caller, M(K_CALLERS) | M(K_PAIRS)},
    {"AcquireMode", NULL, NULL, COL_TEXT, 0, g_mode_name, M(K_MODES)},
    {NULL, "mode", "mode", COL_COUNT, 0, g_mode, M(K_MODES)},
    {NULL, NULL, "mode_name", COL_TEXT, 0, g_mode_name, M(K_MODES)},
#define NKEY_COLS 6
    {"=Events", "events", "events", U(a.events)},
    OBJ("classes"),
    {NULL, "class_hold", "hold", U(a.cls[ETL_SPIN_L])},
    {NULL, "class_contended", "contended", U(a.cls[ETL_SPIN_C])},
    {NULL, "class_uncontended", "uncontended", U(a.cls[ETL_SPIN_U])},
    {NULL, "class_unexplained", "unexplained", U(a.cls[ETL_SPIN_X])},
    END,
    {NULL, NULL, "contended_events", U(a.contended)},
    {"=Est. acq", "est_acquisitions", "est_acquisitions", W(a.est_acq)},
    {"=Est. cont", "est_contended", "est_contended", W(a.est_contended)},
    {"=Collision %", "collision_pct", "collision_pct", KNOWN(COL_DECIMALS(4, 2), collision_pct)},
    {"=% CPU acq", "acquisition_cpu_pct", "acquisition_cpu_pct", COL_FIXED | COL_NULL_EMPTY, 4, g_cpu_pct,
     offsetof(etl_spin_group, acq_pct)},
    {NULL, "contention_cpu_pct", "contention_cpu_pct", COL_FIXED | COL_NULL_EMPTY, 4, g_cpu_pct,
     offsetof(etl_spin_group, cont_pct)},
    OBJ("rates_per_s"),
    {NULL, NULL, "acquisitions", KNOWN(3, acq_rate)},
    {NULL, NULL, "contentions", KNOWN(3, cont_rate)},
    {NULL, NULL, "spins", KNOWN(3, spin_rate)},
    END,
    OBJ("spins"),
    {NULL, "spins_total", "total", W(a.w_spins)},
    {"=Spins mean", "spins_mean", "mean", COL_FIXED | COL_NULL_EMPTY, COL_DECIMALS(3, 2), g_mean,
     offsetof(etl_spin_group, mean_spins_x1000)},
    {"=Spins max", "spins_max", "max", EV(a.max_spins)},
    END,
    OBJ("wait_cycles"),
    {NULL, "wait_total", "total", W(a.w_wait)},
    {NULL, NULL, "total_contended", W(a.w_wait_contended)},
    {"=Wait mean", "wait_mean", "mean", COL_COUNT | COL_NULL_EMPTY, 0, g_mean, offsetof(etl_spin_group, mean_wait)},
    {NULL, "wait_p50", "p50", RANK(wait_p50)},
    {"=Wait p99", "wait_p99", "p99", RANK(wait_p99)},
    {"=Wait max", "wait_max", "max", EV(a.max_wait)},
    END,
    OBJ("hold_cycles"),
    {NULL, "hold_total", "total", W(a.w_hold)},
    {NULL, NULL, "weight", W(a.w_nonirq)},
    {"=Hold mean", "hold_mean", "mean", COL_COUNT | COL_NULL_EMPTY, 0, g_mean_hold,
     offsetof(etl_spin_group, mean_hold)},
    {NULL, "hold_p50", "p50", RANK(hold_p50)},
    {"=Hold p99", "hold_p99", "p99", RANK(hold_p99)},
    {"=Hold max", "hold_max", "max", HOLD(a.max_hold)},
    END,
    {"=IRQ skip", "irq_skipped", "irq_skipped", U(a.irq)},
    {NULL, NULL, "release_before_acquire", U(a.no_hold)},
    {NULL, NULL, "hold_impossible", U(a.bad_hold)},
    {NULL, NULL, "irql", COL_COUNT, 0, g_irql, 0},
    {"IRQL", NULL, NULL, COL_TEXT, 0, g_irql_mix, 0},
    {NULL, NULL, "modes", COL_COUNT, 0, g_modes, 0},
    {"Mode", NULL, NULL, COL_TEXT, 0, g_mode_mix, 0},
    {"=Threads", "threads", "threads", U32(nthreads)},
    {NULL, NULL, "tids", COL_COUNT, 0, g_tids, 0},
    {"=CPUs", "cpus", "cpus", U32(ncpus)},
    {NULL, NULL, "cpu_list", COL_COUNT, 0, g_cpu_list, 0},
    {NULL, NULL, "saturated", COL_COUNT, 0, g_saturated, 0},
};
#undef U
#undef W
#undef U32
#undef KNOWN
#undef EV
#undef HOLD
#undef RANK
#define NGROUP_COLS (sizeof group_cols / sizeof group_cols[0])

/* per_cpu's rows: each CPU's events by class. */
#define U(f) COL_COUNT, 0, col_u64_at, offsetof(etl_spin_cpu, f)
static const col_def cpu_cols[] = {
    {NULL, NULL, "cpu", COL_COUNT, 0, g_cpu, 0},
    {NULL, NULL, "uncontended", U(u)},
    {NULL, NULL, "contended", U(c)},
    {NULL, NULL, "hold_uncontended", U(l0)},
    {NULL, NULL, "hold_contended", U(l1)},
    {NULL, NULL, "unexplained", U(x)},
};
#undef U
#undef OBJ
#undef END

static void json_group(jw *w, const char *key, const etl_spin_group *g, unsigned kind)
{
    rows_ctx rc = {kind, NULL};
    cols_json_row(w, key, group_cols, NGROUP_COLS, &rc, g);
}

static void json_params(jw *w, const etl_spin_params *sp, uint32_t mhz)
{
    const etl_spinlock_info *p = &sp->p;
    jw_obj(w, "sampling");
    jw_u64(w, "spin_threshold", p->spin_lock_spin_threshold);
    jw_u64(w, "acquire_sample_rate", p->spin_lock_acquire_sample_rate);
    jw_u64(w, "contention_sample_rate", p->spin_lock_contention_sample_rate);
    jw_u64(w, "hold_threshold", p->has_hold_threshold ? p->spin_lock_hold_threshold : 0);
    jw_obj(w, "source");
    static const char *const keys[] = {"spin_threshold", "acquire_sample_rate", "contention_sample_rate",
                                       "hold_threshold"};
    for (unsigned i = 0; i < 4; i++) jw_str(w, keys[i], etl_spin_param_source(sp->src[i]));
    jw_obj_end(w);
    jw_bool(w, "exact", 0);
    jw_str(w, "note", "every N-th acquisition per CPU from an unknown counter phase: k events mean N*k +/- (N-1) per "
                      "CPU; an L event may also have been the N-th; contentions with fewer than S spins are not "
                      "logged unless held longer than H; the trace does not record S, A, M, H");
    if (mhz) jw_u64(w, "cpu_mhz", mhz);
    else jw_null(w, "cpu_mhz");
    jw_obj_end(w);
}

bool spinlocks_cut(const etl_spinlocks *s) { return s->known_ns < s->window_cpu_ns; }

const char *spinlocks_known_text(const etl_spinlocks *s, char *out, size_t cap)
{
    char k[32], w[32];
    snprintf(out, cap, "the file is cut short: the rates and %% CPU are over the %s s of CPU time it holds of the "
             "window's %s s (each CPU until its last record; no event could be seen after it)",
             fmt_fixed(k, s->known_ns / 1000, 6), fmt_fixed(w, s->window_cpu_ns / 1000, 6));
    return out;
}

void spinlocks_json(jw *w, const rep_run *run, const etl_spinlocks *s, const etl_spin_params *sp, uint64_t filtered,
                    const rep_args *a)
{
    rep_json_head(w, run, s->o.v0, s->o.v1, etl_sched_cpu_count(run->model));
    json_params(w, sp, s->o.mhz);
    jw_u64(w, "events", s->events);
    jw_u64(w, "events_outside_window", s->outside);
    jw_u64(w, "events_filtered", filtered);
    /* The CPU time the rates and shares are over: less than the window's when the file is cut short. */
    jw_i64(w, "window_cpu_ns", s->window_cpu_ns);
    jw_i64(w, "known_cpu_ns", s->known_ns);
    jw_obj(w, "estimates");
    json_bounds(w, "acquisitions", &s->acquisitions);
    json_bounds(w, "uncontended", &s->uncontended);
    json_bounds(w, "contended", &s->contended);
    jw_obj_end(w);
    char note[512];
    if (bounds_note(note, sizeof note, s)) jw_str(w, "bounds_note", note);
    else jw_null(w, "bounds_note");
    jw_str(w, "total_note", "per lock and caller estimates have no bounds: each CPU's counter is shared by all locks");
    json_group(w, "total", &s->total, K_TOTAL);
    const etl_spin_group *lists[] = {s->locks, s->callers, s->pairs, s->modes};
    size_t counts[] = {s->nlocks, s->ncallers, s->npairs, s->nmodes};
    static const char *const keys[] = {"locks", "callers", "pairs", "modes"};
    unsigned top = spinlocks_list_top(a);
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
    rows_ctx rc = {K_TOTAL, s->cpus};
    for (size_t i = 0; i < s->ncpus; i++) {
        const etl_spin_cpu *k = &s->cpus[i];
        if (k->u | k->c | k->l0 | k->l1 | k->x) cols_json_row(w, NULL, cpu_cols, sizeof cpu_cols / sizeof cpu_cols[0], &rc, k);
    }
    jw_arr_end(w);
    rep_json_anomalies_as(run, w, a->skip);
    jw_obj(w, "spinlock_anomalies");
    jw_u64(w, "spinlock_unexplained", s->total.a.cls[ETL_SPIN_X]);
    jw_u64(w, "irq_skipped", s->total.a.irq);
    jw_u64(w, "hold_at_threshold", s->hold_at_threshold);
    jw_u64(w, "release_before_acquire", s->backwards_hold);
    jw_u64(w, "hold_impossible", s->impossible_hold);
    jw_u64(w, "cells_dropped", s->cells_dropped);
    jw_u64(w, "values_dropped", s->values_dropped);
    jw_u64(w, "distinct_dropped", s->distinct_dropped);
    jw_obj_end(w);
}

/* One list's table for people: its key columns (those whose kinds include this one) and the values. */
static void text_table(const char *title, const etl_spin_group *g, size_t n, unsigned kind, unsigned top)
{
    col_def cols[NGROUP_COLS];
    size_t nc = 0;
    for (size_t i = 0; i < NGROUP_COLS; i++)
        if (i >= NKEY_COLS || (group_cols[i].head && (group_cols[i].off & 1u << kind))) cols[nc++] = group_cols[i];
    rows_ctx rc = {kind, NULL};
    tbl t;
    if (cols_tbl_init(&t, cols, nc, 0)) return;
    for (size_t i = 0; i < n && i < top; i++) cols_tbl_row(&t, cols, nc, 0, &rc, &g[i]);
    printf("\n%s (%zu; wait and hold in cycles, sorted by total wait)\n", title, n);
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
}

static const char *bound_text(char out[96], const etl_spin_bounds *b, uint32_t lost)
{
    if (b->hi_known) snprintf(out, 96, "%llu (true count %llu..%llu)", (unsigned long long)b->est,
                              (unsigned long long)b->lo, (unsigned long long)b->hi);
    else snprintf(out, 96, "%llu (true count at least %llu; no upper bound %s)", (unsigned long long)b->est,
                  (unsigned long long)b->lo, lost ? "with events lost" : "with S > 1");
    return out;
}

static void print_params_text(const etl_spin_params *sp, uint32_t mhz)
{
    const etl_spinlock_info *p = &sp->p;
    printf("Sampling: spin threshold S=%u (%s), acquire rate A=1/%u (%s), contention rate M=1/%u (%s), "
           "hold threshold H=",
           p->spin_lock_spin_threshold, etl_spin_param_source(sp->src[0]), p->spin_lock_acquire_sample_rate,
           etl_spin_param_source(sp->src[1]), p->spin_lock_contention_sample_rate, etl_spin_param_source(sp->src[2]));
    const char *h = etl_spin_param_source(sp->src[3]);
    if (p->has_hold_threshold && p->spin_lock_hold_threshold) printf("%u cycles (%s)", p->spin_lock_hold_threshold, h);
    else printf("none (%s)", h);
    if (mhz) printf("; CPU %u MHz (nominal)\n", mhz);
    else printf("; CPU speed unknown: no %% of CPU\n");
    if (etl_spin_params_assumed(sp))
        printf("The trace does not record these; the defaults above are assumed. If it was recorded with others,\n"
               "give --spin-threshold, --acquire-rate, --contention-rate, --hold-threshold.\n");
    printf("Estimates cannot be exact: each CPU logs every N-th acquisition from an unknown counter phase, an\n"
           "event held past H may also have been the N-th, and contentions with fewer than S spins are not logged.\n");
}

/* The events whose hold cannot be computed, and where the first lies. */
void spinlocks_backwards_text(FILE *f, const etl_spinlocks *s)
{
    char t[32];
    fprintf(f, "%llu SpinLock events released before they were acquired (ReleaseTime < AcquireTime: "
            "release_before_acquire), the first on CPU %u at %s s: no hold, left out of the hold figures",
            (unsigned long long)s->backwards_hold, s->backwards_first_cpu, fmt_fixed(t, s->backwards_first_ns / 1000, 6));
}

/* The events whose times are no hold the kernel measured, why, and where the first lies. */
void spinlocks_impossible_text(FILE *f, const etl_spinlocks *s)
{
    char t[32];
    fprintf(f, "%llu SpinLock events whose AcquireTime and ReleaseTime are no hold the kernel measured (a time of 0, a "
            "hold past %u s at %u MHz%s%s: hold_impossible), the first on CPU %u at %s s (AcquireTime %llu, "
            "ReleaseTime %llu): no hold, left out of the hold figures",
            (unsigned long long)s->impossible_hold, ETL_SPIN_MAX_HOLD_S, s->o.mhz ? s->o.mhz : ETL_SPIN_MAX_HOLD_MHZ,
            s->o.mhz ? "" : " (the header has no CPU speed: no CPU counts faster)",
            s->clock && s->clock->type == ETL_CLOCK_CPU_CYCLES ? ", or a ReleaseTime that is not the event's own time"
                                                                : "",
            s->impossible_first_cpu, fmt_fixed(t, s->impossible_first_ns / 1000, 6),
            (unsigned long long)s->impossible_first_acquire, (unsigned long long)s->impossible_first_release);
}

void spinlocks_text(const rep_args *a, const rep_run *run, const etl_spinlocks *s, const etl_spin_params *sp)
{
    const etl_spin_acc *t = &s->total.a;
    char b1[96], b2[96], b3[96], f1[32], f2[32], f3[32];
    rep_print_header(run, "etlkit spinlocks");
    print_params_text(sp, s->o.mhz);
    printf("\n%llu events in the window: %llu held > H, %llu contended (spins >= S), %llu uncontended, "
           "%llu unexplained; %llu left out of hold figures (interrupts)\n",
           (unsigned long long)t->events, (unsigned long long)t->cls[ETL_SPIN_L],
           (unsigned long long)t->cls[ETL_SPIN_C], (unsigned long long)t->cls[ETL_SPIN_U],
           (unsigned long long)t->cls[ETL_SPIN_X], (unsigned long long)t->irq);
    if (t->no_hold)
        printf("  and %llu more left out of hold figures (released before acquired: no hold)\n",
               (unsigned long long)t->no_hold);
    if (t->bad_hold)
        printf("  and %llu more left out of hold figures (times no hold can have: hold_impossible)\n",
               (unsigned long long)t->bad_hold);
    printf("Estimated acquisitions %s\n  uncontended %s\n  contended %s\n",
           bound_text(b1, &s->acquisitions, s->lost), bound_text(b2, &s->uncontended, s->lost),
           bound_text(b3, &s->contended, s->lost));
    if (s->bounds_selection) printf("Note: %s.\n", ETL_SPIN_SELECTION_NOTE);
    if (s->lost) {
        char l[256];
        printf("Note: %s.\n", etl_spin_lost_text(s->lost, l, sizeof l));
    }
    /* Each figure alone: the collision and the rate need no CPU speed, the shares do ("-" when unknown). */
    if (s->total.acq_pct >= 0)
        printf("CPU spent acquiring %s%% (contended %s%%); ", fmt_fixed(f1, s->total.acq_pct, 4),
               fmt_fixed(f2, s->total.cont_pct, 4));
    else
        printf("CPU spent acquiring - (%s); ", !s->o.mhz               ? "CPU speed unknown"
                                               : s->o.v1 <= s->o.v0     ? "a 0 ns window"
                                               : s->known_ns <= 0       ? "the file holds none of the window"
                                                                        : "a sum past 2^64");
    if (s->total.collision_pct >= 0)
        printf("collision %s%%; ", fmt_fixed(f3, div_round_sat(s->total.collision_pct, 100), 2));
    else
        printf("collision -; ");
    printf("%s acquisitions/s\n", s->total.acq_rate < 0 ? strcpy(b1, "-") : fmt_fixed(b1, s->total.acq_rate, 3));
    char cut[256];
    if (spinlocks_cut(s)) printf("Note: %s.\n", spinlocks_known_text(s, cut, sizeof cut));
    printf("Per lock and caller estimates have no bounds: a CPU's sampling counter is shared by all locks.\n");
    unsigned top = spinlocks_list_top(a) ? spinlocks_list_top(a) : UINT_MAX;
    text_table("Locks", s->locks, s->nlocks, K_LOCKS, top);
    text_table("Callers (release functions)", s->callers, s->ncallers, K_CALLERS, top);
    text_table("Lock and caller pairs", s->pairs, s->npairs, K_PAIRS, top);
    text_table("AcquireMode", s->modes, s->nmodes, K_MODES, top);
    if (t->cls[ETL_SPIN_X])
        printf("note: %llu events fit no logging rule under these parameters (spinlock_unexplained): "
               "are S, A, M, H right?\n", (unsigned long long)t->cls[ETL_SPIN_X]);
    if (s->backwards_hold) {
        printf("note: ");
        spinlocks_backwards_text(stdout, s);
        printf("\n");
    }
    if (s->impossible_hold) {
        printf("note: ");
        spinlocks_impossible_text(stdout, s);
        printf("\n");
    }
    if (s->hold_at_threshold)
        printf("note: %llu events held exactly H cycles (whether the kernel logs > H or >= H is unknown)\n",
               (unsigned long long)s->hold_at_threshold);
    if (s->cells_dropped)
        printf("note: %llu events of locks and callers past the limit of %u (lock, caller, AcquireMode) cells are in the "
               "totals and estimates, not per lock, caller, pair or mode nor in percentiles\n",
               (unsigned long long)s->cells_dropped, ETL_SPIN_MAX_CELLS);
    if (t->saturated)
        printf("note: weighted sums past 2^64 (weights times cycles or spins: values no lock reaches, or rates the "
               "events were not sampled at): \"-\" for them and what is made of them\n");
    if (s->values_dropped > s->cells_dropped)
        printf("note: %llu hold and wait values not kept (past %llu, or out of memory): percentiles are over the values "
               "kept, \"-\" where none was\n",
               (unsigned long long)(s->values_dropped - s->cells_dropped), (unsigned long long)s->o.max_values);
    if (s->distinct_dropped)
        printf("note: %llu (lock, thread or CPU) pairs past the limit of %u not kept: thread and CPU counts are lower "
               "bounds\n", (unsigned long long)s->distinct_dropped, ETL_SPIN_MAX_DISTINCT);
    if (s->filtered) printf("note: %llu events of other threads left out\n", (unsigned long long)s->filtered);
    rep_print_anomalies(run, stdout);
}

void spinlocks_csv(const rep_args *a, const etl_spinlocks *s)
{
    tbl t;
    if (cols_tbl_init(&t, group_cols, NGROUP_COLS, 1)) return;
    rows_ctx rc = {K_TOTAL, NULL};
    if (s->total.a.events) cols_tbl_row(&t, group_cols, NGROUP_COLS, 1, &rc, &s->total);
    const etl_spin_group *lists[] = {s->locks, s->callers, s->pairs, s->modes};
    size_t counts[] = {s->nlocks, s->ncallers, s->npairs, s->nmodes};
    unsigned top = spinlocks_list_top(a);
    for (rc.kind = 0; rc.kind < 4; rc.kind++)
        for (size_t i = 0; i < counts[rc.kind] && (!top || i < top); i++)
            cols_tbl_row(&t, group_cols, NGROUP_COLS, 1, &rc, &lists[rc.kind][i]);
    tbl_print_sheet(&t, stdout);
    tbl_free(&t);
}


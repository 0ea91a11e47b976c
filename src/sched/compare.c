/*
 * compare.c - two traces' `cpu` and `waits` reports (etl_usage) side by side,
 * matched by name since ids differ between traces: processes by image name,
 * threads by "image/thread name", waits by reason. Amounts (CPU time, waiting
 * time, switch-ins) are per second of each trace's window, so traces of
 * different lengths compare; latency percentiles are durations and stay as they
 * are. Several process instances of one name are summed; their percentiles
 * cannot be merged from the summaries, so a name's percentile is the largest of
 * its instances' (an upper bound of the merged one, exact with one instance:
 * p_exact). A value that cannot be computed (an amount per second of a 0 ns
 * window, a percentile of no value) is marked unknown (known_*), never 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/sat.h"
#include "base/sort.h"
#include "out/num.h"
#include "etlkit/compare.h"
#include "etlkit/sched.h"

int64_t etl_per_second(int64_t v, int64_t window_ns)
{
    if (window_ns <= 0) return 0;
    return div_round_sat((__int128)v * 1000000000, window_ns);
}

static int64_t per_second_milli(uint64_t n, int64_t window_ns)
{
    if (window_ns <= 0) return 0;
    return div_round_sat((__int128)n * 1000000000000, window_ns);
}

const char *etl_cmp_metric_name(unsigned metric)
{
    static const char *const n[] = {"cpu", "wait", "switches", "ready_p50", "ready_p90", "ready_p99", "ready_max"};
    return metric < ETL_CMP_NMETRICS ? n[metric] : "?";
}

typedef struct entry {
    char *name;
    uint8_t scope, side;
    uint8_t known;          /* bit m: v[m] is known */
    uint32_t instances;
    int64_t v[ETL_CMP_NMETRICS];
} entry;

typedef struct list {
    entry *e;
    size_t n, cap;
    bool nomem;
} list;

static void add(list *l, uint8_t scope, uint8_t side, const char *name, const int64_t *v, uint8_t known)
{
    if (l->n == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 64;
        entry *p = realloc(l->e, cap * sizeof *p);
        if (!p) {
            l->nomem = true;
            return;
        }
        l->e = p;
        l->cap = cap;
    }
    entry *x = &l->e[l->n];
    x->name = strdup(name);
    if (!x->name) {
        l->nomem = true;
        return;
    }
    x->scope = scope;
    x->side = side;
    x->known = known;
    x->instances = 1;
    memcpy(x->v, v, sizeof x->v);
    l->n++;
}

#define BIT(m) (uint8_t)(1u << (m))
#define AMOUNTS (BIT(ETL_CMP_CPU) | BIT(ETL_CMP_WAIT) | BIT(ETL_CMP_SWITCHES))
#define PERCENTILES (BIT(ETL_CMP_READY_P50) | BIT(ETL_CMP_READY_P90) | BIT(ETL_CMP_READY_P99) | BIT(ETL_CMP_READY_MAX))

/* The percentiles, known when there is a value to take them of. */
static uint8_t lat(int64_t *v, const etl_latency *l)
{
    v[ETL_CMP_READY_P50] = l->p50_ns;
    v[ETL_CMP_READY_P90] = l->p90_ns;
    v[ETL_CMP_READY_P99] = l->p99_ns;
    v[ETL_CMP_READY_MAX] = l->max_ns;
    return l->count ? PERCENTILES : 0;
}

/* A reason row's metrics: waiting time, waits per second (the switches slot), the longest wait (max). */
#define REASON_KNOWN (BIT(ETL_CMP_WAIT) | BIT(ETL_CMP_SWITCHES) | BIT(ETL_CMP_READY_MAX))

static const char *proc_name(const etl_sched *m, uint32_t process)
{
    const etl_sched_process *p = etl_sched_process_at(m, process);
    return p && p->name ? etl_sched_names(m) + p->name : "Unknown";
}

/* Sums saturate: a damaged trace can make any one of them near the type's limit. */
static void gather(list *l, const etl_usage *u, uint8_t side, etl_cmp_row *total, int64_t *window)
{
    int64_t w;
    if (__builtin_sub_overflow(u->o.v1, u->o.v0, &w)) w = u->o.v1 > u->o.v0 ? INT64_MAX : INT64_MIN;
    *window = w;
    int64_t v[ETL_CMP_NMETRICS];
    memset(v, 0, sizeof v);
    int64_t busy = 0, seen = 0, wait = 0;
    uint64_t sw = 0;
    for (size_t c = 0; c < u->ncpus; c++) {
        add_sat(&busy, u->cpus[c].busy_ns);
        add_sat(&seen, u->cpus[c].busy_ns);
        add_sat(&seen, u->cpus[c].idle_ns);
    }
    /*
     * What a side can tell: amounts per second need a window and some CPU time known in it (none
     * in a trace without switches); waiting time needs Waits, which only a switch-in with a
     * ReadyThread has (spec §1 rule 3): with none of those, every wait is blank, not 0.
     */
    uint8_t amounts = w > 0 && seen > 0 ? BIT(ETL_CMP_CPU) | BIT(ETL_CMP_SWITCHES) : 0;
    if (amounts && etl_usage_waits_known(u)) amounts |= BIT(ETL_CMP_WAIT);
    uint8_t waits = amounts & BIT(ETL_CMP_WAIT) ? REASON_KNOWN : 0;
    for (unsigned r = 0; r < 64; r++) add_sat(&wait, u->reasons[r].wait_ns);
    for (size_t i = 0; i < u->nthreads; i++) add_sat_u64(&sw, u->threads[i].switches);
    v[ETL_CMP_CPU] = etl_per_second(busy, w);
    v[ETL_CMP_WAIT] = etl_per_second(wait, w);
    v[ETL_CMP_SWITCHES] = per_second_milli(sw, w);
    uint8_t known = amounts | lat(v, &u->ready_all);
    memcpy(side ? total->after : total->before, v, sizeof v);
    if (side) total->in_after = 1, total->known_after = known;
    else total->in_before = 1, total->known_before = known;
    total->p_exact = 1;
    for (size_t i = 0; i < u->nprocesses; i++) {
        const etl_usage_process *p = &u->processes[i];
        memset(v, 0, sizeof v);
        v[ETL_CMP_CPU] = etl_per_second(p->cpu_ns, w);
        v[ETL_CMP_WAIT] = etl_per_second(p->wait_ns, w);
        v[ETL_CMP_SWITCHES] = per_second_milli(p->switches, w);
        known = amounts | lat(v, &p->ready);
        add(l, ETL_CMP_PROCESS, side, p->process == ETL_SCHED_NONE ? "Unknown" : proc_name(u->model, p->process), v,
            known);
    }
    for (size_t i = 0; i < u->nthreads; i++) {
        const etl_usage_thread *t = &u->threads[i];
        const etl_sched_thread *st = etl_sched_thread_at(u->model, t->thread);
        char name[600];
        snprintf(name, sizeof name, "%s/%s", st ? proc_name(u->model, st->process) : "Unknown",
                 st && st->name ? etl_sched_names(u->model) + st->name : "");
        memset(v, 0, sizeof v);
        v[ETL_CMP_CPU] = etl_per_second(t->cpu_ns, w);
        v[ETL_CMP_WAIT] = etl_per_second(t->wait_ns, w);
        v[ETL_CMP_SWITCHES] = per_second_milli(t->switches, w);
        known = amounts | lat(v, &t->ready);
        add(l, ETL_CMP_THREAD, side, name, v, known);
    }
    for (unsigned r = 0; r < 64; r++) {
        const etl_usage_reason *x = &u->reasons[r];
        if (!x->count) continue;
        char code[16];
        const char *rn = etl_wait_reason_name(r);
        if (!rn) {
            snprintf(code, sizeof code, "%u", r);
            rn = code;
        }
        memset(v, 0, sizeof v);
        v[ETL_CMP_WAIT] = etl_per_second(x->wait_ns, w);
        v[ETL_CMP_SWITCHES] = per_second_milli(x->count, w); /* waits per second */
        v[ETL_CMP_READY_MAX] = x->max_ns;                    /* the longest wait */
        add(l, ETL_CMP_REASON, side, rn, v, waits);
    }
}

static int by_scope_name_side(const void *a, const void *b)
{
    const entry *x = a, *y = b;
    if (x->scope != y->scope) return x->scope - y->scope;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    return x->side - y->side;
}

static uint64_t absdiff(const etl_cmp_row *r, unsigned m)
{
    int64_t a = r->after[m], b = r->before[m];
    return a > b ? (uint64_t)a - (uint64_t)b : (uint64_t)b - (uint64_t)a;
}

static int by_change(const void *a, const void *b)
{
    const etl_cmp_row *x = a, *y = b;
    unsigned m = x->scope == ETL_CMP_REASON ? ETL_CMP_WAIT : ETL_CMP_CPU;
    uint64_t dx = absdiff(x, m), dy = absdiff(y, m);
    if (dx != dy) return dx > dy ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* |b| (b != 0): a change is relative to the size of what it changes from. */
static __int128 abs128(int64_t b) { return b < 0 ? -(__int128)b : (__int128)b; }

static int64_t sat64(__int128 x)
{
    return x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : (int64_t)x;
}

int etl_cmp_change_pct(const etl_cmp_row *r, unsigned m, int64_t *out)
{
    *out = 0;
    if (m >= ETL_CMP_NMETRICS || !((r->known_before >> m) & 1) || !((r->known_after >> m) & 1))
        return ETL_CMP_CHANGE_NONE;
    int64_t b = r->before[m], a = r->after[m];
    if (b == 0) return a == 0 ? ETL_CMP_CHANGE_NONE : a > 0 ? ETL_CMP_CHANGE_NEW : ETL_CMP_CHANGE_NEW_NEG;
    *out = div_round_sat(((__int128)a - b) * 10000, abs128(b));
    return ETL_CMP_CHANGE_VALUE;
}

/* What is known of a name absent from a side, from what that side can tell (its total's bits). */
static uint8_t absent_known(uint8_t scope, uint8_t side)
{
    if (scope == ETL_CMP_REASON) /* waits per second are known where waiting time is */
        return side & BIT(ETL_CMP_WAIT) ? BIT(ETL_CMP_WAIT) | BIT(ETL_CMP_SWITCHES) : 0;
    return side & AMOUNTS;
}

etl_status etl_compare_build(etl_compare *c, const etl_usage *before, const etl_usage *after)
{
    memset(c, 0, sizeof *c);
    list l = {0};
    c->total.name = strdup("total");
    gather(&l, before, 0, &c->total, &c->window_before);
    gather(&l, after, 1, &c->total, &c->window_after);
    if (l.nomem || !c->total.name) goto nomem;
    etl_sort(l.e, l.n, sizeof *l.e, by_scope_name_side);
    etl_cmp_row *rows = calloc(l.n ? l.n : 1, sizeof *rows);
    if (!rows) goto nomem;
    size_t nr = 0;
    uint32_t inst[2] = {0, 0};
    for (size_t i = 0; i < l.n; i++) {
        entry *e = &l.e[i];
        etl_cmp_row *r = nr ? &rows[nr - 1] : NULL;
        if (!r || r->scope != e->scope || strcmp(r->name, e->name) != 0) {
            r = &rows[nr++];
            r->name = e->name;
            e->name = NULL;
            r->scope = e->scope;
            r->p_exact = 1;
            inst[0] = inst[1] = 0;
        }
        int64_t *v = e->side ? r->after : r->before;
        if (e->side) r->in_after = 1, r->known_after |= e->known;
        else r->in_before = 1, r->known_before |= e->known;
        if (++inst[e->side] > 1) r->p_exact = 0;
        add_sat(&v[ETL_CMP_CPU], e->v[ETL_CMP_CPU]);
        add_sat(&v[ETL_CMP_WAIT], e->v[ETL_CMP_WAIT]);
        add_sat(&v[ETL_CMP_SWITCHES], e->v[ETL_CMP_SWITCHES]);
        for (unsigned m = ETL_CMP_READY_P50; m < ETL_CMP_NMETRICS; m++)
            if ((e->known & BIT(m)) && e->v[m] > v[m]) v[m] = e->v[m];
    }
    /*
     * A name absent from a side: its amounts there are 0 where that side can tell them (it did not
     * run, did not wait), its percentiles and longest wait are of no value, unknown.
     */
    for (size_t i = 0; i < nr; i++) {
        etl_cmp_row *r = &rows[i];
        if (!r->in_before) r->known_before = absent_known(r->scope, c->total.known_before);
        if (!r->in_after) r->known_after = absent_known(r->scope, c->total.known_after);
    }
    /*
     * One side with ReadyThread events, the other with none (both with CPU time): the other's Ready
     * values are of preempted switch-ins only (spec §1 rule 2), not comparable: unknown.
     */
    uint8_t kb = c->total.known_before, ka = c->total.known_after;
    if ((kb & ka & BIT(ETL_CMP_CPU)) && ((kb ^ ka) & BIT(ETL_CMP_WAIT))) {
        bool in_after = !(ka & BIT(ETL_CMP_WAIT)); /* the side without */
        *(in_after ? &c->total.known_after : &c->total.known_before) &= (uint8_t)~PERCENTILES;
        for (size_t i = 0; i < nr; i++)
            if (rows[i].scope != ETL_CMP_REASON)
                *(in_after ? &rows[i].known_after : &rows[i].known_before) &= (uint8_t)~PERCENTILES;
    }
    for (size_t i = 0; i < l.n; i++) free(l.e[i].name);
    free(l.e);
    /* Split by scope (rows are sorted by scope), each sorted by the biggest change. */
    size_t counts[4] = {0};
    for (size_t i = 0; i < nr; i++) counts[rows[i].scope]++;
    etl_cmp_row *parts[4] = {NULL};
    for (unsigned s = 1; s < 4; s++) {
        parts[s] = malloc((counts[s] ? counts[s] : 1) * sizeof *parts[s]);
        if (!parts[s]) {
            for (size_t i = 0; i < nr; i++) free(rows[i].name);
            free(rows);
            for (unsigned k = 1; k < 4; k++) free(parts[k]);
            goto nomem_rows;
        }
    }
    size_t fill[4] = {0};
    for (size_t i = 0; i < nr; i++) parts[rows[i].scope][fill[rows[i].scope]++] = rows[i];
    free(rows);
    for (unsigned s = 1; s < 4; s++) etl_sort(parts[s], counts[s], sizeof *parts[s], by_change);
    c->processes = parts[ETL_CMP_PROCESS];
    c->nprocesses = counts[ETL_CMP_PROCESS];
    c->threads = parts[ETL_CMP_THREAD];
    c->nthreads = counts[ETL_CMP_THREAD];
    c->reasons = parts[ETL_CMP_REASON];
    c->nreasons = counts[ETL_CMP_REASON];
    return ETL_OK;
nomem:
    for (size_t i = 0; i < l.n; i++) free(l.e[i].name);
    free(l.e);
nomem_rows:
    etl_compare_free(c);
    return ETL_E_NOMEM;
}

void etl_compare_free(etl_compare *c)
{
    if (!c) return; /* as the handles' close: a cleanup path may free what it never made */
    free(c->total.name);
    etl_cmp_row *parts[3] = {c->processes, c->threads, c->reasons};
    size_t n[3] = {c->nprocesses, c->nthreads, c->nreasons};
    for (unsigned s = 0; s < 3; s++) {
        for (size_t i = 0; i < n[s]; i++) free(parts[s][i].name);
        free(parts[s]);
    }
    memset(c, 0, sizeof *c);
}

/* "svchost" matches "svchost.exe", case-insensitively. */
static bool image_match(const char *name, size_t nlen, const char *want, size_t wlen)
{
    if (nlen == wlen && strncasecmp(name, want, wlen) == 0) return true;
    return nlen == wlen + 4 && strncasecmp(name, want, wlen) == 0 && strncasecmp(name + wlen, ".exe", 4) == 0;
}

const etl_cmp_row *etl_compare_find(const etl_compare *c, unsigned scope, const char *name)
{
    if (scope == ETL_CMP_TOTAL) return &c->total;
    if (!name) return NULL; /* no name names no row */
    const etl_cmp_row *v = scope == ETL_CMP_PROCESS ? c->processes : scope == ETL_CMP_THREAD ? c->threads : c->reasons;
    size_t n = scope == ETL_CMP_PROCESS ? c->nprocesses : scope == ETL_CMP_THREAD ? c->nthreads : c->nreasons;
    const char *slash = scope == ETL_CMP_THREAD ? strchr(name, '/') : NULL;
    for (size_t i = 0; i < n; i++) {
        const char *rn = v[i].name;
        if (scope == ETL_CMP_THREAD) {
            const char *rs = strchr(rn, '/');
            if (!slash || !rs) continue;
            if (image_match(rn, (size_t)(rs - rn), name, (size_t)(slash - name)) && strcasecmp(rs + 1, slash + 1) == 0)
                return &v[i];
        } else if (image_match(rn, strlen(rn), name, strlen(name))) {
            return &v[i];
        }
    }
    return NULL;
}

/* ---- --fail-if ----------------------------------------------------------------- */

static etl_status bad(char *err, size_t cap, const char *msg)
{
    if (cap) snprintf(err, cap, "%s", msg);
    return ETL_E_INVALID_ARG;
}

etl_status etl_cmp_expr_parse(const char *s, etl_cmp_expr *e, char *err, size_t cap)
{
    memset(e, 0, sizeof *e);
    char buf[512];
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        if (*p == ' ' || *p == '\t') continue;
        if (n + 1 >= sizeof buf) return bad(err, cap, "expression too long");
        buf[n++] = *p;
    }
    buf[n] = 0;
    char *open = strchr(buf, '(');
    char *close = strrchr(buf, ')');
    if (!open || !close || close < open)
        return bad(err, cap, "expected METRIC(SCOPE) OP THRESHOLD, e.g. 'cpu(total) > +10%'");
    *open = 0;
    unsigned m;
    for (m = 0; m < ETL_CMP_NMETRICS; m++)
        if (strcmp(buf, etl_cmp_metric_name(m)) == 0) break;
    if (m == ETL_CMP_NMETRICS)
        return bad(err, cap, "unknown metric: use cpu, wait, switches, ready_p50, ready_p90, ready_p99 or ready_max");
    e->metric = (uint8_t)m;
    *close = 0;
    const char *scope = open + 1;
    const char *eq = strchr(scope, '=');
    if (strcmp(scope, "total") == 0) {
        e->scope = ETL_CMP_TOTAL;
    } else if (eq) {
        size_t k = (size_t)(eq - scope);
        if (k == 7 && strncmp(scope, "process", 7) == 0) e->scope = ETL_CMP_PROCESS;
        else if (k == 6 && strncmp(scope, "thread", 6) == 0) e->scope = ETL_CMP_THREAD;
        else if (k == 6 && strncmp(scope, "reason", 6) == 0) e->scope = ETL_CMP_REASON;
        else return bad(err, cap, "scope must be total, process=NAME, thread=PROCESS/NAME or reason=WAITREASON");
        if (!eq[1]) return bad(err, cap, "the scope needs a name after '='");
        if (strlen(eq + 1) >= sizeof e->name) return bad(err, cap, "name too long");
        strcpy(e->name, eq + 1);
        if (e->scope == ETL_CMP_THREAD && !strchr(e->name, '/'))
            return bad(err, cap, "thread=PROCESS/THREADNAME (threads are matched by name, ids differ)");
    } else {
        return bad(err, cap, "scope must be total, process=NAME, thread=PROCESS/NAME or reason=WAITREASON");
    }
    if (e->scope == ETL_CMP_REASON && e->metric != ETL_CMP_WAIT && e->metric != ETL_CMP_SWITCHES)
        return bad(err, cap, "reason=... goes with wait (time) or switches (waits per second)");
    const char *p = close + 1;
    if (p[0] == '>' && p[1] == '=') e->op = 1, p += 2;
    else if (p[0] == '<' && p[1] == '=') e->op = 3, p += 2;
    else if (p[0] == '>') e->op = 0, p += 1;
    else if (p[0] == '<') e->op = 2, p += 1;
    else return bad(err, cap, "expected an operator >, >=, < or <= after the scope");
    int neg = 0;
    if (*p == '+' || *p == '-') neg = *p++ == '-';
    if (!(*p >= '0' && *p <= '9') && *p != '.') return bad(err, cap, "expected a number after the operator");
    const char *number = p;
    /* Digits, a fraction (9 digits kept) and a power of ten ("1.5e3"), computed exactly in 128 bits. */
    uint64_t whole = 0, frac = 0, scale = 1;
    bool big = false, finer = false; /* finer: a step below the threshold's, refused, never cut (1e-5% is no 0 %) */
    for (; *p >= '0' && *p <= '9'; p++) {
        if (whole > (UINT64_MAX - 9) / 10) big = true;
        else whole = whole * 10 + (uint64_t)(*p - '0');
    }
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (scale < 1000000000ull) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                scale *= 10;
            } else {
                finer |= *p != '0';
            }
        }
    }
    long ex = 0;
    if ((*p == 'e' || *p == 'E') && ((p[1] >= '0' && p[1] <= '9') ||
                                     ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
        bool eneg = p[1] == '-';
        p += 1 + (p[1] == '+' || p[1] == '-');
        for (; *p >= '0' && *p <= '9'; p++)
            if (ex < 100000) ex = ex * 10 + (*p - '0');
        if (eneg) ex = -ex;
    }
    uint64_t unit;
    const char *uname;
    bool time_metric = e->metric != ETL_CMP_SWITCHES;
    if (strcmp(p, "%") == 0) {
        e->relative = 1;
        unit = 100; /* hundredths of a percent */
        uname = "%";
    } else if (!*p) {
        if (time_metric) return bad(err, cap, "a time threshold needs a unit (ns, us, ms, s) or %");
        unit = 1000; /* thousandths of a switch per second */
        uname = " switches per second";
    } else {
        if (!time_metric) return bad(err, cap, "switches take a plain number (per second) or %");
        /* A time as every option reads one (--range's parser): the same units (µs too) and whole ns. */
        unit = num_dur_unit(p);
        if (!unit) return bad(err, cap, "unknown unit: use %, ns, us, ms or s");
        uname = p;
        int64_t ns;
        int r = num_parse_dur(number, &ns);
        if (r == NUM_DUR_SUB_NS) return bad(err, cap, "a part of a nanosecond: times are whole nanoseconds");
        if (r == 0 && !big) {
            e->threshold = neg ? -ns : ns;
            return ETL_OK;
        }
    }
    unsigned __int128 v = ((unsigned __int128)whole * scale + frac) * unit;
    const unsigned __int128 limit = (unsigned __int128)INT64_MAX * scale;
    for (; ex > 0 && v && v <= limit; ex--) v *= 10;
    for (; ex < 0 && v; ex++) finer |= v % 10 != 0, v /= 10;
    finer |= v % scale != 0;
    v /= scale;
    if (big || v > INT64_MAX) {
        /* The threshold is an integer count of the unit's smallest step: say how far it goes. */
        char why[128];
        snprintf(why, sizeof why, "number out of range: at most %llu%s", (unsigned long long)(INT64_MAX / unit), uname);
        return bad(err, cap, why);
    }
    if (time_metric && !e->relative) return bad(err, cap, "a time has at most 18 digits after the point");
    if (finer)
        return bad(err, cap, e->relative ? "finer than a hundredth of a percent" : "finer than a thousandth of a switch per second");
    e->threshold = neg ? -(int64_t)v : (int64_t)v;
    return ETL_OK;
}

/* Whether the change from b to a crosses e's threshold; *delta as eval gives it. */
static int cross(const etl_cmp_expr *e, int64_t b, int64_t a, int64_t *delta)
{
    /* In 128 bits, then saturated: amounts from damaged traces can be near the limits. */
    __int128 x = (__int128)a - b, lhs = x, rhs = e->threshold;
    if (e->relative) {
        if (b == 0) {
            lhs = x = a > 0 ? INT64_MAX : a < 0 ? INT64_MIN : 0;
        } else {
            /* The gate compares the change exactly (x·10000/|b| against the threshold, both sides times |b|);
             * only *delta, shown, is rounded: +10.004 % crosses "> +10%". */
            lhs = x * 10000;
            rhs *= abs128(b);
            x = div_round_sat(lhs, abs128(b));
        }
    }
    *delta = sat64(x);
    switch (e->op) {
    case 0: return lhs > rhs;
    case 1: return lhs >= rhs;
    case 2: return lhs < rhs;
    default: return lhs <= rhs;
    }
}

void etl_compare_sides(const etl_usage *before, const etl_usage *after, etl_cmp_side sides[2])
{
    for (int k = 0; k < 2; k++) {
        const etl_usage *u = k ? after : before;
        int64_t unk = 0, seen = 0;
        for (size_t c = 0; c < u->ncpus; c++) {
            add_sat(&unk, u->cpus[c].unknown_ns);
            add_sat(&seen, u->cpus[c].busy_ns);
            add_sat(&seen, u->cpus[c].idle_ns);
        }
        add_sat(&seen, unk);
        sides[k] = (etl_cmp_side){unk, seen, false, u->model && !etl_sched_ready_events(u->model)};
    }
}

/* How much a side's unknown time could add to a row's CPU time per second of window (a thread runs on one CPU). */
static int64_t cpu_slack(const etl_compare *c, const etl_cmp_side *s, const etl_cmp_expr *e, int side)
{
    int64_t u = s[side].unknown_ns, w = side ? c->window_after : c->window_before;
    if (u <= 0) return 0;
    int64_t sl = etl_per_second(u, w);
    return e->scope == ETL_CMP_THREAD && sl > 1000000000 ? 1000000000 : sl;
}

/* The gate's value on both sides known, and its verdict the same for every value the unknown time allows. */
static int eval_known(const etl_compare *c, const etl_cmp_side *s, const etl_cmp_expr *e, const etl_cmp_row *r,
                      int64_t *delta, unsigned *undecided)
{
    *undecided = 0;
    if (e->metric >= ETL_CMP_NMETRICS) return -1;
    unsigned sides = s ? (s[0].unknown_ns > 0 ? 1u : 0u) | (s[1].unknown_ns > 0 ? 2u : 0u) : 0;
    unsigned lack = (r->known_before & BIT(e->metric) ? 0u : 1u) | (r->known_after & BIT(e->metric) ? 0u : 2u);
    if (lack) {
        /* Unknown on a damaged side alone (its waits all lost, say): what its lost records held, the damage's. */
        unsigned damaged = s ? sides & ((s[0].damaged ? 1u : 0u) | (s[1].damaged ? 2u : 0u)) : 0;
        /*
         * Not a side whose trace has no ReadyThread: its waits (a reason's switches too) are unknown undamaged, and
         * so are its percentiles beside a side that has them (another population); two sides without both lack a
         * percentile only for want of Ready values, which the damage may have taken.
         */
        unsigned nr = s ? (s[0].no_ready ? 1u : 0u) | (s[1].no_ready ? 2u : 0u) : 0;
        if (e->metric == ETL_CMP_WAIT || e->scope == ETL_CMP_REASON) damaged &= ~nr;
        else if (e->metric >= ETL_CMP_READY_P50 && nr != 3u) damaged &= ~nr;
        /* every damaged side with unknown time, as a known value's gate names them: a side's known waits are
         * short of what its unknown time held too */
        if ((lack & damaged) == lack) *undecided = damaged;
        return -1;
    }
    int64_t b = r->before[e->metric], a = r->after[e->metric];
    int v = cross(e, b, a, delta);
    if (!sides) return v;
    /* Waits, switch-ins and ready values the unknown time of a damaged side held are not seen, and nothing
     * bounds them. */
    if (e->metric != ETL_CMP_CPU) {
        sides &= (s[0].damaged ? 1u : 0u) | (s[1].damaged ? 2u : 0u);
        if (!sides) return v;
        *undecided = sides;
        *delta = 0;
        return -1;
    }
    /* CPU time: the change is smallest at (b + slack, a), largest at (b, a + slack), monotone between. */
    int64_t lo_b = b, hi_a = a, d;
    add_sat(&lo_b, cpu_slack(c, s, e, 0));
    add_sat(&hi_a, cpu_slack(c, s, e, 1));
    if (cross(e, lo_b, a, &d) == v && cross(e, b, hi_a, &d) == v) return v;
    *undecided = sides;
    *delta = 0;
    return -1;
}

int etl_cmp_expr_judge(const etl_compare *c, const etl_cmp_side sides[2], const etl_cmp_expr *e, int64_t *delta,
                       int *found, unsigned *undecided)
{
    const etl_cmp_row *r = etl_compare_find(c, e->scope, e->name);
    *found = r != NULL;
    *delta = 0;
    *undecided = 0;
    if (!r) return 0;
    /* A change from or to an unknown value is unknown: the gate cannot pass on it. */
    return eval_known(c, sides, e, r, delta, undecided);
}

int etl_cmp_expr_eval(const etl_compare *c, const etl_cmp_expr *e, int64_t *delta, int *found)
{
    unsigned undecided;
    return etl_cmp_expr_judge(c, NULL, e, delta, found, &undecided);
}

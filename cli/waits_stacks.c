/* waits_stacks.c - `waits --by stack`: see waits_stacks.h. */
#include "waits_stacks.h"

#include <stdlib.h>
#include <string.h>
#include "base/idmap.h"
#include "base/sort.h"
#include "columns.h"
#include "rep_json.h"

/* Time charged to one key: a stack, a tree node, a function. */
typedef struct wacc {
    int64_t wait_ns, ready_ns;
    uint64_t waits, readies;
} wacc;

/* A node of the callers' tree: a frame label under its parent (root: UINT32_MAX). */
typedef struct wnode {
    uint32_t parent, label;   /* label: offset in the arena */
    uint32_t last_stack;      /* flat: the last stack counted (a stack counts once per function) */
    wacc acc;
} wnode;

struct wstk {
    etl_sched_stacks *s;
    int readying;
    int64_t v0, v1;
    const rep_args *a;
    wacc *by_stack;           /* by stack id */
    size_t nstacks;
    wacc none, total;         /* rows with no stack; everything */
    uint64_t none_compact;    /* rows of compact batches among them (New Thread Stack) */
    wnode *n;
    uint32_t nn, capn;
    etl_idmap child;          /* hash of (parent, label bytes) -> first node of that hash; chained by probing */
    char *arena;
    size_t narena, caparena;
    int failed;
};

static int64_t clip(const wstk *w, int64_t a, int64_t b)
{
    if (a < w->v0) a = w->v0;
    if (w->v1 > w->v0 && b > w->v1) b = w->v1;
    int64_t d;
    return b > a ? (__builtin_sub_overflow(b, a, &d) ? INT64_MAX : d) : 0;
}

static int in_window(const wstk *w, int64_t t) { return t >= w->v0 && (w->v1 <= w->v0 || t < w->v1); }

wstk *wstk_new(etl_sched_stacks *s, int readying, int64_t v0, int64_t v1, const rep_args *a)
{
    wstk *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->s = s;
    w->readying = readying;
    w->v0 = v0;
    w->v1 = v1;
    w->a = a;
    w->nstacks = s ? etl_sched_stacks_stats_get(s)->stacks : 0;
    w->by_stack = calloc(w->nstacks ? w->nstacks : 1, sizeof *w->by_stack);
    etl_idmap_init(&w->child);
    if (!w->by_stack) {
        free(w);
        return NULL;
    }
    return w;
}

void wstk_free(wstk *w)
{
    if (!w) return;
    free(w->by_stack);
    free(w->n);
    free(w->arena);
    etl_idmap_free(&w->child);
    free(w);
}

/* The same rows and clipping as etl_usage_add's ready and wait totals. */
void wstk_row(wstk *w, const rep_run *run, const etl_sched_row *row)
{
    if ((row->flags & ETL_ROW_HEAD) || !(row->flags & ETL_ROW_READY_TIME)) return;
    if (row->new_thread == ETL_SCHED_IDLE || row->new_thread == ETL_SCHED_NONE) return;
    if ((w->a->process || w->a->thread >= 0) && !rep_thread_selected(w->a, run->model, row->new_thread)) return;
    int64_t ready = clip(w, row->rt, row->si), wait = 0;
    int counted_ready = ready > 0 || in_window(w, row->si), counted_wait = 0;
    if ((row->flags & ETL_ROW_PREV) && (row->flags & ETL_ROW_WAITED)) {
        wait = clip(w, row->lso, row->rt);
        counted_wait = wait > 0 || in_window(w, row->rt);
    }
    if (!counted_ready && !counted_wait) return;
    uint32_t id = w->readying ? etl_sched_stacks_row_readying(w->s, row) : etl_sched_stacks_row_new(w->s, row);
    wacc *acc = id != ETL_SCHED_STACK_NONE && id < w->nstacks ? &w->by_stack[id] : &w->none;
    if (acc == &w->none && !w->readying && row->in && row->in->source == ETL_CSW_SRC_COMPACT) w->none_compact++;
    for (int k = 0; k < 2; k++) {
        wacc *x = k ? &w->total : acc;
        if (counted_ready) add_sat(&x->ready_ns, ready), x->readies++;
        if (counted_wait) add_sat(&x->wait_ns, wait), x->waits++;
    }
}

/* ---- the tree ---- */

static uint64_t label_hash(uint32_t parent, const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull ^ parent;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return etl_hash_mix64(h);
}

/* The node of label under parent, made when new (UINT32_MAX: out of memory). Probing the hash: h, h+1, ... */
static uint32_t node_of(wstk *w, uint32_t parent, const char *s, size_t n)
{
    uint64_t h = label_hash(parent, s, n);
    for (;; h++) {
        uint32_t i = etl_idmap_get(&w->child, h);
        if (i == ETL_IDMAP_EMPTY) break;
        const char *l = w->arena + w->n[i].label;
        if (w->n[i].parent == parent && strlen(l) == n && memcmp(l, s, n) == 0) return i;
    }
    if (w->nn == w->capn) {
        uint32_t cap = w->capn ? w->capn * 2 : 1024;
        if (cap <= w->capn || cap == UINT32_MAX) return UINT32_MAX; /* past 2^31 nodes */
        wnode *v = realloc(w->n, (size_t)cap * sizeof *v);
        if (!v) return UINT32_MAX;
        w->n = v;
        w->capn = cap;
    }
    if (w->narena + n + 1 > w->caparena) {
        size_t cap = w->caparena ? w->caparena * 2 : 65536;
        while (cap < w->narena + n + 1) cap *= 2;
        char *p = realloc(w->arena, cap);
        if (!p) return UINT32_MAX;
        w->arena = p;
        w->caparena = cap;
    }
    memcpy(w->arena + w->narena, s, n);
    w->arena[w->narena + n] = 0;
    if (etl_idmap_put(&w->child, h, w->nn) != ETL_OK) return UINT32_MAX;
    w->n[w->nn] = (wnode){parent, (uint32_t)w->narena, UINT32_MAX, {0, 0, 0, 0}};
    w->narena += n + 1;
    return w->nn++;
}

static void acc_add(wacc *x, const wacc *y)
{
    add_sat(&x->wait_ns, y->wait_ns);
    add_sat(&x->ready_ns, y->ready_ns);
    x->waits += y->waits;
    x->readies += y->readies;
}

/* Every stack with time into the tree (root first), or flat (parent UINT32_MAX for every function). */
static int build(wstk *w, int flat)
{
    char label[1200];
    for (uint32_t id = 0; id < w->nstacks; id++) {
        const wacc *acc = &w->by_stack[id];
        if (!acc->waits && !acc->readies) continue;
        uint32_t n, parent = UINT32_MAX;
        const etl_profile_frame *f = etl_sched_stacks_frames(w->s, id, &n);
        for (uint32_t k = n; k-- > 0;) {
            size_t len = etl_sched_stacks_frame_label(w->s, &f[k], label, sizeof label);
            if (len >= sizeof label) len = sizeof label - 1;
            uint32_t i = node_of(w, flat ? UINT32_MAX : parent, label, len);
            if (i == UINT32_MAX) return -1;
            if (!flat || w->n[i].last_stack != id) acc_add(&w->n[i].acc, acc);
            w->n[i].last_stack = id;
            parent = i;
        }
    }
    return 0;
}

static int64_t weight(const wacc *x)
{
    int64_t s;
    return __builtin_add_overflow(x->wait_ns, x->ready_ns, &s) ? INT64_MAX : s;
}

/* Sorted index of the nodes by parent, then most time first (children of a node are a run). */
static const wstk *sort_ctx;
static int by_parent_weight(const void *a, const void *b)
{
    const wnode *x = &sort_ctx->n[*(const uint32_t *)a], *y = &sort_ctx->n[*(const uint32_t *)b];
    if (x->parent != y->parent) return x->parent < y->parent ? -1 : 1;
    int64_t wx = weight(&x->acc), wy = weight(&y->acc);
    if (wx != wy) return wx > wy ? -1 : 1;
    return strcmp(sort_ctx->arena + x->label, sort_ctx->arena + y->label);
}

typedef struct view {
    const wstk *w;
    uint32_t *order;     /* nodes by (parent, weight) */
    uint32_t *first;     /* by node (+1 for the roots, at [nn]): its first child in order, and count */
    uint32_t *count;
    unsigned top;
    int64_t min;         /* nodes below this share of the total are left out (the count says so) */
} view;

static void children(const view *v, uint32_t parent, uint32_t *first, uint32_t *count)
{
    uint32_t k = parent == UINT32_MAX ? v->w->nn : parent;
    *first = v->first[k];
    *count = v->count[k];
}

static void text_node(const view *v, uint32_t parent, unsigned depth)
{
    uint32_t first, count;
    children(v, parent, &first, &count);
    uint32_t shown = 0;
    for (uint32_t j = 0; j < count; j++) {
        const wnode *n = &v->w->n[v->order[first + j]];
        if ((v->top && shown >= v->top) || weight(&n->acc) < v->min) {
            printf("  %*s... %u more\n", 36 + 2 * (int)depth, "", (unsigned)(count - j));
            break;
        }
        shown++;
        char a[32], b[32], c[32];
        printf("  %12s %12s %8s  %*s%s\n", fmt_dur(a, n->acc.wait_ns), fmt_dur(b, n->acc.ready_ns),
               col_u64(c, n->acc.waits), 2 * (int)depth, "", v->w->arena + n->label);
        if (depth < 400) text_node(v, v->order[first + j], depth + 1);
    }
}

static void json_acc(jw *j, const wacc *x)
{
    jw_i64(j, "wait_ns", x->wait_ns);
    jw_i64(j, "ready_ns", x->ready_ns);
    jw_u64(j, "waits", x->waits);
    jw_u64(j, "readies", x->readies);
}

static void json_node(jw *j, const view *v, uint32_t parent, unsigned depth, int flat)
{
    uint32_t first, count;
    children(v, parent, &first, &count);
    jw_arr(j, flat ? "functions" : "children");
    uint32_t shown = 0;
    for (uint32_t k = 0; k < count; k++) {
        const wnode *n = &v->w->n[v->order[first + k]];
        if ((v->top && shown >= v->top) || weight(&n->acc) < v->min) break;
        shown++;
        jw_obj(j, NULL);
        jw_str(j, "frame", v->w->arena + n->label);
        json_acc(j, &n->acc);
        if (!flat && depth < 400) json_node(j, v, v->order[first + k], depth + 1, flat);
        jw_obj_end(j);
    }
    jw_arr_end(j);
    if (count > shown) {
        char k[32];
        snprintf(k, sizeof k, "%s_left_out", flat ? "functions" : "children");
        jw_u64(j, k, count - shown);
    }
}

int wstk_print(wstk *w, const rep_run *run, const rep_args *a, int flat, unsigned top)
{
    if (build(w, flat) != 0) return -1;
    view v = {w, malloc((w->nn ? w->nn : 1) * sizeof *v.order), calloc(w->nn + 1u, sizeof *v.first),
              calloc(w->nn + 1u, sizeof *v.count), top, 0};
    if (!v.order || !v.first || !v.count) {
        free(v.order);
        free(v.first);
        free(v.count);
        return -1;
    }
    for (uint32_t i = 0; i < w->nn; i++) v.order[i] = i;
    sort_ctx = w;
    etl_sort(v.order, w->nn, sizeof *v.order, by_parent_weight);
    for (uint32_t i = w->nn; i-- > 0;) {
        uint32_t p = w->n[v.order[i]].parent;
        uint32_t k = p == UINT32_MAX ? w->nn : p;
        v.first[k] = i;
        v.count[k]++;
    }
    /* A text tree shows what holds at least 0.5% of the time (the rest is counted); JSON and flat: --top alone. */
    v.min = flat || a->format == FMT_JSON ? 0 : weight(&w->total) / 200;
    const char *key = w->readying ? "readying_thread_stack" : "new_thread_stack";
    if (a->format == FMT_JSON) {
        jw j;
        jw_init(&j, stdout);
        jw_obj(&j, NULL);
        rep_json_head(&j, run, run->v0, run->v1, 0);
        jw_str(&j, "by", key);
        jw_bool(&j, "stacks_logged", w->s != NULL);
        json_acc(&j, &w->total);
        jw_obj(&j, "no_stack");
        json_acc(&j, &w->none);
        if (!w->readying) jw_u64(&j, "compact_rows", w->none_compact);
        jw_obj_end(&j);
        json_node(&j, &v, UINT32_MAX, 0, flat);
        jw_obj_end(&j);
        jw_end(&j);
    } else {
        rep_print_header(run, w->readying ? "etlkit waits --by readying-stack" : "etlkit waits --by stack");
        char x[32], y[32], z[32];
        printf("\n%s: waits %s (%s), ready %s; %s\n",
               w->readying ? "By Readying Thread Stack (where the readier was)"
                           : "By New Thread Stack (where the thread had blocked)",
               fmt_dur(x, w->total.wait_ns), col_u64(z, w->total.waits), fmt_dur(y, w->total.ready_ns),
               flat ? "functions, each with the time of every stack that holds it" : "callers first");
        printf("  %12s %12s %8s  %s\n", "Waits", "Ready", "Count", "Frame");
        text_node(&v, UINT32_MAX, 0);
        printf("  %12s %12s %8s  (no stack", fmt_dur(x, w->none.wait_ns), fmt_dur(y, w->none.ready_ns),
               col_u64(z, w->none.waits));
        if (!w->s) printf(": the trace walks no stack at its CSwitch or ReadyThread events");
        else if (!w->readying && w->none_compact)
            printf(": %s of these rows are compact batches', which carry none", col_u64(x, w->none_compact));
        printf(")\n");
    }
    free(v.order);
    free(v.first);
    free(v.count);
    return 0;
}

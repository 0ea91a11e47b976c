/*
 * wait_stacks.c - waits and ready time by stack (etlkit/schedstacks.h): each row's
 * time charged to its stack, then the stacks' frames folded into a tree of callers
 * (a node per (caller node, label)) or a flat list of functions, sorted for reading.
 * Each distinct frame is labelled once (the labeller formats, a PDB may be asked)
 * and each distinct label interned once: a node is then found by two numbers.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/schedstacks.h"
#include "base/grow.h"
#include "base/idmap.h"
#include "base/sat.h"
#include "base/sort.h"
#include "stacks/label_whole.h"
#include "stacks/seqtab.h"
#include "stacks/strtab.h"

#define NIL UINT32_MAX

typedef struct wnode {
    uint32_t parent, label;   /* label: offset in labels */
    uint32_t last_stack;      /* flat: the last stack counted (a stack counts once per function) */
    etl_wait_time t;
} wnode;

struct etl_wait_stacks {
    etl_sched_stacks *s;
    bool readying;
    int64_t v0, v1;
    etl_wait_time *by_stack;  /* by stack id */
    size_t nstacks;
    etl_wait_time none, total;
    uint64_t none_compact;
    wnode *n;                 /* the tree (or functions) being built */
    uint32_t nn, capn;
    etl_idmap child;          /* parent << 32 | label -> node */
    etl_seqtab frames;        /* (address, image) -> frame id */
    uint32_t *frame_label;    /* by frame id: its label */
    size_t capfl;
    etl_strtab labels;
    etl_wait_node *view;      /* the built view: n sorted by (parent, time), children as runs */
};

static int64_t clip(const etl_wait_stacks *w, int64_t a, int64_t b)
{
    if (a < w->v0) a = w->v0;
    if (w->v1 > w->v0 && b > w->v1) b = w->v1;
    int64_t d;
    return b > a ? (__builtin_sub_overflow(b, a, &d) ? INT64_MAX : d) : 0;
}

static bool in_window(const etl_wait_stacks *w, int64_t t) { return t >= w->v0 && (w->v1 <= w->v0 || t < w->v1); }

etl_wait_stacks *etl_wait_stacks_new(etl_sched_stacks *s, bool readying, int64_t v0, int64_t v1)
{
    etl_wait_stacks *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->s = s;
    w->readying = readying;
    w->v0 = v0;
    w->v1 = v1;
    w->nstacks = s ? etl_sched_stacks_stats_get(s)->stacks : 0;
    w->by_stack = calloc(w->nstacks ? w->nstacks : 1, sizeof *w->by_stack);
    etl_idmap_init(&w->child);
    etl_seqtab_init(&w->frames);
    etl_strtab_init(&w->labels);
    if (!w->by_stack) {
        free(w);
        return NULL;
    }
    return w;
}

void etl_wait_stacks_free(etl_wait_stacks *w)
{
    if (!w) return;
    free(w->by_stack);
    free(w->n);
    free(w->view);
    free(w->frame_label);
    etl_seqtab_free(&w->frames);
    etl_strtab_free(&w->labels);
    etl_idmap_free(&w->child);
    free(w);
}

void etl_wait_stacks_totals(const etl_wait_stacks *w, etl_wait_time *total, etl_wait_time *none,
                            uint64_t *none_compact)
{
    *total = w->total;
    *none = w->none;
    *none_compact = w->none_compact;
}

/* The rows and clipping of etl_usage_add's ready and wait totals. */
void etl_wait_stacks_row(etl_wait_stacks *w, const etl_sched_row *row)
{
    if ((row->flags & ETL_ROW_HEAD) || !(row->flags & ETL_ROW_READY_TIME)) return;
    if (row->new_thread == ETL_SCHED_IDLE || row->new_thread == ETL_SCHED_NONE) return;
    int64_t ready = clip(w, row->rt, row->si), wait = 0;
    bool counted_ready = ready > 0 || in_window(w, row->si), counted_wait = false;
    if ((row->flags & ETL_ROW_PREV) && (row->flags & ETL_ROW_WAITED)) {
        wait = clip(w, row->lso, row->rt);
        counted_wait = wait > 0 || in_window(w, row->rt);
    }
    if (!counted_ready && !counted_wait) return;
    uint32_t id = !w->s ? ETL_SCHED_STACK_NONE
                  : w->readying ? etl_sched_stacks_row_readying(w->s, row) : etl_sched_stacks_row_new(w->s, row);
    etl_wait_time *acc = id != ETL_SCHED_STACK_NONE && id < w->nstacks ? &w->by_stack[id] : &w->none;
    if (acc == &w->none && !w->readying && row->in && row->in->source == ETL_CSW_SRC_COMPACT) w->none_compact++;
    for (int k = 0; k < 2; k++) {
        etl_wait_time *x = k ? &w->total : acc;
        if (counted_ready) add_sat(&x->ready_ns, ready), x->readies++;
        if (counted_wait) add_sat(&x->wait_ns, wait), x->waits++;
    }
}

/* The node of (parent, label), made when new (NIL: out of memory). */
static uint32_t node_of(etl_wait_stacks *w, uint32_t parent, uint32_t label)
{
    uint64_t key = (uint64_t)parent << 32 | label;
    uint32_t i = etl_idmap_get(&w->child, key);
    if (i != ETL_IDMAP_EMPTY) return i;
    if (w->nn == w->capn) {
        uint32_t cap = w->capn ? w->capn * 2 : 1024;
        if (cap <= w->capn) return NIL; /* past 2^31 nodes */
        wnode *v = realloc(w->n, (size_t)cap * sizeof *v);
        if (!v) return NIL;
        w->n = v;
        w->capn = cap;
    }
    if (etl_idmap_put(&w->child, key, w->nn) != ETL_OK) return NIL;
    w->n[w->nn] = (wnode){parent, label, NIL, {0, 0, 0, 0}};
    return w->nn++;
}

/* The label of a frame, made once per distinct frame (*ok false: out of memory). */
static uint32_t frame_label(etl_wait_stacks *w, const etl_profile_frame *f, etl_frame_label_fn label, void *ctx,
                            bool *ok)
{
    uint64_t key[2] = {f->address, f->image};
    uint32_t before = w->frames.count, id, off = 0;
    if (etl_seqtab_intern(&w->frames, key, 2, &id) != ETL_OK) return *ok = false, 0;
    if (id < before) return w->frame_label[id];
    uint32_t *g = etl_grow(w->frame_label, &w->capfl, (size_t)id + 1, sizeof *g);
    if (!g) return *ok = false, 0;
    w->frame_label = g;
    char buf[1200];
    size_t len;
    char *p = etl_frame_label_whole(label, ctx, f, buf, sizeof buf, &len); /* two functions cut alike: one node */
    if (!p) return *ok = false, 0;
    etl_status st = etl_strtab_add(&w->labels, p, len, &off);
    if (p != buf) free(p);
    if (st != ETL_OK) return *ok = false, 0;
    return g[id] = off;
}

static void time_add(etl_wait_time *x, const etl_wait_time *y)
{
    add_sat(&x->wait_ns, y->wait_ns);
    add_sat(&x->ready_ns, y->ready_ns);
    x->waits += y->waits;
    x->readies += y->readies;
}

static int64_t weight(const etl_wait_time *x)
{
    int64_t s;
    return __builtin_add_overflow(x->wait_ns, x->ready_ns, &s) ? INT64_MAX : s;
}

typedef struct order_key {
    uint32_t parent, i;
    int64_t weight;
    const char *label;
} order_key;

/* By parent (the roots, NIL, last), then most time first, then label. */
static int cmp_order(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    if (x->parent != y->parent) return x->parent < y->parent ? -1 : 1;
    if (x->weight != y->weight) return x->weight > y->weight ? -1 : 1;
    return strcmp(x->label, y->label);
}

etl_status etl_wait_stacks_build(etl_wait_stacks *w, bool flat, etl_frame_label_fn label, void *ctx,
                                 const etl_wait_node **nodes, etl_wait_node *roots)
{
    if (!label) label = etl_sched_stacks_labeler, ctx = w->s;
    w->nn = 0;
    etl_idmap_clear(&w->child);
    /* Labels of this labeller only: another build may label otherwise. */
    etl_seqtab_free(&w->frames);
    etl_strtab_free(&w->labels);
    etl_seqtab_init(&w->frames);
    etl_strtab_init(&w->labels);
    bool ok = true;
    for (uint32_t id = 0; id < w->nstacks; id++) {
        const etl_wait_time *acc = &w->by_stack[id];
        if (!acc->waits && !acc->readies) continue;
        uint32_t n, parent = NIL;
        const etl_profile_frame *f = etl_sched_stacks_frames(w->s, id, &n);
        for (uint32_t k = n; k-- > 0;) { /* root first */
            uint32_t lab = frame_label(w, &f[k], label, ctx, &ok);
            uint32_t i = ok ? node_of(w, flat ? NIL : parent, lab) : NIL;
            if (i == NIL) return ETL_E_NOMEM;
            if (!flat || w->n[i].last_stack != id) time_add(&w->n[i].t, acc);
            w->n[i].last_stack = id;
            parent = i;
        }
    }
    /*
     * The nodes' and frames' lookups served the loop alone, and the view is made after the sort (which may take
     * as much again as the keys): the peak of a trace of many distinct stacks is the nodes, the keys and the view.
     */
    etl_idmap_free(&w->child);
    etl_idmap_init(&w->child);
    etl_seqtab_free(&w->frames);
    etl_seqtab_init(&w->frames);
    free(w->frame_label);
    w->frame_label = NULL;
    w->capfl = 0;
    /* Sorted by (parent, time): each node's children are a run; the nodes are renumbered to their places. */
    order_key *k = malloc((w->nn ? w->nn : 1) * sizeof *k);
    uint32_t *place = malloc((w->nn ? w->nn : 1) * sizeof *place);
    if (!k || !place) {
        free(k);
        free(place);
        return ETL_E_NOMEM;
    }
    for (uint32_t i = 0; i < w->nn; i++)
        k[i] = (order_key){w->n[i].parent, i, weight(&w->n[i].t), etl_strtab_get(&w->labels, w->n[i].label)};
    etl_sort(k, w->nn, sizeof *k, cmp_order);
    for (uint32_t p = 0; p < w->nn; p++) place[k[p].i] = p;
    etl_wait_node *v = realloc(w->view, (w->nn ? w->nn : 1) * sizeof *v);
    if (!v) {
        free(k);
        free(place);
        return ETL_E_NOMEM;
    }
    w->view = v;
    for (uint32_t p = 0; p < w->nn; p++) v[p] = (etl_wait_node){k[p].label, w->n[k[p].i].t, 0, 0};
    *roots = (etl_wait_node){NULL, w->total, 0, 0};
    for (uint32_t p = w->nn; p-- > 0;) {
        etl_wait_node *up = k[p].parent == NIL ? roots : &v[place[k[p].parent]];
        up->first = p;
        up->count++;
    }
    free(k);
    free(place);
    *nodes = v;
    return ETL_OK;
}

/*
 * chain.c - wait chains (spec analyses.md §3, issue 10).
 *
 * A thread X over [from, at] is cut into segments by its rows: Running [SI, NSO),
 * Ready [RT, SI), Waiting [LSO, RT) with the wait reason and the readier, Off-CPU
 * [LSO, SI) when no ReadyThread split the gap, Unknown where no row covers the
 * time. A Waiting segment of at least min_ns readied by a thread Y descends into
 * Y over that segment (what Y did until it readied X), one level deeper; DPC,
 * Idle and Unknown readiers are leaves, and a thread already on the path from
 * the root is not entered again (the intervals nest, so that is the
 * "(thread, interval) already on the path" of the spec).
 *
 * Passes, each streaming the trace through a fresh model:
 *   1  locate: the thread instance and [from, at] (the row covering --at, or the
 *      row with the longest off-CPU gap, SI - LSO, of the thread or process; a
 *      process's threads as the finished model attributes them);
 *   2+ collect: the rows of the threads of one depth, inside their intervals;
 *      at the end of the pass they become segments, and the qualifying waits the
 *      requests of the next pass.
 * Memory is the rows of the threads on the chain inside their intervals: a pass
 * can stop once every requested thread has a row reaching past its interval and
 * every thread shown has its process.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/sort.h"
#include "etlkit/wakeups.h"
#include "etlkit/waitchain.h"
#include "out/num.h"
#include "base/idmap.h"
#include "base/opts.h"

typedef struct crow {
    int64_t gs, lso, rt, si, nso;  /* gs: where the row's gap starts (LSO, else RT, else SI) */
    uint32_t flags;
    uint16_t cpu, ready_cpu;
    uint8_t reason, has_reason, waker;
    uint32_t waker_thread, waker_tid;
} crow;

/*
 * Locating by process: the best interval of each thread instance so far. Which process a
 * thread is in is known only at the end of the pass (a TID first seen in a switch is
 * adopted by a later DCStart or DCEnd, as cpu and waits count it), so the process's
 * threads are chosen then, from these.
 */
typedef struct cand {
    int64_t start, end, score;
    uint64_t order;                /* the row's number in the pass: of equal scores, the first wins */
    uint32_t tid;
    bool seen, found;
} cand;

typedef struct request {
    uint32_t node;
    crow *rows;
    size_t n, cap;
    bool complete;
    uint32_t next;                 /* the next request of the same thread, UINT32_MAX */
} request;

struct etl_chain_priv {
    int phase;                     /* 0 before the first pass, 1 locate, 2 collect, 3 done */
    /* locate */
    bool seen, found;
    uint32_t best_thread, best_tid;
    int64_t best_start, best_end, best_score;
    cand *cand;                    /* by thread instance (locating by process) */
    size_t ncand;
    uint64_t nrows;
    /* requests of the pass under way */
    request *req;
    size_t nreq;
    size_t ncomplete;
    etl_idmap first;               /* thread -> its first request */
    uint32_t unlabelled;           /* a thread of the chain last found without its process, or NONE */
    bool nomem;
    bool after_at, at_lost;        /* a row switched in after --at seen; the first one's gap start lost */
};

bool etl_chain_gap_lost(const etl_chain *c) { return c && c->priv && c->priv->at_lost; }

const char *etl_chain_state_name(unsigned state)
{
    static const char *const n[] = {"?", "running", "ready", "waiting", "off-cpu", "unknown"};
    return state < 6 ? n[state] : "?";
}

const char *etl_chain_leaf_name(unsigned leaf)
{
    /* ETL_LEAF_NONE is no leaf (NULL: the CLI writes "leaf": null); a value past the enum, "?" as for a state. */
    static const char *const n[] = {NULL, "dpc", "idle", "unknown", "short", "depth", "cycle", "out-of-memory"};
    return leaf < 8 ? n[leaf] : "?";
}

etl_status etl_chain_init(etl_chain *c, const etl_chain_options *o)
{
    memset(c, 0, sizeof *c);
    etl_opts_take(&c->o, sizeof c->o, o);
    if (c->o.min_ns == 0) c->o.min_ns = 1000000;
    if (c->o.min_ns < 0) c->o.min_ns = 0;
    if (c->o.depth == 0) c->o.depth = 8;
    if (c->o.no_descent) c->o.depth = 0;
    c->priv = calloc(1, sizeof *c->priv);
    if (!c->priv) return ETL_E_NOMEM;
    etl_idmap_init(&c->priv->first);
    c->priv->unlabelled = ETL_SCHED_NONE;
    return ETL_OK;
}

void etl_chain_bind(etl_chain *c, const etl_sched *model) { c->model = model; }

static void free_requests(struct etl_chain_priv *p)
{
    for (size_t i = 0; i < p->nreq; i++) free(p->req[i].rows);
    free(p->req);
    p->req = NULL;
    p->nreq = 0;
    p->ncomplete = 0;
    etl_idmap_clear(&p->first);
}

void etl_chain_free(etl_chain *c)
{
    if (!c) return; /* as the handles' close: a cleanup path may free what it never made */
    if (c->priv) {
        free_requests(c->priv);
        free(c->priv->cand);
        etl_idmap_free(&c->priv->first);
        free(c->priv);
    }
    free(c->nodes);
    free(c->segs);
    free(c->path);
    memset(c, 0, sizeof *c);
}

/* Whether a thread instance belongs to the process the options name. */
static bool process_matches(const etl_chain *c, uint32_t thread)
{
    const etl_sched_thread *t = etl_sched_thread_at(c->model, thread);
    if (!t) return false;
    const char *want = c->o.process;
    uint64_t pid;
    if (etl_sched_id_arg(want, &pid)) return t->pid == pid; /* as the other commands' --process */
    const etl_sched_process *p = etl_sched_process_at(c->model, t->process);
    const char *name = p && p->name ? etl_sched_names(c->model) + p->name : "Unknown";
    size_t n = strlen(want);
    if (strncasecmp(name, want, n) != 0) return false;
    return name[n] == 0 || strcasecmp(name + n, ".exe") == 0;
}

static int64_t gap_start(const etl_sched_row *r)
{
    if (r->flags & ETL_ROW_PREV) return r->lso;
    if (r->flags & ETL_ROW_READY_TIME) return r->rt;
    return r->si;
}

/* The candidate of thread instance x (locating by process), NULL when out of memory. */
static cand *cand_of(struct etl_chain_priv *p, uint32_t x)
{
    if (x >= p->ncand) {
        size_t n = p->ncand ? p->ncand : 64;
        while (n <= x) n *= 2;
        cand *v = realloc(p->cand, n * sizeof *v);
        if (!v) {
            p->nomem = true;
            return NULL;
        }
        memset(v + p->ncand, 0, (n - p->ncand) * sizeof *v);
        p->cand = v;
        p->ncand = n;
    }
    return &p->cand[x];
}

static void locate(etl_chain *c, const etl_sched_row *r)
{
    struct etl_chain_priv *p = c->priv;
    uint32_t x = r->new_thread;
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE || (r->flags & ETL_ROW_HEAD)) return;
    cand *k = NULL;
    if (c->o.tid) {
        if (r->new_tid != c->o.tid) return;
        p->seen = true;
    } else {
        /* Not process_matches(c, x) now: the thread may be adopted later; end_pass asks. */
        if (!c->o.process || !(k = cand_of(p, x))) return;
        k->seen = true;
    }
    uint64_t order = p->nrows++;
    int64_t gs = gap_start(r), start, end, score;
    bool lost_gap = false; /* --at lies in the gap before this switch-in, whose start was lost: --from gives one */
    if (c->o.has_at && c->o.tid && !p->after_at && r->si > c->o.at) {
        /* the gap --at may lie in: its start unknown when records were lost before this switch-in */
        p->after_at = true;
        p->at_lost = (r->flags & ETL_ROW_LOST) && !(r->flags & (ETL_ROW_PREV | ETL_ROW_READY_TIME));
        lost_gap = p->at_lost && c->o.has_from;
    }
    if (c->o.has_at) {
        if ((gs > c->o.at && !lost_gap) || c->o.at > r->nso) return;
        end = c->o.at;
        start = lost_gap ? end : gs;
        score = lost_gap ? 0 : (r->si < end ? r->si : end) - gs;
    } else {
        if (!(r->flags & ETL_ROW_PREV) || r->si <= r->lso) return;
        if (r->si < c->o.v0 || (c->o.v1 > c->o.v0 && r->si >= c->o.v1)) return;
        if (c->o.has_from && r->si <= c->o.from) return;
        start = r->lso;
        end = r->si;
        score = r->si - r->lso;
    }
    if (c->o.has_from) start = c->o.from;
    if (start >= end) return;
    if (k) {
        if (k->found && score <= k->score) return;
        *k = (cand){start, end, score, order, r->new_tid, true, true};
        return;
    }
    if (p->found && score <= p->best_score) return;
    p->found = true;
    p->best_thread = x;
    p->best_tid = r->new_tid;
    p->best_start = start;
    p->best_end = end;
    p->best_score = score;
}

static void collect(etl_chain *c, const etl_sched_row *r)
{
    struct etl_chain_priv *p = c->priv;
    uint32_t x = r->new_thread;
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return;
    uint32_t k = etl_idmap_get(&p->first, x);
    for (; k != ETL_IDMAP_EMPTY && k != UINT32_MAX; k = p->req[k].next) {
        request *q = &p->req[k];
        if (q->complete) continue;
        const etl_chain_node *nd = &c->nodes[q->node];
        int64_t gs = gap_start(r);
        if (gs >= nd->end) {
            q->complete = true;
            p->ncomplete++;
            continue;
        }
        if (r->nso <= nd->start) continue;
        if (q->n == q->cap) {
            size_t cap = q->cap ? q->cap * 2 : 16;
            crow *v = realloc(q->rows, cap * sizeof *v);
            if (!v) {
                p->nomem = true;
                continue;
            }
            q->rows = v;
            q->cap = cap;
        }
        crow *w = &q->rows[q->n++];
        memset(w, 0, sizeof *w);
        w->gs = gs;
        w->lso = r->lso;
        w->rt = r->rt;
        w->si = r->si;
        w->nso = r->nso;
        w->flags = r->flags;
        w->cpu = r->cpu;
        w->ready_cpu = r->ready_cpu;
        w->reason = r->prev_wait_reason;
        w->has_reason = (r->flags & ETL_ROW_PREV) && (r->prev_known & ETL_CSW_WAIT_REASON);
        w->waker = (uint8_t)etl_row_waker(r);
        w->waker_thread = r->readier_thread;
        w->waker_tid = r->readier_tid;
        if (r->nso >= nd->end) {
            q->complete = true;
            p->ncomplete++;
        }
    }
}

void etl_chain_row(void *ctx, const etl_sched_row *row)
{
    etl_chain *c = ctx;
    if (!c->model) return;
    if (c->priv->phase == 1) locate(c, row);
    else if (c->priv->phase == 2) collect(c, row);
}

/* Whether the model names thread x's process yet (a TID seen before its DCStart or DCEnd has none). */
static bool labelled(const etl_chain *c, uint32_t x)
{
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return true;
    const etl_sched_thread *t = etl_sched_thread_at(c->model, x);
    const etl_sched_process *q = t ? etl_sched_process_at(c->model, t->process) : NULL;
    if (!t || (q && q->name)) return true;
    c->priv->unlabelled = x;
    return false;
}

/*
 * Every thread the chain shows (its nodes, the readiers of their segments and of this pass's
 * rows) with its process: the last pass's model names them in the output, and one stopped
 * before a later DCStart or DCEnd adopts a thread would print it "Unknown" where cpu and
 * waits, which read the whole trace, name its process.
 */
static bool chain_labelled(const etl_chain *c)
{
    struct etl_chain_priv *p = c->priv;
    if (p->unlabelled != ETL_SCHED_NONE && !labelled(c, p->unlabelled)) return false; /* the usual case: still not */
    for (size_t i = 0; i < c->nnodes; i++)
        if (!labelled(c, c->nodes[i].thread)) return false;
    for (size_t i = 0; i < c->nsegs; i++)
        if (c->segs[i].has_waker && c->segs[i].waker == ETL_WAKER_THREAD && !labelled(c, c->segs[i].waker_thread))
            return false;
    for (size_t i = 0; i < p->nreq; i++)
        for (size_t j = 0; j < p->req[i].n; j++) {
            const crow *w = &p->req[i].rows[j];
            if ((w->flags & ETL_ROW_READIED) && w->waker == ETL_WAKER_THREAD && !labelled(c, w->waker_thread))
                return false;
        }
    p->unlabelled = ETL_SCHED_NONE;
    return true;
}

bool etl_chain_pass_done(const etl_chain *c)
{
    const struct etl_chain_priv *p = c->priv;
    return p->phase == 2 && p->ncomplete == p->nreq && c->model && chain_labelled(c);
}

/* An allocation failed: the chain would come out with pieces missing, so its pass fails (etl_chain_end_pass). */
static void chain_nomem(etl_chain *c) { ((struct etl_chain_priv *)c->priv)->nomem = true; }

static uint32_t add_node(etl_chain *c, uint32_t thread, uint32_t tid, int64_t a, int64_t b, uint32_t depth,
                         uint32_t parent, uint32_t parent_seg)
{
    if ((c->nnodes & (c->nnodes - 1)) == 0) {
        size_t cap = c->nnodes ? c->nnodes * 2 : 8;
        etl_chain_node *v = realloc(c->nodes, cap * sizeof *v);
        if (!v) {
            chain_nomem(c);
            return UINT32_MAX;
        }
        c->nodes = v;
    }
    etl_chain_node *n = &c->nodes[c->nnodes];
    memset(n, 0, sizeof *n);
    n->thread = thread;
    n->tid = tid;
    n->start = a;
    n->end = b;
    n->depth = depth;
    n->parent = parent;
    n->parent_seg = parent_seg;
    return (uint32_t)c->nnodes++;
}

static bool add_request(etl_chain *c, request **v, size_t *n, uint32_t node)
{
    request *r = realloc(*v, (*n + 1) * sizeof *r);
    if (!r) {
        chain_nomem(c);
        return false;
    }
    *v = r;
    memset(&r[*n], 0, sizeof r[*n]);
    r[*n].node = node;
    r[*n].next = UINT32_MAX;
    (*n)++;
    return true;
}

static bool push_seg(etl_chain *c, const etl_chain_seg *s)
{
    if ((c->nsegs & (c->nsegs - 1)) == 0) {
        size_t cap = c->nsegs ? c->nsegs * 2 : 16;
        etl_chain_seg *v = realloc(c->segs, cap * sizeof *v);
        if (!v) {
            chain_nomem(c);
            return false;
        }
        c->segs = v;
    }
    c->segs[c->nsegs++] = *s;
    return true;
}

/* Appends [p, q) clipped to [*cursor, b), with Unknown before it if there is a hole. */
static void piece(etl_chain *c, int64_t *cursor, int64_t b, int64_t p, int64_t q, const etl_chain_seg *tmpl)
{
    if (q > b) q = b;
    if (p > *cursor && *cursor < b) {
        etl_chain_seg u;
        memset(&u, 0, sizeof u);
        u.state = ETL_CHAIN_UNKNOWN;
        u.child = UINT32_MAX;
        u.start = *cursor;
        u.end = p < b ? p : b;
        u.cpu = tmpl->cpu;
        if (push_seg(c, &u)) *cursor = u.end;
    }
    if (p < *cursor) p = *cursor;
    if (q <= p) return;
    etl_chain_seg s = *tmpl;
    s.start = p;
    s.end = q;
    s.child = UINT32_MAX;
    if (push_seg(c, &s)) *cursor = q;
}

/* The segments of one node from its rows; appends them contiguously. */
static void build(etl_chain *c, uint32_t ni, const request *q)
{
    etl_chain_node *nd = &c->nodes[ni];
    nd->first = (uint32_t)c->nsegs;
    int64_t cursor = nd->start, b = nd->end;
    for (size_t i = 0; i < q->n && cursor < b; i++) {
        const crow *r = &q->rows[i];
        etl_chain_seg t;
        memset(&t, 0, sizeof t);
        t.cpu = r->cpu;
        t.reason = r->reason;
        t.has_reason = r->has_reason;
        bool prev = (r->flags & ETL_ROW_PREV) != 0, rt = (r->flags & ETL_ROW_READY_TIME) != 0;
        if (prev && rt) {
            t.state = (r->flags & ETL_ROW_WAITED) ? ETL_CHAIN_WAITING : ETL_CHAIN_OFFCPU;
            if (r->flags & ETL_ROW_READIED) {
                t.has_waker = 1;
                t.waker = r->waker;
                t.waker_thread = r->waker_thread;
                t.waker_tid = r->waker_tid;
                t.ready_cpu = r->ready_cpu;
            }
            piece(c, &cursor, b, r->lso, r->rt, &t);
            t.has_waker = 0;
            if (r->flags & ETL_ROW_WAITED) t.has_reason = 0; /* the reason was the wait's; a runnable one stays */
            t.state = ETL_CHAIN_READY;
            piece(c, &cursor, b, r->rt, r->si, &t);
        } else if (prev) {
            t.state = ETL_CHAIN_OFFCPU;
            piece(c, &cursor, b, r->lso, r->si, &t);
        } else if (rt) {
            t.state = ETL_CHAIN_READY;
            t.has_reason = 0;
            piece(c, &cursor, b, r->rt, r->si, &t);
        }
        memset(&t, 0, sizeof t);
        t.cpu = r->cpu;
        t.state = ETL_CHAIN_RUNNING;
        piece(c, &cursor, b, r->si, r->nso, &t);
    }
    if (cursor < b) {
        etl_chain_seg u;
        memset(&u, 0, sizeof u);
        u.state = ETL_CHAIN_UNKNOWN;
        u.child = UINT32_MAX;
        u.start = cursor;
        u.end = b;
        push_seg(c, &u);
    }
    nd->count = (uint32_t)(c->nsegs - nd->first);
}

static bool on_path(const etl_chain *c, uint32_t ni, uint32_t thread)
{
    for (; ni != UINT32_MAX; ni = c->nodes[ni].parent)
        if (c->nodes[ni].thread == thread) return true;
    return false;
}

/* Leaves or descents for the waits of node ni; descents become requests of the next pass. */
static void descend(etl_chain *c, uint32_t ni, request **next, size_t *nnext)
{
    uint32_t first = c->nodes[ni].first, count = c->nodes[ni].count, depth = c->nodes[ni].depth;
    for (uint32_t k = first; k < first + count; k++) {
        etl_chain_seg *s = &c->segs[k];
        if (s->state != ETL_CHAIN_WAITING) continue;
        if (!s->has_waker) s->leaf = ETL_LEAF_UNKNOWN;
        else if (s->waker == ETL_WAKER_DPC) s->leaf = ETL_LEAF_DPC;
        else if (s->waker == ETL_WAKER_IDLE) s->leaf = ETL_LEAF_IDLE;
        else if (s->waker != ETL_WAKER_THREAD) s->leaf = ETL_LEAF_UNKNOWN;
        else if (s->end - s->start < c->o.min_ns) s->leaf = ETL_LEAF_SHORT;
        else if (depth >= c->o.depth) s->leaf = ETL_LEAF_DEPTH;
        else if (on_path(c, ni, s->waker_thread)) s->leaf = ETL_LEAF_CYCLE;
        else {
            uint32_t child = add_node(c, s->waker_thread, s->waker_tid, s->start, s->end, depth + 1, ni, k);
            if (child == UINT32_MAX || !add_request(c, next, nnext, child)) {
                s->leaf = ETL_LEAF_NOMEM;
                continue;
            }
            c->segs[k].child = child;
        }
    }
}

bool etl_chain_next_pass(etl_chain *c)
{
    struct etl_chain_priv *p = c->priv;
    if (p->phase == 0) {
        p->phase = 1;
        return true;
    }
    return p->phase == 2 && p->nreq > 0;
}

static void path_add(etl_chain *c, uint32_t thread, uint32_t depth, const etl_chain_seg *s)
{
    int64_t d = s->end - s->start;
    c->totals[s->state < 6 ? s->state : 0] += d;
    for (size_t i = 0; i < c->npath; i++) {
        etl_chain_path *x = &c->path[i];
        if (x->thread == thread && x->state == s->state && x->has_reason == s->has_reason &&
            (!s->has_reason || x->reason == s->reason)) {
            x->ns += d;
            if (depth < x->depth) x->depth = depth;
            return;
        }
    }
    if ((c->npath & (c->npath - 1)) == 0) {
        size_t cap = c->npath ? c->npath * 2 : 16;
        etl_chain_path *v = realloc(c->path, cap * sizeof *v);
        if (!v) {
            chain_nomem(c);
            return;
        }
        c->path = v;
    }
    etl_chain_path *x = &c->path[c->npath++];
    memset(x, 0, sizeof *x);
    x->thread = thread;
    x->state = s->state;
    x->has_reason = s->has_reason;
    x->reason = s->has_reason ? s->reason : 0;
    x->depth = depth;
    x->ns = d;
}

static void walk(etl_chain *c, uint32_t ni)
{
    const etl_chain_node *nd = &c->nodes[ni];
    for (uint32_t k = nd->first; k < nd->first + nd->count; k++) {
        const etl_chain_seg *s = &c->segs[k];
        if (s->child != UINT32_MAX && c->nodes[s->child].count) walk(c, s->child);
        else path_add(c, nd->thread, nd->depth, s);
    }
}

static int by_ns_desc(const void *a, const void *b)
{
    const etl_chain_path *x = a, *y = b;
    if (x->ns != y->ns) return x->ns > y->ns ? -1 : 1;
    if (x->depth != y->depth) return x->depth < y->depth ? -1 : 1;
    if (x->thread != y->thread) return x->thread < y->thread ? -1 : 1;
    return x->state - y->state;
}

etl_status etl_chain_end_pass(etl_chain *c)
{
    struct etl_chain_priv *p = c->priv;
    c->passes++;
    if (p->phase == 1) {
        if (p->nomem) return ETL_E_NOMEM;
        /* By process: its threads as the finished model attributes them, the best interval, the first of equals. */
        const cand *best = NULL;
        for (size_t i = 0; i < p->ncand; i++) {
            const cand *k = &p->cand[i];
            if (!k->seen || !process_matches(c, (uint32_t)i)) continue;
            p->seen = true;
            if (!k->found || (best && (k->score < best->score || (k->score == best->score && k->order > best->order))))
                continue;
            best = k;
            p->found = true;
            p->best_thread = (uint32_t)i;
            p->best_tid = k->tid;
            p->best_start = k->start;
            p->best_end = k->end;
            p->best_score = k->score;
        }
        free(p->cand);
        p->cand = NULL;
        p->ncand = 0;
        if (!p->found) {
            c->status = p->seen ? ETL_CHAIN_NO_INTERVAL : ETL_CHAIN_NO_THREAD;
            p->phase = 3;
            return ETL_OK;
        }
        uint32_t root = add_node(c, p->best_thread, p->best_tid, p->best_start, p->best_end, 0, UINT32_MAX,
                                 UINT32_MAX);
        if (root == UINT32_MAX || !add_request(c, &p->req, &p->nreq, root)) return ETL_E_NOMEM;
        if (etl_idmap_put(&p->first, p->best_thread, 0) != ETL_OK) return ETL_E_NOMEM;
        p->phase = 2;
        return ETL_OK;
    }
    if (p->phase != 2) return ETL_OK;
    request *next = NULL;
    size_t nnext = 0;
    for (size_t i = 0; i < p->nreq; i++) build(c, p->req[i].node, &p->req[i]);
    for (size_t i = 0; i < p->nreq; i++) descend(c, p->req[i].node, &next, &nnext);
    free_requests(p);
    p->req = next;
    p->nreq = nnext;
    for (size_t i = nnext; i-- > 0;) {
        /* Chain the requests of each thread: next points at the one after it. */
        uint32_t t = c->nodes[next[i].node].thread;
        uint32_t head = etl_idmap_get(&p->first, t);
        next[i].next = head == ETL_IDMAP_EMPTY ? UINT32_MAX : head;
        if (etl_idmap_put(&p->first, t, (uint32_t)i) != ETL_OK) return ETL_E_NOMEM; /* a request lost */
    }
    if (!nnext) {
        p->phase = 3;
        memset(c->totals, 0, sizeof c->totals);
        c->npath = 0;
        if (c->nnodes) walk(c, 0);
        etl_sort(c->path, c->npath, sizeof *c->path, by_ns_desc);
    }
    return p->nomem ? ETL_E_NOMEM : ETL_OK;
}

etl_status etl_chain_run(etl_reader *r, etl_chain *c, int bias, etl_sched **model)
{
    etl_status st = ETL_OK;
    if (model) *model = NULL;
    while (st == ETL_OK && etl_chain_next_pass(c)) {
        etl_sched_source *src = NULL;
        etl_sched *m = NULL;
        etl_sched_source_options so = {.sz = sizeof so, .bias = bias};
        etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_chain_row, .ctx = c, .reader = r};
        if (etl_sched_source_open(r, &so, &src) != ETL_OK ||
            etl_sched_open(etl_reader_clock(r), etl_reader_processors(r), &mo, &m) != ETL_OK) {
            etl_sched_source_close(src);
            return ETL_E_NOMEM;
        }
        etl_chain_bind(c, m);
        const etl_sched_event *ev;
        uint64_t n = 0;
        bool early = false;
        while (etl_sched_source_next_ref(src, &ev) == ETL_OK) {
            etl_sched_push(m, ev);
            if ((++n & 1023) == 0 && etl_chain_pass_done(c)) {
                early = true;
                break;
            }
        }
        if (!early) etl_sched_finish(m, etl_sched_end_ts(r, etl_sched_source_stats_get(src)->last_ts));
        /* A model that left threads out would give a chain with them missing. */
        st = etl_sched_status(m) != ETL_OK ? ETL_E_NOMEM : etl_chain_end_pass(c);
        etl_sched_source_close(src);
        if (model && (st != ETL_OK || !etl_chain_next_pass(c))) {
            *model = m; /* the last pass: c->model stays valid */
            break;
        }
        c->model = NULL;
        etl_sched_close(m);
    }
    return st;
}

/*
 * chain_query.c - questions about a wait chain and its model beyond the chain itself
 * (etlkit/waitchain.h): each wait's stacks, the biggest waiting group of a level, and,
 * when there is no chain, the threads and processes closest to the one asked for.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "etlkit/waitchain.h"
#include "out/num.h"

/*
 * A waiting (or off-CPU) segment's stacks: where it blocked, the walk at the switch-in
 * that ended the wait (the end of the ready segment after it, or the start of the running
 * one), and its readier's, the walk at the ReadyThread (the wait's end, on ready_cpu).
 * The events first, so that the lookups and the events asked for (etl_chain_stack_events) agree.
 */
static bool blocking_event(const etl_chain *c, const etl_chain_node *n, uint32_t i, etl_sched_stacks_event *e)
{
    const etl_chain_seg *s = &c->segs[i];
    if ((s->state != ETL_CHAIN_WAITING && s->state != ETL_CHAIN_OFFCPU) || i + 1 >= n->first + n->count) return false;
    const etl_chain_seg *x = &c->segs[i + 1];
    if (x->state != ETL_CHAIN_READY && x->state != ETL_CHAIN_RUNNING) return false;
    *e = (etl_sched_stacks_event){x->state == ETL_CHAIN_READY ? x->end : x->start, x->cpu, 0};
    return true;
}

static bool readier_event(const etl_chain_seg *s, etl_sched_stacks_event *e)
{
    if (s->state != ETL_CHAIN_WAITING || !s->has_waker) return false;
    *e = (etl_sched_stacks_event){s->end, s->ready_cpu, 1};
    return true;
}

uint32_t etl_chain_blocking_stack(const etl_chain *c, const etl_sched_stacks *stk, const etl_chain_node *n, uint32_t i)
{
    etl_sched_stacks_event e;
    return stk && blocking_event(c, n, i, &e) ? etl_sched_stacks_cswitch(stk, e.cpu, e.ns) : ETL_SCHED_STACK_NONE;
}

uint32_t etl_chain_readier_stack(const etl_sched_stacks *stk, const etl_chain_seg *s)
{
    etl_sched_stacks_event e;
    return stk && readier_event(s, &e) ? etl_sched_stacks_ready(stk, e.cpu, e.ns) : ETL_SCHED_STACK_NONE;
}

etl_status etl_chain_stack_events(const etl_chain *c, etl_sched_stacks_event **v, size_t *n)
{
    *v = malloc((2 * c->nsegs + 1) * sizeof **v); /* at most two a segment */
    *n = 0;
    if (!*v) return ETL_E_NOMEM;
    for (size_t k = 0; k < c->nnodes; k++) {
        const etl_chain_node *nd = &c->nodes[k];
        for (uint32_t i = nd->first; i < nd->first + nd->count; i++) {
            if (blocking_event(c, nd, i, &(*v)[*n])) ++*n;
            if (readier_event(&c->segs[i], &(*v)[*n])) ++*n;
        }
    }
    return ETL_OK;
}

/* The biggest waiting group of a set of nodes: same readier and reason. Returns its total (0: none). */
int64_t etl_chain_top_wait(const etl_chain *c, const uint32_t *nodes, size_t nn, etl_chain_seg *key)
{
    int64_t best = 0;
    for (size_t a = 0; a < nn; a++) {
        const etl_chain_node *n = &c->nodes[nodes[a]];
        for (uint32_t i = n->first; i < n->first + n->count; i++) {
            const etl_chain_seg *s = &c->segs[i];
            if (s->state != ETL_CHAIN_WAITING) continue;
            int64_t sum = 0;
            for (size_t b = 0; b < nn; b++) {
                const etl_chain_node *m = &c->nodes[nodes[b]];
                for (uint32_t j = m->first; j < m->first + m->count; j++) {
                    const etl_chain_seg *x = &c->segs[j];
                    if (x->state == ETL_CHAIN_WAITING && x->has_waker == s->has_waker && x->waker == s->waker &&
                        x->waker_thread == s->waker_thread && x->reason == s->reason)
                        sum += x->end - x->start;
                }
            }
            if (sum > best) {
                best = sum;
                *key = *s;
            }
        }
    }
    return best;
}

/* The running and ready time of nodes. */
static void ran_ready(const etl_chain *c, const uint32_t *nodes, size_t nn, int64_t *ran, int64_t *ready)
{
    *ran = *ready = 0;
    for (size_t a = 0; a < nn; a++) {
        const etl_chain_node *n = &c->nodes[nodes[a]];
        for (uint32_t i = n->first; i < n->first + n->count; i++) {
            const etl_chain_seg *x = &c->segs[i];
            if (x->state == ETL_CHAIN_RUNNING) *ran += x->end - x->start;
            if (x->state == ETL_CHAIN_READY) *ready += x->end - x->start;
        }
    }
}

etl_status etl_chain_summarize(const etl_chain *c, etl_chain_summary *s)
{
    memset(s, 0, sizeof *s);
    if (!c->nnodes) return ETL_OK;
    const etl_chain_node *root = &c->nodes[0];
    s->interval_ns = root->end - root->start;
    for (uint32_t i = root->first; i < root->first + root->count; i++) {
        const etl_chain_seg *x = &c->segs[i];
        if (x->state < sizeof s->by_state / sizeof s->by_state[0]) s->by_state[x->state] += x->end - x->start;
    }
    /* A level's nodes and the next's share one array: every level's nodes together are at most all of them. */
    uint32_t *nodes = malloc((c->nnodes + 1) * sizeof *nodes);
    s->levels = malloc((c->nnodes + 1) * sizeof *s->levels);
    if (!nodes || !s->levels) {
        free(nodes);
        return ETL_E_NOMEM;
    }
    nodes[0] = 0;
    size_t at = 0, nn = 1;
    etl_chain_seg key;
    int64_t w;
    while ((w = etl_chain_top_wait(c, nodes + at, nn, &key)) != 0) {
        size_t nk = 0;
        uint32_t *kids = nodes + at + nn; /* the nodes descended into from the group, one level down */
        for (size_t a = 0; a < nn; a++) {
            const etl_chain_node *n = &c->nodes[nodes[at + a]];
            for (uint32_t i = n->first; i < n->first + n->count; i++) {
                const etl_chain_seg *x = &c->segs[i];
                if (x->state == ETL_CHAIN_WAITING && x->child != UINT32_MAX && x->has_waker == key.has_waker &&
                    x->waker == key.waker && x->waker_thread == key.waker_thread && x->reason == key.reason)
                    kids[nk++] = x->child;
            }
        }
        etl_chain_summary_level *l = &s->levels[s->nlevels++];
        *l = (etl_chain_summary_level){w, key, 0, 0};
        ran_ready(c, kids, nk, &l->ran_ns, &l->ready_ns);
        at += nn;
        nn = nk;
    }
    free(nodes);
    return ETL_OK;
}

void etl_chain_summary_free(etl_chain_summary *s)
{
    if (!s) return;
    free(s->levels);
    memset(s, 0, sizeof *s);
}

/* Case-insensitive substring (ASCII letters). */
static bool contains_nocase(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++)
        if (strncasecmp(hay, needle, n) == 0) return true;
    return n == 0;
}

/* The same match as the chain's --thread NAME: the image name, ".exe" optional, any case. */
static bool name_matches(const char *name, const char *want)
{
    size_t n = strlen(want);
    if (strncasecmp(name, want, n) != 0) return false;
    return name[n] == 0 || strcasecmp(name + n, ".exe") == 0;
}

static uint64_t dist(uint64_t a, uint64_t b) { return a > b ? a - b : b - a; }

/* Up to ETL_CHAIN_NEAR_MAX thread instances of the TIDs nearest to tid (one per TID, its latest), nearest first. */
size_t etl_sched_near_tids(const etl_sched *m, uint32_t tid, uint32_t found[ETL_CHAIN_NEAR_MAX])
{
    size_t n, k = 0;
    const etl_sched_thread *t = etl_sched_threads(m, &n);
    for (size_t i = 0; i < n; i++) {
        if (!t[i].tid || etl_sched_thread_of(m, t[i].tid) != i) continue; /* a TID once, its latest instance */
        uint64_t d = dist(t[i].tid, tid);
        size_t j = k < ETL_CHAIN_NEAR_MAX ? k++ : ETL_CHAIN_NEAR_MAX;
        for (; j > 0 && (dist(t[found[j - 1]].tid, tid) > d ||
                         (dist(t[found[j - 1]].tid, tid) == d && t[found[j - 1]].tid > t[i].tid));
             j--)
            if (j < ETL_CHAIN_NEAR_MAX) found[j] = found[j - 1];
        if (j < ETL_CHAIN_NEAR_MAX) found[j] = (uint32_t)i;
    }
    return k;
}

/* Up to ETL_CHAIN_NEAR_MAX process instances: whose name contains want (in their order), or with the PIDs nearest to pid. */
size_t etl_sched_near_processes(const etl_sched *m, const char *want, bool by_pid, uint32_t pid,
                                uint32_t found[ETL_CHAIN_NEAR_MAX])
{
    size_t n, k = 0;
    const etl_sched_process *p = etl_sched_processes(m, &n);
    const char *names = etl_sched_names(m);
    for (size_t i = 0; i < n; i++) {
        if (by_pid) {
            uint64_t d = dist(p[i].pid, pid);
            size_t j = k < ETL_CHAIN_NEAR_MAX ? k++ : ETL_CHAIN_NEAR_MAX;
            for (; j > 0 && dist(p[found[j - 1]].pid, pid) > d; j--)
                if (j < ETL_CHAIN_NEAR_MAX) found[j] = found[j - 1];
            if (j < ETL_CHAIN_NEAR_MAX) found[j] = (uint32_t)i;
        } else if (k < ETL_CHAIN_NEAR_MAX && p[i].name && contains_nocase(names + p[i].name, want)) {
            bool dup = false; /* a name once */
            for (size_t j = 0; j < k; j++) dup |= strcmp(names + p[found[j]].name, names + p[i].name) == 0;
            if (!dup) found[k++] = (uint32_t)i;
        }
    }
    return k;
}

bool etl_sched_id_arg(const char *s, uint64_t *id)
{
    if (!s || !*s) return false;
    for (const char *p = s; *p; p++)
        if (*p < '0' || *p > '9') return false;
    if (num_parse_u64(s, 10, UINT64_MAX, id) != 0) *id = UINT64_MAX; /* past 2^64 */
    return true;
}

const char *etl_sched_process_image(const etl_sched *m, const etl_sched_process *p)
{
    return p->name ? etl_sched_names(m) + p->name : "Unknown";
}

bool etl_sched_process_named(const etl_sched *m, const char *want, bool by_pid, uint32_t pid)
{
    size_t n;
    const etl_sched_process *p = etl_sched_processes(m, &n);
    for (size_t i = 0; i < n; i++)
        if (by_pid ? p[i].pid == pid : name_matches(etl_sched_process_image(m, &p[i]), want)) return true;
    return false;
}

etl_sched_asked etl_sched_find_asked(const etl_sched *m, int64_t tid, const char *process, etl_sched_found *f)
{
    *f = (etl_sched_found){.what = ETL_ASKED_FOUND, .thread = ETL_SCHED_NONE};
    uint64_t pid = 0;
    if (process && (f->by_pid = etl_sched_id_arg(process, &pid)))
        f->pid = pid > UINT32_MAX ? UINT32_MAX : (uint32_t)pid; /* past 32 bits: no process has it */
    if (tid < 0 && !process) return f->what = ETL_ASKED_NOTHING;
    if (tid == 0) return f->what = ETL_ASKED_IDLE;
    if (tid > 0) {
        uint32_t i = tid <= UINT32_MAX ? etl_sched_thread_of(m, (uint32_t)tid) : ETL_SCHED_NONE;
        if (i == ETL_SCHED_NONE || i == ETL_SCHED_IDLE) {
            f->nnear = etl_sched_near_tids(m, tid <= UINT32_MAX ? (uint32_t)tid : UINT32_MAX, f->near);
            return f->what = ETL_ASKED_NO_THREAD;
        }
        f->thread = i;
    }
    if (process && !etl_sched_process_named(m, process, f->by_pid, f->pid)) {
        f->nnear = etl_sched_near_processes(m, process, f->by_pid, f->pid, f->near);
        return f->what = ETL_ASKED_NO_PROCESS;
    }
    return ETL_ASKED_FOUND;
}

etl_chain_why etl_chain_why_empty(const etl_chain *c, const etl_sched *m, uint64_t switches, etl_sched_found *f)
{
    *f = (etl_sched_found){.what = ETL_ASKED_NOTHING, .thread = ETL_SCHED_NONE};
    if (c->status == ETL_CHAIN_OK) return ETL_CHAIN_WHY_NOT_EMPTY;
    if (!switches) return ETL_CHAIN_WHY_NO_SWITCHES;
    if (c->status != ETL_CHAIN_NO_THREAD) return ETL_CHAIN_WHY_NO_INTERVAL;
    if (!c->o.tid && !c->o.process) return ETL_CHAIN_WHY_NONE_ASKED;
    etl_sched_asked a = etl_sched_find_asked(m, c->o.tid ? (int64_t)c->o.tid : -1, c->o.tid ? NULL : c->o.process, f);
    return a == ETL_ASKED_FOUND ? ETL_CHAIN_WHY_NEVER_SWITCHED_IN : ETL_CHAIN_WHY_NOT_IN_TRACE;
}

const char *etl_chain_why_name(unsigned why)
{
    static const char *const n[] = {"", "no_switches", "no_interval", "no_such_thread", "never_switched_in",
                                    "no_such_thread"};
    return why < sizeof n / sizeof n[0] ? n[why] : "?";
}

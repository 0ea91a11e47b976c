/*
 * chain_query.c - questions about a wait chain and its model beyond the chain itself
 * (etlkit/waitchain.h): each wait's stacks, the biggest waiting group of a level, and,
 * when there is no chain, the threads and processes closest to the one asked for.
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "etlkit/waitchain.h"

/*
 * A waiting (or off-CPU) segment's stacks: where it blocked, the walk at the switch-in
 * that ended the wait (the end of the ready segment after it, or the start of the running
 * one), and its readier's, the walk at the ReadyThread (the wait's end, on ready_cpu).
 */
uint32_t etl_chain_blocking_stack(const etl_chain *c, const etl_sched_stacks *stk, const etl_chain_node *n, uint32_t i)
{
    const etl_chain_seg *s = &c->segs[i];
    if (!stk || (s->state != ETL_CHAIN_WAITING && s->state != ETL_CHAIN_OFFCPU) || i + 1 >= n->first + n->count)
        return ETL_SCHED_STACK_NONE;
    const etl_chain_seg *x = &c->segs[i + 1];
    if (x->state == ETL_CHAIN_READY) return etl_sched_stacks_cswitch(stk, x->cpu, x->end);
    if (x->state == ETL_CHAIN_RUNNING) return etl_sched_stacks_cswitch(stk, x->cpu, x->start);
    return ETL_SCHED_STACK_NONE;
}

uint32_t etl_chain_readier_stack(const etl_sched_stacks *stk, const etl_chain_seg *s)
{
    if (!stk || s->state != ETL_CHAIN_WAITING || !s->has_waker) return ETL_SCHED_STACK_NONE;
    return etl_sched_stacks_ready(stk, s->ready_cpu, s->end);
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

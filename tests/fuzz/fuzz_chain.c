/*
 * fuzz_chain.c - wait chains and idle wake-ups on arbitrary event sequences pushed straight
 * into the model: readying cycles (A readies B readies A), readiers that never ran, unknown
 * and reused threads, times going back. The same bytes are replayed for every pass of the
 * chain (instances are numbered in event order, so each pass sees the same ones).
 * Nothing may crash or leak; each node's segments must tile its interval, a descent must
 * cover its segment exactly, no thread may appear twice on a path, the depth limit must
 * hold, and the critical path must add up to the root interval.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/etlkit.h"
#include "etlkit/sched.h"
#include "etlkit/wakeups.h"
#include "etlkit/waitchain.h"

static uint64_t rd(const uint8_t **p, const uint8_t *end, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n && *p < end; i++) v |= (uint64_t)*(*p)++ << (8 * i);
    return v;
}

static void events(etl_sched *m, const uint8_t *p, const uint8_t *end)
{
    uint64_t ts = 1000;
    while (p < end) {
        etl_sched_event ev;
        memset(&ev, 0, sizeof ev);
        unsigned k = (unsigned)rd(&p, end, 1);
        ev.cpu = (uint16_t)(rd(&p, end, 1) % 4);
        int8_t dt = (int8_t)rd(&p, end, 1);
        ts += (uint64_t)(int64_t)dt * 10; /* may go back */
        ev.ts = ts;
        uint32_t a = (uint32_t)rd(&p, end, 1) % 8, b = (uint32_t)rd(&p, end, 1) % 8;
        switch (k % 4) {
        case 0:
        case 1:
            ev.kind = ETL_SCHED_SWITCH;
            ev.u.sw.ts = ts;
            ev.u.sw.cpu = ev.cpu;
            ev.u.sw.known = ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_STATE | ETL_CSW_WAIT_REASON |
                            ((k & 0x40) ? 0 : ETL_CSW_NEW_TID) | ((k & 0x80) ? 0 : ETL_CSW_OLD_TID) |
                            ((k & 0x20) ? ETL_CSW_PREVIOUS_CSTATE : 0);
            ev.u.sw.version = 2;
            ev.u.sw.new_tid = a;
            ev.u.sw.old_tid = b;
            ev.u.sw.old_state = (uint8_t)((k >> 2) % 10);
            ev.u.sw.old_wait_reason = (uint8_t)(k >> 3);
            ev.u.sw.previous_cstate = (uint8_t)k;
            break;
        case 2:
            ev.kind = ETL_SCHED_READY;
            ev.u.ready.thread_id = a;
            ev.u.ready.flags = (uint8_t)(b & 1);
            break;
        default:
            ev.kind = ETL_SCHED_THREAD;
            ev.hook = (uint16_t)(ETL_HOOK_THREAD_START + (b & 3));
            ev.u.thread.known = ETL_THR_IDS;
            ev.u.thread.thread_id = a;
            ev.u.thread.process_id = b;
            break;
        }
        etl_sched_push(m, &ev);
    }
}

static void check(const etl_chain *c)
{
    if (c->status != ETL_CHAIN_OK) {
        if (c->nnodes) abort();
        return;
    }
    for (size_t i = 0; i < c->nnodes; i++) {
        const etl_chain_node *n = &c->nodes[i];
        if (n->start >= n->end) abort();
        int64_t at = n->start;
        for (uint32_t k = n->first; k < n->first + n->count; k++) {
            const etl_chain_seg *s = &c->segs[k];
            if (s->start != at || s->end <= s->start) abort();
            at = s->end;
            if (s->child == UINT32_MAX) continue;
            const etl_chain_node *ch = &c->nodes[s->child];
            if (ch->start != s->start || ch->end != s->end || ch->depth != n->depth + 1 || ch->depth > c->o.depth)
                abort();
            for (uint32_t p = (uint32_t)i; p != UINT32_MAX; p = c->nodes[p].parent)
                if (c->nodes[p].thread == ch->thread) abort();
        }
        if (at != n->end) abort();
    }
    int64_t sum = 0;
    for (size_t i = 0; i < c->npath; i++) sum += c->path[i].ns;
    if (c->nnodes && sum != c->nodes[0].end - c->nodes[0].start) abort();
    /* The summary's numbers: the root's states tile it; each level's nodes below did no more than its wait. */
    etl_chain_summary s;
    if (etl_chain_summarize(c, &s) != ETL_OK) abort();
    int64_t states = 0;
    for (unsigned k = 0; k < 6; k++) states += s.by_state[k];
    if (states != s.interval_ns || s.interval_ns != c->nodes[0].end - c->nodes[0].start) abort();
    for (size_t k = 0; k < s.nlevels; k++) {
        const etl_chain_summary_level *l = &s.levels[k];
        int64_t below = l->ran_ns + l->ready_ns + (k + 1 < s.nlevels ? s.levels[k + 1].wait_ns : 0);
        if (l->wait_ns <= 0 || l->ran_ns < 0 || l->ready_ns < 0 || below > l->wait_ns) abort();
    }
    if (s.nlevels && s.levels[0].wait_ns > s.by_state[ETL_CHAIN_WAITING]) abort();
    etl_chain_summary_free(&s);
    /* The stacks' events: at most two a segment, each at a time inside the chain. */
    etl_sched_stacks_event *v;
    size_t n;
    if (etl_chain_stack_events(c, &v, &n) != ETL_OK) abort();
    if (n > 2 * c->nsegs) abort();
    free(v);
    if (etl_chain_why_empty(c, NULL, 1, &(etl_sched_found){0}) != ETL_CHAIN_WHY_NOT_EMPTY) abort();
}

typedef struct both {
    etl_chain *c;
    etl_wakeups *w;
} both;

static void on_row(void *ctx, const etl_sched_row *r)
{
    both *b = ctx;
    etl_chain_row(b->c, r);
    if (b->w) etl_wakeups_add(b->w, r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 6) return 0;
    etl_chain_options o = {.sz = sizeof o,
                           .tid = data[0] % 8,
                           .process = (data[0] & 0x80) ? "7" : NULL,
                           .has_at = (data[1] & 1) != 0,
                           .at = (int64_t)data[2] * 40,
                           .has_from = (data[1] & 2) != 0,
                           .from = (int64_t)data[3] * 20,
                           .depth = data[4] % 5,
                           .no_descent = data[4] == 255,
                           .min_ns = (int64_t)(data[5] % 4) * 50 - 50};
    if (!o.tid && !o.process) o.tid = 1;
    if (o.has_from && o.has_at && o.from >= o.at) o.has_from = false;
    etl_chain c;
    if (etl_chain_init(&c, &o) != ETL_OK) abort();
    etl_clock clk = {.type = ETL_CLOCK_QPC, .ticks_per_sec = 1000000000, .t0 = 1000};
    unsigned passes = 0;
    while (etl_chain_next_pass(&c)) {
        etl_wakeups w;
        both b = {&c, passes == 0 ? &w : NULL};
        etl_sched *m;
        etl_sched_options mo = {.sz = sizeof mo, .on_row = on_row, .ctx = &b};
        if (etl_sched_open(&clk, 4, &mo, &m) != ETL_OK) abort();
        etl_chain_bind(&c, m);
        etl_wakeups_options wo = {.sz = sizeof wo};
        if (b.w && etl_wakeups_init(&w, m, &wo) != ETL_OK) abort();
        events(m, data + 6, data + size);
        etl_sched_finish(m, 1000 + 256 * 10 * size);
        if (b.w) {
            if (etl_wakeups_finish(&w) != ETL_OK) abort();
            uint64_t sum = 0;
            for (size_t i = 0; i < w.nthreads; i++) sum += w.threads[i].count;
            if (sum != w.total) abort();
            etl_wakeups_free(&w);
        }
        if (etl_chain_end_pass(&c) != ETL_OK) abort();
        etl_sched_close(m);
        if (++passes > 12) abort(); /* one locate pass and at most depth + 1 collect passes */
    }
    check(&c);
    etl_chain_free(&c);
    return 0;
}

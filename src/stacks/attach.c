/* attach.c - see attach.h. */
#include "stacks/attach.h"

#include <stdlib.h>
#include <string.h>
#include "etlkit/kernel.h"
#include "stacks/images.h"

#define NIL UINT32_MAX

struct etl_attach_wait {
    etl_attach_event ev;
    uint32_t queue;
    uint32_t kpart, upart;  /* raw stacks or NIL */
    bool walked;
    uint32_t prev, next;    /* the queue, oldest first; next also chains free entries */
};

etl_status etl_attach_init(etl_attach *a, etl_seqtab *raw, const etl_stack_keys *keys, etl_attach_close_fn on_close,
                           void *ctx)
{
    memset(a, 0, sizeof *a);
    a->raw = raw;
    a->keys = keys;
    a->on_close = on_close;
    a->ctx = ctx;
    a->free_w = NIL;
    etl_idmap_init(&a->by_event);
    etl_idmap_init(&a->queue_of);
    a->frames = malloc(2 * ETL_STACK_MAX_FRAMES * sizeof *a->frames);
    return a->frames ? ETL_OK : ETL_E_NOMEM;
}

void etl_attach_free(etl_attach *a)
{
    free(a->w);
    free(a->q);
    free(a->frames);
    etl_idmap_free(&a->by_event);
    etl_idmap_free(&a->queue_of);
    memset(a, 0, sizeof *a);
}

static uint64_t event_key(uint32_t tid, uint64_t ts, uint32_t cpu)
{
    return etl_hash_mix64(ts ^ etl_hash_mix64((uint64_t)tid << 32 | (tid ? 0 : cpu)));
}

static void unlink_wait(etl_attach *a, uint32_t i)
{
    etl_attach_wait *e = &a->w[i];
    etl_attach_queue *q = &a->q[e->queue];
    if (e->prev != NIL) a->w[e->prev].next = e->next;
    else q->head = e->next;
    if (e->next != NIL) a->w[e->next].prev = e->prev;
    else q->tail = e->prev;
    q->n--;
    uint64_t k = event_key(e->ev.tid, e->ev.ts, e->ev.cpu);
    if (etl_idmap_get(&a->by_event, k) == i) (void)etl_idmap_remove(&a->by_event, k);
    e->next = a->free_w;
    a->free_w = i;
}

/* Hands event i to on_close with its frames, and frees it. */
static etl_status close_wait(etl_attach *a, uint32_t i)
{
    etl_attach_wait *e = &a->w[i];
    uint32_t n = 0;
    for (int part = 0; part < 2; part++) {
        uint32_t id = part ? e->upart : e->kpart, len;
        if (id == NIL) continue;
        const uint64_t *w = etl_seqtab_get(a->raw, id, &len);
        for (uint32_t k = 0; k < len && n < 2 * ETL_STACK_MAX_FRAMES; k++) a->frames[n++] = w[k];
    }
    etl_attach_event ev = e->ev;
    bool walked = e->walked;
    unlink_wait(a, i);
    return a->on_close(a->ctx, &ev, a->frames, n, walked);
}

static etl_status queue_for(etl_attach *a, const etl_attach_event *ev, uint32_t *out)
{
    uint64_t key = ev->tid ? ev->tid : (uint64_t)ev->cpu | 1ull << 32;
    uint32_t i = etl_idmap_get(&a->queue_of, key);
    if (i == ETL_IDMAP_EMPTY) {
        if (a->nq == a->capq) {
            uint32_t cap = a->capq ? a->capq * 2 : 256;
            etl_attach_queue *q = realloc(a->q, cap * sizeof *q);
            if (!q) return ETL_E_NOMEM;
            a->q = q;
            a->capq = cap;
        }
        i = a->nq;
        etl_status st = etl_idmap_put(&a->queue_of, key, i);
        if (st != ETL_OK) return st;
        a->q[a->nq++] = (etl_attach_queue){NIL, NIL, 0};
    }
    *out = i;
    return ETL_OK;
}

etl_status etl_attach_event_add(etl_attach *a, const etl_attach_event *ev)
{
    uint32_t qi;
    etl_status st = queue_for(a, ev, &qi);
    if (st != ETL_OK) return st;
    /* A full queue lets its oldest go: one still waiting for its user part is counted. */
    while (a->q[qi].n >= ETL_ATTACH_MAX_WAITING) {
        const etl_attach_wait *old = &a->w[a->q[qi].head];
        if (old->kpart != NIL && old->upart == NIL && old->ev.pid != 0 && old->ev.pid != 4)
            a->stats.user_parts_dropped++;
        if ((st = close_wait(a, a->q[qi].head)) != ETL_OK) return st;
    }
    uint32_t i = a->free_w;
    if (i != NIL) {
        a->free_w = a->w[i].next;
    } else {
        if (a->nw == a->capw) {
            uint32_t cap = a->capw ? a->capw * 2 : 1024;
            if (cap < a->capw) return ETL_E_RANGE;
            etl_attach_wait *w = realloc(a->w, (size_t)cap * sizeof *w);
            if (!w) return ETL_E_NOMEM;
            a->w = w;
            a->capw = cap;
        }
        i = a->nw++;
    }
    etl_attach_queue *q = &a->q[qi];
    a->w[i] = (etl_attach_wait){*ev, qi, NIL, NIL, false, q->tail, NIL};
    if (q->tail != NIL) a->w[q->tail].next = i;
    else q->head = i;
    q->tail = i;
    q->n++;
    return etl_idmap_put(&a->by_event, event_key(ev->tid, ev->ts, ev->cpu), i);
}

/* The waiting event a walk of (tid, ts) on cpu belongs to, or NIL. */
static uint32_t find_wait(const etl_attach *a, uint32_t tid, uint64_t ts, uint32_t cpu)
{
    uint32_t i = etl_idmap_get(&a->by_event, event_key(tid, ts, cpu));
    if (i == ETL_IDMAP_EMPTY) return NIL;
    const etl_attach_event *e = &a->w[i].ev;
    return e->tid == tid && e->ts == ts && (tid || e->cpu == cpu) ? i : NIL;
}

/* A part came for event i; the user part closes it and every older event of its queue (user parts come in order). */
static etl_status attach_part(etl_attach *a, uint32_t i, uint32_t stack, uint32_t pid, bool user)
{
    etl_attach_wait *e = &a->w[i];
    e->ev.pid = pid;
    e->walked = true;
    if (!user) {
        if (e->kpart == NIL) e->kpart = stack;
        return ETL_OK;
    }
    e->upart = stack;
    etl_attach_queue *q = &a->q[e->queue];
    for (uint32_t j = q->head, next; j != NIL; j = next) {
        next = a->w[j].next;
        etl_status st = close_wait(a, j);
        if (st != ETL_OK || j == i) return st;
    }
    return ETL_OK;
}

etl_status etl_attach_walk(etl_attach *a, const etl_record *rec, uint16_t hook, uint64_t pos)
{
    if (hook == ETL_HOOK_STACKWALK) {
        etl_stackwalk w;
        if (etl_stackwalk_decode(rec->payload, rec->pointer_size, &w) != ETL_OK) return ETL_OK;
        uint32_t i = find_wait(a, w.stack_thread, w.event_timestamp, rec->cpu);
        if (i == NIL) {
            a->stats.walks_other++;
            return ETL_OK;
        }
        uint64_t f[ETL_STACK_MAX_FRAMES];
        for (uint32_t k = 0; k < w.frame_count; k++) f[k] = etl_stack_frame(w.frames, w.ptr_size, k);
        uint32_t stack;
        etl_status st = etl_seqtab_intern(a->raw, f, w.frame_count, &stack);
        if (st != ETL_OK) return st;
        /* One walk with both parts (it ends in user space), or the kernel part of two, then the user part. */
        bool user = a->w[i].kpart != NIL ||
                    (w.frame_count && !etl_image_kernel_addr(w.ptr_size, f[w.frame_count - 1]));
        return attach_part(a, i, stack, w.stack_process, user);
    }
    if (hook != ETL_HOOK_STACK_KEY_KERNEL && hook != ETL_HOOK_STACK_KEY_USER) return ETL_OK;
    etl_stack_key_ref ref;
    if (etl_stack_key_ref_decode(rec->payload, rec->pointer_size, &ref) != ETL_OK) return ETL_OK;
    uint32_t i = find_wait(a, ref.stack_thread, ref.event_timestamp, rec->cpu);
    if (i == NIL) {
        a->stats.walks_other++;
        return ETL_OK;
    }
    uint32_t stack = etl_stack_keys_resolve(a->keys, ref.stack_key, pos);
    if (stack == ETL_SEQ_NONE) {
        a->stats.key_refs_unresolved++;
        return ETL_OK;
    }
    return attach_part(a, i, stack, ref.stack_process, hook == ETL_HOOK_STACK_KEY_USER);
}

etl_status etl_attach_finish(etl_attach *a)
{
    etl_status st = ETL_OK;
    for (uint32_t q = 0; st == ETL_OK && q < a->nq; q++)
        while (st == ETL_OK && a->q[q].head != NIL) st = close_wait(a, a->q[q].head);
    return st;
}

/* attach.c - see attach.h. */
#include "stacks/attach.h"

#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "container/reader_internal.h"
#include "etlkit/kernel.h"
#include "stacks/images.h"
#include "stacks/learn.h" /* etl_stacks_address_damage */

#define NIL UINT32_MAX
/* A part is a walk's frames interned in raw (its id), or a key's definition (its index | DEF). */
#define DEF (1u << 31)

struct etl_attach_wait {
    etl_attach_event ev;
    uint32_t thread;        /* its thread's queues */
    uint8_t queue;          /* which: 0 no walk yet, 1 the user part awaited */
    uint32_t kpart, upart;  /* parts (DEF) or NIL */
    bool walked;
    uint32_t prev, next;    /* the queue, oldest first; next also chains free entries */
};

etl_status etl_attach_init(etl_attach *a, etl_seqtab *raw, etl_stack_keys *keys, etl_attach_close_fn on_close,
                           void *ctx)
{
    memset(a, 0, sizeof *a);
    a->raw = raw;
    a->keys = keys;
    a->on_close = on_close;
    a->ctx = ctx;
    a->free_w = NIL;
    a->damage.first_problem_offset = UINT64_MAX;
    etl_idmap_init(&a->by_event);
    etl_idmap_init(&a->queue_of);
    a->frames = malloc(2 * ETL_STACK_MAX_FRAMES * sizeof *a->frames);
    a->recent = calloc(1u << ETL_ATTACH_TS_BITS, 1);
    a->ring = malloc(ETL_ATTACH_RECENT * sizeof *a->ring);
    return a->frames && a->recent && a->ring ? ETL_OK : ETL_E_NOMEM;
}

void etl_attach_free(etl_attach *a)
{
    free(a->w);
    free(a->t);
    free(a->frames);
    free(a->recent);
    free(a->ring);
    etl_idmap_free(&a->by_event);
    etl_idmap_free(&a->queue_of);
    memset(a, 0, sizeof *a);
}

/* One key per (thread, time) (the idle thread's by CPU); the map mixes it again. */
static uint64_t event_key(uint32_t tid, uint64_t ts, uint32_t cpu)
{
    return ts ^ etl_hash_mix64((uint64_t)tid << 32 | (tid ? 0 : cpu));
}

/* A slot of the waiting timestamps' counts (attach.h: ts_count). */
static uint32_t ts_slot(uint64_t ts)
{
    return (uint32_t)((ts * 0x9e3779b97f4a7c15ull) >> (64 - ETL_ATTACH_TS_BITS));
}

static void push(etl_attach *a, uint32_t i, etl_attach_queue *q)
{
    etl_attach_wait *e = &a->w[i];
    e->prev = q->tail;
    e->next = NIL;
    if (q->tail != NIL) a->w[q->tail].next = i;
    else q->head = i;
    q->tail = i;
    q->n++;
}

static void unlink_queue(etl_attach *a, uint32_t i)
{
    etl_attach_wait *e = &a->w[i];
    etl_attach_queue *q = &a->t[e->thread].q[e->queue];
    if (e->prev != NIL) a->w[e->prev].next = e->next;
    else q->head = e->next;
    if (e->next != NIL) a->w[e->next].prev = e->prev;
    else q->tail = e->prev;
    q->n--;
}

static void unlink_wait(etl_attach *a, uint32_t i)
{
    etl_attach_wait *e = &a->w[i];
    unlink_queue(a, i);
    uint64_t k = event_key(e->ev.tid, e->ev.ts, e->ev.cpu);
    if (etl_idmap_get(&a->by_event, k) == i) (void)etl_idmap_remove(&a->by_event, k);
    uint8_t *c = &a->ts_count[ts_slot(e->ev.ts)];
    if (*c != UINT8_MAX) (*c)--; /* a full count stays: it no longer knows how many */
    e->next = a->free_w;
    a->free_w = i;
}

/* Hands event i to on_close with its frames (its parts', then ntail more: a last part not interned), and frees it. */
static etl_status close_wait_with(etl_attach *a, uint32_t i, const uint64_t *tail, uint32_t ntail)
{
    etl_attach_wait *e = &a->w[i];
    uint32_t n = 0;
    for (int part = 0; a->raw && part < 2; part++) { /* no raw: no frames kept (attach.h) */
        uint32_t id = part ? e->upart : e->kpart, len;
        if (id == NIL) continue;
        if (id & DEF) { /* at most ETL_STACK_MAX_FRAMES: the kernel part's and the user part's fit */
            /* After the walk, with pread: the definitions lie all over the file, whose pages it dropped. */
            n += a->finishing && a->r ? etl_stack_keys_frames_pread(a->keys, id & ~DEF, a->frames + n, &a->r->map)
                                      : etl_stack_keys_frames(a->keys, id & ~DEF, a->frames + n);
            continue;
        }
        const uint64_t *w = etl_seqtab_get(a->raw, id, &len);
        for (uint32_t k = 0; k < len && n < 2 * ETL_STACK_MAX_FRAMES; k++) a->frames[n++] = w[k];
    }
    for (uint32_t k = 0; a->raw && k < ntail && n < 2 * ETL_STACK_MAX_FRAMES; k++) a->frames[n++] = tail[k];
    etl_attach_event ev = e->ev;
    bool walked = e->walked;
    unlink_wait(a, i);
    return a->on_close(a->ctx, &ev, a->frames, n, walked);
}

static etl_status close_wait(etl_attach *a, uint32_t i)
{
    return close_wait_with(a, i, NULL, 0);
}

static etl_status thread_for(etl_attach *a, const etl_attach_event *ev, uint32_t *out)
{
    uint64_t key = ev->tid ? ev->tid : (uint64_t)ev->cpu | 1ull << 32;
    uint32_t i = etl_idmap_get(&a->queue_of, key);
    if (i == ETL_IDMAP_EMPTY) {
        if (a->nt == a->capt) {
            uint32_t cap = a->capt ? a->capt * 2 : 256;
            etl_attach_thread *t = realloc(a->t, cap * sizeof *t);
            if (!t) return ETL_E_NOMEM;
            a->t = t;
            a->capt = cap;
        }
        i = a->nt;
        etl_status st = etl_idmap_put(&a->queue_of, key, i);
        if (st != ETL_OK) return st;
        a->t[a->nt++] = (etl_attach_thread){{{NIL, NIL, 0}, {NIL, NIL, 0}}};
    }
    *out = i;
    return ETL_OK;
}

/* Lets queue which of thread t go of its oldest until it holds fewer than max. */
static etl_status trim(etl_attach *a, uint32_t t, int which, uint32_t max)
{
    etl_attach_queue *q = &a->t[t].q[which];
    while (q->n >= max) {
        if (which) a->stats.user_parts_dropped++;
        else a->stats.unwalked_dropped++;
        etl_status st = close_wait(a, q->head);
        if (st != ETL_OK) return st;
    }
    return ETL_OK;
}

/* An event at ts announced: counted in recent, its ring's oldest let go when full (its time and those before it
 * then ask ts_count). Only a refusal depends on it: a count too many costs a lookup, never a walk. */
static void recent_add(etl_attach *a, uint64_t ts)
{
    if (a->recent_off || ts < a->recent_from) return;
    if (a->nring == ETL_ATTACH_RECENT) {
        uint64_t old = a->ring[a->ring_head];
        a->ring_head = (a->ring_head + 1) % ETL_ATTACH_RECENT;
        a->nring--;
        uint8_t *c = &a->recent[ts_slot(old)];
        if (*c != UINT8_MAX) (*c)--;
        if (old == UINT64_MAX) a->recent_off = true;
        else if (old >= a->recent_from) a->recent_from = old + 1;
        if (a->recent_off || ts < a->recent_from) return;
    }
    a->ring[(a->ring_head + a->nring++) % ETL_ATTACH_RECENT] = ts;
    uint8_t *c = &a->recent[ts_slot(ts)];
    if (*c != UINT8_MAX) (*c)++;
}

etl_status etl_attach_event_add(etl_attach *a, const etl_attach_event *ev)
{
    uint32_t ti;
    etl_status st = thread_for(a, ev, &ti);
    if (st == ETL_OK) st = trim(a, ti, 0, ETL_ATTACH_MAX_UNWALKED);
    if (st != ETL_OK) return st;
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
    a->w[i] = (etl_attach_wait){*ev, ti, 0, NIL, NIL, false, NIL, NIL};
    push(a, i, &a->t[ti].q[0]);
    uint8_t *c = &a->ts_count[ts_slot(ev->ts)];
    if (*c != UINT8_MAX) (*c)++;
    recent_add(a, ev->ts);
    return etl_idmap_put(&a->by_event, event_key(ev->tid, ev->ts, ev->cpu), i);
}

/* The waiting event a walk of (tid, ts) on cpu belongs to, or NIL. */
static uint32_t find_wait(const etl_attach *a, uint32_t tid, uint64_t ts, uint32_t cpu)
{
    uint32_t s = ts_slot(ts); /* no event waits with this timestamp: */
    if (!(ts >= a->recent_from && !a->recent_off ? a->recent[s] : a->ts_count[s])) return NIL;
    uint32_t i = etl_idmap_get(&a->by_event, event_key(tid, ts, cpu));
    if (i == ETL_IDMAP_EMPTY) return NIL;
    const etl_attach_event *e = &a->w[i].ev;
    return e->tid == tid && e->ts == ts && (tid || e->cpu == cpu) ? i : NIL;
}

/* A part (its innermost frame: leaf, when has) came for event e: the first with a frame begins its stack. */
static void take_leaf(etl_attach_wait *e, bool has, uint64_t leaf)
{
    if (has && !e->ev.has_leaf) e->ev.leaf = leaf, e->ev.has_leaf = true;
}

/*
 * A part came for event i. The user part completes it; the kernel part moves it to
 * the queue that waits for the user part, or completes it in processes 0 and 4,
 * which have no user mode.
 */
static etl_status attach_part(etl_attach *a, uint32_t i, uint32_t stack, uint32_t pid, bool user, bool has_leaf,
                              uint64_t leaf)
{
    etl_attach_wait *e = &a->w[i];
    if (!user && e->kpart != NIL) { /* a second kernel part: the first stands, its process too */
        a->stats.walks_repeated++;
        return ETL_OK;
    }
    take_leaf(e, has_leaf, leaf);
    e->ev.pid = pid;
    e->walked = true;
    if (user) {
        e->upart = stack;
        return close_wait(a, i);
    }
    e->kpart = stack;
    if (pid == 0 || pid == 4) return close_wait(a, i);
    uint32_t t = e->thread;
    unlink_queue(a, i);
    etl_status st = trim(a, t, 1, ETL_ATTACH_MAX_WAITING);
    if (st != ETL_OK) return st;
    a->w[i].queue = 1;
    push(a, i, &a->t[t].q[1]);
    return ETL_OK;
}

bool etl_attach_wanted_payload(etl_attach *a, uint16_t hook, etl_span payload, unsigned ptr_size, unsigned cpu)
{
    /* The head (EventTimeStamp, StackThread) read in place, where a decoder would check as much: every walk of
     * the trace comes here (most are other events'), few go on to etl_attach_walk. */
    if (a->ptr_size) ptr_size = a->ptr_size;
    size_t head = hook == ETL_HOOK_STACKWALK ? 16 : hook == ETL_HOOK_STACK_KEY_KERNEL ? 16 + (size_t)ptr_size : 0;
    if (!head) return true;
    if ((ptr_size != 4 && ptr_size != 8) || payload.n < head) return false; /* not decodable */
    if (find_wait(a, etl_rd_u32(payload.p + 12), etl_rd_u64(payload.p), cpu) != NIL) return true;
    a->stats.walks_other++;
    return false;
}

bool etl_attach_wanted(etl_attach *a, const etl_record *rec, uint16_t hook)
{
    return etl_attach_wanted_payload(a, hook, rec->payload, rec->pointer_size, rec->cpu);
}

etl_status etl_attach_walk(etl_attach *a, const etl_record *rec, uint16_t hook, etl_stack_pos pos)
{
    unsigned ptr_size = a->ptr_size ? a->ptr_size : rec->pointer_size;
    if (hook == ETL_HOOK_STACKWALK) {
        etl_stackwalk w;
        if (etl_stackwalk_decode(rec->payload, ptr_size, &w) != ETL_OK) return ETL_OK;
        uint32_t i = find_wait(a, w.stack_thread, w.event_timestamp, rec->cpu);
        if (i == NIL) {
            a->stats.walks_other++;
            return ETL_OK;
        }
        /* Frames after the 16-byte head past 192: Windows logs at most 192 (the decoder kept the innermost). */
        if ((rec->payload.n - 16) / w.ptr_size > ETL_STACK_MAX_FRAMES) a->stats.walks_cut++;
        uint64_t bad;
        if (__builtin_expect(etl_frames_noncanonical(w.frames, w.ptr_size, w.frame_count, &bad), 0)) {
            a->stats.walks_noncanonical++;
            if (a->r) etl_stacks_address_damage(a->r, &a->damage, rec, "hook 0x1820, a stack walk", bad);
        }
        uint64_t f[ETL_STACK_MAX_FRAMES];
        uint32_t n = w.frame_count, from = a->raw || !n ? 0 : n - 1; /* no frames kept: the last alone is read */
        if (n) etl_rd_ptrs(f + from, w.frames + (size_t)from * w.ptr_size, w.ptr_size, n - from); /* none: no bytes */
        /* One walk with both parts (it ends in user space), or the kernel part of two, then the user part. */
        etl_attach_wait *e = &a->w[i];
        if (e->kpart != NIL && n && etl_image_kernel_addr(w.ptr_size, etl_stack_frame(w.frames, w.ptr_size, 0))) {
            a->stats.walks_repeated++; /* a second kernel part (a damaged EventTimeStamp): not the user part */
            return ETL_OK;
        }
        bool user = e->kpart != NIL || (n && !etl_image_kernel_addr(w.ptr_size, f[n - 1]));
        if (user || w.stack_process == 0 || w.stack_process == 4) { /* (no user part: kpart is NIL) */
            /* It completes the event: its frames go straight to on_close, never interned. */
            e->ev.pid = w.stack_process;
            e->walked = true;
            take_leaf(e, n, n ? etl_stack_frame(w.frames, w.ptr_size, 0) : 0);
            return close_wait_with(a, i, f, w.frame_count);
        }
        uint32_t stack = 0;
        etl_status st = a->raw ? etl_seqtab_intern(a->raw, f, w.frame_count, &stack) : ETL_OK;
        if (st == ETL_OK && stack >= DEF) st = ETL_E_RANGE;
        if (st != ETL_OK) return st;
        return attach_part(a, i, stack, w.stack_process, false, n, n ? etl_stack_frame(w.frames, w.ptr_size, 0) : 0);
    }
    if (hook != ETL_HOOK_STACK_KEY_KERNEL && hook != ETL_HOOK_STACK_KEY_USER) return ETL_OK;
    etl_stack_key_ref ref;
    if (etl_stack_key_ref_decode(rec->payload, ptr_size, &ref) != ETL_OK) return ETL_OK;
    uint32_t i = find_wait(a, ref.stack_thread, ref.event_timestamp, rec->cpu);
    if (i == NIL) {
        a->stats.walks_other++;
        return ETL_OK;
    }
    bool user = hook == ETL_HOOK_STACK_KEY_USER;
    uint32_t def =
        etl_stack_keys_resolve(a->keys, ref.stack_key, pos, user ? ETL_STACK_PART_USER : ETL_STACK_PART_KERNEL);
    if (def == ETL_SEQ_NONE) {
        a->stats.key_refs_unresolved++;
        return ETL_OK;
    }
    if (a->lost && a->lost->n && etl_lost_between(a->lost, pos.ts, a->keys->v[def].ts)) a->stats.key_refs_uncertain++;
    uint64_t leaf = 0;
    bool has_leaf = etl_stack_keys_leaf(a->keys, def, &leaf);
    return attach_part(a, i, def | DEF, ref.stack_process, user, has_leaf, leaf);
}

etl_status etl_attach_finish(etl_attach *a)
{
    etl_status st = ETL_OK;
    a->finishing = true;
    for (uint32_t t = 0; st == ETL_OK && t < a->nt; t++)
        for (int which = 0; which < 2; which++)
            while (st == ETL_OK && a->t[t].q[which].head != NIL) st = close_wait(a, a->t[t].q[which].head);
    return st;
}

/*
 * source.c - a trace's scheduler events in time order.
 *
 * The records come from the reader's time-order iterator, except compact
 * batches: the kernel logs a batch when it flushes it, after the other events of
 * its period (up to 500 timer ticks later), so merged at the batch's own time
 * its switches would come after the ReadyThread events they answer. When the
 * trace logs compact switches (group mask PERF_COMPACT_CSWITCH, or no mask at
 * all), each CPU gets a second cursor that reads only that CPU's batches, ahead
 * of the main one, and expands them; a tournament tree merges the main stream
 * with the per-CPU switch streams on (time, CPU, main first). Memory: one cursor
 * and one expander per CPU, nothing per event.
 *
 * A CPU whose trace carries both forms (CSwitch events and batches) keeps the
 * form it shows first and drops the other (counted), as convert does.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/sched.h"
#include "etlkit/event.h"
#include "base/fastmem.h"
#include "base/ltree.h"
#include "sched/cpushare.h"

enum { FORM_UNKNOWN = 0, FORM_FULL = 1, FORM_COMPACT = 2 };

/* One CPU's compact switches, read ahead. */
typedef struct bsrc {
    etl_iter *it;
    etl_batch_expander x;
    etl_batch_expand_cpu *xcpus;
    unsigned cpu;
    uint64_t key;    /* merge time: the largest switch time so far */
    bool in_batch;   /* x has a batch begun */
    bool finishing;  /* the iterator is done: draining x's pending switch */
    bool done;
} bsrc;

/* A source's head event. */
typedef struct head {
    etl_sched_event ev;
    uint64_t key;     /* merge time (etl_iter_merge_ts): rises along each stream */
    bool has;
} head;

typedef struct part part;

/* The events of a set of CPUs (all of them with one thread), in time order. */
struct part {
    etl_reader *r;
    etl_iter *main;
    bool main_done;
    bool lookahead;
    /* late expansion, when batches are not read ahead */
    etl_batch_expander late;
    etl_batch_expand_cpu *late_cpus;
    bool late_active;
    bool late_finishing;
    uint64_t late_key;  /* the merge time of the batch being expanded */
    bsrc *b;
    unsigned nb;
    head *heads;      /* [0] main, [1 + c] CPU c's batches */
    etl_ltree lt;     /* the heads on (merge time, CPU, main first) */
    int pending;      /* source whose head was returned last */
    uint8_t *form;    /* per CPU */
    unsigned nform;
    unsigned bias;
    uint32_t skip;    /* kinds the caller does not want */
    etl_span payload; /* the record of the last Thread, SetName or Process event: its strings point into it */
    uint64_t key;     /* merge time of the event returned last */
    etl_sched_source_stats st;
};

static size_t packed_size(const etl_sched_event *e);


static void switch_event(etl_sched_event *ev, const etl_cswitch *sw, uint16_t hook)
{
    ev->kind = ETL_SCHED_SWITCH;
    ev->cpu = sw->cpu;
    ev->hook = hook;
    ev->ts = sw->ts;
    etl_copy_small(&ev->u.sw, sw, sizeof *sw);
}

/* Decodes a record into ev. Returns 1 for an event, 0 to skip, 2 for a batch (not filled). */
static int decode(part *s, const etl_record *rec, etl_sched_event *ev)
{
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) return 0;
    unsigned kind = etl_sched_kind_of(hook);
    if (!kind) return 0;
    if (rec->ts > s->st.last_ts) s->st.last_ts = rec->ts;
    if (s->skip & (1u << kind)) return 0;
    /* The two events of nearly every record, straight into ev: no etl_event in between. */
    if (hook == ETL_HOOK_CSWITCH || hook == ETL_HOOK_READY_THREAD) {
        etl_status st = hook == ETL_HOOK_CSWITCH ? etl_event_decode_cswitch(rec, &ev->u.sw)
                                                 : etl_ready_thread_decode(rec->payload, &ev->u.ready);
        if (st != ETL_OK) {
            s->st.undecodable++;
            return 0;
        }
        ev->kind = hook == ETL_HOOK_CSWITCH ? ETL_SCHED_SWITCH : ETL_SCHED_READY;
        ev->cpu = rec->cpu;
        ev->hook = hook;
        ev->ts = rec->ts;
        return 1;
    }
    etl_event e;
    if (etl_event_decode(rec, &e) != ETL_OK) {
        s->st.undecodable++;
        return 0;
    }
    ev->cpu = rec->cpu;
    ev->hook = hook;
    ev->ts = rec->ts;
    switch (e.kind) {
    case ETL_EVENT_CSWITCH:
        switch_event(ev, &e.u.cswitch, hook);
        return 1;
    case ETL_EVENT_CCSWAP_BATCH:
        return 2;
    case ETL_EVENT_READY_THREAD:
        ev->kind = ETL_SCHED_READY;
        ev->u.ready = e.u.ready;
        return 1;
    case ETL_EVENT_THREAD:
        s->payload = rec->payload;
        ev->kind = ETL_SCHED_THREAD;
        ev->u.thread = e.u.thread;
        return 1;
    case ETL_EVENT_THREAD_SET_NAME:
        s->payload = rec->payload;
        ev->kind = ETL_SCHED_SET_NAME;
        ev->u.set_name = e.u.set_name;
        return 1;
    case ETL_EVENT_PROCESS:
        s->payload = rec->payload;
        ev->kind = ETL_SCHED_PROCESS;
        ev->u.process = e.u.process;
        return 1;
    case ETL_EVENT_SPINLOCK:
        ev->kind = ETL_SCHED_SPINLOCK;
        ev->u.spinlock = e.u.spinlock;
        return 1;
    default:
        return 0;
    }
}

/*
 * The main cursor's filter: records the model does not use, or the caller skips,
 * are dropped before the merge (batches too when they are read ahead). Every
 * scheduler record still moves the end of the trace.
 */
static bool keep_main(void *ctx, const etl_record *rec)
{
    part *s = ctx;
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) return false;
    unsigned kind = etl_sched_kind_of(hook);
    if (!kind) return false;
    if (rec->ts > s->st.last_ts) s->st.last_ts = rec->ts;
    if (s->skip & (1u << kind)) return false;
    return !(hook == ETL_HOOK_CSWITCH_BATCH && s->lookahead);
}

/* A read-ahead cursor's filter: its CPU's batches alone. */
static bool keep_batch(void *ctx, const etl_record *rec)
{
    (void)ctx;
    uint16_t hook;
    return etl_record_kernel_hook(rec, &hook) && hook == ETL_HOOK_CSWITCH_BATCH;
}

static void count_chain(part *s, const etl_cswitch *sw)
{
    if (!(sw->known & ETL_CSW_NEW_TID)) s->st.broken_chains++;
}

/* The main stream's next event into h (late batch switches first). */
static void main_fill(part *s, head *h)
{
    h->has = false;
    etl_cswitch sw;
    for (;;) {
        if (s->late_active) {
            if (etl_batch_expand_next(&s->late, &sw) == ETL_OK) {
                count_chain(s, &sw);
                switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
                h->key = s->late_key;
                h->has = true;
                return;
            }
            s->late_active = false;
        }
        if (s->main_done) {
            if (!s->late_cpus || s->late_finishing) return;
            if (etl_batch_expand_finish(&s->late, &sw) == ETL_OK) { /* a CPU's last switch: no successor to lose */
                switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
                h->key = UINT64_MAX; /* after everything, by CPU */
                h->has = true;
                return;
            }
            s->late_finishing = true;
            return;
        }
        const etl_record *rec;
        if (etl_iter_next_ref(s->main, &rec) != ETL_OK) {
            s->main_done = true;
            continue;
        }
        int k = decode(s, rec, &h->ev);
        if (k == 1) {
            h->key = etl_iter_merge_ts(s->main);
            h->has = true;
            return;
        }
        if (k == 2 && !s->lookahead && s->late_cpus) {
            s->late_key = etl_iter_merge_ts(s->main);
            s->st.late_batches++;
            etl_batch_expand_begin(&s->late, rec->cpu, rec->payload, s->bias, (uint8_t)rec->version);
            s->late_active = true;
        }
    }
}

/* CPU b's next compact switch into h. */
static void batch_fill(part *s, bsrc *b, head *h)
{
    h->has = false;
    etl_cswitch sw;
    while (!b->done) {
        if (b->finishing) {
            if (etl_batch_expand_finish(&b->x, &sw) == ETL_OK) { /* a CPU's last switch: no successor to lose */
                sw.cpu = (uint16_t)b->cpu;
                switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
                h->key = b->key = sw.ts > b->key ? sw.ts : b->key;
                h->has = true;
                return;
            }
            b->done = true;
            return;
        }
        if (b->in_batch && etl_batch_expand_next(&b->x, &sw) == ETL_OK) {
            count_chain(s, &sw);
            sw.cpu = (uint16_t)b->cpu;
            switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
            h->key = b->key = sw.ts > b->key ? sw.ts : b->key;
            h->has = true;
            return;
        }
        b->in_batch = false;
        const etl_record *rec;
        if (etl_iter_next_ref(b->it, &rec) != ETL_OK) {
            b->finishing = true;
            continue;
        }
        uint16_t hook;
        if (!etl_record_kernel_hook(rec, &hook) || hook != ETL_HOOK_CSWITCH_BATCH) continue;
        etl_batch_expand_begin(&b->x, 0, rec->payload, s->bias, (uint8_t)rec->version);
        b->in_batch = true;
    }
}

static void fill(part *s, unsigned i)
{
    if (i == 0) main_fill(s, &s->heads[0]);
    else batch_fill(s, &s->b[i - 1], &s->heads[i]);
}

/*
 * Head i's leaf: (merge time, CPU, main before batches); ties on one CPU put a
 * ReadyThread before the switch it causes. Merge times rise along every stream,
 * so the order is a sort and does not depend on how CPUs are shared between threads.
 */
static void set_leaf(part *s, unsigned i)
{
    const head *h = &s->heads[i];
    s->lt.leaf[i] = h->has ? (etl_ltree_key){h->key, (uint64_t)h->ev.cpu << 32 | i}
                           : (etl_ltree_key){UINT64_MAX, ETL_LTREE_DONE};
}

static void part_close(part *s)
{
    if (!s) return;
    for (unsigned c = 0; s->b && c < s->nb; c++) {
        etl_iter_close(s->b[c].it);
        free(s->b[c].xcpus);
    }
    etl_iter_close(s->main);
    free(s->late_cpus);
    free(s->b);
    free(s->heads);
    etl_ltree_free(&s->lt);
    free(s->form);
    free(s);
}

/* The CPUs c < nwant with want[c] (want NULL: every CPU). */
static etl_status part_open(etl_reader *r, unsigned bias, uint32_t skip, bool lookahead, const uint8_t *want,
                            unsigned nwant, part **out)
{
    *out = NULL;
    part *s = calloc(1, sizeof *s);
    if (!s) return ETL_E_NOMEM;
    s->r = r;
    s->pending = -1;
    s->skip = skip;
    s->bias = bias;
    unsigned ncpu = etl_reader_cpu_count(r);
    s->nform = ncpu ? ncpu : 1;
    s->form = calloc(s->nform, 1);
    s->lookahead = lookahead;
    s->nb = s->lookahead ? ncpu : 0;
    s->b = calloc(s->nb ? s->nb : 1, sizeof *s->b);
    s->heads = calloc(s->nb + 1, sizeof *s->heads);
    etl_status st = !s->form || !s->b || !s->heads || !etl_ltree_init(&s->lt, s->nb + 1) ? ETL_E_NOMEM
                    : etl_iter_open_cpus(r, want, nwant, keep_main, s, &s->main);
    if (st == ETL_OK) {
        /* What keep_main would refuse is passed over from its header; the scheduler's records still move the end. */
        uint8_t keep[8192] = {0}, mark[8192] = {0};
        for (unsigned h = 0; h < 65536; h++) {
            unsigned kind = etl_sched_kind_of((uint16_t)h);
            if (!kind) continue;
            mark[h >> 3] |= (uint8_t)(1u << (h & 7));
            if (!(skip & (1u << kind)) && !(h == ETL_HOOK_CSWITCH_BATCH && lookahead)) keep[h >> 3] |= (uint8_t)(1u << (h & 7));
        }
        etl_iter_keep_hooks(s->main, keep, mark);
    }
    if (st == ETL_OK && !s->lookahead && ncpu) {
        s->late_cpus = calloc(ncpu, sizeof *s->late_cpus);
        st = s->late_cpus ? etl_batch_expand_init(&s->late, s->late_cpus, ncpu) : ETL_E_NOMEM;
    }
    /* Only CPUs that have buffers get a cursor: a hostile file may name CPU 2047 and no other. */
    uint8_t *has = s->nb ? calloc(s->nb, 1) : NULL;
    for (size_t i = 0; has && i < etl_reader_buffer_count(r); i++) {
        unsigned c = etl_reader_buffer_cpu(r, i);
        if (c < s->nb && (!want || (c < nwant && want[c]))) has[c] = 1;
    }
    if (s->nb && !has) st = ETL_E_NOMEM;
    for (unsigned c = 0; st == ETL_OK && c < s->nb; c++) {
        bsrc *b = &s->b[c];
        b->cpu = c;
        if (!has[c]) {
            b->done = true;
            continue;
        }
        /* One expander slot: the CPU's batches go in as CPU 0 and its switches come back with their CPU. */
        b->xcpus = calloc(1, sizeof *b->xcpus);
        st = b->xcpus ? etl_iter_open_cpu(r, c, keep_batch, NULL, &b->it) : ETL_E_NOMEM;
        if (st == ETL_OK) {
            uint8_t keep[8192] = {0}, none[8192] = {0};
            keep[ETL_HOOK_CSWITCH_BATCH >> 3] = 1u << (ETL_HOOK_CSWITCH_BATCH & 7);
            etl_iter_keep_hooks(b->it, keep, none);
        }
        if (st == ETL_OK) st = etl_batch_expand_init(&b->x, b->xcpus, 1);
    }
    free(has);
    if (st != ETL_OK) {
        part_close(s);
        return st;
    }
    for (unsigned i = 0; i <= s->nb; i++) {
        fill(s, i);
        set_leaf(s, i);
    }
    if (!etl_ltree_build(&s->lt)) {
        part_close(s);
        return ETL_E_NOMEM;
    }
    *out = s;
    return ETL_OK;
}

static etl_status part_next(part *s, etl_sched_event *ev)
{
    for (;;) {
        if (s->pending >= 0) {
            unsigned p = (unsigned)s->pending;
            fill(s, p);
            set_leaf(s, p);
            etl_ltree_replay(&s->lt, p);
            s->pending = -1;
        }
        int top = etl_ltree_top(&s->lt);
        if (top < 0) {
            /* The scheduler's records passed over before the merge move the end too. */
            uint64_t m = etl_iter_marked_ts(s->main);
            if (m > s->st.last_ts) s->st.last_ts = m;
            return ETL_END;
        }
        s->pending = top;
        const etl_sched_event *e = &s->heads[top].ev;
        if (e->kind == ETL_SCHED_SWITCH) {
            unsigned c = e->cpu;
            if (c >= s->nform) {
                uint8_t *f = realloc(s->form, c + 1u);
                if (!f) continue;
                memset(f + s->nform, 0, c + 1u - s->nform);
                s->form = f;
                s->nform = c + 1u;
            }
            uint8_t want = e->u.sw.source == ETL_CSW_SRC_COMPACT ? FORM_COMPACT : FORM_FULL;
            if (s->form[c] == FORM_UNKNOWN) s->form[c] = want;
            if (s->form[c] != want) {
                s->st.duplicates_dropped++;
                continue;
            }
            s->st.switches++;
            if (want == FORM_COMPACT) s->st.compact_switches++;
            else s->st.full_switches++;
        }
        s->key = s->heads[top].key;
        etl_copy_small(ev, e, packed_size(e)); /* the event's own member, not the union's largest */
        return ETL_OK;
    }
}

/*
 * With n threads, the CPUs are dealt to n shares, each read by its own iterators and
 * expanders: share 0 by the caller's thread, the others by worker threads into
 * blocks of events; the caller merges the shares' streams on (time, CPU). Every
 * share's stream is in the order one thread would give its events, and no two
 * shares hold a CPU, so the merge is that order exactly. The caller's share is the
 * smaller one: the caller also runs the merge and the consumer's model.
 * The strings of an event are copied into its block: the record they point into
 * may be a decompression scratch the worker reuses before the caller reads them.
 */
#define BLOCK_BYTES (384u << 10)
#define BLOCK_ARENA (256u << 10)
#define RING 4          /* blocks a worker may fill ahead of the caller */

/*
 * A block holds its events packed, each after its merge time and cut after its
 * kind's member of the union (a ReadyThread takes 56 bytes, not 208): what crosses
 * between cores is what costs, not the copying.
 */
#define ENTRY_MAX (sizeof(uint64_t) + sizeof(etl_sched_event))
typedef struct block {
    unsigned n;         /* events */
    size_t used;        /* bytes of ev */
    bool last;          /* the share ends after these */
    size_t arena_used;
    uint64_t progress;  /* the share's bytes consumed when the block was filled */
    _Alignas(etl_sched_event) uint8_t ev[BLOCK_BYTES];
    uint8_t arena[BLOCK_ARENA];
} block;

typedef struct worker {
    part *p;
    bool local;             /* share 0: read on the caller's thread, into head */
    etl_sched_event head;
    pthread_t th;
    bool started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    block *ring[RING];
    uint64_t filled, taken; /* under mu: blocks published, blocks given back */
    bool stop;              /* under mu: the caller closes early */
    bool waiting;           /* under mu: a side sleeps on cv (a wake-up costs a system call) */
    /* the caller's side */
    const etl_sched_event *at; /* the share's next event, NULL when it has ended */
    uint64_t key;              /* its merge time */
    block *cur;
    unsigned pos;
    size_t off;             /* of at in cur */
    bool ended;
    uint64_t progress;
} worker;

struct etl_sched_source {
    etl_reader *r;
    part *solo;          /* one thread: the part that reads every CPU */
    worker *w;
    unsigned nw;
    int pending;         /* worker whose event was returned last */
    bool primed;         /* every worker's first block taken */
    bool ended;
    etl_sched_source_stats st;
};

/* Bytes of e up to the end of its kind's member, rounded to the alignment. */
static size_t packed_size(const etl_sched_event *e)
{
    size_t u;
    switch (e->kind) {
    case ETL_SCHED_SWITCH: u = sizeof e->u.sw; break;
    case ETL_SCHED_READY: u = sizeof e->u.ready; break;
    case ETL_SCHED_THREAD: u = sizeof e->u.thread; break;
    case ETL_SCHED_SET_NAME: u = sizeof e->u.set_name; break;
    case ETL_SCHED_PROCESS: u = sizeof e->u.process; break;
    case ETL_SCHED_SPINLOCK: u = sizeof e->u.spinlock; break;
    default: u = sizeof e->u; break;
    }
    size_t a = _Alignof(etl_sched_event);
    return (offsetof(etl_sched_event, u) + u + a - 1) / a * a;
}

static void rebase(etl_span *sp, etl_span from, const uint8_t *to)
{
    uintptr_t p = (uintptr_t)sp->p, a = (uintptr_t)from.p;
    if (sp->p && p >= a && p <= a + from.n) sp->p = to + (p - a);
}

/* Copies the record ev's strings point into to the block's arena and points them there. */
static void keep_strings(block *b, etl_sched_event *ev, etl_span payload)
{
    uint8_t *to = b->arena + b->arena_used;
    memcpy(to, payload.p, payload.n);
    b->arena_used += (payload.n + 7) & ~(size_t)7;
    switch (ev->kind) {
    case ETL_SCHED_THREAD: rebase(&ev->u.thread.thread_name.text, payload, to); break;
    case ETL_SCHED_SET_NAME: rebase(&ev->u.set_name.thread_name.text, payload, to); break;
    case ETL_SCHED_PROCESS:
        rebase(&ev->u.process.user_sid, payload, to);
        rebase(&ev->u.process.image_file_name.text, payload, to);
        rebase(&ev->u.process.command_line.text, payload, to);
        rebase(&ev->u.process.package_full_name.text, payload, to);
        rebase(&ev->u.process.application_id.text, payload, to);
        break;
    default: break;
    }
}

/* Under w->mu: the other side may sleep on the condition. */
static void wake(worker *w)
{
    if (!w->waiting) return;
    w->waiting = false;
    pthread_cond_broadcast(&w->cv);
}

static void *worker_main(void *arg)
{
    worker *w = arg;
    for (bool last = false; !last;) {
        pthread_mutex_lock(&w->mu);
        while (w->filled - w->taken == RING && !w->stop) {
            w->waiting = true;
            pthread_cond_wait(&w->cv, &w->mu);
        }
        bool stop = w->stop;
        block *b = w->ring[w->filled % RING];
        pthread_mutex_unlock(&w->mu);
        if (stop) break;
        b->n = 0;
        b->used = 0;
        b->arena_used = 0;
        /* A record's payload is under 64 KiB: stop the block while one more surely fits. */
        while (BLOCK_BYTES - b->used >= ENTRY_MAX && BLOCK_ARENA - b->arena_used > 65536 + 8) {
            uint64_t *key = (uint64_t *)(void *)(b->ev + b->used);
            etl_sched_event *ev = (etl_sched_event *)(void *)(key + 1);
            if (part_next(w->p, ev) != ETL_OK) {
                last = true;
                break;
            }
            if (ev->kind == ETL_SCHED_THREAD || ev->kind == ETL_SCHED_SET_NAME || ev->kind == ETL_SCHED_PROCESS)
                keep_strings(b, ev, w->p->payload);
            *key = w->p->key;
            b->used += sizeof *key + packed_size(ev);
            b->n++;
        }
        b->last = last;
        b->progress = etl_iter_progress(w->p->main);
        pthread_mutex_lock(&w->mu);
        w->filled++;
        wake(w);
        pthread_mutex_unlock(&w->mu);
    }
    return NULL;
}

/* w's event and merge time at offset off of its block. */
static void entry_at(worker *w)
{
    const uint8_t *e = w->cur->ev + w->off;
    memcpy(&w->key, e, sizeof w->key);
    w->at = (const etl_sched_event *)(const void *)(e + sizeof w->key);
}

/* The caller gives back w's current block and takes the next one, waiting for it. */
static void take_block(worker *w)
{
    w->at = NULL;
    pthread_mutex_lock(&w->mu);
    if (w->cur) {
        w->taken++;
        wake(w);
        w->cur = NULL;
    }
    if (!w->ended) {
        while (w->filled == w->taken) {
            w->waiting = true;
            pthread_cond_wait(&w->cv, &w->mu);
        }
        block *b = w->ring[w->taken % RING];
        w->progress = b->progress;
        if (b->n) {
            w->cur = b;
            w->pos = 0;
            w->off = 0;
            entry_at(w);
        } else { /* an empty block is the last one */
            w->ended = true;
            w->taken++;
            wake(w);
        }
    }
    pthread_mutex_unlock(&w->mu);
}

/* The caller is done with w's event at: the share's next one. */
static void advance(worker *w)
{
    if (w->local) {
        w->at = part_next(w->p, &w->head) == ETL_OK ? &w->head : NULL;
        w->key = w->p->key;
        return;
    }
    if (++w->pos < w->cur->n) {
        w->off += sizeof w->key + packed_size(w->at);
        entry_at(w);
        /* The block was written on another core: ask for its lines ahead of the merge. */
        const uint8_t *ahead = w->cur->ev + w->off + 512;
        __builtin_prefetch(ahead);
        __builtin_prefetch(ahead + 64);
        return;
    }
    if (w->cur->last) w->ended = true;
    take_block(w);
}

static void source_free(etl_sched_source *s)
{
    for (unsigned i = 0; i < s->nw; i++) {
        worker *w = &s->w[i];
        if (w->started) {
            pthread_mutex_lock(&w->mu);
            w->stop = true;
            w->waiting = true;
            wake(w);
            pthread_mutex_unlock(&w->mu);
            pthread_join(w->th, NULL);
        }
        pthread_mutex_destroy(&w->mu);
        pthread_cond_destroy(&w->cv);
        for (unsigned k = 0; k < RING; k++) free(w->ring[k]);
        part_close(w->p);
    }
    free(s->w);
    part_close(s->solo);
    free(s);
}

etl_status etl_sched_source_open(etl_reader *r, const etl_sched_source_options *opts,
                                 etl_sched_source **out)
{
    *out = NULL;
    bool full = opts && opts->sz >= sizeof *opts;
    int bias = full ? opts->bias : -1;
    uint32_t skip = full ? opts->skip : 0;
    unsigned threads = full ? opts->threads : 1;
    unsigned ubias = bias >= 0 ? (unsigned)bias : etl_max_wait_reason_for_build(etl_reader_header(r)->provider_version);
    unsigned ncpu = etl_reader_cpu_count(r);
    bool lookahead = ncpu > 0 && !(skip & 1u << ETL_SCHED_SWITCH) && etl_sched_logs_compact(r);
    etl_sched_source *s = calloc(1, sizeof *s);
    if (!s) return ETL_E_NOMEM;
    s->r = r;
    s->pending = -1;
    uint8_t *share = threads > 1 && ncpu > 1 ? malloc(ncpu) : NULL;
    /* The caller's share counts eight times its load: its thread also merges and runs the model. */
    unsigned n = share ? etl_sched_deal_cpus(r, threads < ETL_SCHED_MAX_WORKERS ? threads : ETL_SCHED_MAX_WORKERS, 8, share) : 1;
    etl_status st = ETL_OK;
    if (n <= 1) {
        st = part_open(r, ubias, skip, lookahead, NULL, 0, &s->solo);
    } else {
        s->w = calloc(n, sizeof *s->w);
        uint8_t *want = malloc(ncpu);
        if (!s->w || !want) st = ETL_E_NOMEM;
        for (unsigned i = 0; st == ETL_OK && i < n; i++) {
            worker *w = &s->w[i];
            s->nw = i + 1;
            pthread_mutex_init(&w->mu, NULL);
            pthread_cond_init(&w->cv, NULL);
            for (unsigned c = 0; c < ncpu; c++) want[c] = share[c] == i + 1;
            st = part_open(r, ubias, skip, lookahead, want, ncpu, &w->p);
            w->local = i == 0;
            for (unsigned k = 0; st == ETL_OK && !w->local && k < RING; k++)
                if (!(w->ring[k] = malloc(sizeof *w->ring[k]))) st = ETL_E_NOMEM;
        }
        for (unsigned i = 1; st == ETL_OK && i < n; i++) {
            worker *w = &s->w[i];
            w->started = pthread_create(&w->th, NULL, worker_main, w) == 0;
            if (!w->started) st = ETL_E_NOMEM;
        }
        free(want);
        /* No thread to be had: read on the caller's thread. */
        if (st != ETL_OK && s->nw) {
            source_free(s);
            free(share);
            etl_sched_source_options one = {.sz = sizeof one, .bias = bias, .skip = skip, .threads = 1};
            return etl_sched_source_open(r, &one, out);
        }
    }
    free(share);
    if (st != ETL_OK) {
        source_free(s);
        return st;
    }
    *out = s;
    return ETL_OK;
}

/* Once every share has ended: their counters summed. */
static void sum_stats(etl_sched_source *s)
{
    etl_sched_source_stats *t = &s->st;
    for (unsigned i = 0; i < s->nw; i++) {
        const etl_sched_source_stats *p = &s->w[i].p->st;
        t->switches += p->switches;
        t->full_switches += p->full_switches;
        t->compact_switches += p->compact_switches;
        t->duplicates_dropped += p->duplicates_dropped;
        t->undecodable += p->undecodable;
        t->late_batches += p->late_batches;
        t->broken_chains += p->broken_chains;
        if (p->last_ts > t->last_ts) t->last_ts = p->last_ts;
    }
}

etl_status etl_sched_source_next(etl_sched_source *s, etl_sched_event *ev)
{
    if (s->solo) return part_next(s->solo, ev);
    if (s->pending >= 0) {
        advance(&s->w[s->pending]);
        s->pending = -1;
    } else if (!s->primed) {
        for (unsigned i = 0; i < s->nw; i++) {
            if (s->w[i].local) advance(&s->w[i]);
            else take_block(&s->w[i]);
        }
        s->primed = true;
    }
    int best = -1;
    const etl_sched_event *b = NULL;
    uint64_t bk = 0;
    for (unsigned i = 0; i < s->nw; i++) {
        const etl_sched_event *e = s->w[i].at;
        uint64_t k = s->w[i].key;
        if (e && (!b || k < bk || (k == bk && e->cpu < b->cpu))) {
            best = (int)i;
            b = e;
            bk = k;
        }
    }
    if (best < 0) {
        if (!s->ended) sum_stats(s);
        s->ended = true;
        return ETL_END;
    }
    s->pending = best;
    memcpy(ev, b, s->w[best].local ? sizeof *ev : packed_size(b));
    return ETL_OK;
}

const etl_sched_source_stats *etl_sched_source_stats_get(const etl_sched_source *s)
{
    return s->solo ? &s->solo->st : &s->st;
}

void etl_sched_source_damage(const etl_sched_source *s, etl_stats *out)
{
    /* The batch cursors read the same buffers as the main ones: their counters say it all. */
    if (s->solo) {
        *out = *etl_iter_stats(s->solo->main);
        return;
    }
    /* Each main iterator starts from the reader's counters and adds its own share's. */
    const etl_stats *base = etl_reader_stats(s->r);
    *out = *base;
    out->records = 0;
    for (unsigned i = 0; i < s->nw; i++) etl_stats_add(out, etl_iter_stats(s->w[i].p->main), base);
}

uint64_t etl_sched_source_progress(const etl_sched_source *s)
{
    if (s->solo) return etl_iter_progress(s->solo->main);
    uint64_t n = 0;
    for (unsigned i = 0; i < s->nw; i++) n += s->w[i].local ? etl_iter_progress(s->w[i].p->main) : s->w[i].progress;
    return n;
}

void etl_sched_source_close(etl_sched_source *s)
{
    if (s) source_free(s);
}

/* ---- shared with percpu.c ---------------------------------------------------- */

bool etl_sched_logs_compact(etl_reader *r)
{
    etl_iter *it;
    if (etl_iter_open(r, ETL_ORDER_FILE, &it) != ETL_OK) return true;
    etl_record rec;
    bool compact = true;
    for (unsigned n = 0; n < 4096 && etl_iter_next(it, &rec) == ETL_OK; n++) {
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook)) continue;
        if (hook == ETL_HOOK_CSWITCH_BATCH) break;
        if (hook == ETL_HOOK_HEADER_EXTENSION || hook == ETL_HOOK_GROUP_MASKS_END) {
            etl_groupmask m;
            if (etl_groupmask_decode(rec.payload, &m) == ETL_OK) {
                compact = etl_groupmask_test(&m, ETL_PERF_COMPACT_CSWITCH);
                break;
            }
        }
    }
    etl_iter_close(it);
    return compact;
}

typedef struct cpu_load {
    uint64_t bufs;
    unsigned cpu;
} cpu_load;

static int by_load_desc(const void *a, const void *b)
{
    const cpu_load *x = a, *y = b;
    if (x->bufs != y->bufs) return x->bufs > y->bufs ? -1 : 1;
    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

unsigned etl_sched_deal_cpus(etl_reader *r, unsigned n, unsigned weight0, uint8_t *share)
{
    unsigned ncpu = etl_reader_cpu_count(r), with = 0;
    cpu_load *l = calloc(ncpu ? ncpu : 1, sizeof *l);
    uint64_t load[ETL_SCHED_MAX_WORKERS] = {0};
    if (!l) return 0;
    for (unsigned c = 0; c < ncpu; c++) l[c].cpu = c;
    for (size_t i = 0; i < etl_reader_buffer_count(r); i++) {
        unsigned c = etl_reader_buffer_cpu(r, i);
        if (c < ncpu) l[c].bufs++;
    }
    qsort(l, ncpu, sizeof *l, by_load_desc);
    while (with < ncpu && l[with].bufs) with++;
    if (n > with) n = with;
    memset(share, 0, ncpu);
    for (unsigned k = 0; n > 1 && k < with; k++) {
        unsigned light = 0;
        for (unsigned j = 1; j < n; j++)
            if (load[j] < (light ? load[light] : weight0 * load[0])) light = j;
        share[l[k].cpu] = (uint8_t)(light + 1);
        load[light] += l[k].bufs;
    }
    free(l);
    return n;
}

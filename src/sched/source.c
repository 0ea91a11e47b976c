/*
 * source.c - a trace's scheduler events in time order.
 *
 * Each CPU's buffers are walked on their own (etl_iter_next_buffer_of), its records
 * framed inline and the ones the model wants decoded straight into the stream's
 * head; one tournament tree merges the CPUs' streams on (time, CPU). Compact batches
 * are the exception: the kernel logs a batch when it flushes it, after the other
 * events of its period (up to 500 timer ticks later), so merged at the batch's own
 * time its switches would come after the ReadyThread events they answer. When the
 * trace logs compact switches (group mask PERF_COMPACT_CSWITCH, or no mask at all),
 * each CPU gets a second stream that walks only its batches, ahead of the main one,
 * and expands them; the tree takes it after the CPU's main stream on equal times.
 * Events are handed out where they lie (etl_sched_source_next_ref). Memory: two
 * walks and an expander per CPU, nothing per event.
 *
 * A CPU whose trace carries both forms (CSwitch events and batches) keeps the
 * form it shows first and drops the other (counted), as convert does.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/sched.h"
#include "etlkit/event.h"
#include "base/fastmem.h"
#include "base/ltree.h"
#include "sched/cpushare.h"
#include "base/opts.h"
#include "base/platform.h"

enum { FORM_UNKNOWN = 0, FORM_FULL = 1, FORM_COMPACT = 2 };

/*
 * Ties on the merge time go by CPU, then a CPU's main stream before its read-ahead
 * switches; a CPU's last switch expanded late (no read-ahead) comes after every
 * record of every CPU, as the expander drains its CPUs at the end of the trace.
 */
#define TIE_BATCH 1u
#define TIE_LAST (1ull << 62)
static inline uint64_t tie_of(unsigned cpu, unsigned batch) { return (uint64_t)cpu << 1 | batch; }

/*
 * One stream of a part: a CPU's records (the main stream), or its compact batches
 * read ahead and expanded. Each walks its CPU's buffers itself and decodes the
 * record it stops at straight into its head: nothing is copied before the merge.
 */
typedef struct stream {
    etl_sched_event ev;   /* the head, with has */
    uint64_t key;         /* the head's merge time */
    uint64_t tie;
    bool has;
    bool batch;           /* the read-ahead stream */
    bool in_buf, eof;
    bool expanding;       /* x has a batch begun (read ahead, or late in the main stream) */
    bool drained;         /* eof: the expander's last switch was given */
    uint16_t cpu;
    unsigned k;           /* its cursor in the part's iterator */
    uint64_t time;        /* main: the CPU's largest record time so far; read-ahead: largest switch time */
    uint64_t late_key;    /* main: the merge time of the batch being expanded late */
    const uint8_t *batch_rec; /* the batch record being expanded (in wk's buffer) */
    uint64_t bad_time;    /* x.stats.bad_time already told */
    etl_batch_expand_stats before; /* x.stats when the batch being expanded began */
    uint64_t backwards;   /* x.stats.time_backwards already told */
    etl_span payload;     /* the record the head's strings point into */
    etl_batch_expander x;
    etl_batch_expand_cpu xcpu;
    etl_walk wk;
    etl_record rec;       /* a kernel record framed whole (for its strings) */
} stream;

typedef struct part part;

/* The events of a set of CPUs (all of them with one thread), in time order. */
struct part {
    etl_iter *main;       /* a walk per CPU */
    etl_iter *ahead;      /* a walk per CPU for the read-ahead streams, NULL without */
    stream *s;            /* per CPU with buffers: its main stream, then its read-ahead one */
    unsigned ns;
    etl_ltree lt;         /* the heads on (merge time, tie) */
    int pending;          /* stream whose head was returned last */
    bool lookahead;
    uint8_t *form;        /* per CPU */
    unsigned nform;
    unsigned bias;
    uint32_t skip;        /* kinds the caller does not want */
    etl_span payload;     /* the record the last event's strings point into */
    uint64_t key, tie;    /* of the event returned last */
    etl_sched_source_stats st;
    etl_reader *r;
    etl_stats dmg;        /* damage the expanders found in batches (etl_batch_expand_tell) */
    uint8_t keep[8192];   /* hooks the main streams decode */
    uint8_t mark[8192];   /* hooks passed over that still move the end of the trace */
};

static size_t packed_size(const etl_sched_event *e);

static inline bool hook_in(const uint8_t *set, uint16_t hook) { return (set[hook >> 3] >> (hook & 7)) & 1u; }

static void count_chain(part *p, const etl_cswitch *sw)
{
    if (!(sw->known & ETL_CSW_NEW_TID)) p->st.broken_chains++;
}

/*
 * The head is the switch in ev.u.sw (from a batch), at merge time key. Its time counts
 * toward the trace's end like a record's: a batch cut short by the end of the file has
 * switches after the last record, and every row must lie in the window.
 */
static void head_batch_switch(part *p, stream *s, uint64_t key, uint64_t tie)
{
    if (s->ev.u.sw.ts > p->st.last_ts) p->st.last_ts = s->ev.u.sw.ts;
    s->ev.kind = ETL_SCHED_SWITCH;
    s->ev.u.sw.cpu = s->cpu;
    s->ev.cpu = s->cpu;
    s->ev.hook = ETL_HOOK_CSWITCH_BATCH;
    s->ev.ts = s->ev.u.sw.ts;
    s->key = key;
    s->tie = tie;
    s->has = true;
}

/*
 * A record of a main stream framed whole (another header type, or a kernel record
 * whose strings an event keeps): into the head. Returns true for an event.
 */
static bool take_record(part *p, stream *s, const etl_record *rec)
{
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) return false;
    unsigned kind = etl_sched_kind_of(hook);
    if (!kind) return false;
    if (rec->ts > p->st.last_ts) p->st.last_ts = rec->ts;
    if (p->skip & (1u << kind)) return false;
    etl_sched_event *ev = &s->ev;
    if (hook == ETL_HOOK_CSWITCH_BATCH) {
        if (p->lookahead) return false;
        /* No read-ahead: the batch's switches are merged where it lies. */
        s->late_key = s->time;
        p->st.late_batches++;
        etl_batch_expand_window(&s->x, s->x.t_lo, etl_walk_time_limit(&s->wk)); /* none after the buffer's flush */
        s->before = s->x.stats;
        etl_batch_expand_begin_written(&s->x, 0, rec->payload, p->bias, (uint8_t)rec->version,
                                       etl_record_ts_or_none(rec));
        s->batch_rec = rec->data;
        s->expanding = true;
        return false;
    }
    etl_event e;
    etl_status st = hook == ETL_HOOK_CSWITCH ? etl_event_decode_cswitch(rec, &ev->u.sw)
                    : hook == ETL_HOOK_READY_THREAD ? etl_ready_thread_decode(rec->payload, &ev->u.ready)
                    : etl_event_decode(rec, &e);
    if (st != ETL_OK) {
        p->st.undecodable++;
        return false;
    }
    ev->cpu = s->cpu;
    ev->hook = hook;
    ev->ts = rec->ts;
    switch (hook == ETL_HOOK_CSWITCH ? ETL_EVENT_CSWITCH : hook == ETL_HOOK_READY_THREAD ? ETL_EVENT_READY_THREAD : e.kind) {
    case ETL_EVENT_CSWITCH: ev->kind = ETL_SCHED_SWITCH; break;
    case ETL_EVENT_READY_THREAD: ev->kind = ETL_SCHED_READY; break;
    case ETL_EVENT_THREAD:
        ev->kind = ETL_SCHED_THREAD;
        ev->u.thread = e.u.thread;
        break;
    case ETL_EVENT_THREAD_SET_NAME:
        ev->kind = ETL_SCHED_SET_NAME;
        ev->u.set_name = e.u.set_name;
        break;
    case ETL_EVENT_PROCESS:
        ev->kind = ETL_SCHED_PROCESS;
        ev->u.process = e.u.process;
        break;
    case ETL_EVENT_SPINLOCK:
        ev->kind = ETL_SCHED_SPINLOCK;
        ev->u.spinlock = e.u.spinlock;
        break;
    default: return false;
    }
    s->payload = rec->payload;
    return true;
}

/*
 * The batch being expanded has ended: if at a switch time outside the session window, or
 * with switches before their CPU's switch ahead of them (which the model passes over), that
 * is told as damage of the batch's record (the walk is still in its buffer). The per-CPU
 * runs do not tell the latter: a switch going back sends them to this time-ordered source.
 */
static void batch_done(part *p, stream *s)
{
    /* Fields the batch's records carry out of range (the switches stay, those fields unknown). */
    p->st.bad_state += s->x.stats.bad_state - s->before.bad_state;
    p->st.bad_priority += s->x.stats.bad_priority - s->before.bad_priority;
    etl_sched_batch_checked(&s->wk, s->batch_rec, &s->x, s->bad_time);
    etl_batch_expand_tell(&s->x, &s->before, p->r, s->wk.buffer_index, (size_t)(s->batch_rec - s->wk.p), &p->dmg);
    s->bad_time = s->x.stats.bad_time;
    if (s->x.stats.time_backwards != s->backwards) etl_walk_batch_back(&s->wk, s->batch_rec);
    s->backwards = s->x.stats.time_backwards;
}

/* A main stream's next event into its head (a late batch's switches first). */
static void main_fill(part *p, stream *s)
{
    s->has = false;
    etl_sched_event *ev = &s->ev;
    for (;;) {
        if (s->expanding) {
            if (etl_batch_expand_next(&s->x, &ev->u.sw) == ETL_OK) {
                count_chain(p, &ev->u.sw);
                head_batch_switch(p, s, s->late_key, tie_of(s->cpu, 0));
                return;
            }
            s->expanding = false;
            batch_done(p, s);
        }
        if (!s->in_buf) {
            if (s->eof || etl_iter_next_buffer_of(p->main, s->k, &s->wk) != ETL_OK) {
                s->eof = true;
                /* Late batches: the CPU's last switch, which has no successor to lose. */
                if (p->lookahead || s->drained) return;
                if (etl_batch_expand_finish(&s->x, &ev->u.sw) == ETL_OK) {
                    head_batch_switch(p, s, UINT64_MAX, TIE_LAST | tie_of(s->cpu, 0));
                    return;
                }
                s->drained = true;
                return;
            }
            s->in_buf = true;
        }
        etl_krec k;
        int r = etl_walk_next(&s->wk, &k);
        if (r == ETL_WALK_KERNEL) {
            if (k.ts > s->time) s->time = k.ts;
            if (!hook_in(p->keep, k.hook)) {
                /* Not wanted: passed over from its header; the scheduler's records still move the end. */
                if (hook_in(p->mark, k.hook) && k.ts > p->st.last_ts) p->st.last_ts = k.ts;
                continue;
            }
            /* The two events of nearly every record, straight from the walk's view. */
            if (k.hook == ETL_HOOK_CSWITCH || k.hook == ETL_HOOK_READY_THREAD) {
                if (k.ts > p->st.last_ts) p->st.last_ts = k.ts;
                etl_status st = k.hook == ETL_HOOK_CSWITCH ? etl_event_decode_cswitch_krec(&k, s->cpu, &ev->u.sw)
                                                          : etl_ready_thread_decode(k.payload, &ev->u.ready);
                if (st != ETL_OK) {
                    p->st.undecodable++;
                    continue;
                }
                ev->kind = k.hook == ETL_HOOK_CSWITCH ? ETL_SCHED_SWITCH : ETL_SCHED_READY;
                ev->cpu = s->cpu;
                ev->hook = k.hook;
                ev->ts = k.ts;
            } else {
                etl_krec_record(&s->wk, &k, &s->rec);
                if (!take_record(p, s, &s->rec)) continue;
            }
        } else if (r == ETL_WALK_OTHER) {
            if (s->wk.full.ts > s->time) s->time = s->wk.full.ts;
            if (!take_record(p, s, &s->wk.full)) continue;
        } else {
            s->in_buf = false;
            continue;
        }
        s->key = s->time;
        s->tie = tie_of(s->cpu, 0);
        s->has = true;
        return;
    }
}

/* A read-ahead stream's next compact switch into its head. */
static void ahead_fill(part *p, stream *s)
{
    s->has = false;
    etl_cswitch *sw = &s->ev.u.sw;
    for (;;) {
        if (s->expanding) {
            if (etl_batch_expand_next(&s->x, sw) == ETL_OK) {
                count_chain(p, sw);
                if (sw->ts > s->time) s->time = sw->ts;
                head_batch_switch(p, s, s->time, tie_of(s->cpu, TIE_BATCH));
                return;
            }
            s->expanding = false;
            batch_done(p, s);
        }
        if (!s->in_buf) {
            if (s->eof || etl_iter_next_buffer_of(p->ahead, s->k, &s->wk) != ETL_OK) {
                s->eof = true;
                if (s->drained) return;
                /* The CPU's last switch: nothing follows it, so no successor was lost. */
                if (etl_batch_expand_finish(&s->x, sw) == ETL_OK) {
                    if (sw->ts > s->time) s->time = sw->ts;
                    head_batch_switch(p, s, s->time, tie_of(s->cpu, TIE_BATCH));
                    return;
                }
                s->drained = true;
                return;
            }
            s->in_buf = true;
        }
        etl_krec k;
        uint16_t hook;
        int r = etl_walk_next(&s->wk, &k);
        if (r == ETL_WALK_KERNEL) {
            if (k.hook != ETL_HOOK_CSWITCH_BATCH) continue;
            etl_batch_expand_window(&s->x, s->x.t_lo, etl_walk_time_limit(&s->wk));
            s->before = s->x.stats;
            etl_batch_expand_begin_written(&s->x, 0, k.payload, p->bias, (uint8_t)(k.version_word & 0xFF), k.ts);
            s->batch_rec = k.data;
            s->expanding = true;
        } else if (r == ETL_WALK_OTHER) {
            if (!etl_record_kernel_hook(&s->wk.full, &hook) || hook != ETL_HOOK_CSWITCH_BATCH) continue;
            etl_batch_expand_window(&s->x, s->x.t_lo, etl_walk_time_limit(&s->wk));
            s->before = s->x.stats;
            etl_batch_expand_begin_written(&s->x, 0, s->wk.full.payload, p->bias, (uint8_t)s->wk.full.version,
                                           etl_record_ts_or_none(&s->wk.full));
            s->batch_rec = s->wk.full.data;
            s->expanding = true;
        } else {
            s->in_buf = false;
        }
    }
}

/* Stream i's next head, and its leaf: (merge time, tie), done when it has ended. */
static void refill(part *p, unsigned i)
{
    stream *s = &p->s[i];
    if (s->batch) ahead_fill(p, s);
    else main_fill(p, s);
    p->lt.leaf[i] = s->has ? (etl_ltree_key){s->key, s->tie} : (etl_ltree_key){UINT64_MAX, ETL_LTREE_DONE};
}

static void part_close(part *p)
{
    if (!p) return;
    etl_iter_close(p->main);
    etl_iter_close(p->ahead);
    free(p->s);
    etl_ltree_free(&p->lt);
    free(p->form);
    free(p);
}

/* The CPUs c < nwant with want[c] (want NULL: every CPU). */
static etl_status part_open(etl_reader *r, unsigned bias, uint32_t skip, bool lookahead, const uint8_t *want,
                            unsigned nwant, part **out)
{
    *out = NULL;
    part *p = calloc(1, sizeof *p);
    if (!p) return ETL_E_NOMEM;
    p->pending = -1;
    p->r = r;
    p->dmg.first_problem_offset = UINT64_MAX;
    p->skip = skip;
    p->bias = bias;
    p->lookahead = lookahead;
    unsigned ncpu = etl_reader_cpu_count(r);
    p->nform = ncpu ? ncpu : 1;
    p->form = calloc(p->nform, 1);
    etl_status st = p->form ? etl_iter_open_cpu_walks(r, want, nwant, true, &p->main) : ETL_E_NOMEM;
    if (st == ETL_OK && lookahead) st = etl_iter_open_cpu_walks(r, want, nwant, false, &p->ahead);
    unsigned nk = st == ETL_OK ? etl_iter_walk_count(p->main) : 0;
    if (st == ETL_OK) {
        p->s = calloc(nk ? 2u * nk : 1u, sizeof *p->s);
        if (!p->s) st = ETL_E_NOMEM;
    }
    uint64_t lo, hi;
    etl_reader_time_window(r, &lo, &hi);
    /* Only CPUs that have buffers get streams: a hostile file may name CPU 2047 and no other. */
    for (unsigned k = 0; st == ETL_OK && k < nk; k++) {
        size_t nbuf;
        unsigned cpu = etl_iter_walk_cpu(p->main, k, &nbuf);
        if (!nbuf) continue;
        for (unsigned b = 0; b <= (unsigned)lookahead; b++) {
            stream *s = &p->s[p->ns++];
            s->batch = b;
            s->cpu = (uint16_t)cpu;
            s->k = k;
            st = etl_batch_expand_init(&s->x, &s->xcpu, 1);
            etl_batch_expand_window(&s->x, lo, hi);
        }
    }
    /* What the streams decode; of what they pass over, what moves the end of the trace. */
    for (unsigned h = 0; h < 65536; h++) {
        unsigned kind = etl_sched_kind_of((uint16_t)h);
        if (!kind) continue;
        p->mark[h >> 3] |= (uint8_t)(1u << (h & 7));
        if (!(skip & (1u << kind)) && !(h == ETL_HOOK_CSWITCH_BATCH && lookahead)) p->keep[h >> 3] |= (uint8_t)(1u << (h & 7));
    }
    if (st == ETL_OK && !etl_ltree_init(&p->lt, p->ns)) st = ETL_E_NOMEM;
    if (st != ETL_OK) {
        part_close(p);
        return st;
    }
    for (unsigned i = 0; i < p->ns; i++) refill(p, i);
    if (!etl_ltree_build(&p->lt)) {
        part_close(p);
        return ETL_E_NOMEM;
    }
    *out = p;
    return ETL_OK;
}

/* The next event, in place (valid until the next call), or NULL at the end. */
static const etl_sched_event *part_next(part *p)
{
    for (;;) {
        if (p->pending >= 0) {
            refill(p, (unsigned)p->pending);
            etl_ltree_replay(&p->lt, (unsigned)p->pending);
            p->pending = -1;
        }
        int top = etl_ltree_top(&p->lt);
        if (top < 0) return NULL;
        p->pending = top;
        const stream *s = &p->s[top];
        const etl_sched_event *e = &s->ev;
        if (e->kind == ETL_SCHED_SWITCH) {
            unsigned c = e->cpu;
            if (c >= p->nform) {
                uint8_t *f = realloc(p->form, c + 1u);
                if (!f) continue;
                memset(f + p->nform, 0, c + 1u - p->nform);
                p->form = f;
                p->nform = c + 1u;
            }
            uint8_t want = e->u.sw.source == ETL_CSW_SRC_COMPACT ? FORM_COMPACT : FORM_FULL;
            if (p->form[c] == FORM_UNKNOWN) p->form[c] = want;
            if (p->form[c] != want) {
                p->st.duplicates_dropped++;
                continue;
            }
            p->st.switches++;
            if (want == FORM_COMPACT) p->st.compact_switches++;
            else p->st.full_switches++;
        }
        p->key = s->key;
        p->tie = s->tie;
        p->payload = s->payload;
        return e;
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
#define ENTRY_HEAD (2 * sizeof(uint64_t)) /* merge time and tie */
#define ENTRY_MAX (ENTRY_HEAD + sizeof(etl_sched_event))
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
    bool local;             /* share 0: read on the caller's thread, in place */
    etl_os_thread *th;         /* NULL: not started */
    etl_mutex *mu;
    etl_cond *cv;
    block *ring[RING];
    uint64_t filled, taken; /* under mu: blocks published, blocks given back */
    bool stop;              /* under mu: the caller closes early */
    bool waiting;           /* under mu: a side sleeps on cv (a wake-up costs a system call) */
    /* the caller's side */
    const etl_sched_event *at; /* the share's next event, NULL when it has ended */
    uint64_t key, tie;         /* its merge time and tie */
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
    etl_cond_broadcast(w->cv);
}

static void worker_main(void *arg)
{
    worker *w = arg;
    for (bool last = false; !last;) {
        etl_mutex_lock(w->mu);
        while (w->filled - w->taken == RING && !w->stop) {
            w->waiting = true;
            etl_cond_wait(w->cv, w->mu);
        }
        bool stop = w->stop;
        block *b = w->ring[w->filled % RING];
        etl_mutex_unlock(w->mu);
        if (stop) break;
        b->n = 0;
        b->used = 0;
        b->arena_used = 0;
        /* A record's payload is under 64 KiB: stop the block while one more surely fits. */
        while (BLOCK_BYTES - b->used >= ENTRY_MAX && BLOCK_ARENA - b->arena_used > 65536 + 8) {
            uint64_t *key = (uint64_t *)(void *)(b->ev + b->used);
            etl_sched_event *ev = (etl_sched_event *)(void *)(key + 2);
            const etl_sched_event *e = part_next(w->p);
            if (!e) {
                last = true;
                break;
            }
            size_t n = packed_size(e);
            etl_copy_small(ev, e, n);
            if (ev->kind == ETL_SCHED_THREAD || ev->kind == ETL_SCHED_SET_NAME || ev->kind == ETL_SCHED_PROCESS)
                keep_strings(b, ev, w->p->payload);
            key[0] = w->p->key;
            key[1] = w->p->tie;
            b->used += ENTRY_HEAD + n;
            b->n++;
        }
        b->last = last;
        b->progress = etl_iter_progress(w->p->main);
        etl_mutex_lock(w->mu);
        w->filled++;
        wake(w);
        etl_mutex_unlock(w->mu);
    }
}

/* w's event and merge time at offset off of its block. */
static void entry_at(worker *w)
{
    const uint8_t *e = w->cur->ev + w->off;
    memcpy(&w->key, e, sizeof w->key);
    memcpy(&w->tie, e + sizeof w->key, sizeof w->tie);
    w->at = (const etl_sched_event *)(const void *)(e + ENTRY_HEAD);
}

/* The caller gives back w's current block and takes the next one, waiting for it. */
static void take_block(worker *w)
{
    w->at = NULL;
    etl_mutex_lock(w->mu);
    if (w->cur) {
        w->taken++;
        wake(w);
        w->cur = NULL;
    }
    if (!w->ended) {
        while (w->filled == w->taken) {
            w->waiting = true;
            etl_cond_wait(w->cv, w->mu);
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
    etl_mutex_unlock(w->mu);
}

/* The caller is done with w's event at: the share's next one. */
static void advance(worker *w)
{
    if (w->local) {
        w->at = part_next(w->p);
        w->key = w->p->key;
        w->tie = w->p->tie;
        return;
    }
    if (++w->pos < w->cur->n) {
        w->off += ENTRY_HEAD + packed_size(w->at);
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
        if (w->th) {
            etl_mutex_lock(w->mu);
            w->stop = true;
            w->waiting = true;
            wake(w);
            etl_mutex_unlock(w->mu);
            etl_thread_join(w->th);
        }
        etl_mutex_free(w->mu);
        etl_cond_free(w->cv);
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
    etl_sched_source_options o = {.sz = sizeof o, .bias = -1, .threads = 1};
    etl_opts_take(&o, sizeof o, opts);
    int bias = o.bias;
    uint32_t skip = o.skip;
    unsigned threads = o.threads;
    /* 0 too: no kernel has MaximumWaitReason 0, and a zeroed struct must not read every compact state wrong. */
    unsigned ubias = bias > 0 ? (unsigned)bias : etl_max_wait_reason_for_build(etl_reader_header(r)->provider_version);
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
            for (unsigned c = 0; c < ncpu; c++) want[c] = share[c] == i + 1;
            st = part_open(r, ubias, skip, lookahead, want, ncpu, &w->p);
            w->local = i == 0;
            if (st == ETL_OK && (!(w->mu = etl_mutex_new()) || !(w->cv = etl_cond_new()))) st = ETL_E_NOMEM;
            for (unsigned k = 0; st == ETL_OK && !w->local && k < RING; k++)
                if (!(w->ring[k] = malloc(sizeof *w->ring[k]))) st = ETL_E_NOMEM;
        }
        for (unsigned i = 1; st == ETL_OK && i < n; i++) {
            worker *w = &s->w[i];
            if (!(w->th = etl_thread_start(worker_main, w))) st = ETL_E_NOMEM;
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
        t->bad_state += p->bad_state;
        t->bad_priority += p->bad_priority;
        if (p->last_ts > t->last_ts) t->last_ts = p->last_ts;
    }
}

etl_status etl_sched_source_next_ref(etl_sched_source *s, const etl_sched_event **ev)
{
    if (s->solo) {
        *ev = part_next(s->solo);
        return *ev ? ETL_OK : ETL_END;
    }
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
    uint64_t bk = 0, bt = 0;
    for (unsigned i = 0; i < s->nw; i++) {
        const worker *w = &s->w[i];
        if (w->at && (best < 0 || w->key < bk || (w->key == bk && w->tie < bt))) {
            best = (int)i;
            bk = w->key;
            bt = w->tie;
        }
    }
    if (best < 0) {
        if (!s->ended) sum_stats(s);
        s->ended = true;
        return ETL_END;
    }
    s->pending = best;
    *ev = s->w[best].at;
    return ETL_OK;
}

etl_status etl_sched_source_next(etl_sched_source *s, etl_sched_event *ev)
{
    const etl_sched_event *e;
    etl_status st = etl_sched_source_next_ref(s, &e);
    if (st == ETL_OK) etl_copy_small(ev, e, packed_size(e)); /* the event's own member, not the union's largest */
    return st;
}

const etl_sched_source_stats *etl_sched_source_stats_get(const etl_sched_source *s)
{
    return s->solo ? &s->solo->st : &s->st;
}

void etl_sched_source_damage(const etl_sched_source *s, etl_stats *out)
{
    /*
     * Each iterator starts from the reader's counters and adds its own share's. The batch
     * cursors read the same buffers as the main ones and count nothing of them: only the
     * damage in the batches they expand (etl_walk_bad_time).
     */
    const etl_stats *base = etl_reader_stats_get(s->r);
    *out = *base;
    out->records = 0;
    unsigned n = s->solo ? 1 : s->nw;
    for (unsigned i = 0; i < n; i++) {
        const part *p = s->solo ? s->solo : s->w[i].p;
        etl_stats_add(out, etl_iter_stats_get(p->main), base);
        etl_stats none = {.first_problem_offset = UINT64_MAX};
        etl_stats_add(out, &p->dmg, &none);
        if (p->ahead) {
            etl_stats a = *etl_iter_stats_get(p->ahead);
            a.records = 0; /* the main one's */
            etl_stats_add(out, &a, base);
        }
    }
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

void etl_sched_batch_checked(const etl_walk *w, const uint8_t *rec, const etl_batch_expander *x, uint64_t before)
{
    if (x->stats.bad_time != before)
        etl_walk_bad_time(w, rec, x->walk.time, "hook 0x0525, a switch", "the batch's switches from there on dropped");
}

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

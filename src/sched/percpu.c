/*
 * percpu.c - the scheduler model CPU by CPU (etl_sched_percpu_run).
 *
 * A row of CPU time or of PMC deltas is a switch-in and the next switch on the same
 * CPU: nothing in it needs another CPU but the thread instance its TID names. So
 * each CPU's buffers are walked on their own (etl_walk_next), on several threads,
 * with no merge of the CPUs' streams - the merge is most of the cost of time order.
 *
 * Instances are made by Thread events (on any CPU) and by the first sight of a TID,
 * in time order. A worker therefore gives each TID an index of its own, notes where
 * it first saw it, and copies each lifetime record (Thread, SetName, Process) into
 * its CPU's spool stream (a few percent of the trace's bytes; past a budget they go
 * to a temporary file). When every CPU is read, the model is built from those records
 * alone, merged in time order, with each TID's first sighting in its place: the
 * instances, their order and the model's counters are those of the time-ordered run,
 * and each worker index maps to the one instance of its TID. A TID that names two
 * instances over the trace (a TID reused after its thread ended) makes a second walk,
 * with the instances' boundaries known, that keys the workers' indices by (TID,
 * instance). A Start of a thread that has not ended is a new instance only if the
 * thread ran since it was made (else it is the same Start again): the first model
 * makes every such Start a boundary, the second walk notes which of the pieces
 * between boundaries were sighted, and the model is built again from the lifetime
 * records with those sightings in their places.
 *
 * Positions: the time-ordered source merges on (time, CPU), a CPU's other records
 * before its compact switches of the same time (they are read ahead on their own
 * stream), each stream in its order. With time rising along each CPU (checked, else
 * ETL_E_UNSUPPORTED), a position (time, CPU, stream, place in the stream) orders
 * sightings and lifetime records as the source would; which of a switch's two TIDs
 * (the old one first) breaks the last tie.
 *
 * Memory: per worker one small record per TID; the spool's budget; per CPU its open
 * row and two switches. Nothing per switch. A trace past the model's limits (more
 * TIDs than ETL_SCHED_MAX_INSTANCES, more than LIFE_LIMIT bytes of lifetime records)
 * is left to the time-ordered model (ETL_E_UNSUPPORTED), which keeps no copies and
 * counts what it leaves out.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/sched.h"
#include "etlkit/event.h"
#include "base/bytes.h"
#include "base/fastmem.h"
#include "base/idmap.h"
#include "base/ltree.h"
#include "base/diag.h"
#include "base/spool.h"
#include "sched/cpushare.h"
#include "sched/model_priv.h"
#include "container/reader_internal.h"
#include "sched/usage_slice.h"
#include "base/opts.h"
#include "base/platform.h"

/* A place in the time-ordered merge: ts, then CPU << 52 | stream << 51 | place << 1 | which. */
typedef struct pos {
    uint64_t ts, lo;
} pos;

enum { STREAM_MAIN = 0, STREAM_COMPACT = 1 };

/* The low word of a position: CPU, stream, place, which of a switch's two TIDs. */
static inline uint64_t pos_lo(unsigned cpu, unsigned stream, uint64_t place, unsigned which)
{
    return (uint64_t)cpu << 52 | (uint64_t)stream << 51 | (place & ((1ull << 50) - 1)) << 1 | which;
}

static inline pos mkpos(uint64_t ts, unsigned cpu, unsigned stream, uint64_t place, unsigned which)
{
    return (pos){ts, pos_lo(cpu, stream, place, which)};
}

static inline bool pos_less(pos a, pos b) { return a.ts < b.ts || (a.ts == b.ts && a.lo < b.lo); }

/* A main-stream record's place: its buffer's ordinal on the CPU and its offset (8-byte aligned). */
static inline uint64_t main_place(uint32_t ordinal, size_t off) { return (uint64_t)ordinal << 23 | off >> 3; }

/* A lifetime record's copy in its CPU's spool stream: where it was, then its bytes. */
typedef struct lnote {
    uint32_t buf, ordinal, off, size;
} lnote;

/* Lifetime records kept in memory before they spill to a temporary file, by default. */
#define LIFE_BUDGET (4u << 20)
/*
 * Lifetime records copied in all, at most (in memory and the file): far more than a trace
 * within the model's instance limit holds (a few records each). Past it, time order.
 */
#define LIFE_LIMIT ((uint64_t)512 << 20)

/* A worker's thread: a TID, or a (TID, instance) of a reused TID in the second walk. */
typedef struct slot {
    uint32_t tid;
    uint32_t seg;       /* which of the TID's instances (second walk), else 0 */
    pos first;          /* the earliest sighting on this worker's CPUs */
    uint16_t cpu_seen;  /* the CPU of the last sighting compared with first */
    uint8_t multi;      /* the TID names several instances: no chain shortcut */
} slot;

/* A reused TID's instances: inst[0] first, inst[k] from boundary at[k - 1] on. */
typedef struct reused {
    pos *at;            /* ascending */
    uint32_t *inst;
    size_t n;           /* instances */
    size_t cap;         /* of at and inst */
    size_t next;        /* the model's second build: the next boundary to meet */
} reused;

/*
 * One CPU's model state: the row its last switch opened, and two switch slots, the
 * last switch (the row's switch-in) and the one being read, which swap roles.
 */
typedef struct pcpu {
    etl_sched_row row;
    etl_cswitch sw[2];
    unsigned last;       /* sw[last] is the last switch */
    bool has_prev;
    unsigned worker;
    etl_gap_cursor gaps;
} pcpu;

typedef struct run run;

/* A worker's last lookups, by TID: most switches name a thread seen a moment ago. */
#define TCACHE 8192

typedef struct tcache {
    uint32_t tid, slot;
    uint32_t cpu;          /* the slot's cpu_seen, so that a hit needs no look at the slot */
} tcache;

typedef struct worker {
    run *rn;
    unsigned id;
    tcache cache[TCACHE];  /* TID 0 never looked up: an empty entry matches nothing */
    unsigned *cpus;
    unsigned ncpus;
    etl_idmap map;      /* (seg + 1) << 32 | TID for reused TIDs, TID otherwise -> slot */
    slot *slots;
    size_t nslots, capslots;
    void *cons;
    uint64_t switches, full, compact, rows, mismatch, broken, undecodable, last_ts;
    uint64_t bad_state, bad_priority; /* compact switches with a field out of range (etl_batch_expand_stats) */
    uint64_t life_bytes; /* lifetime records copied */
    etl_stats damage;   /* what this worker's iterators found, beyond the reader's own */
    bool unsupported, oom;
    etl_os_thread *th;     /* NULL: walked on the caller's thread */
} worker;

struct run {
    etl_reader *r;
    const etl_clock *clock;
    const etl_sched_percpu_consumer *c;
    bool complete_only;
    bool gaps;          /* the file misses buffers: a mismatch slice and each CPU's time after its last record unknown */
    bool lookahead;
    unsigned bias;
    bool collect;       /* first walk: note lifetime records */
    bool sight;         /* note each slot's first sighting (first walk; second when restarts) */
    unsigned ncpu;
    pcpu *cpus;
    etl_spool *spool;
    etl_spool_stream *life; /* per CPU: its lifetime records, copied */
    etl_idmap reused_map; /* TID -> index in reused[] (second walk) */
    reused *reused;
    size_t nreused, capreused;
    uint64_t restarts;  /* boundaries at a Start of a thread not ended (the model is built again) */
    worker *w;
    unsigned nw;
    _Atomic uint64_t progress;
    void (*on_progress)(void *ctx, uint64_t bytes);
    void *progress_ctx;
};

/* ---- a worker's threads -------------------------------------------------------- */

static uint32_t new_slot(worker *w, uint32_t tid, uint32_t seg, bool multi)
{
    if (w->nslots >= ETL_SCHED_MAX_INSTANCES) {
        /* More threads than the model keeps: the time-ordered model says which it leaves out. */
        w->unsupported = true;
        return ETL_SCHED_NONE;
    }
    if (w->nslots == w->capslots) {
        size_t cap = w->capslots ? w->capslots * 2 : 1024;
        slot *s = realloc(w->slots, cap * sizeof *s);
        if (!s) return ETL_SCHED_NONE;
        w->slots = s;
        w->capslots = cap;
    }
    uint32_t i = (uint32_t)w->nslots;
    uint64_t key = multi ? (uint64_t)(seg + 1) << 32 | tid : tid;
    if (etl_idmap_put(&w->map, key, i) != ETL_OK) return ETL_SCHED_NONE;
    w->nslots++;
    w->slots[i] = (slot){.tid = tid, .seg = seg, .first = {UINT64_MAX, UINT64_MAX}, .cpu_seen = UINT16_MAX,
                         .multi = multi};
    return i;
}

/* Which of a reused TID's instances a position falls in: the boundaries at or before it. */
static uint32_t segment_of(const reused *u, pos p)
{
    size_t lo = 0, hi = u->n - 1; /* at[0 .. n - 2] */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pos_less(p, u->at[mid])) hi = mid;
        else lo = mid + 1;
    }
    return (uint32_t)lo;
}

/* thread_at's lookup past the cache: the (TID, instance) slot, made on first sight. */
static uint32_t thread_slot(worker *w, uint32_t tid, uint64_t ts, uint64_t lo)
{
    pos p = {ts, lo};
    run *rn = w->rn;
    uint32_t seg = 0;
    bool multi = false;
    if (rn->nreused) {
        uint32_t u = etl_idmap_get(&rn->reused_map, tid);
        if (u != ETL_IDMAP_EMPTY) {
            seg = segment_of(&rn->reused[u], p);
            multi = true;
        }
    }
    uint32_t i = etl_idmap_get(&w->map, multi ? (uint64_t)(seg + 1) << 32 | tid : tid);
    if (i == ETL_IDMAP_EMPTY) {
        i = new_slot(w, tid, seg, multi);
        if (i == ETL_SCHED_NONE) {
            if (!w->unsupported) w->oom = true;
            return ETL_SCHED_NONE;
        }
    }
    /* A reused TID's instance depends on the time: never cached. */
    if (!multi) w->cache[(tid >> 2) & (TCACHE - 1)] = (tcache){tid, i, w->slots[i].cpu_seen};
    return i;
}

/*
 * The worker's index of the thread a TID names at position (ts, lo) (ETL_SCHED_IDLE for
 * TID 0). The position comes as two words, not a struct: a struct built in two stores and
 * read in one stalls the store forwarding, once per switch.
 */
static inline uint32_t thread_at(worker *w, unsigned cpu, uint32_t tid, uint64_t ts, uint64_t lo)
{
    if (tid == 0) return ETL_SCHED_IDLE;
    tcache *e = &w->cache[(tid >> 2) & (TCACHE - 1)];
    uint32_t i, seen;
    if (e->tid == tid) {
        i = e->slot;
        seen = e->cpu;
    } else {
        i = thread_slot(w, tid, ts, lo);
        if (i == ETL_SCHED_NONE) return i;
        seen = w->slots[i].cpu_seen;
    }
    /* A CPU's sightings come in time order: its first one is the only one worth comparing. */
    if (w->rn->sight && seen != cpu) {
        slot *s = &w->slots[i];
        s->cpu_seen = (uint16_t)cpu;
        if (e->tid == tid) e->cpu = cpu;
        if (ts < s->first.ts || (ts == s->first.ts && lo < s->first.lo)) s->first = (pos){ts, lo};
    }
    return i;
}

/* ---- rows: the model's on_switch, for one CPU ------------------------------------ */

/* A row: to the consumer, or with cpu_time, its slice straight into the worker's etl_usage. */
static inline void emit(worker *w, etl_sched_row *row, bool rows)
{
    if (row->nso < row->si) row->nso = row->si; /* as the model: durations never negative */
    w->rows++;
    if (rows) {
        w->rn->c->row(w->cons, row);
    } else {
        usage_part_slice(w->cons, row->cpu, row->si, row->nso, row->new_thread, (row->flags & ETL_ROW_HEAD) != 0,
                         usage_out_of(row->out));
    }
}

/* Whether the reader passed over records of CPU cpu after one at from or later, before to (etl_reader_cpu_skipped). */
static inline bool skipped(const run *rn, unsigned cpu, uint64_t from, uint64_t to)
{
    return etl_reader_any_skipped(rn->r) && etl_reader_cpu_skipped(rn->r, cpu, from, to);
}

/*
 * The model's on_switch for one CPU: e = c->sw[c->last ^ 1], just read, at position
 * (e->ts, lo) with lo for its new TID. rows is constant where it is inlined: with
 * cpu_time the row is only the state it keeps.
 */
static inline __attribute__((always_inline)) void switch_row(worker *w, pcpu *c, uint64_t lo, bool rows)
{
    run *rn = w->rn;
    const etl_cswitch *e = &c->sw[c->last ^ 1];
    etl_sched_row *row = &c->row;
    w->switches++;
    uint64_t t = e->ts;
    int64_t t_ns = etl_clock_ns(rn->clock, t);
    bool old_known = (e->known & ETL_CSW_OLD_TID) != 0;
    uint32_t old = ETL_SCHED_NONE;
    if (old_known) {
        /* Usually the thread going out is the one the last switch brought in: no lookup (a TID reused needs one). */
        if (c->has_prev && row->new_tid == e->old_tid && row->new_thread != ETL_SCHED_NONE &&
            (row->new_thread == ETL_SCHED_IDLE || !rn->nreused || !w->slots[row->new_thread].multi))
            old = row->new_thread;
        else
            old = thread_at(w, e->cpu, e->old_tid, t, lo & ~1ull);
    }
    int64_t prev_si = t_ns;
    bool prev_unknown = false; /* the slice this switch ends is of no known thread */
    if (c->has_prev) {
        if (old_known && row->new_tid != e->old_tid) {
            /*
             * Planned one thread, another ran: the observed one, unless a buffer of this CPU was lost
             * (most likely): who ran is not known. No thread planned: the compact chain is broken,
             * switches between the two lost, so the slice is unknown too (as the model's).
             */
            bool lost = true;
            if (row->new_thread != ETL_SCHED_NONE || row->new_tid != UINT32_MAX) {
                row->flags |= ETL_ROW_MISMATCH;
                w->mismatch++;
                lost = rn->gaps;
            }
            row->new_tid = lost ? UINT32_MAX : e->old_tid;
            row->new_thread = lost ? ETL_SCHED_NONE : old;
        }
        if (etl_gap_spans(&c->gaps, row->si_ts, t) || skipped(rn, e->cpu, row->si_ts, t)) {
            row->new_tid = UINT32_MAX;
            row->new_thread = ETL_SCHED_NONE;
        }
        prev_unknown = row->new_thread == ETL_SCHED_NONE && row->new_tid == UINT32_MAX;
        row->nso_ts = t;
        row->nso = t_ns;
        row->out = e;
        row->in = &c->sw[c->last];
        emit(w, row, rows);
        prev_si = row->si; /* the open row began at the previous switch */
    } else if (!rn->complete_only && t >= rn->clock->t0) {
        /* The head slice [t0, first switch) belongs to the thread this switch takes off the CPU. */
        etl_sched_row head;
        etl_zero_small(&head, sizeof head);
        head.flags = ETL_ROW_HEAD;
        head.cpu = e->cpu;
        bool lost = etl_gap_spans(&c->gaps, rn->clock->t0, t) || skipped(rn, e->cpu, 0, t);
        head.new_tid = old_known && !lost ? e->old_tid : UINT32_MAX;
        head.new_thread = lost ? ETL_SCHED_NONE : old;
        head.old_tid = UINT32_MAX;
        head.old_thread = ETL_SCHED_NONE;
        head.si_ts = rn->clock->t0;
        head.nso_ts = t;
        head.nso = t_ns;
        head.out = e;
        emit(w, &head, rows);
    }
    /*
     * The row e opens, field by field: the fields of other CPUs' making (PREV, READY_TIME,
     * READIED, WAITED) are never set here, so they stay as calloc left them.
     */
    row->flags = c->has_prev && !prev_unknown ? 0 : ETL_ROW_OLD_SI_UNKNOWN;
    row->cpu = e->cpu;
    row->si_ts = t;
    row->si = t_ns;
    if (rows) {
        row->old_tid = old_known ? e->old_tid : UINT32_MAX;
        row->old_thread = old;
        row->nso_ts = 0;
        row->nso = 0;
        row->prev_switch = prev_si;
        row->in = row->out = NULL;
    }
    if (e->known & ETL_CSW_NEW_TID) {
        row->new_tid = e->new_tid;
        row->new_thread = thread_at(w, e->cpu, e->new_tid, t, lo);
    } else {
        row->new_tid = UINT32_MAX;
        row->new_thread = ETL_SCHED_NONE;
    }
    c->last ^= 1;
    c->has_prev = true;
}

static void switch_rows(worker *w, pcpu *c, uint64_t lo) { switch_row(w, c, lo, true); }
static void switch_time(worker *w, pcpu *c, uint64_t lo) { switch_row(w, c, lo, false); }

static inline void on_switch(worker *w, pcpu *c, uint64_t lo)
{
    if (w->rn->c->cpu_time) switch_time(w, c, lo);
    else switch_rows(w, c, lo);
}

/* ---- walking one CPU ---------------------------------------------------------------- */


typedef struct cpu_walk {
    worker *w;
    pcpu *c;
    unsigned cpu;
    uint64_t max_ts;        /* the CPU's time so far: a record before it is unsupported */
    uint64_t sw_ts;         /* the last compact switch's time */
    uint64_t ncompact;      /* compact switches so far: their place in their stream */
    bool saw_full, saw_compact;
    etl_batch_expander x;
    etl_batch_expand_cpu xcpu;
} cpu_walk;

/* The slot the next switch is read into. */
static inline etl_cswitch *next_sw(cpu_walk *k) { return &k->c->sw[k->c->last ^ 1]; }

/* A compact switch the expander put in next_sw(k). */
static void compact_switch(cpu_walk *k, bool last)
{
    etl_cswitch *sw = next_sw(k);
    if (sw->ts < k->sw_ts) k->w->unsupported = true;
    k->sw_ts = sw->ts;
    if (!last && !(sw->known & ETL_CSW_NEW_TID)) k->w->broken++;
    k->saw_compact = true;
    k->w->compact++;
    sw->cpu = (uint16_t)k->cpu;
    on_switch(k->w, k->c, pos_lo(k->cpu, STREAM_COMPACT, k->ncompact++, 1));
}

/* Copies a lifetime record (rec bytes) into its CPU's stream, with where it lay. */
static bool note_life(run *rn, unsigned cpu, const etl_walk *wk, size_t off, const uint8_t *rec, uint32_t size)
{
    uint8_t tmp[sizeof(lnote) + 1024];
    size_t n = sizeof(lnote) + size;
    uint8_t *b = n <= sizeof tmp ? tmp : malloc(n);
    if (!b) return false;
    lnote h = {wk->buffer_index, wk->ordinal, (uint32_t)off, size};
    memcpy(b, &h, sizeof h);
    memcpy(b + sizeof h, rec, size);
    bool ok = etl_spool_append(&rn->life[cpu], b, n);
    if (b != tmp) free(b);
    return ok;
}

/* One scheduler record of the CPU's main stream: a CSwitch, a batch, or a lifetime record to note. */
static void sched_record(cpu_walk *k, const etl_walk *wk, size_t off, uint16_t hook, uint64_t ts,
                         const etl_record *full, const etl_krec *kr)
{
    worker *w = k->w;
    run *rn = w->rn;
    unsigned kind = etl_sched_kind_of(hook);
    if (!kind) return;
    if (ts > w->last_ts) w->last_ts = ts;
    if (kind == ETL_SCHED_SWITCH && hook == ETL_HOOK_CSWITCH_BATCH) {
        /* The source reads batches ahead, or merges them where met when the mask did not announce them. */
        if (!rn->lookahead) {
            w->unsupported = true;
            return;
        }
        etl_span payload = full ? full->payload : kr->payload;
        uint8_t version = (uint8_t)(full ? full->version : kr->version_word & 0xFF);
        const uint8_t *rec = full ? full->data : kr->data;
        uint64_t bad_time = k->x.stats.bad_time;
        etl_batch_expand_stats before = k->x.stats;
        /* The batch was written at its header's time: none of its switches is later (kernel-events.md 6.5). */
        uint64_t written = full ? etl_record_ts_or_none(full) : kr->ts;
        etl_batch_expand_window(&k->x, k->x.t_lo, etl_walk_time_limit(wk)); /* none after the buffer's flush */
        etl_batch_expand_begin_written(&k->x, 0, payload, rn->bias, version, written);
        if (!rn->c->cpu_time) {
            while (etl_batch_expand_next(&k->x, next_sw(k)) == ETL_OK) compact_switch(k, false);
            etl_sched_batch_checked(wk, rec, &k->x, bad_time);
            etl_batch_expand_tell(&k->x, &before, rn->r, wk->buffer_index, (size_t)(rec - wk->p), &w->damage);
            w->bad_state += k->x.stats.bad_state - before.bad_state;
            w->bad_priority += k->x.stats.bad_priority - before.bad_priority;
            return;
        }
        /* CPU time reads a switch's ids alone: the batch comes out as that, a run at a time. */
        etl_cswitch_ids ids[128];
        for (size_t n; (n = etl_batch_expand_ids(&k->x, ids, 128)) > 0;) {
            for (size_t i = 0; i < n; i++) {
                etl_cswitch *sw = next_sw(k);
                sw->ts = ids[i].ts;
                /* Only what ids carry is known here: the slot's other fields are an earlier switch's. */
                sw->known =
                    ids[i].known & (ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_STATE);
                sw->old_tid = ids[i].old_tid;
                sw->new_tid = ids[i].new_tid;
                sw->old_state = ids[i].old_state;
                compact_switch(k, false);
            }
        }
        etl_sched_batch_checked(wk, rec, &k->x, bad_time);
        etl_batch_expand_tell(&k->x, &before, rn->r, wk->buffer_index, (size_t)(rec - wk->p), &w->damage);
        w->bad_state += k->x.stats.bad_state - before.bad_state;
        w->bad_priority += k->x.stats.bad_priority - before.bad_priority;
        return;
    }
    if (kind == ETL_SCHED_SWITCH) {
        bool ok;
        if (full) {
            etl_event ev;
            ok = etl_event_decode(full, &ev) == ETL_OK;
            if (ok) *next_sw(k) = ev.u.cswitch;
        } else {
            ok = etl_event_decode_cswitch_krec(kr, (uint16_t)k->cpu, next_sw(k)) == ETL_OK;
        }
        if (!ok) {
            w->undecodable++;
            return;
        }
        k->saw_full = true;
        w->full++;
        on_switch(w, k->c, pos_lo(k->cpu, STREAM_MAIN, main_place(wk->ordinal, off), 1));
        return;
    }
    if (kind == ETL_SCHED_READY || kind == ETL_SCHED_SPINLOCK) return; /* not read: rows do not need them */
    /* Thread, SetName, Process: decoded when the model is built (undecodable counted there). */
    if (!rn->collect) return;
    uint32_t size = full ? full->size : kr->size;
    w->life_bytes += sizeof(lnote) + size;
    if (w->life_bytes > LIFE_LIMIT / rn->nw) w->unsupported = true; /* no real trace: time order */
    else if (!note_life(rn, k->cpu, wk, off, full ? full->data : kr->data, size)) w->oom = true;
}


/* One buffer of a CPU: its records in order. */
static void walk_buffer(cpu_walk *k, etl_walk *wk)
{
    worker *w = k->w;
    bool cpu_time = w->rn->c->cpu_time;
    etl_krec kr;
    int kind;
    size_t off = wk->pos;
    while ((kind = etl_walk_next(wk, &kr)) != ETL_WALK_END) {
        if (kind == ETL_WALK_KERNEL) {
            if (kr.ts < k->max_ts) w->unsupported = true;
            k->max_ts = kr.ts;
            /* The bulk of a trace, handled here: CSwitch for CPU time, and what is not read. */
            if (kr.hook == ETL_HOOK_CSWITCH && cpu_time) {
                if (kr.ts > w->last_ts) w->last_ts = kr.ts;
                etl_cswitch *sw = next_sw(k);
                if (etl_cswitch_decode_ids(kr.payload, kr.version_word & 0xFF, sw)) {
                    sw->ts = kr.ts;
                    sw->cpu = (uint16_t)k->cpu;
                    k->saw_full = true;
                    w->full++;
                    switch_time(w, k->c, pos_lo(k->cpu, STREAM_MAIN, main_place(wk->ordinal, off), 1));
                } else {
                    w->undecodable++;
                }
            } else if (kr.hook == ETL_HOOK_READY_THREAD || kr.hook == ETL_HOOK_SPINLOCK) {
                if (kr.ts > w->last_ts) w->last_ts = kr.ts;
            } else {
                sched_record(k, wk, off, kr.hook, kr.ts, NULL, &kr);
            }
        } else {
            const etl_record *rec = &wk->full;
            uint16_t hook;
            if (rec->has & ETL_REC_TS) {
                if (rec->ts < k->max_ts) w->unsupported = true;
                k->max_ts = rec->ts;
            }
            if (etl_record_kernel_hook(rec, &hook)) sched_record(k, wk, off, hook, rec->ts, rec, NULL);
        }
        off = wk->pos;
    }
}

/* Walks the worker's CPUs, each with its own state, their buffers about in file order. */
static void worker_main(void *arg)
{
    worker *w = arg;
    run *rn = w->rn;
    uint8_t *want = calloc(rn->ncpu ? rn->ncpu : 1, 1);
    cpu_walk *ks = calloc(rn->ncpu ? rn->ncpu : 1, sizeof *ks);
    etl_iter *it = NULL;
    if (!want || !ks) goto oom;
    uint64_t lo, hi;
    etl_reader_time_window(rn->r, &lo, &hi);
    for (unsigned i = 0; i < w->ncpus; i++) {
        unsigned c = w->cpus[i];
        cpu_walk *k = &ks[c];
        want[c] = 1;
        k->w = w;
        k->c = &rn->cpus[c];
        k->c->worker = w->id;
        k->cpu = c;
        etl_batch_expand_init(&k->x, &k->xcpu, 1);
        etl_batch_expand_window(&k->x, lo, hi);
    }
    if (etl_iter_open_cpus_buffers(rn->r, want, rn->ncpu, &it) != ETL_OK) goto oom;
    if (rn->nw > 1) etl_iter_pace(it); /* the pages between the workers stay few */
    etl_walk wk;
    uint64_t done = 0;
    for (unsigned nb = 0; !w->unsupported && etl_iter_next_buffer(it, &wk) == ETL_OK; nb++) {
        walk_buffer(&ks[wk.cpu], &wk);
        if ((nb & 15) == 0) {
            uint64_t now = etl_iter_progress(it);
            atomic_fetch_add_explicit(&rn->progress, now - done, memory_order_relaxed);
            done = now;
            if (w->id == 0 && rn->on_progress)
                rn->on_progress(rn->progress_ctx, atomic_load_explicit(&rn->progress, memory_order_relaxed));
        }
    }
    for (unsigned i = 0; i < w->ncpus && !w->unsupported; i++) {
        cpu_walk *k = &ks[w->cpus[i]];
        /* The CPU's last compact switch: nothing follows it, so no successor was lost. */
        while (etl_batch_expand_finish(&k->x, next_sw(k)) == ETL_OK) compact_switch(k, true);
        /* Its last switch counts toward the trace's end, as in the source (a batch cut short by the file's end). */
        if (k->saw_compact && k->sw_ts > w->last_ts) w->last_ts = k->sw_ts;
        if (k->saw_full && k->saw_compact) w->unsupported = true; /* the source keeps one form a CPU */
    }
    etl_stats_add(&w->damage, etl_iter_stats_get(it), etl_reader_stats_get(rn->r));
    etl_iter_close(it);
    free(want);
    free(ks);
    return;
oom:
    w->oom = true;
    free(want);
    free(ks);
}

/* ---- the model from the lifetime records and the first sightings ------------------ */

typedef struct sight {
    pos p;
    uint32_t tid;
} sight;

static int by_pos(const void *a, const void *b)
{
    const sight *x = a, *y = b;
    return pos_less(x->p, y->p) ? -1 : pos_less(y->p, x->p);
}

/* A CPU's next lifetime record, from its stream, and its position. */
typedef struct lhead {
    etl_record rec;
    pos p;
} lhead;

static bool lhead_load(run *rn, unsigned cpu, lhead *h)
{
    size_t n;
    const uint8_t *b;
    while ((b = etl_spool_next(&rn->life[cpu], &n)) != NULL) {
        lnote x;
        memcpy(&x, b, sizeof x);
        size_t next;
        if (n >= sizeof x + x.size &&
            etl_record_frame((etl_span){b + sizeof x, x.size}, 0, &h->rec, &next) == ETL_OK) {
            h->rec.offset = x.off;
            h->rec.cpu = (uint16_t)cpu;
            h->rec.buffer_index = x.buf;
            h->p = mkpos(h->rec.ts, cpu, STREAM_MAIN, main_place(x.ordinal, x.off), 0);
            return true;
        }
        /* cannot happen: the walk framed it */
    }
    return false;
}

/* The record's event for the model, as the source decodes it; false when undecodable. */
static bool life_event(const etl_record *rec, etl_sched_event *ev)
{
    etl_event e;
    if (etl_event_decode(rec, &e) != ETL_OK) return false;
    memset(ev, 0, sizeof *ev);
    ev->cpu = rec->cpu;
    ev->hook = e.hook;
    ev->ts = rec->ts;
    switch (e.kind) {
    case ETL_EVENT_THREAD: ev->kind = ETL_SCHED_THREAD; ev->u.thread = e.u.thread; return true;
    case ETL_EVENT_THREAD_SET_NAME: ev->kind = ETL_SCHED_SET_NAME; ev->u.set_name = e.u.set_name; return true;
    case ETL_EVENT_PROCESS: ev->kind = ETL_SCHED_PROCESS; ev->u.process = e.u.process; return true;
    default: return false;
    }
}

/* Notes that tid's instance changed at p (a Thread Start of a TID whose thread had started). */
static etl_status add_boundary(run *rn, uint32_t tid, uint32_t before, uint32_t after, pos p)
{
    uint32_t u = etl_idmap_get(&rn->reused_map, tid);
    if (u == ETL_IDMAP_EMPTY) {
        if (rn->nreused == rn->capreused) {
            size_t cap = rn->capreused ? rn->capreused * 2 : 64;
            reused *v = realloc(rn->reused, cap * sizeof *v);
            if (!v) return ETL_E_NOMEM;
            rn->reused = v;
            rn->capreused = cap;
        }
        u = (uint32_t)rn->nreused;
        reused *v = &rn->reused[u];
        *v = (reused){.n = 1, .cap = 4};
        v->at = malloc(v->cap * sizeof *v->at);
        v->inst = malloc(v->cap * sizeof *v->inst);
        rn->nreused++; /* freed with the others from here */
        if (!v->at || !v->inst || etl_idmap_put(&rn->reused_map, tid, u) != ETL_OK) return ETL_E_NOMEM;
        v->inst[0] = before;
    }
    reused *x = &rn->reused[u];
    if (x->n == x->cap) {
        size_t cap = x->cap * 2;
        pos *at = realloc(x->at, cap * sizeof *at);
        if (at) x->at = at;
        uint32_t *inst = realloc(x->inst, cap * sizeof *inst);
        if (inst) x->inst = inst;
        if (!at || !inst) return ETL_E_NOMEM;
        x->cap = cap;
    }
    x->at[x->n - 1] = p;
    x->inst[x->n++] = after;
    return ETL_OK;
}

/*
 * The model's second build, at a lifetime record at p of tid (push: the record goes
 * to the model now): each boundary of the first build gets the instance the TID
 * names from it on, inst[0] the one before.
 */
static void rebound(run *rn, etl_sched *m, uint32_t tid, pos p, bool push_done)
{
    uint32_t u = etl_idmap_get(&rn->reused_map, tid);
    if (u == ETL_IDMAP_EMPTY) return;
    reused *x = &rn->reused[u];
    if (x->next + 1 >= x->n || pos_less(p, x->at[x->next]) || pos_less(x->at[x->next], p)) return;
    if (!push_done) {
        if (x->next == 0) x->inst[0] = etl_sched_thread_of(m, tid);
        return;
    }
    x->inst[++x->next] = etl_sched_thread_of(m, tid);
}

/*
 * Pushes the lifetime records (every CPU's, merged on position) and the first
 * sightings of every TID into a new model, noting where a TID's instance changes.
 * The first build makes every Start of a started thread a boundary; the second
 * (again: after the second walk) has each reused TID's first sighting between
 * two boundaries in its place, so that the model knows which threads ran before
 * such a Start, and gives the boundaries the instances it makes.
 */
static etl_status build_model(run *rn, bool again, etl_sched **out, uint64_t *undecodable)
{
    *out = NULL;
    /* First sightings over all workers: the earliest of each TID, or (TID, instance) of a reused one. */
    etl_idmap first;
    etl_idmap_init(&first);
    size_t total = 0;
    for (unsigned i = 0; i < rn->nw; i++) total += rn->w[i].nslots;
    sight *s = malloc((total ? total : 1) * sizeof *s);
    size_t ns = 0;
    etl_status st = s ? ETL_OK : ETL_E_NOMEM;
    for (unsigned i = 0; st == ETL_OK && i < rn->nw; i++) {
        for (size_t j = 0; j < rn->w[i].nslots; j++) {
            const slot *x = &rn->w[i].slots[j];
            uint64_t key = x->multi ? (uint64_t)(x->seg + 1) << 32 | x->tid : x->tid;
            uint32_t k = etl_idmap_get(&first, key);
            if (k == ETL_IDMAP_EMPTY) {
                s[ns] = (sight){x->first, x->tid};
                st = etl_idmap_put(&first, key, (uint32_t)ns++);
            } else if (pos_less(x->first, s[k].p)) {
                s[k].p = x->first;
            }
        }
    }
    etl_idmap_free(&first);
    if (ns > 1) qsort(s, ns, sizeof *s, by_pos);

    etl_sched *m = NULL;
    lhead *h = calloc(rn->ncpu ? rn->ncpu : 1, sizeof *h);
    etl_ltree lt = {0};
    etl_sched_options mo = {.sz = sizeof mo, .complete_only = rn->complete_only};
    if (st == ETL_OK && (!h || !etl_ltree_init(&lt, rn->ncpu) ||
                         etl_sched_open(rn->clock, rn->ncpu, &mo, &m) != ETL_OK))
        st = ETL_E_NOMEM;
    if (st == ETL_OK) etl_sched_restarts_new(m, !again);
    for (size_t i = 0; again && i < rn->nreused; i++) rn->reused[i].next = 0;
    for (unsigned c = 0; again && c < rn->ncpu; c++) etl_spool_rewind(&rn->life[c]);
    for (unsigned c = 0; st == ETL_OK && c < rn->ncpu; c++)
        lt.leaf[c] = lhead_load(rn, c, &h[c]) ? (etl_ltree_key){h[c].p.ts, h[c].p.lo}
                                               : (etl_ltree_key){UINT64_MAX, ETL_LTREE_DONE};
    if (st == ETL_OK && !etl_ltree_build(&lt)) st = ETL_E_NOMEM;
    size_t si = 0;
    while (st == ETL_OK) {
        int top = etl_ltree_top(&lt);
        bool life = top >= 0 && (si == ns || pos_less(h[top].p, s[si].p));
        if (!life) {
            if (si == ns) break;
            etl_sched_see(m, s[si].tid, s[si].p.ts);
            si++;
            continue;
        }
        lhead *x = &h[top];
        etl_sched_event ev;
        if (life_event(&x->rec, &ev)) {
            uint32_t tid = ev.kind == ETL_SCHED_THREAD ? ev.u.thread.thread_id : 0;
            if (again && tid) {
                rebound(rn, m, tid, x->p, false);
                etl_sched_push(m, &ev);
                rebound(rn, m, tid, x->p, true);
            } else {
                uint32_t before = tid ? etl_sched_thread_of(m, tid) : ETL_SCHED_NONE;
                etl_sched_push(m, &ev);
                uint32_t after = tid ? etl_sched_thread_of(m, tid) : ETL_SCHED_NONE;
                if (before != ETL_SCHED_NONE && after != before) {
                    const etl_sched_thread *t = etl_sched_thread_at(m, before);
                    if (t && !t->ended) rn->restarts++;
                    st = add_boundary(rn, tid, before, after, x->p);
                }
            }
        } else {
            ++*undecodable;
        }
        lt.leaf[top] = lhead_load(rn, (unsigned)top, x) ? (etl_ltree_key){x->p.ts, x->p.lo}
                                                        : (etl_ltree_key){UINT64_MAX, ETL_LTREE_DONE};
        etl_ltree_replay(&lt, (unsigned)top);
    }
    free(h);
    etl_ltree_free(&lt);
    free(s);
    if (st == ETL_OK && etl_spool_error(rn->spool)) st = ETL_E_NOMEM;
    /* Past a limit the time-ordered model counts what it leaves out, event by event. */
    if (st == ETL_OK && etl_sched_stats_get(m)->over_limit) st = ETL_E_UNSUPPORTED;
    if (st != ETL_OK) {
        etl_sched_close(m);
        return st;
    }
    *out = m;
    return ETL_OK;
}

/* ---- the run ------------------------------------------------------------------------ */

static void workers_free(run *rn)
{
    for (unsigned i = 0; i < rn->nw; i++) {
        worker *w = &rn->w[i];
        if (w->cons) rn->c->close(rn->c->ctx, w->cons);
        etl_idmap_free(&w->map);
        free(w->slots);
        free(w->cpus);
    }
    free(rn->w);
    rn->w = NULL;
    rn->nw = 0;
}

/* Deals the CPUs, opens a consumer state a worker and walks every CPU. */
static etl_status walk_all(run *rn, unsigned threads)
{
    uint8_t *share = calloc(rn->ncpu ? rn->ncpu : 1, 1);
    if (!share) return ETL_E_NOMEM;
    if (threads > ETL_SCHED_MAX_WORKERS) threads = ETL_SCHED_MAX_WORKERS;
    /* Every worker does the same work: no share weighs more. */
    unsigned n = threads > 1 ? etl_sched_deal_cpus(rn->r, threads, 1, share) : 0;
    if (n <= 1) { /* one share: every CPU with buffers */
        n = 1;
        for (size_t i = 0; i < etl_reader_buffer_count(rn->r); i++) {
            unsigned c = etl_reader_buffer_cpu(rn->r, i);
            if (c < rn->ncpu) share[c] = 1;
        }
    }
    rn->w = calloc(n, sizeof *rn->w);
    etl_status st = rn->w ? ETL_OK : ETL_E_NOMEM;
    if (st == ETL_OK) rn->nw = n;
    for (unsigned i = 0; st == ETL_OK && i < n; i++) {
        worker *w = &rn->w[i];
        w->rn = rn;
        w->id = i;
        w->damage.first_problem_offset = UINT64_MAX;
        etl_idmap_init(&w->map);
        w->cpus = malloc((rn->ncpu ? rn->ncpu : 1) * sizeof *w->cpus);
        w->cons = rn->c->open(rn->c->ctx);
        if (!w->cpus || !w->cons) st = ETL_E_NOMEM;
        for (unsigned c = 0; st == ETL_OK && c < rn->ncpu; c++)
            if (share[c] == i + 1) w->cpus[w->ncpus++] = c;
    }
    free(share);
    for (unsigned i = 1; st == ETL_OK && i < rn->nw; i++)
        rn->w[i].th = etl_thread_start(worker_main, &rn->w[i]);
    if (st == ETL_OK) worker_main(&rn->w[0]);
    for (unsigned i = 1; i < rn->nw; i++) {
        worker *w = &rn->w[i];
        if (w->th) etl_thread_join(w->th);
        else if (st == ETL_OK) worker_main(w); /* no thread to be had: here */
    }
    for (unsigned i = 0; st == ETL_OK && i < rn->nw; i++) {
        if (rn->w[i].oom) st = ETL_E_NOMEM;
        else if (rn->w[i].unsupported) st = ETL_E_UNSUPPORTED;
    }
    return st;
}

/* The tail rows: each CPU's last switch-in runs to the end of the trace. */
static void finish_rows(run *rn, uint64_t end_ts)
{
    for (unsigned c = 0; c < rn->ncpu; c++) {
        pcpu *p = &rn->cpus[c];
        if (!p->has_prev || rn->complete_only) continue;
        worker *w = &rn->w[p->worker];
        etl_sched_row *row = &p->row;
        row->flags |= ETL_ROW_TAIL;
        uint64_t end = rn->gaps ? etl_sched_cpu_end(rn->r, c, end_ts) : end_ts;
        row->nso_ts = end > row->si_ts ? end : row->si_ts;
        row->nso = etl_clock_ns(rn->clock, row->nso_ts);
        /* Its records after the last switch lost, maybe (skipped ones: any after it, as the model's). */
        if (etl_gap_spans(&p->gaps, row->si_ts, row->nso_ts) || skipped(rn, c, row->si_ts, UINT64_MAX)) {
            row->new_tid = UINT32_MAX;
            row->new_thread = ETL_SCHED_NONE;
        }
        row->in = &p->sw[p->last];
        row->out = NULL;
        emit(w, row, !rn->c->cpu_time);
    }
}

/* Every CPU before its first switch, with its gap spans when the file misses buffers. */
static void reset_cpus(run *rn)
{
    memset(rn->cpus, 0, rn->ncpu * sizeof *rn->cpus);
    for (unsigned i = 0; rn->gaps && i < rn->ncpu; i++) rn->cpus[i].gaps.gap = etl_reader_cpu_gaps(rn->r, i, &rn->cpus[i].gaps.n);
}

etl_status etl_sched_percpu_run(etl_reader *r, const etl_sched_percpu_options *opts,
                                const etl_sched_percpu_consumer *c, etl_sched_percpu_result *out)
{
    memset(out, 0, sizeof *out);
    etl_sched_percpu_options o = {.sz = sizeof o, .bias = -1, .threads = 1};
    etl_opts_take(&o, sizeof o, opts);
    run rn;
    memset(&rn, 0, sizeof rn);
    rn.r = r;
    rn.clock = etl_reader_clock(r);
    rn.c = c;
    rn.complete_only = o.complete_only;
    rn.gaps = etl_reader_buffers_missing(r) > 0;
    rn.ncpu = etl_reader_processors(r); /* the CPUs that logged nothing too: the model lists them */
    /* 0 as < 0 (etl_sched_source_open): no kernel has MaximumWaitReason 0. */
    rn.bias = o.bias > 0 ? (unsigned)o.bias : etl_max_wait_reason_for_build(etl_reader_header(r)->provider_version);
    rn.lookahead = rn.ncpu > 0 && etl_sched_logs_compact(r);
    rn.collect = true;
    rn.on_progress = o.progress;
    rn.progress_ctx = o.progress_ctx;
    etl_idmap_init(&rn.reused_map);
    rn.cpus = calloc(rn.ncpu ? rn.ncpu : 1, sizeof *rn.cpus);
    if (rn.cpus) reset_cpus(&rn);
    rn.life = calloc(rn.ncpu ? rn.ncpu : 1, sizeof *rn.life);
    rn.spool = etl_spool_open(o.spool_budget ? o.spool_budget : LIFE_BUDGET);
    for (unsigned i = 0; rn.life && i < rn.ncpu; i++) etl_spool_stream_init(&rn.life[i], rn.spool);
    rn.sight = true;
    etl_status st = rn.cpus && rn.life && rn.spool ? walk_all(&rn, o.threads) : ETL_E_NOMEM;
    uint64_t undecodable = 0;
    etl_sched *m = NULL;
    if (st == ETL_OK) st = build_model(&rn, false, &m, &undecodable);
    if (st == ETL_OK && rn.nreused) {
        /* A reused TID: walk again, each (TID, instance) its own index. */
        workers_free(&rn);
        reset_cpus(&rn);
        rn.collect = false;
        rn.sight = rn.restarts > 0;
        atomic_store(&rn.progress, 0);
        st = walk_all(&rn, o.threads);
    }
    if (st == ETL_OK && rn.restarts) {
        /* Which Starts of live threads came after the thread ran: the model again, with the sightings. */
        etl_sched_close(m);
        m = NULL;
        undecodable = 0;
        st = build_model(&rn, true, &m, &undecodable);
    }
    uint64_t last_ts = 0;
    etl_sched_stats ms = {0};
    etl_sched_source_stats ss = {0};
    etl_stats dmg = *etl_reader_stats_get(r);
    dmg.records = 0;
    for (unsigned i = 0; st == ETL_OK && i < rn.nw; i++) {
        const worker *w = &rn.w[i];
        if (w->last_ts > last_ts) last_ts = w->last_ts;
        ms.switches += w->switches;
        ms.cswitch_chain_mismatch += w->mismatch;
        ss.switches += w->switches;
        ss.full_switches += w->full;
        ss.compact_switches += w->compact;
        ss.broken_chains += w->broken;
        ss.bad_state += w->bad_state;
        ss.bad_priority += w->bad_priority;
        ss.undecodable += w->undecodable;
        etl_stats none = {.first_problem_offset = UINT64_MAX};
        etl_stats_add(&dmg, &w->damage, &none);
    }
    if (st == ETL_OK) {
        out->end_ts = etl_sched_end_ts(r, last_ts);
        finish_rows(&rn, out->end_ts);
        for (unsigned i = 0; i < rn.nw; i++) ms.rows += rn.w[i].rows;
    }
    /* Each worker's indices to the model's instances. */
    for (unsigned i = 0; st == ETL_OK && i < rn.nw; i++) {
        worker *w = &rn.w[i];
        uint32_t *map = malloc((w->nslots ? w->nslots : 1) * sizeof *map);
        if (!map) {
            st = ETL_E_NOMEM;
            break;
        }
        for (size_t j = 0; j < w->nslots; j++) {
            const slot *x = &w->slots[j];
            uint32_t u = x->multi ? etl_idmap_get(&rn.reused_map, x->tid) : ETL_IDMAP_EMPTY;
            map[j] = u != ETL_IDMAP_EMPTY ? rn.reused[u].inst[x->seg] : etl_sched_thread_of(m, x->tid);
        }
        /* The worker's memory goes as soon as it is used: its TIDs before the merge grows the caller's,
           its state after. */
        etl_idmap_free(&w->map);
        free(w->slots);
        w->slots = NULL;
        st = c->merge(c->ctx, w->cons, m, map, w->nslots);
        free(map);
        c->close(c->ctx, w->cons);
        w->cons = NULL;
    }
    /* A lifetime record the spool lost, or a model that left something out, makes every answer wrong. */
    if (st != ETL_E_UNSUPPORTED && rn.spool && etl_spool_error(rn.spool)) {
        etl_diag scratch;
        st = etl_spool_diag(rn.spool, o.diag ? o.diag : &scratch);
    } else if (st == ETL_OK && etl_sched_status(m) != ETL_OK) {
        st = ETL_E_NOMEM;
    }
    if (st == ETL_E_NOMEM && o.diag) etl_diag_set(o.diag, st, 0, "out of memory");
    if (st == ETL_OK) {
        const etl_sched_stats *b = etl_sched_stats_get(m);
        ms.threads = b->threads;
        ms.processes = b->processes;
        ms.unknown_threads = b->unknown_threads;
        ms.repeated_starts = b->repeated_starts;
        ms.over_limit = b->over_limit;
        ss.undecodable += undecodable;
        ss.last_ts = last_ts;
        out->model = m;
        out->stats = ms;
        out->source = ss;
        out->damage = dmg;
        m = NULL;
    }
    etl_sched_close(m);
    workers_free(&rn);
    for (unsigned i = 0; rn.life && i < rn.ncpu; i++) etl_spool_stream_free(&rn.life[i]);
    free(rn.life);
    etl_spool_close(rn.spool);
    free(rn.cpus);
    for (size_t i = 0; i < rn.nreused; i++) {
        free(rn.reused[i].at);
        free(rn.reused[i].inst);
    }
    free(rn.reused);
    etl_idmap_free(&rn.reused_map);
    return st;
}

/*
 * convert.c - rewrites a trace, turning CSwitch events into compact batches with
 * the kernel's rules, or compact batches into CSwitch events.
 *
 * Records are read in time order and written to the buffer of the CPU they came
 * from, unchanged, except:
 *  - the logfile header and buffer 0's header extension, which the writer makes;
 *  - group-mask events, whose PERF_COMPACT_CSWITCH bit follows the new format;
 *  - to compact: each CSwitch goes through the batch encoder; a finished batch is
 *    written as a PERFINFO 0x0525 v2 event at the time of the switch that
 *    flushed it. The end-of-trace batches go at their CPU's last time up to the
 *    last scheduler record: the events after that record (an end rundown's
 *    images) are held back until another scheduler record comes or the batches
 *    are written, so that no batch moves the trace's end (the later of the last
 *    scheduler record and EndTime);
 *  - to full: each batch is expanded (new thread paired from the next switch on
 *    the CPU) and every switch written as a CSwitch v2 event. Fields a batch does
 *    not carry are written all-ones, a value no kernel writes (see
 *    etl_convert_unknown below), never invented. A batch is written when it is
 *    flushed, after the events of its period, so each CPU keeps a queue of the
 *    events later than its newest switch and releases them once every switch
 *    before them is known: each CPU's output stays in time order.
 * An input that misses buffers (gaps in its SequenceNumbers) gives an output that
 * misses as many at the same places of each CPU's records: a record's epoch is the
 * number of the output's holes before it, and the writer puts a CPU's records of each
 * epoch in buffers of their own, numbered around the same holes (etl_writer_holes),
 * so that the output's reader finds where each CPU may have lost records as the
 * input's does (etl_reader_cpu_gaps). Expanding batches, a CPU's span may end
 * earlier: at the first switch of its batch after the hole, which that batch knows
 * (a batch is logged after its switches, the input's span ends at its records).
 * When the reading itself loses records (a buffer not read whole, a record passed
 * over or merged at its CPU's time, a switch with no known new thread that a batch
 * would pair), the output is written a second time with one number missing after
 * each loss, at the buffer or record where it lies, so that its readers find the
 * loss there as well instead of reading a clean trace.
 */
/* realpath(NULL buffer) and fchmod/fchown are XSI, beyond the build's POSIX level. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "etlkit/writer.h"
#include "etlkit/event.h"
#include "base/opts.h"
#include "base/bytes.h"
#include "base/idmap.h"
#include "base/mapfile.h"
#include "base/outfile.h"
#include "container/reader_internal.h"
#include "sched/cpushare.h"
#include "writer/writer_internal.h"

#define QUEUE_LIMIT (64u << 20)  /* bytes a CPU may hold back; beyond, order is given up (counted) */
#define CONVERT_BUFFER_MAX (1u << 20) /* output buffer size unless --buffer-size says otherwise */
#define HOLD_LIMIT (256u << 20)  /* bytes all CPUs may hold back together (the same, for the largest queue) */

/*
 * A SequenceNumber run the output misses, and where: after the input's buffers up to .to (its place, order), and
 * within the buffer at .to after its record at .pos (UINT32_MAX: after all of them).
 */
typedef struct out_hole {
    uint64_t from, to;
    uint32_t pos;
} out_hole;

/* Where a loss lies inside a buffer, learned by the first writing (a switch with no known new thread). */
typedef struct rec_at {
    uint32_t buf, off;
} rec_at;

/* An input buffer flagged EVENTS_LOST or BUFFER_LOST: its CPU, place among the CPU's buffers and flags. */
typedef struct lost_buf {
    uint32_t cpu, index; /* index: in file order (its epoch: epoch_of) */
    uint64_t order;
    unsigned flags;
} lost_buf;

/* A record held back: its bytes live in the CPU's arena. */
typedef struct held {
    uint64_t ts;
    size_t off, size;
    uint32_t epoch;     /* the output's holes before it (epoch_of) */
} held;

/* A switch expanded from a batch, waiting: the epoch of its batch. */
typedef struct queued_sw {
    etl_cswitch sw;
    uint32_t epoch;
} queued_sw;

typedef struct cpu_queue {
    uint8_t *arena;
    size_t arena_n, arena_cap;
    held *rec;
    size_t rec_head, rec_n, rec_cap;
    queued_sw *sw;
    size_t sw_head, sw_n, sw_cap;
    uint64_t last_ts;   /* newest time written to this CPU */
    uint32_t epoch;     /* the epoch of its newest input record */
    bool in_tail;       /* listed in conv.tail */
    bool new_unknown;   /* to compact: its last CSwitch's NewThreadId is not known (at unknown_buf, unknown_off) */
    bool unknown_cut;   /* ... and its batch was ended there (cut_unknown) */
    uint32_t unknown_buf, unknown_off;
} cpu_queue;

typedef struct conv {
    const etl_convert_options *o;
    etl_convert_stats *st;
    etl_writer *w;
    unsigned ncpu, bias, cswitch_version;
    cpu_queue *q;
    etl_ccswap_encoder enc;
    etl_ccswap_encoder_cpu *enc_cpus;
    etl_batch_expander exp;
    etl_batch_expand_cpu *exp_cpus;
    etl_iter *it;        /* the input's records: told of the batches whose times leave the session */
    etl_idmap prio;      /* thread id -> base priority (from Thread events): a compact batch records them */
    size_t held;         /* bytes of all the queues' arenas and record lists (their capacities) */
    uint64_t sched_ts;   /* to compact: the newest scheduler record's time (etl_sched_kind_of) */
    unsigned *tail;      /* to compact: the CPUs that may hold events later than sched_ts */
    unsigned ntail;
    uint8_t *src;        /* per CPU: which switches it has (SRC_*): the first kind seen wins */
    bool expect_batches; /* the session logged compact switches: hold events until each CPU's first batch */
    bool seen_header, seen_mask; /* buffer 0's logfile header and extension, which the writer makes anew */
    uint8_t *retimed;    /* a record copied to be written at its CPU's time (write_raw) */
    size_t retimed_cap;
    struct sw_order *order; /* per CPU: its batches' switches in time order (switch_goes_back) */
    etl_reader *rd;
    etl_stats dmg;       /* damage the expander found in batches (etl_batch_expand_tell) */
    const out_hole *hv;  /* the numbers the output misses, by (.to, .pos): the input's holes, and after the first */
    size_t nh;           /* writing the losses it found (holes_of) */
    rec_at *cuts;        /* the first writing's: the losses inside buffers (unknown_new_thread) */
    size_t ncuts, capcuts;
    bool learn;          /* the first writing: cuts are noted */
    bool holes;          /* the output misses buffers: records go out with their epochs */
    uint32_t epoch_buf;  /* the last buffer whose epoch was looked up (UINT32_MAX: none), and its epoch */
    uint32_t epoch_of_buf;
    size_t too_big;      /* a record did not fit an output buffer (ETL_E_RANGE): the input's largest, for the message */
    lost_buf *lb;        /* the input's flagged buffers by CPU and place (lost_flags_init) */
    size_t *lb_head, *lb_end; /* per CPU: its next one not yet given to the writer, and the end of its run */
} conv;

/* A CPU's last switch taken from batches, and the batch of its pending switch. */
typedef struct sw_order {
    uint64_t last;
    uint32_t buf, off;
} sw_order;

/* A trace may carry both CSwitch events and batches (--cswitch both): use one kind per CPU. */
enum { SRC_UNKNOWN = 0, SRC_CSWITCH = 1, SRC_BATCH = 2 };

static bool grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return true;
    size_t n = *cap ? *cap : 64;
    while (n < need) n *= 2;
    void *q = realloc(*p, n * elem);
    if (!q) return false;
    *p = q;
    *cap = n;
    return true;
}

/* The holes of the output's numbering before the record at off of input buffer b (c->hv). */
static uint32_t epoch_of(conv *c, uint32_t b, uint32_t off)
{
    if (!c->holes || b >= c->rd->nbufs) return 0;
    uint64_t order = c->rd->bufs[b].order;
    if (b != c->epoch_buf) { /* the holes before b */
        size_t lo = 0, hi = c->nh;
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (c->hv[mid].to < order) lo = mid + 1;
            else hi = mid;
        }
        c->epoch_buf = b;
        c->epoch_of_buf = (uint32_t)lo;
    }
    uint32_t e = c->epoch_of_buf; /* and those inside b before the record */
    while (e < c->nh && c->hv[e].to == order && c->hv[e].pos < off) e++;
    return e;
}

/* cpu's next record goes out in epoch e (its writer's buffer of an earlier one is written first). */
static etl_status to_epoch(conv *c, uint16_t cpu, uint32_t e)
{
    return c->holes ? etl_writer_epoch(c->w, cpu, e) : ETL_OK;
}

static etl_status write_raw(conv *c, uint16_t cpu, uint64_t ts, const uint8_t *p, size_t n, uint32_t epoch)
{
    /*
     * A kernel record the reader took at its layout's size (ETL_REC_BAD_SIZE: its Size field
     * was damaged) goes out with the size it was read at, so that the output reads back clean.
     */
    bool kernel = n >= 8 && (p[3] & 0xC0) == 0xC0 && p[2] < sizeof etl_khdr / sizeof etl_khdr[0] && etl_khdr[p[2]].fixed;
    if (kernel && etl_rd_u16(p + 4) != n) {
        if (!grow((void **)&c->retimed, &c->retimed_cap, n, 1)) return ETL_E_NOMEM;
        memcpy(c->retimed, p, n);
        etl_wr_u16(c->retimed + 4, (uint16_t)n);
        p = c->retimed;
    }
    if (ts < c->q[cpu].last_ts) {
        /*
         * Earlier than what its CPU wrote: a record of a damaged input that the reader merged
         * at its CPU's time (it told that). It goes out at that time, as batches' switches do,
         * so that the CPU's records in the output are in time order (container.md §7).
         */
        if (p != c->retimed) {
            if (!grow((void **)&c->retimed, &c->retimed_cap, n, 1)) return ETL_E_NOMEM;
            memcpy(c->retimed, p, n);
        }
        ts = c->q[cpu].last_ts;
        if (etl_record_retime(c->retimed, n, ts) == ETL_OK) p = c->retimed;
    }
    etl_status st = to_epoch(c, cpu, epoch);
    if (st == ETL_OK) st = etl_writer_write_record(c->w, cpu, ts, p, n);
    if (st == ETL_E_RANGE) c->too_big = n;
    if (st == ETL_OK) {
        c->st->records_out++;
        if (ts > c->q[cpu].last_ts) c->q[cpu].last_ts = ts;
    }
    return st;
}

/* The CSwitch v2 payload of a switch, with all-ones where the source did not carry a field. */
static etl_status write_cswitch(conv *c, const etl_cswitch *in, uint32_t epoch)
{
    etl_cswitch sw = *in;
    uint32_t k = in->known;
    if (!(k & ETL_CSW_NEW_TID)) sw.new_tid = UINT32_MAX;
    if (!(k & ETL_CSW_OLD_TID)) sw.old_tid = UINT32_MAX;
    if (!(k & ETL_CSW_NEW_PRIORITY)) sw.new_priority = -1;
    if (!(k & ETL_CSW_OLD_PRIORITY)) sw.old_priority = -1;
    if (!(k & ETL_CSW_PREVIOUS_CSTATE)) sw.previous_cstate = 0xFF;
    if (!(k & ETL_CSW_SPARE_BYTE)) sw.spare_byte = 0xFF;
    if (!(k & ETL_CSW_WAIT_REASON)) sw.old_wait_reason = 0xFF;
    if (!(k & ETL_CSW_WAIT_MODE)) sw.old_wait_mode = 0xFF;
    if (!(k & ETL_CSW_STATE)) sw.old_state = 0xFF;
    if (!(k & ETL_CSW_IDEAL_PROCESSOR)) sw.old_ideal_processor = 0xFF;
    if (!(k & ETL_CSW_NEW_WAIT_TIME)) sw.new_wait_time = UINT32_MAX;
    if (!(k & ETL_CSW_REMAINING_QUANTUM)) sw.old_remaining_quantum = INT32_MIN;
    uint8_t payload[32];
    size_t n;
    etl_status st = etl_cswitch_encode(&sw, c->cswitch_version, payload, sizeof payload, &n);
    if (st != ETL_OK) return st;
    etl_write_event ev = {0};
    ev.cpu = in->cpu;
    ev.header = ETL_WH_PERFINFO;
    ev.version = (uint8_t)c->cswitch_version;
    ev.hook = ETL_HOOK_CSWITCH;
    ev.ts = in->ts > c->q[in->cpu].last_ts ? in->ts : c->q[in->cpu].last_ts; /* in time order, as write_raw */
    ev.payload = payload;
    ev.len = n;
    st = to_epoch(c, in->cpu, epoch);
    if (st == ETL_OK) st = etl_writer_write(c->w, &ev);
    if (st == ETL_OK) {
        c->st->records_out++;
        c->st->cswitch_out++;
        c->q[in->cpu].last_ts = ev.ts;
    }
    return st;
}

/* Writes held records and switches of cpu in time order while they are earlier than `until`. */
static etl_status release(conv *c, unsigned cpu, uint64_t until, bool all)
{
    cpu_queue *q = &c->q[cpu];
    etl_status st = ETL_OK;
    while (st == ETL_OK) {
        bool has_r = q->rec_head < q->rec_n, has_s = q->sw_head < q->sw_n;
        if (!has_r && !has_s) break;
        /* Equal times: the record first (it was logged before the batch was). */
        bool take_r = has_r && (!has_s || q->rec[q->rec_head].ts <= q->sw[q->sw_head].sw.ts);
        uint64_t ts = take_r ? q->rec[q->rec_head].ts : q->sw[q->sw_head].sw.ts;
        if (!all && ts > until) break;
        if (take_r) {
            const held *h = &q->rec[q->rec_head++];
            st = write_raw(c, (uint16_t)cpu, h->ts, q->arena + h->off, h->size, h->epoch);
        } else {
            /*
             * A batch after a hole knows its CPU's switches from its first on, some earlier than the
             * CPU's last record before the hole: a switch goes out with the records it precedes (never
             * in a later epoch than the next one held), and one at the time of the CPU's last record
             * stays in its buffer, so that the span between the CPU's buffers around the hole keeps
             * its start (etl_reader_cpu_gaps).
             */
            const queued_sw *s = &q->sw[q->sw_head++];
            uint32_t e = has_r && q->rec[q->rec_head].epoch < s->epoch ? q->rec[q->rec_head].epoch : s->epoch;
            st = write_cswitch(c, &s->sw, s->sw.ts <= q->last_ts ? 0 : e);
        }
    }
    /* Reuse the space of what went out, so that a CPU that always holds something stays small. */
    if (q->rec_head == q->rec_n) {
        q->rec_head = q->rec_n = q->arena_n = 0;
    } else if (q->rec_head * 2 > q->rec_n) {
        size_t base = q->rec[q->rec_head].off, left = q->rec_n - q->rec_head;
        memmove(q->arena, q->arena + base, q->arena_n - base);
        q->arena_n -= base;
        memmove(q->rec, q->rec + q->rec_head, left * sizeof *q->rec);
        for (size_t i = 0; i < left; i++) q->rec[i].off -= base;
        q->rec_head = 0;
        q->rec_n = left;
    }
    if (q->sw_head == q->sw_n) {
        q->sw_head = q->sw_n = 0;
    } else if (q->sw_head * 2 > q->sw_n) {
        memmove(q->sw, q->sw + q->sw_head, (q->sw_n - q->sw_head) * sizeof *q->sw);
        q->sw_n -= q->sw_head;
        q->sw_head = 0;
    }
    return st;
}

static size_t queue_bytes(const cpu_queue *q) { return q->arena_cap + q->rec_cap * sizeof *q->rec; }

/* The capacity grow() would give for need. */
static size_t grown(size_t cap, size_t need)
{
    if (need <= cap) return cap;
    size_t n = cap ? cap : 64;
    while (n < need) n *= 2;
    return n;
}

/* Order given up for one CPU: what it holds goes out now, and its memory is given back. */
static etl_status overflow(conv *c, unsigned cpu)
{
    cpu_queue *q = &c->q[cpu];
    c->st->order_overflows++;
    etl_status st = release(c, cpu, 0, true);
    c->held -= queue_bytes(q);
    free(q->arena);
    free(q->rec);
    q->arena = NULL;
    q->rec = NULL;
    q->arena_n = q->arena_cap = q->rec_head = q->rec_n = q->rec_cap = 0;
    return st;
}

static etl_status hold_record(conv *c, uint16_t cpu, uint64_t ts, const uint8_t *p, size_t size)
{
    cpu_queue *q = &c->q[cpu];
    for (;;) {
        size_t more = grown(q->arena_cap, q->arena_n + size) - q->arena_cap +
                      (grown(q->rec_cap, q->rec_n + 1) - q->rec_cap) * sizeof *q->rec;
        bool cpu_full = q->arena_n + size > QUEUE_LIMIT;
        if (!cpu_full && c->held + more <= HOLD_LIMIT) break;
        /* Give up order rather than memory: the fullest queue (this CPU's when it is over its own bound) goes. */
        unsigned victim = cpu;
        for (unsigned i = 0; !cpu_full && i < c->ncpu; i++)
            if (queue_bytes(&c->q[i]) > queue_bytes(&c->q[victim])) victim = i;
        etl_status st = overflow(c, victim);
        if (st != ETL_OK) return st;
        if (victim == cpu) return write_raw(c, cpu, ts, p, size, q->epoch);
    }
    size_t before = queue_bytes(q);
    bool ok = grow((void **)&q->arena, &q->arena_cap, q->arena_n + size, 1) &&
              grow((void **)&q->rec, &q->rec_cap, q->rec_n + 1, sizeof *q->rec);
    c->held += queue_bytes(q) - before;
    if (!ok) return ETL_E_NOMEM;
    memcpy(q->arena + q->arena_n, p, size);
    q->rec[q->rec_n++] = (held){ts, q->arena_n, size, q->epoch};
    q->arena_n += size;
    return ETL_OK;
}

/*
 * Every record that goes out as bytes comes here. Making CSwitch events from
 * batches, a CPU's events later than its newest known switch wait until the
 * switches before them are known (see the file comment).
 */
static etl_status emit(conv *c, uint16_t cpu, uint64_t ts, const uint8_t *p, size_t size)
{
    /* To compact, a CPU with a batch open (it has CSwitch events) holds the events after the last scheduler record. */
    if (c->o->cswitch == ETL_CSWITCH_COMPACT && c->src[cpu] == SRC_CSWITCH) {
        cpu_queue *q = &c->q[cpu];
        bool holds = q->rec_n > q->rec_head;
        if (!holds && ts <= c->sched_ts) return write_raw(c, cpu, ts, p, size, q->epoch);
        if (!q->in_tail) {
            q->in_tail = true;
            c->tail[c->ntail++] = cpu;
        }
        return hold_record(c, cpu, ts, p, size);
    }
    if (c->o->cswitch == ETL_CSWITCH_FULL && c->src[cpu] != SRC_CSWITCH) {
        cpu_queue *q = &c->q[cpu];
        const etl_batch_expand_cpu *pc = &c->exp.cpus[cpu];
        const etl_ccswap_record *pend = etl_batch_expand_pending(pc);
        bool later = pend ? ts >= pend->time : c->expect_batches;
        if (later || q->rec_n > q->rec_head) return hold_record(c, cpu, ts, p, size);
    }
    return write_raw(c, cpu, ts, p, size, c->q[cpu].epoch);
}

/* A switch of a batch of epoch e (the pending one: of the batch it was read from). */
static etl_status queue_switch(conv *c, const etl_cswitch *sw, uint32_t e)
{
    cpu_queue *q = &c->q[sw->cpu];
    if (!grow((void **)&q->sw, &q->sw_cap, q->sw_n + 1, sizeof *q->sw)) return ETL_E_NOMEM;
    q->sw[q->sw_n++] = (queued_sw){*sw, e};
    c->st->switches_expanded++;
    return ETL_OK;
}

/* Switches of one batch that go back in time: told once, at the first. */
typedef struct back_run {
    uint32_t buf, off; /* the batch */
    uint64_t n, ts, prev;
} back_run;

static void back_tell(conv *c, const back_run *b, bool to_full)
{
    if (!b->n) return;
    char fate[96];
    if (to_full) snprintf(fate, sizeof fate, "%llu of the batch's switches from there passed over", (unsigned long long)b->n);
    else snprintf(fate, sizeof fate, "the batch copied as it is (%llu of its switches go back)", (unsigned long long)b->n);
    etl_iter_switches_back(c->it, b->buf, b->off, b->ts, b->prev, fate);
}

/*
 * The model's rule for a switch (etl_sched_takes): one earlier than its CPU's last switch taken
 * breaks the CPU's chain, and is passed over. b gathers those of one batch, to tell them once.
 */
static bool switch_goes_back(conv *c, const etl_cswitch *sw, back_run *b)
{
    sw_order *o = &c->order[sw->cpu];
    if (sw->ts >= o->last) {
        o->last = sw->ts;
        return false;
    }
    if (!b->n++) {
        b->ts = sw->ts;
        b->prev = o->last;
    }
    return true;
}

/*
 * Whether the input's reader finds cpu's records lost between its switch at ts and its record at t: a span there
 * (etl_reader_cpu_gaps begins it at the CPU's last batch's last switch before the gap).
 */
static bool lost_after(conv *c, unsigned cpu, uint64_t ts, uint64_t t)
{
    size_t n, lo = 0, hi;
    const etl_ts_span *g = etl_reader_cpu_gaps(c->rd, cpu, &n);
    for (hi = n; lo < hi;) { /* the first span that begins at ts or later */
        size_t mid = lo + (hi - lo) / 2;
        if (g[mid].lo < ts) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && g[lo].hi <= t;
}

/*
 * A compact batch. To full: its switches are queued (each CPU's in time order: one that goes back is
 * passed over, as the model does) and what is now in order released. Else the batch is copied as it is,
 * and only judged, as every reader judges it: a switch after the buffer's flush, or before its CPU's
 * switch ahead of it, is told (exit 3); the batch stays as the file has it.
 */
static etl_status expand_batch(conv *c, const etl_record *r)
{
    bool to_full = c->o->cswitch == ETL_CSWITCH_FULL;
    if (to_full) c->st->batches_in++;
    uint64_t bad_time = c->exp.stats.bad_time;
    etl_batch_expand_window(&c->exp, c->exp.t_lo, etl_iter_time_limit(c->it)); /* none after the buffer's flush */
    /* The first switch out is the CPU's pending one: its batch, the one before, is where it lies. */
    bool had = r->cpu < c->exp.ncpu && etl_batch_expand_pending(&c->exp.cpus[r->cpu]);
    back_run prev = {0}, cur = {r->buffer_index, r->offset, 0, 0, 0};
    if (had) {
        prev.buf = c->order[r->cpu].buf;
        prev.off = c->order[r->cpu].off;
    }
    etl_batch_expand_stats before = c->exp.stats;
    /* The batch was written at its header's time: none of its switches is later (kernel-events.md 6.5). */
    etl_batch_expand_begin_written(&c->exp, r->cpu, r->payload, c->bias, (uint8_t)r->version,
                                   etl_record_ts_or_none(r));
    etl_cswitch sw;
    etl_status st = ETL_OK;
    bool first = true;
    while (st == ETL_OK && etl_batch_expand_next(&c->exp, &sw) == ETL_OK) {
        if (sw.cpu >= c->ncpu) continue;
        bool pending = first && had;
        bool back = switch_goes_back(c, &sw, pending ? &prev : &cur);
        first = false;
        /* The pending switch is of its own batch's epoch, though its new thread is read from this one. */
        if (to_full && !back) {
            /*
             * The pending switch paired across such a span: the batch the gap took held the CPU's switches from it
             * on, so its new thread is not known (all ones), as a broken chain's. CSwitch events are read up to the
             * CPU's last record before the hole, after it: with the new thread of the batch after the gap, that
             * thread ran through the ReadyThreads logged there, their readier (the input's reader knows none).
             */
            if (pending && lost_after(c, sw.cpu, sw.ts, r->ts)) sw.known &= ~ETL_CSW_NEW_TID;
            st = queue_switch(c, &sw, pending ? epoch_of(c, prev.buf, prev.off) : epoch_of(c, r->buffer_index, r->offset));
        }
    }
    if (r->cpu < c->ncpu) {
        c->order[r->cpu].buf = r->buffer_index;
        c->order[r->cpu].off = r->offset;
    }
    back_tell(c, &prev, to_full);
    back_tell(c, &cur, to_full);
    if (c->exp.stats.bad_time != bad_time)
        etl_iter_bad_time(c->it, r, c->exp.walk.time, "hook 0x0525, a switch",
                          to_full ? "the batch's switches from there on dropped" : "the batch copied as it is");
    /* Its own damage (a switch after it was written, a record cut by its Size, a bad index): told as every reader
     * of batches tells it, exit 3, whether the batch is expanded or copied. */
    uint64_t told = c->dmg.bad_buffers;
    etl_batch_expand_tell(&c->exp, &before, c->rd, r->buffer_index, r->offset, &c->dmg);
    if (st != ETL_OK || !to_full) return st;
    /* Expanded, what was damaged (switches passed over or dropped, old threads unknown) is not in the output as the
     * input has it: its buffer is one whose records the output lost (convert's second writing, explore25 F3: the
     * output read clean). */
    if ((told != c->dmg.bad_buffers || c->exp.stats.bad_time != bad_time || prev.n || cur.n) &&
        r->buffer_index < c->rd->nbufs)
        etl_reader_note_passed(c->rd, &c->rd->bufs[r->buffer_index]);
    /* Every switch before this CPU's pending one is queued: earlier events may go. */
    const etl_batch_expand_cpu *pc = r->cpu < c->exp.ncpu ? &c->exp.cpus[r->cpu] : NULL;
    const etl_ccswap_record *pend = pc ? etl_batch_expand_pending(pc) : NULL;
    uint64_t until = pend ? pend->time : UINT64_MAX;
    return release(c, r->cpu, until, until == UINT64_MAX);
}

static etl_status write_batch(conv *c, const etl_ccswap_batch *b, uint64_t ts)
{
    if (!b->size) return ETL_OK;
    etl_write_event ev = {0};
    ev.cpu = b->cpu;
    ev.header = ETL_WH_PERFINFO;
    ev.version = 2; /* PERFINFO_CCSWAP_BUFFER events are version 2 on Windows 10 (spec §6.2) */
    ev.hook = ETL_HOOK_CSWITCH_BATCH;
    ev.ts = ts > c->q[b->cpu].last_ts ? ts : c->q[b->cpu].last_ts;
    ev.payload = b->data;
    ev.len = b->size;
    etl_status st = to_epoch(c, b->cpu, c->q[b->cpu].epoch); /* the switch that flushed it, or the CPU's last */
    if (st == ETL_OK) st = etl_writer_write(c->w, &ev);
    if (st == ETL_OK) {
        c->st->records_out++;
        c->st->batches_out++;
        c->q[b->cpu].last_ts = ev.ts;
    }
    return st;
}

/* To compact, a scheduler record at ts: every event held is earlier, and goes out before it. */
static etl_status sched_record(conv *c, uint64_t ts)
{
    etl_status st = ETL_OK;
    for (unsigned i = 0; st == ETL_OK && i < c->ntail; i++) {
        c->q[c->tail[i]].in_tail = false;
        st = release(c, c->tail[i], 0, true);
    }
    c->ntail = 0;
    if (ts > c->sched_ts) c->sched_ts = ts;
    return st;
}

/*
 * To compact: a CSwitch whose new thread is not known (all ones: a lost switch, as convert expands a broken chain)
 * and another switch after it on its CPU, whose old thread a batch would give it (explore26 F6: the compact output
 * gave the 50 ms the full one left unknown to a thread). Told as damage; the first writing notes where it is, and
 * the second misses a SequenceNumber right after it (its batch ended there: cut_unknown), where the output's reader
 * finds the CPU's chain broken and the span unknown.
 */
static etl_status unknown_new_thread(conv *c, cpu_queue *q)
{
    q->new_unknown = q->unknown_cut = false;
    if (q->unknown_buf >= c->rd->nbufs) return ETL_OK;
    const etl_buf_ent *b = &c->rd->bufs[q->unknown_buf];
    char where[48];
    uint64_t at = etl_buf_record_where(b, q->unknown_off, where);
    c->dmg.bad_records++;
    etl_reader_problem(c->rd, &c->dmg, ETL_E_CORRUPT, at,
                       "buffer %u at offset 0x%llx: record at +0x%x (%s, hook 0x0524): its NewThreadId is not known "
                       "(all ones: a lost switch) and a switch follows, which a compact batch would pair it with; the "
                       "output misses a SequenceNumber right after it",
                       b->index, (unsigned long long)b->file_off, q->unknown_off, where);
    if (!c->learn) return ETL_OK;
    if (!grow((void **)&c->cuts, &c->capcuts, c->ncuts + 1, sizeof *c->cuts)) return ETL_E_NOMEM;
    c->cuts[c->ncuts++] = (rec_at){q->unknown_buf, q->unknown_off};
    return ETL_OK;
}

/* A record past a hole, on a CPU whose last CSwitch has no known new thread: that switch's batch ends before the
 * record's epoch is taken, so that the switch is the last of a batch before the hole. */
static etl_status cut_unknown(conv *c, uint16_t cpu)
{
    cpu_queue *q = &c->q[cpu];
    q->unknown_cut = true;
    etl_ccswap_batch b;
    etl_status st = etl_ccswap_encoder_flush_cpu(&c->enc, cpu, &b);
    return st == ETL_OK ? write_batch(c, &b, b.last_time) : st;
}

/* Full -> compact: one switch into the encoder; a finished batch is written now. */
static etl_status encode_switch(conv *c, const etl_cswitch *sw)
{
    etl_ccswap_switch in = {0};
    in.time = sw->ts;
    in.cpu = sw->cpu;
    in.old_tid = sw->old_tid;
    in.old_priority = sw->old_priority;
    uint32_t bp = etl_idmap_get(&c->prio, sw->old_tid);
    in.old_base_priority = bp != ETL_IDMAP_EMPTY ? (int8_t)(uint8_t)bp : sw->old_priority;
    in.old_state = sw->old_state;
    in.old_wait_reason = sw->old_wait_reason;
    /* A wait time the source did not carry (all ones read back from a converted file) is none: a Lite record,
     * as the batch it came from had, never 0xFFFFFFFF clamped to a real wait of 2^17 - 1 ticks. */
    in.new_wait_time = (sw->known & ETL_CSW_NEW_WAIT_TIME) ? sw->new_wait_time : 0;
    etl_ccswap_batch b;
    etl_status st = etl_ccswap_encoder_add(&c->enc, &in, &b);
    if (st != ETL_OK) {
        c->st->switches_dropped++;
        return ETL_OK;
    }
    c->st->switches_encoded++;
    return write_batch(c, &b, sw->ts);
}

/* A mask that logs context switches says in which form: the one this conversion writes. */
static void set_switch_form(etl_groupmask *m, int cswitch)
{
    if (!etl_groupmask_test(m, ETL_PERF_CONTEXT_SWITCH)) return;
    if (cswitch == ETL_CSWITCH_COMPACT) etl_groupmask_set(m, ETL_PERF_COMPACT_CSWITCH);
    else if (cswitch == ETL_CSWITCH_FULL) etl_groupmask_clear(m, ETL_PERF_COMPACT_CSWITCH);
}

static etl_status rewrite_group_mask(conv *c, const etl_record *r, const etl_groupmask *gm)
{
    etl_groupmask m = *gm;
    set_switch_form(&m, c->o->cswitch);
    uint8_t out[256]; /* header + ext items + ETW_KERNEL_HEADER_EXTENSION */
    size_t hl = (size_t)(r->payload.p - r->data), n = 0;
    if (r->size > sizeof out) return emit(c, r->cpu, r->ts, r->data, r->size); /* keep what we cannot redo */
    memcpy(out, r->data, r->size);
    if (etl_groupmask_encode(&m, out + hl, r->payload.n, &n) != ETL_OK)
        return emit(c, r->cpu, r->ts, r->data, r->size);
    return emit(c, r->cpu, r->ts, out, r->size);
}

static int by_cpu_place(const void *a, const void *b)
{
    const lost_buf *x = a, *y = b;
    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/*
 * The input's buffers flagged EVENTS_LOST or BUFFER_LOST (the session lost events or a buffer before them), by
 * CPU and place: each goes to the writer when its CPU's first record from it or a later buffer comes (lost_reached),
 * whether that record is written, dropped or made into another, so that the output buffer holding the CPU's first
 * record from that time on is flagged; one with no record after it, on an empty buffer after the CPU's last (the
 * writer's close). A buffer never read (a processor the machine has not, a copy) has no CPU of the output: the
 * output misses its number instead (leave_holes).
 */
static etl_status lost_flags_init(conv *c)
{
    const etl_reader *rd = c->rd;
    const unsigned loss = ETL_BUFFER_FLAG_EVENTS_LOST | ETL_BUFFER_FLAG_BUFFER_LOST;
    size_t n = 0;
    for (size_t i = 0; i < rd->nbufs; i++) n += !rd->bufs[i].skip && (rd->bufs[i].flags & loss) && rd->bufs[i].cpu < c->ncpu;
    if (!n) return ETL_OK;
    c->lb = malloc(n * sizeof *c->lb);
    c->lb_head = calloc(c->ncpu, sizeof *c->lb_head);
    c->lb_end = calloc(c->ncpu, sizeof *c->lb_end);
    if (!c->lb || !c->lb_head || !c->lb_end) return ETL_E_NOMEM;
    size_t k = 0;
    for (size_t i = 0; i < rd->nbufs; i++) {
        const etl_buf_ent *b = &rd->bufs[i];
        if (!b->skip && (b->flags & loss) && b->cpu < c->ncpu) c->lb[k++] = (lost_buf){b->cpu, b->index, b->order, b->flags & loss};
    }
    qsort(c->lb, n, sizeof *c->lb, by_cpu_place);
    for (size_t i = n; i-- > 0;) c->lb_head[c->lb[i].cpu] = i;
    for (size_t i = 0; i < n; i++) c->lb_end[c->lb[i].cpu] = i + 1;
    return ETL_OK;
}

/* A record of input buffer b at ts: the flagged buffers of its CPU up to b lost events before it. */
static etl_status lost_reached(conv *c, const etl_buf_ent *b, uint64_t ts)
{
    if (!c->lb || b->cpu >= c->ncpu) return ETL_OK;
    size_t *h = &c->lb_head[b->cpu];
    etl_status st = ETL_OK;
    for (; st == ETL_OK && *h < c->lb_end[b->cpu] && c->lb[*h].order <= b->order; ++*h)
        st = etl_writer_buffer_lost(c->w, (uint16_t)b->cpu, c->lb[*h].flags, ts, epoch_of(c, c->lb[*h].index, 0));
    return st;
}

/* The end of the input: flagged buffers with no record after them on their CPU lost events after its last. */
static etl_status lost_rest(conv *c)
{
    etl_status st = ETL_OK;
    for (unsigned cpu = 0; c->lb && st == ETL_OK && cpu < c->ncpu; cpu++)
        for (size_t *h = &c->lb_head[cpu]; st == ETL_OK && *h < c->lb_end[cpu]; ++*h)
            st = etl_writer_buffer_lost(c->w, (uint16_t)cpu, c->lb[*h].flags, UINT64_MAX, epoch_of(c, c->lb[*h].index, 0));
    return st;
}

static etl_status one_record(conv *c, const etl_record *r)
{
    c->st->records_in++;
    if (r->buffer_index < c->rd->nbufs) {
        etl_status lst = lost_reached(c, &c->rd->bufs[r->buffer_index], r->ts);
        if (lst != ETL_OK) return lst;
    }
    if (r->cpu >= c->ncpu) {
        c->st->records_dropped++;
        return ETL_OK;
    }
    uint32_t e = epoch_of(c, r->buffer_index, r->offset);
    /* A hole after the CPU's last switch, whose new thread is not known (the second writing's cut): that switch's
     * batch ends before it. Without a hole the batch goes on as the input's did. */
    if (c->q[r->cpu].new_unknown && !c->q[r->cpu].unknown_cut && e > c->q[r->cpu].epoch) {
        etl_status st = cut_unknown(c, r->cpu);
        if (st != ETL_OK) return st;
    }
    if (e > c->q[r->cpu].epoch) c->q[r->cpu].epoch = e; /* a CPU's buffers are read in order: never less */
    uint16_t hook = 0;
    bool kernel = etl_record_kernel_hook(r, &hook);
    /* Only the header's group masks (group 0x00) and the thread group's events (0x05: Thread, CSwitch,
     * batches) are rewritten or read; every other record is copied as it is, undecoded. */
    etl_event ev;
    ev.kind = ETL_EVENT_OTHER;
    etl_status dst = !kernel || (hook >> 8 != 0x00 && hook >> 8 != 0x05) ? ETL_E_UNSUPPORTED : etl_event_decode(r, &ev);
    if (dst == ETL_OK && ev.kind == ETL_EVENT_THREAD && (ev.u.thread.known & ETL_THR_PRIORITIES)) {
        /* TID 0 is the idle thread. A priority not kept would give a batch another base priority: a failure. */
        if (ev.u.thread.thread_id) {
            etl_status pst = etl_idmap_put(&c->prio, ev.u.thread.thread_id, (uint8_t)ev.u.thread.base_priority);
            if (pst != ETL_OK) return pst;
        }
    }
    /* Buffer 0's logfile header and first header extension are made anew by the writer. */
    if (r->buffer_index == 0 && kernel && hook == ETL_HOOK_HEADER && !c->seen_header) {
        c->seen_header = true;
        return ETL_OK;
    }
    if (r->buffer_index == 0 && dst == ETL_OK && ev.kind == ETL_EVENT_GROUP_MASK && !c->seen_mask) {
        c->seen_mask = true;
        return ETL_OK;
    }
    if (dst == ETL_OK && ev.kind == ETL_EVENT_GROUP_MASK) return rewrite_group_mask(c, r, &ev.u.group_mask);
    if (c->o->cswitch == ETL_CSWITCH_COMPACT && kernel && etl_sched_kind_of(hook)) {
        etl_status st = sched_record(c, r->ts);
        if (st != ETL_OK) return st;
    }

    bool is_cswitch = ev.kind == ETL_EVENT_CSWITCH && dst == ETL_OK, is_batch = ev.kind == ETL_EVENT_CCSWAP_BATCH;
    if (c->o->cswitch != ETL_CSWITCH_KEEP && (is_cswitch || is_batch)) {
        uint8_t *src = &c->src[r->cpu];
        if (*src == SRC_UNKNOWN) {
            *src = is_cswitch ? SRC_CSWITCH : SRC_BATCH;
            /* A CPU with CSwitch events expands no batch: what it held can go. */
            if (*src == SRC_CSWITCH && c->o->cswitch == ETL_CSWITCH_FULL) {
                etl_status st = release(c, r->cpu, 0, true);
                if (st != ETL_OK) return st;
            }
        }
        if (*src != (is_cswitch ? SRC_CSWITCH : SRC_BATCH)) {
            c->st->duplicates_dropped++; /* the same switches in the other form */
            return ETL_OK;
        }
        if (c->o->cswitch == ETL_CSWITCH_COMPACT && is_cswitch) {
            c->st->cswitch_in++;
            /* A switch whose new thread is not known (all ones) followed by another on its CPU cannot be said in a
             * batch, whose next switch names it (a CPU's last one can: no switch follows in either form). */
            cpu_queue *q = &c->q[r->cpu];
            if (q->new_unknown) {
                etl_status ust = unknown_new_thread(c, q);
                if (ust != ETL_OK) return ust;
            }
            q->new_unknown = !(ev.u.cswitch.known & ETL_CSW_NEW_TID);
            q->unknown_buf = r->buffer_index;
            q->unknown_off = r->offset;
            return encode_switch(c, &ev.u.cswitch);
        }
        if (c->o->cswitch == ETL_CSWITCH_FULL && is_batch) return expand_batch(c, r);
    }
    if (is_batch) {
        /* Copied as it is, once judged: its damage is told (exit 3) whatever the output's form. */
        etl_status st = expand_batch(c, r);
        if (st != ETL_OK) return st;
    }
    return emit(c, r->cpu, r->ts, r->data, r->size);
}

/* The first header extension of buffer 0: the session's group masks. None found leaves *gm as it was; an
 * iterator that cannot be opened is a failure (the output would lose the session's masks). */
static etl_status find_group_mask(etl_reader *rd, etl_groupmask *gm)
{
    etl_iter *it;
    etl_status st = etl_iter_open(rd, ETL_ORDER_FILE, &it);
    if (st != ETL_OK) return st;
    etl_record r;
    etl_event ev;
    while (etl_iter_next(it, &r) == ETL_OK && r.buffer_index == 0) {
        if (etl_event_decode(&r, &ev) == ETL_OK && ev.kind == ETL_EVENT_GROUP_MASK) {
            *gm = ev.u.group_mask;
            break;
        }
    }
    etl_iter_close(it);
    return ETL_OK;
}

/* The numbers after the last buffer found that the session wrote (a file cut short; without a numbering, every
 * buffer missing is one of these). */
static uint64_t missing_tail(const etl_reader *rd)
{
    const etl_logfile_header *h = etl_reader_header(rd);
    if (!rd->nholes) return etl_reader_buffers_missing(rd);
    uint64_t last = 0;
    for (size_t i = 0; i < rd->nbufs; i++)
        if (!rd->bufs[i].skip && rd->bufs[i].seq < h->buffers_written && rd->bufs[i].seq > last)
            last = rd->bufs[i].seq;
    return h->buffers_written > last + 1 ? h->buffers_written - last - 1 : 0;
}

static uint64_t hole_size(const out_hole *h) { return h->to - h->from + 1; }

/* The buffers a reading in time order could not read, or not to their end, or one of whose records it passed over
 * or merged at its CPU's time (skip_seen: etl_reader_note_skip, etl_reader_note_passed). */
static size_t unread_count(const etl_reader *rd)
{
    size_t n = 0;
    for (size_t i = 0; rd->skip_seen && i < rd->nbufs; i++) n += rd->skip_seen[i] != 0;
    return n;
}

uint64_t etl_convert_missing(const etl_reader *rd)
{
    uint64_t n = unread_count(rd);
    if (!etl_reader_buffers_missing(rd)) return n;
    n += missing_tail(rd);
    for (size_t k = 0; k < rd->nholes; k++) n += hole_size(&(out_hole){rd->holes[k].from, rd->holes[k].to, 0});
    return n;
}

static int by_place(const void *a, const void *b)
{
    const out_hole *x = a, *y = b;
    if (x->to != y->to) return x->to < y->to ? -1 : 1;
    if (x->pos != y->pos) return x->pos < y->pos ? -1 : 1;
    return (x->from > y->from) - (x->from < y->from);
}

/*
 * The output's holes (*hv, *nh of them, by place): the input's (none when its reader finds none missing), then,
 * after a first writing, one number for each loss it found (*lost): after each buffer a reading in time order could
 * not read whole, and after each record of cuts. A buffer's CPU is known to the input's reader but cannot be written:
 * the output's reader takes it as a missing buffer's, every CPU's.
 */
static etl_status holes_of(const etl_reader *rd, const rec_at *cuts, size_t ncuts, bool after, out_hole **hv,
                           size_t *nh, size_t *lost)
{
    *hv = NULL;
    *nh = *lost = 0;
    if (after && atomic_load(&rd->skips_lost)) return ETL_E_NOMEM; /* which ones is not known */
    size_t unread = after ? unread_count(rd) : 0, n = etl_reader_buffers_missing(rd) ? rd->nholes : 0;
    if (!after) ncuts = 0;
    if (!n && !unread && !ncuts) return ETL_OK;
    out_hole *v = malloc((n + unread + ncuts) * sizeof *v);
    if (!v) return ETL_E_NOMEM;
    for (size_t k = 0; k < n; k++) v[k] = (out_hole){rd->holes[k].from, rd->holes[k].to, UINT32_MAX};
    for (size_t i = 0; unread && i < rd->nbufs; i++)
        if (rd->skip_seen[i]) v[n++] = (out_hole){rd->bufs[i].order, rd->bufs[i].order, UINT32_MAX};
    for (size_t k = 0; k < ncuts; k++)
        if (cuts[k].buf < rd->nbufs) {
            uint64_t o = rd->bufs[cuts[k].buf].order;
            v[n++] = (out_hole){o, o, cuts[k].off};
        }
    qsort(v, n, sizeof *v, by_place);
    *hv = v;
    *nh = n;
    *lost = unread + ncuts;
    return ETL_OK;
}

/* The output's missing numbers, for the writer to leave out: the holes (c->hv), then the input's tail. */
static etl_status leave_holes(conv *c)
{
    const etl_reader *rd = c->rd;
    uint64_t tail = etl_reader_buffers_missing(rd) ? missing_tail(rd) : 0;
    if (!c->nh && !tail) return ETL_OK;
    if (c->nh > UINT32_MAX - 1) return ETL_E_RANGE;
    uint64_t *sizes = malloc((c->nh ? c->nh : 1) * sizeof *sizes);
    if (!sizes) return ETL_E_NOMEM;
    for (size_t k = 0; k < c->nh; k++) sizes[k] = hole_size(&c->hv[k]);
    etl_status st = etl_writer_holes(c->w, sizes, (uint32_t)c->nh, tail);
    free(sizes);
    c->holes = st == ETL_OK && c->nh;
    return st;
}

static void cleanup(conv *c)
{
    for (unsigned i = 0; c->q && i < c->ncpu; i++) {
        free(c->q[i].arena);
        free(c->q[i].rec);
        free(c->q[i].sw);
    }
    free(c->q);
    free(c->src);
    free(c->tail);
    free(c->enc_cpus);
    free(c->exp_cpus);
    free(c->order);
    free(c->retimed);
    free(c->cuts);
    c->cuts = NULL;
    free(c->lb);
    free(c->lb_head);
    free(c->lb_end);
    c->lb = NULL;
    c->lb_head = c->lb_end = NULL;
    etl_idmap_free(&c->prio);
}

/*
 * One writing of the output into f (the temporary file, closed here), as the
 * options and c->hv say; c's tables made here and freed by cleanup.
 */
static etl_status write_output(conv *c, FILE *f, const char *out_path, etl_writer_options wo, etl_diag *diag)
{
    const etl_convert_options *o = c->o;
    etl_convert_stats *st = c->st;
    etl_reader *rd = c->rd;
    const etl_logfile_header *h = etl_reader_header(rd);
    etl_status rc;
    c->q = calloc(c->ncpu, sizeof *c->q);
    c->src = calloc(c->ncpu, 1);
    c->tail = calloc(c->ncpu, sizeof *c->tail);
    c->enc_cpus = calloc(c->ncpu, sizeof *c->enc_cpus);
    c->exp_cpus = calloc(c->ncpu, sizeof *c->exp_cpus);
    c->order = calloc(c->ncpu, sizeof *c->order);
    if (!c->q || !c->src || !c->tail || !c->enc_cpus || !c->exp_cpus || !c->order) {
        if (f) fclose(f);
        return ETL_E_NOMEM;
    }
    const etl_clock *clk = etl_reader_clock(rd);
    rc = etl_ccswap_encoder_init(&c->enc, c->enc_cpus, c->ncpu, c->bias,
                                 etl_ccswap_max_age(h->timer_resolution, clk->ticks_per_sec));
    if (rc == ETL_OK) rc = etl_batch_expand_init(&c->exp, c->exp_cpus, c->ncpu);
    uint64_t lo, hi;
    etl_reader_time_window(rd, &lo, &hi);
    if (rc == ETL_OK) etl_batch_expand_window(&c->exp, lo, hi);
    if (rc == ETL_OK) rc = etl_writer_open_stream(f, out_path, true, &wo, &c->w, diag);
    else fclose(f);
    if (rc == ETL_OK) rc = leave_holes(c);
    if (rc == ETL_OK) rc = lost_flags_init(c);
    etl_iter *it = NULL;
    if (rc == ETL_OK) rc = etl_iter_open(rd, ETL_ORDER_TIME, &it);
    c->it = it;
    etl_record r;
    uint64_t last_ts = h->header_ts;
    uint64_t total = etl_reader_file_size(rd);
    while (rc == ETL_OK && etl_iter_next(it, &r) == ETL_OK) {
        if (o->on_progress && (st->records_in & 0xFFFF) == 0) o->on_progress(o->progress_ctx, etl_iter_progress(it), total);
        rc = one_record(c, &r);
    }
    /* A record too large for the buffers: the advice must be enough, so the largest record, not the first too large
     * (failure only: no cost otherwise). */
    if (rc == ETL_E_RANGE && c->too_big)
        while (etl_iter_next(it, &r) == ETL_OK)
            if (r.size > c->too_big) c->too_big = r.size;
    /* End of trace: the open batches, the open switches, what is still held (to compact: the events after the
     * last scheduler record, which the batches precede). */
    if (rc == ETL_OK) rc = lost_rest(c);
    etl_ccswap_batch b;
    while (rc == ETL_OK && etl_ccswap_encoder_flush(&c->enc, &b) == ETL_OK) rc = write_batch(c, &b, b.last_time);
    etl_cswitch sw;
    while (rc == ETL_OK && etl_batch_expand_finish(&c->exp, &sw) == ETL_OK) {
        if (sw.cpu >= c->ncpu) continue;
        back_run br = {c->order[sw.cpu].buf, c->order[sw.cpu].off, 0, 0, 0};
        bool back = switch_goes_back(c, &sw, &br);
        back_tell(c, &br, o->cswitch == ETL_CSWITCH_FULL);
        if (!back && o->cswitch == ETL_CSWITCH_FULL) rc = queue_switch(c, &sw, epoch_of(c, br.buf, br.off));
    }
    for (unsigned i = 0; rc == ETL_OK && i < c->ncpu; i++) rc = release(c, i, 0, true);
    if (it) {
        const etl_stats *is = etl_iter_stats_get(it);
        st->input_damaged = etl_stats_damaged(is) || etl_stats_damaged(&c->dmg);
        etl_iter_close(it);
    }
    st->encoder = c->enc.stats;
    st->expander = c->exp.stats;
    /* EndTime is the newest event written (switches expanded from batches too; never a record dropped, which no
     * buffer holds): the output reads back whole. */
    for (unsigned i = 0; c->q && i < c->ncpu; i++)
        if (c->q[i].last_ts > last_ts) last_ts = c->q[i].last_ts;
    /*
     * Unless the session's stop keeps the window: the input's EndTime, as it is, when its reader trusts it and the
     * output's last flush (its newest event, or its header buffer's at t0) agrees with it as well. Events past it
     * (relogged traces have some, seconds later) were in the input's window, and are in the output's.
     */
    uint64_t end_ts = last_ts;
    if (c->w && etl_reader_end_ts(rd) &&
        etl_end_agrees(clk, etl_end_time_ts(clk, h), last_ts > clk->t0 ? last_ts : clk->t0)) {
        etl_writer_end_time_min(c->w, h->end_time);
        end_ts = etl_reader_end_ts(rd); /* no later than EndTime in FILETIME: the minimum above makes it exact */
    }
    if (c->w) {
        /* Batches made from a session whose masks did not say it logged switches: now they say so (only then). */
        if (st->batches_out && !etl_groupmask_test(&wo.group_mask, ETL_PERF_CONTEXT_SWITCH)) {
            etl_groupmask_set(&wo.group_mask, ETL_PERF_CONTEXT_SWITCH);
            set_switch_form(&wo.group_mask, o->cswitch);
            etl_writer_group_mask(c->w, &wo.group_mask);
        }
        /* The input's losses go on as the session counted them; the buffers its reader found missing are missing
         * from the output's numbering too (leave_holes), where a reader of the output finds them. */
        etl_writer_lost(c->w, h->events_lost, h->buffers_lost);
    }
    /* A write that failed (a full disk): the file and the system's reason, before the writer goes. */
    if (rc == ETL_E_IO && c->w && diag && !diag->msg[0]) etl_writer_diag(c->w, rc, diag);
    if (c->w) {
        etl_status cr = etl_writer_close(c->w, end_ts, rc == ETL_OK ? diag : NULL);
        if (rc == ETL_OK) rc = cr;
    }
    if (rc == ETL_E_RANGE && c->too_big && diag && !diag->msg[0]) {
        size_t need = (((c->too_big + 7) & ~(size_t)7) + ETL_BUFFER_HEADER_SIZE + 7) & ~(size_t)7;
        etl_diag_set(diag, rc, UINT64_MAX, "%s: a record of %zu bytes (the input's largest) does not fit a buffer of %u "
                     "bytes: a buffer size of at least %zu", out_path, c->too_big, wo.buffer_size, need < 4096 ? 4096 : need);
    }
    if (rc != ETL_OK && diag && !diag->msg[0])
        etl_diag_set(diag, rc, UINT64_MAX, "%s: %s", out_path, etl_status_str(rc));
    return rc;
}

/*
 * The output goes through base/outfile (a temporary file beside the target,
 * renamed into place on success): a failure leaves whatever was there as it
 * was, and the input is never truncated under the reader.
 */
etl_status etl_convert(const char *in_path, const char *out_path, const etl_convert_options *opts,
                       etl_convert_stats *st, etl_diag *diag)
{
    if (!in_path || !out_path || !st) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "convert: no %s", !in_path ? "input path" : !out_path
                     ? "output path" : "stats to fill");
        return ETL_E_INVALID_ARG;
    }
    memset(st, 0, sizeof *st);
    /* The caller's first sz bytes over the defaults (base/opts.h: an older, smaller struct, or none) */
    etl_convert_options oo = {sizeof oo, ETL_CSWITCH_KEEP, -1, 0, -1, NULL, NULL, NULL, NULL};
    etl_opts_take(&oo, sizeof oo, opts);
    const etl_convert_options *o = &oo;
    /* What the writer and the encoder would refuse, refused before anything is read, naming the option (a value
     * from a newer header is not taken for another). */
    const char *bad = o->cswitch < ETL_CSWITCH_KEEP || o->cswitch > ETL_CSWITCH_COMPACT ? "cswitch: not an etl_cswitch_format"
                      : o->buffer_size && (o->buffer_size < 4096 || o->buffer_size > (16u << 20) || o->buffer_size % 8)
                          ? "buffer_size: a multiple of 8 from 4096 to 16 MiB (0: as the input)"
                      : o->bias > 54 ? "bias: the StateWr bias is 1..54 (0 or less: from the OS build)"
                                     : NULL;
    if (bad) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "convert options: %s", bad);
        return ETL_E_INVALID_ARG;
    }
    etl_outfile of;
    etl_status rc = etl_outfile_check(out_path, &of, diag); /* before reading anything: a refusal costs nothing */
    if (rc != ETL_OK) return rc;
    etl_reader_options ro = {sizeof ro, o->on_diag, o->diag_ctx};
    etl_reader *rd;
    rc = etl_reader_open(in_path, &ro, &rd, diag);
    if (rc != ETL_OK) {
        free(of.target);
        return rc;
    }
    /* The descriptor read, whatever its name ("-" too): replacing it would lose the user's only copy. */
    if (of.exists && rd->map.has_id && of.st.has_id && rd->map.dev == of.st.dev && rd->map.ino == of.st.ino) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s: the output is the input file", out_path);
        free(of.target);
        etl_reader_close(rd);
        return ETL_E_INVALID_ARG;
    }
    const etl_logfile_header *h = etl_reader_header(rd);
    conv c = {0};
    etl_idmap_init(&c.prio);
    c.o = o;
    c.st = st;
    c.rd = rd;
    c.dmg.first_problem_offset = UINT64_MAX;
    c.epoch_buf = UINT32_MAX;
    c.ncpu = etl_reader_cpu_count(rd) > h->num_processors ? etl_reader_cpu_count(rd) : h->num_processors;
    if (c.ncpu == 0) c.ncpu = 1;
    if (c.ncpu > 2048) c.ncpu = 2048;
    c.bias = o->bias > 0 ? (unsigned)o->bias : etl_max_wait_reason_for_build(h->provider_version);
    c.cswitch_version = 2; /* the layout whose every byte can say "not carried" (WaitMode is a whole byte) */

    etl_writer_options wo = {0};
    wo.sz = sizeof wo;
    wo.pointer_size = h->header_type == ETL_HTYPE_SYSTEM32 ? 4 : 8;
    wo.clock_type = h->clock_type;
    wo.perf_freq = h->perf_freq;
    wo.cpu_mhz = h->cpu_speed_mhz;
    wo.ncpu = c.ncpu;
    wo.buffer_size = o->buffer_size ? o->buffer_size : h->buffer_size;
    /* A claimed 16 MiB times every CPU would be written (and held) whole: by default, at most 1 MiB. */
    if (!o->buffer_size && wo.buffer_size > CONVERT_BUFFER_MAX) wo.buffer_size = CONVERT_BUFFER_MAX;
    if (wo.buffer_size < 4096 || wo.buffer_size > (16u << 20) || wo.buffer_size % 8) wo.buffer_size = 65536; /* the input's */
    /* Every CPU's buffer is held until full: by default, as large as the writer's memory fits for all of them (a
     * --buffer-size past it is refused, naming the most). */
    if (!o->buffer_size && wo.buffer_size > etl_writer_buffer_max(c.ncpu)) wo.buffer_size = etl_writer_buffer_max(c.ncpu);
    wo.os_major = h->os_major;
    wo.os_minor = h->os_minor;
    wo.os_build = h->provider_version;
    wo.start_time = h->start_time;
    wo.boot_time = h->boot_time;
    wo.start_ts = h->header_ts;
    wo.timer_resolution = h->timer_resolution;
    bool in_compressed = (h->log_file_mode & ETL_LOG_FILE_MODE_COMPRESSED) != 0;
    wo.compress = o->compress < 0 ? in_compressed : o->compress != 0;
    /* Written in order, numbered from 1: a sequential log, whatever the input was (a circular one's numbers are not
     * judged, so the holes that tell the input's losses would go unseen). */
    wo.log_file_mode = h->log_file_mode & ~ETL_LOG_FILE_MODE_COMPRESSED;
    if (wo.log_file_mode & ETL_LOG_FILE_MODE_CIRCULAR)
        wo.log_file_mode = (wo.log_file_mode & ~ETL_LOG_FILE_MODE_CIRCULAR) | ETL_LOG_FILE_MODE_SEQUENTIAL;
    wo.logger_name = h->logger_name;
    wo.header_tid = h->header_tid;
    wo.header_pid = h->header_pid;
    /* Not the temporary name; a path longer than the header holds gives its last name (or none). */
    wo.log_file_name = out_path;
    if (strlen(out_path) >= sizeof h->log_file_name) {
        const char *base = strrchr(out_path, '/');
        wo.log_file_name = base && strlen(base + 1) < sizeof h->log_file_name ? base + 1 : "";
    }
    rc = find_group_mask(rd, &wo.group_mask);
    if (rc != ETL_OK) {
        free(of.target);
        etl_reader_close(rd);
        return rc;
    }
    c.expect_batches = etl_groupmask_test(&wo.group_mask, ETL_PERF_COMPACT_CSWITCH);
    set_switch_form(&wo.group_mask, o->cswitch); /* a session that logged switches: in the output's form */

    out_hole *hv = NULL;
    size_t lost = 0;
    rc = holes_of(rd, NULL, 0, false, &hv, &c.nh, &lost); /* the input's holes: none missing, none in the output */
    c.hv = hv;
    conv fresh = c; /* nothing made yet: a second writing starts from it */
    c.learn = true;
    FILE *f = NULL;
    if (rc == ETL_OK) rc = etl_outfile_create(&of, &f, diag);
    if (rc == ETL_OK) rc = write_output(&c, f, out_path, wo, diag);
    /*
     * Records lost from a known place of their CPU (told): buffers the reading could not read, or not to their end,
     * or one of whose records it passed over or merged at its CPU's time, and switches with no known new thread a
     * batch cannot say. A second writing leaves a number out after each, so that the output's reader finds the loss
     * there (exit 3, unknown time), as for a missing buffer, instead of a clean trace.
     */
    rec_at *cuts = c.cuts;
    size_t ncuts = c.ncuts;
    c.cuts = NULL;
    out_hole *hv2 = NULL;
    if (rc == ETL_OK) rc = holes_of(rd, cuts, ncuts, true, &hv2, &c.nh, &lost);
    if (rc == ETL_OK && lost) {
        etl_stats once = {.first_problem_offset = UINT64_MAX};
        etl_reader_problem(rd, &once, ETL_E_CORRUPT, UINT64_MAX,
                           "%zu loss%s of records (told above: buffers not read whole or out of place, switches with "
                           "no known new thread): the output is written again, missing %s SequenceNumber%s after %s, "
                           "where its readers find the loss",
                           lost, lost == 1 ? "" : "es", lost == 1 ? "a" : "as many", lost == 1 ? "" : "s",
                           lost == 1 ? "it" : "each");
        size_t nh = c.nh;
        cleanup(&c);
        c = fresh;
        c.hv = hv2;
        c.nh = nh;
        memset(st, 0, sizeof *st);
        etl_diag_fn told = rd->opts.on_diag; /* the first writing told every problem once */
        rd->opts.on_diag = NULL;
        rc = etl_outfile_reopen(&of, &f, diag);
        if (rc == ETL_OK) rc = write_output(&c, f, out_path, wo, diag);
        rd->opts.on_diag = told;
    }
    if (rc == ETL_OK) rc = etl_outfile_commit(&of, out_path, diag);
    etl_outfile_discard(&of); /* unlinks our temporary file unless it was renamed into place */
    cleanup(&c);
    free(hv);
    free(hv2);
    free(cuts);
    etl_reader_close(rd);
    return rc;
}

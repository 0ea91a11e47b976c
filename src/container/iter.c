/*
 * iter.c - the two record iterators.
 *
 * File order: one cursor over all buffers as they lie in the file.
 * Time order: one cursor per CPU over that CPU's buffers sorted by
 * SequenceNumber (events of one CPU are time-ordered, container.md §7), and a
 * tournament tree (base/ltree.h) on (merge time, cpu) that merges the cursors'
 * head records: the CPUs' records interleave finely, so the winner is replaced at
 * almost every record.
 *
 * A cursor's head record points into its current buffer (the mapped file, or the
 * cursor's own decompression scratch), so the cursor that produced the record
 * just returned is advanced lazily, on the next call, keeping the returned view
 * valid until then. Allocation happens in etl_iter_open only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "container/reader_internal.h"
#include "base/bytes.h"
#include "base/ltree.h"
#include "base/minheap.h"
#include "base/fastmem.h"

/* Total decompression scratch one iterator may hold: bounds memory on hostile files. */
#define SCRATCH_BUDGET (512u << 20)

/*
 * Finished buffers' pages are dropped in batches: one madvise per buffer costs a TLB
 * flush each (over half of `info`'s time on a VM); coalesced, one call covers megabytes.
 */
#define RELEASE_RANGES 256
#define RELEASE_BYTES (8u << 20)

typedef struct rel_range {
    uint64_t off, len;
} rel_range;

typedef struct cursor {
    const etl_buf_ent **list; /* this cursor's buffers, in reading order */
    size_t n, next_buf;
    etl_span data;            /* current buffer's bytes, cut at its data end */
    const etl_buf_ent *buf;   /* current buffer, NULL when none */
    size_t pos;               /* next record offset in data */
    uint64_t key;             /* merge time: the largest timestamp of the CPU's records so far */
    uint64_t flush;           /* the buffer's flush TimeStamp when it is a time of the session, else UINT64_MAX */
    uint64_t lo, span;        /* record order: a next record in [lo, lo + span] is taken without a closer look
                                 (lo: the buffer's last record's time; lo + span: its flush) */
    bool have_last;           /* a record of the buffer was taken: lo is its time */
    uint64_t carry;           /* time order: the CPU's latest record time before this buffer (0: none) */
    const etl_buf_ent *carry_buf; /* the buffer that record is in */
    const etl_buf_ent *loaded;    /* the buffer loaded last */
    bool bad_time_counted;    /* the current buffer is in bad_buffers for a time outside the window (or a Size) */
    uint8_t *scratch;
    size_t scratch_cap;
    bool scratch_fixed;       /* taken at open for its largest buffer (scratch_take): never given back nor grown */
    unsigned cpu;             /* time order: the CPU it reads */
    etl_record head;
} cursor;

struct etl_iter {
    etl_reader *r;
    etl_order order;
    etl_stats stats;
    cursor *cur;
    unsigned ncur;
    const etl_buf_ent **lists;
    etl_ltree lt;             /* time order: the cursors' heads */
    etl_minheap front;        /* walks: each cursor's place in the file (front_update) */
    int pending;              /* cursor whose head was returned last, -1 if none */
    uint64_t last_key;        /* merge time of the record returned last */
    uint64_t progress;
    size_t scratch_total;
    bool release;             /* drops the pages of finished buffers */
    bool walk;                /* buffers for etl_iter_next_buffer: no record framed ahead */
    int walking;              /* walk: the cursor whose buffer the caller has, -1 if none */
    int walk_slot;            /* walk over CPUs: its frontier's slot in the reader */
    bool per_cursor;          /* etl_iter_open_cpu_walks: each cursor walked on its own */
    bool quiet;               /* a read-ahead walk: another iterator tells (and counts) the same problems */
    bool keep_bad_times;      /* records outside the session window are handed out, flagged */
    uint64_t t_lo, t_span;    /* the session window (etl_reader_time_window) */
    etl_iter_keep_fn keep;    /* time order: records it refuses are never merged */
    void *keep_ctx;
    uint8_t keep_hook_bits[8192], mark_hook_bits[8192]; /* etl_iter_keep_hooks */
    const uint8_t *keep_hook; /* NULL: every record framed whole */
    const uint8_t *mark_hook;
    etl_iter_keep_kernel_fn keep_kernel; /* etl_iter_keep_kernel */
    void *keep_kernel_ctx;
    uint64_t marked_ts;
    rel_range rel[RELEASE_RANGES];
    unsigned nrel;
    uint64_t rel_bytes;
};

static int by_off(const void *a, const void *b)
{
    const rel_range *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

static void release_flush(etl_iter *it)
{
    qsort(it->rel, it->nrel, sizeof *it->rel, by_off);
    for (unsigned i = 0; i < it->nrel;) {
        uint64_t a = it->rel[i].off, b = a + it->rel[i].len;
        /* Coalesce ranges that touch or overlap (page rounding in etl_map_release keeps neighbours safe). */
        for (i++; i < it->nrel && it->rel[i].off <= b; i++)
            if (it->rel[i].off + it->rel[i].len > b) b = it->rel[i].off + it->rel[i].len;
        etl_map_release(&it->r->map, a, b - a);
    }
    it->nrel = 0;
    it->rel_bytes = 0;
}

static void release_buffer(etl_iter *it, const etl_buf_ent *b)
{
    if (!it->release) return;
    it->rel[it->nrel++] = (rel_range){b->file_off, b->disk_size};
    it->rel_bytes += b->disk_size;
    if (it->nrel == RELEASE_RANGES || it->rel_bytes >= RELEASE_BYTES) release_flush(it);
}

/* The latest time the cursor's buffer's records may have: its flush, or the session window's end. */
static uint64_t cursor_hi(const etl_iter *it, const cursor *c)
{
    return c->flush != UINT64_MAX ? c->flush : it->t_lo + it->t_span;
}

static etl_status load_buffer(etl_iter *it, cursor *c, const etl_buf_ent *b)
{
    const etl_reader *r = it->r;
    it->progress += b->disk_size;
    if (b->skip) return ETL_E_CORRUPT; /* told and counted when the file was opened */
    /* Over the session's BufferSize, etl_reader_load_buffer refuses it: no memory for it. A scratch grows here only
     * when the cursors' claims together were past the budget at open (scratch_take): a hostile file's. */
    if (b->compressed && c->scratch_cap < b->data_end && b->data_end <= etl_reader_data_cap(r)) {
        size_t want = b->data_end;
        if (it->scratch_total - c->scratch_cap + want > SCRATCH_BUDGET) {
            if (it->quiet) return ETL_E_NOMEM;
            it->stats.bad_buffers++;
            it->stats.skipped_bytes += b->data_end;
            etl_reader_problem(r, &it->stats, ETL_E_NOMEM, b->file_off,
                               "buffer %u at offset 0x%llx: claims %u decompressed bytes, over the memory budget",
                               b->index, (unsigned long long)b->file_off, b->data_end);
            return ETL_E_NOMEM;
        }
        uint8_t *s = realloc(c->scratch, want);
        if (!s) {
            if (it->quiet) return ETL_E_NOMEM;
            it->stats.bad_buffers++;
            etl_reader_problem(r, &it->stats, ETL_E_NOMEM, b->file_off,
                               "buffer %u at offset 0x%llx: out of memory for %zu bytes", b->index,
                               (unsigned long long)b->file_off, want);
            return ETL_E_NOMEM;
        }
        it->scratch_total = it->scratch_total - c->scratch_cap + want;
        c->scratch = s;
        c->scratch_cap = want;
    }
    etl_status rc = etl_reader_load_buffer(r, b, c->scratch, c->scratch_cap, &c->data, it->quiet ? NULL : &it->stats);
    if (rc != ETL_OK) {
        if (c->scratch_fixed) return rc; /* within the budget, and taken for the cursor's buffers: kept */
        /* A buffer that lied about its size must not keep its memory from the others. */
        it->scratch_total -= c->scratch_cap;
        free(c->scratch);
        c->scratch = NULL;
        c->scratch_cap = 0;
        return rc;
    }
    if (b->truncated && !b->compressed && c->data.n > b->disk_size) c->data.n = b->disk_size;
    c->buf = c->loaded = b;
    c->pos = ETL_BUFFER_HEADER_SIZE;
    c->bad_time_counted = false;
    /* A buffer is flushed after its last record is written (container.md §2): none is later. */
    c->flush = etl_buf_flush(r, b);
    uint64_t hi = cursor_hi(it, c);
    /* Time order: the CPU's records before this buffer's are no later than its first (container.md §7; judge_time). */
    c->lo = it->order == ETL_ORDER_TIME && c->carry > it->t_lo ? (c->carry < hi ? c->carry : hi) : it->t_lo;
    c->span = hi - c->lo;
    c->have_last = false;
    return ETL_OK;
}

/*
 * Time order: the CPU's records of buffer b after its record at lo were passed over (the rest of b, or b whole), up to
 * the next one read: a gap of the CPU for the scheduler (etl_reader_cpu_skipped). A read-ahead walk notes it too:
 * whichever reader of the CPU gets there first. File order knows no CPU's time.
 */
static void note_skip(etl_iter *it, const etl_buf_ent *b, uint64_t lo, uint64_t hi)
{
    if (it->order == ETL_ORDER_TIME) etl_reader_note_skip(it->r, b, lo, hi);
}

/* The latest time the records of buffer b, not loaded, may have: its flush when that is a time of the session at or
 * after lo (no record is later, container.md §2), else the session's end. */
static uint64_t buf_hi(const etl_iter *it, const etl_buf_ent *b, uint64_t lo)
{
    uint64_t f = etl_buf_flush(it->r, b);
    return f - it->t_lo <= it->t_span && f >= lo ? f : it->t_lo + it->t_span;
}

/* Time order: a record of buffer b passed over, or merged at its CPU's time, for convert to tell its output
 * (etl_reader_note_passed). */
static void note_passed(etl_iter *it, const etl_buf_ent *b)
{
    if (it->order == ETL_ORDER_TIME && !it->quiet) etl_reader_note_passed(it->r, b);
}

/*
 * A record of buffer b passed over after its CPU's record at lo, in time order: a gap of the CPU for the scheduler
 * (etl_reader_note_lost) when what it held was switches. A context switch (0x0524) or a compact batch of them
 * (0x0525) passed over for its time loses who ran from lo to the CPU's next record; one passed over for its Size
 * (whole: not the event its header says) lost the bytes it covered, whatever records they were. A ReadyThread
 * (0x0532) is not: it is logged by the CPU that readied, whose switches are all read, and its loss is the readied
 * thread's wait (not matched to a readier), not CPU time. Nor are the other records (stacks, images).
 */
static void note_lost(etl_iter *it, const etl_buf_ent *b, uint16_t hook, bool whole, uint64_t lo, uint64_t hi)
{
    /* A switch alone held no other record (a stack key's definition): its loss ends at lo for etl_stacks_lost_spans;
     * a record passed over whole may have covered any records of its buffer. */
    if (it->order == ETL_ORDER_TIME && (whole || hook == 0x0524 || hook == 0x0525))
        etl_reader_note_lost(it->r, b, lo, whole ? hi : lo);
}

/* The latest record time of the cursor's CPU so far, the record at last (had: one was taken in this buffer) included. */
static uint64_t cursor_last(const cursor *c, bool had, uint64_t last)
{
    return had && last > c->carry ? last : c->carry;
}

/* The buffer loaded last is done with: its last record taken (had) at `last` moves the CPU's latest time. */
static void cursor_carry(cursor *c, bool had, uint64_t last)
{
    /* The logfile header's buffer is written apart, at the session's start (container.md §2): its CPU's records may
     * come before it (the window reaches 60 s earlier), and are not out of order for that. */
    if (c->loaded && c->loaded->type == ETL_BUFFER_TYPE_HEADER) return;
    if (had && last > c->carry) c->carry_buf = c->loaded;
    c->carry = cursor_last(c, had, last);
}

static etl_status cursor_load(etl_iter *it, cursor *c, const etl_buf_ent *b)
{
    cursor_carry(c, c->have_last, c->lo); /* the buffer before's (have_last: until a load succeeds) */
    etl_status rc = load_buffer(it, c, b);
    if (rc != ETL_OK && !b->skip) note_skip(it, b, c->carry, buf_hi(it, b, c->carry)); /* b->skip: etl_reader_cpu_gaps's */
    return rc;
}

/* A record of buffer b at pos that cannot be framed: counted and told; the rest of the buffer is skipped. */
static void record_problem(etl_iter *it, const etl_buf_ent *b, etl_span data, size_t pos, etl_status rc)
{
    uint64_t at = b->compressed ? b->file_off : b->file_off + pos;
    uint32_t marker = 0;
    etl_ld_u32(data, pos, &marker);
    if (it->quiet) return;
    it->stats.bad_records++;
    it->stats.bad_buffers++;
    it->stats.skipped_bytes += data.n - pos;
    etl_reader_problem(it->r, &it->stats, rc, at,
                       "buffer %u at offset 0x%llx: record at +0x%zx (marker 0x%08x): %s, %zu bytes left in buffer; rest of buffer skipped",
                       b->index, (unsigned long long)b->file_off, pos, marker,
                       rc == ETL_E_TRUNCATED ? "its size runs past the buffer's data" : "not a valid trace header",
                       data.n - pos);
}

uint64_t etl_buf_record_where(const etl_buf_ent *b, size_t pos, char where[48])
{
    uint64_t at = b->compressed ? b->file_off : b->file_off + pos;
    if (b->compressed) snprintf(where, 48, "in its expanded data");
    else snprintf(where, 48, "file offset 0x%llx", (unsigned long long)at);
    return at;
}

/*
 * An impossible time ts (why it is, fate: what becomes of the record), in the record at
 * pos of the cursor's buffer: counted (its buffer once in bad_buffers) and told with the
 * record's offset.
 */
static void time_why(const etl_reader *r, etl_stats *st, const etl_buf_ent *b, size_t pos, uint64_t ts,
                     const char *what, const char *why, const char *fate)
{
    st->bad_times++;
    char t[48], secs[32], where[48];
    uint64_t at = etl_buf_record_where(b, pos, where);
    /* A time with its top bit set is no clock's: said as the ticks it is, not as seconds from a start. */
    if (ts > INT64_MAX) snprintf(t, sizeof t, "0x%llx ticks", (unsigned long long)ts);
    else snprintf(t, sizeof t, "%s s", etl_reader_secs(r, ts, secs));
    etl_reader_problem(r, st, ETL_E_RANGE, at, "buffer %u at offset 0x%llx: record at +0x%zx (%s, %s) has time %s, %s; %s",
                       b->index, (unsigned long long)b->file_off, pos, where, what, t, why, fate);
}

static void bad_time_why(etl_iter *it, cursor *c, size_t pos, uint64_t ts, const char *what, const char *why,
                         const char *fate)
{
    if (!c->bad_time_counted) it->stats.bad_buffers++;
    c->bad_time_counted = true;
    time_why(it->r, &it->stats, c->buf, pos, ts, what, why, fate);
}

void etl_buf_tell_back(const etl_reader *r, etl_stats *st, const etl_buf_ent *b, size_t pos, uint64_t ts,
                       const char *what, uint64_t carry, const etl_buf_ent *pb)
{
    /* Short: a diag holds 255 characters, and a large file's offsets and times leave little room. */
    char t[32], why[96];
    snprintf(why, sizeof why, "before CPU %u's last record (%s s, buffer %u)", b->cpu, etl_reader_secs(r, carry, t),
             pb ? pb->index : 0u);
    time_why(r, st, b, pos, ts, what, why, "taken at its CPU's time: either's CPU or SequenceNumber is wrong");
}

/* A time outside the session window (etl_reader_time_window), or after its buffer's flush. */
static void bad_time(etl_iter *it, cursor *c, size_t pos, uint64_t ts, const char *what, const char *fate)
{
    char lo[32], hi[32], why[112];
    uint64_t flush = etl_buf_flush(it->r, c->buf);
    if (ts - it->t_lo <= it->t_span && ts > flush)
        snprintf(why, sizeof why, "after its buffer was flushed (%s s)", etl_reader_secs(it->r, flush, hi));
    else if (ts > INT64_MAX)
        snprintf(why, sizeof why, "outside the session (its top bit set: no session clock reaches it)");
    else
        snprintf(why, sizeof why, "outside the session (%s s .. %s s from its start)",
                 etl_reader_secs(it->r, it->t_lo, lo), etl_reader_secs(it->r, it->t_lo + it->t_span, hi));
    bad_time_why(it, c, pos, ts, what, why, fate);
}

/* The time of the record at `at` of a buffer's bytes, when one there frames and has a time in the session. */
static bool peek_ts(const etl_iter *it, const uint8_t *p, size_t n, size_t at, uint64_t *ts)
{
    etl_krec k;
    size_t a = at, next = 0;
    etl_record r;
    if (etl_frame_kernel(p, n, &a, &k)) *ts = k.ts;
    else if (etl_record_frame((etl_span){p, n}, at, &r, &next) == ETL_OK && (r.has & ETL_REC_TS)) *ts = r.ts;
    else return false;
    return *ts - it->t_lo <= it->t_span;
}

enum { TIME_TAKE, TIME_PASS };

/*
 * A record (at pos, the next at `after`, what it is for messages) whose time ts is not in
 * its cursor's window [*lo, *lo + *span]. The events of a CPU's buffer are in time order and
 * none is later than the buffer's flush (container.md §7), so a time outside the session, one
 * after the flush that a neighbour's time confirms, or one before the record ahead of it
 * while the record after it agrees with that one, is the record's own damage: TIME_PASS,
 * told and counted. Where the buffer's time steps back for good (which record is wrong is
 * not known) it is told and counted, and the record is taken. So are a buffer whose first
 * records are all later than its flush (its TimeStamp, or its records, are not that buffer's)
 * and, in time order, a buffer whose first record is earlier than the last record of its
 * CPU's buffers before it by SequenceNumber (its CPU or its place is wrong, or that buffer's):
 * each told once, with the buffer's offset. TIME_TAKE moves the window.
 * The same judgement for every reader: the merged one, and the walks of etl_walk_next.
 */
static int judge_time(etl_iter *it, cursor *c, const uint8_t *p, size_t n, size_t pos, size_t after, uint64_t ts,
                      bool have_last, const char *what, uint64_t *lo, uint64_t *span)
{
    char t[32], why[176];
    if (ts - it->t_lo > it->t_span) {
        if (!it->quiet) bad_time(it, c, pos, ts, what, "passed over");
        return TIME_PASS;
    }
    uint64_t next = 0;
    bool have_next = peek_ts(it, p, n, after, &next);
    if (ts > c->flush) {
        if (have_last || (have_next && next <= c->flush)) {
            if (!it->quiet) bad_time(it, c, pos, ts, what, "passed over");
            return TIME_PASS;
        }
        /* Its first records are all later: the TimeStamp, or the records, are not this buffer's; read to the window's end. */
        if (!it->quiet) {
            snprintf(why, sizeof why, "later than its buffer's flush TimeStamp (%s s), as %s",
                     etl_reader_secs(it->r, c->flush, t), have_next ? "the next is" : "no record follows");
            bad_time_why(it, c, pos, ts, what, why, "taken (to the session's end): TimeStamp or records not its own");
        }
        c->flush = UINT64_MAX;
    } else if (!have_last && it->order == ETL_ORDER_TIME && ts < c->carry) {
        /* The CPU's time goes back from its buffer before (SequenceNumber order) to this one: a buffer out of place. */
        if (!it->quiet) {
            if (!c->bad_time_counted) it->stats.bad_buffers++;
            c->bad_time_counted = true;
            etl_buf_tell_back(it->r, &it->stats, c->buf, pos, ts, what, c->carry, c->carry_buf);
        }
        note_passed(it, c->buf); /* merged at its CPU's time: convert's output cannot hold it where it was */
    } else if (have_last && ts < *lo) {
        bool alone = !have_next || next >= *lo;
        if (!it->quiet) {
            snprintf(why, sizeof why, "before the record ahead of it in its buffer (%s s)", etl_reader_secs(it->r, *lo, t));
            bad_time_why(it, c, pos, ts, what, why,
                         alone ? "passed over" : "taken: the buffer's time goes back here (merged at its CPU's time)");
        }
        if (alone) return TIME_PASS;
        note_passed(it, c->buf);
    }
    *lo = ts;
    *span = cursor_hi(it, c) - ts;
    return TIME_TAKE;
}

/*
 * A record whose Size its fixed layout contradicts (ETL_REC_BAD_SIZE, etl_record_frame), at
 * pos of the cursor's buffer: told with its file offset and counted (bad_records, its buffer
 * once in bad_buffers). Framed at its layout's size, only its Size was wrong (a record starts
 * where the layout ends it, and what its Size claimed beyond is records): it is taken (its
 * size the layout's; the Size in its bytes is still the damaged one), and the records it
 * covered are read. Framed whole, it is not the event its header says: passed over (true).
 */
static bool bad_size(etl_iter *it, cursor *c, size_t pos, const etl_record *rec)
{
    unsigned claimed = etl_rd_u16(rec->data + 4);
    bool whole = rec->size == claimed;
    if (it->quiet) return whole;
    const etl_buf_ent *b = c->buf;
    it->stats.bad_records++;
    if (!c->bad_time_counted) it->stats.bad_buffers++;
    c->bad_time_counted = true;
    if (whole) it->stats.skipped_bytes += rec->size;
    size_t head = (size_t)(rec->payload.p - rec->data);
    size_t layout = head + etl_kernel_layout_size(rec->hook, rec->version, rec->pointer_size);
    char where[48];
    uint64_t at = etl_buf_record_where(b, pos, where);
    etl_reader_problem(it->r, &it->stats, ETL_E_CORRUPT, at,
                       "buffer %u at offset 0x%llx: record at +0x%zx (%s, hook 0x%04x version %u) has Size %u, %s "
                       "than its layout's %zu bytes, and %s",
                       b->index, (unsigned long long)b->file_off, pos, where, rec->hook, rec->version, claimed,
                       whole ? "far more" : "more", layout,
                       whole ? "no record starts where that ends: not that event; passed over"
                             : "framing goes on where that ends: taken at its layout's size");
    return whole;
}

/* What a record is, for a message: its hook, or its header type. */
static const char *record_what(const etl_record *rec, char out[40])
{
    if (rec->has & ETL_REC_HOOK) snprintf(out, 40, "hook 0x%04x", rec->hook);
    else snprintf(out, 40, "%s", etl_htype_name(rec->htype));
    return out;
}

/*
 * Frames the cursor's next record into out (its head; file order: the caller's record,
 * as copying a record just written stalls on store forwarding). ETL_END at the end.
 */
static etl_status cursor_advance(etl_iter *it, cursor *c, etl_record *out)
{
    for (;;) {
        if (!c->buf) {
            if (c->next_buf >= c->n) return ETL_END;
            if (cursor_load(it, c, c->list[c->next_buf++]) != ETL_OK) continue;
        }
        bool passed = false; /* judged TIME_PASS already (handed out flagged: keep_bad_times) */
        /* The merge reads a buffer of every CPU at once, more streams than the hardware prefetches: each
         * record's header was a cache miss (half of profile's time framing), now fetched 1 KiB ahead. */
        if (c->pos + 1024 < c->data.n) __builtin_prefetch(c->data.p + c->pos + 1024);
        if (it->keep_hook) {
            /* A kernel record whose hook is not wanted (or keep_kernel refuses): framed from its header, passed. */
            size_t pos = c->pos;
            etl_krec k;
            if (etl_frame_kernel(c->data.p, c->data.n, &pos, &k)) {
                if (k.ts - c->lo > c->span) {
                    char what[40];
                    snprintf(what, sizeof what, "hook 0x%04x", k.hook);
                    passed = judge_time(it, c, c->data.p, c->data.n, c->pos, pos, k.ts, c->have_last, what, &c->lo,
                                        &c->span) == TIME_PASS;
                    if (passed) note_lost(it, c->buf, k.hook, false, cursor_last(c, c->have_last, c->lo), 0);
                    if (passed && !it->keep_bad_times) {
                        note_passed(it, c->buf);
                        c->pos = pos;
                        continue;
                    }
                }
                if (!passed && (!(it->keep_hook[k.hook >> 3] & (1u << (k.hook & 7))) ||
                                (it->keep_kernel && !it->keep_kernel(it->keep_kernel_ctx, &k, c->buf->cpu)))) {
                    c->span -= k.ts - c->lo;
                    c->lo = k.ts;
                    c->have_last = true;
                    if (k.ts > c->key) c->key = k.ts;
                    if ((it->mark_hook[k.hook >> 3] & (1u << (k.hook & 7))) && k.ts > it->marked_ts)
                        it->marked_ts = k.ts;
                    c->pos = pos;
                    continue;
                }
            }
        }
        size_t next = 0;
        etl_status rc = etl_record_frame(c->data, c->pos, out, &next);
        if (rc == ETL_OK) {
            out->cpu = c->buf->cpu;
            out->buffer_index = c->buf->index;
            bool not_it = false; /* passed over for its Size: its time is not judged */
            if (__builtin_expect(out->has & ETL_REC_BAD_SIZE, 0)) passed = not_it = bad_size(it, c, c->pos, out);
            char what[40];
            if ((out->has & ETL_REC_TS) &&
                (passed || (out->ts - c->lo > c->span &&
                            judge_time(it, c, c->data.p, c->data.n, c->pos, next, out->ts, c->have_last,
                                       record_what(out, what), &c->lo, &c->span) == TIME_PASS))) {
                /* Damage: its time moves nothing (it is merged where its CPU's time stood). */
                note_lost(it, c->buf, (out->has & ETL_REC_HOOK) ? out->hook : 0, not_it,
                          cursor_last(c, c->have_last, c->lo), cursor_hi(it, c));
                c->pos = next;
                if (!it->keep_bad_times) {
                    note_passed(it, c->buf);
                    continue;
                }
                if (!not_it) out->has |= ETL_REC_BAD_TS;
            } else {
                if (out->has & ETL_REC_TS) {
                    c->span -= out->ts - c->lo;
                    c->lo = out->ts;
                    c->have_last = true;
                }
                if (out->ts > c->key) c->key = out->ts;
                c->pos = next;
            }
            if (it->keep && !it->keep(it->keep_ctx, out)) continue;
            return ETL_OK;
        }
        if (rc != ETL_END) {
            record_problem(it, c->buf, c->data, c->pos, rc);
            note_skip(it, c->buf, cursor_last(c, c->have_last, c->lo), cursor_hi(it, c));
        }
        release_buffer(it, c->buf);
        c->buf = NULL;
    }
}

static int by_cpu_seq(const void *a, const void *b)
{
    const etl_buf_ent *x = *(const etl_buf_ent *const *)a, *y = *(const etl_buf_ent *const *)b;
    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Cursor k's place in the file, for the walks: the lowest offset it still has to read
 * (a cursor walk: the buffer in hand, else the next; a walk over CPUs: the next).
 */
static void front_update(etl_iter *it, unsigned k)
{
    const cursor *c = &it->cur[k];
    const etl_buf_ent *b = it->per_cursor && c->buf ? c->buf : c->next_buf < c->n ? c->list[c->next_buf] : NULL;
    etl_minheap_set(&it->front, k, b ? b->file_off : UINT64_MAX);
}

/*
 * The tree's leaf for cursor c: (merge time, cursor), done when exhausted. The
 * merge time is the timestamp, held up to the CPU's largest so far where damage
 * makes time go back: every cursor's keys then rise, so the merged order is the
 * sort of all records on (key, CPU, position) - the same however the CPUs are
 * grouped into iterators and whatever a reader filters out before merging again.
 */
static void lt_set(etl_iter *it, unsigned c, bool ok)
{
    it->lt.leaf[c] = ok ? (etl_ltree_key){it->cur[c].key, c} : (etl_ltree_key){UINT64_MAX, ETL_LTREE_DONE};
}

/* What an iterator reads: a set of CPUs in time order, or a range of buffers in file order. */
typedef struct iter_sel {
    const uint8_t *want; /* time order: want[c] selects CPU c (c < nwant); NULL: every CPU */
    unsigned nwant;
    size_t first, count; /* file order: buffers [first, first + count) */
    bool release;        /* drop the pages of finished buffers */
    bool walk;           /* for etl_iter_next_buffer: the cursors are not primed */
    etl_iter_keep_fn keep;
    void *keep_ctx;
} iter_sel;

static bool selected(const iter_sel *sel, unsigned cpu)
{
    return !sel->want || (cpu < sel->nwant && sel->want[cpu]);
}

/* The largest decompressed size a compressed buffer of the cursor's list claims (0: none compressed). */
static size_t scratch_want(const etl_iter *it, const cursor *c)
{
    size_t cap = etl_reader_data_cap(it->r), want = 0;
    for (size_t i = 0; i < c->n; i++) {
        const etl_buf_ent *b = c->list[i];
        if (b->compressed && !b->skip && b->data_end <= cap && b->data_end > want) want = b->data_end;
    }
    return want;
}

/*
 * Each cursor's decompression scratch, taken now for the largest compressed buffer of its list: a lack of memory
 * is then the open's ETL_E_NOMEM, never a buffer that cannot be read (which would be counted and told as damage of
 * the file). Only when every cursor's fits the budget together: a hostile file's claims past it (buffers that lie
 * about their size) would otherwise keep the budget from an honest buffer of another CPU; there every scratch
 * grows as buffers come, and a lying buffer's goes back (cursor_load).
 */
static etl_status scratch_take(etl_iter *it)
{
    size_t total = 0;
    for (unsigned k = 0; k < it->ncur; k++) {
        size_t want = scratch_want(it, &it->cur[k]);
        if (want > SCRATCH_BUDGET - total) return ETL_OK;
        total += want;
    }
    for (unsigned k = 0; k < it->ncur; k++) {
        cursor *c = &it->cur[k];
        size_t want = scratch_want(it, c);
        if (!want) continue;
        c->scratch = malloc(want);
        if (!c->scratch) return ETL_E_NOMEM;
        c->scratch_cap = want;
        c->scratch_fixed = true;
        it->scratch_total += want;
    }
    return ETL_OK;
}

static etl_status iter_open(etl_reader *r, etl_order order, const iter_sel *sel, etl_iter **out)
{
    *out = NULL;
    etl_iter *it = calloc(1, sizeof *it);
    if (!it) return ETL_E_NOMEM;
    it->r = r;
    it->order = order;
    it->stats = r->stats;
    it->stats.records = 0;
    it->pending = -1;
    it->release = sel->release;
    it->walk = sel->walk;
    it->walking = -1;
    it->keep = sel->keep;
    it->keep_ctx = sel->keep_ctx;
    it->keep_bad_times = r->keep_bad_times;
    it->t_lo = r->t_lo;
    it->t_span = r->t_span;
    it->lists = malloc((r->nbufs ? r->nbufs : 1) * sizeof *it->lists);
    /* File order keeps every buffer (ranges are by index; cursor_load passes the skipped); time order, the read. */
    size_t nl = 0;
    for (size_t i = 0; it->lists && i < r->nbufs; i++)
        if (order == ETL_ORDER_FILE || !r->bufs[i].skip) it->lists[nl++] = &r->bufs[i];

    if (order == ETL_ORDER_TIME) {
        if (it->lists) qsort(it->lists, nl, sizeof *it->lists, by_cpu_seq);
        /* One cursor per selected CPU, in CPU order: the tree breaks time ties by cursor, so by CPU. */
        it->ncur = 0;
        for (unsigned c = 0; c < r->ncpu; c++) it->ncur += selected(sel, c);
    } else {
        it->ncur = 1;
    }
    it->cur = calloc(it->ncur ? it->ncur : 1, sizeof *it->cur);
    if (!etl_ltree_init(&it->lt, order == ETL_ORDER_TIME ? it->ncur : 0) || !it->lists || !it->cur) {
        etl_iter_close(it);
        return ETL_E_NOMEM;
    }
    if (order == ETL_ORDER_TIME) {
        for (unsigned c = 0, k = 0; c < r->ncpu; c++)
            if (selected(sel, c)) it->cur[k++].cpu = c;
        unsigned slot = 0, next_cpu = 0; /* cursors of CPUs without buffers stay empty */
        size_t i = 0;
        while (i < nl) {
            size_t j = i;
            unsigned cpu = it->lists[i]->cpu;
            while (j < nl && it->lists[j]->cpu == cpu) j++;
            if (selected(sel, cpu)) {
                for (; next_cpu < cpu; next_cpu++) slot += selected(sel, next_cpu);
                cursor *c = &it->cur[slot];
                c->cpu = cpu;
                c->list = it->lists + i;
                c->n = j - i;
            }
            i = j;
        }
    } else {
        size_t first = sel->first < r->nbufs ? sel->first : r->nbufs;
        it->cur[0].list = it->lists + first;
        it->cur[0].n = sel->count < r->nbufs - first ? sel->count : r->nbufs - first;
    }
    if (scratch_take(it) != ETL_OK) {
        etl_iter_close(it);
        return ETL_E_NOMEM;
    }
    if (order == ETL_ORDER_TIME && sel->walk) {
        if (!etl_minheap_init(&it->front, it->ncur)) {
            etl_iter_close(it);
            return ETL_E_NOMEM;
        }
        for (unsigned c = 0; c < it->ncur; c++) front_update(it, c);
    }
    if (order == ETL_ORDER_TIME && !sel->walk) {
        for (unsigned c = 0; c < it->ncur; c++) lt_set(it, c, cursor_advance(it, &it->cur[c], &it->cur[c].head) == ETL_OK);
        if (!etl_ltree_build(&it->lt)) {
            etl_iter_close(it);
            return ETL_E_NOMEM;
        }
    }
    *out = it;
    return ETL_OK;
}

etl_status etl_iter_open(etl_reader *r, etl_order order, etl_iter **out)
{
    *out = NULL;
    if (!r || (order != ETL_ORDER_FILE && order != ETL_ORDER_TIME)) return ETL_E_INVALID_ARG; /* not an empty trace */
    iter_sel sel = {.count = SIZE_MAX, .release = true};
    return iter_open(r, order, &sel, out);
}

etl_status etl_iter_open_cpus(etl_reader *r, const uint8_t *want, unsigned n, etl_iter_keep_fn keep, void *ctx,
                              etl_iter **out)
{
    iter_sel sel = {.want = want, .nwant = n, .release = true, .keep = keep, .keep_ctx = ctx};
    return iter_open(r, ETL_ORDER_TIME, &sel, out);
}

etl_status etl_iter_open_cpu(etl_reader *r, unsigned cpu, etl_iter_keep_fn keep, void *ctx, etl_iter **out)
{
    uint8_t *want = calloc(cpu + 1u, 1);
    if (!want) return ETL_E_NOMEM;
    want[cpu] = 1;
    /* A read-ahead cursor leaves its pages to the main one, which passes them later. */
    iter_sel sel = {.want = want, .nwant = cpu + 1u, .keep = keep, .keep_ctx = ctx};
    etl_status st = iter_open(r, ETL_ORDER_TIME, &sel, out);
    free(want);
    return st;
}

etl_status etl_iter_open_range(etl_reader *r, size_t first, size_t count, etl_iter **out)
{
    iter_sel sel = {.first = first, .count = count, .release = true, .walk = true};
    return iter_open(r, ETL_ORDER_FILE, &sel, out);
}

etl_status etl_iter_open_cpus_buffers(etl_reader *r, const uint8_t *want, unsigned n, etl_iter **out)
{
    iter_sel sel = {.want = want, .nwant = n, .release = true, .walk = true};
    etl_status st = iter_open(r, ETL_ORDER_TIME, &sel, out);
    if (st == ETL_OK) (*out)->walk_slot = etl_reader_walk_join(r);
    return st;
}

void etl_iter_pace(etl_iter *it)
{
    if (it && it->walk && !it->per_cursor) etl_reader_walk_pace(it->r, it->walk_slot);
}

etl_status etl_iter_open_cpu_walks(etl_reader *r, const uint8_t *want, unsigned n, bool release, etl_iter **out)
{
    iter_sel sel = {.want = want, .nwant = n, .release = release, .walk = true};
    etl_status st = iter_open(r, ETL_ORDER_TIME, &sel, out);
    if (st == ETL_OK) {
        (*out)->per_cursor = true;
        (*out)->quiet = !release;
        (*out)->walk_slot = release ? etl_reader_walk_join(r) : -1;
    }
    return st;
}

unsigned etl_iter_walk_count(const etl_iter *it) { return it->per_cursor ? it->ncur : 0; }

unsigned etl_iter_walk_cpu(const etl_iter *it, unsigned k, size_t *buffers)
{
    *buffers = it->cur[k].n;
    return it->cur[k].cpu;
}

etl_status etl_iter_next(etl_iter *it, etl_record *rec)
{
    if (it->order == ETL_ORDER_FILE) {
        if (cursor_advance(it, &it->cur[0], rec) != ETL_OK) return ETL_END;
        it->stats.records++;
        return ETL_OK;
    }
    const etl_record *r;
    etl_status st = etl_iter_next_ref(it, &r);
    if (st == ETL_OK) etl_copy_small(rec, r, sizeof *rec);
    return st;
}

etl_status etl_iter_next_ref(etl_iter *it, const etl_record **rec)
{
    if (it->order == ETL_ORDER_FILE) {
        etl_record *r = &it->cur[0].head;
        if (cursor_advance(it, &it->cur[0], r) != ETL_OK) return ETL_END;
        it->stats.records++;
        *rec = r;
        return ETL_OK;
    }
    if (it->pending >= 0) {
        /* The winner produced the last record: refill it and replay its path. */
        unsigned p = (unsigned)it->pending;
        lt_set(it, p, cursor_advance(it, &it->cur[p], &it->cur[p].head) == ETL_OK);
        etl_ltree_replay(&it->lt, p);
        it->pending = -1;
    }
    int top = etl_ltree_top(&it->lt);
    if (top < 0) return ETL_END;
    *rec = &it->cur[top].head;
    it->last_key = it->cur[top].key;
    it->pending = (int)top;
    it->stats.records++;
    return ETL_OK;
}

/*
 * Walk over CPUs: the next buffer is the CPU's whose next one lies first in the file,
 * so the walk goes through the file about in order and the pages it is done with can
 * be dropped in long runs: everything below the lowest offset any of its CPUs still
 * has to read (the frontier), less a margin for other walkers over other CPUs.
 */
static int walk_pick(etl_iter *it, uint64_t *frontier)
{
    *frontier = etl_minheap_min(&it->front);
    return *frontier == UINT64_MAX ? -1 : (int)etl_minheap_top(&it->front);
}

/* The pages every walker is done with are dropped (the walkers of other CPUs go about as far). */
static void walk_release(etl_iter *it, uint64_t frontier)
{
    etl_reader_walk_at(it->r, it->walk_slot, frontier);
}

/* Hands cursor k's current buffer to w. */
static void walk_give(etl_iter *it, unsigned k, etl_walk *w)
{
    cursor *c = &it->cur[k];
    w->it = it;
    w->p = c->data.p;
    w->n = c->data.n;
    w->pos = c->pos;
    w->records = 0;
    w->buffer_index = c->buf->index;
    w->ordinal = (uint32_t)(c->next_buf - 1);
    w->cpu = c->buf->cpu;
    w->cursor = k;
    w->t_lo = c->lo;
    w->t_span = c->span;
}

etl_status etl_iter_next_buffer(etl_iter *it, etl_walk *w)
{
    if (!it->walk || it->per_cursor) return ETL_E_INVALID_ARG;
    if (it->order == ETL_ORDER_FILE) {
        cursor *c = &it->cur[0];
        if (c->buf) {
            it->stats.records += w->records;
            release_buffer(it, c->buf);
            c->buf = NULL;
        }
        while (!c->buf) {
            if (c->next_buf >= c->n) return ETL_END;
            cursor_load(it, c, c->list[c->next_buf++]);
        }
        it->walking = 0;
    } else {
        if (it->walking >= 0) {
            it->stats.records += w->records;
            cursor *c = &it->cur[it->walking];
            cursor_carry(c, w->records != 0, w->t_lo); /* the walk's times, not the cursor's */
            c->buf = NULL;
            it->walking = -1;
        }
        for (;;) {
            uint64_t frontier;
            int i = walk_pick(it, &frontier);
            if (it->release) walk_release(it, frontier);
            if (i < 0) return ETL_END;
            cursor *c = &it->cur[i];
            etl_status rc = cursor_load(it, c, c->list[c->next_buf++]);
            front_update(it, (unsigned)i);
            if (rc == ETL_OK) {
                it->walking = i;
                break;
            }
        }
    }
    walk_give(it, (unsigned)it->walking, w);
    return ETL_OK;
}

etl_status etl_iter_next_buffer_of(etl_iter *it, unsigned k, etl_walk *w)
{
    if (!it->per_cursor || k >= it->ncur) return ETL_E_INVALID_ARG;
    cursor *c = &it->cur[k];
    if (c->buf) {
        it->stats.records += w->records;
        cursor_carry(c, w->records != 0, w->t_lo); /* the walk's times, not the cursor's */
        c->buf = NULL;
        front_update(it, k);
    }
    for (;;) {
        /* The pages below the lowest offset any cursor still reads are done with. */
        if (it->release) walk_release(it, etl_minheap_min(&it->front));
        if (c->next_buf >= c->n) return ETL_END;
        etl_status rc = cursor_load(it, c, c->list[c->next_buf++]);
        front_update(it, k);
        if (rc == ETL_OK) break;
    }
    walk_give(it, k, w);
    return ETL_OK;
}

/* A kernel record etl_record_frame framed, as etl_frame_kernel gives one. */
static void krec_of(const etl_record *r, etl_krec *k)
{
    k->data = r->data;
    k->payload = r->payload;
    k->ts = r->ts;
    k->size = r->size;
    k->hook = r->hook;
    k->version_word = r->version_word;
    k->htype = r->htype;
    k->pointer_size = r->pointer_size;
    k->pmc_count = r->pmc_count;
}

int etl_walk_slow(etl_walk *w, etl_krec *k)
{
    etl_iter *it = w->it;
    cursor *c = &it->cur[w->cursor];
    etl_span data = {w->p, w->n};
    for (;;) {
        size_t at = w->pos, next = 0;
        bool kernel = etl_frame_kernel(w->p, w->n, &at, k);
        etl_status rc = ETL_OK;
        if (!kernel) {
            rc = etl_record_frame(data, w->pos, &w->full, &next);
            if (rc == ETL_OK && (w->full.has & ETL_REC_BAD_SIZE)) {
                /* A Size its layout contradicts: taken at the layout's size (k: its bytes here), or passed over. */
                if (bad_size(it, c, w->pos, &w->full)) {
                    note_lost(it, c->buf, w->full.hook, true, cursor_last(c, w->records != 0, w->t_lo),
                              cursor_hi(it, c));
                    w->pos = next;
                    continue;
                }
                krec_of(&w->full, k);
                at = next;
                kernel = true;
            }
        }
        if (kernel) {
            char what[40];
            snprintf(what, sizeof what, "hook 0x%04x", k->hook);
            if (k->ts - w->t_lo <= w->t_span ||
                judge_time(it, c, w->p, w->n, w->pos, at, k->ts, w->records != 0, what, &w->t_lo, &w->t_span) ==
                    TIME_TAKE) {
                w->t_span -= k->ts - w->t_lo;
                w->t_lo = k->ts;
                w->pos = at;
                w->records++;
                return ETL_WALK_KERNEL;
            }
            note_lost(it, c->buf, k->hook, false, cursor_last(c, w->records != 0, w->t_lo), 0);
            w->pos = at;
            continue;
        }
        /*
         * A kernel record etl_frame_kernel passed over cannot be framed here either (it failed
         * the same checks), but for a Size its layout contradicts (above): what frames is
         * another header type.
         */
        if (rc != ETL_OK || (w->full.has & ETL_REC_HOOK)) {
            if (rc == ETL_OK) rc = ETL_E_CORRUPT; /* cannot happen */
            if (rc != ETL_END) {
                record_problem(it, c->buf, data, w->pos, rc);
                note_skip(it, c->buf, cursor_last(c, w->records != 0, w->t_lo), cursor_hi(it, c));
            }
            w->pos = w->n;
            return ETL_WALK_END;
        }
        etl_record *r = &w->full;
        char what[40];
        if ((r->has & ETL_REC_TS) && r->ts - w->t_lo > w->t_span &&
            judge_time(it, c, w->p, w->n, w->pos, next, r->ts, w->records != 0, record_what(r, what), &w->t_lo,
                       &w->t_span) == TIME_PASS) {
            note_lost(it, c->buf, (r->has & ETL_REC_HOOK) ? r->hook : 0, false, cursor_last(c, w->records != 0, w->t_lo),
                      0);
            w->pos = next;
            continue;
        }
        if (r->has & ETL_REC_TS) {
            w->t_span -= r->ts - w->t_lo;
            w->t_lo = r->ts;
        }
        w->pos = next;
        w->records++;
        r->cpu = w->cpu;
        r->buffer_index = w->buffer_index;
        return ETL_WALK_OTHER;
    }
}

void etl_walk_bad_time(const etl_walk *w, const uint8_t *rec, uint64_t ts, const char *what, const char *fate)
{
    etl_iter *it = w->it;
    cursor *c = &it->cur[w->cursor];
    if (!c->buf || rec < w->p || rec >= w->p + w->n) return;
    /*
     * Each such payload is one more damaged part of its buffer, apart from the buffer's records:
     * the same counts whichever walks read the records and the payloads.
     */
    bool counted = c->bad_time_counted;
    c->bad_time_counted = false;
    bad_time(it, c, (size_t)(rec - w->p), ts, what, fate);
    c->bad_time_counted = counted;
}

void etl_iter_bad_time(etl_iter *it, const etl_record *rec, uint64_t ts, const char *what, const char *fate)
{
    if (rec->buffer_index >= it->r->nbufs) return;
    /* A cursor of its own: the record's buffer, counted as one more damaged part of it. */
    cursor c = {.buf = &it->r->bufs[rec->buffer_index]};
    bad_time(it, &c, rec->offset, ts, what, fate);
}

void etl_walk_batch_back(const etl_walk *w, const uint8_t *rec)
{
    etl_iter *it = w->it;
    cursor *c = &it->cur[w->cursor];
    if (!c->buf || rec < w->p || rec >= w->p + w->n) return;
    const etl_buf_ent *b = c->buf;
    size_t pos = (size_t)(rec - w->p);
    it->stats.bad_times++;
    it->stats.bad_buffers++; /* one more damaged part of its buffer, as etl_walk_bad_time counts one */
    char where[48];
    uint64_t at = etl_buf_record_where(b, pos, where);
    etl_reader_problem(it->r, &it->stats, ETL_E_RANGE, at,
                       "buffer %u at offset 0x%llx: record at +0x%zx (%s, hook 0x0525, a compact batch): its switch "
                       "times go back before its CPU's switch ahead of them: passed over (by every reader)", b->index, (unsigned long long)b->file_off, pos, where);
}

void etl_iter_switches_back(etl_iter *it, uint32_t buffer_index, uint32_t offset, uint64_t ts, uint64_t prev,
                            const char *fate)
{
    if (buffer_index >= it->r->nbufs) return;
    cursor c = {.buf = &it->r->bufs[buffer_index]};
    char t[32], why[112];
    snprintf(why, sizeof why, "before its CPU's switch ahead of it (%s s)", etl_reader_secs(it->r, prev, t));
    bad_time_why(it, &c, offset, ts, "hook 0x0525, a switch", why, fate);
}

void etl_iter_keep_hooks(etl_iter *it, const uint8_t keep[8192], const uint8_t mark[8192])
{
    memcpy(it->keep_hook_bits, keep, sizeof it->keep_hook_bits);
    memcpy(it->mark_hook_bits, mark, sizeof it->mark_hook_bits);
    it->keep_hook = it->keep_hook_bits;
    it->mark_hook = it->mark_hook_bits;
}

void etl_iter_keep_kernel(etl_iter *it, etl_iter_keep_kernel_fn fn, void *ctx)
{
    it->keep_kernel = fn;
    it->keep_kernel_ctx = ctx;
}

uint64_t etl_iter_marked_ts(const etl_iter *it) { return it->marked_ts; }

const etl_stats *etl_iter_stats_get(const etl_iter *it) { return &it->stats; }
uint64_t etl_iter_merge_ts(const etl_iter *it) { return it->last_key; }

uint64_t etl_iter_time_limit(const etl_iter *it)
{
    const cursor *c = it->order == ETL_ORDER_TIME ? (it->pending >= 0 ? &it->cur[it->pending] : NULL) : &it->cur[0];
    return c && c->buf ? c->lo + c->span : it->t_lo + it->t_span;
}
uint64_t etl_iter_progress(const etl_iter *it) { return it->progress; }

void etl_iter_close(etl_iter *it)
{
    if (!it) return;
    if (it->nrel) release_flush(it);
    if (it->walk && it->order == ETL_ORDER_TIME && it->release) walk_release(it, UINT64_MAX);
    for (unsigned c = 0; it->cur && c < it->ncur; c++) free(it->cur[c].scratch);
    free(it->cur);
    etl_ltree_free(&it->lt);
    etl_minheap_free(&it->front);
    free(it->lists);
    free(it);
}

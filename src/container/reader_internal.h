/* reader_internal.h - the reader's buffer index, shared by reader.c and iter.c. */
#ifndef ETLKIT_SRC_CONTAINER_READER_INTERNAL_H
#define ETLKIT_SRC_CONTAINER_READER_INTERNAL_H

#include "etlkit/container.h"
#include "base/mapfile.h"
#include "base/platform.h"

/* Largest buffer etlkit accepts (decompressed); Windows caps buffers at 16 MiB. */
#define ETL_MAX_BUFFER_SIZE (64u << 20)

/* Walks over CPUs that coordinate the release of the file's pages. */
#define ETL_READER_WALKERS 32

/* SequenceNumbers from..to (inclusive) the session wrote and the file does not hold. */
typedef struct etl_seq_hole {
    uint64_t from, to;
} etl_seq_hole;

/* One buffer of the file, as indexed at open. */
typedef struct etl_buf_ent {
    uint64_t file_off;
    uint64_t seq;       /* SequenceNumber */
    uint64_t ts;        /* TimeStamp: flush time (the session end when EndTime is missing) */
    uint32_t disk_size; /* bytes present in the file (cut at EOF when truncated) */
    uint32_t data_end;  /* Offset: end of event data, in decompressed coordinates */
    uint32_t index;     /* file order */
    uint16_t cpu;
    uint16_t flags;     /* BufferFlag */
    uint16_t type;      /* BufferType */
    uint8_t compressed;
    uint8_t truncated;
    uint8_t skip;       /* damage told at open (a processor the machine has not, a copy): never read */
    uint64_t order;     /* its place among its CPU's buffers: SequenceNumber, or where an impossible one lies */
} etl_buf_ent;

struct etl_reader {
    etl_map map;
    const uint8_t *data;
    size_t size;
    etl_reader_options opts;
    etl_logfile_header hdr;
    etl_clock clock;
    int compression;       /* etl_compression of compressed buffers */
    etl_buf_ent *bufs;
    size_t nbufs;
    unsigned ncpu;
    uint32_t nominal_buffer_size; /* the logfile header's BufferSize: the stride tried first when resynchronising */
    bool uniform;          /* not a compressed log: every buffer has the nominal size */
    etl_stats stats;
    uint64_t t_lo, t_span;  /* the session window [t_lo, t_lo + t_span] (etl_reader_time_window) */
    uint64_t end_ts;        /* etl_reader_end_ts */
    uint64_t missing;       /* etl_reader_buffers_missing */
    uint64_t unindexed;     /* buffers whose header could not be read (skipped to the next one) */
    uint64_t near_budget;   /* bytes near_header may still try: a hostile file cannot make indexing quadratic */
    uint64_t missing_last;  /* the highest SequenceNumber missing (UINT64_MAX: not known) */
    etl_seq_hole *holes;    /* the SequenceNumbers missing between buffers found, ascending */
    size_t nholes;
    etl_ts_span *gaps;      /* etl_reader_cpu_gaps, every CPU's in turn: gaps_at[c] .. gaps_at[c + 1] */
    size_t *gaps_at;
    /*
     * etl_reader_cpu_skipped: where the iterators passed over part of a CPU's records (a record that
     * does not frame, the rest of its buffer lost; a buffer that cannot be loaded), found as they
     * read; a scheduler record passed over alone (etl_reader_note_lost). Made at the first one: CPU c's
     * times in skip_lo[skip_at[c] .. skip_at[c] + skip_n[c]), ascending, and in skip_hi at the same places the
     * latest time the records passed over there may have (lo itself: a switch alone, no other record), room up to skip_at[c + 1] (each of
     * its buffers', grown by note_lost); skip_seen[buffer]: ETL_SKIP_REST once a buffer's is
     * noted (every iterator over the CPU finds the same), ETL_SKIP_PASSED once the merged iterator in
     * time order passed over one of its records or merged one at its CPU's time (etl_reader_note_passed: for
     * convert, not a gap). nskips,
     * read without the lock, is 0 in a file whose records were all read; skips_lost: no memory for them
     * (every slice unknown).
     */
    etl_mutex *skip_mu;
    uint64_t *skip_lo, *skip_hi;
    size_t *skip_at, *skip_n;
    uint8_t *skip_seen;
    _Atomic size_t nskips;
    _Atomic bool skips_lost;
    bool keep_bad_times;    /* record iterators hand out records outside it, flagged */
    etl_mutex *diag_mu;     /* iterators on several threads report one problem at a time */
    /*
     * Walks over CPUs on several threads share the file's pages: each says how far it
     * got (the lowest offset it still has to read), and the pages below the lowest of
     * them are dropped (etl_reader_walk_*). A paced walker (etl_iter_pace) that gets
     * too far ahead of the slowest paced one waits for it on walk_cv, so that the pages
     * kept between them stay bounded whatever the threads' speeds.
     */
    etl_mutex *walk_mu;
    etl_cond *walk_cv;
    uint64_t walk_frontier[ETL_READER_WALKERS]; /* UINT64_MAX: slot free or walker done */
    bool walk_paced[ETL_READER_WALKERS];
    uint64_t walk_wake_at; /* the slowest paced frontier a waiter waits for (UINT64_MAX: none waits) */
    uint64_t walk_released;
};

/* A slot for a walker's frontier, -1 when all are taken (it then releases nothing). */
int etl_reader_walk_join(etl_reader *r);
/* Walker slot is at frontier (UINT64_MAX: done); drops the pages below every walker's, past 8 MiB of them. */
void etl_reader_walk_at(etl_reader *r, int slot, uint64_t frontier);
/* Walker slot waits for the slowest paced walker when it gets 16 MiB ahead of it (until done). */
void etl_reader_walk_pace(etl_reader *r, int slot);

/* Records a problem in stats (first one kept) and tells the diag callback. */
void etl_reader_problem(const etl_reader *r, etl_stats *st, etl_status status, uint64_t file_off,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/*
 * The event bytes of buffer b, header included, cut at its data end: a view into
 * the map, or decompressed into scratch (cap bytes). On failure the problem is
 * reported into st and an error returned: the caller skips the buffer. st NULL: the
 * error alone, nothing counted or told.
 */
etl_status etl_reader_load_buffer(const etl_reader *r, const etl_buf_ent *b, uint8_t *scratch,
                                  size_t cap, etl_span *out, etl_stats *st);

/*
 * A compact batch's switch (the first of those told) at ts earlier than its CPU's switch ahead of
 * it (prev, the last one taken), in the batch at offset of buffer buffer_index: the model passes
 * such a switch over (etl_sched_takes), and so does every reader that expands batches. Told with
 * the batch's file offset and its fate, counted as a bad time of the buffer (exit 3).
 */
void etl_iter_switches_back(etl_iter *it, uint32_t buffer_index, uint32_t offset, uint64_t ts, uint64_t prev,
                            const char *fate);
/*
 * Time order: buffer b's first record (at pos, what it is for the message) at ts is earlier than carry, the latest
 * record of its CPU's buffers before it by SequenceNumber (in buffer pb): told and counted in st (bad_times; the
 * caller counts the buffer). The records are taken as they are.
 */
void etl_buf_tell_back(const etl_reader *r, etl_stats *st, const etl_buf_ent *b, size_t pos, uint64_t ts,
                       const char *what, uint64_t carry, const etl_buf_ent *pb);
/* Seconds from the trace start of raw time ts, as "-7205759402.861541" into out[32] (for messages). */
const char *etl_reader_secs(const etl_reader *r, uint64_t ts, char out[32]);
/* EndTime on the session clock, exactly (-1: none, not after StartTime). */
__int128 etl_end_time_ts(const etl_clock *c, const etl_logfile_header *h);
/* Whether an EndTime at end_ts (session clock) agrees with a last buffer flush at flush_ts: not far after it. */
bool etl_end_agrees(const etl_clock *c, __int128 end_ts, __int128 flush_ts);
/*
 * Buffer b's flush TimeStamp when it is a time of the session, else UINT64_MAX: no record of
 * the buffer is later than it (container.md §7; the iterators' judge_time).
 */
static inline uint64_t etl_buf_flush(const etl_reader *r, const etl_buf_ent *b)
{
    return b->ts && b->ts - r->t_lo <= r->t_span ? b->ts : UINT64_MAX;
}
/*
 * The times of buffer b's first and last records in the session window and no later than its
 * flush, as the iterators take them (*scratch: a decompression buffer, made when needed; the
 * caller frees it); false when it holds none or cannot be read.
 */
bool etl_buf_times(const etl_reader *r, const etl_buf_ent *b, uint8_t **scratch, uint64_t *first, uint64_t *last);
/* The latest context switch a buffer tells of (any false: none): a CSwitch's time, or the last switch of a compact
 * batch (batch true), which is logged after its switches: the CPU's switches after it are in its next batch. */
typedef struct etl_buf_switch {
    uint64_t ts;
    bool any, batch;
} etl_buf_switch;
/* etl_buf_times, and the buffer's latest switch in *sw (of the records it takes). */
bool etl_buf_times_sw(const etl_reader *r, const etl_buf_ent *b, uint8_t **scratch, uint64_t *first, uint64_t *last,
                      etl_buf_switch *sw);
/*
 * The records of buffer b's CPU after its record at lo (0: before any) up to the CPU's next record read
 * were passed over (gaps.c, for etl_reader_cpu_skipped): the rest of b, or b whole; none later than hi
 * (b's flush, or the session's end when that is not known). Once per buffer.
 */
void etl_reader_note_skip(etl_reader *r, const etl_buf_ent *b, uint64_t lo, uint64_t hi);
enum { ETL_SKIP_REST = 1, ETL_SKIP_PASSED = 2 }; /* etl_reader.skip_seen's bits */
/*
 * A scheduler record of buffer b passed over alone (a context switch, a compact batch: its time, its Size), after
 * its CPU's record at lo: the CPU's switches from lo to its next record read are not known, a gap for the model as
 * etl_reader_note_skip's (etl_reader_cpu_skipped). Kept once per time; any number per buffer.
 */
void etl_reader_note_lost(etl_reader *r, const etl_buf_ent *b, uint64_t lo, uint64_t hi);
/* The merged iterator in time order passed over a record of buffer b (its time, its Size), or merged one at its CPU's
 * time (a buffer out of place): skip_seen's mark alone. */
void etl_reader_note_passed(etl_reader *r, const etl_buf_ent *b);
/* qsort's order of pointers to buffers: by CPU, then SequenceNumber place (order), then file offset. */
int etl_buf_by_cpu_order(const void *a, const void *b);
/* etl_reader_cpu_gaps's spans, found at open from the holes (gaps.c): ETL_E_NOMEM or ETL_OK. */
etl_status etl_reader_find_gaps(etl_reader *r);
/* Rewrites the TimeStamp in the header of the record at p (n bytes): ETL_E_INVALID_ARG when it has none. */
etl_status etl_record_retime(uint8_t *p, size_t n, uint64_t ts);

/*
 * The most event data a buffer can hold once decompressed: the session's
 * BufferSize (logfile header) when it is a possible one, else ETL_MAX_BUFFER_SIZE.
 * A compressed buffer whose Offset claims more is damage, not a reason to inflate.
 */
uint32_t etl_reader_data_cap(const etl_reader *r);

/*
 * Whether [p, p + n) lies in the file's own bytes, which stay where they are until
 * the reader closes (a decompressed buffer's scratch does not).
 */
static inline bool etl_reader_holds(const etl_reader *r, const void *p, size_t n)
{
    uintptr_t a = (uintptr_t)p, lo = (uintptr_t)r->data; /* integers: the pointers may be of unrelated objects */
    return a >= lo && a - lo <= r->size && n <= r->size - (a - lo);
}

/* The file offset of the record at pos of buffer b, and where it is for a message (a compressed buffer's expands). */
uint64_t etl_buf_record_where(const etl_buf_ent *b, size_t pos, char where[48]);

/*
 * The first time at from or after where records of CPU cpu were passed over (etl_reader_cpu_skipped's lo: the
 * CPU's record read last before them), UINT64_MAX when none is known yet; for the timelines' unknown spans.
 */
uint64_t etl_reader_cpu_next_skip(const etl_reader *r, unsigned cpu, uint64_t from);
/* The same, and the latest time the records passed over there may have (the skip's end, for the stack-key
 * references that may have been misled across it: etl_stacks_lost_spans) in *end. */
uint64_t etl_reader_cpu_next_skip_span(const etl_reader *r, unsigned cpu, uint64_t from, uint64_t *end);
/* How many skips are known so far: a new one may move a CPU's next unknown span. */
static inline size_t etl_reader_skip_count(const etl_reader *r) { return atomic_load_explicit(&r->nskips, memory_order_relaxed); }

/* Whether etl_reader_cpu_skipped can say yes at all (its first test): inline, for the callers that ask at every switch. */
static inline bool etl_reader_any_skipped(const etl_reader *r)
{
    return atomic_load_explicit(&r->nskips, memory_order_relaxed) || atomic_load_explicit(&r->skips_lost, memory_order_relaxed);
}

#endif

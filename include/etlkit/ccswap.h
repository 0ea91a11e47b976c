/*
 * etlkit/ccswap.h - compact context-switch batches (hook 0x0525,
 * PERFINFO_LOG_TYPE_CONTEXTSWAP_BATCH; kernel-events.md section 6).
 *
 * A batch is the event data of one 0x0525 event: a 0x58-byte PERFINFO_CCSWAP_BUFFER
 *
 *     0x00  i64   FirstTimeStamp          batch start, session clock units
 *     0x08  u32   TidTable[16]            old (non-idle) threads of this batch
 *     0x48  s8    ThreadBasePriority[16]  their base priority when first switched out
 *
 * followed by packed switch records, oldest first, with no padding. The low 2 bits
 * of each record's first byte (DataType) give its form and length:
 *
 *     0 IdleShort  2 bytes  old thread idle, TimeDelta:14 (bits 2-15)
 *     1 Idle       4 bytes  old thread idle, TimeDelta:30 (bits 2-31)
 *     2 Lite       4 bytes  Index:4 (2-5), PriInc:3 (6-8), StateWr:6 (9-14), TimeDelta:17 (15-31)
 *     3 Full       8 bytes  d0: TimeDelta:30 (2-31);
 *                           d1: Index:4 (0-3), StateWr:6 (4-9), Priority:5 (10-14), NewWaitTime:17 (15-31)
 *
 * Three layers, all zero-allocation, all safe on arbitrary bytes:
 *
 *   walker    etl_ccswap_open / etl_ccswap_next: one decoded record at a time, in
 *             the batch's own terms (form, raw delta, rebuilt time, TidTable lookup).
 *             etl_ccswap_to_cswitch turns a record into an etl_cswitch.
 *   expander  etl_batch_expand_*: a stream of batches (per CPU in time order, CPUs
 *             interleaved) into complete switches, pairing each switch with its
 *             successor on the same CPU to learn the new thread.
 *   encoder   etl_ccswap_encoder_*: switches into batches, following the kernel's
 *             rules for form selection and the five flush conditions.
 *
 * Interpretations where the spec is silent (also in the README):
 *   - "Filled" TidTable entries: the entries before the first zero TID (TID 0 is the
 *     idle thread, which never enters the table; the encoder zeroes unused entries).
 *     A Lite/Full record whose index is >= that count is corrupt: the walker returns
 *     ETL_E_CORRUPT for it with the record decoded as far as possible (old_tid 0,
 *     ETL_CCSWAP_REC_BAD_INDEX set), then continues with the next record. Its
 *     TimeDelta still counts towards the running time.
 *   - A record running past the end of the payload: ETL_E_TRUNCATED, and the batch
 *     stops there (later calls return ETL_END).
 *   - Times are rebuilt as FirstTimeStamp + the running sum of deltas, in unsigned
 *     64-bit arithmetic (wrapping, never undefined).
 *   - The 0x400-byte batch limit includes the 0x58-byte header (the encoder writes
 *     at most 0x400 bytes of event data); decoders accept any length.
 *   - "More than 500 timer ticks since the batch started": the encoder takes the
 *     limit in session clock units (see etl_ccswap_max_age for the conversion).
 */
#ifndef ETLKIT_CCSWAP_H
#define ETLKIT_CCSWAP_H

#include "etlkit/base.h"
#include "etlkit/cswitch.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ETL_CCSWAP_HEADER_SIZE 0x58u  /* sizeof(PERFINFO_CCSWAP_BUFFER) */
#define ETL_CCSWAP_TID_MAX 16u        /* PERFINFO_CCSWAP_MAX_TID */
#define ETL_CCSWAP_BATCH_MAX 0x400u   /* encoder: bytes of one batch, header included */
#define ETL_CCSWAP_ROOM_MIN 8u        /* encoder: flush when fewer bytes than this remain */
#define ETL_CCSWAP_AGE_TICKS 500u     /* encoder: "more than 500 timer ticks" */
#define ETL_CCSWAP_NO_AGE_LIMIT UINT64_MAX
#define ETL_CCSWAP_STATE_WAITING 5u   /* KTHREAD_STATE Waiting */
#define ETL_CCSWAP_STATE_MAX 9u       /* largest KTHREAD_STATE (WaitingForProcessInSwap) */
#define ETL_CCSWAP_STATE_WR_MAX 63u   /* StateWr is 6 bits */

/* Record forms: the DataType value. */
typedef enum etl_ccswap_form {
    ETL_CCSWAP_IDLE_SHORT = 0, /* PerfCSwapIdleShort, 2 bytes */
    ETL_CCSWAP_IDLE = 1,       /* PerfCSwapIdle, 4 bytes */
    ETL_CCSWAP_LITE = 2,       /* PerfCSwapLite, 4 bytes */
    ETL_CCSWAP_FULL = 3        /* PerfCSwapFull (PERFINFO_CCSWAP), 8 bytes */
} etl_ccswap_form;

/* "idle-short", "idle", "lite", "full"; "?" for anything else. Never NULL. */
ETL_API const char *etl_ccswap_form_name(unsigned form);

/* Bits of etl_ccswap_record.flags. */
enum {
    ETL_CCSWAP_REC_BAD_INDEX = 1u << 0,   /* index >= filled TidTable entries: old_tid unknown */
    ETL_CCSWAP_REC_BAD_PRIORITY = 1u << 1 /* Lite: base + increment outside 0..31: old_priority unknown */
};

/* One decoded record. Fields a form does not carry are 0. */
typedef struct etl_ccswap_record {
    uint64_t time;          /* FirstTimeStamp + deltas of records 0..this one (raw session clock) */
    size_t offset;          /* byte offset of the record in the payload (first record: 0x58) */
    uint32_t delta;         /* raw TimeDelta */
    uint32_t old_tid;       /* idle forms: 0; Lite/Full: TidTable[index] (0 when BAD_INDEX) */
    uint32_t new_wait_time; /* Full: NewThreadWaitTime (timer ticks); otherwise 0 */
    int8_t old_priority;    /* Full: the 5-bit field; Lite: ThreadBasePriority[index] + pri_inc
                               (0 when BAD_INDEX or BAD_PRIORITY); idle forms: 0 */
    uint8_t form;           /* etl_ccswap_form */
    uint8_t index;          /* Lite/Full: OldThreadIdIndex; idle forms: 0 */
    uint8_t pri_inc;        /* Lite: OldThreadPriInc; otherwise 0 */
    uint8_t state_wr;       /* Lite/Full: raw OldThreadStateWr; idle forms: 0 */
    uint8_t flags;          /* ETL_CCSWAP_REC_* */
} etl_ccswap_record;

/*
 * A pull walker over one batch payload: the event data after the PERFINFO header
 * and its extended items. It holds a view, never a copy: the payload must outlive
 * it. first_time and tid_count may be read after a successful open; the other
 * fields are private.
 */
typedef struct etl_ccswap_walker {
    uint64_t first_time; /* FirstTimeStamp, raw (the i64 reinterpreted as unsigned) */
    unsigned tid_count;  /* filled TidTable entries: index of the first zero TID, or 16 */
    const uint8_t *p;
    size_t n;
    size_t pos;
    uint64_t time;
} etl_ccswap_walker;

/*
 * Opens a batch. ETL_OK; ETL_E_TRUNCATED when the payload is shorter than the
 * 0x58-byte header (the walker is then empty: next returns ETL_END);
 * ETL_E_INVALID_ARG for a NULL walker.
 */
ETL_API etl_status etl_ccswap_open(etl_ccswap_walker *w, etl_span payload);

/*
 * The next record, oldest first.
 *   ETL_OK           *r holds the record.
 *   ETL_END          no more records.
 *   ETL_E_CORRUPT    *r holds a Lite/Full record whose index is out of the filled
 *                    TidTable (flag ETL_CCSWAP_REC_BAD_INDEX); the walk continues.
 *   ETL_E_TRUNCATED  the record at r->offset (form in r->form) runs past the end;
 *                    the walk stops (later calls: ETL_END).
 */
ETL_API etl_status etl_ccswap_next(etl_ccswap_walker *w, etl_ccswap_record *r);

/*
 * Counts the records of an opened batch as etl_ccswap_next would return them, from
 * their lengths alone: *records, the records it returns ETL_OK or ETL_E_CORRUPT for
 * (bad index), and *bad, those with a bad index plus one for a truncated last record.
 * The walker is left at the end.
 */
ETL_API void etl_ccswap_count(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad);
/* The same, and *last_time: FirstTimeStamp plus every record's TimeDelta (the last switch's time, were
 * the walk at the first record; a record cut short adds none), in the same pass. */
ETL_API void etl_ccswap_count_timed(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad, uint64_t *last_time);

/* TidTable[i] and ThreadBasePriority[i] of an opened batch (0 when i >= 16). */
ETL_API uint32_t etl_ccswap_tid(const etl_ccswap_walker *w, unsigned i);
ETL_API int8_t etl_ccswap_base_priority(const etl_ccswap_walker *w, unsigned i);

/*
 * Splits a raw StateWr under bias B (the writing kernel's MaximumWaitReason):
 * v < B: *state = Waiting (5), *wait_reason = v, returns true ("waiting");
 * else:  *state = v - B, *wait_reason = 0 (not recorded), returns false.
 */
ETL_API bool etl_ccswap_split_state(unsigned state_wr, unsigned bias, uint8_t *state,
                            uint8_t *wait_reason);

/*
 * Fills *sw from one record (everything else zeroed; NEW_TID is never set here:
 * the record does not carry it, see the expander). known bits:
 *   every form    TIME, CPU
 *   idle forms    OLD_TID (0) and OLD_PRIORITY (0): the form says the old thread
 *                 is the idle thread. STATE, WAIT_REASON, NEW_WAIT_TIME: not recorded.
 *   Lite          OLD_TID, OLD_PRIORITY, STATE, WAIT_REASON when the state is
 *                 Waiting. NEW_WAIT_TIME stays unknown: the kernel uses Lite when
 *                 the new thread waited "no more than 1 tick", so 0 or 1 (lossy).
 *   Full          as Lite, plus NEW_WAIT_TIME.
 *   BAD_INDEX     OLD_TID unknown; for Lite also OLD_PRIORITY unknown.
 *   BAD_PRIORITY  (Lite) OLD_PRIORITY unknown.
 * sw->source = ETL_CSW_SRC_COMPACT, sw->version = version (the batch event's).
 * Returns false when the StateWr gives a state > 9 under this bias (the bias is
 * probably wrong for the trace): old_state still holds v - B but STATE is clear.
 */
ETL_API bool etl_ccswap_to_cswitch(const etl_ccswap_record *r, uint16_t cpu, unsigned bias,
                           uint8_t version, etl_cswitch *sw);

/* ------------------------------------------------------------------------------ */
/* Expander: batches in, complete switches out.                                   */

/* Per-CPU state; the caller provides an array of these, one per CPU. Private. */
typedef struct etl_batch_expand_cpu {
    /*
     * rec[cur]: the switch waiting for its successor; the other: where the next record
     * is read (swapped, never copied: a copy of a record just written stalls on store
     * forwarding).
     */
    etl_ccswap_record rec[2];
    uint8_t cur;
    uint64_t last_time;        /* time of the latest record seen on this CPU */
    uint8_t bias;              /* bias and version of the pending switch's batch */
    uint8_t version;
    uint8_t has_pending;
    uint8_t has_time;
    uint8_t broken;            /* switches were lost after the pending one */
} etl_batch_expand_cpu;

/* A CPU's switch waiting for its successor, NULL when none. */
static inline const etl_ccswap_record *etl_batch_expand_pending(const etl_batch_expand_cpu *c)
{
    return c->has_pending ? &c->rec[c->cur] : NULL;
}

/* Counters. Errors never stop the expansion; they are counted here. */
typedef struct etl_batch_expand_stats {
    uint64_t batches;        /* batches begun on a valid CPU (short ones included) */
    uint64_t records;        /* records decoded (bad-index ones included) */
    uint64_t switches;       /* switches returned by next and finish */
    uint64_t open_switches;  /* of which returned by finish, NEW_TID unknown */
    uint64_t broken_chains;  /* of which returned by next with NEW_TID unknown because
                                the successor was lost or had a bad index */
    uint64_t bad_cpu;        /* batches for a CPU index >= the CPU count (ignored) */
    uint64_t short_batches;  /* payload shorter than 0x58 (ignored) */
    uint64_t bad_index;      /* records with an index out of the filled TidTable */
    uint64_t truncated;      /* records running past the end of their batch */
    uint64_t bad_state;      /* Lite/Full records whose state is > 9 under the bias */
    uint64_t time_backwards; /* a record earlier than the previous one on its CPU */
    uint64_t abandoned;      /* batches replaced by begin before they were exhausted */
    uint64_t bad_time;       /* batches stopped at a switch time outside the window (etl_batch_expand_window) */
    uint64_t after_written;  /* batches stopped at a switch time after the batch was written (its header's
                                time, etl_batch_expand_begin_written; kernel-events.md 6.5) */
    uint64_t bad_priority;   /* Lite records whose base + increment is outside 0..31 (kernel-events.md 6.3-6.4:
                                priorities are 0..31): OLD_PRIORITY unknown */
} etl_batch_expand_stats;

/*
 * The expander. stats and the last_* fields may be read at any time; the rest is
 * private. last_status is the most recent error (ETL_OK if none), with its CPU
 * and its byte offset in that batch's payload (the record's offset; for a short
 * batch, the payload length; for a bad CPU, 0).
 */
typedef struct etl_batch_expander {
    etl_batch_expand_stats stats;
    etl_status last_status;
    unsigned last_cpu;
    size_t last_offset;

    etl_batch_expand_cpu *cpus;
    size_t ncpu;
    etl_ccswap_walker walk;
    size_t cur;
    size_t drain;
    uint8_t bias;
    uint8_t version;
    bool active;
    uint64_t t_lo, t_hi;    /* switch times must lie in [t_lo, t_hi] (etl_batch_expand_window) */
    uint64_t t_written;     /* the current batch's header time (UINT64_MAX: not given) */
    uint64_t t_batch;       /* min(t_hi, t_written): the current batch's last possible switch time */
    size_t first_bad_index; /* offset of the current batch's first bad-index record */
    uint64_t batch_bad_index; /* bad-index records in the current batch */
} etl_batch_expander;

/* Sets up an expander over cpus[0..ncpu) (which it zeroes). 1 <= ncpu <= 65536. */
ETL_API etl_status etl_batch_expand_init(etl_batch_expander *x, etl_batch_expand_cpu *cpus, size_t ncpu);

/*
 * Switch times must lie in [lo, hi] (etl_reader_time_window: the session's), every time by
 * default. A batch whose FirstTimeStamp or deltas take a switch outside is damage: it
 * stops there, as a truncated batch does (counted in bad_time, last_status ETL_E_RANGE,
 * walk.time the time outside; the CPU's pending switch loses its successor). begin
 * returns ETL_E_RANGE for a FirstTimeStamp outside.
 */
ETL_API void etl_batch_expand_window(etl_batch_expander *x, uint64_t lo, uint64_t hi);

/*
 * Starts one batch of CPU cpu: payload as for etl_ccswap_open, bias as for
 * etl_ccswap_to_cswitch, version = the batch event's version (goes into each
 * switch). Batches of one CPU must come in time order; CPUs may interleave.
 *   ETL_OK
 *   ETL_E_RANGE      cpu >= ncpu: counted (bad_cpu), the batch is ignored.
 *   ETL_E_TRUNCATED  payload < 0x58: counted (short_batches), the batch is
 *                    ignored, and the CPU's pending switch loses its successor.
 *   ETL_E_RANGE      also: FirstTimeStamp outside the window (etl_batch_expand_window):
 *                    counted (bad_time), the same.
 * In every case next may be called and returns ETL_END when nothing is left.
 * Beginning a batch before the previous one is exhausted abandons the rest of the
 * previous one (counted; that CPU's pending switch loses its successor).
 */
ETL_API etl_status etl_batch_expand_begin(etl_batch_expander *x, unsigned cpu, etl_span payload,
                                  unsigned bias, uint8_t version);
/*
 * etl_batch_expand_begin for a batch whose event header's time (when the batch was written,
 * at or after its last switch: kernel-events.md 6.5) is written: a switch after it is the
 * batch's damage, and the batch stops there as at a time outside the window (counted in
 * after_written, last_status ETL_E_RANGE at the switch's offset, walk.time its time; the
 * CPU's pending switch loses its successor). ETL_E_RANGE for a FirstTimeStamp after it.
 */
ETL_API etl_status etl_batch_expand_begin_written(etl_batch_expander *x, unsigned cpu, etl_span payload,
                                          unsigned bias, uint8_t version, uint64_t written);

/*
 * The next completed switch of the current batch: ETL_OK with *sw filled, or
 * ETL_END when the batch is exhausted. The switch returned is the previous record
 * on this CPU (maybe from an earlier batch), completed with NEW_TID = the old
 * thread of the record that follows it (0 when that one is an idle form). The
 * latest record of the CPU stays pending. A truncated record ends the batch and a
 * bad-index record stays in the stream with OLD_TID unknown; in both cases the
 * switch before it gets NEW_TID unknown. Errors are counted in stats, never
 * returned.
 */
ETL_API etl_status etl_batch_expand_next(etl_batch_expander *x, etl_cswitch *sw);

/*
 * The damage the current batch added to x's counters since before (a copy of x->stats taken
 * before etl_batch_expand_begin): a switch after the batch was written, a record cut by the
 * batch's Size, a batch shorter than its header, records with a bad TidTable index. Told once
 * for the batch through r's diagnostics, with the file offset of the batch's record (at pos of
 * buffer buffer_index, header included), and counted in *dmg (bad_times or bad_records, and
 * bad_buffers), so that the command exits 3. A time outside the window (bad_time) is the
 * caller's to tell (etl_walk_bad_time), with its buffer's flush.
 */
struct etl_reader;
struct etl_stats;
ETL_API void etl_batch_expand_tell(const etl_batch_expander *x, const etl_batch_expand_stats *before,
                                   struct etl_reader *r, uint32_t buffer_index, size_t pos, struct etl_stats *dmg);

/*
 * The ids of a switch (what CPU time needs): its time, threads, state, and the known
 * bits the whole etl_cswitch would carry.
 */
typedef struct etl_cswitch_ids {
    uint64_t ts;
    uint32_t known;     /* ETL_CSW_* */
    uint32_t old_tid;   /* with ETL_CSW_OLD_TID */
    uint32_t new_tid;   /* with ETL_CSW_NEW_TID */
    uint8_t old_state;  /* with ETL_CSW_STATE */
} etl_cswitch_ids;

/*
 * The switches of the current batch that etl_batch_expand_next would return, up to
 * cap of them, as ids, in one call (no etl_cswitch built): the count, 0 when the batch
 * is exhausted. The expander's state and counters move exactly as with next.
 */
ETL_API size_t etl_batch_expand_ids(etl_batch_expander *x, etl_cswitch_ids *out, size_t cap);

/*
 * At end of trace: returns the pending switch of each CPU (in CPU order), with
 * NEW_TID unknown, one per call, then ETL_END. After ETL_END the expander is back
 * to its initial state (stats kept).
 */
ETL_API etl_status etl_batch_expand_finish(etl_batch_expander *x, etl_cswitch *sw);

/* ------------------------------------------------------------------------------ */
/* Encoder: switches in, batches out.                                             */

/* Why a batch was written (kernel-events.md 6.1, in the order listed there). */
typedef enum etl_ccswap_flush_reason {
    ETL_CCSWAP_FLUSH_NONE = 0,           /* no batch was finished */
    ETL_CCSWAP_FLUSH_TID_TABLE_FULL = 1, /* 16 threads in the table and a 17th needed */
    ETL_CCSWAP_FLUSH_AGE = 2,            /* more than max_age since FirstTimeStamp */
    ETL_CCSWAP_FLUSH_NO_ROOM = 3,        /* fewer than 8 of the 0x400 bytes remain */
    ETL_CCSWAP_FLUSH_DELTA_OVERFLOW = 4, /* the delta does not fit 30 bits */
    ETL_CCSWAP_FLUSH_END = 5             /* end of trace (etl_ccswap_encoder_flush) */
} etl_ccswap_flush_reason;

#define ETL_CCSWAP_FLUSH_REASONS 6

/* "none", "tid-table-full", "age", "no-room", "delta-overflow", "end"; "?" otherwise. */
ETL_API const char *etl_ccswap_flush_reason_name(unsigned reason);

/* One switch to encode. */
typedef struct etl_ccswap_switch {
    uint64_t time;             /* raw session clock */
    uint32_t old_tid;          /* 0 = the idle thread: idle forms, nothing else used */
    uint32_t new_wait_time;    /* NewThreadWaitTime, timer ticks */
    uint16_t cpu;
    int8_t old_priority;       /* OldThreadPriority */
    int8_t old_base_priority;  /* goes to ThreadBasePriority when the thread enters the table */
    uint8_t old_state;         /* KTHREAD_STATE */
    uint8_t old_wait_reason;   /* KWAIT_REASON, used when old_state is Waiting */
} etl_ccswap_switch;

/* A finished batch: the event data of one 0x0525 event (header and records). */
typedef struct etl_ccswap_batch {
    const uint8_t *data;   /* valid until the next call on the encoder */
    size_t size;           /* 0 when no batch was finished */
    uint64_t first_time;   /* FirstTimeStamp = time of its first switch */
    uint64_t last_time;    /* time of its last switch */
    uint32_t records;
    uint16_t cpu;
    uint8_t reason;        /* etl_ccswap_flush_reason */
} etl_ccswap_batch;

/* Per-CPU batch under construction; the caller provides one per CPU. Private. */
typedef struct etl_ccswap_encoder_cpu {
    uint8_t buf[ETL_CCSWAP_BATCH_MAX]; /* the batch bytes exactly as they will be written */
    uint32_t tid[ETL_CCSWAP_TID_MAX];
    uint64_t first_time;
    uint64_t last_time;
    uint32_t records;
    uint16_t len;                      /* bytes used, header included; 0 = no open batch */
    uint8_t tids;                      /* TidTable entries in use */
} etl_ccswap_encoder_cpu;

typedef struct etl_ccswap_encoder_stats {
    uint64_t switches;
    uint64_t batches;
    uint64_t forms[4];                          /* records per etl_ccswap_form */
    uint64_t flushes[ETL_CCSWAP_FLUSH_REASONS]; /* batches per reason */
    uint64_t priority_clamped;    /* Full record: priority outside 0..31 clamped */
    uint64_t wait_time_clamped;   /* Full record: wait time >= 2^17 clamped to 2^17-1 */
    uint64_t wait_reason_dropped; /* Waiting with a reason >= bias: written as state 5 only */
} etl_ccswap_encoder_stats;

/* The encoder. stats may be read at any time; the rest is private. */
typedef struct etl_ccswap_encoder {
    etl_ccswap_encoder_stats stats;
    etl_ccswap_encoder_cpu *cpus;
    size_t ncpu;
    uint64_t max_age;
    size_t drain;
    uint8_t bias;
    uint8_t out[ETL_CCSWAP_BATCH_MAX];
} etl_ccswap_encoder;

/*
 * 500 timer ticks in session clock units: floor(500 * timer_resolution *
 * units_per_second / 10^7), saturating. timer_resolution is TRACE_LOGFILE_HEADER.
 * TimerResolution (100 ns units, 156250 = 15.625 ms); units_per_second is PerfFreq
 * (QPC clock), 10^7 (system time) or CpuSpeedInMHz * 10^6 (cycle counter).
 * Our reading: a "timer tick" is a clock-interrupt tick, the unit of
 * NewThreadWaitTime.
 */
ETL_API uint64_t etl_ccswap_max_age(uint32_t timer_resolution, uint64_t units_per_second);

/*
 * Sets up an encoder over cpus[0..ncpu) (1 <= ncpu <= 65536). bias: the StateWr
 * bias to write with (1..54, so that every state 0..9 fits 6 bits). max_age: the
 * batch age limit in session clock units (ETL_CCSWAP_NO_AGE_LIMIT: none).
 */
ETL_API etl_status etl_ccswap_encoder_init(etl_ccswap_encoder *e, etl_ccswap_encoder_cpu *cpus,
                                   size_t ncpu, unsigned bias, uint64_t max_age);

/*
 * Adds one switch to its CPU's batch. If the switch meets a flush condition, the
 * CPU's batch is finished first and returned in *out (reason set), and the switch
 * opens the next batch (its FirstTimeStamp = the switch's time, record 0 delta 0).
 * Otherwise out->size = 0 and out->reason = NONE.
 *   ETL_OK
 *   ETL_E_INVALID_ARG  cpu >= ncpu, or time earlier than the CPU's previous switch.
 *   ETL_E_RANGE        bias + state > 63 (non-idle): the StateWr cannot hold it.
 * On error nothing changes. Form: idle old thread: IdleShort if delta < 2^14, else
 * Idle; otherwise Lite if delta < 2^17, 0 <= priority - recorded base <= 7 and
 * wait time 0; else Full, with priority clamped to 0..31 and wait time to
 * 2^17 - 1 (counted).
 */
ETL_API etl_status etl_ccswap_encoder_add(etl_ccswap_encoder *e, const etl_ccswap_switch *in,
                                  etl_ccswap_batch *out);

/*
 * End of trace: returns the open batch of each CPU (CPU order, reason END), one
 * per call, then ETL_END. Switches added afterwards open new batches.
 */
ETL_API etl_status etl_ccswap_encoder_flush(etl_ccswap_encoder *e, etl_ccswap_batch *out);
/* CPU cpu's open batch now (reason END; out->size 0: none open): its next switch opens a new one. */
ETL_API etl_status etl_ccswap_encoder_flush_cpu(etl_ccswap_encoder *e, size_t cpu, etl_ccswap_batch *out);

#ifdef __cplusplus
}
#endif
#endif

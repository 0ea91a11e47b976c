/*
 * ccswap.c - the PERFINFO_CCSWAP_BUFFER walker (hook 0x0525) and the conversion of
 * one record to an etl_cswitch. kernel-events.md 6.2-6.4; API in etlkit/ccswap.h.
 *
 * The walker is the hot loop of compact-switch decoding: per record it reads byte
 * 0, dispatches on its low 2 bits (which alone give the length), checks once that
 * the record fits, and assembles the fields with shifts from unchecked loads. No
 * allocation, no indirect calls. The header (TidTable, ThreadBasePriority) is read
 * in place from the payload, never copied.
 */
#include "etlkit/ccswap.h"
#include "base/bytes.h"
#include "base/fastmem.h"
#include "base/platform.h"
#include "kernel/ccswap_walk.h"

#define OFF_FIRST_TIME 0x00u
#define OFF_TID_TABLE CCSWAP_OFF_TID_TABLE
#define OFF_BASE_PRIORITY CCSWAP_OFF_BASE_PRIORITY

const char *etl_ccswap_form_name(unsigned form)
{
    switch (form) {
    case ETL_CCSWAP_IDLE_SHORT: return "idle-short";
    case ETL_CCSWAP_IDLE: return "idle";
    case ETL_CCSWAP_LITE: return "lite";
    case ETL_CCSWAP_FULL: return "full";
    }
    return "?";
}

etl_status etl_ccswap_open(etl_ccswap_walker *w, etl_span payload)
{
    if (!w) return ETL_E_INVALID_ARG;
    w->first_time = 0;
    w->tid_count = 0;
    w->time = 0;
    w->pos = 0;
    w->n = 0;
    w->p = NULL;
    if (!payload.p || payload.n < ETL_CCSWAP_HEADER_SIZE) return ETL_E_TRUNCATED;

    w->p = payload.p;
    w->n = payload.n;
    w->pos = ETL_CCSWAP_HEADER_SIZE;
    w->first_time = etl_rd_u64(payload.p + OFF_FIRST_TIME);
    w->time = w->first_time;
    /* The table fills from index 0 and TID 0 (idle) never enters it: the first zero
     * entry ends the filled part. */
    unsigned k = 0;
    while (k < ETL_CCSWAP_TID_MAX && etl_rd_u32(payload.p + OFF_TID_TABLE + 4 * k) != 0) k++;
    w->tid_count = k;
    return ETL_OK;
}

uint32_t etl_ccswap_tid(const etl_ccswap_walker *w, unsigned i)
{
    if (!w || !w->p || i >= ETL_CCSWAP_TID_MAX) return 0;
    return etl_rd_u32(w->p + OFF_TID_TABLE + 4 * i);
}

int8_t etl_ccswap_base_priority(const etl_ccswap_walker *w, unsigned i)
{
    if (!w || !w->p || i >= ETL_CCSWAP_TID_MAX) return 0;
    return (int8_t)w->p[OFF_BASE_PRIORITY + i];
}

etl_status etl_ccswap_next(etl_ccswap_walker *w, etl_ccswap_record *r) { return ccswap_step(w, r); }

/*
 * Counting 8 bytes at a time. Every record starts at an even offset from the first (the
 * lengths are 2, 4, 4, 8), so 8 bytes hold 4 places (16-bit lanes) a record may start at,
 * and their 4 forms (8 bits) say, for each place the first record of those bytes starts at,
 * which places start records and where the next 8 bytes' first record starts. The chain of
 * dependent loads is then one short table load per 8 bytes, not one byte load per record.
 * chunk_step[entry][forms] = starts (bits 0-3) | next entry << 4, then for the time (the sum
 * of the deltas), which lanes hold them: a record at lane i has its delta in bits 2-15 of
 * lane i (IdleShort; Idle and Full: plus lane i+1 << 14), or bit 15 of lane i plus lane i+1
 * << 1 (Lite): lanes whose bits 2-15 count << 8, bit 15 << 12, lane i+1 << 14: << 16, << 1: << 20.
 */
static uint32_t chunk_step[4][256];
static uint64_t lanes4[16]; /* 4 bits to 4 lanes of 16 */
static etl_once_flag chunk_once = ETL_ONCE_INIT;

static void chunk_init(void)
{
    for (unsigned m = 0; m < 16; m++)
        for (unsigned i = 0; i < 4; i++)
            if (m >> i & 1u) lanes4[m] |= 0xFFFFull << (16 * i);
    for (unsigned e = 0; e < 4; e++)
        for (unsigned forms = 0; forms < 256; forms++) {
            unsigned at = e, starts = 0, lo2 = 0, lo15 = 0, hi14 = 0, hi1 = 0;
            while (at < 4) {
                unsigned form = (forms >> (2 * at)) & 3u;
                starts |= 1u << at;
                if (form == ETL_CCSWAP_LITE) lo15 |= 1u << at, hi1 |= 1u << at;
                else lo2 |= 1u << at;
                if (form == ETL_CCSWAP_IDLE || form == ETL_CCSWAP_FULL) hi14 |= 1u << at;
                at += 1u << ((form + 1) >> 1); /* 1, 2, 2, 4 places */
            }
            chunk_step[e][forms] = starts | (at - 4) << 4 | lo2 << 8 | lo15 << 12 | hi14 << 16 | hi1 << 20;
        }
}

/* The bits set in v < 16 (a table in a constant: popcount is a call without -mpopcnt). */
static inline unsigned bits4(unsigned v) { return (unsigned)(0x4332322132212110ull >> (4 * v)) & 0xFu; }

/* The places of the 8 bytes x (then y) whose record, were one to start there, has a bad index. */
static inline unsigned chunk_bad(uint64_t x, uint64_t y, unsigned filled)
{
    unsigned m = 0;
    for (unsigned i = 0; i < 4; i++) {
        unsigned b = (unsigned)(x >> (16 * i)) & 0xFFu, form = b & 3u;
        unsigned full = (unsigned)(i < 2 ? x >> (16 * i + 32) : y >> (16 * (i - 2))) & 0xFu;
        unsigned idx = form == ETL_CCSWAP_LITE ? (b >> 2) & 0xFu : full;
        m |= (unsigned)((form >= ETL_CCSWAP_LITE) & (idx >= filled)) << i;
    }
    return m;
}

/* v's four 16-bit lanes added into two 32-bit ones: a batch (at most 64 KiB) cannot carry them over. */
static inline uint64_t pair_lanes(uint64_t v)
{
    return (v & 0x0000FFFF0000FFFFull) + ((v >> 16) & 0x0000FFFF0000FFFFull);
}

/* A record's delta from its first 4 bytes d: bits 2-15 (IdleShort), 2-31 (Idle, Full's first word), 15-31 (Lite). */
static inline uint32_t delta_of(uint32_t d)
{
    unsigned form = d & 3u;
    uint32_t mask = form == ETL_CCSWAP_IDLE_SHORT ? 0xFFFFu : 0xFFFFFFFFu;
    return (d & mask) >> (form == ETL_CCSWAP_LITE ? 15 : 2);
}

/* etl_ccswap_count, and with timed the time of the last switch into *last (a record cut short adds none). */
static inline void count(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad, bool timed, uint64_t *last)
{
    static const uint8_t len[4] = {2, 4, 4, 8};
    const uint8_t *p = w->p;
    size_t pos = w->pos, n = w->n;
    uint64_t nrec = 0, nbad = 0, t = w->first_time;
    unsigned filled = w->tid_count;
    /* While 16 bytes remain, a record starting in the first 8 ends in them, its index too. */
    if (pos <= n && n - pos >= 16) {
        etl_call_once(&chunk_once, chunk_init);
        unsigned e = 0;
        uint64_t lo = 0, hi14 = 0, hi1 = 0; /* two 32-bit lanes each */
        while (n - pos >= 16) {
            uint64_t x = etl_rd_u64(p + pos), y = etl_rd_u64(p + pos + 8);
            unsigned forms = (unsigned)((x & 3u) | ((x >> 14) & 0xCu) | ((x >> 28) & 0x30u) | ((x >> 42) & 0xC0u));
            uint32_t c = chunk_step[e][forms];
            unsigned starts = c & 0xFu;
            nrec += bits4(starts);
            if (filled < 16) nbad += bits4(starts & chunk_bad(x, y, filled));
            if (timed) {
                uint64_t z = (x >> 16) | y << 48; /* lane i: x's lane i+1 */
                lo += pair_lanes(((x & lanes4[(c >> 8) & 0xFu]) >> 2 & 0x3FFF3FFF3FFF3FFFull) |
                                 ((x & lanes4[(c >> 12) & 0xFu]) >> 15 & 0x0001000100010001ull));
                hi14 += pair_lanes(z & lanes4[(c >> 16) & 0xFu]);
                hi1 += pair_lanes(z & lanes4[(c >> 20) & 0xFu]);
            }
            e = (c >> 4) & 3u;
            pos += 8;
        }
        if (timed)
            t += (lo & 0xFFFFFFFFu) + (lo >> 32) + (((hi14 & 0xFFFFFFFFu) + (hi14 >> 32)) << 14) +
                 (((hi1 & 0xFFFFFFFFu) + (hi1 >> 32)) << 1);
        pos += 2 * e;
    }
    /* While 8 bytes remain no record can be truncated: no branch on the form. */
    while (n - pos >= 8) {
        unsigned b = p[pos], form = b & 3u;
        /* Forms come in any order: select the index with a mask, not a mispredicted branch. */
        unsigned lite = 0u - (form == ETL_CCSWAP_LITE);
        unsigned idx = (((b >> 2) & lite) | (p[pos + 4] & ~lite)) & 0xFu;
        nbad += (form >= ETL_CCSWAP_LITE) & (idx >= filled);
        nrec++;
        if (timed) t += delta_of(etl_rd_u32(p + pos));
        pos += 2u << ((form + 1) >> 1); /* 2, 4, 4, 8: arithmetic is shorter than a load on this chain */
    }
    while (pos < n) {
        unsigned form = p[pos] & 3u;
        if (n - pos < len[form]) {
            nbad++; /* truncated: etl_ccswap_next stops the batch there */
            break;
        }
        /* Lite: index in bits 2-5 of the first byte; Full: bits 0-3 of the second word. */
        if (form == ETL_CCSWAP_LITE) nbad += ((p[pos] >> 2) & 0xFu) >= filled;
        else if (form == ETL_CCSWAP_FULL) nbad += (p[pos + 4] & 0xFu) >= filled;
        nrec++;
        if (timed) t += delta_of(len[form] == 2 ? etl_rd_u16(p + pos) : etl_rd_u32(p + pos));
        pos += len[form];
    }
    w->pos = pos;
    *records = nrec;
    *bad = nbad;
    if (timed) *last = t;
}

void etl_ccswap_count(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad)
{
    count(w, records, bad, false, NULL);
}

void etl_ccswap_count_timed(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad, uint64_t *last_time)
{
    count(w, records, bad, true, last_time);
}

bool etl_ccswap_split_state(unsigned state_wr, unsigned bias, uint8_t *state,
                            uint8_t *wait_reason)
{
    if (state_wr < bias) {
        *state = ETL_CCSWAP_STATE_WAITING;
        *wait_reason = (uint8_t)state_wr;
        return true;
    }
    *state = (uint8_t)(state_wr - bias);
    *wait_reason = 0;
    return false;
}

bool etl_ccswap_to_cswitch(const etl_ccswap_record *r, uint16_t cpu, unsigned bias,
                           uint8_t version, etl_cswitch *sw)
{
    return ccswap_to_cswitch(r, cpu, bias, version, sw);
}

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
 * lengths are 2, 4, 4, 8), so 8 bytes hold 4 places a record may start at, and their 4
 * forms (8 bits) say, for each place the first record of those bytes starts at, which
 * places start records and where the next 8 bytes' first record starts: chunk_step[entry]
 * [forms] = starts (bits 0-3) | next entry << 4. The chain of dependent loads is then one
 * short table load per 8 bytes, not one byte load per record.
 */
static uint8_t chunk_step[4][256];
static etl_once_flag chunk_once = ETL_ONCE_INIT;

static void chunk_init(void)
{
    for (unsigned e = 0; e < 4; e++)
        for (unsigned forms = 0; forms < 256; forms++) {
            unsigned at = e, starts = 0;
            while (at < 4) {
                starts |= 1u << at;
                at += 1u << ((((forms >> (2 * at)) & 3u) + 1) >> 1); /* 1, 2, 2, 4 places */
            }
            chunk_step[e][forms] = (uint8_t)(starts | (at - 4) << 4);
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

void etl_ccswap_count(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad)
{
    static const uint8_t len[4] = {2, 4, 4, 8};
    const uint8_t *p = w->p;
    size_t pos = w->pos, n = w->n;
    uint64_t nrec = 0, nbad = 0;
    unsigned filled = w->tid_count;
    /* While 16 bytes remain, a record starting in the first 8 ends in them, its index too. */
    if (pos <= n && n - pos >= 16) {
        etl_call_once(&chunk_once, chunk_init);
        unsigned e = 0;
        while (n - pos >= 16) {
            uint64_t x = etl_rd_u64(p + pos), y = etl_rd_u64(p + pos + 8);
            unsigned forms = (unsigned)((x & 3u) | ((x >> 14) & 0xCu) | ((x >> 28) & 0x30u) | ((x >> 42) & 0xC0u));
            unsigned t = chunk_step[e][forms], starts = t & 0xFu;
            nrec += bits4(starts);
            if (filled < 16) nbad += bits4(starts & chunk_bad(x, y, filled));
            e = t >> 4;
            pos += 8;
        }
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
        pos += len[form];
    }
    w->pos = pos;
    *records = nrec;
    *bad = nbad;
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

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

#define OFF_FIRST_TIME 0x00u
#define OFF_TID_TABLE 0x08u
#define OFF_BASE_PRIORITY 0x48u

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

/* Old thread of a Lite/Full record: fills old_tid (and reports a bad index). */
static inline etl_status old_thread(const etl_ccswap_walker *w, etl_ccswap_record *r,
                                    unsigned idx)
{
    r->index = (uint8_t)idx;
    if (idx < w->tid_count) {
        r->old_tid = etl_rd_u32(w->p + OFF_TID_TABLE + 4 * idx);
        return ETL_OK;
    }
    r->old_tid = 0;
    r->flags = ETL_CCSWAP_REC_BAD_INDEX;
    return ETL_E_CORRUPT;
}

etl_status etl_ccswap_next(etl_ccswap_walker *w, etl_ccswap_record *r)
{
    size_t pos = w->pos;
    size_t left = w->n - pos;
    if (left == 0) return ETL_END;

    const uint8_t *q = w->p + pos;
    unsigned form = q[0] & 3u;
    etl_status st = ETL_OK;
    uint32_t delta;

    r->offset = pos;
    r->form = (uint8_t)form;
    r->flags = 0;
    r->new_wait_time = 0;
    r->pri_inc = 0;

    switch (form) {
    case ETL_CCSWAP_IDLE_SHORT:
        if (left < 2) goto truncated;
        delta = (uint32_t)etl_rd_u16(q) >> 2;
        r->old_tid = 0;
        r->old_priority = 0;
        r->index = 0;
        r->state_wr = 0;
        pos += 2;
        break;
    case ETL_CCSWAP_IDLE:
        if (left < 4) goto truncated;
        delta = etl_rd_u32(q) >> 2;
        r->old_tid = 0;
        r->old_priority = 0;
        r->index = 0;
        r->state_wr = 0;
        pos += 4;
        break;
    case ETL_CCSWAP_LITE: {
        if (left < 4) goto truncated;
        uint32_t d = etl_rd_u32(q);
        unsigned idx = (d >> 2) & 0xFu;
        unsigned inc = (d >> 6) & 0x7u;
        delta = d >> 15;
        r->pri_inc = (uint8_t)inc;
        r->state_wr = (uint8_t)((d >> 9) & 0x3Fu);
        st = old_thread(w, r, idx);
        /* base + inc in unsigned 8-bit arithmetic, so a hostile base wraps instead of
         * overflowing a signed type. */
        r->old_priority = st == ETL_OK
            ? (int8_t)(uint8_t)(w->p[OFF_BASE_PRIORITY + idx] + inc)
            : 0;
        pos += 4;
        break;
    }
    default: { /* ETL_CCSWAP_FULL */
        if (left < 8) goto truncated;
        uint32_t d1 = etl_rd_u32(q + 4);
        delta = etl_rd_u32(q) >> 2;
        r->state_wr = (uint8_t)((d1 >> 4) & 0x3Fu);
        r->old_priority = (int8_t)((d1 >> 10) & 0x1Fu);
        r->new_wait_time = d1 >> 15;
        st = old_thread(w, r, d1 & 0xFu);
        pos += 8;
        break;
    }
    }

    w->time += delta;
    w->pos = pos;
    r->delta = delta;
    r->time = w->time;
    return st;

truncated:
    /* Report what is known, then stop the batch. */
    r->delta = 0;
    r->time = w->time;
    r->old_tid = 0;
    r->old_priority = 0;
    r->index = 0;
    r->state_wr = 0;
    w->n = pos;
    return ETL_E_TRUNCATED;
}

void etl_ccswap_count(etl_ccswap_walker *w, uint64_t *records, uint64_t *bad)
{
    static const uint8_t len[4] = {2, 4, 4, 8};
    const uint8_t *p = w->p;
    size_t pos = w->pos, n = w->n;
    uint64_t nrec = 0, nbad = 0;
    unsigned filled = w->tid_count;
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
    etl_zero_small(sw, sizeof *sw); /* a memset of it compiles to rep stos: most of this function */
    sw->ts = r->time;
    sw->cpu = cpu;
    sw->version = version;
    sw->source = ETL_CSW_SRC_COMPACT;
    sw->old_tid = r->old_tid;
    sw->old_priority = r->old_priority;
    uint32_t known = ETL_CSW_TIME | ETL_CSW_CPU;

    if (r->form <= ETL_CCSWAP_IDLE) {
        sw->known = known | ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY;
        return true;
    }

    bool ok = true;
    if (!(r->flags & ETL_CCSWAP_REC_BAD_INDEX))
        known |= ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY;
    else if (r->form == ETL_CCSWAP_FULL)
        known |= ETL_CSW_OLD_PRIORITY; /* carried in the record itself */

    if (etl_ccswap_split_state(r->state_wr, bias, &sw->old_state, &sw->old_wait_reason))
        known |= ETL_CSW_STATE | ETL_CSW_WAIT_REASON;
    else if (sw->old_state <= ETL_CCSWAP_STATE_MAX)
        known |= ETL_CSW_STATE;
    else
        ok = false;

    if (r->form == ETL_CCSWAP_FULL) {
        sw->new_wait_time = r->new_wait_time;
        known |= ETL_CSW_NEW_WAIT_TIME;
    }
    sw->known = known;
    return ok;
}

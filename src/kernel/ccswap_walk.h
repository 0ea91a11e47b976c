/*
 * ccswap_walk.h - one step of the PERFINFO_CCSWAP_BUFFER walker, inline: the public
 * etl_ccswap_next (ccswap.c) and the expander's loop (ccswap_expand.c) share it, so
 * that expanding a batch costs no call a record.
 */
#ifndef ETLKIT_KERNEL_CCSWAP_WALK_H
#define ETLKIT_KERNEL_CCSWAP_WALK_H

#include "etlkit/ccswap.h"
#include "base/bytes.h"
#include "base/fastmem.h"

#define CCSWAP_OFF_TID_TABLE 0x08u
#define CCSWAP_OFF_BASE_PRIORITY 0x48u

/* Old thread of a Lite/Full record: fills old_tid (and reports a bad index). */
static inline etl_status ccswap_old_thread(const etl_ccswap_walker *w, etl_ccswap_record *r,
                                    unsigned idx)
{
    r->index = (uint8_t)idx;
    if (idx < w->tid_count) {
        r->old_tid = etl_rd_u32(w->p + CCSWAP_OFF_TID_TABLE + 4 * idx);
        return ETL_OK;
    }
    r->old_tid = 0;
    r->flags = ETL_CCSWAP_REC_BAD_INDEX;
    return ETL_E_CORRUPT;
}

static inline etl_status ccswap_step(etl_ccswap_walker *w, etl_ccswap_record *r)
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
        st = ccswap_old_thread(w, r, idx);
        /* A priority is 0..31 (Full's field is 5 bits): a base + inc outside is no priority, and is not
         * wrapped into one. */
        int pri = st == ETL_OK ? (int)(int8_t)w->p[CCSWAP_OFF_BASE_PRIORITY + idx] + (int)inc : 0;
        if (pri < 0 || pri > 31) {
            r->flags |= ETL_CCSWAP_REC_BAD_PRIORITY;
            pri = 0;
        }
        r->old_priority = (int8_t)pri;
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
        st = ccswap_old_thread(w, r, d1 & 0xFu);
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

/* etl_ccswap_to_cswitch, inline. */
/*
 * The known bits (ETL_CSW_*) of the switch a record is, with its state and wait reason
 * split under bias; *ok false for a state out of range. NEW_TID is the expander's.
 */
static inline uint32_t ccswap_known(const etl_ccswap_record *r, unsigned bias, uint8_t *state, uint8_t *reason,
                                    bool *ok)
{
    uint32_t known = ETL_CSW_TIME | ETL_CSW_CPU;
    *ok = true;
    *state = 0;
    *reason = 0;
    if (r->form <= ETL_CCSWAP_IDLE) return known | ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY;
    if (!(r->flags & ETL_CCSWAP_REC_BAD_INDEX))
        known |= ETL_CSW_OLD_TID | (r->flags & ETL_CCSWAP_REC_BAD_PRIORITY ? 0u : ETL_CSW_OLD_PRIORITY);
    else if (r->form == ETL_CCSWAP_FULL)
        known |= ETL_CSW_OLD_PRIORITY; /* carried in the record itself */
    if (etl_ccswap_split_state(r->state_wr, bias, state, reason))
        known |= ETL_CSW_STATE | ETL_CSW_WAIT_REASON;
    else if (*state <= ETL_CCSWAP_STATE_MAX)
        known |= ETL_CSW_STATE;
    else
        *ok = false;
    if (r->form == ETL_CCSWAP_FULL) known |= ETL_CSW_NEW_WAIT_TIME;
    return known;
}

/* etl_ccswap_to_cswitch, inline. */
static inline bool ccswap_to_cswitch(const etl_ccswap_record *r, uint16_t cpu, unsigned bias, uint8_t version,
                                     etl_cswitch *sw)
{
    etl_zero_small(sw, sizeof *sw); /* a memset of it compiles to rep stos: most of this function */
    bool ok;
    sw->known = ccswap_known(r, bias, &sw->old_state, &sw->old_wait_reason, &ok);
    sw->ts = r->time;
    sw->cpu = cpu;
    sw->version = version;
    sw->source = ETL_CSW_SRC_COMPACT;
    sw->old_tid = r->old_tid;
    sw->old_priority = r->old_priority;
    if (r->form == ETL_CCSWAP_FULL) sw->new_wait_time = r->new_wait_time;
    return ok;
}

#endif

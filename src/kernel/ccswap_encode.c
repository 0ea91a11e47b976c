/*
 * ccswap_encode.c - switches to PERFINFO_CCSWAP_BUFFER batches, following the
 * kernel's rules (kernel-events.md 6.1, 6.8).
 *
 * Per CPU, one batch is under construction in caller-provided memory, laid out
 * exactly as it will be written (header at 0, records from 0x58). Before a switch
 * is added, the five flush conditions are checked in the order the source lists
 * them; any one finishes the batch (copied to the encoder's output area, so the CPU
 * area is free at once) and the switch opens the next batch, whose FirstTimeStamp
 * is the switch's own time, so its record 0 has delta 0.
 */
#include "etlkit/ccswap.h"
#include "base/bytes.h"

#define DELTA_SHORT_LIMIT (1u << 14) /* IdleShort */
#define DELTA_LITE_LIMIT (1u << 17)  /* Lite */
#define DELTA_LIMIT (1u << 30)       /* Idle, Full */
#define WAIT_TIME_MAX ((1u << 17) - 1)
#define PRIORITY_MAX 31
#define PRI_INC_MAX 7

const char *etl_ccswap_flush_reason_name(unsigned reason)
{
    switch (reason) {
    case ETL_CCSWAP_FLUSH_NONE: return "none";
    case ETL_CCSWAP_FLUSH_TID_TABLE_FULL: return "tid-table-full";
    case ETL_CCSWAP_FLUSH_AGE: return "age";
    case ETL_CCSWAP_FLUSH_NO_ROOM: return "no-room";
    case ETL_CCSWAP_FLUSH_DELTA_OVERFLOW: return "delta-overflow";
    case ETL_CCSWAP_FLUSH_END: return "end";
    }
    return "?";
}

uint64_t etl_ccswap_max_age(uint32_t timer_resolution, uint64_t units_per_second)
{
    /* floor(a * b / c) with a = 500 * resolution (< 2^41), c = 10^7, without a
     * 128-bit type: b = q*c + r and a = ah*c + al give
     * a*b/c = q*a + r*ah + floor(r*al / c), every product below 2^64 except q*a. */
    const uint64_t c = 10000000u;
    uint64_t a = (uint64_t)ETL_CCSWAP_AGE_TICKS * timer_resolution;
    uint64_t q = units_per_second / c, r = units_per_second % c;
    uint64_t ah = a / c, al = a % c;
    if (q != 0 && a > UINT64_MAX / q) return UINT64_MAX;
    uint64_t v = q * a;
    uint64_t t = r * ah + r * al / c;
    return v > UINT64_MAX - t ? UINT64_MAX : v + t;
}

etl_status etl_ccswap_encoder_init(etl_ccswap_encoder *e, etl_ccswap_encoder_cpu *cpus,
                                   size_t ncpu, unsigned bias, uint64_t max_age)
{
    if (!e || !cpus || ncpu == 0 || ncpu > 65536) return ETL_E_INVALID_ARG;
    if (bias < 1 || bias + ETL_CCSWAP_STATE_MAX > ETL_CCSWAP_STATE_WR_MAX) return ETL_E_INVALID_ARG;
    memset(e, 0, sizeof *e);
    for (size_t i = 0; i < ncpu; i++) {
        cpus[i].len = 0;
        cpus[i].tids = 0;
        cpus[i].records = 0;
    }
    e->cpus = cpus;
    e->ncpu = ncpu;
    e->bias = (uint8_t)bias;
    e->max_age = max_age;
    return ETL_OK;
}

static void clear_out(etl_ccswap_batch *out)
{
    out->data = NULL;
    out->size = 0;
    out->first_time = 0;
    out->last_time = 0;
    out->records = 0;
    out->cpu = 0;
    out->reason = ETL_CCSWAP_FLUSH_NONE;
}

/* Finishes the open batch of cpus[cpu] into the output area. */
static void finish(etl_ccswap_encoder *e, size_t cpu, unsigned reason, etl_ccswap_batch *out)
{
    etl_ccswap_encoder_cpu *c = &e->cpus[cpu];
    memcpy(e->out, c->buf, c->len);
    out->data = e->out;
    out->size = c->len;
    out->first_time = c->first_time;
    out->last_time = c->last_time;
    out->records = c->records;
    out->cpu = (uint16_t)cpu;
    out->reason = (uint8_t)reason;
    e->stats.batches++;
    e->stats.flushes[reason]++;
    c->len = 0;
}

static int find_tid(const etl_ccswap_encoder_cpu *c, uint32_t tid)
{
    for (unsigned i = 0; i < c->tids; i++)
        if (c->tid[i] == tid) return (int)i;
    return -1;
}

etl_status etl_ccswap_encoder_add(etl_ccswap_encoder *e, const etl_ccswap_switch *in,
                                  etl_ccswap_batch *out)
{
    if (!e || !in || !out || !e->cpus) return ETL_E_INVALID_ARG;
    clear_out(out);
    if (in->cpu >= e->ncpu) return ETL_E_INVALID_ARG;
    etl_ccswap_encoder_cpu *c = &e->cpus[in->cpu];
    bool idle = in->old_tid == 0;

    /* StateWr first: an unencodable state is refused before anything changes. */
    unsigned wr = 0;
    bool reason_dropped = false;
    if (!idle) {
        if (in->old_state == ETL_CCSWAP_STATE_WAITING && in->old_wait_reason < e->bias) {
            wr = in->old_wait_reason;
        } else {
            wr = e->bias + in->old_state;
            if (wr > ETL_CCSWAP_STATE_WR_MAX) return ETL_E_RANGE;
            reason_dropped = in->old_state == ETL_CCSWAP_STATE_WAITING;
        }
    }

    int idx = -1;
    if (c->len) {
        if (in->time < c->last_time) return ETL_E_INVALID_ARG;
        uint64_t delta = in->time - c->last_time;
        if (!idle) idx = find_tid(c, in->old_tid);
        unsigned reason = ETL_CCSWAP_FLUSH_NONE;
        if (!idle && idx < 0 && c->tids == ETL_CCSWAP_TID_MAX)
            reason = ETL_CCSWAP_FLUSH_TID_TABLE_FULL;
        else if (in->time - c->first_time > e->max_age)
            reason = ETL_CCSWAP_FLUSH_AGE;
        else if (ETL_CCSWAP_BATCH_MAX - c->len < ETL_CCSWAP_ROOM_MIN)
            reason = ETL_CCSWAP_FLUSH_NO_ROOM;
        else if (delta >= DELTA_LIMIT)
            reason = ETL_CCSWAP_FLUSH_DELTA_OVERFLOW;
        if (reason != ETL_CCSWAP_FLUSH_NONE) {
            finish(e, in->cpu, reason, out);
            idx = -1;
        }
    }
    if (!c->len) {
        memset(c->buf, 0, ETL_CCSWAP_HEADER_SIZE);
        etl_wr_u64(c->buf, in->time);
        c->len = ETL_CCSWAP_HEADER_SIZE;
        c->tids = 0;
        c->records = 0;
        c->first_time = in->time;
        c->last_time = in->time;
    }

    /* The checks above guarantee delta < 2^30 and at least 8 free bytes. */
    uint32_t delta = (uint32_t)(in->time - c->last_time);
    uint8_t *q = c->buf + c->len;
    unsigned form;
    if (idle) {
        if (delta < DELTA_SHORT_LIMIT) {
            form = ETL_CCSWAP_IDLE_SHORT;
            etl_wr_u16(q, (uint16_t)(delta << 2 | ETL_CCSWAP_IDLE_SHORT));
            c->len += 2;
        } else {
            form = ETL_CCSWAP_IDLE;
            etl_wr_u32(q, delta << 2 | ETL_CCSWAP_IDLE);
            c->len += 4;
        }
    } else {
        if (idx < 0) {
            idx = c->tids++;
            c->tid[idx] = in->old_tid;
            etl_wr_u32(c->buf + 0x08 + 4 * (unsigned)idx, in->old_tid);
            c->buf[0x48 + idx] = (uint8_t)in->old_base_priority;
        }
        int inc = (int)in->old_priority - (int8_t)c->buf[0x48 + idx];
        /* Lite only for a priority 0..31: the decoder takes any other base + inc for damage. */
        if (delta < DELTA_LITE_LIMIT && inc >= 0 && inc <= PRI_INC_MAX && in->new_wait_time == 0 &&
            in->old_priority >= 0 && in->old_priority <= PRIORITY_MAX) {
            form = ETL_CCSWAP_LITE;
            etl_wr_u32(q, ETL_CCSWAP_LITE | (uint32_t)idx << 2 | (uint32_t)inc << 6 |
                              (uint32_t)wr << 9 | delta << 15);
            c->len += 4;
        } else {
            form = ETL_CCSWAP_FULL;
            int prio = in->old_priority;
            if (prio < 0 || prio > PRIORITY_MAX) {
                prio = prio < 0 ? 0 : PRIORITY_MAX;
                e->stats.priority_clamped++;
            }
            uint32_t wait = in->new_wait_time;
            if (wait > WAIT_TIME_MAX) {
                wait = WAIT_TIME_MAX;
                e->stats.wait_time_clamped++;
            }
            etl_wr_u32(q, delta << 2 | ETL_CCSWAP_FULL);
            etl_wr_u32(q + 4, (uint32_t)idx | (uint32_t)wr << 4 | (uint32_t)prio << 10 | wait << 15);
            c->len += 8;
        }
        if (reason_dropped) e->stats.wait_reason_dropped++;
    }
    c->last_time = in->time;
    c->records++;
    e->stats.switches++;
    e->stats.forms[form]++;
    return ETL_OK;
}

etl_status etl_ccswap_encoder_flush(etl_ccswap_encoder *e, etl_ccswap_batch *out)
{
    if (!e || !out || !e->cpus) return ETL_E_INVALID_ARG;
    clear_out(out);
    while (e->drain < e->ncpu) {
        size_t i = e->drain++;
        if (e->cpus[i].len) {
            finish(e, i, ETL_CCSWAP_FLUSH_END, out);
            return ETL_OK;
        }
    }
    e->drain = 0;
    return ETL_END;
}

etl_status etl_ccswap_encoder_flush_cpu(etl_ccswap_encoder *e, size_t cpu, etl_ccswap_batch *out)
{
    if (!e || !out || !e->cpus || cpu >= e->ncpu) return ETL_E_INVALID_ARG;
    clear_out(out);
    if (e->cpus[cpu].len) finish(e, cpu, ETL_CCSWAP_FLUSH_END, out);
    return ETL_OK;
}

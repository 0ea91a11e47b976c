/*
 * ready.c - ETW_READY_THREAD_EVENT, the data of ReadyThread (hook 0x0532):
 * 8 bytes, no pointers, the same on x86 and x64.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"

enum { READY_SIZE = 8 };

etl_status etl_ready_thread_decode(etl_span payload, etl_ready_thread *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    if (!etl_span_has(payload, 0, READY_SIZE)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p;
    out->thread_id = etl_rd_u32(p);
    out->adjust_reason = p[4];
    out->adjust_increment = (int8_t)p[5];
    out->flags = p[6];
    out->reserved = p[7];
    return ETL_OK;
}

etl_status etl_ready_thread_encode(const etl_ready_thread *in, uint8_t *out, size_t cap,
                                   size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    if (cap < READY_SIZE || !out) {
        *len = READY_SIZE;
        return ETL_E_RANGE;
    }
    etl_wr_u32(out, in->thread_id);
    out[4] = in->adjust_reason;
    out[5] = (uint8_t)in->adjust_increment;
    out[6] = in->flags;
    out[7] = in->reserved;
    *len = READY_SIZE;
    return ETL_OK;
}

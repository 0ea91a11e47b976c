/*
 * spinlock.c - WMI_SPINLOCK, the data of a spin lock sample (hook 0x0529),
 * written at a lock's release. Two pointers, then fixed-width fields; 6.3 added
 * Reserved[5], which pads the structure to a multiple of 8.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"

enum { RESERVED_LEN = 5 };

/* Offset of AcquireTime, the first field after the two pointers. */
static size_t fixed_at(unsigned ptr_size) { return 2 * (size_t)ptr_size; }

/* Bytes before Reserved: 0x2B (x86) or 0x33 (x64). */
static size_t base_size(unsigned ptr_size) { return fixed_at(ptr_size) + 0x23; }

etl_status etl_spinlock_decode(etl_span payload, unsigned ptr_size, etl_spinlock *out)
{
    if (!out || (ptr_size != 4 && ptr_size != 8)) return ETL_E_INVALID_ARG;
    size_t base = base_size(ptr_size);
    if (!etl_span_has(payload, 0, base)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p, *q = p + fixed_at(ptr_size);

    out->spin_lock_address = etl_rd_ptr(p, ptr_size);
    out->caller_address = etl_rd_ptr(p + ptr_size, ptr_size);
    out->acquire_time = etl_rd_u64(q);
    out->release_time = etl_rd_u64(q + 0x08);
    out->wait_time_in_cycles = etl_rd_u32(q + 0x10);
    out->spin_count = etl_rd_u32(q + 0x14);
    out->thread_id = etl_rd_u32(q + 0x18);
    out->interrupt_count = etl_rd_u32(q + 0x1C);
    out->irql = q[0x20];
    out->acquire_depth = q[0x21];
    out->flags = q[0x22];
    out->acquire_mode = out->flags & ETL_SPINLOCK_ACQUIRE_MODE_MASK;
    out->execute_dpc = (out->flags & ETL_SPINLOCK_EXECUTE_DPC) != 0;
    out->execute_isr = (out->flags & ETL_SPINLOCK_EXECUTE_ISR) != 0;
    out->has_reserved = etl_span_has(payload, base, RESERVED_LEN);
    memset(out->reserved, 0, RESERVED_LEN);
    if (out->has_reserved) memcpy(out->reserved, p + base, RESERVED_LEN);
    return ETL_OK;
}

etl_status etl_spinlock_encode(const etl_spinlock *in, unsigned ptr_size, uint8_t *out, size_t cap,
                               size_t *len)
{
    if (!in || !len || (ptr_size != 4 && ptr_size != 8)) return ETL_E_INVALID_ARG;
    size_t base = base_size(ptr_size), need = base + (in->has_reserved ? RESERVED_LEN : 0);
    *len = 0;
    if (in->acquire_mode > ETL_SPINLOCK_ACQUIRE_MODE_MASK) return ETL_E_RANGE;
    if (ptr_size == 4 && (in->spin_lock_address > UINT32_MAX || in->caller_address > UINT32_MAX))
        return ETL_E_RANGE;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    uint8_t *q = out + fixed_at(ptr_size);
    etl_wr_ptr(out, in->spin_lock_address, ptr_size);
    etl_wr_ptr(out + ptr_size, in->caller_address, ptr_size);
    etl_wr_u64(q, in->acquire_time);
    etl_wr_u64(q + 0x08, in->release_time);
    etl_wr_u32(q + 0x10, in->wait_time_in_cycles);
    etl_wr_u32(q + 0x14, in->spin_count);
    etl_wr_u32(q + 0x18, in->thread_id);
    etl_wr_u32(q + 0x1C, in->interrupt_count);
    q[0x20] = in->irql;
    q[0x21] = in->acquire_depth;
    q[0x22] = (uint8_t)(in->acquire_mode | (in->execute_dpc ? ETL_SPINLOCK_EXECUTE_DPC : 0) |
                        (in->execute_isr ? ETL_SPINLOCK_EXECUTE_ISR : 0));
    if (in->has_reserved) memcpy(out + base, in->reserved, RESERVED_LEN);
    *len = need;
    return ETL_OK;
}

uint64_t etl_spinlock_hold_cycles(const etl_spinlock *s)
{
    return s->release_time >= s->acquire_time ? s->release_time - s->acquire_time : 0;
}

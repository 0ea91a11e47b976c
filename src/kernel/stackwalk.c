/*
 * stackwalk.c - StackWalk events (group 0x18): the plain stack (0x1820,
 * StackWalk_Event) and the cached-stack forms Windows 8+ writes, where a stack
 * is stored once under a key and events refer to it.
 *
 *   0x1820 Stack         ULONGLONG EventTimeStamp; ULONG StackProcess; ULONG StackThread; PVOID Stack[n]
 *   0x1823 KeyDelete     PVOID StackKey; PVOID Stack[n]   (definition: the key leaves the cache)
 *   0x1824 KeyRundown    PVOID StackKey; PVOID Stack[n]   (definition: still cached at the trace end)
 *   0x1825 StackKeyKernel ULONGLONG EventTimeStamp; ULONG StackProcess; ULONG StackThread; PVOID StackKey
 *   0x1826 StackKeyUser   the same, for the user-mode part
 *
 * n comes from the payload size (at most 192, ETL_STACK_MAX_FRAMES). The frames
 * stay in the payload: the structs hold a pointer and a count, nothing is copied.
 * On perfview-x64-compressed.etl the KeyDelete records come through the trace
 * and the KeyRundown ones all in its last buffers; the kernel references' keys
 * are defined by definitions whose frames are kernel addresses, the user
 * references' by user-address ones.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"

enum { REF_HEAD = 16 };

static bool ptr_ok(unsigned ptr_size) { return ptr_size == 4 || ptr_size == 8; }
static bool ptr_fits(uint64_t v, unsigned ptr_size) { return ptr_size == 8 || v <= UINT32_MAX; }

uint64_t etl_stack_frame(const uint8_t *frames, unsigned ptr_size, uint32_t i)
{
    return etl_rd_ptr(frames + (size_t)i * ptr_size, ptr_size);
}

/* The whole frames in rest, at most ETL_STACK_MAX_FRAMES. */
static void take_frames(etl_span rest, unsigned ptr_size, const uint8_t **frames, uint32_t *count)
{
    size_t n = rest.n / ptr_size;
    if (n > ETL_STACK_MAX_FRAMES) n = ETL_STACK_MAX_FRAMES;
    *frames = n ? rest.p : NULL;
    *count = (uint32_t)n;
}

/* head bytes (already written by the caller) then count frames. */
static etl_status put_frames(const uint64_t *frames, uint32_t count, unsigned ptr_size, size_t head,
                             uint8_t *out, size_t cap, size_t *len)
{
    *len = 0;
    if (count > ETL_STACK_MAX_FRAMES || (count && !frames)) return ETL_E_RANGE;
    for (uint32_t i = 0; i < count; i++)
        if (!ptr_fits(frames[i], ptr_size)) return ETL_E_RANGE;
    size_t need = head + (size_t)count * ptr_size;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    for (uint32_t i = 0; i < count; i++) etl_wr_ptr(out + head + (size_t)i * ptr_size, frames[i], ptr_size);
    *len = need;
    return ETL_OK;
}

etl_status etl_stackwalk_decode(etl_span payload, unsigned ptr_size, etl_stackwalk *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_stackwalk zero = {0};
    *out = zero;
    out->ptr_size = (uint8_t)ptr_size;
    if (!etl_span_has(payload, 0, REF_HEAD)) return ETL_E_TRUNCATED;
    out->event_timestamp = etl_rd_u64(payload.p);
    out->stack_process = etl_rd_u32(payload.p + 8);
    out->stack_thread = etl_rd_u32(payload.p + 12);
    take_frames(etl_span_from(payload, REF_HEAD), ptr_size, &out->frames, &out->frame_count);
    return ETL_OK;
}

etl_status etl_stackwalk_encode(const etl_stackwalk *in, const uint64_t *frames, unsigned ptr_size,
                                uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    etl_status st = put_frames(frames, in->frame_count, ptr_size, REF_HEAD, out, cap, len);
    if (st != ETL_OK) return st;
    etl_wr_u64(out, in->event_timestamp);
    etl_wr_u32(out + 8, in->stack_process);
    etl_wr_u32(out + 12, in->stack_thread);
    return ETL_OK;
}

etl_status etl_stack_key_ref_decode(etl_span payload, unsigned ptr_size, etl_stack_key_ref *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_stack_key_ref zero = {0};
    *out = zero;
    if (!etl_span_has(payload, 0, REF_HEAD + (size_t)ptr_size)) return ETL_E_TRUNCATED;
    out->event_timestamp = etl_rd_u64(payload.p);
    out->stack_process = etl_rd_u32(payload.p + 8);
    out->stack_thread = etl_rd_u32(payload.p + 12);
    out->stack_key = etl_rd_ptr(payload.p + REF_HEAD, ptr_size);
    return ETL_OK;
}

etl_status etl_stack_key_ref_encode(const etl_stack_key_ref *in, unsigned ptr_size, uint8_t *out, size_t cap,
                                    size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    size_t need = REF_HEAD + (size_t)ptr_size;
    *len = 0;
    if (!ptr_fits(in->stack_key, ptr_size)) return ETL_E_RANGE;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_u64(out, in->event_timestamp);
    etl_wr_u32(out + 8, in->stack_process);
    etl_wr_u32(out + 12, in->stack_thread);
    etl_wr_ptr(out + REF_HEAD, in->stack_key, ptr_size);
    *len = need;
    return ETL_OK;
}

etl_status etl_stack_key_def_decode(etl_span payload, unsigned ptr_size, etl_stack_key_def *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_stack_key_def zero = {0};
    *out = zero;
    out->ptr_size = (uint8_t)ptr_size;
    if (!etl_span_has(payload, 0, ptr_size)) return ETL_E_TRUNCATED;
    out->stack_key = etl_rd_ptr(payload.p, ptr_size);
    take_frames(etl_span_from(payload, ptr_size), ptr_size, &out->frames, &out->frame_count);
    return ETL_OK;
}

etl_status etl_stack_key_def_encode(const etl_stack_key_def *in, const uint64_t *frames, unsigned ptr_size,
                                    uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    if (!ptr_fits(in->stack_key, ptr_size)) {
        *len = 0;
        return ETL_E_RANGE;
    }
    etl_status st = put_frames(frames, in->frame_count, ptr_size, ptr_size, out, cap, len);
    if (st != ETL_OK) return st;
    etl_wr_ptr(out, in->stack_key, ptr_size);
    return ETL_OK;
}

/*
 * perfinfo.c - the PerfInfo profiling events: SampledProfile (hook 0x0F2E), the
 * PMC sample interrupt (0x0F2F) and the sampling interval events (0x0F48..0x0F4A).
 *
 * Layouts (spec kernel-events.md section 3; checked against perfview-x64-compressed.etl):
 *   SampledProfile   PVOID InstructionPointer; ULONG ThreadId; USHORT Count; UCHAR Flags; UCHAR Rank
 *                    (PERFINFO_SAMPLED_PROFILE_INFORMATION; the MOF's SampledProfile class folds the
 *                    last four bytes into "uint32 Count"). On the sample: Count 1, Flags = priority << 3.
 *   PmcCounterProf   PVOID InstructionPointer; ULONG ThreadId; USHORT ProfileSource; USHORT Reserved.
 *   Interval events  ULONG Source; ULONG NewInterval; ULONG OldInterval; v3: WCHAR SourceName[]
 *                    (on the sample: 0, 10000, 10000, "Timer").
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"
#include "kernel/kstr.h"

static bool ptr_ok(unsigned ptr_size) { return ptr_size == 4 || ptr_size == 8; }
static bool ptr_fits(uint64_t v, unsigned ptr_size) { return ptr_size == 8 || v <= UINT32_MAX; }

/* Both interrupt samples: a pointer, a ULONG, then two USHORT-sized words. */
static etl_status ip_sample_decode(etl_span payload, unsigned ptr_size, uint64_t *ip, uint32_t *tid,
                                   uint16_t *w0, uint16_t *w1)
{
    if (!etl_span_has(payload, 0, (size_t)ptr_size + 8)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p;
    *ip = etl_rd_ptr(p, ptr_size);
    *tid = etl_rd_u32(p + ptr_size);
    *w0 = etl_rd_u16(p + ptr_size + 4);
    *w1 = etl_rd_u16(p + ptr_size + 6);
    return ETL_OK;
}

static etl_status ip_sample_encode(uint64_t ip, uint32_t tid, uint16_t w0, uint16_t w1, unsigned ptr_size,
                                   uint8_t *out, size_t cap, size_t *len)
{
    size_t need = (size_t)ptr_size + 8;
    *len = 0;
    if (!ptr_fits(ip, ptr_size)) return ETL_E_RANGE;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_ptr(out, ip, ptr_size);
    etl_wr_u32(out + ptr_size, tid);
    etl_wr_u16(out + ptr_size + 4, w0);
    etl_wr_u16(out + ptr_size + 6, w1);
    *len = need;
    return ETL_OK;
}

etl_status etl_sampled_profile_decode(etl_span payload, unsigned ptr_size, etl_sampled_profile *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_sampled_profile zero = {0};
    *out = zero;
    uint16_t fr = 0;
    etl_status st = ip_sample_decode(payload, ptr_size, &out->instruction_pointer, &out->thread_id,
                                     &out->count, &fr);
    out->flags = (uint8_t)fr;
    out->rank = (uint8_t)(fr >> 8);
    return st;
}

etl_status etl_sampled_profile_encode(const etl_sampled_profile *in, unsigned ptr_size, uint8_t *out,
                                      size_t cap, size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    return ip_sample_encode(in->instruction_pointer, in->thread_id, in->count,
                            (uint16_t)(in->flags | in->rank << 8), ptr_size, out, cap, len);
}

etl_status etl_pmc_sample_decode(etl_span payload, unsigned ptr_size, etl_pmc_sample *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_pmc_sample zero = {0};
    *out = zero;
    return ip_sample_decode(payload, ptr_size, &out->instruction_pointer, &out->thread_id,
                            &out->profile_source, &out->reserved);
}

etl_status etl_pmc_sample_encode(const etl_pmc_sample *in, unsigned ptr_size, uint8_t *out, size_t cap,
                                 size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    return ip_sample_encode(in->instruction_pointer, in->thread_id, in->profile_source, in->reserved,
                            ptr_size, out, cap, len);
}

enum { INTERVAL_FIXED = 12 };

etl_status etl_profile_interval_decode(etl_span payload, etl_profile_interval *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    const etl_profile_interval zero = {0};
    *out = zero;
    if (!etl_span_has(payload, 0, INTERVAL_FIXED)) return ETL_E_TRUNCATED;
    out->source = etl_rd_u32(payload.p);
    out->new_interval = etl_rd_u32(payload.p + 4);
    out->old_interval = etl_rd_u32(payload.p + 8);
    etl_span rest = etl_span_from(payload, INTERVAL_FIXED);
    if (rest.n) {
        out->has_name = true;
        out->source_name = kstr_take(&rest, 2);
    }
    return ETL_OK;
}

etl_status etl_profile_interval_encode(const etl_profile_interval *in, uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    size_t name_size = 0;
    *len = 0;
    if (in->has_name) {
        name_size = kstr_size(&in->source_name, 2);
        if (!name_size) return ETL_E_RANGE;
    }
    size_t need = INTERVAL_FIXED + name_size;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_u32(out, in->source);
    etl_wr_u32(out + 4, in->new_interval);
    etl_wr_u32(out + 8, in->old_interval);
    if (in->has_name) kstr_put(out + INTERVAL_FIXED, &in->source_name, 2);
    *len = need;
    return ETL_OK;
}

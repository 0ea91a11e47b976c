/*
 * image.c - Image events: Load (0x030A as the kernel logs it, 0x140A relogged),
 * Unload (0x1402), DCStart (0x1403), DCEnd (0x1404); KernelBase (0x1421) and
 * HypercallPage (0x1422: PVOID HypercallPageVa, as KernelBase a lone pointer).
 *
 *   v1  PVOID ImageBase; SIZE_T ImageSize; ULONG ProcessId; WCHAR FileName[]     (Image_V1_Load)
 *   v2  PVOID ImageBase; SIZE_T ImageSize; ULONG ProcessId; ULONG ImageChecksum;
 *       ULONG TimeDateStamp; ULONG Reserved0; PVOID DefaultBase; ULONG Reserved1..4;
 *       WCHAR FileName[]                                                          (Image_Load)
 *   v3  as v2 with Reserved0 split: UCHAR SignatureLevel; UCHAR SignatureType; USHORT Reserved0
 * The fixed part of v2/v3 is 0x38 bytes on x64, 0x2C on x86; on the samples the
 * FileName's terminator is the payload's last two bytes. Version 0 decodes as v1.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"
#include "kernel/kstr.h"

static bool ptr_ok(unsigned ptr_size) { return ptr_size == 4 || ptr_size == 8; }
static bool ptr_fits(uint64_t v, unsigned ptr_size) { return ptr_size == 8 || v <= UINT32_MAX; }

/* Bytes before FileName. */
static size_t fixed_size(bool v2, unsigned ptr_size)
{
    return 2 * (size_t)ptr_size + 4 + (v2 ? 12 + (size_t)ptr_size + 16 : 0);
}

etl_status etl_image_decode(etl_span payload, unsigned version, unsigned ptr_size, etl_image *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_image zero = {0};
    *out = zero;
    bool v2 = version >= 2;
    size_t fixed = fixed_size(v2, ptr_size);
    if (!etl_span_has(payload, 0, fixed)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p, *q = p + 2 * ptr_size + 4;
    out->image_base = etl_rd_ptr(p, ptr_size);
    out->image_size = etl_rd_ptr(p + ptr_size, ptr_size);
    out->process_id = etl_rd_u32(p + 2 * ptr_size);
    if (v2) {
        out->known = ETL_IMG_V2;
        out->image_checksum = etl_rd_u32(q);
        out->time_date_stamp = etl_rd_u32(q + 4);
        out->signature_level = q[8];
        out->signature_type = q[9];
        out->reserved0 = etl_rd_u16(q + 10);
        out->default_base = etl_rd_ptr(q + 12, ptr_size);
        for (unsigned i = 0; i < 4; i++) out->reserved[i] = etl_rd_u32(q + 12 + ptr_size + 4 * i);
    }
    etl_span rest = etl_span_from(payload, fixed);
    out->file_name = kstr_take(&rest, 2);
    return ETL_OK;
}

etl_status etl_image_encode(const etl_image *in, unsigned version, unsigned ptr_size, uint8_t *out, size_t cap,
                            size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    bool v2 = version >= 2;
    *len = 0;
    if (!ptr_fits(in->image_base, ptr_size) || !ptr_fits(in->image_size, ptr_size) ||
        (v2 && !ptr_fits(in->default_base, ptr_size)))
        return ETL_E_RANGE;
    size_t name_size = kstr_size(&in->file_name, 2);
    if (!name_size) return ETL_E_RANGE;
    size_t fixed = fixed_size(v2, ptr_size), need = fixed + name_size;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    uint8_t *q = out + 2 * ptr_size + 4;
    etl_wr_ptr(out, in->image_base, ptr_size);
    etl_wr_ptr(out + ptr_size, in->image_size, ptr_size);
    etl_wr_u32(out + 2 * ptr_size, in->process_id);
    if (v2) {
        etl_wr_u32(q, in->image_checksum);
        etl_wr_u32(q + 4, in->time_date_stamp);
        q[8] = in->signature_level;
        q[9] = in->signature_type;
        etl_wr_u16(q + 10, in->reserved0);
        etl_wr_ptr(q + 12, in->default_base, ptr_size);
        for (unsigned i = 0; i < 4; i++) etl_wr_u32(q + 12 + ptr_size + 4 * i, in->reserved[i]);
    }
    kstr_put(out + fixed, &in->file_name, 2);
    *len = need;
    return ETL_OK;
}

etl_status etl_image_kernel_base_decode(etl_span payload, unsigned ptr_size, etl_image_kernel_base *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    out->image_base = 0;
    if (!etl_span_has(payload, 0, ptr_size)) return ETL_E_TRUNCATED;
    out->image_base = etl_rd_ptr(payload.p, ptr_size);
    return ETL_OK;
}

etl_status etl_image_kernel_base_encode(const etl_image_kernel_base *in, unsigned ptr_size, uint8_t *out,
                                        size_t cap, size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    *len = 0;
    if (!ptr_fits(in->image_base, ptr_size)) return ETL_E_RANGE;
    if (cap < ptr_size || !out) {
        *len = ptr_size;
        return ETL_E_RANGE;
    }
    etl_wr_ptr(out, in->image_base, ptr_size);
    *len = ptr_size;
    return ETL_OK;
}

etl_status etl_image_hypercall_page_decode(etl_span payload, unsigned ptr_size, etl_image_hypercall_page *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    out->hypercall_page_va = 0;
    if (!etl_span_has(payload, 0, ptr_size)) return ETL_E_TRUNCATED;
    out->hypercall_page_va = etl_rd_ptr(payload.p, ptr_size);
    return ETL_OK;
}

etl_status etl_image_hypercall_page_encode(const etl_image_hypercall_page *in, unsigned ptr_size, uint8_t *out,
                                           size_t cap, size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    *len = 0;
    if (!ptr_fits(in->hypercall_page_va, ptr_size)) return ETL_E_RANGE;
    if (cap < ptr_size || !out) {
        *len = ptr_size;
        return ETL_E_RANGE;
    }
    etl_wr_ptr(out, in->hypercall_page_va, ptr_size);
    *len = ptr_size;
    return ETL_OK;
}

/*
 * image_id.c - the image-identity events KernelTraceControl's merge adds
 * (provider {b3e675d7-2554-4f18-830b-2762732560de}): ImageID (opcode 0x00),
 * DbgID_NONE (0x20), DbgID_RSDS (0x24), DbgID_ILRSDS (0x25), FileVersion
 * (0x40).
 *
 * Layouts in etlkit/kernel.h. They follow TraceEvent's SymbolTraceEventParser
 * (field order, pointer-sized ImageBase and ImageSize) and were checked on the
 * 7,885 such records of perfview-x64-compressed.etl: every DbgID base is an
 * image of the same process, the PDB names end in .pdb, and each payload ends
 * with its last string's terminator. The fields are packed: on x64 the GUID
 * starts at offset 12. DbgID_NONE is TraceEvent's "empty" event; the sample's
 * carry ImageBase and ProcessId, as the DbgID events start.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"
#include "kernel/kstr.h"

static const etl_guid image_id_guid = {0xb3e675d7, 0x2554, 0x4f18, {0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde}};

const etl_guid *etl_image_id_guid(void) { return &image_id_guid; }

static bool ptr_ok(unsigned ptr_size) { return ptr_size == 4 || ptr_size == 8; }
static bool ptr_fits(uint64_t v, unsigned ptr_size) { return ptr_size == 8 || v <= UINT32_MAX; }

/* ---- ImageID */

etl_status etl_image_id_decode(etl_span payload, unsigned ptr_size, etl_image_id *out)
{
    if (!out || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    const etl_image_id zero = {0};
    *out = zero;
    size_t fixed = 2 * (size_t)ptr_size + 8;
    if (!etl_span_has(payload, 0, fixed)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p;
    out->image_base = etl_rd_ptr(p, ptr_size);
    out->image_size = etl_rd_ptr(p + ptr_size, ptr_size);
    out->process_id = etl_rd_u32(p + 2 * ptr_size);
    out->time_date_stamp = etl_rd_u32(p + 2 * ptr_size + 4);
    etl_span rest = etl_span_from(payload, fixed);
    out->original_file_name = kstr_take(&rest, 2);
    return ETL_OK;
}

etl_status etl_image_id_encode(const etl_image_id *in, unsigned ptr_size, uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len || !ptr_ok(ptr_size)) return ETL_E_INVALID_ARG;
    *len = 0;
    if (!ptr_fits(in->image_base, ptr_size) || !ptr_fits(in->image_size, ptr_size)) return ETL_E_RANGE;
    size_t name_size = kstr_size(&in->original_file_name, 2);
    if (!name_size) return ETL_E_RANGE;
    size_t fixed = 2 * (size_t)ptr_size + 8, need = fixed + name_size;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_ptr(out, in->image_base, ptr_size);
    etl_wr_ptr(out + ptr_size, in->image_size, ptr_size);
    etl_wr_u32(out + 2 * ptr_size, in->process_id);
    etl_wr_u32(out + 2 * ptr_size + 4, in->time_date_stamp);
    kstr_put(out + fixed, &in->original_file_name, 2);
    *len = need;
    return ETL_OK;
}

/* ---- DbgID_NONE, DbgID_RSDS, DbgID_ILRSDS */

static bool dbgid_opcode(unsigned opcode, bool *rsds)
{
    *rsds = opcode == ETL_IMAGE_ID_DBGID_RSDS || opcode == ETL_IMAGE_ID_DBGID_ILRSDS;
    return *rsds || opcode == ETL_IMAGE_ID_DBGID_NONE;
}

/* ImageBase, ProcessId; then for RSDS GuidSig and Age before the name. */
static size_t dbgid_fixed(bool rsds, unsigned ptr_size) { return (size_t)ptr_size + 4 + (rsds ? 20 : 0); }

etl_status etl_image_dbgid_decode(etl_span payload, unsigned opcode, unsigned ptr_size, etl_image_dbgid *out)
{
    bool rsds;
    if (!out || !ptr_ok(ptr_size) || !dbgid_opcode(opcode, &rsds)) return ETL_E_INVALID_ARG;
    const etl_image_dbgid zero = {0};
    *out = zero;
    size_t fixed = dbgid_fixed(rsds, ptr_size);
    if (!etl_span_has(payload, 0, fixed)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p;
    out->image_base = etl_rd_ptr(p, ptr_size);
    out->process_id = etl_rd_u32(p + ptr_size);
    if (rsds) {
        out->has_rsds = true;
        etl_rd_guid(p + ptr_size + 4, &out->guid_sig);
        out->age = etl_rd_u32(p + ptr_size + 20);
        etl_span rest = etl_span_from(payload, fixed);
        out->pdb_file_name = kstr_take(&rest, 1);
    }
    return ETL_OK;
}

etl_status etl_image_dbgid_encode(const etl_image_dbgid *in, unsigned opcode, unsigned ptr_size, uint8_t *out,
                                  size_t cap, size_t *len)
{
    bool rsds;
    if (!in || !len || !ptr_ok(ptr_size) || !dbgid_opcode(opcode, &rsds)) return ETL_E_INVALID_ARG;
    *len = 0;
    if (!ptr_fits(in->image_base, ptr_size)) return ETL_E_RANGE;
    size_t fixed = dbgid_fixed(rsds, ptr_size), need = fixed;
    if (rsds) {
        size_t name_size = kstr_size(&in->pdb_file_name, 1);
        if (!name_size) return ETL_E_RANGE;
        need += name_size;
    }
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_ptr(out, in->image_base, ptr_size);
    etl_wr_u32(out + ptr_size, in->process_id);
    if (rsds) {
        etl_wr_guid(out + ptr_size + 4, &in->guid_sig);
        etl_wr_u32(out + ptr_size + 20, in->age);
        kstr_put(out + fixed, &in->pdb_file_name, 1);
    }
    *len = need;
    return ETL_OK;
}

/* ---- FileVersion */

static const char *const file_version_keys[ETL_IMAGE_FILE_VERSION_STRINGS] = {
    "OrigFileName", "FileDescription", "FileVersion", "BinFileVersion", "VerLanguage",
    "ProductName",  "CompanyName",     "ProductVersion", "FileId",      "ProgramId",
};

const char *etl_image_file_version_key(unsigned i)
{
    return i < ETL_IMAGE_FILE_VERSION_STRINGS ? file_version_keys[i] : NULL;
}

etl_status etl_image_file_version_decode(etl_span payload, etl_image_file_version *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    const etl_image_file_version zero = {0};
    *out = zero;
    if (!etl_span_has(payload, 0, 8)) return ETL_E_TRUNCATED;
    out->image_size = etl_rd_u32(payload.p);
    out->time_date_stamp = etl_rd_u32(payload.p + 4);
    etl_span rest = etl_span_from(payload, 8);
    /* A string cut by the payload's end is the last one: those after it stay empty. */
    for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) {
        out->strings[i] = kstr_take(&rest, 2);
        if (!out->strings[i].terminated) break;
    }
    return ETL_OK;
}

etl_status etl_image_file_version_encode(const etl_image_file_version *in, uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    *len = 0;
    size_t need = 8;
    for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) {
        size_t n = kstr_size(&in->strings[i], 2);
        if (!n) return ETL_E_RANGE;
        need += n;
    }
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_u32(out, in->image_size);
    etl_wr_u32(out + 4, in->time_date_stamp);
    uint8_t *o = out + 8;
    for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) o = kstr_put(o, &in->strings[i], 2);
    *len = need;
    return ETL_OK;
}

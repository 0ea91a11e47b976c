/*
 * process.c - Process Start/End/DCStart/DCEnd/Defunct (hooks 0x0301..0x0304,
 * 0x0327), versions 0..5: WMI_PROCESS_INFORMATION and its predecessors.
 *
 * A fixed part (ids and pointers, varying by version), the variable-length
 * UserSID, then NUL-terminated strings: ImageFileName (ANSI), CommandLine,
 * PackageFullName, ApplicationId (UTF-16LE), and in v5 an 8-byte time.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"
#include "kernel/kstr.h"

enum { MAX_SUB_AUTHORITIES = 15, NO_SID_SIZE = 4, SID_HEAD = 8, EXIT_TIME_SIZE = 8 };

/* The layout a version selects, and where its UserSID starts. */
static unsigned layout_of(unsigned version) { return version > 5 ? 5 : version; }

static size_t sid_offset(unsigned layout, unsigned ptr_size)
{
    switch (layout) {
    case 0: return 2 * (size_t)ptr_size;            /* ProcessId, ParentId (pointers) */
    case 1:
    case 2: return ptr_size + 16;                   /* pointer, 4 ULONGs */
    case 3: return 2 * (size_t)ptr_size + 16;       /* + DirectoryTableBase */
    default: return 2 * (size_t)ptr_size + 20;      /* + Flags */
    }
}

/* How many UTF-16 strings follow ImageFileName. */
static unsigned wide_strings(unsigned layout) { return layout < 2 ? 0 : layout < 4 ? 1 : 3; }

static bool ptr_fits(uint64_t v, unsigned ptr_size) { return ptr_size == 8 || v <= UINT32_MAX; }

/* The length of a well-formed SID at the start of sid (8 + 4 * count), or 0. */
static size_t sid_len(etl_span sid)
{
    if (sid.n < SID_HEAD || sid.p[1] > MAX_SUB_AUTHORITIES) return 0;
    size_t n = SID_HEAD + 4 * (size_t)sid.p[1];
    return n <= sid.n ? n : 0;
}

/*
 * The exception to "first ULONG 0 means no SID": a TOKEN_USER that is all zero
 * followed by a revision-1 SID (how syzygy-process-32bit.etl is written).
 */
static bool zeroed_token_then_sid(etl_span at, size_t token)
{
    if (!etl_span_has(at, 0, token + SID_HEAD)) return false;
    for (size_t i = 0; i < token; i++)
        if (at.p[i]) return false;
    etl_span sid = etl_span_from(at, token);
    return sid.p[0] == 1 && sid_len(sid) != 0;
}

/* Reads the UserSID at the front of at; *used gets its size. */
static etl_status take_sid(etl_span at, unsigned ptr_size, etl_process *out, size_t *used)
{
    size_t token = 2 * (size_t)ptr_size;
    if (!etl_span_has(at, 0, NO_SID_SIZE)) return ETL_E_TRUNCATED;
    if (etl_rd_u32(at.p) == 0 && !zeroed_token_then_sid(at, token)) {
        *used = NO_SID_SIZE;
        return ETL_OK;
    }
    if (!etl_span_has(at, 0, token + SID_HEAD)) return ETL_E_TRUNCATED;
    uint8_t count = at.p[token + 1];
    if (count > MAX_SUB_AUTHORITIES) return ETL_E_CORRUPT;
    size_t n = SID_HEAD + 4 * (size_t)count;
    if (!etl_span_has(at, token, n)) return ETL_E_TRUNCATED;
    out->token_user[0] = etl_rd_ptr(at.p, ptr_size);
    out->token_user[1] = etl_rd_ptr(at.p + ptr_size, ptr_size);
    out->user_sid = etl_span_sub(at, token, n);
    *used = token + n;
    return ETL_OK;
}

etl_status etl_process_decode(etl_span payload, unsigned version, unsigned ptr_size,
                              etl_process *out)
{
    if (!out || (ptr_size != 4 && ptr_size != 8)) return ETL_E_INVALID_ARG;
    unsigned layout = layout_of(version);
    const etl_process zero = {0};
    *out = zero;
    out->version = (uint8_t)(version > 255 ? 255 : version);
    size_t at = sid_offset(layout, ptr_size);
    if (!etl_span_has(payload, 0, at)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p, *q = p + ptr_size;

    if (layout == 0) {
        uint64_t pid = etl_rd_ptr(p, ptr_size), ppid = etl_rd_ptr(q, ptr_size);
        if (pid > UINT32_MAX || ppid > UINT32_MAX) return ETL_E_CORRUPT;
        out->process_id = (uint32_t)pid;
        out->parent_id = (uint32_t)ppid;
        out->known = ETL_PROC_IDS;
    } else {
        uint64_t first = etl_rd_ptr(p, ptr_size);
        if (layout == 1) {
            out->directory_table_base = first; /* PageDirectoryBase */
            out->known = ETL_PROC_DTB;
        } else {
            out->unique_process_key = first;
            out->known = ETL_PROC_KEY;
        }
        out->process_id = etl_rd_u32(q);
        out->parent_id = etl_rd_u32(q + 4);
        out->session_id = etl_rd_u32(q + 8);
        out->exit_status = (int32_t)etl_rd_u32(q + 12);
        out->known |= ETL_PROC_IDS | ETL_PROC_SESSION;
        if (layout >= 3) {
            out->directory_table_base = etl_rd_ptr(q + 16, ptr_size);
            out->known |= ETL_PROC_DTB;
        }
        if (layout >= 4) {
            out->flags = etl_rd_u32(q + 16 + ptr_size);
            out->known |= ETL_PROC_FLAGS;
        }
    }

    size_t used;
    etl_status st = take_sid(etl_span_from(payload, at), ptr_size, out, &used);
    if (st != ETL_OK) return st;
    out->known |= ETL_PROC_SID;

    /* Each string is present if bytes are left where it starts. */
    etl_span rest = etl_span_from(payload, at + used);
    etl_kstr *strs[4] = {&out->image_file_name, &out->command_line, &out->package_full_name,
                         &out->application_id};
    static const uint32_t bits[4] = {ETL_PROC_IMAGE, ETL_PROC_COMMAND_LINE, ETL_PROC_PACKAGE,
                                     ETL_PROC_APP_ID};
    for (unsigned i = 0; i <= wide_strings(layout) && rest.n; i++) {
        *strs[i] = kstr_take(&rest, i ? 2 : 1);
        out->known |= bits[i];
    }
    if (layout == 5 && (out->known & ETL_PROC_APP_ID) && out->application_id.terminated) {
        if (!etl_span_has(rest, 0, EXIT_TIME_SIZE)) return ETL_E_TRUNCATED;
        out->exit_time = etl_rd_u64(rest.p);
        out->known |= ETL_PROC_EXIT_TIME;
    }
    return ETL_OK;
}

/* Checks the SID and TOKEN_USER can be written so the decoder reads them back. */
static size_t sid_size(const etl_process *in, unsigned ptr_size)
{
    if (!in->user_sid.n) return NO_SID_SIZE;
    if (sid_len(in->user_sid) != in->user_sid.n) return 0;
    if (!ptr_fits(in->token_user[0], ptr_size) || !ptr_fits(in->token_user[1], ptr_size)) return 0;
    if ((uint32_t)in->token_user[0] == 0 &&
        (in->token_user[0] || in->token_user[1] || in->user_sid.p[0] != 1))
        return 0;
    return 2 * (size_t)ptr_size + in->user_sid.n;
}

etl_status etl_process_encode(const etl_process *in, unsigned version, unsigned ptr_size,
                              uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len || (ptr_size != 4 && ptr_size != 8)) return ETL_E_INVALID_ARG;
    unsigned layout = layout_of(version);
    const etl_kstr *strs[4] = {&in->image_file_name, &in->command_line, &in->package_full_name,
                               &in->application_id};
    size_t at = sid_offset(layout, ptr_size), sid = sid_size(in, ptr_size), need = at + sid;
    *len = 0;

    uint64_t first = layout == 0 ? in->process_id : layout == 1 ? in->directory_table_base
                                                                : in->unique_process_key;
    if (!sid || !ptr_fits(first, ptr_size) ||
        (layout >= 3 && !ptr_fits(in->directory_table_base, ptr_size)))
        return ETL_E_RANGE;
    for (unsigned i = 0; i <= wide_strings(layout); i++) {
        size_t n = kstr_size(strs[i], i ? 2 : 1);
        if (!n) return ETL_E_RANGE;
        need += n;
    }
    if (layout == 5) need += EXIT_TIME_SIZE;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }

    uint8_t *q = out + ptr_size;
    etl_wr_ptr(out, first, ptr_size);
    if (layout == 0) {
        etl_wr_ptr(q, in->parent_id, ptr_size);
    } else {
        etl_wr_u32(q, in->process_id);
        etl_wr_u32(q + 4, in->parent_id);
        etl_wr_u32(q + 8, in->session_id);
        etl_wr_u32(q + 12, (uint32_t)in->exit_status);
        if (layout >= 3) etl_wr_ptr(q + 16, in->directory_table_base, ptr_size);
        if (layout >= 4) etl_wr_u32(q + 16 + ptr_size, in->flags);
    }

    uint8_t *o = out + at;
    if (in->user_sid.n) {
        etl_wr_ptr(o, in->token_user[0], ptr_size);
        etl_wr_ptr(o + ptr_size, in->token_user[1], ptr_size);
        memcpy(o + 2 * ptr_size, in->user_sid.p, in->user_sid.n);
    } else {
        memset(o, 0, NO_SID_SIZE);
    }
    o += sid;
    for (unsigned i = 0; i <= wide_strings(layout); i++) o = kstr_put(o, strs[i], i ? 2 : 1);
    if (layout == 5) etl_wr_u64(o, in->exit_time);
    /* Without a SID, the strings must not read back as a zeroed TOKEN_USER + SID. */
    if (!in->user_sid.n && zeroed_token_then_sid(etl_span_from((etl_span){out, need}, at),
                                                 2 * (size_t)ptr_size))
        return ETL_E_RANGE;
    *len = need;
    return ETL_OK;
}

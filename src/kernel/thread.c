/*
 * thread.c - Thread Start/End/DCStart/DCEnd (hooks 0x0501..0x0504), versions
 * 0..4, and Thread SetName (hook 0x0548).
 *
 * From v2 on the data is WMI_EXTENDED_THREAD_INFORMATION: two ULONG ids, seven
 * pointers, SubProcessTag, then (v3) four priority/flag bytes and (v4) a UTF-16
 * name. v3 may carry the name too; so the name is read whenever bytes follow
 * the fixed part, which makes v3 and v4 decode alike.
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"
#include "kernel/kstr.h"

enum { IDS_SIZE = 8 };

/* End of the six stack/start pointers that follow the ids. */
static size_t stacks_end(unsigned ptr_size) { return IDS_SIZE + 6 * (size_t)ptr_size; }

/* The fixed part of a v2+ layout: ids, seven pointers, SubProcessTag, v3 bytes. */
static size_t fixed_size(unsigned layout, unsigned ptr_size)
{
    return stacks_end(ptr_size) + ptr_size + 4 + (layout >= 3 ? 4 : 0);
}

static bool ptr_fits(uint64_t v, unsigned ptr_size) { return ptr_size == 8 || v <= UINT32_MAX; }

etl_status etl_thread_decode(etl_span payload, unsigned version, unsigned ptr_size, etl_thread *out)
{
    if (!out || (ptr_size != 4 && ptr_size != 8)) return ETL_E_INVALID_ARG;
    unsigned layout = version > 4 ? 4 : version;
    const etl_thread zero = {0};
    *out = zero;
    out->version = (uint8_t)(version > 255 ? 255 : version);
    if (!etl_span_has(payload, 0, IDS_SIZE)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p, *s = p + IDS_SIZE;

    /* v0 puts ThreadId first; every later version ProcessId. */
    out->process_id = etl_rd_u32(p + (layout == 0 ? 4 : 0));
    out->thread_id = etl_rd_u32(p + (layout == 0 ? 0 : 4));
    out->known = ETL_THR_IDS;
    if (layout == 0) return ETL_OK;

    size_t end = stacks_end(ptr_size);
    if (layout == 1 && !etl_span_has(payload, 0, end + 1)) return ETL_OK; /* End/DCEnd form */
    if (layout >= 2 && !etl_span_has(payload, 0, fixed_size(layout, ptr_size)))
        return ETL_E_TRUNCATED;
    out->stack_base = etl_rd_ptr(s, ptr_size);
    out->stack_limit = etl_rd_ptr(s + ptr_size, ptr_size);
    out->user_stack_base = etl_rd_ptr(s + 2 * ptr_size, ptr_size);
    out->user_stack_limit = etl_rd_ptr(s + 3 * ptr_size, ptr_size);
    out->start_address = etl_rd_ptr(s + 4 * ptr_size, ptr_size);
    out->win32_start_address = etl_rd_ptr(s + 5 * ptr_size, ptr_size);
    out->known |= ETL_THR_STACKS;
    if (layout == 1) {
        out->wait_mode = (int8_t)p[end];
        out->known |= ETL_THR_WAIT_MODE;
        return ETL_OK;
    }
    out->teb_base = etl_rd_ptr(p + end, ptr_size);
    out->sub_process_tag = etl_rd_u32(p + end + ptr_size);
    out->known |= ETL_THR_TEB;
    if (layout >= 3) {
        const uint8_t *q = p + end + ptr_size + 4;
        out->base_priority = q[0];
        out->page_priority = q[1];
        out->io_priority = q[2];
        out->flags = q[3];
        out->known |= ETL_THR_PRIORITIES;
        etl_span rest = etl_span_from(payload, fixed_size(layout, ptr_size));
        if (rest.n) {
            out->thread_name = kstr_take(&rest, 2);
            out->known |= ETL_THR_NAME;
        }
    }
    return ETL_OK;
}

etl_status etl_thread_encode(const etl_thread *in, unsigned version, unsigned ptr_size,
                             uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len || (ptr_size != 4 && ptr_size != 8)) return ETL_E_INVALID_ARG;
    unsigned layout = version > 4 ? 4 : version;
    bool stacks = layout >= 2 || (layout == 1 && (in->known & ETL_THR_STACKS));
    bool name = layout == 4 || (layout == 3 && (in->known & ETL_THR_NAME));
    size_t need = IDS_SIZE, name_size = 0;
    *len = 0;

    if (stacks) {
        uint64_t ptrs[7] = {in->stack_base, in->stack_limit, in->user_stack_base,
                            in->user_stack_limit, in->start_address, in->win32_start_address,
                            in->teb_base};
        for (unsigned i = 0; i < (layout >= 2 ? 7u : 6u); i++)
            if (!ptr_fits(ptrs[i], ptr_size)) return ETL_E_RANGE;
        need = layout == 1 ? stacks_end(ptr_size) + 1 : fixed_size(layout, ptr_size);
    }
    if (name) {
        name_size = kstr_size(&in->thread_name, 2);
        if (!name_size) return ETL_E_RANGE;
        need += name_size;
    }
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }

    etl_wr_u32(out, layout == 0 ? in->thread_id : in->process_id);
    etl_wr_u32(out + 4, layout == 0 ? in->process_id : in->thread_id);
    if (stacks) {
        uint8_t *s = out + IDS_SIZE;
        size_t end = stacks_end(ptr_size);
        etl_wr_ptr(s, in->stack_base, ptr_size);
        etl_wr_ptr(s + ptr_size, in->stack_limit, ptr_size);
        etl_wr_ptr(s + 2 * ptr_size, in->user_stack_base, ptr_size);
        etl_wr_ptr(s + 3 * ptr_size, in->user_stack_limit, ptr_size);
        etl_wr_ptr(s + 4 * ptr_size, in->start_address, ptr_size);
        etl_wr_ptr(s + 5 * ptr_size, in->win32_start_address, ptr_size);
        if (layout == 1) {
            out[end] = (uint8_t)in->wait_mode;
        } else {
            etl_wr_ptr(out + end, in->teb_base, ptr_size);
            etl_wr_u32(out + end + ptr_size, in->sub_process_tag);
        }
        if (layout >= 3) {
            uint8_t *q = out + end + ptr_size + 4;
            q[0] = in->base_priority;
            q[1] = in->page_priority;
            q[2] = in->io_priority;
            q[3] = in->flags;
        }
    }
    if (name) kstr_put(out + need - name_size, &in->thread_name, 2);
    *len = need;
    return ETL_OK;
}

etl_status etl_thread_setname_decode(etl_span payload, etl_thread_setname *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    if (!etl_span_has(payload, 0, IDS_SIZE)) return ETL_E_TRUNCATED;
    out->process_id = etl_rd_u32(payload.p);
    out->thread_id = etl_rd_u32(payload.p + 4);
    etl_span rest = etl_span_from(payload, IDS_SIZE);
    out->thread_name = kstr_take(&rest, 2);
    return ETL_OK;
}

etl_status etl_thread_setname_encode(const etl_thread_setname *in, uint8_t *out, size_t cap,
                                     size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    size_t name_size = kstr_size(&in->thread_name, 2);
    *len = 0;
    if (!name_size) return ETL_E_RANGE;
    size_t need = IDS_SIZE + name_size;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_u32(out, in->process_id);
    etl_wr_u32(out + 4, in->thread_id);
    kstr_put(out + IDS_SIZE, &in->thread_name, 2);
    *len = need;
    return ETL_OK;
}

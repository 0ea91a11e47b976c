/*
 * event.c - dispatch from a framed record to the kernel codecs.
 *
 * The header type, not the hook, says the pointer size (kernel-events.md §12.5:
 * decoders dispatch on the HeaderType byte), and the event version is the low
 * byte of the Version word (or Class.Version of a FULL header). Records with no
 * kernel hook are ETL_END but for the image-identity provider's, by opcode.
 */
#include <string.h>
#include "etlkit/event.h"
#include "base/bytes.h"

bool etl_record_kernel_hook(const etl_record *rec, uint16_t *hook)
{
    if (rec->has & ETL_REC_HOOK) {
        *hook = rec->hook;
        return true;
    }
    if ((rec->htype == ETL_HTYPE_FULL_HEADER32 || rec->htype == ETL_HTYPE_FULL_HEADER64 ||
         rec->htype == ETL_HTYPE_INSTANCE32 || rec->htype == ETL_HTYPE_INSTANCE64) &&
        (rec->has & ETL_REC_PROVIDER)) {
        for (unsigned g = 0; g < 0x20; g++) {
            const etl_guid *gg = etl_group_guid(g);
            if (gg && memcmp(gg, &rec->provider, sizeof *gg) == 0) {
                *hook = (uint16_t)(g << 8 | rec->opcode);
                return true;
            }
        }
    }
    return false;
}

bool etl_event_hook_decodes(uint16_t hook)
{
    switch (hook) {
    case ETL_HOOK_CSWITCH: case ETL_HOOK_CSWITCH_BATCH: case ETL_HOOK_SPINLOCK: case ETL_HOOK_READY_THREAD:
    case ETL_HOOK_THREAD_START: case ETL_HOOK_THREAD_END: case ETL_HOOK_THREAD_DC_START: case ETL_HOOK_THREAD_DC_END:
    case ETL_HOOK_THREAD_SET_NAME:
    case ETL_HOOK_PROCESS_START: case ETL_HOOK_PROCESS_END: case ETL_HOOK_PROCESS_DC_START:
    case ETL_HOOK_PROCESS_DC_END: case ETL_HOOK_PROCESS_DEFUNCT:
    case ETL_HOOK_HEADER_EXTENSION: case ETL_HOOK_GROUP_MASKS_END:
    case ETL_HOOK_SAMPLED_PROFILE: case ETL_HOOK_PMC_COUNTER_PROF: case ETL_HOOK_PROFILE_SET_INTERVAL:
    case ETL_HOOK_PROFILE_COLLECTION_START: case ETL_HOOK_PROFILE_COLLECTION_END:
    case ETL_HOOK_STACKWALK: case ETL_HOOK_STACK_KEY_DELETE: case ETL_HOOK_STACK_KEY_RUNDOWN:
    case ETL_HOOK_STACK_KEY_KERNEL: case ETL_HOOK_STACK_KEY_USER:
    case ETL_HOOK_PROCESS_LOAD_IMAGE: case ETL_HOOK_IMAGE_UNLOAD: case ETL_HOOK_IMAGE_DC_START:
    case ETL_HOOK_IMAGE_DC_END: case ETL_HOOK_IMAGE_LOAD: case ETL_HOOK_IMAGE_KERNEL_BASE:
    case ETL_HOOK_IMAGE_HYPERCALL_PAGE:
        return true;
    default:
        return false;
    }
}

void etl_krec_record(const etl_walk *w, const etl_krec *k, etl_record *out)
{
    size_t next;
    /* The walk framed it already: framing its own bytes again cannot fail. */
    etl_record_frame((etl_span){k->data, k->size}, 0, out, &next);
    out->offset = (uint32_t)(k->data - w->p);
    out->cpu = w->cpu;
    out->buffer_index = w->buffer_index;
}

static void cswitch_header(const etl_record *rec, etl_cswitch *sw)
{
    sw->ts = rec->ts;
    sw->cpu = rec->cpu;
    sw->known |= ETL_CSW_TIME | ETL_CSW_CPU;
    if (rec->has & ETL_REC_PEBS) {
        sw->pebs_index = rec->pebs_index;
        sw->known |= ETL_CSW_PEBS;
    }
    if (rec->has & ETL_REC_PMC) {
        sw->pmc_count = rec->pmc_count;
        for (unsigned i = 0; i < rec->pmc_count && i < 7; i++) sw->pmc[i] = etl_record_pmc(rec, i);
        sw->known |= ETL_CSW_PMC;
    }
}

etl_status etl_event_decode_cswitch(const etl_record *rec, etl_cswitch *sw)
{
    /* What etl_event_decode's memset leaves for cswitch_header to fill. */
    sw->ts = 0;
    sw->known = 0;
    sw->cpu = 0;
    sw->pmc_count = 0;
    sw->pebs_index = 0;
    memset(sw->pmc, 0, sizeof sw->pmc);
    etl_status st = etl_cswitch_decode(rec->payload, rec->version, sw);
    if (st == ETL_OK) cswitch_header(rec, sw);
    else memset(sw, 0, sizeof *sw); /* as a whole zeroed event would hold it */
    return st;
}

etl_status etl_event_decode_cswitch_krec(const etl_krec *k, uint16_t cpu, etl_cswitch *sw)
{
    sw->known = 0;
    sw->pebs_index = 0;
    sw->pmc_count = 0;
    memset(sw->pmc, 0, sizeof sw->pmc);
    etl_status st = etl_cswitch_decode(k->payload, k->version_word & 0xFF, sw);
    if (st != ETL_OK) {
        memset(sw, 0, sizeof *sw);
        return st;
    }
    /* cswitch_header, from the walk's view: the counters (and the PEBS index) sit before the payload. */
    sw->ts = k->ts;
    sw->cpu = cpu;
    sw->known |= ETL_CSW_TIME | ETL_CSW_CPU;
    const uint8_t *pmc = k->payload.p - 8u * k->pmc_count;
    if (k->version_word & ETL_TRACE_HEADER_PEBS_INDEX_FLAG) {
        sw->pebs_index = etl_rd_u64(pmc - 8);
        sw->known |= ETL_CSW_PEBS;
    }
    if (k->pmc_count) {
        sw->pmc_count = k->pmc_count;
        for (unsigned i = 0; i < k->pmc_count && i < 7; i++) sw->pmc[i] = etl_rd_u64(pmc + 8u * i);
        sw->known |= ETL_CSW_PMC;
    }
    return ETL_OK;
}

/* KernelTraceControl's image-identity events: no hook, the provider and opcode say the layout. */
static etl_status decode_image_id(const etl_record *rec, etl_event *ev)
{
    unsigned ptr = rec->pointer_size;
    etl_status st;
    switch (rec->opcode) {
    case ETL_IMAGE_ID_INFO:
        ev->kind = ETL_EVENT_IMAGE_ID;
        st = etl_image_id_decode(rec->payload, ptr, &ev->u.image_id);
        break;
    case ETL_IMAGE_ID_DBGID_NONE:
    case ETL_IMAGE_ID_DBGID_RSDS:
    case ETL_IMAGE_ID_DBGID_ILRSDS:
        ev->kind = rec->opcode == ETL_IMAGE_ID_DBGID_NONE   ? ETL_EVENT_IMAGE_DBGID_NONE
                   : rec->opcode == ETL_IMAGE_ID_DBGID_RSDS ? ETL_EVENT_IMAGE_DBGID_RSDS
                                                            : ETL_EVENT_IMAGE_DBGID_ILRSDS;
        st = etl_image_dbgid_decode(rec->payload, rec->opcode, ptr, &ev->u.dbgid);
        break;
    case ETL_IMAGE_ID_FILE_VERSION:
        ev->kind = ETL_EVENT_IMAGE_FILE_VERSION;
        st = etl_image_file_version_decode(rec->payload, &ev->u.file_version);
        break;
    default:
        return ETL_END;
    }
    ev->version = rec->version;
    ev->status = st;
    return st;
}

etl_status etl_event_decode(const etl_record *rec, etl_event *ev)
{
    /* The header and the member the kind uses are zeroed, not the whole union: it is most of a decode's cost. */
    ev->kind = ETL_EVENT_OTHER;
    ev->status = ETL_OK;
    ev->hook = 0;
    ev->version = 0;
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) {
        if ((rec->has & ETL_REC_PROVIDER) && !memcmp(&rec->provider, etl_image_id_guid(), sizeof rec->provider))
            return decode_image_id(rec, ev);
        return ETL_END;
    }
    unsigned ver = rec->version, ptr = rec->pointer_size;
    ev->hook = hook;
    ev->version = (uint16_t)ver;
    etl_status st;
    switch (hook) {
    case ETL_HOOK_CSWITCH:
        ev->kind = ETL_EVENT_CSWITCH;
        st = etl_event_decode_cswitch(rec, &ev->u.cswitch);
        break;
    case ETL_HOOK_CSWITCH_BATCH:
        ev->kind = ETL_EVENT_CCSWAP_BATCH;
        memset(&ev->u.batch, 0, sizeof ev->u.batch);
        st = etl_ccswap_open(&ev->u.batch, rec->payload);
        break;
    case ETL_HOOK_SPINLOCK:
        ev->kind = ETL_EVENT_SPINLOCK;
        memset(&ev->u.spinlock, 0, sizeof ev->u.spinlock);
        st = etl_spinlock_decode(rec->payload, ptr, &ev->u.spinlock);
        break;
    case ETL_HOOK_READY_THREAD:
        ev->kind = ETL_EVENT_READY_THREAD;
        memset(&ev->u.ready, 0, sizeof ev->u.ready);
        st = etl_ready_thread_decode(rec->payload, &ev->u.ready);
        break;
    case ETL_HOOK_THREAD_START:
    case ETL_HOOK_THREAD_END:
    case ETL_HOOK_THREAD_DC_START:
    case ETL_HOOK_THREAD_DC_END:
        ev->kind = ETL_EVENT_THREAD;
        memset(&ev->u.thread, 0, sizeof ev->u.thread);
        st = etl_thread_decode(rec->payload, ver, ptr, &ev->u.thread);
        break;
    case ETL_HOOK_THREAD_SET_NAME:
        ev->kind = ETL_EVENT_THREAD_SET_NAME;
        memset(&ev->u.set_name, 0, sizeof ev->u.set_name);
        st = etl_thread_setname_decode(rec->payload, &ev->u.set_name);
        break;
    case ETL_HOOK_PROCESS_START:
    case ETL_HOOK_PROCESS_END:
    case ETL_HOOK_PROCESS_DC_START:
    case ETL_HOOK_PROCESS_DC_END:
    case ETL_HOOK_PROCESS_DEFUNCT:
        ev->kind = ETL_EVENT_PROCESS;
        memset(&ev->u.process, 0, sizeof ev->u.process);
        st = etl_process_decode(rec->payload, ver, ptr, &ev->u.process);
        break;
    case ETL_HOOK_HEADER_EXTENSION:
    case ETL_HOOK_GROUP_MASKS_END:
        ev->kind = ETL_EVENT_GROUP_MASK;
        memset(&ev->u.group_mask, 0, sizeof ev->u.group_mask);
        st = etl_groupmask_decode(rec->payload, &ev->u.group_mask);
        break;
    case ETL_HOOK_SAMPLED_PROFILE:
        ev->kind = ETL_EVENT_SAMPLED_PROFILE;
        memset(&ev->u.sample, 0, sizeof ev->u.sample);
        st = etl_sampled_profile_decode(rec->payload, ptr, &ev->u.sample);
        break;
    case ETL_HOOK_PMC_COUNTER_PROF:
        ev->kind = ETL_EVENT_PMC_SAMPLE;
        memset(&ev->u.pmc_sample, 0, sizeof ev->u.pmc_sample);
        st = etl_pmc_sample_decode(rec->payload, ptr, &ev->u.pmc_sample);
        break;
    case ETL_HOOK_PROFILE_SET_INTERVAL:
    case ETL_HOOK_PROFILE_COLLECTION_START:
    case ETL_HOOK_PROFILE_COLLECTION_END:
        ev->kind = ETL_EVENT_PROFILE_INTERVAL;
        memset(&ev->u.interval, 0, sizeof ev->u.interval);
        st = etl_profile_interval_decode(rec->payload, &ev->u.interval);
        break;
    case ETL_HOOK_STACKWALK:
        ev->kind = ETL_EVENT_STACKWALK;
        memset(&ev->u.stack, 0, sizeof ev->u.stack);
        st = etl_stackwalk_decode(rec->payload, ptr, &ev->u.stack);
        break;
    case ETL_HOOK_STACK_KEY_DELETE:
    case ETL_HOOK_STACK_KEY_RUNDOWN:
        ev->kind = ETL_EVENT_STACK_KEY_DEF;
        memset(&ev->u.key_def, 0, sizeof ev->u.key_def);
        st = etl_stack_key_def_decode(rec->payload, ptr, &ev->u.key_def);
        break;
    case ETL_HOOK_STACK_KEY_KERNEL:
    case ETL_HOOK_STACK_KEY_USER:
        ev->kind = ETL_EVENT_STACK_KEY_REF;
        memset(&ev->u.key_ref, 0, sizeof ev->u.key_ref);
        st = etl_stack_key_ref_decode(rec->payload, ptr, &ev->u.key_ref);
        break;
    case ETL_HOOK_PROCESS_LOAD_IMAGE:
    case ETL_HOOK_IMAGE_UNLOAD:
    case ETL_HOOK_IMAGE_DC_START:
    case ETL_HOOK_IMAGE_DC_END:
    case ETL_HOOK_IMAGE_LOAD:
        ev->kind = ETL_EVENT_IMAGE;
        memset(&ev->u.image, 0, sizeof ev->u.image);
        st = etl_image_decode(rec->payload, ver, ptr, &ev->u.image);
        break;
    case ETL_HOOK_IMAGE_KERNEL_BASE:
        ev->kind = ETL_EVENT_IMAGE_KERNEL_BASE;
        memset(&ev->u.kernel_base, 0, sizeof ev->u.kernel_base);
        st = etl_image_kernel_base_decode(rec->payload, ptr, &ev->u.kernel_base);
        break;
    case ETL_HOOK_IMAGE_HYPERCALL_PAGE:
        ev->kind = ETL_EVENT_IMAGE_HYPERCALL_PAGE;
        memset(&ev->u.hypercall_page, 0, sizeof ev->u.hypercall_page);
        st = etl_image_hypercall_page_decode(rec->payload, ptr, &ev->u.hypercall_page);
        break;
    default: /* etl_event_hook_decodes must say false */
        return ETL_END;
    }
    ev->status = st;
    return st;
}

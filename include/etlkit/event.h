/*
 * etlkit/event.h - from a framed record to a decoded kernel event.
 *
 * etl_event_decode() picks the codec from the record's hook (SYSTEM, COMPACT and
 * PERFINFO headers) or from the classic kernel provider GUID and opcode (FULL and
 * INSTANCE headers, as Vista-era and relogged files carry Process, Thread and
 * Image events), with the record's event version and pointer size; and the
 * image-identity events of KernelTraceControl's merge from their provider GUID
 * and opcode (any header type). For a CSwitch it
 * also fills the time, the CPU and the PMC/PEBS items from the record header.
 * Nothing is allocated; strings and spans point into the record.
 */
#ifndef ETLKIT_EVENT_H
#define ETLKIT_EVENT_H

#include "etlkit/container.h"
#include "etlkit/kernel.h"
#include "etlkit/ccswap.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum etl_event_kind {
    ETL_EVENT_OTHER = 0,       /* not an event etlkit decodes */
    ETL_EVENT_CSWITCH,         /* 0x0524 */
    ETL_EVENT_CCSWAP_BATCH,    /* 0x0525: u.batch is an opened walker */
    ETL_EVENT_SPINLOCK,        /* 0x0529 */
    ETL_EVENT_READY_THREAD,    /* 0x0532 */
    ETL_EVENT_THREAD,          /* 0x0501..0x0504 */
    ETL_EVENT_THREAD_SET_NAME, /* 0x0548 */
    ETL_EVENT_PROCESS,         /* 0x0301..0x0304, 0x0327 */
    ETL_EVENT_GROUP_MASK,      /* 0x0005, 0x0020 */
    ETL_EVENT_SAMPLED_PROFILE, /* 0x0F2E */
    ETL_EVENT_PMC_SAMPLE,      /* 0x0F2F */
    ETL_EVENT_PROFILE_INTERVAL, /* 0x0F48..0x0F4A */
    ETL_EVENT_STACKWALK,       /* 0x1820 */
    ETL_EVENT_STACK_KEY_DEF,   /* 0x1823, 0x1824 */
    ETL_EVENT_STACK_KEY_REF,   /* 0x1825, 0x1826 */
    ETL_EVENT_IMAGE,           /* 0x030A, 0x1402..0x1404, 0x140A */
    ETL_EVENT_IMAGE_KERNEL_BASE, /* 0x1421 */
    ETL_EVENT_IMAGE_HYPERCALL_PAGE, /* 0x1422 */
    /* No hook (hook 0): provider etl_image_id_guid(), by opcode. */
    ETL_EVENT_IMAGE_ID,         /* ImageID (0x00): u.image_id */
    ETL_EVENT_IMAGE_DBGID_NONE, /* DbgID_NONE (0x20): u.dbgid, has_rsds false */
    ETL_EVENT_IMAGE_DBGID_RSDS, /* DbgID_RSDS (0x24): u.dbgid */
    ETL_EVENT_IMAGE_DBGID_ILRSDS, /* DbgID_ILRSDS (0x25): u.dbgid */
    ETL_EVENT_IMAGE_FILE_VERSION /* FileVersion (0x40): u.file_version */
} etl_event_kind;

typedef struct etl_event {
    etl_event_kind kind;
    etl_status status;   /* the codec's result; kind is set even when decoding failed */
    uint16_t hook;       /* kernel hook id (derived from GUID + opcode for FULL headers); 0 for ImageID events */
    uint16_t version;    /* event version the codec was given */
    union {
        etl_cswitch cswitch;
        etl_ccswap_walker batch;
        etl_spinlock spinlock;
        etl_ready_thread ready;
        etl_thread thread;
        etl_thread_setname set_name;
        etl_process process;
        etl_groupmask group_mask;
        etl_sampled_profile sample;
        etl_pmc_sample pmc_sample;
        etl_profile_interval interval;
        etl_stackwalk stack;
        etl_stack_key_def key_def;
        etl_stack_key_ref key_ref;
        etl_image image;
        etl_image_kernel_base kernel_base;
        etl_image_hypercall_page hypercall_page;
        etl_image_id image_id;
        etl_image_dbgid dbgid;
        etl_image_file_version file_version;
    } u;
} etl_event;

/*
 * The kernel hook a record stands for: its HookId, or for FULL/INSTANCE headers
 * whose provider is a classic kernel group GUID, (group << 8) | Class.Type.
 * Returns false when the record carries neither.
 */
ETL_API bool etl_record_kernel_hook(const etl_record *rec, uint16_t *hook);

/*
 * Decodes rec's payload. ETL_OK with ev->kind set; ETL_END (kind OTHER) for a
 * record etlkit has no codec for (ImageID-provider opcodes not listed above
 * included); a codec error (ETL_E_TRUNCATED, ...) with ev->kind set and
 * ev->status the same. Only the member of u that kind names is
 * written (zeroed first): the others hold what they held.
 */
ETL_API etl_status etl_event_decode(const etl_record *rec, etl_event *ev);

/*
 * etl_event_decode's u.cswitch for a CSwitch record (hook 0x0524), into *sw alone: the
 * hot path of readers that need no etl_event around it. Same result, same status.
 */
ETL_API etl_status etl_event_decode_cswitch(const etl_record *rec, etl_cswitch *sw);
/* The same from a walk's kernel record on CPU cpu (no etl_record framed). */
ETL_API etl_status etl_event_decode_cswitch_krec(const etl_krec *k, uint16_t cpu, etl_cswitch *sw);

/* Whether etl_event_decode has a codec for a kernel hook (it returns ETL_END for the others). */
ETL_API bool etl_event_hook_decodes(uint16_t hook);

/*
 * The whole record a walk's kernel record is (etl_record_frame over its own bytes),
 * with the CPU and buffer of w: for the few records a fast loop hands to etl_event_decode.
 */
ETL_API void etl_krec_record(const etl_walk *w, const etl_krec *k, etl_record *out);

#ifdef __cplusplus
}
#endif
#endif

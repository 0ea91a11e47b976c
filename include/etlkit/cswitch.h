/*
 * etlkit/cswitch.h - one context switch, as CSwitch (hook 0x0524, WMI_CONTEXTSWAP)
 * carries it, and as a compact batch (hook 0x0525) expands to it.
 *
 * The same struct serves both sources. `known` says which fields hold a value:
 * a compact record does not carry the new thread's priority, the wait mode, the
 * ideal processor and so on, and those bits stay clear instead of guessing.
 * Field names follow the spec (kernel-events.md section 5).
 */
#ifndef ETLKIT_CSWITCH_H
#define ETLKIT_CSWITCH_H

#include "etlkit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Bits of etl_cswitch.known. */
enum {
    ETL_CSW_TIME = 1u << 0,               /* ts */
    ETL_CSW_CPU = 1u << 1,                /* cpu */
    ETL_CSW_NEW_TID = 1u << 2,            /* new_tid */
    ETL_CSW_OLD_TID = 1u << 3,            /* old_tid */
    ETL_CSW_NEW_PRIORITY = 1u << 4,       /* new_priority */
    ETL_CSW_OLD_PRIORITY = 1u << 5,       /* old_priority */
    ETL_CSW_WAIT_REASON = 1u << 6,        /* old_wait_reason */
    ETL_CSW_WAIT_MODE = 1u << 7,          /* old_wait_mode */
    ETL_CSW_STATE = 1u << 8,              /* old_state */
    ETL_CSW_IDEAL_PROCESSOR = 1u << 9,    /* old_ideal_processor */
    ETL_CSW_NEW_WAIT_TIME = 1u << 10,     /* new_wait_time */
    ETL_CSW_REMAINING_QUANTUM = 1u << 11, /* old_remaining_quantum (v2+) */
    ETL_CSW_PREVIOUS_CSTATE = 1u << 12,   /* previous_cstate (v2+; v1: new_quantum) */
    ETL_CSW_SPARE_BYTE = 1u << 13,        /* spare_byte (v2+; v1: old_quantum) */
    ETL_CSW_FLAGS = 1u << 14,             /* flags byte 0x0D of v3/v4 and the bits split from it */
    ETL_CSW_PMC = 1u << 15,               /* pmc[0..pmc_count) */
    ETL_CSW_PEBS = 1u << 16               /* pebs_index */
};

/* Where a switch came from. */
typedef enum etl_cswitch_source {
    ETL_CSW_SRC_CSWITCH = 0,  /* a 0x0524 event */
    ETL_CSW_SRC_COMPACT = 1   /* a record of a 0x0525 batch */
} etl_cswitch_source;

typedef struct etl_cswitch {
    uint64_t ts;                 /* raw session clock (header time for 0x0524, rebuilt for compact) */
    uint32_t known;              /* ETL_CSW_* */
    uint16_t cpu;
    uint8_t version;             /* event version (1..4) of a 0x0524; the batch's for compact */
    uint8_t source;              /* etl_cswitch_source */

    uint32_t new_tid;            /* NewThreadId */
    uint32_t old_tid;            /* OldThreadId */
    int8_t new_priority;         /* NewThreadPriority */
    int8_t old_priority;         /* OldThreadPriority */
    uint8_t previous_cstate;     /* v2+ PreviousCState; v1 NewThreadQuantum */
    uint8_t spare_byte;          /* v2+ SpareByte (NewThreadPriorityDecrement); v1 OldThreadQuantum */
    uint8_t old_wait_reason;     /* OldThreadWaitReason (KWAIT_REASON) */
    uint8_t old_wait_mode;       /* OldThreadWaitMode (KPROCESSOR_MODE); v3/v4: Flags bit 0 */
    uint8_t old_state;           /* OldThreadState (KTHREAD_STATE) */
    uint8_t old_ideal_processor; /* OldThreadIdealProcessor (8 bits) */
    uint8_t flags;               /* v3/v4: raw byte 0x0D */
    uint8_t old_bam;             /* v3: OldBamEppImportant (1 bit); v4: OldThreadBamQosLevel (3 bits) */
    uint8_t new_bam;             /* v3: NewBamEppImportant (1 bit); v4: NewThreadBamQosLevel (3 bits) */
    uint8_t pmc_count;           /* PMC counters attached to the event header (0..7) */
    uint32_t new_wait_time;      /* NewThreadWaitTime (v2+, raw ticks) */
    int32_t old_remaining_quantum; /* OldThreadRemainingQuantum (v2+, signed) */
    uint64_t pebs_index;         /* PEBS index from the event header */
    uint64_t pmc[7];             /* PMC counters from the event header */
} etl_cswitch;

#ifdef __cplusplus
}
#endif
#endif

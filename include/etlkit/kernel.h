/*
 * etlkit/kernel.h - NT Kernel Logger payload codecs: the event data that follows
 * a record's trace header (and its PEBS/PMC items), decoded into structs and
 * encoded back byte for byte. Spec: kernel-events.md sections 3, 5, 7-11.
 *
 * Conventions shared by every codec below:
 *
 *   decode(payload, [version], [ptr_size], out)
 *     ETL_OK; ETL_E_TRUNCATED when the payload is shorter than the layout needs
 *     (a longer payload is fine: the tail is ignored); ETL_E_CORRUPT when a field
 *     holds an impossible value; ETL_E_INVALID_ARG for a NULL out or a pointer
 *     size other than 4 or 8. Decoders are pure: no I/O, no allocation; strings
 *     are views into the payload (etl_kstr), so the payload must outlive out.
 *
 *   encode(in, [version], [ptr_size], out, cap, len)
 *     Writes exactly the kernel's layout and sets *len to the bytes written.
 *     ETL_E_RANGE when cap is too small (then *len = the size needed, so
 *     encode(in, ..., NULL, 0, &n) asks for the size) or when a value does not
 *     fit its field (then *len = 0).
 *
 *   ptr_size is the event's pointer width (4 for a ...32 header type, 8 for
 *   ...64), never the host's.
 *
 *   An event version newer than the newest layout known here decodes and
 *   encodes as that newest layout (its new fields, if any, are in the ignored
 *   tail); CSwitch version 0 uses the version 1 layout.
 */
#ifndef ETLKIT_KERNEL_H
#define ETLKIT_KERNEL_H

#include "etlkit/base.h"
#include "etlkit/cswitch.h"
/* compact batches: etlkit/ccswap.h */

#ifdef __cplusplus
extern "C" {
#endif

/* Hook ids (HookId = Group << 8 | Type) decoded by this header. */
enum {
    ETL_HOOK_HEADER = 0x0000,           /* WMI_LOG_TYPE_HEADER */
    ETL_HOOK_HEADER_EXTENSION = 0x0005, /* WMI_LOG_TYPE_HEADER_EXTENSION: etl_groupmask */
    ETL_HOOK_GROUP_MASKS_END = 0x0020,  /* WMI_LOG_TYPE_GROUP_MASKS_END: etl_groupmask */
    ETL_HOOK_PROCESS_START = 0x0301,    /* etl_process, also 0x0302..0x0304 */
    ETL_HOOK_PROCESS_END = 0x0302,
    ETL_HOOK_PROCESS_DC_START = 0x0303,
    ETL_HOOK_PROCESS_DC_END = 0x0304,
    ETL_HOOK_PROCESS_DEFUNCT = 0x0327,
    ETL_HOOK_THREAD_START = 0x0501,     /* etl_thread, also 0x0502..0x0504 */
    ETL_HOOK_THREAD_END = 0x0502,
    ETL_HOOK_THREAD_DC_START = 0x0503,
    ETL_HOOK_THREAD_DC_END = 0x0504,
    ETL_HOOK_CSWITCH = 0x0524,          /* etl_cswitch */
    ETL_HOOK_CSWITCH_BATCH = 0x0525,    /* PERFINFO_CCSWAP_BUFFER: etlkit/ccswap.h */
    ETL_HOOK_SPINLOCK = 0x0529,         /* etl_spinlock */
    ETL_HOOK_READY_THREAD = 0x0532,     /* etl_ready_thread */
    ETL_HOOK_THREAD_SET_NAME = 0x0548   /* etl_thread_setname */
};

/*
 * A NUL-terminated string inside a payload: ANSI (1 byte a unit) or UTF-16LE
 * (2 bytes a unit). text excludes the terminator. A string that runs to the
 * end of the payload without a NUL is still returned, with terminated false;
 * the strings the layout puts after it are then absent. Encoders always write
 * the terminator and reject text that holds a NUL unit or (UTF-16) an odd length.
 */
typedef struct etl_kstr {
    etl_span text;
    bool terminated;
} etl_kstr;

/* ---------------------------------------------------------------- CSwitch */

/*
 * WMI_CONTEXTSWAP (hook 0x0524), versions 1..4 (spec section 5). Fills the
 * payload fields, version, source = ETL_CSW_SRC_CSWITCH and the payload bits of
 * known; leaves ts, cpu, pmc_count, pmc, pebs_index and their known bits alone
 * (the caller fills them from the record header). Fields a version does not
 * carry are zeroed. v1: 16 bytes, previous_cstate/spare_byte hold
 * NewThreadQuantum/OldThreadQuantum. v2+: 24 bytes. v3/v4 split byte 0x0D into
 * old_wait_mode, old_bam, new_bam (and keep the raw byte in flags).
 * Version 0 decodes as the v1 layout and versions above 4 as the v4 layout, if
 * the payload is long enough for that layout (else ETL_E_TRUNCATED).
 * A field holding all ones where no kernel writes them (NewThreadId, OldThreadId,
 * the priorities, wait reason, state, v1/v2 wait mode, v2+ PreviousCState, the
 * ideal processor, NewThreadWaitTime: what
 * convert writes for a field a compact batch does not carry) is not known.
 */
ETL_API etl_status etl_cswitch_decode(etl_span payload, unsigned version, etl_cswitch *out);

/*
 * The inverse. v3/v4 build byte 0x0D from old_wait_mode, old_bam and new_bam
 * (ETL_E_RANGE if they do not fit 1/1/1 or 1/3/3 bits) and carry over only the
 * reserved bits of in->flags (v3 bits 3-7, v4 bit 7), so real bytes re-encode
 * exactly. v1/v2 write old_wait_mode as the whole byte.
 */
ETL_API etl_status etl_cswitch_encode(const etl_cswitch *in, unsigned version, uint8_t *out, size_t cap,
                              size_t *len);

/* Payload size of a CSwitch version: 16 for version <= 1, else 24. */
ETL_API size_t etl_cswitch_size(unsigned version);

/*
 * The hot path's part of etl_cswitch_decode: new_tid, old_tid, old_state and their
 * known bits (NEW_TID, OLD_TID, STATE) as it would set them; the other fields are left
 * as they were. false (ETL_E_TRUNCATED for etl_cswitch_decode) when the payload is short.
 */
static inline bool etl_cswitch_decode_ids(etl_span payload, unsigned version, etl_cswitch *out)
{
    if (payload.n < (version <= 1 ? 16u : 24u)) return false; /* etl_cswitch_size */
    const uint8_t *p = payload.p;
    out->new_tid = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    out->old_tid = (uint32_t)p[4] | (uint32_t)p[5] << 8 | (uint32_t)p[6] << 16 | (uint32_t)p[7] << 24;
    out->old_state = p[0x0E];
    out->known = (out->new_tid != UINT32_MAX ? (uint32_t)ETL_CSW_NEW_TID : 0u) |
                 (out->old_tid != UINT32_MAX ? (uint32_t)ETL_CSW_OLD_TID : 0u) |
                 (out->old_state != 0xFF ? (uint32_t)ETL_CSW_STATE : 0u);
    return true;
}

/* --------------------------------------------------------------- SpinLock */

/* Bits of WMI_SPINLOCK.Flags. */
enum {
    ETL_SPINLOCK_ACQUIRE_MODE_MASK = 0x3F, /* AcquireMode, see etl_spinlock_acquire_mode_name */
    ETL_SPINLOCK_EXECUTE_DPC = 0x40,       /* ExecuteDpc (meaning UNKNOWN) */
    ETL_SPINLOCK_EXECUTE_ISR = 0x80        /* ExecuteIsr (meaning UNKNOWN) */
};

/* WMI_SPINLOCK (hook 0x0529, spec section 7): 0x30 bytes x86, 0x38 x64. */
typedef struct etl_spinlock {
    uint64_t spin_lock_address;   /* SpinLockAddress */
    uint64_t caller_address;      /* CallerAddress */
    uint64_t acquire_time;        /* AcquireTime (rdtsc) */
    uint64_t release_time;        /* ReleaseTime (rdtsc) */
    uint32_t wait_time_in_cycles; /* WaitTimeInCycles */
    uint32_t spin_count;          /* SpinCount */
    uint32_t thread_id;           /* ThreadId */
    uint32_t interrupt_count;     /* InterruptCount */
    uint8_t irql;                 /* Irql */
    uint8_t acquire_depth;        /* AcquireDepth */
    uint8_t flags;                /* Flags, raw; the encoder builds it from the next three */
    uint8_t acquire_mode;         /* Flags & 0x3F */
    bool execute_dpc;             /* Flags bit 6 */
    bool execute_isr;             /* Flags bit 7 */
    bool has_reserved;            /* the 6.3+ form with Reserved[5] */
    uint8_t reserved[5];          /* Reserved[5] (6.3+) */
} etl_spinlock;

/*
 * Accepts the pre-6.3 form without Reserved (0x2B / 0x33 bytes) and the 6.3+
 * form; has_reserved says which. The encoder writes the form has_reserved picks.
 */
ETL_API etl_status etl_spinlock_decode(etl_span payload, unsigned ptr_size, etl_spinlock *out);
ETL_API etl_status etl_spinlock_encode(const etl_spinlock *in, unsigned ptr_size, uint8_t *out, size_t cap,
                               size_t *len);

/* Hold time in cycles: ReleaseTime - AcquireTime, or 0 if ReleaseTime < AcquireTime. */
ETL_API uint64_t etl_spinlock_hold_cycles(const etl_spinlock *s);

/* ---------------------------------------------- SpinLock sampling parameters */

enum {
    ETL_SPINLOCK_INFO_CLASS = 5,     /* EventTraceSpinlockInformation */
    ETL_SPINLOCK_INFO_V1_SIZE = 0x10,
    ETL_SPINLOCK_INFO_SIZE = 0x14
};

/* EVENT_TRACE_SPINLOCK_INFORMATION (spec section 8). */
typedef struct etl_spinlock_info {
    uint32_t spin_lock_spin_threshold;         /* SpinLockSpinThreshold, >= 1 */
    uint32_t spin_lock_acquire_sample_rate;    /* SpinLockAcquireSampleRate, >= 1000 */
    uint32_t spin_lock_contention_sample_rate; /* SpinLockContentionSampleRate, >= 1 */
    uint32_t spin_lock_hold_threshold;         /* SpinLockHoldThreshold, 0 or >= 1000000 */
    bool has_hold_threshold;                   /* the 0x14-byte 6.3+ form, with the above */
} etl_spinlock_info;

/*
 * Decodes the 0x10 or 0x14-byte form (has_hold_threshold says which);
 * ETL_E_CORRUPT if the first dword is not 5. The encoder writes the form
 * has_hold_threshold picks, with the class dword 5.
 */
ETL_API etl_status etl_spinlock_info_decode(etl_span payload, etl_spinlock_info *out);
ETL_API etl_status etl_spinlock_info_encode(const etl_spinlock_info *in, uint8_t *out, size_t cap,
                                    size_t *len);

/* The kernel's defaults (each field's least permitted value): 1, 1000, 1, 1000000. */
ETL_API etl_spinlock_info etl_spinlock_info_defaults(void);

/*
 * ETL_OK, or ETL_E_INVALID_ARG for the first field below the kernel's minimum
 * (the kernel answers STATUS_INVALID_PARAMETER), with a message such as
 * "SpinLockAcquireSampleRate 999 is below the minimum 1000" in diag (may be NULL).
 * Without has_hold_threshold the hold threshold is not checked.
 */
ETL_API etl_status etl_spinlock_info_validate(const etl_spinlock_info *info, etl_diag *diag);

/*
 * The hold-threshold comparison. The spec's rule says "held for more than
 * SpinLockHoldThreshold cycles" while the WMI_SPINLOCK page says "at least a
 * million cycles" (UNKNOWN which the kernel does). We follow the rule as
 * stated, a strict ">": with the default 1000000, a hold of exactly 1000000
 * cycles is not logged by rule 1.
 */
#define ETL_SPINLOCK_HOLD_RULE_STRICT 1

/* Per-processor running counts (the kernel keeps them in the KPRCB). */
typedef struct etl_spinlock_cpu_counters {
    uint64_t contended;   /* acquisitions with spin_count > 0 */
    uint64_t uncontended; /* acquisitions with spin_count == 0 */
} etl_spinlock_cpu_counters;

/* The kernel's sampling decision over caller-provided per-CPU storage. */
typedef struct etl_spinlock_sampler {
    etl_spinlock_info cfg;
    etl_spinlock_cpu_counters *per_cpu;
    unsigned ncpu;
} etl_spinlock_sampler;

/*
 * Validates cfg (as etl_spinlock_info_validate, ETL_E_INVALID_ARG if invalid
 * or per_cpu is NULL with ncpu > 0) and zeroes per_cpu[0..ncpu). No allocation:
 * per_cpu must outlive s.
 */
ETL_API etl_status etl_spinlock_sampler_init(etl_spinlock_sampler *s, const etl_spinlock_info *cfg,
                                     etl_spinlock_cpu_counters *per_cpu, unsigned ncpu);

/*
 * One spin lock release on processor cpu: whether the kernel writes a 0x0529
 * event (spec 8.1). First the acquisition is counted: spin_count > 0 adds one
 * to the processor's contended count, spin_count == 0 to its uncontended count.
 * Then the event is written if any of
 *   1. the config has a hold threshold, it is non-zero and hold_cycles > it;
 *   2. spin_count >= SpinLockSpinThreshold and the contended count is a
 *      multiple of SpinLockContentionSampleRate;
 *   3. spin_count == 0 and the uncontended count is a multiple of
 *      SpinLockAcquireSampleRate.
 * A cpu >= ncpu counts nothing and returns false.
 */
ETL_API bool etl_spinlock_should_log(etl_spinlock_sampler *s, unsigned cpu, uint32_t spin_count,
                             uint64_t hold_cycles);

/* ------------------------------------------------------------ ReadyThread */

/* ETW_READY_THREAD_EVENT.Flags */
enum {
    ETL_READY_EXECUTING_DPC = 0x1,            /* readied from a DPC */
    ETL_READY_KERNEL_STACK_NOT_RESIDENT = 0x2,
    ETL_READY_PROCESS_OUT_OF_MEMORY = 0x4,    /* address space swapped out */
    ETL_READY_DIRECT_SWITCH_ATTEMPT = 0x8
};

/* ETW_READY_THREAD_EVENT (hook 0x0532, spec 10.1): 8 bytes on x86 and x64. */
typedef struct etl_ready_thread {
    uint32_t thread_id;       /* ThreadId (MOF TThreadId): the thread being readied */
    uint8_t adjust_reason;    /* AdjustReason, see etl_adjust_reason_name */
    int8_t adjust_increment;  /* AdjustIncrement */
    uint8_t flags;            /* Flags, ETL_READY_* */
    uint8_t reserved;         /* Reserved / SpareByte */
} etl_ready_thread;

ETL_API etl_status etl_ready_thread_decode(etl_span payload, etl_ready_thread *out);
ETL_API etl_status etl_ready_thread_encode(const etl_ready_thread *in, uint8_t *out, size_t cap,
                                   size_t *len);

/* ----------------------------------------------------------------- Thread */

/* Bits of etl_thread.known: which groups of fields the version carried. */
enum {
    ETL_THR_IDS = 1u << 0,        /* process_id, thread_id */
    ETL_THR_STACKS = 1u << 1,     /* stack_base .. win32_start_address */
    ETL_THR_WAIT_MODE = 1u << 2,  /* wait_mode (v1 long form) */
    ETL_THR_TEB = 1u << 3,        /* teb_base, sub_process_tag (v2+) */
    ETL_THR_PRIORITIES = 1u << 4, /* base/page/io_priority, flags (v3+) */
    ETL_THR_NAME = 1u << 5        /* thread_name (v4; v3 when bytes follow) */
};

/*
 * Thread Start/End/DCStart/DCEnd (hooks 0x0501..0x0504, spec 10.2):
 *   v0  {ThreadId, ProcessId} - note the order;
 *   v1  {ProcessId, ThreadId} for End/DCEnd (8 bytes); Start/DCStart add six
 *       pointers and WaitMode. Both forms share the version, so the decoder
 *       picks the long form when the payload holds it, else the short form;
 *   v2  WMI_EXTENDED_THREAD_INFORMATION: 0x28 / 0x44 bytes;
 *   v3  + BasePriority, PagePriority, IoPriority, Flags: 0x2C / 0x48 bytes, and
 *       a UTF-16 ThreadName when bytes follow (as TraceEvent reads it);
 *   v4  + ThreadName (UTF-16, NUL-terminated, possibly empty).
 * The encoder writes the v1 long form only if known has ETL_THR_STACKS, and the
 * v3 name only if known has ETL_THR_NAME; v4 always writes a name.
 */
typedef struct etl_thread {
    uint32_t known;               /* ETL_THR_* */
    uint8_t version;              /* event version decoded (as given, capped at 255) */
    uint32_t process_id;          /* ProcessId */
    uint32_t thread_id;           /* ThreadId (MOF TThreadId) */
    uint64_t stack_base;          /* StackBase */
    uint64_t stack_limit;         /* StackLimit */
    uint64_t user_stack_base;     /* UserStackBase */
    uint64_t user_stack_limit;    /* UserStackLimit */
    uint64_t start_address;       /* StartAddr / Affinity (a union in ntwmi.h) */
    uint64_t win32_start_address; /* Win32StartAddr */
    uint64_t teb_base;            /* TebBase (v2+) */
    uint32_t sub_process_tag;     /* SubProcessTag (v2+) */
    int8_t wait_mode;             /* WaitMode (v1 long form) */
    uint8_t base_priority;        /* BasePriority (v3+) */
    uint8_t page_priority;        /* PagePriority (v3+) */
    uint8_t io_priority;          /* IoPriority (v3+) */
    uint8_t flags;                /* Flags (v3+) */
    etl_kstr thread_name;         /* ThreadName (UTF-16LE) */
} etl_thread;

ETL_API etl_status etl_thread_decode(etl_span payload, unsigned version, unsigned ptr_size,
                             etl_thread *out);
ETL_API etl_status etl_thread_encode(const etl_thread *in, unsigned version, unsigned ptr_size,
                             uint8_t *out, size_t cap, size_t *len);

/* Thread SetName (hook 0x0548): {ProcessId, ThreadId, ThreadName UTF-16}. */
typedef struct etl_thread_setname {
    uint32_t process_id;
    uint32_t thread_id;
    etl_kstr thread_name;
} etl_thread_setname;

ETL_API etl_status etl_thread_setname_decode(etl_span payload, etl_thread_setname *out);
ETL_API etl_status etl_thread_setname_encode(const etl_thread_setname *in, uint8_t *out, size_t cap,
                                     size_t *len);

/* ---------------------------------------------------------------- Process */

/* Bits of etl_process.known. */
enum {
    ETL_PROC_KEY = 1u << 0,          /* unique_process_key (v2+) */
    ETL_PROC_IDS = 1u << 1,          /* process_id, parent_id */
    ETL_PROC_SESSION = 1u << 2,      /* session_id, exit_status (v1+) */
    ETL_PROC_DTB = 1u << 3,          /* directory_table_base (v3+; v1 PageDirectoryBase) */
    ETL_PROC_FLAGS = 1u << 4,        /* flags (v4+) */
    ETL_PROC_SID = 1u << 5,          /* the UserSID field was read (user_sid may be empty) */
    ETL_PROC_IMAGE = 1u << 6,        /* image_file_name */
    ETL_PROC_COMMAND_LINE = 1u << 7, /* command_line (v2+) */
    ETL_PROC_PACKAGE = 1u << 8,      /* package_full_name (v4+) */
    ETL_PROC_APP_ID = 1u << 9,       /* application_id (v4+) */
    ETL_PROC_EXIT_TIME = 1u << 10    /* exit_time (v5) */
};

/* etl_process.flags */
enum {
    ETL_PROC_FLAG_APPLICATION_ID = 0x1,
    ETL_PROC_FLAG_WOW64 = 0x2,
    ETL_PROC_FLAG_PROTECTED = 0x4,
    ETL_PROC_FLAG_PACKAGED = 0x8
};

/*
 * Process Start/End/DCStart/DCEnd/Defunct (hooks 0x0301..0x0304, 0x0327,
 * spec 10.3; v0/v1 from Microsoft's Vista-era kernel MOF):
 *   v0  ProcessId (ptr), ParentId (ptr), UserSID, ImageFileName;
 *   v1  PageDirectoryBase (ptr), ProcessId, ParentId, SessionId, ExitStatus,
 *       UserSID, ImageFileName;
 *   v2  UniqueProcessKey (ptr) in place of PageDirectoryBase, + CommandLine;
 *   v3  + DirectoryTableBase (ptr) after ExitStatus;
 *   v4  + Flags before UserSID, + PackageFullName, ApplicationId;
 *   v5  (seen on Defunct events of Windows 10 1903) v4 + an 8-byte FILETIME,
 *       named exit_time here (our inference: it lies just before the trace end).
 * ImageFileName is ANSI, the other strings UTF-16LE.
 *
 * UserSID: if its first ULONG is 0 it is 4 bytes and there is no SID; else a
 * TOKEN_USER of two pointers followed by a SID of 8 + 4 * SubAuthorityCount
 * bytes (count = SID byte 1, at most 15, else ETL_E_CORRUPT). One exception:
 * a TOKEN_USER that is entirely zero followed by a plausible SID (revision 1,
 * count <= 15, fits) is read as TOKEN_USER + SID - syzygy-process-32bit.etl
 * was written that way. The encoder refuses (ETL_E_RANGE) what it could not
 * write unambiguously: a SID whose length is not 8 + 4 * count, token_user[0]
 * with a zero low ULONG unless the whole TOKEN_USER is zero and the SID
 * revision is 1, and (no SID) strings whose bytes would read back as a zeroed
 * TOKEN_USER + SID.
 *
 * Strings are read while bytes remain: a string cut by the payload's end is
 * returned with terminated false and the later ones are absent (known bit
 * clear); only the fixed part, the SID and the v5 time give ETL_E_TRUNCATED.
 */
typedef struct etl_process {
    uint32_t known;                /* ETL_PROC_* */
    uint8_t version;               /* event version decoded (as given, capped at 255) */
    uint64_t unique_process_key;   /* UniqueProcessKey (EPROCESS address) */
    uint32_t process_id;           /* ProcessId */
    uint32_t parent_id;            /* ParentId */
    uint32_t session_id;           /* SessionId */
    int32_t exit_status;           /* ExitStatus (NTSTATUS) */
    uint64_t directory_table_base; /* DirectoryTableBase; v1 PageDirectoryBase */
    uint32_t flags;                /* Flags, ETL_PROC_FLAG_* (v4+) */
    uint64_t token_user[2];        /* TOKEN_USER's two pointer-size words, with a SID */
    etl_span user_sid;             /* the SID bytes, empty when the event has none */
    etl_kstr image_file_name;      /* ImageFileName (ANSI) */
    etl_kstr command_line;         /* CommandLine (UTF-16LE, v2+) */
    etl_kstr package_full_name;    /* PackageFullName (UTF-16LE, v4+) */
    etl_kstr application_id;       /* ApplicationId (UTF-16LE, v4+) */
    uint64_t exit_time;            /* v5: FILETIME after the strings (name inferred) */
} etl_process;

ETL_API etl_status etl_process_decode(etl_span payload, unsigned version, unsigned ptr_size,
                              etl_process *out);
ETL_API etl_status etl_process_encode(const etl_process *in, unsigned version, unsigned ptr_size,
                              uint8_t *out, size_t cap, size_t *len);

/* ------------------------------------------------------------ Group masks */

/*
 * Group-mask constants: bits 29-31 index PERFINFO_GROUPMASK.Masks[], bits 0-28
 * are the bits in it (spec section 11; phnt ntwmi.h). Masks[0] is the
 * documented EVENT_TRACE_FLAG_* EnableFlags.
 */
#define ETL_PERF_PROCESS             0x00000001u
#define ETL_PERF_THREAD              0x00000002u
#define ETL_PERF_PROC_THREAD         0x00000003u /* PROCESS | THREAD */
#define ETL_PERF_LOADER              0x00000004u
#define ETL_PERF_PERF_COUNTER        0x00000008u
#define ETL_PERF_FILENAME            0x00000200u
#define ETL_PERF_DISK_IO             0x00000300u /* DISK_FILE_IO | DISK_IO */
#define ETL_PERF_DISK_IO_INIT        0x00000400u
#define ETL_PERF_ALL_FAULTS          0x00001000u
#define ETL_PERF_HARD_FAULTS         0x00002000u
#define ETL_PERF_VAMAP               0x00008000u
#define ETL_PERF_NETWORK             0x00010000u
#define ETL_PERF_REGISTRY            0x00020000u
#define ETL_PERF_DBGPRINT            0x00040000u
#define ETL_PERF_JOB                 0x00080000u
#define ETL_PERF_ALPC                0x00100000u
#define ETL_PERF_SPLIT_IO            0x00200000u
#define ETL_PERF_DEBUG_EVENTS        0x00400000u
#define ETL_PERF_FILE_IO             0x02000000u
#define ETL_PERF_FILE_IO_INIT        0x04000000u
#define ETL_PERF_NO_SYSCONFIG        0x10000000u
#define ETL_PERF_MEMORY              0x20000001u
#define ETL_PERF_PROFILE             0x20000002u
#define ETL_PERF_CONTEXT_SWITCH      0x20000004u
#define ETL_PERF_FOOTPRINT           0x20000008u
#define ETL_PERF_DRIVERS             0x20000010u
#define ETL_PERF_REFSET              0x20000020u
#define ETL_PERF_POOL                0x20000040u
#define ETL_PERF_POOLTRACE           0x20000041u /* MEMORY | POOL */
#define ETL_PERF_DPC                 0x20000080u
#define ETL_PERF_COMPACT_CSWITCH     0x20000100u
#define ETL_PERF_DISPATCHER          0x20000200u
#define ETL_PERF_PMC_PROFILE         0x20000400u
#define ETL_PERF_PROFILING           0x20000402u /* PROFILE | PMC_PROFILE */
#define ETL_PERF_PROCESS_INSWAP      0x20000800u
#define ETL_PERF_AFFINITY            0x20001000u
#define ETL_PERF_PRIORITY            0x20002000u
#define ETL_PERF_INTERRUPT           0x20004000u
#define ETL_PERF_VIRTUAL_ALLOC       0x20008000u
#define ETL_PERF_SPINLOCK            0x20010000u
#define ETL_PERF_SYNC_OBJECTS        0x20020000u
#define ETL_PERF_DPC_QUEUE           0x20040000u
#define ETL_PERF_MEMINFO             0x20080000u
#define ETL_PERF_CONTMEM_GEN         0x20100000u
#define ETL_PERF_SPINLOCK_CNTRS      0x20200000u
#define ETL_PERF_SPININSTR           0x20210000u /* SPINLOCK | SPINLOCK_CNTRS */
#define ETL_PERF_SESSION             0x20400000u /* also PERF_PFSECTION */
#define ETL_PERF_MEMINFO_WS          0x20800000u
#define ETL_PERF_KERNEL_QUEUE        0x21000000u
#define ETL_PERF_INTERRUPT_STEER     0x22000000u
#define ETL_PERF_SHOULD_YIELD        0x24000000u
#define ETL_PERF_WS                  0x28000000u
#define ETL_PERF_ANTI_STARVATION     0x40000001u
#define ETL_PERF_PROCESS_FREEZE      0x40000002u
#define ETL_PERF_PFN_LIST            0x40000004u
#define ETL_PERF_WS_DETAIL           0x40000008u
#define ETL_PERF_WS_ENTRY            0x40000010u
#define ETL_PERF_HEAP                0x40000020u
#define ETL_PERF_SYSCALL             0x40000040u
#define ETL_PERF_UMS                 0x40000080u
#define ETL_PERF_BACKTRACE           0x40000100u
#define ETL_PERF_VULCAN              0x40000200u
#define ETL_PERF_OBJECTS             0x40000400u
#define ETL_PERF_EVENTS              0x40000800u
#define ETL_PERF_FULLTRACE           0x40001000u
#define ETL_PERF_DFSS                0x40002000u
#define ETL_PERF_PREFETCH            0x40004000u
#define ETL_PERF_PROCESSOR_IDLE      0x40008000u
#define ETL_PERF_CPU_CONFIG          0x40010000u
#define ETL_PERF_TIMER               0x40020000u
#define ETL_PERF_CLOCK_INTERRUPT     0x40040000u
#define ETL_PERF_LOAD_BALANCER       0x40080000u
#define ETL_PERF_CLOCK_TIMER         0x40100000u
#define ETL_PERF_IDLE_SELECTION      0x40200000u
#define ETL_PERF_IPI                 0x40400000u
#define ETL_PERF_IO_TIMER            0x40800000u
#define ETL_PERF_REG_HIVE            0x41000000u
#define ETL_PERF_REG_NOTIF           0x42000000u
#define ETL_PERF_PPM_EXIT_LATENCY    0x44000000u
#define ETL_PERF_WORKER_THREAD       0x48000000u
#define ETL_PERF_OPTICAL_IO          0x80000001u
#define ETL_PERF_OPTICAL_IO_INIT     0x80000002u
#define ETL_PERF_DLL_INFO            0x80000008u
#define ETL_PERF_DLL_FLUSH_WS        0x80000010u
#define ETL_PERF_OB_HANDLE           0x80000040u
#define ETL_PERF_OB_OBJECT           0x80000080u
#define ETL_PERF_WAKE_DROP           0x80000200u
#define ETL_PERF_WAKE_EVENT          0x80000400u
#define ETL_PERF_DEBUGGER            0x80000800u
#define ETL_PERF_PROC_ATTACH         0x80001000u
#define ETL_PERF_WAKE_COUNTER        0x80002000u
#define ETL_PERF_POWER               0x80008000u
#define ETL_PERF_SOFT_TRIM           0x80010000u
#define ETL_PERF_CC                  0x80020000u
#define ETL_PERF_FLT_IO_INIT         0x80080000u
#define ETL_PERF_FLT_IO              0x80100000u
#define ETL_PERF_FLT_FASTIO          0x80200000u
#define ETL_PERF_FLT_IO_FAILURE      0x80400000u
#define ETL_PERF_HV_PROFILE          0x80800000u
#define ETL_PERF_WDF_DPC             0x81000000u
#define ETL_PERF_WDF_INTERRUPT       0x82000000u
#define ETL_PERF_CACHE_FLUSH         0x84000000u
#define ETL_PERF_HIBER_RUNDOWN       0xA0000001u
#define ETL_PERF_SYSCFG_SYSTEM       0xC0000001u
#define ETL_PERF_SYSCFG_GRAPHICS     0xC0000002u
#define ETL_PERF_SYSCFG_STORAGE      0xC0000004u
#define ETL_PERF_SYSCFG_NETWORK      0xC0000008u
#define ETL_PERF_SYSCFG_SERVICES     0xC0000010u
#define ETL_PERF_SYSCFG_PNP          0xC0000020u
#define ETL_PERF_SYSCFG_OPTICAL      0xC0000040u
#define ETL_PERF_SYSCFG_ALL          0xDFFFFFFFu
#define ETL_PERF_CLUSTER_OFF         0xE0000001u /* PERF_MARK_WITH_FLUSH */
#define ETL_PERF_MEMORY_CONTROL      0xE0000002u

enum { ETL_GROUPMASK_SIZE = 0x24 };

/* ETW_KERNEL_HEADER_EXTENSION (hooks 0x0005 and 0x0020, spec section 11). */
typedef struct etl_groupmask {
    uint32_t masks[8];             /* PERFINFO_GROUPMASK.Masks (MOF GroupMask1..8) */
    uint32_t kernel_event_version; /* Version / KernelEventVersion */
} etl_groupmask;

ETL_API etl_status etl_groupmask_decode(etl_span payload, etl_groupmask *out);
ETL_API etl_status etl_groupmask_encode(const etl_groupmask *in, uint8_t *out, size_t cap, size_t *len);

/* True if any bit of perf_const is set in its mask (the kernel's PerfIsGroupOnInGroupMask). */
ETL_API bool etl_groupmask_test(const etl_groupmask *m, uint32_t perf_const);

/* Sets / clears perf_const's bits in its mask. */
ETL_API void etl_groupmask_set(etl_groupmask *m, uint32_t perf_const);
ETL_API void etl_groupmask_clear(etl_groupmask *m, uint32_t perf_const);

/*
 * Names of the set flags, one per single-bit constant ("PERF_CONTEXT_SWITCH";
 * Masks[0] bits without a PERF_ alias by their EVENT_TRACE_FLAG_ name), in mask
 * order. Writes up to cap names and returns how many there are (which may be
 * more than cap). Set bits that no constant names are not listed.
 */
ETL_API size_t etl_groupmask_names(const etl_groupmask *m, const char **names, size_t cap);

/* ------------------------------------------------------------------ Names */

/* Each returns NULL for a value it does not know; callers print the number. */
ETL_API const char *etl_wait_reason_name(unsigned v);            /* KWAIT_REASON 0..42, "WrQueue" */
ETL_API const char *etl_thread_state_name(unsigned v);           /* KTHREAD_STATE 0..9 */
ETL_API const char *etl_processor_mode_name(unsigned v);         /* KPROCESSOR_MODE: KernelMode, UserMode */
ETL_API const char *etl_spinlock_acquire_mode_name(unsigned v);  /* WMI_SPINLOCK AcquireMode 0..4 */
ETL_API const char *etl_adjust_reason_name(unsigned v);          /* ReadyThread AdjustReason 0..2 */

/* "Group/Event" for a hook id ("Thread/CSwitch"), TraceEvent's names where it has one. */
ETL_API const char *etl_hook_name(uint16_t hook);

/* A kernel group (HookId >> 8): its name ("Thread") and consumer provider GUID. */
ETL_API const char *etl_group_name(unsigned group);
ETL_API const etl_guid *etl_group_guid(unsigned group);

#define ETL_HOOK_UNKNOWN (-1)
#define ETL_HOOK_AMBIGUOUS (-2)

/*
 * A hook id from a name, case-insensitive: "Thread/CSwitch", a bare event name
 * when only one group has it ("CSwitch"; "Start" is ETL_HOOK_AMBIGUOUS), or a
 * number ("0x0524", "1316", any value up to 0xFFFF). ETL_HOOK_UNKNOWN otherwise.
 * A name two ids share ("Image/Load": 0x030A, and 0x140A for relogged files)
 * gives the lower id.
 */
ETL_API int etl_hook_by_name(const char *name);

/*
 * MaximumWaitReason of the kernel with this build number (TRACE_LOGFILE_HEADER
 * ProviderVersion): the CCSWAP StateWr bias. Thresholds and evidence in names.c.
 */
ETL_API unsigned etl_max_wait_reason_for_build(uint32_t build);

/* ------------------------------------------ SampledProfile, stacks, images */

/*
 * The events a CPU profile is built from (issue 20): PerfInfo sampled-profile
 * interrupts and their intervals, StackWalk stacks in the plain and the cached
 * (stack key) forms, and Image loads. Hook ids below; the layouts and their
 * sources are in each struct's comment and in src/kernel/perfinfo.c,
 * stackwalk.c and image.c.
 */
enum {
    ETL_HOOK_SAMPLED_PROFILE = 0x0F2E,     /* etl_sampled_profile */
    ETL_HOOK_PMC_COUNTER_PROF = 0x0F2F,    /* etl_pmc_sample */
    ETL_HOOK_PROFILE_SET_INTERVAL = 0x0F48, /* etl_profile_interval, also 0x0F49, 0x0F4A */
    ETL_HOOK_PROFILE_COLLECTION_START = 0x0F49,
    ETL_HOOK_PROFILE_COLLECTION_END = 0x0F4A,
    ETL_HOOK_PROCESS_LOAD_IMAGE = 0x030A,  /* etl_image (Image/Load as the kernel logs it) */
    ETL_HOOK_IMAGE_UNLOAD = 0x1402,        /* etl_image */
    ETL_HOOK_IMAGE_DC_START = 0x1403,
    ETL_HOOK_IMAGE_DC_END = 0x1404,
    ETL_HOOK_IMAGE_LOAD = 0x140A,          /* Image/Load in relogged files */
    ETL_HOOK_IMAGE_KERNEL_BASE = 0x1421,   /* etl_image_kernel_base */
    ETL_HOOK_IMAGE_HYPERCALL_PAGE = 0x1422, /* etl_image_hypercall_page */
    ETL_HOOK_STACKWALK = 0x1820,           /* etl_stackwalk */
    ETL_HOOK_STACK_KEY_DELETE = 0x1823,    /* etl_stack_key_def: a cached stack evicted */
    ETL_HOOK_STACK_KEY_RUNDOWN = 0x1824,   /* etl_stack_key_def: cached stacks at the trace end */
    ETL_HOOK_STACK_KEY_KERNEL = 0x1825,    /* etl_stack_key_ref: the kernel part of a stack */
    ETL_HOOK_STACK_KEY_USER = 0x1826       /* etl_stack_key_ref: the user part of a stack */
};

/*
 * PERFINFO_SAMPLED_PROFILE_INFORMATION (hook 0x0F2E, version 2): PVOID
 * InstructionPointer; ULONG ThreadId; USHORT Count; UCHAR Flags
 * {ExecutingDpc:1, ExecutingIsr:1, Reserved:1, Priority:5}; UCHAR Rank.
 * The MOF (SampledProfile class) calls the last four bytes "uint32 Count".
 */
typedef struct etl_sampled_profile {
    uint64_t instruction_pointer; /* InstructionPointer */
    uint32_t thread_id;           /* ThreadId (0: the idle thread) */
    uint16_t count;               /* Count: the samples this event stands for */
    uint8_t flags;                /* bit 0 ExecutingDpc, bit 1 ExecutingIsr, bits 3-7 Priority */
    uint8_t rank;                 /* Rank */
} etl_sampled_profile;

ETL_API etl_status etl_sampled_profile_decode(etl_span payload, unsigned ptr_size, etl_sampled_profile *out);
ETL_API etl_status etl_sampled_profile_encode(const etl_sampled_profile *in, unsigned ptr_size, uint8_t *out,
                                              size_t cap, size_t *len);

/*
 * PERFINFO_PMC_SAMPLE_INFORMATION (hook 0x0F2F, PerfInfo/PmcCounterProf): PVOID
 * InstructionPointer; ULONG ThreadId; USHORT ProfileSource; USHORT Reserved.
 * (TraceEvent's PMCCounterProfTraceData; no sample carries it: Medium.)
 */
typedef struct etl_pmc_sample {
    uint64_t instruction_pointer;
    uint32_t thread_id;
    uint16_t profile_source; /* ProfileSource (KPROFILE_SOURCE) */
    uint16_t reserved;
} etl_pmc_sample;

ETL_API etl_status etl_pmc_sample_decode(etl_span payload, unsigned ptr_size, etl_pmc_sample *out);
ETL_API etl_status etl_pmc_sample_encode(const etl_pmc_sample *in, unsigned ptr_size, uint8_t *out, size_t cap,
                                         size_t *len);

/*
 * PerfInfo SetInterval / CollectionStart / CollectionEnd (hooks 0x0F48..0x0F4A,
 * opcodes 72..74, SampledProfileInterval): ULONG Source; ULONG NewInterval;
 * ULONG OldInterval (100 ns units); v3: SourceName (UTF-16, NUL-terminated).
 * has_name says whether the name was there (read whenever bytes follow the
 * 12 fixed ones; the encoder writes it when has_name).
 */
typedef struct etl_profile_interval {
    uint32_t source;       /* Source: the profile source (0: Timer) */
    uint32_t new_interval; /* NewInterval, 100 ns units (10000 = 1 ms) */
    uint32_t old_interval; /* OldInterval */
    bool has_name;
    etl_kstr source_name;  /* SourceName (UTF-16LE) */
} etl_profile_interval;

ETL_API etl_status etl_profile_interval_decode(etl_span payload, etl_profile_interval *out);
ETL_API etl_status etl_profile_interval_encode(const etl_profile_interval *in, uint8_t *out, size_t cap,
                                               size_t *len);

/* The kernel walks at most this many frames (StackWalk_Event: Stack1..Stack192). */
enum { ETL_STACK_MAX_FRAMES = 192 };

/*
 * StackWalk_Event (hook 0x1820, "Stack"): ULONGLONG EventTimeStamp; ULONG
 * StackProcess; ULONG StackThread; then the frames, each of the event's
 * pointer size, as many as the payload holds (bytes past the last whole frame
 * and frames past ETL_STACK_MAX_FRAMES are ignored). frames points into the
 * payload; read frame i with etl_stack_frame. No allocation.
 */
typedef struct etl_stackwalk {
    uint64_t event_timestamp; /* EventTimeStamp: the timestamp of the event the stack belongs to */
    uint32_t stack_process;   /* StackProcess */
    uint32_t stack_thread;    /* StackThread */
    const uint8_t *frames;    /* frame_count frames of ptr_size bytes, innermost first */
    uint32_t frame_count;
    uint8_t ptr_size;
} etl_stackwalk;

/*
 * The cached-stack forms (Windows 8+). A reference (0x1825 kernel part,
 * 0x1826 user part; TraceEvent's StackWalkRefTraceData, opcodes 37/38):
 * ULONGLONG EventTimeStamp; ULONG StackProcess; ULONG StackThread; PVOID StackKey.
 * A definition (0x1823 KeyDelete: the key leaves the cache; 0x1824 KeyRundown:
 * the keys still cached when the trace ends; StackWalkDefTraceData, opcodes
 * 35/36): PVOID StackKey, then the frames. A key may be referenced before it
 * is defined.
 */
typedef struct etl_stack_key_ref {
    uint64_t event_timestamp;
    uint32_t stack_process;
    uint32_t stack_thread;
    uint64_t stack_key;
} etl_stack_key_ref;

typedef struct etl_stack_key_def {
    uint64_t stack_key;
    const uint8_t *frames; /* as in etl_stackwalk */
    uint32_t frame_count;
    uint8_t ptr_size;
} etl_stack_key_def;

/* Frame i (< frame_count) of frames of this pointer size. */
ETL_API uint64_t etl_stack_frame(const uint8_t *frames, unsigned ptr_size, uint32_t i);

ETL_API etl_status etl_stackwalk_decode(etl_span payload, unsigned ptr_size, etl_stackwalk *out);
/* Writes in's header and frame_count frames taken from frames (uint64 each; NULL when 0). */
ETL_API etl_status etl_stackwalk_encode(const etl_stackwalk *in, const uint64_t *frames, unsigned ptr_size,
                                        uint8_t *out, size_t cap, size_t *len);
ETL_API etl_status etl_stack_key_ref_decode(etl_span payload, unsigned ptr_size, etl_stack_key_ref *out);
ETL_API etl_status etl_stack_key_ref_encode(const etl_stack_key_ref *in, unsigned ptr_size, uint8_t *out,
                                            size_t cap, size_t *len);
ETL_API etl_status etl_stack_key_def_decode(etl_span payload, unsigned ptr_size, etl_stack_key_def *out);
ETL_API etl_status etl_stack_key_def_encode(const etl_stack_key_def *in, const uint64_t *frames,
                                            unsigned ptr_size, uint8_t *out, size_t cap, size_t *len);

/*
 * Image Load/Unload/DCStart/DCEnd (hooks 0x030A, 0x1402..0x1404, 0x140A).
 *   v1  PVOID ImageBase; SIZE_T ImageSize; ULONG ProcessId; FileName (Image_V1_Load);
 *   v2  ImageBase; ImageSize; ProcessId; ULONG ImageChecksum; ULONG TimeDateStamp;
 *       ULONG Reserved0; PVOID DefaultBase; ULONG Reserved1..4; FileName (Image_Load);
 *   v3  as v2, Reserved0's bytes being UCHAR SignatureLevel, UCHAR SignatureType,
 *       USHORT Reserved0 (kept in the same three fields for v2).
 * FileName: UTF-16LE, NUL-terminated, the rest of the payload. Version 0 decodes
 * as v1. known has ETL_IMG_V2 when the v2 fields were there.
 */
enum { ETL_IMG_V2 = 1u << 0 };

typedef struct etl_image {
    uint32_t known;           /* ETL_IMG_* */
    uint64_t image_base;      /* ImageBase */
    uint64_t image_size;      /* ImageSize */
    uint32_t process_id;      /* ProcessId (0 for kernel-space images) */
    uint32_t image_checksum;  /* ImageChecksum (v2+) */
    uint32_t time_date_stamp; /* TimeDateStamp (v2+) */
    uint8_t signature_level;  /* SignatureLevel (v3; v2: Reserved0's low byte) */
    uint8_t signature_type;   /* SignatureType (v3) */
    uint16_t reserved0;       /* Reserved0 (the high half of v2's ULONG) */
    uint64_t default_base;    /* DefaultBase (v2+) */
    uint32_t reserved[4];     /* Reserved1..Reserved4 (v2+) */
    etl_kstr file_name;       /* FileName (UTF-16LE) */
} etl_image;

ETL_API etl_status etl_image_decode(etl_span payload, unsigned version, unsigned ptr_size, etl_image *out);
ETL_API etl_status etl_image_encode(const etl_image *in, unsigned version, unsigned ptr_size, uint8_t *out,
                                    size_t cap, size_t *len);

/* Image/KernelBase (hook 0x1421, opcode 33): PVOID ImageBase, ntoskrnl's base. */
typedef struct etl_image_kernel_base {
    uint64_t image_base;
} etl_image_kernel_base;

ETL_API etl_status etl_image_kernel_base_decode(etl_span payload, unsigned ptr_size, etl_image_kernel_base *out);
ETL_API etl_status etl_image_kernel_base_encode(const etl_image_kernel_base *in, unsigned ptr_size, uint8_t *out,
                                                size_t cap, size_t *len);

/*
 * Image/HypercallPage (hook 0x1422, opcode 34, WMI_LOG_TYPE_IMAGE_HYPERCALL_PAGE):
 * PVOID HypercallPageVa, the kernel-space address of the hypervisor's hypercall
 * page, logged beside KernelBase at a rundown.
 */

typedef struct etl_image_hypercall_page {
    uint64_t hypercall_page_va;
} etl_image_hypercall_page;

ETL_API etl_status etl_image_hypercall_page_decode(etl_span payload, unsigned ptr_size,
                                                   etl_image_hypercall_page *out);
ETL_API etl_status etl_image_hypercall_page_encode(const etl_image_hypercall_page *in, unsigned ptr_size,
                                                   uint8_t *out, size_t cap, size_t *len);

/* ------------------------------------------------- image identity (ImageID) */

/*
 * The image-identity events that xperf / KernelTraceControl's merge
 * (CreateMergedTraceFile with EVENT_TRACE_MERGE_EXTENDED_DATA_IMAGEID) adds
 * after each image event, read from the image file on the machine that traced:
 * what a symbol server needs to find the image's PDB (and the image itself).
 * Classic events of the provider (task) GUID below, keyed by opcode (Class.Type),
 * with the record's pointer size; no kernel hook id. Layouts (no padding):
 *
 *   0x00 ImageID       PVOID ImageBase; SIZE_T ImageSize; ULONG ProcessId;
 *                      ULONG TimeDateStamp; WCHAR OriginalFileName[]     etl_image_id
 *   0x20 DbgID_NONE    PVOID ImageBase; ULONG ProcessId                  etl_image_dbgid
 *                      (an image without a CodeView RSDS record)
 *   0x24 DbgID_RSDS    PVOID ImageBase; ULONG ProcessId; GUID GuidSig;
 *                      ULONG Age; CHAR PdbFileName[]                     etl_image_dbgid
 *   0x25 DbgID_ILRSDS  as DbgID_RSDS: the IL image's PDB of a .NET
 *                      native (NGEN) image                               etl_image_dbgid
 *   0x40 FileVersion   ULONG ImageSize; ULONG TimeDateStamp; then ten
 *                      WCHAR strings: OrigFileName, FileDescription,
 *                      FileVersion, BinFileVersion, VerLanguage,
 *                      ProductName, CompanyName, ProductVersion, FileId,
 *                      ProgramId                                         etl_image_file_version
 *
 * The samples hold versions 2 (ImageID, DbgID_*) and 0 (FileVersion); every
 * version decodes with these layouts. FileVersion names no ImageBase: it goes
 * with the ImageID of the same header timestamp and process (it comes first).
 * PdbFileName is ANSI (a path as the linker wrote it). The GUID is in its
 * in-memory layout (Data1..3 little-endian), as the PE's RSDS record holds it.
 */
ETL_API const etl_guid *etl_image_id_guid(void); /* {b3e675d7-2554-4f18-830b-2762732560de} */

enum {
    ETL_IMAGE_ID_INFO = 0x00,         /* ImageID */
    ETL_IMAGE_ID_DBGID_NONE = 0x20,   /* DbgID_NONE */
    ETL_IMAGE_ID_DBGID_RSDS = 0x24,   /* DbgID_RSDS */
    ETL_IMAGE_ID_DBGID_ILRSDS = 0x25, /* DbgID_ILRSDS */
    ETL_IMAGE_ID_FILE_VERSION = 0x40  /* FileVersion */
};

typedef struct etl_image_id {
    uint64_t image_base;         /* ImageBase */
    uint64_t image_size;         /* ImageSize */
    uint32_t process_id;         /* ProcessId */
    uint32_t time_date_stamp;    /* TimeDateStamp: the PE header's (the symbol-store key with SizeOfImage) */
    etl_kstr original_file_name; /* OriginalFileName (UTF-16LE) */
} etl_image_id;

ETL_API etl_status etl_image_id_decode(etl_span payload, unsigned ptr_size, etl_image_id *out);
ETL_API etl_status etl_image_id_encode(const etl_image_id *in, unsigned ptr_size, uint8_t *out, size_t cap,
                                       size_t *len);

/* DbgID_RSDS / DbgID_ILRSDS (has_rsds true) and DbgID_NONE (has_rsds false: base and process only). */
typedef struct etl_image_dbgid {
    uint64_t image_base;    /* ImageBase */
    uint32_t process_id;    /* ProcessId */
    bool has_rsds;          /* the GUID, age and PDB name below are there */
    etl_guid guid_sig;      /* GuidSig: the PDB's signature */
    uint32_t age;           /* Age */
    etl_kstr pdb_file_name; /* PdbFileName (ANSI) */
} etl_image_dbgid;

/* opcode: ETL_IMAGE_ID_DBGID_NONE, _RSDS or _ILRSDS (the layout; others are ETL_E_INVALID_ARG). */
ETL_API etl_status etl_image_dbgid_decode(etl_span payload, unsigned opcode, unsigned ptr_size,
                                          etl_image_dbgid *out);
ETL_API etl_status etl_image_dbgid_encode(const etl_image_dbgid *in, unsigned opcode, unsigned ptr_size,
                                          uint8_t *out, size_t cap, size_t *len);

enum { ETL_IMAGE_FILE_VERSION_STRINGS = 10 };

typedef struct etl_image_file_version {
    uint32_t image_size;      /* ImageSize */
    uint32_t time_date_stamp; /* TimeDateStamp */
    /* UTF-16LE, in payload order (etl_image_file_version_key names them); absent ones are empty */
    etl_kstr strings[ETL_IMAGE_FILE_VERSION_STRINGS];
} etl_image_file_version;

/* The field name of strings[i] ("OrigFileName" ... "ProgramId"); NULL past the last. */
ETL_API const char *etl_image_file_version_key(unsigned i);
ETL_API etl_status etl_image_file_version_decode(etl_span payload, etl_image_file_version *out);
ETL_API etl_status etl_image_file_version_encode(const etl_image_file_version *in, uint8_t *out, size_t cap,
                                                 size_t *len);

#ifdef __cplusplus
}
#endif
#endif

/*
 * groupmask.c - ETW_KERNEL_HEADER_EXTENSION (hooks 0x0005 and 0x0020): the
 * session's PERFINFO_GROUPMASK and the kernel event version, and the PERF_*
 * group-mask constants that test it (names from phnt ntwmi.h).
 */
#include "etlkit/kernel.h"
#include "base/bytes.h"

#define MASK_INDEX(c) ((c) >> 29)
#define MASK_BITS(c) ((c) & 0x1FFFFFFFu)

etl_status etl_groupmask_decode(etl_span payload, etl_groupmask *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    if (!etl_span_has(payload, 0, ETL_GROUPMASK_SIZE)) return ETL_E_TRUNCATED;
    for (unsigned i = 0; i < 8; i++) out->masks[i] = etl_rd_u32(payload.p + 4 * i);
    out->kernel_event_version = etl_rd_u32(payload.p + 0x20);
    return ETL_OK;
}

etl_status etl_groupmask_encode(const etl_groupmask *in, uint8_t *out, size_t cap, size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    if (cap < ETL_GROUPMASK_SIZE || !out) {
        *len = ETL_GROUPMASK_SIZE;
        return ETL_E_RANGE;
    }
    for (unsigned i = 0; i < 8; i++) etl_wr_u32(out + 4 * i, in->masks[i]);
    etl_wr_u32(out + 0x20, in->kernel_event_version);
    *len = ETL_GROUPMASK_SIZE;
    return ETL_OK;
}

bool etl_groupmask_test(const etl_groupmask *m, uint32_t perf_const)
{
    return (m->masks[MASK_INDEX(perf_const)] & MASK_BITS(perf_const)) != 0;
}

void etl_groupmask_set(etl_groupmask *m, uint32_t perf_const)
{
    m->masks[MASK_INDEX(perf_const)] |= MASK_BITS(perf_const);
}

void etl_groupmask_clear(etl_groupmask *m, uint32_t perf_const)
{
    m->masks[MASK_INDEX(perf_const)] &= ~MASK_BITS(perf_const);
}

/*
 * One name per single bit, in mask order. Masks[0] bits are the documented
 * EVENT_TRACE_FLAG_* values; where ntwmi.h gives no single-bit PERF_ alias
 * (the bit is mapped into a higher mask) the EVENT_TRACE_FLAG_ name is used.
 * Composites (PERF_PROC_THREAD, PERF_DISK_IO, PERF_POOLTRACE, PERF_PROFILING,
 * PERF_SPININSTR, PERF_SYSCFG_ALL) are left out: their bits are listed singly.
 */
static const struct {
    uint32_t perf;
    const char *name;
} flags[] = {
    {ETL_PERF_PROCESS, "PERF_PROCESS"},
    {ETL_PERF_THREAD, "PERF_THREAD"},
    {ETL_PERF_LOADER, "PERF_LOADER"},
    {ETL_PERF_PERF_COUNTER, "PERF_PERF_COUNTER"},
    {0x00000010u, "EVENT_TRACE_FLAG_CSWITCH"},
    {0x00000020u, "EVENT_TRACE_FLAG_DPC"},
    {0x00000040u, "EVENT_TRACE_FLAG_INTERRUPT"},
    {0x00000080u, "EVENT_TRACE_FLAG_SYSTEMCALL"},
    {0x00000100u, "EVENT_TRACE_FLAG_DISK_IO"},
    {ETL_PERF_FILENAME, "PERF_FILENAME"},
    {ETL_PERF_DISK_IO_INIT, "PERF_DISK_IO_INIT"},
    {0x00000800u, "EVENT_TRACE_FLAG_DISPATCHER"},
    {ETL_PERF_ALL_FAULTS, "PERF_ALL_FAULTS"},
    {ETL_PERF_HARD_FAULTS, "PERF_HARD_FAULTS"},
    {0x00004000u, "EVENT_TRACE_FLAG_VIRTUAL_ALLOC"},
    {ETL_PERF_VAMAP, "PERF_VAMAP"},
    {ETL_PERF_NETWORK, "PERF_NETWORK"},
    {ETL_PERF_REGISTRY, "PERF_REGISTRY"},
    {ETL_PERF_DBGPRINT, "PERF_DBGPRINT"},
    {ETL_PERF_JOB, "PERF_JOB"},
    {ETL_PERF_ALPC, "PERF_ALPC"},
    {ETL_PERF_SPLIT_IO, "PERF_SPLIT_IO"},
    {ETL_PERF_DEBUG_EVENTS, "PERF_DEBUG_EVENTS"},
    {0x00800000u, "EVENT_TRACE_FLAG_DRIVER"},
    {0x01000000u, "EVENT_TRACE_FLAG_PROFILE"},
    {ETL_PERF_FILE_IO, "PERF_FILE_IO"},
    {ETL_PERF_FILE_IO_INIT, "PERF_FILE_IO_INIT"},
    {ETL_PERF_NO_SYSCONFIG, "PERF_NO_SYSCONFIG"},
    {ETL_PERF_MEMORY, "PERF_MEMORY"},
    {ETL_PERF_PROFILE, "PERF_PROFILE"},
    {ETL_PERF_CONTEXT_SWITCH, "PERF_CONTEXT_SWITCH"},
    {ETL_PERF_FOOTPRINT, "PERF_FOOTPRINT"},
    {ETL_PERF_DRIVERS, "PERF_DRIVERS"},
    {ETL_PERF_REFSET, "PERF_REFSET"},
    {ETL_PERF_POOL, "PERF_POOL"},
    {ETL_PERF_DPC, "PERF_DPC"},
    {ETL_PERF_COMPACT_CSWITCH, "PERF_COMPACT_CSWITCH"},
    {ETL_PERF_DISPATCHER, "PERF_DISPATCHER"},
    {ETL_PERF_PMC_PROFILE, "PERF_PMC_PROFILE"},
    {ETL_PERF_PROCESS_INSWAP, "PERF_PROCESS_INSWAP"},
    {ETL_PERF_AFFINITY, "PERF_AFFINITY"},
    {ETL_PERF_PRIORITY, "PERF_PRIORITY"},
    {ETL_PERF_INTERRUPT, "PERF_INTERRUPT"},
    {ETL_PERF_VIRTUAL_ALLOC, "PERF_VIRTUAL_ALLOC"},
    {ETL_PERF_SPINLOCK, "PERF_SPINLOCK"},
    {ETL_PERF_SYNC_OBJECTS, "PERF_SYNC_OBJECTS"},
    {ETL_PERF_DPC_QUEUE, "PERF_DPC_QUEUE"},
    {ETL_PERF_MEMINFO, "PERF_MEMINFO"},
    {ETL_PERF_CONTMEM_GEN, "PERF_CONTMEM_GEN"},
    {ETL_PERF_SPINLOCK_CNTRS, "PERF_SPINLOCK_CNTRS"},
    {ETL_PERF_SESSION, "PERF_SESSION"},
    {ETL_PERF_MEMINFO_WS, "PERF_MEMINFO_WS"},
    {ETL_PERF_KERNEL_QUEUE, "PERF_KERNEL_QUEUE"},
    {ETL_PERF_INTERRUPT_STEER, "PERF_INTERRUPT_STEER"},
    {ETL_PERF_SHOULD_YIELD, "PERF_SHOULD_YIELD"},
    {ETL_PERF_WS, "PERF_WS"},
    {ETL_PERF_ANTI_STARVATION, "PERF_ANTI_STARVATION"},
    {ETL_PERF_PROCESS_FREEZE, "PERF_PROCESS_FREEZE"},
    {ETL_PERF_PFN_LIST, "PERF_PFN_LIST"},
    {ETL_PERF_WS_DETAIL, "PERF_WS_DETAIL"},
    {ETL_PERF_WS_ENTRY, "PERF_WS_ENTRY"},
    {ETL_PERF_HEAP, "PERF_HEAP"},
    {ETL_PERF_SYSCALL, "PERF_SYSCALL"},
    {ETL_PERF_UMS, "PERF_UMS"},
    {ETL_PERF_BACKTRACE, "PERF_BACKTRACE"},
    {ETL_PERF_VULCAN, "PERF_VULCAN"},
    {ETL_PERF_OBJECTS, "PERF_OBJECTS"},
    {ETL_PERF_EVENTS, "PERF_EVENTS"},
    {ETL_PERF_FULLTRACE, "PERF_FULLTRACE"},
    {ETL_PERF_DFSS, "PERF_DFSS"},
    {ETL_PERF_PREFETCH, "PERF_PREFETCH"},
    {ETL_PERF_PROCESSOR_IDLE, "PERF_PROCESSOR_IDLE"},
    {ETL_PERF_CPU_CONFIG, "PERF_CPU_CONFIG"},
    {ETL_PERF_TIMER, "PERF_TIMER"},
    {ETL_PERF_CLOCK_INTERRUPT, "PERF_CLOCK_INTERRUPT"},
    {ETL_PERF_LOAD_BALANCER, "PERF_LOAD_BALANCER"},
    {ETL_PERF_CLOCK_TIMER, "PERF_CLOCK_TIMER"},
    {ETL_PERF_IDLE_SELECTION, "PERF_IDLE_SELECTION"},
    {ETL_PERF_IPI, "PERF_IPI"},
    {ETL_PERF_IO_TIMER, "PERF_IO_TIMER"},
    {ETL_PERF_REG_HIVE, "PERF_REG_HIVE"},
    {ETL_PERF_REG_NOTIF, "PERF_REG_NOTIF"},
    {ETL_PERF_PPM_EXIT_LATENCY, "PERF_PPM_EXIT_LATENCY"},
    {ETL_PERF_WORKER_THREAD, "PERF_WORKER_THREAD"},
    {ETL_PERF_OPTICAL_IO, "PERF_OPTICAL_IO"},
    {ETL_PERF_OPTICAL_IO_INIT, "PERF_OPTICAL_IO_INIT"},
    {ETL_PERF_DLL_INFO, "PERF_DLL_INFO"},
    {ETL_PERF_DLL_FLUSH_WS, "PERF_DLL_FLUSH_WS"},
    {ETL_PERF_OB_HANDLE, "PERF_OB_HANDLE"},
    {ETL_PERF_OB_OBJECT, "PERF_OB_OBJECT"},
    {ETL_PERF_WAKE_DROP, "PERF_WAKE_DROP"},
    {ETL_PERF_WAKE_EVENT, "PERF_WAKE_EVENT"},
    {ETL_PERF_DEBUGGER, "PERF_DEBUGGER"},
    {ETL_PERF_PROC_ATTACH, "PERF_PROC_ATTACH"},
    {ETL_PERF_WAKE_COUNTER, "PERF_WAKE_COUNTER"},
    {ETL_PERF_POWER, "PERF_POWER"},
    {ETL_PERF_SOFT_TRIM, "PERF_SOFT_TRIM"},
    {ETL_PERF_CC, "PERF_CC"},
    {ETL_PERF_FLT_IO_INIT, "PERF_FLT_IO_INIT"},
    {ETL_PERF_FLT_IO, "PERF_FLT_IO"},
    {ETL_PERF_FLT_FASTIO, "PERF_FLT_FASTIO"},
    {ETL_PERF_FLT_IO_FAILURE, "PERF_FLT_IO_FAILURE"},
    {ETL_PERF_HV_PROFILE, "PERF_HV_PROFILE"},
    {ETL_PERF_WDF_DPC, "PERF_WDF_DPC"},
    {ETL_PERF_WDF_INTERRUPT, "PERF_WDF_INTERRUPT"},
    {ETL_PERF_CACHE_FLUSH, "PERF_CACHE_FLUSH"},
    {ETL_PERF_HIBER_RUNDOWN, "PERF_HIBER_RUNDOWN"},
    {ETL_PERF_SYSCFG_SYSTEM, "PERF_SYSCFG_SYSTEM"},
    {ETL_PERF_SYSCFG_GRAPHICS, "PERF_SYSCFG_GRAPHICS"},
    {ETL_PERF_SYSCFG_STORAGE, "PERF_SYSCFG_STORAGE"},
    {ETL_PERF_SYSCFG_NETWORK, "PERF_SYSCFG_NETWORK"},
    {ETL_PERF_SYSCFG_SERVICES, "PERF_SYSCFG_SERVICES"},
    {ETL_PERF_SYSCFG_PNP, "PERF_SYSCFG_PNP"},
    {ETL_PERF_SYSCFG_OPTICAL, "PERF_SYSCFG_OPTICAL"},
    {ETL_PERF_CLUSTER_OFF, "PERF_CLUSTER_OFF"},
    {ETL_PERF_MEMORY_CONTROL, "PERF_MEMORY_CONTROL"},
};

size_t etl_groupmask_names(const etl_groupmask *m, const char **names, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (!etl_groupmask_test(m, flags[i].perf)) continue;
        if (n < cap) names[n] = flags[i].name;
        n++;
    }
    return n;
}

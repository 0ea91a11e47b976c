/*
 * names.c - names for the kernel's enumerations, hook ids and groups, and the
 * KWAIT_REASON range by OS build. Lookups return NULL for unknown values so a
 * caller can print the number instead.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/kernel.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* KWAIT_REASON (spec 9.1): 14 keeps its classic name WrEventPair (WrSpare0 in new symbols). */
static const char *const wait_reasons[] = {
    "Executive", "FreePage", "PageIn", "PoolAllocation", "DelayExecution", "Suspended",
    "UserRequest", "WrExecutive", "WrFreePage", "WrPageIn", "WrPoolAllocation",
    "WrDelayExecution", "WrSuspended", "WrUserRequest", "WrEventPair", "WrQueue",
    "WrLpcReceive", "WrLpcReply", "WrVirtualMemory", "WrPageOut", "WrRendezvous",
    "WrKeyedEvent", "WrTerminated", "WrProcessInSwap", "WrCpuRateControl", "WrCalloutStack",
    "WrKernel", "WrResource", "WrPushLock", "WrMutex", "WrQuantumEnd", "WrDispatchInt",
    "WrPreempted", "WrYieldExecution", "WrFastMutex", "WrGuardedMutex", "WrRundown",
    "WrAlertByThreadId", "WrDeferredPreempt", "WrPhysicalFault", "WrIoRing", "WrMdlCache",
    "WrRcu",
};

/* KTHREAD_STATE (spec 9.2): 8 by its 6.2+ name. */
static const char *const thread_states[] = {
    "Initialized", "Ready", "Running", "Standby", "Terminated", "Waiting", "Transition",
    "DeferredReady", "GateWaitObsolete", "WaitingForProcessInSwap",
};

static const char *const processor_modes[] = {"KernelMode", "UserMode"};

/* WMI_SPINLOCK AcquireMode (spec 7); the names are ours, from Chappell's descriptions. */
static const char *const acquire_modes[] = {
    "SpinLock", "QueuedSpinLock", "ExecutiveSpinLockShared", "ExecutiveSpinLockExclusive",
    "ExecutiveSpinLockConverted",
};

/* ReadyThread AdjustReason: the kernel's ADJUST_REASON (ReactOS NDK ketypes.h). */
static const char *const adjust_reasons[] = {"AdjustNone", "AdjustUnwait", "AdjustBoost"};

#define PICK(table, v) ((v) < COUNT(table) ? (table)[v] : NULL)

const char *etl_wait_reason_name(unsigned v) { return PICK(wait_reasons, v); }
const char *etl_thread_state_name(unsigned v) { return PICK(thread_states, v); }
const char *etl_processor_mode_name(unsigned v) { return PICK(processor_modes, v); }
const char *etl_spinlock_acquire_mode_name(unsigned v) { return PICK(acquire_modes, v); }
const char *etl_adjust_reason_name(unsigned v) { return PICK(adjust_reasons, v); }

/* Groups (spec 3): display name as TraceEvent calls the provider, and its GUID. */
static const struct {
    const char *name;
    etl_guid guid;
} groups[] = {
    {"EventTrace", {0x68fdd900, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}}},
    {"DiskIo", {0x3d6fa8d4, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}},
    {"PageFault", {0x3d6fa8d3, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}},
    {"Process", {0x3d6fa8d0, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}},
    {"FileIo", {0x90cbdc39, 0x4a3e, 0x11d1, {0x84, 0xf4, 0x00, 0x00, 0xf8, 0x04, 0x64, 0xe3}}},
    {"Thread", {0x3d6fa8d1, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}}},
    {"TcpIp", {0x9a280ac0, 0xc8e0, 0x11d1, {0x84, 0xe2, 0x00, 0xc0, 0x4f, 0xb9, 0x98, 0xa2}}},
    {"Job", {0x3282fc76, 0xfeed, 0x498e, {0x8a, 0xa7, 0xe7, 0x0f, 0x45, 0x9d, 0x43, 0x0e}}},
    {"UdpIp", {0xbf3a50c5, 0xa9c9, 0x4988, {0xa0, 0x05, 0x2d, 0xf0, 0xb7, 0xc8, 0x0f, 0x80}}},
    {"Registry", {0xae53722e, 0xc863, 0x11d2, {0x86, 0x59, 0x00, 0xc0, 0x4f, 0xa3, 0x21, 0xa1}}},
    {"DbgPrint", {0x13976d09, 0xa327, 0x438c, {0x95, 0x0b, 0x7f, 0x03, 0x19, 0x28, 0x15, 0xc7}}},
    {"SystemConfig",
     {0x01853a65, 0x418f, 0x4f36, {0xae, 0xfc, 0xdc, 0x0f, 0x1d, 0x2f, 0xd2, 0x35}}},
    {"Spare1", {0x99134383, 0x5248, 0x43fc, {0x83, 0x4b, 0x52, 0x94, 0x54, 0xe7, 0x5d, 0xf3}}},
    {"Wnf", {0x42695762, 0xea50, 0x497a, {0x90, 0x68, 0x5c, 0xbb, 0xb3, 0x5e, 0x0b, 0x95}}},
    {"Pool", {0x0268a8b6, 0x74fd, 0x4302, {0x9d, 0xd0, 0x6e, 0x8f, 0x17, 0x95, 0xc0, 0xcf}}},
    {"PerfInfo", {0xce1dbfb4, 0x137e, 0x4da6, {0x87, 0xb0, 0x3f, 0x59, 0xaa, 0x10, 0x2c, 0xbc}}},
    {"Heap", {0x222962ab, 0x6180, 0x4b88, {0xa8, 0x25, 0x34, 0x6b, 0x75, 0xf2, 0xa2, 0x4a}}},
    {"Object", {0x89497f50, 0xeffe, 0x4440, {0x8c, 0xf2, 0xce, 0x6b, 0x1c, 0xdc, 0xac, 0xa7}}},
    {"Power", {0xe43445e0, 0x0903, 0x48c3, {0xb8, 0x78, 0xff, 0x0f, 0xcc, 0xeb, 0xdd, 0x04}}},
    {"Modbound", {0xa9152f00, 0x3f58, 0x4bee, {0x92, 0xa1, 0x70, 0xc7, 0xd0, 0x79, 0xd5, 0xdd}}},
    {"Image", {0x2cb15d1d, 0x5fc1, 0x11d2, {0xab, 0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18}}},
    {"Dpc", {0xb2d14872, 0x7c5b, 0x463d, {0x84, 0x19, 0xee, 0x9b, 0xf7, 0xd2, 0x3e, 0x04}}},
    {"Cc", {0x7687a439, 0xf752, 0x45b8, {0xb7, 0x41, 0x32, 0x1a, 0xec, 0x0f, 0x8d, 0xf9}}},
    {"CritSec", {0x3ac66736, 0xcc59, 0x4cff, {0x81, 0x15, 0x8d, 0xf5, 0x0e, 0x39, 0x81, 0x6b}}},
    {"StackWalk", {0xdef2fe46, 0x7bd6, 0x4b80, {0xbd, 0x94, 0xf5, 0x7f, 0xe2, 0x0d, 0x0c, 0xe3}}},
    {"Ums", {0x9aec974b, 0x5b8e, 0x4118, {0x9b, 0x92, 0x31, 0x86, 0xd8, 0x00, 0x2c, 0xe5}}},
    {"ALPC", {0x45d8cccd, 0x539f, 0x4b72, {0xa8, 0xb7, 0x5c, 0x68, 0x31, 0x42, 0x60, 0x9a}}},
    {"SplitIo", {0xd837ca92, 0x12b9, 0x44a5, {0xad, 0x6a, 0x3a, 0x65, 0xb3, 0x57, 0x8a, 0xa8}}},
    {"ThreadPool", {0xc861d0e2, 0xa2c1, 0x4d36, {0x9f, 0x9c, 0x97, 0x0b, 0xab, 0x94, 0x3a, 0x12}}},
    {"Hypervisor", {0x7f2a405c, 0x69b5, 0x4bf9, {0xa1, 0xf5, 0x30, 0xe8, 0xf1, 0xaf, 0xab, 0x5e}}},
    {"HypervisorX", {0x2ce9a149, 0xeffe, 0x42f0, {0xa6, 0x35, 0xa1, 0xd3, 0x9e, 0x26, 0xc8, 0xf2}}},
};

const char *etl_group_name(unsigned group)
{
    return group < COUNT(groups) ? groups[group].name : NULL;
}

const etl_guid *etl_group_guid(unsigned group)
{
    return group < COUNT(groups) ? &groups[group].guid : NULL;
}

/*
 * Hook names, sorted by id. "Group/Event" with TraceEvent's (MOF) event names
 * where they exist, else a name made from the ntwmi.h constant. Notes:
 * 0x030A is in the Process group but consumers re-home it to ImageLoadGuid, so
 * it is "Image/Load", and so is 0x140A, the id a relogged FULL header with
 * ImageLoadGuid and opcode 10 stands for (a name may appear twice: the lowest
 * id is its canonical one); 0x0525 is "Thread/CompCS" as in Microsoft's MOF
 * and TraceEvent (the compact context-switch batch).
 */
typedef struct hook_entry {
    uint16_t hook;
    const char *name;
} hook_entry;

static const hook_entry hooks[] = {
    {0x0000, "EventTrace/Header"},
    {0x0005, "EventTrace/Extension"},
    {0x0008, "EventTrace/RDComplete"},
    {0x0020, "EventTrace/EndExtension"},
    {0x0030, "EventTrace/RundownBegin"},
    {0x0031, "EventTrace/RundownEnd"},
    {0x010A, "DiskIo/Read"},
    {0x010B, "DiskIo/Write"},
    {0x010C, "DiskIo/ReadInit"},
    {0x010D, "DiskIo/WriteInit"},
    {0x010E, "DiskIo/FlushBuffers"},
    {0x010F, "DiskIo/FlushInit"},
    {0x0122, "DiskIo/DrvMjFnCall"},
    {0x0123, "DiskIo/DrvMjFnRet"},
    {0x0125, "DiskIo/DrvComplRout"},
    {0x0134, "DiskIo/DrvComplReq"},
    {0x0135, "DiskIo/DrvComplReqRet"},
    {0x020A, "PageFault/TransitionFault"},
    {0x020B, "PageFault/DemandZeroFault"},
    {0x020C, "PageFault/CopyOnWrite"},
    {0x020D, "PageFault/GuardPageFault"},
    {0x020E, "PageFault/HardPageFault"},
    {0x020F, "PageFault/AccessViolation"},
    {0x0220, "PageFault/HardFault"},
    {0x0262, "PageFault/VirtualAlloc"},
    {0x0263, "PageFault/VirtualFree"},
    {0x0301, "Process/Start"},
    {0x0302, "Process/End"},
    {0x0303, "Process/DCStart"},
    {0x0304, "Process/DCEnd"},
    {0x030A, "Image/Load"},
    {0x030B, "Process/Terminate"},
    {0x0320, "Process/PerfCtr"},
    {0x0321, "Process/PerfCtrRundown"},
    {0x0323, "Process/InSwap"},
    {0x0327, "Process/Defunct"},
    {0x0400, "FileIo/Name"},
    {0x0420, "FileIo/FileCreate"},
    {0x0423, "FileIo/FileDelete"},
    {0x0424, "FileIo/FileRundown"},
    {0x0440, "FileIo/Create"},
    {0x0441, "FileIo/Cleanup"},
    {0x0442, "FileIo/Close"},
    {0x0443, "FileIo/Read"},
    {0x0444, "FileIo/Write"},
    {0x0445, "FileIo/SetInfo"},
    {0x0446, "FileIo/Delete"},
    {0x0447, "FileIo/Rename"},
    {0x0448, "FileIo/DirEnum"},
    {0x0449, "FileIo/Flush"},
    {0x044A, "FileIo/QueryInfo"},
    {0x044B, "FileIo/FSControl"},
    {0x044C, "FileIo/OperationEnd"},
    {0x044D, "FileIo/DirNotify"},
    {0x0501, "Thread/Start"},
    {0x0502, "Thread/End"},
    {0x0503, "Thread/DCStart"},
    {0x0504, "Thread/DCEnd"},
    {0x0524, "Thread/CSwitch"},
    {0x0525, "Thread/CompCS"},
    {0x0529, "Thread/SpinLock"},
    {0x052B, "Thread/Resource"},
    {0x052C, "Thread/PushLock"},
    {0x052D, "Thread/WaitSingle"},
    {0x052E, "Thread/WaitMultiple"},
    {0x052F, "Thread/DelayExecution"},
    {0x0530, "Thread/SetPriority"},
    {0x0531, "Thread/SetBasePriority"},
    {0x0532, "Thread/ReadyThread"},
    {0x0533, "Thread/SetPagePriority"},
    {0x0534, "Thread/SetIoPriority"},
    {0x0535, "Thread/ThreadAffinity"},
    {0x0539, "Thread/WorkerThread"},
    {0x053C, "Thread/AntiStarvationBoost"},
    {0x053D, "Thread/ThreadMigration"},
    {0x053E, "Thread/KernelQueueEnqueue"},
    {0x053F, "Thread/KernelQueueDequeue"},
    {0x0542, "Thread/AutoBoostSetFloor"},
    {0x0543, "Thread/AutoBoostClearFloor"},
    {0x0544, "Thread/AutoBoostEntryExhaustion"},
    {0x0545, "Thread/SubProcessTagChanged"},
    {0x0548, "Thread/SetName"},
    {0x060A, "TcpIp/Send"},
    {0x060B, "TcpIp/Recv"},
    {0x060C, "TcpIp/Connect"},
    {0x060D, "TcpIp/Disconnect"},
    {0x060E, "TcpIp/Retransmit"},
    {0x060F, "TcpIp/Accept"},
    {0x0610, "TcpIp/Reconnect"},
    {0x0611, "TcpIp/Fail"},
    {0x0612, "TcpIp/TCPCopy"},
    {0x0613, "TcpIp/ARPCopy"},
    {0x0614, "TcpIp/FullACK"},
    {0x0615, "TcpIp/PartACK"},
    {0x0616, "TcpIp/DupACK"},
    {0x061A, "TcpIp/SendIPV6"},
    {0x061B, "TcpIp/RecvIPV6"},
    {0x061C, "TcpIp/ConnectIPV6"},
    {0x061D, "TcpIp/DisconnectIPV6"},
    {0x061E, "TcpIp/RetransmitIPV6"},
    {0x061F, "TcpIp/AcceptIPV6"},
    {0x0620, "TcpIp/ReconnectIPV6"},
    {0x0621, "TcpIp/FailIPV6"},
    {0x0622, "TcpIp/TCPCopyIPV6"},
    {0x080A, "UdpIp/Send"},
    {0x080B, "UdpIp/Recv"},
    {0x0811, "UdpIp/Fail"},
    {0x081A, "UdpIp/SendIPV6"},
    {0x081B, "UdpIp/RecvIPV6"},
    {0x090A, "Registry/Create"},
    {0x090B, "Registry/Open"},
    {0x090C, "Registry/Delete"},
    {0x090D, "Registry/Query"},
    {0x090E, "Registry/SetValue"},
    {0x090F, "Registry/DeleteValue"},
    {0x0910, "Registry/QueryValue"},
    {0x0911, "Registry/EnumerateKey"},
    {0x0912, "Registry/EnumerateValueKey"},
    {0x0913, "Registry/QueryMultipleValue"},
    {0x0914, "Registry/SetInformation"},
    {0x0915, "Registry/Flush"},
    {0x0916, "Registry/KCBCreate"},
    {0x0917, "Registry/KCBDelete"},
    {0x0918, "Registry/KCBRundownBegin"},
    {0x0919, "Registry/KCBRundownEnd"},
    {0x091A, "Registry/Virtualize"},
    {0x091B, "Registry/Close"},
    {0x0B0A, "SystemConfig/CPU"},
    {0x0B0B, "SystemConfig/PhyDisk"},
    {0x0B0C, "SystemConfig/LogDisk"},
    {0x0B0D, "SystemConfig/NIC"},
    {0x0B0E, "SystemConfig/Video"},
    {0x0B0F, "SystemConfig/Services"},
    {0x0B10, "SystemConfig/Power"},
    {0x0B11, "SystemConfig/Network"},
    {0x0B12, "SystemConfig/OpticalMedia"},
    {0x0B15, "SystemConfig/IRQ"},
    {0x0B16, "SystemConfig/PnP"},
    {0x0B17, "SystemConfig/IDEChannel"},
    {0x0B18, "SystemConfig/NumaNode"},
    {0x0B19, "SystemConfig/Platform"},
    {0x0F22, "PerfInfo/Mark"},
    {0x0F2E, "PerfInfo/SampleProf"},
    {0x0F2F, "PerfInfo/PmcInterrupt"},
    {0x0F32, "PerfInfo/ISR-MSI"},
    {0x0F33, "PerfInfo/SysClEnter"},
    {0x0F34, "PerfInfo/SysClExit"},
    {0x0F42, "PerfInfo/ThreadedDPC"},
    {0x0F43, "PerfInfo/ISR"},
    {0x0F44, "PerfInfo/DPC"},
    {0x0F45, "PerfInfo/TimerDPC"},
    {0x0F48, "PerfInfo/SetInterval"},
    {0x0F49, "PerfInfo/CollectionStart"},
    {0x0F4A, "PerfInfo/CollectionEnd"},
    {0x0F4B, "PerfInfo/SpinLockDCStart"},
    {0x0F4C, "PerfInfo/SpinLockDCEnd"},
    {0x0F64, "PerfInfo/DPCEnqueue"},
    {0x0F65, "PerfInfo/DPCExecution"},
    {0x1402, "Image/Unload"},
    {0x1403, "Image/DCStart"},
    {0x1404, "Image/DCEnd"},
    {0x140A, "Image/Load"},
    {0x1421, "Image/KernelBase"},
    {0x1422, "Image/HypercallPage"},
    {0x1820, "StackWalk/Stack"},
    {0x1823, "StackWalk/KeyDelete"},
    {0x1824, "StackWalk/KeyRundown"},
    {0x1825, "StackWalk/StackKeyKernel"},
    {0x1826, "StackWalk/StackKeyUser"},
    {0x1A21, "ALPC/SendMessage"},
    {0x1A22, "ALPC/ReceiveMessage"},
    {0x1A23, "ALPC/WaitForReply"},
    {0x1A24, "ALPC/WaitForNewMessage"},
    {0x1A25, "ALPC/UnWait"},
};

static int by_hook(const void *key, const void *elem)
{
    uint16_t k = *(const uint16_t *)key, h = ((const hook_entry *)elem)->hook;
    return (k > h) - (k < h);
}

const char *etl_hook_name(uint16_t hook)
{
    const hook_entry *e = bsearch(&hook, hooks, COUNT(hooks), sizeof hooks[0], by_hook);
    return e ? e->name : NULL;
}

static bool same(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) return false;
    return *a == *b;
}

/* A whole-string number: 0x-prefixed hex or decimal, at most 0xFFFF; else -1. */
static int parse_number(const char *s)
{
    int base = 10;
    if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        base = 16;
        s += 2;
    }
    if (!isxdigit((unsigned char)*s)) return -1;
    char *end;
    unsigned long v = strtoul(s, &end, base);
    return *end || v > 0xFFFF ? -1 : (int)v;
}

int etl_hook_by_name(const char *name)
{
    if (!name || !*name) return ETL_HOOK_UNKNOWN;
    int number = parse_number(name);
    if (number >= 0) return number;
    const hook_entry *found = NULL;
    bool qualified = strchr(name, '/') != NULL;
    for (size_t i = 0; i < COUNT(hooks); i++) {
        const char *event = strchr(hooks[i].name, '/') + 1;
        if (!same(name, qualified ? hooks[i].name : event)) continue;
        if (!found) found = &hooks[i];
        else if (strcmp(found->name, hooks[i].name)) return ETL_HOOK_AMBIGUOUS;
    }
    return found ? found->hook : ETL_HOOK_UNKNOWN;
}

/*
 * MaximumWaitReason (KWAIT_REASON count) by build. Evidence:
 *   < 6000   27  XP SP3 symbols (Vergilius); Server 2003 assumed the same.
 *   6000+    37  Vista SP2 symbols (Vergilius) and Microsoft's CSwitch page
 *                (values 0-36); Windows 7 assumed the same.
 *   9200+    39  WrAlertByThreadId (37) serves the Windows 8 NtWaitForAlertByThreadId;
 *                WrDeferredPreempt (38) assumed added with it - Low confidence,
 *                no symbol dump of 8/8.1 was found.
 *   10240+   39  Chappell, PERFINFO_CCSWAP_BUFFER: "currently 0x27" (original Windows 10).
 *   16299+   40  WrPhysicalFault: ReactOS NDK ketypes.h gates it on NTDDI_WIN10_RS3 (1709).
 *   22000+   41  WrIoRing: gated on NTDDI_WIN11 (21H2); IoRing appeared with Windows 11.
 *   22621+   42  WrMdlCache: gated on NTDDI_WIN11_NI (22H2); Vergilius 23H2 shows 42.
 *   26100+   43  WrRcu: gated on NTDDI_WIN11_GE (24H2); phnt's Aug 2024 list.
 */
unsigned etl_max_wait_reason_for_build(uint32_t build)
{
    static const struct {
        uint32_t build;
        unsigned max;
    } steps[] = {{26100, 43}, {22621, 42}, {22000, 41}, {16299, 40}, {9200, 39}, {6000, 37}};
    for (size_t i = 0; i < COUNT(steps); i++)
        if (build >= steps[i].build) return steps[i].max;
    return 27;
}

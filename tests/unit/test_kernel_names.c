/*
 * test_kernel_names.c - enumeration names, hook and group names, the reverse
 * hook lookup, MaximumWaitReason by build, and group-mask flags.
 */
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/kernel.h"

static void test_wait_reasons(void **state)
{
    (void)state;
    for (unsigned v = 0; v < 43; v++) assert_non_null(etl_wait_reason_name(v));
    assert_null(etl_wait_reason_name(43));
    assert_null(etl_wait_reason_name(255));
    assert_string_equal(etl_wait_reason_name(0), "Executive");
    assert_string_equal(etl_wait_reason_name(6), "UserRequest");
    assert_string_equal(etl_wait_reason_name(14), "WrEventPair");
    assert_string_equal(etl_wait_reason_name(15), "WrQueue");
    assert_string_equal(etl_wait_reason_name(21), "WrKeyedEvent");
    assert_string_equal(etl_wait_reason_name(23), "WrProcessInSwap");
    assert_string_equal(etl_wait_reason_name(27), "WrResource");
    assert_string_equal(etl_wait_reason_name(31), "WrDispatchInt");
    assert_string_equal(etl_wait_reason_name(37), "WrAlertByThreadId");
    assert_string_equal(etl_wait_reason_name(38), "WrDeferredPreempt");
    assert_string_equal(etl_wait_reason_name(39), "WrPhysicalFault");
    assert_string_equal(etl_wait_reason_name(40), "WrIoRing");
    assert_string_equal(etl_wait_reason_name(41), "WrMdlCache");
    assert_string_equal(etl_wait_reason_name(42), "WrRcu");
}

static void test_small_enums(void **state)
{
    (void)state;
    assert_string_equal(etl_thread_state_name(0), "Initialized");
    assert_string_equal(etl_thread_state_name(1), "Ready");
    assert_string_equal(etl_thread_state_name(5), "Waiting");
    assert_string_equal(etl_thread_state_name(7), "DeferredReady");
    assert_string_equal(etl_thread_state_name(9), "WaitingForProcessInSwap");
    assert_null(etl_thread_state_name(10));
    assert_string_equal(etl_processor_mode_name(0), "KernelMode");
    assert_string_equal(etl_processor_mode_name(1), "UserMode");
    assert_null(etl_processor_mode_name(2));
    for (unsigned v = 0; v < 5; v++) assert_non_null(etl_spinlock_acquire_mode_name(v));
    assert_string_equal(etl_spinlock_acquire_mode_name(1), "QueuedSpinLock");
    assert_null(etl_spinlock_acquire_mode_name(5));
    assert_string_equal(etl_adjust_reason_name(0), "AdjustNone");
    assert_string_equal(etl_adjust_reason_name(1), "AdjustUnwait");
    assert_string_equal(etl_adjust_reason_name(2), "AdjustBoost");
    assert_null(etl_adjust_reason_name(3));
}

static void test_hook_names(void **state)
{
    (void)state;
    static const struct {
        uint16_t hook;
        const char *name;
    } known[] = {
        {0x0000, "EventTrace/Header"},     {0x0005, "EventTrace/Extension"},
        {0x0020, "EventTrace/EndExtension"}, {0x0301, "Process/Start"},
        {0x0302, "Process/End"},           {0x0303, "Process/DCStart"},
        {0x0304, "Process/DCEnd"},         {0x0327, "Process/Defunct"},
        {0x030A, "Image/Load"},            {0x1402, "Image/Unload"},
        {0x1403, "Image/DCStart"},         {0x1404, "Image/DCEnd"},
        {0x0501, "Thread/Start"},          {0x0502, "Thread/End"},
        {0x0503, "Thread/DCStart"},        {0x0504, "Thread/DCEnd"},
        {0x0524, "Thread/CSwitch"},        {0x0525, "Thread/CompCS"},
        {0x0529, "Thread/SpinLock"},       {0x052B, "Thread/Resource"},
        {0x0530, "Thread/SetPriority"},    {0x0531, "Thread/SetBasePriority"},
        {0x0532, "Thread/ReadyThread"},    {0x0535, "Thread/ThreadAffinity"},
        {0x053D, "Thread/ThreadMigration"}, {0x0548, "Thread/SetName"},
        {0x0F2E, "PerfInfo/SampleProf"},   {0x0F2F, "PerfInfo/PmcInterrupt"},
        {0x0F32, "PerfInfo/ISR-MSI"},      {0x0F33, "PerfInfo/SysClEnter"},
        {0x0F34, "PerfInfo/SysClExit"},    {0x0F42, "PerfInfo/ThreadedDPC"},
        {0x0F43, "PerfInfo/ISR"},          {0x0F44, "PerfInfo/DPC"},
        {0x0F45, "PerfInfo/TimerDPC"},     {0x0F4B, "PerfInfo/SpinLockDCStart"},
        {0x0F64, "PerfInfo/DPCEnqueue"},   {0x010A, "DiskIo/Read"},
        {0x0443, "FileIo/Read"},           {0x1820, "StackWalk/Stack"},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const char *n = etl_hook_name(known[i].hook);
        if (!n || strcmp(n, known[i].name))
            fail_msg("hook 0x%04x: %s, want %s", known[i].hook, n ? n : "NULL", known[i].name);
        assert_int_equal(etl_hook_by_name(known[i].name), known[i].hook);
    }
    assert_null(etl_hook_name(0x0050));
    assert_null(etl_hook_name(0x0526));
    assert_null(etl_hook_name(0xFFFF));

    /* every name in the table maps back to its hook, or to its alias's lower id */
    unsigned named = 0;
    for (unsigned h = 0; h <= 0xFFFF; h++) {
        const char *n = etl_hook_name((uint16_t)h);
        if (!n) continue;
        named++;
        int back = etl_hook_by_name(n);
        assert_true(back >= 0 && back <= (int)h);
        assert_string_equal(etl_hook_name((uint16_t)back), n);
    }
    assert_true(named > 150);
    assert_string_equal(etl_hook_name(0x140A), "Image/Load");
    assert_int_equal(etl_hook_by_name("Image/Load"), 0x030A);
    assert_int_equal(etl_hook_by_name("load"), 0x030A);
}

static void test_hook_by_name(void **state)
{
    (void)state;
    assert_int_equal(etl_hook_by_name("Thread/CSwitch"), 0x0524);
    assert_int_equal(etl_hook_by_name("thread/cswitch"), 0x0524);
    assert_int_equal(etl_hook_by_name("CSwitch"), 0x0524);
    assert_int_equal(etl_hook_by_name("CSWITCH"), 0x0524);
    assert_int_equal(etl_hook_by_name("ReadyThread"), 0x0532);
    assert_int_equal(etl_hook_by_name("CompCS"), 0x0525);
    assert_int_equal(etl_hook_by_name("SpinLock"), 0x0529);
    assert_int_equal(etl_hook_by_name("0x0524"), 0x0524);
    assert_int_equal(etl_hook_by_name("0X524"), 0x0524);
    assert_int_equal(etl_hook_by_name("1316"), 0x0524);
    assert_int_equal(etl_hook_by_name("0x0050"), 0x0050); /* any id, named or not */
    assert_int_equal(etl_hook_by_name("0xFFFF"), 0xFFFF);
    assert_int_equal(etl_hook_by_name("Start"), ETL_HOOK_AMBIGUOUS);
    assert_int_equal(etl_hook_by_name("DCStart"), ETL_HOOK_AMBIGUOUS);
    assert_int_equal(etl_hook_by_name("0x10000"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("0x"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("0x12g"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("-1"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name(""), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name(NULL), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("Thread/"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("Process/CSwitch"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("Thread/CSwitchX"), ETL_HOOK_UNKNOWN);
    assert_int_equal(etl_hook_by_name("CSwitc"), ETL_HOOK_UNKNOWN);
}

static void test_groups(void **state)
{
    (void)state;
    assert_string_equal(etl_group_name(0x00), "EventTrace");
    assert_string_equal(etl_group_name(0x03), "Process");
    assert_string_equal(etl_group_name(0x05), "Thread");
    assert_string_equal(etl_group_name(0x0F), "PerfInfo");
    assert_string_equal(etl_group_name(0x14), "Image");
    assert_string_equal(etl_group_name(0x1E), "HypervisorX");
    assert_null(etl_group_name(0x1F));
    assert_null(etl_group_guid(0x1F));

    static const struct {
        unsigned group;
        const char *guid;
    } guids[] = {
        {0x00, "68fdd900-4a3e-11d1-84f4-0000f80464e3"},
        {0x01, "3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c"},
        {0x03, "3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c"},
        {0x04, "90cbdc39-4a3e-11d1-84f4-0000f80464e3"},
        {0x05, "3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c"},
        {0x0F, "ce1dbfb4-137e-4da6-87b0-3f59aa102cbc"},
        {0x14, "2cb15d1d-5fc1-11d2-abe1-00a0c911f518"},
        {0x18, "def2fe46-7bd6-4b80-bd94-f57fe20d0ce3"},
        {0x1E, "2ce9a149-effe-42f0-a635-a1d39e26c8f2"},
    };
    for (size_t i = 0; i < sizeof guids / sizeof guids[0]; i++) {
        char text[37];
        const etl_guid *g = etl_group_guid(guids[i].group);
        assert_non_null(g);
        etl_guid_format(g, text);
        assert_string_equal(text, guids[i].guid);
    }
    for (unsigned g = 0; g <= 0x1E; g++) assert_non_null(etl_group_guid(g));
}

static void test_max_wait_reason(void **state)
{
    (void)state;
    static const struct {
        uint32_t build;
        unsigned max;
    } t[] = {
        {0, 27},      {2600, 27},   {3790, 27},   {5999, 27},   {6000, 37},   {6002, 37},
        {7601, 37},   {9199, 37},   {9200, 39},   {9600, 39},   {10240, 39},  {14393, 39},
        {15063, 39},  {16298, 39},  {16299, 40},  {18362, 40},  {19045, 40},  {20348, 40},
        {21999, 40},  {22000, 41},  {22620, 41},  {22621, 42},  {22631, 42},  {26099, 42},
        {26100, 43},  {27000, 43},  {UINT32_MAX, 43},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (etl_max_wait_reason_for_build(t[i].build) != t[i].max)
            fail_msg("build %u: %u, want %u", (unsigned)t[i].build,
                     etl_max_wait_reason_for_build(t[i].build), t[i].max);
    /* every reason below the maximum has a name */
    for (unsigned v = 0; v < etl_max_wait_reason_for_build(UINT32_MAX); v++)
        assert_non_null(etl_wait_reason_name(v));
}

static void test_groupmask_flags(void **state)
{
    (void)state;
    etl_groupmask m;
    memset(&m, 0, sizeof m);
    etl_groupmask_set(&m, ETL_PERF_CONTEXT_SWITCH);
    etl_groupmask_set(&m, ETL_PERF_COMPACT_CSWITCH);
    etl_groupmask_set(&m, ETL_PERF_PROC_THREAD);
    etl_groupmask_set(&m, ETL_PERF_SYSCALL);
    assert_int_equal(m.masks[0], 0x3);
    assert_int_equal(m.masks[1], 0x104);
    assert_int_equal(m.masks[2], 0x40);
    assert_true(etl_groupmask_test(&m, ETL_PERF_CONTEXT_SWITCH));
    assert_true(etl_groupmask_test(&m, ETL_PERF_COMPACT_CSWITCH));
    assert_true(etl_groupmask_test(&m, ETL_PERF_THREAD));
    assert_false(etl_groupmask_test(&m, ETL_PERF_LOADER));
    assert_false(etl_groupmask_test(&m, ETL_PERF_SPINLOCK));
    assert_false(etl_groupmask_test(&m, ETL_PERF_DISPATCHER));
    /* the index bits select the mask: PERF_MEMORY is Masks[1] bit 0, not Masks[0] */
    assert_false(etl_groupmask_test(&m, ETL_PERF_MEMORY));
    assert_true(etl_groupmask_test(&m, ETL_PERF_PROCESS));
    /* composite constants: any of their bits (the kernel's test) */
    etl_groupmask_set(&m, ETL_PERF_SPINLOCK);
    assert_true(etl_groupmask_test(&m, ETL_PERF_SPININSTR));

    const char *names[16];
    size_t n = etl_groupmask_names(&m, names, 16);
    assert_int_equal(n, 6);
    assert_string_equal(names[0], "PERF_PROCESS");
    assert_string_equal(names[1], "PERF_THREAD");
    assert_string_equal(names[2], "PERF_CONTEXT_SWITCH");
    assert_string_equal(names[3], "PERF_COMPACT_CSWITCH");
    assert_string_equal(names[4], "PERF_SPINLOCK");
    assert_string_equal(names[5], "PERF_SYSCALL");
    /* a short array still gets the total */
    assert_int_equal(etl_groupmask_names(&m, names, 2), 6);
    assert_int_equal(etl_groupmask_names(&m, NULL, 0), 6);

    /* EnableFlags bits mapped elsewhere keep their EVENT_TRACE_FLAG_ name */
    memset(&m, 0, sizeof m);
    m.masks[0] = 0x10 | 0x800;
    n = etl_groupmask_names(&m, names, 16);
    assert_int_equal(n, 2);
    assert_string_equal(names[0], "EVENT_TRACE_FLAG_CSWITCH");
    assert_string_equal(names[1], "EVENT_TRACE_FLAG_DISPATCHER");

    /* every single bit of masks 1 and 2 named in the header has a name */
    memset(&m, 0xFF, sizeof m.masks);
    n = etl_groupmask_names(&m, NULL, 0);
    assert_true(n >= 100);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wait_reasons),
        cmocka_unit_test(test_small_enums),
        cmocka_unit_test(test_hook_names),
        cmocka_unit_test(test_hook_by_name),
        cmocka_unit_test(test_groups),
        cmocka_unit_test(test_max_wait_reason),
        cmocka_unit_test(test_groupmask_flags),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

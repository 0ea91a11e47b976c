/*
 * schema.c - the one definition of the exported tables and views. The SQLite
 * loader creates them from here, the CSV writer takes its headers from here, and
 * `etlkit export --schema` prints them as the Markdown that is docs/schema.md, so
 * the three cannot drift (a test compares them with PRAGMA table_info).
 */
#include <string.h>
#include "etlkit/export.h"
#include "export/schema_internal.h"

#define I "INTEGER"
#define T "TEXT"

/* The Parquet storage of each column (etl_column_def.kind): its type, whether it may be NULL, its encoding. */
#define NN ETL_COLUMN_NOT_NULL
#define DL ETL_COLUMN_DELTA
#define INT8 ETL_COLUMN_INT8
#define INT32 ETL_COLUMN_INT32
#define INT64 ETL_COLUMN_INT64
#define UINT8 ETL_COLUMN_UINT8
#define UINT16 ETL_COLUMN_UINT16
#define UINT32 ETL_COLUMN_UINT32
#define BOOL ETL_COLUMN_BOOL
#define TEXT ETL_COLUMN_TEXT
#define TS (ETL_COLUMN_INT64 | DL)  /* raw ticks: the reader passes over a time with its top bit set, so each fits */
#define NS (ETL_COLUMN_INT64 | DL)  /* ns since the trace start (not wall-clock time: no TIMESTAMP type) */
#define CNT (ETL_COLUMN_UINT64 | DL) /* counters (rdtsc, PMC): every 64-bit value (SQLite: NULL past INT64_MAX) */

static const etl_column_def trace_cols[] = {
    {"key", T, "what: `os_build`, `num_cpus`, `start_time_utc`, `events_lost`, ... (listed below)", TEXT|NN},
    {"value", T, "its value as text", TEXT},
    {"int_value", I, "its value when it is a number, else NULL", INT64},
};

static const etl_column_def process_cols[] = {
    {"upid", I, "process instance: a PID that is reused is a new instance", UINT32|NN},
    {"pid", I, "ProcessId", UINT32|NN},
    {"name", T, "ImageFileName, NULL when no Process event named it", TEXT},
    {"command_line", T, "CommandLine (Process v2+), NULL when none", TEXT},
    {"start_ts", I, "Start/DCStart time, or first sight, raw session clock ticks; for a process known only from a "
                    "rundown's Defunct (exited, still referenced), its end", TS},
    {"end_ts", I, "End time (ticks), else a Defunct's ExitTime (v5) or its rundown's time (ended by then); NULL when "
                  "it did not end in the trace", TS},
    {"start_ns", I, "start_ts in ns since the trace start (negative before it: a Defunct's ExitTime)", NS|NN},
    {"end_ns", I, "end_ts in ns since the trace start", NS},
    {"started", I, "1 when a Start or DCStart event was seen", BOOL|NN},
};

static const etl_column_def thread_cols[] = {
    {"utid", I, "thread instance: a TID that is reused is a new instance; the idle thread has none", UINT32|NN},
    {"tid", I, "ThreadId", UINT32|NN},
    {"upid", I, "its process instance, NULL when no Thread event named the process", UINT32},
    {"pid", I, "ProcessId, NULL when unknown", UINT32},
    {"name", T, "thread name (Thread v3+ or SetName), NULL when none", TEXT},
    {"start_ts", I, "Start/DCStart time, or first sight (ticks)", TS},
    {"end_ts", I, "End time (ticks), NULL when it did not end in the trace", TS},
    {"start_ns", I, "start_ts in ns", NS|NN},
    {"end_ns", I, "end_ts in ns", NS},
    {"base_priority", I, "BasePriority (Thread v3+), NULL when unknown", UINT8},
    {"started", I, "1 when a Start or DCStart event was seen", BOOL|NN},
};

static const etl_column_def cswitch_cols[] = {
    {"ts", I, "raw timestamp, session clock ticks", TS},
    {"ns", I, "ns since the trace start: floor((ts - t0) * 10^9 / F)", NS|NN},
    {"cpu", I, "processor", UINT16|NN},
    {"new_tid", I, "NewThreadId (NULL: a compact switch whose successor was lost)", UINT32},
    {"old_tid", I, "OldThreadId", UINT32},
    {"new_priority", I, "NewThreadPriority", INT8},
    {"old_priority", I, "OldThreadPriority", INT8},
    {"previous_cstate", I, "PreviousCState (v1: NewThreadQuantum)", UINT8},
    {"spare_byte", I, "SpareByte / NewThreadPriorityDecrement (v1: OldThreadQuantum)", UINT8},
    {"old_wait_reason", I, "OldThreadWaitReason (KWAIT_REASON; names in enum_name)", UINT8},
    {"old_wait_mode", I, "OldThreadWaitMode: 0 KernelMode, 1 UserMode", UINT8},
    {"old_state", I, "OldThreadState (KTHREAD_STATE; names in enum_name)", UINT8},
    {"old_ideal_processor", I, "OldThreadWaitIdealProcessor", UINT8},
    {"new_wait_time", I, "NewThreadWaitTime (clock-interrupt ticks)", UINT32},
    {"old_remaining_quantum", I, "OldThreadRemainingQuantum (v2+)", INT32},
    {"flags", I, "raw byte 0x0D (v3/v4)", UINT8},
    {"old_bam", I, "OldBamEppImportant (v3) / OldThreadBamQosLevel (v4)", UINT8},
    {"new_bam", I, "NewBamEppImportant (v3) / NewThreadBamQosLevel (v4)", UINT8},
    {"version", I, "event version (CSwitch) or batch version (compact)", UINT8|NN},
    {"source", T, "`full` (a CSwitch event) or `compact` (a record of a compact batch, expanded)", TEXT|NN},
};

static const etl_column_def slice_cols[] = {
    {"cpu", I, "processor", UINT16|NN},
    {"utid", I, "the thread that ran (observed: the next switch's old thread); NULL for idle and unknown", UINT32},
    {"tid", I, "its TID: 0 for the idle thread, NULL when unknown (a compact CPU's last slice; a slice across records "
            "lost: a buffer missing or passed over, a CPU's records ending before the trace)", UINT32},
    {"start_ts", I, "Switch-In Time (ticks); the trace start for a head slice", TS},
    {"end_ts", I, "Next Switch-Out Time (ticks); the trace end for a tail slice", TS},
    {"start_ns", I, "start_ts in ns", NS|NN},
    {"end_ns", I, "end_ts in ns; end_ns - start_ns is the slice's CPU Usage", NS|NN},
    {"end_state", I, "OldThreadState of the switch that ended it (New State), NULL for a tail", UINT8},
    {"end_wait_reason", I, "OldThreadWaitReason of that switch (New Wait Reason)", UINT8},
    {"priority", I, "NewThreadPriority of the switch-in (New In Pri)", INT8},
    {"old_utid", I, "the thread the switch-in took off the CPU (Old Thread)", UINT32},
    {"old_tid", I, "its TID (0 idle), NULL for a head slice", UINT32},
    {"head", I, "1: no switch began it: the head slice [trace start, first switch), charged to that switch's old "
             "thread; or, tid NULL, the rest of a CPU whose records end before the trace (from its last record)", BOOL|NN},
    {"tail", I, "1: the CPU's last slice, run to the trace end", BOOL|NN},
    {"mismatch", I, "1: the switch-in planned another thread (cswitch_chain_mismatch)", BOOL|NN},
    {"prev_state", I, "New Prev State: the thread's previous switch-out state, NULL for its first", UINT8},
    {"prev_wait_reason", I, "New Prev Wait Reason", UINT8},
    {"last_switch_out_ts", I, "Last Switch-Out Time (ticks), NULL for its first slice", TS},
    {"last_switch_out_ns", I, "Last Switch-Out Time (ns)", NS},
    {"ready_time_ts", I, "Ready Time (ticks), NULL when unknown", TS},
    {"ready_time_ns", I, "Ready Time (ns); Ready = start_ns - ready_time_ns", NS},
    {"waited", I, "Count: Waits: 1 when the previous switch-out was a wait; Waits = ready_time_ns - last_switch_out_ns", BOOL|NN},
    {"readying_utid", I, "Readying Thread instance (NULL: idle, a DPC on an idle CPU, or unknown)", UINT32},
    {"readying_tid", I, "Readying Thread Id (0: idle), NULL when no ReadyThread readied it", UINT32},
    {"ready_flags", I, "the ReadyThread's Flags (1 in DPC, 2 kernel stack not resident, 4 process out of memory, 8 direct switch)", UINT8},
    {"new_stack_id", I, "New Thread Stack: the stack walked at the switch-in (stack table), NULL when none (a compact batch's switch)", UINT32},
    {"readying_stack_id", I, "Readying Thread Stack: the stack walked at the ReadyThread that readied it, NULL when none", UINT32},
};

static const etl_column_def thread_state_cols[] = {
    {"utid", I, "thread instance", UINT32|NN},
    {"tid", I, "its TID", UINT32|NN},
    {"state", I, "KTHREAD_STATE: 2 Running (on cpu), 1 Ready (readied, not yet running), or the state it switched out in", UINT8},
    {"wait_reason", I, "the switch-out's wait reason (NULL for Running and Ready)", UINT8},
    {"start_ts", I, "ticks", TS},
    {"end_ts", I, "ticks", TS},
    {"start_ns", I, "ns", NS|NN},
    {"end_ns", I, "ns", NS|NN},
    {"cpu", I, "processor while Running, else NULL", UINT16},
};

static const etl_column_def ready_cols[] = {
    {"ts", I, "ticks", TS},
    {"ns", I, "ns", NS|NN},
    {"cpu", I, "the readying processor (where the event was logged)", UINT16|NN},
    {"utid", I, "the thread readied", UINT32},
    {"tid", I, "its TID", UINT32|NN},
    {"readying_utid", I, "the thread running on cpu at that moment (NULL: idle or unknown)", UINT32},
    {"readying_tid", I, "its TID (0: idle), NULL when unknown", UINT32},
    {"adjust_reason", I, "AdjustReason (names in enum_name)", UINT8|NN},
    {"adjust_increment", I, "AdjustIncrement", INT8|NN},
    {"flags", I, "Flags: 1 in DPC, 2 kernel stack not resident, 4 process out of memory, 8 direct switch", UINT8|NN},
};

static const etl_column_def spinlock_cols[] = {
    {"ts", I, "ticks", TS},
    {"ns", I, "ns", NS|NN},
    {"cpu", I, "processor", UINT16|NN},
    {"spin_lock_address", T, "SpinLockAddress, hex (`0x...`): pointers do not fit a signed 64-bit integer", TEXT|NN},
    {"caller_address", T, "CallerAddress, hex", TEXT|NN},
    {"acquire_time", I, "AcquireTime (rdtsc cycles)", CNT},
    {"release_time", I, "ReleaseTime (rdtsc cycles)", CNT},
    {"wait_time_in_cycles", I, "WaitTimeInCycles", UINT32|NN},
    {"spin_count", I, "SpinCount", UINT32|NN},
    {"thread_id", I, "ThreadId", UINT32|NN},
    {"interrupt_count", I, "InterruptCount", UINT32|NN},
    {"irql", I, "Irql", UINT8|NN},
    {"acquire_depth", I, "AcquireDepth", UINT8|NN},
    {"flags", I, "Flags, raw", UINT8|NN},
    {"acquire_mode", I, "Flags & 0x3F (names in enum_name)", UINT8|NN},
    {"execute_dpc", I, "Flags bit 6", BOOL|NN},
    {"execute_isr", I, "Flags bit 7", BOOL|NN},
};

static const etl_column_def pmc_cols[] = {
    {"ts", I, "ticks of the CSwitch that carried the counters", TS},
    {"ns", I, "ns", NS|NN},
    {"cpu", I, "processor", UINT16|NN},
    {"counter", I, "index of the counter in the event header (0..6)", UINT8|NN},
    {"value", I, "the counter's value", CNT},
};

static const etl_column_def enum_cols[] = {
    {"kind", T, "`wait_reason`, `thread_state`, `wait_mode`, `adjust_reason`, `acquire_mode`", TEXT|NN},
    {"code", I, "the number stored in the other tables", INT64|NN},
    {"name", T, "its name (`WrQueue`, `Waiting`, ...)", TEXT|NN},
};

static const etl_column_def image_cols[] = {
    {"image_id", I, "the image: the order the trace logged it (Image Load, DCStart), from 0", INT64|NN|DL},
    {"pid", I, "ProcessId as logged (0 or 4 for kernel images, which map in every process)", INT64|NN},
    {"base", T, "ImageBase, hexadecimal (`0x7ffb5a2c0000`: kernel addresses do not fit a signed integer)", TEXT|NN},
    {"size", I, "ImageSize, bytes", INT64},
    {"name", T, "the file's base name, case kept (the `module` of `etlkit profile`)", TEXT},
    {"path", T, "FileName as logged (`\\Device\\HarddiskVolume3\\...`)", TEXT},
    {"time_date_stamp", I, "TimeDateStamp of the PE header (0 when not logged)", INT64|NN},
    {"checksum", I, "ImageChecksum (0 when not logged)", INT64|NN},
    {"load_ns", I, "ns of its Load or rundown DCStart; NULL when loaded before the trace; for an image known only "
                   "from its Unload, the end of the last life at its place, or NULL", NS},
    {"unload_ns", I, "ns of its Unload (or a later load at the same base); NULL when never unloaded", NS},
    {"kernel", I, "1 for a kernel-space image", BOOL|NN},
};

static const etl_column_def stack_cols[] = {
    {"stack_id", I, "the stack: a distinct sequence of (address, image)", INT64|NN},
    {"depth", I, "the frame's place, 0 = innermost: the walk's first frame, mostly the sampled address (`sample.ip`); a walk may "
             "begin beside it (2 of 6,318 walked samples in perfview-x64-compressed.etl), and a sample no walk came with "
             "has its address alone", INT64|NN},
    {"address", T, "the frame's address, hexadecimal", TEXT|NN},
    {"image_id", I, "the image holding it at the sample's time in the sample's process, NULL: Unknown (no image)", INT64},
    {"symbol", T, "with --symbols: module!function+0xoff from its PDB, else module+0xoff (no PDB, a mismatched one); NULL without --symbols", TEXT},
};

static const etl_column_def sample_cols[] = {
    {"ts", I, "raw timestamp of the SampledProfile event (ticks)", TS},
    {"ns", I, "ns since the trace start", NS|NN},
    {"cpu", I, "processor", INT64|NN},
    {"utid", I, "the thread instance (as `thread.utid`), NULL for the idle thread and threads the model never saw", INT64},
    {"tid", I, "ThreadId (0: Idle)", INT64|NN},
    {"pid", I, "its process (the thread's Start/DCStart at or before the sample, else the first after), NULL unknown", INT64},
    {"stack_id", I, "its stack in `stack`: the stack walk (kernel part on top of the user part), or the IP alone", INT64|NN},
    {"walked", I, "1 when a stack walk came with it, 0 when its stack is the IP alone", BOOL|NN},
    {"ip", T, "InstructionPointer, hexadecimal", TEXT|NN},
    {"image_id", I, "the image holding the IP (the sample's module), NULL: Unknown", INT64},
};

static const char *const process_idx[] = {"CREATE INDEX process_pid ON process(pid)", NULL};
static const char *const thread_idx[] = {"CREATE INDEX thread_tid ON thread(tid)", "CREATE INDEX thread_upid ON thread(upid)",
                                         NULL};
static const char *const cswitch_idx[] = {"CREATE INDEX cswitch_cpu_ts ON cswitch(cpu, ts)", NULL};
static const char *const slice_idx[] = {"CREATE INDEX slice_utid ON slice(utid)",
                                        "CREATE INDEX slice_cpu_start ON slice(cpu, start_ns)", NULL};
static const char *const state_idx[] = {"CREATE INDEX thread_state_utid ON thread_state(utid)", NULL};
static const char *const ready_idx[] = {"CREATE INDEX ready_utid ON ready(utid)", NULL};
static const char *const spin_idx[] = {"CREATE INDEX spinlock_address ON spinlock(spin_lock_address)", NULL};
static const char *const stack_idx[] = {"CREATE INDEX stack_id ON stack(stack_id, depth)", NULL};
static const char *const sample_idx[] = {"CREATE INDEX sample_utid ON sample(utid)",
                                         "CREATE INDEX sample_stack ON sample(stack_id)", NULL};
static const char *const none_idx[] = {NULL};

#define N(a) (unsigned)(sizeof a / sizeof a[0])

static const etl_table_def tables[ETL_TABLE_COUNT] = {
    [ETL_TABLE_TRACE] = {"trace", "Key/value metadata: the logfile header, the export, and every recovery and anomaly counter.",
                      trace_cols, N(trace_cols), none_idx, NULL},
    [ETL_TABLE_PROCESS] = {"process", "Process instances (names and lifetimes from Process events).", process_cols,
                        N(process_cols), process_idx, NULL},
    [ETL_TABLE_THREAD] = {"thread", "Thread instances (names and lifetimes from Thread and SetName events).", thread_cols,
                       N(thread_cols), thread_idx, NULL},
    [ETL_TABLE_CSWITCH] = {"cswitch",
                        "Every context switch in time order, CSwitch events and expanded compact batches alike, with "
                        "every field the record carries (NULL where its form does not carry it).",
                        cswitch_cols, N(cswitch_cols), cswitch_idx, "cpu,ns"},
    [ETL_TABLE_SLICE] = {"slice",
                      "One row per switch-in (WPA's CPU Usage (Precise)): who ran on a CPU from one switch to the next, "
                      "with the Ready and Waits that preceded it. With `--range`, a row is kept (whole, with its "
                      "`thread_state` rows) when its slice, its Ready or its Waits interval counts in the window as "
                      "`etlkit cpu` and `etlkit waits` count it: some of it lies in the window, or the instant it is "
                      "counted at (the switch-in, the Ready Time) does.",
                      slice_cols, N(slice_cols), slice_idx, "cpu,start_ns"},
    [ETL_TABLE_THREAD_STATE] = {"thread_state",
                             "Each thread's timeline between its slices: Running on a CPU, then its switch-out state "
                             "(Waiting with a wait reason, ...) until readied, then Ready until switched in. Zero-length "
                             "intervals are left out; when no ReadyThread says when it was readied, the whole gap carries "
                             "the switch-out state.",
                             thread_state_cols, N(thread_state_cols), state_idx, "utid,start_ns"},
    [ETL_TABLE_READY] = {"ready", "Every ReadyThread event with the thread that readied it.", ready_cols, N(ready_cols),
                      ready_idx, "cpu,ns"},
    [ETL_TABLE_SPINLOCK] = {"spinlock", "Every sampled spin lock release (SpinLock events), every field.", spinlock_cols,
                         N(spinlock_cols), spin_idx, "cpu,ns"},
    [ETL_TABLE_PMC] = {"pmc", "PMC counters carried on CSwitch event headers, one row per counter (empty when none).",
                    pmc_cols, N(pmc_cols), none_idx, "cpu,ns"},
    [ETL_TABLE_ENUM_NAME] = {"enum_name", "Names of the enumerations stored as numbers.", enum_cols, N(enum_cols),
                          none_idx, NULL},
    [ETL_TABLE_IMAGE] = {"image",
                      "Every image the trace logged (Image Load and rundown DCStart), with the time it was loaded and "
                      "unloaded (empty when the trace has no samples nor images).",
                      image_cols, N(image_cols), none_idx, NULL},
    [ETL_TABLE_STACK] = {"stack",
                      "The distinct stacks of the samples, one row per frame, innermost first (as `etlkit profile` "
                      "counts them).",
                      stack_cols, N(stack_cols), stack_idx, NULL},
    [ETL_TABLE_SAMPLE] = {"sample",
                       "Every SampledProfile event (CPU Usage (Sampled)) with its thread and stack; the counts by "
                       "module, process and thread equal `etlkit profile`'s.",
                       sample_cols, N(sample_cols), sample_idx, "cpu,ns"},
};

const etl_table_def *etl_export_tables(void) { return tables; }

int etl_export_table_find(const char *name)
{
    for (int i = 0; i < ETL_TABLE_COUNT; i++)
        if (strcmp(tables[i].name, name) == 0) return i;
    return -1;
}

/* ---- views ------------------------------------------------------------------------------- */

/* Each slice's CPU time clipped to the window, as etlkit cpu counts it (analyses.md §2). */
#define CLIP(a, b) "MAX(0, MIN(" b ", COALESCE(w.v1, " b ")) - MAX(" a ", w.v0))"
#define IN_WINDOW(t) "(" t " >= w.v0 AND (w.v1 IS NULL OR " t " < w.v1))"

static const etl_column_def window_vcols[] = {
    {"v0", I, "window start, ns (0: the trace start)", 0},
    {"v1", I, "window end, ns; NULL: the whole trace", 0},
};
static const etl_column_def cpu_thread_vcols[] = {
    {"utid", I, "thread instance", 0},
    {"tid", I, "TID", 0},
    {"pid", I, "PID", 0},
    {"process", T, "image name", 0},
    {"name", T, "thread name", 0},
    {"cpu_ns", I, "CPU time in the window (= `etlkit cpu` cpu_ns)", 0},
    {"switches", I, "switch-ins in the window (= `etlkit cpu` switches)", 0},
};
static const etl_column_def cpu_cpu_vcols[] = {
    {"cpu", I, "processor", 0},
    {"busy_ns", I, "time running threads", 0},
    {"idle_ns", I, "time running the idle thread", 0},
    {"unknown_ns", I, "time of slices whose thread is unknown, and of the window no slice covers", 0},
    {"switches", I, "switch-ins in the window", 0},
};
static const etl_column_def waits_reason_vcols[] = {
    {"code", I, "KWAIT_REASON", 0},
    {"reason", T, "its name", 0},
    {"count", I, "waits (Count: Waits) whose Ready Time is known", 0},
    {"wait_ns", I, "their total, clipped to the window (= `etlkit waits` by_reason)", 0},
    {"max_ns", I, "the longest", 0},
};
static const etl_column_def waits_thread_vcols[] = {
    {"utid", I, "thread instance", 0},
    {"tid", I, "TID", 0},
    {"wait_count", I, "waits", 0},
    {"wait_ns", I, "total (= `etlkit waits` wait_ns)", 0},
    {"wait_max_ns", I, "the longest", 0},
};

#define WAIT_ROWS                                                                                                   \
    "SELECT s.utid AS utid, s.tid AS tid, s.prev_wait_reason & 63 AS code, "                                        \
    CLIP("s.last_switch_out_ns", "s.ready_time_ns") " AS d, " IN_WINDOW("s.ready_time_ns") " AS in_w "            \
    "FROM slice s CROSS JOIN trace_window w WHERE s.utid IS NOT NULL AND s.head = 0 AND s.waited = 1 "             \
    "AND s.ready_time_ns IS NOT NULL AND s.last_switch_out_ns IS NOT NULL"

static const etl_view_def views[] = {
    {"trace_window", "The exported window (`--range`), from `trace`.",
     "CREATE VIEW trace_window AS SELECT (SELECT int_value FROM trace WHERE key = 'window_start_ns') AS v0, "
     "(SELECT int_value FROM trace WHERE key = 'window_end_ns') AS v1",
     window_vcols, N(window_vcols)},
    {"cpu_by_thread", "CPU time and switch-ins per thread instance, as `etlkit cpu` reports them.",
     "CREATE VIEW cpu_by_thread AS SELECT s.utid AS utid, t.tid AS tid, t.pid AS pid, p.name AS process, "
     "t.name AS name, SUM(" CLIP("s.start_ns", "s.end_ns") ") AS cpu_ns, SUM(s.head = 0 AND " IN_WINDOW("s.start_ns")
     ") AS switches FROM slice s CROSS JOIN trace_window w JOIN thread t ON t.utid = s.utid "
     "LEFT JOIN process p ON p.upid = t.upid WHERE s.utid IS NOT NULL GROUP BY s.utid ORDER BY cpu_ns DESC, s.utid",
     cpu_thread_vcols, N(cpu_thread_vcols)},
    /*
     * Every processor 0 .. cpus_seen - 1 (the machine's, as `etlkit cpu` lists them, one without a slice too; none
     * when the trace has no switch), and a processor's window that no slice covers is unknown (etl_usage_finish).
     */
    {"cpu_by_cpu",
     "Busy, idle and unknown time and switch-ins per processor, as `etlkit cpu` reports them: every processor "
     "0 .. `cpus_seen` - 1 of `trace`, one that ran no slice too (its window unknown); no row when the trace has no "
     "switch.",
     "CREATE VIEW cpu_by_cpu AS WITH RECURSIVE k(cpu) AS (SELECT 0 WHERE EXISTS (SELECT 1 FROM slice) "
     "OR (SELECT int_value FROM trace WHERE key = 'switches') > 0 UNION ALL SELECT cpu + 1 FROM k WHERE cpu + 1 < "
     "MAX((SELECT int_value FROM trace WHERE key = 'cpus_seen'), (SELECT COALESCE(MAX(cpu), -1) + 1 FROM slice))), "
     "c AS (SELECT cpu, SUM(CASE WHEN tid != 0 THEN d ELSE 0 END) AS busy, SUM(CASE WHEN tid = 0 THEN d ELSE 0 END) "
     "AS idle, SUM(CASE WHEN tid IS NULL THEN d ELSE 0 END) AS unk, SUM(n) AS n "
     "FROM (SELECT s.cpu AS cpu, s.tid AS tid, "
     CLIP("s.start_ns", "s.end_ns") " AS d, (s.head = 0 AND " IN_WINDOW("s.start_ns") ") AS n "
     "FROM slice s CROSS JOIN trace_window w) GROUP BY cpu), "
     "l AS (SELECT COALESCE(w.v1, (SELECT int_value FROM trace WHERE key = 'end_ns')) - w.v0 AS ns "
     "FROM trace_window w) "
     "SELECT k.cpu AS cpu, COALESCE(c.busy, 0) AS busy_ns, COALESCE(c.idle, 0) AS idle_ns, "
     "COALESCE(c.unk, 0) + MAX(0, l.ns - COALESCE(c.busy, 0) - COALESCE(c.idle, 0) - COALESCE(c.unk, 0)) "
     "AS unknown_ns, "
     "COALESCE(c.n, 0) AS switches FROM k CROSS JOIN l LEFT JOIN c ON c.cpu = k.cpu ORDER BY k.cpu",
     cpu_cpu_vcols, N(cpu_cpu_vcols)},
    {"waits_by_reason", "Waits per wait reason of the switch-out (New Prev Wait Reason), as `etlkit waits` reports them.",
     "CREATE VIEW waits_by_reason AS SELECT x.code AS code, e.name AS reason, COUNT(*) AS count, SUM(x.d) AS wait_ns, "
     "MAX(x.d) AS max_ns FROM (" WAIT_ROWS ") x LEFT JOIN enum_name e ON e.kind = 'wait_reason' AND e.code = x.code "
     "WHERE x.d > 0 OR x.in_w GROUP BY x.code ORDER BY wait_ns DESC, x.code",
     waits_reason_vcols, N(waits_reason_vcols)},
    {"waits_by_thread", "Waits per thread instance, as `etlkit waits` reports them.",
     "CREATE VIEW waits_by_thread AS SELECT x.utid AS utid, x.tid AS tid, COUNT(*) AS wait_count, SUM(x.d) AS wait_ns, "
     "MAX(x.d) AS wait_max_ns FROM (" WAIT_ROWS ") x WHERE x.d > 0 OR x.in_w GROUP BY x.utid ORDER BY wait_ns DESC, x.utid",
     waits_thread_vcols, N(waits_thread_vcols)},
};

const etl_view_def *etl_export_views(size_t *n)
{
    *n = N(views);
    return views;
}

/*
 * The tables each view reads, in the order of views[]: with --tables, a view over a table
 * not filled would answer from an empty table (cpu_by_thread with no row, every CPU busy 0),
 * so it is made only when all of these were (trace and enum_name always are).
 */
#define B(t) (1u << ETL_TABLE_##t)
static const uint32_t view_reads[] = {
    B(TRACE),                                  /* trace_window */
    B(TRACE) | B(SLICE) | B(THREAD) | B(PROCESS), /* cpu_by_thread: the names from thread and process */
    B(TRACE) | B(SLICE),                       /* cpu_by_cpu */
    B(TRACE) | B(SLICE) | B(ENUM_NAME),        /* waits_by_reason */
    B(TRACE) | B(SLICE),                       /* waits_by_thread */
};
#undef B
_Static_assert(N(view_reads) == N(views), "a view_reads entry per view");

uint32_t etl_export_view_reads(size_t i) { return i < N(view_reads) ? view_reads[i] : 0; }

uint32_t etl_export_tables_parse(const char *list)
{
    uint32_t m = 0;
    while (list && *list) {
        const char *e = strchr(list, ',');
        size_t n = e ? (size_t)(e - list) : strlen(list);
        int t = -1;
        for (int i = 0; t < 0 && i < ETL_TABLE_COUNT; i++)
            if (strlen(tables[i].name) == n && memcmp(tables[i].name, list, n) == 0) t = i;
        if (t < 0) return 0;
        m |= 1u << t;
        list = e ? e + 1 : "";
    }
    return m;
}

/* "slice, thread" */
static void md_reads(FILE *f, uint32_t m)
{
    for (int i = 0, k = 0; i < ETL_TABLE_COUNT; i++)
        if (m >> i & 1u) fprintf(f, "%s`%s`", k++ ? ", " : "", tables[i].name);
}

/* The trace table's keys, for the documentation (etl_export_rows_finish writes them). */
static const char *const trace_keys =
    "`trace_id`, `file`, `file_size`, `etlkit_version`, `export_target`, `tables` (the tables this export filled, "
    "comma-separated in this order: all of them, or those `--tables` named with `trace` and `enum_name`; one not in it "
    "is empty, or absent from a CSV or Parquet folder), `logger_name`, `os_version`, `os_build`, "
    "`num_cpus` (the header's NumberOfProcessors), `cpus_seen` (the processors the reports list: NumberOfProcessors, "
    "or more when buffers or switches name more; not `info --json`'s `cpus_seen`, one more than the highest processor "
    "a buffer names), `pointer_size`, `clock_type`, `clock_name`, `ticks_per_second`, "
    "`perf_freq`, `cpu_mhz`, "
    "`timer_resolution`, `t0_ts` (the logfile header's timestamp: ns are counted from it), `start_time`, "
    "`start_time_utc`, `end_time`, `end_time_utc`, `boot_time_utc`, `end_ts`, `end_ns` (the trace end: the later of the "
    "last record and EndTime), `window_start_ns`, `window_end_ns` (NULL without `--range`), `events_lost`, "
    "`buffers_lost`, `buffers`, `compressed_buffers`, `bad_buffers`, `bad_records`, `skipped_bytes`, "
    "`truncated_buffers`, `decompress_errors`, `unsupported_buffers`, `first_problem` (when there was one), `switches`, "
    "`full_switches`, `compact_switches`, `duplicates_dropped`, `undecodable`, `late_batches`, `broken_chains`, "
    "`bad_state`, `bad_priority`, `cswitch_chain_mismatch`, `time_backwards`, `ready_unmatched`, `unknown_threads`, `repeated_starts`, `over_limit`, `threads`, `processes`.";

/* A column's Parquet storage in words: "UINT16 NOT NULL", "INT64 delta", "STRING". */
static void parquet_kind(char *buf, size_t cap, const etl_column_def *c)
{
    static const char *const names[] = {[ETL_COLUMN_INT8] = "INT8",     [ETL_COLUMN_INT16] = "INT16",
                                        [ETL_COLUMN_INT32] = "INT32",   [ETL_COLUMN_INT64] = "INT64",
                                        [ETL_COLUMN_UINT8] = "UINT8",   [ETL_COLUMN_UINT16] = "UINT16",
                                        [ETL_COLUMN_UINT32] = "UINT32", [ETL_COLUMN_BOOL] = "BOOLEAN",
                                        [ETL_COLUMN_TIMESTAMP_NS] = "TIMESTAMP(NANOS)", [ETL_COLUMN_TEXT] = "STRING",
                                        [ETL_COLUMN_UINT64] = "UINT64"};
    unsigned t = c->kind & ETL_COLUMN_TYPE_MASK;
    if (!t) t = strcmp(c->type, T) == 0 ? ETL_COLUMN_TEXT : ETL_COLUMN_INT64;
    snprintf(buf, cap, "%s%s%s%s", t < sizeof names / sizeof names[0] && names[t] ? names[t] : "?",
             (c->kind & ETL_COLUMN_NOT_NULL) ? " NOT NULL" : "", (c->kind & ETL_COLUMN_DELTA) ? " delta" : "",
             (c->kind & ETL_COLUMN_PLAIN) ? " plain" : "");
}

static void md_cols(FILE *f, const etl_column_def *c, unsigned n, bool parquet)
{
    if (!parquet) {
        fprintf(f, "| Column | Type | Meaning |\n|---|---|---|\n");
        for (unsigned i = 0; i < n; i++) fprintf(f, "| `%s` | %s | %s |\n", c[i].name, c[i].type, c[i].desc);
        return;
    }
    fprintf(f, "| Column | Type | Parquet | Meaning |\n|---|---|---|---|\n");
    for (unsigned i = 0; i < n; i++) {
        char k[64];
        parquet_kind(k, sizeof k, &c[i]);
        fprintf(f, "| `%s` | %s | %s | %s |\n", c[i].name, c[i].type, k, c[i].desc);
    }
}

void etl_export_schema_markdown(FILE *f)
{
    fprintf(f, "# etlkit export: the table schema\n\n"
               "Generated by `etlkit export --schema` from the one definition in `src/export/schema.c`; a test\n"
               "checks that this file, that output and SQLite's `PRAGMA table_info` agree.\n\n"
               "`etlkit export FILE --to sqlite` writes these tables and views to one SQLite file; `--to csv` writes\n"
               "each table as `OUT/<table>.csv` with the same columns after a first `trace_id` column. Times come\n"
               "twice: raw `*_ts` in session clock ticks and `*_ns`, nanoseconds since the trace start\n"
               "(`floor((ts - t0) * 10^9 / F)`, exact), so durations are differences and sums are exact. NULL means\n"
               "unknown (a field the record's form does not carry), never 0. `utid` and `upid` are thread and process\n"
               "instances: TIDs and PIDs are reused. The UINT64 columns (`acquire_time`, `release_time`, `value`)\n"
               "hold unsigned 64-bit values: Parquet and CSV hold every one; SQLite's INTEGER is signed 64-bit, so\n"
               "a value past 9223372036854775807 (2^63 - 1; only a damaged or crafted trace has one) is NULL there,\n"
               "and `etlkit export` says how many on stderr.\n\n"
               "`--to parquet` writes each table as `OUT/<table>.parquet`, `trace_id` (STRING NOT NULL) first, each\n"
               "column stored as its Parquet column says: INT8 to UINT32 are INT32 with an INT(bits, signed) logical\n"
               "type, INT64 is INT64, UINT64 is INT64 with INT(64, unsigned), BOOLEAN holds the 0/1 flags, STRING is\n"
               "UTF-8; NOT NULL columns are REQUIRED, the others OPTIONAL (NULL is a null); `delta` is\n"
               "DELTA_BINARY_PACKED, `plain` PLAIN, the others a dictionary when a row group's distinct values fit it.\n"
               "\n## Tables\n");
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        const etl_table_def *t = &tables[i];
        fprintf(f, "\n### %s\n\n%s\n\n", t->name, t->desc);
        md_cols(f, t->cols, t->ncols, true);
        if (t->order) fprintf(f, "\nParquet row order in each row group: `%s`.\n", t->order);
        if (i == ETL_TABLE_TRACE) fprintf(f, "\nKeys: %s\n", trace_keys);
        if (t->indexes[0]) {
            fprintf(f, "\nIndexes:");
            for (unsigned k = 0; t->indexes[k]; k++) {
                const char *on = strstr(t->indexes[k], " ON ");
                fprintf(f, "%s `%s`", k ? "," : "", on ? on + 4 : t->indexes[k]);
            }
            fprintf(f, "\n");
        }
    }
    fprintf(f, "\n## Views (SQLite only)\n\n"
               "Each view is in the file only when every table it reads was filled: `--tables` without one of\n"
               "them leaves the view out rather than let it answer from an empty table.\n");
    for (size_t i = 0; i < N(views); i++) {
        fprintf(f, "\n### %s\n\n%s\n\nReads: ", views[i].name, views[i].desc);
        md_reads(f, view_reads[i]);
        fprintf(f, ".\n\n");
        md_cols(f, views[i].cols, views[i].ncols, false);
    }
}

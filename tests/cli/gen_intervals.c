/*
 * gen_intervals.c DIR - traces for intervals.sh (`cpu --interval`, issue 18), written with the
 * library's writer and encoders:
 *   DIR/procs.etl     200,000 processes of one thread each, every thread switched in once for 38 us,
 *                     4 CPUs back to back, 1.9 s: 95,000 intervals of 20 us, each with its processes.
 *                     The first 10 threads run 1 us longer (39 us), so they are the top 10 processes.
 *   DIR/idle-end.etl  2 CPUs busy for the first 50 ms of a 1 s trace (EndTime 1 s), idle after:
 *                     1,000 intervals of 1 ms, 950 of them idle.
 * Times are QPC at 10 MHz (100 ns ticks) from t0 = 1,000,000.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"

#define T0 1000000ull
#define TICKS_PER_US 10ull

static etl_writer *w;

static void fail(const char *what)
{
    fprintf(stderr, "gen_intervals: %s\n", what);
    exit(1);
}

static void open_trace(const char *path, unsigned ncpu)
{
    etl_writer_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.ncpu = ncpu;
    o.start_ts = T0;
    o.buffer_size = 1u << 16;
    etl_groupmask_set(&o.group_mask, ETL_PERF_PROCESS);
    etl_groupmask_set(&o.group_mask, ETL_PERF_THREAD);
    etl_groupmask_set(&o.group_mask, ETL_PERF_CONTEXT_SWITCH);
    etl_diag d;
    if (etl_writer_open(path, &o, &w, &d) != ETL_OK) fail(path);
}

/* A Thread DCStart: the model makes the thread's process from its ProcessId. */
static void thread_dcstart(uint16_t cpu, uint64_t ts, uint32_t pid, uint32_t tid)
{
    etl_thread t;
    memset(&t, 0, sizeof t);
    t.known = ETL_THR_IDS | ETL_THR_STACKS | ETL_THR_TEB | ETL_THR_PRIORITIES;
    t.process_id = pid;
    t.thread_id = tid;
    t.base_priority = 8;
    uint8_t buf[256];
    size_t len;
    if (etl_thread_encode(&t, 3, 8, buf, sizeof buf, &len) != ETL_OK) fail("encoding a Thread event");
    etl_write_event ev = {.cpu = cpu, .header = ETL_WH_SYSTEM, .version = 3, .hook = ETL_HOOK_THREAD_DC_START,
                          .ts = ts, .payload = buf, .len = len};
    if (etl_writer_write(w, &ev) != ETL_OK) fail("writing a Thread event");
}

/* A switch on cpu from old_tid (left waiting) to new_tid (0: the idle thread). */
static void cswitch(uint16_t cpu, uint64_t ts, uint32_t old_tid, uint32_t new_tid)
{
    etl_cswitch c;
    memset(&c, 0, sizeof c);
    c.ts = ts;
    c.cpu = cpu;
    c.old_tid = old_tid;
    c.new_tid = new_tid;
    c.new_priority = new_tid ? 8 : 0;
    c.old_priority = old_tid ? 8 : 0;
    c.old_state = 5; /* Waiting */
    c.old_wait_reason = 6; /* UserRequest */
    c.old_wait_mode = 1;
    c.version = 2;
    uint8_t buf[64];
    size_t len;
    if (etl_cswitch_encode(&c, 2, buf, sizeof buf, &len) != ETL_OK) fail("encoding a CSwitch");
    etl_write_event ev = {.cpu = cpu, .header = ETL_WH_PERFINFO, .version = 2, .hook = ETL_HOOK_CSWITCH, .ts = ts,
                          .payload = buf, .len = len};
    if (etl_writer_write(w, &ev) != ETL_OK) fail("writing a CSwitch");
}

static void close_trace(uint64_t end_ts)
{
    etl_diag d;
    if (etl_writer_close(w, end_ts, &d) != ETL_OK) fail("closing a trace");
}

static void procs(const char *path)
{
    enum { NPROC = 200000, NCPU = 4 };
    open_trace(path, NCPU);
    /* The rundown first, on CPU 0 (one time: the writer wants each CPU's events in time order). */
    for (uint32_t i = 0; i < NPROC; i++) thread_dcstart(0, T0 + 1, 1000 + 4 * i, 1000000 + 4 * i);
    /* Each CPU runs its threads back to back from t0 + 10 us: thread i on CPU i % 4. */
    uint64_t at[NCPU];
    uint32_t cur[NCPU] = {0};
    for (unsigned c = 0; c < NCPU; c++) at[c] = T0 + 10 * TICKS_PER_US;
    for (uint32_t i = 0; i < NPROC; i++) {
        unsigned c = i % NCPU;
        uint32_t tid = 1000000 + 4 * i;
        cswitch((uint16_t)c, at[c], cur[c], tid);
        cur[c] = tid;
        at[c] += (i < 10 ? 39 : 38) * TICKS_PER_US;
    }
    uint64_t end = 0;
    for (unsigned c = 0; c < NCPU; c++) {
        cswitch((uint16_t)c, at[c], cur[c], 0);
        if (at[c] > end) end = at[c];
    }
    close_trace(end);
}

static void idle_end(const char *path)
{
    open_trace(path, 2);
    thread_dcstart(0, T0 + 1, 500, 600);
    thread_dcstart(0, T0 + 2, 504, 604);
    /* 50 ms of 1 ms on, 1 ms off on both CPUs, then idle to the end at 1 s. */
    for (unsigned k = 0; k < 25; k++) {
        uint64_t s = T0 + (uint64_t)k * 2000 * TICKS_PER_US;
        for (uint16_t c = 0; c < 2; c++) {
            cswitch(c, s + 10 + c, 0, c ? 604 : 600);
            cswitch(c, s + 1000 * TICKS_PER_US + c, c ? 604 : 600, 0);
        }
    }
    close_trace(T0 + 1000000 * TICKS_PER_US);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_intervals DIR\n");
        return 64;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/procs.etl", argv[1]);
    procs(path);
    snprintf(path, sizeof path, "%s/idle-end.etl", argv[1]);
    idle_end(path);
    return 0;
}

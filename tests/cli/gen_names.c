/*
 * gen_names.c OUT.etl - a small, well-formed trace whose names are hostile (issue 18,
 * names.sh): any process can set its own thread description and image name, so a
 * report must print them without letting them drive the terminal or a spreadsheet.
 *
 *   pid 100  ImageFileName "=cmd|' /C calc'!A0"          (a spreadsheet formula)
 *   pid 200  ImageFileName ""                            (empty: not the unknown process)
 *   pid 300  ImageFileName "e ESC[31m v BEL i CR l LF 0x9B" (Latin-1: 0x9B is U+009B, CSI)
 *   tid 101 (pid 100) ThreadName "@SUM(1+1)*cmd|' /C calc'!A0"
 *   tid 201 (pid 200) no ThreadName
 *   tid 301 (pid 300) ThreadName "x ESC]0;pwn BEL U+202E U+2066 y CR LF U+0085 U+2028 z"
 *   tid 302 (pid 300) ThreadName "-5" (a number: stays a number in a CSV)
 *
 * Two CPUs: CPU 0 rotates 101, 301 and idle, CPU 1 runs 201 and 302 in turn; every thread
 * switched out waits (UserRequest) and is readied from the other CPU before it runs, so
 * cpu, waits, switches, wakeups and waitchain all show these names. 101 is readied once
 * more at the end and never switched in (ready_unmatched = 1). The switches carry two PMC
 * counters, for pmc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"

enum { TICKS_MS = 10000, NSW = 40 };

typedef struct ev {
    uint64_t ts;
    uint16_t cpu, hook;
    uint8_t header, version;
    size_t len;
    uint8_t npmc;
    uint64_t pmc[2];
    uint8_t p[512];
} ev;

static ev evs[4 * NSW + 64];
static size_t nev;

static ev *add(uint64_t ts, uint16_t cpu, uint16_t hook, uint8_t header, uint8_t version)
{
    ev *e = &evs[nev++];
    memset(e, 0, sizeof *e);
    e->ts = ts;
    e->cpu = cpu;
    e->hook = hook;
    e->header = header;
    e->version = version;
    return e;
}

static void must(etl_status st, const char *what)
{
    if (st != ETL_OK) {
        fprintf(stderr, "gen_names: %s: %s\n", what, etl_status_str(st));
        exit(1);
    }
}

/* UTF-8 (BMP only) to UTF-16LE. */
static size_t u16(const char *s, uint8_t *out)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p) {
        unsigned cp;
        if (*p < 0x80) cp = *p++;
        else if (*p < 0xE0) cp = (p[0] & 0x1Fu) << 6 | (p[1] & 0x3Fu), p += 2;
        else cp = (p[0] & 0x0Fu) << 12 | (p[1] & 0x3Fu) << 6 | (p[2] & 0x3Fu), p += 3;
        out[n++] = (uint8_t)cp;
        out[n++] = (uint8_t)(cp >> 8);
    }
    return n;
}

static void process(uint64_t ts, uint32_t pid, const char *image)
{
    etl_process p;
    memset(&p, 0, sizeof p);
    p.known = ETL_PROC_KEY | ETL_PROC_IDS | ETL_PROC_SESSION | ETL_PROC_DTB | ETL_PROC_FLAGS | ETL_PROC_SID |
              ETL_PROC_IMAGE | ETL_PROC_COMMAND_LINE | ETL_PROC_PACKAGE | ETL_PROC_APP_ID;
    p.unique_process_key = 0xFFFF800000000000ull + pid * 0x1000ull;
    p.process_id = pid;
    p.parent_id = 4;
    p.session_id = 1;
    p.directory_table_base = 0x1000ull * pid;
    p.image_file_name.text = (etl_span){(const uint8_t *)image, strlen(image)};
    p.image_file_name.terminated = true;
    static const uint8_t none[1];
    p.command_line.text = (etl_span){none, 0};
    p.command_line.terminated = true;
    p.package_full_name = p.application_id = p.command_line;
    ev *e = add(ts, 0, ETL_HOOK_PROCESS_DC_START, ETL_WH_PERFINFO, 4);
    must(etl_process_encode(&p, 4, 8, e->p, sizeof e->p, &e->len), "Process");
}

static void thread(uint64_t ts, uint32_t pid, uint32_t tid, const char *name)
{
    static uint8_t nb[8][256];
    static unsigned k;
    etl_thread t;
    memset(&t, 0, sizeof t);
    t.known = ETL_THR_IDS | ETL_THR_STACKS | ETL_THR_TEB | ETL_THR_PRIORITIES | ETL_THR_NAME;
    t.process_id = pid;
    t.thread_id = tid;
    t.stack_base = 0xFFFFF80000100000ull + tid * 0x10000ull;
    t.stack_limit = t.stack_base - 0x6000;
    t.base_priority = 8;
    t.page_priority = 5;
    t.io_priority = 2;
    uint8_t *b = nb[k++ & 7];
    t.thread_name.text = (etl_span){b, u16(name, b)};
    t.thread_name.terminated = true;
    ev *e = add(ts, 0, ETL_HOOK_THREAD_DC_START, ETL_WH_PERFINFO, 4);
    must(etl_thread_encode(&t, 4, 8, e->p, sizeof e->p, &e->len), "Thread");
}

static void ready(uint64_t ts, uint16_t cpu, uint32_t tid)
{
    etl_ready_thread r = {tid, 1, 2, 0, 0};
    ev *e = add(ts, cpu, ETL_HOOK_READY_THREAD, ETL_WH_PERFINFO, 2);
    must(etl_ready_thread_encode(&r, e->p, sizeof e->p, &e->len), "ReadyThread");
}

static void cswitch(uint64_t ts, uint16_t cpu, uint32_t old_tid, uint32_t new_tid)
{
    etl_cswitch c;
    memset(&c, 0, sizeof c);
    c.new_tid = new_tid;
    c.old_tid = old_tid;
    c.new_priority = new_tid ? 9 : 0;
    c.old_priority = old_tid ? 8 : 0;
    c.old_wait_reason = old_tid ? 6 : 0; /* UserRequest */
    c.old_state = old_tid ? 5 : 2;       /* Waiting; the idle thread: Running */
    c.old_wait_mode = 1;
    ev *e = add(ts, cpu, ETL_HOOK_CSWITCH, ETL_WH_PERFINFO, 4);
    must(etl_cswitch_encode(&c, 4, e->p, sizeof e->p, &e->len), "CSwitch");
    e->npmc = 2; /* two rising counters, so pmc has rows to name */
    e->pmc[0] = ts * 3;
    e->pmc[1] = ts * 2;
}

static int by_ts(const void *a, const void *b)
{
    const ev *x = a, *y = b;
    return x->ts < y->ts ? -1 : x->ts > y->ts;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_names OUT.etl\n");
        return 64;
    }
    uint64_t t0 = 1000;
    process(t0 + 10, 100, "=cmd|' /C calc'!A0");
    process(t0 + 11, 200, "");
    process(t0 + 12, 300, "e\x1b[31mv\ai\rl\n\x9b");
    thread(t0 + 20, 100, 101, "@SUM(1+1)*cmd|' /C calc'!A0");
    thread(t0 + 21, 200, 201, "");
    thread(t0 + 22, 300, 301, "x\x1b]0;pwn\a\xe2\x80\xae\xe2\x81\xa6y\r\n\xc2\x85\xe2\x80\xa8z");
    thread(t0 + 23, 300, 302, "-5");
    static const uint32_t cpu0[] = {101, 301, 0, 101, 301, 0};
    static const uint32_t cpu1[] = {201, 302};
    uint32_t cur[2] = {0, 0};
    for (unsigned i = 0; i < NSW; i++) {
        for (uint16_t cpu = 0; cpu < 2; cpu++) {
            uint64_t ts = t0 + TICKS_MS + (uint64_t)i * TICKS_MS + cpu * (TICKS_MS / 2);
            uint32_t next = cpu == 0 ? cpu0[i % 6] : cpu1[i % 2];
            if (next == cur[cpu]) continue;
            if (next) ready(ts - 200, (uint16_t)(1 - cpu), next); /* readied from the other CPU */
            cswitch(ts, cpu, cur[cpu], next);
            cur[cpu] = next;
        }
    }
    /* Readied at the end and never switched in: waitchain's "readied but never switched in" note counts it. */
    ready(t0 + TICKS_MS + NSW * TICKS_MS, 1, 101);
    qsort(evs, nev, sizeof evs[0], by_ts);

    etl_writer_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.ncpu = 2;
    o.start_ts = t0;
    etl_groupmask_set(&o.group_mask, ETL_PERF_PROC_THREAD);
    etl_groupmask_set(&o.group_mask, ETL_PERF_CONTEXT_SWITCH);
    etl_groupmask_set(&o.group_mask, ETL_PERF_DISPATCHER);
    etl_writer *w;
    etl_diag d;
    must(etl_writer_open(argv[1], &o, &w, &d), argv[1]);
    for (size_t i = 0; i < nev; i++) {
        etl_write_event x;
        memset(&x, 0, sizeof x);
        x.cpu = evs[i].cpu;
        x.header = evs[i].header;
        x.version = evs[i].version;
        x.hook = evs[i].hook;
        x.ts = evs[i].ts;
        x.payload = evs[i].p;
        x.len = evs[i].len;
        x.pmc_count = evs[i].npmc;
        x.pmc = evs[i].pmc;
        must(etl_writer_write(w, &x), "write");
    }
    must(etl_writer_close(w, evs[nev - 1].ts + TICKS_MS, &d), "close");
    return 0;
}

/*
 * profbuild.h - test-only: traces for the profile built event by event with the
 * writer and the kernel encoders (test_profile.c checks every number of them;
 * tests/cli/gen_profile.c writes them for the CLI tests). Static functions over one
 * static event list: each includer builds one trace at a time.
 *
 *   pb_build64();  pb_write(path, NULL);   // or pb_build32(), pb_build_names()
 */
#ifndef ETLKIT_TESTS_PROFBUILD_H
#define ETLKIT_TESTS_PROFBUILD_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"

#define T0 1000000ull /* the header's timestamp; QPC at 10 MHz: one tick is 100 ns */
#define PB_MUST(c)                                                                                                 \
    do {                                                                                                           \
        if (!(c)) {                                                                                                \
            fprintf(stderr, "%s:%d: %s failed\n", __FILE__, __LINE__, #c);                                         \
            abort();                                                                                               \
        }                                                                                                          \
    } while (0)

typedef struct tev {
    uint64_t k; /* ticks after T0 */
    unsigned seq;
    uint16_t cpu, hook;
    uint8_t header, version;
    uint8_t p[1536];
    size_t len;
} tev;

static tev *evs;
static size_t nev, capev;
static unsigned ptr = 8;
static uint32_t pb_buffer_size; /* 0: the writer's default */

static tev *add(uint64_t k, uint16_t cpu, uint8_t header, uint8_t version, uint16_t hook)
{
    if (nev == capev) {
        capev = capev ? 2 * capev : 256;
        evs = realloc(evs, capev * sizeof *evs);
        PB_MUST(evs != NULL);
    }
    tev *e = &evs[nev];
    memset(e, 0, sizeof *e);
    e->k = k;
    e->seq = (unsigned)nev++;
    e->cpu = cpu;
    e->header = header;
    e->version = version;
    e->hook = hook;
    return e;
}

/* UTF-8 s (BMP only) as UTF-16LE in buf. */
static etl_kstr u16(const char *s, uint8_t *buf)
{
    size_t n = 0;
    for (const unsigned char *c = (const unsigned char *)s; *c; n += 2) {
        unsigned v = *c++;
        if (v >= 0xE0) {
            v = (v & 0x0F) << 12 | (c[0] & 0x3Fu) << 6 | (c[1] & 0x3Fu);
            c += 2;
        } else if (v >= 0xC0) {
            v = (v & 0x1F) << 6 | (c[0] & 0x3Fu);
            c += 1;
        }
        buf[n] = (uint8_t)v;
        buf[n + 1] = (uint8_t)(v >> 8);
    }
    return (etl_kstr){{buf, n}, true};
}

static void process(uint64_t k, uint32_t pid, const char *image)
{
    etl_process p;
    memset(&p, 0, sizeof p);
    p.known = ETL_PROC_KEY | ETL_PROC_IDS | ETL_PROC_SESSION | ETL_PROC_DTB | ETL_PROC_FLAGS | ETL_PROC_SID |
              ETL_PROC_IMAGE | ETL_PROC_COMMAND_LINE | ETL_PROC_PACKAGE | ETL_PROC_APP_ID;
    p.unique_process_key = 0xFFFF800000000000ull + pid * 0x1000ull;
    if (ptr == 4) p.unique_process_key &= 0xFFFFFFFFu;
    p.process_id = pid;
    p.image_file_name = (etl_kstr){{(const uint8_t *)image, strlen(image)}, true};
    static const uint8_t none[1];
    p.command_line = (etl_kstr){{none, 0}, true};
    p.package_full_name = p.application_id = p.command_line;
    tev *e = add(k, 0, ETL_WH_PERFINFO, 4, ETL_HOOK_PROCESS_DC_START);
    PB_MUST(etl_process_encode(&p, 4, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void thread(uint64_t k, uint16_t hook, uint32_t pid, uint32_t tid, const char *name)
{
    uint8_t nb[256];
    etl_thread t;
    memset(&t, 0, sizeof t);
    t.known = ETL_THR_IDS | ETL_THR_STACKS | ETL_THR_TEB | ETL_THR_PRIORITIES | (name ? ETL_THR_NAME : 0);
    t.process_id = pid;
    t.thread_id = tid;
    t.base_priority = 8;
    if (name) t.thread_name = u16(name, nb);
    tev *e = add(k, 0, ETL_WH_SYSTEM, 3, hook);
    PB_MUST(etl_thread_encode(&t, 3, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void image(uint64_t k, uint16_t hook, uint64_t base, uint64_t size, uint32_t pid, const char *path)
{
    uint8_t nb[1400];
    etl_image im;
    memset(&im, 0, sizeof im);
    im.known = ETL_IMG_V2;
    im.image_base = base;
    im.image_size = size;
    im.process_id = pid;
    im.time_date_stamp = 0x5000 + (uint32_t)k;
    im.file_name = u16(path, nb);
    /* As the real traces log them: rundowns with a PERFINFO header, the rest with a SYSTEM one. */
    tev *e = add(k, 0, hook == ETL_HOOK_IMAGE_DC_START ? ETL_WH_PERFINFO : ETL_WH_SYSTEM, 2, hook);
    PB_MUST(etl_image_encode(&im, 2, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void interval(uint64_t k, uint32_t source, uint32_t iv)
{
    uint8_t nb[32];
    etl_profile_interval pi = {source, iv, 10000, true, u16("Timer", nb)};
    tev *e = add(k, 0, ETL_WH_SYSTEM, 3, ETL_HOOK_PROFILE_COLLECTION_START);
    PB_MUST(etl_profile_interval_encode(&pi, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void sample(uint64_t k, uint16_t cpu, uint32_t tid, uint64_t ip)
{
    etl_sampled_profile s = {ip, tid, 1, 0, 0};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_SAMPLED_PROFILE);
    PB_MUST(etl_sampled_profile_encode(&s, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void walk(uint64_t k, uint16_t cpu, uint64_t event_k, uint32_t pid, uint32_t tid, const uint64_t *f,
                 uint32_t n)
{
    etl_stackwalk w = {T0 + event_k, pid, tid, NULL, n, (uint8_t)ptr};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_STACKWALK);
    PB_MUST(etl_stackwalk_encode(&w, f, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void kref(uint64_t k, uint16_t cpu, uint16_t hook, uint64_t event_k, uint32_t pid, uint32_t tid,
                 uint64_t key)
{
    etl_stack_key_ref r = {T0 + event_k, pid, tid, key};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, hook);
    PB_MUST(etl_stack_key_ref_encode(&r, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static void kdef(uint64_t k, uint16_t cpu, uint16_t hook, uint64_t key, const uint64_t *f, uint32_t n)
{
    etl_stack_key_def d = {key, NULL, n, (uint8_t)ptr};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, hook);
    PB_MUST(etl_stack_key_def_encode(&d, f, ptr, e->p, sizeof e->p, &e->len) == ETL_OK);
}

static int cmp_tev(const void *a, const void *b)
{
    const tev *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the events in time order to path. */
static void pb_write(const char *path)
{
    qsort(evs, nev, sizeof *evs, cmp_tev);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.pointer_size = ptr;
    o.ncpu = 2;
    o.start_ts = T0;
    o.perf_freq = 10000000;
    o.buffer_size = pb_buffer_size;
    etl_groupmask_set(&o.group_mask, ETL_PERF_PROFILE);
    etl_writer *w;
    etl_diag d;
    PB_MUST(etl_writer_open(path, &o, &w, &d) == ETL_OK);
    for (size_t i = 0; i < nev; i++) {
        etl_write_event ev;
        memset(&ev, 0, sizeof ev);
        ev.cpu = evs[i].cpu;
        ev.header = evs[i].header;
        ev.version = evs[i].version;
        ev.hook = evs[i].hook;
        ev.ts = T0 + evs[i].k;
        ev.payload = evs[i].p;
        ev.len = evs[i].len;
        PB_MUST(etl_writer_write(w, &ev) == ETL_OK);
    }
    PB_MUST(etl_writer_close(w, T0 + evs[nev - 1].k, &d) == ETL_OK);
}

#define KB 0xfffff80000000000ull  /* ntoskrnl.exe, logged under PID 0 */
#define HAL 0xfffff80000200000ull /* hal.dll, logged under PID 4 */
#define APP 0x140000000ull        /* app.exe in 100 */
#define NTDLL 0x7ff800000000ull   /* ntdll.dll in 100 and in 200 */
#define PLUG 0x180000000ull       /* plugin.dll in 100: loaded, unloaded, loaded again */
#define LATE 0x190000000ull       /* late.dll in 100: only the end rundown names it */
#define JIT 0x20000001000ull      /* code no image covers */
#define KEY(n) (0xfffffa8000000000ull + (n) * 0x100)

static void pb_build64(void)
{
    nev = 0;
    ptr = 8;
    process(1, 0, "Idle");
    process(1, 4, "System");
    process(1, 100, "app.exe");
    process(1, 200, "tool.exe");
    thread(2, ETL_HOOK_THREAD_DC_START, 0, 0, NULL);
    thread(2, ETL_HOOK_THREAD_DC_START, 4, 8, NULL);
    thread(2, ETL_HOOK_THREAD_DC_START, 100, 101, "main");
    thread(2, ETL_HOOK_THREAD_DC_START, 100, 102, NULL);
    image(3, ETL_HOOK_IMAGE_DC_START, KB, 0x100000, 0, "\\SystemRoot\\system32\\ntoskrnl.exe");      /* 0 */
    image(3, ETL_HOOK_IMAGE_DC_START, HAL, 0x10000, 4, "\\SystemRoot\\system32\\hal.dll");           /* 1 */
    image(3, ETL_HOOK_IMAGE_DC_START, APP, 0x10000, 100, "\\Device\\HarddiskVolume2\\app.exe");      /* 2 */
    image(3, ETL_HOOK_IMAGE_DC_START, NTDLL, 0x100000, 100, "\\Windows\\System32\\ntdll.dll");       /* 3 */
    image(3, ETL_HOOK_IMAGE_DC_START, NTDLL, 0x100000, 200, "\\Windows\\System32\\ntdll.dll");       /* 4 */
    image(3, ETL_HOOK_IMAGE_DC_START, 0x400000, 0x1000, 200, "\\tool.exe");                          /* 5 */
    interval(10, 0, 5000);
    interval(11, 1, 7777); /* another profile source's: not the timer's */

    /* S11: thread 201 sampled in code no image covers, before its Start (process 200: the first after). */
    sample(400, 1, 201, JIT);
    thread(500, ETL_HOOK_THREAD_START, 200, 201, NULL);
    /* S1: one walk, kernel and user frames. */
    sample(1000, 0, 101, KB + 0x500);
    uint64_t s1[] = {KB + 0x500, KB + 0x600, APP + 0x100, NTDLL + 0x1000};
    walk(1001, 0, 1000, 100, 101, s1, 4);
    /* S2: a kernel walk, then a user walk. */
    sample(1100, 1, 102, KB + 0x700);
    uint64_t s2k[] = {KB + 0x700, HAL + 0x20}, s2u[] = {NTDLL + 0x2000, APP + 0x200};
    walk(1101, 1, 1100, 100, 102, s2k, 2);
    walk(1102, 1, 1100, 100, 102, s2u, 2);
    /* S3, S4: the idle thread on both CPUs at one time, each walk on its CPU. */
    sample(1200, 0, 0, KB + 0x900);
    sample(1200, 1, 0, KB + 0x904);
    uint64_t s3[] = {KB + 0x900, KB + 0x1000}, s4[] = {KB + 0x904, KB + 0x1004};
    walk(1201, 1, 1200, 0, 0, s4, 2);
    walk(1202, 0, 1200, 0, 0, s3, 2);
    /* S5: key references, the kernel part then the user part. */
    sample(2000, 0, 101, KB + 0x800);
    kref(2001, 0, ETL_HOOK_STACK_KEY_KERNEL, 2000, 100, 101, KEY(1));
    kref(2002, 0, ETL_HOOK_STACK_KEY_USER, 2000, 100, 101, KEY(2));
    /* S6, S7, S8: thread 102 in the kernel for three samples; the user parts come when it leaves. */
    sample(2100, 1, 102, KB + 0xA00);
    kref(2101, 1, ETL_HOOK_STACK_KEY_KERNEL, 2100, 100, 102, KEY(3));
    sample(2200, 0, 102, KB + 0xA00);
    kref(2201, 0, ETL_HOOK_STACK_KEY_KERNEL, 2200, 100, 102, KEY(3));
    sample(2300, 1, 102, KB + 0xA04);
    kref(2301, 1, ETL_HOOK_STACK_KEY_KERNEL, 2300, 100, 102, KEY(4));
    kref(2400, 1, ETL_HOOK_STACK_KEY_USER, 2100, 100, 102, KEY(5));
    kref(2401, 1, ETL_HOOK_STACK_KEY_USER, 2200, 100, 102, KEY(5));
    kref(2402, 1, ETL_HOOK_STACK_KEY_USER, 2300, 100, 102, KEY(5));
    /* plugin.dll loaded at 3000, unloaded at 5000, loaded again at the same base at 6000. */
    image(3000, ETL_HOOK_PROCESS_LOAD_IMAGE, PLUG, 0x8000, 100, "\\x\\plugin.dll"); /* 6 */
    /* S9, S10: one key for two stacks, deleted after each. */
    sample(3100, 0, 101, KB + 0xB00);
    kref(3101, 0, ETL_HOOK_STACK_KEY_KERNEL, 3100, 100, 101, KEY(6));
    uint64_t d1[] = {KB + 0xB00, KB + 0xB10}, d2[] = {KB + 0xC00};
    kdef(3150, 0, ETL_HOOK_STACK_KEY_DELETE, KEY(6), d1, 2);
    sample(3200, 0, 101, KB + 0xC00);
    kref(3201, 0, ETL_HOOK_STACK_KEY_KERNEL, 3200, 100, 101, KEY(6));
    kdef(3250, 0, ETL_HOOK_STACK_KEY_DELETE, KEY(6), d2, 1);
    sample(4000, 1, 201, NTDLL + 0x5000);              /* S12: ntdll.dll of process 200 */
    sample(4500, 0, 101, PLUG + 0x10);                 /* S13 */
    image(5000, ETL_HOOK_IMAGE_UNLOAD, PLUG, 0x8000, 100, "\\x\\plugin.dll");
    sample(5500, 0, 101, PLUG + 0x10);                 /* S14: unloaded: Unknown */
    image(6000, ETL_HOOK_PROCESS_LOAD_IMAGE, PLUG, 0x8000, 100, "\\x\\plugin.dll"); /* 7 */
    sample(6500, 0, 101, PLUG + 0x10);                 /* S15 */
    sample(7000, 0, 8, HAL + 0x30);                    /* S16: hal.dll from the System process */
    /* S17: a user walk alone; late.dll, which only the end rundown names, was there all along. */
    sample(8000, 1, 101, APP + 0x100);
    uint64_t s17[] = {APP + 0x100, LATE + 0x40, NTDLL + 0x1000};
    walk(8001, 1, 8000, 100, 101, s17, 3);
    /* S18: a key no definition names. */
    sample(8500, 1, 102, KB + 0xD00);
    kref(8501, 1, ETL_HOOK_STACK_KEY_KERNEL, 8500, 100, 102, KEY(99));
    /* A walk of another event (a context switch at 8599). */
    uint64_t other[] = {KB + 0x42};
    walk(8600, 0, 8599, 100, 101, other, 1);
    /* The end rundown: images still loaded (no new instance), one never announced, the cached keys. */
    image(9500, ETL_HOOK_IMAGE_DC_END, KB, 0x100000, 0, "\\SystemRoot\\system32\\ntoskrnl.exe");
    image(9501, ETL_HOOK_IMAGE_DC_END, APP, 0x10000, 100, "\\Device\\HarddiskVolume2\\app.exe");
    image(9502, ETL_HOOK_IMAGE_DC_END, LATE, 0x1000, 100, "\\x\\late.dll"); /* 8 */
    uint64_t ka[] = {KB + 0x800, KB + 0x810}, ua[] = {NTDLL + 0x3000, APP + 0x300};
    uint64_t k3[] = {KB + 0xA00, KB + 0xA10}, k4[] = {KB + 0xA04, KB + 0xA10}, u5[] = {NTDLL + 0x4000, APP + 0x500};
    kdef(9600, 0, ETL_HOOK_STACK_KEY_RUNDOWN, KEY(1), ka, 2);
    kdef(9601, 0, ETL_HOOK_STACK_KEY_RUNDOWN, KEY(2), ua, 2);
    kdef(9602, 0, ETL_HOOK_STACK_KEY_RUNDOWN, KEY(3), k3, 2);
    kdef(9603, 0, ETL_HOOK_STACK_KEY_RUNDOWN, KEY(4), k4, 2);
    kdef(9604, 1, ETL_HOOK_STACK_KEY_RUNDOWN, KEY(5), u5, 2);
}


/* 32-bit: three samples of one thread; a recursive user stack by key. */
#define K32 0x80000000u
#define A32 0x10000000u
#define B32 0x20000000u

static void pb_build32(void)
{
    nev = 0;
    ptr = 4;
    process(1, 300, "small.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 300, 301, "w");
    image(2, ETL_HOOK_IMAGE_DC_START, K32, 0x100000, 0, "\\SystemRoot\\system32\\ntkrnlpa.exe");
    image(2, ETL_HOOK_IMAGE_DC_START, A32, 0x10000, 300, "\\x\\a.dll");
    image(2, ETL_HOOK_IMAGE_DC_START, B32, 0x10000, 300, "\\x\\b.dll");
    /* T1: kernel and user frames in one walk. */
    sample(100, 0, 301, K32 + 0x1000);
    uint64_t t1[] = {K32 + 0x1000, A32 + 0x10, B32 + 0x20, A32 + 0x30};
    walk(101, 0, 100, 300, 301, t1, 4);
    /* T2: a user part by key, recursive: a.dll+0x10 innermost and outermost. */
    sample(200, 1, 301, A32 + 0x10);
    kref(201, 1, ETL_HOOK_STACK_KEY_USER, 200, 300, 301, 0x85000000u);
    /* T3: no image. */
    sample(300, 0, 301, 0x30000000u);
    uint64_t t2[] = {A32 + 0x10, B32 + 0x20, A32 + 0x10};
    kdef(400, 0, ETL_HOOK_STACK_KEY_RUNDOWN, 0x85000000u, t2, 3);
}

/*
 * Names that must not reach a terminal or break the folded format: a process
 * (ANSI, read as Latin-1: 0x9B is the C1 CSI), a thread (';', ESC, U+202E, CR,
 * LF) and an image (';') of one sample with a one-frame walk.
 */
static void pb_build_names(void)
{
    nev = 0;
    ptr = 8;
    process(1, 7, "bad\x9b.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, "a;b\x1b[31m\xe2\x80\xaez\r\n");
    image(2, ETL_HOOK_IMAGE_DC_START, 0x10000, 0x1000, 7, "\\x\\x;y.dll");
    sample(100, 0, 70, 0x10010);
    uint64_t f[] = {0x10010};
    walk(101, 0, 100, 7, 70, f, 1);
}

#endif

/*
 * test_profile.c - etl_profile_run and its views on traces built event by event
 * with the writer and the kernel encoders, every number checked against what the
 * events say by the rules of etlkit/profile.h:
 *   - 64-bit: four processes, threads DCStart'ed, one whose Start follows its first
 *     sample, the idle thread sampled on two CPUs at one timestamp, kernel images
 *     logged under PID 0 and 4, user images (DCStart, a Load, an Unload, a reload
 *     at the same base, one only the end rundown's DCEnd names), a 0.5 ms
 *     CollectionStart, plain walks (kernel and user in one; a kernel walk then a
 *     user walk), key references (kernel then user part; user parts deferred past
 *     two more samples of the thread; a key deleted and reused; a key never
 *     defined), samples in no image, a walk of another event; then the window and
 *     the pid, process name and thread filters;
 *   - 32-bit: a smaller case, with a recursive stack for the butterfly;
 *   - the real perfview-x64-compressed.etl against the independent decoder's
 *     records and stack walks.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include "testutil.h"
#include "base/platform.h"
#include "etlkit/etlkit.h"
#include "etlkit/profile.h"
#include "etlkit/writer.h"

#define T0 1000000ull /* the header's timestamp; QPC at 10 MHz: one tick is 100 ns */

static char tmpdir[256];

static int setup(void **s)
{
    (void)s;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/etlkit-profile-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **s)
{
    (void)s;
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    return system(cmd) == 0 ? 0 : -1;
}

/* ------------------------------------------------------------ the builder */

typedef struct tev {
    uint64_t k; /* ticks after T0 */
    unsigned seq;
    uint16_t cpu, hook;
    uint8_t header, version;
    uint8_t p[2048];
    size_t len;
} tev;

static tev evs[256];
static size_t nev;
static unsigned ptr = 8;

static tev *add(uint64_t k, uint16_t cpu, uint8_t header, uint8_t version, uint16_t hook)
{
    assert_true(nev < sizeof evs / sizeof evs[0]);
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

static etl_kstr u16(const char *s, uint8_t *buf)
{
    size_t n = 0;
    for (; *s; s++, n += 2) {
        buf[n] = (uint8_t)*s;
        buf[n + 1] = 0;
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
    assert_int_equal(etl_process_encode(&p, 4, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
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
    assert_int_equal(etl_thread_encode(&t, 3, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
}

static void image(uint64_t k, uint16_t hook, uint64_t base, uint64_t size, uint32_t pid, const char *path)
{
    uint8_t nb[512];
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
    assert_int_equal(etl_image_encode(&im, 2, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
}

static void interval(uint64_t k, uint32_t source, uint32_t iv)
{
    uint8_t nb[32];
    etl_profile_interval pi = {source, iv, 10000, true, u16("Timer", nb)};
    tev *e = add(k, 0, ETL_WH_SYSTEM, 3, ETL_HOOK_PROFILE_COLLECTION_START);
    assert_int_equal(etl_profile_interval_encode(&pi, e->p, sizeof e->p, &e->len), ETL_OK);
}

static void sample(uint64_t k, uint16_t cpu, uint32_t tid, uint64_t ip)
{
    etl_sampled_profile s = {ip, tid, 1, 0, 0};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_SAMPLED_PROFILE);
    assert_int_equal(etl_sampled_profile_encode(&s, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
}

static void walk(uint64_t k, uint16_t cpu, uint64_t event_k, uint32_t pid, uint32_t tid, const uint64_t *f,
                 uint32_t n)
{
    etl_stackwalk w = {T0 + event_k, pid, tid, NULL, n, (uint8_t)ptr};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_STACKWALK);
    assert_int_equal(etl_stackwalk_encode(&w, f, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
}

static void kref(uint64_t k, uint16_t cpu, uint16_t hook, uint64_t event_k, uint32_t pid, uint32_t tid,
                 uint64_t key)
{
    etl_stack_key_ref r = {T0 + event_k, pid, tid, key};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, hook);
    assert_int_equal(etl_stack_key_ref_encode(&r, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
}

static void kdef(uint64_t k, uint16_t cpu, uint16_t hook, uint64_t key, const uint64_t *f, uint32_t n)
{
    etl_stack_key_def d = {key, NULL, n, (uint8_t)ptr};
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, hook);
    assert_int_equal(etl_stack_key_def_encode(&d, f, ptr, e->p, sizeof e->p, &e->len), ETL_OK);
}

static int cmp_tev(const void *a, const void *b)
{
    const tev *x = a, *y = b;
    if (x->k != y->k) return x->k < y->k ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Writes the events in time order to tmpdir/name; returns the reader. */
static etl_reader *write_trace(const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    qsort(evs, nev, sizeof *evs, cmp_tev);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.pointer_size = ptr;
    o.ncpu = 2;
    o.start_ts = T0;
    o.perf_freq = 10000000;
    etl_groupmask_set(&o.group_mask, ETL_PERF_PROFILE);
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
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
        assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    }
    assert_int_equal(etl_writer_close(w, T0 + evs[nev - 1].k, &d), ETL_OK);
    etl_reader *r;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    return r;
}

/* ------------------------------------------------------------- helpers */

static char *folded(const etl_profile *p)
{
    char *buf = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &buf, &n);
    assert_non_null(f);
    assert_int_equal(etl_profile_write_folded(p, f), ETL_OK);
    assert_int_equal(etl_memstream_close(&ms), 0);
    assert_non_null(buf);
    return buf;
}

static const etl_profile_thread *thread_of(const etl_profile *p, uint32_t tid)
{
    for (size_t i = 0; i < p->nthreads; i++)
        if (p->threads[i].tid == tid) return &p->threads[i];
    fail_msg("no thread %u", tid);
    return NULL;
}

/* "name samples, name samples, ..." of a list, in its order. */
static void expect_list(const etl_profile *p, char which, const char *want)
{
    char got[4096] = "", item[512];
    size_t n = which == 'p' ? p->nprocesses : which == 'm' ? p->nmodules : which == 't' ? p->nthreads : p->nfunctions;
    for (size_t i = 0; i < n; i++) {
        if (which == 'p')
            snprintf(item, sizeof item, "%s(%u) %llu", p->processes[i].name, p->processes[i].pid,
                     (unsigned long long)p->processes[i].samples);
        else if (which == 'm')
            snprintf(item, sizeof item, "%s %llu", p->modules[i].name, (unsigned long long)p->modules[i].samples);
        else if (which == 't')
            snprintf(item, sizeof item, "%u/%u:%s %llu/%llu", p->threads[i].tid, p->threads[i].pid,
                     p->processes[p->threads[i].process].name, (unsigned long long)p->threads[i].samples,
                     (unsigned long long)p->threads[i].with_stack);
        else {
            char l[256];
            etl_profile_function_label(p, (uint32_t)i, l, sizeof l);
            snprintf(item, sizeof item, "%s %llu", l, (unsigned long long)p->functions[i].samples);
        }
        if (i) strcat(got, ", ");
        strcat(got, item);
    }
    assert_string_equal(got, want);
}

/* The pivot's rows as "depth:name samples" lines. */
static void expect_pivot(const etl_profile *p, etl_profile_by a, etl_profile_by b, const char *want)
{
    etl_profile_by by[2] = {a, b};
    etl_profile_row *rows;
    size_t n;
    assert_int_equal(etl_profile_pivot(p, by, 2, 0, &rows, &n), ETL_OK);
    char got[4096] = "", item[300];
    for (size_t i = 0; i < n; i++) {
        char name[256];
        switch (rows[i].by) {
        case ETL_PROFILE_BY_PROCESS: snprintf(name, sizeof name, "%s", p->processes[rows[i].index].name); break;
        case ETL_PROFILE_BY_THREAD: snprintf(name, sizeof name, "%u", p->threads[rows[i].index].tid); break;
        case ETL_PROFILE_BY_MODULE: snprintf(name, sizeof name, "%s", p->modules[rows[i].index].name); break;
        default: etl_profile_function_label(p, rows[i].index, name, sizeof name);
        }
        assert_int_equal(rows[i].by, by[rows[i].depth]);
        snprintf(item, sizeof item, "%u:%s %llu\n", rows[i].depth, name, (unsigned long long)rows[i].samples);
        strcat(got, item);
    }
    free(rows);
    assert_string_equal(got, want);
}

/* total/self and "label samples" of the callers and callees. */
static void expect_butterfly(const etl_profile *p, const char *fn, const char *want)
{
    etl_profile_butterfly b;
    assert_int_equal(etl_profile_butterfly_get(p, fn, &b), ETL_OK);
    char got[1024], l[256];
    snprintf(got, sizeof got, "total %llu self %llu callers", (unsigned long long)b.total,
             (unsigned long long)b.self);
    for (size_t i = 0; i < b.ncallers; i++) {
        etl_profile_frame_label(p, &b.callers[i].frame, l, sizeof l);
        snprintf(got + strlen(got), sizeof got - strlen(got), " %s %llu", l, (unsigned long long)b.callers[i].samples);
    }
    strcat(got, " callees");
    for (size_t i = 0; i < b.ncallees; i++) {
        etl_profile_frame_label(p, &b.callees[i].frame, l, sizeof l);
        snprintf(got + strlen(got), sizeof got - strlen(got), " %s %llu", l, (unsigned long long)b.callees[i].samples);
    }
    etl_profile_butterfly_free(&b);
    assert_string_equal(got, want);
}

static etl_status run(etl_reader *r, int64_t v0, int64_t v1, int64_t pid, const char *process, int64_t tid,
                      etl_profile *p)
{
    etl_profile_options o = {.sz = sizeof o, .v0 = v0, .v1 = v1, .pid = pid, .process = process, .tid = tid};
    return etl_profile_run(r, &o, p);
}

/* ------------------------------------------------------- the 64-bit trace */

#define KB 0xfffff80000000000ull  /* ntoskrnl.exe, logged under PID 0 */
#define HAL 0xfffff80000200000ull /* hal.dll, logged under PID 4 */
#define APP 0x140000000ull        /* app.exe in 100 */
#define NTDLL 0x7ff800000000ull   /* ntdll.dll in 100 and in 200 */
#define PLUG 0x180000000ull       /* plugin.dll in 100: loaded, unloaded, loaded again */
#define LATE 0x190000000ull       /* late.dll in 100: only the end rundown names it */
#define JIT 0x20000001000ull      /* code no image covers */
#define KEY(n) (0xfffffa8000000000ull + (n) * 0x100)

static void build64(void)
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

static const char folded64[] =
    "app.exe (100);Thread (102);app.exe+0x500;ntdll.dll+0x4000;ntoskrnl.exe+0xa10;ntoskrnl.exe+0xa00 2\n"
    "app.exe (100);main (101);ntdll.dll+0x1000;app.exe+0x100;ntoskrnl.exe+0x600;ntoskrnl.exe+0x500 1\n"
    "app.exe (100);Thread (102);app.exe+0x200;ntdll.dll+0x2000;hal.dll+0x20;ntoskrnl.exe+0x700 1\n"
    "app.exe (100);main (101);app.exe+0x300;ntdll.dll+0x3000;ntoskrnl.exe+0x810;ntoskrnl.exe+0x800 1\n"
    "app.exe (100);Thread (102);app.exe+0x500;ntdll.dll+0x4000;ntoskrnl.exe+0xa10;ntoskrnl.exe+0xa04 1\n"
    "app.exe (100);main (101);ntoskrnl.exe+0xb10;ntoskrnl.exe+0xb00 1\n"
    "app.exe (100);main (101);ntoskrnl.exe+0xc00 1\n"
    "app.exe (100);main (101);plugin.dll+0x10 1\n"
    "app.exe (100);main (101);Unknown+0x180000010 1\n"
    "app.exe (100);main (101);plugin.dll+0x10 1\n"
    "app.exe (100);main (101);ntdll.dll+0x1000;late.dll+0x40;app.exe+0x100 1\n"
    "tool.exe (200);Thread (201);Unknown+0x20000001000 1\n"
    "tool.exe (200);Thread (201);ntdll.dll+0x5000 1\n"
    "app.exe (100);Thread (102);ntoskrnl.exe+0xd00 1\n"
    "System (4);Thread (8);hal.dll+0x30 1\n"
    "Idle (0);Thread (0);ntoskrnl.exe+0x1000;ntoskrnl.exe+0x900 1\n"
    "Idle (0);Thread (0);ntoskrnl.exe+0x1004;ntoskrnl.exe+0x904 1\n";

/* The frames of the stack whose folded line is the i-th, as "address/image" (image -1: none). */
static void expect_frames(const etl_profile *p, size_t i, const uint64_t *addr, const int *img, uint32_t n)
{
    uint32_t got;
    const etl_profile_frame *f = etl_profile_stack_frames(p, p->stacks[i].stack, &got);
    assert_int_equal(got, n);
    for (uint32_t k = 0; k < n; k++) {
        assert_int_equal(f[k].address, addr[k]);
        assert_int_equal(f[k].image, img[k] < 0 ? ETL_PROFILE_NONE : (uint32_t)img[k]);
    }
}

static void test_profile_64(void **state)
{
    (void)state;
    build64();
    char path[512];
    etl_reader *r = write_trace("p64.etl", path, sizeof path);
    etl_profile p;
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);

    assert_int_equal(p.samples, 18);
    assert_int_equal(p.with_stack, 11);
    assert_int_equal(p.unknown, 2);
    assert_int_equal(p.interval_ns, 500000);
    assert_true(p.interval_logged);
    assert_int_equal(p.interval_changes, 0);
    assert_int_equal(p.v0, 0);
    assert_int_equal(p.v1, 960400);
    assert_int_equal(p.key_refs_unresolved, 1);
    assert_int_equal(p.user_parts_dropped, 0);
    assert_int_equal(p.walks_other, 1);
    assert_false(etl_stats_damaged(&p.st));

    expect_list(&p, 'p', "app.exe(100) 13, Idle(0) 2, tool.exe(200) 2, System(4) 1");
    expect_list(&p, 't', "101/100:app.exe 8/5, 102/100:app.exe 5/4, 0/0:Idle 2/2, 201/200:tool.exe 2/0, "
                         "8/4:System 1/0");
    assert_string_equal(thread_of(&p, 101)->name, "main");
    assert_string_equal(thread_of(&p, 102)->name, "");
    expect_list(&p, 'm', "ntoskrnl.exe 11, Unknown 2, plugin.dll 2, ntdll.dll 1, hal.dll 1, app.exe 1");
    expect_list(&p, 'f',
                "ntoskrnl.exe+0xa00 2, plugin.dll+0x10 2, Unknown+0x20000001000 1, ntoskrnl.exe+0x500 1, "
                "ntoskrnl.exe+0x700 1, ntoskrnl.exe+0x900 1, ntoskrnl.exe+0x904 1, ntoskrnl.exe+0x800 1, "
                "ntoskrnl.exe+0xa04 1, ntoskrnl.exe+0xb00 1, ntoskrnl.exe+0xc00 1, ntdll.dll+0x5000 1, "
                "Unknown+0x180000010 1, hal.dll+0x30 1, app.exe+0x100 1, ntoskrnl.exe+0xd00 1");

    /* The images in the order logged, with their lives. */
    assert_int_equal(p.nimages, 9);
    static const char *const names[] = {"ntoskrnl.exe", "hal.dll", "app.exe", "ntdll.dll", "ntdll.dll",
                                        "tool.exe", "plugin.dll", "plugin.dll", "late.dll"};
    for (size_t i = 0; i < 9; i++) assert_string_equal(p.images[i].name, names[i]);
    assert_true(p.images[0].kernel && p.images[1].kernel && !p.images[2].kernel);
    assert_int_equal(p.images[1].pid, 4);
    assert_string_equal(p.images[3].path, "\\Windows\\System32\\ntdll.dll");
    assert_true(p.images[0].from_ns == INT64_MIN && p.images[0].to_ns == INT64_MAX);
    assert_true(p.images[6].from_ns == 300000 && p.images[6].to_ns == 500000);
    assert_true(p.images[7].from_ns == 600000 && p.images[7].to_ns == INT64_MAX);
    assert_true(p.images[8].from_ns == INT64_MIN && p.images[8].to_ns == INT64_MAX);
    assert_int_equal(p.images[6].time_date_stamp, 0x5000 + 3000);

    /* The stacks, in folded form and frame by frame. */
    char *text = folded(&p);
    assert_string_equal(text, folded64);
    free(text);
    assert_int_equal(p.nstacks, 17);
    assert_true(p.stacks[0].walked && p.stacks[0].samples == 2);
    const uint64_t a0[] = {KB + 0xA00, KB + 0xA10, NTDLL + 0x4000, APP + 0x500};
    const int i0[] = {0, 0, 3, 2};
    expect_frames(&p, 0, a0, i0, 4);
    const uint64_t a2[] = {KB + 0x700, HAL + 0x20, NTDLL + 0x2000, APP + 0x200};
    const int i2[] = {0, 1, 3, 2};
    expect_frames(&p, 2, a2, i2, 4);
    const uint64_t a8[] = {PLUG + 0x10}, a10[] = {APP + 0x100, LATE + 0x40, NTDLL + 0x1000};
    const int i7[] = {6}, i8[] = {-1}, i9[] = {7}, i10[] = {2, 8, 3};
    expect_frames(&p, 7, a8, i7, 1);
    expect_frames(&p, 8, a8, i8, 1);
    expect_frames(&p, 9, a8, i9, 1);
    expect_frames(&p, 10, a10, i10, 3);
    assert_false(p.stacks[7].walked);
    assert_true(p.stacks[10].walked);
    const uint64_t a12[] = {NTDLL + 0x5000};
    const int i12[] = {4}; /* process 200's ntdll.dll */
    expect_frames(&p, 12, a12, i12, 1);
    uint64_t sum = 0;
    for (size_t i = 0; i < p.nstacks; i++) sum += p.stacks[i].samples;
    assert_int_equal(sum, p.samples);

    expect_pivot(&p, ETL_PROFILE_BY_PROCESS, ETL_PROFILE_BY_MODULE,
                 "0:app.exe 13\n1:ntoskrnl.exe 9\n1:plugin.dll 2\n1:Unknown 1\n1:app.exe 1\n"
                 "0:Idle 2\n1:ntoskrnl.exe 2\n"
                 "0:tool.exe 2\n1:Unknown 1\n1:ntdll.dll 1\n"
                 "0:System 1\n1:hal.dll 1\n");
    expect_pivot(&p, ETL_PROFILE_BY_MODULE, ETL_PROFILE_BY_FUNCTION,
                 "0:ntoskrnl.exe 11\n1:ntoskrnl.exe+0xa00 2\n1:ntoskrnl.exe+0x500 1\n1:ntoskrnl.exe+0x700 1\n"
                 "1:ntoskrnl.exe+0x900 1\n1:ntoskrnl.exe+0x904 1\n1:ntoskrnl.exe+0x800 1\n1:ntoskrnl.exe+0xa04 1\n"
                 "1:ntoskrnl.exe+0xb00 1\n1:ntoskrnl.exe+0xc00 1\n1:ntoskrnl.exe+0xd00 1\n"
                 "0:Unknown 2\n1:Unknown+0x20000001000 1\n1:Unknown+0x180000010 1\n"
                 "0:plugin.dll 2\n1:plugin.dll+0x10 2\n"
                 "0:ntdll.dll 1\n1:ntdll.dll+0x5000 1\n"
                 "0:hal.dll 1\n1:hal.dll+0x30 1\n"
                 "0:app.exe 1\n1:app.exe+0x100 1\n");
    /* top 1 per level; the invalid requests. */
    etl_profile_by by[4] = {ETL_PROFILE_BY_THREAD, ETL_PROFILE_BY_FUNCTION, ETL_PROFILE_BY_THREAD};
    etl_profile_row *rows;
    size_t n;
    assert_int_equal(etl_profile_pivot(&p, by, 2, 1, &rows, &n), ETL_OK);
    assert_int_equal(n, 2);
    assert_true(rows[0].depth == 0 && p.threads[rows[0].index].tid == 101 && rows[0].samples == 8);
    assert_true(rows[1].depth == 1 && rows[1].samples == 2); /* plugin.dll+0x10 */
    free(rows);
    assert_int_equal(etl_profile_pivot(&p, by, 3, 0, &rows, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_pivot(&p, by, 0, 0, &rows, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_pivot(&p, by, 5, 0, &rows, &n), ETL_E_INVALID_ARG);

    expect_butterfly(&p, "ntdll.dll+0x4000", "total 3 self 0 callers app.exe+0x500 3 callees ntoskrnl.exe+0xa10 3");
    expect_butterfly(&p, "ntoskrnl.exe+0xa10",
                     "total 3 self 0 callers ntdll.dll+0x4000 3 callees ntoskrnl.exe+0xa00 2 ntoskrnl.exe+0xa04 1");
    expect_butterfly(&p, "app.exe+0x100",
                     "total 2 self 1 callers late.dll+0x40 1 ntdll.dll+0x1000 1 callees ntoskrnl.exe+0x600 1");
    expect_butterfly(&p, "plugin.dll+0x10", "total 2 self 2 callers callees");
    etl_profile_butterfly b;
    assert_int_equal(etl_profile_butterfly_get(&p, "nosuch.dll+0x10", &b), ETL_END);
    etl_profile_butterfly_free(&b);
    assert_int_equal(etl_profile_butterfly_get(&p, "ntdll.dll", &b), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_butterfly_get(&p, "ntdll.dll+0x", &b), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_butterfly_get(&p, "ntdll.dll+0x40z", &b), ETL_E_INVALID_ARG);
    etl_profile_free(&p);

    /* The window [115 us, 225 us): S3, S4, S5, S6, S7; S6's and S7's user parts come after it. */
    assert_int_equal(run(r, 115000, 225000, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.v0, 115000);
    assert_int_equal(p.v1, 225000);
    assert_int_equal(p.samples, 5);
    assert_int_equal(p.with_stack, 5);
    assert_int_equal(p.unknown, 0);
    expect_list(&p, 't', "0/0:Idle 2/2, 102/100:app.exe 2/2, 101/100:app.exe 1/1");
    text = folded(&p);
    assert_string_equal(text,
                        "app.exe (100);Thread (102);app.exe+0x500;ntdll.dll+0x4000;ntoskrnl.exe+0xa10;ntoskrnl.exe+0xa00 2\n"
                        "app.exe (100);main (101);app.exe+0x300;ntdll.dll+0x3000;ntoskrnl.exe+0x810;ntoskrnl.exe+0x800 1\n"
                        "Idle (0);Thread (0);ntoskrnl.exe+0x1000;ntoskrnl.exe+0x900 1\n"
                        "Idle (0);Thread (0);ntoskrnl.exe+0x1004;ntoskrnl.exe+0x904 1\n");
    free(text);
    etl_profile_free(&p);
    /* A window past the trace's end: empty. */
    assert_int_equal(run(r, 2000000, 3000000, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 0);
    assert_int_equal(p.nstacks, 0);
    text = folded(&p);
    assert_string_equal(text, "");
    free(text);
    etl_profile_free(&p);

    /* Filters: the process by id and by name (case ignored, .exe optional), the thread. */
    assert_int_equal(run(r, 0, 0, 100, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 13);
    expect_list(&p, 'p', "app.exe(100) 13");
    etl_profile_free(&p);
    static const char *const app[] = {"app", "APP.EXE", "App.exe"};
    for (int i = 0; i < 3; i++) {
        assert_int_equal(run(r, 0, 0, -1, app[i], -1, &p), ETL_OK);
        assert_int_equal(p.samples, 13);
        assert_int_equal(p.with_stack, 9);
        etl_profile_free(&p);
    }
    assert_int_equal(run(r, 0, 0, -1, "app.ex", -1, &p), ETL_OK);
    assert_int_equal(p.samples, 0);
    etl_profile_free(&p);
    assert_int_equal(run(r, 0, 0, -1, "idle", -1, &p), ETL_OK);
    assert_int_equal(p.samples, 2);
    etl_profile_free(&p);
    assert_int_equal(run(r, 0, 0, -1, NULL, 201, &p), ETL_OK);
    assert_int_equal(p.samples, 2);
    assert_int_equal(p.unknown, 1);
    expect_list(&p, 'm', "Unknown 1, ntdll.dll 1");
    etl_profile_free(&p);
    assert_int_equal(run(r, 0, 0, 200, NULL, 101, &p), ETL_OK); /* both: none */
    assert_int_equal(p.samples, 0);
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* ------------------------------------------------------- the 32-bit trace */

static void test_profile_32(void **state)
{
    (void)state;
    nev = 0;
    ptr = 4;
    const uint64_t K = 0x80000000u, A = 0x10000000u, B = 0x20000000u;
    process(1, 300, "small.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 300, 301, "w");
    image(2, ETL_HOOK_IMAGE_DC_START, K, 0x100000, 0, "\\SystemRoot\\system32\\ntkrnlpa.exe");
    image(2, ETL_HOOK_IMAGE_DC_START, A, 0x10000, 300, "\\x\\a.dll");
    image(2, ETL_HOOK_IMAGE_DC_START, B, 0x10000, 300, "\\x\\b.dll");
    /* T1: kernel and user frames in one walk. */
    sample(100, 0, 301, K + 0x1000);
    uint64_t t1[] = {K + 0x1000, A + 0x10, B + 0x20, A + 0x30};
    walk(101, 0, 100, 300, 301, t1, 4);
    /* T2: a user part by key, recursive: a.dll+0x10 innermost and outermost. */
    sample(200, 1, 301, A + 0x10);
    kref(201, 1, ETL_HOOK_STACK_KEY_USER, 200, 300, 301, 0x85000000u);
    /* T3: no image. */
    sample(300, 0, 301, 0x30000000u);
    uint64_t t2[] = {A + 0x10, B + 0x20, A + 0x10};
    kdef(400, 0, ETL_HOOK_STACK_KEY_RUNDOWN, 0x85000000u, t2, 3);
    char path[512];
    etl_reader *r = write_trace("p32.etl", path, sizeof path);
    assert_int_equal(etl_reader_header(r)->pointer_size, 4);
    etl_profile p;
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 3);
    assert_int_equal(p.with_stack, 2);
    assert_int_equal(p.unknown, 1);
    assert_int_equal(p.interval_ns, 1000000); /* none logged: the default */
    assert_false(p.interval_logged);
    assert_int_equal(p.v1, 40000);
    expect_list(&p, 'p', "small.exe(300) 3");
    expect_list(&p, 't', "301/300:small.exe 3/2");
    expect_list(&p, 'm', "ntkrnlpa.exe 1, a.dll 1, Unknown 1");
    expect_list(&p, 'f', "ntkrnlpa.exe+0x1000 1, a.dll+0x10 1, Unknown+0x30000000 1");
    assert_true(p.images[0].kernel && !p.images[1].kernel);
    char *text = folded(&p);
    assert_string_equal(text, "small.exe (300);w (301);a.dll+0x30;b.dll+0x20;a.dll+0x10;ntkrnlpa.exe+0x1000 1\n"
                              "small.exe (300);w (301);a.dll+0x10;b.dll+0x20;a.dll+0x10 1\n"
                              "small.exe (300);w (301);Unknown+0x30000000 1\n");
    free(text);
    /* A stack counts once, at its outermost occurrence; self is the samples it is innermost in. */
    expect_butterfly(&p, "a.dll+0x10", "total 2 self 1 callers b.dll+0x20 1 callees b.dll+0x20 1 ntkrnlpa.exe+0x1000 1");
    expect_butterfly(&p, "b.dll+0x20", "total 2 self 0 callers a.dll+0x10 1 a.dll+0x30 1 callees a.dll+0x10 2");
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* ------------------------------------------------------- the real sample */

static unsigned long expected_samples(const char *name)
{
    char path[1024], line[1 << 16];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/expected/%s.events.jsonl.gz", name);
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    unsigned long n = 0;
    while (gzgets(gz, line, sizeof line))
        if (strstr(line, "\"hook\":3886,") || strstr(line, "\"hook\":3886}")) n++;
    gzclose(gz);
    return n;
}

typedef struct tskey {
    uint64_t ts;
    uint32_t tid;
} tskey;

static int cmp_tskey(const void *a, const void *b)
{
    const tskey *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void test_profile_real(void **state)
{
    (void)state;
    const char *name = "perfview-x64-compressed.etl";
    char path[1024];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/samples/%s", name);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);

    /* Independently: the samples, and the (time, thread) pairs the stack walks name. */
    tskey *walks = NULL, *samples = NULL;
    size_t nw = 0, ns = 0, capw = 0, caps = 0;
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    etl_event ev;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (etl_event_decode(&rec, &ev) != ETL_OK) continue;
        tskey k;
        if (ev.kind == ETL_EVENT_SAMPLED_PROFILE) {
            k = (tskey){rec.ts, ev.u.sample.thread_id};
            if (ns == caps) samples = realloc(samples, (caps = caps ? 2 * caps : 4096) * sizeof *samples);
            samples[ns++] = k;
            continue;
        }
        if (ev.kind == ETL_EVENT_STACKWALK) k = (tskey){ev.u.stack.event_timestamp, ev.u.stack.stack_thread};
        else if (ev.kind == ETL_EVENT_STACK_KEY_REF) k = (tskey){ev.u.key_ref.event_timestamp, ev.u.key_ref.stack_thread};
        else continue;
        if (nw == capw) walks = realloc(walks, (capw = capw ? 2 * capw : 4096) * sizeof *walks);
        walks[nw++] = k;
    }
    etl_iter_close(it);
    qsort(walks, nw, sizeof *walks, cmp_tskey);
    uint64_t with_stack = 0;
    for (size_t i = 0; i < ns; i++)
        if (bsearch(&samples[i], walks, nw, sizeof *walks, cmp_tskey)) with_stack++;
    free(walks);
    free(samples);
    assert_int_equal(ns, expected_samples(name));
    assert_int_equal(with_stack, 6318);

    etl_profile p;
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, ns);
    assert_int_equal(p.with_stack, with_stack);
    assert_int_equal(p.key_refs_unresolved, 0);
    assert_int_equal(p.user_parts_dropped, 0);
    assert_int_equal(p.interval_ns, 1000000);
    assert_true(p.interval_logged);

    /* Every list and every pivot sums to the samples; so do the folded counts. */
    uint64_t s = 0;
    for (size_t i = 0; i < p.nthreads; i++) {
        s += p.threads[i].samples;
        if (p.threads[i].tid != 0 && p.threads[i].samples) assert_true(p.threads[i].pid != ETL_PROFILE_NONE);
    }
    assert_int_equal(s, p.samples);
    s = 0;
    for (size_t i = 0; i < p.nstacks; i++) s += p.stacks[i].samples;
    assert_int_equal(s, p.samples);
    for (int k = 0; k < 4; k++) {
        etl_profile_by by[2] = {(etl_profile_by)k, (etl_profile_by)((k + 1) % 4)};
        etl_profile_row *rows;
        size_t n;
        assert_int_equal(etl_profile_pivot(&p, by, 2, 0, &rows, &n), ETL_OK);
        uint64_t top = 0, inner = 0;
        for (size_t i = 0; i < n; i++) *(rows[i].depth ? &inner : &top) += rows[i].samples;
        assert_int_equal(top, p.samples);
        assert_int_equal(inner, p.samples);
        free(rows);
    }
    char *text = folded(&p);
    s = 0;
    size_t lines = 0;
    for (char *l = text; *l; lines++) {
        char *nl = strchr(l, '\n');
        assert_non_null(nl);
        *nl = 0;
        char *sp = strrchr(l, ' ');
        assert_non_null(sp);
        s += strtoull(sp + 1, NULL, 10);
        l = nl + 1;
    }
    free(text);
    assert_int_equal(s, p.samples);
    assert_int_equal(lines, p.nstacks);

    /* Unknown: 4,678 of 79,528 samples (the README's figure), most in processes with clr.dll (JIT code). */
    uint64_t unknown = 0;
    for (size_t i = 0; i < p.nmodules; i++)
        if (!strcmp(p.modules[i].name, "Unknown")) unknown = p.modules[i].samples;
    assert_int_equal(unknown, p.unknown);
    assert_int_equal(p.unknown, 4678);
    etl_profile_by by[2] = {ETL_PROFILE_BY_PROCESS, ETL_PROFILE_BY_MODULE};
    etl_profile_row *rows;
    size_t n;
    assert_int_equal(etl_profile_pivot(&p, by, 2, 0, &rows, &n), ETL_OK);
    uint64_t in_clr = 0;
    uint32_t proc = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].depth == 0) {
            proc = rows[i].index;
            continue;
        }
        if (strcmp(p.modules[rows[i].index].name, "Unknown") != 0) continue;
        for (size_t m = 0; m < p.nimages; m++)
            if (p.images[m].pid == p.processes[proc].pid && !strcmp(p.images[m].name, "clr.dll")) {
                in_clr += rows[i].samples;
                break;
            }
    }
    free(rows);
    assert_true(in_clr * 2 > p.unknown);
    etl_profile_free(&p);
    etl_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_profile_64),
        cmocka_unit_test(test_profile_32),
        cmocka_unit_test(test_profile_real),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

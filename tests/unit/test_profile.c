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
#include "profcmp.h"
#include "profbuild.h"

static char tmpdir[256];

static int setup(void **s)
{
    (void)s;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "profile");
}

static int teardown(void **s)
{
    (void)s;
    return tu_tmpdir_remove(tmpdir);
}

/* Writes the trace built to tmpdir/name; returns its reader. */
static etl_reader *write_trace(const char *name, char *path, size_t cap)
{
    snprintf(path, cap, "%s/%s", tmpdir, name);
    pb_write(path);
    etl_reader *r;
    etl_diag d;
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
    etl_status st = etl_profile_run(r, &o, p);
    if (st == ETL_OK) profcmp_no_stacks(r, &o, p); /* every run: the counts alone are the same */
    return st;
}

/* ------------------------------------------------------- the 64-bit trace */

static const char folded64[] =
    "app.exe (100);Thread (102);app.exe+0x500;ntdll.dll+0x4000;ntoskrnl.exe+0xa10;ntoskrnl.exe+0xa00 2\n"
    "app.exe (100);main (101);plugin.dll+0x10 2\n" /* two lives of plugin.dll, one line (explore8 F1) */
    "tool.exe (200);Thread (201);Unknown+0x20000001000 1\n"
    "app.exe (100);main (101);ntdll.dll+0x1000;app.exe+0x100;ntoskrnl.exe+0x600;ntoskrnl.exe+0x500 1\n"
    "app.exe (100);Thread (102);app.exe+0x200;ntdll.dll+0x2000;hal.dll+0x20;ntoskrnl.exe+0x700 1\n"
    "Idle (0);Thread (0);ntoskrnl.exe+0x1004;ntoskrnl.exe+0x904 1\n"
    "Idle (0);Thread (0);ntoskrnl.exe+0x1000;ntoskrnl.exe+0x900 1\n"
    "app.exe (100);main (101);app.exe+0x300;ntdll.dll+0x3000;ntoskrnl.exe+0x810;ntoskrnl.exe+0x800 1\n"
    "app.exe (100);Thread (102);app.exe+0x500;ntdll.dll+0x4000;ntoskrnl.exe+0xa10;ntoskrnl.exe+0xa04 1\n"
    "app.exe (100);main (101);ntoskrnl.exe+0xb10;ntoskrnl.exe+0xb00 1\n"
    "app.exe (100);main (101);ntoskrnl.exe+0xc00 1\n"
    "tool.exe (200);Thread (201);ntdll.dll+0x5000 1\n"
    "app.exe (100);main (101);Unknown+0x180000010 1\n"
    "System (4);Thread (8);hal.dll+0x30 1\n"
    "app.exe (100);main (101);ntdll.dll+0x1000;late.dll+0x40;app.exe+0x100 1\n"
    "app.exe (100);Thread (102);ntoskrnl.exe+0xd00 1\n";

/* Folded text equal to want up to the order of lines with the same count (those are in their first sample's order). */
static int cmp_line(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void assert_same_lines(const char *got, const char *want)
{
    char *g = strdup(got), *w = strdup(want);
    char *gl[256], *wl[256];
    size_t ng = 0, nw = 0;
    for (char *t = strtok(g, "\n"); t && ng < 256; t = strtok(NULL, "\n")) gl[ng++] = t;
    for (char *t = strtok(w, "\n"); t && nw < 256; t = strtok(NULL, "\n")) wl[nw++] = t;
    assert_int_equal(ng, nw);
    for (size_t i = 1; i < ng; i++) /* counts never grow down the list */
        assert_true(strtoull(strrchr(gl[i], ' ') + 1, NULL, 10) <= strtoull(strrchr(gl[i - 1], ' ') + 1, NULL, 10));
    qsort(gl, ng, sizeof *gl, cmp_line);
    qsort(wl, nw, sizeof *wl, cmp_line);
    for (size_t i = 0; i < ng; i++) assert_string_equal(gl[i], wl[i]);
    free(g);
    free(w);
}

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
    pb_build64();
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
    /* A label cut to any room, as snprintf cuts it: the whole length returned. */
    for (uint32_t f = 0; f < p.nfunctions; f++) {
        char whole[64], cut[64], want[64];
        size_t n = etl_profile_function_label(&p, f, whole, sizeof whole);
        assert_int_equal(n, strlen(whole));
        for (size_t cap = 0; cap <= n + 1; cap++) {
            memset(cut, 'X', sizeof cut);
            memset(want, 'X', sizeof want);
            assert_int_equal(etl_profile_function_label(&p, f, cut, cap), n);
            snprintf(want, cap, "%s", whole);
            assert_memory_equal(cut, want, sizeof cut);
        }
    }

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

    /* The stacks, in folded form and frame by frame (most samples first, ties by their first sample's time). */
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
    expect_frames(&p, 3, a2, i2, 4);
    const uint64_t a8[] = {PLUG + 0x10}, a10[] = {APP + 0x100, LATE + 0x40, NTDLL + 0x1000};
    const int i7[] = {6}, i8[] = {-1}, i9[] = {7}, i10[] = {2, 8, 3};
    expect_frames(&p, 11, a8, i7, 1);
    expect_frames(&p, 12, a8, i8, 1);
    expect_frames(&p, 13, a8, i9, 1);
    expect_frames(&p, 15, a10, i10, 3);
    assert_false(p.stacks[11].walked);
    assert_true(p.stacks[15].walked);
    const uint64_t a12[] = {NTDLL + 0x5000};
    const int i12[] = {4}; /* process 200's ntdll.dll */
    expect_frames(&p, 10, a12, i12, 1);
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
    /* NULLs refused as the neighbours refuse (explore30 F7: they crashed) */
    assert_int_equal(etl_profile_pivot(&p, NULL, 1, 0, &rows, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_pivot(NULL, by, 1, 0, &rows, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_pivot(&p, by, 1, 0, NULL, &n), ETL_E_INVALID_ARG);
    etl_profile_butterfly bn;
    assert_int_equal(etl_profile_butterfly_get(&p, NULL, &bn), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_butterfly_get(NULL, "app.exe+0x100", &bn), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_butterfly_get(&p, "app.exe+0x100", NULL), ETL_E_INVALID_ARG);

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
    assert_same_lines(text,
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

/* ------------------------------------------------------- the window's end */

/* A sample that is the trace's last record, at its end: in a window that reaches the end, in no other. */
static void test_profile_window_end(void **state)
{
    (void)state;
    pb_build32();
    sample(500, 1, 301, 0x30000000u); /* after the rundown at 400: the last record, the end (EndTime is before) */
    char path[512];
    etl_reader *r = write_trace("end.etl", path, sizeof path);
    etl_profile p;
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.v1, 50000);
    assert_int_equal(p.samples, 4);
    etl_profile_free(&p);
    assert_int_equal(run(r, 0, 45000, -1, NULL, -1, &p), ETL_OK); /* [0, 45 us): not the end's */
    assert_int_equal(p.samples, 3);
    etl_profile_free(&p);
    assert_int_equal(run(r, 25000, 90000, -1, NULL, -1, &p), ETL_OK); /* clipped to [25 us, 50 us]: the end's too */
    assert_true(p.v0 == 25000 && p.v1 == 50000);
    assert_int_equal(p.samples, 2);
    etl_profile_free(&p);
    assert_int_equal(run(r, 60000, 90000, -1, NULL, -1, &p), ETL_OK); /* past the end: 0 ns at the end, nothing */
    assert_true(p.v0 == 50000 && p.v1 == 50000);
    assert_int_equal(p.samples, 0);
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* ------------------------------------------------------- the 32-bit trace */

static void test_profile_32(void **state)
{
    (void)state;
    pb_build32();
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
    assert_same_lines(text, "small.exe (300);w (301);a.dll+0x30;b.dll+0x20;a.dll+0x10;ntkrnlpa.exe+0x1000 1\n"
                              "small.exe (300);w (301);a.dll+0x10;b.dll+0x20;a.dll+0x10 1\n"
                              "small.exe (300);w (301);Unknown+0x30000000 1\n");
    free(text);
    /* A stack counts once, at its outermost occurrence; self is the samples it is innermost in. */
    expect_butterfly(&p, "a.dll+0x10", "total 2 self 1 callers b.dll+0x20 1 callees b.dll+0x20 1 ntkrnlpa.exe+0x1000 1");
    expect_butterfly(&p, "b.dll+0x20", "total 2 self 0 callers a.dll+0x10 1 a.dll+0x30 1 callees a.dll+0x10 2");
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* Names in folded stacks: controls, C1, bidirectional overrides and the separators become '_'. */
static void test_profile_names(void **state)
{
    (void)state;
    pb_build_names();
    char path[512];
    etl_reader *r = write_trace("names.etl", path, sizeof path);
    etl_profile p;
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 1);
    assert_int_equal(p.with_stack, 1);
    assert_string_equal(p.processes[0].name, "bad\xc2\x9b.exe");
    assert_string_equal(p.threads[0].name, "a;b\x1b[31m\xe2\x80\xaez\r\n");
    char *text = folded(&p);
    assert_same_lines(text, "bad_.exe (7);a_b_[31m_z__ (70);x_y.dll+0x10 1\n");
    free(text);
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* Edges: no samples; a walk with no frames; a thread whose kernel stacks never get a user part; no walks. */
static void test_profile_edges(void **state)
{
    (void)state;
    char path[512];
    etl_profile p;
    etl_profile_by by[1] = {ETL_PROFILE_BY_MODULE};
    etl_profile_row *rows;
    size_t n;
    etl_profile_butterfly b;

    /* No samples: every list and view empty. */
    nev = 0;
    ptr = 8;
    process(1, 7, "a.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, NULL);
    etl_reader *r = write_trace("none.etl", path, sizeof path);
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_true(p.samples == 0 && p.nthreads == 0 && p.nprocesses == 0 && p.nmodules == 0 && p.nstacks == 0);
    assert_int_equal(etl_profile_pivot(&p, by, 1, 0, &rows, &n), ETL_OK);
    assert_int_equal(n, 0);
    free(rows);
    char *text = folded(&p);
    assert_string_equal(text, "");
    free(text);
    assert_int_equal(etl_profile_butterfly_get(&p, "a.exe+0x0", &b), ETL_END);
    etl_profile_butterfly_free(&b);
    etl_profile_free(&p);
    etl_reader_close(r);

    /* The only walk has no frame. */
    nev = 0;
    process(1, 7, "a.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, NULL);
    sample(100, 0, 70, 0x10010);
    walk(101, 0, 100, 7, 70, NULL, 0);
    r = write_trace("empty-walk.etl", path, sizeof path);
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 1);
    assert_int_equal(p.nstacks, 1);
    uint32_t nf;
    etl_profile_stack_frames(&p, p.stacks[0].stack, &nf);
    text = folded(&p);
    assert_int_equal(strtoull(strrchr(text, ' ') + 1, NULL, 10), 1);
    free(text);
    etl_profile_free(&p);
    etl_reader_close(r);

    /* 5,000 samples of a user thread with kernel walks only: 4,096 wait, the older ones close without a user part. */
    nev = 0;
    process(1, 7, "a.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, NULL);
    image(2, ETL_HOOK_IMAGE_DC_START, 0xfffff80000000000ull, 0x100000, 0, "ntoskrnl.exe");
    for (uint64_t i = 0; i < 5000; i++) {
        uint64_t f[] = {0xfffff80000001000ull + (i % 3)};
        sample(100 + 10 * i, 0, 70, f[0]);
        walk(101 + 10 * i, 0, 100 + 10 * i, 7, 70, f, 1);
    }
    r = write_trace("kernel-only.etl", path, sizeof path);
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 5000);
    assert_int_equal(p.with_stack, 5000);
    assert_int_equal(p.user_parts_dropped, 5000 - 4096);
    assert_int_equal(p.nstacks, 3);
    assert_int_equal(p.stacks[0].samples + p.stacks[1].samples + p.stacks[2].samples, 5000);
    etl_profile_free(&p);
    etl_reader_close(r);

    /* An image name of 600 bytes: folded labels are never cut, the butterfly tells two such frames apart. */
    nev = 0;
    char longname[700], longpath[720];
    memset(longname, 'm', 596);
    strcpy(longname + 596, ".dll");
    snprintf(longpath, sizeof longpath, "\\x\\%s", longname);
    process(1, 7, "a.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, NULL);
    image(2, ETL_HOOK_IMAGE_DC_START, 0x10000, 0x1000, 7, longpath);
    uint64_t lf1[] = {0x10010, 0x10100}, lf2[] = {0x10010, 0x10200};
    sample(100, 0, 70, 0x10010);
    walk(101, 0, 100, 7, 70, lf1, 2);
    sample(200, 0, 70, 0x10010);
    walk(201, 0, 200, 7, 70, lf2, 2);
    r = write_trace("long.etl", path, sizeof path);
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    text = folded(&p);
    char want[4096];
    snprintf(want, sizeof want, "a.exe (7);Thread (70);%s+0x100;%s+0x10 1\na.exe (7);Thread (70);%s+0x200;%s+0x10 1\n",
             longname, longname, longname, longname);
    assert_string_equal(text, want);
    free(text);
    char fn[800];
    snprintf(fn, sizeof fn, "%s+0x10", longname);
    assert_int_equal(etl_profile_butterfly_get(&p, fn, &b), ETL_OK);
    assert_int_equal(b.total, 2);
    assert_int_equal(b.ncallers, 2);
    etl_profile_butterfly_free(&b);
    etl_profile_free(&p);
    etl_reader_close(r);

    /* One function with 20,000 distinct callees (11.6 s when each edge was compared with every other by its label). */
    nev = 0;
    process(1, 7, "a.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, NULL);
    image(2, ETL_HOOK_IMAGE_DC_START, 0x10000000, 0x10000000, 7, "m.dll");
    for (uint64_t i = 0; i < 20000; i++) {
        uint64_t f[3] = {0x10001000 + i, 0x10000010, 0x10000020 + i % 2};
        sample(10 + 2 * i, 0, 70, f[0]);
        walk(11 + 2 * i, 0, 10 + 2 * i, 7, 70, f, 3);
    }
    r = write_trace("wide.etl", path, sizeof path);
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(etl_profile_butterfly_get(&p, "m.dll+0x10", &b), ETL_OK);
    assert_int_equal(b.total, 20000);
    assert_int_equal(b.ncallees, 20000);
    assert_int_equal(b.ncallers, 2);
    assert_true(b.callers[0].samples == 10000 && b.callers[1].samples == 10000);
    assert_true(b.callers[0].frame.address == 0x10000020 && b.callers[1].frame.address == 0x10000021);
    for (size_t i = 0; i < b.ncallees; i++) {
        assert_int_equal(b.callees[i].samples, 1);
        assert_int_equal(b.callees[i].frame.address, 0x10001000 + i); /* ties: by address */
    }
    etl_profile_butterfly_free(&b);
    etl_profile_free(&p);
    etl_reader_close(r);

    /* No walk in the whole trace: nothing waits, nothing is attached. */
    nev = 0;
    process(1, 7, "a.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 7, 70, NULL);
    for (uint64_t i = 0; i < 100; i++) sample(100 + i, (uint16_t)(i & 1), i % 4 ? 70 : 0, 0x1000 + i % 5);
    sample(300, 0, 99, 0x1000); /* a thread the trace never places */
    r = write_trace("no-walks.etl", path, sizeof path);
    assert_int_equal(run(r, 0, 0, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 101);
    assert_int_equal(p.with_stack, 0);
    assert_int_equal(p.unknown, 101);
    expect_list(&p, 'p', "a.exe(7) 75, Idle(0) 25, Unknown(4294967295) 1");
    assert_int_equal(p.nstacks, 2 * 5 + 1); /* each thread with each of the five addresses */
    etl_profile_free(&p);
    /* A pid filter never selects the samples of no known process, whatever the number. */
    assert_int_equal(run(r, 0, 0, 4294967295, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 0);
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
        cmocka_unit_test(test_profile_window_end),
        cmocka_unit_test(test_profile_names),
        cmocka_unit_test(test_profile_edges),
        cmocka_unit_test(test_profile_real),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

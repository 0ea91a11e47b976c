/*
 * profagree.h - test-only: traces on which the profile's outputs must agree with each
 * other (the flame graph with --folded, --json with --folded and the export) and
 * which each hold one thing the profile must tell rather than hide (explore8 F1, F3,
 * F4, F6, F7). Built with profbuild.h's event list (one trace at a time):
 * test_profile_agree.c checks them in the library, tests/cli/gen_profile_agree.c writes
 * them for tests/cli/profile_agree.sh.
 *
 *   pa_build_reload():  plug.dll loaded, unloaded and loaded again at its base, then at
 *                       another base: one module+offset in three image lives, 7 samples
 *                       through plug.dll+0x10 (F1: the flame graph made a node per life)
 *   pa_build_threads(): a sample of a thread no Thread event names, with a walk naming
 *                       process 100 (F4), one without a walk, one whose walk names
 *                       another process than its thread's, and a key no definition gives (F6)
 *   pa_build_bigsize(): dbghelp.dll loaded with ImageSize 0xFFFFFFFFFFFFFFFF below
 *                       ntdll.dll and other.dll, whose samples it took (F3)
 *   pa_build_deep():    32-bit: a plain walk of 200 frames and a key definition of 200 (F7)
 */
#ifndef ETLKIT_TESTS_PROFAGREE_H
#define ETLKIT_TESTS_PROFAGREE_H

#include "profbuild.h"

/* profbuild.h's own traces, not built here: used, for the compiler. */
static inline void pa_unused(void) { (void)pb_build64, (void)pb_build32, (void)pb_build_names; }

#define PA_PLUG 0x7ff600000000ull  /* plug.dll's first base */
#define PA_PLUG2 0x7ff610000000ull /* and its second */

/* A sample of tid with a plain walk of its n frames (the first its InstructionPointer), logged just after it. */
static void pa_walked(uint64_t k, uint16_t cpu, uint32_t pid, uint32_t tid, const uint64_t *f, uint32_t n)
{
    sample(k, cpu, tid, f[0]);
    walk(k + 1, cpu, k, pid, tid, f, n);
}

static void pa_app(void)
{
    nev = 0;
    ptr = 8;
    process(1, 0, "Idle");
    process(1, 100, "app.exe");
    process(1, 200, "tool.exe");
    thread(2, ETL_HOOK_THREAD_DC_START, 0, 0, NULL);
    thread(2, ETL_HOOK_THREAD_DC_START, 100, 101, "main");
    thread(2, ETL_HOOK_THREAD_DC_START, 200, 201, NULL);
    image(3, ETL_HOOK_IMAGE_DC_START, KB, 0x100000, 0, "\\SystemRoot\\system32\\ntoskrnl.exe");
    image(3, ETL_HOOK_IMAGE_DC_START, APP, 0x10000, 100, "\\x\\app.exe");
    image(3, ETL_HOOK_IMAGE_DC_START, NTDLL, 0x100000, 100, "\\Windows\\System32\\ntdll.dll");
    image(3, ETL_HOOK_IMAGE_DC_START, NTDLL, 0x100000, 200, "\\Windows\\System32\\ntdll.dll");
    image(3, ETL_HOOK_IMAGE_DC_START, 0x400000, 0x1000, 200, "\\x\\tool.exe");
    interval(10, 0, 10000);
}

static void pa_build_reload(void)
{
    pa_app();
    /* Three lives of plug.dll: [1000, 2000) and [3000, 4000) at one base, from 5000 at another. */
    image(1000, ETL_HOOK_PROCESS_LOAD_IMAGE, PA_PLUG, 0x10000, 100, "\\x\\plug.dll");
    image(2000, ETL_HOOK_IMAGE_UNLOAD, PA_PLUG, 0x10000, 100, "\\x\\plug.dll");
    image(3000, ETL_HOOK_PROCESS_LOAD_IMAGE, PA_PLUG, 0x10000, 100, "\\x\\plug.dll");
    image(4000, ETL_HOOK_IMAGE_UNLOAD, PA_PLUG, 0x10000, 100, "\\x\\plug.dll");
    image(5000, ETL_HOOK_PROCESS_LOAD_IMAGE, PA_PLUG2, 0x10000, 100, "\\x\\plug.dll");
    static const uint64_t lives[] = {PA_PLUG, PA_PLUG, PA_PLUG2}, at[] = {1100, 3100, 5100};
    static const unsigned nsame[] = {2, 3, 1};
    for (unsigned l = 0; l < 3; l++) {
        uint64_t b = lives[l];
        uint64_t same[] = {b + 0x20, b + 0x10, APP + 0x100, NTDLL + 0x1000};
        for (unsigned i = 0; i < nsame[l]; i++) pa_walked(at[l] + 10 * i, 0, 100, 101, same, 4);
    }
    uint64_t other[] = {APP + 0x200, PA_PLUG + 0x10, APP + 0x100, NTDLL + 0x1000};
    pa_walked(1500, 1, 100, 101, other, 4);
}

static void pa_build_threads(void)
{
    pa_app();
    /* Thread 4242: no Thread event names it; its walk names process 100. */
    uint64_t f1[] = {NTDLL + 0x5000, APP + 0x300};
    pa_walked(1000, 0, 100, 4242, f1, 2);
    /* Thread 4343: none either, and no walk: its process is unknown. */
    sample(1100, 1, 4343, NTDLL + 0x5000);
    /* Thread 101 of process 100, whose walk names process 200 (tool.exe: its own ntdll.dll): 100's taken. */
    uint64_t f2[] = {NTDLL + 0x6000, APP + 0x400};
    pa_walked(1200, 0, 200, 101, f2, 2);
    /* Thread 101's kernel part by a key no definition gives: the stack is the user part alone. */
    sample(1300, 1, 101, KB + 0x100);
    kref(1301, 1, ETL_HOOK_STACK_KEY_KERNEL, 1300, 100, 101, KEY(99));
    kref(1302, 1, ETL_HOOK_STACK_KEY_USER, 1300, 100, 101, KEY(1));
    uint64_t u[] = {NTDLL + 0x7000, APP + 0x500};
    kdef(2000, 1, ETL_HOOK_STACK_KEY_RUNDOWN, KEY(1), u, 2);
}

static void pa_build_bigsize(void)
{
    pa_app();
    image(4, ETL_HOOK_IMAGE_DC_START, 0x7ff900000000ull, 0x10000, 100, "\\x\\other.dll");
    /* Loaded during the trace below the others, so the latest loaded where they overlap. */
    image(1000, ETL_HOOK_PROCESS_LOAD_IMAGE, 0x7ff700000000ull, 0xffffffffffffffffull, 100, "\\x\\dbghelp.dll");
    uint64_t f1[] = {NTDLL + 0x100, APP + 0x100}, f2[] = {0x7ff900000100ull, APP + 0x100};
    uint64_t f3[] = {0x7ff700000100ull, APP + 0x100};
    pa_walked(1100, 0, 100, 101, f1, 2);
    pa_walked(1200, 0, 100, 101, f2, 2);
    pa_walked(1300, 0, 100, 101, f3, 2);
}

#define PA_DEEP 200u
#define PA_K32 0x80000000u
#define PA_A32 0x10000000u

/* A record of hook with the payload head (n bytes) then frames 32-bit frames (the encoders refuse > 192). */
static void pa_raw32(uint64_t k, uint16_t cpu, uint16_t hook, const uint8_t *head, size_t n, const uint32_t *f,
                     uint32_t frames)
{
    tev *e = add(k, cpu, ETL_WH_PERFINFO, 2, hook);
    PB_MUST(n + 4 * (size_t)frames <= sizeof e->p);
    memcpy(e->p, head, n);
    for (uint32_t i = 0; i < frames; i++) memcpy(e->p + n + 4 * i, &f[i], 4);
    e->len = n + 4 * (size_t)frames;
}

static void pa_build_deep(void)
{
    nev = 0;
    ptr = 4;
    process(1, 300, "deep.exe");
    thread(1, ETL_HOOK_THREAD_DC_START, 300, 301, "w");
    image(2, ETL_HOOK_IMAGE_DC_START, PA_K32, 0x100000, 0, "\\SystemRoot\\system32\\ntkrnlpa.exe");
    image(2, ETL_HOOK_IMAGE_DC_START, PA_A32, 0x10000, 300, "\\x\\a.dll");
    /* Frame i (innermost first) at a.dll+0x10*(i+1): the 193rd and after are left out. */
    uint32_t f[PA_DEEP];
    for (uint32_t i = 0; i < PA_DEEP; i++) f[i] = PA_A32 + 0x10 * (i + 1);
    sample(100, 0, 301, f[0]);
    uint8_t head[16];
    uint64_t ets = T0 + 100;
    uint32_t pid = 300, tid = 301;
    memcpy(head, &ets, 8);
    memcpy(head + 8, &pid, 4);
    memcpy(head + 12, &tid, 4);
    pa_raw32(101, 0, ETL_HOOK_STACKWALK, head, 16, f, PA_DEEP);
    /* A user part by key, its definition 200 frames long. */
    sample(200, 1, 301, f[0]);
    kref(201, 1, ETL_HOOK_STACK_KEY_USER, 200, 300, 301, 0x85000000u);
    uint32_t key = 0x85000000u;
    pa_raw32(400, 0, ETL_HOOK_STACK_KEY_RUNDOWN, (const uint8_t *)&key, 4, f, PA_DEEP);
    /* A walk of 192: whole, not counted. */
    sample(300, 0, 301, f[0]);
    uint64_t f192[192];
    for (uint32_t i = 0; i < 192; i++) f192[i] = f[i];
    walk(301, 0, 300, 300, 301, f192, 192);
}

#endif

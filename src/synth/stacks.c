/*
 * stacks.c - `synth --stacks`: the machine's code. Synthetic images (the
 * kernel's: ntoskrnl.exe, hal.dll, two drivers; per process its exe,
 * ntdll.dll, kernel32.dll, KernelBase.dll, one app DLL, and in some processes
 * dbghelp.dll loaded and unloaded again and again at the same base, and a JIT
 * region no image covers), a call stack per thread, SampledProfile per CPU at
 * --profile-interval, and stack walks after SampledProfile, CSwitch and
 * ReadyThread in the plain (StackWalk 0x1820) and the cached (stack key)
 * forms. Everything random comes from a PRNG of its own, so that without
 * --stacks the main stream, and so every byte, is what it was.
 *
 * A thread's user stack is a path in a call tree: frame d is a function of
 * the hash of the choices above it (4 callees per frame), so threads of the
 * same kind share prefixes as real programs do. It moves (pops a few frames,
 * pushes a few) at samples and switch-outs taken in user mode. On top, while
 * the thread is in the kernel, a kernel part: a wait (after its switch-out),
 * a preemption (interrupt, DPC, swap), a system call or page fault (entered
 * at a sample), the signalling of a ReadyThread, a DPC. System threads and
 * the idle threads have kernel frames only.
 *
 * Header types and versions, as a Windows 8-11 kernel logger writes them
 * (checked against perfview-x64-compressed.etl):
 *   SampledProfile 0x0F2E, StackWalk 0x1820, 0x1823-0x1826   PERFINFO, v2
 *   CollectionStart/End 0x0F49/0x0F4A                        SYSTEM, v3 (SourceName "Timer"), ids 0
 *   Image DCStart/DCEnd 0x1403/0x1404                        PERFINFO, v2 (v3 from build 10240)
 *   Image Load/Unload 0x030A/0x1402                          SYSTEM, the loading thread's ids
 *
 * The cached form: each CPU has a cache of KEYS stacks; a walk's kernel part
 * and user part are looked up separately and referenced (0x1825, 0x1826) by
 * their key (an address: cache slot and CPU, so keys of different CPUs never
 * collide); a miss evicts the least recently used entry, logging its frames
 * (KeyDelete 0x1823) just before the new reference that reuses the key; the
 * keys still cached are logged at the end (KeyRundown 0x1824). A reference
 * is always logged on the CPU whose cache holds its key, so it resolves to
 * the first definition of its key at or after it. The user part of a walk
 * taken in the kernel is deferred, half the time, until the thread returns
 * to user mode: at a later sample of it in user mode (after any number of
 * samples in the kernel), its next switch-out, its exit or the trace end;
 * then its reference goes to the cache of the CPU it is on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "synth_internal.h"

enum { KM_NT = 0, KM_HAL, KM_NTFS, KM_TCPIP, KM_COUNT };
enum { UM_EXE = 0, UM_NTDLL, UM_K32, UM_KBASE, UM_APP, UM_PLUGIN, UM_COUNT };
#define MOD_USER 16u   /* module codes: 0..3 kernel images, MOD_USER + UM_* a process's */
#define MOD_NONE 0xFFu /* the JIT region */

/* Kernel paths: what is on top of a stack while its thread is in the kernel. */
enum { KP_USER = 0, KP_WAIT, KP_PREEMPT, KP_SYSCALL, KP_SIGNAL, KP_DPC, KP_IDLE };

#define NFUNC 48       /* functions per image: 0x400 bytes each from base + 0x1000 */
#define USER_MAX 24    /* a path's depth */
#define KEYS 32        /* stack keys per CPU */
#define PEND_MAX 512   /* deferred user parts, machine-wide */
#define PEND_PER_THREAD 3
#define JIT_SIZE 0x100000u

typedef struct image_desc {
    const char *name, *path;
    uint64_t base64;
    uint32_t base32, size64, size32;
} image_desc;

static const image_desc kimages[KM_COUNT] = {
    {"ntoskrnl.exe", "\\SystemRoot\\system32\\ntoskrnl.exe", 0xFFFFF8025B600000ull, 0x81800000u, 0xA00000u, 0x600000u},
    {"hal.dll", "\\SystemRoot\\system32\\hal.dll", 0xFFFFF8025B560000ull, 0x81780000u, 0x9F000u, 0x70000u},
    {"Ntfs.sys", "\\SystemRoot\\System32\\Drivers\\Ntfs.sys", 0xFFFFF8025E200000ull, 0x8C200000u, 0x2D0000u, 0x1A0000u},
    {"tcpip.sys", "\\SystemRoot\\System32\\drivers\\tcpip.sys", 0xFFFFF8025E600000ull, 0x8C600000u, 0x2A0000u, 0x1C0000u},
};

#define SYS32 "\\Device\\HarddiskVolume2\\Windows\\System32\\"
static const image_desc uimages[UM_COUNT] = {
    [UM_NTDLL] = {"ntdll.dll", SYS32 "ntdll.dll", 0x00007FFB8A5B0000ull, 0x77710000u, 0x1F8000u, 0x19C000u},
    [UM_K32] = {"kernel32.dll", SYS32 "kernel32.dll", 0x00007FFB89F20000ull, 0x76A80000u, 0xBD000u, 0xF0000u},
    [UM_KBASE] = {"KernelBase.dll", SYS32 "KernelBase.dll", 0x00007FFB87D10000ull, 0x75C00000u, 0x2C8000u, 0x214000u},
    [UM_PLUGIN] = {"dbghelp.dll", SYS32 "dbghelp.dll", 0x00007FFB70000000ull, 0x6F000000u, 0x1E4000u, 0x190000u},
};
static const image_desc app_dlls[4] = {
    {"ucrtbase.dll", SYS32 "ucrtbase.dll", 0x00007FFB87A00000ull, 0x75A00000u, 0x100000u, 0x120000u},
    {"user32.dll", SYS32 "user32.dll", 0x00007FFB89000000ull, 0x76200000u, 0x1A0000u, 0x19C000u},
    {"combase.dll", SYS32 "combase.dll", 0x00007FFB88800000ull, 0x76500000u, 0x354000u, 0x27C000u},
    {"ws2_32.dll", SYS32 "ws2_32.dll", 0x00007FFB88400000ull, 0x76900000u, 0x6B000u, 0x60000u},
};

/* A module of --modules: an image with a debug identity, its functions at the RVAs given. */
struct synth_module {
    char name[64], path[320], pdb[260];
    uint64_t base;
    uint32_t size, tds, age;
    etl_guid guid;
    bool logged;            /* false (GUID "none"): no ImageID nor DbgID_RSDS, the binary must say who it is */
    uint32_t rva[48];
    unsigned nrva;
};

typedef struct pstk {
    uint64_t exe_base;
    uint32_t exe_size;
    int32_t thread;       /* its first thread (logs its image loads) */
    bool plugin, jit;     /* loads/unloads dbghelp.dll; runs JIT-compiled code */
    bool plugin_loaded;
    uint64_t plugin_from; /* loaded: the stacks use it from here ... */
    uint64_t plugin_next; /* ... until a margin before this (its unload); unloaded: its next load */
} pstk;

typedef struct tstk {
    uint64_t root;        /* the hash of its start routine */
    uint8_t depth;        /* of its path */
    uint8_t kpath, kvar;  /* KP_*: in the kernel unless KP_USER */
    uint8_t npend;        /* deferred user parts in the pool */
    uint8_t choice[USER_MAX];
} tstk;

typedef struct skey {
    uint64_t hash;
    uint32_t lru;
    uint8_t n;
    bool used;
    uint64_t f[ETL_SYNTH_STACK_MAX];
} skey;

typedef struct cstk {
    int32_t cur;          /* the thread running, as of the last traced switch (-1: idle) */
    skey keys[KEYS];
    uint32_t clock;
    uint8_t toggle;       /* --stack-form both: alternates per walked event */
} cstk;

typedef struct pend {
    bool used;
    uint8_t n;
    uint32_t thread, tid, pid;
    uint64_t ts, seq;
    uint64_t f[USER_MAX + 1];
} pend;

struct synth_stacks {
    synth_rng rng;
    uint64_t iu;          /* the profile interval in session units */
    uint64_t margin;      /* 1 ms: a loaded image is used from its load + margin to its unload - margin */
    uint64_t key_base;
    pstk *pr;
    tstk *th;
    cstk *cpu;
    pend pool[PEND_MAX];
    uint32_t npool;
    uint64_t seq;
    synth_module mods[4];   /* --modules, in place of the app DLL */
    image_desc mdesc[4];
    unsigned nmods;
};

/* ---- addresses -------------------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* The --modules module standing for process proc's app DLL, or NULL. */
static const synth_module *given_module(const synth *s, uint32_t proc)
{
    return s->stk->nmods ? &s->stk->mods[s->pr[proc].tmpl % s->stk->nmods] : NULL;
}

static const image_desc *user_desc(const synth *s, uint32_t proc, unsigned k)
{
    if (k == UM_APP && s->stk->nmods) return &s->stk->mdesc[s->pr[proc].tmpl % s->stk->nmods];
    return k == UM_APP ? &app_dlls[s->pr[proc].tmpl % 4] : &uimages[k];
}

/* Base, size and name of module code m in process proc (false: none). */
static bool module_of(const synth *s, uint32_t proc, unsigned m, uint64_t *base, uint64_t *size,
                      const char **name)
{
    bool b64 = s->ptr == 8;
    if (m < KM_COUNT) {
        *base = b64 ? kimages[m].base64 : kimages[m].base32;
        *size = b64 ? kimages[m].size64 : kimages[m].size32;
        *name = kimages[m].name;
        return true;
    }
    if (m < MOD_USER || m >= MOD_USER + UM_COUNT) return false;
    unsigned k = m - MOD_USER;
    if (k == UM_EXE) {
        *base = s->stk->pr[proc].exe_base;
        *size = s->stk->pr[proc].exe_size;
        *name = synth_image(s, proc);
        return true;
    }
    const image_desc *d = user_desc(s, proc, k);
    *base = b64 ? d->base64 : d->base32;
    *size = b64 ? d->size64 : d->size32;
    *name = d->name;
    return true;
}

/* A return address in function f of module m of proc (site picks the call site). */
static uint64_t code_addr(const synth *s, uint32_t proc, unsigned m, unsigned f, uint64_t site)
{
    uint64_t base, size;
    const char *name;
    if (!module_of(s, proc, m, &base, &size, &name)) { /* JIT: 16-byte slots */
        uint64_t jit = s->ptr == 8 ? 0x000001F4A0000000ull : 0x02A00000u;
        return jit + (site % (JIT_SIZE / 16 - 64)) * 16 + 0x40 + (f & 0xF);
    }
    if (m == MOD_USER + UM_APP && s->stk->nmods) { /* a given module: exactly one of its functions' RVAs */
        const synth_module *g = given_module(s, proc);
        return base + g->rva[(f + site) % g->nrva];
    }
    return base + 0x1000 + (uint64_t)(f % NFUNC) * 0x400 + 0x10 + site % 0x3C0;
}

typedef struct kf {
    uint8_t m, f;
} kf;

/* The kernel part of kernel path kp (variant kv 0..3), innermost first; idle: on an idle thread. */
static uint32_t kernel_frames(const synth *s, unsigned kp, unsigned kv, bool idle, uint64_t *f, uint8_t *m)
{
    kf k[8];
    unsigned n = 0;
    kv &= 3;
    switch (kp) {
    case KP_WAIT: /* KiSwapContext, KiSwapThread, KiCommitThreadWait, Ke*Wait*, Nt*Wait*, KiSystemServiceCopyEnd */
        k[n++] = (kf){KM_NT, 10};
        k[n++] = (kf){KM_NT, 11};
        k[n++] = (kf){KM_NT, 12};
        k[n++] = (kf){KM_NT, (uint8_t)(13 + kv)};
        k[n++] = (kf){KM_NT, (uint8_t)(17 + kv)};
        k[n++] = (kf){KM_NT, 21};
        break;
    case KP_PREEMPT: /* swap, KiDispatchInterrupt, a HAL interrupt, KiDpcInterrupt */
        k[n++] = (kf){KM_NT, 10};
        k[n++] = (kf){KM_NT, 11};
        k[n++] = (kf){KM_NT, 22};
        k[n++] = (kf){KM_HAL, (uint8_t)(2 + kv % 2)};
        k[n++] = (kf){KM_NT, 23};
        break;
    case KP_SYSCALL:
        if (kv == 0) { /* a read in Ntfs */
            k[n++] = (kf){KM_NTFS, 3};
            k[n++] = (kf){KM_NTFS, 4};
            k[n++] = (kf){KM_NT, 24};
        } else if (kv == 1) { /* a socket call in tcpip */
            k[n++] = (kf){KM_TCPIP, 5};
            k[n++] = (kf){KM_TCPIP, 6};
            k[n++] = (kf){KM_NT, 25};
        } else if (kv == 2) { /* a page fault: no system service frame */
            k[n++] = (kf){KM_NT, 26};
            k[n++] = (kf){KM_NT, 27};
            break;
        } else { /* an allocation */
            k[n++] = (kf){KM_NT, 28};
            k[n++] = (kf){KM_NT, 29};
        }
        k[n++] = (kf){KM_NT, 21};
        break;
    case KP_SIGNAL: /* KiExitDispatcher, KeSetEvent, NtSetEvent/NtAlpcSendWaitReceivePort */
        k[n++] = (kf){KM_NT, 30};
        k[n++] = (kf){KM_NT, 31};
        k[n++] = (kf){KM_NT, (uint8_t)(32 + kv % 2)};
        k[n++] = (kf){KM_NT, 21};
        break;
    case KP_DPC: { /* a timer, Ntfs, tcpip or HAL DPC, KiRetireDpcList, then the idle loop or an interrupt */
        static const kf first[4] = {{KM_NT, 33}, {KM_NTFS, 7}, {KM_TCPIP, 8}, {KM_HAL, 4}};
        k[n++] = first[kv];
        k[n++] = (kf){KM_NT, 34};
        k[n++] = (kf){KM_NT, idle ? 35 : 23};
        break;
    }
    case KP_IDLE: /* HalProcessorIdle or PpmIdleExecute, PoIdle, KiIdleLoop */
        k[n++] = kv % 2 ? (kf){KM_HAL, 1} : (kf){KM_NT, 36};
        k[n++] = (kf){KM_NT, 37};
        k[n++] = (kf){KM_NT, 35};
        break;
    default:
        return 0;
    }
    for (unsigned i = 0; i < n; i++) {
        f[i] = code_addr(s, 0, k[i].m, k[i].f, (uint64_t)k[i].f * 0x61 + (i + 1 < n ? k[i + 1].f : 0) * 0x35);
        m[i] = k[i].m;
    }
    return n;
}

/* Whether kernel path kp entered from user mode by a system call (its user part ends in an ntdll stub). */
static bool has_stub(unsigned kp, unsigned kv)
{
    return kp == KP_WAIT || kp == KP_SIGNAL || (kp == KP_SYSCALL && (kv & 3) != 2);
}

static bool plugin_usable(const synth *s, uint32_t proc, uint64_t t)
{
    const pstk *p = &s->stk->pr[proc];
    return p->plugin_loaded && t >= p->plugin_from && t + s->stk->margin < p->plugin_next;
}

/*
 * Thread i's stack at t with kernel path kp/kv on top (i < 0: an idle
 * thread), innermost first into f, module codes into m; *nk gets the length
 * of the kernel part (all of it for System and idle threads).
 */
static uint32_t build(const synth *s, int32_t i, unsigned kp, unsigned kv, uint64_t t, uint64_t *f, uint8_t *m,
                      uint32_t *nk)
{
    uint32_t n = kernel_frames(s, kp, kv, i < 0, f, m);
    *nk = n;
    if (i < 0) return n;
    const sthread *th = &s->th[i];
    const tstk *st = &s->stk->th[i];
    bool sys = th->proc == 1;
    if (!sys && kp != KP_USER && has_stub(kp, kv)) { /* the system service stub in ntdll */
        m[n] = MOD_USER + UM_NTDLL;
        f[n] = code_addr(s, th->proc, MOD_USER + UM_NTDLL, 42 + (kv & 3), kp * 7 + kv);
        n++;
    }
    const pstk *pp = &s->stk->pr[th->proc];
    bool plugin = !sys && plugin_usable(s, th->proc, t);
    uint64_t h[USER_MAX];
    uint8_t hm[USER_MAX];
    uint64_t x = st->root;
    for (unsigned d = 0; d < st->depth; d++) {
        x = mix(x + (uint64_t)(st->choice[d] + 1) * 0xD6E8FEB86659FD93ull);
        h[d] = x;
        unsigned r = (unsigned)(x % 100);
        uint8_t mod;
        if (sys) {
            mod = d < 2 ? KM_NT : r < 50 ? KM_NT : r < 75 ? KM_NTFS : KM_TCPIP;
        } else if (d == 0) {
            mod = MOD_USER + UM_NTDLL; /* RtlUserThreadStart */
        } else if (d == 1) {
            mod = MOD_USER + UM_K32;   /* BaseThreadInitThunk */
        } else {
            mod = pp->jit && r >= 70 ? MOD_NONE /* a JIT process: deep frames are mostly managed code */
                  : r < 40 ? MOD_USER + UM_EXE : r < 52 ? MOD_USER + UM_KBASE : r < 62 ? MOD_USER + UM_NTDLL
                  : r < 77 ? MOD_USER + UM_APP : r < 88 && plugin ? MOD_USER + UM_PLUGIN : MOD_USER + UM_EXE;
        }
        hm[d] = mod;
    }
    for (unsigned d = st->depth; d-- > 0;) {
        unsigned fn = d < 2 ? d : (unsigned)((h[d] >> 8) % NFUNC);
        m[n] = hm[d];
        f[n++] = code_addr(s, th->proc, hm[d], fn, h[d] >> 20);
    }
    if (sys) *nk = n;
    return n;
}

/* Pops a few frames and pushes a few: the thread went on in its code. */
static void evolve(synth_stacks *k, tstk *st)
{
    unsigned pop = 1 + (unsigned)synth_rng_below(&k->rng, 3);
    unsigned d = st->depth > pop + 3 ? st->depth - pop : 3; /* its start routines stay, and one frame of its own */
    unsigned push = (unsigned)synth_rng_below(&k->rng, 4);
    for (unsigned j = 0; j < push && d < USER_MAX; j++) st->choice[d++] = (uint8_t)synth_rng_below(&k->rng, 4);
    st->depth = (uint8_t)d;
}

/* ---- events -------------------------------------------------------------------------- */

static void fail_encode(synth *s, const char *what)
{
    synth_fail(s, ETL_E_RANGE, what);
}

static void write_stackwalk(synth *s, unsigned c, uint64_t ev_ts, uint32_t pid, uint32_t tid, const uint64_t *f,
                            uint32_t n)
{
    uint8_t buf[16 + 8 * ETL_SYNTH_STACK_MAX];
    size_t len;
    etl_stackwalk w;
    memset(&w, 0, sizeof w);
    w.event_timestamp = ev_ts;
    w.stack_process = pid;
    w.stack_thread = tid;
    w.frame_count = n;
    if (etl_stackwalk_encode(&w, f, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding a StackWalk");
        return;
    }
    synth_write(s, c, ETL_WH_PERFINFO, 2, ETL_HOOK_STACKWALK, 0, 0, synth_reserve(s, c, ev_ts + 1), buf, len);
    s->sum.stack_events++;
}

static void write_key_def(synth *s, unsigned c, uint16_t hook, uint64_t key, const uint64_t *f, uint32_t n,
                          uint64_t t)
{
    uint8_t buf[8 + 8 * ETL_SYNTH_STACK_MAX];
    size_t len;
    etl_stack_key_def d;
    memset(&d, 0, sizeof d);
    d.stack_key = key;
    d.frame_count = n;
    if (etl_stack_key_def_encode(&d, f, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding a stack key definition");
        return;
    }
    synth_write(s, c, ETL_WH_PERFINFO, 2, hook, 0, 0, synth_reserve(s, c, t), buf, len);
    s->sum.stack_events++;
}

static uint64_t frames_hash(const uint64_t *f, uint32_t n)
{
    uint64_t h = n;
    for (uint32_t i = 0; i < n; i++) h = mix(h ^ f[i]);
    return h;
}

/* The key of frames in CPU c's cache; a miss evicts (KeyDelete, logged now) the least recently used. */
static uint64_t cache_key(synth *s, unsigned c, const uint64_t *f, uint32_t n, uint64_t t)
{
    cstk *p = &s->stk->cpu[c];
    uint64_t h = frames_hash(f, n);
    unsigned victim = 0;
    uint32_t oldest = UINT32_MAX;
    p->clock++;
    for (unsigned j = 0; j < KEYS; j++) {
        skey *e = &p->keys[j];
        if (!e->used) {
            if (oldest) {
                oldest = 0;
                victim = j;
            }
            continue;
        }
        if (e->hash == h && e->n == n && memcmp(e->f, f, n * sizeof *f) == 0) {
            e->lru = p->clock;
            return s->stk->key_base + ((uint64_t)c * KEYS + j) * 0x1A0;
        }
        if (e->lru < oldest) {
            oldest = e->lru;
            victim = j;
        }
    }
    skey *e = &p->keys[victim];
    uint64_t key = s->stk->key_base + ((uint64_t)c * KEYS + victim) * 0x1A0;
    if (e->used) write_key_def(s, c, ETL_HOOK_STACK_KEY_DELETE, key, e->f, e->n, t);
    e->used = true;
    e->hash = h;
    e->n = (uint8_t)n;
    e->lru = p->clock;
    memcpy(e->f, f, n * sizeof *f);
    return key;
}

static void write_ref(synth *s, unsigned c, uint16_t hook, uint64_t ev_ts, uint32_t pid, uint32_t tid,
                      const uint64_t *f, uint32_t n, uint64_t t)
{
    uint64_t key = cache_key(s, c, f, n, t);
    uint8_t buf[32];
    size_t len;
    etl_stack_key_ref r;
    r.event_timestamp = ev_ts;
    r.stack_process = pid;
    r.stack_thread = tid;
    r.stack_key = key;
    if (etl_stack_key_ref_encode(&r, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding a stack key reference");
        return;
    }
    synth_write(s, c, ETL_WH_PERFINFO, 2, hook, 0, 0, synth_reserve(s, c, t), buf, len);
    s->sum.stack_events++;
}

/* The form of the next walk on CPU c. */
static uint8_t next_form(synth *s, unsigned c)
{
    if (s->o.stack_form != ETL_SYNTH_STACK_BOTH) return (uint8_t)s->o.stack_form;
    cstk *p = &s->stk->cpu[c];
    p->toggle ^= 1;
    return p->toggle ? ETL_SYNTH_STACK_PLAIN : ETL_SYNTH_STACK_CACHED;
}

/* Logs the deferred user parts of thread i on CPU c at t, oldest first. */
static void flush_pending(synth *s, unsigned c, uint32_t i, uint64_t t)
{
    synth_stacks *k = s->stk;
    tstk *st = &k->th[i];
    while (st->npend) {
        pend *best = NULL;
        for (unsigned j = 0; j < PEND_MAX; j++) {
            pend *e = &k->pool[j];
            if (e->used && e->thread == i && (!best || e->seq < best->seq)) best = e;
        }
        if (!best) break;
        write_ref(s, c, ETL_HOOK_STACK_KEY_USER, best->ts, best->pid, best->tid, best->f, best->n, t);
        best->used = false;
        k->npool--;
        st->npend--;
    }
    st->npend = 0;
}

static bool defer(synth *s, uint32_t i, uint64_t ev_ts, uint32_t pid, uint32_t tid, const uint64_t *f, uint32_t n)
{
    synth_stacks *k = s->stk;
    tstk *st = &k->th[i];
    if (st->npend >= PEND_PER_THREAD || k->npool >= PEND_MAX || n > USER_MAX + 1) return false;
    for (unsigned j = 0; j < PEND_MAX; j++) {
        pend *e = &k->pool[j];
        if (e->used) continue;
        e->used = true;
        e->thread = i;
        e->tid = tid;
        e->pid = pid;
        e->ts = ev_ts;
        e->seq = k->seq++;
        e->n = (uint8_t)n;
        memcpy(e->f, f, n * sizeof *f);
        k->npool++;
        st->npend++;
        return true;
    }
    return false;
}

/*
 * The walk of an event at ev_ts on CPU c: f[0..n) with nk kernel frames.
 * may_defer: the user part may wait for the thread's return to user mode.
 */
static void walk(synth *s, unsigned c, uint64_t ev_ts, int32_t i, uint32_t pid, uint32_t tid, const uint64_t *f,
                 uint32_t n, uint32_t nk, uint8_t form, bool may_defer)
{
    if (form == ETL_SYNTH_STACK_PLAIN) {
        write_stackwalk(s, c, ev_ts, pid, tid, f, n);
        return;
    }
    if (nk) write_ref(s, c, ETL_HOOK_STACK_KEY_KERNEL, ev_ts, pid, tid, f, nk, ev_ts + 1);
    if (n == nk) return;
    if (may_defer && nk && i >= 0 && synth_rng_chance(&s->stk->rng, 0.5) &&
        defer(s, (uint32_t)i, ev_ts, pid, tid, f + nk, n - nk))
        return;
    write_ref(s, c, ETL_HOOK_STACK_KEY_USER, ev_ts, pid, tid, f + nk, n - nk, ev_ts + 1);
}

static void stack_truth(synth *s, unsigned c, uint64_t ts, uint16_t hook, uint32_t tid, uint32_t pid,
                        const uint64_t *f, uint32_t n, uint8_t form)
{
    etl_synth_rec r;
    memset(&r, 0, sizeof r);
    r.type = ETL_SYNTH_REC_STACK;
    r.u.stack.time = ts;
    r.u.stack.cpu = (uint16_t)c;
    r.u.stack.hook = hook;
    r.u.stack.tid = tid;
    r.u.stack.pid = pid;
    r.u.stack.stack = f;
    r.u.stack.depth = n;
    r.u.stack.form = form;
    synth_truth(s, &r);
}

/* ---- images ----------------------------------------------------------------------------- */

static uint32_t name_hash(const char *a)
{
    uint32_t h = 2166136261u;
    for (; *a; a++) h = (h ^ (uint8_t)*a) * 16777619u;
    return h;
}

static void image_event(synth *s, unsigned c, uint64_t ts, uint16_t hook, uint32_t pid, uint64_t base,
                        uint64_t size, bool user, const char *name, const char *path, uint32_t htid, uint32_t hpid,
                        uint32_t tds)
{
    uint8_t nb[512], buf[640];
    size_t len;
    uint32_t h = name_hash(name);
    etl_image im;
    memset(&im, 0, sizeof im);
    im.known = ETL_IMG_V2;
    im.image_base = base;
    im.image_size = size;
    im.process_id = pid;
    im.time_date_stamp = tds ? tds : 0x50000000u + h % 0x20000000u;
    im.image_checksum = (uint32_t)size + (h >> 16);
    im.default_base = user ? base : 0;
    im.file_name = synth_u16(path, nb, sizeof nb);
    unsigned version = s->o.os_build >= 10240 ? 3 : 2;
    if (etl_image_encode(&im, version, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding an Image event");
        return;
    }
    bool rundown = hook == ETL_HOOK_IMAGE_DC_START || hook == ETL_HOOK_IMAGE_DC_END;
    synth_write(s, c, rundown ? ETL_WH_PERFINFO : ETL_WH_SYSTEM, (uint8_t)version, hook, rundown ? 0 : htid,
                rundown ? 0 : hpid, ts, buf, len);
    s->sum.image_events++;

    etl_synth_rec r;
    memset(&r, 0, sizeof r);
    r.type = ETL_SYNTH_REC_IMAGE;
    etl_synth_image *q = &r.u.image;
    q->time = ts;
    q->cpu = (uint16_t)c;
    q->event = hook == ETL_HOOK_IMAGE_DC_START ? ETL_SYNTH_LIFE_DC_START
               : hook == ETL_HOOK_IMAGE_DC_END ? ETL_SYNTH_LIFE_DC_END
               : hook == ETL_HOOK_IMAGE_UNLOAD ? ETL_SYNTH_LIFE_END : ETL_SYNTH_LIFE_START;
    q->hook = hook;
    q->pid = pid;
    q->base = base;
    q->size = size;
    q->time_date_stamp = im.time_date_stamp;
    q->checksum = im.image_checksum;
    q->name = name;
    q->path = path;
    synth_truth(s, &r);
}

/*
 * One classic record of the image-identity provider (FULL_HEADER, as
 * KernelTraceControl's merge writes them) with payload p[0..n), on c at t.
 */
static void identity_record(synth *s, unsigned c, uint64_t t, uint8_t opcode, uint32_t pid, const uint8_t *p,
                            size_t n)
{
    uint8_t rec[0x30 + 640];
    size_t size = 0x30 + n;
    if (n > sizeof rec - 0x30) {
        fail_encode(s, "encoding an image identity event");
        return;
    }
    uint64_t ts = synth_reserve(s, c, t);
    memset(rec, 0, 0x30);
    etl_wr_u16(rec, (uint16_t)size);
    rec[2] = s->ptr == 8 ? 0x14 : 0x0A; /* FULL_HEADER64 / FULL_HEADER32 */
    rec[3] = 0xC0;                      /* TRACE_HEADER_FLAG | TRACE_HEADER_EVENT_TRACE */
    rec[4] = opcode;
    etl_wr_u16(rec + 6, 2);
    etl_wr_u32(rec + 8, UINT32_MAX);
    etl_wr_u32(rec + 12, pid);
    etl_wr_u64(rec + 16, ts);
    etl_wr_guid(rec + 0x18, etl_image_id_guid());
    memcpy(rec + 0x30, p, n);
    synth_write(s, c, SYNTH_RAW_RECORD, 0, 0, 0, 0, ts, rec, size);
}

/* ImageID and DbgID_RSDS for a --modules module loaded (or rundown) in process pid. */
static void identity_events(synth *s, unsigned c, uint64_t t, uint32_t pid, const synth_module *g)
{
    uint8_t nb[160], buf[600];
    size_t len;
    etl_image_id id;
    memset(&id, 0, sizeof id);
    id.image_base = g->base;
    id.image_size = g->size;
    id.process_id = pid;
    id.time_date_stamp = g->tds;
    id.original_file_name = synth_u16(g->name, nb, sizeof nb);
    if (etl_image_id_encode(&id, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding an ImageID event");
        return;
    }
    identity_record(s, c, t, ETL_IMAGE_ID_INFO, pid, buf, len);
    etl_image_dbgid d;
    memset(&d, 0, sizeof d);
    d.image_base = g->base;
    d.process_id = pid;
    d.has_rsds = true;
    d.guid_sig = g->guid;
    d.age = g->age;
    d.pdb_file_name = (etl_kstr){{(const uint8_t *)g->pdb, strlen(g->pdb)}, true};
    if (etl_image_dbgid_encode(&d, ETL_IMAGE_ID_DBGID_RSDS, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding a DbgID_RSDS event");
        return;
    }
    identity_record(s, c, t, ETL_IMAGE_ID_DBGID_RSDS, pid, buf, len);
}

/* Image k (UM_*) of process proc: an event on c at t (reserved here). */
static void user_image(synth *s, unsigned c, uint64_t t, uint16_t hook, uint32_t proc, unsigned k, uint32_t htid,
                       uint32_t hpid)
{
    uint64_t base = 0, size = 0; /* module_of sets them; said for the cross compiler's flow analysis */
    const char *name = "";
    char path[256];
    module_of(s, proc, MOD_USER + k, &base, &size, &name);
    if (k == UM_EXE) {
        const char *dir = synth_templates[s->pr[proc].tmpl].session == 0
                              ? SYS32 : "\\Device\\HarddiskVolume2\\Program Files\\Apps\\";
        snprintf(path, sizeof path, "%s%s", dir, name);
    } else {
        snprintf(path, sizeof path, "%s", user_desc(s, proc, k)->path);
    }
    const synth_module *g = k == UM_APP ? given_module(s, proc) : NULL;
    image_event(s, c, synth_reserve(s, c, t), hook, s->pr[proc].pid, base, size, true, name, path, htid, hpid,
                g ? g->tds : 0);
    if (g && g->logged && hook != ETL_HOOK_IMAGE_UNLOAD) identity_events(s, c, t, s->pr[proc].pid, g);
}

void synth_stacks_rundown(synth *s, uint32_t proc, uint64_t t, bool end)
{
    uint16_t hook = end ? ETL_HOOK_IMAGE_DC_END : ETL_HOOK_IMAGE_DC_START;
    if (proc == 0) {
        for (unsigned m = 0; m < KM_COUNT; m++) {
            uint64_t base, size;
            const char *name;
            module_of(s, 0, m, &base, &size, &name);
            image_event(s, 0, synth_reserve(s, 0, t), hook, 0, base, size, false, name, kimages[m].path, 0, 0, 0);
        }
        return;
    }
    if (proc == 1) return; /* System: the kernel's images */
    for (unsigned k = 0; k < UM_COUNT; k++)
        if (k != UM_PLUGIN || s->stk->pr[proc].plugin_loaded) user_image(s, 0, t, hook, proc, k, 0, 0);
}

void synth_stacks_process_start(synth *s, unsigned c, uint64_t t, uint32_t proc, uint32_t thread)
{
    const sthread *th = &s->th[thread];
    for (unsigned k = 0; k < UM_COUNT; k++)
        if (k != UM_PLUGIN)
            user_image(s, c, t, ETL_HOOK_PROCESS_LOAD_IMAGE, proc, k, th->tid, s->pr[th->proc].pid);
}

void synth_stacks_process_end(synth *s, unsigned c, uint64_t t, uint32_t proc, uint32_t thread)
{
    const sthread *th = &s->th[thread];
    for (unsigned k = UM_COUNT; k-- > 0;)
        if (k != UM_PLUGIN || s->stk->pr[proc].plugin_loaded)
            user_image(s, c, t, ETL_HOOK_IMAGE_UNLOAD, proc, k, th->tid, s->pr[proc].pid);
    s->stk->pr[proc].plugin_loaded = false;
}

/* dbghelp.dll comes and goes: loaded 50 ms in every 100 ms, at the same base each time. */
static void plugin_events(synth *s, uint64_t t)
{
    synth_stacks *k = s->stk;
    uint64_t next = UINT64_MAX, half = k->margin * 50;
    for (uint32_t p = 2; p < s->pr_used; p++) {
        pstk *pp = &k->pr[p];
        if (!pp->plugin || !s->pr[p].alive || pp->thread < 0) continue;
        if (pp->plugin_next <= t) {
            /* Logged by a thread of the process: one running now, else its first thread on its last CPU. */
            const sthread *th = &s->th[pp->thread];
            unsigned c = th->last_cpu;
            for (unsigned q = 0; q < s->ncpu; q++) {
                int32_t cur = s->cpu[q].cur;
                if (cur >= 0 && s->th[cur].proc == p) {
                    th = &s->th[cur];
                    c = q;
                    break;
                }
            }
            uint64_t ts = synth_reserve(s, c, t);
            uint16_t hook = pp->plugin_loaded ? ETL_HOOK_IMAGE_UNLOAD : ETL_HOOK_PROCESS_LOAD_IMAGE;
            user_image(s, c, ts, hook, p, UM_PLUGIN, th->tid, s->pr[p].pid);
            pp->plugin_loaded = !pp->plugin_loaded;
            pp->plugin_from = ts + k->margin;
            pp->plugin_next = t + half;
        }
        if (pp->plugin_next < next) next = pp->plugin_next;
    }
    if (next != UINT64_MAX) synth_hset(s, s->slot_image, next);
}

/* ---- samples and walks --------------------------------------------------------------------- */

static void sample(synth *s, unsigned c, uint64_t t)
{
    synth_stacks *k = s->stk;
    int32_t cur = s->cpu[c].cur;
    unsigned kp = KP_IDLE, kv = (unsigned)synth_rng_below(&k->rng, 4);
    uint32_t tid = 0, pid = 0;
    uint8_t prio = 0;
    if (cur >= 0) {
        sthread *th = &s->th[cur];
        tstk *st = &k->th[cur];
        tid = th->tid;
        pid = s->pr[th->proc].pid;
        prio = (uint8_t)th->prio;
        if (st->kpath != KP_USER) {
            if (synth_rng_chance(&k->rng, 0.6)) { /* back in user mode: the deferred parts first */
                if (st->npend) flush_pending(s, c, (uint32_t)cur, t);
                st->kpath = KP_USER;
            }
        } else if (th->proc != 1 && synth_rng_chance(&k->rng, 0.15)) {
            st->kpath = KP_SYSCALL;
            st->kvar = (uint8_t)kv;
        } else if (synth_rng_chance(&k->rng, 0.3)) {
            evolve(k, st);
        }
        kp = st->kpath;
        kv = st->kvar;
    }
    uint64_t f[ETL_SYNTH_STACK_MAX];
    uint8_t m[ETL_SYNTH_STACK_MAX];
    uint32_t nk;
    uint64_t ts = synth_reserve(s, c, t);
    uint32_t n = build(s, cur, kp, kv, ts, f, m, &nk);
    uint64_t move = synth_rng_below(&k->rng, 0x3E0);
    /* the IP moves within its function; a --modules module's stays on the RVAs given (functions of known extent) */
    if (!(k->nmods && n && m[0] == MOD_USER + UM_APP)) f[0] = (f[0] & ~(uint64_t)0x3FF) + 0x10 + move;
    bool walked = !synth_rng_chance(&k->rng, 1.0 / 32);                        /* a walk now and then fails */

    uint8_t buf[24];
    size_t len;
    etl_sampled_profile sp;
    memset(&sp, 0, sizeof sp);
    sp.instruction_pointer = f[0];
    sp.thread_id = tid;
    sp.count = 1;
    sp.flags = (uint8_t)(prio << 3);
    if (etl_sampled_profile_encode(&sp, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding a SampledProfile");
        return;
    }
    synth_write(s, c, ETL_WH_PERFINFO, 2, ETL_HOOK_SAMPLED_PROFILE, 0, 0, ts, buf, len);
    s->sum.samples++;
    uint8_t form = walked ? next_form(s, c) : 0;
    if (walked) walk(s, c, ts, cur, pid, tid, f, n, nk, form, cur >= 0 && kp != KP_USER);

    etl_synth_rec r;
    memset(&r, 0, sizeof r);
    r.type = ETL_SYNTH_REC_SAMPLE;
    etl_synth_sample *q = &r.u.sample;
    q->time = ts;
    q->cpu = (uint16_t)c;
    q->tid = tid;
    q->pid = pid;
    q->ip = f[0];
    q->count = 1;
    uint64_t base, size;
    const char *name;
    if (module_of(s, cur >= 0 ? s->th[cur].proc : 0, m[0], &base, &size, &name)) {
        q->module = name;
        q->offset = f[0] - base;
    }
    q->stack = f;
    q->depth = walked ? n : 0;
    q->form = form;
    synth_truth(s, &r);
}

void synth_stacks_on_slot(synth *s, uint32_t slot, uint64_t t)
{
    if (slot == s->slot_image) {
        plugin_events(s, t);
        return;
    }
    unsigned c = slot - s->slot_prof0;
    synth_hset(s, slot, t + s->stk->iu);
    if (s->tracing) sample(s, c, t);
}

/* The walk of a CSwitch: the new thread's stack (where it left off), or the idle loop. */
static void cswitch_walk(synth *s, unsigned c, uint64_t ts, int32_t nxt)
{
    uint64_t f[ETL_SYNTH_STACK_MAX];
    uint8_t m[ETL_SYNTH_STACK_MAX];
    uint32_t nk, n, tid = 0, pid = 0;
    if (nxt >= 0) {
        const tstk *st = &s->stk->th[nxt];
        n = build(s, nxt, st->kpath, st->kvar, ts, f, m, &nk);
        tid = s->th[nxt].tid;
        pid = s->pr[s->th[nxt].proc].pid;
    } else {
        n = build(s, -1, KP_IDLE, (unsigned)synth_rng_below(&s->stk->rng, 4), ts, f, m, &nk);
    }
    uint8_t form = next_form(s, c);
    walk(s, c, ts, nxt, pid, tid, f, n, nk, form, nxt >= 0);
    stack_truth(s, c, ts, ETL_HOOK_CSWITCH, tid, pid, f, n, form);
}

void synth_stacks_switch(synth *s, unsigned c, uint64_t ts, uint8_t why)
{
    synth_stacks *k = s->stk;
    int32_t old = k->cpu[c].cur, nxt = s->cpu[c].cur; /* (so that do_switch keeps no more registers) */
    k->cpu[c].cur = nxt;
    if (s->full) cswitch_walk(s, c, ts, nxt);
    if (old < 0) return;
    tstk *st = &k->th[old];
    if (st->npend) flush_pending(s, c, (uint32_t)old, ts + 1); /* it ran in user mode since */
    if (synth_rng_chance(&k->rng, 0.5)) evolve(k, st);
    st->kpath = why == ETL_SYNTH_WHY_PREEMPT || why == ETL_SYNTH_WHY_QUANTUM ? KP_PREEMPT : KP_WAIT;
    st->kvar = (uint8_t)synth_rng_below(&k->rng, 4);
}

void synth_stacks_ready(synth *s, unsigned c, uint64_t ts, uint8_t flags)
{
    uint64_t f[ETL_SYNTH_STACK_MAX];
    uint8_t m[ETL_SYNTH_STACK_MAX];
    uint32_t nk, n, tid = 0, pid = 0;
    int32_t cur = s->cpu[c].cur;
    unsigned kv = (unsigned)synth_rng_below(&s->stk->rng, 4);
    if (cur >= 0) {
        tid = s->th[cur].tid;
        pid = s->pr[s->th[cur].proc].pid;
    }
    if (cur < 0 || (flags & ETL_READY_EXECUTING_DPC)) { /* a DPC: kernel frames only */
        n = kernel_frames(s, KP_DPC, kv, cur < 0, f, m);
        nk = n;
    } else {
        n = build(s, cur, KP_SIGNAL, kv, ts, f, m, &nk);
    }
    uint8_t form = next_form(s, c);
    walk(s, c, ts, cur, pid, tid, f, n, nk, form, false);
    stack_truth(s, c, ts, ETL_HOOK_READY_THREAD, tid, pid, f, n, form);
}

void synth_stacks_exit(synth *s, unsigned c, uint64_t t, uint32_t i)
{
    if (s->stk->th[i].npend) flush_pending(s, c, i, t);
}

/* ---- set-up, start, finish ------------------------------------------------------------------ */

void synth_stacks_process_new(synth *s, uint32_t proc)
{
    synth_stacks *k = s->stk;
    pstk *p = &k->pr[proc];
    const sproc *sp = &s->pr[proc];
    memset(p, 0, sizeof *p);
    p->thread = -1;
    uint64_t h = mix(sp->pid * 0x9E37ull + sp->tmpl);
    p->exe_size = 0x80000u + (sp->tmpl % 8) * 0x20000u;
    p->exe_base = s->ptr == 8 ? 0x00007FF600000000ull + ((h & 0xFFFF) << 16) : 0x00400000u;
    /* Long-lived processes only: a few load and unload a DLL, a few run JIT code. */
    p->plugin = !sp->dynamic && proc % 3 == 2;
    p->jit = !sp->dynamic && proc % 4 == 2;
}

void synth_stacks_thread_new(synth *s, uint32_t thread)
{
    synth_stacks *k = s->stk;
    const sthread *th = &s->th[thread];
    tstk *st = &k->th[thread];
    memset(st, 0, sizeof *st);
    pstk *p = &k->pr[th->proc];
    if (p->thread < 0) p->thread = (int32_t)thread;
    st->root = mix(((uint64_t)s->pr[th->proc].tmpl << 8) + th->profile + 1);
    st->depth = (uint8_t)((th->proc == 1 ? 2 : 3) + synth_rng_below(&k->rng, 8));
    for (unsigned d = 0; d < st->depth; d++) st->choice[d] = (uint8_t)synth_rng_below(&k->rng, 4);
    st->kpath = KP_WAIT; /* made waiting (or to be readied) */
    st->kvar = (uint8_t)synth_rng_below(&k->rng, 4);
}

/* A number of --modules: decimal or 0x hex, at most max. */
static bool num_field(const char *a, size_t n, uint64_t max, uint64_t *out)
{
    char b[32];
    if (!n || n >= sizeof b) return false;
    memcpy(b, a, n);
    b[n] = 0;
    char *end;
    unsigned long long v = strtoull(b, &end, 0);
    if (*end || b[0] == '-' || v > max) return false;
    *out = v;
    return true;
}

static bool guid_field(const char *a, size_t n, etl_guid *g)
{
    static const unsigned dash[4] = {8, 13, 18, 23};
    uint8_t b[16];
    unsigned k = 0;
    if (n != 36) return false;
    for (size_t i = 0; i < n; i++) {
        if (k < 4 && i == dash[k]) {
            if (a[i] != '-') return false;
            k++;
            continue;
        }
        int c = a[i], v = c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
        if (v < 0) return false;
        size_t j = (i - k) / 2;
        b[j] = (uint8_t)((i - k) % 2 ? (b[j] | v) : v << 4);
    }
    g->data1 = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
    g->data2 = (uint16_t)(b[4] << 8 | b[5]);
    g->data3 = (uint16_t)(b[6] << 8 | b[7]);
    memcpy(g->data4, b + 8, 8);
    return true;
}

etl_status synth_modules_parse(const char *spec, synth_module *out, unsigned *nout, char *err, size_t cap)
{
    synth_module tmp;
    unsigned n = 0;
    for (const char *p = spec; *p;) {
        size_t len = strcspn(p, ";");
        if (n == 4) {
            snprintf(err, cap, "at most 4 modules");
            return ETL_E_INVALID_ARG;
        }
        synth_module *m = out ? &out[n] : &tmp;
        memset(m, 0, sizeof *m);
        const char *q = p, *e = p + len;
        unsigned field = 0;
        while (q <= e) {
            const char *c = memchr(q, ',', (size_t)(e - q));
            if (!c) c = e;
            size_t k = (size_t)(c - q);
            uint64_t v = 0;
            bool ok = true;
            switch (field) {
            case 0:
                ok = k && k < 60 && !memchr(q, '\\', k) && !memchr(q, '/', k);
                if (ok) {
                    memcpy(m->name, q, k);
                    snprintf(m->path, sizeof m->path, "\\Device\\HarddiskVolume2\\Program Files\\Apps\\%s", m->name);
                }
                break;
            case 1: ok = num_field(q, k, UINT64_MAX, &v) && v && !(v & 0xFFFF); m->base = v; break;
            case 2: ok = num_field(q, k, 0x7FFFFFFF, &v) && v >= 0x1000; m->size = (uint32_t)v; break;
            case 3: ok = num_field(q, k, UINT32_MAX, &v) && v; m->tds = (uint32_t)v; break;
            case 4: ok = (k == 4 && !memcmp(q, "none", 4)) || guid_field(q, k, &m->guid); m->logged = k != 4; break;
            case 5: ok = num_field(q, k, UINT32_MAX, &v); m->age = (uint32_t)v; break;
            case 6:
                ok = k && k < sizeof m->pdb;
                if (ok) memcpy(m->pdb, q, k);
                break;
            default:
                ok = m->nrva < sizeof m->rva / sizeof m->rva[0] && num_field(q, k, m->size - 1, &v) && v >= 0x1000;
                if (ok) m->rva[m->nrva++] = (uint32_t)v;
            }
            if (!ok) {
                static const char *const what[] = {"NAME (a file name)", "BASE (64 KiB aligned)", "SIZE (at least 0x1000)",
                                                   "TIMESTAMP (not 0)", "GUID (or none)", "AGE", "PDB", "RVA (0x1000 .. SIZE-1, at most 48)"};
                snprintf(err, cap, "module %u: field %u is not a %s", n + 1, field + 1, what[field < 7 ? field : 7]);
                return ETL_E_INVALID_ARG;
            }
            field++;
            q = c + 1;
        }
        if (field < 8) {
            snprintf(err, cap, "module %u: NAME,BASE,SIZE,TIMESTAMP,GUID,AGE,PDB,RVA[,RVA...] needs at least one RVA",
                     n + 1);
            return ETL_E_INVALID_ARG;
        }
        n++;
        p += len;
        if (*p) p++;
    }
    if (nout) *nout = n;
    return ETL_OK;
}

etl_status synth_stacks_init(synth *s)
{
    synth_stacks *k = calloc(1, sizeof *k);
    if (!k) return ETL_E_NOMEM;
    s->stk = k;
    k->pr = calloc(s->pr_cap, sizeof *k->pr);
    k->th = calloc(s->th_cap, sizeof *k->th);
    k->cpu = calloc(s->ncpu, sizeof *k->cpu);
    if (!k->pr || !k->th || !k->cpu) return ETL_E_NOMEM;
    synth_rng_seed(&k->rng, s->o.seed ^ 0x737461636B73ull); /* "stacks": a stream of its own */
    k->iu = (uint64_t)s->o.profile_interval * s->ups / 10000000u;
    if (!k->iu) k->iu = 1;
    k->margin = s->ups / 1000 ? s->ups / 1000 : 1;
    k->key_base = s->ptr == 8 ? 0xFFFFFA8303400000ull : 0x86400000u;
    if (s->o.modules) {
        char err[200];
        etl_status st = synth_modules_parse(s->o.modules, k->mods, &k->nmods, err, sizeof err);
        if (st != ETL_OK) return st;
        for (unsigned i = 0; i < k->nmods; i++) {
            const synth_module *g = &k->mods[i];
            /* user space of the trace's pointer size, clear of the system DLLs' and the JIT region's */
            if (s->ptr == 4 ? g->base + g->size > 0x70000000u : g->base + g->size > 0x00007FF000000000ull)
                return ETL_E_RANGE;
            k->mdesc[i] = (image_desc){g->name, g->path, g->base, (uint32_t)g->base, g->size, g->size};
        }
    }
    return ETL_OK;
}

void synth_stacks_free(synth *s)
{
    if (!s->stk) return;
    free(s->stk->pr);
    free(s->stk->th);
    free(s->stk->cpu);
    free(s->stk);
    s->stk = NULL;
}

static void interval_event(synth *s, uint64_t t, uint16_t hook)
{
    uint8_t nb[16], buf[64];
    size_t len;
    etl_profile_interval pi;
    memset(&pi, 0, sizeof pi);
    pi.source = 0;
    pi.new_interval = pi.old_interval = s->o.profile_interval;
    pi.has_name = true;
    pi.source_name = synth_u16("Timer", nb, sizeof nb);
    if (etl_profile_interval_encode(&pi, buf, sizeof buf, &len) != ETL_OK) {
        fail_encode(s, "encoding a profile interval");
        return;
    }
    synth_write(s, 0, ETL_WH_SYSTEM, 3, hook, 0, 0, synth_reserve(s, 0, t), buf, len);
}

void synth_stacks_start(synth *s, uint64_t t)
{
    synth_stacks *k = s->stk;
    interval_event(s, t, ETL_HOOK_PROFILE_COLLECTION_START);
    for (unsigned c = 0; c < s->ncpu; c++) k->cpu[c].cur = s->cpu[c].cur;
    /* The timers fire together on every CPU, from after the rundown (its images are known by then). */
    uint64_t first = s->cpu[0].next_free > t ? s->cpu[0].next_free : t;
    for (unsigned c = 0; c < s->ncpu; c++) synth_hset(s, s->slot_prof0 + c, first + k->iu + c);
    uint64_t next = UINT64_MAX;
    unsigned n = 0;
    for (uint32_t p = 2; p < s->pr_used; p++) {
        pstk *pp = &k->pr[p];
        if (!pp->plugin || !s->pr[p].alive) continue;
        pp->plugin_loaded = false;
        pp->plugin_next = t + k->margin * (20 + 7 * (n++ % 8));
        if (pp->plugin_next < next) next = pp->plugin_next;
    }
    if (next != UINT64_MAX) synth_hset(s, s->slot_image, next);
}

void synth_stacks_finish(synth *s, uint64_t e)
{
    synth_stacks *k = s->stk;
    /* The deferred parts still waiting: logged at the end, where their threads are (or were last). */
    while (k->npool) {
        const pend *best = NULL;
        for (unsigned j = 0; j < PEND_MAX; j++)
            if (k->pool[j].used && (!best || k->pool[j].seq < best->seq)) best = &k->pool[j];
        if (!best) break;
        uint32_t i = best->thread;
        const sthread *th = &s->th[i];
        unsigned c = th->state == TS_RUN ? th->cpu : th->last_cpu;
        flush_pending(s, c, i, e);
    }
    interval_event(s, e, ETL_HOOK_PROFILE_COLLECTION_END);
    for (unsigned c = 0; c < s->ncpu && !s->err; c++)
        for (unsigned j = 0; j < KEYS; j++) {
            const skey *x = &k->cpu[c].keys[j];
            if (x->used)
                write_key_def(s, c, ETL_HOOK_STACK_KEY_RUNDOWN, k->key_base + ((uint64_t)c * KEYS + j) * 0x1A0, x->f,
                              x->n, e);
        }
}

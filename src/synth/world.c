/*
 * world.c - what the simulated machine runs: behaviour profiles (burst
 * lengths, what a thread waits for and who wakes it), process templates
 * (image, command line, session, SID, priority class, thread mix), thread
 * names, and the made-up but plausible addresses and SIDs of Process and
 * Thread events. Everything random comes from the run's PRNG.
 */
#include <stdio.h>
#include <string.h>
#include "synth_internal.h"

/* Same doubles on every compiler and target: no fused multiply-add (GCC in ISO C mode never fuses). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

/* ---- thread names ------------------------------------------------------------- */

static const char *const names_ui[] = {"CrBrowserMain", "DWM Master Input Thread", "MainThread",
                                       "UIThread", "Rendering Output Thread"};
static const char *const names_worker[] = {"ThreadPoolForegroundWorker",
                                           "ThreadPoolBackgroundWorker", ".NET ThreadPool Worker",
                                           "TppWorkerThread", "ThreadPoolServiceThread"};
static const char *const names_compute[] = {"CompositorTileWorker1", "RenderWorker",
                                            "CompilerThread", "ParallelWorker"};
static const char *const names_io[] = {"Chrome_IOThread", "IoCompletionThread", "FileWatcher"};
static const char *const names_timer[] = {".NET Timer", "TimerQueueThread", "Heartbeat"};
static const char *const names_lpc[] = {"RPC Listener", "AlpcServerThread", "LsaRpcServer"};
static const char *const names_locky[] = {"SQL Worker", "LockManager", "PoolWorker"};
static const char *const names_audio[] = {"MMCSS Audio", "AudioEngine", "AudioSrv RT"};
static const char *const names_bg[] = {"Indexer", ".NET BGC", "Prefetcher"};

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- profiles ------------------------------------------------------------------ */

const synth_profile synth_profiles[PF_COUNT] = {
    [PF_KWORKER] = {"kworker", 15, 1.0, 5000, 0.05, 0, false,
                    {{WR_WR_QUEUE, WK_THREAD, 45}, {WR_WR_QUEUE, WK_IO, 15},
                     {WR_EXECUTIVE, WK_IO, 20}, {WR_WR_RESOURCE, WK_THREAD, 10},
                     {WR_WR_PUSH_LOCK, WK_THREAD, 10}},
                    NULL, 0, 0, 1},
    [PF_KRT] = {"krt", 10, 0.8, 2000, 0, 0, false,
                {{WR_EXECUTIVE, WK_THREAD, 50}, {WR_WR_QUEUE, WK_THREAD, 30},
                 {WR_DELAY_EXECUTION, WK_TIMER, 20}},
                NULL, 0, 0, 2},
    [PF_ZERO] = {"zero", 500, 0.5, 20000, 0.3, 0, false, {{WR_EXECUTIVE, WK_THREAD, 100}}, NULL,
                 0, 0, 50},
    [PF_UI] = {"ui", 60, 1.2, 30000, 0.1, 0.05, false,
               {{WR_WR_USER_REQUEST, WK_THREAD, 65}, {WR_USER_REQUEST, WK_THREAD, 10},
                {WR_WR_ALERT_BY_THREAD_ID, WK_THREAD, 15}, {WR_DELAY_EXECUTION, WK_TIMER, 10}},
               names_ui, N(names_ui), 0.7, 1},
    [PF_WORKER] = {"worker", 80, 1.3, 50000, 0.1, 0.05, false,
                   {{WR_WR_QUEUE, WK_THREAD, 35}, {WR_WR_QUEUE, WK_IO, 20},
                    {WR_USER_REQUEST, WK_THREAD, 15}, {WR_WR_ALERT_BY_THREAD_ID, WK_THREAD, 15},
                    {WR_WR_PUSH_LOCK, WK_THREAD, 10}, {WR_EXECUTIVE, WK_IO, 5}},
                   names_worker, N(names_worker), 0.6, 1},
    [PF_COMPUTE] = {"compute", 8000, 1.0, 400000, 0.7, 0.01, false,
                    {{WR_USER_REQUEST, WK_THREAD, 45}, {WR_WR_ALERT_BY_THREAD_ID, WK_THREAD, 35},
                     {WR_PAGE_IN, WK_IO, 20}},
                    names_compute, N(names_compute), 0.5, 20},
    [PF_IO] = {"io", 30, 1.0, 10000, 0.05, 0.02, false,
               {{WR_EXECUTIVE, WK_IO, 50}, {WR_USER_REQUEST, WK_IO, 30}, {WR_PAGE_IN, WK_IO, 20}},
               names_io, N(names_io), 0.4, 1},
    [PF_TIMER] = {"timer", 25, 0.8, 5000, 0.02, 0.05, false,
                  {{WR_DELAY_EXECUTION, WK_TIMER, 85}, {WR_USER_REQUEST, WK_THREAD, 15}},
                  names_timer, N(names_timer), 0.5, 1},
    [PF_LPCSRV] = {"lpcsrv", 40, 1.0, 10000, 0.05, 0, true,
                   {{WR_WR_LPC_RECEIVE, WK_LPC_RECV, 75}, {WR_EXECUTIVE, WK_IO, 15},
                    {WR_WR_ALERT_BY_THREAD_ID, WK_THREAD, 10}},
                   names_lpc, N(names_lpc), 0.5, 1},
    [PF_LOCKY] = {"locky", 30, 1.2, 20000, 0.2, 0.02, false,
                  {{WR_WR_PUSH_LOCK, WK_THREAD, 25}, {WR_WR_RESOURCE, WK_THREAD, 15},
                   {WR_WR_ALERT_BY_THREAD_ID, WK_THREAD, 25}, {WR_WR_FAST_MUTEX, WK_THREAD, 5},
                   {WR_USER_REQUEST, WK_THREAD, 30}},
                  names_locky, N(names_locky), 0.5, 0.5},
    [PF_AUDIO] = {"audio", 300, 0.4, 3000, 0, 0, false, {{WR_USER_REQUEST, WK_PERIODIC, 100}},
                  names_audio, N(names_audio), 0.9, 1},
    [PF_BACKGROUND] = {"background", 10000, 0.8, 300000, 0.5, 0, false,
                       {{WR_DELAY_EXECUTION, WK_TIMER, 50}, {WR_USER_REQUEST, WK_THREAD, 30},
                        {WR_PAGE_IN, WK_IO, 20}},
                       names_bg, N(names_bg), 0.5, 20},
};

#define AUDIO_PERIOD_US 10000.0
#define LPC_WAIT_US 2000.0 /* what a server's WrLpcReceive counts as, for the load estimate */

/* Mean of a lognormal with this median and sigma. */
static double ln_mean(double median, double sigma)
{
    return median * synth_exp(sigma * sigma / 2);
}

double synth_profile_busy_us(unsigned profile)
{
    const synth_profile *pf = &synth_profiles[profile];
    double b = ln_mean(pf->burst_us, pf->burst_sigma);
    if (b > pf->burst_max_us) b = pf->burst_max_us;
    return b / (1 - pf->p_continue);
}

void synth_profile_wait_us(unsigned profile, double tick_us, double *scaled, double *fixed)
{
    const synth_profile *pf = &synth_profiles[profile];
    double total = 0, sc = 0, fx = 0;
    for (unsigned k = 0; k < 6 && pf->waits[k].weight; k++) total += pf->waits[k].weight;
    for (unsigned k = 0; k < 6 && pf->waits[k].weight; k++) {
        const synth_wait_choice *w = &pf->waits[k];
        double share = w->weight / total;
        const synth_wait_param *wp = synth_wait_param_of(w->reason, w->kind);
        switch (w->kind) {
        case WK_TIMER: fx += share * (synth_sleep_mean_us() + tick_us / 2); break;
        case WK_PERIODIC: fx += share * AUDIO_PERIOD_US; break;
        case WK_LPC_RECV: sc += share * LPC_WAIT_US * pf->wait_scale; break;
        default: sc += share * ln_mean(wp->med_us, wp->sigma) * pf->wait_scale; break;
        }
    }
    *scaled = sc;
    *fixed = fx;
}

/* ---- waits ------------------------------------------------------------------------ */

/*
 * Wait lengths and the ReadyThread adjustment that ends them. AdjustReason 1
 * (unwait increment, decays one level per quantum end), 2 (a boost removed
 * whole at quantum end; used for lock hand-over), 0 (none: new threads).
 */
const synth_wait_param *synth_wait_param_of(unsigned reason, unsigned kind)
{
    static const synth_wait_param timer = {0, 0, 1, 1, 0};
    static const synth_wait_param exec_io = {250, 1.2, 0, 1, 1};
    static const synth_wait_param exec_thread = {60, 1.2, 0, 1, 1};
    static const synth_wait_param page_in = {150, 1.0, 0, 1, 1};
    static const synth_wait_param user_thread = {1500, 1.5, 1, 1, 1};
    static const synth_wait_param user_io = {400, 1.2, 1, 1, 2};
    static const synth_wait_param user_periodic = {0, 0, 1, 1, 1};
    static const synth_wait_param wr_user = {6000, 1.5, 1, 1, 2};
    static const synth_wait_param queue_thread = {800, 1.5, 0, 1, 1};
    static const synth_wait_param queue_io = {500, 1.3, 0, 1, 1};
    static const synth_wait_param lpc = {0, 0, 1, 1, 1};
    static const synth_wait_param resource = {40, 1.2, 0, 2, 1};
    static const synth_wait_param push_lock = {15, 1.0, 0, 2, 1};
    static const synth_wait_param alert = {120, 1.5, 1, 1, 1};
    switch (reason) {
    case WR_EXECUTIVE: return kind == WK_IO ? &exec_io : &exec_thread;
    case WR_PAGE_IN: return &page_in;
    case WR_DELAY_EXECUTION: return &timer;
    case WR_USER_REQUEST:
        return kind == WK_IO ? &user_io : kind == WK_PERIODIC ? &user_periodic : &user_thread;
    case WR_WR_USER_REQUEST: return &wr_user;
    case WR_WR_QUEUE: return kind == WK_IO ? &queue_io : &queue_thread;
    case WR_WR_LPC_RECEIVE:
    case WR_WR_LPC_REPLY: return &lpc;
    case WR_WR_RESOURCE: return &resource;
    case WR_WR_PUSH_LOCK:
    case WR_WR_FAST_MUTEX: return &push_lock;
    case WR_WR_ALERT_BY_THREAD_ID: return &alert;
    }
    return &exec_thread;
}

static const struct {
    uint32_t us;
    uint32_t weight;
} sleeps[] = {{1000, 35}, {5000, 10}, {10000, 15}, {16000, 10}, {50000, 10},
              {100000, 12}, {500000, 5}, {1000000, 3}};

double synth_sleep_us(synth_rng *r)
{
    uint64_t x = synth_rng_below(r, 100);
    for (size_t i = 0; i < N(sleeps); i++) {
        if (x < sleeps[i].weight) return sleeps[i].us;
        x -= sleeps[i].weight;
    }
    return 1000;
}

double synth_sleep_mean_us(void)
{
    double m = 0;
    for (size_t i = 0; i < N(sleeps); i++) m += sleeps[i].us * (sleeps[i].weight / 100.0);
    return m;
}

/* ---- processes ------------------------------------------------------------------- */

const synth_proc_template synth_templates[] = {
    [TPL_SYSTEM] = {"System", "", 0, SID_SYSTEM, 8, false,
                    {{PF_KWORKER, 90}, {PF_KRT, 10}}},
    /* 1 */ {"smss.exe", "\\SystemRoot\\System32\\smss.exe", 0, SID_SYSTEM, 11, false,
             {{PF_LPCSRV, 50}, {PF_TIMER, 50}}},
    /* 2 */ {"csrss.exe",
             "%SystemRoot%\\system32\\csrss.exe ObjectDirectory=\\Windows SharedSection=1024,20480,768 "
             "Windows=On SubSystemType=Windows ServerDll=basesrv,1 ServerDll=winsrv:UserServerDllInitialization,3 "
             "ServerDll=sxssrv,4 ProfileControl=Off MaxRequestThreads=16",
             1, SID_SYSTEM, 13, false, {{PF_LPCSRV, 60}, {PF_UI, 40}}},
    /* 3 */ {"wininit.exe", "wininit.exe", 0, SID_SYSTEM, 13, false,
             {{PF_TIMER, 60}, {PF_LPCSRV, 40}}},
    /* 4 */ {"services.exe", "C:\\Windows\\system32\\services.exe", 0, SID_SYSTEM, 9, false,
             {{PF_LPCSRV, 50}, {PF_WORKER, 50}}},
    /* 5 */ {"lsass.exe", "C:\\Windows\\system32\\lsass.exe", 0, SID_SYSTEM, 9, false,
             {{PF_LPCSRV, 60}, {PF_WORKER, 40}}},
    /* 6 */ {"svchost.exe", "C:\\Windows\\system32\\svchost.exe -k netsvcs -p", 0, SID_SYSTEM, 8,
             false, {{PF_WORKER, 50}, {PF_TIMER, 30}, {PF_LPCSRV, 20}}},
    /* 7 */ {"svchost.exe", "C:\\Windows\\System32\\svchost.exe -k LocalServiceNetworkRestricted -p",
             0, SID_LOCAL_SERVICE, 8, false, {{PF_WORKER, 40}, {PF_TIMER, 40}, {PF_IO, 20}}},
    /* 8 */ {"dwm.exe", "\"dwm.exe\"", 1, SID_DWM, 13, false,
             {{PF_UI, 50}, {PF_WORKER, 30}, {PF_TIMER, 20}}},
    /* 9 */ {"explorer.exe", "C:\\Windows\\Explorer.EXE", 1, SID_USER, 8, true,
             {{PF_UI, 40}, {PF_WORKER, 40}, {PF_TIMER, 20}}},
    /* 10 */ {"audiodg.exe", "C:\\Windows\\system32\\AUDIODG.EXE 0x4e8", 0, SID_LOCAL_SERVICE, 8,
              false, {{PF_AUDIO, 40}, {PF_WORKER, 60}}},
    /* 11 */ {"msedge.exe",
              "\"C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\msedge.exe\" --type=renderer",
              1, SID_USER, 8, true,
              {{PF_UI, 20}, {PF_WORKER, 35}, {PF_LOCKY, 20}, {PF_COMPUTE, 10}, {PF_TIMER, 15}}},
    /* 12 */ {"MsMpEng.exe",
              "\"C:\\ProgramData\\Microsoft\\Windows Defender\\platform\\4.18.2111.5-0\\MsMpEng.exe\"",
              0, SID_SYSTEM, 8, false, {{PF_IO, 50}, {PF_WORKER, 30}, {PF_COMPUTE, 20}}},
    /* 13 */ {"SearchIndexer.exe", "C:\\Windows\\system32\\SearchIndexer.exe /Embedding", 0,
              SID_SYSTEM, 8, false, {{PF_BACKGROUND, 70}, {PF_IO, 30}}},
    /* 14 */ {"sqlservr.exe",
              "\"C:\\Program Files\\Microsoft SQL Server\\MSSQL15.MSSQLSERVER\\MSSQL\\Binn\\sqlservr.exe\" -sMSSQLSERVER",
              0, SID_NETWORK_SERVICE, 8, false, {{PF_LOCKY, 40}, {PF_WORKER, 30}, {PF_IO, 30}}},
    /* 15 */ {"cl.exe", "cl.exe /c /O2 /MP main.c", 1, SID_USER, 8, false,
              {{PF_COMPUTE, 80}, {PF_IO, 20}}},
    /* 16 */ {"python.exe", "python.exe train.py --epochs 10", 1, SID_USER, 8, false,
              {{PF_COMPUTE, 50}, {PF_LOCKY, 30}, {PF_TIMER, 20}}},
    /* 17 */ {"conhost.exe", "\\??\\C:\\Windows\\system32\\conhost.exe 0xffffffff -ForceV1", 1,
              SID_USER, 8, false, {{PF_UI, 50}, {PF_TIMER, 50}}},
    /* 18 */ {"Code.exe", "\"C:\\Users\\user\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe\"",
              1, SID_USER, 8, true, {{PF_UI, 30}, {PF_WORKER, 40}, {PF_TIMER, 30}}},
};
const unsigned synth_template_count = N(synth_templates);

const uint8_t synth_initial_order[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17,
                                       18, 6, 11, 7, 14, 11, 6, 12, 16, 11, 17};
const unsigned synth_initial_order_count = N(synth_initial_order);
const uint8_t synth_dynamic_templates[] = {15, 16, 17, 6, 11, 15};
const unsigned synth_dynamic_template_count = N(synth_dynamic_templates);

/* ---- ids, addresses, SIDs ---------------------------------------------------------- */

/* Every processor of the machine as an affinity mask of the trace's pointer width. */
uint64_t synth_affinity(const synth *s)
{
    unsigned bits = 8 * s->ptr;
    return s->ncpu >= bits ? (bits == 64 ? UINT64_MAX : 0xFFFFFFFFu) : (1ull << s->ncpu) - 1;
}

uint32_t synth_new_id(synth *s)
{
    /* Windows ids are multiples of 4 from one table; we never reuse one. */
    s->next_id += 4 * (uint32_t)(1 + synth_rng_below(&s->rng, 3));
    return s->next_id;
}

static uint64_t kptr(synth *s, uint64_t base64, uint32_t base32, unsigned bits, unsigned align)
{
    uint64_t r = synth_rng_below(&s->rng, 1ull << bits) << align;
    return s->ptr == 8 ? base64 + r : (uint64_t)base32 + (r & 0x3FFFFFFFu);
}

static size_t make_sid(synth *s, unsigned kind, uint8_t *out)
{
    uint32_t sub[5];
    unsigned n;
    switch (kind) {
    case SID_SYSTEM: sub[0] = 18; n = 1; break;
    case SID_LOCAL_SERVICE: sub[0] = 19; n = 1; break;
    case SID_NETWORK_SERVICE: sub[0] = 20; n = 1; break;
    case SID_DWM: sub[0] = 90; sub[1] = 0; sub[2] = 1; n = 3; break;
    default:
        sub[0] = 21;
        sub[1] = s->user_sid[0];
        sub[2] = s->user_sid[1];
        sub[3] = s->user_sid[2];
        sub[4] = 1001;
        n = 5;
    }
    out[0] = 1;
    out[1] = (uint8_t)n;
    memset(out + 2, 0, 5);
    out[7] = 5; /* SECURITY_NT_AUTHORITY, big-endian 48 bits */
    for (unsigned i = 0; i < n; i++) {
        out[8 + 4 * i] = (uint8_t)sub[i];
        out[9 + 4 * i] = (uint8_t)(sub[i] >> 8);
        out[10 + 4 * i] = (uint8_t)(sub[i] >> 16);
        out[11 + 4 * i] = (uint8_t)(sub[i] >> 24);
    }
    return 8 + 4 * (size_t)n;
}

int32_t synth_spawn_process(synth *s, unsigned tmpl, uint32_t parent_pid, bool dynamic)
{
    uint32_t i;
    if (tmpl == TPL_SYSTEM) {
        i = 1;
    } else {
        for (i = 2; i < s->pr_used; i++)
            if (!s->pr[i].alive) break;
        if (i == s->pr_cap) return -1;
        if (i == s->pr_used) s->pr_used++;
    }
    sproc *p = &s->pr[i];
    memset(p, 0, sizeof *p);
    p->pid = tmpl == TPL_SYSTEM ? 4 : synth_new_id(s);
    p->parent_pid = tmpl == TPL_SYSTEM ? 0 : parent_pid;
    p->tmpl = (uint8_t)tmpl;
    p->alive = true;
    p->dynamic = dynamic;
    p->session = synth_templates[tmpl].session;
    p->next_ideal = (uint32_t)synth_rng_below(&s->rng, s->ncpu);
    p->key = kptr(s, 0xFFFFA00000000000ull, 0x84000000u, 30, 6) | 0x40;
    p->dtb = (synth_rng_below(&s->rng, s->ptr == 8 ? 1u << 24 : 1u << 19) + 0x100) << 12;
    p->sid_len = (uint8_t)make_sid(s, synth_templates[tmpl].sid, p->sid);
    if (SYNTH_STACKS(s)) synth_stacks_process_new(s, i);
    return (int32_t)i;
}

const char *synth_image(const synth *s, uint32_t proc)
{
    return proc == 0 ? "Idle" : synth_templates[s->pr[proc].tmpl].image;
}

const char *synth_command_line(const synth *s, uint32_t proc)
{
    return proc == 0 ? "" : synth_templates[s->pr[proc].tmpl].command_line;
}

/* ---- threads ------------------------------------------------------------------------ */

static int pick_profile(synth *s, unsigned tmpl)
{
    const synth_proc_template *t = &synth_templates[tmpl];
    unsigned total = 0;
    for (unsigned k = 0; k < N(t->mix) && t->mix[k].weight; k++) total += t->mix[k].weight;
    uint64_t x = synth_rng_below(&s->rng, total);
    for (unsigned k = 0; k < N(t->mix) && t->mix[k].weight; k++) {
        if (x < t->mix[k].weight) return t->mix[k].profile;
        x -= t->mix[k].weight;
    }
    return t->mix[0].profile;
}

static int8_t base_priority(synth *s, const synth_proc_template *t, int profile)
{
    int b;
    switch (profile) {
    case PF_ZERO: return 0;
    case PF_KRT: return (int8_t)(16 + synth_rng_below(&s->rng, 3));
    case PF_AUDIO: return (int8_t)(21 + synth_rng_below(&s->rng, 6));
    case PF_KWORKER:
        if (synth_rng_chance(&s->rng, 0.1)) return 8;
        return synth_rng_chance(&s->rng, 0.6) ? 12 : 13;
    case PF_BACKGROUND: return (int8_t)(1 + synth_rng_below(&s->rng, 4));
    default:
        b = t->class_base;
        if (t->foreground) b += profile == PF_UI ? 2 : 1;
        else if (t->class_base >= 13 && profile == PF_UI) b += 1;
        if (synth_rng_chance(&s->rng, 0.08)) b += synth_rng_chance(&s->rng, 0.5) ? 1 : -1;
        if (b < 1) b = 1;
        if (b > 15) b = 15;
        return (int8_t)b;
    }
}

static uint64_t us_to_units(const synth *s, double us)
{
    double u = us * s->units_per_us;
    if (u < 1) return 1;
    if (u > 9.0e18) return (uint64_t)9.0e18;
    return (uint64_t)(u + 0.5);
}

int32_t synth_spawn_thread(synth *s, uint32_t proc, int profile, uint64_t t, bool dynamic)
{
    if (!s->th_nfree) return -1;
    uint32_t i = s->th_free[--s->th_nfree];
    sthread *th = &s->th[i];
    sproc *p = &s->pr[proc];
    const synth_proc_template *tp = &synth_templates[p->tmpl];
    memset(th, 0, sizeof *th);
    th->state = TS_READY; /* made: the caller readies it or starts its wait */
    if (profile < 0) profile = pick_profile(s, p->tmpl);
    th->tid = synth_new_id(s);
    th->proc = proc;
    th->profile = (uint8_t)profile;
    th->base = th->prio = base_priority(s, tp, profile);
    th->ideal_cpu = th->last_cpu = th->cpu = th->wake_cpu = (uint16_t)(p->next_ideal++ % s->ncpu);
    th->qnext = th->qprev = -1;
    th->lpc_peer = -1;
    th->pool_pos = UINT32_MAX;
    /* Client Windows: 2 clock ticks, 3x for the foreground process (PsPrioritySeparation). */
    th->quantum = (tp->foreground ? 6 : 2) * s->tick;
    th->quantum_left = (int64_t)th->quantum;
    th->created = t;
    if (dynamic) th->exit_at = t + us_to_units(s, synth_rng_lognormal(&s->rng, 200000, 1.5));
    if (profile == PF_AUDIO) {
        th->period = us_to_units(s, 10000);
        th->phase = synth_rng_below(&s->rng, th->period);
    }
    th->ipc_x1024 = (uint32_t)(300 + synth_rng_below(&s->rng, 2200));
    th->llc_div = (uint32_t)(200 + synth_rng_below(&s->rng, 3000));
    th->br_div = (uint32_t)(50 + synth_rng_below(&s->rng, 400));
    th->stack_base = kptr(s, 0xFFFFF30000000000ull, 0x90000000u, 28, 12) + 0x7000;
    th->stack_limit = th->stack_base - (s->ptr == 8 ? 0x7000 : 0x3000);
    if (proc == 1) {
        th->win32_start = kptr(s, 0xFFFFF80250000000ull, 0x81000000u, 24, 4);
    } else {
        th->user_stack_base = s->ptr == 8 ? 0x000000A000000000ull + (synth_rng_below(&s->rng, 1u << 24) << 16)
                                          : 0x00100000u + (synth_rng_below(&s->rng, 1u << 11) << 16);
        th->user_stack_limit = th->user_stack_base - 0x3000;
        th->teb = s->ptr == 8 ? 0x000000A000000000ull + (synth_rng_below(&s->rng, 1u << 24) << 12)
                              : 0x7F000000u + (synth_rng_below(&s->rng, 1u << 12) << 12);
        th->win32_start = s->ptr == 8 ? 0x00007FF000000000ull + synth_rng_below(&s->rng, 1ull << 32)
                                      : 0x70000000u + synth_rng_below(&s->rng, 1u << 26);
    }
    const synth_profile *pf = &synth_profiles[profile];
    if (pf->nnames && synth_rng_chance(&s->rng, pf->p_named) && s->thread_names) {
        const char *nm = pf->names[synth_rng_below(&s->rng, pf->nnames)];
        snprintf(th->name, sizeof th->name, "%s", nm);
        /* A new thread names itself during its first burst (SetName); others are named at start. */
        th->name_pending = dynamic;
    }
    p->nthreads++;
    s->th_alive++;
    if (SYNTH_STACKS(s)) synth_stacks_thread_new(s, i);
    return (int32_t)i;
}

/* ---- spin lock sites --------------------------------------------------------------- */

void synth_init_lock_sites(synth *s)
{
    uint32_t cum = 0;
    for (unsigned k = 0; k < SYNTH_LOCK_SITES; k++) {
        s->lock_addr[k] = kptr(s, 0xFFFFA00010000000ull, 0x86000000u, 26, 6);
        for (unsigned c = 0; c < 3; c++)
            s->lock_callers[k][c] = kptr(s, 0xFFFFF8025B000000ull, 0x82000000u, 22, 0);
        uint64_t m = synth_rng_below(&s->rng, 100);
        s->lock_mode[k] = m < 50 ? 0 : m < 80 ? 1 : m < 88 ? 2 : m < 98 ? 3 : 4;
        /* A few hot locks take most contention. */
        s->lock_hot[k] = (uint16_t)(k < 4 ? 400 : k < 16 ? 120 : 40);
        s->lock_hold_med[k] = (uint32_t)(300 + synth_rng_below(&s->rng, 3000));
        cum += 1000 / (k + 1) + 5; /* Zipf-like popularity */
        s->lock_cum[k] = cum;
    }
    /* Scale contention so that --lock-contention is the average over acquisitions. */
    double sum = 0;
    for (unsigned k = 0; k < SYNTH_LOCK_SITES; k++)
        sum += (double)(s->lock_cum[k] - (k ? s->lock_cum[k - 1] : 0)) * s->lock_hot[k];
    s->lock_hot_mean = sum / cum;
}

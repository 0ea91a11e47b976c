/*
 * options.c - the simulator's options: defaults, presets, setting an option
 * by its command-line name (so the CLI, the tests and tests/data/README.md
 * share one parser), reading it back as text, and validation.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "out/num.h"
#include "base/opts.h"
#include "synth_internal.h"

#define DEFAULT_LOG_FILE_NAME "C:\\Windows\\Temp\\etlkit-synth.etl"

void etl_synth_options_init(etl_synth_options *o)
{
    memset(o, 0, sizeof *o);
    o->sz = sizeof *o;
    o->seed = 1;
    o->ncpu = 4;
    o->threads = 50;
    o->processes = 8;
    o->duration_ns = 2000000000u;
    o->target_bytes = 0;
    o->clock_type = ETL_CLOCK_QPC;
    o->pointer_size = 8;
    o->buffer_size = 65536;
    o->compress = false;
    o->cswitch_format = ETL_SYNTH_CSWITCH_FULL;
    o->pmc_count = 0;
    o->ready_events = true;
    o->spinlocks = true;
    o->spinlock_info = etl_spinlock_info_defaults();
    o->lock_rate = 2000;
    o->lock_contention = 500;
    o->churn = 20;
    o->load = 35;
    o->os_build = 19041;
    o->perf_freq = 10000000u;
    o->cpu_mhz = 3000;
    o->timer_resolution = 156250;
    o->log_file_name = DEFAULT_LOG_FILE_NAME;
    o->stacks = false;
    o->profile_interval = 10000;
    o->stack_form = ETL_SYNTH_STACK_BOTH;
}

static etl_status bad(etl_diag *diag, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static etl_status bad(etl_diag *diag, const char *fmt, ...)
{
    if (diag) {
        va_list ap;
        va_start(ap, fmt);
        diag->status = ETL_E_INVALID_ARG;
        diag->file_offset = UINT64_MAX;
        vsnprintf(diag->msg, sizeof diag->msg, fmt, ap);
        va_end(ap);
    }
    return ETL_E_INVALID_ARG;
}

etl_status etl_synth_preset(etl_synth_options *o, const char *name, etl_diag *diag)
{
    if (name && strcmp(name, "small") == 0) {
        o->ncpu = 4;
        o->threads = 50;
        o->processes = 8;
        o->duration_ns = 2000000000u;
        o->target_bytes = 0;
        o->churn = 20;
        return ETL_OK;
    }
    if (name && strcmp(name, "large") == 0) {
        o->ncpu = 16;
        o->threads = 1000;
        o->processes = 60;
        o->duration_ns = 0;
        o->target_bytes = 1ull << 30;
        o->churn = 200;
        return ETL_OK;
    }
    return bad(diag, "unknown preset '%s' (small or large)", name ? name : "");
}

static const etl_synth_option_desc table[] = {
    {"seed", "N", "PRNG seed: the same options and seed give the same bytes"},
    {"cpus", "N", "processors, 1..256"},
    {"threads", "N", "threads alive at the start (idle threads not counted)"},
    {"processes", "N", "processes alive at the start, System included"},
    {"duration", "SECONDS", "simulated time to trace (also 50ms, 200us); 0: no limit"},
    {"size", "BYTES", "stop once the writer has written this much (K, M, G); 0: no limit"},
    {"clock", "qpc|system|cycles", "session clock (EVENT_TRACE_CLOCK_*)"},
    {"pointer-size", "32|64", "header types and pointer width of the trace"},
    {"buffer-size", "BYTES", "ETW buffer size (K, M), at least 4K"},
    {"compress", NULL, "compress buffers (MS-XCA Plain LZ77)"},
    {"no-compress", NULL, "do not compress buffers"},
    {"cswitch", "full|compact|both", "CSwitch 0x0524 events, compact batches 0x0525, or both"},
    {"pmc", "N", "PMC counters on each CSwitch, 0..4 (cycles, instructions, LLC misses, branch misses)"},
    {"ready-thread", NULL, "log ReadyThread 0x0532 (PERF_DISPATCHER)"},
    {"no-ready-thread", NULL, "do not log ReadyThread"},
    {"spinlocks", NULL, "model spin locks and log the sampled 0x0529 events (PERF_SPINLOCK)"},
    {"no-spinlocks", NULL, "no spin locks"},
    {"spin-threshold", "N", "SpinLockSpinThreshold (kernel minimum 1)"},
    {"acquire-rate", "N", "SpinLockAcquireSampleRate: 1 in N uncontended (minimum 1000)"},
    {"contention-rate", "N", "SpinLockContentionSampleRate: 1 in N contended (minimum 1)"},
    {"hold-threshold", "CYCLES", "SpinLockHoldThreshold (0 = off, else at least 1000000)"},
    {"lock-rate", "N", "spin lock acquisitions per second of thread running time"},
    {"lock-contention", "PERCENT", "share of acquisitions that are contended (average lock)"},
    {"churn", "N", "thread creations per simulated second (15% with a new process)"},
    {"load", "PERCENT", "target busy share of the CPUs (waits are scaled to reach it)"},
    {"os-build", "N", "Windows build, >= 9200: event versions and the compact StateWr bias"},
    {"perf-freq", "HZ", "QPC frequency (PerfFreq)"},
    {"cpu-mhz", "N", "CpuSpeedInMHz: the cycle counter's rate"},
    {"timer-resolution", "N", "clock tick in 100 ns units (156250 = 15.625 ms)"},
    {"stacks", NULL, "modules (Image events), SampledProfile per CPU and stack walks after SampledProfile, "
                     "CSwitch and ReadyThread"},
    {"no-stacks", NULL, "none of those"},
    {"profile-interval", "N", "with --stacks: sampling interval per CPU, 100 ns units (10000 = 1 ms)"},
    {"stack-form", "plain|cached|both", "with --stacks: StackWalk 0x1820, stack keys 0x1823-0x1826, or both"},
    {"modules", "SPEC[;SPEC]", "with --stacks: modules with a debug identity in place of the app DLL, each "
                               "NAME,BASE,SIZE,TIMESTAMP,GUID,AGE,PDB,RVA[,RVA...]: Image, ImageID and DbgID_RSDS "
                               "events, stack frames at BASE+RVA (for symbol tests)"},
};

const etl_synth_option_desc *etl_synth_option_table(size_t *n)
{
    *n = sizeof table / sizeof table[0];
    return table;
}

/* A number for an option: decimal, or a size (K, M, G suffixes) when sized. */
static bool parse_u64(const char *v, bool sized, uint64_t *out)
{
    return (sized ? num_parse_size(v, out) : num_parse_u64(v, 10, UINT64_MAX, out)) == 0;
}

/* A duration that cannot be negative: 2, 0.5, 50ms, 200us, 42ns. */
static bool parse_duration(const char *v, uint64_t *ns)
{
    int64_t x;
    if (v[0] == '-' || num_parse_dur(v, &x) != 0) return false;
    *ns = (uint64_t)x;
    return true;
}

static etl_status set_u32(const char *name, const char *v, uint64_t lo, uint64_t hi, bool sized,
                          uint32_t *out, etl_diag *diag)
{
    uint64_t x;
    if (!parse_u64(v, sized, &x)) return bad(diag, "--%s: '%s' is not a number", name, v);
    if (x < lo || x > hi) return bad(diag, "--%s: %s is out of range", name, v);
    *out = (uint32_t)x;
    return ETL_OK;
}

etl_status etl_synth_set(etl_synth_options *o, const char *name, const char *v, etl_diag *diag)
{
    if (!o || !name) return bad(diag, "%s", !o ? "no options struct to set" : "no option name");
    size_t n;
    const etl_synth_option_desc *t = etl_synth_option_table(&n);
    const etl_synth_option_desc *d = NULL;
    for (size_t i = 0; i < n; i++)
        if (strcmp(t[i].name, name) == 0) d = &t[i];
    if (!d) return bad(diag, "unknown option --%s", name);
    if (d->arg && !v) return bad(diag, "--%s needs a value (%s)", name, d->arg);
    if (!d->arg && v) return bad(diag, "--%s takes no value", name);
    if (!v) v = "";
    uint64_t x;
    uint32_t u;
    etl_status st;

    if (strcmp(name, "seed") == 0) {
        if (!parse_u64(v, false, &x)) return bad(diag, "--%s: '%s' is not a number", name, v);
        o->seed = x;
    } else if (strcmp(name, "cpus") == 0) {
        return set_u32(name, v, 1, ETL_SYNTH_MAX_CPUS, false, &o->ncpu, diag);
    } else if (strcmp(name, "threads") == 0) {
        return set_u32(name, v, 1, ETL_SYNTH_MAX_THREADS, false, &o->threads, diag);
    } else if (strcmp(name, "processes") == 0) {
        return set_u32(name, v, 1, ETL_SYNTH_MAX_THREADS, false, &o->processes, diag);
    } else if (strcmp(name, "duration") == 0) {
        if (!parse_duration(v, &x)) return bad(diag, "--%s: '%s' is not a duration (seconds)", name, v);
        o->duration_ns = x;
    } else if (strcmp(name, "size") == 0) {
        if (!parse_u64(v, true, &x)) return bad(diag, "--%s: '%s' is not a size", name, v);
        o->target_bytes = x;
    } else if (strcmp(name, "clock") == 0) {
        if (strcmp(v, "qpc") == 0) o->clock_type = ETL_CLOCK_QPC;
        else if (strcmp(v, "system") == 0) o->clock_type = ETL_CLOCK_SYSTEM_TIME;
        else if (strcmp(v, "cycles") == 0) o->clock_type = ETL_CLOCK_CPU_CYCLES;
        else return bad(diag, "--%s: '%s' is not qpc, system or cycles", name, v);
    } else if (strcmp(name, "pointer-size") == 0) {
        if (strcmp(v, "32") == 0 || strcmp(v, "4") == 0) o->pointer_size = 4;
        else if (strcmp(v, "64") == 0 || strcmp(v, "8") == 0) o->pointer_size = 8;
        else return bad(diag, "--%s: '%s' is not 32 or 64", name, v);
    } else if (strcmp(name, "buffer-size") == 0) {
        return set_u32(name, v, 4096, 64u << 20, true, &o->buffer_size, diag);
    } else if (strcmp(name, "compress") == 0) {
        o->compress = true;
    } else if (strcmp(name, "no-compress") == 0) {
        o->compress = false;
    } else if (strcmp(name, "cswitch") == 0) {
        if (strcmp(v, "full") == 0) o->cswitch_format = ETL_SYNTH_CSWITCH_FULL;
        else if (strcmp(v, "compact") == 0) o->cswitch_format = ETL_SYNTH_CSWITCH_COMPACT;
        else if (strcmp(v, "both") == 0) o->cswitch_format = ETL_SYNTH_CSWITCH_BOTH;
        else return bad(diag, "--%s: '%s' is not full, compact or both", name, v);
    } else if (strcmp(name, "pmc") == 0) {
        st = set_u32(name, v, 0, ETL_SYNTH_MAX_PMC, false, &u, diag);
        if (st == ETL_OK) o->pmc_count = u;
        return st;
    } else if (strcmp(name, "ready-thread") == 0) {
        o->ready_events = true;
    } else if (strcmp(name, "no-ready-thread") == 0) {
        o->ready_events = false;
    } else if (strcmp(name, "spinlocks") == 0) {
        o->spinlocks = true;
    } else if (strcmp(name, "no-spinlocks") == 0) {
        o->spinlocks = false;
    } else if (strcmp(name, "spin-threshold") == 0) {
        return set_u32(name, v, 0, UINT32_MAX, false, &o->spinlock_info.spin_lock_spin_threshold, diag);
    } else if (strcmp(name, "acquire-rate") == 0) {
        return set_u32(name, v, 0, UINT32_MAX, false, &o->spinlock_info.spin_lock_acquire_sample_rate,
                       diag);
    } else if (strcmp(name, "contention-rate") == 0) {
        return set_u32(name, v, 0, UINT32_MAX, false,
                       &o->spinlock_info.spin_lock_contention_sample_rate, diag);
    } else if (strcmp(name, "hold-threshold") == 0) {
        return set_u32(name, v, 0, UINT32_MAX, false, &o->spinlock_info.spin_lock_hold_threshold, diag);
    } else if (strcmp(name, "lock-rate") == 0) {
        return set_u32(name, v, 0, 10000000, false, &o->lock_rate, diag);
    } else if (strcmp(name, "lock-contention") == 0) {
        const char *unit;
        if (num_parse_fixed(v, 2, &x, &unit) != 0 || (*unit && strcmp(unit, "%") != 0) || x > 10000)
            return bad(diag, "--%s: '%s' is not a percentage (0..100)", name, v);
        o->lock_contention = (uint32_t)x;
    } else if (strcmp(name, "load") == 0) {
        return set_u32(name, v, 1, 100, false, &o->load, diag);
    } else if (strcmp(name, "churn") == 0) {
        return set_u32(name, v, 0, 1000000, false, &o->churn, diag);
    } else if (strcmp(name, "os-build") == 0) {
        return set_u32(name, v, 9200, 99999, false, &o->os_build, diag);
    } else if (strcmp(name, "perf-freq") == 0) {
        if (!parse_u64(v, false, &x) || x < 1000 || x > 100000000000ull)
            return bad(diag, "--%s: '%s' is out of range (1000..1e11)", name, v);
        o->perf_freq = x;
    } else if (strcmp(name, "cpu-mhz") == 0) {
        return set_u32(name, v, 100, 100000, false, &o->cpu_mhz, diag);
    } else if (strcmp(name, "timer-resolution") == 0) {
        return set_u32(name, v, 5000, 1000000, false, &o->timer_resolution, diag);
    } else if (strcmp(name, "stacks") == 0) {
        o->stacks = true;
    } else if (strcmp(name, "no-stacks") == 0) {
        o->stacks = false;
    } else if (strcmp(name, "profile-interval") == 0) {
        return set_u32(name, v, 1000, 10000000, false, &o->profile_interval, diag);
    } else if (strcmp(name, "stack-form") == 0) {
        if (strcmp(v, "plain") == 0) o->stack_form = ETL_SYNTH_STACK_PLAIN;
        else if (strcmp(v, "cached") == 0) o->stack_form = ETL_SYNTH_STACK_CACHED;
        else if (strcmp(v, "both") == 0) o->stack_form = ETL_SYNTH_STACK_BOTH;
        else return bad(diag, "--%s: '%s' is not plain, cached or both", name, v);
    } else if (strcmp(name, "modules") == 0) {
        char err[200];
        if (!strcmp(v, "none")) v = "";
        if (synth_modules_parse(v, NULL, NULL, err, sizeof err) != ETL_OK) return bad(diag, "--%s: %s", name, err);
        o->modules = *v ? v : NULL;
    }
    return ETL_OK;
}

void etl_synth_get(const etl_synth_options *o, const char *name, char *out, size_t cap)
{
    if (!cap) return;
    out[0] = 0;
#define U(x) snprintf(out, cap, "%llu", (unsigned long long)(x))
#define B(x) snprintf(out, cap, "%s", (x) ? "on" : "off")
    if (strcmp(name, "seed") == 0) U(o->seed);
    else if (strcmp(name, "cpus") == 0) U(o->ncpu);
    else if (strcmp(name, "threads") == 0) U(o->threads);
    else if (strcmp(name, "processes") == 0) U(o->processes);
    else if (strcmp(name, "duration") == 0) {
        uint64_t ns = o->duration_ns;
        if (ns % 1000000000u == 0) snprintf(out, cap, "%llu", (unsigned long long)(ns / 1000000000u));
        else snprintf(out, cap, "%llu.%09llu", (unsigned long long)(ns / 1000000000u),
                      (unsigned long long)(ns % 1000000000u));
    } else if (strcmp(name, "size") == 0) {
        uint64_t b = o->target_bytes;
        if (b && b % (1u << 30) == 0) snprintf(out, cap, "%lluG", (unsigned long long)(b >> 30));
        else if (b && b % (1u << 20) == 0) snprintf(out, cap, "%lluM", (unsigned long long)(b >> 20));
        else if (b && b % 1024 == 0) snprintf(out, cap, "%lluK", (unsigned long long)(b >> 10));
        else U(b);
    } else if (strcmp(name, "clock") == 0) {
        snprintf(out, cap, "%s", o->clock_type == ETL_CLOCK_SYSTEM_TIME ? "system"
                                 : o->clock_type == ETL_CLOCK_CPU_CYCLES ? "cycles" : "qpc");
    } else if (strcmp(name, "pointer-size") == 0) U(o->pointer_size * 8);
    else if (strcmp(name, "buffer-size") == 0) U(o->buffer_size);
    else if (strcmp(name, "compress") == 0) B(o->compress);
    else if (strcmp(name, "no-compress") == 0) B(!o->compress);
    else if (strcmp(name, "cswitch") == 0) {
        snprintf(out, cap, "%s", o->cswitch_format == ETL_SYNTH_CSWITCH_COMPACT ? "compact"
                                 : o->cswitch_format == ETL_SYNTH_CSWITCH_BOTH ? "both" : "full");
    } else if (strcmp(name, "pmc") == 0) U(o->pmc_count);
    else if (strcmp(name, "ready-thread") == 0) B(o->ready_events);
    else if (strcmp(name, "no-ready-thread") == 0) B(!o->ready_events);
    else if (strcmp(name, "spinlocks") == 0) B(o->spinlocks);
    else if (strcmp(name, "no-spinlocks") == 0) B(!o->spinlocks);
    else if (strcmp(name, "spin-threshold") == 0) U(o->spinlock_info.spin_lock_spin_threshold);
    else if (strcmp(name, "acquire-rate") == 0) U(o->spinlock_info.spin_lock_acquire_sample_rate);
    else if (strcmp(name, "contention-rate") == 0) U(o->spinlock_info.spin_lock_contention_sample_rate);
    else if (strcmp(name, "hold-threshold") == 0) U(o->spinlock_info.spin_lock_hold_threshold);
    else if (strcmp(name, "lock-rate") == 0) U(o->lock_rate);
    else if (strcmp(name, "lock-contention") == 0)
        snprintf(out, cap, "%u.%02u", o->lock_contention / 100, o->lock_contention % 100);
    else if (strcmp(name, "churn") == 0) U(o->churn);
    else if (strcmp(name, "load") == 0) U(o->load);
    else if (strcmp(name, "os-build") == 0) U(o->os_build);
    else if (strcmp(name, "perf-freq") == 0) U(o->perf_freq);
    else if (strcmp(name, "cpu-mhz") == 0) U(o->cpu_mhz);
    else if (strcmp(name, "timer-resolution") == 0) U(o->timer_resolution);
    else if (strcmp(name, "stacks") == 0) B(o->stacks);
    else if (strcmp(name, "no-stacks") == 0) B(!o->stacks);
    else if (strcmp(name, "profile-interval") == 0) U(o->profile_interval);
    else if (strcmp(name, "stack-form") == 0) {
        snprintf(out, cap, "%s", o->stack_form == ETL_SYNTH_STACK_PLAIN ? "plain"
                                 : o->stack_form == ETL_SYNTH_STACK_CACHED ? "cached" : "both");
    } else if (strcmp(name, "modules") == 0) {
        snprintf(out, cap, "%s", o->modules ? o->modules : "none");
    }
#undef U
#undef B
}

etl_status etl_synth_validate(const etl_synth_options *caller, etl_diag *diag)
{
    /* base.h's rule: the caller's first sz bytes over the defaults (NULL, sz 0: the defaults). */
    etl_synth_options v;
    etl_synth_options_init(&v);
    etl_opts_take(&v, sizeof v, caller);
    const etl_synth_options *o = &v;
    if (o->ncpu < 1 || o->ncpu > ETL_SYNTH_MAX_CPUS) return bad(diag, "--cpus must be 1..256");
    if (o->processes < 1 || o->threads < o->processes || o->threads > ETL_SYNTH_MAX_THREADS)
        return bad(diag, "--threads must be at least --processes (and at most 200000)");
    if (!o->duration_ns && !o->target_bytes)
        return bad(diag, "no stop condition: give --duration or --size");
    if (o->clock_type < ETL_CLOCK_QPC || o->clock_type > ETL_CLOCK_CPU_CYCLES)
        return bad(diag, "--clock must be qpc, system or cycles");
    if (o->pointer_size != 4 && o->pointer_size != 8)
        return bad(diag, "--pointer-size must be 32 or 64");
    if (o->buffer_size < 4096 || o->buffer_size > (64u << 20) || o->buffer_size % 8)
        return bad(diag, "--buffer-size must be a multiple of 8 from 4K to 64M");
    if (o->cswitch_format < ETL_SYNTH_CSWITCH_FULL || o->cswitch_format > ETL_SYNTH_CSWITCH_BOTH)
        return bad(diag, "--cswitch must be full, compact or both");
    if (o->pmc_count > ETL_SYNTH_MAX_PMC) return bad(diag, "--pmc must be 0..4");
    if (o->os_build < 9200) {
        return bad(diag, "--os-build %u: builds before 9200 (Windows 8) are not modelled", o->os_build);
    }
    if (o->perf_freq < 1000 || o->cpu_mhz < 100 || o->timer_resolution < 5000 ||
        o->timer_resolution > 1000000)
        return bad(diag, "--perf-freq, --cpu-mhz or --timer-resolution out of range");
    if (o->lock_contention > 10000) return bad(diag, "--lock-contention must be 0..100");
    if (o->load < 1 || o->load > 100) return bad(diag, "--load must be 1..100");
    if (!o->log_file_name) return bad(diag, "options: no log_file_name");
    if (o->profile_interval < 1000 || o->profile_interval > 10000000)
        return bad(diag, "--profile-interval must be 1000..10000000 (100 ns units)");
    if (o->stack_form < ETL_SYNTH_STACK_PLAIN || o->stack_form > ETL_SYNTH_STACK_BOTH)
        return bad(diag, "--stack-form must be plain, cached or both");
    if (o->modules) {
        char err[200];
        if (!o->stacks) return bad(diag, "--modules needs --stacks");
        if (synth_modules_parse(o->modules, NULL, NULL, err, sizeof err) != ETL_OK) return bad(diag, "--modules: %s", err);
    }
    etl_spinlock_info info = o->spinlock_info;
    info.has_hold_threshold = o->os_build >= 9600;
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (o->spinlocks && etl_spinlock_info_validate(&info, &d) != ETL_OK)
        return bad(diag, "invalid spin lock configuration: %s", d.msg);
    return ETL_OK;
}

/*
 * spinlock_info.c - EVENT_TRACE_SPINLOCK_INFORMATION, the spin lock sampling
 * parameters (NtSetSystemInformation class 0x1F, sub-class 5), their minimums,
 * and the kernel's per-release sampling decision built on them (spec 8, 8.1).
 */
#include <stdio.h>
#include "etlkit/kernel.h"
#include "base/bytes.h"

etl_status etl_spinlock_info_decode(etl_span payload, etl_spinlock_info *out)
{
    if (!out) return ETL_E_INVALID_ARG;
    if (!etl_span_has(payload, 0, ETL_SPINLOCK_INFO_V1_SIZE)) return ETL_E_TRUNCATED;
    const uint8_t *p = payload.p;
    if (etl_rd_u32(p) != ETL_SPINLOCK_INFO_CLASS) return ETL_E_CORRUPT;
    out->spin_lock_spin_threshold = etl_rd_u32(p + 0x04);
    out->spin_lock_acquire_sample_rate = etl_rd_u32(p + 0x08);
    out->spin_lock_contention_sample_rate = etl_rd_u32(p + 0x0C);
    out->has_hold_threshold = etl_span_has(payload, 0, ETL_SPINLOCK_INFO_SIZE);
    out->spin_lock_hold_threshold = out->has_hold_threshold ? etl_rd_u32(p + 0x10) : 0;
    return ETL_OK;
}

etl_status etl_spinlock_info_encode(const etl_spinlock_info *in, uint8_t *out, size_t cap,
                                    size_t *len)
{
    if (!in || !len) return ETL_E_INVALID_ARG;
    size_t need = in->has_hold_threshold ? ETL_SPINLOCK_INFO_SIZE : ETL_SPINLOCK_INFO_V1_SIZE;
    if (cap < need || !out) {
        *len = need;
        return ETL_E_RANGE;
    }
    etl_wr_u32(out, ETL_SPINLOCK_INFO_CLASS);
    etl_wr_u32(out + 0x04, in->spin_lock_spin_threshold);
    etl_wr_u32(out + 0x08, in->spin_lock_acquire_sample_rate);
    etl_wr_u32(out + 0x0C, in->spin_lock_contention_sample_rate);
    if (in->has_hold_threshold) etl_wr_u32(out + 0x10, in->spin_lock_hold_threshold);
    *len = need;
    return ETL_OK;
}

/* The kernel's minimums, which are also its defaults. */
enum {
    MIN_SPIN_THRESHOLD = 1,
    MIN_ACQUIRE_RATE = 1000,
    MIN_CONTENTION_RATE = 1,
    MIN_HOLD_THRESHOLD = 1000000
};

etl_spinlock_info etl_spinlock_info_defaults(void)
{
    etl_spinlock_info d = {MIN_SPIN_THRESHOLD, MIN_ACQUIRE_RATE, MIN_CONTENTION_RATE,
                           MIN_HOLD_THRESHOLD, true};
    return d;
}

static etl_status reject(etl_diag *diag, const char *field, uint32_t value, const char *rule)
{
    if (diag) {
        diag->status = ETL_E_INVALID_ARG;
        diag->file_offset = UINT64_MAX;
        snprintf(diag->msg, sizeof diag->msg, "%s %lu %s", field, (unsigned long)value, rule);
    }
    return ETL_E_INVALID_ARG;
}

etl_status etl_spinlock_info_validate(const etl_spinlock_info *info, etl_diag *diag)
{
    if (!info) return ETL_E_INVALID_ARG;
    if (info->spin_lock_spin_threshold < MIN_SPIN_THRESHOLD)
        return reject(diag, "SpinLockSpinThreshold", info->spin_lock_spin_threshold,
                      "is below the minimum 1");
    if (info->spin_lock_acquire_sample_rate < MIN_ACQUIRE_RATE)
        return reject(diag, "SpinLockAcquireSampleRate", info->spin_lock_acquire_sample_rate,
                      "is below the minimum 1000");
    if (info->spin_lock_contention_sample_rate < MIN_CONTENTION_RATE)
        return reject(diag, "SpinLockContentionSampleRate",
                      info->spin_lock_contention_sample_rate, "is below the minimum 1");
    if (info->has_hold_threshold && info->spin_lock_hold_threshold != 0 &&
        info->spin_lock_hold_threshold < MIN_HOLD_THRESHOLD)
        return reject(diag, "SpinLockHoldThreshold", info->spin_lock_hold_threshold,
                      "must be 0 or at least the minimum 1000000");
    return ETL_OK;
}

etl_status etl_spinlock_sampler_init(etl_spinlock_sampler *s, const etl_spinlock_info *cfg,
                                     etl_spinlock_cpu_counters *per_cpu, unsigned ncpu)
{
    if (!s || !cfg || (!per_cpu && ncpu)) return ETL_E_INVALID_ARG;
    etl_status st = etl_spinlock_info_validate(cfg, NULL);
    if (st != ETL_OK) return st;
    s->cfg = *cfg;
    s->per_cpu = per_cpu;
    s->ncpu = ncpu;
    if (ncpu) memset(per_cpu, 0, ncpu * sizeof *per_cpu);
    return ETL_OK;
}

bool etl_spinlock_should_log(etl_spinlock_sampler *s, unsigned cpu, uint32_t spin_count,
                             uint64_t hold_cycles)
{
    if (!s || cpu >= s->ncpu) return false;
    const etl_spinlock_info *c = &s->cfg;
    etl_spinlock_cpu_counters *n = &s->per_cpu[cpu];
    bool log;
    if (spin_count > 0) {
        n->contended++;
        log = spin_count >= c->spin_lock_spin_threshold &&
              n->contended % c->spin_lock_contention_sample_rate == 0;
    } else {
        n->uncontended++;
        log = n->uncontended % c->spin_lock_acquire_sample_rate == 0;
    }
#if ETL_SPINLOCK_HOLD_RULE_STRICT
    bool held_long = hold_cycles > c->spin_lock_hold_threshold;
#else
    bool held_long = hold_cycles >= c->spin_lock_hold_threshold;
#endif
    if (c->has_hold_threshold && c->spin_lock_hold_threshold != 0 && held_long) log = true;
    return log;
}

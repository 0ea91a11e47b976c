/*
 * ccswap_expand.c - compact batches to complete switches (kernel-events.md 6.6).
 *
 * A processor runs one thread between two switches, so the new thread of switch i
 * on a CPU is the old thread of switch i+1 on the same CPU, possibly in that CPU's
 * next batch. Each CPU therefore holds exactly one pending record; when the next
 * record of the CPU arrives, the pending one is completed (NEW_TID = the arriving
 * record's old thread, 0 for an idle form) and returned, and the arriving record
 * becomes pending. At end of trace the pending records are returned with NEW_TID
 * unknown.
 *
 * When switches are lost between the pending record and the next one (a truncated
 * record, a batch too short for its header, a batch abandoned half-read), the CPU
 * is marked broken and the pending switch is completed with NEW_TID unknown
 * instead of being paired with the wrong successor.
 */
#include "etlkit/ccswap.h"
#include "base/bytes.h"
#include "kernel/ccswap_walk.h"

etl_status etl_batch_expand_init(etl_batch_expander *x, etl_batch_expand_cpu *cpus, size_t ncpu)
{
    if (!x || !cpus || ncpu == 0 || ncpu > 65536) return ETL_E_INVALID_ARG;
    memset(x, 0, sizeof *x);
    memset(cpus, 0, ncpu * sizeof *cpus);
    x->cpus = cpus;
    x->ncpu = ncpu;
    x->last_status = ETL_OK;
    x->t_hi = UINT64_MAX;
    x->t_written = UINT64_MAX;
    return ETL_OK;
}

void etl_batch_expand_window(etl_batch_expander *x, uint64_t lo, uint64_t hi)
{
    x->t_lo = lo;
    x->t_hi = hi;
}


static void note_error(etl_batch_expander *x, etl_status st, size_t offset)
{
    x->last_status = st;
    x->last_cpu = (unsigned)x->cur;
    x->last_offset = offset;
}

/*
 * A switch time outside the window, or after the batch was written (its header's time, which
 * is >= its last switch: kernel-events.md 6.5): the batch stops there, as at a truncated record.
 */
static void bad_time(etl_batch_expander *x, etl_batch_expand_cpu *c, size_t offset, uint64_t t)
{
    if (t < x->t_lo || t > x->t_hi) x->stats.bad_time++;
    else x->stats.after_written++;
    note_error(x, ETL_E_RANGE, offset);
    c->broken = 1;
    x->active = false;
}

etl_status etl_batch_expand_begin(etl_batch_expander *x, unsigned cpu, etl_span payload,
                                  unsigned bias, uint8_t version)
{
    return etl_batch_expand_begin_written(x, cpu, payload, bias, version, UINT64_MAX);
}

etl_status etl_batch_expand_begin_written(etl_batch_expander *x, unsigned cpu, etl_span payload,
                                          unsigned bias, uint8_t version, uint64_t written)
{
    if (!x || !x->cpus) return ETL_E_INVALID_ARG;
    if (x->active && x->walk.pos < x->walk.n) {
        /* The rest of the previous batch is dropped: its CPU loses the chain. */
        x->stats.abandoned++;
        x->cpus[x->cur].broken = 1;
    }
    x->active = false;
    /* A switch of this batch past its bound of the two is damage (read_record). */
    x->t_written = written;
    x->batch_bad_index = 0;
    x->t_batch = written < x->t_hi ? written : x->t_hi;
    if (cpu >= x->ncpu) {
        x->stats.bad_cpu++;
        x->last_status = ETL_E_RANGE;
        x->last_cpu = cpu;
        x->last_offset = 0;
        return ETL_E_RANGE;
    }
    x->cur = cpu;
    x->bias = (uint8_t)(bias > 64 ? 64 : bias); /* > 63: every 6-bit value is a wait reason */
    x->version = version;
    x->stats.batches++;
    etl_status st = etl_ccswap_open(&x->walk, payload);
    if (st != ETL_OK) {
        x->stats.short_batches++;
        x->cpus[cpu].broken = 1;
        note_error(x, st, payload.n);
        return st;
    }
    x->active = true;
    /*
     * Deltas only add, so every time of the batch is at or after FirstTimeStamp: checked
     * here against the window's start, each switch against its end (read_record).
     */
    if (x->walk.first_time < x->t_lo || x->walk.first_time > x->t_batch) {
        bad_time(x, &x->cpus[cpu], 0, x->walk.first_time);
        return ETL_E_RANGE;
    }
    return ETL_OK;
}

/* The completed form of a CPU's pending switch; its successor (if known) is set by
 * the caller. */
static void emit_pending(const etl_batch_expand_cpu *c, size_t cpu, etl_cswitch *sw)
{
    ccswap_to_cswitch(&c->rec[c->cur], (uint16_t)cpu, c->bias, c->version, sw);
}

/*
 * The current batch's next record, read into the CPU's free slot and counted; false at
 * the batch's end (a truncated record ends it).
 */
static inline bool read_record(etl_batch_expander *x, etl_batch_expand_cpu *c, const etl_ccswap_record **out)
{
    etl_ccswap_record *r = &c->rec[c->cur ^ 1];
    etl_status st = ccswap_step(&x->walk, r);
    if (st == ETL_END) {
        x->active = false;
        return false;
    }
    if (st == ETL_E_TRUNCATED) {
        x->stats.truncated++;
        note_error(x, st, r->offset);
        c->broken = 1;
        x->active = false;
        return false;
    }
    if (r->time > x->t_batch) {
        /* Damage in a delta: every later time of the batch builds on it. */
        bad_time(x, c, r->offset, r->time);
        return false;
    }
    if (st == ETL_E_CORRUPT) {
        if (x->batch_bad_index++ == 0) x->first_bad_index = r->offset;
        x->stats.bad_index++;
        note_error(x, st, r->offset);
    }
    x->stats.records++;
    if (c->has_time && r->time < c->last_time) x->stats.time_backwards++;
    c->last_time = r->time;
    c->has_time = 1;
    if (r->form >= ETL_CCSWAP_LITE && r->state_wr >= x->bias && (unsigned)r->state_wr - x->bias > ETL_CCSWAP_STATE_MAX)
        x->stats.bad_state++;
    if (r->flags & ETL_CCSWAP_REC_BAD_PRIORITY) x->stats.bad_priority++;
    *out = r;
    return true;
}

/* The pending switch is complete with r after it: whether r names its new thread (counted when not). */
static inline bool successor_known(etl_batch_expander *x, const etl_batch_expand_cpu *c, const etl_ccswap_record *r)
{
    x->stats.switches++;
    if (!c->broken && !(r->flags & ETL_CCSWAP_REC_BAD_INDEX)) return true;
    x->stats.broken_chains++;
    return false;
}

/* The record just read becomes the CPU's pending switch. */
static inline void make_pending(etl_batch_expander *x, etl_batch_expand_cpu *c)
{
    c->cur ^= 1;
    c->bias = x->bias;
    c->version = x->version;
    c->has_pending = 1;
    c->broken = 0;
}

etl_status etl_batch_expand_next(etl_batch_expander *x, etl_cswitch *sw)
{
    if (!x || !x->active) return ETL_END;
    etl_batch_expand_cpu *c = &x->cpus[x->cur];
    const etl_ccswap_record *r;
    while (read_record(x, c, &r)) {
        bool had = c->has_pending;
        if (had) {
            emit_pending(c, x->cur, sw);
            if (successor_known(x, c, r)) {
                sw->new_tid = r->old_tid;
                sw->known |= ETL_CSW_NEW_TID;
            }
        }
        make_pending(x, c);
        if (had) return ETL_OK;
    }
    return ETL_END;
}

size_t etl_batch_expand_ids(etl_batch_expander *x, etl_cswitch_ids *out, size_t cap)
{
    if (!x || !x->active) return 0;
    etl_batch_expand_cpu *c = &x->cpus[x->cur];
    const etl_ccswap_record *r;
    size_t n = 0;
    while (n < cap && read_record(x, c, &r)) {
        if (c->has_pending) {
            const etl_ccswap_record *p = &c->rec[c->cur];
            etl_cswitch_ids *o = &out[n++];
            uint8_t reason;
            bool ok;
            o->known = ccswap_known(p, c->bias, &o->old_state, &reason, &ok);
            o->ts = p->time;
            o->old_tid = p->old_tid;
            o->new_tid = 0;
            if (successor_known(x, c, r)) {
                o->new_tid = r->old_tid;
                o->known |= ETL_CSW_NEW_TID;
            }
        }
        make_pending(x, c);
    }
    return n;
}

etl_status etl_batch_expand_finish(etl_batch_expander *x, etl_cswitch *sw)
{
    if (!x || !x->cpus) return ETL_END;
    x->active = false;
    while (x->drain < x->ncpu) {
        etl_batch_expand_cpu *c = &x->cpus[x->drain];
        if (c->has_pending) {
            emit_pending(c, x->drain, sw);
            c->has_pending = 0;
            x->stats.open_switches++;
            x->stats.switches++;
            x->drain++;
            return ETL_OK;
        }
        x->drain++;
    }
    for (size_t i = 0; i < x->ncpu; i++) {
        x->cpus[i].has_time = 0;
        x->cpus[i].broken = 0;
    }
    x->drain = 0;
    return ETL_END;
}

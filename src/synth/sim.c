/*
 * sim.c - the simulated machine: a discrete-event model of the Windows
 * dispatcher, driving the writer and the ground truth.
 *
 * Time is the session clock itself (raw units), so every logged time is
 * exact. Durations are drawn in microseconds and rounded to whole units (at
 * least one). Two event queues (heap.c): the threads' wake-ups, and per CPU
 * two events, RUN (the earliest of the running thread's burst end, its
 * quantum end at a clock tick and its next spin lock) and DISPATCH (a thread
 * in Standby taking the CPU), plus thread creation ("churn") and the start
 * of tracing. Tracing starts after 100 ms of unrecorded warm-up, so the trace
 * opens on a machine in full swing; the writer gets the events through
 * pipe.c. The waits are scaled so that the CPUs are busy about --load.
 *
 * One CPU logs at most one event per unit of time: `reserve` hands out
 * strictly increasing times per CPU (next_free), and an event due on a CPU
 * that has already logged at or after its time is re-queued for the CPU's
 * next free time. So every per-CPU stream is strictly increasing, and the
 * model's state changes happen exactly at the logged times. A spin lock
 * holder cannot be switched out (the dispatcher is at DISPATCH_LEVEL): any
 * event of its CPU from the first acquisition attempt on waits until the
 * release.
 *
 * Dispatcher model (a simplification of Windows 10's, documented in the README):
 *   - one ready queue of 32 FIFO levels (global, not per processor);
 *   - a readied thread goes to an idle CPU (its last, its ideal, the
 *     readying CPU, else any), else preempts the lowest-priority running
 *     thread below its priority (its last CPU first), else waits in the
 *     queue (tail). It goes to Standby on the chosen CPU and the switch
 *     happens after an IPI or idle-exit latency (>= 1 unit);
 *   - a preempted thread: state Ready, WrPreempted, back at the head of its
 *     level (keeping the rest of its burst and quantum), and placed again
 *     like a readied thread (it may take an idle CPU or preempt elsewhere);
 *   - quantum: 2 clock ticks (6 for foreground processes), charged while
 *     running, checked at clock ticks. At quantum end the priority decays
 *     (one level, or the whole lock boost) and, if a thread of equal or
 *     higher priority is ready, the thread switches out (Ready,
 *     WrQuantumEnd) to the tail of its level;
 *   - an exhausted quantum stays exhausted across preemption: the next clock
 *     tick while the thread runs ends it;
 *   - wake boosts (ReadyThread AdjustReason 1/2 with AdjustIncrement) apply
 *     to threads of base < 16: priority = max(priority, min(base + inc, 15)).
 *     The quantum is replenished when a wait ends;
 *   - a thread's state changes are strictly ordered in time, across CPUs.
 */
#include <stdlib.h>
#include <string.h>
#include "base/opts.h"
#include "base/platform.h"
#include "synth_internal.h"
#include "writer/writer_internal.h"

/* Same doubles on every compiler and target: no fused multiply-add (GCC in ISO C mode never fuses). */
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

#define NONE (-1)
#define WARMUP_US 100000.0

/* ---- arithmetic ----------------------------------------------------------------- */

static uint64_t muldiv(uint64_t a, uint64_t b, uint64_t c)
{
#ifdef __SIZEOF_INT128__
    return (uint64_t)((unsigned __int128)a * b / c);
#else
    return (a / c) * b + (a % c) * b / c;
#endif
}

static uint64_t gcd64(uint64_t a, uint64_t b)
{
    while (b) {
        uint64_t t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* The cycle counter at ts (the CPU-cycle clock and the PMC cycles counter). */
static uint64_t synth_cycles(const synth *s, uint64_t ts)
{
    uint64_t d = ts >= s->cyc_origin ? ts - s->cyc_origin : 0;
    return muldiv(d, s->cyc_num, s->cyc_den) + s->cyc_base;
}

static uint64_t us_units(const synth *s, double us)
{
    double u = us * s->units_per_us;
    if (!(u >= 1)) return 1;
    if (u > 9.0e18) return (uint64_t)9.0e18;
    return (uint64_t)(u + 0.5);
}

static uint64_t tick_ceil(const synth *s, uint64_t t)
{
    uint64_t r = t % s->tick;
    return r ? t + (s->tick - r) : t;
}

/* ---- CPU sets --------------------------------------------------------------------- */

static inline void mset(uint64_t *m, unsigned c) { m[c >> 6] |= 1ull << (c & 63); }
static inline void mclr(uint64_t *m, unsigned c) { m[c >> 6] &= ~(1ull << (c & 63)); }
static inline bool mtest(const uint64_t *m, unsigned c) { return (m[c >> 6] >> (c & 63)) & 1; }

static bool many(const synth *s, const uint64_t *m)
{
    for (unsigned w = 0; w < (s->ncpu + 63) / 64; w++)
        if (m[w]) return true;
    return false;
}

/* The first CPU in m at or after a random start, cyclically; -1 if m is empty. */
static int mpick(synth *s, const uint64_t *m)
{
    if (!many(s, m)) return NONE;
    unsigned start = (unsigned)synth_rng_below(&s->rng, s->ncpu);
    for (unsigned k = 0; k < s->ncpu; k++) {
        unsigned c = start + k;
        if (c >= s->ncpu) c -= s->ncpu;
        if (mtest(m, c)) return (int)c;
    }
    return NONE;
}

/* ---- slots ---------------------------------------------------------------------------- */

static void hset(synth *s, uint32_t slot, uint64_t t)
{
    if (slot < s->slot_cpu0) synth_heap_set(&s->wakes, slot, t, s->seq++);
    else synth_heap_set(&s->cpuq, slot - s->slot_cpu0, t, s->seq++);
}

static void hremove(synth *s, uint32_t slot)
{
    if (slot < s->slot_cpu0) synth_heap_remove(&s->wakes, slot);
    else synth_heap_remove(&s->cpuq, slot - s->slot_cpu0);
}

/* The earliest event of both queues. */
static bool htop(const synth *s, uint32_t *slot, uint64_t *t)
{
    const synth_heap_entry *a = synth_heap_top(&s->wakes), *b = synth_heap_top(&s->cpuq);
    if (!a && !b) return false;
    if (a && (!b || a->time < b->time || (a->time == b->time && a->seq_slot < b->seq_slot))) {
        *slot = synth_heap_slot(a);
        *t = a->time;
    } else {
        *slot = synth_heap_slot(b) + s->slot_cpu0;
        *t = b->time;
    }
    return true;
}

static inline uint32_t cslot(const synth *s, unsigned c, unsigned k)
{
    return s->slot_cpu0 + c * CS_COUNT + k;
}

/* The first time CPU c may log at, from t: 0 if now, else the retry time. */
static uint64_t busy_until(synth *s, unsigned c, uint64_t t, bool is_lock)
{
    const scpu *p = &s->cpu[c];
    uint64_t r = 0;
    if (t < p->next_free) r = p->next_free;
    if (!is_lock && p->lock_drawn && t >= p->lock_a && p->lock_r + 1 > r) r = p->lock_r + 1;
    return r > t ? r : 0;
}

static uint64_t reserve(synth *s, unsigned c, uint64_t t)
{
    scpu *p = &s->cpu[c];
    uint64_t ts = t > p->next_free ? t : p->next_free;
    p->next_free = ts + 1;
    return ts;
}

uint64_t synth_reserve(synth *s, unsigned c, uint64_t t)
{
    return reserve(s, c, t);
}

void synth_hset(synth *s, uint32_t slot, uint64_t t)
{
    hset(s, slot, t);
}

/* ---- ready queue ---------------------------------------------------------------------- */

static void rq_insert(synth *s, uint32_t i, bool head)
{
    sthread *th = &s->th[i];
    unsigned p = (unsigned)th->prio;
    th->state = TS_READY;
    if (s->rq_head[p] < 0) {
        th->qnext = th->qprev = NONE;
        s->rq_head[p] = s->rq_tail[p] = (int32_t)i;
        s->rq_mask |= 1u << p;
    } else if (head) {
        th->qprev = NONE;
        th->qnext = s->rq_head[p];
        s->th[s->rq_head[p]].qprev = (int32_t)i;
        s->rq_head[p] = (int32_t)i;
    } else {
        th->qnext = NONE;
        th->qprev = s->rq_tail[p];
        s->th[s->rq_tail[p]].qnext = (int32_t)i;
        s->rq_tail[p] = (int32_t)i;
    }
}

static int rq_top_priority(const synth *s)
{
    if (!s->rq_mask) return NONE;
    int p = 31;
    while (!(s->rq_mask & (1u << p))) p--;
    return p;
}

static int32_t rq_pop(synth *s)
{
    int p = rq_top_priority(s);
    if (p < 0) return NONE;
    int32_t i = s->rq_head[p];
    sthread *th = &s->th[i];
    s->rq_head[p] = th->qnext;
    if (th->qnext >= 0) s->th[th->qnext].qprev = NONE;
    else {
        s->rq_tail[p] = NONE;
        s->rq_mask &= ~(1u << p);
    }
    th->qnext = th->qprev = NONE;
    return i;
}

/* ---- ALPC server pool ------------------------------------------------------------------ */

static void pool_add(synth *s, uint32_t i)
{
    s->th[i].pool_pos = s->lpc_n;
    s->lpc_pool[s->lpc_n++] = i;
}

static uint32_t pool_take(synth *s, uint32_t k)
{
    uint32_t i = s->lpc_pool[k], last = s->lpc_pool[--s->lpc_n];
    s->lpc_pool[k] = last;
    s->th[last].pool_pos = k;
    s->th[i].pool_pos = UINT32_MAX;
    return i;
}

/* ---- placement ------------------------------------------------------------------------ */

static uint64_t latency(synth *s, double median_us)
{
    return us_units(s, synth_rng_lognormal(&s->rng, median_us, 0.5));
}

/* What a readied thread must exceed to preempt CPU c (127: idle or with a Standby thread). */
static void update_pp(synth *s, unsigned c)
{
    const scpu *p = &s->cpu[c];
    s->preempt_prio[c] = p->standby >= 0 || p->cur < 0 ? 127 : s->th[p->cur].prio;
}

static void standby(synth *s, unsigned c, uint32_t i, uint64_t when)
{
    scpu *p = &s->cpu[c];
    sthread *th = &s->th[i];
    p->standby = (int32_t)i;
    th->state = TS_STANDBY;
    th->cpu = (uint16_t)c;
    mclr(s->idle_mask, c);
    s->preempt_prio[c] = 127;
    hset(s, cslot(s, c, CS_DISPATCH), when);
}

/* Thread i becomes ready at t (state set here); from: the readying CPU or -1. */
static void place(synth *s, uint32_t i, uint64_t t, int from, bool head)
{
    sthread *th = &s->th[i];
    th->state = TS_READY;
    if (many(s, s->idle_mask)) {
        int c;
        if (mtest(s->idle_mask, th->last_cpu)) c = th->last_cpu;
        else if (mtest(s->idle_mask, th->ideal_cpu)) c = th->ideal_cpu;
        else if (from >= 0 && mtest(s->idle_mask, (unsigned)from)) c = from;
        else c = mpick(s, s->idle_mask);
        uint64_t lat;
        if (c == from) lat = 1;
        else lat = latency(s, t - s->cpu[c].idle_since >= us_units(s, 1000) ? 20 : 2);
        standby(s, (unsigned)c, i, t + lat);
        return;
    }
    int best = NONE, lowest = th->prio;
    const int8_t *pp = s->preempt_prio;
    if (pp[th->last_cpu] < th->prio) {
        best = th->last_cpu;
    } else {
        /* The lowest-priority CPU below th's priority, scanning from a rotating start. */
        unsigned start = s->scan_start++ % s->ncpu;
        for (unsigned k = 0; k < s->ncpu; k++) {
            unsigned c = start + k;
            if (c >= s->ncpu) c -= s->ncpu;
            if (pp[c] < lowest) {
                lowest = pp[c];
                best = (int)c;
            }
        }
    }
    if (best >= 0) {
        standby(s, (unsigned)best, i, t + (best == from ? 1 : latency(s, 1.5)));
        return;
    }
    rq_insert(s, i, head);
}

/* ---- running ------------------------------------------------------------------------- */

static uint64_t draw_burst(synth *s, const sthread *th)
{
    const synth_profile *pf = &synth_profiles[th->profile];
    double us = synth_rng_lognormal(&s->rng, pf->burst_us, pf->burst_sigma);
    if (us > pf->burst_max_us) us = pf->burst_max_us;
    return us_units(s, us);
}

/*
 * The running thread's next spin lock acquisition on CPU c, after `from`: a
 * Poisson process over running time (lock_rate per second), so only the
 * first attempt's time is drawn now; the lock itself is drawn when that time
 * comes with the thread still running (draw_lock), which is when its window
 * [first attempt, release] opens.
 */
static void schedule_lock(synth *s, unsigned c, uint64_t from)
{
    scpu *p = &s->cpu[c];
    p->lock_on = p->lock_drawn = false;
    if (!s->o.spinlocks || !s->o.lock_rate || p->cur < 0) return;
    p->lock_a = from + 1 + us_units(s, synth_rng_exp(&s->rng, 1e6 / s->o.lock_rate));
    p->lock_on = true;
}

static void draw_lock(synth *s, unsigned c, uint64_t t)
{
    scpu *p = &s->cpu[c];
    synth_rng *r = &s->rng;
    uint32_t x = (uint32_t)synth_rng_below(r, s->lock_cum[SYNTH_LOCK_SITES - 1]);
    unsigned lo = 0, hi = SYNTH_LOCK_SITES - 1; /* the first site with cum > x */
    while (lo < hi) {
        unsigned mid = (lo + hi) / 2;
        if (s->lock_cum[mid] > x) hi = mid;
        else lo = mid + 1;
    }
    unsigned site = lo;
    double pc = s->o.lock_contention / 10000.0 * s->lock_hot[site] / s->lock_hot_mean;
    uint32_t wait = 0, spin = 0;
    if (synth_rng_chance(r, pc)) {
        double w = synth_rng_lognormal(r, 1500, 1.0);
        if (w > 2e6) w = 2e6;
        wait = (uint32_t)w + 20;
        spin = (uint32_t)(wait / (20 + synth_rng_below(r, 40))) + 1;
    }
    double h;
    if (synth_rng_chance(r, 0.0005)) h = 1e6 + (double)synth_rng_below(r, 4000000);
    else h = synth_rng_lognormal(r, s->lock_hold_med[site], 1.0);
    if (h < 30) h = 30;
    if (h > 5e6) h = 5e6;
    p->lock_site = site;
    p->lock_wait = wait;
    p->lock_spin = spin;
    p->lock_hold = (uint32_t)h;
    p->lock_caller = (uint8_t)synth_rng_below(r, 3);
    uint64_t m = synth_rng_below(r, 100);
    p->lock_depth = (uint8_t)(m < 85 ? 1 : m < 97 ? 2 : 3);
    bool high = s->lock_mode[site] == 0 && synth_rng_chance(r, 0.1); /* an interrupt spin lock */
    p->lock_irql = (uint8_t)(high ? 5 + synth_rng_below(r, 8) : 2);
    p->lock_interrupts = synth_rng_chance(r, h > 1e5 ? 0.5 : 0.01) ? 1 : 0;
    uint64_t need = muldiv((uint64_t)wait + p->lock_hold, s->cyc_den, s->cyc_num) + 1;
    p->lock_a = t;
    p->lock_r = t + need;
    p->lock_drawn = true;
}

/*
 * Sets CPU c's RUN event: the earliest of the running thread's burst end,
 * quantum end and next spin lock (its first attempt, or once drawn its
 * release: a burst or quantum end inside the lock's window waits for the
 * release). Removes it when the CPU is idle.
 */
static void resched_run(synth *s, unsigned c)
{
    const scpu *p = &s->cpu[c];
    uint32_t slot = cslot(s, c, CS_RUN);
    if (p->cur < 0) {
        hremove(s, slot);
        return;
    }
    uint64_t be = s->th[p->cur].burst_end, t = be < p->quantum_at ? be : p->quantum_at;
    if (p->lock_on) {
        if (!p->lock_drawn) {
            if (p->lock_a < t) t = p->lock_a;
        } else if (t >= p->lock_a) {
            t = p->lock_r;
        }
    }
    hset(s, slot, t);
}

static uint64_t quantum_time(const synth *s, uint64_t ts, int64_t left)
{
    uint64_t q = tick_ceil(s, ts + (uint64_t)(left > 0 ? left : 1));
    return q > ts ? q : q + s->tick;
}

static void pmc_advance(synth *s, scpu *p, uint64_t ts, const sthread *th)
{
    uint64_t cyc = synth_cycles(s, ts) - synth_cycles(s, p->pmc_time);
    p->pmc_time = ts;
    if (th) {
        uint64_t ins = cyc / 1024 * th->ipc_x1024 + (cyc % 1024) * th->ipc_x1024 / 1024;
        p->pmc[0] += cyc;
        p->pmc[1] += ins;
        p->pmc[2] += ins / th->llc_div;
        p->pmc[3] += ins / th->br_div;
    } else {
        /* Halted: the idle loop's few cycles between C-state entries. */
        p->pmc[0] += cyc / 64;
        p->pmc[1] += cyc / 256;
        p->pmc[2] += cyc / 65536;
        p->pmc[3] += cyc / 32768;
    }
}

static int32_t rem_quantum(const synth *s, int64_t rem_units)
{
    int64_t cyc = rem_units >= 0 ? (int64_t)muldiv((uint64_t)rem_units, s->cyc_num, s->cyc_den)
                                 : -(int64_t)muldiv((uint64_t)-rem_units, s->cyc_num, s->cyc_den);
    int64_t v = cyc / 1024;
    if (v > INT32_MAX) v = INT32_MAX;
    if (v < INT32_MIN) v = INT32_MIN;
    return (int32_t)v;
}

/*
 * The switch on CPU c at t (or the CPU's next free time) from its current
 * thread to nxt (-1: the idle thread). The old thread's state, wait reason and
 * mode are what the event says; the caller then moves the old thread on.
 * Returns the switch time.
 */
static uint64_t do_switch(synth *s, unsigned c, uint64_t t, int32_t nxt, uint8_t old_state,
                          uint8_t old_wr, uint8_t old_wm, uint8_t why)
{
    scpu *p = &s->cpu[c];
    /* A thread's state changes are strictly ordered in time, across CPUs too, so that an
     * analysis merging the CPUs by time never sees a switch-in before the readying. */
    if (nxt >= 0 && t <= s->th[nxt].acct_since) t = s->th[nxt].acct_since + 1;
    uint64_t ts = reserve(s, c, t);
    int32_t old = p->cur;
    etl_cswitch cs;
    etl_synth_rec rec;
    memset(&cs, 0, sizeof cs);
    memset(&rec, 0, sizeof rec);
    etl_synth_switch *tr = &rec.u.sw;
    cs.ts = ts;
    cs.cpu = (uint16_t)c;
    int8_t old_base = 0;

    if (old >= 0) {
        sthread *o = &s->th[old];
        o->t_running += ts - o->acct_since;
        o->acct_since = ts;
        o->sw_out++;
        int64_t rem = o->quantum_left - (int64_t)(ts - o->q_start);
        o->quantum_left = rem;
        o->q_start = ts;
        o->burst_left = (why == ETL_SYNTH_WHY_PREEMPT || why == ETL_SYNTH_WHY_QUANTUM) &&
                                o->burst_end > ts ? o->burst_end - ts : 0;
        o->last_cpu = (uint16_t)c;
        cs.old_tid = o->tid;
        cs.old_priority = o->prio;
        cs.old_state = old_state;
        cs.old_wait_reason = old_wr;
        cs.old_wait_mode = old_wm;
        cs.old_ideal_processor = (uint8_t)o->ideal_cpu;
        cs.old_remaining_quantum = rem_quantum(s, rem);
        old_base = o->base;
        tr->old_pid = s->pr[o->proc].pid;
        p->lock_on = p->lock_drawn = false; /* its events are moved or removed below */
        pmc_advance(s, p, ts, o);
    } else {
        p->t_idle += ts - p->acct_since;
        cs.old_state = KS_RUNNING; /* the idle thread is never readied: its state stays Running */
        cs.old_ideal_processor = (uint8_t)c;
        cs.previous_cstate = ts - p->idle_since >= us_units(s, 1000) ? 2 : 1;
        pmc_advance(s, p, ts, NULL);
    }
    p->acct_since = ts;
    if (nxt >= 0 && nxt == p->standby) {
        p->standby = NONE;
        hremove(s, cslot(s, c, CS_DISPATCH));
    }

    int8_t new_base = 0;
    if (nxt >= 0) {
        sthread *n = &s->th[nxt];
        n->t_ready += ts - n->acct_since;
        n->acct_since = ts;
        n->sw_in++;
        uint64_t w = ts / s->tick - n->ready_since / s->tick;
        if (w > ETL_SYNTH_WAIT_TIME_MAX) w = ETL_SYNTH_WAIT_TIME_MAX;
        n->state = TS_RUN;
        n->cpu = n->last_cpu = (uint16_t)c;
        n->q_start = ts;
        /* An exhausted quantum stays exhausted: the next clock tick ends it (Windows
         * compares cycle time with the quantum target at each clock interrupt). */
        cs.new_tid = n->tid;
        cs.new_priority = n->prio;
        cs.new_wait_time = (uint32_t)w;
        new_base = n->base;
        tr->new_pid = s->pr[n->proc].pid;
        p->cur = nxt;
        mset(s->busy_mask, c);
        mclr(s->idle_mask, c);
        uint64_t bl = n->burst_left ? n->burst_left : draw_burst(s, n);
        n->burst_left = 0;
        n->burst_end = ts + bl;
        p->quantum_at = quantum_time(s, ts, n->quantum_left);
        schedule_lock(s, c, ts);
        resched_run(s, c);
    } else {
        p->cur = NONE;
        p->idle_since = ts;
        mclr(s->busy_mask, c);
        if (p->standby < 0) mset(s->idle_mask, c);
        resched_run(s, c);
    }
    p->switches++;
    update_pp(s, c);
    if (!s->tracing) return ts;

    uint64_t pmc[ETL_SYNTH_MAX_PMC];
    for (unsigned k = 0; k < ETL_SYNTH_MAX_PMC; k++) pmc[k] = k < s->o.pmc_count ? p->pmc[k] : 0;
    if (s->full) synth_emit_cswitch(s, c, &cs, pmc);
    if (SYNTH_STACKS(s)) synth_stacks_switch(s, c, ts, why);
    if (s->compact) {
        etl_ccswap_switch in;
        etl_ccswap_batch b;
        memset(&in, 0, sizeof in);
        in.time = ts;
        in.old_tid = cs.old_tid;
        in.new_wait_time = cs.new_wait_time;
        in.cpu = (uint16_t)c;
        in.old_priority = cs.old_priority;
        in.old_base_priority = old_base;
        in.old_state = cs.old_state;
        in.old_wait_reason = cs.old_wait_reason;
        uint64_t forms[4];
        memcpy(forms, s->enc.stats.forms, sizeof forms);
        etl_status st = etl_ccswap_encoder_add(&s->enc, &in, &b);
        if (st != ETL_OK) {
            synth_fail(s, st, "adding a switch to a compact batch");
            return ts;
        }
        /* After the records this switch logged (its stack walks, at reserved times): a CPU's records are in
         * time order (container.md §7). */
        if (b.size) synth_emit_batch(s, &b, s->full || ts + 1 < p->next_free ? reserve(s, c, s->full ? ts + 1 : ts) : ts);
        for (unsigned k = 0; k < 4; k++)
            if (s->enc.stats.forms[k] != forms[k]) tr->form = (uint8_t)k;
        tr->compact = true;
        tr->batch = p->batch_index;
        tr->batch_record = p->batch_records++;
    }
    rec.type = ETL_SYNTH_REC_SWITCH;
    tr->time = ts;
    tr->cpu = (uint16_t)c;
    tr->why = why;
    tr->old_tid = cs.old_tid;
    tr->new_tid = cs.new_tid;
    tr->old_priority = cs.old_priority;
    tr->new_priority = cs.new_priority;
    tr->old_base_priority = old_base;
    tr->new_base_priority = new_base;
    tr->old_state = cs.old_state;
    tr->old_wait_reason = cs.old_wait_reason;
    tr->old_wait_mode = cs.old_wait_mode;
    tr->previous_cstate = cs.previous_cstate;
    tr->old_ideal_processor = cs.old_ideal_processor;
    tr->new_wait_time = cs.new_wait_time;
    tr->old_remaining_quantum = cs.old_remaining_quantum;
    tr->pmc_count = (uint8_t)s->o.pmc_count;
    memcpy(tr->pmc, pmc, sizeof pmc);
    tr->cswitch = s->full;
    s->sum.switches++;
    synth_truth(s, &rec);
    return ts;
}

static int32_t pick_next(synth *s, unsigned c)
{
    if (s->cpu[c].standby >= 0) return s->cpu[c].standby;
    return rq_pop(s);
}

/* ---- waits ----------------------------------------------------------------------------- */

static void choose_wait(synth *s, const sthread *th, uint8_t *reason, uint8_t *kind)
{
    const synth_profile *pf = &synth_profiles[th->profile];
    unsigned total = 0, n = 0;
    while (n < 6 && pf->waits[n].weight) total += pf->waits[n++].weight;
    uint64_t x = synth_rng_below(&s->rng, total);
    for (unsigned k = 0; k < n; k++) {
        if (x < pf->waits[k].weight) {
            *reason = pf->waits[k].reason;
            *kind = pf->waits[k].kind;
            return;
        }
        x -= pf->waits[k].weight;
    }
    *reason = pf->waits[0].reason;
    *kind = pf->waits[0].kind;
}

static uint8_t wait_mode(const synth *s, const sthread *th, uint8_t reason, uint8_t kind)
{
    if (reason == WR_WR_QUEUE) return th->proc == 1 ? 0 : 1; /* kernel workers vs user IOCP */
    if (th->proc == 1) return 0;
    (void)s;
    return synth_wait_param_of(reason, kind)->mode;
}

/* Thread i starts waiting at ts; initial: a wait already in progress at the warm-up start. */
static void begin_wait(synth *s, uint32_t i, uint64_t ts, uint8_t reason, uint8_t kind, bool initial)
{
    sthread *th = &s->th[i];
    th->state = TS_WAIT;
    th->wait_reason = reason;
    th->wait_kind = kind;
    th->wait_mode = wait_mode(s, th, reason, kind);
    const synth_wait_param *wp = synth_wait_param_of(reason, kind);
    double scale = synth_profiles[th->profile].wait_scale * s->wait_factor;
    uint64_t wake;
    switch (kind) {
    case WK_TIMER:
        wake = tick_ceil(s, ts + us_units(s, synth_sleep_us(&s->rng)));
        if (wake <= ts) wake += s->tick;
        th->wake_cpu = th->last_cpu;
        break;
    case WK_PERIODIC: {
        uint64_t k = (ts - th->phase % th->period) / th->period + 1;
        wake = th->phase % th->period + k * th->period;
        th->wake_cpu = th->last_cpu;
        break;
    }
    case WK_IO:
        wake = ts + us_units(s, synth_rng_lognormal(&s->rng, wp->med_us * scale, wp->sigma));
        th->wake_cpu = synth_rng_chance(&s->rng, 0.5) ? th->last_cpu
                                                        : (uint16_t)synth_rng_below(&s->rng, s->ncpu);
        break;
    case WK_THREAD: {
        double us = synth_rng_lognormal(&s->rng, wp->med_us * scale, wp->sigma);
        if (us > 600e6) us = 600e6; /* 10 minutes */
        wake = ts + us_units(s, us);
        break;
    }
    case WK_LPC_RECV:
        pool_add(s, i);
        return;
    default: /* WK_LPC_REPLY: the server readies it */
        return;
    }
    if (initial) wake = ts + 1 + synth_rng_below(&s->rng, wake - ts);
    hset(s, i, wake);
}

/*
 * Readies thread i from CPU c at t: the ReadyThread event, the boost, the
 * accounting, then placement. Returns the event's time.
 */
static uint64_t ready_thread(synth *s, uint32_t i, unsigned c, uint64_t t, uint8_t why,
                             uint8_t flags, uint8_t adj_reason, int8_t adj_inc, bool fresh)
{
    sthread *th = &s->th[i];
    if (t <= th->acct_since) t = th->acct_since + 1; /* after its switch-out (see do_switch) */
    uint64_t ts = reserve(s, c, t);
    int8_t before = th->prio;
    if (th->base < 16 && adj_reason) {
        int np = th->base + adj_inc;
        if (np > 15) np = 15;
        if (np > th->prio) {
            th->prio = (int8_t)np;
            th->boost_whole = adj_reason == 2;
        }
    }
    if (!fresh) th->t_waiting += ts - th->acct_since;
    th->acct_since = ts;
    th->ready_since = ts;
    th->quantum_left = (int64_t)th->quantum;
    uint8_t ended = fresh ? 0 : th->wait_reason;
    if (fresh) th->created = ts;
    if (s->tracing) {
        etl_synth_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.type = ETL_SYNTH_REC_READY;
        etl_synth_ready *r = &rec.u.ready;
        r->time = ts;
        r->cpu = (uint16_t)c;
        r->why = why;
        r->tid = th->tid;
        r->by_tid = s->cpu[c].cur >= 0 ? s->th[s->cpu[c].cur].tid : 0;
        r->adjust_reason = adj_reason;
        r->adjust_increment = adj_inc;
        r->flags = flags;
        r->wait_reason = ended;
        r->old_priority = before;
        r->new_priority = th->prio;
        r->logged = s->o.ready_events;
        if (s->o.ready_events) {
            etl_ready_thread ev;
            memset(&ev, 0, sizeof ev);
            ev.thread_id = th->tid;
            ev.adjust_reason = adj_reason;
            ev.adjust_increment = adj_inc;
            ev.flags = flags;
            synth_emit_ready(s, c, ts, &ev);
            if (SYNTH_STACKS(s)) synth_stacks_ready(s, c, ts, flags);
        }
        synth_truth(s, &rec);
    }
    place(s, i, ts, (int)c, false);
    return ts;
}

/* The running thread of c (i) waits: switch to the next thread, then begin the wait. */
static void switch_out_wait(synth *s, unsigned c, uint64_t t, uint32_t i, uint8_t reason, uint8_t kind)
{
    sthread *th = &s->th[i];
    uint8_t mode = wait_mode(s, th, reason, kind);
    int32_t nxt = pick_next(s, c);
    uint64_t ts = do_switch(s, c, t, nxt, KS_WAITING, reason, mode, ETL_SYNTH_WHY_WAIT);
    begin_wait(s, i, ts, reason, kind, false);
}

static void new_burst(synth *s, unsigned c, uint32_t i, uint64_t t)
{
    sthread *th = &s->th[i];
    th->burst_end = t + draw_burst(s, th);
    (void)c; /* the caller reschedules the CPU's RUN event */
}

static void emit_total(synth *s, uint32_t i, uint64_t exited)
{
    const sthread *th = &s->th[i];
    etl_synth_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = ETL_SYNTH_REC_THREAD_TOTAL;
    etl_synth_thread_total *t = &rec.u.thread_total;
    t->tid = th->tid;
    t->pid = s->pr[th->proc].pid;
    t->running = th->t_running;
    t->ready = th->t_ready;
    t->waiting = th->t_waiting;
    t->switches_in = th->sw_in;
    t->switches_out = th->sw_out;
    t->created = th->created;
    t->exited = exited;
    t->base_priority = th->base;
    t->name = th->name;
    synth_truth(s, &rec);
}

static void do_exit(synth *s, unsigned c, uint64_t t, uint32_t i)
{
    sthread *th = &s->th[i];
    if (th->lpc_peer >= 0) { /* a server dying with a client waiting: the client is released */
        uint32_t cl = (uint32_t)th->lpc_peer;
        th->lpc_peer = NONE;
        if (s->th[cl].state == TS_WAIT && s->th[cl].wait_kind == WK_LPC_REPLY) {
            s->th[cl].lpc_peer = NONE;
            ready_thread(s, cl, c, t, ETL_SYNTH_READY_LPC, 0, 1, 1, false);
        }
    }
    if (SYNTH_STACKS(s) && s->tracing) synth_stacks_exit(s, c, t, i);
    uint64_t ts = reserve(s, c, t);
    if (s->tracing) synth_emit_thread(s, c, ts, ETL_HOOK_THREAD_END, i, (int32_t)i);
    sproc *p = &s->pr[th->proc];
    p->nthreads--;
    s->sum.threads_exited += s->tracing;
    if (!p->nthreads && p->dynamic) {
        if (SYNTH_STACKS(s) && s->tracing) synth_stacks_process_end(s, c, ts + 1, th->proc, i);
        uint64_t t2 = reserve(s, c, ts + 1);
        if (s->tracing) synth_emit_process(s, c, t2, ETL_HOOK_PROCESS_END, th->proc, (int32_t)i, 0);
        p->alive = false;
        s->sum.processes_exited += s->tracing;
    }
    int32_t nxt = pick_next(s, c);
    uint64_t te = do_switch(s, c, t, nxt, KS_TERMINATED, WR_WR_TERMINATED, 0, ETL_SYNTH_WHY_EXIT);
    if (s->tracing) emit_total(s, i, te);
    th->state = TS_FREE;
    s->th_free[s->th_nfree++] = i;
    s->th_alive--;
}

/* ---- event handlers ------------------------------------------------------------------- */

static void on_burst(synth *s, unsigned c, uint64_t t)
{
    int32_t cur = s->cpu[c].cur;
    if (cur < 0) return;
    uint32_t i = (uint32_t)cur;
    sthread *th = &s->th[i];
    const synth_profile *pf = &synth_profiles[th->profile];
    if (th->exit_at && t >= th->exit_at) {
        do_exit(s, c, t, i);
        return;
    }
    if (pf->lpc_server && th->lpc_peer >= 0) { /* reply, then wait for the next request */
        uint32_t cl = (uint32_t)th->lpc_peer;
        th->lpc_peer = NONE;
        if (s->th[cl].state == TS_WAIT && s->th[cl].wait_kind == WK_LPC_REPLY) {
            s->th[cl].lpc_peer = NONE;
            t = ready_thread(s, cl, c, t, ETL_SYNTH_READY_LPC, 0, 1, 1, false);
        }
        switch_out_wait(s, c, t, i, WR_WR_LPC_RECEIVE, WK_LPC_RECV);
        return;
    }
    if (th->name_pending) {
        uint64_t ts = reserve(s, c, t);
        th->name_pending = 0;
        if (s->tracing) synth_emit_set_name(s, c, ts, i);
        new_burst(s, c, i, ts);
        return;
    }
    if (pf->p_lpc > 0 && s->lpc_n && synth_rng_chance(&s->rng, pf->p_lpc)) {
        uint32_t srv = pool_take(s, (uint32_t)synth_rng_below(&s->rng, s->lpc_n));
        s->th[srv].lpc_peer = (int32_t)i;
        th->lpc_peer = (int32_t)srv;
        t = ready_thread(s, srv, c, t, ETL_SYNTH_READY_LPC, 0, 1, 1, false);
        switch_out_wait(s, c, t, i, WR_WR_LPC_REPLY, WK_LPC_REPLY);
        return;
    }
    if (synth_rng_chance(&s->rng, pf->p_continue)) {
        new_burst(s, c, i, t);
        return;
    }
    uint8_t reason, kind;
    choose_wait(s, th, &reason, &kind);
    switch_out_wait(s, c, t, i, reason, kind);
}

static void on_quantum(synth *s, unsigned c, uint64_t t)
{
    scpu *p = &s->cpu[c];
    if (p->cur < 0) return;
    uint32_t i = (uint32_t)p->cur;
    sthread *th = &s->th[i];
    if (th->base < 16 && th->prio > th->base) {
        if (th->boost_whole) th->prio = th->base;
        else th->prio--;
        if (th->prio == th->base) th->boost_whole = 0;
        update_pp(s, c);
    }
    int top = rq_top_priority(s);
    if (p->standby < 0 && top >= 0 && top >= th->prio) {
        int32_t nxt = rq_pop(s);
        uint64_t ts = do_switch(s, c, t, nxt, KS_READY, WR_WR_QUANTUM_END, 0, ETL_SYNTH_WHY_QUANTUM);
        th->quantum_left = (int64_t)th->quantum;
        th->ready_since = ts;
        rq_insert(s, i, false);
        return;
    }
    th->quantum_left = (int64_t)th->quantum;
    th->q_start = t;
    p->quantum_at = quantum_time(s, t, th->quantum_left);
}

static void on_dispatch(synth *s, unsigned c, uint64_t t)
{
    scpu *p = &s->cpu[c];
    if (p->standby < 0) return;
    int32_t nxt = p->standby;
    int32_t old = p->cur;
    if (old < 0) {
        do_switch(s, c, t, nxt, KS_RUNNING, 0, 0, ETL_SYNTH_WHY_IDLE_EXIT);
        return;
    }
    uint64_t ts = do_switch(s, c, t, nxt, KS_READY, WR_WR_PREEMPTED, 0, ETL_SYNTH_WHY_PREEMPT);
    s->th[old].ready_since = ts;
    place(s, (uint32_t)old, ts, NONE, true);
}

static void on_lock(synth *s, unsigned c, uint64_t t)
{
    scpu *p = &s->cpu[c];
    if (p->cur < 0 || !p->lock_drawn) return;
    uint64_t ts = reserve(s, c, t);
    if (s->tracing) {
        const sthread *th = &s->th[p->cur];
        etl_synth_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.type = ETL_SYNTH_REC_SPINLOCK;
        etl_synth_spinlock *r = &rec.u.spinlock;
        etl_spinlock *l = &r->lock;
        l->spin_lock_address = s->lock_addr[p->lock_site];
        l->caller_address = s->lock_callers[p->lock_site][p->lock_caller];
        l->release_time = synth_cycles(s, ts);
        l->acquire_time = l->release_time - p->lock_hold;
        l->wait_time_in_cycles = p->lock_wait;
        l->spin_count = p->lock_spin;
        l->thread_id = th->tid;
        l->interrupt_count = p->lock_interrupts;
        l->irql = p->lock_irql;
        l->acquire_depth = p->lock_depth;
        l->acquire_mode = s->lock_mode[p->lock_site];
        l->flags = l->acquire_mode;
        l->has_reserved = s->o.os_build >= 9600;
        r->time = ts;
        r->cpu = (uint16_t)c;
        r->hold_cycles = p->lock_hold;
        r->sampled = etl_spinlock_should_log(&s->sampler, c, p->lock_spin, p->lock_hold);
        s->sum.spinlock_acquisitions++;
        if (r->sampled) {
            s->spin_sampled++;
            synth_emit_spinlock(s, c, ts, l);
        }
        synth_truth(s, &rec);
    }
    schedule_lock(s, c, ts);
}

static void on_wake(synth *s, uint32_t i, uint64_t t)
{
    sthread *th = &s->th[i];
    int c;
    uint8_t why, flags = 0;
    switch (th->wait_kind) {
    case WK_TIMER:
    case WK_PERIODIC:
        c = th->wake_cpu;
        why = ETL_SYNTH_READY_TIMER;
        flags = ETL_READY_EXECUTING_DPC;
        break;
    case WK_IO:
        c = th->wake_cpu;
        why = ETL_SYNTH_READY_IO;
        flags = ETL_READY_EXECUTING_DPC;
        break;
    default:
        why = ETL_SYNTH_READY_THREAD;
        c = mpick(s, s->busy_mask);
        if (c < 0) { /* nobody runs: signalled from a DPC */
            c = th->last_cpu;
            flags = ETL_READY_EXECUTING_DPC;
        }
    }
    uint64_t until = busy_until(s, (unsigned)c, t, false);
    if (until) {
        hset(s, i, until);
        return;
    }
    hremove(s, i);
    const synth_wait_param *wp = synth_wait_param_of(th->wait_reason, th->wait_kind);
    ready_thread(s, i, (unsigned)c, t, why, flags, wp->adjust_reason, wp->adjust_increment, false);
}

/* Threads created in a running process: mostly pool workers, short-lived. */
static const struct {
    uint8_t profile, weight;
} churn_mix[] = {{PF_WORKER, 60}, {PF_IO, 20}, {PF_TIMER, 15}, {PF_UI, 5}};

static int churn_profile(synth *s)
{
    uint64_t x = synth_rng_below(&s->rng, 100);
    for (size_t k = 0; k < sizeof churn_mix / sizeof churn_mix[0]; k++) {
        if (x < churn_mix[k].weight) return churn_mix[k].profile;
        x -= churn_mix[k].weight;
    }
    return PF_WORKER;
}

static void on_churn(synth *s, uint64_t t)
{
    uint32_t slot = s->slot_churn;
    uint64_t next = t + us_units(s, synth_rng_exp(&s->rng, 1e6 / (s->o.churn ? s->o.churn : 1)));
    int c = mpick(s, s->busy_mask);
    if (c < 0) {
        hset(s, slot, next);
        return;
    }
    uint64_t until = busy_until(s, (unsigned)c, t, false);
    if (until) {
        hset(s, slot, until);
        return;
    }
    hset(s, slot, next);
    if (!s->th_nfree) return;
    uint32_t creator = (uint32_t)s->cpu[c].cur;
    uint32_t proc = s->th[creator].proc;
    int profile = churn_profile(s);
    if (synth_rng_chance(&s->rng, 0.15)) {
        unsigned tmpl = synth_dynamic_templates[synth_rng_below(&s->rng, synth_dynamic_template_count)];
        int32_t np = synth_spawn_process(s, tmpl, s->pr[proc].pid, true);
        if (np >= 0) {
            proc = (uint32_t)np;
            profile = -1; /* the first thread of a new process: its template's mix */
            uint64_t ts = reserve(s, (unsigned)c, t);
            if (s->tracing) {
                synth_emit_process(s, (unsigned)c, ts, ETL_HOOK_PROCESS_START, proc, (int32_t)creator,
                                   0x103 /* STATUS_PENDING: still running */);
                if (SYNTH_STACKS(s)) synth_stacks_process_start(s, (unsigned)c, ts + 1, proc, creator);
                s->sum.processes_created++;
            }
        }
    }
    int32_t j = synth_spawn_thread(s, proc, proc == 1 ? PF_KWORKER : profile, t, true);
    if (j < 0) return;
    s->th[j].state = TS_READY;
    uint64_t ts = reserve(s, (unsigned)c, t);
    if (s->tracing) {
        synth_emit_thread(s, (unsigned)c, ts, ETL_HOOK_THREAD_START, (uint32_t)j, (int32_t)creator);
        s->sum.threads_created++;
    }
    ready_thread(s, (uint32_t)j, (unsigned)c, ts + 1, ETL_SYNTH_READY_NEW, 0, 0, 0, true);
}

/* ---- rundown and tracing on/off ---------------------------------------------------------- */

/*
 * s->order[0..n): the alive threads grouped by process (in process slot
 * order), in slot order within a process; a counting sort, O(threads +
 * processes). s->pr_start[p] is where process p's threads begin.
 */
static uint32_t order_threads(synth *s)
{
    uint32_t *start = s->pr_start;
    memset(start, 0, (s->pr_used + 1) * sizeof *start);
    for (uint32_t i = 0; i < s->th_cap; i++)
        if (s->th[i].state != TS_FREE) start[s->th[i].proc + 1]++;
    for (uint32_t p = 0; p < s->pr_used; p++) start[p + 1] += start[p];
    uint32_t n = start[s->pr_used];
    for (uint32_t i = 0; i < s->th_cap; i++)
        if (s->th[i].state != TS_FREE) s->order[start[s->th[i].proc]++] = i;
    /* start[p] now holds the end of p's run: shift back to the beginnings. */
    for (uint32_t p = s->pr_used; p > 0; p--) start[p] = start[p - 1];
    start[0] = 0;
    return n;
}

static void rundown(synth *s, uint64_t t, bool end)
{
    uint16_t ph = end ? ETL_HOOK_PROCESS_DC_END : ETL_HOOK_PROCESS_DC_START;
    uint16_t thk = end ? ETL_HOOK_THREAD_DC_END : ETL_HOOK_THREAD_DC_START;
    synth_emit_idle_process(s, 0, reserve(s, 0, t), ph);
    for (unsigned c = 0; c < s->ncpu; c++) synth_emit_idle_thread(s, 0, reserve(s, 0, t), thk, c);
    if (SYNTH_STACKS(s)) synth_stacks_rundown(s, 0, t, end);
    order_threads(s);
    for (uint32_t p = 1; p < s->pr_used; p++) {
        if (!s->pr[p].alive) continue;
        synth_emit_process(s, 0, reserve(s, 0, t), ph, p, -1, 0x103);
        for (uint32_t k = s->pr_start[p]; k < s->pr_start[p + 1]; k++)
            synth_emit_thread(s, 0, reserve(s, 0, t), thk, s->order[k], -1);
        if (SYNTH_STACKS(s)) synth_stacks_rundown(s, p, t, end);
    }
}

static void on_trace_on(synth *s, uint64_t t)
{
    hremove(s, s->slot_trace_on);
    s->tracing = true;
    s->start = t;
    for (uint32_t i = 0; i < s->th_cap; i++) {
        sthread *th = &s->th[i];
        if (th->state == TS_FREE) continue;
        th->t_running = th->t_ready = th->t_waiting = 0;
        th->sw_in = th->sw_out = 0;
        th->acct_since = t;
        th->created = t;
    }
    for (unsigned c = 0; c < s->ncpu; c++) {
        scpu *p = &s->cpu[c];
        p->t_idle = 0;
        p->switches = 0;
        p->acct_since = t;
        p->batch_index = p->batch_records = 0;
    }
    etl_synth_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = ETL_SYNTH_REC_META;
    etl_synth_meta *m = &rec.u.meta;
    m->seed = s->o.seed;
    m->ncpu = s->ncpu;
    m->pointer_size = s->ptr;
    m->clock_type = s->o.clock_type;
    m->os_build = s->o.os_build;
    m->bias = s->bias;
    m->cswitch_format = s->o.cswitch_format;
    m->pmc_count = s->o.pmc_count;
    m->ticks_per_sec = s->ups;
    m->timer_tick = s->tick;
    m->cycles_per_sec = s->cps;
    m->start = t;
    m->header_ts = s->header_ts;
    m->spinlocks = s->o.spinlocks;
    m->spinlock_info = s->sampler.cfg;
    m->stacks = s->stk != NULL;
    m->profile_interval = s->o.profile_interval;
    m->modules = s->stk ? s->o.modules : NULL;
    synth_truth(s, &rec);
    rundown(s, t + 1, false);
    if (SYNTH_STACKS(s)) synth_stacks_start(s, t + 1);
}

static void finish(synth *s)
{
    uint64_t e = s->now;
    if (s->stop_at != UINT64_MAX && s->stop_at > e) e = s->stop_at;
    for (unsigned c = 0; c < s->ncpu; c++)
        if (s->cpu[c].next_free && s->cpu[c].next_free - 1 > e) e = s->cpu[c].next_free - 1;
    s->end = e;
    for (unsigned c = 0; c < s->ncpu; c++) {
        scpu *p = &s->cpu[c];
        if (p->cur >= 0) {
            sthread *th = &s->th[p->cur];
            th->t_running += e - th->acct_since;
            th->acct_since = e;
        } else {
            p->t_idle += e - p->acct_since;
        }
        p->acct_since = e;
    }
    for (uint32_t i = 0; i < s->th_cap; i++) {
        sthread *th = &s->th[i];
        if (th->state == TS_READY || th->state == TS_STANDBY) th->t_ready += e - th->acct_since;
        else if (th->state == TS_WAIT) th->t_waiting += e - th->acct_since;
        else continue;
        th->acct_since = e;
    }
    if (SYNTH_STACKS(s)) synth_stacks_finish(s, e);
    /* The batches still open: written when tracing stops, after every other event of their CPU. */
    if (s->compact) {
        etl_ccswap_batch b;
        while (!s->err && etl_ccswap_encoder_flush(&s->enc, &b) == ETL_OK)
            synth_emit_batch(s, &b, reserve(s, b.cpu, e));
    }
    rundown(s, e, true);
    for (uint32_t i = 0; i < s->th_cap; i++)
        if (s->th[i].state != TS_FREE) emit_total(s, i, 0);
    for (unsigned c = 0; c < s->ncpu; c++) {
        etl_synth_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.type = ETL_SYNTH_REC_CPU_TOTAL;
        etl_synth_cpu_total *ct = &rec.u.cpu_total;
        ct->cpu = (uint16_t)c;
        ct->idle = s->cpu[c].t_idle;
        ct->busy = e - s->start - s->cpu[c].t_idle;
        ct->switches = s->cpu[c].switches;
        ct->batches = s->cpu[c].batch_index;
        for (unsigned k = 0; k < ETL_SYNTH_MAX_PMC; k++) ct->pmc[k] = s->cpu[c].pmc[k];
        synth_truth(s, &rec);
    }
    etl_synth_rec rec;
    memset(&rec, 0, sizeof rec);
    rec.type = ETL_SYNTH_REC_END;
    rec.u.end.end = e;
    rec.u.end.switches = s->sum.switches;
    rec.u.end.ready = s->sum.ready_events;
    rec.u.end.spinlocks = s->sum.spinlock_acquisitions;
    rec.u.end.spinlocks_sampled = s->spin_sampled;
    rec.u.end.batches = s->sum.batches;
    synth_truth(s, &rec);
}

/* ---- the main loop ---------------------------------------------------------------------- */

static void on_cpu_event(synth *s, uint32_t slot, uint64_t t)
{
    unsigned c = (slot - s->slot_cpu0) / CS_COUNT, k = (slot - s->slot_cpu0) % CS_COUNT;
    scpu *p = &s->cpu[c];
    if (k == CS_DISPATCH) {
        uint64_t until = busy_until(s, c, t, false);
        if (until) {
                hset(s, slot, until);
            return;
        }
        hremove(s, slot);
        on_dispatch(s, c, t);
        return;
    }
    if (p->cur < 0) {
        hremove(s, slot);
        return;
    }
    if (p->lock_on && !p->lock_drawn && t >= p->lock_a) { /* the window opens */
        draw_lock(s, c, t);
        resched_run(s, c);
        return;
    }
    bool lock_due = p->lock_drawn && t >= p->lock_r;
    uint64_t until = busy_until(s, c, t, lock_due);
    if (until) {
        hset(s, slot, until);
        return;
    }
    if (lock_due) on_lock(s, c, t);
    else if (t >= s->th[p->cur].burst_end) on_burst(s, c, t);
    else on_quantum(s, c, t);
    resched_run(s, c);
}

/* The writer's failure: the file and the system's reason (a full disk, a file size limit), as every output says it. */
static void write_failed(synth *s, etl_status st, const char *what)
{
    /* A write the writer refused: its reason (etl_writer_why), as for a failed write the system's. */
    bool told = st == ETL_E_IO || (s->w && etl_writer_why(s->w, NULL) == st);
    if (!told || s->err || !s->diag || s->diag->msg[0]) {
        synth_fail(s, st, what);
        return;
    }
    s->err = st;
    etl_writer_diag(s->w, st, s->diag);
}

static void run_loop(synth *s)
{
    uint32_t slot;
    uint64_t t;
    uint64_t total = s->o.target_bytes ? s->o.target_bytes : s->o.duration_ns;
    while (!s->err && htop(s, &slot, &t)) {
        if (s->tracing) {
            if (t > s->stop_at) break;
            if ((s->pops & 255) == 0) {
                /* Bytes as of the last chunk handed to the writer: deterministic (pipe.c). */
                if (s->o.target_bytes && synth_pipe_bytes(s->pipe) >= s->o.target_bytes) break;
                etl_status pst = synth_pipe_error(s->pipe);
                if (pst != ETL_OK) {
                    write_failed(s, pst, "writing an event");
                    break;
                }
                if (s->o.on_progress && (s->pops & 65535) == 0) {
                    uint64_t done = s->o.target_bytes
                                        ? synth_pipe_bytes(s->pipe)
                                        : muldiv(t - s->start, 1000000000u, s->ups);
                    s->o.on_progress(s->o.progress_ctx, done, total);
                }
            }
        }
        s->pops++;
        if (t > s->now) s->now = t;
        if (slot < s->th_cap) on_wake(s, slot, t);
        else if (slot < s->slot_churn) on_cpu_event(s, slot, t);
        else if (slot == s->slot_churn) on_churn(s, t);
        else if (slot == s->slot_trace_on) on_trace_on(s, t);
        else synth_stacks_on_slot(s, slot, t);
    }
}

/* ---- set-up ------------------------------------------------------------------------------ */

static unsigned kernel_event_version(uint32_t build)
{
    static const struct {
        uint32_t build;
        unsigned v;
    } t[] = {{22000, 85}, {19041, 80}, {17763, 70}, {14393, 65}, {10240, 60}, {9600, 54}, {9200, 42}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (build >= t[i].build) return t[i].v;
    return 42;
}

/*
 * The wait factor f that makes the expected busy share of all CPUs o.load:
 * thread i is busy B_i per wake-up and waits F_i + f W_i (timers fixed,
 * I/O and signals scaled), so sum B_i / (B_i + F_i + f W_i) = load * ncpu,
 * solved by bisection on log f. Queueing and churn move the real figure a
 * little; --load 100 saturates the machine.
 */
static double solve_wait_factor(synth *s)
{
    double busy[PF_COUNT], sc[PF_COUNT], fx[PF_COUNT];
    uint32_t count[PF_COUNT] = {0};
    double tick_us = (double)s->tick / s->units_per_us;
    for (unsigned k = 0; k < PF_COUNT; k++) {
        busy[k] = synth_profile_busy_us(k);
        synth_profile_wait_us(k, tick_us, &sc[k], &fx[k]);
    }
    for (uint32_t i = 0; i < s->th_cap; i++)
        if (s->th[i].state != TS_FREE) count[s->th[i].profile]++;
    /* New threads start with a busy period: take the churn's share off the target. */
    double churn_busy = 0;
    for (size_t k = 0; k < sizeof churn_mix / sizeof churn_mix[0]; k++)
        churn_busy += churn_mix[k].weight / 100.0 * busy[churn_mix[k].profile];
    double target = s->o.load / 100.0 * s->ncpu, dyn = s->o.churn * churn_busy / 1e6;
    target = dyn < 0.9 * target ? target - dyn : 0.1 * target;
    double lo = synth_log(1e-3), hi = synth_log(1e4);
    for (int it = 0; it < 60; it++) {
        double mid = (lo + hi) / 2, f = synth_exp(mid), sum = 0;
        for (unsigned k = 0; k < PF_COUNT; k++)
            if (count[k]) sum += count[k] * busy[k] / (busy[k] + fx[k] + f * sc[k]);
        if (sum > target) lo = mid; /* too busy: longer waits */
        else hi = mid;
    }
    return synth_exp((lo + hi) / 2);
}

/* A partial trace at path removed: a regular file only, never what a caller named that is not one (a device such as
 * /dev/null, a symbolic link), which the run wrote through and must leave (reviewer71). True when it was removed. */
static bool remove_partial(const char *path)
{
    etl_file_info fi;
    return etl_stat(path, false, &fi) == 0 && fi.is_reg && !fi.is_link && etl_unlink(path) == 0;
}

static etl_status setup(synth *s, const char *path)
{
    const etl_synth_options *o = &s->o;
    synth_rng_seed(&s->rng, o->seed);
    s->ncpu = o->ncpu;
    s->ptr = o->pointer_size;
    s->full = o->cswitch_format & ETL_SYNTH_CSWITCH_FULL;
    s->compact = (o->cswitch_format & ETL_SYNTH_CSWITCH_COMPACT) != 0;
    s->bias = etl_max_wait_reason_for_build(o->os_build);
    s->cswitch_version = o->os_build >= 16299 ? 4 : o->os_build >= 15063 ? 3 : 2;
    s->thread_version = 3;
    s->thread_names = o->os_build >= 14393; /* ThreadName in Thread events, and SetName */

    /* Clocks. */
    s->cps = (uint64_t)o->cpu_mhz * 1000000u;
    s->ups = o->clock_type == ETL_CLOCK_QPC ? o->perf_freq
             : o->clock_type == ETL_CLOCK_SYSTEM_TIME ? 10000000u : s->cps;
    uint64_t g = gcd64(s->cps, s->ups);
    s->cyc_num = s->cps / g;
    s->cyc_den = s->ups / g;
    s->units_per_us = (double)s->ups / 1e6;
    s->tick = muldiv(o->timer_resolution, s->ups, 10000000u);
    if (!s->tick) s->tick = 1;

    /* When: 2026-01-01 plus up to a day; the machine booted 1 to 9 hours before. */
    uint64_t start_time = 134116992000000000ull + synth_rng_below(&s->rng, 864000000000ull);
    uint64_t uptime_100ns = 36000000000ull + synth_rng_below(&s->rng, 288000000000ull);
    uint64_t boot_time = start_time - uptime_100ns;
    if (o->clock_type == ETL_CLOCK_SYSTEM_TIME) {
        s->header_ts = start_time;
        s->cyc_origin = boot_time;
    } else {
        s->header_ts = muldiv(uptime_100ns, s->ups, 10000000u);
        s->cyc_origin = 0;
    }
    s->cyc_base = 0;
    s->user_sid[0] = (uint32_t)synth_rng_u64(&s->rng);
    s->user_sid[1] = (uint32_t)synth_rng_u64(&s->rng);
    s->user_sid[2] = (uint32_t)synth_rng_u64(&s->rng);
    s->next_id = 0x100 + 4 * (uint32_t)synth_rng_below(&s->rng, 64);

    /* Memory: everything sized once. */
    uint32_t extra = o->threads / 2 + 64;
    s->th_cap = o->threads + extra;
    s->pr_cap = o->processes + 2 + o->processes / 2 + 16;
    s->cpu = calloc(s->ncpu, sizeof *s->cpu);
    s->th = calloc(s->th_cap, sizeof *s->th);
    s->th_free = calloc(s->th_cap, sizeof *s->th_free);
    s->order = calloc(s->th_cap, sizeof *s->order);
    s->lpc_pool = calloc(s->th_cap, sizeof *s->lpc_pool);
    s->pr = calloc(s->pr_cap, sizeof *s->pr);
    s->pr_start = calloc(s->pr_cap + 1, sizeof *s->pr_start);
    s->spin_ctr = calloc(s->ncpu, sizeof *s->spin_ctr);
    s->preempt_prio = calloc(s->ncpu, sizeof *s->preempt_prio);
    s->enc_cpu = calloc(s->ncpu, sizeof *s->enc_cpu);
    if (!s->cpu || !s->th || !s->th_free || !s->order || !s->lpc_pool || !s->pr || !s->pr_start ||
        !s->spin_ctr || !s->enc_cpu || !s->preempt_prio)
        return ETL_E_NOMEM;
    s->slot_cpu0 = s->th_cap;
    s->slot_churn = s->slot_cpu0 + s->ncpu * CS_COUNT;
    s->slot_trace_on = s->slot_churn + 1;
    s->slot_prof0 = s->slot_trace_on + 1;
    s->slot_image = s->slot_prof0 + s->ncpu;
    etl_status st = synth_heap_init(&s->wakes, s->th_cap);
    if (st != ETL_OK) return st;
    st = synth_heap_init(&s->cpuq, (o->stacks ? s->slot_image : s->slot_trace_on) + 1 - s->slot_cpu0);
    if (st != ETL_OK) return st;
    if (o->stacks && (st = synth_stacks_init(s)) != ETL_OK) return st;
    for (uint32_t i = 0; i < s->th_cap; i++) s->th_free[i] = s->th_cap - 1 - i;
    s->th_nfree = s->th_cap;
    for (int p = 0; p < 32; p++) s->rq_head[p] = s->rq_tail[p] = NONE;

    etl_spinlock_info info = o->spinlock_info;
    info.has_hold_threshold = o->os_build >= 9600;
    if (o->spinlocks) {
        st = etl_spinlock_sampler_init(&s->sampler, &info, s->spin_ctr, s->ncpu);
        if (st != ETL_OK) return st;
    }
    if (s->compact) {
        uint64_t age = etl_ccswap_max_age(o->timer_resolution, s->ups);
        st = etl_ccswap_encoder_init(&s->enc, s->enc_cpu, s->ncpu, s->bias, age);
        if (st != ETL_OK) return st;
    }

    /* The world at the start of the warm-up: every CPU idle, every thread waiting. */
    uint64_t t0 = s->header_ts - us_units(s, WARMUP_US);
    for (unsigned c = 0; c < s->ncpu; c++) {
        scpu *p = &s->cpu[c];
        p->cur = p->standby = NONE;
        p->next_free = t0;
        p->idle_since = p->acct_since = p->pmc_time = t0;
        /* Counters since boot: cycles about a third busy. */
        uint64_t cyc = synth_cycles(s, t0);
        p->pmc[0] = cyc / 3 + synth_rng_below(&s->rng, 1u << 30);
        p->pmc[1] = p->pmc[0] / 2 + synth_rng_below(&s->rng, 1u << 30);
        p->pmc[2] = p->pmc[1] / 900;
        p->pmc[3] = p->pmc[1] / 150;
        mset(s->idle_mask, c);
        s->preempt_prio[c] = 127;
    }
    synth_init_lock_sites(s);
    s->pr[0].alive = true; /* Idle */
    s->pr[0].pid = 0;
    s->pr_used = 2;
    synth_spawn_process(s, TPL_SYSTEM, 0, false);
    for (uint32_t k = 1; k < o->processes; k++) {
        unsigned tmpl = synth_initial_order[(k - 1) % synth_initial_order_count];
        synth_spawn_process(s, tmpl, k < 4 ? 4 : s->pr[2 + (k - 1) % 3].pid, false);
    }
    /* Threads: one per process, System a tenth (with the zero page thread), the rest at random. */
    uint32_t nsys = o->threads / 10 > 1 ? o->threads / 10 : 1;
    uint32_t made = 0;
    for (uint32_t p = 1; p < s->pr_used && made < o->threads; p++, made++)
        synth_spawn_thread(s, p, p == 1 && nsys > 1 ? PF_ZERO : -1, t0, false);
    for (uint32_t k = 1; k < nsys && made < o->threads; k++, made++)
        synth_spawn_thread(s, 1, -1, t0, false);
    while (made < o->threads) {
        uint32_t p = s->pr_used > 2 ? 2 + (uint32_t)synth_rng_below(&s->rng, s->pr_used - 2) : 1;
        synth_spawn_thread(s, p, -1, t0, false);
        made++;
    }
    s->wait_factor = solve_wait_factor(s);
    for (uint32_t i = 0; i < s->th_cap; i++) {
        sthread *th = &s->th[i];
        if (th->state != TS_READY) continue; /* a thread just made */
        th->acct_since = t0;
        th->ready_since = t0;
        uint8_t reason, kind;
        choose_wait(s, th, &reason, &kind);
        begin_wait(s, i, t0, reason, kind, true);
    }
    hset(s, s->slot_trace_on, s->header_ts);
    if (o->churn) hset(s, s->slot_churn, t0 + us_units(s, synth_rng_exp(&s->rng, 1e6 / o->churn)));
    s->stop_at = o->duration_ns ? s->header_ts + muldiv(o->duration_ns, s->ups, 1000000000u) : UINT64_MAX;
    s->now = t0;

    /* The writer. */
    etl_writer_options wo;
    memset(&wo, 0, sizeof wo);
    wo.sz = sizeof wo;
    wo.pointer_size = s->ptr;
    wo.clock_type = o->clock_type;
    wo.perf_freq = o->clock_type == ETL_CLOCK_QPC ? o->perf_freq : 10000000u;
    wo.cpu_mhz = o->cpu_mhz;
    wo.ncpu = s->ncpu;
    wo.buffer_size = o->buffer_size;
    wo.os_major = o->os_build >= 10240 ? 10 : 6;
    wo.os_minor = o->os_build >= 10240 ? 0 : o->os_build >= 9600 ? 3 : 2;
    wo.os_build = o->os_build;
    wo.start_time = start_time;
    wo.boot_time = boot_time;
    wo.start_ts = s->header_ts;
    wo.timer_resolution = o->timer_resolution;
    wo.log_file_mode = 0x00000001u | 0x02000000u; /* FILE_MODE_SEQUENTIAL | SYSTEM_LOGGER_MODE */
    wo.compress = o->compress;
    wo.log_file_name = o->log_file_name;
    etl_groupmask_set(&wo.group_mask, ETL_PERF_PROCESS);
    etl_groupmask_set(&wo.group_mask, ETL_PERF_THREAD);
    etl_groupmask_set(&wo.group_mask, ETL_PERF_CONTEXT_SWITCH);
    if (s->compact) etl_groupmask_set(&wo.group_mask, ETL_PERF_COMPACT_CSWITCH);
    if (o->ready_events) etl_groupmask_set(&wo.group_mask, ETL_PERF_DISPATCHER);
    if (o->spinlocks) etl_groupmask_set(&wo.group_mask, ETL_PERF_SPINLOCK);
    if (o->stacks) {
        etl_groupmask_set(&wo.group_mask, ETL_PERF_LOADER);
        etl_groupmask_set(&wo.group_mask, ETL_PERF_PROFILE);
    }
    wo.group_mask.kernel_event_version = kernel_event_version(o->os_build);
    wo.header_tid = 0;
    wo.header_pid = 0;
    st = etl_writer_open(path, &wo, &s->w, s->diag);
    if (st != ETL_OK) return st;
    st = synth_pipe_open(&s->pipe, s->w, o->target_bytes);
    if (st != ETL_OK) {
        etl_writer_close(s->w, s->header_ts, NULL);
        s->w = NULL;
        remove_partial(path);
    }
    return st;
}

static void teardown(synth *s)
{
    synth_heap_free(&s->wakes);
    synth_heap_free(&s->cpuq);
    free(s->cpu);
    free(s->th);
    free(s->th_free);
    free(s->order);
    free(s->lpc_pool);
    free(s->pr);
    free(s->pr_start);
    free(s->spin_ctr);
    free(s->preempt_prio);
    free(s->enc_cpu);
    synth_stacks_free(s);
}

etl_status etl_synth_run(const char *path, const etl_synth_options *o, etl_synth_summary *summary,
                         etl_diag *diag)
{
    if (diag) {
        memset(diag, 0, sizeof *diag);
        diag->file_offset = UINT64_MAX;
    }
    if (summary) memset(summary, 0, sizeof *summary);
    if (!path) {
        if (diag) {
            diag->status = ETL_E_INVALID_ARG;
            snprintf(diag->msg, sizeof diag->msg, "no path to write the trace to");
        }
        return ETL_E_INVALID_ARG;
    }
    etl_status st = etl_synth_validate(o, diag);
    if (st != ETL_OK) return st;
    synth *s = calloc(1, sizeof *s);
    if (!s) return ETL_E_NOMEM;
    etl_synth_options_init(&s->o); /* base.h's rule, as validated */
    etl_opts_take(&s->o, sizeof s->o, o);
    s->diag = diag;
    st = setup(s, path);
    bool created = st == ETL_OK; /* setup's failures leave none (its writer's open failed, or it removed it) */
    if (st == ETL_OK) {
        run_loop(s);
        if (!s->err) finish(s);
        uint64_t end_ts = s->end;
        for (unsigned c = 0; c < s->ncpu; c++)
            if (s->cpu[c].next_free > end_ts) end_ts = s->cpu[c].next_free;
        etl_status pst = synth_pipe_close(s->pipe);
        s->pipe = NULL;
        if (pst != ETL_OK) write_failed(s, pst, "writing an event");
        if (!s->err) {
            etl_status fst = etl_writer_flush(s->w);
            if (fst != ETL_OK) write_failed(s, fst, "writing the last buffers");
        }
        s->sum.events = etl_writer_events(s->w);
        s->sum.buffers = etl_writer_buffers(s->w);
        etl_diag cd;
        memset(&cd, 0, sizeof cd);
        etl_status cst = etl_writer_close(s->w, end_ts, &cd);
        s->w = NULL;
        if (!s->err && cst != ETL_OK) {
            synth_fail(s, cst, "closing the file");
            if (diag && cd.msg[0]) *diag = cd;
        }
        st = s->err;
        s->sum.start_ts = s->start;
        s->sum.end_ts = s->end;
        s->sum.ticks_per_sec = s->ups;
        s->sum.simulated_ns = muldiv(s->end - s->start, 1000000000u, s->ups);
        etl_file_info sb;
        if (etl_stat(path, true, &sb) == 0) s->sum.bytes = sb.size;
        s->sum.ccswap = s->enc.stats;
        if (summary) *summary = s->sum;
    } else if (diag && !diag->msg[0]) {
        diag->status = st;
        snprintf(diag->msg, sizeof diag->msg, "%s: %s", path, etl_status_str(st));
    }
    /* A run that failed or was stopped once path was created leaves nothing there: a partial trace would read
     * as a whole, shorter one. */
    if (st != ETL_OK && created && remove_partial(path) && summary) {
        /* The numbers of the file removed describe nothing there: 0, as for nothing written. */
        summary->events = 0;
        summary->bytes = 0;
        summary->buffers = 0;
    }
    teardown(s);
    free(s);
    return st;
}

/*
 * truth.c - the ground truth as JSON lines: one object per record, "type"
 * first, then the record's fields in a fixed order with the names of
 * etlkit/synth.h. Numbers are raw (ticks, cycles, enum values); the few
 * strings are names. Formatting is done by hand into a line buffer (no
 * printf per field), so a truth file costs little next to the trace.
 */
#include <string.h>
#include "synth_internal.h"

typedef struct line {
    char b[1536];
    size_t n;
} line;

static void raw(line *l, const char *s)
{
    size_t k = strlen(s);
    if (l->n + k < sizeof l->b) {
        memcpy(l->b + l->n, s, k);
        l->n += k;
    }
}

static void u64(line *l, uint64_t v)
{
    char t[20];
    size_t k = 0;
    do {
        t[k++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    if (l->n + k >= sizeof l->b) return;
    while (k) l->b[l->n++] = t[--k];
}

static void i64(line *l, int64_t v)
{
    if (v < 0) {
        raw(l, "-");
        u64(l, (uint64_t)0 - (uint64_t)v);
    } else {
        u64(l, (uint64_t)v);
    }
}

static void ku(line *l, const char *k, uint64_t v)
{
    raw(l, ",\"");
    raw(l, k);
    raw(l, "\":");
    u64(l, v);
}

static void ki(line *l, const char *k, int64_t v)
{
    raw(l, ",\"");
    raw(l, k);
    raw(l, "\":");
    i64(l, v);
}

static void kb(line *l, const char *k, bool v)
{
    raw(l, ",\"");
    raw(l, k);
    raw(l, v ? "\":true" : "\":false");
}

static void ks(line *l, const char *k, const char *v)
{
    static const char hex[] = "0123456789abcdef";
    raw(l, ",\"");
    raw(l, k);
    raw(l, "\":\"");
    for (const char *p = v ? v : ""; *p && l->n + 8 < sizeof l->b; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"' || c == '\\') {
            l->b[l->n++] = '\\';
            l->b[l->n++] = (char)c;
        } else if (c < 0x20) {
            l->b[l->n++] = '\\';
            l->b[l->n++] = 'u';
            l->b[l->n++] = '0';
            l->b[l->n++] = '0';
            l->b[l->n++] = hex[c >> 4];
            l->b[l->n++] = hex[c & 15];
        } else {
            l->b[l->n++] = (char)c;
        }
    }
    raw(l, "\"");
}

/* Addresses as "0x..." strings: kernel pointers do not fit a signed 64-bit JSON integer. */
static void kx(line *l, const char *k, uint64_t v)
{
    static const char hex[] = "0123456789abcdef";
    char t[16];
    size_t n = 0;
    do {
        t[n++] = hex[v & 15];
        v >>= 4;
    } while (v);
    raw(l, ",\"");
    raw(l, k);
    raw(l, "\":\"0x");
    if (l->n + n + 1 >= sizeof l->b) return;
    while (n) l->b[l->n++] = t[--n];
    raw(l, "\"");
}

static void type(line *l, const char *t)
{
    l->n = 0;
    raw(l, "{\"type\":\"");
    raw(l, t);
    raw(l, "\"");
}

static const char *const why_names[] = {"wait", "preempt", "quantum", "exit", "idle"};
static const char *const ready_names[] = {"timer", "io", "thread", "lpc", "new"};
static const char *const life_names[] = {"start", "end", "dcstart", "dcend", "setname"};
static const char *const state_names[] = {"waiting", "ready", "standby", "running", "terminated"};

static const char *name_of(const char *const *t, size_t n, unsigned v)
{
    return v < n ? t[v] : "?";
}
#define NAME(t, v) name_of(t, sizeof t / sizeof t[0], v)

static void pmc(line *l, unsigned n, const uint64_t *v)
{
    raw(l, ",\"pmc\":[");
    for (unsigned k = 0; k < n && k < ETL_SYNTH_MAX_PMC; k++) {
        if (k) raw(l, ",");
        u64(l, v[k]);
    }
    raw(l, "]");
}

static void format(line *l, const etl_synth_rec *r)
{
    switch (r->type) {
    case ETL_SYNTH_REC_META: {
        const etl_synth_meta *m = &r->u.meta;
        type(l, "meta");
        ku(l, "seed", m->seed);
        ku(l, "ncpu", m->ncpu);
        ku(l, "pointer_size", m->pointer_size);
        ku(l, "clock_type", m->clock_type);
        ku(l, "os_build", m->os_build);
        ku(l, "bias", m->bias);
        ku(l, "cswitch_format", m->cswitch_format);
        ku(l, "pmc_count", m->pmc_count);
        ku(l, "ticks_per_sec", m->ticks_per_sec);
        ku(l, "timer_tick", m->timer_tick);
        ku(l, "cycles_per_sec", m->cycles_per_sec);
        ku(l, "start", m->start);
        ku(l, "header_ts", m->header_ts);
        kb(l, "spinlocks", m->spinlocks);
        ku(l, "spin_threshold", m->spinlock_info.spin_lock_spin_threshold);
        ku(l, "acquire_sample_rate", m->spinlock_info.spin_lock_acquire_sample_rate);
        ku(l, "contention_sample_rate", m->spinlock_info.spin_lock_contention_sample_rate);
        ku(l, "hold_threshold", m->spinlock_info.spin_lock_hold_threshold);
        kb(l, "has_hold_threshold", m->spinlock_info.has_hold_threshold);
        break;
    }
    case ETL_SYNTH_REC_SWITCH: {
        const etl_synth_switch *w = &r->u.sw;
        type(l, "switch");
        ku(l, "time", w->time);
        ku(l, "cpu", w->cpu);
        ks(l, "why", NAME(why_names, w->why));
        ku(l, "old_tid", w->old_tid);
        ku(l, "new_tid", w->new_tid);
        ku(l, "old_pid", w->old_pid);
        ku(l, "new_pid", w->new_pid);
        ki(l, "old_priority", w->old_priority);
        ki(l, "new_priority", w->new_priority);
        ki(l, "old_base_priority", w->old_base_priority);
        ki(l, "new_base_priority", w->new_base_priority);
        ku(l, "old_state", w->old_state);
        ku(l, "old_wait_reason", w->old_wait_reason);
        ku(l, "old_wait_mode", w->old_wait_mode);
        ku(l, "previous_cstate", w->previous_cstate);
        ku(l, "old_ideal_processor", w->old_ideal_processor);
        ku(l, "new_wait_time", w->new_wait_time);
        ki(l, "old_remaining_quantum", w->old_remaining_quantum);
        if (w->pmc_count) pmc(l, w->pmc_count, w->pmc);
        kb(l, "cswitch", w->cswitch);
        kb(l, "compact", w->compact);
        if (w->compact) {
            ks(l, "form", etl_ccswap_form_name(w->form));
            ku(l, "batch", w->batch);
            ku(l, "batch_record", w->batch_record);
        }
        break;
    }
    case ETL_SYNTH_REC_READY: {
        const etl_synth_ready *y = &r->u.ready;
        type(l, "ready");
        ku(l, "time", y->time);
        ku(l, "cpu", y->cpu);
        ks(l, "why", NAME(ready_names, y->why));
        ku(l, "tid", y->tid);
        ku(l, "by_tid", y->by_tid);
        ku(l, "adjust_reason", y->adjust_reason);
        ki(l, "adjust_increment", y->adjust_increment);
        ku(l, "flags", y->flags);
        ku(l, "wait_reason", y->wait_reason);
        ki(l, "old_priority", y->old_priority);
        ki(l, "new_priority", y->new_priority);
        kb(l, "logged", y->logged);
        break;
    }
    case ETL_SYNTH_REC_SPINLOCK: {
        const etl_synth_spinlock *k = &r->u.spinlock;
        type(l, "spinlock");
        ku(l, "time", k->time);
        ku(l, "cpu", k->cpu);
        ku(l, "tid", k->lock.thread_id);
        kx(l, "address", k->lock.spin_lock_address);
        kx(l, "caller", k->lock.caller_address);
        ku(l, "acquire_time", k->lock.acquire_time);
        ku(l, "release_time", k->lock.release_time);
        ku(l, "spin_count", k->lock.spin_count);
        ku(l, "wait_cycles", k->lock.wait_time_in_cycles);
        ku(l, "hold_cycles", k->hold_cycles);
        ku(l, "acquire_mode", k->lock.acquire_mode);
        ku(l, "irql", k->lock.irql);
        ku(l, "depth", k->lock.acquire_depth);
        ku(l, "interrupt_count", k->lock.interrupt_count);
        kb(l, "sampled", k->sampled);
        break;
    }
    case ETL_SYNTH_REC_THREAD: {
        const etl_synth_thread *t = &r->u.thread;
        type(l, "thread");
        ks(l, "event", NAME(life_names, t->event));
        ku(l, "time", t->time);
        ku(l, "cpu", t->cpu);
        ku(l, "hook", t->hook);
        ku(l, "tid", t->tid);
        ku(l, "pid", t->pid);
        ku(l, "header_tid", t->header_tid);
        ku(l, "header_pid", t->header_pid);
        ki(l, "base_priority", t->base_priority);
        ks(l, "state", NAME(state_names, t->state));
        if (t->state == ETL_SYNTH_TS_WAITING) ku(l, "wait_reason", t->wait_reason);
        if (t->state == ETL_SYNTH_TS_RUNNING || t->state == ETL_SYNTH_TS_STANDBY)
            ku(l, "on_cpu", t->on_cpu);
        ks(l, "name", t->name);
        break;
    }
    case ETL_SYNTH_REC_PROCESS: {
        const etl_synth_process *p = &r->u.process;
        type(l, "process");
        ks(l, "event", NAME(life_names, p->event));
        ku(l, "time", p->time);
        ku(l, "cpu", p->cpu);
        ku(l, "hook", p->hook);
        ku(l, "pid", p->pid);
        ku(l, "parent_pid", p->parent_pid);
        ku(l, "session_id", p->session_id);
        ki(l, "exit_status", p->exit_status);
        ku(l, "header_tid", p->header_tid);
        ku(l, "header_pid", p->header_pid);
        ks(l, "image", p->image);
        ks(l, "command_line", p->command_line);
        break;
    }
    case ETL_SYNTH_REC_BATCH: {
        const etl_synth_batch *b = &r->u.batch;
        type(l, "batch");
        ku(l, "time", b->time);
        ku(l, "cpu", b->cpu);
        ku(l, "index", b->index);
        ku(l, "first_time", b->first_time);
        ku(l, "last_time", b->last_time);
        ku(l, "records", b->records);
        ku(l, "bytes", b->bytes);
        ks(l, "reason", etl_ccswap_flush_reason_name(b->reason));
        break;
    }
    case ETL_SYNTH_REC_THREAD_TOTAL: {
        const etl_synth_thread_total *t = &r->u.thread_total;
        type(l, "thread_total");
        ku(l, "tid", t->tid);
        ku(l, "pid", t->pid);
        ku(l, "running", t->running);
        ku(l, "ready", t->ready);
        ku(l, "waiting", t->waiting);
        ku(l, "switches_in", t->switches_in);
        ku(l, "switches_out", t->switches_out);
        ku(l, "created", t->created);
        ku(l, "exited", t->exited);
        ki(l, "base_priority", t->base_priority);
        ks(l, "name", t->name);
        break;
    }
    case ETL_SYNTH_REC_CPU_TOTAL: {
        const etl_synth_cpu_total *c = &r->u.cpu_total;
        type(l, "cpu_total");
        ku(l, "cpu", c->cpu);
        ku(l, "idle", c->idle);
        ku(l, "busy", c->busy);
        ku(l, "switches", c->switches);
        ku(l, "batches", c->batches);
        pmc(l, ETL_SYNTH_MAX_PMC, c->pmc);
        break;
    }
    default: {
        const etl_synth_end *e = &r->u.end;
        type(l, "end");
        ku(l, "end", e->end);
        ku(l, "switches", e->switches);
        ku(l, "ready", e->ready);
        ku(l, "spinlocks", e->spinlocks);
        ku(l, "spinlocks_sampled", e->spinlocks_sampled);
        ku(l, "batches", e->batches);
        break;
    }
    }
    raw(l, "}\n");
}

int etl_synth_truth_jsonl(void *ctx, const etl_synth_rec *rec)
{
    FILE *f = ctx;
    line l;
    format(&l, rec);
    return fwrite(l.b, 1, l.n, f) == l.n ? 0 : -1;
}

/*
 * truth.c - the ground truth as JSON lines: one object per record, "type"
 * first, then the record's fields in a fixed order with the names of
 * etlkit/synth.h. Numbers are raw (ticks, cycles, enum values); the few
 * strings are names. Written with the library's line writer (out/json.h:
 * no printf per field), so a truth file costs little next to the trace.
 */
#include "out/json.h"
#include "synth_internal.h"

/* A record's line: the longest (a process with its command line, a sample with a 64-frame stack) fits. */
enum { LINE_CAP = 4096 };

static void type(ln_buf *l, const char *t)
{
    l->n = 0;
    l->first = 1;
    ln_raw(l, "{", 1);
    ln_s(l, "type", t);
}

static const char *const why_names[] = {"wait", "preempt", "quantum", "exit", "idle"};
static const char *const ready_names[] = {"timer", "io", "thread", "lpc", "new"};
static const char *const life_names[] = {"start", "end", "dcstart", "dcend", "setname"};
static const char *const state_names[] = {"waiting", "ready", "standby", "running", "terminated"};
static const char *const image_names[] = {"load", "unload", "dcstart", "dcend"};
static const char *const form_names[] = {"?", "plain", "cached"};

static const char *name_of(const char *const *t, size_t n, unsigned v)
{
    return v < n ? t[v] : "?";
}
#define NAME(t, v) name_of(t, sizeof t / sizeof t[0], v)

static void pmc(ln_buf *l, unsigned n, const uint64_t *v)
{
    ln_arr(l, "pmc");
    for (unsigned k = 0; k < n && k < ETL_SYNTH_MAX_PMC; k++) ln_u(l, NULL, v[k]);
    ln_arr_end(l);
}

static void frames(ln_buf *l, const uint64_t *f, uint32_t n, uint8_t form)
{
    ln_arr(l, "stack");
    for (uint32_t i = 0; i < n; i++) ln_u(l, NULL, f[i]);
    ln_arr_end(l);
    ln_s(l, "form", NAME(form_names, form));
}

static void format(ln_buf *l, const etl_synth_rec *r)
{
    switch (r->type) {
    case ETL_SYNTH_REC_META: {
        const etl_synth_meta *m = &r->u.meta;
        type(l, "meta");
        ln_u(l, "seed", m->seed);
        ln_u(l, "ncpu", m->ncpu);
        ln_u(l, "pointer_size", m->pointer_size);
        ln_u(l, "clock_type", m->clock_type);
        ln_u(l, "os_build", m->os_build);
        ln_u(l, "bias", m->bias);
        ln_u(l, "cswitch_format", m->cswitch_format);
        ln_u(l, "pmc_count", m->pmc_count);
        ln_u(l, "ticks_per_sec", m->ticks_per_sec);
        ln_u(l, "timer_tick", m->timer_tick);
        ln_u(l, "cycles_per_sec", m->cycles_per_sec);
        ln_u(l, "start", m->start);
        ln_u(l, "header_ts", m->header_ts);
        ln_bool(l, "spinlocks", m->spinlocks);
        ln_u(l, "spin_threshold", m->spinlock_info.spin_lock_spin_threshold);
        ln_u(l, "acquire_sample_rate", m->spinlock_info.spin_lock_acquire_sample_rate);
        ln_u(l, "contention_sample_rate", m->spinlock_info.spin_lock_contention_sample_rate);
        ln_u(l, "hold_threshold", m->spinlock_info.spin_lock_hold_threshold);
        ln_bool(l, "has_hold_threshold", m->spinlock_info.has_hold_threshold);
        if (m->stacks) {
            ln_u(l, "profile_interval", m->profile_interval);
            ln_bool(l, "stacks", true);
            if (m->modules) ln_s(l, "modules", m->modules); /* which modules stand for the app DLLs, with their RVAs */
        }
        break;
    }
    case ETL_SYNTH_REC_SWITCH: {
        const etl_synth_switch *w = &r->u.sw;
        type(l, "switch");
        ln_u(l, "time", w->time);
        ln_u(l, "cpu", w->cpu);
        ln_s(l, "why", NAME(why_names, w->why));
        ln_u(l, "old_tid", w->old_tid);
        ln_u(l, "new_tid", w->new_tid);
        ln_u(l, "old_pid", w->old_pid);
        ln_u(l, "new_pid", w->new_pid);
        ln_i(l, "old_priority", w->old_priority);
        ln_i(l, "new_priority", w->new_priority);
        ln_i(l, "old_base_priority", w->old_base_priority);
        ln_i(l, "new_base_priority", w->new_base_priority);
        ln_u(l, "old_state", w->old_state);
        ln_u(l, "old_wait_reason", w->old_wait_reason);
        ln_u(l, "old_wait_mode", w->old_wait_mode);
        ln_u(l, "previous_cstate", w->previous_cstate);
        ln_u(l, "old_ideal_processor", w->old_ideal_processor);
        ln_u(l, "new_wait_time", w->new_wait_time);
        ln_i(l, "old_remaining_quantum", w->old_remaining_quantum);
        if (w->pmc_count) pmc(l, w->pmc_count, w->pmc);
        ln_bool(l, "cswitch", w->cswitch);
        ln_bool(l, "compact", w->compact);
        if (w->compact) {
            ln_s(l, "form", etl_ccswap_form_name(w->form));
            ln_u(l, "batch", w->batch);
            ln_u(l, "batch_record", w->batch_record);
        }
        break;
    }
    case ETL_SYNTH_REC_READY: {
        const etl_synth_ready *y = &r->u.ready;
        type(l, "ready");
        ln_u(l, "time", y->time);
        ln_u(l, "cpu", y->cpu);
        ln_s(l, "why", NAME(ready_names, y->why));
        ln_u(l, "tid", y->tid);
        ln_u(l, "by_tid", y->by_tid);
        ln_u(l, "adjust_reason", y->adjust_reason);
        ln_i(l, "adjust_increment", y->adjust_increment);
        ln_u(l, "flags", y->flags);
        ln_u(l, "wait_reason", y->wait_reason);
        ln_i(l, "old_priority", y->old_priority);
        ln_i(l, "new_priority", y->new_priority);
        ln_bool(l, "logged", y->logged);
        break;
    }
    case ETL_SYNTH_REC_SPINLOCK: {
        const etl_synth_spinlock *k = &r->u.spinlock;
        type(l, "spinlock");
        ln_u(l, "time", k->time);
        ln_u(l, "cpu", k->cpu);
        ln_u(l, "tid", k->lock.thread_id);
        ln_hex(l, "address", k->lock.spin_lock_address);
        ln_hex(l, "caller", k->lock.caller_address);
        ln_u(l, "acquire_time", k->lock.acquire_time);
        ln_u(l, "release_time", k->lock.release_time);
        ln_u(l, "spin_count", k->lock.spin_count);
        ln_u(l, "wait_cycles", k->lock.wait_time_in_cycles);
        ln_u(l, "hold_cycles", k->hold_cycles);
        ln_u(l, "acquire_mode", k->lock.acquire_mode);
        ln_u(l, "irql", k->lock.irql);
        ln_u(l, "depth", k->lock.acquire_depth);
        ln_u(l, "interrupt_count", k->lock.interrupt_count);
        ln_bool(l, "sampled", k->sampled);
        break;
    }
    case ETL_SYNTH_REC_THREAD: {
        const etl_synth_thread *t = &r->u.thread;
        type(l, "thread");
        ln_s(l, "event", NAME(life_names, t->event));
        ln_u(l, "time", t->time);
        ln_u(l, "cpu", t->cpu);
        ln_u(l, "hook", t->hook);
        ln_u(l, "tid", t->tid);
        ln_u(l, "pid", t->pid);
        ln_u(l, "header_tid", t->header_tid);
        ln_u(l, "header_pid", t->header_pid);
        ln_i(l, "base_priority", t->base_priority);
        ln_s(l, "state", NAME(state_names, t->state));
        if (t->state == ETL_SYNTH_TS_WAITING) ln_u(l, "wait_reason", t->wait_reason);
        if (t->state == ETL_SYNTH_TS_RUNNING || t->state == ETL_SYNTH_TS_STANDBY)
            ln_u(l, "on_cpu", t->on_cpu);
        ln_s(l, "name", t->name);
        break;
    }
    case ETL_SYNTH_REC_PROCESS: {
        const etl_synth_process *p = &r->u.process;
        type(l, "process");
        ln_s(l, "event", NAME(life_names, p->event));
        ln_u(l, "time", p->time);
        ln_u(l, "cpu", p->cpu);
        ln_u(l, "hook", p->hook);
        ln_u(l, "pid", p->pid);
        ln_u(l, "parent_pid", p->parent_pid);
        ln_u(l, "session_id", p->session_id);
        ln_i(l, "exit_status", p->exit_status);
        ln_u(l, "header_tid", p->header_tid);
        ln_u(l, "header_pid", p->header_pid);
        ln_s(l, "image", p->image);
        ln_s(l, "command_line", p->command_line);
        break;
    }
    case ETL_SYNTH_REC_BATCH: {
        const etl_synth_batch *b = &r->u.batch;
        type(l, "batch");
        ln_u(l, "time", b->time);
        ln_u(l, "cpu", b->cpu);
        ln_u(l, "index", b->index);
        ln_u(l, "first_time", b->first_time);
        ln_u(l, "last_time", b->last_time);
        ln_u(l, "records", b->records);
        ln_u(l, "bytes", b->bytes);
        ln_s(l, "reason", etl_ccswap_flush_reason_name(b->reason));
        break;
    }
    case ETL_SYNTH_REC_THREAD_TOTAL: {
        const etl_synth_thread_total *t = &r->u.thread_total;
        type(l, "thread_total");
        ln_u(l, "tid", t->tid);
        ln_u(l, "pid", t->pid);
        ln_u(l, "running", t->running);
        ln_u(l, "ready", t->ready);
        ln_u(l, "waiting", t->waiting);
        ln_u(l, "switches_in", t->switches_in);
        ln_u(l, "switches_out", t->switches_out);
        ln_u(l, "created", t->created);
        ln_u(l, "exited", t->exited);
        ln_i(l, "base_priority", t->base_priority);
        ln_s(l, "name", t->name);
        break;
    }
    case ETL_SYNTH_REC_CPU_TOTAL: {
        const etl_synth_cpu_total *c = &r->u.cpu_total;
        type(l, "cpu_total");
        ln_u(l, "cpu", c->cpu);
        ln_u(l, "idle", c->idle);
        ln_u(l, "busy", c->busy);
        ln_u(l, "switches", c->switches);
        ln_u(l, "batches", c->batches);
        pmc(l, ETL_SYNTH_MAX_PMC, c->pmc);
        break;
    }
    case ETL_SYNTH_REC_IMAGE: {
        const etl_synth_image *m = &r->u.image;
        type(l, "image");
        ln_s(l, "event", NAME(image_names, m->event));
        ln_u(l, "time", m->time);
        ln_u(l, "cpu", m->cpu);
        ln_u(l, "hook", m->hook);
        ln_u(l, "pid", m->pid);
        ln_u(l, "base", m->base);
        ln_u(l, "size", m->size);
        ln_s(l, "name", m->name);
        ln_s(l, "path", m->path);
        ln_u(l, "time_date_stamp", m->time_date_stamp);
        ln_u(l, "checksum", m->checksum);
        break;
    }
    case ETL_SYNTH_REC_SAMPLE: {
        const etl_synth_sample *p = &r->u.sample;
        type(l, "sample");
        ln_u(l, "time", p->time);
        ln_u(l, "cpu", p->cpu);
        ln_u(l, "tid", p->tid);
        ln_u(l, "pid", p->pid);
        ln_u(l, "ip", p->ip);
        ln_u(l, "count", p->count);
        if (p->module) {
            ln_s(l, "module", p->module);
            ln_u(l, "offset", p->offset);
        } else {
            ln_key(l, "module");
            ln_raw(l, "null", 4);
        }
        if (p->depth) frames(l, p->stack, p->depth, p->form);
        break;
    }
    case ETL_SYNTH_REC_STACK: {
        const etl_synth_stack *k = &r->u.stack;
        type(l, "stack");
        ln_s(l, "event", k->hook == ETL_HOOK_CSWITCH ? "cswitch" : "readythread");
        ln_u(l, "time", k->time);
        ln_u(l, "cpu", k->cpu);
        ln_u(l, "tid", k->tid);
        ln_u(l, "pid", k->pid);
        frames(l, k->stack, k->depth, k->form);
        break;
    }
    default: {
        const etl_synth_end *e = &r->u.end;
        type(l, "end");
        ln_u(l, "end", e->end);
        ln_u(l, "switches", e->switches);
        ln_u(l, "ready", e->ready);
        ln_u(l, "spinlocks", e->spinlocks);
        ln_u(l, "spinlocks_sampled", e->spinlocks_sampled);
        ln_u(l, "batches", e->batches);
        break;
    }
    }
    ln_raw(l, "}\n", 2);
}

int etl_synth_truth_jsonl(void *ctx, const etl_synth_rec *rec)
{
    FILE *f = ctx;
    char buf[LINE_CAP];
    ln_buf l = {buf, 0, sizeof buf, 1, 1, 0};
    format(&l, rec);
    return fwrite(l.b, 1, l.n, f) == l.n ? 0 : -1;
}

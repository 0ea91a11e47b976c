/*
 * tables.c - the table producer: scheduler events, model rows and ReadyThreads
 * in, rows of typed values out (schema.c has the columns, in this order).
 *
 * Streaming: each call fills one row in a fixed array of values and hands it to
 * the sink; nothing is kept per event. The thread, process and trace tables are
 * written by etl_export_rows_finish from the model's instances and the run's counters.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "etlkit/schedstacks.h"
#include "base/opts.h"
#include "base/sha256.h"
#include "container/reader_internal.h"

#include "export/rows_internal.h"
#include "export/schema_internal.h"

etl_status etl_export_rows_open(const etl_clock *clock, const etl_export_rows_options *o, etl_export_rows **out)
{
    *out = NULL;
    etl_export_rows_options oo = {0};
    etl_opts_take(&oo, sizeof oo, o);
    if (!oo.on_row) return ETL_E_INVALID_ARG;
    etl_export_rows *x = calloc(1, sizeof *x);
    if (!x) return ETL_E_NOMEM;
    x->o = oo;
    x->clock = *clock;
    if (!x->o.tables) x->o.tables = (1u << ETL_TABLE_COUNT) - 1;
    x->o.tables |= 1u << ETL_TABLE_TRACE | 1u << ETL_TABLE_ENUM_NAME;
    *out = x;
    return ETL_OK;
}

const etl_export_rows_stats *etl_export_rows_stats_get(const etl_export_rows *x) { return &x->st; }
void etl_export_rows_close(etl_export_rows *x)
{
    if (x) {
        free(x->stack_used);
        free(x->tails);
        etl_sched_stacks_free(x->stacks);
    }
    free(x);
}

static int64_t ns(const etl_export_rows *x, uint64_t ts) { return etl_clock_ns(&x->clock, ts); }

static bool thread_ok(uint32_t i) { return i != ETL_SCHED_IDLE && i != ETL_SCHED_NONE; }

/* ---- events: cswitch, pmc, spinlock ----------------------------------------------------- */

static void cswitch_row(etl_export_rows *x, const etl_cswitch *e)
{
    uint32_t k = e->known;
    etl_rows_clear(x, ETL_TABLE_CSWITCH);
    etl_rows_vu(x, 0, e->ts);
    etl_rows_vi(x, 1, ns(x, e->ts));
    etl_rows_vi(x, 2, e->cpu);
    if (k & ETL_CSW_NEW_TID) etl_rows_vi(x, 3, e->new_tid);
    if (k & ETL_CSW_OLD_TID) etl_rows_vi(x, 4, e->old_tid);
    if (k & ETL_CSW_NEW_PRIORITY) etl_rows_vi(x, 5, e->new_priority);
    if (k & ETL_CSW_OLD_PRIORITY) etl_rows_vi(x, 6, e->old_priority);
    if (k & ETL_CSW_PREVIOUS_CSTATE) etl_rows_vi(x, 7, e->previous_cstate);
    if (k & ETL_CSW_SPARE_BYTE) etl_rows_vi(x, 8, e->spare_byte);
    if (k & ETL_CSW_WAIT_REASON) etl_rows_vi(x, 9, e->old_wait_reason);
    if (k & ETL_CSW_WAIT_MODE) etl_rows_vi(x, 10, e->old_wait_mode);
    if (k & ETL_CSW_STATE) etl_rows_vi(x, 11, e->old_state);
    if (k & ETL_CSW_IDEAL_PROCESSOR) etl_rows_vi(x, 12, e->old_ideal_processor);
    if (k & ETL_CSW_NEW_WAIT_TIME) etl_rows_vi(x, 13, e->new_wait_time);
    if (k & ETL_CSW_REMAINING_QUANTUM) etl_rows_vi(x, 14, e->old_remaining_quantum);
    if (k & ETL_CSW_FLAGS) {
        etl_rows_vi(x, 15, e->flags);
        etl_rows_vi(x, 16, e->old_bam);
        etl_rows_vi(x, 17, e->new_bam);
    }
    etl_rows_vi(x, 18, e->version);
    etl_rows_vs(x, 19, e->source == ETL_CSW_SRC_COMPACT ? "compact" : "full");
    etl_rows_emit(x, ETL_TABLE_CSWITCH);
}

static void pmc_rows(etl_export_rows *x, const etl_cswitch *e)
{
    if (!(e->known & ETL_CSW_PMC)) return;
    for (unsigned i = 0; i < e->pmc_count && i < 7; i++) {
        etl_rows_clear(x, ETL_TABLE_PMC);
        etl_rows_vu(x, 0, e->ts);
        etl_rows_vi(x, 1, ns(x, e->ts));
        etl_rows_vi(x, 2, e->cpu);
        etl_rows_vi(x, 3, i);
        etl_rows_vu64(x, 4, e->pmc[i]);
        etl_rows_emit(x, ETL_TABLE_PMC);
    }
}

static void spinlock_row(etl_export_rows *x, const etl_sched_event *ev)
{
    const etl_spinlock *s = &ev->u.spinlock;
    char a[24], c[24];
    snprintf(a, sizeof a, "0x%" PRIx64, s->spin_lock_address);
    snprintf(c, sizeof c, "0x%" PRIx64, s->caller_address);
    etl_rows_clear(x, ETL_TABLE_SPINLOCK);
    etl_rows_vu(x, 0, ev->ts);
    etl_rows_vi(x, 1, ns(x, ev->ts));
    etl_rows_vi(x, 2, ev->cpu);
    etl_rows_vs(x, 3, a);
    etl_rows_vs(x, 4, c);
    etl_rows_vu64(x, 5, s->acquire_time);
    etl_rows_vu64(x, 6, s->release_time);
    etl_rows_vi(x, 7, s->wait_time_in_cycles);
    etl_rows_vi(x, 8, s->spin_count);
    etl_rows_vi(x, 9, s->thread_id);
    etl_rows_vi(x, 10, s->interrupt_count);
    etl_rows_vi(x, 11, s->irql);
    etl_rows_vi(x, 12, s->acquire_depth);
    etl_rows_vi(x, 13, s->flags);
    etl_rows_vi(x, 14, s->acquire_mode);
    etl_rows_vi(x, 15, s->execute_dpc);
    etl_rows_vi(x, 16, s->execute_isr);
    etl_rows_emit(x, ETL_TABLE_SPINLOCK);
}

void etl_export_rows_event(etl_export_rows *x, const etl_sched_event *ev)
{
    if (x->failed) return;
    if (ev->kind != ETL_SCHED_SWITCH && ev->kind != ETL_SCHED_SPINLOCK) return;
    if (!etl_rows_in_window(x, ns(x, ev->ts))) return;
    if (ev->kind == ETL_SCHED_SWITCH) {
        if (etl_rows_want(x, ETL_TABLE_CSWITCH)) cswitch_row(x, &ev->u.sw);
        if (etl_rows_want(x, ETL_TABLE_PMC)) pmc_rows(x, &ev->u.sw);
    } else if (etl_rows_want(x, ETL_TABLE_SPINLOCK)) {
        spinlock_row(x, ev);
    }
}

/* ---- model rows: slice, thread_state ------------------------------------------------------ */

static void state_row(etl_export_rows *x, const etl_sched_row *r, int state, int reason, uint64_t a_ts, int64_t a,
                      uint64_t b_ts, int64_t b, bool running)
{
    if (b <= a) return;
    etl_rows_clear(x, ETL_TABLE_THREAD_STATE);
    etl_rows_vi(x, 0, r->new_thread);
    etl_rows_vi(x, 1, r->new_tid);
    if (state >= 0) etl_rows_vi(x, 2, state);
    if (reason >= 0) etl_rows_vi(x, 3, reason);
    etl_rows_vu(x, 4, a_ts);
    etl_rows_vu(x, 5, b_ts);
    etl_rows_vi(x, 6, a);
    etl_rows_vi(x, 7, b);
    if (running) etl_rows_vi(x, 8, r->cpu);
    etl_rows_emit(x, ETL_TABLE_THREAD_STATE);
}

/* [a, b) has some of the window, or t (the instant it is counted at) is in it. */
static bool counts_in_window(const etl_export_rows *x, int64_t a, int64_t b, int64_t t)
{
    return (b > x->o.v0 && a < x->o.v1) || etl_rows_in_window(x, t);
}

/*
 * With --range, a switch-in's row is kept when its slice, its Ready or its Waits interval counts in the window,
 * by the reports' rule (usage.c: an interval with some of it in the window, or its end in it): the views then
 * see every interval `etlkit cpu --range` and `etlkit waits --range` count, clipped as they clip. Keeping the
 * slices alone lost a wait in the window whose switch-in came after it.
 */
static bool row_in_window(const etl_export_rows *x, const etl_sched_row *r)
{
    if (!x->o.has_range || counts_in_window(x, r->si, r->nso, r->si)) return true;
    if (!(r->flags & ETL_ROW_READY_TIME)) return false;
    return counts_in_window(x, r->rt, r->si, r->si) ||
           ((r->flags & ETL_ROW_PREV) && counts_in_window(x, r->lso, r->rt, r->rt));
}

/* A CPU's tail: where it ends, for tail_rest (once per CPU, at the model's finish). */
static void tail_note(etl_export_rows *x, const etl_sched_row *r)
{
    if (r->cpu >= x->ntails) {
        struct etl_rows_tail *t = realloc(x->tails, ((size_t)r->cpu + 1) * sizeof *t);
        if (!t) {
            x->failed = 1;
            return;
        }
        memset(t + x->ntails, 0, ((size_t)r->cpu + 1 - x->ntails) * sizeof *t);
        x->tails = t;
        x->ntails = r->cpu + 1u;
    }
    x->tails[r->cpu] = (struct etl_rows_tail){r->nso_ts, r->nso, true};
}

/*
 * A CPU whose records end before the trace (a file cut short, its last buffers missing: its tail stops at its last
 * record, etl_sched_cpu_end) has the rest as a slice of no known thread, as a span whose records were lost inside
 * the trace is: every nanosecond of the window in one slice, tid NULL where unknown (explore25 F5).
 */
static void tail_rest(etl_export_rows *x, uint64_t end_ts)
{
    int64_t end = ns(x, end_ts);
    for (unsigned c = 0; c < x->ntails && etl_rows_want(x, ETL_TABLE_SLICE); c++) {
        const struct etl_rows_tail *t = &x->tails[c];
        if (!t->set || t->ts >= end_ts || t->ns >= end) continue;
        if (x->o.has_range && !counts_in_window(x, t->ns, end, t->ns)) continue;
        etl_rows_clear(x, ETL_TABLE_SLICE);
        etl_rows_vi(x, 0, c);
        etl_rows_vu(x, 3, t->ts);
        etl_rows_vu(x, 4, end_ts);
        etl_rows_vi(x, 5, t->ns);
        etl_rows_vi(x, 6, end);
        etl_rows_vi(x, 12, 1); /* no switch began it: head = 0 counts the switch-ins (cpu_by_cpu) */
        etl_rows_vi(x, 13, 1);
        etl_rows_vi(x, 14, 0);
        etl_rows_vi(x, 21, 0);
        etl_rows_emit(x, ETL_TABLE_SLICE);
    }
}

void etl_export_rows_row(void *ctx, const etl_sched_row *r)
{
    etl_export_rows *x = ctx;
    if (x->failed) return;
    if (r->flags & ETL_ROW_TAIL) tail_note(x, r);
    if (!row_in_window(x, r)) return;
    uint32_t f = r->flags;
    bool ok = thread_ok(r->new_thread);
    if (etl_rows_want(x, ETL_TABLE_SLICE)) {
        etl_rows_clear(x, ETL_TABLE_SLICE);
        etl_rows_vi(x, 0, r->cpu);
        if (ok) etl_rows_vi(x, 1, r->new_thread);
        if (r->new_thread == ETL_SCHED_IDLE) etl_rows_vi(x, 2, 0);
        else if (r->new_tid != UINT32_MAX || ok) etl_rows_vi(x, 2, r->new_tid);
        etl_rows_vu(x, 3, r->si_ts);
        etl_rows_vu(x, 4, r->nso_ts);
        etl_rows_vi(x, 5, r->si);
        etl_rows_vi(x, 6, r->nso);
        if (r->out && (r->out->known & ETL_CSW_STATE)) etl_rows_vi(x, 7, r->out->old_state);
        if (r->out && (r->out->known & ETL_CSW_WAIT_REASON)) etl_rows_vi(x, 8, r->out->old_wait_reason);
        if (r->in && !(f & ETL_ROW_MISMATCH) && (r->in->known & ETL_CSW_NEW_PRIORITY))
            etl_rows_vi(x, 9, r->in->new_priority);
        if (thread_ok(r->old_thread)) etl_rows_vi(x, 10, r->old_thread);
        if (r->old_thread == ETL_SCHED_IDLE) etl_rows_vi(x, 11, 0);
        else if (r->old_tid != UINT32_MAX) etl_rows_vi(x, 11, r->old_tid);
        etl_rows_vi(x, 12, (f & ETL_ROW_HEAD) != 0);
        etl_rows_vi(x, 13, (f & ETL_ROW_TAIL) != 0);
        etl_rows_vi(x, 14, (f & ETL_ROW_MISMATCH) != 0);
        if (f & ETL_ROW_PREV) {
            if (r->prev_known & ETL_CSW_STATE) etl_rows_vi(x, 15, r->prev_state);
            if (r->prev_known & ETL_CSW_WAIT_REASON) etl_rows_vi(x, 16, r->prev_wait_reason);
            etl_rows_vu(x, 17, r->lso_ts);
            etl_rows_vi(x, 18, r->lso);
        }
        if (f & ETL_ROW_READY_TIME) {
            etl_rows_vu(x, 19, r->rt_ts);
            etl_rows_vi(x, 20, r->rt);
        }
        etl_rows_vi(x, 21, (f & ETL_ROW_WAITED) != 0);
        if (f & ETL_ROW_READIED) {
            if (thread_ok(r->readier_thread)) etl_rows_vi(x, 22, r->readier_thread);
            if (r->readier_thread == ETL_SCHED_IDLE) etl_rows_vi(x, 23, 0);
            else if (r->readier_thread != ETL_SCHED_NONE) etl_rows_vi(x, 23, r->readier_tid);
            etl_rows_vi(x, 24, r->ready.flags);
        }
        if (x->stacks) etl_rows_slice_stacks(x, r, true);
        etl_rows_emit(x, ETL_TABLE_SLICE);
    } else if (x->stacks && etl_rows_want(x, ETL_TABLE_STACK)) {
        etl_rows_slice_stacks(x, r, false); /* the stack table as the full export's: the stacks its slices name */
    }
    if (ok && etl_rows_want(x, ETL_TABLE_THREAD_STATE)) {
        if ((f & ETL_ROW_PREV) && !(f & ETL_ROW_HEAD)) {
            int st = (r->prev_known & ETL_CSW_STATE) ? r->prev_state : -1;
            int wr = (r->prev_known & ETL_CSW_WAIT_REASON) ? r->prev_wait_reason : -1;
            if (f & ETL_ROW_READY_TIME) {
                state_row(x, r, st, wr, r->lso_ts, r->lso, r->rt_ts, r->rt, false);
                state_row(x, r, 1, -1, r->rt_ts, r->rt, r->si_ts, r->si, false);
            } else {
                state_row(x, r, st, wr, r->lso_ts, r->lso, r->si_ts, r->si, false);
            }
        }
        state_row(x, r, 2, -1, r->si_ts, r->si, r->nso_ts, r->nso, true);
    }
}

void etl_export_rows_ready(void *ctx, const etl_sched_ready *r)
{
    etl_export_rows *x = ctx;
    if (!etl_rows_want(x, ETL_TABLE_READY) || !etl_rows_in_window(x, r->ns)) return;
    etl_rows_clear(x, ETL_TABLE_READY);
    etl_rows_vu(x, 0, r->ts);
    etl_rows_vi(x, 1, r->ns);
    etl_rows_vi(x, 2, r->cpu);
    if (thread_ok(r->thread)) etl_rows_vi(x, 3, r->thread);
    etl_rows_vi(x, 4, r->ready.thread_id);
    if (thread_ok(r->readier_thread)) etl_rows_vi(x, 5, r->readier_thread);
    if (r->readier_thread == ETL_SCHED_IDLE) etl_rows_vi(x, 6, 0);
    else if (r->readier_thread != ETL_SCHED_NONE) etl_rows_vi(x, 6, r->readier_tid);
    etl_rows_vi(x, 7, r->ready.adjust_reason);
    etl_rows_vi(x, 8, r->ready.adjust_increment);
    etl_rows_vi(x, 9, r->ready.flags);
    etl_rows_emit(x, ETL_TABLE_READY);
}

size_t etl_export_content_id(const etl_reader *r, char *out, size_t cap)
{
    if (!out || cap < 24) {
        if (out && cap) *out = 0;
        return 0;
    }
    etl_sha256 h;
    uint8_t d[32];
    char hex[65];
    etl_sha256_init(&h);
    if (r) etl_sha256_update(&h, r->data, r->size);
    etl_sha256_final(&h, d);
    etl_sha256_hex(d, hex);
    return (size_t)snprintf(out, cap, "sha256-%.16s", hex);
}

/* ---- the end: thread, process, enum_name, trace --------------------------------------------- */

static void kv(etl_export_rows *x, const char *key, const char *text, bool is_int, int64_t v)
{
    char buf[24];
    etl_rows_clear(x, ETL_TABLE_TRACE);
    etl_rows_vs(x, 0, key);
    if (is_int) {
        snprintf(buf, sizeof buf, "%" PRId64, v);
        etl_rows_vs(x, 1, buf);
        etl_rows_vi(x, 2, v);
    } else {
        etl_rows_vs(x, 1, text);
    }
    etl_rows_emit(x, ETL_TABLE_TRACE);
}

static void kv_u(etl_export_rows *x, const char *key, uint64_t v)
{
    if (v <= INT64_MAX) {
        kv(x, key, NULL, true, (int64_t)v);
    } else {
        char buf[24];
        snprintf(buf, sizeof buf, "%" PRIu64, v);
        kv(x, key, buf, false, 0);
    }
}

static void kv_s(etl_export_rows *x, const char *key, const char *s) { kv(x, key, s, false, 0); }

static void kv_ft(etl_export_rows *x, const char *key, uint64_t ft)
{
    char buf[40];
    etl_filetime_format(ft, buf);
    kv_s(x, key, buf);
}

static void trace_rows(etl_export_rows *x, const etl_export_rows_end *e)
{
    const etl_logfile_header *h = etl_reader_header(e->reader);
    const etl_clock *c = etl_reader_clock(e->reader);
    const etl_stats *d = e->damage;
    const etl_sched_source_stats *s = e->source;
    const etl_sched_stats *m = etl_sched_stats_get(e->model);
    char buf[64];
    kv_s(x, "trace_id", x->o.trace_id ? x->o.trace_id : e->path);
    kv_s(x, "file", e->path);
    kv_u(x, "file_size", etl_reader_file_size(e->reader));
    kv_s(x, "etlkit_version", ETLKIT_VERSION_STRING);
    if (x->o.target) kv_s(x, "export_target", x->o.target);
    /* The tables filled: the SQLite sink makes only the views they answer (schema_internal.h). */
    char list[256];
    size_t k = 0;
    list[0] = 0;
    for (int i = 0; i < ETL_TABLE_COUNT; i++)
        if (x->o.tables >> i & 1u && k < sizeof list)
            k += (size_t)snprintf(list + k, sizeof list - k, "%s%s", k ? "," : "", etl_export_tables()[i].name);
    kv_s(x, ETL_TRACE_KEY_TABLES, list);
    kv_s(x, "logger_name", h->logger_name);
    snprintf(buf, sizeof buf, "%u.%u", h->os_major, h->os_minor);
    kv_s(x, "os_version", buf);
    kv_u(x, "os_build", h->provider_version);
    kv_u(x, "num_cpus", h->num_processors);
    kv_u(x, "cpus_seen", etl_sched_cpu_count(e->model));
    kv_u(x, "pointer_size", h->pointer_size);
    kv_u(x, "clock_type", h->clock_type);
    kv_s(x, "clock_name", h->clock_type == 1 ? "QPC" : h->clock_type == 2 ? "SystemTime" : h->clock_type == 3 ? "CPUCycle"
                                                                                                              : "unknown");
    kv_u(x, "ticks_per_second", c->ticks_per_sec);
    kv_u(x, "perf_freq", h->perf_freq);
    kv_u(x, "cpu_mhz", h->cpu_speed_mhz);
    kv_u(x, "timer_resolution", h->timer_resolution);
    kv_u(x, "t0_ts", c->t0);
    kv_u(x, "start_time", h->start_time);
    kv_ft(x, "start_time_utc", h->start_time);
    kv_u(x, "end_time", h->end_time);
    kv_ft(x, "end_time_utc", h->end_time);
    kv_ft(x, "boot_time_utc", h->boot_time);
    kv_u(x, "end_ts", e->end_ts);
    kv(x, "end_ns", NULL, true, etl_clock_ns(c, e->end_ts));
    /* --range clipped to the trace's end, as the reports clip it (etl_usage_finish). */
    int64_t end_ns = etl_clock_ns(c, e->end_ts), v1 = x->o.v1 < end_ns ? x->o.v1 : end_ns;
    kv(x, "window_start_ns", NULL, true, x->o.has_range ? (x->o.v0 < v1 ? x->o.v0 : v1) : 0);
    if (x->o.has_range) kv(x, "window_end_ns", NULL, true, v1);
    else {
        etl_rows_clear(x, ETL_TABLE_TRACE);
        etl_rows_vs(x, 0, "window_end_ns");
        etl_rows_emit(x, ETL_TABLE_TRACE);
    }
    kv_u(x, "events_lost", h->events_lost);
    kv_u(x, "buffers_lost", h->buffers_lost);
    kv_u(x, "buffers", d->buffers);
    kv_u(x, "compressed_buffers", d->compressed_buffers);
    kv_u(x, "bad_buffers", d->bad_buffers);
    kv_u(x, "bad_records", d->bad_records);
    kv_u(x, "skipped_bytes", d->skipped_bytes);
    kv_u(x, "truncated_buffers", d->truncated_buffers);
    kv_u(x, "decompress_errors", d->decompress_errors);
    kv_u(x, "unsupported_buffers", d->unsupported_buffers);
    if (d->first_problem_offset != UINT64_MAX) {
        char p[300];
        snprintf(p, sizeof p, "offset 0x%" PRIx64 ": %s", d->first_problem_offset, d->first_problem);
        kv_s(x, "first_problem", p);
    }
    kv_u(x, "switches", s->switches);
    kv_u(x, "full_switches", s->full_switches);
    kv_u(x, "compact_switches", s->compact_switches);
    kv_u(x, "duplicates_dropped", s->duplicates_dropped);
    kv_u(x, "undecodable", s->undecodable);
    kv_u(x, "late_batches", s->late_batches);
    kv_u(x, "broken_chains", s->broken_chains);
    kv_u(x, "bad_state", s->bad_state);
    kv_u(x, "bad_priority", s->bad_priority);
    kv_u(x, "cswitch_chain_mismatch", m->cswitch_chain_mismatch);
    kv_u(x, "time_backwards", m->time_backwards);
    kv_u(x, "ready_unmatched", m->ready_unmatched);
    kv_u(x, "unknown_threads", m->unknown_threads);
    kv_u(x, "repeated_starts", m->repeated_starts);
    kv_u(x, "over_limit", m->over_limit);
    kv_u(x, "threads", m->threads);
    kv_u(x, "processes", m->processes);
}

static void enum_rows(etl_export_rows *x)
{
    static const struct {
        const char *kind;
        const char *(*name)(unsigned);
    } kinds[] = {
        {"wait_reason", etl_wait_reason_name},         {"thread_state", etl_thread_state_name},
        {"wait_mode", etl_processor_mode_name},        {"adjust_reason", etl_adjust_reason_name},
        {"acquire_mode", etl_spinlock_acquire_mode_name},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        for (unsigned c = 0; c < 256; c++) {
            const char *n = kinds[k].name(c);
            if (!n) continue;
            etl_rows_clear(x, ETL_TABLE_ENUM_NAME);
            etl_rows_vs(x, 0, kinds[k].kind);
            etl_rows_vi(x, 1, c);
            etl_rows_vs(x, 2, n);
            etl_rows_emit(x, ETL_TABLE_ENUM_NAME);
        }
}

int etl_export_rows_finish(etl_export_rows *x, const etl_export_rows_end *e)
{
    const etl_sched *m = e->model;
    const char *names = etl_sched_names(m);
    const etl_clock *c = etl_reader_clock(e->reader);
    size_t n;
    const etl_sched_process *p = etl_sched_processes(m, &n);
    for (size_t i = 0; etl_rows_want(x, ETL_TABLE_PROCESS) && i < n; i++) {
        etl_rows_clear(x, ETL_TABLE_PROCESS);
        etl_rows_vi(x, 0, (int64_t)i);
        etl_rows_vi(x, 1, p[i].pid);
        if (p[i].name) etl_rows_vs(x, 2, names + p[i].name);
        if (p[i].command_line) etl_rows_vs(x, 3, names + p[i].command_line);
        etl_rows_vu(x, 4, p[i].start_ts);
        etl_rows_vi(x, 6, etl_clock_ns(c, p[i].start_ts));
        if (p[i].ended) {
            etl_rows_vu(x, 5, p[i].end_ts);
            etl_rows_vi(x, 7, etl_clock_ns(c, p[i].end_ts));
        }
        etl_rows_vi(x, 8, p[i].started);
        etl_rows_emit(x, ETL_TABLE_PROCESS);
    }
    const etl_sched_thread *t = etl_sched_threads(m, &n);
    for (size_t i = 0; etl_rows_want(x, ETL_TABLE_THREAD) && i < n; i++) {
        etl_rows_clear(x, ETL_TABLE_THREAD);
        etl_rows_vi(x, 0, (int64_t)i);
        etl_rows_vi(x, 1, t[i].tid);
        if (t[i].process != ETL_SCHED_NONE && t[i].process != ETL_SCHED_IDLE) etl_rows_vi(x, 2, t[i].process);
        if (t[i].pid != UINT32_MAX) etl_rows_vi(x, 3, t[i].pid);
        if (t[i].name) etl_rows_vs(x, 4, names + t[i].name);
        etl_rows_vu(x, 5, t[i].start_ts);
        etl_rows_vi(x, 7, etl_clock_ns(c, t[i].start_ts));
        if (t[i].ended) {
            etl_rows_vu(x, 6, t[i].end_ts);
            etl_rows_vi(x, 8, etl_clock_ns(c, t[i].end_ts));
        }
        if (t[i].base_priority) etl_rows_vi(x, 9, t[i].base_priority);
        etl_rows_vi(x, 10, t[i].started);
        etl_rows_emit(x, ETL_TABLE_THREAD);
    }
    tail_rest(x, e->end_ts);
    enum_rows(x);
    trace_rows(x, e);
    return x->failed;
}

/* report_json.c - the report page's embedded JSON block: every number the page shows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"


void json_latency(jw *w, const etl_latency *l)
{
    jw_u64(w, "count", l->count);
    jw_i64(w, "sum_ns", l->sum_ns);
    jw_i64(w, "mean_ns", l->count ? l->sum_ns / (int64_t)l->count : 0);
    jw_i64(w, "p50_ns", l->p50_ns);
    jw_i64(w, "p90_ns", l->p90_ns);
    jw_i64(w, "p99_ns", l->p99_ns);
    jw_i64(w, "p999_ns", l->p999_ns);
    jw_i64(w, "max_ns", l->max_ns);
}

void json_pid(jw *w, uint32_t pid)
{
    if (pid != UINT32_MAX) jw_u64(w, "pid", pid);
    else jw_null(w, "pid");
}

void json_intervals(jw *w, const page *pg, const char *key, const etl_usage_interval *v, size_t n, int waits)
{
    const etl_sched *m = pg->run->model;
    jw_arr(w, key);
    for (size_t i = 0; i < n; i++) {
        const etl_sched_thread *st = etl_sched_thread_at(m, v[i].thread);
        char label[256], rd[320];
        jw_obj(w, NULL);
        jw_u64(w, "tid", st ? st->tid : v[i].tid);
        jw_str(w, "process_label", rep_process_label(m, v[i].thread, label));
        jw_str(w, "name", rep_thread_name(m, v[i].thread));
        jw_u64(w, "cpu", v[i].cpu);
        jw_i64(w, "start_ns", v[i].start_ns);
        jw_i64(w, "duration_ns", v[i].dur_ns);
        if (waits) jw_u64(w, "reason_code", v[i].reason);
        jw_str(w, "readier", readier_text(m, &v[i], rd));
        if (v[i].has_readier && !(v[i].ready_flags & ETL_READY_EXECUTING_DPC) && v[i].readier_thread != ETL_SCHED_NONE) {
            const etl_sched_thread *rt = etl_sched_thread_at(m, v[i].readier_thread);
            jw_u64(w, "readier_tid", rt ? rt->tid : 0);
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

void write_json(jw *w, const page *pg)
{
    const rctx *c = pg->c;
    const etl_usage *u = &c->u;
    const etl_sched *m = pg->run->model;
    const etl_logfile_header *h = etl_reader_header(pg->run->in.reader);
    const etl_clock *clk = etl_reader_clock(pg->run->in.reader);
    char buf[512];
    jw_obj(w, NULL);
    jw_u64(w, "etlkit_report", 1);
    jw_str(w, "version", ETLKIT_VERSION_STRING);
    jw_str(w, "title", pg->o->title ? pg->o->title : "");
    jw_str(w, "file", pg->run->in.path);
    jw_obj(w, "window");
    jw_i64(w, "start_ns", pg->v0);
    jw_i64(w, "end_ns", pg->v1);
    jw_obj_end(w);
    /* 1. the trace (keys as `etlkit info --json`) */
    jw_obj(w, "trace");
    jw_u64(w, "file_size", etl_reader_file_size(pg->run->in.reader));
    jw_u64(w, "os_major", h->os_major);
    jw_u64(w, "os_minor", h->os_minor);
    jw_u64(w, "os_build", h->provider_version);
    jw_u64(w, "num_cpus", h->num_processors);
    jw_u64(w, "cpu_mhz", h->cpu_speed_mhz);
    jw_u64(w, "pointer_size", h->pointer_size);
    jw_u64(w, "clock_type", h->clock_type);
    jw_str(w, "clock_name", etl_clock_type_name(h->clock_type));
    jw_u64(w, "ticks_per_second", clk->ticks_per_sec);
    etl_filetime_format(h->start_time, buf);
    jw_str(w, "start_time_utc", buf);
    jw_u64(w, "events_lost", h->events_lost);
    jw_u64(w, "buffers_lost", h->buffers_lost);
    jw_u64(w, "records", pg->fa->records);
    jw_arr(w, "kernel_flags");
    if (pg->fa->group_mask_events) {
        const char *names[256];
        size_t n = etl_groupmask_names(&pg->fa->flags, names, 256);
        for (size_t i = 0; i < n && i < 256; i++) jw_str(w, NULL, names[i]);
    }
    jw_arr_end(w);
    jw_arr(w, "by_hook");
    for (unsigned k = 0; k < 65536; k++) {
        if (!pg->fa->by_hook[k]) continue;
        jw_obj(w, NULL);
        jw_u64(w, "hook", k);
        jw_u64(w, "count", pg->fa->by_hook[k]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    const etl_sched_source_stats *ss = etl_sched_source_stats_get(pg->run->src);
    jw_obj(w, "scheduler_events");
    jw_u64(w, "switches", ss->switches);
    jw_u64(w, "full_switches", ss->full_switches);
    jw_u64(w, "compact_switches", ss->compact_switches);
    jw_u64(w, "ready_thread_events", c->ev[ETL_SCHED_READY]);
    jw_u64(w, "spinlock_events", c->ev[ETL_SCHED_SPINLOCK]);
    jw_u64(w, "thread_events", c->ev[ETL_SCHED_THREAD]);
    jw_u64(w, "set_name_events", c->ev[ETL_SCHED_SET_NAME]);
    jw_u64(w, "process_events", c->ev[ETL_SCHED_PROCESS]);
    jw_obj_end(w);
    const etl_stats *st = &pg->fa->st;
    jw_obj(w, "recovery");
    jw_u64(w, "bad_buffers", st->bad_buffers);
    jw_u64(w, "bad_records", st->bad_records);
    jw_u64(w, "skipped_bytes", st->skipped_bytes);
    jw_u64(w, "truncated_buffers", st->truncated_buffers);
    jw_u64(w, "decompress_errors", st->decompress_errors);
    jw_u64(w, "unsupported_buffers", st->unsupported_buffers);
    jw_obj_end(w);
    jw_bool(w, "damaged", etl_stats_damaged(st) || etl_stats_damaged(&pg->run->damage));
    jw_obj_end(w);
    jw_bool(w, "has_switches", pg->switches);
    rep_json_anomalies(pg->run, w);
    if (!pg->switches) {
        jw_obj_end(w);
        return;
    }
    /* 2, 3: cpu (keys as `etlkit cpu --json`) */
    int64_t busy = 0, idle = 0, unknown = 0;
    jw_obj(w, "cpu");
    jw_u64(w, "num_cpus", u->ncpus);
    jw_arr(w, "cpus");
    for (size_t k = 0; k < u->ncpus; k++) {
        add_sat(&busy, u->cpus[k].busy_ns);
        add_sat(&idle, u->cpus[k].idle_ns);
        add_sat(&unknown, u->cpus[k].unknown_ns);
        jw_obj(w, NULL);
        jw_u64(w, "cpu", k);
        jw_i64(w, "busy_ns", u->cpus[k].busy_ns);
        jw_i64(w, "idle_ns", u->cpus[k].idle_ns);
        jw_i64(w, "unknown_ns", u->cpus[k].unknown_ns);
        jw_u64(w, "switches", u->cpus[k].switches);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_i64(w, "busy_ns", busy);
    jw_i64(w, "idle_ns", idle);
    jw_i64(w, "unknown_ns", unknown);
    jw_arr(w, "processes");
    for (size_t i = 0; i < u->nprocesses && i < pg->top; i++) {
        const etl_usage_process *p = &u->processes[i];
        uint32_t pid;
        char name[256];
        proc_label(m, p->process, name, &pid);
        jw_obj(w, NULL);
        json_pid(w, pid);
        jw_str(w, "name", name);
        jw_i64(w, "cpu_ns", p->cpu_ns);
        jw_u64(w, "switches", p->switches);
        jw_u64(w, "threads", p->threads);
        jw_obj(w, "ready");
        json_latency(w, &p->ready);
        jw_obj_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "threads");
    for (size_t i = 0; i < u->nthreads && i < pg->top; i++) {
        const etl_usage_thread *t = &u->threads[i];
        const etl_sched_thread *sth = etl_sched_thread_at(m, t->thread);
        char label[256];
        jw_obj(w, NULL);
        jw_u64(w, "tid", sth->tid);
        json_pid(w, sth->pid);
        jw_str(w, "process_label", rep_process_label(m, t->thread, label));
        jw_str(w, "name", rep_thread_name(m, t->thread));
        jw_i64(w, "cpu_ns", t->cpu_ns);
        jw_u64(w, "switches", t->switches);
        jw_u64(w, "voluntary", t->voluntary);
        jw_u64(w, "involuntary", t->involuntary);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_obj_end(w);
    /* 2: per interval (what `etlkit cpu --json --interval` gives, by columns) */
    jw_obj(w, "utilisation");
    jw_i64(w, "start_ns", pg->v0);
    jw_i64(w, "interval_ns", pg->interval);
    jw_u64(w, "intervals", pg->ncols);
    jw_arr(w, "cpus");
    for (size_t k = 0; k < pg->ncpu; k++) {
        jw_arr(w, NULL);
        for (size_t b = 0; b < pg->ncols; b++) jw_i64(w, NULL, cpu_busy(pg, b, k));
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "processes");
    size_t np = u->nprocesses < STACKED ? u->nprocesses : STACKED;
    for (size_t j = 0; j < np; j++) {
        uint32_t pid;
        char name[256];
        proc_label(m, u->processes[j].process, name, &pid);
        jw_obj(w, NULL);
        json_pid(w, pid);
        jw_str(w, "name", name);
        jw_arr(w, "busy_ns");
        for (size_t b = 0; b < pg->ncols; b++) jw_i64(w, NULL, proc_busy(pg, b, j));
        jw_arr_end(w);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_u64(w, "cells_dropped", u->interval_cells_dropped);
    jw_obj_end(w);
    /* 4, 5: waits (keys as `etlkit waits --json`) */
    jw_obj(w, "ready");
    jw_obj(w, "all");
    json_latency(w, &u->ready_all);
    jw_obj_end(w);
    jw_obj(w, "woken");
    json_latency(w, &u->woken_all);
    jw_obj_end(w);
    jw_arr(w, "histogram");
    for (unsigned i = 0; i < HIST_BINS; i++) {
        jw_obj(w, NULL);
        jw_i64(w, "lo_ns", hist_lo[i]);
        if (i + 1 < HIST_BINS) jw_i64(w, "hi_ns", hist_lo[i + 1]);
        else jw_null(w, "hi_ns");
        jw_u64(w, "count", c->hist[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    json_intervals(w, pg, "longest_ready", u->longest_ready, u->n_longest_ready, 0);
    jw_obj_end(w);
    jw_obj(w, "waits");
    jw_arr(w, "by_reason");
    for (unsigned k = 0; k < 64; k++) {
        const etl_usage_reason *r = &u->reasons[k];
        if (!r->count) continue;
        const char *rn = etl_wait_reason_name(k);
        jw_obj(w, NULL);
        jw_u64(w, "code", k);
        if (rn) jw_str(w, "reason", rn);
        else jw_null(w, "reason");
        jw_u64(w, "count", r->count);
        jw_i64(w, "wait_ns", r->wait_ns);
        jw_i64(w, "max_ns", r->max_ns);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    json_intervals(w, pg, "longest_waits", u->longest_waits, u->n_longest_waits, 1);
    jw_obj_end(w);
    /* 6: spin locks (as `etlkit spinlocks --json`), PMC (as `etlkit pmc --json`) */
    const etl_spinlocks *s = &c->s;
    if (c->have_s && s->events) {
        jw_obj(w, "spinlocks");
        jw_u64(w, "events", s->events);
        jw_obj(w, "acquisitions");
        jw_u64(w, "est", s->acquisitions.est);
        jw_u64(w, "lo", s->acquisitions.lo);
        if (s->acquisitions.hi_known) jw_u64(w, "hi", s->acquisitions.hi);
        else jw_null(w, "hi");
        jw_obj_end(w);
        jw_u64(w, "contended_est", s->contended.est);
        jw_arr(w, "locks");
        for (size_t i = 0; i < s->nlocks && i < pg->top; i++) {
            const etl_spin_group *g = &s->locks[i];
            snprintf(buf, sizeof buf, "0x%016llx", (unsigned long long)g->lock);
            jw_obj(w, NULL);
            jw_str(w, "lock", buf);
            jw_u64(w, "events", g->a.events);
            jw_u64(w, "est_acquisitions", g->a.est_acq);
            jw_u64(w, "est_contended", g->a.est_contended);
            jw_fixed(w, "collision_pct", g->collision_pct, 4);
            jw_u64(w, "wait_total", g->a.w_wait);
            jw_u64(w, "wait_mean", g->mean_wait);
            jw_u64(w, "wait_max", g->a.max_wait);
            jw_u64(w, "hold_p99", g->hold_p99);
            if (g->acq_pct >= 0) jw_fixed(w, "acquisition_cpu_pct", g->acq_pct, 4);
            else jw_null(w, "acquisition_cpu_pct");
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    } else {
        jw_null(w, "spinlocks");
    }
    const etl_pmc *p = &c->p;
    if (c->have_p && p->switches_pmc) {
        jw_obj(w, "pmc");
        jw_u64(w, "switches_with_pmc", p->switches_pmc);
        jw_u64(w, "counters", p->counters);
        etl_pmc_ratios r;
        jw_arr(w, "threads");
        for (size_t i = 0; i < p->nthreads && i < pg->top; i++) {
            const etl_pmc_thread *t = &p->threads[i];
            const etl_sched_thread *sth = etl_sched_thread_at(m, t->thread);
            jw_obj(w, NULL);
            jw_u64(w, "tid", sth ? sth->tid : 0);
            jw_i64(w, "cpu_ns", t->s.cpu_ns);
            jw_arr(w, "deltas");
            for (unsigned k = 0; k < p->counters; k++) jw_u64(w, NULL, t->s.delta[k]);
            jw_arr_end(w);
            etl_pmc_ratios_of(p, &t->s, &r);
            if (r.ipc_x1000 >= 0) jw_fixed(w, "ipc", r.ipc_x1000, 3);
            else jw_null(w, "ipc");
            if (r.llc_mpki_x1000 >= 0) jw_fixed(w, "llc_mpki", r.llc_mpki_x1000, 3);
            else jw_null(w, "llc_mpki");
            if (r.branch_mpki_x1000 >= 0) jw_fixed(w, "branch_mpki", r.branch_mpki_x1000, 3);
            else jw_null(w, "branch_mpki");
            jw_obj_end(w);
        }
        jw_arr_end(w);
        etl_pmc_ratios_of(p, &p->total, &r);
        if (r.ipc_x1000 >= 0) jw_fixed(w, "ipc", r.ipc_x1000, 3);
        else jw_null(w, "ipc");
        if (r.llc_mpki_x1000 >= 0) jw_fixed(w, "llc_mpki", r.llc_mpki_x1000, 3);
        else jw_null(w, "llc_mpki");
        jw_obj_end(w);
    } else {
        jw_null(w, "pmc");
    }
    /* 7: wake-ups (as `etlkit wakeups --json`), the wait chain (as `etlkit waitchain --json`) */
    const etl_wakeups *wk = &c->w;
    if (c->have_w) {
        jw_obj(w, "wakeups");
        jw_u64(w, "total", wk->total);
        jw_fixed(w, "per_second", rate(wk->total, pg->win), 3);
        jw_obj(w, "by_waker");
        jw_u64(w, "thread", wk->by_kind[ETL_WAKER_THREAD]);
        jw_u64(w, "dpc", wk->by_kind[ETL_WAKER_DPC]);
        jw_u64(w, "idle", wk->by_kind[ETL_WAKER_IDLE]);
        jw_u64(w, "unknown", wk->by_kind[ETL_WAKER_UNKNOWN]);
        jw_obj_end(w);
        jw_arr(w, "by_process");
        for (size_t i = 0; i < wk->nprocesses && i < 12; i++) {
            char name[256];
            jw_obj(w, NULL);
            jw_str(w, "label", waker_proc(m, &wk->processes[i], name));
            jw_u64(w, "count", wk->processes[i].count);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    } else {
        jw_null(w, "wakeups");
    }
    const etl_chain *ch = pg->chain;
    if (ch && ch->status == ETL_CHAIN_OK && ch->nnodes) {
        const etl_sched *cm = pg->chain_model;
        jw_obj(w, "waitchain");
        jw_u64(w, "tid", ch->nodes[0].tid);
        jw_i64(w, "from_ns", ch->nodes[0].start);
        jw_i64(w, "at_ns", ch->nodes[0].end);
        jw_u64(w, "nodes", ch->nnodes);
        jw_u64(w, "depth", ch->o.depth);
        jw_i64(w, "min_ns", ch->o.min_ns);
        jw_arr(w, "critical_path");
        for (size_t i = 0; i < ch->npath && i < pg->top; i++) {
            const etl_chain_path *pp = &ch->path[i];
            const etl_sched_thread *sth = etl_sched_thread_at(cm, pp->thread);
            jw_obj(w, NULL);
            jw_u64(w, "tid", sth ? sth->tid : 0);
            jw_str(w, "state", etl_chain_state_name(pp->state));
            if (pp->has_reason) jw_u64(w, "reason_code", pp->reason);
            jw_u64(w, "depth", pp->depth);
            jw_i64(w, "ns", pp->ns);
            jw_obj_end(w);
        }
        jw_arr_end(w);
        jw_obj_end(w);
    } else {
        jw_null(w, "waitchain");
    }
    jw_obj_end(w);
}

/* ---- the page ----------------------------------------------------------------------------------- */

/*
 * report_json.c - the report page's embedded JSON block: every number the page shows. Under cpu,
 * waits, spinlocks, pmc and wakeups, the objects those commands print with --json (rep_json.h);
 * besides them the page's own: the trace's facts, the utilisation per interval, the ready
 * histogram and the wait chain; with samples, `etlkit profile --json` and the flame graph's tree.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "rep_json.h"


void json_pid(jw *w, uint32_t pid)
{
    if (pid != UINT32_MAX) jw_u64(w, "pid", pid);
    else jw_null(w, "pid");
}

/*
 * The member `name` (cpu, waits, spinlocks, pmc, wakeups): exactly the object `etlkit NAME FILE --json
 * --top N` prints, written by the same function, with the command's options (N, the page's --top; the
 * same window, --complete-only and --max-wait-reason) and the kinds its run skips.
 */
static void commands_json(jw *w, const page *pg, const char *name)
{
    const rctx *c = pg->c;
    const rep_run *run = pg->run;
    rep_args a = *pg->a;
    a.cmd = name;
    a.format = FMT_JSON;
    a.top = pg->top == UINT_MAX ? 0 : pg->top; /* every row: the commands' 0 */
    jw_obj(w, name);
    if (strcmp(name, "cpu") == 0) {
        a.skip = REP_SKIP_CPU;
        cpu_json(w, run, &c->u, &a, 0);
    } else if (strcmp(name, "waits") == 0) {
        a.skip = REP_SKIP_WAITS;
        waits_json(w, run, &c->u, pg->by_ready, &a);
    } else if (strcmp(name, "spinlocks") == 0) {
        a.skip = REP_SKIP_SPINLOCKS;
        spinlocks_json(w, run, &c->s, &c->spin, 0, &a);
    } else if (strcmp(name, "pmc") == 0) {
        static const char no_labels[ETL_PMC_MAX][32];
        a.skip = REP_SKIP_PMC;
        pmc_json(w, run, &c->p, no_labels, 0, &a);
    } else {
        a.skip = REP_SKIP_WAKEUPS;
        wakeups_json(w, run, &c->w, &a);
    }
    jw_obj_end(w);
}

/* 8. the sampled profile, with or without switches, only when the trace has samples: `etlkit profile --json
 * --top N`, and the flame graph's tree. */
static void profile_members(jw *w, const page *pg)
{
    if (!pg->prof) return;
    jw_obj(w, "profile");
    profile_json(w, pg->run->in.reader, pg->run->in.path, pg->prof, pg->top, pg->syms);
    jw_obj_end(w);
    if (flame_json(w, pg->prof, pg->syms) != 0) {
        /* Out of memory: a page without its flame graph (or with part of it) fails, exit 1. pg is write_json's
         * caller's own page (report_html.c), not a constant: its failure is the one member written here. */
        errno = ENOMEM;
        page_fail((page *)pg, &(etl_memstream){0});
    }
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
    cli_json_recovery(w, st, 0);
    jw_bool(w, "damaged", etl_stats_damaged(st) || etl_stats_damaged(&pg->run->damage));
    jw_obj_end(w);
    jw_bool(w, "has_switches", pg->switches);
    rep_json_anomalies(pg->run, w);
    if (!pg->switches) { /* the reports' objects say there is nothing, as their commands do */
        static const char *const reports[] = {"cpu", "waits", "spinlocks", "pmc", "wakeups"};
        for (size_t i = 0; i < sizeof reports / sizeof reports[0]; i++) commands_json(w, pg, reports[i]);
        profile_members(w, pg);
        jw_obj_end(w);
        return;
    }
    /* 2, 3: cpu, as `etlkit cpu --json --top N` prints it */
    commands_json(w, pg, "cpu");
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
    /* neither busy nor idle (cpu --json --interval's unknown_cpus): the heat strip hatches it */
    jw_arr(w, "unknown_cpus");
    for (size_t k = 0; k < pg->ncpu; k++) {
        jw_arr(w, NULL);
        for (size_t b = 0; b < pg->ncols; b++) jw_i64(w, NULL, etl_usage_interval_cpu_unknown_ns(u, b, k));
        jw_arr_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "processes");
    size_t np = u->nprocesses < STACKED ? u->nprocesses : STACKED;
    for (size_t j = 0; j < np; j++) {
        uint32_t pid;
        char name[256];
        rep_process_name(m, u->processes[j].process, name, &pid);
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
    /* 4: the ready histogram (its bins as the page draws them) */
    jw_obj(w, "ready");
    rep_json_bins(w, "histogram", "lo_ns", "hi_ns", hist_lo, c->u.ready_hist, HIST_BINS);
    jw_obj_end(w);
    /* 5, 6, 7: waits, spin locks, PMC, wake-ups as their commands print them with --json --top N */
    commands_json(w, pg, "waits");
    commands_json(w, pg, "spinlocks");
    commands_json(w, pg, "pmc");
    commands_json(w, pg, "wakeups");
    /* 7: the wait chain (as `etlkit waitchain --json`) */
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
    profile_members(w, pg);
    jw_obj_end(w);
}

/* ---- the page ----------------------------------------------------------------------------------- */

/* report.c - see report.h. */
#include "report.h"
#include "rep_json.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

void rep_args_init(rep_args *a, const char *cmd)
{
    memset(a, 0, sizeof *a);
    a->cmd = cmd;
    a->thread = -1;
    a->bias = -1;
    a->threads = cli_threads_default();
}

/* --range as parsed: times count from the trace's start, so a window wholly before it holds nothing of it. */
static int range_check(const cli_opt *o, const char *value, char *err, size_t cap)
{
    (void)value;
    rep_args *a = o->ctx;
    const cli_range *r = &a->range;
    if (r->v1 <= 0) {
        snprintf(err, cap, "--range %s %s ends before the trace starts (0)", r->text[0], r->text[1]);
        return -1;
    }
    a->v0 = r->v0 < 0 ? 0 : r->v0; /* clipped to the trace, said once the end is known */
    a->v1 = r->v1;
    a->range_text[0] = r->text[0];
    a->range_text[1] = r->text[1];
    a->has_range = 1;
    return 0;
}

/* --json, --csv: one format; both given is an error, never the last one silently winning. */
static int format_flag(const cli_opt *o, const char *value, char *err, size_t cap)
{
    (void)value;
    int *format = o->dst;
    if (*format != FMT_TEXT && *format != (int)o->min) {
        snprintf(err, cap, "--json and --csv are one format each: give one");
        return -1;
    }
    *format = (int)o->min;
    return 0;
}

void rep_options(rep_args *a, unsigned which, cli_opt out[REP_OPTS_MAX])
{
    const cli_opt all[] = {
        {.kind = CLI_OPT_CUSTOM, .name = "json", .help = "one JSON object on stdout", .parse = format_flag,
         .dst = &a->format, .min = FMT_JSON},
        {.kind = CLI_OPT_CUSTOM, .name = "csv", .help = "one CSV table on stdout", .parse = format_flag,
         .dst = &a->format, .min = FMT_CSV},
        {.kind = CLI_OPT_RANGE, .name = "range", .arg = "START END", .dst = &a->range, .check = range_check, .ctx = a,
         .help = a->range_help ? a->range_help
                               : "only this window, from the trace start: seconds, or with a ms/us/µs/ns suffix (e.g. "
                                 "--range 1.5 2500ms, or 1e-1 1.5e3ms), whole nanoseconds; intervals are clipped",
         .need = "START and END, times such as 1.5, 250ms, 10us or 42ns"},
        {.kind = CLI_OPT_UINT, .name = "top", .arg = "N", .help = "the N biggest rows of each table (0 = all)",
         .need = "a count (0 = all)", .dst = &a->top, .size = sizeof a->top, .max = 1000000, .seen = &a->top_set},
        CLI_STRING("process", 0, "NAME|PID", "only threads of processes with this image name or PID", "a name or a PID",
                   &a->process),
        {.kind = CLI_OPT_UINT, .name = "thread", .arg = "TID", .help = "only this thread id", .need = "a thread id",
         .dst = &a->thread, .size = sizeof a->thread, .max = UINT32_MAX},
        CLI_FLAG("complete-only", 0, "drop each CPU's head and tail slice (WPA-like)", &a->complete_only, 1),
        CLI_UINT("max-wait-reason", "N", "StateWr bias of compact batches, 1..54 (default: from the OS build)", "1..54",
                 &a->bias, 1, 54),
        CLI_UINT("threads", "N", "threads that read the trace (default: the CPUs available); the output is the same "
                 "with any N", "a count, 1..256", &a->threads, 1, 256),
        CLI_FLAG("quiet", 'q', "no warnings about the input", &a->quiet, 1),
    };
    size_t n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        if (which & 1u << i) out[n++] = all[i];
    out[n] = (cli_opt)CLI_END;
}

int rep_parse(rep_args *a, const cli_cmd *cmd, const cli_opt *own, unsigned which, int argc, char **argv)
{
    cli_opt common[REP_OPTS_MAX];
    rep_options(a, which, common);
    const cli_opt table[] = {CLI_INCLUDE(own), CLI_INCLUDE(common), CLI_END};
    return cli_opts_parse(cmd, table, argc, argv, &a->path);
}

int rep_finish(rep_run *run, const char *cmd)
{
    int rc = rep_run_close(run);
    if (cli_stdout_done(cmd) != EXIT_OK) return EXIT_IO;
    return rc;
}

static void progress_event(cli_progress *p, etl_sched_source *s, uint64_t *n)
{
    if (!p->on || (++*n & 0xFFFF)) return;
    cli_progress_update(p, etl_sched_source_progress(s));
}

int rep_run_open(rep_run *run, const rep_args *a, etl_sched_row_fn on_row, void *ctx,
                 void (*on_event)(void *ctx, const etl_sched_event *ev))
{
    memset(run, 0, sizeof *run);
    int rc = cli_open(&run->in, a->path, a->quiet);
    return rc != EXIT_OK ? rc : rep_run_start(run, a, on_row, ctx, on_event);
}

static void percpu_progress(void *ctx, uint64_t bytes) { cli_progress_update(ctx, bytes); }

int rep_run_percpu(rep_run *run, const rep_args *a, const etl_sched_percpu_consumer *c)
{
    memset(run, 0, sizeof *run);
    int rc = cli_open(&run->in, a->path, a->quiet);
    if (rc != EXIT_OK) return rc;
    if (!c) return REP_TIME_ORDER;
    etl_reader *r = run->in.reader;
    cli_progress bar = {0};
    cli_progress_start(&bar, etl_reader_file_size(r));
    etl_diag d = {0};
    etl_sched_percpu_options o = {.sz = sizeof o, .bias = a->bias, .threads = a->threads,
                                  .complete_only = a->complete_only != 0, .progress = percpu_progress,
                                  .progress_ctx = &bar, .diag = &d};
    etl_sched_percpu_result res;
    /* Its warnings wait: should the trace need the time-ordered run, that run tells them. */
    cli_diag_hold(&run->in);
    etl_status st = etl_sched_percpu_run(r, &o, c, &res);
    cli_progress_end(&bar);
    cli_diag_release(&run->in, st != ETL_E_UNSUPPORTED);
    if (st == ETL_E_UNSUPPORTED) return REP_TIME_ORDER;
    if (st != ETL_OK) {
        fprintf(stderr, "%s %s: %s\n", prog, a->cmd, d.msg[0] ? d.msg : etl_status_str(st));
        rep_run_close(run);
        return EXIT_IO;
    }
    run->model = res.model;
    run->mstats = res.stats;
    run->sstats = res.source;
    run->damage = res.damage;
    run->end_ts = res.end_ts;
    run->end_ns = etl_clock_ns(etl_reader_clock(r), res.end_ts);
    run->skip = a->skip;
    rep_run_window(run, a);
    return EXIT_OK;
}

void rep_run_window(rep_run *run, const rep_args *a)
{
    int64_t v0 = a->has_range ? a->v0 : 0, v1 = a->has_range ? a->v1 : run->end_ns;
    etl_window_clip(&v0, &v1, run->end_ns);
    run->v0 = v0;
    run->v1 = v1;
    rep_range_note(a, run->in.path, run->end_ns, v0, v1);
}

void rep_range_note(const rep_args *a, const char *path, int64_t end_ns, int64_t v0, int64_t v1)
{
    int64_t given = a->range.set ? a->range.v0 : a->v0; /* START as given: before the trace, it is negative */
    if (!a->has_range || a->quiet || (v0 == given && v1 == a->v1)) return;
    /* Why: a START before the trace's start (0), an END (or START) past its end, or both. */
    bool early = given < 0, late = v1 != a->v1 || (!early && v0 != given);
    char s[32], e[32], t[32];
    fmt_fixed(t, end_ns / 1000, 6);
    fprintf(stderr, "%s %s: note: %s %s%s%s: --range %s %s is clipped to %s s .. %s s\n", prog, a->cmd, path,
            early && late ? "runs from 0 s to " : early ? "starts at 0 s" : "ends at ", late ? t : "",
            late ? " s" : "", a->range_text[0], a->range_text[1], fmt_fixed(s, v0 / 1000, 6), fmt_fixed(e, v1 / 1000, 6));
}

int rep_run_start(rep_run *run, const rep_args *a, etl_sched_row_fn on_row, void *ctx,
                  void (*on_event)(void *ctx, const etl_sched_event *ev))
{
    etl_reader *r = run->in.reader;
    etl_sched_source_options so = {.sz = sizeof so, .bias = a->bias, .skip = a->skip, .threads = a->threads};
    etl_sched_options mo = {sizeof mo, on_row, ctx, a->complete_only != 0, a->on_ready, r};
    if (etl_sched_source_open(r, &so, &run->src) != ETL_OK ||
        etl_sched_open(etl_reader_clock(r), etl_reader_processors(r), &mo, &run->model) != ETL_OK) {
        fprintf(stderr, "%s %s: %s: out of memory\n", prog, a->cmd, run->in.path);
        rep_run_close(run);
        return EXIT_IO;
    }
    run->on_event = on_event;
    run->skip = a->skip;
    run->ctx = ctx;
    run->v0 = a->has_range ? a->v0 : 0;
    return EXIT_OK;
}

void rep_run_go(rep_run *run, const rep_args *a)
{
    etl_reader *r = run->in.reader;
    void (*on_event)(void *, const etl_sched_event *) = run->on_event;
    void *ctx = run->ctx;
    cli_progress bar = {0};
    cli_progress_start(&bar, etl_reader_file_size(r));
    const etl_sched_event *ev;
    uint64_t n = 0;
    while (etl_sched_source_next_ref(run->src, &ev) == ETL_OK) {
        if (on_event) on_event(ctx, ev);
        etl_sched_push(run->model, ev);
        progress_event(&bar, run->src, &n);
    }
    cli_progress_end(&bar);
    run->end_ts = etl_sched_end_ts(r, etl_sched_source_stats_get(run->src)->last_ts);
    run->end_ns = etl_clock_ns(etl_reader_clock(r), run->end_ts);
    run->model_failed = etl_sched_finish(run->model, run->end_ts) != ETL_OK;
    run->cmd = a->cmd;
    etl_sched_source_damage(run->src, &run->damage);
    run->mstats = *etl_sched_stats_get(run->model);
    run->sstats = *etl_sched_source_stats_get(run->src);
    rep_run_window(run, a);
}

int rep_run_close(rep_run *run)
{
    etl_sched_close(run->model);
    etl_sched_source_close(run->src);
    run->model = NULL;
    run->src = NULL;
    if (!run->in.reader) return EXIT_OK;
    int rc = cli_close(&run->in, &run->damage);
    /* The model's damage: no kernel writes these (exit 3, like the container's). */
    const etl_sched_stats *m = &run->mstats;
    if (m->repeated_starts && !run->in.quiet)
        fprintf(stderr, "%s: %s: warning: %llu Thread Starts of threads already started that had not run: the same "
                "threads, not new ones\n", prog, run->in.path, (unsigned long long)m->repeated_starts);
    if (m->over_limit && !run->in.quiet)
        fprintf(stderr, "%s: %s: warning: %llu events left out past the model's limits (%u thread and as many process "
                "instances, %u MiB of names)\n", prog, run->in.path, (unsigned long long)m->over_limit,
                ETL_SCHED_MAX_INSTANCES, ETL_SCHED_MAX_NAME_BYTES >> 20);
    if (run->model_failed) {
        if (!run->told)
            fprintf(stderr, "%s %s: %s: out of memory: the scheduler model left threads out\n", prog, run->cmd,
                    run->in.path);
        return EXIT_IO;
    }
    return rc == EXIT_OK && (m->repeated_starts || m->over_limit) ? EXIT_DAMAGED : rc;
}

const char *rep_process_label(const etl_sched *m, uint32_t thread, char out[256])
{
    if (thread == ETL_SCHED_IDLE) return strcpy(out, "Idle (0)");
    const etl_sched_thread *t = etl_sched_thread_at(m, thread);
    const etl_sched_process *p = t ? etl_sched_process_at(m, t->process) : NULL;
    if (!p) return strcpy(out, "Unknown");
    snprintf(out, 256, "%s (%u)", p->name ? text_name(etl_sched_names(m) + p->name) : "Unknown", p->pid);
    return out;
}

int64_t rep_pct100(int64_t part, int64_t whole)
{
    return whole > 0 ? div_round_sat((__int128)part * 10000, whole) : 0;
}

int64_t rep_rate(uint64_t n, int64_t window)
{
    return window > 0 ? div_round_sat((__int128)n * 1000000000000, window) : 0;
}

const char *rep_lat_dur(char out[32], const etl_latency *l, int64_t v)
{
    return l->count ? fmt_dur(out, v) : strcpy(out, "-");
}

const char *rep_thread_name(const etl_sched *m, uint32_t thread)
{
    const etl_sched_thread *t = etl_sched_thread_at(m, thread);
    return t && t->name ? etl_sched_names(m) + t->name : "";
}

const char *rep_process_name(const etl_sched *m, uint32_t process, char out[256], uint32_t *pid)
{
    const etl_sched_process *sp = etl_sched_process_at(m, process);
    *pid = sp ? sp->pid : UINT32_MAX;
    if (!sp) return strcpy(out, "Unknown");
    snprintf(out, 256, "%s", sp->name ? etl_sched_names(m) + sp->name : "Unknown");
    return out;
}

int rep_thread_selected(const rep_args *a, const etl_sched *m, uint32_t thread)
{
    const etl_sched_thread *t = etl_sched_thread_at(m, thread);
    if (a->thread >= 0 && (!t || t->tid != (uint64_t)a->thread)) return 0;
    if (a->process) {
        if (!t) return 0;
        uint64_t pid;
        if (etl_sched_id_arg(a->process, &pid)) return t->pid == pid;
        const etl_sched_process *p = etl_sched_process_at(m, t->process);
        const char *name = p && p->name ? etl_sched_names(m) + p->name : "Unknown";
        /* "svchost" matches "svchost.exe", as people type it. */
        size_t n = strlen(a->process);
        if (strncasecmp(name, a->process, n) != 0) return 0;
        return name[n] == 0 || strcasecmp(name + n, ".exe") == 0;
    }
    return 1;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

size_t rep_same_name_pids(const etl_sched *m, uint32_t at, uint32_t **pids)
{
    size_t n, k = 0;
    const etl_sched_process *p = etl_sched_processes(m, &n);
    const char *name = etl_sched_process_image(m, &p[at]);
    *pids = malloc(n * sizeof **pids);
    if (!*pids) return 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(etl_sched_process_image(m, &p[i]), name) == 0) (*pids)[k++] = p[i].pid;
    qsort(*pids, k, sizeof **pids, cmp_u32); /* a PID reused by the same name: once */
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (!u || (*pids)[u - 1] != (*pids)[i]) (*pids)[u++] = (*pids)[i];
    return u;
}

/* The PIDs a suggested name has: the first few, then how many more (text stays one line a name). */
#define NEAR_PIDS_SHOWN 4

static void print_name_pids(FILE *f, const etl_sched *m, uint32_t at)
{
    uint32_t *pids;
    size_t n = rep_same_name_pids(m, at, &pids);
    if (n < 2) {
        fprintf(f, " (PID %u)", etl_sched_process_at(m, at)->pid); /* or out of memory: the one at hand */
    } else {
        fprintf(f, " (PIDs");
        for (size_t i = 0; i < n && i < NEAR_PIDS_SHOWN; i++) fprintf(f, "%s %u", i ? "," : "", pids[i]);
        if (n > NEAR_PIDS_SHOWN) fprintf(f, " and %zu more", n - NEAR_PIDS_SHOWN);
        fprintf(f, ")");
    }
    free(pids);
}

void rep_near_print(FILE *f, const etl_sched *m, const etl_sched_found *nr)
{
    char label[256];
    bool threads = nr->what == ETL_ASKED_NO_THREAD; /* else process instances, when there are any */
    if (nr->what == ETL_ASKED_NO_PROCESS && !nr->by_pid && !nr->nnear) fprintf(f, " (no process name contains it)");
    if (nr->nnear) fprintf(f, threads ? "; the nearest thread ids:" : nr->by_pid ? "; the nearest PIDs:"
                                                                                   : "; processes whose name contains it:");
    fprintf(f, "\n");
    for (size_t i = 0; i < nr->nnear; i++) {
        fprintf(f, "  ");
        if (threads) {
            const char *name = rep_thread_name(m, nr->near[i]);
            fprintf(f, "%u  ", etl_sched_thread_at(m, nr->near[i])->tid);
            text_str(f, rep_process_label(m, nr->near[i], label));
            if (*name) {
                fprintf(f, " \"");
                text_str(f, name);
                fprintf(f, "\"");
            }
        } else {
            const etl_sched_process *p = etl_sched_process_at(m, nr->near[i]);
            text_str(f, text_name(etl_sched_process_image(m, p)));
            if (nr->by_pid) fprintf(f, " (PID %u)", p->pid);
            else print_name_pids(f, m, nr->near[i]); /* a name once: every PID it has, not the first alone */
        }
        fprintf(f, "\n");
    }
}

void rep_no_match(const rep_run *run, const rep_args *a)
{
    const etl_sched *m = run->model;
    if ((!a->process && a->thread < 0) || a->quiet || !m) return;
    size_t n;
    etl_sched_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        if (rep_thread_selected(a, m, (uint32_t)i)) return;
    fprintf(stderr, "%s %s: note: ", prog, a->cmd);
    if (a->thread >= 0) fprintf(stderr, "--thread %lld", a->thread);
    if (a->process) {
        fprintf(stderr, "%s--process ", a->thread >= 0 ? " " : "");
        text_str(stderr, a->process);
    }
    fprintf(stderr, " matches no thread: ");
    etl_sched_found f;
    switch (etl_sched_find_asked(m, a->thread, a->process, &f)) {
    case ETL_ASKED_IDLE:
        fprintf(stderr, "thread 0 is the idle thread, counted as idle, not as a thread\n");
        return;
    case ETL_ASKED_NO_THREAD:
        fprintf(stderr, "thread %lld is not in this trace", a->thread);
        break;
    case ETL_ASKED_NO_PROCESS:
        if (f.by_pid) fprintf(stderr, "no process with PID %s in this trace", a->process);
        else {
            fprintf(stderr, "no process named '");
            text_str(stderr, a->process);
            fprintf(stderr, "' in this trace");
        }
        break;
    default:
        if (a->thread >= 0) {
            char label[256];
            fprintf(stderr, "thread %lld is a thread of ", a->thread);
            text_str(stderr, rep_process_label(m, f.thread, label));
            fprintf(stderr, "\n");
        } else {
            fprintf(stderr, "the process has no thread in this trace\n");
        }
        return;
    }
    rep_near_print(stderr, m, &f);
}

void rep_print_header(const rep_run *run, const char *title)
{
    char a[32], b[32], d[32];
    printf("%s: %s, window %s s .. %s s (%s), %u CPUs\n", title, run->in.path, fmt_fixed(a, run->v0 / 1000, 6),
           fmt_fixed(b, run->v1 / 1000, 6), fmt_dur(d, run->v1 - run->v0), etl_sched_cpu_count(run->model));
}

typedef struct anomaly {
    const char *key;
    uint64_t v;
    const char *text;  /* after a count above 1 */
    const char *one;   /* after a count of 1 */
} anomaly;

static size_t anomalies(const rep_run *run, uint32_t skip, anomaly *out)
{
    /* The header's EventsLost and BuffersLost are not here: the input's note says them (cli_diag_done). */
    const etl_sched_stats *m = &run->mstats;
    const etl_sched_source_stats *s = &run->sstats;
    const etl_stats *d = &run->damage;
    anomaly all[] = {
        {"bad_buffers", d->bad_buffers, "damaged buffers skipped in whole or part",
         "damaged buffer skipped in whole or part"},
        {"decompress_errors", d->decompress_errors, "compressed buffers that did not expand",
         "compressed buffer that did not expand"},
        {"truncated_buffers", d->truncated_buffers, "buffers cut by the end of the file",
         "buffer cut by the end of the file"},
        {"broken_chains", s->broken_chains, "compact switches whose successor was lost (new thread unknown)",
         "compact switch whose successor was lost (new thread unknown)"},
        {"bad_state", s->bad_state, "compact switches whose state is past 9 under the bias (state unknown)",
         "compact switch whose state is past 9 under the bias (state unknown)"},
        {"bad_priority", s->bad_priority, "compact switches whose priority is outside 0..31 (priority unknown)",
         "compact switch whose priority is outside 0..31 (priority unknown)"},
        {"duplicates_dropped", s->duplicates_dropped, "switches dropped: a CPU logged both forms",
         "switch dropped: a CPU logged both forms"},
        {"undecodable", s->undecodable, "scheduler events that did not decode", "scheduler event that did not decode"},
        {"cswitch_chain_mismatch", m->cswitch_chain_mismatch, "switches whose old thread was not the planned one",
         "switch whose old thread was not the planned one"},
        {"time_backwards", m->time_backwards, "events out of time order", "event out of time order"},
        {(skip & 1u << ETL_SCHED_READY) ? NULL : "ready_unmatched", m->ready_unmatched,
         "threads readied but never switched in before the end", "thread readied but never switched in before the end"},
        {"unknown_threads", m->unknown_threads, "threads seen without a Thread event", "thread seen without a Thread event"},
        {"repeated_starts", m->repeated_starts, "Thread Starts of threads already started that had not run",
         "Thread Start of a thread already started that had not run"},
        {"over_limit", m->over_limit, "events left out past the model's limits of threads, processes and names",
         "event left out past the model's limits of threads, processes and names"},
    };
    memcpy(out, all, sizeof all);
    return sizeof all / sizeof all[0];
}

void rep_print_anomalies(const rep_run *run, FILE *f)
{
    rep_print_anomalies_as(run, f, NULL);
}

void rep_print_anomalies_as(const rep_run *run, FILE *f, const char *cmd)
{
    anomaly a[32];
    size_t n = anomalies(run, run->skip, a);
    for (size_t i = 0; i < n; i++)
        if (a[i].key && a[i].v) {
            if (cmd) fprintf(f, "%s %s: ", prog, cmd);
            fprintf(f, "note: %llu %s\n", (unsigned long long)a[i].v, a[i].v == 1 ? a[i].one : a[i].text);
        }
}

void rep_json_begin(jw *w, const rep_run *run, int64_t v0, int64_t v1, uint64_t ncpu)
{
    jw_init(w, stdout);
    jw_obj(w, NULL);
    rep_json_head(w, run, v0, v1, ncpu);
}

void rep_json_head(jw *w, const rep_run *run, int64_t v0, int64_t v1, uint64_t ncpu)
{
    jw_str(w, "file", run->in.path);
    jw_obj(w, "window");
    jw_i64(w, "start_ns", v0);
    jw_i64(w, "end_ns", v1);
    jw_obj_end(w);
    if (ncpu) jw_u64(w, "num_cpus", ncpu);
}

void rep_json_bins(jw *w, const char *key, const char *lo, const char *hi, const int64_t *lo_ns,
                   const uint64_t *count, unsigned n)
{
    jw_arr(w, key);
    for (unsigned i = 0; i < n; i++) {
        jw_obj(w, NULL);
        jw_i64(w, lo, lo_ns[i]);
        if (i + 1 < n) jw_i64(w, hi, lo_ns[i + 1]);
        else jw_null(w, hi);
        jw_u64(w, "count", count[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

void rep_json_anomalies(const rep_run *run, jw *w) { rep_json_anomalies_as(run, w, run->skip); }

void rep_json_anomalies_as(const rep_run *run, jw *w, uint32_t skip)
{
    anomaly a[32];
    size_t n = anomalies(run, skip, a);
    jw_obj(w, "anomalies");
    cli_json_session_lost(w, run->in.reader);
    for (size_t i = 0; i < n; i++)
        if (a[i].key) jw_u64(w, a[i].key, a[i].v); /* a kind the report skipped has no count */
    jw_obj_end(w);
}

static const char no_switches[] = "no context switches in this trace (no CSwitch events or compact batches)";

void rep_no_switches_note(const rep_run *run, const rep_args *a, const char *then)
{
    if (!a->quiet) fprintf(stderr, "%s %s: note: %s: %s: %s\n", prog, a->cmd, run->in.path, no_switches, then);
}

int rep_no_switches(const rep_run *run, const rep_args *a)
{
    if (run->mstats.switches) return 0;
    if (a->format == FMT_TEXT) printf("%s: %s: nothing to report\n", run->in.path, no_switches);
    /* CSV: the table's header row alone on stdout, and why on stderr (JSON: an empty report says it). */
    else if (a->format == FMT_CSV) rep_no_switches_note(run, a, "the table is empty");
    return 1;
}

int rep_usage_failed(rep_run *run, etl_usage *u, const char *cmd)
{
    const etl_diag *d = etl_usage_diag(u);
    fprintf(stderr, "%s %s: %s\n", prog, cmd, d && d->msg[0] ? d->msg : "out of memory");
    run->told = true;
    etl_usage_free(u);
    rep_run_close(run);
    return EXIT_IO;
}

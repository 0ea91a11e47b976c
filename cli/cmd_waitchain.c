/* cmd_waitchain.c - `etlkit waitchain`: why a thread was slow, hop by hop (spec analyses.md §3). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "report.h"
#include "base/platform.h"
#include "etlkit/wakeups.h"
#include "etlkit/waitchain.h"
#include "etlkit/schedstacks.h"
#include "stacks/label_whole.h"
#include "symbols_cli.h"
#include "waits_stacks.h"

static const cli_cmd waitchain_cmd = {
    "waitchain", "FILE --thread TID|PROCESS [--at T] [--from T0] [--depth N] [--min T]",
    "Walks a thread back from T: its running slices, ready gaps and waits with their\n"
    "reason and readier. A wait of at least --min readied by another thread descends into\n"
    "what that thread did until it readied this one (one level deeper), down to --depth;\n"
    "DPC and unknown readiers are leaves, and a thread is never entered twice on one path.\n"
    "The leaves are the critical path: they add up to the interval exactly.\n"
    "When the trace walks stacks at its CSwitch and ReadyThread events, each wait also\n"
    "shows where the thread blocked (its New Thread Stack) and where its readier was (the\n"
    "Readying Thread Stack): the top --frames N frames, innermost first.\n",
    {"FILE"}, 1, 1,
    "Times are from the trace start: seconds, or with a ms/us/ns suffix. The trace is read\n"
    "once to find the interval and once per level of the chain (FILE must be a file, not -).\n"
    "\nExit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage;\n"
    "4 no such thread or no interval.\n"};

enum { EXIT_NOTHING = 4 };

typedef struct out {
    const etl_chain *c;
    const etl_sched *m;
    etl_sched_stacks *stk;       /* NULL: no stacks */
    unsigned frames;             /* shown per stack, 0: all */
    etl_symbols *sym;            /* --symbols (NULL: none) */
    const char *sum;             /* the summary sentence (summary), made before anything is printed */
} out;

/*
 * A frame's label in buf[cap], or whole in memory of its own when longer (a C++ template's name): the caller frees
 * what is not buf. Short of memory, the label cut to buf.
 */
static char *frame_label(const out *o, const etl_profile_frame *f, char *buf, size_t cap)
{
    char *p = etl_sched_label_whole(o->stk, f, buf, cap, NULL);
    return p ? p : buf;
}

/* The top frames of a stack, innermost first, as a JSON array (null: none). */
static void json_stack(jw *w, const out *o, const char *key, uint32_t id)
{
    uint32_t n;
    const etl_profile_frame *f = id == ETL_SCHED_STACK_NONE ? NULL : etl_sched_stacks_frames(o->stk, id, &n);
    if (!f) {
        jw_null(w, key);
        return;
    }
    char buf[1200];
    jw_arr(w, key);
    for (uint32_t k = 0; k < n && (!o->frames || k < o->frames); k++) {
        char *label = frame_label(o, &f[k], buf, sizeof buf);
        jw_str(w, NULL, label);
        if (label != buf) free(label);
    }
    jw_arr_end(w);
    /* all its frames, as the text's "(N more)" tells them: --frames cuts the array */
    char k[64];
    snprintf(k, sizeof k, "%s_frames", key);
    jw_u64(w, k, n);
}

/* The same as text: "a ← b ← c" (and "← ..." when cut). */
static void text_stack(const out *o, uint32_t id)
{
    uint32_t n;
    const etl_profile_frame *f = id == ETL_SCHED_STACK_NONE ? NULL : etl_sched_stacks_frames(o->stk, id, &n);
    if (!f) {
        printf("(no stack)");
        return;
    }
    char buf[1200];
    uint32_t k = 0;
    for (; k < n && (!o->frames || k < o->frames); k++) {
        char *label = frame_label(o, &f[k], buf, sizeof buf);
        if (k) printf(" \u2190 ");
        text_str(stdout, label);
        if (label != buf) free(label);
    }
    if (k < n) printf(" \u2190 ... (%u more)", n - k);
}

static const char *thread_label(const etl_sched *m, uint32_t thread, uint32_t tid, char buf[320])
{
    char label[256];
    rep_process_label(m, thread, label);
    snprintf(buf, 320, "%s tid %u", label, tid);
    return buf;
}

static const char *waker_label(const etl_sched *m, const etl_chain_seg *s, char buf[320])
{
    if (!s->has_waker) return strcpy(buf, s->state == ETL_CHAIN_WAITING ? "Unknown" : "");
    switch (s->waker) {
    case ETL_WAKER_DPC: snprintf(buf, 320, "DPC (CPU %u)", s->ready_cpu); return buf;
    case ETL_WAKER_IDLE: return strcpy(buf, "Idle (0)");
    case ETL_WAKER_UNKNOWN: return strcpy(buf, "Unknown");
    default: return thread_label(m, s->waker_thread, s->waker_tid, buf);
    }
}

static const char *reason_of(const etl_chain_seg *s, char buf[16])
{
    if (!s->has_reason) return "";
    const char *n = etl_wait_reason_name(s->reason);
    if (n) return n;
    snprintf(buf, 16, "%u", s->reason);
    return buf;
}

/* ---- text --------------------------------------------------------------------- */

static void tree_rows(const out *o, tbl *t, uint32_t ni, unsigned indent)
{
    const etl_chain_node *n = &o->c->nodes[ni];
    char ind[80];
    unsigned k = indent * 2 < sizeof ind - 1 ? indent * 2 : sizeof ind - 1;
    memset(ind, ' ', k);
    ind[k] = 0;
    for (uint32_t i = n->first; i < n->first + n->count; i++) {
        const etl_chain_seg *s = &o->c->segs[i];
        char st[128], start[32], dur[32], cpu[16], rs[16], wk[320], th[320], note[48];
        snprintf(st, sizeof st, "%s%s", ind, etl_chain_state_name(s->state));
        snprintf(cpu, sizeof cpu, "%u", s->cpu);
        const char *leaf = etl_chain_leaf_name(s->leaf);
        snprintf(note, sizeof note, "%s", leaf && s->leaf != ETL_LEAF_DPC && s->leaf != ETL_LEAF_UNKNOWN &&
                                                  s->leaf != ETL_LEAF_IDLE ? leaf : s->child != UINT32_MAX ? "v" : "");
        const char *r[] = {st, thread_label(o->m, n->thread, n->tid, th), fmt_fixed(start, s->start / 1000, 6),
                           fmt_dur(dur, s->end - s->start), s->state == ETL_CHAIN_UNKNOWN ? "" : cpu,
                           reason_of(s, rs), waker_label(o->m, s, wk), note};
        tbl_row(t, r);
        if (s->child != UINT32_MAX) tree_rows(o, t, s->child, indent + 1);
    }
}

/* Appends to buf (always terminated). */
static void cat(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void cat(char *buf, size_t cap, const char *fmt, ...)
{
    size_t n = strlen(buf);
    if (n + 1 >= cap) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + n, cap - n, fmt, ap);
    va_end(ap);
}

/* The one-sentence summary into buf; false when there was no memory to make it (nothing then may be printed). */
static bool summary(const out *o, char *buf, size_t cap)
{
    etl_chain_summary s;
    if (etl_chain_summarize(o->c, &s) != ETL_OK) {
        etl_chain_summary_free(&s);
        return false;
    }
    char d[32], d2[32], wk[320], rs[16];
    buf[0] = 0;
    cat(buf, cap, "of %s: ", fmt_dur(d, s.interval_ns));
    /* "W waiting on X for R, of which W' it waited on X' ..., of which T' it ran, R' it was ready, T it ran ...":
     * each level's time running and ready after the levels below it. */
    for (size_t i = 0; i < s.nlevels; i++) {
        const etl_chain_summary_level *l = &s.levels[i];
        cat(buf, cap, i ? ", of which %s it waited on %s" : "%s waiting on %s", fmt_dur(d, l->wait_ns),
            waker_label(o->m, &l->key, wk));
        if (l->key.has_reason) cat(buf, cap, " for %s", reason_of(&l->key, rs));
    }
    for (size_t i = s.nlevels; i-- > 0;) {
        const etl_chain_summary_level *l = &s.levels[i];
        if (l->ran_ns) cat(buf, cap, "%s%s it ran", i + 1 < s.nlevels ? ", " : ", of which ", fmt_dur(d, l->ran_ns));
        if (l->ready_ns) cat(buf, cap, ", %s it was ready", fmt_dur(d, l->ready_ns));
    }
    if (s.nlevels) {
        int64_t others = s.by_state[ETL_CHAIN_WAITING] - s.levels[0].wait_ns;
        if (others > 0) cat(buf, cap, "; %s waiting on others", fmt_dur(d, others));
        cat(buf, cap, "; ");
    }
    cat(buf, cap, "%s ready; %s running", fmt_dur(d, s.by_state[ETL_CHAIN_READY]),
        fmt_dur(d2, s.by_state[ETL_CHAIN_RUNNING]));
    if (s.by_state[ETL_CHAIN_OFFCPU]) cat(buf, cap, "; %s off-CPU (no ReadyThread)", fmt_dur(d, s.by_state[ETL_CHAIN_OFFCPU]));
    if (s.by_state[ETL_CHAIN_UNKNOWN]) cat(buf, cap, "; %s unknown", fmt_dur(d, s.by_state[ETL_CHAIN_UNKNOWN]));
    etl_chain_summary_free(&s);
    return true;
}

/* Each wait of the tree, in its order: where the thread blocked and where its readier was. */
static void print_stacks_node(const out *o, uint32_t ni)
{
    const etl_chain_node *n = &o->c->nodes[ni];
    for (uint32_t i = n->first; i < n->first + n->count; i++) {
        const etl_chain_seg *s = &o->c->segs[i];
        if (s->state == ETL_CHAIN_WAITING || s->state == ETL_CHAIN_OFFCPU) {
            char th[320], d[32], start[32], wk[320], rs[16];
            printf("  ");
            text_str(stdout, thread_label(o->m, n->thread, n->tid, th));
            printf(" %s %s at %s s", s->state == ETL_CHAIN_WAITING ? "waited" : "was off-CPU", fmt_dur(d, s->end - s->start),
                   fmt_fixed(start, s->start / 1000, 6));
            if (s->has_reason) printf(" (%s)", reason_of(s, rs));
            printf("\n    blocked in:  ");
            text_stack(o, etl_chain_blocking_stack(o->c, o->stk, n, i));
            if (s->state == ETL_CHAIN_WAITING && s->has_waker) {
                printf("\n    readied by ");
                text_str(stdout, waker_label(o->m, s, wk));
                printf(" in:  ");
                text_stack(o, etl_chain_readier_stack(o->stk, s));
            }
            printf("\n");
        }
        if (s->child != UINT32_MAX) print_stacks_node(o, s->child);
    }
}

static void print_stacks(const out *o)
{
    if (o->frames) printf("\nStacks of the waits (the top %u frames, innermost first)\n", o->frames);
    else printf("\nStacks of the waits (innermost first)\n");
    print_stacks_node(o, 0);
}

static void print_text(const rep_run *run, const out *o)
{
    const etl_chain *c = o->c;
    const etl_chain_node *root = &c->nodes[0];
    char a[32], b[32], d[32], mn[32], th[320];
    rep_print_header(run, "etlkit waitchain");
    const char *name = rep_thread_name(o->m, root->thread);
    /* Names from the trace through text_str: a thread description can hold anything. */
    printf("\n");
    text_str(stdout, thread_label(o->m, root->thread, root->tid, th));
    if (*name) {
        printf(" \"");
        text_str(stdout, name);
        printf("\"");
    }
    printf(", %s s .. %s s (%s), depth %u, min %s, %u passes\n\n", fmt_fixed(a, root->start / 1000, 6),
           fmt_fixed(b, root->end / 1000, 6), fmt_dur(d, root->end - root->start), c->o.depth, fmt_dur(mn, c->o.min_ns),
           c->passes);
    static const char *const h[] = {"State", "Thread", "=Start (s)", "=Duration", "=CPU", "Reason", "Readied by",
                                    "Note"};
    tbl t;
    tbl_init(&t, 8, h);
    tree_rows(o, &t, 0, 0);
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
    if (o->stk) print_stacks(o);
    printf("\nSummary: ");
    text_str(stdout, o->sum);
    printf("\n\nCritical path (each nanosecond charged to the deepest segment)\n");
    static const char *const ph[] = {"=Time", "=%", "State", "Reason", "=Depth", "Thread"};
    tbl_init(&t, 6, ph);
    int64_t len = root->end - root->start;
    for (size_t i = 0; i < c->npath; i++) {
        const etl_chain_path *p = &c->path[i];
        char pc[32], rs[16], dp[16];
        const etl_sched_thread *st = etl_sched_thread_at(o->m, p->thread);
        etl_chain_seg tmp = {.has_reason = p->has_reason, .reason = p->reason};
        snprintf(dp, sizeof dp, "%u", p->depth);
        const char *r[] = {fmt_dur(d, p->ns), fmt_fixed(pc, rep_pct100(p->ns, len), 2),
                           etl_chain_state_name(p->state), reason_of(&tmp, rs), dp,
                           thread_label(o->m, p->thread, st ? st->tid : 0, th)};
        tbl_row(&t, r);
    }
    tbl_print_text(&t, stdout, "  ");
    tbl_free(&t);
    printf("\nLegend: v = descended into the readier (rows below, indented); short = under --min; depth = at\n"
           "--depth; cycle = the readier is already on the path.\n");
    rep_print_anomalies(run, stdout);
}

/* ---- JSON --------------------------------------------------------------------- */

static void json_thread(jw *w, const etl_sched *m, uint32_t thread, uint32_t tid)
{
    char label[256];
    const etl_sched_thread *t = etl_sched_thread_at(m, thread);
    jw_u64(w, "tid", tid);
    if (t && t->pid != UINT32_MAX) jw_u64(w, "pid", t->pid);
    else jw_null(w, "pid");
    jw_str(w, "process", etl_sched_process_name(m, thread));
    jw_str(w, "process_label", rep_process_label(m, thread, label));
    jw_str(w, "name", rep_thread_name(m, thread));
}

static void json_node(jw *w, const out *o, uint32_t ni)
{
    const etl_chain_node *n = &o->c->nodes[ni];
    json_thread(w, o->m, n->thread, n->tid);
    jw_u64(w, "depth", n->depth);
    jw_i64(w, "start_ns", n->start);
    jw_i64(w, "end_ns", n->end);
    jw_arr(w, "segments");
    for (uint32_t i = n->first; i < n->first + n->count; i++) {
        const etl_chain_seg *s = &o->c->segs[i];
        jw_obj(w, NULL);
        jw_str(w, "state", etl_chain_state_name(s->state));
        jw_i64(w, "start_ns", s->start);
        jw_i64(w, "end_ns", s->end);
        jw_i64(w, "duration_ns", s->end - s->start);
        if (s->state != ETL_CHAIN_UNKNOWN) jw_u64(w, "cpu", s->cpu);
        else jw_null(w, "cpu");
        if (s->has_reason) {
            jw_u64(w, "reason_code", s->reason);
            const char *rn = etl_wait_reason_name(s->reason);
            if (rn) jw_str(w, "reason", rn);
            else jw_null(w, "reason");
        } else {
            jw_null(w, "reason");
        }
        if (s->has_waker) {
            jw_obj(w, "readier");
            static const char *const kinds[] = {"thread", "idle", "dpc", "unknown"};
            jw_str(w, "kind", kinds[s->waker & 3]);
            if (s->waker == ETL_WAKER_THREAD) json_thread(w, o->m, s->waker_thread, s->waker_tid);
            jw_u64(w, "ready_cpu", s->ready_cpu);
            jw_obj_end(w);
        } else {
            jw_null(w, "readier");
        }
        if (o->stk && (s->state == ETL_CHAIN_WAITING || s->state == ETL_CHAIN_OFFCPU))
            json_stack(w, o, "blocking_stack", etl_chain_blocking_stack(o->c, o->stk, n, i));
        if (o->stk && s->state == ETL_CHAIN_WAITING) json_stack(w, o, "readier_stack", etl_chain_readier_stack(o->stk, s));
        const char *leaf = etl_chain_leaf_name(s->leaf);
        if (leaf) jw_str(w, "leaf", leaf);
        else jw_null(w, "leaf");
        if (s->child != UINT32_MAX) {
            jw_obj(w, "chain");
            json_node(w, o, s->child);
            jw_obj_end(w);
        }
        jw_obj_end(w);
    }
    jw_arr_end(w);
}

static void print_json(const rep_run *run, const out *o)
{
    const etl_chain *c = o->c;
    const etl_chain_node *root = &c->nodes[0];
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w, NULL);
    jw_str(&w, "file", run->in.path);
    jw_i64(&w, "from_ns", root->start);
    jw_i64(&w, "at_ns", root->end);
    jw_i64(&w, "duration_ns", root->end - root->start);
    jw_u64(&w, "depth", c->o.depth);
    jw_i64(&w, "min_ns", c->o.min_ns);
    jw_u64(&w, "passes", c->passes);
    jw_obj(&w, "totals");
    jw_i64(&w, "running_ns", c->totals[ETL_CHAIN_RUNNING]);
    jw_i64(&w, "ready_ns", c->totals[ETL_CHAIN_READY]);
    jw_i64(&w, "waiting_ns", c->totals[ETL_CHAIN_WAITING]);
    jw_i64(&w, "offcpu_ns", c->totals[ETL_CHAIN_OFFCPU]);
    jw_i64(&w, "unknown_ns", c->totals[ETL_CHAIN_UNKNOWN]);
    jw_obj_end(&w);
    jw_str(&w, "summary", o->sum);
    jw_obj(&w, "chain");
    json_node(&w, o, 0);
    jw_obj_end(&w);
    jw_arr(&w, "critical_path");
    for (size_t i = 0; i < c->npath; i++) {
        const etl_chain_path *p = &c->path[i];
        const etl_sched_thread *st = etl_sched_thread_at(o->m, p->thread);
        jw_obj(&w, NULL);
        json_thread(&w, o->m, p->thread, st ? st->tid : 0);
        jw_u64(&w, "depth", p->depth);
        jw_str(&w, "state", etl_chain_state_name(p->state));
        const char *rn = p->has_reason ? etl_wait_reason_name(p->reason) : NULL;
        if (rn) jw_str(&w, "reason", rn);
        else jw_null(&w, "reason");
        jw_i64(&w, "ns", p->ns);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    cli_symbols_json(&w, o->sym); /* after the chain: its frames are labelled (looked up) as it is written */
    cli_sched_stacks_json(&w, o->stk);
    rep_json_anomalies(run, &w);
    jw_obj_end(&w);
    jw_end(&w);
}

/* ---- no chain: what is true instead ------------------------------------------- */

/*
 * Why there is no chain, said as it is: the thread (or process) is not in the trace, with
 * the closest ones it has; or it is but never switched in; or no gap fits the interval.
 * Text: lines on stderr. JSON: one object on stdout ("error", "message", "close_matches").
 */
static void explain(const rep_run *run, const rep_args *a, const etl_chain *c, const etl_chain_options *co,
                    const char *who)
{
    const etl_sched *m = run->model;
    char msg[512], label[256];
    etl_sched_found f;
    etl_chain_why why = etl_chain_why_empty(c, m, run->mstats.switches, &f);
    uint64_t n = 0;
    switch (why) {
    case ETL_CHAIN_WHY_NO_SWITCHES:
        snprintf(msg, sizeof msg, "no context switches in this trace (no CSwitch events or compact batches)");
        break;
    case ETL_CHAIN_WHY_NO_INTERVAL:
        snprintf(msg, sizeof msg, "%s",
                 co->has_at && etl_chain_gap_lost(c)
                     ? "the gap --at lies in has no known start: records were lost before the thread's switch-in "
                       "after it (the warnings say where); --from gives it one"
                 : co->has_at ? "no switch-in of that thread covers --at (or --from is after it)"
                              : "that thread has no off-CPU gap with a known start in the window");
        break;
    case ETL_CHAIN_WHY_NONE_ASKED: /* --thread with a number no thread has: 0, or past 32 bits */
        if (etl_sched_id_arg(who, &n) && n == 0)
            snprintf(msg, sizeof msg, "thread 0 is the idle thread: it runs when no thread does, and never waits");
        else
            snprintf(msg, sizeof msg, "thread %s is not in this trace (thread ids have 32 bits)", who);
        break;
    case ETL_CHAIN_WHY_NEVER_SWITCHED_IN:
        if (co->tid)
            snprintf(msg, sizeof msg, "thread %u of %s never switched in", co->tid, rep_process_label(m, f.thread, label));
        else
            snprintf(msg, sizeof msg, "no thread of process %s%s ever switched in", f.by_pid ? "PID " : "", co->process);
        break;
    default:
        if (co->tid) snprintf(msg, sizeof msg, "thread %u is not in this trace", co->tid);
        else
            snprintf(msg, sizeof msg, f.by_pid ? "no process with PID %s in this trace" : "no process named '%s' in this trace",
                     co->process);
        break;
    }
    const char *err = etl_chain_why_name(why);
    if (a->format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        jw_str(&w, "file", run->in.path);
        jw_str(&w, "thread", who);
        jw_str(&w, "error", err);
        jw_str(&w, "message", msg);
        jw_arr(&w, "close_matches");
        for (size_t i = 0; i < f.nnear; i++) {
            jw_obj(&w, NULL);
            if (f.what == ETL_ASKED_NO_THREAD) {
                json_thread(&w, m, f.near[i], etl_sched_thread_at(m, f.near[i])->tid);
            } else {
                const etl_sched_process *p = etl_sched_process_at(m, f.near[i]);
                jw_u64(&w, "pid", p->pid);
                jw_str(&w, "process", etl_sched_process_image(m, p));
                if (!f.by_pid) { /* a name once: every PID of that name, ascending */
                    uint32_t *pids;
                    size_t np = rep_same_name_pids(m, f.near[i], &pids);
                    jw_arr(&w, "pids");
                    for (size_t j = 0; j < np; j++) jw_u64(&w, NULL, pids[j]);
                    if (!np) jw_u64(&w, NULL, p->pid); /* out of memory: the one at hand */
                    jw_arr_end(&w);
                    free(pids);
                }
            }
            jw_obj_end(&w);
        }
        jw_arr_end(&w);
        rep_json_anomalies(run, &w);
        jw_obj_end(&w);
        jw_end(&w);
    }
    /* Even "no context switches", which the other reports print as their data (exit 0): here it is why there is
       no chain (exit 4), on stderr as the others. */
    fprintf(stderr, "%s waitchain: ", prog);
    text_str(stderr, msg);
    rep_near_print(stderr, m, &f); /* the close matches */
}

/* ---- main --------------------------------------------------------------------- */

/* rep_run_go, but a collecting pass stops once every requested thread has a row past its interval. */
static void go(rep_run *run, const rep_args *a, const etl_chain *c)
{
    etl_reader *r = run->in.reader;
    cli_progress bar = {0};
    cli_progress_start(&bar, etl_reader_file_size(r));
    const etl_sched_event *ev;
    uint64_t n = 0;
    bool early = false;
    while (etl_sched_source_next_ref(run->src, &ev) == ETL_OK) {
        etl_sched_push(run->model, ev);
        if ((++n & 0xFFFF) == 0) {
            if (etl_chain_pass_done(c)) {
                early = true;
                break;
            }
            if (bar.on) cli_progress_update(&bar, etl_sched_source_progress(run->src));
        }
    }
    cli_progress_end(&bar);
    run->end_ts = etl_sched_end_ts(r, etl_sched_source_stats_get(run->src)->last_ts);
    run->end_ns = etl_clock_ns(etl_reader_clock(r), run->end_ts);
    run->model_failed = etl_sched_status(run->model) != ETL_OK; /* rep_run_close says so, exit 1 */
    run->cmd = a->cmd;
    if (!early) {
        if (etl_sched_finish(run->model, run->end_ts) != ETL_OK) run->model_failed = true;
        /* The counters of a pass stopped early would be those of part of the trace: only whole passes set them. */
        run->mstats = *etl_sched_stats_get(run->model);
        run->sstats = *etl_sched_source_stats_get(run->src);
    }
    etl_sched_source_damage(run->src, &run->damage);
    rep_run_window(run, a);
}

int cmd_waitchain(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "waitchain");
    etl_chain_options co = {.sz = sizeof co};
    const char *who = NULL;
    int has_at = 0, has_from = 0, has_min = 0, has_depth = 0;
    int64_t min_ns = 0;
    unsigned depth = 0, frames = 8;
    const char *symbols = NULL;
#define WC_TIME "a time such as 1.5, 250ms, 10us or 42ns"
    const cli_opt own[] = {
        CLI_STRING("thread", 0, "TID|NAME", "the thread (a decimal id); a process name takes its slowest thread",
                   "a thread id or a process name", &who),
        {.kind = CLI_OPT_DURATION, .name = "at", .arg = "T", .dst = &co.at, .need = WC_TIME, .seen = &has_at,
         .help = "the end of the interval (default: the end of the longest off-CPU gap of the thread, or of the "
                 "process's threads)"},
        {.kind = CLI_OPT_DURATION, .name = "from", .arg = "T0", .dst = &co.from, .need = WC_TIME, .seen = &has_from,
         .help = "its start (default: the start of the off-CPU gap before T)"},
        {.kind = CLI_OPT_UINT, .name = "depth", .arg = "N", .help = "deepest descent (default 8; 0: no descent)",
         .need = "0..64", .dst = &depth, .size = sizeof depth, .max = 64, .seen = &has_depth},
        {.kind = CLI_OPT_DURATION, .name = "min", .arg = "T", .dst = &min_ns, .need = WC_TIME, .seen = &has_min,
         .help = "shortest wait to descend into (default 1ms)"},
        CLI_UINT("frames", "N", "frames shown of each wait's stacks, innermost first (default 8; 0: all)",
                 "a count from 0 to 384", &frames, 0, 384),
        CLI_SYMBOLS_OPT(&symbols),
        CLI_END};
#undef WC_TIME
    cli_opt common[REP_OPTS_MAX];
    rep_options(&a, REP_OPT_JSON | REP_OPT_RANGE | REP_OPT_PROCESS | REP_OPT_MAX_WAIT_REASON | REP_OPT_THREADS |
                        REP_OPT_QUIET, common);
    cli_opt_find(common, "json")->help = "the tree as one JSON object";
    cli_opt_find(common, "range")->help = "where the default --at is looked for";
    cli_opt_find(common, "process")->help = "the process whose slowest thread to take, when --thread is not given";
    cli_opt_find(common, "max-wait-reason")->help = "StateWr bias of compact batches, 1..54";
    const cli_opt table[] = {CLI_INCLUDE(own), CLI_INCLUDE(common), CLI_END};
    int pr = cli_opts_parse(&waitchain_cmd, table, argc, argv, &a.path);
    if (pr != CLI_OPTS_RUN) return pr;
    co.has_at = has_at;
    co.has_from = has_from;
    if (has_min) co.min_ns = min_ns ? min_ns : -1;
    if (has_depth) {
        if (depth == 0) co.no_descent = true;
        else co.depth = depth;
    }
    /* Each level is a pass that opens FILE again: a pipe would give nothing the second time (or wait for a writer),
     * and a device is no file either (/dev/null: nothing to read, each time). Refused unread, as opening a pipe
     * with no writer would wait; the platform cannot tell a pipe from a device. A directory is neither: the open
     * says so (exit 1), as in every command. */
    etl_file_info fi;
    if (strcmp(a.path, "-") == 0)
        return cli_usage_error("waitchain", "reads FILE once per level: standard input will not do");
    if (etl_stat(a.path, true, &fi) == 0 && !fi.is_reg && !fi.is_dir)
        return cli_usage_error("waitchain", "reads FILE once per level, so FILE must be a regular file: '%s' is not "
                               "(a pipe will not do, nor a device); copy the trace to a file", a.path);
    if (who && a.process)
        return cli_usage_error("waitchain", "--thread and --process name the same thing: give one");
    if (!who) who = a.process;
    if (!who) return cli_usage_error("waitchain", "--thread TID or a process name is required");
    uint64_t tid;
    /* a number is a thread id given to --thread, a PID given to --process */
    if (!a.process && etl_sched_id_arg(who, &tid)) co.tid = tid <= UINT32_MAX ? (uint32_t)tid : 0; /* 0: none (explain) */
    else co.process = who;
    if (co.has_from && co.has_at && co.from >= co.at) return cli_usage_error("waitchain", "--from must be before --at");
    co.v0 = a.v0;
    co.v1 = a.has_range ? a.v1 : a.v0;
    int quiet = a.quiet; /* --quiet as given: the passes after the first are quiet */
    a.process = NULL;
    a.thread = -1;

    /* the symbol path before the trace is read: a folder that is not there fails here */
    etl_symbols *sym = NULL;
    int orc = cli_symbols_open("waitchain", symbols, &sym);
    if (orc != EXIT_OK) return orc;
    etl_chain c;
    if (etl_chain_init(&c, &co) != ETL_OK) {
        fprintf(stderr, "%s waitchain: out of memory\n", prog);
        etl_symbols_close(sym);
        return EXIT_IO;
    }
    int status = EXIT_OK;
    rep_run run;
    int have_run = 0;
    /* The first pass reads the whole trace: its counters are the trace's (later passes may stop early). */
    etl_sched_stats first_m = {0};
    etl_sched_source_stats first_s = {0};
    while (etl_chain_next_pass(&c)) {
        int rc = rep_run_open(&run, &a, etl_chain_row, &c, NULL);
        if (rc != EXIT_OK) {
            etl_symbols_close(sym);
            etl_chain_free(&c);
            return rc;
        }
        etl_chain_bind(&c, run.model);
        go(&run, &a, &c);
        etl_status st = etl_chain_end_pass(&c);
        if (c.passes == 1) {
            first_m = run.mstats;
            first_s = run.sstats;
        }
        run.mstats = first_m;
        run.sstats = first_s;
        a.quiet = 1; /* the first pass said what was wrong with the input */
        if (st != ETL_OK) {
            fprintf(stderr, "%s waitchain: out of memory\n", prog);
            etl_symbols_close(sym);
            rep_run_close(&run);
            etl_chain_free(&c);
            return EXIT_IO;
        }
        if (!etl_chain_next_pass(&c)) {
            have_run = 1;
            break;
        }
        rc = rep_run_close(&run);
        if (rc > status) status = rc;
    }
    int rc = EXIT_OK;
    if (c.status != ETL_CHAIN_OK) {
        etl_symbols_close(sym); /* no chain, no frames to name */
        explain(&run, &a, &c, &co, who);
        rc = EXIT_NOTHING;
    } else {
        /* The stacks of the waits, when the trace walks them: two more passes, before the answer, keeping the
         * chain's events' stacks only (memory by the chain, not the trace: explore29 F1). */
        etl_sched_stacks *stk = NULL;
        etl_sched_stacks_event *want = NULL;
        size_t nwant = 0;
        int src = EXIT_IO;
        if (etl_chain_stack_events(&c, &want, &nwant) != ETL_OK)
            fprintf(stderr, "%s waitchain: %s: stacks: out of memory\n", prog, a.path);
        else
            src = cli_sched_stacks_open("waitchain", run.in.reader, a.threads, ETL_SYMBOLS_OFFSET, CLI_STACKS_BOTH, want, nwant, &stk,
                                        &sym);
        free(want);
        if (src != EXIT_OK) status = src; /* told; the chain without stacks */
        waits_stacks_damage(&run, stk);
        /* A pass after the first is quiet (the first told the input's damage), but none of them read the stack
           records: what the stacks' pass met is told here, its first problem and how many more. */
        const etl_stats *sd = stk && run.in.quiet && !quiet ? etl_sched_stacks_damage(stk) : NULL;
        if (sd && sd->first_problem_offset != UINT64_MAX) {
            fprintf(stderr, "%s: %s: warning: %s\n", prog, a.path, sd->first_problem);
            if (sd->bad_records > 1)
                fprintf(stderr, "%s: %s: warning: %llu more problems not shown\n", prog, a.path,
                        (unsigned long long)sd->bad_records - 1);
        }
        out o = {&c, run.model, stk, frames, sym, NULL};
        char sum[4096];
        if (!summary(&o, sum, sizeof sum)) {
            fprintf(stderr, "%s waitchain: %s: out of memory\n", prog, a.path);
            status = EXIT_IO;
        } else {
            o.sum = sum;
            if (a.format == FMT_JSON) print_json(&run, &o);
            else print_text(&run, &o);
        }
        fflush(stdout);
        if (!quiet) cli_sched_stacks_notes("waitchain", a.path, stk); /* what the stacks lack (explore9 F4) */
        etl_sched_stacks_free(stk);
        cli_symbols_close(sym);
    }
    int rc2 = have_run ? rep_run_close(&run) : EXIT_OK;
    etl_chain_free(&c);
    if (rc2 > status) status = rc2;
    if (cli_stdout_done("waitchain") != EXIT_OK) return EXIT_IO;
    if (status == EXIT_IO || status == EXIT_NOT_ETL) return status;
    return rc != EXIT_OK ? rc : status;
}

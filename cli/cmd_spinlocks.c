/* cmd_spinlocks.c - `etlkit spinlocks`: spin lock contention per lock, caller, pair and AcquireMode (spec §5). */
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "spinlocks_out.h"
#include "etlkit/spinlocks.h"

static const char spin_about[] =
    "Spin lock contention from SpinLock events (PERF_SPINLOCK): per lock address, per caller\n"
    "(release function) address, per (lock, caller) pair and per AcquireMode: events, estimated\n"
    "acquisitions and contentions, spins, wait and hold cycles (mean, p99, max; hold without the\n"
    "events that took interrupts), % of CPU spent acquiring, IRQL and mode mix, threads and CPUs.\n"
    "The kernel logs 1 in A uncontended and 1 in M contended acquisitions per CPU and every lock\n"
    "held longer than H cycles; each event is weighted by the rule that logged it, so counts and\n"
    "sums are estimates, with bounds on the true totals. The trace does not record S, A, M, H:\n"
    "the kernel's defaults are assumed unless given.\n";

typedef struct ctx {
    etl_spinlocks s;
    const rep_args *a;
    const rep_run *run;
} ctx;

/*
 * --thread by the event's ThreadId; --process by the process of the thread that id names now (the
 * library asks before the model sees the event: its names are those of the event's moment).
 */
static int selected(void *p, const etl_sched_event *ev)
{
    const ctx *c = p;
    const rep_args *a = c->a;
    uint32_t tid = ev->u.spinlock.thread_id;
    if (a->thread >= 0 && tid != (uint64_t)a->thread) return 0;
    return !a->process || rep_thread_selected(a, c->run->model, etl_sched_thread_of(c->run->model, tid));
}

static void on_event(void *p, const etl_sched_event *ev)
{
    ctx *c = p;
    etl_spinlocks_add(&c->s, ev);
}

/* ---- output ------------------------------------------------------------------------------ */

/* ---- options ------------------------------------------------------------------------------ */

/* An S, A, M or H given: the output says so. */
static int spin_given(const cli_opt *o, const char *value, char *err, size_t cap)
{
    (void)value, (void)err, (void)cap;
    *(uint8_t *)o->ctx = ETL_SPIN_SRC_GIVEN;
    return 0;
}

int cmd_spinlocks(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "spinlocks");
    /* Spin locks need the events and the thread names at their moment: not the switches or readyings. */
    a.skip = REP_SKIP_SPINLOCKS;
    a.top = SPIN_TOP_UNSET;
    etl_spin_params sp;
    etl_spin_params_init(&sp);
    const cli_opt own[] = {
        {.kind = CLI_OPT_UINT, .name = "spin-threshold", .arg = "N", .help = "SpinLockSpinThreshold S (default 1)",
         .dst = &sp.p.spin_lock_spin_threshold, .size = 4, .max = UINT32_MAX, .need = "a number",
         .check = spin_given, .ctx = &sp.src[0]},
        {.kind = CLI_OPT_UINT, .name = "acquire-rate", .arg = "N",
         .help = "SpinLockAcquireSampleRate A (default 1000)", .dst = &sp.p.spin_lock_acquire_sample_rate,
         .size = 4, .max = UINT32_MAX, .need = "a number", .check = spin_given, .ctx = &sp.src[1]},
        {.kind = CLI_OPT_UINT, .name = "contention-rate", .arg = "N",
         .help = "SpinLockContentionSampleRate M (default 1)", .dst = &sp.p.spin_lock_contention_sample_rate,
         .size = 4, .max = UINT32_MAX, .need = "a number", .check = spin_given, .ctx = &sp.src[2]},
        {.kind = CLI_OPT_UINT, .name = "hold-threshold", .arg = "CYCLES",
         .help = "SpinLockHoldThreshold H (default 1000000; 0 = none; none before Windows 8.1 unless given)",
         .dst = &sp.p.spin_lock_hold_threshold, .size = 4, .max = UINT32_MAX, .need = "a number",
         .check = spin_given, .ctx = &sp.src[3]},
        CLI_END};
    char epilogue[600];
    snprintf(epilogue, sizeof epilogue,
             "--process and --thread select events by their ThreadId. --top applies to every list: by\n"
             "default the text shows 20 of each, JSON and CSV %u (the totals are always over every event).\n"
             "Locks, callers and pairs are kept in %u (lock, caller, AcquireMode) cells: the events of\n"
             "further ones count in the totals, not per lock (the output says how many).\n"
             "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n",
             SPIN_LIST_TOP, ETL_SPIN_MAX_CELLS);
    const cli_cmd cmd = {"spinlocks", "FILE [OPTIONS]", spin_about, {"FILE"}, 1, 1, epilogue};
    a.range_help = "only the events released within this window, from the trace start (seconds, or ms/us/ns: "
                   "--range 1.5 2500ms), each whole: its wait and hold cycles are not clipped";
    int pr = rep_parse(&a, &cmd, own, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_spinlock_info_validate(&sp.p, &d) != ETL_OK)
        return cli_usage_error("spinlocks", "%s (the kernel refuses it)", d.msg);
    ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    rep_run run;
    c.run = &run;
    int rc = rep_run_open(&run, &a, NULL, &c, on_event);
    if (rc != EXIT_OK) return rc;
    const etl_logfile_header *h = etl_reader_header(run.in.reader);
    etl_spin_params_for_trace(&sp, h);
    etl_spinlocks_options so = {sizeof so, a.v0, a.has_range ? a.v1 : a.v0, sp.p, h->cpu_speed_mhz,
                                etl_reader_processors(run.in.reader), 0, NULL, &c};
    if (a.thread >= 0 || a.process) so.select = selected;
    if (etl_spinlocks_init(&c.s, etl_reader_clock(run.in.reader), &so) != ETL_OK) {
        fprintf(stderr, "%s spinlocks: out of memory\n", prog);
        etl_spinlocks_free(&c.s);
        rep_run_close(&run);
        return EXIT_IO;
    }
    rep_run_go(&run, &a);
    rep_no_match(&run, &a);
    if (c.s.o.ncpu < etl_sched_cpu_count(run.model)) c.s.o.ncpu = etl_sched_cpu_count(run.model);
    etl_spinlocks_losses(&c.s, run.in.reader, &run.damage);
    if (etl_spinlocks_finish(&c.s, run.end_ns) != ETL_OK) {
        fprintf(stderr, "%s spinlocks: out of memory\n", prog);
        rc = EXIT_IO;
    } else if (etl_spinlocks_rates_implausible(&c.s)) {
        char f1[40];
        if (c.s.total.acq_pct >= 0) snprintf(f1, sizeof f1, "%s%%", fmt_fixed(f1 + 8, c.s.total.acq_pct, 4));
        else snprintf(f1, sizeof f1, "more than 2^64 cycles"); /* the sum saturated: no share of it */
        fprintf(stderr, "%s spinlocks: warning: %s: with acquire rate A=1/%u (%s) and contention rate M=1/%u (%s) the "
                "locks take %s of the CPU, more than all of it: the trace was not sampled at these rates\n",
                prog, run.in.path, sp.p.spin_lock_acquire_sample_rate, etl_spin_param_source(sp.src[1]),
                sp.p.spin_lock_contention_sample_rate, etl_spin_param_source(sp.src[2]), f1);
    }
    if (rc != EXIT_OK) {
    } else if (a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        spinlocks_json(&w, &run, &c.s, &sp, c.s.filtered, &a);
        jw_obj_end(&w);
        jw_end(&w);
    } else if (!c.s.events) {
        if (a.format == FMT_TEXT)
            printf("%s: no spin lock events in this trace (PERF_SPINLOCK was not enabled): nothing to report\n",
                   run.in.path);
        else spinlocks_csv(&a, &c.s);
        if (a.format == FMT_CSV && !a.quiet) /* the header row alone: why, as rep_no_switches says it */
            fprintf(stderr, "%s spinlocks: note: %s: no spin lock events in this trace (PERF_SPINLOCK was not "
                    "enabled): the table is empty\n", prog, run.in.path);
    } else if (a.format == FMT_CSV) {
        spinlocks_csv(&a, &c.s);
        /* The text says it beside the rates; the CSV's rates need it said too. */
        char cut[256];
        if (!a.quiet && spinlocks_cut(&c.s))
            fprintf(stderr, "%s spinlocks: note: %s: %s\n", prog, run.in.path, spinlocks_known_text(&c.s, cut, sizeof cut));
    } else {
        spinlocks_text(&a, &run, &c.s, &sp);
    }
    if (rc == EXIT_OK && a.format != FMT_TEXT && a.top == SPIN_TOP_UNSET && !a.quiet &&
        (c.s.nlocks > SPIN_LIST_TOP || c.s.ncallers > SPIN_LIST_TOP || c.s.npairs > SPIN_LIST_TOP))
        fprintf(stderr, "%s spinlocks: %s: the first %u of %zu locks, %zu callers and %zu pairs listed (the most "
                "waited on; --top N for more, 0 for all)\n", prog, run.in.path, SPIN_LIST_TOP, c.s.nlocks, c.s.ncallers,
                c.s.npairs);
    /* An event released before it was acquired, or with times no hold can have, is damage: said on stderr whatever
     * the format, exit 3. */
    int backwards = rc == EXIT_OK && (c.s.backwards_hold || c.s.impossible_hold);
    if (rc == EXIT_OK && c.s.backwards_hold && !a.quiet) {
        fprintf(stderr, "%s spinlocks: %s: warning: ", prog, run.in.path);
        spinlocks_backwards_text(stderr, &c.s);
        fprintf(stderr, "\n");
    }
    if (rc == EXIT_OK && c.s.impossible_hold && !a.quiet) {
        fprintf(stderr, "%s spinlocks: %s: warning: ", prog, run.in.path);
        spinlocks_impossible_text(stderr, &c.s);
        fprintf(stderr, "\n");
    }
    etl_spinlocks_free(&c.s);
    int rc2 = rep_finish(&run, "spinlocks");
    if (rc != EXIT_OK) return rc;
    return rc2 == EXIT_OK && backwards ? EXIT_DAMAGED : rc2;
}

/*
 * cmd_report.c - `etlkit report FILE -o report.html`: one self-contained HTML
 * page with the trace at a glance and the scheduler reports in pictures.
 *
 * The page is a formatter of library results, nothing more: one streaming pass
 * through the scheduler model feeds etl_usage (CPU time, per-interval
 * utilisation, ready latency and its histogram, waits), etl_wakeups, etl_pmc and etl_spinlocks
 * together; a cheap pass over the buffers (etl_summary_run) gives the facts
 * `info` shows (records by hook, kernel flags, recovery counters); the wait
 * chain of the longest wait takes the chain's own passes, which stop early; the
 * sampled profile (etl_profile_run, section 8's flame graph) its own two, run only
 * when the facts count SampledProfile events.
 *
 * The charts are inline SVG written here (no script needed to read them; each
 * has a text alternative), a colour-blind-safe palette in CSS variables for
 * light and dark mode, a print stylesheet, and a little inline script for hover
 * details and table sorting (cli/report/). Every number shown is also in a JSON block
 * (<script type="application/json" id="etlkit-data">), written with the shared
 * JSON writer: under cpu, waits, spinlocks, pmc and wakeups, by the functions that
 * write those commands' --json (rep_json.h). Size is bounded by the
 * aggregation (about 500 intervals, top-N tables), never by the event count.
 *
 * This file parses the options, runs the pass and writes the page through its parts:
 * report_html.c (the frame, helpers, CSS and script), report_charts.c (facts,
 * utilisation, top tables), report_tables.c (latency, waits, locks, PMC, wake-ups,
 * the chain), report_flame.c (the flame graph and its data) and report_json.c (the
 * data block); report_page.h joins them. The
 * facts pass is the library's (etl_summary_run, as `info` counts).
 *
 * The output goes through base/outfile, as every command's does: a temporary
 * file beside the target, created before the passes and renamed into place when
 * complete (removed on a failure or a signal); "-o -" writes standard output.
 */
#include <limits.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "symbols_cli.h"
#include "base/diag.h"
#include "base/outfile.h"
#include "base/platform.h"

/* Ready-latency histogram: 1-2-5 steps from 1 us to 10 s (log scale), lower edges in ns. */
const int64_t hist_lo[HIST_BINS] = {
    0,         1000,      2000,      5000,       10000,      20000,      50000,      100000,
    200000,    500000,    1000000,   2000000,    5000000,    10000000,   20000000,   50000000,
    100000000, 200000000, 500000000, 1000000000, 2000000000, 5000000000, 10000000000};

/* ---- the pass ------------------------------------------------------------------------------ */

static void on_row(void *p, const etl_sched_row *row)
{
    rctx *c = p;
    etl_usage_add(&c->u, row);
    if (c->have_w) etl_wakeups_add(&c->w, row);
    if (c->have_p) etl_pmc_add(&c->p, row);
}

static void on_event(void *p, const etl_sched_event *ev)
{
    rctx *c = p;
    if ((unsigned)ev->kind < 8) c->ev[ev->kind]++;
    if (c->have_s) etl_spinlocks_add(&c->s, ev);
}

/* ---- the command ---------------------------------------------------------------------------------- */

static const cli_cmd report_cmd = {
    "report", "FILE -o REPORT.html [OPTIONS]",
    "One self-contained HTML page about a trace, to open in any browser, offline, or to\n"
    "attach to a bug report: the trace's facts and damage, CPU utilisation over time per\n"
    "CPU (heat strip) with the top processes stacked, top processes and threads by CPU\n"
    "time, ready latency (histogram, percentiles per process, longest delays), waits by\n"
    "reason with the longest waits and their readiers, spin locks and PMC counters when\n"
    "the trace has them, idle wake-ups and the wait chain of the longest wait, and a flame\n"
    "graph of the sampled stacks (zoom on click) when the trace has SampledProfile events.\n"
    "Charts are inline SVG with text alternatives; a JSON block holds every number shown.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged (the page is\n"
    "written and shows the damage), 64 usage.\n"};

int cmd_report(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "report");
    opts o = {0};
    const cli_opt own[] = {
        {.kind = CLI_OPT_STRING, .name = "output", .short_name = 'o', .arg = "FILE", .dst = &o.out,
         .need = "a file name", .flags = CLI_OPT_REQUIRED | CLI_OPT_NONEMPTY,
         .help = "the page to write (required; - is standard output); written under a temporary name beside it, "
                 "renamed into place when complete"},
        CLI_FLAG("force", 0, "replace an existing FILE (else refused); a symbolic link is replaced itself, never "
                 "written through", &o.force, 1),
        {.kind = CLI_OPT_STRING, .name = "title", .arg = "TEXT", .dst = &o.title, .need = "a text",
         .help = "the page's title (default: etlkit report: FILE)"},
        CLI_SYMBOLS_OPT(&o.symbols),
        CLI_END};
    cli_opt common[REP_OPTS_MAX];
    rep_options(&a, REP_OPT_RANGE | REP_OPT_TOP | REP_OPT_COMPLETE_ONLY | REP_OPT_MAX_WAIT_REASON | REP_OPT_THREADS |
                        REP_OPT_QUIET, common);
    cli_opt_find(common, "top")->help = "rows of each table (default 25, 0 = all)";
    const cli_opt table[] = {CLI_INCLUDE(own), CLI_INCLUDE(common), CLI_END};
    int pr = cli_opts_parse(&report_cmd, table, argc, argv, &a.path);
    if (pr != CLI_OPTS_RUN) return pr;
    /* "-" is standard output, as for export; a file follows the output rules of base/outfile.h. */
    int to_stdout = strcmp(o.out, "-") == 0;
    etl_outfile of;
    memset(&of, 0, sizeof of);
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (!to_stdout) { /* before reading anything: a refusal costs nothing */
        etl_status ck = etl_outfile_check(o.out, &of, &d);
        if (ck == ETL_OK) ck = etl_outfile_may_replace(&of, o.out, o.force, a.path, &d);
        if (ck != ETL_OK) {
            fprintf(stderr, "%s report: %s\n", prog, d.msg);
            etl_outfile_discard(&of);
            return ck == ETL_E_INVALID_ARG ? EXIT_USAGE : EXIT_IO;
        }
    }
    /* The symbol path too: a folder that is not there fails before the trace is read. */
    etl_symbols *syms = NULL;
    int rc = cli_symbols_open("report", o.symbols, &syms);
    if (rc != EXIT_OK) {
        etl_outfile_discard(&of);
        return rc;
    }
    rctx *c = calloc(1, sizeof *c);
    if (!c) {
        fprintf(stderr, "%s report: %s: %s\n", prog, a.path, etl_status_str(ETL_E_NOMEM));
        etl_symbols_close(syms);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    rep_run run;
    rc = rep_run_open(&run, &a, on_row, c, on_event);
    if (rc != EXIT_OK) {
        etl_symbols_close(syms);
        free(c);
        etl_outfile_discard(&of);
        return rc;
    }
    /* The temporary file now, not after the passes: a directory we cannot write costs nothing. */
    FILE *f = stdout;
    if (!to_stdout && etl_outfile_create(&of, &f, &d) != ETL_OK) {
        fprintf(stderr, "%s report: %s\n", prog, d.msg);
        etl_symbols_close(syms);
        rep_run_close(&run);
        free(c);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    etl_reader *r = run.in.reader;
    const etl_logfile_header *h = etl_reader_header(r);
    int64_t v1o = a.has_range ? a.v1 : a.v0;
    /*
     * The facts first (`info`'s summary): besides what `info` shows, the last record's time gives the
     * trace end the model will find, so the interval (about COLUMNS across the window) is known
     * before the pass.
     */
    etl_summary_options fo = {.sz = sizeof fo, .threads = a.threads};
    etl_summary fa;
    int have_facts = etl_summary_run(r, &fo, &fa) == ETL_OK;
    int64_t end_guess = etl_clock_ns(etl_reader_clock(r), etl_sched_end_ts(r, fa.last_ts));
    int64_t wend = a.has_range && a.v1 < end_guess ? a.v1 : end_guess, wlen; /* a range past the end is clipped */
    if (__builtin_sub_overflow(wend, a.v0, &wlen)) wlen = wend > a.v0 ? INT64_MAX : INT64_MIN;
    int64_t want = wlen > 0 ? wlen / COLUMNS + (wlen % COLUMNS != 0) : 1000000; /* rounded up, without overflow */
    /* A round length people read in the hover: 1, 2 or 5 times a power of ten, at least 1 us (200..500 columns). */
    int64_t interval = 1000;
    for (int64_t dec = 1000; interval < want && dec <= INT64_MAX / 10; dec *= 10) {
        if (dec >= want) interval = dec;
        else if (2 * dec >= want) interval = 2 * dec;
        else if (5 * dec >= want) interval = 5 * dec;
        else interval = 10 * dec;
    }
    /* The ready histogram in the same pass, over the Ready values etl_usage takes (its `all` variant). */
    etl_usage_options uo = {.sz = sizeof uo, .v0 = a.v0, .v1 = v1o, .longest = 10, .interval_ns = interval,
                            .ready_hist_lo = hist_lo, .ready_hist_bins = HIST_BINS};
    etl_wakeups_options wo = {.sz = sizeof wo, .v0 = a.v0, .v1 = v1o};
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    po.v0 = a.v0;
    po.v1 = v1o;
    etl_spin_params_init(&c->spin);
    etl_spin_params_for_trace(&c->spin, h);
    etl_spinlocks_options so = {.sz = sizeof so, .v0 = a.v0, .v1 = v1o, .params = c->spin.p, .mhz = h->cpu_speed_mhz,
                                .ncpu = etl_reader_processors(r)};
    if (etl_usage_init(&c->u, run.model, &uo) != ETL_OK) {
        fprintf(stderr, "%s report: %s: %s\n", prog, a.path, etl_status_str(ETL_E_NOMEM));
        etl_symbols_close(syms);
        rep_run_close(&run);
        etl_summary_free(&fa);
        free(c);
        if (!to_stdout) fclose(f);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    c->have_u = 1;
    c->have_w = etl_wakeups_init(&c->w, run.model, &wo) == ETL_OK;
    c->have_p = etl_pmc_init(&c->p, run.model, &po) == ETL_OK;
    c->have_s = etl_spinlocks_init(&c->s, etl_reader_clock(r), &so) == ETL_OK;
    /* A section that cannot be computed fails the page: a page without it would say there is none. */
    const char *failed = c->have_w && c->have_p && c->have_s && have_facts ? NULL : "out of memory";
    rep_run_go(&run, &a);
    if (!failed && etl_usage_finish(&c->u, run.end_ns) != ETL_OK) failed = etl_usage_diag(&c->u)->msg;
    if (!failed && etl_wakeups_finish(&c->w) != ETL_OK) failed = "wake-ups: out of memory";
    if (!failed && etl_pmc_finish(&c->p, run.end_ns) != ETL_OK) failed = "PMC: out of memory";
    if (!failed) {
        if (c->s.o.ncpu < etl_sched_cpu_count(run.model)) c->s.o.ncpu = etl_sched_cpu_count(run.model);
        etl_spinlocks_losses(&c->s, r, &run.damage); /* as `etlkit spinlocks`: lost events, no maximum */
        if (etl_spinlocks_finish(&c->s, run.end_ns) != ETL_OK) failed = "spin locks: out of memory";
    }
    if (!failed && run.model_failed) failed = "out of memory: the scheduler model left threads out";
    /* The threads as `etlkit waits` lists them, for its object in the data; the page's tables keep CPU order. */
    etl_usage_thread *by_ready = NULL;
    if (!failed && c->u.nthreads) {
        by_ready = malloc(c->u.nthreads * sizeof *by_ready);
        if (!by_ready) failed = "out of memory";
        else {
            memcpy(by_ready, c->u.threads, c->u.nthreads * sizeof *by_ready);
            waits_sort(by_ready, c->u.nthreads);
        }
    }
    if (failed) {
        fprintf(stderr, "%s report: %s: %s\n", prog, a.path, failed);
        run.told = true;
        if (c->have_s) etl_spinlocks_free(&c->s);
        if (c->have_p) etl_pmc_free(&c->p);
        if (c->have_w) etl_wakeups_free(&c->w);
        etl_usage_free(&c->u);
        free(c);
        etl_summary_free(&fa);
        etl_symbols_close(syms);
        rep_run_close(&run);
        if (!to_stdout) fclose(f);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    page pg = {.a = &a, .o = &o, .run = &run, .c = c, .fa = &fa, .by_ready = by_ready};
    pg.switches = etl_sched_stats_get(run.model)->switches != 0;
    pg.v0 = c->u.o.v0;
    pg.v1 = c->u.o.v1;
    pg.win = pg.v1 - pg.v0;
    pg.ncpu = (unsigned)c->u.bucket_stride;
    if (pg.ncpu < c->u.ncpus) pg.ncpu = (unsigned)c->u.ncpus;
    pg.top = rep_top(&a, 25);
    if (!pg.top) pg.top = UINT_MAX; /* --top 0: every row */
    pg.interval = interval;
    pg.ncols = c->u.nbuckets; /* cpu --interval's: aligned to the trace start, one more when the window is off the edges */
    if (pg.ncols == 0) pg.ncols = 1;

    /* The wait chain of the longest wait: the chain's own passes over the same reader. */
    etl_chain chain;
    memset(&chain, 0, sizeof chain);
    etl_status chain_st = ETL_OK;
    if (pg.switches && c->u.n_longest_waits && c->u.longest_waits[0].dur_ns > 0) {
        const etl_usage_interval *lw = &c->u.longest_waits[0];
        const etl_sched_thread *st = etl_sched_thread_at(run.model, lw->thread);
        etl_chain_options co = {.sz = sizeof co, .tid = st ? st->tid : lw->tid, .has_at = true,
                                .at = lw->start_ns + lw->dur_ns, .has_from = true, .from = lw->start_ns,
                                .v0 = pg.v0, .v1 = pg.v1, .depth = CHAIN_DEPTH};
        /*
         * A chain costs a pass over the trace per level: the page keeps it to CHAIN_DEPTH levels and
         * descends only into waits of at least 1/200 of the interval (1 ms at least), so that a long
         * trace's report stays a few passes; `etlkit waitchain` goes deeper.
         */
        co.min_ns = lw->dur_ns / 200 > 1000000 ? lw->dur_ns / 200 : 1000000;
        pg.chain_from = co.from;
        pg.chain_at = co.at;
        pg.chain_tid = co.tid;
        /* Its passes fail only for memory: a page that said "no interval" then would be wrong. */
        if (etl_chain_init(&chain, &co) != ETL_OK) chain_st = ETL_E_NOMEM;
        else pg.chain = &chain;
        if (pg.chain) chain_st = etl_chain_run(r, &chain, a.bias, &pg.chain_model);
    }

    /* The sampled profile, a pass of its own, only when the trace has SampledProfile events. */
    etl_profile prof;
    memset(&prof, 0, sizeof prof);
    etl_status prof_st = ETL_OK;
    if (chain_st == ETL_OK && fa.by_hook && fa.by_hook[ETL_HOOK_SAMPLED_PROFILE]) {
        etl_profile_options pro = {.sz = sizeof pro, .v0 = a.v0, .v1 = a.has_range ? a.v1 : a.v0, .pid = -1, .tid = -1,
                                   .threads = a.threads};
        prof_st = etl_profile_run(r, &pro, &prof);
        if (prof_st == ETL_OK && prof.samples) pg.prof = &prof;
        /* the flame graph's frames by function name: the symbols' one pass, only for a page that has one */
        if (pg.prof) {
            pg.syms = syms;
            syms = NULL;
            if (cli_symbols_scan("report", pg.syms, r) != EXIT_OK) prof_st = ETL_E_IO;
        }
    }
    etl_symbols_close(syms); /* a page with no flame graph names no frame */

    etl_status st = ETL_OK;
    int bad = 0, err = 0;
    if (chain_st == ETL_OK && prof_st == ETL_OK) {
        pg.f = f;
        write_page(&pg);
        /* A failed write leaves the error flag set and fails again on the flush: errno says why. */
        bad = fflush(f) != 0 || ferror(f);
        err = etl_write_errno(f);
    }
    if (!to_stdout && fclose(f) != 0 && !bad) {
        bad = 1;
        err = errno;
    }
    if (chain_st != ETL_OK) {
        st = chain_st;
        etl_diag_set(&d, st, UINT64_MAX, "%s: the wait chain: %s", a.path, etl_status_str(st));
    } else if (prof_st != ETL_OK) {
        st = prof_st;
        etl_diag_set(&d, st, UINT64_MAX, "%s: the sampled profile: %s", a.path, etl_status_str(st));
    } else if (bad) {
        st = ETL_E_IO;
        etl_diag_set(&d, st, UINT64_MAX, "%s: cannot write the page: %s", to_stdout ? "standard output" : o.out,
                     strerror(err));
    } else if (pg.failed[0]) { /* a part missing: the page is not put in place (its data, its script) */
        st = ETL_E_IO;
        etl_diag_set(&d, st, UINT64_MAX, "%s: %s", a.path, pg.failed);
    }
    if (st == ETL_OK && !to_stdout) st = etl_outfile_commit(&of, o.out, &d);
    etl_outfile_discard(&of);
    if (pg.chain) etl_chain_free(&chain);
    if (pg.chain_model) etl_sched_close(pg.chain_model);
    cli_symbols_close(pg.syms);
    /* Damage only the page's own passes meet (as profile, pmc and spinlocks exit 3 on it): the profile's, an
     * impossible PMC jump or sum, a spin lock released before it was acquired or of
     * times no hold can have. */
    bool own_damage = (prof_st == ETL_OK && etl_stats_damaged(&prof.st)) ||
                      (c->have_p && (c->p.pmc_implausible || c->p.total.saturated)) ||
                      (c->have_s && (c->s.backwards_hold || c->s.impossible_hold));
    etl_profile_free(&prof);
    etl_summary_free(&fa);
    free(by_ready);
    if (c->have_s) etl_spinlocks_free(&c->s);
    if (c->have_p) etl_pmc_free(&c->p);
    if (c->have_w) etl_wakeups_free(&c->w);
    etl_usage_free(&c->u);
    free(c);
    rc = rep_run_close(&run);
    if (st != ETL_OK) {
        fprintf(stderr, "%s report: %s\n", prog, d.msg[0] ? d.msg : etl_status_str(st));
        return EXIT_IO;
    }
    return rc == EXIT_OK && own_damage ? EXIT_DAMAGED : rc;
}

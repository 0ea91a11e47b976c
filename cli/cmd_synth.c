/* cmd_synth.c - `etlkit synth`: write a simulated kernel trace and its ground truth. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "common.h"
#include "opts.h"
#include "etlkit/synth.h"
#include "base/diag.h"
#include "base/outfile.h"
#include "base/platform.h"

static const cli_cmd synth_cmd = {
    "synth", "-o FILE.etl [OPTIONS]",
    "Simulates a multi-CPU Windows machine (threads, priorities, waits, preemption,\n"
    "quantum ends, thread and process lifetimes, spin locks) and writes what an NT\n"
    "Kernel Logger session would have recorded: CSwitch and/or compact context-switch\n"
    "batches, ReadyThread, SpinLock, Thread and Process events, with rundowns. Seeded\n"
    "and deterministic: the same options give the same bytes. --truth writes every\n"
    "switch, readying, spin lock and lifetime, and per-thread totals, as JSON lines.\n",
    {NULL}, 0, 0,
    "Times in the truth are raw session clock values; NewThreadWaitTime is in clock\n"
    "ticks (--timer-resolution); spin lock times are cycles. See the README section\n"
    "\"Synthetic traces\" for the model.\n\n"
    "Exit status: 0 ok, 1 I/O error, 64 usage (including an invalid spin lock\n"
    "configuration).\n"};

/* The simulator's options are the library's (etl_synth_option_table): each sets its value by name. */
static int synth_set(const cli_opt *o, const char *v, char *err, size_t cap)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_synth_set(o->dst, o->name, v, &d) == ETL_OK) return 0;
    return snprintf(err, cap, "%s", d.msg);
}

static int synth_preset(const cli_opt *o, const char *v, char *err, size_t cap)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_synth_preset(o->dst, v, &d) == ETL_OK) return 0;
    return snprintf(err, cap, "%s", d.msg);
}

#define SYNTH_OWN 5       /* the command's own options, before the simulator's */
#define SYNTH_MAX_OPTS 64
#define SYNTH_HELP_MAX 1024 /* one option's help with its default; the longest (--modules) is about 240 */

/*
 * The table: the command's options, then one row per simulator option, its help
 * ending with the default (the value in a freshly initialised etl_synth_options).
 */
static void synth_table(cli_opt *t, char (*help)[SYNTH_HELP_MAX], etl_synth_options *o, const char **out, const char **truth,
                        int *force, int *quiet)
{
    const cli_opt own[SYNTH_OWN] = {
        {.kind = CLI_OPT_STRING, .name = "output", .short_name = 'o', .arg = "FILE", .dst = out, .need = "a file",
         .flags = CLI_OPT_REQUIRED,
         .help = "the trace to write (required; not standard output: the header is written last)"},
        {.kind = CLI_OPT_STRING, .name = "truth", .arg = "FILE", .dst = truth, .need = "a file",
         .help = "the ground truth, JSON lines; - is standard output (the trace still goes to -o FILE, the "
                 "summary to stderr)"},
        CLI_FLAG("force", 0, "replace an existing FILE (else refused); a symbolic link is replaced itself, never "
                 "written through. Both files are written under temporary names and renamed when complete", force, 1),
        {.kind = CLI_OPT_CUSTOM, .name = "preset", .arg = "small|large", .parse = synth_preset, .dst = o,
         .help = "small: 4 CPUs, 50 threads, 2 s (the defaults); large: 16 CPUs, 1000 threads, 60 processes, "
                 "--size 1G (options after --preset override it)"},
        CLI_FLAG("quiet", 'q', "no summary on stderr", quiet, 1),
    };
    memcpy(t, own, sizeof own);
    etl_synth_options d;
    etl_synth_options_init(&d);
    size_t n, k = SYNTH_OWN;
    const etl_synth_option_desc *lib = etl_synth_option_table(&n);
    for (size_t i = 0; i < n && k < SYNTH_MAX_OPTS - 1; i++, k++) {
        char def[48];
        etl_synth_get(&d, lib[i].name, def, sizeof def);
        if (lib[i].arg) snprintf(help[i], sizeof help[i], "%s (default %s)", lib[i].help, def);
        else snprintf(help[i], sizeof help[i], "%s%s", lib[i].help, strcmp(def, "on") == 0 ? " (default)" : "");
        t[k] = (cli_opt){.kind = CLI_OPT_CUSTOM, .name = lib[i].name, .arg = lib[i].arg, .help = help[i],
                         .parse = synth_set, .dst = o};
    }
    t[k] = (cli_opt)CLI_END;
}

static void on_progress(void *ctx, uint64_t done, uint64_t total)
{
    (void)total;
    cli_progress_update(ctx, done);
}

/* The library names the file it wrote, our temporary one: the user's name instead. */
static void name_output(char *msg, size_t cap, const char *tmp, const char *out)
{
    char *p = tmp ? strstr(msg, tmp) : NULL;
    if (!p) return;
    char rest[256];
    snprintf(rest, sizeof rest, "%s", p + strlen(tmp));
    snprintf(p, cap - (size_t)(p - msg), "%s%s", out, rest);
}

/* The truth's lines, keeping the reason of the first write that failed: the run goes on to close the trace. */
typedef struct truth_out {
    FILE *f;
    int err;
} truth_out;

static int truth_line(void *ctx, const etl_synth_rec *rec)
{
    truth_out *t = ctx;
    errno = 0;
    if (etl_synth_truth_jsonl(t->f, rec) == 0) return 0;
    int e = etl_write_errno(t->f);
    if (!t->err) t->err = e ? e : EIO;
    return -1;
}

static void group(char *out, size_t cap, uint64_t v)
{
    char t[32];
    size_t n = fmt_u64(t, v), k = 0;
    for (size_t i = 0; i < n && k + 2 < cap; i++) {
        if (i && (n - i) % 3 == 0) out[k++] = ',';
        out[k++] = t[i];
    }
    out[k] = 0;
}

int cmd_synth(int argc, char **argv)
{
    const char *out = NULL, *truth = NULL;
    int quiet = 0, force = 0;
    etl_synth_options o;
    etl_synth_options_init(&o);
    etl_diag d;
    cli_opt table[SYNTH_MAX_OPTS];
    static char help[SYNTH_MAX_OPTS][SYNTH_HELP_MAX]; /* 64 KiB: not on the stack */
    synth_table(table, help, &o, &out, &truth, &force, &quiet);
    int prc = cli_opts_parse(&synth_cmd, table, argc, argv, NULL);
    if (prc != CLI_OPTS_RUN) return prc;
    memset(&d, 0, sizeof d);
    if (etl_synth_validate(&o, &d) != ETL_OK) return cli_usage_error("synth", "%s", d.msg);

    if (strcmp(out, "-") == 0)
        return cli_usage_error("synth", "-o needs a file, not standard output (the header is written last)");
    /* --truth -: standard output, as every other command's `-` (a pipe to jq, a compressor). */
    bool truth_stdout = truth && strcmp(truth, "-") == 0;
    /* One file by two spellings (./s.etl, S.ETL on Windows): the truth's rename would be replaced by the trace's. */
    if (truth && !truth_stdout && etl_outfile_same(truth, out))
        return cli_usage_error("synth", "--truth and -o name the same file");

    /* Both outputs follow every command's rules (base/outfile.h), checked before the run. */
    etl_outfile of, tof;
    memset(&tof, 0, sizeof tof);
    memset(&d, 0, sizeof d);
    etl_status st = etl_outfile_check(out, &of, &d);
    if (st == ETL_OK) st = etl_outfile_may_replace(&of, out, force, NULL, &d);
    if (st == ETL_OK && truth && !truth_stdout) {
        st = etl_outfile_check(truth, &tof, &d);
        if (st == ETL_OK) st = etl_outfile_may_replace(&tof, truth, force, NULL, &d);
    }
    FILE *tf = NULL;
    if (st == ETL_OK) st = etl_outfile_create(&of, NULL, &d); /* the writer opens it by name */
    if (st == ETL_OK && truth) {
        if (truth_stdout) tf = stdout;
        else st = etl_outfile_create(&tof, &tf, &d);
    }
    if (st != ETL_OK) {
        fprintf(stderr, "%s synth: %s\n", prog, d.msg);
        if (tf && tf != stdout) fclose(tf);
        etl_outfile_discard(&tof);
        etl_outfile_discard(&of);
        return EXIT_IO;
    }
    static char tbuf[1 << 20];
    truth_out to = {tf, 0};
    if (truth) {
        setvbuf(tf, tbuf, _IOFBF, sizeof tbuf);
        o.on_truth = truth_line;
        o.truth_ctx = &to;
    }
    cli_progress pr;
    memset(&pr, 0, sizeof pr);
    /* A bar only for long runs: a 64 MiB target, or 10 s or more of simulated time. */
    if (o.target_bytes >= (64u << 20)) cli_progress_start(&pr, o.target_bytes);
    else if (!o.target_bytes && o.duration_ns >= 10000000000ull) cli_progress_start(&pr, o.duration_ns);
    if (pr.on) {
        o.on_progress = on_progress;
        o.progress_ctx = &pr;
    }
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    etl_synth_summary s;
    st = etl_synth_run(of.tmp, &o, &s, &d);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cli_progress_end(&pr);
    int rc = EXIT_OK;
    name_output(d.msg, sizeof d.msg, of.tmp, out);
    if (tf) {
        errno = 0;
        int bad = fflush(tf) != 0 || ferror(tf);
        int err = to.err ? to.err : etl_write_errno(tf);
        if (!truth_stdout && fclose(tf) != 0 && !bad) {
            bad = 1;
            err = errno;
        }
        if (bad) { /* the run stopped on it, or ended before the flush found it: the file and why */
            fprintf(stderr, "%s synth: %s: %s\n", prog, truth_stdout ? "standard output" : truth,
                    err ? strerror(err) : "a write failed");
            rc = EXIT_IO;
        }
    }
    if (st == ETL_OK && rc == EXIT_OK && truth && !truth_stdout) st = etl_outfile_commit(&tof, truth, &d);
    if (st == ETL_OK && rc == EXIT_OK) st = etl_outfile_commit(&of, out, &d);
    etl_outfile_discard(&tof);
    etl_outfile_discard(&of);
    if (rc != EXIT_OK) return rc;
    if (st == ETL_E_INVALID_ARG) return cli_usage_error("synth", "%s", d.msg);
    if (st != ETL_OK) {
        fprintf(stderr, "%s synth: %s\n", prog, d.msg[0] ? d.msg : etl_status_str(st));
        return EXIT_IO;
    }
    if (!quiet) {
        char ev[32], sw[32], cs[32], ba[32], rd[32], sl[32], sa[32], by[32], bu[32], te[32], pe[32],
            tc[32], pc[32], tx[32], px[32];
        group(ev, sizeof ev, s.events);
        group(sw, sizeof sw, s.switches);
        group(cs, sizeof cs, s.cswitch_events);
        group(ba, sizeof ba, s.batches);
        group(rd, sizeof rd, s.ready_events);
        group(sl, sizeof sl, s.spinlock_events);
        group(sa, sizeof sa, s.spinlock_acquisitions);
        group(by, sizeof by, s.bytes);
        group(bu, sizeof bu, s.buffers);
        group(te, sizeof te, s.thread_events);
        group(pe, sizeof pe, s.process_events);
        group(tc, sizeof tc, s.threads_created);
        group(pc, sizeof pc, s.processes_created);
        group(tx, sizeof tx, s.threads_exited);
        group(px, sizeof px, s.processes_exited);
        double wall = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
        fprintf(stderr,
                "%s synth: wrote %s: %s bytes in %s buffers, %s events: %s context switches "
                "(%s CSwitch events, %s compact batches), %s ReadyThread, %s SpinLock of %s "
                "acquisitions, %s Thread (SetName included) and %s Process events (%s threads and %s processes "
                "created, %s and %s exited); %.6f s of simulated time on %u CPUs, seed %llu, "
                "in %.2f s.\n",
                prog, out, by, bu, ev, sw, cs, ba, rd, sl, sa, te, pe, tc, pc, tx, px,
                (double)s.simulated_ns / 1e9, o.ncpu, (unsigned long long)o.seed, wall);
        if (o.stacks) {
            char sp[32], sk[32], im[32];
            group(sp, sizeof sp, s.samples);
            group(sk, sizeof sk, s.stack_events);
            group(im, sizeof im, s.image_events);
            fprintf(stderr, "%s synth: --stacks: %s SampledProfile, %s stack walk and key, %s Image events.\n", prog,
                    sp, sk, im);
        }
    }
    return rc;
}

/*
 * report.h - what the scheduler reports (cpu, waits, switches, ...) share: their
 * common options, the run of a trace through the source and the model with a
 * progress bar, and the names of threads and processes as people read them.
 */
#ifndef ETLKIT_CLI_REPORT_H
#define ETLKIT_CLI_REPORT_H

#include "common.h"
#include "out.h"
#include "opts.h"
#include "etlkit/sched.h"
#include "etlkit/usage.h"
#include "etlkit/waitchain.h"

enum { FMT_TEXT = 0, FMT_JSON = 1, FMT_CSV = 2 };

typedef struct rep_args {
    const char *cmd;
    const char *path;
    int format;            /* FMT_* */
    int quiet;
    int has_range;
    int64_t v0, v1;        /* --range, ns from the trace start (a START before it: 0) */
    const char *range_text[2]; /* --range as given, for the note when the trace clips it */
    const char *range_help;    /* --range's help, when the command does not clip (NULL: the common one) */
    cli_range range;       /* --range as parsed, before the checks that set the four above */
    unsigned top;          /* --top N, 0 = all */
    int top_set;           /* --top given: a 0 means all, not the report's default (rep_top) */
    const char *process;   /* --process NAME|PID */
    long long thread;      /* --thread TID, -1 = any */
    int complete_only;
    int bias;              /* --max-wait-reason, -1 = from the OS build */
    etl_sched_ready_fn on_ready; /* optional: the model's ReadyThreads (ctx as for on_row) */
    uint32_t skip;         /* event kinds the report does not need (etl_sched_source_options.skip) */
    unsigned threads;      /* --threads: reading threads */
} rep_args;

void rep_args_init(rep_args *a, const char *cmd);
/* The common options, one bit each, for rep_options. */
enum {
    REP_OPT_JSON = 1u << 0, REP_OPT_CSV = 1u << 1, REP_OPT_RANGE = 1u << 2, REP_OPT_TOP = 1u << 3,
    REP_OPT_PROCESS = 1u << 4, REP_OPT_THREAD = 1u << 5, REP_OPT_COMPLETE_ONLY = 1u << 6,
    REP_OPT_MAX_WAIT_REASON = 1u << 7, REP_OPT_THREADS = 1u << 8, REP_OPT_QUIET = 1u << 9,
    REP_OPTS_ALL = (1u << 10) - 1
};
#define REP_OPTS_MAX 11 /* entries of a fragment, its end included */
/*
 * The common options' table fragment (cli/opts.h), the ones in `which`, storing into a:
 * a command includes it in its own table (CLI_INCLUDE) and may adjust an entry's help
 * (cli_opt_find). --range is checked whole here: times count from the trace's start.
 */
void rep_options(rep_args *a, unsigned which, cli_opt out[REP_OPTS_MAX]);
/*
 * Parses a report's command line: its own options (own, may be NULL) then the common
 * ones in which, and exactly one FILE into a->path. Returns CLI_OPTS_RUN when the
 * command should run, else the exit status to return (--help printed, or a usage error).
 */
int rep_parse(rep_args *a, const cli_cmd *cmd, const cli_opt *own, unsigned which, int argc, char **argv);

/* A trace run through the model; stays open while the report is written. */
typedef struct rep_run {
    cli_input in;
    etl_sched_source *src;
    etl_sched *model;
    etl_stats damage;
    uint64_t end_ts;
    int64_t end_ns;
    int64_t v0, v1;        /* the window in effect, clipped to the trace (v1 after rep_run_go) */
    void (*on_event)(void *ctx, const etl_sched_event *ev);
    void *ctx;
    uint32_t skip;         /* the kinds the source skipped */
    etl_sched_stats mstats;        /* the model's counters, once the run is done */
    etl_sched_source_stats sstats; /* the source's */
    const char *cmd;       /* for the failure rep_run_close tells */
    bool model_failed;     /* the model left something out (out of memory): rep_run_close says so, EXIT_IO */
    bool told;             /* a failure was already said on stderr */
} rep_run;

/*
 * Opens a->path with a source and a model that sends rows to on_row. On failure
 * prints one line and returns the exit status; else EXIT_OK with run open.
 * on_event, when set, sees every event before the model does.
 */
int rep_run_open(rep_run *run, const rep_args *a, etl_sched_row_fn on_row, void *ctx,
                 void (*on_event)(void *ctx, const etl_sched_event *ev));
/* The same on an input already open in run->in (rep_run_percpu's REP_TIME_ORDER). */
int rep_run_start(rep_run *run, const rep_args *a, etl_sched_row_fn on_row, void *ctx,
                  void (*on_event)(void *ctx, const etl_sched_event *ev));
/*
 * For reports whose rows need only their own CPU (cpu, pmc): opens a->path and runs it
 * through the model CPU by CPU (etl_sched_percpu_run) into c, with a progress bar.
 * EXIT_OK: done, as rep_run_go leaves a run. REP_TIME_ORDER: the trace needs the
 * time-ordered model (or c is NULL); the input is open and nothing was run: call
 * rep_run_start and rep_run_go. Otherwise an exit status, the line printed.
 */
#define REP_TIME_ORDER (-2)
int rep_run_percpu(rep_run *run, const rep_args *a, const etl_sched_percpu_consumer *c);
/* Pushes every event through the model (progress bar on a terminal) and finishes it. */
void rep_run_go(rep_run *run, const rep_args *a);
/*
 * Sets run->v0 and run->v1 once run->end_ns is known: --range clipped to the trace
 * [0, end], as the library's windows are (etl_usage_finish), with one line on stderr
 * when that changed it; the whole trace without --range. rep_run_go and rep_run_percpu
 * call it.
 */
void rep_run_window(rep_run *run, const rep_args *a);
/* The note that --range was clipped to [v0, v1] by the trace's start or its end at end_ns (nothing when it was not). */
void rep_range_note(const rep_args *a, const char *path, int64_t end_ns, int64_t v0, int64_t v1);
/* Closes everything and returns the exit status (EXIT_DAMAGED when the input had damage). */
int rep_run_close(rep_run *run);
/* Closes the run, then checks that stdout was written: the exit status. */
int rep_finish(rep_run *run, const char *cmd);

/* "image (PID)" of a thread instance ("Idle (0)", "Unknown", `"" (PID)` for an empty image name), into out[256]. */
const char *rep_process_label(const etl_sched *m, uint32_t thread, char out[256]);
/* A thread's name ("" when none). */
const char *rep_thread_name(const etl_sched *m, uint32_t thread);
/*
 * The rows a table shows, 0 = all: --top's when given (--top 0 too), else dflt (the
 * format's default: 20 in text...). A top set without the option (report's pages) counts.
 */
static inline unsigned rep_top(const rep_args *a, unsigned dflt) { return a->top || a->top_set ? a->top : dflt; }
/* Hundredths of a percent of part over whole, rounded to the nearest as WPA shows it (0 when whole is not positive). */
int64_t rep_pct100(int64_t part, int64_t whole);
/* Thousandths of an event per second of a window of window ns, rounded to the nearest. */
int64_t rep_rate(uint64_t n, int64_t window);
/* A statistic v of l (its mean, a percentile, its max) for people: "-" when l holds no value, never a 0 of none. */
const char *rep_lat_dur(char out[32], const etl_latency *l, int64_t v);
/* A process instance's image name ("Unknown" when none) into out[256], its PID (UINT32_MAX when unknown). */
const char *rep_process_name(const etl_sched *m, uint32_t process, char out[256], uint32_t *pid);
/* Whether a thread instance passes --process and --thread. */
int rep_thread_selected(const rep_args *a, const etl_sched *m, uint32_t thread);
/*
 * The distinct PIDs of the processes with process instance at's image name, ascending, in
 * *pids (malloc'd, the caller frees it); how many (0: out of memory).
 */
size_t rep_same_name_pids(const etl_sched *m, uint32_t at, uint32_t **pids);
/* The end of the line that said what is missing ("; the nearest thread ids:"), then a line for each close match
   etl_sched_find_asked found (thread or process instances), as waitchain and the reports say it. */
void rep_near_print(FILE *f, const etl_sched *m, const etl_sched_found *nr);
/*
 * --process or --thread given and no thread of the trace passes them (a typo reads like an
 * idle process otherwise): one note on stderr, what is missing and the close matches, as
 * waitchain says it; the report still prints its empty tables, exit status unchanged.
 */
void rep_no_match(const rep_run *run, const rep_args *a);

/* The one-line header of text reports: trace, window and its length, CPUs. */
void rep_print_header(const rep_run *run, const char *title);
/* Opens a report's JSON object on stdout: "file", "window" {start_ns, end_ns} and "num_cpus" (when ncpu > 0). */
void rep_json_begin(jw *w, const rep_run *run, int64_t v0, int64_t v1, uint64_t ncpu);
/* The model's and source's anomaly counters, as text lines ("note: 1 thread seen ...") or a JSON object "anomalies". */
void rep_print_anomalies(const rep_run *run, FILE *f);
/* The same on stderr beside a report's data: each line after "etlkit CMD: " (cmd NULL: none). */
void rep_print_anomalies_as(const rep_run *run, FILE *f, const char *cmd);
void rep_json_anomalies(const rep_run *run, jw *w);
/* etl_usage_finish failed: says why (out of memory, the spill's directory and reason), frees u, closes run; EXIT_IO. */
int rep_usage_failed(rep_run *run, etl_usage *u, const char *cmd);
/*
 * When the trace has no switch at all: says so and returns 1. Text: one line on stdout, and
 * the report prints nothing more; CSV: a note on stderr, and the report prints its (empty)
 * table, header row and all; JSON: nothing (the report is empty).
 */
int rep_no_switches(const rep_run *run, const rep_args *a);
/* Its note on stderr (unless --quiet), ending with THEN: for a report whose empty form cannot say why. */
void rep_no_switches_note(const rep_run *run, const rep_args *a, const char *then);

#endif

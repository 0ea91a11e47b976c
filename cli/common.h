/* common.h - what every etlkit subcommand shares: exit codes, options, output helpers. */
#ifndef ETLKIT_CLI_COMMON_H
#define ETLKIT_CLI_COMMON_H

#include <stdio.h>
#include "etlkit/etlkit.h"
#include "base/diagkeep.h"
#include "base/sat.h"
#include "out/json.h"
#include "out/num.h"
#include "out/text.h"

/* Exit statuses (documented in etlkit(1)). */
enum {
    EXIT_OK = 0,        /* done, and the input had no problem */
    EXIT_IO = 1,        /* cannot open or read the input, cannot write the output, out of memory */
    EXIT_NOT_ETL = 2,   /* the input is not an ETL file */
    EXIT_DAMAGED = 3,   /* done, but parts of the input were damaged and skipped (see stderr) */
    EXIT_USAGE = 64     /* bad command line */
};

extern const char *prog;

/*
 * The end of a command's output: EXIT_OK, or EXIT_IO with one line (standard output failed:
 * "etlkit CMD: standard output: No space left on device", the system's reason; or a table lost rows).
 * cmd NULL: etlkit's own output (its --help, --version), "etlkit: standard output: ...".
 */
int cli_stdout_done(const char *cmd);
/* fwrite to stdout that keeps the reason of the first failure for cli_stdout_done (unbuffered writers). */
size_t cli_stdout_write(const void *p, size_t n);

/*
 * A reader opened for a subcommand. Its warnings are kept (base/diagkeep.h: the first
 * ETL_DIAG_KEEP in file order, the others counted, each problem once) and printed
 * together at the end sorted by file offset: the same lines whatever order the
 * threads that read the file met the problems in.
 */
typedef struct cli_input {
    const char *path;
    etl_reader *reader;
    int quiet;
    etl_diag_keep diag;
    etl_diag_keep held; /* told before a run that may be done again (cli_diag_hold) */
    int shows_header;   /* info, dump: the logfile header is their output, so no note of its losses */
} cli_input;

/* The diag callback that keeps capped warnings for a cli_input (ctx). */
void cli_diag_printer(void *ctx, const etl_diag *d);
/* Opens path; on failure prints one line and returns the exit status (else EXIT_OK). */
int cli_open(cli_input *in, const char *path, int quiet);
/* Prints the warnings kept so far (held and not), in file order. */
void cli_diag_flush(cli_input *in);
/*
 * A run that may be done again: hold sets aside what was kept so far (the open's, printed
 * with the rest at the end, in file order); release forgets what the run told since (keep =
 * 0: the run is done again, or abandoned, and the next tells it again) or keeps it.
 */
void cli_diag_hold(cli_input *in);
void cli_diag_release(cli_input *in, int keep);
/*
 * Prints the note of what the session itself lost while tracing (the logfile header's EventsLost and
 * BuffersLost: not damage of the file, exit status unchanged; where they were is not known, so no number
 * can be corrected), then the warnings kept and the "N more problems" line; forgets them. The note is
 * said once per input opened, unless quiet or shows_header.
 */
void cli_diag_done(cli_input *in);
/* That note for the trace at path, when it lost any (a dataset's traces, which no cli_input reads). */
void cli_session_lost_note(const char *path, uint32_t events, uint32_t buffers);
/* cli_diag_done, closes, and returns EXIT_DAMAGED if stats show damage. */
int cli_close(cli_input *in, const etl_stats *st);

/*
 * The member "recovery": what reading skipped (st's damage counters), and with `problem` the
 * first problem's offset and text when there was one (info's object; the page's has none).
 */
void cli_json_recovery(jw *w, const etl_stats *st, int problem);
/*
 * The members "events_lost" and "buffers_lost" of an "anomalies" object: the logfile header's EventsLost
 * and BuffersLost, what the session lost while tracing (every report's JSON carries them so).
 */
void cli_json_session_lost(jw *w, const etl_reader *r);
/* --threads: the default (the CPUs this process may run on). */
unsigned cli_threads_default(void);

/* Usage error: one line, then a pointer to --help. Returns EXIT_USAGE. */
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True if arg is -h or --help. */
int cli_is_help(const char *arg);

/* Progress bar on stderr, only when stderr is a terminal and the input is large. */
typedef struct cli_progress {
    int on;
    uint64_t total;
    unsigned last_pct;
    const char *label;   /* after the percentage (NULL: none); set it, then last_pct = 101 to redraw */
} cli_progress;
void cli_progress_start(cli_progress *p, uint64_t total);
void cli_progress_update(cli_progress *p, uint64_t done);
void cli_progress_end(cli_progress *p);
/* The same bar over a count of items (export's traces): on for a terminal, any total; "[###...] 3/10". */
void cli_progress_start_count(cli_progress *p, uint64_t total);
void cli_progress_count(cli_progress *p, uint64_t done);

/*
 * Strings from the trace (process and thread names, paths, logger names) reach the
 * output only through the library's writers (src/out): text_str for people,
 * json_str for JSON, csv_sheet for the reports' CSV, html_text for the page.
 */

int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_synth(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_cpu(int argc, char **argv);
int cmd_waits(int argc, char **argv);
int cmd_switches(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_waitchain(int argc, char **argv);
int cmd_wakeups(int argc, char **argv);
int cmd_spinlocks(int argc, char **argv);
int cmd_pmc(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif

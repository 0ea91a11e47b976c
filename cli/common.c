/* common.c - input opening with capped diagnostics, progress bar, output helpers. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "out.h"
#include "base/platform.h"

const char *prog = "etlkit";

void cli_diag_printer(void *ctx, const etl_diag *d)
{
    cli_input *in = ctx;
    if (!in->quiet) etl_diag_keep_add(&in->diag, d);
}

void cli_diag_flush(cli_input *in)
{
    etl_diag_keep_merge(&in->diag, &in->held);
    for (unsigned i = 0; i < in->diag.n; i++)
        fprintf(stderr, "%s: %s: warning: %s\n", prog, in->path, in->diag.text[i]);
    in->diag.n = 0;
}

void cli_diag_hold(cli_input *in)
{
    /* Nothing is printed here: the warnings are printed together at the end, in file order. */
    etl_diag_keep_merge(&in->held, &in->diag);
}

void cli_diag_release(cli_input *in, int keep)
{
    if (keep) return;
    /* The run is done again (or abandoned) and tells what it meets again: forget what it told. */
    etl_diag_keep_free(&in->diag);
    etl_diag_keep_init(&in->diag);
}

void cli_session_lost_note(const char *path, uint32_t events, uint32_t buffers)
{
    if (!events && !buffers) return;
    fprintf(stderr, "%s: %s: note: the session lost %u event%s and %u buffer%s while tracing (logfile header "
            "EventsLost, BuffersLost): the numbers may miss them, and where is not known\n", prog, path,
            events, events == 1 ? "" : "s", buffers, buffers == 1 ? "" : "s");
}

/* The header's losses: one note (cli_diag_done). */
static void session_lost_note(const cli_input *in)
{
    if (in->quiet || in->shows_header || !in->reader) return;
    const etl_logfile_header *h = etl_reader_header(in->reader);
    cli_session_lost_note(in->path, h->events_lost, h->buffers_lost);
}

void cli_diag_done(cli_input *in)
{
    session_lost_note(in);
    cli_diag_flush(in);
    if (in->diag.more)
        fprintf(stderr, "%s: %s: warning: %llu more problems not shown\n", prog, in->path,
                (unsigned long long)in->diag.more);
    etl_diag_keep_free(&in->diag);
    etl_diag_keep_free(&in->held);
}

int cli_open(cli_input *in, const char *path, int quiet)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->quiet = quiet;
    etl_reader_options o = {sizeof o, cli_diag_printer, in};
    etl_diag d = {0};
    etl_status st = etl_reader_open(path, &o, &in->reader, &d);
    if (st == ETL_OK) return EXIT_OK;
    etl_diag_keep_free(&in->diag); /* what the open told goes with it: the one line below says why */
    if (st == ETL_E_NOT_ETL) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, d.msg);
        return EXIT_NOT_ETL;
    }
    /* Out of memory: said of the file (the reader's line names none). */
    if (d.msg[0] && st != ETL_E_NOMEM) fprintf(stderr, "%s: %s\n", prog, d.msg);
    else fprintf(stderr, "%s: %s: %s\n", prog, path, etl_status_str(st));
    return EXIT_IO;
}

int cli_close(cli_input *in, const etl_stats *st)
{
    cli_diag_done(in);
    int damaged = st && etl_stats_damaged(st);
    etl_reader_close(in->reader);
    in->reader = NULL;
    return damaged ? EXIT_DAMAGED : EXIT_OK;
}

unsigned cli_threads_default(void)
{
    return etl_cpu_count();
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "%s%s%s: ", prog, cmd ? " " : "", cmd ? cmd : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", prog, cmd ? " " : "", cmd ? cmd : "");
    return EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

void cli_progress_start(cli_progress *p, uint64_t total)
{
    p->on = total >= (64u << 20) && etl_isatty(STDERR_FILENO);
    p->total = total ? total : 1;
    p->last_pct = 101;
}

void cli_progress_update(cli_progress *p, uint64_t done)
{
    if (!p->on) return;
    unsigned pct = (unsigned)(done * 100 / p->total);
    if (pct > 100) pct = 100;
    if (pct == p->last_pct) return;
    p->last_pct = pct;
    char bar[41];
    unsigned fill = pct * 40 / 100;
    memset(bar, '#', fill);
    memset(bar + fill, '.', 40 - fill);
    bar[40] = 0;
    fprintf(stderr, "\r[%s] %3u%%%s", bar, pct, p->label ? p->label : "");
}

void cli_progress_start_count(cli_progress *p, uint64_t total)
{
    p->on = total > 0 && etl_isatty(STDERR_FILENO);
    p->total = total ? total : 1;
    p->last_pct = 101;
    cli_progress_count(p, 0);
}

void cli_progress_count(cli_progress *p, uint64_t done)
{
    if (!p->on) return;
    char bar[41];
    unsigned fill = (unsigned)(done * 40 / p->total);
    if (fill > 40) fill = 40;
    memset(bar, '#', fill);
    memset(bar + fill, '.', 40 - fill);
    bar[40] = 0;
    fprintf(stderr, "\r[%s] %llu/%llu", bar, (unsigned long long)done, (unsigned long long)p->total);
}

void cli_progress_end(cli_progress *p)
{
    if (p->on) fprintf(stderr, "\r%*s\r", 48 + (p->label ? (int)strlen(p->label) : 0), "");
}

void cli_json_recovery(jw *w, const etl_stats *st, int problem)
{
    jw_obj(w, "recovery");
    jw_u64(w, "bad_buffers", st->bad_buffers);
    jw_u64(w, "bad_records", st->bad_records);
    jw_u64(w, "skipped_bytes", st->skipped_bytes);
    jw_u64(w, "truncated_buffers", st->truncated_buffers);
    jw_u64(w, "decompress_errors", st->decompress_errors);
    jw_u64(w, "unsupported_buffers", st->unsupported_buffers);
    if (problem && st->first_problem_offset != UINT64_MAX) {
        jw_u64(w, "first_problem_offset", st->first_problem_offset);
        jw_str(w, "first_problem", st->first_problem);
    }
    jw_obj_end(w);
}

void cli_json_session_lost(jw *w, const etl_reader *r)
{
    const etl_logfile_header *h = etl_reader_header(r);
    jw_u64(w, "events_lost", h->events_lost);
    jw_u64(w, "buffers_lost", h->buffers_lost);
}

/* The reason of the first write to stdout that failed, when the writer saw it (cli_stdout_write); 0: none seen. */
static int stdout_errno;

size_t cli_stdout_write(const void *p, size_t n)
{
    size_t w = fwrite(p, 1, n, stdout);
    if (w < n && !stdout_errno) {
        int e = etl_write_errno(stdout);
        stdout_errno = e ? e : EIO;
    }
    return w;
}

int cli_stdout_done(const char *cmd)
{
    int lost = tbl_failed();
    /*
     * The reason: the write that failed, if it was seen; else what this flush meets (stdio
     * keeps what it could not write and tries again here); else errno as the failure left
     * it (stdout's last write: nothing after the output fails quietly).
     */
    int e = stdout_errno ? stdout_errno : etl_write_errno(stdout);
    errno = 0;
    if (fflush(stdout) != 0 && !stdout_errno && errno) e = etl_write_errno(stdout);
    if (ferror(stdout)) {
        fprintf(stderr, "%s%s%s: standard output: %s\n", prog, cmd ? " " : "", cmd ? cmd : "",
                e ? strerror(e) : "a write failed");
        return EXIT_IO;
    }
    if (lost) {
        fprintf(stderr, "%s%s%s: out of memory: a table lost rows\n", prog, cmd ? " " : "", cmd ? cmd : "");
        return EXIT_IO;
    }
    return EXIT_OK;
}

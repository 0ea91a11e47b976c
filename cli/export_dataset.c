/*
 * export_dataset.c - `etlkit export A.etl B.etl ... --to csv -o DS`: the library's
 * dataset export (etl_dataset_export) with what the command says on stderr: one
 * line per trace that failed (naming the file, and why) or had damage, a bar of
 * traces done on a terminal, and a summary line.
 *
 * Exit status: 0 every trace in the dataset; 3 every trace in it, some inputs had
 * damage (exported anyway, as a single export's 3); 1 some traces are not in it
 * (not ETL files, unreadable, a write failed: the others are exported all the same,
 * and the manifest lists the failures) or DS cannot be written; 64 a refusal of the
 * command line (two inputs with one trace ID).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "export_dataset.h"
#include "common.h"
#include "etlkit/export.h"

typedef struct ds_tell {
    const cli_dataset_args *a;
    cli_progress bar;
    size_t done;
    uint64_t rows;
    size_t earlier;           /* failed traces whose earlier export stays in DS */
} ds_tell;

static void on_trace(void *ctx, const etl_dataset_trace *t)
{
    ds_tell *s = ctx;
    s->done++;
    s->rows += t->rows;
    if (t->status != ETL_OK || (t->damaged && !t->skipped && !s->a->quiet)) {
        cli_progress_end(&s->bar);
        size_t n = strlen(t->path);
        /* One line naming the file: the reason names it already, or it is put first. */
        const char *msg = t->msg;
        int named = strncmp(msg, t->path, n) == 0 && msg[n] == ':';
        if (t->status != ETL_OK) {
            s->earlier += t->earlier_kept;
            /* a dataset reader still finds the ID's rows: of an earlier run, not of this file */
            fprintf(stderr, "%s export: %s%s%s%s%s%s\n", prog, named ? "" : t->path, named ? "" : ": ", msg,
                    t->earlier_kept ? " (the dataset keeps trace " : "", t->earlier_kept ? t->id : "",
                    t->earlier_kept ? "'s earlier export: this run did not replace it)" : "");
        }
        else
            fprintf(stderr, "%s export: %s: warning: the input had damage (exported anyway; its anomalies and "
                    "diagnostics are in %s/_manifest.json)\n", prog, t->path, s->a->out);
    }
    if (t->status == ETL_OK && !t->skipped && !s->a->quiet && (t->events_lost || t->buffers_lost)) {
        cli_progress_end(&s->bar);
        cli_session_lost_note(t->path, t->events_lost, t->buffers_lost);
    }
    if (t->status == ETL_OK && t->symbols_msg[0] && !s->a->quiet) {
        cli_progress_end(&s->bar);
        fprintf(stderr, "%s export: %s: symbols: %s\n", prog, t->path, t->symbols_msg);
    }
    cli_progress_count(&s->bar, s->done);
}

int cli_export_dataset(const char *const *files, size_t n, const cli_dataset_args *a)
{
    ds_tell s = {.a = a};
    cli_progress_start_count(&s.bar, n);
    etl_dataset_options o = {.sz = sizeof o,
                             .format = a->format,
                             .tables = a->tables,
                             .jobs = a->jobs,
                             .resume = a->resume,
                             .force = a->force,
                             .has_range = a->has_range,
                             .v0 = a->v0,
                             .v1 = a->v1,
                             .bias = a->bias,
                             .on_trace = on_trace,
                             .ctx = &s,
                             .symbols = a->symbols && *a->symbols ? a->symbols : NULL};
    size_t held = SIZE_MAX;
    o.held = &held;
    etl_dataset_result res;
    etl_diag d;
    etl_status st = etl_dataset_export(a->out, files, n, &o, &res, &d);
    cli_progress_end(&s.bar);
    if (st == ETL_E_INVALID_ARG) return cli_usage_error("export", "%s", d.msg);
    if (st != ETL_OK && (!res.failed || !strstr(d.msg, "traces not exported"))) {
        fprintf(stderr, "%s export: %s\n", prog, d.msg);
        if (!res.failed) return EXIT_IO;
    }
    /* Counts of the traces given; the dataset may hold others (earlier runs'), said apart. */
    if (!a->quiet || res.failed) {
        char extra[96] = "", all[64] = "";
        if (s.earlier)
            snprintf(extra, sizeof extra, ", %zu of them with an earlier export left in place", s.earlier);
        if (held != SIZE_MAX) snprintf(all, sizeof all, "; it holds %zu trace%s", held, held == 1 ? "" : "s");
        fprintf(stderr, "%s export: %s: %zu of %zu trace%s given in the dataset (%zu exported, %zu kept from before, "
                "%zu failed%s)%s; %llu rows written\n", prog, a->out, res.exported + res.skipped, n, n == 1 ? "" : "s",
                res.exported, res.skipped, res.failed, extra, all, (unsigned long long)s.rows);
    }
    if (st != ETL_OK) return EXIT_IO;
    return res.damaged ? EXIT_DAMAGED : EXIT_OK;
}

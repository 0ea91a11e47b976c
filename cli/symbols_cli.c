/* symbols_cli.c - see symbols_cli.h. */
#include "symbols_cli.h"

#include <stdlib.h>
#include "base/platform.h"
#include "columns.h"
#include "out/text.h"

/*
 * The library's diagnostics, one line each as they happen: while the path is opened, an
 * entry passed over (ETL_E_IO) names where the path came from; later, a stopped llvm-pdbutil.
 * One command runs per process: its one symbolizer's context can be static.
 */
static struct {
    const char *cmd;
    const char *opening; /* the path's source while it is opened, NULL after */
} diag_to;

static void on_diag(void *ctx, const etl_diag *d)
{
    (void)ctx;
    if (diag_to.opening && d->status == ETL_E_IO)
        fprintf(stderr, "%s %s: %s: %s (passed over)\n", prog, diag_to.cmd, diag_to.opening, d->msg);
    else if (d->status == ETL_E_INVALID_ARG) /* the message names its variable */
        fprintf(stderr, "%s %s: %s\n", prog, diag_to.cmd, d->msg);
    else
        fprintf(stderr, "%s %s: symbols: %s\n", prog, diag_to.cmd, d->msg);
}

int cli_symbols_open(const char *cmd, const char *path, etl_symbols **out)
{
    *out = NULL;
    /* --symbols is this run's: a folder that is not there fails it; the environment's is every run's: a warning */
    bool given = path != NULL;
    if (!path) path = etl_getenv("ETLKIT_SYMBOL_PATH");
    if (!path || !*path) return EXIT_OK;
    diag_to.cmd = cmd;
    diag_to.opening = given ? "--symbols" : "ETLKIT_SYMBOL_PATH";
    etl_symbols_options o = {.sz = sizeof o, .path = path, .lenient = !given, .on_diag = on_diag};
    etl_diag d = {0};
    etl_status st = etl_symbols_open_with(&o, out, &d);
    diag_to.opening = NULL;
    if (st != ETL_OK) {
        fprintf(stderr, "%s %s: %s: %s\n", prog, cmd, given ? "--symbols" : "ETLKIT_SYMBOL_PATH",
                d.msg[0] ? d.msg : etl_status_str(st));
        return EXIT_IO;
    }
    return EXIT_OK;
}

int cli_symbols_scan(const char *cmd, etl_symbols *s, etl_reader *r)
{
    if (!s) return EXIT_OK;
    etl_status st = etl_symbols_scan(s, r);
    if (st == ETL_OK) return EXIT_OK;
    fprintf(stderr, "%s %s: symbols: %s\n", prog, cmd, etl_status_str(st));
    return EXIT_IO;
}

int cli_sched_stacks_open(const char *cmd, etl_reader *r, unsigned threads, unsigned flags, int kind,
                          const etl_sched_stacks_event *want, size_t nwant, etl_sched_stacks **out, etl_symbols **sym)
{
    *out = NULL;
    bool logged;
    etl_status st = etl_sched_stacks_probe(r, &logged);
    if (st == ETL_OK && !logged) { /* no frames to name */
        etl_symbols_close(*sym);
        *sym = NULL;
        return EXIT_OK;
    }
    if (st == ETL_OK)
        st = kind != CLI_STACKS_BOTH && !want ? etl_sched_stacks_build_kind(r, threads, kind == CLI_STACKS_READYING, out)
                                              : etl_sched_stacks_build_only(r, threads, want, nwant, out);
    int rc = EXIT_OK;
    if (st != ETL_OK) {
        fprintf(stderr, "%s %s: stacks: %s\n", prog, cmd, etl_status_str(st));
        rc = EXIT_IO;
    } else {
        rc = cli_symbols_scan(cmd, *sym, r);
    }
    if (rc != EXIT_OK) {
        etl_sched_stacks_free(*out);
        *out = NULL;
        etl_symbols_close(*sym);
        *sym = NULL;
        return rc;
    }
    if (*sym) etl_sched_stacks_set_symbols(*out, *sym, flags);
    return EXIT_OK;
}

void cli_sched_stacks_notes(const char *cmd, const char *path, const etl_sched_stacks *s)
{
    const char *key, *text;
    uint64_t n;
    for (unsigned i = 0; s && etl_sched_stacks_note(s, i, &key, &n, &text); i++) {
        if (!n) continue;
        char c[32];
        fprintf(stderr, "%s %s: note: ", prog, cmd);
        text_str(stderr, path);
        fprintf(stderr, ": %s %s\n", col_u64(c, n), text);
    }
}

void cli_sched_stacks_json(jw *w, const etl_sched_stacks *s)
{
    if (!s) return;
    const char *key, *text;
    uint64_t n;
    jw_obj(w, "stacks_lack");
    for (unsigned i = 0; etl_sched_stacks_note(s, i, &key, &n, &text); i++) jw_u64(w, key, n);
    jw_obj_end(w);
}

void cli_symbols_close(etl_symbols *s)
{
    if (!s) return;
    fflush(stdout);
    (void)etl_symbols_report(s, stderr);
    etl_symbols_close(s);
}

void cli_symbols_json(jw *w, etl_symbols *s)
{
    if (!s) return;
    etl_symbols_stats st;
    etl_symbols_stats_get(s, &st);
    jw_obj(w, "symbols");
    jw_u64(w, "modules", st.modules);
    jw_u64(w, "modules_without_symbols", st.without);
    jw_arr(w, "without");
    const char *why, *name;
    for (size_t i = 0; (name = etl_symbols_without(s, i, &why)) != NULL; i++) {
        jw_obj(w, NULL);
        jw_str(w, "module", name);
        jw_str(w, "why", why);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_u64(w, "round_trips", st.round_trips);
    jw_u64(w, "lookups", st.lookups);
    jw_u64(w, "cache_hits", st.cache_hits);
    jw_bool(w, "tool_missing", st.tool_missing);
    jw_obj_end(w);
}

/* symbols_cli.c - see symbols_cli.h. */
#include "symbols_cli.h"

#include <stdlib.h>

int cli_symbols_open(const char *cmd, const char *path, etl_reader *r, etl_symbols **out)
{
    *out = NULL;
    if (!path) path = getenv("ETLKIT_SYMBOL_PATH");
    if (!path || !*path) return EXIT_OK;
    etl_symbols *s = NULL;
    etl_status st = etl_symbols_open(path, &s);
    if (st == ETL_OK) st = etl_symbols_scan(s, r);
    if (st != ETL_OK) {
        etl_symbols_close(s);
        fprintf(stderr, "%s %s: symbols: %s\n", prog, cmd, etl_status_str(st));
        return EXIT_IO;
    }
    *out = s;
    return EXIT_OK;
}

int cli_sched_stacks_open(const char *cmd, const char *path, etl_reader *r, unsigned flags, etl_sched_stacks **out,
                          etl_symbols **sym)
{
    *out = NULL;
    *sym = NULL;
    if (!etl_sched_stacks_logged(r)) return EXIT_OK;
    etl_status st = etl_sched_stacks_build(r, out);
    if (st != ETL_OK) {
        fprintf(stderr, "%s %s: stacks: %s\n", prog, cmd, etl_status_str(st));
        return EXIT_IO;
    }
    int rc = cli_symbols_open(cmd, path, r, sym);
    if (rc != EXIT_OK) {
        etl_sched_stacks_free(*out);
        *out = NULL;
        return rc;
    }
    if (*sym) etl_sched_stacks_set_symbols(*out, *sym, flags);
    return EXIT_OK;
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

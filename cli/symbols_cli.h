/*
 * symbols_cli.h - `--symbols PATH` (and ETLKIT_SYMBOL_PATH) for every command
 * that prints frames: the option's entry, the symbolizer opened over the trace,
 * the "modules without symbols" line on stderr and the JSON key.
 */
#ifndef ETLKIT_CLI_SYMBOLS_CLI_H
#define ETLKIT_CLI_SYMBOLS_CLI_H

#include "common.h"
#include "out.h"
#include "etlkit/symbols.h"
#include "etlkit/schedstacks.h"

#define CLI_SYMBOLS_HELP                                                                                     \
    "name frames module!function+0xOFFSET from the PDBs in these folders (';'-separated, ':' too on POSIX "  \
    "when no ';'; Microsoft symbol-store layout or flat); default: $ETLKIT_SYMBOL_PATH. Needs llvm-pdbutil"
#define CLI_SYMBOLS_OPT(dst) CLI_STRING("symbols", 0, "PATH", CLI_SYMBOLS_HELP, "a list of folders", dst)

/*
 * The symbolizer for path (--symbols' value; NULL: $ETLKIT_SYMBOL_PATH, and
 * none when that is unset or empty: *out NULL) with the trace's debug identities
 * learnt from r. EXIT_OK, or the exit status after one line on stderr.
 */
int cli_symbols_open(const char *cmd, const char *path, etl_reader *r, etl_symbols **out);
/*
 * The scheduler's stacks of r (etlkit/schedstacks.h) when the trace walks them
 * (*out NULL otherwise: nothing read), their frames named through the symbols of
 * path as cli_symbols_open finds them (*sym NULL without), flags as
 * etl_symbols_label takes them. EXIT_OK, or the exit status after one line on stderr.
 */
int cli_sched_stacks_open(const char *cmd, const char *path, etl_reader *r, unsigned flags, etl_sched_stacks **out,
                          etl_symbols **sym);
/* Tells stderr what is missing ("2 modules without symbols: ..."), then closes s (NULL: nothing). */
void cli_symbols_close(etl_symbols *s);
/* The JSON key "symbols": the modules without symbols, the round trips (nothing when s is NULL). */
void cli_symbols_json(jw *w, etl_symbols *s);

#endif

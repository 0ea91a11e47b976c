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
 * The symbolizer for path (--symbols' value; NULL: $ETLKIT_SYMBOL_PATH, and none
 * when that is unset or empty: *out NULL), opened before the trace is read: an
 * entry of --symbols that is not an existing folder fails the command (EXIT_IO,
 * one line naming it and why), one of ETLKIT_SYMBOL_PATH is a warning line and
 * passed over. EXIT_OK, or the exit status after one line on stderr.
 */
int cli_symbols_open(const char *cmd, const char *path, etl_symbols **out);
/* Learns the trace's debug identities (s NULL: nothing). EXIT_OK, or EXIT_IO after one line on stderr. */
int cli_symbols_scan(const char *cmd, etl_symbols *s, etl_reader *r);
/*
 * The scheduler's stacks of r (etlkit/schedstacks.h) when the trace walks them
 * (*out NULL otherwise: nothing read), their frames named through *sym (as
 * cli_symbols_open opened it; NULL: none), flags as etl_symbols_label takes them,
 * read on up to threads threads, keeping every walked event's stack (want NULL), those of one
 * kind (want NULL, kind CLI_STACKS_NEW or _READYING: etl_sched_stacks_build_kind) or those of want's
 * nwant events (etl_sched_stacks_build_only). *sym is scanned here, or
 * closed and NULL when there are no stacks or on failure. EXIT_OK, or the exit status
 * after one line on stderr.
 */
enum { CLI_STACKS_BOTH, CLI_STACKS_NEW, CLI_STACKS_READYING };
int cli_sched_stacks_open(const char *cmd, etl_reader *r, unsigned threads, unsigned flags, int kind,
                          const etl_sched_stacks_event *want, size_t nwant, etl_sched_stacks **out, etl_symbols **sym);
/*
 * What the scheduler's stacks lack (etl_sched_stacks_note), as profile tells its own: a note line on stderr
 * for each count that is not 0 (s NULL: nothing), and the counts as the JSON object "stacks_lack".
 */
void cli_sched_stacks_notes(const char *cmd, const char *path, const etl_sched_stacks *s);
void cli_sched_stacks_json(jw *w, const etl_sched_stacks *s);
/* Tells stderr what is missing ("2 modules without symbols: ..."), then closes s (NULL: nothing). */
void cli_symbols_close(etl_symbols *s);
/* The JSON key "symbols": the modules without symbols, the round trips (nothing when s is NULL). */
void cli_symbols_json(jw *w, etl_symbols *s);

#endif

/*
 * outfile.h - writing an output file safely: a new file beside the target,
 * renamed into place on success, so that a failure leaves whatever was there as
 * it was, the input (even under another name) is never truncated under its
 * reader, and nothing is removed but our own temporary file: not on an error,
 * and not when SIGINT, SIGTERM, SIGHUP or SIGXFSZ ends the run (sigclean.h).
 * Shared by convert, and the CLI's export, report and synth.
 *
 * The name given is the name replaced. A symbolic link there is replaced by the
 * new file, never written through: the file it names stays as it was, so only
 * what the user named can change. The commands add their rule (may_replace): an
 * existing output, a symbolic link included, is replaced only with --force, and
 * one that is the input, whatever its name, never.
 *
 *     etl_outfile of;
 *     etl_outfile_check(path, &of, diag);   before reading anything: a refusal costs nothing
 *     etl_outfile_may_replace(&of, path, force, input, diag);   the commands' rule
 *     etl_outfile_create(&of, &f, diag);    the temporary file, opened for writing
 *     ... write f, fclose(f) ...
 *     etl_outfile_commit(&of, path, diag);  rename into place (on failure: discard)
 *     etl_outfile_discard(&of);             removes the temporary file if still there, frees
 *
 * A directory output (export --to csv|parquet) is the same with _check_dir,
 * _dir_files (its own files' names: the tables') and _create_dir: a new directory
 * is renamed into place whole; over an existing one (with --force) commit replaces
 * its own files as one (those this run wrote move in, the others of those names go;
 * a step that fails puts everything back; the signals wait for the end of it), other
 * files stay, and discard removes the emptied temporary.
 */
#ifndef ETLKIT_SRC_BASE_OUTFILE_H
#define ETLKIT_SRC_BASE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include "etlkit/base.h"
#include "base/platform.h"

typedef struct etl_outfile {
    char *target;   /* the path renamed over: the name given (a symbolic link itself, not what it names) */
    char *tmp;      /* the temporary file or directory, once created */
    bool dir;       /* the output is a directory */
    bool exists;    /* something is at target: a file, a directory, a symbolic link (dangling too) */
    bool is_link;   /* ... and it is a symbolic link */
    bool resolves;  /* st is what target names, following a link */
    bool not_dir;   /* a directory output, and something else is there: may_replace refuses it */
    etl_file_info st;
    int clean;      /* tmp's slot in the signal cleanup table + 1; 0 = none */
    /* A directory output's own files (etl_outfile_dir_files): names[i] + ext, ours those written. */
    const char *const *names;
    unsigned nnames;
    const char *ext;
    uint32_t ours;
} etl_outfile;

/*
 * Refuses what the new file cannot replace: a non-regular file (FIFO, device,
 * directory) and a regular file the user may not write. A symbolic link, to
 * anything or to nothing, may be replaced.
 */
etl_status etl_outfile_check(const char *path, etl_outfile *of, etl_diag *diag);
/*
 * The same for a directory output: what exists there must be a directory or a symbolic
 * link, else may_replace refuses it (after its input test: an OUT that is the input file
 * is ETL_E_INVALID_ARG, as for a file output).
 */
etl_status etl_outfile_check_dir(const char *path, etl_outfile *of, etl_diag *diag);
/*
 * The commands' rule: an output that is the input file (same device and inode,
 * through any name; input "-" is standard input, NULL none) is ETL_E_INVALID_ARG;
 * an existing output without force is ETL_E_IO.
 */
etl_status etl_outfile_may_replace(const etl_outfile *of, const char *path, bool force, const char *input,
                                   etl_diag *diag);
/*
 * A directory output's own files: names[i] + ext for i < n (n <= 32), ours a bit per
 * name this run writes into the temporary directory. The names are kept (they must
 * outlive of) for commit, which over an existing directory replaces all of them: ours
 * move in, the others there go. Before anything is written, over an existing directory
 * (force): one of them that is the input file (itself or what it links to, same device
 * and inode) is ETL_E_INVALID_ARG; one that is neither a regular file nor a symbolic
 * link (a directory in the way) is ETL_E_IO, nothing touched.
 */
etl_status etl_outfile_dir_files(etl_outfile *of, const char *path, const char *const *names, unsigned n,
                                 const char *ext, uint32_t ours, const char *input, etl_diag *diag);
/*
 * Whether two output paths, spelled differently (./x and x, X and x on Windows, a
 * link to the directory...), are one name: their directories are one (same device and
 * inode) and their last components equal as the system compares names (etl_name_same).
 * Two outputs of one run (synth -o and --truth) must not be: the second rename would
 * replace the first.
 */
bool etl_outfile_same(const char *a, const char *b);
/*
 * Creates the temporary file in the target's directory (rename() stays within one
 * file system), registered for removal on a signal. f: the file opened for writing,
 * or NULL to create it only (a writer that opens it by of->tmp).
 */
etl_status etl_outfile_create(etl_outfile *of, FILE **f, etl_diag *diag);
/* The temporary file of etl_outfile_create made anew, empty, for a second writing (the first closed). */
etl_status etl_outfile_reopen(etl_outfile *of, FILE **f, etl_diag *diag);
/* Creates the temporary directory beside the target, registered for removal on a signal. */
etl_status etl_outfile_create_dir(etl_outfile *of, etl_diag *diag);
/*
 * Renames the (closed) temporary file or new directory over the target; path is the
 * name the user gave. A symbolic link is replaced; for a directory, removed first
 * (rename cannot put a directory over a link). Over an existing directory, the files
 * of etl_outfile_dir_files are replaced as one: each of those names there is moved
 * aside into the temporary directory, ours are moved in, then the old ones removed;
 * a step that fails moves everything back (OUT as it was; the message says so, or
 * names what could not be put back and where it is) and discard removes ours. The
 * termination signals wait for the end of it (sigclean.h, etl_sigclean_hold).
 */
etl_status etl_outfile_commit(etl_outfile *of, const char *path, etl_diag *diag);
/* Removes the temporary file (or empty directory) if it was not renamed (ours alone), frees the names. */
void etl_outfile_discard(etl_outfile *of);

#endif

/*
 * outfile.h - writing an output file safely: a new file beside the target,
 * renamed into place on success, so that a failure leaves whatever was there as
 * it was, the input (even under another name) is never truncated under its
 * reader, and nothing is removed but our own temporary file. Shared by convert
 * and the CLI's report.
 *
 *     etl_outfile of;
 *     etl_outfile_check(path, &of, diag);   before reading anything: a refusal costs nothing
 *     etl_outfile_create(&of, &f, diag);    the temporary file, opened for writing
 *     ... write f, fclose(f) ...
 *     etl_outfile_commit(&of, path, diag);  rename into place (on failure: discard)
 *     etl_outfile_discard(&of);             removes the temporary file if still there, frees
 */
#ifndef ETLKIT_SRC_BASE_OUTFILE_H
#define ETLKIT_SRC_BASE_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>
#include <sys/stat.h>
#include "etlkit/base.h"

typedef struct etl_outfile {
    char *target;   /* the path renamed over: the output, or the file its symbolic link names */
    char *tmp;      /* the temporary file, once created */
    bool exists;
    struct stat st; /* of the existing target */
} etl_outfile;

/* Refuses non-regular outputs, dangling links and files the user may not write. */
etl_status etl_outfile_check(const char *path, etl_outfile *of, etl_diag *diag);
/* Creates the temporary file in the target's directory (rename() stays within one file system). */
etl_status etl_outfile_create(etl_outfile *of, FILE **f, etl_diag *diag);
/* Renames the (closed) temporary file over the target; path is the name the user gave. */
etl_status etl_outfile_commit(etl_outfile *of, const char *path, etl_diag *diag);
/* Unlinks the temporary file if it was not renamed (ours alone), frees the names. */
void etl_outfile_discard(etl_outfile *of);

#endif

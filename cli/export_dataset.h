/*
 * export_dataset.h - `etlkit export A.etl B.etl ... -o DS`: several traces as one
 * Hive-partitioned dataset (etl_dataset_export in etlkit/export.h), the multi-input
 * path of cmd_export.c.
 */
#ifndef ETLKIT_CLI_EXPORT_DATASET_H
#define ETLKIT_CLI_EXPORT_DATASET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cli_dataset_args {
    const char *out;          /* DS */
    const char *format;       /* "csv" */
    uint32_t tables;
    unsigned jobs;            /* 0 = the CPUs */
    bool resume, force, quiet;
    bool has_range;
    int64_t v0, v1;
    int bias;                 /* --max-wait-reason, -1 = from the OS build */
    const char *symbols;      /* --symbols, else $ETLKIT_SYMBOL_PATH; NULL or empty: none */
} cli_dataset_args;

/* Exports files[0..n) and returns the exit status (the lines on stderr told). */
int cli_export_dataset(const char *const *files, size_t n, const cli_dataset_args *a);

#endif

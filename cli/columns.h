/*
 * columns.h - the cell formatters of the reports' tables: one function per kind of
 * value, so a number reads the same in every report, the page's tables included.
 */
#ifndef ETLKIT_CLI_COLUMNS_H
#define ETLKIT_CLI_COLUMNS_H

#include <stdint.h>

/* An unsigned count in decimal into out[32] (fmt_u64, NUL-terminated); returns out. */
const char *col_u64(char out[32], uint64_t v);

#endif

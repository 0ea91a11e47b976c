/* diag.h - filling an etl_diag, for every stage that reports a problem. */
#ifndef ETLKIT_SRC_BASE_DIAG_H
#define ETLKIT_SRC_BASE_DIAG_H

#include "etlkit/base.h"

/* Fills a diag: printf-style message, status and file offset. */
void etl_diag_set(etl_diag *d, etl_status st, uint64_t file_offset, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

#endif

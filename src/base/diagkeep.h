/*
 * diagkeep.h - a reader's warnings as a report keeps them: the first ETL_DIAG_KEEP by
 * (file offset, text) kept to be printed in file order, the others counted, each
 * problem once however many walks meet it (the passes of a report walk the buffers
 * again): the same lines and the same count whatever order the threads met them in.
 * Memory: the kept texts and a hash of each distinct problem told.
 */
#ifndef ETLKIT_SRC_BASE_DIAGKEEP_H
#define ETLKIT_SRC_BASE_DIAGKEEP_H

#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/base.h"

#define ETL_DIAG_KEEP 20

typedef struct etl_diag_keep {
    char text[ETL_DIAG_KEEP][256];
    uint64_t off[ETL_DIAG_KEEP];
    unsigned n;          /* kept, by (offset, text) */
    uint64_t more;       /* told and not kept */
    etl_idmap seen;      /* every problem told: a hash of (offset, text) */
} etl_diag_keep;

/* Zero-filled is empty too. */
void etl_diag_keep_init(etl_diag_keep *k);
void etl_diag_keep_add(etl_diag_keep *k, const etl_diag *d);
/*
 * Adds what `from` was told to `into` (kept as etl_diag_keep_add keeps it; each problem
 * counted once, so one told to both counts once) and empties `from`.
 */
void etl_diag_keep_merge(etl_diag_keep *into, etl_diag_keep *from);
/* Forgets everything told: a run done again tells it again. */
void etl_diag_keep_clear(etl_diag_keep *k);
void etl_diag_keep_free(etl_diag_keep *k);

#endif

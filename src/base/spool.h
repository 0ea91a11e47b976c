/*
 * spool.h - append-only logs of byte records, read back in order, that spill to an
 * unlinked temporary file past a memory budget.
 *
 * For a pass that notes a few records (a trace's Thread and Process events, a few
 * percent of its bytes) to handle them later in another order: keeping copies costs
 * their own bytes, where reading them again from the trace would fault in every page
 * around them. Several streams share one budget and one file; each stream has one
 * writer at a time (any thread) and is read back, as often as wanted, once its writing
 * is done. A record read back is 4-byte aligned.
 */
#ifndef ETLKIT_SRC_BASE_SPOOL_H
#define ETLKIT_SRC_BASE_SPOOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "etlkit/base.h"

typedef struct etl_spool etl_spool;

typedef struct etl_spool_chunk {
    uint8_t *mem;        /* NULL once spilled */
    uint64_t file_off;   /* where it was spilled */
    uint32_t len;        /* bytes used */
    uint32_t size;       /* bytes allocated */
} etl_spool_chunk;

typedef struct etl_spool_stream {
    etl_spool *sp;
    etl_spool_chunk *chunks;  /* the last one is being written */
    size_t n, cap;
    /* reading */
    size_t rchunk, rpos;
    uint8_t *rbuf;            /* a spilled chunk read back */
    size_t rbuf_cap;
} etl_spool_stream;

/* A spool keeping at most budget bytes of its streams in memory (the chunks being written aside). */
etl_spool *etl_spool_open(size_t budget);
/* Closes the spill file, if any; the streams must be freed first. */
void etl_spool_close(etl_spool *sp);

void etl_spool_stream_init(etl_spool_stream *s, etl_spool *sp);
void etl_spool_stream_free(etl_spool_stream *s);
/* Appends one record of n bytes (n < 2^32). false when out of memory or the spill failed. */
bool etl_spool_append(etl_spool_stream *s, const void *p, size_t n);
/* The next record, in the order appended: NULL at the end, or when reading back failed (etl_spool_error). */
const uint8_t *etl_spool_next(etl_spool_stream *s, size_t *n);
/* Reads the stream again from its first record (once its writing is done). */
void etl_spool_rewind(etl_spool_stream *s);
/* The first failure of any stream of the spool, as an errno (ENOMEM included); 0 while none. */
int etl_spool_error(etl_spool *sp);
/*
 * That failure as a status and a diagnostic: ETL_OK while none, ETL_E_NOMEM, or ETL_E_IO
 * naming the temporary directory and the system's reason.
 */
etl_status etl_spool_diag(etl_spool *sp, etl_diag *d);

#endif

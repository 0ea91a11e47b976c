/*
 * seqtab.h - interned sequences of 64-bit words: the distinct stacks of a trace.
 * A sequence is stored once and named by a dense id (0, 1, ...); interning the
 * same words again gives the same id. Memory grows with the distinct sequences,
 * never with how often they occur. Open addressing over the sequences' hashes.
 */
#ifndef ETLKIT_STACKS_SEQTAB_H
#define ETLKIT_STACKS_SEQTAB_H

#include <stddef.h>
#include <stdint.h>
#include "etlkit/base.h"

#define ETL_SEQ_NONE UINT32_MAX

typedef struct etl_seqtab {
    uint64_t *words;   /* every sequence, one after another */
    size_t nwords, capwords;
    uint64_t *start;   /* by id: first word */
    uint32_t *len;     /* by id: words */
    uint64_t *hash;    /* by id */
    uint32_t count, cap;
    uint64_t *slots;   /* (hash's high half, id) by hash, all ones when free; nslots a power of two */
    size_t nslots;
} etl_seqtab;

void etl_seqtab_init(etl_seqtab *t);
void etl_seqtab_free(etl_seqtab *t);
/* The id of w[0..n): an existing one, or a new one. ETL_E_NOMEM, ETL_E_RANGE past 2^32 - 2 sequences. */
etl_status etl_seqtab_intern(etl_seqtab *t, const uint64_t *w, uint32_t n, uint32_t *id);
/*
 * The same with h = etl_seqtab_hash(w, n) computed before (by another thread), and
 * a hint that an intern of hash h comes soon (its slot is fetched meanwhile).
 */
uint64_t etl_seqtab_hash(const uint64_t *w, uint32_t n);
etl_status etl_seqtab_intern_hashed(etl_seqtab *t, const uint64_t *w, uint32_t n, uint64_t h, uint32_t *id);
void etl_seqtab_prefetch(const etl_seqtab *t, uint64_t h);

/* An id past the table: no words (*n 0; the pointer is the table's start, not to be read). */
static inline const uint64_t *etl_seqtab_get(const etl_seqtab *t, uint32_t id, uint32_t *n)
{
    if (id >= t->count) {
        *n = 0;
        return t->words;
    }
    *n = t->len[id];
    return t->words + t->start[id];
}

#endif

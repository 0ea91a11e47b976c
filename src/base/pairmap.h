/*
 * pairmap.h - (64-bit id, 32-bit id) pairs to 32-bit values: idmap.h's table for
 * keys one word does not hold (a thread row and an address in its image). The
 * pair lies in its slot beside the value, so a lookup touches one cache line and
 * never the caller's rows: the profile's counter looks up a pair per sample, in a
 * table of millions. Linear probing over the mixed pair; grows by doubling at half
 * load; no removal.
 */
#ifndef ETLKIT_PAIRMAP_H
#define ETLKIT_PAIRMAP_H

#include <stddef.h>
#include <stdint.h>
#include "base/idmap.h"

typedef struct etl_pairmap_slot {
    uint64_t a;
    uint32_t b;
    uint32_t val; /* ETL_IDMAP_EMPTY marks a free slot */
} etl_pairmap_slot;

typedef struct etl_pairmap {
    etl_pairmap_slot *slots;
    size_t cap;     /* 0 or a power of two */
    size_t count;
} etl_pairmap;

static inline size_t etl_pairmap_home(const etl_pairmap *m, uint64_t a, uint32_t b)
{
    return (size_t)etl_hash_mix64(a ^ etl_hash_mix64(b)) & (m->cap - 1);
}

void etl_pairmap_init(etl_pairmap *m);
void etl_pairmap_free(etl_pairmap *m);
/* The value stored for (a, b), or ETL_IDMAP_EMPTY. */
static inline uint32_t etl_pairmap_get(const etl_pairmap *m, uint64_t a, uint32_t b)
{
    if (m->count == 0) return ETL_IDMAP_EMPTY;
    for (size_t i = etl_pairmap_home(m, a, b);; i = (i + 1) & (m->cap - 1)) {
        const etl_pairmap_slot *s = &m->slots[i];
        if (s->val == ETL_IDMAP_EMPTY) return ETL_IDMAP_EMPTY;
        if (s->a == a && s->b == b) return s->val;
    }
}
/* Inserts or overwrites. ETL_E_INVALID_ARG for val == ETL_IDMAP_EMPTY; ETL_E_NOMEM. */
etl_status etl_pairmap_put(etl_pairmap *m, uint64_t a, uint32_t b, uint32_t val);

#endif

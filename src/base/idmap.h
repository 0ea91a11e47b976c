/*
 * idmap.h - the project's one hash table: 64-bit ids (thread ids, process ids,
 * hashed GUIDs, addresses) to 32-bit values (usually an index into an array the
 * caller owns). Open addressing with linear probing over a well-mixed hash
 * (the splitmix64 finalizer), so ids that differ only in high or low bits (TIDs
 * that are multiples of 65536, GUIDs that differ in one byte) spread evenly and
 * every operation is O(1) expected whatever the input. Deletion shifts entries
 * back, so no tombstones build up. Grows by doubling at half load.
 */
#ifndef ETLKIT_IDMAP_H
#define ETLKIT_IDMAP_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "etlkit/base.h"

#define ETL_IDMAP_EMPTY UINT32_MAX /* the one value that cannot be stored */

/*
 * A key beside its value: a probe touches one cache line, not two (the big maps miss the
 * cache); packed to 12 bytes, as the two arrays were, not padded to 16 (the profile's maps
 * hold millions). GCC and Clang (MinGW too) load the unaligned key as one move on x86 and ARM64.
 */
typedef struct __attribute__((packed)) etl_idmap_slot {
    uint64_t key;
    uint32_t val; /* ETL_IDMAP_EMPTY marks a free slot */
} etl_idmap_slot;

typedef struct etl_idmap {
    etl_idmap_slot *slots;
    size_t cap;     /* 0 or a power of two */
    size_t count;
} etl_idmap;

/* A 64-bit mixer with full avalanche (splitmix64's finalizer). */
static inline uint64_t etl_hash_mix64(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* Hashes n bytes into 64 bits (every byte counts). */
uint64_t etl_hash_bytes(const void *p, size_t n);

void etl_idmap_init(etl_idmap *m);
void etl_idmap_free(etl_idmap *m);
/* Empties the map, keeping its memory. */
void etl_idmap_clear(etl_idmap *m);
/* The value stored for key, or ETL_IDMAP_EMPTY. Inline: it is on every event's path. */
static inline uint32_t etl_idmap_get(const etl_idmap *m, uint64_t key)
{
    if (m->count == 0) return ETL_IDMAP_EMPTY;
    for (size_t i = (size_t)etl_hash_mix64(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const etl_idmap_slot *s = &m->slots[i];
        if (s->val == ETL_IDMAP_EMPTY) return ETL_IDMAP_EMPTY;
        if (s->key == key) return s->val;
    }
}
/* Inserts or overwrites. ETL_E_INVALID_ARG for val == ETL_IDMAP_EMPTY; ETL_E_NOMEM. */
etl_status etl_idmap_put(etl_idmap *m, uint64_t key, uint32_t val);
/* Removes key; returns whether it was there. */
bool etl_idmap_remove(etl_idmap *m, uint64_t key);

#endif

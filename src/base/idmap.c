/* idmap.c - see idmap.h. */
#include "base/idmap.h"

#include <stdlib.h>
#include <string.h>
#include "base/platform.h"

uint64_t etl_hash_bytes(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    while (n >= 8) {
        uint64_t w;
        memcpy(&w, b, 8);
        h = etl_hash_mix64(h ^ w);
        b += 8;
        n -= 8;
    }
    uint64_t w = 0;
    for (size_t i = 0; i < n; i++) w |= (uint64_t)b[i] << (8 * i);
    return etl_hash_mix64(h ^ w ^ 0x5bd1e995u);
}

void etl_idmap_init(etl_idmap *m)
{
    memset(m, 0, sizeof *m);
}

void etl_idmap_free(etl_idmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

void etl_idmap_clear(etl_idmap *m)
{
    for (size_t i = 0; i < m->cap; i++) m->slots[i].val = ETL_IDMAP_EMPTY;
    m->count = 0;
}

static inline size_t slot_of(const etl_idmap *m, uint64_t key)
{
    return (size_t)etl_hash_mix64(key) & (m->cap - 1);
}

static etl_status grow(etl_idmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    if (ncap > SIZE_MAX / sizeof(etl_idmap_slot)) return ETL_E_NOMEM;
    etl_idmap_slot *slots = malloc(ncap * sizeof *slots);
    if (!slots) return ETL_E_NOMEM;
    etl_mem_huge(slots, ncap * sizeof *slots); /* the big maps are probed at random */
    for (size_t i = 0; i < ncap; i++) slots[i].val = ETL_IDMAP_EMPTY;
    for (size_t i = 0; i < m->cap; i++) {
        if (m->slots[i].val == ETL_IDMAP_EMPTY) continue;
        size_t j = (size_t)etl_hash_mix64(m->slots[i].key) & (ncap - 1);
        while (slots[j].val != ETL_IDMAP_EMPTY) j = (j + 1) & (ncap - 1);
        slots[j] = m->slots[i];
    }
    free(m->slots);
    m->slots = slots;
    m->cap = ncap;
    return ETL_OK;
}

etl_status etl_idmap_put(etl_idmap *m, uint64_t key, uint32_t val)
{
    if (val == ETL_IDMAP_EMPTY) return ETL_E_INVALID_ARG;
    if ((m->count + 1) * 2 > m->cap) {
        etl_status st = grow(m);
        if (st != ETL_OK) return st;
    }
    size_t i = slot_of(m, key);
    while (m->slots[i].val != ETL_IDMAP_EMPTY) {
        if (m->slots[i].key == key) {
            m->slots[i].val = val;
            return ETL_OK;
        }
        i = (i + 1) & (m->cap - 1);
    }
    m->slots[i] = (etl_idmap_slot){key, val};
    m->count++;
    return ETL_OK;
}

bool etl_idmap_remove(etl_idmap *m, uint64_t key)
{
    if (m->count == 0) return false;
    size_t mask = m->cap - 1, i = slot_of(m, key);
    while (m->slots[i].val != ETL_IDMAP_EMPTY && m->slots[i].key != key) i = (i + 1) & mask;
    if (m->slots[i].val == ETL_IDMAP_EMPTY) return false;
    /* Backward-shift: pull later entries of the run into the hole when their home allows. */
    size_t hole = i;
    for (size_t j = (i + 1) & mask; m->slots[j].val != ETL_IDMAP_EMPTY; j = (j + 1) & mask) {
        size_t home = slot_of(m, m->slots[j].key);
        /* j may move to hole if home is not in the cyclic range (hole, j]. */
        bool in_range = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
        if (!in_range) {
            m->slots[hole] = m->slots[j];
            hole = j;
        }
    }
    m->slots[hole].val = ETL_IDMAP_EMPTY;
    m->count--;
    return true;
}

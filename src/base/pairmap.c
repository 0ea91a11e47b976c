/* pairmap.c - see pairmap.h. */
#include "base/pairmap.h"

#include <stdlib.h>
#include <string.h>
#include "base/platform.h"

void etl_pairmap_init(etl_pairmap *m)
{
    memset(m, 0, sizeof *m);
}

void etl_pairmap_free(etl_pairmap *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static etl_status grow(etl_pairmap *m)
{
    size_t ncap = m->cap ? m->cap * 2 : 64;
    if (ncap > SIZE_MAX / sizeof(etl_pairmap_slot)) return ETL_E_NOMEM;
    etl_pairmap_slot *old = m->slots, *slots = malloc(ncap * sizeof *slots);
    if (!slots) return ETL_E_NOMEM;
    etl_mem_huge(slots, ncap * sizeof *slots);
    for (size_t i = 0; i < ncap; i++) slots[i].val = ETL_IDMAP_EMPTY;
    size_t ocap = m->cap;
    m->slots = slots;
    m->cap = ncap;
    for (size_t i = 0; i < ocap; i++) {
        if (old[i].val == ETL_IDMAP_EMPTY) continue;
        size_t j = etl_pairmap_home(m, old[i].a, old[i].b);
        while (slots[j].val != ETL_IDMAP_EMPTY) j = (j + 1) & (ncap - 1);
        slots[j] = old[i];
    }
    free(old);
    return ETL_OK;
}

etl_status etl_pairmap_put(etl_pairmap *m, uint64_t a, uint32_t b, uint32_t val)
{
    if (val == ETL_IDMAP_EMPTY) return ETL_E_INVALID_ARG;
    if ((m->count + 1) * 2 > m->cap) {
        etl_status st = grow(m);
        if (st != ETL_OK) return st;
    }
    size_t i = etl_pairmap_home(m, a, b);
    for (; m->slots[i].val != ETL_IDMAP_EMPTY; i = (i + 1) & (m->cap - 1))
        if (m->slots[i].a == a && m->slots[i].b == b) {
            m->slots[i].val = val;
            return ETL_OK;
        }
    m->slots[i] = (etl_pairmap_slot){a, b, val};
    m->count++;
    return ETL_OK;
}

/* stack_keys.c - see stack_keys.h. */
#include "stacks/stack_keys.h"

#include <stdlib.h>
#include <string.h>
#include "base/sort.h"
#include "stacks/seqtab.h"

void etl_stack_keys_init(etl_stack_keys *k)
{
    memset(k, 0, sizeof *k);
    etl_idmap_init(&k->group);
}

void etl_stack_keys_free(etl_stack_keys *k)
{
    free(k->v);
    free(k->start);
    etl_idmap_free(&k->group);
    memset(k, 0, sizeof *k);
}

etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, uint32_t stack)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 1024;
        if (cap > UINT32_MAX) return ETL_E_RANGE;
        etl_stack_key_entry *v = realloc(k->v, cap * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = (etl_stack_key_entry){key, pos, stack};
    return ETL_OK;
}

static int cmp_pos(const void *a, const void *b)
{
    const etl_stack_key_entry *x = a, *y = b;
    return etl_stack_pos_less(x->pos, y->pos) ? -1 : etl_stack_pos_less(y->pos, x->pos);
}

/* A counting sort by key, stable: each key's definitions stay in stream order. */
etl_status etl_stack_keys_seal(etl_stack_keys *k)
{
    uint32_t *g = malloc((k->n ? k->n : 1) * sizeof *g);
    etl_stack_key_entry *out = malloc((k->n ? k->n : 1) * sizeof *out);
    etl_status st = g && out ? ETL_OK : ETL_E_NOMEM;
    uint32_t ng = 0;
    for (size_t i = 0; st == ETL_OK && i < k->n; i++) {
        uint32_t x = etl_idmap_get(&k->group, k->v[i].key);
        if (x == ETL_IDMAP_EMPTY) st = etl_idmap_put(&k->group, k->v[i].key, x = ng++);
        g[i] = x;
    }
    free(k->start);
    k->start = st == ETL_OK ? calloc((size_t)ng + 1, sizeof *k->start) : NULL;
    if (st == ETL_OK && !k->start) st = ETL_E_NOMEM;
    if (st != ETL_OK) {
        free(g);
        free(out);
        etl_idmap_clear(&k->group);
        k->ngroups = 0;
        return st;
    }
    for (size_t i = 0; i < k->n; i++) k->start[g[i] + 1]++;
    for (uint32_t x = 0; x < ng; x++) k->start[x + 1] += k->start[x];
    uint32_t *at = g; /* reused: each entry's place, from a running copy of the starts */
    uint32_t *next = malloc(((size_t)ng + 1) * sizeof *next);
    if (!next) {
        free(g);
        free(out);
        etl_idmap_clear(&k->group);
        k->ngroups = 0;
        return ETL_E_NOMEM;
    }
    memcpy(next, k->start, ((size_t)ng + 1) * sizeof *next);
    for (size_t i = 0; i < k->n; i++) out[next[at[i]]++] = k->v[i];
    free(next);
    /* Definitions given out of stream order (a walk of each CPU in turn) are put in order within their key. */
    for (uint32_t x = 0; x < ng; x++)
        for (uint32_t i = k->start[x] + 1; i < k->start[x + 1]; i++)
            if (etl_stack_pos_less(out[i].pos, out[i - 1].pos)) {
                etl_sort(out + k->start[x], k->start[x + 1] - k->start[x], sizeof *out, cmp_pos);
                break;
            }
    free(g);
    free(k->v);
    k->v = out;
    k->cap = k->n ? k->n : 1;
    k->ngroups = ng;
    return ETL_OK;
}

uint32_t etl_stack_keys_resolve(const etl_stack_keys *k, uint64_t key, etl_stack_pos pos)
{
    uint32_t x = k->ngroups ? etl_idmap_get(&k->group, key) : ETL_IDMAP_EMPTY;
    if (x == ETL_IDMAP_EMPTY) return ETL_SEQ_NONE;
    uint32_t lo = k->start[x], hi = k->start[x + 1];
    while (lo < hi) { /* the first definition at or after pos */
        uint32_t mid = lo + (hi - lo) / 2;
        if (etl_stack_pos_less(k->v[mid].pos, pos)) lo = mid + 1;
        else hi = mid;
    }
    return lo < k->start[x + 1] ? k->v[lo].stack : ETL_SEQ_NONE;
}

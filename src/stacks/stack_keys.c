/* stack_keys.c - see stack_keys.h. */
#include "stacks/stack_keys.h"

#include <stdlib.h>
#include <string.h>
#include "base/sort.h"
#include "stacks/seqtab.h"

void etl_stack_keys_init(etl_stack_keys *k)
{
    memset(k, 0, sizeof *k);
}

void etl_stack_keys_free(etl_stack_keys *k)
{
    free(k->v);
    memset(k, 0, sizeof *k);
}

etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, uint64_t pos, uint32_t stack)
{
    if (k->n == k->cap) {
        size_t cap = k->cap ? k->cap * 2 : 1024;
        etl_stack_key_entry *v = realloc(k->v, cap * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        k->v = v;
        k->cap = cap;
    }
    k->v[k->n++] = (etl_stack_key_entry){key, pos, stack};
    return ETL_OK;
}

static int cmp_entry(const void *a, const void *b)
{
    const etl_stack_key_entry *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->pos < y->pos ? -1 : x->pos > y->pos;
}

void etl_stack_keys_seal(etl_stack_keys *k)
{
    etl_sort(k->v, k->n, sizeof *k->v, cmp_entry);
}

uint32_t etl_stack_keys_resolve(const etl_stack_keys *k, uint64_t key, uint64_t pos)
{
    size_t lo = 0, hi = k->n;
    while (lo < hi) { /* the first entry >= (key, pos) */
        size_t mid = lo + (hi - lo) / 2;
        const etl_stack_key_entry *e = &k->v[mid];
        if (e->key < key || (e->key == key && e->pos < pos)) lo = mid + 1;
        else hi = mid;
    }
    return lo < k->n && k->v[lo].key == key ? k->v[lo].stack : ETL_SEQ_NONE;
}

/* stack_keys.c - see stack_keys.h. */
#include "stacks/stack_keys.h"

#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "base/sort.h"
#include "etlkit/kernel.h" /* ETL_STACK_MAX_FRAMES */
#include "stacks/seqtab.h"

/* The copies' chunks: a definition's frames (at most 192 x 8 bytes) never straddle two. */
#define CHUNK 1048576u

void etl_stack_keys_init(etl_stack_keys *k)
{
    memset(k, 0, sizeof *k);
    etl_idmap_init(&k->group);
}

void etl_stack_keys_init_last(etl_stack_keys *k)
{
    etl_stack_keys_init(k);
    k->last_only = true;
}

void etl_stack_keys_free(etl_stack_keys *k)
{
    free(k->v);
    free(k->start);
    for (size_t i = 0; i < k->nchunks; i++) free(k->chunks[i]);
    free(k->chunks);
    etl_idmap_free(&k->group);
    memset(k, 0, sizeof *k);
}

static etl_status grow_entries(etl_stack_keys *k, size_t need)
{
    if (need <= k->cap) return ETL_OK;
    size_t cap = k->cap ? k->cap : 1024;
    while (cap < need) cap *= 2;
    if (cap > (size_t)1 << 31) return ETL_E_RANGE; /* a definition's index keeps a bit free (attach.c) */
    etl_stack_key_entry *v = realloc(k->v, cap * sizeof *v);
    if (!v) return ETL_E_NOMEM;
    k->v = v;
    k->cap = cap;
    return ETL_OK;
}

/* Room for n bytes that never move, or NULL. */
static uint8_t *copy_room(etl_stack_keys *k, size_t n)
{
    if (!k->nchunks || CHUNK - k->used < n) {
        if (k->nchunks == k->capchunks) {
            size_t cap = k->capchunks ? 2 * k->capchunks : 16;
            uint8_t **c = realloc(k->chunks, cap * sizeof *c);
            if (!c) return NULL;
            k->chunks = c;
            k->capchunks = cap;
        }
        if (!(k->chunks[k->nchunks] = malloc(CHUNK))) return NULL;
        k->nchunks++;
        k->used = 0;
    }
    uint8_t *p = k->chunks[k->nchunks - 1] + k->used;
    k->used += n;
    return p;
}

/* last_only: key's latest definition is at least at pos. */
static etl_status define_last(etl_stack_keys *k, uint64_t key, etl_stack_pos pos)
{
    uint32_t x = etl_idmap_get(&k->group, key);
    if (x != ETL_IDMAP_EMPTY) {
        if (etl_stack_pos_less(k->v[x].pos, pos)) k->v[x].pos = pos;
        return ETL_OK;
    }
    etl_status st = grow_entries(k, k->n + 1);
    if (st == ETL_OK) st = etl_idmap_put(&k->group, key, (uint32_t)k->n);
    if (st == ETL_OK) k->v[k->n++] = (etl_stack_key_entry){key, pos, NULL, 0, 0};
    return st;
}

etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, const uint8_t *frames, uint32_t n,
                                 unsigned ptr_size, bool copy)
{
    if (n > ETL_STACK_MAX_FRAMES || (ptr_size != 4 && ptr_size != 8)) return ETL_E_RANGE;
    if (k->last_only) return define_last(k, key, pos);
    etl_status st = grow_entries(k, k->n + 1);
    if (st != ETL_OK) return st;
    if (copy && n) {
        uint8_t *p = copy_room(k, (size_t)n * ptr_size);
        if (!p) return ETL_E_NOMEM;
        memcpy(p, frames, (size_t)n * ptr_size);
        frames = p;
    }
    k->v[k->n++] = (etl_stack_key_entry){key, pos, frames, (uint16_t)n, (uint8_t)ptr_size};
    return ETL_OK;
}

etl_status etl_stack_keys_take(etl_stack_keys *to, etl_stack_keys *from)
{
    if (to->last_only) {
        for (size_t i = 0; i < from->n; i++) {
            etl_status st = define_last(to, from->v[i].key, from->v[i].pos);
            if (st != ETL_OK) return st;
        }
        from->n = 0;
        etl_idmap_clear(&from->group);
        return ETL_OK;
    }
    /* The copies first: a failure leaves from whole. */
    if (from->nchunks) {
        size_t need = to->nchunks + from->nchunks;
        if (need > to->capchunks) {
            uint8_t **c = realloc(to->chunks, need * sizeof *c);
            if (!c) return ETL_E_NOMEM;
            to->chunks = c;
            to->capchunks = need;
        }
        /* from's chunks go first: to's last chunk, with its free room, stays the last. */
        memmove(to->chunks + from->nchunks, to->chunks, to->nchunks * sizeof *to->chunks);
        memcpy(to->chunks, from->chunks, from->nchunks * sizeof *from->chunks);
        to->nchunks = need;
        if (need == from->nchunks) to->used = from->used;
        from->nchunks = 0;
    }
    if (!to->n) { /* the entries move whole: no copy */
        etl_stack_key_entry *v = to->v;
        size_t cap = to->cap;
        to->v = from->v, to->cap = from->cap, to->n = from->n;
        from->v = v, from->cap = cap, from->n = 0;
    } else if (from->n) {
        size_t need = to->n + from->n; /* exactly: the table grows no more before its seal */
        if (need > to->cap) {
            if (need > (size_t)1 << 31) return ETL_E_RANGE;
            etl_stack_key_entry *v = realloc(to->v, need * sizeof *v);
            if (!v) return ETL_E_NOMEM;
            to->v = v;
            to->cap = need;
        }
        memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
        to->n = need;
        from->n = 0;
    }
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
    if (k->last_only) { /* grouped as defined: one entry a key */
        k->ngroups = (uint32_t)k->n;
        return ETL_OK;
    }
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
    if (k->last_only) return etl_stack_pos_less(k->v[x].pos, pos) ? ETL_SEQ_NONE : x;
    uint32_t lo = k->start[x], hi = k->start[x + 1];
    while (lo < hi) { /* the first definition at or after pos */
        uint32_t mid = lo + (hi - lo) / 2;
        if (etl_stack_pos_less(k->v[mid].pos, pos)) lo = mid + 1;
        else hi = mid;
    }
    return lo < k->start[x + 1] ? lo : ETL_SEQ_NONE;
}

uint32_t etl_stack_keys_frames(const etl_stack_keys *k, uint32_t def, uint64_t *out)
{
    const etl_stack_key_entry *e = &k->v[def];
    if (k->last_only) return 0;
    etl_rd_ptrs(out, e->frames, e->ptr_size, e->n);
    return e->n;
}

/* stack_keys.c - see stack_keys.h. */
#include "stacks/stack_keys.h"

#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "base/grow.h"
#include "base/sort.h"
#include "etlkit/kernel.h" /* ETL_STACK_MAX_FRAMES */
#include "stacks/images.h"   /* etl_image_kernel_addr */
#include "stacks/seqtab.h"

/* The copies' chunks: a definition's frames (at most 192 x 8 bytes) never straddle two. */
#define CHUNK 1048576u

void etl_stack_keys_init(etl_stack_keys *k)
{
    memset(k, 0, sizeof *k);
    etl_idmap_init(&k->group);
}

void etl_stack_keys_init_no_frames(etl_stack_keys *k)
{
    etl_stack_keys_init(k);
    k->no_frames = true;
}

void etl_stack_keys_free(etl_stack_keys *k)
{
    free(k->v);
    free(k->start);
    free(k->near);
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

etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, const uint8_t *frames, uint32_t n,
                                 unsigned ptr_size, bool copy)
{
    if (n > ETL_STACK_MAX_FRAMES || (ptr_size != 4 && ptr_size != 8)) return ETL_E_RANGE;
    etl_status st = grow_entries(k, k->n + 1);
    if (st != ETL_OK) return st;
    unsigned part = !n ? ETL_STACK_PART_ANY
                    : etl_image_kernel_addr(ptr_size, etl_stack_frame(frames, ptr_size, 0)) ? ETL_STACK_PART_KERNEL
                                                                                             : ETL_STACK_PART_USER;
    if (k->no_frames) n = 0, frames = NULL;
    if (copy && n) {
        uint8_t *p = copy_room(k, (size_t)n * ptr_size);
        if (!p) return ETL_E_NOMEM;
        memcpy(p, frames, (size_t)n * ptr_size);
        frames = p;
    }
    k->v[k->n++] = (etl_stack_key_entry){key, pos, frames, (uint16_t)n, (uint8_t)ptr_size, (uint8_t)part};
    return ETL_OK;
}

etl_status etl_stack_keys_take(etl_stack_keys *to, etl_stack_keys *from)
{
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

/* A group's entries by position: (position, entry) pairs sorted. */
typedef struct pos_ix {
    etl_stack_pos pos;
    uint32_t i;
} pos_ix;

static int cmp_pos(const void *a, const void *b)
{
    const pos_ix *x = a, *y = b;
    return etl_stack_pos_less(x->pos, y->pos) ? -1 : etl_stack_pos_less(y->pos, x->pos);
}

/*
 * A counting sort by key, stable: each key's definitions stay in the order given, then
 * sorted by position where given out of order (a walk of each CPU in turn). The sort
 * orders the entries' indexes (4 bytes each), then moves the entries in place.
 */
etl_status etl_stack_keys_seal(etl_stack_keys *k)
{
    uint32_t *g = malloc((k->n ? k->n : 1) * sizeof *g), *order = malloc((k->n ? k->n : 1) * sizeof *order);
    pos_ix *t = NULL;
    size_t capt = 0;
    uint32_t ng = 0;
    free(k->start);
    free(k->near);
    k->start = k->near = NULL;
    etl_status st = g && order ? ETL_OK : ETL_E_NOMEM;
    for (size_t i = 0; st == ETL_OK && i < k->n; i++) {
        uint32_t x = etl_idmap_get(&k->group, k->v[i].key);
        if (x == ETL_IDMAP_EMPTY) st = etl_idmap_put(&k->group, k->v[i].key, x = ng++);
        g[i] = x;
    }
    if (st == ETL_OK) {
        k->start = calloc((size_t)ng + 1, sizeof *k->start);
        k->near = malloc(((size_t)ng + 1) * sizeof *k->near);
        if (!k->start || !k->near) st = ETL_E_NOMEM;
    }
    if (st == ETL_OK) {
        for (size_t i = 0; i < k->n; i++) k->start[g[i] + 1]++;
        for (uint32_t x = 0; x < ng; x++) k->start[x + 1] += k->start[x];
        memcpy(k->near, k->start, ((size_t)ng + 1) * sizeof *k->near); /* each group's next place */
        for (size_t i = 0; i < k->n; i++) order[k->near[g[i]]++] = (uint32_t)i;
    }
    for (uint32_t x = 0; st == ETL_OK && x < ng; x++) {
        uint32_t *o = order + k->start[x], m = k->start[x + 1] - k->start[x], i = 1;
        while (i < m && !etl_stack_pos_less(k->v[o[i]].pos, k->v[o[i - 1]].pos)) i++;
        if (i == m) continue; /* in order */
        pos_ix *tt = etl_grow(t, &capt, m, sizeof *t);
        if (!tt) {
            st = ETL_E_NOMEM;
            break;
        }
        t = tt;
        for (i = 0; i < m; i++) t[i] = (pos_ix){k->v[o[i]].pos, o[i]};
        etl_sort(t, m, sizeof *t, cmp_pos);
        for (i = 0; i < m; i++) o[i] = t[i].i;
    }
    /* The entries moved into that order, in place: a cycle at a time, each place marked done. */
    for (uint32_t j = 0; st == ETL_OK && j < k->n; j++) {
        if (order[j] == j) continue;
        etl_stack_key_entry held = k->v[j];
        uint32_t at = j;
        for (uint32_t from; (from = order[at]) != j; at = from) {
            order[at] = at;
            k->v[at] = k->v[from];
        }
        order[at] = at;
        k->v[at] = held;
    }
    free(g);
    free(order);
    free(t);
    if (st != ETL_OK) {
        free(k->start);
        free(k->near);
        k->start = k->near = NULL;
        etl_idmap_clear(&k->group);
        k->ngroups = 0;
        return st;
    }
    memcpy(k->near, k->start, ((size_t)ng + 1) * sizeof *k->near); /* no answer yet: each group's first */
    k->ngroups = ng;
    return ETL_OK;
}

uint32_t etl_stack_keys_resolve(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, unsigned part)
{
    uint32_t x = k->ngroups ? etl_idmap_get(&k->group, key) : ETL_IDMAP_EMPTY;
    if (x == ETL_IDMAP_EMPTY) return ETL_SEQ_NONE;
    uint32_t lo = k->start[x], hi = k->start[x + 1], at = k->near[x];
    if (at > lo && !etl_stack_pos_less(k->v[at - 1].pos, pos)) {
        hi = at; /* at or before the last answer */
    } else { /* at or after it: steps of 1, 2, 4... bound the search (the answer is lo or after) */
        lo = at;
        for (uint32_t step = 1;; step *= 2) {
            if (lo == hi || !etl_stack_pos_less(k->v[lo].pos, pos)) {
                hi = lo;
                break;
            }
            uint32_t next = hi - lo > step ? lo + step : hi;
            if (next == hi || !etl_stack_pos_less(k->v[next].pos, pos)) {
                lo++, hi = next; /* in (lo, next] */
                break;
            }
            lo = next + 1;
        }
    }
    while (lo < hi) { /* the first definition at or after pos */
        uint32_t mid = lo + (hi - lo) / 2;
        if (etl_stack_pos_less(k->v[mid].pos, pos)) lo = mid + 1;
        else hi = mid;
    }
    k->near[x] = lo;
    if (lo == k->start[x + 1]) return ETL_SEQ_NONE;
    return k->v[lo].part == ETL_STACK_PART_ANY || k->v[lo].part == part ? lo : ETL_SEQ_NONE;
}

uint32_t etl_stack_keys_frames(const etl_stack_keys *k, uint32_t def, uint64_t *out)
{
    const etl_stack_key_entry *e = &k->v[def];
    etl_rd_ptrs(out, e->frames, e->ptr_size, e->n);
    return e->n;
}

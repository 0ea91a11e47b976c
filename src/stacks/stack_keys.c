/* stack_keys.c - see stack_keys.h. */
#include "stacks/stack_keys.h"

#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
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
    free(k->front);
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

static int cmp_entry_pos(const void *a, const void *b)
{
    const etl_stack_key_entry *x = a, *y = b;
    return etl_stack_pos_less(x->pos, y->pos) ? -1 : etl_stack_pos_less(y->pos, x->pos);
}

/* Group x's front from its near (a group has at least one definition). */
static void set_front(etl_stack_keys *k, uint32_t x)
{
    uint32_t at = k->near[x];
    etl_stack_key_front *f = &k->front[x];
    if (at > k->start[x]) f->before = k->v[at - 1].pos;
    if (at < k->start[x + 1]) f->at = k->v[at].pos, f->part = k->v[at].part;
    /* The key's next definition is where its next search goes, long after: fetched now, it waits in the
     * cache (a line per key) rather than missing then, once a reference on a trace that evicts often. */
    if (at + 1 < k->start[x + 1]) __builtin_prefetch(&k->v[at + 1]);
}

/*
 * A counting sort by key, stable: each key's definitions stay in the order given, then
 * sorted by position where given out of order (a walk of each CPU in turn). Into a second
 * array: moving the entries in place chases cycles, one cache miss after another (14 % of
 * a profile's time on 2.8 million definitions, against 4 %), for twice the table's memory
 * while it is sealed.
 */
etl_status etl_stack_keys_seal(etl_stack_keys *k)
{
    uint32_t *g = malloc((k->n ? k->n : 1) * sizeof *g);
    etl_stack_key_entry *out = malloc((k->n ? k->n : 1) * sizeof *out);
    uint32_t ng = 0;
    free(k->start);
    free(k->near);
    free(k->front);
    k->start = k->near = NULL;
    k->front = NULL;
    etl_status st = g && out ? ETL_OK : ETL_E_NOMEM;
    for (size_t i = 0; st == ETL_OK && i < k->n; i++) {
        uint32_t x = etl_idmap_get(&k->group, k->v[i].key);
        if (x == ETL_IDMAP_EMPTY) st = etl_idmap_put(&k->group, k->v[i].key, x = ng++);
        g[i] = x;
    }
    if (st == ETL_OK) {
        k->start = calloc((size_t)ng + 1, sizeof *k->start);
        k->near = malloc(((size_t)ng + 1) * sizeof *k->near);
        k->front = malloc(((size_t)ng + 1) * sizeof *k->front);
        if (!k->start || !k->near || !k->front) st = ETL_E_NOMEM;
    }
    if (st == ETL_OK) {
        for (size_t i = 0; i < k->n; i++) k->start[g[i] + 1]++;
        for (uint32_t x = 0; x < ng; x++) k->start[x + 1] += k->start[x];
        memcpy(k->near, k->start, ((size_t)ng + 1) * sizeof *k->near); /* each group's next place */
        for (size_t i = 0; i < k->n; i++) out[k->near[g[i]]++] = k->v[i];
        free(k->v);
        k->v = out;
        out = NULL;
        k->cap = k->n ? k->n : 1;
    }
    /* Then each group, now contiguous, put in stream order where it is not. */
    for (uint32_t x = 0; st == ETL_OK && x < ng; x++) {
        etl_stack_key_entry *e = k->v + k->start[x];
        uint32_t m = k->start[x + 1] - k->start[x], i = 1;
        while (i < m && !etl_stack_pos_less(e[i].pos, e[i - 1].pos)) i++;
        if (i < m) etl_sort(e, m, sizeof *e, cmp_entry_pos);
    }
    free(g);
    free(out);
    if (st != ETL_OK) {
        free(k->start);
        free(k->near);
        free(k->front);
        k->start = k->near = NULL;
        k->front = NULL;
        etl_idmap_clear(&k->group);
        k->ngroups = 0;
        return st;
    }
    memcpy(k->near, k->start, ((size_t)ng + 1) * sizeof *k->near); /* no answer yet: each group's first */
    k->ngroups = ng;
    for (uint32_t x = 0; x < ng; x++) set_front(k, x);
    return ETL_OK;
}

uint32_t etl_stack_keys_resolve(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, unsigned part)
{
    uint32_t x = k->ngroups ? etl_idmap_get(&k->group, key) : ETL_IDMAP_EMPTY;
    if (x == ETL_IDMAP_EMPTY) return ETL_SEQ_NONE;
    uint32_t lo = k->start[x], hi = k->start[x + 1], at = k->near[x];
    const etl_stack_key_front *f = &k->front[x];
    if (at > lo && !etl_stack_pos_less(f->before, pos)) {
        hi = at; /* before the last answer */
    } else if (at == hi || !etl_stack_pos_less(f->at, pos)) { /* the last answer again: no entry read */
        if (at == hi) return ETL_SEQ_NONE;
        return f->part == ETL_STACK_PART_ANY || f->part == part ? at : ETL_SEQ_NONE;
    } else { /* after it: steps of 1, 2, 4... bound the search (the answer is lo or after) */
        lo = at + 1;
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
    set_front(k, x);
    if (lo == k->start[x + 1]) return ETL_SEQ_NONE;
    return k->v[lo].part == ETL_STACK_PART_ANY || k->v[lo].part == part ? lo : ETL_SEQ_NONE;
}

uint32_t etl_stack_keys_frames(const etl_stack_keys *k, uint32_t def, uint64_t *out)
{
    const etl_stack_key_entry *e = &k->v[def];
    etl_rd_ptrs(out, e->frames, e->ptr_size, e->n);
    return e->n;
}

/* stack_keys.c - see stack_keys.h. */
#include "stacks/stack_keys.h"

#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "base/mapfile.h"
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
    free(k->key);
    free(k->fr);
    free(k->start);
    free(k->near);
    free(k->front);
    for (size_t i = 0; i < k->nchunks; i++) free(k->chunks[i]);
    free(k->chunks);
    etl_idmap_free(&k->group);
    memset(k, 0, sizeof *k);
}

/*
 * A sealed table's keys, from its groups, when it is defined to or sealed again: a seal drops them (its
 * groups say them). A table is sealed when it has entries and no keys: a seal that fails drops nothing.
 */
static etl_status keys_back(etl_stack_keys *k)
{
    if (k->key || !k->n) return ETL_OK;
    uint64_t *key = malloc(k->n * sizeof *key);
    if (!key) return ETL_E_NOMEM;
    for (size_t s = 0; s < k->group.cap; s++) {
        const etl_idmap_slot *e = &k->group.slots[s];
        if (e->val == ETL_IDMAP_EMPTY) continue;
        for (uint32_t i = k->start[e->val]; i < k->start[e->val + 1]; i++) key[i] = e->key;
    }
    k->key = key;
    return ETL_OK;
}

/* The entries' arrays to cap (exactly: a take's cap, or a step of doubling). */
static etl_status resize(etl_stack_keys *k, size_t cap)
{
    if (cap > (size_t)1 << 31) return ETL_E_RANGE; /* a definition's index keeps a bit free (attach.c) */
    etl_status st = keys_back(k);
    if (st != ETL_OK) return st;
    etl_stack_key_entry *v = realloc(k->v, cap * sizeof *v);
    if (v) k->v = v;
    uint64_t *key = v ? realloc(k->key, cap * sizeof *key) : NULL;
    if (key) k->key = key;
    etl_stack_key_frames *fr = key && !k->no_frames ? realloc(k->fr, cap * sizeof *fr) : NULL;
    if (fr) k->fr = fr;
    if (!v || !key || (!k->no_frames && !fr)) return ETL_E_NOMEM; /* what moved is kept: cap still holds */
    k->cap = cap;
    return ETL_OK;
}

static etl_status grow_entries(etl_stack_keys *k, size_t need)
{
    if (need <= k->cap) return ETL_OK;
    size_t cap = k->cap ? k->cap : 1024;
    while (cap < need) cap *= 2;
    return resize(k, cap);
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
    uint64_t leaf = n ? etl_stack_frame(frames, ptr_size, 0) : 0; /* where the stack begins */
    unsigned part = !n                                      ? ETL_STACK_PART_ANY
                    : etl_image_kernel_addr(ptr_size, leaf) ? ETL_STACK_PART_KERNEL
                                                            : ETL_STACK_PART_USER;
    if (k->no_frames) n = 0, frames = NULL;
    if (copy && n) {
        uint8_t *p = copy_room(k, (size_t)n * ptr_size);
        if (!p) return ETL_E_NOMEM;
        memcpy(p, frames, (size_t)n * ptr_size);
        frames = p;
    }
    k->v[k->n] = (etl_stack_key_entry){pos.ts, pos.cpu, pos.buffer, pos.offset, (uint8_t)part, leaf};
    k->key[k->n] = key;
    if (k->fr) k->fr[k->n] = (etl_stack_key_frames){frames, (uint16_t)n, (uint8_t)ptr_size};
    k->n++;
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
    if (!to->n) { /* the entries move whole: no copy (a walker's table is as its caller's: frames or none) */
        etl_stack_keys t = *to;
        to->v = from->v, to->key = from->key, to->fr = from->fr, to->cap = from->cap, to->n = from->n;
        from->v = t.v, from->key = t.key, from->fr = t.fr, from->cap = t.cap, from->n = 0;
    } else if (from->n) {
        size_t need = to->n + from->n; /* exactly: the table grows no more before its seal */
        etl_status st = need > to->cap ? resize(to, need) : ETL_OK;
        if (st != ETL_OK) return st;
        memcpy(to->v + to->n, from->v, from->n * sizeof *from->v);
        memcpy(to->key + to->n, from->key, from->n * sizeof *from->key);
        if (to->fr) memcpy(to->fr + to->n, from->fr, from->n * sizeof *from->fr);
        to->n = need;
        from->n = 0;
    }
    return ETL_OK;
}

static inline etl_stack_pos pos_of(const etl_stack_key_entry *e)
{
    return (etl_stack_pos){e->ts, e->cpu, e->buffer, e->offset};
}

/* A definition's entry with its frames, for the sort of a group out of stream order. */
typedef struct entry_fr {
    etl_stack_key_entry e;
    etl_stack_key_frames f;
} entry_fr;

static int cmp_entry_pos(const void *a, const void *b)
{
    const etl_stack_key_entry *x = a, *y = b;
    return etl_stack_pos_less(pos_of(x), pos_of(y)) ? -1 : etl_stack_pos_less(pos_of(y), pos_of(x));
}

/* Group x's front from its near (a group has at least one definition). */
static void set_front(etl_stack_keys *k, uint32_t x)
{
    uint32_t at = k->near[x];
    etl_stack_key_front *f = &k->front[x];
    if (at > k->start[x]) f->before = pos_of(&k->v[at - 1]);
    if (at < k->start[x + 1]) f->at = pos_of(&k->v[at]), f->part = k->v[at].part;
    /* The key's next definition is where its next search goes, long after: fetched now, it waits in the
     * cache (a line per key) rather than missing then, once a reference on a trace that evicts often. */
    if (at + 1 < k->start[x + 1]) __builtin_prefetch(&k->v[at + 1]);
}

/* Whether group x's entries, contiguous, are in stream order. */
static bool group_in_order(const etl_stack_key_entry *v, const uint32_t *start, uint32_t x)
{
    for (uint32_t i = start[x] + 1; i < start[x + 1]; i++)
        if (etl_stack_pos_less(pos_of(&v[i]), pos_of(&v[i - 1]))) return false;
    return true;
}

/* Group x put in stream order (with its frames: tmp holds the group's entries while they sort). */
static void order_group(etl_stack_keys *k, uint32_t x, entry_fr *tmp)
{
    etl_stack_key_entry *e = k->v + k->start[x];
    uint32_t m = k->start[x + 1] - k->start[x];
    if (!k->fr) {
        etl_sort(e, m, sizeof *e, cmp_entry_pos);
        return;
    }
    etl_stack_key_frames *f = k->fr + k->start[x];
    for (uint32_t i = 0; i < m; i++) tmp[i] = (entry_fr){e[i], f[i]};
    etl_sort(tmp, m, sizeof *tmp, cmp_entry_pos); /* the entry leads: compared as one */
    for (uint32_t i = 0; i < m; i++) e[i] = tmp[i].e, f[i] = tmp[i].f;
}

/*
 * A counting sort by key, stable: each key's definitions stay in the order given, then
 * sorted by position where given out of order (a walk of each CPU in turn). Into second
 * arrays: moving the entries in place chases cycles, one cache miss after another (14 % of
 * a profile's time on 2.8 million definitions, against 4 %). The keys go once grouped: an
 * entry is its position and part (24 bytes), and its frames' place (16) in a full table.
 * Every allocation comes first: a seal that fails leaves the table as it was, unsealed.
 */
etl_status etl_stack_keys_seal(etl_stack_keys *k)
{
    etl_status st = keys_back(k); /* sealed before */
    if (st != ETL_OK) return st;
    size_t n1 = k->n ? k->n : 1;
    uint32_t *g = malloc(n1 * sizeof *g), *start = NULL, *near = NULL, ng = 0;
    etl_stack_key_front *front = NULL;
    etl_stack_key_entry *out = malloc(n1 * sizeof *out);
    etl_stack_key_frames *fout = k->fr ? malloc(n1 * sizeof *fout) : NULL;
    entry_fr *tmp = NULL;
    /* Groups afresh; none answers until the seal is done. */
    etl_idmap_clear(&k->group);
    k->ngroups = 0;
    if (!g || !out || (k->fr && !fout)) st = ETL_E_NOMEM;
    for (size_t i = 0; st == ETL_OK && i < k->n; i++) {
        uint32_t x = etl_idmap_get(&k->group, k->key[i]);
        if (x == ETL_IDMAP_EMPTY) st = etl_idmap_put(&k->group, k->key[i], x = ng++);
        g[i] = x;
    }
    if (st == ETL_OK) {
        start = calloc((size_t)ng + 1, sizeof *start);
        near = malloc(((size_t)ng + 1) * sizeof *near);
        front = malloc(((size_t)ng + 1) * sizeof *front);
        if (!start || !near || !front) st = ETL_E_NOMEM;
    }
    size_t most = 0; /* the largest group out of order (full tables sort it in tmp) */
    if (st == ETL_OK) {
        for (size_t i = 0; i < k->n; i++) start[g[i] + 1]++;
        for (uint32_t x = 0; x < ng; x++) start[x + 1] += start[x];
        memcpy(near, start, ((size_t)ng + 1) * sizeof *near); /* each group's next place */
        for (size_t i = 0; i < k->n; i++) {
            uint32_t to = near[g[i]]++;
            out[to] = k->v[i];
            if (fout) fout[to] = k->fr[i];
        }
        for (uint32_t x = 0; fout && x < ng; x++)
            if (start[x + 1] - start[x] > most && !group_in_order(out, start, x)) most = start[x + 1] - start[x];
        if (most && !(tmp = malloc(most * sizeof *tmp))) st = ETL_E_NOMEM;
    }
    free(g);
    if (st != ETL_OK) {
        free(start), free(near), free(front), free(out), free(fout);
        etl_idmap_clear(&k->group);
        return st;
    }
    free(k->v), free(k->fr), free(k->key), free(k->start), free(k->near), free(k->front);
    k->v = out, k->fr = fout, k->key = NULL, k->start = start, k->near = near, k->front = front;
    k->cap = k->n; /* a definition after the seal grows every array */
    for (uint32_t x = 0; x < ng; x++)
        if (!group_in_order(k->v, k->start, x)) order_group(k, x, tmp);
    free(tmp);
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
            if (lo == hi || !etl_stack_pos_less(pos_of(&k->v[lo]), pos)) {
                hi = lo;
                break;
            }
            uint32_t next = hi - lo > step ? lo + step : hi;
            if (next == hi || !etl_stack_pos_less(pos_of(&k->v[next]), pos)) {
                lo++, hi = next; /* in (lo, next] */
                break;
            }
            lo = next + 1;
        }
    }
    while (lo < hi) { /* the first definition at or after pos */
        uint32_t mid = lo + (hi - lo) / 2;
        if (etl_stack_pos_less(pos_of(&k->v[mid]), pos)) lo = mid + 1;
        else hi = mid;
    }
    k->near[x] = lo;
    set_front(k, x);
    if (lo == k->start[x + 1]) return ETL_SEQ_NONE;
    return k->v[lo].part == ETL_STACK_PART_ANY || k->v[lo].part == part ? lo : ETL_SEQ_NONE;
}

uint32_t etl_stack_keys_frames(const etl_stack_keys *k, uint32_t def, uint64_t *out)
{
    if (!k->fr) return 0;
    const etl_stack_key_frames *f = &k->fr[def];
    etl_rd_ptrs(out, f->frames, f->ptr_size, f->n);
    return f->n;
}

uint32_t etl_stack_keys_frames_pread(const etl_stack_keys *k, uint32_t def, uint64_t *out, const etl_map *m)
{
    if (!k->fr) return 0;
    const etl_stack_key_frames *f = &k->fr[def];
    const uint8_t *base = m ? m->mapped : NULL;
    size_t bytes = (size_t)f->n * f->ptr_size;
    uint8_t buf[ETL_STACK_MAX_FRAMES * 8];
    if (base && bytes && bytes <= sizeof buf && f->frames >= base && (size_t)(f->frames - base) <= m->mapped_size - bytes &&
        etl_map_pread(m, (uint64_t)(f->frames - base), buf, bytes)) {
        etl_rd_ptrs(out, buf, f->ptr_size, f->n);
        return f->n;
    }
    return etl_stack_keys_frames(k, def, out); /* a copy, a read() file, or pread failed: the bytes in memory */
}

bool etl_stack_keys_leaf(const etl_stack_keys *k, uint32_t def, uint64_t *leaf)
{
    *leaf = k->v[def].leaf;
    return k->v[def].part != ETL_STACK_PART_ANY;
}

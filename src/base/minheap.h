/*
 * minheap.h - an indexed binary min-heap: n items, each with a key that can change
 * at any time, the lowest found at once. The walks over CPUs keep their cursors'
 * file offsets in one, so that finding the next buffer, or the offset below which
 * every cursor is done, costs log(CPUs) and not a scan of every CPU per buffer (a
 * file can claim 65,536 of them).
 */
#ifndef ETLKIT_BASE_MINHEAP_H
#define ETLKIT_BASE_MINHEAP_H
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct etl_minheap {
    unsigned n;
    unsigned *h;   /* h[0] the item with the lowest key (ties: the lowest index) */
    unsigned *pos; /* pos[i]: where item i is in h */
    uint64_t *key;
} etl_minheap;

/* n items, every key UINT64_MAX. Returns false when out of memory. */
static inline bool etl_minheap_init(etl_minheap *m, unsigned n)
{
    m->n = n;
    m->h = malloc((n ? n : 1) * sizeof *m->h);
    m->pos = malloc((n ? n : 1) * sizeof *m->pos);
    m->key = malloc((n ? n : 1) * sizeof *m->key);
    for (unsigned i = 0; m->h && m->pos && m->key && i < n; i++) {
        m->h[i] = m->pos[i] = i;
        m->key[i] = UINT64_MAX;
    }
    return m->h && m->pos && m->key;
}

static inline void etl_minheap_free(etl_minheap *m)
{
    free(m->h);
    free(m->pos);
    free(m->key);
    m->h = m->pos = NULL;
    m->key = NULL;
    m->n = 0;
}

static inline bool etl_minheap_less(const etl_minheap *m, unsigned a, unsigned b)
{
    return m->key[a] < m->key[b] || (m->key[a] == m->key[b] && a < b);
}

static inline void etl_minheap_place(etl_minheap *m, unsigned at, unsigned i)
{
    m->h[at] = i;
    m->pos[i] = at;
}

/* Item i's key becomes key. */
static inline void etl_minheap_set(etl_minheap *m, unsigned i, uint64_t key)
{
    m->key[i] = key;
    unsigned at = m->pos[i];
    while (at > 0 && etl_minheap_less(m, i, m->h[(at - 1) / 2])) {
        etl_minheap_place(m, at, m->h[(at - 1) / 2]);
        at = (at - 1) / 2;
    }
    for (;;) {
        unsigned c = 2 * at + 1;
        if (c >= m->n) break;
        if (c + 1 < m->n && etl_minheap_less(m, m->h[c + 1], m->h[c])) c++;
        if (!etl_minheap_less(m, m->h[c], i)) break;
        etl_minheap_place(m, at, m->h[c]);
        at = c;
    }
    etl_minheap_place(m, at, i);
}

/* The item with the lowest key (n > 0), and that key. */
static inline unsigned etl_minheap_top(const etl_minheap *m) { return m->h[0]; }
static inline uint64_t etl_minheap_min(const etl_minheap *m) { return m->n ? m->key[m->h[0]] : UINT64_MAX; }

#endif

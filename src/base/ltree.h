/*
 * ltree.h - a tournament (loser) tree: the k-way merge of the time-order iterator
 * and of the scheduler source.
 *
 * Each leaf holds a key pair (key, tie), compared as one 128-bit number; a leaf
 * that is done has tie UINT64_MAX and loses to every other. Replacing the winner
 * costs one comparison per level, half what a binary heap's sift-down costs, and
 * the keys sit in one small array, not in the streams' head records.
 */
#ifndef ETLKIT_BASE_LTREE_H
#define ETLKIT_BASE_LTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct etl_ltree_key {
    uint64_t key, tie;
} etl_ltree_key;

typedef struct etl_ltree {
    unsigned n;
    unsigned *loser;     /* loser[i] for internal nodes 1..n-1; loser[0] = the winner */
    etl_ltree_key *leaf; /* n leaves */
} etl_ltree;

#define ETL_LTREE_DONE UINT64_MAX

/* One 128-bit comparison: no branch to mispredict, the streams interleave at random. */
static inline bool etl_ltree_less(const etl_ltree *t, unsigned a, unsigned b)
{
    const etl_ltree_key *x = &t->leaf[a], *y = &t->leaf[b];
    unsigned __int128 u = (unsigned __int128)x->key << 64 | x->tie, v = (unsigned __int128)y->key << 64 | y->tie;
    return u < v;
}

/* n leaves, all done. Returns false when out of memory. */
static inline bool etl_ltree_init(etl_ltree *t, unsigned n)
{
    t->n = n;
    t->loser = calloc(n ? n : 1, sizeof *t->loser);
    t->leaf = calloc(n ? n : 1, sizeof *t->leaf);
    for (unsigned i = 0; t->leaf && i < n; i++) t->leaf[i] = (etl_ltree_key){UINT64_MAX, ETL_LTREE_DONE};
    return t->loser && t->leaf;
}

static inline void etl_ltree_free(etl_ltree *t)
{
    free(t->loser);
    free(t->leaf);
    t->loser = NULL;
    t->leaf = NULL;
}

/* Plays every match once the leaves are set. Returns false when out of memory. */
static inline bool etl_ltree_build(etl_ltree *t)
{
    unsigned k = t->n;
    if (k == 0) return true;
    unsigned *win = malloc(2 * (size_t)k * sizeof *win);
    if (!win) return false;
    for (unsigned i = 0; i < k; i++) win[k + i] = i;
    for (unsigned n = k - 1; n >= 1; n--) {
        unsigned a = win[2 * n], b = win[2 * n + 1];
        bool al = etl_ltree_less(t, a, b);
        win[n] = al ? a : b;
        t->loser[n] = al ? b : a;
    }
    t->loser[0] = k > 1 ? win[1] : 0;
    free(win);
    return true;
}

/*
 * Leaf i's key changed (it was the winner): replays its matches up to the root. The
 * winner's key rides along in registers, so each level waits on a compare, not on a
 * load of the leaf the last compare chose; the losers' leaves load ahead.
 */
static inline void etl_ltree_replay(etl_ltree *t, unsigned i)
{
    unsigned w = i;
    const etl_ltree_key *leaf = t->leaf;
    unsigned __int128 wk = (unsigned __int128)leaf[i].key << 64 | leaf[i].tie;
    for (unsigned n = (t->n + i) / 2; n >= 1; n /= 2) {
        unsigned l = t->loser[n];
        unsigned __int128 lk = (unsigned __int128)leaf[l].key << 64 | leaf[l].tie;
        /* Selected by mask: compilers turn the conditional form into a branch, mispredicted half the time. */
        bool lw = lk < wk;
        unsigned m = 0u - (unsigned)lw;
        t->loser[n] = (w & m) | (l & ~m);
        w = (l & m) | (w & ~m);
        wk = lw ? lk : wk;
    }
    t->loser[0] = w;
}

/* The winning leaf, or -1 when every leaf is done. */
static inline int etl_ltree_top(const etl_ltree *t)
{
    if (t->n == 0) return -1;
    unsigned w = t->loser[0];
    return t->leaf[w].tie == ETL_LTREE_DONE ? -1 : (int)w;
}

#endif

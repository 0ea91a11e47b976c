/* seqtab.c - see seqtab.h. */
#include "stacks/seqtab.h"

#include <stdlib.h>
#include <string.h>
#include "base/idmap.h"

void etl_seqtab_init(etl_seqtab *t)
{
    memset(t, 0, sizeof *t);
}

void etl_seqtab_free(etl_seqtab *t)
{
    free(t->words);
    free(t->start);
    free(t->len);
    free(t->hash);
    free(t->slots);
    memset(t, 0, sizeof *t);
}

/* A slot: the hash's high half beside the id, so a probe that meets another sequence rejects it without a miss. */
#define SLOT_FREE UINT64_MAX
#define SLOT(h, id) (((h) & 0xFFFFFFFF00000000ull) | (id))

/*
 * The words' hash: two multiply-rotate lanes (a chain of 5 cycles a word pair,
 * where a full mix per word costs 12 a word) and one full mix at the end. It
 * only spreads the table: equality is decided on the words.
 */
uint64_t etl_seqtab_hash(const uint64_t *w, uint32_t n)
{
    uint64_t a = 0x9e3779b97f4a7c15ull ^ n, b = 0xc2b2ae3d27d4eb4full;
    uint32_t k = 0;
    for (; k + 1 < n; k += 2) {
        a = (a ^ w[k]) * 0x87c37b91114253d5ull;
        a = a << 31 | a >> 33;
        b = (b ^ w[k + 1]) * 0x4cf5ad432745937full;
        b = b << 29 | b >> 35;
    }
    if (k < n) a = (a ^ w[k]) * 0x87c37b91114253d5ull;
    return etl_hash_mix64(a ^ (b << 17 | b >> 47));
}

static etl_status grow_slots(etl_seqtab *t)
{
    size_t n = t->nslots ? t->nslots * 2 : 1024;
    uint64_t *s = malloc(n * sizeof *s);
    if (!s) return ETL_E_NOMEM;
    memset(s, 0xFF, n * sizeof *s);
    for (uint32_t id = 0; id < t->count; id++) {
        size_t i = (size_t)t->hash[id] & (n - 1);
        while (s[i] != SLOT_FREE) i = (i + 1) & (n - 1);
        s[i] = SLOT(t->hash[id], id);
    }
    free(t->slots);
    t->slots = s;
    t->nslots = n;
    return ETL_OK;
}

static etl_status grow_ids(etl_seqtab *t)
{
    uint32_t cap = t->cap ? t->cap * 2 : 256;
    if (cap < t->cap || cap > UINT32_MAX - 1) return ETL_E_RANGE;
    uint64_t *st = realloc(t->start, cap * sizeof *st);
    if (!st) return ETL_E_NOMEM;
    t->start = st;
    uint32_t *ln = realloc(t->len, cap * sizeof *ln);
    if (!ln) return ETL_E_NOMEM;
    t->len = ln;
    uint64_t *h = realloc(t->hash, cap * sizeof *h);
    if (!h) return ETL_E_NOMEM;
    t->hash = h;
    t->cap = cap;
    return ETL_OK;
}

void etl_seqtab_prefetch(const etl_seqtab *t, uint64_t h)
{
    if (t->nslots) __builtin_prefetch(&t->slots[h & (t->nslots - 1)]);
}

etl_status etl_seqtab_intern(etl_seqtab *t, const uint64_t *w, uint32_t n, uint32_t *id)
{
    return etl_seqtab_intern_hashed(t, w, n, etl_seqtab_hash(w, n), id);
}

etl_status etl_seqtab_intern_hashed(etl_seqtab *t, const uint64_t *w, uint32_t n, uint64_t h, uint32_t *id)
{
    if ((t->count + 1) * 2 > t->nslots) {
        etl_status st = grow_slots(t);
        if (st != ETL_OK) return st;
    }
    size_t i = (size_t)h & (t->nslots - 1);
    for (uint64_t s; (s = t->slots[i]) != SLOT_FREE; i = (i + 1) & (t->nslots - 1)) {
        uint32_t si = (uint32_t)s;
        if (SLOT(h, si) == s && t->hash[si] == h && t->len[si] == n &&
            (!n || !memcmp(t->words + t->start[si], w, n * sizeof *w))) {
            *id = si;
            return ETL_OK;
        }
    }
    if (t->count == t->cap) {
        etl_status st = grow_ids(t);
        if (st != ETL_OK) return st;
    }
    if (!t->words || t->nwords + n > t->capwords) { /* words exist once an id does, even an empty sequence's */
        size_t cap = t->capwords ? t->capwords : 4096;
        while (cap < t->nwords + n) cap *= 2;
        uint64_t *nw = realloc(t->words, cap * sizeof *nw);
        if (!nw) return ETL_E_NOMEM;
        t->words = nw;
        t->capwords = cap;
    }
    if (n) memcpy(t->words + t->nwords, w, n * sizeof *w);
    uint32_t new_id = t->count++;
    t->start[new_id] = t->nwords;
    t->len[new_id] = n;
    t->hash[new_id] = h;
    t->nwords += n;
    t->slots[i] = SLOT(h, new_id);
    *id = new_id;
    return ETL_OK;
}

/* strtab.c - see strtab.h. */
#include "stacks/strtab.h"

#include <stdlib.h>
#include <string.h>
#include "etlkit/text.h"

void etl_strtab_init(etl_strtab *t)
{
    memset(t, 0, sizeof *t);
    etl_idmap_init(&t->by_hash);
}

void etl_strtab_free(etl_strtab *t)
{
    free(t->p);
    etl_idmap_free(&t->by_hash);
    memset(t, 0, sizeof *t);
}

etl_status etl_strtab_add(etl_strtab *t, const char *s, size_t n, uint32_t *off)
{
    const char *nul = memchr(s, 0, n);
    if (nul) n = (size_t)(nul - s);
    if (!t->p) { /* offset 0: the empty string */
        t->cap = 4096;
        if (!(t->p = malloc(t->cap))) return ETL_E_NOMEM;
        t->p[0] = 0;
        t->n = 1;
    }
    if (!n) {
        *off = 0;
        return ETL_OK;
    }
    uint64_t h = etl_hash_bytes(s, n);
    uint32_t at = etl_idmap_get(&t->by_hash, h);
    if (at != ETL_IDMAP_EMPTY && !strncmp(t->p + at, s, n) && t->p[at + n] == 0) {
        *off = at;
        return ETL_OK;
    }
    if (t->n + n + 1 > UINT32_MAX - 1) return ETL_E_RANGE;
    if (t->n + n + 1 > t->cap) {
        /* s may lie in the arena itself (a path's base name): keep its place across the move. */
        uintptr_t a = (uintptr_t)t->p, at_s = (uintptr_t)s;
        size_t inside = at_s >= a && at_s < a + t->n ? (size_t)(at_s - a) : SIZE_MAX;
        size_t cap = t->cap * 2;
        while (cap < t->n + n + 1) cap *= 2;
        char *p = realloc(t->p, cap);
        if (!p) return ETL_E_NOMEM;
        t->p = p;
        t->cap = cap;
        if (inside != SIZE_MAX) s = p + inside;
    }
    *off = (uint32_t)t->n;
    memcpy(t->p + t->n, s, n);
    t->p[t->n + n] = 0;
    t->n += n + 1;
    /* A 64-bit hash shared by two strings keeps the first: the second is stored again, never confused. */
    if (at == ETL_IDMAP_EMPTY) return etl_idmap_put(&t->by_hash, h, *off);
    return ETL_OK;
}

etl_status etl_strtab_add_kstr(etl_strtab *t, const etl_kstr *k, bool utf16, uint32_t *off)
{
    char buf[1024];
    size_t o = 0;
    if (utf16) {
        etl_utf16_to_utf8(k->text, buf, sizeof buf);
        o = strlen(buf);
    } else {
        o = etl_latin1_to_utf8(k->text, buf, sizeof buf);
    }
    return etl_strtab_add(t, buf, o, off);
}

/* diagkeep.c - see diagkeep.h. */
#include "base/diagkeep.h"

#include <stdio.h>
#include <string.h>

void etl_diag_keep_init(etl_diag_keep *k)
{
    memset(k, 0, sizeof *k);
}

/* A problem's key in `seen`: its offset and its text as kept. */
static uint64_t problem_key(uint64_t off, const char *text)
{
    return etl_hash_mix64(off) ^ etl_hash_bytes(text, strlen(text));
}

void etl_diag_keep_add(etl_diag_keep *k, const etl_diag *d)
{
    /*
     * The same problem met twice is told once, kept or not: counting it again whenever it
     * was no longer kept would make the count depend on the order the walks met it in.
     */
    char text[sizeof k->text[0]];
    snprintf(text, sizeof text, "%s", d->msg); /* as kept */
    uint64_t key = problem_key(d->file_offset, text);
    if (etl_idmap_get(&k->seen, key) != ETL_IDMAP_EMPTY) return;
    (void)etl_idmap_put(&k->seen, key, 1); /* out of memory: met again, it is counted again */
    unsigned n = k->n, i = 0;
    while (i < n && (k->off[i] < d->file_offset || (k->off[i] == d->file_offset && strcmp(k->text[i], text) < 0)))
        i++;
    if (i < n && k->off[i] == d->file_offset && strcmp(k->text[i], text) == 0) return;
    if (n == ETL_DIAG_KEEP) {
        k->more++;
        if (i == n) return;
        n--; /* the last kept one gives way */
    }
    memmove(k->text[i + 1], k->text[i], (n - i) * sizeof k->text[0]);
    memmove(k->off + i + 1, k->off + i, (n - i) * sizeof k->off[0]);
    memcpy(k->text[i], text, sizeof text);
    k->off[i] = d->file_offset;
    k->n = n + 1;
}

void etl_diag_keep_merge(etl_diag_keep *into, etl_diag_keep *from)
{
    for (unsigned i = 0; i < from->n; i++) {
        etl_diag d = {.status = ETL_OK, .file_offset = from->off[i]};
        memcpy(d.msg, from->text[i], sizeof from->text[i]);
        etl_diag_keep_add(into, &d);
    }
    /*
     * What `from` only counted, each once: by its key, so that one `into` met too (told at
     * open and again by the run, or by a pass done again) is not counted a second time.
     */
    uint64_t kept[ETL_DIAG_KEEP], counted = 0; /* counted: from's keys not kept there */
    for (unsigned i = 0; i < from->n; i++) kept[i] = problem_key(from->off[i], from->text[i]);
    for (size_t s = 0; s < from->seen.cap; s++) {
        const etl_idmap_slot *e = &from->seen.slots[s];
        if (e->val == ETL_IDMAP_EMPTY) continue;
        unsigned i = 0;
        while (i < from->n && kept[i] != e->key) i++;
        if (i < from->n) continue;
        counted++;
        if (etl_idmap_get(&into->seen, e->key) != ETL_IDMAP_EMPTY) continue;
        (void)etl_idmap_put(&into->seen, e->key, 1);
        into->more++;
    }
    /* Those `from` counted without a key (out of memory there) cannot be matched: counted as they are. */
    if (from->more > counted) into->more += from->more - counted;
    etl_diag_keep_free(from);
    etl_diag_keep_init(from);
}

void etl_diag_keep_clear(etl_diag_keep *k)
{
    k->n = 0;
    k->more = 0;
    etl_idmap_clear(&k->seen);
}

void etl_diag_keep_free(etl_diag_keep *k)
{
    etl_idmap_free(&k->seen);
    k->n = 0;
    k->more = 0;
}

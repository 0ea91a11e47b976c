/* diagkeep.c - see diagkeep.h. */
#include "base/diagkeep.h"

#include <stdio.h>
#include <string.h>

void etl_diag_keep_init(etl_diag_keep *k)
{
    memset(k, 0, sizeof *k);
}

void etl_diag_keep_add(etl_diag_keep *k, const etl_diag *d)
{
    /*
     * The same problem met twice is told once, kept or not: counting it again whenever it
     * was no longer kept would make the count depend on the order the walks met it in.
     */
    char text[sizeof k->text[0]];
    snprintf(text, sizeof text, "%s", d->msg); /* as kept */
    uint64_t key = etl_hash_mix64(d->file_offset) ^ etl_hash_bytes(text, strlen(text));
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

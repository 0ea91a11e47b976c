/*
 * strtab.h - interned UTF-8 strings (module, process and thread names), named by
 * their offset in one arena. Offset 0 is the empty string. Memory grows with
 * the distinct strings.
 */
#ifndef ETLKIT_STACKS_STRTAB_H
#define ETLKIT_STACKS_STRTAB_H

#include <stddef.h>
#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/kernel.h"

typedef struct etl_strtab {
    char *p;
    size_t n, cap;
    etl_idmap by_hash; /* hash of the bytes -> offset */
} etl_strtab;

void etl_strtab_init(etl_strtab *t);
void etl_strtab_free(etl_strtab *t);
/* The offset of s[0..n) (a NUL in s ends it; s may lie in t itself). ETL_E_NOMEM, ETL_E_RANGE past 4 GiB. */
etl_status etl_strtab_add(etl_strtab *t, const char *s, size_t n, uint32_t *off);
/* The same from a kernel string: UTF-16LE (utf16) or ANSI read as Latin-1. */
etl_status etl_strtab_add_kstr(etl_strtab *t, const etl_kstr *k, bool utf16, uint32_t *off);

static inline const char *etl_strtab_get(const etl_strtab *t, uint32_t off)
{
    return t->p ? t->p + off : "";
}

#endif

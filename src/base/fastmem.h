/*
 * fastmem.h - zeroing and copying of small structs (records, rows, events: 100-250
 * bytes) on the hot paths, in 16-byte stores. Compilers turn such a memset or struct
 * copy into rep stos / rep movs, whose start-up cost was a third of framing a record.
 */
#ifndef ETLKIT_BASE_FASTMEM_H
#define ETLKIT_BASE_FASTMEM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t etl_v2 __attribute__((vector_size(16), may_alias, aligned(8)));

#if defined(__GNUC__) && !defined(__clang__)
#define ETL_NO_MEMSET_LOOPS __attribute__((optimize("no-tree-loop-distribute-patterns")))
#else
#define ETL_NO_MEMSET_LOOPS
#endif

/* memset(p, 0, n) for a struct of n bytes, 8-byte aligned. */
ETL_NO_MEMSET_LOOPS static inline void etl_zero_small(void *p, size_t n)
{
    etl_v2 *q = p;
    for (size_t i = 0; i < n / 16; i++) q[i] = (etl_v2){0, 0};
    if (n % 16) memset((char *)p + n / 16 * 16, 0, n % 16);
}

/* memcpy(d, s, n) for structs of n bytes, 8-byte aligned, not overlapping. */
ETL_NO_MEMSET_LOOPS static inline void etl_copy_small(void *d, const void *s, size_t n)
{
    etl_v2 *a = d;
    const etl_v2 *b = s;
    for (size_t i = 0; i < n / 16; i++) a[i] = b[i];
    if (n % 16) memcpy((char *)d + n / 16 * 16, (const char *)s + n / 16 * 16, n % 16);
}

#endif

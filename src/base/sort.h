/*
 * sort.h - qsort for arrays that may be empty: qsort's base must not be NULL even
 * for zero elements (C11 7.22.5), and an empty list's pointer often is; a radix sort
 * for 64-bit keys.
 */
#ifndef ETLKIT_BASE_SORT_H
#define ETLKIT_BASE_SORT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static inline void etl_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) qsort(base, n, size, cmp);
}

static inline int etl_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/*
 * 64-bit keys ascending: a radix sort, a byte a pass from the lowest, the passes where
 * every key has the same byte left out (a few passes for keys that use few bits), on a
 * scratch copy; qsort when short or out of memory.
 */
static inline void etl_sort_u64(uint64_t *a, size_t n)
{
    uint64_t *t = n > 256 ? malloc(n * sizeof *t) : NULL;
    if (!t) {
        etl_sort(a, n, sizeof *a, etl_cmp_u64);
        return;
    }
    uint64_t *src = a, *dst = t;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[(src[i] >> shift) & 0xFF]++;
        if (count[(src[0] >> shift) & 0xFF] == n) continue; /* one value of this byte: in order already */
        size_t at = 0;
        for (unsigned d = 0; d < 256; d++) {
            size_t c = count[d];
            count[d] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[(src[i] >> shift) & 0xFF]++] = src[i];
        uint64_t *x = src;
        src = dst;
        dst = x;
    }
    if (src != a) memcpy(a, src, n * sizeof *a);
    free(t);
}

#endif

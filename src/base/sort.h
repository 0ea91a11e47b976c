/*
 * sort.h - qsort for arrays that may be empty: qsort's base must not be NULL even
 * for zero elements (C11 7.22.5), and an empty list's pointer often is.
 */
#ifndef ETLKIT_BASE_SORT_H
#define ETLKIT_BASE_SORT_H

#include <stdlib.h>

static inline void etl_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
    if (n > 1) qsort(base, n, size, cmp);
}

#endif

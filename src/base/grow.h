/*
 * grow.h - a growing array's room: the one helper the library's tables share.
 */
#ifndef ETLKIT_SRC_BASE_GROW_H
#define ETLKIT_SRC_BASE_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * v with room for need items of size bytes (*cap items now), doubled from 64: v itself
 * when it has the room, the new block (*cap updated), or NULL when memory or size_t
 * runs out (v then untouched and still the caller's).
 */
static inline void *etl_grow(void *v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return v;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2) return NULL;
        c *= 2;
    }
    if (size && c > SIZE_MAX / size) return NULL;
    void *n = realloc(v, c * size);
    if (n) *cap = c;
    return n;
}

#endif

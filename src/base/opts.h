/*
 * opts.h - how the library reads a caller's options struct, so that a program
 * built against an older etlkit keeps working with a newer one (etlkit's ABI
 * rule): the struct's first member is its size (sz, the caller sets it to
 * sizeof), members are only ever added at its end, and the library takes the
 * caller's first sz bytes over its own defaults: the members the caller's
 * version did not have keep theirs. sz 0 or no struct: every default. A caller
 * built against a newer etlkit gives a larger sz; what this version does not
 * know is not read, non-zero or not (base.h says so: the caller checks
 * etl_version). Whoever adds a member puts it at or past the old sizeof (the
 * old struct's tail padding is the caller's, and may hold anything).
 */
#ifndef ETLKIT_SRC_BASE_OPTS_H
#define ETLKIT_SRC_BASE_OPTS_H

#include <stddef.h>
#include <string.h>

/* dst (dst_size bytes, holding the defaults) takes the caller's src; dst's sz becomes dst_size. */
static inline void etl_opts_take(void *dst, size_t dst_size, const void *src)
{
    size_t sz = 0;
    if (src) memcpy(&sz, src, sizeof sz);
    /*
     * Every version's sizeof is a multiple of the struct's alignment, at least size_t's: a sz that is not ends inside
     * a member (a caller's bug), whose partial word is left at its default rather than taken in half (a pointer's
     * low half would be called). Per-member checks (libbpf's OPTS_HAS) would need each struct's table.
     */
    sz -= sz % _Alignof(size_t);
    memcpy(dst, src ? src : dst, sz < dst_size ? sz : dst_size);
    memcpy(dst, &dst_size, sizeof dst_size);
}

#endif

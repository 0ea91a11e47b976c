/*
 * label_whole.h - a frame's label whole, however long: a C++ name from a PDB runs to
 * thousands of bytes, and two cut alike would be one function, one folded line, one node.
 */
#ifndef ETLKIT_STACKS_LABEL_WHOLE_H
#define ETLKIT_STACKS_LABEL_WHOLE_H

#include <stdlib.h>
#include "etlkit/profile.h"

/*
 * f's label by lab: in buf[cap] when it fits, else in memory of its own, which the caller
 * frees (whatever is not buf); *len its length when len. NULL: out of memory.
 */
static inline char *etl_label_whole(etl_profile_labeler lab, void *ctx, const etl_profile *p,
                                    const etl_profile_frame *f, char *buf, size_t cap, size_t *len)
{
    size_t n = lab(ctx, p, f, buf, cap);
    char *s = buf;
    if (n >= cap) {
        if (!(s = malloc(n + 1))) return NULL;
        size_t again = lab(ctx, p, f, s, n + 1);
        n = again < n ? again : n;
    }
    if (len) *len = n;
    return s;
}

#endif

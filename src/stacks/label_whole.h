/*
 * label_whole.h - a frame's label whole, however long: a C++ name from a PDB runs to
 * thousands of bytes, and two cut alike would be one function, one folded line, one node.
 */
#ifndef ETLKIT_STACKS_LABEL_WHOLE_H
#define ETLKIT_STACKS_LABEL_WHOLE_H

#include <stdlib.h>
#include "etlkit/profile.h"
#include "etlkit/schedstacks.h"

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

/* A labeler of frames alone (etl_frame_label_fn, the scheduler stacks'), as etl_label_whole calls labelers. */
typedef struct etl_frame_labeler {
    etl_frame_label_fn fn;
    void *ctx;
} etl_frame_labeler;

static inline size_t etl_frame_labeler_call(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out,
                                            size_t cap)
{
    (void)p;
    const etl_frame_labeler *l = ctx;
    return l->fn(l->ctx, f, out, cap);
}

/* etl_label_whole for a labeler of frames alone. */
static inline char *etl_frame_label_whole(etl_frame_label_fn fn, void *ctx, const etl_profile_frame *f, char *buf,
                                          size_t cap, size_t *len)
{
    etl_frame_labeler l = {fn, ctx};
    return etl_label_whole(etl_frame_labeler_call, &l, NULL, f, buf, cap, len);
}

static inline size_t etl_sched_stacks_labeler(void *s, const etl_profile_frame *f, char *out, size_t cap)
{
    return etl_sched_stacks_frame_label(s, f, out, cap);
}

/* etl_label_whole for a frame of s (etl_sched_stacks_frame_label: its symbols', or module+offset). */
static inline char *etl_sched_label_whole(const etl_sched_stacks *s, const etl_profile_frame *f, char *buf,
                                          size_t cap, size_t *len)
{
    return etl_frame_label_whole(etl_sched_stacks_labeler, (void *)s, f, buf, cap, len);
}

#endif

/* synthtruth.c - see synthtruth.h. */
#include "synthtruth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"

#define PUSH(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : 256;                                                       \
            (arr) = realloc((arr), (cap) * sizeof *(arr));                                         \
            if (!(arr)) return 1;                                                                  \
        }                                                                                          \
    } while (0)

int st_capture(void *ctx, const etl_synth_rec *r)
{
    st_truth *t = ctx;
    switch (r->type) {
    case ETL_SYNTH_REC_META: t->meta = r->u.meta; break;
    case ETL_SYNTH_REC_END: t->end = r->u.end; break;
    case ETL_SYNTH_REC_SWITCH:
        PUSH(t->sw, t->nsw, t->capsw);
        t->sw[t->nsw++] = r->u.sw;
        break;
    case ETL_SYNTH_REC_READY:
        if (!r->u.ready.logged) break;
        PUSH(t->rd, t->nrd, t->caprd);
        t->rd[t->nrd++] = r->u.ready;
        break;
    case ETL_SYNTH_REC_SPINLOCK:
        PUSH(t->sl, t->nsl, t->capsl);
        t->sl[t->nsl++] = r->u.spinlock;
        break;
    case ETL_SYNTH_REC_THREAD_TOTAL:
        PUSH(t->tt, t->ntt, t->captt);
        t->tt[t->ntt] = r->u.thread_total;
        t->tt[t->ntt++].name = NULL;
        break;
    default: break;
    }
    return 0;
}

void st_free(st_truth *t)
{
    free(t->sw);
    free(t->rd);
    free(t->sl);
    free(t->tt);
    memset(t, 0, sizeof *t);
}

void st_set(etl_synth_options *o, const char *name, const char *value)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_synth_set(o, name, value, &d) != ETL_OK) fail_msg("--%s %s: %s", name, value ? value : "", d.msg);
}

void st_run(const char *path, etl_synth_options *o, st_truth *t)
{
    memset(t, 0, sizeof *t);
    o->on_truth = st_capture;
    o->truth_ctx = t;
    etl_diag d;
    etl_synth_summary s;
    if (etl_synth_run(path, o, &s, &d) != ETL_OK) fail_msg("synth: %s", d.msg);
}

void st_tmp(char *out, size_t cap, const char *tag, const char *name)
{
    const char *dir = getenv("TMPDIR");
    snprintf(out, cap, "%s/etlkit-%s-%d-%s", dir && *dir ? dir : "/tmp", tag, (int)getpid(), name);
}

static int by_time(const void *a, const void *b)
{
    const st_item *x = a, *y = b;
    if (x->ts != y->ts) return x->ts < y->ts ? -1 : 1;
    if (x->kind != y->kind) return x->kind - y->kind;
    return x->i < y->i ? -1 : x->i > y->i;
}

st_item *st_timeline(const st_truth *t, size_t *n)
{
    st_item *it = malloc((t->nsw + t->nrd + 1) * sizeof *it);
    if (!it) fail_msg("out of memory");
    size_t k = 0;
    for (size_t i = 0; i < t->nrd; i++) it[k++] = (st_item){t->rd[i].time, 0, i};
    for (size_t i = 0; i < t->nsw; i++) it[k++] = (st_item){t->sw[i].time, 1, i};
    qsort(it, k, sizeof *it, by_time);
    *n = k;
    return it;
}

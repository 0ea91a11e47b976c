/* latspill.c - Ready values spilled to a spool, and their exact percentiles in passes (latspill.h). */
#include <stdlib.h>
#include <string.h>
#include "sched/latency.h"
#include "sched/latspill.h"

/* Pairs a block: 32 KiB appended as one spool record. */
#define BLOCK_WORDS 8192u
/* In memory while spilling: a few chunks; the rest goes to the temporary file. */
#define SPOOL_MEMORY (1u << 20)
/* Targets a pair of passes: each holds a 512 KiB histogram, then up to four more. */
#define BATCH 4

bool lat_spill_init(lat_spill *x, size_t budget)
{
    memset(x, 0, sizeof *x);
    x->sp = etl_spool_open(budget < SPOOL_MEMORY ? budget : SPOOL_MEMORY);
    x->blk = malloc(BLOCK_WORDS * sizeof *x->blk);
    if (!x->sp || !x->blk) {
        lat_spill_free(x);
        return false;
    }
    etl_spool_stream_init(&x->s, x->sp);
    return true;
}

void lat_spill_free(lat_spill *x)
{
    if (x->sp) {
        etl_spool_stream_free(&x->s);
        etl_spool_close(x->sp);
    }
    free(x->blk);
    memset(x, 0, sizeof *x);
}

static bool flush(lat_spill *x)
{
    if (x->nblk && !etl_spool_append(&x->s, x->blk, x->nblk * sizeof *x->blk)) x->failed = true;
    x->nblk = 0;
    return !x->failed;
}

bool lat_spill_push(lat_spill *x, uint32_t key, uint32_t v)
{
    x->blk[x->nblk++] = key;
    x->blk[x->nblk++] = v;
    x->n++;
    return x->nblk < BLOCK_WORDS || flush(x);
}

bool lat_spill_end(lat_spill *x) { return flush(x); }

void lat_spill_rewind(lat_spill *x) { etl_spool_rewind(&x->s); }

const uint32_t *lat_spill_block(lat_spill *x, size_t *npairs)
{
    size_t n;
    const uint8_t *p = etl_spool_next(&x->s, &n);
    if (!p) return NULL;
    *npairs = n / (2 * sizeof(uint32_t));
    return (const uint32_t *)(const void *)p; /* spool records are 4-byte aligned */
}

/* One batch's pass state. */
typedef struct batch {
    size_t n;
    lat_target *t[BATCH];
    uint64_t *hist[BATCH];      /* high 16 bits */
    uint64_t count[BATCH], sum[BATCH], max[BATCH];
    uint16_t all_mask, woken_mask;
    uint16_t *any_mask, *woken_only; /* by thread: targets taking its values, its woken values */
    /* pass 2: each rank's bucket, residual rank, and the low histogram it reads */
    uint32_t bucket[BATCH][4];
    uint64_t rest[BATCH][4];
    uint64_t *low[BATCH][4];    /* shared by ranks of one bucket */
    bool small[BATCH][4];       /* the rank falls among the values under 32 bits */
} batch;

static uint16_t mask_of(const batch *b, uint32_t key, size_t nthreads)
{
    uint32_t th = key >> 1;
    uint16_t m = b->all_mask | (key & 1 ? b->woken_mask : 0);
    if (th < nthreads) m |= b->any_mask[th] | (key & 1 ? b->woken_only[th] : 0);
    return m;
}

static bool run_batch(lat_spill *x, batch *b, const uint32_t *proc_of, size_t nthreads)
{
    for (size_t j = 0; j < b->n; j++) {
        const lat_target *t = b->t[j];
        uint16_t bit = (uint16_t)(1u << j);
        if (t->kind == LAT_ALL) b->all_mask |= bit;
        else if (t->kind == LAT_WOKEN) b->woken_mask |= bit;
        else if (t->kind == LAT_THREAD && t->id < nthreads) b->any_mask[t->id] |= bit;
        else if (t->kind == LAT_THREAD_WOKEN && t->id < nthreads) b->woken_only[t->id] |= bit;
        else if (t->kind == LAT_PROCESS)
            for (size_t i = 0; i < nthreads; i++)
                if (proc_of[i] == t->id) b->any_mask[i] |= bit;
    }
    /* Pass 1: counts, sums, maxima and the high-16-bit histograms. */
    lat_spill_rewind(x);
    const uint32_t *p;
    size_t np;
    while ((p = lat_spill_block(x, &np)) != NULL) {
        for (size_t i = 0; i < np; i++) {
            uint32_t key = p[2 * i], v = p[2 * i + 1];
            for (uint16_t m = mask_of(b, key, nthreads); m; m &= (uint16_t)(m - 1)) {
                unsigned j = (unsigned)__builtin_ctz(m);
                b->hist[j][v >> 16]++;
                b->count[j]++;
                b->sum[j] += v;
                if (v > b->max[j]) b->max[j] = v;
            }
        }
    }
    /* Each rank's bucket; ranks past the 32-bit values are read off the big ones. */
    static const unsigned per_mille[4] = {500, 900, 990, 999};
    bool second = false;
    for (size_t j = 0; j < b->n; j++) {
        const lat_target *t = b->t[j];
        uint64_t total = b->count[j] + t->nbig;
        for (unsigned q = 0; q < 4; q++) {
            uint64_t r = total ? lat_rank(total, per_mille[q]) : 0;
            b->small[j][q] = r && r <= b->count[j];
            if (!b->small[j][q]) {
                b->rest[j][q] = r; /* rank among all values; big ones answered below */
                continue;
            }
            uint32_t k = 0;
            while (b->hist[j][k] < r) r -= b->hist[j][k++];
            b->bucket[j][q] = k;
            b->rest[j][q] = r;
            for (unsigned e = 0; e < q && !b->low[j][q]; e++)
                if (b->small[j][e] && b->bucket[j][e] == k) b->low[j][q] = b->low[j][e];
            if (!b->low[j][q] && !(b->low[j][q] = calloc(65536, sizeof(uint64_t)))) return false;
            second = true;
        }
    }
    /* Pass 2: the low 16 bits of the values in those buckets. */
    if (second) {
        lat_spill_rewind(x);
        while ((p = lat_spill_block(x, &np)) != NULL) {
            for (size_t i = 0; i < np; i++) {
                uint32_t key = p[2 * i], v = p[2 * i + 1];
                for (uint16_t m = mask_of(b, key, nthreads); m; m &= (uint16_t)(m - 1)) {
                    unsigned j = (unsigned)__builtin_ctz(m);
                    for (unsigned q = 0; q < 4; q++) {
                        if (!b->small[j][q] || b->bucket[j][q] != v >> 16) continue;
                        b->low[j][q][v & 0xFFFF]++;
                        break; /* ranks of one bucket share its histogram: count once */
                    }
                }
            }
        }
    }
    for (size_t j = 0; j < b->n; j++) {
        lat_target *t = b->t[j];
        etl_latency *l = t->out;
        memset(l, 0, sizeof *l);
        uint64_t total = b->count[j] + t->nbig;
        if (!total) continue;
        uint64_t sum = b->sum[j], max = b->max[j], v[4];
        for (size_t i = 0; i < t->nbig; i++)
            if (__builtin_add_overflow(sum, t->big[i], &sum)) sum = UINT64_MAX;
        if (t->nbig) max = t->big[t->nbig - 1];
        for (unsigned q = 0; q < 4; q++) {
            uint64_t r = b->rest[j][q];
            if (!b->small[j][q]) {
                v[q] = t->big[r - b->count[j] - 1];
                continue;
            }
            const uint64_t *low = b->low[j][q];
            uint32_t c = 0;
            while (low[c] < r) r -= low[c++];
            v[q] = (uint64_t)b->bucket[j][q] << 16 | c;
        }
        l->count = total;
        l->sum_ns = lat_clamp64(sum);
        l->p50_ns = lat_clamp64(v[0]);
        l->p90_ns = lat_clamp64(v[1]);
        l->p99_ns = lat_clamp64(v[2]);
        l->p999_ns = lat_clamp64(v[3]);
        l->max_ns = lat_clamp64(max);
    }
    return true;
}

bool lat_spill_latency(lat_spill *x, lat_target *t, size_t n, const uint32_t *proc_of, size_t nthreads)
{
    batch *b = calloc(1, sizeof *b);
    uint16_t *any = calloc(nthreads ? nthreads : 1, sizeof *any), *wo = calloc(nthreads ? nthreads : 1, sizeof *wo);
    bool ok = b && any && wo;
    for (size_t i = 0; ok && i < BATCH; i++) ok = (b->hist[i] = malloc(65536 * sizeof(uint64_t))) != NULL;
    for (size_t from = 0; ok && from < n; from += BATCH) {
        size_t k = n - from < BATCH ? n - from : BATCH;
        uint64_t *hist[BATCH];
        memcpy(hist, b->hist, sizeof hist);
        memset(b, 0, sizeof *b);
        memcpy(b->hist, hist, sizeof hist);
        for (size_t j = 0; j < k; j++) {
            b->t[j] = &t[from + j];
            memset(b->hist[j], 0, 65536 * sizeof(uint64_t));
        }
        b->n = k;
        memset(any, 0, nthreads * sizeof *any);
        memset(wo, 0, nthreads * sizeof *wo);
        b->any_mask = any;
        b->woken_only = wo;
        ok = run_batch(x, b, proc_of, nthreads);
        for (size_t j = 0; j < k; j++)
            for (unsigned q = 0; q < 4; q++) {
                uint64_t *l = b->low[j][q];
                if (!l) continue;
                for (unsigned e = q; e < 4; e++) /* free each shared histogram once */
                    if (b->low[j][e] == l) b->low[j][e] = NULL;
                free(l);
            }
    }
    for (size_t i = 0; b && i < BATCH; i++) free(b->hist[i]);
    free(b);
    free(any);
    free(wo);
    return ok && !x->failed;
}

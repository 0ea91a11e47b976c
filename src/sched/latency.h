/*
 * latency.h - exact nearest-rank percentiles over many threads' values in 4 bytes a value.
 *
 * Each thread keeps its Ready values in a lat_vec: durations below 2^32 - 1 ns (4.29 s)
 * as u32, longer ones exactly in a u64 side list. Sorted once at the end, a set of
 * vectors (a thread's woken and other values, a process's threads, the whole trace)
 * answers "the r-th smallest value" by binary search on the value, counting with a
 * binary search in each vector: no value is copied, so the only memory is the values.
 */
#ifndef ETLKIT_SCHED_LATENCY_H
#define ETLKIT_SCHED_LATENCY_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

typedef struct lat_vec {
    uint32_t *v;
    size_t n, cap;
    uint64_t *big;   /* values >= UINT32_MAX */
    size_t nbig, capbig;
} lat_vec;

bool lat_push(lat_vec *x, uint64_t ns);
void lat_sort(lat_vec *x);
size_t lat_count(const lat_vec *x);
/* Values <= v in a sorted vector. */
size_t lat_count_le(const lat_vec *x, uint64_t v);
/* The largest value (0 when empty), and the sum (saturating). */
uint64_t lat_max(const lat_vec *x);
uint64_t lat_sum(const lat_vec *x);
/* The r-th smallest value (1-based) of the union of k sorted vectors; 0 when r is 0 or past the end. */
uint64_t lat_select(const lat_vec *const *x, size_t k, uint64_t r);
/* lat_select for nr ranks at once into out[]: the same values, in O(values) for many vectors. */
void lat_select_n(const lat_vec *const *x, size_t k, const uint64_t *ranks, size_t nr, uint64_t *out);
void lat_free(lat_vec *x);

/* The nearest rank r = max(1, ceil(per_mille * n / 1000)), at most n. */
static inline uint64_t lat_rank(uint64_t n, unsigned per_mille)
{
    uint64_t r = (uint64_t)(((unsigned __int128)per_mille * n + 999) / 1000);
    return r < 1 ? 1 : r > n ? n : r;
}

static inline int64_t lat_clamp64(uint64_t v) { return v > INT64_MAX ? INT64_MAX : (int64_t)v; }

#endif

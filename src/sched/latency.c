/* latency.c - see latency.h. */
#include "base/sort.h"
#include "sched/latency.h"

#include <stdlib.h>
#include <string.h>

bool lat_push(lat_vec *x, uint64_t ns)
{
    if (ns >= UINT32_MAX) {
        if (x->nbig == x->capbig) {
            size_t cap = x->capbig ? x->capbig * 2 : 4;
            uint64_t *p = realloc(x->big, cap * sizeof *p);
            if (!p) return false;
            x->big = p;
            x->capbig = cap;
        }
        x->big[x->nbig++] = ns;
        return true;
    }
    if (x->n == x->cap) {
        /* Grow by half: the values are most of the reports' memory. */
        size_t cap = x->cap ? x->cap + x->cap / 2 + 8 : 16;
        uint32_t *p = realloc(x->v, cap * sizeof *p);
        if (!p) return false;
        x->v = p;
        x->cap = cap;
    }
    x->v[x->n++] = (uint32_t)ns;
    return true;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

/* Insertion sort: the few values most threads have. */
static void insertion_u32(uint32_t *v, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        uint32_t x = v[i];
        size_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

/*
 * LSD radix sort of n values, `bits` a pass (8 or 16), through tmp[n]: each pass costs a
 * count table of 2^bits, so short vectors take 8-bit digits, long ones 16. A pass whose
 * digit is the same for every value moves nothing and is skipped.
 */
static void radix_pass_u32(uint32_t *v, uint32_t *tmp, size_t n, unsigned bits, size_t *cnt)
{
    size_t buckets = (size_t)1 << bits, mask = buckets - 1;
    uint32_t *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 32; shift += bits) {
        memset(cnt, 0, buckets * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(src[i] >> shift) & mask]++;
        if (cnt[(src[0] >> shift) & mask] == n) continue;
        size_t sum = 0;
        for (size_t k = 0; k < buckets; k++) {
            size_t c = cnt[k];
            cnt[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & mask]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}

static void radix_u32(uint32_t *v, size_t n)
{
    if (n <= 32) {
        insertion_u32(v, n);
        return;
    }
    unsigned bits = n < 65536 ? 8 : 16;
    uint32_t *tmp = malloc(n * sizeof *tmp);
    size_t *cnt = malloc(((size_t)1 << bits) * sizeof *cnt);
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        etl_sort(v, n, sizeof *v, cmp_u32);
        return;
    }
    radix_pass_u32(v, tmp, n, bits, cnt);
    free(tmp);
    free(cnt);
}

void lat_sort(lat_vec *x)
{
    if (x->n) radix_u32(x->v, x->n); /* empty vectors may be NULL, which qsort must not get */
    etl_sort(x->big, x->nbig, sizeof *x->big, etl_cmp_u64);
}

size_t lat_count(const lat_vec *x) { return x->n + x->nbig; }

size_t lat_count_le(const lat_vec *x, uint64_t v)
{
    size_t lo = 0, hi = x->n;
    if (v >= UINT32_MAX) {
        lo = x->n;
    } else {
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (x->v[mid] <= v) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }
    size_t a = 0, b = x->nbig;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (x->big[mid] <= v) a = mid + 1;
        else b = mid;
    }
    return lo + a;
}

uint64_t lat_max(const lat_vec *x)
{
    if (x->nbig) return x->big[x->nbig - 1];
    return x->n ? x->v[x->n - 1] : 0;
}

uint64_t lat_sum(const lat_vec *x)
{
    uint64_t s = 0;
    for (size_t i = 0; i < x->n; i++) s += x->v[i];
    for (size_t i = 0; i < x->nbig; i++)
        if (__builtin_add_overflow(s, x->big[i], &s)) return UINT64_MAX;
    return s;
}

uint64_t lat_select(const lat_vec *const *x, size_t k, uint64_t r)
{
    uint64_t total = 0, hi = 0;
    for (size_t i = 0; i < k; i++) {
        total += lat_count(x[i]);
        uint64_t m = lat_max(x[i]);
        if (lat_count(x[i]) && m > hi) hi = m;
    }
    if (r == 0 || r > total) return 0;
    /* The smallest v with at least r values <= v. */
    uint64_t lo = 0;
    while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        uint64_t c = 0;
        for (size_t i = 0; i < k && c < r; i++) c += lat_count_le(x[i], mid);
        if (c >= r) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

void lat_free(lat_vec *x)
{
    free(x->v);
    free(x->big);
    memset(x, 0, sizeof *x);
}

/*
 * Many vectors (a process's threads, the whole trace): the old way costs 32 binary
 * searches in each vector a rank. Instead, one histogram of every value's high 16
 * bits finds each rank's bucket, and one of the low 16 bits of that bucket's values
 * (a binary-searched range in each sorted vector) its value: O(values + vectors).
 */
#define LAT_MANY 16

/* Value i (0-based) of a sorted vector: its 32-bit values, then the big ones. */
static uint64_t lat_at(const lat_vec *x, uint64_t i)
{
    return i < x->n ? x->v[i] : x->big[i - x->n];
}

static uint64_t lat_big_total(const lat_vec *const *x, size_t k)
{
    uint64_t n = 0;
    for (size_t i = 0; i < k; i++) n += x[i]->nbig;
    return n;
}

/* The r-th smallest (1-based) of two sorted vectors: how many come from a, by binary search. */
static uint64_t lat_kth2(const lat_vec *a, const lat_vec *b, uint64_t r)
{
    uint64_t na = lat_count(a), nb = lat_count(b);
    uint64_t lo = r > nb ? r - nb : 0, hi = r < na ? r : na;
    while (lo < hi) {
        uint64_t i = lo + (hi - lo) / 2, j = r - i;
        if (j > 0 && i < na && lat_at(b, j - 1) > lat_at(a, i)) lo = i + 1;
        else hi = i;
    }
    uint64_t i = lo, j = r - lo;
    uint64_t x = i ? lat_at(a, i - 1) : 0, y = j ? lat_at(b, j - 1) : 0;
    return x > y ? x : y;
}

void lat_select_n(const lat_vec *const *x, size_t k, const uint64_t *ranks, size_t nr, uint64_t *out)
{
    uint64_t small = 0;
    for (size_t i = 0; i < k; i++) small += x[i]->n;
    /* The histograms cost 1 MiB to clear: for many values only. */
    uint64_t *h = k > LAT_MANY && small >= (1u << 18) ? calloc(65536, sizeof *h) : NULL;
    uint64_t *low = h ? malloc(65536 * sizeof *low) : NULL;
    for (size_t i = 0; low && i < k; i++)
        for (size_t j = 0; j < x[i]->n; j++) h[x[i]->v[j] >> 16]++;
    for (size_t q = 0; q < nr; q++) {
        uint64_t r = ranks[q];
        if (r == 0 || r > small + lat_big_total(x, k)) {
            out[q] = 0;
            continue;
        }
        if (k <= 2) { /* a thread's one or two vectors: read the rank off them */
            out[q] = k == 1 ? lat_at(x[0], r - 1) : lat_kth2(x[0], x[1], r);
            continue;
        }
        if (!low || r > small) { /* few vectors, or the rank falls among the values over 32 bits */
            out[q] = lat_select(x, k, r);
            continue;
        }
        uint32_t b = 0;
        while (h[b] < r) r -= h[b++];
        memset(low, 0, 65536 * sizeof *low);
        for (size_t i = 0; i < k; i++) {
            /* The bucket's values are one run of each sorted vector. */
            size_t e = b ? lat_count_le(x[i], ((uint64_t)b << 16) - 1) : 0;
            for (; e < x[i]->n && x[i]->v[e] >> 16 == b; e++) low[x[i]->v[e] & 0xFFFF]++;
        }
        uint32_t c = 0;
        while (low[c] < r) r -= low[c++];
        out[q] = (uint64_t)b << 16 | c;
    }
    free(h);
    free(low);
}

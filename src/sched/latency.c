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

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* LSD radix sort, 16 bits a pass: the vectors are long and qsort's calls dominate otherwise. */
static void radix_u32(uint32_t *v, size_t n)
{
    if (n < 256) {
        etl_sort(v, n, sizeof *v, cmp_u32);
        return;
    }
    uint32_t *tmp = malloc(n * sizeof *tmp);
    size_t *cnt = malloc(65536 * sizeof *cnt);
    if (!tmp || !cnt) {
        free(tmp);
        free(cnt);
        etl_sort(v, n, sizeof *v, cmp_u32);
        return;
    }
    uint32_t *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 32; shift += 16) {
        memset(cnt, 0, 65536 * sizeof *cnt);
        for (size_t i = 0; i < n; i++) cnt[(src[i] >> shift) & 0xFFFF]++;
        size_t sum = 0;
        for (size_t k = 0; k < 65536; k++) {
            size_t c = cnt[k];
            cnt[k] = sum;
            sum += c;
        }
        for (size_t i = 0; i < n; i++) dst[cnt[(src[i] >> shift) & 0xFFFF]++] = src[i];
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    /* Two passes: the sorted values are back in v. */
    free(tmp);
    free(cnt);
}

void lat_sort(lat_vec *x)
{
    if (x->n) radix_u32(x->v, x->n); /* empty vectors may be NULL, which qsort must not get */
    etl_sort(x->big, x->nbig, sizeof *x->big, cmp_u64);
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

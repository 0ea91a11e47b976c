/* sat.h - saturating sums: damaged traces can make any one duration or count near the type's limit. */
#ifndef ETLKIT_BASE_SAT_H
#define ETLKIT_BASE_SAT_H

#include <stdint.h>

static inline void add_sat(int64_t *acc, int64_t v)
{
    if (__builtin_add_overflow(*acc, v, acc)) *acc = v > 0 ? INT64_MAX : INT64_MIN;
}

static inline int64_t sub_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_sub_overflow(a, b, &r) ? (b < 0 ? INT64_MAX : INT64_MIN) : r;
}

static inline int64_t mul_sat(int64_t a, int64_t b)
{
    int64_t r;
    return __builtin_mul_overflow(a, b, &r) ? ((a < 0) != (b < 0) ? INT64_MIN : INT64_MAX) : r;
}

static inline void add_sat_u64(uint64_t *acc, uint64_t v)
{
    if (__builtin_add_overflow(*acc, v, acc)) *acc = UINT64_MAX;
}

/*
 * num / den (den > 0) to the nearest integer, a half away from zero, saturated: the one rounding
 * of the numbers shown to people (durations, percentages, rates, ratios, a value shown with fewer
 * decimals than it has), as WPA rounds; what is written for programs (JSON integers) stays exact.
 */
static inline int64_t div_round_sat(__int128 num, __int128 den)
{
    __int128 v = (num < 0 ? num - den / 2 : num + den / 2) / den;
    return v > INT64_MAX ? INT64_MAX : v < INT64_MIN ? INT64_MIN : (int64_t)v;
}

#endif

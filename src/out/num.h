/*
 * num.h - numbers as text and text as numbers, for every writer and option parser:
 * decimal integers (one digit formatter, inline because it runs for every number of
 * every dumped line), exact fixed-point decimals, durations for people, and the
 * parsers of unsigned integers, durations (1.5, 250ms, 10us, 42ns, 2s) and sizes
 * (64K, 1M, 2G). No floating point anywhere: what is printed or parsed is exact.
 */
#ifndef ETLKIT_SRC_OUT_NUM_H
#define ETLKIT_SRC_OUT_NUM_H

#include <stddef.h>
#include <stdint.h>
#include "base/sat.h" /* div_round_sat: the rounding of what is shown */

/*
 * Decimal v into p (20 bytes at most, no NUL); returns the characters written. The
 * one digit formatter: inline for the per-event writers (ln_u), out of line as
 * fmt_u64 for everyone else (inlined everywhere it costs more than it saves).
 */
static inline size_t num_u64_inline(char *p, uint64_t v)
{
    /* Two digits per division, written in place from the end. */
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    static const uint64_t p10[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
                                     1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
                                     100000000000000u, 1000000000000000u, 10000000000000000u,
                                     100000000000000000u, 1000000000000000000u, 10000000000000000000u};
    if (v < 10) {
        *p = (char)('0' + v);
        return 1;
    }
    if (v < 100) {
        p[0] = pairs[v * 2];
        p[1] = pairs[v * 2 + 1];
        return 2;
    }
    unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12; /* log10 from log2, maybe one over */
    size_t n = t + 1 - (v < p10[t]);
    char *e = p + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        e -= 2;
        e[0] = pairs[d];
        e[1] = pairs[d + 1];
    }
    if (v >= 10) {
        e[-2] = pairs[v * 2];
        e[-1] = pairs[v * 2 + 1];
    } else {
        e[-1] = (char)('0' + v);
    }
    return n;
}

static inline size_t num_i64_inline(char *p, int64_t v)
{
    if (v >= 0) return num_u64_inline(p, (uint64_t)v);
    p[0] = '-';
    return 1 + num_u64_inline(p + 1, (uint64_t)0 - (uint64_t)v);
}

/* The same out of line: unsigned (20 bytes at most), signed (21, INT64_MIN included). */
size_t fmt_u64(char *p, uint64_t v);
size_t fmt_i64(char *p, int64_t v);
/* "0x" and lowercase hexadecimal digits, no leading zero (as "%#" PRIx64 but "0x0"): 18 bytes at most, no NUL. */
size_t fmt_hex(char *p, uint64_t v);

/* A fixed-point decimal (v / 10^decimals, decimals <= 9) into out[32], exactly; e.g. (12345, 3) -> "12.345". */
const char *fmt_fixed(char out[32], int64_t v, unsigned decimals);
/* The same, returning its length. */
size_t fmt_fixed_n(char out[32], int64_t v, unsigned decimals);
/*
 * Durations for people: "12.345 ms", "1.234 s", "850 ns"; into out[32]. Rounded to the digits
 * shown (div_round_sat: 93,085,700 ns is 93.086 ms), in the unit the rounded value has
 * (999,999,600 ns is 1.000 s, not 1000.000 ms).
 */
const char *fmt_dur(char out[32], int64_t ns);

/*
 * An unsigned integer, the whole of s: decimal digits only (base 10), or also 0x/0X
 * and hexadecimal digits (base 16 when prefixed, given base 0). No sign, no space.
 * Returns 0 and *out, or -1 if s is empty, holds anything else or is above max.
 */
int num_parse_u64(const char *s, unsigned base, uint64_t max, uint64_t *out);
/*
 * A size in bytes: decimal digits, then optionally K, M or G (x 1024, 1024^2, 1024^3;
 * either case, "KiB", "MB" and the like too). Returns 0 and *out, or -1 (junk, overflow).
 */
int num_parse_size(const char *s, uint64_t *out);
/*
 * A fixed-point decimal I[.F] (digits, at most 18 after the point) scaled by
 * 10^decimals (decimals <= 18), exactly: fraction digits past those kept are
 * truncated. *rest is what follows (a unit: the caller checks it). Returns 0, or
 * -1 (no number, overflow).
 */
int num_parse_fixed(const char *s, unsigned decimals, uint64_t *out, const char **rest);
/*
 * A duration, the one time syntax of every option (--range, --interval, --fail-if...):
 * [-]I[.F][e[+-]N][unit], unit s (the default), ms, us (or µs) or ns, exact; at most
 * 18 fraction digits. Returns 0 and *ns; -1 (empty, junk, unknown unit, |value| above
 * INT64_MAX ns); or NUM_DUR_SUB_NS when it has a part of a nanosecond (0.5ns, 1e-10):
 * times are whole nanoseconds, and a value cut to one is not what was asked.
 */
#define NUM_DUR_SUB_NS (-2)
int num_parse_dur(const char *s, int64_t *ns);
/* A duration's unit ("" s ms us µs ns) in ns, a power of ten; 0 when it is none of them. */
uint64_t num_dur_unit(const char *u);

#endif

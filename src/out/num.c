/* num.c - see num.h. */
#include "out/num.h"

#include <string.h>

size_t fmt_u64(char *p, uint64_t v) { return num_u64_inline(p, v); }
size_t fmt_i64(char *p, int64_t v) { return num_i64_inline(p, v); }

size_t fmt_hex(char *p, uint64_t v)
{
    size_t n = v ? (size_t)(67 - __builtin_clzll(v)) / 4 : 1;
    p[0] = '0';
    p[1] = 'x';
    for (size_t i = n + 2; i-- > 2; v >>= 4) p[i] = "0123456789abcdef"[v & 15];
    return n + 2;
}

size_t fmt_fixed_n(char out[32], int64_t v, unsigned decimals)
{
    uint64_t p = 1;
    for (unsigned i = 0; i < decimals; i++) p *= 10;
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *o = out;
    if (v < 0) *o++ = '-';
    o += fmt_u64(o, a / p);
    if (decimals) {
        *o++ = '.';
        uint64_t f = a % p;
        for (unsigned i = decimals; i-- > 0;) {
            o[i] = (char)('0' + f % 10);
            f /= 10;
        }
        o += decimals;
    }
    *o = 0;
    return (size_t)(o - out);
}

const char *fmt_fixed(char out[32], int64_t v, unsigned decimals)
{
    fmt_fixed_n(out, v, decimals);
    return out;
}

const char *fmt_dur(char out[32], int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns; /* INT64_MIN too, unwrapped */
    size_t n;
    const char *unit;
    /* At most 20 digits, a sign and a point: the unit always fits. |ns| <= 2^63: no sum below overflows. */
    uint64_t r;
    unsigned d;
    if (a < 1000) r = a, d = 0, unit = " ns";
    else if ((r = (a + 5) / 10) < 100000) d = 2, unit = " us";
    else if ((r = (a + 500) / 1000) < 1000000) d = 3, unit = " ms";
    else r = (a + 500000) / 1000000, d = 3, unit = " s";
    n = fmt_fixed_n(out, ns < 0 ? -(int64_t)r : (int64_t)r, d);
    memcpy(out + n, unit, strlen(unit) + 1);
    return out;
}

/* Digits of base (10 or 16) from p into *x, at least one; returns the end, or NULL (none, or above max). */
static const char *digits(const char *p, unsigned base, uint64_t max, uint64_t *x)
{
    const char *start = p;
    uint64_t v = 0;
    for (;; p++) {
        unsigned d;
        if (*p >= '0' && *p <= '9') d = (unsigned)(*p - '0');
        else if (base == 16 && *p >= 'a' && *p <= 'f') d = (unsigned)(*p - 'a' + 10);
        else if (base == 16 && *p >= 'A' && *p <= 'F') d = (unsigned)(*p - 'A' + 10);
        else break;
        if (v > (max - d) / base) return NULL;
        v = v * base + d;
    }
    if (p == start) return NULL;
    *x = v;
    return p;
}

int num_parse_u64(const char *s, unsigned base, uint64_t max, uint64_t *out)
{
    if (!s) return -1;
    unsigned b = 10;
    if (base != 10 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
        b = 16;
        s += 2;
    }
    uint64_t x;
    const char *e = digits(s, b, max, &x);
    if (!e || *e) return -1;
    *out = x;
    return 0;
}

int num_parse_size(const char *s, uint64_t *out)
{
    if (!s) return -1;
    uint64_t x;
    const char *p = digits(s, 10, UINT64_MAX, &x);
    if (!p) return -1;
    if (*p) {
        unsigned shift;
        switch (*p) {
        case 'k': case 'K': shift = 10; break;
        case 'm': case 'M': shift = 20; break;
        case 'g': case 'G': shift = 30; break;
        default: return -1;
        }
        p++;
        if (*p == 'i' || *p == 'I') p++;
        if (*p == 'b' || *p == 'B') p++;
        if (*p || x > (UINT64_MAX >> shift)) return -1;
        x <<= shift;
    }
    *out = x;
    return 0;
}

/*
 * A decimal I[.F] at p (it starts with a digit or the point): the whole part into
 * *whole, the fraction's digits (18 at most) into *frac and their count into *fd.
 * Returns the end, or NULL (nothing, whole part over 64 bits, 19 fraction digits).
 */
static const char *decimal(const char *p, uint64_t *whole, uint64_t *frac, unsigned *fd)
{
    if (!(*p >= '0' && *p <= '9') && *p != '.') return NULL;
    *whole = *frac = 0;
    *fd = 0;
    if (*p != '.' && !(p = digits(p, 10, UINT64_MAX, whole))) return NULL;
    if (*p == '.') {
        for (p++; *p >= '0' && *p <= '9'; p++) {
            if (*fd == 18) return NULL;
            *frac = *frac * 10 + (uint64_t)(*p - '0');
            ++*fd;
        }
    }
    return p;
}

int num_parse_fixed(const char *s, unsigned decimals, uint64_t *out, const char **rest)
{
    uint64_t whole, frac, scale = 1;
    unsigned fd;
    const char *p = s ? decimal(s, &whole, &frac, &fd) : NULL;
    if (!p || decimals > 18) return -1;
    for (unsigned k = 0; k < decimals; k++) scale *= 10;
    for (; fd > decimals; fd--) frac /= 10; /* digits past the last kept: truncated */
    for (; fd < decimals; fd++) frac *= 10;
    if (whole > (UINT64_MAX - frac) / scale) return -1;
    *out = whole * scale + frac;
    *rest = p;
    return 0;
}

uint64_t num_dur_unit(const char *u)
{
    if (*u == 0 || strcmp(u, "s") == 0) return 1000000000u;
    if (strcmp(u, "ms") == 0) return 1000000u;
    /* us, and µs as the CSV headers write it (U+00B5 MICRO SIGN; U+03BC, the Greek letter, too) */
    if (strcmp(u, "us") == 0 || strcmp(u, "\xC2\xB5s") == 0 || strcmp(u, "\xCE\xBCs") == 0) return 1000u;
    if (strcmp(u, "ns") == 0) return 1u;
    return 0;
}

int num_parse_dur(const char *s, int64_t *ns)
{
    if (!s) return -1;
    int neg = *s == '-';
    uint64_t whole, frac;
    unsigned fd;
    const char *p = decimal(s + neg, &whole, &frac, &fd);
    if (!p) return -1;
    long ex = 0; /* e[+-]N, as strtod and compare's --fail-if read it */
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') || ((p[1] == '+' || p[1] == '-') && p[2] >= '0' && p[2] <= '9'))) {
        int eneg = p[1] == '-';
        p += 1 + (p[1] == '+' || p[1] == '-');
        for (; *p >= '0' && *p <= '9'; p++)
            if (ex < 100000) ex = ex * 10 + (*p - '0');
        if (eneg) ex = -ex;
    }
    uint64_t unit = num_dur_unit(p); /* ns per unit: a power of ten */
    if (!unit) return -1;
    /* Exact: the digits (below 10^38) times 10 to the power of the exponent, the unit's, less the fraction's. */
    unsigned __int128 v = (unsigned __int128)whole;
    for (unsigned i = 0; i < fd; i++) v *= 10;
    v += frac;
    long e = ex - (long)fd;
    for (uint64_t u = unit; u > 1; u /= 10) e++;
    for (; e < 0 && v; e++) {
        if (v % 10) return NUM_DUR_SUB_NS; /* a part of a nanosecond: times are whole ns */
        v /= 10;
    }
    for (; e > 0 && v; e--) {
        if (v > INT64_MAX) return -1;
        v *= 10;
    }
    if (v > INT64_MAX) return -1;
    *ns = neg ? -(int64_t)v : (int64_t)v;
    return 0;
}

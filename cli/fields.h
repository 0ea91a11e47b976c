/* fields.h - decoded payloads as JSON objects or key=value text, into a bounded line buffer. */
#ifndef ETLKIT_CLI_FIELDS_H
#define ETLKIT_CLI_FIELDS_H

#include <stdint.h>
#include <string.h>
#include "etlkit/etlkit.h"

/* A line under construction. Appends never write past cap; `cut` says something was dropped. */
typedef struct line {
    char *b;
    size_t n, cap;
    int json;   /* 1: JSON object members; 0: " key=value" text */
    int first;  /* no member written yet at this nesting level */
    int cut;
} line;

/*
 * The appends below run for every field of every dumped line: inline, so that a key's
 * length is a constant and its copy a few moves, and numbers are written in place.
 */
static inline void ln_raw(line *l, const char *s, size_t n)
{
    if (l->n + n + 1 > l->cap) {
        l->cut = 1;
        return;
    }
    memcpy(l->b + l->n, s, n);
    l->n += n;
}

static inline void ln_key(line *l, const char *key)
{
    size_t k = strlen(key);
    if (l->n + k + 5 > l->cap) {
        l->cut = 1;
        return;
    }
    char *o = l->b + l->n;
    if (l->json) {
        if (!l->first) *o++ = ',';
        *o++ = '"';
        memcpy(o, key, k);
        o += k;
        *o++ = '"';
        *o++ = ':';
    } else {
        *o++ = ' ';
        memcpy(o, key, k);
        o += k;
        *o++ = '=';
    }
    l->n = (size_t)(o - l->b);
    l->first = 0;
}

/* Decimal v at l's end (room checked by the caller: 20 bytes). */
static inline void ln_digits(line *l, uint64_t v)
{
    static const char pairs[201] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                   "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                   "8081828384858687888990919293949596979899";
    char *o = l->b + l->n;
    if (v < 10) {
        *o = (char)('0' + v);
        l->n += 1;
        return;
    }
    if (v < 100) {
        memcpy(o, pairs + 2 * v, 2);
        l->n += 2;
        return;
    }
    static const uint64_t p10[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
                                     1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
                                     100000000000000u, 1000000000000000u, 10000000000000000u,
                                     100000000000000000u, 1000000000000000000u, 10000000000000000000u};
    unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12; /* log10 from log2, maybe one over */
    unsigned n = t + 1 - (v < p10[t]);
    char *e = o + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        e -= 2;
        memcpy(e, pairs + d, 2);
    }
    if (v >= 10) memcpy(e - 2, pairs + 2 * v, 2);
    else e[-1] = (char)('0' + v);
    l->n += n;
}

static inline void ln_u(line *l, const char *key, uint64_t v)
{
    ln_key(l, key);
    if (l->n + 22 > l->cap) {
        l->cut = 1;
        return;
    }
    ln_digits(l, v);
}

static inline void ln_i(line *l, const char *key, int64_t v)
{
    ln_key(l, key);
    if (l->n + 22 > l->cap) {
        l->cut = 1;
        return;
    }
    if (v < 0) l->b[l->n++] = '-';
    ln_digits(l, v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v);
}

void ln_s(line *l, const char *key, const char *s);
void ln_open(line *l, const char *key);  /* "key":{ ... */
void ln_close(line *l);                  /* } */

/*
 * The payload fields of a decoded event (spec names: NewThreadId, OldThreadState, ...),
 * wait reasons, states and modes also by name. Nothing for kind OTHER.
 */
void fields_event(line *l, const etl_event *ev, unsigned wait_bias);
/* One switch (a CSwitch or an expanded compact record): only the fields it carries. */
void fields_cswitch(line *l, const etl_cswitch *sw);

#endif

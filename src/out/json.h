/*
 * json.h - the one JSON writer, in two forms sharing one string escaper and one
 * digit formatter (num.h):
 *
 *   jw_*  a streaming writer to a FILE that tracks nesting and commas: reports,
 *         summaries, anything with nested objects and arrays;
 *   ln_*  a bounded line buffer, appended to inline (a key's length is a constant,
 *         numbers are written in place): dump's events, the synthesizer's ground
 *         truth, switches' rows; the same buffer also writes " key=value" text.
 *
 * Numbers are exact integers (durations in ns) or exact fixed-point; strings are
 * always valid JSON and valid UTF-8, whatever bytes the trace held.
 */
#ifndef ETLKIT_SRC_OUT_JSON_H
#define ETLKIT_SRC_OUT_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "out/num.h"

/*
 * Appends s as a JSON string to buf[len..cap) and returns the new length. Always
 * valid JSON and UTF-8: invalid bytes become U+FFFD, control characters (C0, C1,
 * U+2028/U+2029, bidirectional formatting; base/textsafe.h) are \u escapes, and a
 * string that does not fit is cut at a character boundary and ends with U+2026.
 */
size_t json_str_buf(char *buf, size_t len, size_t cap, const char *s);
/* JSON string (quotes included) to f, as json_str_buf writes it. */
void json_str(FILE *f, const char *s);
/*
 * Copies a JSON document into an HTML <script> element's text: every '<', '>' and
 * '&' (outside strings JSON has none) becomes \u003c, \u003e, \u0026, so no string
 * in the data can close the element; the document parses to the same values.
 */
void json_script_safe(FILE *f, const char *json, size_t n);

typedef struct jw {
    FILE *f;
    unsigned depth;
    unsigned char first[64]; /* no member written yet at this depth */
} jw;

void jw_init(jw *w, FILE *f);
/* key may be NULL inside arrays or at the top level. */
void jw_obj(jw *w, const char *key);
void jw_obj_end(jw *w);
void jw_arr(jw *w, const char *key);
void jw_arr_end(jw *w);
void jw_u64(jw *w, const char *key, uint64_t v);
void jw_i64(jw *w, const char *key, int64_t v);
void jw_str(jw *w, const char *key, const char *s);
void jw_null(jw *w, const char *key);
void jw_bool(jw *w, const char *key, int v);
/* A fixed-point number: v / 10^decimals, printed exactly ("12.345"). */
void jw_fixed(jw *w, const char *key, int64_t v, unsigned decimals);
/* Ends the document with a newline. */
void jw_end(jw *w);

/* A line under construction. Appends never write past cap (one byte is kept for a NUL); `cut` says something was dropped. */
typedef struct ln_buf {
    char *b;
    size_t n, cap;
    int json;   /* 1: JSON object members; 0: " key=value" text */
    int first;  /* no member written yet at this nesting level */
    int cut;
} ln_buf;

/*
 * n bytes from s to o, reading and writing only those: short ones (keys, numbers,
 * names) as two overlapping fixed moves, not a call to memcpy.
 */
/* The appends every dumped field makes: inlined at each call, so a key's length is a constant (GCC keeps them out of line otherwise: 7% more instructions for dump --format jsonl). */
#define LN_HOT static inline __attribute__((always_inline))

static inline void ln_copy(char *o, const char *s, size_t n)
{
    if (n >= 16 && n <= 32) {
        memcpy(o, s, 16);
        memcpy(o + n - 16, s + n - 16, 16);
    } else if (n >= 8 && n < 16) {
        memcpy(o, s, 8);
        memcpy(o + n - 8, s + n - 8, 8);
    } else if (n >= 4 && n < 8) {
        memcpy(o, s, 4);
        memcpy(o + n - 4, s + n - 4, 4);
    } else if (n < 4) {
        for (size_t i = 0; i < n; i++) o[i] = s[i];
    } else {
        memcpy(o, s, n);
    }
}

LN_HOT void ln_raw(ln_buf *l, const char *s, size_t n)
{
    if (l->n + n + 1 > l->cap) {
        l->cut = 1;
        return;
    }
    ln_copy(l->b + l->n, s, n);
    l->n += n;
}

/* A key of k bytes (no escaping: keys are etlkit's identifiers); NULL: an array element, its comma only. */
LN_HOT void ln_keyn(ln_buf *l, const char *key, size_t k)
{
    if (l->n + k + 5 > l->cap) {
        l->cut = 1;
        return;
    }
    char *o = l->b + l->n;
    if (l->json) {
        if (!l->first) *o++ = ',';
        if (key) {
            *o++ = '"';
            ln_copy(o, key, k);
            o += k;
            *o++ = '"';
            *o++ = ':';
        }
    } else {
        *o++ = ' ';
        if (key) {
            ln_copy(o, key, k);
            o += k;
            *o++ = '=';
        }
    }
    l->n = (size_t)(o - l->b);
    l->first = 0;
}

LN_HOT void ln_key(ln_buf *l, const char *key) { ln_keyn(l, key, key ? strlen(key) : 0); }

/* The key, and room for a number (21 bytes) after it; 0: the line is cut. */
LN_HOT int ln_num_key(ln_buf *l, const char *key)
{
    ln_key(l, key);
    if (l->n + 22 > l->cap) {
        l->cut = 1;
        return 0;
    }
    return 1;
}

LN_HOT void ln_u(ln_buf *l, const char *key, uint64_t v)
{
    if (ln_num_key(l, key)) l->n += num_u64_inline(l->b + l->n, v);
}

LN_HOT void ln_i(ln_buf *l, const char *key, int64_t v)
{
    if (ln_num_key(l, key)) l->n += num_i64_inline(l->b + l->n, v);
}

static inline void ln_bool(ln_buf *l, const char *key, int v)
{
    ln_key(l, key);
    if (v) ln_raw(l, "true", 4);
    else ln_raw(l, "false", 5);
}

/*
 * A string value (after its key): JSON-escaped, or as text (text.h's escapes; quoted
 * when it has spaces or is empty). A long one is cut, not the rest of the line.
 */
void ln_stext(ln_buf *l, const char *s); /* the text form of ln_sval */

static inline void ln_sval(ln_buf *l, const char *s)
{
    if (l->cut) return;
    if (!l->json) {
        ln_stext(l, s);
        return;
    }
    /* Leave room for the rest of the line: a long value is cut, not the record. */
    size_t room = l->cap - l->n;
    size_t cap = room > 4096 ? l->n + room - 1024 : l->cap;
    l->n = json_str_buf(l->b, l->n, cap, s);
}

static inline void ln_s(ln_buf *l, const char *key, const char *s)
{
    ln_key(l, key);
    ln_sval(l, s);
}
/* An address as the string "0x..." (lowercase): JSON numbers above 2^53 lose precision or fail to parse. */
void ln_hex(ln_buf *l, const char *key, uint64_t v);
void ln_open(ln_buf *l, const char *key);  /* "key":{ ... */
void ln_close(ln_buf *l);                  /* } */
void ln_arr(ln_buf *l, const char *key);   /* "key":[ ... (JSON only) */
void ln_arr_end(ln_buf *l);                /* ] */

#endif

/*
 * kstr.h - the NUL-terminated strings inside kernel payloads (ANSI: unit 1,
 * UTF-16LE: unit 2), read as views and written back, shared by the Thread and
 * Process codecs.
 */
#ifndef ETLKIT_SRC_KERNEL_KSTR_H
#define ETLKIT_SRC_KERNEL_KSTR_H

#include <string.h>
#include "etlkit/kernel.h"
#include "base/bytes.h"

/* A string of unit-byte characters from the front of *rest, which moves past it. */
static inline etl_kstr kstr_take(etl_span *rest, unsigned unit)
{
    etl_kstr s;
    size_t n = unit == 2 ? etl_utf16_len(*rest, &s.terminated) : etl_ansi_len(*rest, &s.terminated);
    s.text = etl_span_sub(*rest, 0, n);
    *rest = etl_span_from(*rest, s.terminated ? n + unit : rest->n);
    return s;
}

/* Bytes a string takes with its terminator; 0 if it cannot be written (odd length, inner NUL). */
static inline size_t kstr_size(const etl_kstr *s, unsigned unit)
{
    const uint8_t *t = s->text.p;
    if (s->text.n % unit) return 0;
    for (size_t i = 0; i < s->text.n; i += unit)
        if (t[i] == 0 && (unit == 1 || t[i + 1] == 0)) return 0;
    return s->text.n + unit;
}

/* Writes the string and its terminator at o; returns the end. */
static inline uint8_t *kstr_put(uint8_t *o, const etl_kstr *s, unsigned unit)
{
    if (s->text.n) memcpy(o, s->text.p, s->text.n);
    memset(o + s->text.n, 0, unit);
    return o + s->text.n + unit;
}

#endif

/*
 * parquet_encode.c - the value encodings of the Parquet writer (Encodings.md):
 * the byte buffer they fill, bit packing (least significant bit first), the
 * RLE/bit-packed hybrid (definition levels and dictionary indices), DELTA_BINARY_PACKED
 * (times and counters) and PLAIN booleans. PLAIN integers and strings are plain
 * little-endian bytes (pq_buf_le32/le64, a 4-byte length before a string).
 */
#include <stdlib.h>
#include "export/parquet.h"

bool pq_buf_reserve(pq_buf *b, size_t more)
{
    if (b->oom) return false;
    if (b->cap - b->n >= more) return true;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap - b->n < more) {
        if (cap > SIZE_MAX / 2) {
            b->oom = true;
            return false;
        }
        cap *= 2;
    }
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        b->oom = true;
        return false;
    }
    b->p = p;
    b->cap = cap;
    return true;
}

void pq_buf_put(pq_buf *b, const void *p, size_t n)
{
    if (!n || !pq_buf_reserve(b, n)) return;
    memcpy(b->p + b->n, p, n);
    b->n += n;
}

void pq_buf_u8(pq_buf *b, uint8_t v)
{
    if (!pq_buf_reserve(b, 1)) return;
    b->p[b->n++] = v;
}

void pq_buf_le32(pq_buf *b, uint32_t v)
{
    if (!pq_buf_reserve(b, 4)) return;
    for (int i = 0; i < 4; i++) b->p[b->n++] = (uint8_t)(v >> 8 * i);
}

void pq_buf_le64(pq_buf *b, uint64_t v)
{
    if (!pq_buf_reserve(b, 8)) return;
    for (int i = 0; i < 8; i++) b->p[b->n++] = (uint8_t)(v >> 8 * i);
}

void pq_buf_varint(pq_buf *b, uint64_t v)
{
    if (!pq_buf_reserve(b, 10)) return;
    while (v >= 0x80) {
        b->p[b->n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    b->p[b->n++] = (uint8_t)v;
}

void pq_buf_free(pq_buf *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

unsigned pq_bit_width(uint64_t v)
{
    unsigned w = 0;
    while (v) {
        w++;
        v >>= 1;
    }
    return w;
}

/* ---- bit packing ---------------------------------------------------------------------------- */

typedef struct bitw {
    uint8_t *p;     /* room reserved by the caller */
    uint64_t acc;   /* bits not yet written, fewer than 8 between calls */
    unsigned nb;
} bitw;

/* width <= 32: the accumulator holds fewer than 8 bits between calls, so 40 at most. */
static inline void bw_put32(bitw *w, uint64_t v, unsigned width)
{
    w->acc |= (v & ((UINT64_C(1) << width) - 1)) << w->nb;
    w->nb += width;
    while (w->nb >= 8) {
        *w->p++ = (uint8_t)w->acc;
        w->acc >>= 8;
        w->nb -= 8;
    }
}

static inline void bw_put(bitw *w, uint64_t v, unsigned width)
{
    if (width > 32) {
        bw_put32(w, v & 0xFFFFFFFFu, 32);
        v >>= 32;
        width -= 32;
    }
    bw_put32(w, v, width);
}

static void bw_flush(bitw *w)
{
    if (w->nb) *w->p++ = (uint8_t)w->acc;
    w->acc = 0;
    w->nb = 0;
}

/* The length of the run of values equal to v[i]. */
static size_t run_at(const uint32_t *v, size_t n, size_t i)
{
    size_t j = i + 1;
    while (j < n && v[j] == v[i]) j++;
    return j - i;
}

void pq_rle_hybrid(pq_buf *b, const uint32_t *v, size_t n, unsigned width)
{
    unsigned bytes = (width + 7) / 8;
    size_t i = 0;
    while (i < n && !b->oom) {
        size_t r = run_at(v, n, i);
        if (r >= 8) { /* an RLE run: its length, then the value in whole bytes */
            pq_buf_varint(b, (uint64_t)r << 1);
            for (unsigned k = 0; k < bytes; k++) pq_buf_u8(b, (uint8_t)(v[i] >> 8 * k));
            i += r;
            continue;
        }
        /* Bit-packed groups of 8 until a run of 8 starts on a group's boundary; the last group padded with 0. */
        size_t start = i;
        do {
            i += 8;
        } while (i < n && run_at(v, n, i) < 8);
        size_t end = i < n ? i : n, groups = (i - start) / 8;
        pq_buf_varint(b, (uint64_t)groups << 1 | 1);
        if (!pq_buf_reserve(b, groups * width + 8)) return;
        bitw w = {b->p + b->n, 0, 0};
        for (size_t k = start; k < start + groups * 8; k++) bw_put32(&w, k < end ? v[k] : 0, width);
        bw_flush(&w);
        b->n = (size_t)(w.p - b->p);
        i = end;
    }
}

void pq_delta_binary_packed(pq_buf *b, const int64_t *v, size_t n)
{
    enum { BLOCK = 128, MINI = 4, PER_MINI = BLOCK / MINI };
    pq_buf_varint(b, BLOCK);
    pq_buf_varint(b, MINI);
    pq_buf_varint(b, n);
    pq_buf_varint(b, pq_zigzag(n ? v[0] : 0));
    uint64_t d[BLOCK];
    for (size_t i = 1; i < n && !b->oom;) {
        size_t m = n - i < BLOCK ? n - i : BLOCK;
        int64_t min = INT64_MAX;
        /* Deltas wrap modulo 2^64, as the reader adds them. */
        for (size_t j = 0; j < m; j++) {
            d[j] = (uint64_t)v[i + j] - (uint64_t)v[i + j - 1];
            if ((int64_t)d[j] < min) min = (int64_t)d[j];
        }
        pq_buf_varint(b, pq_zigzag(min));
        unsigned width[MINI];
        for (size_t k = 0; k < MINI; k++) {
            uint64_t max = 0;
            for (size_t j = k * PER_MINI; j < m && j < (k + 1) * PER_MINI; j++) {
                d[j] -= (uint64_t)min;
                if (d[j] > max) max = d[j];
            }
            width[k] = pq_bit_width(max); /* 0 for a miniblock past the values (not written) */
            pq_buf_u8(b, (uint8_t)width[k]);
        }
        if (!pq_buf_reserve(b, MINI * PER_MINI * 8 + 8)) return;
        bitw w = {b->p + b->n, 0, 0};
        for (size_t k = 0; k < MINI && k * PER_MINI < m; k++) {
            for (size_t j = k * PER_MINI; j < (k + 1) * PER_MINI; j++) bw_put(&w, j < m ? d[j] : 0, width[k]);
            bw_flush(&w); /* 32 values: whole bytes */
        }
        b->n = (size_t)(w.p - b->p);
        i += m;
    }
}

void pq_plain_bool(pq_buf *b, const int64_t *v, size_t n)
{
    if (!pq_buf_reserve(b, n / 8 + 1)) return;
    bitw w = {b->p + b->n, 0, 0};
    for (size_t i = 0; i < n; i++) bw_put32(&w, v[i] != 0, 1);
    bw_flush(&w);
    b->n = (size_t)(w.p - b->p);
}

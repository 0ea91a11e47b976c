/*
 * bytes.h - the one place where etlkit reads and writes little-endian integers.
 *
 * Two tiers, on purpose:
 *   etl_span_has(s, off, len)  checks once that [off, off+len) lies inside s;
 *   etl_rd_u16(p) ... etl_rd_u64(p)  then load without checks (memcpy, so any alignment).
 * A decoder validates the span of a structure once and reads its fields with the
 * unchecked loads; nothing else in the tree does pointer arithmetic on file bytes.
 * The etl_ld_* forms combine both for one-off reads.
 */
#ifndef ETLKIT_SRC_BASE_BYTES_H
#define ETLKIT_SRC_BASE_BYTES_H

#include <string.h>
#include "etlkit/base.h"

static inline bool etl_span_has(etl_span s, size_t off, size_t len)
{
    return off <= s.n && len <= s.n - off;
}

/* The sub-span [off, off+len), or an empty span at NULL when it does not fit. */
static inline etl_span etl_span_sub(etl_span s, size_t off, size_t len)
{
    etl_span r = {NULL, 0};
    if (etl_span_has(s, off, len)) {
        r.p = s.p + off;
        r.n = len;
    }
    return r;
}

/* The tail from off, or an empty span when off is past the end. */
static inline etl_span etl_span_from(etl_span s, size_t off)
{
    etl_span r = {NULL, 0};
    if (off <= s.n) {
        r.p = s.p + off;
        r.n = s.n - off;
    }
    return r;
}

static inline uint8_t etl_rd_u8(const uint8_t *p) { return p[0]; }

static inline uint16_t etl_rd_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (uint16_t)p[1] << 8);
}

static inline uint32_t etl_rd_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t etl_rd_u64(const uint8_t *p)
{
    return (uint64_t)etl_rd_u32(p) | (uint64_t)etl_rd_u32(p + 4) << 32;
}

/* A pointer-sized field: 4 or 8 bytes, zero-extended. */
static inline uint64_t etl_rd_ptr(const uint8_t *p, unsigned ptr_size)
{
    return ptr_size == 8 ? etl_rd_u64(p) : etl_rd_u32(p);
}

/* n pointers of ptr_size bytes from p into out (a stack's frames: one test, not one a frame). */
static inline void etl_rd_ptrs(uint64_t *out, const uint8_t *p, unsigned ptr_size, size_t n)
{
    if (ptr_size == 8)
        for (size_t i = 0; i < n; i++) out[i] = etl_rd_u64(p + 8 * i);
    else
        for (size_t i = 0; i < n; i++) out[i] = etl_rd_u32(p + 4 * i);
}

static inline void etl_wr_u8(uint8_t *p, uint8_t v) { p[0] = v; }

static inline void etl_wr_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

static inline void etl_wr_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
}

static inline void etl_wr_u64(uint8_t *p, uint64_t v)
{
    etl_wr_u32(p, (uint32_t)v);
    etl_wr_u32(p + 4, (uint32_t)(v >> 32));
}

static inline void etl_wr_ptr(uint8_t *p, uint64_t v, unsigned ptr_size)
{
    if (ptr_size == 8)
        etl_wr_u64(p, v);
    else
        etl_wr_u32(p, (uint32_t)v);
}

/* Checked one-off loads: false (and *v untouched) when the field does not fit. */
static inline bool etl_ld_u8(etl_span s, size_t off, uint8_t *v)
{
    if (!etl_span_has(s, off, 1)) return false;
    *v = s.p[off];
    return true;
}

static inline bool etl_ld_u16(etl_span s, size_t off, uint16_t *v)
{
    if (!etl_span_has(s, off, 2)) return false;
    *v = etl_rd_u16(s.p + off);
    return true;
}

static inline bool etl_ld_u32(etl_span s, size_t off, uint32_t *v)
{
    if (!etl_span_has(s, off, 4)) return false;
    *v = etl_rd_u32(s.p + off);
    return true;
}

static inline bool etl_ld_u64(etl_span s, size_t off, uint64_t *v)
{
    if (!etl_span_has(s, off, 8)) return false;
    *v = etl_rd_u64(s.p + off);
    return true;
}

static inline void etl_rd_guid(const uint8_t *p, etl_guid *g)
{
    g->data1 = etl_rd_u32(p);
    g->data2 = etl_rd_u16(p + 4);
    g->data3 = etl_rd_u16(p + 6);
    memcpy(g->data4, p + 8, 8);
}

static inline void etl_wr_guid(uint8_t *p, const etl_guid *g)
{
    etl_wr_u32(p, g->data1);
    etl_wr_u16(p + 4, g->data2);
    etl_wr_u16(p + 6, g->data3);
    memcpy(p + 8, g->data4, 8);
}

/*
 * Length in bytes of a NUL-terminated UTF-16LE string at the start of s, without
 * the terminator; *terminated says whether a NUL was found inside s. Odd tails
 * are ignored.
 */
static inline size_t etl_utf16_len(etl_span s, bool *terminated)
{
    size_t i = 0;
    for (; i + 1 < s.n; i += 2) {
        if (s.p[i] == 0 && s.p[i + 1] == 0) {
            if (terminated) *terminated = true;
            return i;
        }
    }
    if (terminated) *terminated = false;
    return i;
}

/* Same for an 8-bit NUL-terminated string. */
static inline size_t etl_ansi_len(etl_span s, bool *terminated)
{
    const void *z = s.n ? memchr(s.p, 0, s.n) : NULL;
    if (terminated) *terminated = z != NULL;
    return z ? (size_t)((const uint8_t *)z - s.p) : s.n;
}

#endif

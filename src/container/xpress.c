/*
 * xpress.c - [MS-XCA] Plain LZ77 ("Xpress"): the decoder ETL buffers need, and
 * the greedy encoder the ETL writer uses.
 *
 * Stream format (MS-XCA 2.3/2.4): a 32-bit little-endian flag word, read from
 * its most significant bit, precedes each group of 32 tokens. Flag 0 is one
 * literal byte; flag 1 is a match: a 16-bit word holding (offset - 1) << 3 |
 * length code. Length code 7 escapes to a half byte (two matches share one
 * byte: the first takes the low nibble, the next the high nibble), 15 in the
 * nibble escapes to a byte, 255 in the byte escapes to a 16-bit length, and 0
 * there to a 32-bit length; those two hold the whole length minus 3.
 * A match flag with no input left ends the stream.
 */
#include "etlkit/compress.h"
#include "base/bytes.h"
#include "container/lzcopy.h"

#if defined(__GNUC__) || defined(__clang__)
#define XP_LIKELY(x) __builtin_expect(!!(x), 1)
#define XP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define XP_LIKELY(x) (x)
#define XP_UNLIKELY(x) (x)
#endif

/* Count of leading zero bits of a non-zero 32-bit value. */
static inline unsigned xp_clz32(uint32_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_clz(v);
#else
    unsigned n = 0;
    while (!(v & 0x80000000u)) {
        v <<= 1;
        n++;
    }
    return n;
#endif
}

static inline unsigned xp_ctz64(uint64_t v)
{
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctzll(v);
#else
    unsigned n = 0;
    while (!(v & 1)) {
        v >>= 1;
        n++;
    }
    return n;
#endif
}

/* ------------------------------------------------------------------------- */
/* Decoder                                                                    */

etl_status etl_xpress_decompress(etl_span in, uint8_t *out, size_t out_cap, size_t *out_len)
{
    static const uint8_t empty[1] = {0};
    const uint8_t *ip = in.n ? in.p : empty;
    const uint8_t *const iend = ip + in.n;
    uint8_t sink[1];
    uint8_t *const obase = out_cap ? out : sink;
    uint8_t *op = obase;
    uint8_t *const oend = obase + out_cap;
    const uint8_t *half = NULL; /* byte whose high nibble the next length escape takes */
    uint32_t flags = 0;         /* unread flags, left-aligned */
    unsigned nflags = 0;        /* how many of them remain */
    etl_status st;

    for (;;) {
        if (XP_UNLIKELY(nflags == 0)) {
            if (XP_UNLIKELY((size_t)(iend - ip) < 4)) {
                /* With the output full, what is left can only be padding.
                 * Otherwise the next flag word is missing or cut: a stream
                 * always ends with a set flag that has no match after it. */
                st = op == oend ? ETL_OK : ETL_E_TRUNCATED;
                goto done;
            }
            flags = etl_rd_u32(ip);
            ip += 4;
            nflags = 32;
        }

        if (!(flags & 0x80000000u)) {
            /* A run of literals: as many as there are leading zero flags. */
            unsigned run = flags ? xp_clz32(flags) : 32;
            if (run > nflags) run = nflags;
            size_t in_left = (size_t)(iend - ip), out_left = (size_t)(oend - op);
            if (XP_LIKELY(in_left >= 32 && out_left >= 32)) {
                memcpy(op, ip, 16);
                memcpy(op + 16, ip + 16, 16);
            } else if (run <= in_left && run <= out_left) {
                memcpy(op, ip, run);
            } else {
                size_t k = run;
                if (k > in_left) k = in_left;
                if (k > out_left) k = out_left;
                memcpy(op, ip, k);
                op += k;
                ip += k;
                if (op == oend)
                    /* Output full: fine if only flag bits are left over. */
                    st = ip == iend ? ETL_OK : ETL_E_RANGE;
                else
                    st = ETL_E_TRUNCATED; /* a literal flag without its byte */
                goto done;
            }
            op += run;
            ip += run;
            flags = run >= 32 ? 0 : flags << run;
            nflags -= run;
            continue;
        }

        /* A match. */
        flags <<= 1;
        nflags--;
        if (XP_UNLIKELY((size_t)(iend - ip) < 2)) {
            st = ip == iend ? ETL_OK : ETL_E_TRUNCATED; /* no input left: end of stream */
            goto done;
        }
        uint32_t mb = etl_rd_u16(ip);
        ip += 2;
        size_t off = (size_t)(mb >> 3) + 1;
        uint64_t len = mb & 7;
        if (len == 7) {
            if (half == NULL) {
                if (XP_UNLIKELY(ip == iend)) { st = ETL_E_TRUNCATED; goto done; }
                half = ip;
                len = *ip++ & 15u;
            } else {
                len = *half >> 4;
                half = NULL;
            }
            if (len == 15) {
                if (XP_UNLIKELY(ip == iend)) { st = ETL_E_TRUNCATED; goto done; }
                len = *ip++;
                if (len == 255) {
                    if (XP_UNLIKELY((size_t)(iend - ip) < 2)) { st = ETL_E_TRUNCATED; goto done; }
                    len = etl_rd_u16(ip);
                    ip += 2;
                    if (len == 0) {
                        if (XP_UNLIKELY((size_t)(iend - ip) < 4)) { st = ETL_E_TRUNCATED; goto done; }
                        len = etl_rd_u32(ip);
                        ip += 4;
                    }
                    if (XP_UNLIKELY(len < 15 + 7)) { st = ETL_E_CORRUPT; goto done; }
                    len -= 15 + 7;
                }
                len += 15;
            }
            len += 7;
        }
        len += 3;
        if (XP_UNLIKELY(off > (size_t)(op - obase))) { st = ETL_E_CORRUPT; goto done; }
        if (XP_UNLIKELY(len > (uint64_t)(oend - op))) { st = ETL_E_RANGE; goto done; }
        if (XP_LIKELY(off >= 8 && len <= 16 && (size_t)(oend - op) >= 24)) {
            /* The common short match: two fixed 8-byte copies. */
            memcpy(op, op - off, 8);
            memcpy(op + 8, op + 8 - off, 8);
            op += len;
        } else {
            op = etl_lzcopy(op, off, (size_t)len, oend);
        }
    }
done:
    if (out_len) *out_len = (size_t)(op - obase);
    return st;
}

/* ------------------------------------------------------------------------- */
/* Encoder                                                                    */

#define XP_HASH_BITS 14 /* 16384 uint32 entries: 64 KiB of stack */
#define XP_MAX_OFFSET 8192u
#define XP_MIN_MATCH 4 /* the hash covers 4 bytes; 3-byte matches are not searched */

size_t etl_xpress_compress_bound(size_t n)
{
    /* Every token costs at most as many bytes as it covers (a literal 1, a match
     * of length L at most L), so the tokens take <= n bytes; flag words come one
     * per 32 tokens plus the final (possibly all-ones) one. */
    size_t flags = (n / 32 + 1) * 4;
    if (n > SIZE_MAX - flags) return SIZE_MAX;
    return n + flags;
}

static inline uint32_t xp_hash(uint32_t v, unsigned bits)
{
    return (v * 2654435761u) >> (32 - bits);
}

/* The output cursor and the pending flag word of the encoder. */
typedef struct xp_enc {
    uint8_t *out;
    size_t cap;
    size_t op;       /* next output byte */
    size_t flag_pos; /* where the current flag word goes */
    uint64_t flags;  /* flags of the current group, right-aligned */
    unsigned nflags; /* how many */
    size_t half_pos; /* byte holding a free high nibble, or SIZE_MAX */
} xp_enc;

/* Called after adding flags: closes a full group and reserves the next word. */
static inline bool xp_group_done(xp_enc *e)
{
    if (e->nflags < 32) return true;
    etl_wr_u32(e->out + e->flag_pos, (uint32_t)e->flags);
    if (e->cap - e->op < 4) return false;
    e->flag_pos = e->op;
    e->op += 4;
    e->flags = 0;
    e->nflags = 0;
    return true;
}

static bool xp_put_literals(xp_enc *e, const uint8_t *p, size_t n)
{
    while (n) {
        size_t k = 32 - e->nflags;
        if (k > n) k = n;
        if (e->cap - e->op < k) return false;
        memcpy(e->out + e->op, p, k);
        e->op += k;
        p += k;
        n -= k;
        e->flags <<= k;
        e->nflags += (unsigned)k;
        if (!xp_group_done(e)) return false;
    }
    return true;
}

static bool xp_put_match(xp_enc *e, size_t off, size_t len)
{
    size_t t = len - 3;
    size_t need = 2;
    if (t >= 7) {
        size_t r = t - 7;
        if (e->half_pos == SIZE_MAX) need += 1;
        if (r >= 15) need += (r - 15 >= 255) ? (t > 0xFFFF ? 1 + 2 + 4 : 1 + 2) : 1;
    }
    if (e->cap - e->op < need) return false;
    uint8_t *o = e->out;
    etl_wr_u16(o + e->op, (uint16_t)((off - 1) << 3 | (t < 7 ? t : 7)));
    e->op += 2;
    if (t >= 7) {
        size_t r = t - 7;
        unsigned nib = r < 15 ? (unsigned)r : 15u;
        if (e->half_pos == SIZE_MAX) {
            e->half_pos = e->op;
            o[e->op++] = (uint8_t)nib;
        } else {
            o[e->half_pos] |= (uint8_t)(nib << 4);
            e->half_pos = SIZE_MAX;
        }
        if (r >= 15) {
            size_t r2 = r - 15;
            if (r2 < 255) {
                o[e->op++] = (uint8_t)r2;
            } else {
                o[e->op++] = 255;
                if (t <= 0xFFFF) {
                    etl_wr_u16(o + e->op, (uint16_t)t);
                    e->op += 2;
                } else {
                    etl_wr_u16(o + e->op, 0);
                    etl_wr_u32(o + e->op + 2, (uint32_t)t);
                    e->op += 6;
                }
            }
        }
    }
    e->flags = e->flags << 1 | 1;
    e->nflags++;
    return xp_group_done(e);
}

/* Length of the common prefix of a and b, at most (end - b) bytes. */
static inline size_t xp_extend(const uint8_t *a, const uint8_t *b, const uint8_t *end)
{
    const uint8_t *start = b;
    while ((size_t)(end - b) >= 8) {
        uint64_t x = etl_rd_u64(a) ^ etl_rd_u64(b);
        if (x) return (size_t)(b - start) + (xp_ctz64(x) >> 3);
        a += 8;
        b += 8;
    }
    while (b < end && *a == *b) {
        a++;
        b++;
    }
    return (size_t)(b - start);
}

etl_status etl_xpress_compress(const uint8_t *in, size_t n, uint8_t *out, size_t out_cap,
                               size_t *out_len)
{
    if (out_len) *out_len = 0;
    if ((n && !in) || (out_cap && !out)) return ETL_E_INVALID_ARG;
    if (out_cap < 4) return ETL_E_RANGE;

    xp_enc e = {out, out_cap, 4, 0, 0, 0, SIZE_MAX};
    size_t anchor = 0; /* first byte not yet emitted */

    if (n >= 16) {
        uint32_t table[1u << XP_HASH_BITS];
        unsigned hbits = XP_HASH_BITS; /* smaller inputs clear a smaller table */
        while (hbits > 8 && ((size_t)1 << hbits) > n) hbits--;
        memset(table, 0, sizeof table[0] << hbits);
        /* Positions are stored mod 2^32; a candidate is only used after its
         * bytes compare equal, so a stale entry cannot cause a wrong match. */
        const size_t last = n - XP_MIN_MATCH; /* last position a 4-byte hash can start */
        size_t i = 0;
        while (i <= last) {
            uint32_t v = etl_rd_u32(in + i);
            uint32_t h = xp_hash(v, hbits);
            uint32_t dist = (uint32_t)i - table[h];
            table[h] = (uint32_t)i;
            if (dist - 1u < XP_MAX_OFFSET && dist <= i && etl_rd_u32(in + i - dist) == v) {
                const uint8_t *cand = in + i - dist;
                size_t len = XP_MIN_MATCH + xp_extend(cand + XP_MIN_MATCH, in + i + XP_MIN_MATCH, in + n);
                /* Grow backwards over literals that also match. */
                while (i > anchor && (size_t)(cand - in) > 0 && cand[-1] == in[i - 1]) {
                    cand--;
                    i--;
                    len++;
                }
                if (len > 0xFFFFFFFFu) len = 0xFFFFFFFFu;
                if (!xp_put_literals(&e, in + anchor, i - anchor) || !xp_put_match(&e, dist, len))
                    return ETL_E_RANGE;
                i += len;
                anchor = i;
                /* Seed the table near the end of the match for the next search. */
                if (i - 2 <= last) table[xp_hash(etl_rd_u32(in + i - 2), hbits)] = (uint32_t)(i - 2);
            } else {
                /* Step faster through data that does not compress. */
                i += 1 + ((i - anchor) >> 6);
            }
        }
    }
    if (n > anchor && !xp_put_literals(&e, in + anchor, n - anchor)) return ETL_E_RANGE; /* in may be NULL when n is 0 */

    /* Close the last group: unused flags are ones, so the decoder sees a match
     * flag with no input left, which ends the stream (MS-XCA 2.3.4). */
    unsigned fill = 32 - e.nflags;
    uint64_t f = (e.flags << fill) | ((UINT64_C(1) << fill) - 1);
    etl_wr_u32(out + e.flag_pos, (uint32_t)f);
    if (out_len) *out_len = e.op;
    return ETL_OK;
}

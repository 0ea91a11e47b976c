/*
 * xpress_huff.c - [MS-XCA] LZ77+Huffman decoder (COMPRESSION_FORMAT_XPRESS_HUFF).
 *
 * The stream is a series of blocks, each good for 65536 bytes of output (the
 * last match of a block may run past that). A block starts with 256 bytes of
 * 4-bit code lengths for 512 symbols (low nibble = even symbol), which define a
 * canonical Huffman code (shorter codes first, then by symbol value) that must
 * fill the 15-bit code space exactly. Then comes a bit stream read as 16-bit
 * little-endian words, most significant bit first, through a 32-bit window
 * that starts with two words and loads the next word as soon as fewer than 16
 * bits are left (MS-XCA 2.2.4). Symbols 0..255 are literals; 256..511 are
 * matches: low 4 bits = length - 3 (15 escapes to a byte, 255 there to a
 * 16-bit value, 0 there to a 32-bit value, both holding the length - 3), high
 * 4 bits = the number of offset bits that follow the length escapes; offset =
 * (1 << bits) | those bits. Escape bytes are taken from the input right after
 * the words already loaded into the window, and the next block's table starts
 * there too: the bits left in the window are dropped.
 * Symbol 256 ends the stream when it is the last thing in the input; elsewhere
 * it is the match (length 3, offset 1) its value says. Once the output is full
 * only that symbol or zero padding may follow (else ETL_E_RANGE).
 */
#include "etlkit/compress.h"
#include "base/bytes.h"
#include "container/lzcopy.h"

#define XH_SYMBOLS 512
#define XH_MAX_BITS 15
#define XH_TABLE_BITS 11 /* primary lookup; longer codes are decoded canonically */
#define XH_BLOCK 65536u

typedef struct xh_table {
    /* Indexed by the next 11 bits: symbol << 4 | length, or 0 for a longer code. */
    uint16_t fast[1u << XH_TABLE_BITS];
    /* For codes longer than XH_TABLE_BITS, per length: the first code,
     * left-aligned to 15 bits; how many codes; where their symbols start in sorted. */
    uint32_t first[XH_MAX_BITS + 1];
    uint16_t count[XH_MAX_BITS + 1];
    uint16_t base[XH_MAX_BITS + 1];
    uint16_t sorted[XH_SYMBOLS];
} xh_table;

/* Builds the decoder for the 256-byte length table at p. False when the lengths
 * do not fill the code space exactly (over- or under-subscribed, or all zero). */
static bool xh_build(const uint8_t *p, xh_table *t)
{
    uint8_t len[XH_SYMBOLS];
    uint32_t count[XH_MAX_BITS + 1] = {0};
    for (unsigned i = 0; i < 256; i++) {
        len[2 * i] = p[i] & 15;
        len[2 * i + 1] = p[i] >> 4;
        count[p[i] & 15]++;
        count[p[i] >> 4]++;
    }
    uint32_t space = 0;
    for (unsigned l = 1; l <= XH_MAX_BITS; l++) space += count[l] << (XH_MAX_BITS - l);
    if (space != 1u << XH_MAX_BITS) return false;

    memset(t->fast, 0, sizeof t->fast);
    uint32_t code = 0; /* next code, left-aligned to 15 bits */
    unsigned n = 0;
    for (unsigned l = 1; l <= XH_MAX_BITS; l++) {
        t->first[l] = code;
        t->count[l] = (uint16_t)count[l];
        t->base[l] = (uint16_t)n;
        if (!count[l]) continue;
        for (unsigned s = 0; s < XH_SYMBOLS; s++) {
            if (len[s] != l) continue;
            t->sorted[n++] = (uint16_t)s;
            if (l <= XH_TABLE_BITS) {
                uint32_t at = code >> (XH_MAX_BITS - XH_TABLE_BITS);
                uint32_t reps = 1u << (XH_TABLE_BITS - l);
                uint16_t e = (uint16_t)(s << 4 | l);
                for (uint32_t r = 0; r < reps; r++) t->fast[at + r] = e;
            }
            code += 1u << (XH_MAX_BITS - l);
        }
    }
    return true;
}

/* The symbol whose code starts the 32-bit window w; *bits gets its length. */
static inline unsigned xh_decode(const xh_table *t, uint32_t w, unsigned *bits)
{
    uint16_t e = t->fast[w >> (32 - XH_TABLE_BITS)];
    if (e) {
        *bits = e & 15u;
        return e >> 4;
    }
    uint32_t c = w >> (32 - XH_MAX_BITS);
    for (unsigned l = XH_TABLE_BITS + 1; l <= XH_MAX_BITS; l++) {
        uint32_t span = (uint32_t)t->count[l] << (XH_MAX_BITS - l);
        if (c - t->first[l] < span) {
            *bits = l;
            return t->sorted[t->base[l] + ((c - t->first[l]) >> (XH_MAX_BITS - l))];
        }
    }
    *bits = XH_MAX_BITS; /* unreachable: the table is complete */
    return 0;
}

static bool xh_all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i]) return false;
    return true;
}

etl_status etl_xpress_huff_decompress(etl_span in, uint8_t *out, size_t out_cap, size_t *out_len)
{
    static const uint8_t empty[1] = {0};
    const uint8_t *const src = in.n ? in.p : empty;
    const size_t n = in.n;
    size_t ip = 0;
    uint8_t sink[1];
    uint8_t *const obase = out_cap ? out : sink;
    uint8_t *op = obase;
    uint8_t *const oend = obase + out_cap;
    xh_table t;
    etl_status st;

    for (;;) {
        /* A new block. */
        if (n - ip < 256) {
            /* No room for another table: the end when the output is full
             * (MS-XCA 2.2.4); otherwise the input is cut short. */
            st = op == oend ? ETL_OK : ETL_E_TRUNCATED;
            goto done;
        }
        if (op == oend && xh_all_zero(src + ip, n - ip)) { st = ETL_OK; goto done; } /* padding */
        if (!xh_build(src + ip, &t)) { st = ETL_E_CORRUPT; goto done; }
        ip += 256;

        /* The window: w holds 16 + extra valid bits from the top; `real` counts
         * how many of them came from the input rather than zero fill past its end. */
        uint32_t w = 0;
        int extra = 16, real = 0;
        for (int k = 0; k < 2; k++) {
            w <<= 16;
            if (n - ip >= 2) {
                w |= etl_rd_u16(src + ip);
                ip += 2;
                real += 16;
            } else {
                ip = n;
            }
        }
/* Drops nb (<= 16) bits from the window and loads the next word once fewer
 * than 16 remain; past the end of the input the word is zero fill. */
#define XH_CONSUME(nb)                                                 \
    do {                                                               \
        unsigned nb_ = (nb);                                           \
        w <<= nb_;                                                     \
        extra -= (int)nb_;                                             \
        real -= (int)nb_;                                              \
        if (extra < 0) {                                               \
            if (n - ip >= 2) {                                         \
                w |= (uint32_t)etl_rd_u16(src + ip) << -extra;         \
                ip += 2;                                               \
                real += 16;                                            \
            } else {                                                   \
                ip = n;                                                \
            }                                                          \
            extra += 16;                                               \
        }                                                              \
    } while (0)

        uint8_t *const block_start = op;
        for (;;) {
            if ((size_t)(op - block_start) >= XH_BLOCK) break; /* on to the next block */
            unsigned bits;
            unsigned sym = xh_decode(&t, w, &bits);
            if (op == oend) {
                /* Output full: what follows must be the end-of-stream symbol,
                 * or padding (no set bit in the rest of the input). */
                bool pad = (real <= 0 || (w >> (32 - real)) == 0) && xh_all_zero(src + ip, n - ip);
                st = (sym == 256 || pad) ? ETL_OK : ETL_E_RANGE;
                goto done;
            }
            XH_CONSUME(bits);
            if (real < 0) { st = ETL_E_TRUNCATED; goto done; }
            if (sym < 256) {
                *op++ = (uint8_t)sym;
                continue;
            }
            if (sym == 256 && ip >= n) { st = ETL_OK; goto done; } /* end of stream */
            sym -= 256;
            uint64_t len = sym & 15;
            unsigned obits = sym >> 4;
            if (len == 15) {
                if (ip >= n) { st = ETL_E_TRUNCATED; goto done; }
                len = src[ip++];
                if (len == 255) {
                    if (n - ip < 2) { st = ETL_E_TRUNCATED; goto done; }
                    len = etl_rd_u16(src + ip);
                    ip += 2;
                    if (len == 0) {
                        if (n - ip < 4) { st = ETL_E_TRUNCATED; goto done; }
                        len = etl_rd_u32(src + ip);
                        ip += 4;
                    }
                    if (len < 15) { st = ETL_E_CORRUPT; goto done; }
                    len -= 15;
                }
                len += 15;
            }
            len += 3;
            size_t off = ((size_t)1 << obits) | (obits ? (size_t)(w >> (32 - obits)) : 0);
            XH_CONSUME(obits);
            if (real < 0) { st = ETL_E_TRUNCATED; goto done; }
            if (off > (size_t)(op - obase)) { st = ETL_E_CORRUPT; goto done; }
            if (len > (uint64_t)(oend - op)) { st = ETL_E_RANGE; goto done; }
            op = etl_lzcopy(op, off, (size_t)len, oend);
        }
#undef XH_CONSUME
    }
done:
    if (out_len) *out_len = (size_t)(op - obase);
    return st;
}

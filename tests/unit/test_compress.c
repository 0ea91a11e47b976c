/*
 * test_compress.c - the MS-XCA codecs: Plain LZ77 (decode and encode),
 * LZ77+Huffman and LZNT1 (decode).
 *
 * Vectors come from three places: the worked examples of [MS-XCA] section 3
 * (and a Windows output quoted on the cifs-protocol list), streams assembled by
 * hand below, and small test-only encoders (a token-level Plain LZ77 writer, an
 * LZ77+Huffman writer and an LZNT1 writer) whose output is checked against a
 * naive expansion of the same tokens. The real-data tests expand every
 * compressed buffer of the shared ETL samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/compress.h"
#include "base/bytes.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                    */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    assert_non_null(p);
    return p;
}

static etl_span span_of(const uint8_t *p, size_t n)
{
    etl_span s = {p, n};
    return s;
}

/* Decodes hex `hex` with `fmt` into a buffer of exactly cap bytes. */
static etl_status dec_hex(etl_compression fmt, const char *hex, size_t cap, uint8_t **outp,
                          size_t *len)
{
    size_t n = tu_hex(hex, NULL, 0);
    uint8_t *in = xmalloc(n);
    tu_hex(hex, in, n);
    uint8_t *out = xmalloc(cap);
    *len = (size_t)-1;
    etl_status st = etl_decompress(fmt, span_of(in, n), out, cap, len);
    free(in);
    if (outp)
        *outp = out;
    else
        free(out);
    return st;
}

static etl_status dec_hex_len(etl_compression fmt, const char *hex, size_t cap, size_t *len)
{
    return dec_hex(fmt, hex, cap, NULL, len);
}

/* A growable byte buffer. */
typedef struct bbuf {
    uint8_t *p;
    size_t n, cap;
} bbuf;

static void bb_reserve(bbuf *b, size_t more)
{
    if (b->cap - b->n >= more) return;
    size_t nc = b->cap ? b->cap : 256;
    while (nc - b->n < more) nc *= 2;
    b->p = realloc(b->p, nc);
    assert_non_null(b->p);
    b->cap = nc;
}

static size_t bb_put(bbuf *b, const void *p, size_t n)
{
    bb_reserve(b, n);
    size_t at = b->n;
    if (n) memcpy(b->p + at, p, n);
    b->n += n;
    return at;
}

static size_t bb_u8(bbuf *b, unsigned v)
{
    uint8_t x = (uint8_t)v;
    return bb_put(b, &x, 1);
}

static size_t bb_u16(bbuf *b, unsigned v)
{
    uint8_t x[2];
    etl_wr_u16(x, (uint16_t)v);
    return bb_put(b, x, 2);
}

static size_t bb_u32(bbuf *b, uint32_t v)
{
    uint8_t x[4];
    etl_wr_u32(x, v);
    return bb_put(b, x, 4);
}

/* Tokens, and the naive expansion every test encoder is checked against. */
typedef struct tok {
    uint32_t len; /* 0 = literal */
    uint32_t off;
    uint8_t lit;
} tok;

typedef struct toks {
    tok *t;
    size_t n, cap;
} toks;

static void tk_push(toks *v, uint32_t len, uint32_t off, uint8_t lit)
{
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 64;
        v->t = realloc(v->t, v->cap * sizeof *v->t);
        assert_non_null(v->t);
    }
    tok t = {len, off, lit};
    v->t[v->n++] = t;
}

static uint8_t *tk_expand(const toks *v, size_t *n)
{
    size_t total = 0;
    for (size_t i = 0; i < v->n; i++) total += v->t[i].len ? v->t[i].len : 1;
    uint8_t *o = xmalloc(total);
    size_t p = 0;
    for (size_t i = 0; i < v->n; i++) {
        if (!v->t[i].len) {
            o[p++] = v->t[i].lit;
        } else {
            assert_true(v->t[i].off >= 1 && v->t[i].off <= p);
            for (uint32_t k = 0; k < v->t[i].len; k++, p++) o[p] = o[p - v->t[i].off];
        }
    }
    *n = total;
    return o;
}

/* Random tokens: literals, and matches with offsets <= max_off and lengths drawn
 * so that every length escape turns up. */
static void tk_random(toks *v, uint64_t *rs, size_t count, uint32_t max_off, uint32_t max_len)
{
    size_t pos = 0;
    for (size_t i = 0; i < count; i++) {
        uint64_t r = tu_rand(rs);
        if (pos == 0 || r % 3 == 0) {
            tk_push(v, 0, 0, (uint8_t)(tu_rand(rs) % 8 + 'a'));
            pos++;
            continue;
        }
        uint32_t lim = pos < max_off ? (uint32_t)pos : max_off;
        uint32_t off;
        switch (tu_rand(rs) % 4) {
        case 0: off = 1 + (uint32_t)(tu_rand(rs) % (lim < 8 ? lim : 8)); break;
        default: off = 1 + (uint32_t)(tu_rand(rs) % lim); break;
        }
        uint32_t len;
        switch (tu_rand(rs) % 16) {
        case 0: len = 10 + (uint32_t)(tu_rand(rs) % 15); break;   /* nibble */
        case 1: len = 25 + (uint32_t)(tu_rand(rs) % 255); break;  /* byte */
        case 2: len = 280 + (uint32_t)(tu_rand(rs) % 3000); break; /* 16-bit */
        case 3:
            len = (tu_rand(rs) % 8 == 0) ? 65536 + (uint32_t)(tu_rand(rs) % 20000)
                                          : 3 + (uint32_t)(tu_rand(rs) % 7);
            break;
        default: len = 3 + (uint32_t)(tu_rand(rs) % 10); break;
        }
        if (len > max_len) len = max_len;
        tk_push(v, len, off, 0);
        pos += len;
    }
}

/* ------------------------------------------------------------------------- */
/* A token-level Plain LZ77 writer (MS-XCA 2.3), independent of the library's. */

typedef struct lzw {
    bbuf b;
    size_t flag_pos;
    uint32_t flags;
    unsigned nflags;
    size_t half; /* SIZE_MAX = none */
} lzw;

static void lzw_init(lzw *w)
{
    memset(w, 0, sizeof *w);
    w->flag_pos = bb_u32(&w->b, 0);
    w->half = SIZE_MAX;
}

static void lzw_flag(lzw *w, unsigned bit)
{
    w->flags = w->flags << 1 | bit;
    if (++w->nflags == 32) {
        etl_wr_u32(w->b.p + w->flag_pos, w->flags);
        w->flag_pos = bb_u32(&w->b, 0);
        w->flags = 0;
        w->nflags = 0;
    }
}

static void lzw_lit(lzw *w, uint8_t c)
{
    bb_u8(&w->b, c);
    lzw_flag(w, 0);
}

static void lzw_match(lzw *w, uint32_t off, uint32_t len)
{
    uint32_t t = len - 3;
    bb_u16(&w->b, (off - 1) << 3 | (t < 7 ? t : 7));
    if (t >= 7) {
        uint32_t r = t - 7;
        unsigned nib = r < 15 ? r : 15;
        if (w->half == SIZE_MAX) {
            w->half = bb_u8(&w->b, nib);
        } else {
            w->b.p[w->half] |= (uint8_t)(nib << 4);
            w->half = SIZE_MAX;
        }
        if (r >= 15) {
            if (r - 15 < 255) {
                bb_u8(&w->b, r - 15);
            } else {
                bb_u8(&w->b, 255);
                if (t <= 0xFFFF) {
                    bb_u16(&w->b, t);
                } else {
                    bb_u16(&w->b, 0);
                    bb_u32(&w->b, t);
                }
            }
        }
    }
    lzw_flag(w, 1);
}

/* Ends the stream; `ones` fills the unused flags with 1 (as the spec's encoder
 * does), otherwise with 0. Returns the stream. */
static uint8_t *lzw_end(lzw *w, bool ones, size_t *n)
{
    unsigned fill = 32 - w->nflags;
    uint64_t f = (uint64_t)w->flags << fill;
    if (ones) f |= (UINT64_C(1) << fill) - 1;
    etl_wr_u32(w->b.p + w->flag_pos, (uint32_t)f);
    *n = w->b.n;
    return w->b.p;
}

static uint8_t *lzw_tokens(const toks *v, bool ones, size_t *n)
{
    lzw w;
    lzw_init(&w);
    for (size_t i = 0; i < v->n; i++) {
        if (v->t[i].len)
            lzw_match(&w, v->t[i].off, v->t[i].len);
        else
            lzw_lit(&w, v->t[i].lit);
    }
    return lzw_end(&w, ones, n);
}

/* ------------------------------------------------------------------------- */
/* Names and dispatch                                                         */

static void test_names_and_dispatch(void **state)
{
    (void)state;
    assert_string_equal(etl_compression_name(ETL_COMPRESSION_NONE), "none");
    assert_string_equal(etl_compression_name(ETL_COMPRESSION_LZNT1), "lznt1");
    assert_string_equal(etl_compression_name(ETL_COMPRESSION_XPRESS), "xpress");
    assert_string_equal(etl_compression_name(ETL_COMPRESSION_XPRESS_HUFF), "xpress-huffman");
    assert_string_equal(etl_compression_name((etl_compression)1), "unknown");
    assert_string_equal(etl_compression_name((etl_compression)99), "unknown");

    uint8_t in[4] = {0xff, 0xff, 0xff, 0xff}, out[8];
    size_t len = 123;
    assert_int_equal(etl_decompress(ETL_COMPRESSION_NONE, span_of(in, 4), out, 8, &len),
                     ETL_E_UNSUPPORTED);
    assert_int_equal(len, 0);
    len = 123;
    assert_int_equal(etl_decompress((etl_compression)7, span_of(in, 4), out, 8, &len),
                     ETL_E_UNSUPPORTED);
    assert_int_equal(len, 0);
    /* Each format reaches its own decoder. */
    assert_int_equal(etl_decompress(ETL_COMPRESSION_XPRESS, span_of(in, 4), out, 8, &len), ETL_OK);
    assert_int_equal(len, 0);
    assert_int_equal(etl_decompress(ETL_COMPRESSION_LZNT1, span_of(in, 4), out, 8, &len),
                     ETL_E_CORRUPT); /* 0xffff: signature 7 */
    assert_int_equal(etl_decompress(ETL_COMPRESSION_XPRESS_HUFF, span_of(in, 4), out, 8, &len),
                     ETL_E_TRUNCATED); /* too short for a table */
}

/* ------------------------------------------------------------------------- */
/* Plain LZ77: hand-made streams                                              */

static const char ALPHABET[] = "abcdefghijklmnopqrstuvwxyz";

/* MS-XCA 3.1, first example: 26 literals, then 6 set flags. */
#define XCA31_A "3f000000 6162636465666768696a6b6c6d6e6f707172737475767778797a"
/* MS-XCA 3.1, second example: abc + match(offset 3, length 297) via the 16-bit escape. */
#define XCA31_B "ffffff1f 616263 1700 0f ff 2601"

static void test_xpress_spec_examples(void **state)
{
    (void)state;
    uint8_t *out;
    size_t len;
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, XCA31_A, 26, &out, &len), ETL_OK);
    assert_int_equal(len, 26);
    assert_memory_equal(out, ALPHABET, 26);
    free(out);

    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, XCA31_B, 300, &out, &len), ETL_OK);
    assert_int_equal(len, 300);
    for (size_t i = 0; i < 300; i++) assert_int_equal(out[i], "abc"[i % 3]);
    free(out);

    /* A larger buffer: the set flag with no input left ends the stream. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, XCA31_A, 1000, &len), ETL_OK);
    assert_int_equal(len, 26);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, XCA31_B, 301, &len), ETL_OK);
    assert_int_equal(len, 300);

    /* The library's encoder reproduces both examples byte for byte. */
    uint8_t in[300], enc[400];
    for (size_t i = 0; i < 300; i++) in[i] = (uint8_t)"abc"[i % 3];
    size_t n = 0;
    uint8_t want[64];
    size_t wn = tu_hex(XCA31_B, want, sizeof want);
    assert_int_equal(etl_xpress_compress(in, 300, enc, sizeof enc, &n), ETL_OK);
    assert_int_equal(n, wn);
    assert_memory_equal(enc, want, wn);
    wn = tu_hex(XCA31_A, want, sizeof want);
    assert_int_equal(etl_xpress_compress((const uint8_t *)ALPHABET, 26, enc, sizeof enc, &n), ETL_OK);
    assert_int_equal(n, wn);
    assert_memory_equal(enc, want, wn);
}

static void test_xpress_literals_and_overlaps(void **state)
{
    (void)state;
    uint8_t *out;
    size_t len;
    /* Empty stream: one flag word of ones. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffffff", 0, &len), ETL_OK);
    assert_int_equal(len, 0);
    /* One literal. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff7f 5a", 1, &out, &len), ETL_OK);
    assert_int_equal(len, 1);
    assert_int_equal(out[0], 'Z');
    free(out);
    /* abc + match(offset 3, length 9): a copy that overlaps its own output. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff1f 616263 1600", 12, &out, &len), ETL_OK);
    assert_int_equal(len, 12);
    assert_memory_equal(out, "abcabcabcabc", 12);
    free(out);
    /* x + match(offset 1, length 3): a run. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0000", 4, &out, &len), ETL_OK);
    assert_memory_equal(out, "xxxx", 4);
    free(out);
    /* 32 literals fill a flag word exactly; a second word of ones follows. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS,
                             "00000000 6162636465666768696a6b6c6d6e6f707172737475767778797a"
                             "303132333435 ffffffff",
                             32, &out, &len),
                     ETL_OK);
    assert_int_equal(len, 32);
    assert_memory_equal(out, "abcdefghijklmnopqrstuvwxyz012345", 32);
    free(out);
    /* Overlapping copies at every small offset, against the naive expansion. */
    for (uint32_t off = 1; off <= 20; off++) {
        for (uint32_t l = 3; l <= 70; l += 1) {
            toks v = {0};
            for (uint32_t i = 0; i < off; i++) tk_push(&v, 0, 0, (uint8_t)('A' + i));
            tk_push(&v, l, off, 0);
            tk_push(&v, 0, 0, '!');
            size_t en, sn;
            uint8_t *exp = tk_expand(&v, &en);
            uint8_t *s = lzw_tokens(&v, true, &sn);
            uint8_t *o = xmalloc(en);
            assert_int_equal(etl_xpress_decompress(span_of(s, sn), o, en, &len), ETL_OK);
            assert_int_equal(len, en);
            assert_memory_equal(o, exp, en);
            free(o);
            free(s);
            free(exp);
            free(v.t);
        }
    }
}

static void test_xpress_length_escapes(void **state)
{
    (void)state;
    uint8_t *out;
    size_t len;
    /* Two matches share one half-byte: ab, m(2,12) [nibble 2, low], m(2,20) [nibble 10, high]. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff3f 6162 0f00 a2 0f00", 34, &out, &len),
                     ETL_OK);
    assert_int_equal(len, 34);
    for (size_t i = 0; i < 34; i++) assert_int_equal(out[i], "ab"[i % 2]);
    free(out);
    /* Three matches: the third opens a new half-byte after the second's extra byte.
     * ab, m(2,10) [nibble 0], m(2,30) [nibble 15 high + byte 5], m(2,11) [nibble 1, new byte]. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff3f 6162 0f00 f0 0f00 05 0f00 01",
                             2 + 10 + 30 + 11, &out, &len),
                     ETL_OK);
    assert_int_equal(len, 53);
    for (size_t i = 0; i < 53; i++) assert_int_equal(out[i], "ab"[i % 2]);
    free(out);
    /* Byte escape: x + m(1,125): nibble 15, byte 100. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f 64", 126, &out, &len), ETL_OK);
    assert_int_equal(len, 126);
    for (size_t i = 0; i < 126; i++) assert_int_equal(out[i], 'x');
    free(out);
    /* Byte escape at its top: byte 254 -> length 3+7+15+254 = 279. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f fe", 280, &len), ETL_OK);
    assert_int_equal(len, 280);
    /* 16-bit escape at its bottom: 22 -> length 25. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 1600", 26, &len), ETL_OK);
    assert_int_equal(len, 26);
    /* 16-bit escape at its top: 65535 -> 65538. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff ffff", 65539, &len), ETL_OK);
    assert_int_equal(len, 65539);
    /* 32-bit escape: z + m(1,100000). */
    assert_int_equal(dec_hex(ETL_COMPRESSION_XPRESS, "ffffff7f 7a 0700 0f ff 0000 9d860100", 100001, &out,
                             &len),
                     ETL_OK);
    assert_int_equal(len, 100001);
    for (size_t i = 0; i < 100001; i++) assert_int_equal(out[i], 'z');
    free(out);
    /* Largest offset: 8192. */
    {
        toks v = {0};
        for (uint32_t i = 0; i < 8192; i++) tk_push(&v, 0, 0, (uint8_t)(i * 7 + (i >> 8)));
        tk_push(&v, 300, 8192, 0);
        size_t en, sn;
        uint8_t *exp = tk_expand(&v, &en);
        uint8_t *s = lzw_tokens(&v, true, &sn);
        uint8_t *o = xmalloc(en);
        assert_int_equal(etl_xpress_decompress(span_of(s, sn), o, en, &len), ETL_OK);
        assert_int_equal(len, en);
        assert_memory_equal(o, exp, en);
        free(o);
        free(s);
        free(exp);
        free(v.t);
    }
}

static void test_xpress_random_token_streams(void **state)
{
    (void)state;
    uint64_t rs = 0x5eed0001;
    for (int round = 0; round < 60; round++) {
        toks v = {0};
        tk_random(&v, &rs, 1 + (size_t)(tu_rand(&rs) % 400), 8192, UINT32_MAX);
        size_t en, sn, len;
        uint8_t *exp = tk_expand(&v, &en);
        bool ones = round % 2 == 0;
        uint8_t *s = lzw_tokens(&v, ones, &sn);
        uint8_t *o = xmalloc(en + 64);
        /* Exact size: OK whether the unused flags are ones or zeros. */
        assert_int_equal(etl_xpress_decompress(span_of(s, sn), o, en, &len), ETL_OK);
        assert_int_equal(len, en);
        assert_memory_equal(o, exp, en);
        /* A larger buffer: ones end the stream; zeros would ask for literals. */
        etl_status st = etl_xpress_decompress(span_of(s, sn), o, en + 64, &len);
        assert_int_equal(st, ones ? ETL_OK : ETL_E_TRUNCATED);
        assert_int_equal(len, en);
        /* One byte too small. */
        if (en) {
            assert_int_equal(etl_xpress_decompress(span_of(s, sn), o, en - 1, &len), ETL_E_RANGE);
            assert_true(len <= en - 1);
            assert_memory_equal(o, exp, len);
        }
        /* Truncation points: what comes out is a correct prefix (a cut just
         * before a match's bytes even looks like the end marker), and nothing is
         * read or written out of bounds (the sanitizer build checks). */
        for (size_t cut = 0; cut < sn; cut += 1 + sn / 97) {
            st = etl_xpress_decompress(span_of(s, cut), o, en, &len);
            assert_true(len <= en);
            assert_memory_equal(o, exp, len);
            if (st == ETL_OK && len == en) assert_true(cut + 4 >= sn);
        }
        free(o);
        free(s);
        free(exp);
        free(v.t);
    }
}

static void test_xpress_malformed(void **state)
{
    (void)state;
    size_t len;
    /* Empty input: nothing when nothing is expected, truncated otherwise. */
    uint8_t dummy[4];
    assert_int_equal(etl_xpress_decompress(span_of(NULL, 0), NULL, 0, &len), ETL_OK);
    assert_int_equal(len, 0);
    assert_int_equal(etl_xpress_decompress(span_of(NULL, 0), dummy, 4, &len), ETL_E_TRUNCATED);
    assert_int_equal(len, 0);
    /* Truncated flag word. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ff", 1, &len), ETL_E_TRUNCATED);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffff", 1, &len), ETL_E_TRUNCATED);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff", 1, &len), ETL_E_TRUNCATED);
    /* A literal flag without its byte. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "00000000 6162", 5, &len), ETL_E_TRUNCATED);
    assert_int_equal(len, 2);
    /* 32 literals, then no flag word, while more output is expected. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS,
                                 "00000000 6162636465666768696a6b6c6d6e6f707172737475767778797a303132333435",
                                 33, &len),
                     ETL_E_TRUNCATED);
    assert_int_equal(len, 32);
    /* Match word cut after one byte. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 07", 200, &len), ETL_E_TRUNCATED);
    /* Half-byte missing. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700", 200, &len), ETL_E_TRUNCATED);
    /* Byte escape missing. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f", 200, &len), ETL_E_TRUNCATED);
    /* 16-bit escape cut. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff", 400, &len), ETL_E_TRUNCATED);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 26", 400, &len), ETL_E_TRUNCATED);
    /* 32-bit escape cut. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 0000", 100001, &len),
                     ETL_E_TRUNCATED);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 0000 9d8601", 100001, &len),
                     ETL_E_TRUNCATED);
    /* 16-bit escape below 22 (would be a negative length). */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 1500", 400, &len), ETL_E_CORRUPT);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 0000 15000000", 400, &len),
                     ETL_E_CORRUPT);
    /* Offset before the start of the output: as the first token, and one past. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffffff 0000", 10, &len), ETL_E_CORRUPT);
    assert_int_equal(len, 0);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0800", 10, &len), ETL_E_CORRUPT);
    assert_int_equal(len, 1);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff3f 6162 f8ff", 10, &len), ETL_E_CORRUPT);
    /* Output overflow: by literals and by a match. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, XCA31_A, 25, &len), ETL_E_RANGE);
    assert_int_equal(len, 25);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, XCA31_B, 299, &len), ETL_E_RANGE);
    assert_int_equal(len, 3);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, XCA31_B, 0, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
    /* A huge 32-bit length must not wrap. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff7f 78 0700 0f ff 0000 ffffffff", 100, &len),
                     ETL_E_RANGE);
}

static void test_xpress_output_full(void **state)
{
    (void)state;
    size_t len;
    /* Output full and input used up while literal flags remain (zero-filled
     * unused flags): OK. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS,
                                 "00000000 6162636465666768696a6b6c6d6e6f707172737475767778797a", 26, &len),
                     ETL_OK);
    assert_int_equal(len, 26);
    /* ...but not with room left. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS,
                                 "00000000 6162636465666768696a6b6c6d6e6f707172737475767778797a", 27, &len),
                     ETL_E_TRUNCATED);
    /* Output full, and a flag word (or part of one) is all that is left. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS,
                                 "00000000 6162636465666768696a6b6c6d6e6f707172737475767778797a303132333435 ff",
                                 32, &len),
                     ETL_OK);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS,
                                 "00000000 6162636465666768696a6b6c6d6e6f707172737475767778797a303132333435",
                                 32, &len),
                     ETL_OK);
    /* Output full, and a real token follows: out of range. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff3f 6162 0000", 2, &len), ETL_E_RANGE);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_XPRESS, "ffffff1f 616263", 2, &len), ETL_E_RANGE);
    assert_int_equal(len, 2);
}

/* ------------------------------------------------------------------------- */
/* LZ77+Huffman: a test-only writer (MS-XCA 2.1)                              */

/* Code lengths for 512 symbols from their frequencies: Huffman, with the
 * frequencies halved until no code is longer than 15 bits. Symbols with
 * frequency 0 get no code. At least two symbols always get one, so the code
 * space is filled exactly. */
static void hw_lengths(const uint32_t freq_in[512], uint8_t len[512])
{
    uint32_t freq[512];
    memcpy(freq, freq_in, sizeof freq);
    unsigned used = 0;
    for (unsigned i = 0; i < 512; i++) used += freq[i] != 0;
    for (unsigned i = 0; used < 2 && i < 512; i++)
        if (!freq[i]) {
            freq[i] = 1;
            used++;
        }
    for (;;) {
        /* Nodes 0..511 are leaves, 512.. internal. */
        uint64_t w[1024];
        int parent[1024];
        bool live[1024];
        unsigned nn = 512;
        for (unsigned i = 0; i < 512; i++) {
            w[i] = freq[i];
            live[i] = freq[i] != 0;
            parent[i] = -1;
        }
        for (unsigned left = used; left > 1; left--) {
            int a = -1, b = -1;
            for (unsigned i = 0; i < nn; i++) {
                if (!live[i]) continue;
                if (a < 0 || w[i] < w[a]) {
                    b = a;
                    a = (int)i;
                } else if (b < 0 || w[i] < w[b]) {
                    b = (int)i;
                }
            }
            w[nn] = w[a] + w[b];
            live[nn] = true;
            parent[nn] = -1;
            live[a] = live[b] = false;
            parent[a] = parent[b] = (int)nn;
            nn++;
        }
        unsigned maxl = 0;
        for (unsigned i = 0; i < 512; i++) {
            unsigned d = 0;
            if (freq[i])
                for (int p = parent[i]; p >= 0; p = parent[p]) d++;
            len[i] = (uint8_t)d;
            if (d > maxl) maxl = d;
        }
        if (maxl <= 15) return;
        for (unsigned i = 0; i < 512; i++)
            if (freq[i]) freq[i] = (freq[i] + 1) / 2;
    }
}

/* Canonical codes, as the decoder assigns them: by length, then symbol. */
static void hw_codes(const uint8_t len[512], uint16_t code[512])
{
    uint32_t next = 0; /* left-aligned to 15 bits */
    for (unsigned l = 1; l <= 15; l++)
        for (unsigned s = 0; s < 512; s++)
            if (len[s] == l) {
                code[s] = (uint16_t)(next >> (15 - l));
                next += 1u << (15 - l);
            }
    assert_int_equal(next, 1u << 15);
}

/* The bit writer mirrors the decoder's window: after C bits the decoder has
 * loaded 2 + ceil((C - 16) / 16) words, and escape bytes (and the next block)
 * come right after them. */
typedef struct hw {
    bbuf b;
    size_t slot[1u << 17]; /* output positions of the block's words */
    size_t nslots;     /* reserved */
    uint64_t c;        /* bits written in this block */
    uint32_t acc;      /* bits of the current word */
} hw;

static size_t hw_loaded(uint64_t c)
{
    return 2 + (c > 16 ? (size_t)((c - 16 + 15) / 16) : 0);
}

static void hw_ensure(hw *w)
{
    while (w->nslots < hw_loaded(w->c)) {
        assert_true(w->nslots < (1u << 17));
        w->slot[w->nslots++] = bb_u16(&w->b, 0);
    }
}

static void hw_bits(hw *w, uint32_t v, unsigned n)
{
    for (unsigned i = n; i-- > 0;) {
        w->acc = w->acc << 1 | ((v >> i) & 1);
        w->c++;
        if (w->c % 16 == 0) {
            size_t k = (size_t)(w->c / 16 - 1);
            assert_true(k < w->nslots);
            etl_wr_u16(w->b.p + w->slot[k], (uint16_t)w->acc);
            w->acc = 0;
        }
    }
}

static void hw_flush(hw *w)
{
    hw_ensure(w);
    unsigned r = (unsigned)(w->c % 16);
    if (r) etl_wr_u16(w->b.p + w->slot[w->c / 16], (uint16_t)(w->acc << (16 - r)));
}

/* The symbol of a token. */
static unsigned hw_sym(const tok *t, unsigned *obits)
{
    if (!t->len) return t->lit;
    unsigned ob = 0;
    while ((t->off >> ob) > 1) ob++;
    *obits = ob;
    unsigned lc = t->len - 3 < 15 ? t->len - 3 : 15;
    return 256 + (ob << 4 | lc);
}

/* Where the last hw_encode put its tables. */
static size_t hw_tables[64];
static size_t hw_ntables;

/* Encodes the tokens. mode 0: every block uses a table of all 9-bit codes;
 * mode 1: Huffman codes from each block's symbol counts. The last block ends
 * with symbol 256. */
static uint8_t *hw_encode(const toks *v, int mode, size_t *n)
{
    hw *w = calloc(1, sizeof *w);
    assert_non_null(w);
    size_t i = 0;
    uint64_t pos = 0;
    hw_ntables = 0;
    do {
        /* The block: tokens starting within the next 65536 bytes of output. */
        size_t j = i;
        uint64_t bstart = pos, p = pos;
        while (j < v->n && p - bstart < 65536) {
            p += v->t[j].len ? v->t[j].len : 1;
            j++;
        }
        bool last = j == v->n;
        uint32_t freq[512] = {0};
        uint8_t len[512];
        uint16_t code[512];
        for (size_t k = i; k < j; k++) {
            unsigned ob;
            freq[hw_sym(&v->t[k], &ob)]++;
        }
        if (last) freq[256]++;
        if (mode == 0)
            memset(len, 9, sizeof len);
        else
            hw_lengths(freq, len);
        hw_codes(len, code);
        uint8_t table[256];
        for (unsigned k = 0; k < 256; k++) table[k] = (uint8_t)(len[2 * k] | len[2 * k + 1] << 4);
        if (hw_ntables < 64) hw_tables[hw_ntables++] = w->b.n;
        bb_put(&w->b, table, 256);
        w->nslots = 0;
        w->c = 0;
        w->acc = 0;
        hw_ensure(w);
        for (size_t k = i; k < j; k++) {
            const tok *t = &v->t[k];
            unsigned ob = 0, s = hw_sym(t, &ob);
            assert_true(len[s] > 0);
            hw_bits(w, code[s], len[s]);
            hw_ensure(w);
            if (!t->len) continue;
            uint32_t l3 = t->len - 3;
            if (l3 >= 15) {
                if (l3 - 15 < 255) {
                    bb_u8(&w->b, l3 - 15);
                } else {
                    bb_u8(&w->b, 255);
                    if (l3 <= 0xFFFF) {
                        bb_u16(&w->b, l3);
                    } else {
                        bb_u16(&w->b, 0);
                        bb_u32(&w->b, l3);
                    }
                }
            }
            hw_bits(w, t->off - (1u << ob), ob);
            hw_ensure(w);
        }
        if (last) {
            hw_bits(w, code[256], len[256]);
        }
        hw_flush(w);
        i = j;
        pos = p;
    } while (i < v->n);
    uint8_t *out = w->b.p;
    *n = w->b.n;
    free(w);
    return out;
}

/* Random tokens for LZ77+Huffman (offsets up to 65535), never ending with a
 * (length 3, offset 1) match: that one is symbol 256, which as the very last
 * thing in the input reads as the end of the stream. */
static void hw_random_tokens(toks *v, uint64_t *rs, size_t count, uint32_t max_off, uint32_t max_len)
{
    tk_random(v, rs, count, max_off, max_len);
    if (v->n && v->t[v->n - 1].len == 3 && v->t[v->n - 1].off == 1) tk_push(v, 0, 0, 'q');
}

/* MS-XCA 3.2: abcdefghijklmnopqrstuvwxyz as 26 literals and the EOF symbol. */
static void xca32_vector(uint8_t *buf, size_t *n)
{
    memset(buf, 0, 256);
    buf[48] = 0x50;
    for (int i = 49; i <= 58; i++) buf[i] = 0x55;
    buf[59] = 0x45;
    buf[60] = 0x44;
    buf[61] = 0x04;
    buf[128] = 0x04;
    *n = 256 + tu_hex("d8 52 3e d7 94 11 5b e9 19 5f f9 d6 7c df 8d 04 00 00 00 00", buf + 256, 20);
}

static void test_huff_spec_example(void **state)
{
    (void)state;
    uint8_t in[300], out[64];
    size_t n, len;
    xca32_vector(in, &n);
    assert_int_equal(n, 276);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, n), out, 26, &len), ETL_OK);
    assert_int_equal(len, 26);
    assert_memory_equal(out, ALPHABET, 26);
    /* With room to spare, the EOF symbol at the end of the input stops it. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, n), out, sizeof out, &len), ETL_OK);
    assert_int_equal(len, 26);
    /* One byte short. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, n), out, 25, &len), ETL_E_RANGE);
    assert_int_equal(len, 25);
    /* Cut inside the bit stream. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 266), out, 26, &len), ETL_E_TRUNCATED);
    assert_memory_equal(out, ALPHABET, len);
    /* Only the table. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 256), out, 26, &len), ETL_E_TRUNCATED);
    assert_int_equal(len, 0);
    /* Our writer, given the same tokens, makes the same bytes. */
    toks v = {0};
    for (int i = 0; i < 26; i++) tk_push(&v, 0, 0, (uint8_t)ALPHABET[i]);
    size_t wn;
    uint8_t *w = hw_encode(&v, 1, &wn);
    assert_int_equal(wn, n);
    assert_memory_equal(w, in, n);
    free(w);
    free(v.t);
}

/* 65537 zero bytes as Windows compresses them (quoted on the cifs-protocol list,
 * Nov 2022): literal 0, a match of 65536 at offset 1 (16-bit escape 0xfffd), EOF;
 * the one block produces more than 65536 bytes. */
static void test_huff_windows_long_match(void **state)
{
    (void)state;
    uint8_t in[263];
    memset(in, 0, 256);
    in[0] = 0x02;
    in[128] = 0x02;
    in[135] = 0x10;
    tu_hex("00 98 00 00 ff fd ff", in + 256, 7);
    uint8_t *out = xmalloc(65537 + 16);
    size_t len;
    memset(out, 0xAA, 65537 + 16);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 263), out, 65537, &len), ETL_OK);
    assert_int_equal(len, 65537);
    for (size_t i = 0; i < 65537; i++) assert_int_equal(out[i], 0);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 263), out, 65536, &len), ETL_E_RANGE);
    assert_int_equal(len, 1);
    /* Cut in the escape. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 262), out, 65537, &len), ETL_E_TRUNCATED);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 260), out, 65537, &len), ETL_E_TRUNCATED);
    free(out);
}

/* Every literal with an 8-bit code: the bit stream is the data itself, taken
 * two bytes at a time and stored little-endian. */
static void test_huff_all_literals_8bit(void **state)
{
    (void)state;
    uint8_t data[64], in[256 + 64 + 4];
    for (int i = 0; i < 64; i++) data[i] = (uint8_t)(i * 37 + 5);
    memset(in, 0x88, 128); /* symbols 0..255: length 8 */
    memset(in + 128, 0, 128);
    for (int i = 0; i < 64; i += 2) {
        in[256 + i] = data[i + 1];
        in[256 + i + 1] = data[i];
    }
    in[320] = in[321] = in[322] = in[323] = 0;
    uint8_t out[64];
    size_t len;
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 64, &len), ETL_OK);
    assert_int_equal(len, 64);
    assert_memory_equal(out, data, 64);
    /* Without the trailing padding words the window still has every real bit. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 320), out, 64, &len), ETL_OK);
    assert_int_equal(len, 64);
    assert_memory_equal(out, data, 64);
    /* There is no EOF symbol, so more room means reading past the data. */
    uint8_t big[80];
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 320), big, 80, &len), ETL_E_TRUNCATED);
    assert_int_equal(len, 64);
    /* One byte short: the last word (bytes 62 and 63) is incomplete. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 319), out, 64, &len), ETL_E_TRUNCATED);
    assert_int_equal(len, 62);
    /* Output full with more data behind it: out of range; with zeros behind: padding. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 320), out, 40, &len), ETL_E_RANGE);
    assert_int_equal(len, 40);
    in[321] = 0x80;
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 64, &len), ETL_E_RANGE);
    in[321] = 0;
    {
        uint8_t padded[256 + 64 + 600] = {0};
        memcpy(padded, in, sizeof in);
        assert_int_equal(etl_xpress_huff_decompress(span_of(padded, sizeof padded), out, 64, &len), ETL_OK);
        assert_int_equal(len, 64);
        padded[sizeof padded - 1] = 1;
        assert_int_equal(etl_xpress_huff_decompress(span_of(padded, sizeof padded), out, 64, &len), ETL_E_RANGE);
    }
}

/* A stream of the given symbols (literals, or 256 = EOF) with the given table. */
static uint8_t *hw_symbols(const uint8_t table[256], const unsigned *syms, size_t n, size_t *outn)
{
    uint8_t len[512];
    uint16_t code[512];
    for (unsigned k = 0; k < 256; k++) {
        len[2 * k] = table[k] & 15;
        len[2 * k + 1] = table[k] >> 4;
    }
    hw_codes(len, code);
    hw *w = calloc(1, sizeof *w);
    assert_non_null(w);
    bb_put(&w->b, table, 256);
    hw_ensure(w);
    for (size_t i = 0; i < n; i++) {
        assert_true(len[syms[i]] > 0);
        hw_bits(w, code[syms[i]], len[syms[i]]);
        hw_ensure(w);
    }
    hw_flush(w);
    uint8_t *out = w->b.p;
    *outn = w->b.n;
    free(w);
    return out;
}

static void test_huff_tables(void **state)
{
    (void)state;
    uint8_t in[256 + 8];
    uint8_t out[64];
    size_t len;
    memset(in + 256, 0, 8);
    /* All zero: no codes. */
    memset(in, 0, 256);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 16, &len), ETL_E_CORRUPT);
    assert_int_equal(len, 0);
    /* One code of length 1: half the space unused. */
    in[0] = 0x01;
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 16, &len), ETL_E_CORRUPT);
    /* Three codes of length 1: over-subscribed. */
    in[0] = 0x11;
    in[1] = 0x01;
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 16, &len), ETL_E_CORRUPT);
    /* Everything at length 15: far over-subscribed. */
    memset(in, 0xFF, 256);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 16, &len), ETL_E_CORRUPT);
    /* Two codes of length 1 (symbol 0 = "0", EOF = "1"): 16 zero bits, then EOF. */
    memset(in, 0, 256);
    in[0] = 0x01;
    in[128] = 0x01;
    tu_hex("0000 0080 0000 0000", in + 256, 8);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 16, &len), ETL_OK);
    assert_int_equal(len, 16);
    for (int i = 0; i < 16; i++) assert_int_equal(out[i], 0);
    /* All 512 symbols at 9 bits: four zero literals (36 bits), then EOF (100000000). */
    memset(in, 0x99, 256);
    tu_hex("0000 0000 0008 0000", in + 256, 8);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, sizeof in), out, 4, &len), ETL_OK);
    assert_int_equal(len, 4);
    /* Codes of every length 1..15: symbols 0,2,..,28 get lengths 1..15 and EOF
     * the other 15-bit code (1/2 + ... + 1/2^15 + 1/2^15 = 1). */
    {
        uint8_t t[256] = {0};
        unsigned syms[16];
        for (unsigned k = 0; k < 15; k++) {
            t[k] = (uint8_t)(k + 1); /* symbol 2k, low nibble */
            syms[k] = 2 * k;
        }
        t[128] = 0x0F;
        syms[15] = 256;
        size_t sn;
        uint8_t *s = hw_symbols(t, syms, 16, &sn);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), out, 15, &len), ETL_OK);
        assert_int_equal(len, 15);
        for (unsigned k = 0; k < 15; k++) assert_int_equal(out[k], 2 * k);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), out, sizeof out, &len), ETL_OK);
        assert_int_equal(len, 15);
        /* Reversed order, so the long codes come first. */
        unsigned rsyms[16];
        for (unsigned k = 0; k < 15; k++) rsyms[k] = syms[14 - k];
        rsyms[15] = 256;
        free(s);
        s = hw_symbols(t, rsyms, 16, &sn);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), out, 15, &len), ETL_OK);
        for (unsigned k = 0; k < 15; k++) assert_int_equal(out[k], 2 * (14 - k));
        /* One more 15-bit code: over-subscribed. */
        s[16] = 0x0F;
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), out, 15, &len), ETL_E_CORRUPT);
        free(s);
    }
    /* A bad table in a later block. */
    {
        toks v = {0};
        for (int i = 0; i < 70000; i++) tk_push(&v, 0, 0, (uint8_t)(i % 3));
        size_t sn;
        uint8_t *s = hw_encode(&v, 1, &sn);
        uint8_t *o = xmalloc(70000);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, 70000, &len), ETL_OK);
        assert_int_equal(len, 70000);
        assert_int_equal(hw_ntables, 2);
        memset(s + hw_tables[1], 0, 256);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, 70000, &len), ETL_E_CORRUPT);
        assert_int_equal(len, 65536);
        /* The stream cut right after the first block. */
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, hw_tables[1]), o, 70000, &len),
                         ETL_E_TRUNCATED);
        assert_int_equal(len, 65536);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, hw_tables[1]), o, 65536, &len), ETL_OK);
        free(o);
        free(s);
        free(v.t);
    }
}

static void test_huff_random_token_streams(void **state)
{
    (void)state;
    uint64_t rs = 0x5eed0002;
    for (int round = 0; round < 40; round++) {
        toks v = {0};
        size_t count = round < 4 ? 30000 + (size_t)(tu_rand(&rs) % 20000) /* several blocks */
                                 : 1 + (size_t)(tu_rand(&rs) % 600);
        hw_random_tokens(&v, &rs, count, 65535, round < 4 ? 300 : UINT32_MAX);
        size_t en, sn, len;
        uint8_t *exp = tk_expand(&v, &en);
        uint8_t *s = hw_encode(&v, round % 3 == 0 ? 0 : 1, &sn);
        uint8_t *o = xmalloc(en + 64);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, en, &len), ETL_OK);
        assert_int_equal(len, en);
        assert_memory_equal(o, exp, en);
        /* More room: the EOF symbol at the end of the input stops it, unless the
         * output ends on a block boundary (EOF then never gets read). */
        etl_status st = etl_xpress_huff_decompress(span_of(s, sn), o, en + 64, &len);
        if (st == ETL_OK) {
            assert_int_equal(len, en);
            assert_memory_equal(o, exp, en);
        } else {
            assert_int_equal(st, ETL_E_TRUNCATED);
            assert_true(en >= 65536);
        }
        if (en) {
            assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, en - 1, &len), ETL_E_RANGE);
            assert_memory_equal(o, exp, len);
        }
        for (size_t cut = 0; cut < sn; cut += 1 + sn / 61) {
            st = etl_xpress_huff_decompress(span_of(s, cut), o, en, &len);
            assert_true(len <= en);
            assert_memory_equal(o, exp, len);
        }
        free(o);
        free(s);
        free(exp);
        free(v.t);
    }
}

static void test_huff_malformed(void **state)
{
    (void)state;
    size_t len;
    uint8_t out[16];
    /* Empty input, and input shorter than a table. */
    assert_int_equal(etl_xpress_huff_decompress(span_of(NULL, 0), NULL, 0, &len), ETL_OK);
    assert_int_equal(len, 0);
    assert_int_equal(etl_xpress_huff_decompress(span_of(NULL, 0), out, 16, &len), ETL_E_TRUNCATED);
    uint8_t in[300];
    size_t n;
    xca32_vector(in, &n);
    assert_int_equal(etl_xpress_huff_decompress(span_of(in, 255), out, 16, &len), ETL_E_TRUNCATED);
    /* Offset before the start: 'a' then a match with offset 2 (symbol 256+16). */
    {
        uint8_t t[256] = {0};
        t[0x61 / 2] = 0x10;   /* 'a' (odd): high nibble, length 1 */
        t[(256 + 16) / 2] = 1; /* symbol 272: length 1 */
        unsigned syms[2] = {0x61, 272};
        size_t sn;
        uint8_t *s = hw_symbols(t, syms, 2, &sn); /* the offset bit after 272 is 0: offset 2 */
        uint8_t o[16];
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, 16, &len), ETL_E_CORRUPT);
        assert_int_equal(len, 1);
        free(s);
    }
    /* Length escapes: cut, and a 16-bit value below 15. */
    {
        toks v = {0};
        tk_push(&v, 0, 0, 'x');
        tk_push(&v, 1000, 1, 0);
        size_t sn;
        uint8_t *s = hw_encode(&v, 1, &sn);
        uint8_t *o = xmalloc(1001);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, 1001, &len), ETL_OK);
        /* The escape sits after the two preloaded words: byte 255, then 997. */
        assert_int_equal(s[260], 255);
        assert_int_equal(etl_rd_u16(s + 261), 997);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, 261), o, 1001, &len), ETL_E_TRUNCATED);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, 262), o, 1001, &len), ETL_E_TRUNCATED);
        etl_wr_u16(s + 261, 14);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, 1001, &len), ETL_E_CORRUPT);
        etl_wr_u16(s + 261, 15); /* 15 -> length 18 */
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, 19, &len), ETL_OK);
        assert_int_equal(len, 19);
        etl_wr_u16(s + 261, 0); /* 32-bit escape, cut */
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, 264), o, 1001, &len), ETL_E_TRUNCATED);
        free(o);
        free(s);
        free(v.t);
    }
    /* 32-bit escape. */
    {
        toks v = {0};
        tk_push(&v, 0, 0, 'y');
        tk_push(&v, 70000, 1, 0);
        tk_push(&v, 0, 0, 'z');
        size_t sn, en;
        uint8_t *exp = tk_expand(&v, &en);
        uint8_t *s = hw_encode(&v, 0, &sn);
        uint8_t *o = xmalloc(en);
        assert_int_equal(etl_xpress_huff_decompress(span_of(s, sn), o, en, &len), ETL_OK);
        assert_int_equal(len, en);
        assert_memory_equal(o, exp, en);
        free(o);
        free(s);
        free(exp);
        free(v.t);
    }
}

/* ------------------------------------------------------------------------- */
/* LZNT1                                                                      */

/* MS-XCA 3.3: a 142-byte string (with its NUL) in one 59-byte compressed chunk. */
static const char XCA33_TEXT[] =
    "F# F# G A A G F# E D D E F# F# E E F# F# G A A G F# E D D E F# E D D E E F# D E F# G F# D E F# G "
    "F# E D E A F# F# G A A G F# E D D E F# E D D";
#define XCA33_HEX                                                                          \
    "38 b0 88 46 23 20 00 20 47 20 41 00 10 a2 47 01 a0 45 20 44 00 08 45 01 50 79 00 c0 45 " \
    "20 05 24 13 88 05 b4 02 4a 44 ef 03 58 02 8c 09 16 01 48 45 00 be 00 9e 00 04 01 18 90 00"

static void test_lznt1_spec_example(void **state)
{
    (void)state;
    uint8_t *out;
    size_t len;
    assert_int_equal(sizeof XCA33_TEXT, 142);
    assert_int_equal(dec_hex(ETL_COMPRESSION_LZNT1, XCA33_HEX, 142, &out, &len), ETL_OK);
    assert_int_equal(len, 142);
    assert_memory_equal(out, XCA33_TEXT, 142);
    free(out);
    /* With an end marker, and with junk after it. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, XCA33_HEX " 0000 1234", 200, &len), ETL_OK);
    assert_int_equal(len, 142);
    /* Too small an output. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, XCA33_HEX, 141, &len), ETL_E_RANGE);
    /* Chunk cut. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "38 b0 88 46 23 20", 142, &len), ETL_E_TRUNCATED);
}

/* A test-only LZNT1 writer: greedy matches within each 4096-byte chunk (one hash
 * candidate and offset 1), uncompressed chunks where that does not pay. */
static uint8_t *lznt1_encode(const uint8_t *in, size_t n, bool end_marker, size_t *outn)
{
    bbuf b = {0};
    for (size_t c = 0; c < n; c += 4096) {
        size_t cn = n - c < 4096 ? n - c : 4096;
        const uint8_t *p = in + c;
        bbuf ch = {0};
        int32_t last[4096];
        for (int i = 0; i < 4096; i++) last[i] = -1;
        size_t i = 0;
        while (i < cn) {
            size_t flag_at = bb_u8(&ch, 0);
            unsigned flags = 0;
            for (unsigned k = 0; k < 8 && i < cn; k++) {
                unsigned d = 4;
                while ((1u << d) < i) d++;
                size_t maxoff = (size_t)1 << d, maxlen = ((size_t)1 << (16 - d)) + 2;
                size_t best = 0, boff = 0;
                size_t cands[2] = {1, 0};
                if (i + 3 <= cn) {
                    unsigned h = (p[i] * 33u + p[i + 1]) * 33u + p[i + 2];
                    h &= 4095;
                    if (last[h] >= 0) cands[1] = i - (size_t)last[h];
                    last[h] = (int32_t)i;
                }
                for (int q = 0; q < 2; q++) {
                    size_t off = cands[q];
                    if (off == 0 || off > i || off > maxoff) continue;
                    size_t l = 0;
                    while (i + l < cn && l < maxlen && p[i + l] == p[i + l - off]) l++;
                    if (l > best) {
                        best = l;
                        boff = off;
                    }
                }
                if (best >= 3) {
                    flags |= 1u << k;
                    bb_u16(&ch, (unsigned)((boff - 1) << (16 - d) | (best - 3)));
                    i += best;
                } else {
                    bb_u8(&ch, p[i]);
                    i++;
                }
            }
            ch.p[flag_at] = (uint8_t)flags;
        }
        if (ch.n < cn) {
            bb_u16(&b, 0xB000 | (unsigned)(ch.n - 1));
            bb_put(&b, ch.p, ch.n);
        } else {
            bb_u16(&b, 0x3000 | (unsigned)(cn - 1));
            bb_put(&b, p, cn);
        }
        free(ch.p);
    }
    if (end_marker) bb_u16(&b, 0);
    *outn = b.n;
    return b.p;
}

static void test_lznt1_chunks(void **state)
{
    (void)state;
    uint8_t *out;
    size_t len;
    /* An uncompressed chunk (4096 bytes) and an uncompressed short one. */
    {
        uint8_t *in = xmalloc(2 + 4096 + 2 + 5);
        etl_wr_u16(in, 0x3FFF);
        for (int i = 0; i < 4096; i++) in[2 + i] = (uint8_t)(i * 13);
        etl_wr_u16(in + 4098, 0x3004);
        memcpy(in + 4100, "hello", 5);
        uint8_t *o = xmalloc(4101);
        assert_int_equal(etl_lznt1_decompress(span_of(in, 4105), o, 4101, &len), ETL_OK);
        assert_int_equal(len, 4101);
        assert_memory_equal(o, in + 2, 4096);
        assert_memory_equal(o + 4096, "hello", 5);
        assert_int_equal(etl_lznt1_decompress(span_of(in, 4105), o, 4100, &len), ETL_E_RANGE);
        assert_int_equal(len, 4096);
        free(o);
        free(in);
    }
    /* A compressed chunk of literals only: flag byte 0, 3 literals. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_LZNT1, "03 b0 00 61 62 63", 3, &out, &len), ETL_OK);
    assert_int_equal(len, 3);
    assert_memory_equal(out, "abc", 3);
    free(out);
    /* abc + match(offset 3, length 9): at position 3, 4 offset bits, 12 length bits. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_LZNT1, "05 b0 08 61 62 63 06 20", 12, &out, &len), ETL_OK);
    assert_int_equal(len, 12);
    assert_memory_equal(out, "abcabcabcabc", 12);
    free(out);
    /* Two chunks: matches never reach into the previous chunk's output. */
    assert_int_equal(dec_hex(ETL_COMPRESSION_LZNT1, "03 b0 00 61 62 63 03 b0 00 64 65 66", 6, &out, &len),
                     ETL_OK);
    assert_memory_equal(out, "abcdef", 6);
    free(out);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 b0 00 61 62 63 03 b0 01 00 00 64", 12, &len),
                     ETL_E_CORRUPT);
    assert_int_equal(len, 3);
    /* Empty input and the bare end marker. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "", 8, &len), ETL_OK);
    assert_int_equal(len, 0);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "0000", 8, &len), ETL_OK);
    assert_int_equal(len, 0);
}

static void test_lznt1_malformed(void **state)
{
    (void)state;
    size_t len;
    /* One byte: a cut header. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03", 8, &len), ETL_E_TRUNCATED);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 b0 00 61 62 63 03", 8, &len), ETL_E_TRUNCATED);
    assert_int_equal(len, 3);
    /* Bad signatures. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 80 00 61 62 63", 8, &len), ETL_E_CORRUPT);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 f0 00 61 62 63", 8, &len), ETL_E_CORRUPT);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "02 00 61 62 63", 8, &len), ETL_E_CORRUPT);
    /* Chunk larger than the input. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "04 b0 00 61 62 63", 8, &len), ETL_E_TRUNCATED);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "ff 3f 61 62 63", 8, &len), ETL_E_TRUNCATED);
    /* A match first: nothing to copy from. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "02 b0 01 00 00", 8, &len), ETL_E_CORRUPT);
    /* Offset past the start: abc + match(offset 4). */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "05 b0 08 61 62 63 00 30", 16, &len), ETL_E_CORRUPT);
    assert_int_equal(len, 3);
    /* A match cut by the end of its chunk. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "04 b0 08 61 62 63 06", 16, &len), ETL_E_CORRUPT);
    /* A chunk expanding past 4096 bytes: a + match(1, 4098). */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 b0 02 61 ff 0f", 8192, &len), ETL_E_CORRUPT);
    /* ...and exactly to 4096: a + match(1, 4095) via length 4092. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 b0 02 61 fc 0f", 8192, &len), ETL_OK);
    assert_int_equal(len, 4096);
    /* ...then one literal more in the same chunk. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "05 b0 02 61 fc 0f 00 62", 8192, &len), ETL_E_CORRUPT);
    /* Output overflow in a compressed chunk: literal and match. */
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "03 b0 00 61 62 63", 2, &len), ETL_E_RANGE);
    assert_int_equal(len, 2);
    assert_int_equal(dec_hex_len(ETL_COMPRESSION_LZNT1, "05 b0 08 61 62 63 06 20", 11, &len), ETL_E_RANGE);
    assert_int_equal(len, 3);
}

static void test_lznt1_round_trips(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 31, 32, 33, 4095, 4096, 4097, 65536, 100000};
    uint64_t rs = 0x5eed0003;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        for (int kind = 0; kind < 3; kind++) {
            size_t n = sizes[si];
            uint8_t *d = xmalloc(n);
            for (size_t i = 0; i < n; i++) {
                if (kind == 0)
                    d[i] = (uint8_t)tu_rand(&rs);
                else if (kind == 1)
                    d[i] = (uint8_t)"the quick brown fox "[(i / 3 + (i % 7)) % 20];
                else
                    d[i] = (uint8_t)(i % 5 == 0 ? 0 : 'x');
            }
            size_t sn, len;
            uint8_t *s = lznt1_encode(d, n, (si + kind) % 2 == 0, &sn);
            uint8_t *o = xmalloc(n);
            assert_int_equal(etl_lznt1_decompress(span_of(s, sn), o, n, &len), ETL_OK);
            assert_int_equal(len, n);
            assert_memory_equal(o, d, n);
            for (size_t cut = 0; cut < sn; cut += 1 + sn / 37) {
                etl_lznt1_decompress(span_of(s, cut), o, n, &len);
                assert_true(len <= n);
                assert_memory_equal(o, d, len);
            }
            free(o);
            free(s);
            free(d);
        }
    }
}

/* ------------------------------------------------------------------------- */
/* Plain LZ77 encoder round trips                                             */

static uint8_t *make_data(int kind, size_t n, uint64_t seed)
{
    uint8_t *d = xmalloc(n);
    uint64_t rs = seed;
    static const char *words[] = {"event ", "thread ", "0x7ff6", "process ", "kernel32.dll ",
                                  "\r\n", "ntdll!", "Microsoft-Windows-", "1234", "    "};
    size_t i = 0;
    switch (kind) {
    case 0: /* random */
        for (; i < n; i++) d[i] = (uint8_t)tu_rand(&rs);
        break;
    case 1: /* text-like */
        while (i < n) {
            const char *w = words[tu_rand(&rs) % 10];
            for (; *w && i < n; w++) d[i++] = (uint8_t)*w;
        }
        break;
    case 2: /* zeros */
        memset(d, 0, n);
        break;
    case 3: /* records: a repeating structure with counters and noise */
        for (; i < n; i++) {
            size_t k = i % 48;
            d[i] = k < 8 ? (uint8_t)(i / 48 >> (k * 8 % 32)) : k < 12 ? (uint8_t)tu_rand(&rs) : (uint8_t)k;
        }
        break;
    default: /* short periods */
        for (; i < n; i++) d[i] = (uint8_t)("abcabdabcabe"[i % ((i / 1000) % 11 + 1)]);
        break;
    }
    return d;
}

static void round_trip(const uint8_t *d, size_t n)
{
    size_t bound = etl_xpress_compress_bound(n);
    uint8_t *c = xmalloc(bound);
    size_t cn = 0, len = 0;
    assert_int_equal(etl_xpress_compress(d, n, c, bound, &cn), ETL_OK);
    assert_true(cn >= 4 && cn <= bound);
    uint8_t *o = xmalloc(n);
    assert_int_equal(etl_xpress_decompress(span_of(c, cn), o, n, &len), ETL_OK);
    assert_int_equal(len, n);
    assert_memory_equal(o, d, n);
    /* The stream ends itself: the same result with room to spare. */
    uint8_t *o2 = xmalloc(n + 16);
    assert_int_equal(etl_xpress_decompress(span_of(c, cn), o2, n + 16, &len), ETL_OK);
    assert_int_equal(len, n);
    free(o2);
    /* Deterministic, and fits a buffer of exactly its size but not one byte less. */
    uint8_t *c2 = xmalloc(cn);
    size_t cn2 = 0;
    assert_int_equal(etl_xpress_compress(d, n, c2, cn, &cn2), ETL_OK);
    assert_int_equal(cn2, cn);
    assert_memory_equal(c2, c, cn);
    assert_int_equal(etl_xpress_compress(d, n, c2, cn - 1, &cn2), ETL_E_RANGE);
    free(c2);
    free(o);
    free(c);
}

static void test_xpress_round_trips(void **state)
{
    (void)state;
    static const size_t sizes[] = {0, 1, 2, 3, 4, 5, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 4095,
                                   4096, 65535, 65536, 65537, 1u << 20};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (int kind = 0; kind < 5; kind++) {
            uint8_t *d = make_data(kind, sizes[si], 0xC0FFEE + si * 7 + (uint64_t)kind);
            round_trip(d, sizes[si]);
            free(d);
        }
    /* Every small size up to 300 over repetitive data. */
    for (size_t n = 0; n <= 300; n++) {
        uint8_t *d = make_data(4, n, n);
        round_trip(d, n);
        free(d);
    }
}

static void test_xpress_compress_ratio_and_args(void **state)
{
    (void)state;
    size_t n = 1u << 20, cn;
    uint8_t *d = make_data(2, n, 1);
    uint8_t *c = xmalloc(etl_xpress_compress_bound(n));
    /* A megabyte of zeros: one literal and one long match (32-bit escape). */
    assert_int_equal(etl_xpress_compress(d, n, c, etl_xpress_compress_bound(n), &cn), ETL_OK);
    assert_true(cn < 32);
    free(d);
    d = make_data(1, n, 2);
    assert_int_equal(etl_xpress_compress(d, n, c, etl_xpress_compress_bound(n), &cn), ETL_OK);
    assert_true(cn < n / 3);
    free(d);
    /* Random data grows by at most the flag words. */
    d = make_data(0, n, 3);
    assert_int_equal(etl_xpress_compress(d, n, c, etl_xpress_compress_bound(n), &cn), ETL_OK);
    assert_true(cn <= etl_xpress_compress_bound(n));
    free(d);
    free(c);
    /* Bounds. */
    assert_int_equal(etl_xpress_compress_bound(0), 4);
    assert_int_equal(etl_xpress_compress_bound(31), 35);
    assert_int_equal(etl_xpress_compress_bound(32), 40);
    assert_int_equal(etl_xpress_compress_bound(SIZE_MAX), SIZE_MAX);
    /* Arguments. */
    uint8_t out[8];
    assert_int_equal(etl_xpress_compress(NULL, 0, out, sizeof out, &cn), ETL_OK);
    assert_int_equal(cn, 4);
    assert_int_equal(etl_rd_u32(out), 0xFFFFFFFFu);
    assert_int_equal(etl_xpress_compress(NULL, 5, out, sizeof out, &cn), ETL_E_INVALID_ARG);
    assert_int_equal(etl_xpress_compress(out, 1, NULL, 8, &cn), ETL_E_INVALID_ARG);
    assert_int_equal(etl_xpress_compress(out, 1, out, 3, &cn), ETL_E_RANGE);
    assert_int_equal(etl_xpress_compress((const uint8_t *)"abcd", 4, out, 7, &cn), ETL_E_RANGE);
    assert_int_equal(etl_xpress_compress((const uint8_t *)"abcd", 4, out, 8, &cn), ETL_OK);
    assert_int_equal(cn, 8);
}

/* ------------------------------------------------------------------------- */
/* Real ETL files                                                             */

static uint8_t *read_file(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    uint8_t *p = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (cap - len < 65536) {
            cap = cap ? cap * 2 : 1u << 20;
            p = realloc(p, cap);
            assert_non_null(p);
        }
        size_t r = fread(p + len, 1, cap - len, f);
        len += r;
        if (r == 0) break;
    }
    fclose(f);
    *n = len;
    return p;
}

#define BUF_HDR 0x48

/* Expands every compressed buffer of the file; returns how many there were.
 * Each must expand to exactly Offset - 0x48 bytes, and its first record marker
 * must have 0xC0 in byte 3. Buffers that are not compressed are left alone.
 * Each payload also goes through our encoder and back. */
static unsigned check_file(const char *path, unsigned *nbuffers)
{
    size_t n;
    uint8_t *f = read_file(path, &n);
    if (!f) {
        print_message("skipping %s: not readable\n", path);
        return 0;
    }
    etl_span file = span_of(f, n);
    uint8_t *out = xmalloc(1u << 20);
    uint8_t *enc = xmalloc(etl_xpress_compress_bound(1u << 20));
    uint8_t *back = xmalloc(1u << 20);
    unsigned compressed = 0, buffers = 0;
    size_t off = 0;
    while (etl_span_has(file, off, BUF_HDR)) {
        uint32_t size = etl_rd_u32(f + off), offset = etl_rd_u32(f + off + 0x30);
        uint16_t flag = etl_rd_u16(f + off + 0x34);
        assert_true(size >= BUF_HDR && etl_span_has(file, off, size));
        buffers++;
        if (flag & 0x40) {
            assert_true(offset >= BUF_HDR && offset - BUF_HDR <= (1u << 20));
            size_t want = offset - BUF_HDR, len = 0;
            etl_span payload = etl_span_sub(file, off + BUF_HDR, size - BUF_HDR);
            assert_int_equal(etl_xpress_decompress(payload, out, want, &len), ETL_OK);
            assert_int_equal(len, want);
            assert_true(want >= 4);
            assert_int_equal(out[3], 0xC0);
            /* Through dispatch, and one byte short. */
            assert_int_equal(etl_decompress(ETL_COMPRESSION_XPRESS, payload, back, want, &len), ETL_OK);
            assert_memory_equal(back, out, want);
            assert_int_equal(etl_xpress_decompress(payload, back, want - 1, &len), ETL_E_RANGE);
            /* Our encoder on the same bytes. */
            size_t cn = 0;
            assert_int_equal(etl_xpress_compress(out, want, enc, etl_xpress_compress_bound(want), &cn),
                             ETL_OK);
            assert_int_equal(etl_xpress_decompress(span_of(enc, cn), back, want, &len), ETL_OK);
            assert_int_equal(len, want);
            assert_memory_equal(back, out, want);
            compressed++;
        }
        off += size;
    }
    assert_int_equal(off, n);
    free(back);
    free(enc);
    free(out);
    free(f);
    if (nbuffers) *nbuffers = buffers;
    return compressed;
}

static void test_real_perfview_small(void **state)
{
    (void)state;
    const char *path = ETLKIT_SHARED_DIR "/samples/perfview-small-32bit.etl";
    size_t n;
    uint8_t *f = read_file(path, &n);
    if (!f) {
        print_message("skipping: %s not readable\n", path);
        skip();
    }
    etl_span file = span_of(f, n);
    uint32_t b1 = 0;
    assert_true(etl_ld_u32(file, 0, &b1)); /* buffer 0's BufferSize: where buffer 1 starts */
    uint32_t size = 0, offset = 0;
    uint16_t flag = 0;
    assert_true(etl_ld_u32(file, b1, &size));
    assert_true(etl_ld_u32(file, b1 + 0x30, &offset));
    assert_true(etl_ld_u16(file, b1 + 0x34, &flag));
    assert_true(flag & 0x40);
    assert_true(etl_span_has(file, b1, size));
    uint8_t out[65536];
    size_t len;
    etl_span payload = etl_span_sub(file, b1 + BUF_HDR, size - BUF_HDR);
    assert_int_equal(etl_xpress_decompress(payload, out, offset - BUF_HDR, &len), ETL_OK);
    assert_int_equal(len, offset - BUF_HDR);
    assert_int_equal(out[3], 0xC0);
    /* Cut payloads never succeed with the full length. */
    for (size_t cut = 0; cut + 4 < payload.n; cut++) {
        etl_status st = etl_xpress_decompress(span_of(payload.p, cut), out, offset - BUF_HDR, &len);
        assert_true(st != ETL_OK || len < offset - BUF_HDR);
    }
    free(f);
    unsigned nb = 0;
    assert_int_equal(check_file(path, &nb), 1);
    assert_int_equal(nb, 2);
}

static void test_real_perfview_x64(void **state)
{
    (void)state;
    unsigned nb = 0;
    unsigned c = check_file(ETLKIT_SHARED_DIR "/samples/perfview-x64-compressed.etl", &nb);
    if (!c) skip();
    assert_int_equal(nb, 360);
    assert_int_equal(c, 359);
}

static void test_real_other_samples(void **state)
{
    (void)state;
    /* The other samples with compressed buffers (see samples/SOURCES.md). */
    unsigned nb = 0;
    unsigned c = check_file(ETLKIT_SHARED_DIR "/samples/gc-threads-x64.etl", &nb);
    if (c) {
        assert_int_equal(nb, 322);
        assert_int_equal(c, 321);
    }
    c = check_file(ETLKIT_SHARED_DIR "/samples/selfdescribing-x64.etl", &nb);
    if (c) {
        assert_int_equal(nb, 3);
        assert_int_equal(c, 2);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_and_dispatch),
        cmocka_unit_test(test_xpress_spec_examples),
        cmocka_unit_test(test_xpress_literals_and_overlaps),
        cmocka_unit_test(test_xpress_length_escapes),
        cmocka_unit_test(test_xpress_random_token_streams),
        cmocka_unit_test(test_xpress_malformed),
        cmocka_unit_test(test_xpress_output_full),
        cmocka_unit_test(test_xpress_round_trips),
        cmocka_unit_test(test_xpress_compress_ratio_and_args),
        cmocka_unit_test(test_huff_spec_example),
        cmocka_unit_test(test_huff_windows_long_match),
        cmocka_unit_test(test_huff_all_literals_8bit),
        cmocka_unit_test(test_huff_tables),
        cmocka_unit_test(test_huff_random_token_streams),
        cmocka_unit_test(test_huff_malformed),
        cmocka_unit_test(test_lznt1_spec_example),
        cmocka_unit_test(test_lznt1_chunks),
        cmocka_unit_test(test_lznt1_malformed),
        cmocka_unit_test(test_lznt1_round_trips),
        cmocka_unit_test(test_real_perfview_small),
        cmocka_unit_test(test_real_perfview_x64),
        cmocka_unit_test(test_real_other_samples),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * fuzz_decompress.c - libFuzzer target for the MS-XCA decoders and the Plain
 * LZ77 encoder.
 *
 * Input: byte 0 picks the format (low 2 bits: xpress, xpress-huffman, lznt1, or
 * the dispatcher with byte 0's raw value), bytes 1-2 give out_cap (a 16-bit
 * value times 4, so up to 256 KiB), the rest is the compressed stream. The
 * output buffer is a heap block of exactly out_cap bytes so that AddressSanitizer
 * sees any write past it. Then the whole input is compressed with
 * etl_xpress_compress and must decompress back to itself (abort() otherwise).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc
 *        tests/fuzz/fuzz_decompress.c src/container/{xpress,xpress_huff,lznt1,compress}.c
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/compress.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(bool ok)
{
    if (!ok) abort();
}

static void decode_once(const uint8_t *data, size_t size)
{
    if (size < 3) return;
    uint8_t sel = data[0];
    size_t cap = ((size_t)data[1] | (size_t)data[2] << 8) * 4;
    etl_span in = {data + 3, size - 3};
    uint8_t *out = cap ? malloc(cap) : NULL;
    if (cap && !out) return;
    size_t len = (size_t)-1;
    etl_status st;
    switch (sel & 3) {
    case 0: st = etl_xpress_decompress(in, out, cap, &len); break;
    case 1: st = etl_xpress_huff_decompress(in, out, cap, &len); break;
    case 2: st = etl_lznt1_decompress(in, out, cap, &len); break;
    default: st = etl_decompress((etl_compression)(sel >> 2), in, out, cap, &len); break;
    }
    check(len <= cap);
    check(st == ETL_OK || st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED || st == ETL_E_RANGE ||
          st == ETL_E_UNSUPPORTED);
    check(etl_compression_name((etl_compression)sel)[0] != '\0');
    free(out);
}

static void round_trip(const uint8_t *data, size_t size)
{
    size_t bound = etl_xpress_compress_bound(size);
    uint8_t *c = malloc(bound);
    uint8_t *c2 = malloc(bound);
    uint8_t *back = malloc(size ? size : 1);
    check(c && c2 && back);
    size_t cn = 0, cn2 = 0, len = 0;
    check(etl_xpress_compress(data, size, c, bound, &cn) == ETL_OK);
    check(cn <= bound);
    /* Deterministic. */
    check(etl_xpress_compress(data, size, c2, bound, &cn2) == ETL_OK);
    check(cn2 == cn && memcmp(c, c2, cn) == 0);
    /* Exact size, and a larger buffer (the stream ends itself). */
    etl_span s = {c, cn};
    check(etl_xpress_decompress(s, back, size, &len) == ETL_OK);
    check(len == size && memcmp(back, data, size) == 0);
    free(back);
    back = malloc(size + 7);
    check(back != NULL);
    check(etl_xpress_decompress(s, back, size + 7, &len) == ETL_OK);
    check(len == size && memcmp(back, data, size) == 0);
    /* Too small a buffer for the compressed stream. */
    if (cn > 4) check(etl_xpress_compress(data, size, c2, cn - 1, &cn2) == ETL_E_RANGE);
    free(back);
    free(c2);
    free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    decode_once(data, size);
    round_trip(data, size);
    return 0;
}

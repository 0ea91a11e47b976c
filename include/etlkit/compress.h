/*
 * etlkit/compress.h - the compression formats an ETL buffer can use ([MS-XCA]).
 *
 * ETW compresses each buffer's payload (the bytes after the 0x48-byte buffer
 * header) with the Xpress "Plain LZ77" format. The other formats are here because
 * the buffer header can name them.
 *
 * Decoders never read or write out of bounds, whatever the input. The intended
 * call passes out_cap = the exact expanded size (known from the buffer header)
 * and then checks *out_len == out_cap: a stream that ends cleanly before the
 * output is full returns ETL_OK with the shorter *out_len.
 */
#ifndef ETLKIT_COMPRESS_H
#define ETLKIT_COMPRESS_H

#include "etlkit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The Windows COMPRESSION_FORMAT_* values. */
typedef enum etl_compression {
    ETL_COMPRESSION_NONE = 0,
    ETL_COMPRESSION_LZNT1 = 2,
    ETL_COMPRESSION_XPRESS = 3,      /* MS-XCA Plain LZ77 */
    ETL_COMPRESSION_XPRESS_HUFF = 4  /* MS-XCA LZ77+Huffman */
} etl_compression;

/* "none", "lznt1", "xpress", "xpress-huffman", or "unknown". Never NULL. */
ETL_API const char *etl_compression_name(etl_compression f);

/*
 * Decompress `in` into out[0..out_cap). *out_len gets the bytes produced (also
 * on error: the bytes written so far). Results:
 *   ETL_OK           the input was consumed cleanly (or the output is full and
 *                    only end-of-stream padding remains);
 *   ETL_E_CORRUPT    an invalid stream (offset before the start of the output,
 *                    bad Huffman table, bad chunk signature, ...);
 *   ETL_E_TRUNCATED  the input ends in the middle of a token;
 *   ETL_E_RANGE      the output would exceed out_cap.
 * `out` may be NULL only when out_cap is 0.
 */
ETL_API etl_status etl_xpress_decompress(etl_span in, uint8_t *out, size_t out_cap, size_t *out_len);      /* Plain LZ77 */
ETL_API etl_status etl_xpress_huff_decompress(etl_span in, uint8_t *out, size_t out_cap, size_t *out_len); /* LZ77+Huffman */
ETL_API etl_status etl_lznt1_decompress(etl_span in, uint8_t *out, size_t out_cap, size_t *out_len);

/* Dispatch on fmt; ETL_E_UNSUPPORTED (and *out_len = 0) for NONE or an unknown value. */
ETL_API etl_status etl_decompress(etl_compression fmt, etl_span in, uint8_t *out, size_t out_cap,
                          size_t *out_len);

/*
 * Plain LZ77 compressor, as the ETL writer uses it.
 * etl_xpress_compress_bound(n): the largest output etl_xpress_compress can
 * produce for n input bytes (SIZE_MAX if that does not fit a size_t).
 * etl_xpress_compress: deterministic (same input, same bytes); no heap, about
 * 64 KiB of stack. The stream always ends with a set flag bit after the last
 * token, as the spec's encoder does. ETL_E_RANGE when out_cap is too small
 * (out_cap >= etl_xpress_compress_bound(n) always suffices); ETL_E_INVALID_ARG
 * for a NULL pointer with a non-zero size.
 */
ETL_API size_t etl_xpress_compress_bound(size_t n);
ETL_API etl_status etl_xpress_compress(const uint8_t *in, size_t n, uint8_t *out, size_t out_cap,
                               size_t *out_len);

#ifdef __cplusplus
}
#endif
#endif

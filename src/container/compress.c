/* compress.c - names of the compression formats, and dispatch to their decoders. */
#include "etlkit/compress.h"

const char *etl_compression_name(etl_compression f)
{
    switch (f) {
    case ETL_COMPRESSION_NONE: return "none";
    case ETL_COMPRESSION_LZNT1: return "lznt1";
    case ETL_COMPRESSION_XPRESS: return "xpress";
    case ETL_COMPRESSION_XPRESS_HUFF: return "xpress-huffman";
    }
    return "unknown";
}

etl_status etl_decompress(etl_compression fmt, etl_span in, uint8_t *out, size_t out_cap,
                          size_t *out_len)
{
    switch (fmt) {
    case ETL_COMPRESSION_LZNT1: return etl_lznt1_decompress(in, out, out_cap, out_len);
    case ETL_COMPRESSION_XPRESS: return etl_xpress_decompress(in, out, out_cap, out_len);
    case ETL_COMPRESSION_XPRESS_HUFF: return etl_xpress_huff_decompress(in, out, out_cap, out_len);
    case ETL_COMPRESSION_NONE: break;
    }
    if (out_len) *out_len = 0;
    return ETL_E_UNSUPPORTED;
}

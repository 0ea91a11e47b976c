/*
 * lznt1.c - [MS-XCA] LZNT1 decoder (COMPRESSION_FORMAT_LZNT1).
 *
 * The stream is a series of chunks, each expanding to at most 4096 bytes and
 * decoded on its own (no match reaches into an earlier chunk). A chunk starts
 * with a 16-bit little-endian header: bits 0-11 = data size - 1 (the data
 * follows the header), bits 12-14 = signature 3, bit 15 = compressed. A zero
 * header, or the end of the input, ends the stream. An uncompressed chunk's data
 * is copied as is. A compressed chunk is a series of flag bytes, each followed
 * by up to 8 tokens, taken from bit 0 up: 0 = a literal byte, 1 = a 16-bit
 * match word whose high D bits are offset - 1 and low 16 - D bits length - 3,
 * where D is the number of bits that position - 1 needs (at least 4, at most
 * 12), position being the bytes this chunk has produced so far (MS-XCA 2.5).
 */
#include "etlkit/compress.h"
#include "base/bytes.h"
#include "container/lzcopy.h"

#define LZNT1_CHUNK 4096u

/* Expands one compressed chunk [ip, iend) at op. */
static etl_status lznt1_chunk(const uint8_t *ip, const uint8_t *iend, uint8_t **opp,
                              uint8_t *oend)
{
    uint8_t *op = *opp;
    uint8_t *const cstart = op;
    etl_status st = ETL_OK;
    unsigned dbits = 4;  /* offset bits at this position */
    size_t dlimit = 16;  /* ...valid while position <= dlimit */

    while (ip < iend) {
        unsigned flags = *ip++;
        for (unsigned k = 0; k < 8 && ip < iend; k++, flags >>= 1) {
            size_t pos = (size_t)(op - cstart);
            if (!(flags & 1)) {
                if (pos >= LZNT1_CHUNK) { st = ETL_E_CORRUPT; goto out; }
                if (op == oend) { st = ETL_E_RANGE; goto out; }
                *op++ = *ip++;
                continue;
            }
            if (iend - ip < 2) { st = ETL_E_CORRUPT; goto out; } /* a match cut by the chunk end */
            uint32_t tok = etl_rd_u16(ip);
            ip += 2;
            while (pos > dlimit) {
                dbits++;
                dlimit <<= 1;
            }
            size_t off = (size_t)(tok >> (16 - dbits)) + 1;
            size_t len = (size_t)(tok & ((1u << (16 - dbits)) - 1)) + 3;
            if (off > pos) { st = ETL_E_CORRUPT; goto out; }
            if (len > LZNT1_CHUNK - pos) { st = ETL_E_CORRUPT; goto out; }
            if (len > (size_t)(oend - op)) { st = ETL_E_RANGE; goto out; }
            op = etl_lzcopy(op, off, len, oend);
        }
    }
out:
    *opp = op;
    return st;
}

etl_status etl_lznt1_decompress(etl_span in, uint8_t *out, size_t out_cap, size_t *out_len)
{
    static const uint8_t empty[1] = {0};
    const uint8_t *ip = in.n ? in.p : empty;
    const uint8_t *const iend = ip + in.n;
    uint8_t sink[1];
    uint8_t *const obase = out_cap ? out : sink;
    uint8_t *op = obase;
    uint8_t *const oend = obase + out_cap;
    etl_status st = ETL_OK;

    while (ip < iend) {
        if (iend - ip < 2) { st = ETL_E_TRUNCATED; break; }
        uint32_t hdr = etl_rd_u16(ip);
        if (hdr == 0) break; /* end marker; whatever follows is not looked at */
        ip += 2;
        if (((hdr >> 12) & 7) != 3) { st = ETL_E_CORRUPT; break; }
        size_t size = (size_t)(hdr & 0xFFF) + 1;
        if ((size_t)(iend - ip) < size) { st = ETL_E_TRUNCATED; break; }
        if (hdr & 0x8000) {
            st = lznt1_chunk(ip, ip + size, &op, oend);
            if (st != ETL_OK) break;
        } else {
            if (size > (size_t)(oend - op)) { st = ETL_E_RANGE; break; }
            memcpy(op, ip, size);
            op += size;
        }
        ip += size;
    }
    if (out_len) *out_len = (size_t)(op - obase);
    return st;
}

/*
 * lzcopy.h - the LZ77 back-reference copy shared by the three decoders.
 *
 * Internal to the compression code. The caller has already checked that the
 * source lies inside the output produced so far (1 <= off <= op - out) and that
 * op + len <= oend; lzcopy never writes at or past oend.
 */
#ifndef ETLKIT_SRC_CONTAINER_LZCOPY_H
#define ETLKIT_SRC_CONTAINER_LZCOPY_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Copies len bytes from op - off to op, front to back (so off < len repeats the
 * last off bytes), and returns op + len. */
static inline uint8_t *etl_lzcopy(uint8_t *op, size_t off, size_t len, uint8_t *oend)
{
    const uint8_t *src = op - off;
    uint8_t *end = op + len;

    if (off >= 8) {
        if ((size_t)(oend - op) >= len + 8) {
            /* 8-byte chunks may run up to 7 bytes past end, still inside the
             * buffer; those bytes are rewritten later. Each chunk's source lies
             * wholly before its destination since off >= 8. */
            do {
                memcpy(op, src, 8);
                op += 8;
                src += 8;
            } while (op < end);
            return end;
        }
        if (off >= len) {
            memcpy(op, src, len);
            return end;
        }
        while ((size_t)(end - op) >= 8) {
            memcpy(op, src, 8);
            op += 8;
            src += 8;
        }
        while (op < end) *op++ = *src++;
        return end;
    }
    if (off == 1) {
        memset(op, op[-1], len);
        return end;
    }
    /* 2..7: the output is periodic, so once `off` bytes are written the same
     * bytes can be fetched from twice as far back; double until off >= 8. */
    while (off < 8 && (size_t)(end - op) > off) {
        for (size_t i = 0; i < off; i++) op[i] = src[i];
        op += off;
        off *= 2;
        src = op - off;
    }
    if (off >= 8 && (size_t)(oend - op) >= (size_t)(end - op) + 8) {
        do {
            memcpy(op, src, 8);
            op += 8;
            src += 8;
        } while (op < end);
        return end;
    }
    while (op < end) *op++ = *src++;
    return end;
}

#endif

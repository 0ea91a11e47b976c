/*
 * text.c - UTF-16LE to UTF-8, for the names ETL stores as UTF-16 (logger and file
 * names, thread names, command lines). Unpaired surrogates become U+FFFD, so the
 * output is always valid UTF-8 whatever the input.
 */
#include "etlkit/base.h"
#include "etlkit/text.h"
#include "base/bytes.h"

static size_t put_cp(char *out, size_t cap, size_t o, uint32_t cp)
{
    uint8_t b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (uint8_t)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (uint8_t)(0xC0 | cp >> 6);
        b[1] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (uint8_t)(0xE0 | cp >> 12);
        b[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (uint8_t)(0xF0 | cp >> 18);
        b[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (uint8_t)(0x80 | (cp & 0x3F));
        n = 4;
    }
    if (cap && o + n < cap) { /* keep room for the NUL */
        for (size_t i = 0; i < n; i++) out[o + i] = (char)b[i];
    }
    return n;
}

size_t etl_utf16_to_utf8(etl_span s, char *out, size_t cap)
{
    size_t o = 0, full = 0;
    bool fits = true; /* once a character does not fit, nothing after it is written */
    for (size_t i = 0; i + 1 < s.n; i += 2) {
        uint32_t u = etl_rd_u16(s.p + i);
        if (u == 0) break;
        if (u >= 0xD800 && u < 0xDC00 && i + 3 < s.n) {
            uint32_t lo = etl_rd_u16(s.p + i + 2);
            if (lo >= 0xDC00 && lo < 0xE000) {
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                i += 2;
            } else {
                u = 0xFFFD;
            }
        } else if (u >= 0xD800 && u < 0xE000) {
            u = 0xFFFD;
        }
        size_t n = put_cp(out, fits ? cap : 0, o, u);
        if (fits && cap && o + n < cap)
            o += n;
        else
            fits = false;
        full += n;
    }
    if (cap) out[o] = '\0';
    return full;
}

size_t etl_latin1_to_utf8(etl_span s, char *out, size_t cap)
{
    size_t o = 0;
    for (size_t i = 0; i < s.n && s.p[i] && o + 3 < cap; i++) {
        uint8_t c = s.p[i];
        if (c < 0x80) {
            out[o++] = (char)c;
        } else {
            out[o++] = (char)(0xC0 | c >> 6);
            out[o++] = (char)(0x80 | (c & 0x3F));
        }
    }
    out[o] = 0;
    return o;
}

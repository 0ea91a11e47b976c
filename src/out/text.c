/* text.c - see text.h. */
#include "out/text.h"

#include <stdint.h>
#include <string.h>
#include "base/textsafe.h"

/* The escape of one character for text (ETL_TEXT_CONTROL or _INVALID) into out[8]; its length. */
static size_t text_escape(char out[8], uint32_t cp, int kind)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    out[n++] = '\\';
    if (kind == ETL_TEXT_INVALID || cp < 0x80) { /* a byte: \xNN */
        out[n++] = 'x';
    } else { /* a code point: \uNNNN */
        out[n++] = 'u';
        out[n++] = hex[cp >> 12 & 15];
        out[n++] = hex[cp >> 8 & 15];
    }
    out[n++] = hex[cp >> 4 & 15];
    out[n++] = hex[cp & 15];
    return n;
}

size_t text_str_buf(char *buf, size_t len, size_t cap, const char *str, int *cut)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        char esc[8];
        const char *from = esc;
        size_t en, take;
        if (*s >= 0x20 && *s < 0x7F) { /* plain ASCII: as it is */
            from = (const char *)s;
            en = take = 1;
        } else {
            uint32_t cp;
            int kind;
            take = etl_text_char(s, &cp, &kind);
            if (kind == ETL_TEXT_PLAIN) from = (const char *)s, en = take;
            else en = text_escape(esc, cp, kind);
        }
        if (len + en > cap) { /* whole characters and whole escapes only */
            if (cut) *cut = 1;
            break;
        }
        memcpy(buf + len, from, en);
        len += en;
        s += take;
    }
    return len;
}

size_t text_width(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t w = 0;
    while (*s) {
        if (*s >= 0x20 && *s < 0x7F) {
            w++;
            s++;
            continue;
        }
        uint32_t cp;
        int kind;
        char esc[8];
        s += etl_text_char(s, &cp, &kind);
        w += kind == ETL_TEXT_PLAIN ? 1 : text_escape(esc, cp, kind);
    }
    return w;
}

void text_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        size_t n = 0;
        while (s[n] >= 0x20 && s[n] < 0x7F) n++; /* a run of plain ASCII: one write */
        if (n) {
            fwrite(s, 1, n, f);
            s += n;
            continue;
        }
        uint32_t cp;
        int kind;
        char esc[8];
        size_t take = etl_text_char(s, &cp, &kind);
        if (kind == ETL_TEXT_PLAIN) fwrite(s, 1, take, f);
        else fwrite(esc, 1, text_escape(esc, cp, kind), f);
        s += take;
    }
}

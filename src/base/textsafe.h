/*
 * textsafe.h - which characters of a string from a trace may be printed as they
 * are. Names come from the traced machine (any process can set its own thread
 * description), so every writer of text asks this one classifier: the terminal
 * escaping of the CLI (text_str), its JSON strings, the report page's HTML and
 * the ftrace comms of the export. It also validates UTF-8 (RFC 3629: no overlong
 * forms, no surrogates, nothing past U+10FFFF).
 */
#ifndef ETLKIT_SRC_BASE_TEXTSAFE_H
#define ETLKIT_SRC_BASE_TEXTSAFE_H

#include <stddef.h>
#include <stdint.h>

enum {
    ETL_TEXT_PLAIN = 0,   /* printable as it is */
    /*
     * Must not reach a terminal or a line-based format as it is: C0 controls and DEL
     * (ESC, BEL, CR, LF...), C1 controls U+0080..U+009F (what Latin-1 image names
     * produce; a terminal may read U+009B as CSI), the line and paragraph separators
     * U+2028/U+2029, and the bidirectional formatting characters that reorder what
     * is shown: U+061C, U+200E/U+200F, U+202A..U+202E, U+2066..U+2069.
     */
    ETL_TEXT_CONTROL = 1,
    ETL_TEXT_INVALID = 2  /* a byte that does not start valid UTF-8 */
};

/*
 * The character at s (NUL-terminated, *s != 0): returns its length in bytes (1..4),
 * sets *cp to its code point (INVALID: the byte) and *kind to ETL_TEXT_*. Never reads
 * past the NUL: a sequence cut by it is INVALID.
 */
static inline size_t etl_text_char(const unsigned char *s, uint32_t *cp, int *kind)
{
    unsigned c = s[0];
    if (c < 0x80) {
        *cp = c;
        *kind = c < 0x20 || c == 0x7F ? ETL_TEXT_CONTROL : ETL_TEXT_PLAIN;
        return 1;
    }
    size_t n = (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    uint32_t v = n == 2 ? (c & 0x1F) : n == 3 ? (c & 0x0F) : (c & 0x07);
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) { /* a NUL stops here too */
            n = 0;
            break;
        }
        v = v << 6 | (s[i] & 0x3Fu);
    }
    static const uint32_t least[5] = {0, 0, 0x80, 0x800, 0x10000};
    if (!n || v < least[n] || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
        *cp = c;
        *kind = ETL_TEXT_INVALID;
        return 1;
    }
    *cp = v;
    *kind = v < 0xA0 || v == 0x061C || v == 0x200E || v == 0x200F || (v >= 0x2028 && v <= 0x202E) ||
                    (v >= 0x2066 && v <= 0x2069)
                ? ETL_TEXT_CONTROL
                : ETL_TEXT_PLAIN;
    return n;
}

/*
 * The length of the first bytes of s (NUL-terminated), at most max, that end where a
 * character does: a character max would split is left out, and so is a sequence the NUL
 * cuts short (a name an earlier snprintf cut), so that what is kept is never less valid
 * UTF-8 than s was.
 */
static inline size_t etl_text_cut(const char *s, size_t max)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (p[n]) {
        uint32_t cp;
        int kind;
        size_t len = etl_text_char(p + n, &cp, &kind);
        if (kind == ETL_TEXT_INVALID && p[n] >= 0xC0) { /* a lead byte: is its sequence cut by the end? */
            size_t k = 1;
            while (k < 4 && (p[n + k] & 0xC0) == 0x80) k++;
            if (!p[n + k]) break;
        }
        if (len > max - n) break;
        n += len;
    }
    return n;
}

#endif

/* etlkit/text.h - text helpers for the UTF-16 strings ETL files carry. */
#ifndef ETLKIT_TEXT_H
#define ETLKIT_TEXT_H

#include "etlkit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Converts the UTF-16LE string at the start of s (up to its first NUL or the end
 * of s) to NUL-terminated UTF-8 in out[cap], truncating on a code point boundary.
 * Returns the UTF-8 length the whole string needs (not counting the NUL), so a
 * return >= cap means the output was truncated.
 */
ETL_API size_t etl_utf16_to_utf8(etl_span s, char *out, size_t cap);

/*
 * ANSI bytes read as Latin-1 (the reader's convention for ImageFileName), up to the
 * first NUL or the end of s, to NUL-terminated UTF-8 in out[cap > 0], stopping before
 * a character when fewer than 3 bytes are left. Returns the bytes written, NUL excluded.
 */
ETL_API size_t etl_latin1_to_utf8(etl_span s, char *out, size_t cap);

#ifdef __cplusplus
}
#endif
#endif

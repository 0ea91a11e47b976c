/*
 * text.h - strings from a trace (process and thread names, paths, logger names) for
 * a terminal or an aligned table. Nothing in a name can move the cursor, ring, end
 * the line, reorder what follows or start an escape sequence. Which characters are
 * escaped is decided in one place, base/textsafe.h; JSON strings are json.h's.
 */
#ifndef ETLKIT_SRC_OUT_TEXT_H
#define ETLKIT_SRC_OUT_TEXT_H

#include <stddef.h>
#include <stdio.h>

/*
 * C0 controls and DEL as \xNN (ESC is \x1b), bytes that are not UTF-8 as \xNN, C1
 * controls, U+2028/U+2029 and the bidirectional formatting characters as \uNNNN
 * (U+202E is \u202e); the rest as it is.
 */
void text_str(FILE *f, const char *s);
/*
 * The same appended to buf[len..cap) (no NUL): whole characters and escapes only;
 * sets *cut (when not NULL) if s did not fit. Returns the new length.
 */
size_t text_str_buf(char *buf, size_t len, size_t cap, const char *s, int *cut);
/* Columns text_str's output of s takes: one per character, escapes by their length. */
size_t text_width(const char *s);
/*
 * A name as text shows it: `""` when it is empty (a process whose ImageFileName is
 * empty), so it is neither a blank cell nor the model's unknown process ("Unknown").
 */
static inline const char *text_name(const char *s) { return *s ? s : "\"\""; }

#endif

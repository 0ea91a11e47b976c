/* csv.c - see csv.h. */
#include "out/csv.h"

#include <stdbool.h>
#include <string.h>

/*
 * A spreadsheet opens a cell that starts with = + - @ (or TAB, CR) as a formula:
 * such text gets a leading ' (OWASP's advice), which shows it as text. Numbers
 * ("-5", "+1.25") stay numbers, and so does "-" alone, the reports' "none" (no
 * operand: no formula).
 */
static bool formula_like(const char *s)
{
    if (!strchr("=+-@\t\r", s[0]) || !s[0] || strcmp(s, "-") == 0) return false;
    const char *p = s + (s[0] == '-' || s[0] == '+');
    size_t d = strspn(p, "0123456789");
    if (d && p[d] == '.') p += d + 1, d = strspn(p, "0123456789");
    return !(d && !p[d]);
}

/*
 * s between double quotes (when q) with every " doubled, after an optional lead
 * character (the spreadsheet's '), into buf[len..cap): cut before the closing quote
 * rather than overrun.
 */
static size_t quoted_buf(char *buf, size_t len, size_t cap, char lead, const char *s, bool q)
{
    if (q && len < cap) buf[len++] = '"';
    if (lead && len < cap) buf[len++] = lead;
    for (; *s && len + 2 < cap; s++) {
        if (*s == '"') buf[len++] = '"';
        buf[len++] = *s;
    }
    if (q && len < cap) buf[len++] = '"';
    return len;
}

static void quoted(FILE *f, char lead, const char *s, bool q)
{
    if (q) fputc('"', f);
    if (lead) fputc(lead, f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    if (q) fputc('"', f);
}

static bool needs_quotes(const char *s) { return s[strcspn(s, ",\"\r\n")] != 0; }

size_t csv_field_buf(char *buf, size_t len, size_t cap, const char *s)
{
    size_t plain = strcspn(s, ",\"\r\n");
    if (!s[plain] && plain) { /* nothing to quote: one copy, cut as quoted_buf cuts */
        size_t room = cap > len + 2 ? cap - len - 2 : 0;
        if (plain > room) plain = room;
        memcpy(buf + len, s, plain);
        return len + plain;
    }
    return quoted_buf(buf, len, cap, 0, s, true);
}

size_t csv_sheet_buf(char *buf, size_t len, size_t cap, const char *s)
{
    if (!s[0]) return len; /* blank: unknown */
    if (!formula_like(s)) return csv_field_buf(buf, len, cap, s);
    return quoted_buf(buf, len, cap, '\'', s, needs_quotes(s));
}

void csv_field(FILE *f, const char *s)
{
    if (!*s) { /* an empty text, not a NULL (an empty field) */
        fputs("\"\"", f);
        return;
    }
    if (!needs_quotes(s)) fputs(s, f);
    else quoted(f, 0, s, true);
}

void csv_sheet(FILE *f, const char *s)
{
    if (!*s) return;
    if (!formula_like(s)) csv_field(f, s);
    else quoted(f, '\'', s, needs_quotes(s));
}

void ln_csv_quoted(ln_buf *l, const char *s)
{
    size_t n = strlen(s);
    /* The quotes, the doubled ones and the NUL ln keeps room for: counted only when the worst case might not fit. */
    if (l->n + 2 * n + 3 > l->cap) {
        size_t q = 0;
        for (size_t i = 0; i < n; i++) q += s[i] == '"';
        if (l->n + n + q + 3 > l->cap) {
            l->cut = 1;
            return;
        }
    }
    l->n = quoted_buf(l->b, l->n, l->cap, 0, s, true);
}

/* out.c - see out.h. */
#include "out.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"

void jw_init(jw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->first[0] = 1;
}

static void jw_key(jw *w, const char *key)
{
    if (!w->first[w->depth]) fputc(',', w->f);
    w->first[w->depth] = 0;
    if (key) {
        json_str(w->f, key);
        fputc(':', w->f);
    }
}

static void jw_open(jw *w, const char *key, int c)
{
    jw_key(w, key);
    fputc(c, w->f);
    if (w->depth + 1 < sizeof w->first) w->depth++;
    w->first[w->depth] = 1;
}

static void jw_close(jw *w, int c)
{
    fputc(c, w->f);
    if (w->depth) w->depth--;
}

void jw_obj(jw *w, const char *key) { jw_open(w, key, '{'); }
void jw_obj_end(jw *w) { jw_close(w, '}'); }
void jw_arr(jw *w, const char *key) { jw_open(w, key, '['); }
void jw_arr_end(jw *w) { jw_close(w, ']'); }

void jw_u64(jw *w, const char *key, uint64_t v)
{
    char t[24];
    jw_key(w, key);
    fwrite(t, 1, fmt_u64(t, v), w->f);
}

void jw_i64(jw *w, const char *key, int64_t v)
{
    char t[24];
    jw_key(w, key);
    fwrite(t, 1, fmt_i64(t, v), w->f);
}

void jw_str(jw *w, const char *key, const char *s)
{
    jw_key(w, key);
    json_str(w->f, s ? s : "");
}

void jw_null(jw *w, const char *key)
{
    jw_key(w, key);
    fputs("null", w->f);
}

void jw_bool(jw *w, const char *key, int v)
{
    jw_key(w, key);
    fputs(v ? "true" : "false", w->f);
}

void jw_fixed(jw *w, const char *key, int64_t v, unsigned decimals)
{
    char t[32];
    jw_key(w, key);
    fputs(fmt_fixed(t, v, decimals), w->f);
}

void jw_end(jw *w)
{
    fputc('\n', w->f);
}

size_t fmt_fixed_n(char out[32], int64_t v, unsigned decimals)
{
    uint64_t p = 1;
    for (unsigned i = 0; i < decimals; i++) p *= 10;
    uint64_t a = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
    char *o = out;
    if (v < 0) *o++ = '-';
    o += fmt_u64(o, a / p);
    if (decimals) {
        *o++ = '.';
        uint64_t f = a % p;
        for (unsigned i = decimals; i-- > 0;) {
            o[i] = (char)('0' + f % 10);
            f /= 10;
        }
        o += decimals;
    }
    *o = 0;
    return (size_t)(o - out);
}

const char *fmt_fixed(char out[32], int64_t v, unsigned decimals)
{
    fmt_fixed_n(out, v, decimals);
    return out;
}

const char *fmt_dur(char out[32], int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns; /* INT64_MIN too, unwrapped */
    size_t n;
    const char *unit;
    /* At most 20 digits, a sign and a point: the unit always fits. */
    if (a < 1000) n = fmt_i64(out, ns), unit = " ns";
    else if (a < 1000000) n = fmt_fixed_n(out, ns / 10, 2), unit = " us";
    else if (a < 1000000000) n = fmt_fixed_n(out, ns / 1000, 3), unit = " ms";
    else n = fmt_fixed_n(out, ns / 1000000, 3), unit = " s";
    memcpy(out + n, unit, strlen(unit) + 1);
    return out;
}

/* A table that lost a row (out of memory): the command's end says so (tbl_failed), exit 1. */
static int tbl_oom;

int tbl_failed(void) { return tbl_oom; }

int tbl_init(tbl *t, unsigned ncol, const char *const *head)
{
    memset(t, 0, sizeof *t);
    t->ncol = ncol;
    t->head = calloc(ncol, sizeof *t->head);
    t->align = calloc(ncol, 1);
    if (!t->head || !t->align) {
        free(t->head);
        free(t->align);
        t->head = NULL;
        t->align = NULL;
        t->ncol = 0; /* prints nothing, holds nothing */
        tbl_oom = 1;
        return -1;
    }
    for (unsigned c = 0; c < ncol; c++) {
        t->align[c] = head[c][0] == '=' ? TBL_RIGHT : TBL_LEFT;
        t->head[c] = head[c] + (head[c][0] == '=');
    }
    return 0;
}

int tbl_row(tbl *t, const char *const *cells)
{
    if (t->nrow == t->cap) {
        size_t ncap = t->cap ? t->cap * 2 : 64;
        char **c = realloc(t->cells, ncap * t->ncol * sizeof *c);
        if (!c) {
            tbl_oom = 1;
            return -1;
        }
        t->cells = c;
        t->cap = ncap;
    }
    for (unsigned c = 0; c < t->ncol; c++) {
        char *s = strdup(cells[c] ? cells[c] : "");
        if (!s) { /* the row's cells so far are freed with it */
            for (unsigned k = 0; k < c; k++) free(t->cells[t->nrow * t->ncol + k]);
            tbl_oom = 1;
            return -1;
        }
        t->cells[t->nrow * t->ncol + c] = s;
    }
    t->nrow++;
    return 0;
}

static void pad(FILE *f, size_t n)
{
    while (n--) fputc(' ', f);
}

void tbl_print_text(const tbl *t, FILE *f, const char *indent)
{
    size_t *w = calloc(t->ncol, sizeof *w);
    if (!w) return;
    /* Widths of the text as printed: escapes and all, so an escaped name keeps its column. */
    for (unsigned c = 0; c < t->ncol; c++) w[c] = text_width(t->head[c]);
    for (size_t r = 0; r < t->nrow; r++)
        for (unsigned c = 0; c < t->ncol; c++) {
            size_t x = text_width(t->cells[r * t->ncol + c]);
            if (x > w[c]) w[c] = x;
        }
    for (size_t r = 0; r <= t->nrow; r++) {
        fputs(indent, f);
        for (unsigned c = 0; c < t->ncol; c++) {
            const char *s = r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncol + c];
            size_t x = text_width(s);
            int last = c + 1 == t->ncol;
            if (t->align[c] == TBL_RIGHT) pad(f, w[c] - x);
            text_str(f, s);
            if (!last) {
                if (t->align[c] == TBL_LEFT) pad(f, w[c] - x);
                fputs("  ", f);
            }
        }
        fputc('\n', f);
    }
    free(w);
}

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

size_t csv_field_buf(char *buf, size_t len, size_t cap, const char *s)
{
    size_t plain = strcspn(s, ",\"\r\n");
    if (!s[plain] && plain) { /* nothing to quote: one copy, cut as the loop below cuts */
        size_t room = cap > len + 2 ? cap - len - 2 : 0;
        if (plain > room) plain = room;
        memcpy(buf + len, s, plain);
        return len + plain;
    }
    if (len < cap) buf[len++] = '"';
    for (; *s && len + 2 < cap; s++) {
        if (*s == '"') buf[len++] = '"';
        buf[len++] = *s;
    }
    if (len < cap) buf[len++] = '"';
    return len;
}

size_t csv_sheet_buf(char *buf, size_t len, size_t cap, const char *s)
{
    if (!s[0]) return len; /* blank: unknown */
    if (!formula_like(s)) return csv_field_buf(buf, len, cap, s);
    bool q = s[strcspn(s, ",\"\r\n")] != 0;
    if (q && len < cap) buf[len++] = '"';
    if (len < cap) buf[len++] = '\'';
    for (; *s && len + 2 < cap; s++) {
        if (*s == '"') buf[len++] = '"';
        buf[len++] = *s;
    }
    if (q && len < cap) buf[len++] = '"';
    return len;
}

void csv_field(FILE *f, const char *s)
{
    if (!*s) { /* an empty text, not a NULL (an empty field) */
        fputs("\"\"", f);
        return;
    }
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

void csv_sheet(FILE *f, const char *s)
{
    if (!*s) return;
    if (!formula_like(s)) {
        csv_field(f, s);
        return;
    }
    int q = strpbrk(s, ",\"\r\n") != NULL;
    if (q) fputc('"', f);
    fputc('\'', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    if (q) fputc('"', f);
}

void tbl_print_csv(const tbl *t, FILE *f, int crlf)
{
    const char *eol = crlf ? "\r\n" : "\n";
    for (size_t r = 0; r <= t->nrow; r++) {
        for (unsigned c = 0; c < t->ncol; c++) {
            if (c) fputc(',', f);
            csv_sheet(f, r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncol + c]);
        }
        fputs(eol, f);
    }
}

void tbl_free(tbl *t)
{
    for (size_t i = 0; i < t->nrow * t->ncol; i++) free(t->cells[i]);
    free(t->cells);
    free(t->head);
    free(t->align);
    memset(t, 0, sizeof *t);
}

/* json.c - see json.h. */
#include "out/json.h"

#include "base/platform.h"
#include "base/textsafe.h"
#include "out/text.h"

/* The writer's bytes, a token at a time: the output is one thread's (its stream's lock is not taken per byte). */
static void put(FILE *f, const char *p, size_t n)
{
    if (n > 64) {
        fwrite(p, 1, n, f);
        return;
    }
    for (size_t i = 0; i < n; i++) etl_putc_unlocked(p[i], f);
}

size_t json_str_buf(char *buf, size_t len, size_t cap, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    if (len + 2 > cap) return len;
    buf[len++] = '"';
    while (*s) {
        char esc[8];
        size_t en = 0, take = 1;
        unsigned c = *s;
        /* Plain ASCII, the common case: a run at once, as much of it as leaves room for the ellipsis. */
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && len + 5 <= cap) {
            const unsigned char *r = s + 1;
            while (*r >= 0x20 && *r < 0x7F && *r != '"' && *r != '\\') r++;
            size_t k = (size_t)(r - s), room = cap - 4 - len;
            if (k > room) k = room;
            memcpy(buf + len, s, k);
            len += k;
            s += k;
            continue;
        }
        uint32_t cp;
        int kind;
        take = etl_text_char(s, &cp, &kind);
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            en = 2;
        } else if (kind == ETL_TEXT_INVALID) { /* not UTF-8: U+FFFD, so the output always is */
            memcpy(esc, "\xef\xbf\xbd", 3);
            en = 3;
        } else if (kind == ETL_TEXT_CONTROL) { /* C0, C1, separators, bidi: \u escapes (all in the BMP) */
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = hex[cp >> 12 & 15];
            esc[3] = hex[cp >> 8 & 15];
            esc[4] = hex[cp >> 4 & 15];
            esc[5] = hex[cp & 15];
            en = 6;
        } else {
            memcpy(esc, s, take);
            en = take;
        }
        if (len + en + 4 > cap) { /* no room: end cleanly, with an ellipsis if it fits */
            if (len + 4 <= cap) {
                memcpy(buf + len, "\xe2\x80\xa6", 3);
                len += 3;
            }
            break;
        }
        memcpy(buf + len, esc, en);
        len += en;
        s += take;
    }
    buf[len++] = '"';
    return len;
}

void json_str(FILE *f, const char *s)
{
    static char buf[1 << 16]; /* header names are at most a few KB */
    put(f, buf, json_str_buf(buf, 0, sizeof buf, s));
}

void json_script_safe(FILE *f, const char *json, size_t n)
{
    size_t from = 0;
    for (size_t i = 0; i < n; i++) {
        const char *rep = json[i] == '<' ? "\\u003c" : json[i] == '>' ? "\\u003e" : json[i] == '&' ? "\\u0026" : NULL;
        if (!rep) continue;
        fwrite(json + from, 1, i - from, f);
        fputs(rep, f);
        from = i + 1;
    }
    fwrite(json + from, 1, n - from, f);
}

void jw_init(jw *w, FILE *f)
{
    memset(w, 0, sizeof *w);
    w->f = f;
    w->first[0] = 1;
}

static void jw_key(jw *w, const char *key)
{
    if (!w->first[w->depth]) etl_putc_unlocked(',', w->f);
    w->first[w->depth] = 0;
    if (key) {
        json_str(w->f, key);
        etl_putc_unlocked(':', w->f);
    }
}

static void jw_open(jw *w, const char *key, int c)
{
    jw_key(w, key);
    etl_putc_unlocked(c, w->f);
    if (w->depth + 1 < sizeof w->first) w->depth++;
    w->first[w->depth] = 1;
}

static void jw_close(jw *w, int c)
{
    etl_putc_unlocked(c, w->f);
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
    put(w->f, t, fmt_u64(t, v));
}

void jw_i64(jw *w, const char *key, int64_t v)
{
    char t[24];
    jw_key(w, key);
    put(w->f, t, fmt_i64(t, v));
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

void ln_stext(ln_buf *l, const char *s)
{
    /* Text: quoted when it has spaces or is empty, escaped as text_str escapes. */
    int q = strchr(s, ' ') != NULL || !*s;
    if (q) ln_raw(l, "\"", 1);
    /* Room kept for the closing quote and the NUL, as ln_raw keeps it. */
    size_t cap = l->cap > (size_t)q + 1 ? l->cap - (size_t)q - 1 : 0;
    if (l->n <= cap) l->n = text_str_buf(l->b, l->n, cap, s, &l->cut);
    else l->cut = 1;
    if (q) ln_raw(l, "\"", 1);
}

void ln_hex(ln_buf *l, const char *key, uint64_t v)
{
    char t[19];
    t[fmt_hex(t, v)] = 0;
    ln_s(l, key, t);
}

void ln_open(ln_buf *l, const char *key)
{
    ln_key(l, key);
    ln_raw(l, "{", 1);
    l->first = 1;
}

void ln_close(ln_buf *l)
{
    ln_raw(l, l->json ? "}" : " }", l->json ? 1 : 2);
    l->first = 0;
}

void ln_arr(ln_buf *l, const char *key)
{
    ln_key(l, key);
    ln_raw(l, "[", 1);
    l->first = 1;
}

void ln_arr_end(ln_buf *l)
{
    ln_raw(l, "]", 1);
    l->first = 0;
}

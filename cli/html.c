/* html.c - see html.h. */
#include "html.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "base/textsafe.h"
#include "out/json.h"

void html_text(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        switch (*p) {
        case '&': fputs("&amp;", f); p++; continue;
        case '<': fputs("&lt;", f); p++; continue;
        case '>': fputs("&gt;", f); p++; continue;
        case '"': fputs("&quot;", f); p++; continue;
        case '\'': fputs("&#39;", f); p++; continue;
        default: break;
        }
        uint32_t cp;
        int kind;
        size_t n = etl_text_char(p, &cp, &kind);
        if (kind == ETL_TEXT_INVALID) {
            fputs("\xEF\xBF\xBD", f);
        } else if (kind == ETL_TEXT_CONTROL) {
            /* No control character in a page (C0 and C1 are not allowed in HTML text), no bidirectional
               override reordering what follows it: dropped (tab and newline become spaces). */
            if (*p == '\t' || *p == '\n') fputc(' ', f);
        } else {
            fwrite(p, 1, n, f);
        }
        p += n;
    }
}

void html_textf(FILE *f, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    html_text(f, buf);
}

void html_json_block(FILE *f, const char *id, const char *json, size_t n)
{
    fprintf(f, "<script type=\"application/json\" id=\"%s\">", id);
    json_script_safe(f, json, n);
    fputs("</script>\n", f);
}

void html_hbars(FILE *f, const char *id, const char *title, const html_bar *bars, size_t n)
{
    enum { W = 900, LABEL = 300, TEXT = 130, ROW = 22 };
    int64_t max = 0;
    for (size_t i = 0; i < n; i++)
        if (bars[i].value > max) max = bars[i].value;
    unsigned h = (unsigned)(n ? n : 1) * ROW + 6;
    fprintf(f, "<figure class=\"chart\"><svg id=\"%s\" class=\"bars\" viewBox=\"0 0 %u %u\" role=\"img\" "
               "aria-labelledby=\"%s-t %s-d\" preserveAspectRatio=\"xMinYMin meet\"><title id=\"%s-t\">",
            id, W, h, id, id, id);
    html_text(f, title);
    fprintf(f, "</title><desc id=\"%s-d\">", id);
    for (size_t i = 0; i < n; i++) {
        html_text(f, bars[i].label);
        fputs(": ", f);
        html_text(f, bars[i].text);
        fputs(i + 1 < n ? "; " : ".", f);
    }
    if (!n) fputs("No data.", f);
    fputs("</desc>\n", f);
    for (size_t i = 0; i < n; i++) {
        unsigned y = (unsigned)i * ROW + 3;
        double len = max > 0 ? (double)bars[i].value / (double)max * (W - LABEL - TEXT - 10) : 0;
        if (bars[i].value > 0 && len < 1) len = 1;
        fprintf(f, "<g><title>");
        if (bars[i].tip) html_text(f, bars[i].tip);
        else {
            html_text(f, bars[i].label);
            fputs(": ", f);
            html_text(f, bars[i].text);
        }
        fprintf(f, "</title><text x=\"%u\" y=\"%u\" class=\"lab\">", LABEL - 6, y + 15);
        /* Long labels are cut for the chart; the tooltip and the description keep them whole. */
        size_t ln = strlen(bars[i].label);
        if (ln > 44) {
            char cut[160];
            size_t k = 42;
            while (k > 0 && ((unsigned char)bars[i].label[k] & 0xC0) == 0x80) k--;
            snprintf(cut, sizeof cut, "%.*s\xE2\x80\xA6", (int)k, bars[i].label);
            html_text(f, cut);
        } else {
            html_text(f, bars[i].label);
        }
        fprintf(f, "</text><rect x=\"%u\" y=\"%u\" width=\"%.1f\" height=\"%u\" class=\"c%u\"/>", LABEL, y + 2, len,
                ROW - 6, bars[i].color % HTML_NCOLORS);
        fprintf(f, "<text x=\"%.1f\" y=\"%u\" class=\"val\">", LABEL + len + 6, y + 15);
        html_text(f, bars[i].text);
        fputs("</text></g>\n", f);
    }
    fputs("</svg></figure>\n", f);
}

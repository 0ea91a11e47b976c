/*
 * html.h - the small pieces `etlkit report` builds its page from: HTML escaping
 * (always well-formed, valid UTF-8), a JSON block safe inside <script>, and the
 * SVG charts drawn by etlkit itself (no library, no network): horizontal bars
 * with a text alternative and a native tooltip per bar.
 */
#ifndef ETLKIT_CLI_HTML_H
#define ETLKIT_CLI_HTML_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Text or attribute value: & < > " ' escaped, control characters dropped (base/textsafe.h: C0, C1, U+2028/9,
   bidirectional formatting), invalid UTF-8 as U+FFFD. */
void html_text(FILE *f, const char *s);
/* printf, then the result escaped as html_text does. */
void html_textf(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * Copies a JSON document into a <script type="application/json"> element: every
 * '<', '>' and '&' (they only occur inside strings) becomes \u003c, \u003e, \u0026,
 * so no name in the data can close the element; the document stays equal.
 */
void html_json_block(FILE *f, const char *id, const char *json, size_t n);

/* The colour-blind-safe categorical palette (Okabe and Ito), as CSS classes c0..c7 (c7: "other"). */
enum { HTML_NCOLORS = 8 };

/* One bar of a horizontal bar chart. */
typedef struct html_bar {
    const char *label;   /* left of the bar */
    int64_t value;       /* the bar's length, relative to the largest */
    const char *text;    /* right of the bar: the value for people */
    const char *tip;     /* tooltip (SVG <title>); NULL: label and text */
    unsigned color;      /* palette class c0..c7 */
} html_bar;

/*
 * A horizontal bar chart as an inline SVG figure: role="img" with a <title> and a <desc>
 * (the text alternative: every bar's label and text), one <title> per bar for hover.
 */
void html_hbars(FILE *f, const char *id, const char *title, const html_bar *bars, size_t n);

#endif

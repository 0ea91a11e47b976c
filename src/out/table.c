/* table.c - see table.h. */
#include "out/table.h"

#include <stdlib.h>
#include <string.h>
#include "out/csv.h"
#include "out/text.h"

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
    /* A report's table has a handful of columns: their widths need no allocation, so none can fail. */
    size_t small[32], *w = t->ncol <= 32 ? small : calloc(t->ncol, sizeof *w);
    if (!w) {
        tbl_oom = 1; /* the table is lost: the command's end says so (tbl_failed), exit 1 */
        return;
    }
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
    if (w != small) free(w);
}

void tbl_print_sheet(const tbl *t, FILE *f)
{
    fputs(CSV_SHEET_BOM, f);
    for (size_t r = 0; r <= t->nrow; r++) {
        for (unsigned c = 0; c < t->ncol; c++) {
            if (c) fputc(',', f);
            csv_sheet(f, r == 0 ? t->head[c] : t->cells[(r - 1) * t->ncol + c]);
        }
        fputs(CSV_SHEET_EOL, f);
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

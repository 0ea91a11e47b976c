/*
 * table.h - a report's table: cells collected row by row, then written aligned
 * for people (numbers right-aligned, names escaped as text.h escapes them) or as
 * the reports' CSV (csv.h's spreadsheet form: BOM, header row, cells through
 * csv_sheet, CRLF).
 */
#ifndef ETLKIT_SRC_OUT_TABLE_H
#define ETLKIT_SRC_OUT_TABLE_H

#include <stddef.h>
#include <stdio.h>

enum { TBL_LEFT = 0, TBL_RIGHT = 1 };

typedef struct tbl {
    unsigned ncol;
    const char **head;
    unsigned char *align;
    char **cells;   /* nrow * ncol, owned */
    size_t nrow, cap;
} tbl;

/* Columns: "Name" left-aligned, "=Name" right-aligned (numbers). Returns -1 on out of memory. */
int tbl_init(tbl *t, unsigned ncol, const char *const *head);
/* Adds a row of exactly ncol cells (NULL: empty), copied. Returns -1 on out of memory (the row is lost). */
int tbl_row(tbl *t, const char *const *cells);
/*
 * Writes the table: aligned text (indent, two spaces between columns; cells through text_str,
 * widths of the escaped text) or the reports' CSV (CSV_SHEET_BOM, the header row, cells through
 * csv_sheet, CSV_SHEET_EOL after each row): every report's --csv is this one form.
 */
void tbl_print_text(const tbl *t, FILE *f, const char *indent);
void tbl_print_sheet(const tbl *t, FILE *f);
void tbl_free(tbl *t);
/* Whether a table lost a row (or, printed, all of it) to memory since the program started (commands then exit 1). */
int tbl_failed(void);

#endif

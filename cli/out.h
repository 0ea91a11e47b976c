/*
 * out.h - the one JSON writer and the one table writer (aligned text or RFC 4180
 * CSV) that every report shares, so a number is formatted the same way in each.
 *
 * JSON: a streaming writer that tracks nesting and commas; numbers are exact
 * integers (durations in ns), strings always valid UTF-8. Tables: cells are
 * collected row by row, then written aligned for people (numbers right-aligned)
 * or as CSV with a header row.
 */
#ifndef ETLKIT_CLI_OUT_H
#define ETLKIT_CLI_OUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

typedef struct jw {
    FILE *f;
    unsigned depth;
    unsigned char first[64]; /* no member written yet at this depth */
} jw;

void jw_init(jw *w, FILE *f);
/* key may be NULL inside arrays or at the top level. */
void jw_obj(jw *w, const char *key);
void jw_obj_end(jw *w);
void jw_arr(jw *w, const char *key);
void jw_arr_end(jw *w);
void jw_u64(jw *w, const char *key, uint64_t v);
void jw_i64(jw *w, const char *key, int64_t v);
void jw_str(jw *w, const char *key, const char *s);
void jw_null(jw *w, const char *key);
void jw_bool(jw *w, const char *key, int v);
/* A fixed-point number: v / 10^decimals, printed exactly ("12.345"). */
void jw_fixed(jw *w, const char *key, int64_t v, unsigned decimals);
/* Ends the document with a newline. */
void jw_end(jw *w);

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
/* Adds a row: exactly ncol printf-formatted cells from a tab-separated format is awkward, so: */
int tbl_row(tbl *t, const char *const *cells);
/*
 * Writes the table: aligned text (indent, two spaces between columns; cells through text_str,
 * widths of the escaped text) or CSV for spreadsheets (header row, cells through csv_sheet, CRLF if crlf).
 */
void tbl_print_text(const tbl *t, FILE *f, const char *indent);
void tbl_print_csv(const tbl *t, FILE *f, int crlf);
void tbl_free(tbl *t);
/* Whether a table lost a row to memory since the program started (commands then exit 1). */
int tbl_failed(void);

/*
 * One CSV field of data (export --to csv: DuckDB, Spark), exactly as it is: quoted
 * when it needs to be (RFC 4180); an empty text is "" (an empty field is NULL).
 */
void csv_field(FILE *f, const char *s);
/* The same into buf[len..cap) (cut, never overrun, if it does not fit); returns the new length. */
size_t csv_field_buf(char *buf, size_t len, size_t cap, const char *s);
/*
 * One cell of a report's CSV, made for spreadsheets (switches, cpu, waits, spinlocks,
 * pmc, wakeups): text that a spreadsheet would run as a formula (it starts with = + -
 * @, TAB or CR and is not a number) gets a leading '; an empty cell stays empty.
 */
void csv_sheet(FILE *f, const char *s);
size_t csv_sheet_buf(char *buf, size_t len, size_t cap, const char *s);

/* Durations for people: "12.345 ms", "1.234 s", "850 ns"; into out[32]. */
const char *fmt_dur(char out[32], int64_t ns);
/* A fixed-point decimal (v / 10^decimals) into out[32], exactly; e.g. (12345, 3) -> "12.345". */
const char *fmt_fixed(char out[32], int64_t v, unsigned decimals);
/* The same, returning its length. */
size_t fmt_fixed_n(char out[32], int64_t v, unsigned decimals);

#endif

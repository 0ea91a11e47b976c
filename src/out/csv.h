/*
 * csv.h - CSV fields: RFC 4180 for data (export --to csv: DuckDB, Spark read the
 * text exactly as it is) and the spreadsheet-safe variant for the reports' CSV,
 * where a cell a spreadsheet would run as a formula is neutralised.
 */
#ifndef ETLKIT_SRC_OUT_CSV_H
#define ETLKIT_SRC_OUT_CSV_H

#include <stddef.h>
#include <stdio.h>
#include "out/json.h"

/*
 * One CSV field of data, exactly as it is: quoted when it needs to be (RFC 4180);
 * an empty text is "" (an empty field is NULL).
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
/*
 * The reports' CSV as a whole, one form for all (WPA's exporter writes it so, and a
 * spreadsheet then reads µs and names in UTF-8): the BOM before the header row, CRLF
 * after every row. tbl_print_sheet writes it; switches, which streams its rows, too.
 */
#define CSV_SHEET_BOM "\xEF\xBB\xBF"
#define CSV_SHEET_EOL "\r\n"
/*
 * s in double quotes, every " doubled (RFC 4180), at the end of a line buffer (dump
 * --format csv puts each record's fields there as one JSON object); the line is cut,
 * as ln_raw cuts, if it does not fit whole.
 */
void ln_csv_quoted(ln_buf *l, const char *s);

#endif

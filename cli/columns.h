/*
 * columns.h - a report's rows described once: a table of columns (the text header with its
 * alignment, the CSV header, the JSON key, the unit that picks the formatter, and a getter),
 * from which one function writes the aligned text or CSV row and another the JSON object,
 * as cmd_switches.c's cols[] and perf's sort_entry do. A column may be in some forms only:
 * a NULL header or key leaves it out of that form.
 *
 * Units: COL_COUNT (a decimal integer everywhere), COL_NS (a duration: "12.345 ms" for
 * people, integer ns in CSV and JSON), COL_FIXED (v / 10^decimals, exactly, in every form),
 * COL_TEXT (a string: text_str for people, the spreadsheet CSV cell, a JSON string). A value
 * the getter leaves null is "-" in text, "-" in CSV (an empty cell when the unit has
 * COL_NULL_EMPTY) and null in JSON; a value it leaves out (CV_NONE: this row has no such field)
 * is an empty cell and no JSON member. A COL_FIXED column may show people fewer decimals,
 * rounded (div_round_sat): decimals COL_DECIMALS(4, 2) is 4 in CSV and JSON, 2 for people.
 *
 * JSON only: COL_OBJ opens an object under the column's key, COL_END closes it (the columns
 * between are its members), and a getter may give a writer (CV_PUT) that writes the member
 * itself (an array, say).
 */
#ifndef ETLKIT_CLI_COLUMNS_H
#define ETLKIT_CLI_COLUMNS_H

#include <stddef.h>
#include <stdint.h>
#include "out.h"

enum { COL_COUNT, COL_NS, COL_FIXED, COL_TEXT, COL_OBJ, COL_END };
#define COL_UNIT(u) ((u) & 0x0fu)
#define COL_NULL_EMPTY 0x80u /* with a unit: a null is an empty CSV cell (still "-" for people) */
/* COL_FIXED's decimals: d in CSV and JSON, t (fewer, 1 to 15) for people. */
#define COL_DECIMALS(d, t) ((d) | (t) << 4)

typedef struct col_def col_def;
/* A JSON member written by a column's own writer. */
typedef void col_put_fn(jw *w, const char *key, const void *ctx, const void *row);

/* One cell's value, as a getter gives it. */
typedef struct col_val {
    enum { CV_NULL, CV_NONE, CV_U64, CV_I64, CV_STR, CV_BOOL, CV_PUT } t;
    uint64_t u;
    int64_t i;
    const char *s;
    col_put_fn *put;
    char buf[256];            /* room for a string the getter makes */
} col_val;

struct col_def {
    const char *head;         /* text header ("=Name": right-aligned); NULL: not in text */
    const char *csv;          /* CSV header; NULL: not in CSV */
    const char *json;         /* JSON key; NULL: not in JSON */
    unsigned char unit;       /* COL_*, and COL_NULL_EMPTY */
    unsigned char decimals;   /* COL_FIXED: a number, or COL_DECIMALS */
    /* The value of this column for row (ctx: what the report's getters share). */
    void (*get)(const col_def *c, const void *ctx, const void *row, col_val *v);
    size_t off;               /* for col_u64_at, col_i64_at: the field's offset in the row */
};

/* Getters of a field at c->off in the row: a uint64_t, an int64_t, a uint32_t. */
void col_u64_at(const col_def *c, const void *ctx, const void *row, col_val *v);
void col_i64_at(const col_def *c, const void *ctx, const void *row, col_val *v);
void col_u32_at(const col_def *c, const void *ctx, const void *row, col_val *v);

/* Setters for getters. */
static inline void cv_u64(col_val *v, uint64_t x) { v->t = CV_U64, v->u = x; }
static inline void cv_i64(col_val *v, int64_t x) { v->t = CV_I64, v->i = x; }
static inline void cv_str(col_val *v, const char *s) { v->t = CV_STR, v->s = s; }
static inline void cv_null(col_val *v) { v->t = CV_NULL; }
static inline void cv_none(col_val *v) { v->t = CV_NONE; }
static inline void cv_bool(col_val *v, int x) { v->t = CV_BOOL, v->u = x != 0; }
static inline void cv_put(col_val *v, col_put_fn *f) { v->t = CV_PUT, v->put = f; }

/* The table of a report's columns for text (csv 0) or CSV (csv 1): tbl_init's return. */
int cols_tbl_init(tbl *t, const col_def *c, size_t n, int csv);
/* One row into the table of cols_tbl_init: tbl_row's return. */
int cols_tbl_row(tbl *t, const col_def *c, size_t n, int csv, const void *ctx, const void *row);
/* One value of column c as the JSON member key (CV_PUT: not here, cols_json_members calls it). */
void cols_json_val(jw *w, const char *key, const col_def *c, const col_val *v);
/* One row as a JSON object (key NULL: in an array). */
void cols_json_row(jw *w, const char *key, const col_def *c, size_t n, const void *ctx, const void *row);
/* The members of one row into the object the caller opened. */
void cols_json_members(jw *w, const col_def *c, size_t n, const void *ctx, const void *row);

/* An unsigned count in decimal into out[32] (fmt_u64, NUL-terminated); returns out. */
const char *col_u64(char out[32], uint64_t v);

#endif

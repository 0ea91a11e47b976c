/* columns.c - see columns.h. */
#include "columns.h"
#include <string.h>
#include "common.h"

#define COLS_MAX 48

const char *col_u64(char out[32], uint64_t v)
{
    out[fmt_u64(out, v)] = 0;
    return out;
}

void col_u64_at(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    (void)ctx;
    uint64_t x;
    memcpy(&x, (const char *)row + c->off, sizeof x);
    cv_u64(v, x);
}

void col_i64_at(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    (void)ctx;
    int64_t x;
    memcpy(&x, (const char *)row + c->off, sizeof x);
    cv_i64(v, x);
}

void col_u32_at(const col_def *c, const void *ctx, const void *row, col_val *v)
{
    (void)ctx;
    uint32_t x;
    memcpy(&x, (const char *)row + c->off, sizeof x);
    cv_u64(v, x);
}

static int in_form(const col_def *c, int csv) { return csv ? c->csv != NULL : c->head != NULL; }

int cols_tbl_init(tbl *t, const col_def *c, size_t n, int csv)
{
    const char *head[COLS_MAX];
    unsigned k = 0;
    for (size_t i = 0; i < n && k < COLS_MAX; i++)
        if (in_form(&c[i], csv)) head[k++] = csv ? c[i].csv : c[i].head;
    return tbl_init(t, k, head);
}

/* The cell of v for people (csv 0) or a spreadsheet (csv 1), into out[32] unless a string. */
static const char *cell(const col_def *c, const col_val *v, int csv, char out[32])
{
    switch (v->t) {
    case CV_NULL: return csv && (c->unit & COL_NULL_EMPTY) ? "" : "-";
    case CV_NONE: case CV_PUT: return "";
    case CV_STR: return v->s;
    case CV_U64: return col_u64(out, v->u);
    case CV_BOOL: return v->u ? "true" : "false";
    case CV_I64: break;
    }
    unsigned d = c->decimals & 15u, people = c->decimals >> 4;
    if (COL_UNIT(c->unit) == COL_FIXED && !csv && people) { /* fewer decimals for people: rounded */
        int64_t p = 1;
        for (unsigned k = people; k < d; k++) p *= 10;
        return fmt_fixed(out, div_round_sat(v->i, p), people);
    }
    if (COL_UNIT(c->unit) == COL_FIXED) return fmt_fixed(out, v->i, d);
    if (COL_UNIT(c->unit) == COL_NS && !csv) return fmt_dur(out, v->i);
    out[fmt_i64(out, v->i)] = 0;
    return out;
}

int cols_tbl_row(tbl *t, const col_def *c, size_t n, int csv, const void *ctx, const void *row)
{
    const char *cells[COLS_MAX];
    char num[COLS_MAX][32];
    col_val v[COLS_MAX];
    unsigned k = 0;
    for (size_t i = 0; i < n && k < COLS_MAX; i++) {
        if (!in_form(&c[i], csv)) continue;
        c[i].get(&c[i], ctx, row, &v[k]);
        cells[k] = cell(&c[i], &v[k], csv, num[k]);
        k++;
    }
    return tbl_row(t, cells);
}

void cols_json_val(jw *w, const char *key, const col_def *c, const col_val *v)
{
    switch (v->t) {
    case CV_NULL: jw_null(w, key); break;
    case CV_NONE: case CV_PUT: break;
    case CV_BOOL: jw_bool(w, key, (int)v->u); break;
    case CV_STR: jw_str(w, key, v->s); break;
    case CV_U64: jw_u64(w, key, v->u); break;
    case CV_I64:
        if (COL_UNIT(c->unit) == COL_FIXED) jw_fixed(w, key, v->i, c->decimals & 15u);
        else jw_i64(w, key, v->i);
        break;
    }
}

void cols_json_members(jw *w, const col_def *c, size_t n, const void *ctx, const void *row)
{
    col_val v;
    for (size_t i = 0; i < n; i++) {
        if (c[i].unit == COL_END) jw_obj_end(w);
        if (!c[i].json) continue;
        if (c[i].unit == COL_OBJ) {
            jw_obj(w, c[i].json);
            continue;
        }
        c[i].get(&c[i], ctx, row, &v);
        if (v.t == CV_PUT) v.put(w, c[i].json, ctx, row);
        else cols_json_val(w, c[i].json, &c[i], &v);
    }
}

void cols_json_row(jw *w, const char *key, const col_def *c, size_t n, const void *ctx, const void *row)
{
    jw_obj(w, key);
    cols_json_members(w, c, n, ctx, row);
    jw_obj_end(w);
}

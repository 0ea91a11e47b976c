/*
 * parquet_writer.c - one Parquet file of one table (parquet.h): rows are buffered
 * packed, a row group at a time (about 1 M rows, fewer when their values pass
 * row_group_bytes, so memory stays bounded however long the trace), sorted by the
 * table's order (a counting sort on its first key), moved column by column, then
 * each column is written as a column chunk:
 *
 *   a dictionary page (PLAIN values) when the column takes a dictionary and its
 *   distinct values in the chunk fit dict_max (else the chunk falls back to PLAIN),
 *   then data pages v1 of page_rows rows: definition levels (RLE/bit-packed hybrid
 *   with a 4-byte length, nullable columns only: a NULL is a level 0 and no value)
 *   and the values, RLE_DICTIONARY indices, DELTA_BINARY_PACKED or PLAIN, each page
 *   compressed with zstd;
 *
 * with its statistics (min_value, max_value in the column's sort order, null_count).
 * The footer (FileMetaData: the schema with physical and logical types, the row
 * groups and their column chunks, TypeDefinedOrder for every column) is written
 * by pq_writer_finish, then its length and "PAR1".
 *
 * With a worker (pq_worker_new, one per sink), a full row group is written on the
 * worker's thread while the next one fills: one in flight at a time, its buffer
 * then the next full table's to fill. Without a worker (-DPQ_THREADS=0, or no
 * thread to be had) the writers write inline; the bytes are the same either way.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <zstd.h>
#include "etlkit/version.h"
#include "export/parquet.h"
#include "base/platform.h"

#ifndef PQ_THREADS /* -DPQ_THREADS=0: row groups written inline (the same bytes) */
#define PQ_THREADS 1
#endif

/* parquet.thrift's enums, as written. */
enum { PT_BOOLEAN = 0, PT_INT32 = 1, PT_INT64 = 2, PT_BYTE_ARRAY = 6 };
enum { ENC_PLAIN = 0, ENC_RLE = 3, ENC_DELTA_BINARY_PACKED = 5, ENC_RLE_DICTIONARY = 8 };
enum { PAGE_DATA = 0, PAGE_DICTIONARY = 2 };
enum { CODEC_ZSTD = 6 };
enum { DICT_BYTES_MAX = 1 << 20 };

typedef struct chunk_meta {
    int64_t data_off, dict_off;  /* dict_off -1: no dictionary page */
    int64_t uncomp, comp;        /* the pages' sizes with their headers */
    int64_t nvals, nulls;
    unsigned encoding;           /* the data pages' */
    bool has_minmax;
    uint8_t *min, *max;
    uint32_t min_n, max_n;
} chunk_meta;

typedef struct pq_col {
    const char *name;
    unsigned type;               /* ETL_COLUMN_* type, the default resolved */
    unsigned flags;
    int64_t lo, hi;              /* the range its type holds */
    unsigned off, width;         /* its value's place in a packed row: offset and bytes (1, 2, 4, 8) */
    bool sign;                   /* a narrow value is sign-extended */
    const pq_buf *arena;         /* the texts of the row group being written (rgbuf.arena) */
    chunk_meta *meta;            /* per row group written */
} pq_col;

/*
 * A row group's rows as they are added, packed row by row (pq_writer.rowsize bytes each: a bit per
 * column, set for NULL, then each column's value in its type's width, a text as its offset in its
 * column's arena): sorted, they are moved column by column (scratch tv/tn) once, so the order's gather
 * reads each row's values together instead of one column at a time all over memory.
 */
typedef struct rgbuf {
    uint8_t *data;
    pq_buf *arena;               /* per column: its texts, PLAIN (a 4-byte length and the bytes) */
    unsigned narena;
    size_t rows, cap, bytes;     /* rows, data's capacity in bytes (any table's rows), their size with texts */
} rgbuf;

static void rgbuf_free(rgbuf *b)
{
    if (!b) return;
    for (unsigned i = 0; i < b->narena; i++) pq_buf_free(&b->arena[i]);
    free(b->arena);
    free(b->data);
    free(b);
}

typedef struct rg_meta {
    int64_t rows, uncomp, comp, off;
} rg_meta;

/*
 * What a row group's writing needs and no row group keeps: one per thread, shared by the writers of a
 * sink (they write one at a time), so memory does not grow with the number of tables.
 */
struct pq_scratch {
    ZSTD_CCtx *z;
    pq_buf page, comp, hdr, levels;
    uint32_t *perm, *def, *idx, *tmp; /* rows entries each */
    int64_t *vals;
    int64_t *tv;                 /* the row group column by column, rows * ncols */
    uint8_t *tn;
    size_t cap, tcap;
};

pq_scratch *pq_scratch_new(void)
{
    pq_scratch *s = calloc(1, sizeof *s);
    if (s && !(s->z = ZSTD_createCCtx())) {
        free(s);
        s = NULL;
    }
    return s;
}

void pq_scratch_free(pq_scratch *s)
{
    if (!s) return;
    ZSTD_freeCCtx(s->z);
    pq_buf_free(&s->page);
    pq_buf_free(&s->comp);
    pq_buf_free(&s->hdr);
    pq_buf_free(&s->levels);
    free(s->perm);
    free(s->def);
    free(s->idx);
    free(s->tmp);
    free(s->vals);
    free(s->tv);
    free(s->tn);
    free(s);
}

struct pq_writer {
    FILE *f;
    uint64_t off;
    pq_col *c;
    unsigned ncols;
    int order[2];
    unsigned norder;
    rgbuf *cur;                  /* the row group being filled */
    size_t rowsize;              /* bytes of a packed row */
    const rgbuf *fb;             /* the row group being written */
    pq_worker *k;                /* the thread that writes row groups, or NULL: written inline */
    etl_status mst;              /* the adding side's failure (a refused value), or a writing's seen by it */
    char merr[200];
    size_t rg_rows, rg_bytes, page_rows, dict_max;
    int level;
    char *created_by;
    rg_meta *rg;
    size_t nrg, caprg;
    uint64_t total_rows;
    pq_scratch *s;               /* the sink's, shared by its writers, or own_s */
    pq_scratch *own_s;
    uint32_t *slot;              /* dictionary hash: index + 1, 0 empty */
    unsigned slot_bits;
    int64_t *dict;               /* distinct values (texts: offsets in arena) */
    etl_status st;
    char err[200];
};

static etl_status fail(pq_writer *w, etl_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static etl_status fail(pq_writer *w, etl_status st, const char *fmt, ...)
{
    if (w->st != ETL_OK) return w->st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->err, sizeof w->err, fmt, ap);
    va_end(ap);
    w->st = st;
    return st;
}

/* A failure of the writing side, now the adding side's (after the worker, if any, is idle). */
static etl_status sync_status(pq_writer *w)
{
    if (w->st != ETL_OK && w->mst == ETL_OK) {
        w->mst = w->st;
        memcpy(w->merr, w->err, sizeof w->merr);
    }
    return w->mst;
}

/* ---- the worker: row groups written on a thread of their own, while the next one fills ---- */

static etl_status flush_row_group(pq_writer *w, const rgbuf *b);
static rgbuf *rgbuf_take(pq_writer *w, rgbuf *b);

struct pq_worker {
    etl_os_thread *thread;
    etl_mutex *mu;
    etl_cond *cv;
    pq_writer *w;                /* the job, NULL when idle */
    rgbuf *b;
    rgbuf *spare;                /* the last one written: the next writer's to fill (one buffer for all) */
    bool quit;
};

static void work(void *arg)
{
    pq_worker *k = arg;
    etl_mutex_lock(k->mu);
    for (;;) {
        while (!k->w && !k->quit) etl_cond_wait(k->cv, k->mu);
        if (!k->w) break; /* quit, and nothing left to write */
        pq_writer *w = k->w;
        rgbuf *b = k->b;
        etl_mutex_unlock(k->mu);
        flush_row_group(w, b);
        etl_mutex_lock(k->mu);
        rgbuf_free(k->spare); /* none: it was taken before this job was given */
        k->spare = b;
        k->w = NULL;
        etl_cond_broadcast(k->cv);
    }
    etl_mutex_unlock(k->mu);
}

pq_worker *pq_worker_new(void)
{
    if (!PQ_THREADS) return NULL;
    pq_worker *k = calloc(1, sizeof *k);
    if (!k) return NULL;
    /*
     * The signals a user sends go to the adding thread (etl_thread_start's threads block them): the
     * cleanup (base/sigclean.h) must not run here while that thread creates the files it would remove.
     */
    if (!(k->mu = etl_mutex_new()) || !(k->cv = etl_cond_new()) || !(k->thread = etl_thread_start(work, k))) {
        etl_cond_free(k->cv);
        etl_mutex_free(k->mu);
        free(k);
        return NULL;
    }
    return k;
}

void pq_worker_free(pq_worker *k)
{
    if (!k) return;
    etl_mutex_lock(k->mu);
    k->quit = true;
    etl_cond_broadcast(k->cv);
    etl_mutex_unlock(k->mu);
    etl_thread_join(k->thread);
    rgbuf_free(k->spare);
    etl_cond_free(k->cv);
    etl_mutex_free(k->mu);
    free(k);
}

/* Until no row group is being written: then the writers' state is the adding side's again. */
static void worker_wait(pq_worker *k)
{
    etl_mutex_lock(k->mu);
    while (k->w) etl_cond_wait(k->cv, k->mu);
    etl_mutex_unlock(k->mu);
}

/* The buffer last written, to fill (the worker idle): NULL the first time. */
static rgbuf *worker_spare(pq_worker *k)
{
    etl_mutex_lock(k->mu);
    rgbuf *b = k->spare;
    k->spare = NULL;
    etl_mutex_unlock(k->mu);
    return b;
}

static void worker_submit(pq_worker *k, pq_writer *w, rgbuf *b)
{
    etl_mutex_lock(k->mu);
    while (k->w) etl_cond_wait(k->cv, k->mu);
    k->w = w;
    k->b = b;
    etl_cond_broadcast(k->cv);
    etl_mutex_unlock(k->mu);
}

/* Column i of a packed row: NULL? its value. */
static inline bool row_null(const uint8_t *row, unsigned i) { return row[i >> 3] >> (i & 7) & 1; }

static inline int64_t row_get(const pq_col *c, const uint8_t *row)
{
    const uint8_t *p = row + c->off;
    switch (c->width) {
    case 1: return c->sign ? (int64_t)(int8_t)p[0] : (int64_t)p[0];
    case 2: {
        uint16_t v;
        memcpy(&v, p, 2);
        return c->sign ? (int64_t)(int16_t)v : (int64_t)v;
    }
    case 4: {
        uint32_t v;
        memcpy(&v, p, 4);
        return c->sign ? (int64_t)(int32_t)v : (int64_t)v;
    }
    default: {
        int64_t v;
        memcpy(&v, p, 8);
        return v;
    }
    }
}

static inline void row_put(const pq_col *c, uint8_t *row, int64_t v)
{
    uint8_t *p = row + c->off;
    switch (c->width) {
    case 1: p[0] = (uint8_t)v; break;
    case 2: {
        uint16_t x = (uint16_t)v;
        memcpy(p, &x, 2);
        break;
    }
    case 4: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: memcpy(p, &v, 8);
    }
}

static unsigned col_type(const etl_column_def *d)
{
    unsigned t = d->kind & ETL_COLUMN_TYPE_MASK;
    if (t) return t;
    return strcmp(d->type, "TEXT") == 0 ? ETL_COLUMN_TEXT : ETL_COLUMN_INT64;
}

static int physical(unsigned type)
{
    switch (type) {
    case ETL_COLUMN_BOOL: return PT_BOOLEAN;
    case ETL_COLUMN_INT64:
    case ETL_COLUMN_UINT64:
    case ETL_COLUMN_TIMESTAMP_NS: return PT_INT64;
    case ETL_COLUMN_TEXT: return PT_BYTE_ARRAY;
    default: return PT_INT32;
    }
}

/* The range a type holds. */
static void type_range(unsigned type, int64_t *lo, int64_t *hi)
{
    static const struct { int64_t lo, hi; } r[] = {
        [ETL_COLUMN_INT8] = {INT8_MIN, INT8_MAX},    [ETL_COLUMN_INT16] = {INT16_MIN, INT16_MAX},
        [ETL_COLUMN_INT32] = {INT32_MIN, INT32_MAX}, [ETL_COLUMN_UINT8] = {0, UINT8_MAX},
        [ETL_COLUMN_UINT16] = {0, UINT16_MAX},       [ETL_COLUMN_UINT32] = {0, UINT32_MAX},
        [ETL_COLUMN_BOOL] = {0, 1}};
    if (type < sizeof r / sizeof r[0] && (r[type].lo || r[type].hi)) {
        *lo = r[type].lo;
        *hi = r[type].hi;
    } else {
        *lo = INT64_MIN;
        *hi = INT64_MAX;
    }
}

etl_status pq_writer_open(FILE *f, const etl_column_def *cols, unsigned ncols, const pq_writer_options *o,
                          pq_writer **out)
{
    *out = NULL;
    pq_writer *w = calloc(1, sizeof *w);
    if (!w) return ETL_E_NOMEM;
    w->f = f;
    w->ncols = ncols;
    w->rg_rows = o && o->row_group_rows ? o->row_group_rows : PQ_ROW_GROUP_ROWS;
    w->rg_bytes = o && o->row_group_bytes ? o->row_group_bytes : PQ_ROW_GROUP_BYTES;
    w->page_rows = o && o->page_rows ? o->page_rows : PQ_PAGE_ROWS;
    w->dict_max = o && o->dict_max ? o->dict_max : PQ_DICT_MAX;
    w->level = o && o->zstd_level ? o->zstd_level : PQ_ZSTD_LEVEL;
    if (w->rg_rows > UINT32_MAX) w->rg_rows = UINT32_MAX; /* row indices are 32-bit */
    if (w->dict_max > (1u << 24)) w->dict_max = 1u << 24;
    while ((1ull << w->slot_bits) < 2 * w->dict_max) w->slot_bits++;
    char by[96];
    snprintf(by, sizeof by, "etlkit version %s", ETLKIT_VERSION_STRING);
    w->created_by = strdup(o && o->created_by ? o->created_by : by);
    w->c = calloc(ncols ? ncols : 1, sizeof *w->c);
    w->k = o ? o->worker : NULL;
    w->s = o && o->scratch ? o->scratch : (w->own_s = pq_scratch_new());
    w->slot = calloc((size_t)1 << w->slot_bits, sizeof *w->slot);
    w->dict = malloc(w->dict_max * sizeof *w->dict);
    if (!w->created_by || !w->c || !w->s || !w->slot || !w->dict || !(w->cur = rgbuf_take(w, NULL))) {
        pq_writer_close(w);
        return ETL_E_NOMEM;
    }
    for (unsigned i = 0; i < ncols; i++) {
        w->c[i].name = cols[i].name;
        w->c[i].type = col_type(&cols[i]);
        w->c[i].flags = cols[i].kind & ~(unsigned)ETL_COLUMN_TYPE_MASK;
        if (physical(w->c[i].type) != PT_INT64) w->c[i].flags &= ~(unsigned)ETL_COLUMN_DELTA; /* INT64 only */
        type_range(w->c[i].type, &w->c[i].lo, &w->c[i].hi);
        /* Packed: the range's width; texts and 64-bit values 8 bytes. */
        pq_col *c = &w->c[i];
        c->sign = c->lo < 0;
        c->width = c->type == ETL_COLUMN_TEXT                                     ? 8
                 : c->sign ? (c->lo >= INT8_MIN && c->hi <= INT8_MAX     ? 1
                              : c->lo >= INT16_MIN && c->hi <= INT16_MAX ? 2
                              : c->lo >= INT32_MIN && c->hi <= INT32_MAX ? 4 : 8)
                           : (c->hi <= UINT8_MAX ? 1 : c->hi <= UINT16_MAX ? 2 : c->hi <= UINT32_MAX ? 4 : 8);
    }
    w->rowsize = (ncols + 7) / 8;
    for (unsigned i = 0; i < ncols; i++) {
        w->c[i].off = (unsigned)w->rowsize;
        w->rowsize += w->c[i].width;
    }
    /* The order: up to two column names. */
    if (o && o->order) {
        const char *s = o->order;
        while (*s) {
            size_t n = strcspn(s, ",");
            unsigned k = 0;
            while (k < ncols && !(strlen(cols[k].name) == n && memcmp(cols[k].name, s, n) == 0)) k++;
            /* Signed integer columns only: a text's value here is where it is kept, not its order, and a
             * UINT64's bits do not sort as its values. */
            if (k == ncols || w->norder == 2 || col_type(&cols[k]) == ETL_COLUMN_TEXT ||
                col_type(&cols[k]) == ETL_COLUMN_UINT64) {
                pq_writer_close(w);
                return ETL_E_INVALID_ARG;
            }
            w->order[w->norder++] = (int)k;
            s += n + (s[n] == ',');
        }
    }
    uint8_t magic[4] = {'P', 'A', 'R', '1'};
    if (fwrite(magic, 1, 4, f) != 4) {
        fail(w, ETL_E_IO, "%s", strerror(errno));
        sync_status(w);
    }
    w->off = 4;
    *out = w;
    return ETL_OK;
}

static bool grow_rows(pq_writer *w, rgbuf *b)
{
    size_t need = (b->rows + 1) * w->rowsize, cap = b->cap ? b->cap * 2 : 4096 * w->rowsize;
    if (cap > w->rg_rows * w->rowsize) cap = w->rg_rows * w->rowsize;
    if (cap < need) cap = need;
    uint8_t *d = realloc(b->data, cap);
    if (!d) return false;
    b->data = d;
    b->cap = cap;
    return true;
}

/* A buffer ready to fill for w: b (emptied) or a new one; its arenas as many as w's columns. */
static rgbuf *rgbuf_take(pq_writer *w, rgbuf *b)
{
    if (!b && !(b = calloc(1, sizeof *b))) return NULL;
    if (b->narena < w->ncols) {
        pq_buf *a = realloc(b->arena, w->ncols * sizeof *a);
        if (!a) {
            rgbuf_free(b);
            return NULL;
        }
        memset(a + b->narena, 0, (w->ncols - b->narena) * sizeof *a);
        b->arena = a;
        b->narena = w->ncols;
    }
    b->rows = 0;
    b->bytes = 0;
    for (unsigned i = 0; i < b->narena; i++) b->arena[i].n = 0;
    return b;
}

static etl_status rotate(pq_writer *w);
static const uint8_t *text_in(const pq_buf *arena, int64_t off, uint32_t *n);

static etl_status mfail(pq_writer *w, etl_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static etl_status mfail(pq_writer *w, etl_status st, const char *fmt, ...)
{
    if (w->mst != ETL_OK) return w->mst;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(w->merr, sizeof w->merr, fmt, ap);
    va_end(ap);
    w->mst = st;
    return st;
}

etl_status pq_writer_row(pq_writer *w, const etl_value *v)
{
    if (w->mst != ETL_OK) return w->mst;
    rgbuf *b = w->cur;
    if ((b->rows + 1) * w->rowsize > b->cap && !grow_rows(w, b)) return mfail(w, ETL_E_NOMEM, "out of memory");
    size_t r = b->rows;
    uint8_t *row = b->data + r * w->rowsize, *prev = row - w->rowsize;
    memset(row, 0, w->rowsize);
    for (unsigned i = 0; i < w->ncols; i++) {
        pq_col *c = &w->c[i];
        pq_buf *arena = &b->arena[i];
        if (v[i].kind == ETL_VALUE_NULL) {
            row[i >> 3] |= (uint8_t)(1u << (i & 7));
            if (c->flags & ETL_COLUMN_NOT_NULL)
                return mfail(w, ETL_E_RANGE, "column %s: a NULL in a NOT NULL column", c->name);
        } else if (c->type == ETL_COLUMN_TEXT) {
            if (v[i].kind != ETL_VALUE_TEXT) return mfail(w, ETL_E_RANGE, "column %s: a number in a text column", c->name);
            size_t n = strlen(v[i].s);
            if (n > UINT32_MAX - 4) return mfail(w, ETL_E_RANGE, "column %s: a text of %zu bytes", c->name, n);
            /* The previous row's text again (the trace_id, a source, a name): kept once. */
            if (r && !row_null(prev, i)) {
                uint32_t pn;
                int64_t po = row_get(c, prev);
                const uint8_t *pp = text_in(arena, po, &pn);
                if (pn == n && memcmp(pp, v[i].s, n) == 0) {
                    row_put(c, row, po);
                    continue;
                }
            }
            row_put(c, row, (int64_t)arena->n);
            pq_buf_le32(arena, (uint32_t)n);
            pq_buf_put(arena, v[i].s, n);
            if (arena->oom) return mfail(w, ETL_E_NOMEM, "out of memory");
            b->bytes += n;
        } else {
            if (v[i].kind != ETL_VALUE_INT) return mfail(w, ETL_E_RANGE, "column %s: a text in an integer column", c->name);
            if (v[i].i < c->lo || v[i].i > c->hi)
                return mfail(w, ETL_E_RANGE, "column %s: %lld does not fit its type", c->name, (long long)v[i].i);
            row_put(c, row, v[i].i);
        }
    }
    b->rows++;
    b->bytes += 9 * (size_t)w->ncols; /* its size column by column (scratch tv/tn), which the budget bounds */
    if (b->rows >= w->rg_rows || b->bytes >= w->rg_bytes) return rotate(w);
    return ETL_OK;
}

/* A full row group: written now, or handed to the worker while another buffer fills. */
static etl_status rotate(pq_writer *w)
{
    rgbuf *b = w->cur;
    if (!w->k) {
        flush_row_group(w, b);
        rgbuf_take(w, b);
        return sync_status(w);
    }
    worker_wait(w->k); /* the row group in flight written, its buffer the spare */
    if (sync_status(w) != ETL_OK) return w->mst;
    if (!(w->cur = rgbuf_take(w, worker_spare(w->k)))) {
        w->cur = b; /* still ours, to free */
        return mfail(w, ETL_E_NOMEM, "out of memory");
    }
    worker_submit(w->k, w, b);
    return ETL_OK;
}

/* ---- writing ------------------------------------------------------------------------------- */

static void put(pq_writer *w, const void *p, size_t n)
{
    if (w->st != ETL_OK) return;
    if (n && fwrite(p, 1, n, w->f) != n) {
        fail(w, ETL_E_IO, "%s", strerror(errno ? errno : EIO));
        return;
    }
    w->off += n;
}

/* Compresses w->s->page and writes it with its header (data pages: nvals, enc; dictionary: nvals). */
static void write_page(pq_writer *w, chunk_meta *m, int type, size_t nvals, unsigned enc)
{
    if (w->s->page.oom) {
        fail(w, ETL_E_NOMEM, "out of memory");
        return;
    }
    size_t bound = ZSTD_compressBound(w->s->page.n);
    w->s->comp.n = 0;
    if (!pq_buf_reserve(&w->s->comp, bound)) {
        fail(w, ETL_E_NOMEM, "out of memory");
        return;
    }
    size_t cn = ZSTD_compressCCtx(w->s->z, w->s->comp.p, bound, w->s->page.p, w->s->page.n, w->level);
    if (ZSTD_isError(cn)) {
        fail(w, ETL_E_NOMEM, "zstd: %s", ZSTD_getErrorName(cn));
        return;
    }
    if (w->s->page.n > INT32_MAX || cn > INT32_MAX) {
        fail(w, ETL_E_RANGE, "a page past 2 GiB");
        return;
    }
    w->s->hdr.n = 0;
    pq_thrift t;
    pq_t_begin(&t, &w->s->hdr);
    pq_t_i32(&t, 1, type);
    pq_t_i32(&t, 2, (int32_t)w->s->page.n);
    pq_t_i32(&t, 3, (int32_t)cn);
    if (type == PAGE_DATA) {
        pq_t_struct(&t, 5); /* DataPageHeader */
        pq_t_i32(&t, 1, (int32_t)nvals);
        pq_t_i32(&t, 2, (int32_t)enc);
        pq_t_i32(&t, 3, ENC_RLE);
        pq_t_i32(&t, 4, ENC_RLE);
        pq_t_end(&t);
    } else {
        pq_t_struct(&t, 7); /* DictionaryPageHeader */
        pq_t_i32(&t, 1, (int32_t)nvals);
        pq_t_i32(&t, 2, ENC_PLAIN);
        pq_t_end(&t);
    }
    pq_t_end(&t);
    if (w->s->hdr.oom) {
        fail(w, ETL_E_NOMEM, "out of memory");
        return;
    }
    put(w, w->s->hdr.p, w->s->hdr.n);
    put(w, w->s->comp.p, cn);
    m->uncomp += (int64_t)(w->s->hdr.n + w->s->page.n);
    m->comp += (int64_t)(w->s->hdr.n + cn);
}

static const uint8_t *text_in(const pq_buf *arena, int64_t off, uint32_t *n)
{
    const uint8_t *p = arena->p + off;
    *n = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    return p + 4;
}

static const uint8_t *text_at(const pq_col *c, int64_t off, uint32_t *n) { return text_in(c->arena, off, n); }

static int text_cmp(const pq_col *c, int64_t a, int64_t b)
{
    uint32_t na, nb;
    const uint8_t *pa = text_at(c, a, &na), *pb = text_at(c, b, &nb);
    int r = memcmp(pa, pb, na < nb ? na : nb);
    return r ? r : (na > nb) - (na < nb);
}

static uint64_t hash_value(const pq_col *c, int64_t v)
{
    if (c->type != ETL_COLUMN_TEXT) return (uint64_t)v * UINT64_C(0x9E3779B97F4A7C15);
    uint32_t n;
    const uint8_t *p = text_at(c, v, &n);
    uint64_t h = UINT64_C(0xcbf29ce484222325); /* FNV-1a */
    for (uint32_t i = 0; i < n; i++) h = (h ^ p[i]) * UINT64_C(0x100000001b3);
    return h * UINT64_C(0x9E3779B97F4A7C15);
}

/* Dictionary indices of the nv values into w->s->idx; false when the distinct values pass the limits. */
static bool build_dict(pq_writer *w, const pq_col *c, size_t nv, size_t *ndict)
{
    size_t slots = (size_t)1 << w->slot_bits, n = 0, bytes = 0;
    memset(w->slot, 0, slots * sizeof *w->slot);
    for (size_t i = 0; i < nv; i++) {
        int64_t v = w->s->vals[i];
        if (i && v == w->s->vals[i - 1]) { /* a run: the same value (a text at the same offset is the same text) */
            w->s->idx[i] = w->s->idx[i - 1];
            continue;
        }
        size_t h = (size_t)(hash_value(c, v) >> (64 - w->slot_bits));
        for (;;) {
            uint32_t s = w->slot[h];
            if (!s) {
                if (n == w->dict_max) return false;
                if (c->type == ETL_COLUMN_TEXT) {
                    uint32_t len;
                    text_at(c, v, &len);
                    if ((bytes += 4 + (size_t)len) > DICT_BYTES_MAX) return false;
                }
                w->dict[n] = v;
                w->slot[h] = (uint32_t)++n;
                w->s->idx[i] = (uint32_t)(n - 1);
                break;
            }
            int64_t d = w->dict[s - 1];
            if (c->type == ETL_COLUMN_TEXT ? text_cmp(c, d, v) == 0 : d == v) {
                w->s->idx[i] = s - 1;
                break;
            }
            h = (h + 1) & (slots - 1);
        }
    }
    *ndict = n;
    return true;
}

/* PLAIN values [0, n) of vals (or of texts at those offsets) into b. */
static void plain(pq_buf *b, const pq_col *c, const int64_t *vals, size_t n)
{
    int pt = physical(c->type);
    if (pt == PT_BOOLEAN) {
        pq_plain_bool(b, vals, n);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        if (pt == PT_INT32) {
            pq_buf_le32(b, (uint32_t)vals[i]);
        } else if (pt == PT_INT64) {
            pq_buf_le64(b, (uint64_t)vals[i]);
        } else {
            uint32_t len;
            const uint8_t *p = text_at(c, vals[i], &len);
            pq_buf_put(b, p - 4, 4 + (size_t)len);
        }
    }
}

/* A statistic: the PLAIN bytes of one value (a text's without its length). */
static uint8_t *stat_bytes(const pq_col *c, int64_t v, uint32_t *n)
{
    uint8_t tmp[8];
    const uint8_t *src = tmp;
    int pt = physical(c->type);
    if (pt == PT_BYTE_ARRAY) {
        src = text_at(c, v, n);
    } else {
        *n = pt == PT_BOOLEAN ? 1 : pt == PT_INT32 ? 4 : 8;
        for (unsigned i = 0; i < *n; i++) tmp[i] = (uint8_t)((uint64_t)v >> 8 * i);
    }
    uint8_t *p = malloc(*n ? *n : 1);
    if (p) memcpy(p, src, *n);
    return p;
}

static bool scratch(pq_writer *w, size_t n)
{
    pq_scratch *s = w->s;
    size_t nc = w->ncols ? w->ncols : 1;
    if (n > s->cap) {
        uint32_t *perm = realloc(s->perm, n * sizeof *perm);
        if (perm) s->perm = perm;
        uint32_t *def = realloc(s->def, n * sizeof *def);
        if (def) s->def = def;
        uint32_t *idx = realloc(s->idx, n * sizeof *idx);
        if (idx) s->idx = idx;
        uint32_t *tmp = realloc(s->tmp, n * sizeof *tmp);
        if (tmp) s->tmp = tmp;
        int64_t *vals = realloc(s->vals, n * sizeof *vals);
        if (vals) s->vals = vals;
        if (!perm || !def || !idx || !tmp || !vals) return false;
        s->cap = n;
    }
    if (n * nc > s->tcap) {
        int64_t *tv = realloc(s->tv, n * nc * sizeof *tv);
        if (tv) s->tv = tv;
        uint8_t *tn = realloc(s->tn, n * nc);
        if (tn) s->tn = tn;
        if (!tv || !tn) return false;
        s->tcap = n * nc;
    }
    return true;
}

/* Column c of the row group, its values val[] and NULLs isnull[] in the row group's order. */
static void write_chunk(pq_writer *w, pq_col *c, const int64_t *val, const uint8_t *isnull, chunk_meta *m)
{
    size_t rows = w->fb->rows, nv = 0;
    bool nullable = !(c->flags & ETL_COLUMN_NOT_NULL);
    memset(m, 0, sizeof *m);
    m->dict_off = -1;
    /* The values in the row group's order; the statistics. */
    int64_t lo = 0, hi = 0;
    for (size_t r = 0; r < rows; r++) {
        w->s->def[r] = !isnull[r];
        if (isnull[r]) continue;
        int64_t v = val[r];
        if (!nv) {
            lo = hi = v;
        } else if (v == w->s->vals[nv - 1]) { /* the same value again */
        } else if (c->type == ETL_COLUMN_TEXT) {
            if (text_cmp(c, v, lo) < 0) lo = v;
            if (text_cmp(c, v, hi) > 0) hi = v;
        } else if (c->type == ETL_COLUMN_UINT64) { /* its logical type orders it unsigned */
            if ((uint64_t)v < (uint64_t)lo) lo = v;
            if ((uint64_t)v > (uint64_t)hi) hi = v;
        } else {
            if (v < lo) lo = v;
            if (v > hi) hi = v;
        }
        w->s->vals[nv++] = v;
    }
    m->nvals = (int64_t)rows;
    m->nulls = (int64_t)(rows - nv);
    if (nv) {
        m->min = stat_bytes(c, lo, &m->min_n);
        m->max = stat_bytes(c, hi, &m->max_n);
        if (!m->min || !m->max) {
            fail(w, ETL_E_NOMEM, "out of memory");
            return;
        }
        m->has_minmax = true;
    }
    /* The encoding: a dictionary when asked and small enough, else DELTA or PLAIN. */
    size_t ndict = 0;
    bool dict = !(c->flags & (ETL_COLUMN_PLAIN | ETL_COLUMN_DELTA)) && c->type != ETL_COLUMN_BOOL && nv &&
                build_dict(w, c, nv, &ndict);
    m->encoding = dict ? ENC_RLE_DICTIONARY : (c->flags & ETL_COLUMN_DELTA) ? ENC_DELTA_BINARY_PACKED : ENC_PLAIN;
    if (dict) {
        m->dict_off = (int64_t)w->off;
        w->s->page.n = 0;
        plain(&w->s->page, c, w->dict, ndict);
        write_page(w, m, PAGE_DICTIONARY, ndict, ENC_PLAIN);
    }
    m->data_off = (int64_t)w->off;
    unsigned bw = dict ? pq_bit_width(ndict - 1) : 0;
    if (dict && !bw) bw = 1;
    size_t v0 = 0;
    for (size_t r0 = 0; r0 < rows && w->st == ETL_OK; r0 += w->page_rows) {
        size_t r1 = rows - r0 < w->page_rows ? rows : r0 + w->page_rows, v1 = v0;
        for (size_t r = r0; r < r1; r++) v1 += w->s->def[r];
        w->s->page.n = 0;
        if (nullable) { /* definition levels, max level 1: the RLE hybrid with its length first */
            w->s->levels.n = 0;
            pq_rle_hybrid(&w->s->levels, w->s->def + r0, r1 - r0, 1);
            pq_buf_le32(&w->s->page, (uint32_t)w->s->levels.n);
            pq_buf_put(&w->s->page, w->s->levels.p, w->s->levels.n);
            if (w->s->levels.oom) w->s->page.oom = true;
        }
        if (dict) {
            pq_buf_u8(&w->s->page, (uint8_t)bw);
            pq_rle_hybrid(&w->s->page, w->s->idx + v0, v1 - v0, bw);
        } else if (m->encoding == ENC_DELTA_BINARY_PACKED) {
            pq_delta_binary_packed(&w->s->page, w->s->vals + v0, v1 - v0);
        } else {
            plain(&w->s->page, c, w->s->vals + v0, v1 - v0);
        }
        write_page(w, m, PAGE_DATA, r1 - r0, m->encoding);
        v0 = v1;
    }
}

typedef struct sort_key {
    int64_t k[2];
    uint32_t row;
    uint8_t null[2];
} sort_key;

/* NULLs first, then by value; equal keys keep the order they came in. */
static int key_cmp(const void *pa, const void *pb)
{
    const sort_key *a = pa, *b = pb;
    for (int i = 0; i < 2; i++) {
        if (a->null[i] != b->null[i]) return a->null[i] ? -1 : 1;
        if (a->k[i] != b->k[i]) return a->k[i] < b->k[i] ? -1 : 1;
    }
    return (a->row > b->row) - (a->row < b->row);
}

/* Sorts perm[lo, hi) by the order's keys from key i on (qsort of keys: the general case). */
static bool sort_range(pq_writer *w, size_t lo, size_t hi, unsigned from)
{
    size_t n = hi - lo;
    sort_key *k = malloc(n * sizeof *k);
    if (!k) return false;
    for (size_t j = 0; j < n; j++) {
        uint32_t r = w->s->perm[lo + j];
        memset(&k[j], 0, sizeof k[j]);
        k[j].row = r;
        const uint8_t *row = w->fb->data + (size_t)r * w->rowsize;
        for (unsigned i = from; i < w->norder; i++) {
            unsigned c = (unsigned)w->order[i];
            k[j].null[i - from] = row_null(row, c);
            k[j].k[i - from] = row_null(row, c) ? 0 : row_get(&w->c[c], row);
        }
    }
    qsort(k, n, sizeof *k, key_cmp);
    for (size_t j = 0; j < n; j++) w->s->perm[lo + j] = k[j].row;
    free(k);
    return true;
}

/* Whether perm[lo, hi) is in order of the key column k (NULLs first). */
static bool in_order(const pq_writer *w, unsigned k, size_t lo, size_t hi)
{
    const pq_col *c = &w->c[k];
    for (size_t j = lo + 1; j < hi; j++) {
        const uint8_t *a = w->fb->data + (size_t)w->s->perm[j - 1] * w->rowsize;
        const uint8_t *b = w->fb->data + (size_t)w->s->perm[j] * w->rowsize;
        if (row_null(b, k) ? !row_null(a, k) : !row_null(a, k) && row_get(c, a) > row_get(c, b)) return false;
    }
    return true;
}

/*
 * The row group's order in perm. The first key is a CPU or a thread (a small range): a counting sort,
 * stable, so the rows of each come in the order they were added, which is nearly always already the
 * second key's (time) order; a bucket that is not is sorted on its own. Otherwise one qsort.
 */
static bool sort_rows(pq_writer *w)
{
    size_t n = w->fb->rows;
    for (size_t r = 0; r < n; r++) w->s->perm[r] = (uint32_t)r;
    if (!w->norder) return true;
    unsigned kc = (unsigned)w->order[0];
    const pq_col *c = &w->c[kc];
    const uint8_t *data = w->fb->data;
    size_t rs = w->rowsize;
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (size_t r = 0; r < n; r++) {
        if (row_null(data + r * rs, kc)) continue;
        int64_t v = row_get(c, data + r * rs);
        if (v < lo) lo = v;
        if (v > hi) hi = v;
    }
    if (lo > hi) lo = hi = 0;
    if ((uint64_t)hi - (uint64_t)lo >= (1u << 22)) return sort_range(w, 0, n, 0);
    size_t nb = (size_t)((uint64_t)hi - (uint64_t)lo) + 2; /* bucket 0: NULL */
    uint32_t *at = calloc(nb + 1, sizeof *at), *tmp = w->s->tmp;
    if (!at) return false;
    for (size_t r = 0; r < n; r++)
        at[row_null(data + r * rs, kc) ? 1 : (size_t)(row_get(c, data + r * rs) - lo) + 2]++;
    for (size_t b = 1; b <= nb; b++) at[b] += at[b - 1]; /* at[b]: where bucket b starts */
    for (size_t r = 0; r < n; r++)
        tmp[at[row_null(data + r * rs, kc) ? 0 : (size_t)(row_get(c, data + r * rs) - lo) + 1]++] = (uint32_t)r;
    memcpy(w->s->perm, tmp, n * sizeof *tmp);
    bool ok = true;
    if (w->norder > 1) {
        for (size_t b = 0, start = 0; b < nb && ok; b++) { /* at[b] is now where bucket b ends */
            if (at[b] - start > 1 && !in_order(w, (unsigned)w->order[1], start, at[b])) ok = sort_range(w, start, at[b], 1);
            start = at[b];
        }
    }
    free(at);
    return ok;
}

/* Writes the row group b (on the worker's thread when there is one). */
static etl_status flush_row_group(pq_writer *w, const rgbuf *b)
{
    if (w->st != ETL_OK || !b->rows) return w->st;
    w->fb = b;
    for (unsigned i = 0; i < w->ncols; i++) w->c[i].arena = &b->arena[i];
    if (!scratch(w, b->rows)) return fail(w, ETL_E_NOMEM, "out of memory");
    if (w->nrg == w->caprg) {
        size_t cap = w->caprg ? w->caprg * 2 : 8;
        rg_meta *rg = realloc(w->rg, cap * sizeof *rg);
        if (!rg) return fail(w, ETL_E_NOMEM, "out of memory");
        w->rg = rg;
        for (unsigned i = 0; i < w->ncols; i++) {
            chunk_meta *m = realloc(w->c[i].meta, cap * sizeof *m);
            if (!m) return fail(w, ETL_E_NOMEM, "out of memory");
            w->c[i].meta = m;
        }
        w->caprg = cap;
    }
    if (!sort_rows(w)) return fail(w, ETL_E_NOMEM, "out of memory");
    /* The rows in their order, column by column. */
    size_t n = b->rows, nc = w->ncols;
    int64_t *tv = w->s->tv;
    uint8_t *tn = w->s->tn;
    const uint32_t *perm = w->s->perm;
    size_t rs = w->rowsize;
    for (size_t r = 0; r < n; r++) {
        if (r + 16 < n) { /* the rows are apart in memory: fetch ahead */
            const uint8_t *ahead = b->data + (size_t)perm[r + 16] * rs;
            for (size_t at = 0; at < rs; at += 64) __builtin_prefetch(ahead + at);
        }
        const uint8_t *row = b->data + (size_t)perm[r] * rs;
        for (size_t i = 0; i < nc; i++) {
            tn[i * n + r] = row_null(row, (unsigned)i);
            tv[i * n + r] = row_get(&w->c[i], row);
        }
    }
    rg_meta *g = &w->rg[w->nrg];
    memset(g, 0, sizeof *g);
    g->rows = (int64_t)b->rows;
    g->off = (int64_t)w->off;
    for (unsigned i = 0; i < w->ncols; i++) {
        chunk_meta *m = &w->c[i].meta[w->nrg];
        write_chunk(w, &w->c[i], w->s->tv + (size_t)i * n, w->s->tn + (size_t)i * n, m);
        g->uncomp += m->uncomp;
        g->comp += m->comp;
        if (w->st != ETL_OK) { /* the chunks up to this one are counted, to be freed */
            w->nrg++;
            for (unsigned k = i + 1; k < w->ncols; k++) memset(&w->c[k].meta[w->nrg - 1], 0, sizeof(chunk_meta));
            return w->st;
        }
    }
    w->nrg++;
    w->total_rows += b->rows;
    return w->st;
}

/* ---- the footer ---------------------------------------------------------------------------- */

static void schema_element(pq_thrift *t, const pq_col *c)
{
    static const struct { int8_t bits; bool sign; int conv; } ints[] = {
        [ETL_COLUMN_INT8] = {8, true, 15},   [ETL_COLUMN_INT16] = {16, true, 16}, [ETL_COLUMN_INT32] = {32, true, 17},
        [ETL_COLUMN_INT64] = {64, true, 18}, [ETL_COLUMN_UINT8] = {8, false, 11}, [ETL_COLUMN_UINT16] = {16, false, 12},
        [ETL_COLUMN_UINT32] = {32, false, 13}, [ETL_COLUMN_UINT64] = {64, false, 14}};
    pq_t_elem_struct(t);
    pq_t_i32(t, 1, physical(c->type));
    pq_t_i32(t, 3, (c->flags & ETL_COLUMN_NOT_NULL) ? 0 : 1); /* REQUIRED, OPTIONAL */
    pq_t_string(t, 4, c->name);
    if (c->type == ETL_COLUMN_TEXT) {
        pq_t_i32(t, 6, 0); /* ConvertedType UTF8 */
        pq_t_struct(t, 10);
        pq_t_struct(t, 1); /* STRING */
        pq_t_end(t);
        pq_t_end(t);
    } else if (c->type == ETL_COLUMN_TIMESTAMP_NS) {
        pq_t_struct(t, 10);
        pq_t_struct(t, 8); /* TIMESTAMP */
        pq_t_bool(t, 1, true);
        pq_t_struct(t, 2); /* unit */
        pq_t_struct(t, 3); /* NANOS */
        pq_t_end(t);
        pq_t_end(t);
        pq_t_end(t);
        pq_t_end(t);
    } else if (c->type != ETL_COLUMN_BOOL) {
        pq_t_i32(t, 6, ints[c->type].conv);
        pq_t_struct(t, 10);
        pq_t_struct(t, 10); /* INTEGER */
        pq_t_byte(t, 1, ints[c->type].bits);
        pq_t_bool(t, 2, ints[c->type].sign);
        pq_t_end(t);
        pq_t_end(t);
    }
    pq_t_end(t);
}

static void column_chunk(pq_thrift *t, const pq_col *c, const chunk_meta *m)
{
    pq_t_elem_struct(t);
    pq_t_i64(t, 2, m->dict_off >= 0 ? m->dict_off : m->data_off);
    pq_t_struct(t, 3); /* ColumnMetaData */
    pq_t_i32(t, 1, physical(c->type));
    bool dict = m->dict_off >= 0;
    pq_t_list(t, 2, PQ_T_I32, dict ? 3 : 2);
    pq_t_elem_i32(t, (int32_t)m->encoding);
    pq_t_elem_i32(t, ENC_RLE);
    if (dict) pq_t_elem_i32(t, ENC_PLAIN);
    pq_t_list(t, 3, PQ_T_BINARY, 1);
    pq_t_elem_string(t, c->name);
    pq_t_i32(t, 4, CODEC_ZSTD);
    pq_t_i64(t, 5, m->nvals);
    pq_t_i64(t, 6, m->uncomp);
    pq_t_i64(t, 7, m->comp);
    pq_t_i64(t, 9, m->data_off);
    if (dict) pq_t_i64(t, 11, m->dict_off);
    pq_t_struct(t, 12); /* Statistics */
    pq_t_i64(t, 3, m->nulls);
    if (m->has_minmax) {
        pq_t_binary(t, 5, m->max, m->max_n);
        pq_t_binary(t, 6, m->min, m->min_n);
    }
    pq_t_end(t);
    pq_t_end(t);
    pq_t_end(t);
}

etl_status pq_writer_finish(pq_writer *w)
{
    if (w->mst != ETL_OK) return w->mst;
    if (w->k) worker_wait(w->k);
    if (w->st == ETL_OK) flush_row_group(w, w->cur);
    if (w->st != ETL_OK) return sync_status(w);
    pq_buf b = {0};
    pq_thrift t;
    pq_t_begin(&t, &b);
    pq_t_i32(&t, 1, 1); /* version */
    pq_t_list(&t, 2, PQ_T_STRUCT, w->ncols + 1);
    pq_t_elem_struct(&t); /* the root */
    pq_t_string(&t, 4, "schema");
    pq_t_i32(&t, 5, (int32_t)w->ncols);
    pq_t_end(&t);
    for (unsigned i = 0; i < w->ncols; i++) schema_element(&t, &w->c[i]);
    pq_t_i64(&t, 3, (int64_t)w->total_rows);
    pq_t_list(&t, 4, PQ_T_STRUCT, (uint32_t)w->nrg);
    for (size_t g = 0; g < w->nrg; g++) {
        pq_t_elem_struct(&t);
        pq_t_list(&t, 1, PQ_T_STRUCT, w->ncols);
        for (unsigned i = 0; i < w->ncols; i++) column_chunk(&t, &w->c[i], &w->c[i].meta[g]);
        pq_t_i64(&t, 2, w->rg[g].uncomp);
        pq_t_i64(&t, 3, w->rg[g].rows);
        if (w->norder) {
            pq_t_list(&t, 4, PQ_T_STRUCT, w->norder);
            for (unsigned i = 0; i < w->norder; i++) {
                pq_t_elem_struct(&t); /* SortingColumn */
                pq_t_i32(&t, 1, w->order[i]);
                pq_t_bool(&t, 2, false);
                pq_t_bool(&t, 3, true);
                pq_t_end(&t);
            }
        }
        pq_t_i64(&t, 5, w->rg[g].off);
        pq_t_i64(&t, 6, w->rg[g].comp);
        pq_t_end(&t);
    }
    pq_t_string(&t, 6, w->created_by);
    pq_t_list(&t, 7, PQ_T_STRUCT, w->ncols); /* column_orders: TypeDefinedOrder, so min/max are the values' */
    for (unsigned i = 0; i < w->ncols; i++) {
        pq_t_elem_struct(&t);
        pq_t_struct(&t, 1);
        pq_t_end(&t);
        pq_t_end(&t);
    }
    pq_t_end(&t);
    if (b.oom || b.n > UINT32_MAX) {
        pq_buf_free(&b);
        return fail(w, ETL_E_NOMEM, "out of memory");
    }
    put(w, b.p, b.n);
    uint8_t tail[8] = {(uint8_t)b.n, (uint8_t)(b.n >> 8), (uint8_t)(b.n >> 16), (uint8_t)(b.n >> 24), 'P', 'A', 'R', '1'};
    put(w, tail, 8);
    pq_buf_free(&b);
    if (w->st == ETL_OK && (fflush(w->f) != 0 || ferror(w->f))) fail(w, ETL_E_IO, "%s", strerror(errno ? errno : EIO));
    return sync_status(w);
}

const char *pq_writer_error(const pq_writer *w) { return w->mst != ETL_OK ? w->merr : ""; }


void pq_writer_close(pq_writer *w)
{
    if (!w) return;
    if (w->k) worker_wait(w->k); /* a row group of ours may be being written */
    for (unsigned i = 0; w->c && i < w->ncols; i++) {
        pq_col *c = &w->c[i];
        for (size_t g = 0; c->meta && g < w->nrg; g++) {
            free(c->meta[g].min);
            free(c->meta[g].max);
        }
        free(c->meta);
    }
    free(w->c);
    free(w->rg);
    pq_scratch_free(w->own_s);
    rgbuf_free(w->cur);
    free(w->slot);
    free(w->dict);
    free(w->created_by);
    free(w);
}

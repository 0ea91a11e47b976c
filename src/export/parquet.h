/*
 * parquet.h - a small Apache Parquet writer (private to the library): the pieces
 * the export needs and no more, after parquet-format's parquet.thrift and
 * Encodings.md.
 *
 *   parquet_thrift.c  the Thrift compact protocol, write side (page headers, footer)
 *   parquet_encode.c  PLAIN, the RLE/bit-packed hybrid, DELTA_BINARY_PACKED
 *   parquet_writer.c  one file of one table: rows buffered a row group at a time,
 *                     sorted, then written column by column as a dictionary page
 *                     and data pages (v1) compressed with zstd, with statistics;
 *                     the footer (FileMetaData) at close
 *   parquet_sink.c    the export's sink (export.h, etl_parquet_sink_*)
 *
 * The writer takes the columns' declarations of the schema (etl_column_def.kind:
 * type, NOT NULL, encoding) and rows of etl_value, as every sink does.
 */
#ifndef ETLKIT_EXPORT_PARQUET_H
#define ETLKIT_EXPORT_PARQUET_H

#include <stdio.h>
#include <string.h>
#include "etlkit/export.h"

/* ---- a growable byte buffer (oom: an allocation failed; the contents are then unusable) ---- */

typedef struct pq_buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} pq_buf;

bool pq_buf_reserve(pq_buf *b, size_t more);
void pq_buf_put(pq_buf *b, const void *p, size_t n);
void pq_buf_u8(pq_buf *b, uint8_t v);
void pq_buf_le32(pq_buf *b, uint32_t v);
void pq_buf_le64(pq_buf *b, uint64_t v);
void pq_buf_varint(pq_buf *b, uint64_t v); /* ULEB128 */
void pq_buf_free(pq_buf *b);

static inline uint64_t pq_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

/* ---- Thrift compact protocol (write side) ----------------------------------------------------- */

enum {
    PQ_T_TRUE = 1, PQ_T_FALSE = 2, PQ_T_BYTE = 3, PQ_T_I16 = 4, PQ_T_I32 = 5, PQ_T_I64 = 6,
    PQ_T_BINARY = 8, PQ_T_LIST = 9, PQ_T_STRUCT = 12
};

#define PQ_THRIFT_DEPTH 8

typedef struct pq_thrift {
    pq_buf *b;
    int16_t last[PQ_THRIFT_DEPTH]; /* the last field id written at each struct depth */
    int depth;
} pq_thrift;

/* Starts a top-level struct in b. */
void pq_t_begin(pq_thrift *t, pq_buf *b);
void pq_t_i32(pq_thrift *t, int16_t id, int32_t v);
void pq_t_i64(pq_thrift *t, int16_t id, int64_t v);
void pq_t_byte(pq_thrift *t, int16_t id, int8_t v);
void pq_t_bool(pq_thrift *t, int16_t id, bool v);
void pq_t_binary(pq_thrift *t, int16_t id, const void *p, size_t n);
void pq_t_string(pq_thrift *t, int16_t id, const char *s);
/* A struct field; its fields follow, then pq_t_end. */
void pq_t_struct(pq_thrift *t, int16_t id);
/* Ends the current struct (the top-level one too). */
void pq_t_end(pq_thrift *t);
/* A list field of n elements of elem type; then n pq_t_elem_* (structs: pq_t_elem_struct ... pq_t_end). */
void pq_t_list(pq_thrift *t, int16_t id, int elem, uint32_t n);
void pq_t_elem_i32(pq_thrift *t, int32_t v);
void pq_t_elem_string(pq_thrift *t, const char *s);
void pq_t_elem_struct(pq_thrift *t);

/* ---- encodings ------------------------------------------------------------------------------ */

/* Bits needed for v (0 for 0). */
unsigned pq_bit_width(uint64_t v);
/* The RLE/bit-packed hybrid of n values of width bits (no length prefix). */
void pq_rle_hybrid(pq_buf *b, const uint32_t *v, size_t n, unsigned width);
/* DELTA_BINARY_PACKED of n INT64 values (blocks of 128, 4 miniblocks of 32). */
void pq_delta_binary_packed(pq_buf *b, const int64_t *v, size_t n);
/* PLAIN BOOLEAN: bit-packed, least significant bit first. */
void pq_plain_bool(pq_buf *b, const int64_t *v, size_t n);

/* ---- the file writer ---------------------------------------------------------------------- */

typedef struct pq_writer pq_writer;

/* The writing's working memory, shared by writers used from one thread at a time (a sink's). */
typedef struct pq_scratch pq_scratch;
pq_scratch *pq_scratch_new(void);
void pq_scratch_free(pq_scratch *s);

/*
 * A thread that writes full row groups while the next ones fill (one row group in flight at a time),
 * shared by a sink's writers with their scratch; NULL without threads (-DPQ_THREADS=0) or when none can
 * be started (the writers then write inline, the same bytes). Free it after its writers are closed.
 */
typedef struct pq_worker pq_worker;
pq_worker *pq_worker_new(void);
void pq_worker_free(pq_worker *k);

typedef struct pq_writer_options {
    size_t row_group_rows;   /* rows per row group (0: PQ_ROW_GROUP_ROWS) */
    size_t row_group_bytes;  /* ... or fewer, when the buffered values reach this (0: PQ_ROW_GROUP_BYTES) */
    size_t page_rows;        /* rows per data page (0: PQ_PAGE_ROWS) */
    size_t dict_max;         /* a column chunk's dictionary at most this many values, else PLAIN (0: PQ_DICT_MAX) */
    int zstd_level;          /* 0: PQ_ZSTD_LEVEL */
    const char *order;       /* "col,col": rows sorted by these integer columns in each row group (NULL: as added) */
    const char *created_by;
    pq_scratch *scratch;     /* NULL: the writer's own */
    pq_worker *worker;       /* NULL: row groups written inline; else scratch must be given and only it uses it */
} pq_writer_options;

enum {
    PQ_ROW_GROUP_ROWS = 1 << 20,
    PQ_ROW_GROUP_BYTES = 64 << 20,
    PQ_PAGE_ROWS = 1 << 17,
    PQ_DICT_MAX = 1 << 16,
    PQ_ZSTD_LEVEL = 3
};

/*
 * Writes to f (open for writing, at its start; not closed here) a file of the
 * columns cols[0..ncols) (names and kinds; kind 0 takes the SQLite type's
 * default). ETL_E_INVALID_ARG: an order column that is not there, or a text; ETL_E_NOMEM.
 */
etl_status pq_writer_open(FILE *f, const etl_column_def *cols, unsigned ncols, const pq_writer_options *o,
                          pq_writer **out);
/*
 * Adds a row (ncols values); a full row group is written. ETL_E_RANGE with the
 * reason in pq_writer_error: a NULL in a NOT NULL column, an integer that its
 * type cannot hold, a text in an integer column; ETL_E_IO; ETL_E_NOMEM. Once
 * failed, every later call fails the same.
 */
etl_status pq_writer_row(pq_writer *w, const etl_value *v);
/* Writes the last row group and the footer, flushes f. */
etl_status pq_writer_finish(pq_writer *w);
/* What failed (for a message): "" when nothing did. */
const char *pq_writer_error(const pq_writer *w);
void pq_writer_close(pq_writer *w);

#endif

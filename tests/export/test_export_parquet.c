/*
 * test_export_parquet.c - the Parquet writer (src/export/parquet*.c) piece by
 * piece: the Thrift compact protocol byte for byte, the RLE/bit-packed hybrid and
 * DELTA_BINARY_PACKED against Encodings.md's examples and decoded back by the
 * small decoders below (written from the specification, not from the encoder),
 * the writer's refusals (a NULL in a NOT NULL column, a value its type cannot
 * hold, an unknown order column) and the file's frame ("PAR1", footer length).
 *
 * `test_export_parquet --fixture DIR` writes DIR/fixture.parquet (every type,
 * NULLs, a dictionary that falls back to PLAIN, several row groups and pages,
 * rows to sort) for duckdb_parquet.mjs, which reads it back in DuckDB.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>
#include <cmocka.h>
#include "export/parquet.h"

/* ---- decoders, from Encodings.md ---------------------------------------------------------- */

static uint64_t get_varint(const uint8_t *p, size_t n, size_t *at)
{
    uint64_t v = 0;
    for (unsigned s = 0; *at < n && s < 64; s += 7) {
        uint8_t b = p[(*at)++];
        v |= (uint64_t)(b & 0x7F) << s;
        if (!(b & 0x80)) break;
    }
    return v;
}

static uint64_t get_bits(const uint8_t *p, size_t bit, unsigned width)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < width; i++, bit++) v |= (uint64_t)(p[bit / 8] >> (bit % 8) & 1) << i;
    return v;
}

/* The RLE/bit-packed hybrid of n values of width bits. */
static void rle_decode(const uint8_t *p, size_t len, unsigned width, uint32_t *out, size_t n)
{
    size_t at = 0, k = 0;
    while (k < n) {
        assert_true(at < len);
        uint64_t h = get_varint(p, len, &at);
        if (h & 1) {
            size_t count = (size_t)(h >> 1) * 8;
            for (size_t i = 0; i < count; i++)
                if (k < n) out[k++] = (uint32_t)get_bits(p + at, i * width, width);
            at += count * width / 8;
        } else {
            uint32_t v = 0;
            for (unsigned b = 0; b < (width + 7) / 8; b++) v |= (uint32_t)p[at++] << 8 * b;
            for (size_t i = 0; i < (h >> 1); i++) {
                assert_true(k < n);
                out[k++] = v;
            }
        }
    }
    assert_int_equal(at, len);
}

static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

static size_t delta_decode(const uint8_t *p, size_t len, int64_t *out, size_t cap)
{
    size_t at = 0;
    uint64_t block = get_varint(p, len, &at), mini = get_varint(p, len, &at), n = get_varint(p, len, &at);
    assert_true(n <= cap);
    int64_t v = unzigzag(get_varint(p, len, &at));
    if (n) out[0] = v;
    size_t k = 1, per = (size_t)(block / mini);
    while (k < n) {
        int64_t min = unzigzag(get_varint(p, len, &at));
        uint8_t w[64];
        for (size_t m = 0; m < mini; m++) w[m] = p[at++];
        for (size_t m = 0; m < mini && k < n; m++) {
            for (size_t i = 0; i < per; i++) {
                uint64_t d = get_bits(p + at, i * w[m], w[m]);
                if (k < n) out[k++] = v = (int64_t)((uint64_t)v + (uint64_t)min + d);
            }
            at += per * w[m] / 8;
        }
    }
    assert_int_equal(at, len);
    return (size_t)n;
}

/* ---- Thrift ------------------------------------------------------------------------------- */

static void test_thrift_compact(void **state)
{
    (void)state;
    pq_buf b = {0};
    pq_thrift t;
    pq_t_begin(&t, &b);
    pq_t_i32(&t, 1, 5);
    pq_t_i64(&t, 2, -1);
    pq_t_string(&t, 4, "ab");
    pq_t_struct(&t, 20); /* a jump past 15: the long form */
    pq_t_bool(&t, 1, true);
    pq_t_bool(&t, 2, false);
    pq_t_end(&t);
    pq_t_list(&t, 21, PQ_T_I32, 2);
    pq_t_elem_i32(&t, 1);
    pq_t_elem_i32(&t, -2);
    pq_t_byte(&t, 22, -3);
    pq_t_list(&t, 23, PQ_T_STRUCT, 20); /* 15 or more: the size after the byte */
    for (int i = 0; i < 20; i++) {
        pq_t_elem_struct(&t);
        pq_t_end(&t);
    }
    pq_t_i64(&t, 24, 300);
    pq_t_end(&t);
    static const uint8_t want[] = {0x15, 0x0A, 0x16, 0x01, 0x28, 0x02, 'a', 'b', 0x0C, 0x28, 0x11, 0x12, 0x00,
                                   0x19, 0x25, 0x02, 0x03, 0x13, 0xFD, 0x19, 0xFC, 0x14, 0,    0,    0,    0,
                                   0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,    0,
                                   0,    0,    0,    0x16, 0xD8, 0x04, 0x00};
    assert_false(b.oom);
    assert_int_equal(b.n, sizeof want);
    assert_memory_equal(b.p, want, sizeof want);
    pq_buf_free(&b);
}

/* ---- the RLE/bit-packed hybrid --------------------------------------------------------- */

static void test_rle_examples(void **state)
{
    (void)state;
    pq_buf b = {0};
    uint32_t seq[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    pq_rle_hybrid(&b, seq, 8, 3); /* Encodings.md: bit-packed 0..7 at width 3 */
    static const uint8_t packed[] = {0x03, 0x88, 0xC6, 0xFA};
    assert_int_equal(b.n, sizeof packed);
    assert_memory_equal(b.p, packed, sizeof packed);
    b.n = 0;
    uint32_t run[10];
    for (int i = 0; i < 10; i++) run[i] = 300;
    pq_rle_hybrid(&b, run, 10, 9); /* a run: its length << 1, the value in 2 bytes */
    static const uint8_t rle[] = {0x14, 0x2C, 0x01};
    assert_int_equal(b.n, sizeof rle);
    assert_memory_equal(b.p, rle, sizeof rle);
    pq_buf_free(&b);
}

static void test_rle_round_trip(void **state)
{
    (void)state;
    enum { N = 5000 };
    static uint32_t v[N], back[N];
    srand(7);
    for (unsigned width = 1; width <= 20; width += 3) {
        /* runs of every length mixed with noise, ends that are not a group's */
        for (size_t n = 1; n <= N; n = n * 3 + 1) {
            for (size_t i = 0; i < n;) {
                size_t r = (size_t)rand() % 20 + 1;
                uint32_t x = (uint32_t)rand() & ((1u << width) - 1);
                for (size_t k = 0; k < r && i < n; k++, i++) v[i] = rand() % 3 ? x : (uint32_t)rand() & ((1u << width) - 1);
            }
            pq_buf b = {0};
            pq_rle_hybrid(&b, v, n, width);
            memset(back, 0xFF, sizeof back);
            rle_decode(b.p, b.n, width, back, n);
            assert_memory_equal(back, v, n * sizeof *v);
            pq_buf_free(&b);
        }
    }
}

/* ---- DELTA_BINARY_PACKED ------------------------------------------------------------------ */

static void test_delta_example(void **state)
{
    (void)state;
    pq_buf b = {0};
    int64_t v[5] = {1, 2, 3, 4, 5}; /* Encodings.md, example 1 */
    pq_delta_binary_packed(&b, v, 5);
    static const uint8_t want[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0x00, 0x00, 0x00, 0x00};
    assert_int_equal(b.n, sizeof want);
    assert_memory_equal(b.p, want, sizeof want);
    pq_buf_free(&b);
}

static void test_delta_round_trip(void **state)
{
    (void)state;
    enum { N = 3000 };
    static int64_t v[N], back[N];
    srand(11);
    for (int kind = 0; kind < 4; kind++) {
        for (size_t n = 0; n <= N; n = n * 2 + 1) {
            int64_t t = 1000;
            for (size_t i = 0; i < n; i++) {
                if (kind == 0) t += rand() % 1000;                        /* times */
                else if (kind == 1) t = (int64_t)rand() - RAND_MAX / 2;   /* noise */
                else if (kind == 2) t = i % 2 ? INT64_MIN : INT64_MAX;    /* deltas that wrap */
                else t = 42;                                              /* constant */
                v[i] = t;
            }
            pq_buf b = {0};
            pq_delta_binary_packed(&b, v, n);
            assert_false(b.oom);
            assert_int_equal(delta_decode(b.p, b.n, back, N), n);
            assert_memory_equal(back, v, n * sizeof *v);
            pq_buf_free(&b);
        }
    }
}

static void test_plain_bool(void **state)
{
    (void)state;
    pq_buf b = {0};
    int64_t v[10] = {1, 0, 1, 1, 0, 0, 0, 0, 0, 1};
    pq_plain_bool(&b, v, 10);
    assert_int_equal(b.n, 2);
    assert_int_equal(b.p[0], 0x0D);
    assert_int_equal(b.p[1], 0x02);
    pq_buf_free(&b);
}

/* ---- the writer ------------------------------------------------------------------------------ */

static const etl_column_def fixture_cols[] = {
    {"id", "INTEGER", "", ETL_COLUMN_INT64 | ETL_COLUMN_NOT_NULL | ETL_COLUMN_DELTA},
    {"cpu", "INTEGER", "", ETL_COLUMN_UINT16 | ETL_COLUMN_NOT_NULL},
    {"t", "INTEGER", "", ETL_COLUMN_INT64 | ETL_COLUMN_DELTA},
    {"i8", "INTEGER", "", ETL_COLUMN_INT8},
    {"u32", "INTEGER", "", ETL_COLUMN_UINT32},
    {"i32", "INTEGER", "", ETL_COLUMN_INT32 | ETL_COLUMN_PLAIN},
    {"flag", "INTEGER", "", ETL_COLUMN_BOOL},
    {"name", "TEXT", "", 0},
    {"word", "TEXT", "", ETL_COLUMN_TEXT | ETL_COLUMN_NOT_NULL},
    {"when", "INTEGER", "", ETL_COLUMN_TIMESTAMP_NS},
    {"big", "INTEGER", "", 0},
    {"u64", "INTEGER", "", ETL_COLUMN_UINT64 | ETL_COLUMN_DELTA}, /* unsigned: the footer's min/max too */
};
enum { FIXTURE_COLS = sizeof fixture_cols / sizeof fixture_cols[0], FIXTURE_ROWS = 2500 };

/*
 * Row r of the fixture: every value a function of r (duckdb_parquet.mjs computes the same), added in
 * descending cpu order so that the writer's sort (cpu, t) is seen.
 */
static void fixture_row(unsigned r, etl_value *v, char *name, char *word)
{
    memset(v, 0, FIXTURE_COLS * sizeof *v);
    v[0] = (etl_value){ETL_VALUE_INT, r, NULL};
    v[1] = (etl_value){ETL_VALUE_INT, 3 - r % 4, NULL};
    if (r % 7) v[2] = (etl_value){ETL_VALUE_INT, (int64_t)r * 1000 - 5000, NULL};
    if (r % 5) v[3] = (etl_value){ETL_VALUE_INT, (int64_t)(r % 256) - 128, NULL};
    v[4] = (etl_value){ETL_VALUE_INT, r % 3 ? (int64_t)UINT32_MAX - r : r, NULL};
    v[5] = (etl_value){ETL_VALUE_INT, r % 2 ? INT32_MIN + (int64_t)r : INT32_MAX - (int64_t)r, NULL};
    if (r % 11) v[6] = (etl_value){ETL_VALUE_INT, r % 3 == 0, NULL};
    snprintf(name, 32, "n%u", r % 40 == 0 ? r : r % 9); /* some distinct, mostly a few */
    if (r % 13) v[7] = (etl_value){ETL_VALUE_TEXT, 0, name};
    snprintf(word, 32, "w%u\xc3\xa9", r); /* all distinct: past dict_max, PLAIN */
    v[8] = (etl_value){ETL_VALUE_TEXT, 0, word};
    v[9] = (etl_value){ETL_VALUE_INT, INT64_C(1700000000000000000) + (int64_t)r * 1000003, NULL};
    if (r % 17) v[10] = (etl_value){ETL_VALUE_INT, r % 2 ? INT64_MIN + r : INT64_MAX - r, NULL};
    if (r % 19) v[11] = (etl_value){ETL_VALUE_INT, (int64_t)(r % 3 ? UINT64_MAX - r : r), NULL};
}

static etl_status write_fixture(FILE *f)
{
    pq_writer_options o = {.row_group_rows = 1000, .page_rows = 300, .dict_max = 100, .order = "cpu,t"};
    pq_writer *w;
    etl_status st = pq_writer_open(f, fixture_cols, FIXTURE_COLS, &o, &w);
    if (st != ETL_OK) return st;
    etl_value v[FIXTURE_COLS];
    char name[32], word[32];
    for (unsigned r = 0; r < FIXTURE_ROWS && st == ETL_OK; r++) {
        fixture_row(r, v, name, word);
        st = pq_writer_row(w, v);
    }
    if (st == ETL_OK) st = pq_writer_finish(w);
    pq_writer_close(w);
    return st;
}

static void test_writer_frame(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(write_fixture(f), ETL_OK);
    long n = ftell(f);
    assert_true(n > 16);
    uint8_t head[4], tail[8];
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fread(head, 1, 4, f), 4);
    fseek(f, n - 8, SEEK_SET);
    assert_int_equal(fread(tail, 1, 8, f), 8);
    assert_memory_equal(head, "PAR1", 4);
    assert_memory_equal(tail + 4, "PAR1", 4);
    uint32_t meta = (uint32_t)tail[0] | (uint32_t)tail[1] << 8 | (uint32_t)tail[2] << 16 | (uint32_t)tail[3] << 24;
    assert_true(meta > 100 && meta < (uint32_t)n - 12);
    /* The footer opens with version 1 and the schema list of 13 elements (the root and 12 columns). */
    uint8_t foot[3];
    fseek(f, n - 8 - (long)meta, SEEK_SET);
    assert_int_equal(fread(foot, 1, 3, f), 3);
    assert_int_equal(foot[0], 0x15);
    assert_int_equal(foot[1], 0x02);
    assert_int_equal(foot[2], 0x19);
    fclose(f);
}

static char *slurp(FILE *f, long *n)
{
    *n = ftell(f);
    char *p = malloc((size_t)*n + 1);
    assert_non_null(p);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fread(p, 1, (size_t)*n, f), (size_t)*n);
    return p;
}

/*
 * Three writers filled in turn, sharing a scratch, their row groups written by a worker thread while
 * the next fill (as the sink does), make the same bytes as each written inline on its own.
 */
static void test_writer_worker(void **state)
{
    (void)state;
    enum { W = 3 };
    FILE *f[2][W];
    pq_writer *w[2][W];
    pq_scratch *s = pq_scratch_new();
    pq_worker *k = pq_worker_new();
    assert_non_null(s);
    for (int m = 0; m < 2; m++) {
        for (int i = 0; i < W; i++) {
            assert_non_null(f[m][i] = tmpfile());
            pq_writer_options o = {.row_group_rows = 100 + 50 * (size_t)i, .page_rows = 64, .dict_max = 50,
                                   .order = i == 1 ? "cpu,t" : NULL, .scratch = m ? s : NULL, .worker = m ? k : NULL};
            assert_int_equal(pq_writer_open(f[m][i], fixture_cols, FIXTURE_COLS, &o, &w[m][i]), ETL_OK);
        }
    }
    etl_value v[FIXTURE_COLS];
    char name[32], word[32];
    for (unsigned r = 0; r < 1000; r++) {
        fixture_row(r, v, name, word);
        for (int m = 0; m < 2; m++)
            for (int i = 0; i < W; i++)
                if (r % (unsigned)(i + 1) == 0) assert_int_equal(pq_writer_row(w[m][i], v), ETL_OK);
    }
    for (int i = 0; i < W; i++) {
        for (int m = 0; m < 2; m++) assert_int_equal(pq_writer_finish(w[m][i]), ETL_OK);
        long n0, n1;
        char *a = slurp(f[0][i], &n0), *b = slurp(f[1][i], &n1);
        assert_int_equal(n0, n1);
        assert_memory_equal(a, b, (size_t)n0);
        free(a);
        free(b);
        for (int m = 0; m < 2; m++) {
            pq_writer_close(w[m][i]);
            fclose(f[m][i]);
        }
    }
    pq_worker_free(k);
    pq_scratch_free(s);
}

static void test_writer_refuses(void **state)
{
    (void)state;
    FILE *f = tmpfile();
    assert_non_null(f);
    pq_writer *w;
    pq_writer_options bad = {.order = "cpu,nothere"};
    assert_int_equal(pq_writer_open(f, fixture_cols, FIXTURE_COLS, &bad, &w), ETL_E_INVALID_ARG);
    pq_writer_options text = {.order = "word"};
    assert_int_equal(pq_writer_open(f, fixture_cols, FIXTURE_COLS, &text, &w), ETL_E_INVALID_ARG);
    pq_writer_options u64 = {.order = "cpu,u64"}; /* its bits do not sort as its values */
    assert_int_equal(pq_writer_open(f, fixture_cols, FIXTURE_COLS, &u64, &w), ETL_E_INVALID_ARG);
    etl_value v[FIXTURE_COLS];
    char name[32], word[32];
    struct { unsigned col; etl_value v; const char *why; } cases[] = {
        {1, {ETL_VALUE_NULL, 0, NULL}, "column cpu: a NULL in a NOT NULL column"},
        {1, {ETL_VALUE_INT, 65536, NULL}, "column cpu: 65536 does not fit its type"},
        {3, {ETL_VALUE_INT, -129, NULL}, "column i8: -129 does not fit its type"},
        {4, {ETL_VALUE_INT, -1, NULL}, "column u32: -1 does not fit its type"},
        {6, {ETL_VALUE_INT, 2, NULL}, "column flag: 2 does not fit its type"},
        {7, {ETL_VALUE_INT, 2, NULL}, "column name: a number in a text column"},
        {2, {ETL_VALUE_TEXT, 0, "x"}, "column t: a text in an integer column"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_int_equal(pq_writer_open(f, fixture_cols, FIXTURE_COLS, NULL, &w), ETL_OK);
        fixture_row(1, v, name, word);
        assert_int_equal(pq_writer_row(w, v), ETL_OK);
        v[cases[i].col] = cases[i].v;
        assert_int_equal(pq_writer_row(w, v), ETL_E_RANGE);
        assert_string_equal(pq_writer_error(w), cases[i].why);
        fixture_row(2, v, name, word);
        assert_int_equal(pq_writer_row(w, v), ETL_E_RANGE); /* failed stays failed */
        assert_int_equal(pq_writer_finish(w), ETL_E_RANGE);
        pq_writer_close(w);
    }
    fclose(f);
}

/* Whether the file at path holds the bytes of s (a column's name in its footer). */
static bool file_has(const char *path, const char *s)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n;
    char *p = slurp(f, &n);
    fclose(f);
    bool found = false;
    for (long i = 0; i + (long)strlen(s) <= n && !found; i++) found = memcmp(p + i, s, strlen(s)) == 0;
    free(p);
    return found;
}

/*
 * The sink: OUT/<table>.parquet for the tables asked (trace and enum_name always), "PAR1" at both ends,
 * the trace_id column there or not (no_trace_id, a Hive partition's files); an abort leaves nothing.
 */
static void test_sink(void **state)
{
    (void)state;
    char root[64], out[96], path[160];
    snprintf(root, sizeof root, "/tmp/etlkit-pq-XXXXXX");
    assert_non_null(mkdtemp(root));
    for (int hive = 0; hive < 3; hive++) {
        snprintf(out, sizeof out, "%s/out%d", root, hive);
        etl_parquet_sink_options o = {.sz = sizeof o, .tables = 1u << ETL_TABLE_READY, .trace_id = "tr-7",
                                      .no_trace_id = hive == 1};
        etl_parquet_sink *p;
        etl_diag d;
        assert_int_equal(etl_parquet_sink_check(out, &o, &p, &d), ETL_OK);
        assert_int_equal(etl_parquet_sink_create(p, &d), ETL_OK);
        etl_value v[10] = {{ETL_VALUE_INT, 100, NULL}, {ETL_VALUE_INT, 10, NULL}, {ETL_VALUE_INT, 1, NULL},
                           {ETL_VALUE_NULL, 0, NULL},  {ETL_VALUE_INT, 42, NULL}, {ETL_VALUE_NULL, 0, NULL},
                           {ETL_VALUE_NULL, 0, NULL},  {ETL_VALUE_INT, 1, NULL},  {ETL_VALUE_INT, -2, NULL},
                           {ETL_VALUE_INT, 0, NULL}};
        assert_int_equal(etl_parquet_sink_row(p, ETL_TABLE_READY, v), 0);
        assert_int_equal(etl_parquet_sink_row(p, ETL_TABLE_CSWITCH, v), 0); /* not asked: ignored */
        if (hive == 2) { /* an abort: nothing left */
            assert_int_equal(etl_parquet_sink_close(p, false), ETL_OK);
            assert_int_equal(access(out, F_OK), -1);
            continue;
        }
        assert_int_equal(etl_parquet_sink_finish(p, &d), ETL_OK);
        assert_int_equal(etl_parquet_sink_close(p, true), ETL_OK);
        DIR *dir = opendir(out);
        assert_non_null(dir);
        unsigned files = 0;
        for (struct dirent *e; (e = readdir(dir));) files += e->d_name[0] != '.';
        closedir(dir);
        assert_int_equal(files, 3); /* ready, trace, enum_name */
        snprintf(path, sizeof path, "%s/ready.parquet", out);
        assert_true(file_has(path, "PAR1"));
        assert_true(file_has(path, "adjust_increment"));
        assert_int_equal(file_has(path, "trace_id"), hive == 0);
        assert_int_equal(file_has(path, "tr-7"), hive == 0);
        snprintf(path, sizeof path, "%s/cswitch.parquet", out);
        assert_int_equal(access(path, F_OK), -1);
    }
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
    assert_int_equal(system(cmd), 0);
}

/* The options by the ABI rule: none are every default; an older, smaller struct the defaults past its sz (it crashed). */
static void test_options_abi(void **state)
{
    (void)state;
    char root[64], out[96];
    snprintf(root, sizeof root, "/tmp/etlkit-pqabi-XXXXXX");
    assert_non_null(mkdtemp(root));
    etl_parquet_sink *p;
    etl_diag d;
    snprintf(out, sizeof out, "%s/none", root);
    assert_int_equal(etl_parquet_sink_check(out, NULL, &p, &d), ETL_OK);
    assert_int_equal(etl_parquet_sink_close(p, false), ETL_OK);
    struct {
        etl_parquet_sink_options o;
        unsigned char junk[64];
    } old;
    memset(&old, 0x7F, sizeof old);
    old.o.sz = offsetof(etl_parquet_sink_options, tables);
    snprintf(out, sizeof out, "%s/old", root);
    assert_int_equal(etl_parquet_sink_check(out, &old.o, &p, &d), ETL_OK);
    assert_int_equal(etl_parquet_sink_create(p, &d), ETL_OK);
    assert_int_equal(etl_parquet_sink_close(p, false), ETL_OK);
    assert_int_equal(rmdir(root), 0); /* nothing left behind */
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--fixture") == 0) {
        char path[1024];
        snprintf(path, sizeof path, "%s/fixture.parquet", argv[2]);
        FILE *f = fopen(path, "wb");
        etl_status st = f ? write_fixture(f) : ETL_E_IO;
        if (f && fclose(f) != 0) st = ETL_E_IO;
        if (st != ETL_OK) fprintf(stderr, "test_export_parquet: %s: %s\n", path, etl_status_str(st));
        return st == ETL_OK ? 0 : 1;
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_thrift_compact),   cmocka_unit_test(test_rle_examples),
        cmocka_unit_test(test_rle_round_trip),   cmocka_unit_test(test_delta_example),
        cmocka_unit_test(test_delta_round_trip), cmocka_unit_test(test_plain_bool),
        cmocka_unit_test(test_writer_frame),     cmocka_unit_test(test_writer_refuses),
        cmocka_unit_test(test_writer_worker),    cmocka_unit_test(test_sink),
        cmocka_unit_test(test_options_abi),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

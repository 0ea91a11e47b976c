/*
 * test_reader_chain.c - one impossible field of a compressed buffer's header costs at most that buffer
 * (explore21 F1). A compressed log's buffers each have their own BufferSize, so the reader repairs a
 * broken chain of sizes: it must never take an explanation that makes a buffer longer than a session's
 * buffer can be on disk, and a header that is a buffer's but for one field (BufferSize, Offset, the
 * COMPRESSED flag), followed by a plausible header, is that buffer with that field damaged: told at its
 * offset, the buffer before it kept whole.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/container.h"
#include "synthtruth.h"

static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }
static void w32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

#define MAXB 512

typedef struct trace {
    uint8_t *p;
    size_t n;
    size_t off[MAXB]; /* buffers by their own BufferSize */
    size_t nb;
} trace;

typedef struct diags {
    int n;
    etl_diag d[32];
} diags;

static void on_diag(void *ctx, const etl_diag *d)
{
    diags *x = ctx;
    if (x->n < 32) x->d[x->n] = *d;
    x->n++;
}

/* A 4-CPU compressed (XPRESS) trace of 64 KiB session buffers, read into memory. */
static void make(trace *t)
{
    char path[512];
    st_tmp(path, sizeof path, "chain", "z.etl");
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "seed", "3");
    st_set(&o, "duration", "3");
    st_set(&o, "cpus", "4");
    st_set(&o, "compress", NULL);
    etl_synth_summary sum;
    etl_diag d;
    if (etl_synth_run(path, &o, &sum, &d) != ETL_OK) fail_msg("synth: %s", d.msg);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    t->n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    t->p = malloc(t->n);
    assert_non_null(t->p);
    assert_int_equal(fread(t->p, 1, t->n, f), t->n);
    fclose(f);
    unlink(path);
    t->nb = 0;
    for (size_t off = 0; off + 0x48 <= t->n && t->nb < MAXB; off += u32(t->p + off)) t->off[t->nb++] = off;
    assert_true(t->nb > 30);
}

/* Records read per buffer of t (its index in t->off), and their bytes' sum, in file order. */
typedef struct counts {
    size_t n[MAXB];
    uint64_t sum[MAXB];
    etl_stats st;
    size_t nbufs;
    uint32_t max_disk; /* the longest buffer the index made */
} counts;

static void count(const trace *t, const uint8_t *p, size_t n, counts *c, diags *dg)
{
    memset(c, 0, sizeof *c);
    etl_reader_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.on_diag = on_diag;
    o.diag_ctx = dg;
    etl_reader *r = NULL;
    etl_diag d;
    if (etl_reader_open_memory(p, n, &o, &r, &d) != ETL_OK) fail_msg("open: %s", d.msg);
    c->nbufs = etl_reader_buffer_count(r);
    size_t *orig = calloc(c->nbufs, sizeof *orig);
    assert_non_null(orig);
    for (size_t i = 0; i < c->nbufs; i++) {
        etl_buffer_header h;
        uint64_t at;
        assert_int_equal(etl_reader_buffer(r, i, &h, &at), ETL_OK);
        uint64_t end = i + 1 < c->nbufs ? 0 : n;
        if (i + 1 < c->nbufs) {
            etl_buffer_header h2;
            assert_int_equal(etl_reader_buffer(r, i + 1, &h2, &end), ETL_OK);
        }
        if (end - at > c->max_disk) c->max_disk = (uint32_t)(end - at);
        orig[i] = SIZE_MAX;
        for (size_t k = 0; k < t->nb; k++)
            if (t->off[k] == at) orig[i] = k;
    }
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        size_t k = orig[rec.buffer_index];
        assert_true(k != SIZE_MAX); /* records only from buffers that start where they did */
        c->n[k]++;
        for (uint32_t b = 0; b < rec.size; b++) c->sum[k] = c->sum[k] * 31 + rec.data[b];
    }
    c->st = *etl_iter_stats_get(it);
    etl_iter_close(it);
    etl_reader_close(r);
    free(orig);
}

/* The buffers of t that lost records (or read other ones) in c, against the undamaged u, as a count. */
static size_t lost(const trace *t, const counts *u, const counts *c, size_t *first)
{
    size_t k = 0;
    *first = SIZE_MAX;
    for (size_t i = 0; i < t->nb; i++)
        if (u->n[i] != c->n[i] || u->sum[i] != c->sum[i]) {
            if (*first == SIZE_MAX) *first = i;
            k++;
        }
    return k;
}

static bool told_at(const diags *d, size_t off, const char *text)
{
    for (int i = 0; i < d->n && i < 32; i++)
        if (d->d[i].file_offset == off && strstr(d->d[i].msg, text)) return true;
    return false;
}

static void dump_diags(const diags *d)
{
    for (int i = 0; i < d->n && i < 32; i++)
        print_message("  diag at 0x%llx: %s\n", (unsigned long long)d->d[i].file_offset, d->d[i].msg);
}

/*
 * Buffer K's BufferSize leads a few bytes past a header far on (the real sample: past the end of the
 * file, 9 KB from the last buffer's header): that header is no explanation, since the buffer would be
 * many times a session's buffer (before: buffer K swallowed every buffer up to it, their records lost).
 */
static void test_chain_no_buffer_longer_than_session(void **state)
{
    (void)state;
    trace t;
    make(&t);
    counts u, c;
    diags du = {0}, d = {0};
    count(&t, t.p, t.n, &u, &du);
    assert_int_equal(du.n, 0);
    assert_int_equal(u.st.bad_buffers, 0);
    uint8_t *m = malloc(t.n);
    assert_non_null(m);
    size_t k = t.nb / 3, far = k + 12;
    memcpy(m, t.p, t.n);
    w32(m + t.off[k], (uint32_t)(t.off[far] - t.off[k] + 40)); /* 40 bytes past buffer far's header */
    count(&t, m, t.n, &c, &d);
    size_t first, nl = lost(&t, &u, &c, &first);
    if (nl) dump_diags(&d);
    assert_true(c.max_disk <= 65536 + 65536 / 4 + 65536 / 128 + 264);
    assert_int_equal(nl, 0); /* buffer K is read to the header after it */
    assert_true(told_at(&d, t.off[k], "BufferSize"));
    free(m);
    free(t.p);
}

/*
 * Buffer K (compressed, in the middle of the file) with one impossible field: BufferSize 0, all ones,
 * past the end of the file; Offset 0 or past 64 MiB; the COMPRESSED flag cleared. Before: the chain
 * broke at buffer K-1 (its size leads to no plausible header), K-1 was read to the header after K,
 * failed to expand and was lost with K, and K's offset was never named. Now every record is read, and
 * the damage is told at K's offset, with the field.
 */
static void test_chain_one_bad_field(void **state)
{
    (void)state;
    trace t;
    make(&t);
    counts u, c;
    diags du = {0};
    count(&t, t.p, t.n, &u, &du);
    assert_int_equal(du.n, 0);
    uint8_t *m = malloc(t.n);
    assert_non_null(m);
    size_t k = t.nb / 2;
    const struct {
        const char *name;
        size_t at;      /* in the header */
        uint32_t value; /* 0: the COMPRESSED flag cleared */
        const char *told;
    } cases[] = {
        {"BufferSize 0", 0x00, 0, "BufferSize 0 does not lead to the next buffer"},
        {"BufferSize all ones", 0x00, 0xFFFFFFFFu, "BufferSize 4294967295 does not lead"},
        {"BufferSize past the file", 0x00, 1, "BufferSize"},
        {"Offset 0", 0x30, 0, "Offset 0 is impossible"},
        {"Offset past 64 MiB", 0x30, (64u << 20) + 1, "Offset 67108865 is impossible"},
        {"COMPRESSED cleared", 0x34, 0, "lacks COMPRESSED (0x40)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memcpy(m, t.p, t.n);
        uint8_t *h = m + t.off[k];
        assert_true(h[0x34] & 0x40);
        if (cases[i].at == 0x34) h[0x34] &= (uint8_t)~0x40;
        else if (cases[i].value == 1) w32(h, (uint32_t)(t.n - t.off[k] + 4096));
        else w32(h + cases[i].at, cases[i].value);
        diags d = {0};
        count(&t, m, t.n, &c, &d);
        size_t first, nl = lost(&t, &u, &c, &first);
        if (nl || !told_at(&d, t.off[k], cases[i].told)) {
            print_message("%s: %zu buffers lost (first %zu; damaged %zu)\n", cases[i].name, nl, first, k);
            dump_diags(&d);
        }
        assert_int_equal(nl, 0);
        assert_true(told_at(&d, t.off[k], cases[i].told));
        assert_int_equal(c.nbufs, t.nb);
    }
    free(m);
    free(t.p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_chain_no_buffer_longer_than_session),
        cmocka_unit_test(test_chain_one_bad_field),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_iter_bufplace.c - a buffer in the wrong place of its CPU's stream is damage, told with its
 * offset (explore21 F2, F3; container.md §7: a CPU's buffers, in SequenceNumber order, are in time
 * order, and no record is later than its buffer's flush). Two neighbouring buffers of one CPU with
 * their payloads swapped: the earlier one's records are all after its flush (told in every reader,
 * file order too), and the later one's start before the CPU's record ahead of them (time order and
 * the walks, info's summary). A buffer whose header names another CPU: that CPU's time goes back at
 * a boundary of its buffers. The records taken are the same as before (the damage is told, not recovered), and an
 * undamaged trace tells nothing.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/container.h"
#include "etlkit/summary.h"
#include "synthtruth.h"

#define BUF 4096u
#define HDR 0x48u

typedef struct diags {
    int n, flushed, back, cut;
    char msg[64][512];
} diags;

static void on_diag(void *ctx, const etl_diag *d)
{
    diags *x = ctx;
    x->flushed += strstr(d->msg, "later than its buffer's flush TimeStamp") != NULL;
    x->back += strstr(d->msg, "'s last record (") != NULL;
    /* Every text whole: one that fills etl_diag's msg was cut (it once ended "... CPU or"). */
    x->cut += strlen(d->msg) >= sizeof d->msg - 1;
    if (strstr(d->msg, "'s last record (")) x->cut += strstr(d->msg, "SequenceNumber is wrong") == NULL;
    if (x->n < 64) snprintf(x->msg[x->n++], sizeof x->msg[0], "%s", d->msg);
}

/* Whether a message told names `needle` (a buffer's "at offset 0x..."). */
static bool told(const diags *d, const char *needle)
{
    for (int i = 0; i < d->n; i++)
        if (strstr(d->msg[i], needle)) return true;
    return false;
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    *n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(*n);
    assert_non_null(b);
    assert_int_equal(fread(b, 1, *n, f), *n);
    fclose(f);
    return b;
}

static void spill(const char *path, const uint8_t *b, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
}

static unsigned cpu_of(const uint8_t *b, size_t off) { return b[off + 0x28] | (b[off + 0x29] & 7u) << 8; }
static uint64_t seq_of(const uint8_t *b, size_t off)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--) v = v << 8 | b[off + 0x18 + i];
    return v;
}

/* The file offsets of CPU cpu's buffers (buffer 0, the logfile header's, left out), in SequenceNumber order. */
static size_t cpu_buffers(const uint8_t *b, size_t n, unsigned cpu, size_t *offs, size_t max)
{
    size_t k = 0;
    for (size_t off = BUF; off + BUF <= n && k < max; off += BUF)
        if (cpu_of(b, off) == cpu) offs[k++] = off;
    for (size_t i = 1; i < k; i++) /* synth writes them about in order: insertion sort */
        for (size_t j = i; j > 0 && seq_of(b, offs[j - 1]) > seq_of(b, offs[j]); j--) {
            size_t t = offs[j];
            offs[j] = offs[j - 1];
            offs[j - 1] = t;
        }
    return k;
}

/* Buffers at x and y swap their data (the sizes and Offset with it); each header keeps its CPU, SequenceNumber, TimeStamp. */
static void swap_payloads(uint8_t *b, size_t x, size_t y)
{
    uint8_t t[BUF];
    memcpy(t, b + x, BUF);
    memcpy(b + x + HDR, b + y + HDR, BUF - HDR);
    memcpy(b + x, b + y, 12);
    memcpy(b + x + 0x30, b + y + 0x30, 4);
    memcpy(b + y + HDR, t + HDR, BUF - HDR);
    memcpy(b + y, t, 12);
    memcpy(b + y + 0x30, t + 0x30, 4);
}

static etl_reader *open_told(const char *path, diags *d)
{
    memset(d, 0, sizeof *d);
    etl_reader *r = NULL;
    etl_reader_options ro = {0};
    ro.sz = sizeof ro;
    ro.on_diag = on_diag;
    ro.diag_ctx = d;
    assert_int_equal(etl_reader_open(path, &ro, &r, NULL), ETL_OK);
    return r;
}

/* What one reader made of a file: records read, the problems told, the counts. */
typedef struct seen {
    uint64_t records, bad_times, bad_buffers;
    bool damaged;
    diags d;
} seen;

/* SUMMARY1, SUMMARY2: info's count (etl_summary_run) on one and two threads, file order checked after the walk. */
enum { FILE_ORDER, TIME_ORDER, WALK, CPU_WALKS, SUMMARY1, SUMMARY2, NREADERS };

static void read_with(const char *path, int how, seen *s)
{
    memset(s, 0, sizeof *s);
    etl_reader *r = open_told(path, &s->d);
    etl_iter *it = NULL;
    etl_record rec;
    etl_walk w;
    etl_krec k;
    if (how == SUMMARY1 || how == SUMMARY2) {
        etl_summary_options so = {.sz = sizeof so, .threads = how == SUMMARY1 ? 1 : 2};
        etl_summary sum;
        assert_int_equal(etl_summary_run(r, &so, &sum), ETL_OK);
        s->records = sum.records;
        s->bad_times = sum.st.bad_times;
        s->bad_buffers = sum.st.bad_buffers;
        s->damaged = etl_stats_damaged(&sum.st);
        etl_summary_free(&sum);
        etl_reader_close(r);
        return;
    }
    if (how == FILE_ORDER || how == TIME_ORDER) {
        assert_int_equal(etl_iter_open(r, how == FILE_ORDER ? ETL_ORDER_FILE : ETL_ORDER_TIME, &it), ETL_OK);
        while (etl_iter_next(it, &rec) == ETL_OK) s->records++;
    } else if (how == WALK) {
        assert_int_equal(etl_iter_open_cpus_buffers(r, NULL, 0, &it), ETL_OK);
        while (etl_iter_next_buffer(it, &w) == ETL_OK)
            while (etl_walk_next(&w, &k) != ETL_WALK_END) s->records++;
    } else {
        uint8_t want[4] = {1, 1, 1, 1};
        assert_int_equal(etl_iter_open_cpu_walks(r, want, 4, true, &it), ETL_OK);
        for (unsigned c = 0; c < etl_iter_walk_count(it); c++)
            while (etl_iter_next_buffer_of(it, c, &w) == ETL_OK)
                while (etl_walk_next(&w, &k) != ETL_WALK_END) s->records++;
    }
    const etl_stats *st = etl_iter_stats_get(it);
    s->bad_times = st->bad_times;
    s->bad_buffers = st->bad_buffers;
    s->damaged = etl_stats_damaged(st);
    etl_iter_close(it);
    etl_reader_close(r);
}

static void test_buffer_out_of_place(void **state)
{
    (void)state;
    char clean[256], swapped[256], moved[256];
    st_tmp(clean, sizeof clean, "bufplace", "u.etl");
    st_tmp(swapped, sizeof swapped, "bufplace", "f3.etl");
    st_tmp(moved, sizeof moved, "bufplace", "f2.etl");
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "seed", "3");
    st_set(&o, "duration", "0.3");
    st_set(&o, "cpus", "4");
    st_set(&o, "cswitch", "full");
    st_set(&o, "buffer-size", "4K");
    st_truth t;
    st_run(clean, &o, &t);
    st_free(&t);

    size_t n;
    uint8_t *b = slurp(clean, &n);
    size_t c3[4096], n3 = cpu_buffers(b, n, 3, c3, 4096);
    assert_true(n3 > 8);
    /* F3: CPU 3's middle buffer and the next one by SequenceNumber trade their records. */
    size_t a = c3[n3 / 2], c = c3[n3 / 2 + 1];
    swap_payloads(b, a, c);
    spill(swapped, b, n);
    free(b);
    /* F2: another of CPU 3's buffers says it is CPU 1's. */
    b = slurp(clean, &n);
    size_t x = c3[n3 / 2 - 2];
    b[x + 0x28] = (uint8_t)((b[x + 0x28] & ~0xFFu) | 1u);
    assert_int_equal(cpu_of(b, x), 1);
    spill(moved, b, n);
    free(b);
    char at_a[64], at_c[64], at_x[64];
    snprintf(at_a, sizeof at_a, "at offset 0x%zx", a);
    snprintf(at_c, sizeof at_c, "at offset 0x%zx", c);
    snprintf(at_x, sizeof at_x, "at offset 0x%zx", x);

    for (int how = 0; how < NREADERS; how++) {
        seen u, s3, s2;
        read_with(clean, how, &u);
        read_with(swapped, how, &s3);
        read_with(moved, how, &s2);
        /* Undamaged: nothing told. */
        assert_int_equal(u.d.n, 0);
        assert_false(u.damaged);
        assert_true(u.records > 1000);
        /* The records taken are the same: the damage is told, not recovered. */
        assert_int_equal(s3.records, u.records);
        assert_int_equal(s2.records, u.records);

        /* F3: the earlier buffer's records are all after its flush: told once, with its offset, in every reader. */
        assert_true(s3.damaged);
        assert_int_equal(s3.d.flushed, 1);
        assert_true(told(&s3.d, at_a));
        if (how == FILE_ORDER) {
            /* File order knows no CPU's time: only the flush. */
            assert_int_equal(s3.d.back, 0);
            assert_int_equal(s3.bad_times, 1);
            assert_int_equal(s3.bad_buffers, 1);
            assert_false(s2.damaged);
            assert_int_equal(s2.d.n, 0);
            continue;
        }
        /* The later one starts before the CPU's last record ahead of it (the earlier one's): told, naming both;
         * info too, from every buffer's times after its walk in file order (it once read f2 clean, exit 0). */
        assert_int_equal(s3.d.back, 1);
        assert_int_equal(s3.d.cut, 0);
        assert_int_equal(s2.d.cut, 0);
        assert_true(told(&s3.d, at_c));
        assert_int_equal(s3.bad_times, 2);
        assert_int_equal(s3.bad_buffers, 2);

        /* F2: CPU 1's time goes back at the moved buffer's boundary (at it or at the buffer after it): its offset told. */
        assert_true(s2.damaged);
        assert_int_equal(s2.d.flushed, 0);
        assert_true(s2.d.back >= 1 && s2.d.back <= 2);
        assert_true(told(&s2.d, at_x));
        assert_int_equal(s2.bad_buffers, (uint64_t)s2.d.back);
    }
    unlink(clean);
    unlink(swapped);
    unlink(moved);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buffer_out_of_place),
    };
    return cmocka_run_group_tests_name("iter_bufplace", tests, NULL, NULL);
}

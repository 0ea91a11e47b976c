/*
 * test_stack_keys_skip.c - records passed over inside a buffer (a record that does not frame: the rest of its buffer
 * lost) are lost from the CPU's last record read before them up to its next one read, and a stack-key reference
 * made anywhere in that span (on any CPU) may have taken another sample's definition: etl_stacks_lost_spans must
 * cover the whole span, not only its start (the skip table once kept no end, so a reference after the skip's
 * start and before the lost records was not counted uncertain).
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
#include "container/reader_internal.h"
#include "stacks/learn.h"
#include "stacks/stack_keys.h"
#include "synthtruth.h"

static uint32_t u32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

/* A 4-CPU trace with stacks, 4 KiB buffers; damaged: the marker of the 3rd record of CPU 1's middle buffer zeroed. */
static void make(const char *path, bool damaged)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "seed", "23");
    st_set(&o, "duration", "0.3");
    st_set(&o, "cpus", "4");
    st_set(&o, "cswitch", "full");
    st_set(&o, "buffer-size", "4K");
    st_set(&o, "stacks", NULL);
    st_set(&o, "stack-form", "cached");
    st_truth t;
    st_run(path, &o, &t);
    st_free(&t);
    if (!damaged) return;
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    uint8_t *b = malloc(n);
    assert_non_null(b);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fread(b, 1, n, f), n);
    size_t offs[4096], k = 0;
    for (size_t off = 4096; off + 0x48 <= n && k < 4096; off += 4096) /* buffer 0 holds the logfile header */
        if ((b[off + 0x28] | (b[off + 0x29] & 7) << 8) == 1) offs[k++] = off;
    assert_true(k > 4);
    size_t o2 = offs[k / 2] + 0x48;
    for (int i = 0; i < 3; i++) o2 += ((size_t)(b[o2 + 4] | b[o2 + 5] << 8) + 7) & ~(size_t)7;
    assert_true(u32(b + o2) != 0);
    memset(b + o2, 0, 4);
    fseek(f, 0, SEEK_SET);
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

static etl_reader *open_quiet(const char *path)
{
    etl_reader *r = NULL;
    etl_reader_options ro = {0};
    ro.sz = sizeof ro;
    assert_int_equal(etl_reader_open(path, &ro, &r, NULL), ETL_OK);
    return r;
}

/* CPU 1's record times in time order (n of them), the reader left open with everything read. */
static uint64_t *cpu1_times(etl_reader *r, size_t *n)
{
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    uint64_t *ts = malloc(200000 * sizeof *ts);
    assert_non_null(ts);
    *n = 0;
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK)
        if (rec.cpu == 1 && (rec.has & ETL_REC_TS) && *n < 200000) ts[(*n)++] = rec.ts;
    etl_iter_close(it);
    return ts;
}

static bool has(const uint64_t *v, size_t n, uint64_t t)
{
    for (size_t i = 0; i < n; i++)
        if (v[i] == t) return true;
    return false;
}

static void test_skip_span(void **state)
{
    (void)state;
    char path[256], clean[256];
    st_tmp(path, sizeof path, "keyskip", "d.etl");
    st_tmp(clean, sizeof clean, "keyskip", "u.etl");
    make(path, true);
    make(clean, false);

    etl_reader *u = open_quiet(clean), *r = open_quiet(path);
    size_t nu, nd;
    uint64_t *tu = cpu1_times(u, &nu), *td = cpu1_times(r, &nd);
    assert_true(etl_reader_cpu_skipped(r, 1, 0, UINT64_MAX));
    etl_lost_spans l, none;
    assert_int_equal(etl_stacks_lost_spans(r, &l), ETL_OK);
    assert_int_equal(etl_stacks_lost_spans(u, &none), ETL_OK);
    assert_int_equal(none.n, 0); /* read whole: nothing lost */
    uint64_t s = etl_reader_cpu_next_skip(r, 1, 0);
    assert_true(s != UINT64_MAX);

    /* Each record the skip lost (in the clean trace, not read in the damaged one): a reference just before it whose
     * definition comes after may have taken another's, so the span covers it. */
    size_t lost = 0;
    uint64_t last_lost = 0;
    for (size_t i = 0; i < nu; i++) {
        if (has(td, nd, tu[i])) continue;
        lost++;
        assert_true(tu[i] > s);
        last_lost = tu[i];
        assert_true(etl_lost_between(&l, tu[i] - 1, tu[i] + 1));
        assert_true(etl_lost_between(&l, tu[i], UINT64_MAX)); /* a reference at the lost record's time */
    }
    assert_true(lost > 10);
    /* Not everywhere: a reference after the last lost record, resolved before the trace's end, is certain. */
    uint64_t end = tu[nu - 1];
    assert_true(end > last_lost);
    assert_false(etl_lost_between(&l, end, end + 1));
    assert_false(etl_lost_between(&l, 0, s)); /* nor before the skip */

    etl_lost_spans_free(&l);
    etl_lost_spans_free(&none);
    free(tu);
    free(td);
    etl_reader_close(u);
    etl_reader_close(r);
    unlink(path);
    unlink(clean);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_skip_span),
    };
    return cmocka_run_group_tests_name("stack_keys_skip", tests, NULL, NULL);
}

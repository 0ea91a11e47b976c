/*
 * test_diagkeep_merge.c - two keeps merged (etl_diag_keep_merge: what the open told, held,
 * and what the run told, or a pass done again): each problem counted once in "N more
 * problems", however the problems lie between the two. The CLI added the held keep's count
 * to the run's, so a problem beyond the 20 kept that both were told counted twice.
 */
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "base/diagkeep.h"

static void tell(etl_diag_keep *k, unsigned from, unsigned to)
{
    for (unsigned i = from; i < to; i++) {
        etl_diag d;
        memset(&d, 0, sizeof d);
        d.file_offset = 0x10000 + (uint64_t)i * 0x40;
        snprintf(d.msg, sizeof d.msg, "buffer %u: problem %u", i / 8, i);
        etl_diag_keep_add(k, &d);
    }
}

/* The problems [a0, a1) told to one keep, [b0, b1) to another, merged: n + more is the union's size. */
static void merged(unsigned a0, unsigned a1, unsigned b0, unsigned b1, unsigned distinct)
{
    for (int way = 0; way < 2; way++) {
        etl_diag_keep a, b;
        etl_diag_keep_init(&a);
        etl_diag_keep_init(&b);
        tell(&a, a0, a1);
        tell(&b, b0, b1);
        if (way) etl_diag_keep_merge(&a, &b);
        else etl_diag_keep_merge(&b, &a);
        etl_diag_keep *into = way ? &a : &b, *from = way ? &b : &a;
        assert_int_equal(into->n + into->more, distinct);
        assert_int_equal(into->n, distinct < ETL_DIAG_KEEP ? distinct : ETL_DIAG_KEEP);
        assert_int_equal(from->n + from->more, 0); /* emptied */
        /* The first 20 of the union, in file order. */
        unsigned lo = a0 < b0 ? a0 : b0;
        for (unsigned i = 0; i < into->n; i++) assert_int_equal(into->off[i], 0x10000 + (uint64_t)(lo + i) * 0x40);
        /* Told again after the merge: still once. */
        tell(into, a0, a1);
        tell(into, b0, b1);
        assert_int_equal(into->n + into->more, distinct);
        etl_diag_keep_free(&a);
        etl_diag_keep_free(&b);
    }
}

static void test_merge_counts_once(void **state)
{
    (void)state;
    merged(0, 28, 0, 28, 28);   /* the same 28 told twice: 20 + 8, not 20 + 16 */
    merged(0, 10, 5, 15, 15);   /* all kept */
    merged(0, 30, 25, 60, 60);  /* overlapping beyond the kept */
    merged(0, 25, 30, 50, 45);  /* disjoint */
    merged(40, 80, 0, 50, 80);  /* one's kept are the other's counted */
    merged(0, 0, 0, 30, 30);    /* one empty */
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_merge_counts_once)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

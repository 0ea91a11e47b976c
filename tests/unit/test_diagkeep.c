/*
 * test_diagkeep.c - the warnings a report keeps (src/base/diagkeep.h): the first 20 by
 * (offset, text), the others counted, each problem once however often it is told and
 * in whatever order, as the threads of a report's passes tell them.
 */
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "base/diagkeep.h"

static etl_diag problem(unsigned i)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    d.file_offset = 4096 + (uint64_t)(i % 37) * 512; /* 37 offsets, most with several texts */
    snprintf(d.msg, sizeof d.msg, "problem %u at %u", i % 53, i % 37);
    return d;
}

/* Tells the 200 distinct problems 0..199 three times each, in an order set by seed. */
static void tell(etl_diag_keep *k, uint64_t seed)
{
    unsigned order[600];
    for (unsigned i = 0; i < 600; i++) order[i] = i % 200;
    for (unsigned i = 599; i > 0; i--) { /* a shuffle */
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        unsigned j = (unsigned)(seed >> 33) % (i + 1), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (unsigned i = 0; i < 600; i++) {
        etl_diag d = problem(order[i]);
        etl_diag_keep_add(k, &d);
    }
}

static void test_order_free(void **state)
{
    (void)state;
    etl_diag_keep first;
    etl_diag_keep_init(&first);
    tell(&first, 1);
    assert_int_equal(first.n, ETL_DIAG_KEEP);
    assert_int_equal(first.n + first.more, 200); /* each once */
    for (unsigned i = 1; i < first.n; i++) /* in file order, then text */
        assert_true(first.off[i - 1] < first.off[i] ||
                    (first.off[i - 1] == first.off[i] && strcmp(first.text[i - 1], first.text[i]) < 0));
    for (uint64_t seed = 2; seed < 40; seed++) {
        etl_diag_keep k;
        etl_diag_keep_init(&k);
        tell(&k, seed);
        assert_int_equal(k.n, first.n);
        assert_int_equal(k.more, first.more);
        for (unsigned i = 0; i < k.n; i++) {
            assert_int_equal(k.off[i], first.off[i]);
            assert_string_equal(k.text[i], first.text[i]);
        }
        etl_diag_keep_free(&k);
    }
    /* Cleared, the same problems are told again. */
    etl_diag_keep_clear(&first);
    assert_int_equal(first.n + first.more, 0);
    etl_diag d = problem(5);
    etl_diag_keep_add(&first, &d);
    assert_int_equal(first.n, 1);
    etl_diag_keep_free(&first);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_order_free)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

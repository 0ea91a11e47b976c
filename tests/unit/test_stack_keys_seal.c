/*
 * test_stack_keys_seal.c - the stack-key table sealed more than once, defined to after its seal,
 * and sealed while its allocations fail one after another: whatever happened before, a seal that
 * succeeds answers as a search of every definition does (a reference stands for its key's first
 * definition at or after it). stack_keys.c is compiled in here with allocators that fail at the
 * Nth call, so a failure is real, at each of the seal's allocations in turn.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

static long fail_at = -1, calls;
static void *t_malloc(size_t n) { return ++calls == fail_at ? NULL : malloc(n); }
static void *t_calloc(size_t a, size_t b) { return ++calls == fail_at ? NULL : calloc(a, b); }
static void *t_realloc(void *p, size_t n) { return ++calls == fail_at ? NULL : realloc(p, n); }
#define malloc t_malloc
#define calloc t_calloc
#define realloc t_realloc
#include "stacks/stack_keys.c"
#undef malloc
#undef calloc
#undef realloc

typedef struct def {
    uint64_t key;
    etl_stack_pos pos;
    uint8_t frame[8];
} def;

enum { NKEYS = 4, MAXDEFS = 128 };

typedef struct table {
    etl_stack_keys k;
    def d[MAXDEFS];
    int n;
} table;

/* Definition i: key 1..4, positions out of stream order within each key; frames user addresses, each its own. */
static void define(table *t, bool full, uint64_t key, uint64_t ts)
{
    def *d = &t->d[t->n++];
    *d = (def){key, {ts, 0, 0, 0}, {0}};
    d->frame[0] = (uint8_t)t->n;
    d->frame[1] = 0x10;
    assert_int_equal(etl_stack_keys_define(&t->k, key, d->pos, d->frame, 1, 8, !full), ETL_OK);
}

/* Every reference (key, ts) resolves as the search of t->d says, its frames the definition's. */
static void answers(table *t, bool full)
{
    for (uint64_t key = 1; key <= NKEYS + 1; key++)
        for (uint64_t ts = 0; ts < 220; ts++) {
            etl_stack_pos pos = {ts, 0, 0, 0};
            int best = -1;
            for (int i = 0; i < t->n; i++)
                if (t->d[i].key == key && !etl_stack_pos_less(t->d[i].pos, pos) &&
                    (best < 0 || etl_stack_pos_less(t->d[i].pos, t->d[best].pos)))
                    best = i;
            uint32_t got = etl_stack_keys_resolve(&t->k, key, pos, ETL_STACK_PART_USER);
            if (best < 0) {
                assert_int_equal(got, ETL_SEQ_NONE);
                continue;
            }
            assert_int_not_equal(got, ETL_SEQ_NONE);
            assert_int_equal(t->k.v[got].ts, t->d[best].pos.ts);
            uint64_t f[ETL_STACK_MAX_FRAMES];
            if (full) {
                assert_int_equal(etl_stack_keys_frames(&t->k, got, f), 1);
                assert_int_equal(f[0], (uint64_t)t->d[best].frame[0] | (uint64_t)t->d[best].frame[1] << 8);
            } else {
                assert_int_equal(etl_stack_keys_frames(&t->k, got, f), 0);
            }
        }
}

static void fill(table *t, bool full, int from, int count)
{
    for (int i = from; i < from + count; i++) define(t, full, 1 + (uint64_t)(i % NKEYS), (uint64_t)(200 - 3 * i));
}

/* Sealed twice, sealed again after more definitions, with and without frames: the same answers each time. */
static void test_seal_again(void **state)
{
    (void)state;
    for (int full = 0; full < 2; full++) {
        table t = {0};
        if (full) etl_stack_keys_init(&t.k);
        else etl_stack_keys_init_no_frames(&t.k);
        fill(&t, full, 0, 40);
        assert_int_equal(etl_stack_keys_seal(&t.k), ETL_OK);
        answers(&t, full);
        assert_int_equal(etl_stack_keys_seal(&t.k), ETL_OK); /* nothing defined between */
        answers(&t, full);
        fill(&t, full, 40, 8);
        assert_int_equal(etl_stack_keys_seal(&t.k), ETL_OK);
        answers(&t, full);
        etl_stack_keys_free(&t.k);
    }
}

/*
 * The seal fails at its first allocation, then its second, ...: each failure leaves the table as it was,
 * resolving nothing; more definitions and a seal that works then answer for all of them.
 */
static void test_seal_fails(void **state)
{
    (void)state;
    for (int full = 0; full < 2; full++)
        for (int sealed = 0; sealed < 2; sealed++) { /* a first seal fails, or a second after a first */
            bool done = false;
            for (long k = 1; !done; k++) {
                assert_true(k < 100);
                table t = {0};
                if (full) etl_stack_keys_init(&t.k);
                else etl_stack_keys_init_no_frames(&t.k);
                fill(&t, full, 0, 40);
                if (sealed) {
                    assert_int_equal(etl_stack_keys_seal(&t.k), ETL_OK);
                    fill(&t, full, 40, 4);
                }
                calls = 0, fail_at = k;
                etl_status st = etl_stack_keys_seal(&t.k);
                fail_at = -1;
                if (st == ETL_OK) {
                    done = true; /* every allocation of the seal failed once */
                } else {
                    assert_int_equal(st, ETL_E_NOMEM);
                    assert_int_equal(etl_stack_keys_resolve(&t.k, 1, (etl_stack_pos){0, 0, 0, 0}, ETL_STACK_PART_USER),
                                     ETL_SEQ_NONE); /* resolves nothing */
                    fill(&t, full, t.n, 4);
                    assert_int_equal(etl_stack_keys_seal(&t.k), ETL_OK);
                }
                answers(&t, full);
                etl_stack_keys_free(&t.k);
            }
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seal_again),
        cmocka_unit_test(test_seal_fails),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

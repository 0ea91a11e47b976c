/*
 * test_idmap.c - the shared id hash table against a plain array model: random
 * inserts, overwrites and removals (including keys that collide in their low
 * bits, as TIDs that are multiples of 65536 do), and the byte hash; the pair map
 * (base/pairmap.h) against the same kind of model, pairs that share either half.
 */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/idmap.h"
#include "base/pairmap.h"

static void test_idmap_model(void **state)
{
    (void)state;
    enum { N = 4096 };
    uint64_t keys[N];
    uint32_t model[N];
    uint64_t rs = 42;
    for (unsigned i = 0; i < N; i++) {
        /* Half the keys differ only above bit 16, a quarter are small, the rest random. */
        keys[i] = i % 4 < 2 ? (uint64_t)i << 16 : i % 4 == 2 ? i : tu_rand(&rs);
        model[i] = ETL_IDMAP_EMPTY;
    }
    etl_idmap m;
    etl_idmap_init(&m);
    assert_int_equal(etl_idmap_get(&m, 0), ETL_IDMAP_EMPTY);
    assert_false(etl_idmap_remove(&m, 0));
    size_t count = 0;
    for (unsigned step = 0; step < 200000; step++) {
        unsigned k = (unsigned)(tu_rand(&rs) % N);
        if (tu_rand(&rs) % 3 == 0) {
            bool was = model[k] != ETL_IDMAP_EMPTY;
            assert_int_equal(etl_idmap_remove(&m, keys[k]), was);
            if (was) count--;
            model[k] = ETL_IDMAP_EMPTY;
        } else {
            uint32_t v = (uint32_t)(tu_rand(&rs) % 1000000);
            assert_int_equal(etl_idmap_put(&m, keys[k], v), ETL_OK);
            if (model[k] == ETL_IDMAP_EMPTY) count++;
            model[k] = v;
        }
        if (step % 997 == 0)
            for (unsigned i = 0; i < N; i++) assert_int_equal(etl_idmap_get(&m, keys[i]), model[i]);
        assert_int_equal(m.count, count);
    }
    for (unsigned i = 0; i < N; i++) assert_int_equal(etl_idmap_get(&m, keys[i]), model[i]);
    assert_int_equal(etl_idmap_put(&m, 1, ETL_IDMAP_EMPTY), ETL_E_INVALID_ARG);
    etl_idmap_clear(&m);
    assert_int_equal(m.count, 0);
    for (unsigned i = 0; i < N; i++) assert_int_equal(etl_idmap_get(&m, keys[i]), ETL_IDMAP_EMPTY);
    etl_idmap_free(&m);
}

/* Keys spaced 65536 apart must not share a probe run: the longest run stays short. */
static void test_idmap_spread(void **state)
{
    (void)state;
    etl_idmap m;
    etl_idmap_init(&m);
    for (uint32_t i = 1; i <= 65535; i++) assert_int_equal(etl_idmap_put(&m, (uint64_t)i << 16, i), ETL_OK);
    size_t run = 0, longest = 0;
    for (size_t i = 0; i < m.cap; i++) {
        run = m.slots[i].val == ETL_IDMAP_EMPTY ? 0 : run + 1;
        if (run > longest) longest = run;
    }
    assert_true(longest < 64);
    etl_idmap_free(&m);
}

static void test_hash_bytes(void **state)
{
    (void)state;
    uint8_t a[16] = {0}, b[16] = {0};
    assert_true(etl_hash_bytes(a, 16) == etl_hash_bytes(b, 16));
    for (unsigned i = 0; i < 16; i++) {
        b[i] = 1;
        assert_true(etl_hash_bytes(a, 16) != etl_hash_bytes(b, 16));
        b[i] = 0;
    }
    assert_true(etl_hash_bytes(a, 15) != etl_hash_bytes(a, 16));
}

/* Pairs that share their first word or their second (the profile's: one thread, many addresses; one address,
 * many threads) are distinct keys; a value can be overwritten; the map grows through several doublings. */
static void test_pairmap_model(void **state)
{
    (void)state;
    enum { NA = 97, NB = 61 };
    static uint32_t model[NA][NB];
    uint64_t rs = 7;
    for (unsigned i = 0; i < NA; i++)
        for (unsigned j = 0; j < NB; j++) model[i][j] = ETL_IDMAP_EMPTY;
    etl_pairmap m;
    etl_pairmap_init(&m);
    assert_int_equal(etl_pairmap_get(&m, 0, 0), ETL_IDMAP_EMPTY);
    assert_int_equal(etl_pairmap_put(&m, 1, 1, ETL_IDMAP_EMPTY), ETL_E_INVALID_ARG);
    size_t count = 0;
    for (unsigned step = 0; step < 20000; step++) {
        unsigned i = (unsigned)(tu_rand(&rs) % NA), j = (unsigned)(tu_rand(&rs) % NB);
        uint64_t a = i % 2 ? (uint64_t)i << 40 : i; /* a module row above bit 40, or an address */
        uint32_t b = j | (j % 3 ? 0 : 1u << 31);
        uint32_t v = (uint32_t)(tu_rand(&rs) % 1000000);
        assert_int_equal(etl_pairmap_get(&m, a, b), model[i][j]);
        assert_int_equal(etl_pairmap_put(&m, a, b, v), ETL_OK);
        if (model[i][j] == ETL_IDMAP_EMPTY) count++;
        model[i][j] = v;
        assert_int_equal(m.count, count);
    }
    for (unsigned i = 0; i < NA; i++)
        for (unsigned j = 0; j < NB; j++)
            assert_int_equal(etl_pairmap_get(&m, i % 2 ? (uint64_t)i << 40 : i, j | (j % 3 ? 0 : 1u << 31)), model[i][j]);
    assert_true(m.cap >= 2 * m.count);
    etl_pairmap_free(&m);
    assert_null(m.slots);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_idmap_model),
        cmocka_unit_test(test_idmap_spread),
        cmocka_unit_test(test_hash_bytes),
        cmocka_unit_test(test_pairmap_model),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

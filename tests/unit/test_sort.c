/*
 * test_sort.c - etl_sort_u64 (base/sort.h) against qsort: random keys of every width,
 * keys that differ in one byte only (the passes left out), duplicates, short arrays.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "base/sort.h"

static uint64_t next(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void test_sort_u64_like_qsort(void **state)
{
    (void)state;
    uint64_t seed = 0x9E3779B97F4A7C15ull;
    static const size_t sizes[] = {0, 1, 2, 255, 256, 257, 1000, 70000};
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        uint64_t *a = malloc((n ? n : 1) * sizeof *a), *b = malloc((n ? n : 1) * sizeof *b);
        assert_non_null(a);
        assert_non_null(b);
        for (unsigned form = 0; form < 5; form++) {
            for (size_t i = 0; i < n; i++) {
                uint64_t v = next(&seed);
                switch (form) {
                case 0: break;                                   /* every byte varies */
                case 1: v &= 0xFFFF; break;                      /* two low bytes */
                case 2: v = (v & 0xFF) << 40 | 0x1234; break;    /* one middle byte */
                case 3: v = v % 7; break;                        /* many equal keys */
                default: v = (v & 1) ? UINT64_MAX : v >> 1; break; /* both ends */
                }
                a[i] = b[i] = v;
            }
            etl_sort_u64(a, n);
            etl_sort(b, n, sizeof *b, etl_cmp_u64);
            assert_memory_equal(a, b, n * sizeof *a);
        }
        free(a);
        free(b);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sort_u64_like_qsort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

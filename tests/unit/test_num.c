/*
 * test_num.c - src/out/num.c: the one digit formatter at its edges (every power of
 * ten and its neighbours, 0, INT64_MIN, UINT64_MAX, against printf), exact
 * fixed-point and durations for people, and the parsers of integers, sizes and
 * durations: round trips, and every reject (empty, sign, overflow, junk, bad unit).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "out/num.h"

static void digits_match_printf(void **state)
{
    (void)state;
    char a[32], b[32];
    uint64_t p = 1;
    for (int k = 0; k < 20; k++, p *= 10) {
        uint64_t v[3] = {p - 1, p, p + 1};
        for (int j = 0; j < 3; j++) {
            size_t n = fmt_u64(a, v[j]);
            a[n] = 0;
            snprintf(b, sizeof b, "%" PRIu64, v[j]);
            assert_string_equal(a, b);
            n = num_u64_inline(a, v[j]);
            a[n] = 0;
            assert_string_equal(a, b);
        }
    }
    uint64_t s = 42;
    for (int i = 0; i < 10000; i++) {
        uint64_t v = tu_rand(&s) >> (tu_rand(&s) % 64);
        a[fmt_u64(a, v)] = 0;
        snprintf(b, sizeof b, "%" PRIu64, v);
        assert_string_equal(a, b);
        int64_t w = (int64_t)tu_rand(&s) >> (tu_rand(&s) % 64);
        a[fmt_i64(a, w)] = 0;
        snprintf(b, sizeof b, "%" PRId64, w);
        assert_string_equal(a, b);
        a[fmt_hex(a, v)] = 0;
        snprintf(b, sizeof b, "0x%" PRIx64, v);
        assert_string_equal(a, b);
    }
    for (int k = 0; k < 64; k++) { /* every length, at its edges */
        uint64_t v[3] = {(1ull << k) - 1, 1ull << k, k == 63 ? UINT64_MAX : (2ull << k) - 1};
        for (int j = 0; j < 3; j++) {
            a[fmt_hex(a, v[j])] = 0;
            snprintf(b, sizeof b, "0x%" PRIx64, v[j]);
            assert_string_equal(a, b);
        }
    }
}

static void digits_edges(void **state)
{
    (void)state;
    char a[32];
    assert_int_equal(fmt_u64(a, 0), 1);
    assert_memory_equal(a, "0", 1);
    assert_int_equal(fmt_u64(a, UINT64_MAX), 20);
    assert_memory_equal(a, "18446744073709551615", 20);
    assert_int_equal(fmt_i64(a, INT64_MIN), 20);
    assert_memory_equal(a, "-9223372036854775808", 20);
    assert_int_equal(fmt_i64(a, INT64_MAX), 19);
    assert_int_equal(fmt_i64(a, -1), 2);
    assert_memory_equal(a, "-1", 2);
}

static void fixed_point(void **state)
{
    (void)state;
    char o[32];
    assert_string_equal(fmt_fixed(o, 12345, 3), "12.345");
    assert_string_equal(fmt_fixed(o, -12345, 3), "-12.345");
    assert_string_equal(fmt_fixed(o, 5, 3), "0.005");
    assert_string_equal(fmt_fixed(o, -5, 3), "-0.005");
    assert_string_equal(fmt_fixed(o, 0, 2), "0.00");
    assert_string_equal(fmt_fixed(o, 7, 0), "7");
    assert_string_equal(fmt_fixed(o, INT64_MIN, 9), "-9223372036.854775808");
    assert_string_equal(fmt_fixed(o, INT64_MAX, 9), "9223372036.854775807");
    assert_int_equal(fmt_fixed_n(o, -1, 1), 4);
}

static void durations_for_people(void **state)
{
    (void)state;
    char o[32];
    assert_string_equal(fmt_dur(o, 0), "0 ns");
    assert_string_equal(fmt_dur(o, 999), "999 ns");
    assert_string_equal(fmt_dur(o, 1000), "1.00 us");
    assert_string_equal(fmt_dur(o, 12345678), "12.346 ms"); /* rounded to the digits shown, as WPA shows it */
    assert_string_equal(fmt_dur(o, 1234000000), "1.234 s");
    assert_string_equal(fmt_dur(o, -850), "-850 ns");
    assert_string_equal(fmt_dur(o, -2500000), "-2.500 ms");
    assert_string_equal(fmt_dur(o, INT64_MIN), "-9223372036.855 s");
    /* A half away from zero; below it, down. */
    assert_string_equal(fmt_dur(o, 93085700), "93.086 ms");
    assert_string_equal(fmt_dur(o, 93085499), "93.085 ms");
    assert_string_equal(fmt_dur(o, 93085500), "93.086 ms");
    assert_string_equal(fmt_dur(o, -93085500), "-93.086 ms");
    assert_string_equal(fmt_dur(o, 5283871600), "5.284 s");
    assert_string_equal(fmt_dur(o, 1234), "1.23 us");
    assert_string_equal(fmt_dur(o, 1235), "1.24 us");
    /* A value that rounds up to the next unit is shown in it. */
    assert_string_equal(fmt_dur(o, 999994), "999.99 us");
    assert_string_equal(fmt_dur(o, 999995), "1.000 ms");
    assert_string_equal(fmt_dur(o, 999999499), "999.999 ms");
    assert_string_equal(fmt_dur(o, 999999500), "1.000 s");
    assert_string_equal(fmt_dur(o, -999999600), "-1.000 s");
}

static void rounding(void **state)
{
    (void)state;
    assert_int_equal(div_round_sat(22166, 10), 2217);
    assert_int_equal(div_round_sat(22164, 10), 2216);
    assert_int_equal(div_round_sat(25, 10), 3);
    assert_int_equal(div_round_sat(-25, 10), -3);
    assert_int_equal(div_round_sat(-24, 10), -2);
    assert_int_equal(div_round_sat(2, 3), 1);
    assert_int_equal(div_round_sat(1, 3), 0);
    assert_int_equal(div_round_sat(0, 7), 0);
    /* 73313 of 79528 samples: 92.18516 % in hundredths. */
    assert_int_equal(div_round_sat((__int128)73313 * 10000, 79528), 9219);
    /* Past int64 (a rate or a percentage of a damaged trace's counts): the limit, never a wrapped value. */
    assert_true(div_round_sat((__int128)INT64_MAX * 1000, 999) == INT64_MAX);
    assert_true(div_round_sat((__int128)INT64_MIN * 1000, 999) == INT64_MIN);
    assert_true(div_round_sat((__int128)INT64_MAX * 2 + 1, 2) == INT64_MAX);
}

static void parse_integers(void **state)
{
    (void)state;
    uint64_t v = 7;
    assert_int_equal(num_parse_u64("0", 10, UINT64_MAX, &v), 0);
    assert_int_equal(v, 0);
    assert_int_equal(num_parse_u64("18446744073709551615", 10, UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(num_parse_u64("18446744073709551616", 10, UINT64_MAX, &v), -1);
    assert_int_equal(num_parse_u64("99999999999999999999", 10, UINT64_MAX, &v), -1);
    assert_int_equal(num_parse_u64("256", 10, 256, &v), 0);
    assert_int_equal(num_parse_u64("257", 10, 256, &v), -1);
    assert_int_equal(num_parse_u64("0x1F", 0, UINT32_MAX, &v), 0);
    assert_int_equal(v, 31);
    assert_int_equal(num_parse_u64("0x1F", 10, UINT64_MAX, &v), -1); /* base 10: no prefix */
    assert_int_equal(num_parse_u64("010", 0, UINT64_MAX, &v), 0);      /* decimal, never octal */
    assert_int_equal(v, 10);
    assert_int_equal(num_parse_u64("0xffffffffffffffff", 0, UINT64_MAX, &v), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(num_parse_u64("0x10000000000000000", 0, UINT64_MAX, &v), -1);
    const char *bad[] = {"", "-1", "+1", " 1", "1 ", "1x", "0x", "x", "1.0"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        v = 99;
        if (num_parse_u64(bad[i], 0, UINT64_MAX, &v) != -1) fail_msg("'%s' parsed", bad[i]);
        assert_int_equal(v, 99); /* untouched */
    }
    assert_int_equal(num_parse_u64(NULL, 10, UINT64_MAX, &v), -1);
}

static void parse_sizes(void **state)
{
    (void)state;
    uint64_t v;
    struct {
        const char *s;
        uint64_t v;
    } ok[] = {{"0", 0}, {"4096", 4096}, {"64K", 64 << 10}, {"64k", 64 << 10}, {"1M", 1 << 20},
              {"2G", 2ull << 30}, {"3KiB", 3 << 10}, {"5MB", 5 << 20}, {"1gib", 1 << 30},
              {"17179869183G", 17179869183ull << 30}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (num_parse_size(ok[i].s, &v) != 0) fail_msg("'%s' rejected", ok[i].s);
        assert_true(v == ok[i].v);
    }
    const char *bad[] = {"", "K", "1T", "1KK", "1Kx", "1 K", "-1K", "17179869184G", "18446744073709551616", "1.5M"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (num_parse_size(bad[i], &v) != -1) fail_msg("'%s' parsed", bad[i]);
}

static void parse_durations(void **state)
{
    (void)state;
    int64_t ns;
    struct {
        const char *s;
        int64_t ns;
    } ok[] = {{"1.5", 1500000000}, {"250ms", 250000000}, {"10us", 10000}, {"42ns", 42}, {"2s", 2000000000},
              {"0", 0}, {".5", 500000000}, {"5.", 5000000000}, {".", 0}, {"-0.5", -500000000},
              {"1.000000001", 1000000001}, {"1.50ms", 1500000}, {"0.000001ms", 1},
              {"9223372036.854775807", INT64_MAX}, {"-9223372036854775807ns", -INT64_MAX},
              /* exponents, as --fail-if always read them; µs as the CSV headers write it */
              {"1e3", 1000000000000}, {"1e-1", 100000000}, {"1.5e3ms", 1500000000}, {"2E+2us", 200000},
              {"-1e-9", -1}, {"0e-9000000", 0}, {"0e99999999", 0}, {"5e0ns", 5}, {"150e-2ns", NUM_DUR_SUB_NS},
              {"10\xC2\xB5s", 10000}, {"10\xCE\xBCs", 10000}, {"1.5e1\xC2\xB5s", 15000}};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (ok[i].ns == NUM_DUR_SUB_NS) continue; /* a marker, in the list below */
        if (num_parse_dur(ok[i].s, &ns) != 0) fail_msg("'%s' rejected", ok[i].s);
        if (ns != ok[i].ns) fail_msg("'%s': %lld, expected %lld", ok[i].s, (long long)ns, (long long)ok[i].ns);
    }
    const char *bad[] = {"", "-", "s", "ms", "1x", "1 s", "1sec", "1e", "1e+", "1e3.5", "e3", "--1", "+1", "1.2.3",
                         "9223372036.854775808", "9223372036854775808ns", "18446744073709551616ns", "1e10000",
                         "0.0000000000000000001", "1m", "1S", "1\xC2\xB5", "1\xB5s"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        if (num_parse_dur(bad[i], &ns) != -1) fail_msg("'%s' parsed", bad[i]);
    /* A part of a nanosecond is refused, not cut to a value that was not asked (--range 0 0.5ns: 0 .. 0). */
    const char *sub[] = {"0.5ns", "1.5ns", "1.0000000019", "0.0000005ms", "0.000000000000000001", "1e-10", "-0.5ns",
                         "150e-2ns", "0.0001us", "1e-9000000"};
    for (size_t i = 0; i < sizeof sub / sizeof sub[0]; i++)
        if (num_parse_dur(sub[i], &ns) != NUM_DUR_SUB_NS) fail_msg("'%s' not refused as a part of a ns", sub[i]);
    /* Round trip: what fmt_fixed writes in seconds reads back exactly. */
    uint64_t s = 7;
    for (int i = 0; i < 2000; i++) {
        int64_t v = (int64_t)(tu_rand(&s) >> (1 + tu_rand(&s) % 63));
        if (i & 1) v = -v;
        char t[40];
        fmt_fixed(t, v, 9);
        assert_int_equal(num_parse_dur(t, &ns), 0);
        assert_true(ns == v);
        snprintf(t, sizeof t, "%lldns", (long long)v);
        assert_int_equal(num_parse_dur(t, &ns), 0);
        assert_true(ns == v);
    }
}

static void parse_fixed_point(void **state)
{
    (void)state;
    uint64_t v;
    const char *rest;
    assert_int_equal(num_parse_fixed("12.5%", 2, &v, &rest), 0);
    assert_int_equal(v, 1250);
    assert_string_equal(rest, "%");
    assert_int_equal(num_parse_fixed("0.129", 2, &v, &rest), 0); /* truncated */
    assert_int_equal(v, 12);
    assert_string_equal(rest, "");
    assert_int_equal(num_parse_fixed("100", 0, &v, &rest), 0);
    assert_int_equal(v, 100);
    assert_int_equal(num_parse_fixed("184467440737095516.15", 2, &v, &rest), 0);
    assert_true(v == UINT64_MAX);
    assert_int_equal(num_parse_fixed("184467440737095516.16", 2, &v, &rest), -1);
    assert_int_equal(num_parse_fixed("", 2, &v, &rest), -1);
    assert_int_equal(num_parse_fixed("-1", 2, &v, &rest), -1);
    assert_int_equal(num_parse_fixed("1", 19, &v, &rest), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(digits_match_printf), cmocka_unit_test(digits_edges),
        cmocka_unit_test(fixed_point),         cmocka_unit_test(durations_for_people),
        cmocka_unit_test(rounding),
        cmocka_unit_test(parse_integers),      cmocka_unit_test(parse_sizes),
        cmocka_unit_test(parse_durations),     cmocka_unit_test(parse_fixed_point),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

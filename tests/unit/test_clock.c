/*
 * test_clock.c - raw timestamps to nanoseconds, FILETIME and Unix time
 * (container.md §6), and the two date formatters.
 *
 * Every expected number below was computed by hand with exact integer
 * arithmetic (Python integers, floor division), not with the code under test:
 * e.g. floor(123456789012 * 10^9 / 3117777) = 39597697016816.
 */
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "etlbuild.h"
#include "etlkit/container.h"

#define EPOCH_FT 116444736000000000LL /* 1970-01-01 as FILETIME */

static etl_logfile_header hdr(uint32_t clock_type, uint64_t perf_freq, uint32_t mhz, uint64_t start_time,
                              uint64_t t0)
{
    etl_logfile_header h;
    memset(&h, 0, sizeof h);
    h.clock_type = clock_type;
    h.perf_freq = perf_freq;
    h.cpu_speed_mhz = mhz;
    h.start_time = start_time;
    h.header_ts = t0;
    return h;
}

static void test_clock_init(void **state)
{
    (void)state;
    etl_clock c;
    etl_logfile_header h = hdr(ETL_CLOCK_QPC, 3117777, 2400, 132273542277445790ull, 555);
    etl_clock_init(&c, &h);
    assert_int_equal(c.type, ETL_CLOCK_QPC);
    assert_int_equal(c.ticks_per_sec, 3117777);
    assert_int_equal(c.start_time, 132273542277445790ull);
    assert_int_equal(c.t0, 555);

    h = hdr(ETL_CLOCK_SYSTEM_TIME, 3117777, 2400, 1, 2);
    etl_clock_init(&c, &h);
    assert_int_equal(c.type, ETL_CLOCK_SYSTEM_TIME);
    assert_int_equal(c.ticks_per_sec, 10000000);

    h = hdr(ETL_CLOCK_CPU_CYCLES, 3117777, 2400, 1, 2);
    etl_clock_init(&c, &h);
    assert_int_equal(c.type, ETL_CLOCK_CPU_CYCLES);
    assert_int_equal(c.ticks_per_sec, 2400000000ull);

    /* A header with no usable frequency still gives a working clock (100 ns ticks). */
    h = hdr(ETL_CLOCK_QPC, 0, 0, 1, 2);
    etl_clock_init(&c, &h);
    assert_int_equal(c.ticks_per_sec, 10000000);
    assert_int_equal(etl_clock_ns(&c, 12), 1000);
}

struct tick_case {
    int64_t ticks;
    int64_t ns;
};

static void check_ticks(uint64_t freq, const struct tick_case *tc, size_t n)
{
    etl_logfile_header h = hdr(ETL_CLOCK_QPC, freq, 0, 132273542277445790ull, 1000000);
    etl_clock c;
    etl_clock_init(&c, &h);
    for (size_t i = 0; i < n; i++) {
        int64_t got = etl_clock_ticks_to_ns(&c, tc[i].ticks);
        if (got != tc[i].ns)
            fail_msg("freq %llu ticks %lld: got %lld, want %lld", (unsigned long long)freq,
                     (long long)tc[i].ticks, (long long)got, (long long)tc[i].ns);
        /* The same through a timestamp relative to t0 = 1000000. */
        int64_t got2 = etl_clock_ns(&c, (uint64_t)(1000000 + tc[i].ticks));
        if (got2 != tc[i].ns)
            fail_msg("freq %llu ts t0%+lld: got %lld, want %lld", (unsigned long long)freq,
                     (long long)tc[i].ticks, (long long)got2, (long long)tc[i].ns);
    }
}

static void test_clock_qpc_10mhz(void **state)
{
    (void)state;
    const struct tick_case tc[] = {
        {0, 0},
        {1, 100},
        {-1, -100},
        {123456789012LL, 12345678901200LL},
        {-123456789012LL, -12345678901200LL},
        {1LL << 40, 109951162777600LL},
        {-(1LL << 40), -109951162777600LL},
        {3117777, 311777700},
    };
    check_ticks(10000000, tc, sizeof tc / sizeof tc[0]);
}

static void test_clock_qpc_3117777(void **state)
{
    (void)state;
    const struct tick_case tc[] = {
        {0, 0},
        {1, 320},                          /* 320.74... */
        {-1, -321},                        /* floor, not truncation */
        {3117777, 1000000000},             /* exactly one second */
        {42954541, 13777297414LL},
        {123456789012LL, 39597697016816LL},
        {-123456789012LL, -39597697016817LL},
        {1LL << 40, 352658842430359LL},
        {-(1LL << 40), -352658842430360LL},
    };
    check_ticks(3117777, tc, sizeof tc / sizeof tc[0]);
}

static void test_clock_qpc_hpet(void **state)
{
    (void)state;
    const struct tick_case tc[] = {
        {1, 69},
        {-1, -70},
        {14318180, 1000000000},
        {42954541, 3000000069LL},
        {123456789012LL, 8622380010029LL},
        {-123456789012LL, -8622380010030LL},
        {1LL << 40, 76791298040393LL},
        {-(1LL << 40), -76791298040394LL},
    };
    check_ticks(14318180, tc, sizeof tc / sizeof tc[0]);
}

/* Results that do not fit an int64 saturate instead of wrapping. */
static void test_clock_saturates(void **state)
{
    (void)state;
    etl_logfile_header h = hdr(ETL_CLOCK_QPC, 10000000, 0, 0, 0);
    etl_clock c;
    etl_clock_init(&c, &h);
    assert_int_equal(etl_clock_ticks_to_ns(&c, 1LL << 62), INT64_MAX);
    assert_true(etl_clock_ticks_to_ns(&c, -(1LL << 62)) == INT64_MIN);
    assert_int_equal(etl_clock_ns(&c, (uint64_t)INT64_MAX), INT64_MAX);
    assert_int_equal(etl_clock_filetime(&c, (uint64_t)INT64_MAX), INT64_MAX);
}

/*
 * Absolute times: StartTime + (ts - t0) * 10^7 / freq, floored, with no drift
 * however far from t0 (2^40 ticks here).
 */
static void test_clock_absolute_qpc(void **state)
{
    (void)state;
    const uint64_t start = 132273542277445790ull; /* 2020-02-28T09:03:47.7445790Z */
    const uint64_t t0 = 1ull << 41;
    etl_logfile_header h = hdr(ETL_CLOCK_QPC, 3117777, 0, start, t0);
    etl_clock c;
    etl_clock_init(&c, &h);
    /* At t0: exactly StartTime. */
    assert_int_equal(etl_clock_filetime(&c, t0), (int64_t)start);
    assert_int_equal(etl_clock_ns(&c, t0), 0);
    /* Unix ns of StartTime: (start - EPOCH) * 100 = 1582880627744579000. */
    assert_int_equal(etl_clock_unix_ns(&c, t0), 1582880627744579000LL);
    /* t0 + 2^40 ticks: + floor(2^40 * 10^7 / 3117777) = 3526588424303 FILETIME units. */
    assert_int_equal(etl_clock_filetime(&c, t0 + (1ull << 40)), (int64_t)(start + 3526588424303ull));
    assert_int_equal(etl_clock_ns(&c, t0 + (1ull << 40)), 352658842430359LL);
    assert_int_equal(etl_clock_unix_ns(&c, t0 + (1ull << 40)), 1582880627744579000LL + 352658842430359LL);
    /* One tick before t0 floors to the previous unit. */
    assert_int_equal(etl_clock_filetime(&c, t0 - 1), (int64_t)start - 4); /* -3.207... -> -4 */
    assert_int_equal(etl_clock_unix_ns(&c, t0 - 1), 1582880627744579000LL - 321);
    assert_int_equal(etl_clock_ns(&c, t0 - 1), -321);
    /* Before t0 by 2^40 ticks: floor(-2^40 * 10^9 / 3117777) = -352658842430360. */
    assert_int_equal(etl_clock_ns(&c, t0 - (1ull << 40)), -352658842430360LL);
    assert_int_equal(etl_clock_filetime(&c, t0 - (1ull << 40)), (int64_t)(start - 3526588424304ull));
}

static void test_clock_absolute_10mhz_no_drift(void **state)
{
    (void)state;
    const uint64_t start = 132273542277445790ull;
    etl_logfile_header h = hdr(ETL_CLOCK_QPC, 10000000, 0, start, 0);
    etl_clock c;
    etl_clock_init(&c, &h);
    /* At 10 MHz a tick is one FILETIME unit: exact at every scale. */
    for (unsigned s = 0; s <= 40; s++) {
        uint64_t ts = 1ull << s;
        assert_int_equal(etl_clock_filetime(&c, ts), (int64_t)(start + ts));
        assert_int_equal(etl_clock_ns(&c, ts), (int64_t)ts * 100);
        assert_int_equal(etl_clock_unix_ns(&c, ts), 1582880627744579000LL + (int64_t)ts * 100);
    }
    /* 2^40 + 1 ticks: still exact to the tick. */
    assert_int_equal(etl_clock_ns(&c, (1ull << 40) + 1), 109951162777700LL);
}

static void test_clock_system_time(void **state)
{
    (void)state;
    const uint64_t start = 132273542277445790ull;
    const uint64_t t0 = 132273542277445000ull; /* FILETIME ticks: the header's own time */
    etl_logfile_header h = hdr(ETL_CLOCK_SYSTEM_TIME, 14318180 /* ignored */, 0, start, t0);
    etl_clock c;
    etl_clock_init(&c, &h);
    assert_int_equal(etl_clock_ns(&c, t0 + 1), 100);
    assert_int_equal(etl_clock_ns(&c, t0 - 1), -100);
    assert_int_equal(etl_clock_ns(&c, t0 + 10000000), 1000000000);
    assert_int_equal(etl_clock_filetime(&c, t0 + 12345), (int64_t)(start + 12345));
    assert_int_equal(etl_clock_unix_ns(&c, t0 + 7), 1582880627744579000LL + 700);
}

static void test_clock_cpu_cycles(void **state)
{
    (void)state;
    const uint64_t start = 132273542277445790ull;
    etl_logfile_header h = hdr(ETL_CLOCK_CPU_CYCLES, 10000000 /* ignored */, 3000, start, 1000);
    etl_clock c;
    etl_clock_init(&c, &h);
    assert_int_equal(etl_clock_ns(&c, 1000 + 3000000000ull), 1000000000);
    assert_int_equal(etl_clock_ns(&c, 1000 + 3), 1);
    assert_int_equal(etl_clock_ns(&c, 1000 + 2), 0);     /* 0.67 ns */
    assert_int_equal(etl_clock_ns(&c, 1000 - 1), -1);    /* -0.33 ns */
    assert_int_equal(etl_clock_filetime(&c, 1000 + 300), (int64_t)start + 1);
    assert_int_equal(etl_clock_filetime(&c, 1000 + 299), (int64_t)start);
    /* 2^40 cycles at 3 GHz = floor(2^40 / 3) ns = 366503875925 ns. */
    assert_int_equal(etl_clock_ns(&c, 1000 + (1ull << 40)), 366503875925LL);
    /* 2933 MHz: 2^40 cycles -> floor(2^40 * 1000 / 2933) = 374876109026 ns. */
    h.cpu_speed_mhz = 2933;
    etl_clock_init(&c, &h);
    assert_int_equal(c.ticks_per_sec, 2933000000ull);
    assert_int_equal(etl_clock_ns(&c, 1000 + (1ull << 40)), 374876109026LL);
}

/*
 * A header with hostile values (StartTime and PerfFreq near 2^64) must not make
 * the conversion overflow: the exact results do not fit an int64, so they
 * saturate.
 */
static void test_clock_hostile_header(void **state)
{
    (void)state;
    /* StartTime and PerfFreq come straight from the file: UINT64_MAX must not overflow. */
    etl_logfile_header h = hdr(ETL_CLOCK_QPC, UINT64_MAX, 0, UINT64_MAX, 0);
    etl_clock c;
    etl_clock_init(&c, &h);
    assert_int_equal(etl_clock_unix_ns(&c, 0), INT64_MAX);
    assert_int_equal(etl_clock_filetime(&c, 0), INT64_MAX);
    assert_int_equal(etl_clock_ns(&c, 0), 0);
}

/* ------------------------------------------------------------------------- */
/* Formatting                                                                  */

static void test_filetime_format(void **state)
{
    (void)state;
    char out[40];
    struct {
        uint64_t ft;
        const char *s;
    } tc[] = {
        {0, "1601-01-01T00:00:00.0000000Z"},
        {1, "1601-01-01T00:00:00.0000001Z"},
        {864000000000ull, "1601-01-02T00:00:00.0000000Z"},
        {116444736000000000ull, "1970-01-01T00:00:00.0000000Z"},
        {116444735999999999ull, "1969-12-31T23:59:59.9999999Z"},
        {132273542277445790ull, "2020-02-28T09:03:47.7445790Z"},
        {132273542277445790ull + 864000000000ull, "2020-02-29T09:03:47.7445790Z"},  /* 2020 is leap */
        {133537247991234567ull, "2024-02-29T23:59:59.1234567Z"},
        {133537247991234567ull + 10000000ull, "2024-03-01T00:00:00.1234567Z"},
        {0x7FFFFFFFFFFFFFFFull, "30828-09-14T02:48:05.4775807Z"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        memset(out, 'X', sizeof out);
        etl_filetime_format(tc[i].ft, out);
        assert_string_equal(out, tc[i].s);
    }
}

static void test_unix_ns_format(void **state)
{
    (void)state;
    char out[40];
    struct {
        int64_t ns;
        const char *s;
    } tc[] = {
        {0, "1970-01-01T00:00:00.000000000Z"},
        {1, "1970-01-01T00:00:00.000000001Z"},
        {-1, "1969-12-31T23:59:59.999999999Z"},
        {-1000000000LL, "1969-12-31T23:59:59.000000000Z"},
        {-1000000001LL, "1969-12-31T23:59:58.999999999Z"},
        {1582880627744579000LL, "2020-02-28T09:03:47.744579000Z"},
        {1709210096000000007LL, "2024-02-29T12:34:56.000000007Z"},
        {INT64_MAX, "2262-04-11T23:47:16.854775807Z"},
        {INT64_MIN, "1677-09-21T00:12:43.145224192Z"},
    };
    for (size_t i = 0; i < sizeof tc / sizeof tc[0]; i++) {
        memset(out, 'X', sizeof out);
        etl_unix_ns_format(tc[i].ns, out);
        assert_string_equal(out, tc[i].s);
    }
}

/* The clock a reader builds from a hand-built file's logfile header. */
static void test_clock_from_reader(void **state)
{
    (void)state;
    eb_file f;
    eb_init(&f);
    eb_lfh lh = eb_lfh_default();
    lh.perf_freq = 14318180;
    lh.ts = 777777;
    lh.start_time = 133537247991234567ull;
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    etl_reader *r = NULL;
    etl_diag d;
    assert_int_equal(etl_reader_open_memory(f.p, f.n, NULL, &r, &d), ETL_OK);
    const etl_clock *c = etl_reader_clock(r);
    assert_int_equal(c->type, ETL_CLOCK_QPC);
    assert_int_equal(c->ticks_per_sec, 14318180);
    assert_int_equal(c->t0, 777777);
    assert_int_equal(c->start_time, 133537247991234567ull);
    /* 14318180 * 3 + 1 ticks after t0 = 3000000069 ns. */
    assert_int_equal(etl_clock_ns(c, 777777 + 42954541), 3000000069LL);
    char out[40];
    etl_filetime_format((uint64_t)etl_clock_filetime(c, 777777 + 14318180), out);
    assert_string_equal(out, "2024-03-01T00:00:00.1234567Z");
    etl_reader_close(r);
    eb_free(&f);
}

/* The fast paths of etl_clock_ns (whole ns per tick, whole ticks per ns) give the 128-bit floor exactly. */
static void test_clock_fast_paths(void **state)
{
    (void)state;
    static const uint64_t freqs[] = {10000000, 1000000000, 3000000000u, 2500000000u, 1, 3117777, 2000000000};
    uint64_t rs = 7;
    for (size_t k = 0; k < sizeof freqs / sizeof freqs[0]; k++) {
        etl_clock c;
        etl_logfile_header h;
        memset(&h, 0, sizeof h);
        h.clock_type = ETL_CLOCK_QPC;
        h.perf_freq = freqs[k];
        etl_clock_init(&c, &h);
        assert_true(c.ticks_per_sec == freqs[k]);
        for (int i = 0; i < 20000; i++) {
            c.t0 = i % 3 == 0 ? tu_rand(&rs) : tu_rand(&rs) >> (tu_rand(&rs) % 64);
            uint64_t ts = i % 2 ? c.t0 + (tu_rand(&rs) >> (tu_rand(&rs) % 64)) : c.t0 - (tu_rand(&rs) >> (tu_rand(&rs) % 64));
            __int128 d = (__int128)(int64_t)ts - (__int128)(int64_t)c.t0;
            __int128 n = d * 1000000000, q = n / (__int128)c.ticks_per_sec;
            if (n % (__int128)c.ticks_per_sec != 0 && n < 0) q--;
            int64_t want = q > INT64_MAX ? INT64_MAX : q < INT64_MIN ? INT64_MIN : (int64_t)q;
            assert_true(etl_clock_ns(&c, ts) == want);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_clock_init),
        cmocka_unit_test(test_clock_qpc_10mhz),
        cmocka_unit_test(test_clock_qpc_3117777),
        cmocka_unit_test(test_clock_qpc_hpet),
        cmocka_unit_test(test_clock_saturates),
        cmocka_unit_test(test_clock_absolute_qpc),
        cmocka_unit_test(test_clock_absolute_10mhz_no_drift),
        cmocka_unit_test(test_clock_system_time),
        cmocka_unit_test(test_clock_cpu_cycles),
        cmocka_unit_test(test_clock_hostile_header),
        cmocka_unit_test(test_filetime_format),
        cmocka_unit_test(test_unix_ns_format),
        cmocka_unit_test(test_clock_from_reader),
        cmocka_unit_test(test_clock_fast_paths),
    };
    return cmocka_run_group_tests_name("clock", tests, NULL, NULL);
}

/*
 * test_spool.c - spooled record logs: what goes in comes back, in order, byte for
 * byte, whether kept in memory or spilled to the temporary file (budget 0: every
 * finished chunk spills), records larger than a chunk included, streams interleaved.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "base/spool.h"
#include "testutil.h"

static void fill(uint8_t *p, size_t n, uint64_t tag)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint8_t)(tag * 31 + i * 7);
}

static void round_trip(size_t budget)
{
    enum { STREAMS = 3, RECORDS = 3000 };
    etl_spool *sp = etl_spool_open(budget);
    assert_non_null(sp);
    etl_spool_stream s[STREAMS];
    for (int i = 0; i < STREAMS; i++) etl_spool_stream_init(&s[i], sp);
    uint64_t seed = 7;
    size_t lens[STREAMS][RECORDS];
    uint8_t *buf = malloc(200000);
    for (int k = 0; k < RECORDS; k++) {
        for (int i = 0; i < STREAMS; i++) {
            uint64_t x = tu_rand(&seed);
            /* mostly small, a few past a 64 KiB chunk, a few empty */
            size_t n = x % 97 == 0 ? 70000 + x % 60000 : x % 13 == 0 ? 0 : x % 300;
            lens[i][k] = n;
            fill(buf, n, (uint64_t)k * STREAMS + (uint64_t)i);
            assert_true(etl_spool_append(&s[i], buf, n));
        }
    }
    for (int i = 0; i < STREAMS; i++) {
        for (int k = 0; k < RECORDS; k++) {
            size_t n;
            const uint8_t *p = etl_spool_next(&s[i], &n);
            assert_non_null(p);
            assert_int_equal(n, lens[i][k]);
            fill(buf, n, (uint64_t)k * STREAMS + (uint64_t)i);
            assert_memory_equal(p, buf, n);
        }
        size_t n;
        assert_null(etl_spool_next(&s[i], &n));
        etl_spool_stream_free(&s[i]);
    }
    free(buf);
    etl_spool_close(sp);
}

static void test_in_memory(void **state)
{
    (void)state;
    round_trip((size_t)1 << 40);
}

static void test_spilled(void **state)
{
    (void)state;
    round_trip(0);
}

static void test_some_spilled(void **state)
{
    (void)state;
    round_trip(1u << 20);
}

/*
 * The spill honours TMPDIR, and a spill that cannot be written says where and why
 * instead of losing records: every append after it fails, and the diagnostic names
 * the directory and the system's reason.
 */
static void test_spill_fails_loudly(void **state)
{
    (void)state;
    char dir[512];
    snprintf(dir, sizeof dir, "%s/no-such-dir-%d", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
    char *old = getenv("TMPDIR") ? strdup(getenv("TMPDIR")) : NULL;
    setenv("TMPDIR", dir, 1);
    etl_spool *sp = etl_spool_open(0);
    etl_spool_stream s;
    etl_spool_stream_init(&s, sp);
    uint8_t rec[1000] = {1};
    bool ok = true;
    for (int k = 0; k < 200 && ok; k++) ok = etl_spool_append(&s, rec, sizeof rec); /* past one chunk */
    assert_false(ok);
    assert_int_equal(etl_spool_error(sp), ENOENT);
    etl_diag d = {0};
    assert_int_equal(etl_spool_diag(sp, &d), ETL_E_IO);
    assert_non_null(strstr(d.msg, dir));
    assert_non_null(strstr(d.msg, strerror(ENOENT)));
    assert_false(etl_spool_append(&s, rec, sizeof rec));
    etl_spool_stream_free(&s);
    etl_spool_close(sp);
    /* A spool that spills where TMPDIR says: a directory that exists works. */
    if (old) setenv("TMPDIR", old, 1);
    else unsetenv("TMPDIR");
    free(old);
    sp = etl_spool_open(0);
    etl_spool_stream_init(&s, sp);
    for (int k = 0; k < 200; k++) assert_true(etl_spool_append(&s, rec, sizeof rec));
    assert_int_equal(etl_spool_error(sp), 0);
    etl_spool_stream_free(&s);
    etl_spool_close(sp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_in_memory),
        cmocka_unit_test(test_spilled),
        cmocka_unit_test(test_some_spilled),
        cmocka_unit_test(test_spill_fails_loudly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

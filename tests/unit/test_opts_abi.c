/*
 * test_opts_abi.c - the ABI rule of options structs (src/base/opts.h): the library
 * reads the caller's first sz bytes over its defaults, so a program built against
 * an older etlkit (a smaller struct) gets the defaults for the members it does not
 * know, whatever its memory holds past them, and one built against a newer etlkit
 * (a larger sz) is read as far as this version knows.
 */
#include <setjmp.h>
#include <stdlib.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/usage.h"
#include "etlkit/pmc.h"
#include "etlkit/symbols.h"
#include "base/opts.h"

/* An older version of a struct and this one: members added after the old sizeof (opts.h's rule). */
typedef struct v1 { size_t sz; int a; int pad; } v1;
typedef struct v2 { size_t sz; int a; int pad; int b; long c; } v2;

static void test_take(void **state)
{
    (void)state;
    v2 d = {0, 0, 0, 7, 9}; /* the library's defaults */
    struct { v1 old; unsigned char junk[32]; } caller;
    memset(&caller, 0xAB, sizeof caller);
    caller.old.sz = sizeof caller.old;
    caller.old.a = 3;
    etl_opts_take(&d, sizeof d, &caller.old);
    assert_int_equal(d.a, 3);
    assert_int_equal(d.b, 7); /* unknown to the caller: the default, not its junk */
    assert_int_equal(d.c, 9);
    assert_int_equal(d.sz, sizeof d);
    /* A newer caller: read as far as this version knows. */
    struct { v2 cur; int later; } newer = {{sizeof newer, 1, 0, 2, 3}, 4};
    v2 e = {0, 0, 0, 7, 9};
    etl_opts_take(&e, sizeof e, &newer);
    assert_int_equal(e.a, 1);
    assert_int_equal(e.b, 2);
    assert_int_equal(e.c, 3);
    /* None, or sz 0: every default. */
    v2 f = {0, 5, 0, 7, 9};
    etl_opts_take(&f, sizeof f, NULL);
    assert_int_equal(f.a, 5);
    v2 zero = {0, 1, 0, 1, 1};
    etl_opts_take(&f, sizeof f, &zero);
    assert_int_equal(f.a, 5);
    assert_int_equal(f.b, 7);
}

/* The rule where the library applies it: an older etl_usage_options without latency_budget and later members. */
static void test_usage_prefix(void **state)
{
    (void)state;
    etl_usage_options o;
    memset(&o, 0xFF, sizeof o);
    o.sz = offsetof(etl_usage_options, no_latency);
    o.v0 = 0;
    o.v1 = 0;
    o.longest = 3;
    o.interval_ns = 0;
    etl_usage u;
    assert_int_equal(etl_usage_init(&u, NULL, &o), ETL_OK);
    assert_int_equal(u.o.longest, 3);
    assert_false(u.o.no_latency);             /* past the caller's sz: the default, not 0xFF */
    assert_int_equal(u.o.latency_budget, 0);
    assert_int_equal(u.o.interval_processes, 0);
    etl_usage_free(&u);
}

/* An older etl_pmc_options that stops before the counter kinds: the kinds keep their defaults. */
static void test_pmc_prefix(void **state)
{
    (void)state;
    etl_pmc_options d;
    etl_pmc_options_init(&d);
    etl_pmc_options o;
    memset(&o, 0xFF, sizeof o);
    o.sz = sizeof o.sz;
    etl_pmc p;
    assert_int_equal(etl_pmc_init(&p, NULL, &o), ETL_OK);
    assert_memory_equal((const char *)&p.o + sizeof p.o.sz, (const char *)&d + sizeof d.sz, sizeof d - sizeof d.sz);
    etl_pmc_free(&p);
}

/*
 * etl_symbols_open_with (explore30 F5): read by the rule, never half a pointer. A sz of 12 ends inside path:
 * path is not read (the environment's, here none), where half its pointer was taken. lenient's 0 is a value
 * (base.h's zero exceptions): a zeroed struct fails on a folder that is not there, NULL options pass it over.
 */
static void test_symbols_prefix(void **state)
{
    (void)state;
    static const char missing[] = "/nonexistent-etlkit-symbols-dir";
    unsetenv("ETLKIT_SYMBOL_PATH");
    etl_symbols_options o;
    memset(&o, 0, sizeof o);
    o.sz = offsetof(etl_symbols_options, path) + 4;
    o.path = missing;
    etl_symbols *s = NULL;
    etl_diag d = {0};
    assert_int_equal(etl_symbols_open_with(&o, &s, &d), ETL_OK);
    assert_non_null(s);
    etl_symbols_close(s);
    /* A sz that ends before lenient: its default (true), the missing folder passed over. */
    o.sz = offsetof(etl_symbols_options, lenient);
    assert_int_equal(etl_symbols_open_with(&o, &s, &d), ETL_OK);
    etl_symbols_close(s);
    /* A zeroed struct with sz: lenient false, the open fails. */
    o.sz = sizeof o;
    assert_int_equal(etl_symbols_open_with(&o, &s, &d), ETL_E_IO);
    assert_null(s);
    /* NULL options: lenient, the environment's missing folder passed over. */
    setenv("ETLKIT_SYMBOL_PATH", missing, 1);
    assert_int_equal(etl_symbols_open_with(NULL, &s, &d), ETL_OK);
    etl_symbols_close(s);
    unsetenv("ETLKIT_SYMBOL_PATH");
    assert_int_equal(etl_symbols_open_with(NULL, NULL, &d), ETL_E_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_take),
        cmocka_unit_test(test_usage_prefix),
        cmocka_unit_test(test_pmc_prefix),
        cmocka_unit_test(test_symbols_prefix),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

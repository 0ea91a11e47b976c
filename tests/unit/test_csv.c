/*
 * test_csv.c - src/out/csv.c: RFC 4180 fields for data (the export's exact text) and
 * the spreadsheet variant of the reports (formulas neutralised, numbers kept), to a
 * stream and into a bounded buffer, and dump's quoted field in a line buffer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/platform.h" /* etl_memstream: open_memstream on both systems */
#include "out/csv.h"

static void sheet(const char *in, const char *want)
{
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    csv_sheet(f, in);
    etl_memstream_close(&ms);
    if (strcmp(p, want) != 0) fail_msg("sheet cell of '%s': '%s', expected '%s'", in, p, want);
    char b[256];
    n = csv_sheet_buf(b, 0, sizeof b, in);
    b[n] = 0;
    if (strcmp(b, want) != 0) fail_msg("sheet cell (buf) of '%s': '%s', expected '%s'", in, b, want);
    free(p);
}

static void csv_sheet_neutralises(void **state)
{
    (void)state;
    sheet("=cmd|' /C calc'!A0", "'=cmd|' /C calc'!A0");
    sheet("=cmd|' /C calc'!A0 (100)", "'=cmd|' /C calc'!A0 (100)");
    sheet("+1+1", "'+1+1");
    sheet("-2+3", "'-2+3");
    sheet("@SUM(A1)", "'@SUM(A1)");
    sheet("\tx", "'\tx");
    sheet("\rx", "\"'\rx\"");
    sheet("=a,b", "\"'=a,b\"");
    sheet("=say \"hi\"", "\"'=say \"\"hi\"\"\"");
    /* Numbers stay numbers, other text as it is, blank stays blank. */
    sheet("-5", "-5");
    sheet("-1.25", "-1.25");
    sheet("+3", "+3");
    sheet("-", "-"); /* the reports' "none" */
    sheet("12", "12");
    sheet("svchost.exe (500)", "svchost.exe (500)");
    sheet("a,b", "\"a,b\"");
    sheet("", "");
}

static void csv_export_exact(void **state)
{
    (void)state;
    struct {
        const char *in, *out;
    } c[] = {{"=cmd|' /C calc'!A0", "=cmd|' /C calc'!A0"}, {"-x", "-x"}, {"", "\"\""}, {"a\"b", "\"a\"\"b\""}};
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        char *p = NULL;
        size_t n = 0;
        etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
        csv_field(f, c[i].in);
        etl_memstream_close(&ms);
        if (strcmp(p, c[i].out) != 0) fail_msg("export cell of '%s': '%s', expected '%s'", c[i].in, p, c[i].out);
        free(p);
    }
}

static void csv_buf_never_overruns(void **state)
{
    (void)state;
    char b[16];
    memset(b, 'X', sizeof b);
    /* Plain: cut two short of cap (room for quotes the quoted form would need). */
    size_t n = csv_field_buf(b, 0, 8, "abcdefghij");
    assert_int_equal(n, 6);
    assert_memory_equal(b, "abcdef", 6);
    /* Quoted: the closing quote still fits, nothing past cap is written. */
    n = csv_field_buf(b, 0, 8, "a\"b\"c,d,e");
    assert_true(n <= 8);
    assert_int_equal(b[0], '"');
    assert_int_equal(b[n - 1], '"');
    assert_int_equal(b[8], 'X');
    n = csv_field_buf(b, 0, sizeof b, "x\"y");
    assert_int_equal(n, 6);
    assert_memory_equal(b, "\"x\"\"y\"", 6);
    /* An empty sheet cell stays blank; an empty data field through the buffer form adds nothing either. */
    assert_int_equal(csv_sheet_buf(b, 3, sizeof b, ""), 3);
}

static void csv_quoted_in_a_line(void **state)
{
    (void)state;
    char b[32];
    ln_buf l = {b, 0, sizeof b, 1, 1, 0};
    ln_raw(&l, "1,", 2);
    ln_csv_quoted(&l, "{\"a\":1}");
    assert_false(l.cut);
    assert_int_equal(l.n, 2 + 11);
    assert_memory_equal(b, "1,\"{\"\"a\"\":1}\"", 13);
    /* Always quoted, even with nothing to quote. */
    ln_csv_quoted(&l, "{}");
    assert_memory_equal(b + 13, "\"{}\"", 4);
    /* A field that does not fit whole cuts the line, as ln_raw does. */
    ln_buf s = {b, 0, 8, 1, 1, 0};
    ln_csv_quoted(&s, "\"\"\"");
    assert_true(s.cut);
    assert_int_equal(s.n, 0);
    s.cut = 0;
    ln_csv_quoted(&s, "\"\"");
    assert_false(s.cut);
    assert_int_equal(s.n, 6);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(csv_sheet_neutralises), cmocka_unit_test(csv_export_exact),
        cmocka_unit_test(csv_buf_never_overruns), cmocka_unit_test(csv_quoted_in_a_line),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

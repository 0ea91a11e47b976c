/*
 * test_table.c - src/out/table.c: the report tables, aligned on the escaped text of
 * names (numbers right-aligned), and their CSV form.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/platform.h" /* etl_memstream: open_memstream on both systems */
#include "out/table.h"

static void table_aligns_escaped(void **state)
{
    (void)state;
    static const char *const head[] = {"Process", "=PID"};
    tbl t;
    assert_int_equal(tbl_init(&t, 2, head), 0);
    const char *r1[] = {"e\x1b[31mv\a", "300"};
    const char *r2[] = {"\xc3\xa9t\xc3\xa9\xe2\x80\xae", "7"};
    const char *r3[] = {"plain", "12345"};
    tbl_row(&t, r1);
    tbl_row(&t, r2);
    tbl_row(&t, r3);
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    tbl_print_text(&t, f, "");
    etl_memstream_close(&ms);
    tbl_free(&t);
    /* Every line ends at the same column (numbers right-aligned), counted in characters. */
    size_t want = 0, lines = 0;
    for (char *ln = strtok(p, "\n"); ln; ln = strtok(NULL, "\n"), lines++) {
        size_t cols = 0;
        for (const unsigned char *q = (const unsigned char *)ln; *q; q++) {
            assert_true(*q >= 0x20 && *q != 0x7F);
            cols += (*q & 0xC0) != 0x80;
        }
        if (!want) want = cols;
        if (cols != want) fail_msg("line %zu is %zu columns wide, not %zu: '%s'", lines, cols, want, ln);
    }
    assert_int_equal(lines, 4);
    free(p);
}

static void table_csv_form(void **state)
{
    (void)state;
    tbl t;
    static const char *const head[] = {"Process", "=Count"};
    assert_int_equal(tbl_init(&t, 2, head), 0);
    const char *r1[] = {"=evil", "3"};
    const char *r2[] = {"a,b", NULL};
    assert_int_equal(tbl_row(&t, r1), 0);
    assert_int_equal(tbl_row(&t, r2), 0);
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    tbl_print_sheet(&t, f);
    etl_memstream_close(&ms);
    tbl_free(&t);
    /* The BOM, the header without its alignment mark, the formula neutralised, the comma quoted, NULL blank, CRLF. */
    assert_string_equal(p, "\xEF\xBB\xBF" "Process,Count\r\n'=evil,3\r\n\"a,b\",\r\n");
    free(p);
    assert_int_equal(tbl_failed(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table_aligns_escaped),
        cmocka_unit_test(table_csv_form),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

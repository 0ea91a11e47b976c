/*
 * test_text.c - src/out/text.c: names from a trace for a terminal (text_str,
 * text_str_buf, text_width, text_name), the escaping of issue 18.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/platform.h" /* etl_memstream: open_memstream on both systems */
#include "out/text.h"
#include "base/textsafe.h"

/* text_str_buf of s, NUL-terminated, in a static buffer. */
static const char *esc(const char *s)
{
    static char b[1024];
    size_t n = text_str_buf(b, 0, sizeof b - 1, s, NULL);
    b[n] = 0;
    return b;
}

/* What text_str writes for s. */
static char *esc_file(const char *s)
{
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    text_str(f, s);
    etl_memstream_close(&ms);
    return p;
}

static void check(const char *in, const char *want)
{
    if (strcmp(esc(in), want) != 0) fail_msg("text of '%s': '%s', expected '%s'", in, esc(in), want);
    char *f = esc_file(in);
    if (strcmp(f, want) != 0) fail_msg("text_str of '%s': '%s', expected '%s'", in, f, want);
    free(f);
    /* The width is the escaped text's, one column per character. */
    size_t cols = 0;
    for (const char *p = want; *p; p++) cols += ((unsigned char)*p & 0xC0) != 0x80;
    if (text_width(in) != cols) fail_msg("width of '%s': %zu, expected %zu", in, text_width(in), cols);
    /* Nothing but printable ASCII and printable UTF-8 is left. */
    for (const unsigned char *p = (const unsigned char *)want; *p; p++) assert_true(*p >= 0x20 && *p != 0x7F);
}

static void text_c0_and_del(void **state)
{
    (void)state;
    check("a\x1b[31mred", "a\\x1b[31mred"); /* ESC */
    check("bell\a", "bell\\x07");
    check("cr\rlf\nend", "cr\\x0dlf\\x0aend");
    check("tab\there", "tab\\x09here");
    check("del\x7f", "del\\x7f");
    check("\x01", "\\x01");
    check("plain ASCII, as it is: ~!@#$%^&*()", "plain ASCII, as it is: ~!@#$%^&*()");
    check("", "");
}

static void text_c1_separators_bidi(void **state)
{
    (void)state;
    check("\xc2\x80", "\\u0080");
    check("csi\xc2\x9b[2J", "csi\\u009b[2J"); /* U+009B, what a Latin-1 0x9B becomes */
    check("nel\xc2\x85", "nel\\u0085");
    check("\xc2\x9f", "\\u009f");
    check("ls\xe2\x80\xa8ps\xe2\x80\xa9", "ls\\u2028ps\\u2029");
    check("\xe2\x80\xaa\xe2\x80\xab\xe2\x80\xac\xe2\x80\xad\xe2\x80\xae", "\\u202a\\u202b\\u202c\\u202d\\u202e");
    check("\xe2\x81\xa6\xe2\x81\xa7\xe2\x81\xa8\xe2\x81\xa9", "\\u2066\\u2067\\u2068\\u2069");
    check("\xe2\x80\x8e\xe2\x80\x8f\xd8\x9c", "\\u200e\\u200f\\u061c"); /* LRM, RLM, ALM */
    /* Printable neighbours stay: U+00A0, U+00E9, U+2027, U+202F, U+2065, U+206A, CJK, an emoji. */
    check("\xc2\xa0\xc3\xa9\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xe6\x97\xa5\xf0\x9f\x98\x80",
          "\xc2\xa0\xc3\xa9\xe2\x80\xa7\xe2\x80\xaf\xe2\x81\xa5\xe2\x81\xaa\xe6\x97\xa5\xf0\x9f\x98\x80");
}

static void text_invalid_utf8(void **state)
{
    (void)state;
    check("\x9b", "\\x9b");                  /* a lone C1 byte: a terminal may read it as CSI */
    check("\xc0\x80", "\\xc0\\x80");         /* overlong NUL */
    check("\xe0\x80\xaf", "\\xe0\\x80\\xaf"); /* overlong */
    check("\xed\xa0\x80", "\\xed\\xa0\\x80"); /* a surrogate */
    check("\xf4\x90\x80\x80", "\\xf4\\x90\\x80\\x80"); /* past U+10FFFF */
    check("\xf5", "\\xf5");
    check("cut\xe2\x80", "cut\\xe2\\x80");   /* a sequence the end cuts */
    check("\xc3(", "\\xc3(");
}

static void text_buf_cuts_whole(void **state)
{
    (void)state;
    char b[16];
    int cut = 0;
    /* "ab" fits, the escape of ESC (4 bytes) does not: it is left out whole. */
    size_t n = text_str_buf(b, 0, 5, "ab\x1b", &cut);
    assert_int_equal(n, 2);
    assert_int_equal(cut, 1);
    cut = 0;
    n = text_str_buf(b, 0, 6, "ab\x1b", &cut);
    assert_int_equal(n, 6);
    assert_memory_equal(b, "ab\\x1b", 6);
    assert_int_equal(cut, 0);
    /* A character of several bytes is not split. */
    cut = 0;
    n = text_str_buf(b, 0, 2, "a\xc3\xa9", &cut);
    assert_int_equal(n, 1);
    assert_int_equal(cut, 1);
    /* Appends after len. */
    memcpy(b, "x=", 2);
    n = text_str_buf(b, 2, sizeof b, "\a", NULL);
    assert_int_equal(n, 6);
    assert_memory_equal(b, "x=\\x07", 6);
}

static void names_empty_is_quotes(void **state)
{
    (void)state;
    assert_string_equal(text_name(""), "\"\"");
    assert_string_equal(text_name("svchost.exe"), "svchost.exe");
}

/* A name cut for a length limit (the Perfetto writer's interned strings) keeps whole characters: one max would split
 * goes, and so does one an earlier cut left without its last bytes; what fits is kept, invalid bytes as they were. */
static void text_cut_whole(void **state)
{
    (void)state;
    assert_int_equal(etl_text_cut("abc", 10), 3);
    assert_int_equal(etl_text_cut("abc", 2), 2);
    assert_int_equal(etl_text_cut("a\xc3\xa9", 2), 1);        /* é would be split */
    assert_int_equal(etl_text_cut("a\xc3\xa9", 3), 3);
    assert_int_equal(etl_text_cut("\xe2\x82\xac\xe2\x82\xac", 5), 3); /* the second € would be split */
    assert_int_equal(etl_text_cut("\xf0\x9f\x98\x80", 3), 0);
    assert_int_equal(etl_text_cut("ab\xe2\x82", 10), 2);       /* € cut short by an snprintf: left out */
    assert_int_equal(etl_text_cut("ab\xc3", 10), 2);
    assert_int_equal(etl_text_cut("a\xff" "b", 10), 3);            /* not UTF-8, but not a cut: as it was */
    assert_int_equal(etl_text_cut("a\xc3zb", 10), 4);
    assert_int_equal(etl_text_cut("", 10), 0);
    assert_int_equal(etl_text_cut("abc", 0), 0);
}

/* The column where the second column starts, on each line of an aligned table. */





int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(text_c0_and_del),        cmocka_unit_test(text_c1_separators_bidi),
        cmocka_unit_test(text_invalid_utf8),      cmocka_unit_test(text_buf_cuts_whole),
        cmocka_unit_test(names_empty_is_quotes),  cmocka_unit_test(text_cut_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

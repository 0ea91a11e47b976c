/*
 * test_json.c - src/out/json.c: the one JSON string escaper (valid UTF-8 whatever the
 * input, controls escaped, cut at a character boundary with U+2026), the streaming
 * writer jw and the line writer ln (JSON and key=value text), the <script>-safe copy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/platform.h" /* etl_memstream: open_memstream on both systems */
#include "out/json.h"

static void json_escapes_controls(void **state)
{
    (void)state;
    char b[256];
    struct {
        const char *in, *out;
    } c[] = {
        {"a\x1b\a\r\n", "\"a\\u001b\\u0007\\u000d\\u000a\""},
        {"c1\xc2\x9b\xc2\x85", "\"c1\\u009b\\u0085\""},
        {"\xe2\x80\xae\xe2\x81\xa6\xe2\x80\xa8", "\"\\u202e\\u2066\\u2028\""},
        /* Each byte that does not start valid UTF-8 is one U+FFFD: 9b; c0 80 (overlong); ed a0 80 (a surrogate). */
        {"bad\x9b\xc0\x80\xed\xa0\x80", "\"bad\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\""},
        {"q\"\\", "\"q\\\"\\\\\""},
        {"\xc3\xa9\xf0\x9f\x98\x80", "\"\xc3\xa9\xf0\x9f\x98\x80\""},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        size_t n = json_str_buf(b, 0, sizeof b, c[i].in);
        b[n] = 0;
        if (strcmp(b, c[i].out) != 0) fail_msg("JSON of case %zu: %s, expected %s", i, b, c[i].out);
    }
}

/* json_str_buf of s into cap bytes, NUL-terminated in a static buffer. */
static const char *jcap(const char *s, size_t cap)
{
    static char b[256];
    memset(b, 'X', sizeof b);
    size_t n = json_str_buf(b, 0, cap, s);
    assert_true(n <= cap);
    b[n] = 0;
    return b;
}

static void json_cut_at_character(void **state)
{
    (void)state;
    /* Fits: as it is. */
    assert_string_equal(jcap("abc", 5 + 4), "\"abc\"");
    /* Does not fit: cut, then U+2026 and the closing quote, never past cap. */
    assert_string_equal(jcap("abcdefgh", 10), "\"abcde\xe2\x80\xa6\"");
    /* A 4-byte character is not split: it goes whole or not at all. */
    const char *r = jcap("ab\xf0\x9f\x98\x80zz", 9);
    assert_string_equal(r, "\"ab\xe2\x80\xa6\"");
    /* An escape is not split either. */
    r = jcap("a\x01" "bcdef", 10);
    assert_string_equal(r, "\"a\xe2\x80\xa6\"");
    /* No room even for the quotes: nothing. */
    char b[4] = "zzz";
    assert_int_equal(json_str_buf(b, 0, 1, "x"), 0);
    /* Appends after len. */
    memcpy(b, "k:", 2);
    assert_int_equal(json_str_buf(b, 2, 4, ""), 4);
    assert_memory_equal(b, "k:\"\"", 4);
}

static void json_stream_is_the_same_escape(void **state)
{
    (void)state;
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    json_str(f, "a\xff\xe2\x80\xa8<");
    etl_memstream_close(&ms);
    assert_string_equal(p, "\"a\xef\xbf\xbd\\u2028<\"");
    free(p);
}

static void jw_document(void **state)
{
    (void)state;
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    jw w;
    jw_init(&w, f);
    jw_obj(&w, NULL);
    jw_u64(&w, "zero", 0);
    jw_u64(&w, "max", UINT64_MAX);
    jw_i64(&w, "min", INT64_MIN);
    jw_str(&w, "s", "x\"y");
    jw_str(&w, "null_str", NULL);
    jw_null(&w, "n");
    jw_bool(&w, "t", 1);
    jw_bool(&w, "f", 0);
    jw_fixed(&w, "fx", -12345, 3);
    jw_arr(&w, "a");
    jw_u64(&w, NULL, 1);
    jw_obj(&w, NULL);
    jw_obj_end(&w);
    jw_arr(&w, NULL);
    jw_arr_end(&w);
    jw_arr_end(&w);
    jw_obj(&w, "o");
    jw_obj_end(&w);
    jw_obj_end(&w);
    jw_end(&w);
    etl_memstream_close(&ms);
    assert_string_equal(p, "{\"zero\":0,\"max\":18446744073709551615,\"min\":-9223372036854775808,"
                           "\"s\":\"x\\\"y\",\"null_str\":\"\",\"n\":null,\"t\":true,\"f\":false,"
                           "\"fx\":-12.345,\"a\":[1,{},[]],\"o\":{}}\n");
    free(p);
}

static void ln_json_line(void **state)
{
    (void)state;
    char b[256];
    ln_buf l = {b, 0, sizeof b, 1, 1, 0};
    ln_raw(&l, "{", 1);
    ln_u(&l, "u", UINT64_MAX);
    ln_i(&l, "i", INT64_MIN);
    ln_i(&l, "z", 0);
    ln_s(&l, "s", "a b\x1b");
    ln_bool(&l, "t", 1);
    ln_hex(&l, "h", 0xfffff80012345678ull);
    ln_hex(&l, "h0", 0);
    ln_arr(&l, "p");
    ln_u(&l, NULL, 1);
    ln_u(&l, NULL, 22);
    ln_arr_end(&l);
    ln_open(&l, "o");
    ln_u(&l, "k", 5);
    ln_close(&l);
    ln_raw(&l, "}", 1);
    assert_false(l.cut);
    b[l.n] = 0;
    assert_string_equal(b, "{\"u\":18446744073709551615,\"i\":-9223372036854775808,\"z\":0,\"s\":\"a b\\u001b\","
                           "\"t\":true,\"h\":\"0xfffff80012345678\",\"h0\":\"0x0\",\"p\":[1,22],\"o\":{\"k\":5}}");
}

static void ln_text_line(void **state)
{
    (void)state;
    char b[256];
    ln_buf l = {b, 0, sizeof b, 0, 1, 0};
    ln_u(&l, "Pid", 4);
    ln_i(&l, "Prio", -2);
    ln_s(&l, "Name", "svc host\x1b");
    ln_s(&l, "Empty", "");
    ln_s(&l, "Plain", "x.exe");
    ln_open(&l, "o");
    ln_u(&l, "k", 1);
    ln_close(&l);
    b[l.n] = 0;
    assert_string_equal(b, " Pid=4 Prio=-2 Name=\"svc host\\x1b\" Empty=\"\" Plain=x.exe o={ k=1 }");
}

static void ln_cuts_never_overruns(void **state)
{
    (void)state;
    char b[64];
    memset(b, 'X', sizeof b);
    ln_buf l = {b, 0, 32, 1, 1, 0};
    ln_u(&l, "a", 1);
    assert_false(l.cut);
    ln_u(&l, "long_key", UINT64_MAX); /* its key fits, the number (22 bytes kept) not */
    assert_true(l.cut);
    assert_true(l.n < 32);
    for (size_t i = 32; i < sizeof b; i++) assert_int_equal(b[i], 'X');
    /* A long string value is cut, not the rest of a long line: it leaves 1 KiB. */
    static char big[8192], s[7600];
    memset(s, 'a', sizeof s - 1);
    s[sizeof s - 1] = 0;
    ln_buf m = {big, 0, sizeof big, 1, 1, 0};
    ln_s(&m, "s", s);
    assert_false(m.cut);
    assert_true(m.n <= sizeof big - 1024);
    assert_memory_equal(big + m.n - 4, "\xe2\x80\xa6\"", 4);
}

static void script_safe_copy(void **state)
{
    (void)state;
    const char *doc = "{\"a\":\"</script><b>&amp;\"}";
    char *p = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &p, &n);
    json_script_safe(f, doc, strlen(doc));
    etl_memstream_close(&ms);
    assert_string_equal(p, "{\"a\":\"\\u003c/script\\u003e\\u003cb\\u003e\\u0026amp;\"}");
    free(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(json_escapes_controls),  cmocka_unit_test(json_cut_at_character),
        cmocka_unit_test(json_stream_is_the_same_escape), cmocka_unit_test(jw_document),
        cmocka_unit_test(ln_json_line),           cmocka_unit_test(ln_text_line),
        cmocka_unit_test(ln_cuts_never_overruns), cmocka_unit_test(script_safe_copy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

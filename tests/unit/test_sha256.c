/*
 * test_sha256.c - base/sha256 against the FIPS 180-4 examples (NIST's "abc", the
 * 448-bit two-block message, a million 'a's) and the empty message, each fed
 * whole and in pieces of every size from 1 to 130 bytes (block boundaries and the
 * padding's 55/56-byte edge crossed every way); and the dataset IDs
 * (etl_dataset_trace_id) made from paths.
 */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "base/sha256.h"
#include "etlkit/export.h"

static void hex_of(const void *p, size_t n, size_t piece, char out[65])
{
    etl_sha256 s;
    etl_sha256_init(&s);
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i += piece) etl_sha256_update(&s, b + i, n - i < piece ? n - i : piece);
    uint8_t d[32];
    etl_sha256_final(&s, d);
    etl_sha256_hex(d, out);
}

static void test_sha256_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *want;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrst"
         "nopqrstu",
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char got[65];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = strlen(v[i].msg);
        for (size_t piece = 1; piece <= 130; piece++) {
            hex_of(v[i].msg, n, piece, got);
            assert_string_equal(got, v[i].want);
        }
    }
    /* One million 'a's (FIPS 180-2 appendix B.3), in uneven pieces. */
    char *a = malloc(1000000);
    assert_non_null(a);
    memset(a, 'a', 1000000);
    hex_of(a, 1000000, 4099, got);
    assert_string_equal(got, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* Every length around the padding's edges: whole and byte by byte agree. */
static void test_sha256_pieces(void **state)
{
    (void)state;
    unsigned char buf[300];
    uint64_t rs = 7;
    for (size_t i = 0; i < sizeof buf; i++) buf[i] = (unsigned char)tu_rand(&rs);
    for (size_t n = 0; n <= sizeof buf; n++) {
        char whole[65], bytes[65];
        hex_of(buf, n, n ? n : 1, whole);
        hex_of(buf, n, 1, bytes);
        assert_string_equal(whole, bytes);
    }
}

static void test_dataset_trace_id(void **state)
{
    (void)state;
    static const struct {
        const char *path, *want;
    } v[] = {
        {"a.etl", "a"},
        {"dir/sub/Build-1234_x64.ETL", "Build-1234_x64"},
        {"trace.etl.etl", "trace.etl"},
        {"no_extension", "no_extension"},
        {"with space & = signs.etl", "with_space_____signs"},
        {"x/trace_id=7.etl", "trace_id_7"},
        {".hidden.etl", "_hidden"},
        {"caf\xc3\xa9.etl", "caf__"},
        {"dir/.etl", "trace"},
        {"dir/", "trace"},
        {"a.b.c", "a.b.c"},
    };
    char out[160];
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++) {
        size_t n = etl_dataset_trace_id(v[i].path, out, sizeof out);
        assert_string_equal(out, v[i].want);
        assert_int_equal(n, strlen(v[i].want));
    }
    /* Cut to the room given. */
    char small[4];
    assert_int_equal(etl_dataset_trace_id("abcdefgh.etl", small, sizeof small), 3);
    assert_string_equal(small, "abc");
    assert_int_equal(etl_dataset_trace_id("", small, sizeof small), 3);
    assert_string_equal(small, "tra");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sha256_vectors),
        cmocka_unit_test(test_sha256_pieces),
        cmocka_unit_test(test_dataset_trace_id),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

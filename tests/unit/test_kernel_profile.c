/*
 * test_kernel_profile.c - the profiling codecs of kernel.h (perfinfo.c,
 * stackwalk.c, image.c) on hand-built payloads: every field at its offset, 32-
 * and 64-bit, every truncation length (on exact heap copies, so ASan sees an
 * overrun), encode -> decode round trips, size queries and range errors.
 */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/kernel.h"

static const unsigned ptr_sizes[2] = {4, 8};

static etl_span span(const uint8_t *p, size_t n)
{
    etl_span s = {p, n};
    return s;
}

static uint8_t *exact_copy(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    assert_non_null(c);
    if (n) memcpy(c, p, n);
    return c;
}

static void put(uint8_t *p, uint64_t v, unsigned n)
{
    for (unsigned i = 0; i < n; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t rand_ptr(uint64_t *r, unsigned ptr_size)
{
    uint64_t v = tu_rand(r);
    return ptr_size == 8 ? v : (uint32_t)v;
}

/* ------------------------------------------------------------ SampledProfile */

static void test_sampled_profile_fields(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        uint8_t b[16];
        uint64_t ip = ps == 8 ? 0xFFFFF80021434313ull : 0x82434313u;
        put(b, ip, ps);
        put(b + ps, 0xEC4, 4);
        put(b + ps + 4, 3, 2);
        b[ps + 6] = 0x5B; /* Priority 11, ExecutingDpc, ExecutingIsr */
        b[ps + 7] = 0x07;
        for (size_t n = 0; n <= ps + 8; n++) {
            uint8_t *c = exact_copy(b, n);
            etl_sampled_profile s;
            etl_status st = etl_sampled_profile_decode(span(c, n), ps, &s);
            if (n < ps + 8) {
                assert_int_equal(st, ETL_E_TRUNCATED);
            } else {
                assert_int_equal(st, ETL_OK);
                assert_true(s.instruction_pointer == ip);
                assert_int_equal(s.thread_id, 0xEC4);
                assert_int_equal(s.count, 3);
                assert_int_equal(s.flags, 0x5B);
                assert_int_equal(s.flags >> 3, 11);
                assert_int_equal(s.rank, 7);
                uint8_t o[16];
                size_t len;
                assert_int_equal(etl_sampled_profile_encode(&s, ps, o, sizeof o, &len), ETL_OK);
                assert_int_equal(len, ps + 8);
                assert_memory_equal(o, b, len);
                assert_int_equal(etl_sampled_profile_encode(&s, ps, NULL, 0, &len), ETL_E_RANGE);
                assert_int_equal(len, ps + 8);
            }
            free(c);
        }
    }
    etl_sampled_profile s = {.instruction_pointer = 0x100000000ull};
    uint8_t o[16];
    size_t len = 99;
    assert_int_equal(etl_sampled_profile_encode(&s, 4, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
    assert_int_equal(etl_sampled_profile_decode(span(o, 16), 5, &s), ETL_E_INVALID_ARG);
    assert_int_equal(etl_sampled_profile_decode(span(o, 16), 8, NULL), ETL_E_INVALID_ARG);
}

static void test_pmc_sample(void **state)
{
    (void)state;
    uint64_t r = 7;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        for (int i = 0; i < 200; i++) {
            etl_pmc_sample a = {rand_ptr(&r, ps), (uint32_t)tu_rand(&r), (uint16_t)tu_rand(&r),
                                (uint16_t)tu_rand(&r)};
            uint8_t o[16], *c;
            size_t len;
            assert_int_equal(etl_pmc_sample_encode(&a, ps, o, sizeof o, &len), ETL_OK);
            assert_int_equal(len, ps + 8);
            for (size_t n = 0; n <= len; n++) {
                c = exact_copy(o, n);
                etl_pmc_sample b;
                etl_status st = etl_pmc_sample_decode(span(c, n), ps, &b);
                assert_int_equal(st, n < len ? ETL_E_TRUNCATED : ETL_OK);
                if (st == ETL_OK) assert_memory_equal(&a, &b, sizeof a);
                free(c);
            }
            /* ProfileSource right after ThreadId */
            assert_int_equal(o[ps + 4] | o[ps + 5] << 8, a.profile_source);
        }
    }
}

static void test_profile_interval(void **state)
{
    (void)state;
    /* The CollectionStart record of perfview-x64-compressed.etl (hook 0x0F49, v3). */
    static const uint8_t rec[24] = {0, 0, 0, 0, 0x10, 0x27, 0, 0, 0x10, 0x27, 0, 0,
                                    'T', 0, 'i', 0, 'm', 0, 'e', 0, 'r', 0, 0, 0};
    for (size_t n = 0; n <= sizeof rec; n++) {
        uint8_t *c = exact_copy(rec, n);
        etl_profile_interval p;
        etl_status st = etl_profile_interval_decode(span(c, n), &p);
        if (n < 12) {
            assert_int_equal(st, ETL_E_TRUNCATED);
        } else {
            assert_int_equal(st, ETL_OK);
            assert_int_equal(p.source, 0);
            assert_int_equal(p.new_interval, 10000);
            assert_int_equal(p.old_interval, 10000);
            assert_int_equal(p.has_name, n > 12);
            if (n == sizeof rec) {
                assert_true(p.source_name.terminated);
                assert_int_equal(p.source_name.text.n, 10);
                assert_memory_equal(p.source_name.text.p, rec + 12, 10);
                uint8_t o[32];
                size_t len;
                assert_int_equal(etl_profile_interval_encode(&p, o, sizeof o, &len), ETL_OK);
                assert_int_equal(len, sizeof rec);
                assert_memory_equal(o, rec, len);
            }
        }
        free(c);
    }
    /* v2-style: no name. */
    etl_profile_interval p = {1, 5000, 10000, false, {{NULL, 0}, false}};
    uint8_t o[16];
    size_t len;
    assert_int_equal(etl_profile_interval_encode(&p, o, sizeof o, &len), ETL_OK);
    assert_int_equal(len, 12);
    etl_profile_interval q;
    assert_int_equal(etl_profile_interval_decode(span(o, len), &q), ETL_OK);
    assert_false(q.has_name);
    assert_int_equal(q.source, 1);
    assert_int_equal(q.new_interval, 5000);
    assert_int_equal(etl_profile_interval_encode(&p, NULL, 0, &len), ETL_E_RANGE);
    assert_int_equal(len, 12);
}

/* ------------------------------------------------------------ StackWalk */

static void test_stackwalk(void **state)
{
    (void)state;
    uint64_t r = 11;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        for (uint32_t nf = 0; nf <= ETL_STACK_MAX_FRAMES; nf += (nf < 4 ? 1 : 47)) {
            uint64_t frames[ETL_STACK_MAX_FRAMES];
            for (uint32_t i = 0; i < nf; i++) frames[i] = rand_ptr(&r, ps);
            etl_stackwalk a = {tu_rand(&r), (uint32_t)tu_rand(&r), (uint32_t)tu_rand(&r), NULL, nf, (uint8_t)ps};
            uint8_t o[16 + 8 * ETL_STACK_MAX_FRAMES];
            size_t len;
            assert_int_equal(etl_stackwalk_encode(&a, frames, ps, NULL, 0, &len), ETL_E_RANGE);
            assert_int_equal(len, 16 + (size_t)nf * ps);
            assert_int_equal(etl_stackwalk_encode(&a, frames, ps, o, sizeof o, &len), ETL_OK);
            assert_int_equal(len, 16 + (size_t)nf * ps);
            /* EventTimeStamp, StackProcess, StackThread at 0, 8, 12 */
            uint64_t ts = 0;
            for (int i = 7; i >= 0; i--) ts = ts << 8 | o[i];
            assert_true(ts == a.event_timestamp);
            for (size_t n = 0; n <= len; n++) {
                uint8_t *c = exact_copy(o, n);
                etl_stackwalk b;
                etl_status st = etl_stackwalk_decode(span(c, n), ps, &b);
                if (n < 16) {
                    assert_int_equal(st, ETL_E_TRUNCATED);
                } else {
                    assert_int_equal(st, ETL_OK);
                    assert_true(b.event_timestamp == a.event_timestamp);
                    assert_int_equal(b.stack_process, a.stack_process);
                    assert_int_equal(b.stack_thread, a.stack_thread);
                    assert_int_equal(b.ptr_size, ps);
                    assert_int_equal(b.frame_count, (n - 16) / ps); /* a partial frame is ignored */
                    for (uint32_t i = 0; i < b.frame_count; i++)
                        assert_true(etl_stack_frame(b.frames, ps, i) == frames[i]);
                    if (b.frame_count) assert_ptr_equal(b.frames, c + 16);
                }
                free(c);
            }
        }
        /* More than 192 frames: the first 192 count. */
        uint8_t big[16 + 8 * 200];
        memset(big, 0xAB, sizeof big);
        etl_stackwalk b;
        assert_int_equal(etl_stackwalk_decode(span(big, 16 + 200 * (size_t)ps), ps, &b), ETL_OK);
        assert_int_equal(b.frame_count, ETL_STACK_MAX_FRAMES);
        uint64_t f[ETL_STACK_MAX_FRAMES + 1] = {0};
        etl_stackwalk too = {0, 0, 0, NULL, ETL_STACK_MAX_FRAMES + 1, (uint8_t)ps};
        size_t len = 5;
        assert_int_equal(etl_stackwalk_encode(&too, f, ps, big, sizeof big, &len), ETL_E_RANGE);
        assert_int_equal(len, 0);
    }
    uint64_t wide = 0x100000000ull;
    etl_stackwalk one = {0, 0, 0, NULL, 1, 4};
    uint8_t o[32];
    size_t len;
    assert_int_equal(etl_stackwalk_encode(&one, &wide, 4, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(etl_stackwalk_encode(&one, NULL, 4, o, sizeof o, &len), ETL_E_RANGE);
}

static void test_stack_key_ref(void **state)
{
    (void)state;
    /* The first 0x1825 record of perfview-x64-compressed.etl. */
    static const uint8_t rec[24] = {0x67, 0x41, 0xd1, 0x73, 0, 0, 0, 0, 0x94, 0x0f, 0, 0, 0xc4, 0x0e, 0, 0,
                                    0x90, 0xed, 0x43, 0x03, 0x83, 0xfa, 0xff, 0xff};
    for (size_t n = 0; n <= sizeof rec; n++) {
        uint8_t *c = exact_copy(rec, n);
        etl_stack_key_ref k;
        etl_status st = etl_stack_key_ref_decode(span(c, n), 8, &k);
        assert_int_equal(st, n < 24 ? ETL_E_TRUNCATED : ETL_OK);
        if (st == ETL_OK) {
            assert_true(k.event_timestamp == 0x73d14167ull);
            assert_int_equal(k.stack_process, 0xF94);
            assert_int_equal(k.stack_thread, 0xEC4);
            assert_true(k.stack_key == 0xFFFFFA830343ED90ull);
            uint8_t o[24];
            size_t len;
            assert_int_equal(etl_stack_key_ref_encode(&k, 8, o, sizeof o, &len), ETL_OK);
            assert_int_equal(len, 24);
            assert_memory_equal(o, rec, 24);
            /* The key does not fit 32 bits. */
            assert_int_equal(etl_stack_key_ref_encode(&k, 4, o, sizeof o, &len), ETL_E_RANGE);
        }
        free(c);
    }
    uint64_t r = 3;
    etl_stack_key_ref a = {tu_rand(&r), 4, 8, 0x8badf00d}, b;
    uint8_t o[24];
    size_t len;
    assert_int_equal(etl_stack_key_ref_encode(&a, 4, o, sizeof o, &len), ETL_OK);
    assert_int_equal(len, 20);
    for (size_t n = 0; n <= len; n++) {
        uint8_t *c = exact_copy(o, n);
        etl_status st = etl_stack_key_ref_decode(span(c, n), 4, &b);
        assert_int_equal(st, n < 20 ? ETL_E_TRUNCATED : ETL_OK);
        if (st == ETL_OK) assert_memory_equal(&a, &b, sizeof a);
        free(c);
    }
    assert_int_equal(etl_stack_key_ref_encode(&a, 4, o, 19, &len), ETL_E_RANGE);
    assert_int_equal(len, 20);
}

static void test_stack_key_def(void **state)
{
    (void)state;
    uint64_t r = 5;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        for (uint32_t nf = 0; nf < 40; nf += 13) {
            uint64_t frames[40];
            for (uint32_t i = 0; i < nf; i++) frames[i] = rand_ptr(&r, ps);
            etl_stack_key_def a = {rand_ptr(&r, ps), NULL, nf, (uint8_t)ps};
            uint8_t o[8 + 8 * 40];
            size_t len;
            assert_int_equal(etl_stack_key_def_encode(&a, frames, ps, o, sizeof o, &len), ETL_OK);
            assert_int_equal(len, ps + (size_t)nf * ps);
            for (size_t n = 0; n <= len; n++) {
                uint8_t *c = exact_copy(o, n);
                etl_stack_key_def b;
                etl_status st = etl_stack_key_def_decode(span(c, n), ps, &b);
                if (n < ps) {
                    assert_int_equal(st, ETL_E_TRUNCATED);
                } else {
                    assert_int_equal(st, ETL_OK);
                    assert_true(b.stack_key == a.stack_key);
                    assert_int_equal(b.frame_count, (n - ps) / ps);
                    for (uint32_t i = 0; i < b.frame_count; i++)
                        assert_true(etl_stack_frame(b.frames, ps, i) == frames[i]);
                }
                free(c);
            }
        }
    }
    etl_stack_key_def w = {0x100000000ull, NULL, 0, 4};
    uint8_t o[8];
    size_t len = 1;
    assert_int_equal(etl_stack_key_def_encode(&w, NULL, 4, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
}

/* ------------------------------------------------------------ Image */

/* A v2/v3 image payload built field by field; returns its size. */
static size_t build_image(uint8_t *b, unsigned version, unsigned ps, const char *name)
{
    size_t o = 0;
    put(b + o, ps == 8 ? 0xFFFFF80021489000ull : 0x82489000u, ps), o += ps; /* ImageBase */
    put(b + o, 0x748000, ps), o += ps;                                       /* ImageSize */
    put(b + o, 4, 4), o += 4;                                                /* ProcessId */
    if (version >= 2) {
        put(b + o, 0x6AA6C8, 4), o += 4;         /* ImageChecksum */
        put(b + o, 0x5010AC4B, 4), o += 4;       /* TimeDateStamp */
        b[o++] = 0x0C;                           /* SignatureLevel */
        b[o++] = 0x02;                           /* SignatureType */
        put(b + o, 0xBEEF, 2), o += 2;           /* Reserved0 */
        put(b + o, 0x77620000, ps), o += ps;     /* DefaultBase */
        for (unsigned i = 0; i < 4; i++) put(b + o, 0x11111111u * (i + 1), 4), o += 4;
    }
    for (const char *s = name; *s; s++) b[o++] = (uint8_t)*s, b[o++] = 0;
    b[o++] = 0;
    b[o++] = 0;
    return o;
}

static void test_image(void **state)
{
    (void)state;
    static const char name[] = "\\SystemRoot\\system32\\ntoskrnl.exe";
    for (unsigned version = 0; version <= 4; version++) {
        for (unsigned k = 0; k < 2; k++) {
            unsigned ps = ptr_sizes[k];
            uint8_t b[256];
            size_t n = build_image(b, version, ps, name);
            size_t fixed = version >= 2 ? (ps == 8 ? 0x38 : 0x2C) : 2 * (size_t)ps + 4;
            assert_int_equal(n, fixed + 2 * (sizeof name - 1) + 2);
            for (size_t cut = 0; cut <= n; cut++) {
                uint8_t *c = exact_copy(b, cut);
                etl_image im;
                etl_status st = etl_image_decode(span(c, cut), version, ps, &im);
                if (cut < fixed) {
                    assert_int_equal(st, ETL_E_TRUNCATED);
                    free(c);
                    continue;
                }
                assert_int_equal(st, ETL_OK);
                assert_true(im.image_base == (ps == 8 ? 0xFFFFF80021489000ull : 0x82489000u));
                assert_true(im.image_size == 0x748000);
                assert_int_equal(im.process_id, 4);
                if (version >= 2) {
                    assert_int_equal(im.known, ETL_IMG_V2);
                    assert_int_equal(im.image_checksum, 0x6AA6C8);
                    assert_int_equal(im.time_date_stamp, 0x5010AC4B);
                    assert_int_equal(im.signature_level, 0x0C);
                    assert_int_equal(im.signature_type, 0x02);
                    assert_int_equal(im.reserved0, 0xBEEF);
                    assert_true(im.default_base == 0x77620000);
                    for (unsigned i = 0; i < 4; i++) assert_int_equal(im.reserved[i], 0x11111111u * (i + 1));
                } else {
                    assert_int_equal(im.known, 0);
                }
                assert_int_equal(im.file_name.terminated, cut == n);
                if (cut == n) {
                    assert_int_equal(im.file_name.text.n, 2 * (sizeof name - 1));
                    uint8_t o[256];
                    size_t len;
                    assert_int_equal(etl_image_encode(&im, version, ps, NULL, 0, &len), ETL_E_RANGE);
                    assert_int_equal(len, n);
                    assert_int_equal(etl_image_encode(&im, version, ps, o, sizeof o, &len), ETL_OK);
                    assert_int_equal(len, n);
                    assert_memory_equal(o, b, n);
                }
                free(c);
            }
        }
    }
    /* Range errors: a 64-bit base in a 32-bit event; a name with an odd length. */
    etl_image im = {0};
    im.image_base = 0x100000000ull;
    uint8_t o[128];
    size_t len = 1;
    assert_int_equal(etl_image_encode(&im, 2, 4, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
    im.image_base = 0;
    im.file_name.text = span((const uint8_t *)"abc", 3);
    assert_int_equal(etl_image_encode(&im, 2, 8, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(etl_image_decode(span(o, 0), 2, 6, &im), ETL_E_INVALID_ARG);
}

static void test_kernel_base(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        uint8_t b[8];
        uint64_t base = ps == 8 ? 0xFFFFF80221489000ull : 0x82489000u;
        put(b, base, ps);
        for (size_t n = 0; n <= ps; n++) {
            uint8_t *c = exact_copy(b, n);
            etl_image_kernel_base kb;
            etl_status st = etl_image_kernel_base_decode(span(c, n), ps, &kb);
            assert_int_equal(st, n < ps ? ETL_E_TRUNCATED : ETL_OK);
            if (st == ETL_OK) {
                assert_true(kb.image_base == base);
                uint8_t o[8];
                size_t len;
                assert_int_equal(etl_image_kernel_base_encode(&kb, ps, o, sizeof o, &len), ETL_OK);
                assert_int_equal(len, ps);
                assert_memory_equal(o, b, ps);
            }
            free(c);
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_profile_fields),
        cmocka_unit_test(test_pmc_sample),
        cmocka_unit_test(test_profile_interval),
        cmocka_unit_test(test_stackwalk),
        cmocka_unit_test(test_stack_key_ref),
        cmocka_unit_test(test_stack_key_def),
        cmocka_unit_test(test_image),
        cmocka_unit_test(test_kernel_base),
    };
    return cmocka_run_group_tests_name("kernel_profile", tests, NULL, NULL);
}

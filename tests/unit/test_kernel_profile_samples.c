/*
 * test_kernel_profile_samples.c - the profiling codecs (perfinfo.c, stackwalk.c,
 * image.c) on every real sample.
 *
 * For every sample in ../shared/samples: each SampledProfile, sampling-interval,
 * StackWalk and Image record decodes, as many per hook as the independent
 * decoder lists in ../shared/expected, and encodes back to its original bytes
 * (so a wrong layout, a string not ending at the payload's end or a frame count
 * that leaves bytes over cannot pass). On perfview-x64-compressed.etl, also:
 * every stack key referenced is defined, the kernel references' stacks are all
 * kernel addresses and the user references' stacks start with a user address
 * (7 of them pass through kernel frames, win32k calling back into user mode), and the
 * interval is the 1 ms timer.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include "testutil.h"
#include "etlkit/etlkit.h"

enum { NHOOKS = 16 };
static const uint16_t hooks[NHOOKS] = {0x0F2E, 0x0F2F, 0x0F48, 0x0F49, 0x0F4A, 0x030A, 0x1402, 0x1403,
                                       0x1404, 0x140A, 0x1421, 0x1820, 0x1823, 0x1824, 0x1825, 0x1826};

static int hook_index(long hook)
{
    for (int i = 0; i < NHOOKS; i++)
        if (hooks[i] == hook) return i;
    return -1;
}

/* Per hook, the records of the independent decoder (the "hook" key of each line). */
static void expected_counts(const char *name, unsigned long *n)
{
    char path[1024], line[1 << 16];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/expected/%s.events.jsonl.gz", name);
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    while (gzgets(gz, line, sizeof line)) {
        const char *h = strstr(line, "\"hook\":");
        if (!h) continue;
        int i = hook_index(strtol(h + 7, NULL, 10));
        if (i >= 0) n[i]++;
    }
    gzclose(gz);
}

typedef struct keyset {
    uint64_t *k;
    size_t n, cap;
} keyset;

static void keyset_add(keyset *s, uint64_t key)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->k = realloc(s->k, s->cap * sizeof *s->k);
        assert_non_null(s->k);
    }
    s->k[s->n++] = key;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void keyset_sort(keyset *s)
{
    if (s->n) qsort(s->k, s->n, sizeof *s->k, cmp_u64);
}

static bool keyset_has(const keyset *s, uint64_t key)
{
    return s->n && bsearch(&key, s->k, s->n, sizeof key, cmp_u64) != NULL;
}

typedef struct walk_result {
    unsigned long n[NHOOKS];
    keyset defs, kernel_refs, user_refs;
    keyset kernel_def_keys, user_def_keys; /* definitions of all-kernel frames / with a user innermost frame */
    unsigned long samples_idle, frames_total, intervals_1ms;
} walk_result;

static uint8_t enc[1 << 16];
static uint64_t frames[ETL_STACK_MAX_FRAMES];

static void same_bytes(const etl_record *rec, size_t len)
{
    if (len != rec->payload.n || memcmp(enc, rec->payload.p, len))
        fail_msg("hook 0x%04x at buffer %u +0x%x: re-encoded %zu bytes differ from the %zu of the payload",
                 rec->hook, rec->buffer_index, rec->offset, len, rec->payload.n);
}

static void check(etl_status st, const etl_record *rec)
{
    if (st != ETL_OK)
        fail_msg("hook 0x%04x v%u at buffer %u +0x%x (%zu bytes): %s", rec->hook, rec->version,
                 rec->buffer_index, rec->offset, rec->payload.n, etl_status_str(st));
}

static void frames_of(const uint8_t *f, uint32_t count, unsigned ps)
{
    for (uint32_t i = 0; i < count; i++) frames[i] = etl_stack_frame(f, ps, i);
}

static bool kernel_addr(uint64_t a, unsigned ps) { return ps == 8 ? a >> 63 : a >> 31; }

static void walk(const char *name, walk_result *w)
{
    char path[1024];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/samples/%s", name);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    etl_record rec;
    size_t len;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (!(rec.has & ETL_REC_HOOK)) continue;
        int i = hook_index(rec.hook);
        if (i < 0) continue;
        w->n[i]++;
        unsigned ps = rec.pointer_size;
        switch (rec.hook) {
        case 0x0F2E: {
            etl_sampled_profile s;
            check(etl_sampled_profile_decode(rec.payload, ps, &s), &rec);
            assert_int_equal(s.thread_id % 4, 0);
            assert_true(s.count >= 1);
            if (!s.thread_id) w->samples_idle++;
            check(etl_sampled_profile_encode(&s, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x0F2F: {
            etl_pmc_sample s;
            check(etl_pmc_sample_decode(rec.payload, ps, &s), &rec);
            check(etl_pmc_sample_encode(&s, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x0F48: case 0x0F49: case 0x0F4A: {
            etl_profile_interval s;
            check(etl_profile_interval_decode(rec.payload, &s), &rec);
            if (s.source == 0 && s.new_interval == 10000) w->intervals_1ms++;
            check(etl_profile_interval_encode(&s, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x030A: case 0x1402: case 0x1403: case 0x1404: case 0x140A: {
            etl_image s;
            check(etl_image_decode(rec.payload, rec.version, ps, &s), &rec);
            assert_true(s.file_name.terminated);
            assert_true(s.file_name.text.n >= 2);
            assert_int_equal(s.process_id % 4, 0);
            assert_true(s.image_size > 0);
            check(etl_image_encode(&s, rec.version, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x1421: {
            etl_image_kernel_base s;
            check(etl_image_kernel_base_decode(rec.payload, ps, &s), &rec);
            assert_true(kernel_addr(s.image_base, ps));
            check(etl_image_kernel_base_encode(&s, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x1820: {
            etl_stackwalk s;
            check(etl_stackwalk_decode(rec.payload, ps, &s), &rec);
            assert_true(s.frame_count >= 1);
            w->frames_total += s.frame_count;
            frames_of(s.frames, s.frame_count, ps);
            check(etl_stackwalk_encode(&s, frames, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x1823: case 0x1824: {
            etl_stack_key_def s;
            check(etl_stack_key_def_decode(rec.payload, ps, &s), &rec);
            assert_true(s.frame_count >= 1);
            w->frames_total += s.frame_count;
            keyset_add(&w->defs, s.stack_key);
            unsigned kern = 0;
            for (uint32_t f = 0; f < s.frame_count; f++) kern += kernel_addr(etl_stack_frame(s.frames, ps, f), ps);
            if (kern == s.frame_count) keyset_add(&w->kernel_def_keys, s.stack_key);
            /* A user stack may pass through kernel frames (win32k calling back into user mode). */
            if (!kernel_addr(etl_stack_frame(s.frames, ps, 0), ps)) keyset_add(&w->user_def_keys, s.stack_key);
            frames_of(s.frames, s.frame_count, ps);
            check(etl_stack_key_def_encode(&s, frames, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        case 0x1825: case 0x1826: {
            etl_stack_key_ref s;
            check(etl_stack_key_ref_decode(rec.payload, ps, &s), &rec);
            keyset_add(rec.hook == 0x1825 ? &w->kernel_refs : &w->user_refs, s.stack_key);
            check(etl_stack_key_ref_encode(&s, ps, enc, sizeof enc, &len), &rec);
            same_bytes(&rec, len);
            break;
        }
        }
    }
    etl_iter_close(it);
    etl_reader_close(r);
    keyset_sort(&w->defs);
    keyset_sort(&w->kernel_def_keys);
    keyset_sort(&w->user_def_keys);
}

static void free_result(walk_result *w)
{
    free(w->defs.k);
    free(w->kernel_refs.k);
    free(w->user_refs.k);
    free(w->kernel_def_keys.k);
    free(w->user_def_keys.k);
}

static void check_counts(const char *name, walk_result *w)
{
    unsigned long want[NHOOKS] = {0};
    expected_counts(name, want);
    for (int i = 0; i < NHOOKS; i++) {
        if (w->n[i] || want[i]) print_message("%s: hook 0x%04x: %lu decoded (independent decoder: %lu)\n", name,
                                              hooks[i], w->n[i], want[i]);
        assert_int_equal(w->n[i], want[i]);
    }
}

static void test_perfview(void **state)
{
    (void)state;
    static walk_result w;
    walk("perfview-x64-compressed.etl", &w);
    check_counts("perfview-x64-compressed.etl", &w);
    assert_int_equal(w.n[hook_index(0x0F2E)], 79528);
    assert_int_equal(w.n[hook_index(0x1825)], 2061);
    assert_int_equal(w.n[hook_index(0x1826)], 7046);
    assert_int_equal(w.intervals_1ms, 2); /* CollectionStart and CollectionEnd: Timer, 10000 x 100 ns */
    /* Every key referenced is defined; kernel references name kernel stacks, user references user ones. */
    unsigned long undefined = 0, kern_mismatch = 0, user_mismatch = 0;
    for (size_t i = 0; i < w.kernel_refs.n; i++) {
        undefined += !keyset_has(&w.defs, w.kernel_refs.k[i]);
        kern_mismatch += !keyset_has(&w.kernel_def_keys, w.kernel_refs.k[i]);
    }
    for (size_t i = 0; i < w.user_refs.n; i++) {
        undefined += !keyset_has(&w.defs, w.user_refs.k[i]);
        user_mismatch += !keyset_has(&w.user_def_keys, w.user_refs.k[i]);
    }
    print_message("perfview: %zu key definitions, %lu frames, %lu idle samples; %lu references undefined, "
                  "%lu kernel / %lu user references to stacks of the other mode\n",
                  w.defs.n, w.frames_total, w.samples_idle, undefined, kern_mismatch, user_mismatch);
    assert_int_equal(undefined, 0);
    assert_int_equal(kern_mismatch, 0);
    assert_int_equal(user_mismatch, 0);
    free_result(&w);
}

static void test_other_samples(void **state)
{
    (void)state;
    static const char *names[] = {"kernel-shutdown-x64.etl", "gc-threads-x64.etl", "amsi-user-x64.etl",
                                  "lxcore-x64.etl", "perfview-small-32bit.etl", "selfdescribing-x64.etl",
                                  "syzygy-image-32bit-vista.etl", "syzygy-process-32bit.etl"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        static walk_result w;
        memset(&w, 0, sizeof w);
        walk(names[i], &w);
        check_counts(names[i], &w);
        free_result(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perfview),
        cmocka_unit_test(test_other_samples),
    };
    return cmocka_run_group_tests_name("kernel_profile_samples", tests, NULL, NULL);
}

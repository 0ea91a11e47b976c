/*
 * test_summary.c - etl_summary_run (summary.h): the counts by header type, hook,
 * provider and CPU, the time span, the kernel flags and the kernel events of a
 * trace built byte by byte (etlbuild.h); on the real samples, the counts against
 * the independent decoder's records (../shared/expected) and the same result with
 * one thread and with several.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include <zlib.h>
#include "testutil.h"
#include "etlbuild.h"
#include "etlkit/etlkit.h"

#define T0 1000000u /* the logfile header record's time (QPC at 10 MHz) */

static void add_perf64(eb_file *f, uint16_t hook, uint16_t version, uint64_t ts, size_t payload_n)
{
    uint8_t pl[64];
    memset(pl, 0, sizeof pl);
    eb_rec r;
    eb_rec_kernel(&r, &(eb_kernel){.htype = 0x11, .version_word = version, .hook = hook, .ts = ts, .payload = pl,
                                   .payload_n = payload_n});
    eb_add_rec(f, &r);
}

static void add_full64(eb_file *f, const eb_guid *g, uint64_t ts)
{
    uint8_t pl[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    eb_rec r;
    eb_rec_full(&r, &(eb_full){.htype = 0x14, .type = 1, .tid = 7, .pid = 9, .ts = ts, .guid = *g, .payload = pl,
                               .payload_n = sizeof pl});
    eb_add_rec(f, &r);
}

static const eb_guid GUID_A = {0x11111111, 0x2222, 0x3333, {1, 2, 3, 4, 5, 6, 7, 8}};
static const eb_guid GUID_B = {0x11111111, 0x2222, 0x3333, {1, 2, 3, 4, 5, 6, 7, 9}}; /* Data4 alone differs */

/*
 * Buffer 0 (CPU 0): the logfile header, a header extension (group masks, version 5).
 * Buffer 1 (CPU 1): a CSwitch, a CSwitch too short to decode, a ReadyThread, a SpinLock,
 * a hook without a codec. Buffer 2 (CPU 0): three FULL records, two of provider B, one of A.
 */
static void build(eb_file *f)
{
    eb_init(f);
    eb_lfh h = eb_lfh_default();
    h.ts = T0;
    eb_header_buffer(f, &h, 0);
    uint8_t gm[ETL_GROUPMASK_SIZE];
    memset(gm, 0, sizeof gm);
    eb_w32(gm + 0, 0x00000004u);   /* masks[0]: a PERF_ bit */
    eb_w32(gm + 4 * 3, 0x00000100u); /* masks[3] */
    eb_w32(gm + 0x20, 5);          /* kernel event version */
    eb_rec r;
    eb_rec_kernel(&r, &(eb_kernel){.htype = 0x02, .version_word = 2, .hook = ETL_HOOK_HEADER_EXTENSION, .tid = 1,
                                   .pid = 2, .ts = T0 + 10, .payload = gm, .payload_n = sizeof gm});
    eb_add_rec(f, &r);
    eb_end(f);

    eb_begin(f, &(eb_bufopt){.size = 0x400, .seq = 1, .cpu = 1});
    add_perf64(f, ETL_HOOK_CSWITCH, 2, T0 + 100, 24);
    add_perf64(f, ETL_HOOK_CSWITCH, 2, T0 + 200, 10); /* short: undecodable */
    add_perf64(f, ETL_HOOK_READY_THREAD, 2, T0 + 300, 8);
    add_perf64(f, ETL_HOOK_SPINLOCK, 2, T0 + 400, 2 * 8 + 0x23);
    add_perf64(f, 0x0F0F, 0, T0 + 500, 4);
    eb_end(f);

    eb_begin(f, &(eb_bufopt){.size = 0x400, .seq = 2, .cpu = 0});
    add_full64(f, &GUID_B, T0 + 600);
    add_full64(f, &GUID_A, T0 + 650);
    add_full64(f, &GUID_B, T0 + 700);
    eb_end(f);
}

static etl_reader *open_mem(const eb_file *f)
{
    etl_reader *r = NULL;
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st = etl_reader_open_memory(f->p, f->n, NULL, &r, &d);
    if (st != ETL_OK) fail_msg("open: status %d: %s", st, d.msg);
    return r;
}

static void test_counts(void **state)
{
    (void)state;
    eb_file f;
    build(&f);
    etl_reader *r = open_mem(&f);
    etl_summary s;
    etl_summary_options o = {.sz = sizeof o, .threads = 1};
    assert_int_equal(etl_summary_run(r, &o, &s), ETL_OK);

    assert_int_equal(s.records, 10);
    assert_int_equal(s.by_htype[0x02], 2);
    assert_int_equal(s.by_htype[0x11], 5);
    assert_int_equal(s.by_htype[0x14], 3);
    uint64_t htypes = 0;
    for (int i = 0; i < 256; i++) htypes += s.by_htype[i];
    assert_int_equal(htypes, 10);

    assert_int_equal(s.by_hook[0x0000], 1);
    assert_int_equal(s.by_hook[ETL_HOOK_HEADER_EXTENSION], 1);
    assert_int_equal(s.by_hook[ETL_HOOK_CSWITCH], 2);
    assert_int_equal(s.by_hook[ETL_HOOK_READY_THREAD], 1);
    assert_int_equal(s.by_hook[ETL_HOOK_SPINLOCK], 1);
    assert_int_equal(s.by_hook[0x0F0F], 1);
    uint64_t hooks = 0;
    for (int i = 0; i < 65536; i++) hooks += s.by_hook[i];
    assert_int_equal(hooks, 7); /* the FULL records have no HookId */

    /* Most records first; B and A differ in their last byte only. */
    assert_int_equal(s.nproviders, 2);
    assert_int_equal(s.providers[0].count, 2);
    assert_int_equal(s.providers[0].guid.data4[7], 9);
    assert_int_equal(s.providers[1].count, 1);
    assert_int_equal(s.providers[1].guid.data4[7], 8);
    assert_int_equal(s.providers[1].guid.data1, 0x11111111);

    assert_int_equal(s.cpu_records[0], 5);
    assert_int_equal(s.cpu_records[1], 5);
    assert_true(s.have_ts);
    assert_int_equal(s.first_ts, T0);
    assert_int_equal(s.last_ts, T0 + 700);
    assert_int_equal(etl_summary_duration_ns(&s, etl_reader_clock(r)), 70000); /* 700 ticks at 10 MHz */

    assert_int_equal(s.group_mask_events, 1);
    assert_int_equal(s.flags.masks[0], 4);
    assert_int_equal(s.flags.masks[3], 0x100);
    assert_int_equal(s.kernel_event_version, 5);

    assert_int_equal(s.cswitch, 1);
    assert_int_equal(s.undecodable, 1);
    assert_int_equal(s.ready_thread, 1);
    assert_int_equal(s.spinlock, 1);
    assert_int_equal(s.compact_batches, 0);
    assert_int_equal(s.thread + s.process, 0);
    assert_int_equal(s.st.buffers, 3);
    assert_int_equal(s.st.bad_records + s.st.bad_buffers, 0);
    etl_summary_free(&s);
    etl_summary_free(&s); /* twice is harmless */
    etl_reader_close(r);
    eb_free(&f);
}

/* Nothing but the header: no providers, the header's time alone, no kernel flags. */
static void test_header_only(void **state)
{
    (void)state;
    eb_file f;
    eb_init(&f);
    eb_lfh h = eb_lfh_default();
    h.ts = T0;
    eb_header_buffer(&f, &h, 0);
    eb_end(&f);
    etl_reader *r = open_mem(&f);
    etl_summary s;
    assert_int_equal(etl_summary_run(r, NULL, &s), ETL_OK); /* no options: one thread */
    assert_int_equal(s.records, 1);
    assert_int_equal(s.nproviders, 0);
    assert_null(s.providers);
    assert_int_equal(s.first_ts, T0);
    assert_int_equal(s.last_ts, T0);
    assert_int_equal(s.group_mask_events, 0);
    assert_int_equal(s.kernel_event_version, 0);
    etl_summary_free(&s);
    etl_reader_close(r);
    eb_free(&f);
}

/* ---- the real samples ------------------------------------------------------------------- */

static const char *const SAMPLES[] = {
    "amsi-user-x64.etl",       "gc-threads-x64.etl",     "kernel-shutdown-x64.etl",
    "lxcore-x64.etl",          "perfview-small-32bit.etl", "perfview-x64-compressed.etl",
    "selfdescribing-x64.etl",  "syzygy-image-32bit-vista.etl", "syzygy-process-32bit.etl",
};

static etl_reader *open_path(const char *path)
{
    etl_reader *r = NULL;
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_reader_open(path, NULL, &r, &d) != ETL_OK) return NULL; /* no on_diag: quiet */
    return r;
}

static void assert_same(const etl_summary *a, const etl_summary *b)
{
    assert_int_equal(a->records, b->records);
    assert_memory_equal(a->by_htype, b->by_htype, sizeof a->by_htype);
    assert_memory_equal(a->by_hook, b->by_hook, 65536 * sizeof *a->by_hook);
    assert_int_equal(a->nproviders, b->nproviders);
    if (a->nproviders) assert_memory_equal(a->providers, b->providers, a->nproviders * sizeof *a->providers);
    assert_memory_equal(a->cpu_records, b->cpu_records, sizeof a->cpu_records);
    assert_int_equal(a->have_ts, b->have_ts);
    assert_int_equal(a->first_ts, b->first_ts);
    assert_int_equal(a->last_ts, b->last_ts);
    assert_memory_equal(&a->flags, &b->flags, sizeof a->flags);
    assert_int_equal(a->group_mask_events, b->group_mask_events);
    assert_int_equal(a->kernel_event_version, b->kernel_event_version);
    assert_int_equal(a->cswitch, b->cswitch);
    assert_int_equal(a->compact_batches, b->compact_batches);
    assert_int_equal(a->compact_switches, b->compact_switches);
    assert_int_equal(a->compact_bad, b->compact_bad);
    assert_int_equal(a->ready_thread, b->ready_thread);
    assert_int_equal(a->spinlock, b->spinlock);
    assert_int_equal(a->thread, b->thread);
    assert_int_equal(a->process, b->process);
    assert_int_equal(a->undecodable, b->undecodable);
    assert_int_equal(a->st.buffers, b->st.buffers);
    assert_int_equal(a->st.compressed_buffers, b->st.compressed_buffers);
    assert_int_equal(a->st.bad_buffers, b->st.bad_buffers);
    assert_int_equal(a->st.bad_records, b->st.bad_records);
    assert_int_equal(a->st.skipped_bytes, b->st.skipped_bytes);
    assert_int_equal(a->st.first_problem_offset, b->st.first_problem_offset);
}

static uint64_t progress_last;
static unsigned progress_calls;
static void on_progress(void *ctx, uint64_t bytes)
{
    (void)ctx;
    assert_true(bytes >= progress_last); /* the sum of the threads' shares only grows */
    progress_last = bytes;
    progress_calls++;
}

/* One thread and several give the same summary, on every sample and every synthesized fixture. */
static void check_threads(const char *path)
{
    etl_reader *r = open_path(path);
    if (!r) fail_msg("cannot open %s", path);
    etl_summary one, many;
    etl_summary_options o1 = {.sz = sizeof o1, .threads = 1};
    etl_summary_options on = {.sz = sizeof on, .threads = 5, .progress = on_progress};
    progress_last = 0;
    progress_calls = 0;
    assert_int_equal(etl_summary_run(r, &o1, &one), ETL_OK);
    assert_int_equal(etl_summary_run(r, &on, &many), ETL_OK);
    assert_true(progress_calls > 0);
    assert_true(progress_last <= etl_reader_file_size(r));
    assert_same(&one, &many);
    etl_summary_free(&one);
    etl_summary_free(&many);
    etl_reader_close(r);
}

static void test_threads_samples(void **state)
{
    (void)state;
    char path[1024];
    for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++) {
        snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/samples/%s", SAMPLES[i]);
        check_threads(path);
    }
    static const char *const synth[] = {"synth-64-qpc-both-z.etl", "synth-32-qpc-compact-z.etl",
                                        "synth-64-system-both.etl", "synth-32-cycles-full-z.etl"};
    for (size_t i = 0; i < sizeof synth / sizeof synth[0]; i++) {
        snprintf(path, sizeof path, ETLKIT_TEST_DATA "/%s", synth[i]);
        check_threads(path);
    }
}

/*
 * The counts against the independent decoder's records (expected/<sample>.events.jsonl.gz:
 * one line per record with its header type, and its hook or provider).
 */
static void test_samples_expected(void **state)
{
    (void)state;
    char path[1024];
    unsigned checked = 0;
    for (size_t i = 0; i < sizeof SAMPLES / sizeof SAMPLES[0]; i++) {
        snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/expected/%s.events.jsonl.gz", SAMPLES[i]);
        gzFile gz = gzopen(path, "rb");
        if (!gz) continue; /* not every sample has its records listed */
        uint64_t records = 0, by_htype[256] = {0}, with_provider = 0;
        uint64_t *by_hook = calloc(65536, sizeof *by_hook);
        assert_non_null(by_hook);
        char line[8192];
        while (gzgets(gz, line, sizeof line)) {
            json_error_t e;
            json_t *j = json_loads(line, 0, &e);
            if (!j) fail_msg("%s: %s", path, e.text);
            records++;
            by_htype[json_integer_value(json_object_get(j, "htype")) & 0xFF]++;
            json_t *hook = json_object_get(j, "hook");
            if (hook) by_hook[json_integer_value(hook) & 0xFFFF]++;
            if (json_object_get(j, "provider")) with_provider++;
            json_decref(j);
        }
        gzclose(gz);
        snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/samples/%s", SAMPLES[i]);
        etl_reader *r = open_path(path);
        assert_non_null(r);
        etl_summary s;
        etl_summary_options o = {.sz = sizeof o, .threads = 3};
        assert_int_equal(etl_summary_run(r, &o, &s), ETL_OK);
        if (s.records != records) fail_msg("%s: %llu records, expected %llu", SAMPLES[i],
                                           (unsigned long long)s.records, (unsigned long long)records);
        assert_memory_equal(s.by_htype, by_htype, sizeof by_htype);
        assert_memory_equal(s.by_hook, by_hook, 65536 * sizeof *by_hook);
        uint64_t provider_records = 0;
        for (size_t k = 0; k < s.nproviders; k++) provider_records += s.providers[k].count;
        if (provider_records != with_provider)
            fail_msg("%s: %llu records by provider, expected %llu", SAMPLES[i], (unsigned long long)provider_records,
                     (unsigned long long)with_provider);
        checked++;
        free(by_hook);
        etl_summary_free(&s);
        etl_reader_close(r);
    }
    assert_true(checked >= 5);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),
        cmocka_unit_test(test_header_only),
        cmocka_unit_test(test_threads_samples),
        cmocka_unit_test(test_samples_expected),
    };
    return cmocka_run_group_tests_name("summary", tests, NULL, NULL);
}

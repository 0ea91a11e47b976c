/*
 * test_kernel_samples.c - the Thread and Process decoders against the real samples.
 *
 * No independent decoder's payload values exist for these files, so the checks are
 * the ones a wrong layout cannot pass: every Thread/Process record the independent
 * decoder found (by hook, in ../shared/expected) decodes without error; the last
 * string of each payload ends exactly at the payload's end (a wrong offset, SID
 * length or string encoding would not); ids are multiples of 4 as Windows makes
 * them; image names are printable; threads belong to processes seen before them.
 */
#include <stdio.h>
#include <string.h>
#include <zlib.h>
#include <jansson.h>
#include "testutil.h"
#include "etlkit/etlkit.h"

#define MAX_PIDS (1u << 24) /* Windows ids are multiples of 4 below 2^26 */

typedef struct sample_counts {
    unsigned long thread, process, orphan_threads, total_threads;
} sample_counts;

/* Records of Thread (0x05xx, types 1-4) and Process (0x03xx, 1-4, 0x27) hooks in the expected file. */
static unsigned long expected_lifetime_events(const char *name)
{
    char path[1024], line[1 << 16];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/expected/%s.events.jsonl.gz", name);
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    unsigned long n = 0;
    while (gzgets(gz, line, sizeof line)) {
        json_error_t err;
        json_t *j = json_loads(line, 0, &err);
        assert_non_null(j);
        json_t *h = json_object_get(j, "hook");
        if (h) {
            long long hook = json_integer_value(h);
            int t = (int)(hook & 0xFF), g = (int)(hook >> 8);
            if ((g == 5 && t >= 1 && t <= 4) || (g == 3 && ((t >= 1 && t <= 4) || t == 0x27))) n++;
        }
        json_decref(j);
    }
    gzclose(gz);
    return n;
}

/* Where a string ends (past its terminator), relative to the payload. */
static size_t str_end(const etl_record *r, const etl_kstr *s, size_t unit)
{
    return (size_t)(s->text.p - r->payload.p) + s->text.n + (s->terminated ? unit : 0);
}

static sample_counts walk(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/samples/%s", name);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    static unsigned char seen_pid[MAX_PIDS];
    memset(seen_pid, 0, sizeof seen_pid);
    sample_counts c = {0};
    etl_record rec;
    etl_event ev;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        etl_status st = etl_event_decode(&rec, &ev);
        if (ev.kind == ETL_EVENT_PROCESS) {
            if (st != ETL_OK) fail_msg("%s: process event at buffer %u +0x%x: %s", name, rec.buffer_index, rec.offset, etl_status_str(st));
            const etl_process *p = &ev.u.process;
            c.process++;
            assert_int_equal(p->process_id % 4, 0);
            assert_true(p->image_file_name.text.n > 0);
            for (size_t i = 0; i < p->image_file_name.text.n; i++) {
                uint8_t ch = p->image_file_name.text.p[i];
                assert_true(ch >= 0x20 && ch < 0x7F);
            }
            /* v4: ApplicationId is last; v3: CommandLine. The v5 Defunct time follows the strings. */
            const etl_kstr *last = ev.version >= 4 ? &p->application_id : &p->command_line;
            size_t end = str_end(&rec, last, 2) + ((p->known & ETL_PROC_EXIT_TIME) ? 8 : 0);
            if (end != rec.payload.n)
                fail_msg("%s: process %u v%u: strings end at %zu of %zu payload bytes", name, p->process_id,
                         ev.version, end, rec.payload.n);
            if (p->process_id / 4 < MAX_PIDS) seen_pid[p->process_id / 4] = 1;
        } else if (ev.kind == ETL_EVENT_THREAD) {
            if (st != ETL_OK) fail_msg("%s: thread event at buffer %u +0x%x: %s", name, rec.buffer_index, rec.offset, etl_status_str(st));
            const etl_thread *t = &ev.u.thread;
            c.thread++;
            assert_int_equal(t->thread_id % 4, 0);
            assert_int_equal(t->process_id % 4, 0);
            if (t->known & ETL_THR_NAME) {
                size_t end = str_end(&rec, &t->thread_name, 2);
                if (end != rec.payload.n)
                    fail_msg("%s: thread %u v%u: name ends at %zu of %zu payload bytes", name, t->thread_id,
                             ev.version, end, rec.payload.n);
            } else {
                /* v3 without a name: exactly the fixed part (0x48 bytes on x64). */
                assert_int_equal(rec.payload.n, rec.pointer_size == 8 ? 0x48 : 0x2C);
            }
            c.total_threads++;
            if (t->process_id / 4 >= MAX_PIDS || !seen_pid[t->process_id / 4]) c.orphan_threads++;
        }
    }
    etl_iter_close(it);
    etl_reader_close(r);
    return c;
}

static void check_sample(const char *name, unsigned long min_events)
{
    sample_counts c = walk(name);
    unsigned long want = expected_lifetime_events(name);
    print_message("%s: %lu thread, %lu process events (independent decoder: %lu); %lu threads of unseen processes\n",
                  name, c.thread, c.process, want, c.orphan_threads);
    assert_int_equal(c.thread + c.process, want);
    assert_true(c.thread + c.process >= min_events);
    /* A logger started mid-run may see a few threads of processes it never saw start. */
    assert_true(c.orphan_threads * 100 <= c.total_threads);
}

static void test_kernel_shutdown(void **s) { (void)s; check_sample("kernel-shutdown-x64.etl", 3000); }
static void test_gc_threads(void **s) { (void)s; check_sample("gc-threads-x64.etl", 50000); }
static void test_perfview(void **s) { (void)s; check_sample("perfview-x64-compressed.etl", 1000); }

/* The 32-bit Windows 7 file carries Process v3 events in FULL_HEADER32 records under the classic GUID. */
static void test_syzygy_full_header_process(void **s)
{
    (void)s;
    sample_counts c = walk("syzygy-process-32bit.etl");
    assert_int_equal(c.process, 8);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_shutdown),
        cmocka_unit_test(test_gc_threads),
        cmocka_unit_test(test_perfview),
        cmocka_unit_test(test_syzygy_full_header_process),
    };
    return cmocka_run_group_tests_name("kernel_samples", tests, NULL, NULL);
}

/*
 * test_source_threads.c - etl_sched_source with 1 thread and with many gives the same
 * events, in the same order, with the same strings and counters: on synthesized traces
 * of every form (full, compact, both, compressed, 32-bit, other clocks), with kinds
 * skipped, and on damaged copies whose times go back.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/sched.h"
#include "synthtruth.h"

/* One line per event: every field a consumer reads, strings by content. */
static size_t put_str(char *p, size_t cap, etl_span s)
{
    size_t n = 0;
    for (size_t i = 0; i < s.n && n + 3 < cap; i++) n += (size_t)snprintf(p + n, cap - n, "%02x", s.p[i]);
    return n;
}

static void describe(const etl_sched_event *e, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%d %u %04x %llu ", e->kind, e->cpu, e->hook, (unsigned long long)e->ts);
    size_t k = n > 0 ? (size_t)n : 0;
    switch (e->kind) {
    case ETL_SCHED_SWITCH: {
        const etl_cswitch *s = &e->u.sw;
        snprintf(out + k, cap - k, "sw %llu %x %u %u %u %u %d %d %u %u %u %u %u %u %u %u %u %d %llu %llu",
                 (unsigned long long)s->ts, s->known, s->cpu, s->version, s->source, s->new_tid, s->new_priority,
                 s->old_priority, s->old_tid, s->previous_cstate, s->spare_byte, s->old_wait_reason,
                 s->old_wait_mode, s->old_state, s->old_ideal_processor, s->flags, s->new_wait_time,
                 s->old_remaining_quantum, (unsigned long long)s->pebs_index, (unsigned long long)s->pmc[0]);
        break;
    }
    case ETL_SCHED_READY:
        snprintf(out + k, cap - k, "rd %u %u %d %u", e->u.ready.thread_id, e->u.ready.adjust_reason,
                 e->u.ready.adjust_increment, e->u.ready.flags);
        break;
    case ETL_SCHED_THREAD:
        k += (size_t)snprintf(out + k, cap - k, "th %u %u %u %u ", e->u.thread.process_id, e->u.thread.thread_id,
                              e->u.thread.known, e->u.thread.base_priority);
        put_str(out + k, cap - k, e->u.thread.thread_name.text);
        break;
    case ETL_SCHED_SET_NAME:
        k += (size_t)snprintf(out + k, cap - k, "sn %u %u ", e->u.set_name.process_id, e->u.set_name.thread_id);
        put_str(out + k, cap - k, e->u.set_name.thread_name.text);
        break;
    case ETL_SCHED_PROCESS:
        k += (size_t)snprintf(out + k, cap - k, "pr %u %u %u ", e->u.process.process_id, e->u.process.parent_id,
                              e->u.process.known);
        k += put_str(out + k, cap - k, e->u.process.image_file_name.text);
        out[k++] = ' ';
        k += put_str(out + k, cap - k, e->u.process.command_line.text);
        out[k++] = ' ';
        put_str(out + k, cap - k, e->u.process.user_sid);
        break;
    case ETL_SCHED_SPINLOCK:
        snprintf(out + k, cap - k, "sl %llx %llu %llu %u %u %u", (unsigned long long)e->u.spinlock.spin_lock_address,
                 (unsigned long long)e->u.spinlock.acquire_time, (unsigned long long)e->u.spinlock.release_time,
                 e->u.spinlock.wait_time_in_cycles, e->u.spinlock.spin_count, e->u.spinlock.thread_id);
        break;
    }
}

/* The same file read with 1 thread and with `threads`: events, counters and damage equal. */
static void same_events(const char *path, unsigned threads, uint32_t skip, bool expect_events)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_sched_source *a, *b;
    etl_sched_source_options o1 = {.sz = sizeof o1, .bias = -1, .skip = skip, .threads = 1}, on = o1;
    on.threads = threads;
    assert_int_equal(etl_sched_source_open(r, &o1, &a), ETL_OK);
    assert_int_equal(etl_sched_source_open(r, &on, &b), ETL_OK);
    static char x[16384], y[16384];
    etl_sched_event ea, eb;
    uint64_t n = 0;
    for (;; n++) {
        etl_status sa = etl_sched_source_next(a, &ea), sb = etl_sched_source_next(b, &eb);
        assert_int_equal(sa, sb);
        if (sa != ETL_OK) break;
        describe(&ea, x, sizeof x);
        describe(&eb, y, sizeof y);
        if (strcmp(x, y) != 0) fail_msg("%s, %u threads, event %llu:\n  1: %s\n  n: %s", path, threads,
                                        (unsigned long long)n, x, y);
    }
    if (expect_events) assert_true(n > 1000);
    assert_memory_equal(etl_sched_source_stats_get(a), etl_sched_source_stats_get(b), sizeof(etl_sched_source_stats));
    etl_stats da, db;
    etl_sched_source_damage(a, &da);
    etl_sched_source_damage(b, &db);
    assert_int_equal(da.buffers, db.buffers);
    assert_int_equal(da.records, db.records);
    assert_int_equal(da.bad_buffers, db.bad_buffers);
    assert_int_equal(da.bad_records, db.bad_records);
    assert_int_equal(da.skipped_bytes, db.skipped_bytes);
    assert_int_equal(da.decompress_errors, db.decompress_errors);
    assert_int_equal(da.first_problem_offset == UINT64_MAX, db.first_problem_offset == UINT64_MAX);
    etl_sched_source_close(a);
    etl_sched_source_close(b);
    etl_reader_close(r);
}

typedef struct flavour {
    const char *bits, *clock, *format, *cpus;
    bool z;
} flavour;

static const flavour flavours[] = {
    {"64", "qpc", "full", "8", false},   {"64", "qpc", "compact", "6", false}, {"64", "qpc", "both", "5", true},
    {"32", "cycles", "full", "3", false}, {"64", "system", "compact", "8", true}, {"64", "qpc", "full", "1", false},
};

static void make(const flavour *f, unsigned seed, const char *path)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    char s[16];
    snprintf(s, sizeof s, "%u", seed);
    st_set(&o, "seed", s);
    st_set(&o, "cpus", f->cpus);
    st_set(&o, "threads", "40");
    st_set(&o, "duration", "0.3");
    st_set(&o, "pointer-size", f->bits);
    st_set(&o, "clock", f->clock);
    st_set(&o, "cswitch", f->format);
    st_set(&o, "buffer-size", "16K");
    st_set(&o, "churn", "50");
    st_set(&o, f->z ? "compress" : "no-compress", NULL);
    st_truth t;
    st_run(path, &o, &t);
    st_free(&t);
}

static void test_flavours(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        char path[512];
        st_tmp(path, sizeof path, "srcthr", "t.etl");
        make(&flavours[i], 11 + (unsigned)i, path);
        for (unsigned t = 2; t <= 9; t += 7) {
            same_events(path, t, 0, true);
            same_events(path, t, 1u << ETL_SCHED_READY | 1u << ETL_SCHED_SWITCH, false);
            same_events(path, t, 1u << ETL_SCHED_SPINLOCK | 1u << ETL_SCHED_THREAD, true);
        }
        unlink(path);
    }
}

/* Damage that sends times back and cuts records: bytes flipped at fixed places. */
static void test_damaged(void **state)
{
    (void)state;
    for (size_t i = 0; i < 2; i++) {
        char path[512];
        st_tmp(path, sizeof path, "srcthr", "d.etl");
        make(&flavours[i == 0 ? 0 : 1], 5, path);
        FILE *f = fopen(path, "r+b");
        assert_non_null(f);
        fseek(f, 0, SEEK_END);
        long size = ftell(f);
        uint64_t x = 88172645463325252ull;
        for (int k = 0; k < 400; k++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            long off = 16384 + (long)(x % (uint64_t)(size - 16384));
            fseek(f, off, SEEK_SET);
            int c = fgetc(f);
            fseek(f, off, SEEK_SET);
            fputc((c ^ (int)(x >> 56)) & 0xFF, f);
        }
        fclose(f);
        for (unsigned t = 2; t <= 5; t += 3) {
            same_events(path, t, 0, true);
            same_events(path, t, 1u << ETL_SCHED_READY | 1u << ETL_SCHED_SWITCH, false);
        }
        unlink(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flavours),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_writer.c - files written by etl_writer read back by etl_reader: every
 * header field, every event (header, PMC/PEBS items, payload), buffer layout,
 * for both pointer sizes, the three clocks, with and without compression.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"
#include "base/bytes.h"

#define NEV 20000
#define ETL_WRITER_HEADER_RECORDS_TEST 2 /* the logfile header and the header extension */

typedef struct wcase {
    unsigned ptr;
    uint32_t clock;
    bool compress;
    uint32_t ncpu;
    uint32_t buffer_size;
} wcase;

static char tmpdir[256];

static int setup(void **s)
{
    (void)s;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "writer");
}

static int teardown(void **s)
{
    (void)s;
    return tu_tmpdir_remove(tmpdir);
}

/* Event i, reproducible from i alone so the reader's output can be checked against it. */
static void make_event(uint64_t i, uint32_t ncpu, etl_write_event *ev, uint8_t *payload, uint64_t *pmc)
{
    uint64_t st = i * 7919 + 1;
    memset(ev, 0, sizeof *ev);
    ev->cpu = (uint16_t)(i % ncpu);
    ev->header = (uint8_t)(i % 3);
    ev->version = (uint8_t)(1 + i % 4);
    ev->hook = (uint16_t)(0x0500 + i % 64);
    ev->tid = (uint32_t)(4 * (i % 1000));
    ev->pid = (uint32_t)(4 * (i % 50));
    ev->kernel_time = (uint32_t)i;
    ev->user_time = (uint32_t)(i * 3);
    ev->ts = 1000000 + i * 13; /* increasing, so per CPU too */
    ev->pmc_count = (uint8_t)(i % 5 == 0 ? i % 4 : 0);
    ev->has_pebs = i % 7 == 0;
    ev->pebs_index = i * 1001;
    for (unsigned k = 0; k < ev->pmc_count; k++) pmc[k] = i * 100 + k;
    ev->pmc = pmc;
    ev->len = (size_t)(tu_rand(&st) % 200);
    /* CSwitch, SpinLock, ReadyThread: no longer than their layouts (etl_kernel_layout_size), else damage. */
    if (ev->hook == 0x0524 || ev->hook == 0x0529 || ev->hook == 0x0532) ev->len %= 9;
    for (size_t k = 0; k < ev->len; k++) payload[k] = (uint8_t)(tu_rand(&st));
    ev->payload = payload;
}

static void run_case(const wcase *c)
{
    char path[512];
    snprintf(path, sizeof path, "%s/w-%u-%u-%d.etl", tmpdir, c->ptr, c->clock, c->compress);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.pointer_size = c->ptr;
    o.clock_type = c->clock;
    o.ncpu = c->ncpu;
    o.buffer_size = c->buffer_size;
    o.compress = c->compress;
    o.os_build = 22621;
    o.start_ts = 1000000;
    o.perf_freq = 3117777;
    o.cpu_mhz = 2400;
    o.logger_name = "Test Logger \xc3\xa9";
    etl_groupmask_set(&o.group_mask, ETL_PERF_CONTEXT_SWITCH);
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    uint8_t payload[256];
    uint64_t pmc[8];
    etl_write_event ev;
    for (uint64_t i = 0; i < NEV; i++) {
        make_event(i, c->ncpu, &ev, payload, pmc);
        assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    }
    uint64_t end_ts = 1000000 + NEV * 13;
    assert_int_equal(etl_writer_close(w, end_ts, &d), ETL_OK);

    etl_reader *r;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    const etl_logfile_header *h = etl_reader_header(r);
    assert_int_equal(h->pointer_size, c->ptr);
    assert_int_equal(h->header_type, c->ptr == 8 ? ETL_HTYPE_SYSTEM64 : ETL_HTYPE_SYSTEM32);
    assert_int_equal(h->clock_type, c->clock);
    assert_int_equal(h->num_processors, c->ncpu);
    assert_int_equal(h->buffer_size, c->buffer_size);
    assert_int_equal(h->provider_version, 22621);
    assert_int_equal(h->perf_freq, 3117777);
    assert_int_equal(h->cpu_speed_mhz, 2400);
    assert_int_equal(h->header_ts, 1000000);
    assert_string_equal(h->logger_name, "Test Logger \xc3\xa9");
    assert_string_equal(h->log_file_name, path);
    assert_int_equal(h->buffers_written, etl_reader_buffer_count(r));
    assert_int_equal(!!(h->log_file_mode & ETL_LOG_FILE_MODE_COMPRESSED), c->compress);
    /* EndTime is the FILETIME of the last timestamp. */
    assert_int_equal(h->end_time, (uint64_t)etl_clock_filetime(etl_reader_clock(r), end_ts));

    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    uint64_t i = 0;
    int saw_ext = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (rec.buffer_index == 0) {
            /* Buffer 0: the logfile header, then the header extension with the masks. */
            if (rec.hook == ETL_HOOK_HEADER_EXTENSION) {
                etl_event e;
                assert_int_equal(etl_event_decode(&rec, &e), ETL_OK);
                assert_true(etl_groupmask_test(&e.u.group_mask, ETL_PERF_CONTEXT_SWITCH));
                saw_ext = 1;
            }
            continue;
        }
        make_event(i, c->ncpu, &ev, payload, pmc);
        assert_int_equal(rec.cpu, ev.cpu);
        assert_int_equal(rec.hook, ev.hook);
        assert_int_equal(rec.version, ev.version);
        assert_int_equal(rec.ts, ev.ts);
        assert_int_equal(rec.pointer_size, c->ptr);
        assert_int_equal(rec.pmc_count, ev.pmc_count);
        for (unsigned k = 0; k < ev.pmc_count; k++) assert_int_equal(etl_record_pmc(&rec, k), pmc[k]);
        assert_int_equal(!!(rec.has & ETL_REC_PEBS), ev.has_pebs);
        if (ev.has_pebs) assert_int_equal(rec.pebs_index, ev.pebs_index);
        if (ev.header != ETL_WH_PERFINFO) {
            assert_int_equal(rec.tid, ev.tid);
            assert_int_equal(rec.pid, ev.pid);
        }
        if (ev.header == ETL_WH_SYSTEM) {
            assert_int_equal(rec.kernel_time, ev.kernel_time);
            assert_int_equal(rec.user_time, ev.user_time);
        }
        assert_int_equal(rec.payload.n, ev.len);
        assert_memory_equal(rec.payload.p, payload, ev.len);
        i++;
    }
    assert_int_equal(i, NEV);
    assert_true(saw_ext);
    const etl_stats *st = etl_iter_stats_get(it);
    assert_int_equal(st->bad_buffers, 0);
    assert_int_equal(st->bad_records, 0);
    assert_int_equal(st->compressed_buffers, c->compress ? st->buffers - 1 : 0);
    /* Buffers of several CPUs interleave in the file, each CPU's by SequenceNumber. */
    uint64_t last_seq[64] = {0};
    for (size_t b = 1; b < etl_reader_buffer_count(r); b++) {
        etl_buffer_header bh;
        assert_int_equal(etl_reader_buffer(r, b, &bh, NULL), ETL_OK);
        assert_true(bh.sequence_number > last_seq[bh.processor_index]);
        last_seq[bh.processor_index] = bh.sequence_number;
        assert_int_equal(bh.offset, bh.saved_offset);
        assert_true(bh.buffer_flag & ETL_BUFFER_FLAG_PROC_INDEX);
        if (!c->compress) assert_int_equal(bh.buffer_size, c->buffer_size);
    }
    etl_iter_close(it);
    etl_reader_close(r);
}

static void test_64_qpc(void **s) { (void)s; run_case(&(wcase){8, ETL_CLOCK_QPC, false, 4, 65536}); }
static void test_32_qpc(void **s) { (void)s; run_case(&(wcase){4, ETL_CLOCK_QPC, false, 3, 8192}); }
static void test_64_system_time(void **s) { (void)s; run_case(&(wcase){8, ETL_CLOCK_SYSTEM_TIME, false, 2, 16384}); }
static void test_32_cycles(void **s) { (void)s; run_case(&(wcase){4, ETL_CLOCK_CPU_CYCLES, false, 5, 4096}); }
static void test_64_compressed(void **s) { (void)s; run_case(&(wcase){8, ETL_CLOCK_QPC, true, 4, 65536}); }
static void test_32_compressed(void **s) { (void)s; run_case(&(wcase){4, ETL_CLOCK_CPU_CYCLES, true, 2, 4096}); }

/* Events that cannot fit, and bad arguments, are refused without breaking the file. */
static void test_limits(void **s)
{
    (void)s;
    char path[512];
    snprintf(path, sizeof path, "%s/limits.etl", tmpdir);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.buffer_size = 4096;
    o.ncpu = 2;
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    static uint8_t big[70000];
    etl_write_event ev = {0};
    ev.header = ETL_WH_PERFINFO;
    ev.payload = big;
    ev.len = 4096 - 0x48 - 0x10 + 1; /* one byte too many for a buffer */
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_RANGE);
    ev.len = 4096 - 0x48 - 0x10; /* exactly a buffer */
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    ev.cpu = 2;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_close(w, 10, &d), ETL_OK);
    etl_reader *r;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    assert_int_equal(etl_reader_buffer_count(r), 2);
    etl_reader_close(r);
    o.buffer_size = 1000;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_E_INVALID_ARG);
    snprintf(path, sizeof path, "%s/no/such/dir.etl", tmpdir);
    o.buffer_size = 0;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_E_IO);
    assert_non_null(strstr(d.msg, "no/such/dir.etl"));
}

/* The logfile header codec alone: decode(encode(h)) keeps every field, both pointer sizes. */
static void test_logfile_header_roundtrip(void **s)
{
    (void)s;
    for (unsigned ptr = 4; ptr <= 8; ptr += 4) {
        etl_logfile_header h = {0}, g;
        h.buffer_size = 0x10000;
        h.os_major = 6;
        h.os_minor = 1;
        h.sub_version = 1;
        h.sub_minor_version = 5;
        h.provider_version = 7601;
        h.num_processors = 16;
        h.end_time = 129488146160585715ull;
        h.timer_resolution = 156001;
        h.maximum_file_size = 7;
        h.log_file_mode = 0x2000080;
        h.buffers_written = 99;
        h.start_buffers = 1;
        h.pointer_size = ptr;
        h.events_lost = 3;
        h.cpu_speed_mhz = 2394;
        h.logger_name_ptr = 0x1234;
        h.log_file_name_ptr = 0x5678;
        h.tz_bias = -60;
        snprintf(h.tz_standard_name, sizeof h.tz_standard_name, "W. Europe Standard Time");
        h.boot_time = 129484742215811967ull;
        h.perf_freq = 2337949;
        h.start_time = 129488146150534710ull;
        h.clock_type = 1;
        h.buffers_lost = 2;
        snprintf(h.logger_name, sizeof h.logger_name, "Logger \xf0\x9f\x98\x80 name"); /* outside the BMP */
        snprintf(h.log_file_name, sizeof h.log_file_name, "C:\\x.etl");
        h.header_type = ptr == 8 ? ETL_HTYPE_SYSTEM64 : ETL_HTYPE_SYSTEM32;
        h.header_tid = 6452;
        h.header_pid = 7644;
        h.header_ts = 795739885710ull;
        uint8_t buf[1024];
        size_t n;
        assert_int_equal(etl_logfile_header_encode(&h, ptr, buf, sizeof buf, &n), ETL_OK);
        assert_int_equal(n, 0x20 + (ptr == 8 ? 0x118 : 0x110) + 2 * 15 + 2 * 9); /* 14 units + NUL, 8 + NUL */
        assert_int_equal(etl_logfile_header_decode((etl_span){buf, n}, &g), ETL_OK);
        assert_memory_equal(&h, &g, sizeof h);
        assert_int_equal(etl_logfile_header_encode(&h, ptr, buf, 0x100, &n), ETL_E_RANGE);
    }
}

/* Reads path back in time order: its records, and whether the reader found damage. */
static uint64_t read_back(const char *path, bool *damaged)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    uint64_t n = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) n++;
    *damaged = etl_stats_damaged(etl_iter_stats_get(it)) || etl_stats_damaged(etl_reader_stats_get(r));
    etl_iter_close(it);
    etl_reader_close(r);
    return n;
}

/*
 * What would write a file that reads as damaged, or crash, is refused (explore12 F1, F5, F8): a payload length near
 * SIZE_MAX (header + len wrapped, memcpy of ~SIZE_MAX bytes), times going back on a CPU, before the reader's window or
 * with the top bit set, an end long before an event, options the header cannot say, bytes that are not one record.
 * What was refused leaves the file whole: it reads back with every event accepted and no damage.
 */
static void test_refused(void **s)
{
    (void)s;
    char path[512];
    snprintf(path, sizeof path, "%s/refused.etl", tmpdir);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.ncpu = 2;
    o.start_ts = 1000000000; /* 100 s of 100 ns ticks */
    o.perf_freq = 10000000;
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    uint8_t payload[16] = {1, 2, 3};
    etl_write_event ev = {0};
    ev.header = ETL_WH_PERFINFO;
    ev.hook = 0x0532;
    ev.version = 2;
    ev.payload = payload;
    ev.len = 8;
    ev.ts = o.start_ts + 100;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    ev.len = SIZE_MAX - 7; /* 0x10 + len wraps to 8 */
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_RANGE);
    ev.len = 8;
    ev.payload = NULL;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    ev.payload = payload;
    ev.ts = o.start_ts + 50; /* back on CPU 0 */
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    ev.cpu = 1; /* another CPU may be earlier */
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    ev.ts = 1; /* long before the start (60 s is the reader's slack) */
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    ev.ts = UINT64_MAX;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    ev.ts = o.start_ts + 10000000ull * 3600; /* an hour on: written, and the end must cover it */
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    /* write_record: one whole record whose own time is ts; neither junk nor nothing. */
    uint8_t junk[40];
    memset(junk, 0x41, sizeof junk);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 200, junk, sizeof junk), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 200, junk, 0), ETL_E_INVALID_ARG);
    uint8_t rec[0x18] = {0};
    etl_wr_u32(rec, 0xC0000000u | (uint32_t)ETL_HTYPE_PERFINFO64 << 16 | 2);
    etl_wr_u16(rec + 4, sizeof rec);
    etl_wr_u16(rec + 6, 0x0532);
    etl_wr_u64(rec + 8, o.start_ts + 200);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 201, rec, sizeof rec), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 200, rec, sizeof rec), ETL_OK);
    /* An end an hour before the last event: refused, the file ends at that event and reads whole. */
    memset(&d, 0, sizeof d);
    assert_int_equal(etl_writer_close(w, o.start_ts + 300, &d), ETL_E_INVALID_ARG);
    assert_true(d.msg[0]);
    bool damaged;
    assert_int_equal(read_back(path, &damaged), ETL_WRITER_HEADER_RECORDS_TEST + 4);
    assert_false(damaged);

    /* An end before the start: the same. */
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    ev.ts = o.start_ts + 100;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    assert_int_equal(etl_writer_close(w, o.start_ts - 1000, &d), ETL_E_INVALID_ARG);
    assert_int_equal(read_back(path, &damaged), ETL_WRITER_HEADER_RECORDS_TEST + 1);
    assert_false(damaged);

    /* Options the header cannot say are refused, not taken as others. */
    etl_writer_options b = o;
    b.pointer_size = 16;
    assert_int_equal(etl_writer_open(path, &b, &w, &d), ETL_E_INVALID_ARG);
    b = o;
    b.clock_type = 7;
    assert_int_equal(etl_writer_open(path, &b, &w, &d), ETL_E_INVALID_ARG);
    static char name[5000];
    memset(name, 'n', sizeof name - 1);
    b = o;
    b.logger_name = name;
    assert_int_equal(etl_writer_open(path, &b, &w, &d), ETL_E_INVALID_ARG);
    b = o;
    b.log_file_name = name;
    assert_int_equal(etl_writer_open(path, &b, &w, &d), ETL_E_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_64_qpc),
        cmocka_unit_test(test_32_qpc),
        cmocka_unit_test(test_64_system_time),
        cmocka_unit_test(test_32_cycles),
        cmocka_unit_test(test_64_compressed),
        cmocka_unit_test(test_32_compressed),
        cmocka_unit_test(test_limits),
        cmocka_unit_test(test_logfile_header_roundtrip),
        cmocka_unit_test(test_refused),
    };
    return cmocka_run_group_tests_name("writer", tests, setup, teardown);
}

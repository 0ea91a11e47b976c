/*
 * test_writer_layout.c - what the writer takes reads back (explore30 F1, F7): a fixed-layout kernel
 * event whose payload its reader takes as damage (etl_record_frame's ETL_REC_BAD_SIZE: over twice
 * the layout, or bytes past the layout that read as records) is refused by etl_writer_write and
 * etl_writer_write_record with ETL_E_INVALID_ARG, etl_writer_why naming the hook, size and limit;
 * up to twice the layout is written and reads back whole. NULL path / writer: ETL_E_INVALID_ARG.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"
#include "base/bytes.h"
#include "writer/writer_internal.h"

static char tmpdir[256];

static int setup(void **s)
{
    (void)s;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "wlayout");
}

static int teardown(void **s)
{
    (void)s;
    return tu_tmpdir_remove(tmpdir);
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

/* The refusal etl_writer_why reports: ETL_E_INVALID_ARG, its message naming each of the words. */
static void why_names(etl_writer *w, const char *a, const char *b, const char *c)
{
    etl_diag d;
    memset(&d, 0x5A, sizeof d);
    assert_int_equal(etl_writer_why(w, &d), ETL_E_INVALID_ARG);
    assert_int_equal(d.status, ETL_E_INVALID_ARG);
    assert_non_null(memchr(d.msg, 0, sizeof d.msg));
    if (!strstr(d.msg, a) || !strstr(d.msg, b) || !strstr(d.msg, c)) fail_msg("why: '%s' (%s %s %s)", d.msg, a, b, c);
}

static void run(unsigned ptr, bool compress)
{
    char path[512];
    snprintf(path, sizeof path, "%s/layout-%u-%d.etl", tmpdir, ptr, compress);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.pointer_size = ptr;
    o.compress = compress;
    o.start_ts = 1000000;
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    assert_int_equal(etl_writer_why(w, &d), ETL_OK);
    assert_string_equal(d.msg, "");
    static uint8_t payload[0x1000];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7 + 3);
    etl_write_event ev = {0};
    ev.header = ETL_WH_SYSTEM;
    ev.version = 2;
    ev.hook = 0x0524;
    ev.payload = payload;
    ev.ts = o.start_ts + 10;
    uint64_t taken = 0;
    /* CSwitch v2 (24 bytes): 49 and 100 refused, 48 (twice) written. */
    ev.len = 100;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0524", "100", "48");
    ev.len = 49;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0524", "49", "24");
    ev.len = 48;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK), taken++;
    ev.len = 24;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK), taken++;
    /* ReadyThread v2 (8), SampledProfile v2 (a pointer + 8), with a PERFINFO header and PMC items. */
    uint64_t pmc[2] = {1, 2};
    ev.header = ETL_WH_PERFINFO;
    ev.pmc_count = 2;
    ev.pmc = pmc;
    ev.hook = 0x0532;
    ev.len = 17;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0532", "17", "16");
    ev.len = 16;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK), taken++;
    ev.hook = 0x0F2E;
    ev.len = 2 * (ptr + 8) + 1;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0F2E", ptr == 8 ? "33" : "25", ptr == 8 ? "32" : "24");
    ev.len = 2 * (ptr + 8);
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK), taken++;
    /* A compact batch v2 (at most 0x458): over twice refused. */
    ev.pmc_count = 0;
    ev.hook = 0x0525;
    ev.len = 2 * 0x458 + 8;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0525", "2232", "2224");
    ev.len = 0x458 + 8;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK), taken++;
    /* Under twice, but the bytes past the layout read as a record: the reader cuts it there. Refused. */
    uint8_t cs[24 + 16] = {0};
    etl_wr_u32(cs + 24, 0xC0000000u | (uint32_t)(ptr == 8 ? ETL_HTYPE_PERFINFO64 : ETL_HTYPE_PERFINFO32) << 16 | 2);
    etl_wr_u16(cs + 28, 16);
    etl_wr_u16(cs + 30, 0x0F33);
    etl_wr_u64(cs + 32, o.start_ts + 10);
    ev.header = ETL_WH_SYSTEM;
    ev.hook = 0x0524;
    ev.payload = cs;
    ev.len = sizeof cs;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0524", "40", "24");
    /* A hook with no fixed layout takes any payload. */
    ev.hook = 0x0520;
    ev.payload = payload;
    ev.len = 1000;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK), taken++;

    /* write_record: the same rule on a whole record (explore30's t_wrecord: CSwitch v2, 100 payload bytes). */
    uint8_t rec[0x20 + 100];
    memcpy(rec + 0x20, payload, 100);
    etl_wr_u32(rec, 0xC0000000u | (uint32_t)(ptr == 8 ? ETL_HTYPE_SYSTEM64 : ETL_HTYPE_SYSTEM32) << 16 | 2);
    etl_wr_u16(rec + 4, sizeof rec);
    etl_wr_u16(rec + 6, 0x0524);
    etl_wr_u32(rec + 8, 4);
    etl_wr_u32(rec + 12, 8);
    etl_wr_u64(rec + 16, o.start_ts + 20);
    etl_wr_u64(rec + 24, 0);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 20, rec, sizeof rec), ETL_E_INVALID_ARG);
    why_names(w, "0x0524", "100", "48");
    etl_wr_u16(rec + 4, 0x20 + 48); /* twice the layout: written */
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 20, rec, 0x20 + 48), ETL_OK), taken++;
    /* The record of a PERFINFO header after the layout: cut by the reader, refused. */
    uint8_t rec2[0x20 + sizeof cs];
    memcpy(rec2, rec, 0x20);
    memcpy(rec2 + 0x20, cs, sizeof cs);
    etl_wr_u16(rec2 + 4, sizeof rec2);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 20, rec2, sizeof rec2), ETL_E_INVALID_ARG);
    why_names(w, "0x0524", "40", "24");

    /* The writer's own diag names the refusal too, and closing reads back every event taken, undamaged. */
    assert_int_equal(etl_writer_events(w), taken);
    assert_int_equal(etl_writer_close(w, o.start_ts + 100, &d), ETL_OK);
    bool damaged;
    assert_int_equal(read_back(path, &damaged), 2 + taken);
    assert_false(damaged);
}

static void test_layout_64(void **s) { (void)s; run(8, false); }
static void test_layout_32_compressed(void **s) { (void)s; run(4, true); }

/* explore30 F7: a NULL path, writer or out is refused as the neighbours' NULLs are, never a crash. */
static void test_null(void **s)
{
    (void)s;
    etl_writer *w = (etl_writer *)1;
    etl_diag d = {0};
    assert_int_equal(etl_writer_open(NULL, NULL, &w, &d), ETL_E_INVALID_ARG);
    assert_null(w);
    assert_true(d.msg[0]);
    char path[512];
    snprintf(path, sizeof path, "%s/null.etl", tmpdir);
    assert_int_equal(etl_writer_open(path, NULL, NULL, &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_flush(NULL), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_why(NULL, &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_close(NULL, 0, &d), ETL_OK);
}

/*
 * Each failure's message is its own: a write refused for its payload, then a write that failed otherwise with
 * the same status (a NULL event or record) or a write taken. etl_writer_why showed the refusal's text for the
 * later failure, and the writer's diag (etl_writer_diag: closing, synth) the refusal's for any later failure of
 * its status.
 */
static void test_why_own(void **s)
{
    (void)s;
    char path[512];
    snprintf(path, sizeof path, "%s/why.etl", tmpdir);
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.start_ts = 1000000;
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    static uint8_t payload[100];
    etl_write_event ev = {0};
    ev.header = ETL_WH_SYSTEM;
    ev.version = 2;
    ev.hook = 0x0524;
    ev.payload = payload;
    ev.len = sizeof payload;
    ev.ts = o.start_ts + 10;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    why_names(w, "0x0524", "100", "48");
    /* Right after the refusal, the writer's diag for its status says it. */
    etl_writer_diag(w, ETL_E_INVALID_ARG, &d);
    if (!strstr(d.msg, "0x0524")) fail_msg("diag after the refusal: '%s'", d.msg);
    /* A NULL event: the same status, its own reason. */
    assert_int_equal(etl_writer_write(w, NULL), ETL_E_INVALID_ARG);
    memset(&d, 0x5A, sizeof d);
    assert_int_equal(etl_writer_why(w, &d), ETL_E_INVALID_ARG);
    assert_int_equal(d.status, ETL_E_INVALID_ARG);
    if (strstr(d.msg, "0x0524") || !strstr(d.msg, "NULL")) fail_msg("why after a NULL event: '%s'", d.msg);
    /* A NULL record with a size: the same. */
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_write_record(w, 0, o.start_ts + 10, NULL, 32), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_why(w, &d), ETL_E_INVALID_ARG);
    if (strstr(d.msg, "0x0524") || !strstr(d.msg, "NULL")) fail_msg("why after a NULL record: '%s'", d.msg);
    /* A write taken after a refusal: why still tells the refusal (the header's contract), the writer's diag
     * for a later failure of that status no longer does. */
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    ev.len = 24;
    assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    why_names(w, "0x0524", "100", "48");
    etl_writer_diag(w, ETL_E_INVALID_ARG, &d);
    if (strstr(d.msg, "0x0524")) fail_msg("diag after a write taken: '%s'", d.msg);
    /* A refusal, then a flush: the flush's own failure is not the refusal. */
    ev.len = 100;
    assert_int_equal(etl_writer_write(w, &ev), ETL_E_INVALID_ARG);
    assert_int_equal(etl_writer_flush(w), ETL_OK);
    etl_writer_diag(w, ETL_E_INVALID_ARG, &d);
    if (strstr(d.msg, "0x0524")) fail_msg("diag after a flush: '%s'", d.msg);
    assert_int_equal(etl_writer_close(w, o.start_ts + 100, &d), ETL_OK);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layout_64),
        cmocka_unit_test(test_layout_32_compressed),
        cmocka_unit_test(test_null),
        cmocka_unit_test(test_why_own),
    };
    return cmocka_run_group_tests_name("writer_layout", tests, setup, teardown);
}

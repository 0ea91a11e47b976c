/*
 * test_export_unit.c - the Perfetto writer's bytes against perfetto.md §6 (a
 * golden packet checked there with protoc against the upstream protos), the
 * protobuf primitives, and the ftrace state letters.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/export.h"
#include "export/pb.h"

static void golden_cswitch(void **state)
{
    (void)state;
    static const uint8_t want[45] = {0x0A, 0x2B, 0x40, 0xC0, 0x84, 0x3D, 0x50, 0x01, 0xFA, 0x05, 0x22, 0x08,
                                     0x02, 0x12, 0x1E, 0x08, 0xC0, 0x84, 0x3D, 0x20, 0x02, 0x12, 0x16, 0x08,
                                     0xD2, 0x09, 0x10, 0xE1, 0x21, 0x18, 0x12, 0x20, 0x10, 0x28, 0x00, 0x58,
                                     0x0F, 0x38, 0x01, 0x40, 0x05, 0x48, 0x04, 0x50, 0x03};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    etl_clock clk = {.type = 1, .ticks_per_sec = 1000000000u, .start_time = 0, .t0 = 0};
    etl_timeline_options o = {.sz = sizeof o, .format = ETL_TIMELINE_PERFETTO};
    etl_timeline *w;
    assert_int_equal(etl_timeline_open(f, &clk, &o, &w), ETL_OK);
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SWITCH;
    ev.cpu = 2;
    ev.ts = 1000000;
    etl_cswitch *s = &ev.u.sw;
    s->ts = 1000000;
    s->cpu = 2;
    s->known = ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_NEW_PRIORITY |
               ETL_CSW_OLD_PRIORITY | ETL_CSW_PREVIOUS_CSTATE | ETL_CSW_WAIT_REASON | ETL_CSW_WAIT_MODE | ETL_CSW_STATE |
               ETL_CSW_IDEAL_PROCESSOR | ETL_CSW_NEW_WAIT_TIME;
    s->new_tid = 1234;
    s->old_tid = 4321;
    s->new_priority = 9;
    s->old_priority = 8;
    s->previous_cstate = 0;
    s->old_wait_reason = 15;
    s->old_wait_mode = 1;
    s->old_state = 5;
    s->old_ideal_processor = 2;
    s->new_wait_time = 3;
    etl_timeline_event(w, &ev);
    assert_int_equal(etl_timeline_finish(w), ETL_OK);
    etl_timeline_close(w);
    fclose(f);
    assert_int_equal(len, sizeof want);
    assert_memory_equal(buf, want, sizeof want);
    free(buf);
}

static void unknown_fields(void **state)
{
    (void)state;
    /* A compact CPU's last switch: no new thread, no state: all ones, field 13. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    etl_clock clk = {.type = 1, .ticks_per_sec = 1000000000u, .start_time = 0, .t0 = 0};
    etl_timeline_options o = {.sz = sizeof o, .format = ETL_TIMELINE_PERFETTO};
    etl_timeline *w;
    assert_int_equal(etl_timeline_open(f, &clk, &o, &w), ETL_OK);
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SWITCH;
    ev.u.sw.known = ETL_CSW_OLD_TID;
    ev.u.sw.old_tid = 0;
    etl_timeline_event(w, &ev);
    etl_timeline_finish(w);
    etl_timeline_close(w);
    fclose(f);
    /* ... 12 0B { 08 FF FF FF FF 0F  10 00  68 FE 03 }: new tid all ones, old 0, state_int 255 */
    static const uint8_t sw[] = {0x12, 0x0B, 0x08, 0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x10, 0x00, 0x68, 0xFE, 0x03};
    assert_true(len > sizeof sw);
    assert_memory_equal(buf + len - sizeof sw, sw, sizeof sw);
    free(buf);
}

static void primitives(void **state)
{
    (void)state;
    uint8_t b[16];
    assert_int_equal(pb_varint(b, 300) - b, 2);
    assert_int_equal(b[0], 0xAC);
    assert_int_equal(b[1], 0x02);
    assert_int_equal(pb_zigzag32(-1), 1);
    assert_int_equal(pb_zigzag32(1), 2);
    assert_int_equal(pb_zigzag32(INT32_MIN), UINT32_MAX);
    assert_int_equal(pb_int32(b, 11, -1) - b, 11); /* a negative int32 takes ten bytes */
    assert_int_equal(pb_varint_len(UINT64_MAX), 10);
    assert_int_equal(pb_len_size(95, 34), 3 + 34);
}

static void ftrace_states(void **state)
{
    (void)state;
    assert_string_equal(etl_ftrace_state(5, true), "S");
    assert_string_equal(etl_ftrace_state(1, true), "R");
    assert_string_equal(etl_ftrace_state(4, true), "X");
    assert_string_equal(etl_ftrace_state(6, true), "D");
    assert_string_equal(etl_ftrace_state(5, false), "R");
}

static void schema_consistent(void **state)
{
    (void)state;
    const etl_table_def *t = etl_export_tables();
    for (int i = 0; i < ETL_TABLE_COUNT; i++) {
        assert_true(t[i].ncols > 0 && t[i].ncols <= 32);
        assert_int_equal(etl_export_table_find(t[i].name), i);
        for (unsigned c = 0; c < t[i].ncols; c++)
            assert_true(strcmp(t[i].cols[c].type, "INTEGER") == 0 || strcmp(t[i].cols[c].type, "TEXT") == 0);
    }
    assert_int_equal(etl_export_table_find("nope"), -1);
}

/* The SQLite sink: no path is refused (SQLite made a temporary database); a file it made and did not commit goes. */
static void sqlite_sink_files(void **state)
{
    (void)state;
    etl_sqlite_sink *s;
    char err[256];
    assert_int_equal(etl_sqlite_sink_open(NULL, &s, err), ETL_E_INVALID_ARG);
    assert_int_equal(etl_sqlite_sink_open("", &s, err), ETL_E_INVALID_ARG);
    char path[] = "/tmp/etlkit-sqlite-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    unlink(path);
    assert_int_equal(etl_sqlite_sink_open(path, &s, err), ETL_OK);
    assert_int_equal(etl_sqlite_sink_close(s, 0, err), ETL_OK);
    assert_true(access(path, F_OK) != 0); /* it held every table: opening the path again failed */
    assert_int_equal(etl_sqlite_sink_open(path, &s, err), ETL_OK);
    assert_int_equal(etl_sqlite_sink_close(s, 1, err), ETL_OK);
    assert_true(access(path, F_OK) == 0);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(golden_cswitch), cmocka_unit_test(unknown_fields), cmocka_unit_test(primitives),
        cmocka_unit_test(ftrace_states), cmocka_unit_test(schema_consistent), cmocka_unit_test(sqlite_sink_files),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

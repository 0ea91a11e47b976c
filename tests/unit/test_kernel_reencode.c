/*
 * test_kernel_samples.c - the payload decoders over the real kernel events of
 * ../shared/samples: every Thread, Process and group-mask event of the two
 * uncompressed kernel files decodes, re-encodes to the same bytes, and a few
 * hand-checked values come out right. A minimal record walk (SYSTEM, PERFINFO
 * and FULL headers, 64 KiB buffers) stands in for the container reader.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/kernel.h"

typedef struct sample {
    uint8_t *data;
    size_t size;
} sample;

static sample load(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/samples/%s", ETLKIT_SHARED_DIR, name);
    FILE *f = fopen(path, "rb");
    if (!f) fail_msg("cannot open %s", path);
    sample s = {NULL, 0};
    fseek(f, 0, SEEK_END);
    s.size = (size_t)ftell(f);
    rewind(f);
    s.data = malloc(s.size);
    assert_non_null(s.data);
    assert_int_equal(fread(s.data, 1, s.size, f), s.size);
    fclose(f);
    return s;
}

static uint16_t u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t u32(const uint8_t *p) { return u16(p) | (uint32_t)u16(p + 2) << 16; }

typedef struct record {
    uint16_t hook;      /* SYSTEM/PERFINFO HookId, or Class.Type for FULL headers */
    unsigned version;
    unsigned ptr_size;
    etl_span payload;   /* a heap copy of exactly the event data */
} record;

/* Calls fn for every record of every buffer; returns how many there were. */
static size_t walk(const sample *s, void (*fn)(const record *, void *), void *ctx)
{
    size_t count = 0;
    for (size_t b = 0; b + 0x48 <= s->size;) {
        uint32_t bsize = u32(s->data + b);
        assert_true(bsize >= 0x48 && b + bsize <= s->size);
        for (size_t o = b + 0x48; o + 8 <= b + bsize;) {
            const uint8_t *h = s->data + o;
            uint32_t marker = u32(h);
            if (marker == 0 || marker == 0xFFFFFFFF) break;
            record r = {0};
            size_t head = 0, size = 0;
            uint8_t type = h[2];
            if (type == 0x01 || type == 0x02 || type == 0x10 || type == 0x11) {
                size = u16(h + 4);
                r.hook = u16(h + 6);
                r.version = h[0];
                r.ptr_size = type == 0x01 || type == 0x10 ? 4 : 8;
                head = type >= 0x10 ? 0x10 : 0x20;
                assert_int_equal(h[1] & 0x87, 0); /* no PMC/PEBS items in these files */
            } else if (type == 0x0A || type == 0x14) {
                size = u16(h);
                r.hook = h[4];
                r.version = u16(h + 6);
                r.ptr_size = type == 0x0A ? 4 : 8;
                head = 0x30;
            } else {
                fail_msg("unexpected header type 0x%02x at %zu", type, o);
            }
            assert_true(size >= head && o + size <= b + bsize);
            uint8_t *copy = malloc(size - head + 1);
            assert_non_null(copy);
            memcpy(copy, h + head, size - head);
            r.payload.p = copy;
            r.payload.n = size - head;
            fn(&r, ctx);
            free(copy);
            count++;
            o += (size + 7) & ~(size_t)7;
        }
        b += bsize;
    }
    return count;
}

static bool is_thread(uint16_t hook) { return hook >= 0x0501 && hook <= 0x0504; }
static bool is_process(uint16_t hook)
{
    return (hook >= 0x0301 && hook <= 0x0304) || hook == 0x0327;
}

typedef struct tally {
    size_t threads, processes, groupmasks, names, sids;
    bool saw_idle, saw_systray, saw_v5, saw_header_masks;
} tally;

static void reencode_same(const record *r, const uint8_t *b, size_t n)
{
    assert_int_equal(n, r->payload.n);
    assert_memory_equal(b, r->payload.p, n);
}

static void check_thread(const record *r, tally *t)
{
    etl_thread th;
    assert_int_equal(etl_thread_decode(r->payload, r->version, r->ptr_size, &th), ETL_OK);
    assert_int_equal(r->version, 3);
    assert_int_equal(th.known & (ETL_THR_IDS | ETL_THR_STACKS | ETL_THR_TEB | ETL_THR_PRIORITIES),
                     ETL_THR_IDS | ETL_THR_STACKS | ETL_THR_TEB | ETL_THR_PRIORITIES);
    /* v3 x64 events here are 0x48 bytes plus an (empty) name */
    if (th.known & ETL_THR_NAME) {
        assert_true(th.thread_name.terminated);
        t->names++;
    }
    uint8_t b[512];
    size_t n;
    assert_int_equal(etl_thread_encode(&th, r->version, r->ptr_size, b, sizeof b, &n), ETL_OK);
    reencode_same(r, b, n);
    t->threads++;
}

static void check_process(const record *r, tally *t)
{
    etl_process p;
    assert_int_equal(etl_process_decode(r->payload, r->version, r->ptr_size, &p), ETL_OK);
    uint32_t want = ETL_PROC_IDS | ETL_PROC_SID | ETL_PROC_IMAGE;
    if (r->version >= 2) want |= ETL_PROC_COMMAND_LINE;
    if (r->version >= 4) want |= ETL_PROC_PACKAGE | ETL_PROC_APP_ID | ETL_PROC_FLAGS;
    if (r->version == 5) want |= ETL_PROC_EXIT_TIME;
    assert_int_equal(p.known & want, want);
    assert_true(p.image_file_name.terminated && p.image_file_name.text.n > 0);
    if (p.user_sid.n) {
        assert_int_equal(p.user_sid.p[0], 1); /* revision */
        t->sids++;
    }
    if (p.process_id == 0 && p.image_file_name.text.n == 4 &&
        !memcmp(p.image_file_name.text.p, "Idle", 4)) {
        /* S-1-5-18 */
        static const uint8_t local_system[12] = {1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0};
        assert_int_equal(p.user_sid.n, 12);
        assert_memory_equal(p.user_sid.p, local_system, 12);
        t->saw_idle = true;
    }
    if (p.process_id == 0x1A7C && r->hook == 0x0302) {
        assert_int_equal(p.parent_id, 0x0F10);
        assert_int_equal(p.session_id, 1);
        assert_int_equal((uint32_t)p.exit_status, 0x40010004);
        assert_true(p.directory_table_base == 0x26F5A000);
        assert_int_equal(p.image_file_name.text.n, strlen("SecurityHealthSystray.exe"));
        assert_memory_equal(p.image_file_name.text.p, "SecurityHealthSystray.exe", 25);
        assert_int_equal(p.command_line.text.n % 2, 0);
        assert_int_equal(p.command_line.text.p[0], '"');
        assert_int_equal(p.user_sid.n, 8 + 4 * 5);
        t->saw_systray = true;
    }
    if (r->version == 5) {
        /* a FILETIME in the trace's last seconds (end_time 132273837534159885) */
        assert_true(p.exit_time > 132273837534159885ull - 100000000ull &&
                    p.exit_time < 132273837534159885ull);
        t->saw_v5 = true;
    }
    uint8_t b[2048];
    size_t n;
    assert_int_equal(etl_process_encode(&p, r->version, r->ptr_size, b, sizeof b, &n), ETL_OK);
    reencode_same(r, b, n);
    t->processes++;
}

static void on_kernel_record(const record *r, void *ctx)
{
    tally *t = ctx;
    if (is_thread(r->hook)) {
        check_thread(r, t);
    } else if (is_process(r->hook)) {
        check_process(r, t);
    } else if (r->hook == 0x0005 || r->hook == 0x0020) {
        etl_groupmask m;
        assert_int_equal(etl_groupmask_decode(r->payload, &m), ETL_OK);
        assert_int_equal(m.kernel_event_version, 70); /* 1809-1903 */
        if (r->hook == 0x0005 && m.masks[0] == 7) {
            assert_true(etl_groupmask_test(&m, ETL_PERF_PROCESS) &&
                        etl_groupmask_test(&m, ETL_PERF_THREAD) &&
                        etl_groupmask_test(&m, ETL_PERF_LOADER));
            assert_false(etl_groupmask_test(&m, ETL_PERF_CONTEXT_SWITCH));
            t->saw_header_masks = true;
        }
        uint8_t b[64];
        size_t n;
        assert_int_equal(etl_groupmask_encode(&m, b, sizeof b, &n), ETL_OK);
        reencode_same(r, b, n);
        t->groupmasks++;
    }
}

static void test_kernel_shutdown(void **state)
{
    (void)state;
    sample s = load("kernel-shutdown-x64.etl");
    tally t;
    memset(&t, 0, sizeof t);
    assert_int_equal(walk(&s, on_kernel_record, &t), 17078);
    /* counts from expected/kernel-shutdown-x64.etl.events.jsonl.gz */
    assert_int_equal(t.threads, 350 + 1032 + 1175 + 501);
    assert_int_equal(t.processes, 94 + 37 + 60 + 5);
    assert_int_equal(t.groupmasks, 3 + 2);
    assert_int_equal(t.names, t.threads);
    assert_int_equal(t.sids, t.processes);
    assert_true(t.saw_idle && t.saw_systray && t.saw_v5 && t.saw_header_masks);
    free(s.data);
}

/* syzygy's file: x86 Process v3 under FULL_HEADER32, class type = opcode. */
static void on_syzygy_record(const record *r, void *ctx)
{
    tally *t = ctx;
    if (r->ptr_size != 4 || r->version != 3 || r->hook < 1 || r->hook > 4) return;
    etl_process p;
    assert_int_equal(etl_process_decode(r->payload, r->version, 4, &p), ETL_OK);
    assert_true(p.image_file_name.terminated && p.command_line.terminated);
    /* this writer zeroed the TOKEN_USER but still wrote the SID */
    assert_true(p.user_sid.n >= 12 && p.token_user[0] == 0 && p.user_sid.p[0] == 1);
    if (p.process_id == 0x6F0) {
        assert_int_equal(p.parent_id, 0x3DC);
        assert_int_equal(p.session_id, 1);
        assert_int_equal(p.user_sid.n, 8 + 4 * 5);
        assert_memory_equal(p.image_file_name.text.p, "notepad.exe", 11);
        assert_int_equal(p.image_file_name.text.n, 11);
        t->saw_idle = true;
    }
    uint8_t b[512];
    size_t n;
    assert_int_equal(etl_process_encode(&p, 3, 4, b, sizeof b, &n), ETL_OK);
    reencode_same(r, b, n);
    t->processes++;
}

static void test_syzygy_process(void **state)
{
    (void)state;
    sample s = load("syzygy-process-32bit.etl");
    tally t;
    memset(&t, 0, sizeof t);
    assert_int_equal(walk(&s, on_syzygy_record, &t), 9);
    assert_int_equal(t.processes, 8);
    assert_true(t.saw_idle);
    free(s.data);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_kernel_shutdown),
        cmocka_unit_test(test_syzygy_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

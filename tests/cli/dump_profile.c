/*
 * dump_profile.c - `etlkit dump --format jsonl` prints the profile, stack and image events (issue 20) with the
 * values their codecs decode. On perfview-x64-compressed.etl, for the first record (in time order, dump's) of
 * SampledProfile, StackWalk/Stack, a stack key definition, a stack key reference and an Image event: the line
 * dump prints for it (dump --filter HOOKS --limit 1) is that record (buf, off) and its fields equal the codec's
 * own decode of the record's bytes, read here through the library. The same for the first record (in file
 * order) of each image-identity event (ImageID, DbgID_NONE/RSDS/ILRSDS, FileVersion), which no hook names:
 * found by provider and opcode in `dump --order file`.
 *   dump_profile ETLKIT SAMPLES_DIR
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "etlkit/etlkit.h"

static const char *cli, *samples;

/* The first record in time order whose hook is one of hooks[0..n). */
static bool first_record(etl_reader *r, const uint16_t *hooks, size_t n, etl_record *out)
{
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    const etl_record *rec;
    bool found = false;
    while (!found && etl_iter_next_ref(it, &rec) == ETL_OK) {
        uint16_t hook;
        if (!etl_record_kernel_hook(rec, &hook)) continue;
        for (size_t i = 0; i < n; i++)
            if (hooks[i] == hook) found = true;
        if (found) {
            /* The payload outlives the iterator in a copy. */
            static uint8_t copy[1 << 16];
            *out = *rec;
            assert_true(rec->payload.n <= sizeof copy);
            memcpy(copy, rec->payload.p, rec->payload.n);
            out->payload.p = copy;
            out->data = NULL;
        }
    }
    etl_iter_close(it);
    return found;
}

/* dump's one line for --filter filter, parsed. */
static json_t *dump_line(const char *path, const char *filter)
{
    char cmd[4096], line[1 << 16];
    snprintf(cmd, sizeof cmd, "'%s' dump --format jsonl --limit 1 --filter %s '%s'", cli, filter, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof line, p));
    assert_int_equal(pclose(p), 0);
    json_error_t e;
    json_t *j = json_loads(line, 0, &e);
    if (!j) fail_msg("%s: not JSON: %s", cmd, e.text);
    return j;
}

static void eq_u(json_t *f, const char *key, uint64_t v)
{
    json_t *x = json_object_get(f, key);
    if (!json_is_integer(x) || (uint64_t)json_integer_value(x) != v)
        fail_msg("%s: expected %llu", key, (unsigned long long)v);
}

static void hex(char *t, uint64_t v) { snprintf(t, 24, "0x%llx", (unsigned long long)v); }

static void eq_hex(json_t *f, const char *key, uint64_t v)
{
    char t[24];
    hex(t, v);
    json_t *x = json_object_get(f, key);
    if (!json_is_string(x) || strcmp(json_string_value(x), t)) fail_msg("%s: expected %s", key, t);
}

static void eq_frames(json_t *f, const uint8_t *frames, unsigned ps, uint32_t count)
{
    eq_u(f, "FrameCount", count);
    json_t *a = json_object_get(f, "Frames");
    assert_true(json_is_array(a));
    assert_int_equal(json_array_size(a), count);
    for (uint32_t i = 0; i < count; i++) {
        char t[24];
        hex(t, etl_stack_frame(frames, ps, i));
        assert_string_equal(json_string_value(json_array_get(a, i)), t);
    }
}

/* The line is the record's, and its "fields" object; the caller decrefs line. */
static json_t *fields_of(json_t *line, const etl_record *rec)
{
    eq_u(line, "buf", rec->buffer_index);
    eq_u(line, "off", rec->offset);
    json_t *f = json_object_get(line, "fields");
    assert_true(json_is_object(f));
    return f;
}

static void test_perfview(void **state)
{
    (void)state;
    char path[4096];
    snprintf(path, sizeof path, "%s/perfview-x64-compressed.etl", samples);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_reader_keep_bad_times(r, true); /* as dump reads */
    etl_record rec;
    json_t *line, *f;

    static const uint16_t sample_hooks[] = {ETL_HOOK_SAMPLED_PROFILE};
    assert_true(first_record(r, sample_hooks, 1, &rec));
    etl_sampled_profile s;
    assert_int_equal(etl_sampled_profile_decode(rec.payload, rec.pointer_size, &s), ETL_OK);
    f = fields_of(line = dump_line(path, "PerfInfo/SampleProf"), &rec);
    eq_hex(f, "InstructionPointer", s.instruction_pointer);
    eq_u(f, "ThreadId", s.thread_id);
    eq_u(f, "Count", s.count);
    eq_u(f, "ExecutingDpc", s.flags & 1);
    eq_u(f, "ExecutingIsr", (s.flags >> 1) & 1);
    eq_u(f, "Priority", s.flags >> 3);
    eq_u(f, "Rank", s.rank);
    json_decref(line);

    static const uint16_t stack_hooks[] = {ETL_HOOK_STACKWALK};
    assert_true(first_record(r, stack_hooks, 1, &rec));
    etl_stackwalk w;
    assert_int_equal(etl_stackwalk_decode(rec.payload, rec.pointer_size, &w), ETL_OK);
    assert_true(w.frame_count > 0);
    f = fields_of(line = dump_line(path, "StackWalk/Stack"), &rec);
    eq_u(f, "EventTimeStamp", w.event_timestamp);
    eq_u(f, "StackProcess", w.stack_process);
    eq_u(f, "StackThread", w.stack_thread);
    eq_frames(f, w.frames, w.ptr_size, w.frame_count);
    json_decref(line);

    static const uint16_t def_hooks[] = {ETL_HOOK_STACK_KEY_DELETE, ETL_HOOK_STACK_KEY_RUNDOWN};
    assert_true(first_record(r, def_hooks, 2, &rec));
    etl_stack_key_def kd;
    assert_int_equal(etl_stack_key_def_decode(rec.payload, rec.pointer_size, &kd), ETL_OK);
    assert_true(kd.frame_count > 0);
    f = fields_of(line = dump_line(path, "StackWalk/KeyDelete,KeyRundown"), &rec);
    eq_hex(f, "StackKey", kd.stack_key);
    eq_frames(f, kd.frames, kd.ptr_size, kd.frame_count);
    json_decref(line);

    static const uint16_t ref_hooks[] = {ETL_HOOK_STACK_KEY_KERNEL, ETL_HOOK_STACK_KEY_USER};
    assert_true(first_record(r, ref_hooks, 2, &rec));
    etl_stack_key_ref kr;
    assert_int_equal(etl_stack_key_ref_decode(rec.payload, rec.pointer_size, &kr), ETL_OK);
    f = fields_of(line = dump_line(path, "StackWalk/StackKeyKernel,StackKeyUser"), &rec);
    eq_u(f, "EventTimeStamp", kr.event_timestamp);
    eq_u(f, "StackProcess", kr.stack_process);
    eq_u(f, "StackThread", kr.stack_thread);
    eq_hex(f, "StackKey", kr.stack_key);
    json_decref(line);

    static const uint16_t image_hooks[] = {ETL_HOOK_PROCESS_LOAD_IMAGE, ETL_HOOK_IMAGE_UNLOAD, ETL_HOOK_IMAGE_DC_START,
                                           ETL_HOOK_IMAGE_DC_END, ETL_HOOK_IMAGE_LOAD};
    assert_true(first_record(r, image_hooks, 5, &rec));
    etl_image im;
    assert_int_equal(etl_image_decode(rec.payload, rec.version, rec.pointer_size, &im), ETL_OK);
    f = fields_of(line = dump_line(path, "0x030A,0x1402,0x1403,0x1404,0x140A"), &rec);
    eq_hex(f, "ImageBase", im.image_base);
    eq_u(f, "ImageSize", im.image_size);
    eq_u(f, "ProcessId", im.process_id);
    assert_true(im.known & ETL_IMG_V2);
    eq_u(f, "ImageChecksum", im.image_checksum);
    eq_u(f, "TimeDateStamp", im.time_date_stamp);
    eq_u(f, "SignatureLevel", im.signature_level);
    eq_u(f, "SignatureType", im.signature_type);
    eq_hex(f, "DefaultBase", im.default_base);
    /* FileName: the UTF-16 text (ASCII in this sample), unit by unit. */
    const char *name = json_string_value(json_object_get(f, "FileName"));
    assert_non_null(name);
    size_t units = im.file_name.text.n / 2;
    while (units && !im.file_name.text.p[2 * units - 2] && !im.file_name.text.p[2 * units - 1]) units--;
    assert_int_equal(strlen(name), units);
    for (size_t i = 0; i < units; i++) {
        assert_int_equal(im.file_name.text.p[2 * i + 1], 0);
        assert_int_equal((unsigned char)name[i], im.file_name.text.p[2 * i]);
    }
    json_decref(line);
    etl_reader_close(r);
}

static void eq_s(json_t *f, const char *key, const char *v)
{
    json_t *x = json_object_get(f, key);
    if (!json_is_string(x) || strcmp(json_string_value(x), v)) fail_msg("%s: expected \"%s\"", key, v);
}

/* The text of an ASCII string (the sample's are), UTF-16 (unit 2) or ANSI (1). */
static const char *ascii(const etl_kstr *s, unsigned unit)
{
    static char t[1024];
    size_t n = s->text.n / unit;
    assert_true(n < sizeof t);
    for (size_t i = 0; i < n; i++) {
        if (unit == 2) assert_int_equal(s->text.p[2 * i + 1], 0);
        assert_true(s->text.p[unit * i] < 0x80);
        t[i] = (char)s->text.p[unit * i];
    }
    t[n] = 0;
    return t;
}

static void test_image_identity(void **state)
{
    (void)state;
    char path[4096], cmd[8192];
    snprintf(path, sizeof path, "%s/perfview-x64-compressed.etl", samples);
    static const unsigned ops[5] = {0x00, 0x20, 0x24, 0x25, 0x40};
    /* The first record of each opcode, in file order, as the library decodes it. */
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    static uint8_t copies[5][1 << 12];
    etl_record first[5];
    bool have[5] = {false};
    const etl_record *rec;
    while (etl_iter_next_ref(it, &rec) == ETL_OK) {
        if (!(rec->has & ETL_REC_PROVIDER) || memcmp(&rec->provider, etl_image_id_guid(), 16)) continue;
        for (unsigned i = 0; i < 5; i++) {
            if (have[i] || rec->opcode != ops[i]) continue;
            assert_true(rec->payload.n <= sizeof copies[i]);
            first[i] = *rec;
            memcpy(copies[i], rec->payload.p, rec->payload.n);
            first[i].payload.p = copies[i];
            first[i].data = NULL;
            have[i] = true;
        }
    }
    etl_iter_close(it);
    etl_reader_close(r);
    snprintf(cmd, sizeof cmd, "'%s' dump --format jsonl --order file '%s'", cli, path);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    static char line[1 << 16];
    unsigned checked = 0;
    while (checked != 0x1F && fgets(line, sizeof line, p)) {
        if (!strstr(line, "b3e675d7-2554-4f18-830b-2762732560de")) continue;
        json_t *j = json_loads(line, 0, NULL);
        assert_non_null(j);
        unsigned op = (unsigned)json_integer_value(json_object_get(j, "opcode")), i = 0;
        while (i < 5 && ops[i] != op) i++;
        assert_true(i < 5 && have[i]);
        if (checked & (1u << i)) {
            json_decref(j);
            continue;
        }
        checked |= 1u << i;
        etl_event ev;
        assert_int_equal(etl_event_decode(&first[i], &ev), ETL_OK);
        json_t *f = fields_of(j, &first[i]);
        switch (ev.kind) {
        case ETL_EVENT_IMAGE_ID:
            eq_hex(f, "ImageBase", ev.u.image_id.image_base);
            eq_u(f, "ImageSize", ev.u.image_id.image_size);
            eq_u(f, "ProcessId", ev.u.image_id.process_id);
            eq_u(f, "TimeDateStamp", ev.u.image_id.time_date_stamp);
            eq_s(f, "OriginalFileName", ascii(&ev.u.image_id.original_file_name, 2));
            assert_int_equal(json_object_size(f), 5);
            break;
        case ETL_EVENT_IMAGE_DBGID_NONE:
        case ETL_EVENT_IMAGE_DBGID_RSDS:
        case ETL_EVENT_IMAGE_DBGID_ILRSDS: {
            eq_hex(f, "ImageBase", ev.u.dbgid.image_base);
            eq_u(f, "ProcessId", ev.u.dbgid.process_id);
            if (ev.kind == ETL_EVENT_IMAGE_DBGID_NONE) {
                assert_int_equal(json_object_size(f), 2);
                break;
            }
            char g[37];
            etl_guid_format(&ev.u.dbgid.guid_sig, g);
            eq_s(f, "GuidSig", g);
            eq_u(f, "Age", ev.u.dbgid.age);
            eq_s(f, "PdbFileName", ascii(&ev.u.dbgid.pdb_file_name, 1));
            assert_int_equal(json_object_size(f), 5);
            break;
        }
        case ETL_EVENT_IMAGE_FILE_VERSION:
            eq_u(f, "ImageSize", ev.u.file_version.image_size);
            eq_u(f, "TimeDateStamp", ev.u.file_version.time_date_stamp);
            /* ASCII strings only: the sample's first has the (R) sign in ProductName, checked by presence. */
            for (unsigned s = 0; s < ETL_IMAGE_FILE_VERSION_STRINGS; s++) {
                const etl_kstr *k = &ev.u.file_version.strings[s];
                bool plain = true;
                for (size_t b = 0; b < k->text.n; b += 2) plain &= k->text.p[b] < 0x80 && !k->text.p[b + 1];
                if (plain) eq_s(f, etl_image_file_version_key(s), ascii(k, 2));
                else assert_true(json_is_string(json_object_get(f, etl_image_file_version_key(s))));
            }
            assert_int_equal(json_object_size(f), 2 + ETL_IMAGE_FILE_VERSION_STRINGS);
            break;
        default:
            fail_msg("opcode 0x%02x: kind %d", op, ev.kind);
        }
        json_decref(j);
    }
    pclose(p);
    assert_int_equal(checked, 0x1F);
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: dump_profile ETLKIT SAMPLES_DIR\n");
        return 2;
    }
    cli = argv[1];
    samples = argv[2];
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_perfview), cmocka_unit_test(test_image_identity)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

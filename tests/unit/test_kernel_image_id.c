/*
 * test_kernel_image_id.c - the image-identity codecs (image_id.c: ImageID,
 * DbgID_NONE/RSDS/ILRSDS, FileVersion) and Image/HypercallPage on hand-built
 * payloads: every field at its offset, 32- and 64-bit, every truncation length
 * (on exact heap copies, so ASan sees an overrun), encode -> decode round trips,
 * size queries and range errors; and etl_event_decode's dispatch of whole
 * FULL_HEADER32/64 records by the provider GUID and opcode.
 */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlbuild.h"
#include "etlkit/event.h"

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

static uint64_t base_of(unsigned ps) { return ps == 8 ? 0x000007F9D02F0000ull : 0x77710000u; }

/* The PDB GUID of the sample's first wntdll.pdb, in its on-disk bytes. */
static const uint8_t guid_bytes[16] = {0xdf, 0xd8, 0x83, 0xec, 0x59, 0x55, 0xe0, 0x46,
                                       0xb6, 0x30, 0x13, 0x3e, 0xbd, 0x97, 0x92, 0x66};

static bool text_is(const etl_kstr *s, const char *ascii, unsigned unit)
{
    size_t n = strlen(ascii);
    if (s->text.n != n * unit) return false;
    for (size_t i = 0; i < n; i++)
        if (s->text.p[i * unit] != (uint8_t)ascii[i] || (unit == 2 && s->text.p[i * unit + 1])) return false;
    return true;
}

/* ------------------------------------------------------------------- ImageID */

static size_t build_image_id(uint8_t *b, unsigned ps, const char *name)
{
    put(b, base_of(ps), ps);
    put(b + ps, 0x157000, ps);
    put(b + 2 * ps, 4, 4);
    put(b + 2 * ps + 4, 0x5010AE7A, 4);
    return 2 * (size_t)ps + 8 + eb_utf16z(b + 2 * ps + 8, name);
}

static void test_image_id(void **state)
{
    (void)state;
    static const char name[] = "ntdll.dll";
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        uint8_t b[128];
        size_t n = build_image_id(b, ps, name), fixed = 2 * (size_t)ps + 8;
        assert_int_equal(n, fixed + 2 * sizeof name);
        for (size_t cut = 0; cut <= n; cut++) {
            uint8_t *c = exact_copy(b, cut);
            etl_image_id id;
            etl_status st = etl_image_id_decode(span(c, cut), ps, &id);
            if (cut < fixed) {
                assert_int_equal(st, ETL_E_TRUNCATED);
                free(c);
                continue;
            }
            assert_int_equal(st, ETL_OK);
            assert_true(id.image_base == base_of(ps));
            assert_true(id.image_size == 0x157000);
            assert_int_equal(id.process_id, 4);
            assert_int_equal(id.time_date_stamp, 0x5010AE7A);
            assert_int_equal(id.original_file_name.terminated, cut == n);
            if (cut == n) {
                assert_true(text_is(&id.original_file_name, name, 2));
                uint8_t o[128];
                size_t len;
                assert_int_equal(etl_image_id_encode(&id, ps, NULL, 0, &len), ETL_E_RANGE);
                assert_int_equal(len, n);
                assert_int_equal(etl_image_id_encode(&id, ps, o, n - 1, &len), ETL_E_RANGE);
                assert_int_equal(etl_image_id_encode(&id, ps, o, sizeof o, &len), ETL_OK);
                assert_int_equal(len, n);
                assert_memory_equal(o, b, n);
            }
            free(c);
        }
    }
    /* A 64-bit base or size in a 32-bit event; a name of odd length; bad arguments. */
    etl_image_id id = {0};
    uint8_t o[64];
    size_t len = 1;
    id.image_size = 0x100000000ull;
    assert_int_equal(etl_image_id_encode(&id, 4, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
    assert_int_equal(etl_image_id_encode(&id, 8, o, sizeof o, &len), ETL_OK);
    assert_int_equal(len, 16 + 8 + 2);
    id.original_file_name.text = span((const uint8_t *)"abc", 3);
    assert_int_equal(etl_image_id_encode(&id, 8, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(etl_image_id_decode(span(o, sizeof o), 2, &id), ETL_E_INVALID_ARG);
    assert_int_equal(etl_image_id_decode(span(o, sizeof o), 8, NULL), ETL_E_INVALID_ARG);
}

/* --------------------------------------------------------------------- DbgID */

static size_t build_dbgid(uint8_t *b, unsigned opcode, unsigned ps, const char *pdb)
{
    put(b, base_of(ps), ps);
    put(b + ps, 0xF94, 4);
    if (opcode == ETL_IMAGE_ID_DBGID_NONE) return ps + 4u;
    memcpy(b + ps + 4, guid_bytes, 16);
    put(b + ps + 20, 2, 4);
    size_t n = strlen(pdb) + 1;
    memcpy(b + ps + 24, pdb, n);
    return ps + 24u + n;
}

static void test_dbgid(void **state)
{
    (void)state;
    static const char pdb[] = "wntdll.pdb";
    static const unsigned opcodes[3] = {ETL_IMAGE_ID_DBGID_NONE, ETL_IMAGE_ID_DBGID_RSDS,
                                        ETL_IMAGE_ID_DBGID_ILRSDS};
    for (unsigned o = 0; o < 3; o++) {
        unsigned op = opcodes[o];
        bool rsds = op != ETL_IMAGE_ID_DBGID_NONE;
        for (unsigned k = 0; k < 2; k++) {
            unsigned ps = ptr_sizes[k];
            uint8_t b[128];
            size_t n = build_dbgid(b, op, ps, pdb), fixed = ps + 4u + (rsds ? 20 : 0);
            for (size_t cut = 0; cut <= n; cut++) {
                uint8_t *c = exact_copy(b, cut);
                etl_image_dbgid d;
                etl_status st = etl_image_dbgid_decode(span(c, cut), op, ps, &d);
                if (cut < fixed) {
                    assert_int_equal(st, ETL_E_TRUNCATED);
                    free(c);
                    continue;
                }
                assert_int_equal(st, ETL_OK);
                assert_true(d.image_base == base_of(ps));
                assert_int_equal(d.process_id, 0xF94);
                assert_int_equal(d.has_rsds, rsds);
                if (rsds) {
                    assert_int_equal(d.guid_sig.data1, 0xec83d8df);
                    assert_int_equal(d.guid_sig.data2, 0x5559);
                    assert_int_equal(d.guid_sig.data3, 0x46e0);
                    assert_memory_equal(d.guid_sig.data4, guid_bytes + 8, 8);
                    char g[37];
                    etl_guid_format(&d.guid_sig, g);
                    assert_string_equal(g, "ec83d8df-5559-46e0-b630-133ebd979266");
                    assert_int_equal(d.age, 2);
                    assert_int_equal(d.pdb_file_name.terminated, cut == n);
                } else {
                    assert_int_equal(d.pdb_file_name.text.n, 0);
                }
                if (cut == n) {
                    if (rsds) assert_true(text_is(&d.pdb_file_name, pdb, 1));
                    uint8_t out[128];
                    size_t len;
                    assert_int_equal(etl_image_dbgid_encode(&d, op, ps, NULL, 0, &len), ETL_E_RANGE);
                    assert_int_equal(len, n);
                    assert_int_equal(etl_image_dbgid_encode(&d, op, ps, out, sizeof out, &len), ETL_OK);
                    assert_int_equal(len, n);
                    assert_memory_equal(out, b, n);
                }
                free(c);
            }
        }
    }
    /* Another opcode is no DbgID layout; a base past 32 bits; a PDB name with a NUL inside. */
    etl_image_dbgid d = {0};
    uint8_t out[64];
    size_t len = 1;
    assert_int_equal(etl_image_dbgid_decode(span(out, sizeof out), 0x26, 8, &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_image_dbgid_encode(&d, ETL_IMAGE_ID_INFO, 8, out, sizeof out, &len), ETL_E_INVALID_ARG);
    d.image_base = 0x100000000ull;
    assert_int_equal(etl_image_dbgid_encode(&d, ETL_IMAGE_ID_DBGID_NONE, 4, out, sizeof out, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
    assert_int_equal(etl_image_dbgid_encode(&d, ETL_IMAGE_ID_DBGID_NONE, 8, out, sizeof out, &len), ETL_OK);
    assert_int_equal(len, 12);
    d.pdb_file_name.text = span((const uint8_t *)"a\0b", 3);
    assert_int_equal(etl_image_dbgid_encode(&d, ETL_IMAGE_ID_DBGID_RSDS, 8, out, sizeof out, &len), ETL_E_RANGE);
}

/* --------------------------------------------------------------- FileVersion */

static const char *const fv_text[ETL_IMAGE_FILE_VERSION_STRINGS] = {
    "ntdll.dll", "NT Layer DLL", "6.2.9200.16384 (win8_rtm.120725-1247)", "6.2.9200.16384", "1033",
    "Microsoft Windows Operating System", "Microsoft Corporation", "6.2.9200.16384", "", ""};

static size_t build_file_version(uint8_t *b, size_t *ends)
{
    put(b, 0x157000, 4);
    put(b + 4, 0x5010AE7A, 4);
    size_t n = 8;
    for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) {
        n += eb_utf16z(b + n, fv_text[i]);
        ends[i] = n;
    }
    return n;
}

static void test_file_version(void **state)
{
    (void)state;
    static const char *const keys[ETL_IMAGE_FILE_VERSION_STRINGS] = {
        "OrigFileName", "FileDescription", "FileVersion", "BinFileVersion", "VerLanguage",
        "ProductName",  "CompanyName",     "ProductVersion", "FileId",      "ProgramId"};
    for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++)
        assert_string_equal(etl_image_file_version_key(i), keys[i]);
    assert_null(etl_image_file_version_key(ETL_IMAGE_FILE_VERSION_STRINGS));
    uint8_t b[512];
    size_t ends[ETL_IMAGE_FILE_VERSION_STRINGS];
    size_t n = build_file_version(b, ends);
    for (size_t cut = 0; cut <= n; cut++) {
        uint8_t *c = exact_copy(b, cut);
        etl_image_file_version v;
        etl_status st = etl_image_file_version_decode(span(c, cut), &v);
        if (cut < 8) {
            assert_int_equal(st, ETL_E_TRUNCATED);
            free(c);
            continue;
        }
        assert_int_equal(st, ETL_OK);
        assert_int_equal(v.image_size, 0x157000);
        assert_int_equal(v.time_date_stamp, 0x5010AE7A);
        /* The strings that end before the cut are whole; the one it cuts is unterminated; none after it. */
        bool cut_seen = false;
        for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) {
            if (ends[i] <= cut) {
                assert_true(v.strings[i].terminated);
                assert_true(text_is(&v.strings[i], fv_text[i], 2));
            } else {
                assert_false(v.strings[i].terminated);
                if (cut_seen) assert_int_equal(v.strings[i].text.n, 0);
                cut_seen = true;
            }
        }
        if (cut == n) {
            uint8_t o[512];
            size_t len;
            assert_int_equal(etl_image_file_version_encode(&v, NULL, 0, &len), ETL_E_RANGE);
            assert_int_equal(len, n);
            assert_int_equal(etl_image_file_version_encode(&v, o, sizeof o, &len), ETL_OK);
            assert_int_equal(len, n);
            assert_memory_equal(o, b, n);
        }
        free(c);
    }
    /* An empty struct encodes as ten empty strings; an odd-length string does not encode. */
    etl_image_file_version v = {0};
    uint8_t o[64];
    size_t len = 1;
    assert_int_equal(etl_image_file_version_encode(&v, o, sizeof o, &len), ETL_OK);
    assert_int_equal(len, 8 + 2 * ETL_IMAGE_FILE_VERSION_STRINGS);
    v.strings[9].text = span((const uint8_t *)"abc", 3);
    assert_int_equal(etl_image_file_version_encode(&v, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
}

/* ------------------------------------------------------------- HypercallPage */

static void test_hypercall_page(void **state)
{
    (void)state;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        uint8_t b[8];
        uint64_t va = ps == 8 ? 0xFFFFFFFFFFD03000ull : 0xFFD03000u;
        put(b, va, ps);
        for (size_t cut = 0; cut <= ps; cut++) {
            uint8_t *c = exact_copy(b, cut);
            etl_image_hypercall_page h;
            etl_status st = etl_image_hypercall_page_decode(span(c, cut), ps, &h);
            assert_int_equal(st, cut < ps ? ETL_E_TRUNCATED : ETL_OK);
            if (st == ETL_OK) {
                assert_true(h.hypercall_page_va == va);
                uint8_t o[8];
                size_t len;
                assert_int_equal(etl_image_hypercall_page_encode(&h, ps, NULL, 0, &len), ETL_E_RANGE);
                assert_int_equal(len, ps);
                assert_int_equal(etl_image_hypercall_page_encode(&h, ps, o, sizeof o, &len), ETL_OK);
                assert_int_equal(len, ps);
                assert_memory_equal(o, b, ps);
            }
            free(c);
        }
    }
    etl_image_hypercall_page h = {0x100000000ull};
    uint8_t o[8];
    size_t len = 1;
    assert_int_equal(etl_image_hypercall_page_encode(&h, 4, o, sizeof o, &len), ETL_E_RANGE);
    assert_int_equal(len, 0);
}

/* ------------------------------------------------------ etl_event_decode */

static const eb_guid image_id_provider = {0xb3e675d7, 0x2554, 0x4f18, {0x83, 0x0b, 0x27, 0x62, 0x73, 0x25, 0x60, 0xde}};
static const eb_guid image_group = {0x2cb15d1d, 0x5fc1, 0x11d2, {0xab, 0xe1, 0x00, 0xa0, 0xc9, 0x11, 0xf5, 0x18}};

/* A FULL_HEADER record framed, and etl_event_decode's result on it. */
static etl_status decode_full(uint8_t htype, const eb_guid *g, uint8_t opcode, uint16_t version, const uint8_t *p,
                              size_t n, eb_rec *r, etl_event *ev)
{
    eb_full f = {0};
    f.htype = htype;
    f.type = opcode;
    f.version = version;
    f.tid = 0xFFFFFFFF;
    f.pid = 0xF94;
    f.ts = 1942894963;
    f.guid = *g;
    f.payload = p;
    f.payload_n = n;
    eb_rec_full(r, &f);
    etl_record rec;
    size_t next;
    assert_int_equal(etl_record_frame(span(r->b, r->n), 0, &rec, &next), ETL_OK);
    assert_int_equal(rec.pointer_size, htype == 0x14 ? 8 : 4);
    return etl_event_decode(&rec, ev);
}

static void test_event_decode(void **state)
{
    (void)state;
    const etl_guid *g = etl_image_id_guid();
    char gs[37];
    etl_guid_format(g, gs);
    assert_string_equal(gs, "b3e675d7-2554-4f18-830b-2762732560de");
    static eb_rec r;
    etl_event ev;
    uint8_t b[512];
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        uint8_t htype = ps == 8 ? 0x14 : 0x0A;
        size_t n = build_image_id(b, ps, "ntdll.dll");
        assert_int_equal(decode_full(htype, &image_id_provider, 0x00, 2, b, n, &r, &ev), ETL_OK);
        assert_int_equal(ev.kind, ETL_EVENT_IMAGE_ID);
        assert_int_equal(ev.hook, 0);
        assert_int_equal(ev.version, 2);
        assert_true(ev.u.image_id.image_base == base_of(ps));
        assert_true(text_is(&ev.u.image_id.original_file_name, "ntdll.dll", 2));
        static const struct {
            uint8_t opcode;
            etl_event_kind kind;
        } dbg[3] = {{0x20, ETL_EVENT_IMAGE_DBGID_NONE}, {0x24, ETL_EVENT_IMAGE_DBGID_RSDS},
                    {0x25, ETL_EVENT_IMAGE_DBGID_ILRSDS}};
        for (unsigned i = 0; i < 3; i++) {
            n = build_dbgid(b, dbg[i].opcode, ps, "ntdll.pdb");
            assert_int_equal(decode_full(htype, &image_id_provider, dbg[i].opcode, 2, b, n, &r, &ev), ETL_OK);
            assert_int_equal(ev.kind, dbg[i].kind);
            assert_true(ev.u.dbgid.image_base == base_of(ps));
            assert_int_equal(ev.u.dbgid.has_rsds, dbg[i].opcode != 0x20);
            /* One byte short of the fixed part: the kind is set, the status says why. */
            size_t fixed = ps + 4u + (dbg[i].opcode != 0x20 ? 20 : 0);
            assert_int_equal(decode_full(htype, &image_id_provider, dbg[i].opcode, 2, b, fixed - 1, &r, &ev),
                             ETL_E_TRUNCATED);
            assert_int_equal(ev.kind, dbg[i].kind);
            assert_int_equal(ev.status, ETL_E_TRUNCATED);
        }
        size_t ends[ETL_IMAGE_FILE_VERSION_STRINGS];
        n = build_file_version(b, ends);
        assert_int_equal(decode_full(htype, &image_id_provider, 0x40, 0, b, n, &r, &ev), ETL_OK);
        assert_int_equal(ev.kind, ETL_EVENT_IMAGE_FILE_VERSION);
        assert_int_equal(ev.version, 0);
        assert_true(text_is(&ev.u.file_version.strings[6], "Microsoft Corporation", 2));
        /* An opcode of the provider without a codec (DbgPPDB 0x26), and another provider's opcode 0x24. */
        assert_int_equal(decode_full(htype, &image_id_provider, 0x26, 2, b, 16, &r, &ev), ETL_END);
        assert_int_equal(ev.kind, ETL_EVENT_OTHER);
        eb_guid other = image_id_provider;
        other.d4[7] ^= 1;
        assert_int_equal(decode_full(htype, &other, 0x24, 2, b, 64, &r, &ev), ETL_END);
        assert_int_equal(ev.kind, ETL_EVENT_OTHER);
        /* The classic Image group GUID: Vista's Load (10) as Image/Load, v1 (no TimeDateStamp). */
        put(b, base_of(ps), ps);
        put(b + ps, 0x1000, ps);
        put(b + 2 * ps, 2860, 4);
        n = 2 * (size_t)ps + 4 + eb_utf16z(b + 2 * ps + 4, "C:\\Windows\\system32\\ntdll.dll");
        assert_int_equal(decode_full(htype, &image_group, 10, 1, b, n, &r, &ev), ETL_OK);
        assert_int_equal(ev.kind, ETL_EVENT_IMAGE);
        assert_int_equal(ev.hook, ETL_HOOK_IMAGE_LOAD);
        assert_int_equal(ev.u.image.process_id, 2860);
        assert_int_equal(ev.u.image.known, 0);
        assert_true(text_is(&ev.u.image.file_name, "C:\\Windows\\system32\\ntdll.dll", 2));
        assert_int_equal(decode_full(htype, &image_group, 34, 2, b, ps, &r, &ev), ETL_OK);
        assert_int_equal(ev.kind, ETL_EVENT_IMAGE_HYPERCALL_PAGE);
        assert_true(ev.u.hypercall_page.hypercall_page_va == base_of(ps));
    }
    assert_true(etl_event_hook_decodes(ETL_HOOK_IMAGE_HYPERCALL_PAGE));
    assert_string_equal(etl_hook_name(0x1422), "Image/HypercallPage");
    assert_int_equal(etl_hook_by_name("Image/HypercallPage"), 0x1422);
    assert_int_equal(etl_hook_by_name("HypercallPage"), 0x1422);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_image_id),     cmocka_unit_test(test_dbgid),
        cmocka_unit_test(test_file_version), cmocka_unit_test(test_hypercall_page),
        cmocka_unit_test(test_event_decode),
    };
    return cmocka_run_group_tests_name("kernel_image_id", tests, NULL, NULL);
}

/*
 * test_record.c - etl_record_frame and etl_record_next_ext over hand-built records
 * of every header type (container.md §3-4), and every way framing must fail.
 *
 * Records are laid out by etlbuild.h at buffer offset 0x48 after a header of junk
 * (0xEE); the span handed to the framer ends at the record's padded end unless a
 * test says otherwise. Expected values are the bytes the test wrote.
 */
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "etlbuild.h"
#include "etlkit/container.h"

/* A buffer holding one record at 0x48. */
typedef struct tbuf {
    uint8_t b[0x48 + EB_REC_MAX + 64];
    size_t n; /* span length handed to the framer */
} tbuf;

static void tbuf_put(tbuf *t, const eb_rec *r)
{
    memset(t->b, 0xFF, sizeof t->b);
    memset(t->b, 0xEE, 0x48);
    memcpy(t->b + 0x48, r->b, r->n);
    size_t padded = (r->n + 7u) & ~(size_t)7u;
    memset(t->b + 0x48 + r->n, 0, padded - r->n);
    t->n = 0x48 + padded;
}

static etl_status frame(tbuf *t, etl_record *r, size_t *next)
{
    etl_span s = {t->b, t->n};
    *next = 0xDEAD;
    return etl_record_frame(s, 0x48, r, next);
}

static const eb_guid G1 = {0x3d6fa8d1, 0xfe05, 0x11d0, {0x9d, 0xda, 0x00, 0xc0, 0x4f, 0xd7, 0xba, 0x7c}};
static const eb_guid G2 = {0x9e814aad, 0x3204, 0x11d2, {0x9a, 0x82, 0x00, 0x60, 0x08, 0xa8, 0x69, 0x39}};
static const eb_guid G3 = {0x01020304, 0x0506, 0x0708, {0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}};

static void assert_guid(const etl_guid *g, const eb_guid *e)
{
    assert_int_equal(g->data1, e->d1);
    assert_int_equal(g->data2, e->d2);
    assert_int_equal(g->data3, e->d3);
    assert_memory_equal(g->data4, e->d4, 8);
}

static void assert_guid_zero(const etl_guid *g)
{
    static const etl_guid z;
    assert_memory_equal(g, &z, sizeof z);
}

static const uint8_t PAYLOAD[24] = {0x10, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1a, 0x1b,
                                    0x1c, 0x1d, 0x1e, 0x1f, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27};

/* ------------------------------------------------------------------------- */
/* SYSTEM / COMPACT / PERFINFO                                                */

static void check_system(uint8_t htype, uint8_t ptr)
{
    tbuf t;
    eb_rec rec;
    eb_kernel k = {.htype = htype, .version_word = 3, .hook = 0x0524, .tid = 0x1234, .pid = 0x5678,
                   .ts = 0x0102030405060708ull, .ktime = 0xAAAA0001, .utime = 0xBBBB0002,
                   .payload = PAYLOAD, .payload_n = 21};
    eb_rec_kernel(&rec, &k);
    assert_int_equal(rec.n, 0x20 + 21);
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_ptr_equal(r.data, t.b + 0x48);
    assert_int_equal(r.size, 0x35);
    assert_int_equal(r.offset, 0x48);
    assert_int_equal(r.htype, htype);
    assert_int_equal(r.marker_flags, 0xC0);
    assert_int_equal(r.pointer_size, ptr);
    assert_int_equal(r.version_word, 3);
    assert_int_equal(r.version, 3);
    assert_int_equal(r.hook, 0x0524);
    assert_int_equal(r.tid, 0x1234);
    assert_int_equal(r.pid, 0x5678);
    assert_int_equal(r.ts, 0x0102030405060708ull);
    assert_int_equal(r.kernel_time, 0xAAAA0001);
    assert_int_equal(r.user_time, 0xBBBB0002);
    assert_int_equal(r.has, ETL_REC_HOOK | ETL_REC_TID | ETL_REC_TS | ETL_REC_VERSION | ETL_REC_CPU_TIME);
    assert_int_equal(r.pmc_count, 0);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x20);
    assert_int_equal(r.payload.n, 21);
    assert_memory_equal(r.payload.p, PAYLOAD, 21);
    assert_int_equal(r.ext.n, 0);
    assert_int_equal(next, 0x48 + 0x38); /* 0x35 rounded up to 8 */
}

static void test_frame_system32(void **state)
{
    (void)state;
    check_system(0x01, 4);
}

static void test_frame_system64(void **state)
{
    (void)state;
    check_system(0x02, 8);
}

static void check_compact(uint8_t htype, uint8_t ptr)
{
    tbuf t;
    eb_rec rec;
    eb_kernel k = {.htype = htype, .version_word = 2, .hook = 0x0525, .tid = 77, .pid = 88,
                   .ts = 0xFEDCBA9876543210ull, .payload = PAYLOAD, .payload_n = 16};
    eb_rec_kernel(&rec, &k);
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.size, 0x18 + 16);
    assert_int_equal(r.htype, htype);
    assert_int_equal(r.pointer_size, ptr);
    assert_int_equal(r.hook, 0x0525);
    assert_int_equal(r.version, 2);
    assert_int_equal(r.tid, 77);
    assert_int_equal(r.pid, 88);
    assert_int_equal(r.ts, 0xFEDCBA9876543210ull);
    assert_int_equal(r.has, ETL_REC_HOOK | ETL_REC_TID | ETL_REC_TS | ETL_REC_VERSION);
    assert_int_equal(r.kernel_time, 0);
    assert_int_equal(r.user_time, 0);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x18);
    assert_int_equal(r.payload.n, 16);
    assert_memory_equal(r.payload.p, PAYLOAD, 16);
    assert_int_equal(next, 0x48 + 0x28);
}

static void test_frame_compact32(void **state)
{
    (void)state;
    check_compact(0x03, 4);
}

static void test_frame_compact64(void **state)
{
    (void)state;
    check_compact(0x04, 8);
}

static void check_perfinfo_plain(uint8_t htype, uint8_t ptr)
{
    tbuf t;
    eb_rec rec;
    eb_kernel k = {.htype = htype, .version_word = 4, .hook = 0x0F2E, .ts = 0x1122334455667788ull,
                   .payload = PAYLOAD, .payload_n = 8};
    eb_rec_kernel(&rec, &k);
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.size, 0x18);
    assert_int_equal(r.htype, htype);
    assert_int_equal(r.pointer_size, ptr);
    assert_int_equal(r.hook, 0x0F2E);
    assert_int_equal(r.version, 4);
    assert_int_equal(r.ts, 0x1122334455667788ull);
    assert_int_equal(r.has, ETL_REC_HOOK | ETL_REC_TS | ETL_REC_VERSION);
    assert_int_equal(r.tid, 0);
    assert_int_equal(r.pid, 0);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x10);
    assert_int_equal(r.payload.n, 8);
    assert_memory_equal(r.payload.p, PAYLOAD, 8);
    assert_int_equal(next, 0x48 + 0x18);
}

static void test_frame_perfinfo32(void **state)
{
    (void)state;
    check_perfinfo_plain(0x10, 4);
}

static void test_frame_perfinfo64(void **state)
{
    (void)state;
    check_perfinfo_plain(0x11, 8);
}

/* PEBS index (0x8000) then n PMC counters (Version bits 0x0700), before the payload. */
static void test_frame_perfinfo_pebs_pmc(void **state)
{
    (void)state;
    for (unsigned n = 0; n <= 7; n++) {
        for (int pebs = 0; pebs <= 1; pebs++) {
            for (int h = 0; h < 2; h++) {
                uint8_t htype = h ? 0x11 : 0x10;
                uint8_t ext[8 + 7 * 8];
                size_t en = 0;
                if (pebs) {
                    eb_w64(ext, 0xC0FFEE0000000000ull | n);
                    en = 8;
                }
                for (unsigned i = 0; i < n; i++, en += 8) eb_w64(ext + en, 0x1000000000ull * (i + 1) + n);
                uint16_t vw = (uint16_t)(0x02 | (n << 8) | (pebs ? 0x8000 : 0));
                eb_kernel k = {.htype = htype, .version_word = vw, .hook = 0x0F2F, .ts = 99,
                               .ext = ext, .ext_n = en, .payload = PAYLOAD, .payload_n = 12};
                eb_rec rec;
                eb_rec_kernel(&rec, &k);
                tbuf t;
                tbuf_put(&t, &rec);
                etl_record r;
                size_t next;
                assert_int_equal(frame(&t, &r, &next), ETL_OK);
                assert_int_equal(r.version_word, vw);
                assert_int_equal(r.version, 2);
                assert_int_equal(r.pmc_count, n);
                uint32_t want_has = ETL_REC_HOOK | ETL_REC_TS | ETL_REC_VERSION;
                if (n) want_has |= ETL_REC_PMC;
                if (pebs) want_has |= ETL_REC_PEBS;
                assert_int_equal(r.has, want_has);
                if (pebs) assert_int_equal(r.pebs_index, 0xC0FFEE0000000000ull | n);
                else assert_int_equal(r.pebs_index, 0);
                for (unsigned i = 0; i < n; i++)
                    assert_int_equal(etl_record_pmc(&r, i), 0x1000000000ull * (i + 1) + n);
                assert_int_equal(etl_record_pmc(&r, n), 0); /* past the last counter */
                size_t poff = 0x10 + (pebs ? 8 : 0) + 8u * n;
                assert_ptr_equal(r.payload.p, t.b + 0x48 + poff);
                assert_int_equal(r.payload.n, 12);
                assert_memory_equal(r.payload.p, PAYLOAD, 12);
                assert_int_equal(r.size, poff + 12);
                assert_int_equal(next, 0x48 + ((poff + 12 + 7) & ~7u));
            }
        }
    }
}

/* The spare bits 0x0800-0x4000 are masked off the version too (pitfall 2). */
static void test_frame_version_spare_bits(void **state)
{
    (void)state;
    eb_kernel k = {.htype = 0x11, .version_word = 0x7803, .hook = 0x0F2E, .ts = 5,
                   .payload = PAYLOAD, .payload_n = 8};
    eb_rec rec;
    eb_rec_kernel(&rec, &k);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.version, 3);
    assert_int_equal(r.version_word, 0x7803);
    assert_int_equal(r.pmc_count, 0);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x10);
}

/* The safe rule: PMC/PEBS bits are honoured on SYSTEM and COMPACT headers as well. */
static void test_frame_system_compact_pmc(void **state)
{
    (void)state;
    const uint8_t types[] = {0x01, 0x02, 0x03, 0x04};
    for (size_t i = 0; i < sizeof types; i++) {
        uint8_t ext[24];
        eb_w64(ext, 0xAB);        /* PEBS */
        eb_w64(ext + 8, 0x1111);  /* PMC 0 */
        eb_w64(ext + 16, 0x2222); /* PMC 1 */
        eb_kernel k = {.htype = types[i], .version_word = 0x8202, .hook = 0x0524, .tid = 1, .pid = 2,
                       .ts = 3, .ext = ext, .ext_n = 24, .payload = PAYLOAD, .payload_n = 4};
        eb_rec rec;
        eb_rec_kernel(&rec, &k);
        tbuf t;
        tbuf_put(&t, &rec);
        etl_record r;
        size_t next;
        assert_int_equal(frame(&t, &r, &next), ETL_OK);
        size_t fixed = types[i] <= 2 ? 0x20 : 0x18;
        assert_int_equal(r.version, 2);
        assert_int_equal(r.pebs_index, 0xAB);
        assert_int_equal(r.pmc_count, 2);
        assert_int_equal(etl_record_pmc(&r, 0), 0x1111);
        assert_int_equal(etl_record_pmc(&r, 1), 0x2222);
        assert_ptr_equal(r.payload.p, t.b + 0x48 + fixed + 24);
        assert_int_equal(r.payload.n, 4);
        assert_int_equal(r.tid, 1);
        assert_int_equal(r.pid, 2);
    }
}

/* Extended items that run past Size make the record unframeable. */
static void test_frame_pmc_past_size(void **state)
{
    (void)state;
    uint8_t ext[64] = {0};
    /* 3 counters announced, 2 present and no payload. */
    eb_kernel k = {.htype = 0x11, .version_word = 0x0302, .hook = 0x0F2F, .ts = 1, .ext = ext, .ext_n = 16};
    eb_rec rec;
    eb_rec_kernel(&rec, &k);
    tbuf t;
    tbuf_put(&t, &rec);
    t.n += 64; /* bytes are there in the buffer, but not inside Size */
    etl_record r;
    size_t next;
    etl_status st = frame(&t, &r, &next);
    assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);

    /* PEBS announced on a bare header. */
    eb_kernel k2 = {.htype = 0x10, .version_word = 0x8002, .hook = 0x0F2F, .ts = 1};
    eb_rec_kernel(&rec, &k2);
    tbuf_put(&t, &rec);
    t.n += 64;
    st = frame(&t, &r, &next);
    assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);

    /* PEBS present, 1 PMC announced, 4 bytes of it present. */
    eb_kernel k3 = {.htype = 0x02, .version_word = 0x8102, .hook = 0x0524, .ts = 1, .ext = ext, .ext_n = 12};
    eb_rec_kernel(&rec, &k3);
    tbuf_put(&t, &rec);
    t.n += 64;
    st = frame(&t, &r, &next);
    assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);

    /* Exactly fitting: 7 counters + PEBS, no payload. */
    uint8_t ext8[64];
    for (int i = 0; i < 8; i++) eb_w64(ext8 + 8 * i, (uint64_t)i + 100);
    eb_kernel k4 = {.htype = 0x11, .version_word = 0x8701, .hook = 0x0F2F, .ts = 1, .ext = ext8, .ext_n = 64};
    eb_rec_kernel(&rec, &k4);
    tbuf_put(&t, &rec);
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.pebs_index, 100);
    assert_int_equal(r.pmc_count, 7);
    assert_int_equal(etl_record_pmc(&r, 6), 107);
    assert_int_equal(r.payload.n, 0);
    assert_int_equal(next, 0x48 + 0x50);
}

/* ------------------------------------------------------------------------- */
/* FULL_HEADER and INSTANCE                                                    */

static void check_full(uint8_t htype, uint8_t ptr, bool inst)
{
    eb_full f = {.htype = htype, .type = 0x24, .level = 4, .version = 0x0102, .tid = 0x99, .pid = 0x88,
                 .ts = 0x0A0B0C0D0E0F1011ull, .guid = G1, .ktime = 7, .utime = 9,
                 .instance_id = 0x51, .parent_instance_id = 0x52, .parent_guid = G2,
                 .payload = PAYLOAD, .payload_n = 13};
    eb_rec rec;
    eb_rec_full(&rec, &f);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    size_t fixed = inst ? 0x48 : 0x30;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.htype, htype);
    assert_int_equal(r.size, fixed + 13);
    assert_int_equal(r.pointer_size, ptr);
    assert_int_equal(r.opcode, 0x24);
    assert_int_equal(r.level, 4);
    assert_int_equal(r.version, 0x0102);
    assert_int_equal(r.tid, 0x99);
    assert_int_equal(r.pid, 0x88);
    assert_int_equal(r.ts, 0x0A0B0C0D0E0F1011ull);
    assert_guid(&r.provider, &G1);
    assert_int_equal(r.kernel_time, 7);
    assert_int_equal(r.user_time, 9);
    uint32_t want = ETL_REC_OPCODE | ETL_REC_LEVEL | ETL_REC_VERSION | ETL_REC_TID | ETL_REC_TS |
                    ETL_REC_PROVIDER | ETL_REC_CPU_TIME;
    if (inst) {
        want |= ETL_REC_INSTANCE;
        assert_int_equal(r.instance_id, 0x51);
        assert_int_equal(r.parent_instance_id, 0x52);
        assert_guid(&r.parent_guid, &G2);
    } else {
        assert_int_equal(r.instance_id, 0);
        assert_guid_zero(&r.parent_guid);
    }
    assert_int_equal(r.has, want);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + fixed);
    assert_int_equal(r.payload.n, 13);
    assert_memory_equal(r.payload.p, PAYLOAD, 13);
    assert_int_equal(next, 0x48 + ((fixed + 13 + 7) & ~7u));
}

static void test_frame_full32(void **state)
{
    (void)state;
    check_full(0x0A, 4, false);
}

static void test_frame_full64(void **state)
{
    (void)state;
    check_full(0x14, 8, false);
}

static void test_frame_instance32(void **state)
{
    (void)state;
    check_full(0x0B, 4, true);
}

static void test_frame_instance64(void **state)
{
    (void)state;
    check_full(0x15, 8, true);
}

/* ------------------------------------------------------------------------- */
/* EVENT_HEADER                                                                */

static eb_evh evh_base(uint8_t htype)
{
    eb_evh e = {.htype = htype, .flags = 0x0040, .property = 0x0002, .tid = 0x2345, .pid = 0x6789,
                .ts = 0x7766554433221100ull, .provider = G1, .id = 0x1234, .version = 5, .channel = 0x10,
                .level = 4, .opcode = 0x22, .task = 0x4321, .keyword = 0x8000000000000011ull,
                .ktime = 0x55, .utime = 0x66, .activity = G3, .payload = PAYLOAD, .payload_n = 20};
    return e;
}

static void check_evh_fields(const etl_record *r, uint8_t htype)
{
    assert_int_equal(r->htype, htype);
    assert_int_equal(r->event_property, 0x0002);
    assert_int_equal(r->tid, 0x2345);
    assert_int_equal(r->pid, 0x6789);
    assert_int_equal(r->ts, 0x7766554433221100ull);
    assert_guid(&r->provider, &G1);
    assert_int_equal(r->id, 0x1234);
    assert_int_equal(r->version, 5);
    assert_int_equal(r->channel, 0x10);
    assert_int_equal(r->level, 4);
    assert_int_equal(r->opcode, 0x22);
    assert_int_equal(r->task, 0x4321);
    assert_int_equal(r->keyword, 0x8000000000000011ull);
    assert_int_equal(r->kernel_time, 0x55);
    assert_int_equal(r->user_time, 0x66);
    assert_guid(&r->activity_id, &G3);
    assert_int_equal(r->has, ETL_REC_TID | ETL_REC_TS | ETL_REC_PROVIDER | ETL_REC_ID | ETL_REC_OPCODE |
                                 ETL_REC_VERSION | ETL_REC_LEVEL | ETL_REC_KEYWORD | ETL_REC_ACTIVITY |
                                 ETL_REC_CPU_TIME);
}

static void check_evh_plain(uint8_t htype)
{
    eb_evh e = evh_base(htype);
    eb_rec rec;
    eb_rec_evh(&rec, &e);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    check_evh_fields(&r, htype);
    assert_int_equal(r.event_flags, 0x0040);
    assert_int_equal(r.pointer_size, 8); /* EVENT_HEADER_FLAG_64_BIT_HEADER */
    assert_int_equal(r.size, 0x50 + 20);
    assert_int_equal(r.ext.n, 0);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x50);
    assert_int_equal(r.payload.n, 20);
    assert_memory_equal(r.payload.p, PAYLOAD, 20);
    assert_int_equal(next, 0x48 + 0x68);
    size_t pos = 0;
    etl_ext_item it;
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_END);

    /* 32-bit header flag: pointer size 4, whatever the header type. */
    e.flags = 0x0020;
    eb_rec_evh(&rec, &e);
    tbuf_put(&t, &rec);
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.pointer_size, 4);
    assert_int_equal(r.event_flags, 0x0020);
}

static void test_frame_event_header32(void **state)
{
    (void)state;
    check_evh_plain(0x12);
    /* No bitness flag: the header type says. */
    eb_evh e = evh_base(0x12);
    e.flags = 0;
    eb_rec rec;
    eb_rec_evh(&rec, &e);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.pointer_size, 4);
}

static void test_frame_event_header64(void **state)
{
    (void)state;
    check_evh_plain(0x13);
    eb_evh e = evh_base(0x13);
    e.flags = 0;
    eb_rec rec;
    eb_rec_evh(&rec, &e);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.pointer_size, 8);
}

static void test_frame_event_header_one_ext(void **state)
{
    (void)state;
    uint8_t ext[256];
    size_t en = 0;
    const uint8_t sid[12] = {1, 1, 0, 0, 0, 0, 0, 5, 0x12, 0, 0, 0};
    eb_ext_item(ext, &en, 0x0005 /* EVENT_HEADER_EXT_TYPE_SID? any type */, false, sid, 12);
    assert_int_equal(en, 8 + 16);
    eb_evh e = evh_base(0x13);
    e.flags = 0x0041; /* EXTENDED_INFO | 64-bit */
    e.ext = ext;
    e.ext_n = en;
    eb_rec rec;
    eb_rec_evh(&rec, &e);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    check_evh_fields(&r, 0x13);
    assert_int_equal(r.size, 0x50 + 24 + 20);
    assert_ptr_equal(r.ext.p, t.b + 0x48 + 0x50);
    assert_int_equal(r.ext.n, 24);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x50 + 24);
    assert_int_equal(r.payload.n, 20);
    assert_memory_equal(r.payload.p, PAYLOAD, 20);
    assert_int_equal(next, 0x48 + 0x80);

    size_t pos = 0;
    etl_ext_item it;
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_OK);
    assert_int_equal(it.ext_type, 0x0005);
    assert_int_equal(it.data.n, 12);
    assert_ptr_equal(it.data.p, t.b + 0x48 + 0x58);
    assert_memory_equal(it.data.p, sid, 12);
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_END);
}

static void test_frame_event_header_two_ext(void **state)
{
    (void)state;
    uint8_t ext[256];
    size_t en = 0;
    const uint8_t d1[8] = {0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0xA6, 0xA7, 0xA8};
    const uint8_t d2[3] = {0xB1, 0xB2, 0xB3};
    size_t i1 = eb_ext_item(ext, &en, 0x000B /* PROCESS_START_KEY */, true, d1, 8);
    size_t i2 = eb_ext_item(ext, &en, 0x0006 /* STACK_TRACE64 */, false, d2, 3);
    assert_int_equal(i1, 0);
    assert_int_equal(i2, 16);
    assert_int_equal(en, 32);
    eb_evh e = evh_base(0x12);
    e.flags = 0x0021; /* EXTENDED_INFO | 32-bit */
    e.ext = ext;
    e.ext_n = en;
    eb_rec rec;
    eb_rec_evh(&rec, &e);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    check_evh_fields(&r, 0x12);
    assert_int_equal(r.pointer_size, 4);
    assert_int_equal(r.ext.n, 32);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 0x50 + 32);
    assert_int_equal(r.payload.n, 20);
    assert_memory_equal(r.payload.p, PAYLOAD, 20);

    size_t pos = 0;
    etl_ext_item it;
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_OK);
    assert_int_equal(it.ext_type, 0x000B);
    assert_int_equal(it.data.n, 8);
    assert_memory_equal(it.data.p, d1, 8);
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_OK);
    assert_int_equal(it.ext_type, 0x0006);
    assert_int_equal(it.data.n, 3);
    assert_ptr_equal(it.data.p, t.b + 0x48 + 0x50 + 16 + 8);
    assert_memory_equal(it.data.p, d2, 3);
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_END);
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_END);
}

/* The last ext item may end the record without a payload. */
static void test_frame_event_header_ext_no_payload(void **state)
{
    (void)state;
    uint8_t ext[64];
    size_t en = 0;
    const uint8_t d[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    eb_ext_item(ext, &en, 0x0001, false, d, 16);
    eb_evh e = evh_base(0x13);
    e.flags = 0x0041;
    e.ext = ext;
    e.ext_n = en;
    e.payload_n = 0;
    eb_rec rec;
    eb_rec_evh(&rec, &e);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.ext.n, 24);
    assert_int_equal(r.payload.n, 0);
    size_t pos = 0;
    etl_ext_item it;
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_OK);
    assert_memory_equal(it.data.p, d, 16);
    assert_int_equal(etl_record_next_ext(&r, &pos, &it), ETL_END);
}

static void test_frame_event_header_ext_bad(void **state)
{
    (void)state;
    etl_record r;
    size_t next;
    tbuf t;
    eb_rec rec;

    /* An item whose DataSize runs past the record (Size), bytes present after it. */
    {
        uint8_t ext[64] = {0};
        eb_w16(ext + 0, 8 + 64);
        eb_w16(ext + 2, 1);
        eb_w16(ext + 4, 0);
        eb_w16(ext + 6, 64); /* only 8 bytes of data inside the record */
        eb_evh e = evh_base(0x13);
        e.flags = 0x0041;
        e.ext = ext;
        e.ext_n = 16;
        e.payload_n = 0;
        eb_rec_evh(&rec, &e);
        tbuf_put(&t, &rec);
        t.n += 128;
        etl_status st = frame(&t, &r, &next);
        assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);
    }
    /* The first item says another follows, and the record ends. */
    {
        uint8_t ext[64];
        size_t en = 0;
        const uint8_t d[8] = {0};
        eb_ext_item(ext, &en, 1, true, d, 8);
        eb_evh e = evh_base(0x13);
        e.flags = 0x0041;
        e.ext = ext;
        e.ext_n = en;
        e.payload_n = 0;
        eb_rec_evh(&rec, &e);
        tbuf_put(&t, &rec);
        t.n += 128;
        etl_status st = frame(&t, &r, &next);
        assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);
    }
    /* EXTENDED_INFO set but the record is just the 0x50-byte header. */
    {
        eb_evh e = evh_base(0x12);
        e.flags = 0x0001;
        e.payload_n = 0;
        eb_rec_evh(&rec, &e);
        tbuf_put(&t, &rec);
        t.n += 128;
        etl_status st = frame(&t, &r, &next);
        assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);
    }
    /* Less than an item header (4 bytes) after the fixed header. */
    {
        uint8_t ext[4] = {8, 0, 1, 0};
        eb_evh e = evh_base(0x12);
        e.flags = 0x0001;
        e.ext = ext;
        e.ext_n = 4;
        e.payload_n = 0;
        eb_rec_evh(&rec, &e);
        tbuf_put(&t, &rec);
        t.n += 128;
        etl_status st = frame(&t, &r, &next);
        assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);
    }
}

/* ------------------------------------------------------------------------- */
/* WPP MESSAGE                                                                 */

static void test_frame_message_plain(void **state)
{
    (void)state;
    eb_msg m = {.number = 0x0A0B, .options = 0, .payload = PAYLOAD, .payload_n = 6};
    eb_rec rec;
    eb_rec_msg(&rec, &m);
    tbuf t;
    tbuf_put(&t, &rec);
    etl_record r;
    size_t next;
    assert_int_equal(frame(&t, &r, &next), ETL_OK);
    assert_int_equal(r.htype, ETL_HTYPE_MESSAGE);
    assert_int_equal(r.marker_flags, 0x90);
    assert_int_equal(r.size, 14);
    assert_int_equal(r.id, 0x0A0B);
    assert_int_equal(r.event_flags, 0);
    assert_int_equal(r.has, ETL_REC_ID);
    assert_ptr_equal(r.payload.p, t.b + 0x48 + 8);
    assert_int_equal(r.payload.n, 6);
    assert_int_equal(next, 0x48 + 16);
}

static void test_frame_message_options(void **state)
{
    (void)state;
    /* Every subset of {sequence, GUID | component id, timestamp, system info}. GUID and
     * component id are mutually exclusive (TraceMessage docs), so never both. */
    for (unsigned mask = 0; mask < 32; mask++) {
        uint16_t opt = 0;
        if (mask & 1) opt |= 0x1;
        if (mask & 2) opt |= 0x2;
        if (mask & 4) opt |= 0x8;
        if (mask & 8) opt |= 0x20;
        if ((mask & 16) && !(mask & 2)) opt |= 0x4;
        if ((mask & 16) && (mask & 2)) continue;
        eb_msg m = {.number = 7, .options = opt, .seq = 0x5EC, .guid = G2, .component = 0xC0C0,
                    .ts = 0x1234567890ABCDEFull, .tid = 0x71D, .pid = 0x91D, .payload = PAYLOAD,
                    .payload_n = 5};
        eb_rec rec;
        eb_rec_msg(&rec, &m);
        tbuf t;
        tbuf_put(&t, &rec);
        etl_record r;
        size_t next;
        assert_int_equal(frame(&t, &r, &next), ETL_OK);
        /* Offsets computed by hand: 8 + 4 (seq) + 16 (GUID) or 4 (component) + 8 (ts) + 8 (sysinfo). */
        size_t o = 8 + ((opt & 1) ? 4 : 0) + ((opt & 2) ? 16 : 0) + ((opt & 4) ? 4 : 0) + ((opt & 8) ? 8 : 0) +
                   ((opt & 0x20) ? 8 : 0);
        assert_int_equal(r.event_flags, opt);
        assert_int_equal(r.id, 7);
        assert_int_equal(r.size, o + 5);
        assert_ptr_equal(r.payload.p, t.b + 0x48 + o);
        assert_int_equal(r.payload.n, 5);
        assert_memory_equal(r.payload.p, PAYLOAD, 5);
        uint32_t has = ETL_REC_ID;
        if (opt & 2) {
            has |= ETL_REC_PROVIDER;
            assert_guid(&r.provider, &G2);
        }
        if (opt & 8) {
            has |= ETL_REC_TS;
            assert_int_equal(r.ts, 0x1234567890ABCDEFull);
        } else {
            assert_int_equal(r.ts, 0);
        }
        if (opt & 0x20) {
            has |= ETL_REC_TID;
            assert_int_equal(r.tid, 0x71D);
            assert_int_equal(r.pid, 0x91D);
        }
        assert_int_equal(r.has, has);
        assert_int_equal(next, 0x48 + ((o + 5 + 7) & ~7u));
    }
}

static void test_frame_message_short(void **state)
{
    (void)state;
    /* Options announce a timestamp and system info; Size covers only the timestamp. */
    eb_msg m = {.number = 1, .options = 0x28, .ts = 42, .tid = 1, .pid = 2};
    eb_rec rec;
    eb_rec_msg(&rec, &m);
    eb_w16(rec.b, 16); /* 8 + timestamp */
    tbuf t;
    tbuf_put(&t, &rec);
    t.n += 64;
    etl_record r;
    size_t next;
    etl_status st = frame(&t, &r, &next);
    assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);

    /* GUID announced in a 12-byte record. */
    eb_msg m2 = {.number = 1, .options = 0x2, .guid = G1};
    eb_rec_msg(&rec, &m2);
    eb_w16(rec.b, 12);
    tbuf_put(&t, &rec);
    t.n += 64;
    st = frame(&t, &r, &next);
    assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);

    /* Sequence announced in an 8-byte record. */
    eb_msg m3 = {.number = 1, .options = 0x1, .seq = 3};
    eb_rec_msg(&rec, &m3);
    eb_w16(rec.b, 8);
    tbuf_put(&t, &rec);
    t.n += 64;
    st = frame(&t, &r, &next);
    assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);
}

/* ------------------------------------------------------------------------- */
/* TIMED, ERROR                                                                */

static void test_frame_timed_error(void **state)
{
    (void)state;
    const uint8_t types[] = {0x0C, 0x0D};
    for (size_t i = 0; i < 2; i++) {
        eb_rec rec;
        memset(&rec, 0, sizeof rec);
        rec.n = 0x54;
        eb_w16(rec.b, 0x54);
        rec.b[2] = types[i];
        rec.b[3] = 0xC0;
        for (size_t j = 4; j < 0x54; j++) rec.b[j] = (uint8_t)j;
        tbuf t;
        tbuf_put(&t, &rec);
        etl_record r;
        size_t next;
        assert_int_equal(frame(&t, &r, &next), ETL_OK);
        assert_int_equal(r.htype, types[i]);
        assert_int_equal(r.size, 0x54);
        assert_int_equal(next, 0x48 + 0x58);
        /* The payload lies inside the record and ends with it. */
        assert_true(r.payload.p >= t.b + 0x48);
        assert_ptr_equal(r.payload.p + r.payload.n, t.b + 0x48 + 0x54);
    }
}

/* ------------------------------------------------------------------------- */
/* End of data and malformed records                                          */

static void test_frame_end_marker(void **state)
{
    (void)state;
    uint8_t b[0x100];
    memset(b, 0xFF, sizeof b);
    etl_record r;
    size_t next = 0x1234;
    etl_span s = {b, sizeof b};
    assert_int_equal(etl_record_frame(s, 0x48, &r, &next), ETL_END);
    assert_int_equal(next, 0x1234);

    /* Fewer than 4 bytes left: 0, 1, 2, 3 (whatever they hold). */
    memset(b, 0x00, sizeof b);
    for (size_t left = 0; left < 4; left++) {
        etl_span s2 = {b, 0x48 + left};
        assert_int_equal(etl_record_frame(s2, 0x48, &r, &next), ETL_END);
    }
    /* Offset past the span. */
    etl_span s3 = {b, 0x48};
    assert_int_equal(etl_record_frame(s3, 0x50, &r, &next), ETL_END);
}

static void test_frame_bad_sizes(void **state)
{
    (void)state;
    etl_record r;
    size_t next;
    tbuf t;
    eb_rec rec;
    /* size 0 and size < header for each header type that has a Size */
    struct {
        uint8_t htype;
        size_t fixed;
        bool at4;
    } ty[] = {{0x01, 0x20, true}, {0x02, 0x20, true}, {0x03, 0x18, true}, {0x04, 0x18, true},
              {0x10, 0x10, true}, {0x11, 0x10, true}, {0x0A, 0x30, false}, {0x14, 0x30, false},
              {0x0B, 0x48, false}, {0x15, 0x48, false}, {0x12, 0x50, false}, {0x13, 0x50, false}};
    for (size_t i = 0; i < sizeof ty / sizeof ty[0]; i++) {
        size_t sizes[] = {0, 8, ty[i].fixed - 1};
        for (size_t j = 0; j < 3; j++) {
            memset(&rec, 0, sizeof rec);
            rec.n = 0x60;
            rec.b[2] = ty[i].htype;
            rec.b[3] = 0xC0;
            eb_w16(rec.b + (ty[i].at4 ? 4 : 0), (uint16_t)sizes[j]);
            tbuf_put(&t, &rec);
            etl_status st = frame(&t, &r, &next);
            if (st != ETL_E_CORRUPT && st != ETL_E_TRUNCATED)
                fail_msg("htype 0x%02x size %zu: status %d", ty[i].htype, sizes[j], st);
        }
        /* Size exactly one past the span, and a huge one. */
        memset(&rec, 0, sizeof rec);
        rec.n = ty[i].fixed + 8;
        rec.b[2] = ty[i].htype;
        rec.b[3] = 0xC0;
        eb_w16(rec.b + (ty[i].at4 ? 4 : 0), (uint16_t)(ty[i].fixed + 9));
        tbuf_put(&t, &rec);
        assert_int_equal(t.n, 0x48 + ty[i].fixed + 8);
        assert_int_equal(frame(&t, &r, &next), ETL_E_TRUNCATED);
        eb_w16(t.b + 0x48 + (ty[i].at4 ? 4 : 0), 0xFFF8);
        assert_int_equal(frame(&t, &r, &next), ETL_E_TRUNCATED);
        /* ... and exactly fitting. */
        eb_w16(t.b + 0x48 + (ty[i].at4 ? 4 : 0), (uint16_t)(ty[i].fixed + 8));
        assert_int_equal(frame(&t, &r, &next), ETL_OK);
        assert_int_equal(next, t.n);
    }
    /* MESSAGE: size 0 and 7 */
    for (uint16_t sz = 0; sz < 8; sz += 7) {
        memset(&rec, 0, sizeof rec);
        rec.n = 0x20;
        eb_w16(rec.b, sz);
        rec.b[3] = 0x90;
        tbuf_put(&t, &rec);
        etl_status st = frame(&t, &r, &next);
        assert_true(st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED);
    }
    /* A SYSTEM header cut by the span: 4..7 bytes left with a real marker. */
    memset(&rec, 0, sizeof rec);
    rec.n = 0x20;
    eb_w16(rec.b + 0, 2);
    rec.b[2] = 0x02;
    rec.b[3] = 0xC0;
    eb_w16(rec.b + 4, 0x20);
    tbuf_put(&t, &rec);
    for (size_t left = 4; left < 0x20; left++) {
        t.n = 0x48 + left;
        etl_status st = frame(&t, &r, &next);
        if (st != ETL_E_CORRUPT && st != ETL_E_TRUNCATED) fail_msg("%zu bytes left: status %d", left, st);
    }
}

static void test_frame_unknown_type(void **state)
{
    (void)state;
    etl_record r;
    size_t next;
    tbuf t;
    eb_rec rec;
    /* Header types with no layout: 0x00, 0x05-0x09, WNODE 0x0E, 0x16+ */
    const uint8_t bad[] = {0x00, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0E, 0x16, 0x20, 0x7F, 0xFF};
    for (size_t i = 0; i < sizeof bad; i++) {
        memset(&rec, 0, sizeof rec);
        rec.n = 0x40;
        eb_w16(rec.b, 0x40);
        eb_w16(rec.b + 4, 0x40);
        rec.b[2] = bad[i];
        rec.b[3] = 0xC0;
        tbuf_put(&t, &rec);
        etl_status st = frame(&t, &r, &next);
        if (st != ETL_E_CORRUPT) fail_msg("htype 0x%02x: status %d", bad[i], st);
    }
    /* Bit 31 clear (a WNODE_HEADER or garbage), and 0x80 without EVENT_TRACE or MESSAGE. */
    const uint8_t flags[] = {0x00, 0x40, 0x80, 0x7F};
    for (size_t i = 0; i < sizeof flags; i++) {
        memset(&rec, 0, sizeof rec);
        rec.n = 0x40;
        eb_w16(rec.b, 0x40);
        eb_w16(rec.b + 4, 0x40);
        rec.b[2] = 0x02;
        rec.b[3] = flags[i];
        tbuf_put(&t, &rec);
        etl_status st = frame(&t, &r, &next);
        if (st != ETL_E_CORRUPT) fail_msg("flags 0x%02x: status %d", flags[i], st);
    }
}

/* Next offsets are 8-byte aligned and consecutive records frame in a row. */
static void test_frame_alignment_walk(void **state)
{
    (void)state;
    uint8_t b[0x800];
    memset(b, 0xFF, sizeof b);
    memset(b, 0, 0x48);
    size_t off = 0x48;
    size_t offs[16];
    for (unsigned i = 0; i < 16; i++) {
        eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = (uint16_t)(0x0F00 + i), .ts = 100 + i,
                       .payload = PAYLOAD, .payload_n = i}; /* sizes 0x10 .. 0x1F */
        eb_rec rec;
        eb_rec_kernel(&rec, &k);
        offs[i] = off;
        memcpy(b + off, rec.b, rec.n);
        size_t padded = (rec.n + 7) & ~(size_t)7;
        memset(b + off + rec.n, 0xCC, padded - rec.n); /* pad bytes are not data */
        off += padded;
    }
    etl_span s = {b, off};
    size_t pos = 0x48;
    for (unsigned i = 0; i < 16; i++) {
        etl_record r;
        size_t next;
        assert_int_equal(etl_record_frame(s, pos, &r, &next), ETL_OK);
        assert_int_equal(r.offset, offs[i]);
        assert_int_equal(r.hook, 0x0F00 + i);
        assert_int_equal(r.size, 0x10 + i);
        assert_int_equal(next % 8, 0);
        assert_int_equal(next, offs[i] + (i == 0 ? 0x10 : i <= 8 ? 0x18 : 0x20));
        pos = next;
    }
    etl_record r;
    size_t next;
    assert_int_equal(etl_record_frame(s, pos, &r, &next), ETL_END);
}

static void test_htype_tables(void **state)
{
    (void)state;
    struct {
        uint8_t t;
        size_t size;
        const char *name;
    } tab[] = {
        {0x01, 0x20, "SYSTEM32"},       {0x02, 0x20, "SYSTEM64"},       {0x03, 0x18, "COMPACT32"},
        {0x04, 0x18, "COMPACT64"},      {0x0A, 0x30, "FULL_HEADER32"},  {0x14, 0x30, "FULL_HEADER64"},
        {0x0B, 0x48, "INSTANCE32"},     {0x15, 0x48, "INSTANCE64"},     {0x10, 0x10, "PERFINFO32"},
        {0x11, 0x10, "PERFINFO64"},     {0x12, 0x50, "EVENT_HEADER32"}, {0x13, 0x50, "EVENT_HEADER64"},
        {0x0F, 0x08, "MESSAGE"},        {0x00, 0, "UNKNOWN"},           {0x05, 0, "UNKNOWN"},
        {0x16, 0, "UNKNOWN"},           {0xFF, 0, "UNKNOWN"},
    };
    for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++) {
        assert_int_equal(etl_htype_header_size(tab[i].t), tab[i].size);
        assert_string_equal(etl_htype_name(tab[i].t), tab[i].name);
    }
    assert_string_equal(etl_htype_name(0x0C), "TIMED");
    assert_string_equal(etl_htype_name(0x0D), "ERROR");
    assert_string_equal(etl_htype_name(0x0E), "WNODE_HEADER");
    assert_int_equal(etl_htype_header_size(0x0E), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_frame_system32),
        cmocka_unit_test(test_frame_system64),
        cmocka_unit_test(test_frame_compact32),
        cmocka_unit_test(test_frame_compact64),
        cmocka_unit_test(test_frame_perfinfo32),
        cmocka_unit_test(test_frame_perfinfo64),
        cmocka_unit_test(test_frame_perfinfo_pebs_pmc),
        cmocka_unit_test(test_frame_version_spare_bits),
        cmocka_unit_test(test_frame_system_compact_pmc),
        cmocka_unit_test(test_frame_pmc_past_size),
        cmocka_unit_test(test_frame_full32),
        cmocka_unit_test(test_frame_full64),
        cmocka_unit_test(test_frame_instance32),
        cmocka_unit_test(test_frame_instance64),
        cmocka_unit_test(test_frame_event_header32),
        cmocka_unit_test(test_frame_event_header64),
        cmocka_unit_test(test_frame_event_header_one_ext),
        cmocka_unit_test(test_frame_event_header_two_ext),
        cmocka_unit_test(test_frame_event_header_ext_no_payload),
        cmocka_unit_test(test_frame_event_header_ext_bad),
        cmocka_unit_test(test_frame_message_plain),
        cmocka_unit_test(test_frame_message_options),
        cmocka_unit_test(test_frame_message_short),
        cmocka_unit_test(test_frame_timed_error),
        cmocka_unit_test(test_frame_end_marker),
        cmocka_unit_test(test_frame_bad_sizes),
        cmocka_unit_test(test_frame_unknown_type),
        cmocka_unit_test(test_frame_alignment_walk),
        cmocka_unit_test(test_htype_tables),
    };
    return cmocka_run_group_tests_name("record", tests, NULL, NULL);
}

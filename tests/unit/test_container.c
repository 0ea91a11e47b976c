/*
 * test_container.c - the container reader on hand-built bytes: WMI_BUFFER_HEADER,
 * the logfile header record, and whole files through etl_reader_open_memory, clean
 * and broken in every way container.md §3, §8 and §11 name.
 *
 * Files are laid out by etlbuild.h from the spec's offsets. Expected records are
 * the ones the test built, in the order it built them (file order) or in an order
 * written out by hand (time order).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlbuild.h"
#include <stdatomic.h>
#include <time.h>
#include "etlkit/container.h"
#include "etlkit/compress.h"
#include "etlkit/synth.h"
#include "base/platform.h"
#include "synthtruth.h"

/* ------------------------------------------------------------------------- */
/* Helpers                                                                    */

typedef struct diags {
    int n;
    etl_diag d[64];
} diags;

static void on_diag(void *ctx, const etl_diag *d)
{
    diags *x = ctx;
    if (x->n < 64) x->d[x->n] = *d;
    x->n++;
}

static etl_reader_options opts_for(diags *d)
{
    etl_reader_options o;
    memset(&o, 0, sizeof o);
    o.sz = sizeof o;
    o.on_diag = on_diag;
    o.diag_ctx = d;
    return o;
}

#define TAG_HEADER 0xFFFFFFFFu

typedef struct got {
    uint32_t tag;
    uint64_t ts;
    uint16_t cpu;
    uint32_t buffer_index;
    uint32_t offset;
    uint8_t htype;
    uint16_t hook;
} got;

typedef struct want {
    uint32_t tag;
    uint64_t ts;
    uint16_t cpu;
    uint32_t buffer_index;
    uint32_t offset;
} want;

/* Iterates the whole reader; returns the number of records (stored up to cap). */
static size_t collect(etl_reader *r, etl_order order, got *out, size_t cap, etl_stats *st, uint64_t *progress)
{
    etl_iter *it = NULL;
    assert_int_equal(etl_iter_open(r, order, &it), ETL_OK);
    assert_non_null(it);
    size_t n = 0;
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (n < cap) {
            got *g = &out[n];
            memset(g, 0, sizeof *g);
            if (rec.htype == ETL_HTYPE_SYSTEM64 && rec.hook == 0 && rec.buffer_index == 0 && rec.offset == 0x48)
                g->tag = TAG_HEADER;
            else if (rec.payload.n >= 4)
                g->tag = eb_r32(rec.payload.p);
            else
                g->tag = 0xEEEEEEEE;
            /* The record view must be consistent with its own bytes. */
            assert_ptr_equal(rec.payload.p + rec.payload.n, rec.data + rec.size);
            g->ts = rec.ts;
            g->cpu = rec.cpu;
            g->buffer_index = rec.buffer_index;
            g->offset = rec.offset;
            g->htype = rec.htype;
            g->hook = rec.hook;
        }
        n++;
    }
    assert_int_equal(etl_iter_next(it, &rec), ETL_END); /* stays at the end */
    if (st) *st = *etl_iter_stats_get(it);
    if (progress) *progress = etl_iter_progress(it);
    assert_int_equal(etl_iter_stats_get(it)->records, n);
    etl_iter_close(it);
    return n;
}

static void check_want(const got *g, size_t ng, const want *w, size_t nw)
{
    if (ng != nw) fail_msg("got %zu records, want %zu", ng, nw);
    for (size_t i = 0; i < nw; i++) {
        if (g[i].tag != w[i].tag || g[i].ts != w[i].ts || g[i].cpu != w[i].cpu ||
            g[i].buffer_index != w[i].buffer_index || g[i].offset != w[i].offset)
            fail_msg("record %zu: got tag 0x%x ts %llu cpu %u buf %u off 0x%x; want tag 0x%x ts %llu cpu %u buf %u off 0x%x",
                     i, g[i].tag, (unsigned long long)g[i].ts, g[i].cpu, g[i].buffer_index, g[i].offset,
                     w[i].tag, (unsigned long long)w[i].ts, w[i].cpu, w[i].buffer_index, w[i].offset);
    }
}

static void check_tags(const got *g, size_t ng, const uint32_t *tags, size_t nt)
{
    if (ng != nt) fail_msg("got %zu records, want %zu", ng, nt);
    for (size_t i = 0; i < nt; i++)
        if (g[i].tag != tags[i]) fail_msg("record %zu: tag 0x%x, want 0x%x", i, g[i].tag, tags[i]);
}

static bool contains(const char *s, const char *sub) { return strstr(s, sub) != NULL; }

/*
 * Adds one tagged record of a CPU-dependent kind: CPU 0 SYSTEM64, CPU 1
 * PERFINFO64, CPU 2 EVENT_HEADER64. The payload starts with the tag.
 */
static size_t add_tagged(eb_file *f, uint16_t cpu, uint64_t ts, uint32_t tag, size_t extra)
{
    eb_rec r;
    if (cpu == 0) {
        uint8_t pl[256];
        memset(pl, 0x33, sizeof pl);
        eb_w32(pl, tag);
        /* A Thread Start: a payload of any length (a CSwitch's is its layout's, etl_kernel_layout_size). */
        eb_kernel k = {.htype = 0x02, .version_word = 2, .hook = 0x0501, .tid = 100 + tag, .pid = 4,
                       .ts = ts, .payload = pl, .payload_n = 4 + extra};
        eb_rec_kernel(&r, &k);
    } else if (cpu == 1) {
        eb_rec_perf64_tag(&r, 0x0F2E, ts, tag, extra);
    } else {
        uint8_t pl[256];
        memset(pl, 0x44, sizeof pl);
        eb_w32(pl, tag);
        eb_evh e = {.htype = 0x13, .flags = 0x0040, .tid = 7, .pid = 8, .ts = ts, .id = 1, .version = 0,
                    .payload = pl, .payload_n = 4 + extra};
        eb_rec_evh(&r, &e);
    }
    return eb_add_rec(f, &r);
}

/*
 * The reference file: 7 buffers of 0x400 bytes, 3 CPUs, buffers not in
 * SequenceNumber order, records of different CPUs interleaved in time with ties.
 *
 *   file  cpu seq  records (tag@ts)
 *   b0    0   0    header@1000000, 0x001@1000100
 *   b1    1   3    0x104@1000600, 0x105@1000900, 0x106@1001000
 *   b2    0   4    0x004@1000800, 0x005@1000900
 *   b3    1   1    0x101@1000050, 0x102@1000300, 0x103@1000400
 *   b4    0   2    0x002@1000300, 0x003@1000500
 *   b5    2   6    0x202@1000950
 *   b6    2   5    0x201@1000300
 *
 * w receives the records in file order (14).
 */
#define REF_RECORDS 14
static void build_ref(eb_file *f, const eb_lfh *lh, uint32_t state0, size_t extra, want *w)
{
    struct {
        uint16_t cpu;
        uint64_t seq;
        int n;
        uint32_t tag[3];
        uint64_t ts[3];
    } bufs[] = {
        {0, 0, 1, {0x001}, {1000100}},
        {1, 3, 3, {0x104, 0x105, 0x106}, {1000600, 1000900, 1001000}},
        {0, 4, 2, {0x004, 0x005}, {1000800, 1000900}},
        {1, 1, 3, {0x101, 0x102, 0x103}, {1000050, 1000300, 1000400}},
        {0, 2, 2, {0x002, 0x003}, {1000300, 1000500}},
        {2, 6, 1, {0x202}, {1000950}},
        {2, 5, 1, {0x201}, {1000300}},
    };
    eb_init(f);
    size_t nw = 0;
    for (size_t b = 0; b < 7; b++) {
        if (b == 0) {
            size_t off = eb_header_buffer(f, lh, state0);
            w[nw++] = (want){TAG_HEADER, lh->ts, 0, 0, (uint32_t)off};
        } else {
            /* Flushed after its records (container.md §7), in SequenceNumber order. */
            eb_begin(f, &(eb_bufopt){.size = 0x400, .seq = bufs[b].seq, .cpu = bufs[b].cpu,
                                     .timestamp = 1001000 + bufs[b].seq});
        }
        for (int i = 0; i < bufs[b].n; i++) {
            size_t off = add_tagged(f, bufs[b].cpu, bufs[b].ts[i], bufs[b].tag[i], extra);
            w[nw++] = (want){bufs[b].tag[i], bufs[b].ts[i], bufs[b].cpu, (uint32_t)b, (uint32_t)off};
        }
        eb_end(f);
    }
    assert_int_equal(nw, REF_RECORDS);
}

/* The time order of the reference file, written out by hand (ties: lower CPU first). */
static const uint32_t REF_TIME_ORDER[REF_RECORDS] = {
    TAG_HEADER, 0x101, 0x001, 0x002, 0x102, 0x201, 0x103, 0x003, 0x104, 0x004, 0x005, 0x105, 0x202, 0x106,
};

static void ref_time_want(const want *file_order, want *out)
{
    for (size_t i = 0; i < REF_RECORDS; i++) {
        size_t j = 0;
        while (file_order[j].tag != REF_TIME_ORDER[i]) j++;
        out[i] = file_order[j];
    }
}

static etl_reader *open_ok(const eb_file *f, diags *d)
{
    etl_reader *r = NULL;
    etl_diag dg;
    memset(&dg, 0, sizeof dg);
    etl_reader_options o = opts_for(d);
    etl_status st = etl_reader_open_memory(f->p, f->n, d ? &o : NULL, &r, &dg);
    if (st != ETL_OK) fail_msg("open: status %d: %s", st, dg.msg);
    assert_non_null(r);
    return r;
}

/* Removes the records of buffers / tags from a want list. */
static size_t want_without(const want *w, size_t n, const uint32_t *drop, size_t nd, want *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        bool keep = true;
        for (size_t j = 0; j < nd; j++)
            if (w[i].tag == drop[j]) keep = false;
        if (keep) out[k++] = w[i];
    }
    return k;
}

static void assert_clean_stats(const etl_stats *s)
{
    assert_int_equal(s->bad_buffers, 0);
    assert_int_equal(s->bad_records, 0);
    assert_int_equal(s->skipped_bytes, 0);
    assert_int_equal(s->decompress_errors, 0);
    assert_int_equal(s->unsupported_buffers, 0);
    assert_int_equal(s->truncated_buffers, 0);
    assert_true(s->first_problem_offset == UINT64_MAX);
}

/* ------------------------------------------------------------------------- */
/* WMI_BUFFER_HEADER                                                           */

static void test_buffer_header_decode_fields(void **state)
{
    (void)state;
    uint8_t b[0x48];
    size_t n = tu_hex("00200000 480f0000 48000100 00000000" /* BufferSize SavedOffset CurrentOffset RefCount */
                      "efcdab8967452301"                    /* TimeStamp */
                      "0700000000000000"                    /* SequenceNumber */
                      "20701dda8799ffff"                    /* clock union: list-pointer junk */
                      "0508" "1100"                         /* ProcessorIndex 0x0805, LoggerId 0x11 */
                      "03000400"                            /* State 0x00040003 */
                      "480f0000" "2100" "0200"              /* Offset, BufferFlag 0x21, BufferType 2 */
                      "1122334455667788" "99aabbccddeeff00", /* ETW_REF_CLOCK */
                      b, sizeof b);
    assert_int_equal(n, 0x48);
    etl_buffer_header h;
    memset(&h, 0xCC, sizeof h);
    assert_int_equal(etl_buffer_header_decode((etl_span){b, sizeof b}, &h), ETL_OK);
    assert_int_equal(h.buffer_size, 0x2000);
    assert_int_equal(h.saved_offset, 0xF48);
    assert_int_equal(h.current_offset, 0x10048);
    assert_int_equal(h.reference_count, 0);
    assert_int_equal(h.timestamp, 0x0123456789ABCDEFull);
    assert_int_equal(h.sequence_number, 7);
    assert_int_equal(h.clock_union, 0xffff9987da1d7020ull);
    assert_int_equal(h.processor_index, 0x005); /* 0x0805 & ETW_PROCESSOR_INDEX_MASK 0x07FF */
    assert_int_equal(h.logger_id, 0x11);
    assert_int_equal(h.state, 0x00040003);
    assert_int_equal(h.offset, 0xF48);
    assert_int_equal(h.buffer_flag, 0x21);
    assert_int_equal(h.buffer_type, 2);
    assert_int_equal(h.ref_start_time, 0x8877665544332211ull);
    assert_int_equal(h.ref_start_perf_clock, 0x00ffeeddccbbaa99ull);
}

static void test_buffer_header_processor_number(void **state)
{
    (void)state;
    uint8_t b[0x48];
    memset(b, 0, sizeof b);
    b[0x28] = 0x05; /* ProcessorNumber */
    b[0x29] = 0xAB; /* Alignment */
    etl_buffer_header h;
    /* Old layout (no PROC_INDEX): the u8. */
    eb_w16(b + 0x34, 0x0001);
    assert_int_equal(etl_buffer_header_decode((etl_span){b, sizeof b}, &h), ETL_OK);
    assert_int_equal(h.processor_index, 5);
    /* PROC_INDEX: the u16, masked to 11 bits: 0xAB05 & 0x7FF = 0x305. */
    eb_w16(b + 0x34, 0x0021);
    assert_int_equal(etl_buffer_header_decode((etl_span){b, sizeof b}, &h), ETL_OK);
    assert_int_equal(h.processor_index, 0x305);
    b[0x28] = 0xFF;
    b[0x29] = 0x07;
    assert_int_equal(etl_buffer_header_decode((etl_span){b, sizeof b}, &h), ETL_OK);
    assert_int_equal(h.processor_index, 0x7FF);
    eb_w16(b + 0x34, 0x0000);
    assert_int_equal(etl_buffer_header_decode((etl_span){b, sizeof b}, &h), ETL_OK);
    assert_int_equal(h.processor_index, 0xFF);
}

static void test_buffer_header_round_trip(void **state)
{
    (void)state;
    uint64_t seed = 0x5EED;
    for (int iter = 0; iter < 200; iter++) {
        etl_buffer_header h;
        h.buffer_size = (uint32_t)tu_rand(&seed);
        h.saved_offset = (uint32_t)tu_rand(&seed);
        h.current_offset = (uint32_t)tu_rand(&seed);
        h.reference_count = (uint32_t)tu_rand(&seed);
        h.timestamp = tu_rand(&seed);
        h.sequence_number = tu_rand(&seed);
        h.clock_union = tu_rand(&seed);
        h.processor_index = (uint16_t)(tu_rand(&seed) & 0x7FF);
        h.logger_id = (uint16_t)tu_rand(&seed);
        h.state = (uint32_t)tu_rand(&seed);
        h.offset = (uint32_t)tu_rand(&seed);
        h.buffer_flag = (uint16_t)(tu_rand(&seed) | 0x20);
        h.buffer_type = (uint16_t)tu_rand(&seed);
        h.ref_start_time = tu_rand(&seed);
        h.ref_start_perf_clock = tu_rand(&seed);
        uint8_t b[0x48 + 8];
        memset(b, 0xA5, sizeof b);
        etl_buffer_header_encode(&h, b);
        assert_int_equal(b[0x48], 0xA5); /* wrote exactly 0x48 bytes */
        /* The bytes sit where container.md §2 says. */
        assert_int_equal(eb_r32(b + 0x00), h.buffer_size);
        assert_int_equal(eb_r32(b + 0x04), h.saved_offset);
        assert_int_equal(eb_r32(b + 0x08), h.current_offset);
        assert_int_equal(eb_r32(b + 0x0C), h.reference_count);
        assert_int_equal(eb_r64(b + 0x10), h.timestamp);
        assert_int_equal(eb_r64(b + 0x18), h.sequence_number);
        assert_int_equal(eb_r64(b + 0x20), h.clock_union);
        assert_int_equal(eb_r16(b + 0x28), h.processor_index);
        assert_int_equal(eb_r16(b + 0x2A), h.logger_id);
        assert_int_equal(eb_r32(b + 0x2C), h.state);
        assert_int_equal(eb_r32(b + 0x30), h.offset);
        assert_int_equal(eb_r16(b + 0x34), h.buffer_flag);
        assert_int_equal(eb_r16(b + 0x36), h.buffer_type);
        assert_int_equal(eb_r64(b + 0x38), h.ref_start_time);
        assert_int_equal(eb_r64(b + 0x40), h.ref_start_perf_clock);
        etl_buffer_header d;
        assert_int_equal(etl_buffer_header_decode((etl_span){b, 0x48}, &d), ETL_OK);
        assert_memory_equal(&d, &h, sizeof h);
    }
}

static void test_buffer_header_truncated(void **state)
{
    (void)state;
    uint8_t b[0x48];
    memset(b, 0, sizeof b);
    eb_w32(b, 0x400);
    etl_buffer_header h;
    for (size_t n = 0; n < 0x48; n++)
        assert_int_equal(etl_buffer_header_decode((etl_span){b, n}, &h), ETL_E_TRUNCATED);
    assert_int_equal(etl_buffer_header_decode((etl_span){NULL, 0}, &h), ETL_E_TRUNCATED);
    assert_int_equal(etl_buffer_header_decode((etl_span){b, 0x48}, &h), ETL_OK);
    assert_int_equal(h.buffer_size, 0x400);
}

/* ------------------------------------------------------------------------- */
/* TRACE_LOGFILE_HEADER                                                        */

/* "NT Kernel Logger" then "C:\Tä😀.etl" (U+00E4, U+1F600 as a surrogate pair). */
static size_t names_both(uint8_t *out)
{
    size_t n = eb_utf16z(out, "NT Kernel Logger");
    const uint16_t fn[] = {'C', ':', '\\', 'T', 0x00E4, 0xD83D, 0xDE00, '.', 'e', 't', 'l', 0};
    for (size_t i = 0; i < sizeof fn / sizeof fn[0]; i++, n += 2) eb_w16(out + n, fn[i]);
    return n;
}
#define NAME2_UTF8 "C:\\T\xC3\xA4\xF0\x9F\x98\x80.etl"

static eb_lfh lfh_full(bool is64, const uint8_t *names, size_t names_n)
{
    eb_lfh h;
    memset(&h, 0, sizeof h);
    h.is64 = is64;
    h.tid = 0x1111;
    h.pid = 0x2222;
    h.ts = 0x00000123456789ABull;
    h.buffer_size = 0x10000;
    h.version[0] = 10;
    h.version[1] = 0;
    h.version[2] = 1;
    h.version[3] = 5;
    h.provider_version = 19041;
    h.nproc = 6;
    h.end_time = 132273600000000000ull;
    h.timer_res = 156250;
    h.max_file_size = 100;
    h.log_file_mode = 0x08000001;
    h.buffers_written = 3;
    h.start_buffers = 1;
    h.pointer_size = is64 ? 8 : 4;
    h.events_lost = 17;
    h.cpu_mhz = 2904;
    h.logger_ptr = is64 ? 0xFFFFF80012345678ull : 0x81234567ull;
    h.logfile_ptr = is64 ? 0xFFFFF8009ABCDEF0ull : 0x89ABCDEFull;
    h.tz_bias = 480;
    h.tz_name = "Pacific Standard Time";
    h.tz_pad = 0xDEADBEEF; /* must not be read as part of BootTime */
    h.boot_time = 132273530000000000ull;
    h.perf_freq = 14318180;
    h.start_time = 132273542277445790ull;
    h.clock_type = 1;
    h.buffers_lost = 5;
    h.names = names;
    h.names_n = names_n;
    return h;
}

static void check_lfh_fields(const etl_logfile_header *h, bool is64)
{
    assert_int_equal(h->header_type, is64 ? 0x02 : 0x01);
    assert_int_equal(h->header_tid, 0x1111);
    assert_int_equal(h->header_pid, 0x2222);
    assert_int_equal(h->header_ts, 0x00000123456789ABull);
    assert_int_equal(h->buffer_size, 0x10000);
    assert_int_equal(h->os_major, 10);
    assert_int_equal(h->os_minor, 0);
    assert_int_equal(h->sub_version, 1);
    assert_int_equal(h->sub_minor_version, 5);
    assert_int_equal(h->provider_version, 19041);
    assert_int_equal(h->num_processors, 6);
    assert_int_equal(h->end_time, 132273600000000000ull);
    assert_int_equal(h->timer_resolution, 156250);
    assert_int_equal(h->maximum_file_size, 100);
    assert_int_equal(h->log_file_mode, 0x08000001);
    assert_int_equal(h->buffers_written, 3);
    assert_int_equal(h->start_buffers, 1);
    assert_int_equal(h->pointer_size, is64 ? 8 : 4);
    assert_int_equal(h->events_lost, 17);
    assert_int_equal(h->cpu_speed_mhz, 2904);
    assert_int_equal(h->logger_name_ptr, is64 ? 0xFFFFF80012345678ull : 0x81234567ull);
    assert_int_equal(h->log_file_name_ptr, is64 ? 0xFFFFF8009ABCDEF0ull : 0x89ABCDEFull);
    assert_int_equal(h->tz_bias, 480);
    assert_string_equal(h->tz_standard_name, "Pacific Standard Time");
    assert_int_equal(h->boot_time, 132273530000000000ull);
    assert_int_equal(h->perf_freq, 14318180);
    assert_int_equal(h->start_time, 132273542277445790ull);
    assert_int_equal(h->clock_type, 1);
    assert_int_equal(h->buffers_lost, 5);
}

static void check_lfh_form(bool is64)
{
    uint8_t names[128];
    size_t nn = names_both(names);
    eb_lfh lh = lfh_full(is64, names, nn);
    eb_rec rec;
    eb_rec_lfh(&rec, &lh);
    assert_int_equal(rec.n, 0x20 + (is64 ? 0x118 : 0x110) + nn);
    /* Extra bytes after the record (the next record, 0xFF fill) must not be read as names. */
    memset(rec.b + rec.n, 0x41, 64);
    etl_logfile_header h;
    assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n + 64}, &h), ETL_OK);
    check_lfh_fields(&h, is64);
    assert_string_equal(h.logger_name, "NT Kernel Logger");
    assert_string_equal(h.log_file_name, NAME2_UTF8);
}

static void test_logfile_header_64(void **state)
{
    (void)state;
    check_lfh_form(true);
    assert_int_equal(etl_logfile_header_size(8), 0x118);
}

/* The header type, not the PointerSize field, says where the fields after the pointers are. */
static void test_logfile_header_pointer_size_field(void **state)
{
    (void)state;
    for (int is64 = 0; is64 <= 1; is64++) {
        uint8_t names[64];
        size_t nn = eb_utf16z(names, "P");
        eb_lfh lh = lfh_full(is64, names, nn);
        lh.pointer_size = is64 ? 4 : 8; /* lies */
        eb_rec rec;
        eb_rec_lfh(&rec, &lh);
        etl_logfile_header h;
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h), ETL_OK);
        assert_int_equal(h.pointer_size, is64 ? 4 : 8);
        assert_int_equal(h.boot_time, 132273530000000000ull);
        assert_int_equal(h.perf_freq, 14318180);
        assert_int_equal(h.start_time, 132273542277445790ull);
        assert_int_equal(h.buffers_lost, 5);
        assert_string_equal(h.logger_name, "P");
    }
}

static void test_logfile_header_32(void **state)
{
    (void)state;
    check_lfh_form(false);
    assert_int_equal(etl_logfile_header_size(4), 0x110);
}

static void test_logfile_header_unterminated_name(void **state)
{
    (void)state;
    for (int is64 = 0; is64 <= 1; is64++) {
        uint8_t names[64];
        size_t nn = eb_utf16z(names, "Relogger") - 2; /* no terminator */
        eb_lfh lh = lfh_full(is64, names, nn);
        eb_rec rec;
        eb_rec_lfh(&rec, &lh);
        /* What follows the record is not part of the name. */
        eb_utf16z(rec.b + rec.n, "XYZ");
        etl_logfile_header h;
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n + 8}, &h), ETL_OK);
        check_lfh_fields(&h, is64);
        assert_string_equal(h.logger_name, "Relogger");
        assert_string_equal(h.log_file_name, "");

        /* The logger name terminated, the file name not. */
        size_t n2 = eb_utf16z(names, "L");
        n2 += eb_utf16z(names + n2, "f.etl") - 2;
        lh = lfh_full(is64, names, n2);
        eb_rec_lfh(&rec, &lh);
        memset(rec.b + rec.n, 0x41, 16);
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n + 16}, &h), ETL_OK);
        assert_string_equal(h.logger_name, "L");
        assert_string_equal(h.log_file_name, "f.etl");
    }
}

static void test_logfile_header_names_missing(void **state)
{
    (void)state;
    for (int is64 = 0; is64 <= 1; is64++) {
        eb_lfh lh = lfh_full(is64, NULL, 0);
        eb_rec rec;
        eb_rec_lfh(&rec, &lh);
        assert_int_equal(rec.n, 0x20 + (is64 ? 0x118 : 0x110));
        eb_utf16z(rec.b + rec.n, "NOTME");
        etl_logfile_header h;
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n + 12}, &h), ETL_OK);
        check_lfh_fields(&h, is64);
        assert_string_equal(h.logger_name, "");
        assert_string_equal(h.log_file_name, "");

        /* Only the logger name. */
        uint8_t names[32];
        size_t nn = eb_utf16z(names, "Only");
        lh = lfh_full(is64, names, nn);
        eb_rec_lfh(&rec, &lh);
        eb_utf16z(rec.b + rec.n, "NOTME");
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n + 12}, &h), ETL_OK);
        assert_string_equal(h.logger_name, "Only");
        assert_string_equal(h.log_file_name, "");

        /* One odd byte after the struct. */
        uint8_t odd[1] = {0x41};
        lh = lfh_full(is64, odd, 1);
        eb_rec_lfh(&rec, &lh);
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h), ETL_OK);
        assert_string_equal(h.logger_name, "");
        assert_string_equal(h.log_file_name, "");
    }
}

static void test_logfile_header_not_header(void **state)
{
    (void)state;
    uint8_t names[64];
    size_t nn = eb_utf16z(names, "x");
    etl_logfile_header h;
    eb_rec rec;
    for (int is64 = 0; is64 <= 1; is64++) {
        /* Wrong hook: a header extension (0x0005), a context switch (0x0524). */
        const uint16_t hooks[] = {0x0005, 0x0524, 0x0100};
        for (size_t i = 0; i < 3; i++) {
            eb_lfh lh = lfh_full(is64, names, nn);
            lh.hook = hooks[i];
            eb_rec_lfh(&rec, &lh);
            assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h), ETL_E_NOT_ETL);
        }
        /* Not a SYSTEM header: PERFINFO64, COMPACT64, EVENT_HEADER64 type bytes; WPP flags. */
        const uint8_t types[] = {0x11, 0x04, 0x13, 0x00};
        for (size_t i = 0; i < 4; i++) {
            eb_lfh lh = lfh_full(is64, names, nn);
            eb_rec_lfh(&rec, &lh);
            rec.b[2] = types[i];
            assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h), ETL_E_NOT_ETL);
        }
        eb_lfh lh = lfh_full(is64, names, nn);
        eb_rec_lfh(&rec, &lh);
        rec.b[3] = 0x90;
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h), ETL_E_NOT_ETL);
        rec.b[3] = 0x00;
        assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h), ETL_E_NOT_ETL);
    }
    /* Text. */
    const char *txt = "This is a text file and not an event trace log at all, really not.....";
    assert_int_equal(etl_logfile_header_decode((etl_span){(const uint8_t *)txt, strlen(txt)}, &h),
                     ETL_E_NOT_ETL);
}

static void test_logfile_header_short(void **state)
{
    (void)state;
    uint8_t names[64];
    size_t nn = eb_utf16z(names, "Short");
    etl_logfile_header h;
    eb_rec rec;
    for (int is64 = 0; is64 <= 1; is64++) {
        size_t fixed = is64 ? 0x118 : 0x110;
        eb_lfh lh = lfh_full(is64, names, nn);
        eb_rec_lfh(&rec, &lh);
        /* Spans shorter than the SYSTEM header. */
        for (size_t n = 0; n < 0x20; n += 7) {
            etl_status st = etl_logfile_header_decode((etl_span){rec.b, n}, &h);
            if (st != ETL_E_NOT_ETL && st != ETL_E_TRUNCATED) fail_msg("span %zu: status %d", n, st);
        }
        /* Size says the whole record, the span stops inside the struct or inside the names. */
        size_t cuts[] = {0x20, 0x20 + 0x40, 0x20 + fixed - 1, 0x20 + fixed, rec.n - 1};
        for (size_t i = 0; i < 5; i++)
            assert_int_equal(etl_logfile_header_decode((etl_span){rec.b, cuts[i]}, &h), ETL_E_TRUNCATED);
        /* Size itself too small for the struct (the span is big enough). */
        size_t sizes[] = {0, 0x1F, 0x20, 0x20 + 0x100, 0x20 + fixed - 1};
        for (size_t i = 0; i < 5; i++) {
            eb_rec_lfh(&rec, &lh);
            eb_w16(rec.b + 4, (uint16_t)sizes[i]);
            etl_status st = etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h);
            if (st != ETL_E_NOT_ETL && st != ETL_E_TRUNCATED && st != ETL_E_CORRUPT)
                fail_msg("64=%d Size 0x%zx: status %d", is64, sizes[i], st);
        }
        /* A 32-bit record is too short to be read as a 64-bit one (0x110 < 0x118). */
        eb_lfh l32 = lfh_full(false, NULL, 0);
        eb_rec_lfh(&rec, &l32);
        rec.b[2] = 0x02;
        etl_status st = etl_logfile_header_decode((etl_span){rec.b, rec.n}, &h);
        assert_true(st == ETL_E_NOT_ETL || st == ETL_E_TRUNCATED || st == ETL_E_CORRUPT);
    }
}

/* ------------------------------------------------------------------------- */
/* Whole files: clean                                                          */

static void check_walk_equal(etl_reader *r);

static void test_reader_clean_file_order(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    assert_int_equal(f.n, 7 * 0x400);
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(d.n, 0);
    assert_int_equal(etl_reader_buffer_count(r), 7);
    assert_int_equal(etl_reader_cpu_count(r), 3);
    assert_int_equal(etl_reader_file_size(r), 7 * 0x400);
    const etl_logfile_header *h = etl_reader_header(r);
    assert_int_equal(h->header_type, ETL_HTYPE_SYSTEM64);
    assert_int_equal(h->buffer_size, 0x400);
    assert_int_equal(h->perf_freq, 10000000);
    assert_int_equal(h->start_time, 132273542277445790ull);
    assert_int_equal(h->header_ts, 1000000);
    assert_int_equal(h->num_processors, 4);
    const etl_stats *rs = etl_reader_stats_get(r);
    assert_int_equal(rs->buffers, 7);
    assert_int_equal(rs->compressed_buffers, 0);
    assert_clean_stats(rs);

    got g[32];
    etl_stats st;
    uint64_t progress = 0;
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, &progress);
    check_want(g, n, w, REF_RECORDS);
    assert_int_equal(st.records, REF_RECORDS);
    assert_clean_stats(&st);
    assert_int_equal(progress, f.n);
    check_walk_equal(r);
    /* Header types per CPU as built. */
    for (size_t i = 1; i < n; i++) {
        uint8_t want_t = g[i].cpu == 0 ? 0x02 : g[i].cpu == 1 ? 0x11 : 0x13;
        assert_int_equal(g[i].htype, want_t);
    }

    /* Per-buffer headers and offsets. */
    const uint64_t seqs[7] = {0, 3, 4, 1, 2, 6, 5};
    const uint16_t cpus[7] = {0, 1, 0, 1, 0, 2, 2};
    for (size_t i = 0; i < 7; i++) {
        etl_buffer_header bh;
        uint64_t off = 1;
        assert_int_equal(etl_reader_buffer(r, i, &bh, &off), ETL_OK);
        assert_int_equal(off, i * 0x400);
        assert_int_equal(bh.sequence_number, seqs[i]);
        assert_int_equal(bh.processor_index, cpus[i]);
        assert_int_equal(bh.buffer_size, 0x400);
        assert_int_equal(bh.buffer_type, i == 0 ? 4 : 0);
    }
    etl_buffer_header bh;
    uint64_t off;
    assert_int_equal(etl_reader_buffer(r, 7, &bh, &off), ETL_E_INVALID_ARG);
    etl_reader_close(r);
    eb_free(&f);
}

static void test_reader_time_order(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS], wt[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    ref_time_want(w, wt);
    etl_reader *r = open_ok(&f, NULL);
    got g[32];
    etl_stats st;
    uint64_t progress = 0;
    size_t n = collect(r, ETL_ORDER_TIME, g, 32, &st, &progress);
    check_want(g, n, wt, REF_RECORDS);
    assert_clean_stats(&st);
    assert_int_equal(st.records, REF_RECORDS);
    assert_int_equal(progress, f.n);
    /* Globally non-decreasing, ties by CPU index, each CPU in its own order. */
    for (size_t i = 1; i < n; i++) {
        assert_true(g[i - 1].ts <= g[i].ts);
        if (g[i - 1].ts == g[i].ts) assert_true(g[i - 1].cpu < g[i].cpu);
    }
    const uint32_t cpu1[] = {0x101, 0x102, 0x103, 0x104, 0x105, 0x106};
    size_t k = 0;
    for (size_t i = 0; i < n; i++)
        if (g[i].cpu == 1) assert_int_equal(g[i].tag, cpu1[k++]);
    assert_int_equal(k, 6);
    etl_reader_close(r);
    eb_free(&f);
}

/* The kernel filter's and the record filter's calls: what each saw, by tag. */
typedef struct filter_log {
    uint32_t kernel_seen[REF_RECORDS], full_seen[REF_RECORDS];
    size_t nkernel, nfull;
    bool bad_cpu;
} filter_log;

/* Refuses the odd tags of CPU 1 (PERFINFO, hook 0x0F2E) from their header. */
static bool keep_even_kernel(void *ctx, const etl_krec *k, unsigned cpu)
{
    filter_log *l = ctx;
    uint32_t tag = k->payload.n >= 4 ? eb_r32(k->payload.p) : 0;
    if (l->nkernel < REF_RECORDS) l->kernel_seen[l->nkernel++] = tag;
    if ((k->hook == 0x0F2E) != (cpu == 1)) l->bad_cpu = true;
    return k->hook != 0x0F2E || tag % 2 == 0;
}

static bool keep_all_full(void *ctx, const etl_record *rec)
{
    filter_log *l = ctx;
    if (l->nfull < REF_RECORDS) l->full_seen[l->nfull++] = rec->payload.n >= 4 ? eb_r32(rec->payload.p) : 0;
    return true;
}

/*
 * etl_iter_keep_hooks with etl_iter_keep_kernel: a kept hook's record the kernel filter
 * refuses is passed over as an unkept hook's (never framed whole, never given to the
 * record filter, never returned); the others keep the time order; records that are not
 * kernel records (CPU 2's) reach the record filter only.
 */
static void test_iter_keep_kernel(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    etl_reader *r = open_ok(&f, NULL);
    filter_log l;
    memset(&l, 0, sizeof l);
    etl_iter *it = NULL;
    assert_int_equal(etl_iter_open_cpus(r, NULL, 0, keep_all_full, &l, &it), ETL_OK);
    uint8_t keep[8192] = {0}, mark[8192] = {0};
    keep[0x0F2E >> 3] |= 1u << (0x0F2E & 7); /* CPU 1's hook; CPU 0's 0x0501 is passed over */
    etl_iter_keep_hooks(it, keep, mark);
    etl_iter_keep_kernel(it, keep_even_kernel, &l);
    uint32_t got_tags[REF_RECORDS];
    size_t n = 0;
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        assert_true(n < REF_RECORDS);
        got_tags[n++] = rec.payload.n >= 4 ? eb_r32(rec.payload.p) : 0;
    }
    etl_iter_close(it);
    /*
     * REF_TIME_ORDER without CPU 0's records and CPU 1's odd tags, but for each CPU's first record, framed when
     * the iterator opened (the logfile header, whose payload starts with BufferSize 0x400, and 0x101): the
     * record filter given at open saw those.
     */
    const uint32_t want_tags[] = {0x400, 0x101, 0x102, 0x201, 0x104, 0x202, 0x106};
    assert_int_equal(n, sizeof want_tags / sizeof *want_tags);
    for (size_t i = 0; i < n; i++) assert_int_equal(got_tags[i], want_tags[i]);
    /* The kernel filter saw each of CPU 1's later records once; the record filter those it kept and the others. */
    assert_false(l.bad_cpu);
    assert_int_equal(l.nkernel, 5);
    assert_int_equal(l.nfull, 7);
    for (size_t i = 0; i < l.nfull; i++)
        assert_true(l.full_seen[i] % 2 == 0 || l.full_seen[i] == 0x101 || l.full_seen[i] >> 8 == 2);
    etl_reader_close(r);
    eb_free(&f);
}

/*
 * Records whose time their buffer contradicts (container.md §7: a CPU's buffer is in time
 * order, none of its records later than its flush). CPU 0's buffer, flushed at 1000500:
 * tags 1, 2, a spike after the flush (3), 4, a dip below the record ahead of it (5) that the
 * one after confirms, 6, then a step back for good (7 < 6, 8 < 6: taken, told), 8. CPU 1's
 * buffer claims a flush before all its records: its TimeStamp or its records are not its own,
 * told once, all taken.
 * Every reader - file order, time order, the per-CPU walks - takes the same records.
 */
static void build_bad_times(eb_file *f)
{
    eb_lfh lh = eb_lfh_default();
    eb_init(f);
    eb_header_buffer(f, &lh, 0);
    eb_end(f);
    eb_begin(f, &(eb_bufopt){.size = 0x800, .seq = 1, .cpu = 0, .timestamp = 1000500});
    const uint64_t ts0[] = {1000100, 1000200, 1900000, 1000300, 1000150, 1000400, 1000350, 1000360};
    for (uint32_t i = 0; i < 8; i++) add_tagged(f, 0, ts0[i], i + 1, 0);
    eb_end(f);
    eb_begin(f, &(eb_bufopt){.size = 0x400, .seq = 2, .cpu = 1, .timestamp = 1000010});
    add_tagged(f, 1, 1000600, 0x101, 0);
    add_tagged(f, 1, 1000700, 0x102, 0);
    eb_end(f);
}

static void test_iter_bad_times_in_buffer(void **state)
{
    (void)state;
    eb_file f;
    build_bad_times(&f);
    const uint32_t tags[] = {0x400, 1, 2, 4, 6, 7, 8, 0x101, 0x102}; /* 0x400: the logfile header's BufferSize */
    const size_t nwant = sizeof tags / sizeof *tags;
    for (int order = 0; order < 2; order++) {
        diags d = {0};
        etl_reader *r = open_ok(&f, &d);
        etl_iter *it = NULL;
        assert_int_equal(etl_iter_open(r, order ? ETL_ORDER_TIME : ETL_ORDER_FILE, &it), ETL_OK);
        etl_record rec;
        uint32_t seen[16];
        size_t n = 0;
        while (etl_iter_next(it, &rec) == ETL_OK) {
            assert_true(n < 16);
            seen[n++] = rec.payload.n >= 4 ? eb_r32(rec.payload.p) : 0;
        }
        assert_int_equal(n, nwant);
        if (order == 0)
            for (size_t i = 0; i < n; i++) assert_int_equal(seen[i], tags[i]);
        const etl_stats *st = etl_iter_stats_get(it);
        assert_int_equal(st->bad_times, 4); /* the spike, the dip, the step back; CPU 1's flush */
        assert_int_equal(st->bad_buffers, 2);
        assert_true(etl_stats_damaged(st));
        /* Told with the record's file offset and why. */
        int flushed = 0, ahead = 0, back = 0, cpu1 = 0;
        for (int i = 0; i < d.n && i < 64; i++) {
            flushed += strstr(d.d[i].msg, "after its buffer was flushed") != NULL;
            ahead += strstr(d.d[i].msg, "before the record ahead of it") != NULL;
            back += strstr(d.d[i].msg, "time goes back here") != NULL;
            cpu1 += strstr(d.d[i].msg, "later than its buffer's flush TimeStamp") != NULL;
            assert_true(d.d[i].file_offset > 0x400 && d.d[i].file_offset < (cpu1 ? 0x1000 : 0xC00));
        }
        assert_int_equal(flushed, 1);
        assert_int_equal(cpu1, 1);
        assert_int_equal(ahead, 2);
        assert_int_equal(back, 1);
        etl_iter_close(it);
        etl_reader_close(r);
    }
    /* The walks judge alike. */
    etl_reader *r = open_ok(&f, NULL);
    etl_iter *it = NULL;
    assert_int_equal(etl_iter_open_cpus_buffers(r, NULL, 0, &it), ETL_OK);
    etl_walk w;
    etl_krec k;
    size_t n = 0;
    uint32_t seen[16];
    while (etl_iter_next_buffer(it, &w) == ETL_OK) {
        for (int kind; (kind = etl_walk_next(&w, &k)) != ETL_WALK_END;) {
            assert_true(n < 16);
            etl_span pl = kind == ETL_WALK_KERNEL ? k.payload : w.full.payload;
            seen[n++] = pl.n >= 4 ? eb_r32(pl.p) : 0;
        }
    }
    assert_int_equal(n, nwant);
    for (size_t i = 0; i < n; i++) assert_int_equal(seen[i], tags[i]); /* one CPU after the other */
    assert_int_equal(etl_iter_stats_get(it)->bad_times, 4);
    etl_iter_close(it);
    etl_reader_close(r);
    eb_free(&f);
}

/*
 * A PERFINFO64 record: hook, version word (PMC counters: zeros), time, a payload of n bytes
 * starting with tag (the rest fill), Size claimed when not 0. Returns its offset in the buffer.
 */
static size_t add_perf(eb_file *f, uint16_t hook, uint16_t vw, uint64_t ts, uint32_t tag, size_t n, uint8_t fill,
                       int claimed)
{
    uint8_t pl[256], pmc[56] = {0};
    memset(pl, fill, sizeof pl);
    if (n >= 4) eb_w32(pl, tag);
    eb_kernel k = {.htype = 0x11, .version_word = vw, .hook = hook, .ts = ts, .ext = pmc,
                   .ext_n = 8u * ((vw >> 8) & 7), .payload = pl, .payload_n = n, .size_override = claimed};
    eb_rec r;
    eb_rec_kernel(&r, &k);
    return eb_add_rec(f, &r);
}

/*
 * A fixed-layout kernel event whose Size goes past its layout (explore6 F3: one flipped bit
 * of a CSwitch's Size, 56 -> 4152, swallowed the 84 records after it, exit 0). CPU 0: a
 * CSwitch v4 with 2 PMC counters claiming 56 + 256 bytes, the 8 records it covers, one
 * more. CPU 1: a CSwitch v2 claiming 40 + 16, over the 16-byte record after it. CPU 2: a
 * "CSwitch v3" of 100 bytes (its hook damaged: no record where its layout ends it) between
 * two records. CPU 3: a CSwitch v4 of 32 bytes (a field appended: taken as it is), a
 * record, a CSwitch v2 claiming 40 + 4096, the buffer's last. Every reader - file order,
 * time order, the walks - takes the same records: the CSwitches at their layout's size,
 * every record they covered, and not the 100-byte one; each told with its file offset.
 */
static void test_iter_oversized_record(void **state)
{
    (void)state;
    eb_file f;
    eb_lfh lh = eb_lfh_default();
    eb_init(&f);
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    size_t at[4];
    eb_begin(&f, &(eb_bufopt){.size = 0x800, .seq = 1, .cpu = 0, .timestamp = 1000900});
    at[0] = f.cur + add_perf(&f, 0x0524, 0x0204, 1000100, 0x11, 24, 0, 56 + 256);
    for (uint32_t i = 0; i < 9; i++) add_perf(&f, 0x0F2E, 3, 1000110 + i, 0x12 + i, 16, 0x5A, 0); /* 32 bytes each */
    eb_end(&f);
    eb_begin(&f, &(eb_bufopt){.size = 0x400, .seq = 2, .cpu = 1, .timestamp = 1001900});
    at[1] = f.cur + add_perf(&f, 0x0524, 2, 1001100, 0x21, 24, 0, 40 + 16);
    add_perf(&f, 0x0F48, 2, 1001110, 0, 0, 0, 0); /* 16 bytes */
    add_perf(&f, 0x0F2E, 3, 1001120, 0x22, 16, 0x5A, 0);
    eb_end(&f);
    eb_begin(&f, &(eb_bufopt){.size = 0x400, .seq = 3, .cpu = 2, .timestamp = 1002900});
    add_perf(&f, 0x0F2E, 3, 1002100, 0x31, 16, 0x5A, 0);
    at[2] = f.cur + add_perf(&f, 0x0524, 3, 1002110, 0x32, 100, 0x5A, 0);
    add_perf(&f, 0x0F2E, 3, 1002120, 0x33, 16, 0x5A, 0);
    eb_end(&f);
    eb_begin(&f, &(eb_bufopt){.size = 0x400, .seq = 4, .cpu = 3, .timestamp = 1003900});
    add_perf(&f, 0x0524, 4, 1003100, 0x41, 32, 0, 0);
    add_perf(&f, 0x0F2E, 3, 1003110, 0x42, 16, 0x5A, 0);
    at[3] = f.cur + add_perf(&f, 0x0524, 2, 1003120, 0x43, 24, 0, 40 + 4096);
    eb_end(&f);

    const uint32_t tags[] = {TAG_HEADER, 0x11, 0x12, 0x13, 0x14, 0x15, 0x16, 0x17, 0x18, 0x19, 0x1A,
                             0x21, 0xEEEEEEEE, 0x22, 0x31, 0x33, 0x41, 0x42, 0x43};
    const size_t nwant = sizeof tags / sizeof *tags;
    for (int order = 0; order < 2; order++) {
        diags d = {0};
        etl_reader *r = open_ok(&f, &d);
        got g[32];
        etl_stats st;
        size_t n = collect(r, order ? ETL_ORDER_TIME : ETL_ORDER_FILE, g, 32, &st, NULL);
        check_tags(g, n, tags, nwant);
        assert_int_equal(st.bad_records, 4);
        assert_int_equal(st.bad_buffers, 4);
        assert_true(etl_stats_damaged(&st));
        assert_int_equal(d.n, 4); /* in time order CPU 1's is told first: each CPU's first record is read at open */
        for (int i = 0; i < 4; i++) {
            int j = 0;
            while (j < 4 && d.d[j].file_offset != at[i]) j++;
            assert_true(j < 4);
            assert_non_null(strstr(d.d[j].msg, i == 2 ? "not that event; passed over" : "taken at its layout's size"));
        }
        etl_reader_close(r);
    }
    /* The records are their layout's size; the one with a field appended keeps it. */
    etl_reader *r = open_ok(&f, NULL);
    etl_iter *it = NULL;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        if (rec.hook != 0x0524) continue;
        uint32_t tag = eb_r32(rec.payload.p);
        assert_int_equal(rec.size, tag == 0x11 ? 56 : tag == 0x41 ? 48 : 40);
        assert_int_equal(!!(rec.has & ETL_REC_BAD_SIZE), tag != 0x41);
    }
    etl_iter_close(it);
    /* The walks judge alike: the same records, the same damage. */
    assert_int_equal(etl_iter_open_cpus_buffers(r, NULL, 0, &it), ETL_OK);
    etl_walk w;
    etl_krec k;
    size_t n = 0;
    while (etl_iter_next_buffer(it, &w) == ETL_OK) {
        for (int kind; (kind = etl_walk_next(&w, &k)) != ETL_WALK_END;) {
            assert_true(n < nwant);
            assert_int_equal(kind, ETL_WALK_KERNEL);
            uint32_t tag = w.buffer_index == 0 ? TAG_HEADER : k.payload.n >= 4 ? eb_r32(k.payload.p) : 0xEEEEEEEE;
            assert_int_equal(tag, tags[n]);
            n++;
            /* A kernel record's own bytes frame as the walk framed it (etl_krec_record). */
            etl_record whole;
            size_t next;
            assert_int_equal(etl_record_frame((etl_span){k.data, k.size}, 0, &whole, &next), ETL_OK);
            assert_int_equal(whole.size, k.size);
        }
    }
    assert_int_equal(n, nwant);
    assert_int_equal(etl_iter_stats_get(it)->bad_records, 4);
    etl_iter_close(it);
    etl_reader_close(r);
    eb_free(&f);
}

/*
 * A compact batch (0x0525 v2) whose Size swallows the records after it (explore19 F1: the hook
 * had no layout, so nothing judged its Size): a batch is no longer than its header and the
 * 0x400-byte limit (0x458, the lenient reading), so one claiming 0x1000 bytes more is judged by
 * the fixed-layout rule. CPU 0: a batch of exactly 0x458 bytes (sound), then one of 0x100
 * claiming 0x1100, over the 128 32-byte records after it, then 8 more.
 */
static void test_iter_oversized_batch(void **state)
{
    (void)state;
    eb_file f;
    eb_lfh lh = eb_lfh_default();
    eb_init(&f);
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    static uint8_t pl[0x458];
    memset(pl, 0, sizeof pl);
    eb_w32(pl, 1000000); /* FirstTimeStamp */
    eb_begin(&f, &(eb_bufopt){.size = 0x2000, .seq = 1, .cpu = 0, .timestamp = 1009000});
    eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = 0x0525, .ts = 1000100, .payload = pl, .payload_n = 0x458};
    eb_rec rec;
    eb_rec_kernel(&rec, &k);
    size_t sound = f.cur + eb_add_rec(&f, &rec);
    k.ts = 1000200;
    k.payload_n = 0x100;
    k.size_override = 0x10 + 0x100 + 0x1000;
    eb_rec_kernel(&rec, &k);
    size_t bad = f.cur + eb_add_rec(&f, &rec);
    for (uint32_t i = 0; i < 136; i++) add_perf(&f, 0x0F2E, 3, 1000300 + i, 0x100 + i, 16, 0x5A, 0);
    eb_end(&f);
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    got g[160];
    etl_stats st;
    size_t n = collect(r, ETL_ORDER_FILE, g, 160, &st, NULL);
    assert_int_equal(st.bad_records, 1);
    assert_true(etl_stats_damaged(&st));
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].file_offset, bad);
    assert_true(d.d[0].file_offset != sound);
    assert_non_null(strstr(d.d[0].msg, "hook 0x0525"));
    assert_true(n >= 1 + 1 + 8); /* the sound batch and the records after what the bad one claimed */
    etl_reader_close(r);
    eb_free(&f);
}

/*
 * 0xFFFFFFFF ends a buffer's data only when nothing but 0xFF follows it (the filler): with
 * records after it (here over the third of ten) it is damage, the rest of the buffer told as
 * skipped, never a quiet end (explore20 F1: 1,644 records lost, exit 0). Filler up to the
 * Offset is the end, as before.
 */
static void test_iter_all_ones_marker(void **state)
{
    (void)state;
    for (int filler = 0; filler < 2; filler++) {
        eb_file f;
        eb_lfh lh = eb_lfh_default();
        eb_init(&f);
        eb_header_buffer(&f, &lh, 0);
        eb_end(&f);
        eb_begin(&f, &(eb_bufopt){.size = 0x2000, .seq = 1, .cpu = 0, .timestamp = 1009000});
        size_t at[10];
        for (uint32_t i = 0; i < 10; i++) at[i] = f.cur + add_perf(&f, 0x0F2E, 3, 1000000 + i, 0x100 + i, 16, 0x5A, 0);
        size_t end = f.cur + f.pos;
        eb_end(&f);
        if (filler) memset(f.p + at[2], 0xFF, end - at[2]); /* the last eight records made filler */
        else eb_put32(&f, at[2], 0xFFFFFFFFu);
        diags d = {0};
        etl_reader *r = open_ok(&f, &d);
        got g[16];
        etl_stats st;
        size_t n = collect(r, ETL_ORDER_TIME, g, 16, &st, NULL);
        assert_int_equal(n, 1 + 2); /* the logfile header's record, the two before the marker */
        if (filler) {
            assert_int_equal(d.n, 0);
            assert_false(etl_stats_damaged(&st));
        } else {
            assert_int_equal(st.bad_records, 1);
            assert_true(etl_stats_damaged(&st));
            assert_int_equal(d.n, 1);
            assert_int_equal(d.d[0].file_offset, at[2]);
            assert_non_null(strstr(d.d[0].msg, "rest of buffer skipped"));
        }
        etl_reader_close(r);
        eb_free(&f);
    }
}

/*
 * HEADER buffers whose SavedOffset is 0 (Vista/7, relogger) or stops after the
 * logfile header (PerfView): Offset is the end of the data (container.md §12).
 */
static void test_reader_header_saved_offset(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    assert_int_equal(w[1].tag, 0x001);
    const uint32_t saved[] = {0, (uint32_t)w[1].offset};
    for (int i = 0; i < 2; i++) {
        eb_put32(&f, 0x04, saved[i]);
        diags d = {0};
        etl_reader *r = open_ok(&f, &d);
        assert_int_equal(d.n, 0);
        assert_clean_stats(etl_reader_stats_get(r));
        got g[32];
        etl_stats st;
        size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
        check_want(g, n, w, REF_RECORDS);
        assert_clean_stats(&st);
        etl_reader_close(r);
    }
    eb_free(&f);
}

/* Two different buffers of one CPU with the same SequenceNumber: told, both read, in file order. */
static void test_reader_duplicate_sequence(void **state)
{
    (void)state;
    eb_file f;
    eb_init(&f);
    eb_lfh lh = eb_lfh_default();
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    const uint64_t seqs[3] = {2, 2, 1};
    for (int b = 0; b < 3; b++) {
        eb_begin(&f, &(eb_bufopt){.seq = seqs[b], .cpu = 1});
        add_tagged(&f, 1, 2000000 + (uint64_t)b, 0x10 + (uint32_t)b, 0);
        eb_end(&f);
    }
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(d.n, 1);
    assert_non_null(strstr(d.d[0].msg, "SequenceNumber 2, as buffer 1 (offset 0x400) has; both read, in file order"));
    got g[8];
    size_t n = collect(r, ETL_ORDER_TIME, g, 8, NULL, NULL);
    const uint32_t tt[] = {TAG_HEADER, 0x12, 0x10, 0x11};
    /* Within a CPU the SequenceNumber decides (0x12, seq 1, although its time is
     * the latest), and equal SequenceNumbers keep file order. */
    check_tags(g, n, tt, 4);
    etl_reader_close(r);
    eb_free(&f);
}

/* Two iterators over one reader are independent, and their views stay valid until their next call. */
static void test_reader_two_iterators(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS], wt[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    ref_time_want(w, wt);
    etl_reader *r = open_ok(&f, NULL);
    etl_iter *a, *b;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &a), ETL_OK);
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &b), ETL_OK);
    etl_record ra, rb;
    for (size_t i = 0; i < REF_RECORDS; i++) {
        assert_int_equal(etl_iter_next(a, &ra), ETL_OK);
        assert_int_equal(etl_iter_next(b, &rb), ETL_OK);
        assert_int_equal(ra.ts, w[i].ts);
        assert_int_equal(rb.ts, wt[i].ts);
        assert_int_equal(ra.offset, w[i].offset);
        assert_int_equal(rb.offset, wt[i].offset);
        assert_int_equal(ra.buffer_index, w[i].buffer_index);
        assert_int_equal(rb.buffer_index, wt[i].buffer_index);
    }
    assert_int_equal(etl_iter_next(a, &ra), ETL_END);
    assert_int_equal(etl_iter_next(b, &rb), ETL_END);
    etl_iter_close(a);
    etl_iter_close(b);
    etl_reader_close(r);
    eb_free(&f);
}

/* A 32-bit logfile header, an old-layout (u8 ProcessorNumber) buffer, through a real path. */
static void test_reader_open_path_32bit(void **state)
{
    (void)state;
    eb_file f;
    eb_init(&f);
    eb_lfh lh = eb_lfh_default();
    lh.is64 = false;
    lh.pointer_size = 4;
    uint8_t names[64];
    lh.names = names;
    lh.names_n = eb_utf16z(names, "Thirty Two");
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    size_t b1 = eb_begin(&f, &(eb_bufopt){.seq = 1, .cpu = 0});
    f.p[b1 + 0x28] = 3;    /* ProcessorNumber */
    f.p[b1 + 0x29] = 0x9C; /* Alignment junk */
    eb_put16(&f, b1 + 0x34, 0x0001); /* FLUSH_MARKER only: no PROC_INDEX */
    eb_kernel k = {.htype = 0x01, .version_word = 2, .hook = 0x0524, .tid = 5, .pid = 6, .ts = 1000001,
                   .payload = (const uint8_t *)"\x78\x56\x34\x12", .payload_n = 4};
    eb_rec rec;
    eb_rec_kernel(&rec, &k);
    eb_add_rec(&f, &rec);
    eb_end(&f);

    char path[] = "/tmp/etlkit_test_containerXXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, f.p, f.n), (ssize_t)f.n);
    close(fd);
    etl_reader *r = NULL;
    etl_diag dg;
    assert_int_equal(etl_reader_open(path, NULL, &r, &dg), ETL_OK);
    assert_int_equal(etl_reader_header(r)->header_type, ETL_HTYPE_SYSTEM32);
    assert_string_equal(etl_reader_header(r)->logger_name, "Thirty Two");
    assert_int_equal(etl_reader_cpu_count(r), 4);
    got g[4];
    size_t n = collect(r, ETL_ORDER_TIME, g, 4, NULL, NULL);
    assert_int_equal(n, 2);
    assert_int_equal(g[0].htype, ETL_HTYPE_SYSTEM32);
    assert_int_equal(g[0].hook, 0);
    assert_int_equal(g[1].htype, ETL_HTYPE_SYSTEM32);
    assert_int_equal(g[1].tag, 0x12345678);
    assert_int_equal(g[1].cpu, 3);
    etl_reader_close(r);
    unlink(path);

    r = (etl_reader *)1;
    assert_int_equal(etl_reader_open("/nonexistent/etlkit/x.etl", NULL, &r, &dg), ETL_E_IO);
    assert_null(r);
    eb_free(&f);
}

/* ------------------------------------------------------------------------- */
/* Not an ETL                                                                  */

static void expect_not_etl(const uint8_t *p, size_t n, const char *what)
{
    etl_reader *r = (etl_reader *)1;
    etl_diag dg;
    memset(&dg, 0, sizeof dg);
    etl_status st = etl_reader_open_memory(p, n, NULL, &r, &dg);
    if (st != ETL_E_NOT_ETL) fail_msg("%s: status %d, want ETL_E_NOT_ETL", what, st);
    assert_null(r);
    assert_int_equal(dg.status, ETL_E_NOT_ETL);
    assert_true(dg.msg[0] != '\0');
}

static void test_reader_not_etl(void **state)
{
    (void)state;
    static const uint8_t z[16];
    expect_not_etl(z, 0, "empty");
    expect_not_etl(NULL, 0, "empty NULL");
    expect_not_etl((const uint8_t *)"0123456789", 10, "10 bytes");
    expect_not_etl(z, 16, "16 zero bytes");

    uint8_t *zeros = calloc(1, 0x2000);
    expect_not_etl(zeros, 0x2000, "8 KiB of zeros");
    memset(zeros, 0xFF, 0x2000);
    expect_not_etl(zeros, 0x2000, "8 KiB of 0xFF");
    free(zeros);

    uint64_t seed = 42;
    uint8_t *rnd = malloc(0x4000);
    for (int t = 0; t < 32; t++) {
        for (size_t i = 0; i < 0x4000; i += 8) eb_w64(rnd + i, tu_rand(&seed));
        expect_not_etl(rnd, 0x1000 + 0x100 * (size_t)t, "random bytes");
    }
    free(rnd);

    char text[4096] = "";
    while (strlen(text) < 3000)
        strcat(text, "Lorem ipsum dolor sit amet, this is not an ETL file at all.\n");
    expect_not_etl((const uint8_t *)text, strlen(text), "text");

    /* A valid buffer header whose first record is not a logfile header. */
    eb_file f;
    eb_init(&f);
    eb_begin(&f, &(eb_bufopt){.type = 4});
    eb_rec rec;
    eb_rec_sys64_tag(&rec, 0x0524, 1, 1000, 0x1234);
    eb_add_rec(&f, &rec);
    eb_add_rec(&f, &rec);
    eb_end(&f);
    eb_begin(&f, &(eb_bufopt){.seq = 1, .cpu = 1});
    eb_add_rec(&f, &rec);
    eb_end(&f);
    expect_not_etl(f.p, f.n, "buffer header without a logfile header");
    eb_free(&f);

    /* A valid buffer header with a PERFINFO hook-0 record first. */
    eb_init(&f);
    eb_begin(&f, &(eb_bufopt){.type = 4});
    eb_rec_perf64_tag(&rec, 0x0000, 1000, 0, 0x1F0);
    eb_add_rec(&f, &rec);
    eb_end(&f);
    expect_not_etl(f.p, f.n, "PERFINFO hook 0");
    eb_free(&f);

    /* A real header buffer cut right after its buffer header / inside the record. */
    eb_lfh lh = eb_lfh_default();
    eb_init(&f);
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    expect_not_etl(f.p, 0x48, "buffer header only");
    expect_not_etl(f.p, 0x48 + 0x1F, "cut in the SYSTEM header");
    expect_not_etl(f.p, 0x48 + 0x100, "cut in the logfile header");
    /* A buffer 0 with an empty Offset / BufferSize 0 but the logfile header record
     * intact: read, and counted as damage (one bad field must not lose the file). */
    eb_put32(&f, 0x30, 0x48);
    eb_put32(&f, 0x04, 0x48);
    {
        etl_reader *r0;
        etl_diag dg0;
        assert_int_equal(etl_reader_open_memory(f.p, f.n, NULL, &r0, &dg0), ETL_OK);
        assert_true(etl_reader_stats_get(r0)->bad_buffers >= 1);
        assert_int_equal(etl_reader_stats_get(r0)->first_problem_offset, 0);
        etl_reader_close(r0);
    }
    eb_free(&f);
    eb_init(&f);
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    eb_put32(&f, 0x00, 0);
    {
        /* The logfile header record is intact: read, counted as damage. */
        etl_reader *r0;
        etl_diag dg0;
        assert_int_equal(etl_reader_open_memory(f.p, f.n, NULL, &r0, &dg0), ETL_OK);
        assert_true(etl_reader_stats_get(r0)->bad_buffers >= 1);
        etl_reader_close(r0);
    }
    eb_free(&f);
}

/* ------------------------------------------------------------------------- */
/* Broken files                                                                */

/* Cut in the middle of a record of buffer 2. */
static void test_reader_truncated_mid_record(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    /* Buffer 2 (file offset 0x800) holds 0x004 at +0x48 and 0x005 at +0x70 (0x24 bytes each). */
    assert_int_equal(w[5].tag, 0x004);
    assert_int_equal(w[5].offset, 0x48);
    assert_int_equal(w[6].offset, 0x70);
    size_t cut = 0x800 + 0x70 + 0x10;
    diags d = {0};
    etl_reader_options o = opts_for(&d);
    etl_reader *r = NULL;
    etl_diag dg;
    assert_int_equal(etl_reader_open_memory(f.p, cut, &o, &r, &dg), ETL_OK);
    assert_int_equal(etl_reader_buffer_count(r), 3);
    const etl_stats *rs = etl_reader_stats_get(r);
    assert_int_equal(rs->truncated_buffers, 1);
    /* The first problem is the lowest offset, not the first told: the gap before the buffer at 0x400. */
    assert_int_equal(rs->first_problem_offset, 0x400);
    assert_int_equal(d.n, 2);
    assert_int_equal(d.d[0].status, ETL_E_TRUNCATED);
    assert_int_equal(d.d[0].file_offset, 0x800);
    assert_true(contains(d.d[0].msg, "buffer 2"));
    /* The buffers after the cut with lower SequenceNumbers (CPU 1's seq 1, CPU 0's seq 2) are missing. */
    assert_int_equal(etl_reader_buffers_missing(r), 2);
    assert_int_equal(d.d[1].file_offset, 0x400);
    assert_true(contains(d.d[1].msg, "2 buffers the session wrote (SequenceNumber 1..2,"));
    assert_int_equal(etl_reader_file_size(r), cut);

    got g[32];
    etl_stats st;
    uint64_t progress;
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, &progress);
    /* Wholly before the cut: header, 0x001, 0x104-0x106, 0x004. */
    check_want(g, n, w, 6);
    assert_int_equal(st.truncated_buffers, 1);
    assert_int_equal(st.bad_records, 1);
    assert_int_equal(st.skipped_bytes, 0x10);
    assert_int_equal(st.first_problem_offset, 0x400); /* the open's gap, lower than the cut record */
    assert_int_equal(progress, cut);
    /* The record's diag names its file offset. */
    assert_int_equal(d.n, 3);
    assert_int_equal(d.d[2].file_offset, 0x800 + 0x70);
    assert_true(contains(d.d[2].msg, "buffer 2"));

    const uint32_t tt[] = {TAG_HEADER, 0x001, 0x104, 0x004, 0x105, 0x106};
    n = collect(r, ETL_ORDER_TIME, g, 32, &st, NULL);
    check_tags(g, n, tt, 6);
    assert_int_equal(st.bad_records, 1);
    etl_reader_close(r);

    /* Cut exactly between the two records: nothing lost but the missing bytes. */
    d.n = 0;
    assert_int_equal(etl_reader_open_memory(f.p, 0x800 + 0x70, &o, &r, &dg), ETL_OK);
    assert_int_equal(etl_reader_stats_get(r)->truncated_buffers, 1);
    n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    check_want(g, n, w, 6);
    assert_int_equal(st.bad_records, 0);
    etl_reader_close(r);
    eb_free(&f);
}

/* Cut inside the buffer header of buffer 2, and trailing junk shorter than a header. */
static void test_reader_truncated_in_header(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    diags d = {0};
    etl_reader_options o = opts_for(&d);
    etl_reader *r = NULL;
    etl_diag dg;
    assert_int_equal(etl_reader_open_memory(f.p, 0x800 + 0x20, &o, &r, &dg), ETL_OK);
    assert_int_equal(etl_reader_buffer_count(r), 2);
    const etl_stats *rs = etl_reader_stats_get(r);
    assert_int_equal(rs->truncated_buffers, 1);
    assert_int_equal(rs->first_problem_offset, 0x400); /* the lowest offset: the gap before the buffer at 0x400 */
    assert_int_equal(d.n, 2); /* and SequenceNumbers 1..2 missing */
    assert_int_equal(etl_reader_buffers_missing(r), 2);
    assert_int_equal(d.d[0].file_offset, 0x800);
    assert_true(contains(d.d[0].msg, "buffer 2"));
    got g[32];
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, NULL, NULL);
    check_want(g, n, w, 5);
    etl_reader_close(r);
    eb_free(&f);
}

static void test_reader_zero_buffer_size(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS], wk[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    eb_put32(&f, 0x800, 0); /* buffer 2: BufferSize 0 */
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(etl_reader_buffer_count(r), 6);
    const etl_stats *rs = etl_reader_stats_get(r);
    assert_int_equal(rs->bad_buffers, 1);
    assert_int_equal(rs->skipped_bytes, 0x400);
    assert_int_equal(rs->first_problem_offset, 0x800);
    assert_int_equal(rs->buffers, 6);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].status, ETL_E_CORRUPT);
    assert_int_equal(d.d[0].file_offset, 0x800);
    assert_true(contains(d.d[0].msg, "buffer 2"));
    assert_true(contains(d.d[0].msg, "0x800"));
    /* The following buffers were found again at their real offsets. */
    const uint64_t offs[6] = {0, 0x400, 0xC00, 0x1000, 0x1400, 0x1800};
    for (size_t i = 0; i < 6; i++) {
        etl_buffer_header bh;
        uint64_t off;
        assert_int_equal(etl_reader_buffer(r, i, &bh, &off), ETL_OK);
        assert_int_equal(off, offs[i]);
    }
    const uint32_t drop[] = {0x004, 0x005};
    size_t nk = want_without(w, REF_RECORDS, drop, 2, wk);
    /* The buffers after the bad one are 1 lower in file order now. */
    for (size_t i = 0; i < nk; i++)
        if (wk[i].buffer_index > 2) wk[i].buffer_index--;
    got g[32];
    etl_stats st;
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    check_want(g, n, wk, nk);
    assert_int_equal(st.bad_buffers, 1);
    assert_int_equal(st.bad_records, 0);
    const uint32_t tt[] = {TAG_HEADER, 0x101, 0x001, 0x002, 0x102, 0x201, 0x103, 0x003, 0x104, 0x105, 0x202, 0x106};
    n = collect(r, ETL_ORDER_TIME, g, 32, NULL, NULL);
    check_tags(g, n, tt, 12);
    etl_reader_close(r);

    /* An impossible BufferSize (larger than any buffer) is handled the same way. */
    eb_put32(&f, 0x800, 0x7FFFFFF0);
    d.n = 0;
    r = open_ok(&f, &d);
    assert_int_equal(etl_reader_buffer_count(r), 6);
    assert_int_equal(etl_reader_stats_get(r)->bad_buffers, 1);
    assert_int_equal(etl_reader_stats_get(r)->skipped_bytes, 0x400);
    assert_int_equal(d.d[0].file_offset, 0x800);
    etl_reader_close(r);
    eb_free(&f);
}

/*
 * BufferSize 0 in a buffer whose records happen to hold bytes that look like a
 * buffer header. The file's buffers are 0x400 apart (the logfile header's
 * BufferSize), and that is where resynchronisation should look first.
 */
static void test_reader_resync_prefers_nominal_size(void **state)
{
    (void)state;
    /* Regression test. BUG (commit 6d39077, reader.c resync()): the nominal
     * stride was read from r->hdr.buffer_size, which index_buffers() runs before
     * read_logfile_header() fills, so it was always 0 and the byte scan took the
     * first plausible-looking header inside the bad buffer's own data (here the
     * fake one at 0x868: 7 buffers instead of 6). Fixed in the working tree
     * (nominal_buffer_size = buffer 0's BufferSize). */
    eb_file f;
    eb_init(&f);
    eb_lfh lh = eb_lfh_default();
    eb_header_buffer(&f, &lh, 0);
    eb_end(&f);
    for (int b = 1; b < 7; b++) {
        eb_begin(&f, &(eb_bufopt){.seq = (uint64_t)b, .cpu = 0});
        if (b == 2) {
            /* A SYSTEM64 event whose payload looks like an (empty) buffer header. */
            uint8_t pl[0x48];
            memset(pl, 0, sizeof pl);
            eb_w32(pl + 0x00, 0xC00 - 0x868); /* its BufferSize even leads to the real buffer 3 */
            eb_w32(pl + 0x04, 0x48);
            eb_w32(pl + 0x30, 0x48);
            eb_w16(pl + 0x34, 0x20);
            eb_kernel k = {.htype = 0x02, .version_word = 2, .hook = 0x1234, .ts = 1000000 + (uint64_t)b,
                           .payload = pl, .payload_n = sizeof pl};
            eb_rec rec;
            eb_rec_kernel(&rec, &k);
            eb_add_rec(&f, &rec);
        } else {
            add_tagged(&f, 0, 1000000 + (uint64_t)b, (uint32_t)b, 0);
        }
        eb_end(&f);
    }
    eb_put32(&f, 0x800, 0);
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(etl_reader_buffer_count(r), 6);
    assert_int_equal(etl_reader_stats_get(r)->bad_buffers, 1);
    assert_int_equal(etl_reader_stats_get(r)->skipped_bytes, 0x400);
    etl_buffer_header bh;
    uint64_t off;
    assert_int_equal(etl_reader_buffer(r, 2, &bh, &off), ETL_OK);
    assert_int_equal(off, 0xC00);
    etl_reader_close(r);
    eb_free(&f);
}

/*
 * A BufferSize smaller than the buffer in an uncompressed file (one buffer size
 * throughout): the file's stride wins, so nothing is skipped; the lie is reported.
 */
static void test_reader_short_buffer_size(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    eb_put32(&f, 0x800, 0x100); /* buffer 2's data ends at 0x98 < 0x100 */
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(etl_reader_buffer_count(r), 7);
    const etl_stats *rs = etl_reader_stats_get(r);
    assert_int_equal(rs->bad_buffers, 1);
    assert_int_equal(rs->skipped_bytes, 0);
    assert_int_equal(rs->first_problem_offset, 0x800);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].file_offset, 0x800);
    got g[32];
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, NULL, NULL);
    check_want(g, n, w, REF_RECORDS);
    etl_reader_close(r);
    eb_free(&f);
}

static void test_reader_offset_past_buffer_size(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    /* Buffer 1: Offset 0x500 > BufferSize 0x400; SavedOffset still right (0x90). */
    assert_int_equal(eb_r32(f.p + 0x400 + 0x04), 0x90);
    eb_put32(&f, 0x400 + 0x30, 0x500);
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(etl_reader_buffer_count(r), 7);
    const etl_stats *rs = etl_reader_stats_get(r);
    assert_int_equal(rs->bad_buffers, 1);
    assert_int_equal(rs->first_problem_offset, 0x400);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].status, ETL_E_CORRUPT);
    assert_int_equal(d.d[0].file_offset, 0x400);
    assert_true(contains(d.d[0].msg, "buffer 1"));
    got g[32];
    etl_stats st;
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    check_want(g, n, w, REF_RECORDS);
    assert_int_equal(st.bad_records, 0);
    etl_reader_close(r);

    /* SavedOffset impossible too: the records are still found (the rest is 0xFF). */
    eb_put32(&f, 0x400 + 0x04, 0x600);
    d.n = 0;
    r = open_ok(&f, &d);
    assert_int_equal(etl_reader_stats_get(r)->bad_buffers, 1);
    n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    check_want(g, n, w, REF_RECORDS);
    assert_int_equal(st.bad_records, 0);
    etl_reader_close(r);
    eb_free(&f);
}

static void test_reader_record_past_buffer(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS], wk[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    /* Buffer 1 (0x400): 0x104 @0x48, 0x105 @0x60, 0x106 @0x78, data ends at 0x90.
     * 0x105's Size (PERFINFO: u16 at +4) now runs past the buffer's data. */
    assert_int_equal(w[3].tag, 0x105);
    assert_int_equal(w[3].offset, 0x60);
    eb_put16(&f, 0x400 + 0x60 + 4, 0x300);
    diags d = {0};
    etl_reader *r = open_ok(&f, &d);
    assert_int_equal(d.n, 0);
    got g[32];
    etl_stats st;
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    const uint32_t drop[] = {0x105, 0x106};
    size_t nk = want_without(w, REF_RECORDS, drop, 2, wk);
    check_want(g, n, wk, nk);
    assert_int_equal(st.bad_records, 1);
    assert_int_equal(st.bad_buffers, 1);
    assert_int_equal(st.skipped_bytes, 0x90 - 0x60);
    assert_int_equal(st.first_problem_offset, 0x400 + 0x60);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].file_offset, 0x400 + 0x60);
    assert_true(contains(d.d[0].msg, "buffer 1"));
    /* Iteration problems are the iterator's, not the reader's. */
    assert_int_equal(etl_reader_stats_get(r)->bad_records, 0);
    assert_true(etl_reader_stats_get(r)->first_problem_offset == UINT64_MAX);

    /* Same in time order: the rest of CPU 1's data is still read. */
    const uint32_t tt[] = {TAG_HEADER, 0x101, 0x001, 0x002, 0x102, 0x201, 0x103, 0x003, 0x104, 0x004, 0x005, 0x202};
    n = collect(r, ETL_ORDER_TIME, g, 32, &st, NULL);
    check_tags(g, n, tt, 12);
    assert_int_equal(st.bad_records, 1);
    etl_reader_close(r);

    /* Size 0 in the middle of a buffer, and an unknown header type. */
    eb_free(&f);
    build_ref(&f, &lh, 0, 0, w);
    eb_put16(&f, 0x400 + 0x60 + 4, 0);
    f.p[0x1000 + 0x48 + 2] = 0x07; /* buffer 4's first record: header type 7 */
    d.n = 0;
    r = open_ok(&f, &d);
    n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    const uint32_t drop2[] = {0x105, 0x106, 0x002, 0x003};
    nk = want_without(w, REF_RECORDS, drop2, 4, wk);
    check_want(g, n, wk, nk);
    assert_int_equal(st.bad_records, 2);
    assert_int_equal(st.skipped_bytes, (0x90 - 0x60) + (0x98 - 0x48));
    assert_int_equal(d.n, 2);
    assert_int_equal(d.d[0].file_offset, 0x460);
    assert_int_equal(d.d[1].file_offset, 0x1048);
    assert_true(contains(d.d[1].msg, "buffer 4"));
    etl_reader_close(r);
    eb_free(&f);
}

/* ------------------------------------------------------------------------- */
/* Compressed files                                                            */

/*
 * Rewrites src with the buffers in `mask` compressed: header kept (BufferFlag
 * |= 0x40, BufferSize = 0x48 + compressed size), payload [0x48, Offset) through
 * etl_xpress_compress. offs receives the new file offsets.
 */
static void compress_file(const eb_file *src, eb_file *dst, unsigned mask, size_t *offs)
{
    eb_init(dst);
    for (size_t i = 0; i < src->nbufs; i++) {
        const uint8_t *b = src->p + src->boff[i];
        uint32_t bs = eb_r32(b);
        uint32_t end = eb_r32(b + 0x30);
        offs[i] = dst->n;
        if (!(mask & (1u << i))) {
            eb_raw(dst, b, bs);
            continue;
        }
        size_t in_n = end - 0x48;
        size_t cap = etl_xpress_compress_bound(in_n);
        uint8_t *out = malloc(cap);
        size_t clen = 0;
        assert_int_equal(etl_xpress_compress(b + 0x48, in_n, out, cap, &clen), ETL_OK);
        /* The compressed stream expands back to exactly the payload. */
        uint8_t *chk = malloc(in_n);
        size_t got_n = 0;
        assert_int_equal(etl_xpress_decompress((etl_span){out, clen}, chk, in_n, &got_n), ETL_OK);
        assert_int_equal(got_n, in_n);
        assert_memory_equal(chk, b + 0x48, in_n);
        free(chk);
        uint8_t h[0x48];
        memcpy(h, b, 0x48);
        eb_w32(h, (uint32_t)(0x48 + clen));
        eb_w16(h + 0x34, (uint16_t)(eb_r16(h + 0x34) | 0x40));
        eb_raw(dst, h, 0x48);
        eb_raw(dst, out, clen);
        free(out);
    }
}

static void test_reader_compressed(void **state)
{
    (void)state;
    for (int b0_compressed = 0; b0_compressed <= 1; b0_compressed++) {
        eb_file f, c;
        want w[REF_RECORDS], wt[REF_RECORDS];
        eb_lfh lh = eb_lfh_default();
        lh.log_file_mode = 0x04000000;
        build_ref(&f, &lh, 3, 48, w); /* 48 more payload bytes per record: something to compress */
        ref_time_want(w, wt);
        size_t offs[8];
        compress_file(&f, &c, b0_compressed ? 0x7F : 0x7E, offs);
        assert_true(c.n < f.n);
        diags d = {0};
        etl_reader *r = open_ok(&c, &d);
        assert_int_equal(d.n, 0);
        assert_int_equal(etl_reader_compression(r), ETL_COMPRESSION_XPRESS);
        assert_int_equal(etl_reader_buffer_count(r), 7);
        const etl_stats *rs = etl_reader_stats_get(r);
        assert_int_equal(rs->compressed_buffers, b0_compressed ? 7 : 6);
        assert_clean_stats(rs);
        assert_int_equal(etl_reader_header(r)->log_file_mode, 0x04000000);
        assert_int_equal(etl_reader_header(r)->perf_freq, 10000000);
        for (size_t i = 0; i < 7; i++) {
            etl_buffer_header bh;
            uint64_t off;
            assert_int_equal(etl_reader_buffer(r, i, &bh, &off), ETL_OK);
            assert_int_equal(off, offs[i]);
        }
        got g[32];
        etl_stats st;
        uint64_t progress;
        size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, &progress);
        check_want(g, n, w, REF_RECORDS);
        assert_clean_stats(&st);
        assert_int_equal(progress, c.n);
        n = collect(r, ETL_ORDER_TIME, g, 32, &st, &progress);
        check_want(g, n, wt, REF_RECORDS);
        assert_clean_stats(&st);

        /* The whole record bytes come back, not just the tags. */
        etl_iter *it;
        assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
        etl_record rec;
        size_t k = 0;
        while (etl_iter_next(it, &rec) == ETL_OK) {
            size_t boff = f.boff[rec.buffer_index];
            assert_memory_equal(rec.data, f.p + boff + rec.offset, rec.size);
            k++;
        }
        assert_int_equal(k, REF_RECORDS);
        etl_iter_close(it);
        etl_reader_close(r);
        eb_free(&c);
        eb_free(&f);
    }
}

static void test_reader_compressed_bad(void **state)
{
    (void)state;
    /* +8: the stream ends before the claimed size; -8: it would overflow it. */
    const int deltas[] = {8, -8};
    for (int di = 0; di < 2; di++) {
        eb_file f, c;
        want w[REF_RECORDS], wk[REF_RECORDS];
        eb_lfh lh = eb_lfh_default();
        lh.log_file_mode = 0x04000000;
        build_ref(&f, &lh, 3, 48, w);
        size_t offs[8];
        compress_file(&f, &c, 0x7E, offs);
        /* Buffer 3 (CPU 1, seq 1): Offset and SavedOffset no longer match the stream. */
        uint32_t end = eb_r32(c.p + offs[3] + 0x30);
        eb_put32(&c, offs[3] + 0x30, (uint32_t)((int)end + deltas[di]));
        eb_put32(&c, offs[3] + 0x04, (uint32_t)((int)end + deltas[di]));
        diags d = {0};
        etl_reader *r = open_ok(&c, &d);
        got g[32];
        etl_stats st;
        size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
        const uint32_t drop[] = {0x101, 0x102, 0x103};
        size_t nk = want_without(w, REF_RECORDS, drop, 3, wk);
        check_want(g, n, wk, nk);
        assert_int_equal(st.decompress_errors, 1);
        assert_int_equal(st.bad_buffers, 1);
        assert_int_equal(st.bad_records, 0);
        assert_int_equal(st.unsupported_buffers, 0);
        assert_int_equal(st.first_problem_offset, offs[3]);
        assert_int_equal(d.n, 1);
        assert_int_equal(d.d[0].file_offset, offs[3]);
        assert_true(d.d[0].status < 0);
        assert_true(contains(d.d[0].msg, "buffer 3"));

        n = collect(r, ETL_ORDER_TIME, g, 32, &st, NULL);
        const uint32_t tt[] = {TAG_HEADER, 0x001, 0x002, 0x201, 0x003, 0x104, 0x004, 0x005, 0x105, 0x202, 0x106};
        check_tags(g, n, tt, 11);
        assert_int_equal(st.decompress_errors, 1);
        etl_reader_close(r);
        eb_free(&c);
        eb_free(&f);
    }

    /* Garbage instead of a stream (a back reference before the start of the output). */
    eb_file f, c;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    lh.log_file_mode = 0x04000000;
    build_ref(&f, &lh, 3, 48, w);
    size_t offs[8];
    compress_file(&f, &c, 0x7E, offs);
    memset(c.p + offs[5] + 0x48, 0xFF, 4); /* flags: 32 matches follow */
    memset(c.p + offs[5] + 0x4C, 0xFF, 2); /* a match of offset 0x2000 at output position 0 */
    diags d = {0};
    etl_reader *r = open_ok(&c, &d);
    got g[32];
    etl_stats st;
    size_t n = collect(r, ETL_ORDER_FILE, g, 32, &st, NULL);
    assert_int_equal(n, REF_RECORDS - 1);
    assert_int_equal(st.decompress_errors, 1);
    assert_int_equal(d.n, 1);
    assert_int_equal(d.d[0].file_offset, offs[5]);
    assert_true(contains(d.d[0].msg, "buffer 5"));
    etl_reader_close(r);
    eb_free(&c);
    eb_free(&f);
}

static void test_reader_unsupported_compression(void **state)
{
    (void)state;
    eb_file f, c;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    lh.log_file_mode = 0x04000000;
    build_ref(&f, &lh, 7, 0, w); /* buffer 0's State: COMPRESSION_FORMAT 7 */
    size_t offs[8];
    compress_file(&f, &c, 0x7E, offs);
    diags d = {0};
    etl_reader *r = open_ok(&c, &d);
    assert_int_equal(etl_reader_compression(r), 7);
    assert_int_equal(etl_reader_buffer_count(r), 7);
    assert_int_equal(d.n, 0);
    for (int order = 0; order <= 1; order++) {
        d.n = 0;
        got g[32];
        etl_stats st;
        size_t n = collect(r, order ? ETL_ORDER_TIME : ETL_ORDER_FILE, g, 32, &st, NULL);
        check_want(g, n, w, 2); /* buffer 0 is not compressed */
        assert_int_equal(st.unsupported_buffers, 6);
        assert_int_equal(st.bad_buffers, 6);
        assert_int_equal(st.decompress_errors, 0);
        assert_int_equal(st.compressed_buffers, 6);
        assert_int_equal(d.n, 6);
        for (int i = 0; i < 6; i++) assert_int_equal(d.d[i].status, ETL_E_UNSUPPORTED);
        if (!order) {
            assert_int_equal(st.first_problem_offset, offs[1]);
            for (int i = 0; i < 6; i++) {
                char name[32];
                snprintf(name, sizeof name, "buffer %d", i + 1);
                assert_int_equal(d.d[i].file_offset, offs[i + 1]);
                assert_true(contains(d.d[i].msg, name));
            }
        }
    }
    etl_reader_close(r);
    eb_free(&c);
    eb_free(&f);
}

/*
 * The buffer walk (etl_iter_next_buffer + etl_walk_next) gives the records of
 * etl_iter_next, field for field, and the same damage counters.
 */
static void check_walk_equal(etl_reader *r)
{
    etl_iter *a, *b;
    assert_int_equal(etl_iter_open_range(r, 0, SIZE_MAX, &a), ETL_OK);
    assert_int_equal(etl_iter_open_range(r, 0, SIZE_MAX, &b), ETL_OK);
    etl_walk w;
    etl_krec k;
    etl_record rec;
    bool more = etl_iter_next_buffer(b, &w) == ETL_OK;
    while (etl_iter_next(a, &rec) == ETL_OK) {
        int kind = ETL_WALK_END;
        while (more && (kind = etl_walk_next(&w, &k)) == ETL_WALK_END) more = etl_iter_next_buffer(b, &w) == ETL_OK;
        assert_true(more);
        assert_int_equal(rec.buffer_index, w.buffer_index);
        assert_int_equal(rec.cpu, w.cpu);
        if (kind == ETL_WALK_OTHER) {
            assert_false(rec.has & ETL_REC_HOOK);
            assert_int_equal(rec.offset, w.full.offset);
            assert_int_equal(rec.size, w.full.size);
            assert_int_equal(rec.payload.p - rec.data, w.full.payload.p - w.full.data);
            continue;
        }
        assert_int_equal(kind, ETL_WALK_KERNEL);
        assert_true(rec.has & ETL_REC_HOOK);
        /* Compressed buffers are expanded into each iterator's own scratch: compare offsets. */
        assert_int_equal(rec.offset, k.data - w.p);
        assert_int_equal(rec.size, k.size);
        assert_int_equal(rec.htype, k.htype);
        assert_int_equal(rec.hook, k.hook);
        assert_int_equal(rec.version_word, k.version_word);
        assert_int_equal(rec.pointer_size, k.pointer_size);
        assert_int_equal(rec.pmc_count, k.pmc_count);
        if (rec.pmc) assert_int_equal(rec.pmc - rec.data, k.payload.p - 8u * k.pmc_count - k.data);
        assert_int_equal(rec.ts, k.ts);
        assert_int_equal(rec.payload.p - rec.data, k.payload.p - k.data);
        assert_int_equal(rec.payload.n, k.payload.n);
    }
    while (more) {
        assert_int_equal(etl_walk_next(&w, &k), ETL_WALK_END);
        more = etl_iter_next_buffer(b, &w) == ETL_OK;
    }
    const etl_stats *x = etl_iter_stats_get(a), *y = etl_iter_stats_get(b);
    assert_int_equal(x->records, y->records);
    assert_int_equal(x->bad_buffers, y->bad_buffers);
    assert_int_equal(x->bad_records, y->bad_records);
    assert_int_equal(x->skipped_bytes, y->skipped_bytes);
    assert_int_equal(x->decompress_errors, y->decompress_errors);
    assert_int_equal(x->truncated_buffers, y->truncated_buffers);
    assert_int_equal(x->first_problem_offset, y->first_problem_offset);
    assert_string_equal(x->first_problem, y->first_problem);
    etl_iter_close(a);
    etl_iter_close(b);
}

/*
 * Seeded corruption of the reference file (plain and compressed): opening never
 * crashes, a file that opens iterates to ETL_END in both orders, every record of
 * an uncompressed buffer lies inside the file, and no more bytes are yielded than
 * the file holds. (Run under ASan/UBSan in the sanitizer build.)
 */
static bool check_mutant(const uint8_t *p, size_t n, bool compressed)
{
    etl_reader *r = NULL;
    etl_diag dg;
    etl_status st = etl_reader_open_memory(p, n, NULL, &r, &dg);
    if (st != ETL_OK) {
        assert_null(r);
        assert_true(st == ETL_E_NOT_ETL || st == ETL_E_NOMEM);
        return false;
    }
    for (int order = 0; order <= 1; order++) {
        etl_iter *it;
        assert_int_equal(etl_iter_open(r, order ? ETL_ORDER_TIME : ETL_ORDER_FILE, &it), ETL_OK);
        etl_record rec;
        size_t k = 0;
        uint64_t bytes = 0;
        while (etl_iter_next(it, &rec) == ETL_OK) {
            assert_true(rec.size >= 4);
            assert_true(rec.payload.p >= rec.data);
            assert_true(rec.payload.p + rec.payload.n <= rec.data + rec.size);
            if (!compressed) {
                assert_true(rec.data >= p);
                assert_true(rec.data + rec.size <= p + n);
            }
            bytes += rec.size;
            assert_true(++k < 100000);
        }
        if (!compressed) assert_true(bytes <= n);
        assert_int_equal(etl_iter_next(it, &rec), ETL_END);
        etl_iter_close(it);
    }
    check_walk_equal(r);
    etl_reader_close(r);
    return true;
}

static void test_reader_mutations(void **state)
{
    (void)state;
    eb_file f, c;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    lh.log_file_mode = 0x04000000;
    build_ref(&f, &lh, 3, 40, w);
    size_t offs[8];
    compress_file(&f, &c, 0x7E, offs);
    uint8_t *m = malloc(f.n > c.n ? f.n : c.n);
    uint64_t seed = 0xC0FFEE;
    int opened = 0;
    int iters = 3000; /* ETLKIT_MUTATIONS=n runs more, for a longer hunt */
    if (getenv("ETLKIT_MUTATIONS")) iters = atoi(getenv("ETLKIT_MUTATIONS"));
    for (int iter = 0; iter < iters; iter++) {
        bool comp = iter & 1;
        const eb_file *src = comp ? &c : &f;
        memcpy(m, src->p, src->n);
        size_t n = src->n;
        int edits = 1 + (int)(tu_rand(&seed) % 4);
        for (int e = 0; e < edits; e++) {
            uint64_t x = tu_rand(&seed);
            size_t at = (size_t)(x % n);
            switch ((x >> 32) % 4) {
            case 0: m[at] ^= (uint8_t)(1u << ((x >> 40) % 8)); break;   /* flip a bit */
            case 1: m[at] = (uint8_t)(x >> 40); break;                  /* any byte */
            case 2: if (at + 4 <= n) eb_w32(m + at, (uint32_t)(x >> 40) & 0xFFF); break; /* small u32 */
            default: if (at > 0x100) n = at; break;                     /* truncate */
            }
        }
        opened += check_mutant(m, n, comp);
    }
    assert_true(opened > iters / 2); /* most mutants are still ETL files: the iterators were exercised */
    free(m);
    eb_free(&c);
    eb_free(&f);
}

/* An options struct from an older caller (sz covers only sz): no callback is read. */
static void test_reader_options_size(void **state)
{
    (void)state;
    eb_file f;
    want w[REF_RECORDS];
    eb_lfh lh = eb_lfh_default();
    build_ref(&f, &lh, 0, 0, w);
    eb_put32(&f, 0x800, 0);
    diags d = {0};
    etl_reader_options o = opts_for(&d);
    o.sz = sizeof(size_t);
    etl_reader *r = NULL;
    etl_diag dg;
    assert_int_equal(etl_reader_open_memory(f.p, f.n, &o, &r, &dg), ETL_OK);
    assert_int_equal(etl_reader_stats_get(r)->bad_buffers, 1);
    assert_int_equal(d.n, 0);
    etl_reader_close(r);
    eb_free(&f);
}


/*
 * Paced walks (etl_iter_pace) on two threads over a 40 MB trace, one sleeping after
 * every buffer: the other never gets more than the pace (16 MiB, plus the slow one's
 * buffer in hand) past it in the file, both reach the end, and each sees every buffer
 * of its CPUs once.
 */
typedef struct pace_walker {
    etl_reader *r;
    uint8_t want[4];
    bool slow;
    _Atomic uint64_t *slow_at; /* the file offset of the slow walker's last buffer */
    _Atomic bool *slow_done;
    _Atomic unsigned *ready;   /* walkers paced: both walk from then on */
    uint64_t lead, buffers;
    bool ok;
} pace_walker;

static void pace_walk(void *arg)
{
    pace_walker *p = arg;
    etl_iter *it;
    if (etl_iter_open_cpus_buffers(p->r, p->want, 4, &it) != ETL_OK) return;
    etl_iter_pace(it);
    atomic_fetch_add(p->ready, 1);
    while (atomic_load(p->ready) < 2) nanosleep(&(struct timespec){0, 100000}, NULL);
    etl_walk w;
    while (etl_iter_next_buffer(it, &w) == ETL_OK) {
        etl_buffer_header h;
        uint64_t off = 0;
        if (etl_reader_buffer(p->r, w.buffer_index, &h, &off) != ETL_OK) break;
        p->buffers++;
        if (p->slow) {
            atomic_store(p->slow_at, off);
            nanosleep(&(struct timespec){0, 300000}, NULL);
        } else if (!atomic_load(p->slow_done) && off > atomic_load(p->slow_at)) {
            uint64_t d = off - atomic_load(p->slow_at);
            if (d > p->lead) p->lead = d;
        }
    }
    if (p->slow) atomic_store(p->slow_done, true);
    etl_iter_close(it);
    p->ok = true;
}

static void test_paced_walks(void **state)
{
    (void)state;
    char path[512];
    st_tmp(path, sizeof path, "pace", "t.etl");
    etl_synth_options o;
    etl_synth_options_init(&o);
    st_set(&o, "cpus", "4");
    st_set(&o, "size", "40M");
    st_set(&o, "duration", "0");
    etl_synth_summary sum;
    etl_diag d;
    assert_int_equal(etl_synth_run(path, &o, &sum, &d), ETL_OK);
    etl_reader *r;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    _Atomic uint64_t slow_at = 0;
    _Atomic bool slow_done = false;
    _Atomic unsigned ready = 0;
    pace_walker fast = {r, {1, 0, 1, 0}, false, &slow_at, &slow_done, &ready, 0, 0, false};
    pace_walker slow = {r, {0, 1, 0, 1}, true, &slow_at, &slow_done, &ready, 0, 0, false};
    etl_os_thread *b = etl_thread_start(pace_walk, &slow), *a = etl_thread_start(pace_walk, &fast);
    assert_non_null(a);
    assert_non_null(b);
    etl_thread_join(a);
    etl_thread_join(b);
    assert_true(fast.ok && slow.ok);
    size_t per_cpu[4] = {0};
    for (size_t i = 0; i < etl_reader_buffer_count(r); i++) {
        unsigned c = etl_reader_buffer_cpu(r, i);
        if (c < 4) per_cpu[c]++;
    }
    assert_int_equal(fast.buffers, per_cpu[0] + per_cpu[2]);
    assert_int_equal(slow.buffers, per_cpu[1] + per_cpu[3]);
    assert_true(fast.buffers > 100 && slow.buffers > 100);
    /* The slow one's frontier is its next buffer: a buffer or two past the last it took. */
    assert_true(fast.lead <= (16u << 20) + (1u << 20));
    etl_reader_close(r);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_paced_walks),
        cmocka_unit_test(test_buffer_header_decode_fields),
        cmocka_unit_test(test_buffer_header_processor_number),
        cmocka_unit_test(test_buffer_header_round_trip),
        cmocka_unit_test(test_buffer_header_truncated),
        cmocka_unit_test(test_logfile_header_64),
        cmocka_unit_test(test_logfile_header_32),
        cmocka_unit_test(test_logfile_header_pointer_size_field),
        cmocka_unit_test(test_logfile_header_unterminated_name),
        cmocka_unit_test(test_logfile_header_names_missing),
        cmocka_unit_test(test_logfile_header_not_header),
        cmocka_unit_test(test_logfile_header_short),
        cmocka_unit_test(test_reader_clean_file_order),
        cmocka_unit_test(test_reader_time_order),
        cmocka_unit_test(test_iter_keep_kernel),
        cmocka_unit_test(test_iter_bad_times_in_buffer),
        cmocka_unit_test(test_iter_oversized_record),
        cmocka_unit_test(test_iter_oversized_batch),
        cmocka_unit_test(test_iter_all_ones_marker),
        cmocka_unit_test(test_reader_two_iterators),
        cmocka_unit_test(test_reader_header_saved_offset),
        cmocka_unit_test(test_reader_duplicate_sequence),
        cmocka_unit_test(test_reader_open_path_32bit),
        cmocka_unit_test(test_reader_not_etl),
        cmocka_unit_test(test_reader_truncated_mid_record),
        cmocka_unit_test(test_reader_truncated_in_header),
        cmocka_unit_test(test_reader_zero_buffer_size),
        cmocka_unit_test(test_reader_resync_prefers_nominal_size),
        cmocka_unit_test(test_reader_short_buffer_size),
        cmocka_unit_test(test_reader_offset_past_buffer_size),
        cmocka_unit_test(test_reader_record_past_buffer),
        cmocka_unit_test(test_reader_compressed),
        cmocka_unit_test(test_reader_compressed_bad),
        cmocka_unit_test(test_reader_unsupported_compression),
        cmocka_unit_test(test_reader_mutations),
        cmocka_unit_test(test_reader_options_size),
    };
    return cmocka_run_group_tests_name("container", tests, NULL, NULL);
}

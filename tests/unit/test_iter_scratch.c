/*
 * test_iter_scratch.c - the iterator's decompression scratch (iter.c scratch_take) against a hostile file's
 * claims (reviewer67 R1): 9 CPUs, session BufferSize 64 MiB; CPUs 0-7 one compressed buffer each whose Offset
 * claims 64 MiB of event data but which expands to 100 records (a lie: damage), CPU 8 one honest compressed
 * buffer of the same records. Reserving each CPU's largest claim at open gave the 8 lies the whole 512 MiB
 * budget, and CPU 8's honest buffer was then "over the memory budget": its records lost. They must be read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlbuild.h"
#include "etlkit/etlkit.h"
#include "etlkit/compress.h"

static void header(eb_file *f, uint32_t bufsize, uint32_t nproc)
{
    eb_lfh h = eb_lfh_default();
    h.buffer_size = bufsize;
    h.nproc = nproc;
    h.log_file_mode |= 0x04000000u; /* EVENT_TRACE_COMPRESSED_MODE */
    eb_init(f);
    eb_rec r;
    eb_rec_lfh(&r, &h);
    eb_begin(f, &(eb_bufopt){.size = 0x1000, .type = 4, .state = 3});
    eb_add_rec(f, &r);
    eb_end(f);
}

/* A compressed buffer of z whose Offset and SavedOffset claim raw_n bytes of event data. */
static void compressed_buffer(eb_file *f, const uint8_t *z, size_t zn, size_t raw_n, uint16_t cpu, uint64_t seq)
{
    eb_begin(f, &(eb_bufopt){.size = (uint32_t)(0x48 + zn), .seq = seq, .cpu = cpu, .extra_flags = 0x40});
    memcpy(f->p + f->cur + 0x48, z, zn);
    eb_put32(f, f->cur + 0x04, (uint32_t)(0x48 + raw_n));
    eb_put32(f, f->cur + 0x30, (uint32_t)(0x48 + raw_n));
}

static void test_lies_keep_no_budget(void **state)
{
    (void)state;
    uint8_t raw[100 * 64];
    size_t n = 0;
    for (unsigned i = 0; i < 100; i++) {
        eb_rec r;
        eb_rec_sys64_tag(&r, 0x0A00, 100 + i, 1000010u + i, i);
        memcpy(raw + n, r.b, r.n);
        n += (r.n + 7) & ~(size_t)7;
    }
    size_t cap = etl_xpress_compress_bound(n), zn;
    uint8_t *z = malloc(cap);
    assert_non_null(z);
    assert_int_equal(etl_xpress_compress(raw, n, z, cap, &zn), ETL_OK);
    eb_file f;
    header(&f, 64u << 20, 9);
    uint64_t seq = 1;
    for (uint16_t c = 0; c < 8; c++) compressed_buffer(&f, z, zn, (64u << 20) - 0x48, c, seq++);
    compressed_buffer(&f, z, zn, n, 8, seq++);

    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open_memory(f.p, f.n, NULL, &r, &d), ETL_OK);
    for (int order = ETL_ORDER_FILE; order <= ETL_ORDER_TIME; order++) {
        etl_iter *it;
        assert_int_equal(etl_iter_open(r, (etl_order)order, &it), ETL_OK);
        etl_record rec;
        uint64_t cpu8 = 0;
        while (etl_iter_next(it, &rec) == ETL_OK) cpu8 += rec.cpu == 8;
        assert_int_equal(cpu8, 100);                               /* the honest buffer, whole */
        assert_int_equal(etl_iter_stats_get(it)->bad_buffers, 8); /* each lie, damage */
        etl_iter_close(it);
    }
    etl_reader_close(r);
    eb_free(&f);
    free(z);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lies_keep_no_budget),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

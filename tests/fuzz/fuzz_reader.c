/*
 * fuzz_reader.c - the whole read path on arbitrary bytes: open, index, decompress,
 * frame every record in both orders, decode every kernel event and expand the
 * compact batches. Nothing may crash, leak or read out of bounds, both orders
 * must yield the same number of records, and the buffer walk the same records and
 * damage as the file-order iterator.
 */
#include <stdint.h>
#include <stdlib.h>
#include "etlkit/etlkit.h"

static volatile uint64_t sink;

static uint64_t walk(etl_reader *r, etl_order order)
{
    etl_iter *it;
    if (etl_iter_open(r, order, &it) != ETL_OK) return 0;
    unsigned ncpu = etl_reader_cpu_count(r) ? etl_reader_cpu_count(r) : 1;
    etl_batch_expand_cpu *cpus = calloc(ncpu, sizeof *cpus);
    etl_batch_expander x;
    if (!cpus || etl_batch_expand_init(&x, cpus, ncpu) != ETL_OK) abort();
    etl_record rec;
    etl_event ev;
    etl_cswitch sw;
    uint64_t n = 0, sum = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        n++;
        /* Touch every payload byte so ASan checks the span. */
        for (size_t i = 0; i < rec.payload.n; i++) sum += rec.payload.p[i];
        for (unsigned i = 0; i < rec.pmc_count; i++) sum += etl_record_pmc(&rec, i);
        size_t pos = 0;
        etl_ext_item item;
        while (etl_record_next_ext(&rec, &pos, &item) == ETL_OK)
            for (size_t i = 0; i < item.data.n; i++) sum += item.data.p[i];
        if (etl_event_decode(&rec, &ev) == ETL_OK && ev.kind == ETL_EVENT_CCSWAP_BATCH) {
            etl_batch_expand_begin(&x, rec.cpu, rec.payload, 39, (uint8_t)rec.version);
            while (etl_batch_expand_next(&x, &sw) == ETL_OK) sum += sw.old_tid;
        }
    }
    while (etl_batch_expand_finish(&x, &sw) == ETL_OK) sum += sw.ts;
    etl_iter_close(it);
    free(cpus);
    sink += sum;
    return n;
}

/* The walk's records (etl_walk_next) against the file-order iterator's, and their damage counters. */
static void walk_equal(etl_reader *r)
{
    etl_iter *a, *b;
    if (etl_iter_open_range(r, 0, SIZE_MAX, &a) != ETL_OK) return;
    if (etl_iter_open_range(r, 0, SIZE_MAX, &b) != ETL_OK) abort();
    etl_walk w;
    etl_krec k;
    etl_record rec;
    bool more = etl_iter_next_buffer(b, &w) == ETL_OK;
    while (etl_iter_next(a, &rec) == ETL_OK) {
        int kind = ETL_WALK_END;
        while (more && (kind = etl_walk_next(&w, &k)) == ETL_WALK_END) more = etl_iter_next_buffer(b, &w) == ETL_OK;
        if (!more || rec.buffer_index != w.buffer_index) abort();
        const uint8_t *d = kind == ETL_WALK_KERNEL ? k.data : w.full.data;
        const etl_span *pl = kind == ETL_WALK_KERNEL ? &k.payload : &w.full.payload;
        /* Compressed buffers are expanded into each iterator's own scratch: compare offsets. */
        if (rec.offset != (size_t)(d - w.p) || pl->p - d != rec.payload.p - rec.data || pl->n != rec.payload.n)
            abort();
        if ((kind == ETL_WALK_KERNEL) != ((rec.has & ETL_REC_HOOK) != 0)) abort();
        if (kind == ETL_WALK_KERNEL && (k.ts != rec.ts || k.hook != rec.hook || k.pmc_count != rec.pmc_count ||
                                        k.version_word != rec.version_word || k.pointer_size != rec.pointer_size))
            abort();
    }
    while (more) {
        if (etl_walk_next(&w, &k) != ETL_WALK_END) abort();
        more = etl_iter_next_buffer(b, &w) == ETL_OK;
    }
    const etl_stats *x = etl_iter_stats_get(a), *y = etl_iter_stats_get(b);
    if (x->records != y->records || x->bad_records != y->bad_records || x->bad_buffers != y->bad_buffers ||
        x->skipped_bytes != y->skipped_bytes || x->first_problem_offset != y->first_problem_offset)
        abort();
    etl_iter_close(a);
    etl_iter_close(b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open_memory(data, size, NULL, &r, &d) != ETL_OK) return 0;
    uint64_t a = walk(r, ETL_ORDER_FILE), b = walk(r, ETL_ORDER_TIME);
    if (a != b) abort();
    walk_equal(r);
    etl_reader_close(r);
    return 0;
}

/*
 * fuzz_reader.c - the whole read path on arbitrary bytes: open, index, decompress,
 * frame every record in both orders, decode every kernel event and expand the
 * compact batches. Nothing may crash, leak or read out of bounds, and both orders
 * must yield the same number of records.
 */
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open_memory(data, size, NULL, &r, &d) != ETL_OK) return 0;
    uint64_t a = walk(r, ETL_ORDER_FILE), b = walk(r, ETL_ORDER_TIME);
    if (a != b) abort();
    etl_reader_close(r);
    return 0;
}

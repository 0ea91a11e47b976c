/*
 * fuzz_reader.c - the whole read path on arbitrary bytes: open, index, decompress,
 * frame every record in both orders. Nothing may crash, leak or read out of bounds,
 * and both orders must yield the same number of records.
 */
#include <stdlib.h>
#include "etlkit/etlkit.h"

static volatile uint64_t sink;

static uint64_t walk(etl_reader *r, etl_order order)
{
    etl_iter *it;
    if (etl_iter_open(r, order, &it) != ETL_OK) return 0;
    etl_record rec;
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
    }
    etl_iter_close(it);
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

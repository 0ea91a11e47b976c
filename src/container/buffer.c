/*
 * buffer.c - WMI_BUFFER_HEADER, the 0x48 bytes that open every buffer.
 *
 * The processor field is a u16 ProcessorIndex (masked with 0x7FF) when the
 * PROC_INDEX flag says so, else the old UCHAR ProcessorNumber. The 0x20 clock
 * union is kept raw: real files hold list pointers there.
 */
#include "etlkit/container.h"
#include "base/bytes.h"

#define ETW_PROCESSOR_INDEX_MASK 0x07FFu

etl_status etl_buffer_header_decode(etl_span s, etl_buffer_header *h)
{
    if (!etl_span_has(s, 0, ETL_BUFFER_HEADER_SIZE)) return ETL_E_TRUNCATED;
    const uint8_t *p = s.p;
    h->buffer_size = etl_rd_u32(p + 0x00);
    h->saved_offset = etl_rd_u32(p + 0x04);
    h->current_offset = etl_rd_u32(p + 0x08);
    h->reference_count = etl_rd_u32(p + 0x0C);
    h->timestamp = etl_rd_u64(p + 0x10);
    h->sequence_number = etl_rd_u64(p + 0x18);
    h->clock_union = etl_rd_u64(p + 0x20);
    h->logger_id = etl_rd_u16(p + 0x2A);
    h->state = etl_rd_u32(p + 0x2C);
    h->offset = etl_rd_u32(p + 0x30);
    h->buffer_flag = etl_rd_u16(p + 0x34);
    h->buffer_type = etl_rd_u16(p + 0x36);
    h->ref_start_time = etl_rd_u64(p + 0x38);
    h->ref_start_perf_clock = etl_rd_u64(p + 0x40);
    if (h->buffer_flag & ETL_BUFFER_FLAG_PROC_INDEX)
        h->processor_index = etl_rd_u16(p + 0x28) & ETW_PROCESSOR_INDEX_MASK;
    else
        h->processor_index = p[0x28];
    return ETL_OK;
}

void etl_buffer_header_encode(const etl_buffer_header *h, uint8_t out[ETL_BUFFER_HEADER_SIZE])
{
    etl_wr_u32(out + 0x00, h->buffer_size);
    etl_wr_u32(out + 0x04, h->saved_offset);
    etl_wr_u32(out + 0x08, h->current_offset);
    etl_wr_u32(out + 0x0C, h->reference_count);
    etl_wr_u64(out + 0x10, h->timestamp);
    etl_wr_u64(out + 0x18, h->sequence_number);
    etl_wr_u64(out + 0x20, h->clock_union);
    etl_wr_u16(out + 0x28, h->processor_index);
    etl_wr_u16(out + 0x2A, h->logger_id);
    etl_wr_u32(out + 0x2C, h->state);
    etl_wr_u32(out + 0x30, h->offset);
    etl_wr_u16(out + 0x34, h->buffer_flag);
    etl_wr_u16(out + 0x36, h->buffer_type);
    etl_wr_u64(out + 0x38, h->ref_start_time);
    etl_wr_u64(out + 0x40, h->ref_start_perf_clock);
}

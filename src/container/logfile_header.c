/*
 * logfile_header.c - the first record of every file: a SYSTEM32/64 header with
 * hook 0x0000 and TRACE_LOGFILE_HEADER, then the logger name and the log file
 * name as NUL-terminated UTF-16. The header type, not the reading machine,
 * says whether the two in-struct pointers are 4 or 8 bytes; everything after
 * them shifts accordingly, and a 4-byte pad precedes BootTime (container.md §5).
 */
#include <string.h>
#include "etlkit/container.h"
#include "etlkit/text.h"
#include "base/bytes.h"

#define SYSTEM_HEADER_SIZE 0x20u
#define TZ_SIZE 172u

size_t etl_logfile_header_size(unsigned pointer_size)
{
    return pointer_size == 8 ? 0x118 : 0x110;
}

etl_status etl_logfile_header_decode(etl_span rec, etl_logfile_header *h)
{
    memset(h, 0, sizeof *h);
    if (!etl_span_has(rec, 0, SYSTEM_HEADER_SIZE)) return ETL_E_NOT_ETL;
    const uint8_t *p = rec.p;
    uint8_t htype = p[2];
    if ((p[3] & 0xC0) != 0xC0 || (htype != ETL_HTYPE_SYSTEM32 && htype != ETL_HTYPE_SYSTEM64))
        return ETL_E_NOT_ETL;
    if (etl_rd_u16(p + 6) != 0x0000) return ETL_E_NOT_ETL;
    unsigned ptr = htype == ETL_HTYPE_SYSTEM64 ? 8 : 4;
    size_t size = etl_rd_u16(p + 4);
    if (size > rec.n) return ETL_E_TRUNCATED;
    etl_span body = etl_span_sub(rec, SYSTEM_HEADER_SIZE, size - (size < SYSTEM_HEADER_SIZE ? size : SYSTEM_HEADER_SIZE));
    size_t fixed = etl_logfile_header_size(ptr);
    if (size < SYSTEM_HEADER_SIZE || body.n < fixed) return ETL_E_NOT_ETL;

    h->header_type = htype;
    h->header_tid = etl_rd_u32(p + 8);
    h->header_pid = etl_rd_u32(p + 12);
    h->header_ts = etl_rd_u64(p + 16);

    const uint8_t *b = body.p;
    h->buffer_size = etl_rd_u32(b + 0x00);
    h->os_major = b[0x04];
    h->os_minor = b[0x05];
    h->sub_version = b[0x06];
    h->sub_minor_version = b[0x07];
    h->provider_version = etl_rd_u32(b + 0x08);
    h->num_processors = etl_rd_u32(b + 0x0C);
    h->end_time = etl_rd_u64(b + 0x10);
    h->timer_resolution = etl_rd_u32(b + 0x18);
    h->maximum_file_size = etl_rd_u32(b + 0x1C);
    h->log_file_mode = etl_rd_u32(b + 0x20);
    h->buffers_written = etl_rd_u32(b + 0x24);
    h->start_buffers = etl_rd_u32(b + 0x28);
    h->pointer_size = etl_rd_u32(b + 0x2C);
    h->events_lost = etl_rd_u32(b + 0x30);
    h->cpu_speed_mhz = etl_rd_u32(b + 0x34);
    h->logger_name_ptr = etl_rd_ptr(b + 0x38, ptr);
    h->log_file_name_ptr = etl_rd_ptr(b + 0x38 + ptr, ptr);
    size_t tz = 0x38 + 2 * ptr; /* TIME_ZONE_INFORMATION: Bias, StandardName[32], ... */
    h->tz_bias = (int32_t)etl_rd_u32(b + tz);
    etl_utf16_to_utf8(etl_span_sub(body, tz + 4, 64), h->tz_standard_name, sizeof h->tz_standard_name);
    size_t t = tz + TZ_SIZE + 4; /* the pad before BootTime */
    h->boot_time = etl_rd_u64(b + t);
    h->perf_freq = etl_rd_u64(b + t + 8);
    h->start_time = etl_rd_u64(b + t + 16);
    h->clock_type = etl_rd_u32(b + t + 24);
    h->buffers_lost = etl_rd_u32(b + t + 28);

    /* The names follow the struct inside the record; either may be missing. */
    etl_span names = etl_span_from(body, fixed);
    bool term = false;
    size_t n1 = etl_utf16_len(names, &term);
    etl_utf16_to_utf8(etl_span_sub(names, 0, n1), h->logger_name, sizeof h->logger_name);
    if (term) {
        etl_span rest = etl_span_from(names, n1 + 2);
        size_t n2 = etl_utf16_len(rest, NULL);
        etl_utf16_to_utf8(etl_span_sub(rest, 0, n2), h->log_file_name, sizeof h->log_file_name);
    }
    return ETL_OK;
}

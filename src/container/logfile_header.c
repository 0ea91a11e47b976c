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

/* UTF-8 to NUL-terminated UTF-16LE at out; returns bytes written incl. the NUL, 0 if no room. */
static size_t put_utf16(const char *s, uint8_t *out, size_t cap)
{
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        uint32_t cp = *u++;
        int extra = cp >= 0xF0 ? 3 : cp >= 0xE0 ? 2 : cp >= 0xC0 ? 1 : 0;
        if (extra) cp &= 0x3Fu >> extra;
        for (int i = 0; i < extra && (*u & 0xC0) == 0x80; i++) cp = cp << 6 | (*u++ & 0x3F);
        if (cp >= 0x10000) {
            if (o + 4 > cap) return 0;
            cp -= 0x10000;
            etl_wr_u16(out + o, (uint16_t)(0xD800 | cp >> 10));
            etl_wr_u16(out + o + 2, (uint16_t)(0xDC00 | (cp & 0x3FF)));
            o += 4;
        } else {
            if (o + 2 > cap) return 0;
            etl_wr_u16(out + o, (uint16_t)cp);
            o += 2;
        }
    }
    if (o + 2 > cap) return 0;
    etl_wr_u16(out + o, 0);
    return o + 2;
}

etl_status etl_logfile_header_encode(const etl_logfile_header *h, unsigned ptr, uint8_t *out, size_t cap,
                                     size_t *len)
{
    if (ptr != 4 && ptr != 8) return ETL_E_INVALID_ARG;
    size_t fixed = etl_logfile_header_size(ptr);
    if (cap < SYSTEM_HEADER_SIZE + fixed + 4) return ETL_E_RANGE;
    memset(out, 0, SYSTEM_HEADER_SIZE + fixed);
    uint8_t *b = out + SYSTEM_HEADER_SIZE;
    etl_wr_u32(b + 0x00, h->buffer_size);
    b[0x04] = h->os_major;
    b[0x05] = h->os_minor;
    b[0x06] = h->sub_version;
    b[0x07] = h->sub_minor_version;
    etl_wr_u32(b + 0x08, h->provider_version);
    etl_wr_u32(b + 0x0C, h->num_processors);
    etl_wr_u64(b + 0x10, h->end_time);
    etl_wr_u32(b + 0x18, h->timer_resolution);
    etl_wr_u32(b + 0x1C, h->maximum_file_size);
    etl_wr_u32(b + 0x20, h->log_file_mode);
    etl_wr_u32(b + 0x24, h->buffers_written);
    etl_wr_u32(b + 0x28, h->start_buffers);
    etl_wr_u32(b + 0x2C, h->pointer_size);
    etl_wr_u32(b + 0x30, h->events_lost);
    etl_wr_u32(b + 0x34, h->cpu_speed_mhz);
    etl_wr_ptr(b + 0x38, h->logger_name_ptr, ptr);
    etl_wr_ptr(b + 0x38 + ptr, h->log_file_name_ptr, ptr);
    size_t tz = 0x38 + 2 * ptr;
    etl_wr_u32(b + tz, (uint32_t)h->tz_bias);
    put_utf16(h->tz_standard_name, b + tz + 4, 62); /* StandardName[32], NUL kept in the last unit */
    size_t t = tz + TZ_SIZE + 4;
    etl_wr_u64(b + t, h->boot_time);
    etl_wr_u64(b + t + 8, h->perf_freq);
    etl_wr_u64(b + t + 16, h->start_time);
    etl_wr_u32(b + t + 24, h->clock_type);
    etl_wr_u32(b + t + 28, h->buffers_lost);
    size_t o = SYSTEM_HEADER_SIZE + fixed;
    size_t n1 = put_utf16(h->logger_name, out + o, cap - o);
    if (!n1) return ETL_E_RANGE;
    o += n1;
    size_t n2 = put_utf16(h->log_file_name, out + o, cap - o);
    if (!n2) return ETL_E_RANGE;
    o += n2;
    if (o > 0xFFFF) return ETL_E_RANGE;
    uint8_t htype = ptr == 8 ? ETL_HTYPE_SYSTEM64 : ETL_HTYPE_SYSTEM32;
    etl_wr_u32(out, 0xC0000000u | (uint32_t)htype << 16 | 2u);
    etl_wr_u16(out + 4, (uint16_t)o);
    etl_wr_u16(out + 6, 0x0000);
    etl_wr_u32(out + 8, h->header_tid);
    etl_wr_u32(out + 12, h->header_pid);
    etl_wr_u64(out + 16, h->header_ts);
    *len = o;
    return ETL_OK;
}

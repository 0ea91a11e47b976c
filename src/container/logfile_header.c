/*
 * logfile_header.c - the first record of every file: a SYSTEM32/64 header with
 * hook 0x0000 and TRACE_LOGFILE_HEADER, then the logger name and the log file
 * name as NUL-terminated UTF-16. The header type, not the reading machine,
 * says whether the two in-struct pointers are 4 or 8 bytes; everything after
 * them shifts accordingly, and a 4-byte pad precedes BootTime (container.md §5).
 */
#include <stdio.h>
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

void etl_log_file_mode_names(uint32_t mode, char *out, size_t cap)
{
    /* EVENT_TRACE_*_MODE (evntrace.h), in bit order. */
    static const struct { uint32_t bit; const char *name; } names[] = {
        {0x00000001, "FILE_MODE_SEQUENTIAL"}, {0x00000002, "FILE_MODE_CIRCULAR"},
        {0x00000004, "FILE_MODE_APPEND"}, {0x00000008, "FILE_MODE_NEWFILE"},
        {0x00000010, "USE_MS_FLUSH_TIMER"}, {0x00000020, "FILE_MODE_PREALLOCATE"},
        {0x00000040, "NONSTOPPABLE_MODE"}, {0x00000080, "SECURE_MODE"},
        {0x00000100, "REAL_TIME_MODE"}, {0x00000200, "DELAY_OPEN_FILE_MODE"},
        {0x00000400, "BUFFERING_MODE"}, {0x00000800, "PRIVATE_LOGGER_MODE"},
        {0x00001000, "ADD_HEADER_MODE"}, {0x00002000, "USE_KBYTES_FOR_SIZE"},
        {0x00004000, "USE_GLOBAL_SEQUENCE"}, {0x00008000, "USE_LOCAL_SEQUENCE"},
        {0x00010000, "RELOG_MODE"}, {0x00020000, "PRIVATE_IN_PROC"},
        {0x00080000, "KD_FILTER_MODE"}, {0x00100000, "MODE_RESERVED"},
        {0x00400000, "STOP_ON_HYBRID_SHUTDOWN"}, {0x00800000, "PERSIST_ON_HYBRID_SHUTDOWN"},
        {0x01000000, "USE_PAGED_MEMORY"}, {0x02000000, "SYSTEM_LOGGER_MODE"},
        {0x04000000, "COMPRESSED_MODE"}, {0x08000000, "INDEPENDENT_SESSION_MODE"},
        {0x10000000, "NO_PER_PROCESSOR_BUFFERING"}, {0x20000000, "BLOCKING_MODE"},
        {0x80000000, "ADDTO_TRIAGE_DUMP"},
    };
    size_t n = 0;
    out[0] = 0;
    uint32_t left = mode;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && n < cap; i++) {
        if (!(mode & names[i].bit)) continue;
        left &= ~names[i].bit;
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? " | " : "", names[i].name);
    }
    if (left && n < cap) snprintf(out + n, cap - n, "%s0x%x", n ? " | " : "", left);
    if (!mode) snprintf(out, cap, "FILE_MODE_NONE");
}

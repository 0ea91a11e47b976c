/*
 * record.c - frames one record inside a buffer and decodes its trace header.
 *
 * The marker (first u32) says which header follows: bit 31 set means a trace
 * header; with bit 30 also set, byte 2 is TRACE_HEADER_TYPE_*; with bit 30 clear
 * and bit 28 set it is a WPP MESSAGE_TRACE_HEADER. SYSTEM, COMPACT and PERFINFO
 * keep Size at +4; every other header keeps it at +0. A record's span is checked
 * once here, so payload decoders get a span they cannot overrun.
 */
#include <string.h>
#include "etlkit/container.h"
#include "container/reader_internal.h"
#include "base/bytes.h"
#include "base/fastmem.h"

#define TRACE_HEADER_FLAG 0x80000000u
#define TRACE_HEADER_EVENT_TRACE 0x40000000u
#define TRACE_MESSAGE 0x10000000u

/* EVENT_HEADER Flags */
#define EVENT_HEADER_FLAG_EXTENDED_INFO 0x0001u
#define EVENT_HEADER_FLAG_32_BIT_HEADER 0x0020u
#define EVENT_HEADER_FLAG_64_BIT_HEADER 0x0040u

/* MESSAGE_TRACE_HEADER OptionFlags (evntrace.h TRACE_MESSAGE_*) */
#define TRACE_MESSAGE_SEQUENCE 0x0001u
#define TRACE_MESSAGE_GUID 0x0002u
#define TRACE_MESSAGE_COMPONENTID 0x0004u
#define TRACE_MESSAGE_TIMESTAMP 0x0008u
#define TRACE_MESSAGE_SYSTEMINFO 0x0020u

size_t etl_htype_header_size(uint8_t htype)
{
    switch (htype) {
    case ETL_HTYPE_SYSTEM32:
    case ETL_HTYPE_SYSTEM64: return 0x20;
    case ETL_HTYPE_COMPACT32:
    case ETL_HTYPE_COMPACT64: return 0x18;
    case ETL_HTYPE_PERFINFO32:
    case ETL_HTYPE_PERFINFO64: return 0x10;
    case ETL_HTYPE_FULL_HEADER32:
    case ETL_HTYPE_FULL_HEADER64: return 0x30;
    case ETL_HTYPE_INSTANCE32:
    case ETL_HTYPE_INSTANCE64: return 0x48;
    case ETL_HTYPE_EVENT_HEADER32:
    case ETL_HTYPE_EVENT_HEADER64: return 0x50;
    case ETL_HTYPE_MESSAGE: return 0x08;
    case ETL_HTYPE_TIMED:
    case ETL_HTYPE_ERROR: return 0x04; /* layouts unknown: Size + type only */
    default: return 0;
    }
}

const char *etl_htype_name(uint8_t htype)
{
    switch (htype) {
    case ETL_HTYPE_SYSTEM32: return "SYSTEM32";
    case ETL_HTYPE_SYSTEM64: return "SYSTEM64";
    case ETL_HTYPE_COMPACT32: return "COMPACT32";
    case ETL_HTYPE_COMPACT64: return "COMPACT64";
    case ETL_HTYPE_FULL_HEADER32: return "FULL_HEADER32";
    case ETL_HTYPE_INSTANCE32: return "INSTANCE32";
    case ETL_HTYPE_TIMED: return "TIMED";
    case ETL_HTYPE_ERROR: return "ERROR";
    case ETL_HTYPE_WNODE_HEADER: return "WNODE_HEADER";
    case ETL_HTYPE_MESSAGE: return "MESSAGE";
    case ETL_HTYPE_PERFINFO32: return "PERFINFO32";
    case ETL_HTYPE_PERFINFO64: return "PERFINFO64";
    case ETL_HTYPE_EVENT_HEADER32: return "EVENT_HEADER32";
    case ETL_HTYPE_EVENT_HEADER64: return "EVENT_HEADER64";
    case ETL_HTYPE_FULL_HEADER64: return "FULL_HEADER64";
    case ETL_HTYPE_INSTANCE64: return "INSTANCE64";
    default: return "UNKNOWN";
    }
}

uint64_t etl_record_pmc(const etl_record *r, unsigned i)
{
    return i < r->pmc_count ? etl_rd_u64(r->pmc + 8u * i) : 0;
}

/* SYSTEM, COMPACT and PERFINFO: Version word with PEBS/PMC items after the fixed header. */
static etl_status frame_kernel(const uint8_t *p, size_t size, size_t fixed, etl_record *r)
{
    uint16_t vw = etl_rd_u16(p);
    r->version_word = vw;
    r->version = vw & 0xFF;
    r->hook = etl_rd_u16(p + 6);
    r->has |= ETL_REC_HOOK | ETL_REC_TS | ETL_REC_VERSION;
    size_t ext = 0;
    if (vw & ETL_TRACE_HEADER_PEBS_INDEX_FLAG) {
        if (size < fixed + 8) return ETL_E_CORRUPT;
        r->pebs_index = etl_rd_u64(p + fixed);
        r->has |= ETL_REC_PEBS;
        ext = 8;
    }
    unsigned n = (vw & ETL_TRACE_HEADER_PMC_COUNTERS_MASK) >> ETL_TRACE_HEADER_PMC_COUNTERS_SHIFT;
    if (n) {
        if (size < fixed + ext + 8u * n) return ETL_E_CORRUPT;
        r->pmc = p + fixed + ext;
        r->pmc_count = (uint8_t)n;
        r->has |= ETL_REC_PMC;
        ext += 8u * n;
    }
    r->payload.p = p + fixed + ext;
    r->payload.n = size - fixed - ext;
    return ETL_OK;
}

/* EVENT_TRACE_HEADER (FULL) and EVENT_INSTANCE_GUID_HEADER share their first 0x30 bytes. */
static void decode_full(const uint8_t *p, etl_record *r)
{
    r->opcode = p[4];
    r->level = p[5];
    r->version = etl_rd_u16(p + 6);
    r->tid = etl_rd_u32(p + 8);
    r->pid = etl_rd_u32(p + 12);
    r->ts = etl_rd_u64(p + 16);
    etl_rd_guid(p + 0x18, &r->provider);
    r->kernel_time = etl_rd_u32(p + 0x28);
    r->user_time = etl_rd_u32(p + 0x2C);
    r->has |= ETL_REC_OPCODE | ETL_REC_LEVEL | ETL_REC_VERSION | ETL_REC_TID | ETL_REC_TS |
              ETL_REC_PROVIDER | ETL_REC_CPU_TIME;
}

/* EVENT_HEADER: extended items (when flagged) sit between the header and the user data. */
static etl_status frame_event_header(const uint8_t *p, size_t size, etl_record *r)
{
    r->event_flags = etl_rd_u16(p + 4);
    r->event_property = etl_rd_u16(p + 6);
    r->tid = etl_rd_u32(p + 8);
    r->pid = etl_rd_u32(p + 12);
    r->ts = etl_rd_u64(p + 16);
    etl_rd_guid(p + 0x18, &r->provider);
    r->id = etl_rd_u16(p + 0x28);
    r->version = p[0x2A];
    r->channel = p[0x2B];
    r->level = p[0x2C];
    r->opcode = p[0x2D];
    r->task = etl_rd_u16(p + 0x2E);
    r->keyword = etl_rd_u64(p + 0x30);
    r->kernel_time = etl_rd_u32(p + 0x38);
    r->user_time = etl_rd_u32(p + 0x3C);
    etl_rd_guid(p + 0x40, &r->activity_id);
    r->has |= ETL_REC_TID | ETL_REC_TS | ETL_REC_PROVIDER | ETL_REC_ID | ETL_REC_OPCODE |
              ETL_REC_VERSION | ETL_REC_LEVEL | ETL_REC_KEYWORD | ETL_REC_ACTIVITY | ETL_REC_CPU_TIME;
    if (r->event_flags & EVENT_HEADER_FLAG_64_BIT_HEADER)
        r->pointer_size = 8;
    else if (r->event_flags & EVENT_HEADER_FLAG_32_BIT_HEADER)
        r->pointer_size = 4;

    size_t off = 0x50;
    if (r->event_flags & EVENT_HEADER_FLAG_EXTENDED_INFO) {
        /* Items: u16 Reserved1, u16 ExtType, u16 Linkage (bit 0: more follow), u16 DataSize, data. */
        for (;;) {
            if (off + 8 > size) return ETL_E_CORRUPT;
            uint16_t linkage = etl_rd_u16(p + off + 4);
            size_t dsize = etl_rd_u16(p + off + 6);
            size_t next = off + 8 + ((dsize + 7) & ~(size_t)7);
            if (off + 8 + dsize > size) return ETL_E_CORRUPT;
            off = next > size ? size : next;
            if (!(linkage & 1)) break;
        }
        r->ext.p = p + 0x50;
        r->ext.n = off - 0x50;
    }
    r->payload.p = p + off;
    r->payload.n = size - off;
    return ETL_OK;
}

static etl_status frame_message(const uint8_t *p, size_t size, etl_record *r)
{
    uint16_t opt = etl_rd_u16(p + 6);
    r->event_flags = opt;
    r->id = etl_rd_u16(p + 4); /* MessageNumber */
    r->has |= ETL_REC_ID;
    size_t off = 8;
    if (opt & TRACE_MESSAGE_SEQUENCE) off += 4;
    if (opt & TRACE_MESSAGE_GUID) {
        if (off + 16 > size) return ETL_E_CORRUPT;
        etl_rd_guid(p + off, &r->provider);
        r->has |= ETL_REC_PROVIDER;
        off += 16;
    } else if (opt & TRACE_MESSAGE_COMPONENTID) {
        off += 4;
    }
    if (opt & TRACE_MESSAGE_TIMESTAMP) {
        if (off + 8 > size) return ETL_E_CORRUPT;
        r->ts = etl_rd_u64(p + off);
        r->has |= ETL_REC_TS;
        off += 8;
    }
    if (opt & TRACE_MESSAGE_SYSTEMINFO) {
        if (off + 8 > size) return ETL_E_CORRUPT;
        r->tid = etl_rd_u32(p + off);
        r->pid = etl_rd_u32(p + off + 4);
        r->has |= ETL_REC_TID;
        off += 8;
    }
    if (off > size) return ETL_E_CORRUPT;
    r->payload.p = p + off;
    r->payload.n = size - off;
    return ETL_OK;
}

etl_status etl_record_frame(etl_span buf, size_t off, etl_record *r, size_t *next)
{
    if (!etl_span_has(buf, off, 4)) return ETL_END;
    const uint8_t *p = buf.p + off;
    uint32_t marker = etl_rd_u32(p);
    if (marker == 0xFFFFFFFFu) return ETL_END;

    etl_zero_small(r, sizeof *r);
    r->data = p;
    r->offset = (uint32_t)off;
    r->marker_flags = p[3];
    size_t avail = buf.n - off;

    if (!(marker & TRACE_HEADER_FLAG)) return ETL_E_CORRUPT; /* WNODE_HEADER: never in a log file */
    uint8_t htype;
    if (marker & TRACE_HEADER_EVENT_TRACE)
        htype = p[2];
    else if (marker & TRACE_MESSAGE)
        htype = ETL_HTYPE_MESSAGE;
    else
        return ETL_E_CORRUPT;
    size_t fixed = etl_htype_header_size(htype);
    if (fixed == 0) return ETL_E_CORRUPT;
    if (avail < 8) return ETL_E_TRUNCATED;

    bool kernel_header = htype == ETL_HTYPE_SYSTEM32 || htype == ETL_HTYPE_SYSTEM64 ||
                         htype == ETL_HTYPE_COMPACT32 || htype == ETL_HTYPE_COMPACT64 ||
                         htype == ETL_HTYPE_PERFINFO32 || htype == ETL_HTYPE_PERFINFO64;
    size_t size = etl_rd_u16(p + (kernel_header ? 4 : 0));
    if (size < fixed) return ETL_E_CORRUPT;
    if (size > avail) return ETL_E_TRUNCATED;

    r->htype = htype;
    r->size = (uint32_t)size;
    switch (htype) {
    case ETL_HTYPE_SYSTEM32: case ETL_HTYPE_COMPACT32: case ETL_HTYPE_PERFINFO32:
    case ETL_HTYPE_FULL_HEADER32: case ETL_HTYPE_INSTANCE32: case ETL_HTYPE_EVENT_HEADER32:
        r->pointer_size = 4;
        break;
    default:
        r->pointer_size = 8;
        break;
    }

    etl_status st = ETL_OK;
    switch (htype) {
    case ETL_HTYPE_SYSTEM32:
    case ETL_HTYPE_SYSTEM64:
        r->kernel_time = etl_rd_u32(p + 0x18);
        r->user_time = etl_rd_u32(p + 0x1C);
        r->has |= ETL_REC_CPU_TIME;
        /* fall through */
    case ETL_HTYPE_COMPACT32:
    case ETL_HTYPE_COMPACT64:
        r->tid = etl_rd_u32(p + 8);
        r->pid = etl_rd_u32(p + 12);
        r->ts = etl_rd_u64(p + 16);
        r->has |= ETL_REC_TID;
        st = frame_kernel(p, size, fixed, r);
        break;
    case ETL_HTYPE_PERFINFO32:
    case ETL_HTYPE_PERFINFO64:
        r->ts = etl_rd_u64(p + 8);
        st = frame_kernel(p, size, fixed, r);
        break;
    case ETL_HTYPE_FULL_HEADER32:
    case ETL_HTYPE_FULL_HEADER64:
        decode_full(p, r);
        r->payload.p = p + fixed;
        r->payload.n = size - fixed;
        break;
    case ETL_HTYPE_INSTANCE32:
    case ETL_HTYPE_INSTANCE64:
        decode_full(p, r);
        r->instance_id = etl_rd_u32(p + 0x30);
        r->parent_instance_id = etl_rd_u32(p + 0x34);
        etl_rd_guid(p + 0x38, &r->parent_guid);
        r->has |= ETL_REC_INSTANCE;
        r->payload.p = p + fixed;
        r->payload.n = size - fixed;
        break;
    case ETL_HTYPE_EVENT_HEADER32:
    case ETL_HTYPE_EVENT_HEADER64:
        st = frame_event_header(p, size, r);
        break;
    case ETL_HTYPE_MESSAGE:
        st = frame_message(p, size, r);
        break;
    default: /* TIMED, ERROR: layout unknown, expose the bytes after Size/type */
        r->payload.p = p + fixed;
        r->payload.n = size - fixed;
        break;
    }
    if (st != ETL_OK) return st;
    *next = off + ((size + ETL_RECORD_ALIGN - 1) & ~(size_t)(ETL_RECORD_ALIGN - 1));
    return ETL_OK;
}

etl_status etl_record_next_ext(const etl_record *r, size_t *pos, etl_ext_item *item)
{
    etl_span e = r->ext;
    size_t off = *pos;
    if (!etl_span_has(e, off, 8)) return ETL_END;
    uint16_t linkage = etl_rd_u16(e.p + off + 4);
    size_t dsize = etl_rd_u16(e.p + off + 6);
    item->ext_type = etl_rd_u16(e.p + off + 2);
    item->data = etl_span_sub(e, off + 8, dsize);
    if (!item->data.p && dsize) return ETL_E_CORRUPT;
    size_t next = off + 8 + ((dsize + 7) & ~(size_t)7);
    *pos = (linkage & 1) && next < e.n ? next : e.n;
    return ETL_OK;
}

etl_status etl_record_retime(uint8_t *p, size_t n, uint64_t ts)
{
    etl_record r;
    size_t next = 0, off = 16; /* the kernel SYSTEM and COMPACT headers, FULL, INSTANCE and EVENT_HEADER */
    etl_status st = etl_record_frame((etl_span){p, n}, 0, &r, &next);
    if (st != ETL_OK) return st;
    if (!(r.has & ETL_REC_TS)) return ETL_E_INVALID_ARG;
    if (r.htype == ETL_HTYPE_PERFINFO32 || r.htype == ETL_HTYPE_PERFINFO64) {
        off = 8;
    } else if (r.htype == ETL_HTYPE_MESSAGE) { /* frame_message's walk to its TimeStamp */
        uint16_t opt = etl_rd_u16(p + 6);
        off = 8 + (opt & TRACE_MESSAGE_SEQUENCE ? 4u : 0u) +
              (opt & TRACE_MESSAGE_GUID ? 16u : opt & TRACE_MESSAGE_COMPONENTID ? 4u : 0u);
    }
    etl_wr_u64(p + off, ts);
    return ETL_OK;
}

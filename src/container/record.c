/*
 * record.c - frames one record inside a buffer and decodes its trace header.
 *
 * The marker (first u32) says which header follows: bit 31 set means a trace
 * header; with bit 30 also set, byte 2 is TRACE_HEADER_TYPE_*; with bit 30 clear
 * and bit 28 set it is a WPP MESSAGE_TRACE_HEADER. SYSTEM, COMPACT and PERFINFO
 * keep Size at +4; every other header keeps it at +0. A record's span is checked
 * once here, so payload decoders get a span they cannot overrun. The Size of a
 * fixed-layout kernel event is checked against its layout (etl_kernel_layout_size).
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

size_t etl_kernel_layout_size(uint16_t hook, unsigned version, unsigned pointer_size)
{
    switch (hook) {
    case 0x0524: /* CSwitch, WMI_CONTEXTSWAP (kernel-events.md §5): v1 16 bytes, v2 (6.0-1607), v3, v4 24 */
        return version == 1 ? 16 : version >= 2 && version <= 4 ? 24 : 0;
    case 0x0525: /* compact batch v2, PERFINFO_CCSWAP_BUFFER (§6.1-6.2): no more than the header and the 0x400
                  * batch limit; shorter ones are the rule, so only a Size past this is judged */
        return version == 2 ? 0x58u + 0x400u : 0;
    case 0x0529: /* SpinLock v2, WMI_SPINLOCK (§7): two pointers, 0x23 bytes, Reserved[5] since 6.3 */
        return version == 2 ? 2u * pointer_size + 0x28 : 0;
    case 0x0532: /* ReadyThread v2, ETW_READY_THREAD_EVENT (§10.1) */
        return version == 2 ? 8 : 0;
    case 0x0F2E: /* SampledProfile v2, PERFINFO_SAMPLED_PROFILE_INFORMATION (§3): a pointer, 8 bytes */
        return version == 2 ? pointer_size + 8u : 0;
    default:
        return 0;
    }
}

static size_t align_up(size_t n) { return (n + ETL_RECORD_ALIGN - 1) & ~(size_t)(ETL_RECORD_ALIGN - 1); }

static etl_status frame(etl_span buf, size_t off, etl_record *r, size_t *next, bool layout_rule);

/*
 * Whether a record of a buffer whose data are p[0, avail) ends where its bytes up to
 * `end` do, at x (aligned): the data end there, or a record or the end marker starts there.
 */
static bool ends_at(const uint8_t *p, size_t avail, size_t end, size_t x)
{
    if (end > avail) return false;
    if (x >= avail) return true;
    etl_record r;
    size_t next;
    etl_status st = frame((etl_span){p, avail}, x, &r, &next, false);
    return st == ETL_OK || st == ETL_END;
}

/* Whether the records from a on follow one another to b exactly. */
static bool tiles(const uint8_t *p, size_t avail, size_t a, size_t b)
{
    etl_record r;
    size_t next;
    while (a < b) {
        if (frame((etl_span){p, avail}, a, &r, &next, false) != ETL_OK) return false;
        a = next;
    }
    return a == b;
}

enum { FIT_OK, FIT_LAYOUT, FIT_WHOLE };

/*
 * The kernel record at p (its buffer's data run to p + avail; head: its header, PEBS index
 * and PMC counters) whose payload is larger than the largest layout of its hook's low byte
 * (etl_klayout_max): a fixed-layout event's Size is implied by its layout, so where a
 * record starts at the layout's end and the bytes its Size claims beyond are records up to
 * its end (or where its Size leads to no record), the Size alone is wrong: FIT_LAYOUT, *cut
 * its size by the layout. A payload over twice the layout, with a record where its Size
 * leads, is no appended field of a newer Windows (the layouts grew only with a new version,
 * or within their padding): FIT_WHOLE, the record is not the event its header says. Else
 * FIT_OK: its version's layout is not certain, or fields were appended.
 */
static int layout_fit(const uint8_t *p, size_t avail, size_t head, size_t size, size_t *cut)
{
    uint8_t ht = p[2];
    unsigned ptr = ht == ETL_HTYPE_SYSTEM32 || ht == ETL_HTYPE_COMPACT32 || ht == ETL_HTYPE_PERFINFO32 ? 4 : 8;
    size_t layout = etl_kernel_layout_size(etl_rd_u16(p + 6), p[0], ptr);
    if (!layout || size - head <= layout) return FIT_OK;
    size_t end = head + layout, a = align_up(end), b = align_up(size);
    if (a == b) return FIT_OK; /* it ends where its layout ends it: nothing is read otherwise */
    *cut = end;
    if (ends_at(p, avail, size, b) ? tiles(p, avail, a, b) : ends_at(p, avail, end, a)) return FIT_LAYOUT;
    return size - head > 2 * layout && size <= avail ? FIT_WHOLE : FIT_OK;
}

bool etl_kernel_size_fits(const uint8_t *p, size_t avail, size_t head, size_t size)
{
    size_t cut;
    return layout_fit(p, avail, head, size, &cut) == FIT_OK;
}

etl_status etl_record_frame(etl_span buf, size_t off, etl_record *r, size_t *next)
{
    return frame(buf, off, r, next, true);
}

/* etl_record_frame; without layout_rule, a Size is taken as it stands (layout_fit's look at the neighbours). */
static etl_status frame(etl_span buf, size_t off, etl_record *r, size_t *next, bool layout_rule)
{
    if (!etl_span_has(buf, off, 4)) return ETL_END;
    const uint8_t *p = buf.p + off;
    uint32_t marker = etl_rd_u32(p);
    if (marker == 0xFFFFFFFFu) {
        /* The end of the data (its filler) only when nothing but 0xFF follows, up to the buffer's Offset: with
         * bytes after it, a damaged record whose loss must be told (the rest of the buffer), not a quiet end. */
        for (size_t i = off + 4; i < buf.n; i++)
            if (buf.p[i] != 0xFF) return ETL_E_CORRUPT;
        return ETL_END;
    }

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
    int fit = FIT_OK;
    if (kernel_header && layout_rule) {
        /* etl_frame_kernel's test, for every reader alike. */
        uint16_t vw = etl_rd_u16(p);
        size_t head = fixed + (vw & ETL_TRACE_HEADER_PEBS_INDEX_FLAG ? 8u : 0u) +
                      8u * ((vw & ETL_TRACE_HEADER_PMC_COUNTERS_MASK) >> ETL_TRACE_HEADER_PMC_COUNTERS_SHIFT);
        size_t cut = 0;
        if (size >= head && size - head > etl_klayout_max[p[6]]) fit = layout_fit(p, avail, head, size, &cut);
        if (fit == FIT_LAYOUT) size = cut;
    }
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
    if (fit != FIT_OK) r->has |= ETL_REC_BAD_SIZE;
    *next = off + align_up(size);
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

/*
 * etlkit/container.h - the ETL container: files, buffers, records, clocks.
 *
 * Reading a file is three calls, libpcap style:
 *
 *     etl_reader *r;  etl_iter *it;  etl_record rec;
 *     etl_reader_open(path, NULL, &r, &diag);
 *     etl_iter_open(r, ETL_ORDER_TIME, &it);
 *     while (etl_iter_next(it, &rec) == ETL_OK) { ... }
 *     etl_iter_close(it); etl_reader_close(r);
 *
 * A record is a view into the mapped file or into the iterator's decompression
 * buffer: it stays valid until the next etl_iter_next() on that iterator.
 * Nothing is allocated per record. Bad buffers and records are skipped, counted
 * in etl_iter_stats_get and reported through the options' diagnostic callback; only a
 * file that is not an ETL at all fails to open.
 */
#ifndef ETLKIT_CONTAINER_H
#define ETLKIT_CONTAINER_H

#include "etlkit/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- sizes and constants (container.md) ---------------------------------- */

#define ETL_BUFFER_HEADER_SIZE 0x48u
#define ETL_RECORD_ALIGN 8u

/* WMI_BUFFER_HEADER.BufferFlag */
enum {
    ETL_BUFFER_FLAG_FLUSH_MARKER = 0x0001,
    ETL_BUFFER_FLAG_EVENTS_LOST = 0x0002,
    ETL_BUFFER_FLAG_BUFFER_LOST = 0x0004,
    ETL_BUFFER_FLAG_RTBACKUP_CORRUPT = 0x0008,
    ETL_BUFFER_FLAG_RTBACKUP = 0x0010,
    ETL_BUFFER_FLAG_PROC_INDEX = 0x0020,
    ETL_BUFFER_FLAG_COMPRESSED = 0x0040
};

/* WMI_BUFFER_HEADER.BufferType */
enum {
    ETL_BUFFER_TYPE_GENERIC = 0,
    ETL_BUFFER_TYPE_RUNDOWN = 1,
    ETL_BUFFER_TYPE_CTX_SWAP = 2,
    ETL_BUFFER_TYPE_REFTIME = 3,
    ETL_BUFFER_TYPE_HEADER = 4,
    ETL_BUFFER_TYPE_BATCHED = 5,
    ETL_BUFFER_TYPE_EMPTY_MARKER = 6,
    ETL_BUFFER_TYPE_DBG_INFO = 7
};

/* TRACE_HEADER_TYPE_* (byte 2 of a record's marker). */
enum {
    ETL_HTYPE_SYSTEM32 = 0x01,
    ETL_HTYPE_SYSTEM64 = 0x02,
    ETL_HTYPE_COMPACT32 = 0x03,
    ETL_HTYPE_COMPACT64 = 0x04,
    ETL_HTYPE_FULL_HEADER32 = 0x0A,
    ETL_HTYPE_INSTANCE32 = 0x0B,
    ETL_HTYPE_TIMED = 0x0C,
    ETL_HTYPE_ERROR = 0x0D,
    ETL_HTYPE_WNODE_HEADER = 0x0E,
    ETL_HTYPE_MESSAGE = 0x0F,
    ETL_HTYPE_PERFINFO32 = 0x10,
    ETL_HTYPE_PERFINFO64 = 0x11,
    ETL_HTYPE_EVENT_HEADER32 = 0x12,
    ETL_HTYPE_EVENT_HEADER64 = 0x13,
    ETL_HTYPE_FULL_HEADER64 = 0x14,
    ETL_HTYPE_INSTANCE64 = 0x15
};

/* Bits of the Version word of SYSTEM/COMPACT/PERFINFO headers (ntwmi.h). */
#define ETL_TRACE_HEADER_PEBS_INDEX_FLAG 0x8000u
#define ETL_TRACE_HEADER_PMC_COUNTERS_MASK 0x0700u
#define ETL_TRACE_HEADER_PMC_COUNTERS_SHIFT 8

/* LogFileMode bits etlkit names (EVENT_TRACE_*_MODE). */
#define ETL_LOG_FILE_MODE_SEQUENTIAL 0x00000001u
#define ETL_LOG_FILE_MODE_CIRCULAR 0x00000002u
#define ETL_LOG_FILE_MODE_COMPRESSED 0x04000000u

/* EVENT_TRACE_CLOCK_* (TRACE_LOGFILE_HEADER.ReservedFlags). */
enum {
    ETL_CLOCK_RAW = 0,
    ETL_CLOCK_QPC = 1,
    ETL_CLOCK_SYSTEM_TIME = 2,
    ETL_CLOCK_CPU_CYCLES = 3
};

/*
 * The LogFileMode bits by their EVENT_TRACE_*_MODE names without the prefix
 * ("FILE_MODE_SEQUENTIAL | COMPRESSED_MODE"), bits without a name as one hex
 * number at the end, "FILE_MODE_NONE" for 0; " | "-joined into out[cap] (cut, NUL-terminated).
 */
ETL_API void etl_log_file_mode_names(uint32_t log_file_mode, char *out, size_t cap);
/* A ClockType by name: "raw", "qpc", "system-time", "cpu-cycles"; "unknown" otherwise. */
ETL_API const char *etl_clock_type_name(uint32_t clock_type);

/* ---- WMI_BUFFER_HEADER ---------------------------------------------------- */

typedef struct etl_buffer_header {
    uint32_t buffer_size;      /* on-disk bytes incl. header (compressed size when compressed) */
    uint32_t saved_offset;
    uint32_t current_offset;
    uint32_t reference_count;
    uint64_t timestamp;        /* flush time, session clock */
    uint64_t sequence_number;
    uint64_t clock_union;      /* ClockType/Frequency or list pointers: informational only */
    uint16_t processor_index;  /* ProcessorIndex & 0x7FF with PROC_INDEX, else ProcessorNumber */
    uint16_t logger_id;
    uint32_t state;
    uint32_t offset;           /* end of valid data incl. header (decompressed) */
    uint16_t buffer_flag;
    uint16_t buffer_type;
    uint64_t ref_start_time;   /* ETW_REF_CLOCK.StartTime, when the union holds one */
    uint64_t ref_start_perf_clock;
} etl_buffer_header;

/* Decodes the 0x48 bytes at the start of s. ETL_E_TRUNCATED if s is shorter. */
ETL_API etl_status etl_buffer_header_decode(etl_span s, etl_buffer_header *h);
/* Writes the 0x48-byte header. processor_index is written as a u16 (PROC_INDEX layout). */
ETL_API void etl_buffer_header_encode(const etl_buffer_header *h, uint8_t out[ETL_BUFFER_HEADER_SIZE]);

/* ---- TRACE_LOGFILE_HEADER (hook 0x0000) ----------------------------------- */

typedef struct etl_logfile_header {
    uint32_t buffer_size;
    uint8_t os_major, os_minor;         /* Version bytes 0, 1 */
    uint8_t sub_version, sub_minor_version; /* ETL layout version, bytes 2, 3 */
    uint32_t provider_version;          /* OS build */
    uint32_t num_processors;
    uint64_t end_time;                  /* FILETIME */
    uint32_t timer_resolution;          /* 100 ns units */
    uint32_t maximum_file_size;         /* MB */
    uint32_t log_file_mode;
    uint32_t buffers_written;
    uint32_t start_buffers;
    uint32_t pointer_size;
    uint32_t events_lost;
    uint32_t cpu_speed_mhz;
    uint64_t logger_name_ptr;           /* not usable pointers (kept raw) */
    uint64_t log_file_name_ptr;
    int32_t tz_bias;                    /* TIME_ZONE_INFORMATION.Bias, minutes */
    char tz_standard_name[96];          /* UTF-8 */
    uint64_t boot_time;                 /* FILETIME */
    uint64_t perf_freq;
    uint64_t start_time;                /* FILETIME */
    uint32_t clock_type;                /* ReservedFlags: ETL_CLOCK_* */
    uint32_t buffers_lost;
    char logger_name[512];              /* UTF-8, converted from the UTF-16 after the struct */
    char log_file_name[1024];
    /* From the SYSTEM header of the record that carries it: */
    uint8_t header_type;                /* ETL_HTYPE_SYSTEM32 or ETL_HTYPE_SYSTEM64 */
    uint32_t header_tid, header_pid;
    uint64_t header_ts;                 /* raw time of the header record: the clock's T0 */
} etl_logfile_header;

/* Size of TRACE_LOGFILE_HEADER's fixed part for a pointer size (0x110 or 0x118). */
ETL_API size_t etl_logfile_header_size(unsigned pointer_size);
/*
 * Decodes the whole logfile-header record (its SYSTEM32/64 header, the struct and
 * the two UTF-16 names). ETL_E_NOT_ETL when the record is not a hook 0x0000 event.
 */
ETL_API etl_status etl_logfile_header_decode(etl_span record, etl_logfile_header *h);
/*
 * The inverse: the whole record (SYSTEM32 or SYSTEM64 header by pointer_size,
 * hook 0x0000, version 2, the struct, both names as UTF-16). Names are UTF-8;
 * characters outside the BMP are written as surrogate pairs.
 */
ETL_API etl_status etl_logfile_header_encode(const etl_logfile_header *h, unsigned pointer_size, uint8_t *out,
                                     size_t cap, size_t *len);

/* ---- records ------------------------------------------------------------- */

/* Bits of etl_record.has: which header fields the record's header type carries. */
enum {
    ETL_REC_HOOK = 1u << 0,      /* hook (SYSTEM, COMPACT, PERFINFO) */
    ETL_REC_TID = 1u << 1,       /* tid and pid */
    ETL_REC_TS = 1u << 2,        /* ts */
    ETL_REC_PROVIDER = 1u << 3,  /* provider GUID (FULL, INSTANCE, EVENT_HEADER, MESSAGE with GUID) */
    ETL_REC_ID = 1u << 4,        /* EVENT_DESCRIPTOR Id */
    ETL_REC_OPCODE = 1u << 5,    /* opcode (EVENT_HEADER descriptor, FULL Class.Type) */
    ETL_REC_VERSION = 1u << 6,   /* version */
    ETL_REC_CPU_TIME = 1u << 7,  /* kernel_time and user_time */
    ETL_REC_PMC = 1u << 8,       /* pmc_count counters at pmc */
    ETL_REC_PEBS = 1u << 9,      /* pebs_index */
    ETL_REC_LEVEL = 1u << 10,    /* level (EVENT_HEADER, FULL) */
    ETL_REC_KEYWORD = 1u << 11,  /* keyword, task, channel (EVENT_HEADER) */
    ETL_REC_INSTANCE = 1u << 12, /* instance_id, parent_instance_id, parent_guid */
    ETL_REC_ACTIVITY = 1u << 13, /* activity_id (EVENT_HEADER) */
    ETL_REC_BAD_TS = 1u << 14,   /* ts lies outside the session window: damage (etl_reader_keep_bad_times) */
    ETL_REC_BAD_SIZE = 1u << 15  /* a Size its fixed layout contradicts (etl_kernel_layout_size): damage */
};

typedef struct etl_record {
    const uint8_t *data;         /* the record, starting at its marker */
    uint32_t size;               /* the Size field: header + ext items + payload, no pad (with
                                    ETL_REC_BAD_SIZE, the size its layout gives when that was framed) */
    uint32_t offset;             /* from the start of its (decompressed) buffer */
    uint32_t buffer_index;       /* buffer, in file order (0-based) */
    uint16_t cpu;                /* the buffer's processor */
    uint8_t htype;               /* ETL_HTYPE_* */
    uint8_t marker_flags;        /* byte 3 of the marker (0xC0, 0x90 for WPP) */
    uint8_t pointer_size;        /* 4 or 8, from the header type (and EVENT_HEADER flags) */
    uint8_t pmc_count;
    uint16_t version_word;       /* raw Version word (SYSTEM/COMPACT/PERFINFO) */
    uint32_t has;                /* ETL_REC_* */
    uint16_t version;            /* event version: low byte of the Version word, Class.Version, descriptor Version */
    uint16_t hook;
    uint32_t tid, pid;
    uint64_t ts;
    uint32_t kernel_time, user_time;
    etl_guid provider;
    uint16_t id;
    uint8_t opcode, level, channel;
    uint16_t task;
    uint64_t keyword;
    uint16_t event_flags;        /* EVENT_HEADER Flags, MESSAGE OptionFlags */
    uint16_t event_property;
    uint32_t instance_id, parent_instance_id;
    etl_guid parent_guid;
    etl_guid activity_id;
    uint64_t pebs_index;
    const uint8_t *pmc;          /* pmc_count little-endian u64 counters (unaligned) */
    etl_span ext;                /* EVENT_HEADER extended data items, raw */
    etl_span payload;            /* event data after the header and its ext items */
} etl_record;

/*
 * A record's time when it has one the reader takes as its own (ETL_REC_TS, not ETL_REC_BAD_TS),
 * else UINT64_MAX: for a compact batch, when it was written (etl_batch_expand_begin_written).
 */
static inline uint64_t etl_record_ts_or_none(const etl_record *r)
{
    return (r->has & ETL_REC_TS) && !(r->has & ETL_REC_BAD_TS) ? r->ts : UINT64_MAX;
}

/* Reads PMC counter i (0 <= i < pmc_count). */
ETL_API uint64_t etl_record_pmc(const etl_record *r, unsigned i);

/* Header size of a header type (SYSTEM 0x20, PERFINFO 0x10, ...), 0 if unknown. */
ETL_API size_t etl_htype_header_size(uint8_t htype);
/* A name such as "SYSTEM64" or "PERFINFO64"; "UNKNOWN" otherwise. */
ETL_API const char *etl_htype_name(uint8_t htype);

/*
 * Frames the record at `off` in `buf` (a whole decompressed buffer, header
 * included, cut at its Offset). On ETL_OK, *next is the offset of the following
 * record (8-byte aligned). ETL_END at a 0xFFFFFFFF marker that nothing but 0xFF
 * follows (the filler), or when fewer than 4 bytes remain; a 0xFFFFFFFF marker with
 * other bytes after it is ETL_E_CORRUPT. ETL_E_CORRUPT / ETL_E_TRUNCATED when the record cannot be framed:
 * the caller must then skip the rest of the buffer. cpu/buffer_index are left to the caller.
 *
 * A kernel record of a fixed-layout event (etl_kernel_layout_size) whose Size goes past
 * its layout is damage, ETL_REC_BAD_SIZE: framed at its layout's size (*next where that
 * ends it) when a record starts there and the bytes its Size claims beyond are records up
 * to where it leads (or it leads to no record: past the data, or into one) - one flipped
 * bit of a CSwitch's Size once swallowed 84 records; framed whole, not that event, when its
 * payload is over twice the layout's and a record starts where its Size leads. A payload
 * up to its hook's largest layout (etl_klayout_max), or a little over it where nothing
 * says the Size is wrong (fields a newer Windows appended), is framed as it stands.
 */
ETL_API etl_status etl_record_frame(etl_span buf, size_t off, etl_record *r, size_t *next);
/*
 * The payload size of a fixed-layout kernel event's version, for a header type's pointer
 * size (kernel-events.md): CSwitch 0x0524 v1 16, v2..v4 24; SpinLock 0x0529 v2 2 pointers
 * + 0x28; ReadyThread 0x0532 v2 8; SampledProfile 0x0F2E v2 a pointer + 8; a compact batch
 * 0x0525 v2 at most 0x458 (its 0x58-byte header and the 0x400-byte batch limit, which the spec
 * does not say counts the header: the lenient reading). 0 for every other hook and version:
 * their layout is not certain (Thread v3 grew a name, for one).
 */
ETL_API size_t etl_kernel_layout_size(uint16_t hook, unsigned version, unsigned pointer_size);
/*
 * By a hook's low byte, the largest payload etl_kernel_layout_size gives a hook with that
 * byte (0xFFFF: none): a payload up to it needs no closer look.
 */
static const uint16_t etl_klayout_max[256] = {
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x00 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x08 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x10 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x18 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 24    , 0x458 , 0xFFFF, 0xFFFF, /* 0x20: 0x24 CSwitch, 0x25 compact batch */
    0xFFFF, 56    , 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 16    , 0xFFFF, /* 0x28: 0x29 SpinLock, 0x2E SampledProfile */
    0xFFFF, 0xFFFF, 8     , 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x30: 0x32 ReadyThread */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x38 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x40 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x48 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x50 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x58 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x60 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x68 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x70 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x78 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x80 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x88 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x90 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0x98 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xA0 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xA8 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xB0 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xB8 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xC0 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xC8 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xD0 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xD8 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xE0 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xE8 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, /* 0xF0 */
    0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF, 0xFFFF  /* 0xF8 */
};
/*
 * Whether the kernel record at p (avail bytes of its buffer's data from p on; head: its
 * header, PEBS index and PMC counters), whose payload is over etl_klayout_max, frames by
 * its Size as it stands (etl_record_frame's rule).
 */
ETL_API bool etl_kernel_size_fits(const uint8_t *p, size_t avail, size_t head, size_t size);

/* EVENT_HEADER extended data item. */
typedef struct etl_ext_item {
    uint16_t ext_type;
    etl_span data;
} etl_ext_item;
/* Iterates a record's ext items: *pos starts at 0. ETL_END when done. */
ETL_API etl_status etl_record_next_ext(const etl_record *r, size_t *pos, etl_ext_item *item);

/* ---- clocks ---------------------------------------------------------------- */

typedef struct etl_clock {
    uint32_t type;          /* ETL_CLOCK_* */
    uint64_t ticks_per_sec; /* PerfFreq, 10^7 or CpuSpeedInMHz * 10^6 */
    uint64_t start_time;    /* FILETIME of t0 */
    uint64_t t0;            /* raw timestamp of the logfile-header record */
    uint64_t ns_mul;        /* set by etl_clock_init: 10^9 / ticks_per_sec when exact, else 0 */
    uint64_t ns_div;        /* ... ticks_per_sec / 10^9 when exact, else 0 (both 0: 128-bit path) */
} etl_clock;

ETL_API void etl_clock_init(etl_clock *c, const etl_logfile_header *h);
/* Exact (floor) nanoseconds of a raw tick count, 128-bit intermediate. */
ETL_API int64_t etl_clock_ticks_to_ns(const etl_clock *c, int64_t ticks);
/* etl_clock_ns in 128-bit arithmetic, for any clock and time. */
ETL_API int64_t etl_clock_ns_exact(const etl_clock *c, uint64_t ts);
/*
 * Nanoseconds since trace start (the header record's time); negative before it. Inline
 * for the usual clocks (10 MHz QPC and system time, whole-GHz cycle counters), where a
 * multiply or a divide is exact; the rest in etl_clock_ns_exact.
 */
static inline int64_t etl_clock_ns(const etl_clock *c, uint64_t ts)
{
    int64_t d, ns;
    if ((c->ns_mul | c->ns_div) && !__builtin_sub_overflow((int64_t)ts, (int64_t)c->t0, &d) &&
        d > -(INT64_C(1) << 53) && d < (INT64_C(1) << 53)) {
        if (c->ns_mul) {
            if (!__builtin_mul_overflow(d, (int64_t)c->ns_mul, &ns)) return ns;
        } else {
            int64_t div = (int64_t)c->ns_div, q = d / div;
            return d % div != 0 && d < 0 ? q - 1 : q;
        }
    }
    return etl_clock_ns_exact(c, ts);
}
/* Nanoseconds since 1970-01-01 UTC. */
ETL_API int64_t etl_clock_unix_ns(const etl_clock *c, uint64_t ts);
/* FILETIME (100 ns since 1601) of a raw timestamp. */
ETL_API int64_t etl_clock_filetime(const etl_clock *c, uint64_t ts);
/* Formats a FILETIME as "2020-02-10T12:34:56.1234567Z" into out[40]. */
ETL_API void etl_filetime_format(uint64_t filetime, char out[40]);
/* Formats Unix nanoseconds as "2020-02-10T12:34:56.123456789Z" into out[40]. */
ETL_API void etl_unix_ns_format(int64_t unix_ns, char out[40]);

/* ---- the reader -------------------------------------------------------------- */

typedef struct etl_reader etl_reader;
typedef struct etl_iter etl_iter;

typedef void (*etl_diag_fn)(void *ctx, const etl_diag *d);

typedef struct etl_reader_options {
    size_t sz;              /* sizeof(etl_reader_options): lets the struct grow (base.h: options structs) */
    etl_diag_fn on_diag;    /* called for every problem found (may be NULL) */
    void *diag_ctx;
} etl_reader_options;

/* Recovery counters: what was skipped, and where the first problem was. */
typedef struct etl_stats {
    uint64_t buffers;              /* buffers seen */
    uint64_t compressed_buffers;
    uint64_t records;              /* records yielded */
    uint64_t bad_buffers;          /* buffers skipped whole or in part */
    uint64_t bad_records;          /* records that could not be framed (rest of their buffer skipped), or
                                      whose Size their layout contradicts (ETL_REC_BAD_SIZE: counted in
                                      bad_buffers too) */
    uint64_t skipped_bytes;        /* bytes of event data not yielded because of a problem */
    uint64_t decompress_errors;    /* compressed buffers that did not expand to their size */
    uint64_t unsupported_buffers;  /* buffers in a compression format etlkit does not read */
    uint64_t truncated_buffers;    /* buffers cut by the end of the file */
    uint64_t bad_times;            /* records (or compact batches) whose time lies outside the session window:
                                      passed over, each buffer they lie in counted in bad_buffers too */
    uint64_t first_problem_offset; /* file offset of the first problem, UINT64_MAX if none */
    char first_problem[256];
} etl_stats;

/* True if st records any damage (a buffer or record skipped, truncated, not decompressed, a time outside the session). */
ETL_API bool etl_stats_damaged(const etl_stats *st);
/*
 * Adds to into what an iterator's stats x found beyond base (the reader's own counters,
 * which every iterator starts from); the first problem is the one at the lowest offset.
 */
ETL_API void etl_stats_add(etl_stats *into, const etl_stats *x, const etl_stats *base);

/* Opens a file (mmap, or read() for pipes; "-" is standard input). */
ETL_API etl_status etl_reader_open(const char *path, const etl_reader_options *opts, etl_reader **out,
                           etl_diag *diag);
/* Opens bytes in memory; they must outlive the reader (not copied). */
ETL_API etl_status etl_reader_open_memory(const void *data, size_t size, const etl_reader_options *opts,
                                  etl_reader **out, etl_diag *diag);
ETL_API void etl_reader_close(etl_reader *r);

ETL_API const etl_logfile_header *etl_reader_header(const etl_reader *r);
ETL_API const etl_clock *etl_reader_clock(const etl_reader *r);
/* The compression format of compressed buffers (etl_compression value). */
ETL_API int etl_reader_compression(const etl_reader *r);
/* Problems found while indexing the buffers (before any iteration). */
ETL_API const etl_stats *etl_reader_stats_get(const etl_reader *r);
ETL_API size_t etl_reader_buffer_count(const etl_reader *r);
/* The header of buffer i (file order) and its file offset. */
ETL_API etl_status etl_reader_buffer(const etl_reader *r, size_t i, etl_buffer_header *h, uint64_t *file_offset);
/* The processor of buffer i, from the index (the file's pages are not touched); UINT_MAX when there is no buffer i. */
ETL_API unsigned etl_reader_buffer_cpu(const etl_reader *r, size_t i);
/* The BufferFlag of buffer i (ETL_BUFFER_FLAG_*), from the index; 0 when there is no buffer i. */
ETL_API unsigned etl_reader_buffer_flags(const etl_reader *r, size_t i);
/* One more than the highest processor index of any buffer. */
ETL_API unsigned etl_reader_cpu_count(const etl_reader *r);
/*
 * The machine's processors: the header's NumberOfProcessors (at most ETL_MAX_PROCESSORS), or more when buffers
 * name more. What "% of the machine" divides by: a processor that logged nothing was there all the same.
 */
#define ETL_MAX_PROCESSORS 4096u
ETL_API unsigned etl_reader_processors(const etl_reader *r);
ETL_API uint64_t etl_reader_file_size(const etl_reader *r);

/*
 * The session window: the raw times [*lo, *hi] a record may carry. A record whose time lies
 * outside is damage (a flipped high byte makes it centuries away): every iterator and walk
 * passes it over, counts it (bad_times, and its buffer in bad_buffers) and tells it with its
 * file offset, so that no time, window or duration is made of it. The window runs from the
 * logfile header record's time (the clock's t0) less 60 s to the session's end
 * (etl_reader_end_ts: EndTime on the session clock, or the latest buffer flush) plus the
 * session's length, at least 60 s (relogged files have records past EndTime, 2.9 s in one
 * sample; a cycle clock's rate is only nominal). Times with the top bit set (negative
 * LARGE_INTEGERs) are always outside. With no end to be had the window is open above.
 */
ETL_API void etl_reader_time_window(const etl_reader *r, uint64_t *lo, uint64_t *hi);
/*
 * EndTime on the session clock, or 0 where it is not after StartTime (a session not closed
 * cleanly) or lies far after the last buffer flush (damage: told and counted at open, as
 * bad_times in etl_reader_stats_get). The end of a report's window is the later of this and the
 * last record's time.
 */
ETL_API uint64_t etl_reader_end_ts(const etl_reader *r);
/*
 * Buffers the session wrote that the file does not hold: more written (the header's
 * BuffersWritten) than found (a file cut at a buffer boundary), or SequenceNumbers missing
 * between those found (a buffer removed). Told at open with where they are missing and
 * counted in bad_buffers (etl_reader_stats_get). Circular logs, which overwrite their
 * buffers, are not judged.
 */
ETL_API uint64_t etl_reader_buffers_missing(const etl_reader *r);
/*
 * Until when the file holds CPU cpu's records: UINT64_MAX when to the session's end (no
 * buffer missing, or none after the CPU's last one); else the time of its last record in the
 * session window (0: none), the end of what is known of it. Reads up to a few of its last
 * buffers, telling nothing.
 */
ETL_API uint64_t etl_reader_cpu_known_until(const etl_reader *r, unsigned cpu);
/* A span of raw session time, (lo, hi): both ends excluded. */
typedef struct etl_ts_span {
    uint64_t lo, hi;
} etl_ts_span;
/*
 * Where a buffer missing between those found (a SequenceNumber gap) may have held CPU cpu's
 * records: each CPU fills its buffers in turn, so between the last record of its buffer before
 * the gap and the first of its buffer after it (from the trace's start when none is before).
 * Which CPU a missing buffer was is not known: every CPU that has buffers on both sides gets a
 * span. *n spans, ascending, owned by the reader; NULL and 0 when the file misses none (a file
 * cut short loses each CPU's time after its last record instead: etl_reader_cpu_known_until).
 * A buffer beside a gap that cannot be read gives way to the CPU's nearest one that can (none:
 * the start or the end); spans that then overlap are merged. Found at open, each buffer read at
 * most once, only in a file that misses buffers.
 */
ETL_API const etl_ts_span *etl_reader_cpu_gaps(const etl_reader *r, unsigned cpu, size_t *n);
/*
 * Whether records of CPU cpu were passed over after a record read at a time in [from, to): a
 * record that does not frame (the rest of its buffer skipped) or a buffer that cannot be loaded
 * loses the CPU's records up to its next one read, as a missing buffer does. Known once an
 * iterator in time order (or a walk over CPUs) has read the CPU that far: those reading it
 * ask after their own records. A slice of the scheduler across one is unknown. False in a
 * file whose records were all read; any thread.
 */
ETL_API bool etl_reader_cpu_skipped(const etl_reader *r, unsigned cpu, uint64_t from, uint64_t to);
/*
 * Record iterators opened after this hand out the records whose time lies outside the
 * session window too, flagged ETL_REC_BAD_TS, instead of passing them over (they are
 * counted and told all the same; in time order one is merged where its CPU's time
 * stood, its own time moves nothing). For dump. Walks always pass them over.
 */
ETL_API void etl_reader_keep_bad_times(etl_reader *r, bool keep);

typedef enum etl_order {
    ETL_ORDER_FILE = 0, /* buffers as they lie in the file, records as they lie in each buffer */
    ETL_ORDER_TIME = 1  /* per-CPU buffers by SequenceNumber, merged by timestamp (etl_iter_merge_ts) */
} etl_order;

ETL_API etl_status etl_iter_open(etl_reader *r, etl_order order, etl_iter **out);
/*
 * A filter for the time-order iterators below: called for every record of a CPU,
 * in that CPU's order, before the merge; a record it refuses is never returned
 * nor merged (merging is most of the cost of time order). The order of the others
 * is the same as without the filter (merge times count every record).
 */
typedef bool (*etl_iter_keep_fn)(void *ctx, const etl_record *rec);
/*
 * One CPU's records alone, in time order (its buffers by SequenceNumber): a second
 * cursor over a CPU's stream, e.g. to read its compact batches ahead of the rest.
 * keep may be NULL (every record). The stats count only what this iterator reads.
 */
ETL_API etl_status etl_iter_open_cpu(etl_reader *r, unsigned cpu, etl_iter_keep_fn keep, void *ctx, etl_iter **out);
/*
 * The records of the CPUs c < n with want[c] set (want NULL: every CPU), in time order: a share of the
 * file for one thread. Ties in time go to the lower CPU, as in etl_iter_open, so
 * merging the iterators of disjoint sets on (time, CPU) gives etl_iter_open's order.
 * keep may be NULL. The stats count the reader's problems plus what this iterator reads.
 */
ETL_API etl_status etl_iter_open_cpus(etl_reader *r, const uint8_t *want, unsigned n, etl_iter_keep_fn keep, void *ctx,
                              etl_iter **out);
/* Buffers [first, first + count) of the file, in file order (count may run past the end). */
ETL_API etl_status etl_iter_open_range(etl_reader *r, size_t first, size_t count, etl_iter **out);
/* ETL_OK with the next record, ETL_END at the end. Never fails on bad input. */
ETL_API etl_status etl_iter_next(etl_iter *it, etl_record *rec);
/* The same without the copy: *rec points into the iterator, valid until its next call. */
ETL_API etl_status etl_iter_next_ref(etl_iter *it, const etl_record **rec);
/*
 * Time order: kernel records (SYSTEM, COMPACT, PERFINFO) whose hook's bit is clear in
 * keep (bit h & 7 of byte h >> 3) are passed over from their header alone, before the
 * keep function and the merge - most of the cost of the records a reader does not want.
 * Of those, the ones whose bit is set in mark move etl_iter_marked_ts. Other records,
 * and every record a problem affects, are framed whole as before. Call after opening.
 */
ETL_API void etl_iter_keep_hooks(etl_iter *it, const uint8_t keep[8192], const uint8_t mark[8192]);
/* The latest time of a marked record passed over (0 if none). */
ETL_API uint64_t etl_iter_marked_ts(const etl_iter *it);
/*
 * Time order: the time the last record was merged at - its timestamp, or where
 * damage made its CPU's time go back, the largest timestamp of that CPU before it.
 */
ETL_API uint64_t etl_iter_merge_ts(const etl_iter *it);
/* ---- walking buffers: the fast path under the iterators ------------------------ */

/*
 * A single-cursor iterator (file order, or one CPU's time order) also hands out
 * whole buffers, whose records the caller frames itself with etl_walk_next: the
 * SYSTEM, COMPACT and PERFINFO records (nearly every record of a kernel trace)
 * inline, reading only their first header bytes; any other record, and every
 * problem, through etl_record_frame. The records and the damage counted are exactly
 * those etl_iter_next gives on the same iterator.
 */
typedef struct etl_krec {
    const uint8_t *data;     /* the record, at its marker (tid, pid of SYSTEM/COMPACT at +8, +12) */
    etl_span payload;        /* after the header, its PEBS index and PMC counters */
    uint64_t ts;
    uint32_t size;           /* the Size field */
    uint16_t hook;
    uint16_t version_word;   /* version = low byte; PEBS flag, PMC count (etl_record's meaning) */
    uint8_t htype;           /* ETL_HTYPE_SYSTEM32 .. ETL_HTYPE_PERFINFO64 */
    uint8_t pointer_size;    /* 4 or 8, from the header type */
    uint8_t pmc_count;       /* u64 counters just before the payload */
} etl_krec;

/*
 * Time order, with etl_iter_keep_hooks: a filter of the kernel records whose hook is
 * kept, from their header alone (k, and the CPU), before they are framed whole. A
 * record it refuses is passed over as one of an unkept hook is (its time still
 * counts); the keep function sees the others. Called as keep is, in each CPU's order,
 * from the record after each CPU's first (framed when the iterator opened).
 */
typedef bool (*etl_iter_keep_kernel_fn)(void *ctx, const etl_krec *k, unsigned cpu);
ETL_API void etl_iter_keep_kernel(etl_iter *it, etl_iter_keep_kernel_fn fn, void *ctx);

typedef struct etl_walk {
    etl_iter *it;
    const uint8_t *p;        /* the buffer's bytes, header included, cut at its data end */
    size_t n, pos;           /* pos: the next record */
    uint64_t records;        /* framed so far in this buffer */
    uint32_t buffer_index;   /* file order */
    uint32_t ordinal;        /* the buffer's place in the iterator's order (0, 1, ...) */
    uint16_t cpu;
    unsigned cursor;         /* private */
    uint64_t t_lo, t_span;   /* the times a next record may have without a closer look, [t_lo, t_lo + t_span]:
                                from the buffer's last record's to its flush (in the session window) */
    etl_record full;         /* ETL_WALK_OTHER: the record (cpu and buffer_index set) */
} etl_walk;

enum { ETL_WALK_END = 0, ETL_WALK_KERNEL = 1, ETL_WALK_OTHER = 2 };

/*
 * The buffers of the CPUs c < n with want[c] (want NULL: every CPU), for
 * etl_iter_next_buffer: each CPU's in its time order (by SequenceNumber), the CPUs
 * interleaved so that the walk goes through the file about in order (w->cpu says
 * whose a buffer is). For readers that keep a state per CPU and need no merge.
 */
ETL_API etl_status etl_iter_open_cpus_buffers(etl_reader *r, const uint8_t *want, unsigned n, etl_iter **out);
/*
 * For walks from etl_iter_open_cpus_buffers over one reader, each on its own thread:
 * a paced walk that gets 16 MiB further in the file than the slowest paced one waits
 * in etl_iter_next_buffer until it catches up, so the pages mapped between them stay
 * bounded whatever the threads' speeds. Each paced walk must be walked to its end or
 * closed by its thread; never pace two walks on one thread.
 */
ETL_API void etl_iter_pace(etl_iter *it);
/*
 * The next buffer of an iterator from etl_iter_open_range or etl_iter_open_cpus_buffers
 * into w, releasing the one before: ETL_END after the last (ETL_E_INVALID_ARG for other
 * iterators). Buffers that cannot be loaded are skipped and counted, as etl_iter_next
 * skips them. Do not mix with etl_iter_next on one iterator.
 */
ETL_API etl_status etl_iter_next_buffer(etl_iter *it, etl_walk *w);

/*
 * Each selected CPU walked on its own, for readers that merge the CPUs themselves
 * (the scheduler source): cursor k < etl_iter_walk_count reads CPU etl_iter_walk_cpu's
 * buffers (*buffers of them) in its time order, one etl_walk per cursor at a time.
 * With release, the pages below the lowest offset any cursor still reads are dropped
 * (as a walk over CPUs drops them); a read-ahead walker over buffers another iterator
 * also reads (release false) leaves them, and tells no problem: the other one tells
 * the same.
 */
ETL_API etl_status etl_iter_open_cpu_walks(etl_reader *r, const uint8_t *want, unsigned n, bool release, etl_iter **out);
ETL_API unsigned etl_iter_walk_count(const etl_iter *it);
ETL_API unsigned etl_iter_walk_cpu(const etl_iter *it, unsigned k, size_t *buffers);
/* Cursor k's next buffer into w (its own etl_walk), as etl_iter_next_buffer does for one. */
ETL_API etl_status etl_iter_next_buffer_of(etl_iter *it, unsigned k, etl_walk *w);

/*
 * The out-of-line half of etl_walk_next: everything but a well-formed kernel record whose
 * time lies in the session window. A record whose time lies outside it is passed over
 * (counted and told, see etl_reader_time_window) and the next one returned, into k when
 * it is a kernel record.
 */
ETL_API int etl_walk_slow(etl_walk *w, etl_krec *k);
/*
 * Damage a reader of a payload finds in the record at rec of the buffer w holds: a compact
 * batch whose switch times (ts: the first outside) leave the session window. Told with the
 * record's file offset, what it is and its fate ("hook 0x0525, a switch", "the rest of the
 * batch dropped"), and counted as a bad time (bad_times, bad_buffers) in w's iterator - by
 * a read-ahead walk too, as only the walk that expands a payload finds it.
 */
ETL_API void etl_walk_bad_time(const etl_walk *w, const uint8_t *rec, uint64_t ts, const char *what, const char *fate);
/*
 * A compact batch (its record at rec, in the buffer w holds) whose switch times go back before
 * its CPU's switch ahead of them (the model passes such switches over: etl_sched_takes): told
 * with the batch's file offset, counted as one bad time of the buffer.
 */
ETL_API void etl_walk_batch_back(const etl_walk *w, const uint8_t *rec);
/* The same for a record a record iterator handed out (buffer_index and offset set). */
ETL_API void etl_iter_bad_time(etl_iter *it, const etl_record *rec, uint64_t ts, const char *what, const char *fate);

/* The kernel header types by type: header size (0 for the others), timestamp offset, pointer size. */
static const struct {
    uint8_t fixed, ts_off, ptr;
} etl_khdr[0x12] = {/* by position, not designators: C++ includes this header too */
                    {0, 0, 0},
                    {0x20, 16, 4}, /* ETL_HTYPE_SYSTEM32 */
                    {0x20, 16, 8}, /* ETL_HTYPE_SYSTEM64 */
                    {0x18, 16, 4}, /* ETL_HTYPE_COMPACT32 */
                    {0x18, 16, 8}, /* ETL_HTYPE_COMPACT64 */
                    {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0},
                    {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, /* 0x05..0x0F */
                    {0x10, 8, 4},  /* ETL_HTYPE_PERFINFO32 */
                    {0x10, 8, 8}}; /* ETL_HTYPE_PERFINFO64 */

/*
 * The inline half of etl_walk_next, on a buffer's bytes buf[0, n): true with k filled and
 * *at moved past it when the record at *at is a well-formed kernel record (its Size one
 * its layout allows, etl_record_frame); false, *at untouched, otherwise (etl_record_frame
 * says what it is).
 */
static inline bool etl_frame_kernel(const uint8_t *buf, size_t n, size_t *at, etl_krec *k)
{
    size_t pos = *at;
    if (pos + 8 <= n) {
        const uint8_t *p = buf + pos;
        uint8_t ht = p[2];
        if ((p[3] & 0xC0) == 0xC0 && ht < sizeof etl_khdr / sizeof etl_khdr[0] && etl_khdr[ht].fixed) {
            size_t fixed = etl_khdr[ht].fixed;
            uint16_t vw = (uint16_t)(p[0] | p[1] << 8);
            size_t size = (size_t)(p[4] | p[5] << 8);
            unsigned npmc = (vw & ETL_TRACE_HEADER_PMC_COUNTERS_MASK) >> ETL_TRACE_HEADER_PMC_COUNTERS_SHIFT;
            size_t head = fixed + (vw & ETL_TRACE_HEADER_PEBS_INDEX_FLAG ? 8u : 0u) + 8u * npmc;
            if (size >= head && size <= n - pos) {
                const uint8_t *t = p + etl_khdr[ht].ts_off;
                k->data = p;
                k->payload.p = p + head;
                k->payload.n = size - head;
                k->ts = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24 |
                        (uint64_t)t[4] << 32 | (uint64_t)t[5] << 40 | (uint64_t)t[6] << 48 | (uint64_t)t[7] << 56;
                k->size = (uint32_t)size;
                k->hook = (uint16_t)(p[6] | p[7] << 8);
                k->version_word = vw;
                k->htype = ht;
                k->pointer_size = etl_khdr[ht].ptr;
                k->pmc_count = (uint8_t)npmc;
                /* A fixed-layout event's Size past its layout: etl_record_frame judges it (k is scribbled on). */
                if (__builtin_expect(k->payload.n > etl_klayout_max[p[6]], 0) &&
                    !etl_kernel_size_fits(p, n - pos, head, size))
                    return false;
                *at = pos + ((size + ETL_RECORD_ALIGN - 1) & ~(size_t)(ETL_RECORD_ALIGN - 1));
                return true;
            }
        }
    }
    return false;
}

/* A walk's next record when it is a well-formed kernel record in the session window (else false, nothing moved). */
static inline bool etl_walk_kernel(etl_walk *w, etl_krec *k)
{
    if (!etl_frame_kernel(w->p, w->n, &w->pos, k)) return false;
    if (__builtin_expect(k->ts - w->t_lo > w->t_span, 0)) {
        w->pos -= (k->size + ETL_RECORD_ALIGN - 1) & ~(size_t)(ETL_RECORD_ALIGN - 1); /* back: etl_walk_slow judges it */
        return false;
    }
    w->t_span -= k->ts - w->t_lo;
    w->t_lo = k->ts;
    w->records++;
    return true;
}

/*
 * The buffer's next record: ETL_WALK_KERNEL with k filled, ETL_WALK_OTHER with
 * w->full (another header type), or ETL_WALK_END when the buffer is done (at its
 * end, its end marker, or a record that cannot be framed: counted, the rest skipped).
 * Records whose time lies outside the session window are passed over (counted, told);
 * a Size its layout contradicts is told and judged as etl_record_frame frames it.
 */
static inline int etl_walk_next(etl_walk *w, etl_krec *k)
{
    return etl_walk_kernel(w, k) ? ETL_WALK_KERNEL : etl_walk_slow(w, k);
}

/*
 * A record again, where a walk met it (buffer in file order, offset in its data): for
 * readers that note a few records on one pass and read them in another order later.
 * The cache keeps the last buffer (expanded, for a compressed file) while the records
 * asked for lie in it. ETL_OK with the record (cpu and buffer_index set), or the error
 * that loading or framing gave (nothing is counted: the walk counted it).
 */
typedef struct etl_record_cache {
    uint32_t buffer;
    bool loaded;
    uint8_t *scratch;
    size_t cap;
    etl_span data;
} etl_record_cache;

ETL_API etl_status etl_reader_record_at(const etl_reader *r, etl_record_cache *c, uint32_t buffer, uint32_t offset,
                                etl_record *out);
ETL_API void etl_record_cache_free(etl_record_cache *c);

/*
 * The latest time a record of the buffer that gave the record returned last may have: its
 * flush TimeStamp when that is a time of the session, else the session window's end. For a
 * reader of payloads with times of their own (a compact batch's switches).
 */
ETL_API uint64_t etl_iter_time_limit(const etl_iter *it);
/* The same for the buffer a walk holds. */
static inline uint64_t etl_walk_time_limit(const etl_walk *w) { return w->t_lo + w->t_span; }

/* Reader stats plus what this iterator skipped so far. */
ETL_API const etl_stats *etl_iter_stats_get(const etl_iter *it);
/* Bytes of the file's buffers consumed so far (for progress bars). */
ETL_API uint64_t etl_iter_progress(const etl_iter *it);
ETL_API void etl_iter_close(etl_iter *it);

/*
 * Compact batches (hook 0x0525) and the CPU losses above: a batch is logged after its switches,
 * and a CPU's next batch holds its switches from its last batch's last switch on, some before
 * records the CPU logged after that batch (a ReadyThread). So, for a CPU whose latest switch
 * before a loss is a batch's, the span of etl_reader_cpu_gaps begins at that switch when it is
 * earlier than the CPU's last record before the gap, and etl_reader_cpu_known_until is that
 * switch's time when earlier than its last record: who ran on it after the switch is not known.
 */

#ifdef __cplusplus
}
#endif
#endif

/*
 * etlbuild.h - a test-only ETL builder: lays out hand-built buffers and records
 * byte by byte from the offsets in spec/container.md, never through the library's
 * own encoders, so that what a test expects is independent of the code it tests.
 *
 * Everything is static inline so that each test file (compiled alone with
 * testutil.c) can include it and use only what it needs.
 *
 *   eb_file f;  eb_init(&f);
 *   eb_begin(&f, &(eb_bufopt){.size = 0x200, .type = 4, .seq = 0, .cpu = 0});
 *   eb_add(&f, rec, n);            // 8-byte aligned, returns the offset in the buffer
 *   eb_end(&f);                    // Offset/SavedOffset = end of data, rest 0xFF
 *   ...  f.p / f.n is the file  ...
 *   eb_free(&f);
 */
#ifndef ETLKIT_TESTS_ETLBUILD_H
#define ETLKIT_TESTS_ETLBUILD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- little-endian stores (independent of src/base/bytes.h) ---------------- */

static inline void eb_w8(uint8_t *p, uint8_t v) { p[0] = v; }
static inline void eb_w16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v & 0xFF);
    p[1] = (uint8_t)(v >> 8);
}
static inline void eb_w32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline void eb_w64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static inline uint32_t eb_r32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint16_t eb_r16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static inline uint64_t eb_r64(const uint8_t *p) { return (uint64_t)eb_r32(p) | (uint64_t)eb_r32(p + 4) << 32; }

/* A GUID as 16 raw bytes in its on-disk order: Data1 LE, Data2 LE, Data3 LE, Data4. */
typedef struct eb_guid {
    uint32_t d1;
    uint16_t d2, d3;
    uint8_t d4[8];
} eb_guid;

static inline void eb_wguid(uint8_t *p, const eb_guid *g)
{
    eb_w32(p, g->d1);
    eb_w16(p + 4, g->d2);
    eb_w16(p + 6, g->d3);
    memcpy(p + 8, g->d4, 8);
}

/* Writes ASCII s as UTF-16LE plus a NUL terminator; returns the bytes written. */
static inline size_t eb_utf16z(uint8_t *out, const char *s)
{
    size_t n = 0;
    for (; *s; s++, n += 2) eb_w16(out + n, (uint16_t)(unsigned char)*s);
    eb_w16(out + n, 0);
    return n + 2;
}

/* ---- records --------------------------------------------------------------- */

#define EB_REC_MAX 4096

typedef struct eb_rec {
    uint8_t b[EB_REC_MAX];
    size_t n;
} eb_rec;

/* Marker flag bytes (byte 3). */
#define EB_FLAGS_TRACE 0xC0u
#define EB_FLAGS_WPP 0x90u

/*
 * SYSTEM32/64 (0x01/0x02, 0x20 header), COMPACT32/64 (0x03/0x04, 0x18) and
 * PERFINFO32/64 (0x10/0x11, 0x10): +0 Version u16, +2 type, +3 flags 0xC0, +4 Size
 * u16, +6 HookId; SYSTEM/COMPACT: +8 TID, +0xC PID, +0x10 SystemTime; SYSTEM:
 * +0x18 KernelTime, +0x1C UserTime; PERFINFO: +8 SystemTime. Then `ext` raw bytes
 * (PEBS index, PMC counters) and the payload.
 */
typedef struct eb_kernel {
    uint8_t htype;
    uint16_t version_word;
    uint16_t hook;
    uint32_t tid, pid;
    uint64_t ts;
    uint32_t ktime, utime;
    const uint8_t *ext;
    size_t ext_n;
    const uint8_t *payload;
    size_t payload_n;
    int size_override; /* when > 0 (or -1 for 0), write this as Size instead */
} eb_kernel;

static inline size_t eb_kernel_fixed(uint8_t htype)
{
    switch (htype) {
    case 0x01: case 0x02: return 0x20;
    case 0x03: case 0x04: return 0x18;
    default: return 0x10; /* PERFINFO */
    }
}

static inline void eb_rec_kernel(eb_rec *r, const eb_kernel *k)
{
    size_t fixed = eb_kernel_fixed(k->htype);
    memset(r->b, 0, sizeof r->b);
    r->n = fixed + k->ext_n + k->payload_n;
    eb_w16(r->b + 0, k->version_word);
    eb_w8(r->b + 2, k->htype);
    eb_w8(r->b + 3, EB_FLAGS_TRACE);
    uint16_t size = (uint16_t)r->n;
    if (k->size_override > 0) size = (uint16_t)k->size_override;
    if (k->size_override < 0) size = 0;
    eb_w16(r->b + 4, size);
    eb_w16(r->b + 6, k->hook);
    if (fixed == 0x10) {
        eb_w64(r->b + 8, k->ts);
    } else {
        eb_w32(r->b + 8, k->tid);
        eb_w32(r->b + 0xC, k->pid);
        eb_w64(r->b + 0x10, k->ts);
        if (fixed == 0x20) {
            eb_w32(r->b + 0x18, k->ktime);
            eb_w32(r->b + 0x1C, k->utime);
        }
    }
    if (k->ext_n) memcpy(r->b + fixed, k->ext, k->ext_n);
    if (k->payload_n) memcpy(r->b + fixed + k->ext_n, k->payload, k->payload_n);
}

/* A SYSTEM64 record with a 4-byte payload tag (convenient for the reader tests). */
static inline void eb_rec_sys64_tag(eb_rec *r, uint16_t hook, uint32_t tid, uint64_t ts, uint32_t tag)
{
    uint8_t pl[4];
    eb_w32(pl, tag);
    eb_kernel k = {.htype = 0x02, .version_word = 2, .hook = hook, .tid = tid, .pid = tid + 1000,
                   .ts = ts, .payload = pl, .payload_n = 4};
    eb_rec_kernel(r, &k);
}

/* A PERFINFO64 record with a tag and `extra` more payload bytes (value 0x5A). */
static inline void eb_rec_perf64_tag(eb_rec *r, uint16_t hook, uint64_t ts, uint32_t tag, size_t extra)
{
    uint8_t pl[512];
    memset(pl, 0x5A, sizeof pl);
    eb_w32(pl, tag);
    eb_kernel k = {.htype = 0x11, .version_word = 3, .hook = hook, .ts = ts, .payload = pl,
                   .payload_n = 4 + extra};
    eb_rec_kernel(r, &k);
}

/*
 * FULL_HEADER32/64 (0x0A/0x14, 0x30) and INSTANCE32/64 (0x0B/0x15, 0x48):
 * +0 Size, +2 type, +3 flags, +4 Class {Type u8, Level u8, Version u16}, +8 TID,
 * +0xC PID, +0x10 TimeStamp, +0x18 GUID, +0x28 KernelTime, +0x2C UserTime;
 * INSTANCE: +0x30 InstanceId, +0x34 ParentInstanceId, +0x38 ParentGuid.
 */
typedef struct eb_full {
    uint8_t htype;
    uint8_t type, level;
    uint16_t version;
    uint32_t tid, pid;
    uint64_t ts;
    eb_guid guid;
    uint32_t ktime, utime;
    uint32_t instance_id, parent_instance_id;
    eb_guid parent_guid;
    const uint8_t *payload;
    size_t payload_n;
} eb_full;

static inline void eb_rec_full(eb_rec *r, const eb_full *f)
{
    bool inst = f->htype == 0x0B || f->htype == 0x15;
    size_t fixed = inst ? 0x48 : 0x30;
    memset(r->b, 0, sizeof r->b);
    r->n = fixed + f->payload_n;
    eb_w16(r->b + 0, (uint16_t)r->n);
    eb_w8(r->b + 2, f->htype);
    eb_w8(r->b + 3, EB_FLAGS_TRACE);
    eb_w8(r->b + 4, f->type);
    eb_w8(r->b + 5, f->level);
    eb_w16(r->b + 6, f->version);
    eb_w32(r->b + 8, f->tid);
    eb_w32(r->b + 0xC, f->pid);
    eb_w64(r->b + 0x10, f->ts);
    eb_wguid(r->b + 0x18, &f->guid);
    eb_w32(r->b + 0x28, f->ktime);
    eb_w32(r->b + 0x2C, f->utime);
    if (inst) {
        eb_w32(r->b + 0x30, f->instance_id);
        eb_w32(r->b + 0x34, f->parent_instance_id);
        eb_wguid(r->b + 0x38, &f->parent_guid);
    }
    if (f->payload_n) memcpy(r->b + fixed, f->payload, f->payload_n);
}

/*
 * EVENT_HEADER32/64 (0x12/0x13, 0x50): +0 Size, +2 type, +3 flags, +4 Flags,
 * +6 EventProperty, +8 TID, +0xC PID, +0x10 TimeStamp, +0x18 ProviderId,
 * +0x28 EventDescriptor {Id u16, Version u8, Channel u8, Level u8, Opcode u8,
 * Task u16, Keyword u64}, +0x38 KernelTime, +0x3C UserTime, +0x40 ActivityId.
 * Extended items (raw bytes, see eb_ext_item) follow at +0x50, then the payload.
 */
typedef struct eb_evh {
    uint8_t htype;
    uint16_t flags, property;
    uint32_t tid, pid;
    uint64_t ts;
    eb_guid provider;
    uint16_t id;
    uint8_t version, channel, level, opcode;
    uint16_t task;
    uint64_t keyword;
    uint32_t ktime, utime;
    eb_guid activity;
    const uint8_t *ext;
    size_t ext_n;
    const uint8_t *payload;
    size_t payload_n;
} eb_evh;

static inline void eb_rec_evh(eb_rec *r, const eb_evh *e)
{
    memset(r->b, 0, sizeof r->b);
    r->n = 0x50 + e->ext_n + e->payload_n;
    eb_w16(r->b + 0, (uint16_t)r->n);
    eb_w8(r->b + 2, e->htype);
    eb_w8(r->b + 3, EB_FLAGS_TRACE);
    eb_w16(r->b + 4, e->flags);
    eb_w16(r->b + 6, e->property);
    eb_w32(r->b + 8, e->tid);
    eb_w32(r->b + 0xC, e->pid);
    eb_w64(r->b + 0x10, e->ts);
    eb_wguid(r->b + 0x18, &e->provider);
    eb_w16(r->b + 0x28, e->id);
    eb_w8(r->b + 0x2A, e->version);
    eb_w8(r->b + 0x2B, e->channel);
    eb_w8(r->b + 0x2C, e->level);
    eb_w8(r->b + 0x2D, e->opcode);
    eb_w16(r->b + 0x2E, e->task);
    eb_w64(r->b + 0x30, e->keyword);
    eb_w32(r->b + 0x38, e->ktime);
    eb_w32(r->b + 0x3C, e->utime);
    eb_wguid(r->b + 0x40, &e->activity);
    if (e->ext_n) memcpy(r->b + 0x50, e->ext, e->ext_n);
    if (e->payload_n) memcpy(r->b + 0x50 + e->ext_n, e->payload, e->payload_n);
}

/*
 * One EVENT_HEADER extended item: u16 total size, u16 ExtType, u16 Linkage (bit 0:
 * another follows), u16 DataSize, then the data padded with zeros to 8. Appends at
 * out+*n and returns the item's offset.
 */
static inline size_t eb_ext_item(uint8_t *out, size_t *n, uint16_t type, bool more, const uint8_t *data,
                                 uint16_t dsize)
{
    size_t at = *n;
    size_t padded = ((size_t)dsize + 7u) & ~(size_t)7u;
    eb_w16(out + at, (uint16_t)(8 + padded));
    eb_w16(out + at + 2, type);
    eb_w16(out + at + 4, more ? 1 : 0);
    eb_w16(out + at + 6, dsize);
    memset(out + at + 8, 0, padded);
    if (dsize) memcpy(out + at + 8, data, dsize);
    *n = at + 8 + padded;
    return at;
}

/*
 * WPP MESSAGE (flags byte 0x90): +0 Size u16, +2 Reserved, +3 0x90, +4 MessageNumber,
 * +6 OptionFlags, then in order: sequence u32 (0x1), GUID (0x2) or component id u32
 * (0x4), timestamp u64 (0x8), TID u32 + PID u32 (0x20), then the payload.
 */
typedef struct eb_msg {
    uint16_t number, options;
    uint32_t seq;
    eb_guid guid;
    uint32_t component;
    uint64_t ts;
    uint32_t tid, pid;
    const uint8_t *payload;
    size_t payload_n;
} eb_msg;

static inline void eb_rec_msg(eb_rec *r, const eb_msg *m)
{
    memset(r->b, 0, sizeof r->b);
    size_t o = 8;
    if (m->options & 0x1) { eb_w32(r->b + o, m->seq); o += 4; }
    if (m->options & 0x2) { eb_wguid(r->b + o, &m->guid); o += 16; }
    if (m->options & 0x4) { eb_w32(r->b + o, m->component); o += 4; }
    if (m->options & 0x8) { eb_w64(r->b + o, m->ts); o += 8; }
    if (m->options & 0x20) { eb_w32(r->b + o, m->tid); eb_w32(r->b + o + 4, m->pid); o += 8; }
    if (m->payload_n) memcpy(r->b + o, m->payload, m->payload_n);
    r->n = o + m->payload_n;
    eb_w16(r->b + 0, (uint16_t)r->n);
    eb_w8(r->b + 2, 0);
    eb_w8(r->b + 3, EB_FLAGS_WPP);
    eb_w16(r->b + 4, m->number);
    eb_w16(r->b + 6, m->options);
}

/* ---- the logfile header record (hook 0x0000, container.md §5) ------------------ */

typedef struct eb_lfh {
    bool is64;                  /* SYSTEM64 (0x118 struct) or SYSTEM32 (0x110) */
    uint32_t tid, pid;
    uint64_t ts;                /* the SYSTEM header's raw time */
    uint32_t buffer_size;
    uint8_t version[4];
    uint32_t provider_version, nproc;
    uint64_t end_time;
    uint32_t timer_res, max_file_size, log_file_mode, buffers_written, start_buffers, pointer_size,
        events_lost, cpu_mhz;
    uint64_t logger_ptr, logfile_ptr;
    int32_t tz_bias;
    const char *tz_name;        /* ASCII; written as UTF-16 into StandardName[32] */
    uint32_t tz_pad;            /* value of the 4-byte pad before BootTime */
    uint64_t boot_time, perf_freq, start_time;
    uint32_t clock_type, buffers_lost;
    const uint8_t *names;       /* raw bytes after the struct (UTF-16 names), may be NULL */
    size_t names_n;
    uint16_t hook;              /* 0 for a real header; anything else for the negative tests */
} eb_lfh;

/* A plausible default: 64-bit, QPC at 10 MHz, names "Test Logger" and "C:\t.etl". */
static inline eb_lfh eb_lfh_default(void)
{
    eb_lfh h;
    memset(&h, 0, sizeof h);
    h.is64 = true;
    h.tid = 0x44;
    h.pid = 0x4;
    h.ts = 1000000;
    h.buffer_size = 0x400;
    h.version[0] = 10;
    h.version[1] = 0;
    h.version[2] = 1;
    h.version[3] = 5;
    h.provider_version = 19041;
    h.nproc = 4; /* the reference files use CPUs 0..2 */
    h.timer_res = 156250;
    h.pointer_size = 8;
    h.cpu_mhz = 3000;
    h.boot_time = 132273540000000000ull;
    h.perf_freq = 10000000;
    h.start_time = 132273542277445790ull;
    h.clock_type = 1;
    return h;
}

static inline void eb_rec_lfh(eb_rec *r, const eb_lfh *h)
{
    /* Field offsets of TRACE_LOGFILE_HEADER, from the table in container.md §5. */
    const size_t o_names_ptr2 = h->is64 ? 0x40 : 0x3C;
    const size_t o_tz = h->is64 ? 0x48 : 0x40;
    const size_t o_pad = h->is64 ? 0xF4 : 0xEC;
    const size_t o_boot = h->is64 ? 0xF8 : 0xF0;
    const size_t o_freq = h->is64 ? 0x100 : 0xF8;
    const size_t o_start = h->is64 ? 0x108 : 0x100;
    const size_t o_clock = h->is64 ? 0x110 : 0x108;
    const size_t o_lost = h->is64 ? 0x114 : 0x10C;
    const size_t fixed = h->is64 ? 0x118 : 0x110;

    memset(r->b, 0, sizeof r->b);
    uint8_t *s = r->b;
    eb_w16(s + 0, 2); /* version 2 */
    eb_w8(s + 2, h->is64 ? 0x02 : 0x01);
    eb_w8(s + 3, 0xC0);
    eb_w16(s + 6, h->hook);
    eb_w32(s + 8, h->tid);
    eb_w32(s + 0xC, h->pid);
    eb_w64(s + 0x10, h->ts);
    eb_w32(s + 0x18, 0x11);
    eb_w32(s + 0x1C, 0x22);

    uint8_t *b = s + 0x20;
    eb_w32(b + 0x00, h->buffer_size);
    memcpy(b + 0x04, h->version, 4);
    eb_w32(b + 0x08, h->provider_version);
    eb_w32(b + 0x0C, h->nproc);
    eb_w64(b + 0x10, h->end_time);
    eb_w32(b + 0x18, h->timer_res);
    eb_w32(b + 0x1C, h->max_file_size);
    eb_w32(b + 0x20, h->log_file_mode);
    eb_w32(b + 0x24, h->buffers_written);
    eb_w32(b + 0x28, h->start_buffers);
    eb_w32(b + 0x2C, h->pointer_size);
    eb_w32(b + 0x30, h->events_lost);
    eb_w32(b + 0x34, h->cpu_mhz);
    if (h->is64) {
        eb_w64(b + 0x38, h->logger_ptr);
        eb_w64(b + o_names_ptr2, h->logfile_ptr);
    } else {
        eb_w32(b + 0x38, (uint32_t)h->logger_ptr);
        eb_w32(b + o_names_ptr2, (uint32_t)h->logfile_ptr);
    }
    eb_w32(b + o_tz, (uint32_t)h->tz_bias);
    if (h->tz_name) {
        for (size_t i = 0; h->tz_name[i] && i < 31; i++) eb_w16(b + o_tz + 4 + 2 * i, (uint16_t)h->tz_name[i]);
    }
    /* The rest of TIME_ZONE_INFORMATION: a recognisable filler that must not leak. */
    for (size_t i = o_tz + 4 + 64; i < o_pad; i++) b[i] = 0xA5;
    eb_w32(b + o_pad, h->tz_pad);
    eb_w64(b + o_boot, h->boot_time);
    eb_w64(b + o_freq, h->perf_freq);
    eb_w64(b + o_start, h->start_time);
    eb_w32(b + o_clock, h->clock_type);
    eb_w32(b + o_lost, h->buffers_lost);
    if (h->names_n) memcpy(b + fixed, h->names, h->names_n);
    r->n = 0x20 + fixed + h->names_n;
    eb_w16(s + 4, (uint16_t)r->n);
}

/* ---- buffers and files ---------------------------------------------------------- */

typedef struct eb_bufopt {
    uint32_t size;       /* BufferSize; 0x400 if 0 */
    uint16_t type;       /* BufferType */
    uint64_t seq;        /* SequenceNumber */
    uint16_t cpu;        /* ProcessorIndex (u16 at 0x28, PROC_INDEX flag set) */
    uint16_t extra_flags;/* more BufferFlag bits */
    uint32_t state;      /* State; 3 (flushed) if 0 */
    uint64_t timestamp;
} eb_bufopt;

typedef struct eb_file {
    uint8_t *p;
    size_t n, cap;
    size_t cur;      /* file offset of the open buffer */
    size_t cur_size; /* its BufferSize */
    size_t pos;      /* next record offset inside it */
    size_t nbufs;
    size_t boff[64]; /* file offsets of the buffers begun */
} eb_file;

static inline void eb_init(eb_file *f)
{
    memset(f, 0, sizeof *f);
    f->cap = 1 << 16;
    f->p = malloc(f->cap);
}

static inline void eb_free(eb_file *f)
{
    free(f->p);
    f->p = NULL;
}

static inline void eb_reserve(eb_file *f, size_t n)
{
    if (f->n + n <= f->cap) return;
    while (f->n + n > f->cap) f->cap *= 2;
    f->p = realloc(f->p, f->cap);
}

/* Appends raw bytes to the file (for junk, or a hand-made buffer). */
static inline void eb_raw(eb_file *f, const void *d, size_t n)
{
    eb_reserve(f, n);
    memcpy(f->p + f->n, d, n);
    f->n += n;
}

/* Starts a buffer: 0x48-byte WMI_BUFFER_HEADER, the rest 0xFF. Returns its file offset. */
static inline size_t eb_begin(eb_file *f, const eb_bufopt *o)
{
    uint32_t size = o->size ? o->size : 0x400;
    eb_reserve(f, size);
    size_t at = f->n;
    uint8_t *h = f->p + at;
    memset(h, 0xFF, size);
    memset(h, 0, 0x48);
    eb_w32(h + 0x00, size);
    eb_w64(h + 0x10, o->timestamp);
    eb_w64(h + 0x18, o->seq);
    eb_w64(h + 0x20, 0xffff9987da1d7020ull); /* list-pointer junk in the clock union */
    eb_w16(h + 0x28, o->cpu);
    eb_w16(h + 0x2A, 0x11);
    eb_w32(h + 0x2C, o->state ? o->state : 3);
    eb_w16(h + 0x34, (uint16_t)(0x20 | o->extra_flags));
    eb_w16(h + 0x36, o->type);
    f->n += size;
    f->cur = at;
    f->cur_size = size;
    f->pos = 0x48;
    if (f->nbufs < 64) f->boff[f->nbufs] = at;
    f->nbufs++;
    return at;
}

/* Adds a record at the next 8-byte aligned offset; returns that offset in the buffer. */
static inline size_t eb_add(eb_file *f, const void *rec, size_t n)
{
    size_t at = f->pos;
    if (at + n > f->cur_size) abort(); /* a test bug: the buffer is too small */
    memcpy(f->p + f->cur + at, rec, n);
    size_t padded = (n + 7u) & ~(size_t)7u;
    memset(f->p + f->cur + at + n, 0, padded - n);
    f->pos = at + padded;
    return at;
}

static inline size_t eb_add_rec(eb_file *f, const eb_rec *r) { return eb_add(f, r->b, r->n); }

/*
 * Closes the open buffer: SavedOffset and Offset = the end of its data.
 * CurrentOffset gets BufferSize + 0x48, a value seen in real files (container.md
 * §12: it is unreliable and must not be used).
 */
static inline void eb_end(eb_file *f)
{
    uint8_t *h = f->p + f->cur;
    eb_w32(h + 0x04, (uint32_t)f->pos);
    eb_w32(h + 0x08, (uint32_t)(f->cur_size + 0x48));
    eb_w32(h + 0x30, (uint32_t)f->pos);
}

/* Buffer 0: BufferType 4, the logfile header record, then nothing else yet. */
static inline size_t eb_header_buffer(eb_file *f, const eb_lfh *h, uint32_t state)
{
    eb_rec r;
    eb_rec_lfh(&r, h);
    eb_begin(f, &(eb_bufopt){.size = h->buffer_size, .type = 4, .seq = 0, .cpu = 0, .state = state});
    return eb_add_rec(f, &r);
}

/* Patches a u32/u16 of the file at an absolute offset. */
static inline void eb_put32(eb_file *f, size_t off, uint32_t v) { eb_w32(f->p + off, v); }
static inline void eb_put16(eb_file *f, size_t off, uint16_t v) { eb_w16(f->p + off, v); }

#endif

/*
 * writer.c - an ETL file as an NT Kernel Logger session flushes it.
 *
 * Layout: buffer 0 (HEADER) = logfile header event + header extension, written
 * first with placeholders and rewritten at close once BuffersWritten and
 * EndTime are known (it is never compressed, as in the real compressed samples,
 * so its size does not change). Then per-CPU GENERIC buffers, each written when
 * the next event of its CPU does not fit, with PROC_INDEX set, SavedOffset ==
 * CurrentOffset == Offset == bytes used, the flush time in TimeStamp and 0xFF
 * after the data. SequenceNumber counts buffers in the order they are flushed,
 * which is time order within each CPU; a file rewritten from one that misses
 * buffers misses the same numbers (etl_writer_holes: renumbered at close),
 * and one that lost events (etl_writer_buffer_lost) begins a buffer so flagged
 * where they were lost.
 */
#include <errno.h>
#include <stdarg.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/writer.h"
#include "etlkit/compress.h"
#include "base/bytes.h"
#include "base/mapfile.h"
#include "base/platform.h"
#include "writer/writer_internal.h"
#include "base/opts.h"
#include "base/diag.h"

#define FILETIME_2026 134116992000000000ull /* 2026-01-01T00:00:00Z */
#define EVENT_TRACE_FILE_MODE_SEQUENTIAL 0x00000001u
#define EVENT_TRACE_SYSTEM_LOGGER_MODE 0x02000000u
#define BUFFER_STATE_FLUSH 3u
#define COMPRESSION_FORMAT_XPRESS 3u /* buffer 0's State says the format of a compressed log */

typedef struct cpu_buf {
    uint8_t *p;
    uint32_t used;     /* bytes of header + events */
    uint64_t last_ts;  /* newest event: the flush time */
    uint32_t epoch;    /* etl_writer_epoch: the holes its records come after */
    uint16_t lost;     /* the loss flags of the buffer being filled */
    struct lost_at *lq; /* etl_writer_buffer_lost: losses waiting for the CPU's first event at their time */
    size_t lq_head, lq_n, lq_cap;
} cpu_buf;

/* A loss before a CPU's event at ts, after the holes of epoch (etl_writer_buffer_lost). */
typedef struct lost_at {
    uint64_t ts;
    uint32_t epoch;
    uint16_t flags;
} lost_at;

/* A buffer written, when the numbering has holes: where its SequenceNumber lies, and its epoch. */
typedef struct written_buf {
    uint64_t off;
    uint32_t epoch;
} written_buf;

struct etl_writer {
    FILE *f;
    etl_writer_options o;
    etl_logfile_header hdr;
    cpu_buf *cpus;
    uint8_t *zbuf;           /* compression output */
    size_t zcap;
    uint32_t header_size;    /* buffer 0's size on disk */
    uint64_t seq;
    uint64_t bytes, buffers, events;
    uint64_t end_time_min;      /* etl_writer_end_time_min's */
    etl_status err;
    int sys_err;             /* the system's reason (errno) for the first write that failed; 0: none */
    char *name;              /* the file, for messages */
    bool sync;               /* fsync at close */
    uint64_t ts_lo;          /* the earliest time a reader takes: t0 less 60 s (its session window's start) */
    uint64_t ticks_per_sec;  /* the session clock's rate */
    uint64_t newest;         /* the newest time written, on any CPU */
    uint64_t *hole;          /* etl_writer_holes: hole[e] numbers missing after the buffers of epoch e */
    uint32_t nholes;
    uint64_t hole_total, tail;
    written_buf *wb;         /* with holes, every buffer flushed, in file order */
    size_t nwb, wb_cap;
    uint8_t *scratch;        /* a record padded as the file holds it, for the layout check (on first need) */
    etl_diag why;            /* the last write that failed: its status and why (etl_writer_why) */
    bool why_last;           /* why is the writer's last call's (a write that failed): etl_writer_diag tells it */
};

/* Slacks of the reader's session window (container.md §7, README "Limits"): before t0, and after the end. */
#define WINDOW_MIN_SLACK_S 60u
#define WINDOW_END_SLACK_S 5u

/*
 * Whether ts can be cpu's next time: in time order on its CPU (the reader's ordered iterator relies on it),
 * no earlier than the reader's window starts and never with the top bit set. Anything else writes a file
 * that reads as damaged: refused.
 */
/* n seconds of the session clock, saturated. */
static uint64_t secs(const etl_writer *w, uint64_t n)
{
    return w->ticks_per_sec > UINT64_MAX / n ? UINT64_MAX : w->ticks_per_sec * n;
}

static bool time_ok(const etl_writer *w, const cpu_buf *b, uint64_t ts)
{
    return ts <= INT64_MAX && ts >= w->ts_lo && ts >= b->last_ts;
}

static void set_defaults(etl_writer_options *o, const char *path)
{
    if (o->pointer_size != 4) o->pointer_size = 8;
    if (o->clock_type != ETL_CLOCK_SYSTEM_TIME && o->clock_type != ETL_CLOCK_CPU_CYCLES)
        o->clock_type = ETL_CLOCK_QPC;
    if (!o->perf_freq) o->perf_freq = 10000000;
    if (!o->cpu_mhz) o->cpu_mhz = 3000;
    if (!o->ncpu) o->ncpu = 1;
    if (!o->buffer_size) o->buffer_size = 65536;
    if (!o->os_major && !o->os_minor) o->os_major = 10;
    if (!o->os_build) o->os_build = 19041;
    if (!o->start_time) o->start_time = FILETIME_2026;
    if (!o->timer_resolution) o->timer_resolution = 156250;
    if (!o->log_file_mode) o->log_file_mode = EVENT_TRACE_FILE_MODE_SEQUENTIAL | EVENT_TRACE_SYSTEM_LOGGER_MODE;
    if (o->compress) o->log_file_mode |= ETL_LOG_FILE_MODE_COMPRESSED;
    if (!o->logger_name) o->logger_name = "NT Kernel Logger";
    if (!o->log_file_name) o->log_file_name = path;
}

/* Raw ticks per 100 ns unit of the chosen clock, as a ratio: the boot time default needs it. */
static uint64_t ticks_to_filetime(const etl_writer_options *o, uint64_t ticks)
{
    uint64_t per_sec = o->clock_type == ETL_CLOCK_SYSTEM_TIME ? 10000000
                       : o->clock_type == ETL_CLOCK_CPU_CYCLES ? (uint64_t)o->cpu_mhz * 1000000
                                                               : o->perf_freq;
    return (uint64_t)((unsigned __int128)ticks * 10000000 / per_sec);
}

/* A write that failed: ETL_E_IO, its errno kept (the first) so that the message can say why. */
static etl_status io_failed(etl_writer *w)
{
    if (!w->sys_err) w->sys_err = errno ? errno : EIO;
    return ETL_E_IO;
}

static etl_status put(etl_writer *w, const void *p, size_t n)
{
    if (w->err) return w->err;
    errno = 0;
    if (fwrite(p, 1, n, w->f) != n) w->err = io_failed(w);
    w->bytes += n;
    return w->err;
}

/* A kernel-style header (SYSTEM, COMPACT or PERFINFO) plus its ext items. */
static size_t header_len(const etl_write_event *ev)
{
    size_t fixed = ev->header == ETL_WH_SYSTEM ? 0x20 : ev->header == ETL_WH_COMPACT ? 0x18 : 0x10;
    return fixed + (ev->has_pebs ? 8 : 0) + 8u * ev->pmc_count;
}

static void encode_event(const etl_writer *w, const etl_write_event *ev, uint8_t *p, size_t size)
{
    bool b64 = w->o.pointer_size == 8;
    uint8_t htype = ev->header == ETL_WH_SYSTEM    ? (b64 ? ETL_HTYPE_SYSTEM64 : ETL_HTYPE_SYSTEM32)
                    : ev->header == ETL_WH_COMPACT ? (b64 ? ETL_HTYPE_COMPACT64 : ETL_HTYPE_COMPACT32)
                                                   : (b64 ? ETL_HTYPE_PERFINFO64 : ETL_HTYPE_PERFINFO32);
    uint32_t version = ev->version | (uint32_t)ev->pmc_count << ETL_TRACE_HEADER_PMC_COUNTERS_SHIFT |
                       (ev->has_pebs ? ETL_TRACE_HEADER_PEBS_INDEX_FLAG : 0);
    etl_wr_u32(p, 0xC0000000u | (uint32_t)htype << 16 | version);
    etl_wr_u16(p + 4, (uint16_t)size);
    etl_wr_u16(p + 6, ev->hook);
    size_t o;
    if (ev->header == ETL_WH_PERFINFO) {
        etl_wr_u64(p + 8, ev->ts);
        o = 0x10;
    } else {
        etl_wr_u32(p + 8, ev->tid);
        etl_wr_u32(p + 12, ev->pid);
        etl_wr_u64(p + 16, ev->ts);
        o = 0x18;
        if (ev->header == ETL_WH_SYSTEM) {
            etl_wr_u32(p + 0x18, ev->kernel_time);
            etl_wr_u32(p + 0x1C, ev->user_time);
            o = 0x20;
        }
    }
    if (ev->has_pebs) {
        etl_wr_u64(p + o, ev->pebs_index);
        o += 8;
    }
    for (unsigned i = 0; i < ev->pmc_count; i++, o += 8) etl_wr_u64(p + o, ev->pmc[i]);
    if (ev->len) memcpy(p + o, ev->payload, ev->len);
}

static void buffer_header(uint8_t *p, uint32_t disk_size, uint32_t used, uint16_t cpu, uint16_t type,
                          uint16_t flags, uint64_t ts, uint64_t seq, uint32_t state)
{
    etl_buffer_header h = {0};
    h.buffer_size = disk_size;
    h.saved_offset = used;
    h.current_offset = used;
    h.timestamp = ts;
    h.sequence_number = seq;
    h.processor_index = cpu;
    h.logger_id = 0; /* NT Kernel Logger */
    h.state = state;
    h.offset = used;
    h.buffer_flag = (uint16_t)(flags | ETL_BUFFER_FLAG_PROC_INDEX);
    h.buffer_type = type;
    etl_buffer_header_encode(&h, p);
}


/*
 * Writes cpu's buffer, if it holds events; with empty, also when it holds none (a loss after the CPU's last
 * event: etl_writer_buffer_lost).
 */
static etl_status write_cpu(etl_writer *w, uint16_t cpu, bool empty)
{
    cpu_buf *b = &w->cpus[cpu];
    if (!b->p || (b->used <= ETL_BUFFER_HEADER_SIZE && !empty)) return w->err;
    uint32_t size = w->o.buffer_size;
    if (w->nholes && !w->err) { /* renumbered at close: where its number lies */
        if (w->nwb == w->wb_cap) {
            size_t cap = w->wb_cap ? w->wb_cap * 2 : 256;
            written_buf *g = realloc(w->wb, cap * sizeof *g);
            if (!g) return w->err = ETL_E_NOMEM;
            w->wb = g, w->wb_cap = cap;
        }
        w->wb[w->nwb++] = (written_buf){w->bytes, b->epoch};
    }
    if (w->o.compress) {
        size_t zn = 0;
        etl_status st = etl_xpress_compress(b->p + ETL_BUFFER_HEADER_SIZE, b->used - ETL_BUFFER_HEADER_SIZE,
                                            w->zbuf + ETL_BUFFER_HEADER_SIZE, w->zcap - ETL_BUFFER_HEADER_SIZE, &zn);
        if (st != ETL_OK) return w->err = st;
        buffer_header(w->zbuf, (uint32_t)(ETL_BUFFER_HEADER_SIZE + zn), b->used, cpu, ETL_BUFFER_TYPE_GENERIC,
                      (uint16_t)(ETL_BUFFER_FLAG_COMPRESSED | b->lost), b->last_ts, w->seq++, BUFFER_STATE_FLUSH);
        put(w, w->zbuf, ETL_BUFFER_HEADER_SIZE + zn);
    } else {
        buffer_header(b->p, size, b->used, cpu, ETL_BUFFER_TYPE_GENERIC, b->lost, b->last_ts, w->seq++, BUFFER_STATE_FLUSH);
        memset(b->p + b->used, 0xFF, size - b->used);
        put(w, b->p, size);
    }
    w->buffers++;
    b->used = ETL_BUFFER_HEADER_SIZE;
    b->lost = 0;
    return w->err;
}

static etl_status flush_cpu(etl_writer *w, uint16_t cpu) { return write_cpu(w, cpu, false); }

/*
 * The CPU's buffer, allocated on its first event: a header may claim many more CPUs than log. Every CPU's
 * together fit ETL_WRITER_MEMORY (writer_open refuses more): each buffer is written when full, never early (but
 * where a loss lies: lost_before). (The fullest was once written early past that memory: with more CPUs than it
 * holds, nearly a buffer a record.)
 */
static cpu_buf *cpu_buffer(etl_writer *w, uint16_t cpu)
{
    cpu_buf *b = &w->cpus[cpu];
    if (!b->p && !(b->p = malloc(w->o.buffer_size))) w->err = ETL_E_NOMEM;
    return b->p ? b : NULL;
}

/*
 * cpu's next event, at ts, in b (allocated): the losses before it (etl_writer_buffer_lost) start a buffer of their
 * own, written early, so that its flag says where they lie (before its first event) and each loss flags one buffer:
 * one whose event is the same as the next one's gets an empty buffer before it (as the input had no event between).
 */
static etl_status lost_before(etl_writer *w, uint16_t cpu, cpu_buf *b, uint64_t ts)
{
    if (b->lq_head == b->lq_n || b->lq[b->lq_head].ts > ts) return ETL_OK;
    if (flush_cpu(w, cpu) != ETL_OK) return w->err;
    for (;;) {
        b->lost = b->lq[b->lq_head++].flags;
        if (b->lq_head == b->lq_n || b->lq[b->lq_head].ts > ts) break;
        b->last_ts = ts; /* its flush time: the event's, which is in the CPU's order (time_ok) */
        if (write_cpu(w, cpu, true) != ETL_OK) return w->err;
    }
    b->lq_head = b->lq_n = 0;
    return ETL_OK;
}

/*
 * At close, the losses no event reached (the CPU wrote nothing at or after their time): each on an empty buffer
 * of the CPU after its last, at the loss's time or the CPU's last event's, at most the file's newest event (the
 * session's end stays).
 */
static etl_status lost_close(etl_writer *w)
{
    for (uint32_t c = 0; c < w->o.ncpu && !w->err; c++) {
        cpu_buf *b = &w->cpus[c];
        if (b->lq_head == b->lq_n) continue;
        if (flush_cpu(w, (uint16_t)c) != ETL_OK || !cpu_buffer(w, (uint16_t)c)) break;
        while (b->lq_head < b->lq_n && !w->err) {
            const lost_at *l = &b->lq[b->lq_head++];
            if (etl_writer_epoch(w, (uint16_t)c, l->epoch) != ETL_OK) break; /* numbered after the holes before it */
            uint64_t ts = l->ts < w->newest ? l->ts : w->newest;
            if (ts > b->last_ts) b->last_ts = ts;
            b->lost = l->flags;
            write_cpu(w, (uint16_t)c, true);
        }
    }
    return w->err;
}

/* Buffer 0: the logfile header event and the header extension. */
static etl_status write_header_buffer(etl_writer *w, bool final)
{
    uint8_t *p = calloc(1, w->o.buffer_size);
    if (!p) return ETL_E_NOMEM;
    size_t o = ETL_BUFFER_HEADER_SIZE, n = 0;
    etl_status st = etl_logfile_header_encode(&w->hdr, w->o.pointer_size, p + o, w->o.buffer_size - o, &n);
    if (st == ETL_OK) {
        o += (n + 7) & ~(size_t)7;
        uint8_t ext[ETL_GROUPMASK_SIZE];
        size_t en = 0;
        etl_groupmask gm = w->o.group_mask;
        st = etl_groupmask_encode(&gm, ext, sizeof ext, &en);
        etl_write_event ev = {0};
        ev.header = ETL_WH_SYSTEM;
        ev.version = 2;
        ev.hook = ETL_HOOK_HEADER_EXTENSION;
        ev.tid = w->o.header_tid;
        ev.pid = w->o.header_pid;
        ev.ts = w->o.start_ts;
        ev.payload = ext;
        ev.len = en;
        size_t size = header_len(&ev) + en;
        if (st == ETL_OK && o + size <= w->o.buffer_size) {
            encode_event(w, &ev, p + o, size);
            o += (size + 7) & ~(size_t)7;
        } else if (st == ETL_OK) {
            st = ETL_E_RANGE;
        }
    }
    if (st == ETL_OK) {
        memset(p + o, 0xFF, w->o.buffer_size - o);
        buffer_header(p, w->o.buffer_size, (uint32_t)o, 0, ETL_BUFFER_TYPE_HEADER, ETL_BUFFER_FLAG_FLUSH_MARKER,
                      w->o.start_ts, 0, w->o.compress ? COMPRESSION_FORMAT_XPRESS : BUFFER_STATE_FLUSH);
        if (final) {
            errno = 0;
            if (fflush(w->f) != 0 || fseeko(w->f, 0, SEEK_SET) != 0) st = io_failed(w);
            if (st == ETL_OK && fwrite(p, 1, w->o.buffer_size, w->f) != w->o.buffer_size) st = io_failed(w);
        } else {
            st = put(w, p, w->o.buffer_size);
            w->buffers++;
        }
    }
    free(p);
    return st;
}

/* f: an open stream to write (taken over), or NULL to create path. */
static etl_status writer_open(const char *path, FILE *f, bool sync, const etl_writer_options *opts, etl_writer **out,
                              etl_diag *diag)
{
    if (!out) {
        if (f) fclose(f);
        return ETL_E_INVALID_ARG;
    }
    *out = NULL;
    if (!path) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "the output's path is NULL");
        if (f) fclose(f);
        return ETL_E_INVALID_ARG;
    }
    etl_writer *w = calloc(1, sizeof *w);
    if (!w) {
        if (f) fclose(f);
        return ETL_E_NOMEM;
    }
    w->sync = sync;
    w->name = strdup(path);
    etl_opts_take(&w->o, sizeof w->o, opts);
    /* What the header cannot say is refused, never taken as something else (a pointer size of 16 as 8). */
    const char *bad = w->o.pointer_size && w->o.pointer_size != 4 && w->o.pointer_size != 8 ? "pointer size must be 4 or 8"
                      : w->o.clock_type > ETL_CLOCK_CPU_CYCLES ? "clock type must be QPC, system time or CPU cycles"
                      : w->o.logger_name && strlen(w->o.logger_name) >= sizeof w->hdr.logger_name
                          ? "logger name longer than the header holds (511 bytes)"
                      : w->o.log_file_name && strlen(w->o.log_file_name) >= sizeof w->hdr.log_file_name
                          ? "log file name longer than the header holds (1023 bytes)"
                          : NULL;
    set_defaults(&w->o, path);
    if (!bad && strlen(w->o.log_file_name) >= sizeof w->hdr.log_file_name)
        bad = "log file name (the path) longer than the header holds (1023 bytes)";
    if (!bad && (w->o.buffer_size < 4096 || w->o.buffer_size > (16u << 20) || w->o.buffer_size % 8 || w->o.ncpu > 2048))
        bad = "buffer size must be a multiple of 8 from 4096 to 16 MiB, and at most 2048 CPUs";
    char room[192];
    if (!bad && (uint64_t)w->o.ncpu * w->o.buffer_size > ETL_WRITER_MEMORY) {
        snprintf(room, sizeof room, "%u CPUs' buffers of %u bytes would pass the writer's %u MiB (each CPU's is held "
                 "until full): a buffer size of at most %u", w->o.ncpu, w->o.buffer_size, ETL_WRITER_MEMORY >> 20,
                 etl_writer_buffer_max(w->o.ncpu));
        bad = room;
    }
    if (!bad && w->o.start_ts > INT64_MAX) bad = "start time past the clock's range (top bit set)";
    if (bad) {
        etl_diag_set(diag, ETL_E_INVALID_ARG, UINT64_MAX, "%s", bad);
        if (f) fclose(f);
        free(w->name);
        free(w);
        return ETL_E_INVALID_ARG;
    }
    etl_logfile_header *h = &w->hdr;
    h->buffer_size = w->o.buffer_size;
    h->os_major = w->o.os_major;
    h->os_minor = w->o.os_minor;
    h->sub_version = w->o.compress ? 2 : 1; /* ETL layout 1.5; 2.0 with compression (ntwmi.h) */
    h->sub_minor_version = w->o.compress ? 0 : 5;
    h->provider_version = w->o.os_build;
    h->num_processors = w->o.ncpu;
    h->timer_resolution = w->o.timer_resolution;
    h->log_file_mode = w->o.log_file_mode;
    h->pointer_size = w->o.pointer_size;
    h->cpu_speed_mhz = w->o.cpu_mhz;
    h->perf_freq = w->o.perf_freq;
    h->start_time = w->o.start_time;
    h->boot_time = w->o.boot_time ? w->o.boot_time : w->o.start_time - ticks_to_filetime(&w->o, w->o.start_ts);
    h->clock_type = w->o.clock_type;
    h->end_time = w->o.start_time;
    h->header_tid = w->o.header_tid;
    h->header_pid = w->o.header_pid;
    h->header_ts = w->o.start_ts;
    snprintf(h->logger_name, sizeof h->logger_name, "%s", w->o.logger_name);
    snprintf(h->log_file_name, sizeof h->log_file_name, "%s", w->o.log_file_name);
    snprintf(h->tz_standard_name, sizeof h->tz_standard_name, "Coordinated Universal Time");
    w->o.logger_name = w->o.log_file_name = NULL; /* copied: the caller's strings may go */
    etl_clock clk;
    etl_clock_init(&clk, h);
    w->ticks_per_sec = clk.ticks_per_sec;
    uint64_t slack = secs(w, WINDOW_MIN_SLACK_S);
    w->ts_lo = w->o.start_ts > slack ? w->o.start_ts - slack : 0;
    w->newest = w->o.start_ts;

    w->cpus = calloc(w->o.ncpu, sizeof *w->cpus);
    w->zcap = ETL_BUFFER_HEADER_SIZE + etl_xpress_compress_bound(w->o.buffer_size);
    w->zbuf = w->o.compress ? malloc(w->zcap) : NULL;
    bool ok = w->cpus && (!w->o.compress || w->zbuf) && w->name;
    for (uint32_t c = 0; ok && c < w->o.ncpu; c++) w->cpus[c].used = ETL_BUFFER_HEADER_SIZE; /* allocated on first use */
    w->seq = 1;
    w->f = f ? f : ok ? etl_fopen(path, "wb") : NULL;
    if (!ok || !w->f) {
        if (f) fclose(f);
        etl_status st = ok ? ETL_E_IO : ETL_E_NOMEM;
        etl_diag_set(diag, st, UINT64_MAX, "%s: %s", path, ok ? strerror(errno) : "out of memory");
        for (uint32_t c = 0; w->cpus && c < w->o.ncpu; c++) free(w->cpus[c].p);
        free(w->cpus);
        free(w->zbuf);
        free(w->name);
        free(w);
        return st;
    }
    etl_status st = write_header_buffer(w, false);
    if (st != ETL_OK) {
        etl_diag_set(diag, st, 0, "%s: cannot write the header buffer: %s", path,
                     w->sys_err ? strerror(w->sys_err) : etl_status_str(st));
        etl_writer_close(w, w->o.start_ts, NULL);
        return st;
    }
    *out = w;
    return ETL_OK;
}

etl_status etl_writer_open(const char *path, const etl_writer_options *opts, etl_writer **out, etl_diag *diag)
{
    return writer_open(path, NULL, false, opts, out, diag);
}

etl_status etl_writer_open_stream(FILE *f, const char *name, bool sync, const etl_writer_options *opts,
                                  etl_writer **out, etl_diag *diag)
{
    return writer_open(name, f, sync, opts, out, diag);
}

/* A refused write: its status, and why, kept for etl_writer_why (and etl_writer_diag until the next call). */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static etl_status refuse(etl_writer *w, etl_status st, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    w->why.status = st;
    w->why.file_offset = UINT64_MAX;
    vsnprintf(w->why.msg, sizeof w->why.msg, fmt, ap);
    va_end(ap);
    w->why_last = true;
    return st;
}

/*
 * A write that failed without a refusal (the file's error, memory): kept as one, so that etl_writer_why never
 * tells an earlier refusal's text for it. The system's reason when a write of the file failed.
 */
static etl_status write_failed(etl_writer *w, etl_status st)
{
    if (st == ETL_OK || w->why_last) return st;
    if (st == ETL_E_IO && w->sys_err) return refuse(w, st, "writing the file: %s", strerror(w->sys_err));
    return refuse(w, st, "%s", etl_status_str(st));
}

/*
 * Whether a kernel record of a fixed-layout event (rec, size bytes; payload of len bytes past its
 * head) reads back as the event: the reader's own rule (etl_record_frame's ETL_REC_BAD_SIZE) on the
 * record as the file holds it, padded with zeros, a record or the buffer's end after it (what follows
 * the writer's records always frames). Only a payload past its layout is looked at; what the rule
 * takes as damage is refused, the hook, size and limit said.
 */
static etl_status layout_check(etl_writer *w, const uint8_t *rec, size_t size, size_t len, unsigned ptr)
{
    uint16_t hook = etl_rd_u16(rec + 6);
    unsigned version = rec[0];
    size_t layout = etl_kernel_layout_size(hook, version, ptr);
    if (!layout || len <= layout) return ETL_OK;
    if (!w->scratch && !(w->scratch = malloc(0x10000 + 8))) return ETL_E_NOMEM;
    size_t aligned = (size + 7) & ~(size_t)7;
    if (rec != w->scratch) memcpy(w->scratch, rec, size);
    memset(w->scratch + size, 0, aligned - size);
    etl_record r;
    size_t next = 0;
    if (etl_record_frame((etl_span){w->scratch, aligned}, 0, &r, &next) == ETL_OK && r.size == size &&
        !(r.has & ETL_REC_BAD_SIZE))
        return ETL_OK;
    if (len > 2 * layout)
        return refuse(w, ETL_E_INVALID_ARG, "hook 0x%04X version %u: a payload of %zu bytes, more than twice its "
                      "layout's %zu (at most %zu): a reader passes it over as damage", hook, version, len, layout,
                      2 * layout);
    return refuse(w, ETL_E_INVALID_ARG, "hook 0x%04X version %u: a payload of %zu bytes past its layout's %zu whose "
                  "bytes past the layout read as records (at most %zu when they do): a reader cuts it at its layout",
                  hook, version, len, layout, layout);
}

static etl_status write_event(etl_writer *w, const etl_write_event *ev)
{
    if (!ev) return refuse(w, ETL_E_INVALID_ARG, "a NULL event");
    if (w->err) return w->err;
    if (ev->cpu >= w->o.ncpu || ev->pmc_count > 7 || ev->header > ETL_WH_PERFINFO || (ev->len && !ev->payload) ||
        (ev->pmc_count && !ev->pmc))
        return refuse(w, ETL_E_INVALID_ARG, "CPU %u of %u, header type %u, %u PMC counters, payload or counters "
                      "NULL with a length: out of range", ev->cpu, w->o.ncpu, ev->header, ev->pmc_count);
    /* The length alone first: header_len + len must not wrap (a len near SIZE_MAX passed the checks and copied). */
    if (ev->len > 0xFFFF) return refuse(w, ETL_E_RANGE, "a payload of %zu bytes: more than a record holds", ev->len);
    size_t size = header_len(ev) + ev->len;
    size_t aligned = (size + 7) & ~(size_t)7;
    if (size > 0xFFFF || aligned > w->o.buffer_size - ETL_BUFFER_HEADER_SIZE)
        return refuse(w, ETL_E_RANGE, "a record of %zu bytes: more than a record or a buffer of %u holds", size,
                      w->o.buffer_size);
    if (!time_ok(w, &w->cpus[ev->cpu], ev->ts))
        return refuse(w, ETL_E_INVALID_ARG, "time %llu on CPU %u: before its last, before the session's window "
                      "or past the clock's range", (unsigned long long)ev->ts, ev->cpu);
    /* A fixed-layout event past its layout: encoded aside first, so that a refusal leaves no trace. */
    size_t lay = etl_kernel_layout_size(ev->hook, ev->version, w->o.pointer_size);
    if (lay && ev->len > lay) {
        if (!w->scratch && !(w->scratch = malloc(0x10000 + 8))) return ETL_E_NOMEM;
        encode_event(w, ev, w->scratch, size);
        etl_status st = layout_check(w, w->scratch, size, ev->len, w->o.pointer_size);
        if (st != ETL_OK) return st;
    }
    cpu_buf *b = cpu_buffer(w, ev->cpu);
    if (!b || lost_before(w, ev->cpu, b, ev->ts) != ETL_OK) return w->err;
    if (b->used + aligned > w->o.buffer_size && flush_cpu(w, ev->cpu) != ETL_OK) return w->err;
    uint8_t *p = b->p + b->used;
    encode_event(w, ev, p, size);
    memset(p + size, 0, aligned - size); /* padding: deterministic bytes */
    b->used += (uint32_t)aligned;
    b->last_ts = ev->ts; /* in time order (time_ok): the newest */
    if (ev->ts > w->newest) w->newest = ev->ts;
    w->events++;
    return ETL_OK;
}

etl_status etl_writer_write(etl_writer *w, const etl_write_event *ev)
{
    if (!w) return ETL_E_INVALID_ARG;
    w->why_last = false;
    return write_failed(w, write_event(w, ev));
}

static etl_status write_record(etl_writer *w, uint16_t cpu, uint64_t ts, const uint8_t *rec, size_t size)
{
    if (!rec && size) return refuse(w, ETL_E_INVALID_ARG, "a NULL record of %zu bytes", size);
    if (w->err) return w->err;
    if (cpu >= w->o.ncpu) return refuse(w, ETL_E_INVALID_ARG, "CPU %u of %u: out of range", cpu, w->o.ncpu);
    size_t aligned = (size + 7) & ~(size_t)7;
    if (size > 0xFFFF || aligned > w->o.buffer_size - ETL_BUFFER_HEADER_SIZE)
        return refuse(w, ETL_E_RANGE, "a record of %zu bytes: more than a record or a buffer of %u holds", size,
                      w->o.buffer_size);
    /* One whole record as the reader frames it (its Size is size), and its own time, if it has one, is ts. */
    etl_record r;
    size_t next = 0;
    if (etl_record_frame((etl_span){rec, size}, 0, &r, &next) != ETL_OK)
        return refuse(w, ETL_E_INVALID_ARG, "%zu bytes that are not one record", size);
    bool kernel = r.htype == ETL_HTYPE_SYSTEM32 || r.htype == ETL_HTYPE_SYSTEM64 || r.htype == ETL_HTYPE_COMPACT32 ||
                  r.htype == ETL_HTYPE_COMPACT64 || r.htype == ETL_HTYPE_PERFINFO32 || r.htype == ETL_HTYPE_PERFINFO64;
    size_t head = (size_t)(r.payload.p - rec);
    if (kernel && etl_rd_u16(rec + 4) == size && size >= head) { /* the reader's layout rule, as the file holds it */
        etl_status st = layout_check(w, rec, size, size - head, r.pointer_size);
        if (st != ETL_OK) return st;
    }
    if (r.size != size || (r.has & ETL_REC_BAD_SIZE))
        return refuse(w, ETL_E_INVALID_ARG, "a record whose Size (%u) is not the %zu bytes written, or one its "
                      "layout contradicts", etl_rd_u16(rec + (kernel ? 4 : 0)), size);
    if ((r.has & ETL_REC_TS) && r.ts != ts)
        return refuse(w, ETL_E_INVALID_ARG, "a record of time %llu written at %llu", (unsigned long long)r.ts,
                      (unsigned long long)ts);
    if (!time_ok(w, &w->cpus[cpu], ts))
        return refuse(w, ETL_E_INVALID_ARG, "time %llu on CPU %u: before its last, before the session's window "
                      "or past the clock's range", (unsigned long long)ts, cpu);
    cpu_buf *b = cpu_buffer(w, cpu);
    if (!b || lost_before(w, cpu, b, ts) != ETL_OK) return w->err;
    if (b->used + aligned > w->o.buffer_size && flush_cpu(w, cpu) != ETL_OK) return w->err;
    memcpy(b->p + b->used, rec, size);
    memset(b->p + b->used + size, 0, aligned - size);
    b->used += (uint32_t)aligned;
    b->last_ts = ts;
    if (ts > w->newest) w->newest = ts;
    w->events++;
    return ETL_OK;
}

etl_status etl_writer_write_record(etl_writer *w, uint16_t cpu, uint64_t ts, const uint8_t *rec, size_t size)
{
    if (!w) return ETL_E_INVALID_ARG;
    w->why_last = false;
    return write_failed(w, write_record(w, cpu, ts, rec, size));
}

etl_status etl_writer_why(const etl_writer *w, etl_diag *diag)
{
    if (!w) return ETL_E_INVALID_ARG;
    if (diag) *diag = w->why;
    return w->why.status;
}

etl_status etl_writer_flush(etl_writer *w)
{
    if (!w) return ETL_E_INVALID_ARG;
    w->why_last = false; /* its failure is its own, never a refusal's */
    for (uint32_t c = 0; c < w->o.ncpu; c++)
        if (flush_cpu(w, (uint16_t)c) != ETL_OK) break;
    return w->err;
}

void etl_writer_end_time_min(etl_writer *w, uint64_t end_time) { w->end_time_min = end_time; }

etl_status etl_writer_holes(etl_writer *w, const uint64_t *sizes, uint32_t nholes, uint64_t tail)
{
    if (w->buffers > 1 || w->nholes) return ETL_E_INVALID_ARG; /* before any buffer is numbered, once */
    w->tail = tail;
    if (!nholes) return ETL_OK;
    if (!(w->hole = malloc(nholes * sizeof *w->hole))) return ETL_E_NOMEM;
    for (uint32_t k = 0; k < nholes; k++) {
        w->hole[k] = sizes[k];
        w->hole_total = sizes[k] > UINT64_MAX - w->hole_total ? UINT64_MAX : w->hole_total + sizes[k];
    }
    w->nholes = nholes;
    return ETL_OK;
}

etl_status etl_writer_epoch(etl_writer *w, uint16_t cpu, uint32_t epoch)
{
    if (cpu >= w->o.ncpu) return ETL_E_INVALID_ARG;
    w->why_last = false;
    if (epoch > w->nholes) epoch = w->nholes;
    cpu_buf *b = &w->cpus[cpu];
    if (epoch <= b->epoch) return w->err;
    /* Its records of the earlier epoch are all written: their buffer goes now, numbered before the hole. */
    etl_status st = flush_cpu(w, cpu);
    b->epoch = epoch;
    return st;
}

/*
 * The numbers of the buffers written with holes: those of each epoch in the order they were
 * flushed, after every buffer of an earlier epoch and the hole that follows it (numbers 1..;
 * buffer 0 is the header's). Each number that changes is written over the one flush_cpu wrote.
 */
static etl_status renumber(etl_writer *w)
{
    uint64_t *next = calloc((size_t)w->nholes + 1, sizeof *next);
    if (!next) return w->err = ETL_E_NOMEM;
    for (size_t i = 0; i < w->nwb; i++) next[w->wb[i].epoch]++;
    uint64_t seq = 1;
    for (uint32_t e = 0; e <= w->nholes; e++) {
        uint64_t n = next[e];
        next[e] = seq;
        seq += n + (e < w->nholes ? w->hole[e] : 0);
    }
    errno = 0;
    for (size_t i = 0; i < w->nwb && !w->err; i++) {
        uint64_t s = next[w->wb[i].epoch]++;
        if (s == i + 1) continue; /* as flush_cpu numbered it */
        uint8_t le[8];
        etl_wr_u64(le, s);
        if (fseeko(w->f, (off_t)(w->wb[i].off + 0x18), SEEK_SET) != 0 || fwrite(le, 1, 8, w->f) != 8)
            w->err = io_failed(w);
    }
    free(next);
    return w->err;
}

void etl_writer_lost(etl_writer *w, uint64_t events, uint64_t buffers)
{
    w->hdr.events_lost = events > UINT32_MAX ? UINT32_MAX : (uint32_t)events;
    w->hdr.buffers_lost = buffers > UINT32_MAX ? UINT32_MAX : (uint32_t)buffers;
}

etl_status etl_writer_buffer_lost(etl_writer *w, uint16_t cpu, unsigned flags, uint64_t ts, uint32_t epoch)
{
    flags &= ETL_BUFFER_FLAG_EVENTS_LOST | ETL_BUFFER_FLAG_BUFFER_LOST;
    if (cpu >= w->o.ncpu) return ETL_E_INVALID_ARG;
    if (!flags) return ETL_OK;
    cpu_buf *b = &w->cpus[cpu];
    if (b->lq_n == b->lq_cap) {
        size_t cap = b->lq_cap ? b->lq_cap * 2 : 4;
        lost_at *q = realloc(b->lq, cap * sizeof *q);
        if (!q) return ETL_E_NOMEM;
        b->lq = q, b->lq_cap = cap;
    }
    /* In time order: one given out of order waits for the later one before it (never on an earlier buffer). */
    if (b->lq_n > b->lq_head && ts < b->lq[b->lq_n - 1].ts) ts = b->lq[b->lq_n - 1].ts;
    b->lq[b->lq_n++] = (lost_at){ts, epoch, (uint16_t)flags};
    return ETL_OK;
}

void etl_writer_group_mask(etl_writer *w, const etl_groupmask *gm) { w->o.group_mask = *gm; }

uint32_t etl_writer_buffer_max(uint32_t ncpu)
{
    uint64_t m = ETL_WRITER_MEMORY / (ncpu ? ncpu : 1);
    return m > (16u << 20) ? 16u << 20 : (uint32_t)m & ~7u;
}

uint64_t etl_writer_bytes(const etl_writer *w) { return w->bytes; }
uint64_t etl_writer_buffers(const etl_writer *w) { return w->buffers; }
uint64_t etl_writer_events(const etl_writer *w) { return w->events; }

void etl_writer_diag(const etl_writer *w, etl_status st, etl_diag *diag)
{
    /* The system's reason when a write failed (a full disk, a file size limit), as every output names it. */
    if (st == ETL_E_IO && w->sys_err) etl_diag_set(diag, st, UINT64_MAX, "%s: %s", w->name, strerror(w->sys_err));
    else if (st != ETL_E_IO && w->why_last && st == w->why.status) /* that write's own reason, never an older one */
        etl_diag_set(diag, st, UINT64_MAX, "%s: %s", w->name, w->why.msg);
    else etl_diag_set(diag, st, UINT64_MAX, "%s: cannot complete the trace: %s", w->name, etl_status_str(st));
}

etl_status etl_writer_close(etl_writer *w, uint64_t end_ts, etl_diag *diag)
{
    if (!w) return ETL_OK; /* base.h: a cleanup path may close what it never made */
    etl_status st = lost_close(w);
    if (st == ETL_OK) st = etl_writer_flush(w);
    /*
     * An end before the start, or so far before an event written that the reader's window (the end plus 5 s or
     * 1 % of the session) would leave it out: refused, and the file completed with its newest event as the end,
     * so that it reads back whole.
     */
    bool bad_end = false;
    if (st == ETL_OK && w->newest > end_ts) {
        uint64_t len = end_ts > w->o.start_ts ? end_ts - w->o.start_ts : 0;
        /* The reader's tolerance: on the CPU-cycle clock (a nominal rate) the session's length, 60 s at least. */
        bool cycles = w->o.clock_type == ETL_CLOCK_CPU_CYCLES;
        uint64_t tol = secs(w, cycles ? WINDOW_MIN_SLACK_S : WINDOW_END_SLACK_S);
        if ((cycles ? len : len / 100) > tol) tol = cycles ? len : len / 100;
        if (end_ts < w->o.start_ts || w->newest - end_ts > tol) {
            bad_end = true;
            end_ts = w->newest;
        }
    }
    if (st == ETL_OK) {
        etl_clock clk;
        etl_clock_init(&clk, &w->hdr);
        /* An end no FILETIME holds (a slow clock, a time far out: the sum saturates) is left out, as for a session
         * not closed cleanly: readers end it at the last buffer flush, which covers every event written. */
        int64_t ft = etl_clock_filetime(&clk, end_ts);
        w->hdr.end_time = ft == INT64_MAX || ft < 0 ? 0 : (uint64_t)ft;
        if (w->hdr.end_time && w->end_time_min > w->hdr.end_time) w->hdr.end_time = w->end_time_min;
        /* Holes renumbered; BuffersWritten counts the numbers missing too (a tail: a file cut short). */
        if (w->nholes) st = renumber(w);
        uint64_t written = w->buffers + w->hole_total;
        written = written < w->buffers || w->tail > UINT64_MAX - written ? UINT64_MAX : written + w->tail;
        w->hdr.buffers_written = written > UINT32_MAX ? UINT32_MAX : (uint32_t)written;
        if (st == ETL_OK) st = write_header_buffer(w, true);
    }
    /* A file about to replace another must be on disk before the rename makes it the only copy. */
    errno = 0;
    if (st == ETL_OK && w->sync && (fflush(w->f) != 0 || etl_fsync(fileno(w->f)) != 0)) st = io_failed(w);
    errno = 0;
    if (fclose(w->f) != 0 && st == ETL_OK) st = io_failed(w);
    if (st != ETL_OK) etl_writer_diag(w, st, diag);
    else if (bad_end) {
        st = ETL_E_INVALID_ARG;
        etl_diag_set(diag, st, UINT64_MAX, "%s: the end is before the start or long before an event written; "
                     "the file ends at its newest event", w->name);
    }
    for (uint32_t c = 0; c < w->o.ncpu; c++) {
        free(w->cpus[c].p);
        free(w->cpus[c].lq);
    }
    free(w->cpus);
    free(w->zbuf);
    free(w->hole);
    free(w->wb);
    free(w->scratch);
    free(w->name);
    free(w);
    return st;
}

/*
 * etlkit/writer.h - writes ETL files the way an NT Kernel Logger session flushes them.
 *
 * Buffer 0 (BufferType HEADER) holds the logfile header event (hook 0x0000) and
 * the header extension with the group masks (hook 0x0005). Events go to the
 * buffer of the CPU they are logged on; a CPU's buffer is written to the file
 * when the next event does not fit, with the next SequenceNumber, so the file
 * interleaves CPUs as a real one does. Records are 8-byte aligned and the rest
 * of each buffer is 0xFF. With compression, each buffer's event bytes are
 * Plain LZ77 (MS-XCA) and BufferSize is the on-disk size. Memory is one buffer
 * per CPU, whatever the size of the file.
 *
 * Events of one CPU must be written in time order (the reader's ordered
 * iterator relies on it, as it does on real files): a time before its CPU's
 * last, before start_ts less 60 s (the reader's window) or with the top bit
 * set is refused (ETL_E_INVALID_ARG), so that every file written reads whole.
 * For the same reason a fixed-layout kernel event (etl_kernel_layout_size: CSwitch,
 * a compact batch, SpinLock, ReadyThread, SampledProfile) whose payload the reader
 * takes as damage (etl_record_frame's ETL_REC_BAD_SIZE) is refused: a payload more
 * than twice its layout, or one whose bytes past the layout read as records. Up to
 * twice the layout (fields a newer Windows appended) is written. etl_writer_why says
 * what a write refused.
 */
#ifndef ETLKIT_WRITER_H
#define ETLKIT_WRITER_H

#include <stdio.h>
#include "etlkit/container.h"
#include "etlkit/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etl_writer etl_writer;

typedef struct etl_writer_options {
    size_t sz;                  /* sizeof(etl_writer_options) */
    unsigned pointer_size;      /* 4 or 8 (32-bit or 64-bit header types); default 8 */
    uint32_t clock_type;        /* ETL_CLOCK_QPC (default), _SYSTEM_TIME or _CPU_CYCLES */
    uint64_t perf_freq;         /* QPC ticks per second; default 10,000,000 */
    uint32_t cpu_mhz;           /* CpuSpeedInMHz; default 3000 (the cycle clock's rate) */
    uint32_t ncpu;              /* NumberOfProcessors; events may use CPUs 0..ncpu-1; default 1 */
    uint32_t buffer_size;       /* bytes per buffer; default 65536; at least 4096; ncpu of them at most 256 MiB */
    uint8_t os_major, os_minor; /* default 10.0 */
    uint32_t os_build;          /* ProviderVersion; default 19041 */
    uint64_t start_time;        /* FILETIME of start_ts; default 2026-01-01T00:00:00Z */
    uint64_t boot_time;         /* FILETIME; default start_time minus start_ts */
    uint64_t start_ts;          /* raw timestamp of the logfile header event (t0) */
    uint32_t timer_resolution;  /* 100 ns units; default 156250 */
    uint32_t log_file_mode;     /* default EVENT_TRACE_FILE_MODE_SEQUENTIAL | SYSTEM_LOGGER_MODE */
    bool compress;              /* Plain LZ77 buffers (adds EVENT_TRACE_COMPRESSED_MODE) */
    const char *logger_name;    /* default "NT Kernel Logger" */
    const char *log_file_name;  /* default the path */
    etl_groupmask group_mask;   /* the header extension's masks: what the session logs */
    uint32_t header_tid, header_pid; /* ids in the SYSTEM header of buffer 0's events */
} etl_writer_options;

/*
 * Creates path (truncating it). The output must be seekable: buffer 0 is completed at close.
 * ETL_E_INVALID_ARG for what the header cannot say: a pointer size but 4 or 8 (0: 8), a clock
 * type past ETL_CLOCK_CPU_CYCLES, a logger name of 512 bytes or more, a log file name (the path
 * by default) of 1024 or more, a buffer size or CPU count out of range, start_ts past INT64_MAX;
 * also for a NULL path or out.
 */
ETL_API etl_status etl_writer_open(const char *path, const etl_writer_options *opts, etl_writer **out,
                           etl_diag *diag);

/* Header types an event can be written with. */
typedef enum etl_writer_header {
    ETL_WH_SYSTEM = 0,   /* SYSTEM32/64: tid, pid, kernel/user time */
    ETL_WH_COMPACT = 1,  /* COMPACT32/64: tid, pid */
    ETL_WH_PERFINFO = 2  /* PERFINFO32/64: time only, PMC/PEBS items allowed */
} etl_writer_header;

/* One event. payload/len are the event data; the writer adds the header. */
typedef struct etl_write_event {
    uint16_t cpu;
    uint8_t header;            /* etl_writer_header */
    uint8_t version;           /* event version (low byte of the Version word) */
    uint16_t hook;
    uint32_t tid, pid;         /* SYSTEM/COMPACT */
    uint32_t kernel_time, user_time; /* SYSTEM */
    uint64_t ts;               /* raw session clock */
    uint8_t pmc_count;         /* 0..7 counters in pmc (any header type) */
    bool has_pebs;
    uint64_t pebs_index;
    const uint64_t *pmc;
    const void *payload;
    size_t len;
} etl_write_event;

/*
 * Appends an event. ETL_E_RANGE if it cannot fit a buffer or a u16 Size; ETL_E_INVALID_ARG for
 * a CPU, header type or PMC count out of range, a payload or pmc NULL with a length or count,
 * a time out of order or out of the session, or a fixed-layout event's payload its reader
 * takes as damage (see above); ETL_E_IO on write errors.
 */
ETL_API etl_status etl_writer_write(etl_writer *w, const etl_write_event *ev);

/*
 * Appends a record as it is, whatever its header type (size = its Size field,
 * at most 0xFFFF), to cpu's buffer; ts is its time, kept as the buffer's flush time.
 * ETL_E_INVALID_ARG unless rec is one whole record as a reader frames it (its Size
 * is size) whose own timestamp, when it has one, is ts, at a time the rule above takes,
 * and not one the reader frames with ETL_REC_BAD_SIZE (the layout rule above).
 */
ETL_API etl_status etl_writer_write_record(etl_writer *w, uint16_t cpu, uint64_t ts, const uint8_t *rec, size_t size);

/*
 * Why the last etl_writer_write or _write_record that failed was refused or failed: the status it returned,
 * and diag (may be NULL) filled with its own message naming what (the hook, its payload size and the limit,
 * for the layout rule; a NULL event; the system's reason for a write of the file that failed). ETL_OK and an
 * empty message when none failed yet; a write taken leaves the last failure as it is.
 * ETL_E_INVALID_ARG for a NULL w.
 */
ETL_API etl_status etl_writer_why(const etl_writer *w, etl_diag *diag);

/* Writes every CPU's partial buffer now (the kernel does so at a flush timer). ETL_E_INVALID_ARG for NULL. */
ETL_API etl_status etl_writer_flush(etl_writer *w);

/* Counters, for callers that size their output (bytes written so far, buffers, events). */
ETL_API uint64_t etl_writer_bytes(const etl_writer *w);
ETL_API uint64_t etl_writer_buffers(const etl_writer *w);
ETL_API uint64_t etl_writer_events(const etl_writer *w);

/*
 * Flushes the partial buffers, completes buffer 0 (EndTime = the FILETIME of
 * end_ts, BuffersWritten) and closes the file. Frees w whatever the result.
 * An end_ts before start_ts, or so far before an event written that a reader's
 * window would leave the event out (5 s or 1 % of the session after the end; on
 * the CPU-cycle clock the session's length, 60 s at least), is ETL_E_INVALID_ARG:
 * the file is completed all the same, ending at its newest event.
 */
ETL_API etl_status etl_writer_close(etl_writer *w, uint64_t end_ts, etl_diag *diag);

/* ---- rewriting a trace ------------------------------------------------------ */

#include "etlkit/ccswap.h"

typedef enum etl_cswitch_format {
    ETL_CSWITCH_KEEP = 0,    /* switches as they are */
    ETL_CSWITCH_FULL = 1,    /* compact batches become CSwitch events */
    ETL_CSWITCH_COMPACT = 2  /* CSwitch events become compact batches */
} etl_cswitch_format;

typedef struct etl_convert_options {
    size_t sz;            /* sizeof(etl_convert_options) */
    int cswitch;          /* etl_cswitch_format */
    int compress;         /* -1 as the input, 0 off, 1 Plain LZ77 */
    uint32_t buffer_size; /* 0: as the input */
    int bias;             /* StateWr bias (1..54); 0 or less: from the OS build */
    etl_diag_fn on_diag;  /* problems of the input */
    void *diag_ctx;
    /* Called now and then with input bytes consumed and the input size (may be NULL). */
    void (*on_progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
} etl_convert_options;

typedef struct etl_convert_stats {
    uint64_t records_in, records_out, records_dropped;
    uint64_t cswitch_in;          /* CSwitch events turned into compact records */
    uint64_t switches_encoded, switches_dropped;
    uint64_t batches_out;
    uint64_t batches_in;          /* batches expanded */
    uint64_t switches_expanded;   /* CSwitch events written from batches */
    uint64_t cswitch_out;
    uint64_t order_overflows;     /* times a CPU's held events outgrew the queue (order not kept) */
    uint64_t duplicates_dropped;  /* switches present in both forms: the form a CPU showed second is dropped */
    uint64_t input_damaged;       /* 1 if the input had damage (etl_stats_damaged) */
    etl_ccswap_encoder_stats encoder;
    etl_batch_expand_stats expander;
} etl_convert_stats;

/*
 * Rewrites in_path into out_path (see convert.c for what changes). CSwitch events
 * made from batches are version 2, with the fields a batch does not carry set to
 * all ones (NewThreadId 0xFFFFFFFF for the last switch of a CPU, NewThreadPriority
 * -1, PreviousCState/SpareByte/OldThreadWaitMode/OldThreadWaitIdealProcessor 0xFF,
 * OldThreadWaitReason 0xFF when the thread was not waiting, NewThreadWaitTime
 * 0xFFFFFFFF when the record's form has none, OldThreadRemainingQuantum INT32_MIN).
 * ETL_E_INVALID_ARG, before anything is read, for a NULL path or st, or an option out of
 * its range (cswitch, buffer_size, bias): diag names it.
 */
ETL_API etl_status etl_convert(const char *in_path, const char *out_path, const etl_convert_options *o,
                       etl_convert_stats *st, etl_diag *diag);

#ifdef __cplusplus
}
#endif
#endif

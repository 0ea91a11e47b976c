/*
 * etlkit/summary.h - a trace at a glance: what `etlkit info` prints and the report
 * page's facts, counted in one pass over the whole file.
 *
 * etl_summary_run() reads every buffer once (in file order, split between threads
 * when asked: each thread counts a range of buffers and the ranges are added in
 * file order, so the result is the same with any number of threads) and counts
 * the records by header type, by kernel hook, by provider GUID and by CPU, the
 * first and last record times, the kernel flags that were on (from the
 * header-extension events), and the scheduler and lifetime events the kernel
 * codecs decode, with compact CSwitch batches walked to count their switches.
 * The damage the pass met is in st, as an iterator counts it.
 *
 *     etl_summary s;
 *     etl_summary_options o = {.sz = sizeof o, .threads = 4};
 *     if (etl_summary_run(reader, &o, &s) == ETL_OK)
 *         printf("%llu records, %llu CSwitch\n", (unsigned long long)s.records,
 *                (unsigned long long)s.cswitch);
 *     etl_summary_free(&s);
 */
#ifndef ETLKIT_SUMMARY_H
#define ETLKIT_SUMMARY_H

#include "etlkit/container.h"
#include "etlkit/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Records are counted by CPU below this index; a buffer of a higher CPU counts in records alone. */
#define ETL_SUMMARY_MAX_CPUS 2048

typedef struct etl_summary_options {
    size_t sz;           /* sizeof(etl_summary_options) */
    unsigned threads;    /* threads that read (0 or 1: the caller's alone); fewer on a small file */
    /* Called now and then on the caller's thread with the bytes of the file read so far (all threads). */
    void (*progress)(void *ctx, uint64_t bytes);
    void *progress_ctx;
} etl_summary_options;

typedef struct etl_summary_provider {
    etl_guid guid;
    uint64_t count;      /* records of FULL, INSTANCE and other GUID-keyed headers */
} etl_summary_provider;

typedef struct etl_summary {
    uint64_t records;                          /* every record framed */
    uint64_t by_htype[256];                    /* by header type (etl_htype_name) */
    uint64_t *by_hook;                         /* 65536 counters by HookId (SYSTEM, COMPACT, PERFINFO) */
    etl_summary_provider *providers;           /* by provider GUID, most records first (ties by GUID) */
    size_t nproviders;
    uint64_t cpu_records[ETL_SUMMARY_MAX_CPUS]; /* by the buffers' CPU */
    bool have_ts;                              /* some record carried a time: */
    uint64_t first_ts, last_ts;                /* the smallest and largest (0 without) */
    /* Kernel flags: the union of every header extension's group masks. */
    etl_groupmask flags;
    uint64_t group_mask_events;
    uint32_t kernel_event_version;             /* the last header extension's, 0 without */
    /* Kernel events (the frequent ones counted from their payload size alone). */
    uint64_t cswitch, compact_batches, compact_switches, compact_bad;
    uint64_t ready_thread, spinlock, thread, process;
    uint64_t undecodable;                      /* kernel events whose payload a codec refused */
    etl_stats st;                              /* the pass's damage counters */
} etl_summary;

/*
 * Counts the whole file of r into *s. ETL_OK; ETL_E_NOMEM with s->by_hook NULL when
 * nothing could be counted, or with s filled but some counts short (a thread's
 * iterator or the provider table ran out of memory). Free s with etl_summary_free in
 * every case. Diagnostics go where r's go (etl_reader_options.on_diag).
 */
ETL_API etl_status etl_summary_run(etl_reader *r, const etl_summary_options *o, etl_summary *s);
ETL_API void etl_summary_free(etl_summary *s);

/* last_ts - first_ts in nanoseconds on clk, saturated (hostile times must not overflow). */
ETL_API int64_t etl_summary_duration_ns(const etl_summary *s, const etl_clock *clk);

#ifdef __cplusplus
}
#endif
#endif

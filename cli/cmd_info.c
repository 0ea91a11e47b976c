/* cmd_info.c - `etlkit info`: what a trace is, at a glance, or as one JSON object. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "opts.h"
#include "out.h"
#include "base/idmap.h"

typedef struct provider_count {
    etl_guid guid;
    uint64_t count;
    int used;
} provider_count;

typedef struct info_counts {
    uint64_t by_htype[256];
    uint64_t *by_hook;          /* 65536 counters */
    provider_count *prov;       /* open-addressing table keyed by GUID */
    size_t prov_cap, prov_n;
    uint64_t records, first_ts, last_ts;
    int have_ts;
    uint64_t cpu_records[2048];
    /* Kernel events */
    etl_groupmask flags;        /* union of every header extension's masks */
    uint32_t kernel_event_version;
    uint64_t group_mask_events;
    uint64_t cswitch, batches, compact_switches, compact_bad, spinlock, ready, thread, process, decode_errors;
} info_counts;

/* Counts what the kernel codecs see; compact batches are walked to count their switches. */
static void count_kernel(info_counts *c, const etl_record *rec)
{
    /*
     * The frequent events are counted from their size alone: their decoders can only fail
     * on a short payload, and decoding millions of them to count them costs a third of the run.
     */
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) return;
    size_t need = 0;
    uint64_t *counter = NULL;
    switch (hook) {
    case ETL_HOOK_CSWITCH: need = etl_cswitch_size(rec->version); counter = &c->cswitch; break;
    case ETL_HOOK_READY_THREAD: need = 8; counter = &c->ready; break;
    case ETL_HOOK_SPINLOCK: need = 2u * rec->pointer_size + 0x23; counter = &c->spinlock; break;
    default: break;
    }
    if (counter) {
        if (rec->payload.n >= need) ++*counter;
        else c->decode_errors++;
        return;
    }
    etl_event ev;
    etl_status st = etl_event_decode(rec, &ev);
    if (st == ETL_END) return;
    if (st != ETL_OK) {
        c->decode_errors++;
        return;
    }
    switch (ev.kind) {
    case ETL_EVENT_CSWITCH: c->cswitch++; break;
    case ETL_EVENT_SPINLOCK: c->spinlock++; break;
    case ETL_EVENT_READY_THREAD: c->ready++; break;
    case ETL_EVENT_THREAD: c->thread++; break;
    case ETL_EVENT_PROCESS: c->process++; break;
    case ETL_EVENT_CCSWAP_BATCH: {
        c->batches++;
        uint64_t n, bad;
        etl_ccswap_count(&ev.u.batch, &n, &bad);
        c->compact_switches += n;
        c->compact_bad += bad;
        break;
    }
    case ETL_EVENT_GROUP_MASK:
        c->group_mask_events++;
        for (int i = 0; i < 8; i++) c->flags.masks[i] |= ev.u.group_mask.masks[i];
        if (ev.u.group_mask.kernel_event_version) c->kernel_event_version = ev.u.group_mask.kernel_event_version;
        break;
    default: break;
    }
}

/* Every byte counts: WPP GUIDs of one component may differ only in Data4. */
static size_t guid_hash(const etl_guid *g) { return (size_t)etl_hash_bytes(g, sizeof *g); }

static int prov_add(info_counts *c, const etl_guid *g, uint64_t count)
{
    if ((c->prov_n + 1) * 2 > c->prov_cap) {
        size_t ncap = c->prov_cap ? c->prov_cap * 2 : 64;
        provider_count *n = calloc(ncap, sizeof *n);
        if (!n) return -1;
        for (size_t i = 0; i < c->prov_cap; i++) {
            if (!c->prov[i].used) continue;
            size_t j = guid_hash(&c->prov[i].guid) & (ncap - 1);
            while (n[j].used) j = (j + 1) & (ncap - 1);
            n[j] = c->prov[i];
        }
        free(c->prov);
        c->prov = n;
        c->prov_cap = ncap;
    }
    size_t j = guid_hash(g) & (c->prov_cap - 1);
    while (c->prov[j].used && memcmp(&c->prov[j].guid, g, sizeof *g) != 0) j = (j + 1) & (c->prov_cap - 1);
    if (!c->prov[j].used) {
        c->prov[j].used = 1;
        c->prov[j].guid = *g;
        c->prov_n++;
    }
    c->prov[j].count += count;
    return 0;
}

static int by_count_desc(const void *a, const void *b)
{
    const provider_count *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return memcmp(&x->guid, &y->guid, sizeof x->guid);
}

/* last - first in ns, saturated: hostile timestamps must not overflow. */
static int64_t duration_ns(const etl_clock *clk, const info_counts *c)
{
    __int128 d = (__int128)etl_clock_ns(clk, c->last_ts) - etl_clock_ns(clk, c->first_ts);
    return d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : (int64_t)d;
}

static void print_utc(FILE *f, const char *label, uint64_t ft)
{
    char buf[40];
    etl_filetime_format(ft, buf);
    fprintf(f, "%-22s %s\n", label, buf);
}

static void print_text(const char *path, etl_reader *r, info_counts *c, const etl_stats *st)
{
    const etl_logfile_header *h = etl_reader_header(r);
    const etl_clock *clk = etl_reader_clock(r);
    char modes[512];
    log_file_mode_names(h->log_file_mode, modes, sizeof modes);
    printf("%-22s ", "File:");
    text_str(stdout, path);
    printf(" (%llu bytes)\n", (unsigned long long)etl_reader_file_size(r));
    printf("%-22s ", "Logger name:");
    text_str(stdout, h->logger_name);
    printf("\n%-22s ", "Log file name:");
    text_str(stdout, h->log_file_name);
    putchar('\n');
    printf("%-22s %u.%u build %u (ETL format %u.%u)\n", "OS version:", h->os_major, h->os_minor,
           h->provider_version, h->sub_version, h->sub_minor_version);
    printf("%-22s %u\n", "CPUs:", h->num_processors);
    printf("%-22s %u MHz\n", "CPU speed:", h->cpu_speed_mhz);
    printf("%-22s %u bytes (%s)\n", "Pointer size:", h->pointer_size,
           h->header_type == ETL_HTYPE_SYSTEM64 ? "64-bit header" : "32-bit header");
    printf("%-22s %s (%u), %llu ticks/s\n", "Clock:", clock_type_name(h->clock_type), h->clock_type,
           (unsigned long long)clk->ticks_per_sec);
    printf("%-22s %llu Hz\n", "Perf frequency:", (unsigned long long)h->perf_freq);
    printf("%-22s %u.%04u ms\n", "Timer resolution:", h->timer_resolution / 10000, h->timer_resolution % 10000);
    print_utc(stdout, "Start time (UTC):", h->start_time);
    print_utc(stdout, "End time (UTC):", h->end_time);
    print_utc(stdout, "Boot time (UTC):", h->boot_time);
    if (c->have_ts) {
        int64_t d = duration_ns(clk, c);
        uint64_t a = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        printf("%-22s %s%llu.%09llu s (first to last record)\n", "Duration:", d < 0 ? "-" : "",
               (unsigned long long)(a / 1000000000), (unsigned long long)(a % 1000000000));
    }
    printf("%-22s %u bytes\n", "Buffer size:", h->buffer_size);
    printf("%-22s %u\n", "Buffers written:", h->buffers_written);
    printf("%-22s %llu (%llu compressed%s%s)\n", "Buffers in file:", (unsigned long long)st->buffers,
           (unsigned long long)st->compressed_buffers, st->compressed_buffers ? ", " : "",
           st->compressed_buffers ? etl_compression_name((etl_compression)etl_reader_compression(r)) : "");
    printf("%-22s %u\n", "Events lost:", h->events_lost);
    printf("%-22s %u\n", "Buffers lost:", h->buffers_lost);
    printf("%-22s 0x%08x %s\n", "Log file mode:", h->log_file_mode, modes);
    printf("%-22s %llu\n", "Records:", (unsigned long long)c->records);

    if (c->group_mask_events) {
        const char *names[256];
        size_t n = etl_groupmask_names(&c->flags, names, 256);
        printf("%-22s", "Kernel flags:");
        for (size_t i = 0; i < n && i < 256; i++) printf("%s%s", i ? " | " : " ", names[i]);
        printf("%s\n", n ? "" : " none");
        printf("%-22s %u\n", "Kernel event version:", c->kernel_event_version);
    }
    printf("%-22s %llu CSwitch, %llu in %llu compact batches%s, %llu ReadyThread, %llu SpinLock\n",
           "Scheduler events:", (unsigned long long)c->cswitch, (unsigned long long)c->compact_switches,
           (unsigned long long)c->batches, c->compact_bad ? " (some damaged)" : "",
           (unsigned long long)c->ready, (unsigned long long)c->spinlock);
    printf("%-22s %llu Thread, %llu Process\n", "Lifetime events:", (unsigned long long)c->thread,
           (unsigned long long)c->process);
    if (c->decode_errors) printf("%-22s %llu\n", "Undecodable events:", (unsigned long long)c->decode_errors);

    printf("\nBy header type:\n");
    for (int t = 0; t < 256; t++)
        if (c->by_htype[t]) printf("  %-18s %12llu\n", etl_htype_name((uint8_t)t), (unsigned long long)c->by_htype[t]);
    int any = 0;
    for (unsigned k = 0; k < 65536; k++) {
        if (!c->by_hook[k]) continue;
        if (!any++) printf("\nBy hook (SYSTEM, COMPACT, PERFINFO):\n");
        const char *name = etl_hook_name((uint16_t)k);
        printf("  0x%04x %-28s %12llu\n", k, name ? name : "", (unsigned long long)c->by_hook[k]);
    }
    if (c->prov_n) {
        printf("\nBy provider:\n");
        for (size_t i = 0; i < c->prov_n; i++) {
            char g[37];
            etl_guid_format(&c->prov[i].guid, g);
            printf("  %s %12llu\n", g, (unsigned long long)c->prov[i].count);
        }
    }
    printf("\nRecords by CPU:\n");
    for (unsigned i = 0; i < etl_reader_cpu_count(r) && i < 2048; i++)
        if (c->cpu_records[i]) printf("  cpu %-4u %12llu\n", i, (unsigned long long)c->cpu_records[i]);

    printf("\nRecovery:\n");
    printf("  %-22s %llu\n", "bad buffers", (unsigned long long)st->bad_buffers);
    printf("  %-22s %llu\n", "bad records", (unsigned long long)st->bad_records);
    printf("  %-22s %llu\n", "skipped bytes", (unsigned long long)st->skipped_bytes);
    printf("  %-22s %llu\n", "truncated buffers", (unsigned long long)st->truncated_buffers);
    printf("  %-22s %llu\n", "decompress errors", (unsigned long long)st->decompress_errors);
    printf("  %-22s %llu\n", "unsupported buffers", (unsigned long long)st->unsupported_buffers);
    if (st->first_problem_offset != UINT64_MAX)
        printf("  %-22s 0x%llx: %s\n", "first problem at", (unsigned long long)st->first_problem_offset,
               st->first_problem);
}

/* One JSON object, through the reports' shared writer. */
static void print_json(const char *path, etl_reader *r, info_counts *c, const etl_stats *st)
{
    const etl_logfile_header *h = etl_reader_header(r);
    const etl_clock *clk = etl_reader_clock(r);
    char buf[512];
    jw w;
    jw_init(&w, stdout);
    jw_obj(&w, NULL);
    jw_str(&w, "file", path);
    jw_u64(&w, "file_size", etl_reader_file_size(r));
    jw_u64(&w, "buffer_size", h->buffer_size);
    jw_u64(&w, "os_major", h->os_major);
    jw_u64(&w, "os_minor", h->os_minor);
    jw_u64(&w, "os_build", h->provider_version);
    jw_u64(&w, "format_major", h->sub_version);
    jw_u64(&w, "format_minor", h->sub_minor_version);
    jw_u64(&w, "num_cpus", h->num_processors);
    jw_u64(&w, "end_time", h->end_time);
    etl_filetime_format(h->end_time, buf);
    jw_str(&w, "end_time_utc", buf);
    jw_u64(&w, "timer_resolution", h->timer_resolution);
    jw_u64(&w, "log_file_mode", h->log_file_mode);
    log_file_mode_names(h->log_file_mode, buf, sizeof buf);
    jw_str(&w, "log_file_mode_names", buf);
    jw_u64(&w, "buffers_written", h->buffers_written);
    jw_u64(&w, "pointer_size", h->pointer_size);
    jw_u64(&w, "events_lost", h->events_lost);
    jw_u64(&w, "cpu_mhz", h->cpu_speed_mhz);
    jw_u64(&w, "boot_time", h->boot_time);
    etl_filetime_format(h->boot_time, buf);
    jw_str(&w, "boot_time_utc", buf);
    jw_u64(&w, "perf_freq", h->perf_freq);
    jw_u64(&w, "start_time", h->start_time);
    etl_filetime_format(h->start_time, buf);
    jw_str(&w, "start_time_utc", buf);
    jw_u64(&w, "clock_type", h->clock_type);
    jw_str(&w, "clock_name", clock_type_name(h->clock_type));
    jw_u64(&w, "ticks_per_second", clk->ticks_per_sec);
    jw_u64(&w, "buffers_lost", h->buffers_lost);
    jw_str(&w, "logger_name", h->logger_name);
    jw_str(&w, "log_file_name", h->log_file_name);
    jw_u64(&w, "header_ts", h->header_ts);
    jw_u64(&w, "buffers", st->buffers);
    jw_u64(&w, "compressed_buffers", st->compressed_buffers);
    jw_str(&w, "compression",
           st->compressed_buffers ? etl_compression_name((etl_compression)etl_reader_compression(r)) : "none");
    jw_u64(&w, "cpus_seen", etl_reader_cpu_count(r));
    jw_u64(&w, "records", c->records);
    if (c->have_ts) {
        jw_u64(&w, "first_ts", c->first_ts);
        jw_u64(&w, "last_ts", c->last_ts);
        jw_i64(&w, "duration_ns", duration_ns(clk, c));
    }
    jw_arr(&w, "kernel_flags");
    if (c->group_mask_events) {
        const char *names[256];
        size_t n = etl_groupmask_names(&c->flags, names, 256);
        for (size_t i = 0; i < n && i < 256; i++) jw_str(&w, NULL, names[i]);
    }
    jw_arr_end(&w);
    if (c->group_mask_events) jw_u64(&w, "kernel_event_version", c->kernel_event_version);
    jw_u64(&w, "cswitch_events", c->cswitch);
    jw_u64(&w, "compact_batches", c->batches);
    jw_u64(&w, "compact_switches", c->compact_switches);
    jw_u64(&w, "compact_bad_records", c->compact_bad);
    jw_u64(&w, "ready_thread_events", c->ready);
    jw_u64(&w, "spinlock_events", c->spinlock);
    jw_u64(&w, "thread_events", c->thread);
    jw_u64(&w, "process_events", c->process);
    jw_u64(&w, "undecodable_events", c->decode_errors);
    jw_obj(&w, "by_header_type");
    for (int t = 0; t < 256; t++)
        if (c->by_htype[t]) jw_u64(&w, etl_htype_name((uint8_t)t), c->by_htype[t]);
    jw_obj_end(&w);
    jw_arr(&w, "by_hook");
    for (unsigned k = 0; k < 65536; k++) {
        if (!c->by_hook[k]) continue;
        jw_obj(&w, NULL);
        jw_u64(&w, "hook", k);
        const char *name = etl_hook_name((uint16_t)k);
        if (name) jw_str(&w, "name", name);
        jw_u64(&w, "count", c->by_hook[k]);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr(&w, "by_provider");
    for (size_t i = 0; i < c->prov_n; i++) {
        char gs[37];
        etl_guid_format(&c->prov[i].guid, gs);
        jw_obj(&w, NULL);
        jw_str(&w, "provider", gs);
        jw_u64(&w, "count", c->prov[i].count);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_obj(&w, "recovery");
    jw_u64(&w, "bad_buffers", st->bad_buffers);
    jw_u64(&w, "bad_records", st->bad_records);
    jw_u64(&w, "skipped_bytes", st->skipped_bytes);
    jw_u64(&w, "truncated_buffers", st->truncated_buffers);
    jw_u64(&w, "decompress_errors", st->decompress_errors);
    jw_u64(&w, "unsupported_buffers", st->unsupported_buffers);
    if (st->first_problem_offset != UINT64_MAX) {
        jw_u64(&w, "first_problem_offset", st->first_problem_offset);
        jw_str(&w, "first_problem", st->first_problem);
    }
    jw_obj_end(&w);
    jw_obj_end(&w);
    jw_end(&w);
}

static const cli_cmd info_cmd = {
    "info", "[--json] [--quiet] [--threads N] FILE",
    "Summarises an ETL file: the logfile header (OS, CPUs, clock, times in UTC, sizes,\n"
    "log file mode), the buffers (count, compression), record counts by header type,\n"
    "by hook and by provider, and the recovery counters of any damage found.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 damaged input, 64 usage.\n"};

/*
 * One thread's share of the file: a range of buffers in file order. Counts add up,
 * and the shares are merged in file order, so the output is the same with any
 * number of threads.
 */
typedef struct info_share {
    etl_reader *r;
    size_t first, count;
    info_counts *c;
    etl_stats st;
    int oom;
    _Atomic uint64_t progress;
    cli_progress *bar;        /* share 0 draws the bar for all */
    struct info_share *all;
    unsigned nall;
    pthread_t th;
    int started;
} info_share;

static void share_progress(info_share *sh, uint64_t mine)
{
    atomic_store_explicit(&sh->progress, mine, memory_order_relaxed);
    if (!sh->bar) return;
    uint64_t sum = 0;
    for (unsigned i = 0; i < sh->nall; i++) sum += atomic_load_explicit(&sh->all[i].progress, memory_order_relaxed);
    cli_progress_update(sh->bar, sum);
}

/* A walk's kernel record: counted from its header, and from its payload size for the frequent events. */
static void count_krec(info_counts *c, const etl_walk *w, const etl_krec *k)
{
    c->by_htype[k->htype]++;
    c->by_hook[k->hook]++;
    if (k->ts < c->first_ts) c->first_ts = k->ts;
    if (k->ts > c->last_ts) c->last_ts = k->ts;
    size_t need;
    uint64_t *counter;
    switch (k->hook) {
    case ETL_HOOK_CSWITCH: need = (k->version_word & 0xFF) <= 1 ? 16 : 24; counter = &c->cswitch; break; /* etl_cswitch_size */
    case ETL_HOOK_READY_THREAD: need = 8; counter = &c->ready; break;
    case ETL_HOOK_SPINLOCK: need = 2u * k->pointer_size + 0x23; counter = &c->spinlock; break;
    case ETL_HOOK_CSWITCH_BATCH: {
        etl_ccswap_walker b;
        if (etl_ccswap_open(&b, k->payload) != ETL_OK) {
            c->decode_errors++;
            return;
        }
        uint64_t n, bad;
        etl_ccswap_count(&b, &n, &bad);
        c->batches++;
        c->compact_switches += n;
        c->compact_bad += bad;
        return;
    }
    default:
        if (etl_event_hook_decodes(k->hook)) {
            etl_record rec;
            etl_krec_record(w, k, &rec);
            count_kernel(c, &rec);
        }
        return;
    }
    if (k->payload.n >= need) ++*counter;
    else c->decode_errors++;
}

static void *count_share(void *arg)
{
    info_share *sh = arg;
    info_counts *c = sh->c;
    etl_iter *it = NULL;
    if (etl_iter_open_range(sh->r, sh->first, sh->count, &it) != ETL_OK) {
        sh->oom = 1;
        return NULL;
    }
    /* c is new: first_ts starts high so that kernel records need no have_ts test. */
    int have = 0;
    c->first_ts = UINT64_MAX;
    c->last_ts = 0;
    etl_walk w;
    etl_krec k;
    for (unsigned nb = 0; etl_iter_next_buffer(it, &w) == ETL_OK; nb++) {
        if ((nb & 15) == 0) share_progress(sh, etl_iter_progress(it));
        int kind;
        while ((kind = etl_walk_next(&w, &k)) != ETL_WALK_END) {
            if (kind == ETL_WALK_KERNEL) {
                count_krec(c, &w, &k);
                have = 1;
                continue;
            }
            const etl_record *rec = &w.full;
            c->by_htype[rec->htype]++;
            if ((rec->has & ETL_REC_PROVIDER) && prov_add(c, &rec->provider, 1) != 0) sh->oom = 1;
            count_kernel(c, rec);
            if (rec->has & ETL_REC_TS) {
                if (rec->ts < c->first_ts) c->first_ts = rec->ts;
                if (rec->ts > c->last_ts) c->last_ts = rec->ts;
                have = 1;
            }
        }
        c->records += w.records;
        if (w.cpu < 2048) c->cpu_records[w.cpu] += w.records;
    }
    c->have_ts = have;
    if (!have) c->first_ts = 0;
    share_progress(sh, etl_iter_progress(it));
    sh->st = *etl_iter_stats(it);
    etl_iter_close(it);
    return NULL;
}

static info_counts *counts_new(void)
{
    info_counts *c = calloc(1, sizeof *c);
    if (c && !(c->by_hook = calloc(65536, sizeof *c->by_hook))) {
        free(c);
        c = NULL;
    }
    return c;
}

static void counts_free(info_counts *c)
{
    if (!c) return;
    free(c->by_hook);
    free(c->prov);
    free(c);
}

/* Adds share x (later in the file than what c holds) into c. */
static int counts_merge(info_counts *c, const info_counts *x)
{
    c->records += x->records;
    for (int i = 0; i < 256; i++) c->by_htype[i] += x->by_htype[i];
    for (int i = 0; i < 65536; i++) c->by_hook[i] += x->by_hook[i];
    for (int i = 0; i < 2048; i++) c->cpu_records[i] += x->cpu_records[i];
    for (size_t i = 0; i < x->prov_cap; i++)
        if (x->prov[i].used && prov_add(c, &x->prov[i].guid, x->prov[i].count) != 0) return -1;
    if (x->have_ts) {
        if (!c->have_ts || x->first_ts < c->first_ts) c->first_ts = x->first_ts;
        if (!c->have_ts || x->last_ts > c->last_ts) c->last_ts = x->last_ts;
        c->have_ts = 1;
    }
    for (int i = 0; i < 8; i++) c->flags.masks[i] |= x->flags.masks[i];
    if (x->kernel_event_version) c->kernel_event_version = x->kernel_event_version;
    c->group_mask_events += x->group_mask_events;
    c->cswitch += x->cswitch;
    c->batches += x->batches;
    c->compact_switches += x->compact_switches;
    c->compact_bad += x->compact_bad;
    c->spinlock += x->spinlock;
    c->ready += x->ready;
    c->thread += x->thread;
    c->process += x->process;
    c->decode_errors += x->decode_errors;
    return 0;
}

/* Buffers per thread below which a thread is not worth starting. */
#define INFO_MIN_BUFFERS 8

int cmd_info(int argc, char **argv)
{
    int json = 0, quiet = 0;
    unsigned threads = cli_threads_default();
    const char *path = NULL;
    const cli_opt table[] = {
        CLI_FLAG("json", 0, "print one JSON object instead of text", &json, 1),
        CLI_FLAG("quiet", 'q', "do not print a warning for each damaged buffer", &quiet, 1),
        CLI_UINT("threads", "N", "threads that read the file (default: the CPUs available); the output is the same "
                 "with any N", "a count, 1..256", &threads, 1, 256),
        CLI_END};
    int pr = cli_opts_parse(&info_cmd, table, argc, argv, &path);
    if (pr != CLI_OPTS_RUN) return pr;

    cli_input in;
    int rc = cli_open(&in, path, quiet);
    if (rc != EXIT_OK) return rc;
    size_t nbufs = etl_reader_buffer_count(in.reader);
    unsigned n = threads;
    if (n > nbufs / INFO_MIN_BUFFERS) n = (unsigned)(nbufs / INFO_MIN_BUFFERS);
    if (n < 1) n = 1;
    info_share *sh = calloc(n, sizeof *sh);
    int oom = !sh;
    for (unsigned i = 0; !oom && i < n; i++) {
        sh[i].r = in.reader;
        sh[i].first = nbufs * i / n;
        sh[i].count = nbufs * (i + 1) / n - sh[i].first;
        sh[i].all = sh;
        sh[i].nall = n;
        if (!(sh[i].c = counts_new())) oom = 1;
    }
    if (oom) {
        fprintf(stderr, "%s: out of memory\n", prog);
        for (unsigned i = 0; sh && i < n; i++) counts_free(sh[i].c);
        free(sh);
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    cli_progress prog_bar;
    cli_progress_start(&prog_bar, etl_reader_file_size(in.reader));
    sh[0].bar = &prog_bar;
    for (unsigned i = 1; i < n; i++) sh[i].started = pthread_create(&sh[i].th, NULL, count_share, &sh[i]) == 0;
    count_share(&sh[0]);
    for (unsigned i = 1; i < n; i++) {
        if (sh[i].started) pthread_join(sh[i].th, NULL);
        else count_share(&sh[i]); /* no thread to be had: here */
    }
    cli_progress_end(&prog_bar);
    info_counts *c = sh[0].c;
    etl_stats st = sh[0].st;
    oom = sh[0].oom;
    for (unsigned i = 1; i < n; i++) {
        if (counts_merge(c, sh[i].c) != 0 || sh[i].oom) oom = 1;
        etl_stats_add(&st, &sh[i].st, etl_reader_stats(in.reader));
        counts_free(sh[i].c);
    }
    /* Compact the provider table, most frequent first. */
    size_t np = 0;
    for (size_t i = 0; i < c->prov_cap; i++)
        if (c->prov[i].used) c->prov[np++] = c->prov[i];
    if (np) qsort(c->prov, np, sizeof *c->prov, by_count_desc);
    c->prov_n = np;

    if (json)
        print_json(path, in.reader, c, &st);
    else
        print_text(path, in.reader, c, &st);
    counts_free(c);
    free(sh);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: write error on standard output\n", prog);
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    rc = cli_close(&in, &st);
    return oom ? EXIT_IO : rc;
}

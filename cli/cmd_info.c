/* cmd_info.c - `etlkit info`: what a trace is, at a glance, or as one JSON object. */
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "opts.h"
#include "out.h"
#include "etlkit/summary.h"

static void on_progress(void *bar, uint64_t bytes) { cli_progress_update(bar, bytes); }

static void print_utc(FILE *f, const char *label, uint64_t ft)
{
    char buf[40];
    etl_filetime_format(ft, buf);
    fprintf(f, "%-22s %s\n", label, buf);
}

/* Buffers whose BufferFlag says the session lost events (EVENTS_LOST) or a buffer (BUFFER_LOST) before it. */
static void flagged_lost(etl_reader *r, uint64_t *events, uint64_t *buffers)
{
    *events = *buffers = 0;
    for (size_t i = 0; i < etl_reader_buffer_count(r); i++) {
        unsigned f = etl_reader_buffer_flags(r, i);
        *events += (f & ETL_BUFFER_FLAG_EVENTS_LOST) != 0;
        *buffers += (f & ETL_BUFFER_FLAG_BUFFER_LOST) != 0;
    }
}

static void print_text(const char *path, etl_reader *r, const etl_summary *c)
{
    const etl_logfile_header *h = etl_reader_header(r);
    const etl_clock *clk = etl_reader_clock(r);
    char modes[512];
    etl_log_file_mode_names(h->log_file_mode, modes, sizeof modes);
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
    printf("%-22s %s (%u), %llu ticks/s\n", "Clock:", etl_clock_type_name(h->clock_type), h->clock_type,
           (unsigned long long)clk->ticks_per_sec);
    printf("%-22s %llu Hz\n", "Perf frequency:", (unsigned long long)h->perf_freq);
    printf("%-22s %u.%04u ms\n", "Timer resolution:", h->timer_resolution / 10000, h->timer_resolution % 10000);
    print_utc(stdout, "Start time (UTC):", h->start_time);
    print_utc(stdout, "End time (UTC):", h->end_time);
    print_utc(stdout, "Boot time (UTC):", h->boot_time);
    if (c->have_ts) {
        int64_t d = etl_summary_duration_ns(c, clk);
        uint64_t a = d < 0 ? (uint64_t)0 - (uint64_t)d : (uint64_t)d;
        printf("%-22s %s%llu.%09llu s (first to last record)\n", "Duration:", d < 0 ? "-" : "",
               (unsigned long long)(a / 1000000000), (unsigned long long)(a % 1000000000));
    }
    printf("%-22s %u bytes\n", "Buffer size:", h->buffer_size);
    printf("%-22s %u\n", "Buffers written:", h->buffers_written);
    printf("%-22s %llu (%llu compressed%s%s)\n", "Buffers in file:", (unsigned long long)c->st.buffers,
           (unsigned long long)c->st.compressed_buffers, c->st.compressed_buffers ? ", " : "",
           c->st.compressed_buffers ? etl_compression_name((etl_compression)etl_reader_compression(r)) : "");
    printf("%-22s %u\n", "Events lost:", h->events_lost);
    printf("%-22s %u\n", "Buffers lost:", h->buffers_lost);
    uint64_t fe, fb;
    flagged_lost(r, &fe, &fb);
    if (fe || fb)
        printf("%-22s %llu EVENTS_LOST, %llu BUFFER_LOST (BufferFlag: lost while recording, not file damage)\n",
               "Buffers flagged:", (unsigned long long)fe, (unsigned long long)fb);
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
           (unsigned long long)c->compact_batches, c->compact_bad ? " (some damaged)" : "",
           (unsigned long long)c->ready_thread, (unsigned long long)c->spinlock);
    printf("%-22s %llu Thread, %llu Process\n", "Lifetime events:", (unsigned long long)c->thread,
           (unsigned long long)c->process);
    if (c->undecodable) printf("%-22s %llu\n", "Undecodable events:", (unsigned long long)c->undecodable);

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
    if (c->nproviders) {
        printf("\nBy provider:\n");
        for (size_t i = 0; i < c->nproviders; i++) {
            char g[37];
            etl_guid_format(&c->providers[i].guid, g);
            printf("  %s %12llu\n", g, (unsigned long long)c->providers[i].count);
        }
    }
    printf("\nRecords by CPU:\n");
    for (unsigned i = 0; i < etl_reader_cpu_count(r) && i < ETL_SUMMARY_MAX_CPUS; i++)
        if (c->cpu_records[i]) printf("  cpu %-4u %12llu\n", i, (unsigned long long)c->cpu_records[i]);

    printf("\nRecovery:\n");
    printf("  %-22s %llu\n", "bad buffers", (unsigned long long)c->st.bad_buffers);
    printf("  %-22s %llu\n", "bad records", (unsigned long long)c->st.bad_records);
    printf("  %-22s %llu\n", "skipped bytes", (unsigned long long)c->st.skipped_bytes);
    printf("  %-22s %llu\n", "truncated buffers", (unsigned long long)c->st.truncated_buffers);
    printf("  %-22s %llu\n", "decompress errors", (unsigned long long)c->st.decompress_errors);
    printf("  %-22s %llu\n", "unsupported buffers", (unsigned long long)c->st.unsupported_buffers);
    if (c->st.first_problem_offset != UINT64_MAX)
        printf("  %-22s 0x%llx: %s\n", "first problem at", (unsigned long long)c->st.first_problem_offset,
               c->st.first_problem);
}

/* One JSON object, through the reports' shared writer. */
static void print_json(const char *path, etl_reader *r, const etl_summary *c)
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
    etl_log_file_mode_names(h->log_file_mode, buf, sizeof buf);
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
    jw_str(&w, "clock_name", etl_clock_type_name(h->clock_type));
    jw_u64(&w, "ticks_per_second", clk->ticks_per_sec);
    jw_u64(&w, "buffers_lost", h->buffers_lost);
    uint64_t fe, fb;
    flagged_lost(r, &fe, &fb);
    jw_u64(&w, "buffers_flagged_events_lost", fe);
    jw_u64(&w, "buffers_flagged_buffer_lost", fb);
    jw_str(&w, "logger_name", h->logger_name);
    jw_str(&w, "log_file_name", h->log_file_name);
    jw_u64(&w, "header_ts", h->header_ts);
    jw_u64(&w, "buffers", c->st.buffers);
    jw_u64(&w, "compressed_buffers", c->st.compressed_buffers);
    jw_str(&w, "compression",
           c->st.compressed_buffers ? etl_compression_name((etl_compression)etl_reader_compression(r)) : "none");
    jw_u64(&w, "cpus_seen", etl_reader_cpu_count(r));
    jw_u64(&w, "records", c->records);
    if (c->have_ts) {
        jw_u64(&w, "first_ts", c->first_ts);
        jw_u64(&w, "last_ts", c->last_ts);
        jw_i64(&w, "duration_ns", etl_summary_duration_ns(c, clk));
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
    jw_u64(&w, "compact_batches", c->compact_batches);
    jw_u64(&w, "compact_switches", c->compact_switches);
    jw_u64(&w, "compact_bad_records", c->compact_bad);
    jw_u64(&w, "ready_thread_events", c->ready_thread);
    jw_u64(&w, "spinlock_events", c->spinlock);
    jw_u64(&w, "thread_events", c->thread);
    jw_u64(&w, "process_events", c->process);
    jw_u64(&w, "undecodable_events", c->undecodable);
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
    for (size_t i = 0; i < c->nproviders; i++) {
        char gs[37];
        etl_guid_format(&c->providers[i].guid, gs);
        jw_obj(&w, NULL);
        jw_str(&w, "provider", gs);
        jw_u64(&w, "count", c->providers[i].count);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    jw_arr(&w, "by_cpu"); /* as the text's "Records by CPU": the processors with records */
    for (unsigned i = 0; i < etl_reader_cpu_count(r) && i < ETL_SUMMARY_MAX_CPUS; i++) {
        if (!c->cpu_records[i]) continue;
        jw_obj(&w, NULL);
        jw_u64(&w, "cpu", i);
        jw_u64(&w, "count", c->cpu_records[i]);
        jw_obj_end(&w);
    }
    jw_arr_end(&w);
    cli_json_recovery(&w, &c->st, 1);
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
    in.shows_header = 1; /* "Events lost:", "Buffers lost:" */
    cli_progress prog_bar;
    cli_progress_start(&prog_bar, etl_reader_file_size(in.reader));
    etl_summary_options so = {.sz = sizeof so, .threads = threads, .progress = on_progress, .progress_ctx = &prog_bar};
    etl_summary c;
    etl_status st = etl_summary_run(in.reader, &so, &c);
    cli_progress_end(&prog_bar);
    if (st != ETL_OK) {
        /* Counts short of memory are numbers that cannot be computed: none is printed. */
        fprintf(stderr, "%s info: %s: %s\n", prog, path, etl_status_str(st));
        etl_summary_free(&c);
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    if (json)
        print_json(path, in.reader, &c);
    else
        print_text(path, in.reader, &c);
    etl_stats damage = c.st;
    etl_summary_free(&c);
    if (cli_stdout_done("info") != EXIT_OK) {
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    return cli_close(&in, &damage);
}

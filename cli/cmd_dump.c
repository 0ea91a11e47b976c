/* cmd_dump.c - `etlkit dump`: one line per record, as JSON lines, CSV or aligned text. */
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "opts.h"
#include "fields.h"
#include "out/csv.h"
#include "container/reader_internal.h"

typedef enum { FMT_JSONL, FMT_CSV, FMT_TEXT } dump_format;

typedef struct dump_opts {
    dump_format format;
    etl_order order;
    uint64_t limit;
    int quiet;
    int expand;
    int bias;            /* StateWr bias override, -1 = from the OS build */
    uint8_t *hooks;      /* --filter: 65536 flags, NULL = everything */
} dump_opts;

#define LINE_CAP (1u << 18)

/* Lines are built in place in one chunk, written when it fills: no copy and no stdio lock a line. */
#define CHUNK (1u << 20)
static char chunk[CHUNK + LINE_CAP + 2];
static size_t chunk_used;

/* Writes the chunk's lines; l's next line starts the chunk again. */
static void chunk_flush(ln_buf *l)
{
    if (chunk_used) cli_stdout_write(chunk, chunk_used);
    chunk_used = 0;
    l->b = chunk;
}

static void out_line(ln_buf *l)
{
    if (l->cut) {
        /* Never emit broken JSON: a line that did not fit says so instead. */
        l->n = 0;
        l->cut = 0;
        ln_raw(l, l->json ? "{\"error\":\"line too long\"" : "line too long", l->json ? 24 : 13);
    }
    if (l->json) ln_raw(l, "}", 1);
    l->b[l->n++] = '\n';
    chunk_used += l->n;
    l->b = chunk + chunk_used;
    if (chunk_used >= CHUNK) chunk_flush(l);
}

/* The header's PMC counters and PEBS index, where it has them: pmc [a,b,...] and pebs, JSON or text. */
static void header_counters(ln_buf *l, const etl_record *r)
{
    if (r->has & ETL_REC_PMC) {
        char t[8 * 24];
        size_t n = 0;
        t[n++] = '[';
        for (unsigned i = 0; i < r->pmc_count; i++) {
            if (i) t[n++] = ',';
            n += fmt_u64(t + n, etl_record_pmc(r, i));
        }
        t[n++] = ']';
        ln_key(l, "pmc");
        ln_raw(l, t, n);
    }
    if (r->has & ETL_REC_PEBS) ln_u(l, "pebs", r->pebs_index);
}

/* The record's header keys, JSON or text. */
static void header_json(ln_buf *l, const etl_record *r, const etl_clock *clk)
{
    ln_raw(l, "{", 1);
    l->first = 1;
    ln_u(l, "buf", r->buffer_index);
    ln_u(l, "off", r->offset);
    ln_u(l, "cpu", r->cpu);
    ln_u(l, "htype", r->htype);
    ln_u(l, "size", r->size);
    if (r->has & ETL_REC_VERSION) ln_u(l, "ver", r->version);
    if (r->has & ETL_REC_HOOK) ln_u(l, "hook", r->hook);
    if (r->has & ETL_REC_PROVIDER) {
        char g[40];
        g[0] = '"';
        etl_guid_format(&r->provider, g + 1);
        g[37] = '"';
        ln_key(l, "provider");
        ln_raw(l, g, 38); /* a GUID needs no escaping */
    }
    if (r->has & ETL_REC_ID) ln_u(l, "id", r->id);
    if (r->has & ETL_REC_OPCODE) ln_u(l, "opcode", r->opcode);
    if (r->has & ETL_REC_TID) {
        ln_u(l, "tid", r->tid);
        ln_u(l, "pid", r->pid);
    }
    if (r->has & ETL_REC_TS) {
        ln_u(l, "ts", r->ts);
        ln_i(l, "ns", etl_clock_ns(clk, r->ts));
    }
    header_counters(l, r);
    ln_u(l, "len", r->payload.n);
}

static void ts_text(char *t, size_t cap, int64_t ns)
{
    uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
    snprintf(t, cap, "%s%llu.%09llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000000),
             (unsigned long long)(a % 1000000000));
}

static void header_text(ln_buf *l, const etl_record *r, const etl_clock *clk)
{
    char ts[32] = "", name[64] = "", ids[40] = "";
    if (r->has & ETL_REC_TS) ts_text(ts, sizeof ts, etl_clock_ns(clk, r->ts));
    uint16_t hook;
    if (etl_record_kernel_hook(r, &hook)) {
        const char *hn = etl_hook_name(hook);
        snprintf(name, sizeof name, "0x%04x %s", hook, hn ? hn : "");
    } else if (r->has & ETL_REC_PROVIDER) {
        etl_guid_format(&r->provider, name);
        if (r->has & ETL_REC_ID)
            snprintf(name + 36, sizeof name - 36, " id %u", r->id);
        else if (r->has & ETL_REC_OPCODE)
            snprintf(name + 36, sizeof name - 36, " op %u", r->opcode);
    }
    if (r->has & ETL_REC_TID) snprintf(ids, sizeof ids, "tid %6u pid %6u", r->tid, r->pid);
    char t[256];
    int k = snprintf(t, sizeof t, "%16s cpu %3u %-14s v%-2u %-44s %-22s len %5u", ts, r->cpu,
                     etl_htype_name(r->htype), r->version, name, ids, (unsigned)r->payload.n);
    ln_raw(l, t, k < 0 ? 0 : (size_t)k < sizeof t ? (size_t)k : sizeof t - 1);
    header_counters(l, r); /* as jsonl and csv print them */
}

static const char csv_header[] =
    "buf,off,cpu,htype,size,ver,hook,provider,id,opcode,tid,pid,ts,ns,pmc,pebs,len,fields\n";

static void csv_u(ln_buf *l, int present, uint64_t v)
{
    char t[24];
    if (present) ln_raw(l, t, num_u64_inline(t, v));
    ln_raw(l, ",", 1);
}

static void header_csv(ln_buf *l, const etl_record *r, const etl_clock *clk)
{
    csv_u(l, 1, r->buffer_index);
    csv_u(l, 1, r->offset);
    csv_u(l, 1, r->cpu);
    csv_u(l, 1, r->htype);
    csv_u(l, 1, r->size);
    csv_u(l, r->has & ETL_REC_VERSION, r->version);
    csv_u(l, r->has & ETL_REC_HOOK, r->hook);
    if (r->has & ETL_REC_PROVIDER) {
        char g[37];
        etl_guid_format(&r->provider, g);
        ln_raw(l, g, 36);
    }
    ln_raw(l, ",", 1);
    csv_u(l, r->has & ETL_REC_ID, r->id);
    csv_u(l, r->has & ETL_REC_OPCODE, r->opcode);
    csv_u(l, r->has & ETL_REC_TID, r->tid);
    csv_u(l, r->has & ETL_REC_TID, r->pid);
    csv_u(l, r->has & ETL_REC_TS, r->ts);
    char t[24];
    if (r->has & ETL_REC_TS) ln_raw(l, t, num_i64_inline(t, etl_clock_ns(clk, r->ts)));
    ln_raw(l, ",", 1);
    for (unsigned i = 0; i < r->pmc_count; i++) {
        if (i) ln_raw(l, ";", 1);
        ln_raw(l, t, num_u64_inline(t, etl_record_pmc(r, i)));
    }
    ln_raw(l, ",", 1);
    csv_u(l, r->has & ETL_REC_PEBS, r->pebs_index);
    ln_raw(l, t, num_u64_inline(t, r->payload.n));
    ln_raw(l, ",", 1);
}

/* CSV's last column: the fields as a JSON object, quoted with "" doubling. */
static void csv_fields(ln_buf *l, const etl_event *ev, unsigned bias)
{
    static char jb[LINE_CAP];
    ln_buf j = {jb, 0, sizeof jb, 1, 1, 0};
    ln_raw(&j, "{", 1);
    fields_event(&j, ev, bias);
    ln_raw(&j, "}", 1);
    if (j.cut || j.n <= 2) return;
    jb[j.n] = 0; /* ln keeps the byte for it */
    ln_csv_quoted(l, jb);
}

static void emit_record(ln_buf *l, dump_format f, const etl_record *r, const etl_event *ev,
                        const etl_clock *clk, unsigned bias)
{
    l->n = 0;
    l->cut = 0;
    l->json = f == FMT_JSONL;
    if (f == FMT_JSONL) {
        header_json(l, r, clk);
        if (ev->kind != ETL_EVENT_OTHER && ev->status == ETL_OK) {
            ln_open(l, "fields");
            fields_event(l, ev, bias);
            ln_close(l);
        } else if (ev->kind != ETL_EVENT_OTHER) {
            ln_s(l, "error", etl_status_str(ev->status));
        }
    } else if (f == FMT_TEXT) {
        header_text(l, r, clk);
        if (ev->kind != ETL_EVENT_OTHER && ev->status == ETL_OK) fields_event(l, ev, bias);
        else if (ev->kind != ETL_EVENT_OTHER) ln_s(l, "error", etl_status_str(ev->status));
    } else {
        header_csv(l, r, clk);
        if (ev->kind != ETL_EVENT_OTHER && ev->status == ETL_OK) csv_fields(l, ev, bias);
    }
    if (f == FMT_CSV) l->json = 0;
    out_line(l);
}

/* An expanded compact switch: the batch's header keys that still hold, then the switch. */
static void emit_switch(ln_buf *l, dump_format f, const etl_cswitch *sw, const etl_clock *clk)
{
    l->n = 0;
    l->cut = 0;
    l->json = f == FMT_JSONL;
    char t[64];
    if (f == FMT_JSONL) {
        ln_raw(l, "{", 1);
        l->first = 1;
        ln_u(l, "cpu", sw->cpu);
        ln_u(l, "hook", ETL_HOOK_CSWITCH_BATCH);
        ln_u(l, "ver", sw->version);
        ln_u(l, "ts", sw->ts);
        ln_i(l, "ns", etl_clock_ns(clk, sw->ts));
        ln_s(l, "expanded", "compact");
        ln_open(l, "fields");
        fields_cswitch(l, sw);
        ln_close(l);
    } else if (f == FMT_TEXT) {
        char ts[32];
        ts_text(ts, sizeof ts, etl_clock_ns(clk, sw->ts));
        int k = snprintf(t, sizeof t, "%16s cpu %3u %-14s v%-2u ", ts, sw->cpu, "compact", sw->version);
        ln_raw(l, t, (size_t)k);
        ln_raw(l, "0x0525 Thread/CSwitch (expanded)", 32);
        fields_cswitch(l, sw);
    } else {
        /* buf,off,cpu,htype,size,ver,hook,provider,id,opcode,tid,pid,ts,ns,pmc,pebs,len,fields */
        ln_raw(l, ",,", 2);
        ln_raw(l, t, fmt_u64(t, sw->cpu));
        ln_raw(l, ",,,", 3);
        ln_raw(l, t, fmt_u64(t, sw->version));
        ln_raw(l, ",1317,,,,,,", 11);
        ln_raw(l, t, fmt_u64(t, sw->ts));
        ln_raw(l, ",", 1);
        ln_raw(l, t, fmt_i64(t, etl_clock_ns(clk, sw->ts)));
        ln_raw(l, ",,,,", 4);
        static char jb[4096];
        ln_buf j = {jb, 0, sizeof jb, 1, 1, 0};
        ln_raw(&j, "{", 1);
        fields_cswitch(&j, sw);
        ln_raw(&j, "}", 1);
        jb[j.n] = 0;
        ln_csv_quoted(l, jb);
    }
    out_line(l);
}

/* A CPU's last switch printed from batches, and the batch that holds its pending switch. */
typedef struct sw_order {
    uint64_t last;
    uint32_t buf, off;
} sw_order;

/* Switches of one batch earlier than their CPU's switch ahead of them: told once, at the first. */
typedef struct back_run {
    uint32_t buf, off;
    uint64_t n, ts, prev;
} back_run;

/* The model's rule (etl_sched_takes): a switch earlier than its CPU's last switch taken is passed over. */
static bool goes_back(sw_order *order, const etl_cswitch *sw, back_run *b)
{
    sw_order *o = &order[sw->cpu];
    if (sw->ts >= o->last) {
        o->last = sw->ts;
        return false;
    }
    if (!b->n++) {
        b->ts = sw->ts;
        b->prev = o->last;
    }
    return true;
}

static void back_tell(etl_iter *it, const back_run *b)
{
    char fate[96];
    if (!b->n) return;
    snprintf(fate, sizeof fate, "%llu of the batch's switches from there passed over", (unsigned long long)b->n);
    etl_iter_switches_back(it, b->buf, b->off, b->ts, b->prev, fate);
}

static const cli_cmd dump_cmd = {
    "dump", "[OPTIONS] FILE",
    "Prints one line per record of an ETL file, with the decoded payload of the kernel\n"
    "scheduler events (CSwitch, compact batches, SpinLock, ReadyThread, Thread, Process,\n"
    "header extension) under \"fields\".\n",
    {"FILE"}, 1, 1,
    "JSON keys, in this order, each only where the record's header has it:\n"
    "  buf off cpu htype size ver hook provider id opcode tid pid ts ns pmc pebs len fields\n"
    "ts is the raw timestamp, ns nanoseconds since the logfile header's time. An expanded\n"
    "switch has cpu hook ver ts ns \"expanded\" fields; fields a compact record does not carry\n"
    "are absent, and the last switch of each CPU has no NewThreadId.\n\n"
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 damaged input, 64 usage.\n"};

/* --filter LIST: the hooks to print (the lists of several --filter add up). */
static int parse_filter(const cli_opt *opt, const char *list, char *err, size_t cap)
{
    dump_opts *o = opt->dst;
    if (!o->hooks) o->hooks = calloc(65536, 1);
    if (!o->hooks) return snprintf(err, cap, "out of memory");
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", list);
    if (!buf[strspn(buf, ",")]) return -1; /* no event named (""): "--filter needs event names", not an empty dump */
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        int h = etl_hook_by_name(tok);
        if (h == ETL_HOOK_AMBIGUOUS)
            return snprintf(err, cap, "--filter: '%s' names events of several groups; say Group/Event", tok);
        if (h < 0) return snprintf(err, cap, "--filter: unknown event '%s'", tok);
        o->hooks[h] = 1;
    }
    return 0;
}

/* --limit 0: no limit, as --top 0 is all (it printed nothing). */
static int limit_zero(const cli_opt *opt, const char *value, char *err, size_t cap)
{
    (void)value, (void)err, (void)cap;
    uint64_t *limit = opt->dst;
    if (*limit == 0) *limit = UINT64_MAX;
    return 0;
}

static int parse(int argc, char **argv, dump_opts *o, const char **path)
{
    memset(o, 0, sizeof *o);
    o->format = FMT_TEXT;
    o->order = ETL_ORDER_TIME;
    o->limit = UINT64_MAX;
    o->bias = -1;
    int order_set = 0;
    static const char *const orders[] = {"time", "file", NULL};
    static const int order_vals[] = {ETL_ORDER_TIME, ETL_ORDER_FILE};
    static const char *const formats[] = {"jsonl", "json", "csv", "text", NULL};
    static const int format_vals[] = {FMT_JSONL, FMT_JSONL, FMT_CSV, FMT_TEXT};
    const cli_opt table[] = {
        {.kind = CLI_OPT_ENUM, .name = "order", .arg = "time|file", .dst = &o->order, .words = orders,
         .vals = order_vals, .need = "time or file", .seen = &order_set,
         .help = "time: per-CPU streams merged by timestamp (default);\nfile: buffers and records as they lie in "
                 "the file\n"},
        {.kind = CLI_OPT_ENUM, .name = "format", .arg = "jsonl|csv|text", .dst = &o->format, .words = formats,
         .vals = format_vals, .need = "jsonl, csv or text", .help = "output format (default text)"},
        {.kind = CLI_OPT_CUSTOM, .name = "filter", .arg = "LIST", .parse = parse_filter, .dst = o,
         .need = "event names", .help = "only these events: comma-separated hook names or ids (Thread/CSwitch, "
                                        "CSwitch, ReadyThread, 0x0529, Process/Start...)"},
        CLI_FLAG("expand", 0, "print each compact context-switch batch (0x0525) as one line per switch, the new "
                 "thread paired from the next switch on the same CPU (needs --order time); --filter CSwitch "
                 "keeps these lines too", &o->expand, 1),
        {.kind = CLI_OPT_UINT, .name = "max-wait-reason", .arg = "N", .dst = &o->bias, .size = sizeof o->bias,
         .min = 1, .max = ETL_CCSWAP_STATE_WR_MAX - ETL_CCSWAP_STATE_MAX, /* what convert's encoder takes */
         .need = "1..54", .flags = CLI_OPT_BASE0,
         .help = "the StateWr bias of compact batches, 1..54 (default: from the OS build)"},
        {.kind = CLI_OPT_UINT, .name = "limit", .arg = "N", .dst = &o->limit, .size = sizeof o->limit,
         .max = UINT64_MAX, .need = "a number (0 = no limit)", .flags = CLI_OPT_BASE0, .check = limit_zero,
         .help = "stop after N lines (0 = no limit, as --top 0 is all)"},
        CLI_FLAG("quiet", 'q', "do not print a warning for each damaged buffer", &o->quiet, 1),
        CLI_END};
    int pr = cli_opts_parse(&dump_cmd, table, argc, argv, path);
    if (pr != CLI_OPTS_RUN) return pr;
    if (o->expand && order_set && o->order != ETL_ORDER_TIME)
        return cli_usage_error("dump", "--expand pairs switches in time order; it cannot go with --order file");
    return CLI_OPTS_RUN;
}

int cmd_dump(int argc, char **argv)
{
    dump_opts o;
    const char *path;
    int prc = parse(argc, argv, &o, &path);
    if (prc != CLI_OPTS_RUN) {
        free(o.hooks);
        return prc;
    }
    cli_input in;
    int rc = cli_open(&in, path, o.quiet);
    if (rc != EXIT_OK) {
        free(o.hooks);
        return rc;
    }
    in.shows_header = 1; /* its first record */
    unsigned ncpu = etl_reader_cpu_count(in.reader);
    /* A record whose time lies outside the session is printed too: the warning says which. */
    etl_reader_keep_bad_times(in.reader, true);
    etl_iter *it = NULL;
    etl_batch_expand_cpu *cpus = calloc(ncpu ? ncpu : 1, sizeof *cpus);
    sw_order *order = calloc(ncpu ? ncpu : 1, sizeof *order);
    ln_buf l = {chunk, 0, LINE_CAP, 0, 1, 0};
    if (!cpus || !order || etl_iter_open(in.reader, o.order, &it) != ETL_OK) {
        fprintf(stderr, "%s dump: %s: out of memory\n", prog, in.path);
        free(cpus);
        free(order);
        free(o.hooks);
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    etl_batch_expander x;
    etl_batch_expand_init(&x, cpus, ncpu);
    etl_stats cc_damage = {.first_problem_offset = UINT64_MAX}; /* what the expander found in batches */
    uint64_t lo, hi;
    etl_reader_time_window(in.reader, &lo, &hi);
    etl_batch_expand_window(&x, lo, hi);
    const etl_logfile_header *h = etl_reader_header(in.reader);
    unsigned bias = o.bias >= 0 ? (unsigned)o.bias : etl_max_wait_reason_for_build(h->provider_version);
    /* Lines go out in 1 MiB chunks already: stdio's own buffer would only copy them once more. */
    setvbuf(stdout, NULL, _IONBF, 0);
    const etl_clock *clk = etl_reader_clock(in.reader);
    if (o.format == FMT_CSV) fputs(csv_header, stdout);
    cli_progress bar;
    cli_progress_start(&bar, etl_reader_file_size(in.reader));
    const etl_record *r;
    etl_event ev;
    etl_cswitch sw;
    uint64_t n = 0, seen = 0;
    while (n < o.limit && etl_iter_next_ref(it, &r) == ETL_OK) {
        if ((++seen & 0xFFFF) == 0) {
            cli_progress_update(&bar, etl_iter_progress(it));
            chunk_flush(&l);
            if (ferror(stdout)) break; /* a closed pipe or a full disk: no use going on */
        }
        uint16_t hook;
        int kernel = etl_record_kernel_hook(r, &hook);
        /* Expanded, a batch is CSwitch events: --filter CSwitch keeps them. */
        bool as_switches = o.expand && kernel && hook == ETL_HOOK_CSWITCH_BATCH;
        if (o.hooks && (!kernel || !(o.hooks[hook] || (as_switches && o.hooks[ETL_HOOK_CSWITCH])))) continue;
        etl_event_decode(r, &ev);
        if (o.expand && ev.kind == ETL_EVENT_CCSWAP_BATCH) {
            /* The rules every reader applies to a batch's switches (the model's): none after its buffer's flush,
             * and none before its CPU's switch ahead of it (etl_sched_takes); the first told at the batch. */
            uint64_t bad_time = x.stats.bad_time;
            etl_batch_expand_window(&x, x.t_lo, etl_iter_time_limit(it));
            bool had = r->cpu < ncpu && etl_batch_expand_pending(&cpus[r->cpu]);
            back_run prev = {0}, cur = {r->buffer_index, r->offset, 0, 0, 0}, *run = had ? &prev : &cur;
            if (had) {
                prev.buf = order[r->cpu].buf;
                prev.off = order[r->cpu].off;
            }
            etl_batch_expand_stats before = x.stats;
            /* The batch was written at its header's time: none of its switches is later (kernel-events.md 6.5). */
            etl_batch_expand_begin_written(&x, r->cpu, r->payload, bias, (uint8_t)r->version, etl_record_ts_or_none(r));
            while (n < o.limit && etl_batch_expand_next(&x, &sw) == ETL_OK) {
                bool back = goes_back(order, &sw, run);
                run = &cur; /* the first switch out was the pending one */
                if (back) continue;
                emit_switch(&l, o.format, &sw, clk);
                n++;
            }
            if (r->cpu < ncpu) {
                order[r->cpu].buf = r->buffer_index;
                order[r->cpu].off = r->offset;
            }
            back_tell(it, &prev);
            back_tell(it, &cur);
            if (x.stats.bad_time != bad_time)
                etl_iter_bad_time(it, r, x.walk.time, "hook 0x0525, a switch", "the batch's switches from there on dropped");
            etl_batch_expand_tell(&x, &before, in.reader, r->buffer_index, r->offset, &cc_damage);
            continue;
        }
        emit_record(&l, o.format, r, &ev, clk, bias);
        n++;
    }
    while (o.expand && n < o.limit && etl_batch_expand_finish(&x, &sw) == ETL_OK) {
        back_run b = {sw.cpu < ncpu ? order[sw.cpu].buf : 0, sw.cpu < ncpu ? order[sw.cpu].off : 0, 0, 0, 0};
        bool back = goes_back(order, &sw, &b);
        back_tell(it, &b);
        if (back) continue;
        emit_switch(&l, o.format, &sw, clk);
        n++;
    }
    chunk_flush(&l);
    cli_progress_end(&bar);
    if (o.expand && (x.stats.bad_index || x.stats.truncated || x.stats.bad_cpu || x.stats.short_batches ||
                     x.stats.bad_state || x.stats.bad_priority) && !o.quiet)
        fprintf(stderr, "%s: %s: warning: compact batches: %llu bad indexes, %llu truncated records, "
                        "%llu short batches, %llu on unknown CPUs, %llu states past 9, %llu priorities outside 0..31\n",
                prog, path, (unsigned long long)x.stats.bad_index, (unsigned long long)x.stats.truncated,
                (unsigned long long)x.stats.short_batches, (unsigned long long)x.stats.bad_cpu,
                (unsigned long long)x.stats.bad_state, (unsigned long long)x.stats.bad_priority);
    etl_stats st = *etl_iter_stats_get(it);
    etl_stats none = {.first_problem_offset = UINT64_MAX};
    etl_stats_add(&st, &cc_damage, &none);
    etl_iter_close(it);
    free(cpus);
    free(order);
    free(o.hooks);
    if (cli_stdout_done("dump") != EXIT_OK) {
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    return cli_close(&in, &st);
}

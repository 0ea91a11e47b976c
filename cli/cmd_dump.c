/* cmd_dump.c - `etlkit dump`: one line per record, as JSON lines, CSV or aligned text. */
#include <stdlib.h>
#include <string.h>
#include "common.h"

typedef enum { FMT_JSONL, FMT_CSV, FMT_TEXT } dump_format;

typedef struct dump_opts {
    dump_format format;
    etl_order order;
    uint64_t limit;
    int quiet;
} dump_opts;

#define LINE_CAP 8192

/* Appends ,"key": to a JSON line. */
static size_t jk(char *b, size_t n, const char *key)
{
    b[n++] = ',';
    b[n++] = '"';
    size_t k = strlen(key);
    memcpy(b + n, key, k);
    n += k;
    b[n++] = '"';
    b[n++] = ':';
    return n;
}

static size_t jl_u(char *b, size_t n, const char *key, uint64_t v)
{
    n = jk(b, n, key);
    return n + fmt_u64(b + n, v);
}

static size_t line_jsonl(char *b, const etl_record *r, const etl_clock *clk)
{
    size_t n = 0;
    memcpy(b, "{\"buf\":", 7);
    n = 7;
    n += fmt_u64(b + n, r->buffer_index);
    n = jl_u(b, n, "off", r->offset);
    n = jl_u(b, n, "cpu", r->cpu);
    n = jl_u(b, n, "htype", r->htype);
    n = jl_u(b, n, "size", r->size);
    if (r->has & ETL_REC_VERSION) n = jl_u(b, n, "ver", r->version);
    if (r->has & ETL_REC_HOOK) n = jl_u(b, n, "hook", r->hook);
    if (r->has & ETL_REC_PROVIDER) {
        n = jk(b, n, "provider");
        b[n++] = '"';
        etl_guid_format(&r->provider, b + n);
        n += 36;
        b[n++] = '"';
    }
    if (r->has & ETL_REC_ID) n = jl_u(b, n, "id", r->id);
    if (r->has & ETL_REC_OPCODE) n = jl_u(b, n, "opcode", r->opcode);
    if (r->has & ETL_REC_TID) {
        n = jl_u(b, n, "tid", r->tid);
        n = jl_u(b, n, "pid", r->pid);
    }
    if (r->has & ETL_REC_TS) {
        n = jl_u(b, n, "ts", r->ts);
        n = jk(b, n, "ns");
        n += fmt_i64(b + n, etl_clock_ns(clk, r->ts));
    }
    if (r->has & ETL_REC_PMC) {
        n = jk(b, n, "pmc");
        b[n++] = '[';
        for (unsigned i = 0; i < r->pmc_count; i++) {
            if (i) b[n++] = ',';
            n += fmt_u64(b + n, etl_record_pmc(r, i));
        }
        b[n++] = ']';
    }
    if (r->has & ETL_REC_PEBS) n = jl_u(b, n, "pebs", r->pebs_index);
    n = jl_u(b, n, "len", r->payload.n);
    b[n++] = '}';
    b[n++] = '\n';
    return n;
}

static const char csv_header[] = "buf,off,cpu,htype,size,ver,hook,provider,id,opcode,tid,pid,ts,ns,pmc,pebs,len\n";

static size_t csv_u(char *b, size_t n, int present, uint64_t v)
{
    if (present) n += fmt_u64(b + n, v);
    b[n++] = ',';
    return n;
}

static size_t line_csv(char *b, const etl_record *r, const etl_clock *clk)
{
    size_t n = 0;
    n = csv_u(b, n, 1, r->buffer_index);
    n = csv_u(b, n, 1, r->offset);
    n = csv_u(b, n, 1, r->cpu);
    n = csv_u(b, n, 1, r->htype);
    n = csv_u(b, n, 1, r->size);
    n = csv_u(b, n, r->has & ETL_REC_VERSION, r->version);
    n = csv_u(b, n, r->has & ETL_REC_HOOK, r->hook);
    if (r->has & ETL_REC_PROVIDER) {
        etl_guid_format(&r->provider, b + n);
        n += 36;
    }
    b[n++] = ',';
    n = csv_u(b, n, r->has & ETL_REC_ID, r->id);
    n = csv_u(b, n, r->has & ETL_REC_OPCODE, r->opcode);
    n = csv_u(b, n, r->has & ETL_REC_TID, r->tid);
    n = csv_u(b, n, r->has & ETL_REC_TID, r->pid);
    n = csv_u(b, n, r->has & ETL_REC_TS, r->ts);
    if (r->has & ETL_REC_TS) n += fmt_i64(b + n, etl_clock_ns(clk, r->ts));
    b[n++] = ',';
    for (unsigned i = 0; i < r->pmc_count; i++) {
        if (i) b[n++] = ';';
        n += fmt_u64(b + n, etl_record_pmc(r, i));
    }
    b[n++] = ',';
    n = csv_u(b, n, r->has & ETL_REC_PEBS, r->pebs_index);
    n += fmt_u64(b + n, r->payload.n);
    b[n++] = '\n';
    return n;
}

static size_t line_text(char *b, const etl_record *r, const etl_clock *clk)
{
    char ts[32] = "", name[64] = "", ids[40] = "";
    if (r->has & ETL_REC_TS) {
        int64_t ns = etl_clock_ns(clk, r->ts);
        uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
        snprintf(ts, sizeof ts, "%s%llu.%09llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000000000),
                 (unsigned long long)(a % 1000000000));
    }
    if (r->has & ETL_REC_HOOK) {
        const char *hn = etl_hook_name(r->hook);
        snprintf(name, sizeof name, "0x%04x %s", r->hook, hn ? hn : "");
    } else if (r->has & ETL_REC_PROVIDER) {
        etl_guid_format(&r->provider, name);
        if (r->has & ETL_REC_ID)
            snprintf(name + 36, sizeof name - 36, " id %u", r->id);
        else if (r->has & ETL_REC_OPCODE)
            snprintf(name + 36, sizeof name - 36, " op %u", r->opcode);
    }
    if (r->has & ETL_REC_TID) snprintf(ids, sizeof ids, "tid %6u pid %6u", r->tid, r->pid);
    int k = snprintf(b, LINE_CAP, "%16s cpu %3u %-14s v%-2u %-48s %-22s len %u\n", ts, r->cpu,
                     etl_htype_name(r->htype), r->version, name, ids, (unsigned)r->payload.n);
    return k < 0 ? 0 : (size_t)k < LINE_CAP ? (size_t)k : LINE_CAP - 1;
}

static void help(void)
{
    printf("Usage: %s dump [OPTIONS] FILE\n\n"
           "Prints one line per record of an ETL file.\n\n"
           "  --order time|file     time: per-CPU streams merged by timestamp (default);\n"
           "                        file: buffers and records as they lie in the file\n"
           "  --format jsonl|csv|text  output format (default text)\n"
           "  --limit N             stop after N records\n"
           "  --quiet               do not print a warning for each damaged buffer\n"
           "  -h, --help            this help\n\n"
           "JSON keys, in this order, each only where the record's header has it:\n"
           "  buf off cpu htype size ver hook provider id opcode tid pid ts ns pmc pebs len\n"
           "ts is the raw timestamp, ns nanoseconds since the logfile header's time.\n\n"
           "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 damaged input, 64 usage.\n", prog);
}

static int parse(int argc, char **argv, dump_opts *o, const char **path)
{
    memset(o, 0, sizeof *o);
    o->format = FMT_TEXT;
    o->order = ETL_ORDER_TIME;
    o->limit = UINT64_MAX;
    *path = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = NULL;
        if (cli_is_help(a)) {
            help();
            return -1;
        }
        if ((strcmp(a, "--order") == 0 || strcmp(a, "--format") == 0 || strcmp(a, "--limit") == 0)) {
            if (i + 1 >= argc) return cli_usage_error("dump", "%s needs a value", a);
            v = argv[++i];
        } else if (strncmp(a, "--order=", 8) == 0 || strncmp(a, "--format=", 9) == 0 ||
                   strncmp(a, "--limit=", 8) == 0) {
            v = strchr(a, '=') + 1;
        }
        if (strncmp(a, "--order", 7) == 0 && v) {
            if (strcmp(v, "time") == 0) o->order = ETL_ORDER_TIME;
            else if (strcmp(v, "file") == 0) o->order = ETL_ORDER_FILE;
            else return cli_usage_error("dump", "--order must be time or file, not '%s'", v);
        } else if (strncmp(a, "--format", 8) == 0 && v) {
            if (strcmp(v, "jsonl") == 0 || strcmp(v, "json") == 0) o->format = FMT_JSONL;
            else if (strcmp(v, "csv") == 0) o->format = FMT_CSV;
            else if (strcmp(v, "text") == 0) o->format = FMT_TEXT;
            else return cli_usage_error("dump", "--format must be jsonl, csv or text, not '%s'", v);
        } else if (strncmp(a, "--limit", 7) == 0 && v) {
            char *end;
            o->limit = strtoull(v, &end, 10);
            if (!*v || *end) return cli_usage_error("dump", "--limit needs a number, not '%s'", v);
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            o->quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("dump", "unknown option '%s'", a);
        } else if (!*path) {
            *path = a;
        } else {
            return cli_usage_error("dump", "one FILE only");
        }
    }
    if (!*path) return cli_usage_error("dump", "missing FILE");
    return 0;
}

int cmd_dump(int argc, char **argv)
{
    dump_opts o;
    const char *path;
    int prc = parse(argc, argv, &o, &path);
    if (prc < 0) return EXIT_OK;
    if (prc > 0) return prc;

    cli_input in;
    int rc = cli_open(&in, path, o.quiet);
    if (rc != EXIT_OK) return rc;
    etl_iter *it;
    if (etl_iter_open(in.reader, o.order, &it) != ETL_OK) {
        fprintf(stderr, "%s: out of memory\n", prog);
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    const etl_clock *clk = etl_reader_clock(in.reader);
    if (o.format == FMT_CSV) fputs(csv_header, stdout);
    cli_progress bar;
    cli_progress_start(&bar, etl_reader_file_size(in.reader));
    char line[LINE_CAP];
    etl_record rec;
    uint64_t n = 0;
    while (n < o.limit && etl_iter_next(it, &rec) == ETL_OK) {
        size_t len;
        switch (o.format) {
        case FMT_JSONL: len = line_jsonl(line, &rec, clk); break;
        case FMT_CSV: len = line_csv(line, &rec, clk); break;
        default: len = line_text(line, &rec, clk); break;
        }
        fwrite(line, 1, len, stdout);
        if ((++n & 0xFFFF) == 0) cli_progress_update(&bar, etl_iter_progress(it));
    }
    cli_progress_end(&bar);
    etl_stats st = *etl_iter_stats(it);
    etl_iter_close(it);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: write error on standard output\n", prog);
        cli_close(&in, NULL);
        return EXIT_IO;
    }
    return cli_close(&in, &st);
}

/* cmd_convert.c - `etlkit convert`: rewrite a trace, CSwitch events <-> compact batches. */
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "opts.h"
#include "out.h"
#include "etlkit/writer.h"
#include "base/diag.h"
#include "base/outfile.h"
#include "writer/writer_internal.h"

typedef struct conv_progress {
    cli_progress bar;
    uint64_t last;
} conv_progress;

/* A damaged input is written twice (etl_convert: the second writing marks the losses): the bar starts again,
 * saying why, rather than going back silently (the warnings themselves come at the end). */
static void progress(void *ctx, uint64_t done, uint64_t total)
{
    conv_progress *p = ctx;
    if (!p->bar.total) cli_progress_start(&p->bar, total); /* first call: decide whether to show it */
    if (done < p->last && !p->bar.label) {
        p->bar.label = "  writing again: records were lost (told at the end)";
        p->bar.last_pct = 101;
    }
    p->last = done;
    cli_progress_update(&p->bar, done);
}

static const cli_cmd convert_cmd = {
    "convert", "IN.etl -o OUT.etl [OPTIONS]",
    "Rewrites a trace. Every record is kept, in its CPU's buffers and in time order,\n"
    "except the context switches when --cswitch asks for the other format.\n",
    {"IN.etl"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 input not an ETL file, 3 input damaged, 64 usage.\n"};

/* --buffer-size N: what the writer takes. */
static int buffer_size(const cli_opt *o, const char *v, char *err, size_t cap)
{
    (void)err, (void)cap;
    char *end;
    if (*v < '0' || *v > '9') return -1;
    unsigned long long n = strtoull(v, &end, 0);
    if (*end || n < 4096 || n > (16u << 20) || n % 8) return -1;
    *(uint32_t *)o->dst = (uint32_t)n;
    return 0;
}

int cmd_convert(int argc, char **argv)
{
    etl_convert_options o = {0};
    o.sz = sizeof o;
    o.compress = -1;
    o.bias = -1;
    const char *in = NULL, *out = NULL;
    int json = 0, quiet = 0, force = 0;
    static const char *const cswitch_words[] = {"keep", "compact", "full", NULL};
    static const int cswitch_vals[] = {ETL_CSWITCH_KEEP, ETL_CSWITCH_COMPACT, ETL_CSWITCH_FULL};
    const cli_opt table[] = {
        {.kind = CLI_OPT_STRING, .name = "output", .short_name = 'o', .arg = "FILE", .dst = &out, .need = "a file",
         .flags = CLI_OPT_REQUIRED,
         .help = "the ETL file to write (required; not standard output: the header is written last); written under "
                 "a temporary name beside it, renamed into place when complete"},
        CLI_FLAG("force", 0, "replace an existing FILE (else refused); a symbolic link is replaced itself, never "
                 "written through", &force, 1),
        {.kind = CLI_OPT_ENUM, .name = "cswitch", .arg = "keep|compact|full", .dst = &o.cswitch,
         .words = cswitch_words, .vals = cswitch_vals, .need = "keep, compact or full",
         .help = "compact: CSwitch events (0x0524) become compact batches (0x0525) cut by the kernel's five flush "
                 "rules; full: batches become CSwitch v2 events, the new thread paired from the next switch on the "
                 "CPU, and every field a batch does not carry written as all ones (never invented)"},
        CLI_FLAG("compress", 0, "Plain LZ77 buffers (default: as the input)", &o.compress, 1),
        CLI_FLAG("no-compress", 0, "buffers not compressed (default: as the input)", &o.compress, 0),
        {.kind = CLI_OPT_CUSTOM, .name = "buffer-size", .arg = "N", .parse = buffer_size, .dst = &o.buffer_size,
         .need = "a multiple of 8 from 4096 to 16777216", .help = "bytes per buffer (default: as the input)"},
        /* The encoder's range: every state 0..9 above the bias must fit StateWr's 6 bits. */
        {.kind = CLI_OPT_UINT, .name = "max-wait-reason", .arg = "N", .dst = &o.bias, .size = sizeof o.bias, .min = 1,
         .max = ETL_CCSWAP_STATE_WR_MAX - ETL_CCSWAP_STATE_MAX, .need = "1..54", .flags = CLI_OPT_BASE0,
         .help = "StateWr bias of the batches, 1..54 (default: from the OS build)"},
        CLI_FLAG("json", 0, "print the counts as one JSON object on stdout", &json, 1),
        CLI_FLAG("quiet", 'q', "no warnings about the input", &quiet, 1),
        CLI_END};
    int pr = cli_opts_parse(&convert_cmd, table, argc, argv, &in);
    if (pr != CLI_OPTS_RUN) return pr;
    if (strcmp(out, "-") == 0)
        return cli_usage_error("convert", "-o needs a file, not standard output (the header is written last)");
    /* The output rules of every command (base/outfile.h), before reading anything. */
    etl_outfile of;
    etl_diag d = {0};
    etl_status ck = etl_outfile_check(out, &of, &d);
    if (ck == ETL_OK) ck = etl_outfile_may_replace(&of, out, force, in, &d);
    etl_outfile_discard(&of);
    if (ck == ETL_E_INVALID_ARG) return cli_usage_error("convert", "%s", d.msg); /* the output is the input */
    if (ck != ETL_OK) {
        fprintf(stderr, "%s convert: %s\n", prog, d.msg);
        return EXIT_IO;
    }

    cli_input ci = {0};
    ci.path = in;
    ci.quiet = quiet;
    o.on_diag = quiet ? NULL : cli_diag_printer;
    o.diag_ctx = &ci;
    conv_progress bar = {{0, 0, 101, NULL}, 0};
    o.on_progress = progress;
    o.progress_ctx = &bar;
    etl_convert_stats st;
    memset(&d, 0, sizeof d);
    etl_status rc = etl_convert(in, out, &o, &st, &d);
    cli_progress_end(&bar.bar);
    cli_diag_done(&ci);
    if (rc == ETL_E_NOT_ETL) {
        fprintf(stderr, "%s: %s: %s\n", prog, in, d.msg);
        return EXIT_NOT_ETL;
    }
    if (rc == ETL_E_INVALID_ARG) return cli_usage_error("convert", "%s", d.msg[0] ? d.msg : etl_status_str(rc));
    if (rc != ETL_OK) {
        fprintf(stderr, "%s convert: %s\n", prog, d.msg[0] ? d.msg : etl_status_str(rc));
        return EXIT_IO;
    }
    /*
     * records_out counts what the conversion wrote; the header's records are apart: the input's logfile
     * header and first header extension (in records_in) are made anew by the writer, which writes its own
     * (in the output, as info counts it). The input's are what no other count holds, so that
     *   records_in = records_out - batches_out - cswitch_out + records_dropped + duplicates_dropped
     *                + cswitch_in + batches_in + header_records_in
     *   the output's records = records_out + header_records_out
     */
    uint64_t copied = st.records_out - st.batches_out - st.cswitch_out;
    uint64_t consumed = copied + st.records_dropped + st.duplicates_dropped + st.cswitch_in + st.batches_in;
    uint64_t header_in = st.records_in > consumed ? st.records_in - consumed : 0;
    if (json) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        jw_u64(&w, "records_in", st.records_in);
        jw_u64(&w, "records_out", st.records_out);
        jw_u64(&w, "records_dropped", st.records_dropped);
        jw_u64(&w, "header_records_in", header_in);
        jw_u64(&w, "header_records_out", ETL_WRITER_HEADER_RECORDS);
        jw_u64(&w, "cswitch_in", st.cswitch_in);
        jw_u64(&w, "switches_encoded", st.switches_encoded);
        jw_u64(&w, "switches_dropped", st.switches_dropped);
        jw_u64(&w, "batches_out", st.batches_out);
        jw_u64(&w, "batches_in", st.batches_in);
        jw_u64(&w, "switches_expanded", st.switches_expanded);
        jw_u64(&w, "cswitch_out", st.cswitch_out);
        jw_u64(&w, "order_overflows", st.order_overflows);
        jw_u64(&w, "duplicates_dropped", st.duplicates_dropped);
        jw_u64(&w, "input_damaged", st.input_damaged);
        jw_obj(&w, "flushes");
        for (unsigned i = 1; i < ETL_CCSWAP_FLUSH_REASONS; i++)
            jw_u64(&w, etl_ccswap_flush_reason_name(i), st.encoder.flushes[i]);
        jw_obj_end(&w);
        jw_obj_end(&w);
        jw_end(&w);
    } else if (!quiet) {
        fprintf(stderr, "%s convert: %s: %llu records in, %llu out (besides the header: %llu in, %u made anew)",
                prog, out, (unsigned long long)st.records_in, (unsigned long long)st.records_out,
                (unsigned long long)header_in, ETL_WRITER_HEADER_RECORDS);
        if (st.switches_encoded)
            fprintf(stderr, "; %llu CSwitch events -> %llu compact batches", (unsigned long long)st.switches_encoded,
                    (unsigned long long)st.batches_out);
        if (st.batches_in)
            fprintf(stderr, "; %llu compact batches -> %llu CSwitch events", (unsigned long long)st.batches_in,
                    (unsigned long long)st.cswitch_out);
        fprintf(stderr, "\n");
    }
    if (st.order_overflows && !quiet)
        fprintf(stderr, "%s convert: warning: %llu times a CPU held too many events to keep time order\n", prog,
                (unsigned long long)st.order_overflows);
    /* What a compact record could not hold as it was (the encoder's counts, in etl_convert_stats.encoder). */
    const etl_ccswap_encoder_stats *es = &st.encoder;
    const char *bias = o.bias >= 0 ? "--max-wait-reason" : "from the OS build";
    if (es->priority_clamped && !quiet)
        fprintf(stderr, "%s convert: note: %llu switch%s with an old thread priority outside 0..31, written as 0 "
                "or 31\n", prog, (unsigned long long)es->priority_clamped, es->priority_clamped == 1 ? "" : "es");
    if (es->wait_time_clamped && !quiet)
        fprintf(stderr, "%s convert: note: %llu switch%s with a NewThreadWaitTime past 131071 (a compact record's 17 "
                "bits), written as 131071\n",
                prog, (unsigned long long)es->wait_time_clamped, es->wait_time_clamped == 1 ? "" : "es");
    if (es->wait_reason_dropped && !quiet)
        fprintf(stderr, "%s convert: note: %llu switch%s waiting for a reason at or past the StateWr bias (%s), "
                "written as Waiting without the reason\n",
                prog, (unsigned long long)es->wait_reason_dropped, es->wait_reason_dropped == 1 ? "" : "es", bias);
    if (cli_stdout_done("convert") != EXIT_OK) return EXIT_IO;
    return st.input_damaged ? EXIT_DAMAGED : EXIT_OK;
}

/* cmd_convert.c - `etlkit convert`: rewrite a trace, CSwitch events <-> compact batches. */
#include <stdlib.h>
#include <string.h>
#include "common.h"
#include "out.h"
#include "etlkit/writer.h"
#include "base/diag.h"
#include "base/outfile.h"

static void progress(void *ctx, uint64_t done, uint64_t total)
{
    cli_progress *p = ctx;
    if (!p->total) cli_progress_start(p, total); /* first call: decide whether to show it */
    cli_progress_update(p, done);
}

static void help(void)
{
    printf("Usage: %s convert IN.etl -o OUT.etl [OPTIONS]\n\n"
           "Rewrites a trace. Every record is kept, in its CPU's buffers and in time order,\n"
           "except the context switches when --cswitch asks for the other format:\n\n"
           "  -o, --output FILE        the ETL file to write (required; not standard output: the\n"
           "                           header is written last); written under a temporary name\n"
           "                           beside it, renamed into place when complete\n"
           "  --force                  replace an existing FILE (else refused); a symbolic link is\n"
           "                           replaced itself, never written through\n"
           "  --cswitch keep|compact|full\n"
           "                           compact: CSwitch events (0x0524) become compact batches\n"
           "                           (0x0525) cut by the kernel's five flush rules;\n"
           "                           full: batches become CSwitch v2 events, the new thread\n"
           "                           paired from the next switch on the CPU, and every field a\n"
           "                           batch does not carry written as all ones (never invented)\n"
           "  --compress / --no-compress  Plain LZ77 buffers (default: as the input)\n"
           "  --buffer-size N          bytes per buffer (default: as the input)\n"
           "  --max-wait-reason N      StateWr bias of the batches, 1..54 (default: from the OS build)\n"
           "  --json                   print the counts as one JSON object on stdout\n"
           "  --quiet                  no warnings about the input\n"
           "  -h, --help               this help\n\n"
           "Exit status: 0 ok, 1 I/O error, 2 input not an ETL file, 3 input damaged, 64 usage.\n",
           prog);
}

int cmd_convert(int argc, char **argv)
{
    etl_convert_options o = {0};
    o.sz = sizeof o;
    o.compress = -1;
    o.bias = -1;
    const char *in = NULL, *out = NULL;
    int json = 0, quiet = 0, force = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (cli_is_help(a)) {
            help();
            return EXIT_OK;
        } else if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0) {
            if (!v) return cli_usage_error("convert", "%s needs a file", a);
            out = v;
            i++;
        } else if (strcmp(a, "--cswitch") == 0) {
            if (!v) return cli_usage_error("convert", "--cswitch needs keep, compact or full");
            if (strcmp(v, "keep") == 0) o.cswitch = ETL_CSWITCH_KEEP;
            else if (strcmp(v, "compact") == 0) o.cswitch = ETL_CSWITCH_COMPACT;
            else if (strcmp(v, "full") == 0) o.cswitch = ETL_CSWITCH_FULL;
            else return cli_usage_error("convert", "--cswitch must be keep, compact or full, not '%s'", v);
            i++;
        } else if (strcmp(a, "--force") == 0) {
            force = 1;
        } else if (strcmp(a, "--compress") == 0) {
            o.compress = 1;
        } else if (strcmp(a, "--no-compress") == 0) {
            o.compress = 0;
        } else if (strcmp(a, "--buffer-size") == 0 || strcmp(a, "--max-wait-reason") == 0) {
            char *end;
            unsigned long n = v ? strtoul(v, &end, 0) : 0;
            if (!v || !*v || *end || *v == '-') return cli_usage_error("convert", "%s needs a number", a);
            if (a[2] == 'b') {
                if (n < 4096 || n > (16u << 20) || n % 8)
                    return cli_usage_error("convert", "--buffer-size must be a multiple of 8 from 4096 to 16777216");
                o.buffer_size = (uint32_t)n;
            } else {
                /* The encoder's range: every state 0..9 above the bias must fit StateWr's 6 bits. */
                if (n < 1 || n > ETL_CCSWAP_STATE_WR_MAX - ETL_CCSWAP_STATE_MAX)
                    return cli_usage_error("convert", "--max-wait-reason must be 1..%u, not '%s'",
                                           ETL_CCSWAP_STATE_WR_MAX - ETL_CCSWAP_STATE_MAX, v);
                o.bias = (int)n;
            }
            i++;
        } else if (strcmp(a, "--json") == 0) {
            json = 1;
        } else if (strcmp(a, "--quiet") == 0 || strcmp(a, "-q") == 0) {
            quiet = 1;
        } else if (a[0] == '-' && a[1]) {
            return cli_usage_error("convert", "unknown option '%s'", a);
        } else if (!in) {
            in = a;
        } else {
            return cli_usage_error("convert", "one input file only");
        }
    }
    if (!in) return cli_usage_error("convert", "missing IN.etl");
    if (!out) return cli_usage_error("convert", "missing -o OUT.etl");
    if (strcmp(out, "-") == 0)
        return cli_usage_error("convert", "-o needs a file, not standard output (the header is written last)");
    /* The output rules of every command (base/outfile.h), before reading anything. */
    etl_outfile of;
    etl_diag d = {0};
    etl_status ck = etl_outfile_check(out, &of, &d);
    if (ck == ETL_OK) ck = etl_outfile_may_replace(&of, out, force, in, &d);
    etl_outfile_discard(&of);
    if (ck != ETL_OK) {
        fprintf(stderr, "%s: %s\n", prog, d.msg);
        return ck == ETL_E_INVALID_ARG ? EXIT_USAGE : EXIT_IO;
    }

    cli_input ci = {0};
    ci.path = in;
    ci.quiet = quiet;
    o.on_diag = quiet ? NULL : cli_diag_printer;
    o.diag_ctx = &ci;
    cli_progress bar = {0, 0, 101};
    o.on_progress = progress;
    o.progress_ctx = &bar;
    etl_convert_stats st;
    memset(&d, 0, sizeof d);
    etl_status rc = etl_convert(in, out, &o, &st, &d);
    cli_progress_end(&bar);
    cli_diag_flush(&ci);
    if (ci.diag_suppressed)
        fprintf(stderr, "%s: %s: warning: %u more problems not shown\n", prog, in, ci.diag_suppressed);
    if (rc == ETL_E_NOT_ETL) {
        fprintf(stderr, "%s: %s: %s\n", prog, in, d.msg);
        return EXIT_NOT_ETL;
    }
    if (rc != ETL_OK) {
        fprintf(stderr, "%s: %s\n", prog, d.msg[0] ? d.msg : etl_status_str(rc));
        return rc == ETL_E_INVALID_ARG ? EXIT_USAGE : EXIT_IO;
    }
    if (json) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        jw_u64(&w, "records_in", st.records_in);
        jw_u64(&w, "records_out", st.records_out);
        jw_u64(&w, "records_dropped", st.records_dropped);
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
        fprintf(stderr, "%s: %s: %llu records in, %llu out", prog, out, (unsigned long long)st.records_in,
                (unsigned long long)st.records_out);
        if (st.switches_encoded)
            fprintf(stderr, "; %llu CSwitch events -> %llu compact batches", (unsigned long long)st.switches_encoded,
                    (unsigned long long)st.batches_out);
        if (st.batches_in)
            fprintf(stderr, "; %llu compact batches -> %llu CSwitch events", (unsigned long long)st.batches_in,
                    (unsigned long long)st.cswitch_out);
        fprintf(stderr, "\n");
    }
    if (st.order_overflows && !quiet)
        fprintf(stderr, "%s: warning: %llu times a CPU held too many events to keep time order\n", prog,
                (unsigned long long)st.order_overflows);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "%s: write error on standard output\n", prog);
        return EXIT_IO;
    }
    return st.input_damaged ? EXIT_DAMAGED : EXIT_OK;
}

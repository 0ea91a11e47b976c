/* common.c - input opening with capped diagnostics, progress bar, output helpers. */
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "common.h"
#include "out.h"
#include "base/platform.h"
#include "base/textsafe.h"

#define DIAG_MAX_LINES 20 /* the size of cli_input.held */

const char *prog = "etlkit";

void cli_diag_printer(void *ctx, const etl_diag *d)
{
    cli_input *in = ctx;
    if (in->quiet) return;
    /* Its place among the kept ones, by (offset, text). */
    unsigned n = in->diag_held, i = 0;
    while (i < n && (in->held_off[i] < d->file_offset ||
                     (in->held_off[i] == d->file_offset && strcmp(in->held[i], d->msg) < 0)))
        i++;
    /* The same problem met twice (two walks over one buffer) is one warning. */
    if (i < n && in->held_off[i] == d->file_offset && strcmp(in->held[i], d->msg) == 0) return;
    if (n == DIAG_MAX_LINES) {
        in->diag_suppressed++;
        if (i == n) return;
        n--; /* the last kept one gives way */
    }
    memmove(in->held[i + 1], in->held[i], (n - i) * sizeof in->held[0]);
    memmove(in->held_off + i + 1, in->held_off + i, (n - i) * sizeof in->held_off[0]);
    snprintf(in->held[i], sizeof in->held[0], "%s", d->msg);
    in->held_off[i] = d->file_offset;
    in->diag_held = n + 1;
}

void cli_diag_flush(cli_input *in)
{
    for (unsigned i = 0; i < in->diag_held; i++) fprintf(stderr, "%s: %s: warning: %s\n", prog, in->path, in->held[i]);
    in->diag_held = 0;
}

void cli_diag_hold(cli_input *in)
{
    cli_diag_flush(in);
    in->diag_suppressed = 0;
}

void cli_diag_release(cli_input *in, int keep)
{
    if (!keep) in->diag_held = in->diag_suppressed = 0;
}

int cli_open(cli_input *in, const char *path, int quiet)
{
    memset(in, 0, sizeof *in);
    in->path = path;
    in->quiet = quiet;
    etl_reader_options o = {sizeof o, cli_diag_printer, in};
    etl_diag d = {0};
    etl_status st = etl_reader_open(path, &o, &in->reader, &d);
    if (st == ETL_OK) return EXIT_OK;
    if (st == ETL_E_NOT_ETL) {
        fprintf(stderr, "%s: %s: %s\n", prog, path, d.msg);
        return EXIT_NOT_ETL;
    }
    fprintf(stderr, "%s: %s\n", prog, d.msg[0] ? d.msg : etl_status_str(st));
    return EXIT_IO;
}

int cli_close(cli_input *in, const etl_stats *st)
{
    cli_diag_flush(in);
    if (in->diag_suppressed)
        fprintf(stderr, "%s: %s: warning: %u more problems not shown\n", prog, in->path,
                in->diag_suppressed);
    int damaged = st && etl_stats_damaged(st);
    etl_reader_close(in->reader);
    in->reader = NULL;
    return damaged ? EXIT_DAMAGED : EXIT_OK;
}

unsigned cli_threads_default(void)
{
    return etl_cpu_count();
}

int cli_parse_threads(const char *cmd, const char *v, unsigned *out)
{
    char *e;
    unsigned long n = v ? strtoul(v, &e, 10) : 0;
    if (!v || !*v || *e || n < 1 || n > 256) {
        cli_usage_error(cmd, "--threads needs a count, 1..256");
        return -1;
    }
    *out = (unsigned)n;
    return 0;
}

int cli_usage_error(const char *cmd, const char *fmt, ...)
{
    fprintf(stderr, "%s%s%s: ", prog, cmd ? " " : "", cmd ? cmd : "");
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nTry '%s%s%s --help'.\n", prog, cmd ? " " : "", cmd ? cmd : "");
    return EXIT_USAGE;
}

int cli_is_help(const char *arg)
{
    return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

void cli_progress_start(cli_progress *p, uint64_t total)
{
    p->on = total >= (64u << 20) && etl_isatty(STDERR_FILENO);
    p->total = total ? total : 1;
    p->last_pct = 101;
}

void cli_progress_update(cli_progress *p, uint64_t done)
{
    if (!p->on) return;
    unsigned pct = (unsigned)(done * 100 / p->total);
    if (pct > 100) pct = 100;
    if (pct == p->last_pct) return;
    p->last_pct = pct;
    char bar[41];
    unsigned fill = pct * 40 / 100;
    memset(bar, '#', fill);
    memset(bar + fill, '.', 40 - fill);
    bar[40] = 0;
    fprintf(stderr, "\r[%s] %3u%%", bar, pct);
}

void cli_progress_end(cli_progress *p)
{
    if (p->on) fprintf(stderr, "\r%60s\r", "");
}

size_t json_str_buf(char *buf, size_t len, size_t cap, const char *str)
{
    static const char hex[] = "0123456789abcdef";
    const unsigned char *s = (const unsigned char *)str;
    if (len + 2 > cap) return len;
    buf[len++] = '"';
    while (*s) {
        char esc[8];
        size_t en = 0, take = 1;
        unsigned c = *s;
        /* Plain ASCII, the common case, one byte at a time while the ellipsis still fits. */
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\' && len + 5 <= cap) {
            buf[len++] = (char)c;
            s++;
            continue;
        }
        uint32_t cp;
        int kind;
        take = etl_text_char(s, &cp, &kind);
        if (c == '"' || c == '\\') {
            esc[0] = '\\';
            esc[1] = (char)c;
            en = 2;
        } else if (kind == ETL_TEXT_INVALID) { /* not UTF-8: U+FFFD, so the output always is */
            memcpy(esc, "\xef\xbf\xbd", 3);
            en = 3;
        } else if (kind == ETL_TEXT_CONTROL) { /* C0, C1, separators, bidi: \u escapes (all in the BMP) */
            esc[0] = '\\';
            esc[1] = 'u';
            esc[2] = hex[cp >> 12 & 15];
            esc[3] = hex[cp >> 8 & 15];
            esc[4] = hex[cp >> 4 & 15];
            esc[5] = hex[cp & 15];
            en = 6;
        } else {
            memcpy(esc, s, take);
            en = take;
        }
        if (len + en + 4 > cap) { /* no room: end cleanly, with an ellipsis if it fits */
            if (len + 4 <= cap) {
                memcpy(buf + len, "\xe2\x80\xa6", 3);
                len += 3;
            }
            break;
        }
        memcpy(buf + len, esc, en);
        len += en;
        s += take;
    }
    buf[len++] = '"';
    return len;
}

void json_str(FILE *f, const char *s)
{
    static char buf[1 << 16]; /* header names are at most a few KB */
    size_t n = json_str_buf(buf, 0, sizeof buf, s);
    fwrite(buf, 1, n, f);
}

/* The escape of one character for text (ETL_TEXT_CONTROL or _INVALID) into out[8]; its length. */
static size_t text_escape(char out[8], uint32_t cp, int kind)
{
    static const char hex[] = "0123456789abcdef";
    size_t n = 0;
    out[n++] = '\\';
    if (kind == ETL_TEXT_INVALID || cp < 0x80) { /* a byte: \xNN */
        out[n++] = 'x';
    } else { /* a code point: \uNNNN */
        out[n++] = 'u';
        out[n++] = hex[cp >> 12 & 15];
        out[n++] = hex[cp >> 8 & 15];
    }
    out[n++] = hex[cp >> 4 & 15];
    out[n++] = hex[cp & 15];
    return n;
}

size_t text_str_buf(char *buf, size_t len, size_t cap, const char *str, int *cut)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        char esc[8];
        const char *from = esc;
        size_t en, take;
        if (*s >= 0x20 && *s < 0x7F) { /* plain ASCII: as it is */
            from = (const char *)s;
            en = take = 1;
        } else {
            uint32_t cp;
            int kind;
            take = etl_text_char(s, &cp, &kind);
            if (kind == ETL_TEXT_PLAIN) from = (const char *)s, en = take;
            else en = text_escape(esc, cp, kind);
        }
        if (len + en > cap) { /* whole characters and whole escapes only */
            if (cut) *cut = 1;
            break;
        }
        memcpy(buf + len, from, en);
        len += en;
        s += take;
    }
    return len;
}

size_t text_width(const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t w = 0;
    while (*s) {
        if (*s >= 0x20 && *s < 0x7F) {
            w++;
            s++;
            continue;
        }
        uint32_t cp;
        int kind;
        char esc[8];
        s += etl_text_char(s, &cp, &kind);
        w += kind == ETL_TEXT_PLAIN ? 1 : text_escape(esc, cp, kind);
    }
    return w;
}

void text_str(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        size_t n = 0;
        while (s[n] >= 0x20 && s[n] < 0x7F) n++; /* a run of plain ASCII: one write */
        if (n) {
            fwrite(s, 1, n, f);
            s += n;
            continue;
        }
        uint32_t cp;
        int kind;
        char esc[8];
        size_t take = etl_text_char(s, &cp, &kind);
        if (kind == ETL_TEXT_PLAIN) fwrite(s, 1, take, f);
        else fwrite(esc, 1, text_escape(esc, cp, kind), f);
        s += take;
    }
}

size_t fmt_u64(char *p, uint64_t v)
{
    /* Two digits per division, written in place from the end: this runs for every number of every line. */
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
                                "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
                                "8081828384858687888990919293949596979899";
    static const uint64_t p10[20] = {1u, 10u, 100u, 1000u, 10000u, 100000u, 1000000u, 10000000u, 100000000u,
                                     1000000000u, 10000000000u, 100000000000u, 1000000000000u, 10000000000000u,
                                     100000000000000u, 1000000000000000u, 10000000000000000u,
                                     100000000000000000u, 1000000000000000000u, 10000000000000000000u};
    if (v < 10) {
        *p = (char)('0' + v);
        return 1;
    }
    unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12; /* log10 from log2, maybe one over */
    size_t n = t + 1 - (v < p10[t]);
    char *e = p + n;
    while (v >= 100) {
        unsigned d = (unsigned)(v % 100) * 2;
        v /= 100;
        e -= 2;
        e[0] = pairs[d];
        e[1] = pairs[d + 1];
    }
    if (v >= 10) {
        e[-2] = pairs[v * 2];
        e[-1] = pairs[v * 2 + 1];
    } else {
        e[-1] = (char)('0' + v);
    }
    return n;
}

size_t fmt_i64(char *p, int64_t v)
{
    if (v >= 0) return fmt_u64(p, (uint64_t)v);
    p[0] = '-';
    return 1 + fmt_u64(p + 1, (uint64_t)0 - (uint64_t)v);
}

void log_file_mode_names(uint32_t mode, char *out, size_t cap)
{
    static const struct { uint32_t bit; const char *name; } names[] = {
        {0x00000001, "FILE_MODE_SEQUENTIAL"}, {0x00000002, "FILE_MODE_CIRCULAR"},
        {0x00000004, "FILE_MODE_APPEND"}, {0x00000008, "FILE_MODE_NEWFILE"},
        {0x00000010, "USE_MS_FLUSH_TIMER"}, {0x00000020, "FILE_MODE_PREALLOCATE"},
        {0x00000040, "NONSTOPPABLE_MODE"}, {0x00000080, "SECURE_MODE"},
        {0x00000100, "REAL_TIME_MODE"}, {0x00000200, "DELAY_OPEN_FILE_MODE"},
        {0x00000400, "BUFFERING_MODE"}, {0x00000800, "PRIVATE_LOGGER_MODE"},
        {0x00001000, "ADD_HEADER_MODE"}, {0x00002000, "USE_KBYTES_FOR_SIZE"},
        {0x00004000, "USE_GLOBAL_SEQUENCE"}, {0x00008000, "USE_LOCAL_SEQUENCE"},
        {0x00010000, "RELOG_MODE"}, {0x00020000, "PRIVATE_IN_PROC"},
        {0x00080000, "KD_FILTER_MODE"}, {0x00100000, "MODE_RESERVED"},
        {0x00400000, "STOP_ON_HYBRID_SHUTDOWN"}, {0x00800000, "PERSIST_ON_HYBRID_SHUTDOWN"},
        {0x01000000, "USE_PAGED_MEMORY"}, {0x02000000, "SYSTEM_LOGGER_MODE"},
        {0x04000000, "COMPRESSED_MODE"}, {0x08000000, "INDEPENDENT_SESSION_MODE"},
        {0x10000000, "NO_PER_PROCESSOR_BUFFERING"}, {0x20000000, "BLOCKING_MODE"},
        {0x80000000, "ADDTO_TRIAGE_DUMP"},
    };
    size_t n = 0;
    out[0] = 0;
    uint32_t left = mode;
    for (size_t i = 0; i < sizeof names / sizeof names[0] && n < cap; i++) {
        if (!(mode & names[i].bit)) continue;
        left &= ~names[i].bit;
        n += (size_t)snprintf(out + n, cap - n, "%s%s", n ? " | " : "", names[i].name);
    }
    if (left && n < cap) snprintf(out + n, cap - n, "%s0x%x", n ? " | " : "", left);
    if (!mode) snprintf(out, cap, "FILE_MODE_NONE");
}

const char *clock_type_name(uint32_t t)
{
    switch (t) {
    case ETL_CLOCK_RAW: return "raw";
    case ETL_CLOCK_QPC: return "qpc";
    case ETL_CLOCK_SYSTEM_TIME: return "system-time";
    case ETL_CLOCK_CPU_CYCLES: return "cpu-cycles";
    default: return "unknown";
    }
}

int cli_stdout_done(const char *cmd)
{
    int lost = tbl_failed();
    if (fflush(stdout) != 0 || ferror(stdout) || lost) {
        fprintf(stderr, "%s %s: %s\n", prog, cmd, lost ? "out of memory: a table lost rows" : "cannot write the output");
        return EXIT_IO;
    }
    return EXIT_OK;
}

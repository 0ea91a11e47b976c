/*
 * cmd_switches.c - `etlkit switches`: the CPU Usage (Precise) rows themselves, one
 * per switch-in, streamed as the model completes them. --csv writes WPA's column
 * names and units (spec analyses.md §7: s with 9 decimals, µs 3, ms 6, UTF-8 BOM,
 * CRLF) so scripts written for wpaexporter output read it unchanged.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/schedstacks.h"
#include "columns.h"
#include "symbols_cli.h"
#include "report.h"
#include "waits_stacks.h"

/* C_STACK: frames, root first (JSON: an array of labels; CSV: joined by STACK_SEP); only when the trace has them. */
enum { C_NUM, C_STR, C_STACK };

typedef struct col {
    const char *wpa;  /* CSV header */
    const char *key;  /* JSON key */
    int type;
} col;

static const col cols[] = {
    {"CPU", "cpu", C_NUM},
    {"New Process", "new_process", C_STR},
    {"New Thread Id", "new_tid", C_NUM},
    {"New Thread Name", "new_thread_name", C_STR},
    {"Old Process", "old_process", C_STR},
    {"Old Thread Id", "old_tid", C_NUM},
    {"Switch-In Time (s)", "switch_in_ns", C_NUM},
    {"Next Switch-Out Time (s)", "next_switch_out_ns", C_NUM},
    {"Last Switch-Out Time (s)", "last_switch_out_ns", C_NUM},
    {"Ready Time (s)", "ready_time_ns", C_NUM},
    {"CPU Usage (ms)", "cpu_usage_ns", C_NUM},
    {"CPU Usage (in view) (ms)", "cpu_usage_in_view_ns", C_NUM},
    {"Ready (µs)", "ready_ns", C_NUM},
    {"Waits (µs)", "waits_ns", C_NUM},
    {"Time Since Last (µs)", "time_since_last_ns", C_NUM},
    {"Old Switch-In Time (µs)", "old_switch_in_ns", C_NUM},
    {"Count", "count", C_NUM},
    {"Count: Waits", "count_waits", C_NUM},
    {"New In Pri", "new_in_pri", C_NUM},
    {"New Out Pri", "new_out_pri", C_NUM},
    {"New Prev Out Pri", "new_prev_out_pri", C_NUM},
    {"Old Out Pri", "old_out_pri", C_NUM},
    {"New Prev State", "new_prev_state", C_STR},
    {"New Prev Wait Reason", "new_prev_wait_reason", C_STR},
    {"New Prev Wait Mode", "new_prev_wait_mode", C_STR},
    {"New State", "new_state", C_STR},
    {"New Wait Reason", "new_wait_reason", C_STR},
    {"New Wait Mode", "new_wait_mode", C_STR},
    {"Old State", "old_state", C_STR},
    {"Old Wait Reason", "old_wait_reason", C_STR},
    {"Old Wait Mode", "old_wait_mode", C_STR},
    {"Readying Process", "readying_process", C_STR},
    {"Readying Thread Id", "readying_tid", C_NUM},
    {"Ready Thread In DPC", "ready_in_dpc", C_NUM},
    {"Adjust Reason", "adjust_reason", C_STR},
    {"Adjust Increment", "adjust_increment", C_NUM},
    {"Prev CState", "prev_cstate", C_NUM},
    {"Ideal Cpu", "ideal_cpu", C_NUM},
    {"First Readying Thread Id", "first_readying_tid", C_NUM},
    {"Planned New Thread Id", "planned_new_tid", C_NUM},
    {"New Thread Stack", "new_thread_stack", C_STACK},
    {"Readying Thread Stack", "readying_thread_stack", C_STACK},
};
#define NCOL (sizeof cols / sizeof cols[0])

/* A cell holds at most this many bytes (longer names are cut). */
#define CELL 300

/* Rows are built in place in one chunk, written when it fills: no stdio call a row. */
#define CHUNK (1u << 20)
#define ROW_MAX (NCOL * (6 * CELL + 16) + 64) /* every cell JSON-escaped at its worst */
#define C_NEW_STACK 40u
#define C_READYING_STACK 41u
/* A frame's label is whole; the room made at the start fits stacks of labels up to this many bytes (more: it grows). */
#define LABEL_MAX 256u
#define STACK_CELL_MAX (2u * ETL_STACK_MAX_FRAMES * (6u * LABEL_MAX + 16u) + 64u)
/* WPA's separator of a stack's frames in one CSV cell; a frame's own '/' (C++ operator/) and '%' are %2F and %25. */
#define STACK_SEP '/'


/* A process's label, "image (PID)", made once while its name stays (text: escaped, as text_str prints it). */
typedef struct plabel {
    uint32_t name;   /* the name offset it was made from; UINT32_MAX: not made */
    uint32_t len;
    uint8_t mb;      /* has characters of more than one byte */
    char s[CELL];
} plabel;

typedef struct ctx {
    const rep_args *a;
    rep_run *run;
    uint64_t rows;
    uint64_t want;             /* the columns the format shows */
    char *out;                 /* the chunk */
    size_t used;
    plabel *labels;            /* by process instance */
    size_t nlabels;
    uint16_t len[NCOL];        /* 0: blank */
    uint8_t mb[NCOL];          /* text: the cell has characters of more than one byte (columns < bytes) */
    char cell[NCOL][CELL + 1]; /* NUL-terminated */
    char jkey[NCOL][40];       /* "key": */
    uint8_t jklen[NCOL];
    etl_sched_stacks *stacks;  /* NULL: the trace walks no stack at its CSwitch or ReadyThread events */
    uint32_t stack[2];         /* this row's New Thread and Readying Thread stacks */
    size_t cap;                /* the chunk's bytes (it grows for a row of long labels) */
    char *joined;              /* scratch: a stack's labels, whole, joined (CSV: by STACK_SEP; JSON: by NUL) */
    size_t cjoined;
    bool oom;                  /* a stack cell could not be written */
    uint64_t with_stack[2], compact_rows;
} ctx;

static const cli_cmd switches_cmd = {
    "switches", "FILE [OPTIONS]",
    "One row per switch-in (WPA's CPU Usage (Precise) table), streamed: the new and old\n"
    "thread, switch-in, last and next switch-out and Ready Time, the Ready and Waits\n"
    "durations, the previous and next states, and the readying thread. Blank = unknown.\n"
    "--csv writes WPA's column headers and units (UTF-8 BOM, CRLF); --json one object per line\n"
    "with times in ns since the trace start. When the trace walks stacks at its CSwitch and\n"
    "ReadyThread events, --csv and --json add WPA's New Thread Stack and Readying Thread\n"
    "Stack (frames root first: joined by '/' in CSV, a frame's own '/' and '%' written\n"
    "%2F and %25; arrays in JSON; none for a compact batch's switch), and a line on\n"
    "standard error counts the rows with each.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

/* Text shows these columns alone: the others are not made. */
#define TEXT_COLS (1ull << 0 | 1ull << 6 | 1ull << 10 | 1ull << 1 | 1ull << 2 | 1ull << 5 | 1ull << 12 | 1ull << 13 | \
                   1ull << 22 | 1ull << 23 | 1ull << 31)

static void num(ctx *c, unsigned i, long long v)
{
    if (!(c->want >> i & 1)) return;
    size_t n = fmt_i64(c->cell[i], v);
    c->cell[i][n] = 0;
    c->len[i] = (uint16_t)n;
}

/* A time or duration: ns in JSON, the WPA unit (decimals) in CSV and text. */
static void tm(ctx *c, unsigned i, int64_t ns, unsigned decimals)
{
    if (c->a->format == FMT_JSON) num(c, i, ns);
    else if (c->want >> i & 1) c->len[i] = (uint16_t)fmt_fixed_n(c->cell[i], ns, decimals);
}

static void strn(ctx *c, unsigned i, const char *s, size_t n)
{
    if (!(c->want >> i & 1)) return;
    if (n > CELL - 1) n = CELL - 1;
    memcpy(c->cell[i], s, n);
    c->cell[i][n] = 0;
    c->len[i] = (uint16_t)n;
    c->mb[i] = 0;
}

/* A process label into l: as it is for CSV and JSON, escaped for text (whole characters, < CELL bytes). */
static void make_label(const ctx *c, plabel *l, const char *raw)
{
    if (c->a->format == FMT_TEXT) {
        l->len = (uint32_t)text_str_buf(l->s, 0, CELL - 1, raw, NULL);
        l->s[l->len] = 0;
    } else {
        l->len = (uint32_t)snprintf(l->s, sizeof l->s, "%s", raw);
    }
    l->mb = 0;
    for (uint32_t k = 0; k < l->len; k++) l->mb |= (uint8_t)((unsigned char)l->s[k] >> 7);
}

static void str(ctx *c, unsigned i, const char *s)
{
    if (s && c->want >> i & 1) strn(c, i, s, strlen(s));
}

/* rep_process_label of a thread, from the cache. */
static void label(ctx *c, unsigned i, uint32_t thread)
{
    const etl_sched *m = c->run->model;
    if (!(c->want >> i & 1)) return;
    if (thread == ETL_SCHED_IDLE) {
        strn(c, i, "Idle (0)", 8);
        return;
    }
    const etl_sched_thread *t = etl_sched_thread_at(m, thread);
    const etl_sched_process *p = t ? etl_sched_process_at(m, t->process) : NULL;
    if (!p) {
        strn(c, i, "Unknown", 7);
        return;
    }
    uint32_t k = t->process;
    if (k >= c->nlabels) {
        size_t n = c->nlabels ? c->nlabels : 256;
        while (n <= k) n *= 2;
        plabel *l = realloc(c->labels, n * sizeof *l);
        if (!l) {
            char tmp[256];
            plabel one;
            make_label(c, &one, rep_process_label(m, thread, tmp));
            strn(c, i, one.s, one.len);
            c->mb[i] = one.mb;
            return;
        }
        for (size_t j = c->nlabels; j < n; j++) l[j].name = UINT32_MAX;
        c->labels = l;
        c->nlabels = n;
    }
    plabel *l = &c->labels[k];
    if (l->name != p->name) {
        char tmp[256];
        make_label(c, l, rep_process_label(m, thread, tmp));
        l->name = p->name;
    }
    strn(c, i, l->s, l->len);
    c->mb[i] = l->mb;
}

/* The names of states, wait reasons and modes by value, padded for put_cell (made once). */
typedef struct vname {
    char s[32];
    uint8_t n;
} vname;
static vname vnames[3][256];

static void vnames_init(void)
{
    for (unsigned k = 0; k < 3; k++)
        for (unsigned v = 0; v < 256; v++) {
            const char *s = k == 0 ? etl_thread_state_name(v) : k == 1 ? etl_wait_reason_name(v) : etl_processor_mode_name(v);
            size_t n = s ? strlen(s) : 0; /* no name: blank, as an unknown value */
            if (n > sizeof vnames[k][v].s - 1) n = sizeof vnames[k][v].s - 1; /* none is this long */
            if (n) memcpy(vnames[k][v].s, s, n);
            vnames[k][v].n = (uint8_t)n;
        }
}

static void vname_cell(ctx *c, unsigned i, const vname *v)
{
    if (!(c->want >> i & 1)) return;
    memcpy(c->cell[i], v->s, 32);
    c->len[i] = v->n;
}

static void state_cols(ctx *c, unsigned i, uint32_t known, uint8_t state, uint8_t reason, uint8_t mode)
{
    if (known & ETL_CSW_STATE) vname_cell(c, i, &vnames[0][state]);
    if (known & ETL_CSW_WAIT_REASON) vname_cell(c, i + 1, &vnames[1][reason]);
    if (known & ETL_CSW_WAIT_MODE) vname_cell(c, i + 2, &vnames[2][mode]);
}

static void flush(ctx *c)
{
    if (c->used) cli_stdout_write(c->out, c->used);
    c->used = 0;
}

static char *put(char *o, const char *s, size_t n)
{
    memcpy(o, s, n);
    return o + n;
}

/* put for a cell (CELL + 1 bytes readable): short ones in two fixed moves, not a call. */
static char *put_cell(char *o, const char *s, size_t n)
{
    if (n <= 32) memcpy(o, s, 32);
    else memcpy(o, s, n);
    return o + n;
}

/*
 * printf's %Ns (right) or %-N.Ns (left, cut at N columns) of cell i. Its columns are its
 * bytes, but for a label with characters of several bytes: counted, and cut between them.
 */
static char *pad(char *o, const ctx *c, unsigned i, unsigned w, int left)
{
    size_t n = c->len[i], ncols = n;
    if (c->mb[i]) {
        const char *s = c->cell[i];
        size_t k = 0;
        for (ncols = 0; k < n; k++) {
            if (((unsigned char)s[k] & 0xC0) == 0x80) continue;
            if (left && ncols == w) break;
            ncols++;
        }
        n = k;
    } else if (left && n > w) {
        n = ncols = w;
    }
    if (!left)
        for (size_t k = ncols; k < w; k++) *o++ = ' ';
    o = put_cell(o, c->cell[i], n);
    if (left)
        for (size_t k = ncols; k < w; k++) *o++ = ' ';
    return o;
}

/* c->joined with room for need bytes (it doubles at least), the bytes in it kept. */
static bool joined_room(ctx *c, size_t need)
{
    if (need <= c->cjoined) return true;
    size_t cap = c->cjoined * 2 > need ? c->cjoined * 2 : need;
    char *g = realloc(c->joined, cap);
    if (!g) return false;
    c->joined = g;
    c->cjoined = cap;
    return true;
}

/*
 * The label of m bytes at c->joined + k with its STACK_SEP and '%' percent-encoded (%2F, %25), so that a cell split
 * at STACK_SEP gives the frames, each decoded as a URL's part is: the new length, or SIZE_MAX out of memory.
 */
static size_t escape_label(ctx *c, size_t k, size_t m)
{
    size_t e = 0;
    for (size_t j = 0; j < m; j++) e += c->joined[k + j] == STACK_SEP || c->joined[k + j] == '%';
    if (!e) return m;
    if (!joined_room(c, k + m + 2 * e + 2)) return SIZE_MAX;
    char *s = c->joined + k;
    for (size_t j = m, o = m + 2 * e; j-- > 0;) { /* from the end: the bytes move right */
        char ch = s[j];
        if (ch != STACK_SEP && ch != '%') {
            s[--o] = ch;
            continue;
        }
        s[--o] = ch == '%' ? '5' : 'F';
        s[--o] = '2';
        s[--o] = '%';
    }
    return m + 2 * e;
}

/*
 * A stack's labels, whole (a C++ template's name may pass a kilobyte), into c->joined, each followed by sep
 * (STACK_SEP: CSV, each label escaped; NUL: JSON).
 */
static bool join_labels(ctx *c, const etl_profile_frame *f, uint32_t n, char sep, size_t *len)
{
    size_t k = 0;
    for (uint32_t i = n; i-- > 0;) {
        size_t m;
        for (;;) {
            size_t room = c->cjoined - k;
            m = etl_sched_stacks_frame_label(c->stacks, &f[i], c->joined + k, room);
            if (m < room) break;
            if (!joined_room(c, k + m + 2)) return false;
        }
        if (sep == STACK_SEP && (m = escape_label(c, k, m)) == SIZE_MAX) return false;
        k += m;
        c->joined[k++] = sep;
    }
    *len = k;
    return true;
}

/* Out of memory for a stack cell: null / blank in its place (ROW_MAX holds it), and the run fails at its end. */
static char *stack_oom(ctx *c, char *o)
{
    c->oom = true;
    return c->a->format == FMT_JSON ? put(o, "null", 4) : o;
}

/*
 * A stack cell at o: a JSON array of labels, or the labels joined for CSV; null / blank without a stack. The chunk
 * grows when the cell may not fit its room (the row's bytes move with it): the new o.
 */
static char *put_stack(ctx *c, char *o, uint32_t id)
{
    uint32_t n = 0;
    const etl_profile_frame *f = id == ETL_SCHED_STACK_NONE ? NULL : etl_sched_stacks_frames(c->stacks, id, &n);
    bool json = c->a->format == FMT_JSON;
    if (!f) return json ? put(o, "null", 4) : o;
    size_t len;
    if (!join_labels(c, f, n, json ? '\0' : STACK_SEP, &len)) return stack_oom(c, o);
    size_t at = (size_t)(o - c->out), need = (json ? 6 * len + 2 * (size_t)n + 8 : 2 * len + 8) + ROW_MAX;
    if (at + need > c->cap) {
        char *g = realloc(c->out, at + need + CHUNK);
        if (!g) return stack_oom(c, o);
        c->out = g;
        c->cap = at + need + CHUNK;
        o = g + at;
    }
    if (json) {
        *o++ = '[';
        for (size_t k = 0; k < len;) {
            const char *label = c->joined + k;
            k += strlen(label) + 1;
            o += json_str_buf(o, 0, 6 * (k - (size_t)(label - c->joined)) + 8, label);
            if (k < len) *o++ = ',';
        }
        *o++ = ']';
        return o;
    }
    if (len) len--; /* no separator after the innermost */
    c->joined[len] = 0;
    return o + csv_sheet_buf(o, 0, 2 * len + 8, c->joined);
}

static void emit(ctx *c, const etl_sched_row *r)
{
    char *o = c->out + c->used;
    if (c->a->format == FMT_JSON) {
        *o++ = '{';
        bool first = true;
        for (unsigned i = 0; i < NCOL; i++) {
            if (cols[i].type == C_STACK) {
                if (!c->stacks) continue;
                if (!first) *o++ = ',';
                first = false;
                o = put_cell(o, c->jkey[i], c->jklen[i]);
                o = put_stack(c, o, c->stack[i - C_NEW_STACK]);
                continue;
            }
            if (!c->len[i]) continue;
            if (!first) *o++ = ',';
            first = false;
            o = put_cell(o, c->jkey[i], c->jklen[i]);
            if (cols[i].type == C_NUM) o = put_cell(o, c->cell[i], c->len[i]);
            else o += json_str_buf(o, 0, 6 * CELL + 8, c->cell[i]);
        }
        if (r->flags & ETL_ROW_HEAD) o = put(o, ",\"head\":true", 12);
        if (r->flags & ETL_ROW_TAIL) o = put(o, ",\"tail\":true", 12);
        o = put(o, ",\"switch_in_ts\":", 16);
        o += fmt_u64(o, r->si_ts);
        o = put(o, "}\n", 2);
    } else if (c->a->format == FMT_CSV) {
        for (unsigned i = 0; i < NCOL; i++) {
            if (cols[i].type == C_STACK) {
                if (c->stacks) {
                    *o++ = ',';
                    o = put_stack(c, o, c->stack[i - C_NEW_STACK]);
                }
                continue;
            }
            if (i) *o++ = ',';
            if (cols[i].type == C_NUM) o = put_cell(o, c->cell[i], c->len[i]);
            else if (c->len[i]) o += csv_sheet_buf(o, 0, 2 * CELL + 6, c->cell[i]); /* len 0: blank */
        }
        o = put(o, CSV_SHEET_EOL, sizeof CSV_SHEET_EOL - 1);
    } else {
        /* Text: a readable subset in fixed columns. */
        static const struct { uint8_t col, w, left; } t[] = {{0, 3, 0},   {6, 16, 0},  {10, 12, 0}, {1, 28, 1},
                                                              {2, 7, 0},   {5, 7, 0},   {12, 12, 0}, {13, 12, 0},
                                                              {22, 14, 1}, {23, 18, 1}, {31, 0, 0}};
        for (unsigned k = 0; k < sizeof t / sizeof t[0]; k++) {
            if (k) *o++ = ' ';
            o = pad(o, c, t[k].col, t[k].w, t[k].left);
        }
        *o++ = '\n';
    }
    c->used = (size_t)(o - c->out); /* put_stack may have moved the chunk */
    if (c->used >= CHUNK) flush(c);
}

static void on_row(void *p, const etl_sched_row *r)
{
    ctx *c = p;
    const rep_args *a = c->a;
    const etl_sched *m = c->run->model;
    int64_t v0 = c->run->v0, v1 = a->has_range ? a->v1 : INT64_MAX;
    if (r->nso < v0 || r->si >= v1) return;
    if ((a->process || a->thread >= 0) && !rep_thread_selected(a, m, r->new_thread)) return;
    memset(c->len, 0, sizeof c->len);
    bool full = (r->flags & ETL_ROW_HEAD) == 0;
    const etl_cswitch *in = r->in, *out = r->out;
    num(c, 0, r->cpu);
    if (r->new_thread != ETL_SCHED_NONE) {
        label(c, 1, r->new_thread);
        num(c, 2, r->new_tid);
        if (r->new_thread != ETL_SCHED_IDLE) str(c, 3, rep_thread_name(m, r->new_thread));
    } else {
        strn(c, 1, "Unknown", 7);
    }
    if (full && r->old_thread != ETL_SCHED_NONE) {
        label(c, 4, r->old_thread);
        num(c, 5, r->old_tid);
    }
    tm(c, 6, r->si, 9);
    tm(c, 7, r->nso, 9);
    if (r->flags & ETL_ROW_PREV) tm(c, 8, r->lso, 9);
    if (r->flags & ETL_ROW_READY_TIME) tm(c, 9, r->rt, 9);
    tm(c, 10, r->nso - r->si, 6);
    int64_t s = r->si > v0 ? r->si : v0, e = r->nso < v1 ? r->nso : v1;
    tm(c, 11, e > s ? e - s : 0, 6);
    if (r->flags & ETL_ROW_READY_TIME) tm(c, 12, r->si - r->rt, 3);
    if ((r->flags & ETL_ROW_READY_TIME) && (r->flags & ETL_ROW_PREV)) tm(c, 13, r->rt - r->lso, 3);
    if (r->flags & ETL_ROW_PREV) tm(c, 14, r->si - r->lso, 3);
    if (full && !(r->flags & ETL_ROW_OLD_SI_UNKNOWN)) tm(c, 15, r->si - r->prev_switch, 3); /* the first: began before */
    /*
     * Count 1 for a switch-in in the window, as cpu counts it: not a head slice [t0, first switch), nor a slice
     * begun before --range's start (the Counts add up to cpu's switches, per thread too); its wait goes with it.
     */
    bool counted = full && r->si >= v0;
    num(c, 16, counted);
    if (!(r->flags & ETL_ROW_LOST) || (r->flags & ETL_ROW_PREV)) num(c, 17, counted && (r->flags & ETL_ROW_WAITED) ? 1 : 0);
    if (in && full && (in->known & ETL_CSW_NEW_PRIORITY) && !(r->flags & ETL_ROW_MISMATCH)) num(c, 18, in->new_priority);
    if (out && (out->known & ETL_CSW_OLD_PRIORITY)) num(c, 19, out->old_priority);
    if ((r->flags & ETL_ROW_PREV) && (r->prev_known & ETL_CSW_OLD_PRIORITY)) num(c, 20, r->prev_out_priority);
    if (in && full && (in->known & ETL_CSW_OLD_PRIORITY)) num(c, 21, in->old_priority);
    if (r->flags & ETL_ROW_PREV) state_cols(c, 22, r->prev_known, r->prev_state, r->prev_wait_reason, r->prev_wait_mode);
    if (out) state_cols(c, 25, out->known, out->old_state, out->old_wait_reason, out->old_wait_mode);
    if (in && full) state_cols(c, 28, in->known, in->old_state, in->old_wait_reason, in->old_wait_mode);
    if (r->flags & ETL_ROW_READIED) {
        if (r->readier_thread == ETL_SCHED_NONE) {
            strn(c, 31, "Unknown", 7);
        } else {
            label(c, 31, r->readier_thread);
            num(c, 32, r->readier_tid);
        }
        num(c, 33, (r->ready.flags & ETL_READY_EXECUTING_DPC) ? 1 : 0);
        const char *an = etl_adjust_reason_name(r->ready.adjust_reason);
        if (an) str(c, 34, an);
        else num(c, 34, r->ready.adjust_reason);
        num(c, 35, r->ready.adjust_increment);
        if (r->first_readier_tid != UINT32_MAX) num(c, 38, r->first_readier_tid);
    }
    if (in && full && in->old_tid == 0 && (in->known & ETL_CSW_PREVIOUS_CSTATE) && in->version >= 2)
        num(c, 36, in->previous_cstate);
    if (out && (out->known & ETL_CSW_IDEAL_PROCESSOR)) num(c, 37, out->old_ideal_processor);
    if ((r->flags & ETL_ROW_MISMATCH) && in && (in->known & ETL_CSW_NEW_TID)) num(c, 39, in->new_tid);
    if (c->stacks) {
        c->stack[0] = etl_sched_stacks_row_new(c->stacks, r);
        c->stack[1] = etl_sched_stacks_row_readying(c->stacks, r);
        for (unsigned k = 0; k < 2; k++) c->with_stack[k] += c->stack[k] != ETL_SCHED_STACK_NONE;
        c->compact_rows += in && full && in->source == ETL_CSW_SRC_COMPACT;
    }
    c->rows++;
    emit(c, r);
}

int cmd_switches(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "switches");
    const char *symbols = NULL;
    const cli_opt own[] = {CLI_SYMBOLS_OPT(&symbols), CLI_END};
    /* No --top: the rows are streamed, every one (a table of the biggest is what the other reports print). */
    int pr = rep_parse(&a, &switches_cmd, own, REP_OPTS_ALL & ~REP_OPT_TOP, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    if (symbols && a.format == FMT_TEXT)
        return cli_usage_error("switches", "--symbols names the stack columns of --csv and --json");
    /* The stack columns' symbol path (CSV, JSON), before the trace is read: a folder not there fails here. */
    etl_symbols *sym = NULL;
    int rc = a.format != FMT_TEXT ? cli_symbols_open("switches", symbols, &sym) : EXIT_OK;
    if (rc != EXIT_OK) return rc;
    ctx *c = calloc(1, sizeof *c);
    char *chunk = malloc(CHUNK + ROW_MAX);
    if (!c || !chunk) {
        fprintf(stderr, "%s switches: out of memory\n", prog);
        etl_symbols_close(sym);
        free(c);
        free(chunk);
        return EXIT_IO;
    }
    c->a = &a;
    c->out = chunk;
    c->cap = CHUNK + ROW_MAX;
    c->want = a.format == FMT_TEXT ? TEXT_COLS : ~0ull;
    vnames_init();
    for (unsigned i = 0; i < NCOL; i++)
        c->jklen[i] = (uint8_t)snprintf(c->jkey[i], sizeof c->jkey[i], "\"%s\":", cols[i].key);
    rep_run run;
    c->run = &run;
    rc = rep_run_open(&run, &a, on_row, c, NULL);
    if (rc != EXIT_OK) {
        etl_symbols_close(sym);
        free(c);
        free(chunk);
        return rc;
    }
    /* The stack columns (CSV, JSON) when the trace walks stacks at its CSwitch or ReadyThread events. */
    if (a.format != FMT_TEXT) {
        rc = cli_sched_stacks_open("switches", run.in.reader, a.threads, ETL_SYMBOLS_OFFSET, CLI_STACKS_BOTH, NULL, 0,
                                   &c->stacks, &sym);
        if (rc != EXIT_OK) {
            free(c);
            free(chunk);
            rep_run_close(&run);
            return rc;
        }
    }
    if (c->stacks) {
        char *big = realloc(chunk, CHUNK + ROW_MAX + 2 * STACK_CELL_MAX);
        if (big) chunk = c->out = big, c->cap = CHUNK + ROW_MAX + 2 * STACK_CELL_MAX;
        c->cjoined = 2 * ETL_STACK_MAX_FRAMES * (LABEL_MAX + 1) + 1;
        c->joined = malloc(c->cjoined);
        if (!big || !c->joined) {
            fprintf(stderr, "%s switches: %s: stacks: out of memory\n", prog, a.path);
            etl_sched_stacks_free(c->stacks);
            cli_symbols_close(sym);
            free(c->joined);
            free(c);
            free(chunk);
            rep_run_close(&run);
            return EXIT_IO;
        }
    }
    /* Rows go out in chunks already: stdio's own buffer would only copy them once more. */
    setvbuf(stdout, NULL, _IONBF, 0);
    if (a.format == FMT_CSV) {
        char *o = chunk;
        o = put(o, CSV_SHEET_BOM, sizeof CSV_SHEET_BOM - 1);
        for (unsigned i = 0; i < NCOL; i++) {
            if (cols[i].type == C_STACK && !c->stacks) continue;
            if (i) *o++ = ',';
            o += csv_field_buf(o, 0, 2 * CELL + 4, cols[i].wpa);
        }
        o = put(o, CSV_SHEET_EOL, sizeof CSV_SHEET_EOL - 1);
        c->used = (size_t)(o - chunk);
    } else if (a.format == FMT_TEXT) {
        c->used = (size_t)snprintf(chunk, ROW_MAX, "%3s %16s %12s %-28s %7s %7s %12s %12s %-14s %-18s %s\n", "CPU",
                                   "Switch-In (s)", "Usage (ms)", "New Process", "New TID", "Old TID", "Ready (us)",
                                   "Waits (us)", "Prev State", "Prev Wait Reason", "Readying Process");
    }
    rep_run_go(&run, &a);
    waits_stacks_damage(&run, c->stacks);
    /* Text: no switch at all is said in one line (rep_no_switches), not under a header of nothing. */
    if (a.format == FMT_TEXT && !etl_sched_stats_get(run.model)->switches) c->used = 0;
    flush(c);
    rep_no_match(&run, &a);
    if (c->stacks) {
        /* What has no stack is counted, never guessed: a compact batch's switch has no CSwitch to walk. */
        char n0[32], n1[32], n2[32], n3[32];
        fprintf(stderr,
                "%s switches: %s rows: New Thread Stack on %s, Readying Thread Stack on %s; %s rows of compact "
                "batches (no CSwitch event, no stack)\n",
                prog, col_u64(n0, c->rows), col_u64(n1, c->with_stack[0]), col_u64(n2, c->with_stack[1]),
                col_u64(n3, c->compact_rows));
        /* and what the stacks lack, as profile tells it (explore9 F4) */
        if (!a.quiet) cli_sched_stacks_notes("switches", a.path, c->stacks);
        etl_sched_stacks_free(c->stacks);
        cli_symbols_close(sym);
        free(c->joined);
    }
    bool oom = c->oom;
    free(c->labels);
    free(c->out); /* the chunk, wherever a long stack moved it */
    free(c);
    /* JSON lines: no row is the empty report, and nothing in it can say why: stderr does, as for CSV (explore22 F10). */
    if (!etl_sched_stats_get(run.model)->switches) {
        if (a.format == FMT_JSON) rep_no_switches_note(&run, &a, "no rows");
        else rep_no_switches(&run, &a);
    }
    /* The anomalies (switches dropped, chains broken...) on stderr in every form: the rows have no place for them.
     * No switch at all: --json and --csv keep to the one line that says so. */
    if (a.format == FMT_TEXT || etl_sched_stats_get(run.model)->switches)
        rep_print_anomalies_as(&run, stderr, "switches");
    int rc2 = rep_finish(&run, "switches");
    if (!oom) return rc2;
    fprintf(stderr, "%s switches: %s: stacks: out of memory (stack cells left blank)\n", prog, a.path);
    return EXIT_IO;
}

/*
 * cmd_switches.c - `etlkit switches`: the CPU Usage (Precise) rows themselves, one
 * per switch-in, streamed as the model completes them. --csv writes WPA's column
 * names and units (spec analyses.md §7: s with 9 decimals, µs 3, ms 6, UTF-8 BOM,
 * CRLF) so scripts written for wpaexporter output read it unchanged.
 */
#include <stdlib.h>
#include <string.h>
#include "report.h"

enum { C_NUM, C_STR };

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
};
#define NCOL (sizeof cols / sizeof cols[0])

typedef struct ctx {
    const rep_args *a;
    rep_run *run;
    jw w;
    uint64_t rows;
    char cell[NCOL][300];
    const char *cells[NCOL];
} ctx;

static void help(void)
{
    printf("Usage: %s switches FILE [OPTIONS]\n\n"
           "One row per switch-in (WPA's CPU Usage (Precise) table), streamed: the new and old\n"
           "thread, switch-in, last and next switch-out and Ready Time, the Ready and Waits\n"
           "durations, the previous and next states, and the readying thread. Blank = unknown.\n"
           "--csv writes WPA's column headers and units (UTF-8 BOM, CRLF); --json one object per line\n"
           "with times in ns since the trace start.\n\n",
           prog);
    rep_help_common();
    printf("\nExit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n");
}

static void num(ctx *c, unsigned i, long long v) { c->cell[i][fmt_i64(c->cell[i], v)] = 0; }

/* A time or duration: ns in JSON, the WPA unit (decimals) in CSV and text. */
static void tm(ctx *c, unsigned i, int64_t ns, unsigned decimals)
{
    if (c->a->format == FMT_JSON) num(c, i, ns);
    else fmt_fixed(c->cell[i], ns, decimals);
}

static void str(ctx *c, unsigned i, const char *s)
{
    size_t n = s ? strlen(s) : 0;
    if (n >= sizeof c->cell[i]) n = sizeof c->cell[i] - 1;
    memcpy(c->cell[i], s ? s : "", n);
    c->cell[i][n] = 0;
}

static void state_cols(ctx *c, unsigned i, uint32_t known, uint8_t state, uint8_t reason, uint8_t mode)
{
    if (known & ETL_CSW_STATE) str(c, i, etl_thread_state_name(state));
    if (known & ETL_CSW_WAIT_REASON) str(c, i + 1, etl_wait_reason_name(reason));
    if (known & ETL_CSW_WAIT_MODE) str(c, i + 2, etl_processor_mode_name(mode));
}

static void on_row(void *p, const etl_sched_row *r)
{
    ctx *c = p;
    const rep_args *a = c->a;
    const etl_sched *m = c->run->model;
    int64_t v0 = c->run->v0, v1 = a->has_range ? a->v1 : INT64_MAX;
    if (r->nso < v0 || r->si >= v1) return;
    if ((a->process || a->thread >= 0) && !rep_thread_selected(a, m, r->new_thread)) return;
    for (unsigned i = 0; i < NCOL; i++) c->cell[i][0] = 0;
    char label[256];
    bool full = (r->flags & ETL_ROW_HEAD) == 0;
    const etl_cswitch *in = r->in, *out = r->out;
    num(c, 0, r->cpu);
    if (r->new_thread != ETL_SCHED_NONE) {
        str(c, 1, rep_process_label(m, r->new_thread, label));
        num(c, 2, r->new_tid);
        str(c, 3, r->new_thread == ETL_SCHED_IDLE ? "" : rep_thread_name(m, r->new_thread));
    } else {
        str(c, 1, "Unknown");
    }
    if (full && r->old_thread != ETL_SCHED_NONE) {
        str(c, 4, rep_process_label(m, r->old_thread, label));
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
    if (full) tm(c, 15, r->si - r->prev_switch, 3);
    num(c, 16, 1);
    num(c, 17, (r->flags & ETL_ROW_WAITED) ? 1 : 0);
    if (in && full && (in->known & ETL_CSW_NEW_PRIORITY) && !(r->flags & ETL_ROW_MISMATCH)) num(c, 18, in->new_priority);
    if (out && (out->known & ETL_CSW_OLD_PRIORITY)) num(c, 19, out->old_priority);
    if ((r->flags & ETL_ROW_PREV) && (r->prev_known & ETL_CSW_OLD_PRIORITY)) num(c, 20, r->prev_out_priority);
    if (in && full && (in->known & ETL_CSW_OLD_PRIORITY)) num(c, 21, in->old_priority);
    if (r->flags & ETL_ROW_PREV) state_cols(c, 22, r->prev_known, r->prev_state, r->prev_wait_reason, r->prev_wait_mode);
    if (out) state_cols(c, 25, out->known, out->old_state, out->old_wait_reason, out->old_wait_mode);
    if (in && full) state_cols(c, 28, in->known, in->old_state, in->old_wait_reason, in->old_wait_mode);
    if (r->flags & ETL_ROW_READIED) {
        if (r->readier_thread == ETL_SCHED_NONE) {
            str(c, 31, "Unknown");
        } else {
            str(c, 31, rep_process_label(m, r->readier_thread, label));
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
    c->rows++;
    if (a->format == FMT_JSON) {
        jw_init(&c->w, stdout);
        jw_obj(&c->w, NULL);
        for (unsigned i = 0; i < NCOL; i++) {
            if (!c->cell[i][0]) continue;
            if (cols[i].type == C_NUM) {
                fputs(c->w.first[c->w.depth] ? "" : ",", stdout);
                c->w.first[c->w.depth] = 0;
                json_str(stdout, cols[i].key);
                fputc(':', stdout);
                fputs(c->cell[i], stdout);
            } else {
                jw_str(&c->w, cols[i].key, c->cell[i]);
            }
        }
        if (r->flags & ETL_ROW_HEAD) jw_bool(&c->w, "head", 1);
        if (r->flags & ETL_ROW_TAIL) jw_bool(&c->w, "tail", 1);
        jw_u64(&c->w, "switch_in_ts", r->si_ts);
        jw_obj_end(&c->w);
        jw_end(&c->w);
    } else if (a->format == FMT_CSV) {
        /* One write a row: the cells are built in a line buffer. */
        char line[NCOL * 320 + 4];
        size_t n = 0;
        for (unsigned i = 0; i < NCOL; i++) {
            if (i) line[n++] = ',';
            n = csv_field_buf(line, n, sizeof line - 3, c->cell[i]);
        }
        line[n++] = '\r';
        line[n++] = '\n';
        fwrite(line, 1, n, stdout);
    } else {
        /* Text: a readable subset in fixed columns. */
        printf("%3s %16s %12s %-28.28s %7s %7s %12s %12s %-14.14s %-18.18s %s\n", c->cell[0], c->cell[6], c->cell[10],
               c->cell[1], c->cell[2], c->cell[5], c->cell[12], c->cell[13], c->cell[22], c->cell[23], c->cell[31]);
    }
}

int cmd_switches(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "switches");
    int pr = rep_parse(&a, argc, argv, help, NULL, NULL);
    if (pr >= 0) return pr;
    ctx c;
    memset(&c, 0, sizeof c);
    c.a = &a;
    rep_run run;
    c.run = &run;
    int rc = rep_run_open(&run, &a, on_row, &c, NULL);
    if (rc != EXIT_OK) return rc;
    if (a.format == FMT_CSV) {
        fputs("\xEF\xBB\xBF", stdout);
        for (unsigned i = 0; i < NCOL; i++) {
            if (i) fputc(',', stdout);
            csv_field(stdout, cols[i].wpa);
        }
        fputs("\r\n", stdout);
    } else if (a.format == FMT_TEXT) {
        printf("%3s %16s %12s %-28s %7s %7s %12s %12s %-14s %-18s %s\n", "CPU", "Switch-In (s)", "Usage (ms)",
               "New Process", "New TID", "Old TID", "Ready (us)", "Waits (us)", "Prev State", "Prev Wait Reason",
               "Readying Process");
    }
    rep_run_go(&run, &a);
    if (a.format == FMT_TEXT) {
        if (!etl_sched_stats_get(run.model)->switches) rep_no_switches(&run, &a);
        rep_print_anomalies(&run, stderr);
    }
    return rep_finish(&run, "switches");
}

/* waits_stacks.c - `waits --by stack` rendered: see waits_stacks.h. */
#include "waits_stacks.h"

#include <stdio.h>
#include "columns.h"
#include "out/text.h"
#include "rep_json.h"
#include "symbols_cli.h"

static int64_t weight(const etl_wait_time *x)
{
    int64_t s;
    return __builtin_add_overflow(x->wait_ns, x->ready_ns, &s) ? INT64_MAX : s;
}

typedef struct view {
    const etl_wait_node *n;
    unsigned top;
    int64_t min;         /* nodes below this share of the total are left out (the count says so) */
} view;

static void text_node(const view *v, const etl_wait_node *parent, unsigned depth)
{
    uint32_t first = parent->first, count = parent->count;
    uint32_t shown = 0;
    for (uint32_t j = 0; j < count; j++) {
        const etl_wait_node *n = &v->n[first + j];
        if ((v->top && shown >= v->top) || weight(&n->t) < v->min) {
            printf("  %*s... %u more\n", 36 + 2 * (int)depth, "", (unsigned)(count - j));
            break;
        }
        shown++;
        char a[32], b[32], c[32];
        printf("  %12s %12s %8s  %*s", fmt_dur(a, n->t.wait_ns), fmt_dur(b, n->t.ready_ns), col_u64(c, n->t.waits),
               2 * (int)depth, "");
        text_str(stdout, n->frame); /* a trace's image name, escaped as every text output prints one */
        putchar('\n');
        if (depth < 400) text_node(v, n, depth + 1);
    }
}

static void json_acc(jw *j, const etl_wait_time *x)
{
    jw_i64(j, "wait_ns", x->wait_ns);
    jw_i64(j, "ready_ns", x->ready_ns);
    jw_u64(j, "waits", x->waits);
    jw_u64(j, "readies", x->readies);
}

static void json_node(jw *j, const view *v, const etl_wait_node *parent, unsigned depth, bool flat)
{
    uint32_t first = parent->first, count = parent->count;
    jw_arr(j, flat ? "functions" : "children");
    uint32_t shown = 0;
    for (uint32_t k = 0; k < count; k++) {
        const etl_wait_node *n = &v->n[first + k];
        if ((v->top && shown >= v->top) || weight(&n->t) < v->min) break;
        shown++;
        jw_obj(j, NULL);
        jw_str(j, "frame", n->frame);
        json_acc(j, &n->t);
        if (!flat && depth < 400) json_node(j, v, n, depth + 1, flat);
        jw_obj_end(j);
    }
    jw_arr_end(j);
    if (count > shown) {
        char k[32];
        snprintf(k, sizeof k, "%s_left_out", flat ? "functions" : "children");
        jw_u64(j, k, count - shown);
    }
}

int waits_stacks_print(etl_wait_stacks *w, const etl_sched_stacks *stacks, etl_symbols *sym, bool readying,
                       const rep_run *run, const rep_args *a, bool flat, unsigned top)
{
    bool stacks_logged = stacks != NULL;
    etl_wait_node root;
    view v = {NULL, top, 0};
    if (etl_wait_stacks_build(w, flat, NULL, NULL, &v.n, &root) != ETL_OK) return -1;
    etl_wait_time total, none;
    uint64_t none_compact;
    etl_wait_stacks_totals(w, &total, &none, &none_compact);
    /* A text tree shows what holds at least 0.5% of the time (the rest is counted); JSON and flat: --top alone. */
    v.min = flat || a->format == FMT_JSON ? 0 : weight(&total) / 200;
    const char *key = readying ? "readying_thread_stack" : "new_thread_stack";
    if (a->format == FMT_JSON) {
        jw j;
        jw_init(&j, stdout);
        jw_obj(&j, NULL);
        rep_json_head(&j, run, run->v0, run->v1, 0);
        jw_str(&j, "by", key);
        jw_bool(&j, "stacks_logged", stacks_logged);
        cli_symbols_json(&j, sym);
        cli_sched_stacks_json(&j, stacks);
        json_acc(&j, &total);
        jw_obj(&j, "no_stack");
        json_acc(&j, &none);
        if (!readying) jw_u64(&j, "compact_rows", none_compact);
        jw_obj_end(&j);
        json_node(&j, &v, &root, 0, flat);
        jw_obj_end(&j);
        jw_end(&j);
    } else {
        rep_print_header(run, readying ? "etlkit waits --by readying-stack" : "etlkit waits --by stack");
        char x[32], y[32], z[32];
        printf("\n%s: waits %s (%s), ready %s; %s\n",
               readying ? "By Readying Thread Stack (where the readier was)"
                        : "By New Thread Stack (where the thread had blocked)",
               fmt_dur(x, total.wait_ns), col_u64(z, total.waits), fmt_dur(y, total.ready_ns),
               flat ? "functions, each with the time of every stack that holds it" : "callers first");
        printf("  %12s %12s %8s  %s\n", "Waits", "Ready", "Count", "Frame");
        text_node(&v, &root, 0);
        printf("  %12s %12s %8s  (no stack", fmt_dur(x, none.wait_ns), fmt_dur(y, none.ready_ns),
               col_u64(z, none.waits));
        if (!stacks_logged) printf(": the trace walks no stack at its CSwitch or ReadyThread events");
        else if (!readying && none_compact)
            printf(": %s of these rows are compact batches', which carry none", col_u64(x, none_compact));
        printf(")\n");
    }
    return 0;
}

void waits_stacks_damage(rep_run *run, const etl_sched_stacks *stacks)
{
    if (!stacks) return;
    const etl_stats none = {.first_problem_offset = UINT64_MAX};
    etl_stats_add(&run->damage, etl_sched_stacks_damage(stacks), &none);
}

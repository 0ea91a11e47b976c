/* cmd_pmc.c - `etlkit pmc`: PMC counter deltas per thread and process, IPC and misses (spec §6). */
#include <stdlib.h>
#include <string.h>
#include "report.h"
#include "rep_json.h"
#include "etlkit/pmc.h"

static const cli_cmd pmc_cmd = {
    "pmc", "FILE [OPTIONS]",
    "Hardware counters per thread and per process from the PMC values CSwitch events carry\n"
    "(cumulative per CPU): each slice's thread is charged the difference between its switch-in\n"
    "and its switch-out on the same CPU (the idle thread too); a slice counts in the window when\n"
    "its switch-in does. Ratios from sums: IPC, CPI, LLC and branch misses per 1,000 instructions,\n"
    "branch miss % (with a `branches` counter), GHz over the counted CPU time. Compact batches\n"
    "carry no counters.\n",
    {"FILE"}, 1, 1,
    "Exit status: 0 ok, 1 I/O error, 2 not an ETL file, 3 input damaged, 64 usage.\n"};

typedef struct ctx {
    etl_pmc p;
    const rep_args *a;
    const rep_run *run;
    char labels[ETL_PMC_MAX][32];
    int named;            /* --counters given */
} ctx;

static void on_row(void *v, const etl_sched_row *row)
{
    ctx *c = v;
    if ((c->a->process || c->a->thread >= 0) && !rep_thread_selected(c->a, c->run->model, row->new_thread)) return;
    etl_pmc_add(&c->p, row);
}

static const char *column_name(etl_pmc_kind k, const char *label, unsigned slot, char out[48])
{
    switch (k) {
    case ETL_PMC_CYCLES: return "Cycles";
    case ETL_PMC_INSTRUCTIONS: return "Instructions";
    case ETL_PMC_LLC_MISSES: return "LLC misses";
    case ETL_PMC_BRANCH_MISSES: return "Branch misses";
    case ETL_PMC_BRANCHES: return "Branches";
    default:
        if (label[0]) snprintf(out, 48, "%s", label);
        else snprintf(out, 48, "PMC %u", slot);
        return out;
    }
}

static const char *ratio_text(char out[32], int64_t v, unsigned decimals)
{
    if (v < 0) return strcpy(out, "-");
    return fmt_fixed(out, v, decimals);
}

static void json_ratio(jw *w, const char *key, int64_t v, unsigned decimals)
{
    if (v < 0) jw_null(w, key);
    else jw_fixed(w, key, v, decimals);
}

static void json_sums(jw *w, const etl_pmc *p, const char (*labels)[32], const etl_pmc_sums *s)
{
    jw_u64(w, "slices", s->slices);
    jw_i64(w, "cpu_ns", s->cpu_ns);
    jw_arr(w, "deltas");
    for (unsigned k = 0; k < p->counters; k++) jw_u64(w, NULL, s->delta[k]);
    jw_arr_end(w);
    jw_obj(w, "counters");
    for (unsigned k = 0; k < p->counters; k++) {
        char key[48];
        if (p->o.kinds[k] != ETL_PMC_OTHER) snprintf(key, sizeof key, "%s", etl_pmc_kind_name(p->o.kinds[k]));
        else if (labels[k][0]) snprintf(key, sizeof key, "%s", labels[k]);
        else snprintf(key, sizeof key, "pmc%u", k);
        /* Keys must be unique: a repeated name gets its slot number. */
        for (unsigned j = 0; j < k; j++)
            if (p->o.kinds[j] == p->o.kinds[k] &&
                (p->o.kinds[k] != ETL_PMC_OTHER || (labels[k][0] && strcmp(labels[j], labels[k]) == 0)))
                snprintf(key + strlen(key), sizeof key - strlen(key), "_%u", k);
        jw_u64(w, key, s->delta[k]);
    }
    jw_obj_end(w);
    etl_pmc_ratios r;
    etl_pmc_ratios_of(p, s, &r);
    json_ratio(w, "ipc", r.ipc_x1000, 3);
    json_ratio(w, "cpi", r.cpi_x1000, 3);
    json_ratio(w, "llc_mpki", r.llc_mpki_x1000, 3);
    json_ratio(w, "branch_mpki", r.branch_mpki_x1000, 3);
    json_ratio(w, "branch_miss_pct", r.branch_miss_pct_x100, 2);
    json_ratio(w, "ghz", r.ghz_x1000, 3);
}

static void proc_of(const rep_run *run, uint32_t process, char name[256], uint32_t *pid)
{
    *pid = UINT32_MAX;
    if (process == ETL_SCHED_IDLE) {
        strcpy(name, "Idle");
        *pid = 0;
        return;
    }
    const etl_sched_process *sp = etl_sched_process_at(run->model, process);
    if (!sp) {
        strcpy(name, "Unknown");
        return;
    }
    *pid = sp->pid;
    snprintf(name, 256, "%s", sp->name ? etl_sched_names(run->model) + sp->name : "Unknown");
}

void pmc_json(jw *w, const rep_run *run, const etl_pmc *p, const char (*labels)[32], int named, const rep_args *a)
{
    rep_json_head(w, run, p->o.v0, p->o.v1, etl_sched_cpu_count(run->model));
    jw_arr(w, "counters");
    for (unsigned k = 0; k < p->counters; k++) {
        char b[48];
        jw_obj(w, NULL);
        jw_u64(w, "slot", k);
        jw_str(w, "kind", etl_pmc_kind_name(p->o.kinds[k]));
        jw_str(w, "name", column_name(p->o.kinds[k], labels[k], k, b));
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_str(w, "counters_named_by", named ? "--counters" : "position (etlkit synth --pmc order; not in the trace)");
    jw_u64(w, "switches_with_pmc", p->switches_pmc);
    jw_u64(w, "switches_without_pmc", p->switches_no_pmc);
    jw_u64(w, "slices_unpaired", p->slices_unpaired);
    jw_u64(w, "pmc_counter_reset", p->pmc_counter_reset);
    jw_u64(w, "pmc_count_mismatch", p->pmc_count_mismatch);
    jw_obj(w, "total");
    json_sums(w, p, labels, &p->total);
    jw_obj_end(w);
    jw_arr(w, "processes");
    for (size_t i = 0; i < p->nprocesses && (!a->top || i < a->top); i++) {
        const etl_pmc_process *x = &p->processes[i];
        char name[256];
        uint32_t pid;
        proc_of(run, x->process, name, &pid);
        jw_obj(w, NULL);
        if (pid != UINT32_MAX) jw_u64(w, "pid", pid);
        else jw_null(w, "pid");
        jw_str(w, "name", name);
        jw_u64(w, "threads", x->threads);
        json_sums(w, p, labels, &x->s);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "threads");
    for (size_t i = 0; i < p->nthreads && (!a->top || i < a->top); i++) {
        const etl_pmc_thread *x = &p->threads[i];
        const etl_sched_thread *st = etl_sched_thread_at(run->model, x->thread);
        char label[256];
        jw_obj(w, NULL);
        jw_u64(w, "tid", st ? st->tid : 0);
        if (!st) jw_u64(w, "pid", 0);
        else if (st->pid != UINT32_MAX) jw_u64(w, "pid", st->pid);
        else jw_null(w, "pid");
        jw_str(w, "process", etl_sched_process_name(run->model, x->thread));
        jw_str(w, "process_label", rep_process_label(run->model, x->thread, label));
        jw_str(w, "name", rep_thread_name(run->model, x->thread));
        json_sums(w, p, labels, &x->s);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    jw_arr(w, "cpus");
    for (size_t i = 0; i < p->ncpus; i++) {
        jw_obj(w, NULL);
        jw_u64(w, "cpu", i);
        json_sums(w, p, labels, &p->cpus[i]);
        jw_obj_end(w);
    }
    jw_arr_end(w);
    rep_json_anomalies_as(run, w, a->skip);
}

/* Columns: key columns, CPU time, slices, one per counter, then the ratios. */
#define MAXCOL (4 + 2 + ETL_PMC_MAX + 6)

typedef struct cols {
    const char *head[MAXCOL];
    char names[ETL_PMC_MAX][52]; /* "=" and a name of up to 47 bytes */
    unsigned n;
} cols;

static void make_head(const ctx *c, cols *h, const char *const *keys, unsigned nkeys, int csv)
{
    h->n = 0;
    for (unsigned i = 0; i < nkeys; i++) h->head[h->n++] = keys[i];
    h->head[h->n++] = csv ? "cpu_ns" : "=CPU time";
    h->head[h->n++] = csv ? "slices" : "=Slices";
    for (unsigned k = 0; k < c->p.counters; k++) {
        char b[48];
        const char *nm = column_name(c->p.o.kinds[k], c->labels[k], k, b);
        if (csv && c->p.o.kinds[k] != ETL_PMC_OTHER) nm = etl_pmc_kind_name(c->p.o.kinds[k]);
        else if (csv && !c->labels[k][0]) snprintf(b, sizeof b, "pmc%u", k);
        snprintf(h->names[k], sizeof h->names[k], "%s%s", csv ? "" : "=", nm);
        h->head[h->n++] = h->names[k];
    }
    static const char *const rt[] = {"=IPC", "=CPI", "=LLC MPKI", "=Branch MPKI", "=Branch miss %", "=GHz"};
    static const char *const rc[] = {"ipc", "cpi", "llc_mpki", "branch_mpki", "branch_miss_pct", "ghz"};
    for (unsigned i = 0; i < 6; i++) h->head[h->n++] = csv ? rc[i] : rt[i];
}

static void add_row(const ctx *c, tbl *t, const char *const *keys, unsigned nkeys, const etl_pmc_sums *s, int csv)
{
    char b[MAXCOL][32];
    const char *row[MAXCOL];
    unsigned n = 0;
    for (unsigned i = 0; i < nkeys; i++) row[n++] = keys[i];
    if (csv) snprintf(b[n], 32, "%lld", (long long)s->cpu_ns);
    else fmt_dur(b[n], s->cpu_ns);
    row[n] = b[n];
    n++;
    snprintf(b[n], 32, "%llu", (unsigned long long)s->slices);
    row[n] = b[n];
    n++;
    for (unsigned k = 0; k < c->p.counters; k++, n++) {
        snprintf(b[n], 32, "%llu", (unsigned long long)s->delta[k]);
        row[n] = b[n];
    }
    etl_pmc_ratios r;
    etl_pmc_ratios_of(&c->p, s, &r);
    const int64_t v[] = {r.ipc_x1000, r.cpi_x1000, r.llc_mpki_x1000, r.branch_mpki_x1000, r.branch_miss_pct_x100,
                         r.ghz_x1000};
    for (unsigned i = 0; i < 6; i++, n++) {
        if (csv && v[i] < 0) b[n][0] = 0;
        else ratio_text(b[n], v[i], i == 4 ? 2 : 3);
        row[n] = b[n];
    }
    tbl_row(t, row);
}

static void threads_table(const rep_args *a, const rep_run *run, const ctx *c, int csv)
{
    static const char *const keys_t[] = {"=TID", "Process", "Thread name"};
    static const char *const keys_c[] = {"tid", "process", "name"};
    cols h;
    make_head(c, &h, csv ? keys_c : keys_t, 3, csv);
    tbl t;
    if (tbl_init(&t, h.n, h.head)) return;
    unsigned limit = a->top ? a->top : csv ? 0 : 20;
    for (size_t i = 0; i < c->p.nthreads && (!limit || i < limit); i++) {
        const etl_pmc_thread *x = &c->p.threads[i];
        const etl_sched_thread *st = etl_sched_thread_at(run->model, x->thread);
        char tid[16], label[256];
        snprintf(tid, sizeof tid, "%u", st ? st->tid : 0);
        const char *k[] = {tid, rep_process_label(run->model, x->thread, label), rep_thread_name(run->model, x->thread)};
        add_row(c, &t, k, 3, &x->s, csv);
    }
    if (csv) tbl_print_csv(&t, stdout, 0);
    else tbl_print_text(&t, stdout, "");
    tbl_free(&t);
}

static void print_text(const rep_args *a, const rep_run *run, const ctx *c)
{
    const etl_pmc *p = &c->p;
    rep_print_header(run, "etlkit pmc");
    printf("Counters: ");
    for (unsigned k = 0; k < p->counters; k++) {
        char b[48];
        printf("%s", k ? ", " : "");
        text_str(stdout, column_name(p->o.kinds[k], c->labels[k], k, b));
    }
    printf(c->named ? " (as --counters names them)\n"
                    : " (by position, as etlkit synth --pmc writes them: the trace does not say; see --counters)\n");
    printf("%llu switches with counters, %llu without; %llu slices counted", (unsigned long long)p->switches_pmc,
           (unsigned long long)p->switches_no_pmc, (unsigned long long)p->total.slices);
    if (p->slices_unpaired) printf(", %llu without counters at one end", (unsigned long long)p->slices_unpaired);
    printf("\n");
    printf("\nProcesses\n");
    static const char *const pk[] = {"Process", "=PID", "=Threads"};
    cols h;
    make_head(c, &h, pk, 3, 0);
    tbl t;
    if (tbl_init(&t, h.n, h.head) == 0) {
        unsigned limit = a->top ? a->top : 20;
        for (size_t i = 0; i < p->nprocesses && i < limit; i++) {
            const etl_pmc_process *x = &p->processes[i];
            char name[256], ps[16], th[16];
            uint32_t pid;
            proc_of(run, x->process, name, &pid);
            snprintf(ps, sizeof ps, pid == UINT32_MAX ? "-" : "%u", pid);
            snprintf(th, sizeof th, "%u", x->threads);
            const char *k[] = {text_name(name), ps, th};
            add_row(c, &t, k, 3, &x->s, 0);
        }
        const char *k[] = {"all", "", ""};
        add_row(c, &t, k, 3, &p->total, 0);
        tbl_print_text(&t, stdout, "");
        tbl_free(&t);
    }
    printf("\nThreads\n");
    threads_table(a, run, c, 0);
    printf("\nPer CPU\n");
    static const char *const ck[] = {"=CPU"};
    make_head(c, &h, ck, 1, 0);
    if (tbl_init(&t, h.n, h.head) == 0) {
        for (size_t i = 0; i < p->ncpus; i++) {
            char cpu[24];
            snprintf(cpu, sizeof cpu, "%zu", i);
            const char *k[] = {cpu};
            add_row(c, &t, k, 1, &p->cpus[i], 0);
        }
        tbl_print_text(&t, stdout, "");
        tbl_free(&t);
    }
    if (p->pmc_counter_reset)
        printf("note: %llu slices dropped: a counter went backwards (pmc_counter_reset)\n",
               (unsigned long long)p->pmc_counter_reset);
    if (p->pmc_count_mismatch)
        printf("note: %llu slices dropped: their two switches carry different numbers of counters\n",
               (unsigned long long)p->pmc_count_mismatch);
    rep_print_anomalies(run, stdout);
}

typedef struct opts {
    ctx *c;
    etl_pmc_options *po;
} opts;

/* --counters A,B,...: each slot's label and kind. */
static int pmc_counters(const cli_opt *opt, const char *s, char *err, size_t cap)
{
    opts *o = opt->dst;
    ctx *c = o->c;
    if (!*s) return -1;
    unsigned n = 0;
    memset(o->po->kinds, 0, sizeof o->po->kinds);
    memset(c->labels, 0, sizeof c->labels);
    while (*s) {
        size_t len = strcspn(s, ",");
        if (n == ETL_PMC_MAX) return snprintf(err, cap, "--counters names at most %d slots", ETL_PMC_MAX);
        if (len >= sizeof c->labels[n]) return snprintf(err, cap, "--counters: a name is too long");
        memcpy(c->labels[n], s, len);
        c->labels[n][len] = 0;
        o->po->kinds[n] = etl_pmc_kind_from_name(c->labels[n]);
        n++;
        s += len;
        if (*s == ',') s++;
    }
    o->po->nkinds = n;
    c->named = 1;
    return 0;
}

int cmd_pmc(int argc, char **argv)
{
    rep_args a;
    rep_args_init(&a, "pmc");
    a.skip = REP_SKIP_PMC; /* counters ride on the switches */
    ctx c;
    memset(&c, 0, sizeof c);
    etl_pmc_options po;
    etl_pmc_options_init(&po);
    opts o = {&c, &po};
    const cli_opt own[] = {
        {.kind = CLI_OPT_CUSTOM, .name = "counters", .arg = "A,B,...", .parse = pmc_counters, .dst = &o,
         .need = "names, e.g. cycles,instructions",
         .help = "what each counter slot counts, in order: cycles, instructions, llc (LLC misses), branch "
                 "(mispredicted branches), branches, or any other label (default: cycles,instructions,llc,branch, "
                 "the order `etlkit synth --pmc` writes; the trace does not record it)"},
        CLI_END};
    int pr = rep_parse(&a, &pmc_cmd, own, REP_OPTS_ALL, argc, argv);
    if (pr != CLI_OPTS_RUN) return pr;
    rep_run run;
    c.a = &a;
    c.run = &run;
    po.v0 = a.v0;
    po.v1 = a.has_range ? a.v1 : a.v0;
    if (etl_pmc_init(&c.p, NULL, &po) != ETL_OK) {
        fprintf(stderr, "%s pmc: out of memory\n", prog);
        etl_pmc_free(&c.p);
        return EXIT_IO;
    }
    /* CPU by CPU, unless --process or --thread select rows by what their thread is at their time. */
    etl_sched_percpu_consumer pc;
    etl_pmc_percpu(&c.p, &pc);
    int rc = rep_run_percpu(&run, &a, a.process || a.thread >= 0 ? NULL : &pc);
    if (rc == REP_TIME_ORDER) {
        etl_pmc_free(&c.p);
        rc = rep_run_start(&run, &a, on_row, &c, NULL);
        if (rc == EXIT_OK && etl_pmc_init(&c.p, run.model, &po) != ETL_OK) {
            fprintf(stderr, "%s pmc: out of memory\n", prog);
            rc = EXIT_IO;
        }
        if (rc != EXIT_OK) {
            etl_pmc_free(&c.p);
            rep_run_close(&run);
            return rc;
        }
        rep_run_go(&run, &a);
    } else if (rc != EXIT_OK) {
        etl_pmc_free(&c.p);
        return rc;
    }
    if (etl_pmc_finish(&c.p, run.end_ns) != ETL_OK) {
        fprintf(stderr, "%s pmc: out of memory\n", prog);
        run.told = true;
        rc = EXIT_IO;
    } else if (a.format == FMT_JSON) {
        jw w;
        jw_init(&w, stdout);
        jw_obj(&w, NULL);
        pmc_json(&w, &run, &c.p, c.labels, c.named, &a);
        jw_obj_end(&w);
        jw_end(&w);
    } else if (rep_no_switches(&run, &a)) {
        if (a.format == FMT_CSV) threads_table(&a, &run, &c, 1);
    } else if (!c.p.switches_pmc) {
        if (a.format == FMT_TEXT)
            printf("%s: no PMC counters on the context switches in this trace (none configured, or compact "
                   "batches, which carry none): nothing to report\n",
                   run.in.path);
        else threads_table(&a, &run, &c, 1);
    } else if (a.format == FMT_CSV) {
        threads_table(&a, &run, &c, 1);
    } else {
        print_text(&a, &run, &c);
    }
    etl_pmc_free(&c.p);
    int rc2 = rep_finish(&run, "pmc");
    return rc == EXIT_OK ? rc2 : rc;
}

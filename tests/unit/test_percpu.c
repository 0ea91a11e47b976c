/*
 * test_percpu.c - the model CPU by CPU (etl_sched_percpu_run) against the time-ordered
 * source and model: the same rows on every CPU (every field the per-CPU rows carry,
 * the switches they point at decoded alike, thread indices mapped to the same
 * instances), the same instances, processes and names, the same counters, and CPU
 * time (etl_usage) equal to the time-ordered run's; on 1, 2 and 5 threads. Traces:
 * synthesized ones of every form, the same with their TIDs folded onto a few (reused
 * TIDs, threads alive at once under one TID: the second walk), and damaged copies
 * (which may also say ETL_E_UNSUPPORTED, never give other answers).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include "etlkit/event.h"
#include "etlkit/usage.h"
#include "etlkit/sched.h"
#include "synthtruth.h"

#define SKIP (1u << ETL_SCHED_READY | 1u << ETL_SCHED_SPINLOCK)

/* ---- rows as text -------------------------------------------------------------- */

static size_t put_sw(char *o, size_t cap, const etl_cswitch *s)
{
    if (!s) return (size_t)snprintf(o, cap, " -");
    return (size_t)snprintf(o, cap, " [%llu %x %u %u %u %u %u %d %d %u %u %u %u %u %u %u %u %d %llu %u %llu %llu]",
                            (unsigned long long)s->ts, s->known, s->cpu, s->version, s->source, s->new_tid, s->old_tid,
                            s->new_priority, s->old_priority, s->previous_cstate, s->spare_byte, s->old_wait_reason,
                            s->old_wait_mode, s->old_state, s->old_ideal_processor, s->flags, s->new_wait_time,
                            s->old_remaining_quantum, (unsigned long long)s->pebs_index, s->pmc_count,
                            (unsigned long long)s->pmc[0], (unsigned long long)s->pmc[s->pmc_count ? s->pmc_count - 1 : 0]);
}

/* Text of a row's per-CPU fields, thread indices through map (NULL: as they are). */
static char *row_text(const etl_sched_row *r, const uint32_t *map)
{
    char b[1024];
    uint32_t nt = r->new_thread, ot = r->old_thread;
    if (map && nt < ETL_SCHED_NONE) nt = map[nt];
    if (map && ot < ETL_SCHED_NONE) ot = map[ot];
    size_t k = (size_t)snprintf(b, sizeof b, "%u %x %u %u %u %u %llu %llu %lld %lld %lld", r->cpu,
                                r->flags & (ETL_ROW_HEAD | ETL_ROW_TAIL | ETL_ROW_MISMATCH | ETL_ROW_OLD_SI_UNKNOWN), r->new_tid, r->old_tid, nt, ot,
                                (unsigned long long)r->si_ts, (unsigned long long)r->nso_ts, (long long)r->si,
                                (long long)r->nso, (long long)r->prev_switch);
    k += put_sw(b + k, sizeof b - k, r->in);
    put_sw(b + k, sizeof b - k, r->out);
    return strdup(b);
}

/* Rows in the order given: for the time-ordered run, all; per CPU for the other. */
typedef struct rows {
    char **v;
    size_t n, cap;
    uint32_t *local_new, *local_old; /* a worker's rows: their indices, mapped at merge */
} rows;

static void rows_add(rows *x, char *s)
{
    if (x->n == x->cap) {
        x->cap = x->cap ? x->cap * 2 : 1024;
        x->v = realloc(x->v, x->cap * sizeof *x->v);
        assert_non_null(x->v);
    }
    x->v[x->n++] = s;
}

static void rows_free(rows *x)
{
    for (size_t i = 0; i < x->n; i++) free(x->v[i]);
    free(x->v);
    memset(x, 0, sizeof *x);
}

static void on_general_row(void *ctx, const etl_sched_row *r)
{
    rows *per_cpu = ctx;
    rows_add(&per_cpu[r->cpu], row_text(r, NULL));
}

/* The per-CPU run's consumer: a worker keeps its rows (raw), the merge maps them. */
typedef struct wrows {
    etl_sched_row *v;
    etl_cswitch *in, *out;
    size_t n, cap;
} wrows;

typedef struct pc_ctx {
    rows *per_cpu;
    unsigned ncpu;
} pc_ctx;

static void *pc_open(void *ctx)
{
    (void)ctx;
    return calloc(1, sizeof(wrows));
}

static void pc_row(void *state, const etl_sched_row *r)
{
    wrows *w = state;
    if (w->n == w->cap) {
        w->cap = w->cap ? w->cap * 2 : 1024;
        w->v = realloc(w->v, w->cap * sizeof *w->v);
        w->in = realloc(w->in, w->cap * sizeof *w->in);
        w->out = realloc(w->out, w->cap * sizeof *w->out);
    }
    w->v[w->n] = *r;
    if (r->in) w->in[w->n] = *r->in;
    if (r->out) w->out[w->n] = *r->out;
    w->n++;
}

static etl_status pc_merge(void *ctx, void *state, const etl_sched *m, const uint32_t *map, size_t n)
{
    (void)m;
    pc_ctx *c = ctx;
    wrows *w = state;
    for (size_t i = 0; i < w->n; i++) {
        etl_sched_row r = w->v[i];
        if (r.new_thread < ETL_SCHED_NONE) assert_true(r.new_thread < n);
        if (r.old_thread < ETL_SCHED_NONE) assert_true(r.old_thread < n);
        r.in = r.in ? &w->in[i] : NULL;
        r.out = r.out ? &w->out[i] : NULL;
        assert_true(r.cpu < c->ncpu);
        rows_add(&c->per_cpu[r.cpu], row_text(&r, map));
    }
    return ETL_OK;
}

static void pc_close(void *ctx, void *state)
{
    (void)ctx;
    wrows *w = state;
    free(w->v);
    free(w->in);
    free(w->out);
    free(w);
}

/* ---- the model as text ------------------------------------------------------------ */

static void model_text(const etl_sched *m, rows *out)
{
    size_t n;
    const etl_sched_thread *t = etl_sched_threads(m, &n);
    const char *names = etl_sched_names(m);
    char b[2048];
    for (size_t i = 0; i < n; i++) {
        snprintf(b, sizeof b, "t%zu %u %u %u '%s' %llu %llu %u %u %u", i, t[i].tid, t[i].pid, t[i].process,
                 names + t[i].name, (unsigned long long)t[i].start_ts, (unsigned long long)t[i].end_ts, t[i].started,
                 t[i].ended, t[i].base_priority);
        rows_add(out, strdup(b));
    }
    const etl_sched_process *p = etl_sched_processes(m, &n);
    for (size_t i = 0; i < n; i++) {
        snprintf(b, sizeof b, "p%zu %u '%s' '%s' %llu %llu %u %u", i, p[i].pid, names + p[i].name,
                 names + p[i].command_line, (unsigned long long)p[i].start_ts, (unsigned long long)p[i].end_ts,
                 p[i].started, p[i].ended);
        rows_add(out, strdup(b));
    }
}

static void same_rows(const rows *a, const rows *b, const char *what)
{
    if (a->n != b->n) fail_msg("%s: %zu rows against %zu", what, a->n, b->n);
    for (size_t i = 0; i < a->n; i++)
        if (strcmp(a->v[i], b->v[i]) != 0) fail_msg("%s, row %zu:\n  time order: %s\n  per CPU:    %s", what, i, a->v[i], b->v[i]);
}

/* ---- one trace ------------------------------------------------------------------------ */

typedef struct general {
    rows *per_cpu;
    rows model;
    etl_sched_stats ms;
    etl_sched_source_stats ss;
    etl_stats damage;
    uint64_t end_ts;
    unsigned ncpu;
} general;

static void run_general(etl_reader *r, bool complete_only, general *g)
{
    memset(g, 0, sizeof *g);
    g->ncpu = etl_reader_cpu_count(r);
    g->per_cpu = calloc(g->ncpu + 1, sizeof *g->per_cpu);
    etl_sched_source *s;
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1, .skip = SKIP, .threads = 1};
    assert_int_equal(etl_sched_source_open(r, &so, &s), ETL_OK);
    etl_sched *m;
    etl_sched_options mo = {sizeof mo, on_general_row, g->per_cpu, complete_only, NULL, r};
    assert_int_equal(etl_sched_open(etl_reader_clock(r), g->ncpu, &mo, &m), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(m, &ev);
    g->end_ts = etl_sched_end_ts(r, etl_sched_source_stats_get(s)->last_ts);
    etl_sched_finish(m, g->end_ts);
    g->ms = *etl_sched_stats_get(m);
    g->ss = *etl_sched_source_stats_get(s);
    etl_sched_source_damage(s, &g->damage);
    model_text(m, &g->model);
    etl_sched_close(m);
    etl_sched_source_close(s);
}

static void general_free(general *g)
{
    for (unsigned c = 0; c <= g->ncpu; c++) rows_free(&g->per_cpu[c]);
    free(g->per_cpu);
    rows_free(&g->model);
}

static void same_counters(const general *g, const etl_sched_percpu_result *res)
{
    assert_int_equal(g->end_ts, res->end_ts);
    assert_int_equal(g->ms.switches, res->stats.switches);
    assert_int_equal(g->ms.rows, res->stats.rows);
    assert_int_equal(g->ms.cswitch_chain_mismatch, res->stats.cswitch_chain_mismatch);
    assert_int_equal(g->ms.time_backwards, res->stats.time_backwards);
    assert_int_equal(g->ms.threads, res->stats.threads);
    assert_int_equal(g->ms.processes, res->stats.processes);
    assert_int_equal(g->ms.unknown_threads, res->stats.unknown_threads);
    assert_int_equal(g->ss.switches, res->source.switches);
    assert_int_equal(g->ss.full_switches, res->source.full_switches);
    assert_int_equal(g->ss.compact_switches, res->source.compact_switches);
    assert_int_equal(g->ss.duplicates_dropped, res->source.duplicates_dropped);
    assert_int_equal(g->ss.undecodable, res->source.undecodable);
    assert_int_equal(g->ss.late_batches, res->source.late_batches);
    assert_int_equal(g->ss.broken_chains, res->source.broken_chains);
    assert_int_equal(g->ss.last_ts, res->source.last_ts);
    assert_int_equal(g->damage.buffers, res->damage.buffers);
    assert_int_equal(g->damage.bad_buffers, res->damage.bad_buffers);
    assert_int_equal(g->damage.bad_records, res->damage.bad_records);
    assert_int_equal(g->damage.skipped_bytes, res->damage.skipped_bytes);
    assert_int_equal(g->damage.decompress_errors, res->damage.decompress_errors);
    assert_int_equal(g->damage.truncated_buffers, res->damage.truncated_buffers);
}

/* CPU time from the time-ordered rows against the per-CPU run's own accounting. */
static void same_usage(etl_reader *r, const general *g, unsigned threads, bool complete_only, int64_t v0, int64_t v1)
{
    /* The time-ordered run again, into etl_usage. */
    etl_usage a, b;
    etl_usage_options uo = {sizeof uo, v0, v1, 10, 0, true, 0, 0, 0, NULL, 0};
    etl_sched_source *s;
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1, .skip = SKIP, .threads = 1};
    assert_int_equal(etl_sched_source_open(r, &so, &s), ETL_OK);
    etl_sched *m;
    etl_sched_options mo = {sizeof mo, etl_usage_add, &a, complete_only, NULL, r};
    assert_int_equal(etl_sched_open(etl_reader_clock(r), g->ncpu, &mo, &m), ETL_OK);
    assert_int_equal(etl_usage_init(&a, m, &uo), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(m, &ev);
    etl_sched_finish(m, g->end_ts);
    etl_usage_finish(&a, etl_clock_ns(etl_reader_clock(r), g->end_ts));

    assert_int_equal(etl_usage_init(&b, NULL, &uo), ETL_OK);
    etl_sched_percpu_consumer c;
    etl_usage_percpu(&b, &c);
    assert_true(c.cpu_time);
    etl_sched_percpu_options po = {.sz = sizeof po, .bias = -1, .threads = threads, .complete_only = complete_only};
    etl_sched_percpu_result res;
    assert_int_equal(etl_sched_percpu_run(r, &po, &c, &res), ETL_OK);
    etl_usage_finish(&b, etl_clock_ns(etl_reader_clock(r), res.end_ts));
    assert_int_equal(a.rows, b.rows);
    assert_int_equal(a.ncpus, b.ncpus);
    assert_memory_equal(a.cpus, b.cpus, a.ncpus * sizeof *a.cpus);
    assert_int_equal(a.nthreads, b.nthreads);
    for (size_t i = 0; i < a.nthreads; i++) {
        const etl_usage_thread *x = &a.threads[i], *y = &b.threads[i];
        assert_int_equal(x->thread, y->thread);
        assert_int_equal(x->cpu_ns, y->cpu_ns);
        assert_int_equal(x->switches, y->switches);
        assert_int_equal(x->voluntary, y->voluntary);
        assert_int_equal(x->involuntary, y->involuntary);
        assert_int_equal(x->first_ns, y->first_ns);
        assert_int_equal(x->last_ns, y->last_ns);
    }
    assert_int_equal(a.nprocesses, b.nprocesses);
    for (size_t i = 0; i < a.nprocesses; i++) {
        assert_int_equal(a.processes[i].process, b.processes[i].process);
        assert_int_equal(a.processes[i].cpu_ns, b.processes[i].cpu_ns);
        assert_int_equal(a.processes[i].threads, b.processes[i].threads);
    }
    etl_usage_free(&a);
    etl_usage_free(&b);
    etl_sched_close(res.model);
    etl_sched_close(m);
    etl_sched_source_close(s);
}

/*
 * The per-CPU run on `threads` threads against g. Returns false when it said
 * ETL_E_UNSUPPORTED (allowed only if may_refuse).
 */
static bool same_as_general(etl_reader *r, const general *g, unsigned threads, bool complete_only, bool may_refuse,
                            const char *what)
{
    pc_ctx ctx = {calloc(g->ncpu + 1, sizeof(rows)), g->ncpu};
    etl_sched_percpu_consumer c = {&ctx, pc_open, pc_row, pc_merge, pc_close, false};
    /* Five threads spill every lifetime record: the spool read back is the same. */
    etl_sched_percpu_options po = {.sz = sizeof po, .bias = -1, .threads = threads, .complete_only = complete_only,
                                   .spool_budget = threads == 5 ? 1 : 0};
    etl_sched_percpu_result res;
    etl_status st = etl_sched_percpu_run(r, &po, &c, &res);
    bool ok = st == ETL_OK;
    if (st == ETL_E_UNSUPPORTED && may_refuse) {
        ok = false;
    } else {
        assert_int_equal(st, ETL_OK);
        char label[256];
        for (unsigned cpu = 0; cpu < g->ncpu; cpu++) {
            snprintf(label, sizeof label, "%s, %u threads, CPU %u", what, threads, cpu);
            same_rows(&g->per_cpu[cpu], &ctx.per_cpu[cpu], label);
        }
        rows mt = {0};
        model_text(res.model, &mt);
        snprintf(label, sizeof label, "%s, %u threads, the model", what, threads);
        same_rows(&g->model, &mt, label);
        rows_free(&mt);
        same_counters(g, &res);
        etl_sched_close(res.model);
    }
    for (unsigned cpu = 0; cpu <= g->ncpu; cpu++) rows_free(&ctx.per_cpu[cpu]);
    free(ctx.per_cpu);
    return ok;
}

/*
 * Everything on one trace; returns whether the per-CPU run took it: always, unless
 * damaged or logging both forms of switches on a CPU (may_refuse).
 */
static bool check_trace(const char *path, bool damaged, bool may_refuse)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open(path, NULL, &r, &d) != ETL_OK) {
        assert_true(damaged);
        return false;
    }
    bool took = true;
    for (int co = 0; co <= 1; co++) {
        general g;
        run_general(r, co, &g);
        if (!damaged) assert_true(g.ms.switches > 100);
        for (unsigned t = 1; t <= 5 && took; t += t == 1 ? 1 : 3)
            took = same_as_general(r, &g, t, co, damaged || may_refuse, path);
        if (took) {
            same_usage(r, &g, 2, co, 0, 0);
            int64_t end = etl_clock_ns(etl_reader_clock(r), g.end_ts);
            same_usage(r, &g, 1, co, end / 3, end / 2); /* a window */
        }
        general_free(&g);
    }
    etl_reader_close(r);
    return took;
}

/* ---- traces ---------------------------------------------------------------------------- */

typedef struct flavour {
    const char *bits, *clock, *format, *cpus, *pmc;
    bool z;
} flavour;

static const flavour flavours[] = {
    {"64", "qpc", "full", "8", "4", false},    {"64", "qpc", "compact", "6", NULL, false},
    {"64", "qpc", "both", "5", NULL, true},    {"32", "cycles", "full", "3", "2", false},
    {"64", "system", "compact", "8", NULL, true}, {"64", "qpc", "full", "1", NULL, false},
};

static void make(const flavour *f, unsigned seed, const char *path)
{
    etl_synth_options o;
    etl_synth_options_init(&o);
    char s[16];
    snprintf(s, sizeof s, "%u", seed);
    st_set(&o, "seed", s);
    st_set(&o, "cpus", f->cpus);
    st_set(&o, "threads", "40");
    st_set(&o, "duration", "0.3");
    st_set(&o, "pointer-size", f->bits);
    st_set(&o, "clock", f->clock);
    st_set(&o, "cswitch", f->format);
    st_set(&o, "buffer-size", "16K");
    st_set(&o, "churn", "50");
    if (f->pmc) st_set(&o, "pmc", f->pmc);
    st_set(&o, f->z ? "compress" : "no-compress", NULL);
    st_truth t;
    st_run(path, &o, &t);
    st_free(&t);
}

static uint32_t fold(uint32_t tid, uint32_t k) { return tid ? 4 + (tid / 4 % k) * 4 : 0; }

static void fold32(uint8_t *p, uint32_t k)
{
    uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    v = fold(v, k);
    p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/*
 * The trace at path with every TID folded onto k (an uncompressed file): switches,
 * ReadyThreads, batches' TID tables, Thread and SetName events. Many threads then share
 * a TID over the trace, some at the same time.
 */
static void fold_tids(const char *path, uint32_t k)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    size_t n = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n);
    assert_int_equal(fread(b, 1, n, f), n);
    fclose(f);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open_memory(b, n, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    etl_record rec;
    size_t changed = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook)) continue;
        uint8_t *p = (uint8_t *)rec.payload.p; /* our own copy */
        size_t pn = rec.payload.n;
        if (hook == ETL_HOOK_CSWITCH && pn >= 8) fold32(p, k), fold32(p + 4, k);
        else if (hook == ETL_HOOK_READY_THREAD && pn >= 4) fold32(p, k);
        else if (hook == ETL_HOOK_CSWITCH_BATCH && pn >= ETL_CCSWAP_HEADER_SIZE)
            for (unsigned i = 0; i < 16; i++) fold32(p + 8 + 4 * i, k);
        else if ((hook >= ETL_HOOK_THREAD_START && hook <= ETL_HOOK_THREAD_DC_END) || hook == ETL_HOOK_THREAD_SET_NAME) {
            if (pn >= 8) fold32(p + 4, k);
        } else continue;
        changed++;
    }
    assert_true(changed > 100);
    etl_iter_close(it);
    etl_reader_close(r);
    f = fopen(path, "wb");
    assert_int_equal(fwrite(b, 1, n, f), n);
    fclose(f);
    free(b);
}

static void damage(const char *path, uint64_t seed, int flips)
{
    FILE *f = fopen(path, "r+b");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    uint64_t x = seed;
    for (int k = 0; k < flips; k++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        long off = 16384 + (long)(x % (uint64_t)(size - 16384));
        fseek(f, off, SEEK_SET);
        int c = fgetc(f);
        fseek(f, off, SEEK_SET);
        fputc((c ^ (int)(x >> 56)) & 0xFF, f);
    }
    fclose(f);
}

static void test_flavours(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        char path[512];
        st_tmp(path, sizeof path, "percpu", "t.etl");
        make(&flavours[i], 21 + (unsigned)i, path);
        bool both = strcmp(flavours[i].format, "both") == 0;
        /* A CPU logging both forms keeps the first it shows: only time order knows which. */
        assert_true(check_trace(path, false, both) != both);
        unlink(path);
    }
}

/* TIDs that name two instances or more in the time-ordered model of the trace at path. */
static size_t reused_tids(const char *path)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    general g;
    run_general(r, false, &g);
    etl_reader_close(r);
    size_t n = 0;
    for (size_t i = 0; i < g.model.n; i++) {
        unsigned tid;
        if (sscanf(g.model.v[i], "t%*u %u", &tid) != 1) continue;
        for (size_t j = 0; j < i; j++) {
            unsigned t2;
            if (sscanf(g.model.v[j], "t%*u %u", &t2) == 1 && t2 == tid) {
                n++;
                break;
            }
        }
    }
    general_free(&g);
    return n;
}

/* Reused TIDs (folded): the instances change under a TID, and the second walk keys them apart. */
static void test_reused_tids(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        if (flavours[i].z) continue;
        char path[512];
        st_tmp(path, sizeof path, "percpu", "r.etl");
        make(&flavours[i], 31 + (unsigned)i, path);
        fold_tids(path, i % 2 ? 7 : 23);
        assert_true(reused_tids(path) >= 5); /* fewer now that a Start of a thread that never ran is no new one */
        bool both = strcmp(flavours[i].format, "both") == 0;
        assert_true(check_trace(path, false, both) != both);
        unlink(path);
    }
}

/* Damaged copies: refused (time order then) or the same answers, never others. */
static void test_damaged(void **state)
{
    (void)state;
    int took = 0, tried = 0;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        for (int flips = 1; flips <= 200; flips *= 14) {
            char path[512];
            st_tmp(path, sizeof path, "percpu", "d.etl");
            make(&flavours[i], 41 + (unsigned)i, path);
            damage(path, 0x9E3779B97F4A7C15ull * (i + 1) + (uint64_t)flips, flips);
            took += check_trace(path, true, true);
            tried++;
            unlink(path);
        }
    }
    /* Light damage mostly leaves each CPU's time rising: answered per CPU; heavy damage is refused. */
    assert_true(took > 0);
    assert_true(took < tried);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_flavours),
        cmocka_unit_test(test_reused_tids),
        cmocka_unit_test(test_damaged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

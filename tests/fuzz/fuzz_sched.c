/*
 * fuzz_sched.c - the scheduler model and its aggregations on arbitrary input, two ways:
 *   first byte even: the bytes are an ETL file, read through the time-ordered source
 *                    (compact batches read ahead per CPU) into the model;
 *   first byte odd:  the bytes are a sequence of events pushed straight into the model:
 *                    out-of-order times, unknown threads, TID reuse, switch-outs of
 *                    threads never switched in, ReadyThreads for anyone.
 * Nothing may crash or leak, and no row or aggregate may hold a negative duration. On ETL
 * bytes the model CPU by CPU (etl_sched_percpu_run) must also give the time-ordered run's
 * CPU time, instances and counters, unless it declines (ETL_E_UNSUPPORTED); and Ready
 * values spilled past a one-value budget the same percentiles as kept in memory.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/etlkit.h"
#include "etlkit/sched.h"
#include "etlkit/usage.h"

/* Every row into two aggregations: Ready values kept in memory, and spilled past one value. */
typedef struct usages {
    etl_usage mem, spill;
} usages;

static void check_row(void *ctx, const etl_sched_row *r)
{
    usages *u = ctx;
    if (r->nso < r->si) abort();
    if ((r->flags & ETL_ROW_READY_TIME) && r->rt > r->si) abort();
    if ((r->flags & ETL_ROW_READY_TIME) && (r->flags & ETL_ROW_PREV) && r->lso > r->rt) abort();
    etl_usage_add(&u->mem, r);
    etl_usage_add(&u->spill, r);
}

/* The spilled percentiles are the in-memory ones, for every thread, process and the trace. */
static void same_spilled(const etl_usage *a, const etl_usage *b)
{
    if (memcmp(&a->ready_all, &b->ready_all, sizeof a->ready_all) ||
        memcmp(&a->woken_all, &b->woken_all, sizeof a->woken_all) || a->nthreads != b->nthreads ||
        a->nprocesses != b->nprocesses)
        abort();
    for (size_t i = 0; i < a->nthreads; i++)
        if (memcmp(&a->threads[i].ready, &b->threads[i].ready, sizeof a->threads[i].ready) ||
            memcmp(&a->threads[i].woken, &b->threads[i].woken, sizeof a->threads[i].woken))
            abort();
    for (size_t i = 0; i < a->nprocesses; i++)
        if (memcmp(&a->processes[i].ready, &b->processes[i].ready, sizeof a->processes[i].ready)) abort();
}

static void check_usage(const etl_usage *u)
{
    for (size_t i = 0; i < u->nthreads; i++) {
        const etl_usage_thread *t = &u->threads[i];
        if (t->cpu_ns < 0 || t->wait_ns < 0 || t->ready.sum_ns < 0 || t->ready.p99_ns > t->ready.max_ns) abort();
    }
    for (size_t c = 0; c < u->ncpus; c++)
        if (u->cpus[c].busy_ns < 0 || u->cpus[c].idle_ns < 0 || u->cpus[c].unknown_ns < 0) abort();
}

static uint64_t rd(const uint8_t **p, const uint8_t *end, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n && *p < end; i++) v |= (uint64_t)*(*p)++ << (8 * i);
    return v;
}

static void events(etl_sched *m, const uint8_t *p, const uint8_t *end)
{
    uint64_t ts = 1000;
    while (p < end) {
        etl_sched_event ev;
        memset(&ev, 0, sizeof ev);
        unsigned k = (unsigned)rd(&p, end, 1);
        ev.cpu = (uint16_t)(rd(&p, end, 1) % 6);
        int8_t dt = (int8_t)rd(&p, end, 1);
        ts += (uint64_t)(int64_t)dt; /* may go back */
        ev.ts = ts;
        uint32_t a = (uint32_t)rd(&p, end, 1) % 12, b = (uint32_t)rd(&p, end, 1) % 12;
        switch (k % 5) {
        case 0:
        case 1:
            ev.kind = ETL_SCHED_SWITCH;
            ev.hook = ETL_HOOK_CSWITCH;
            ev.u.sw.ts = ts;
            ev.u.sw.cpu = ev.cpu;
            ev.u.sw.known = (uint32_t)rd(&p, end, 2) | ETL_CSW_TIME | ETL_CSW_CPU;
            ev.u.sw.new_tid = a;
            ev.u.sw.old_tid = b;
            ev.u.sw.old_state = (uint8_t)(k >> 3) % 11;
            ev.u.sw.old_wait_reason = (uint8_t)rd(&p, end, 1);
            break;
        case 2:
            ev.kind = ETL_SCHED_READY;
            ev.u.ready.thread_id = a;
            ev.u.ready.flags = (uint8_t)b;
            break;
        case 3:
            ev.kind = ETL_SCHED_THREAD;
            ev.hook = (uint16_t)(ETL_HOOK_THREAD_START + (b & 3));
            ev.u.thread.known = ETL_THR_IDS;
            ev.u.thread.thread_id = a;
            ev.u.thread.process_id = b;
            break;
        default:
            ev.kind = ETL_SCHED_PROCESS;
            ev.hook = (uint16_t)(ETL_HOOK_PROCESS_START + (a & 3));
            ev.u.process.known = ETL_PROC_IDS;
            ev.u.process.process_id = b;
            break;
        }
        etl_sched_push(m, &ev);
    }
}

/* CPU time, instances and counters: time order against CPU by CPU on `threads` threads. */
static void percpu_differential(etl_reader *r, unsigned threads)
{
    const uint32_t skip = 1u << ETL_SCHED_READY | 1u << ETL_SCHED_SPINLOCK;
    etl_usage a, b;
    etl_usage_options uo = {.sz = sizeof uo, .longest = 3, .no_latency = true};
    etl_sched_source *s;
    etl_sched *m;
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1, .skip = skip, .threads = 1};
    etl_sched_options mo = {.sz = sizeof mo, .on_row = etl_usage_add, .ctx = &a, .reader = r}; /* as the per-CPU run: a file missing buffers */
    if (etl_sched_source_open(r, &so, &s) != ETL_OK ||
        etl_sched_open(etl_reader_clock(r), etl_reader_processors(r), &mo, &m) != ETL_OK ||
        etl_usage_init(&a, m, &uo) != ETL_OK || etl_usage_init(&b, NULL, &uo) != ETL_OK)
        abort();
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(m, &ev);
    uint64_t end = etl_sched_end_ts(r, etl_sched_source_stats_get(s)->last_ts);
    etl_sched_finish(m, end);
    etl_usage_finish(&a, etl_clock_ns(etl_reader_clock(r), end));
    etl_sched_percpu_consumer c;
    etl_usage_percpu(&b, &c);
    etl_sched_percpu_options po = {.sz = sizeof po, .bias = -1, .threads = threads, .spool_budget = 1};
    etl_sched_percpu_result res;
    etl_status st = etl_sched_percpu_run(r, &po, &c, &res);
    if (st != ETL_OK && st != ETL_E_UNSUPPORTED) abort();
    if (st == ETL_OK) {
        etl_usage_finish(&b, etl_clock_ns(etl_reader_clock(r), res.end_ts));
        const etl_sched_stats *x = etl_sched_stats_get(m);
        const etl_sched_source_stats *y = etl_sched_source_stats_get(s);
        if (res.end_ts != end || res.stats.switches != x->switches || res.stats.rows != x->rows ||
            res.stats.cswitch_chain_mismatch != x->cswitch_chain_mismatch || res.stats.threads != x->threads ||
            res.stats.processes != x->processes || res.stats.unknown_threads != x->unknown_threads ||
            res.stats.time_backwards != x->time_backwards || res.stats.repeated_starts != x->repeated_starts ||
            res.stats.over_limit != x->over_limit || memcmp(&res.source, y, sizeof *y) != 0)
            abort();
        if (a.ncpus != b.ncpus || (a.ncpus && memcmp(a.cpus, b.cpus, a.ncpus * sizeof *a.cpus)) || a.nthreads != b.nthreads)
            abort();
        for (size_t i = 0; i < a.nthreads; i++) {
            const etl_usage_thread *p = &a.threads[i], *q = &b.threads[i];
            if (p->thread != q->thread || p->cpu_ns != q->cpu_ns || p->switches != q->switches ||
                p->voluntary != q->voluntary || p->involuntary != q->involuntary || p->first_ns != q->first_ns ||
                p->last_ns != q->last_ns)
                abort();
        }
        size_t n1, n2;
        const etl_sched_thread *t1 = etl_sched_threads(m, &n1), *t2 = etl_sched_threads(res.model, &n2);
        if (n1 != n2) abort();
        for (size_t i = 0; i < n1; i++)
            if (t1[i].tid != t2[i].tid || t1[i].pid != t2[i].pid || t1[i].process != t2[i].process ||
                t1[i].start_ts != t2[i].start_ts || t1[i].started != t2[i].started || t1[i].ended != t2[i].ended ||
                strcmp(etl_sched_names(m) + t1[i].name, etl_sched_names(res.model) + t2[i].name) != 0)
                abort();
        etl_sched_close(res.model);
    }
    etl_usage_free(&a);
    etl_usage_free(&b);
    etl_sched_close(m);
    etl_sched_source_close(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    usages us;
    memset(&us, 0, sizeof us);
    etl_sched_options mo = {.sz = sizeof mo, .on_row = check_row, .ctx = &us};
    /* Intervals cost one step per column a slice crosses (at most ETL_USAGE_MAX_BUCKETS): only when asked. */
    etl_usage_options uo = {.sz = sizeof uo, .longest = 3, .interval_ns = (data[0] & 2) ? 100000000 : 0}, us_o;
    etl_sched *m = NULL;
    if (data[0] & 1) {
        etl_clock clk = {.type = ETL_CLOCK_QPC, .ticks_per_sec = 10000000, .t0 = 1000};
        uo.interval_ns = 1000;
        us_o = uo;
        us_o.latency_budget = 4;
        if (etl_sched_open(&clk, 4, &mo, &m) != ETL_OK || etl_usage_init(&us.mem, m, &uo) != ETL_OK ||
            etl_usage_init(&us.spill, m, &us_o) != ETL_OK)
            abort();
        events(m, data + 1, data + size);
        etl_sched_finish(m, 5000);
        etl_usage_finish(&us.mem, 400000);
        etl_usage_finish(&us.spill, 400000);
    } else {
        etl_reader *r;
        etl_diag d;
        if (etl_reader_open_memory(data + 1, size - 1, NULL, &r, &d) != ETL_OK) return 0;
        etl_sched_source *s, *t;
        /* Differential: a source on several threads (and the same kinds skipped) must give the same events. */
        uint32_t skip = (data[0] & 4) ? 1u << ETL_SCHED_READY : (data[0] & 8) ? 1u << ETL_SCHED_SWITCH : 0;
        etl_sched_source_options o1 = {.sz = sizeof o1, .bias = -1, .skip = skip, .threads = 1}, on = o1;
        on.threads = 2 + ((data[0] >> 4) & 3);
        if (etl_sched_source_open(r, &o1, &s) != ETL_OK || etl_sched_source_open(r, &on, &t) != ETL_OK) abort();
        us_o = uo;
        us_o.latency_budget = 4;
        if (etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), &mo, &m) != ETL_OK ||
            etl_usage_init(&us.mem, m, &uo) != ETL_OK || etl_usage_init(&us.spill, m, &us_o) != ETL_OK)
            abort();
        etl_sched_event ev, et;
        for (;;) {
            etl_status a = etl_sched_source_next(s, &ev), b = etl_sched_source_next(t, &et);
            if (a != b) abort();
            if (a != ETL_OK) break;
            if (ev.kind != et.kind || ev.cpu != et.cpu || ev.hook != et.hook || ev.ts != et.ts) abort();
            if (ev.kind == ETL_SCHED_SWITCH &&
                (ev.u.sw.new_tid != et.u.sw.new_tid || ev.u.sw.old_tid != et.u.sw.old_tid ||
                 ev.u.sw.known != et.u.sw.known || ev.u.sw.old_state != et.u.sw.old_state))
                abort();
            if (ev.kind == ETL_SCHED_THREAD &&
                (ev.u.thread.thread_name.text.n != et.u.thread.thread_name.text.n ||
                 (ev.u.thread.thread_name.text.n &&
                  memcmp(ev.u.thread.thread_name.text.p, et.u.thread.thread_name.text.p, ev.u.thread.thread_name.text.n))))
                abort();
            etl_sched_push(m, &ev);
        }
        if (memcmp(etl_sched_source_stats_get(s), etl_sched_source_stats_get(t), sizeof(etl_sched_source_stats)))
            abort();
        etl_sched_source_close(t);
        uint64_t end = etl_sched_end_ts(r, etl_sched_source_stats_get(s)->last_ts);
        etl_sched_finish(m, end);
        etl_usage_finish(&us.mem, etl_clock_ns(etl_reader_clock(r), end));
        etl_usage_finish(&us.spill, etl_clock_ns(etl_reader_clock(r), end));
        etl_sched_source_close(s);
        percpu_differential(r, 1 + ((data[0] >> 4) & 1));
        etl_reader_close(r);
    }
    check_usage(&us.mem);
    same_spilled(&us.mem, &us.spill);
    etl_usage_free(&us.mem);
    etl_usage_free(&us.spill);
    etl_sched_close(m);
    return 0;
}

/*
 * test_model_bounds.c - the scheduler model's state is bounded by what a trace can
 * mean, not by its size (issue 18 #3, #4): a Start of a thread started, not ended and
 * never switched since is the same thread again (repeated_starts), not a new instance;
 * thread and process instances stop at ETL_SCHED_MAX_INSTANCES, the events past it
 * counted (over_limit); a name set again costs nothing. And the model CPU by CPU
 * (etl_sched_percpu_run) decides every Start as the time-ordered model does, on hand-
 * built traces whose Starts of live threads come before and after their switches, on
 * other CPUs than the switches, on one and two threads; with a reused TID's many
 * instances looked up in logarithmic time.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include "etlbuild.h"
#include "etlkit/sched.h"

/* ---- the time-ordered model, events pushed by hand --------------------------------------- */

static etl_sched *open_model(void)
{
    static etl_clock c;
    memset(&c, 0, sizeof c);
    c.ticks_per_sec = 10000000;
    etl_sched *m;
    assert_int_equal(etl_sched_open(&c, 2, NULL, &m), ETL_OK);
    return m;
}

static void push_thread(etl_sched *m, uint16_t hook, uint32_t tid, uint32_t pid, uint64_t ts, const char *name)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_THREAD;
    ev.hook = hook;
    ev.ts = ts;
    ev.u.thread.known = ETL_THR_IDS;
    ev.u.thread.thread_id = tid;
    ev.u.thread.process_id = pid;
    uint8_t u16[64];
    if (name) {
        size_t n = strlen(name);
        for (size_t i = 0; i < n; i++) u16[2 * i] = (uint8_t)name[i], u16[2 * i + 1] = 0;
        ev.u.thread.known |= ETL_THR_NAME;
        ev.u.thread.thread_name.text = (etl_span){u16, 2 * n};
        ev.u.thread.thread_name.terminated = true;
    }
    assert_int_equal(etl_sched_push(m, &ev), ETL_OK);
}

static void push_switch(etl_sched *m, uint16_t cpu, uint32_t new_tid, uint32_t old_tid, uint64_t ts)
{
    etl_sched_event ev;
    memset(&ev, 0, sizeof ev);
    ev.kind = ETL_SCHED_SWITCH;
    ev.cpu = cpu;
    ev.ts = ts;
    ev.u.sw.ts = ts;
    ev.u.sw.cpu = cpu;
    ev.u.sw.new_tid = new_tid;
    ev.u.sw.old_tid = old_tid;
    ev.u.sw.old_state = 5;
    ev.u.sw.known = ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_STATE | ETL_CSW_TIME | ETL_CSW_CPU;
    assert_int_equal(etl_sched_push(m, &ev), ETL_OK);
}

enum { START = ETL_HOOK_THREAD_START, END = ETL_HOOK_THREAD_END, DCSTART = ETL_HOOK_THREAD_DC_START };

/* A Start of a live thread that never ran is that thread again; once it ran, a new one (its End lost). */
static void test_repeated_starts(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    for (unsigned i = 0; i < 100000; i++) push_thread(m, START, 8, 4, 100, NULL);
    assert_int_equal(etl_sched_stats_get(m)->threads, 1);
    assert_int_equal(etl_sched_stats_get(m)->repeated_starts, 99999);
    uint32_t first = etl_sched_thread_of(m, 8);
    push_switch(m, 0, 8, 0, 200);
    push_thread(m, START, 8, 4, 300, NULL); /* it ran: a new thread under the TID */
    assert_int_not_equal(etl_sched_thread_of(m, 8), first);
    push_thread(m, START, 8, 4, 310, NULL); /* the new one has not */
    assert_int_equal(etl_sched_stats_get(m)->threads, 2);
    assert_int_equal(etl_sched_stats_get(m)->repeated_starts, 100000);
    /* Ended: a Start is a new thread, run or not. */
    push_thread(m, END, 8, 4, 320, NULL);
    push_thread(m, START, 8, 4, 330, NULL);
    assert_int_equal(etl_sched_stats_get(m)->threads, 3);
    /* A DCStart restating the thread is no repeat; one naming another process is. */
    push_thread(m, DCSTART, 12, 4, 340, NULL);
    push_thread(m, DCSTART, 12, 4, 341, NULL);
    push_thread(m, DCSTART, 12, 6, 342, NULL);
    assert_int_equal(etl_sched_stats_get(m)->threads, 4);
    assert_int_equal(etl_sched_stats_get(m)->repeated_starts, 100001);
    assert_int_equal(etl_sched_stats_get(m)->over_limit, 0);
    etl_sched_close(m);
}

/* A switch on a CPU past ETL_SCHED_MAX_CPUS is left out and counted (it was dropped unseen); below, CPUs are added. */
static void test_cpu_limit(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    push_switch(m, 65535, 8, 0, 100);
    push_switch(m, ETL_SCHED_MAX_CPUS, 8, 0, 101);
    assert_int_equal(etl_sched_stats_get(m)->switches, 0);
    assert_int_equal(etl_sched_stats_get(m)->over_limit, 2);
    push_switch(m, ETL_SCHED_MAX_CPUS - 1, 8, 0, 102);
    assert_int_equal(etl_sched_stats_get(m)->switches, 1);
    assert_int_equal(etl_sched_stats_get(m)->over_limit, 2);
    etl_sched_close(m);
}

/* Renaming a thread to its name, or a shorter one, keeps its place in the name pool. */
static void test_names_bounded(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    push_thread(m, DCSTART, 8, 4, 100, "worker-long-name");
    const etl_sched_thread *t = etl_sched_thread_at(m, etl_sched_thread_of(m, 8));
    uint32_t at = t->name;
    for (unsigned i = 0; i < 100000; i++) push_thread(m, DCSTART, 8, 4, 101 + i, i & 1 ? "worker" : "worker-long-name");
    t = etl_sched_thread_at(m, etl_sched_thread_of(m, 8));
    assert_int_equal(t->name, at);
    assert_string_equal(etl_sched_names(m) + t->name, "worker");
    push_thread(m, DCSTART, 8, 4, 200000, "a-name-longer-than-the-first");
    t = etl_sched_thread_at(m, etl_sched_thread_of(m, 8));
    assert_string_equal(etl_sched_names(m) + t->name, "a-name-longer-than-the-first");
    assert_int_equal(etl_sched_stats_get(m)->threads, 1);
    assert_int_equal(etl_sched_stats_get(m)->over_limit, 0);
    etl_sched_close(m);
}

/* Past ETL_SCHED_MAX_INSTANCES threads, TIDs name none (each lookup counted); processes alike. */
static void test_instance_limit(void **state)
{
    (void)state;
    etl_sched *m = open_model();
    uint32_t n = ETL_SCHED_MAX_INSTANCES;
    for (uint32_t i = 1; i <= n + 10; i++) push_switch(m, 0, i * 4, (i - 1) * 4, i);
    const etl_sched_stats *st = etl_sched_stats_get(m);
    assert_int_equal(st->threads, n);
    /* The 10 TIDs past the limit, each looked up as the new thread and then as the old one. */
    assert_int_equal(st->over_limit, 10 * 2 - 1);
    assert_int_equal(etl_sched_thread_of(m, (n + 1) * 4), ETL_SCHED_NONE);
    assert_int_not_equal(etl_sched_thread_of(m, n * 4), ETL_SCHED_NONE);
    /* A thread that ends past the limit: its TID started again names no thread. */
    push_thread(m, START, 4, 4, n + 20, NULL); /* the unknown thread started: the same */
    push_thread(m, END, 4, 4, n + 21, NULL);
    assert_int_not_equal(etl_sched_thread_of(m, 4), ETL_SCHED_NONE);
    push_thread(m, START, 4, 4, n + 22, NULL);
    assert_int_equal(etl_sched_thread_of(m, 4), ETL_SCHED_NONE);
    assert_int_equal(st->threads, n);
    assert_int_equal(st->over_limit, 10 * 2 - 1 + 1);
    etl_sched_close(m);

    m = open_model();
    for (uint32_t i = 1; i <= n + 5; i++) {
        etl_sched_event ev;
        memset(&ev, 0, sizeof ev);
        ev.kind = ETL_SCHED_PROCESS;
        ev.hook = ETL_HOOK_PROCESS_START;
        ev.ts = i;
        ev.u.process.known = ETL_PROC_IDS;
        ev.u.process.process_id = i * 4;
        etl_sched_push(m, &ev);
    }
    assert_int_equal(etl_sched_stats_get(m)->processes, n);
    assert_int_equal(etl_sched_stats_get(m)->over_limit, 5);
    etl_sched_close(m);
}

/* ---- the model CPU by CPU against time order, on hand-built traces ------------------------- */

typedef struct tb {
    eb_file f;
    uint64_t seq;
} tb;

static void tb_rec_thread(tb *b, uint16_t hook, uint32_t tid, uint32_t pid, uint64_t ts)
{
    uint8_t pl[8];
    eb_w32(pl, pid);
    eb_w32(pl + 4, tid);
    eb_rec r;
    eb_kernel k = {.htype = 0x11, .version_word = 1, .hook = hook, .ts = ts, .payload = pl, .payload_n = 8};
    eb_rec_kernel(&r, &k);
    eb_add_rec(&b->f, &r);
}

static void tb_rec_switch(tb *b, uint32_t new_tid, uint32_t old_tid, uint64_t ts)
{
    uint8_t pl[24] = {0};
    eb_w32(pl, new_tid);
    eb_w32(pl + 4, old_tid);
    pl[0x0E] = 5;
    eb_rec r;
    eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = ETL_HOOK_CSWITCH, .ts = ts, .payload = pl,
                   .payload_n = sizeof pl};
    eb_rec_kernel(&r, &k);
    eb_add_rec(&b->f, &r);
}

static void tb_buffer(tb *b, uint16_t cpu, uint32_t size)
{
    eb_begin(&b->f, &(eb_bufopt){.size = size, .seq = ++b->seq, .cpu = cpu});
}

/* One run's answers as text: instances, counters, and every row (instances by TID and start). */
typedef struct answers {
    char *text;
    size_t n, cap;
} answers;

static void say(answers *a, const char *fmt, ...)
{
    char b[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b, sizeof b, fmt, ap);
    va_end(ap);
    if (a->n + (size_t)k + 1 > a->cap) {
        a->cap = (a->n + (size_t)k + 1) * 2;
        a->text = realloc(a->text, a->cap);
        assert_non_null(a->text);
    }
    memcpy(a->text + a->n, b, (size_t)k + 1);
    a->n += (size_t)k;
}

static void say_model(answers *a, const etl_sched *m, const etl_sched_stats *st)
{
    size_t n;
    const etl_sched_thread *t = etl_sched_threads(m, &n);
    for (size_t i = 0; i < n; i++)
        say(a, "t%zu %u %llu %u %u %llu\n", i, t[i].tid, (unsigned long long)t[i].start_ts, t[i].started, t[i].ended,
            (unsigned long long)t[i].end_ts);
    say(a, "threads %llu unknown %llu repeated %llu over %llu switches %llu rows %llu\n",
        (unsigned long long)st->threads, (unsigned long long)st->unknown_threads,
        (unsigned long long)st->repeated_starts, (unsigned long long)st->over_limit,
        (unsigned long long)st->switches, (unsigned long long)st->rows);
}

/* Rows per CPU, thread indices as instances: collected by CPU then sorted by text. */
typedef struct rowset {
    char **v;
    size_t n, cap;
} rowset;

static void row_add(rowset *s, const etl_sched_row *r, uint32_t nt, uint32_t ot)
{
    char b[256];
    snprintf(b, sizeof b, "%u %llu %llu %u %u %u %u %x", r->cpu, (unsigned long long)r->si_ts,
             (unsigned long long)r->nso_ts, r->new_tid, nt, r->old_tid, ot,
             r->flags & (ETL_ROW_HEAD | ETL_ROW_TAIL | ETL_ROW_MISMATCH));
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 256;
        s->v = realloc(s->v, s->cap * sizeof *s->v);
        assert_non_null(s->v);
    }
    s->v[s->n++] = strdup(b);
}

static int by_text(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static void rows_say(answers *a, rowset *s)
{
    qsort(s->v, s->n, sizeof *s->v, by_text);
    for (size_t i = 0; i < s->n; i++) {
        say(a, "%s\n", s->v[i]);
        free(s->v[i]);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

static void on_row(void *ctx, const etl_sched_row *r) { row_add(ctx, r, r->new_thread, r->old_thread); }

static void time_ordered(etl_reader *r, answers *a)
{
    rowset rs = {0};
    etl_sched_source *s;
    etl_sched *m;
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1, .skip = 1u << ETL_SCHED_READY | 1u << ETL_SCHED_SPINLOCK};
    etl_sched_options mo = {.sz = sizeof mo, .on_row = on_row, .ctx = &rs};
    assert_int_equal(etl_sched_source_open(r, &so, &s), ETL_OK);
    assert_int_equal(etl_sched_open(etl_reader_clock(r), etl_reader_cpu_count(r), &mo, &m), ETL_OK);
    etl_sched_event ev;
    while (etl_sched_source_next(s, &ev) == ETL_OK) etl_sched_push(m, &ev);
    etl_sched_finish(m, etl_sched_end_ts(r, etl_sched_source_stats_get(s)->last_ts));
    say_model(a, m, etl_sched_stats_get(m));
    rows_say(a, &rs);
    etl_sched_close(m);
    etl_sched_source_close(s);
}

/* The per-CPU run's states: their rows raw, thread indices mapped at merge. */
typedef struct pstate {
    etl_sched_row *v;
    size_t n, cap;
} pstate;

static void *p_open(void *ctx)
{
    (void)ctx;
    return calloc(1, sizeof(pstate));
}

static void p_row(void *state, const etl_sched_row *r)
{
    pstate *p = state;
    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 256;
        p->v = realloc(p->v, p->cap * sizeof *p->v);
        assert_non_null(p->v);
    }
    p->v[p->n++] = *r;
}

static uint32_t mapped(uint32_t i, const uint32_t *map, size_t n)
{
    if (i >= ETL_SCHED_NONE) return i;
    assert_true(i < n);
    return map[i];
}

static etl_status p_merge(void *ctx, void *state, const etl_sched *m, const uint32_t *map, size_t n)
{
    (void)m;
    pstate *p = state;
    for (size_t i = 0; i < p->n; i++)
        row_add(ctx, &p->v[i], mapped(p->v[i].new_thread, map, n), mapped(p->v[i].old_thread, map, n));
    return ETL_OK;
}

static void p_close(void *ctx, void *state)
{
    (void)ctx;
    pstate *p = state;
    free(p->v);
    free(p);
}

static void per_cpu(etl_reader *r, unsigned threads, answers *a)
{
    rowset rs = {0};
    etl_sched_percpu_consumer c = {&rs, p_open, p_row, p_merge, p_close, false};
    etl_sched_percpu_options o = {.sz = sizeof o, .bias = -1, .threads = threads};
    etl_sched_percpu_result res;
    assert_int_equal(etl_sched_percpu_run(r, &o, &c, &res), ETL_OK);
    say_model(a, res.model, &res.stats);
    rows_say(a, &rs);
    etl_sched_close(res.model);
}

/* Both runs on the file; returns the time-ordered answers (the caller frees). */
static char *same_answers(const eb_file *f)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open_memory(f->p, f->n, NULL, &r, &d), ETL_OK);
    answers want = {0};
    time_ordered(r, &want);
    for (unsigned threads = 1; threads <= 2; threads++) {
        answers got = {0};
        per_cpu(r, threads, &got);
        assert_string_equal(got.text, want.text);
        free(got.text);
    }
    etl_reader_close(r);
    return want.text;
}

static void header(tb *b, uint32_t nproc, uint32_t bufsize)
{
    eb_init(&b->f);
    b->seq = 0;
    eb_lfh h = eb_lfh_default();
    h.nproc = nproc;
    h.buffer_size = bufsize;
    eb_header_buffer(&b->f, &h, 0);
    eb_end(&b->f);
}

/*
 * Starts of live threads on CPU 0, their switches on CPU 1 (and some Starts there too):
 * TID 8 started twice before it runs (one thread), again after it ran (a second), ended
 * and started twice (a third); TID 12 switched in before any Start (unknown), then
 * started (the same), then started again (it ran: a new one); TID 16 started on both
 * CPUs and never run (one thread).
 */
static void test_percpu_repeated_starts(void **state)
{
    (void)state;
    tb b;
    header(&b, 2, 0x1000);
    tb_buffer(&b, 0, 0x1000);
    tb_rec_thread(&b, START, 8, 4, 2000100);
    tb_rec_thread(&b, START, 8, 4, 2000110);
    tb_rec_thread(&b, START, 12, 4, 2000125);
    tb_rec_thread(&b, START, 16, 4, 2000126);
    tb_rec_thread(&b, START, 12, 4, 2000135);
    tb_rec_thread(&b, START, 8, 4, 2000140);
    tb_rec_thread(&b, END, 8, 4, 2000170);
    tb_rec_thread(&b, START, 8, 4, 2000180);
    tb_rec_thread(&b, START, 8, 4, 2000185);
    eb_end(&b.f);
    tb_buffer(&b, 1, 0x1000);
    tb_rec_switch(&b, 12, 0, 2000105);
    tb_rec_switch(&b, 8, 12, 2000120);
    tb_rec_thread(&b, START, 16, 4, 2000127);
    tb_rec_switch(&b, 0, 8, 2000130);
    tb_rec_switch(&b, 8, 0, 2000150);
    tb_rec_switch(&b, 12, 8, 2000160);
    tb_rec_switch(&b, 8, 12, 2000190);
    tb_rec_switch(&b, 0, 8, 2000200);
    eb_end(&b.f);
    char *want = same_answers(&b.f);
    assert_non_null(strstr(want, "threads 6 unknown 1 repeated 3 over 0"));
    free(want);
    eb_free(&b.f);
}

/*
 * One TID started, run and ended 100,000 times, the Starts on CPU 0 and the switches on
 * CPU 1: as many instances, each of its own rows (a reused TID's boundaries were once
 * grown and searched one by one: minutes for this).
 */
static void test_percpu_many_reuses(void **state)
{
    (void)state;
    tb b;
    unsigned n = 100000;
    header(&b, 2, 0x10000);
    uint64_t t = 2000000;
    unsigned per = (0x10000 - 0x48) / 48;
    for (unsigned i = 0; i < n; i++) {
        if (i % per == 0) {
            if (i) eb_end(&b.f);
            tb_buffer(&b, 0, 0x10000);
        }
        tb_rec_thread(&b, START, 8, 4, t + 10 * i);
        tb_rec_thread(&b, END, 8, 4, t + 10 * i + 5);
    }
    eb_end(&b.f);
    per = (0x10000 - 0x48) / 80;
    for (unsigned i = 0; i < n; i++) {
        if (i % per == 0) {
            if (i) eb_end(&b.f);
            tb_buffer(&b, 1, 0x10000);
        }
        tb_rec_switch(&b, 8, 0, t + 10 * i + 1);
        tb_rec_switch(&b, 0, 8, t + 10 * i + 3);
    }
    eb_end(&b.f);
    char *want = same_answers(&b.f);
    assert_non_null(strstr(want, "threads 100000 unknown 0 repeated 0 over 0"));
    free(want);
    eb_free(&b.f);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repeated_starts),
        cmocka_unit_test(test_cpu_limit),
        cmocka_unit_test(test_names_bounded),
        cmocka_unit_test(test_instance_limit),
        cmocka_unit_test(test_percpu_repeated_starts),
        cmocka_unit_test(test_percpu_many_reuses),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

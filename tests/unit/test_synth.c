/*
 * test_synth.c - the simulator (etlkit/synth.h) against the reader: small
 * traces of every flavour (32/64-bit; QPC, system time, CPU cycles;
 * compressed or not; CSwitch, compact batches or both; with and without PMC
 * counters) are written to a temporary directory and read back with
 * etl_reader / etl_iter (time order) / etl_event_decode / etl_batch_expander.
 * Every decoded event must equal the ground truth the simulator reported:
 * switches in every field the form carries, ReadyThread, the sampled spin
 * locks, Thread/Process/SetName, the batches; no recovery counter may move;
 * per-CPU times strictly increase. The per-thread totals are recomputed from
 * the decoded events and must agree to the tick. Plus determinism (same seed,
 * same bytes), the JSON-lines sink, options, and the checked-in fixtures of
 * tests/data, regenerated from the commands in tests/data/README.md.
 */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <jansson.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"

/* ---- captured truth ------------------------------------------------------------ */

#define NAME_LEN 64

typedef struct cap_thread {
    etl_synth_thread t;
    char name[NAME_LEN];
} cap_thread;

typedef struct cap_process {
    etl_synth_process p;
    char image[NAME_LEN];
    char cmd[512];
} cap_process;

typedef struct truth {
    etl_synth_meta meta;
    etl_synth_end end;
    int metas, ends;
    etl_synth_switch *sw;
    size_t nsw, capsw;
    etl_synth_ready *rd;
    size_t nrd, caprd;
    etl_synth_spinlock *sl;
    size_t nsl, capsl;
    cap_thread *th;
    size_t nth, capth;
    cap_process *pr;
    size_t npr, cappr;
    etl_synth_batch *ba;
    size_t nba, capba;
    etl_synth_thread_total *tt;
    size_t ntt, captt;
    etl_synth_cpu_total *ct;
    size_t nct, capct;
    size_t records;
} truth;

#define PUSH(arr, n, cap)                                                                          \
    do {                                                                                           \
        if ((n) == (cap)) {                                                                        \
            (cap) = (cap) ? 2 * (cap) : 256;                                                       \
            (arr) = realloc((arr), (cap) * sizeof *(arr));                                         \
            if (!(arr)) return 1;                                                                  \
        }                                                                                          \
    } while (0)

static int capture(void *ctx, const etl_synth_rec *r)
{
    truth *t = ctx;
    t->records++;
    switch (r->type) {
    case ETL_SYNTH_REC_META:
        t->meta = r->u.meta;
        t->metas++;
        break;
    case ETL_SYNTH_REC_END:
        t->end = r->u.end;
        t->ends++;
        break;
    case ETL_SYNTH_REC_SWITCH:
        PUSH(t->sw, t->nsw, t->capsw);
        t->sw[t->nsw++] = r->u.sw;
        break;
    case ETL_SYNTH_REC_READY:
        PUSH(t->rd, t->nrd, t->caprd);
        t->rd[t->nrd++] = r->u.ready;
        break;
    case ETL_SYNTH_REC_SPINLOCK:
        PUSH(t->sl, t->nsl, t->capsl);
        t->sl[t->nsl++] = r->u.spinlock;
        break;
    case ETL_SYNTH_REC_THREAD: {
        PUSH(t->th, t->nth, t->capth);
        cap_thread *c = &t->th[t->nth++];
        c->t = r->u.thread;
        snprintf(c->name, sizeof c->name, "%s", r->u.thread.name ? r->u.thread.name : "");
        c->t.name = NULL;
        break;
    }
    case ETL_SYNTH_REC_PROCESS: {
        PUSH(t->pr, t->npr, t->cappr);
        cap_process *c = &t->pr[t->npr++];
        c->p = r->u.process;
        snprintf(c->image, sizeof c->image, "%s", r->u.process.image);
        snprintf(c->cmd, sizeof c->cmd, "%s", r->u.process.command_line);
        c->p.image = c->p.command_line = NULL;
        break;
    }
    case ETL_SYNTH_REC_BATCH:
        PUSH(t->ba, t->nba, t->capba);
        t->ba[t->nba++] = r->u.batch;
        break;
    case ETL_SYNTH_REC_THREAD_TOTAL:
        PUSH(t->tt, t->ntt, t->captt);
        t->tt[t->ntt] = r->u.thread_total;
        t->tt[t->ntt++].name = NULL;
        break;
    case ETL_SYNTH_REC_CPU_TOTAL:
        PUSH(t->ct, t->nct, t->capct);
        t->ct[t->nct++] = r->u.cpu_total;
        break;
    default:
        return 1;
    }
    return 0;
}

static void truth_free(truth *t)
{
    free(t->sw);
    free(t->rd);
    free(t->sl);
    free(t->th);
    free(t->pr);
    free(t->ba);
    free(t->tt);
    free(t->ct);
    memset(t, 0, sizeof *t);
}

/* ---- temporary files ---------------------------------------------------------------- */

static char tmpdir[256];

static int setup_dir(void **state)
{
    (void)state;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "synth");
}

static int remove_dir(void **state)
{
    (void)state;
    return tu_tmpdir_remove(tmpdir);
}

static void tmp_path(char *out, size_t cap, const char *name)
{
    snprintf(out, cap, "%s/%s", tmpdir, name);
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
    *n = b ? fread(b, 1, (size_t)sz, f) : 0;
    fclose(f);
    return b;
}

/* ---- running -------------------------------------------------------------------------- */

static void set(etl_synth_options *o, const char *name, const char *value)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    etl_status st = etl_synth_set(o, name, value, &d);
    if (st != ETL_OK) fail_msg("--%s %s: %s", name, value ? value : "", d.msg);
}

static void run(const char *path, const etl_synth_options *o, truth *t, etl_synth_summary *sum)
{
    etl_synth_options oo = *o;
    if (t) {
        memset(t, 0, sizeof *t);
        oo.on_truth = capture;
        oo.truth_ctx = t;
    }
    etl_diag d;
    etl_synth_summary s;
    etl_status st = etl_synth_run(path, &oo, sum ? sum : &s, &d);
    if (st != ETL_OK) fail_msg("etl_synth_run: %s: %s", etl_status_str(st), d.msg);
    if (t) {
        assert_int_equal(t->metas, 1);
        assert_int_equal(t->ends, 1);
    }
}

/* ---- reading back ------------------------------------------------------------------------ */

/* Per-CPU cursors over a truth list: idx[c][k] = index of the k-th item of CPU c. */
typedef struct cursor {
    size_t **idx;
    size_t *n, *at;
    unsigned ncpu;
} cursor;

static void cursor_init(cursor *cu, unsigned ncpu, size_t total, const void *base, size_t stride,
                        size_t cpu_off, bool (*keep)(const void *))
{
    cu->ncpu = ncpu;
    cu->idx = calloc(ncpu, sizeof *cu->idx);
    cu->n = calloc(ncpu, sizeof *cu->n);
    cu->at = calloc(ncpu, sizeof *cu->at);
    assert_non_null(cu->idx);
    for (int pass = 0; pass < 2; pass++) {
        for (size_t i = 0; i < total; i++) {
            const uint8_t *it = (const uint8_t *)base + i * stride;
            uint16_t cpu;
            memcpy(&cpu, it + cpu_off, sizeof cpu);
            assert_true(cpu < ncpu);
            if (keep && !keep(it)) continue;
            if (pass) cu->idx[cpu][cu->at[cpu]++] = i;
            else cu->n[cpu]++;
        }
        for (unsigned c = 0; c < ncpu && !pass; c++) cu->idx[c] = calloc(cu->n[c] + 1, sizeof **cu->idx);
        memset(cu->at, 0, ncpu * sizeof *cu->at);
    }
}

static void cursor_drop(cursor *cu)
{
    for (unsigned c = 0; c < cu->ncpu; c++) cu->at[c] = cu->n[c];
}

/* The next item of CPU c, or fails. */
static size_t cursor_next(cursor *cu, unsigned c, const char *what)
{
    if (c >= cu->ncpu || cu->at[c] >= cu->n[c]) fail_msg("cpu %u: more %s in the file than in the truth", c, what);
    return cu->idx[c][cu->at[c]++];
}

static bool cursor_is_last(const cursor *cu, unsigned c)
{
    return cu->at[c] == cu->n[c];
}

static void cursor_done(cursor *cu, const char *what)
{
    for (unsigned c = 0; c < cu->ncpu; c++) {
        if (cu->at[c] != cu->n[c])
            fail_msg("cpu %u: %zu %s in the truth, %zu in the file", c, cu->n[c], what, cu->at[c]);
        free(cu->idx[c]);
    }
    free(cu->idx);
    free(cu->n);
    free(cu->at);
}

static bool keep_logged_ready(const void *p) { return ((const etl_synth_ready *)p)->logged; }
static bool keep_sampled(const void *p) { return ((const etl_synth_spinlock *)p)->sampled; }

static void u16_to(const etl_kstr *k, char *out, size_t cap)
{
    etl_utf16_to_utf8(k->text, out, cap);
}

static void ansi_to(const etl_kstr *k, char *out, size_t cap)
{
    size_t n = k->text.n < cap - 1 ? k->text.n : cap - 1;
    memcpy(out, k->text.p, n);
    out[n] = 0;
}

static void cmp_full(const etl_cswitch *c, const etl_synth_switch *w, unsigned version, unsigned pmc)
{
    assert_int_equal(c->ts, w->time);
    assert_int_equal(c->cpu, w->cpu);
    assert_int_equal(c->version, version);
    assert_int_equal(c->new_tid, w->new_tid);
    assert_int_equal(c->old_tid, w->old_tid);
    assert_int_equal(c->new_priority, w->new_priority);
    assert_int_equal(c->old_priority, w->old_priority);
    assert_int_equal(c->previous_cstate, w->previous_cstate);
    assert_int_equal(c->spare_byte, 0);
    assert_int_equal(c->old_wait_reason, w->old_wait_reason);
    assert_int_equal(c->old_wait_mode, w->old_wait_mode);
    assert_int_equal(c->old_state, w->old_state);
    assert_int_equal(c->old_ideal_processor, w->old_ideal_processor);
    assert_int_equal(c->new_wait_time, w->new_wait_time);
    assert_int_equal(c->old_remaining_quantum, w->old_remaining_quantum);
    assert_int_equal(c->pmc_count, pmc);
    assert_int_equal(w->pmc_count, pmc);
    for (unsigned k = 0; k < pmc; k++) assert_int_equal(c->pmc[k], w->pmc[k]);
    assert_true(w->cswitch);
}

static void cmp_compact(const etl_cswitch *c, const etl_synth_switch *w, bool last)
{
    assert_int_equal(c->source, ETL_CSW_SRC_COMPACT);
    assert_int_equal(c->ts, w->time);
    assert_int_equal(c->cpu, w->cpu);
    assert_true(c->known & ETL_CSW_OLD_TID);
    assert_int_equal(c->old_tid, w->old_tid);
    assert_true(c->known & ETL_CSW_OLD_PRIORITY);
    assert_int_equal(c->old_priority, w->old_priority);
    if (w->old_tid == 0) {
        assert_false(c->known & ETL_CSW_STATE);
        assert_true(w->form == ETL_CCSWAP_IDLE || w->form == ETL_CCSWAP_IDLE_SHORT);
    } else {
        assert_true(c->known & ETL_CSW_STATE);
        assert_int_equal(c->old_state, w->old_state);
        if (w->old_state == 5) {
            assert_true(c->known & ETL_CSW_WAIT_REASON);
            assert_int_equal(c->old_wait_reason, w->old_wait_reason);
        } else {
            assert_false(c->known & ETL_CSW_WAIT_REASON);
        }
        if (c->known & ETL_CSW_NEW_WAIT_TIME) {
            assert_int_equal(w->form, ETL_CCSWAP_FULL);
            assert_int_equal(c->new_wait_time, w->new_wait_time);
        } else {
            assert_int_equal(w->form, ETL_CCSWAP_LITE);
            assert_int_equal(w->new_wait_time, 0);
        }
    }
    if (c->known & ETL_CSW_NEW_TID) assert_int_equal(c->new_tid, w->new_tid);
    else assert_true(last);
    assert_true(w->compact);
}

/*
 * Recomputes each thread's running, ready and waiting time from the decoded
 * events (state at the start from the rundown truth), as an analysis would,
 * and compares them with the truth's totals.
 */
typedef struct acct {
    uint32_t tid;
    int state; /* 0 waiting, 1 ready, 2 running, 3 gone */
    uint64_t since, running, ready, waiting;
    bool used;
} acct;

typedef struct acct_map {
    acct *a;
    size_t cap;
} acct_map;

static acct *acct_get(acct_map *m, uint32_t tid)
{
    size_t i = (tid * 2654435761u) & (m->cap - 1);
    while (m->a[i].used && m->a[i].tid != tid) i = (i + 1) & (m->cap - 1);
    if (!m->a[i].used) {
        m->a[i].used = true;
        m->a[i].tid = tid;
        m->a[i].state = -1;
    }
    return &m->a[i];
}

static void acct_to(acct *a, uint64_t t)
{
    uint64_t d = t - a->since;
    if (a->state == 0) a->waiting += d;
    else if (a->state == 1) a->ready += d;
    else if (a->state == 2) a->running += d;
    a->since = t;
}

typedef struct readback {
    size_t cswitches, expanded, readies, spinlocks, threads, processes, batches, groupmasks;
} readback;

static void check_file(const char *path, const etl_synth_options *o, const truth *t, readback *rb)
{
    memset(rb, 0, sizeof *rb);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    const etl_logfile_header *h = etl_reader_header(r);
    assert_int_equal(h->provider_version, o->os_build);
    assert_int_equal(h->pointer_size, o->pointer_size);
    assert_int_equal(h->clock_type, o->clock_type);
    assert_int_equal(h->num_processors, o->ncpu);
    assert_int_equal(h->header_ts, t->meta.header_ts);
    assert_int_equal(h->timer_resolution, o->timer_resolution);
    assert_int_equal(etl_reader_clock(r)->ticks_per_sec, t->meta.ticks_per_sec);
    unsigned ncpu = o->ncpu;
    bool full = o->cswitch_format & ETL_SYNTH_CSWITCH_FULL;
    bool compact = (o->cswitch_format & ETL_SYNTH_CSWITCH_COMPACT) != 0;
    unsigned version = o->os_build >= 16299 ? 4 : o->os_build >= 15063 ? 3 : 2;
    unsigned bias = etl_max_wait_reason_for_build(h->provider_version);
    assert_int_equal(bias, t->meta.bias);

    cursor csw, cex, crd, csl, cth, cpr, cba;
    cursor_init(&csw, ncpu, t->nsw, t->sw, sizeof *t->sw, offsetof(etl_synth_switch, cpu), NULL);
    cursor_init(&cex, ncpu, t->nsw, t->sw, sizeof *t->sw, offsetof(etl_synth_switch, cpu), NULL);
    cursor_init(&crd, ncpu, t->nrd, t->rd, sizeof *t->rd, offsetof(etl_synth_ready, cpu), keep_logged_ready);
    cursor_init(&csl, ncpu, t->nsl, t->sl, sizeof *t->sl, offsetof(etl_synth_spinlock, cpu), keep_sampled);
    cursor_init(&cth, ncpu, t->nth, t->th, sizeof *t->th, offsetof(cap_thread, t.cpu), NULL);
    cursor_init(&cpr, ncpu, t->npr, t->pr, sizeof *t->pr, offsetof(cap_process, p.cpu), NULL);
    cursor_init(&cba, ncpu, t->nba, t->ba, sizeof *t->ba, offsetof(etl_synth_batch, cpu), NULL);

    etl_batch_expand_cpu *xc = calloc(ncpu, sizeof *xc);
    etl_batch_expander x;
    assert_int_equal(etl_batch_expand_init(&x, xc, ncpu), ETL_OK);
    uint64_t *last = calloc(ncpu, sizeof *last);

    /* The analysis (full CSwitch + ReadyThread only). */
    acct_map m = {calloc(1 << 16, sizeof(acct)), 1 << 16};
    assert_true(t->ntt < (1 << 15));
    bool analyse = full && o->ready_events;
    for (size_t i = 0; i < t->nth && analyse; i++) {
        const etl_synth_thread *e = &t->th[i].t;
        if (e->event != ETL_SYNTH_LIFE_DC_START || e->tid == 0) continue;
        acct *a = acct_get(&m, e->tid);
        a->since = t->meta.start;
        a->state = e->state == ETL_SYNTH_TS_WAITING ? 0 : e->state == ETL_SYNTH_TS_RUNNING ? 2 : 1;
    }

    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    etl_event ev;
    etl_cswitch sw;
    char buf[1024];
    while (etl_iter_next(it, &rec) == ETL_OK) {
        unsigned c = rec.cpu;
        assert_true(c < ncpu);
        assert_true(rec.has & ETL_REC_TS);
        if (rec.hook == ETL_HOOK_HEADER || rec.hook == ETL_HOOK_HEADER_EXTENSION) {
            assert_true(rec.ts >= last[c]);
        } else {
            if (rec.ts <= last[c]) fail_msg("cpu %u: time %llu after %llu", c, (unsigned long long)rec.ts, (unsigned long long)last[c]);
        }
        last[c] = rec.ts;
        etl_status st = etl_event_decode(&rec, &ev);
        if (st == ETL_END) continue;
        assert_int_equal(st, ETL_OK);
        switch (ev.kind) {
        case ETL_EVENT_CSWITCH: {
            assert_true(full);
            assert_int_equal(rec.htype, o->pointer_size == 8 ? ETL_HTYPE_PERFINFO64 : ETL_HTYPE_PERFINFO32);
            const etl_synth_switch *w = &t->sw[cursor_next(&csw, c, "CSwitch events")];
            cmp_full(&ev.u.cswitch, w, version, o->pmc_count);
            rb->cswitches++;
            if (analyse) {
                acct *a = acct_get(&m, w->old_tid), *b = acct_get(&m, w->new_tid);
                if (w->old_tid) {
                    acct_to(a, w->time);
                    a->state = w->old_state == 5 ? 0 : w->old_state == 1 ? 1 : 3;
                }
                if (w->new_tid) {
                    acct_to(b, w->time);
                    b->state = 2;
                }
            }
            break;
        }
        case ETL_EVENT_CCSWAP_BATCH: {
            assert_true(compact);
            assert_int_equal(rec.version, 2);
            const etl_synth_batch *b = &t->ba[cursor_next(&cba, c, "batches")];
            assert_int_equal(rec.ts, b->time);
            assert_int_equal(rec.payload.n, b->bytes);
            assert_int_equal(ev.u.batch.first_time, b->first_time);
            assert_true(b->time >= b->last_time);
            assert_int_equal(etl_batch_expand_begin(&x, c, rec.payload, bias, (uint8_t)rec.version), ETL_OK);
            while (etl_batch_expand_next(&x, &sw) == ETL_OK) {
                unsigned sc = sw.cpu;
                size_t k = cursor_next(&cex, sc, "compact switches");
                cmp_compact(&sw, &t->sw[k], false);
                rb->expanded++;
            }
            rb->batches++;
            break;
        }
        case ETL_EVENT_READY_THREAD: {
            assert_true(o->ready_events);
            const etl_synth_ready *y = &t->rd[cursor_next(&crd, c, "ReadyThread events")];
            assert_int_equal(rec.ts, y->time);
            assert_int_equal(ev.u.ready.thread_id, y->tid);
            assert_int_equal(ev.u.ready.adjust_reason, y->adjust_reason);
            assert_int_equal(ev.u.ready.adjust_increment, y->adjust_increment);
            assert_int_equal(ev.u.ready.flags, y->flags);
            assert_int_equal(ev.u.ready.reserved, 0);
            rb->readies++;
            if (analyse) {
                acct *a = acct_get(&m, y->tid);
                if (a->state < 0) a->since = y->time; /* a new thread */
                acct_to(a, y->time);
                a->state = 1;
            }
            break;
        }
        case ETL_EVENT_SPINLOCK: {
            assert_true(o->spinlocks);
            const etl_synth_spinlock *k = &t->sl[cursor_next(&csl, c, "SpinLock events")];
            const etl_spinlock *a = &ev.u.spinlock, *b = &k->lock;
            assert_int_equal(rec.ts, k->time);
            assert_int_equal(a->spin_lock_address, b->spin_lock_address);
            assert_int_equal(a->caller_address, b->caller_address);
            assert_int_equal(a->acquire_time, b->acquire_time);
            assert_int_equal(a->release_time, b->release_time);
            assert_int_equal(a->wait_time_in_cycles, b->wait_time_in_cycles);
            assert_int_equal(a->spin_count, b->spin_count);
            assert_int_equal(a->thread_id, b->thread_id);
            assert_int_equal(a->interrupt_count, b->interrupt_count);
            assert_int_equal(a->irql, b->irql);
            assert_int_equal(a->acquire_depth, b->acquire_depth);
            assert_int_equal(a->acquire_mode, b->acquire_mode);
            assert_int_equal(a->has_reserved, b->has_reserved);
            assert_int_equal(etl_spinlock_hold_cycles(a), k->hold_cycles);
            rb->spinlocks++;
            break;
        }
        case ETL_EVENT_THREAD:
        case ETL_EVENT_THREAD_SET_NAME: {
            const cap_thread *k = &t->th[cursor_next(&cth, c, "Thread events")];
            assert_int_equal(rec.ts, k->t.time);
            assert_int_equal(ev.hook, k->t.hook);
            if (ev.kind == ETL_EVENT_THREAD) {
                assert_int_equal(ev.u.thread.thread_id, k->t.tid);
                assert_int_equal(ev.u.thread.process_id, k->t.pid);
                assert_int_equal(ev.u.thread.base_priority, (uint8_t)k->t.base_priority);
                assert_int_equal(rec.tid, k->t.header_tid);
                assert_int_equal(rec.pid, k->t.header_pid);
                u16_to(&ev.u.thread.thread_name, buf, sizeof buf);
            } else {
                assert_int_equal(ev.u.set_name.thread_id, k->t.tid);
                assert_int_equal(ev.u.set_name.process_id, k->t.pid);
                u16_to(&ev.u.set_name.thread_name, buf, sizeof buf);
            }
            assert_string_equal(buf, k->name);
            rb->threads++;
            break;
        }
        case ETL_EVENT_PROCESS: {
            const cap_process *k = &t->pr[cursor_next(&cpr, c, "Process events")];
            const etl_process *p = &ev.u.process;
            assert_int_equal(rec.ts, k->p.time);
            assert_int_equal(ev.hook, k->p.hook);
            assert_int_equal(p->process_id, k->p.pid);
            assert_int_equal(p->parent_id, k->p.parent_pid);
            assert_int_equal(p->session_id, k->p.session_id);
            assert_int_equal(p->exit_status, k->p.exit_status);
            assert_true(p->user_sid.n >= 12);
            ansi_to(&p->image_file_name, buf, sizeof buf);
            assert_string_equal(buf, k->image);
            u16_to(&p->command_line, buf, sizeof buf);
            assert_string_equal(buf, k->cmd);
            if (rec.has & ETL_REC_TID) {
                assert_int_equal(rec.tid, k->p.header_tid);
                assert_int_equal(rec.pid, k->p.header_pid);
            }
            rb->processes++;
            break;
        }
        case ETL_EVENT_GROUP_MASK: {
            const etl_groupmask *g = &ev.u.group_mask;
            assert_true(etl_groupmask_test(g, ETL_PERF_PROCESS));
            assert_true(etl_groupmask_test(g, ETL_PERF_THREAD));
            assert_true(etl_groupmask_test(g, ETL_PERF_CONTEXT_SWITCH));
            assert_int_equal(etl_groupmask_test(g, ETL_PERF_COMPACT_CSWITCH), compact);
            assert_int_equal(etl_groupmask_test(g, ETL_PERF_DISPATCHER), o->ready_events);
            assert_int_equal(etl_groupmask_test(g, ETL_PERF_SPINLOCK), o->spinlocks);
            rb->groupmasks++;
            break;
        }
        default:
            fail_msg("unexpected event kind %d (hook 0x%04x)", ev.kind, ev.hook);
        }
    }
    if (compact) {
        while (etl_batch_expand_finish(&x, &sw) == ETL_OK) {
            size_t k = cursor_next(&cex, sw.cpu, "compact switches");
            cmp_compact(&sw, &t->sw[k], cursor_is_last(&cex, sw.cpu));
            rb->expanded++;
        }
        assert_int_equal(x.stats.broken_chains, 0);
        assert_int_equal(x.stats.bad_index + x.stats.truncated + x.stats.bad_state, 0);
        assert_int_equal(x.stats.time_backwards + x.stats.abandoned + x.stats.bad_cpu, 0);
        cursor_done(&cex, "compact switches");
        cursor_done(&cba, "batches");
    } else {
        assert_int_equal(t->nba, 0);
        cursor_drop(&cex);
        cursor_done(&cex, "compact switches");
        cursor_done(&cba, "batches");
    }
    if (!full) {
        assert_int_equal(rb->cswitches, 0);
        cursor_drop(&csw);
    }
    cursor_done(&csw, "CSwitch events");
    cursor_done(&crd, "ReadyThread events");
    cursor_done(&csl, "SpinLock events");
    cursor_done(&cth, "Thread events");
    cursor_done(&cpr, "Process events");
    assert_int_equal(rb->groupmasks, 1);

    const etl_stats *s = etl_iter_stats_get(it);
    assert_int_equal(s->bad_buffers, 0);
    assert_int_equal(s->bad_records, 0);
    assert_int_equal(s->skipped_bytes, 0);
    assert_int_equal(s->decompress_errors, 0);
    assert_int_equal(s->unsupported_buffers, 0);
    assert_int_equal(s->truncated_buffers, 0);
    assert_int_equal(s->first_problem_offset, UINT64_MAX);
    if (o->compress) assert_true(s->compressed_buffers > 0 && s->compressed_buffers + 1 >= s->buffers);
    else assert_int_equal(s->compressed_buffers, 0);

    if (analyse) {
        uint64_t end = t->end.end;
        for (size_t i = 0; i < t->ntt; i++) {
            const etl_synth_thread_total *tt = &t->tt[i];
            acct *a = acct_get(&m, tt->tid);
            assert_true(a->state >= 0);
            if (a->state != 3) acct_to(a, end);
            if (a->running != tt->running || a->ready != tt->ready || a->waiting != tt->waiting)
                fail_msg("%s: tid %u: trace says running %llu ready %llu waiting %llu, truth %llu %llu %llu",
                         path, tt->tid, (unsigned long long)a->running, (unsigned long long)a->ready,
                         (unsigned long long)a->waiting, (unsigned long long)tt->running,
                         (unsigned long long)tt->ready, (unsigned long long)tt->waiting);
        }
    }
    free(m.a);
    free(xc);
    free(last);
    etl_iter_close(it);
    etl_reader_close(r);
}

/* Invariants of the truth itself. */
static void check_truth(const etl_synth_options *o, const truth *t)
{
    uint64_t span = t->end.end - t->meta.start;
    assert_true(span > 0);
    assert_int_equal(t->nct, o->ncpu);
    uint64_t run = 0, idle = 0, sw_in = 0, sw_out = 0;
    for (size_t i = 0; i < t->ntt; i++) {
        const etl_synth_thread_total *tt = &t->tt[i];
        uint64_t life = (tt->exited ? tt->exited : t->end.end) - tt->created;
        assert_int_equal(tt->running + tt->ready + tt->waiting, life);
        run += tt->running;
        sw_in += tt->switches_in;
        sw_out += tt->switches_out;
    }
    uint64_t nsw = 0;
    for (size_t i = 0; i < t->nct; i++) {
        idle += t->ct[i].idle;
        assert_int_equal(t->ct[i].idle + t->ct[i].busy, span);
        nsw += t->ct[i].switches;
    }
    assert_int_equal(run + idle, (uint64_t)o->ncpu * span);
    assert_int_equal(nsw, t->nsw);
    assert_int_equal(t->end.switches, t->nsw);
    size_t to_thread = 0, from_thread = 0;
    for (size_t i = 0; i < t->nsw; i++) {
        to_thread += t->sw[i].new_tid != 0;
        from_thread += t->sw[i].old_tid != 0;
        assert_true(t->sw[i].new_wait_time <= ETL_SYNTH_WAIT_TIME_MAX);
        assert_true(t->sw[i].old_priority >= 0 && t->sw[i].old_priority <= 31);
    }
    assert_int_equal(sw_in, to_thread);
    assert_int_equal(sw_out, from_thread);
    /* Per CPU: the chain of switches, the new thread of one is the old of the next. */
    for (unsigned c = 0; c < o->ncpu; c++) {
        const etl_synth_switch *prev = NULL;
        for (size_t i = 0; i < t->nsw; i++) {
            if (t->sw[i].cpu != c) continue;
            if (prev) {
                assert_int_equal(prev->new_tid, t->sw[i].old_tid);
                assert_true(t->sw[i].time > prev->time);
            }
            prev = &t->sw[i];
        }
    }
    size_t sampled = 0;
    for (size_t i = 0; i < t->nsl; i++) sampled += t->sl[i].sampled;
    assert_int_equal(t->end.spinlocks, t->nsl);
    assert_int_equal(t->end.spinlocks_sampled, sampled);
}

/* ---- flavours ---------------------------------------------------------------------------- */

typedef struct flavour {
    const char *bits, *clock, *format;
    bool z;
    const char *pmc;
    const char *cpus;
} flavour;

static const flavour flavours[] = {
    {"64", "qpc", "full", false, "0", "4"},     {"64", "qpc", "compact", false, "0", "4"},
    {"64", "qpc", "both", true, "2", "3"},      {"32", "qpc", "full", false, "2", "2"},
    {"32", "qpc", "compact", true, "0", "4"},   {"32", "system", "full", true, "0", "4"},
    {"64", "system", "both", false, "1", "4"},  {"32", "system", "compact", false, "0", "2"},
    {"64", "cycles", "full", true, "4", "4"},   {"32", "cycles", "both", false, "3", "4"},
    {"64", "cycles", "compact", true, "0", "8"}, {"64", "system", "full", false, "4", "1"},
};

static void flavour_options(const flavour *f, etl_synth_options *o, const char *seed)
{
    etl_synth_options_init(o);
    set(o, "seed", seed);
    set(o, "cpus", f->cpus);
    set(o, "threads", "40");
    set(o, "processes", "8");
    set(o, "duration", "0.15");
    set(o, "pointer-size", f->bits);
    set(o, "clock", f->clock);
    set(o, "cswitch", f->format);
    set(o, "pmc", f->pmc);
    set(o, "buffer-size", "16K");
    set(o, "churn", "100");
    set(o, f->z ? "compress" : "no-compress", NULL);
}

static void test_flavours(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        const flavour *f = &flavours[i];
        etl_synth_options o;
        char seed[16], path[512], name[128];
        snprintf(seed, sizeof seed, "%zu", 100 + i);
        flavour_options(f, &o, seed);
        snprintf(name, sizeof name, "flavour-%s-%s-%s%s.etl", f->bits, f->clock, f->format, f->z ? "-z" : "");
        tmp_path(path, sizeof path, name);
        truth t;
        etl_synth_summary sum;
        run(path, &o, &t, &sum);
        check_truth(&o, &t);
        readback rb;
        check_file(path, &o, &t, &rb);
        /* The flavour produced what it is about. */
        assert_true(t.nsw > 200);
        assert_true(rb.readies > 100);
        assert_true(rb.threads > 40 && rb.processes > 16);
        if (o.cswitch_format & ETL_SYNTH_CSWITCH_FULL) assert_int_equal(rb.cswitches, t.nsw);
        if (o.cswitch_format & ETL_SYNTH_CSWITCH_COMPACT) {
            assert_int_equal(rb.expanded, t.nsw);
            assert_true(rb.batches >= o.ncpu);
            assert_int_equal(sum.batches, rb.batches);
        }
        assert_int_equal(sum.switches, t.nsw);
        assert_int_equal(sum.ready_events, rb.readies);
        assert_int_equal(sum.spinlock_events, rb.spinlocks);
        assert_int_equal(sum.ccswap.switches, (o.cswitch_format & ETL_SYNTH_CSWITCH_COMPACT) ? t.nsw : 0);
        truth_free(&t);
        unlink(path);
    }
}

/* Every switch reason, state and form appears somewhere in a busier run. */
static void test_coverage(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    set(&o, "seed", "8");
    set(&o, "cpus", "2");
    set(&o, "threads", "60");
    set(&o, "processes", "18");
    set(&o, "load", "40");
    set(&o, "churn", "60");
    set(&o, "duration", "1");
    set(&o, "cswitch", "both");
    set(&o, "lock-rate", "20000");
    set(&o, "lock-contention", "10");
    set(&o, "acquire-rate", "1000");
    char path[512];
    tmp_path(path, sizeof path, "coverage.etl");
    truth t;
    run(path, &o, &t, NULL);
    check_truth(&o, &t);
    size_t why[5] = {0}, forms[4] = {0}, waiting = 0, ready_state = 0, term = 0, boosted = 0, rt = 0,
           idle_prio = 0, wt = 0;
    for (size_t i = 0; i < t.nsw; i++) {
        const etl_synth_switch *w = &t.sw[i];
        why[w->why]++;
        forms[w->form]++;
        waiting += w->old_state == 5;
        ready_state += w->old_state == 1;
        term += w->old_state == 4;
        boosted += w->old_tid && w->old_priority > w->old_base_priority;
        rt += w->old_base_priority >= 16;
        idle_prio += w->old_tid && w->old_base_priority <= 4;
        wt += w->new_wait_time > 0;
        if (w->why == ETL_SYNTH_WHY_PREEMPT) {
            assert_int_equal(w->old_state, 1);
            assert_int_equal(w->old_wait_reason, 32);
        }
        if (w->why == ETL_SYNTH_WHY_QUANTUM) {
            assert_int_equal(w->old_state, 1);
            assert_int_equal(w->old_wait_reason, 30);
        }
        if (w->why == ETL_SYNTH_WHY_EXIT) assert_int_equal(w->old_state, 4);
    }
    for (int k = 0; k < 5; k++)
        if (!why[k]) fail_msg("no switch of reason %d", k);
    for (int k = 0; k < 4; k++)
        if (!forms[k]) fail_msg("no compact record of form %d", k);
    assert_true(waiting && ready_state && term && boosted && rt && idle_prio && wt);
    size_t rwhy[5] = {0}, dpc = 0;
    for (size_t i = 0; i < t.nrd; i++) {
        rwhy[t.rd[i].why]++;
        dpc += (t.rd[i].flags & ETL_READY_EXECUTING_DPC) != 0;
        assert_true(t.rd[i].new_priority >= t.rd[i].old_priority);
    }
    for (int k = 0; k < 5; k++) assert_true(rwhy[k] > 0);
    assert_true(dpc > 0 && dpc < t.nrd);
    size_t sampled = 0, contended = 0, long_hold = 0;
    for (size_t i = 0; i < t.nsl; i++) {
        sampled += t.sl[i].sampled;
        contended += t.sl[i].lock.spin_count > 0;
        long_hold += t.sl[i].hold_cycles > 1000000;
        if (t.sl[i].lock.spin_count) assert_true(t.sl[i].sampled); /* threshold 1, rate 1 */
        if (t.sl[i].hold_cycles > 1000000) assert_true(t.sl[i].sampled);
    }
    assert_true(sampled && contended && long_hold && sampled < t.nsl);
    size_t starts = 0, ends = 0, pstarts = 0, pends = 0, names = 0;
    for (size_t i = 0; i < t.nth; i++) {
        starts += t.th[i].t.event == ETL_SYNTH_LIFE_START;
        ends += t.th[i].t.event == ETL_SYNTH_LIFE_END;
        names += t.th[i].t.event == ETL_SYNTH_LIFE_SET_NAME;
    }
    for (size_t i = 0; i < t.npr; i++) {
        pstarts += t.pr[i].p.event == ETL_SYNTH_LIFE_START;
        pends += t.pr[i].p.event == ETL_SYNTH_LIFE_END;
    }
    assert_true(starts && ends && pstarts && pends && names);
    size_t reasons[6] = {0};
    for (size_t i = 0; i < t.nba; i++) reasons[t.ba[i].reason]++;
    assert_true(reasons[ETL_CCSWAP_FLUSH_TID_TABLE_FULL] + reasons[ETL_CCSWAP_FLUSH_AGE] +
                    reasons[ETL_CCSWAP_FLUSH_NO_ROOM] > 0);
    assert_int_equal(reasons[ETL_CCSWAP_FLUSH_END], 2);
    readback rb;
    check_file(path, &o, &t, &rb);
    truth_free(&t);
    unlink(path);
}

/* ---- determinism ---------------------------------------------------------------------------- */

static void test_determinism(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    set(&o, "duration", "0.2");
    set(&o, "cswitch", "both");
    set(&o, "pmc", "2");
    set(&o, "compress", NULL);
    char a[512], b[512], c[512];
    tmp_path(a, sizeof a, "det-a.etl");
    tmp_path(b, sizeof b, "det-b.etl");
    tmp_path(c, sizeof c, "det-c.etl");
    run(a, &o, NULL, NULL);
    run(b, &o, NULL, NULL);
    set(&o, "seed", "2");
    run(c, &o, NULL, NULL);
    size_t na = 0, nb = 0, nc = 0;
    uint8_t *pa = slurp(a, &na), *pb = slurp(b, &nb), *pc = slurp(c, &nc);
    assert_non_null(pa);
    assert_non_null(pb);
    assert_non_null(pc);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    assert_true(na != nc || memcmp(pa, pc, na) != 0);
    free(pa);
    free(pb);
    free(pc);
    unlink(a);
    unlink(b);
    unlink(c);
}

/* A size target stops the run once the writer has that much, the same way every time. */
static void test_size_target(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    set(&o, "duration", "0");
    set(&o, "size", "3M");
    set(&o, "buffer-size", "16K");
    char a[512], b[512];
    tmp_path(a, sizeof a, "size-a.etl");
    tmp_path(b, sizeof b, "size-b.etl");
    etl_synth_summary s1, s2;
    run(a, &o, NULL, &s1);
    run(b, &o, NULL, &s2);
    assert_true(s1.bytes >= 3u << 20);
    assert_true(s1.bytes < (3u << 20) + (3u << 20));
    assert_int_equal(s1.bytes, s2.bytes);
    assert_int_equal(s1.events, s2.events);
    size_t na = 0, nb = 0;
    uint8_t *pa = slurp(a, &na), *pb = slurp(b, &nb);
    assert_int_equal(na, s1.bytes);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    free(pa);
    free(pb);
    unlink(a);
    unlink(b);
}

/* Many CPUs, and threads that outnumber them several times over. */
static void test_many_cpus(void **state)
{
    (void)state;
    static const char *const cpus[] = {"64", "256"};
    for (int i = 0; i < 2; i++) {
        etl_synth_options o;
        etl_synth_options_init(&o);
        set(&o, "cpus", cpus[i]);
        set(&o, "threads", "600");
        set(&o, "processes", "30");
        set(&o, "duration", "0.03");
        set(&o, "cswitch", "both");
        set(&o, "buffer-size", "8K");
        char path[512];
        tmp_path(path, sizeof path, "many.etl");
        truth t;
        run(path, &o, &t, NULL);
        check_truth(&o, &t);
        readback rb;
        check_file(path, &o, &t, &rb);
        truth_free(&t);
        unlink(path);
    }
}

/* Windows builds pick the event versions, the compact StateWr bias and whether names exist. */
static void test_builds(void **state)
{
    (void)state;
    static const char *const builds[] = {"9200", "9600", "10586", "14393", "15063", "16299", "22621", "26100"};
    for (size_t i = 0; i < sizeof builds / sizeof builds[0]; i++) {
        etl_synth_options o;
        etl_synth_options_init(&o);
        set(&o, "os-build", builds[i]);
        set(&o, "duration", "0.1");
        set(&o, "cswitch", "both");
        set(&o, "churn", "200");
        set(&o, "pointer-size", i % 2 ? "32" : "64");
        char path[512];
        tmp_path(path, sizeof path, "build.etl");
        truth t;
        run(path, &o, &t, NULL);
        check_truth(&o, &t);
        readback rb;
        check_file(path, &o, &t, &rb);
        assert_int_equal(t.meta.bias, etl_max_wait_reason_for_build(o.os_build));
        size_t named = 0, set_names = 0;
        for (size_t k = 0; k < t.nth; k++) {
            named += t.th[k].name[0] != 0;
            set_names += t.th[k].t.event == ETL_SYNTH_LIFE_SET_NAME;
        }
        if (o.os_build >= 14393) assert_true(named > 0 && set_names > 0);
        else assert_true(named == 0 && set_names == 0);
        truth_free(&t);
        unlink(path);
    }
}

/* ---- the JSON-lines sink --------------------------------------------------------------------- */

static void test_jsonl(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    set(&o, "duration", "0.05");
    set(&o, "cswitch", "compact");
    set(&o, "pmc", "2");
    char path[512], jpath[512];
    tmp_path(path, sizeof path, "jsonl.etl");
    tmp_path(jpath, sizeof jpath, "jsonl.jsonl");
    truth t;
    run(path, &o, &t, NULL);
    FILE *f = fopen(jpath, "w");
    assert_non_null(f);
    o.on_truth = etl_synth_truth_jsonl;
    o.truth_ctx = f;
    etl_diag d;
    assert_int_equal(etl_synth_run(path, &o, NULL, &d), ETL_OK);
    fclose(f);
    f = fopen(jpath, "r");
    assert_non_null(f);
    char line[4096], first[32] = "", lastt[32] = "";
    size_t n = 0, nsw = 0, nsl = 0, ntt = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t e;
        json_t *j = json_loads(line, 0, &e);
        if (!j) fail_msg("line %zu: %s: %s", n + 1, e.text, line);
        const char *ty = json_string_value(json_object_get(j, "type"));
        assert_non_null(ty);
        if (!n) snprintf(first, sizeof first, "%s", ty);
        snprintf(lastt, sizeof lastt, "%s", ty);
        if (strcmp(ty, "switch") == 0) {
            const etl_synth_switch *w = &t.sw[nsw++];
            assert_int_equal(json_integer_value(json_object_get(j, "time")), w->time);
            assert_int_equal(json_integer_value(json_object_get(j, "old_tid")), w->old_tid);
            assert_int_equal(json_integer_value(json_object_get(j, "new_tid")), w->new_tid);
            assert_int_equal(json_integer_value(json_object_get(j, "old_state")), w->old_state);
            assert_int_equal(json_integer_value(json_object_get(j, "batch")), w->batch);
            assert_int_equal(json_array_size(json_object_get(j, "pmc")), 2);
            assert_true(json_is_string(json_object_get(j, "form")));
        } else if (strcmp(ty, "spinlock") == 0) {
            const etl_synth_spinlock *k = &t.sl[nsl++];
            char hex[32];
            snprintf(hex, sizeof hex, "0x%llx", (unsigned long long)k->lock.spin_lock_address);
            assert_string_equal(json_string_value(json_object_get(j, "address")), hex);
            assert_int_equal(json_is_true(json_object_get(j, "sampled")), k->sampled);
        } else if (strcmp(ty, "thread_total") == 0) {
            const etl_synth_thread_total *tt = &t.tt[ntt++];
            assert_int_equal(json_integer_value(json_object_get(j, "running")), tt->running);
            assert_int_equal(json_integer_value(json_object_get(j, "ready")), tt->ready);
            assert_int_equal(json_integer_value(json_object_get(j, "waiting")), tt->waiting);
        }
        json_decref(j);
        n++;
    }
    fclose(f);
    assert_int_equal(n, t.records);
    assert_int_equal(nsw, t.nsw);
    assert_int_equal(nsl, t.nsl);
    assert_int_equal(ntt, t.ntt);
    assert_string_equal(first, "meta");
    assert_string_equal(lastt, "end");
    truth_free(&t);
    unlink(path);
    unlink(jpath);
}

/* ---- options -------------------------------------------------------------------------------------- */

static void test_options(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_diag d;
    etl_synth_options_init(&o);
    assert_int_equal(etl_synth_validate(&o, &d), ETL_OK);
    char v[64];
    etl_synth_get(&o, "cpus", v, sizeof v);
    assert_string_equal(v, "4");
    etl_synth_get(&o, "clock", v, sizeof v);
    assert_string_equal(v, "qpc");
    etl_synth_get(&o, "acquire-rate", v, sizeof v);
    assert_string_equal(v, "1000");

    set(&o, "duration", "250ms");
    assert_int_equal(o.duration_ns, 250000000u);
    set(&o, "duration", "1.5");
    assert_int_equal(o.duration_ns, 1500000000u);
    set(&o, "size", "2G");
    assert_int_equal(o.target_bytes, 2ull << 30);
    set(&o, "lock-contention", "2.5");
    assert_int_equal(o.lock_contention, 250);
    set(&o, "pointer-size", "32");
    assert_int_equal(o.pointer_size, 4);

    memset(&d, 0, sizeof d);
    assert_int_equal(etl_synth_set(&o, "cpus", "0", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "cpus", "257", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "clock", "tsc", &d), ETL_E_INVALID_ARG);
    assert_non_null(strstr(d.msg, "clock"));
    assert_int_equal(etl_synth_set(&o, "no-such", "1", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "compress", "1", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "seed", NULL, &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "pmc", "5", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_preset(&o, "huge", &d), ETL_E_INVALID_ARG);

    /* Spin lock sampling parameters below the kernel's minimum: named, with the minimum. */
    etl_synth_options_init(&o);
    set(&o, "acquire-rate", "999");
    memset(&d, 0, sizeof d);
    assert_int_equal(etl_synth_validate(&o, &d), ETL_E_INVALID_ARG);
    assert_non_null(strstr(d.msg, "SpinLockAcquireSampleRate"));
    assert_non_null(strstr(d.msg, "1000"));
    char path[512];
    tmp_path(path, sizeof path, "invalid.etl");
    assert_int_equal(etl_synth_run(path, &o, NULL, &d), ETL_E_INVALID_ARG);
    set(&o, "no-spinlocks", NULL);
    assert_int_equal(etl_synth_validate(&o, &d), ETL_OK);
    etl_synth_options_init(&o);
    set(&o, "hold-threshold", "5");
    assert_int_equal(etl_synth_validate(&o, &d), ETL_E_INVALID_ARG);
    assert_non_null(strstr(d.msg, "SpinLockHoldThreshold"));
    set(&o, "hold-threshold", "0");
    assert_int_equal(etl_synth_validate(&o, &d), ETL_OK);
    set(&o, "spin-threshold", "0");
    assert_int_equal(etl_synth_validate(&o, &d), ETL_E_INVALID_ARG);
    assert_non_null(strstr(d.msg, "SpinLockSpinThreshold"));
    etl_synth_options_init(&o);
    set(&o, "duration", "0");
    assert_int_equal(etl_synth_validate(&o, &d), ETL_E_INVALID_ARG);
    set(&o, "threads", "3");
    set(&o, "duration", "1");
    assert_int_equal(etl_synth_validate(&o, &d), ETL_E_INVALID_ARG); /* fewer threads than processes */

    assert_int_equal(etl_synth_preset(&o, "large", &d), ETL_OK);
    assert_int_equal(o.ncpu, 16);
    assert_int_equal(o.target_bytes, 1ull << 30);
    size_t n;
    const etl_synth_option_desc *tab = etl_synth_option_table(&n);
    assert_true(n > 20);
    for (size_t i = 0; i < n; i++) {
        assert_non_null(tab[i].help);
        etl_synth_get(&o, tab[i].name, v, sizeof v);
        assert_true(v[0] != 0);
    }
}

/* ---- fixtures -------------------------------------------------------------------------------------- */

/*
 * tests/data/README.md says, for each synth-*.etl, the command that made it
 * (`etlkit synth ... -o NAME`). Each is regenerated with the same options and
 * must be byte for byte the fixture, and the fixture must read back cleanly.
 */
static void test_fixtures(void **state)
{
    (void)state;
    char readme[512];
    snprintf(readme, sizeof readme, "%s/README.md", ETLKIT_TEST_DATA);
    FILE *f = fopen(readme, "r");
    assert_non_null(f);
    char line[2048];
    unsigned found = 0;
    char names[64][128];
    while (fgets(line, sizeof line, f)) {
        char *cmd = strstr(line, "`etlkit synth ");
        if (!cmd) continue;
        cmd++;
        char *endq = strchr(cmd, '`');
        assert_non_null(endq);
        *endq = 0;
        etl_synth_options o;
        etl_synth_options_init(&o);
        char *save = NULL, *tok = strtok_r(cmd, " ", &save);
        const char *out = NULL;
        tok = strtok_r(NULL, " ", &save); /* "synth" */
        while ((tok = strtok_r(NULL, " ", &save))) {
            if (strcmp(tok, "-o") == 0) {
                out = strtok_r(NULL, " ", &save);
                continue;
            }
            assert_true(strncmp(tok, "--", 2) == 0);
            const char *name = tok + 2;
            if (strcmp(name, "preset") == 0) {
                etl_diag d;
                assert_int_equal(etl_synth_preset(&o, strtok_r(NULL, " ", &save), &d), ETL_OK);
                continue;
            }
            size_t n;
            const etl_synth_option_desc *tab = etl_synth_option_table(&n);
            bool takes = false;
            for (size_t i = 0; i < n; i++)
                if (strcmp(tab[i].name, name) == 0) takes = tab[i].arg != NULL;
            set(&o, name, takes ? strtok_r(NULL, " ", &save) : NULL);
        }
        assert_non_null(out);
        assert_true(found < 64);
        snprintf(names[found++], sizeof names[0], "%s", out);
        char fixture[512], path[512];
        snprintf(fixture, sizeof fixture, "%s/%s", ETLKIT_TEST_DATA, out);
        tmp_path(path, sizeof path, out);
        truth t;
        run(path, &o, &t, NULL);
        size_t na = 0, nb = 0;
        uint8_t *a = slurp(fixture, &na), *b = slurp(path, &nb);
        if (!a) fail_msg("%s: missing", fixture);
        assert_true(na <= 300 * 1024);
        if (na != nb || memcmp(a, b, na) != 0)
            fail_msg("%s: regenerating it gives different bytes (%zu vs %zu): the writer or the model changed", out, nb, na);
        readback rb;
        check_file(fixture, &o, &t, &rb);
        free(a);
        free(b);
        truth_free(&t);
        unlink(path);
    }
    fclose(f);
    assert_true(found >= 6);
    /* Every synth fixture is listed, and together they stay small. */
    DIR *d = opendir(ETLKIT_TEST_DATA);
    assert_non_null(d);
    struct dirent *e;
    uint64_t total = 0;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, "synth-", 6) != 0) continue;
        bool listed = false;
        for (unsigned i = 0; i < found; i++) listed |= strcmp(names[i], e->d_name) == 0;
        if (!listed) fail_msg("%s is not in tests/data/README.md", e->d_name);
        char p[512];
        struct stat st;
        snprintf(p, sizeof p, "%s/%s", ETLKIT_TEST_DATA, e->d_name);
        assert_int_equal(stat(p, &st), 0);
        total += (uint64_t)st.st_size;
    }
    closedir(d);
    assert_true(total <= 3u << 20);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_flavours),
        cmocka_unit_test(test_coverage),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_size_target),
        cmocka_unit_test(test_many_cpus),
        cmocka_unit_test(test_builds),
        cmocka_unit_test(test_jsonl),
        cmocka_unit_test(test_fixtures),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}

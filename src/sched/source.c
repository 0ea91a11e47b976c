/*
 * source.c - a trace's scheduler events in time order.
 *
 * The records come from the reader's time-order iterator, except compact
 * batches: the kernel logs a batch when it flushes it, after the other events of
 * its period (up to 500 timer ticks later), so merged at the batch's own time
 * its switches would come after the ReadyThread events they answer. When the
 * trace logs compact switches (group mask PERF_COMPACT_CSWITCH, or no mask at
 * all), each CPU gets a second cursor that reads only that CPU's batches, ahead
 * of the main one, and expands them; a small heap merges the main stream with
 * the per-CPU switch streams on (time, CPU, main first). Memory: one cursor
 * and one expander per CPU, nothing per event.
 *
 * A CPU whose trace carries both forms (CSwitch events and batches) keeps the
 * form it shows first and drops the other (counted), as convert does.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/sched.h"
#include "etlkit/event.h"

enum { FORM_UNKNOWN = 0, FORM_FULL = 1, FORM_COMPACT = 2 };

/* One CPU's compact switches, read ahead. */
typedef struct bsrc {
    etl_iter *it;
    etl_batch_expander x;
    etl_batch_expand_cpu *xcpus;
    unsigned cpu;
    bool in_batch;   /* x has a batch begun */
    bool finishing;  /* the iterator is done: draining x's pending switch */
    bool done;
} bsrc;

/* A source's head event. */
typedef struct head {
    etl_sched_event ev;
    bool has;
} head;

struct etl_sched_source {
    etl_reader *r;
    etl_iter *main;
    bool main_done;
    bool lookahead;
    /* late expansion, when batches are not read ahead */
    etl_batch_expander late;
    etl_batch_expand_cpu *late_cpus;
    bool late_active;
    bool late_finishing;
    bsrc *b;
    unsigned nb;
    head *heads;      /* [0] main, [1 + c] CPU c's batches */
    unsigned *heap;
    unsigned heap_n;
    int pending;      /* source whose head was returned last */
    uint8_t *form;    /* per CPU */
    unsigned nform;
    unsigned bias;
    uint32_t skip;    /* kinds the caller does not want */
    etl_sched_source_stats st;
};

/* The kind a hook decodes to, 0 for the hooks the model does not use. */
static unsigned kind_of(uint16_t h)
{
    if (h == ETL_HOOK_CSWITCH || h == ETL_HOOK_CSWITCH_BATCH) return ETL_SCHED_SWITCH;
    if (h == ETL_HOOK_READY_THREAD) return ETL_SCHED_READY;
    if (h == ETL_HOOK_SPINLOCK) return ETL_SCHED_SPINLOCK;
    if (h >= ETL_HOOK_THREAD_START && h <= ETL_HOOK_THREAD_DC_END) return ETL_SCHED_THREAD;
    if (h == ETL_HOOK_THREAD_SET_NAME) return ETL_SCHED_SET_NAME;
    if ((h >= ETL_HOOK_PROCESS_START && h <= ETL_HOOK_PROCESS_DC_END) || h == ETL_HOOK_PROCESS_DEFUNCT)
        return ETL_SCHED_PROCESS;
    return 0;
}

static void switch_event(etl_sched_event *ev, const etl_cswitch *sw, uint16_t hook)
{
    ev->kind = ETL_SCHED_SWITCH;
    ev->cpu = sw->cpu;
    ev->hook = hook;
    ev->ts = sw->ts;
    ev->u.sw = *sw;
}

/* Decodes a record into ev. Returns 1 for an event, 0 to skip, 2 for a batch (not filled). */
static int decode(etl_sched_source *s, const etl_record *rec, etl_sched_event *ev)
{
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) return 0;
    unsigned kind = kind_of(hook);
    if (!kind) return 0;
    if (rec->ts > s->st.last_ts) s->st.last_ts = rec->ts;
    if (s->skip & (1u << kind)) return 0;
    etl_event e;
    if (etl_event_decode(rec, &e) != ETL_OK) {
        s->st.undecodable++;
        return 0;
    }
    ev->cpu = rec->cpu;
    ev->hook = hook;
    ev->ts = rec->ts;
    switch (e.kind) {
    case ETL_EVENT_CSWITCH:
        switch_event(ev, &e.u.cswitch, hook);
        return 1;
    case ETL_EVENT_CCSWAP_BATCH:
        return 2;
    case ETL_EVENT_READY_THREAD:
        ev->kind = ETL_SCHED_READY;
        ev->u.ready = e.u.ready;
        return 1;
    case ETL_EVENT_THREAD:
        ev->kind = ETL_SCHED_THREAD;
        ev->u.thread = e.u.thread;
        return 1;
    case ETL_EVENT_THREAD_SET_NAME:
        ev->kind = ETL_SCHED_SET_NAME;
        ev->u.set_name = e.u.set_name;
        return 1;
    case ETL_EVENT_PROCESS:
        ev->kind = ETL_SCHED_PROCESS;
        ev->u.process = e.u.process;
        return 1;
    case ETL_EVENT_SPINLOCK:
        ev->kind = ETL_SCHED_SPINLOCK;
        ev->u.spinlock = e.u.spinlock;
        return 1;
    default:
        return 0;
    }
}

static void count_chain(etl_sched_source *s, const etl_cswitch *sw)
{
    if (!(sw->known & ETL_CSW_NEW_TID)) s->st.broken_chains++;
}

/* The main stream's next event into h (late batch switches first). */
static void main_fill(etl_sched_source *s, head *h)
{
    h->has = false;
    etl_cswitch sw;
    for (;;) {
        if (s->late_active) {
            if (etl_batch_expand_next(&s->late, &sw) == ETL_OK) {
                count_chain(s, &sw);
                switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
                h->has = true;
                return;
            }
            s->late_active = false;
        }
        if (s->main_done) {
            if (!s->late_cpus || s->late_finishing) return;
            if (etl_batch_expand_finish(&s->late, &sw) == ETL_OK) { /* a CPU's last switch: no successor to lose */
                switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
                h->has = true;
                return;
            }
            s->late_finishing = true;
            return;
        }
        etl_record rec;
        if (etl_iter_next(s->main, &rec) != ETL_OK) {
            s->main_done = true;
            continue;
        }
        int k = decode(s, &rec, &h->ev);
        if (k == 1) {
            h->has = true;
            return;
        }
        if (k == 2 && !s->lookahead && s->late_cpus) {
            s->st.late_batches++;
            etl_batch_expand_begin(&s->late, rec.cpu, rec.payload, s->bias, (uint8_t)rec.version);
            s->late_active = true;
        }
    }
}

/* CPU b's next compact switch into h. */
static void batch_fill(etl_sched_source *s, bsrc *b, head *h)
{
    h->has = false;
    etl_cswitch sw;
    while (!b->done) {
        if (b->finishing) {
            if (etl_batch_expand_finish(&b->x, &sw) == ETL_OK) { /* a CPU's last switch: no successor to lose */
                sw.cpu = (uint16_t)b->cpu;
                switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
                h->has = true;
                return;
            }
            b->done = true;
            return;
        }
        if (b->in_batch && etl_batch_expand_next(&b->x, &sw) == ETL_OK) {
            count_chain(s, &sw);
            sw.cpu = (uint16_t)b->cpu;
            switch_event(&h->ev, &sw, ETL_HOOK_CSWITCH_BATCH);
            h->has = true;
            return;
        }
        b->in_batch = false;
        etl_record rec;
        if (etl_iter_next(b->it, &rec) != ETL_OK) {
            b->finishing = true;
            continue;
        }
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook) || hook != ETL_HOOK_CSWITCH_BATCH) continue;
        etl_batch_expand_begin(&b->x, 0, rec.payload, s->bias, (uint8_t)rec.version);
        b->in_batch = true;
    }
}

static void fill(etl_sched_source *s, unsigned i)
{
    if (i == 0) main_fill(s, &s->heads[0]);
    else batch_fill(s, &s->b[i - 1], &s->heads[i]);
}

/* (time, CPU, main before batches): ties on one CPU put a ReadyThread before the switch it causes. */
static bool less(const etl_sched_source *s, unsigned a, unsigned b)
{
    const etl_sched_event *x = &s->heads[a].ev, *y = &s->heads[b].ev;
    if (x->ts != y->ts) return x->ts < y->ts;
    if (x->cpu != y->cpu) return x->cpu < y->cpu;
    return a < b;
}

static void sift_down(etl_sched_source *s, unsigned i)
{
    unsigned *h = s->heap;
    for (;;) {
        unsigned l = 2 * i + 1, m = i;
        if (l < s->heap_n && less(s, h[l], h[m])) m = l;
        if (l + 1 < s->heap_n && less(s, h[l + 1], h[m])) m = l + 1;
        if (m == i) return;
        unsigned t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

/* Whether the trace logs compact switches: the group mask of the first records decides; no mask: assume so. */
static bool logs_compact(etl_reader *r)
{
    etl_iter *it;
    if (etl_iter_open(r, ETL_ORDER_FILE, &it) != ETL_OK) return true;
    etl_record rec;
    bool compact = true;
    for (unsigned n = 0; n < 4096 && etl_iter_next(it, &rec) == ETL_OK; n++) {
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook)) continue;
        if (hook == ETL_HOOK_CSWITCH_BATCH) break;
        if (hook == ETL_HOOK_HEADER_EXTENSION || hook == ETL_HOOK_GROUP_MASKS_END) {
            etl_groupmask m;
            if (etl_groupmask_decode(rec.payload, &m) == ETL_OK) {
                compact = etl_groupmask_test(&m, ETL_PERF_COMPACT_CSWITCH);
                break;
            }
        }
    }
    etl_iter_close(it);
    return compact;
}

etl_status etl_sched_source_open(etl_reader *r, const etl_sched_source_options *opts,
                                 etl_sched_source **out)
{
    *out = NULL;
    etl_sched_source *s = calloc(1, sizeof *s);
    if (!s) return ETL_E_NOMEM;
    s->r = r;
    s->pending = -1;
    int bias = opts && opts->sz >= sizeof *opts ? opts->bias : -1;
    s->skip = opts && opts->sz >= sizeof *opts ? opts->skip : 0;
    s->bias = bias >= 0 ? (unsigned)bias : etl_max_wait_reason_for_build(etl_reader_header(r)->provider_version);
    unsigned ncpu = etl_reader_cpu_count(r);
    s->nform = ncpu ? ncpu : 1;
    s->form = calloc(s->nform, 1);
    s->lookahead = ncpu > 0 && logs_compact(r);
    s->nb = s->lookahead ? ncpu : 0;
    s->b = calloc(s->nb ? s->nb : 1, sizeof *s->b);
    s->heads = calloc(s->nb + 1, sizeof *s->heads);
    s->heap = calloc(s->nb + 1, sizeof *s->heap);
    etl_status st = s->form && s->b && s->heads && s->heap ? etl_iter_open(r, ETL_ORDER_TIME, &s->main) : ETL_E_NOMEM;
    if (st == ETL_OK && !s->lookahead && ncpu) {
        s->late_cpus = calloc(ncpu, sizeof *s->late_cpus);
        st = s->late_cpus ? etl_batch_expand_init(&s->late, s->late_cpus, ncpu) : ETL_E_NOMEM;
    }
    /* Only CPUs that have buffers get a cursor: a hostile file may name CPU 2047 and no other. */
    uint8_t *has = s->nb ? calloc(s->nb, 1) : NULL;
    for (size_t i = 0; has && i < etl_reader_buffer_count(r); i++) {
        unsigned c = etl_reader_buffer_cpu(r, i);
        if (c < s->nb) has[c] = 1;
    }
    if (s->nb && !has) st = ETL_E_NOMEM;
    for (unsigned c = 0; st == ETL_OK && c < s->nb; c++) {
        bsrc *b = &s->b[c];
        b->cpu = c;
        if (!has[c]) {
            b->done = true;
            continue;
        }
        /* One expander slot: the CPU's batches go in as CPU 0 and its switches come back with their CPU. */
        b->xcpus = calloc(1, sizeof *b->xcpus);
        st = b->xcpus ? etl_iter_open_cpu(r, c, &b->it) : ETL_E_NOMEM;
        if (st == ETL_OK) st = etl_batch_expand_init(&b->x, b->xcpus, 1);
    }
    free(has);
    if (st != ETL_OK) {
        etl_sched_source_close(s);
        return st;
    }
    for (unsigned i = 0; i <= s->nb; i++) {
        fill(s, i);
        if (s->heads[i].has) s->heap[s->heap_n++] = i;
    }
    for (unsigned i = s->heap_n; i-- > 0;) sift_down(s, i);
    *out = s;
    return ETL_OK;
}

etl_status etl_sched_source_next(etl_sched_source *s, etl_sched_event *ev)
{
    for (;;) {
        if (s->pending >= 0) {
            fill(s, (unsigned)s->pending);
            if (!s->heads[s->pending].has) s->heap[0] = s->heap[--s->heap_n];
            if (s->heap_n) sift_down(s, 0);
            s->pending = -1;
        }
        if (s->heap_n == 0) return ETL_END;
        unsigned top = s->heap[0];
        s->pending = (int)top;
        const etl_sched_event *e = &s->heads[top].ev;
        if (e->kind == ETL_SCHED_SWITCH) {
            unsigned c = e->cpu;
            if (c >= s->nform) {
                uint8_t *f = realloc(s->form, c + 1u);
                if (!f) continue;
                memset(f + s->nform, 0, c + 1u - s->nform);
                s->form = f;
                s->nform = c + 1u;
            }
            uint8_t want = e->u.sw.source == ETL_CSW_SRC_COMPACT ? FORM_COMPACT : FORM_FULL;
            if (s->form[c] == FORM_UNKNOWN) s->form[c] = want;
            if (s->form[c] != want) {
                s->st.duplicates_dropped++;
                continue;
            }
            s->st.switches++;
            if (want == FORM_COMPACT) s->st.compact_switches++;
            else s->st.full_switches++;
        }
        *ev = *e;
        return ETL_OK;
    }
}

const etl_sched_source_stats *etl_sched_source_stats_get(const etl_sched_source *s) { return &s->st; }

void etl_sched_source_damage(const etl_sched_source *s, etl_stats *out)
{
    /* The batch cursors read the same buffers as the main one: its counters say it all. */
    *out = *etl_iter_stats(s->main);
}

uint64_t etl_sched_source_progress(const etl_sched_source *s) { return etl_iter_progress(s->main); }

void etl_sched_source_close(etl_sched_source *s)
{
    if (!s) return;
    for (unsigned c = 0; s->b && c < s->nb; c++) {
        etl_iter_close(s->b[c].it);
        free(s->b[c].xcpus);
    }
    etl_iter_close(s->main);
    free(s->late_cpus);
    free(s->b);
    free(s->heads);
    free(s->heap);
    free(s->form);
    free(s);
}

/*
 * Where a missing buffer may have held each CPU's records (etl_reader_cpu_gaps). A CPU fills
 * one buffer at a time and takes the next when it is full, so the records of a buffer that
 * went missing between two SequenceNumbers found lie, on its CPU, after the last record of
 * that CPU's buffer before the gap and before the first of its buffer after. Which CPU it was
 * is not in the file: every CPU with buffers on both sides may have lost records there. A
 * slice of the scheduler spanning such a span is unknown even when the switches on its two
 * sides agree (a CPU idle on both sides of a lost buffer of its switches looks idle
 * throughout).
 */
#include <stdlib.h>
#include <string.h>
#include "container/reader_internal.h"

int etl_buf_by_cpu_order(const void *a, const void *b)
{
    const etl_buf_ent *x = *(const etl_buf_ent *const *)a, *y = *(const etl_buf_ent *const *)b;
    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    if (x->order != y->order) return x->order < y->order ? -1 : 1;
    return x->file_off < y->file_off ? -1 : x->file_off > y->file_off;
}

/*
 * A buffer in the file that the reader passes over (its ProcessorIndex impossible, ...): its
 * records are lost to their CPU, but their times are known, [first, last] (ok: read).
 */
typedef struct passed {
    const etl_buf_ent *b;
    uint64_t first, last;
    bool ok;
} passed;

/* The SequenceNumbers missing in [from, to), to > from. */
static uint64_t missing_in(const etl_reader *r, uint64_t from, uint64_t to)
{
    size_t lo = 0, hi = r->nholes; /* the first hole that reaches from */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->holes[mid].to < from) lo = mid + 1;
        else hi = mid;
    }
    uint64_t n = 0;
    for (size_t i = lo; i < r->nholes && r->holes[i].from < to; i++) {
        uint64_t f = r->holes[i].from > from ? r->holes[i].from : from;
        uint64_t t = r->holes[i].to < to - 1 ? r->holes[i].to : to - 1;
        n += t - f + 1;
    }
    return n;
}

/* Whether SequenceNumber q is missing. */
static bool is_missing(const etl_reader *r, uint64_t q) { return q < UINT64_MAX && missing_in(r, q, q + 1) != 0; }

/*
 * Whether the records of a CPU whose last record before a gap is at lo and first after it at hi
 * may be among those the gap lost: the numbers missing in [from, to) (those between the CPU's
 * buffers on either side). When each is a buffer passed over whose times are known, only if the
 * CPU's records run on neither side of one of them: a CPU writes one buffer at a time.
 */
static bool may_have_lost(const etl_reader *r, uint64_t from, uint64_t to, uint64_t lo, uint64_t hi, const passed *p,
                          size_t np)
{
    uint64_t want = missing_in(r, from, to), got = 0;
    size_t a = 0, b = np; /* p by SequenceNumber: the first at from or after */
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (p[mid].b->seq < from) a = mid + 1;
        else b = mid;
    }
    for (size_t i = a; i < np && p[i].b->seq < to; i++, got++)
        if (!p[i].ok || (lo <= p[i].first && p[i].last <= hi)) return true;
    return got != want;
}

static int by_seq(const void *a, const void *b)
{
    const passed *x = a, *y = b;
    return x->b->seq < y->b->seq ? -1 : x->b->seq > y->b->seq;
}

/* A buffer's record times, read at most once: state 0 not yet, 1 read, 2 none (or unreadable). */
typedef struct btimes {
    uint64_t first, last;
    etl_buf_switch sw;
    uint8_t state;
} btimes;

static bool times_of(const etl_reader *r, const etl_buf_ent *b, btimes *t, uint8_t **scratch)
{
    if (!t->state) t->state = etl_buf_times_sw(r, b, scratch, &t->first, &t->last, &t->sw) ? 1 : 2;
    return t->state == 1;
}

/*
 * The CPU's latest switch told by its buffers v[floor..at] (newest first; each read at most once), else *prev (what
 * the look before found, below floor): where its switches known before a gap end.
 */
static etl_buf_switch last_switch(const etl_reader *r, const etl_buf_ent **v, btimes *t, uint8_t **scratch,
                                  size_t floor, size_t at, const etl_buf_switch *prev)
{
    for (size_t j = at + 1; j-- > floor;)
        if (times_of(r, v[j], &t[j], scratch) && t[j].sw.any) return t[j].sw;
    return *prev;
}

/* Appends span s of CPU cpu, merged into the CPU's last when they overlap (a side read further away). */
static etl_status add_span(etl_reader *r, unsigned cpu, etl_ts_span s, size_t *n, size_t *cap)
{
    if (*n && *n == r->gaps_at[cpu + 1] && s.lo < r->gaps[*n - 1].hi) { /* the last span is this CPU's */
        if (s.hi > r->gaps[*n - 1].hi) r->gaps[*n - 1].hi = s.hi;
        return ETL_OK;
    }
    if (*n == *cap) {
        size_t c2 = *cap ? *cap * 2 : 16;
        etl_ts_span *g = realloc(r->gaps, c2 * sizeof *g);
        if (!g) return ETL_E_NOMEM;
        r->gaps = g, *cap = c2;
    }
    r->gaps[(*n)++] = s;
    r->gaps_at[cpu + 1] = *n;
    return ETL_OK;
}

etl_status etl_reader_find_gaps(etl_reader *r)
{
    if (!r->nholes || !r->missing) return ETL_OK;
    const etl_buf_ent **v = malloc(r->nbufs * sizeof *v);
    passed *p = malloc(r->nbufs * sizeof *p);
    btimes *t = calloc(r->nbufs ? r->nbufs : 1, sizeof *t);
    r->gaps_at = calloc((size_t)r->ncpu + 1, sizeof *r->gaps_at);
    if (!v || !p || !t || !r->gaps_at) {
        free(v);
        free(p);
        free(t);
        return ETL_E_NOMEM;
    }
    uint8_t *scratch = NULL;
    size_t n = 0, np = 0, cap = 0, ngaps = 0;
    for (size_t i = 0; i < r->nbufs; i++) {
        const etl_buf_ent *b = &r->bufs[i];
        if (!b->skip && b->cpu < r->ncpu) v[n++] = b;
        else if (b->skip && is_missing(r, b->seq)) {
            p[np] = (passed){b, 0, 0, false};
            p[np].ok = etl_buf_times(r, b, &scratch, &p[np].first, &p[np].last);
            np++;
        }
    }
    qsort(v, n, sizeof *v, etl_buf_by_cpu_order);
    qsort(p, np, sizeof *p, by_seq);
    etl_status st = ETL_OK;
    /*
     * Each buffer is read at most once: a side that cannot be read (or holds no record) gives way
     * to the CPU's nearest one that can, found by cursors that only move forward (ahead) or look
     * back no further than where they looked last (seen).
     */
    size_t ok_before = SIZE_MAX, seen = 0, ahead = 0, first_i = 0, sw_to = SIZE_MAX;
    etl_buf_switch sw = {0};
    for (size_t i = 0; i < n && st == ETL_OK; i++) {
        bool same = i && v[i - 1]->cpu == v[i]->cpu;
        if (!same) ok_before = SIZE_MAX, seen = first_i = i, sw_to = SIZE_MAX, sw = (etl_buf_switch){0};
        uint64_t from = same ? v[i - 1]->order + 1 : 0;
        if (from >= v[i]->order || !missing_in(r, from, v[i]->order)) continue;
        for (size_t j = i; j-- > seen;) /* the CPU's newest buffer with times before i */
            if (times_of(r, v[j], &t[j], &scratch)) {
                ok_before = j;
                break;
            }
        seen = i;
        if (ahead < i) ahead = i;
        while (ahead < n && v[ahead]->cpu == v[i]->cpu && !times_of(r, v[ahead], &t[ahead], &scratch)) ahead++;
        etl_ts_span s = {ok_before != SIZE_MAX ? t[ok_before].last : 0,
                         ahead < n && v[ahead]->cpu == v[i]->cpu ? t[ahead].first : UINT64_MAX};
        /* The CPU's records run on across the gap, or it wrote through a lost buffer's time: none of its lost. */
        if (s.hi <= s.lo || !may_have_lost(r, from, v[i]->order, s.lo, s.hi, p, np)) continue;
        /*
         * Compact batches: a batch is logged after its switches, and the CPU's next one holds its switches from the
         * last one's last on, some before the buffer's last record (a ReadyThread logged after them): when that next
         * batch may be in the gap, the CPU's switches are lost from its last switch known, and who ran there is not.
         */
        if (ok_before != SIZE_MAX) {
            if (sw_to != ok_before)
                sw = last_switch(r, v, t, &scratch, sw_to != SIZE_MAX ? sw_to + 1 : first_i, ok_before, &sw);
            sw_to = ok_before;
            if (sw.any && sw.batch && sw.ts < s.lo) s.lo = sw.ts;
        }
        st = add_span(r, v[i]->cpu, s, &ngaps, &cap);
    }
    /* gaps_at[c + 1] was set at c's last span: a CPU without spans ends where the one before it does. */
    for (unsigned c = 1; c <= r->ncpu; c++)
        if (r->gaps_at[c] < r->gaps_at[c - 1]) r->gaps_at[c] = r->gaps_at[c - 1];
    free(scratch);
    free(t);
    free(p);
    free(v);
    return st;
}

const etl_ts_span *etl_reader_cpu_gaps(const etl_reader *r, unsigned cpu, size_t *n)
{
    *n = 0;
    if (!r->gaps_at || cpu >= r->ncpu) return NULL;
    *n = r->gaps_at[cpu + 1] - r->gaps_at[cpu];
    return *n ? r->gaps + r->gaps_at[cpu] : NULL;
}

/*
 * Records skipped inside the file (etl_reader_cpu_skipped). A buffer the iterators cannot frame
 * to its end, or cannot load, loses its CPU's records from the last one read before it to the
 * next one read after: the same loss as a missing buffer, but its CPU and place are known. The
 * iterators find them as they read, every one over a CPU the same ones in the same order (each
 * reads the CPU from its first buffer), so they are noted once per buffer, on as many threads
 * as read the file. A scheduler record passed over alone (etl_reader_note_lost) is such a loss
 * too, and a buffer may hold several: those are kept once per time, the CPU's room grown.
 */
static bool skips_make(etl_reader *r)
{
    size_t nb = r->nbufs ? r->nbufs : 1;
    r->skip_lo = malloc(nb * sizeof *r->skip_lo);
    r->skip_hi = malloc(nb * sizeof *r->skip_hi);
    r->skip_at = calloc((size_t)r->ncpu + 1, sizeof *r->skip_at);
    r->skip_n = calloc((size_t)r->ncpu + 1, sizeof *r->skip_n);
    r->skip_seen = calloc(nb, 1);
    if (!r->skip_lo || !r->skip_hi || !r->skip_at || !r->skip_n || !r->skip_seen) {
        free(r->skip_lo), free(r->skip_hi), free(r->skip_at), free(r->skip_n), free(r->skip_seen);
        r->skip_lo = r->skip_hi = NULL, r->skip_at = r->skip_n = NULL, r->skip_seen = NULL;
        return false;
    }
    /* Each CPU's room: as many as it has buffers (one skip ends a buffer's reading; records passed over grow it). */
    for (size_t i = 0; i < r->nbufs; i++)
        if (r->bufs[i].cpu < r->ncpu) r->skip_at[r->bufs[i].cpu + 1]++;
    for (unsigned c = 0; c < r->ncpu; c++) r->skip_at[c + 1] += r->skip_at[c];
    return true;
}

/*
 * Adds (lo, hi) to CPU cpu's skips (in its order; a time it has already takes the later hi), under skip_mu, the
 * table made.
 */
static void skip_insert(etl_reader *r, unsigned cpu, uint64_t lo, uint64_t hi)
{
    uint64_t *v = r->skip_lo + r->skip_at[cpu], *h = r->skip_hi + r->skip_at[cpu];
    size_t n = r->skip_n[cpu], i = n;
    if (hi < lo) hi = lo;
    while (i && v[i - 1] > lo) i--; /* found in the CPU's order: at the end but where its times went back */
    if (i && v[i - 1] == lo) {
        if (h[i - 1] < hi) h[i - 1] = hi;
        return;
    }
    if (r->skip_at[cpu] + n == r->skip_at[cpu + 1]) { /* its room is full: the CPUs after it move up */
        size_t more = n + 4, all = r->skip_at[r->ncpu];
        uint64_t *g = realloc(r->skip_lo, (all + more) * sizeof *g);
        if (g) r->skip_lo = g;
        uint64_t *gh = g ? realloc(r->skip_hi, (all + more) * sizeof *gh) : NULL;
        if (!gh) {
            atomic_store(&r->skips_lost, true); /* which slices crossed it is not known: every one unknown */
            return;
        }
        r->skip_hi = gh;
        size_t end = r->skip_at[cpu + 1];
        memmove(g + end + more, g + end, (all - end) * sizeof *g);
        memmove(gh + end + more, gh + end, (all - end) * sizeof *gh);
        for (unsigned c = cpu + 1; c <= r->ncpu; c++) r->skip_at[c] += more;
        v = g + r->skip_at[cpu];
        h = gh + r->skip_at[cpu];
    }
    memmove(v + i + 1, v + i, (n - i) * sizeof *v);
    memmove(h + i + 1, h + i, (n - i) * sizeof *h);
    v[i] = lo;
    h[i] = hi;
    r->skip_n[cpu] = n + 1;
    atomic_fetch_add(&r->nskips, 1);
}

/* The skip table made on first use, under the lock; when it cannot be, every CPU reads as skipped (skips_lost). */
static void skips_ready(etl_reader *r)
{
    if (!r->skip_seen && !atomic_load(&r->skips_lost) && !skips_make(r)) atomic_store(&r->skips_lost, true);
}

void etl_reader_note_skip(etl_reader *r, const etl_buf_ent *b, uint64_t lo, uint64_t hi)
{
    if (b->cpu >= r->ncpu || b->index >= r->nbufs) return; /* no CPU's: a missing buffer's rule (etl_reader_cpu_gaps) */
    etl_mutex_lock(r->skip_mu);
    skips_ready(r);
    if (r->skip_seen && !(r->skip_seen[b->index] & ETL_SKIP_REST)) {
        r->skip_seen[b->index] |= ETL_SKIP_REST;
        skip_insert(r, b->cpu, lo, hi);
    }
    etl_mutex_unlock(r->skip_mu);
}

void etl_reader_note_lost(etl_reader *r, const etl_buf_ent *b, uint64_t lo, uint64_t hi)
{
    if (b->cpu >= r->ncpu || b->index >= r->nbufs) return;
    etl_mutex_lock(r->skip_mu);
    skips_ready(r);
    if (r->skip_seen) skip_insert(r, b->cpu, lo, hi); /* every iterator over the CPU finds it at the same lo: kept once */
    etl_mutex_unlock(r->skip_mu);
}

void etl_reader_note_passed(etl_reader *r, const etl_buf_ent *b)
{
    if (b->index >= r->nbufs) return;
    etl_mutex_lock(r->skip_mu);
    skips_ready(r);
    if (r->skip_seen) r->skip_seen[b->index] |= ETL_SKIP_PASSED;
    etl_mutex_unlock(r->skip_mu);
}

bool etl_reader_cpu_skipped(const etl_reader *r, unsigned cpu, uint64_t from, uint64_t to)
{
    if (atomic_load_explicit(&r->skips_lost, memory_order_relaxed)) return true;
    return etl_reader_cpu_next_skip(r, cpu, from) < to;
}

uint64_t etl_reader_cpu_next_skip(const etl_reader *r, unsigned cpu, uint64_t from)
{
    uint64_t hi;
    return etl_reader_cpu_next_skip_span(r, cpu, from, &hi);
}

uint64_t etl_reader_cpu_next_skip_span(const etl_reader *r, unsigned cpu, uint64_t from, uint64_t *end)
{
    *end = UINT64_MAX;
    if (!atomic_load_explicit(&r->nskips, memory_order_relaxed) || cpu >= r->ncpu) return UINT64_MAX;
    etl_reader *w = (etl_reader *)r; /* the lock: the iterators note more while the timeline asks */
    etl_mutex_lock(w->skip_mu);
    uint64_t at = UINT64_MAX;
    if (r->skip_lo) {
        const uint64_t *v = r->skip_lo + r->skip_at[cpu];
        size_t lo = 0, hi = r->skip_n[cpu]; /* the first at from or after */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (v[mid] < from) lo = mid + 1;
            else hi = mid;
        }
        if (lo < r->skip_n[cpu]) at = v[lo], *end = r->skip_hi[r->skip_at[cpu] + lo];
    }
    etl_mutex_unlock(w->skip_mu);
    return at;
}

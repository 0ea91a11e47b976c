/*
 * model.c - the scheduler model (spec analyses.md §0, §1).
 *
 * Per CPU, the last switch s_i opens a row for the thread it switches in; the
 * next switch s_{i+1} closes it (NSO) and says who really ran (its old thread).
 * Per thread instance, the state between two switch-ins: the previous
 * switch-out P (state, wait reason) and the ReadyThread candidates since the
 * previous switch-in, from which a switch-in takes its Ready Time and readier:
 *   P runnable            RT = LSO, Waits = 0, no R (candidates are counted);
 *   P waiting or absent   R = the last candidate, RT = max(t(R), LSO);
 *   no candidate          RT unknown.
 * Memory: one small record per thread and process instance, a name pool, and
 * one open row per CPU; nothing per event. A hostile trace cannot make more: a
 * Start of a thread already started that has not run since is that Start again
 * (repeated_starts), not a new instance (a thread runs before it ends, so its End
 * cannot have been lost); instances stop at ETL_SCHED_MAX_INSTANCES threads and as
 * many processes, the name pool at ETL_SCHED_MAX_NAME_BYTES (over_limit counts what
 * is left out).
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/sched.h"
#include "etlkit/event.h"
#include "etlkit/text.h"
#include "base/fastmem.h"
#include "base/idmap.h"
#include "sched/model_priv.h"
#include "container/reader_internal.h"
#include "base/opts.h"

/* Live state of a thread instance, beside its public record. */
typedef struct mthr {
    uint64_t in_ts;          /* I_prev: the last switch-in */
    uint64_t out_ts;         /* LSO: the last switch-out */
    uint64_t r_ts;           /* the last ReadyThread candidate */
    etl_ready_thread r;
    uint32_t r_readier_tid, r_readier_thread, first_readier_tid;
    uint32_t ncand;
    uint32_t out_known;
    uint16_t r_cpu;
    uint8_t has_in, has_out;
    uint8_t out_state, out_reason, out_mode;
    int8_t out_priority;
    uint8_t ran;             /* named by a switch (or etl_sched_see) since the instance was made */
} mthr;

typedef struct mcpu {
    etl_cswitch prev;        /* s_i, the last switch (valid with has_prev) */
    etl_sched_row row;       /* the row s_i opened */
    uint64_t gen;            /* the model's gen when row.new_thread was looked up */
    bool has_prev;
    uint32_t head_tid;       /* before the first switch: the old thread it names (read ahead), UINT32_MAX unknown */
    bool gaps_read;          /* gaps: etl_reader_cpu_gaps's, read at the CPU's first switch */
    etl_gap_cursor gaps;
    bool dropped;            /* a switch of this CPU was dropped since prev (its time went back): who ran is lost */
    bool skip_valid;         /* skip_next: the first skip at prev's time or later, when skip_count were known */
    uint64_t skip_next;
    size_t skip_count;
} mcpu;

struct etl_sched {
    etl_clock clock;
    etl_sched_options opts;
    etl_sched_stats st;
    bool oom;                /* an allocation failed: something was left out uncounted (etl_sched_status) */
    mcpu *cpus;
    unsigned ncpu;
    etl_sched_thread *thr;
    mthr *live;              /* by instance, valid below nlive: only a model pushed switches or readies needs it */
    size_t nlive;
    size_t nthr, capthr;
    etl_sched_process *proc;
    size_t nproc, capproc;
    etl_idmap tid_map;       /* TID -> current instance, for TIDs from DIRECT_TIDS on */
    uint32_t *direct;        /* TID -> current instance below ndirect (ETL_IDMAP_EMPTY: none): no hashing */
    size_t ndirect;
    uint64_t gen;            /* instances made so far: a TID's lookup holds while it has not moved */
    etl_idmap pid_map;       /* PID -> current instance */
    char *names;
    size_t nnames, capnames;
    uint64_t last_ts;
    bool restarts_new;       /* every Start of a started thread makes an instance (etl_sched_restarts_new) */
    bool gaps;               /* the file misses buffers (etl_sched_options.reader) */
    /*
     * Where any CPU's records may be lost, for a thread's P and R (lost_between): a missing
     * buffer's spans on every CPU merged (allgaps), the earliest CPU end past which its records are
     * lost (known_min), and the latest end of a slice that spanned records passed over (lost_hi).
     */
    etl_ts_span *allgaps;
    size_t nallgaps;
    uint64_t known_min;
    uint64_t lost_hi;
    uint64_t rows_lost;      /* etl_sched_rows_lost */
    unsigned ndropped;       /* CPUs whose open slice lost a switch dropped for its time (mcpu.dropped) */
    uint64_t readies;        /* ReadyThread events pushed: the trace logs them (could_run) */
    char scratch[1024];
};

/* The name offset of an empty ImageFileName: "" (0 is no name: "Unknown"). */
#define NAME_EMPTY 1u

static inline int64_t ns_of(const etl_sched *m, uint64_t ts) { return etl_clock_ns(&m->clock, ts); }

static uint32_t intern(etl_sched *m, const char *s, size_t n)
{
    if (n == 0) return 0;
    if (m->nnames + n + 1 > ETL_SCHED_MAX_NAME_BYTES) {
        m->st.over_limit++;
        return 0;
    }
    if (m->nnames + n + 1 > m->capnames) {
        size_t cap = m->capnames * 2;
        while (cap < m->nnames + n + 1) cap *= 2;
        if (cap > UINT32_MAX) return 0;
        char *p = realloc(m->names, cap);
        if (!p) {
            m->oom = true;
            return 0;
        }
        m->names = p;
        m->capnames = cap;
    }
    uint32_t off = (uint32_t)m->nnames;
    memcpy(m->names + off, s, n);
    m->names[off + n] = 0;
    m->nnames += n + 1;
    return off;
}

/*
 * A field's name now s (n bytes), its old one at cur: the same offset when the name
 * is the same, the old place when the new name fits in it (each offset belongs to one
 * field; a shorter name leaves the rest zero, so that its room is still known: every
 * name but the shared empty one is nonempty), else a new one. A trace renaming a
 * thread over and over costs no memory.
 */
static uint32_t rename_to(etl_sched *m, uint32_t cur, const char *s, size_t n)
{
    if (cur && n) {
        size_t old = strlen(m->names + cur), room = old;
        if (old == n && memcmp(m->names + cur, s, n) == 0) return cur;
        while (old && cur + room + 1 < m->nnames && m->names[cur + room + 1] == 0) room++;
        if (old && n <= room) {
            memcpy(m->names + cur, s, n);
            memset(m->names + cur + n, 0, room - n + 1);
            return cur;
        }
    }
    return intern(m, s, n);
}

static uint32_t intern_utf16(etl_sched *m, uint32_t cur, const etl_kstr *k)
{
    if (!k->text.n) return 0;
    etl_utf16_to_utf8(k->text, m->scratch, sizeof m->scratch);
    return rename_to(m, cur, m->scratch, strlen(m->scratch));
}

/* ANSI bytes as Latin-1, the reader's convention for ImageFileName. */
static uint32_t intern_ansi(etl_sched *m, uint32_t cur, const etl_kstr *k)
{
    return rename_to(m, cur, m->scratch, etl_latin1_to_utf8(k->text, m->scratch, sizeof m->scratch));
}

static uint32_t new_process(etl_sched *m, uint32_t pid, uint64_t ts)
{
    if (m->nproc >= ETL_SCHED_MAX_INSTANCES) {
        /* Left out: the PID names no process from here on (its events count here, each). */
        m->st.over_limit++;
        etl_idmap_remove(&m->pid_map, pid);
        return ETL_SCHED_NONE;
    }
    if (m->nproc == m->capproc) {
        size_t cap = m->capproc ? m->capproc * 2 : 64;
        etl_sched_process *p = realloc(m->proc, cap * sizeof *p);
        if (!p) {
            m->oom = true;
            return ETL_SCHED_NONE;
        }
        m->proc = p;
        m->capproc = cap;
    }
    uint32_t i = (uint32_t)m->nproc++;
    memset(&m->proc[i], 0, sizeof m->proc[i]);
    m->proc[i].pid = pid;
    m->proc[i].start_ts = ts;
    if (etl_idmap_put(&m->pid_map, pid, i) != ETL_OK) m->oom = true;
    m->st.processes++;
    return i;
}

/* Instance i's live state, zeroed on first use (with those before it). */
static mthr *live_at(etl_sched *m, uint32_t i)
{
    if (i >= m->nlive) {
        memset(m->live + m->nlive, 0, (i + 1 - m->nlive) * sizeof *m->live);
        m->nlive = i + 1;
    }
    return &m->live[i];
}

/* TIDs below this are looked up in an array (4 MiB at most): Windows hands out small ones. */
#define DIRECT_TIDS (1u << 20)

static inline uint32_t tid_get(const etl_sched *m, uint32_t tid)
{
    return tid < m->ndirect ? m->direct[tid] : tid < DIRECT_TIDS ? ETL_IDMAP_EMPTY : etl_idmap_get(&m->tid_map, tid);
}

static bool tid_put(etl_sched *m, uint32_t tid, uint32_t i)
{
    if (tid >= DIRECT_TIDS) {
        if (etl_idmap_put(&m->tid_map, tid, i) == ETL_OK) return true;
        m->oom = true;
        return false;
    }
    if (tid >= m->ndirect) {
        size_t n = m->ndirect ? m->ndirect : 4096;
        while (n <= tid) n *= 2;
        uint32_t *d = realloc(m->direct, n * sizeof *d);
        if (!d) {
            m->oom = true;
            return false;
        }
        for (size_t k = m->ndirect; k < n; k++) d[k] = ETL_IDMAP_EMPTY;
        m->direct = d;
        m->ndirect = n;
    }
    m->direct[tid] = i;
    return true;
}

static uint32_t new_thread(etl_sched *m, uint32_t tid, uint64_t ts)
{
    if (m->nthr >= ETL_SCHED_MAX_INSTANCES) {
        /* Left out: the TID names no thread from here on (its events count here, each). */
        m->st.over_limit++;
        if (tid_get(m, tid) != ETL_IDMAP_EMPTY) {
            if (tid < m->ndirect) m->direct[tid] = ETL_IDMAP_EMPTY;
            else etl_idmap_remove(&m->tid_map, tid);
            m->gen++; /* the CPUs' cached lookups of it no longer hold */
        }
        return ETL_SCHED_NONE;
    }
    if (m->nthr == m->capthr) {
        size_t cap = m->capthr ? m->capthr * 2 : 256;
        etl_sched_thread *t = realloc(m->thr, cap * sizeof *t);
        if (t) m->thr = t;
        mthr *l = realloc(m->live, cap * sizeof *l);
        if (l) m->live = l;
        if (!t || !l) {
            m->oom = true;
            return ETL_SCHED_NONE;
        }
        m->capthr = cap;
    }
    uint32_t i = (uint32_t)m->nthr++;
    memset(&m->thr[i], 0, sizeof m->thr[i]);
    m->thr[i].tid = tid;
    m->thr[i].pid = UINT32_MAX;
    m->thr[i].process = ETL_SCHED_NONE;
    m->thr[i].start_ts = ts;
    tid_put(m, tid, i);
    m->gen++;
    m->st.threads++;
    return i;
}

/* The instance a TID names now; made (unknown) on first sight. TID 0 is the idle thread. */
static uint32_t thread_of(etl_sched *m, uint32_t tid, uint64_t ts)
{
    if (tid == 0) return ETL_SCHED_IDLE;
    uint32_t i = tid_get(m, tid);
    if (i != ETL_IDMAP_EMPTY) return i;
    i = new_thread(m, tid, ts);
    if (i != ETL_SCHED_NONE) m->st.unknown_threads++;
    return i;
}

static mcpu *cpu_at(etl_sched *m, unsigned c)
{
    if (c >= m->ncpu) {
        if (c >= ETL_SCHED_MAX_CPUS) return NULL;
        mcpu *p = realloc(m->cpus, (c + 1u) * sizeof *p);
        if (!p) {
            m->oom = true;
            return NULL;
        }
        memset(p + m->ncpu, 0, (c + 1u - m->ncpu) * sizeof *p);
        for (unsigned i = m->ncpu; i <= c; i++) p[i].head_tid = UINT32_MAX; /* not read ahead: unknown, not idle */
        m->cpus = p;
        m->ncpu = c + 1u;
    }
    return &m->cpus[c];
}

/* Whether the reader passed over records of CPU cpu after one at from or later, before t (etl_reader_cpu_skipped). */
static inline bool skipped(const etl_sched *m, unsigned cpu, uint64_t from, uint64_t t)
{
    const etl_reader *r = m->opts.reader;
    return r && etl_reader_any_skipped(r) && etl_reader_cpu_skipped(r, cpu, from, t);
}

/* Whether a missing buffer may have held records of CPU cpu's slice (si, t) (etl_gap_spans, read at first use). */
static inline bool missing_in(const etl_sched *m, mcpu *c, unsigned cpu, uint64_t si, uint64_t t)
{
    if (!m->gaps) return false;
    if (!c->gaps_read) c->gaps.gap = etl_reader_cpu_gaps(m->opts.reader, cpu, &c->gaps.n), c->gaps_read = true;
    return etl_gap_spans(&c->gaps, si, t);
}

/* Whether CPU cpu's slice (si, t) spans a gap of its records: a missing buffer's, or records the reader passed over. */
static inline bool spans_gap(const etl_sched *m, mcpu *c, unsigned cpu, uint64_t si, uint64_t t)
{
    return missing_in(m, c, cpu, si, t) || skipped(m, cpu, si, t);
}

/*
 * Whether records of some CPU may have been lost in (a, b), b the model's time now: a switch of
 * a thread or a ReadyThread of it among them. Which CPU a missing buffer was is not known and a
 * thread runs on any CPU, so every CPU's losses count: its missing buffers' spans, its end when
 * its last buffers are missing, the slices already closed across a loss (lost_hi), and the open
 * slice of each CPU up to b.
 */
static bool lost_between(etl_sched *m, uint64_t a, uint64_t b)
{
    if (m->lost_hi > a || m->ndropped) return true;
    if (m->gaps) {
        if (m->known_min < b) return true;
        size_t lo = 0, hi = m->nallgaps; /* the first span that ends after a */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (m->allgaps[mid].hi <= a) lo = mid + 1;
            else hi = mid;
        }
        if (lo < m->nallgaps && m->allgaps[lo].lo < b) return true;
    }
    const etl_reader *r = m->opts.reader;
    if (!r || !etl_reader_any_skipped(r)) return false;
    if (atomic_load_explicit(&r->skips_lost, memory_order_relaxed)) return true;
    size_t nskips = etl_reader_skip_count(r);
    for (unsigned k = 0; k < m->ncpu; k++) {
        mcpu *c = &m->cpus[k];
        /* the first skip of its open slice, asked again when the slice or the skips known change */
        if (!c->skip_valid || c->skip_count != nskips) {
            c->skip_next = etl_reader_cpu_next_skip(r, k, c->has_prev ? c->prev.ts : 0);
            c->skip_count = nskips;
            c->skip_valid = true;
        }
        if (c->skip_next < b) return true;
    }
    return false;
}

static int span_by_lo(const void *a, const void *b)
{
    const etl_ts_span *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * Until when a CPU with no buffer in the file may have had records (UINT64_MAX: any time). They can lie only in
 * missing buffers. When every one is between buffers found (no cut end, numbered), a CPU that logged after the
 * latest flush beside them would have a later buffer (its last is flushed at the session's stop): found, which it
 * has not, or missing, which none is. Buffers flushed at the stop need not be in SequenceNumber order: any found
 * within a processor count after a missing one may be flushed as late, so the latest flush up to there bounds it.
 * A CPU the trace never used has none: it no longer makes every time lost (288d01b's known_until 0).
 */
static uint64_t bufferless_until(const etl_reader *r)
{
    if (!r->nholes || r->missing_last == UINT64_MAX) return UINT64_MAX;
    uint64_t top = 0, reach = 0, until = 0, slack = r->hdr.num_processors > r->ncpu ? r->hdr.num_processors : r->ncpu;
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip && r->bufs[i].seq > top) top = r->bufs[i].seq;
    if (r->missing_last > top) return UINT64_MAX; /* a cut end: its buffers may be among the lost last ones */
    for (size_t i = 0; i < r->nholes; i++)
        if (r->holes[i].to + 1 + slack > reach) reach = r->holes[i].to + 1 + slack;
    for (size_t i = 0; i < r->nbufs; i++) {
        const etl_buf_ent *b = &r->bufs[i];
        if (b->skip || b->seq > reach) continue;
        uint64_t f = etl_buf_flush(r, b);
        if (f == UINT64_MAX) return UINT64_MAX; /* a flush that is no session time bounds nothing */
        if (f > until) until = f;
    }
    return until;
}

static bool has_buffer(const etl_reader *r, unsigned cpu)
{
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip && r->bufs[i].cpu == cpu) return true;
    return false;
}

/* allgaps and known_min of a file that misses buffers (ncpu: the CPUs its buffers name). */
static void gather_losses(etl_sched *m, unsigned ncpu)
{
    const etl_reader *r = m->opts.reader;
    m->known_min = UINT64_MAX;
    size_t total = 0, n;
    bool bufferless = false; /* a CPU below the last one with buffers has none */
    for (unsigned k = 0; k < ncpu; k++) {
        if (!has_buffer(r, k)) {
            bufferless = true;
            continue;
        }
        etl_reader_cpu_gaps(r, k, &n);
        total += n;
        uint64_t until = etl_reader_cpu_known_until(r, k);
        if (until < m->known_min) m->known_min = until;
    }
    uint64_t lost_to = bufferless ? bufferless_until(r) : 0;
    if (lost_to == UINT64_MAX) m->known_min = 0; /* its records, if any, may lie anywhere */
    else if (lost_to) total++;                    /* its records, if any, lie in (0, lost_to) */
    if (!total) return;
    m->allgaps = malloc(total * sizeof *m->allgaps);
    if (!m->allgaps) {
        m->known_min = 0; /* where they are is not known: every time may have lost records */
        return;
    }
    for (unsigned k = 0; k < ncpu; k++) {
        const etl_ts_span *g = etl_reader_cpu_gaps(r, k, &n);
        if (n) memcpy(m->allgaps + m->nallgaps, g, n * sizeof *g);
        m->nallgaps += n;
    }
    if (lost_to && lost_to != UINT64_MAX) m->allgaps[m->nallgaps++] = (etl_ts_span){0, lost_to};
    qsort(m->allgaps, m->nallgaps, sizeof *m->allgaps, span_by_lo);
    size_t w = 0; /* merged: each span's hi then only rises, for the search */
    for (size_t i = 0; i < m->nallgaps; i++) {
        if (w && m->allgaps[i].lo < m->allgaps[w - 1].hi) {
            if (m->allgaps[i].hi > m->allgaps[w - 1].hi) m->allgaps[w - 1].hi = m->allgaps[i].hi;
        } else {
            m->allgaps[w++] = m->allgaps[i];
        }
    }
    m->nallgaps = w;
}

/* A slice whose thread is not known: nor how it came in (its readying, its wait). */
static void forget_thread(etl_sched_row *row)
{
    row->flags &= ~(ETL_ROW_PREV | ETL_ROW_READY_TIME | ETL_ROW_READIED | ETL_ROW_WAITED);
    row->new_tid = UINT32_MAX;
    row->new_thread = ETL_SCHED_NONE;
}

static bool is_waiting(uint8_t state) { return state == 5 || state == 6 || state == 9; }
static bool is_runnable(uint8_t state) { return state == 1 || state == 2 || state == 3 || state == 7; }

static void emit(etl_sched *m, etl_sched_row *row)
{
    /*
     * Raw times are ordered as unsigned, canonical ns as the signed LARGE_INTEGERs they are: on a
     * hostile file (times past 2^63) the two disagree. Keep every duration non-negative regardless.
     */
    if (row->nso < row->si) row->nso = row->si;
    if ((row->flags & ETL_ROW_READY_TIME) && row->rt > row->si) row->rt = row->si;
    if ((row->flags & ETL_ROW_PREV) && row->lso > row->si) row->lso = row->si;
    if ((row->flags & ETL_ROW_READY_TIME) && (row->flags & ETL_ROW_PREV) && row->lso > row->rt) row->lso = row->rt;
    m->st.rows++;
    if (m->opts.on_row) m->opts.on_row(m->opts.ctx, row);
}

/* Fills the switch-in half of a row: X, SI, and from X's state P, RT and R. */
static void switch_in(etl_sched *m, etl_sched_row *row, uint32_t x, uint64_t t)
{
    row->new_thread = x;
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return;
    mthr *l = live_at(m, x);
    l->ran = 1;
    uint32_t ncand = l->ncand;
    if (l->has_in && ncand && l->r_ts <= l->in_ts) ncand = 0; /* I_prev < t(R) */
    if (ncand && l->r_ts > t) ncand = 0;                       /* t(R) <= SI, even out of order */
    if (l->has_out && l->out_ts > t) l->has_out = 0;           /* a switch-out after SI is no P */
    /*
     * Records lost since X's previous switch-in may have held a later ReadyThread of X, or a
     * switch-in that makes the candidates stale: R is not known. Lost since P, a later switch-out
     * of X: P is not known either (it would read as an older wait, or as ready all along).
     */
    uint64_t from_r = l->has_in ? l->in_ts : l->has_out ? l->out_ts : m->thr[x].start_ts;
    bool lost_r = lost_between(m, from_r, t);
    bool lost_p = lost_r && (!l->has_out || lost_between(m, l->out_ts, t));
    if (lost_p) l->has_out = 0;
    if (lost_r) ncand = 0;
    if (lost_r && !(l->has_out && (l->out_known & ETL_CSW_STATE) && is_runnable(l->out_state))) {
        row->flags |= ETL_ROW_LOST;
        m->rows_lost++;
    }
    if (l->has_out) {
        row->flags |= ETL_ROW_PREV;
        row->lso_ts = l->out_ts;
        row->lso = ns_of(m, l->out_ts);
        row->prev_known = l->out_known;
        row->prev_state = l->out_state;
        row->prev_wait_reason = l->out_reason;
        row->prev_wait_mode = l->out_mode;
        row->prev_out_priority = l->out_priority;
    }
    bool runnable = l->has_out && (l->out_known & ETL_CSW_STATE) && is_runnable(l->out_state);
    if (l->has_out && (l->out_known & ETL_CSW_STATE) && is_waiting(l->out_state)) row->flags |= ETL_ROW_WAITED;
    if (lost_p || (lost_r && !runnable)) {
        /* RT unknown: not counted as a wait or a latency */
    } else if (runnable) {
        row->flags |= ETL_ROW_READY_TIME;
        row->rt_ts = l->out_ts;
        row->ready_while_runnable = ncand;
        m->st.ready_while_runnable += ncand;
    } else if (ncand) {
        row->flags |= ETL_ROW_READY_TIME | ETL_ROW_READIED;
        row->rt_ts = l->has_out && l->out_ts > l->r_ts ? l->out_ts : l->r_ts;
        row->ready = l->r;
        row->ready_cpu = l->r_cpu;
        row->readier_tid = l->r_readier_tid;
        row->readier_thread = l->r_readier_thread;
        row->first_readier_tid = l->first_readier_tid;
        row->ready_ts = l->r_ts;
        row->ready_ns = ns_of(m, l->r_ts);
    }
    if (row->flags & ETL_ROW_READY_TIME) row->rt = ns_of(m, row->rt_ts);
    l->ncand = 0;
    l->has_in = 1;
    l->in_ts = t;
}

/* Records X's switch-out at e (P for its next switch-in). */
static void switch_out(etl_sched *m, uint32_t x, const etl_cswitch *e)
{
    if (x == ETL_SCHED_IDLE || x == ETL_SCHED_NONE) return;
    mthr *l = live_at(m, x);
    l->ran = 1;
    l->has_out = 1;
    l->out_ts = e->ts;
    l->out_known = e->known;
    l->out_state = e->old_state;
    l->out_reason = e->old_wait_reason;
    l->out_mode = e->old_wait_mode;
    l->out_priority = e->old_priority;
}

/*
 * Whether thread y can have been running when a switch named it its old thread against the plan: not when it
 * went out waiting and no ReadyThread readied it since (in a trace that logs them: a thread is readied before
 * it runs again). A last-moment change switches in a ready thread; an OldThreadId that names a waiting one is
 * damage, and its "switch-out" is no previous switch-out of y.
 */
static bool could_run(const etl_sched *m, uint32_t y)
{
    if (y == ETL_SCHED_IDLE || y == ETL_SCHED_NONE || !m->readies || y >= m->nlive) return true;
    const mthr *l = &m->live[y];
    /* switch_in's rule (I_prev < t(R)): a ReadyThread before its own waiting switch-out, or in its tick, readies it
     * too (RT = max(t(R), LSO)) */
    bool readied = l->ncand && (!l->has_in || l->r_ts > l->in_ts);
    return !(l->has_out && (l->out_known & ETL_CSW_STATE) && is_waiting(l->out_state) && !readied);
}

static void on_switch(etl_sched *m, const etl_cswitch *e)
{
    mcpu *c = cpu_at(m, e->cpu);
    if (!c) {
        if (!m->oom) m->st.over_limit++; /* a CPU no machine has: told, not dropped unseen */
        return;
    }
    m->st.switches++;
    uint64_t t = e->ts;
    bool old_known = (e->known & ETL_CSW_OLD_TID) != 0;
    bool prev_unknown = false; /* the slice this switch ends is of no known thread */
    bool out_real = true;      /* e is a switch-out of its old thread (not one that cannot have run) */
    uint32_t old = ETL_SCHED_NONE;
    if (old_known) {
        /* Usually the thread going out is the one the last switch brought in, looked up then. */
        const etl_sched_row *r = &c->row;
        old = c->has_prev && r->new_tid == e->old_tid && r->new_thread != ETL_SCHED_NONE && c->gen == m->gen
                  ? r->new_thread
                  : thread_of(m, e->old_tid, t);
    }
    if (c->has_prev) {
        etl_sched_row *row = &c->row;
        if (old_known && row->new_tid != e->old_tid) {
            if (row->new_thread != ETL_SCHED_NONE || row->new_tid != UINT32_MAX) {
                /* Planned one thread, another ran: keep the observed one, forget the planned one's readying. */
                row->flags = (row->flags & ~(ETL_ROW_PREV | ETL_ROW_READY_TIME | ETL_ROW_READIED | ETL_ROW_WAITED)) |
                             ETL_ROW_MISMATCH;
                m->st.cswitch_chain_mismatch++;
                out_real = could_run(m, old);
                /* In a file that misses buffers, most likely one of this CPU's: who ran is not known. */
                row->new_tid = m->gaps ? UINT32_MAX : e->old_tid;
                row->new_thread = m->gaps ? ETL_SCHED_NONE : old;
            }
            /*
             * Else the new thread was not recorded: the compact chain is broken, switches between
             * the two were lost (kernel-events.md 6.6), so this switch's old thread ran only from one
             * of them: the slice is unknown, as across a lost buffer, never this thread's.
             */
        }
        if (c->dropped) m->ndropped--;
        if (c->dropped || spans_gap(m, c, e->cpu, row->si_ts, t)) forget_thread(row);
        prev_unknown = row->new_thread == ETL_SCHED_NONE && row->new_tid == UINT32_MAX;
        if (prev_unknown && t > m->lost_hi) m->lost_hi = t; /* switches lost in it, of any thread */
        row->nso_ts = t;
        row->nso = ns_of(m, t);
        row->out = e;
        row->in = &c->prev;
        emit(m, row);
    } else if (!m->opts.complete_only) {
        /* The head slice [t0, first switch) belongs to the thread this switch takes off the CPU. */
        etl_sched_row head;
        memset(&head, 0, sizeof head);
        head.flags = ETL_ROW_HEAD;
        head.cpu = e->cpu;
        /* as percpu: no cursor moved; skipped records from the trace's start (those before t0 count too) */
        bool lost = t >= m->clock.t0 && (missing_in(m, c, e->cpu, m->clock.t0, t) || skipped(m, e->cpu, 0, t));
        head.new_tid = old_known && !lost ? e->old_tid : UINT32_MAX;
        head.new_thread = lost ? ETL_SCHED_NONE : old;
        if (lost && t > m->lost_hi) m->lost_hi = t;
        head.old_tid = UINT32_MAX;
        head.old_thread = ETL_SCHED_NONE;
        head.si_ts = m->clock.t0;
        head.si = 0;
        head.nso_ts = t;
        head.nso = ns_of(m, t);
        head.out = e;
        if (t >= m->clock.t0) emit(m, &head);
    }
    if (out_real) switch_out(m, old, e);

    /* Open the row of the thread e switches in. */
    etl_sched_row *row = &c->row;
    etl_zero_small(row, sizeof *row);
    row->cpu = e->cpu;
    row->old_tid = old_known ? e->old_tid : UINT32_MAX;
    row->old_thread = old;
    row->si_ts = t;
    row->si = ns_of(m, t);
    row->prev_switch = c->has_prev ? ns_of(m, c->prev.ts) : row->si;
    if (!c->has_prev || prev_unknown) row->flags = ETL_ROW_OLD_SI_UNKNOWN;
    if (e->known & ETL_CSW_NEW_TID) {
        row->new_tid = e->new_tid;
        switch_in(m, row, thread_of(m, e->new_tid, t), t);
        c->gen = m->gen;
    } else {
        row->new_tid = UINT32_MAX;
        row->new_thread = ETL_SCHED_NONE;
    }
    etl_copy_small(&c->prev, e, sizeof c->prev);
    c->has_prev = true;
    c->dropped = false;
    c->skip_valid = false;
}

static void on_ready(etl_sched *m, const etl_sched_event *ev)
{
    uint32_t tid = ev->u.ready.thread_id;
    if (tid == 0) return;
    uint32_t x = thread_of(m, tid, ev->ts);
    if (x == ETL_SCHED_NONE) return;
    mcpu *c = ev->cpu < m->ncpu ? &m->cpus[ev->cpu] : NULL;
    uint32_t rtid = UINT32_MAX, rthr = ETL_SCHED_NONE;
    /* Its CPU's switches lost since the last one read: who ran there (readied) is not known. */
    if (c && c->has_prev && spans_gap(m, c, ev->cpu, c->prev.ts, ev->ts)) c = NULL;
    if (c && !c->has_prev && ev->ts >= m->clock.t0 &&
        (missing_in(m, c, ev->cpu, m->clock.t0, ev->ts) || skipped(m, ev->cpu, 0, ev->ts)))
        c = NULL;
    if (c && c->has_prev && c->row.new_thread != ETL_SCHED_NONE) {
        rtid = c->row.new_tid;
        rthr = c->row.new_thread;
    } else if (c && !c->has_prev && c->head_tid != UINT32_MAX) {
        /* Before the CPU's first switch: the thread it switches out ran (the head slice's, spec §1) */
        rtid = c->head_tid;
        rthr = thread_of(m, rtid, ev->ts);
        if (rthr == ETL_SCHED_NONE) rtid = UINT32_MAX;
    }
    m->readies++;
    if (m->opts.on_ready) {
        etl_sched_ready r = {ev->ts, ns_of(m, ev->ts), ev->cpu, ev->u.ready, x, rtid, rthr};
        m->opts.on_ready(m->opts.ctx, &r);
    }
    mthr *l = live_at(m, x);
    if (l->ncand == 0 || (l->has_in && l->r_ts <= l->in_ts)) {
        l->ncand = 0;
        l->first_readier_tid = rtid;
    }
    l->ncand++;
    l->r_ts = ev->ts;
    l->r = ev->u.ready;
    l->r_cpu = ev->cpu;
    l->r_readier_tid = rtid;
    l->r_readier_thread = rthr;
}

/*
 * Start/DCStart make a new instance unless the current one was only seen, never started
 * (or a DCStart restates it). A Start of a thread started, not ended and never switched
 * since it was made is damage, the same thread (a thread runs before it ends, so no End
 * was lost): a new instance only once it ran, as a reused TID whose End was lost.
 */
static uint32_t start_thread(etl_sched *m, uint32_t tid, uint32_t pid, uint64_t ts, bool dc)
{
    uint32_t i = tid_get(m, tid);
    if (i != ETL_IDMAP_EMPTY) {
        etl_sched_thread *t = &m->thr[i];
        bool same = !t->started || (dc && !t->ended && t->pid == pid);
        if (same) return i;
        if (!t->ended && !m->restarts_new && !live_at(m, i)->ran) {
            m->st.repeated_starts++;
            return i;
        }
    }
    return new_thread(m, tid, ts);
}

static void on_thread(etl_sched *m, const etl_sched_event *ev)
{
    const etl_thread *th = &ev->u.thread;
    if (!(th->known & ETL_THR_IDS) || th->thread_id == 0) return;
    uint32_t tid = th->thread_id;
    bool start = ev->hook == ETL_HOOK_THREAD_START || ev->hook == ETL_HOOK_THREAD_DC_START;
    uint32_t i = start ? start_thread(m, tid, th->process_id, ev->ts, ev->hook == ETL_HOOK_THREAD_DC_START)
                       : thread_of(m, tid, ev->ts);
    if (i == ETL_SCHED_NONE || i == ETL_SCHED_IDLE) return;
    etl_sched_thread *t = &m->thr[i];
    if (start && !t->started) {
        t->started = 1;
        if (ev->ts < t->start_ts) t->start_ts = ev->ts;
    }
    if (t->pid != th->process_id) {
        t->pid = th->process_id;
        uint32_t p = etl_idmap_get(&m->pid_map, th->process_id);
        t->process = p != ETL_IDMAP_EMPTY ? p : new_process(m, th->process_id, ev->ts);
    }
    if (th->known & ETL_THR_PRIORITIES) t->base_priority = th->base_priority;
    if ((th->known & ETL_THR_NAME) && th->thread_name.text.n) t->name = intern_utf16(m, t->name, &th->thread_name);
    if (ev->hook == ETL_HOOK_THREAD_END) {
        t->ended = 1;
        t->end_ts = ev->ts;
    }
}

static void on_set_name(etl_sched *m, const etl_sched_event *ev)
{
    if (ev->u.set_name.thread_id == 0) return;
    uint32_t i = thread_of(m, ev->u.set_name.thread_id, ev->ts);
    if (i == ETL_SCHED_NONE) return;
    m->thr[i].name = intern_utf16(m, m->thr[i].name, &ev->u.set_name.thread_name);
}

/*
 * A FILETIME (100 ns since 1601) on the session clock, as kernel-events.md §4 converts:
 * ts = t0 + (FILETIME - StartTime) * ticks_per_sec / 10^7, floored. False for a time the
 * clock cannot hold (before its tick 0, past 2^63 ticks) or a clock that cannot say.
 */
static bool filetime_ts(const etl_clock *c, uint64_t filetime, uint64_t *ts)
{
    if (c->ticks_per_sec == 0 || c->ticks_per_sec >= (UINT64_C(1) << 62)) return false; /* the product fits 2^127 */
    __int128 d = ((__int128)filetime - (__int128)c->start_time) * (__int128)c->ticks_per_sec;
    __int128 q = d / 10000000;
    if (d % 10000000 != 0 && d < 0) q--;
    __int128 t = (__int128)(int64_t)c->t0 + q;
    if (t < 0 || t > INT64_MAX) return false;
    *ts = (uint64_t)t;
    return true;
}

static void on_process(etl_sched *m, const etl_sched_event *ev)
{
    const etl_process *p = &ev->u.process;
    if (!(p->known & ETL_PROC_IDS)) return;
    uint32_t pid = p->process_id;
    bool start = ev->hook == ETL_HOOK_PROCESS_START || ev->hook == ETL_HOOK_PROCESS_DC_START;
    uint32_t i = etl_idmap_get(&m->pid_map, pid);
    if (start) {
        bool dc = ev->hook == ETL_HOOK_PROCESS_DC_START;
        /* An instance that ended is over (known only from its End or a Defunct too): its PID was reused. */
        if (i == ETL_IDMAP_EMPTY || m->proc[i].ended || (m->proc[i].started && !dc))
            i = new_process(m, pid, ev->ts);
        if (i == ETL_SCHED_NONE) return;
        if (!m->proc[i].started) {
            m->proc[i].started = 1;
            if (ev->ts < m->proc[i].start_ts) m->proc[i].start_ts = ev->ts;
        }
    } else if (i == ETL_IDMAP_EMPTY) {
        i = new_process(m, pid, ev->ts);
        if (i == ETL_SCHED_NONE) return;
    }
    etl_sched_process *pr = &m->proc[i];
    if ((p->known & ETL_PROC_IMAGE) && p->image_file_name.text.n) pr->name = intern_ansi(m, pr->name, &p->image_file_name);
    else if ((p->known & ETL_PROC_IMAGE) && !pr->name) pr->name = NAME_EMPTY; /* "", not the unknown process */
    if ((p->known & ETL_PROC_COMMAND_LINE) && p->command_line.text.n)
        pr->command_line = intern_utf16(m, pr->command_line, &p->command_line);
    if (ev->hook == ETL_HOOK_PROCESS_END) {
        pr->ended = 1;
        pr->end_ts = ev->ts;
    } else if (ev->hook == ETL_HOOK_PROCESS_DEFUNCT && !pr->ended) {
        /*
         * A Defunct is a rundown's listing of a process object that has exited but is still
         * referenced (a zombie): it ended at or before the rundown, at its ExitTime (v5) when
         * given, never later than an End already seen (that one is kept). One known only from
         * the Defunct lived until then: its first sight is no later than its end.
         */
        uint64_t end = ev->ts, x;
        if ((p->known & ETL_PROC_EXIT_TIME) && filetime_ts(&m->clock, p->exit_time, &x) && x < end) end = x;
        if (pr->started && end < pr->start_ts) end = pr->start_ts; /* the clocks' disagreement, not an end before its start */
        if (!pr->started && end < pr->start_ts) pr->start_ts = end;
        pr->ended = 1;
        pr->end_ts = end;
    }
}

/*
 * Each CPU's thread before its first switch, for the ReadyThreads logged there meanwhile: the
 * old thread that switch names (a CSwitch's OldThreadId, a compact batch's first record's),
 * read ahead in the CPU's first HEAD_BUFFERS buffers; unknown past them, or without a reader.
 * Out of memory for the read-ahead is the model's (m->oom): a readier it would have named is not Unknown.
 */
#define HEAD_BUFFERS 16u

static void read_heads(etl_sched *m)
{
    etl_reader *r = (etl_reader *)m->opts.reader; /* read only: an iterator of its own */
    if (!r) return;
    unsigned n = etl_reader_cpu_count(r) < m->ncpu ? etl_reader_cpu_count(r) : m->ncpu;
    for (unsigned cpu = 0; cpu < n; cpu++) {
        etl_iter *it;
        etl_status st = etl_iter_open_cpu(r, cpu, NULL, NULL, &it);
        if (st != ETL_OK) {
            m->oom = m->oom || st == ETL_E_NOMEM;
            return;
        }
        const etl_record *rec;
        uint32_t buffers = 0, last = UINT32_MAX;
        while ((st = etl_iter_next_ref(it, &rec)) == ETL_OK) {
            if (rec->buffer_index != last && ++buffers > HEAD_BUFFERS) break;
            last = rec->buffer_index;
            uint16_t hook;
            if (!etl_record_kernel_hook(rec, &hook)) continue;
            if (hook == ETL_HOOK_CSWITCH) {
                etl_cswitch cs;
                memset(&cs, 0, sizeof cs);
                if (etl_cswitch_decode(rec->payload, rec->version, &cs) == ETL_OK && (cs.known & ETL_CSW_OLD_TID))
                    m->cpus[cpu].head_tid = cs.old_tid;
                break;
            }
            if (hook == ETL_HOOK_CSWITCH_BATCH) {
                etl_ccswap_walker w;
                etl_ccswap_record cr;
                if (etl_ccswap_open(&w, rec->payload) != ETL_OK) continue; /* a batch too short: the source's too */
                if (etl_ccswap_next(&w, &cr) == ETL_OK) m->cpus[cpu].head_tid = cr.old_tid;
                break;
            }
        }
        if (st == ETL_E_NOMEM) m->oom = true; /* a buffer not expanded for want of memory (etl_iter_next_ref) */
        etl_iter_close(it);
    }
}

etl_status etl_sched_open(const etl_clock *clock, unsigned ncpu, const etl_sched_options *opts,
                          etl_sched **out)
{
    *out = NULL;
    etl_sched *m = calloc(1, sizeof *m);
    if (!m) return ETL_E_NOMEM;
    m->clock = *clock;
    etl_opts_take(&m->opts, sizeof m->opts, opts);
    m->gaps = m->opts.reader && etl_reader_buffers_missing(m->opts.reader);
    if (m->gaps) gather_losses(m, m->opts.reader->ncpu);
    etl_idmap_init(&m->tid_map);
    etl_idmap_init(&m->pid_map);
    m->capnames = 4096;
    m->names = malloc(m->capnames);
    m->nnames = 2; /* offset 0: no name; 1: an empty one (NAME_EMPTY) */
    if (!m->names || (ncpu && !cpu_at(m, ncpu - 1))) {
        etl_sched_close(m);
        return ETL_E_NOMEM;
    }
    m->names[0] = m->names[1] = 0;
    read_heads(m);
    *out = m;
    return ETL_OK;
}

bool etl_sched_takes(const etl_sched *m, const etl_sched_event *ev)
{
    if (ev->kind != ETL_SCHED_SWITCH) return true;
    if (ev->u.sw.cpu >= ETL_SCHED_MAX_CPUS) return false;
    /* Out of order: a switch would break its CPU's chain; anything else is harmless. */
    const mcpu *c = ev->cpu < m->ncpu ? &m->cpus[ev->cpu] : NULL;
    return !(ev->ts < m->last_ts && c && c->has_prev && ev->ts < c->prev.ts);
}

etl_status etl_sched_push(etl_sched *m, const etl_sched_event *ev)
{
    if (ev->ts < m->last_ts) {
        m->st.time_backwards++;
        if (ev->kind == ETL_SCHED_SWITCH && ev->u.sw.cpu < ETL_SCHED_MAX_CPUS && !etl_sched_takes(m, ev)) {
            /* Its CPU's chain misses it: the slice it lies in is of no known thread, as across a lost record. */
            mcpu *c = &m->cpus[ev->cpu];
            if (!c->dropped) m->ndropped++;
            c->dropped = true;
            return ETL_OK;
        }
    } else {
        m->last_ts = ev->ts;
    }
    switch (ev->kind) {
    case ETL_SCHED_SWITCH: on_switch(m, &ev->u.sw); break;
    case ETL_SCHED_READY: on_ready(m, ev); break;
    case ETL_SCHED_THREAD: on_thread(m, ev); break;
    case ETL_SCHED_SET_NAME: on_set_name(m, ev); break;
    case ETL_SCHED_PROCESS: on_process(m, ev); break;
    default: break;
    }
    return ETL_OK;
}

etl_status etl_sched_finish(etl_sched *m, uint64_t end_ts)
{
    for (unsigned i = 0; i < m->ncpu; i++) {
        mcpu *c = &m->cpus[i];
        if (!c->has_prev) continue;
        c->has_prev = false;
        if (m->opts.complete_only) continue;
        etl_sched_row *row = &c->row;
        row->flags |= ETL_ROW_TAIL;
        uint64_t end = m->gaps ? etl_sched_cpu_end(m->opts.reader, i, end_ts) : end_ts;
        row->nso_ts = end > row->si_ts ? end : row->si_ts;
        row->nso = ns_of(m, row->nso_ts);
        /* Records after its last switch lost (skipped ones: any after it, the end's own time too). */
        if (c->dropped || missing_in(m, c, i, row->si_ts, row->nso_ts) || skipped(m, i, row->si_ts, UINT64_MAX))
            forget_thread(row);
        row->in = &c->prev;
        row->out = NULL;
        emit(m, row);
    }
    /* Readied threads that never switched in again. */
    for (size_t i = 0; i < m->nlive; i++) { /* those past nlive were never readied */
        mthr *l = &m->live[i];
        if (l->ncand && !(l->has_in && l->r_ts <= l->in_ts)) m->st.ready_unmatched++;
        l->ncand = 0;
    }
    return etl_sched_status(m);
}

etl_status etl_sched_status(const etl_sched *m) { return m->oom ? ETL_E_NOMEM : ETL_OK; }

void etl_sched_close(etl_sched *m)
{
    if (!m) return;
    free(m->cpus);
    free(m->thr);
    free(m->live);
    free(m->proc);
    free(m->names);
    free(m->allgaps);
    etl_idmap_free(&m->tid_map);
    free(m->direct);
    etl_idmap_free(&m->pid_map);
    free(m);
}

const etl_sched_stats *etl_sched_stats_get(const etl_sched *m) { return &m->st; }

uint64_t etl_sched_rows_lost(const etl_sched *m) { return m->rows_lost; }
uint64_t etl_sched_ready_events(const etl_sched *m) { return m->readies; }
unsigned etl_sched_cpu_count(const etl_sched *m) { return m->ncpu; }

const etl_sched_thread *etl_sched_threads(const etl_sched *m, size_t *n)
{
    *n = m->nthr;
    return m->thr;
}

const etl_sched_process *etl_sched_processes(const etl_sched *m, size_t *n)
{
    *n = m->nproc;
    return m->proc;
}

const char *etl_sched_names(const etl_sched *m) { return m->names; }

const etl_sched_thread *etl_sched_thread_at(const etl_sched *m, uint32_t index)
{
    return index < m->nthr ? &m->thr[index] : NULL;
}

const etl_sched_process *etl_sched_process_at(const etl_sched *m, uint32_t index)
{
    return index < m->nproc ? &m->proc[index] : NULL;
}

uint32_t etl_sched_thread_of(const etl_sched *m, uint32_t tid)
{
    if (tid == 0) return ETL_SCHED_IDLE;
    uint32_t i = tid_get(m, tid);
    return i == ETL_IDMAP_EMPTY ? ETL_SCHED_NONE : i;
}

const char *etl_sched_process_name(const etl_sched *m, uint32_t thread_index)
{
    if (thread_index == ETL_SCHED_IDLE) return "Idle";
    const etl_sched_thread *t = etl_sched_thread_at(m, thread_index);
    const etl_sched_process *p = t ? etl_sched_process_at(m, t->process) : NULL;
    return p && p->name ? m->names + p->name : "Unknown";
}

uint32_t etl_sched_see(etl_sched *m, uint32_t tid, uint64_t ts)
{
    uint32_t i = thread_of(m, tid, ts);
    if (i < ETL_SCHED_NONE) live_at(m, i)->ran = 1;
    return i;
}

void etl_sched_restarts_new(etl_sched *m, bool on) { m->restarts_new = on; }

uint64_t etl_sched_cpu_end(const etl_reader *r, unsigned cpu, uint64_t end_ts)
{
    uint64_t known = etl_reader_cpu_known_until(r, cpu);
    return known < end_ts ? known : end_ts;
}

uint64_t etl_sched_end_ts(const etl_reader *r, uint64_t last_record_ts)
{
    const etl_clock *c = etl_reader_clock(r);
    uint64_t end = last_record_ts > c->t0 ? last_record_ts : c->t0;
    /* EndTime on the session clock, when it lies after the last record (not a damaged one: the reader's). */
    uint64_t e = etl_reader_end_ts(r);
    return e > end ? e : end;
}

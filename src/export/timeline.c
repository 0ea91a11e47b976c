/*
 * timeline.c - the timelines: Perfetto protobuf (`etw_events` bundles) and ftrace
 * text, written as the switches and ReadyThreads come, in time order (spec
 * perfetto.md).
 *
 * Perfetto: each CPU has a buffer of encoded EtwTraceEvents; when it passes
 * BUNDLE_BYTES it becomes one TracePacket { timestamp, trusted_packet_sequence_id,
 * etw_events { cpu, event... } }. Names go in ProcessTree packets as the
 * Process / Thread / SetName events come (rundown entries at time 0, the trace
 * start), so nothing waits for the end. trace_processor sorts the whole file,
 * so packets of different CPUs may interleave in any order. Timestamps are the
 * canonical ns (one timeline, no clock snapshot).
 *
 * Writer rules (perfetto.md §4, §6): old and new thread ids always written (0
 * for idle); OldThreadState in field 8 when 0..7, else field 13; the wait
 * reason only in field 11; a field the record does not carry is left out,
 * except the thread ids and the state, written as all ones (like convert's
 * CSwitch events from compact batches): 4294967295 and 255.
 *
 * ftrace: `sched_switch`, `sched_blocked_reason` after a switch-out into a
 * wait, and `sched_waking` lines in the format of perfetto.md §7; comms are the
 * thread's name or else its process's image name, 15 bytes at most, without
 * spaces or '='; a thread id the record does not carry is 4294967295 (<...>),
 * as in the protobuf, never 0 (idle).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "etlkit/text.h"
#include "base/idmap.h"
#include "base/textsafe.h"
#include "pb.h"
#include "base/opts.h"
#include "export/timeline_internal.h"
#include "container/reader_internal.h"
#include "sched/model_priv.h"

#define BUNDLE_BYTES (32u << 10)
#define NAMES_BYTES (16u << 10)
#define MAX_CPUS 4096u
#define UNKNOWN_TID 0xFFFFFFFFu
#define UNKNOWN_STATE 255

typedef struct bytes {
    uint8_t *p;
    size_t n, cap;
} bytes;

typedef struct pcpu {
    bytes b;
    int64_t first_ns;
} pcpu;

/*
 * A CPU's unknown spans (etl_timeline_options.reader): where its records were lost, from its last
 * record before the loss (lo) to its next switch, the model's unknown slice. Raw times.
 */
typedef struct gcpu {
    uint64_t si;          /* the CPU's last switch written */
    uint64_t next_lo;     /* where its next unknown span starts, UINT64_MAX none known */
    uint64_t known_until; /* its records end here (etl_reader_cpu_known_until), UINT64_MAX to the end */
    uint32_t cur;         /* the thread that switch brought in (UNKNOWN_TID: not carried) */
    bool has_prev, in_gap;
    etl_gap_cursor gaps;  /* etl_reader_cpu_gaps */
} gcpu;

/* ftrace: what a TID and a PID are called. */
typedef struct who {
    char comm[16];   /* thread name, "" if none */
    uint32_t pid;    /* UINT32_MAX unknown */
    int prio;        /* last NewThreadPriority, -1 unknown */
} who;

struct etl_timeline {
    FILE *f;
    etl_clock clock;
    etl_timeline_options o;
    etl_timeline_stats st;
    int failed;
    bool nomem;           /* the failure was an allocation's: finish says ENOMEM, whatever errno became since */
    bool profile_damaged; /* etl_timeline_profile's pass found damage */
    /* perfetto */
    pcpu *cpus;
    unsigned ncpu;
    bytes names;          /* ProcessTree body being built */
    int64_t names_ns;
    etl_idmap listed;     /* PIDs written in a Process entry */
    /* ftrace */
    etl_idmap tmap, pmap; /* TID -> index in thr, PID -> index in proc */
    who *thr;
    size_t nthr, capthr;
    who *proc;            /* comm = image name */
    size_t nproc, capproc;
    /* unknown spans: only with a reader that lost records */
    const etl_reader *reader;
    bool lost;            /* buffers missing, or records passed over (found as the file is read) */
    gcpu *g;
    unsigned ng;
    uint64_t next_lo;     /* the earliest of the CPUs' next_lo */
    size_t nskips;        /* the reader's skips seen: a new one may start a span sooner */
    char utf8[1024];
};

/* ---- buffers ------------------------------------------------------------------------ */

static int reserve(etl_timeline *w, bytes *b, size_t more)
{
    if (b->n + more <= b->cap) return 0;
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + more) cap *= 2;
    uint8_t *p = realloc(b->p, cap);
    if (!p) {
        w->failed = w->nomem = 1;
        return -1;
    }
    b->p = p;
    b->cap = cap;
    return 0;
}

static void out(etl_timeline *w, const void *p, size_t n)
{
    if (n && fwrite(p, 1, n, w->f) != n) w->failed = 1;
}

static int64_t ns_of(etl_timeline *w, uint64_t ts)
{
    int64_t ns = etl_clock_ns(&w->clock, ts);
    if (ns < 0) {
        w->st.negative_times++;
        ns = 0;
    }
    return ns;
}

static bool in_window(const etl_timeline *w, int64_t ns) { return !w->o.has_range || (ns >= w->o.v0 && ns < w->o.v1); }

/* One TracePacket { timestamp, sequence id 1, <field> { body } }, framed as Trace.packet. */
static void packet(etl_timeline *w, int64_t ns, unsigned field, const uint8_t *head, size_t nhead, const uint8_t *body,
                   size_t nbody)
{
    uint8_t h[64], *p = h;
    size_t inner = nhead + nbody;
    size_t plen = 1 + pb_varint_len((uint64_t)ns) + 2 + pb_len_size(field, inner);
    p = pb_len(p, 1, plen);
    p = pb_uint(p, 8, (uint64_t)ns);
    p = pb_uint(p, 10, 1);
    p = pb_len(p, field, inner);
    out(w, h, (size_t)(p - h));
    out(w, head, nhead);
    out(w, body, nbody);
    w->st.packets++;
}

static void flush_cpu(etl_timeline *w, unsigned cpu)
{
    pcpu *c = &w->cpus[cpu];
    if (!c->b.n) return;
    uint8_t head[8];
    uint8_t *p = pb_uint(head, 1, cpu); /* EtwTraceEventBundle.cpu */
    packet(w, c->first_ns, 95, head, (size_t)(p - head), c->b.p, c->b.n);
    c->b.n = 0;
}

static void flush_names(etl_timeline *w)
{
    if (!w->names.n) return;
    packet(w, w->names_ns, 2, NULL, 0, w->names.p, w->names.n);
    w->names.n = 0;
}

static pcpu *cpu_at(etl_timeline *w, unsigned c)
{
    if (c >= MAX_CPUS) return NULL;
    if (c >= w->ncpu) {
        pcpu *p = realloc(w->cpus, (c + 1u) * sizeof *p);
        if (!p) {
            w->failed = w->nomem = 1;
            return NULL;
        }
        memset(p + w->ncpu, 0, (c + 1u - w->ncpu) * sizeof *p);
        w->cpus = p;
        w->ncpu = c + 1u;
    }
    return &w->cpus[c];
}

/* Appends one EtwTraceEvent { timestamp, cpu, [thread_id], <kind> { payload } } to its CPU's bundle. */
static void pf_event(etl_timeline *w, unsigned cpu, int64_t ns, bool has_tid, uint32_t tid, unsigned kind,
                     const uint8_t *payload, size_t n)
{
    pcpu *c = cpu_at(w, cpu);
    if (!c) return;
    uint8_t ev[64], *p = ev;
    p = pb_uint(p, 1, (uint64_t)ns);
    p = pb_uint(p, 4, cpu);
    if (has_tid) p = pb_uint(p, 5, tid);
    p = pb_len(p, kind, n);
    size_t head = (size_t)(p - ev);
    if (reserve(w, &c->b, pb_len_size(2, head + n))) return;
    if (!c->b.n) c->first_ns = ns;
    uint8_t *q = pb_len(c->b.p + c->b.n, 2, head + n);
    memcpy(q, ev, head);
    memcpy(q + head, payload, n);
    c->b.n = (size_t)(q + head + n - c->b.p);
    if (c->b.n >= BUNDLE_BYTES) flush_cpu(w, cpu);
}

static void pf_switch(etl_timeline *w, const etl_cswitch *e, int64_t ns)
{
    uint32_t k = e->known;
    uint8_t b[64], *p = b;
    p = pb_uint(p, 1, (k & ETL_CSW_NEW_TID) ? e->new_tid : UNKNOWN_TID);
    p = pb_uint(p, 2, (k & ETL_CSW_OLD_TID) ? e->old_tid : UNKNOWN_TID);
    if (k & ETL_CSW_NEW_PRIORITY) p = pb_sint32(p, 3, e->new_priority);
    if (k & ETL_CSW_OLD_PRIORITY) p = pb_sint32(p, 4, e->old_priority);
    if (k & ETL_CSW_PREVIOUS_CSTATE) p = pb_uint(p, 5, e->previous_cstate);
    if (k & ETL_CSW_WAIT_REASON) p = pb_int32(p, 11, e->old_wait_reason);
    if ((k & ETL_CSW_WAIT_MODE) && e->old_wait_mode <= 1) p = pb_uint(p, 7, e->old_wait_mode);
    else if (k & ETL_CSW_WAIT_MODE) p = pb_int32(p, 12, e->old_wait_mode);
    if ((k & ETL_CSW_STATE) && e->old_state <= 7) p = pb_uint(p, 8, e->old_state);
    else p = pb_sint32(p, 13, (k & ETL_CSW_STATE) ? e->old_state : UNKNOWN_STATE);
    if (k & ETL_CSW_IDEAL_PROCESSOR) p = pb_sint32(p, 9, e->old_ideal_processor);
    if (k & ETL_CSW_NEW_WAIT_TIME) p = pb_uint(p, 10, e->new_wait_time);
    pf_event(w, e->cpu, ns, false, 0, 2, b, (size_t)(p - b));
}

static void pf_ready(etl_timeline *w, const etl_sched_ready *r, int64_t ns)
{
    uint8_t b[48], *p = b;
    p = pb_uint(p, 1, r->ready.thread_id);
    if (r->ready.adjust_reason <= 2) p = pb_uint(p, 2, r->ready.adjust_reason);
    else p = pb_int32(p, 5, r->ready.adjust_reason);
    p = pb_sint32(p, 3, r->ready.adjust_increment);
    p = pb_int32(p, 6, r->ready.flags);
    uint32_t waker = r->readier_thread == ETL_SCHED_IDLE || r->readier_tid == UINT32_MAX ? 0 : r->readier_tid;
    pf_event(w, r->cpu, ns, true, waker, 3, b, (size_t)(p - b));
}

/* A name as UTF-8 into w->utf8 ("" when empty). */
static const char *utf16(etl_timeline *w, const etl_kstr *k)
{
    w->utf8[0] = 0;
    if (k->text.n) etl_utf16_to_utf8(k->text, w->utf8, sizeof w->utf8);
    return w->utf8;
}

static const char *ansi(etl_timeline *w, const etl_kstr *k)
{
    etl_latin1_to_utf8(k->text, w->utf8, sizeof w->utf8);
    return w->utf8;
}

/* Adds one ProcessTree entry (field 1 Process or 2 Thread) of body bytes at time ns. */
static void pf_name(etl_timeline *w, int64_t ns, unsigned field, const uint8_t *a, size_t na, const char *s1, unsigned f1,
                    const char *s2, unsigned f2, const uint8_t *z, size_t nz)
{
    size_t l1 = s1 ? strlen(s1) : 0, l2 = s2 ? strlen(s2) : 0;
    size_t body = na + (s1 ? pb_len_size(f1, l1) : 0) + (s2 ? pb_len_size(f2, l2) : 0) + nz;
    if (w->names.n && (ns != w->names_ns || w->names.n >= NAMES_BYTES)) flush_names(w);
    if (reserve(w, &w->names, pb_len_size(field, body))) return;
    if (!w->names.n) w->names_ns = ns;
    uint8_t *p = pb_len(w->names.p + w->names.n, field, body);
    memcpy(p, a, na);
    p += na;
    if (s1) {
        p = pb_len(p, f1, l1);
        memcpy(p, s1, l1);
        p += l1;
    }
    if (s2) {
        p = pb_len(p, f2, l2);
        memcpy(p, s2, l2);
        p += l2;
    }
    if (nz) memcpy(p, z, nz);
    p += nz;
    w->names.n = (size_t)(p - w->names.p);
    w->st.names++;
}

/* ---- ftrace ------------------------------------------------------------------------------- */

static who *who_at(etl_timeline *w, etl_idmap *m, who **arr, size_t *n, size_t *cap, uint32_t id, bool create)
{
    uint32_t i = etl_idmap_get(m, id);
    if (i != ETL_IDMAP_EMPTY) return &(*arr)[i];
    if (!create) return NULL;
    if (*n == *cap) {
        size_t nc = *cap ? *cap * 2 : 256;
        who *p = realloc(*arr, nc * sizeof *p);
        if (!p) {
            w->failed = w->nomem = 1;
            return NULL;
        }
        *arr = p;
        *cap = nc;
    }
    if (etl_idmap_put(m, id, (uint32_t)*n) != ETL_OK) {
        w->failed = w->nomem = 1;
        return NULL;
    }
    who *x = &(*arr)[(*n)++];
    memset(x, 0, sizeof *x);
    x->pid = UINT32_MAX;
    x->prio = -1;
    return x;
}

static who *thr(etl_timeline *w, uint32_t tid, bool create) { return who_at(w, &w->tmap, &w->thr, &w->nthr, &w->capthr, tid, create); }
static who *proc(etl_timeline *w, uint32_t pid, bool create) { return who_at(w, &w->pmap, &w->proc, &w->nproc, &w->capproc, pid, create); }

/*
 * A comm: at most 15 bytes, cut at a character boundary; no space, '=', control
 * character (base/textsafe.h: C0, C1, U+2028/9, bidirectional formatting) or byte
 * that is not UTF-8: each of those is '_', so a name is one token on its line.
 */
static void set_comm(char comm[16], const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t n = 0;
    while (*p && n < 15) {
        uint32_t cp;
        int kind;
        size_t len = etl_text_char(p, &cp, &kind);
        if (kind != ETL_TEXT_PLAIN || *p == ' ' || *p == '=') {
            comm[n++] = '_';
        } else {
            if (n + len > 15) break;
            memcpy(comm + n, p, len);
            n += len;
        }
        p += len;
    }
    comm[n] = 0;
}

static const char *comm_of(etl_timeline *w, uint32_t tid, unsigned cpu, char buf[16])
{
    if (tid == 0) {
        snprintf(buf, 16, "swapper/%u", cpu);
        return buf;
    }
    const who *t = thr(w, tid, false);
    if (t && t->comm[0]) return t->comm;
    const who *p = t && t->pid != UINT32_MAX ? proc(w, t->pid, false) : NULL;
    if (p && p->comm[0]) return p->comm;
    return "<...>";
}

/* "  comm-tid    ( pid) [cpu] d..3 s.us: " */
static void ft_head(etl_timeline *w, uint32_t tid, unsigned cpu, int64_t ns)
{
    char buf[16], tg[16];
    const char *comm = tid == 0 ? "<idle>" : tid == UNKNOWN_TID ? "<...>" : comm_of(w, tid, cpu, buf);
    const who *t = tid && tid != UNKNOWN_TID ? thr(w, tid, false) : NULL;
    if (tid == 0) snprintf(tg, sizeof tg, "%5u", 0u);
    else if (t && t->pid != UINT32_MAX) snprintf(tg, sizeof tg, "%5u", t->pid);
    else snprintf(tg, sizeof tg, "-----");
    if (fprintf(w->f, "%16s-%-7u (%s) [%03u] d..3 %5" PRId64 ".%06" PRId64 ": ", comm, tid, tg, cpu, ns / 1000000000,
                ns % 1000000000 / 1000) < 0)
        w->failed = 1;
}

const char *etl_ftrace_state(unsigned state, bool known)
{
    if (!known) return "R";
    switch (state) {
    case 4: return "X";         /* Terminated */
    case 5: return "S";         /* Waiting */
    case 6: case 8: case 9: return "D"; /* Transition, GateWait, WaitingForProcessInSwap: stack or process swapped out */
    default: return "R";        /* Initialized, Ready, Running, Standby, DeferredReady: runnable */
    }
}

/*
 * A thread id the record does not carry (a compact switch whose successor was lost) is
 * written as 4294967295 with the comm <...>, as the Perfetto target writes it: never 0,
 * which every importer reads as the idle thread (swapper), so an unknown tail would show
 * as idle time. trace_processor reads the pids as unsigned 32-bit numbers.
 */
static void ft_switch(etl_timeline *w, const etl_cswitch *e, int64_t ns)
{
    uint32_t k = e->known;
    uint32_t old = (k & ETL_CSW_OLD_TID) ? e->old_tid : UNKNOWN_TID, nw = (k & ETL_CSW_NEW_TID) ? e->new_tid : UNKNOWN_TID;
    char b1[16], b2[16];
    if (k & ETL_CSW_NEW_TID) {
        who *t = nw ? thr(w, nw, true) : NULL;
        if (t && (k & ETL_CSW_NEW_PRIORITY)) t->prio = e->new_priority;
    }
    who *ot = old && (k & ETL_CSW_OLD_TID) ? thr(w, old, false) : NULL;
    int oprio = (k & ETL_CSW_OLD_PRIORITY) && e->old_priority >= 0 ? e->old_priority : ot && ot->prio >= 0 ? ot->prio : 0;
    int nprio = (k & ETL_CSW_NEW_PRIORITY) && e->new_priority >= 0 ? e->new_priority : 0;
    ft_head(w, old, e->cpu, ns);
    fprintf(w->f, "sched_switch: prev_comm=%s prev_pid=%u prev_prio=%d prev_state=%s ==> next_comm=%s next_pid=%u next_prio=%d\n",
            (k & ETL_CSW_OLD_TID) ? comm_of(w, old, e->cpu, b1) : "<...>", old, oprio,
            etl_ftrace_state(e->old_state, (k & ETL_CSW_STATE) != 0),
            (k & ETL_CSW_NEW_TID) ? comm_of(w, nw, e->cpu, b2) : "<...>", nw, nprio);
    w->st.lines++;
    if (old && (k & ETL_CSW_OLD_TID) && (k & ETL_CSW_STATE) && (k & ETL_CSW_WAIT_REASON) &&
        (e->old_state == 5 || e->old_state == 6 || e->old_state == 9)) {
        const char *rn = etl_wait_reason_name(e->old_wait_reason);
        unsigned r = e->old_wait_reason;
        ft_head(w, old, e->cpu, ns);
        if (rn) fprintf(w->f, "sched_blocked_reason: pid=%u iowait=%d caller=%s\n", old, r == 2 || (r >= 7 && r <= 36), rn);
        else fprintf(w->f, "sched_blocked_reason: pid=%u iowait=0 caller=WaitReason%u\n", old, r);
        w->st.lines++;
    }
}

static void ft_ready(etl_timeline *w, const etl_sched_ready *r, int64_t ns)
{
    uint32_t waker = r->readier_thread == ETL_SCHED_IDLE || r->readier_tid == UINT32_MAX ? 0 : r->readier_tid;
    uint32_t tid = r->ready.thread_id;
    const who *t = thr(w, tid, false);
    char b[16];
    ft_head(w, waker, r->cpu, ns);
    fprintf(w->f, "sched_waking: comm=%s pid=%u prio=%d target_cpu=%03u\n", comm_of(w, tid, r->cpu, b), tid,
            t && t->prio >= 0 ? t->prio : 0, r->cpu);
    w->st.lines++;
}

/* ---- names ---------------------------------------------------------------------------------- */

static void on_process(etl_timeline *w, const etl_sched_event *ev)
{
    const etl_process *p = &ev->u.process;
    if (!(p->known & ETL_PROC_IDS) || p->process_id == 0) return;
    if (ev->hook != ETL_HOOK_PROCESS_START && ev->hook != ETL_HOOK_PROCESS_DC_START) return;
    /* An empty ImageFileName is "" (the comm `""`), apart from a name not known: "Unknown" (the comm <...>). */
    bool known = (p->known & ETL_PROC_IMAGE) != 0;
    const char *image = known ? ansi(w, &p->image_file_name) : "";
    if (w->o.format == ETL_TIMELINE_FTRACE) {
        who *x = proc(w, p->process_id, true);
        if (x) set_comm(x->comm, known && !image[0] ? "\"\"" : image);
        return;
    }
    char img[1024];
    snprintf(img, sizeof img, "%s", known ? image : "Unknown");
    const char *cmd = (p->known & ETL_PROC_COMMAND_LINE) && p->command_line.text.n ? utf16(w, &p->command_line) : NULL;
    uint8_t a[32], *q = a;
    q = pb_uint(q, 1, p->process_id);
    q = pb_uint(q, 2, p->parent_id);
    int64_t ns = ev->hook == ETL_HOOK_PROCESS_DC_START ? 0 : ns_of(w, ev->ts);
    pf_name(w, ns, 1, a, (size_t)(q - a), img, 3, cmd && cmd[0] ? cmd : NULL, 3, NULL, 0);
    /* Unlisted, its threads would be written without their process (another file): the export fails instead. */
    if (etl_idmap_put(&w->listed, p->process_id, 1) != ETL_OK) w->failed = w->nomem = 1;
}

static void on_thread_name(etl_timeline *w, const etl_sched_event *ev, uint32_t tid, uint32_t pid, const etl_kstr *name,
                           bool dc)
{
    if (tid == 0) return;
    const char *s = name && name->text.n ? utf16(w, name) : NULL;
    if (w->o.format == ETL_TIMELINE_FTRACE) {
        who *t = thr(w, tid, true);
        if (!t) return;
        t->pid = pid;
        if (s && s[0]) set_comm(t->comm, s);
        else if (ev->kind == ETL_SCHED_THREAD && (ev->hook == ETL_HOOK_THREAD_START || ev->hook == ETL_HOOK_THREAD_DC_START))
            t->comm[0] = 0; /* a new thread on a reused TID */
        return;
    }
    uint8_t a[16], *q = a, z[16], *r = z;
    q = pb_uint(q, 1, tid);
    if (pid && etl_idmap_get(&w->listed, pid) != ETL_IDMAP_EMPTY) r = pb_uint(r, 3, pid);
    pf_name(w, dc ? 0 : ns_of(w, ev->ts), 2, a, (size_t)(q - a), s && s[0] ? s : NULL, 2, NULL, 0, z, (size_t)(r - z));
}

/* ---- unknown spans ---------------------------------------------------------------------------- */

/* CPU c's next unknown span after its last switch: a missing buffer's span, records passed over, its records' end. */
static void span_next(etl_timeline *w, unsigned c)
{
    gcpu *g = &w->g[c];
    g->next_lo = UINT64_MAX;
    if (!g->has_prev || g->in_gap) return;
    /* As the model's etl_gap_spans: a span (lo, hi) with hi > si; switches lost from lo on (si if sooner). */
    while (g->gaps.next < g->gaps.n && g->gaps.gap[g->gaps.next].hi <= g->si) g->gaps.next++;
    if (g->gaps.next < g->gaps.n) {
        uint64_t lo = g->gaps.gap[g->gaps.next].lo;
        g->next_lo = lo > g->si ? lo : g->si;
    }
    uint64_t sk = etl_reader_cpu_next_skip(w->reader, c, g->si);
    if (sk < g->next_lo) g->next_lo = sk;
    if (g->known_until < g->next_lo) g->next_lo = g->known_until > g->si ? g->known_until : g->si;
}

static void spans_min(etl_timeline *w)
{
    w->next_lo = UINT64_MAX;
    for (unsigned c = 0; c < w->ng; c++)
        if (w->g[c].next_lo < w->next_lo) w->next_lo = w->g[c].next_lo;
}

/* A switch the records do not hold, of CPU cpu at raw time ts: old to nw, the old thread's state unknown. */
static void unknown_switch(etl_timeline *w, unsigned cpu, uint64_t ts, uint32_t old, uint32_t nw)
{
    int64_t ns = ns_of(w, ts);
    if (!in_window(w, ns)) return;
    w->st.unknown_switches++;
    etl_cswitch e;
    memset(&e, 0, sizeof e);
    e.ts = ts;
    e.cpu = (uint16_t)cpu;
    e.known = (old != UNKNOWN_TID ? ETL_CSW_OLD_TID : 0) | (nw != UNKNOWN_TID ? ETL_CSW_NEW_TID : 0);
    e.old_tid = old;
    e.new_tid = nw;
    if (w->o.format == ETL_TIMELINE_FTRACE) {
        ft_switch(w, &e, ns);
    } else {
        if (w->names.n) flush_names(w);
        pf_switch(w, &e, ns);
    }
}

/*
 * Before an event at raw time ts: every CPU whose records were lost before ts has the thread it
 * ran switched out to the unknown thread at its last record before the loss, in time order.
 */
static void spans_before(etl_timeline *w, uint64_t ts)
{
    if (!w->lost) {
        if (!w->reader || !etl_reader_skip_count(w->reader)) return;
        w->lost = true;
    }
    size_t n = etl_reader_skip_count(w->reader);
    if (n != w->nskips) { /* a skip found since: any CPU's next span may start sooner */
        w->nskips = n;
        for (unsigned c = 0; c < w->ng; c++) span_next(w, c);
        spans_min(w);
    }
    while (w->next_lo < ts) {
        unsigned at = 0;
        for (unsigned c = 0; c < w->ng; c++)
            if (w->g[c].next_lo == w->next_lo) at = c;
        gcpu *g = &w->g[at];
        if (g->cur != UNKNOWN_TID) unknown_switch(w, at, g->next_lo, g->cur, UNKNOWN_TID);
        g->in_gap = true;
        g->next_lo = UINT64_MAX;
        spans_min(w);
    }
}

static gcpu *gcpu_at(etl_timeline *w, unsigned c)
{
    if (c >= MAX_CPUS) return NULL;
    if (c >= w->ng) {
        gcpu *p = realloc(w->g, (c + 1u) * sizeof *p);
        if (!p) {
            w->failed = w->nomem = 1;
            return NULL;
        }
        for (unsigned i = w->ng; i <= c; i++) {
            memset(&p[i], 0, sizeof p[i]);
            p[i].next_lo = p[i].known_until = UINT64_MAX;
            if (w->reader && etl_reader_buffers_missing(w->reader)) {
                p[i].gaps.gap = etl_reader_cpu_gaps(w->reader, i, &p[i].gaps.n);
                p[i].known_until = etl_reader_cpu_known_until(w->reader, i);
            }
        }
        w->g = p;
        w->ng = c + 1u;
    }
    return &w->g[c];
}

/* A switch of the records, before it is written: a span of its CPU ends here (the unknown thread to its old one). */
static void spans_switch(etl_timeline *w, const etl_cswitch *e)
{
    gcpu *g = gcpu_at(w, e->cpu); /* kept from the start: records passed over are found later */
    if (!g) return;
    if (g->in_gap && (e->known & ETL_CSW_OLD_TID)) unknown_switch(w, e->cpu, e->ts, UNKNOWN_TID, e->old_tid);
    g->in_gap = false;
    g->has_prev = true;
    g->si = e->ts;
    g->cur = (e->known & ETL_CSW_NEW_TID) ? e->new_tid : UNKNOWN_TID;
    if (!w->lost) return;
    span_next(w, e->cpu);
    if (g->next_lo < w->next_lo) w->next_lo = g->next_lo;
    else if (g->next_lo != w->next_lo) spans_min(w);
}

/* ---- API ------------------------------------------------------------------------------------- */

etl_status etl_timeline_open(FILE *f, const etl_clock *clock, const etl_timeline_options *o, etl_timeline **out)
{
    *out = NULL;
    etl_timeline_options oo = {0};
    etl_opts_take(&oo, sizeof oo, o);
    if (oo.format != ETL_TIMELINE_PERFETTO && oo.format != ETL_TIMELINE_FTRACE) return ETL_E_INVALID_ARG;
    etl_timeline *w = calloc(1, sizeof *w);
    if (!w) return ETL_E_NOMEM;
    w->f = f;
    w->clock = *clock;
    w->o = oo;
    w->reader = oo.reader;
    w->lost = w->reader && etl_reader_buffers_missing(w->reader);
    w->next_lo = UINT64_MAX;
    etl_idmap_init(&w->listed);
    etl_idmap_init(&w->tmap);
    etl_idmap_init(&w->pmap);
    if (o->format == ETL_TIMELINE_FTRACE) {
        fputs("# tracer: nop\n"
              "#\n"
              "#                                _-----=> irqs-off\n"
              "#                               / _----=> need-resched\n"
              "#                              | / _---=> hardirq/softirq\n"
              "#                              || / _--=> preempt-depth\n"
              "#                              ||| /     delay\n"
              "#           TASK-PID       TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
              "#              | |           |      |   ||||       |         |\n",
              f);
    }
    *out = w;
    return ETL_OK;
}

void etl_timeline_event(etl_timeline *w, const etl_sched_event *ev)
{
    if (w->failed) return;
    switch (ev->kind) {
    case ETL_SCHED_SWITCH: {
        int64_t ns = ns_of(w, ev->ts);
        if (w->reader) {
            spans_before(w, ev->ts);
            spans_switch(w, &ev->u.sw);
        }
        if (w->o.format == ETL_TIMELINE_FTRACE) {
            /* Priorities and names stay current outside the window too. */
            if (!in_window(w, ns)) {
                const etl_cswitch *e = &ev->u.sw;
                who *t = (e->known & ETL_CSW_NEW_TID) && e->new_tid ? thr(w, e->new_tid, true) : NULL;
                if (t && (e->known & ETL_CSW_NEW_PRIORITY)) t->prio = e->new_priority;
                return;
            }
            ft_switch(w, &ev->u.sw, ns);
        } else {
            if (!in_window(w, ns)) return;
            if (w->names.n) flush_names(w);
            pf_switch(w, &ev->u.sw, ns);
        }
        w->st.switches++;
        break;
    }
    case ETL_SCHED_PROCESS: on_process(w, ev); break;
    case ETL_SCHED_THREAD: {
        const etl_thread *t = &ev->u.thread;
        if (!(t->known & ETL_THR_IDS)) break;
        if (ev->hook != ETL_HOOK_THREAD_START && ev->hook != ETL_HOOK_THREAD_DC_START) break;
        on_thread_name(w, ev, t->thread_id, t->process_id, (t->known & ETL_THR_NAME) ? &t->thread_name : NULL,
                       ev->hook == ETL_HOOK_THREAD_DC_START);
        break;
    }
    case ETL_SCHED_SET_NAME:
        on_thread_name(w, ev, ev->u.set_name.thread_id, ev->u.set_name.process_id, &ev->u.set_name.thread_name, false);
        break;
    default: break;
    }
}

void etl_timeline_ready(void *ctx, const etl_sched_ready *r)
{
    etl_timeline *w = ctx;
    if (w->failed) return;
    if (w->reader) spans_before(w, r->ts);
    int64_t ns = r->ns < 0 ? 0 : r->ns;
    if (r->ns < 0) w->st.negative_times++;
    if (!in_window(w, ns)) return;
    if (w->o.format == ETL_TIMELINE_FTRACE) {
        ft_ready(w, r, ns);
    } else {
        if (w->names.n) flush_names(w);
        pf_ready(w, r, ns);
    }
    w->st.ready++;
}

etl_status etl_timeline_finish(etl_timeline *w)
{
    if (w->reader && !w->failed) spans_before(w, UINT64_MAX); /* the spans to the trace's end */
    flush_names(w);
    for (unsigned c = 0; c < w->ncpu; c++) flush_cpu(w, c);
    if (fflush(w->f) != 0 || ferror(w->f)) w->failed = 1;
    if (w->nomem) errno = ENOMEM; /* the caller's message reads errno */
    return w->failed ? ETL_E_IO : ETL_OK;
}

const etl_timeline_stats *etl_timeline_stats_get(const etl_timeline *w) { return &w->st; }

void etl_timeline_close(etl_timeline *w)
{
    if (!w) return;
    for (unsigned c = 0; c < w->ncpu; c++) free(w->cpus[c].b.p);
    free(w->cpus);
    free(w->names.p);
    free(w->thr);
    free(w->proc);
    free(w->g);
    etl_idmap_free(&w->listed);
    etl_idmap_free(&w->tmap);
    etl_idmap_free(&w->pmap);
    free(w);
}

/* ---- for timeline_profile.c (timeline_internal.h) --------------------------------------------- */

void etl_timeline_put_packet(etl_timeline *w, const uint8_t *p, size_t n)
{
    out(w, p, n);
    w->st.packets++;
}

void etl_timeline_peek(const etl_timeline *w, etl_timeline_view *v)
{
    v->perfetto = w->o.format == ETL_TIMELINE_PERFETTO;
    v->failed = w->failed != 0;
    v->has_range = w->o.has_range;
    v->v0 = w->o.v0;
    v->v1 = w->o.v1;
    v->threads = w->o.threads;
    v->symbols = w->o.symbols;
}

void etl_timeline_profile_damage(etl_timeline *w) { w->profile_damaged = true; }
bool etl_timeline_profile_damaged(const etl_timeline *w) { return w && w->profile_damaged; }

/*
 * sched_stacks.c - the CSwitch and ReadyThread stacks of a trace, for the model's
 * rows (see etlkit/schedstacks.h).
 *
 * Why a side table built before the model runs, not a delay queue behind it: a
 * walk follows its event on the same CPU, but the user part of a cached walk
 * (0x1826) comes when the thread returns to user mode, possibly after thousands
 * of its events, and the keys' frames come later still (KeyDelete, KeyRundown).
 * A row the model emits at its next switch-out would have to wait for both, so the
 * streaming reports (switches) would hold rows back without a bound. Instead:
 * pass 1 learns the images and the key definitions (stacks/learn.h, as profile.c does);
 * pass 2 hands every CSwitch and ReadyThread to attach.c, which gives each back
 * with its frames once its parts came (its per-thread queues bound what waits);
 * a walked event becomes one 16-byte entry (CPU, canonical ns, kind, stack id),
 * its frames mapped to images and interned. Sorted once, the table answers a
 * row's lookups by binary search, the model streaming as it does without stacks.
 * A ReadyThread's walk names the thread running on its CPU (the readier), which
 * the ReadyThread itself does not say, and which a trace of compact batches gives
 * no CSwitch to follow: pass 2 holds each CPU's last few ReadyThreads until a walk
 * on that CPU names their time (walks follow their event on its CPU), and
 * announces each with the walk's StackThread.
 */
#include "etlkit/schedstacks.h"
#include "etlkit/symbols.h"

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "base/pipe.h"
#include "base/sort.h"
#include "etlkit/event.h"
#include "stacks/attach.h"
#include "stacks/images.h"
#include "stacks/learn.h"
#include "stacks/seqtab.h"
#include "stacks/stack_keys.h"
#include "stacks/strtab.h"

enum { KIND_CSWITCH = 0, KIND_READY = 1 };

/* A walked event: found by (kind, cpu, ns). */
typedef struct sst_entry {
    int64_t ns;
    uint32_t stack;
    uint16_t cpu;
    uint16_t kind;
} sst_entry;

struct etl_sched_stacks {
    etl_strtab names;
    etl_image_map images;
    etl_stack_keys keys;
    etl_seqtab raw;           /* walks' frames as logged */
    etl_seqtab resolved;      /* stacks as shown: [address, image] pairs */
    etl_profile_frame *scratch; /* etl_sched_stacks_frames' answer */
    etl_profile_image *img;   /* the images for the public view */
    size_t nimg;
    sst_entry *v;
    size_t n, cap;
    etl_symbols *sym;         /* names the frames (NULL: module+offset) */
    unsigned sym_flags;
    etl_sched_stacks_stats st;
    uint64_t key_refs_uncertain; /* attach.h's (a note: etl_sched_stacks_stats cannot grow in 0.x) */
    uint64_t walks_empty;     /* walked events whose walk held no frame: no stack (a note, as above) */
    etl_stats damage;         /* what pass 1 met (etl_sched_stacks_damage) */
    sst_entry *want;          /* etl_sched_stacks_build_only's events, sorted (stack unused); NULL: every one */
    size_t nwant;
    unsigned kinds;           /* 1 << KIND_*: the kinds whose stacks are kept (etl_sched_stacks_build_kind) */
};

/* ReadyThreads of a CPU waiting for their first walk (older ones go: no walk came for them). */
#define PENDING 8u

/* Pass 2's state: the reader's (the time-ordered records, the walks attached) and the counter's (pairs, hint). */
typedef struct sst_run {
    etl_sched_stacks *s;
    const etl_clock *clk;
    etl_reader *r;
    etl_pipe *pipe;           /* to the counter, or NULL: one thread */
    etl_attach at;
    uint64_t *pending;        /* by CPU, PENDING each: ReadyThread times no walk has come for yet (0: free) */
    uint64_t (*last_in)[3];   /* by CPU: the last CSwitch's time, new thread, and whether its kernel part came */
    unsigned ncpu;
    uint64_t *pairs;
    uint32_t hint[64];
    unsigned ptr_size;        /* the walks' (etl_stacks_ptr_size; 0: each record's own) */
} sst_run;

/* ------------------------------------------------------------ logged? */

/* Records read from the start: past the rundowns of a busy machine, still a few milliseconds. */
#define LOOK_RECORDS 65536u
#define LOOK_CPUS 256u

etl_status etl_sched_stacks_probe(etl_reader *r, bool *logged)
{
    *logged = false;
    etl_iter *it;
    etl_status st = etl_iter_open(r, ETL_ORDER_FILE, &it);
    if (st != ETL_OK) return st;
    uint64_t last[LOOK_CPUS][2]; /* by CPU: the last CSwitch and ReadyThread times */
    memset(last, 0, sizeof last);
    unsigned ptr = etl_stacks_ptr_size(r);
    etl_record rec;
    bool found = false;
    st = ETL_OK;
    for (unsigned n = 0; !found && n < LOOK_RECORDS && (st = etl_iter_next(it, &rec)) == ETL_OK; n++) {
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook) || rec.cpu >= LOOK_CPUS) continue;
        uint64_t ts = 0;
        if (hook == ETL_HOOK_CSWITCH) last[rec.cpu][0] = rec.ts;
        else if (hook == ETL_HOOK_READY_THREAD) last[rec.cpu][1] = rec.ts;
        else if (hook == ETL_HOOK_STACKWALK) {
            etl_stackwalk w;
            if (etl_stackwalk_decode(rec.payload, ptr ? ptr : rec.pointer_size, &w) == ETL_OK) ts = w.event_timestamp;
        } else if (hook == ETL_HOOK_STACK_KEY_KERNEL || hook == ETL_HOOK_STACK_KEY_USER) {
            etl_stack_key_ref k;
            if (etl_stack_key_ref_decode(rec.payload, ptr ? ptr : rec.pointer_size, &k) == ETL_OK)
                ts = k.event_timestamp;
        }
        found = ts && (ts == last[rec.cpu][0] || ts == last[rec.cpu][1]);
    }
    etl_iter_close(it);
    if (st == ETL_E_NOMEM && !found) return st; /* the records looked at stopped short: cannot tell */
    *logged = found;
    return ETL_OK;
}

bool etl_sched_stacks_logged(etl_reader *r)
{
    bool logged;
    /* Cannot tell (out of memory): yes, so that the pass runs and its own failure is told, not "no stack". */
    return etl_sched_stacks_probe(r, &logged) != ETL_OK || logged;
}

/* ------------------------------------------------------------- passes */

static bool image_hook(uint16_t hook)
{
    return hook == ETL_HOOK_PROCESS_LOAD_IMAGE || hook == ETL_HOOK_IMAGE_UNLOAD || hook == ETL_HOOK_IMAGE_DC_START ||
           hook == ETL_HOOK_IMAGE_DC_END || hook == ETL_HOOK_IMAGE_LOAD;
}

static bool pass2_keep(uint16_t hook)
{
    return hook == ETL_HOOK_CSWITCH || hook == ETL_HOOK_READY_THREAD || hook == ETL_HOOK_STACKWALK ||
           hook == ETL_HOOK_STACK_KEY_KERNEL || hook == ETL_HOOK_STACK_KEY_USER;
}

typedef struct pass1_ctx {
    etl_sched_stacks *s;
    const etl_reader *r;
} pass1_ctx;

/* An image event, in stream order: the image map. An impossible ImageSize is told and counted, as profile does. */
static etl_status add_image(void *ctx, const etl_record *rec, uint16_t hook)
{
    pass1_ctx *c = ctx;
    etl_sched_stacks *s = c->s;
    etl_event ev;
    if (etl_event_decode(rec, &ev) != ETL_OK || ev.kind != ETL_EVENT_IMAGE) return ETL_OK; /* teaches nothing */
    uint64_t bad = s->images.bad_sizes;
    etl_status st = etl_image_map_add(&s->images, hook, rec->ts, &ev.u.image);
    if (s->images.bad_sizes != bad) etl_stacks_image_damage(c->r, &s->damage, rec, hook, &s->images);
    return st;
}

/* Pass 1 (stacks/learn.h): the images and the key definitions. */
static etl_status pass1(etl_reader *r, etl_sched_stacks *s, unsigned threads)
{
    pass1_ctx c = {s, r};
    etl_learn l = {.want = image_hook, .on_record = add_image, .ctx = &c, .keys = &s->keys, .threads = threads,
                   .damage = &s->damage};
    return etl_stacks_learn(r, &l);
}

/*
 * Pass 2 has two stages, as the profile's: the reader (the time-ordered records,
 * the walks attached) and the counter (each walked event's frames mapped to
 * images, its stack interned, its entry kept). With a second thread the reader
 * runs on it and sends each walked event through a pipe (base/pipe.h), taken in
 * order on the caller's thread: the same ids as one thread gives.
 */
#define PIPE_BLOCK 65536u
#define PIPE_BLOCKS 8u

typedef struct msg {
    etl_attach_event ev;
    uint32_t n;               /* frames following */
} msg;
_Static_assert(sizeof(msg) + 2 * ETL_STACK_MAX_FRAMES * sizeof(uint64_t) <= PIPE_BLOCK, "a message fits a block");

static int cmp_entry(const void *a, const void *b);

/* Whether the event's stack is kept: every one, or those etl_sched_stacks_build_only asked for. */
static bool wanted(const etl_sched_stacks *s, unsigned kind, unsigned cpu, int64_t ns)
{
    if (!(s->kinds >> kind & 1)) return false;
    if (!s->want) return true;
    sst_entry key = {ns, 0, (uint16_t)cpu, (uint16_t)kind}; /* stack 0, as every wanted one's */
    return s->nwant && bsearch(&key, s->want, s->nwant, sizeof *s->want, cmp_entry);
}

/* A walked event (cookie[0]: its kind) and its frames: one entry. The counter's. */
static etl_status count_event(sst_run *R, const etl_attach_event *ev, const uint64_t *frames, uint32_t n)
{
    etl_sched_stacks *s = R->s;
    unsigned kind = (unsigned)ev->cookie[0];
    if (kind == KIND_CSWITCH) s->st.cswitch_walked++;
    else s->st.ready_walked++;
    if (!n) { /* a walk of no frame (a StackWalk of its head alone) says nothing: no stack, counted */
        s->walks_empty++;
        return ETL_OK;
    }
    if (!wanted(s, kind, ev->cpu, (int64_t)ev->cookie[1])) return ETL_OK; /* attached and counted, not kept */
    for (uint32_t k = 0; k < n; k++) {
        uint32_t *hint = &R->hint[etl_hash_mix64(frames[k] >> 16 ^ (uint64_t)ev->pid << 48) & 63];
        R->pairs[2 * k] = frames[k];
        R->pairs[2 * k + 1] = etl_image_map_find(&s->images, ev->pid, frames[k], ev->ts, hint);
    }
    uint32_t stack;
    etl_status st = etl_seqtab_intern(&s->resolved, R->pairs, 2 * n, &stack);
    if (st != ETL_OK) return st;
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 4096;
        sst_entry *v = realloc(s->v, cap * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        s->v = v;
        s->cap = cap;
    }
    s->v[s->n++] = (sst_entry){(int64_t)ev->cookie[1], stack, (uint16_t)ev->cpu, (uint16_t)kind};
    return ETL_OK;
}

/* An event closed with its frames (attach.c's on_close, the reader's): one entry when a walk came. */
static etl_status close_event(void *ctx, const etl_attach_event *ev, const uint64_t *frames, uint32_t n, bool walked)
{
    sst_run *R = ctx;
    if (!walked) return ETL_OK;
    if (!R->pipe) return count_event(R, ev, frames, n);
    msg *m = etl_pipe_put(R->pipe, sizeof *m + (size_t)n * sizeof *frames);
    if (!m) return ETL_END;
    *m = (msg){*ev, n};
    if (n) memcpy(m + 1, frames, (size_t)n * sizeof *frames);
    return ETL_OK;
}

/* The counter (etl_pipe_run's), on the caller's thread: a block of walked events, in order. */
static etl_status take_events(void *ctx, const void *block, size_t n)
{
    sst_run *R = ctx;
    const uint8_t *b = block;
    etl_status st = ETL_OK;
    for (size_t off = 0; st == ETL_OK && off < n;) {
        const msg *m = (const msg *)(b + off);
        off += sizeof *m + (size_t)m->n * sizeof(uint64_t);
        st = count_event(R, &m->ev, (const uint64_t *)(m + 1), m->n);
    }
    return st;
}

static etl_status announce(sst_run *R, const etl_record *rec, unsigned kind, uint32_t tid, uint64_t ts)
{
    etl_attach_event ev = {ts, tid, rec->cpu, 0, {kind, (uint64_t)etl_clock_ns(R->clk, ts)}, 0, false};
    return etl_attach_event_add(&R->at, &ev);
}

/*
 * A walk record's event (EventTimeStamp, StackThread) and whether it is a kernel part: a key reference
 * 0x1825, or a plain walk whose innermost frame is in the kernel (a CSwitch's or ReadyThread's walk starts
 * there; the plain user part of a two-walk stack starts in user space). False: not decoded.
 */
static bool walk_of(const sst_run *R, const etl_record *rec, uint16_t hook, uint64_t *ts, uint32_t *tid,
                    bool *kernel)
{
    unsigned ptr_size = R->ptr_size ? R->ptr_size : rec->pointer_size;
    if (hook == ETL_HOOK_STACKWALK) {
        etl_stackwalk w;
        if (etl_stackwalk_decode(rec->payload, ptr_size, &w) != ETL_OK) return false;
        *ts = w.event_timestamp, *tid = w.stack_thread;
        uint64_t f0 = 0;
        if (w.frame_count) etl_rd_ptrs(&f0, w.frames, w.ptr_size, 1);
        *kernel = !w.frame_count || etl_image_kernel_addr(w.ptr_size, f0); /* none: attach.c takes it so */
        return true;
    }
    etl_stack_key_ref k;
    if (etl_stack_key_ref_decode(rec->payload, ptr_size, &k) != ETL_OK) return false;
    *ts = k.event_timestamp, *tid = k.stack_thread;
    *kernel = hook == ETL_HOOK_STACK_KEY_KERNEL;
    return true;
}

static bool pending_at(const sst_run *R, unsigned cpu, uint64_t ts)
{
    const uint64_t *p = &R->pending[(size_t)cpu * PENDING];
    for (unsigned k = 0; ts && k < PENDING; k++)
        if (p[k] == ts) return true;
    return false;
}

/*
 * A walk on a CPU with a ReadyThread waiting there at its EventTimeStamp: that
 * ReadyThread is announced, its thread the walk's (*announced), unless the walk is
 * the CSwitch's of the same time and thread: the one switched in readied another in
 * the CSwitch's clock tick (a coarse clock's: the system time's). Each walk follows its
 * event, so the first kernel part is the CSwitch's and the one after it the ReadyThread's.
 */
static etl_status ready_walked(sst_run *R, const etl_record *rec, uint64_t ts, uint32_t tid, bool kernel,
                               bool *announced)
{
    *announced = false;
    if (rec->cpu >= R->ncpu) return ETL_OK;
    uint64_t *p = &R->pending[(size_t)rec->cpu * PENDING];
    const uint64_t *in = R->last_in[rec->cpu];
    for (unsigned k = 0; k < PENDING; k++) {
        if (p[k] != ts || !ts) continue;
        if (in[0] == ts && in[1] == tid && !(kernel && in[2])) return ETL_OK;
        p[k] = 0;
        *announced = true;
        return announce(R, rec, KIND_READY, tid, ts);
    }
    return ETL_OK;
}

/*
 * A walk record of pass 2. A kernel part is logged just after its event, on the event's CPU, before that
 * CPU's next CSwitch: so it names the CPU's last CSwitch, or a ReadyThread no walk came for yet. A kernel
 * part that names an event whose kernel part came already (a damaged EventTimeStamp repeating an earlier
 * walk's) is refused and counted: attach.c would take it as that event's user part, a wrong stack on an
 * undamaged row (explore9 F5). One that names a CSwitch's or a pending ReadyThread's time on its CPU but no
 * announced event (its StackThread is another thread) is counted: its row loses its stack (F4).
 */
static etl_status pass2_walk(sst_run *R, const etl_record *rec, uint16_t hook, etl_stack_pos pos)
{
    uint64_t ts;
    uint32_t tid;
    bool kernel;
    if (!walk_of(R, rec, hook, &ts, &tid, &kernel) || rec->cpu >= R->ncpu)
        return etl_attach_walk(&R->at, rec, hook, pos); /* attach.c says what it makes of it */
    uint64_t *in = R->last_in[rec->cpu];
    bool pend = pending_at(R, rec->cpu, ts), last = ts && in[0] == ts, the_last = last && in[1] == tid, readied;
    etl_status st = ready_walked(R, rec, ts, tid, kernel, &readied);
    if (st != ETL_OK || !kernel) return st == ETL_OK ? etl_attach_walk(&R->at, rec, hook, pos) : st;
    if (the_last && !readied) {
        if (in[2]) { /* the CSwitch's kernel part came already */
            R->s->st.walks_repeated++;
            return ETL_OK;
        }
        in[2] = 1;
    } else if (!pend) {
        if (etl_attach_wanted(&R->at, rec, hook)) { /* an event walked before: not this walk's */
            R->s->st.walks_repeated++;
            return ETL_OK;
        }
        if (last) R->s->st.walks_unmatched++; /* attach.c counted it in walks_other */
        return ETL_OK;
    }
    uint64_t other = R->at.stats.walks_other;
    st = etl_attach_walk(&R->at, rec, hook, pos);
    if (R->at.stats.walks_other != other) R->s->st.walks_unmatched++;
    return st;
}

/* The reader of pass 2 (etl_pipe_run's; ETL_END: the counter stopped it). */
static etl_status read_pass2(void *ctx, etl_pipe *pipe)
{
    sst_run *R = ctx;
    R->pipe = pipe;
    etl_iter *it;
    etl_status st = etl_stacks_open_pass(R->r, pass2_keep, NULL, NULL, &it);
    if (st != ETL_OK) return st;
    const etl_record *rec;
    while (st == ETL_OK && etl_iter_next_ref(it, &rec) == ETL_OK) {
        uint16_t hook;
        if (!etl_record_kernel_hook(rec, &hook)) continue;
        if (hook == ETL_HOOK_CSWITCH) {
            etl_cswitch sw;
            if (etl_event_decode_cswitch(rec, &sw) != ETL_OK || !(sw.known & ETL_CSW_NEW_TID)) continue;
            R->s->st.cswitch_events++;
            if (rec->cpu < R->ncpu)
                R->last_in[rec->cpu][0] = rec->ts, R->last_in[rec->cpu][1] = sw.new_tid, R->last_in[rec->cpu][2] = 0;
            st = announce(R, rec, KIND_CSWITCH, sw.new_tid, rec->ts);
        } else if (hook == ETL_HOOK_READY_THREAD) {
            R->s->st.ready_events++;
            if (rec->cpu >= R->ncpu || !rec->ts) continue;
            uint64_t *p = &R->pending[(size_t)rec->cpu * PENDING];
            unsigned k = 0, oldest = 0;
            while (k < PENDING && p[k]) {
                if (p[k] < p[oldest]) oldest = k;
                k++;
            }
            p[k < PENDING ? k : oldest] = rec->ts;
        } else if (hook == ETL_HOOK_STACKWALK || hook == ETL_HOOK_STACK_KEY_KERNEL || hook == ETL_HOOK_STACK_KEY_USER) {
            st = pass2_walk(R, rec, hook, etl_stack_pos_of(rec, etl_iter_merge_ts(it)));
        }
    }
    if (st == ETL_OK) st = etl_attach_finish(&R->at); /* the trace's end: what waits closes with what it has */
    R->s->st.key_refs_unresolved = R->at.stats.key_refs_unresolved;
    R->s->key_refs_uncertain = R->at.stats.key_refs_uncertain;
    R->s->st.user_parts_dropped = R->at.stats.user_parts_dropped;
    R->s->st.walks_other = R->at.stats.walks_other;
    R->s->st.walks_cut = R->at.stats.walks_cut;
    etl_iter_close(it);
    return st;
}

static int cmp_entry(const void *a, const void *b)
{
    const sst_entry *x = a, *y = b;
    if (x->kind != y->kind) return x->kind < y->kind ? -1 : 1;
    if (x->cpu != y->cpu) return x->cpu < y->cpu ? -1 : 1;
    if (x->ns != y->ns) return x->ns < y->ns ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/* The frames and the images as the public view shows them. */
static etl_status finish(etl_sched_stacks *s, const etl_clock *clk)
{
    etl_sort(s->v, s->n, sizeof *s->v, cmp_entry);
    /*
     * Two walked events of one kind at one time on one CPU (two ReadyThreads of one tick by one readier) are
     * one row lookup: one stack when theirs are the same; else which is whose is unknown, so neither (counted).
     */
    size_t k = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i + 1;
        bool same = true;
        while (j < s->n && s->v[j].kind == s->v[i].kind && s->v[j].cpu == s->v[i].cpu && s->v[j].ns == s->v[i].ns)
            same &= s->v[j++].stack == s->v[i].stack;
        if (same) s->v[k++] = s->v[i];
        else s->st.events_ambiguous++;
        i = j;
    }
    s->n = k;
    s->st.stacks = s->resolved.count;
    s->scratch = malloc(2 * ETL_STACK_MAX_FRAMES * sizeof *s->scratch);
    if (!s->scratch) return ETL_E_NOMEM;
    s->nimg = s->images.n;
    s->img = calloc(s->nimg ? s->nimg : 1, sizeof *s->img);
    if (!s->img) return ETL_E_NOMEM;
    for (size_t i = 0; i < s->nimg; i++) {
        const etl_image_inst *m = &s->images.v[i];
        s->img[i] = (etl_profile_image){m->base, m->logged_size, m->pid,
                                        etl_strtab_get(&s->names, m->name), etl_strtab_get(&s->names, m->path),
                                        m->time_date_stamp, m->checksum,
                                        m->from_ts ? etl_clock_ns(clk, m->from_ts) : INT64_MIN,
                                        m->to_ts != UINT64_MAX ? etl_clock_ns(clk, m->to_ts) : INT64_MAX,
                                        m->kernel};
    }
    return ETL_OK;
}

etl_status etl_sched_stacks_build(etl_reader *r, etl_sched_stacks **out)
{
    return etl_sched_stacks_build_threads(r, 1, out);
}

etl_status etl_sched_stacks_build_threads(etl_reader *r, unsigned threads, etl_sched_stacks **out)
{
    return etl_sched_stacks_build_only(r, threads, NULL, 0, out);
}

static etl_status build(etl_reader *r, unsigned threads, const etl_sched_stacks_event *want, size_t nwant,
                        unsigned kinds, etl_sched_stacks **out);

etl_status etl_sched_stacks_build_only(etl_reader *r, unsigned threads, const etl_sched_stacks_event *want, size_t nwant,
                                       etl_sched_stacks **out)
{
    return build(r, threads, want, nwant, 1u << KIND_CSWITCH | 1u << KIND_READY, out);
}

etl_status etl_sched_stacks_build_kind(etl_reader *r, unsigned threads, bool ready, etl_sched_stacks **out)
{
    return build(r, threads, NULL, 0, 1u << (ready ? KIND_READY : KIND_CSWITCH), out);
}

static etl_status build(etl_reader *r, unsigned threads, const etl_sched_stacks_event *want, size_t nwant,
                        unsigned kinds, etl_sched_stacks **out)
{
    if (!out) return ETL_E_INVALID_ARG;
    *out = NULL;
    if (!r || (nwant && !want)) return ETL_E_INVALID_ARG;
    etl_sched_stacks *s = calloc(1, sizeof *s);
    if (!s) return ETL_E_NOMEM;
    s->kinds = kinds;
    if (want) { /* sorted as the entries are, for wanted()'s search */
        s->want = malloc((nwant ? nwant : 1) * sizeof *s->want);
        if (!s->want) {
            free(s);
            return ETL_E_NOMEM;
        }
        for (size_t i = 0; i < nwant; i++)
            s->want[i] = (sst_entry){want[i].ns, 0, want[i].cpu, (uint16_t)(want[i].ready ? KIND_READY : KIND_CSWITCH)};
        etl_sort(s->want, nwant, sizeof *s->want, cmp_entry);
        s->nwant = nwant;
    }
    etl_strtab_init(&s->names);
    etl_image_map_init(&s->images, etl_reader_header(r)->pointer_size, &s->names);
    etl_stack_keys_init(&s->keys);
    etl_seqtab_init(&s->raw);
    etl_seqtab_init(&s->resolved);
    s->damage.first_problem_offset = UINT64_MAX;
    etl_status st = pass1(r, s, threads);
    if (st == ETL_OK) st = etl_stack_keys_seal(&s->keys);
    if (st == ETL_OK) st = etl_image_map_seal(&s->images);
    sst_run R = {0};
    R.s = s;
    R.r = r;
    R.clk = etl_reader_clock(r);
    R.ncpu = etl_reader_cpu_count(r);
    for (size_t h = 0; h < sizeof R.hint / sizeof R.hint[0]; h++) R.hint[h] = ETL_IMAGE_NONE;
    R.ptr_size = etl_stacks_ptr_size(r);
    if (st == ETL_OK) st = etl_attach_init(&R.at, &s->raw, &s->keys, close_event, &R);
    R.at.ptr_size = R.ptr_size;
    R.at.r = r;
    etl_lost_spans lost = {0}; /* pass 1 read every CPU: every record passed over is known */
    if (st == ETL_OK) st = etl_stacks_lost_spans(r, &lost);
    R.at.lost = &lost;
    R.pending = calloc((size_t)(R.ncpu ? R.ncpu : 1) * PENDING, sizeof *R.pending);
    R.last_in = calloc(R.ncpu ? R.ncpu : 1, sizeof *R.last_in);
    R.pairs = malloc(4 * ETL_STACK_MAX_FRAMES * sizeof *R.pairs);
    if (st == ETL_OK && (!R.pending || !R.last_in || !R.pairs)) st = ETL_E_NOMEM;
    if (st == ETL_OK) st = etl_pipe_run(threads, PIPE_BLOCK, PIPE_BLOCKS, read_pass2, take_events, &R);
    const etl_stats none = {.first_problem_offset = UINT64_MAX};
    etl_stats_add(&s->damage, &R.at.damage, &none); /* what pass 2's walks held (a non-canonical frame) */
    etl_attach_free(&R.at);
    etl_lost_spans_free(&lost);
    free(R.pending);
    free(R.last_in);
    free(R.pairs);
    if (st == ETL_OK) st = finish(s, R.clk);
    /* The walks' own frames served pass 2 only. */
    etl_seqtab_free(&s->raw);
    etl_stack_keys_free(&s->keys);
    if (st != ETL_OK) {
        etl_sched_stacks_free(s);
        return st;
    }
    *out = s;
    return ETL_OK;
}

void etl_sched_stacks_free(etl_sched_stacks *s)
{
    if (!s) return;
    etl_strtab_free(&s->names);
    etl_image_map_free(&s->images);
    etl_stack_keys_free(&s->keys);
    etl_seqtab_free(&s->raw);
    etl_seqtab_free(&s->resolved);
    free(s->scratch);
    free(s->img);
    free(s->v);
    free(s->want);
    free(s);
}

const etl_sched_stacks_stats *etl_sched_stacks_stats_get(const etl_sched_stacks *s) { return &s->st; }

const etl_stats *etl_sched_stacks_damage(const etl_sched_stacks *s) { return &s->damage; }

bool etl_sched_stacks_note(const etl_sched_stacks *s, unsigned i, const char **key, uint64_t *count,
                           const char **text)
{
    /* profile's notes (cli/cmd_profile.c) for the same losses, in the rows' terms */
    static const struct {
        const char *key, *text;
        size_t at;
    } notes[] = {
        {"key_refs_unresolved", "stack references have no definition of their part (kernel or user) next for their "
         "key, so theirs was lost: those rows' stacks lack that part, or have none; a reference whose own definition "
         "was lost while the key's next one holds the same part takes that one: some stacks may be another event's",
         offsetof(etl_sched_stacks_stats, key_refs_unresolved)},
        {"user_parts_dropped", "events stopped waiting for a deferred user stack (more than 4096 waiting on a "
         "thread): those rows' stacks lack the user part", offsetof(etl_sched_stacks_stats, user_parts_dropped)},
        {"walks_cut", "stack walks had more than 192 frames (Windows logs at most 192): the innermost 192 are kept",
         offsetof(etl_sched_stacks_stats, walks_cut)},
        {"walks_unmatched", "stack walks at a CSwitch's or ReadyThread's time on their CPU name another thread: "
         "those rows have no stack", offsetof(etl_sched_stacks_stats, walks_unmatched)},
        {"walks_repeated", "stack walks name an event whose walk came already (their EventTimeStamp repeats "
         "another's): left out, never taken as that event's user part", offsetof(etl_sched_stacks_stats,
         walks_repeated)},
        {"events_ambiguous", "times hold two walked events of one kind on one CPU with different stacks: their "
         "rows have no stack (which is whose is unknown)", offsetof(etl_sched_stacks_stats, events_ambiguous)},
        {"key_refs_uncertain", "stack references took their key's next definition of their part while the trace "
         "lost records between the two: their own may have been lost, so those rows' stacks may be another event's",
         SIZE_MAX},
        {"walks_empty", "stack walks at a CSwitch or ReadyThread held no frame: those rows have no stack",
         SIZE_MAX - 1},
    };
    if (i >= sizeof notes / sizeof notes[0]) return false;
    *key = notes[i].key;
    *text = notes[i].text;
    *count = 0;
    if (s && notes[i].at == SIZE_MAX) *count = s->key_refs_uncertain; /* not in the stats */
    else if (s && notes[i].at == SIZE_MAX - 1) *count = s->walks_empty;
    else if (s) memcpy(count, (const char *)&s->st + notes[i].at, sizeof *count);
    return true;
}

/* ------------------------------------------------------------ lookups */

static uint32_t find(const etl_sched_stacks *s, unsigned kind, uint16_t cpu, int64_t ns)
{
    if (!s) return ETL_SCHED_STACK_NONE;
    size_t lo = 0, hi = s->n; /* the first entry >= (kind, cpu, ns) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const sst_entry *e = &s->v[mid];
        bool less = e->kind != kind ? e->kind < kind : e->cpu != cpu ? e->cpu < cpu : e->ns < ns;
        if (less) lo = mid + 1;
        else hi = mid;
    }
    if (lo < s->n && s->v[lo].kind == kind && s->v[lo].cpu == cpu && s->v[lo].ns == ns) return s->v[lo].stack;
    return ETL_SCHED_STACK_NONE;
}

uint32_t etl_sched_stacks_cswitch(const etl_sched_stacks *s, uint16_t cpu, int64_t ns)
{
    return find(s, KIND_CSWITCH, cpu, ns);
}

uint32_t etl_sched_stacks_ready(const etl_sched_stacks *s, uint16_t cpu, int64_t ns)
{
    return find(s, KIND_READY, cpu, ns);
}

uint32_t etl_sched_stacks_row_new(const etl_sched_stacks *s, const etl_sched_row *row)
{
    if ((row->flags & ETL_ROW_HEAD) || !row->in || row->in->source != ETL_CSW_SRC_CSWITCH) return ETL_SCHED_STACK_NONE;
    /* The switch-in planned another thread than the one that ran: its walk is the planned thread's, not the row's. */
    if (row->flags & ETL_ROW_MISMATCH) return ETL_SCHED_STACK_NONE;
    return find(s, KIND_CSWITCH, row->cpu, row->si);
}

uint32_t etl_sched_stacks_row_readying(const etl_sched_stacks *s, const etl_sched_row *row)
{
    if (!(row->flags & ETL_ROW_READIED)) return ETL_SCHED_STACK_NONE;
    /* R's own time: the row's Ready Time is its previous switch-out when R came before it. */
    return find(s, KIND_READY, row->ready_cpu, row->ready_ns);
}

const etl_profile_frame *etl_sched_stacks_frames(etl_sched_stacks *s, uint32_t stack, uint32_t *n)
{
    *n = 0;
    if (!s || !s->scratch || stack >= s->resolved.count) return NULL;
    uint32_t words;
    const uint64_t *w = etl_seqtab_get(&s->resolved, stack, &words);
    for (uint32_t k = 0; k + 1 < words && k / 2 < 2 * ETL_STACK_MAX_FRAMES; k += 2)
        s->scratch[(*n)++] = (etl_profile_frame){w[k], (uint32_t)w[k + 1]};
    return s->scratch;
}

const etl_profile_image *etl_sched_stacks_images(const etl_sched_stacks *s, size_t *n)
{
    *n = s ? s->nimg : 0;
    return s ? s->img : NULL;
}

void etl_sched_stacks_set_symbols(etl_sched_stacks *s, etl_symbols *sym, unsigned flags)
{
    s->sym = sym;
    s->sym_flags = flags;
}

size_t etl_sched_stacks_frame_label(const etl_sched_stacks *s, const etl_profile_frame *f, char *out, size_t cap)
{
    bool known = f->image != ETL_PROFILE_NONE && f->image < s->nimg;
    if (s->sym) return etl_symbols_label(s->sym, known ? &s->img[f->image] : NULL, f->address, s->sym_flags, out, cap);
    int n;
    if (f->image == ETL_PROFILE_NONE || f->image >= s->nimg)
        n = snprintf(out, cap, "Unknown+0x%" PRIx64, f->address);
    else
        n = snprintf(out, cap, "%s+0x%" PRIx64, s->img[f->image].name, f->address - s->img[f->image].base);
    return n < 0 ? 0 : (size_t)n;
}

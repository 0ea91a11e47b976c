/*
 * profile.c - CPU Usage (Sampled): two passes over a trace (see etlkit/profile.h).
 *
 * Pass 1 builds what the whole trace tells: owners (thread -> process, names),
 * the image map, the sampling interval and the stack-key definitions. Pass 2
 * counts the samples and attaches their stacks. A sample waits in a queue of its
 * thread (the idle thread's: of its CPU) for its walks: the kernel part and a
 * plain walk come right after it, the user part of a key reference maybe much
 * later (when the thread returns to user mode, after more samples of the same
 * thread). A waiting sample closes when its user part comes (then every older
 * one of its queue does too: user parts come in order), when its queue holds
 * PEND_MAX_PER_THREAD newer ones, or at the trace's end. Closing interns the
 * stack, its frames mapped to images, and counts it for (thread, stack).
 */
#include "etlkit/profile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/idmap.h"
#include "base/opts.h"
#include "base/sort.h"
#include "etlkit/event.h"
#include "stacks/images.h"
#include "stacks/owners.h"
#include "stacks/profile_internal.h"
#include "stacks/seqtab.h"
#include "stacks/stack_keys.h"
#include "stacks/strtab.h"

#define PEND_MAX_PER_THREAD 4096u
#define NIL UINT32_MAX

typedef struct pend {
    uint64_t ts;
    uint32_t tid, cpu;
    uint32_t thread;        /* thread row */
    uint32_t pid;           /* the process whose images map the frames (the walk's StackProcess once one came) */
    uint64_t ip;
    uint32_t kpart, upart;  /* raw stacks (seqtab ids) or NIL */
    uint32_t prev, next;    /* the thread's queue, oldest first; next also chains free entries */
} pend;

typedef struct tqueue {
    uint32_t head, tail, n;
} tqueue;

/* The growing arrays of the result, before they become the etl_profile's. */
typedef struct rows {
    etl_profile_thread *threads;
    size_t nthreads, capthreads;
    etl_profile_function *functions;
    size_t nfunctions, capfunctions;
    etl_profile_stack *stacks;
    size_t nstacks, capstacks;
    prof_cell *cells;
    size_t ncells, capcells;
} rows;

typedef struct run {
    prof_impl *im;
    const etl_profile_options *o;
    etl_profile *p;
    const etl_clock *clk;
    rows r;
    etl_idmap thread_ix;    /* tid << 32 | pid -> thread row */
    etl_idmap cell_ix;      /* thread << 32 | function -> cell */
    etl_idmap stack_ix[2];  /* thread << 32 | resolved stack -> stack row, [walked] */
    etl_idmap module_ix;    /* module name (strtab offset) -> module row */
    etl_seqtab fkeys;       /* (module row, offset) -> function row */
    uint32_t *thread_pname; /* by thread row: the process name (strtab) at its first sample */
    pend *pend;
    uint32_t npend, cappend, free_pend;
    etl_idmap pend_ix;      /* key(tid, ts, cpu) -> pend */
    tqueue *q;              /* by thread row */
    size_t capq;
    tqueue *idleq;          /* the idle thread's, by CPU: it runs on every CPU at once */
    size_t capidleq;
    bool walks;             /* the trace has stack walks: samples wait for theirs */
    uint64_t *frames;       /* scratch: a closing sample's raw frames, then [address, image] pairs */
    uint64_t *pairs;
    uint32_t unknown_name;
    etl_status err;
} run;

/* ------------------------------------------------------------------ pass 1 */

static etl_status learn(prof_impl *im, const etl_record *rec, uint16_t hook, uint64_t pos, etl_profile *p,
                        bool *have_interval)
{
    etl_event ev;
    if (etl_event_decode(rec, &ev) != ETL_OK) return ETL_OK; /* a record a codec refuses teaches nothing */
    uint32_t name = 0;
    etl_status st = ETL_OK;
    switch (ev.kind) {
    case ETL_EVENT_THREAD:
        if (ev.u.thread.known & ETL_THR_NAME && ev.u.thread.thread_name.text.n) {
            st = etl_strtab_add_kstr(&im->names, &ev.u.thread.thread_name, true, &name);
            if (st == ETL_OK) st = etl_owners_thread_name(&im->owners, ev.u.thread.thread_id, ev.u.thread.process_id, name);
        }
        if (st == ETL_OK && (hook == ETL_HOOK_THREAD_START || hook == ETL_HOOK_THREAD_DC_START))
            st = etl_owners_thread(&im->owners, ev.u.thread.thread_id, ev.u.thread.process_id, rec->ts);
        return st;
    case ETL_EVENT_THREAD_SET_NAME:
        st = etl_strtab_add_kstr(&im->names, &ev.u.set_name.thread_name, true, &name);
        return st == ETL_OK ? etl_owners_thread_name(&im->owners, ev.u.set_name.thread_id, ev.u.set_name.process_id, name)
                            : st;
    case ETL_EVENT_PROCESS:
        if (hook != ETL_HOOK_PROCESS_START && hook != ETL_HOOK_PROCESS_DC_START) return ETL_OK;
        st = etl_strtab_add_kstr(&im->names, &ev.u.process.image_file_name, false, &name);
        return st == ETL_OK ? etl_owners_process(&im->owners, ev.u.process.process_id, rec->ts, name) : st;
    case ETL_EVENT_IMAGE:
        return etl_image_map_add(&im->images, hook, rec->ts, &ev.u.image);
    case ETL_EVENT_PROFILE_INTERVAL:
        /* SetInterval and CollectionStart of the Timer source; CollectionEnd repeats the last. */
        if (ev.u.interval.source != 0 || hook == ETL_HOOK_PROFILE_COLLECTION_END || !ev.u.interval.new_interval)
            return ETL_OK;
        if (!*have_interval) {
            *have_interval = true;
            p->interval_logged = true;
            p->interval_ns = (int64_t)ev.u.interval.new_interval * 100;
        } else if ((int64_t)ev.u.interval.new_interval * 100 != p->interval_ns) {
            p->interval_changes++;
        }
        return ETL_OK;
    case ETL_EVENT_STACK_KEY_DEF: {
        uint64_t f[ETL_STACK_MAX_FRAMES];
        const etl_stack_key_def *d = &ev.u.key_def;
        for (uint32_t i = 0; i < d->frame_count; i++) f[i] = etl_stack_frame(d->frames, d->ptr_size, i);
        uint32_t id;
        st = etl_seqtab_intern(&im->raw, f, d->frame_count, &id);
        return st == ETL_OK ? etl_stack_keys_define(&im->keys, d->stack_key, pos, id) : st;
    }
    default:
        return ETL_OK;
    }
}

static bool pass1_hook(uint16_t hook)
{
    switch (hook) {
    case ETL_HOOK_THREAD_START:
    case ETL_HOOK_THREAD_END:
    case ETL_HOOK_THREAD_DC_START:
    case ETL_HOOK_THREAD_DC_END:
    case ETL_HOOK_THREAD_SET_NAME:
    case ETL_HOOK_PROCESS_START:
    case ETL_HOOK_PROCESS_DC_START:
    case ETL_HOOK_PROCESS_LOAD_IMAGE:
    case ETL_HOOK_IMAGE_UNLOAD:
    case ETL_HOOK_IMAGE_DC_START:
    case ETL_HOOK_IMAGE_DC_END:
    case ETL_HOOK_IMAGE_LOAD:
    case ETL_HOOK_PROFILE_SET_INTERVAL:
    case ETL_HOOK_PROFILE_COLLECTION_START:
    case ETL_HOOK_STACK_KEY_DELETE:
    case ETL_HOOK_STACK_KEY_RUNDOWN:
        return true;
    default:
        return false;
    }
}

/* --------------------------------------------------------------- the rows */

static void *grow(void *v, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return v;
    size_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *n = realloc(v, c * size);
    if (n) *cap = c;
    return n;
}

#define GROW(arr, n, cap)                                                          \
    do {                                                                           \
        void *g_ = grow((arr), &(cap), (n) + 1, sizeof *(arr));                    \
        if (!g_) return ETL_E_NOMEM;                                               \
        (arr) = g_;                                                                \
    } while (0)

static etl_status thread_row(run *R, uint32_t tid, uint32_t pid, uint64_t ts, uint32_t *row)
{
    uint64_t key = (uint64_t)tid << 32 | pid;
    uint32_t i = etl_idmap_get(&R->thread_ix, key);
    if (i != ETL_IDMAP_EMPTY) {
        *row = i;
        return ETL_OK;
    }
    GROW(R->r.threads, R->r.nthreads, R->r.capthreads);
    size_t capn = R->r.capthreads;
    uint32_t *pn = realloc(R->thread_pname, capn * sizeof *pn);
    if (!pn) return ETL_E_NOMEM;
    R->thread_pname = pn;
    tqueue *q = grow(R->q, &R->capq, R->r.nthreads + 1, sizeof *q);
    if (!q) return ETL_E_NOMEM;
    R->q = q;
    i = (uint32_t)R->r.nthreads;
    etl_profile_thread *t = &R->r.threads[i];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->pid = pid == ETL_PID_UNKNOWN ? ETL_PROFILE_NONE : pid;
    t->name = NULL; /* set at the end, when the names no longer move */
    R->thread_pname[i] = pid == ETL_PID_UNKNOWN ? 0 : etl_owners_process_name(&R->im->owners, pid, ts);
    R->q[i] = (tqueue){NIL, NIL, 0};
    etl_status st = etl_idmap_put(&R->thread_ix, key, i);
    if (st != ETL_OK) return st;
    R->r.nthreads++;
    *row = i;
    return ETL_OK;
}

static etl_status module_row(run *R, uint32_t name, uint32_t *row)
{
    uint32_t i = etl_idmap_get(&R->module_ix, name);
    if (i == ETL_IDMAP_EMPTY) {
        i = (uint32_t)R->module_ix.count;
        etl_status st = etl_idmap_put(&R->module_ix, name, i);
        if (st != ETL_OK) return st;
    }
    *row = i;
    return ETL_OK;
}

/* The function of an address in image (NIL: Unknown). */
static etl_status function_row(run *R, uint64_t addr, uint32_t image, uint32_t *row)
{
    const etl_image_inst *img = image == NIL ? NULL : &R->im->images.v[image];
    uint32_t mod;
    etl_status st = module_row(R, img ? img->name : R->unknown_name, &mod);
    if (st != ETL_OK) return st;
    uint64_t key[2] = {mod, img ? addr - img->base : addr};
    uint32_t id;
    if ((st = etl_seqtab_intern(&R->fkeys, key, 2, &id)) != ETL_OK) return st;
    if (id == R->r.nfunctions) {
        GROW(R->r.functions, R->r.nfunctions, R->r.capfunctions);
        R->r.functions[id] = (etl_profile_function){mod, key[1], 0};
        R->r.nfunctions++;
    }
    *row = id;
    return ETL_OK;
}

static etl_status count_cell(run *R, uint32_t thread, uint32_t function)
{
    uint64_t key = (uint64_t)thread << 32 | function;
    uint32_t i = etl_idmap_get(&R->cell_ix, key);
    if (i == ETL_IDMAP_EMPTY) {
        GROW(R->r.cells, R->r.ncells, R->r.capcells);
        i = (uint32_t)R->r.ncells;
        R->r.cells[i] = (prof_cell){thread, function, 0};
        etl_status st = etl_idmap_put(&R->cell_ix, key, i);
        if (st != ETL_OK) return st;
        R->r.ncells++;
    }
    R->r.cells[i].samples++;
    return ETL_OK;
}

static etl_status count_stack(run *R, uint32_t thread, uint32_t stack, bool walked)
{
    uint64_t key = (uint64_t)thread << 32 | stack;
    etl_idmap *ix = &R->stack_ix[walked];
    uint32_t i = etl_idmap_get(ix, key);
    if (i == ETL_IDMAP_EMPTY) {
        GROW(R->r.stacks, R->r.nstacks, R->r.capstacks);
        i = (uint32_t)R->r.nstacks;
        R->r.stacks[i] = (etl_profile_stack){thread, stack, walked, 0};
        etl_status st = etl_idmap_put(ix, key, i);
        if (st != ETL_OK) return st;
        R->r.nstacks++;
    }
    R->r.stacks[i].samples++;
    return ETL_OK;
}

/* ------------------------------------------------------ pending samples */

static uint64_t pend_key(uint32_t tid, uint64_t ts, uint32_t cpu)
{
    /* The idle thread (TID 0) runs on every CPU at once: its samples are told apart by CPU. */
    return etl_hash_mix64(ts ^ etl_hash_mix64((uint64_t)tid << 32 | (tid ? 0 : cpu)));
}

static tqueue *queue_of(run *R, const pend *e)
{
    return e->tid ? &R->q[e->thread] : &R->idleq[e->cpu];
}

static void unlink_pend(run *R, uint32_t i)
{
    pend *e = &R->pend[i];
    tqueue *q = queue_of(R, e);
    if (e->prev != NIL) R->pend[e->prev].next = e->next;
    else q->head = e->next;
    if (e->next != NIL) R->pend[e->next].prev = e->prev;
    else q->tail = e->prev;
    q->n--;
    (void)etl_idmap_remove(&R->pend_ix, pend_key(e->tid, e->ts, e->cpu));
    e->next = R->free_pend;
    R->free_pend = i;
}

/* Counts pending sample i with the stack it has (its InstructionPointer alone without a walk) and frees it. */
static etl_status close_pend(run *R, uint32_t i)
{
    pend *e = &R->pend[i];
    uint32_t n = 0;
    bool walked = e->kpart != NIL || e->upart != NIL;
    for (int part = 0; part < 2; part++) {
        uint32_t id = part ? e->upart : e->kpart, len;
        if (id == NIL) continue;
        const uint64_t *w = etl_seqtab_get(&R->im->raw, id, &len);
        for (uint32_t k = 0; k < len && n < 2 * ETL_STACK_MAX_FRAMES; k++) R->frames[n++] = w[k];
    }
    if (!walked) R->frames[n++] = e->ip;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t img = etl_image_map_find(&R->im->images, e->pid, R->frames[k], e->ts);
        R->pairs[2 * k] = R->frames[k];
        R->pairs[2 * k + 1] = img;
    }
    uint32_t stack;
    etl_status st = etl_seqtab_intern(&R->im->resolved, R->pairs, 2 * n, &stack);
    if (st == ETL_OK) st = count_stack(R, e->thread, stack, walked);
    if (st == ETL_OK && walked) {
        R->p->with_stack++;
        R->r.threads[e->thread].with_stack++;
    }
    unlink_pend(R, i);
    return st;
}

/*
 * Before a new sample of q's thread: a full queue lets its oldest go. Samples wait
 * until then (or the trace's end) even with no walk yet: a walk may come after the
 * thread's next sample (a deferred user part, records of other CPUs in between).
 */
static etl_status settle_queue(run *R, tqueue *q)
{
    while (q->n >= PEND_MAX_PER_THREAD) {
        const pend *e = &R->pend[q->head];
        if (e->kpart != NIL && e->pid != 0 && e->pid != 4) R->p->user_parts_dropped++;
        etl_status st = close_pend(R, q->head);
        if (st != ETL_OK) return st;
    }
    return ETL_OK;
}

static etl_status open_pend(run *R, uint32_t thread, const etl_record *rec, const etl_sampled_profile *s,
                            uint32_t pid)
{
    if (!s->thread_id && rec->cpu >= R->capidleq) {
        size_t cap = R->capidleq;
        tqueue *iq = grow(R->idleq, &cap, (size_t)rec->cpu + 1, sizeof *iq);
        if (!iq) return ETL_E_NOMEM;
        for (size_t c = R->capidleq; c < cap; c++) iq[c] = (tqueue){NIL, NIL, 0};
        R->idleq = iq;
        R->capidleq = cap;
    }
    tqueue *q = s->thread_id ? &R->q[thread] : &R->idleq[rec->cpu];
    etl_status st = settle_queue(R, q);
    if (st != ETL_OK) return st;
    uint32_t i = R->free_pend;
    if (i != NIL) {
        R->free_pend = R->pend[i].next;
    } else {
        size_t cap = R->cappend;
        pend *v = grow(R->pend, &cap, (size_t)R->npend + 1, sizeof *v);
        if (!v) return ETL_E_NOMEM;
        R->pend = v;
        R->cappend = (uint32_t)cap;
        i = R->npend++;
    }
    R->pend[i] = (pend){rec->ts, s->thread_id, rec->cpu, thread, pid == ETL_PID_UNKNOWN ? 0 : pid,
                        s->instruction_pointer, NIL, NIL, q->tail, NIL};
    if (q->tail != NIL) R->pend[q->tail].next = i;
    else q->head = i;
    q->tail = i;
    q->n++;
    st = etl_idmap_put(&R->pend_ix, pend_key(s->thread_id, rec->ts, rec->cpu), i);
    return st == ETL_OK && !R->walks ? close_pend(R, i) : st; /* no walk will come */
}

/* The pending sample a walk of (thread, its event's time) on cpu belongs to, or NIL. */
static uint32_t find_pend(const run *R, uint32_t tid, uint64_t ts, uint32_t cpu)
{
    uint32_t i = etl_idmap_get(&R->pend_ix, pend_key(tid, ts, cpu));
    if (i == ETL_IDMAP_EMPTY) return NIL;
    const pend *e = &R->pend[i];
    return e->tid == tid && e->ts == ts && (tid || e->cpu == cpu) ? i : NIL;
}

/* A part came for pending sample i: user (true) closes it and the thread's older ones still waiting. */
static etl_status attach(run *R, uint32_t i, uint32_t stack, uint32_t pid, bool user)
{
    pend *e = &R->pend[i];
    e->pid = pid;
    if (!user) {
        if (e->kpart == NIL) e->kpart = stack;
        return ETL_OK;
    }
    e->upart = stack;
    tqueue *q = queue_of(R, e);
    for (uint32_t j = q->head, next; j != NIL; j = next) {
        next = R->pend[j].next;
        etl_status st = close_pend(R, j);
        if (st != ETL_OK || j == i) return st;
    }
    return ETL_OK;
}

/* ------------------------------------------------------------------ pass 2 */

static bool selected(const run *R, uint32_t tid, uint32_t pid, uint64_t ts)
{
    const etl_profile_options *o = R->o;
    if (o->tid >= 0 && (uint64_t)o->tid != tid) return false;
    if (o->pid >= 0 && ((uint64_t)o->pid != pid || pid == ETL_PID_UNKNOWN)) return false; /* no pid is no match */
    if (o->process) {
        const char *name = pid == 0 ? "Idle"
                           : pid == ETL_PID_UNKNOWN
                               ? "Unknown"
                               : etl_strtab_get(&R->im->names, etl_owners_process_name(&R->im->owners, pid, ts));
        size_t n = strlen(o->process);
        if (strncasecmp(name, o->process, n) != 0) return false;
        return name[n] == 0 || strcasecmp(name + n, ".exe") == 0;
    }
    return true;
}

static etl_status on_sample(run *R, const etl_record *rec)
{
    etl_sampled_profile s;
    if (etl_sampled_profile_decode(rec->payload, rec->pointer_size, &s) != ETL_OK) return ETL_OK;
    int64_t ns = etl_clock_ns(R->clk, rec->ts);
    if (R->p->v1 > R->p->v0 && (ns < R->p->v0 || ns >= R->p->v1)) return ETL_OK;
    uint32_t pid = etl_owners_pid(&R->im->owners, s.thread_id, rec->ts);
    if (!selected(R, s.thread_id, pid, rec->ts)) return ETL_OK;
    uint32_t thread, function;
    etl_status st = thread_row(R, s.thread_id, pid, rec->ts, &thread);
    if (st != ETL_OK) return st;
    uint32_t img = etl_image_map_find(&R->im->images, pid == ETL_PID_UNKNOWN ? 0 : pid, s.instruction_pointer, rec->ts);
    if ((st = function_row(R, s.instruction_pointer, img, &function)) != ETL_OK) return st;
    if ((st = count_cell(R, thread, function)) != ETL_OK) return st;
    R->p->samples++;
    R->r.threads[thread].samples++;
    R->r.functions[function].samples++;
    if (img == NIL) R->p->unknown++;
    return open_pend(R, thread, rec, &s, pid);
}

static etl_status on_walk(run *R, const etl_record *rec, uint16_t hook, uint64_t pos)
{
    uint64_t ets;
    uint32_t tid, pid, stack = NIL;
    bool user;
    etl_status st;
    if (hook == ETL_HOOK_STACKWALK) {
        etl_stackwalk w;
        if (etl_stackwalk_decode(rec->payload, rec->pointer_size, &w) != ETL_OK) return ETL_OK;
        ets = w.event_timestamp, tid = w.stack_thread, pid = w.stack_process;
        uint32_t i = find_pend(R, tid, ets, rec->cpu);
        if (i == NIL) {
            R->p->walks_other++;
            return ETL_OK;
        }
        uint64_t f[ETL_STACK_MAX_FRAMES];
        for (uint32_t k = 0; k < w.frame_count; k++) f[k] = etl_stack_frame(w.frames, w.ptr_size, k);
        if ((st = etl_seqtab_intern(&R->im->raw, f, w.frame_count, &stack)) != ETL_OK) return st;
        /* One walk with both parts (it ends in user space), or the kernel part of two, then the user part. */
        user = R->pend[i].kpart != NIL || (w.frame_count && !etl_image_kernel_addr(w.ptr_size, f[w.frame_count - 1]));
        return attach(R, i, stack, pid, user);
    }
    etl_stack_key_ref ref;
    if (etl_stack_key_ref_decode(rec->payload, rec->pointer_size, &ref) != ETL_OK) return ETL_OK;
    uint32_t i = find_pend(R, ref.stack_thread, ref.event_timestamp, rec->cpu);
    if (i == NIL) {
        R->p->walks_other++;
        return ETL_OK;
    }
    stack = etl_stack_keys_resolve(&R->im->keys, ref.stack_key, pos);
    if (stack == ETL_SEQ_NONE) {
        R->p->key_refs_unresolved++;
        return ETL_OK;
    }
    user = hook == ETL_HOOK_STACK_KEY_USER;
    return attach(R, i, stack, ref.stack_process, user);
}

/* ------------------------------------------------------------- finishing */

/* Sorting moves rows: each list sorts an index (perm) and the references are renumbered. */
typedef struct perm_sort {
    uint32_t i;
    uint64_t samples;
    uint64_t key;
} perm_sort;

static int cmp_perm(const void *a, const void *b)
{
    const perm_sort *x = a, *y = b;
    if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* new_of[old] for rows sorted most samples first, ties by key. NULL: out of memory. */
static uint32_t *sorted_perm(size_t n, const uint64_t *samples, const uint64_t *keys)
{
    perm_sort *v = malloc((n ? n : 1) * sizeof *v);
    uint32_t *new_of = malloc((n ? n : 1) * sizeof *new_of);
    if (!v || !new_of) {
        free(v);
        free(new_of);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) v[i] = (perm_sort){(uint32_t)i, samples[i], keys[i]};
    etl_sort(v, n, sizeof *v, cmp_perm);
    for (size_t i = 0; i < n; i++) new_of[v[i].i] = (uint32_t)i;
    free(v);
    return new_of;
}

static etl_status finish(run *R)
{
    etl_profile *p = R->p;
    prof_impl *im = R->im;
    /* Processes from the threads: (pid, name) -> row. */
    etl_idmap proc_ix;
    etl_idmap_init(&proc_ix);
    size_t capprocs = 0;
    for (size_t t = 0; t < R->r.nthreads; t++) {
        etl_profile_thread *th = &R->r.threads[t];
        uint32_t name = R->thread_pname[t];
        uint64_t key = (uint64_t)th->pid << 32 | name;
        uint32_t i = etl_idmap_get(&proc_ix, key);
        if (i == ETL_IDMAP_EMPTY) {
            void *g = grow(p->processes, &capprocs, p->nprocesses + 1, sizeof *p->processes);
            if (!g || etl_idmap_put(&proc_ix, key, (uint32_t)p->nprocesses) != ETL_OK) {
                etl_idmap_free(&proc_ix);
                return ETL_E_NOMEM;
            }
            p->processes = g;
            i = (uint32_t)p->nprocesses++;
            const char *s = th->pid == 0 && !name ? "Idle"
                            : th->pid == ETL_PROFILE_NONE || !name ? "Unknown"
                                                                   : etl_strtab_get(&im->names, name);
            p->processes[i] = (etl_profile_process){th->pid, s, 0};
        }
        th->process = i;
        p->processes[i].samples += th->samples;
        uint32_t tn = th->pid == ETL_PROFILE_NONE ? 0 : etl_owners_thread_name_of(&im->owners, th->tid, th->pid);
        th->name = etl_strtab_get(&im->names, tn);
    }
    etl_idmap_free(&proc_ix);

    /* Modules: names from the map's keys. */
    p->nmodules = R->module_ix.count;
    p->modules = calloc(p->nmodules ? p->nmodules : 1, sizeof *p->modules);
    if (!p->modules) return ETL_E_NOMEM;
    for (size_t s = 0; s < R->module_ix.cap; s++) {
        if (R->module_ix.vals[s] == ETL_IDMAP_EMPTY) continue;
        p->modules[R->module_ix.vals[s]].name = etl_strtab_get(&im->names, (uint32_t)R->module_ix.keys[s]);
    }
    for (size_t f = 0; f < R->r.nfunctions; f++) p->modules[R->r.functions[f].module].samples += R->r.functions[f].samples;

    /* Sort every list, renumbering the references to it. */
    size_t nmax = R->r.nthreads;
    if (p->nprocesses > nmax) nmax = p->nprocesses;
    if (p->nmodules > nmax) nmax = p->nmodules;
    if (R->r.nfunctions > nmax) nmax = R->r.nfunctions;
    if (R->r.nstacks > nmax) nmax = R->r.nstacks;
    uint64_t *sm = malloc((nmax ? nmax : 1) * sizeof *sm), *ky = malloc((nmax ? nmax : 1) * sizeof *ky);
    etl_status st = sm && ky ? ETL_OK : ETL_E_NOMEM;
    uint32_t *np = NULL, *nt = NULL, *nm = NULL, *nf = NULL, *ns = NULL;
    if (st == ETL_OK) {
        for (size_t i = 0; i < p->nprocesses; i++) sm[i] = p->processes[i].samples, ky[i] = p->processes[i].pid;
        np = sorted_perm(p->nprocesses, sm, ky);
        for (size_t i = 0; i < R->r.nthreads; i++)
            sm[i] = R->r.threads[i].samples, ky[i] = (uint64_t)R->r.threads[i].tid << 32 | R->r.threads[i].pid;
        nt = sorted_perm(R->r.nthreads, sm, ky);
        for (size_t i = 0; i < p->nmodules; i++) sm[i] = p->modules[i].samples, ky[i] = i;
        nm = sorted_perm(p->nmodules, sm, ky);
        for (size_t i = 0; i < R->r.nfunctions; i++) sm[i] = R->r.functions[i].samples, ky[i] = i;
        nf = sorted_perm(R->r.nfunctions, sm, ky);
        for (size_t i = 0; i < R->r.nstacks; i++) sm[i] = R->r.stacks[i].samples, ky[i] = i;
        ns = sorted_perm(R->r.nstacks, sm, ky);
        if (!np || !nt || !nm || !nf || !ns) st = ETL_E_NOMEM;
    }
    free(sm);
    free(ky);
    if (st == ETL_OK) {
        etl_profile_process *procs = malloc((p->nprocesses ? p->nprocesses : 1) * sizeof *procs);
        etl_profile_thread *threads = malloc((R->r.nthreads ? R->r.nthreads : 1) * sizeof *threads);
        etl_profile_module *mods = malloc((p->nmodules ? p->nmodules : 1) * sizeof *mods);
        etl_profile_function *funcs = malloc((R->r.nfunctions ? R->r.nfunctions : 1) * sizeof *funcs);
        etl_profile_stack *stacks = malloc((R->r.nstacks ? R->r.nstacks : 1) * sizeof *stacks);
        if (procs && threads && mods && funcs && stacks) {
            for (size_t i = 0; i < p->nprocesses; i++) procs[np[i]] = p->processes[i];
            for (size_t i = 0; i < R->r.nthreads; i++) {
                threads[nt[i]] = R->r.threads[i];
                threads[nt[i]].process = np[R->r.threads[i].process];
            }
            for (size_t i = 0; i < p->nmodules; i++) mods[nm[i]] = p->modules[i];
            for (size_t i = 0; i < R->r.nfunctions; i++) {
                funcs[nf[i]] = R->r.functions[i];
                funcs[nf[i]].module = nm[R->r.functions[i].module];
            }
            for (size_t i = 0; i < R->r.nstacks; i++) {
                stacks[ns[i]] = R->r.stacks[i];
                stacks[ns[i]].thread = nt[R->r.stacks[i].thread];
            }
            for (size_t i = 0; i < R->r.ncells; i++) {
                R->r.cells[i].thread = nt[R->r.cells[i].thread];
                R->r.cells[i].function = nf[R->r.cells[i].function];
            }
            free(p->processes);
            free(p->modules);
            p->processes = procs;
            p->modules = mods;
            p->threads = threads;
            p->functions = funcs;
            p->stacks = stacks;
            p->nthreads = R->r.nthreads;
            p->nfunctions = R->r.nfunctions;
            p->nstacks = R->r.nstacks;
            procs = NULL, threads = NULL, mods = NULL, funcs = NULL, stacks = NULL;
        } else {
            st = ETL_E_NOMEM;
        }
        free(procs);
        free(threads);
        free(mods);
        free(funcs);
        free(stacks);
    }
    free(np);
    free(nt);
    free(nm);
    free(nf);
    free(ns);
    if (st != ETL_OK) return st;

    /* The cells (pivot's base) move into impl; the frames become etl_profile_frame. */
    im->cells = R->r.cells;
    im->ncells = R->r.ncells;
    R->r.cells = NULL;
    im->frames = malloc((im->resolved.nwords / 2 + 1) * sizeof *im->frames);
    if (!im->frames) return ETL_E_NOMEM;
    for (size_t w = 0; w + 1 < im->resolved.nwords; w += 2)
        im->frames[w / 2] = (etl_profile_frame){im->resolved.words[w], (uint32_t)im->resolved.words[w + 1]};

    /* Images, in the order logged. */
    p->nimages = im->images.n;
    p->images = calloc(p->nimages ? p->nimages : 1, sizeof *p->images);
    if (!p->images) return ETL_E_NOMEM;
    for (size_t i = 0; i < p->nimages; i++) {
        const etl_image_inst *m = &im->images.v[i];
        p->images[i] = (etl_profile_image){m->base, m->size, m->pid,
                                           etl_strtab_get(&im->names, m->name), etl_strtab_get(&im->names, m->path),
                                           m->time_date_stamp, m->checksum,
                                           m->from_ts ? etl_clock_ns(R->clk, m->from_ts) : INT64_MIN,
                                           m->to_ts != UINT64_MAX ? etl_clock_ns(R->clk, m->to_ts) : INT64_MAX,
                                           m->kernel};
    }
    return ETL_OK;
}

/* ------------------------------------------------------------------ the run */

static void report(const etl_profile_options *o, const etl_iter *it, uint64_t before, uint64_t total)
{
    if (o->progress) o->progress(o->progress_ctx, before + etl_iter_progress(it), total);
}

static etl_status pass1(etl_reader *r, prof_impl *im, const etl_profile_options *o, etl_profile *p, uint64_t total,
                        uint64_t *last_ts, bool *walks)
{
    etl_iter *it;
    etl_status st = etl_iter_open(r, ETL_ORDER_TIME, &it);
    if (st != ETL_OK) return st;
    etl_record rec;
    uint64_t pos = 0;
    bool have_interval = false;
    while (st == ETL_OK && etl_iter_next(it, &rec) == ETL_OK) {
        if ((++pos & 0xFFFF) == 0) report(o, it, 0, total);
        if (rec.ts > *last_ts) *last_ts = rec.ts;
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook)) continue;
        if (pass1_hook(hook)) st = learn(im, &rec, hook, pos, p, &have_interval);
        else if (hook == ETL_HOOK_STACKWALK || hook == ETL_HOOK_STACK_KEY_KERNEL || hook == ETL_HOOK_STACK_KEY_USER)
            *walks = true;
    }
    etl_iter_close(it);
    return st;
}

static etl_status pass2(etl_reader *r, run *R, uint64_t total)
{
    etl_iter *it;
    etl_status st = etl_iter_open(r, ETL_ORDER_TIME, &it);
    if (st != ETL_OK) return st;
    etl_record rec;
    uint64_t pos = 0;
    uint64_t half = etl_reader_file_size(r);
    while (st == ETL_OK && etl_iter_next(it, &rec) == ETL_OK) {
        if ((++pos & 0xFFFF) == 0) report(R->o, it, half, total);
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook)) continue;
        if (hook == ETL_HOOK_SAMPLED_PROFILE) st = on_sample(R, &rec);
        else if (hook == ETL_HOOK_STACKWALK || hook == ETL_HOOK_STACK_KEY_KERNEL || hook == ETL_HOOK_STACK_KEY_USER)
            st = on_walk(R, &rec, hook, pos);
    }
    /* The trace's end: whatever still waits is counted with what it has. */
    for (size_t t = 0; st == ETL_OK && t < R->r.nthreads; t++)
        while (st == ETL_OK && R->q[t].head != NIL) st = close_pend(R, R->q[t].head);
    for (size_t c = 0; st == ETL_OK && c < R->capidleq; c++)
        while (st == ETL_OK && R->idleq[c].head != NIL) st = close_pend(R, R->idleq[c].head);
    R->p->st = *etl_iter_stats_get(it);
    etl_iter_close(it);
    return st;
}

static void run_free(run *R)
{
    free(R->r.threads);
    free(R->r.functions);
    free(R->r.stacks);
    free(R->r.cells);
    etl_idmap_free(&R->thread_ix);
    etl_idmap_free(&R->cell_ix);
    etl_idmap_free(&R->stack_ix[0]);
    etl_idmap_free(&R->stack_ix[1]);
    etl_idmap_free(&R->module_ix);
    etl_seqtab_free(&R->fkeys);
    free(R->thread_pname);
    free(R->pend);
    etl_idmap_free(&R->pend_ix);
    free(R->q);
    free(R->idleq);
    free(R->frames);
    free(R->pairs);
}

etl_status etl_profile_run(etl_reader *r, const etl_profile_options *opts, etl_profile *p)
{
    memset(p, 0, sizeof *p);
    etl_profile_options o = {sizeof o, 0, 0, -1, NULL, -1, NULL, NULL};
    etl_opts_take(&o, sizeof o, opts);
    prof_impl *im = calloc(1, sizeof *im);
    if (!im) return ETL_E_NOMEM;
    p->impl = im;
    p->interval_ns = 1000000; /* 10,000 x 100 ns: Windows' default when nothing is logged */
    etl_strtab_init(&im->names);
    etl_owners_init(&im->owners, &im->names);
    etl_image_map_init(&im->images, etl_reader_header(r)->pointer_size, &im->names);
    etl_stack_keys_init(&im->keys);
    etl_seqtab_init(&im->raw);
    etl_seqtab_init(&im->resolved);

    const etl_clock *clk = etl_reader_clock(r);
    uint64_t total = 2 * etl_reader_file_size(r), last_ts = 0;
    bool walks = false;
    etl_status st = pass1(r, im, &o, p, total, &last_ts, &walks);
    if (st != ETL_OK) return st;
    etl_owners_seal(&im->owners);
    etl_stack_keys_seal(&im->keys);
    if ((st = etl_image_map_seal(&im->images)) != ETL_OK) return st;

    /* The window: --range clipped to [0, the last record]; the whole trace otherwise (nothing left out). */
    int64_t end = last_ts ? etl_clock_ns(clk, last_ts) : 0;
    if (o.v1 > o.v0) {
        p->v0 = o.v0 < 0 ? 0 : o.v0;
        p->v1 = o.v1 > end ? end + 1 : o.v1;
        if (p->v1 <= p->v0) p->v1 = p->v0 + 1; /* a window past the end: empty, still a window */
    } else {
        p->v0 = 0;
        p->v1 = 0;
    }

    run R = {0};
    R.im = im;
    R.o = &o;
    R.p = p;
    R.clk = clk;
    R.free_pend = NIL;
    R.walks = walks;
    etl_idmap_init(&R.thread_ix);
    etl_idmap_init(&R.cell_ix);
    etl_idmap_init(&R.stack_ix[0]);
    etl_idmap_init(&R.stack_ix[1]);
    etl_idmap_init(&R.module_ix);
    etl_idmap_init(&R.pend_ix);
    etl_seqtab_init(&R.fkeys);
    R.frames = malloc(2 * ETL_STACK_MAX_FRAMES * sizeof *R.frames);
    R.pairs = malloc(4 * ETL_STACK_MAX_FRAMES * sizeof *R.pairs);
    st = R.frames && R.pairs ? etl_strtab_add(&im->names, "Unknown", 7, &R.unknown_name) : ETL_E_NOMEM;
    if (st == ETL_OK) st = pass2(r, &R, total);
    if (st == ETL_OK) st = finish(&R);
    if (o.v1 <= o.v0) {
        p->v0 = 0;
        p->v1 = end;
    }
    run_free(&R);
    return st;
}

void etl_profile_free(etl_profile *p)
{
    prof_impl *im = p->impl;
    if (im) {
        etl_strtab_free(&im->names);
        etl_owners_free(&im->owners);
        etl_image_map_free(&im->images);
        etl_stack_keys_free(&im->keys);
        etl_seqtab_free(&im->raw);
        etl_seqtab_free(&im->resolved);
        free(im->cells);
        free(im->frames);
        free(im);
    }
    free(p->threads);
    free(p->processes);
    free(p->modules);
    free(p->functions);
    free(p->stacks);
    free(p->images);
    memset(p, 0, sizeof *p);
}

const etl_profile_frame *etl_profile_stack_frames(const etl_profile *p, uint32_t stack, uint32_t *n)
{
    const prof_impl *im = p->impl;
    uint32_t words;
    const uint64_t *w = etl_seqtab_get(&im->resolved, stack, &words);
    *n = words / 2;
    return im->frames + (w - im->resolved.words) / 2;
}

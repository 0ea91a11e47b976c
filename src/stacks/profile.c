/*
 * profile.c - CPU Usage (Sampled): two passes over a trace (see etlkit/profile.h).
 *
 * Pass 1 (stacks/learn.h) builds what the whole trace tells: owners (thread ->
 * process, names), the image map, the sampling interval and the stack-key
 * definitions. Pass 2
 * counts the samples and hands them to attach.c, which gives back each one with
 * its stack (none when no walk came); closing a sample interns its stack, the
 * frames mapped to images, and counts it for (thread, stack).
 */
#include "etlkit/profile.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "base/grow.h"
#include "base/idmap.h"
#include "base/pairmap.h"
#include "base/opts.h"
#include "base/pipe.h"
#include "base/sort.h"
#include "etlkit/event.h"
#include "etlkit/sched.h"
#include "stacks/attach.h"
#include "stacks/images.h"
#include "stacks/learn.h"
#include "stacks/owners.h"
#include "stacks/profile_internal.h"
#include "stacks/seqtab.h"
#include "stacks/stack_keys.h"
#include "stacks/strtab.h"

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
    etl_pairmap cell_of;    /* (module row << 40 | offset, thread) or (address, thread | 1 << 31) -> cell */
    etl_idmap cell_ix;      /* thread << 32 | function -> cell, for the pairs cell_of cannot hold */
    etl_idmap stack_ix[2];  /* thread << 32 | resolved stack -> stack row, [walked] */
    etl_idmap module_ix;    /* module name (strtab offset) -> module row */
    etl_idmap fshort;       /* module row << 40 | offset -> function row, for an image's offsets below 2^40 */
    etl_idmap funknown;     /* address -> function row, for the addresses in no image */
    etl_seqtab flong;       /* (module row, offset) -> flong_row, for the rest (a hostile ImageSize) */
    uint32_t *flong_row;
    size_t capflong;
    uint32_t *thread_pname; /* by thread row: the process name (strtab) at its first sample */
    etl_attach at;          /* the samples waiting for their walks */
    uint64_t *pairs;        /* scratch: a closing sample's [address, image] pairs */
    uint32_t unknown_name;
    uint32_t hint[64];      /* etl_image_map_find's, by a hash of the process and the address's 64 KiB */
    bool stacks;            /* the stacks kept (not etl_profile_options.no_stacks) */
    bool ranged;            /* a --range: samples outside [p->v0, p->v1) are left out (one at end_ns counts) */
    int64_t end_ns;         /* the trace's end */
    etl_profile_sample_fn on_each; /* etl_profile_run_each's callback, or NULL */
    void *each_ctx;
    /* Pass 2's reader (see "the reader" below): its own, apart from the counter's above. */
    etl_reader *reader;
    etl_pipe *pipe;         /* to the counter, or NULL: one thread */
    uint64_t samples_in_trace;
    uint64_t ips_noncanonical; /* SampledProfile events whose InstructionPointer no x64 code can have (damage) */
    etl_stats iter_stats;
    uint64_t progress_before, progress_total;
} run;

/* ------------------------------------------------------------------ pass 1 */

static etl_status learn(prof_impl *im, const etl_record *rec, uint16_t hook, etl_profile *p, bool *have_interval)
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
    default:
        return ETL_OK;
    }
}

/* Lifetime, image and interval records (pass1_hook), learned in stream order. */
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

#define GROW(arr, n, cap)                                                          \
    do {                                                                           \
        void *g_ = etl_grow((arr), &(cap), (n) + 1, sizeof *(arr));                    \
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
    i = (uint32_t)R->r.nthreads;
    etl_profile_thread *t = &R->r.threads[i];
    memset(t, 0, sizeof *t);
    t->tid = tid;
    t->pid = pid == ETL_PID_UNKNOWN ? ETL_PROFILE_NONE : pid;
    t->name = NULL; /* set at the end, when the names no longer move */
    R->thread_pname[i] = pid == ETL_PID_UNKNOWN ? 0 : etl_owners_process_name(&R->im->owners, pid, ts);
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

/* The function of an address in image (ETL_IMAGE_NONE: Unknown). */
static etl_status function_row(run *R, uint64_t addr, uint32_t image, uint32_t *row)
{
    const etl_image_inst *img = image == ETL_IMAGE_NONE ? NULL : &R->im->images.v[image];
    uint32_t mod;
    etl_status st = module_row(R, img ? img->name : R->unknown_name, &mod);
    if (st != ETL_OK) return st;
    uint64_t key[2] = {mod, img ? addr - img->base : addr};
    uint32_t id;
    etl_idmap *m = !img ? &R->funknown : mod < 1u << 24 && key[1] < 1ull << 40 ? &R->fshort : NULL;
    if (m) {
        uint64_t k = img ? (uint64_t)mod << 40 | key[1] : addr;
        if ((id = etl_idmap_get(m, k)) == ETL_IDMAP_EMPTY) {
            id = (uint32_t)R->r.nfunctions;
            if ((st = etl_idmap_put(m, k, id)) != ETL_OK) return st;
        }
    } else {
        uint32_t seq, n = R->flong.count;
        if ((st = etl_seqtab_intern(&R->flong, key, 2, &seq)) != ETL_OK) return st;
        if (seq == n) {
            uint32_t *g = etl_grow(R->flong_row, &R->capflong, (size_t)n + 1, sizeof *g);
            if (!g) return ETL_E_NOMEM;
            R->flong_row = g;
            g[n] = (uint32_t)R->r.nfunctions;
        }
        id = R->flong_row[seq];
    }
    if (id == R->r.nfunctions) {
        GROW(R->r.functions, R->r.nfunctions, R->r.capfunctions);
        R->r.functions[id] = (etl_profile_function){mod, key[1], 0};
        R->r.nfunctions++;
    }
    *row = id;
    return ETL_OK;
}

/* The cell of (thread, function), made at its first sample. */
static etl_status cell_row(run *R, uint32_t thread, uint32_t function, uint32_t *row)
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
    *row = i;
    return ETL_OK;
}

/*
 * The cell of a sample of thread at addr in image (ETL_IMAGE_NONE: none). Its
 * function's key (module row and offset, or the address in no image) with the
 * thread is one cell_of pair: a sample touches that slot and its cell, not the
 * function rows (their samples are summed from the cells at the end). What the
 * pair cannot hold (2^24 module names, 2^31 thread rows: images.c keeps sizes
 * below 2^32) goes by function row.
 */
static etl_status sample_cell(run *R, uint32_t thread, uint64_t addr, uint32_t image, uint32_t *cell)
{
    const etl_image_inst *img = image == ETL_IMAGE_NONE ? NULL : &R->im->images.v[image];
    uint32_t mod = 0;
    etl_status st = img ? module_row(R, img->name, &mod) : ETL_OK;
    if (st != ETL_OK) return st;
    uint64_t off = img ? addr - img->base : addr;
    bool paired = thread < 1u << 31 && (!img || (mod < 1u << 24 && off < 1ull << 40));
    uint64_t a = img ? (uint64_t)mod << 40 | off : addr;
    uint32_t b = thread | (img ? 0 : 1u << 31);
    if (paired && (*cell = etl_pairmap_get(&R->cell_of, a, b)) != ETL_IDMAP_EMPTY) return ETL_OK;
    uint32_t function;
    if ((st = function_row(R, addr, image, &function)) != ETL_OK) return st;
    if (!paired) return cell_row(R, thread, function, cell);
    GROW(R->r.cells, R->r.ncells, R->r.capcells);
    *cell = (uint32_t)R->r.ncells;
    R->r.cells[*cell] = (prof_cell){thread, function, 0};
    if ((st = etl_pairmap_put(&R->cell_of, a, b, *cell)) != ETL_OK) return st;
    R->r.ncells++;
    return ETL_OK;
}

static etl_status count_stack(run *R, uint32_t thread, uint32_t stack, bool walked, uint64_t ts)
{
    uint64_t key = (uint64_t)thread << 32 | stack;
    etl_idmap *ix = &R->stack_ix[walked];
    uint32_t i = etl_idmap_get(ix, key);
    if (i == ETL_IDMAP_EMPTY) {
        GROW(R->r.stacks, R->r.nstacks, R->r.capstacks);
        i = (uint32_t)R->r.nstacks;
        R->r.stacks[i] = (etl_profile_stack){thread, stack, walked, 0, ts};
        etl_status st = etl_idmap_put(ix, key, i);
        if (st != ETL_OK) return st;
        R->r.nstacks++;
    }
    R->r.stacks[i].samples++;
    if (ts < R->r.stacks[i].first_ts) R->r.stacks[i].first_ts = ts; /* samples close out of time order */
    return ETL_OK;
}

/* ---------------------------------------------------------- the counter */

/* The image of an address, with a hint per (process, 64 KiB of addresses): frames repeat. */
static uint32_t find_image(run *R, uint32_t pid, uint64_t addr, uint64_t ts)
{
    uint32_t *hint = &R->hint[etl_hash_mix64(addr >> 16 ^ (uint64_t)pid << 48) & 63];
    return etl_image_map_find(&R->im->images, pid, addr, ts, hint);
}

/* A sample in the window, of tid in process pid (ETL_PID_UNKNOWN: none) at ts: counted for its thread and address. */
static etl_status count_sample(run *R, uint64_t ts, uint32_t tid, uint32_t pid, uint64_t ip)
{
    uint32_t thread, cell;
    etl_status st = thread_row(R, tid, pid, ts, &thread);
    if (st != ETL_OK) return st;
    uint32_t img = find_image(R, pid == ETL_PID_UNKNOWN ? 0 : pid, ip, ts);
    if ((st = sample_cell(R, thread, ip, img, &cell)) != ETL_OK) return st;
    R->p->samples++;
    R->r.threads[thread].samples++;
    R->r.cells[cell].samples++;
    if (img == ETL_IMAGE_NONE) R->p->unknown++;
    return ETL_OK;
}

static bool selected(const run *R, uint32_t tid, uint32_t pid, uint64_t ts);

/* The cookie of a sample's etl_attach_event: its process (ETL_PID_UNKNOWN: none yet), its address, and whether
 * it waits for its walk to be selected and counted (a thread no Thread event names: its walk names the process). */
#define COOKIE_PENDING (1ull << 32)

/*
 * A sample closed with its stack (ev: as attach.c closed it, its cookie as read_sample
 * made it): one whose thread no Thread event names takes the process its walk names
 * (StackProcess), then is selected and counted; the frames are mapped to images in
 * the sample's process at the sample's time, as its address was (one process for
 * both: the outputs agree), interned and counted; a sample no walk came with counts as
 * the one frame of its address.
 */
static etl_status count_stack_of(run *R, const etl_attach_event *ev, const uint64_t *frames, uint32_t n, bool walked)
{
    uint32_t pid = (uint32_t)ev->cookie[0];
    uint64_t ip = ev->cookie[1];
    etl_status st;
    if (ev->cookie[0] & COOKIE_PENDING) {
        if (walked && ev->pid != ETL_PID_UNKNOWN) pid = ev->pid;
        if (!selected(R, ev->tid, pid, ev->ts)) return ETL_OK;
        if ((st = count_sample(R, ev->ts, ev->tid, pid, ip)) != ETL_OK) return st;
        if (pid != ETL_PID_UNKNOWN) R->im->anomalies[ETL_PROFILE_PROCESS_FROM_WALK]++;
    } else if (walked && ev->pid != pid) {
        R->im->anomalies[ETL_PROFILE_PROCESS_DISAGREES]++; /* the thread's stands (README) */
    }
    uint32_t in = pid == ETL_PID_UNKNOWN ? 0 : pid; /* the space count_sample mapped the address in */
    uint32_t thread;
    st = thread_row(R, ev->tid, pid, ev->ts, &thread); /* counted: it is there */
    if (st != ETL_OK) return st;
    /* A stack that does not begin at the sample's address lost a part, mostly (the kernel part of a kernel address:
     * the user part alone would read as the whole stack): counted, in every form (attach.c's leaf). */
    if (walked && (!ev->has_leaf || ev->leaf != ip)) R->im->anomalies[ETL_PROFILE_STACKS_NOT_AT_IP]++;
    if (!R->stacks) { /* only that one came */
        if (walked) R->p->with_stack++, R->r.threads[thread].with_stack++;
        return ETL_OK;
    }
    if (!walked) frames = &ip, n = 1;
    for (uint32_t k = 0; k < n; k++) {
        R->pairs[2 * k] = frames[k];
        R->pairs[2 * k + 1] = find_image(R, in, frames[k], ev->ts);
    }
    uint32_t stack;
    st = etl_seqtab_intern(&R->im->resolved, R->pairs, 2 * n, &stack);
    if (st == ETL_OK) st = count_stack(R, thread, stack, walked, ev->ts);
    if (st == ETL_OK && R->on_each) {
        uint32_t tpid = R->r.threads[thread].pid; /* pid, as the rows say it */
        etl_profile_sample s = {ev->ts, etl_clock_ns(R->clk, ev->ts), ev->cpu, ev->tid, tpid, ip,
                                find_image(R, in, ip, ev->ts), stack, walked};
        st = R->on_each(R->each_ctx, &s);
    }
    if (st == ETL_OK && walked) {
        R->p->with_stack++;
        R->r.threads[thread].with_stack++;
    }
    return st;
}

/* ----------------------------------------------------------- the reader */

/*
 * Pass 2 has two stages: the reader (the time-ordered records, the window and
 * the filters, the walks attached: attach.c) and the counter (rows, images,
 * interned stacks). With a second thread the reader runs on it and sends its
 * calls to the counter as messages through a pipe (base/pipe.h); the counter
 * takes them on the caller's thread in the order they were made, so every row
 * and id is what one thread gives. With one thread the reader calls the counter.
 */
/* The pipe between pass 2's two threads (base/pipe.h): 8 blocks of 64 KiB. */
#define PIPE_BLOCK 65536u
#define PIPE_BLOCKS 8u

enum { MSG_SAMPLE = 1, MSG_STACK, MSG_PROGRESS };

typedef struct msg {
    uint32_t kind;
    uint32_t n;         /* MSG_STACK: frames following */
    etl_attach_event ev; /* MSG_SAMPLE: ts, tid, cpu; MSG_STACK: as closed; cookie: {process, ip} */
    uint8_t walked;
    uint64_t done;      /* MSG_PROGRESS: the bytes read */
} msg;
/* attach.c closes an event with both its parts, at most 2 * ETL_STACK_MAX_FRAMES frames. */
_Static_assert(sizeof(msg) + 2 * ETL_STACK_MAX_FRAMES * sizeof(uint64_t) <= PIPE_BLOCK,
               "a message fits a block");

static etl_status send_sample(run *R, const etl_attach_event *ev)
{
    if (!R->pipe) return count_sample(R, ev->ts, ev->tid, (uint32_t)ev->cookie[0], ev->cookie[1]);
    msg *m = etl_pipe_put(R->pipe, sizeof *m);
    if (!m) return ETL_END;
    *m = (msg){.kind = MSG_SAMPLE, .ev = *ev};
    return ETL_OK;
}

/* attach.c's on_close. */
static etl_status send_stack(void *ctx, const etl_attach_event *ev, const uint64_t *frames, uint32_t n, bool walked)
{
    run *R = ctx;
    if (!R->pipe) return count_stack_of(R, ev, frames, n, walked);
    msg *m = etl_pipe_put(R->pipe, sizeof *m + (size_t)n * sizeof *frames);
    if (!m) return ETL_END;
    *m = (msg){.kind = MSG_STACK, .n = n, .ev = *ev, .walked = walked};
    if (n) memcpy(m + 1, frames, (size_t)n * sizeof *frames);
    return ETL_OK;
}

static etl_status send_progress(run *R, uint64_t done)
{
    const etl_profile_options *o = R->o;
    if (!o->progress) return ETL_OK;
    if (!R->pipe) {
        o->progress(o->progress_ctx, R->progress_before + done, R->progress_total);
        return ETL_OK;
    }
    msg *m = etl_pipe_put(R->pipe, sizeof *m);
    if (!m) return ETL_END;
    *m = (msg){.kind = MSG_PROGRESS, .done = done};
    return ETL_OK;
}

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

static etl_status read_sample(run *R, const etl_record *rec)
{
    etl_sampled_profile s;
    if (etl_sampled_profile_decode(rec->payload, rec->pointer_size, &s) != ETL_OK) return ETL_OK;
    R->samples_in_trace++;
    if (__builtin_expect(etl_addr_noncanonical(rec->pointer_size, s.instruction_pointer), 0)) {
        R->ips_noncanonical++; /* damage, told where it lies; the sample counts, in no image */
        etl_stacks_address_damage(R->reader, &R->at.damage, rec, "hook 0x0f2e, a SampledProfile event's "
                                  "InstructionPointer", s.instruction_pointer);
    }
    int64_t ns = etl_clock_ns(R->clk, rec->ts);
    const etl_profile *p = R->p; /* [v0, v1), and the end itself when the window reaches it */
    if (R->ranged && !(ns >= p->v0 && (ns < p->v1 || (ns == R->end_ns && p->v1 == ns && p->v0 < p->v1)))) return ETL_OK;
    uint32_t pid = etl_owners_pid(&R->im->owners, s.thread_id, rec->ts);
    /* A thread no Thread event names: its walk's StackProcess is the only witness of its process, known when the
     * sample closes; it is selected and counted then (count_stack_of). */
    bool pending = pid == ETL_PID_UNKNOWN;
    if (pending ? R->o->tid >= 0 && (uint64_t)R->o->tid != s.thread_id : !selected(R, s.thread_id, pid, rec->ts))
        return ETL_OK;
    etl_attach_event ev = {rec->ts, s.thread_id, rec->cpu, pending ? 0 : pid,
                           {pid | (pending ? COOKIE_PENDING : 0), s.instruction_pointer}, 0, false};
    /* Counted first: attaching may close older samples, whose stacks come after it. */
    etl_status st = pending ? ETL_OK : send_sample(R, &ev);
    return st == ETL_OK ? etl_attach_event_add(&R->at, &ev) : st;
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
            void *g = etl_grow(p->processes, &capprocs, p->nprocesses + 1, sizeof *p->processes);
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

    /* Functions: their samples, their cells'. */
    for (size_t c = 0; c < R->r.ncells; c++) R->r.functions[R->r.cells[c].function].samples += R->r.cells[c].samples;

    /* Modules: names from the map's keys. */
    p->nmodules = R->module_ix.count;
    p->modules = calloc(p->nmodules ? p->nmodules : 1, sizeof *p->modules);
    if (!p->modules) return ETL_E_NOMEM;
    for (size_t s = 0; s < R->module_ix.cap; s++) {
        const etl_idmap_slot *e = &R->module_ix.slots[s];
        if (e->val != ETL_IDMAP_EMPTY) p->modules[e->val].name = etl_strtab_get(&im->names, (uint32_t)e->key);
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
        for (size_t i = 0; i < R->r.nstacks; i++) sm[i] = R->r.stacks[i].samples, ky[i] = R->r.stacks[i].first_ts;
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
        p->images[i] = (etl_profile_image){m->base, m->logged_size, m->pid,
                                           etl_strtab_get(&im->names, m->name), etl_strtab_get(&im->names, m->path),
                                           m->time_date_stamp, m->checksum,
                                           m->from_ts ? etl_clock_ns(R->clk, m->from_ts) : INT64_MIN,
                                           m->to_ts != UINT64_MAX ? etl_clock_ns(R->clk, m->to_ts) : INT64_MAX,
                                           m->kernel};
    }
    return ETL_OK;
}

/* ------------------------------------------------------------------ the run */

static bool walk_hook(uint16_t hook)
{
    return hook == ETL_HOOK_STACKWALK || hook == ETL_HOOK_STACK_KEY_KERNEL || hook == ETL_HOOK_STACK_KEY_USER;
}

static bool pass2_keep(uint16_t hook)
{
    return hook == ETL_HOOK_SAMPLED_PROFILE || walk_hook(hook);
}

/* Pass 1 (stacks/learn.h): the key definitions, and the records of pass1_hook learned in stream order. */
typedef struct pass1_ctx {
    etl_reader *r;
    prof_impl *im;
    etl_profile *p;
    const etl_profile_options *o;
    uint64_t total;
    bool have_interval;
    etl_stats damage;       /* what the records learned from told (an impossible ImageSize) */
} pass1_ctx;

static etl_status pass1_record(void *ctx, const etl_record *rec, uint16_t hook)
{
    pass1_ctx *c = ctx;
    uint64_t bad = c->im->images.bad_sizes;
    etl_status st = learn(c->im, rec, hook, c->p, &c->have_interval);
    if (c->im->images.bad_sizes != bad) etl_stacks_image_damage(c->r, &c->damage, rec, hook, &c->im->images);
    return st;
}

static void pass1_progress(void *ctx, uint64_t done)
{
    pass1_ctx *c = ctx;
    if (c->o->progress) c->o->progress(c->o->progress_ctx, done, c->total);
}

static etl_status pass1(etl_reader *r, prof_impl *im, etl_stack_keys *keys, const etl_profile_options *o,
                        etl_profile *p, uint64_t total, unsigned threads, uint64_t *last_ts, etl_stats *damage)
{
    pass1_ctx c = {r, im, p, o, total, false, {0}};
    c.damage.first_problem_offset = UINT64_MAX;
    etl_learn l = {.want = pass1_hook, .on_record = pass1_record, .ctx = &c, .keys = keys,
                   .progress = pass1_progress, .progress_ctx = &c, .threads = threads, .damage = &c.damage};
    etl_status st = etl_stacks_learn(r, &l);
    *last_ts = l.last_ts;
    *damage = c.damage;
    im->anomalies[ETL_PROFILE_WALKS_CUT] += l.defs_cut;
    im->anomalies[ETL_PROFILE_ADDRESSES_NONCANONICAL] += l.defs_noncanonical;
    im->anomalies[ETL_PROFILE_IMAGE_SIZES_BAD] = im->images.bad_sizes;
    return st;
}

/* Most walks are other events' (CSwitch, ReadyThread): refused before the merge. */
static bool pass2_filter(void *ctx, const etl_record *rec)
{
    uint16_t hook;
    return !etl_record_kernel_hook(rec, &hook) || !walk_hook(hook) || etl_attach_wanted(&((run *)ctx)->at, rec, hook);
}

/* pass2_filter's for the kernel records the iterator frames from their header. */
static bool pass2_kfilter(void *ctx, const etl_krec *k, unsigned cpu)
{
    run *R = ctx;
    return !walk_hook(k->hook) || etl_attach_wanted_payload(&R->at, k->hook, k->payload, k->pointer_size, cpu);
}

/* The reader of pass 2 (etl_pipe_run's; ETL_END: the counter stopped it). */
static etl_status read_pass2(void *ctx, etl_pipe *pipe)
{
    run *R = ctx;
    R->pipe = pipe;
    etl_iter *it;
    etl_status st = etl_stacks_open_pass(R->reader, pass2_keep, pass2_filter, R, &it);
    if (st != ETL_OK) return st;
    etl_iter_keep_kernel(it, pass2_kfilter, R);
    const etl_record *rec;
    uint64_t n = 0;
    while (st == ETL_OK && etl_iter_next_ref(it, &rec) == ETL_OK) {
        if ((++n & 0xFFFF) == 0 && (st = send_progress(R, etl_iter_progress(it))) != ETL_OK) break;
        uint16_t hook;
        if (!etl_record_kernel_hook(rec, &hook)) continue;
        if (hook == ETL_HOOK_SAMPLED_PROFILE) st = read_sample(R, rec);
        else if (walk_hook(hook))
            st = etl_attach_walk(&R->at, rec, hook, etl_stack_pos_of(rec, etl_iter_merge_ts(it)));
    }
    /* The trace's end: whatever still waits is counted with what it has. */
    if (st == ETL_OK) st = etl_attach_finish(&R->at);
    R->iter_stats = *etl_iter_stats_get(it);
    etl_iter_close(it);
    return st;
}

/* The counter (etl_pipe_run's), on the caller's thread: a block of the reader's messages, in order. */
static etl_status count_pass2(void *ctx, const void *block, size_t n)
{
    run *R = ctx;
    const uint8_t *b = block;
    etl_status st = ETL_OK;
    for (size_t off = 0; st == ETL_OK && off < n;) {
        const msg *m = (const msg *)(b + off);
        off += sizeof *m + (size_t)m->n * sizeof(uint64_t);
        const etl_attach_event *ev = &m->ev;
        if (m->kind == MSG_SAMPLE)
            st = count_sample(R, ev->ts, ev->tid, (uint32_t)ev->cookie[0], ev->cookie[1]);
        else if (m->kind == MSG_STACK)
            st = count_stack_of(R, ev, (const uint64_t *)(m + 1), m->n, m->walked);
        else
            R->o->progress(R->o->progress_ctx, R->progress_before + m->done, R->progress_total);
    }
    return st;
}

/* Pass 2 on threads (at most two: the reader and the counter, which calls on_each). */
static etl_status pass2(run *R, unsigned threads)
{
    etl_status st = etl_pipe_run(threads, PIPE_BLOCK, PIPE_BLOCKS, read_pass2, count_pass2, R);
    R->pipe = NULL;
    etl_profile *p = R->p;
    p->samples_in_trace = R->samples_in_trace;
    p->walks_other = R->at.stats.walks_other;
    p->key_refs_unresolved = R->at.stats.key_refs_unresolved;
    p->user_parts_dropped = R->at.stats.user_parts_dropped;
    R->im->anomalies[ETL_PROFILE_WALKS_CUT] += R->at.stats.walks_cut;
    R->im->anomalies[ETL_PROFILE_WALKS_REPEATED] = R->at.stats.walks_repeated;
    R->im->anomalies[ETL_PROFILE_KEY_REFS_UNCERTAIN] = R->at.stats.key_refs_uncertain;
    R->im->anomalies[ETL_PROFILE_ADDRESSES_NONCANONICAL] += R->at.stats.walks_noncanonical + R->ips_noncanonical;
    p->st = R->iter_stats;
    const etl_stats none = {.first_problem_offset = UINT64_MAX};
    etl_stats_add(&p->st, &R->at.damage, &none); /* what the walks and samples held */
    return st;
}

static void run_free(run *R)
{
    free(R->r.threads);
    free(R->r.functions);
    free(R->r.stacks);
    free(R->r.cells);
    etl_idmap_free(&R->thread_ix);
    etl_pairmap_free(&R->cell_of);
    etl_idmap_free(&R->cell_ix);
    etl_idmap_free(&R->stack_ix[0]);
    etl_idmap_free(&R->stack_ix[1]);
    etl_idmap_free(&R->module_ix);
    etl_idmap_free(&R->fshort);
    etl_idmap_free(&R->funknown);
    etl_seqtab_free(&R->flong);
    free(R->flong_row);
    free(R->thread_pname);
    etl_attach_free(&R->at);
    free(R->pairs);
}

/* Both passes and the finish, into p (its impl made). */
static etl_status passes(etl_reader *r, const etl_profile_options *o, etl_profile_sample_fn each, void *ctx,
                         etl_profile *p, etl_stack_keys *keys, etl_seqtab *raw)
{
    prof_impl *im = p->impl;
    const etl_clock *clk = etl_reader_clock(r);
    uint64_t total = 2 * etl_reader_file_size(r), last_ts = 0;
    etl_stats damage1;
    etl_status st = pass1(r, im, keys, o, p, total, o->threads, &last_ts, &damage1);
    if (st != ETL_OK) return st;
    etl_owners_seal(&im->owners);
    if ((st = etl_stack_keys_seal(keys)) != ETL_OK) return st;
    if ((st = etl_image_map_seal(&im->images)) != ETL_OK) return st;

    /* The window, as the scheduler reports': [0, end], the end the later of the last record and EndTime;
     * --range clipped to it (a sample at the end counts when the window reaches it). */
    int64_t end = etl_clock_ns(clk, etl_sched_end_ts(r, last_ts));
    p->v0 = 0;
    p->v1 = end;
    if (o->v1 > o->v0) {
        p->v0 = o->v0 < 0 ? 0 : o->v0;
        p->v1 = o->v1;
        etl_window_clip(&p->v0, &p->v1, end);
    }

    run R = {0};
    R.im = im;
    R.o = o;
    R.p = p;
    R.clk = clk;
    for (size_t h = 0; h < sizeof R.hint / sizeof R.hint[0]; h++) R.hint[h] = ETL_IMAGE_NONE;
    R.on_each = each;
    R.each_ctx = ctx;
    etl_idmap_init(&R.thread_ix);
    etl_pairmap_init(&R.cell_of);
    etl_idmap_init(&R.cell_ix);
    etl_idmap_init(&R.stack_ix[0]);
    etl_idmap_init(&R.stack_ix[1]);
    etl_idmap_init(&R.module_ix);
    etl_idmap_init(&R.fshort);
    etl_idmap_init(&R.funknown);
    etl_seqtab_init(&R.flong);
    R.reader = r;
    R.ranged = o->v1 > o->v0;
    R.end_ns = end;
    R.progress_before = etl_reader_file_size(r);
    R.progress_total = total;
    R.stacks = !keys->no_frames;
    st = etl_attach_init(&R.at, R.stacks ? raw : NULL, keys, send_stack, &R);
    R.at.ptr_size = etl_stacks_ptr_size(r);
    R.at.r = r;
    etl_lost_spans lost; /* pass 1 read every CPU: every record passed over is known */
    if (st == ETL_OK) st = etl_stacks_lost_spans(r, &lost);
    else memset(&lost, 0, sizeof lost);
    R.at.lost = &lost;
    R.pairs = malloc(4 * ETL_STACK_MAX_FRAMES * sizeof *R.pairs);
    if (st == ETL_OK) st = R.pairs ? etl_strtab_add(&im->names, "Unknown", 7, &R.unknown_name) : ETL_E_NOMEM;
    if (st == ETL_OK) st = pass2(&R, o->threads);
    const etl_stats none = {.first_problem_offset = UINT64_MAX};
    etl_stats_add(&p->st, &damage1, &none); /* pass 1's damage with pass 2's */
    if (st == ETL_OK) st = finish(&R);
    run_free(&R);
    etl_lost_spans_free(&lost);
    return st;
}

void etl_profile_options_init(etl_profile_options *o)
{
    *o = (etl_profile_options){sizeof *o, 0, 0, -1, NULL, -1, NULL, NULL, 1, false};
}

etl_status etl_profile_run(etl_reader *r, const etl_profile_options *opts, etl_profile *p)
{
    return etl_profile_run_each(r, opts, NULL, NULL, p);
}

etl_status etl_profile_run_each(etl_reader *r, const etl_profile_options *opts, etl_profile_sample_fn each,
                                void *ctx, etl_profile *p)
{
    memset(p, 0, sizeof *p);
    etl_profile_options o;
    etl_profile_options_init(&o);
    etl_opts_take(&o, sizeof o, opts);
    prof_impl *im = calloc(1, sizeof *im);
    if (!im) return ETL_E_NOMEM;
    p->impl = im;
    p->interval_ns = 1000000; /* 10,000 x 100 ns: Windows' default when nothing is logged */
    etl_strtab_init(&im->names);
    etl_owners_init(&im->owners, &im->names);
    etl_image_map_init(&im->images, etl_reader_header(r)->pointer_size, &im->names);
    etl_seqtab_init(&im->resolved);
    /* The passes' own: the key table (whose frames lie in the reader's bytes) and the walks' parts. */
    etl_stack_keys keys;
    etl_seqtab raw;
    if (o.no_stacks && !each) etl_stack_keys_init_no_frames(&keys); /* whether a reference resolves: no frames */
    else etl_stack_keys_init(&keys);
    etl_seqtab_init(&raw);
    etl_status st = passes(r, &o, each, ctx, p, &keys, &raw);
    etl_stack_keys_free(&keys);
    etl_seqtab_free(&raw);
    return st;
}

void etl_profile_free(etl_profile *p)
{
    if (!p) return; /* as the handles' close: a cleanup path may free what it never made */
    prof_impl *im = p->impl;
    if (im) {
        etl_strtab_free(&im->names);
        etl_owners_free(&im->owners);
        etl_image_map_free(&im->images);
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

etl_status etl_profile_anomaly_get(const etl_profile *p, etl_profile_anomaly which, uint64_t *n)
{
    const prof_impl *im = p ? p->impl : NULL;
    if (!n || !im || (unsigned)which >= ETL_PROFILE_ANOMALIES) return ETL_E_INVALID_ARG; /* *n untouched */
    *n = im->anomalies[which];
    return ETL_OK;
}

const etl_profile_frame *etl_profile_stack_frames(const etl_profile *p, uint32_t stack, uint32_t *n)
{
    const prof_impl *im = p ? p->impl : NULL;
    if (!im || !im->frames || stack >= im->resolved.count) {
        *n = 0;
        return NULL;
    }
    uint32_t words;
    const uint64_t *w = etl_seqtab_get(&im->resolved, stack, &words);
    *n = words / 2;
    return im->frames + (w - im->resolved.words) / 2;
}

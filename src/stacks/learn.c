/* learn.c - see learn.h. */
#include "stacks/learn.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/platform.h"
#include "base/sort.h"
#include "container/reader_internal.h"
#include "etlkit/event.h"
#include "sched/cpushare.h"
#include "stacks/images.h"

/* A wanted record's copy: its bytes in notes.bytes, its position and CPU. */
typedef struct note {
    etl_stack_pos pos;
    size_t off;
    uint32_t size;
    uint16_t cpu;
} note;

typedef struct notes {
    note *v;
    size_t n, cap;
    uint8_t *bytes;
    size_t nbytes, capbytes;
} notes;

static etl_status note_add(notes *t, etl_stack_pos pos, uint16_t cpu, const uint8_t *data, uint32_t size)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        note *v = realloc(t->v, cap * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        t->v = v;
        t->cap = cap;
    }
    if (t->nbytes + size > t->capbytes) {
        size_t cap = t->capbytes ? t->capbytes : 65536;
        while (cap < t->nbytes + size) cap *= 2;
        uint8_t *b = realloc(t->bytes, cap);
        if (!b) return ETL_E_NOMEM;
        t->bytes = b;
        t->capbytes = cap;
    }
    memcpy(t->bytes + t->nbytes, data, size);
    t->v[t->n++] = (note){pos, t->nbytes, size, cpu};
    t->nbytes += size;
    return ETL_OK;
}

static int cmp_note(const void *a, const void *b)
{
    const note *x = a, *y = b;
    return etl_stack_pos_less(x->pos, y->pos) ? -1 : etl_stack_pos_less(y->pos, x->pos);
}

/*
 * A walker: a share of the CPUs, walked on its own thread (the first on the caller's),
 * with its own definitions and notes, put together when all are done.
 */
typedef struct walker {
    etl_reader *r;
    etl_learn *l;
    const uint8_t *want;      /* its CPUs (NULL: every one) */
    unsigned nwant;
    bool paced;               /* one of several: keeps within reach of the others (etl_iter_pace) */
    _Atomic uint64_t *done;   /* the bytes every walker has read */
    bool reports;             /* calls l->progress: the caller's thread */
    etl_stack_keys keys;
    notes nt;
    uint64_t last_ts;
    uint64_t defs_cut;
    uint64_t defs_noncanonical;
    unsigned ptr;             /* the trace's pointer size (0: each record's own) */
    etl_stats damage;         /* its own: walkers run at once */
    etl_status st;
    etl_os_thread *th;
} walker;

unsigned etl_stacks_ptr_size(const etl_reader *r)
{
    unsigned p = etl_reader_header(r)->pointer_size;
    return p == 4 || p == 8 ? p : 0;
}

static bool stack_hook(uint16_t hook)
{
    return hook == ETL_HOOK_STACKWALK || (hook >= ETL_HOOK_STACK_KEY_DELETE && hook <= ETL_HOOK_STACK_KEY_USER);
}

/* A stack record whose header type says the other pointer size (etl_stacks_ptr_size): told, counted. */
static void other_ptr_size(walker *W, const etl_walk *w, const etl_record *full, const etl_krec *k, uint16_t hook)
{
    etl_record at = {0};
    if (full) at = *full;
    else at.offset = (uint32_t)(k->data - w->p);
    at.buffer_index = w->buffer_index;
    char what[160];
    snprintf(what, sizeof what, "hook 0x%04x, a stack record with header type 0x%02x (%u-byte pointers) in a trace of "
             "%u-byte pointers (logfile header PointerSize)", hook, full ? full->htype : k->htype,
             full ? full->pointer_size : k->pointer_size, W->ptr);
    char fate[64];
    snprintf(fate, sizeof fate, "read with the trace's %u-byte pointers", W->ptr);
    etl_stacks_record_damage(W->r, &W->damage, &at, what, fate);
}

/* A key definition: its frames stay in the file's bytes, or are copied from a decompressed buffer's. */
static etl_status learn_key(walker *W, etl_span payload, unsigned ptr_size, etl_stack_pos pos, uint16_t hook)
{
    etl_stack_key_def d;
    if (etl_stack_key_def_decode(payload, ptr_size, &d) != ETL_OK) return ETL_OK; /* teaches nothing */
    /* Windows logs at most 192 frames: more is counted (the decoder kept the innermost 192). */
    if ((payload.n - ptr_size) / ptr_size > ETL_STACK_MAX_FRAMES) W->defs_cut++;
    uint64_t bad;
    if (__builtin_expect(etl_frames_noncanonical(d.frames, d.ptr_size, d.frame_count, &bad), 0)) {
        W->defs_noncanonical++;
        etl_record at = {0};
        at.buffer_index = pos.buffer;
        at.offset = pos.offset;
        etl_stacks_address_damage(W->r, &W->damage, &at,
                                  hook == ETL_HOOK_STACK_KEY_DELETE ? "hook 0x1823, a stack key's definition (KeyDelete)"
                                                                    : "hook 0x1824, a stack key's definition (KeyRundown)",
                                  bad);
    }
    size_t bytes = (size_t)d.frame_count * d.ptr_size;
    return etl_stack_keys_define(&W->keys, d.stack_key, pos, d.frames, d.frame_count, d.ptr_size,
                                 !etl_reader_holds(W->r, d.frames, bytes)); /* no_frames: copies nothing */
}

static void report(walker *W, const etl_iter *it, uint64_t *mine)
{
    uint64_t now = etl_iter_progress(it);
    uint64_t all = atomic_fetch_add_explicit(W->done, now - *mine, memory_order_relaxed) + (now - *mine);
    *mine = now;
    if (W->reports && W->l->progress) W->l->progress(W->l->progress_ctx, all);
}

/* Each of the walker's CPUs' buffers walked: the definitions defined, the wanted records noted. */
static void walk(void *arg)
{
    walker *W = arg;
    etl_learn *l = W->l;
    etl_iter *it;
    etl_status st = etl_iter_open_cpus_buffers(W->r, W->want, W->nwant, &it);
    if (st != ETL_OK) {
        W->st = st;
        return;
    }
    if (W->paced) etl_iter_pace(it);
    uint64_t *mts = NULL; /* by CPU: its merge time, the largest timestamp so far */
    size_t ncpus = 0;
    uint64_t mine = 0;
    etl_walk w;
    etl_krec k;
    for (unsigned nb = 0; st == ETL_OK && etl_iter_next_buffer(it, &w) == ETL_OK; nb++) {
        if ((nb & 15) == 0) report(W, it, &mine);
        if (w.cpu >= ncpus) {
            size_t n = (size_t)w.cpu + 1;
            uint64_t *m = realloc(mts, n * sizeof *m);
            if (!m) {
                st = ETL_E_NOMEM;
                break;
            }
            memset(m + ncpus, 0, (n - ncpus) * sizeof *m);
            mts = m;
            ncpus = n;
        }
        uint64_t *c = &mts[w.cpu];
        int kind;
        while (st == ETL_OK && (kind = etl_walk_next(&w, &k)) != ETL_WALK_END) {
            const etl_record *rec = kind == ETL_WALK_KERNEL ? NULL : &w.full;
            uint64_t ts = rec ? (rec->has & ETL_REC_TS ? rec->ts : 0) : k.ts;
            if (ts > *c) *c = ts;
            if (ts > W->last_ts) W->last_ts = ts;
            uint16_t hook = k.hook;
            if (rec && !etl_record_kernel_hook(rec, &hook)) continue;
            etl_stack_pos pos = {*c, w.cpu, w.buffer_index, rec ? rec->offset : (uint32_t)(k.data - w.p)};
            unsigned ptr = rec ? rec->pointer_size : k.pointer_size;
            if (__builtin_expect(ptr != W->ptr, 0) && W->ptr && stack_hook(hook)) {
                other_ptr_size(W, &w, rec, &k, hook);
                ptr = W->ptr;
            }
            if (hook == ETL_HOOK_STACK_KEY_DELETE || hook == ETL_HOOK_STACK_KEY_RUNDOWN)
                st = learn_key(W, rec ? rec->payload : k.payload, ptr, pos, hook);
            else if (l->want(hook))
                st = note_add(&W->nt, pos, w.cpu, rec ? rec->data : k.data, rec ? rec->size : k.size);
        }
    }
    if (st == ETL_OK) report(W, it, &mine);
    etl_iter_close(it);
    free(mts);
    W->st = st;
}

/* The walkers' notes as one, in stream order, handed to on_record on the caller's thread. */
static etl_status replay(etl_learn *l, walker *ws, unsigned n)
{
    notes all = ws[0].nt;
    ws[0].nt = (notes){0};
    etl_status st = ETL_OK;
    for (unsigned i = 1; st == ETL_OK && i < n; i++)
        for (size_t j = 0; st == ETL_OK && j < ws[i].nt.n; j++) {
            const note *x = &ws[i].nt.v[j];
            st = note_add(&all, x->pos, x->cpu, ws[i].nt.bytes + x->off, x->size);
        }
    if (st == ETL_OK) etl_sort(all.v, all.n, sizeof *all.v, cmp_note);
    for (size_t i = 0; st == ETL_OK && i < all.n; i++) {
        etl_record rec;
        size_t next;
        uint16_t hook;
        if (etl_record_frame((etl_span){all.bytes + all.v[i].off, all.v[i].size}, 0, &rec, &next) != ETL_OK) continue;
        rec.cpu = all.v[i].cpu;
        rec.buffer_index = all.v[i].pos.buffer; /* where it lies, for a warning */
        rec.offset = all.v[i].pos.offset;
        if (etl_record_kernel_hook(&rec, &hook)) st = l->on_record(l->ctx, &rec, hook);
    }
    free(all.v);
    free(all.bytes);
    return st;
}

etl_status etl_stacks_learn(etl_reader *r, etl_learn *l)
{
    unsigned ncpu = etl_reader_cpu_count(r), n = 1;
    uint8_t *share = NULL;
    if (l->threads > 1 && ncpu > 1) {
        share = calloc(ncpu, 1);
        if (!share) return ETL_E_NOMEM;
        n = etl_sched_deal_cpus(r, l->threads < ETL_SCHED_MAX_WORKERS ? l->threads : ETL_SCHED_MAX_WORKERS, 1, share);
        if (n < 1) n = 1; /* one share (0: its memory not had): every CPU, on the caller's thread */
    }
    walker *ws = calloc(n, sizeof *ws);
    uint8_t *want = n > 1 ? calloc((size_t)n * ncpu, 1) : NULL;
    _Atomic uint64_t done = 0;
    etl_status st = ws && (n == 1 || want) ? ETL_OK : ETL_E_NOMEM;
    for (unsigned i = 0; st == ETL_OK && i < n; i++) {
        walker *W = &ws[i];
        *W = (walker){.r = r, .l = l, .paced = n > 1, .done = &done, .reports = i == 0, .ptr = etl_stacks_ptr_size(r),
                      .st = ETL_OK};
        W->damage.first_problem_offset = UINT64_MAX;
        if (l->keys->no_frames) etl_stack_keys_init_no_frames(&W->keys); /* the walkers' tables are as the caller's */
        else etl_stack_keys_init(&W->keys);
        if (n > 1) {
            W->want = want + (size_t)i * ncpu;
            W->nwant = ncpu;
            for (unsigned c = 0; c < ncpu; c++) want[(size_t)i * ncpu + c] = share[c] == i + 1;
        }
    }
    free(share);
    if (st == ETL_OK) {
        for (unsigned i = 1; i < n; i++) ws[i].th = etl_thread_start(walk, &ws[i]);
        walk(&ws[0]);
        for (unsigned i = 1; i < n; i++) {
            if (ws[i].th) etl_thread_join(ws[i].th);
            else walk(&ws[i]); /* no thread to be had: here */
        }
    }
    for (unsigned i = 0; ws && i < n; i++) {
        if (st == ETL_OK) st = ws[i].st;
        if (st == ETL_OK) st = etl_stack_keys_take(l->keys, &ws[i].keys);
        if (ws[i].last_ts > l->last_ts) l->last_ts = ws[i].last_ts;
        l->defs_cut += ws[i].defs_cut;
        l->defs_noncanonical += ws[i].defs_noncanonical;
        const etl_stats none = {.first_problem_offset = UINT64_MAX};
        if (l->damage) etl_stats_add(l->damage, &ws[i].damage, &none);
    }
    if (st == ETL_OK && n > 1 && l->progress) l->progress(l->progress_ctx, atomic_load(&done));
    if (st == ETL_OK) st = replay(l, ws, n);
    for (unsigned i = 0; ws && i < n; i++) {
        etl_stack_keys_free(&ws[i].keys);
        free(ws[i].nt.v);
        free(ws[i].nt.bytes);
    }
    free(ws);
    free(want);
    return st;
}

etl_status etl_stacks_open_pass(etl_reader *r, bool (*keep)(uint16_t hook), etl_iter_keep_fn filter, void *ctx,
                                etl_iter **it)
{
    etl_status st = etl_iter_open_cpus(r, NULL, 0, filter, ctx, it);
    if (st != ETL_OK) return st;
    uint8_t *k = calloc(2, 8192); /* the hooks kept, then none marked */
    if (!k) {
        etl_iter_close(*it);
        return ETL_E_NOMEM;
    }
    for (uint32_t h = 0; h < 65536; h++)
        if (keep((uint16_t)h)) k[h >> 3] |= (uint8_t)(1u << (h & 7));
    etl_iter_keep_hooks(*it, k, k + 8192);
    free(k);
    return ETL_OK;
}

void etl_stacks_record_damage(const etl_reader *r, etl_stats *st, const etl_record *rec, const char *what,
                              const char *fate)
{
    st->bad_records++;
    if (rec->buffer_index >= r->nbufs) {
        etl_reader_problem(r, st, ETL_E_CORRUPT, UINT64_MAX, "a record (%s): %s", what, fate);
        return;
    }
    const etl_buf_ent *b = &r->bufs[rec->buffer_index];
    uint64_t at = b->compressed ? b->file_off : b->file_off + rec->offset;
    char where[48];
    if (b->compressed) snprintf(where, sizeof where, "in its expanded data");
    else snprintf(where, sizeof where, "file offset 0x%llx", (unsigned long long)at);
    etl_reader_problem(r, st, ETL_E_CORRUPT, at, "buffer %u at offset 0x%llx: record at +0x%x (%s, %s): %s",
                       b->index, (unsigned long long)b->file_off, (unsigned)rec->offset, where, what, fate);
}

void etl_stacks_address_damage(const etl_reader *r, etl_stats *st, const etl_record *rec, const char *what,
                               uint64_t addr)
{
    char w[160];
    snprintf(w, sizeof w, "%s holding 0x%016llx, non-canonical: no x64 code's address", what,
             (unsigned long long)addr);
    etl_stacks_record_damage(r, st, rec, w, "kept, in no image (Unknown)");
}

void etl_stacks_image_damage(const etl_reader *r, etl_stats *st, const etl_record *rec, uint16_t hook,
                             const struct etl_image_map *m)
{
    const etl_image_inst *in = &m->v[m->n - 1];
    char what[1200];
    snprintf(what, sizeof what, "hook 0x%04x, the Image event of %s at 0x%llx: ImageSize 0x%llx, %s", hook,
             etl_strtab_get(m->names, in->name), (unsigned long long)in->base, (unsigned long long)in->logged_size,
             in->logged_size > UINT32_MAX ? "more than a PE's 32-bit SizeOfImage"
                                          : "past the end of its half of the address space");
    etl_stacks_record_damage(r, st, rec, what, "the image is taken to hold no address");
}

void etl_lost_spans_free(etl_lost_spans *l)
{
    free(l->lo);
    free(l->hi_max);
    memset(l, 0, sizeof *l);
}

typedef struct lost_span {
    uint64_t lo, hi;
} lost_span;

static int cmp_lost(const void *a, const void *b)
{
    const lost_span *x = a, *y = b;
    return x->lo != y->lo ? (x->lo < y->lo ? -1 : 1) : (x->hi < y->hi ? -1 : x->hi > y->hi);
}

/* Adds (lo, hi) to v (*n of *cap). false: out of memory. */
static bool lost_add(lost_span **v, size_t *n, size_t *cap, uint64_t lo, uint64_t hi)
{
    if (*n == *cap) {
        size_t c = *cap ? 2 * *cap : 16;
        lost_span *g = realloc(*v, c * sizeof *g);
        if (!g) return false;
        *v = g;
        *cap = c;
    }
    (*v)[(*n)++] = (lost_span){lo, hi};
    return true;
}

etl_status etl_stacks_lost_spans(const etl_reader *r, etl_lost_spans *out)
{
    memset(out, 0, sizeof *out);
    lost_span *v = NULL;
    size_t n = 0, cap = 0;
    bool ok = true;
    /* No memory for the skips: where they lie is unknown, so anywhere. */
    if (atomic_load(&r->skips_lost)) ok = lost_add(&v, &n, &cap, 0, UINT64_MAX);
    unsigned ncpu = etl_reader_cpu_count(r);
    for (unsigned c = 0; ok && c < ncpu; c++) {
        size_t ng = 0;
        const etl_ts_span *g = etl_reader_cpu_gaps(r, c, &ng); /* buffers missing between those found */
        for (size_t i = 0; ok && i < ng; i++) ok = lost_add(&v, &n, &cap, g[i].lo, g[i].hi);
        uint64_t until = etl_reader_cpu_known_until(r, c); /* a file cut short: the rest of the CPU's time */
        if (ok && until != UINT64_MAX) ok = lost_add(&v, &n, &cap, until, UINT64_MAX);
        /* Records passed over (the rest of a buffer, a buffer not loaded): lost after the CPU's record read before
         * them up to the latest time they may have (their buffer's flush): a reference anywhere in it, on any CPU,
         * may have lost its definition there, as one before it. */
        uint64_t hi;
        for (uint64_t at = 0, s; ok && (s = etl_reader_cpu_next_skip_span(r, c, at, &hi)) != UINT64_MAX; at = s + 1) {
            ok = lost_add(&v, &n, &cap, s, hi);
            if (s == UINT64_MAX - 1) break;
        }
    }
    if (ok && n) {
        etl_sort(v, n, sizeof *v, cmp_lost);
        out->lo = malloc(n * sizeof *out->lo);
        out->hi_max = malloc(n * sizeof *out->hi_max);
        ok = out->lo && out->hi_max;
        for (size_t i = 0; ok && i < n; i++) {
            out->lo[i] = v[i].lo;
            out->hi_max[i] = i && out->hi_max[i - 1] > v[i].hi ? out->hi_max[i - 1] : v[i].hi;
        }
        if (ok) out->n = n;
    }
    free(v);
    if (!ok) etl_lost_spans_free(out);
    return ok ? ETL_OK : ETL_E_NOMEM;
}

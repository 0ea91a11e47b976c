/* learn.c - see learn.h. */
#include "stacks/learn.h"

#include <stdlib.h>
#include <string.h>
#include "base/pipe.h"
#include "base/sort.h"
#include "etlkit/event.h"

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
 * The walk (the reader) and the interning of the definitions (the counter) are
 * two stages: with a pipe, the reader runs on a second thread and sends each
 * definition (or the bytes read, for progress) as a message; without, it calls
 * the counter itself. Either way the counter sees them in the walk's order.
 */
enum { MSG_KEY = 1, MSG_PROGRESS };

typedef struct msg {
    uint32_t kind, n;      /* n frames follow (MSG_KEY) */
    uint64_t key;          /* the stack key; MSG_PROGRESS: the bytes read */
    uint64_t hash;         /* the frames' etl_seqtab_hash: the reader's work, not the counter's */
    etl_stack_pos pos;
} msg;
_Static_assert(sizeof(msg) + ETL_STACK_MAX_FRAMES * sizeof(uint64_t) <= ETL_STACKS_PIPE_BLOCK, "a message fits");

typedef struct pass {
    etl_reader *r;
    etl_learn *l;
    etl_pipe *pipe;        /* NULL: one thread */
    notes nt;
} pass;

/* The counter's part of a definition: its frames (hashed h) interned, defined at its position. */
static etl_status define_key(etl_learn *l, uint64_t key, etl_stack_pos pos, const uint64_t *f, uint32_t n, uint64_t h)
{
    uint32_t id;
    etl_status st = etl_seqtab_intern_hashed(l->raw, f, n, h, &id);
    return st == ETL_OK ? etl_stack_keys_define(l->keys, key, pos, id) : st;
}

/* A key definition met by the reader. */
static etl_status learn_key(pass *P, etl_span payload, unsigned ptr_size, etl_stack_pos pos)
{
    etl_stack_key_def d;
    if (etl_stack_key_def_decode(payload, ptr_size, &d) != ETL_OK) return ETL_OK; /* teaches nothing */
    if (!P->pipe) {
        uint64_t f[ETL_STACK_MAX_FRAMES];
        for (uint32_t i = 0; i < d.frame_count; i++) f[i] = etl_stack_frame(d.frames, d.ptr_size, i);
        return define_key(P->l, d.stack_key, pos, f, d.frame_count, etl_seqtab_hash(f, d.frame_count));
    }
    msg *m = etl_pipe_put(P->pipe, sizeof *m + d.frame_count * sizeof(uint64_t));
    if (!m) return ETL_END;
    uint64_t *f = (uint64_t *)(m + 1);
    for (uint32_t i = 0; i < d.frame_count; i++) f[i] = etl_stack_frame(d.frames, d.ptr_size, i);
    *m = (msg){MSG_KEY, d.frame_count, d.stack_key, etl_seqtab_hash(f, d.frame_count), pos};
    return ETL_OK;
}

static etl_status progress(pass *P, const etl_iter *it)
{
    if (!P->l->progress) return ETL_OK;
    uint64_t done = etl_iter_progress(it);
    if (!P->pipe) {
        P->l->progress(P->l->progress_ctx, done);
        return ETL_OK;
    }
    msg *m = etl_pipe_put(P->pipe, sizeof *m);
    if (!m) return ETL_END;
    *m = (msg){MSG_PROGRESS, 0, done, 0, {0, 0, 0, 0}};
    return ETL_OK;
}

/* The reader (etl_pipe_run's): each CPU's buffers walked, the definitions sent on, the wanted records noted. */
static etl_status read_pass(void *ctx, etl_pipe *pipe)
{
    pass *P = ctx;
    P->pipe = pipe;
    etl_learn *l = P->l;
    etl_iter *it;
    etl_status st = etl_iter_open_cpus_buffers(P->r, NULL, 0, &it);
    if (st != ETL_OK) return st;
    uint64_t *mts = NULL; /* by CPU: its merge time, the largest timestamp so far */
    size_t ncpus = 0;
    etl_walk w;
    etl_krec k;
    for (unsigned nb = 0; st == ETL_OK && etl_iter_next_buffer(it, &w) == ETL_OK; nb++) {
        if ((nb & 15) == 0 && (st = progress(P, it)) != ETL_OK) break;
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
            if (ts > l->last_ts) l->last_ts = ts;
            uint16_t hook = k.hook;
            if (rec && !etl_record_kernel_hook(rec, &hook)) continue;
            etl_stack_pos pos = {*c, w.cpu, w.buffer_index, rec ? rec->offset : (uint32_t)(k.data - w.p)};
            if (hook == ETL_HOOK_STACK_KEY_DELETE || hook == ETL_HOOK_STACK_KEY_RUNDOWN)
                st = rec ? learn_key(P, rec->payload, rec->pointer_size, pos)
                         : learn_key(P, k.payload, k.pointer_size, pos);
            else if (l->want(hook))
                st = note_add(&P->nt, pos, w.cpu, rec ? rec->data : k.data, rec ? rec->size : k.size);
        }
    }
    if (st == ETL_OK) st = progress(P, it);
    etl_iter_close(it);
    free(mts);
    return st;
}

static size_t msg_size(const msg *m)
{
    return sizeof *m + (size_t)m->n * sizeof(uint64_t);
}

/*
 * The counter (etl_pipe_run's), on the caller's thread: a block of the reader's messages,
 * in order. The table's slot of the definition 8 messages on is fetched while this one
 * is interned.
 */
static etl_status count_pass(void *ctx, const void *block, size_t n)
{
    pass *P = ctx;
    const uint8_t *b = block;
    etl_status st = ETL_OK;
    size_t ahead = 0;
    for (int k = 0; k < 8 && ahead < n; k++) ahead += msg_size((const msg *)(b + ahead));
    for (size_t off = 0; st == ETL_OK && off < n;) {
        const msg *m = (const msg *)(b + off);
        off += msg_size(m);
        if (ahead < n) {
            const msg *a = (const msg *)(b + ahead);
            if (a->kind == MSG_KEY) etl_seqtab_prefetch(P->l->raw, a->hash);
            ahead += msg_size(a);
        }
        if (m->kind == MSG_KEY) st = define_key(P->l, m->key, m->pos, (const uint64_t *)(m + 1), m->n, m->hash);
        else P->l->progress(P->l->progress_ctx, m->key);
    }
    return st;
}

etl_status etl_stacks_learn(etl_reader *r, etl_learn *l)
{
    pass P = {r, l, NULL, {0}};
    etl_status st =
        etl_pipe_run(l->threads, ETL_STACKS_PIPE_BLOCK, ETL_STACKS_PIPE_BLOCKS, read_pass, count_pass, &P);
    notes nt = P.nt;
    if (st == ETL_OK) etl_sort(nt.v, nt.n, sizeof *nt.v, cmp_note);
    for (size_t i = 0; st == ETL_OK && i < nt.n; i++) {
        etl_record rec;
        size_t next;
        uint16_t hook;
        if (etl_record_frame((etl_span){nt.bytes + nt.v[i].off, nt.v[i].size}, 0, &rec, &next) != ETL_OK) continue;
        rec.cpu = nt.v[i].cpu;
        if (etl_record_kernel_hook(&rec, &hook)) st = l->on_record(l->ctx, &rec, hook);
    }
    free(nt.v);
    free(nt.bytes);
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

/*
 * timeline_profile.c - the sampled profile in the Perfetto timeline: one
 * PerfSample packet per SampledProfile event, its callstack interned, so
 * trace_processor fills perf_sample and stack_profile_{mapping,frame,callsite}
 * and the UI draws the samples per thread and process with their flame graph.
 *
 * The packets go on a sequence of their own (trusted_packet_sequence_id 2; the
 * ETW bundles and names are on 1). Its first packet clears the incremental state
 * and every packet needs it (sequence_flags 3, then 2): trace_processor keeps
 * the sequence's InternedData and resolves the iids when it parses the sorted
 * packets. A sample whose stack is new carries, in the same packet, what is new
 * of it: the mappings (one per image, with its path; "Unknown" for code no image
 * holds), the frames (mapping and rel_pc, a function name "ntdll.dll+0x9f8a4" as
 * `etlkit profile` labels it, or with symbols "ntdll.dll!RtlUserThreadStart" as its
 * folded stacks do: the UI's flame graph then merges a function's addresses) and the
 * callstack (frame ids, the root first). Every frame has a mapping: trace_processor
 * drops a frame without one, and its stack.
 *
 * The samples come from etl_profile_run_each before the frames can be read
 * (etl_profile_stack_frames works once the run is done), so they wait in a spool
 * (memory up to a budget, then an unlinked temporary file) and are written after.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "etlkit/profile.h"
#include "etlkit/symbols.h"
#include "base/idmap.h"
#include "base/spool.h"
#include "base/textsafe.h"
#include "export/pb.h"
#include "export/timeline_internal.h"
#include "stacks/images.h"
#include "stacks/seqtab.h"

#define SEQ_ID 2
#define SEQ_CLEARED 1u /* SEQ_INCREMENTAL_STATE_CLEARED */
#define SEQ_NEEDS 2u   /* SEQ_NEEDS_INCREMENTAL_STATE */
#define SPOOL_BUDGET (64u << 20)
#define UNKNOWN_MAPPING 1u /* mapping iids: 1 Unknown, image i is i + 2 */
#define LABEL_BYTES 2048u /* an interned name's most (a C++ function's may be longer: cut, a character whole) */

/* TracePacket, InternedData, PerfSample and their messages' field numbers (perfetto.md, upstream protos). */
enum {
    TP_TIMESTAMP = 8, TP_SEQ_ID = 10, TP_INTERNED = 12, TP_SEQ_FLAGS = 13, TP_PERF_SAMPLE = 66,
    ID_FUNCTION_NAMES = 5, ID_FRAMES = 6, ID_CALLSTACKS = 7, ID_MAPPING_PATHS = 17, ID_MAPPINGS = 19,
    PS_CPU = 1, PS_PID = 2, PS_TID = 3, PS_CALLSTACK = 4, PS_CPU_MODE = 5,
    MODE_KERNEL = 1, MODE_USER = 2
};

typedef struct srec {
    int64_t ns;
    uint32_t cpu, tid, pid, stack;
    uint32_t kernel;
} srec;

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
    bool oom;
} buf;

/* Room for more bytes at the end (NULL: out of memory, remembered). */
static uint8_t *room(buf *b, size_t more)
{
    if (b->oom) return NULL;
    if (b->n + more > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->n + more) cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return NULL;
        }
        b->p = p;
        b->cap = cap;
    }
    return b->p + b->n;
}

static void put_uint(buf *b, unsigned field, uint64_t v)
{
    uint8_t *p = room(b, 20);
    if (p) b->n = (size_t)(pb_uint(p, field, v) - b->p);
}

static void put_bytes(buf *b, unsigned field, const void *s, size_t n)
{
    uint8_t *p = room(b, pb_len_size(field, n));
    if (!p) return;
    p = pb_len(p, field, n);
    memcpy(p, s, n);
    b->n = (size_t)(p + n - b->p);
}

/* An InternedString { iid, str } as field of b. */
static void put_istr(buf *b, unsigned field, uint64_t iid, const char *s)
{
    uint8_t m[LABEL_BYTES + 24], *p = m;
    size_t n = etl_text_cut(s, LABEL_BYTES); /* a string field: a character never split (bytes that are not UTF-8, as
                                                the name has them) */
    p = pb_uint(p, 1, iid);
    p = pb_len(p, 2, n);
    memcpy(p, s, n);
    put_bytes(b, field, m, (size_t)(p + n - m));
}

typedef struct prun {
    etl_timeline *w;
    etl_spool_stream samples;
    unsigned ptr_size;
    bool spool_failed;
    /* writing */
    const etl_profile *p;
    struct etl_symbols *symbols; /* NULL: module+0xoff */
    etl_seqtab frames;       /* (address, image) -> frame iid - 1 */
    uint8_t *mapped;         /* by mapping iid: its Mapping written */
    etl_idmap stacks;        /* stack ids whose Callstack was written */
    buf interned, cs, packet, body;
    bool first;
} prun;

static etl_status on_sample(void *ctx, const etl_profile_sample *s)
{
    prun *R = ctx;
    srec r = {s->ns < 0 ? 0 : s->ns, s->cpu, s->tid, s->pid, s->stack, etl_image_kernel_addr(R->ptr_size, s->ip)};
    if (!etl_spool_append(&R->samples, &r, sizeof r)) return ETL_E_NOMEM;
    return ETL_OK;
}

static void mapping(prun *R, uint32_t image)
{
    uint32_t iid = image == ETL_PROFILE_NONE ? UNKNOWN_MAPPING : image + 2;
    if (R->mapped[iid]) return;
    R->mapped[iid] = 1;
    const etl_profile_image *m = image == ETL_PROFILE_NONE ? NULL : &R->p->images[image];
    put_istr(&R->interned, ID_MAPPING_PATHS, iid, !m ? "Unknown" : m->path && m->path[0] ? m->path : m->name);
    uint8_t b[64], *q = b;
    q = pb_uint(q, 1, iid);
    q = pb_uint(q, 4, m ? m->base : 0);                                  /* start */
    q = pb_uint(q, 5, m ? m->base + m->size : 0);                        /* end */
    q = pb_uint(q, 7, iid);                                              /* path_string_ids */
    put_bytes(&R->interned, ID_MAPPINGS, b, (size_t)(q - b));
}

/* The frame iid of f, written to the interned data when new. */
static etl_status frame(prun *R, const etl_profile_frame *f, uint64_t *iid)
{
    uint64_t key[2] = {f->address, f->image};
    uint32_t before = R->frames.count, id;
    etl_status st = etl_seqtab_intern(&R->frames, key, 2, &id);
    if (st != ETL_OK) return st;
    *iid = (uint64_t)id + 1;
    if (id < before) return ETL_OK;
    mapping(R, f->image);
    char label[LABEL_BYTES + 1];
    if (R->symbols) etl_symbols_function_label(R->symbols, R->p, f, label, sizeof label);
    else etl_profile_frame_label(R->p, f, label, sizeof label);
    put_istr(&R->interned, ID_FUNCTION_NAMES, *iid, label);
    uint8_t b[64], *q = b;
    q = pb_uint(q, 1, *iid);
    q = pb_uint(q, 2, *iid);                                             /* function_name_id */
    q = pb_uint(q, 3, f->image == ETL_PROFILE_NONE ? UNKNOWN_MAPPING : f->image + 2u); /* mapping_id */
    q = pb_uint(q, 4, f->image == ETL_PROFILE_NONE ? f->address : f->address - R->p->images[f->image].base);
    put_bytes(&R->interned, ID_FRAMES, b, (size_t)(q - b));
    return ETL_OK;
}

/* Interns stack's frames and callstack into R->interned when first seen. */
static etl_status callstack(prun *R, uint32_t stack)
{
    if (etl_idmap_get(&R->stacks, stack) != ETL_IDMAP_EMPTY) return ETL_OK;
    etl_status st = etl_idmap_put(&R->stacks, stack, 1);
    if (st != ETL_OK) return st;
    uint32_t n;
    const etl_profile_frame *f = etl_profile_stack_frames(R->p, stack, &n);
    R->cs.n = 0;
    put_uint(&R->cs, 1, (uint64_t)stack + 1);
    for (uint32_t k = n; k-- > 0;) { /* the root first */
        uint64_t iid;
        if ((st = frame(R, &f[k], &iid)) != ETL_OK) return st;
        put_uint(&R->cs, 2, iid);
    }
    if (R->cs.oom) return ETL_E_NOMEM;
    put_bytes(&R->interned, ID_CALLSTACKS, R->cs.p, R->cs.n);
    return ETL_OK;
}

static etl_status write_sample(prun *R, const srec *r)
{
    R->interned.n = 0;
    etl_status st = callstack(R, r->stack);
    if (st != ETL_OK) return st;
    uint8_t ps[48], *q = ps;
    q = pb_uint(q, PS_CPU, r->cpu);
    if (r->pid != ETL_PROFILE_NONE) q = pb_uint(q, PS_PID, r->pid);
    q = pb_uint(q, PS_TID, r->tid);
    q = pb_uint(q, PS_CALLSTACK, (uint64_t)r->stack + 1);
    q = pb_uint(q, PS_CPU_MODE, r->kernel ? MODE_KERNEL : MODE_USER);
    buf *b = &R->body;
    b->n = 0;
    put_uint(b, TP_TIMESTAMP, (uint64_t)r->ns);
    put_uint(b, TP_SEQ_ID, SEQ_ID);
    put_uint(b, TP_SEQ_FLAGS, R->first ? SEQ_CLEARED | SEQ_NEEDS : SEQ_NEEDS);
    if (R->interned.n) put_bytes(b, TP_INTERNED, R->interned.p, R->interned.n);
    put_bytes(b, TP_PERF_SAMPLE, ps, (size_t)(q - ps));
    R->packet.n = 0;
    put_bytes(&R->packet, 1, b->p, b->n); /* Trace.packet */
    if (R->interned.oom || b->oom || R->packet.oom) return ETL_E_NOMEM;
    etl_timeline_put_packet(R->w, R->packet.p, R->packet.n);
    R->first = false;
    return ETL_OK;
}

etl_status etl_timeline_profile(etl_timeline *w, etl_reader *r)
{
    etl_timeline_view v;
    etl_timeline_peek(w, &v);
    if (!v.perfetto || v.failed) return v.failed ? ETL_E_IO : ETL_OK;
    etl_spool *sp = etl_spool_open(SPOOL_BUDGET);
    if (!sp) return ETL_E_NOMEM;
    prun R;
    memset(&R, 0, sizeof R);
    R.w = w;
    R.ptr_size = etl_reader_header(r)->pointer_size;
    R.first = true;
    etl_spool_stream_init(&R.samples, sp);
    etl_seqtab_init(&R.frames);
    etl_idmap_init(&R.stacks);

    R.symbols = v.symbols;
    etl_profile_options o = {.sz = sizeof o, .pid = -1, .tid = -1, .threads = v.threads};
    if (v.has_range) {
        o.v0 = v.v0;
        o.v1 = v.v1 > v.v0 ? v.v1 : v.v0 + 1; /* an empty --range is still a window */
    }
    etl_profile p;
    etl_status st = etl_profile_run_each(r, &o, on_sample, &R, &p);
    if (etl_stats_damaged(&p.st)) etl_timeline_profile_damage(w);
    if (st == ETL_OK && etl_spool_error(sp)) st = etl_spool_diag(sp, &(etl_diag){0});
    if (st == ETL_OK) {
        R.p = &p;
        R.mapped = calloc(p.nimages + 2, 1);
        if (!R.mapped) st = ETL_E_NOMEM;
        const uint8_t *rec;
        size_t n;
        while (st == ETL_OK && (rec = etl_spool_next(&R.samples, &n)) != NULL) {
            srec s;
            if (n != sizeof s) break;
            memcpy(&s, rec, sizeof s);
            st = write_sample(&R, &s);
        }
        if (st == ETL_OK && etl_spool_error(sp)) st = etl_spool_diag(sp, &(etl_diag){0});
    }
    etl_timeline_peek(w, &v);
    if (st == ETL_OK && v.failed) st = ETL_E_IO;
    etl_profile_free(&p);
    free(R.mapped);
    free(R.interned.p);
    free(R.cs.p);
    free(R.packet.p);
    free(R.body.p);
    etl_seqtab_free(&R.frames);
    etl_idmap_free(&R.stacks);
    etl_spool_stream_free(&R.samples);
    etl_spool_close(sp);
    return st;
}

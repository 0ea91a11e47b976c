/*
 * test_synth_stacks.c - `synth --stacks` against the reader: traces of
 * 64 and 32 bits, in each stack form, are read back with etl_reader /
 * etl_iter (time order) / etl_event_decode, and every truth record must be
 * in the trace: each sample a SampledProfile on its CPU with its time,
 * thread and IP, its stack the frames of its walk (plain: the StackWalk with
 * its EventTimeStamp and thread; cached: the kernel and user references,
 * each resolved to the first KeyDelete/KeyRundown of its key at or after it,
 * kernel part first); each CSwitch/ReadyThread stack likewise; each image
 * line an Image record with its fields. Every record decodes, no recovery
 * counter moves, every reference resolves, and the walk and image records
 * are all accounted for. The truth's module of each sample is the image that
 * the trace's own Image events say holds its IP then (what `profile` will
 * compute). Keys are reused, user parts deferred, some IPs are in no image,
 * an image is unloaded and loaded again at its base. The same seed gives the
 * same bytes; the JSON lines parse.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/synth.h"

/* ---- captured truth ------------------------------------------------------------------ */

typedef struct tstack {
    uint64_t time;
    uint16_t cpu, hook;          /* hook: 0x0F2E for a sample */
    uint32_t tid, pid;
    uint64_t ip;
    bool in_module;
    char module[32];
    uint64_t offset;
    uint32_t depth;
    uint8_t form;
    uint64_t f[ETL_SYNTH_STACK_MAX];
    bool seen;
} tstack;

typedef struct timage {
    etl_synth_image m;
    char name[32], path[256];
    bool seen;
} timage;

typedef struct truth {
    etl_synth_meta meta;
    tstack *st;
    size_t nst, capst;
    timage *im;
    size_t nim, capim;
    size_t samples;
} truth;

static int capture(void *ctx, const etl_synth_rec *r)
{
    truth *t = ctx;
    if (r->type == ETL_SYNTH_REC_META) t->meta = r->u.meta;
    if (r->type == ETL_SYNTH_REC_SAMPLE || r->type == ETL_SYNTH_REC_STACK) {
        if (t->nst == t->capst) {
            t->capst = t->capst ? 2 * t->capst : 1024;
            t->st = realloc(t->st, t->capst * sizeof *t->st);
            assert_non_null(t->st);
        }
        tstack *e = &t->st[t->nst++];
        memset(e, 0, sizeof *e);
        const uint64_t *f;
        if (r->type == ETL_SYNTH_REC_SAMPLE) {
            const etl_synth_sample *p = &r->u.sample;
            e->time = p->time;
            e->cpu = p->cpu;
            e->hook = ETL_HOOK_SAMPLED_PROFILE;
            e->tid = p->tid;
            e->pid = p->pid;
            e->ip = p->ip;
            assert_int_equal(p->count, 1);
            e->in_module = p->module != NULL;
            if (p->module) snprintf(e->module, sizeof e->module, "%s", p->module);
            e->offset = p->offset;
            e->depth = p->depth;
            e->form = p->form;
            f = p->stack;
            t->samples++;
        } else {
            const etl_synth_stack *k = &r->u.stack;
            e->time = k->time;
            e->cpu = k->cpu;
            e->hook = k->hook;
            e->tid = k->tid;
            e->pid = k->pid;
            e->depth = k->depth;
            e->form = k->form;
            f = k->stack;
            assert_true(e->depth > 0);
        }
        assert_true(e->depth <= ETL_SYNTH_STACK_MAX);
        memcpy(e->f, f, e->depth * sizeof *f);
    }
    if (r->type == ETL_SYNTH_REC_IMAGE) {
        if (t->nim == t->capim) {
            t->capim = t->capim ? 2 * t->capim : 256;
            t->im = realloc(t->im, t->capim * sizeof *t->im);
            assert_non_null(t->im);
        }
        timage *e = &t->im[t->nim++];
        memset(e, 0, sizeof *e);
        e->m = r->u.image;
        snprintf(e->name, sizeof e->name, "%s", r->u.image.name);
        snprintf(e->path, sizeof e->path, "%s", r->u.image.path);
    }
    return 0;
}

static void truth_free(truth *t)
{
    free(t->st);
    free(t->im);
    memset(t, 0, sizeof *t);
}

/* ---- what the trace holds ------------------------------------------------------------- */

typedef struct walkrec {
    uint64_t rec_ts, ev_ts, key;
    uint32_t tid, pid, n;
    uint16_t hook, cpu;
    uint64_t f[ETL_STACK_MAX_FRAMES];
    bool used;
} walkrec;

typedef struct keydef {
    uint64_t rec_ts, key;
    uint32_t n;
    uint64_t f[ETL_STACK_MAX_FRAMES];
} keydef;

typedef struct samplerec {
    uint64_t ts;
    uint16_t cpu;
    uint32_t tid;
    uint64_t ip;
    uint16_t count;
} samplerec;

typedef struct imagerec {
    uint64_t ts;
    uint16_t hook, cpu;
    etl_image im;
    char path[256];
} imagerec;

typedef struct trace {
    walkrec *w;
    size_t nw, capw;
    keydef *k;
    size_t nk, capk;
    samplerec *s;
    size_t ns, caps;
    imagerec *im;
    size_t nim, capim;
    unsigned intervals;
} trace;

#define GROW(arr, n, cap)                                                   \
    do {                                                                    \
        if ((n) == (cap)) {                                                 \
            (cap) = (cap) ? 2 * (cap) : 1024;                               \
            (arr) = realloc((arr), (cap) * sizeof *(arr));                  \
            assert_non_null(arr);                                           \
        }                                                                   \
    } while (0)

static void u16_to(const etl_kstr *k, char *out, size_t cap)
{
    etl_utf16_to_utf8(k->text, out, cap);
}

static void read_trace(const char *path, unsigned ptr, unsigned img_version, trace *tr)
{
    memset(tr, 0, sizeof *tr);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    assert_int_equal(etl_reader_header(r)->pointer_size, ptr);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    etl_event ev;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        etl_status st = etl_event_decode(&rec, &ev);
        if (st == ETL_END) continue;
        if (st != ETL_OK) fail_msg("hook 0x%04x at %llu: %s", rec.hook, (unsigned long long)rec.ts, etl_status_str(st));
        switch (ev.kind) {
        case ETL_EVENT_SAMPLED_PROFILE: {
            assert_int_equal(rec.htype, ptr == 8 ? ETL_HTYPE_PERFINFO64 : ETL_HTYPE_PERFINFO32);
            GROW(tr->s, tr->ns, tr->caps);
            samplerec *x = &tr->s[tr->ns++];
            x->ts = rec.ts;
            x->cpu = rec.cpu;
            x->tid = ev.u.sample.thread_id;
            x->ip = ev.u.sample.instruction_pointer;
            x->count = ev.u.sample.count;
            break;
        }
        case ETL_EVENT_STACKWALK:
        case ETL_EVENT_STACK_KEY_REF: {
            assert_int_equal(rec.htype, ptr == 8 ? ETL_HTYPE_PERFINFO64 : ETL_HTYPE_PERFINFO32);
            GROW(tr->w, tr->nw, tr->capw);
            walkrec *x = &tr->w[tr->nw++];
            memset(x, 0, sizeof *x);
            x->rec_ts = rec.ts;
            x->hook = ev.hook;
            x->cpu = rec.cpu;
            if (ev.kind == ETL_EVENT_STACKWALK) {
                x->ev_ts = ev.u.stack.event_timestamp;
                x->tid = ev.u.stack.stack_thread;
                x->pid = ev.u.stack.stack_process;
                x->n = ev.u.stack.frame_count;
                for (uint32_t i = 0; i < x->n; i++) x->f[i] = etl_stack_frame(ev.u.stack.frames, ptr, i);
            } else {
                x->ev_ts = ev.u.key_ref.event_timestamp;
                x->tid = ev.u.key_ref.stack_thread;
                x->pid = ev.u.key_ref.stack_process;
                x->key = ev.u.key_ref.stack_key;
            }
            break;
        }
        case ETL_EVENT_STACK_KEY_DEF: {
            GROW(tr->k, tr->nk, tr->capk);
            keydef *x = &tr->k[tr->nk++];
            x->rec_ts = rec.ts;
            x->key = ev.u.key_def.stack_key;
            x->n = ev.u.key_def.frame_count;
            assert_true(x->n > 0);
            for (uint32_t i = 0; i < x->n; i++) x->f[i] = etl_stack_frame(ev.u.key_def.frames, ptr, i);
            break;
        }
        case ETL_EVENT_IMAGE: {
            GROW(tr->im, tr->nim, tr->capim);
            imagerec *x = &tr->im[tr->nim++];
            x->ts = rec.ts;
            x->hook = ev.hook;
            x->cpu = rec.cpu;
            x->im = ev.u.image;
            assert_true(ev.u.image.known & ETL_IMG_V2);
            assert_int_equal(rec.version, img_version);
            u16_to(&ev.u.image.file_name, x->path, sizeof x->path);
            x->im.file_name.text.p = NULL; /* points into the record */
            bool rundown = ev.hook == ETL_HOOK_IMAGE_DC_START || ev.hook == ETL_HOOK_IMAGE_DC_END;
            bool perfinfo = rec.htype == ETL_HTYPE_PERFINFO64 || rec.htype == ETL_HTYPE_PERFINFO32;
            assert_true(rundown == perfinfo);
            break;
        }
        case ETL_EVENT_PROFILE_INTERVAL:
            assert_int_equal(ev.u.interval.new_interval, 10000);
            tr->intervals++;
            break;
        default:
            break;
        }
    }
    const etl_stats *s = etl_iter_stats_get(it);
    assert_int_equal(s->bad_buffers, 0);
    assert_int_equal(s->bad_records, 0);
    assert_int_equal(s->skipped_bytes, 0);
    assert_int_equal(s->decompress_errors, 0);
    assert_int_equal(s->truncated_buffers, 0);
    assert_int_equal(s->first_problem_offset, UINT64_MAX);
    etl_iter_close(it);
    etl_reader_close(r);
}

static void trace_free(trace *tr)
{
    free(tr->w);
    free(tr->k);
    free(tr->s);
    free(tr->im);
}

#define CMP(a, b) ((a) < (b) ? -1 : (a) > (b))

static int keydef_cmp(const void *x, const void *y)
{
    const keydef *a = x, *b = y;
    return a->key != b->key ? CMP(a->key, b->key) : CMP(a->rec_ts, b->rec_ts);
}

/* Idle threads all have TID 0: theirs are told apart by the CPU (they have no user part to defer). */
static int walk_cmp3(uint64_t ts, uint32_t tid, uint16_t cpu, uint16_t hook, const walkrec *b)
{
    if (ts != b->ev_ts) return CMP(ts, b->ev_ts);
    if (tid != b->tid) return CMP(tid, b->tid);
    if (!tid && cpu != b->cpu) return CMP(cpu, b->cpu);
    return CMP(hook, b->hook);
}

static int walk_cmp(const void *x, const void *y)
{
    const walkrec *a = x;
    return walk_cmp3(a->ev_ts, a->tid, a->cpu, a->hook, y);
}

/* Sorted for the look-ups below: definitions by (key, time), walks by (EventTimeStamp, thread, hook). */
static void index_trace(trace *tr)
{
    if (tr->nk) qsort(tr->k, tr->nk, sizeof *tr->k, keydef_cmp);
    if (tr->nw) qsort(tr->w, tr->nw, sizeof *tr->w, walk_cmp);
}

/* The frames a key stands for at a reference logged at rec_ts: its first definition at or after it. */
static const keydef *resolve(const trace *tr, uint64_t key, uint64_t rec_ts)
{
    size_t lo = 0, hi = tr->nk;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        const keydef *k = &tr->k[mid];
        if (k->key < key || (k->key == key && k->rec_ts < rec_ts)) lo = mid + 1;
        else hi = mid;
    }
    return lo < tr->nk && tr->k[lo].key == key ? &tr->k[lo] : NULL;
}

/* The walk record of an event: (ev_ts, tid) and the hook wanted; NULL if none. Each is one event's. */
static walkrec *find_walk(trace *tr, uint64_t ev_ts, uint32_t tid, uint16_t cpu, uint16_t hook)
{
    size_t lo = 0, hi = tr->nw;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (walk_cmp3(ev_ts, tid, cpu, hook, &tr->w[mid]) > 0) lo = mid + 1;
        else hi = mid;
    }
    if (lo == tr->nw || walk_cmp3(ev_ts, tid, cpu, hook, &tr->w[lo]) != 0) return NULL;
    if (tr->w[lo].used) fail_msg("two events at %llu of tid %u", (unsigned long long)ev_ts, tid);
    if (lo + 1 < tr->nw && walk_cmp3(ev_ts, tid, cpu, hook, &tr->w[lo + 1]) == 0)
        fail_msg("two walks (hook 0x%04x) for the event at %llu of tid %u", hook, (unsigned long long)ev_ts, tid);
    return &tr->w[lo];
}

typedef struct counts {
    size_t deferred, reused_keys, no_module, idle, kernel_user, plugin_cycles;
} counts;

static void check_stack(trace *tr, const tstack *e, counts *n)
{
    uint64_t f[2 * ETL_STACK_MAX_FRAMES];
    uint32_t nf = 0;
    if (e->form == ETL_SYNTH_STACK_PLAIN) {
        walkrec *w = find_walk(tr, e->time, e->tid, e->cpu, ETL_HOOK_STACKWALK);
        if (!w) fail_msg("no StackWalk for the event at %llu of tid %u", (unsigned long long)e->time, e->tid);
        w->used = true;
        assert_int_equal(w->pid, e->pid);
        assert_int_equal(w->cpu, e->cpu);
        memcpy(f, w->f, w->n * sizeof *f);
        nf = w->n;
    } else {
        assert_int_equal(e->form, ETL_SYNTH_STACK_CACHED);
        walkrec *k = find_walk(tr, e->time, e->tid, e->cpu, ETL_HOOK_STACK_KEY_KERNEL);
        walkrec *u = find_walk(tr, e->time, e->tid, e->cpu, ETL_HOOK_STACK_KEY_USER);
        if (!k && !u) fail_msg("no stack key reference for the event at %llu", (unsigned long long)e->time);
        walkrec *parts[2] = {k, u};
        for (int j = 0; j < 2; j++) {
            walkrec *w = parts[j];
            if (!w) continue;
            w->used = true;
            assert_int_equal(w->pid, e->pid);
            const keydef *d = resolve(tr, w->key, w->rec_ts);
            if (!d) fail_msg("key 0x%llx referenced at %llu is never defined after", (unsigned long long)w->key,
                             (unsigned long long)w->rec_ts);
            memcpy(f + nf, d->f, d->n * sizeof *f);
            nf += d->n;
        }
        if (k) assert_int_equal(k->cpu, e->cpu);
        if (u && u->rec_ts > e->time + 16) n->deferred++;
        if (k && u) n->kernel_user++;
    }
    assert_int_equal(nf, e->depth);
    for (uint32_t i = 0; i < nf; i++)
        if (f[i] != e->f[i])
            fail_msg("event at %llu tid %u: frame %u is 0x%llx, truth 0x%llx", (unsigned long long)e->time, e->tid, i,
                     (unsigned long long)f[i], (unsigned long long)e->f[i]);
}

/* The image of the trace holding ip in process pid at ts (kernel images for all), by the Image events. */
static const imagerec *image_at(const trace *tr, uint32_t pid, uint64_t ip, uint64_t ts)
{
    const imagerec *hit = NULL;
    for (size_t i = 0; i < tr->nim; i++) {
        const imagerec *x = &tr->im[i];
        if (x->ts > ts) break; /* time order */
        if (x->im.process_id != pid && x->im.process_id != 0) continue;
        if (ip < x->im.image_base || ip - x->im.image_base >= x->im.image_size) continue;
        if (x->hook == ETL_HOOK_IMAGE_UNLOAD) hit = NULL;
        else if (x->hook != ETL_HOOK_IMAGE_DC_END) hit = x;
    }
    return hit;
}

static const char *base_name(const char *path)
{
    const char *b = strrchr(path, '\\');
    return b ? b + 1 : path;
}

static void check_images(const trace *tr, truth *t, counts *n)
{
    assert_int_equal(tr->nim, t->nim);
    for (size_t i = 0; i < t->nim; i++) {
        const etl_synth_image *m = &t->im[i].m;
        bool found = false;
        for (size_t j = 0; j < tr->nim && !found; j++) {
            const imagerec *x = &tr->im[j];
            if (x->ts != m->time || x->hook != m->hook) continue;
            assert_int_equal(x->cpu, m->cpu);
            assert_int_equal(x->im.process_id, m->pid);
            assert_int_equal(x->im.image_base, m->base);
            assert_int_equal(x->im.image_size, m->size);
            assert_int_equal(x->im.time_date_stamp, m->time_date_stamp);
            assert_int_equal(x->im.image_checksum, m->checksum);
            assert_string_equal(x->path, t->im[i].path);
            assert_string_equal(base_name(x->path), t->im[i].name);
            found = true;
        }
        if (!found) fail_msg("image %s at %llu not in the trace", t->im[i].name, (unsigned long long)m->time);
    }
    /* An unload, then a load again at the same base in the same process. */
    for (size_t i = 0; i < tr->nim; i++) {
        if (tr->im[i].hook != ETL_HOOK_IMAGE_UNLOAD) continue;
        for (size_t j = i + 1; j < tr->nim; j++)
            if (tr->im[j].hook == ETL_HOOK_PROCESS_LOAD_IMAGE && tr->im[j].im.process_id == tr->im[i].im.process_id &&
                tr->im[j].im.image_base == tr->im[i].im.image_base) {
                n->plugin_cycles++;
                break;
            }
    }
}

static void check(const char *path, const etl_synth_options *o, truth *t, counts *n)
{
    trace tr;
    read_trace(path, o->pointer_size, o->os_build >= 10240 ? 3 : 2, &tr);
    memset(n, 0, sizeof *n);
    assert_true(t->meta.stacks);
    assert_int_equal(t->meta.profile_interval, o->profile_interval);
    assert_int_equal(tr.intervals, 2); /* CollectionStart, CollectionEnd */

    /* Samples: one record each, in order per CPU. */
    assert_int_equal(tr.ns, t->samples);
    size_t si = 0;
    for (size_t i = 0; i < t->nst; i++) {
        const tstack *e = &t->st[i];
        if (e->hook != ETL_HOOK_SAMPLED_PROFILE) continue;
        const samplerec *x = NULL;
        for (size_t j = si; j < tr.ns; j++)
            if (tr.s[j].ts == e->time && tr.s[j].cpu == e->cpu) {
                x = &tr.s[j];
                break;
            }
        if (!x) fail_msg("sample at %llu on cpu %u not in the trace", (unsigned long long)e->time, e->cpu);
        assert_int_equal(x->tid, e->tid);
        assert_int_equal(x->ip, e->ip);
        assert_int_equal(x->count, 1);
        if (e->tid == 0) n->idle++;
        /* The module the truth names is the one the Image events say holds the IP then. */
        const imagerec *im = image_at(&tr, e->pid, e->ip, e->time);
        if (e->in_module) {
            if (!im) fail_msg("sample at %llu: ip 0x%llx in %s, in no image of the trace", (unsigned long long)e->time,
                              (unsigned long long)e->ip, e->module);
            assert_string_equal(base_name(im->path), e->module);
            assert_int_equal(e->offset, e->ip - im->im.image_base);
        } else {
            if (im) fail_msg("sample at %llu: ip 0x%llx in %s", (unsigned long long)e->time, (unsigned long long)e->ip,
                             im->path);
            n->no_module++;
        }
        if (e->depth) assert_int_equal(e->f[0], e->ip);
    }
    /* Stacks: every walk of the truth, and no walk record left over. */
    index_trace(&tr);
    for (size_t i = 0; i < t->nst; i++)
        if (t->st[i].depth) check_stack(&tr, &t->st[i], n);
    for (size_t i = 0; i < tr.nw; i++)
        if (!tr.w[i].used) fail_msg("walk record at %llu (hook 0x%04x) in no truth record", (unsigned long long)tr.w[i].rec_ts,
                                    tr.w[i].hook);
    /* Keys defined more than once: reused for another stack after their deletion. */
    for (size_t i = 0; i + 1 < tr.nk; i++)
        if (tr.k[i + 1].key == tr.k[i].key) n->reused_keys++;
    check_images(&tr, t, n);
    trace_free(&tr);
}

/* ---- tests -------------------------------------------------------------------------------- */

static char tmpdir[256];

static int setup_dir(void **state)
{
    (void)state;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "synth-stacks");
}

static int remove_dir(void **state)
{
    (void)state;
    return tu_tmpdir_remove(tmpdir);
}

static void set(etl_synth_options *o, const char *name, const char *value)
{
    etl_diag d;
    memset(&d, 0, sizeof d);
    if (etl_synth_set(o, name, value, &d) != ETL_OK) fail_msg("--%s: %s", name, d.msg);
}

static void run(const char *path, const etl_synth_options *o, truth *t)
{
    etl_synth_options oo = *o;
    memset(t, 0, sizeof *t);
    oo.on_truth = capture;
    oo.truth_ctx = t;
    etl_diag d;
    etl_synth_summary s;
    etl_status st = etl_synth_run(path, &oo, &s, &d);
    if (st != ETL_OK) fail_msg("etl_synth_run: %s: %s", etl_status_str(st), d.msg);
    assert_int_equal(s.samples, t->samples);
    assert_true(s.stack_events > 0);
    assert_int_equal(s.image_events, t->nim);
}

typedef struct flavour {
    const char *name, *ptr, *form, *clock, *cswitch, *build, *cpus;
    bool compress;
} flavour;

/* Image events are v2 before build 10240; compact batches alone have no CSwitch to walk. */
static const flavour flavours[] = {
    {"64-both", "64", "both", "qpc", "full", "19041", "4", false},
    {"32-both", "32", "both", "qpc", "both", "19041", "4", true},
    {"64-plain", "64", "plain", "system", "full", "19041", "4", false},
    {"32-cached", "32", "cached", "cycles", "full", "19041", "4", false},
    {"64-cached", "64", "cached", "qpc", "both", "19041", "4", true},
    {"32-compact-9600", "32", "both", "qpc", "compact", "9600", "2", false},
    {"64-16cpu-9200", "64", "both", "qpc", "full", "9200", "16", false},
};

static void test_flavours(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof flavours / sizeof flavours[0]; i++) {
        const flavour *fl = &flavours[i];
        etl_synth_options o;
        etl_synth_options_init(&o);
        char seed[16];
        snprintf(seed, sizeof seed, "%zu", 11 + i);
        set(&o, "seed", seed);
        set(&o, "stacks", NULL);
        set(&o, "duration", "0.6");
        set(&o, "churn", "60");
        set(&o, "processes", "12");
        set(&o, "threads", "80");
        set(&o, "pointer-size", fl->ptr);
        set(&o, "stack-form", fl->form);
        set(&o, "clock", fl->clock);
        set(&o, "cswitch", fl->cswitch);
        set(&o, "os-build", fl->build);
        set(&o, "cpus", fl->cpus);
        if (fl->compress) set(&o, "compress", NULL);
        char path[512];
        snprintf(path, sizeof path, "%s/%s.etl", tmpdir, fl->name);
        truth t;
        run(path, &o, &t);
        counts n;
        check(path, &o, &t, &n);
        print_message("%s: %zu samples, %zu stack records, %zu images; %zu deferred, %zu keys reused, %zu in no "
                      "image, %zu idle, %zu unload+reload\n",
                      fl->name, t.samples, t.nst, t.nim, n.deferred, n.reused_keys, n.no_module, n.idle,
                      n.plugin_cycles);
        assert_true(t.samples > 0);
        assert_true(n.no_module > 0);
        assert_true(n.idle > 0);
        assert_true(n.plugin_cycles > 0);
        if (o.stack_form != ETL_SYNTH_STACK_PLAIN) {
            assert_true(n.deferred > 0);
            assert_true(n.reused_keys > 0);
            assert_true(n.kernel_user > 0);
        }
        truth_free(&t);
        unlink(path);
    }
}

static uint8_t *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(sz > 0 ? (size_t)sz : 1);
    assert_non_null(b);
    *n = fread(b, 1, (size_t)sz, f);
    fclose(f);
    return b;
}

/* The same seed gives the same bytes, another seed others; off, no profile or stack event at all. */
static void test_determinism(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    set(&o, "stacks", NULL);
    set(&o, "duration", "0.3");
    char a[512], b[512], c[512];
    snprintf(a, sizeof a, "%s/det-a.etl", tmpdir);
    snprintf(b, sizeof b, "%s/det-b.etl", tmpdir);
    snprintf(c, sizeof c, "%s/det-c.etl", tmpdir);
    truth t;
    run(a, &o, &t);
    truth_free(&t);
    run(b, &o, &t);
    truth_free(&t);
    set(&o, "seed", "2");
    run(c, &o, &t);
    truth_free(&t);
    size_t na, nb, nc;
    uint8_t *pa = slurp(a, &na), *pb = slurp(b, &nb), *pc = slurp(c, &nc);
    assert_int_equal(na, nb);
    assert_memory_equal(pa, pb, na);
    assert_true(na != nc || memcmp(pa, pc, na) != 0);
    free(pa);
    free(pb);
    free(pc);

    set(&o, "no-stacks", NULL);
    etl_diag d;
    etl_synth_summary s;
    assert_int_equal(etl_synth_run(a, &o, &s, &d), ETL_OK);
    assert_int_equal(s.samples + s.stack_events + s.image_events, 0);
    trace tr;
    read_trace(a, 8, 3, &tr);
    assert_int_equal(tr.ns + tr.nw + tr.nk + tr.nim + tr.intervals, 0);
    trace_free(&tr);
    unlink(a);
    unlink(b);
    unlink(c);
}

/*
 * Whether key's value on a JSON line is written as an integer. (jansson reads
 * only int64: kernel addresses above 2^63 are parsed as reals, and checked
 * here as text.)
 */
static bool int_text(const char *line, const char *key)
{
    char k[64];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(line, k);
    if (!p) return false;
    p += strlen(k);
    if (*p < '0' || *p > '9') return false;
    while (*p >= '0' && *p <= '9') p++;
    return *p == ',' || *p == '}';
}

/* The JSON lines: the keys of each new type, integers for addresses, null for no module. */
static void test_jsonl(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    set(&o, "stacks", NULL);
    set(&o, "duration", "0.3");
    char path[512], tpath[512];
    snprintf(path, sizeof path, "%s/json.etl", tmpdir);
    snprintf(tpath, sizeof tpath, "%s/json.jsonl", tmpdir);
    FILE *f = fopen(tpath, "w");
    assert_non_null(f);
    o.on_truth = etl_synth_truth_jsonl;
    o.truth_ctx = f;
    etl_diag d;
    etl_synth_summary s;
    assert_int_equal(etl_synth_run(path, &o, &s, &d), ETL_OK);
    fclose(f);
    f = fopen(tpath, "r");
    assert_non_null(f);
    static char line[1 << 16]; /* fgets, not getline: the Windows build has no getline */
    size_t samples = 0, nulls = 0, stacks = 0, images = 0, metas = 0;
    while (fgets(line, sizeof line, f)) {
        json_error_t err;
        json_t *j = json_loads(line, JSON_DECODE_INT_AS_REAL, &err);
        if (!j) fail_msg("bad JSON line: %s: %s", err.text, line);
        const char *type = json_string_value(json_object_get(j, "type"));
        assert_non_null(type);
        if (strcmp(type, "meta") == 0) {
            metas++;
            assert_true(int_text(line, "profile_interval"));
            assert_true(json_number_value(json_object_get(j, "profile_interval")) == 10000);
            assert_true(json_is_true(json_object_get(j, "stacks")));
        } else if (strcmp(type, "sample") == 0) {
            samples++;
            const char *keys[] = {"time", "cpu", "tid", "pid", "ip", "count"};
            for (size_t k = 0; k < 6; k++) assert_true(int_text(line, keys[k]));
            json_t *m = json_object_get(j, "module");
            assert_non_null(m);
            if (json_is_null(m)) {
                nulls++;
                assert_null(json_object_get(j, "offset"));
            } else {
                assert_true(json_is_string(m));
                assert_true(int_text(line, "offset"));
            }
            json_t *st = json_object_get(j, "stack");
            if (st) {
                assert_true(json_is_array(st) && json_array_size(st) > 0);
                assert_true(json_is_number(json_array_get(st, 0)));
                const char *a = strstr(line, "\"stack\":[");
                assert_true(a && a[9] >= '0' && a[9] <= '9');
                const char *form = json_string_value(json_object_get(j, "form"));
                assert_true(strcmp(form, "plain") == 0 || strcmp(form, "cached") == 0);
            }
        } else if (strcmp(type, "stack") == 0) {
            stacks++;
            const char *ev = json_string_value(json_object_get(j, "event"));
            assert_true(strcmp(ev, "cswitch") == 0 || strcmp(ev, "readythread") == 0);
            assert_true(json_is_array(json_object_get(j, "stack")));
        } else if (strcmp(type, "image") == 0) {
            images++;
            const char *keys[] = {"time", "cpu", "hook", "pid", "base", "size", "time_date_stamp", "checksum"};
            for (size_t k = 0; k < 8; k++) assert_true(int_text(line, keys[k]));
            assert_true(json_is_string(json_object_get(j, "name")) && json_is_string(json_object_get(j, "path")));
        }
        json_decref(j);
    }
    fclose(f);
    assert_int_equal(metas, 1);
    assert_int_equal(samples, s.samples);
    assert_int_equal(images, s.image_events);
    assert_true(nulls > 0 && stacks > 0);
    unlink(path);
    unlink(tpath);
}

static void test_options(void **state)
{
    (void)state;
    etl_synth_options o;
    etl_synth_options_init(&o);
    assert_false(o.stacks);
    assert_int_equal(o.profile_interval, 10000);
    assert_int_equal(o.stack_form, ETL_SYNTH_STACK_BOTH);
    etl_diag d;
    assert_int_equal(etl_synth_set(&o, "stack-form", "keys", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "profile-interval", "10", &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_synth_set(&o, "profile-interval", "1221", &d), ETL_OK);
    char v[32];
    etl_synth_get(&o, "profile-interval", v, sizeof v);
    assert_string_equal(v, "1221");
    assert_int_equal(etl_synth_set(&o, "stack-form", "cached", &d), ETL_OK);
    etl_synth_get(&o, "stack-form", v, sizeof v);
    assert_string_equal(v, "cached");
    o.stack_form = 7;
    assert_int_equal(etl_synth_validate(&o, &d), ETL_E_INVALID_ARG);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_options),
        cmocka_unit_test(test_flavours),
        cmocka_unit_test(test_determinism),
        cmocka_unit_test(test_jsonl),
    };
    return cmocka_run_group_tests(tests, setup_dir, remove_dir);
}

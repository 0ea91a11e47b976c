/*
 * summary.c - a trace at a glance in one pass (summary.h, etl_summary_run): records by
 * header type, hook, provider and CPU, the time span, the kernel flags and the kernel
 * events, counted over the file's buffers by one or more threads.
 *
 * Each thread walks a range of buffers in file order (etl_iter_open_range) and counts
 * into its own share; the shares are then added in file order, so every count, the
 * provider order and the last header extension's version are the same with any number
 * of threads. The walk frames SYSTEM, COMPACT and PERFINFO records inline; the frequent
 * events (CSwitch, ReadyThread, SpinLock) are counted from their payload size alone:
 * their decoders can only fail on a short payload, and decoding millions of them to
 * count them would cost a third of the run.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/summary.h"
#include "etlkit/ccswap.h"
#include "etlkit/event.h"
#include "base/idmap.h"
#include "base/opts.h"
#include "base/platform.h"
#include "base/sort.h"
#include "container/reader_internal.h"

/* A buffer's record times, for the check of its CPU's order (check_order): its first record's and its latest. */
typedef struct buf_times {
    uint64_t first, last;   /* first UINT64_MAX: no record with a time */
    uint32_t pos;           /* the first's place in the buffer */
    uint16_t hook;          /* the first's hook, or ETL_SUMMARY_NO_HOOK | its header type */
} buf_times;
#define ETL_SUMMARY_NO_HOOK 0x8000u

/* One thread's share of the file: a range of buffers, its counts and its provider table. */
typedef struct share {
    etl_reader *r;
    size_t first, count;
    etl_summary c;
    etl_summary_provider *tab;   /* open addressing keyed by GUID; count 0 = free slot */
    size_t cap, n;
    int oom;
    _Atomic uint64_t progress;
    const etl_summary_options *o; /* share 0 (the caller's thread) reports progress for all */
    struct share *all;
    unsigned nall;
    etl_os_thread *th;             /* NULL: counted on the caller's thread */
    uint64_t t_lo;                 /* the session's window starts here (etl_reader_time_window) */
    etl_stats dmg;                 /* damage found in compact batches (etl_batch_expand_tell) */
    etl_batch_expander x;          /* a damaged batch's judge */
    etl_batch_expand_cpu xcpu;
    buf_times *bt;                 /* by buffer index, shared: each share writes its own buffers' */
} share;

/* Buffers per thread below which a thread is not worth starting. */
#define MIN_BUFFERS 8

/* Every byte counts: WPP GUIDs of one component may differ only in Data4. */
static size_t guid_hash(const etl_guid *g) { return (size_t)etl_hash_bytes(g, sizeof *g); }

static int prov_add(share *sh, const etl_guid *g, uint64_t count)
{
    if ((sh->n + 1) * 2 > sh->cap) {
        size_t ncap = sh->cap ? sh->cap * 2 : 64;
        etl_summary_provider *n = calloc(ncap, sizeof *n);
        if (!n) return -1;
        for (size_t i = 0; i < sh->cap; i++) {
            if (!sh->tab[i].count) continue;
            size_t j = guid_hash(&sh->tab[i].guid) & (ncap - 1);
            while (n[j].count) j = (j + 1) & (ncap - 1);
            n[j] = sh->tab[i];
        }
        free(sh->tab);
        sh->tab = n;
        sh->cap = ncap;
    }
    size_t j = guid_hash(g) & (sh->cap - 1);
    while (sh->tab[j].count && memcmp(&sh->tab[j].guid, g, sizeof *g) != 0) j = (j + 1) & (sh->cap - 1);
    if (!sh->tab[j].count) {
        sh->tab[j].guid = *g;
        sh->n++;
    }
    sh->tab[j].count += count;
    return 0;
}

static int by_count_desc(const void *a, const void *b)
{
    const etl_summary_provider *x = a, *y = b;
    if (x->count != y->count) return x->count > y->count ? -1 : 1;
    return memcmp(&x->guid, &y->guid, sizeof x->guid);
}

/* The hooks the summary decodes: etl_event_decode's, less the profile, stack and image events it does not count. */
static bool summary_decodes(uint16_t hook)
{
    switch (hook) {
    case ETL_HOOK_SAMPLED_PROFILE: case ETL_HOOK_PMC_COUNTER_PROF: case ETL_HOOK_PROFILE_SET_INTERVAL:
    case ETL_HOOK_PROFILE_COLLECTION_START: case ETL_HOOK_PROFILE_COLLECTION_END:
    case ETL_HOOK_STACKWALK: case ETL_HOOK_STACK_KEY_DELETE: case ETL_HOOK_STACK_KEY_RUNDOWN:
    case ETL_HOOK_STACK_KEY_KERNEL: case ETL_HOOK_STACK_KEY_USER:
    case ETL_HOOK_PROCESS_LOAD_IMAGE: case ETL_HOOK_IMAGE_UNLOAD: case ETL_HOOK_IMAGE_DC_START:
    case ETL_HOOK_IMAGE_DC_END: case ETL_HOOK_IMAGE_LOAD: case ETL_HOOK_IMAGE_KERNEL_BASE:
    case ETL_HOOK_IMAGE_HYPERCALL_PAGE:
        return false;
    default:
        return etl_event_hook_decodes(hook);
    }
}

/*
 * A compact batch's damage, judged as every command that expands batches judges it (a batch shorter than its
 * header, a record cut by its Size, a bad TidTable index, a switch before the session or after its buffer's
 * flush or after the batch was written: kernel-events.md 6.5) and told with its file offset: info counts
 * batches without expanding them, but damage it passes over in silence is still damage (exit 3). The batch
 * at rec of the buffer w holds was counted (nbad: its bad-index and cut records; last: its last switch's time,
 * etl_ccswap_count_timed) or could not be opened (b NULL); written: its header's time (UINT64_MAX: none). Only a batch found damaged here is expanded, by
 * itself: the chain across batches is not info's, only the batch's own damage.
 */
static void check_batch(share *sh, const etl_walk *w, const uint8_t *rec, etl_span payload, unsigned version,
                        const etl_ccswap_walker *b, uint64_t nbad, uint64_t last, uint64_t written)
{
    uint64_t limit = etl_walk_time_limit(w);
    if (b && !nbad && b->first_time >= sh->t_lo && last <= limit && last <= written) return;
    etl_batch_expander *x = &sh->x;
    etl_batch_expand_stats keep = x->stats;
    etl_batch_expand_init(x, &sh->xcpu, 1);
    x->stats = keep;
    etl_batch_expand_window(x, sh->t_lo, limit);
    etl_batch_expand_stats before = x->stats;
    etl_batch_expand_begin_written(x, 0, payload, 0, (uint8_t)version, written);
    etl_cswitch sw;
    while (etl_batch_expand_next(x, &sw) == ETL_OK) {}
    if (x->stats.bad_time != before.bad_time)
        etl_walk_bad_time(w, rec, x->walk.time, "hook 0x0525, a switch", "the batch's switches from there on dropped");
    etl_batch_expand_tell(x, &before, sh->r, w->buffer_index, (size_t)(rec - w->p), &sh->dmg);
}

/* A framed record's kernel event, if it is one: counted by kind, batches walked (w: the walk it came from). */
static void count_kernel(share *sh, const etl_walk *w, const etl_record *rec)
{
    etl_summary *c = &sh->c;
    uint16_t hook;
    if (!etl_record_kernel_hook(rec, &hook)) return;
    size_t need = 0;
    uint64_t *counter = NULL;
    switch (hook) {
    case ETL_HOOK_CSWITCH: need = etl_cswitch_size(rec->version); counter = &c->cswitch; break;
    case ETL_HOOK_READY_THREAD: need = 8; counter = &c->ready_thread; break;
    case ETL_HOOK_SPINLOCK: need = 2u * rec->pointer_size + 0x23; counter = &c->spinlock; break;
    default: break;
    }
    if (counter) {
        if (rec->payload.n >= need) ++*counter;
        else c->undecodable++;
        return;
    }
    if (!summary_decodes(hook)) return;
    etl_event ev;
    etl_status st = etl_event_decode(rec, &ev);
    if (st == ETL_END) return;
    if (st != ETL_OK) {
        c->undecodable++;
        if (hook == ETL_HOOK_CSWITCH_BATCH && st == ETL_E_TRUNCATED)
            check_batch(sh, w, rec->data, rec->payload, rec->version, NULL, 0, 0, etl_record_ts_or_none(rec));
        return;
    }
    switch (ev.kind) {
    case ETL_EVENT_CSWITCH: c->cswitch++; break;
    case ETL_EVENT_SPINLOCK: c->spinlock++; break;
    case ETL_EVENT_READY_THREAD: c->ready_thread++; break;
    case ETL_EVENT_THREAD: c->thread++; break;
    case ETL_EVENT_PROCESS: c->process++; break;
    case ETL_EVENT_CCSWAP_BATCH: {
        c->compact_batches++;
        uint64_t n, bad, last;
        etl_ccswap_count_timed(&ev.u.batch, &n, &bad, &last);
        c->compact_switches += n;
        c->compact_bad += bad;
        check_batch(sh, w, rec->data, rec->payload, rec->version, &ev.u.batch, bad, last,
                    etl_record_ts_or_none(rec));
        break;
    }
    case ETL_EVENT_GROUP_MASK:
        c->group_mask_events++;
        for (int i = 0; i < 8; i++) c->flags.masks[i] |= ev.u.group_mask.masks[i];
        if (ev.u.group_mask.kernel_event_version) c->kernel_event_version = ev.u.group_mask.kernel_event_version;
        break;
    default: break;
    }
}

/* A walk's kernel record: counted from its header, and from its payload size for the frequent events. */
static void count_krec(share *sh, const etl_walk *w, const etl_krec *k)
{
    etl_summary *c = &sh->c;
    c->by_htype[k->htype]++;
    c->by_hook[k->hook]++;
    if (k->ts < c->first_ts) c->first_ts = k->ts;
    if (k->ts > c->last_ts) c->last_ts = k->ts;
    size_t need;
    uint64_t *counter;
    switch (k->hook) {
    case ETL_HOOK_CSWITCH: need = (k->version_word & 0xFF) <= 1 ? 16 : 24; counter = &c->cswitch; break; /* etl_cswitch_size */
    case ETL_HOOK_READY_THREAD: need = 8; counter = &c->ready_thread; break;
    case ETL_HOOK_SPINLOCK: need = 2u * k->pointer_size + 0x23; counter = &c->spinlock; break;
    case ETL_HOOK_CSWITCH_BATCH: {
        etl_ccswap_walker b;
        unsigned version = k->version_word & 0xFF;
        if (etl_ccswap_open(&b, k->payload) != ETL_OK) {
            c->undecodable++;
            check_batch(sh, w, k->data, k->payload, version, NULL, 0, 0, k->ts);
            return;
        }
        uint64_t n, bad, last;
        etl_ccswap_count_timed(&b, &n, &bad, &last);
        c->compact_batches++;
        c->compact_switches += n;
        c->compact_bad += bad;
        check_batch(sh, w, k->data, k->payload, version, &b, bad, last, k->ts);
        return;
    }
    default:
        if (summary_decodes(k->hook)) {
            etl_record rec;
            etl_krec_record(w, k, &rec);
            count_kernel(sh, w, &rec);
        }
        return;
    }
    if (k->payload.n >= need) ++*counter;
    else c->undecodable++;
}

static void share_progress(share *sh, uint64_t mine)
{
    atomic_store_explicit(&sh->progress, mine, memory_order_relaxed);
    if (!sh->o || !sh->o->progress) return;
    uint64_t sum = 0;
    for (unsigned i = 0; i < sh->nall; i++) sum += atomic_load_explicit(&sh->all[i].progress, memory_order_relaxed);
    sh->o->progress(sh->o->progress_ctx, sum);
}

static void count_share(void *arg)
{
    share *sh = arg;
    etl_summary *c = &sh->c;
    etl_iter *it = NULL;
    if (etl_iter_open_range(sh->r, sh->first, sh->count, &it) != ETL_OK) {
        sh->oom = 1;
        return;
    }
    /* c is new: first_ts starts high so that kernel records need no have_ts test. */
    int have = 0;
    c->first_ts = UINT64_MAX;
    c->last_ts = 0;
    etl_walk w;
    etl_krec k;
    for (unsigned nb = 0; etl_iter_next_buffer(it, &w) == ETL_OK; nb++) {
        if ((nb & 15) == 0) share_progress(sh, etl_iter_progress(it));
        int kind;
        buf_times t = {UINT64_MAX, 0, 0, 0};
        while ((kind = etl_walk_next(&w, &k)) != ETL_WALK_END) {
            if (kind == ETL_WALK_KERNEL) {
                count_krec(sh, &w, &k);
                have = 1;
                if (__builtin_expect(t.first == UINT64_MAX, 0)) t = (buf_times){k.ts, 0, (uint32_t)(k.data - w.p), k.hook};
                continue;
            }
            const etl_record *rec = &w.full;
            c->by_htype[rec->htype]++;
            if ((rec->has & ETL_REC_PROVIDER) && prov_add(sh, &rec->provider, 1) != 0) sh->oom = 1;
            count_kernel(sh, &w, rec);
            if (rec->has & ETL_REC_TS) {
                if (rec->ts < c->first_ts) c->first_ts = rec->ts;
                if (rec->ts > c->last_ts) c->last_ts = rec->ts;
                have = 1;
                if (t.first == UINT64_MAX)
                    t = (buf_times){rec->ts, 0, (uint32_t)rec->offset,
                                    (uint16_t)(rec->has & ETL_REC_HOOK ? rec->hook : ETL_SUMMARY_NO_HOOK | rec->htype)};
            }
        }
        t.last = w.t_lo; /* the walk's: its latest record's time (as the iterator carries a walk's) */
        if (sh->bt && w.buffer_index < etl_reader_buffer_count(sh->r)) sh->bt[w.buffer_index] = t;
        c->records += w.records;
        if (w.cpu < ETL_SUMMARY_MAX_CPUS) c->cpu_records[w.cpu] += w.records;
    }
    c->have_ts = have;
    if (!have) c->first_ts = 0;
    share_progress(sh, etl_iter_progress(it));
    c->st = *etl_iter_stats_get(it);
    etl_stats none = {.first_problem_offset = UINT64_MAX};
    etl_stats_add(&c->st, &sh->dmg, &none); /* the batches' damage, counted apart from the iterator's */
    etl_iter_close(it);
}

/* Adds share x (later in the file than what sh holds) into sh. */
static int share_merge(share *sh, const share *xs, const etl_stats *base)
{
    etl_summary *c = &sh->c;
    const etl_summary *x = &xs->c;
    etl_stats_add(&c->st, &x->st, base);
    c->records += x->records;
    for (int i = 0; i < 256; i++) c->by_htype[i] += x->by_htype[i];
    for (int i = 0; i < 65536; i++) c->by_hook[i] += x->by_hook[i];
    for (int i = 0; i < ETL_SUMMARY_MAX_CPUS; i++) c->cpu_records[i] += x->cpu_records[i];
    for (size_t i = 0; i < xs->cap; i++)
        if (xs->tab[i].count && prov_add(sh, &xs->tab[i].guid, xs->tab[i].count) != 0) return -1;
    if (x->have_ts) {
        if (!c->have_ts || x->first_ts < c->first_ts) c->first_ts = x->first_ts;
        if (!c->have_ts || x->last_ts > c->last_ts) c->last_ts = x->last_ts;
        c->have_ts = 1;
    }
    for (int i = 0; i < 8; i++) c->flags.masks[i] |= x->flags.masks[i];
    if (x->kernel_event_version) c->kernel_event_version = x->kernel_event_version;
    c->group_mask_events += x->group_mask_events;
    c->cswitch += x->cswitch;
    c->compact_batches += x->compact_batches;
    c->compact_switches += x->compact_switches;
    c->compact_bad += x->compact_bad;
    c->spinlock += x->spinlock;
    c->ready_thread += x->ready_thread;
    c->thread += x->thread;
    c->process += x->process;
    c->undecodable += x->undecodable;
    return 0;
}

/*
 * A buffer whose first record is earlier than the latest record of its CPU's buffers before it by SequenceNumber
 * (its CPU or its place is wrong, or that buffer's): told as the time-ordered readers tell it (iter.c's judge_time)
 * and counted, which a walk of the file in order cannot see (explore21 F2: a buffer relabelled to another CPU read
 * clean here while cpu exited 3). bt: every buffer's times.
 */
static etl_status check_order(etl_reader *r, const buf_times *bt, etl_stats *st)
{
    size_t n = 0;
    const etl_buf_ent **v = malloc((r->nbufs ? r->nbufs : 1) * sizeof *v);
    if (!v) return ETL_E_NOMEM;
    for (size_t i = 0; i < r->nbufs; i++)
        if (!r->bufs[i].skip && r->bufs[i].cpu < r->ncpu && bt[i].first != UINT64_MAX &&
            r->bufs[i].type != ETL_BUFFER_TYPE_HEADER) /* written apart at the start, as iter.c's cursor_carry */
            v[n++] = &r->bufs[i];
    etl_sort(v, n, sizeof *v, etl_buf_by_cpu_order);
    uint64_t carry = 0;
    const etl_buf_ent *pb = NULL;
    for (size_t i = 0; i < n; i++) {
        const etl_buf_ent *x = v[i];
        const buf_times *t = &bt[x->index];
        if (pb && pb->cpu == x->cpu && t->first < carry) {
            char what[40];
            if (t->hook & ETL_SUMMARY_NO_HOOK) snprintf(what, sizeof what, "%s", etl_htype_name((uint8_t)t->hook));
            else snprintf(what, sizeof what, "hook 0x%04x", t->hook);
            st->bad_buffers++;
            etl_buf_tell_back(r, st, x, t->pos, t->first, what, carry, pb);
        }
        if (!pb || pb->cpu != x->cpu || t->last > carry) {
            carry = t->last;
            pb = x;
        }
    }
    free(v);
    return ETL_OK;
}

static void share_free(share *sh)
{
    free(sh->c.by_hook);
    free(sh->tab);
}

etl_status etl_summary_run(etl_reader *r, const etl_summary_options *o, etl_summary *s)
{
    memset(s, 0, sizeof *s);
    etl_summary_options opt = {.sz = sizeof opt, .threads = 1};
    etl_opts_take(&opt, sizeof opt, o);
    size_t nbufs = etl_reader_buffer_count(r);
    unsigned n = opt.threads;
    if (n > nbufs / MIN_BUFFERS) n = (unsigned)(nbufs / MIN_BUFFERS);
    if (n < 1) n = 1;
    share *sh = calloc(n, sizeof *sh);
    buf_times *bt = malloc((nbufs ? nbufs : 1) * sizeof *bt);
    int oom = !sh || !bt;
    for (size_t i = 0; bt && i < nbufs; i++) bt[i].first = UINT64_MAX; /* a buffer not walked (unloadable): none */
    for (unsigned i = 0; !oom && i < n; i++) {
        sh[i].r = r;
        sh[i].first = nbufs * i / n;
        sh[i].count = nbufs * (i + 1) / n - sh[i].first;
        sh[i].all = sh;
        sh[i].nall = n;
        sh[i].dmg.first_problem_offset = UINT64_MAX;
        sh[i].bt = bt;
        uint64_t hi;
        etl_reader_time_window(r, &sh[i].t_lo, &hi);
        if (!(sh[i].c.by_hook = calloc(65536, sizeof *sh[i].c.by_hook))) oom = 1;
    }
    if (oom) {
        for (unsigned i = 0; sh && i < n; i++) share_free(&sh[i]);
        free(sh);
        free(bt);
        return ETL_E_NOMEM;
    }
    sh[0].o = &opt;
    for (unsigned i = 1; i < n; i++) sh[i].th = etl_thread_start(count_share, &sh[i]);
    count_share(&sh[0]);
    for (unsigned i = 1; i < n; i++) {
        if (sh[i].th) etl_thread_join(sh[i].th);
        else count_share(&sh[i]); /* no thread to be had: here */
    }
    oom = sh[0].oom;
    for (unsigned i = 1; i < n; i++) {
        if (share_merge(&sh[0], &sh[i], etl_reader_stats_get(r)) != 0 || sh[i].oom) oom = 1;
        share_free(&sh[i]);
    }
    if (!oom && check_order(r, bt, &sh[0].c.st) != ETL_OK) oom = 1;
    free(bt);
    /* The provider table compacted in place, most frequent first. */
    size_t np = 0;
    for (size_t i = 0; i < sh[0].cap; i++)
        if (sh[0].tab[i].count) sh[0].tab[np++] = sh[0].tab[i];
    if (np) qsort(sh[0].tab, np, sizeof *sh[0].tab, by_count_desc);
    *s = sh[0].c;
    s->providers = sh[0].tab;
    s->nproviders = np;
    free(sh);
    return oom ? ETL_E_NOMEM : ETL_OK;
}

void etl_summary_free(etl_summary *s)
{
    if (!s) return; /* as the handles' close: a cleanup path may free what it never made */
    free(s->by_hook);
    free(s->providers);
    s->by_hook = NULL;
    s->providers = NULL;
    s->nproviders = 0;
}

int64_t etl_summary_duration_ns(const etl_summary *s, const etl_clock *clk)
{
    __int128 d = (__int128)etl_clock_ns(clk, s->last_ts) - etl_clock_ns(clk, s->first_ts);
    return d > INT64_MAX ? INT64_MAX : d < INT64_MIN ? INT64_MIN : (int64_t)d;
}

/*
 * profile_rows.c - the tables image, stack and sample from a profile pass
 * (etl_profile_run_each): a sample row as each sample is counted, then the
 * images in the order logged and every distinct stack's frames.
 *
 * A sample's utid is the model's thread instance of its TID live at its time:
 * the last instance started at or before it, else the first (a thread sampled
 * before its rundown), found by binary search in (tid, start) order.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/symbols.h"
#include "etlkit/export.h"
#include "etlkit/profile.h"
#include "base/sort.h"
#include "export/rows_internal.h"
#include "stacks/label_whole.h"

typedef struct inst {
    uint32_t tid, index;
    uint64_t start_ts;
} inst;

static int cmp_inst(const void *a, const void *b)
{
    const inst *x = a, *y = b;
    if (x->tid != y->tid) return x->tid < y->tid ? -1 : 1;
    if (x->start_ts != y->start_ts) return x->start_ts < y->start_ts ? -1 : 1;
    return x->index < y->index ? -1 : x->index > y->index;
}

typedef struct prun {
    etl_export_rows *x;
    inst *v;
    size_t n;
} prun;

/* The thread instance of tid at ts, or -1 (the idle thread, a TID the model never saw). */
static int64_t utid_of(const prun *R, uint32_t tid, uint64_t ts)
{
    if (!tid) return -1;
    size_t lo = 0, hi = R->n; /* first entry > (tid, ts) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        const inst *e = &R->v[mid];
        if (e->tid < tid || (e->tid == tid && e->start_ts <= ts)) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && R->v[lo - 1].tid == tid) return R->v[lo - 1].index;
    if (lo < R->n && R->v[lo].tid == tid) return R->v[lo].index;
    return -1;
}

static void hex(char out[24], uint64_t v) { snprintf(out, 24, "0x%" PRIx64, v); }

static etl_status on_sample(void *ctx, const etl_profile_sample *s)
{
    prun *R = ctx;
    etl_export_rows *x = R->x;
    if (!etl_rows_want(x, ETL_TABLE_SAMPLE)) return x->failed ? ETL_E_IO : ETL_OK;
    char ip[24];
    hex(ip, s->ip);
    etl_rows_clear(x, ETL_TABLE_SAMPLE);
    etl_rows_vu(x, 0, s->ts);
    etl_rows_vi(x, 1, s->ns);
    etl_rows_vi(x, 2, s->cpu);
    int64_t u = utid_of(R, s->tid, s->ts);
    if (u >= 0) etl_rows_vi(x, 3, u);
    etl_rows_vi(x, 4, s->tid);
    if (s->pid != ETL_PROFILE_NONE) etl_rows_vi(x, 5, s->pid);
    etl_rows_vi(x, 6, (int64_t)x->stack_base + s->stack);
    etl_rows_vi(x, 7, s->walked);
    etl_rows_vs(x, 8, ip);
    if (s->ip_image != ETL_PROFILE_NONE) etl_rows_vi(x, 9, s->ip_image);
    etl_rows_emit(x, ETL_TABLE_SAMPLE);
    return x->failed ? ETL_E_IO : ETL_OK;
}

static void image_rows(etl_export_rows *x, const etl_profile *p)
{
    char base[24];
    for (size_t i = 0; i < p->nimages && etl_rows_want(x, ETL_TABLE_IMAGE); i++) {
        const etl_profile_image *m = &p->images[i];
        hex(base, m->base);
        etl_rows_clear(x, ETL_TABLE_IMAGE);
        etl_rows_vi(x, 0, (int64_t)i);
        etl_rows_vi(x, 1, m->pid);
        etl_rows_vs(x, 2, base);
        etl_rows_vu(x, 3, m->size);
        etl_rows_vs(x, 4, m->name);
        etl_rows_vs(x, 5, m->path);
        etl_rows_vi(x, 6, m->time_date_stamp);
        etl_rows_vi(x, 7, m->checksum);
        if (m->from_ns != INT64_MIN) etl_rows_vi(x, 8, m->from_ns);
        if (m->to_ns != INT64_MAX) etl_rows_vi(x, 9, m->to_ns);
        etl_rows_vi(x, 10, m->kernel);
        etl_rows_emit(x, ETL_TABLE_IMAGE);
    }
}

/* Every distinct stack id of p's (thread, stack) rows, ascending, with its frames. */
static etl_status stack_rows(etl_export_rows *x, const etl_profile *p)
{
    if (!etl_rows_want(x, ETL_TABLE_STACK)) return ETL_OK;
    uint64_t *ids = malloc((p->nstacks ? p->nstacks : 1) * sizeof *ids);
    if (!ids) return ETL_E_NOMEM;
    for (size_t i = 0; i < p->nstacks; i++) ids[i] = p->stacks[i].stack;
    etl_sort_u64(ids, p->nstacks);
    char addr[24], sym[1100];
    for (size_t i = 0; i < p->nstacks && !x->failed; i++) {
        if (i && ids[i] == ids[i - 1]) continue;
        uint32_t n;
        const etl_profile_frame *f = etl_profile_stack_frames(p, (uint32_t)ids[i], &n);
        for (uint32_t d = 0; d < n; d++) {
            hex(addr, f[d].address);
            etl_rows_clear(x, ETL_TABLE_STACK);
            etl_rows_vi(x, 0, (int64_t)x->stack_base + (int64_t)ids[i]);
            etl_rows_vi(x, 1, d);
            etl_rows_vs(x, 2, addr);
            if (f[d].image != ETL_PROFILE_NONE) etl_rows_vi(x, 3, f[d].image);
            char *label = NULL; /* whole: two names cut alike would read as one function */
            if (x->o.symbols && !(label = etl_label_whole(etl_symbols_frame_label, x->o.symbols, p, &f[d], sym,
                                                           sizeof sym, NULL))) {
                free(ids);
                return ETL_E_NOMEM;
            }
            if (label) etl_rows_vs(x, 4, label);
            etl_rows_emit(x, ETL_TABLE_STACK);
            if (label != sym) free(label);
        }
    }
    free(ids);
    return ETL_OK;
}

etl_status etl_export_rows_profile(etl_export_rows *x, etl_reader *r, const etl_sched *model)
{
    uint32_t mask = 1u << ETL_TABLE_IMAGE | 1u << ETL_TABLE_STACK | 1u << ETL_TABLE_SAMPLE;
    if (!(x->o.tables & mask) || x->failed) return x->failed ? ETL_E_IO : ETL_OK;
    size_t nt;
    const etl_sched_thread *t = etl_sched_threads(model, &nt);
    prun R = {x, malloc((nt ? nt : 1) * sizeof *R.v), nt};
    if (!R.v) return ETL_E_NOMEM;
    for (size_t i = 0; i < nt; i++) R.v[i] = (inst){t[i].tid, (uint32_t)i, t[i].start_ts};
    etl_sort(R.v, nt, sizeof *R.v, cmp_inst);

    etl_profile_options o = {.sz = sizeof o, .pid = -1, .tid = -1, .threads = x->o.threads};
    if (x->o.has_range) {
        o.v0 = x->o.v0;
        o.v1 = x->o.v1 > x->o.v0 ? x->o.v1 : x->o.v0 + 1; /* an empty --range is still a window */
    }
    etl_profile p;
    etl_status st = etl_profile_run_each(r, &o, on_sample, &R, &p);
    x->profile_damaged = etl_stats_damaged(&p.st);
    if (st == ETL_OK) image_rows(x, &p);
    if (st == ETL_OK) st = stack_rows(x, &p);
    if (st == ETL_OK && x->failed) st = ETL_E_IO;
    etl_profile_free(&p);
    free(R.v);
    return st;
}

bool etl_export_rows_profile_damaged(const etl_export_rows *x) { return x && x->profile_damaged; }

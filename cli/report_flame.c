/*
 * report_flame.c - the report page's flame graph (section 8, only when the trace
 * has SampledProfile events) and its data: under "profile" the object `etlkit
 * profile FILE --json --top N` prints (profile_json), under "flame" the samples
 * as a tree, which report.js draws as an SVG icicle (the root on top, click a
 * frame to zoom, click the root to reset).
 *
 * The tree is the folded stacks' (etl_profile_write_folded): all, then the
 * process, the thread, the frames from the root to the leaf; a node's samples
 * are those whose path passes through it. To keep the page small, children with
 * fewer than 1/1000 of the samples are merged into one "other" child of their
 * parent. It is written flat, [parent, samples, label] per node in depth-first
 * order, each node's children most samples first (the JSON writer nests 64 deep,
 * a stack up to 384).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "report_page.h"
#include "base/sort.h"
#include "stacks/strtab.h"

#define FLAME_MAX_NODES 20000u /* written at most: a tree past it stops descending */
#define NONE UINT32_MAX

enum { LV_PROCESS, LV_THREAD, LV_FRAME };

typedef struct fnode {
    uint32_t parent, child, next; /* first child, next sibling */
    uint8_t level;
    uint32_t index;               /* process or thread row, or the frame's label (in labels) */
    uint64_t samples;
} fnode;

typedef struct ftree {
    fnode *v;
    size_t n, cap;
    etl_strtab labels;            /* the frames' labels (module+offset, or with symbols module!function): a node each */
} ftree;

/* The child of parent with this key, made when new. NONE: out of memory. */
static uint32_t child_of(ftree *t, uint32_t parent, uint8_t level, uint32_t index)
{
    for (uint32_t c = t->v[parent].child; c != NONE; c = t->v[c].next)
        if (t->v[c].level == level && t->v[c].index == index) return c;
    if (t->n == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 1024;
        fnode *v = realloc(t->v, cap * sizeof *v);
        if (!v) return NONE;
        t->v = v;
        t->cap = cap;
    }
    uint32_t i = (uint32_t)t->n++;
    t->v[i] = (fnode){parent, NONE, t->v[parent].child, level, index, 0};
    t->v[parent].child = i;
    return i;
}

static int build(ftree *t, const etl_profile *p, etl_symbols *syms)
{
    char buf[1100];
    t->v = malloc(1024 * sizeof *t->v);
    if (!t->v) return -1;
    t->cap = 1024;
    t->n = 1;
    t->v[0] = (fnode){NONE, NONE, NONE, 0, 0, p->samples};
    for (size_t s = 0; s < p->nstacks; s++) {
        const etl_profile_stack *k = &p->stacks[s];
        const etl_profile_thread *th = &p->threads[k->thread];
        uint32_t at = child_of(t, 0, LV_PROCESS, th->process);
        if (at != NONE) t->v[at].samples += k->samples;
        if (at != NONE) at = child_of(t, at, LV_THREAD, k->thread);
        if (at != NONE) t->v[at].samples += k->samples;
        uint32_t n;
        const etl_profile_frame *f = etl_profile_stack_frames(p, k->stack, &n);
        for (uint32_t d = n; at != NONE && d-- > 0;) { /* the root first */
            /* One node per label, as --folded names the frame: an image unloaded and loaded again (or at another
             * base) is one module+offset, not a node per image life. */
            size_t len = syms ? etl_symbols_function_label(syms, p, &f[d], buf, sizeof buf)
                              : etl_profile_frame_label(p, &f[d], buf, sizeof buf);
            uint32_t lab;
            if (etl_strtab_add(&t->labels, buf, len < sizeof buf ? len : sizeof buf - 1, &lab) != ETL_OK) return -1;
            at = child_of(t, at, LV_FRAME, lab);
            if (at != NONE) t->v[at].samples += k->samples;
        }
        if (at == NONE) return -1;
    }
    return 0;
}

typedef struct ord {
    uint64_t samples;
    uint32_t i;
} ord;

static int by_samples_desc(const void *a, const void *b)
{
    const ord *x = a, *y = b;
    if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static const char *label(const ftree *t, const etl_profile *p, const fnode *n, char out[256])
{
    if (n->level == LV_FRAME) return etl_strtab_get(&t->labels, n->index);
    if (n->level == LV_PROCESS) {
        const etl_profile_process *pr = &p->processes[n->index];
        if (pr->pid == ETL_PROFILE_NONE) snprintf(out, 256, "%s", pr->name);
        else snprintf(out, 256, "%s (%" PRIu32 ")", pr->name, pr->pid);
    } else if (n->level == LV_THREAD) {
        const etl_profile_thread *th = &p->threads[n->index];
        snprintf(out, 256, "%s (%" PRIu32 ")", th->name[0] ? th->name : "Thread", th->tid);
    }
    return out;
}

/* Writes node i (already numbered out) and below, depth first; *written counts the nodes. -1: out of memory (a tree
 * cut short would show its samples on the wrong node: the page fails instead). */
static int emit(jw *w, const ftree *t, const etl_profile *p, uint32_t i, int64_t out, uint64_t min, uint32_t *written)
{
    const fnode *n = &t->v[i];
    size_t nc = 0;
    for (uint32_t c = n->child; c != NONE; c = t->v[c].next) nc++;
    if (!nc) return 0;
    ord *o = malloc(nc * sizeof *o);
    if (!o) return -1;
    nc = 0;
    for (uint32_t c = n->child; c != NONE; c = t->v[c].next) o[nc++] = (ord){t->v[c].samples, c};
    etl_sort(o, nc, sizeof *o, by_samples_desc);
    uint64_t other = 0;
    char buf[256];
    for (size_t k = 0; k < nc; k++) {
        if (o[k].samples < min || *written >= FLAME_MAX_NODES) {
            other += o[k].samples;
            continue;
        }
        int64_t me = (*written)++;
        jw_arr(w, NULL);
        jw_i64(w, NULL, out);
        jw_u64(w, NULL, o[k].samples);
        jw_str(w, NULL, label(t, p, &t->v[o[k].i], buf));
        jw_arr_end(w);
        if (emit(w, t, p, o[k].i, me, min, written) != 0) {
            free(o);
            return -1;
        }
    }
    if (other) {
        (*written)++;
        jw_arr(w, NULL);
        jw_i64(w, NULL, out);
        jw_u64(w, NULL, other);
        jw_str(w, NULL, "other");
        jw_arr_end(w);
    }
    free(o);
    return 0;
}

int flame_json(jw *w, const etl_profile *p, etl_symbols *syms)
{
    ftree t = {0};
    etl_strtab_init(&t.labels);
    if (build(&t, p, syms) != 0) {
        free(t.v);
        etl_strtab_free(&t.labels);
        return -1;
    }
    uint64_t min = p->samples / 1000 ? p->samples / 1000 : 1;
    jw_obj(w, "flame");
    jw_u64(w, "samples", p->samples);
    jw_u64(w, "min_samples", min);
    jw_arr(w, "nodes");
    jw_arr(w, NULL);
    jw_i64(w, NULL, -1);
    jw_u64(w, NULL, p->samples);
    jw_str(w, NULL, "all");
    jw_arr_end(w);
    uint32_t written = 1;
    int r = emit(w, &t, p, 0, 0, min, &written);
    jw_arr_end(w);
    jw_obj_end(w);
    free(t.v);
    etl_strtab_free(&t.labels);
    return r;
}

/* ---- the section ------------------------------------------------------------------------------ */

void sec_flame(page *pg)
{
    const etl_profile *p = pg->prof;
    FILE *f = pg->f;
    char a[32], b[32], iv[32];
    section_open(f, "flame", "8. Flame graph (CPU Usage (Sampled))",
                 pg->syms ? "Where the sampled CPU time went: each SampledProfile event is one sample of the thread "
                            "running on a CPU, with its stack. The root spans every sample; below it the processes, "
                            "their threads, then the stack from its outermost frame down, each function as wide as "
                            "the samples that pass through it (module!function from the PDBs of --symbols; "
                            "module+offset where there is none or it does not match; Unknown+address for code in no "
                            "image). Click a frame to zoom into it, the root to zoom out; hover for its samples. "
                            "Frames with fewer than 0.1% of the samples are merged into their parent's \"other\". "
                            "The same numbers as etlkit profile --json and --folded with --symbols."
                          : "Where the sampled CPU time went: each SampledProfile event is one sample of the thread running "
                 "on a CPU, with its stack. The root spans every sample; below it the processes, their threads, "
                 "then the stack from its outermost frame down, each frame as wide as the samples that pass "
                 "through it (module+offset until symbols exist; Unknown+address for code in no image). Click a "
                 "frame to zoom into it, the root to zoom out; hover for its samples. Frames with fewer than "
                 "0.1% of the samples are merged into their parent's \"other\". The same numbers as etlkit "
                 "profile --json and --folded.");
    fputs("<p>", f);
    html_textf(f, "%" PRIu64 " samples, one every %s (%s); %" PRIu64 " with a stack (%s%%), %" PRIu64
                  " in no image (%s%%).",
               p->samples, fmt_dur(iv, p->interval_ns), p->interval_logged ? "as logged" : "the default: none logged",
               p->with_stack, fmt_fixed(a, rep_pct100((int64_t)p->with_stack, (int64_t)p->samples), 2), p->unknown,
               fmt_fixed(b, rep_pct100((int64_t)p->unknown, (int64_t)p->samples), 2));
    /* What the stacks lack, said where they are drawn (the numbers under profile.anomalies). */
    uint64_t cut = 0;
    (void)etl_profile_anomaly_get(p, ETL_PROFILE_WALKS_CUT, &cut);
    if (p->key_refs_unresolved)
        html_textf(f, " %" PRIu64 " stack references have no definition of their part (kernel or user) next for "
                      "their key, so theirs was lost: those samples' stacks lack that part; some others may be another "
                      "sample's (a lost definition whose key's next holds the same part).", p->key_refs_unresolved);
    if (p->user_parts_dropped)
        html_textf(f, " %" PRIu64 " samples stopped waiting for their deferred user stack: their stacks lack it.",
                   p->user_parts_dropped);
    if (cut)
        html_textf(f, " %" PRIu64 " stack walks had more than 192 frames (Windows logs at most 192): the innermost "
                      "192 are drawn.", cut);
    uint64_t off_ip = 0;
    (void)etl_profile_anomaly_get(p, ETL_PROFILE_STACKS_NOT_AT_IP, &off_ip);
    if (off_ip)
        html_textf(f, " %" PRIu64 " samples' stacks do not begin at their sampled address: a few are normal (Windows's "
                      "walk may begin beside it); more mean lost records: such a stack lacks a part.", off_ip);
    uint64_t uncertain = 0;
    (void)etl_profile_anomaly_get(p, ETL_PROFILE_KEY_REFS_UNCERTAIN, &uncertain);
    if (uncertain)
        html_textf(f, " %" PRIu64 " stack references took their key's next definition of their part while the trace "
                      "lost records between the two: those samples' stacks may be another sample's.", uncertain);
    fputs("</p>\n<figure class=\"flame\"><svg id=\"flame-svg\" class=\"flame\" role=\"img\" "
          "aria-labelledby=\"flame-title flame-desc\" viewBox=\"0 0 1000 18\"><title id=\"flame-title\">Flame "
          "graph of the sampled stacks</title><desc id=\"flame-desc\">",
          f);
    const etl_profile_module *top = p->nmodules ? &p->modules[0] : NULL;
    html_textf(f, "%" PRIu64 " samples in %zu processes and %zu threads; the module with the most samples is %s "
                  "(%s%%). The numbers are in the tables of etlkit profile and in this page's JSON block.",
               p->samples, p->nprocesses, p->nthreads, top ? top->name : "none",
               fmt_fixed(a, top ? rep_pct100((int64_t)top->samples, (int64_t)p->samples) : 0, 2));
    fputs("</desc></svg><figcaption>Icicle: the root on top, callees below their callers; width is samples. "
          "Click a frame to zoom in, the root to reset.</figcaption></figure>\n</section>\n",
          f);
}

/*
 * profile_views.c - what a finished profile is read as: frame and function
 * labels, the pivot (WPA's grouping columns), collapsed stacks, the butterfly.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/idmap.h"
#include "base/sort.h"
#include "base/textsafe.h"
#include "etlkit/profile.h"
#include "out/num.h"
#include "stacks/label_whole.h"
#include "stacks/profile_internal.h"

/* Room for any label: a name is at most 1023 bytes (strtab's kernel strings), then "+0x" and 16 digits. */
enum { LABEL_MAX = 1100 };

/* module+0xOFFSET into out (cut to cap, NUL-terminated when cap > 0); its whole length, as snprintf's. */
static size_t label(const char *module, uint64_t offset, char *out, size_t cap)
{
    char hex[20];
    size_t m = strlen(module), h = 1 + fmt_hex(hex + 1, offset), n = m + h;
    hex[0] = '+';
    if (!cap) return n;
    size_t a = m < cap - 1 ? m : cap - 1, b = h < cap - 1 - a ? h : cap - 1 - a;
    memcpy(out, module, a);
    memcpy(out + a, hex, b);
    out[a + b] = 0;
    return n;
}

size_t etl_profile_frame_label(const etl_profile *p, const etl_profile_frame *f, char *out, size_t cap)
{
    if (f->image == ETL_PROFILE_NONE || f->image >= p->nimages) return label("Unknown", f->address, out, cap);
    const etl_profile_image *im = &p->images[f->image];
    return label(im->name, f->address - im->base, out, cap);
}

size_t etl_profile_function_label(const etl_profile *p, uint32_t function, char *out, size_t cap)
{
    if (function >= p->nfunctions) { /* no such function: an empty label, as the reader's getters refuse */
        if (cap) *out = 0;
        return 0;
    }
    const etl_profile_function *fn = &p->functions[function];
    return label(p->modules[fn->module].name, fn->offset, out, cap);
}

/* ------------------------------------------------------------------ pivot */

typedef struct pivot {
    const etl_profile *p;
    const prof_cell *cells;
    const etl_profile_by *by;
    unsigned nby, top;
    etl_profile_row *rows;
    size_t n, cap;
} pivot;

static uint32_t key_of(const etl_profile *p, const prof_cell *c, etl_profile_by by)
{
    switch (by) {
    case ETL_PROFILE_BY_PROCESS: return p->threads[c->thread].process;
    case ETL_PROFILE_BY_THREAD: return c->thread;
    case ETL_PROFILE_BY_MODULE: return p->functions[c->function].module;
    default: return c->function;
    }
}

/* qsort has no context argument: the cells carry their keys, computed once. */
typedef struct keyed_cell {
    uint32_t key[4];
    uint64_t samples;
} keyed_cell;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed_cell *x = a, *y = b;
    for (int i = 0; i < 4; i++)
        if (x->key[i] != y->key[i]) return x->key[i] < y->key[i] ? -1 : 1;
    return 0;
}

typedef struct group {
    uint32_t key;
    size_t lo, hi;
    uint64_t samples;
} group;

static int cmp_group(const void *a, const void *b)
{
    const group *x = a, *y = b;
    if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
    return x->key < y->key ? -1 : x->key > y->key;
}

static etl_status emit(pivot *v, const keyed_cell *c, size_t lo, size_t hi, unsigned depth)
{
    if (depth >= 4) return ETL_OK; /* never: nby <= 4; said for the compiler's bounds check */
    size_t ng = 0;
    for (size_t i = lo; i < hi; i++)
        if (i == lo || c[i].key[depth] != c[i - 1].key[depth]) ng++;
    group *g = malloc((ng ? ng : 1) * sizeof *g);
    if (!g) return ETL_E_NOMEM;
    ng = 0;
    for (size_t i = lo; i < hi; i++) {
        if (i == lo || c[i].key[depth] != c[i - 1].key[depth]) g[ng++] = (group){c[i].key[depth], i, i, 0};
        g[ng - 1].hi = i + 1;
        g[ng - 1].samples += c[i].samples;
    }
    etl_sort(g, ng, sizeof *g, cmp_group);
    if (v->top && ng > v->top) ng = v->top;
    etl_status st = ETL_OK;
    for (size_t k = 0; k < ng && st == ETL_OK; k++) {
        if (v->n == v->cap) {
            size_t cap = v->cap ? v->cap * 2 : 64;
            etl_profile_row *r = realloc(v->rows, cap * sizeof *r);
            if (!r) {
                st = ETL_E_NOMEM;
                break;
            }
            v->rows = r;
            v->cap = cap;
        }
        v->rows[v->n++] = (etl_profile_row){depth, v->by[depth], g[k].key, g[k].samples};
        if (depth + 1 < v->nby) st = emit(v, c, g[k].lo, g[k].hi, depth + 1);
    }
    free(g);
    return st;
}

etl_status etl_profile_pivot(const etl_profile *p, const etl_profile_by *by, unsigned nby, unsigned top,
                             etl_profile_row **rows, size_t *n)
{
    if (!rows || !n) return ETL_E_INVALID_ARG;
    *rows = NULL;
    *n = 0;
    if (!p || !by || !nby || nby > 4) return ETL_E_INVALID_ARG;
    for (unsigned i = 0; i < nby; i++) {
        if ((unsigned)by[i] > ETL_PROFILE_BY_FUNCTION) return ETL_E_INVALID_ARG;
        for (unsigned j = 0; j < i; j++)
            if (by[j] == by[i]) return ETL_E_INVALID_ARG;
    }
    const prof_impl *im = p->impl;
    if (!im || !im->ncells) return ETL_OK;
    keyed_cell *c = malloc(im->ncells * sizeof *c);
    if (!c) return ETL_E_NOMEM;
    for (size_t i = 0; i < im->ncells; i++) {
        memset(c[i].key, 0, sizeof c[i].key);
        for (unsigned k = 0; k < nby; k++) c[i].key[k] = key_of(p, &im->cells[i], by[k]);
        c[i].samples = im->cells[i].samples;
    }
    etl_sort(c, im->ncells, sizeof *c, cmp_keyed);
    pivot v = {p, im->cells, by, nby, top, NULL, 0, 0};
    etl_status st = emit(&v, c, 0, im->ncells, 0);
    free(c);
    if (st != ETL_OK) {
        free(v.rows);
        return st;
    }
    *rows = v.rows;
    *n = v.n;
    return ETL_OK;
}

/* ----------------------------------------------------------------- folded */

/* A line of the folded output, built whole and written at once (a write a character was most of the cost). */
typedef struct line {
    char *p;
    size_t n, cap;
} line;

static bool room(line *l, size_t more)
{
    char *p = etl_grow(l->p, &l->cap, l->n + more, 1);
    if (p) l->p = p;
    return p != NULL;
}

/*
 * s with the folded format's separators (';', newlines) and every character that
 * must not reach a terminal (base/textsafe.h: controls, C1, bidirectional
 * overrides, bytes that are not UTF-8) made '_' (the count follows the last space).
 */
static bool put_name(line *l, const char *s)
{
    const unsigned char *c = (const unsigned char *)s;
    if (!room(l, strlen(s))) return false; /* each byte gives at most one */
    while (*c) {
        if (*c >= 0x20 && *c < 0x7F && *c != ';') { /* plain ASCII, most of it */
            l->p[l->n++] = (char)*c++;
            continue;
        }
        uint32_t cp;
        int kind;
        size_t n = etl_text_char(c, &cp, &kind);
        if (kind != ETL_TEXT_PLAIN || *c == ';') {
            l->p[l->n++] = '_';
        } else {
            memcpy(l->p + l->n, c, n);
            l->n += n;
        }
        c += n;
    }
    return true;
}

static bool put_text(line *l, const char *s, size_t n)
{
    if (!room(l, n)) return false;
    memcpy(l->p + l->n, s, n);
    l->n += n;
    return true;
}

etl_status etl_profile_write_folded(const etl_profile *p, FILE *f)
{
    return etl_profile_write_folded_with(p, f, NULL, NULL);
}

/* A frame's default label, module+0xOFFSET, as etl_profile_frame_label writes it, straight into the line. */
static bool put_frame(line *l, const etl_profile *p, const etl_profile_frame *f)
{
    const char *name = "Unknown";
    uint64_t off = f->address;
    if (f->image != ETL_PROFILE_NONE && f->image < p->nimages) {
        name = p->images[f->image].name;
        off = f->address - p->images[f->image].base;
    }
    char hex[20];
    hex[0] = '+';
    return put_name(l, name) && put_text(l, hex, 1 + fmt_hex(hex + 1, off));
}

/* Stack i's folded line without its count into l. false: out of memory. */
static bool build_line(line *l, const etl_profile *p, size_t i, etl_profile_labeler lab, void *ctx)
{
    char buf[LABEL_MAX], num[48];
    const etl_profile_stack *s = &p->stacks[i];
    const etl_profile_thread *t = &p->threads[s->thread];
    const etl_profile_process *pr = &p->processes[t->process];
    l->n = 0;
    bool ok = put_name(l, pr->name);
    if (pr->pid == ETL_PROFILE_NONE) ok = ok && put_text(l, " (?);", 5);
    else ok = ok && put_text(l, num, (size_t)snprintf(num, sizeof num, " (%" PRIu32 ");", pr->pid));
    ok = ok && put_name(l, t->name[0] ? t->name : "Thread");
    ok = ok && put_text(l, num, (size_t)snprintf(num, sizeof num, " (%" PRIu32 ")", t->tid));
    uint32_t n;
    const etl_profile_frame *fr = etl_profile_stack_frames(p, s->stack, &n);
    for (uint32_t k = n; ok && k-- > 0;) { /* root first */
        ok = put_text(l, ";", 1);
        if (!lab) {
            ok = ok && put_frame(l, p, &fr[k]);
        } else {
            char *name = etl_label_whole(lab, ctx, p, &fr[k], buf, sizeof buf, NULL);
            ok = ok && name && put_name(l, name);
            if (name != buf) free(name);
        }
    }
    return ok;
}

static uint64_t text_hash(const char *s, size_t n)
{
    uint64_t h = etl_hash_mix64(n + 0x9e3779b97f4a7c15ull);
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w = 0;
        memcpy(&w, s + i, n - i < 8 ? n - i : 8);
        h = etl_hash_mix64(h ^ w) + i;
    }
    return h;
}

/* A stack's line: its text's hash, the stack, then (merged) the samples of its text and the stack standing for it. */
typedef struct folded_line {
    uint64_t hash;
    uint32_t stack, rep;
    uint64_t samples;
} folded_line;

static int cmp_hash(const void *a, const void *b)
{
    const folded_line *x = a, *y = b;
    if (x->hash != y->hash) return x->hash < y->hash ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

static int cmp_samples(const void *a, const void *b)
{
    const folded_line *x = a, *y = b;
    if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
    return x->stack < y->stack ? -1 : x->stack > y->stack;
}

/*
 * One line per text: the stacks are distinct (address, image) sequences, and one
 * module+offset may stand for several (an image unloaded and loaded again, or at
 * another base; with a labeler, a function's addresses), which would be lines of one
 * text. Their samples are added: a line is a thread's stack as its names say it, the
 * flame graph's path (the report's, built by label too). The lines are hashed, those
 * of one hash compared, then written most samples first, ties in the stacks' order:
 * memory grows with the stacks, not with the text.
 */
etl_status etl_profile_write_folded_with(const etl_profile *p, FILE *f, etl_profile_labeler lab, void *ctx)
{
    line l = {0}, m = {0};
    folded_line *v = malloc((p->nstacks ? p->nstacks : 1) * sizeof *v);
    etl_status st = v ? ETL_OK : ETL_E_NOMEM;
    for (size_t i = 0; st == ETL_OK && i < p->nstacks; i++) {
        if (!build_line(&l, p, i, lab, ctx)) st = ETL_E_NOMEM;
        else v[i] = (folded_line){text_hash(l.p, l.n), (uint32_t)i, (uint32_t)i, p->stacks[i].samples};
    }
    size_t n = 0;
    if (st == ETL_OK) {
        /* Each run of one hash: a stack whose text an earlier one of the run has joins it (a collision stays apart). */
        etl_sort(v, p->nstacks, sizeof *v, cmp_hash);
        for (size_t a = 0, b; st == ETL_OK && a < p->nstacks; a = b) {
            for (b = a + 1; b < p->nstacks && v[b].hash == v[a].hash; b++) continue;
            for (size_t i = a + 1; st == ETL_OK && i < b; i++) {
                if (!build_line(&l, p, v[i].stack, lab, ctx)) st = ETL_E_NOMEM;
                for (size_t j = a; st == ETL_OK && j < i; j++) {
                    if (v[j].rep != v[j].stack) continue; /* joined: its own stands */
                    if (!build_line(&m, p, v[j].stack, lab, ctx)) st = ETL_E_NOMEM;
                    else if (m.n == l.n && !memcmp(m.p, l.p, l.n)) {
                        v[i].rep = v[j].stack;
                        v[j].samples += v[i].samples;
                        break;
                    }
                }
            }
        }
        for (size_t i = 0; i < p->nstacks; i++)
            if (v[i].rep == v[i].stack) v[n++] = v[i];
        etl_sort(v, n, sizeof *v, cmp_samples);
    }
    for (size_t i = 0; st == ETL_OK && i < n; i++) {
        char num[32];
        int k = snprintf(num, sizeof num, " %" PRIu64 "\n", v[i].samples);
        if (!build_line(&l, p, v[i].stack, lab, ctx) || !put_text(&l, num, (size_t)k)) st = ETL_E_NOMEM;
        else if (fwrite(l.p, 1, l.n, f) != l.n) st = ETL_E_IO;
    }
    free(l.p);
    free(m.p);
    free(v);
    return st;
}

/* -------------------------------------------------------------- butterfly */

static size_t default_label(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out, size_t cap)
{
    (void)ctx;
    return etl_profile_frame_label(p, f, out, cap);
}

/* Whether frame f is the function that label names (module and offset). */
static bool frame_is(const etl_profile *p, const etl_profile_frame *f, const char *module, size_t mlen,
                     uint64_t offset)
{
    const char *name = "Unknown";
    uint64_t off = f->address;
    if (f->image != ETL_PROFILE_NONE && f->image < p->nimages) {
        name = p->images[f->image].name;
        off = f->address - p->images[f->image].base;
    }
    return off == offset && strlen(name) == mlen && !strncmp(name, module, mlen);
}

/* An edge before merging: its label's parts (the name stays put: strtab's or a literal), its order seen. */
typedef struct raw_edge {
    const char *name;
    uint64_t offset;
    size_t seen;
    etl_profile_edge e;
} raw_edge;

typedef struct raw_edges {
    raw_edge *v;
    size_t n, cap;
} raw_edges;

static etl_status add_edge(const etl_profile *p, raw_edges *r, const etl_profile_frame *f, uint64_t samples)
{
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 16;
        raw_edge *v = realloc(r->v, c * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        r->v = v;
        r->cap = c;
    }
    raw_edge *e = &r->v[r->n];
    e->name = "Unknown";
    e->offset = f->address;
    if (f->image != ETL_PROFILE_NONE && f->image < p->nimages) {
        e->name = p->images[f->image].name;
        e->offset = f->address - p->images[f->image].base;
    }
    e->seen = r->n++;
    e->e = (etl_profile_edge){*f, samples};
    return ETL_OK;
}

/* By label (name, then offset: one label each), the first seen first. */
static int cmp_raw(const void *a, const void *b)
{
    const raw_edge *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    if (c) return c;
    if (x->offset != y->offset) return x->offset < y->offset ? -1 : 1;
    return x->seen < y->seen ? -1 : x->seen > y->seen;
}

/*
 * The edges merged by label (the first frame seen stands for its label), into
 * *out: sorting, not a scan per edge, so a function with many distinct neighbours
 * costs n log n. Frees r.
 */
static etl_status merge_edges(raw_edges *r, etl_profile_edge **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    if (!r->n) {
        free(r->v);
        return ETL_OK;
    }
    etl_sort(r->v, r->n, sizeof *r->v, cmp_raw);
    etl_profile_edge *e = malloc(r->n * sizeof *e);
    if (!e) {
        free(r->v);
        return ETL_E_NOMEM;
    }
    size_t n = 0;
    for (size_t i = 0; i < r->n; i++) {
        const raw_edge *x = &r->v[i];
        if (i && x->offset == x[-1].offset && !strcmp(x->name, x[-1].name)) e[n - 1].samples += x->e.samples;
        else e[n++] = x->e;
    }
    free(r->v);
    *out = e;
    *nout = n;
    return ETL_OK;
}

static int cmp_edge(const void *a, const void *b)
{
    const etl_profile_edge *x = a, *y = b;
    if (x->samples != y->samples) return x->samples > y->samples ? -1 : 1;
    return x->frame.address < y->frame.address ? -1 : x->frame.address > y->frame.address;
}

etl_status etl_profile_butterfly_get(const etl_profile *p, const char *function, etl_profile_butterfly *b)
{
    if (!b) return ETL_E_INVALID_ARG;
    memset(b, 0, sizeof *b);
    if (!p || !function) return ETL_E_INVALID_ARG;
    const char *plus = strrchr(function, '+');
    char *end;
    if (!plus || plus[1] != '0' || (plus[2] != 'x' && plus[2] != 'X')) return ETL_E_INVALID_ARG;
    uint64_t offset = strtoull(plus + 3, &end, 16);
    if (*end || end == plus + 3) return ETL_E_INVALID_ARG;
    size_t mlen = (size_t)(plus - function);
    raw_edges callers = {0}, callees = {0};
    bool found = false;
    etl_status st = ETL_OK;
    for (size_t i = 0; i < p->nstacks && st == ETL_OK; i++) {
        const etl_profile_stack *s = &p->stacks[i];
        uint32_t n;
        const etl_profile_frame *fr = etl_profile_stack_frames(p, s->stack, &n);
        uint32_t k = n;
        while (k-- > 0) /* the outermost occurrence: a recursive function counts a stack once */
            if (frame_is(p, &fr[k], function, mlen, offset)) break;
        if (k == UINT32_MAX) continue;
        found = true;
        b->total += s->samples;
        if (k + 1 < n) st = add_edge(p, &callers, &fr[k + 1], s->samples);
        if (st == ETL_OK && k > 0) st = add_edge(p, &callees, &fr[k - 1], s->samples);
        if (frame_is(p, &fr[0], function, mlen, offset)) b->self += s->samples; /* innermost, recursive or not */
    }
    if (st == ETL_OK) st = merge_edges(&callers, &b->callers, &b->ncallers);
    else free(callers.v);
    if (st == ETL_OK) st = merge_edges(&callees, &b->callees, &b->ncallees);
    else free(callees.v);
    if (st != ETL_OK) {
        etl_profile_butterfly_free(b);
        return st;
    }
    etl_sort(b->callers, b->ncallers, sizeof *b->callers, cmp_edge);
    etl_sort(b->callees, b->ncallees, sizeof *b->callees, cmp_edge);
    return found ? ETL_OK : ETL_END;
}

void etl_profile_butterfly_free(etl_profile_butterfly *b)
{
    if (!b) return; /* as the handles' close: a cleanup path may free what it never made */
    free(b->callers);
    free(b->callees);
    memset(b, 0, sizeof *b);
}

/* ------------------------------------------------ butterfly by a labeler */

/* An edge of etl_profile_butterfly_by before merging: its label in the arena, its order seen. */
typedef struct label_edge {
    size_t label;
    const char *text; /* the label, set once the arena no longer moves */
    size_t seen;
    etl_profile_edge e;
} label_edge;

typedef struct label_edges {
    label_edge *v;
    size_t n, cap;
    char *arena;
    size_t used, room;
} label_edges;

static etl_status add_label_text(label_edges *r, const char *label, size_t n, const etl_profile_frame *f,
                                 uint64_t samples)
{
    if (r->n == r->cap) {
        size_t c = r->cap ? r->cap * 2 : 16;
        label_edge *v = realloc(r->v, c * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        r->v = v;
        r->cap = c;
    }
    if (r->used + n + 1 > r->room) {
        size_t c = r->room ? r->room : 4096;
        while (c < r->used + n + 1) c *= 2;
        char *a = realloc(r->arena, c);
        if (!a) return ETL_E_NOMEM;
        r->arena = a;
        r->room = c;
    }
    memcpy(r->arena + r->used, label, n);
    r->arena[r->used + n] = 0;
    r->v[r->n] = (label_edge){r->used, NULL, r->n, {*f, samples}};
    r->n++;
    r->used += n + 1;
    return ETL_OK;
}

/* An edge to f (its label by lab, whole; buf[cap] its room) of samples. ETL_E_NOMEM. */
static etl_status add_label_edge(label_edges *r, etl_profile_labeler lab, void *ctx, const etl_profile *p,
                                 const etl_profile_frame *f, char *buf, size_t cap, uint64_t samples)
{
    size_t n;
    char *label = etl_label_whole(lab, ctx, p, f, buf, cap, &n);
    if (!label) return ETL_E_NOMEM;
    etl_status st = add_label_text(r, label, n, f, samples);
    if (label != buf) free(label);
    return st;
}

/* Whether f's label by lab (whole, buf[cap] its room) is function. ETL_E_NOMEM. */
static etl_status label_is(etl_profile_labeler lab, void *ctx, const etl_profile *p, const etl_profile_frame *f,
                           const char *function, char *buf, size_t cap, bool *is)
{
    char *label = etl_label_whole(lab, ctx, p, f, buf, cap, NULL);
    *is = label && !strcmp(label, function);
    if (label != buf) free(label);
    return label ? ETL_OK : ETL_E_NOMEM;
}

static int cmp_label_edge(const void *a, const void *b)
{
    const label_edge *x = a, *y = b;
    int c = strcmp(x->text, y->text);
    if (c) return c;
    return x->seen < y->seen ? -1 : x->seen > y->seen;
}

/* The edges merged by label (the first frame seen stands for it), into *out; frees r. */
static etl_status merge_label_edges(label_edges *r, etl_profile_edge **out, size_t *nout)
{
    *out = NULL;
    *nout = 0;
    etl_status st = ETL_OK;
    if (r->n) {
        for (size_t i = 0; i < r->n; i++) r->v[i].text = r->arena + r->v[i].label;
        etl_sort(r->v, r->n, sizeof *r->v, cmp_label_edge);
        etl_profile_edge *e = malloc(r->n * sizeof *e);
        if (!e) {
            st = ETL_E_NOMEM;
        } else {
            size_t n = 0;
            for (size_t i = 0; i < r->n; i++) {
                const label_edge *x = &r->v[i];
                if (i && !strcmp(x->text, x[-1].text)) e[n - 1].samples += x->e.samples;
                else e[n++] = x->e;
            }
            *out = e;
            *nout = n;
        }
    }
    free(r->v);
    free(r->arena);
    return st;
}

etl_status etl_profile_butterfly_by(const etl_profile *p, const char *function, etl_profile_labeler lab, void *ctx,
                                    etl_profile_butterfly *b)
{
    memset(b, 0, sizeof *b);
    if (!lab) lab = default_label;
    char buf[LABEL_MAX];
    label_edges callers = {0}, callees = {0};
    bool found = false;
    etl_status st = ETL_OK;
    for (size_t i = 0; i < p->nstacks && st == ETL_OK; i++) {
        const etl_profile_stack *s = &p->stacks[i];
        uint32_t n;
        const etl_profile_frame *fr = etl_profile_stack_frames(p, s->stack, &n);
        uint32_t k = n;
        bool is = false;
        while (!is && st == ETL_OK && k-- > 0) /* the outermost occurrence: a recursive function counts a stack once */
            st = label_is(lab, ctx, p, &fr[k], function, buf, sizeof buf, &is);
        if (st != ETL_OK || !is) continue;
        found = true;
        b->total += s->samples;
        if (k + 1 < n) st = add_label_edge(&callers, lab, ctx, p, &fr[k + 1], buf, sizeof buf, s->samples);
        if (st == ETL_OK && k > 0) st = add_label_edge(&callees, lab, ctx, p, &fr[k - 1], buf, sizeof buf, s->samples);
        bool self = false;
        if (st == ETL_OK) st = label_is(lab, ctx, p, &fr[0], function, buf, sizeof buf, &self);
        if (self) b->self += s->samples; /* innermost, recursive or not */
    }
    if (st == ETL_OK) st = merge_label_edges(&callers, &b->callers, &b->ncallers);
    else free(callers.v), free(callers.arena);
    if (st == ETL_OK) st = merge_label_edges(&callees, &b->callees, &b->ncallees);
    else free(callees.v), free(callees.arena);
    if (st != ETL_OK) {
        etl_profile_butterfly_free(b);
        return st;
    }
    etl_sort(b->callers, b->ncallers, sizeof *b->callers, cmp_edge);
    etl_sort(b->callees, b->ncallees, sizeof *b->callees, cmp_edge);
    return found ? ETL_OK : ETL_END;
}

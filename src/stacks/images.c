/* images.c - see images.h. */
#include "stacks/images.h"

#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "base/idmap.h"
#include "base/sort.h"

void etl_image_map_init(etl_image_map *m, unsigned ptr_size, etl_strtab *names)
{
    memset(m, 0, sizeof *m);
    m->ptr_size = ptr_size == 4 ? 4 : 8;
    m->names = names;
    etl_idmap_init(&m->newest);
}

void etl_image_map_free(etl_image_map *m)
{
    free(m->v);
    free(m->order);
    free(m->reach);
    free(m->run_first);
    free(m->run_end);
    etl_idmap_free(&m->newest);
    memset(m, 0, sizeof *m);
}

bool etl_image_kernel_addr(unsigned ptr_size, uint64_t addr)
{
    return ptr_size == 4 ? addr >= 0x80000000u && addr <= 0xFFFFFFFFu : addr >= 0x8000000000000000ull;
}

bool etl_frames_noncanonical(const uint8_t *p, unsigned ptr_size, uint32_t n, uint64_t *addr)
{
    if (ptr_size != 8) return false;
    for (uint32_t i = 0; i < n; i++) {
        uint64_t a = etl_rd_u64(p + (size_t)i * 8);
        if (__builtin_expect(etl_addr_noncanonical(8, a), 0)) {
            *addr = a;
            return true;
        }
    }
    return false;
}

bool etl_image_size_possible(unsigned ptr_size, uint64_t base, uint64_t size)
{
    if (size > UINT32_MAX || base + size < base) return false;
    if (ptr_size == 4) return base + size <= 0x100000000ull;
    return etl_image_kernel_addr(8, base) || base + size <= 0x8000000000000000ull;
}

/* The address space an image lives in: 0 the kernel's, else its process's id + 1. */
static uint64_t space_of(const etl_image_inst *im)
{
    return im->kernel ? 0 : (uint64_t)im->pid + 1;
}

static uint64_t at_key(uint64_t space, uint64_t base)
{
    return etl_hash_mix64(base ^ etl_hash_mix64(space));
}

/*
 * The instance at (space, base) still open, or ETL_IMAGE_NONE. Only the newest
 * there can be: every later Load, DCStart or new DCEnd there closes the one
 * before. A lookup, not a scan: a trace's end rundown names every image again.
 */
static uint32_t open_at(const etl_image_map *m, uint64_t space, uint64_t base)
{
    for (uint32_t i = etl_idmap_get(&m->newest, at_key(space, base)); i != ETL_IMAGE_NONE; i = m->v[i].prev_same)
        if (m->v[i].base == base && space_of(&m->v[i]) == space) return m->v[i].open ? i : ETL_IMAGE_NONE;
    return ETL_IMAGE_NONE;
}

/* The newest instance at (space, base), open or not, or ETL_IMAGE_NONE. */
static uint32_t last_at(const etl_image_map *m, uint64_t space, uint64_t base)
{
    for (uint32_t i = etl_idmap_get(&m->newest, at_key(space, base)); i != ETL_IMAGE_NONE; i = m->v[i].prev_same)
        if (m->v[i].base == base && space_of(&m->v[i]) == space) return i;
    return ETL_IMAGE_NONE;
}

/* The file's base name: what follows the last '\' or '/'. */
static etl_status add_names(etl_image_map *m, const etl_kstr *file, etl_image_inst *im)
{
    etl_status st = etl_strtab_add_kstr(m->names, file, true, &im->path);
    if (st != ETL_OK) return st;
    const char *p = etl_strtab_get(m->names, im->path), *b = p;
    for (const char *c = p; *c; c++)
        if (*c == '\\' || *c == '/') b = c + 1;
    return etl_strtab_add(m->names, b, strlen(b), &im->name);
}

etl_status etl_image_map_add(etl_image_map *m, uint16_t hook, uint64_t ts, const etl_image *img)
{
    etl_image_inst im = {0};
    im.base = img->image_base;
    im.size = img->image_size;
    im.logged_size = img->image_size;
    im.pid = img->process_id;
    im.kernel = etl_image_kernel_addr(m->ptr_size, img->image_base);
    im.time_date_stamp = img->time_date_stamp;
    im.checksum = img->image_checksum;
    uint32_t prev = open_at(m, space_of(&im), im.base), last = last_at(m, space_of(&im), im.base);
    etl_status st;
    uint64_t to_ts = UINT64_MAX;
    switch (hook) {
    case ETL_HOOK_IMAGE_UNLOAD:
        if (prev != ETL_IMAGE_NONE) {
            m->v[prev].to_ts = ts < m->v[prev].from_ts ? m->v[prev].from_ts : ts;
            m->v[prev].open = false;
            return ETL_OK;
        }
        /* None open there: it held the place since the trace's start or its last life there (its Load lost, or
         * before the rundown reached it) until now, as the Unload says. The last life's own Unload again adds none. */
        if (last != ETL_IMAGE_NONE && m->v[last].to_ts >= ts) return ETL_OK;
        im.from_ts = last == ETL_IMAGE_NONE ? 0 : m->v[last].to_ts;
        to_ts = ts;
        break;
    case ETL_HOOK_IMAGE_DC_END:
    case ETL_HOOK_IMAGE_DC_START:
        /* A DCEnd adds only an image no event announced; both are loaded since the trace's start or their last life. */
        if (hook == ETL_HOOK_IMAGE_DC_END && prev != ETL_IMAGE_NONE) return ETL_OK;
        if (prev != ETL_IMAGE_NONE && m->v[prev].logged_size == im.logged_size) {
            /* A rundown listing the image live since its Load (same size, same file) is that life: its fields
             * stay the Load's, the rundown fills only what the Load lacked (a DCStart's TimeDateStamp is often 0). */
            st = add_names(m, &img->file_name, &im); /* interned: an offset the Load's has if the same */
            if (st != ETL_OK) return st;
            if (im.path == m->v[prev].path) {
                if (!m->v[prev].time_date_stamp) m->v[prev].time_date_stamp = im.time_date_stamp;
                if (!m->v[prev].checksum) m->v[prev].checksum = im.checksum;
                return ETL_OK;
            }
        }
        im.from_ts = last == ETL_IMAGE_NONE ? 0 : prev != ETL_IMAGE_NONE ? ts : m->v[last].to_ts;
        break;
    default: /* Load */
        im.from_ts = ts;
        break;
    }
    if (prev != ETL_IMAGE_NONE) { /* a new load at the same base replaces the one before */
        m->v[prev].to_ts = ts < m->v[prev].from_ts ? m->v[prev].from_ts : ts;
        m->v[prev].open = false;
    }
    /* The lives at one place follow each other, never overlap (times that go back are clamped): a lookup needs
     * only the last one that began at or before its time. */
    if (last != ETL_IMAGE_NONE && im.from_ts < m->v[last].to_ts) im.from_ts = m->v[last].to_ts;
    im.to_ts = to_ts;
    im.open = to_ts == UINT64_MAX;
    bool bad = !etl_image_size_possible(m->ptr_size, im.base, im.size);
    if (bad) im.size = 0; /* its life stands, holding no address */
    st = add_names(m, &img->file_name, &im);
    if (st != ETL_OK) return st;
    if (m->n == m->cap) {
        uint32_t cap = m->cap ? m->cap * 2 : 256;
        etl_image_inst *v = realloc(m->v, cap * sizeof *v);
        if (!v) return ETL_E_NOMEM;
        m->v = v;
        m->cap = cap;
    }
    uint64_t key = at_key(space_of(&im), im.base);
    im.prev_same = etl_idmap_get(&m->newest, key); /* ETL_IDMAP_EMPTY is ETL_IMAGE_NONE */
    m->v[m->n] = im;
    st = etl_idmap_put(&m->newest, key, m->n++);
    if (st == ETL_OK && bad) m->bad_sizes++; /* counted once added: the last instance is the one */
    return st;
}

typedef struct order_key {
    uint64_t space, base, from_ts;
    uint32_t i;
} order_key;

static int cmp_order(const void *a, const void *b)
{
    const order_key *x = a, *y = b;
    if (x->space != y->space) return x->space < y->space ? -1 : 1;
    if (x->base != y->base) return x->base < y->base ? -1 : 1;
    if (x->from_ts != y->from_ts) return x->from_ts < y->from_ts ? -1 : 1;
    return x->i < y->i ? -1 : 1;
}

/* The runs of one (space, base), in order, with their highest end, for a max tree over them. */
static etl_status build_runs(etl_image_map *m)
{
    uint32_t nr = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        const etl_image_inst *a = &m->v[m->order[i]], *b = i ? &m->v[m->order[i - 1]] : NULL;
        if (!b || space_of(a) != space_of(b) || a->base != b->base) nr++;
    }
    uint32_t leaves = 1;
    while (leaves < nr) leaves *= 2;
    m->run_first = malloc(((size_t)nr + 1) * sizeof *m->run_first);
    m->run_end = calloc(2 * (size_t)leaves, sizeof *m->run_end);
    if (!m->run_first || !m->run_end) return ETL_E_NOMEM;
    m->nruns = nr;
    m->leaves = leaves;
    nr = 0;
    for (uint32_t i = 0; i < m->n; i++) {
        const etl_image_inst *a = &m->v[m->order[i]], *b = i ? &m->v[m->order[i - 1]] : NULL;
        if (!b || space_of(a) != space_of(b) || a->base != b->base) m->run_first[nr++] = i;
        uint64_t end = a->base + a->size < a->base ? UINT64_MAX : a->base + a->size; /* saturated */
        if (end > m->run_end[leaves + nr - 1]) m->run_end[leaves + nr - 1] = end;
    }
    m->run_first[nr] = m->n;
    for (uint32_t k = leaves; k-- > 1;)
        m->run_end[k] = m->run_end[2 * k] > m->run_end[2 * k + 1] ? m->run_end[2 * k] : m->run_end[2 * k + 1];
    return ETL_OK;
}

etl_status etl_image_map_seal(etl_image_map *m)
{
    free(m->order);
    free(m->reach);
    free(m->run_first);
    free(m->run_end);
    m->run_first = NULL;
    m->run_end = NULL;
    m->order = malloc((m->n ? m->n : 1) * sizeof *m->order);
    m->reach = malloc((m->n ? m->n : 1) * sizeof *m->reach);
    order_key *k = malloc((m->n ? m->n : 1) * sizeof *k);
    if (!m->order || !m->reach || !k) {
        free(k);
        return ETL_E_NOMEM;
    }
    for (uint32_t i = 0; i < m->n; i++) {
        const etl_image_inst *im = &m->v[i];
        k[i] = (order_key){space_of(im), im->base, im->from_ts, i};
    }
    etl_sort(k, m->n, sizeof *k, cmp_order);
    for (uint32_t i = 0; i < m->n; i++) {
        const etl_image_inst *im = &m->v[k[i].i];
        uint64_t end = im->base + im->size < im->base ? UINT64_MAX : im->base + im->size; /* saturated */
        m->order[i] = k[i].i;
        m->reach[i] = i > 0 && k[i - 1].space == k[i].space && m->reach[i - 1] > end ? m->reach[i - 1] : end;
    }
    free(k);
    etl_status st = build_runs(m);
    if (st != ETL_OK) return st;
    m->sealed = true;
    return ETL_OK;
}

/* Whether the image at order position i alone can hold addr in space: it does, and no neighbour reaches it. */
static bool only_one(const etl_image_map *m, uint32_t i, uint64_t space, uint64_t addr, uint64_t ts)
{
    const etl_image_inst *im = &m->v[m->order[i]];
    if (space_of(im) != space || addr < im->base || addr - im->base >= im->size || ts < im->from_ts || ts >= im->to_ts)
        return false;
    if (i > 0 && space_of(&m->v[m->order[i - 1]]) == space && m->reach[i - 1] > addr) return false;
    if (i + 1 < m->n && space_of(&m->v[m->order[i + 1]]) == space && m->v[m->order[i + 1]].base <= addr) return false;
    return true;
}

/* The first run at or after (space, base) (nruns when none). */
static uint32_t run_at(const etl_image_map *m, uint64_t space, uint64_t base)
{
    uint32_t lo = 0, hi = m->nruns;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const etl_image_inst *im = &m->v[m->order[m->run_first[mid]]];
        uint64_t s = space_of(im);
        if (s < space || (s == space && im->base < base)) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

typedef struct query {
    const etl_image_map *m;
    uint64_t addr, ts;
    uint32_t lo, hi;        /* the runs of the space whose base is at or below addr */
    uint32_t best, pos;
} query;

/*
 * Run r may hold addr: only its last life that began at or before ts can be live then
 * (a place's lives follow each other).
 */
static void try_run(query *q, uint32_t r)
{
    const etl_image_map *m = q->m;
    uint32_t lo = m->run_first[r], hi = m->run_first[r + 1];
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (m->v[m->order[mid]].from_ts <= q->ts) lo = mid + 1;
        else hi = mid;
    }
    if (lo == m->run_first[r]) return;
    const etl_image_inst *im = &m->v[m->order[lo - 1]];
    if (q->addr - im->base < im->size && q->ts < im->to_ts &&
        (q->best == ETL_IMAGE_NONE || im->from_ts >= m->v[q->best].from_ts)) /* ties: the higher base */
        q->best = m->order[lo - 1], q->pos = lo - 1;
}

/* The runs under tree node k (covering runs [l, r)) that reach past addr. */
static void visit(query *q, uint32_t k, uint32_t l, uint32_t r)
{
    if (r <= q->lo || l >= q->hi || q->m->run_end[k] <= q->addr) return;
    if (r - l == 1) {
        try_run(q, l);
        return;
    }
    uint32_t mid = l + (r - l) / 2;
    visit(q, 2 * k, l, mid);
    visit(q, 2 * k + 1, mid, r);
}

uint32_t etl_image_map_find(const etl_image_map *m, uint32_t pid, uint64_t addr, uint64_t ts, uint32_t *hint)
{
    if (!m->sealed || !m->n) return ETL_IMAGE_NONE;
    bool kernel = etl_image_kernel_addr(m->ptr_size, addr);
    uint64_t space = kernel ? 0 : (uint64_t)pid + 1;
    if (hint && *hint < m->n && only_one(m, *hint, space, addr, ts)) return m->order[*hint];
    /* Usually a few images below addr settle it: down from the last at or below it while they reach it. */
    uint32_t lo = 0, hi = m->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        const etl_image_inst *im = &m->v[m->order[mid]];
        uint64_t s = space_of(im);
        if (s < space || (s == space && im->base <= addr)) lo = mid + 1;
        else hi = mid;
    }
    uint32_t best = ETL_IMAGE_NONE, pos = 0, steps = 0;
    for (uint32_t i = lo; i-- > 0;) {
        const etl_image_inst *im = &m->v[m->order[i]];
        if (space_of(im) != space || m->reach[i] <= addr) {
            steps = 0; /* settled */
            break;
        }
        if (++steps > 8) break; /* many reach it (overlaps, lives at one base): the tree */
        if (addr - im->base < im->size && ts >= im->from_ts && ts < im->to_ts &&
            (best == ETL_IMAGE_NONE || im->from_ts > m->v[best].from_ts))
            best = m->order[i], pos = i;
    }
    if (steps <= 8) {
        if (hint && best != ETL_IMAGE_NONE) *hint = pos;
        return best;
    }
    /* The images that reach addr, found through the max tree in O(log n) each (not a scan down the list). */
    query q = {m, addr, ts, run_at(m, space, 0), 0, ETL_IMAGE_NONE, 0};
    q.hi = addr == UINT64_MAX ? run_at(m, space + 1, 0) : run_at(m, space, addr + 1);
    visit(&q, 1, 0, m->leaves);
    if (hint && q.best != ETL_IMAGE_NONE) *hint = q.pos;
    return q.best;
}

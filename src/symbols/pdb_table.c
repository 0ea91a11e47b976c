/* pdb_table.c - see pdb_table.h. */
#include "symbols/pdb_table.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "base/grow.h"
#include "base/sort.h"

enum part { P_NONE, P_SUMMARY, P_SECTIONS, P_PUBLICS, P_SYMBOLS, P_LINES };

/* A dump line longer than this is a name nobody reads: it is cut (the parse goes on). */
enum { LINE_MAX_BYTES = 16384 };

static const char *skip_ws(const char *s)
{
    while (*s == ' ' || *s == '\t') s++;
    return s;
}

static bool is_title(const char *s, const char *title)
{
    s = skip_ws(s);
    size_t n = strlen(title);
    if (strncmp(s, title, n)) return false;
    return !*skip_ws(s + n);
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    c |= 0x20;
    return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* "{158583E6-7B60-970B-4C4C-44205044422E}" as the RSDS record's bytes (Data1..3 little-endian). */
static bool parse_guid(const char *s, uint8_t g[16])
{
    uint8_t raw[16];
    int k = 0;
    if (*s++ != '{') return false;
    for (; *s && *s != '}' && k < 32; s++) {
        if (*s == '-') continue;
        int v = hexval((unsigned char)*s);
        if (v < 0) return false;
        if (k & 1) raw[k / 2] |= (uint8_t)v;
        else raw[k / 2] = (uint8_t)(v << 4);
        k++;
    }
    if (k != 32 || *s != '}') return false;
    static const uint8_t order[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
    for (int i = 0; i < 16; i++) g[i] = raw[order[i]];
    return true;
}

/* The name between the first and the last backtick of a record line. */
static bool backticked(const char *s, const char **name, size_t *n)
{
    const char *a = strchr(s, '`'), *b = strrchr(s, '`');
    if (!a || b == a) return false;
    *name = a + 1;
    *n = (size_t)(b - a - 1);
    return true;
}

/* "addr = 0001:0144": the section and the (decimal) offset in it. */
static bool parse_addr(const char *s, uint32_t *sect, uint32_t *off)
{
    const char *a = strstr(s, "addr = ");
    if (!a) return false;
    char *end;
    unsigned long sec = strtoul(a + 7, &end, 10);
    if (*end != ':' || sec == 0 || sec > 65535) return false;
    unsigned long long o = strtoull(end + 1, &end, 10);
    if (o > UINT32_MAX) return false;
    *sect = (uint32_t)sec;
    *off = (uint32_t)o;
    return true;
}

static etl_status add_fn(pdb_table *t, bool proc, uint32_t sect, uint32_t off_in, uint32_t size, const char *name,
                         size_t n)
{
    uint32_t off;
    etl_status st = etl_strtab_add(&t->names, name, n, &off);
    if (st != ETL_OK) return st;
    pdb_fn **v = proc ? &t->procs : &t->pubs;
    size_t *cnt = proc ? &t->nprocs : &t->npubs, *cap = proc ? &t->cprocs : &t->cpubs;
    pdb_fn *g = etl_grow(*v, cap, *cnt + 1, sizeof *g);
    if (!g) return ETL_E_NOMEM;
    *v = g;
    g[(*cnt)++] = (pdb_fn){off_in, size, off, sect};
    return ETL_OK;
}

static etl_status add_line(pdb_table *t, uint32_t sect, uint32_t off, uint32_t line, uint32_t file)
{
    pdb_line *g = etl_grow(t->lines, &t->clines, t->nlines + 1, sizeof *g);
    if (!g) return ETL_E_NOMEM;
    t->lines = g;
    g[t->nlines++] = (pdb_line){off, line, file, sect};
    return ETL_OK;
}

/* The entries of a lines block: "LINE OFFSET [!]" repeated, the offset 8 hex digits from the block's start section. */
static etl_status line_entries(pdb_table *t, const char *s, uint32_t sect, uint32_t file)
{
    while (*(s = skip_ws(s))) {
        char *end;
        unsigned long line = strtoul(s, &end, 10);
        if (end == s || *end != ' ') break;
        const char *h = skip_ws(end);
        unsigned long long off = strtoull(h, &end, 16);
        if (end - h != 8) break;
        s = skip_ws(end);
        if (*s == '!') s++;
        /* 0xfeefee (and above) marks code the compiler hid from line stepping: no line to give. */
        if (off > UINT32_MAX) break;
        etl_status st = add_line(t, sect, (uint32_t)off, line >= 0xf00000 ? 0 : (uint32_t)line, file);
        if (st != ETL_OK) return st;
    }
    return ETL_OK;
}

static int cmp_fn(const void *a, const void *b)
{
    const pdb_fn *x = a, *y = b;
    if (x->rva != y->rva) return x->rva < y->rva ? -1 : 1;
    return x->size > y->size ? -1 : x->size < y->size; /* the larger first: it stands for the address */
}

static int cmp_line(const void *a, const void *b)
{
    const pdb_line *x = a, *y = b;
    if (x->rva != y->rva) return x->rva < y->rva ? -1 : 1;
    return (x->line != 0) - (y->line != 0); /* a block's end before a line at the same place: the line holds */
}

/*
 * The entries' section offsets made RVAs. One of no known section, or that starts at or past
 * its section's end, is dropped and counted (t->outside): a damaged record, whose address would
 * be another section's. The count left.
 */
static size_t to_rva_fn(pdb_table *t, pdb_fn *v, size_t n)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        pdb_fn f = v[i];
        bool known = f.sect >= 1 && f.sect <= t->nsect;
        uint64_t r = known ? (uint64_t)t->sect_va[f.sect - 1] + f.rva : UINT64_MAX;
        if (!known || r >= t->sect_end[f.sect - 1]) {
            t->outside++;
            continue;
        }
        f.rva = (uint32_t)r;
        v[k++] = f;
    }
    return k;
}

/*
 * A procedure whose code size runs past its section's end (a damaged size would cover every
 * later address, other sections' too) keeps its start, not its size: it joins the publics,
 * named up to the next symbol (t->sizes_refused counts it). Both lists are RVAs here.
 */
static etl_status refuse_sizes(pdb_table *t)
{
    size_t k = 0;
    for (size_t i = 0; i < t->nprocs; i++) {
        pdb_fn f = t->procs[i];
        if ((uint64_t)f.rva + f.size <= t->sect_end[f.sect - 1]) {
            t->procs[k++] = f;
            continue;
        }
        pdb_fn *g = etl_grow(t->pubs, &t->cpubs, t->npubs + 1, sizeof *g);
        if (!g) return ETL_E_NOMEM;
        t->pubs = g;
        f.size = 0;
        g[t->npubs++] = f;
        t->sizes_refused++;
    }
    t->nprocs = k;
    return ETL_OK;
}

/* The dump's bytes, cut into lines as fgets cuts them (a line of LINE_MAX_BYTES - 1 bytes or more in pieces). */
typedef struct source {
    pdb_read_fn read;
    void *ctx;
    char *p;
    size_t at, end;
    bool done, failed;
} source;

enum { SOURCE_BYTES = 1 << 16 };

/* The next line (with its '\n' when it has one) into out[cap], NUL-terminated: false at the end or a failed read. */
static bool next_line(source *s, char *out, size_t cap)
{
    size_t k = 0;
    while (k + 1 < cap) {
        if (s->at == s->end) {
            if (s->done) break;
            long n = s->read(s->ctx, s->p, SOURCE_BYTES);
            if (n <= 0) {
                s->done = true;
                s->failed = n < 0;
                break;
            }
            s->at = 0;
            s->end = (size_t)n;
        }
        size_t room = cap - 1 - k, avail = s->end - s->at, m = avail < room ? avail : room;
        const char *nl = memchr(s->p + s->at, '\n', m);
        if (nl) m = (size_t)(nl - (s->p + s->at)) + 1;
        memcpy(out + k, s->p + s->at, m);
        s->at += m;
        k += m;
        if (nl) break;
    }
    out[k] = 0;
    return k > 0 && !s->failed;
}

static long file_read(void *ctx, void *buf, size_t n)
{
    size_t k = fread(buf, 1, n, ctx);
    return k ? (long)k : ferror((FILE *)ctx) ? -1 : 0;
}

etl_status pdb_table_read(pdb_table *t, FILE *f)
{
    return pdb_table_read_with(t, file_read, f);
}

etl_status pdb_table_read_with(pdb_table *t, pdb_read_fn read, void *ctx)
{
    memset(t, 0, sizeof *t);
    etl_strtab_init(&t->names);
    source src = {read, ctx, malloc(SOURCE_BYTES), 0, 0, false, false};
    char *buf = malloc(LINE_MAX_BYTES);
    if (!buf || !src.p) {
        free(buf);
        free(src.p);
        return ETL_E_NOMEM;
    }
    enum part part = P_NONE;
    etl_status st = ETL_OK;
    bool pending = false, pending_proc = false, truncated = false;
    char *pname = malloc(LINE_MAX_BYTES);
    size_t pn = 0;
    long cur_sect = -1;
    uint32_t block_sect = 0, block_end = 0, file = 0;
    bool in_block = false, file_known = false; /* file_known: a source file's name heads the blocks */
    if (!pname) st = ETL_E_NOMEM;
    while (st == ETL_OK && next_line(&src, buf, LINE_MAX_BYTES)) {
        size_t len = strlen(buf);
        bool whole = len && buf[len - 1] == '\n';
        if (truncated) { /* the rest of a cut line */
            truncated = !whole;
            continue;
        }
        truncated = !whole;
        while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r')) buf[--len] = 0;
        const char *s = skip_ws(buf);
        /* "Error while processing symbol records.  Stream Error: ...": the records after it are lost */
        if (!strncmp(s, "Error while processing", 22) || !strncmp(s, "Error: ", 7) ||
            !strncmp(s, "Unexpected error: ", 18)) {
            if (!t->tool_errors++) snprintf(t->tool_error, sizeof t->tool_error, "%s", s);
            continue;
        }
        if (is_title(buf, "Summary")) part = P_SUMMARY;
        else if (is_title(buf, "Section Headers")) part = P_SECTIONS;
        else if (is_title(buf, "Public Symbols")) part = P_PUBLICS;
        else if (is_title(buf, "Symbols")) part = P_SYMBOLS;
        else if (is_title(buf, "Lines")) part = P_LINES;
        else if (is_title(buf, "Original Section Headers") || is_title(buf, "Global Symbols")) part = P_NONE;
        else if (part == P_SUMMARY) {
            if (!strncmp(s, "GUID: ", 6)) t->have_guid = parse_guid(s + 6, t->guid);
            else if (!strncmp(s, "Age: ", 5)) {
                char *end;
                unsigned long a = strtoul(s + 5, &end, 10);
                t->have_age = end != s + 5 && a <= UINT32_MAX;
                t->age = (uint32_t)a;
            }
        } else if (part == P_SECTIONS) {
            char *end;
            if (!strncmp(s, "SECTION HEADER #", 16)) {
                unsigned long n = strtoul(s + 16, &end, 10);
                cur_sect = n >= 1 && n <= 65535 ? (long)n - 1 : -1;
                if (cur_sect >= 0 && (size_t)cur_sect >= t->nsect) {
                    size_t c1 = t->csect, need = (size_t)cur_sect + 1;
                    uint32_t *va = etl_grow(t->sect_va, &c1, need, sizeof *va);
                    if (va) t->sect_va = va;
                    size_t c2 = t->csect;
                    uint32_t *ve = va ? etl_grow(t->sect_end, &c2, need, sizeof *ve) : NULL;
                    if (!va || !ve) {
                        st = ETL_E_NOMEM;
                        break;
                    }
                    t->sect_end = ve;
                    t->csect = c1;
                    for (size_t i = t->nsect; i < need; i++) va[i] = ve[i] = 0;
                    t->nsect = need;
                }
            } else if (cur_sect >= 0) {
                unsigned long long v = strtoull(s, &end, 16);
                if (end != s && v <= UINT32_MAX) {
                    if (!strcmp(skip_ws(end), "virtual address")) t->sect_va[cur_sect] = (uint32_t)v;
                    else if (!strcmp(skip_ws(end), "virtual size")) t->sect_end[cur_sect] = (uint32_t)v; /* + va below */
                }
            }
        } else if (part == P_PUBLICS || part == P_SYMBOLS) {
            const char *name;
            size_t n;
            if (strstr(s, "| S_PUB32 [") && backticked(s, &name, &n) && part == P_PUBLICS) {
                pending = true, pending_proc = false;
            } else if ((strstr(s, "| S_GPROC32") || strstr(s, "| S_LPROC32")) && backticked(s, &name, &n) &&
                       part == P_SYMBOLS) {
                pending = true, pending_proc = true;
            } else {
                if (pending && strstr(s, "addr = ")) {
                    uint32_t rva;
                    uint32_t sect;
                    if (pending_proc) {
                        const char *cs = strstr(s, "code size = ");
                        if (cs && parse_addr(s, &sect, &rva)) {
                            unsigned long long size = strtoull(cs + 12, NULL, 10);
                            if (size && size <= UINT32_MAX) st = add_fn(t, true, sect, rva, (uint32_t)size, pname, pn);
                        }
                    } else if (strstr(s, "function") && parse_addr(s, &sect, &rva)) {
                        st = add_fn(t, false, sect, rva, 0, pname, pn);
                    }
                }
                pending = false;
                continue;
            }
            memcpy(pname, name, n);
            pn = n;
        } else if (part == P_LINES) {
            char *end;
            bool mod = !strncmp(buf, "Mod ", 4), header = !mod && buf[0] && buf[0] != ' ';
            /* A block ends where its header says, whatever the dump turns to next: another file, another module. */
            if ((mod || header) && in_block) st = add_line(t, block_sect, block_end, 0, file);
            if (mod) {
                in_block = file_known = false;
            } else if (header) { /* a source file: "path (MD5: ...)" */
                /*
                 * llvm-pdbutil 14 prints a module without a debug stream as "(unknown file name offset 0)" and the
                 * previous module's blocks again: no file, so no lines (else they would name the file so).
                 */
                file_known = strncmp(buf, "(unknown file name offset ", 26) != 0;
                const char *cut = strstr(buf, " (");
                if (st == ETL_OK && file_known)
                    st = etl_strtab_add(&t->names, buf, cut ? (size_t)(cut - buf) : len, &file);
                in_block = false;
            } else if (s[0] && s[1] && s[2] && s[3] && s[4] == ':' && strstr(s, "line/addr entries")) {
                if (in_block) st = add_line(t, block_sect, block_end, 0, file);
                unsigned long sec = strtoul(s, &end, 16);
                unsigned long long lo = strtoull(end + 1, &end, 16), hi = *end == '-' ? strtoull(end + 1, NULL, 16) : lo;
                in_block = file_known && sec >= 1 && sec <= 65535 && hi <= UINT32_MAX && hi >= lo;
                if (in_block) {
                    block_sect = (uint32_t)sec;
                    block_end = (uint32_t)hi;
                }
            } else if (in_block && isdigit((unsigned char)s[0])) {
                st = line_entries(t, s, block_sect, file);
            }
        }
    }
    if (st == ETL_OK && in_block) st = add_line(t, block_sect, block_end, 0, file);
    free(buf);
    free(pname);
    free(src.p);
    if (st != ETL_OK) return st;
    if (src.failed) return ETL_E_IO;
    if (!t->have_guid || !t->have_age) return ETL_E_CORRUPT;
    for (size_t i = 0; i < t->nsect; i++) {
        uint64_t e = (uint64_t)t->sect_va[i] + t->sect_end[i];
        t->sect_end[i] = e > UINT32_MAX ? UINT32_MAX : (uint32_t)e;
    }
    t->nprocs = to_rva_fn(t, t->procs, t->nprocs);
    t->npubs = to_rva_fn(t, t->pubs, t->npubs);
    st = refuse_sizes(t);
    if (st != ETL_OK) return st;
    size_t k = 0;
    for (size_t i = 0; i < t->nlines; i++) {
        pdb_line l = t->lines[i];
        uint64_t r = l.sect >= 1 && l.sect <= t->nsect ? (uint64_t)t->sect_va[l.sect - 1] + l.rva : UINT64_MAX;
        if (r > UINT32_MAX) continue;
        l.rva = (uint32_t)r;
        t->lines[k++] = l;
    }
    t->nlines = k;
    etl_sort(t->procs, t->nprocs, sizeof *t->procs, cmp_fn);
    etl_sort(t->pubs, t->npubs, sizeof *t->pubs, cmp_fn);
    etl_sort(t->lines, t->nlines, sizeof *t->lines, cmp_line);
    return ETL_OK;
}

void pdb_table_free(pdb_table *t)
{
    free(t->procs);
    free(t->pubs);
    free(t->lines);
    free(t->sect_va);
    free(t->sect_end);
    etl_strtab_free(&t->names);
    memset(t, 0, sizeof *t);
}

/* The last entry at or below rva (of n, stride bytes apart, rva the first u32), or SIZE_MAX. */
static size_t last_at_or_below(const void *v, size_t n, size_t stride, uint32_t rva)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t r;
        memcpy(&r, (const char *)v + mid * stride, sizeof r);
        if (r <= rva) lo = mid + 1;
        else hi = mid;
    }
    return lo ? lo - 1 : SIZE_MAX;
}

static uint32_t section_end(const pdb_table *t, uint32_t rva)
{
    for (size_t i = 0; i < t->nsect; i++)
        if (rva >= t->sect_va[i] && rva < t->sect_end[i]) return t->sect_end[i];
    return 0;
}

/* The procedure covering rva, or SIZE_MAX: one that starts lower may still hold it (sorted by start only). */
static size_t proc_at(const pdb_table *t, uint32_t rva)
{
    size_t i = last_at_or_below(t->procs, t->nprocs, sizeof *t->procs, rva);
    for (size_t k = i, steps = 0; k != SIZE_MAX && steps < 64; k--, steps++) {
        if (rva - t->procs[k].rva < t->procs[k].size) return k;
        if (k == 0) break;
    }
    return SIZE_MAX;
}

bool pdb_table_function(const pdb_table *t, uint32_t rva, const char **name, uint32_t *off)
{
    size_t k = proc_at(t, rva);
    if (k != SIZE_MAX) {
        *name = etl_strtab_get(&t->names, t->procs[k].name);
        *off = rva - t->procs[k].rva;
        return true;
    }
    /*
     * A public has no size: it holds up to the next symbol of either kind (a static procedure
     * between two publics is a function of its own) and its section's end; one a procedure
     * covers (the same function's two records) no further than that procedure's end.
     */
    size_t i = last_at_or_below(t->pubs, t->npubs, sizeof *t->pubs, rva);
    if (i == SIZE_MAX) return false;
    const pdb_fn *p = &t->pubs[i];
    uint32_t end = section_end(t, p->rva);
    if (i + 1 < t->npubs && t->pubs[i + 1].rva < end) end = t->pubs[i + 1].rva;
    size_t j = last_at_or_below(t->procs, t->nprocs, sizeof *t->procs, p->rva), next = j == SIZE_MAX ? 0 : j + 1;
    if (next < t->nprocs && t->procs[next].rva < end) end = t->procs[next].rva;
    size_t c = proc_at(t, p->rva);
    if (c != SIZE_MAX && t->procs[c].rva + (uint64_t)t->procs[c].size < end) end = t->procs[c].rva + t->procs[c].size;
    if (rva >= end) return false;
    *name = etl_strtab_get(&t->names, p->name);
    *off = rva - p->rva;
    return true;
}

bool pdb_table_line(const pdb_table *t, uint32_t rva, const char **file, uint32_t *line)
{
    size_t i = last_at_or_below(t->lines, t->nlines, sizeof *t->lines, rva);
    if (i == SIZE_MAX || !t->lines[i].line) return false;
    *file = etl_strtab_get(&t->names, t->lines[i].file);
    *line = t->lines[i].line;
    return true;
}

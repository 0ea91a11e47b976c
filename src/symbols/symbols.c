/*
 * symbols.c - etlkit/symbols.h: the symbol path, images matched to PDBs by
 * their debug identity, and labels cached per (module, offset).
 *
 * Why llvm-pdbutil (measured on this machine, LLVM 14, a clang-built DLL of
 * 5,000 functions and its 1.7 MB PDB):
 * - llvm-symbolizer resolves through a PDB only with the PE beside it, and a
 *   symbol store usually holds the PDB alone (the trace's DbgID_RSDS names it);
 *   and it is slow there: 20,000 addresses through one long-lived process took
 *   92.5 s (4.6 ms each), against 0.17 s for llvm-pdbutil's whole dump of that
 *   PDB (135,108 lines) after which every lookup is in memory;
 * - a C++ shim on llvm-14-dev's native PDB reader would add a C++ toolchain and
 *   LLVM's libraries to the build on every system, Windows included;
 * - `llvm-pdbutil dump` opens a bare PDB, prints its GUID and age (the check),
 *   its procedures with their extents, its public symbols and its line tables
 *   in one run; parsed once into sorted tables (pdb_table.h), each lookup is a
 *   binary search with no round trip. One run per PDB, whatever the samples.
 */
#include "etlkit/symbols.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "base/bytes.h"
#include "base/grow.h"
#include "base/idmap.h"
#include "base/opts.h"
#include "base/platform.h"
#include "etlkit/event.h"
#include "etlkit/kernel.h"
#include "stacks/strtab.h"
#include "symbols/pdb_table.h"
#include "symbols/pe_debug.h"

/* A debug identity: what a PDB must carry to name an image's code. */
typedef struct ident {
    uint8_t guid[16];
    uint32_t age;
    uint32_t pdb; /* the PDB's base name, in names */
    uint32_t tds; /* the TimeDateStamp its ImageID said (0: none) */
    uint32_t several; /* a place without ImageID that named two files (another DLL loaded there later): used by none */
} ident;

enum mstate { M_UNREAD, M_OK, M_NO_IDENTITY, M_NO_PDB, M_MISMATCH, M_NO_TOOL, M_BAD, M_SEVERAL, M_IDENT_SEVERAL };

/* Why a module has no symbols: no DbgID_RSDS event and no binary in the path; no PDB of its identity; ... */
static const char *const why_text[] = {"", "", "no debug identity", "no PDB", "PDB mismatch", "no llvm-pdbutil",
                                       "PDB unreadable", "several files of this name (a function row)",
                                       "several debug identities at its place (DbgID_RSDS events without ImageID)"};

/* A name without symbols, and why (the first reason met). */
typedef struct without {
    uint32_t name;          /* in names */
    uint8_t why;            /* enum mstate */
} without;

/* A module: an image file (name, TimeDateStamp, SizeOfImage, identity), wherever and however often it was loaded. */
typedef struct module {
    uint32_t name;          /* base name as logged, in names */
    uint32_t tds, size;
    bool has_ident;
    bool ident_several;     /* its place's identity was ambiguous (ident.several): none taken */
    ident id;
    enum mstate state;
    pdb_table *table;
} module;

/* An image seen by the labelers: a profile image's fields, and its module. */
typedef struct image_slot {
    const void *img;
    uint64_t name_hash;
    uint64_t base, size;
    uint32_t pid, tds, module;
    bool kernel;
} image_slot;

/* A cached answer for (module, rva, flags): the label, and the symbol's parts. */
typedef struct answer {
    uint32_t module, rva;
    uint32_t label;         /* in labels (with the flags the key names) */
    uint32_t function, file; /* in the module's table's names; UINT32_MAX: none */
    uint32_t fn_off, line;
} answer;

struct etl_symbols {
    char **dirs;
    bool *store_cache;      /* by dir: a srv*DIR*URL element's folder, which need not exist yet */
    size_t ndirs, cdirs, cstore;
    etl_strtab names;       /* module names, PDB names */
    etl_idmap rsds_at;      /* (pid, base) -> index in rsds */
    ident *rsds;
    size_t nrsds, crsds;
    module *mods;
    size_t nmods, cmods;
    etl_idmap mod_ix;       /* hash of (name, tds, size, identity) -> module */
    image_slot *imgs;
    size_t nimgs, cimgs;
    etl_idmap img_ix;       /* image pointer -> slot */
    answer *answers;
    size_t nanswers, canswers;
    etl_idmap answer_ix;
    etl_strtab labels;
    without *without;       /* module names without symbols, in the order met */
    size_t nwithout, cwithout;
    const etl_profile *rep_of;  /* the profile rep was made for */
    const etl_profile_image **rep; /* by module row: its one image file, NULL when none or several */
    bool *several;          /* by module row: images of that name are several files */
    size_t nrep;
    const char *tool;       /* the llvm-pdbutil that ran, NULL until one did */
    bool tool_missing;
    unsigned timeout_s;     /* llvm-pdbutil's longest silence */
    etl_diag_fn on_diag;
    void *diag_ctx;
    etl_symbols_stats stats;
};

/* A problem told through on_diag (nothing without one). */
static void tell(const etl_symbols *s, etl_status st, const char *fmt, ...)
{
    if (!s->on_diag) return;
    etl_diag d = {st, UINT64_MAX, ""};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d.msg, sizeof d.msg, fmt, ap);
    va_end(ap);
    s->on_diag(s->diag_ctx, &d);
}

/* Whether n bytes at a hold "://" (memmem is not everywhere). */
static bool has_scheme(const char *a, size_t n)
{
    for (size_t i = 0; i + 3 <= n; i++)
        if (a[i] == ':' && a[i + 1] == '/' && a[i + 2] == '/') return true;
    return false;
}

/* ----------------------------------------------------------- the path */

static etl_status add_dir(etl_symbols *s, const char *p, size_t n, bool store_cache)
{
    while (n && (p[n - 1] == ' ')) n--;
    while (n && *p == ' ') p++, n--;
    if (!n) return ETL_OK;
    /* "srv*cache*url", "cache*dir": the local folders of an _NT_SYMBOL_PATH element */
    const char *star = memchr(p, '*', n);
    if (star) {
        const char *e = p + n;
        for (const char *a = p; a < e;) {
            const char *b = memchr(a, '*', (size_t)(e - a));
            if (!b) b = e;
            size_t k = (size_t)(b - a);
            bool keyword = (k == 3 && !strncmp(a, "srv", 3)) || (k == 3 && !strncmp(a, "SRV", 3)) ||
                           (k == 6 && !strncmp(a, "symsrv", 6)) || (k == 5 && !strncmp(a, "cache", 5)) ||
                           (k == 5 && !strncmp(a, "CACHE", 5));
            if (k && !keyword && !has_scheme(a, k)) {
                etl_status st = add_dir(s, a, k, true);
                if (st != ETL_OK) return st;
            }
            a = b + 1;
        }
        return ETL_OK;
    }
    char **d = etl_grow(s->dirs, &s->cdirs, s->ndirs + 1, sizeof *d);
    if (!d) return ETL_E_NOMEM;
    s->dirs = d;
    bool *sc = etl_grow(s->store_cache, &s->cstore, s->ndirs + 1, sizeof *sc);
    if (!sc) return ETL_E_NOMEM;
    s->store_cache = sc;
    char *c = malloc(n + 1);
    if (!c) return ETL_E_NOMEM;
    memcpy(c, p, n);
    c[n] = 0;
    sc[s->ndirs] = store_cache;
    d[s->ndirs++] = c;
    return ETL_OK;
}

/* The length of the path's first entry: up to a ';', or on POSIX a ':' when the path has no ';' (not a URL's "://"). */
static size_t entry_len(const char *path, bool colons)
{
    size_t n = 0;
    while (path[n] && path[n] != ';' && !(colons && path[n] == ':' && strncmp(path + n, "://", 3) != 0)) n++;
    return n;
}

static etl_status parse_path(etl_symbols *s, const char *path)
{
#ifdef _WIN32
    bool colons = false;
#else
    bool colons = !strchr(path, ';');
#endif
    while (*path) {
        size_t n = entry_len(path, colons);
        etl_status st = add_dir(s, path, n, false);
        if (st != ETL_OK) return st;
        path += n;
        if (*path) path++;
    }
    return ETL_OK;
}

/*
 * Each folder of the path checked: one that does not exist (a typo) would only look like
 * a path without PDBs. Strict: ETL_E_IO with "ENTRY: reason" in diag; lenient: told, dropped.
 * A symbol server's local cache (srv*DIR*URL) that does not exist is told and dropped either
 * way: a Windows tool's first download makes it, and etlkit downloads nothing.
 */
static etl_status check_dirs(etl_symbols *s, bool lenient, etl_diag *diag)
{
    size_t k = 0;
    for (size_t i = 0; i < s->ndirs; i++) {
        etl_file_info fi;
        int e = etl_stat(s->dirs[i], true, &fi) != 0 ? errno : fi.is_dir ? 0 : ENOTDIR;
        bool cache = s->store_cache[i] && e == ENOENT;
        if (!e) {
            s->store_cache[k] = s->store_cache[i];
            s->dirs[k++] = s->dirs[i];
            continue;
        }
        if (!lenient && !cache) {
            if (diag) {
                diag->status = ETL_E_IO;
                diag->file_offset = UINT64_MAX;
                snprintf(diag->msg, sizeof diag->msg, "%s: %s", s->dirs[i], strerror(e));
            }
            /* The entries not looked at yet go after the kept ones: each is freed once. */
            memmove(s->dirs + k, s->dirs + i, (s->ndirs - i) * sizeof *s->dirs);
            memmove(s->store_cache + k, s->store_cache + i, (s->ndirs - i) * sizeof *s->store_cache);
            s->ndirs = k + (s->ndirs - i);
            return ETL_E_IO;
        }
        tell(s, ETL_E_IO, "%s: %s%s", s->dirs[i], strerror(e),
             cache ? " (a symbol server's cache: etlkit reads the PDBs there, and downloads none)" : "");
        free(s->dirs[i]);
    }
    s->ndirs = k;
    return ETL_OK;
}

/* llvm-pdbutil's longest silence: ETLKIT_SYMBOL_TIMEOUT's seconds, else 120 (a value that is none told). */
static unsigned env_timeout(const etl_symbols *s)
{
    enum { DEFAULT_S = 120, MAX_S = 1000000 }; /* MAX_S * 1000 ms fits the platform's unsigned (and so open's cap) */
    const char *v = etl_getenv("ETLKIT_SYMBOL_TIMEOUT");
    if (!v || !*v) return DEFAULT_S;
    char *end;
    errno = 0;
    unsigned long n = isdigit((unsigned char)*v) ? strtoul(v, &end, 10) : 0;
    if (n >= 1 && n <= MAX_S && !errno && !*end) return (unsigned)n;
    tell(s, ETL_E_INVALID_ARG, "ETLKIT_SYMBOL_TIMEOUT: '%s' is not a whole number of seconds from 1 to %d: %d s", v, MAX_S, DEFAULT_S);
    return DEFAULT_S;
}

etl_status etl_symbols_open(const char *path, etl_symbols **out)
{
    etl_symbols_options o = {.sz = sizeof o, .path = path, .lenient = !path};
    return etl_symbols_open_with(&o, out, NULL);
}

etl_status etl_symbols_open_with(const etl_symbols_options *o, etl_symbols **out, etl_diag *diag)
{
    if (!out) return ETL_E_INVALID_ARG;
    *out = NULL;
    /* base.h's rule (a partial member never read); lenient's 0 is "not lenient", NULL's default true (base.h). */
    etl_symbols_options opt = {.sz = sizeof opt, .lenient = true};
    etl_opts_take(&opt, sizeof opt, o);
    etl_symbols *s = calloc(1, sizeof *s);
    if (!s) return ETL_E_NOMEM;
    etl_strtab_init(&s->names);
    etl_strtab_init(&s->labels);
    etl_idmap_init(&s->rsds_at);
    etl_idmap_init(&s->mod_ix);
    etl_idmap_init(&s->img_ix);
    etl_idmap_init(&s->answer_ix);
    s->on_diag = opt.on_diag;
    s->diag_ctx = opt.diag_ctx;
    const char *path = opt.path ? opt.path : etl_getenv("ETLKIT_SYMBOL_PATH");
    etl_status st = path ? parse_path(s, path) : ETL_OK;
    if (st == ETL_OK) st = check_dirs(s, opt.lenient, diag);
    if (st != ETL_OK) {
        if (st == ETL_E_NOMEM && diag) *diag = (etl_diag){ETL_E_NOMEM, UINT64_MAX, "out of memory"};
        etl_symbols_close(s);
        return st;
    }
    s->timeout_s = !opt.timeout_s ? env_timeout(s) : opt.timeout_s > 1000000 ? 1000000 : opt.timeout_s;
    *out = s;
    return ETL_OK;
}

void etl_symbols_close(etl_symbols *s)
{
    if (!s) return;
    for (size_t i = 0; i < s->ndirs; i++) free(s->dirs[i]);
    free(s->dirs);
    free(s->store_cache);
    for (size_t i = 0; i < s->nmods; i++) {
        if (s->mods[i].table) pdb_table_free(s->mods[i].table);
        free(s->mods[i].table);
    }
    free(s->mods);
    free(s->rsds);
    free(s->imgs);
    free(s->answers);
    free(s->without);
    free(s->rep);
    free(s->several);
    etl_strtab_free(&s->names);
    etl_strtab_free(&s->labels);
    etl_idmap_free(&s->rsds_at);
    etl_idmap_free(&s->mod_ix);
    etl_idmap_free(&s->img_ix);
    etl_idmap_free(&s->answer_ix);
    free(s);
}

/* ----------------------------------------------------- debug identities */

/*
 * The key of an identity: the image's place (pid, base) and, when the ImageID
 * event before its DbgID_RSDS said it, its size (0: unknown); its TimeDateStamp
 * is checked at the lookup (the Image events of Windows 8 carry none). So
 * another DLL loaded later at the same place does not lend its PDB to the first.
 */
static uint64_t at_key(uint32_t pid, uint64_t base, uint32_t size)
{
    return etl_hash_mix64(base ^ etl_hash_mix64((uint64_t)pid + 1) ^ etl_hash_mix64((uint64_t)size + 7) * 3);
}

/* The base name of a path with '\' or '/' separators (a PDB path as a Windows linker wrote it). */
static const char *base_of(const char *p, size_t n, size_t *bn)
{
    const char *b = p;
    for (size_t i = 0; i < n; i++)
        if (p[i] == '\\' || p[i] == '/' || p[i] == ':') b = p + i + 1;
    *bn = (size_t)(p + n - b);
    return b;
}

static etl_status add_ident(etl_symbols *s, uint32_t pid, uint64_t base, uint32_t tds, uint32_t size,
                            const uint8_t guid[16], uint32_t age, const char *pdb, size_t n)
{
    size_t bn;
    const char *b = base_of(pdb, n, &bn);
    if (!bn) return ETL_OK; /* no name to look up */
    ident id;
    memcpy(id.guid, guid, 16);
    id.age = age;
    id.tds = tds;
    id.several = 0;
    etl_status st = etl_strtab_add(&s->names, b, bn, &id.pdb);
    if (st != ETL_OK) return st;
    uint64_t k = at_key(pid, base, size);
    uint32_t i = etl_idmap_get(&s->rsds_at, k);
    if (i != ETL_IDMAP_EMPTY) {
        ident *o = &s->rsds[i];
        /*
         * A place alone (no ImageID said the file) with another identity: two DLLs loaded there in turn,
         * and which of them an image is cannot be told. The newest would lend its PDB to the other (wrong
         * names): neither is used (the binary in the path may still say it). A place and file: the newest wins.
         */
        if (!size && (memcmp(o->guid, id.guid, 16) || o->age != id.age || o->pdb != id.pdb)) o->several = 1;
        else if (!o->several) *o = id;
        return ETL_OK;
    }
    ident *v = etl_grow(s->rsds, &s->crsds, s->nrsds + 1, sizeof *v);
    if (!v) return ETL_E_NOMEM;
    s->rsds = v;
    v[s->nrsds] = id;
    st = etl_idmap_put(&s->rsds_at, k, (uint32_t)s->nrsds);
    if (st == ETL_OK) s->nrsds++;
    return st;
}

static void guid_bytes(const etl_guid *g, uint8_t out[16])
{
    out[0] = (uint8_t)g->data1, out[1] = (uint8_t)(g->data1 >> 8), out[2] = (uint8_t)(g->data1 >> 16);
    out[3] = (uint8_t)(g->data1 >> 24), out[4] = (uint8_t)g->data2, out[5] = (uint8_t)(g->data2 >> 8);
    out[6] = (uint8_t)g->data3, out[7] = (uint8_t)(g->data3 >> 8);
    memcpy(out + 8, g->data4, 8);
}

etl_status etl_symbols_add_rsds(etl_symbols *s, uint32_t pid, uint64_t base, const etl_guid *guid, uint32_t age,
                                const char *pdb_name)
{
    uint8_t g[16];
    guid_bytes(guid, g);
    return add_ident(s, pid, base, 0, 0, g, age, pdb_name, strlen(pdb_name));
}

etl_status etl_symbols_scan(etl_symbols *s, etl_reader *r)
{
    etl_iter *it;
    etl_status st = etl_iter_open(r, ETL_ORDER_FILE, &it);
    if (st != ETL_OK) return st;
    const etl_record *rec;
    const etl_guid *want = etl_image_id_guid();
    /* the last ImageID: the merge writes it just before its image's DbgID_RSDS (same process and base) */
    uint32_t id_pid = 0, id_tds = 0, id_size = 0;
    uint64_t id_base = 0;
    bool have_id = false;
    while (st == ETL_OK && etl_iter_next_ref(it, &rec) == ETL_OK) {
        if (!(rec->has & ETL_REC_PROVIDER) || memcmp(&rec->provider, want, sizeof *want)) continue;
        /* ILRSDS names the IL image's PDB, not this code's: passed over */
        if (rec->opcode != ETL_IMAGE_ID_DBGID_RSDS && rec->opcode != ETL_IMAGE_ID_INFO) continue;
        etl_event ev;
        if (etl_event_decode(rec, &ev) != ETL_OK) continue;
        if (ev.kind == ETL_EVENT_IMAGE_ID) {
            have_id = ev.u.image_id.image_size <= UINT32_MAX;
            id_pid = ev.u.image_id.process_id;
            id_base = ev.u.image_id.image_base;
            id_tds = ev.u.image_id.time_date_stamp;
            id_size = (uint32_t)ev.u.image_id.image_size;
            continue;
        }
        if (ev.kind != ETL_EVENT_IMAGE_DBGID_RSDS || !ev.u.dbgid.has_rsds) continue;
        const etl_image_dbgid *d = &ev.u.dbgid;
        bool known = have_id && id_pid == d->process_id && id_base == d->image_base;
        have_id = false;
        uint8_t g[16];
        guid_bytes(&d->guid_sig, g);
        st = add_ident(s, d->process_id, d->image_base, known ? id_tds : 0, known ? id_size : 0, g, d->age,
                       (const char *)d->pdb_file_name.text.p,
                       strnlen((const char *)d->pdb_file_name.text.p, d->pdb_file_name.text.n));
    }
    etl_iter_close(it);
    return st;
}

/* ------------------------------------------------------ finding files */

static bool is_file(const char *path)
{
    etl_file_info fi;
    return etl_stat(path, true, &fi) == 0 && fi.is_reg;
}

/* dir/name/key/name, or dir/name when key is NULL, into buf (dir's separator: etl_path_sep); false when it does not fit. */
static bool join(char *buf, size_t cap, const char *dir, const char *name, const char *key)
{
    char s;
    const char *g = etl_path_sep(dir, &s);
    int n = key ? snprintf(buf, cap, "%s%s%s%c%s%c%s", dir, g, name, s, key, s, name)
                : snprintf(buf, cap, "%s%s%s", dir, g, name);
    return n > 0 && (size_t)n < cap;
}

static void lower(char *d, const char *s, size_t cap)
{
    size_t i = 0;
    for (; s[i] && i + 1 < cap; i++) d[i] = (char)tolower((unsigned char)s[i]);
    d[i] = 0;
}

/* The child's output for pdb_table_read_with, and why a read failed (errno's value). */
typedef struct child_src {
    etl_child *c;
    int err;
} child_src;

static long child_read(void *ctx, void *buf, size_t n)
{
    child_src *src = ctx;
    long k = etl_child_read(src->c, buf, n);
    if (k < 0) src->err = errno;
    return k;
}

/*
 * One line on a PDB: "module: PATH: reason", the path's head cut ("...") when the line would
 * not fit a diagnostic (a store's folders are long; its tail, name/<KEY>/name, says which).
 */
static void tell_pdb(const etl_symbols *s, etl_status st, const char *mod, const char *path, const char *reason)
{
    size_t room = sizeof ((etl_diag *)0)->msg - 1, used = strlen(mod) + strlen(reason) + 4, n = strlen(path);
    size_t keep = used + 3 < room ? room - used - 3 : 0;
    if (used + n <= room || keep >= n) tell(s, st, "%s: %s: %s", mod, path, reason);
    else tell(s, st, "%s: ...%s: %s", mod, path + n - keep, reason);
}

/*
 * Why llvm-pdbutil refused a file (its own message goes to the null device), as far as the
 * MSF 7.00 header tells: not a PDB, or a size other than the header's blocks (a cut copy).
 */
static void msf_why(const char *path, char *out, size_t cap)
{
    static const char magic[32] = "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0";
    uint8_t h[48];
    FILE *f = etl_fopen(path, "rb");
    if (!f) {
        snprintf(out, cap, "%s", strerror(errno));
        return;
    }
    size_t n = fread(h, 1, sizeof h, f);
    fclose(f);
    etl_file_info fi;
    uint64_t size = etl_stat(path, true, &fi) == 0 ? fi.size : n;
    if (n < sizeof h || memcmp(h, magic, sizeof magic)) {
        snprintf(out, cap, "not a PDB (%" PRIu64 " bytes, no MSF 7.00 header)", size);
        return;
    }
    uint32_t block = etl_rd_u32(h + 32), blocks = etl_rd_u32(h + 40);
    if ((uint64_t)block * blocks != size)
        snprintf(out, cap, "%" PRIu64 " bytes where its header says %" PRIu32 " blocks of %" PRIu32 " (%" PRIu64
                 " bytes): cut or damaged", size, blocks, block, (uint64_t)block * blocks);
    else
        snprintf(out, cap, "its size is its header's: damaged inside");
}

/*
 * The PDB run through llvm-pdbutil, into *t: M_OK, or why not (M_...), with the reason in
 * why[cap] for M_BAD ("" when already told: a stopped tool is said as it happens).
 */
static enum mstate read_pdb(etl_symbols *s, const char *mod, const char *path, pdb_table *t, char *why, size_t cap)
{
    static const char *const tools[] = {"llvm-pdbutil", "llvm-pdbutil-14", "llvm-pdbutil-15", "llvm-pdbutil-16",
                                        "llvm-pdbutil-13"};
    const char *env = etl_getenv("ETLKIT_LLVM_PDBUTIL");
    size_t ntools = sizeof tools / sizeof *tools;
    *why = 0;
    for (size_t k = 0; k <= ntools; k++) {
        const char *tool = s->tool ? s->tool : k == 0 ? (env && *env ? env : NULL) : tools[k - 1];
        if (!tool) continue;
        const char *argv[] = {tool, "dump", "--summary", "--section-headers", "--publics", "--symbols", "-l", path,
                              NULL};
        etl_child *c = etl_spawn_read(argv, s->timeout_s * 1000u);
        if (!c) {
            if (!s->tool && errno == ENOENT) {
                if (k == 0) break; /* the one ETLKIT_LLVM_PDBUTIL names: no other stands in for it */
                continue;
            }
            snprintf(why, cap, "%s could not be run: %s", tool, strerror(errno));
            return M_BAD;
        }
        s->stats.round_trips++;
        child_src src = {c, 0};
        etl_status st = pdb_table_read_with(t, child_read, &src);
        int code = etl_child_wait(c);
        if (src.err == ETIMEDOUT) { /* a hung tool: this PDB unreadable, and said once */
            s->tool = tool;
            pdb_table_free(t);
            char r[160];
            snprintf(r, sizeof r, "llvm-pdbutil wrote nothing for %u s and was stopped: its frames stay module+offset "
                     "(ETLKIT_SYMBOL_TIMEOUT sets the limit)", s->timeout_s);
            tell_pdb(s, ETL_E_IO, mod, path, r);
            return M_BAD;
        }
        if (!s->tool && code == 127) { /* a shell's "not found" (Windows: a launcher) */
            pdb_table_free(t);
            if (k == 0) break;
            continue;
        }
        s->tool = tool;
        if (st != ETL_OK || code != 0) {
            pdb_table_free(t);
            char r[128];
            if (code > 0) msf_why(path, r, sizeof r);
            if (code > 0) snprintf(why, cap, "unreadable: llvm-pdbutil exit %d: %s", code, r);
            else if (code < 0) snprintf(why, cap, "unreadable: llvm-pdbutil died (a signal) or could not run");
            else if (st == ETL_E_CORRUPT) snprintf(why, cap, "unreadable: llvm-pdbutil's dump gives no GUID and age");
            else if (st == ETL_E_IO) snprintf(why, cap, "unreadable: reading llvm-pdbutil's output: %s", strerror(src.err));
            else snprintf(why, cap, "unreadable: %s", etl_status_str(st));
            return M_BAD;
        }
        return M_OK;
    }
    s->tool_missing = true;
    return M_NO_TOOL;
}

/* A PDB in use whose records were damaged: what was refused, and llvm-pdbutil's first error, one line. */
static void tell_damage(const etl_symbols *s, const module *m, const char *path)
{
    const pdb_table *t = m->table;
    if (!t->sizes_refused && !t->outside && !t->tool_errors) return;
    char r[400];
    int n = snprintf(r, sizeof r, "a damaged PDB");
    const char *sep = ": ";
    if (t->sizes_refused) {
        n += snprintf(r + n, sizeof r - (size_t)n, "%s%zu procedure%s code size%s past %s section's end (named only up "
                      "to the next symbol)", sep, t->sizes_refused, t->sizes_refused == 1 ? "'s" : "s'",
                      t->sizes_refused == 1 ? " runs" : "s run", t->sizes_refused == 1 ? "its" : "their");
        sep = "; ";
    }
    if (t->outside) {
        n += snprintf(r + n, sizeof r - (size_t)n, "%s%zu symbol%s outside %s section (left out)", sep, t->outside,
                      t->outside == 1 ? "" : "s", t->outside == 1 ? "its" : "their");
        sep = "; ";
    }
    if (t->tool_errors)
        snprintf(r + n, sizeof r - (size_t)n, "%sllvm-pdbutil: %s%s", sep, t->tool_error,
                 t->tool_errors > 1 ? " (and more)" : "");
    tell_pdb(s, ETL_E_CORRUPT, etl_strtab_get(&s->names, m->name), path, r);
}

/* "{B6ECF9C5-5AF2-1A14-4C4C-44205044422E}" from an RSDS record's bytes, as llvm-pdbutil prints it. */
static void guid_text(const uint8_t g[16], char out[39])
{
    snprintf(out, 39, "{%02X%02X%02X%02X-%02X%02X-%02X%02X-%02X%02X-%02X%02X%02X%02X%02X%02X}", g[3], g[2], g[1], g[0],
             g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

/* The PDB of identity id in the path, checked: M_OK with m->table set, else why not (each file found told). */
static enum mstate find_pdb(etl_symbols *s, module *m)
{
    const char *pdb = etl_strtab_get(&s->names, m->id.pdb), *mod = etl_strtab_get(&s->names, m->name);
    char key[64], low[1024], path[4096];
    /* <GUID><AGE>: Data1..3 as numbers, then Data4's bytes, uppercase; the age in hex, no padding */
    const uint8_t *g = m->id.guid;
    snprintf(key, sizeof key, "%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%02X%X", g[3], g[2], g[1],
             g[0], g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15], m->id.age);
    lower(low, pdb, sizeof low);
    enum mstate best = M_NO_PDB;
    /* The files found but not usable, told only when none is: one passed over for a later good one is no problem. */
    enum { NOTES = 8 };
    char paths[NOTES][512], whys[NOTES][256];
    size_t nnotes = 0, more = 0;
    for (size_t d = 0; d < s->ndirs; d++) {
        const char *cands[4][2] = {{pdb, key}, {low, key}, {pdb, NULL}, {low, NULL}};
        for (int c = 0; c < 4; c++) {
            if (c & 1 && !strcmp(low, pdb)) continue;
            if (!join(path, sizeof path, s->dirs[d], cands[c][0], cands[c][1]) || !is_file(path)) continue;
            pdb_table *t = calloc(1, sizeof *t);
            if (!t) return M_BAD;
            char why[256];
            enum mstate r = read_pdb(s, mod, path, t, why, sizeof why);
            if (r == M_NO_TOOL) {
                free(t);
                return r;
            }
            if (r == M_OK && !memcmp(t->guid, m->id.guid, 16) && t->age == m->id.age) {
                m->table = t;
                tell_damage(s, m, path);
                return M_OK;
            }
            if (r == M_OK && !memcmp(t->guid, m->id.guid, 16)) {
                snprintf(why, sizeof why, "another build's PDB: age %" PRIu32 ", the image's %" PRIu32, t->age,
                         m->id.age);
            } else if (r == M_OK) {
                char a[39], b[39];
                guid_text(t->guid, a);
                guid_text(m->id.guid, b);
                snprintf(why, sizeof why, "another build's PDB: %s age %" PRIu32 ", the image's %s age %" PRIu32, a,
                         t->age, b, m->id.age);
            }
            if (r == M_OK) best = M_MISMATCH;
            else if (best != M_MISMATCH) best = r;
            if (r == M_OK) pdb_table_free(t);
            free(t);
            if (!*why) continue;
            if (nnotes == NOTES) {
                more++;
                continue;
            }
            size_t n = strlen(path); /* the tail, which names the file (tell_pdb cuts the head too) */
            snprintf(paths[nnotes], sizeof paths[nnotes], "%s", path + (n < sizeof paths[0] ? 0 : n - sizeof paths[0] + 1));
            snprintf(whys[nnotes++], sizeof whys[0], "%s", why);
        }
    }
    for (size_t i = 0; i < nnotes; i++) tell_pdb(s, ETL_E_IO, mod, paths[i], whys[i]);
    if (more) tell(s, ETL_E_IO, "%s: %zu more files of its PDB's name not usable", mod, more);
    return best;
}

/* No identity from the trace: the binary from the path (name, TimeDateStamp, SizeOfImage), and its RSDS record. */
static bool find_binary(etl_symbols *s, module *m)
{
    if (!m->tds || !m->size) return false;
    const char *name = etl_strtab_get(&s->names, m->name);
    char key[32], low[1024], path[4096];
    snprintf(key, sizeof key, "%08X%x", m->tds, m->size);
    char key_up[32];
    snprintf(key_up, sizeof key_up, "%08X%X", m->tds, m->size);
    lower(low, name, sizeof low);
    for (size_t d = 0; d < s->ndirs; d++) {
        const char *cands[6][2] = {{name, key}, {low, key}, {name, key_up}, {low, key_up}, {name, NULL}, {low, NULL}};
        for (int c = 0; c < 6; c++) {
            if (!join(path, sizeof path, s->dirs[d], cands[c][0], cands[c][1]) || !is_file(path)) continue;
            pe_debug pe;
            if (pe_debug_read(path, &pe) != ETL_OK || pe.time_date_stamp != m->tds || pe.size_of_image != m->size ||
                !pe.has_rsds)
                continue;
            size_t bn;
            const char *b = base_of(pe.pdb, strlen(pe.pdb), &bn);
            if (!bn || etl_strtab_add(&s->names, b, bn, &m->id.pdb) != ETL_OK) return false;
            memcpy(m->id.guid, pe.guid, 16);
            m->id.age = pe.age;
            m->has_ident = true;
            return true;
        }
    }
    return false;
}

/* One entry per name: two files of one name (two svchost.exe builds) are one to people. */
static void add_without(etl_symbols *s, uint32_t name, enum mstate why)
{
    for (size_t i = 0; i < s->nwithout; i++)
        if (s->without[i].name == name) return;
    without *w = etl_grow(s->without, &s->cwithout, s->nwithout + 1, sizeof *w);
    if (!w) return; /* the list is a report: short of memory, one name fewer */
    s->without = w;
    w[s->nwithout++] = (without){name, (uint8_t)why};
}

static void load_module(etl_symbols *s, uint32_t mi)
{
    module *m = &s->mods[mi];
    if (m->state != M_UNREAD) return;
    if (!m->has_ident && !find_binary(s, m))
        m->state = m->ident_several ? M_IDENT_SEVERAL : M_NO_IDENTITY; /* the tool would not name it either */
    else if (s->tool_missing) m->state = M_NO_TOOL;
    else m->state = find_pdb(s, m);
    if (m->state != M_OK) add_without(s, m->name, m->state);
}

/* ---------------------------------------------------------------- images */

static uint64_t hash_str(const char *p)
{
    return etl_hash_bytes(p, strlen(p));
}

/* Whether module m is the file img is (with identity rsds[ri], ri ETL_IDMAP_EMPTY: none logged). */
static bool same_module(const etl_symbols *s, const module *m, const etl_profile_image *img, uint32_t ri)
{
    if (m->tds != img->time_date_stamp || m->size != (img->size > UINT32_MAX ? 0 : (uint32_t)img->size)) return false;
    if (strcmp(etl_strtab_get(&s->names, m->name), img->name ? img->name : "")) return false;
    if (ri == ETL_IDMAP_EMPTY) return !m->has_ident || m->state != M_UNREAD; /* an identity found in the binary */
    const ident *a = &m->id, *b = &s->rsds[ri];
    return m->has_ident && !memcmp(a->guid, b->guid, 16) && a->age == b->age && a->pdb == b->pdb;
}

/* The module of image img (one per distinct file): UINT32_MAX when out of memory. */
static uint32_t module_of(etl_symbols *s, const etl_profile_image *img)
{
    uint64_t k = (uint64_t)(uintptr_t)img;
    uint32_t si = etl_idmap_get(&s->img_ix, etl_hash_mix64(k));
    /* the pointer and the fields: a caller may pass one etl_profile_image filled anew for each of its images */
    const image_slot *o = si != ETL_IDMAP_EMPTY ? &s->imgs[si] : NULL;
    uint64_t nh = hash_str(img->name ? img->name : "");
    if (o && o->img == img && o->base == img->base && o->pid == img->pid && o->name_hash == nh &&
        o->size == img->size && o->tds == img->time_date_stamp && o->kernel == img->kernel)
        return o->module;
    /* The identity: the trace's for (pid, base), kernel images under the logged pid, 0 or 4 */
    uint32_t size32 = img->size > UINT32_MAX ? 0 : (uint32_t)img->size, ri = ETL_IDMAP_EMPTY;
    bool several = false;
    static const uint32_t kernel_pids[2] = {0, 4};
    for (int k2 = 0; k2 < 3 && ri == ETL_IDMAP_EMPTY; k2++) {
        if (k2 && !img->kernel) break;
        uint32_t pid = k2 ? kernel_pids[k2 - 1] : img->pid;
        /* this file's identity at this place; else the place's, when the trace did not say the file */
        ri = etl_idmap_get(&s->rsds_at, at_key(pid, img->base, size32));
        if (ri == ETL_IDMAP_EMPTY) ri = etl_idmap_get(&s->rsds_at, at_key(pid, img->base, 0));
        if (ri != ETL_IDMAP_EMPTY && s->rsds[ri].tds && img->time_date_stamp && s->rsds[ri].tds != img->time_date_stamp)
            ri = ETL_IDMAP_EMPTY; /* another build at this place */
        if (ri != ETL_IDMAP_EMPTY && s->rsds[ri].several) {
            several = true;
            ri = ETL_IDMAP_EMPTY;
        }
    }
    uint64_t h = etl_hash_mix64(nh ^ ((uint64_t)img->time_date_stamp << 32 | (uint32_t)img->size));
    if (ri != ETL_IDMAP_EMPTY) h = etl_hash_mix64(h ^ etl_hash_bytes(&s->rsds[ri], sizeof s->rsds[ri]));
    uint32_t mi = etl_idmap_get(&s->mod_ix, h);
    bool collided = mi != ETL_IDMAP_EMPTY && !same_module(s, &s->mods[mi], img, ri);
    if (mi == ETL_IDMAP_EMPTY || collided) { /* a new file (two files of one hash: the second is not mapped) */
        module *v = etl_grow(s->mods, &s->cmods, s->nmods + 1, sizeof *v);
        if (!v) return UINT32_MAX;
        s->mods = v;
        module *m = &v[s->nmods];
        memset(m, 0, sizeof *m);
        const char *nm = img->name ? img->name : "";
        if (etl_strtab_add(&s->names, nm, strlen(nm), &m->name) != ETL_OK) return UINT32_MAX;
        m->tds = img->time_date_stamp;
        m->size = img->size > UINT32_MAX ? 0 : (uint32_t)img->size;
        if (ri != ETL_IDMAP_EMPTY) {
            m->has_ident = true;
            m->id = s->rsds[ri];
        }
        m->ident_several = several;
        mi = (uint32_t)s->nmods;
        if (!collided && etl_idmap_put(&s->mod_ix, h, mi) != ETL_OK) return UINT32_MAX;
        s->nmods++;
        s->stats.modules++;
    }
    image_slot slot = {img, nh, img->base, img->size, img->pid, img->time_date_stamp, mi, img->kernel};
    if (o) { /* the same pointer (the mixer is one to one) holding another image now: its slot anew */
        s->imgs[si] = slot;
        return mi;
    }
    image_slot *v = etl_grow(s->imgs, &s->cimgs, s->nimgs + 1, sizeof *v);
    if (v) {
        s->imgs = v;
        v[s->nimgs] = slot;
        if (etl_idmap_put(&s->img_ix, etl_hash_mix64(k), (uint32_t)s->nimgs) == ETL_OK) s->nimgs++;
    }
    return mi;
}

/* ---------------------------------------------------------------- lookups */

/* The answer for (module, rva), from the cache or the module's table: NULL when out of memory. */
static const answer *answer_of(etl_symbols *s, uint32_t mi, uint32_t rva)
{
    s->stats.lookups++;
    uint64_t k = etl_hash_mix64(((uint64_t)mi << 32 | rva) ^ 0x5bd1e995u);
    uint32_t ai = etl_idmap_get(&s->answer_ix, k);
    if (ai != ETL_IDMAP_EMPTY && s->answers[ai].module == mi && s->answers[ai].rva == rva) {
        s->stats.cache_hits++;
        return &s->answers[ai];
    }
    load_module(s, mi);
    const module *m = &s->mods[mi];
    answer a = {mi, rva, 0, UINT32_MAX, UINT32_MAX, 0, 0};
    const char *fn, *file;
    uint32_t off, line;
    if (m->state == M_OK && pdb_table_function(m->table, rva, &fn, &off)) {
        a.function = (uint32_t)(fn - m->table->names.p);
        a.fn_off = off;
        if (pdb_table_line(m->table, rva, &file, &line)) {
            a.file = (uint32_t)(file - m->table->names.p);
            a.line = line;
        }
    }
    answer *v = etl_grow(s->answers, &s->canswers, s->nanswers + 1, sizeof *v);
    if (!v) return NULL;
    s->answers = v;
    v[s->nanswers] = a;
    if (ai == ETL_IDMAP_EMPTY && etl_idmap_put(&s->answer_ix, k, (uint32_t)s->nanswers) != ETL_OK) return NULL;
    return &v[s->nanswers++];
}

bool etl_symbols_find(etl_symbols *s, const etl_profile_image *img, uint64_t addr, etl_symbol *out)
{
    memset(out, 0, sizeof *out);
    out->module = "Unknown";
    out->offset = addr;
    if (!img) return false;
    out->module = img->name;
    out->offset = addr - img->base;
    if (addr < img->base || addr - img->base > UINT32_MAX) return false;
    uint32_t mi = module_of(s, img);
    if (mi == UINT32_MAX) return false;
    const answer *a = answer_of(s, mi, (uint32_t)(addr - img->base));
    if (!a || a->function == UINT32_MAX) return false;
    const pdb_table *t = s->mods[mi].table;
    out->function = etl_strtab_get(&t->names, a->function);
    out->offset = a->fn_off;
    if (a->file != UINT32_MAX) {
        out->file = etl_strtab_get(&t->names, a->file);
        out->line = a->line;
    }
    return true;
}

/* snprintf's result as a length (its failure: 0). */
static size_t len_of(int n)
{
    return n < 0 ? 0 : (size_t)n;
}

size_t etl_symbols_label(etl_symbols *s, const etl_profile_image *img, uint64_t addr, unsigned flags, char *out,
                         size_t cap)
{
    etl_symbol y;
    if (!etl_symbols_find(s, img, addr, &y))
        return len_of(snprintf(out, cap, "%s+0x%" PRIx64, y.module, y.offset));
    if (flags & ETL_SYMBOLS_OFFSET)
        return len_of(snprintf(out, cap, "%s!%s+0x%" PRIx64, y.module, y.function, y.offset));
    return len_of(snprintf(out, cap, "%s!%s", y.module, y.function));
}

static const etl_profile_image *frame_image(const etl_profile *p, const etl_profile_frame *f)
{
    return f->image == ETL_PROFILE_NONE || f->image >= p->nimages ? NULL : &p->images[f->image];
}

size_t etl_symbols_frame_label(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out, size_t cap)
{
    return etl_symbols_label(ctx, frame_image(p, f), f->address, ETL_SYMBOLS_OFFSET, out, cap);
}

size_t etl_symbols_function_label(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out, size_t cap)
{
    return etl_symbols_label(ctx, frame_image(p, f), f->address, 0, out, cap);
}

/* ------------------------------------------------------- function rows */

/* rep for p: each module row's image, when every image of that name is one module (file and identity). */
static bool make_rep(etl_symbols *s, const etl_profile *p)
{
    if (s->rep_of == p && s->nrep == p->nmodules) return true;
    free(s->rep);
    free(s->several);
    s->several = NULL;
    s->rep_of = NULL;
    s->rep = calloc(p->nmodules ? p->nmodules : 1, sizeof *s->rep);
    uint32_t *mod = malloc((p->nmodules ? p->nmodules : 1) * sizeof *mod);
    etl_idmap ix;
    etl_idmap_init(&ix);
    bool ok = s->rep && mod;
    for (size_t i = 0; ok && i < p->nmodules; i++) {
        mod[i] = UINT32_MAX;
        ok = etl_idmap_put(&ix, hash_str(p->modules[i].name), (uint32_t)i) == ETL_OK;
    }
    bool *several = ok ? calloc(p->nmodules ? p->nmodules : 1, sizeof *several) : NULL;
    ok = ok && several;
    for (size_t i = 0; ok && i < p->nimages; i++) {
        const etl_profile_image *img = &p->images[i];
        uint32_t r = etl_idmap_get(&ix, hash_str(img->name));
        if (r == ETL_IDMAP_EMPTY || strcmp(p->modules[r].name, img->name)) continue;
        uint32_t m = module_of(s, img);
        if (m == UINT32_MAX) ok = false;
        else if (mod[r] == UINT32_MAX) mod[r] = m, s->rep[r] = img;
        else if (mod[r] != m) several[r] = true;
    }
    for (size_t i = 0; ok && i < p->nmodules; i++)
        if (several[i]) s->rep[i] = NULL;
    free(mod);
    etl_idmap_free(&ix);
    if (!ok) {
        free(s->rep);
        free(several);
        s->rep = NULL;
        return false;
    }
    s->several = several;
    s->rep_of = p;
    s->nrep = p->nmodules;
    return true;
}

bool etl_symbols_find_function(etl_symbols *s, const etl_profile *p, uint32_t function, etl_symbol *out)
{
    const etl_profile_function *fn = &p->functions[function];
    bool made = make_rep(s, p);
    const etl_profile_image *img = made ? s->rep[fn->module] : NULL;
    if (img) return etl_symbols_find(s, img, img->base + fn->offset, out);
    uint32_t name;
    const char *mn = p->modules[fn->module].name;
    if (made && s->several[fn->module] && etl_strtab_add(&s->names, mn, strlen(mn), &name) == ETL_OK)
        add_without(s, name, M_SEVERAL);
    memset(out, 0, sizeof *out);
    out->module = p->modules[fn->module].name;
    out->offset = fn->offset;
    return false;
}

size_t etl_symbols_function_row_label(etl_symbols *s, const etl_profile *p, uint32_t function, unsigned flags,
                                      char *out, size_t cap)
{
    etl_symbol y;
    if (!etl_symbols_find_function(s, p, function, &y))
        return len_of(snprintf(out, cap, "%s+0x%" PRIx64, y.module, y.offset));
    if (flags & ETL_SYMBOLS_OFFSET)
        return len_of(snprintf(out, cap, "%s!%s+0x%" PRIx64, y.module, y.function, y.offset));
    return len_of(snprintf(out, cap, "%s!%s", y.module, y.function));
}

/* ----------------------------------------------------------------- stats */

void etl_symbols_stats_get(const etl_symbols *s, etl_symbols_stats *st)
{
    *st = s->stats;
    st->without = s->nwithout;
    st->tool_missing = s->tool_missing;
}

const char *etl_symbols_without(const etl_symbols *s, size_t i, const char **why)
{
    if (i >= s->nwithout) return NULL;
    if (why) *why = why_text[s->without[i].why];
    return etl_strtab_get(&s->names, s->without[i].name);
}

etl_status etl_symbols_report(const etl_symbols *s, FILE *f)
{
    int bad = 0;
    const char *env = etl_getenv("ETLKIT_LLVM_PDBUTIL");
    if (s->tool_missing && env && *env)
        bad |= fprintf(f, "etlkit: ETLKIT_LLVM_PDBUTIL names %s, which cannot be run (no other llvm-pdbutil stands in "
                       "for it): frames stay module+offset\n", env) < 0;
    else if (s->tool_missing)
        bad |= fprintf(f, "etlkit: symbols need the LLVM tools: llvm-pdbutil was not found (%s; or set "
                       "ETLKIT_LLVM_PDBUTIL): frames stay module+offset\n", etl_llvm_install_hint()) < 0;
    if (s->nwithout) {
        enum { SHOWN = 12 };
        bad |= fprintf(f, "etlkit: %zu module%s without symbols:", s->nwithout, s->nwithout == 1 ? "" : "s") < 0;
        for (size_t i = 0; i < s->nwithout && i < SHOWN; i++)
            bad |= fprintf(f, "%s %s", i ? "," : "", etl_symbols_without(s, i, NULL)) < 0;
        if (s->nwithout > SHOWN) bad |= fprintf(f, " and %zu more", s->nwithout - SHOWN) < 0;
        /* why, by reason: the first cause to fix */
        size_t count[M_IDENT_SEVERAL + 1] = {0};
        for (size_t i = 0; i < s->nwithout; i++) count[s->without[i].why]++;
        const char *sep = " (";
        for (int r = M_NO_IDENTITY; r <= M_IDENT_SEVERAL; r++)
            if (count[r]) {
                bad |= fprintf(f, "%s%s: %zu", sep, why_text[r], count[r]) < 0;
                sep = "; ";
            }
        bad |= fputs(")\n", f) == EOF;
    }
    return bad ? ETL_E_IO : ETL_OK;
}

/*
 * etlkit/symbols.h - function names for stack frames, from PDBs on local disks,
 * on any system (issue 23).
 *
 * A symbol path is a list of local folders, each in Microsoft's symbol-store
 * layout (name.pdb/<GUID><AGE>/name.pdb, name.dll/<TimeDateStamp><SizeOfImage>/
 * name.dll, as symstore and symbol servers lay them out) or flat (the files side
 * by side). An image is matched to its PDB by its debug identity: the RSDS GUID,
 * age and PDB name the trace's DbgID_RSDS events give for its (process, base),
 * else those of the PE's debug directory when the binary itself is in the path
 * (found by name, TimeDateStamp and SizeOfImage). The PDB's own GUID and age (its
 * info stream) must equal the image's: a missing or mismatched PDB gives no name,
 * the frame stays module+offset, and the module is counted as without symbols.
 *
 * The PDBs are read by Debian's LLVM (`llvm-pdbutil`, one run per PDB, parsed
 * into a sorted table: src/symbols/pdb_table.h says why that tool), never by a
 * reader of ours. Labels are cached per (module, offset): the work grows with the
 * distinct addresses, not the samples.
 *
 *     etl_symbols *s;
 *     if (etl_symbols_open(NULL, &s) == ETL_OK) {          // ETLKIT_SYMBOL_PATH
 *         etl_symbols_scan(s, reader);                     // the trace's DbgID_RSDS events
 *         etl_profile_write_folded_with(&p, stdout, etl_symbols_function_label, s);
 *         etl_symbols_report(s, stderr);                   // "2 modules without symbols: a.dll, b.dll"
 *         etl_symbols_close(s);
 *     }
 */
#ifndef ETLKIT_SYMBOLS_H
#define ETLKIT_SYMBOLS_H

#include <stdio.h>
#include "etlkit/container.h"
#include "etlkit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etl_symbols etl_symbols;

/*
 * A symbolizer over path: folders separated by ';' (as _NT_SYMBOL_PATH; on POSIX
 * ':' too when the path holds no ';'); in an _NT_SYMBOL_PATH element such as
 * "srv*C:\cache*https://host" only the local folders count; empty entries are
 * passed over. path NULL: the environment's ETLKIT_SYMBOL_PATH (none: no folders,
 * every frame module+offset). A path given here must name folders that exist:
 * ETL_E_IO otherwise (etl_symbols_open_with says which and why); one of the
 * environment's that does not is passed over. ETL_E_NOMEM.
 */
ETL_API etl_status etl_symbols_open(const char *path, etl_symbols **out);

typedef struct etl_symbols_options {
    size_t sz;              /* sizeof(etl_symbols_options): lets the struct grow */
    const char *path;       /* the folders, as etl_symbols_open takes them; NULL: $ETLKIT_SYMBOL_PATH */
    /*
     * An entry that is not an existing folder: false, the open fails (ETL_E_IO, diag
     * "ENTRY: reason"); true (a path set once for all runs, as the environment's), it is
     * told through on_diag (ETL_E_IO, "ENTRY: reason") and passed over. NULL options: true;
     * a zeroed struct: false (one of base.h's zero exceptions; a sz that ends before it: true).
     */
    bool lenient;
    /*
     * The longest llvm-pdbutil may write nothing, in seconds; past it, it is killed and
     * its PDB unreadable (on_diag says so, naming the PDB and the limit). 0: the
     * environment's ETLKIT_SYMBOL_TIMEOUT (whole seconds above 0; anything else told
     * through on_diag), else 120. At most 1000000.
     */
    unsigned timeout_s;
    /*
     * As it happens: ETL_E_IO for an entry passed over ("ENTRY: reason", while opening), a PDB
     * whose llvm-pdbutil was stopped ("module: PDB: ..."), and each PDB found for a module left
     * without one ("module: PDB: unreadable: ..." with what its header says, "module: PDB: another
     * build's PDB: ..." with both identities); ETL_E_INVALID_ARG for an ETLKIT_SYMBOL_TIMEOUT
     * that is no limit ("ETLKIT_SYMBOL_TIMEOUT: ..."); ETL_E_CORRUPT for a PDB in use with damaged
     * records ("module: PDB: a damaged PDB: ...", what was refused). May be NULL.
     */
    etl_diag_fn on_diag;
    void *diag_ctx;
} etl_symbols_options;

/*
 * etl_symbols_open with options (o NULL: as etl_symbols_open(NULL, out)); a refusal's
 * reason in diag (may be NULL). ETL_E_IO, ETL_E_NOMEM.
 */
ETL_API etl_status etl_symbols_open_with(const etl_symbols_options *o, etl_symbols **out, etl_diag *diag);
ETL_API void etl_symbols_close(etl_symbols *s);

/* Learns every DbgID_RSDS event of the trace (one pass in file order). ETL_E_NOMEM; an iterator's error. */
ETL_API etl_status etl_symbols_scan(etl_symbols *s, etl_reader *r);
/* The same for one image: the debug identity of the image at (pid, base). ETL_E_NOMEM. */
ETL_API etl_status etl_symbols_add_rsds(etl_symbols *s, uint32_t pid, uint64_t base, const etl_guid *guid, uint32_t age,
                                        const char *pdb_name);

/* What an address is: its module and, when the PDB names it, its function and source line. */
typedef struct etl_symbol {
    const char *module;     /* the image's base name; "Unknown" for an address in no image */
    const char *function;   /* NULL: no name (no PDB, a mismatched one, or an address it does not cover) */
    uint64_t offset;        /* from the function's start, else from the image's base (the address for Unknown) */
    const char *file;       /* NULL when the PDB has no line for it */
    uint32_t line;
} etl_symbol;

/*
 * The symbol at addr in img (NULL: no image). The strings live as long as s.
 * Returns whether a function name was found.
 */
ETL_API bool etl_symbols_find(etl_symbols *s, const etl_profile_image *img, uint64_t addr, etl_symbol *out);

enum {
    ETL_SYMBOLS_OFFSET = 1  /* "app.dll!Cache::Lock+0x1c"; without it "app.dll!Cache::Lock" */
};

/*
 * The label: "module!function+0xoff" (flags), or "module+0xoff" when there is no
 * name, "Unknown+0xaddress" when no image, into out[cap] (cut to fit); its
 * length as snprintf's. The one function every output's labels come from.
 */
ETL_API size_t etl_symbols_label(etl_symbols *s, const etl_profile_image *img, uint64_t addr, unsigned flags,
                                 char *out, size_t cap);

/*
 * Labelers for a profile's frames (etl_profile_labeler; ctx is the etl_symbols):
 * with the offset (the tables), and by function (folded stacks, flame graphs,
 * --butterfly: the frames of one function are one node).
 */
ETL_API size_t etl_symbols_frame_label(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out,
                                       size_t cap);
ETL_API size_t etl_symbols_function_label(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out,
                                          size_t cap);

/*
 * The same for a row of p->functions (a module name and an offset, over every
 * image of that name): the name only when all those images are one file (a
 * 32-bit and a 64-bit ntdll.dll are two: no name rather than a wrong one).
 */
ETL_API bool etl_symbols_find_function(etl_symbols *s, const etl_profile *p, uint32_t function, etl_symbol *out);
ETL_API size_t etl_symbols_function_row_label(etl_symbols *s, const etl_profile *p, uint32_t function, unsigned flags,
                                              char *out, size_t cap);

typedef struct etl_symbols_stats {
    uint64_t lookups;       /* labels asked for */
    uint64_t cache_hits;    /* of those, answered from the (module, offset) cache */
    uint64_t round_trips;   /* llvm-pdbutil runs (one per PDB read) */
    size_t modules;         /* modules asked about */
    size_t without;         /* module names without symbols (no PDB, a mismatched one, no tool, ...) */
    bool tool_missing;      /* llvm-pdbutil could not be run: no names at all */
} etl_symbols_stats;

ETL_API void etl_symbols_stats_get(const etl_symbols *s, etl_symbols_stats *st);
/* The i-th module without symbols (by name, in the order met), NULL past the last; *why: "no PDB", "PDB mismatch", ... */
ETL_API const char *etl_symbols_without(const etl_symbols *s, size_t i, const char **why);
/*
 * Tells f what symbols are missing: "2 modules without symbols: a.dll, b.dll",
 * and that names need llvm-pdbutil when it could not be run. Nothing when all
 * were found. ETL_E_IO.
 */
ETL_API etl_status etl_symbols_report(const etl_symbols *s, FILE *f);

#ifdef __cplusplus
}
#endif
#endif

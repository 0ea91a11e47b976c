/*
 * pdb_table.h - one PDB's functions and lines by RVA, read once from the text
 * `llvm-pdbutil dump --summary --section-headers --publics --symbols -l` prints
 * (Debian's LLVM reads the PDB; this parses its dump into sorted tables).
 *
 * Functions are the module symbols' S_GPROC32/S_LPROC32 (with their code size,
 * undecorated names), then the public symbols flagged `function` for code no
 * procedure covers (a public's extent runs to the next symbol of either kind or
 * its section's end, and no further than a procedure that covers its start: an
 * address between functions takes no neighbour's name). Lines are the DEBUG_S_LINES blocks: each entry holds from its offset to
 * the next, a block's end closes the last. Addresses are section:offset in the
 * dump, made RVAs with the section headers.
 */
#ifndef ETLKIT_SYMBOLS_PDB_TABLE_H
#define ETLKIT_SYMBOLS_PDB_TABLE_H

#include <stdbool.h>
#include <stdint.h>
#include "etlkit/base.h"
#include <stdio.h>
#include "stacks/strtab.h"

/* While reading, rva holds the offset in section sect: the section headers come last in the dump. */
typedef struct pdb_fn {
    uint32_t rva, size;     /* size 0: a public symbol, up to the next one */
    uint32_t name;          /* in names */
    uint32_t sect;
} pdb_fn;

typedef struct pdb_line {
    uint32_t rva;
    uint32_t line;          /* 0: the end of a block (no line from here) */
    uint32_t file;          /* in names */
    uint32_t sect;
} pdb_line;

typedef struct pdb_table {
    uint8_t guid[16];       /* the PDB info stream's signature, in the RSDS record's byte order */
    uint32_t age;
    bool have_guid, have_age;
    pdb_fn *procs, *pubs;
    size_t nprocs, npubs, cprocs, cpubs;
    pdb_line *lines;
    size_t nlines, clines;
    uint32_t *sect_va, *sect_end; /* by section number - 1 */
    size_t nsect, csect;
    etl_strtab names;
    /* Damaged records: procedures or publics in no known section or past its end (dropped), */
    size_t outside;
    /* procedures whose code size runs past it (their start kept, named up to the next symbol as a public). */
    size_t sizes_refused;
    /* The errors llvm-pdbutil wrote into its dump (a stream it read in part, exit status 0), the first kept. */
    size_t tool_errors;
    char tool_error[128];
} pdb_table;

/*
 * Reads the dump from f into t (initialized here; free it with pdb_table_free in
 * every case). ETL_E_NOMEM; ETL_E_IO when a read failed; a dump with no summary
 * GUID is ETL_E_CORRUPT.
 */
etl_status pdb_table_read(pdb_table *t, FILE *f);
/*
 * The same from read(ctx, buf, n): up to n bytes, 0 at the end, -1 when it failed
 * (ETL_E_IO). A child's output comes this way: its reads have a time limit a FILE's lack.
 */
typedef long (*pdb_read_fn)(void *ctx, void *buf, size_t n);
etl_status pdb_table_read_with(pdb_table *t, pdb_read_fn read, void *ctx);
void pdb_table_free(pdb_table *t);

/* The function holding rva: its name and rva's offset from its start; false when none does. */
bool pdb_table_function(const pdb_table *t, uint32_t rva, const char **name, uint32_t *off);
/* The source line of rva: false when no line block covers it. */
bool pdb_table_line(const pdb_table *t, uint32_t rva, const char **file, uint32_t *line);

#endif

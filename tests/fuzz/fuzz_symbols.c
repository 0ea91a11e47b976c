/*
 * fuzz_symbols.c - the symbolizer's two readers of outside bytes: the first
 * byte picks the PE debug-directory reader (pe_debug: the rest written as a
 * .dll, since it reads a file) or the llvm-pdbutil dump parser (pdb_table: the
 * rest as the tool's output), then every lookup over the table's range. Nothing
 * may crash, leak or read out of bounds; a name found lies in its function
 * (the offset from its start is at most the address), and a PDB name is
 * terminated within its buffer.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "symbols/pdb_table.h"
#include "symbols/pe_debug.h"

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if (data[0] & 1) {
        if (!path[0]) snprintf(path, sizeof path, "/tmp/fuzz_symbols.%ld.dll", (long)getpid());
        FILE *f = fopen(path, "wb");
        if (!f) return 0;
        fwrite(data + 1, 1, size - 1, f);
        fclose(f);
        pe_debug pe;
        etl_status st = pe_debug_read(path, &pe);
        if (st != ETL_OK && st != ETL_E_CORRUPT) abort();
        if (memchr(pe.pdb, 0, sizeof pe.pdb) == NULL) abort();
        return 0;
    }
    FILE *f = fmemopen((void *)(data + 1), size - 1, "r");
    if (!f) return 0;
    pdb_table t;
    etl_status st = pdb_table_read(&t, f);
    fclose(f);
    if (st == ETL_OK) {
        uint64_t hi = 0; /* the highest address the table covers */
        for (size_t i = 0; i < t.nprocs; i++)
            if (t.procs[i].rva + (uint64_t)t.procs[i].size > hi) hi = t.procs[i].rva + (uint64_t)t.procs[i].size;
        for (size_t i = 0; i < t.npubs; i++)
            if (t.pubs[i].rva > hi) hi = t.pubs[i].rva;
        if (hi > UINT32_MAX) hi = UINT32_MAX;
        for (uint32_t k = 0; k < 4096; k++) {
            uint32_t rva = (uint32_t)(hi * k / 4095);
            const char *name, *file;
            uint32_t off, line;
            if (pdb_table_function(&t, rva, &name, &off) && (off > rva || !name)) abort();
            if (pdb_table_line(&t, rva, &file, &line) && (!file || !line)) abort();
        }
    }
    pdb_table_free(&t);
    return 0;
}

/*
 * test_symbols.c - the symbolizer's parts without LLVM: the llvm-pdbutil dump
 * parser (pdb_table: procedures, public symbols, lines, the section headers
 * coming last, damaged and cut lines), the PE reader (pe_debug: a PE32+ built
 * here, then every truncation and byte flip of it), and etl_symbols end to end
 * with a stand-in llvm-pdbutil (ETLKIT_LLVM_PDBUTIL, a shell script printing a
 * dump) over a symbol store: the name when the GUID and age match, module+offset
 * when they do not, the (module, offset) cache, one run per PDB.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef _WIN32
#include <sys/stat.h>
#endif
#include "testutil.h"
#include "base/bytes.h"
#include "base/platform.h"
#include "etlkit/symbols.h"
#include "symbols/pdb_table.h"
#include "symbols/pe_debug.h"

/* A dump as llvm-pdbutil 14 prints it for a clang-built DLL (trimmed), the section headers last. */
static const char dump_text[] =
    "\n\n                          Summary                           \n"
    "============================================================\n"
    "  Block Size: 4096\n"
    "  Age: 3\n"
    "  GUID: {158583E6-7B60-970B-4C4C-44205044422E}\n"
    "\n                           Lines                            \n"
    "============================================================\n"
    "Mod 0000 | `/tmp/a.obj`: \n"
    "/src/a.c (MD5: 46B3AD9A1A701CEECF74645417404185)\n"
    "  0001:00000000-00000011, line/addr entries = 1\n"
    "     1 00000000 ! \n"
    "  0001:00000020-00000070, line/addr entries = 4\n"
    "     2 00000020 !    7 00000030 !    9 00000046 !   12 00000067 ! \n"
    "\n                       Public Symbols                       \n"
    "============================================================\n"
    "  Records\n"
    "      52 | S_PUB32 [size = 28] `only_public`\n"
    "           flags = function, addr = 0001:0144\n"
    "      80 | S_PUB32 [size = 28] `a_data_item`\n"
    "           flags = none, addr = 0002:0000\n"
    "       0 | S_PUB32 [size = 28] `?helper@@YAHH@Z`\n"
    "           flags = function, addr = 0001:0000\n"
    "\n                          Symbols                           \n"
    "============================================================\n"
    "  Mod 0000 | `/tmp/a.obj`: \n"
    "      72 | S_GPROC32 [size = 52] `helper`\n"
    "           parent = 0, end = 212, addr = 0001:0000, code size = 17\n"
    "     216 | S_LPROC32 [size = 52] `Cache::Lock`\n"
    "           parent = 0, end = 412, addr = 0001:0032, code size = 80\n"
    "     300 | S_GPROC32 [size = 52] `nowhere`\n"
    "           parent = 0, end = 412, addr = 0009:0032, code size = 80\n"
    "\n                      Section Headers                       \n"
    "============================================================\n"
    "  SECTION HEADER #1\n"
    "     .text name\n"
    "        BC virtual size\n"
    "      1000 virtual address\n"
    "  SECTION HEADER #2\n"
    "    .rdata name\n"
    "        E0 virtual size\n"
    "      2000 virtual address\n";

static FILE *text_file(const char *text, size_t n)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, n, f), n);
    rewind(f);
    return f;
}

static void test_pdb_table(void **state)
{
    (void)state;
    FILE *f = text_file(dump_text, sizeof dump_text - 1);
    pdb_table t;
    assert_int_equal(pdb_table_read(&t, f), ETL_OK);
    fclose(f);
    static const uint8_t guid[16] = {0xE6, 0x83, 0x85, 0x15, 0x60, 0x7B, 0x0B, 0x97,
                                     0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E};
    assert_memory_equal(t.guid, guid, 16);
    assert_int_equal(t.age, 3);
    const char *name, *file;
    uint32_t off, line;
    /* procedures first: undecorated, with their extent */
    assert_true(pdb_table_function(&t, 0x1005, &name, &off));
    assert_string_equal(name, "helper");
    assert_int_equal(off, 5);
    assert_true(pdb_table_function(&t, 0x1020 + 79, &name, &off));
    assert_string_equal(name, "Cache::Lock");
    assert_int_equal(off, 79);
    /* past helper's procedure: not its public's either (the same function's record, no larger) */
    assert_false(pdb_table_function(&t, 0x1011, &name, &off));
    /* after the last procedure: the public symbol below it, up to the section's end */
    assert_true(pdb_table_function(&t, 0x1090 + 0x20, &name, &off));
    assert_string_equal(name, "only_public");
    assert_int_equal(off, 0x20);
    /* past .text's end, in data, before everything: nothing */
    assert_false(pdb_table_function(&t, 0x10BC, &name, &off));
    assert_false(pdb_table_function(&t, 0x2000, &name, &off));
    assert_false(pdb_table_function(&t, 0x0FFF, &name, &off));
    /* a procedure in a section the headers do not list is left out, never misplaced, and counted */
    assert_int_equal(t.nprocs, 2);
    assert_int_equal(t.outside, 1);
    assert_int_equal(t.tool_errors, 0);
    /* lines: each entry to the next, a block's end closes it */
    assert_true(pdb_table_line(&t, 0x1031, &file, &line));
    assert_string_equal(file, "/src/a.c");
    assert_int_equal(line, 7);
    assert_true(pdb_table_line(&t, 0x1067, &file, &line));
    assert_int_equal(line, 12);
    assert_false(pdb_table_line(&t, 0x1011, &file, &line)); /* the gap between the two blocks */
    assert_false(pdb_table_line(&t, 0x1070, &file, &line));
    pdb_table_free(&t);
}

/*
 * The dump of a clang/lld-link DLL (h-explore9 F2): publics PubA, PubB, PubE, each also a
 * procedure, and the static StatC and StatD, procedures only. .text ends at 0x10A7.
 */
static const char layout_text[] =
    "Summary\n  Age: 1\n  GUID: {B6ECF9C5-5AF2-1A14-4C4C-44205044422E}\n"
    "Public Symbols\n  Records\n"
    "       0 | S_PUB32 [size = 20] `PubA`\n           flags = function, addr = 0001:0000\n"
    "      20 | S_PUB32 [size = 20] `PubB`\n           flags = function, addr = 0001:0032\n"
    "      40 | S_PUB32 [size = 20] `PubE`\n           flags = function, addr = 0001:0096\n"
    "Symbols\n  Mod 0000 | `app.obj`: \n"
    "      72 | S_GPROC32 [size = 44] `PubA`\n           parent = 0, end = 228, addr = 0001:0000, code size = 29\n"
    "     232 | S_GPROC32 [size = 44] `PubB`\n           parent = 0, end = 336, addr = 0001:0032, code size = 17\n"
    "     340 | S_LPROC32 [size = 48] `StatC`\n           parent = 0, end = 516, addr = 0001:0064, code size = %s\n"
    "     520 | S_GPROC32 [size = 44] `PubE`\n           parent = 0, end = 624, addr = 0001:0096, code size = 17\n"
    "     628 | S_LPROC32 [size = 48] `StatD`\n           parent = 0, end = 792, addr = 0001:0128, code size = 39\n"
    "Section Headers\n  SECTION HEADER #1\n     .text name\n        A7 virtual size\n      1000 virtual address\n"
    "  SECTION HEADER #2\n    .rdata name\n       100 virtual size\n      2000 virtual address\n";

/* rva's label in t: "name+0xoff", or "-" when no symbol covers it. */
static const char *fn_at(const pdb_table *t, uint32_t rva)
{
    static char out[64];
    const char *name;
    uint32_t off;
    if (!pdb_table_function(t, rva, &name, &off)) return "-";
    snprintf(out, sizeof out, "%s+0x%x", name, off);
    return out;
}

static void read_layout(pdb_table *t, const char *text)
{
    FILE *f = text_file(text, strlen(text));
    assert_int_equal(pdb_table_read(t, f), ETL_OK);
    fclose(f);
}

/*
 * An address is named only by a symbol that covers it: a procedure by its code size, a public
 * up to the next symbol of either kind, within its own procedure and section (h-explore9 F2:
 * 0x105C, one byte past static StatC, read PubB+0x3c across StatC).
 */
static void test_pdb_table_extents(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, layout_text, "27");
    pdb_table t;
    read_layout(&t, text);
    assert_string_equal(fn_at(&t, 0x1004), "PubA+0x4");
    assert_string_equal(fn_at(&t, 0x1050), "StatC+0x10");
    assert_string_equal(fn_at(&t, 0x10A0), "StatD+0x20");
    assert_string_equal(fn_at(&t, 0x105C), "-"); /* past StatC: not PubB's, whose public lies before StatC */
    assert_string_equal(fn_at(&t, 0x1031), "-"); /* past PubB's procedure: its public ends there too */
    assert_string_equal(fn_at(&t, 0x1071), "-");
    assert_string_equal(fn_at(&t, 0x10B0), "-"); /* past .text */
    assert_string_equal(fn_at(&t, 0x1200), "-"); /* .rdata */
    pdb_table_free(&t);

    /* Module symbols read in part (StatC, PubE and StatD lost): PubB's procedure still bounds it; PubE, a public
     * alone, holds to .text's end, as in a stripped PDB. */
    char part[4096];
    snprintf(part, sizeof part, "%s", text);
    char *cut = strstr(part, "     340 | S_LPROC32");
    char *sect = strstr(text, "Section Headers");
    snprintf(cut, sizeof part - (size_t)(cut - part), "%s", sect);
    read_layout(&t, part);
    assert_int_equal(t.nprocs, 2);
    assert_string_equal(fn_at(&t, 0x1050), "-");
    assert_string_equal(fn_at(&t, 0x10A0), "PubE+0x40");
    assert_string_equal(fn_at(&t, 0x10A7), "-");
    pdb_table_free(&t);

    /* A stripped PDB (publics alone): each public up to the next one, then the section's end. */
    char pubs[4096];
    snprintf(pubs, sizeof pubs, "%s", text);
    cut = strstr(pubs, "Symbols\n  Mod 0000");
    snprintf(cut, sizeof pubs - (size_t)(cut - pubs), "%s", sect);
    read_layout(&t, pubs);
    assert_int_equal(t.nprocs, 0);
    assert_string_equal(fn_at(&t, 0x105C), "PubB+0x3c");
    assert_string_equal(fn_at(&t, 0x1060), "PubE+0x0");
    assert_string_equal(fn_at(&t, 0x10A6), "PubE+0x46");
    assert_string_equal(fn_at(&t, 0x10A7), "-");
    assert_string_equal(fn_at(&t, 0x0FFF), "-");
    pdb_table_free(&t);
}

/*
 * A damaged code size (h-explore9 F3: StatC's 27 read 3254779931 named every later address of
 * the image StatC+..., .rdata too) is refused: StatC keeps its start, named up to the next
 * symbol as a public is, and the table counts it. A record that starts past its section's end
 * is dropped and counted: its address would be another section's.
 */
static void test_pdb_table_sizes(void **state)
{
    (void)state;
    char text[4096];
    snprintf(text, sizeof text, layout_text, "3254779931");
    pdb_table t;
    read_layout(&t, text);
    assert_int_equal(t.sizes_refused, 1);
    assert_int_equal(t.outside, 0);
    assert_string_equal(fn_at(&t, 0x1050), "StatC+0x10");
    assert_string_equal(fn_at(&t, 0x1060), "PubE+0x0");
    assert_string_equal(fn_at(&t, 0x1071), "-");
    assert_string_equal(fn_at(&t, 0x10A0), "StatD+0x20");
    assert_string_equal(fn_at(&t, 0x10A8), "-");
    assert_string_equal(fn_at(&t, 0x10B0), "-");
    assert_string_equal(fn_at(&t, 0x1200), "-");
    pdb_table_free(&t);
    /* one byte past .text's end is refused too; up to its end is a size */
    snprintf(text, sizeof text, layout_text, "104");
    read_layout(&t, text);
    assert_int_equal(t.sizes_refused, 1);
    pdb_table_free(&t);
    snprintf(text, sizeof text, layout_text, "103");
    read_layout(&t, text);
    assert_int_equal(t.sizes_refused, 0);
    assert_string_equal(fn_at(&t, 0x10A6), "StatD+0x26"); /* the nearer procedure first */
    pdb_table_free(&t);

    /* StatC and PubE at .text offset 200 (past its 0xA7 bytes): dropped, not named in .rdata */
    char moved[4096];
    snprintf(moved, sizeof moved, layout_text, "27");
    char *a = strstr(moved, "addr = 0001:0064"), *b = strstr(moved, "addr = 0001:0096");
    memcpy(a, "addr = 0001:0200", 16);
    memcpy(b, "addr = 0001:0200", 16); /* the public's record */
    read_layout(&t, moved);
    assert_int_equal(t.outside, 2);
    assert_int_equal(t.nprocs, 4);
    assert_int_equal(t.npubs, 2);
    assert_string_equal(fn_at(&t, 0x1000 + 200), "-");
    assert_string_equal(fn_at(&t, 0x1050), "-");
    pdb_table_free(&t);

    /* llvm-pdbutil read a stream in part and said so in its dump (exit 0): counted, the first kept */
    snprintf(moved, sizeof moved, layout_text, "27");
    char *at = strstr(moved, "     520 | S_GPROC32");
    static const char err[] = "    Error while processing symbol records.  Stream Error: The stream is too short to "
                              "perform the requested operation.\n  Mod 0001 | `* Linker *`: \n";
    snprintf(text, sizeof text, "%.*s%s%s", (int)(at - moved), moved, err, strstr(moved, "Section Headers"));
    read_layout(&t, text);
    assert_int_equal(t.tool_errors, 1);
    assert_string_equal(t.tool_error, "Error while processing symbol records.  Stream Error: The stream is too short "
                                      "to perform the requested operation.");
    assert_int_equal(t.nprocs, 3);
    pdb_table_free(&t);
}

/* A source that gives one byte a read (every line cut across reads), or fails after some bytes. */
typedef struct drip {
    const char *p;
    size_t n, at, fail_at;
} drip;

static long drip_read(void *ctx, void *buf, size_t n)
{
    drip *d = ctx;
    (void)n;
    if (d->at == d->fail_at) return -1;
    if (d->at == d->n) return 0;
    ((char *)buf)[0] = d->p[d->at++];
    return 1;
}

/* pdb_table_read_with: a line split over many reads is one line; a failed read is ETL_E_IO. */
static void test_pdb_table_read_with(void **state)
{
    (void)state;
    drip d = {dump_text, sizeof dump_text - 1, 0, SIZE_MAX};
    pdb_table t;
    assert_int_equal(pdb_table_read_with(&t, drip_read, &d), ETL_OK);
    assert_int_equal(t.age, 3);
    assert_int_equal(t.nprocs, 2);
    const char *name;
    uint32_t off;
    assert_true(pdb_table_function(&t, 0x1020 + 79, &name, &off));
    assert_string_equal(name, "Cache::Lock");
    pdb_table_free(&t);
    drip bad = {dump_text, sizeof dump_text - 1, 0, 300};
    assert_int_equal(pdb_table_read_with(&t, drip_read, &bad), ETL_E_IO);
    pdb_table_free(&t);
}

/* Damaged dumps: no summary GUID is refused; cut, overlong and nonsense lines are passed over. */
static void test_pdb_table_damaged(void **state)
{
    (void)state;
    const char *no_guid = "Summary\n  Age: 1\nSymbols\n  1 | S_GPROC32 [size = 1] `f`\n   addr = 0001:0000, code size = 4\n";
    FILE *f = text_file(no_guid, strlen(no_guid));
    pdb_table t;
    assert_int_equal(pdb_table_read(&t, f), ETL_E_CORRUPT);
    pdb_table_free(&t);
    fclose(f);

    size_t big = 100000;
    char *s = malloc(big + 4096);
    assert_non_null(s);
    size_t n = 0;
    n += (size_t)sprintf(s + n, "Summary\n  Age: 99999999999999\n  GUID: {1234}\n  GUID: {00000000-0000-0000-0000-000000000001}\n");
    n += (size_t)sprintf(s + n, "Age: 2\nSymbols\n  1 | S_GPROC32 [size = 1] `");
    memset(s + n, 'x', big); /* a name longer than a line: cut, its record dropped */
    n += big;
    n += (size_t)sprintf(s + n, "`\n   parent = 0, addr = 0001:0000, code size = 4\n"
                                "  2 | S_GPROC32 [size = 1] `g`\n   addr = 0001:4294967295, code size = 99999999999\n"
                                "  3 | S_GPROC32 [size = 1] `h`\n   addr = 0001:0016, code size = 8\n"
                                "  4 | S_GPROC32 [size = 1] no name\n   addr = 0001:0032, code size = 8\n"
                                "Lines\n/f.c\n  0001:ZZZ-, line/addr entries = 1\n     1 000000 ! 2 00000010\n"
                                "  0001:00000000-FFFFFFFFFF, line/addr entries = 1\n"
                                "Section Headers\n  SECTION HEADER #1\n  FFFFFFFF virtual address\n"
                                "  SECTION HEADER #0\n 5 virtual address\n  SECTION HEADER #70000\n");
    f = text_file(s, n);
    free(s);
    assert_int_equal(pdb_table_read(&t, f), ETL_OK);
    fclose(f);
    assert_int_equal(t.age, 2); /* the later, sane one */
    const char *name;
    uint32_t off;
    /* only h survives, at 0xFFFFFFFF + 16: past 4 GiB, so it too is dropped */
    assert_int_equal(t.nprocs, 0);
    assert_false(pdb_table_function(&t, 0, &name, &off));
    pdb_table_free(&t);
}

/* ------------------------------------------------------------------ PE */

/* A PE32+ DLL's headers: one section .rdata at RVA 0x1000 (file 0x400) holding the debug directory and RSDS. */
static size_t build_pe(uint8_t *b, size_t cap, uint32_t tds, uint32_t size_of_image, const uint8_t guid[16],
                       uint32_t age, const char *pdb)
{
    size_t n = 0x400 + 0x200;
    assert_true(n <= cap);
    memset(b, 0, n);
    b[0] = 'M', b[1] = 'Z';
    etl_wr_u32(b + 60, 0x80);
    uint8_t *nt = b + 0x80;
    memcpy(nt, "PE\0\0", 4);
    etl_wr_u16(nt + 4, 0x8664);
    etl_wr_u16(nt + 6, 1);      /* sections */
    etl_wr_u32(nt + 8, tds);
    etl_wr_u16(nt + 20, 240);   /* SizeOfOptionalHeader */
    uint8_t *opt = nt + 24;
    etl_wr_u16(opt, 0x20b);
    etl_wr_u32(opt + 56, size_of_image);
    etl_wr_u32(opt + 108, 16);  /* NumberOfRvaAndSizes */
    etl_wr_u32(opt + 112 + 48, 0x1000); /* debug directory: RVA, size */
    etl_wr_u32(opt + 112 + 52, 28);
    uint8_t *sec = opt + 240;
    memcpy(sec, ".rdata", 6);
    etl_wr_u32(sec + 8, 0x200);
    etl_wr_u32(sec + 12, 0x1000);
    etl_wr_u32(sec + 16, 0x200);
    etl_wr_u32(sec + 20, 0x400);
    uint8_t *dd = b + 0x400;
    etl_wr_u32(dd + 12, 2);     /* IMAGE_DEBUG_TYPE_CODEVIEW */
    size_t pn = strlen(pdb) + 1;
    etl_wr_u32(dd + 16, (uint32_t)(24 + pn));
    etl_wr_u32(dd + 20, 0x1000 + 28);
    etl_wr_u32(dd + 24, 0x400 + 28);
    uint8_t *cv = dd + 28;
    memcpy(cv, "RSDS", 4);
    memcpy(cv + 4, guid, 16);
    etl_wr_u32(cv + 20, age);
    memcpy(cv + 24, pdb, pn);
    return n;
}

static char *path0; /* PATH as the tests found it (setup), for restore_env */
static char tmpdir[512];

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(p, 1, n, f), n);
    assert_int_equal(fclose(f), 0);
}

static void test_pe_debug(void **state)
{
    (void)state;
    static const uint8_t guid[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
    uint8_t b[0x800];
    size_t n = build_pe(b, sizeof b, 0x6B07817C, 0x4000, guid, 7, "C:\\build\\app.pdb");
    char path[600];
    snprintf(path, sizeof path, "%s/t.dll", tmpdir);
    write_file(path, b, n);
    pe_debug pe;
    assert_int_equal(pe_debug_read(path, &pe), ETL_OK);
    assert_int_equal(pe.time_date_stamp, 0x6B07817C);
    assert_int_equal(pe.size_of_image, 0x4000);
    assert_true(pe.has_rsds);
    assert_memory_equal(pe.guid, guid, 16);
    assert_int_equal(pe.age, 7);
    assert_string_equal(pe.pdb, "C:\\build\\app.pdb");
    /* every truncation and every byte set to 0xFF: no crash, and an RSDS only when it is all there */
    for (size_t k = 0; k < n; k += 7) {
        write_file(path, b, k);
        etl_status st = pe_debug_read(path, &pe);
        assert_true(st == ETL_OK || st == ETL_E_CORRUPT);
        if (st == ETL_OK && pe.has_rsds) assert_true(k >= 0x400 + 28 + 25);
    }
    for (size_t k = 0; k < n; k++) {
        uint8_t c = b[k];
        b[k] = 0xFF;
        write_file(path, b, n);
        etl_status st = pe_debug_read(path, &pe);
        assert_true(st == ETL_OK || st == ETL_E_CORRUPT);
        assert_true(strlen(pe.pdb) < sizeof pe.pdb);
        b[k] = c;
    }
    assert_int_equal(pe_debug_read("/nonexistent/x.dll", &pe), ETL_E_IO);
    remove(path);
}

/* ------------------------------------------------- the symbolizer, end to end */

static void test_labels_without_pdb(void **state)
{
    (void)state;
    etl_symbols *s;
    assert_int_equal(etl_symbols_open("", &s), ETL_OK);
    etl_profile_image img = {.base = 0x7ff600000000ull, .size = 0x10000, .pid = 8, .name = "app.exe",
                             .time_date_stamp = 0x1234, .from_ns = INT64_MIN, .to_ns = INT64_MAX};
    char out[64];
    assert_int_equal(etl_symbols_label(s, &img, 0x7ff600001234ull, ETL_SYMBOLS_OFFSET, out, sizeof out), 14);
    assert_string_equal(out, "app.exe+0x1234");
    etl_symbols_label(s, NULL, 0xfffff80012345678ull, 0, out, sizeof out);
    assert_string_equal(out, "Unknown+0xfffff80012345678");
    etl_symbols_label(s, &img, 0x7ff600001234ull, 0, out, 8); /* cut to fit, terminated */
    assert_string_equal(out, "app.exe");
    const char *why;
    assert_string_equal(etl_symbols_without(s, 0, &why), "app.exe");
    assert_string_equal(why, "no debug identity");
    assert_null(etl_symbols_without(s, 1, &why));
    etl_symbols_close(s);
}

/* on_diag's stand-in: the last message in ctx[0..255), how many in ctx[255]. */
static void count_diag(void *ctx, const etl_diag *d)
{
    char *last = ctx;
    size_t n = strnlen(d->msg, 254);
    memcpy(last, d->msg, n);
    last[n] = 0;
    last[255]++; /* the count, in the buffer's last byte */
}

#ifndef _WIN32
/* A stand-in llvm-pdbutil: prints dump_text whatever it is asked, counting its runs in a file. */
static void fake_tool(char *tool, size_t cap)
{
    char dump[600];
    snprintf(dump, sizeof dump, "%s/dump.txt", tmpdir);
    write_file(dump, dump_text, sizeof dump_text - 1);
    snprintf(tool, cap, "%s/fake-pdbutil", tmpdir);
    char script[2048];
    int n = snprintf(script, sizeof script, "#!/bin/sh\necho run >> '%s/runs'\ncat '%s'\n", tmpdir, dump);
    write_file(tool, script, (size_t)n);
    assert_int_equal(chmod(tool, 0755), 0);
}

static int count_runs(void)
{
    char path[600], line[16];
    snprintf(path, sizeof path, "%s/runs", tmpdir);
    FILE *f = fopen(path, "r");
    int n = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) n++;
    fclose(f);
    return n;
}

static void test_symbols_store(void **state)
{
    (void)state;
    char tool[600], dir[700], path[800];
    fake_tool(tool, sizeof tool);
    setenv("ETLKIT_LLVM_PDBUTIL", tool, 1);
    /* the store: app.pdb/<GUID><AGE>/app.pdb for the identity the dump carries (age 3) */
    snprintf(dir, sizeof dir, "%s/store/app.pdb/158583E67B60970B4C4C44205044422E3", tmpdir);
    char mk[800];
    snprintf(mk, sizeof mk, "mkdir -p '%s'", dir);
    assert_int_equal(system(mk), 0);
    snprintf(path, sizeof path, "%s/app.pdb", dir);
    write_file(path, "not read: the tool is a stand-in", 32);
    /* bad.pdb flat: the dump's GUID is not the one the trace gives it */
    snprintf(path, sizeof path, "%s/store/bad.pdb", tmpdir);
    write_file(path, "x", 1);

    char sp[1200];
    snprintf(sp, sizeof sp, ";%s/store;;", tmpdir); /* empty entries are nothing */
    etl_symbols *s;
    assert_int_equal(etl_symbols_open(sp, &s), ETL_OK);
    const etl_guid g = {0x158583E6, 0x7B60, 0x970B, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}};
    const etl_guid other = {0x158583E6, 0x7B60, 0x970B, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2F}};
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &g, 3, "C:\\build\\app.pdb"), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x190000000ull, &other, 3, "bad.pdb"), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 9, 0x180000000ull, &g, 2, "app.pdb"), ETL_OK); /* another age */
    etl_profile_image app = {.base = 0x180000000ull, .size = 0x4000, .pid = 8, .name = "app.dll"};
    etl_profile_image bad = {.base = 0x190000000ull, .size = 0x4000, .pid = 8, .name = "bad.dll"};
    etl_profile_image old = {.base = 0x180000000ull, .size = 0x4000, .pid = 9, .name = "app.dll"};
    char out[128];
    for (int k = 0; k < 3; k++) { /* the second and third time from the cache */
        etl_symbols_label(s, &app, 0x180001024ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
        assert_string_equal(out, "app.dll!Cache::Lock+0x4");
    }
    etl_symbols_label(s, &app, 0x180001024ull, 0, out, sizeof out);
    assert_string_equal(out, "app.dll!Cache::Lock");
    etl_symbol y;
    assert_true(etl_symbols_find(s, &app, 0x180001031ull, &y));
    assert_string_equal(y.file, "/src/a.c");
    assert_int_equal(y.line, 7);
    etl_symbols_label(s, &bad, 0x190001024ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "bad.dll+0x1024"); /* a PDB of another GUID: no name */
    etl_symbols_label(s, &old, 0x180001024ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "app.dll+0x1024"); /* age 2: no PDB of that identity */
    etl_symbols_stats st;
    etl_symbols_stats_get(s, &st);
    assert_int_equal(st.round_trips, 2); /* app.pdb once, bad.pdb once: not per lookup */
    assert_int_equal(count_runs(), 2);
    assert_true(st.cache_hits >= 3);
    const char *why;
    assert_string_equal(etl_symbols_without(s, 0, &why), "bad.dll");
    assert_string_equal(why, "PDB mismatch");
    etl_symbols_close(s);

    /* no tool at all: said, and no names (PATH back by restore_env, whether this passes or not) */
    setenv("ETLKIT_LLVM_PDBUTIL", "/nonexistent/llvm-pdbutil", 1);
    setenv("PATH", "/nonexistent", 1);
    assert_int_equal(etl_symbols_open(sp, &s), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &g, 3, "app.pdb"), ETL_OK);
    etl_symbols_label(s, &app, 0x180001024ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "app.dll+0x1024");
    etl_symbols_stats_get(s, &st);
    assert_true(st.tool_missing);
    etl_symbols_close(s);
}

/* on_diag's stand-in: every message, one a line, into a buffer of DIAGS bytes. */
enum { DIAGS = 4096 };
static void keep_diags(void *ctx, const etl_diag *d)
{
    char *all = ctx;
    size_t n = strlen(all);
    snprintf(all + n, DIAGS - n, "%s\n", d->msg);
}

/* A stand-in llvm-pdbutil whose "PDB" is its own dump: it prints the file it is given. */
static void cat_tool(char *tool, size_t cap)
{
    snprintf(tool, cap, "%s/cat-pdbutil", tmpdir);
    static const char script[] = "#!/bin/sh\nfor a; do f=$a; done\n"
                                 "case $(head -c 7 \"$f\") in Summary) ;; *) echo 'llvm-pdbutil: bad' >&2; exit 1;; esac\n"
                                 "cat \"$f\"\n";
    write_file(tool, script, sizeof script - 1);
    assert_int_equal(chmod(tool, 0755), 0);
}

/* name.pdb/<KEY>/name.pdb under dir, holding text. */
static void store_put(const char *dir, const char *name, const char *key, const char *text)
{
    char mk[1200], path[1200];
    snprintf(mk, sizeof mk, "mkdir -p '%s/%s/%s'", dir, name, key);
    assert_int_equal(system(mk), 0);
    snprintf(path, sizeof path, "%s/%s/%s/%s", dir, name, key, name);
    write_file(path, text, strlen(text));
}

/* A PDB whose procedure's code size runs past its section: named up to the next symbol, and said (h-explore9 F3). */
static void test_symbols_damaged_sizes(void **state)
{
    (void)state;
    char tool[600], dir[700], text[4096];
    cat_tool(tool, sizeof tool);
    setenv("ETLKIT_LLVM_PDBUTIL", tool, 1);
    snprintf(dir, sizeof dir, "%s/dstore", tmpdir);
    snprintf(text, sizeof text, layout_text, "3254779931");
    store_put(dir, "app.pdb", "B6ECF9C55AF21A144C4C44205044422E1", text);
    char diags[DIAGS] = "";
    etl_symbols_options o = {.sz = sizeof o, .path = dir, .on_diag = keep_diags, .diag_ctx = diags};
    etl_symbols *s;
    assert_int_equal(etl_symbols_open_with(&o, &s, NULL), ETL_OK);
    const etl_guid g = {0xB6ECF9C5, 0x5AF2, 0x1A14, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}};
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &g, 1, "C:\\b1\\app.pdb"), ETL_OK);
    etl_profile_image app = {.base = 0x180000000ull, .size = 0x4000, .pid = 8, .name = "app.dll"};
    char out[128];
    etl_symbols_label(s, &app, 0x180001050ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "app.dll!StatC+0x10");
    etl_symbols_label(s, &app, 0x1800010B0ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "app.dll+0x10b0");
    etl_symbols_label(s, &app, 0x180001200ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "app.dll+0x1200");
    char want[1200];
    snprintf(want, sizeof want, "app.dll: %s/app.pdb/B6ECF9C55AF21A144C4C44205044422E1/app.pdb: a damaged PDB: 1 "
             "procedure's code size runs past its section's end (named only up to the next symbol)\n", dir);
    assert_string_equal(diags, want);
    etl_symbols_close(s);
    unsetenv("ETLKIT_LLVM_PDBUTIL");
}

/* Every occurrence of from in s (in place; to as long as from). */
static void replace_all(char *s, const char *from, const char *to)
{
    size_t n = strlen(from);
    for (char *p = strstr(s, from); p; p = strstr(p + n, from)) memcpy(p, to, n);
}

/*
 * Two DbgID_RSDS at one place (pid, base) without an ImageID before either (another DLL loaded there after
 * the first was unloaded): which one an image is cannot be told, and the newest lent its PDB to both (a.dll
 * named with b.pdb's functions). Now neither is used, and said; one identity logged twice still names it.
 */
static void test_symbols_place_two_identities(void **state)
{
    (void)state;
    char tool[600], dir[700], ta[4096], tb[4096];
    cat_tool(tool, sizeof tool);
    setenv("ETLKIT_LLVM_PDBUTIL", tool, 1);
    snprintf(dir, sizeof dir, "%s/twostore", tmpdir);
    snprintf(ta, sizeof ta, layout_text, "29");
    memcpy(tb, ta, sizeof tb);
    replace_all(tb, "B6ECF9C5", "C6ECF9C5");
    replace_all(tb, "`Pub", "`Oth");
    store_put(dir, "a.pdb", "B6ECF9C55AF21A144C4C44205044422E1", ta);
    store_put(dir, "b.pdb", "C6ECF9C55AF21A144C4C44205044422E1", tb);
    const etl_guid ga = {0xB6ECF9C5, 0x5AF2, 0x1A14, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}};
    const etl_guid gb = {0xC6ECF9C5, 0x5AF2, 0x1A14, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}};
    etl_profile_image a = {.base = 0x180000000ull, .size = 0x4000, .pid = 8, .name = "a.dll"};
    char out[128];
    etl_symbols *s;
    /* one identity, logged twice (a rundown at the start and at the end): named */
    assert_int_equal(etl_symbols_open(dir, &s), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &ga, 1, "a.pdb"), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &ga, 1, "C:\\b\\a.pdb"), ETL_OK);
    etl_symbols_label(s, &a, 0x180001000ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "a.dll!PubA+0x0");
    etl_symbols_close(s);
    /* two at one place: neither, and why */
    assert_int_equal(etl_symbols_open(dir, &s), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &ga, 1, "a.pdb"), ETL_OK);
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &gb, 1, "b.pdb"), ETL_OK);
    etl_symbols_label(s, &a, 0x180001000ull, ETL_SYMBOLS_OFFSET, out, sizeof out); /* was a.dll!OthA+0x0 */
    assert_string_equal(out, "a.dll+0x1000");
    const char *why = NULL;
    assert_string_equal(etl_symbols_without(s, 0, &why), "a.dll");
    assert_string_equal(why, "several debug identities at its place (DbgID_RSDS events without ImageID)");
    /* another place of the process keeps its own */
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x190000000ull, &gb, 1, "b.pdb"), ETL_OK);
    etl_profile_image b = {.base = 0x190000000ull, .size = 0x4000, .pid = 8, .name = "b.dll"};
    etl_symbols_label(s, &b, 0x190001000ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
    assert_string_equal(out, "b.dll!OthA+0x0");
    etl_symbols_close(s);
    unsetenv("ETLKIT_LLVM_PDBUTIL");
}

/*
 * A PDB found but not usable is told, one line each naming the module, the file and why
 * (h-explore9 F6: only "PDB unreadable: 1" after a list of every module without symbols):
 * llvm-pdbutil's failure with what the file's MSF header says, or the two identities. One
 * passed over for a good one later in the path is not a problem: nothing said.
 */
static void test_symbols_unusable_told(void **state)
{
    (void)state;
    char tool[600], d1[700], d2[700], text[4096], path[1200];
    cat_tool(tool, sizeof tool);
    setenv("ETLKIT_LLVM_PDBUTIL", tool, 1);
    snprintf(d1, sizeof d1, "%s/ustore1", tmpdir);
    snprintf(d2, sizeof d2, "%s/ustore2", tmpdir);
    static const char key[] = "B6ECF9C55AF21A144C4C44205044422E1";
    snprintf(text, sizeof text, layout_text, "27");
    char *age = strstr(text, "Age: 1");
    age[5] = '2';
    store_put(d1, "app.pdb", key, text); /* age 2 where the image wants 1: then the good one in d2 */
    store_put(d1, "bad.pdb", key, text);
    age[5] = '1';
    store_put(d2, "app.pdb", key, text);
    store_put(d1, "notpdb.pdb", key, "garbage");
    /* an MSF 7.00 header of 18 blocks of 4096 bytes, the file cut to 100 */
    uint8_t msf[100] = "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS";
    etl_wr_u32(msf + 32, 4096);
    etl_wr_u32(msf + 40, 18);
    store_put(d1, "cut.pdb", key, "");
    snprintf(path, sizeof path, "%s/cut.pdb/%s/cut.pdb", d1, key);
    write_file(path, msf, sizeof msf);

    char sp[1500], diags[DIAGS] = "";
    snprintf(sp, sizeof sp, "%s;%s", d1, d2);
    etl_symbols_options o = {.sz = sizeof o, .path = sp, .on_diag = keep_diags, .diag_ctx = diags};
    etl_symbols *s;
    assert_int_equal(etl_symbols_open_with(&o, &s, NULL), ETL_OK);
    const etl_guid g = {0xB6ECF9C5, 0x5AF2, 0x1A14, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}};
    static const char *const pdbs[] = {"app.pdb", "bad.pdb", "notpdb.pdb", "cut.pdb"};
    static const char *const mods[] = {"app.dll", "bad.dll", "notpdb.dll", "cut.dll"};
    char out[128];
    for (int i = 0; i < 4; i++) {
        assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull + ((uint64_t)i << 32), &g, 1, pdbs[i]), ETL_OK);
        etl_profile_image img = {.base = 0x180000000ull + ((uint64_t)i << 32), .size = 0x4000, .pid = 8, .name = mods[i]};
        etl_symbols_label(s, &img, img.base + 0x1050, ETL_SYMBOLS_OFFSET, out, sizeof out);
        char raw[64];
        snprintf(raw, sizeof raw, "%s+0x1050", mods[i]);
        assert_string_equal(out, i ? raw : "app.dll!StatC+0x10");
    }
    /* app.dll's age 2 in ustore1 is passed over for ustore2's: not told */
    char want[DIAGS];
    snprintf(want, sizeof want,
             "bad.dll: %s/bad.pdb/%s/bad.pdb: another build's PDB: age 2, the image's 1\n"
             "notpdb.dll: %s/notpdb.pdb/%s/notpdb.pdb: unreadable: llvm-pdbutil exit 1: not a PDB (7 bytes, no MSF 7.00 "
             "header)\n"
             "cut.dll: %s/cut.pdb/%s/cut.pdb: unreadable: llvm-pdbutil exit 1: 100 bytes where its header says 18 "
             "blocks of 4096 (73728 bytes): cut or damaged\n",
             d1, key, d1, key, d1, key);
    assert_string_equal(diags, want);
    const char *why;
    assert_string_equal(etl_symbols_without(s, 0, &why), "bad.dll");
    assert_string_equal(why, "PDB mismatch");
    etl_symbols_close(s);
    unsetenv("ETLKIT_LLVM_PDBUTIL");
}

/* A path entry that is not a folder: refused with its name and why, or (lenient) told once and passed over. */
static void test_symbols_path_check(void **state)
{
    (void)state;
    char sp[1200], file[700], msg[1300];
    snprintf(file, sizeof file, "%s/afile", tmpdir);
    write_file(file, "x", 1);
    snprintf(sp, sizeof sp, "%s;%s/nothing", tmpdir, tmpdir);
    etl_symbols *s = (etl_symbols *)&s;
    assert_int_equal(etl_symbols_open(sp, &s), ETL_E_IO);
    assert_null(s);
    etl_diag d = {0};
    etl_symbols_options o = {.sz = sizeof o, .path = sp};
    assert_int_equal(etl_symbols_open_with(&o, &s, &d), ETL_E_IO);
    snprintf(msg, sizeof msg, "%s/nothing: No such file or directory", tmpdir);
    assert_string_equal(d.msg, msg);
    snprintf(sp, sizeof sp, "%s", file);
    assert_int_equal(etl_symbols_open_with(&o, &s, &d), ETL_E_IO);
    snprintf(msg, sizeof msg, "%s: Not a directory", file);
    assert_string_equal(d.msg, msg);

    /* lenient: each missing entry once through on_diag, the good one kept */
    char last[256] = {0};
    snprintf(sp, sizeof sp, "%s/nothing;%s;;", tmpdir, tmpdir);
    o = (etl_symbols_options){.sz = sizeof o, .path = sp, .lenient = true, .on_diag = count_diag, .diag_ctx = last};
    assert_int_equal(etl_symbols_open_with(&o, &s, NULL), ETL_OK);
    assert_int_equal(last[255], 1);
    last[255] = 0;
    snprintf(msg, sizeof msg, "%s/nothing: No such file or directory", tmpdir);
    assert_string_equal(last, msg);
    etl_symbols_close(s);
    /* the environment's path is lenient by default */
    setenv("ETLKIT_SYMBOL_PATH", sp, 1);
    assert_int_equal(etl_symbols_open(NULL, &s), ETL_OK);
    etl_symbols_close(s);
    unsetenv("ETLKIT_SYMBOL_PATH");
}

#endif


/* ------------------------------------ a silent child: this program, on both systems */

static const char *self; /* this program as it was started: the spawn tests run it again as their child */

#ifdef _WIN32
__declspec(dllimport) void __stdcall Sleep(unsigned long ms);
static void nap(unsigned ms)
{
    Sleep(ms);
}
static void set_env(const char *name, const char *value)
{
    _putenv_s(name, value ? value : ""); /* "" removes it */
}
#else
static void nap(unsigned ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0) {}
}
static void set_env(const char *name, const char *value)
{
    if (value) setenv(name, value, 1);
    else unsetenv(name);
}
#endif

#ifndef _WIN32
/* A test's teardown: the environment it changed back, even when an assertion left it half way. */
static int restore_env(void **state)
{
    (void)state;
    set_env("PATH", path0);
    set_env("ETLKIT_LLVM_PDBUTIL", NULL);
    return 0;
}
#endif

/*
 * The child modes (main's): "--child print" writes abc, then def 0.2 s later; "--child hang" writes x, then
 * nothing for 30 s; as llvm-pdbutil ("dump ..."), nothing for 30 s.
 */
static int child_main(int argc, char **argv)
{
    const char *mode = strcmp(argv[1], "dump") == 0 ? "silent" : argc > 2 ? argv[2] : "";
    if (!strcmp(mode, "print")) {
        fputs("abc", stdout);
        fflush(stdout);
        nap(200);
        fputs("def", stdout);
        return 0;
    }
    if (!strcmp(mode, "hang")) {
        fputs("x", stdout);
        fflush(stdout);
    } else if (strcmp(mode, "silent")) {
        return 2;
    }
    nap(30000);
    return 0;
}

/* The platform's child: its output read in full; a silent one killed at the limit (ETIMEDOUT) and reaped. */
static void test_spawn_idle_limit(void **state)
{
    (void)state;
    const char *print[] = {self, "--child", "print", NULL};
    etl_child *c = etl_spawn_read(print, 10000);
    assert_non_null(c);
    char buf[16];
    size_t n = 0;
    long k;
    while (n < sizeof buf && (k = etl_child_read(c, buf + n, sizeof buf - n)) > 0) n += (size_t)k;
    assert_int_equal(k, 0);
    assert_int_equal(n, 6);
    assert_memory_equal(buf, "abcdef", 6);
    assert_int_equal(etl_child_wait(c), 0);

    const char *hang[] = {self, "--child", "hang", NULL};
    c = etl_spawn_read(hang, 1000);
    assert_non_null(c);
    time_t t0 = time(NULL);
    assert_int_equal(etl_child_read(c, buf, sizeof buf), 1);
    errno = 0;
    assert_int_equal(etl_child_read(c, buf, sizeof buf), -1);
    assert_int_equal(errno, ETIMEDOUT);
    assert_int_equal(etl_child_wait(c), -1);
    assert_true(time(NULL) - t0 <= 10);

    /* A reader that stops before the end (a parse error) with no limit set: the wait kills, not hangs for 30 s. */
    c = etl_spawn_read(hang, 0);
    assert_non_null(c);
    t0 = time(NULL);
    assert_int_equal(etl_child_read(c, buf, sizeof buf), 1);
    assert_int_equal(etl_child_wait(c), -1);
    assert_true(time(NULL) - t0 <= 10);

    const char *none[] = {"/nonexistent/tool", NULL};
    errno = 0;
    assert_null(etl_spawn_read(none, 0));
    assert_int_equal(errno, ENOENT);
}

/* An llvm-pdbutil that writes nothing: stopped after the limit, the PDB unreadable, said once naming it. */
static void test_symbols_timeout(void **state)
{
    (void)state;
    char dir[700], path[800];
    snprintf(dir, sizeof dir, "%s/hstore", tmpdir);
    assert_int_equal(etl_mkdir(dir), 0);
    snprintf(dir, sizeof dir, "%s/hstore/app.pdb", tmpdir);
    assert_int_equal(etl_mkdir(dir), 0);
    snprintf(dir, sizeof dir, "%s/hstore/app.pdb/158583E67B60970B4C4C44205044422E3", tmpdir);
    assert_int_equal(etl_mkdir(dir), 0);
    snprintf(path, sizeof path, "%s/app.pdb", dir);
    write_file(path, "x", 1);
    set_env("ETLKIT_LLVM_PDBUTIL", self); /* as llvm-pdbutil it writes nothing */
    snprintf(dir, sizeof dir, "%s/hstore", tmpdir);
    char last[256] = {0};
    etl_symbols_options o = {.sz = sizeof o, .path = dir, .timeout_s = 1, .on_diag = count_diag, .diag_ctx = last};
    etl_symbols *s;
    assert_int_equal(etl_symbols_open_with(&o, &s, NULL), ETL_OK);
    const etl_guid g = {0x158583E6, 0x7B60, 0x970B, {0x4C, 0x4C, 0x44, 0x20, 0x50, 0x44, 0x42, 0x2E}};
    assert_int_equal(etl_symbols_add_rsds(s, 8, 0x180000000ull, &g, 3, "app.pdb"), ETL_OK);
    etl_profile_image app = {.base = 0x180000000ull, .size = 0x4000, .pid = 8, .name = "app.dll"};
    char out[128];
    time_t t0 = time(NULL);
    for (int k = 0; k < 2; k++) { /* the second from the cache: no second wait */
        etl_symbols_label(s, &app, 0x180001024ull, ETL_SYMBOLS_OFFSET, out, sizeof out);
        assert_string_equal(out, "app.dll+0x1024");
    }
    assert_true(time(NULL) - t0 <= 10);
    assert_int_equal(last[255], 1);
    last[255] = 0;
    char want[900];
    snprintf(want, sizeof want, "app.dll: %s: llvm-pdbutil wrote nothing for 1 s and was stopped", path);
    assert_memory_equal(last, want, strlen(want));
    const char *why;
    assert_string_equal(etl_symbols_without(s, 0, &why), "app.dll");
    assert_string_equal(why, "PDB unreadable");
    etl_symbols_close(s);
    /* a limit that is no number: told, the default kept */
    set_env("ETLKIT_SYMBOL_TIMEOUT", "2x");
    o.timeout_s = 0;
    assert_int_equal(etl_symbols_open_with(&o, &s, NULL), ETL_OK);
    assert_int_equal(last[255], 1);
    last[255] = 0;
    assert_string_equal(last, "ETLKIT_SYMBOL_TIMEOUT: '2x' is not a whole number of seconds from 1 to 1000000: 120 s");
    etl_symbols_close(s);
    set_env("ETLKIT_SYMBOL_TIMEOUT", NULL);
    set_env("ETLKIT_LLVM_PDBUTIL", NULL);
}

static int setup(void **state)
{
    (void)state;
    const char *p = getenv("PATH");
    path0 = strdup(p ? p : "/usr/bin:/bin");
    return path0 ? tu_tmpdir_make(tmpdir, sizeof tmpdir, "symbols") : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(path0);
    return tu_tmpdir_remove(tmpdir);
}

int main(int argc, char **argv)
{
    if (argc > 1 && (!strcmp(argv[1], "--child") || !strcmp(argv[1], "dump"))) return child_main(argc, argv);
    /* this program, by a name that holds a folder (Windows' spawn never searches the current one) */
    static char me[1024];
    snprintf(me, sizeof me, "%s%s", strpbrk(argv[0], "/\\") ? "" : "./", argv[0]);
    self = me;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pdb_table),
        cmocka_unit_test(test_pdb_table_damaged),
        cmocka_unit_test(test_pdb_table_extents),
        cmocka_unit_test(test_pdb_table_sizes),
        cmocka_unit_test(test_pdb_table_read_with),
        cmocka_unit_test(test_pe_debug),
        cmocka_unit_test(test_labels_without_pdb),
#ifndef _WIN32
        cmocka_unit_test_teardown(test_symbols_store, restore_env),
        cmocka_unit_test(test_symbols_path_check),
        cmocka_unit_test(test_symbols_damaged_sizes),
        cmocka_unit_test(test_symbols_place_two_identities),
        cmocka_unit_test(test_symbols_unusable_told),
#endif
        cmocka_unit_test(test_symbols_timeout),
        cmocka_unit_test(test_spawn_idle_limit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}

/*
 * test_pdb_lines.c - the line tables read from llvm-pdbutil's dump (pdb_table_line): which
 * addresses a block of lines covers, when the dump moves on to another source file or module.
 */
#include <stdio.h>
#include <string.h>
#include "testutil.h"
#include "symbols/pdb_table.h"

static void read_text(pdb_table *t, const char *text)
{
    FILE *f = tmpfile();
    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, strlen(text), f), strlen(text));
    rewind(f);
    assert_int_equal(pdb_table_read(t, f), ETL_OK);
    fclose(f);
}

/* rva's "file:line", or "-" when no block covers it. */
static const char *line_at(const pdb_table *t, uint32_t rva)
{
    static char out[256];
    const char *file;
    uint32_t line;
    if (!pdb_table_line(t, rva, &file, &line)) return "-";
    snprintf(out, sizeof out, "%s:%u", file, line);
    return out;
}

/*
 * llvm-pdbutil 14's dump of lld-link's DLL of two objects, the second (l2.obj, Nd_Plain at 0xF0) built without -g:
 * the Lines come first, then the module without a debug stream, which that llvm-pdbutil prints with the previous
 * module's blocks again under "(unknown file name offset 0)", then the linker's module, no line of its own.
 */
static const char two_objs[] =
    "\n                          Summary                           \n"
    "============================================================\n"
    "  Age: 1\n"
    "  GUID: {9C8295B2-1F91-B6FC-4C4C-44205044422E}\n"
    "\n                           Lines                            \n"
    "============================================================\n"
    "Mod 0000 | `/tmp/l1.obj`: \n"
    "/src/mod.c (MD5: 097FDBB4E3BBF907CEF3ED1FB768B612)\n"
    "  0001:00000000-0000004C, line/addr entries = 4\n"
    "     2 00000000 !    2 00000010 !    2 00000026 !    2 00000043 ! \n"
    "  \n"
    "  0001:00000050-0000009C, line/addr entries = 4\n"
    "     3 00000050 !    3 00000060 !    3 00000076 !    3 00000093 ! \n"
    "  \n"
    "  0001:000000A0-000000EC, line/addr entries = 4\n"
    "     4 000000A0 !    4 000000B0 !    4 000000C6 !    4 000000E3 ! \n"
    "  \n"
    "Mod 0001 | `/tmp/l2.obj`: \n"
    "(unknown file name offset 0)\n"
    "  0001:00000000-0000004C, line/addr entries = 4\n"
    "     2 00000000 !    2 00000010 !    2 00000026 !    2 00000043 ! \n"
    "  \n"
    "  0001:00000050-0000009C, line/addr entries = 4\n"
    "     3 00000050 !    3 00000060 !    3 00000076 !    3 00000093 ! \n"
    "  \n"
    "  0001:000000A0-000000EC, line/addr entries = 4\n"
    "     4 000000A0 !    4 000000B0 !    4 000000C6 !    4 000000E3 ! \n"
    "  \n"
    "Mod 0002 | `* Linker *`: \n"
    "\n                       Public Symbols                       \n"
    "============================================================\n"
    "  Records\n"
    "       0 | S_PUB32 [size = 20] `L_A`\n"
    "           flags = function, addr = 0001:0000\n"
    "      60 | S_PUB32 [size = 24] `Nd_Plain`\n"
    "           flags = function, addr = 0001:0240\n"
    "\n                      Section Headers                       \n"
    "============================================================\n"
    "  SECTION HEADER #1\n"
    "     .text name\n"
    "       13C virtual size\n"
    "      1000 virtual address\n";

/*
 * A block's last line holds to the block's end, not past it when the next line of the dump names another module
 * (Nd_Plain, of no line table, read mod.c:4), and the blocks of an unknown file are no lines (L_A read
 * "(unknown file name offset 0)":2, the repeat's, in place of /src/mod.c).
 */
static void test_lines_end_at_module(void **state)
{
    (void)state;
    pdb_table t;
    read_text(&t, two_objs);
    assert_string_equal(line_at(&t, 0x1004), "/src/mod.c:2");
    assert_string_equal(line_at(&t, 0x1054), "/src/mod.c:3");
    assert_string_equal(line_at(&t, 0x10EB), "/src/mod.c:4");
    assert_string_equal(line_at(&t, 0x10EC), "-");
    assert_string_equal(line_at(&t, 0x10F4), "-"); /* Nd_Plain: no line table */
    assert_string_equal(line_at(&t, 0x1138), "-");
    pdb_table_free(&t);
}

/* One module, two source files (a header's inline function after the file's own): each block ends where it says. */
static const char two_files[] =
    "Summary\n  Age: 1\n  GUID: {9C8295B2-1F91-B6FC-4C4C-44205044422E}\n"
    "Lines\n"
    "Mod 0000 | `/tmp/a.obj`: \n"
    "/src/a.c (MD5: 00)\n"
    "  0001:00000000-00000010, line/addr entries = 2\n"
    "    10 00000000 !   11 00000008 ! \n"
    "/src/b.h (MD5: 00)\n"
    "  0001:00000040-00000050, line/addr entries = 1\n"
    "    70 00000040 ! \n"
    "Section Headers\n  SECTION HEADER #1\n     .text name\n       100 virtual size\n      1000 virtual address\n";

static void test_lines_end_at_file(void **state)
{
    (void)state;
    pdb_table t;
    read_text(&t, two_files);
    assert_string_equal(line_at(&t, 0x100F), "/src/a.c:11");
    assert_string_equal(line_at(&t, 0x1010), "-");
    assert_string_equal(line_at(&t, 0x1030), "-"); /* between the blocks: read a.c:11 */
    assert_string_equal(line_at(&t, 0x104F), "/src/b.h:70");
    assert_string_equal(line_at(&t, 0x1050), "-");
    pdb_table_free(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lines_end_at_module),
        cmocka_unit_test(test_lines_end_at_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/* pe_debug.c - see pe_debug.h. Layouts: the PE/COFF specification (IMAGE_DOS_HEADER.e_lfanew, IMAGE_NT_HEADERS, IMAGE_DEBUG_DIRECTORY, CV_INFO_PDB70). */
#include "symbols/pe_debug.h"

#include <string.h>
#include "base/bytes.h"
#include "base/platform.h"

#ifdef _WIN32
#include <io.h>
#define close_fd _close
#else
#include <unistd.h>
#define close_fd close
#endif

enum { IMAGE_DEBUG_TYPE_CODEVIEW = 2, DEBUG_DIR_ENTRY = 28, MAX_SECTIONS = 96, MAX_DEBUG_ENTRIES = 32 };

static bool rd(int fd, uint64_t off, void *dst, size_t n)
{
    return etl_pread(fd, dst, n, off) == (long long)n;
}

/* The file offset of rva: through the section holding it. */
static bool rva_to_off(const uint8_t *sect, unsigned nsect, uint32_t rva, uint32_t n, uint64_t *off)
{
    for (unsigned i = 0; i < nsect; i++) {
        const uint8_t *s = sect + 40 * i;
        uint32_t va = etl_rd_u32(s + 12), vsize = etl_rd_u32(s + 8), raw_size = etl_rd_u32(s + 16),
                 raw = etl_rd_u32(s + 20);
        uint32_t extent = vsize > raw_size ? raw_size : vsize;
        if (!extent) extent = raw_size;
        if (rva >= va && (uint64_t)rva - va + n <= extent) {
            *off = (uint64_t)raw + (rva - va);
            return true;
        }
    }
    return false;
}

static etl_status read_fd(int fd, pe_debug *out)
{
    uint8_t h[264];
    if (!rd(fd, 0, h, 64) || h[0] != 'M' || h[1] != 'Z') return ETL_E_CORRUPT;
    uint32_t nt = etl_rd_u32(h + 60);
    if (nt > (1u << 24) || !rd(fd, nt, h, 24) || memcmp(h, "PE\0\0", 4)) return ETL_E_CORRUPT;
    unsigned nsect = etl_rd_u16(h + 6), opt_size = etl_rd_u16(h + 20);
    out->time_date_stamp = etl_rd_u32(h + 8);
    if (nsect > MAX_SECTIONS || opt_size < 96 || opt_size > 240) return ETL_E_CORRUPT;
    uint8_t opt[240];
    if (!rd(fd, (uint64_t)nt + 24, opt, opt_size)) return ETL_E_CORRUPT;
    unsigned magic = etl_rd_u16(opt);
    /* the data directories start at 96 (PE32) or 112 (PE32+); the debug one is the 7th (index 6) */
    unsigned dirs = magic == 0x20b ? 112 : magic == 0x10b ? 96 : 0;
    if (!dirs) return ETL_E_CORRUPT;
    out->size_of_image = etl_rd_u32(opt + 56);
    uint32_t ndirs = etl_rd_u32(opt + dirs - 4);
    if (ndirs <= 6 || dirs + 7 * 8 > opt_size) return ETL_OK; /* no debug directory: no RSDS */
    uint32_t dbg_rva = etl_rd_u32(opt + dirs + 48), dbg_size = etl_rd_u32(opt + dirs + 52);
    uint8_t sect[40 * MAX_SECTIONS];
    if (!rd(fd, (uint64_t)nt + 24 + opt_size, sect, 40 * (size_t)nsect)) return ETL_E_CORRUPT;
    unsigned nent = dbg_size / DEBUG_DIR_ENTRY;
    if (nent > MAX_DEBUG_ENTRIES) nent = MAX_DEBUG_ENTRIES;
    for (unsigned i = 0; i < nent; i++) {
        uint64_t off;
        uint8_t e[DEBUG_DIR_ENTRY];
        if (!rva_to_off(sect, nsect, dbg_rva + i * DEBUG_DIR_ENTRY, DEBUG_DIR_ENTRY, &off) || !rd(fd, off, e, sizeof e))
            return ETL_E_CORRUPT;
        if (etl_rd_u32(e + 12) != IMAGE_DEBUG_TYPE_CODEVIEW) continue;
        uint32_t size = etl_rd_u32(e + 16), ptr = etl_rd_u32(e + 24);
        if (size < 25 || !rd(fd, ptr, h, size < sizeof h ? size : sizeof h) || memcmp(h, "RSDS", 4)) continue;
        size_t n = (size < sizeof h ? size : sizeof h) - 24;
        memcpy(out->guid, h + 4, 16);
        out->age = etl_rd_u32(h + 20);
        size_t k = 0;
        while (k < n && k + 1 < sizeof out->pdb && h[24 + k]) {
            out->pdb[k] = (char)h[24 + k];
            k++;
        }
        out->pdb[k] = 0;
        out->has_rsds = k > 0;
        if (out->has_rsds) return ETL_OK;
    }
    return ETL_OK;
}

etl_status pe_debug_read(const char *path, pe_debug *out)
{
    memset(out, 0, sizeof *out);
    int fd = etl_open_read(path);
    if (fd < 0) return ETL_E_IO;
    etl_status st = read_fd(fd, out);
    close_fd(fd);
    return st;
}

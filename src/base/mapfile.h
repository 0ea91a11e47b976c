/* mapfile.h - a whole file as bytes: mmap for regular files, read() otherwise. */
#ifndef ETLKIT_SRC_BASE_MAPFILE_H
#define ETLKIT_SRC_BASE_MAPFILE_H

#include "etlkit/base.h"
#include "base/diag.h"

typedef struct etl_map {
    const uint8_t *data;
    size_t size;
    void *heap;     /* read() copy, freed on close */
    void *mapped;   /* mmap base, unmapped on close */
    size_t mapped_size;
    int fd;         /* the mapped file, for etl_map_pread; -1 when none */
    bool has_id;             /* dev/ino are those of the descriptor read (a file, or stdin) */
    uint64_t dev, ino;
} etl_map;

/* "-" reads standard input. ETL_E_IO with errno text in diag on failure. */
etl_status etl_map_open(const char *path, etl_map *m, etl_diag *diag);
void etl_map_close(etl_map *m);

/*
 * Done with [off, off+len) for now: drops the mapped pages wholly inside it, so
 * that a walk over a large file keeps a bounded resident set (they are read
 * again from the file if touched later). No effect on a read() copy.
 */
void etl_map_release(const etl_map *m, uint64_t off, uint64_t len);

/*
 * Reads [off, off+n) of a mapped file into dst with pread(), not touching the mapping
 * (a touch maps the pages around it too, which a sparse reader such as the buffer
 * index does not want). false when there is no descriptor or the read fell short.
 */
bool etl_map_pread(const etl_map *m, uint64_t off, void *dst, size_t n);

#endif

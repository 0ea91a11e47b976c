/*
 * mapfile.c - maps a file read-only. Regular files are mmap'ed (zero copy, the
 * page cache does the I/O); pipes and other non-regular files are read whole
 * with read(), since buffers must be addressable at random for the ordered walk.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/mapfile.h"
#include "base/platform.h"

static etl_status read_all(int fd, etl_map *m, const char *path, etl_diag *diag)
{
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    if (!buf) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory", path);
        return ETL_E_NOMEM;
    }
    for (;;) {
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "%s: out of memory after %zu bytes", path, n);
                free(buf);
                return ETL_E_NOMEM;
            }
            buf = nb;
            cap *= 2;
        }
        /* read()'s count is an unsigned int on Windows: 1 GiB at most a call. */
        size_t want = cap - n < (1u << 30) ? cap - n : (1u << 30);
        long long k = read(fd, buf + n, want);
        if (k < 0) {
            if (errno == EINTR) continue;
            etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: read: %s", path, strerror(errno));
            free(buf);
            return ETL_E_IO;
        }
        if (k == 0) break;
        size_t before = n;
        n += (size_t)k;
        /* An endless stream (/dev/zero) must not eat all memory: once the first
         * buffer header is in, stop unless its BufferSize is one a file can have. */
        if (before < 0x48 && n >= 0x48) {
            uint32_t bs = (uint32_t)buf[0] | (uint32_t)buf[1] << 8 | (uint32_t)buf[2] << 16 | (uint32_t)buf[3] << 24;
            if (bs < 0x68 || bs > (64u << 20)) break;
        }
    }
    m->heap = buf;
    m->data = buf;
    m->size = n;
    return ETL_OK;
}

etl_status etl_map_open(const char *path, etl_map *m, etl_diag *diag)
{
    memset(m, 0, sizeof *m);
    m->fd = -1;
    int fd = strcmp(path, "-") == 0 ? STDIN_FILENO : etl_open_read(path);
    if (fd < 0) {
        /* Windows opens no directory (EISDIR): the words of the fstat test below, as on POSIX. */
        if (errno == EISDIR) etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: is a directory", path);
        else etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
        return ETL_E_IO;
    }
    etl_file_info st;
    etl_status rc = ETL_OK;
    bool have = etl_fstat(fd, &st) == 0;
    if (have) {
        /* Who we read, whatever the name ("-" included): a writer must not truncate it. */
        m->has_id = st.has_id;
        m->dev = st.dev;
        m->ino = st.ino;
    }
    if (!have) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: %s", path, strerror(errno));
        rc = ETL_E_IO;
    } else if (st.is_dir) {
        etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s: is a directory", path);
        rc = ETL_E_IO;
    } else if (st.is_reg && st.size > 0) {
        void *p = etl_mmap_read(fd, (size_t)st.size);
        if (!p) {
            rc = read_all(fd, m, path, diag);
        } else {
            m->mapped = p;
            m->mapped_size = (size_t)st.size;
            m->data = p;
            m->size = (size_t)st.size;
            if (fd != STDIN_FILENO) {
                m->fd = fd; /* kept for etl_map_pread */
                fd = -1;
            }
        }
    } else {
        rc = read_all(fd, m, path, diag);
    }
    if (fd >= 0 && fd != STDIN_FILENO) close(fd);
    return rc;
}

void etl_map_release(const etl_map *m, uint64_t off, uint64_t len)
{
    if (!m->mapped || off >= m->mapped_size) return;
    uint64_t page = etl_page_size();
    uint64_t end = off + len < m->mapped_size ? off + len : m->mapped_size;
    uint64_t a = (off + page - 1) / page * page, b = end / page * page;
    if (b > a) etl_mem_release((uint8_t *)m->mapped + a, (size_t)(b - a));
}

bool etl_map_pread(const etl_map *m, uint64_t off, void *dst, size_t n)
{
    if (m->fd < 0 || off > m->size || n > m->size - off) return false;
    size_t got = 0;
    while (got < n) {
        long long k = etl_pread(m->fd, (uint8_t *)dst + got, n - got, off + got);
        if (k <= 0) return false;
        got += (size_t)k;
    }
    return true;
}

void etl_map_close(etl_map *m)
{
    if (m->fd >= 0) close(m->fd);
    if (m->mapped) etl_munmap(m->mapped, m->mapped_size);
    free(m->heap);
    memset(m, 0, sizeof *m);
}

/*
 * spool.c - append-only record logs with a memory budget and a spill file (spool.h).
 *
 * A record is stored as a u32 length and its bytes, padded to 8, in 64 KiB chunks (a
 * larger one for a larger record). When the chunks in memory pass the budget, the
 * appending stream writes its finished chunks to the spill file (pwrite at offsets
 * handed out atomically, so streams on several threads share it) and frees them.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "base/spool.h"
#include "base/diag.h"
#include "base/platform.h"

#define CHUNK (64u << 10)

struct etl_spool {
    size_t budget;
    _Atomic size_t in_memory;
    _Atomic uint64_t file_end;
    etl_mutex *mu;        /* creating the file, the first failure */
    int fd;
    bool failed;          /* no file to be had: do not try again */
    _Atomic int err;      /* the first failure: an errno, ENOMEM included; 0 = none */
};

/* Remembers the first failure (streams on several threads may fail at once). */
static void fail(etl_spool *sp, int err)
{
    int none = 0;
    atomic_compare_exchange_strong(&sp->err, &none, err ? err : EIO);
}

etl_spool *etl_spool_open(size_t budget)
{
    etl_spool *sp = calloc(1, sizeof *sp);
    if (!sp) return NULL;
    sp->budget = budget;
    sp->fd = -1;
    if (!(sp->mu = etl_mutex_new())) {
        free(sp);
        return NULL;
    }
    return sp;
}

void etl_spool_close(etl_spool *sp)
{
    if (!sp) return;
    if (sp->fd >= 0) close(sp->fd);
    etl_mutex_free(sp->mu);
    free(sp);
}

void etl_spool_stream_init(etl_spool_stream *s, etl_spool *sp)
{
    memset(s, 0, sizeof *s);
    s->sp = sp;
}

void etl_spool_stream_free(etl_spool_stream *s)
{
    for (size_t i = 0; i < s->n; i++) {
        if (!s->chunks[i].mem) continue;
        atomic_fetch_sub(&s->sp->in_memory, s->chunks[i].size);
        free(s->chunks[i].mem);
    }
    free(s->chunks);
    free(s->rbuf);
    memset(s, 0, sizeof *s);
}

static int spill_fd(etl_spool *sp)
{
    etl_mutex_lock(sp->mu);
    if (sp->fd < 0 && !sp->failed) {
        sp->fd = etl_temp_open(); /* unlinked: gone with the process, whatever happens */
        if (sp->fd < 0) {
            sp->failed = true;
            fail(sp, errno);
        }
    }
    int fd = sp->fd;
    etl_mutex_unlock(sp->mu);
    return fd;
}

/* Writes the stream's finished chunks (all but the last) to the spill file. */
static bool spill(etl_spool_stream *s)
{
    int fd = spill_fd(s->sp);
    if (fd < 0) return false;
    for (size_t i = 0; i + 1 < s->n; i++) {
        etl_spool_chunk *c = &s->chunks[i];
        if (!c->mem) continue;
        uint64_t off = atomic_fetch_add(&s->sp->file_end, c->len);
        for (uint32_t done = 0; done < c->len;) {
            long long k = etl_pwrite(fd, c->mem + done, c->len - done, off + done);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) {
                fail(s->sp, k < 0 ? errno : ENOSPC); /* a write of nothing: the disk is full */
                return false;
            }
            done += (uint32_t)k;
        }
        c->file_off = off;
        free(c->mem);
        c->mem = NULL;
        atomic_fetch_sub(&s->sp->in_memory, c->size);
    }
    return true;
}

bool etl_spool_append(etl_spool_stream *s, const void *p, size_t n)
{
    size_t need = (4 + n + 7) & ~(size_t)7;
    if (atomic_load_explicit(&s->sp->err, memory_order_relaxed)) return false; /* a record lost: no more */
    if (need > UINT32_MAX) {
        fail(s->sp, EFBIG);
        return false;
    }
    etl_spool_chunk *last = s->n ? &s->chunks[s->n - 1] : NULL;
    if (!last || last->len + need > last->size) {
        if (s->n == s->cap) {
            size_t cap = s->cap ? s->cap * 2 : 16;
            etl_spool_chunk *c = realloc(s->chunks, cap * sizeof *c);
            if (!c) {
                fail(s->sp, ENOMEM);
                return false;
            }
            s->chunks = c;
            s->cap = cap;
        }
        /* Chunks are CHUNK bytes but for a record that needs more: it gets its own. */
        size_t size = need > CHUNK ? need : CHUNK;
        uint8_t *m = malloc(size);
        if (!m) {
            fail(s->sp, ENOMEM);
            return false;
        }
        s->chunks[s->n++] = (etl_spool_chunk){m, 0, 0, (uint32_t)size};
        atomic_fetch_add(&s->sp->in_memory, size);
        last = &s->chunks[s->n - 1];
        if (atomic_load(&s->sp->in_memory) > s->sp->budget && !spill(s)) return false;
    }
    uint32_t len = (uint32_t)n;
    memcpy(last->mem + last->len, &len, 4);
    memcpy(last->mem + last->len + 4, p, n);
    last->len += (uint32_t)need;
    return true;
}

const uint8_t *etl_spool_next(etl_spool_stream *s, size_t *n)
{
    while (s->rchunk < s->n) {
        etl_spool_chunk *c = &s->chunks[s->rchunk];
        if (s->rpos < c->len) {
            const uint8_t *base = c->mem;
            if (!base) { /* spilled: read it back whole on first use */
                if (s->rpos == 0) {
                    if (s->rbuf_cap < c->len) {
                        uint8_t *b = realloc(s->rbuf, c->len);
                        if (!b) {
                            fail(s->sp, ENOMEM);
                            return NULL;
                        }
                        s->rbuf = b;
                        s->rbuf_cap = c->len;
                    }
                    for (uint32_t done = 0; done < c->len;) {
                        long long k = etl_pread(s->sp->fd, s->rbuf + done, c->len - done, c->file_off + done);
                        if (k < 0 && errno == EINTR) continue;
                        if (k <= 0) { /* short: the file changed under us */
                            fail(s->sp, k < 0 ? errno : EIO);
                            return NULL;
                        }
                        done += (uint32_t)k;
                    }
                }
                base = s->rbuf;
            }
            uint32_t len;
            memcpy(&len, base + s->rpos, 4);
            const uint8_t *p = base + s->rpos + 4;
            s->rpos += (4 + len + 7) & ~(size_t)7;
            *n = len;
            return p;
        }
        s->rchunk++;
        s->rpos = 0;
    }
    return NULL;
}

void etl_spool_rewind(etl_spool_stream *s)
{
    s->rchunk = 0;
    s->rpos = 0;
}

int etl_spool_error(etl_spool *sp) { return atomic_load(&sp->err); }

etl_status etl_spool_diag(etl_spool *sp, etl_diag *d)
{
    int e = etl_spool_error(sp);
    if (!e) return ETL_OK;
    if (e == ENOMEM) {
        etl_diag_set(d, ETL_E_NOMEM, 0, "out of memory");
        return ETL_E_NOMEM;
    }
    etl_diag_set(d, ETL_E_IO, 0, "cannot use a temporary file in %s (set TMPDIR to choose another directory): %s",
                 etl_temp_dir(), strerror(e));
    return ETL_E_IO;
}

/*
 * pipe.c - hands the simulator's events to the writer, on a second thread,
 * so that compression and file writes overlap the simulation.
 *
 * Events are copied into two 1 MiB chunks: the simulator fills one while the
 * writer thread writes the other. A size target needs the writer's byte
 * count, which the simulator must read at points that depend on the events
 * alone, never on timing or on how events are queued: every `stride` events
 * (a checkpoint) a marker goes into the queue, the writer records its byte
 * count when it reaches the marker, and the simulator, at checkpoint k, waits
 * for marker k-1 and takes that count. So a size-limited run stops after
 * exactly the same event whether the writer runs on its own thread or inline
 * (the fallback, which writes each chunk when it is handed over): same
 * options, same bytes.
 */
#include <stdlib.h>
#include <string.h>
#include "synth_internal.h"
#include "base/platform.h"

#ifndef SYNTH_THREADS /* -DSYNTH_THREADS=0 forces the inline writer (same bytes) */
#define SYNTH_THREADS 1
#endif

#define CHUNK_SIZE (1u << 20)
#define MARKER UINT32_MAX /* rec.len of a checkpoint marker */

/* One queued event: the writer's fields, then its PMC values and payload. */
typedef struct rec {
    uint64_t ts;
    uint32_t tid, pid, kernel_time, user_time;
    uint32_t len;
    uint16_t cpu, hook;
    uint8_t header, version, pmc_count, pad;
} rec;

typedef struct chunk {
    uint8_t *buf;
    size_t len;
} chunk;

struct synth_pipe {
    etl_writer *w;
    chunk c[2];
    unsigned fill;           /* the chunk being filled */
    uint64_t stride;         /* events between checkpoints */
    uint64_t since_mark;     /* events since the last checkpoint */
    uint64_t marks;          /* checkpoints queued */
    uint64_t snap;           /* the writer's bytes at checkpoint marks - 1 (0 before) */
    etl_status perr;         /* the simulator side's own error (an event too large) */
    /* Written by the writer side: */
    etl_status err;          /* the writer's first error */
    uint64_t marks_done;     /* markers the writer has passed */
    uint64_t mark_bytes[2];  /* its byte count at marker k, in [k % 2] */
    etl_os_thread *thread;      /* NULL: the writer runs inline */
    etl_mutex *mu;
    etl_cond *work, *done;
    uint64_t committed, consumed;
    bool closing;
};

/* Writes one chunk; markers record the byte count. Returns the first error. */
static etl_status write_chunk(synth_pipe *p, const chunk *c, uint64_t *marks_done,
                              uint64_t mark_bytes[2])
{
    size_t off = 0;
    while (off < c->len) {
        rec r;
        memcpy(&r, c->buf + off, sizeof r);
        off += sizeof r;
        if (r.len == MARKER) {
            mark_bytes[*marks_done % 2] = etl_writer_bytes(p->w);
            ++*marks_done;
            continue;
        }
        uint64_t pmc[8];
        size_t np = r.pmc_count;
        memcpy(pmc, c->buf + off, np * sizeof pmc[0]);
        off += np * sizeof pmc[0];
        if (r.header == SYNTH_RAW_RECORD) { /* a whole record with its own header (a FULL_HEADER one) */
            etl_status st = etl_writer_write_record(p->w, r.cpu, r.ts, c->buf + off, r.len);
            off += r.len;
            if (st != ETL_OK) return st;
            continue;
        }
        etl_write_event ev;
        memset(&ev, 0, sizeof ev);
        ev.cpu = r.cpu;
        ev.header = r.header;
        ev.version = r.version;
        ev.hook = r.hook;
        ev.tid = r.tid;
        ev.pid = r.pid;
        ev.kernel_time = r.kernel_time;
        ev.user_time = r.user_time;
        ev.ts = r.ts;
        ev.pmc_count = r.pmc_count;
        ev.pmc = np ? pmc : NULL;
        ev.payload = c->buf + off;
        ev.len = r.len;
        off += r.len;
        etl_status st = etl_writer_write(p->w, &ev);
        if (st != ETL_OK) return st;
    }
    return ETL_OK;
}

static void consumer(void *arg)
{
    synth_pipe *p = arg;
    etl_mutex_lock(p->mu);
    for (;;) {
        while (p->consumed == p->committed && !p->closing) etl_cond_wait(p->work, p->mu);
        if (p->consumed == p->committed) break;
        chunk *c = &p->c[p->consumed % 2];
        bool skip = p->err != ETL_OK;
        uint64_t done = p->marks_done, bytes[2] = {p->mark_bytes[0], p->mark_bytes[1]};
        etl_mutex_unlock(p->mu);
        etl_status st = skip ? ETL_OK : write_chunk(p, c, &done, bytes);
        etl_mutex_lock(p->mu);
        if (st != ETL_OK && p->err == ETL_OK) p->err = st;
        if (st != ETL_OK) done = UINT64_MAX; /* nobody waits for markers after an error */
        p->marks_done = done;
        p->mark_bytes[0] = bytes[0];
        p->mark_bytes[1] = bytes[1];
        p->consumed++;
        etl_cond_broadcast(p->done);
    }
    etl_mutex_unlock(p->mu);
}

etl_status synth_pipe_open(synth_pipe **out, etl_writer *w, uint64_t target_bytes)
{
    synth_pipe *p = calloc(1, sizeof *p);
    if (!p) return ETL_E_NOMEM;
    p->w = w;
    /* About 2000 checkpoints over a size target (events are some 30-100 bytes). */
    p->stride = target_bytes / 2048;
    if (p->stride < 64) p->stride = 64;
    if (p->stride > 16384) p->stride = 16384;
    p->c[0].buf = malloc(CHUNK_SIZE);
    p->c[1].buf = malloc(CHUNK_SIZE);
    if (!p->c[0].buf || !p->c[1].buf) {
        free(p->c[0].buf);
        free(p->c[1].buf);
        free(p);
        return ETL_E_NOMEM;
    }
    /* A lock or a thread not to be had: the writer runs inline (the same bytes). */
    if (SYNTH_THREADS && (p->mu = etl_mutex_new()) && (p->work = etl_cond_new()) && (p->done = etl_cond_new()))
        p->thread = etl_thread_start(consumer, p);
    *out = p;
    return ETL_OK;
}

/* Hands the chunk being filled to the writer and switches to the other one. */
static void hand_over(synth_pipe *p)
{
    if (p->thread) {
        etl_mutex_lock(p->mu);
        while (p->consumed != p->committed) etl_cond_wait(p->done, p->mu);
        p->committed++;
        etl_cond_broadcast(p->work);
        etl_mutex_unlock(p->mu);
        p->fill ^= 1;
        p->c[p->fill].len = 0;
        return;
    }
    if (p->err == ETL_OK) {
        etl_status st = write_chunk(p, &p->c[p->fill], &p->marks_done, p->mark_bytes);
        if (st != ETL_OK) p->err = st;
    }
    p->c[p->fill].len = 0;
}

static void append(synth_pipe *p, const rec *r, const uint64_t *pmc, const void *payload)
{
    size_t np = r->len == MARKER ? 0 : r->pmc_count;
    size_t len = r->len == MARKER ? 0 : r->len;
    size_t need = sizeof *r + np * sizeof(uint64_t) + len;
    if (p->c[p->fill].len + need > CHUNK_SIZE) hand_over(p);
    chunk *c = &p->c[p->fill];
    memcpy(c->buf + c->len, r, sizeof *r);
    c->len += sizeof *r;
    if (np && pmc) memcpy(c->buf + c->len, pmc, np * sizeof(uint64_t));
    c->len += np * sizeof(uint64_t);
    if (len && payload) memcpy(c->buf + c->len, payload, len); /* markers pass NULLs */
    c->len += len;
}

/* Checkpoint k = marks: queue marker k, hand the chunk over, take the count at marker k-1. */
static void checkpoint(synth_pipe *p)
{
    rec m;
    memset(&m, 0, sizeof m);
    m.len = MARKER;
    append(p, &m, NULL, NULL);
    uint64_t k = p->marks++;
    hand_over(p);
    if (!k) return;
    if (p->thread) {
        etl_mutex_lock(p->mu);
        while (p->marks_done < k && p->err == ETL_OK) etl_cond_wait(p->done, p->mu);
        if (p->err == ETL_OK) p->snap = p->mark_bytes[(k - 1) % 2];
        etl_mutex_unlock(p->mu);
        return;
    }
    if (p->err == ETL_OK) p->snap = p->mark_bytes[(k - 1) % 2];
}

void synth_pipe_write(synth_pipe *p, const etl_write_event *ev)
{
    size_t np = ev->pmc ? ev->pmc_count : 0;
    if (np > 8) np = 8;
    if (sizeof(rec) + np * sizeof(uint64_t) + ev->len + sizeof(rec) > CHUNK_SIZE) {
        if (p->perr == ETL_OK) p->perr = ETL_E_RANGE;
        return;
    }
    rec r = {ev->ts, ev->tid, ev->pid, ev->kernel_time, ev->user_time, (uint32_t)ev->len,
             ev->cpu, ev->hook, ev->header, ev->version, (uint8_t)np, 0};
    append(p, &r, ev->pmc, ev->payload);
    if (++p->since_mark == p->stride) {
        p->since_mark = 0;
        checkpoint(p);
    }
}

uint64_t synth_pipe_bytes(const synth_pipe *p)
{
    return p->snap;
}

etl_status synth_pipe_error(synth_pipe *p)
{
    if (p->perr != ETL_OK) return p->perr;
    if (p->thread) {
        etl_mutex_lock(p->mu);
        etl_status st = p->err;
        etl_mutex_unlock(p->mu);
        return st;
    }
    return p->err;
}

etl_status synth_pipe_close(synth_pipe *p)
{
    if (!p) return ETL_OK;
    if (p->c[p->fill].len) hand_over(p);
    if (p->thread) {
        etl_mutex_lock(p->mu);
        p->closing = true;
        etl_cond_broadcast(p->work);
        etl_mutex_unlock(p->mu);
        etl_thread_join(p->thread);
    }
    etl_mutex_free(p->mu);
    etl_cond_free(p->work);
    etl_cond_free(p->done);
    etl_status st = p->perr != ETL_OK ? p->perr : p->err;
    free(p->c[0].buf);
    free(p->c[1].buf);
    free(p);
    return st;
}

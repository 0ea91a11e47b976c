/* pipe.c - see pipe.h. */
#include "base/pipe.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include "base/platform.h"

struct etl_pipe {
    etl_mutex *mu;
    etl_cond *cv;
    uint8_t **block;
    size_t *used;        /* by block: its messages' bytes */
    size_t size;
    unsigned n;
    /*
     * Blocks [head, head + ready) are the consumer's (the first maybe being read); fill,
     * which is head + ready, is the producer's. Only the producer moves fill (and then
     * ready up, under the lock), so it reads fill and its block's used without the lock.
     */
    unsigned head, ready, fill;
    bool holding;        /* the consumer holds block head */
    bool closed, stopped;
    atomic_bool halt;    /* stopped, for the producer's every put (not only at a block's end) */
};

etl_pipe *etl_pipe_new(size_t block, unsigned nblocks)
{
    if (nblocks < 2) nblocks = 2;
    etl_pipe *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->size = block;
    p->n = nblocks;
    atomic_init(&p->halt, false);
    p->mu = etl_mutex_new();
    p->cv = etl_cond_new();
    p->block = calloc(nblocks, sizeof *p->block);
    p->used = calloc(nblocks, sizeof *p->used);
    bool ok = p->mu && p->cv && p->block && p->used;
    for (unsigned i = 0; ok && i < nblocks; i++) ok = (p->block[i] = malloc(block)) != NULL;
    if (!ok) {
        etl_pipe_free(p);
        return NULL;
    }
    return p;
}

void etl_pipe_free(etl_pipe *p)
{
    if (!p) return;
    for (unsigned i = 0; p->block && i < p->n; i++) free(p->block[i]);
    free(p->block);
    free(p->used);
    etl_mutex_free(p->mu);
    etl_cond_free(p->cv);
    free(p);
}

void *etl_pipe_put(etl_pipe *p, size_t n)
{
    if (n > p->size || atomic_load_explicit(&p->halt, memory_order_relaxed)) return NULL;
    if (p->used[p->fill] + n > p->size) {
        /* The block goes over; the next is free once the consumer holds fewer than all. */
        etl_mutex_lock(p->mu);
        p->ready++;
        etl_cond_broadcast(p->cv);
        while (p->ready == p->n && !p->stopped) etl_cond_wait(p->cv, p->mu);
        bool stopped = p->stopped;
        etl_mutex_unlock(p->mu);
        if (stopped) return NULL;
        p->fill = (p->fill + 1) % p->n;
        p->used[p->fill] = 0;
    }
    void *at = p->block[p->fill] + p->used[p->fill];
    p->used[p->fill] += n;
    return at;
}

void etl_pipe_close(etl_pipe *p)
{
    etl_mutex_lock(p->mu);
    if (p->used[p->fill]) p->ready++;
    p->closed = true;
    etl_cond_broadcast(p->cv);
    etl_mutex_unlock(p->mu);
}

const void *etl_pipe_take(etl_pipe *p, size_t *n)
{
    etl_mutex_lock(p->mu);
    if (p->holding) {
        p->holding = false;
        p->head = (p->head + 1) % p->n;
        p->ready--;
        etl_cond_broadcast(p->cv);
    }
    while (!p->ready && !p->closed) etl_cond_wait(p->cv, p->mu);
    const void *b = NULL;
    *n = 0;
    if (p->ready) {
        p->holding = true;
        b = p->block[p->head];
        *n = p->used[p->head];
    }
    etl_mutex_unlock(p->mu);
    return b;
}

typedef struct stage {
    etl_pipe *p;
    etl_status (*read)(void *ctx, etl_pipe *p);
    void *ctx;
    etl_status st;
} stage;

static void stage_main(void *arg)
{
    stage *s = arg;
    s->st = s->read(s->ctx, s->p);
    etl_pipe_close(s->p);
}

etl_status etl_pipe_run(unsigned threads, size_t block, unsigned nblocks, etl_status (*read)(void *ctx, etl_pipe *p),
                        etl_status (*take)(void *ctx, const void *block, size_t n), void *ctx)
{
    stage s = {threads > 1 ? etl_pipe_new(block, nblocks) : NULL, read, ctx, ETL_OK};
    etl_os_thread *t = s.p ? etl_thread_start(stage_main, &s) : NULL;
    if (!t) { /* no thread to be had: the caller's alone */
        etl_pipe_free(s.p);
        return read(ctx, NULL);
    }
    etl_status st = ETL_OK;
    const void *b;
    size_t n;
    while (st == ETL_OK && (b = etl_pipe_take(s.p, &n))) st = take(ctx, b, n);
    if (st != ETL_OK) etl_pipe_stop(s.p);
    etl_thread_join(t);
    etl_pipe_free(s.p);
    return st != ETL_OK ? st : s.st;
}

void etl_pipe_stop(etl_pipe *p)
{
    atomic_store_explicit(&p->halt, true, memory_order_relaxed);
    etl_mutex_lock(p->mu);
    p->stopped = true;
    etl_cond_broadcast(p->cv);
    etl_mutex_unlock(p->mu);
}

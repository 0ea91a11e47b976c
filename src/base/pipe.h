/*
 * pipe.h - messages from one thread to another, in order: the stages of one pass
 * (a reader thread handing records over to the thread that counts them).
 *
 * The producer writes its messages into a block and hands the block over whole
 * when the next message does not fit, so the lock is taken once a block, not once
 * a message; it waits while every block is in the consumer's hands. Memory: the
 * blocks, fixed at creation. A message is at most a block's size.
 */
#ifndef ETLKIT_SRC_BASE_PIPE_H
#define ETLKIT_SRC_BASE_PIPE_H

#include <stdbool.h>
#include <stddef.h>
#include "etlkit/base.h"

typedef struct etl_pipe etl_pipe;

/* nblocks >= 2 blocks of block bytes. NULL: out of memory. */
etl_pipe *etl_pipe_new(size_t block, unsigned nblocks);
void etl_pipe_free(etl_pipe *p);

/*
 * Producer: room for n bytes (n <= block, 8-byte aligned when every n is a multiple
 * of 8) for the next message, valid until the next put or close; NULL when the
 * consumer stopped (the producer should end).
 */
void *etl_pipe_put(etl_pipe *p, size_t n);
/* Producer: no more messages; the last block goes over. */
void etl_pipe_close(etl_pipe *p);

/*
 * Consumer: the next block (*n bytes of messages, as they were put), the previous
 * one given back; NULL after the producer closed and every block was taken.
 */
const void *etl_pipe_take(etl_pipe *p, size_t *n);
/* Consumer: takes no more; the producer's puts fail from now on. */
void etl_pipe_stop(etl_pipe *p);

/*
 * A pass in two stages. With threads > 1 (and a pipe and a thread to be had),
 * read(ctx, p) runs on a second thread and puts its messages into p, and take(ctx,
 * block, n) gets each block of them on this one, in order; a take that fails stops
 * the reader (its puts then fail). Otherwise read(ctx, NULL) runs here alone and
 * does the consumer's work itself. The status: take's failure, else read's.
 */
etl_status etl_pipe_run(unsigned threads, size_t block, unsigned nblocks, etl_status (*read)(void *ctx, etl_pipe *p),
                        etl_status (*take)(void *ctx, const void *block, size_t n), void *ctx);

#endif

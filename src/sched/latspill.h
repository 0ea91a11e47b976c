/*
 * latspill.h - Ready values past a memory budget: kept in a spool (src/base/spool.h)
 * as (key, value) pairs, key = thread instance << 1 | woken, and read back in passes.
 *
 * Exact nearest-rank percentiles of any set of them in two passes and bounded memory:
 * a histogram of the values' high 16 bits finds each rank's bucket, one of the low 16
 * bits of that bucket's values its value. Values of 2^32 - 1 ns and more (over 4 s of
 * Ready) are rare and stay in memory with their threads; they rank above all the others.
 */
#ifndef ETLKIT_SRC_SCHED_LATSPILL_H
#define ETLKIT_SRC_SCHED_LATSPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/spool.h"
#include "etlkit/usage.h"

typedef struct lat_spill {
    etl_spool *sp;
    etl_spool_stream s;
    uint32_t *blk;       /* pairs gathered for the next block */
    size_t nblk;         /* u32 words in blk */
    uint64_t n;          /* values spilled */
    bool failed;
} lat_spill;

/* budget: the memory the caller allows; the spool keeps at most that (and 1 MiB) of pairs in memory. */
bool lat_spill_init(lat_spill *x, size_t budget);
/* One value under 2^32 - 1 for key. false once something failed (out of memory, disk full). */
bool lat_spill_push(lat_spill *x, uint32_t key, uint32_t v);
/* Writes the last block: call once every value is in, before the passes. */
bool lat_spill_end(lat_spill *x);
void lat_spill_free(lat_spill *x);

/* Passes: rewind, then blocks of *npairs (key, value) pairs until NULL. */
void lat_spill_rewind(lat_spill *x);
const uint32_t *lat_spill_block(lat_spill *x, size_t *npairs);

/* A set of values to summarise: the spilled ones whose key it takes, and its values over 32 bits. */
enum { LAT_ALL, LAT_WOKEN, LAT_THREAD, LAT_THREAD_WOKEN, LAT_PROCESS };
typedef struct lat_target {
    int kind;              /* LAT_*: every value, the woken ones, a thread's (all or woken), a process's */
    uint32_t id;           /* the thread instance, or the process slot (proc_of) */
    const uint64_t *big;   /* its values >= 2^32 - 1, sorted ascending */
    size_t nbig;
    etl_latency *out;      /* count, sum, p50/p90/p99/p999 (nearest rank) and max */
} lat_target;

/*
 * Fills every target's etl_latency from the spilled values (two passes per batch of
 * targets); proc_of[thread instance] is the process slot LAT_PROCESS targets name.
 * nthreads bounds the instances keys name. false when out of memory.
 */
bool lat_spill_latency(lat_spill *x, lat_target *t, size_t n, const uint32_t *proc_of, size_t nthreads);

#endif

/*
 * stack_keys.h - the cached-stack key table (Windows 8+ StackWalk forms).
 *
 * A reference (0x1825 kernel part, 0x1826 user part) names a stack by a key
 * while the kernel caches it; the key's frames come when the cache lets it go
 * (KeyDelete 0x1823) or at the trace's end (KeyRundown 0x1824), so after the
 * references, and a deleted key may be reused for another stack (the keys are
 * the cache entries' addresses). A reference therefore stands for the first
 * definition of its key that follows it. The table holds every definition (key,
 * its position in the record stream, the interned stack) from a first pass,
 * grouped by key in stream order when sealed, and answers the second pass's
 * references by binary search in their key's group: memory grows with the
 * definitions (about the distinct stacks), not with the references.
 *
 * A position is where a record stands in the time-ordered stream: its merge
 * time (its timestamp, or where damage made its CPU's time go back, the largest
 * before it on that CPU), its CPU (ties go to the lower CPU), and its place
 * among its CPU's key records. Every way of reading a trace computes the same
 * position for a record: time order (etl_iter_merge_ts) and a walk of each
 * CPU's buffers (no merge) alike.
 */
#ifndef ETLKIT_STACKS_STACK_KEYS_H
#define ETLKIT_STACKS_STACK_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/base.h"

typedef struct etl_stack_pos {
    uint64_t ts;        /* merge time */
    uint64_t tie;       /* CPU << 40 | place among the CPU's key records */
} etl_stack_pos;

static inline bool etl_stack_pos_less(etl_stack_pos a, etl_stack_pos b)
{
    return a.ts != b.ts ? a.ts < b.ts : a.tie < b.tie;
}

/* Each CPU's key records so far, to place the next. */
typedef struct etl_stack_places {
    uint64_t *n;
    size_t cap;
} etl_stack_places;

/* The position of a CPU's next key record at merge time ts. ETL_E_NOMEM. */
etl_status etl_stack_places_next(etl_stack_places *p, unsigned cpu, uint64_t ts, etl_stack_pos *out);
void etl_stack_places_free(etl_stack_places *p);

typedef struct etl_stack_key_entry {
    uint64_t key;
    etl_stack_pos pos;  /* the definition's position */
    uint32_t stack;     /* seqtab id */
} etl_stack_key_entry;

typedef struct etl_stack_keys {
    etl_stack_key_entry *v;  /* in stream order; grouped by key once sealed */
    size_t n, cap;
    etl_idmap group;         /* after seal: key -> group */
    uint32_t *start;         /* by group: its first entry; start[ngroups] = n */
    uint32_t ngroups;
} etl_stack_keys;

void etl_stack_keys_init(etl_stack_keys *k);
void etl_stack_keys_free(etl_stack_keys *k);
/* In any order (stream order is the cheapest). ETL_E_NOMEM, ETL_E_RANGE past 2^32 - 1 definitions. */
etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, uint32_t stack);
/* ETL_E_NOMEM (the table then resolves nothing). */
etl_status etl_stack_keys_seal(etl_stack_keys *k);
/* The stack a reference at pos to key stands for, or ETL_SEQ_NONE when no definition follows it. */
uint32_t etl_stack_keys_resolve(const etl_stack_keys *k, uint64_t key, etl_stack_pos pos);

#endif

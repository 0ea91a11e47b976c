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
 */
#ifndef ETLKIT_STACKS_STACK_KEYS_H
#define ETLKIT_STACKS_STACK_KEYS_H

#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/base.h"

typedef struct etl_stack_key_entry {
    uint64_t key;
    uint64_t pos;       /* the definition's position in the record stream (time order) */
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
/* Usually in stream order (pos increasing: the cheapest). ETL_E_NOMEM, ETL_E_RANGE past 2^32 - 1 definitions. */
etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, uint64_t pos, uint32_t stack);
/* ETL_E_NOMEM (the table then resolves nothing). */
etl_status etl_stack_keys_seal(etl_stack_keys *k);
/* The stack a reference at pos to key stands for, or ETL_SEQ_NONE when no definition follows it. */
uint32_t etl_stack_keys_resolve(const etl_stack_keys *k, uint64_t key, uint64_t pos);

#endif

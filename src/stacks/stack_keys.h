/*
 * stack_keys.h - the cached-stack key table (Windows 8+ StackWalk forms).
 *
 * A reference (0x1825 kernel part, 0x1826 user part) names a stack by a key
 * while the kernel caches it; the key's frames come when the cache lets it go
 * (KeyDelete 0x1823) or at the trace's end (KeyRundown 0x1824), so after the
 * references, and a deleted key may be reused for another stack (the keys are
 * the cache entries' addresses). A reference therefore stands for the first
 * definition of its key that follows it. The table holds every definition (key,
 * its position in the record stream, where its frames lie) from a first pass,
 * grouped by key in stream order when sealed, and answers the second pass's
 * references by binary search in their key's group: memory grows with the
 * definitions (about the distinct stacks), not with the references.
 *
 * Kernel and user stacks share the cache, so a key is defined for either part
 * in turn (273 of the 1,077 keys of perfview-x64-compressed.etl); a reference
 * always stands for a definition of its own part (all 9,107 there). When the
 * next definition holds the other part's frames, the reference's own was lost
 * (a lost buffer, events dropped): the reference resolves to nothing. The frames
 * stay in the trace's bytes (a mapped file outlives both passes); only those of
 * a decompressed buffer, which does not, are copied.
 *
 * A position orders records as the time-ordered stream does: its merge time
 * (its timestamp, or where damage made its CPU's time go back, the largest
 * before it on that CPU), its CPU (ties go to the lower CPU), then its place in
 * the file (a CPU's records of one time lie in its buffer in order). Every way
 * of reading a trace computes the same position for a record, time order
 * (etl_iter_merge_ts) and a walk of each CPU's buffers alike, and a reader that
 * passes over some records still places the others.
 */
#ifndef ETLKIT_STACKS_STACK_KEYS_H
#define ETLKIT_STACKS_STACK_KEYS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/container.h"

typedef struct etl_stack_pos {
    uint64_t ts;        /* merge time */
    uint32_t cpu;
    uint32_t buffer;    /* buffer_index */
    uint32_t offset;    /* in the buffer */
} etl_stack_pos;

static inline bool etl_stack_pos_less(etl_stack_pos a, etl_stack_pos b)
{
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.cpu != b.cpu) return a.cpu < b.cpu;
    return a.buffer != b.buffer ? a.buffer < b.buffer : a.offset < b.offset;
}

/* The position of a record a time-ordered iterator handed out. */
static inline etl_stack_pos etl_stack_pos_of(const etl_record *rec, uint64_t merge_ts)
{
    return (etl_stack_pos){merge_ts, rec->cpu, rec->buffer_index, rec->offset};
}

/* A definition as a search reads it: its position (etl_stack_pos's fields, packed with its part) and innermost frame. */
typedef struct etl_stack_key_entry {
    uint64_t ts;
    uint32_t cpu, buffer, offset;
    uint8_t part;           /* ETL_STACK_PART_*, from the innermost frame (ANY: it has none) */
    uint64_t leaf;          /* its innermost frame (etl_stack_keys_leaf): where the stack begins */
} etl_stack_key_entry;

/* Where a definition's frames lie (full tables only): n frames of ptr_size bytes, the trace's or the table's copy. */
typedef struct etl_stack_key_frames {
    const uint8_t *frames;
    uint16_t n;
    uint8_t ptr_size;
} etl_stack_key_frames;

/* The part a definition holds: its frames are kernel or user addresses (none: either). */
enum { ETL_STACK_PART_ANY = 0, ETL_STACK_PART_KERNEL = 1, ETL_STACK_PART_USER = 2 };

/* A group's last answer (near) as the search sees it: the positions around it, read once it moves. */
typedef struct etl_stack_key_front {
    etl_stack_pos before;    /* the definition before near's (when near is not the group's first) */
    etl_stack_pos at;        /* near's (when near is not past the group's last) */
    uint8_t part;            /* near's part */
} etl_stack_key_front;

typedef struct etl_stack_keys {
    etl_stack_key_entry *v;  /* in the order defined; grouped by key once sealed, each group in stream order */
    uint64_t *key;           /* by entry, its key: until sealed (the groups then say it) */
    etl_stack_key_frames *fr; /* by entry, as v: NULL in a table of no frames */
    size_t n, cap;
    etl_idmap group;         /* after seal: key -> group */
    uint32_t *start;         /* by group: its first entry; start[ngroups] = n */
    uint32_t *near;          /* by group: its last answer's place, where the next search starts */
    etl_stack_key_front *front; /* by group: around near, so that a reference at near's answer reads no entry */
    uint32_t ngroups;
    uint8_t **chunks;        /* the copies' memory: chunks that never move */
    size_t nchunks, capchunks, used; /* used: bytes of the last chunk */
    bool no_frames;          /* etl_stack_keys_init_no_frames's: the entries hold no frames (but their innermost) */
} etl_stack_keys;

void etl_stack_keys_init(etl_stack_keys *k);
/*
 * A table for a reader that needs only whether a reference resolves, never its frames:
 * it keeps each definition's key, position, part and innermost frame (etl_stack_keys_leaf, in
 * its entry), and copies no frame. Resolve answers as the full table does (an index, or
 * ETL_SEQ_NONE); frames gives none.
 */
void etl_stack_keys_init_no_frames(etl_stack_keys *k);
void etl_stack_keys_free(etl_stack_keys *k);
/*
 * A definition, in any order (stream order is the cheapest): n frames of ptr_size bytes
 * at frames, which must outlive the table (the bytes of a reader that stays open) unless
 * copy. ETL_E_NOMEM, ETL_E_RANGE past 2^31 definitions or ETL_STACK_MAX_FRAMES frames.
 */
etl_status etl_stack_keys_define(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, const uint8_t *frames, uint32_t n,
                                 unsigned ptr_size, bool copy);
/* Moves every definition of from, a table of to's kind (frames or none), and its copies into to, before the seal; from
 * is left empty. ETL_E_NOMEM. */
etl_status etl_stack_keys_take(etl_stack_keys *to, etl_stack_keys *from);
/* ETL_E_NOMEM (the table then resolves nothing). */
etl_status etl_stack_keys_seal(etl_stack_keys *k);
/*
 * The definition a reference at pos to key, for part (ETL_STACK_PART_KERNEL or _USER),
 * stands for: the key's first definition at or after pos. ETL_SEQ_NONE when none
 * follows, or when that one holds the other part (the reference's own was lost).
 * The search starts at the key's last answer, as a time-ordered reader's references
 * come mostly in order: a step or two, where a search of the whole group would miss
 * the cache at each; so one reader at a time.
 */
uint32_t etl_stack_keys_resolve(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, unsigned part);
/*
 * Where the trace lost records, for the references a lost span may have misled: a reference resolves to its
 * key's first definition after it, so when records were lost between the two (on any CPU: a key's definitions
 * come on any CPU) its own definition may have been among them, and the one it took is then another stack of
 * the same part (etl_stacks_lost_spans, learn.h, finds them). Spans (lo, hi) of raw time sorted by lo, hi_max[i]
 * the latest end of spans 0..i: whether one meets [from, to) is a binary search. n 0: nothing lost.
 */
typedef struct etl_lost_spans {
    uint64_t *lo, *hi_max;
    size_t n;
} etl_lost_spans;

void etl_lost_spans_free(etl_lost_spans *l);
/* Whether records may have been lost after time from and before time to (a span that begins before to and
 * ends at from or later). */
static inline bool etl_lost_between(const etl_lost_spans *l, uint64_t from, uint64_t to)
{
    size_t lo = 0, hi = l->n; /* the spans that begin before to: [0, lo) */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (l->lo[mid] < to) lo = mid + 1;
        else hi = mid;
    }
    return lo && l->hi_max[lo - 1] >= from;
}

/* The frames of definition def (a resolve's answer) into out[0..ETL_STACK_MAX_FRAMES): their count. */
uint32_t etl_stack_keys_frames(const etl_stack_keys *k, uint32_t def, uint64_t *out);
struct etl_map;
/*
 * The same, read with pread() when they lie in m's mapping: a walk that is over (attach.c's finish) reads
 * definitions from anywhere in the file, and a touch would map their pages again after the walk dropped them.
 */
uint32_t etl_stack_keys_frames_pread(const etl_stack_keys *k, uint32_t def, uint64_t *out, const struct etl_map *m);
/* Definition def's innermost frame into *leaf, in either kind of table; false when it has no frame. */
bool etl_stack_keys_leaf(const etl_stack_keys *k, uint32_t def, uint64_t *leaf);

#endif

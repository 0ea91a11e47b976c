/*
 * learn.h - the first pass of the stack readers (profile.c, sched_stacks.c): what
 * the whole trace tells before the stacks can be resolved.
 *
 * Each CPU's buffers are walked with no merge (the merge is most of the cost of
 * time order), the CPUs dealt to threads. The stack-key definitions (KeyDelete,
 * KeyRundown) are defined where they are met, at their positions (stack_keys.h:
 * the order of the time-ordered stream, whatever order they are defined in), their
 * frames left in the file's bytes. The records the caller wants (lifetimes,
 * images: few) are copied with their positions and handed over at the end,
 * sorted: in the order a time-ordered pass gives them. Memory: the definitions
 * and the copies. on_record and progress are called on the caller's thread.
 */
#ifndef ETLKIT_STACKS_LEARN_H
#define ETLKIT_STACKS_LEARN_H

#include <stdbool.h>
#include <stdint.h>
#include "etlkit/container.h"
#include "stacks/stack_keys.h"

typedef struct etl_learn {
    bool (*want)(uint16_t hook);     /* kernel records for on_record */
    etl_status (*on_record)(void *ctx, const etl_record *rec, uint16_t hook); /* non-ETL_OK stops */
    void *ctx;
    etl_stack_keys *keys;            /* the definitions (frames in the reader's bytes: it outlives the table), or
                                        with etl_stack_keys_init_no_frames no frames */
    void (*progress)(void *ctx, uint64_t done); /* now and then, with the bytes read (NULL: none) */
    void *progress_ctx;
    unsigned threads;                /* walkers at most, each a share of the CPUs: the same tables with any */
    uint64_t last_ts;                /* out: the latest time of a record in the session window */
    uint64_t defs_cut;               /* out: key definitions with more than ETL_STACK_MAX_FRAMES frames (the
                                        innermost kept) */
    uint64_t defs_noncanonical;      /* out: key definitions holding a frame no x64 code can have (images.h:
                                        etl_addr_noncanonical): damage, told and counted in damage; kept (in no
                                        image: Unknown) */
    etl_stats *damage;               /* where the damage met is counted (a stack record whose header type's pointer
                                        size contradicts the trace's, etl_stacks_ptr_size), told through r's
                                        diagnostics either way; NULL: told only */
} etl_learn;

/*
 * The trace's pointer size: the logfile header's PointerSize when it is 4 or 8 (0 otherwise: each record's
 * own). The kernel writes every stack record at it: a stack record (0x1820, 0x1823..0x1826) whose header type
 * says the other size is damage (a flipped header-type bit; the frames of a 32-bit trace read as 8-byte ones
 * would fuse two into one address), told and counted by etl_stacks_learn, and every stack reader reads its
 * payload at the trace's size: its definition or walk stays the kernel's (a definition refused would let its
 * references take the key's next one, another stack).
 */
unsigned etl_stacks_ptr_size(const etl_reader *r);

/* ETL_OK; ETL_E_NOMEM; on_record's status. on_record's records have their buffer_index and offset. */
etl_status etl_stacks_learn(etl_reader *r, etl_learn *l);

/*
 * Damage a reader of a record's payload finds in rec (buffer_index and offset set: on_record's, or an
 * iterator's): told through r's diagnostics with the record's file offset, what it is and its fate, and
 * counted in st (bad_records; the first problem kept).
 */
void etl_stacks_record_damage(const etl_reader *r, etl_stats *st, const etl_record *rec, const char *what,
                              const char *fate);

/*
 * A record (a stack walk, a key definition, a SampledProfile) holding addr, an address no x64 code can have
 * (images.h: etl_addr_noncanonical): told as etl_stacks_record_damage tells (what: the record's kind), counted in st.
 * The address is kept: it lies in no image (Unknown).
 */
void etl_stacks_address_damage(const etl_reader *r, etl_stats *st, const etl_record *rec, const char *what,
                               uint64_t addr);

/*
 * An Image event (rec, hook) just added to m with an ImageSize no image can have (images.h: m->bad_sizes
 * grew): told as etl_stacks_record_damage tells, counted in st. profile.c's and sched_stacks.c's.
 */
struct etl_image_map;
void etl_stacks_image_damage(const etl_reader *r, etl_stats *st, const etl_record *rec, uint16_t hook,
                             const struct etl_image_map *m);

/*
 * Where r lost records (stack_keys.h: etl_lost_spans), once a pass has read every CPU (the records passed over are
 * known as they are read): each CPU's missing buffers (etl_reader_cpu_gaps), its time after a file cut short
 * (etl_reader_cpu_known_until), where its records were passed over. ETL_OK (out->n 0: none lost); ETL_E_NOMEM.
 */
etl_status etl_stacks_lost_spans(const etl_reader *r, etl_lost_spans *out);

/*
 * The second pass's iterator: time order, framing only the kernel records keep says
 * yes to (the others pass from their header: most of a pass's cost), filter (NULL:
 * none) refusing more of them before the merge. ETL_OK; ETL_E_NOMEM; an iterator's error.
 */
etl_status etl_stacks_open_pass(etl_reader *r, bool (*keep)(uint16_t hook), etl_iter_keep_fn filter, void *ctx,
                                etl_iter **it);

#endif

/*
 * etlkit/schedstacks.h - stacks on the scheduler's rows: WPA's "New Thread Stack"
 * (the walk the kernel takes at a CSwitch, of the thread switched in: where it had
 * blocked) and "Readying Thread Stack" (the walk at the ReadyThread that readied
 * it, of the thread that readied it), for the rows of CPU Usage (Precise).
 *
 * etl_sched_stacks_build() reads a trace twice, before the model runs: the first
 * pass learns the images over time and the stack-key definitions (which follow
 * their references); the second announces every CSwitch (StackThread = its new
 * thread) and every ReadyThread (StackThread = the thread running on its CPU, the
 * readier) to the walk attacher (src/stacks/attach.h) and keeps, for each event a
 * walk came with, its CPU, its time (canonical ns, the model's) and the id of its
 * stack, interned with its frames mapped to images. The model's rows then find
 * their two stacks by (CPU, switch-in time) and (ReadyThread CPU, Ready Time).
 * Memory: the distinct stacks, the images, the stack-key definitions, and 16 bytes
 * per walked CSwitch or ReadyThread (the side table, sorted once); with
 * etl_sched_stacks_build_only, those of the events asked for. A row of a
 * compact batch (CCSWAP) has no CSwitch event, so no stack: never guessed.
 *
 * Run it only when etl_sched_stacks_logged() says the trace walks stacks at its
 * CSwitch or ReadyThread events (a trace without them then costs what it did).
 */
#ifndef ETLKIT_SCHEDSTACKS_H
#define ETLKIT_SCHEDSTACKS_H

#include "etlkit/container.h"
#include "etlkit/profile.h"
#include "etlkit/sched.h"

#ifdef __cplusplus
extern "C" {
#endif

#define ETL_SCHED_STACK_NONE UINT32_MAX

typedef struct etl_sched_stacks etl_sched_stacks;

typedef struct etl_sched_stacks_stats {
    uint64_t cswitch_events, cswitch_walked;  /* CSwitch events seen, those a walk came with */
    uint64_t ready_events, ready_walked;      /* the same for ReadyThread */
    uint64_t stacks;                          /* distinct stacks (frames mapped to images) */
    uint64_t key_refs_unresolved;             /* stack-key references whose definition was lost (profile.h) */
    uint64_t user_parts_dropped;              /* events that stopped waiting for a deferred user part */
    uint64_t walks_other;                     /* walks of other events (SampledProfile, ...) */
    /* What the rows' stacks lack (etl_sched_stacks_note tells each): */
    uint64_t walks_cut;                       /* plain walks past 192 frames (the innermost 192 kept) */
    uint64_t walks_unmatched;                 /* kernel parts at a CSwitch's or a waiting ReadyThread's time on
                                                 their CPU naming another thread (StackThread): no row takes them */
    uint64_t walks_repeated;                  /* kernel parts of an event whose kernel part came already (a
                                                 damaged EventTimeStamp): refused, never taken as its user part */
    uint64_t events_ambiguous;                /* events of one kind at one (CPU, time) with different stacks: a row
                                                 cannot tell which is its, so it gets none */
} etl_sched_stacks_stats;

/*
 * The notes on what the rows' stacks lack, i = 0, 1, ... until false: *key the count's JSON key, *count it
 * (0: nothing to tell), *text what it means, to follow the count ("N stack references ...").
 */
ETL_API bool etl_sched_stacks_note(const etl_sched_stacks *s, unsigned i, const char **key, uint64_t *count,
                                   const char **text);

/*
 * Whether the first records of r show a stack walk of a CSwitch or a ReadyThread
 * (a walk whose EventTimeStamp is that of such an event just before it on its CPU):
 * ETL_OK with *logged; ETL_E_NOMEM (or an iterator's error) when it cannot tell,
 * *logged false.
 */
ETL_API etl_status etl_sched_stacks_probe(etl_reader *r, bool *logged);
/*
 * The same as a bool (kept for 0.x programs): true also when it cannot tell (out of
 * memory), so that etl_sched_stacks_build runs and fails with its own status rather
 * than the trace reading as one that walks no stack.
 */
ETL_API bool etl_sched_stacks_logged(etl_reader *r);

/* The two passes. ETL_OK; ETL_E_NOMEM; an iterator's error. *out is NULL on failure. */
ETL_API etl_status etl_sched_stacks_build(etl_reader *r, etl_sched_stacks **out);
/*
 * The same on up to threads threads (0 or 1: the caller's alone): pass 1 walks the CPUs'
 * buffers on them, pass 2 reads on a second thread while the caller's maps and interns
 * the stacks. The same table with any number. The reader's diagnostic callback is then
 * called from another thread, one call at a time.
 */
ETL_API etl_status etl_sched_stacks_build_threads(etl_reader *r, unsigned threads, etl_sched_stacks **out);
/* An event whose stack is wanted: a CSwitch (ready 0) or a ReadyThread (ready 1) at (cpu, ns), canonical ns. */
typedef struct etl_sched_stacks_event {
    int64_t ns;
    uint16_t cpu;
    uint8_t ready;
} etl_sched_stacks_event;
/*
 * The same, keeping the stacks of these events only (a wait chain's few, etl_chain_stack_events): every walk is
 * still attached and counted (the stats, the notes), but memory holds the stacks and entries of the events asked
 * for, not one per walked event of the trace (events_ambiguous counts among them). want NULL: every event
 * (build_threads); nwant 0 with want: none.
 */
ETL_API etl_status etl_sched_stacks_build_only(etl_reader *r, unsigned threads, const etl_sched_stacks_event *want,
                                               size_t nwant, etl_sched_stacks **out);
/*
 * The same, keeping the stacks of one kind of event only (ready false: the CSwitches', New Thread Stack; true: the
 * ReadyThreads', Readying Thread Stack), for a report of that one (waits --by stack or --by readying-stack): every
 * walk is still attached and counted, but the other kind's stacks take no memory and rows have none of them
 * (events_ambiguous counts the kept kind's).
 */
ETL_API etl_status etl_sched_stacks_build_kind(etl_reader *r, unsigned threads, bool ready, etl_sched_stacks **out);
ETL_API void etl_sched_stacks_free(etl_sched_stacks *s);
ETL_API const etl_sched_stacks_stats *etl_sched_stacks_stats_get(const etl_sched_stacks *s);
/*
 * The damage the first pass met (bad_records: stack records whose header type says the other pointer
 * size than the trace's, read at the trace's; Image events with an impossible ImageSize), each told
 * through the reader's diagnostics with its file offset: damage of the input, as the iterators' stats.
 */
ETL_API const etl_stats *etl_sched_stacks_damage(const etl_sched_stacks *s);

/* The stack of the CSwitch at (cpu, ns), of the ReadyThread at (cpu, ns): an id, or ETL_SCHED_STACK_NONE. */
ETL_API uint32_t etl_sched_stacks_cswitch(const etl_sched_stacks *s, uint16_t cpu, int64_t ns);
ETL_API uint32_t etl_sched_stacks_ready(const etl_sched_stacks *s, uint16_t cpu, int64_t ns);

/*
 * A row's New Thread Stack (none for a HEAD row, a compact batch's switch, or a row whose switch-in planned another
 * thread than the one that ran: ETL_ROW_MISMATCH, the walk is the planned thread's) and Readying Thread Stack.
 */
ETL_API uint32_t etl_sched_stacks_row_new(const etl_sched_stacks *s, const etl_sched_row *row);
ETL_API uint32_t etl_sched_stacks_row_readying(const etl_sched_stacks *s, const etl_sched_row *row);

/*
 * A stack's frames, innermost first (*n of them; image indexes etl_sched_stacks_images),
 * made in s's own room: valid until the next call on s (the frames are kept once, as
 * interned words, not twice).
 */
ETL_API const etl_profile_frame *etl_sched_stacks_frames(etl_sched_stacks *s, uint32_t stack, uint32_t *n);
/*
 * Every image the trace logged, in the order logged (the same order, so the same
 * indexes, as etl_profile's images of the same trace).
 */
ETL_API const etl_profile_image *etl_sched_stacks_images(const etl_sched_stacks *s, size_t *n);
/*
 * Names the frames through sym (etlkit/symbols.h, NULL: module+offset again), flags
 * as etl_symbols_label takes them; sym must outlive s's labels.
 */
typedef struct etl_symbols etl_symbols;
ETL_API void etl_sched_stacks_set_symbols(etl_sched_stacks *s, etl_symbols *sym, unsigned flags);
/*
 * "ntdll.dll+0x9f8a4", or "Unknown+0x7ff6a1b2c3d4" for an address in no image (with
 * symbols: "ntdll.dll!NtWaitForSingleObject+0x14"), into out[cap]; the length.
 */
ETL_API size_t etl_sched_stacks_frame_label(const etl_sched_stacks *s, const etl_profile_frame *f, char *out,
                                            size_t cap);

/*
 * Waits and ready time by stack (`waits --by stack`, `--by readying-stack`): the
 * waits' time (Waits: from switched out waiting to readied) and ready time (Ready:
 * from readied or preempted to switched in) of each switch-in, charged to its New
 * Thread Stack (where the thread had blocked) or its Readying Thread Stack (where
 * its readier was), with the rows and the window clipping of the waits' totals
 * (etl_usage), so the totals are equal. Rows with no such stack (a compact batch's
 * switch, no walk, no ReadyThread) are counted on their own, never guessed.
 *
 *     etl_wait_stacks *w = etl_wait_stacks_new(stacks, false, v0, v1);
 *     ... etl_wait_stacks_row(w, row) for each model row of a selected thread ...
 *     etl_wait_stacks_build(w, flat, NULL, NULL);   then read the nodes
 */
typedef struct etl_wait_time {
    int64_t wait_ns, ready_ns;   /* saturated */
    uint64_t waits, readies;     /* the rows that counted each */
} etl_wait_time;

/*
 * A node of the built view: a frame under its caller (the tree, root first) or a
 * function (flat: the time of every stack holding it, a stack counted once). Its
 * children, most time first (ties by label), are nodes[first .. first + count).
 */
typedef struct etl_wait_node {
    const char *frame;           /* its label */
    etl_wait_time t;
    uint32_t first, count;
} etl_wait_node;

typedef struct etl_wait_stacks etl_wait_stacks;

/* s may be NULL (the trace walks no such stack: every row counts as none). v1 <= v0: no window. NULL: no memory. */
ETL_API etl_wait_stacks *etl_wait_stacks_new(etl_sched_stacks *s, bool readying, int64_t v0, int64_t v1);
ETL_API void etl_wait_stacks_row(etl_wait_stacks *w, const etl_sched_row *row);
/* A frame's label into out[cap], its length (etl_sched_stacks_frame_label's form when NULL: module+offset). */
typedef size_t (*etl_frame_label_fn)(void *ctx, const etl_profile_frame *f, char *out, size_t cap);
/*
 * Builds the view (again if called again): the tree of callers, or flat by function.
 * *roots: the top level, nodes[first .. first + count). ETL_OK; ETL_E_NOMEM.
 */
ETL_API etl_status etl_wait_stacks_build(etl_wait_stacks *w, bool flat, etl_frame_label_fn label, void *ctx,
                                         const etl_wait_node **nodes, etl_wait_node *roots);
/* Everything counted, the rows with no stack, and of those the compact batches' switches (New Thread Stack). */
ETL_API void etl_wait_stacks_totals(const etl_wait_stacks *w, etl_wait_time *total, etl_wait_time *none,
                                    uint64_t *none_compact);
ETL_API void etl_wait_stacks_free(etl_wait_stacks *w);

#ifdef __cplusplus
}
#endif
#endif

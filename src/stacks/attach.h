/*
 * attach.h - stack walks attached to the events they belong to, for any event kind.
 *
 * A walk belongs to the event with its EventTimeStamp on its StackThread (the
 * idle thread, TID 0, runs on every CPU at once: its events are told apart by
 * CPU). Plain walks (StackWalk/Stack 0x1820) carry their frames; cached ones
 * (Windows 8+) a key: the kernel part (0x1825) and the user part (0x1826),
 * which Windows logs when the thread returns to user mode, possibly after more
 * events of the same thread. The keys' frames come later still (stack_keys.h):
 * the caller resolves references through a key table built in a first pass.
 *
 * The caller announces each event whose stack it wants (etl_attach_event, in
 * time order, before its walks) and hands over every walk record. An event
 * waits in one of two queues of its thread: for a first walk (a walk may come
 * after the thread's next events: records of other CPUs come between), at most
 * ETL_ATTACH_MAX_UNWALKED of them; then, with its kernel part, for the user
 * part, at most ETL_ATTACH_MAX_WAITING (the thread may stay in the kernel a
 * long time; a thread of process 0 or 4 has no user mode and does not wait).
 * When an event's stack is complete (its user part came, or a plain walk ending
 * in user space), when a queue overflows (its oldest goes), or at
 * etl_attach_finish, on_close gets the event and its frames (innermost first:
 * the kernel part on top of the user part; none when no walk came), or with no
 * raw table only whether a walk came: no frame is read nor kept. Memory grows
 * with the events waiting, bounded per thread.
 */
#ifndef ETLKIT_STACKS_ATTACH_H
#define ETLKIT_STACKS_ATTACH_H

#include <stdbool.h>
#include <stdint.h>
#include "base/idmap.h"
#include "etlkit/container.h"
#include "stacks/seqtab.h"
#include "stacks/stack_keys.h"

#define ETL_ATTACH_MAX_UNWALKED 16u
#define ETL_ATTACH_MAX_WAITING 4096u
#define ETL_ATTACH_TS_BITS 16 /* ts_count's and recent's slots: 2^16 */
#define ETL_ATTACH_RECENT 4096u /* the events recent counts: the last announced */

/* An event whose stack is wanted. */
typedef struct etl_attach_event {
    uint64_t ts;       /* its timestamp: the walks' EventTimeStamp */
    uint32_t tid;      /* the thread the walks name (StackThread) */
    uint32_t cpu;      /* its CPU (tells the idle thread's events apart) */
    uint32_t pid;      /* its process as the caller knows it; a walk's StackProcess replaces it */
    uint64_t cookie[2]; /* the caller's */
    uint64_t leaf;     /* set by attach.c: the stack's innermost frame (its first part's first), when has_leaf */
    bool has_leaf;     /* false: no walk came, or its parts have no frame */
} etl_attach_event;

/* frames: n addresses, innermost first, valid during the call; walked: a walk came (n may still be 0). */
typedef etl_status (*etl_attach_close_fn)(void *ctx, const etl_attach_event *ev, const uint64_t *frames, uint32_t n,
                                          bool walked);

typedef struct etl_attach_stats {
    uint64_t walks_other;          /* walks of no announced event (other kinds, outside a window) */
    uint64_t key_refs_unresolved;  /* references whose key's next definition is none or of the other part */
    uint64_t user_parts_dropped;   /* events that stopped waiting for a user part (a full queue) */
    uint64_t unwalked_dropped;     /* events that stopped waiting for a first walk (a full queue; usual for events
                                      the session walks no stack of) */
    uint64_t walks_cut;            /* plain walks of an announced event with more than ETL_STACK_MAX_FRAMES frames
                                      (the decoder keeps the innermost) */
    uint64_t walks_repeated;       /* kernel parts of an event whose kernel part came already (a damaged
                                      EventTimeStamp or StackThread naming it): refused, never its user part */
    uint64_t walks_noncanonical;   /* plain walks of an announced event holding a frame no x64 code can have: damage,
                                      told (r) and counted in damage; the frame kept (in no image) */
    uint64_t key_refs_uncertain;   /* references resolved to a definition with lost records between (lost): their
                                      own may have been lost, the one taken another stack of the part */
} etl_attach_stats;

typedef struct etl_attach_wait etl_attach_wait;
typedef struct etl_attach_queue {
    uint32_t head, tail, n;
} etl_attach_queue;

/* A thread's two queues: [0] no walk yet, [1] the kernel part came, the user part awaited. */
typedef struct etl_attach_thread {
    etl_attach_queue q[2];
} etl_attach_thread;

typedef struct etl_attach {
    etl_seqtab *raw;               /* the kernel parts of plain walks, interned while they wait; NULL: no frames */
    etl_stack_keys *keys;          /* resolved through (its places move: stack_keys.h) */
    etl_attach_close_fn on_close;
    void *ctx;
    etl_attach_wait *w;            /* the waiting events, a pool */
    uint32_t nw, capw, free_w;
    etl_idmap by_event;            /* hash of (tid, ts, cpu for TID 0) -> waiting event */
    uint8_t ts_count[1u << ETL_ATTACH_TS_BITS]; /* waiting events by a hash of their timestamp (255: 255 or more):
                                                   most walks are other events', refused by a zero here */
    /*
     * The last ETL_ATTACH_RECENT events announced, by the same hash (ring: their times, the first
     * announced first): a walk of a time at recent_from or later is refused by a zero there, the rest by
     * ts_count. Events that never get a walk wait until their queue overflows, thousands of
     * them: ts_count fills up and refuses nothing, while most walks are of the time just read.
     */
    uint8_t *recent;
    uint64_t *ring;
    uint32_t ring_head, nring;
    uint64_t recent_from;
    bool recent_off;               /* an event at UINT64_MAX left the ring: ts_count alone */
    etl_idmap queue_of;            /* tid, or CPU | 1 << 32 for the idle thread -> thread's queues */
    etl_attach_thread *t;
    uint32_t nt, capt;
    uint64_t *frames;              /* scratch for on_close */
    etl_attach_stats stats;
    const etl_lost_spans *lost;    /* where the trace lost records (learn.h), set after init; NULL: none known */
    const etl_reader *r;           /* the walks' reader, for the damage they hold (set after init; NULL: counted only) */
    etl_stats damage;              /* that damage (etl_stacks_record_damage) */
    unsigned ptr_size;             /* the trace's (etl_stacks_ptr_size, learn.h), set after init: walks are read at
                                      it whatever their header type says (pass 1 told that damage); 0: each record's */
    bool finishing;                /* etl_attach_finish: the reader's walk is over, its pages dropped */
} etl_attach;

etl_status etl_attach_init(etl_attach *a, etl_seqtab *raw, etl_stack_keys *keys, etl_attach_close_fn on_close,
                           void *ctx);
void etl_attach_free(etl_attach *a);
/* ev waits for its walks (its thread's oldest lets go first when its queue is full). An on_close status, ETL_E_NOMEM. */
etl_status etl_attach_event_add(etl_attach *a, const etl_attach_event *ev);
/*
 * Whether a walk record (0x1820, 0x1825, 0x1826) can belong to an event: a user part
 * always (Windows logs it when the thread returns to user mode, maybe on another CPU
 * whose records are not read yet); a plain walk or a kernel part only when its event
 * waits, as the kernel logs those just after their event on the event's CPU. For a
 * time-ordered reader's filter, before the merge (a record refused costs no merge):
 * counts walks_other for what it refuses.
 */
bool etl_attach_wanted(etl_attach *a, const etl_record *rec, uint16_t hook);
/* The same from a record's parts (a kernel record framed from its header: etl_iter_keep_kernel); ptr_size the
 * record's (a->ptr_size, when set, stands for it). */
bool etl_attach_wanted_payload(etl_attach *a, uint16_t hook, etl_span payload, unsigned ptr_size, unsigned cpu);
/* A walk record (hook 0x1820, 0x1825 or 0x1826) at position pos (stack_keys.h). */
etl_status etl_attach_walk(etl_attach *a, const etl_record *rec, uint16_t hook, etl_stack_pos pos);
/* Every event still waiting closes with what it has. */
etl_status etl_attach_finish(etl_attach *a);

#endif

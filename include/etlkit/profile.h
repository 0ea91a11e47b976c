/*
 * etlkit/profile.h - where the time went: CPU Usage (Sampled), as WPA shows it.
 *
 * etl_profile_run() reads a trace twice. The first pass learns what the second
 * needs from the whole trace: each thread's process (Thread Start/DCStart), the
 * processes' and threads' names, the images loaded in each process over time
 * (Image Load/Unload/DCStart/DCEnd), the sampling interval (PerfInfo
 * CollectionStart/SetInterval of the Timer source) and the cached-stack key
 * definitions (StackWalk KeyDelete/KeyRundown), which follow their references.
 * The second counts every SampledProfile event (0x0F2E) in the window and
 * attaches its stack: the stack walks with the sample's time (EventTimeStamp)
 * and thread (StackThread), plain (0x1820) or by key (0x1825 the kernel part,
 * 0x1826 the user part, which Windows may log later, when the thread returns to
 * user mode), the kernel part on top. Each frame, as the sample's address, is
 * mapped to the image holding it in the sample's process at the sample's time,
 * kernel images in every process; an address no image covers is Unknown. A
 * sample's process is its thread's (Thread Start/DCStart), or when no Thread event
 * names the thread, the one its stack walk names (StackProcess).
 *
 * The rules behind the numbers are in images.h and owners.h's comments (src/stacks)
 * and in the README. Memory grows with the distinct threads, images, stacks and
 * sampled addresses, not with the samples.
 *
 *     etl_profile p;
 *     etl_profile_options o;
 *     etl_profile_options_init(&o); // every sample ({.sz = sizeof o} alone would select PID 0, Idle)
 *     if (etl_profile_run(reader, &o, &p) == ETL_OK)
 *         for (size_t i = 0; i < p.nmodules; i++)
 *             printf("%-20s %llu\n", p.modules[i].name, (unsigned long long)p.modules[i].samples);
 *     etl_profile_free(&p);
 */
#ifndef ETLKIT_PROFILE_H
#define ETLKIT_PROFILE_H

#include <stdio.h>
#include "etlkit/container.h"

#ifdef __cplusplus
extern "C" {
#endif

/* No such thing (a thread's unknown process, a frame in no image). */
#define ETL_PROFILE_NONE UINT32_MAX

typedef struct etl_profile_options {
    size_t sz;              /* sizeof(etl_profile_options) */
    int64_t v0, v1;         /* the window, ns from the trace's start; v1 <= v0: the whole trace */
    int64_t pid;            /* only this process's samples (-1: all; 0 is Idle: start from etl_profile_options_init) */
    const char *process;    /* only processes of this image name, case ignored, ".exe" optional (NULL: all) */
    int64_t tid;            /* only this thread's samples (-1: all; 0 is the idle thread) */
    /* Called now and then with the bytes read so far over both passes and their total (twice the file's). */
    void (*progress)(void *ctx, uint64_t done, uint64_t total);
    void *progress_ctx;
    /*
     * Threads (0 or 1: the caller's alone). With 2 or more, each pass reads on a second
     * thread while the caller's interns and counts what it read: the same profile, the
     * callbacks (progress, etl_profile_run_each's) still on the caller's thread, in the same
     * order. The reader's diagnostic callback (etl_reader_open's) is then called from the
     * second thread, one call at a time, while those run.
     */
    unsigned threads;
    /*
     * true: the samples' stacks are not kept, only whether one came (with_stack): no
     * key definition held, no frame read, p->stacks empty. The lists and pivots are the
     * same at a fraction of the cost. etl_profile_run_each keeps them whatever this says.
     */
    bool no_stacks;
} etl_profile_options;

/* The defaults (every sample: pid and tid -1, one thread, stacks kept), sz set: a zeroed struct selects PID 0. */
ETL_API void etl_profile_options_init(etl_profile_options *o);

typedef struct etl_profile_thread {
    uint32_t tid;
    uint32_t pid;           /* ETL_PROFILE_NONE when the trace never says (nor a walk of its samples) */
    uint32_t process;       /* index in processes */
    const char *name;       /* "" when none */
    uint64_t samples, with_stack;
} etl_profile_thread;

typedef struct etl_profile_process {
    uint32_t pid;           /* ETL_PROFILE_NONE: "Unknown" */
    const char *name;       /* the image name; "Idle" for 0, "Unknown" when the trace never names it */
    uint64_t samples;
} etl_profile_process;

typedef struct etl_profile_module {
    const char *name;       /* the image's base name, case kept; "Unknown" for code no image covers */
    uint64_t samples;       /* samples whose InstructionPointer it holds */
} etl_profile_module;

/* Until symbols: a function is a sampled address, named module+offset (Unknown+address). */
typedef struct etl_profile_function {
    uint32_t module;        /* index in modules */
    uint64_t offset;        /* from the image's base (the address for Unknown) */
    uint64_t samples;
} etl_profile_function;

/* An image as the trace logged it, live over [from_ns, to_ns) (INT64_MIN, INT64_MAX: before, after the trace). */
typedef struct etl_profile_image {
    uint64_t base, size;
    uint32_t pid;           /* as logged (kernel images: mapped in every process) */
    const char *name, *path;
    uint32_t time_date_stamp, checksum;
    int64_t from_ns, to_ns;
    bool kernel;
} etl_profile_image;

/* A frame of a stack: its address and the image holding it (ETL_PROFILE_NONE: Unknown). */
typedef struct etl_profile_frame {
    uint64_t address;
    uint32_t image;
} etl_profile_frame;

/* Samples of one thread with one stack (a sample with no stack walk: the one frame of its InstructionPointer). */
typedef struct etl_profile_stack {
    uint32_t thread;        /* index in threads */
    uint32_t stack;         /* etl_profile_stack_frames */
    bool walked;            /* false: no stack walk came with these samples */
    uint64_t samples;
    uint64_t first_ts;      /* the raw time of its first sample (ties of samples are listed in this order) */
} etl_profile_stack;

typedef struct etl_profile {
    uint64_t samples;               /* SampledProfile events in the window (and the filters) */
    uint64_t samples_in_trace;      /* all of them, whatever the window and the filters */
    uint64_t with_stack;            /* those a stack walk came with */
    uint64_t unknown;               /* those whose InstructionPointer no image covers */
    int64_t interval_ns;            /* the Timer source's sampling interval */
    bool interval_logged;           /* false: none was logged, the default 1 ms */
    uint64_t interval_changes;      /* intervals logged after the first that differ from it */
    int64_t v0, v1;                 /* the window in effect, ns, clipped to the trace */
    etl_profile_thread *threads;    /* most samples first (ties: TID) */
    size_t nthreads;
    etl_profile_process *processes; /* most samples first */
    size_t nprocesses;
    etl_profile_module *modules;    /* most samples first */
    size_t nmodules;
    etl_profile_function *functions; /* most samples first */
    size_t nfunctions;
    etl_profile_stack *stacks;      /* most samples first */
    size_t nstacks;
    etl_profile_image *images;      /* every image the trace logged, in the order logged */
    size_t nimages;
    /* What could not be attached, counted, never guessed. */
    uint64_t key_refs_unresolved;   /* stack-key references whose definition was lost: their key's next definition
                                       is none, or holds the other part (kernel or user) */
    uint64_t user_parts_dropped;    /* samples waiting for a deferred user part beyond the per-thread limit */
    uint64_t walks_other;           /* stack walks of other events (CSwitch, ReadyThread, ...) or outside the window */
    etl_stats st;                   /* the damage the passes met */
    void *impl;
} etl_profile;

/*
 * What a run counted beyond etl_profile's fields (whose size is part of the ABI: it
 * cannot grow in 0.x), counted, never guessed.
 */
typedef enum etl_profile_anomaly {
    /* stack walks with more than ETL_STACK_MAX_FRAMES frames (Windows logs at most 192): the innermost 192
       kept, the rest left out; plain walks of the samples counted and key definitions anywhere in the trace */
    ETL_PROFILE_WALKS_CUT,
    /* Image events whose ImageSize no image can have (over 32 bits, or past the end of its half of the address
       space): damage, told through the reader's diagnostics and counted in st.bad_records; the image holds no
       address (it would take every other image's) */
    ETL_PROFILE_IMAGE_SIZES_BAD,
    /* samples of a thread no Thread event names, whose process is the one their stack walk names (StackProcess) */
    ETL_PROFILE_PROCESS_FROM_WALK,
    /* samples whose stack walk names another process than their thread's: the thread's taken, for the sample's
       address and its frames alike */
    ETL_PROFILE_PROCESS_DISAGREES,
    /* kernel-part walks naming a sample whose kernel part came already (a damaged EventTimeStamp or StackThread
       repeating another walk's): refused, never taken for its user part */
    ETL_PROFILE_WALKS_REPEATED,
    /* samples a stack walk came with whose stack does not begin at their InstructionPointer (its innermost frame is
       another address, or it has none): mostly a part lost (a kernel address with the user part alone, which would
       read as the whole stack), for a few Windows's walk beginning beside the address (2 of 6,318 walked samples in
       a real trace, WOW64 threads); counted, the stack kept as it came. A lost user part is not seen: the kernel
       part alone begins at a kernel address as a whole stack does */
    ETL_PROFILE_STACKS_NOT_AT_IP,
    /* stack-key references resolved to their key's next definition of their part while the trace lost records
       between the two (a missing or unreadable buffer, records passed over, a file cut short; on any CPU): their
       own definition may have been lost, the one taken then another sample's stack. Resolved all the same: this
       is how many stacks are in doubt (0 when nothing was lost) */
    ETL_PROFILE_KEY_REFS_UNCERTAIN,
    /* records holding an address no x64 code can have (0x0100000000000000..0xfeffffffffffffff, non-canonical with 4-
       and with 5-level paging; 64-bit
       traces only): plain walks of the samples, key definitions anywhere in the trace, SampledProfile events (their
       InstructionPointer). Damage, told through the reader's diagnostics with the record's file offset and counted in
       st.bad_records; the address is kept, in no image (Unknown), the rest of its stack as it came */
    ETL_PROFILE_ADDRESSES_NONCANONICAL,
    ETL_PROFILE_ANOMALIES /* how many there are */
} etl_profile_anomaly;

/* The count of one anomaly of a run (done or failed) into *n. ETL_E_INVALID_ARG: no run's p, or no such anomaly. */
ETL_API etl_status etl_profile_anomaly_get(const etl_profile *p, etl_profile_anomaly which, uint64_t *n);

/*
 * Profiles r. ETL_OK; ETL_E_NOMEM (p partly filled, its numbers no answer: only free it); an iterator's error.
 * Free p with etl_profile_free in every case.
 */
ETL_API etl_status etl_profile_run(etl_reader *r, const etl_profile_options *o, etl_profile *p);
ETL_API void etl_profile_free(etl_profile *p);

/* A stack's frames, innermost first (*n of them); an id no stack has (not an etl_profile_stack's), or a profile
 * that holds none (freed, never run): NULL, *n 0. */
ETL_API const etl_profile_frame *etl_profile_stack_frames(const etl_profile *p, uint32_t stack, uint32_t *n);
/* "ntdll.dll+0x9f8a4", or "Unknown+0x7ff6a1b2c3d4" for an address in no image, into out[cap]; the length. */
ETL_API size_t etl_profile_frame_label(const etl_profile *p, const etl_profile_frame *f, char *out, size_t cap);
/* The same for a function (an index in functions[]; past nfunctions: "" and 0). */
ETL_API size_t etl_profile_function_label(const etl_profile *p, uint32_t function, char *out, size_t cap);

/*
 * A frame's label for the views below: etl_profile_frame_label's (NULL), or a
 * symbolizer's (etlkit/symbols.h: etl_symbols_function_label, ctx the etl_symbols).
 * Returns the length as snprintf does.
 */
typedef size_t (*etl_profile_labeler)(void *ctx, const etl_profile *p, const etl_profile_frame *f, char *out,
                                      size_t cap);

/* The pivot keys of etl_profile_pivot, as WPA's column order. */
typedef enum etl_profile_by {
    ETL_PROFILE_BY_PROCESS,
    ETL_PROFILE_BY_THREAD,
    ETL_PROFILE_BY_MODULE,
    ETL_PROFILE_BY_FUNCTION
} etl_profile_by;

/* One row of a pivot: a group at depth (0: by[0]) and its samples. */
typedef struct etl_profile_row {
    unsigned depth;
    etl_profile_by by;
    uint32_t index;         /* into the list by names (threads, processes, modules, functions) */
    uint64_t samples;
} etl_profile_row;

/*
 * The samples grouped by by[0], then within each group by by[1], ... (nby <= 4,
 * no key twice), each level most samples first, at most top groups per level
 * (0: all): rows in depth-first order, *rows malloc'ed (free it). ETL_E_INVALID_ARG,
 * ETL_E_NOMEM.
 */
ETL_API etl_status etl_profile_pivot(const etl_profile *p, const etl_profile_by *by, unsigned nby, unsigned top,
                                     etl_profile_row **rows, size_t *n);

/*
 * Collapsed stacks for flamegraph.pl, inferno and speedscope: one line per thread
 * and stack, "process (pid);thread (tid);root;...;leaf COUNT\n" (an unnamed thread
 * is "Thread (tid)"), the counts summing to p->samples (';', controls, C1 and
 * bidirectional formatting characters and bytes that are not UTF-8 in names
 * replaced by '_'). ETL_E_IO, ETL_E_NOMEM.
 */
ETL_API etl_status etl_profile_write_folded(const etl_profile *p, FILE *f);

/* etl_profile_write_folded with the frames named by label (NULL: etl_profile_frame_label). ETL_E_IO, ETL_E_NOMEM. */
ETL_API etl_status etl_profile_write_folded_with(const etl_profile *p, FILE *f, etl_profile_labeler label, void *ctx);

/*
 * Callers and callees of one function, named by its label ("ntdll.dll+0x9f8a4",
 * as etl_profile_frame_label prints it): the samples whose stack holds it (total;
 * a stack counts once, at its outermost occurrence), those where it is the
 * innermost frame (self), and the samples by the frame just outside it (callers)
 * and just inside it (callees), grouped by label. ETL_E_INVALID_ARG for a text
 * that is no label, ETL_END when no stack holds it, ETL_E_NOMEM.
 */
typedef struct etl_profile_edge {
    etl_profile_frame frame; /* the caller's or callee's frame (one of those with its label) */
    uint64_t samples;
} etl_profile_edge;

typedef struct etl_profile_butterfly {
    uint64_t total, self;
    etl_profile_edge *callers, *callees; /* most samples first */
    size_t ncallers, ncallees;
} etl_profile_butterfly;

ETL_API etl_status etl_profile_butterfly_get(const etl_profile *p, const char *function, etl_profile_butterfly *b);
ETL_API void etl_profile_butterfly_free(etl_profile_butterfly *b);
/*
 * The butterfly of the frames whose label (by label, ctx) is function, a
 * symbol's name such as "app.dll!Cache::Lock" with etl_symbols_function_label:
 * etl_profile_butterfly_get's counts, the callers and callees grouped by that
 * label. ETL_END when no stack holds it, ETL_E_NOMEM.
 */
ETL_API etl_status etl_profile_butterfly_by(const etl_profile *p, const char *function, etl_profile_labeler label,
                                            void *ctx, etl_profile_butterfly *b);

/*
 * The samples one by one, for the exports
 * that need a row per sample (the `sample` table, Perfetto's callstack samples)
 * where etl_profile itself only aggregates.
 *
 * etl_profile_run_each is etl_profile_run with a callback called once per
 * counted sample, when its stack is closed (so not quite in time order: a sample
 * waiting for a deferred user part closes later than the samples after it). The
 * stack is the id etl_profile_stack_frames takes; the image ids index p->images
 * once the run is done.
 */
typedef struct etl_profile_sample {
    uint64_t ts;            /* raw ticks */
    int64_t ns;             /* ns from the trace's start */
    uint32_t cpu, tid;
    uint32_t pid;           /* its process (the thread's, or its walk's), ETL_PROFILE_NONE when the trace never says */
    uint64_t ip;            /* InstructionPointer */
    uint32_t ip_image;      /* the image holding it (index in p->images), ETL_PROFILE_NONE: Unknown */
    uint32_t stack;         /* etl_profile_stack_frames' id: the walk, or the IP alone */
    bool walked;            /* false: no stack walk came with it */
} etl_profile_sample;

/* Non-ETL_OK stops the run with that status. */
typedef etl_status (*etl_profile_sample_fn)(void *ctx, const etl_profile_sample *s);

/* etl_profile_run, calling on_sample (NULL: none) for every sample counted. */
ETL_API etl_status etl_profile_run_each(etl_reader *r, const etl_profile_options *o, etl_profile_sample_fn on_sample,
                                        void *ctx, etl_profile *p);

#ifdef __cplusplus
}
#endif
#endif

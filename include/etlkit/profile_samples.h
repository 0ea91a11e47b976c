/*
 * etlkit/profile_samples.h - the samples of a profile one by one, for the exports
 * that need a row per sample (the `sample` table, Perfetto's callstack samples)
 * where etl_profile itself only aggregates.
 *
 * etl_profile_run_each is etl_profile_run with a callback called once per
 * counted sample, when its stack is closed (so not quite in time order: a sample
 * waiting for a deferred user part closes later than the samples after it). The
 * stack is the id etl_profile_stack_frames takes; the image ids index p->images
 * once the run is done.
 */
#ifndef ETLKIT_PROFILE_SAMPLES_H
#define ETLKIT_PROFILE_SAMPLES_H

#include "etlkit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct etl_profile_sample {
    uint64_t ts;            /* raw ticks */
    int64_t ns;             /* ns from the trace's start */
    uint32_t cpu, tid;
    uint32_t pid;           /* the thread's process, ETL_PROFILE_NONE when the trace never says */
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

/* profile_internal.h - what an etl_profile keeps behind impl (profile.c, profile_views.c). */
#ifndef ETLKIT_STACKS_PROFILE_INTERNAL_H
#define ETLKIT_STACKS_PROFILE_INTERNAL_H

#include "etlkit/profile.h"
#include "stacks/images.h"
#include "stacks/owners.h"
#include "stacks/seqtab.h"
#include "stacks/strtab.h"

/* Samples of one thread at one function: the base every pivot groups. */
typedef struct prof_cell {
    uint32_t thread, function;
    uint64_t samples;
} prof_cell;

typedef struct prof_impl {
    etl_strtab names;
    etl_owners owners;
    etl_image_map images;
    etl_seqtab resolved;     /* stacks as counted: [address, image] pairs */
    etl_profile_frame *frames; /* resolved's words as frames, for etl_profile_stack_frames */
    prof_cell *cells;
    size_t ncells;
    uint64_t anomalies[ETL_PROFILE_ANOMALIES]; /* etl_profile_anomaly_get's */
} prof_impl;

#endif

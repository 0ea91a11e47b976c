/*
 * synthtruth.h - what the analysis tests share: a synthesized trace with the simulator's
 * ground truth captured in memory (every switch, every logged ReadyThread, every spin
 * lock release, the per-thread totals), and temporary paths for the traces.
 */
#ifndef ETLKIT_TESTS_SYNTHTRUTH_H
#define ETLKIT_TESTS_SYNTHTRUTH_H

#include <stddef.h>
#include "etlkit/synth.h"

typedef struct st_truth {
    etl_synth_meta meta;
    etl_synth_end end;
    etl_synth_switch *sw; /* every switch, each CPU's in time order */
    size_t nsw, capsw;
    etl_synth_ready *rd;  /* the ReadyThreads written to the trace (logged) */
    size_t nrd, caprd;
    etl_synth_spinlock *sl; /* every release, sampled or not */
    size_t nsl, capsl;
    etl_synth_thread_total *tt; /* names not kept */
    size_t ntt, captt;
} st_truth;

/* One switch or logged ReadyThread of the truth, for walking both in time order. */
typedef struct st_item {
    uint64_t ts;
    int kind;  /* 0: rd[i], 1: sw[i] */
    size_t i;
} st_item;

/* The truth's ReadyThreads and switches in time order (ReadyThreads first at equal times); malloc'd, *n items. */
st_item *st_timeline(const st_truth *t, size_t *n);

/* An etl_synth_truth_fn filling an st_truth (ctx). */
int st_capture(void *ctx, const etl_synth_rec *r);
void st_free(st_truth *t);
/* Sets one option by its CLI name; fails the test with the option's message. */
void st_set(etl_synth_options *o, const char *name, const char *value);
/* Runs the simulation into path, the truth into *t (zeroed first); fails the test on error. */
void st_run(const char *path, etl_synth_options *o, st_truth *t);
/* A path in $TMPDIR (or /tmp) unique to this process: etlkit-TAG-PID-NAME. */
void st_tmp(char *out, size_t cap, const char *tag, const char *name);

#endif

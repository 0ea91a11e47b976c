/*
 * waits_stacks.h - `waits --by stack` and `--by readying-stack`: the waits' time
 * (Waits, from switched out waiting to readied) and ready time (Ready, from
 * readied or preempted to switched in) of each switch-in, charged to its New
 * Thread Stack (where the thread had blocked) or its Readying Thread Stack (where
 * the thread that readied it was), as the waits' totals count them (the same
 * rows, the same window clipping: the totals are equal). As a tree of callers,
 * root first, or flat by function (--flat: each function's inclusive time, a
 * stack counted once per function it holds). Time of rows with no stack (a
 * compact batch's switch, no walk, no ReadyThread) is its own line, never guessed.
 */
#ifndef ETLKIT_CLI_WAITS_STACKS_H
#define ETLKIT_CLI_WAITS_STACKS_H

#include "etlkit/schedstacks.h"
#include "report.h"

typedef struct wstk wstk;

/* NULL when out of memory. readying: key by the Readying Thread Stack. s may be NULL (no stacks). */
wstk *wstk_new(etl_sched_stacks *s, int readying, int64_t v0, int64_t v1, const rep_args *a);
/* One row, as etl_usage_add counts it (run: the model, for --process / --thread). */
void wstk_row(wstk *w, const rep_run *run, const etl_sched_row *row);
/* Text (a tree, or flat), or JSON; top: children per node (tree) or functions (flat). 0 ok, -1 out of memory. */
int wstk_print(wstk *w, const rep_run *run, const rep_args *a, int flat, unsigned top);
void wstk_free(wstk *w);

#endif

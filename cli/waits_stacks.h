/*
 * waits_stacks.h - `waits --by stack` and `--by readying-stack` rendered: the
 * library's view (etl_wait_stacks, etlkit/schedstacks.h) as a text tree or list,
 * or JSON.
 */
#ifndef ETLKIT_CLI_WAITS_STACKS_H
#define ETLKIT_CLI_WAITS_STACKS_H

#include "etlkit/schedstacks.h"
#include "etlkit/symbols.h"
#include "report.h"

/* top: children per node (tree) or functions (flat), 0 all. 0 ok, -1 out of memory. */
/* stacks: the trace's (NULL: it walks none), for what they lack ("stacks_lack" in JSON). */
int waits_stacks_print(etl_wait_stacks *w, const etl_sched_stacks *stacks, etl_symbols *sym, bool readying,
                       const rep_run *run, const rep_args *a, bool flat, unsigned top);

/*
 * The damage the stacks' reading met (stack records with the other pointer size, impossible ImageSizes: told
 * already through the reader's diagnostics) added to run's, after rep_run_go: the exit status says it (3).
 * stacks NULL: nothing.
 */
void waits_stacks_damage(rep_run *run, const etl_sched_stacks *stacks);

#endif

/* spinlocks_out.h - `etlkit spinlocks`' outputs (spinlocks_out.c); its JSON is rep_json.h's spinlocks_json. */
#ifndef ETLKIT_CLI_SPINLOCKS_OUT_H
#define ETLKIT_CLI_SPINLOCKS_OUT_H

#include <stdio.h>
#include "report.h"
#include "etlkit/spinlocks.h"

/* The most rows of each list (0: all) a format gives. */
unsigned spinlocks_list_top(const rep_args *a);
/* For people: the sampling, the estimates, a table per list, the notes. */
void spinlocks_text(const rep_args *a, const rep_run *run, const etl_spinlocks *s, const etl_spin_params *sp);
/* The rows as one CSV sheet: the total, then each list's. */
void spinlocks_csv(const rep_args *a, const etl_spinlocks *s);
/* The events whose hold cannot be computed, and where the first lies (no newline). */
void spinlocks_backwards_text(FILE *f, const etl_spinlocks *s);
/* The events whose times are no hold the kernel measured, why, and where the first lies (no newline). */
void spinlocks_impossible_text(FILE *f, const etl_spinlocks *s);
/* Whether the file holds less CPU time than the window's (cut short), and over what the rates then are: out. */
bool spinlocks_cut(const etl_spinlocks *s);
const char *spinlocks_known_text(const etl_spinlocks *s, char *out, size_t cap);

#endif

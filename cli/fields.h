/* fields.h - decoded payloads as JSON objects or key=value text, into a bounded line buffer. */
#ifndef ETLKIT_CLI_FIELDS_H
#define ETLKIT_CLI_FIELDS_H

#include "etlkit/etlkit.h"

/* A line under construction. Appends never write past cap; `cut` says something was dropped. */
typedef struct line {
    char *b;
    size_t n, cap;
    int json;   /* 1: JSON object members; 0: " key=value" text */
    int first;  /* no member written yet at this nesting level */
    int cut;
} line;

void ln_raw(line *l, const char *s, size_t n);
void ln_key(line *l, const char *key);
void ln_u(line *l, const char *key, uint64_t v);
void ln_i(line *l, const char *key, int64_t v);
void ln_s(line *l, const char *key, const char *s);
void ln_open(line *l, const char *key);  /* "key":{ ... */
void ln_close(line *l);                  /* } */

/*
 * The payload fields of a decoded event (spec names: NewThreadId, OldThreadState, ...),
 * wait reasons, states and modes also by name. Nothing for kind OTHER.
 */
void fields_event(line *l, const etl_event *ev, unsigned wait_bias);
/* One switch (a CSwitch or an expanded compact record): only the fields it carries. */
void fields_cswitch(line *l, const etl_cswitch *sw);

#endif

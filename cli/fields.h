/* fields.h - decoded payloads as JSON objects or key=value text, into a bounded line buffer. */
#ifndef ETLKIT_CLI_FIELDS_H
#define ETLKIT_CLI_FIELDS_H

#include "etlkit/etlkit.h"
#include "out/json.h"

/*
 * The payload fields of a decoded event (spec names: NewThreadId, OldThreadState, ...),
 * wait reasons, states and modes also by name. Nothing for kind OTHER.
 */
void fields_event(ln_buf *l, const etl_event *ev, unsigned wait_bias);
/* One switch (a CSwitch or an expanded compact record): only the fields it carries. */
void fields_cswitch(ln_buf *l, const etl_cswitch *sw);

#endif

/* writer_internal.h - the writer on a stream the caller opened (convert's temporary file). */
#ifndef ETLKIT_SRC_WRITER_WRITER_INTERNAL_H
#define ETLKIT_SRC_WRITER_WRITER_INTERNAL_H

#include <stdio.h>
#include "etlkit/writer.h"

/*
 * As etl_writer_open, on f (seekable, open for writing; closed by the writer,
 * also on failure); name is the LogFileName default and the name in messages.
 * sync: fsync before the close, so a file renamed over another is on disk first.
 */
etl_status etl_writer_open_stream(FILE *f, const char *name, bool sync, const etl_writer_options *opts,
                                  etl_writer **out, etl_diag *diag);
/* EndTime (FILETIME) at least end_time at close: a session stops after its last event (convert keeps its input's). */
void etl_writer_end_time_min(etl_writer *w, uint64_t end_time);

#endif

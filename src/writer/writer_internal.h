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
/* Records of buffer 0 every file written has: the logfile header and one header extension (the group masks). */
#define ETL_WRITER_HEADER_RECORDS 2
/* EndTime (FILETIME) at least end_time at close: a session stops after its last event (convert keeps its input's). */
void etl_writer_end_time_min(etl_writer *w, uint64_t end_time);
/*
 * The SequenceNumbers the file rewritten misses (convert), so that its reader finds the same
 * gaps (etl_reader_cpu_gaps): sizes[e] numbers missing after the buffers of epoch e (e <
 * nholes), and tail after the last (a file cut short; counted in BuffersWritten). A CPU's
 * records of epoch e go to buffers of their own (etl_writer_epoch), numbered at close after
 * every buffer of an earlier epoch and the holes between. Once, before a CPU buffer is written:
 * else ETL_E_INVALID_ARG; ETL_E_NOMEM. One position per buffer written is kept.
 */
etl_status etl_writer_holes(etl_writer *w, const uint64_t *sizes, uint32_t nholes, uint64_t tail);
/* Bytes of every CPU's buffer together, each held until full: a writer of more (CPUs times buffer size) is refused. */
#define ETL_WRITER_MEMORY (256u << 20)
/* The largest buffer size ncpu CPUs' buffers fit ETL_WRITER_MEMORY with (a multiple of 8, at most 16 MiB). */
uint32_t etl_writer_buffer_max(uint32_t ncpu);
/*
 * The SequenceNumbers etl_convert leaves missing in its output of rd (etl_writer_holes' sizes and tail):
 * what the output's reader finds missing (etl_reader_buffers_missing), no more, no less. 0 when rd
 * misses none and, once a reading of it in time order has ended, read every buffer whole.
 */
uint64_t etl_convert_missing(const etl_reader *rd);
/*
 * cpu's records from now on are of epoch (0..nholes; never less than its last): its buffer of
 * an earlier epoch is written now. ETL_E_INVALID_ARG for a CPU out of range; a write's error.
 */
etl_status etl_writer_epoch(etl_writer *w, uint16_t cpu, uint32_t epoch);
/* EventsLost and BuffersLost of the logfile header written at close (each at most UINT32_MAX). */
void etl_writer_lost(etl_writer *w, uint64_t events, uint64_t buffers);
/*
 * cpu lost events or a buffer before its event at ts (flags: EVENTS_LOST, BUFFER_LOST; others ignored): cpu's
 * first event at ts or later written from now on starts a buffer (the one being filled is written early) that
 * gets the flags, so that each call flags one buffer, which begins after the loss. Calls the same event reaches
 * flag an empty buffer each before it, but the last; calls the CPU writes no event for, an empty buffer each at
 * close, after the CPU's last (at ts or the CPU's last event's time, at most the file's newest event; of epoch,
 * as etl_writer_epoch, when that is later than the CPU's). Out of time order, ts is taken as the last call's.
 * ETL_E_INVALID_ARG for a CPU out of range; ETL_E_NOMEM.
 */
etl_status etl_writer_buffer_lost(etl_writer *w, uint16_t cpu, unsigned flags, uint64_t ts, uint32_t epoch);
/* The header extension's group masks written at close (what the file turned out to hold). */
void etl_writer_group_mask(etl_writer *w, const etl_groupmask *gm);
/*
 * diag for the writer's status st: "NAME: the system's reason" when a write failed
 * (errno kept from the first failure: a full disk, a file size limit), "NAME: why" when
 * the writer's last call was a write that failed with st (etl_writer_why: never an older
 * refusal's text for a later failure), else "NAME: cannot complete the trace: status".
 * NAME is the name the writer was opened with.
 */
void etl_writer_diag(const etl_writer *w, etl_status st, etl_diag *diag);

#endif

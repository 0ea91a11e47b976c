/*
 * owners.h - which process a thread belongs to, and the names of both, over a
 * whole trace: built from the Thread and Process events in time order, sealed,
 * then queried by (id, time). Memory grows with the threads and processes.
 *
 * A thread's process at a time is that of its last Start/DCStart at or before
 * it, or, when there is none, the first one after it (the tracing tool's own
 * threads are sampled before the start rundown reaches them). Thread 0 is the
 * idle thread of process 0 (Idle). A process's name is its ImageFileName at
 * the same rule; a thread's name is the last one its events gave it.
 */
#ifndef ETLKIT_STACKS_OWNERS_H
#define ETLKIT_STACKS_OWNERS_H

#include <stdint.h>
#include "base/idmap.h"
#include "stacks/strtab.h"

#define ETL_PID_UNKNOWN UINT32_MAX

typedef struct etl_owner_start {
    uint64_t id_ts[2];   /* (thread or process id, time): the sort key */
    uint32_t pid;        /* a thread's process */
    uint32_t name;       /* a process's image name (strtab) */
} etl_owner_start;

typedef struct etl_owners {
    etl_owner_start *threads, *procs;
    uint32_t nthreads, capthreads, nprocs, capprocs;
    etl_idmap thread_names; /* (tid << 32 | pid) -> strtab offset */
    etl_strtab *names;
} etl_owners;

void etl_owners_init(etl_owners *o, etl_strtab *names);
void etl_owners_free(etl_owners *o);
etl_status etl_owners_thread(etl_owners *o, uint32_t tid, uint32_t pid, uint64_t ts);
etl_status etl_owners_thread_name(etl_owners *o, uint32_t tid, uint32_t pid, uint32_t name);
etl_status etl_owners_process(etl_owners *o, uint32_t pid, uint64_t ts, uint32_t name);
void etl_owners_seal(etl_owners *o);
/* The process of thread tid at ts (ETL_PID_UNKNOWN when the trace never says). */
uint32_t etl_owners_pid(const etl_owners *o, uint32_t tid, uint64_t ts);
/* Process pid's image name at ts (strtab offset; 0, "", when unknown; "Idle" is what the trace says of 0). */
uint32_t etl_owners_process_name(const etl_owners *o, uint32_t pid, uint64_t ts);
/* The thread's name (strtab offset, 0 when none). */
uint32_t etl_owners_thread_name_of(const etl_owners *o, uint32_t tid, uint32_t pid);

#endif

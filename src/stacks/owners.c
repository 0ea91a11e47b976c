/* owners.c - see owners.h. */
#include "stacks/owners.h"

#include <stdlib.h>
#include <string.h>
#include "base/sort.h"

void etl_owners_init(etl_owners *o, etl_strtab *names)
{
    memset(o, 0, sizeof *o);
    etl_idmap_init(&o->thread_names);
    o->names = names;
}

void etl_owners_free(etl_owners *o)
{
    free(o->threads);
    free(o->procs);
    etl_idmap_free(&o->thread_names);
    memset(o, 0, sizeof *o);
}

static etl_status push(etl_owner_start **v, uint32_t *n, uint32_t *cap, etl_owner_start s)
{
    if (*n == *cap) {
        uint32_t c = *cap ? *cap * 2 : 256;
        if (c < *cap) return ETL_E_RANGE;
        etl_owner_start *p = realloc(*v, c * sizeof *p);
        if (!p) return ETL_E_NOMEM;
        *v = p;
        *cap = c;
    }
    (*v)[(*n)++] = s;
    return ETL_OK;
}

etl_status etl_owners_thread(etl_owners *o, uint32_t tid, uint32_t pid, uint64_t ts)
{
    return push(&o->threads, &o->nthreads, &o->capthreads, (etl_owner_start){{tid, ts}, pid, 0});
}

etl_status etl_owners_thread_name(etl_owners *o, uint32_t tid, uint32_t pid, uint32_t name)
{
    return etl_idmap_put(&o->thread_names, (uint64_t)tid << 32 | pid, name);
}

etl_status etl_owners_process(etl_owners *o, uint32_t pid, uint64_t ts, uint32_t name)
{
    return push(&o->procs, &o->nprocs, &o->capprocs, (etl_owner_start){{pid, ts}, 0, name});
}

static int cmp_start(const void *a, const void *b)
{
    const etl_owner_start *x = a, *y = b;
    for (int i = 0; i < 2; i++)
        if (x->id_ts[i] != y->id_ts[i]) return x->id_ts[i] < y->id_ts[i] ? -1 : 1;
    return 0;
}

void etl_owners_seal(etl_owners *o)
{
    /* qsort is not stable: equal (id, time) pairs keep an arbitrary one, as simultaneous events do. */
    etl_sort(o->threads, o->nthreads, sizeof *o->threads, cmp_start);
    etl_sort(o->procs, o->nprocs, sizeof *o->procs, cmp_start);
}

/* The last start of id at or before ts, else the first after, else NULL. */
static const etl_owner_start *find(const etl_owner_start *v, uint32_t n, uint32_t id, uint64_t ts)
{
    uint32_t lo = 0, hi = n;
    while (lo < hi) { /* first entry > (id, ts) */
        uint32_t mid = lo + (hi - lo) / 2;
        if (v[mid].id_ts[0] < id || (v[mid].id_ts[0] == id && v[mid].id_ts[1] <= ts)) lo = mid + 1;
        else hi = mid;
    }
    if (lo > 0 && v[lo - 1].id_ts[0] == id) return &v[lo - 1];
    if (lo < n && v[lo].id_ts[0] == id) return &v[lo];
    return NULL;
}

uint32_t etl_owners_pid(const etl_owners *o, uint32_t tid, uint64_t ts)
{
    if (tid == 0) return 0;
    const etl_owner_start *s = find(o->threads, o->nthreads, tid, ts);
    return s ? s->pid : ETL_PID_UNKNOWN;
}

uint32_t etl_owners_process_name(const etl_owners *o, uint32_t pid, uint64_t ts)
{
    const etl_owner_start *s = find(o->procs, o->nprocs, pid, ts);
    return s ? s->name : 0;
}

uint32_t etl_owners_thread_name_of(const etl_owners *o, uint32_t tid, uint32_t pid)
{
    uint32_t v = etl_idmap_get(&o->thread_names, (uint64_t)tid << 32 | pid);
    return v == ETL_IDMAP_EMPTY ? 0 : v;
}

/*
 * fuzz_profile.c - the sampled profile (src/stacks: owners, images, the stack-key
 * table, pending samples and their walks) on arbitrary bytes, then every view of
 * it: the pivot by every key and by all four, the folded stacks, the butterfly of
 * the first function. Run twice, over the whole trace and over a window with a
 * thread filter taken from the first run. Nothing may crash, leak or read out of
 * bounds, and the totals must agree: threads, processes, modules, functions,
 * stacks and each pivot's top level all sum to the samples; the first run again
 * with no_stacks counts the same.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include "etlkit/etlkit.h"
#include "etlkit/profile.h"

static volatile uint64_t sink;

static void check_pivot(const etl_profile *p, const etl_profile_by *by, unsigned nby)
{
    etl_profile_row *rows;
    size_t n;
    if (etl_profile_pivot(p, by, nby, 0, &rows, &n) != ETL_OK) abort();
    uint64_t top = 0;
    for (size_t i = 0; i < n; i++) {
        if (rows[i].depth >= nby || rows[i].by != by[rows[i].depth]) abort();
        if (rows[i].depth == 0) top += rows[i].samples;
        size_t lim = by[rows[i].depth] == ETL_PROFILE_BY_PROCESS  ? p->nprocesses
                     : by[rows[i].depth] == ETL_PROFILE_BY_THREAD ? p->nthreads
                     : by[rows[i].depth] == ETL_PROFILE_BY_MODULE ? p->nmodules
                                                                  : p->nfunctions;
        if (rows[i].index >= lim) abort();
    }
    if (top != p->samples) abort();
    free(rows);
}

static void check(const etl_profile *p)
{
    uint64_t t = 0, pr = 0, m = 0, f = 0, s = 0, ws = 0;
    for (size_t i = 0; i < p->nthreads; i++) {
        t += p->threads[i].samples;
        ws += p->threads[i].with_stack;
        if (p->threads[i].process >= p->nprocesses || !p->threads[i].name) abort();
    }
    for (size_t i = 0; i < p->nprocesses; i++) pr += p->processes[i].samples;
    for (size_t i = 0; i < p->nmodules; i++) m += p->modules[i].samples;
    for (size_t i = 0; i < p->nfunctions; i++) {
        f += p->functions[i].samples;
        if (p->functions[i].module >= p->nmodules) abort();
    }
    for (size_t i = 0; i < p->nstacks; i++) {
        s += p->stacks[i].samples;
        if (p->stacks[i].thread >= p->nthreads) abort();
        uint32_t n;
        const etl_profile_frame *fr = etl_profile_stack_frames(p, p->stacks[i].stack, &n);
        for (uint32_t k = 0; k < n; k++) {
            if (fr[k].image != ETL_PROFILE_NONE && fr[k].image >= p->nimages) abort();
            sink += fr[k].address;
        }
    }
    if (t != p->samples || pr != p->samples || m != p->samples || f != p->samples || s != p->samples) abort();
    if (ws != p->with_stack || p->with_stack > p->samples || p->unknown > p->samples) abort();

    static const etl_profile_by all[4] = {ETL_PROFILE_BY_PROCESS, ETL_PROFILE_BY_THREAD, ETL_PROFILE_BY_MODULE,
                                          ETL_PROFILE_BY_FUNCTION};
    static const etl_profile_by rev[4] = {ETL_PROFILE_BY_FUNCTION, ETL_PROFILE_BY_MODULE, ETL_PROFILE_BY_THREAD,
                                          ETL_PROFILE_BY_PROCESS};
    for (unsigned k = 0; k < 4; k++) check_pivot(p, &all[k], 1);
    check_pivot(p, all, 4);
    check_pivot(p, rev, 4);

    FILE *null = fopen("/dev/null", "w");
    if (!null) abort();
    if (etl_profile_write_folded(p, null) != ETL_OK) abort();
    fclose(null);

    if (p->nfunctions) {
        char label[2048];
        etl_profile_function_label(p, 0, label, sizeof label);
        etl_profile_butterfly b;
        /* ETL_END too: a walk need not start at its sample's InstructionPointer. */
        etl_status st = etl_profile_butterfly_get(p, label, &b);
        if (st != ETL_OK && st != ETL_END) abort();
        if (b.self > b.total || b.total > p->samples) abort();
        uint64_t c = 0;
        for (size_t i = 0; i < b.ncallers; i++) c += b.callers[i].samples;
        if (c > b.total) abort();
        etl_profile_butterfly_free(&b);
    }
}

/* A run with no_stacks counts what the full run counts, every list in the same order, and keeps no stack. */
static void check_no_stacks(etl_reader *r, const etl_profile_options *o, const etl_profile *full)
{
    etl_profile_options n = *o;
    n.no_stacks = true;
    etl_profile p;
    if (etl_profile_run(r, &n, &p) != ETL_OK) abort();
    if (p.samples != full->samples || p.with_stack != full->with_stack || p.unknown != full->unknown ||
        p.walks_other != full->walks_other || p.key_refs_unresolved != full->key_refs_unresolved ||
        p.user_parts_dropped != full->user_parts_dropped || p.samples_in_trace != full->samples_in_trace ||
        p.nthreads != full->nthreads || p.nfunctions != full->nfunctions || p.nmodules != full->nmodules ||
        p.nprocesses != full->nprocesses || p.nstacks)
        abort();
    for (size_t i = 0; i < p.nthreads; i++)
        if (p.threads[i].tid != full->threads[i].tid || p.threads[i].samples != full->threads[i].samples ||
            p.threads[i].with_stack != full->threads[i].with_stack)
            abort();
    for (size_t i = 0; i < p.nfunctions; i++)
        if (p.functions[i].offset != full->functions[i].offset || p.functions[i].samples != full->functions[i].samples)
            abort();
    etl_profile_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open_memory(data, size, NULL, &r, &d) != ETL_OK) return 0;
    etl_profile p;
    etl_profile_options o = {.sz = sizeof o, .pid = -1, .tid = -1};
    etl_status st = etl_profile_run(r, &o, &p);
    if (st != ETL_OK) abort(); /* only out of memory may fail, and the limits keep us far from it */
    check(&p);
    check_no_stacks(r, &o, &p);
    /* The middle third of the trace, the busiest thread's samples. */
    o.v0 = p.v1 / 3;
    o.v1 = p.v1 - p.v1 / 3;
    if (p.nthreads) o.tid = p.threads[0].tid;
    etl_profile_free(&p);
    if (etl_profile_run(r, &o, &p) != ETL_OK) abort();
    check(&p);
    etl_profile_free(&p);
    etl_reader_close(r);
    return 0;
}

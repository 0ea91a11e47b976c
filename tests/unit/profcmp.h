/*
 * profcmp.h - test-only: a profile run with no_stacks must count what the full run
 * counts. profcmp_no_stacks(r, o, full) runs r again with o's options and no_stacks
 * (on one thread and on two) and checks every number and list of full but its stacks,
 * which that run leaves empty. Needs cmocka (included before) and etlkit/profile.h.
 */
#ifndef ETLKIT_TESTS_PROFCMP_H
#define ETLKIT_TESTS_PROFCMP_H

#include <string.h>
#include "etlkit/profile.h"

static void profcmp_same_counts(const etl_profile *a, const etl_profile *b)
{
    assert_int_equal(a->samples, b->samples);
    assert_int_equal(a->samples_in_trace, b->samples_in_trace);
    assert_int_equal(a->with_stack, b->with_stack);
    assert_int_equal(a->unknown, b->unknown);
    assert_int_equal(a->interval_ns, b->interval_ns);
    assert_int_equal(a->interval_logged, b->interval_logged);
    assert_int_equal(a->interval_changes, b->interval_changes);
    assert_int_equal(a->v0, b->v0);
    assert_int_equal(a->v1, b->v1);
    assert_int_equal(a->key_refs_unresolved, b->key_refs_unresolved);
    assert_int_equal(a->user_parts_dropped, b->user_parts_dropped);
    assert_int_equal(a->walks_other, b->walks_other);
    for (int k = 0; k < ETL_PROFILE_ANOMALIES; k++) {
        uint64_t x, y;
        assert_int_equal(etl_profile_anomaly_get(a, (etl_profile_anomaly)k, &x), ETL_OK);
        assert_int_equal(etl_profile_anomaly_get(b, (etl_profile_anomaly)k, &y), ETL_OK);
        assert_int_equal(x, y);
    }
    assert_int_equal(a->st.bad_records, b->st.bad_records);
    assert_int_equal(a->nthreads, b->nthreads);
    for (size_t i = 0; i < a->nthreads; i++) {
        const etl_profile_thread *x = &a->threads[i], *y = &b->threads[i];
        assert_int_equal(x->tid, y->tid);
        assert_int_equal(x->pid, y->pid);
        assert_int_equal(x->process, y->process);
        assert_string_equal(x->name, y->name);
        assert_int_equal(x->samples, y->samples);
        assert_int_equal(x->with_stack, y->with_stack);
    }
    assert_int_equal(a->nprocesses, b->nprocesses);
    for (size_t i = 0; i < a->nprocesses; i++) {
        assert_int_equal(a->processes[i].pid, b->processes[i].pid);
        assert_string_equal(a->processes[i].name, b->processes[i].name);
        assert_int_equal(a->processes[i].samples, b->processes[i].samples);
    }
    assert_int_equal(a->nmodules, b->nmodules);
    for (size_t i = 0; i < a->nmodules; i++) {
        assert_string_equal(a->modules[i].name, b->modules[i].name);
        assert_int_equal(a->modules[i].samples, b->modules[i].samples);
    }
    assert_int_equal(a->nfunctions, b->nfunctions);
    for (size_t i = 0; i < a->nfunctions; i++) {
        assert_int_equal(a->functions[i].module, b->functions[i].module);
        assert_int_equal(a->functions[i].offset, b->functions[i].offset);
        assert_int_equal(a->functions[i].samples, b->functions[i].samples);
    }
    assert_int_equal(a->nimages, b->nimages);
    /* The cells under every view: the pivot by thread, then function. */
    etl_profile_by by[2] = {ETL_PROFILE_BY_THREAD, ETL_PROFILE_BY_FUNCTION};
    etl_profile_row *ra, *rb;
    size_t na, nb;
    assert_int_equal(etl_profile_pivot(a, by, 2, 0, &ra, &na), ETL_OK);
    assert_int_equal(etl_profile_pivot(b, by, 2, 0, &rb, &nb), ETL_OK);
    assert_int_equal(na, nb);
    for (size_t i = 0; i < na; i++) {
        assert_int_equal(ra[i].depth, rb[i].depth);
        assert_int_equal(ra[i].index, rb[i].index);
        assert_int_equal(ra[i].samples, rb[i].samples);
    }
    free(ra);
    free(rb);
}

static void profcmp_no_stacks(etl_reader *r, const etl_profile_options *o, const etl_profile *full)
{
    for (unsigned threads = 1; threads <= 2; threads++) {
        etl_profile_options n = *o;
        n.sz = sizeof n;
        n.no_stacks = true;
        n.threads = threads;
        etl_profile p;
        assert_int_equal(etl_profile_run(r, &n, &p), ETL_OK);
        profcmp_same_counts(full, &p);
        assert_int_equal(p.nstacks, 0);
        etl_profile_free(&p);
    }
}

#endif

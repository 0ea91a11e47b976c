/*
 * test_profile_agree.c - the profile's outputs agree with each other and tell what they
 * leave out, on tests/unit/profagree.h's traces (explore8 F1, F3, F4, F6, F7):
 *   - one module+offset in three image lives is one folded line (the flame graph's path);
 *   - a sample whose thread no Thread event names takes the process its walk names, and
 *     its address and its frames are mapped in one process (the sample's) whatever its
 *     walk says: --json's module, the export's sample.image_id and the first frame agree;
 *     the --process and --thread filters select it by that process;
 *   - an impossible ImageSize is damage (told, st.bad_records) and takes no other image's samples;
 *   - a walk or a key definition of more than 192 frames keeps the innermost 192, counted;
 *   - every count the same with no_stacks (profcmp.h), on one thread and two.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "base/platform.h"
#include "etlkit/etlkit.h"
#include "etlkit/profile.h"
#include "profcmp.h"
#include "profagree.h"

static char tmpdir[256];

static int setup(void **s)
{
    (void)s;
    return tu_tmpdir_make(tmpdir, sizeof tmpdir, "profagree");
}

static int teardown(void **s)
{
    (void)s;
    return tu_tmpdir_remove(tmpdir);
}

/* The diagnostics the reader told, one per line. */
static char told[8192];

static void on_diag(void *ctx, const etl_diag *d)
{
    (void)ctx;
    size_t n = strlen(told);
    snprintf(told + n, sizeof told - n, "%s\n", d->msg);
}

static etl_reader *write_trace(const char *name)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    pb_write(path);
    etl_reader *r;
    etl_diag d;
    etl_reader_options o = {sizeof o, on_diag, NULL};
    told[0] = 0;
    assert_int_equal(etl_reader_open(path, &o, &r, &d), ETL_OK);
    return r;
}

static char *folded(const etl_profile *p)
{
    char *buf = NULL;
    size_t n = 0;
    etl_memstream ms;
    FILE *f = etl_memstream_open(&ms, &buf, &n);
    assert_non_null(f);
    assert_int_equal(etl_profile_write_folded(p, f), ETL_OK);
    assert_int_equal(etl_memstream_close(&ms), 0);
    assert_non_null(buf);
    return buf;
}

static uint64_t anomaly(const etl_profile *p, etl_profile_anomaly which)
{
    uint64_t n = UINT64_MAX;
    assert_int_equal(etl_profile_anomaly_get(p, which, &n), ETL_OK);
    return n;
}

static etl_status run(etl_reader *r, int64_t pid, const char *process, int64_t tid, etl_profile *p)
{
    etl_profile_options o;
    etl_profile_options_init(&o);
    o.pid = pid;
    o.process = process;
    o.tid = tid;
    etl_status st = etl_profile_run(r, &o, p);
    if (st == ETL_OK) profcmp_no_stacks(r, &o, p);
    return st;
}

/* "name samples, ..." of the modules, in order. */
static void expect_modules(const etl_profile *p, const char *want)
{
    char got[1024] = "";
    for (size_t i = 0; i < p->nmodules; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s %llu", i ? ", " : "", p->modules[i].name,
                 (unsigned long long)p->modules[i].samples);
    assert_string_equal(got, want);
}

/* F1: three lives of plug.dll (two at one base, one at another) are one module+offset: one folded line. */
static void test_reload_one_line(void **state)
{
    (void)state;
    pa_build_reload();
    etl_reader *r = write_trace("reload.etl");
    etl_profile p;
    assert_int_equal(run(r, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 7);
    assert_true(p.nstacks >= 3); /* (address, image) sequences: one per life */
    char *text = folded(&p);
    assert_string_equal(text,
                        "app.exe (100);main (101);ntdll.dll+0x1000;app.exe+0x100;plug.dll+0x10;plug.dll+0x20 6\n"
                        "app.exe (100);main (101);ntdll.dll+0x1000;app.exe+0x100;plug.dll+0x10;app.exe+0x200 1\n");
    free(text);
    etl_profile_butterfly b;
    assert_int_equal(etl_profile_butterfly_get(&p, "plug.dll+0x10", &b), ETL_OK);
    assert_int_equal(b.total, 7);
    assert_int_equal(b.ncallers, 1);
    assert_int_equal(b.ncallees, 2);
    assert_int_equal(b.callees[0].samples, 6);
    etl_profile_butterfly_free(&b);
    etl_profile_free(&p);
    etl_reader_close(r);
}

typedef struct seen {
    const etl_profile *p;
    unsigned n;
    char line[8][200];
} seen;

/* Each sample: tid, pid, its address's image and its first frame's (the same address in one process). */
static etl_status on_sample(void *ctx, const etl_profile_sample *s)
{
    seen *v = ctx;
    assert_true(v->n < 8);
    snprintf(v->line[v->n++], sizeof v->line[0], "%u %d %d", s->tid, s->pid == ETL_PROFILE_NONE ? -1 : (int)s->pid,
             s->ip_image == ETL_PROFILE_NONE ? -1 : (int)s->ip_image);
    return ETL_OK;
}

/* F4: one process for a sample's address and its frames; a thread no event names takes its walk's. */
static void test_threads_one_process(void **state)
{
    (void)state;
    pa_build_threads();
    etl_reader *r = write_trace("threads.etl");
    etl_profile p;
    assert_int_equal(run(r, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 4);
    assert_int_equal(p.with_stack, 3);
    assert_int_equal(p.key_refs_unresolved, 1);
    assert_int_equal(anomaly(&p, ETL_PROFILE_PROCESS_FROM_WALK), 1);
    assert_int_equal(anomaly(&p, ETL_PROFILE_PROCESS_DISAGREES), 1);
    assert_int_equal(anomaly(&p, ETL_PROFILE_WALKS_CUT), 0);
    assert_int_equal(anomaly(&p, ETL_PROFILE_IMAGE_SIZES_BAD), 0);
    char *text = folded(&p);
    /* 4242's walk names 100: app.exe's ntdll.dll, as --json's module says; 101's walk names 200, its thread's
     * process (100) maps both its address and its frames (app.exe+0x400, not Unknown in tool.exe). */
    assert_string_equal(text, "app.exe (100);Thread (4242);app.exe+0x300;ntdll.dll+0x5000 1\n"
                              "Unknown (?);Thread (4343);Unknown+0x7ff800005000 1\n"
                              "app.exe (100);main (101);app.exe+0x400;ntdll.dll+0x6000 1\n"
                              "app.exe (100);main (101);app.exe+0x500;ntdll.dll+0x7000 1\n");
    free(text);
    expect_modules(&p, "ntdll.dll 2, ntoskrnl.exe 1, Unknown 1");
    const etl_profile_thread *t = NULL;
    for (size_t i = 0; i < p.nthreads; i++)
        if (p.threads[i].tid == 4242) t = &p.threads[i];
    assert_non_null(t);
    assert_int_equal(t->pid, 100);
    assert_string_equal(p.processes[t->process].name, "app.exe");
    etl_profile_free(&p);

    /* The filters select it by that process. */
    assert_int_equal(run(r, 100, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 3);
    etl_profile_free(&p);
    assert_int_equal(run(r, -1, "app", -1, &p), ETL_OK);
    assert_int_equal(p.samples, 3);
    etl_profile_free(&p);
    assert_int_equal(run(r, -1, "Unknown", -1, &p), ETL_OK);
    assert_int_equal(p.samples, 1);
    etl_profile_free(&p);
    assert_int_equal(run(r, 200, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 0);
    etl_profile_free(&p);
    assert_int_equal(run(r, -1, NULL, 4242, &p), ETL_OK);
    assert_int_equal(p.samples, 1);
    expect_modules(&p, "ntdll.dll 1");
    etl_profile_free(&p);

    /* The samples one by one (the export's rows): the address's image is the first frame's, on one thread and two. */
    for (unsigned threads = 1; threads <= 2; threads++) {
        seen v = {.p = &p};
        etl_profile_options o;
        etl_profile_options_init(&o);
        o.threads = threads;
        assert_int_equal(etl_profile_run_each(r, &o, on_sample, &v, &p), ETL_OK);
        assert_int_equal(v.n, 4);
        for (unsigned i = 0; i < v.n; i++) {
            unsigned tid;
            int pid, img;
            assert_int_equal(sscanf(v.line[i], "%u %d %d", &tid, &pid, &img), 3);
            if (tid == 4242 || (tid == 101 && img != -1 && p.images[img].base == NTDLL)) {
                assert_int_equal(pid, 100);
                assert_int_not_equal(img, -1);
                assert_int_equal(p.images[img].pid, 100); /* app.exe's ntdll.dll, not tool.exe's */
            }
            if (tid == 4343) assert_true(pid == -1 && img == -1);
        }
        for (size_t s = 0; s < p.nstacks; s++) {
            uint32_t n;
            const etl_profile_frame *f = etl_profile_stack_frames(&p, p.stacks[s].stack, &n);
            for (uint32_t k = 0; k < n; k++)
                if (f[k].image != ETL_PROFILE_NONE) assert_int_not_equal(p.images[f[k].image].pid, 200);
        }
        etl_profile_free(&p);
    }
    etl_reader_close(r);
}

/* F3: an ImageSize past 32 bits is damage, told where it lies; the image takes no other image's samples. */
static void test_bigsize(void **state)
{
    (void)state;
    pa_build_bigsize();
    etl_reader *r = write_trace("bigsize.etl");
    etl_profile p;
    assert_int_equal(run(r, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 3);
    expect_modules(&p, "ntdll.dll 1, other.dll 1, Unknown 1");
    assert_int_equal(anomaly(&p, ETL_PROFILE_IMAGE_SIZES_BAD), 1);
    assert_true(etl_stats_damaged(&p.st));
    assert_int_equal(p.st.bad_records, 1);
    assert_non_null(strstr(p.st.first_problem, "ImageSize 0xffffffffffffffff"));
    assert_true(p.st.first_problem_offset != UINT64_MAX);
    assert_non_null(strstr(told, "dbghelp.dll"));
    assert_non_null(strstr(told, "file offset 0x"));
    /* As logged, for the image lists. */
    size_t i = 0;
    while (i < p.nimages && strcmp(p.images[i].name, "dbghelp.dll") != 0) i++;
    assert_true(i < p.nimages);
    assert_int_equal(p.images[i].size, 0xffffffffffffffffull);
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* F7: more than 192 frames: the innermost 192 kept, the walk and the definition counted. */
static void test_deep(void **state)
{
    (void)state;
    pa_build_deep();
    etl_reader *r = write_trace("deep.etl");
    etl_profile p;
    assert_int_equal(run(r, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(p.samples, 3);
    assert_int_equal(p.with_stack, 3);
    assert_int_equal(anomaly(&p, ETL_PROFILE_WALKS_CUT), 2);
    assert_false(etl_stats_damaged(&p.st));
    /* All three stacks are the same 192 frames: one line, its root a.dll+0xc00 (the 192nd frame). */
    char *text = folded(&p);
    assert_non_null(strstr(text, "deep.exe (300);w (301);a.dll+0xc00;a.dll+0xbf0;"));
    assert_non_null(strstr(text, ";a.dll+0x20;a.dll+0x10 3\n"));
    assert_null(strchr(text, '\n')[1] ? "a second line" : NULL);
    free(text);
    for (size_t s = 0; s < p.nstacks; s++) {
        uint32_t n;
        etl_profile_stack_frames(&p, p.stacks[s].stack, &n);
        assert_int_equal(n, 192);
    }
    etl_profile_free(&p);
    etl_reader_close(r);
}

/* The anomalies' getter refuses what it cannot answer. */
static void test_anomaly_args(void **state)
{
    (void)state;
    etl_profile p;
    memset(&p, 0, sizeof p);
    uint64_t n = 7;
    assert_int_equal(etl_profile_anomaly_get(&p, ETL_PROFILE_WALKS_CUT, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_anomaly_get(NULL, ETL_PROFILE_WALKS_CUT, &n), ETL_E_INVALID_ARG);
    assert_int_equal(n, 7);
    pa_build_reload();
    etl_reader *r = write_trace("args.etl");
    assert_int_equal(run(r, -1, NULL, -1, &p), ETL_OK);
    assert_int_equal(etl_profile_anomaly_get(&p, ETL_PROFILE_ANOMALIES, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_anomaly_get(&p, (etl_profile_anomaly)-1, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_profile_anomaly_get(&p, ETL_PROFILE_WALKS_CUT, NULL), ETL_E_INVALID_ARG);
    assert_int_equal(n, 7);
    etl_profile_free(&p);
    etl_reader_close(r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reload_one_line),
        cmocka_unit_test(test_threads_one_process),
        cmocka_unit_test(test_bigsize),
        cmocka_unit_test(test_deep),
        cmocka_unit_test(test_anomaly_args),
    };
    int rc = cmocka_run_group_tests(tests, setup, teardown);
    free(evs);
    return rc;
}

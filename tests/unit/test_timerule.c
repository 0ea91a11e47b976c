/*
 * test_timerule.c - the session window (etl_reader_time_window, issue 18): a record whose
 * time lies far outside the session is damage, the same for every reader of the trace.
 *
 * Traces built byte by byte: a 1 s session (EndTime - StartTime = 1 s, QPC at 10 MHz) on two
 * CPUs logging a CSwitch every millisecond, one of them with the top byte of its timestamp
 * set to 0xFF (a negative LARGE_INTEGER, "window 0 s .. -7205759402 s" before) or 0x7F (a
 * 292-year window before). Every iterator and walk passes that record over, counts it
 * (bad_times, bad_buffers) and tells it with its file offset; the time-ordered scheduler
 * run and the CPU by CPU one give no slice outside the session, no negative duration, and
 * the same end. Compact batches whose FirstTimeStamp or deltas leave the window stop there,
 * told with the batch record's offset.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlbuild.h"
#include "etlkit/container.h"
#include "etlkit/sched.h"
#include "etlkit/ccswap.h"

#define T0 1000000000ull        /* the logfile header record's time: 100 s after boot */
#define TPS 10000000ull         /* QPC ticks per second */
#define SWITCHES 200            /* per CPU, one a millisecond */
#define BUFSZ 0x4000u

typedef struct built {
    eb_file f;
    size_t bad_off;             /* file offset of the damaged record (0: none) */
} built;

/* A CSwitch v2 (PERFINFO64, hook 0x0524) at ts: new thread in, old thread out (waiting). */
static void cswitch(eb_rec *r, uint64_t ts, uint32_t new_tid, uint32_t old_tid)
{
    uint8_t pl[24] = {0};
    eb_w32(pl, new_tid);
    eb_w32(pl + 4, old_tid);
    pl[8] = 8;
    pl[9] = 8;
    pl[0x0C] = 6;  /* WrUserRequest */
    pl[0x0E] = 5;  /* Waiting */
    eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = 0x0524, .ts = ts, .payload = pl, .payload_n = 24};
    eb_rec_kernel(r, &k);
}

static eb_lfh session(void)
{
    eb_lfh h = eb_lfh_default();
    h.ts = T0;
    h.buffer_size = BUFSZ;
    h.end_time = h.start_time + 10000000ull; /* 1 s of 100 ns */
    return h;
}

/*
 * Two CPUs, each alternating threads 100+cpu and 200+cpu every millisecond. With top (not 0),
 * CPU 1's switch `which` gets that top byte on its timestamp.
 */
static void build_cswitch(built *b, uint8_t top, unsigned which)
{
    eb_init(&b->f);
    b->bad_off = 0;
    eb_lfh h = session();
    eb_header_buffer(&b->f, &h, 0);
    eb_end(&b->f);
    for (unsigned cpu = 0; cpu < 2; cpu++) {
        size_t at = eb_begin(&b->f, &(eb_bufopt){.size = BUFSZ, .seq = 1 + cpu, .cpu = (uint16_t)cpu,
                                                 .timestamp = T0 + TPS});
        for (unsigned i = 0; i < SWITCHES; i++) {
            uint64_t ts = T0 + (i + 1) * (TPS / 1000);
            if (top && cpu == 1 && i == which) ts = (ts & 0x00FFFFFFFFFFFFFFull) | (uint64_t)top << 56;
            eb_rec r;
            uint32_t a = 100 + cpu, z = 200 + cpu;
            cswitch(&r, ts, i & 1 ? a : z, i & 1 ? z : a);
            size_t off = eb_add_rec(&b->f, &r);
            if (top && cpu == 1 && i == which) b->bad_off = at + off;
        }
        eb_end(&b->f);
    }
}

typedef struct diags {
    unsigned n;
    uint64_t off[64];
    char msg[64][512];
} diags;

static void on_diag(void *ctx, const etl_diag *d)
{
    diags *g = ctx;
    if (g->n < 64) {
        g->off[g->n] = d->file_offset;
        snprintf(g->msg[g->n], sizeof g->msg[0], "%s", d->msg);
    }
    g->n++;
}

static etl_reader *open_built(const built *b, diags *g)
{
    memset(g, 0, sizeof *g);
    etl_reader_options o = {sizeof o, on_diag, g};
    etl_reader *r = NULL;
    etl_diag d;
    assert_int_equal(etl_reader_open_memory(b->f.p, b->f.n, &o, &r, &d), ETL_OK);
    return r;
}

/* The one problem told: a bad time at the record's file offset, naming it. */
static void told_once(const diags *g, size_t off)
{
    assert_int_equal(g->n, 1);
    assert_int_equal(g->off[0], off);
    char want[64];
    snprintf(want, sizeof want, "file offset 0x%zx", off);
    if (!strstr(g->msg[0], want) || !strstr(g->msg[0], "outside the session"))
        fail_msg("message: %s (wanted '%s')", g->msg[0], want);
}

static void test_window(void **state)
{
    (void)state;
    built b;
    build_cswitch(&b, 0, 0);
    diags g;
    etl_reader *r = open_built(&b, &g);
    uint64_t lo, hi;
    etl_reader_time_window(r, &lo, &hi);
    /* [t0 - 60 s, EndTime + 1 % of the session, at least 5 s]. */
    assert_int_equal(lo, T0 - 60 * TPS);
    assert_int_equal(hi, T0 + TPS + 5 * TPS);
    assert_int_equal(etl_reader_end_ts(r), T0 + TPS);
    assert_int_equal(g.n, 0);
    etl_reader_close(r);
    eb_free(&b.f);

    /* EndTime not after StartTime (not closed cleanly): the last buffer flush ends the session. */
    build_cswitch(&b, 0, 0);
    eb_w64(b.f.p + 0x48 + 0x20 + 0x10, 0); /* EndTime */
    eb_w64(b.f.p + b.f.boff[1] + 0x10, T0 + TPS / 2); /* CPU 0's flush: CPU 1's is the last */
    r = open_built(&b, &g);
    etl_reader_time_window(r, &lo, &hi);
    assert_int_equal(lo, T0 - 60 * TPS);
    assert_int_equal(hi, T0 + TPS + 60 * TPS); /* no EndTime to trust: the session's length, 60 s at least */
    assert_int_equal(etl_reader_end_ts(r), 0);
    assert_int_equal(g.n, 0);
    assert_false(etl_stats_damaged(etl_reader_stats_get(r)));
    etl_reader_close(r);
    eb_free(&b.f);

    /* An EndTime 292 years on, far after the last flush: damage, told at its offset; the flush ends the session. */
    build_cswitch(&b, 0, 0);
    b.f.p[0x48 + 0x20 + 0x10 + 7] = 0x7F;
    r = open_built(&b, &g);
    etl_reader_time_window(r, &lo, &hi);
    assert_int_equal(hi, T0 + TPS + 60 * TPS);
    assert_int_equal(etl_reader_end_ts(r), 0);
    assert_int_equal(g.n, 1);
    assert_int_equal(g.off[0], 0x78);
    assert_non_null(strstr(g.msg[0], "EndTime"));
    assert_int_equal(etl_reader_stats_get(r)->bad_times, 1);
    assert_true(etl_stats_damaged(etl_reader_stats_get(r)));
    etl_reader_close(r);
    eb_free(&b.f);
}

/* Every way of reading records: the damaged one is passed over, counted and told once. */
static void container_verdict(uint8_t top)
{
    built b;
    build_cswitch(&b, top, 57);
    const uint64_t total = 1 + 2 * SWITCHES; /* the logfile header record too */
    diags g;
    uint64_t lo, hi;

    /* File order. */
    etl_reader *r = open_built(&b, &g);
    etl_reader_time_window(r, &lo, &hi);
    etl_iter *it;
    etl_record rec;
    uint64_t n = 0;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    while (etl_iter_next(it, &rec) == ETL_OK) {
        n++;
        assert_true(rec.ts >= lo && rec.ts <= hi);
    }
    const etl_stats *st = etl_iter_stats_get(it);
    assert_int_equal(n, total - 1);
    assert_int_equal(st->records, total - 1);
    assert_int_equal(st->bad_times, 1);
    assert_int_equal(st->bad_buffers, 1);
    assert_int_equal(st->bad_records, 0);
    assert_int_equal(st->first_problem_offset, b.bad_off);
    assert_true(etl_stats_damaged(st));
    told_once(&g, b.bad_off);
    etl_iter_close(it);
    etl_reader_close(r);

    /* Time order: the merge never sees it, its merge time never leaves the session. */
    r = open_built(&b, &g);
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    n = 0;
    uint64_t prev = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        n++;
        assert_true(rec.ts >= prev);
        prev = rec.ts;
        assert_true(etl_iter_merge_ts(it) <= hi);
    }
    assert_int_equal(n, total - 1);
    assert_int_equal(etl_iter_stats_get(it)->bad_times, 1);
    told_once(&g, b.bad_off);
    etl_iter_close(it);
    etl_reader_close(r);

    /* The buffer walks (info's, the per-CPU run's): the same verdict. */
    r = open_built(&b, &g);
    assert_int_equal(etl_iter_open_range(r, 0, SIZE_MAX, &it), ETL_OK);
    etl_walk w;
    etl_krec k;
    n = 0;
    while (etl_iter_next_buffer(it, &w) == ETL_OK) {
        int kind;
        while ((kind = etl_walk_next(&w, &k)) != ETL_WALK_END) {
            n++;
            uint64_t ts = kind == ETL_WALK_KERNEL ? k.ts : w.full.ts;
            assert_true(ts >= lo && ts <= hi);
        }
    }
    assert_int_equal(n, total - 1);
    assert_int_equal(etl_iter_stats_get(it)->bad_times, 1);
    told_once(&g, b.bad_off);
    etl_iter_close(it);
    etl_reader_close(r);

    /* dump's iterators keep it, flagged, and say so all the same. */
    r = open_built(&b, &g);
    etl_reader_keep_bad_times(r, true);
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    n = 0;
    unsigned flagged = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        n++;
        if (rec.has & ETL_REC_BAD_TS) {
            flagged++;
            assert_int_equal(b.f.boff[2] + rec.offset, b.bad_off);
            assert_int_equal(rec.cpu, 1);
        }
        /* Where its CPU's time stood: its own time moves nothing. */
        assert_true(etl_iter_merge_ts(it) <= hi);
    }
    assert_int_equal(n, total);
    assert_int_equal(flagged, 1);
    assert_int_equal(etl_iter_stats_get(it)->bad_times, 1);
    told_once(&g, b.bad_off);
    etl_iter_close(it);
    etl_reader_close(r);
    eb_free(&b.f);
}

static void test_container_ff(void **state)
{
    (void)state;
    container_verdict(0xFF);
}

static void test_container_7f(void **state)
{
    (void)state;
    container_verdict(0x7F);
}

/* ---- the scheduler: both paths ------------------------------------------------------ */

typedef struct slices {
    int64_t end_ns;             /* the session's end: no slice may pass it */
    unsigned rows, bad;
    int64_t busy;               /* ns of the non-idle slices */
} slices;

static void check_row(slices *s, const etl_sched_row *row)
{
    s->rows++;
    /* No negative duration, nothing outside [0, the session's end]. */
    if (row->si < 0 || row->nso < row->si || row->nso > s->end_ns) s->bad++;
    if (row->new_thread != ETL_SCHED_IDLE && row->nso >= row->si) s->busy += row->nso - row->si;
}

static void on_row(void *ctx, const etl_sched_row *row) { check_row(ctx, row); }

typedef struct pc_state {
    slices s;
} pc_state;

static void *pc_open(void *ctx)
{
    pc_state *p = calloc(1, sizeof *p);
    p->s.end_ns = ((slices *)ctx)->end_ns;
    return p;
}

static void pc_row(void *state, const etl_sched_row *row) { check_row(&((pc_state *)state)->s, row); }

static etl_status pc_merge(void *ctx, void *state, const etl_sched *m, const uint32_t *map, size_t n)
{
    (void)m;
    (void)map;
    (void)n;
    slices *t = ctx;
    const pc_state *p = state;
    t->rows += p->s.rows;
    t->bad += p->s.bad;
    t->busy += p->s.busy;
    return ETL_OK;
}

static void pc_close(void *ctx, void *state)
{
    (void)ctx;
    free(state);
}

/*
 * The time-ordered run and the CPU by CPU one on b: the same rows (count, busy time), none
 * outside the session, its end EndTime's; the damage counted and told once at bad_off.
 */
static void both_paths(const built *b, uint64_t bad_times, size_t bad_off, bool percpu_may_refuse)
{
    diags g;
    etl_reader *r = open_built(b, &g);
    const etl_clock *clk = etl_reader_clock(r);
    int64_t session_end = etl_clock_ns(clk, T0 + TPS);

    slices a = {.end_ns = session_end};
    etl_sched_source *src;
    etl_sched *m;
    etl_sched_source_options so = {.sz = sizeof so, .bias = -1, .threads = 1};
    etl_sched_options mo = {.sz = sizeof mo, .on_row = on_row, .ctx = &a};
    assert_int_equal(etl_sched_source_open(r, &so, &src), ETL_OK);
    assert_int_equal(etl_sched_open(clk, etl_reader_cpu_count(r), &mo, &m), ETL_OK);
    const etl_sched_event *ev;
    while (etl_sched_source_next_ref(src, &ev) == ETL_OK) {
        assert_true(etl_clock_ns(clk, ev->ts) <= session_end);
        etl_sched_push(m, ev);
    }
    uint64_t end = etl_sched_end_ts(r, etl_sched_source_stats_get(src)->last_ts);
    assert_int_equal(end, T0 + TPS); /* EndTime's, not the damaged record's */
    etl_sched_finish(m, end);
    etl_stats dmg;
    etl_sched_source_damage(src, &dmg);
    assert_int_equal(dmg.bad_times, bad_times);
    assert_true(etl_stats_damaged(&dmg));
    assert_int_equal(dmg.first_problem_offset, bad_off);
    assert_true(a.rows > 0);
    assert_int_equal(a.bad, 0);
    etl_sched_close(m);
    etl_sched_source_close(src);
    assert_true(g.n >= 1);
    assert_int_equal(g.off[0], bad_off);
    etl_reader_close(r);

    for (unsigned threads = 1; threads <= 2; threads++) {
        r = open_built(b, &g);
        slices p = {.end_ns = session_end};
        etl_sched_percpu_consumer c = {&p, pc_open, pc_row, pc_merge, pc_close, false};
        etl_sched_percpu_options po = {.sz = sizeof po, .bias = -1, .threads = threads};
        etl_sched_percpu_result res;
        etl_status st = etl_sched_percpu_run(r, &po, &c, &res);
        if (st == ETL_E_UNSUPPORTED && percpu_may_refuse) {
            etl_reader_close(r);
            continue;
        }
        assert_int_equal(st, ETL_OK);
        assert_int_equal(res.end_ts, T0 + TPS);
        assert_int_equal(res.damage.bad_times, bad_times);
        assert_int_equal(res.damage.first_problem_offset, bad_off);
        assert_int_equal(p.bad, 0);
        assert_int_equal(p.rows, a.rows);
        assert_int_equal(p.busy, a.busy);
        etl_sched_close(res.model);
        assert_true(g.n >= 1);
        assert_int_equal(g.off[0], bad_off);
        etl_reader_close(r);
    }
}

static void test_sched_ff(void **state)
{
    (void)state;
    built b;
    build_cswitch(&b, 0xFF, 57);
    both_paths(&b, 1, b.bad_off, false);
    eb_free(&b.f);
}

static void test_sched_7f(void **state)
{
    (void)state;
    built b;
    build_cswitch(&b, 0x7F, 57);
    both_paths(&b, 1, b.bad_off, false);
    eb_free(&b.f);
    /* The CPU's very last switch: nothing after it to show the damage but the rule. */
    build_cswitch(&b, 0x7F, SWITCHES - 1);
    both_paths(&b, 1, b.bad_off, false);
    eb_free(&b.f);
}

/* ---- compact batches ------------------------------------------------------------------ */

/*
 * A PERFINFO_CCSWAP_BUFFER payload (kernel-events.md 6.2): FirstTimeStamp, TidTable[16],
 * ThreadBasePriority[16], then records: Lite (form 2, 4 bytes: index in bits 2-5, StateWr
 * in 9-14, delta in 15-31) switching thread index 0 or 1 out, and one Full (form 3, 8 bytes:
 * delta in bits 2-31 of the first word) with delta `full_delta` when it is not 0.
 */
static size_t batch(uint8_t *pl, uint64_t first, uint32_t tid0, uint32_t tid1, unsigned n, uint32_t full_delta)
{
    memset(pl, 0, 0x58);
    eb_w64(pl, first);
    eb_w32(pl + 0x08, tid0);
    eb_w32(pl + 0x0C, tid1);
    pl[0x48] = 8;
    pl[0x49] = 8;
    size_t o = 0x58;
    for (unsigned i = 0; i < n; i++) {
        uint32_t d = 2u | (i & 1u) << 2 | 6u << 9 | (uint32_t)(TPS / 1000) << 15;
        eb_w32(pl + o, d);
        o += 4;
    }
    if (full_delta) {
        eb_w32(pl + o, 3u | full_delta << 2);
        eb_w32(pl + o + 4, 1u | 6u << 4 | 8u << 10);
        o += 8;
    }
    return o;
}

/* One CPU, four batches of 20 switches a millisecond apart; batch `bad` damaged as `how`. */
static void build_batches(built *b, unsigned bad, int how)
{
    eb_init(&b->f);
    b->bad_off = 0;
    eb_lfh h = session();
    eb_header_buffer(&b->f, &h, 0);
    eb_end(&b->f);
    size_t at = eb_begin(&b->f, &(eb_bufopt){.size = BUFSZ, .seq = 1, .cpu = 0, .timestamp = T0 + TPS});
    uint64_t t = T0 + TPS / 1000;
    for (unsigned i = 0; i < 4; i++) {
        uint8_t pl[0x58 + 4 * 20 + 8];
        uint64_t first = t;
        uint32_t full_delta = 0;
        if (i == bad && how == 1) first |= 0x7Full << 56; /* FirstTimeStamp damaged */
        if (i == bad && how == 2) full_delta = (1u << 30) - 1; /* a delta: 107 s on */
        size_t n = batch(pl, first, 100, 200, 20, full_delta);
        t += 20 * (TPS / 1000);
        eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = 0x0525, .ts = t, .payload = pl, .payload_n = n};
        eb_rec r;
        eb_rec_kernel(&r, &k);
        size_t off = eb_add_rec(&b->f, &r);
        if (i == bad) b->bad_off = at + off;
        t += TPS / 1000;
    }
    eb_end(&b->f);
}

static void test_batches(void **state)
{
    (void)state;
    for (int how = 1; how <= 2; how++) {
        built b;
        build_batches(&b, 2, how);
        /* The per-CPU run may leave a CPU whose time goes back to the time-ordered one. */
        both_paths(&b, 1, b.bad_off, true);
        eb_free(&b.f);
        /* The CPU's last batch: no time goes back after it, the per-CPU run keeps the CPU. */
        build_batches(&b, 3, how);
        both_paths(&b, 1, b.bad_off, false);
        eb_free(&b.f);
    }
    /* The expander alone: a delta past the window stops the batch there. */
    uint8_t pl[0x58 + 4 * 20 + 8];
    size_t n = batch(pl, T0, 100, 200, 20, (1u << 30) - 1);
    etl_batch_expander x;
    etl_batch_expand_cpu cpus[1];
    etl_batch_expand_init(&x, cpus, 1);
    etl_batch_expand_window(&x, T0 - 60 * TPS, T0 + 61 * TPS);
    assert_int_equal(etl_batch_expand_begin(&x, 0, (etl_span){pl, n}, 17, 2), ETL_OK);
    etl_cswitch sw;
    unsigned got = 0;
    while (etl_batch_expand_next(&x, &sw) == ETL_OK) {
        assert_true(sw.ts <= T0 + 61 * TPS);
        got++;
    }
    assert_int_equal(got, 19); /* the 20th is pending, the Full record never pairs it */
    assert_int_equal(x.stats.bad_time, 1);
    assert_int_equal(x.last_status, ETL_E_RANGE);
    assert_int_equal(x.last_offset, 0x58 + 4 * 20);
    /* A FirstTimeStamp outside: refused at begin. */
    n = batch(pl, T0 | 0xFFull << 56, 100, 200, 20, 0);
    assert_int_equal(etl_batch_expand_begin(&x, 0, (etl_span){pl, n}, 17, 2), ETL_E_RANGE);
    assert_int_equal(etl_batch_expand_next(&x, &sw), ETL_END);
    assert_int_equal(x.stats.bad_time, 2);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_window),
        cmocka_unit_test(test_container_ff),
        cmocka_unit_test(test_container_7f),
        cmocka_unit_test(test_sched_ff),
        cmocka_unit_test(test_sched_7f),
        cmocka_unit_test(test_batches),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

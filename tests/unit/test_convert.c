/*
 * test_convert.c - etl_convert round trips on generated traces.
 *
 * A seeded generator writes per-CPU streams of CSwitch events (each switch's new
 * thread is the next switch's old thread, as on a real CPU) interleaved with
 * ReadyThread events, through the writer. Then:
 *   full -> compact: the batches in the file are byte for byte the ones a
 *     reference run of the encoder makes from the same switches, so they break
 *     exactly where the five flush conditions say; no CSwitch is left;
 *   compact -> full: every field the compact form carries comes back, the new
 *     thread is paired from the next switch, and the fields it does not carry are
 *     all ones; the ReadyThread events are untouched; every CPU's stream stays in
 *     time order; nothing is counted as damaged.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "testutil.h"
#include "etlkit/etlkit.h"
#include "etlkit/writer.h"

#define NCPU 3
#define NSW 6000
#define BUILD 19041

typedef struct gen_switch {
    etl_cswitch sw;
    int8_t base;
} gen_switch;

static char dir[256];
static gen_switch *sws; /* by CPU then time */
static size_t nsw;

static int setup(void **s)
{
    (void)s;
    return tu_tmpdir_make(dir, sizeof dir, "convert");
}

static int teardown(void **s)
{
    (void)s;
    free(sws);
    return tu_tmpdir_remove(dir); /* kept with ETLKIT_KEEP_TMP, to look at the files after a failure */
}

/* Generates the switches, and writes them (with ReadyThread events) as CSwitch v4 events. */
static void generate(const char *path, uint64_t seed, uint32_t clock)
{
    uint64_t st = seed;
    free(sws);
    sws = calloc(NCPU * NSW, sizeof *sws);
    nsw = 0;
    unsigned bias = etl_max_wait_reason_for_build(BUILD);
    for (unsigned cpu = 0; cpu < NCPU; cpu++) {
        uint64_t t = 1000000 + cpu;
        uint32_t cur = 0; /* idle first */
        for (unsigned i = 0; i < NSW; i++) {
            gen_switch *g = &sws[nsw++];
            uint64_t r = tu_rand(&st);
            /* Mostly short gaps; some past 2^14, 2^17, 2^30 ticks and the age limit. */
            /* Past 2^14, 2^17, the 30-bit delta, and the age limit of either clock (7.8 s). */
            uint64_t gap = r % 1000 < 900 ? 1 + r % 3000 : r % 1000 < 990 ? 20000 + r % 200000
                         : r % 1000 < 995 ? (1ull << 30) + 5 : 30000000000ull;
            t += gap;
            /* Phases: many threads (the TidTable fills) or a few (the 0x400 bytes fill). */
            uint32_t pool = (i / 500) % 2 ? 3 : 40;
            uint32_t next = tu_rand(&st) % 5 == 0 ? 0 : 4 * (1 + (uint32_t)(tu_rand(&st) % pool));
            if (next == cur) next = cur ? 0 : 4;
            etl_cswitch *sw = &g->sw;
            sw->ts = t;
            sw->cpu = (uint16_t)cpu;
            sw->old_tid = cur;
            sw->new_tid = next;
            g->base = (int8_t)(1 + cur % 15);
            sw->old_priority = cur ? (int8_t)(g->base + (int8_t)(tu_rand(&st) % 10)) : 0;
            sw->new_priority = (int8_t)(tu_rand(&st) % 31);
            bool waiting = tu_rand(&st) % 2;
            sw->old_state = waiting ? 5 : (uint8_t)(tu_rand(&st) % 2 ? 1 : 4);
            sw->old_wait_reason = (uint8_t)(waiting ? tu_rand(&st) % bias : 32);
            sw->new_wait_time = tu_rand(&st) % 3 == 0 ? 0 : (uint32_t)(tu_rand(&st) % 5000);
            sw->old_wait_mode = 1;
            sw->old_ideal_processor = (uint8_t)cpu;
            sw->version = 4;
            cur = next;
        }
    }
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.ncpu = NCPU;
    o.buffer_size = 8192;
    o.os_build = BUILD;
    o.start_ts = 1000000;
    o.clock_type = clock;
    o.cpu_mhz = 3000;
    etl_groupmask_set(&o.group_mask, ETL_PERF_CONTEXT_SWITCH);
    etl_groupmask_set(&o.group_mask, ETL_PERF_DISPATCHER);
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    /* Write in global time order, as a machine would: one CPU at a time by time. */
    size_t next[NCPU] = {0};
    for (;;) {
        int best = -1;
        for (int c = 0; c < NCPU; c++)
            if (next[c] < NSW && (best < 0 || sws[c * NSW + next[c]].sw.ts < sws[best * NSW + next[best]].sw.ts))
                best = c;
        if (best < 0) break;
        const etl_cswitch *sw = &sws[best * NSW + next[best]++].sw;
        uint8_t p[32];
        size_t n;
        /* A ReadyThread of the incoming thread just before the switch, on the same CPU. */
        etl_ready_thread rt = {sw->new_tid, 1, 2, 0, 0};
        assert_int_equal(etl_ready_thread_encode(&rt, p, sizeof p, &n), ETL_OK);
        etl_write_event ev = {0};
        ev.cpu = sw->cpu;
        ev.header = ETL_WH_PERFINFO;
        ev.version = 2;
        ev.hook = ETL_HOOK_READY_THREAD;
        ev.ts = sw->ts - 1;
        ev.payload = p;
        ev.len = n;
        assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
        assert_int_equal(etl_cswitch_encode(sw, 4, p, sizeof p, &n), ETL_OK);
        ev.version = 4;
        ev.hook = ETL_HOOK_CSWITCH;
        ev.ts = sw->ts;
        ev.len = n;
        assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    }
    /* The end is after every CPU's last switch (CPU 0's alone left the others' later ones out of the window). */
    uint64_t end = 0;
    for (unsigned c = 0; c < NCPU; c++)
        if (sws[c * NSW + NSW - 1].sw.ts > end) end = sws[c * NSW + NSW - 1].sw.ts;
    assert_int_equal(etl_writer_close(w, end + 10, &d), ETL_OK);
}

/* Walks a file in time order: per-CPU order, no damage; calls fn for each record. */
typedef void (*rec_fn)(const etl_record *r, const etl_event *ev, void *ctx);
static void walk(const char *path, rec_fn fn, void *ctx)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_TIME, &it), ETL_OK);
    etl_record rec;
    etl_event ev;
    uint64_t last[NCPU] = {0};
    while (etl_iter_next(it, &rec) == ETL_OK) {
        assert_true(rec.cpu < NCPU);
        if (rec.buffer_index) {
            if (rec.ts < last[rec.cpu]) fail_msg("cpu %u goes back in time: %llu < %llu", rec.cpu,
                                                 (unsigned long long)rec.ts, (unsigned long long)last[rec.cpu]);
            last[rec.cpu] = rec.ts;
        }
        etl_event_decode(&rec, &ev);
        fn(&rec, &ev, ctx);
    }
    const etl_stats *st = etl_iter_stats_get(it);
    assert_int_equal(st->bad_buffers + st->bad_records, 0);
    etl_iter_close(it);
    etl_reader_close(r);
}

typedef struct compact_check {
    etl_ccswap_encoder enc[NCPU]; /* one reference encoder per CPU: batches are per CPU */
    etl_ccswap_encoder_cpu cpus[NCPU];
    size_t next_sw[NCPU];
    uint64_t batches, cswitch, ready;
    int compact_flag;
} compact_check;

/* Reference: the encoder over cpu's switches until it finishes the next batch. */
static size_t reference_batch(compact_check *c, unsigned cpu, etl_ccswap_batch *b)
{
    while (c->next_sw[cpu] < NSW) {
        const gen_switch *g = &sws[cpu * NSW + c->next_sw[cpu]++];
        etl_ccswap_switch in = {g->sw.ts, g->sw.old_tid, g->sw.new_wait_time, 0, g->sw.old_priority,
                                g->sw.old_priority, g->sw.old_state, g->sw.old_wait_reason};
        assert_int_equal(etl_ccswap_encoder_add(&c->enc[cpu], &in, b), ETL_OK);
        if (b->size) return b->size;
    }
    return 0;
}

static void check_compact_record(const etl_record *r, const etl_event *ev, void *ctx)
{
    compact_check *c = ctx;
    if (ev->kind == ETL_EVENT_CSWITCH) c->cswitch++;
    if (ev->kind == ETL_EVENT_READY_THREAD) c->ready++;
    if (ev->kind == ETL_EVENT_GROUP_MASK && etl_groupmask_test(&ev->u.group_mask, ETL_PERF_COMPACT_CSWITCH))
        c->compact_flag = 1;
    if (ev->kind != ETL_EVENT_CCSWAP_BATCH) return;
    c->batches++;
    etl_ccswap_batch b;
    size_t n = reference_batch(c, r->cpu, &b);
    if (!n) {
        /* The end-of-trace batches come from the final flush. */
        assert_int_equal(etl_ccswap_encoder_flush(&c->enc[r->cpu], &b), ETL_OK);
        assert_int_equal(b.reason, ETL_CCSWAP_FLUSH_END);
    }
    assert_int_equal(r->payload.n, b.size);
    assert_memory_equal(r->payload.p, b.data, b.size);
}

typedef struct full_check {
    size_t next_sw[NCPU];
    uint64_t cswitch, ready, open;
} full_check;

static void check_full_record(const etl_record *r, const etl_event *ev, void *ctx)
{
    full_check *c = ctx;
    (void)r;
    if (ev->kind == ETL_EVENT_READY_THREAD) c->ready++;
    assert_int_not_equal(ev->kind, ETL_EVENT_CCSWAP_BATCH);
    if (ev->kind != ETL_EVENT_CSWITCH) return;
    assert_int_equal(ev->status, ETL_OK);
    const etl_cswitch *got = &ev->u.cswitch;
    unsigned cpu = got->cpu;
    assert_true(c->next_sw[cpu] < NSW);
    const etl_cswitch *want = &sws[cpu * NSW + c->next_sw[cpu]++].sw;
    c->cswitch++;
    assert_int_equal(got->version, 2);
    assert_int_equal(got->ts, want->ts);
    assert_int_equal(got->old_tid, want->old_tid);
    bool last = c->next_sw[cpu] == NSW;
    if (last) {
        assert_int_equal(got->new_tid, UINT32_MAX); /* open: no successor */
        c->open++;
    } else {
        assert_int_equal(got->new_tid, want->new_tid);
    }
    assert_int_equal(got->new_priority, -1);
    assert_int_equal(got->old_wait_mode, 0xFF);
    assert_int_equal(got->old_ideal_processor, 0xFF);
    assert_int_equal(got->old_remaining_quantum, INT32_MIN);
    if (want->old_tid == 0) {
        /* Idle forms: priority 0, no state, no wait time. */
        assert_int_equal(got->old_priority, 0);
        assert_int_equal(got->old_state, 0xFF);
        assert_int_equal(got->new_wait_time, UINT32_MAX);
        return;
    }
    assert_int_equal(got->old_priority, want->old_priority);
    assert_int_equal(got->old_state, want->old_state);
    assert_int_equal(got->old_wait_reason, want->old_state == 5 ? want->old_wait_reason : 0xFF);
    /* A non-zero wait time needs a Full record, which carries it. A zero one is
     * carried by a Full record (delta or priority did not fit Lite), not by a Lite one. */
    if (want->new_wait_time)
        assert_int_equal(got->new_wait_time, want->new_wait_time);
    else
        assert_true(got->new_wait_time == 0 || got->new_wait_time == UINT32_MAX);
}

/* Every batch's bytes, by CPU, one after the other. */
typedef struct batch_bytes {
    uint8_t *p[NCPU];
    size_t n[NCPU];
} batch_bytes;

static void collect_batches(const etl_record *r, const etl_event *ev, void *ctx)
{
    batch_bytes *b = ctx;
    if (ev->kind != ETL_EVENT_CCSWAP_BATCH) return;
    b->p[r->cpu] = realloc(b->p[r->cpu], b->n[r->cpu] + r->payload.n);
    assert_non_null(b->p[r->cpu]);
    memcpy(b->p[r->cpu] + b->n[r->cpu], r->payload.p, r->payload.n);
    b->n[r->cpu] += r->payload.n;
}

static void roundtrip(uint64_t seed, int compress, uint32_t clock)
{
    char full[512], compact[512], back[512];
    snprintf(full, sizeof full, "%s/full-%llu.etl", dir, (unsigned long long)seed);
    snprintf(compact, sizeof compact, "%s/compact-%llu.etl", dir, (unsigned long long)seed);
    snprintf(back, sizeof back, "%s/back-%llu.etl", dir, (unsigned long long)seed);
    generate(full, seed, clock);

    etl_convert_options o = {0};
    o.sz = sizeof o;
    o.cswitch = ETL_CSWITCH_COMPACT;
    o.compress = compress;
    o.bias = -1;
    etl_convert_stats st;
    etl_diag d;
    assert_int_equal(etl_convert(full, compact, &o, &st, &d), ETL_OK);
    assert_int_equal(st.cswitch_in, NCPU * NSW);
    assert_int_equal(st.switches_encoded, NCPU * NSW);
    /* Every flush condition happens in these streams. */
    assert_true(st.encoder.flushes[ETL_CCSWAP_FLUSH_TID_TABLE_FULL] > 0);
    assert_true(st.encoder.flushes[ETL_CCSWAP_FLUSH_AGE] > 0);
    assert_true(st.encoder.flushes[ETL_CCSWAP_FLUSH_NO_ROOM] > 0);
    /* The age test comes first (Chappell's order): a delta past 30 bits can only be the
     * reason when 500 timer ticks are more than 2^30 clock units, as with CPU cycles. */
    if (clock == ETL_CLOCK_CPU_CYCLES)
        assert_true(st.encoder.flushes[ETL_CCSWAP_FLUSH_DELTA_OVERFLOW] > 0);
    else
        assert_int_equal(st.encoder.flushes[ETL_CCSWAP_FLUSH_DELTA_OVERFLOW], 0);
    assert_int_equal(st.encoder.flushes[ETL_CCSWAP_FLUSH_END], NCPU);

    static compact_check cc;
    memset(&cc, 0, sizeof cc);
    etl_reader *r;
    assert_int_equal(etl_reader_open(compact, NULL, &r, &d), ETL_OK);
    const etl_logfile_header *h = etl_reader_header(r);
    for (unsigned c = 0; c < NCPU; c++)
        assert_int_equal(etl_ccswap_encoder_init(&cc.enc[c], &cc.cpus[c], 1, etl_max_wait_reason_for_build(BUILD),
                                                 etl_ccswap_max_age(h->timer_resolution,
                                                                    etl_reader_clock(r)->ticks_per_sec)),
                         ETL_OK);
    etl_reader_close(r);
    walk(compact, check_compact_record, &cc);
    assert_int_equal(cc.cswitch, 0);
    assert_int_equal(cc.ready, NCPU * NSW);
    assert_int_equal(cc.batches, st.batches_out);
    assert_true(cc.compact_flag);

    o.cswitch = ETL_CSWITCH_FULL;
    assert_int_equal(etl_convert(compact, back, &o, &st, &d), ETL_OK);
    assert_int_equal(st.batches_in, cc.batches);
    assert_int_equal(st.order_overflows, 0);
    full_check fc;
    memset(&fc, 0, sizeof fc);
    walk(back, check_full_record, &fc);
    assert_int_equal(fc.cswitch, NCPU * NSW);
    assert_int_equal(fc.ready, NCPU * NSW);
    assert_int_equal(fc.open, NCPU);

    /* And compact again: the fields a batch does not carry stay not carried (a NewThreadWaitTime all ones once
     * became a real wait of 131071 ticks on every non-idle switch, explore12 F2), so the batches are the first's. */
    char again[512];
    snprintf(again, sizeof again, "%s/again-%llu.etl", dir, (unsigned long long)seed);
    o.cswitch = ETL_CSWITCH_COMPACT;
    assert_int_equal(etl_convert(back, again, &o, &st, &d), ETL_OK);
    assert_int_equal(st.encoder.wait_time_clamped, 0);
    assert_int_equal(st.encoder.priority_clamped, 0);
    batch_bytes a = {0}, b = {0};
    walk(compact, collect_batches, &a);
    walk(again, collect_batches, &b);
    for (unsigned c = 0; c < NCPU; c++) {
        assert_int_equal(a.n[c], b.n[c]);
        assert_memory_equal(a.p[c], b.p[c], a.n[c]);
        free(a.p[c]);
        free(b.p[c]);
    }
}

static void test_roundtrip_qpc(void **s) { (void)s; roundtrip(1, 0, ETL_CLOCK_QPC); }
static void test_roundtrip_cycles_compressed(void **s) { (void)s; roundtrip(2, 1, ETL_CLOCK_CPU_CYCLES); }
static void test_roundtrip_system_time(void **s) { (void)s; roundtrip(3, -1, ETL_CLOCK_SYSTEM_TIME); }

/* keep: every record comes back (the header buffer is made anew). */
static void test_keep_is_lossless(void **s)
{
    (void)s;
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/keep-in.etl", dir);
    snprintf(out, sizeof out, "%s/keep-out.etl", dir);
    generate(in, 9, ETL_CLOCK_QPC);
    etl_convert_options o = {0};
    o.sz = sizeof o;
    o.compress = 1;
    o.bias = -1;
    etl_convert_stats st;
    etl_diag d;
    assert_int_equal(etl_convert(in, out, &o, &st, &d), ETL_OK);
    /* Header and extension are made anew: everything else is written as it was. */
    assert_int_equal(st.records_out + 2, st.records_in);
}

/*
 * The options as the ABI rule reads them (base/opts.h): none means every default, and a caller built against an
 * older, smaller struct gets the defaults past its sz, never the bytes that follow its struct (they crashed it).
 */
static void test_options_abi(void **s)
{
    (void)s;
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/abi-in.etl", dir);
    generate(in, 5, ETL_CLOCK_QPC);
    etl_convert_stats st;
    etl_diag d;
    snprintf(out, sizeof out, "%s/abi-none.etl", dir);
    assert_int_equal(etl_convert(in, out, NULL, &st, &d), ETL_OK);
    assert_int_equal(st.records_out + 2, st.records_in); /* keep: every record */
    struct {
        etl_convert_options o;
        unsigned char junk[64];
    } old;
    memset(&old, 0xA5, sizeof old); /* what lies past an older caller's struct */
    old.o.sz = offsetof(etl_convert_options, compress);
    old.o.cswitch = ETL_CSWITCH_KEEP;
    snprintf(out, sizeof out, "%s/abi-old.etl", dir);
    assert_int_equal(etl_convert(in, out, &old.o, &st, &d), ETL_OK);
    assert_int_equal(st.records_out + 2, st.records_in);
}

/* A file that is not an ETL, and an output that cannot be written. */
static void test_errors(void **s)
{
    (void)s;
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/text.etl", dir);
    FILE *f = fopen(in, "w");
    assert_non_null(f);
    fputs("not a trace at all, but long enough to look like one might............................"
          "..........................................................................\n", f);
    fclose(f);
    etl_convert_options o = {0};
    o.sz = sizeof o;
    o.compress = -1;
    o.bias = -1;
    etl_convert_stats st;
    etl_diag d = {0};
    snprintf(out, sizeof out, "%s/out.etl", dir);
    assert_int_equal(etl_convert(in, out, &o, &st, &d), ETL_E_NOT_ETL);
    snprintf(in, sizeof in, ETLKIT_SHARED_DIR "/samples/lxcore-x64.etl");
    snprintf(out, sizeof out, "%s/no/dir/out.etl", dir);
    assert_int_equal(etl_convert(in, out, &o, &st, &d), ETL_E_IO);
    /* Options out of their range are refused before anything is read, naming the option (explore30 F2, F3: a buffer
     * size the writer refuses was replaced by the input's, an unknown format kept the switches, a bias of 55 named
     * the output file), and so is a NULL path or stats (F7). No output is made. */
    snprintf(out, sizeof out, "%s/refused.etl", dir);
    static const struct { uint32_t buffer_size; int cswitch, bias; const char *says; } bad[] = {
        {100, 0, -1, "buffer_size"}, {4100, 0, -1, "buffer_size"}, {32u << 20, 0, -1, "buffer_size"},
        {0, 7, -1, "cswitch"},       {0, -1, -1, "cswitch"},       {0, 1, 55, "bias"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        etl_convert_options b = o;
        b.buffer_size = bad[i].buffer_size;
        b.cswitch = bad[i].cswitch;
        b.bias = bad[i].bias;
        memset(&d, 0, sizeof d);
        assert_int_equal(etl_convert(in, out, &b, &st, &d), ETL_E_INVALID_ARG);
        if (!strstr(d.msg, bad[i].says)) fail_msg("case %zu: '%s' does not name %s", i, d.msg, bad[i].says);
        assert_int_equal(access(out, F_OK), -1);
    }
    assert_int_equal(etl_convert(in, out, &o, NULL, &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_convert(NULL, out, &o, &st, &d), ETL_E_INVALID_ARG);
    assert_int_equal(etl_convert(in, NULL, &o, &st, &d), ETL_E_INVALID_ARG);
    assert_int_equal(access(out, F_OK), -1);
}

/* The group mask of a file's header extension. */
static void mask_of(const char *path, etl_groupmask *gm)
{
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    etl_record rec;
    etl_event ev;
    bool found = false;
    while (!found && etl_iter_next(it, &rec) == ETL_OK)
        if (etl_event_decode(&rec, &ev) == ETL_OK && ev.kind == ETL_EVENT_GROUP_MASK) *gm = ev.u.group_mask, found = true;
    assert_true(found);
    etl_iter_close(it);
    etl_reader_close(r);
}

/* A trace whose masks are mask, with n CSwitch events (and ReadyThread events) on CPU 0. */
static void small_trace(const char *path, const etl_groupmask *mask, unsigned n)
{
    etl_writer_options o = {0};
    o.sz = sizeof o;
    o.start_ts = 1000;
    o.group_mask = *mask;
    etl_writer *w;
    etl_diag d;
    assert_int_equal(etl_writer_open(path, &o, &w, &d), ETL_OK);
    for (unsigned i = 0; i < 20; i++) {
        uint8_t p[32];
        size_t len;
        etl_write_event ev = {0};
        ev.header = ETL_WH_PERFINFO;
        ev.version = 2;
        ev.ts = 2000 + 100 * i;
        etl_ready_thread rt = {8, 1, 2, 0, 0};
        assert_int_equal(etl_ready_thread_encode(&rt, p, sizeof p, &len), ETL_OK);
        ev.hook = ETL_HOOK_READY_THREAD;
        ev.payload = p;
        ev.len = len;
        assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
        if (i >= n) continue;
        etl_cswitch sw = {0};
        sw.old_tid = i % 2 ? 8 : 0;
        sw.new_tid = i % 2 ? 0 : 8;
        sw.old_state = 5;
        sw.old_priority = i % 2 ? 9 : 0;
        ev.ts++;
        assert_int_equal(etl_cswitch_encode(&sw, 2, p, sizeof p, &len), ETL_OK);
        ev.hook = ETL_HOOK_CSWITCH;
        ev.len = len;
        assert_int_equal(etl_writer_write(w, &ev), ETL_OK);
    }
    assert_int_equal(etl_writer_close(w, 5000, &d), ETL_OK);
}

/* To compact, the output's masks say it logged switches when it holds batches, and only then (explore12 F6). */
static void test_compact_masks(void **s)
{
    (void)s;
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/mask-in.etl", dir);
    snprintf(out, sizeof out, "%s/mask-out.etl", dir);
    etl_convert_options o = {0};
    o.sz = sizeof o;
    o.cswitch = ETL_CSWITCH_COMPACT;
    o.compress = -1;
    o.bias = -1;
    etl_convert_stats st;
    etl_diag d;
    etl_groupmask m = {0}, got;
    etl_groupmask_set(&m, ETL_PERF_DISPATCHER);
    small_trace(in, &m, 0); /* no switch: no batch, no switch flag */
    assert_int_equal(etl_convert(in, out, &o, &st, &d), ETL_OK);
    assert_int_equal(st.batches_out, 0);
    mask_of(out, &got);
    assert_false(etl_groupmask_test(&got, ETL_PERF_CONTEXT_SWITCH));
    assert_false(etl_groupmask_test(&got, ETL_PERF_COMPACT_CSWITCH));
    assert_true(etl_groupmask_test(&got, ETL_PERF_DISPATCHER));
    small_trace(in, &m, 10); /* switches the masks did not tell: the batches say so */
    assert_int_equal(etl_convert(in, out, &o, &st, &d), ETL_OK);
    assert_true(st.batches_out > 0);
    mask_of(out, &got);
    assert_true(etl_groupmask_test(&got, ETL_PERF_CONTEXT_SWITCH));
    assert_true(etl_groupmask_test(&got, ETL_PERF_COMPACT_CSWITCH));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_roundtrip_qpc),
        cmocka_unit_test(test_roundtrip_cycles_compressed),
        cmocka_unit_test(test_roundtrip_system_time),
        cmocka_unit_test(test_keep_is_lossless),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_options_abi),
        cmocka_unit_test(test_compact_masks),
    };
    return cmocka_run_group_tests_name("convert", tests, setup, teardown);
}

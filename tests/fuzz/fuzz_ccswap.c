/*
 * fuzz_ccswap.c - libFuzzer target for compact context-switch batches (hook 0x0525).
 *
 * Two checks per input:
 *  1. Decoding: the input is cut into several batches for random CPUs (some out of
 *     range), each copied to a heap block of its exact size so any over-read trips
 *     ASan. Each batch is walked directly (checking the walker's invariants) and fed
 *     to the expander; at the end every record must have come out as exactly one
 *     switch. A second expander gives the same batches out as ids
 *     (etl_batch_expand_ids, a few at a time): the same switches, the same counters.
 *  2. Round trip: the input is also read as a sequence of switches, encoded,
 *     decoded and expanded in lockstep; every field the compact form carries must
 *     come back exactly (abort() otherwise).
 *
 * Build: clang -fsanitize=fuzzer,address,undefined -Iinclude -Isrc
 *        tests/fuzz/fuzz_ccswap.c src/kernel/ccswap*.c src/base/[a-z]*.c -o fuzz_ccswap
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/ccswap.h"
#include "base/bytes.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define MAX_CPU 8
#define MAX_SW 4096

/* ---- 1. decoding arbitrary bytes ------------------------------------------ */

static void walk_checked(const uint8_t *p, size_t n, uint64_t *records)
{
    etl_ccswap_walker w;
    etl_ccswap_record r;
    etl_span s = {p, n};
    etl_status st = etl_ccswap_open(&w, s);
    if (n < ETL_CCSWAP_HEADER_SIZE) {
        CHECK(st == ETL_E_TRUNCATED);
        CHECK(etl_ccswap_next(&w, &r) == ETL_END);
        return;
    }
    CHECK(st == ETL_OK && w.tid_count <= ETL_CCSWAP_TID_MAX);
    /* The counter agrees with the walk: records returned, and bad ones (bad index, truncated end). */
    etl_ccswap_walker wc = w, wt = w;
    uint64_t count = 0, bad = 0, seen = 0, seen_bad = 0, tcount = 0, tbad = 0, last = 0;
    etl_ccswap_count(&wc, &count, &bad);
    etl_ccswap_count_timed(&wt, &tcount, &tbad, &last); /* the same, and the last switch's time */
    CHECK(tcount == count && tbad == bad);
    size_t expect_off = ETL_CCSWAP_HEADER_SIZE;
    uint64_t t = w.first_time;
    for (;;) {
        st = etl_ccswap_next(&w, &r);
        seen_bad += st == ETL_E_CORRUPT || st == ETL_E_TRUNCATED;
        seen += st == ETL_OK || st == ETL_E_CORRUPT;
        if (st == ETL_END || st == ETL_E_TRUNCATED) CHECK(count == seen && bad == seen_bad && last == t);
        if (st == ETL_END) {
            CHECK(expect_off == n);
            break;
        }
        CHECK(r.offset == expect_off && r.form == (p[r.offset] & 3));
        static const size_t len[4] = {2, 4, 4, 8};
        if (st == ETL_E_TRUNCATED) {
            CHECK(r.offset + len[r.form] > n);
            CHECK(etl_ccswap_next(&w, &r) == ETL_END);
            break;
        }
        CHECK(r.offset + len[r.form] <= n);
        t += r.delta;
        CHECK(r.time == t);
        expect_off += len[r.form];
        if (r.form <= ETL_CCSWAP_IDLE) {
            CHECK(st == ETL_OK && r.old_tid == 0 && r.state_wr == 0);
            CHECK(r.delta < (r.form == ETL_CCSWAP_IDLE_SHORT ? 1u << 14 : 1u << 30));
        } else {
            CHECK(r.index < 16 && r.state_wr < 64);
            CHECK((st == ETL_E_CORRUPT) == (r.index >= w.tid_count));
            CHECK((st == ETL_E_CORRUPT) == !!(r.flags & ETL_CCSWAP_REC_BAD_INDEX));
            if (st == ETL_OK) CHECK(r.old_tid == etl_ccswap_tid(&w, r.index) && r.old_tid != 0);
            CHECK(r.delta < (r.form == ETL_CCSWAP_LITE ? 1u << 17 : 1u << 30));
            if (r.form == ETL_CCSWAP_FULL) CHECK(r.old_priority >= 0 && r.old_priority <= 31);
            else CHECK(r.new_wait_time == 0 && r.pri_inc <= 7);
        }
        (*records)++;
    }
}

static void fuzz_decode(const uint8_t *data, size_t size)
{
    if (size < 2) return;
    size_t ncpu = 1 + data[0] % MAX_CPU;
    unsigned bias = data[1];
    etl_batch_expand_cpu cpus[MAX_CPU], icpus[MAX_CPU];
    etl_batch_expander x, ix;
    CHECK(etl_batch_expand_init(&x, cpus, ncpu) == ETL_OK);
    CHECK(etl_batch_expand_init(&ix, icpus, ncpu) == ETL_OK);
    etl_cswitch_ids ids[3];
    size_t nids = 0, at = 0;
    uint64_t walked = 0, emitted = 0;
    size_t i = 2;
    for (int batches = 0; batches < 64 && i + 3 <= size; batches++) {
        unsigned cpu = data[i] % (ncpu + 1); /* ncpu itself is out of range */
        size_t len = (size_t)data[i + 1] | (size_t)data[i + 2] << 8;
        i += 3;
        if (len > size - i) len = size - i;
        uint8_t *p = malloc(len ? len : 1);
        if (!p) return;
        if (len) memcpy(p, data + i, len);
        i += len;

        uint64_t before = walked;
        walk_checked(p, len, &walked);
        etl_span s = {p, len};
        etl_status st = etl_batch_expand_begin(&x, cpu, s, bias, 2);
        CHECK(st == (cpu >= ncpu ? ETL_E_RANGE
                     : len < ETL_CCSWAP_HEADER_SIZE ? ETL_E_TRUNCATED : ETL_OK));
        CHECK(etl_batch_expand_begin(&ix, cpu, s, bias, 2) == st);
        if (cpu >= ncpu) walked = before; /* ignored batch */
        etl_cswitch sw;
        while (etl_batch_expand_next(&x, &sw) == ETL_OK) {
            CHECK(sw.cpu == cpu && sw.source == ETL_CSW_SRC_COMPACT && sw.version == 2);
            CHECK(sw.known & ETL_CSW_TIME);
            emitted++;
            if (at == nids) {
                nids = etl_batch_expand_ids(&ix, ids, 1 + (emitted % 3));
                at = 0;
            }
            CHECK(at < nids);
            const etl_cswitch_ids *o = &ids[at++];
            CHECK(o->ts == sw.ts && o->known == sw.known && o->old_tid == sw.old_tid);
            CHECK(!(sw.known & ETL_CSW_NEW_TID) || o->new_tid == sw.new_tid);
            CHECK(!(sw.known & ETL_CSW_STATE) || o->old_state == sw.old_state);
        }
        CHECK(at == nids && etl_batch_expand_ids(&ix, ids, 3) == 0);
        nids = at = 0;
        free(p);
    }
    etl_cswitch sw;
    while (etl_batch_expand_finish(&x, &sw) == ETL_OK) {
        CHECK(!(sw.known & ETL_CSW_NEW_TID));
        emitted++;
        etl_cswitch isw;
        CHECK(etl_batch_expand_finish(&ix, &isw) == ETL_OK && memcmp(&isw, &sw, sizeof sw) == 0);
    }
    CHECK(etl_batch_expand_finish(&ix, &sw) == ETL_END);
    CHECK(memcmp(&x.stats, &ix.stats, sizeof x.stats) == 0);
    CHECK(x.stats.records == walked);
    CHECK(x.stats.switches == emitted && emitted == walked);
}

/* ---- 2. encode -> decode -> expand ---------------------------------------- */

static etl_ccswap_switch g_in[MAX_SW];
static size_t g_next[MAX_SW];
static size_t g_cursor[MAX_CPU];
static etl_ccswap_encoder_cpu g_ecpu[MAX_CPU];

static void rt_check(const etl_cswitch *sw, bool open)
{
    CHECK(sw->cpu < MAX_CPU);
    size_t i = g_cursor[sw->cpu];
    CHECK(i != SIZE_MAX);
    const etl_ccswap_switch *s = &g_in[i];
    g_cursor[sw->cpu] = g_next[i];
    bool idle = s->old_tid == 0;
    CHECK(sw->ts == s->time && sw->cpu == s->cpu);
    CHECK((sw->known & (ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY)) ==
          (ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY));
    CHECK(sw->old_tid == s->old_tid);
    CHECK(sw->old_priority == (idle ? 0 : s->old_priority));
    if (!idle) {
        CHECK((sw->known & ETL_CSW_STATE) && sw->old_state == s->old_state);
        if (s->old_state == ETL_CCSWAP_STATE_WAITING)
            CHECK((sw->known & ETL_CSW_WAIT_REASON) && sw->old_wait_reason == s->old_wait_reason);
        else
            CHECK(!(sw->known & ETL_CSW_WAIT_REASON));
        if (sw->known & ETL_CSW_NEW_WAIT_TIME) CHECK(sw->new_wait_time == s->new_wait_time);
        else CHECK(s->new_wait_time == 0);
    } else {
        CHECK(!(sw->known & (ETL_CSW_STATE | ETL_CSW_WAIT_REASON | ETL_CSW_NEW_WAIT_TIME)));
    }
    if (open) {
        CHECK(!(sw->known & ETL_CSW_NEW_TID) && g_next[i] == SIZE_MAX);
    } else {
        CHECK((sw->known & ETL_CSW_NEW_TID) && g_next[i] != SIZE_MAX);
        CHECK(sw->new_tid == g_in[g_next[i]].old_tid);
    }
}

static void rt_feed(etl_batch_expander *x, const etl_ccswap_batch *bt, unsigned bias)
{
    CHECK(bt->size >= ETL_CCSWAP_HEADER_SIZE && bt->size <= ETL_CCSWAP_BATCH_MAX);
    etl_span s = {bt->data, bt->size};
    CHECK(etl_batch_expand_begin(x, bt->cpu, s, bias, 2) == ETL_OK);
    etl_cswitch sw;
    while (etl_batch_expand_next(x, &sw) == ETL_OK) rt_check(&sw, false);
}

static void fuzz_roundtrip(const uint8_t *data, size_t size)
{
    if (size < 2) return;
    unsigned ncpu = 1 + data[0] % 4;
    unsigned bias = 1 + data[1] % 54;
    uint64_t max_age = data[0] & 0x80 ? (uint64_t)1 << (data[1] % 40) : ETL_CCSWAP_NO_AGE_LIMIT;
    uint64_t now[MAX_CPU];
    size_t last[MAX_CPU];
    for (unsigned c = 0; c < ncpu; c++) {
        now[c] = (uint64_t)data[0] << 56 | c;
        last[c] = SIZE_MAX;
        g_cursor[c] = SIZE_MAX;
    }
    static etl_ccswap_encoder enc;
    etl_batch_expand_cpu xcpu[MAX_CPU];
    etl_batch_expander x;
    CHECK(etl_ccswap_encoder_init(&enc, g_ecpu, ncpu, bias, max_age) == ETL_OK);
    CHECK(etl_batch_expand_init(&x, xcpu, ncpu) == ETL_OK);

    size_t nsw = 0;
    etl_ccswap_batch bt;
    for (size_t i = 2; i + 6 <= size && nsw < MAX_SW; i += 6, nsw++) {
        const uint8_t *b = data + i;
        etl_ccswap_switch *s = &g_in[nsw];
        memset(s, 0, sizeof *s);
        unsigned c = b[0] % ncpu;
        unsigned shift = (b[0] >> 3) & 31; /* delta scale: up to 2^39 */
        uint64_t delta = ((uint64_t)b[1] << shift) | (b[0] >> 3 & 3);
        now[c] += delta;
        s->cpu = (uint16_t)c;
        s->time = now[c];
        unsigned who = b[2] % 24; /* 0: idle; 1..23: threads (more than 16) */
        if (who) {
            s->old_tid = 1000 + who;
            s->old_base_priority = (int8_t)(b[3] % 32);
            s->old_priority = (int8_t)(b[4] % 32);
            s->old_state = (uint8_t)(b[5] % 10);
            s->old_wait_reason = s->old_state == ETL_CCSWAP_STATE_WAITING ? (uint8_t)(b[3] % bias) : 0;
        }
        s->new_wait_time = b[5] & 0x80 ? ((uint32_t)b[4] << 9 | b[3]) % (1u << 17) : 0;

        g_next[nsw] = SIZE_MAX;
        if (last[c] != SIZE_MAX) g_next[last[c]] = nsw;
        else g_cursor[c] = nsw;
        last[c] = nsw;

        CHECK(etl_ccswap_encoder_add(&enc, s, &bt) == ETL_OK);
        if (bt.size) rt_feed(&x, &bt, bias);
    }
    while (etl_ccswap_encoder_flush(&enc, &bt) == ETL_OK) {
        CHECK(bt.reason == ETL_CCSWAP_FLUSH_END);
        rt_feed(&x, &bt, bias);
    }
    etl_cswitch sw;
    while (etl_batch_expand_finish(&x, &sw) == ETL_OK) rt_check(&sw, true);
    for (unsigned c = 0; c < ncpu; c++) CHECK(g_cursor[c] == SIZE_MAX);
    CHECK(x.stats.records == nsw && x.stats.switches == nsw);
    CHECK(x.stats.bad_index + x.stats.truncated + x.stats.bad_state + x.stats.time_backwards +
          x.stats.broken_chains == 0);
    CHECK(enc.stats.priority_clamped + enc.stats.wait_time_clamped +
          enc.stats.wait_reason_dropped == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_decode(data, size);
    fuzz_roundtrip(data, size);
    return 0;
}

/*
 * test_ccswap.c - compact context-switch batches (hook 0x0525): the walker over
 * hand-built bytes, the record -> etl_cswitch conversion, the expander, the
 * encoder's forms and flush conditions, and seeded random round trips.
 *
 * Record bytes in the layout tests are written out by hand from the masks of
 * kernel-events.md 6.3, never produced by the code under test.
 */
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/ccswap.h"
#include "base/bytes.h"

#define CAP 4096

/* ---- helpers ------------------------------------------------------------- */

static size_t mk_hdr(uint8_t *b, uint64_t first, const uint32_t *tids, const int8_t *bases,
                     unsigned n)
{
    memset(b, 0, ETL_CCSWAP_HEADER_SIZE);
    etl_wr_u64(b, first);
    for (unsigned i = 0; i < n; i++) {
        etl_wr_u32(b + 8 + 4 * i, tids[i]);
        b[0x48 + i] = bases ? (uint8_t)bases[i] : 0;
    }
    return ETL_CCSWAP_HEADER_SIZE;
}

static size_t put_hex(uint8_t *b, size_t len, const char *hex)
{
    size_t n = tu_hex(hex, b + len, CAP - len);
    assert_true(len + n <= CAP);
    return len + n;
}

/* Record builders from the masks (used where the layout is not what is tested). */
static size_t r_ishort(uint8_t *b, size_t len, uint32_t delta)
{
    etl_wr_u16(b + len, (uint16_t)(delta << 2));
    return len + 2;
}

static size_t r_idle(uint8_t *b, size_t len, uint32_t delta)
{
    etl_wr_u32(b + len, delta << 2 | 1);
    return len + 4;
}

static size_t r_lite(uint8_t *b, size_t len, unsigned idx, unsigned inc, unsigned wr,
                     uint32_t delta)
{
    etl_wr_u32(b + len, 2u | idx << 2 | inc << 6 | wr << 9 | delta << 15);
    return len + 4;
}

static size_t r_full(uint8_t *b, size_t len, uint32_t delta, unsigned idx, unsigned wr,
                     unsigned prio, uint32_t wait)
{
    etl_wr_u32(b + len, delta << 2 | 3);
    etl_wr_u32(b + len + 4, idx | wr << 4 | prio << 10 | wait << 15);
    return len + 8;
}

static etl_span span(const uint8_t *b, size_t n)
{
    etl_span s = {b, n};
    return s;
}

/* Runs the expander over one batch, appending the switches to out[]. */
static size_t expand(etl_batch_expander *x, unsigned cpu, const uint8_t *b, size_t n,
                     unsigned bias, etl_cswitch *out, size_t have)
{
    etl_batch_expand_begin(x, cpu, span(b, n), bias, 2);
    etl_cswitch sw;
    while (etl_batch_expand_next(x, &sw) == ETL_OK) out[have++] = sw;
    return have;
}

static size_t drain(etl_batch_expander *x, etl_cswitch *out, size_t have)
{
    etl_cswitch sw;
    while (etl_batch_expand_finish(x, &sw) == ETL_OK) out[have++] = sw;
    return have;
}

/* ---- walker: header and each record form --------------------------------- */

static void test_header(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[3] = {0x11223344, 8, 0xFFFFFFFF};
    int8_t bases[3] = {8, -1, 31};
    size_t n = mk_hdr(b, 0xFFFFFFFFFFFFFFFEull, tids, bases, 3);
    etl_ccswap_walker w;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_true(w.first_time == 0xFFFFFFFFFFFFFFFEull); /* i64 -2, raw */
    assert_int_equal(w.tid_count, 3);
    assert_int_equal(etl_ccswap_tid(&w, 0), 0x11223344);
    assert_int_equal(etl_ccswap_tid(&w, 2), 0xFFFFFFFF);
    assert_int_equal(etl_ccswap_tid(&w, 3), 0);
    assert_int_equal(etl_ccswap_tid(&w, 16), 0);
    assert_int_equal(etl_ccswap_base_priority(&w, 1), -1);
    assert_int_equal(etl_ccswap_base_priority(&w, 2), 31);
    assert_int_equal(etl_ccswap_base_priority(&w, 99), 0);
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END); /* no records */
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);

    /* A full table: 16 filled. */
    uint32_t t16[16];
    for (unsigned i = 0; i < 16; i++) t16[i] = 100 + i;
    mk_hdr(b, 0, t16, NULL, 16);
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(w.tid_count, 16);
    /* Filled = up to the first zero, even if non-zero entries follow it. */
    etl_wr_u32(b + 8 + 4 * 5, 0);
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(w.tid_count, 5);
    assert_int_equal(etl_ccswap_open(NULL, span(b, n)), ETL_E_INVALID_ARG);
}

static void test_idle_short_layout(void **state)
{
    (void)state;
    uint8_t b[CAP];
    size_t n = mk_hdr(b, 1000, NULL, NULL, 0);
    /* delta 0, delta 0x1234 (w = 0x48D0), max delta 0x3FFF (w = 0xFFFC) */
    n = put_hex(b, n, "00 00  d0 48  fc ff");
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(w.tid_count, 0);

    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.form, ETL_CCSWAP_IDLE_SHORT);
    assert_int_equal(r.offset, 0x58);
    assert_int_equal(r.delta, 0);
    assert_true(r.time == 1000);
    assert_int_equal(r.old_tid, 0);
    assert_int_equal(r.old_priority, 0);
    assert_int_equal(r.state_wr, 0);
    assert_int_equal(r.new_wait_time, 0);
    assert_int_equal(r.flags, 0);

    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.offset, 0x5A);
    assert_int_equal(r.delta, 0x1234);
    assert_true(r.time == 1000 + 0x1234);

    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.offset, 0x5C);
    assert_int_equal(r.form, ETL_CCSWAP_IDLE_SHORT);
    assert_int_equal(r.delta, 0x3FFF);
    assert_true(r.time == 1000 + 0x1234 + 0x3FFF);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

static void test_idle_layout(void **state)
{
    (void)state;
    uint8_t b[CAP];
    size_t n = mk_hdr(b, 5, NULL, NULL, 0);
    /* delta 0x12345678: d = 0x48D159E1; max delta 0x3FFFFFFF: d = 0xFFFFFFFD */
    n = put_hex(b, n, "e1 59 d1 48  fd ff ff ff");
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.form, ETL_CCSWAP_IDLE);
    assert_int_equal(r.delta, 0x12345678);
    assert_true(r.time == 5 + 0x12345678);
    assert_int_equal(r.old_tid, 0);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.form, ETL_CCSWAP_IDLE);
    assert_int_equal(r.offset, 0x5C);
    assert_int_equal(r.delta, 0x3FFFFFFF);
    assert_true(r.time == 5 + 0x12345678ull + 0x3FFFFFFFull);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

static void test_lite_layout(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[4] = {0x100, 0x200, 0x300, 0x1111};
    int8_t bases[4] = {1, 2, 3, 8};
    size_t n = mk_hdr(b, 0, tids, bases, 4);
    /* idx 3, inc 5, StateWr 0x2A, delta 0x1ABCD: d = 0xD5E6D54E */
    n = put_hex(b, n, "4e d5 e6 d5");
    /* all fields max but idx 0: inc 7, wr 63, delta 0x1FFFF: d = 0xFFFFFFC2 */
    n = put_hex(b, n, "c2 ff ff ff");
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.form, ETL_CCSWAP_LITE);
    assert_int_equal(r.index, 3);
    assert_int_equal(r.pri_inc, 5);
    assert_int_equal(r.state_wr, 0x2A);
    assert_int_equal(r.delta, 0x1ABCD);
    assert_true(r.time == 0x1ABCD);
    assert_int_equal(r.old_tid, 0x1111);
    assert_int_equal(r.old_priority, 8 + 5); /* base + inc */
    assert_int_equal(r.new_wait_time, 0);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.index, 0);
    assert_int_equal(r.pri_inc, 7);
    assert_int_equal(r.state_wr, 63);
    assert_int_equal(r.delta, 0x1FFFF);
    assert_int_equal(r.old_tid, 0x100);
    assert_int_equal(r.old_priority, 1 + 7);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

static void test_full_layout(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[16];
    for (unsigned i = 0; i < 16; i++) tids[i] = 0xA000 + i;
    size_t n = mk_hdr(b, 7, tids, NULL, 16);
    /* delta 0xABCDEF, idx 2, wr 0x11, prio 13, wait 0xF0F0: d0 = 0x02AF37BF, d1 = 0x78783512 */
    n = put_hex(b, n, "bf 37 af 02  12 35 78 78");
    /* every field at its maximum: idx 15, wr 63, prio 31, wait 0x1FFFF, delta 0x3FFFFFFF */
    n = put_hex(b, n, "ff ff ff ff  ff ff ff ff");
    /* only DataType set: delta 0, idx 0, wr 0, prio 0, wait 0 */
    n = put_hex(b, n, "03 00 00 00  00 00 00 00");
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.form, ETL_CCSWAP_FULL);
    assert_int_equal(r.delta, 0xABCDEF);
    assert_int_equal(r.index, 2);
    assert_int_equal(r.old_tid, 0xA002);
    assert_int_equal(r.state_wr, 0x11);
    assert_int_equal(r.old_priority, 13);
    assert_int_equal(r.new_wait_time, 0xF0F0);
    assert_int_equal(r.pri_inc, 0);
    assert_true(r.time == 7 + 0xABCDEF);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.offset, 0x60);
    assert_int_equal(r.delta, 0x3FFFFFFF);
    assert_int_equal(r.index, 15);
    assert_int_equal(r.old_tid, 0xA00F);
    assert_int_equal(r.state_wr, 63);
    assert_int_equal(r.old_priority, 31);
    assert_int_equal(r.new_wait_time, 0x1FFFF);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.offset, 0x68);
    assert_int_equal(r.delta, 0);
    assert_int_equal(r.old_tid, 0xA000);
    assert_int_equal(r.old_priority, 0);
    assert_int_equal(r.new_wait_time, 0);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

/* 4- and 8-byte records at 2-byte alignment after 2-byte ones. */
static void test_unaligned(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[2] = {0x1234, 0x5678};
    int8_t bases[2] = {9, 4};
    size_t n = mk_hdr(b, 100, tids, bases, 2);
    n = put_hex(b, n, "04 00");                   /* 0x58 idle-short delta 1 */
    n = put_hex(b, n, "46 0c 01 00");             /* 0x5A lite idx 1 inc 1 wr 6 delta 2: d = 0x10C46 */
    n = put_hex(b, n, "0b 00 00 00  00 b0 0a 00"); /* 0x5E full delta 2, idx 0, wr 0, prio 12, wait 21 */
    n = put_hex(b, n, "0c 00");                   /* 0x66 idle-short delta 3 */
    n = put_hex(b, n, "11 00 00 00");             /* 0x68 idle delta 4 */
    n = put_hex(b, n, "0c 00");                   /* 0x6C idle-short delta 3 */
    n = put_hex(b, n, "17 00 00 00  51 1c 00 00"); /* 0x6E full delta 5, idx 1, wr 5, prio 7, wait 0 */
    assert_int_equal(n, 0x76);

    static const struct {
        size_t off;
        uint8_t form;
        uint32_t delta, tid;
        int prio;
        unsigned wr;
        uint32_t wait;
    } want[] = {
        {0x58, ETL_CCSWAP_IDLE_SHORT, 1, 0, 0, 0, 0},
        {0x5A, ETL_CCSWAP_LITE, 2, 0x5678, 5, 6, 0},
        {0x5E, ETL_CCSWAP_FULL, 2, 0x1234, 12, 0, 21},
        {0x66, ETL_CCSWAP_IDLE_SHORT, 3, 0, 0, 0, 0},
        {0x68, ETL_CCSWAP_IDLE, 4, 0, 0, 0, 0},
        {0x6C, ETL_CCSWAP_IDLE_SHORT, 3, 0, 0, 0, 0},
        {0x6E, ETL_CCSWAP_FULL, 5, 0x5678, 7, 5, 0},
    };
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    uint64_t t = 100;
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
        t += want[i].delta;
        assert_int_equal(r.offset, want[i].off);
        assert_int_equal(r.form, want[i].form);
        assert_int_equal(r.delta, want[i].delta);
        assert_int_equal(r.old_tid, want[i].tid);
        assert_int_equal(r.old_priority, want[i].prio);
        assert_int_equal(r.state_wr, want[i].wr);
        assert_int_equal(r.new_wait_time, want[i].wait);
        assert_true(r.time == t);
    }
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

/* Lite priority is base + inc; outside 0..31 (a hostile base: -4 + 2, 127 + 7) it is no priority (explore19 F4). */
static void test_lite_priority(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[3] = {1, 2, 3};
    int8_t bases[3] = {15, -4, 127};
    size_t n = mk_hdr(b, 0, tids, bases, 3);
    n = r_lite(b, n, 0, 7, 0, 0);
    n = r_lite(b, n, 1, 2, 0, 0);
    n = r_lite(b, n, 2, 7, 0, 0);
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.old_priority, 22);
    assert_int_equal(r.flags, 0);
    etl_cswitch c;
    etl_ccswap_to_cswitch(&r, 0, 39, 2, &c);
    assert_true(c.known & ETL_CSW_OLD_PRIORITY);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.old_priority, 0); /* -4 + 2: once -2 */
    assert_int_equal(r.flags, ETL_CCSWAP_REC_BAD_PRIORITY);
    etl_ccswap_to_cswitch(&r, 0, 39, 2, &c);
    assert_false(c.known & ETL_CSW_OLD_PRIORITY);
    assert_true(c.known & ETL_CSW_OLD_TID);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.old_priority, 0); /* 127 + 7: once wrapped to -122 */
    assert_int_equal(r.flags, ETL_CCSWAP_REC_BAD_PRIORITY);
    /* The expander counts them. */
    etl_batch_expander x;
    etl_batch_expand_cpu cpus[1];
    etl_batch_expand_init(&x, cpus, 1);
    etl_batch_expand_begin(&x, 0, span(b, n), 39, 2);
    while (etl_batch_expand_next(&x, &c) == ETL_OK) {
    }
    assert_int_equal(x.stats.bad_priority, 2);
}

/* Record 0 with a non-zero delta still counts from FirstTimeStamp. */
static void test_record0_delta(void **state)
{
    (void)state;
    uint8_t b[CAP];
    size_t n = mk_hdr(b, 50, NULL, NULL, 0);
    n = r_ishort(b, n, 0);
    etl_ccswap_walker w;
    etl_ccswap_record r;
    etl_ccswap_open(&w, span(b, n));
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_true(r.time == w.first_time);
    n = mk_hdr(b, 50, NULL, NULL, 0);
    n = r_ishort(b, n, 9);
    etl_ccswap_open(&w, span(b, n));
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_true(r.time == 59);
    /* Time wraps in 64 bits instead of overflowing. */
    n = mk_hdr(b, UINT64_MAX - 1, NULL, NULL, 0);
    n = r_ishort(b, n, 3);
    etl_ccswap_open(&w, span(b, n));
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_true(r.time == 1);
}

/* ---- record -> etl_cswitch ------------------------------------------------ */

static void test_to_cswitch_bias(void **state)
{
    (void)state;
    etl_ccswap_record r;
    etl_cswitch sw;
    memset(&r, 0, sizeof r);
    r.form = ETL_CCSWAP_LITE;
    r.time = 77;
    r.old_tid = 42;
    r.old_priority = 9;

    /* v < B: Waiting + wait reason v */
    r.state_wr = 38;
    assert_true(etl_ccswap_to_cswitch(&r, 3, 39, 2, &sw));
    assert_int_equal(sw.old_state, 5);
    assert_int_equal(sw.old_wait_reason, 38);
    assert_int_equal(sw.known, ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_OLD_TID |
                                   ETL_CSW_OLD_PRIORITY | ETL_CSW_STATE | ETL_CSW_WAIT_REASON);
    assert_int_equal(sw.source, ETL_CSW_SRC_COMPACT);
    assert_int_equal(sw.version, 2);
    assert_int_equal(sw.cpu, 3);
    assert_true(sw.ts == 77);
    assert_int_equal(sw.old_tid, 42);
    assert_int_equal(sw.old_priority, 9);
    assert_int_equal(sw.new_tid, 0);

    /* v = B: state 0 (Initialized), no wait reason */
    r.state_wr = 39;
    assert_true(etl_ccswap_to_cswitch(&r, 3, 39, 2, &sw));
    assert_int_equal(sw.old_state, 0);
    assert_int_equal(sw.old_wait_reason, 0);
    assert_int_equal(sw.known & (ETL_CSW_STATE | ETL_CSW_WAIT_REASON), ETL_CSW_STATE);
    /* v = B + 1: Ready */
    r.state_wr = 40;
    assert_true(etl_ccswap_to_cswitch(&r, 3, 39, 2, &sw));
    assert_int_equal(sw.old_state, 1);
    /* the same v under the newer bias 43 is a wait reason (WrIoRing) */
    assert_true(etl_ccswap_to_cswitch(&r, 3, 43, 2, &sw));
    assert_int_equal(sw.old_state, 5);
    assert_int_equal(sw.old_wait_reason, 40);
    /* v = B + 9: WaitingForProcessInSwap, still valid */
    r.state_wr = 48;
    assert_true(etl_ccswap_to_cswitch(&r, 3, 39, 2, &sw));
    assert_int_equal(sw.old_state, 9);
    assert_true(sw.known & ETL_CSW_STATE);
    /* v = B + 10: out of range, flagged, STATE clear */
    r.state_wr = 49;
    assert_false(etl_ccswap_to_cswitch(&r, 3, 39, 2, &sw));
    assert_int_equal(sw.old_state, 10);
    assert_false(sw.known & (ETL_CSW_STATE | ETL_CSW_WAIT_REASON));
    assert_true(sw.known & ETL_CSW_OLD_TID);
    r.state_wr = 63;
    assert_false(etl_ccswap_to_cswitch(&r, 3, 27, 2, &sw));

    uint8_t st, wr;
    assert_true(etl_ccswap_split_state(0, 39, &st, &wr));
    assert_int_equal(st, 5);
    assert_int_equal(wr, 0);
    assert_false(etl_ccswap_split_state(46, 39, &st, &wr));
    assert_int_equal(st, 7);
}

static void test_to_cswitch_known(void **state)
{
    (void)state;
    etl_ccswap_record r;
    etl_cswitch sw;
    const uint32_t base = ETL_CSW_TIME | ETL_CSW_CPU;
    memset(&r, 0, sizeof r);

    r.form = ETL_CCSWAP_IDLE_SHORT;
    assert_true(etl_ccswap_to_cswitch(&r, 0, 39, 2, &sw));
    assert_int_equal(sw.known, base | ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY);
    assert_int_equal(sw.old_tid, 0);
    assert_int_equal(sw.old_priority, 0);
    r.form = ETL_CCSWAP_IDLE;
    assert_true(etl_ccswap_to_cswitch(&r, 0, 39, 2, &sw));
    assert_int_equal(sw.known, base | ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY);

    r.form = ETL_CCSWAP_LITE;
    r.old_tid = 5;
    r.state_wr = 40; /* Ready under 39 */
    assert_true(etl_ccswap_to_cswitch(&r, 0, 39, 2, &sw));
    assert_int_equal(sw.known, base | ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY | ETL_CSW_STATE);
    assert_int_equal(sw.new_wait_time, 0);

    r.form = ETL_CCSWAP_FULL;
    r.new_wait_time = 1234;
    assert_true(etl_ccswap_to_cswitch(&r, 0, 39, 2, &sw));
    assert_int_equal(sw.known, base | ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY | ETL_CSW_STATE |
                                   ETL_CSW_NEW_WAIT_TIME);
    assert_int_equal(sw.new_wait_time, 1234);

    /* bad index: OLD_TID unknown; Full keeps its own priority, Lite loses it */
    r.flags = ETL_CCSWAP_REC_BAD_INDEX;
    r.old_tid = 0;
    assert_true(etl_ccswap_to_cswitch(&r, 0, 39, 2, &sw));
    assert_int_equal(sw.known, base | ETL_CSW_OLD_PRIORITY | ETL_CSW_STATE | ETL_CSW_NEW_WAIT_TIME);
    r.form = ETL_CCSWAP_LITE;
    assert_true(etl_ccswap_to_cswitch(&r, 0, 39, 2, &sw));
    assert_int_equal(sw.known, base | ETL_CSW_STATE);
}

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(etl_ccswap_form_name(0), "idle-short");
    assert_string_equal(etl_ccswap_form_name(1), "idle");
    assert_string_equal(etl_ccswap_form_name(2), "lite");
    assert_string_equal(etl_ccswap_form_name(3), "full");
    assert_string_equal(etl_ccswap_form_name(4), "?");
    assert_string_equal(etl_ccswap_flush_reason_name(ETL_CCSWAP_FLUSH_NONE), "none");
    assert_string_equal(etl_ccswap_flush_reason_name(ETL_CCSWAP_FLUSH_TID_TABLE_FULL), "tid-table-full");
    assert_string_equal(etl_ccswap_flush_reason_name(ETL_CCSWAP_FLUSH_AGE), "age");
    assert_string_equal(etl_ccswap_flush_reason_name(ETL_CCSWAP_FLUSH_NO_ROOM), "no-room");
    assert_string_equal(etl_ccswap_flush_reason_name(ETL_CCSWAP_FLUSH_DELTA_OVERFLOW), "delta-overflow");
    assert_string_equal(etl_ccswap_flush_reason_name(ETL_CCSWAP_FLUSH_END), "end");
    assert_string_equal(etl_ccswap_flush_reason_name(6), "?");
}

/* ---- walker: malformed input ---------------------------------------------- */

static void test_short_header(void **state)
{
    (void)state;
    uint8_t b[CAP];
    memset(b, 0xFF, sizeof b);
    etl_ccswap_walker w;
    etl_ccswap_record r;
    for (size_t n = 0; n < ETL_CCSWAP_HEADER_SIZE; n++) {
        /* from a heap copy of exactly n bytes, so ASan sees any over-read */
        uint8_t *p = n ? malloc(n) : NULL;
        if (n) memcpy(p, b, n);
        assert_int_equal(etl_ccswap_open(&w, span(p, n)), ETL_E_TRUNCATED);
        assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
        free(p);
    }
    etl_span none = {NULL, 100};
    assert_int_equal(etl_ccswap_open(&w, none), ETL_E_TRUNCATED);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

static void test_bad_index(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[3] = {10, 20, 0}; /* 2 filled; entry 3 would be non-zero garbage */
    size_t n = mk_hdr(b, 0, tids, NULL, 3);
    etl_wr_u32(b + 8 + 4 * 3, 40);
    n = r_lite(b, n, 1, 0, 45, 1);   /* ok: tid 20 */
    n = r_lite(b, n, 2, 3, 45, 10);  /* bad: index 2 = first zero */
    n = r_full(b, n, 100, 3, 45, 17, 5); /* bad: index 3 after the zero */
    n = r_full(b, n, 1, 0, 45, 8, 0); /* ok: tid 10 */
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(b, n)), ETL_OK);
    assert_int_equal(w.tid_count, 2);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.old_tid, 20);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_E_CORRUPT);
    assert_int_equal(r.offset, 0x5C);
    assert_int_equal(r.flags, ETL_CCSWAP_REC_BAD_INDEX);
    assert_int_equal(r.index, 2);
    assert_int_equal(r.old_tid, 0);
    assert_int_equal(r.old_priority, 0);
    assert_true(r.time == 11); /* its delta still counts */
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_E_CORRUPT);
    assert_int_equal(r.offset, 0x60);
    assert_int_equal(r.index, 3);
    assert_int_equal(r.old_priority, 17);
    assert_int_equal(r.new_wait_time, 5);
    assert_true(r.time == 111);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    assert_int_equal(r.old_tid, 10);
    assert_int_equal(r.flags, 0);
    assert_true(r.time == 112);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);

    /* An empty table: every Lite/Full record is bad. */
    n = mk_hdr(b, 0, NULL, NULL, 0);
    n = r_lite(b, n, 0, 0, 0, 0);
    etl_ccswap_open(&w, span(b, n));
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_E_CORRUPT);
    assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
}

/* A batch cut at every possible length: records wholly inside are decoded, a
 * record crossing the cut is reported truncated at its offset, and the walk stops. */
static void test_cut_everywhere(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t tids[2] = {7, 8};
    size_t full = mk_hdr(b, 1, tids, NULL, 2);
    size_t starts[8];
    unsigned k = 0;
    starts[k++] = full; full = r_ishort(b, full, 1);
    starts[k++] = full; full = r_idle(b, full, 20000);
    starts[k++] = full; full = r_lite(b, full, 0, 1, 40, 3);
    starts[k++] = full; full = r_full(b, full, 4, 1, 41, 12, 9);
    starts[k++] = full; full = r_ishort(b, full, 5);
    starts[k++] = full; full = r_full(b, full, 6, 0, 42, 13, 0);
    starts[k++] = full; full = r_lite(b, full, 1, 2, 43, 7);
    starts[k] = full;
    assert_int_equal(full, 0x78);

    for (size_t n = 0; n <= full; n++) {
        uint8_t *p = malloc(n ? n : 1);
        memcpy(p, b, n);
        etl_ccswap_walker w;
        etl_ccswap_record r;
        etl_status st = etl_ccswap_open(&w, span(p, n));
        if (n < ETL_CCSWAP_HEADER_SIZE) {
            assert_int_equal(st, ETL_E_TRUNCATED);
            assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
            free(p);
            continue;
        }
        assert_int_equal(st, ETL_OK);
        unsigned whole = 0;
        while (whole < 7 && starts[whole + 1] <= n) whole++;
        for (unsigned i = 0; i < whole; i++) {
            assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
            assert_int_equal(r.offset, starts[i]);
        }
        if (starts[whole] == n) {
            assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
        } else {
            assert_int_equal(etl_ccswap_next(&w, &r), ETL_E_TRUNCATED);
            assert_int_equal(r.offset, starts[whole]);
            assert_int_equal(r.form, b[starts[whole]] & 3);
            assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
            assert_int_equal(etl_ccswap_next(&w, &r), ETL_END);
        }

        /* The expander over the same cut: counted, never fatal. */
        etl_batch_expand_cpu cpus[1];
        etl_batch_expander x;
        etl_cswitch out[16];
        etl_batch_expand_init(&x, cpus, 1);
        size_t m = expand(&x, 0, p, n, 39, out, 0);
        m = drain(&x, out, m);
        assert_int_equal(m, whole);
        assert_int_equal(x.stats.records, whole);
        assert_int_equal(x.stats.truncated, starts[whole] == n ? 0 : 1);
        if (starts[whole] != n) {
            assert_int_equal(x.last_status, ETL_E_TRUNCATED);
            assert_int_equal(x.last_offset, starts[whole]);
        }
        free(p);
    }
}

/* ---- expander ------------------------------------------------------------- */

static void test_expand_one_cpu_across_batches(void **state)
{
    (void)state;
    uint8_t b1[CAP], b2[CAP];
    uint32_t t1[2] = {100, 200};
    int8_t p1[2] = {8, 10};
    size_t n1 = mk_hdr(b1, 1000, t1, p1, 2);
    n1 = r_lite(b1, n1, 0, 1, 6, 0);          /* 1000: 100 waits (UserRequest) */
    n1 = r_full(b1, n1, 10, 1, 40, 12, 77);   /* 1010: 200 Ready, new waited 77 */
    uint32_t t2[1] = {300};
    size_t n2 = mk_hdr(b2, 5000, t2, p1, 1);
    n2 = r_lite(b2, n2, 0, 0, 46, 0);         /* 5000: 300 DeferredReady */
    n2 = r_ishort(b2, n2, 5);                 /* 5005: idle */

    etl_batch_expand_cpu cpus[2];
    etl_batch_expander x;
    etl_cswitch o[8];
    assert_int_equal(etl_batch_expand_init(&x, cpus, 2), ETL_OK);
    size_t m = expand(&x, 1, b1, n1, 39, o, 0);
    assert_int_equal(m, 1); /* the second record stays pending */
    assert_true(o[0].ts == 1000);
    assert_int_equal(o[0].cpu, 1);
    assert_int_equal(o[0].old_tid, 100);
    assert_int_equal(o[0].new_tid, 200);
    assert_true(o[0].known & ETL_CSW_NEW_TID);
    assert_int_equal(o[0].old_priority, 9);
    assert_int_equal(o[0].old_state, 5);
    assert_int_equal(o[0].old_wait_reason, 6);
    m = expand(&x, 1, b2, n2, 39, o, m);
    assert_int_equal(m, 3);
    assert_true(o[1].ts == 1010);
    assert_int_equal(o[1].old_tid, 200);
    assert_int_equal(o[1].new_tid, 300); /* paired across batches */
    assert_int_equal(o[1].new_wait_time, 77);
    assert_int_equal(o[1].old_state, 1);
    assert_true(o[2].ts == 5000);
    assert_int_equal(o[2].old_tid, 300);
    assert_int_equal(o[2].new_tid, 0); /* idle successor */
    assert_true(o[2].known & ETL_CSW_NEW_TID);
    assert_int_equal(o[2].old_state, 7);
    m = drain(&x, o, m);
    assert_int_equal(m, 4);
    assert_true(o[3].ts == 5005);
    assert_int_equal(o[3].old_tid, 0);
    assert_false(o[3].known & ETL_CSW_NEW_TID); /* stays open */
    assert_int_equal(x.stats.switches, 4);
    assert_int_equal(x.stats.open_switches, 1);
    assert_int_equal(x.stats.records, 4);
    assert_int_equal(x.stats.batches, 2);
    assert_int_equal(x.stats.broken_chains, 0);
    assert_int_equal(x.last_status, ETL_OK);
    etl_cswitch sw;
    assert_int_equal(etl_batch_expand_finish(&x, &sw), ETL_END);
}

static void test_expand_interleaved(void **state)
{
    (void)state;
    uint8_t a[CAP], bb[CAP], c[CAP], d[CAP];
    uint32_t ta[2] = {10, 11}, tb[2] = {20, 21}, tc[1] = {12};
    size_t na = mk_hdr(a, 100, ta, NULL, 2);
    na = r_lite(a, na, 0, 0, 40, 0);  /* cpu0 100: 10 */
    na = r_ishort(a, na, 1);          /* cpu0 101: idle */
    na = r_full(a, na, 2, 1, 40, 3, 0); /* cpu0 103: 11 */
    size_t nb = mk_hdr(bb, 102, tb, NULL, 2);
    nb = r_lite(bb, nb, 0, 0, 40, 0); /* cpu1 102: 20 */
    nb = r_lite(bb, nb, 1, 0, 40, 2); /* cpu1 104: 21 */
    size_t nc = mk_hdr(c, 200, tc, NULL, 1);
    nc = r_lite(c, nc, 0, 0, 40, 0);  /* cpu0 200: 12 */
    nc = r_idle(c, nc, 20000);        /* cpu0 20200: idle */
    size_t nd = mk_hdr(d, 300, NULL, NULL, 0);
    nd = r_ishort(d, nd, 0);          /* cpu1 300: idle */

    etl_batch_expand_cpu cpus[2];
    etl_batch_expander x;
    etl_cswitch o[16];
    etl_batch_expand_init(&x, cpus, 2);
    size_t m = expand(&x, 0, a, na, 39, o, 0);
    m = expand(&x, 1, bb, nb, 39, o, m);
    m = expand(&x, 0, c, nc, 39, o, m);
    m = expand(&x, 1, d, nd, 39, o, m);
    m = drain(&x, o, m);
    static const struct {
        uint16_t cpu;
        uint64_t ts;
        uint32_t old_tid, new_tid;
        bool new_known;
    } want[] = {
        {0, 100, 10, 0, true},   {0, 101, 0, 11, true},   {1, 102, 20, 21, true},
        {0, 103, 11, 12, true},  {0, 200, 12, 0, true},   {1, 104, 21, 0, true},
        {0, 20200, 0, 0, false}, {1, 300, 0, 0, false},
    };
    assert_int_equal(m, 8);
    for (size_t i = 0; i < m; i++) {
        assert_int_equal(o[i].cpu, want[i].cpu);
        assert_true(o[i].ts == want[i].ts);
        assert_int_equal(o[i].old_tid, want[i].old_tid);
        assert_int_equal(o[i].new_tid, want[i].new_tid);
        assert_int_equal(!!(o[i].known & ETL_CSW_NEW_TID), want[i].new_known);
    }
}

static void test_expand_errors(void **state)
{
    (void)state;
    uint8_t b[CAP];
    uint32_t t[1] = {10};
    etl_batch_expand_cpu cpus[2];
    etl_batch_expander x;
    etl_cswitch o[16];
    etl_cswitch sw;

    assert_int_equal(etl_batch_expand_init(&x, cpus, 0), ETL_E_INVALID_ARG);
    assert_int_equal(etl_batch_expand_init(NULL, cpus, 1), ETL_E_INVALID_ARG);
    assert_int_equal(etl_batch_expand_init(&x, cpus, 2), ETL_OK);

    /* CPU out of range: counted, ignored. */
    size_t n = mk_hdr(b, 0, t, NULL, 1);
    n = r_lite(b, n, 0, 0, 40, 0);
    assert_int_equal(etl_batch_expand_begin(&x, 2, span(b, n), 39, 2), ETL_E_RANGE);
    assert_int_equal(etl_batch_expand_next(&x, &sw), ETL_END);
    assert_int_equal(etl_batch_expand_begin(&x, 70000, span(b, n), 39, 2), ETL_E_RANGE);
    assert_int_equal(x.stats.bad_cpu, 2);
    assert_int_equal(x.last_status, ETL_E_RANGE);
    assert_int_equal(x.last_cpu, 70000);
    assert_int_equal(x.stats.records, 0);

    /* Bad index in the middle: the switch before it and the bad one lose a TID. */
    uint32_t t2[2] = {10, 11};
    n = mk_hdr(b, 0, t2, NULL, 2);
    n = r_lite(b, n, 0, 0, 40, 0);  /* 0: 10 */
    n = r_lite(b, n, 9, 0, 40, 1);  /* 1: bad */
    n = r_lite(b, n, 1, 0, 40, 1);  /* 2: 11 */
    n = r_lite(b, n, 0, 0, 35, 1);  /* 3: 10, StateWr 35: waiting under 39 */
    size_t m = expand(&x, 0, b, n, 39, o, 0);
    assert_int_equal(m, 3);
    assert_int_equal(o[0].old_tid, 10);
    assert_false(o[0].known & ETL_CSW_NEW_TID);
    assert_false(o[1].known & ETL_CSW_OLD_TID);
    assert_int_equal(o[1].new_tid, 11);
    assert_true(o[1].known & ETL_CSW_NEW_TID);
    assert_int_equal(o[2].old_tid, 11);
    assert_int_equal(o[2].new_tid, 10);
    assert_int_equal(x.stats.bad_index, 1);
    assert_int_equal(x.stats.broken_chains, 1);
    assert_int_equal(x.last_status, ETL_E_CORRUPT);
    assert_int_equal(x.last_cpu, 0);
    assert_int_equal(x.last_offset, 0x5C);

    /* Truncated batch: its CPU's pending switch loses its successor. */
    n = mk_hdr(b, 10, t, NULL, 1);
    n = r_lite(b, n, 0, 0, 40, 0);
    n = r_full(b, n, 1, 0, 40, 0, 0);
    m = expand(&x, 0, b, n - 3, 39, o, 0);
    assert_int_equal(m, 1);
    assert_int_equal(o[0].old_tid, 10); /* the pending one from before */
    assert_true(o[0].ts == 3);
    assert_int_equal(o[0].new_tid, 10);
    assert_int_equal(x.stats.truncated, 1);
    assert_int_equal(x.last_offset, 0x5C);
    /* the next batch of cpu 0: the pending (ts 10) gets NEW_TID unknown */
    n = mk_hdr(b, 20, t, NULL, 1);
    n = r_lite(b, n, 0, 0, 40, 0);
    m = expand(&x, 0, b, n, 39, o, 0);
    assert_int_equal(m, 1);
    assert_true(o[0].ts == 10);
    assert_false(o[0].known & ETL_CSW_NEW_TID);
    assert_int_equal(x.stats.broken_chains, 2);

    /* Short batch: ignored, counted, chain broken. */
    assert_int_equal(etl_batch_expand_begin(&x, 0, span(b, 0x57), 39, 2), ETL_E_TRUNCATED);
    assert_int_equal(etl_batch_expand_next(&x, &sw), ETL_END);
    assert_int_equal(x.stats.short_batches, 1);
    m = expand(&x, 0, b, n, 39, o, 0); /* same batch again: time 20 */
    assert_int_equal(m, 1);
    assert_false(o[0].known & ETL_CSW_NEW_TID);
    assert_int_equal(x.stats.broken_chains, 3);

    /* Abandoned batch: begin before the previous one is exhausted. */
    n = mk_hdr(b, 30, t, NULL, 1);
    n = r_lite(b, n, 0, 0, 40, 0);
    n = r_lite(b, n, 0, 0, 40, 1);
    n = r_lite(b, n, 0, 0, 40, 1);
    assert_int_equal(etl_batch_expand_begin(&x, 0, span(b, n), 39, 2), ETL_OK);
    assert_int_equal(etl_batch_expand_next(&x, &sw), ETL_OK); /* pending ts 20 -> 10 */
    assert_true(sw.ts == 20);
    assert_true(sw.known & ETL_CSW_NEW_TID);
    m = expand(&x, 0, b, n, 39, o, 0); /* restart: abandons 2 records */
    assert_int_equal(x.stats.abandoned, 1);
    assert_int_equal(m, 3);
    assert_true(o[0].ts == 30);
    assert_false(o[0].known & ETL_CSW_NEW_TID);

    /* Time going backwards across batches, and a bad state: counted. */
    uint64_t back0 = x.stats.time_backwards;
    n = mk_hdr(b, 5, t, NULL, 1);
    n = r_lite(b, n, 0, 0, 60, 0); /* state 21 under 39 */
    m = expand(&x, 0, b, n, 39, o, 0);
    assert_int_equal(m, 1);
    assert_int_equal(x.stats.time_backwards, back0 + 1);
    assert_int_equal(x.stats.bad_state, 1);
    m = drain(&x, o, 0);
    assert_int_equal(m, 1);
    assert_false(o[0].known & ETL_CSW_STATE);
    assert_int_equal(o[0].old_state, 21);
    assert_int_equal(etl_batch_expand_finish(&x, &sw), ETL_END);
    /* after finish: back to the initial state, times forgotten */
    n = mk_hdr(b, 1, t, NULL, 1);
    n = r_lite(b, n, 0, 0, 40, 0);
    expand(&x, 0, b, n, 39, o, 0);
    assert_int_equal(x.stats.time_backwards, back0 + 1);
    assert_int_equal(etl_batch_expand_next(NULL, &sw), ETL_END);
}

/* ---- encoder -------------------------------------------------------------- */

static etl_ccswap_switch sw_in(uint16_t cpu, uint64_t t, uint32_t tid, int prio, int base,
                               unsigned state, unsigned reason, uint32_t wait)
{
    etl_ccswap_switch s;
    memset(&s, 0, sizeof s);
    s.cpu = cpu;
    s.time = t;
    s.old_tid = tid;
    s.old_priority = (int8_t)prio;
    s.old_base_priority = (int8_t)base;
    s.old_state = (uint8_t)state;
    s.old_wait_reason = (uint8_t)reason;
    s.new_wait_time = wait;
    return s;
}

static etl_ccswap_encoder_cpu g_cpus[64];
static etl_ccswap_encoder g_enc;

/* Checks a finished batch against the walker: count, first time, delta 0. */
static void check_batch(const etl_ccswap_batch *bt, uint32_t records, uint64_t first)
{
    assert_true(bt->size >= ETL_CCSWAP_HEADER_SIZE && bt->size <= ETL_CCSWAP_BATCH_MAX);
    assert_int_equal(bt->records, records);
    assert_true(bt->first_time == first);
    etl_ccswap_walker w;
    etl_ccswap_record r;
    assert_int_equal(etl_ccswap_open(&w, span(bt->data, bt->size)), ETL_OK);
    assert_true(w.first_time == first);
    uint32_t k = 0;
    etl_status st;
    while ((st = etl_ccswap_next(&w, &r)) == ETL_OK) {
        if (k == 0) {
            assert_int_equal(r.delta, 0);
            assert_true(r.time == first);
        }
        k++;
    }
    assert_int_equal(st, ETL_END);
    assert_int_equal(k, records);
    assert_true(r.time == bt->last_time);
}

static void test_encode_bytes(void **state)
{
    (void)state;
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, 1, 39, ETL_CCSWAP_NO_AGE_LIMIT), ETL_OK);
    etl_ccswap_switch s[5] = {
        sw_in(0, 1000, 0x100, 9, 8, 5, 6, 0),      /* lite: idx 0, inc 1, wr 6 */
        sw_in(0, 1010, 0, 0, 0, 2, 0, 0),          /* idle-short delta 10 */
        sw_in(0, 21010, 0x200, 13, 8, 1, 0, 5),    /* full: wait 5, wr 40 */
        sw_in(0, 91010, 0, 0, 0, 0, 0, 0),         /* idle delta 70000 */
        sw_in(0, 91011, 0x100, 8, 3, 1, 0, 0),     /* lite: idx 0 reused (base stays 8) */
    };
    for (int i = 0; i < 5; i++) {
        assert_int_equal(etl_ccswap_encoder_add(e, &s[i], &bt), ETL_OK);
        assert_int_equal(bt.size, 0);
        assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
        assert_null(bt.data);
    }
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_END);
    uint8_t want[CAP];
    size_t n = put_hex(want, 0, "e8 03 00 00 00 00 00 00"
                                "00 01 00 00 00 02 00 00");
    memset(want + n, 0, 14 * 4);
    n += 14 * 4;
    n = put_hex(want, n, "08 08");
    memset(want + n, 0, 14);
    n += 14;
    n = put_hex(want, n, "42 0c 00 00  28 00  83 38 01 00 81 b6 02 00  c1 45 04 00  02 d0 00 00");
    assert_int_equal(n, 0x6E);
    assert_int_equal(bt.size, n);
    assert_memory_equal(bt.data, want, n);
    check_batch(&bt, 5, 1000);
    assert_true(bt.last_time == 91011);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_END);
    assert_int_equal(e->stats.forms[ETL_CCSWAP_LITE], 2);
    assert_int_equal(e->stats.forms[ETL_CCSWAP_FULL], 1);
    assert_int_equal(e->stats.forms[ETL_CCSWAP_IDLE], 1);
    assert_int_equal(e->stats.forms[ETL_CCSWAP_IDLE_SHORT], 1);
}

static void test_flush_tid_table_full(void **state)
{
    (void)state;
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    etl_ccswap_encoder_init(e, g_cpus, 2, 39, ETL_CCSWAP_NO_AGE_LIMIT);
    for (unsigned i = 0; i < 16; i++) {
        etl_ccswap_switch s = sw_in(1, 100 * i, 1000 + i, 8, 8, 1, 0, 0);
        assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
        assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    }
    /* a thread already in the table reuses its index; idle needs none */
    etl_ccswap_switch s = sw_in(1, 1600, 1003, 8, 8, 1, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    s = sw_in(1, 1700, 0, 0, 0, 0, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    /* a 17th thread: the batch is written, the switch opens the next one */
    s = sw_in(1, 1800, 2000, 8, 8, 1, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_TID_TABLE_FULL);
    assert_int_equal(bt.cpu, 1);
    check_batch(&bt, 18, 0);
    assert_true(bt.last_time == 1700);
    etl_ccswap_walker w;
    etl_ccswap_open(&w, span(bt.data, bt.size));
    assert_int_equal(w.tid_count, 16);
    etl_ccswap_record r;
    for (int i = 0; i < 17; i++) etl_ccswap_next(&w, &r);
    assert_int_equal(r.old_tid, 1003);
    assert_int_equal(r.index, 3);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_END);
    check_batch(&bt, 1, 1800);
    etl_ccswap_open(&w, span(bt.data, bt.size));
    assert_int_equal(w.tid_count, 1);
    assert_int_equal(etl_ccswap_tid(&w, 0), 2000);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_END);
    assert_int_equal(e->stats.flushes[ETL_CCSWAP_FLUSH_TID_TABLE_FULL], 1);
    assert_int_equal(e->stats.flushes[ETL_CCSWAP_FLUSH_END], 1);
    assert_int_equal(e->stats.batches, 2);

    /* Precedence: table full and delta overflow at once -> the table is named. */
    etl_ccswap_encoder_init(e, g_cpus, 1, 39, ETL_CCSWAP_NO_AGE_LIMIT);
    for (unsigned i = 0; i < 16; i++) {
        s = sw_in(0, i, 1000 + i, 8, 8, 1, 0, 0);
        etl_ccswap_encoder_add(e, &s, &bt);
    }
    s = sw_in(0, 15 + (1ull << 30), 5000, 8, 8, 1, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_TID_TABLE_FULL);
}

static void test_flush_age(void **state)
{
    (void)state;
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    etl_ccswap_encoder_init(e, g_cpus, 1, 39, 1000);
    uint64_t ts[] = {5000, 5500, 6000};
    for (int i = 0; i < 3; i++) {
        etl_ccswap_switch s = sw_in(0, ts[i], 0, 0, 0, 0, 0, 0);
        assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
        assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE); /* age 1000 is not more than 1000 */
    }
    etl_ccswap_switch s = sw_in(0, 6001, 7, 8, 8, 1, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_AGE);
    check_batch(&bt, 3, 5000);
    s = sw_in(0, 7001, 7, 8, 8, 1, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    s = sw_in(0, 7002, 0, 0, 0, 0, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_AGE);
    check_batch(&bt, 2, 6001);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    check_batch(&bt, 1, 7002);

    /* 500 timer ticks in session units */
    assert_true(etl_ccswap_max_age(156250, 10000000) == 78125000);
    assert_true(etl_ccswap_max_age(156250, 3000000000ull) == 23437500000ull);
    assert_true(etl_ccswap_max_age(10000, 2441406) == 1220703); /* 1 ms ticks, 2.44 MHz QPC */
    assert_true(etl_ccswap_max_age(UINT32_MAX, UINT64_MAX) == UINT64_MAX);
    assert_true(etl_ccswap_max_age(UINT32_MAX, 9999999) == 2147483432751ull);
    assert_true(etl_ccswap_max_age(0, UINT64_MAX) == 0);
}

/* Fill to the "fewer than 8 bytes left" rule with one record size. */
static void fill_no_room(unsigned form, uint32_t want_records, size_t want_size)
{
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    etl_ccswap_encoder_init(e, g_cpus, 1, 39, ETL_CCSWAP_NO_AGE_LIMIT);
    for (uint32_t i = 0;; i++) {
        etl_ccswap_switch s = form <= ETL_CCSWAP_IDLE ? sw_in(0, i, 0, 0, 0, 0, 0, 0)
                                                      : sw_in(0, i, 9, 8, 8, 1, 0,
                                                              form == ETL_CCSWAP_FULL ? 1 : 0);
        assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
        if (bt.reason != ETL_CCSWAP_FLUSH_NONE) {
            assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NO_ROOM);
            assert_int_equal(i, want_records);
            assert_int_equal(bt.size, want_size);
            check_batch(&bt, want_records, 0);
            break;
        }
        assert_true(i < 1000);
    }
    assert_int_equal(e->stats.forms[form], want_records + 1);
}

static void test_flush_no_room(void **state)
{
    (void)state;
    fill_no_room(ETL_CCSWAP_FULL, 117, 0x400);            /* 88 + 117*8 = 1024 */
    fill_no_room(ETL_CCSWAP_LITE, 233, 0x58 + 233 * 4);   /* 4 bytes left: not "at least 8" */
    fill_no_room(ETL_CCSWAP_IDLE_SHORT, 465, 0x58 + 465 * 2);
}

static void test_flush_delta_overflow(void **state)
{
    (void)state;
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    etl_ccswap_encoder_init(e, g_cpus, 1, 39, ETL_CCSWAP_NO_AGE_LIMIT);
    uint64_t t = 1;
    etl_ccswap_switch s = sw_in(0, t, 5, 8, 8, 1, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    t += (1u << 30) - 1; /* fits 30 bits */
    s = sw_in(0, t, 0, 0, 0, 0, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    t += (1u << 30) - 1;
    s = sw_in(0, t, 5, 8, 8, 1, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    t += 1u << 30; /* does not */
    s = sw_in(0, t, 5, 8, 8, 1, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_DELTA_OVERFLOW);
    check_batch(&bt, 3, 1);
    etl_ccswap_walker w;
    etl_ccswap_record r;
    etl_ccswap_open(&w, span(bt.data, bt.size));
    etl_ccswap_next(&w, &r);
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.form, ETL_CCSWAP_IDLE);
    assert_int_equal(r.delta, (1u << 30) - 1);
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.form, ETL_CCSWAP_FULL);
    assert_int_equal(r.delta, (1u << 30) - 1);
    /* a huge gap (beyond 32 bits) is fine too */
    t += 1ull << 40;
    s = sw_in(0, t, 0, 0, 0, 0, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_DELTA_OVERFLOW);
    check_batch(&bt, 1, 1 + 3 * (1ull << 30) - 2);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    check_batch(&bt, 1, t);
}

static void test_flush_end_many_cpus(void **state)
{
    (void)state;
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    etl_ccswap_encoder_init(e, g_cpus, 3, 39, ETL_CCSWAP_NO_AGE_LIMIT);
    etl_ccswap_switch s = sw_in(2, 50, 4, 8, 8, 1, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    s = sw_in(0, 60, 4, 8, 8, 1, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    s = sw_in(0, 61, 0, 0, 0, 0, 0, 0);
    etl_ccswap_encoder_add(e, &s, &bt);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    assert_int_equal(bt.cpu, 0);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_END);
    check_batch(&bt, 2, 60);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    assert_int_equal(bt.cpu, 2);
    check_batch(&bt, 1, 50);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_END);
    assert_int_equal(bt.size, 0);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_END);
    /* after the end, a new switch starts a fresh batch */
    s = sw_in(2, 70, 4, 8, 8, 1, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    check_batch(&bt, 1, 70);
}

static unsigned form_of(const etl_ccswap_switch *s, size_t nprev, const etl_ccswap_switch *prev)
{
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    etl_ccswap_encoder_init(e, g_cpus, 1, 39, ETL_CCSWAP_NO_AGE_LIMIT);
    for (size_t i = 0; i < nprev; i++) etl_ccswap_encoder_add(e, &prev[i], &bt);
    assert_int_equal(etl_ccswap_encoder_add(e, s, &bt), ETL_OK);
    assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_NONE);
    etl_ccswap_encoder_flush(e, &bt);
    etl_ccswap_walker w;
    etl_ccswap_record r;
    etl_ccswap_open(&w, span(bt.data, bt.size));
    for (size_t i = 0; i <= nprev; i++) assert_int_equal(etl_ccswap_next(&w, &r), ETL_OK);
    return r.form;
}

static void test_encode_forms(void **state)
{
    (void)state;
    etl_ccswap_switch p[1] = {sw_in(0, 0, 9, 10, 10, 1, 0, 0)}; /* thread 9, base 10 */
    etl_ccswap_switch s;
    s = sw_in(0, 16383, 0, 0, 0, 0, 0, 0);
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_IDLE_SHORT);
    s.time = 16384;
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_IDLE);
    s = sw_in(0, 131071, 9, 10, 3, 1, 0, 0); /* recorded base 10, not 3 */
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_LITE);
    s.time = 131072;
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_FULL);
    s = sw_in(0, 1, 9, 17, 10, 1, 0, 0); /* inc 7 */
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_LITE);
    s.old_priority = 18; /* inc 8 */
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_FULL);
    s.old_priority = 9; /* inc -1 */
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_FULL);
    s.old_priority = 10;
    s.new_wait_time = 1; /* waited: Full (0, not <= 1, so the round trip is exact) */
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_FULL);
    /* the first switch of a thread uses its own base */
    s = sw_in(0, 1, 12, 15, 12, 1, 0, 0);
    assert_int_equal(form_of(&s, 1, p), ETL_CCSWAP_LITE);
}

static void test_encode_clamps_and_errors(void **state)
{
    (void)state;
    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, 1, 0, 0), ETL_E_INVALID_ARG);
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, 1, 55, 0), ETL_E_INVALID_ARG);
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, 0, 39, 0), ETL_E_INVALID_ARG);
    assert_int_equal(etl_ccswap_encoder_init(e, NULL, 1, 39, 0), ETL_E_INVALID_ARG);
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, 1, 54, ETL_CCSWAP_NO_AGE_LIMIT), ETL_OK);
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, 2, 39, ETL_CCSWAP_NO_AGE_LIMIT), ETL_OK);

    etl_ccswap_switch s = sw_in(2, 0, 9, 8, 8, 1, 0, 0);
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_E_INVALID_ARG);
    s = sw_in(0, 100, 9, 40, 8, 1, 0, 0); /* priority 40 -> 31 */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    s = sw_in(0, 99, 9, 8, 8, 1, 0, 0);   /* earlier than the previous switch */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_E_INVALID_ARG);
    s = sw_in(0, 101, 9, 8, 8, 25, 0, 0); /* 39 + 25 > 63 */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_E_RANGE);
    s = sw_in(0, 101, 9, 8, 8, 24, 0, 0); /* 39 + 24 = 63: fits (decodes as a bad state) */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    s = sw_in(0, 102, 10, -3, -3, 1, 0, 1);   /* Full, priority -3 -> 0 */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    s = sw_in(0, 103, 9, 8, 8, 1, 0, 200000); /* wait -> 131071 */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    s = sw_in(0, 104, 9, 8, 8, 5, 45, 0);     /* waiting, reason 45 >= bias: dropped */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    s = sw_in(0, 105, 10, -3, 0, 1, 0, 0);    /* a negative priority: no Lite (it decodes as damage), Full clamped */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    s = sw_in(0, 106, 0, 99, 99, 60, 99, 99); /* idle: state and the rest ignored */
    assert_int_equal(etl_ccswap_encoder_add(e, &s, &bt), ETL_OK);
    assert_int_equal(e->stats.priority_clamped, 3);
    assert_int_equal(e->stats.wait_time_clamped, 1);
    assert_int_equal(e->stats.wait_reason_dropped, 1);
    assert_int_equal(e->stats.switches, 7);
    assert_int_equal(etl_ccswap_encoder_flush(e, &bt), ETL_OK);
    check_batch(&bt, 7, 100);

    etl_ccswap_walker w;
    etl_ccswap_record r;
    etl_cswitch c;
    etl_ccswap_open(&w, span(bt.data, bt.size));
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.old_priority, 31);
    etl_ccswap_next(&w, &r);
    assert_false(etl_ccswap_to_cswitch(&r, 0, 39, 2, &c)); /* state 24 */
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.form, ETL_CCSWAP_FULL);
    assert_int_equal(r.old_priority, 0);
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.new_wait_time, 131071);
    etl_ccswap_next(&w, &r);
    etl_ccswap_to_cswitch(&r, 0, 39, 2, &c);
    assert_int_equal(c.old_state, 5);
    assert_false(c.known & ETL_CSW_WAIT_REASON);
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.form, ETL_CCSWAP_FULL);
    assert_int_equal(r.old_priority, 0);
    etl_ccswap_next(&w, &r);
    assert_int_equal(r.form, ETL_CCSWAP_IDLE_SHORT);
}

/* ---- seeded random round trips -------------------------------------------- */

typedef struct rt_ctx {
    etl_ccswap_switch *in;
    size_t *next_same;   /* index of the next input on the same CPU, SIZE_MAX if none */
    size_t *cursor;      /* per CPU: next input expected out of the expander */
    etl_batch_expander x;
    etl_batch_expand_cpu cpus[64];
    unsigned bias;
    size_t checked;
} rt_ctx;

static void rt_check(rt_ctx *ctx, const etl_cswitch *sw, bool open)
{
    assert_true(sw->cpu < 64);
    size_t i = ctx->cursor[sw->cpu];
    assert_true(i != SIZE_MAX);
    const etl_ccswap_switch *s = &ctx->in[i];
    ctx->cursor[sw->cpu] = ctx->next_same[i];
    bool idle = s->old_tid == 0;
    assert_int_equal(sw->cpu, s->cpu);
    assert_true(sw->ts == s->time);
    assert_int_equal(sw->source, ETL_CSW_SRC_COMPACT);
    assert_int_equal(sw->version, 2);
    assert_true(sw->known & ETL_CSW_TIME);
    assert_true(sw->known & ETL_CSW_CPU);
    assert_true(sw->known & ETL_CSW_OLD_TID);
    assert_int_equal(sw->old_tid, s->old_tid);
    assert_true(sw->known & ETL_CSW_OLD_PRIORITY);
    assert_int_equal(sw->old_priority, idle ? 0 : s->old_priority);
    if (idle) {
        assert_false(sw->known & (ETL_CSW_STATE | ETL_CSW_WAIT_REASON | ETL_CSW_NEW_WAIT_TIME));
    } else {
        assert_true(sw->known & ETL_CSW_STATE);
        assert_int_equal(sw->old_state, s->old_state);
        if (s->old_state == ETL_CCSWAP_STATE_WAITING) {
            assert_true(sw->known & ETL_CSW_WAIT_REASON);
            assert_int_equal(sw->old_wait_reason, s->old_wait_reason);
        } else {
            assert_false(sw->known & ETL_CSW_WAIT_REASON);
        }
        if (sw->known & ETL_CSW_NEW_WAIT_TIME)
            assert_int_equal(sw->new_wait_time, s->new_wait_time);
        else
            assert_int_equal(s->new_wait_time, 0); /* Lite only when it waited 0 */
    }
    if (open) {
        assert_false(sw->known & ETL_CSW_NEW_TID);
        assert_true(ctx->next_same[i] == SIZE_MAX);
    } else {
        assert_true(sw->known & ETL_CSW_NEW_TID);
        assert_true(ctx->next_same[i] != SIZE_MAX);
        assert_int_equal(sw->new_tid, ctx->in[ctx->next_same[i]].old_tid);
    }
    assert_false(sw->known & (ETL_CSW_NEW_PRIORITY | ETL_CSW_WAIT_MODE | ETL_CSW_IDEAL_PROCESSOR));
    ctx->checked++;
}

static void rt_feed(rt_ctx *ctx, const etl_ccswap_batch *bt)
{
    assert_true(bt->size <= ETL_CCSWAP_BATCH_MAX);
    check_batch(bt, bt->records, bt->first_time);
    assert_int_equal(etl_batch_expand_begin(&ctx->x, bt->cpu, span(bt->data, bt->size),
                                            ctx->bias, 2), ETL_OK);
    etl_cswitch sw;
    while (etl_batch_expand_next(&ctx->x, &sw) == ETL_OK) rt_check(ctx, &sw, false);
}

static void roundtrip(uint64_t seed, size_t nsw, unsigned ncpu)
{
    static const unsigned biases[] = {27, 37, 39, 40, 42, 43};
    uint64_t rs = seed;
    rt_ctx *ctx = calloc(1, sizeof *ctx);
    ctx->in = calloc(nsw, sizeof *ctx->in);
    ctx->next_same = malloc(nsw * sizeof *ctx->next_same);
    ctx->cursor = malloc(ncpu * sizeof *ctx->cursor);
    size_t last[64];
    uint64_t now[64];
    for (unsigned c = 0; c < ncpu; c++) {
        ctx->cursor[c] = SIZE_MAX;
        last[c] = SIZE_MAX;
        now[c] = tu_rand(&rs) % 4 == 0 ? tu_rand(&rs) >> 1 : tu_rand(&rs) % 1000000;
    }
    ctx->bias = biases[tu_rand(&rs) % 6];
    uint64_t max_age = tu_rand(&rs) % 3 == 0 ? ETL_CCSWAP_NO_AGE_LIMIT
                                              : (1u << 16) + tu_rand(&rs) % (1ull << 32);
    unsigned nthreads = 3 + (unsigned)(tu_rand(&rs) % 60);
    uint32_t tids[64];
    int8_t base[64];
    for (unsigned t = 0; t < nthreads; t++) {
        tids[t] = 4 + (uint32_t)(tu_rand(&rs) % 0xFFFFFFF0u);
        base[t] = (int8_t)(tu_rand(&rs) % 32);
    }

    etl_ccswap_encoder *e = &g_enc;
    etl_ccswap_batch bt;
    assert_int_equal(etl_ccswap_encoder_init(e, g_cpus, ncpu, ctx->bias, max_age), ETL_OK);
    assert_int_equal(etl_batch_expand_init(&ctx->x, ctx->cpus, ncpu), ETL_OK);

    for (size_t i = 0; i < nsw; i++) {
        etl_ccswap_switch *s = &ctx->in[i];
        unsigned c = (unsigned)(tu_rand(&rs) % ncpu);
        uint64_t r = tu_rand(&rs) % 1000;
        uint64_t delta = r < 400 ? tu_rand(&rs) % 1024
                       : r < 700 ? tu_rand(&rs) % (1u << 14)
                       : r < 850 ? tu_rand(&rs) % (1u << 17)
                       : r < 990 ? tu_rand(&rs) % (1u << 30)
                                 : (1u << 30) + tu_rand(&rs) % (1ull << 36);
        now[c] += delta;
        memset(s, 0, sizeof *s);
        s->cpu = (uint16_t)c;
        s->time = now[c];
        if (tu_rand(&rs) % 4 != 0) {
            unsigned t = (unsigned)(tu_rand(&rs) % nthreads);
            if (tu_rand(&rs) % 50 == 0) base[t] = (int8_t)(tu_rand(&rs) % 32); /* base moves */
            s->old_tid = tids[t];
            s->old_base_priority = base[t];
            int p = base[t] + (int)(tu_rand(&rs) % 11) - 1;
            s->old_priority = (int8_t)(p < 0 ? 0 : p > 31 ? 31 : p);
            if (tu_rand(&rs) % 2) {
                s->old_state = ETL_CCSWAP_STATE_WAITING;
                s->old_wait_reason = (uint8_t)(tu_rand(&rs) % ctx->bias);
            } else {
                s->old_state = (uint8_t)(tu_rand(&rs) % 10);
                if (s->old_state == ETL_CCSWAP_STATE_WAITING)
                    s->old_wait_reason = (uint8_t)(tu_rand(&rs) % ctx->bias);
            }
        }
        if (tu_rand(&rs) % 5 < 2) s->new_wait_time = (uint32_t)(tu_rand(&rs) % (1u << 17));
        ctx->next_same[i] = SIZE_MAX;
        if (last[c] != SIZE_MAX) ctx->next_same[last[c]] = i;
        else ctx->cursor[c] = i;
        last[c] = i;

        assert_int_equal(etl_ccswap_encoder_add(e, s, &bt), ETL_OK);
        if (bt.size) {
            assert_true(bt.reason != ETL_CCSWAP_FLUSH_NONE && bt.reason != ETL_CCSWAP_FLUSH_END);
            assert_int_equal(bt.cpu, c);
            rt_feed(ctx, &bt);
        }
    }
    while (etl_ccswap_encoder_flush(e, &bt) == ETL_OK) {
        assert_int_equal(bt.reason, ETL_CCSWAP_FLUSH_END);
        rt_feed(ctx, &bt);
    }
    etl_cswitch sw;
    while (etl_batch_expand_finish(&ctx->x, &sw) == ETL_OK) rt_check(ctx, &sw, true);
    assert_int_equal(ctx->checked, nsw);
    for (unsigned c = 0; c < ncpu; c++) assert_true(ctx->cursor[c] == SIZE_MAX);
    const etl_batch_expand_stats *st = &ctx->x.stats;
    assert_int_equal(st->records, nsw);
    assert_int_equal(st->switches, nsw);
    assert_int_equal(st->bad_index + st->truncated + st->bad_state + st->time_backwards +
                         st->bad_cpu + st->short_batches + st->broken_chains + st->abandoned, 0);
    assert_int_equal(e->stats.switches, nsw);
    assert_int_equal(e->stats.priority_clamped + e->stats.wait_time_clamped +
                         e->stats.wait_reason_dropped, 0);
    assert_int_equal(st->batches, e->stats.batches);
    free(ctx->in);
    free(ctx->next_same);
    free(ctx->cursor);
    free(ctx);
}

static void test_roundtrip_random(void **state)
{
    (void)state;
    uint64_t forms[4] = {0};
    uint64_t flushes[ETL_CCSWAP_FLUSH_REASONS] = {0};
    for (uint64_t seed = 1; seed <= 40; seed++) {
        unsigned ncpu = seed == 1 ? 1 : 1 + (unsigned)(seed * 7 % 64);
        roundtrip(seed, 20000, ncpu);
        for (int f = 0; f < 4; f++) forms[f] += g_enc.stats.forms[f];
        for (int f = 0; f < ETL_CCSWAP_FLUSH_REASONS; f++) flushes[f] += g_enc.stats.flushes[f];
    }
    /* every form and every flush reason was exercised */
    for (int f = 0; f < 4; f++) assert_true(forms[f] > 0);
    for (int f = 1; f < ETL_CCSWAP_FLUSH_REASONS; f++) assert_true(flushes[f] > 0);
}

/* etl_ccswap_count (and _timed) against the walker on random batches: same records, same bad ones, the last time. */
static void test_count_random(void **state)
{
    (void)state;
    uint64_t seed = 0x5EED;
    uint8_t buf[ETL_CCSWAP_HEADER_SIZE + 320];
    for (int iter = 0; iter < 20000; iter++) {
        /* Short and long ones: the count goes 8 bytes at a time while 16 remain. */
        size_t n = ETL_CCSWAP_HEADER_SIZE + tu_rand(&seed) % (iter & 1 ? 321 : 40);
        for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)tu_rand(&seed);
        /* A random number of filled TidTable entries, so bad indices happen both ways. */
        unsigned filled = (unsigned)(tu_rand(&seed) % 17);
        for (unsigned k = 0; k < 16; k++)
            if (k == filled) memset(buf + 8 + 4 * k, 0, 4);
        etl_ccswap_walker w, wc, wt;
        assert_int_equal(etl_ccswap_open(&w, (etl_span){buf, n}), ETL_OK);
        wc = wt = w;
        uint64_t count, bad, seen = 0, seen_bad = 0, tcount, tbad, last, seen_last = w.first_time;
        etl_ccswap_count(&wc, &count, &bad);
        etl_ccswap_count_timed(&wt, &tcount, &tbad, &last);
        etl_ccswap_record r;
        etl_status st;
        while ((st = etl_ccswap_next(&w, &r)) != ETL_END) {
            if (st == ETL_E_TRUNCATED) {
                seen_bad++;
                break;
            }
            seen++;
            seen_bad += st != ETL_OK;
            seen_last = r.time;
        }
        assert_int_equal(count, seen);
        assert_int_equal(bad, seen_bad);
        assert_int_equal(tcount, seen);
        assert_int_equal(tbad, seen_bad);
        assert_int_equal(last, seen_last);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_header),
        cmocka_unit_test(test_idle_short_layout),
        cmocka_unit_test(test_idle_layout),
        cmocka_unit_test(test_lite_layout),
        cmocka_unit_test(test_full_layout),
        cmocka_unit_test(test_unaligned),
        cmocka_unit_test(test_lite_priority),
        cmocka_unit_test(test_record0_delta),
        cmocka_unit_test(test_to_cswitch_bias),
        cmocka_unit_test(test_to_cswitch_known),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_short_header),
        cmocka_unit_test(test_bad_index),
        cmocka_unit_test(test_cut_everywhere),
        cmocka_unit_test(test_expand_one_cpu_across_batches),
        cmocka_unit_test(test_expand_interleaved),
        cmocka_unit_test(test_expand_errors),
        cmocka_unit_test(test_encode_bytes),
        cmocka_unit_test(test_flush_tid_table_full),
        cmocka_unit_test(test_flush_age),
        cmocka_unit_test(test_flush_no_room),
        cmocka_unit_test(test_flush_delta_overflow),
        cmocka_unit_test(test_flush_end_many_cpus),
        cmocka_unit_test(test_encode_forms),
        cmocka_unit_test(test_encode_clamps_and_errors),
        cmocka_unit_test(test_roundtrip_random),
        cmocka_unit_test(test_count_random),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_kernel_codecs.c - the NT Kernel Logger payload codecs (kernel.h):
 * the shared payload vectors, seeded round trips over every version and
 * pointer size, and hand-built malformed inputs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "testutil.h"
#include "etlkit/kernel.h"

enum { CASES = 5000 };
static const unsigned ptr_sizes[2] = {4, 8};

/* ------------------------------------------------------------ helpers */

static etl_span span(const uint8_t *p, size_t n)
{
    etl_span s = {p, n};
    return s;
}

/* A heap copy of exactly n bytes, so ASan sees any read past a cut payload. */
static uint8_t *exact_copy(const uint8_t *p, size_t n)
{
    uint8_t *c = malloc(n ? n : 1);
    assert_non_null(c);
    if (n) memcpy(c, p, n);
    return c;
}

static bool same_text(const etl_kstr *a, const etl_kstr *b)
{
    return a->text.n == b->text.n && (a->text.n == 0 || !memcmp(a->text.p, b->text.p, a->text.n));
}

static void fill_ansi(uint64_t *r, uint8_t *buf, size_t max, etl_kstr *s)
{
    size_t n = tu_rand(r) % (max + 1);
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)(1 + tu_rand(r) % 255);
    s->text = span(buf, n);
    s->terminated = true;
}

static void fill_utf16(uint64_t *r, uint8_t *buf, size_t max_units, etl_kstr *s)
{
    size_t n = tu_rand(r) % (max_units + 1);
    for (size_t i = 0; i < n; i++) {
        uint16_t u = (uint16_t)(1 + tu_rand(r) % 0xFFFF);
        buf[2 * i] = (uint8_t)u;
        buf[2 * i + 1] = (uint8_t)(u >> 8);
    }
    s->text = span(buf, 2 * n);
    s->terminated = true;
}

static uint64_t rand_ptr(uint64_t *r, unsigned ptr_size)
{
    uint64_t v = tu_rand(r);
    return ptr_size == 8 ? v : (uint32_t)v;
}

/* ------------------------------------------------------- payload vectors */

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    assert_int_equal(fseek(f, 0, SEEK_END), 0);
    long n = ftell(f);
    assert_true(n > 0);
    rewind(f);
    char *buf = malloc((size_t)n + 1);
    assert_non_null(buf);
    assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
    buf[n] = 0;
    fclose(f);
    return buf;
}

/*
 * jansson refuses integers above INT64_MAX (SpinLockAddress is one), so every
 * bare number outside a string is quoted and read back with strtoull/strtoll.
 */
static char *quote_numbers(const char *s)
{
    char *out = malloc(2 * strlen(s) + 1), *o = out;
    assert_non_null(out);
    bool in_string = false;
    for (; *s; s++) {
        if (in_string) {
            *o++ = *s;
            if (*s == '\\' && s[1]) *o++ = *++s;
            else if (*s == '"') in_string = false;
        } else if (*s == '"') {
            *o++ = *s;
            in_string = true;
        } else if (*s == '-' || (*s >= '0' && *s <= '9')) {
            *o++ = '"';
            while (*s == '-' || *s == '+' || *s == '.' || *s == 'e' || *s == 'E' ||
                   (*s >= '0' && *s <= '9'))
                *o++ = *s++;
            *o++ = '"';
            s--;
        } else {
            *o++ = *s;
        }
    }
    *o = 0;
    return out;
}

static const char *str_of(json_t *obj, const char *key)
{
    json_t *v = json_object_get(obj, key);
    if (!v) fail_msg("missing key %s", key);
    assert_true(json_is_string(v));
    return json_string_value(v);
}

static uint64_t u_of(json_t *obj, const char *key) { return strtoull(str_of(obj, key), NULL, 10); }
static int64_t i_of(json_t *obj, const char *key) { return strtoll(str_of(obj, key), NULL, 10); }

static void check_cswitch_vector(const uint8_t *b, size_t n, unsigned version, json_t *f)
{
    etl_cswitch c;
    memset(&c, 0, sizeof c);
    assert_int_equal(etl_cswitch_decode(span(b, n), version, &c), ETL_OK);
    assert_int_equal(c.new_tid, u_of(f, "NewThreadId"));
    assert_int_equal(c.old_tid, u_of(f, "OldThreadId"));
    assert_int_equal(c.new_priority, i_of(f, "NewThreadPriority"));
    assert_int_equal(c.old_priority, i_of(f, "OldThreadPriority"));
    assert_int_equal(c.previous_cstate, u_of(f, "PreviousCState"));
    assert_int_equal((int8_t)c.spare_byte, i_of(f, "SpareByte"));
    assert_int_equal(c.old_wait_reason, u_of(f, "OldThreadWaitReason"));
    assert_int_equal(c.old_wait_mode, u_of(f, "OldThreadWaitMode"));
    assert_int_equal(c.old_state, u_of(f, "OldThreadState"));
    assert_int_equal(c.old_ideal_processor, u_of(f, "OldThreadWaitIdealProcessor"));
    assert_int_equal(c.new_wait_time, u_of(f, "NewThreadWaitTime"));
    assert_int_equal((uint32_t)c.old_remaining_quantum, (uint32_t)i_of(f, "Reserved"));
    assert_int_equal(c.source, ETL_CSW_SRC_CSWITCH);

    uint8_t again[64];
    size_t len;
    assert_int_equal(etl_cswitch_encode(&c, version, again, sizeof again, &len), ETL_OK);
    assert_int_equal(len, n);
    assert_memory_equal(again, b, n);
}

static void check_spinlock_vector(const uint8_t *b, size_t n, unsigned ptr_size, json_t *f)
{
    etl_spinlock s;
    assert_int_equal(etl_spinlock_decode(span(b, n), ptr_size, &s), ETL_OK);
    assert_true(s.spin_lock_address == u_of(f, "SpinLockAddress"));
    assert_true(s.caller_address == u_of(f, "CallerAddress"));
    assert_true(s.acquire_time == u_of(f, "AcquireTime"));
    assert_true(s.release_time == u_of(f, "ReleaseTime"));
    assert_int_equal(s.wait_time_in_cycles, u_of(f, "WaitTimeInCycles"));
    assert_int_equal(s.spin_count, u_of(f, "SpinCount"));
    assert_int_equal(s.thread_id, u_of(f, "ThreadId"));
    assert_int_equal(s.interrupt_count, u_of(f, "InterruptCount"));
    assert_int_equal(s.irql, u_of(f, "Irql"));
    assert_int_equal(s.acquire_depth, u_of(f, "AcquireDepth"));
    assert_int_equal(s.flags, u_of(f, "Flag"));
    assert_int_equal(etl_spinlock_hold_cycles(&s), s.release_time - s.acquire_time);

    uint8_t again[64];
    size_t len;
    assert_int_equal(etl_spinlock_encode(&s, ptr_size, again, sizeof again, &len), ETL_OK);
    assert_int_equal(len, n);
    assert_memory_equal(again, b, n);
}

static void check_ready_vector(const uint8_t *b, size_t n, json_t *f)
{
    etl_ready_thread r;
    assert_int_equal(etl_ready_thread_decode(span(b, n), &r), ETL_OK);
    assert_int_equal(r.thread_id, u_of(f, "TThreadId"));
    assert_int_equal(r.adjust_reason, u_of(f, "AdjustReason"));
    assert_int_equal(r.adjust_increment, i_of(f, "AdjustIncrement"));
    assert_int_equal(r.flags, u_of(f, "Flag"));

    uint8_t again[8];
    size_t len;
    assert_int_equal(etl_ready_thread_encode(&r, again, sizeof again, &len), ETL_OK);
    assert_int_equal(len, n);
    assert_memory_equal(again, b, n);
}

static void test_payload_vectors(void **state)
{
    (void)state;
    char *raw = slurp(ETLKIT_SHARED_DIR "/expected/payload-vectors.json");
    char *text = quote_numbers(raw);
    json_error_t err;
    json_t *root = json_loads(text, 0, &err);
    if (!root) fail_msg("payload-vectors.json: %s (line %d)", err.text, err.line);
    assert_true(json_is_array(root));
    assert_true(json_array_size(root) >= 4);

    size_t i, seen[3] = {0, 0, 0};
    json_t *v;
    json_array_foreach(root, i, v) {
        const char *event = str_of(v, "event");
        unsigned version = (unsigned)u_of(v, "version");
        unsigned ptr_size = (unsigned)u_of(v, "pointer_size");
        json_t *fields = json_object_get(v, "fields");
        assert_non_null(fields);
        uint8_t b[256];
        size_t n = tu_hex(str_of(v, "hex"), b, sizeof b);
        assert_true(n <= sizeof b);
        /* Each decoder also rejects the vector cut by one byte. */
        if (!strcmp(event, "CSwitch")) {
            check_cswitch_vector(b, n, version, fields);
            etl_cswitch c;
            assert_int_equal(etl_cswitch_decode(span(b, n - 1), version, &c), ETL_E_TRUNCATED);
            seen[0]++;
        } else if (!strcmp(event, "SpinLock")) {
            check_spinlock_vector(b, n, ptr_size, fields);
            etl_spinlock s;
            assert_int_equal(etl_spinlock_decode(span(b, n - 6), ptr_size, &s), ETL_E_TRUNCATED);
            seen[1]++;
        } else if (!strcmp(event, "ReadyThread")) {
            check_ready_vector(b, n, fields);
            etl_ready_thread r;
            assert_int_equal(etl_ready_thread_decode(span(b, n - 1), &r), ETL_E_TRUNCATED);
            seen[2]++;
        } else {
            fail_msg("payload vector %zu: unknown event %s", i, event);
        }
    }
    assert_true(seen[0] >= 2 && seen[1] >= 1 && seen[2] >= 1);
    json_decref(root);
    free(text);
    free(raw);
}

/* -------------------------------------------------------------- CSwitch */

static unsigned cswitch_layout(unsigned v) { return v < 1 ? 1 : v > 4 ? 4 : v; }

static void rand_cswitch(uint64_t *r, unsigned version, etl_cswitch *c)
{
    uint64_t a = tu_rand(r), b = tu_rand(r), d = tu_rand(r);
    memset(c, 0, sizeof *c);
    c->new_tid = (uint32_t)a;
    c->old_tid = (uint32_t)(a >> 32);
    c->new_priority = (int8_t)b;
    c->old_priority = (int8_t)(b >> 8);
    c->previous_cstate = (uint8_t)(b >> 16);
    c->spare_byte = (uint8_t)(b >> 24);
    c->old_wait_reason = (uint8_t)(b >> 32);
    c->old_wait_mode = (uint8_t)(b >> 40);
    c->old_state = (uint8_t)(b >> 48);
    c->old_ideal_processor = (uint8_t)(b >> 56);
    c->new_wait_time = (uint32_t)d;
    c->old_remaining_quantum = (int32_t)(uint32_t)(d >> 32);
    unsigned layout = cswitch_layout(version);
    if (layout >= 3) {
        unsigned bits = layout == 3 ? 1 : 3;
        uint64_t e = tu_rand(r);
        c->old_wait_mode &= 1;
        c->old_bam = (uint8_t)(e & ((1u << bits) - 1));
        c->new_bam = (uint8_t)((e >> 8) & ((1u << bits) - 1));
        c->flags = (uint8_t)(e >> 16); /* only its reserved bits are encoded */
    }
}

static void assert_cswitch_carried(const etl_cswitch *x, const etl_cswitch *y, unsigned version)
{
    unsigned layout = cswitch_layout(version);
    assert_int_equal(y->new_tid, x->new_tid);
    assert_int_equal(y->old_tid, x->old_tid);
    assert_int_equal(y->new_priority, x->new_priority);
    assert_int_equal(y->old_priority, x->old_priority);
    assert_int_equal(y->previous_cstate, x->previous_cstate);
    assert_int_equal(y->spare_byte, x->spare_byte);
    assert_int_equal(y->old_wait_reason, x->old_wait_reason);
    assert_int_equal(y->old_wait_mode, x->old_wait_mode);
    assert_int_equal(y->old_state, x->old_state);
    assert_int_equal(y->old_ideal_processor, x->old_ideal_processor);
    uint32_t want = ETL_CSW_NEW_TID | ETL_CSW_OLD_TID | ETL_CSW_NEW_PRIORITY |
                    ETL_CSW_OLD_PRIORITY | ETL_CSW_PREVIOUS_CSTATE | ETL_CSW_SPARE_BYTE |
                    ETL_CSW_WAIT_REASON | ETL_CSW_WAIT_MODE | ETL_CSW_STATE |
                    ETL_CSW_IDEAL_PROCESSOR;
    if (layout >= 2) {
        assert_int_equal(y->new_wait_time, x->new_wait_time);
        assert_int_equal(y->old_remaining_quantum, x->old_remaining_quantum);
        want |= ETL_CSW_NEW_WAIT_TIME | ETL_CSW_REMAINING_QUANTUM;
    } else {
        assert_int_equal(y->new_wait_time, 0);
        assert_int_equal(y->old_remaining_quantum, 0);
    }
    if (layout >= 3) {
        uint8_t defined = layout == 3 ? 0x07 : 0x7F;
        assert_int_equal(y->old_bam, x->old_bam);
        assert_int_equal(y->new_bam, x->new_bam);
        assert_int_equal(y->flags & ~defined, x->flags & ~defined);
        want |= ETL_CSW_FLAGS;
    }
    /* All ones where no kernel writes them: what convert writes for a field not carried, read as unknown. */
    if (x->new_tid == UINT32_MAX) want &= ~(uint32_t)ETL_CSW_NEW_TID;
    if (x->old_tid == UINT32_MAX) want &= ~(uint32_t)ETL_CSW_OLD_TID;
    if (x->new_priority == -1) want &= ~(uint32_t)ETL_CSW_NEW_PRIORITY;
    if (x->old_priority == -1) want &= ~(uint32_t)ETL_CSW_OLD_PRIORITY;
    if (x->old_wait_reason == 0xFF) want &= ~(uint32_t)ETL_CSW_WAIT_REASON;
    if (x->old_state == 0xFF) want &= ~(uint32_t)ETL_CSW_STATE;
    if (layout < 3 && x->old_wait_mode == 0xFF) want &= ~(uint32_t)ETL_CSW_WAIT_MODE;
    if (layout >= 2 && x->previous_cstate == 0xFF) want &= ~(uint32_t)ETL_CSW_PREVIOUS_CSTATE;
    if (x->old_ideal_processor == 0xFF) want &= ~(uint32_t)ETL_CSW_IDEAL_PROCESSOR;
    if (layout >= 2 && x->new_wait_time == UINT32_MAX) want &= ~(uint32_t)ETL_CSW_NEW_WAIT_TIME;
    assert_int_equal(y->known & ~(ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_PMC | ETL_CSW_PEBS), want);
}

static void test_cswitch_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 0x0524;
    for (unsigned version = 0; version <= 6; version++) {
        for (unsigned i = 0; i < CASES; i++) {
            etl_cswitch x, y;
            uint8_t b[32], b2[32];
            size_t n, n2;
            rand_cswitch(&r, version, &x);
            assert_int_equal(etl_cswitch_encode(&x, version, b, sizeof b, &n), ETL_OK);
            assert_int_equal(n, etl_cswitch_size(version));
            /* header-filled fields survive the decode untouched */
            memset(&y, 0, sizeof y);
            y.ts = 77;
            y.cpu = 3;
            y.pmc_count = 2;
            y.pmc[1] = 9;
            y.pebs_index = 5;
            y.known = ETL_CSW_TIME | ETL_CSW_CPU | ETL_CSW_PMC | ETL_CSW_PEBS;
            assert_int_equal(etl_cswitch_decode(span(b, n), version, &y), ETL_OK);
            assert_cswitch_carried(&x, &y, version);
            assert_true(y.ts == 77 && y.cpu == 3 && y.pmc_count == 2 && y.pmc[1] == 9 &&
                        y.pebs_index == 5);
            assert_int_equal(y.known & ETL_CSW_TIME, ETL_CSW_TIME);
            assert_int_equal(y.version, version);
            assert_int_equal(etl_cswitch_encode(&y, version, b2, sizeof b2, &n2), ETL_OK);
            assert_int_equal(n2, n);
            assert_memory_equal(b2, b, n);
        }
    }
}

/* convert's CSwitch v2 for a switch a batch carried only partly: the all-ones fields read back unknown. */
static void test_cswitch_all_ones(void **state)
{
    (void)state;
    etl_cswitch x;
    memset(&x, 0, sizeof x);
    x.new_tid = UINT32_MAX;
    x.old_tid = 1234;
    x.new_priority = -1;
    x.old_priority = 9;
    x.previous_cstate = 0xFF;
    x.spare_byte = 0xFF;
    x.old_wait_reason = 0xFF;
    x.old_wait_mode = 0xFF;
    x.old_state = 2;
    x.old_ideal_processor = 0xFF;
    x.new_wait_time = UINT32_MAX;
    x.old_remaining_quantum = INT32_MIN;
    uint8_t b[32];
    size_t n;
    assert_int_equal(etl_cswitch_encode(&x, 2, b, sizeof b, &n), ETL_OK);
    etl_cswitch y;
    memset(&y, 0, sizeof y);
    assert_int_equal(etl_cswitch_decode(span(b, n), 2, &y), ETL_OK);
    /* Known: what a kernel may write all ones in (SpareByte, v2's Reserved quantum) and the real values. */
    assert_int_equal(y.known, ETL_CSW_OLD_TID | ETL_CSW_OLD_PRIORITY | ETL_CSW_SPARE_BYTE | ETL_CSW_STATE |
                                  ETL_CSW_REMAINING_QUANTUM);
    assert_true(y.new_tid == UINT32_MAX && y.new_priority == -1); /* the values stay: re-encoded as they were */
    uint8_t b2[32];
    size_t n2;
    assert_int_equal(etl_cswitch_encode(&y, 2, b2, sizeof b2, &n2), ETL_OK);
    assert_memory_equal(b2, b, n);
    etl_cswitch z;
    memset(&z, 0, sizeof z);
    assert_true(etl_cswitch_decode_ids(span(b, n), 2, &z)); /* the hot path agrees */
    assert_int_equal(z.known, ETL_CSW_OLD_TID | ETL_CSW_STATE);
    b[0x0E] = 0xFF;
    assert_true(etl_cswitch_decode_ids(span(b, n), 2, &z));
    assert_int_equal(z.known, ETL_CSW_OLD_TID);
    /* v4's byte 0x0D is flags: all ones there is a wait mode of 1 and BAM fields, known. */
    assert_int_equal(etl_cswitch_encode(&(etl_cswitch){.old_wait_mode = 1, .old_bam = 7, .new_bam = 7, .flags = 0x80},
                                        4, b, sizeof b, &n), ETL_OK);
    assert_int_equal(b[0x0D], 0xFF);
    memset(&y, 0, sizeof y);
    assert_int_equal(etl_cswitch_decode(span(b, n), 4, &y), ETL_OK);
    assert_true((y.known & ETL_CSW_WAIT_MODE) && y.old_wait_mode == 1);
}

static void test_cswitch_flags(void **state)
{
    (void)state;
    /* v3: bit0 WaitMode, bit1 OldBamEppImportant, bit2 NewBamEppImportant */
    uint8_t b[24] = {0};
    etl_cswitch c;
    memset(&c, 0, sizeof c);
    b[0x0D] = 0x07 | 0x80;
    assert_int_equal(etl_cswitch_decode(span(b, 24), 3, &c), ETL_OK);
    assert_true(c.old_wait_mode == 1 && c.old_bam == 1 && c.new_bam == 1 && c.flags == 0x87);
    /* v4: bit0 WaitMode, bits1-3 OldThreadBamQosLevel, bits4-6 NewThreadBamQosLevel */
    b[0x0D] = 0x01 | 5 << 1 | 6 << 4;
    assert_int_equal(etl_cswitch_decode(span(b, 24), 4, &c), ETL_OK);
    assert_true(c.old_wait_mode == 1 && c.old_bam == 5 && c.new_bam == 6);
    /* v2: the whole byte is OldThreadWaitMode */
    b[0x0D] = 0x5A;
    assert_int_equal(etl_cswitch_decode(span(b, 24), 2, &c), ETL_OK);
    assert_true(c.old_wait_mode == 0x5A && c.old_bam == 0 && c.flags == 0);
    assert_int_equal(c.known & ETL_CSW_FLAGS, 0);

    /* values that do not fit the flag byte */
    size_t n = 99;
    memset(&c, 0, sizeof c);
    c.old_bam = 2;
    assert_int_equal(etl_cswitch_encode(&c, 3, b, sizeof b, &n), ETL_E_RANGE);
    assert_int_equal(n, 0);
    c.old_bam = 7;
    assert_int_equal(etl_cswitch_encode(&c, 4, b, sizeof b, &n), ETL_OK);
    c.new_bam = 8;
    assert_int_equal(etl_cswitch_encode(&c, 4, b, sizeof b, &n), ETL_E_RANGE);
    c.new_bam = 0;
    c.old_wait_mode = 2;
    assert_int_equal(etl_cswitch_encode(&c, 4, b, sizeof b, &n), ETL_E_RANGE);
    assert_int_equal(etl_cswitch_encode(&c, 2, b, sizeof b, &n), ETL_OK);
    /* v1 quantums live in the v2 PreviousCState / SpareByte slots */
    uint8_t v1[16] = {1, 0, 0, 0, 2, 0, 0, 0, 9, 8, 0x11, 0x22, 5, 1, 5, 3};
    assert_int_equal(etl_cswitch_decode(span(v1, 16), 1, &c), ETL_OK);
    assert_true(c.previous_cstate == 0x11 && c.spare_byte == 0x22 && c.old_state == 5);
    assert_int_equal(c.known & (ETL_CSW_NEW_WAIT_TIME | ETL_CSW_REMAINING_QUANTUM), 0);
    /* version 0 reads as v1; 7 as v4 */
    assert_int_equal(etl_cswitch_decode(span(v1, 16), 0, &c), ETL_OK);
    assert_int_equal(etl_cswitch_decode(span(v1, 16), 7, &c), ETL_E_TRUNCATED);
}

/* ------------------------------------------------------------- SpinLock */

static void rand_spinlock(uint64_t *r, unsigned ptr_size, etl_spinlock *s)
{
    uint64_t a = tu_rand(r), b = tu_rand(r);
    memset(s, 0, sizeof *s);
    s->spin_lock_address = rand_ptr(r, ptr_size);
    s->caller_address = rand_ptr(r, ptr_size);
    s->acquire_time = tu_rand(r);
    s->release_time = tu_rand(r);
    s->wait_time_in_cycles = (uint32_t)a;
    s->spin_count = (uint32_t)(a >> 32);
    s->thread_id = (uint32_t)b;
    s->interrupt_count = (uint32_t)(b >> 32);
    uint64_t c = tu_rand(r);
    s->irql = (uint8_t)c;
    s->acquire_depth = (uint8_t)(c >> 8);
    s->acquire_mode = (uint8_t)((c >> 16) & 0x3F);
    s->execute_dpc = (c >> 24) & 1;
    s->execute_isr = (c >> 25) & 1;
    s->has_reserved = (c >> 26) & 1;
    if (s->has_reserved)
        for (unsigned i = 0; i < 5; i++) s->reserved[i] = (uint8_t)(c >> (32 + 6 * i));
}

static void test_spinlock_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 0x0529;
    for (unsigned k = 0; k < 2; k++) {
        unsigned ps = ptr_sizes[k];
        for (unsigned i = 0; i < CASES; i++) {
            etl_spinlock x, y;
            uint8_t b[64], b2[64];
            size_t n, n2;
            rand_spinlock(&r, ps, &x);
            assert_int_equal(etl_spinlock_encode(&x, ps, b, sizeof b, &n), ETL_OK);
            assert_int_equal(n, (ps == 8 ? 0x33u : 0x2Bu) + (x.has_reserved ? 5u : 0u));
            assert_int_equal(etl_spinlock_decode(span(b, n), ps, &y), ETL_OK);
            assert_true(y.spin_lock_address == x.spin_lock_address &&
                        y.caller_address == x.caller_address &&
                        y.acquire_time == x.acquire_time && y.release_time == x.release_time);
            assert_true(y.wait_time_in_cycles == x.wait_time_in_cycles &&
                        y.spin_count == x.spin_count && y.thread_id == x.thread_id &&
                        y.interrupt_count == x.interrupt_count);
            assert_true(y.irql == x.irql && y.acquire_depth == x.acquire_depth &&
                        y.acquire_mode == x.acquire_mode && y.execute_dpc == x.execute_dpc &&
                        y.execute_isr == x.execute_isr && y.has_reserved == x.has_reserved);
            assert_int_equal(y.flags, x.acquire_mode | x.execute_dpc << 6 | x.execute_isr << 7);
            assert_memory_equal(y.reserved, x.reserved, 5);
            assert_int_equal(etl_spinlock_encode(&y, ps, b2, sizeof b2, &n2), ETL_OK);
            assert_int_equal(n2, n);
            assert_memory_equal(b2, b, n);
        }
    }
}

static void test_spinlock_edges(void **state)
{
    (void)state;
    etl_spinlock s;
    uint8_t b[64];
    size_t n;
    memset(&s, 0, sizeof s);
    s.acquire_mode = 64;
    assert_int_equal(etl_spinlock_encode(&s, 8, b, sizeof b, &n), ETL_E_RANGE);
    s.acquire_mode = 4;
    s.caller_address = 0x100000000ull;
    assert_int_equal(etl_spinlock_encode(&s, 4, b, sizeof b, &n), ETL_E_RANGE);
    assert_int_equal(etl_spinlock_encode(&s, 8, b, sizeof b, &n), ETL_OK);
    assert_int_equal(etl_spinlock_encode(&s, 6, b, sizeof b, &n), ETL_E_INVALID_ARG);
    assert_int_equal(etl_spinlock_decode(span(b, n), 2, &s), ETL_E_INVALID_ARG);
    /* hold time never wraps */
    s.acquire_time = 10;
    s.release_time = 4;
    assert_int_equal(etl_spinlock_hold_cycles(&s), 0);
    s.release_time = 1010;
    assert_int_equal(etl_spinlock_hold_cycles(&s), 1000);
    /* pre-6.3 form (no Reserved) and 6.3+ form with a tail */
    memset(b, 0xEE, sizeof b);
    assert_int_equal(etl_spinlock_decode(span(b, 0x2B), 4, &s), ETL_OK);
    assert_false(s.has_reserved);
    assert_int_equal(etl_spinlock_decode(span(b, 0x2F), 4, &s), ETL_OK);
    assert_false(s.has_reserved);
    assert_int_equal(etl_spinlock_decode(span(b, 0x40), 8, &s), ETL_OK);
    assert_true(s.has_reserved && s.reserved[4] == 0xEE && s.acquire_mode == 0x2E &&
                s.execute_dpc && s.execute_isr);
}

/* ---------------------------------------------------- SpinLock information */

static void test_spinlock_info_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 5;
    for (unsigned i = 0; i < CASES; i++) {
        etl_spinlock_info x, y;
        uint64_t a = tu_rand(&r), b = tu_rand(&r);
        x.spin_lock_spin_threshold = (uint32_t)a;
        x.spin_lock_acquire_sample_rate = (uint32_t)(a >> 32);
        x.spin_lock_contention_sample_rate = (uint32_t)b;
        x.has_hold_threshold = (b >> 63) & 1;
        x.spin_lock_hold_threshold = x.has_hold_threshold ? (uint32_t)(b >> 31) : 0;
        uint8_t buf[32];
        size_t n;
        assert_int_equal(etl_spinlock_info_encode(&x, buf, sizeof buf, &n), ETL_OK);
        assert_int_equal(n, x.has_hold_threshold ? 0x14 : 0x10);
        assert_int_equal(buf[0], 5);
        assert_int_equal(etl_spinlock_info_decode(span(buf, n), &y), ETL_OK);
        assert_memory_equal(&y.spin_lock_spin_threshold, &x.spin_lock_spin_threshold, 16);
        assert_int_equal(y.has_hold_threshold, x.has_hold_threshold);
    }
    /* the class dword must be EventTraceSpinlockInformation */
    uint8_t bad[0x14] = {6};
    etl_spinlock_info y;
    assert_int_equal(etl_spinlock_info_decode(span(bad, sizeof bad), &y), ETL_E_CORRUPT);
}

/* ----------------------------------------------------------- ReadyThread */

static void test_ready_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 0x0532;
    for (unsigned i = 0; i < CASES; i++) {
        uint64_t a = tu_rand(&r);
        etl_ready_thread x = {(uint32_t)a, (uint8_t)(a >> 32), (int8_t)(a >> 40),
                              (uint8_t)(a >> 48), (uint8_t)(a >> 56)};
        etl_ready_thread y;
        uint8_t b[8];
        size_t n;
        assert_int_equal(etl_ready_thread_encode(&x, b, sizeof b, &n), ETL_OK);
        assert_int_equal(n, 8);
        assert_true(b[0] == (uint8_t)a && b[4] == x.adjust_reason &&
                    b[5] == (uint8_t)x.adjust_increment && b[6] == x.flags && b[7] == x.reserved);
        assert_int_equal(etl_ready_thread_decode(span(b, n), &y), ETL_OK);
        assert_true(y.thread_id == x.thread_id && y.adjust_reason == x.adjust_reason &&
                    y.adjust_increment == x.adjust_increment && y.flags == x.flags &&
                    y.reserved == x.reserved);
    }
}

/* ------------------------------------------------------------ Group mask */

static void test_groupmask_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 0x0005;
    for (unsigned i = 0; i < CASES; i++) {
        etl_groupmask x, y;
        for (unsigned k = 0; k < 8; k++) x.masks[k] = (uint32_t)tu_rand(&r);
        x.kernel_event_version = (uint32_t)tu_rand(&r);
        uint8_t b[0x24];
        size_t n;
        assert_int_equal(etl_groupmask_encode(&x, b, sizeof b, &n), ETL_OK);
        assert_int_equal(n, 0x24);
        assert_int_equal(etl_groupmask_decode(span(b, n), &y), ETL_OK);
        assert_memory_equal(&y, &x, sizeof x);
    }
}

/* ---------------------------------------------------------------- Thread */

typedef struct thread_case {
    etl_thread t;
    uint8_t name[64];
} thread_case;

static void rand_thread(uint64_t *r, unsigned version, unsigned ps, thread_case *c)
{
    etl_thread *t = &c->t;
    memset(t, 0, sizeof *t);
    uint64_t a = tu_rand(r);
    t->process_id = (uint32_t)a;
    t->thread_id = (uint32_t)(a >> 32);
    t->known = ETL_THR_IDS;
    unsigned layout = version > 4 ? 4 : version;
    if (layout == 1 && tu_rand(r) % 2 == 0) return; /* the End/DCEnd form */
    if (layout == 0) return;
    t->stack_base = rand_ptr(r, ps);
    t->stack_limit = rand_ptr(r, ps);
    t->user_stack_base = rand_ptr(r, ps);
    t->user_stack_limit = rand_ptr(r, ps);
    t->start_address = rand_ptr(r, ps);
    t->win32_start_address = rand_ptr(r, ps);
    t->known |= ETL_THR_STACKS;
    if (layout == 1) {
        t->wait_mode = (int8_t)tu_rand(r);
        t->known |= ETL_THR_WAIT_MODE;
        return;
    }
    t->teb_base = rand_ptr(r, ps);
    t->sub_process_tag = (uint32_t)tu_rand(r);
    t->known |= ETL_THR_TEB;
    if (layout < 3) return;
    uint64_t b = tu_rand(r);
    t->base_priority = (uint8_t)b;
    t->page_priority = (uint8_t)(b >> 8);
    t->io_priority = (uint8_t)(b >> 16);
    t->flags = (uint8_t)(b >> 24);
    t->known |= ETL_THR_PRIORITIES;
    if (layout == 4 || (b >> 32) % 2) {
        fill_utf16(r, c->name, 30, &t->thread_name);
        t->known |= ETL_THR_NAME;
    }
}

static void assert_thread_equal(const etl_thread *x, const etl_thread *y)
{
    assert_int_equal(y->known, x->known);
    assert_true(y->process_id == x->process_id && y->thread_id == x->thread_id);
    assert_true(y->stack_base == x->stack_base && y->stack_limit == x->stack_limit &&
                y->user_stack_base == x->user_stack_base &&
                y->user_stack_limit == x->user_stack_limit &&
                y->start_address == x->start_address &&
                y->win32_start_address == x->win32_start_address);
    assert_true(y->teb_base == x->teb_base && y->sub_process_tag == x->sub_process_tag &&
                y->wait_mode == x->wait_mode);
    assert_true(y->base_priority == x->base_priority && y->page_priority == x->page_priority &&
                y->io_priority == x->io_priority && y->flags == x->flags);
    assert_true(same_text(&y->thread_name, &x->thread_name));
    assert_int_equal(y->thread_name.terminated, (x->known & ETL_THR_NAME) != 0);
}

static void test_thread_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 0x0501;
    for (unsigned version = 0; version <= 5; version++) {
        for (unsigned k = 0; k < 2; k++) {
            unsigned ps = ptr_sizes[k];
            for (unsigned i = 0; i < CASES; i++) {
                thread_case c;
                etl_thread y;
                uint8_t b[256], b2[256];
                size_t n, n2;
                rand_thread(&r, version, ps, &c);
                assert_int_equal(etl_thread_encode(&c.t, version, ps, b, sizeof b, &n), ETL_OK);
                assert_int_equal(etl_thread_decode(span(b, n), version, ps, &y), ETL_OK);
                assert_int_equal(y.version, version);
                assert_thread_equal(&c.t, &y);
                assert_int_equal(etl_thread_encode(&y, version, ps, b2, sizeof b2, &n2), ETL_OK);
                assert_int_equal(n2, n);
                assert_memory_equal(b2, b, n);
            }
        }
    }
}

static void test_thread_layouts(void **state)
{
    (void)state;
    /* v0 is {ThreadId, ProcessId}; v1+ {ProcessId, ThreadId} */
    uint8_t ids[8] = {0x11, 0, 0, 0, 0x22, 0, 0, 0};
    etl_thread t;
    assert_int_equal(etl_thread_decode(span(ids, 8), 0, 8, &t), ETL_OK);
    assert_true(t.thread_id == 0x11 && t.process_id == 0x22 && t.known == ETL_THR_IDS);
    assert_int_equal(etl_thread_decode(span(ids, 8), 1, 8, &t), ETL_OK);
    assert_true(t.process_id == 0x11 && t.thread_id == 0x22 && t.known == ETL_THR_IDS);
    assert_int_equal(etl_thread_decode(span(ids, 8), 2, 8, &t), ETL_E_TRUNCATED);

    /* v2 sizes: 0x28 (x86) and 0x44 (x64); v3 0x2C / 0x48 */
    thread_case c;
    uint64_t r = 1;
    size_t n;
    uint8_t b[256];
    rand_thread(&r, 2, 4, &c);
    assert_int_equal(etl_thread_encode(&c.t, 2, 4, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 0x28);
    assert_int_equal(etl_thread_encode(&c.t, 3, 4, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 0x2C);
    rand_thread(&r, 2, 8, &c);
    assert_int_equal(etl_thread_encode(&c.t, 2, 8, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 0x44);
    assert_int_equal(etl_thread_encode(&c.t, 3, 8, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 0x48);
    /* v4 always carries a name, empty here: 0x48 + 2 */
    c.t.thread_name.text = span(NULL, 0);
    assert_int_equal(etl_thread_encode(&c.t, 4, 8, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 0x4A);
    assert_int_equal(etl_thread_decode(span(b, n), 4, 8, &t), ETL_OK);
    assert_true((t.known & ETL_THR_NAME) && t.thread_name.terminated && t.thread_name.text.n == 0);
    /* v1 Start/DCStart: 8 + 6 pointers + WaitMode */
    rand_thread(&r, 1, 4, &c);
    c.t.known |= ETL_THR_STACKS | ETL_THR_WAIT_MODE;
    assert_int_equal(etl_thread_encode(&c.t, 1, 4, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 8 + 24 + 1);
    c.t.known = ETL_THR_IDS;
    assert_int_equal(etl_thread_encode(&c.t, 1, 8, b, sizeof b, &n), ETL_OK);
    assert_int_equal(n, 8);

    /* encoder refusals */
    rand_thread(&r, 4, 8, &c);
    uint8_t odd[3] = {'a', 0, 'b'}, nul[4] = {'a', 0, 0, 0};
    c.t.thread_name.text = span(odd, 3);
    assert_int_equal(etl_thread_encode(&c.t, 4, 8, b, sizeof b, &n), ETL_E_RANGE);
    c.t.thread_name.text = span(nul, 4);
    assert_int_equal(etl_thread_encode(&c.t, 4, 8, b, sizeof b, &n), ETL_E_RANGE);
    c.t.thread_name.text = span(odd, 2);
    c.t.teb_base = 0x100000000ull;
    assert_int_equal(etl_thread_encode(&c.t, 4, 4, b, sizeof b, &n), ETL_E_RANGE);
    assert_int_equal(etl_thread_encode(&c.t, 4, 8, b, 10, &n), ETL_E_RANGE);
    assert_int_equal(n, 0x48 + 4);
    assert_int_equal(etl_thread_encode(&c.t, 4, 8, NULL, 0, &n), ETL_E_RANGE);
    assert_int_equal(n, 0x48 + 4);
    assert_int_equal(etl_thread_decode(span(b, 8), 2, 5, &t), ETL_E_INVALID_ARG);
}

static void test_thread_setname(void **state)
{
    (void)state;
    uint64_t r = 0x0548;
    for (unsigned i = 0; i < CASES; i++) {
        uint8_t name[80], b[128];
        etl_thread_setname x, y;
        x.process_id = (uint32_t)tu_rand(&r);
        x.thread_id = (uint32_t)tu_rand(&r);
        fill_utf16(&r, name, 30, &x.thread_name);
        size_t n;
        assert_int_equal(etl_thread_setname_encode(&x, b, sizeof b, &n), ETL_OK);
        assert_int_equal(n, 8 + x.thread_name.text.n + 2);
        assert_int_equal(etl_thread_setname_decode(span(b, n), &y), ETL_OK);
        assert_true(y.process_id == x.process_id && y.thread_id == x.thread_id &&
                    same_text(&y.thread_name, &x.thread_name) && y.thread_name.terminated);
    }
    /* a name without terminator, and an odd last byte */
    uint8_t raw[13] = {1, 0, 0, 0, 2, 0, 0, 0, 'h', 0, 'i', 0, 'x'};
    etl_thread_setname y;
    assert_int_equal(etl_thread_setname_decode(span(raw, 13), &y), ETL_OK);
    assert_false(y.thread_name.terminated);
    assert_int_equal(y.thread_name.text.n, 4);
    assert_int_equal(etl_thread_setname_decode(span(raw, 8), &y), ETL_OK);
    assert_true(y.thread_name.text.n == 0 && !y.thread_name.terminated);
    assert_int_equal(etl_thread_setname_decode(span(raw, 7), &y), ETL_E_TRUNCATED);
}

/* --------------------------------------------------------------- Process */

typedef struct process_case {
    etl_process p;
    uint8_t sid[8 + 4 * 15];
    uint8_t image[40], cmd[80], pkg[80], app[80];
} process_case;

static unsigned proc_layout(unsigned v) { return v > 5 ? 5 : v; }

static void rand_process(uint64_t *r, unsigned version, unsigned ps, process_case *c)
{
    etl_process *p = &c->p;
    unsigned layout = proc_layout(version);
    memset(p, 0, sizeof *p);
    uint64_t a = tu_rand(r), b = tu_rand(r);
    p->process_id = (uint32_t)a;
    p->parent_id = (uint32_t)(a >> 32);
    p->known = ETL_PROC_IDS | ETL_PROC_SID | ETL_PROC_IMAGE;
    if (layout >= 1) {
        p->session_id = (uint32_t)b;
        p->exit_status = (int32_t)(uint32_t)(b >> 32);
        p->known |= ETL_PROC_SESSION;
    }
    if (layout == 1 || layout >= 3) {
        p->directory_table_base = rand_ptr(r, ps);
        p->known |= ETL_PROC_DTB;
    }
    if (layout >= 2) {
        p->unique_process_key = rand_ptr(r, ps);
        p->known |= ETL_PROC_KEY | ETL_PROC_COMMAND_LINE;
        fill_utf16(r, c->cmd, 35, &p->command_line);
    }
    if (layout >= 4) {
        p->flags = (uint32_t)tu_rand(r);
        p->known |= ETL_PROC_FLAGS | ETL_PROC_PACKAGE | ETL_PROC_APP_ID;
        fill_utf16(r, c->pkg, 35, &p->package_full_name);
        fill_utf16(r, c->app, 35, &p->application_id);
    }
    if (layout == 5) {
        p->exit_time = tu_rand(r);
        p->known |= ETL_PROC_EXIT_TIME;
    }
    fill_ansi(r, c->image, 35, &p->image_file_name);

    /* UserSID: none, behind a real TOKEN_USER, or behind a zeroed one */
    unsigned kind = (unsigned)(tu_rand(r) % 3), count = (unsigned)(tu_rand(r) % 16);
    if (kind == 0) return;
    c->sid[0] = kind == 2 ? 1 : (uint8_t)tu_rand(r);
    c->sid[1] = (uint8_t)count;
    for (unsigned i = 2; i < 8 + 4 * count; i++) c->sid[i] = (uint8_t)tu_rand(r);
    p->user_sid = span(c->sid, 8 + 4 * count);
    if (kind == 1) {
        p->token_user[0] = rand_ptr(r, ps) | 1; /* a non-zero low ULONG */
        p->token_user[1] = rand_ptr(r, ps);
    }
}

static void assert_process_equal(const etl_process *x, const etl_process *y)
{
    assert_int_equal(y->known, x->known);
    assert_true(y->process_id == x->process_id && y->parent_id == x->parent_id &&
                y->session_id == x->session_id && y->exit_status == x->exit_status);
    assert_true(y->unique_process_key == x->unique_process_key &&
                y->directory_table_base == x->directory_table_base && y->flags == x->flags);
    assert_int_equal(y->user_sid.n, x->user_sid.n);
    if (x->user_sid.n) {
        assert_memory_equal(y->user_sid.p, x->user_sid.p, x->user_sid.n);
        assert_true(y->token_user[0] == x->token_user[0] && y->token_user[1] == x->token_user[1]);
    }
    const etl_kstr *xs[4] = {&x->image_file_name, &x->command_line, &x->package_full_name,
                             &x->application_id},
                   *ys[4] = {&y->image_file_name, &y->command_line, &y->package_full_name,
                             &y->application_id};
    for (unsigned i = 0; i < 4; i++) {
        assert_true(same_text(xs[i], ys[i]));
        assert_int_equal(ys[i]->terminated, ys[i]->text.p != NULL);
    }
    assert_true(y->exit_time == x->exit_time);
}

static void test_process_roundtrip(void **state)
{
    (void)state;
    uint64_t r = 0x0301;
    unsigned refused = 0;
    for (unsigned version = 0; version <= 6; version++) {
        for (unsigned k = 0; k < 2; k++) {
            unsigned ps = ptr_sizes[k];
            for (unsigned i = 0; i < CASES; i++) {
                process_case c;
                etl_process y;
                uint8_t b[512], b2[512];
                size_t n, n2;
                rand_process(&r, version, ps, &c);
                etl_status st = etl_process_encode(&c.p, version, ps, b, sizeof b, &n);
                if (st == ETL_E_RANGE && !c.p.user_sid.n) { /* no-SID bytes that read as a SID */
                    refused++;
                    continue;
                }
                assert_int_equal(st, ETL_OK);
                assert_int_equal(etl_process_decode(span(b, n), version, ps, &y), ETL_OK);
                assert_int_equal(y.version, version);
                assert_process_equal(&c.p, &y);
                assert_int_equal(etl_process_encode(&y, version, ps, b2, sizeof b2, &n2), ETL_OK);
                assert_int_equal(n2, n);
                assert_memory_equal(b2, b, n);
            }
        }
    }
    assert_true(refused < 10);
}

static void test_process_sid(void **state)
{
    (void)state;
    /* v4 x64: fixed part 0x24, then a TOKEN_USER (16 bytes) and the SID */
    uint8_t b[2048];
    memset(b, 0, sizeof b);
    b[0x08] = 4;           /* ProcessId */
    b[0x24] = 0x20;        /* TOKEN_USER.Sid pointer, non-zero */
    b[0x34] = 1;           /* SID revision */
    b[0x35] = 1;           /* SubAuthorityCount */
    b[0x3B] = 5;           /* S-1-5 */
    b[0x3C] = 18;          /* S-1-5-18 */
    memcpy(b + 0x40, "Idle", 5);
    etl_process p;
    assert_int_equal(etl_process_decode(span(b, 0x45 + 6), 4, 8, &p), ETL_OK);
    assert_int_equal(p.user_sid.n, 12);
    assert_true(p.user_sid.p == b + 0x34 && p.token_user[0] == 0x20);
    assert_int_equal(p.image_file_name.text.n, 4);
    assert_true((p.known & ETL_PROC_APP_ID) && p.application_id.terminated);

    /* huge SubAuthorityCount: corrupt whether or not the bytes are there */
    b[0x35] = 255;
    assert_int_equal(etl_process_decode(span(b, sizeof b), 4, 8, &p), ETL_E_CORRUPT);
    assert_int_equal(etl_process_decode(span(b, 0x40), 4, 8, &p), ETL_E_CORRUPT);
    b[0x35] = 16;
    assert_int_equal(etl_process_decode(span(b, sizeof b), 4, 8, &p), ETL_E_CORRUPT);
    b[0x35] = 15; /* legal, but its 68 bytes run past a short payload */
    assert_int_equal(etl_process_decode(span(b, 0x34 + 60), 4, 8, &p), ETL_E_TRUNCATED);
    assert_int_equal(etl_process_decode(span(b, 0x34 + 68), 4, 8, &p), ETL_OK);
    assert_false(p.known & ETL_PROC_IMAGE);

    /* first ULONG 0: no SID, 4 bytes */
    b[0x24] = 0;
    b[0x28] = 'A';
    assert_int_equal(etl_process_decode(span(b, 0x40), 4, 8, &p), ETL_OK);
    assert_int_equal(p.user_sid.n, 0);
    assert_int_equal(p.image_file_name.text.n, 1);
    assert_int_equal(p.image_file_name.text.p[0], 'A');

    /* zeroed TOKEN_USER followed by a revision-1 SID (syzygy's form) */
    b[0x28] = 0;
    b[0x35] = 1;
    assert_int_equal(etl_process_decode(span(b, 0x45 + 6), 4, 8, &p), ETL_OK);
    assert_int_equal(p.user_sid.n, 12);
    assert_true(p.token_user[0] == 0 && p.token_user[1] == 0);
    size_t n;
    uint8_t out[256];
    assert_int_equal(etl_process_encode(&p, 4, 8, out, sizeof out, &n), ETL_OK);
    assert_memory_equal(out, b, n);

    /* encoder refusals */
    uint8_t sid[12] = {1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0};
    p.user_sid = span(sid, 11); /* length disagrees with the count */
    assert_int_equal(etl_process_encode(&p, 4, 8, out, sizeof out, &n), ETL_E_RANGE);
    p.user_sid = span(sid, 12);
    p.token_user[0] = 0xFFFF000000000000ull; /* zero low ULONG: would read as "no SID" */
    assert_int_equal(etl_process_encode(&p, 4, 8, out, sizeof out, &n), ETL_E_RANGE);
    p.token_user[0] = 0;
    sid[0] = 2; /* zeroed TOKEN_USER needs revision 1 to be found again */
    assert_int_equal(etl_process_encode(&p, 4, 8, out, sizeof out, &n), ETL_E_RANGE);
    sid[0] = 1;
    p.token_user[0] = 0x123456789ull;
    assert_int_equal(etl_process_encode(&p, 4, 4, out, sizeof out, &n), ETL_E_RANGE);
    assert_int_equal(etl_process_encode(&p, 4, 8, out, sizeof out, &n), ETL_OK);
}

static void test_process_strings(void **state)
{
    (void)state;
    uint8_t b[64];
    size_t n;
    etl_process p;
    memset(&p, 0, sizeof p);
    p.image_file_name.text = span((const uint8_t *)"a.exe", 5);
    uint8_t w[4] = {'c', 0, 'd', 0};
    p.command_line.text = span(w, 4);
    assert_int_equal(etl_process_encode(&p, 4, 4, b, sizeof b, &n), ETL_OK);
    /* x86 v4: 0x1C fixed + 4 (no SID) + "a.exe\0" + "cd\0" + "" + "" */
    assert_int_equal(n, 0x20 + 6 + 6 + 2 + 2);
    /* an image name cut before its NUL: the rest is absent */
    etl_process q;
    assert_int_equal(etl_process_decode(span(b, 0x23), 4, 4, &q), ETL_OK);
    assert_false(q.image_file_name.terminated);
    assert_int_equal(q.image_file_name.text.n, 3);
    assert_int_equal(q.known & (ETL_PROC_COMMAND_LINE | ETL_PROC_PACKAGE | ETL_PROC_APP_ID), 0);
    /* cut exactly after the image name: command line absent, not empty */
    assert_int_equal(etl_process_decode(span(b, 0x26), 4, 4, &q), ETL_OK);
    assert_true(q.image_file_name.terminated && !(q.known & ETL_PROC_COMMAND_LINE));
    /* embedded NUL / odd UTF-16 cannot be encoded */
    p.image_file_name.text = span((const uint8_t *)"a\0b", 3);
    assert_int_equal(etl_process_encode(&p, 4, 4, b, sizeof b, &n), ETL_E_RANGE);
    p.image_file_name.text = span((const uint8_t *)"a", 1);
    p.command_line.text = span(w, 3);
    assert_int_equal(etl_process_encode(&p, 4, 4, b, sizeof b, &n), ETL_E_RANGE);
    /* v0 x64 ids are pointers and must fit a ULONG */
    uint8_t v0[24] = {0};
    v0[4] = 1;
    assert_int_equal(etl_process_decode(span(v0, sizeof v0), 0, 8, &q), ETL_E_CORRUPT);
    assert_int_equal(etl_process_decode(span(v0, sizeof v0), 0, 4, &q), ETL_OK);
    assert_int_equal(q.parent_id, 1);
}

/* ------------------------------------------------ every truncation length */

/* Fixed-size payloads: every shorter length is an error, never a crash. */
static void cut_fixed(const uint8_t *b, size_t full, etl_status (*dec)(etl_span, void *), void *out)
{
    for (size_t len = 0; len < full; len++) {
        uint8_t *c = exact_copy(b, len);
        assert_int_equal(dec(span(c, len), out), ETL_E_TRUNCATED);
        free(c);
    }
    uint8_t *c = exact_copy(b, full);
    assert_int_equal(dec(span(c, full), out), ETL_OK);
    free(c);
}

static unsigned g_version, g_ptr;
static etl_status dec_cswitch(etl_span s, void *o) { return etl_cswitch_decode(s, g_version, o); }
static etl_status dec_spinlock(etl_span s, void *o) { return etl_spinlock_decode(s, g_ptr, o); }
static etl_status dec_info(etl_span s, void *o) { return etl_spinlock_info_decode(s, o); }
static etl_status dec_ready(etl_span s, void *o) { return etl_ready_thread_decode(s, o); }
static etl_status dec_groupmask(etl_span s, void *o) { return etl_groupmask_decode(s, o); }

static void test_truncation_fixed(void **state)
{
    (void)state;
    uint8_t b[64];
    for (unsigned i = 0; i < sizeof b; i++) b[i] = (uint8_t)(i * 37 + 1);
    b[0] = 5; /* a valid spin lock information class */
    b[1] = b[2] = b[3] = 0;
    union {
        etl_cswitch c;
        etl_spinlock s;
        etl_spinlock_info i;
        etl_ready_thread r;
        etl_groupmask g;
    } out;
    memset(&out, 0, sizeof out);
    for (g_version = 0; g_version <= 5; g_version++)
        cut_fixed(b, etl_cswitch_size(g_version), dec_cswitch, &out.c);
    for (unsigned k = 0; k < 2; k++) {
        g_ptr = ptr_sizes[k];
        cut_fixed(b, g_ptr == 8 ? 0x33 : 0x2B, dec_spinlock, &out.s);
    }
    cut_fixed(b, 0x10, dec_info, &out.i);
    cut_fixed(b, 8, dec_ready, &out.r);
    cut_fixed(b, 0x24, dec_groupmask, &out.g);
    /* an empty span at NULL */
    assert_int_equal(etl_cswitch_decode(span(NULL, 0), 2, &out.c), ETL_E_TRUNCATED);
    assert_int_equal(etl_groupmask_decode(span(NULL, 0), &out.g), ETL_E_TRUNCATED);
}

static void test_truncation_thread(void **state)
{
    (void)state;
    uint64_t r = 77;
    for (unsigned version = 0; version <= 4; version++) {
        for (unsigned k = 0; k < 2; k++) {
            unsigned ps = ptr_sizes[k];
            thread_case c;
            do rand_thread(&r, version, ps, &c);
            while (version == 1 && !(c.t.known & ETL_THR_STACKS));
            if (version >= 3) {
                static const uint8_t name[6] = {'a', 0, 'b', 0, 'c', 0};
                c.t.thread_name.text = span(name, 6);
                c.t.known |= ETL_THR_NAME;
            }
            uint8_t b[256];
            size_t full;
            assert_int_equal(etl_thread_encode(&c.t, version, ps, b, sizeof b, &full), ETL_OK);
            /* ids; v1 reads its short form from there on; v2 0x28/0x44; v3+ 0x2C/0x48 */
            size_t fixed = version <= 1 ? 8 : 8 + 7 * ps + (version == 2 ? 4 : 8);
            for (size_t len = 0; len < full; len++) {
                uint8_t *cut = exact_copy(b, len);
                etl_thread t;
                etl_status st = etl_thread_decode(span(cut, len), version, ps, &t);
                if (len < fixed) {
                    assert_int_equal(st, ETL_E_TRUNCATED);
                } else if (version == 1) {
                    assert_int_equal(st, ETL_OK); /* reads as the End/DCEnd form */
                    assert_int_equal(t.known, ETL_THR_IDS);
                } else {
                    assert_int_equal(st, ETL_OK); /* the name is cut, not the event */
                    assert_false(t.thread_name.terminated);
                    assert_int_equal(!!(t.known & ETL_THR_NAME), len > fixed);
                }
                free(cut);
            }
        }
    }
}

static void test_truncation_process(void **state)
{
    (void)state;
    uint64_t r = 99;
    for (unsigned version = 0; version <= 5; version++) {
        for (unsigned k = 0; k < 2; k++) {
            unsigned ps = ptr_sizes[k];
            process_case c;
            uint8_t b[512];
            size_t full;
            do rand_process(&r, version, ps, &c); /* a SID behind a real TOKEN_USER */
            while (!c.p.user_sid.n || !c.p.token_user[0] || !c.p.image_file_name.text.n);
            assert_int_equal(etl_process_encode(&c.p, version, ps, b, sizeof b, &full), ETL_OK);
            etl_process whole;
            assert_int_equal(etl_process_decode(span(b, full), version, ps, &whole), ETL_OK);
            size_t strings_at = (size_t)(whole.image_file_name.text.p - b);
            size_t time_at = full - (version == 5 ? 8 : 0);
            for (size_t len = 0; len < full; len++) {
                uint8_t *cut = exact_copy(b, len);
                etl_process p;
                etl_status st = etl_process_decode(span(cut, len), version, ps, &p);
                if (len < strings_at || (version == 5 && len >= time_at)) {
                    assert_int_equal(st, ETL_E_TRUNCATED);
                } else {
                    assert_int_equal(st, ETL_OK);
                    /* what was read is part of the whole, and the cut shows */
                    const etl_kstr *s[4] = {&p.image_file_name, &p.command_line,
                                            &p.package_full_name, &p.application_id};
                    static const uint32_t bits[4] = {ETL_PROC_IMAGE, ETL_PROC_COMMAND_LINE,
                                                     ETL_PROC_PACKAGE, ETL_PROC_APP_ID};
                    bool cut_seen = p.known != whole.known;
                    for (unsigned i = 0; i < 4; i++)
                        if ((p.known & bits[i]) && !s[i]->terminated) cut_seen = true;
                    assert_true(cut_seen);
                    assert_true((p.known & ~whole.known) == 0);
                    assert_true(p.image_file_name.text.n <= whole.image_file_name.text.n);
                }
                free(cut);
            }
        }
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_payload_vectors),
        cmocka_unit_test(test_cswitch_roundtrip),
        cmocka_unit_test(test_cswitch_all_ones), cmocka_unit_test(test_cswitch_flags),
        cmocka_unit_test(test_spinlock_roundtrip),
        cmocka_unit_test(test_spinlock_edges),
        cmocka_unit_test(test_spinlock_info_roundtrip),
        cmocka_unit_test(test_ready_roundtrip),
        cmocka_unit_test(test_groupmask_roundtrip),
        cmocka_unit_test(test_thread_roundtrip),
        cmocka_unit_test(test_thread_layouts),
        cmocka_unit_test(test_thread_setname),
        cmocka_unit_test(test_process_roundtrip),
        cmocka_unit_test(test_process_sid),
        cmocka_unit_test(test_process_strings),
        cmocka_unit_test(test_truncation_fixed),
        cmocka_unit_test(test_truncation_thread),
        cmocka_unit_test(test_truncation_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

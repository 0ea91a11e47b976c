/*
 * test_pipe.c - base/pipe: a producer thread's messages reach the consumer whole
 * and in order, across block boundaries (messages of every size up to a block's,
 * a message exactly a block), with the consumer slower or faster; nothing is lost
 * at close, an empty stream ends at once, and a consumer's stop ends the producer
 * (its next put fails) without a hang; etl_pipe_run gives the same order on one
 * thread and two, and a consumer's failure is its result.
 */
#include <stdint.h>
#include <string.h>
#include "testutil.h"
#include "base/pipe.h"
#include "base/platform.h"

#define BLOCK 4096u

typedef struct job {
    etl_pipe *p;
    uint32_t count;     /* messages to put */
    bool stopped;       /* out: a put failed */
    uint32_t put;       /* out: messages put */
} job;

/* Message i: its length (8..BLOCK, a multiple of 8), its index, then bytes from both. */
static size_t msg_len(uint32_t i)
{
    return i % 97 == 0 ? BLOCK : 8 + (size_t)(i * 2654435761u % (BLOCK / 8)) * 8 % (BLOCK - 8);
}

static void producer(void *arg)
{
    job *j = arg;
    for (uint32_t i = 0; i < j->count; i++) {
        size_t n = msg_len(i);
        uint8_t *m = etl_pipe_put(j->p, n);
        if (!m) {
            j->stopped = true;
            break;
        }
        uint32_t head[2] = {(uint32_t)n, i};
        memcpy(m, head, 8);
        for (size_t k = 8; k < n; k++) m[k] = (uint8_t)(i * 31 + k);
        j->put++;
    }
    etl_pipe_close(j->p);
}

/* Takes every message, checking each; stops after stop_after messages when nonzero. */
static uint32_t consume(etl_pipe *p, uint32_t stop_after)
{
    uint32_t next = 0;
    const uint8_t *b;
    size_t n;
    while ((b = etl_pipe_take(p, &n))) {
        assert_true(n > 0 && n <= BLOCK);
        for (size_t off = 0; off < n;) {
            uint32_t head[2];
            assert_true(off + 8 <= n);
            memcpy(head, b + off, 8);
            assert_int_equal(head[1], next);
            assert_int_equal(head[0], msg_len(next));
            assert_true(off + head[0] <= n);
            for (size_t k = 8; k < head[0]; k++) assert_int_equal(b[off + k], (uint8_t)(next * 31 + k));
            off += head[0];
            next++;
        }
        if (stop_after && next >= stop_after) {
            etl_pipe_stop(p);
            break;
        }
    }
    return next;
}

static void test_pipe_order(void **state)
{
    (void)state;
    for (unsigned nblocks = 2; nblocks <= 5; nblocks += 3) {
        etl_pipe *p = etl_pipe_new(BLOCK, nblocks);
        assert_non_null(p);
        job j = {p, 20000, false, 0};
        etl_os_thread *t = etl_thread_start(producer, &j);
        assert_non_null(t);
        assert_int_equal(consume(p, 0), 20000);
        etl_thread_join(t);
        assert_false(j.stopped);
        etl_pipe_free(p);
    }
}

static void test_pipe_empty_and_too_big(void **state)
{
    (void)state;
    etl_pipe *p = etl_pipe_new(BLOCK, 2);
    assert_non_null(p);
    assert_null(etl_pipe_put(p, BLOCK + 1));
    job j = {p, 0, false, 0};
    etl_os_thread *t = etl_thread_start(producer, &j);
    size_t n = 1;
    assert_null(etl_pipe_take(p, &n));
    assert_int_equal(n, 0);
    etl_thread_join(t);
    etl_pipe_free(p);
}

/* A stop is seen by the very next put, not only when a block is handed over. */
static void test_pipe_stop_seen_at_once(void **state)
{
    (void)state;
    etl_pipe *p = etl_pipe_new(BLOCK, 2);
    assert_non_null(p);
    assert_non_null(etl_pipe_put(p, 8));
    etl_pipe_stop(p);
    assert_null(etl_pipe_put(p, 8));
    etl_pipe_free(p);
}

/* The consumer stops early: the producer's puts fail and it ends (a hang fails the test by its timeout). */
static void test_pipe_stop(void **state)
{
    (void)state;
    etl_pipe *p = etl_pipe_new(BLOCK, 3);
    assert_non_null(p);
    job j = {p, 1000000, false, 0};
    etl_os_thread *t = etl_thread_start(producer, &j);
    assert_true(consume(p, 500) >= 500);
    etl_thread_join(t);
    assert_true(j.stopped);
    assert_true(j.put < 1000000);
    etl_pipe_free(p);
}

/* etl_pipe_run: a reader of counted 8-byte messages, a consumer that checks their order and may fail. */
typedef struct stages {
    uint32_t count, fail_at;  /* fail_at: the consumer fails at that message (0: never) */
    uint32_t next;            /* the consumer's next expected */
    bool direct;              /* the reader ran without a pipe */
    etl_status read_st;
} stages;

static etl_status run_take(void *ctx, const void *block, size_t n)
{
    stages *s = ctx;
    const uint8_t *b = block;
    for (size_t off = 0; off < n; off += 8) {
        uint64_t v;
        memcpy(&v, b + off, 8);
        assert_int_equal(v, s->next);
        if (s->fail_at && s->next == s->fail_at) return ETL_E_NOMEM;
        s->next++;
    }
    return ETL_OK;
}

static etl_status run_read(void *ctx, etl_pipe *p)
{
    stages *s = ctx;
    s->direct = p == NULL;
    for (uint64_t i = 0; i < s->count; i++) {
        if (!p) {
            etl_status st = run_take(s, &i, 8);
            if (st != ETL_OK) return st;
            continue;
        }
        uint8_t *m = etl_pipe_put(p, 8);
        if (!m) return s->read_st = ETL_END;
        memcpy(m, &i, 8);
    }
    return s->read_st = ETL_OK;
}

static void test_pipe_run(void **state)
{
    (void)state;
    for (unsigned threads = 1; threads <= 2; threads++) {
        stages s = {100000, 0, 0, false, ETL_OK};
        assert_int_equal(etl_pipe_run(threads, BLOCK, 3, run_read, run_take, &s), ETL_OK);
        assert_int_equal(s.next, 100000);
        assert_int_equal(s.direct, threads == 1);
        /* the consumer's failure is the run's, and stops the reader */
        stages f = {1000000, 5000, 0, false, ETL_OK};
        assert_int_equal(etl_pipe_run(threads, BLOCK, 3, run_read, run_take, &f), ETL_E_NOMEM);
        assert_int_equal(f.next, 5000);
        if (threads == 2) assert_int_equal(f.read_st, ETL_END);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_pipe_order),
        cmocka_unit_test(test_pipe_empty_and_too_big),
        cmocka_unit_test(test_pipe_stop),
        cmocka_unit_test(test_pipe_stop_seen_at_once),
        cmocka_unit_test(test_pipe_run),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

/*
 * test_stacks.c - the profile's building blocks (src/stacks) one by one: the
 * interned sequences (seqtab), the interned strings (strtab), the cached-stack key
 * table (a reference stands for the first definition of its key after it), the
 * image map (modules over time: DCStart, Load, Unload, DCEnd, reloads, kernel
 * space, overlaps, ends), the owners (a thread's process and the processes'
 * names at a time: the last start at or before, else the first after) and the
 * attaching of walks to their events.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "etlkit/kernel.h"
#include "stacks/attach.h"
#include "stacks/images.h"
#include "stacks/owners.h"
#include "stacks/seqtab.h"
#include "stacks/stack_keys.h"
#include "stacks/strtab.h"

/* ------------------------------------------------------------------ seqtab */

static void test_seqtab_identity(void **state)
{
    (void)state;
    etl_seqtab t;
    etl_seqtab_init(&t);
    uint64_t a[3] = {1, 2, 3}, a2[3] = {1, 2, 3}, b[3] = {1, 2, 4}, c[2] = {1, 2};
    uint32_t ia, ia2, ib, ic, ie, ie2, n;
    assert_int_equal(etl_seqtab_intern(&t, a, 3, &ia), ETL_OK);
    assert_int_equal(etl_seqtab_intern(&t, b, 3, &ib), ETL_OK);
    assert_int_equal(etl_seqtab_intern(&t, c, 2, &ic), ETL_OK); /* a prefix of a: another sequence */
    assert_int_equal(etl_seqtab_intern(&t, NULL, 0, &ie), ETL_OK);
    assert_int_equal(etl_seqtab_intern(&t, a2, 3, &ia2), ETL_OK); /* same words from another array */
    assert_int_equal(etl_seqtab_intern(&t, NULL, 0, &ie2), ETL_OK);
    assert_int_equal(ia, ia2);
    assert_int_equal(ie, ie2);
    assert_true(ia != ib && ia != ic && ib != ic && ie != ia && ie != ib && ie != ic);
    assert_int_equal(t.count, 4);
    const uint64_t *w = etl_seqtab_get(&t, ib, &n);
    assert_int_equal(n, 3);
    assert_true(w[0] == 1 && w[1] == 2 && w[2] == 4);
    etl_seqtab_get(&t, ie, &n);
    assert_int_equal(n, 0);
    w = etl_seqtab_get(&t, ic, &n);
    assert_int_equal(n, 2);
    assert_true(w[0] == 1 && w[1] == 2);
    etl_seqtab_free(&t);
}

/* 100,000 sequences of 1..40 words: slots, ids and words all grow; every one keeps its id and words. */
static void test_seqtab_growth(void **state)
{
    (void)state;
    enum { N = 100000 };
    etl_seqtab t;
    etl_seqtab_init(&t);
    uint64_t w[40];
    uint32_t *ids = malloc(N * sizeof *ids);
    assert_non_null(ids);
    for (uint32_t i = 0; i < N; i++) {
        uint32_t n = 1 + i % 40;
        for (uint32_t k = 0; k < n; k++) w[k] = (uint64_t)i * 1000003u + k;
        assert_int_equal(etl_seqtab_intern(&t, w, n, &ids[i]), ETL_OK);
        assert_int_equal(ids[i], i); /* dense, in order */
    }
    assert_int_equal(t.count, N);
    assert_true(t.nslots >= 2 * (size_t)N);
    for (uint32_t i = 0; i < N; i += 7) {
        uint32_t n = 1 + i % 40, got, len;
        for (uint32_t k = 0; k < n; k++) w[k] = (uint64_t)i * 1000003u + k;
        assert_int_equal(etl_seqtab_intern(&t, w, n, &got), ETL_OK);
        assert_int_equal(got, ids[i]);
        const uint64_t *s = etl_seqtab_get(&t, got, &len);
        assert_int_equal(len, n);
        assert_memory_equal(s, w, n * sizeof *w);
    }
    assert_int_equal(t.count, N); /* nothing new */
    free(ids);
    etl_seqtab_free(&t);
}

/* ------------------------------------------------------------------ strtab */

static void test_strtab(void **state)
{
    (void)state;
    etl_strtab t;
    etl_strtab_init(&t);
    uint32_t a, b, c, e, d;
    assert_int_equal(etl_strtab_add(&t, "ntdll.dll", 9, &a), ETL_OK);
    assert_int_equal(etl_strtab_add(&t, "ntdll.dllXYZ", 9, &b), ETL_OK); /* n bytes only */
    assert_int_equal(etl_strtab_add(&t, "ntdll", 5, &c), ETL_OK);
    assert_int_equal(etl_strtab_add(&t, "", 0, &e), ETL_OK);
    assert_int_equal(etl_strtab_add(&t, "x\0yz", 4, &d), ETL_OK); /* a NUL ends it */
    assert_int_equal(a, b);
    assert_true(a != c && e == 0 && d != a);
    assert_string_equal(etl_strtab_get(&t, a), "ntdll.dll");
    assert_string_equal(etl_strtab_get(&t, c), "ntdll");
    assert_string_equal(etl_strtab_get(&t, e), "");
    assert_string_equal(etl_strtab_get(&t, d), "x");
    etl_strtab_free(&t);
}

/* A string that lies in the arena itself (a path's base name) added while the arena has to grow. */
static void test_strtab_from_itself(void **state)
{
    (void)state;
    for (size_t fill = 3800; fill < 4096; fill += 3) {
        etl_strtab t;
        etl_strtab_init(&t);
        char *big = malloc(fill + 1);
        assert_non_null(big);
        memset(big, 'f', fill);
        big[fill] = 0;
        uint32_t f, p, b;
        assert_int_equal(etl_strtab_add(&t, big, fill, &f), ETL_OK);
        const char *path = "\\Windows\\System32\\some-rather-long-module-name-0123456789.dll";
        assert_int_equal(etl_strtab_add(&t, path, strlen(path), &p), ETL_OK);
        const char *base = strrchr(etl_strtab_get(&t, p), '\\'); /* inside the arena */
        assert_non_null(base);
        base++;
        assert_int_equal(etl_strtab_add(&t, base, strlen(base), &b), ETL_OK);
        assert_string_equal(etl_strtab_get(&t, b), "some-rather-long-module-name-0123456789.dll");
        assert_string_equal(etl_strtab_get(&t, p), path);
        free(big);
        etl_strtab_free(&t);
    }
}

/* -------------------------------------------------------------- stack keys */

/* A position at time t on CPU 0 (the rest breaks ties only). */
static etl_stack_pos P(uint64_t t)
{
    return (etl_stack_pos){t, 0, 0, 0};
}

/* A key deleted and reused at one time on one CPU: the places in the file order them. */
/*
 * A definition whose frames say which stack it is (stack, then stack + 1, ...), alternately
 * left in place (4-byte frames) and copied (8-byte ones), as a pass does for a mapped and a
 * decompressed buffer.
 */
static etl_status define(etl_stack_keys *k, uint64_t key, etl_stack_pos pos, uint32_t stack)
{
    static uint32_t kept[5000][3];
    uint64_t copied[3] = {stack, stack + 1ull, stack + 2ull};
    if (stack % 2) return etl_stack_keys_define(k, key, pos, (const uint8_t *)copied, 3, 8, true);
    for (uint32_t i = 0; i < 3; i++) kept[stack % 5000][i] = stack + i;
    return etl_stack_keys_define(k, key, pos, (const uint8_t *)kept[stack % 5000], 3, 4, false);
}

/* The stack a reference resolves to, read back from its definition's frames (ETL_SEQ_NONE: none). */
static uint32_t stack_of(etl_stack_keys *k, uint64_t key, etl_stack_pos pos)
{
    uint32_t def = etl_stack_keys_resolve(k, key, pos, ETL_STACK_PART_USER); /* user addresses */
    if (def == ETL_SEQ_NONE) return ETL_SEQ_NONE;
    uint64_t f[ETL_STACK_MAX_FRAMES];
    assert_int_equal(etl_stack_keys_frames(k, def, f), 3);
    assert_true(f[1] == f[0] + 1 && f[2] == f[0] + 2);
    return (uint32_t)f[0];
}

static void test_stack_key_ties(void **state)
{
    (void)state;
    etl_stack_pos ref = {100, 3, 7, 0x100};   /* a reference to the old stack */
    etl_stack_pos del = {100, 3, 7, 0x180};   /* its eviction, same time, later in the buffer */
    etl_stack_pos other = {100, 1, 9, 0x40};  /* CPU 1, same time: before CPU 3's */
    etl_stack_pos later = {100, 3, 8, 0x40};  /* the key reused, in the CPU's next buffer */
    assert_true(etl_stack_pos_less(ref, del) && etl_stack_pos_less(del, later));
    assert_true(etl_stack_pos_less(other, ref) && !etl_stack_pos_less(ref, ref));
    etl_stack_keys k;
    etl_stack_keys_init(&k);
    const uint64_t K = 0xfffffa8000001000ull;
    assert_int_equal(define(&k, K, (etl_stack_pos){300, 0, 1, 0}, 2), ETL_OK);
    assert_int_equal(define(&k, K, del, 1), ETL_OK);
    assert_int_equal(etl_stack_keys_seal(&k), ETL_OK);
    assert_int_equal(stack_of(&k, K, ref), 1);
    assert_int_equal(stack_of(&k, K, later), 2);
    etl_stack_keys_free(&k);
}

static void test_stack_keys(void **state)
{
    (void)state;
    etl_stack_keys k;
    etl_stack_keys_init(&k);
    const uint64_t K = 0xfffffa8000001000ull, L = 0xfffffa8000002000ull;
    /* Key K defined (deleted) at 10 and again, reused for another stack, at 20; L at 15; out of order. */
    assert_int_equal(define(&k, K, P(20), 7), ETL_OK);
    assert_int_equal(define(&k, L, P(15), 9), ETL_OK);
    assert_int_equal(define(&k, K, P(10), 3), ETL_OK);
    etl_stack_keys_seal(&k);
    assert_int_equal(stack_of(&k, K, P(1)), 3);  /* before its definition */
    assert_int_equal(stack_of(&k, K, P(9)), 3);
    assert_int_equal(stack_of(&k, K, P(11)), 7); /* between the deletes: the second stack */
    assert_int_equal(stack_of(&k, K, P(19)), 7);
    assert_int_equal(stack_of(&k, K, P(21)), ETL_SEQ_NONE); /* after the last definition */
    assert_int_equal(stack_of(&k, L, P(14)), 9);
    assert_int_equal(stack_of(&k, L, P(16)), ETL_SEQ_NONE);
    assert_int_equal(stack_of(&k, K + 1, P(1)), ETL_SEQ_NONE); /* never defined */
    assert_int_equal(stack_of(&k, 0, P(0)), ETL_SEQ_NONE);
    etl_stack_keys_free(&k);

    /* Empty, and many keys (the array grows): each resolves to its own. */
    etl_stack_keys_init(&k);
    etl_stack_keys_seal(&k);
    assert_int_equal(stack_of(&k, K, P(0)), ETL_SEQ_NONE);
    for (uint32_t i = 0; i < 5000; i++) assert_int_equal(define(&k, 5000 - i, P(100 + i), i), ETL_OK);
    etl_stack_keys_seal(&k);
    for (uint32_t i = 0; i < 5000; i++) {
        assert_int_equal(stack_of(&k, 5000 - i, P(0)), i);
        assert_int_equal(stack_of(&k, 5000 - i, P(100 + i + 1)), ETL_SEQ_NONE);
    }
    etl_stack_keys_free(&k);

    /* Two walkers' tables put together (each with copies), in either order: the same answers. */
    for (int order = 0; order < 2; order++) {
        etl_stack_keys a, b;
        etl_stack_keys_init(&a);
        etl_stack_keys_init(&b);
        etl_stack_keys_init(&k);
        assert_int_equal(define(&a, K, P(20), 7), ETL_OK);
        assert_int_equal(define(&b, K, P(10), 3), ETL_OK);
        assert_int_equal(define(&b, L, P(15), 9), ETL_OK);
        assert_int_equal(etl_stack_keys_take(&k, order ? &b : &a), ETL_OK);
        assert_int_equal(etl_stack_keys_take(&k, order ? &a : &b), ETL_OK);
        assert_int_equal(etl_stack_keys_take(&k, &a), ETL_OK); /* an empty one (a walker of no definition) */
        assert_int_equal(a.n + b.n, 0);
        assert_int_equal(k.n, 3);
        assert_int_equal(etl_stack_keys_seal(&k), ETL_OK);
        assert_int_equal(stack_of(&k, K, P(9)), 3);
        assert_int_equal(stack_of(&k, K, P(11)), 7);
        assert_int_equal(stack_of(&k, L, P(1)), 9);
        etl_stack_keys_free(&a);
        etl_stack_keys_free(&b);
        etl_stack_keys_free(&k);
    }
}

/*
 * Kernel and user stacks share the kernel's cache: a key is defined for either part
 * in turn, and a reference stands for the first definition of its key after it only
 * when that one holds its part (else its own was lost). Random definitions of a few
 * keys, each part's frames, given to two walkers' tables in stream order or not: the
 * full table and the one with no frames answer every position and part as a search
 * of the definitions in stream order does.
 */
static void test_stack_keys_parts(void **state)
{
    (void)state;
    enum { NDEF = 200 };
    uint64_t seed = 42;
    for (int round = 0; round < 20; round++) {
        etl_stack_keys full, nofr, w[2];
        etl_stack_keys_init(&full);
        etl_stack_keys_init_no_frames(&nofr);
        etl_stack_keys_init_no_frames(&w[0]);
        etl_stack_keys_init_no_frames(&w[1]);
        struct { uint64_t key; etl_stack_pos pos; unsigned part; } d[NDEF];
        for (uint32_t i = 0; i < NDEF; i++) {
            seed = seed * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t key = 0xfffffa8000000000ull + (seed >> 60) * 0x40; /* 16 keys */
            etl_stack_pos pos = {(seed >> 20) % 1000, (uint32_t)(seed >> 40) % 4, (uint32_t)(seed >> 45) % 3,
                                 (uint32_t)(seed >> 50) % 64};
            bool kernel = (seed >> 35) & 1;
            uint64_t frames[2] = {kernel ? 0xfffff80000001000ull + i : 0x7ffb00001000ull + i, 0};
            frames[1] = frames[0] + 1;
            d[i].key = key, d[i].pos = pos, d[i].part = kernel ? ETL_STACK_PART_KERNEL : ETL_STACK_PART_USER;
            assert_int_equal(etl_stack_keys_define(&full, key, pos, (const uint8_t *)frames, 2, 8, true), ETL_OK);
            assert_int_equal(etl_stack_keys_define(&w[(seed >> 33) & 1], key, pos, (const uint8_t *)frames, 2, 8, true),
                             ETL_OK);
        }
        assert_int_equal(etl_stack_keys_take(&nofr, &w[round & 1]), ETL_OK);
        assert_int_equal(etl_stack_keys_take(&nofr, &w[!(round & 1)]), ETL_OK);
        assert_int_equal(nofr.n, NDEF);
        assert_true(nofr.nchunks <= 2); /* the innermost frames alone copied: 8 bytes a definition, a chunk a walker */
        assert_int_equal(etl_stack_keys_seal(&full), ETL_OK);
        assert_int_equal(etl_stack_keys_seal(&nofr), ETL_OK);
        uint64_t resolved[3] = {0};
        /* Forward, as a time-ordered reader asks (the search starts at the last answer), then backward. */
        for (int dir = 0; dir < 2; dir++)
        for (uint64_t k = 0; k < 17; k++) /* the 16 keys and one never defined */
            for (uint64_t t = 0; t <= 1001; t += 7)
                for (uint32_t cpu = 0; cpu < 4; cpu++)
                    for (unsigned part = ETL_STACK_PART_KERNEL; part <= ETL_STACK_PART_USER; part++) {
                        uint64_t key = 0xfffffa8000000000ull + k * 0x40;
                        etl_stack_pos pos = {dir ? 1001 - t : t, dir ? 3 - cpu : cpu, 1, 32};
                        int first = -1; /* the key's first definition at or after pos */
                        for (int i = 0; i < NDEF; i++)
                            if (d[i].key == key && !etl_stack_pos_less(d[i].pos, pos) &&
                                (first < 0 || etl_stack_pos_less(d[i].pos, d[first].pos)))
                                first = i;
                        bool want = first >= 0 && d[first].part == part;
                        uint32_t def = etl_stack_keys_resolve(&full, key, pos, part);
                        assert_int_equal(def != ETL_SEQ_NONE, want);
                        assert_int_equal(etl_stack_keys_resolve(&nofr, key, pos, part) != ETL_SEQ_NONE, want);
                        if (want) {
                            uint64_t f[ETL_STACK_MAX_FRAMES];
                            assert_int_equal(etl_stack_keys_frames(&full, def, f), 2);
                            assert_true(f[0] == (part == ETL_STACK_PART_KERNEL ? 0xfffff80000001000ull : 0x7ffb00001000ull) + (uint64_t)first);
                            /* The innermost frame, in both tables (attach.c's check of a sample's address). */
                            uint64_t leaf = 0;
                            assert_true(etl_stack_keys_leaf(&full, def, &leaf) && leaf == f[0]);
                            uint32_t ndef = etl_stack_keys_resolve(&nofr, key, pos, part);
                            assert_true(etl_stack_keys_leaf(&nofr, ndef, &leaf) && leaf == f[0]);
                        }
                        resolved[first < 0 ? 0 : want ? 1 : 2]++;
                    }
        assert_true(resolved[0] && resolved[1] && resolved[2]); /* none follows, its part, the other part */
        uint64_t f[ETL_STACK_MAX_FRAMES];
        assert_int_equal(etl_stack_keys_frames(&nofr, 0, f), 0); /* no frames kept */
        for (int i = 0; i < 2; i++) etl_stack_keys_free(&w[i]);
        etl_stack_keys_free(&full);
        etl_stack_keys_free(&nofr);
    }
}

/* ------------------------------------------------------------------ images */

static uint8_t name16[512];

/* An Image event's fields; tds and sum its TimeDateStamp and ImageChecksum (ADD_ID), 0 with ADD. */
static etl_image img(uint64_t base, uint64_t size, uint32_t pid, const char *path, uint32_t tds, uint32_t sum)
{
    etl_image im;
    memset(&im, 0, sizeof im);
    im.image_base = base;
    im.image_size = size;
    im.process_id = pid;
    im.time_date_stamp = tds;
    im.image_checksum = sum;
    size_t n = 0;
    for (const char *s = path; *s; s++, n += 2) {
        name16[n] = (uint8_t)*s;
        name16[n + 1] = 0;
    }
    im.file_name.text = (etl_span){name16, n};
    im.file_name.terminated = true;
    return im;
}

#define ADD(m, hook, ts, base, size, pid, path)                                                                     \
    do {                                                                                                           \
        etl_image i_ = img(base, size, pid, path, 0, 0);                                                           \
        assert_int_equal(etl_image_map_add(m, hook, ts, &i_), ETL_OK);                                             \
    } while (0)
#define ADD_ID(m, hook, ts, base, size, pid, path, tds, sum)                                                       \
    do {                                                                                                           \
        etl_image i_ = img(base, size, pid, path, tds, sum);                                                       \
        assert_int_equal(etl_image_map_add(m, hook, ts, &i_), ETL_OK);                                             \
    } while (0)

/* Every lookup three ways: without a hint, with a fresh one, and with the one the last lookup left (same answer). */
static uint32_t find(const etl_image_map *m, uint32_t pid, uint64_t addr, uint64_t ts)
{
    static uint32_t kept = ETL_IMAGE_NONE;
    uint32_t fresh = ETL_IMAGE_NONE;
    uint32_t i = etl_image_map_find(m, pid, addr, ts, NULL);
    assert_int_equal(etl_image_map_find(m, pid, addr, ts, &fresh), i);
    assert_int_equal(etl_image_map_find(m, pid, addr, ts, &kept), i);
    assert_int_equal(etl_image_map_find(m, pid, addr, ts, &fresh), i); /* the hint it left */
    return i;
}

static const char *name_at(const etl_image_map *m, uint32_t pid, uint64_t addr, uint64_t ts)
{
    uint32_t i = find(m, pid, addr, ts);
    return i == ETL_IMAGE_NONE ? NULL : etl_strtab_get(m->names, m->v[i].name);
}

static void test_images_lifetimes(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    /* A rundown DCStart at 1000: loaded before the trace began. */
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 1000, 0x10000, 0x1000, 100, "\\Windows\\System32\\a.dll");
    /* Loaded at 2000, unloaded at 3000. */
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 2000, 0x20000, 0x1000, 100, "\\x\\b.dll");
    ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 3000, 0x20000, 0x1000, 100, "\\x\\b.dll");
    /* Loaded at 1500 (the relogged hook), replaced by another load at the same base at 4000. */
    ADD(&m, ETL_HOOK_IMAGE_LOAD, 1500, 0x40000, 0x2000, 100, "C:/old.dll");
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 4000, 0x40000, 0x1000, 100, "new.dll");
    /* The end rundown: a.dll still loaded (not new), c.dll never announced (live all along). */
    uint32_t before = m.n;
    ADD(&m, ETL_HOOK_IMAGE_DC_END, 5000, 0x10000, 0x1000, 100, "\\Windows\\System32\\a.dll");
    assert_int_equal(m.n, before);
    ADD(&m, ETL_HOOK_IMAGE_DC_END, 5000, 0x30000, 0x1000, 100, "\\x\\c.dll");
    assert_int_equal(m.n, before + 1);
    /* An Unload of what no event loaded: live from before the trace until it (explore15 F2, test_image_lives). */
    ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 5001, 0x90000, 0x1000, 100, "\\x\\z.dll");
    assert_int_equal(m.n, before + 2);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);

    assert_string_equal(name_at(&m, 100, 0x10010, 1), "a.dll"); /* before the trace's first event */
    assert_string_equal(name_at(&m, 100, 0x10010, 999), "a.dll");
    assert_string_equal(name_at(&m, 100, 0x10010, 4500), "a.dll");
    assert_string_equal(name_at(&m, 100, 0x10010, 9999), "a.dll"); /* DCEnd is no unload */
    assert_null(name_at(&m, 100, 0x20010, 1999));
    assert_string_equal(name_at(&m, 100, 0x20010, 2000), "b.dll"); /* live from its Load */
    assert_string_equal(name_at(&m, 100, 0x20010, 2999), "b.dll");
    assert_null(name_at(&m, 100, 0x20010, 3000)); /* the Unload ends it */
    assert_string_equal(name_at(&m, 100, 0x30010, 1), "c.dll");
    assert_string_equal(name_at(&m, 100, 0x30010, 9999), "c.dll");
    assert_null(name_at(&m, 100, 0x40010, 1499));
    assert_string_equal(name_at(&m, 100, 0x40010, 1500), "old.dll");
    assert_string_equal(name_at(&m, 100, 0x41010, 3999), "old.dll"); /* old.dll is larger */
    assert_string_equal(name_at(&m, 100, 0x40010, 4000), "new.dll"); /* the reload replaces it */
    assert_null(name_at(&m, 100, 0x41010, 4000));                       /* past new.dll's end */
    /* Edges: the first and last byte, the byte past the end, the byte before the base. */
    assert_string_equal(name_at(&m, 100, 0x10000, 10), "a.dll");
    assert_string_equal(name_at(&m, 100, 0x10fff, 10), "a.dll");
    assert_null(name_at(&m, 100, 0x11000, 10));
    assert_null(name_at(&m, 100, 0xffff, 10));
    /* User images belong to their process only. */
    assert_null(name_at(&m, 101, 0x10010, 10));
    assert_null(name_at(&m, 0, 0x10010, 10));
    /* The paths as logged, the names their last component (either separator). */
    uint32_t i = find(&m, 100, 0x10010, 10);
    assert_string_equal(etl_strtab_get(&names, m.v[i].path), "\\Windows\\System32\\a.dll");
    i = find(&m, 100, 0x40010, 1600);
    assert_int_equal(m.v[i].to_ts, 4000);
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

/*
 * The lives at the edges the real samples show (explore15 F2, F3): an Unload with no Load or
 * DCStart before it at its (process, base) is a life from the trace's start (or the end of the
 * last life there) until the Unload (kernel-shutdown-x64: 120 images of three processes that
 * exit while the start rundown runs; a lost Load); a rundown DCStart of the image live since its
 * Load at the same (process, base, size, file) is that life: the Load's time and fields stay, the
 * DCStart fills only what the Load lacked (kernel-shutdown-x64's coml2.dll in pid 7064).
 */
static void test_images_unload_only(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    /* clr.dll whose Load was lost: its Unload at 5000 says it held [base, base + size) until then */
    ADD_ID(&m, ETL_HOOK_IMAGE_UNLOAD, 5000, 0x7ff800000000ull, 0x10000, 10, "\\x\\clr.dll", 111, 7);
    /* the same Unload again (a duplicate record) adds nothing */
    ADD_ID(&m, ETL_HOOK_IMAGE_UNLOAD, 5000, 0x7ff800000000ull, 0x10000, 10, "\\x\\clr.dll", 111, 7);
    /* a.dll loaded and unloaded, then unloaded again at 9000: a life lost in between, from its last end */
    ADD_ID(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 2000, 0x10000, 0x1000, 10, "\\x\\a.dll", 0, 0);
    ADD_ID(&m, ETL_HOOK_IMAGE_UNLOAD, 3000, 0x10000, 0x1000, 10, "\\x\\a.dll", 0, 0);
    ADD_ID(&m, ETL_HOOK_IMAGE_UNLOAD, 9000, 0x10000, 0x1000, 10, "\\x\\a.dll", 0, 0);
    /* a kernel driver unloaded with no load: every process's */
    ADD_ID(&m, ETL_HOOK_IMAGE_UNLOAD, 7000, 0xfffff80000000000ull, 0x8000, 4, "\\x\\drv.sys", 0, 0);
    assert_int_equal(m.n, 4);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);

    assert_string_equal(name_at(&m, 10, 0x7ff800000100ull, 1), "clr.dll"); /* from before the trace */
    assert_string_equal(name_at(&m, 10, 0x7ff80000ffffull, 4999), "clr.dll");
    assert_null(name_at(&m, 10, 0x7ff800000100ull, 5000)); /* the Unload ends it */
    assert_null(name_at(&m, 11, 0x7ff800000100ull, 100));  /* its process's only */
    uint32_t i = find(&m, 10, 0x7ff800000100ull, 1);
    assert_int_equal(m.v[i].from_ts, 0);
    assert_int_equal(m.v[i].to_ts, 5000);
    assert_int_equal(m.v[i].time_date_stamp, 111);
    assert_int_equal(m.v[i].checksum, 7);
    assert_int_equal(m.v[i].logged_size, 0x10000);

    assert_null(name_at(&m, 10, 0x10010, 1999));
    assert_string_equal(name_at(&m, 10, 0x10010, 2500), "a.dll");
    assert_string_equal(name_at(&m, 10, 0x10010, 3000), "a.dll"); /* the second life, from the first's end */
    assert_string_equal(name_at(&m, 10, 0x10010, 8999), "a.dll");
    assert_null(name_at(&m, 10, 0x10010, 9000));

    assert_string_equal(name_at(&m, 77, 0xfffff80000000010ull, 10), "drv.sys");
    assert_null(name_at(&m, 77, 0xfffff80000000010ull, 7000));
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

static void test_images_dcstart_of_live_load(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    /* coml2.dll: Load (TimeDateStamp, no checksum), the rundown's DCStart (no TimeDateStamp), Unload */
    ADD_ID(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 1000, 0x75610000, 385024, 7064, "\\Windows\\SysWOW64\\coml2.dll", 1814063486, 0);
    ADD_ID(&m, ETL_HOOK_IMAGE_DC_START, 1500, 0x75610000, 385024, 7064, "\\Windows\\SysWOW64\\coml2.dll", 0, 419214);
    ADD_ID(&m, ETL_HOOK_IMAGE_UNLOAD, 2000, 0x75610000, 385024, 7064, "\\Windows\\SysWOW64\\coml2.dll", 1814063486, 419214);
    assert_int_equal(m.n, 1);
    /* a DCStart of another file or size at a live image's base is another image: it replaces the one there */
    ADD_ID(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 1000, 0x20000, 0x1000, 7064, "\\x\\b.dll", 5, 0);
    ADD_ID(&m, ETL_HOOK_IMAGE_DC_START, 1500, 0x20000, 0x1000, 7064, "\\x\\other.dll", 0, 0);
    ADD_ID(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 1000, 0x30000, 0x1000, 7064, "\\x\\c.dll", 6, 0);
    ADD_ID(&m, ETL_HOOK_IMAGE_DC_START, 1500, 0x30000, 0x2000, 7064, "\\x\\c.dll", 0, 0);
    assert_int_equal(m.n, 5);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);

    uint32_t i = find(&m, 7064, 0x75610010, 1700);
    assert_int_not_equal(i, ETL_IMAGE_NONE);
    assert_int_equal(m.v[i].from_ts, 1000);
    assert_int_equal(m.v[i].to_ts, 2000);
    assert_int_equal(m.v[i].time_date_stamp, 1814063486);
    assert_int_equal(m.v[i].checksum, 419214); /* what the Load lacked */
    assert_int_equal(find(&m, 7064, 0x75610010, 1200), i);

    assert_string_equal(name_at(&m, 7064, 0x20010, 1200), "b.dll");
    assert_string_equal(name_at(&m, 7064, 0x20010, 1500), "other.dll");
    i = find(&m, 7064, 0x30010, 1600);
    assert_int_equal(m.v[i].from_ts, 1500);
    assert_int_equal(m.v[i].logged_size, 0x2000);
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

static void test_images_kernel_overlap(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 100, 0xfffff80000000000ull, 0x800000, 0, "\\SystemRoot\\system32\\ntoskrnl.exe");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 100, 0xfffff88000100000ull, 0x10000, 4, "\\SystemRoot\\system32\\drivers\\x.sys");
    /* Overlapping candidates in one process: big.dll live throughout, small.dll over [2000, 3000). */
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 100, 0x100000, 0x100000, 50, "big.dll");
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 2000, 0x140000, 0x1000, 50, "small.dll");
    ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 3000, 0x140000, 0x1000, 50, "small.dll");
    /* A small image just above big.dll's inner addresses must not hide big.dll. */
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 100, 0x180000, 0x10, 50, "tiny.dll");
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);

    /* Kernel space from any process, whatever ProcessId the image's event carried. */
    for (uint32_t pid = 0; pid < 3000; pid += 999) {
        assert_string_equal(name_at(&m, pid, 0xfffff80000001234ull, 500), "ntoskrnl.exe");
        assert_string_equal(name_at(&m, pid, 0xfffff88000100010ull, 500), "x.sys");
    }
    assert_null(name_at(&m, 50, 0xfffff80000800000ull, 500)); /* past its end */
    assert_true(m.v[0].kernel && !m.v[2].kernel);

    assert_string_equal(name_at(&m, 50, 0x140010, 1999), "big.dll");
    assert_string_equal(name_at(&m, 50, 0x140010, 2500), "small.dll"); /* the live one loaded last */
    assert_string_equal(name_at(&m, 50, 0x140010, 3000), "big.dll");
    assert_string_equal(name_at(&m, 50, 0x180008, 2500), "tiny.dll");
    assert_string_equal(name_at(&m, 50, 0x190000, 2500), "big.dll");
    assert_null(name_at(&m, 50, 0x200000, 2500));
    etl_image_map_free(&m);

    /* 32-bit: the upper 2 GiB are the kernel's. */
    etl_image_map_init(&m, 4, &names);
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 100, 0x80000000u, 0x100000, 0, "ntkrnlpa.exe");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 100, 0x7ff00000u, 0x10000, 60, "user32.dll");
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);
    assert_true(etl_image_kernel_addr(4, 0x80000000u) && !etl_image_kernel_addr(4, 0x7fffffffu));
    assert_true(etl_image_kernel_addr(8, 0x8000000000000000ull) && !etl_image_kernel_addr(8, 0x80000000u));
    assert_string_equal(name_at(&m, 60, 0x80000010u, 500), "ntkrnlpa.exe");
    assert_string_equal(name_at(&m, 61, 0x80000010u, 500), "ntkrnlpa.exe");
    assert_string_equal(name_at(&m, 60, 0x7ff00010u, 500), "user32.dll");
    assert_null(name_at(&m, 61, 0x7ff00010u, 500));
    etl_image_map_free(&m);

    /* An empty map finds nothing. */
    etl_image_map_init(&m, 8, &names);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);
    assert_int_equal(find(&m, 1, 0x1000, 1), ETL_IMAGE_NONE);
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

/*
 * Many images and their end rundown: each DCEnd finds its DCStart (none added), each Unload its Load.
 * Each event used to scan the images before it: 100,000 took about 6 s (1 s for 40,000), now 0.03 s.
 */
static void test_images_many(void **state)
{
    (void)state;
    enum { N = 100000 };
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    char path[64];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(path, sizeof path, "m%u.dll", i % 97);
        ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x10000000ull + (uint64_t)i * 0x10000, 0x8000, 100 + i % 50, path);
    }
    for (uint32_t i = 0; i < N; i += 2) {
        snprintf(path, sizeof path, "m%u.dll", i % 97);
        ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 20, 0x10000000ull + (uint64_t)i * 0x10000, 0x8000, 100 + i % 50, path);
    }
    for (uint32_t i = 0; i < N; i++) {
        snprintf(path, sizeof path, "m%u.dll", i % 97);
        ADD(&m, ETL_HOOK_IMAGE_DC_END, 30, 0x10000000ull + (uint64_t)i * 0x10000, 0x8000, 100 + i % 50, path);
    }
    /* The odd ones were still loaded: their DCEnd adds nothing; the even ones were unloaded: theirs does. */
    assert_int_equal(m.n, N + N / 2);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);
    for (uint32_t i = 1; i < N; i += 2) {
        snprintf(path, sizeof path, "m%u.dll", i % 97);
        assert_string_equal(name_at(&m, 100 + i % 50, 0x10000010ull + (uint64_t)i * 0x10000, 25), path);
        assert_null(name_at(&m, 100 + (i + 1) % 50, 0x10000010ull + (uint64_t)i * 0x10000, 25));
    }
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

/*
 * Hostile shapes that made each lookup scan every image (quadratic in a trace): one image
 * spanning 20,000 others in one process, and 20,000 lives of one image at one base. The
 * answers; the time is make bench's (a lookup costs O(log n) an image that reaches it).
 */
static void test_images_hostile(void **state)
{
    (void)state;
    enum { N = 20000 };
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x1000, 0xfffff000ull, 9, "giant.dll"); /* the largest a PE can be */
    char path[64];
    for (uint32_t i = 0; i < N; i++) {
        snprintf(path, sizeof path, "s%u.dll", i % 89);
        ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x10000000ull + (uint64_t)i * 0x10000, 0x8000, 9, path);
    }
    /* One base, loaded and unloaded N times: live over [100 + 10 k, 105 + 10 k). */
    for (uint32_t k = 0; k < N; k++) {
        ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 100 + 10 * (uint64_t)k, 0x7000000000ull, 0x1000, 10, "cycle.dll");
        ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 105 + 10 * (uint64_t)k, 0x7000000000ull, 0x1000, 10, "cycle.dll");
    }
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);
    for (uint32_t i = 0; i < N; i++) {
        snprintf(path, sizeof path, "s%u.dll", i % 89);
        assert_string_equal(name_at(&m, 9, 0x10000010ull + (uint64_t)i * 0x10000, 50), path);
        assert_string_equal(name_at(&m, 9, 0x10008010ull + (uint64_t)i * 0x10000, 50), "giant.dll"); /* between */
    }
    for (uint32_t k = 0; k < N; k++) {
        uint32_t i = find(&m, 10, 0x7000000010ull, 102 + 10 * (uint64_t)k);
        assert_int_not_equal(i, ETL_IMAGE_NONE);
        assert_int_equal(m.v[i].from_ts, 100 + 10 * (uint64_t)k);
        assert_int_equal(find(&m, 10, 0x7000000010ull, 107 + 10 * (uint64_t)k), ETL_IMAGE_NONE);
    }
    etl_image_map_free(&m);
    etl_strtab_free(&names);
}

/*
 * An ImageSize no image can have (over a PE's 32-bit SizeOfImage, or past the end of its half of
 * the address space) is damage: counted, its life stands (it replaces the life before it at its
 * base, an Unload ends it) but it holds no address, where it took every other image's (explore8 F3:
 * 41 samples of four DLLs moved to dbghelp.dll).
 */
static void test_images_impossible_size(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_image_map m;
    etl_image_map_init(&m, 8, &names);
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x7ff800000000ull, 0x100000, 9, "ntdll.dll");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x7ff700000000ull, 0x80000, 9, "kernel32.dll");
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 100, 0x7ff600000000ull, 0x40000, 9, "dbghelp.dll");
    ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 200, 0x7ff600000000ull, 0x40000, 9, "dbghelp.dll");
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 300, 0x7ff600000000ull, 0xffffffffffffffffull, 9, "dbghelp.dll");
    ADD(&m, ETL_HOOK_IMAGE_UNLOAD, 400, 0x7ff600000000ull, 0xffffffffffffffffull, 9, "dbghelp.dll");
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 500, 0x7ff500000000ull, 0x100000000000ull, 9, "big.dll");   /* > 32 bits */
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 500, 0x7ffffff00000ull, 0xfff00000ull, 9, "edge.dll");      /* fits */
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 500, 0x7fffffff0000ull, 0x7fff80000000ull, 9, "past.dll");  /* > 32 bits */
    ADD(&m, ETL_HOOK_PROCESS_LOAD_IMAGE, 500, 0x7ffffffff000ull, 0xffffffffull, 9, "ok.dll");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0xfffff80000000000ull, 0x800000, 0, "ntoskrnl.exe");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0xffffffffffff0000ull, 0x20000, 0, "wraps.sys");         /* past 2^64 */
    assert_int_equal(m.bad_sizes, 4);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);
    assert_string_equal(name_at(&m, 9, 0x7ff600000010ull, 150), "dbghelp.dll");
    assert_null(name_at(&m, 9, 0x7ff600000010ull, 350));                      /* its damaged life holds nothing */
    assert_string_equal(name_at(&m, 9, 0x7ff800000010ull, 350), "ntdll.dll");  /* nor the others' addresses */
    assert_string_equal(name_at(&m, 9, 0x7ff700000010ull, 350), "kernel32.dll");
    assert_string_equal(name_at(&m, 9, 0x7ff800000010ull, 600), "ntdll.dll");
    assert_string_equal(name_at(&m, 9, 0x7ff700000010ull, 600), "kernel32.dll");
    assert_null(name_at(&m, 9, 0x7ff500000010ull, 600));
    assert_string_equal(name_at(&m, 9, 0xfffff80000000010ull, 600), "ntoskrnl.exe");
    assert_null(name_at(&m, 9, 0xffffffffffff0010ull, 600));
    /* The life stays as logged for the image lists: its ImageSize, its times. */
    uint32_t n = 0;
    for (uint32_t i = 0; i < m.n; i++)
        if (!strcmp(etl_strtab_get(&names, m.v[i].name), "dbghelp.dll") && m.v[i].from_ts == 300) {
            assert_int_equal(m.v[i].logged_size, 0xffffffffffffffffull);
            assert_int_equal(m.v[i].size, 0);
            assert_int_equal(m.v[i].to_ts, 400);
            n++;
        }
    assert_int_equal(n, 1);
    etl_image_map_free(&m);
    /* 32-bit: an image ends within 4 GiB. */
    etl_image_map_init(&m, 4, &names);
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x10000000u, 0x10000, 9, "a.dll");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0xfff00000u, 0x200000, 0, "past4g.sys");
    ADD(&m, ETL_HOOK_IMAGE_DC_START, 10, 0x80000000u, 0x7ff10000u, 0, "nt.exe");
    assert_int_equal(m.bad_sizes, 1);
    assert_int_equal(etl_image_map_seal(&m), ETL_OK);
    assert_string_equal(name_at(&m, 9, 0x10000010u, 50), "a.dll");
    assert_string_equal(name_at(&m, 9, 0xfff00010u, 50), "nt.exe"); /* the kernel image holding it, not past4g */
    etl_image_map_free(&m);
    assert_false(etl_image_size_possible(8, 0x1000, 0x100000000ull));
    assert_true(etl_image_size_possible(8, 0x1000, 0xffffffffull));
    assert_false(etl_image_size_possible(8, 0x7ffffffffffffff0ull, 0x20)); /* user, past 2^63 */
    etl_strtab_free(&names);
}

/* ------------------------------------------------------------------ owners */

static void test_owners(void **state)
{
    (void)state;
    etl_strtab names;
    etl_strtab_init(&names);
    etl_owners o;
    etl_owners_init(&o, &names);
    uint32_t a, b, n1, n2;
    assert_int_equal(etl_strtab_add(&names, "a.exe", 5, &a), ETL_OK);
    assert_int_equal(etl_strtab_add(&names, "b.exe", 5, &b), ETL_OK);
    assert_int_equal(etl_strtab_add(&names, "worker", 6, &n1), ETL_OK);
    assert_int_equal(etl_strtab_add(&names, "renamed", 7, &n2), ETL_OK);
    /* Thread 10 starts in process 1 at 100; its id is reused by process 3 at 1000. */
    assert_int_equal(etl_owners_thread(&o, 10, 3, 1000), ETL_OK);
    assert_int_equal(etl_owners_thread(&o, 10, 1, 100), ETL_OK);
    /* Thread 20 starts only at 500 (the tracing tool's thread, sampled before the rundown). */
    assert_int_equal(etl_owners_thread(&o, 20, 2, 500), ETL_OK);
    assert_int_equal(etl_owners_process(&o, 1, 1000, b), ETL_OK);
    assert_int_equal(etl_owners_process(&o, 1, 100, a), ETL_OK);
    assert_int_equal(etl_owners_thread_name(&o, 10, 1, n1), ETL_OK);
    assert_int_equal(etl_owners_thread_name(&o, 10, 1, n2), ETL_OK); /* the last one */
    etl_owners_seal(&o);

    assert_int_equal(etl_owners_pid(&o, 10, 50), 1);    /* none before: the first after */
    assert_int_equal(etl_owners_pid(&o, 10, 100), 1);   /* at its start */
    assert_int_equal(etl_owners_pid(&o, 10, 999), 1);
    assert_int_equal(etl_owners_pid(&o, 10, 1000), 3);  /* the last start at or before */
    assert_int_equal(etl_owners_pid(&o, 10, 99999), 3);
    assert_int_equal(etl_owners_pid(&o, 20, 1), 2);
    assert_int_equal(etl_owners_pid(&o, 20, 600), 2);
    assert_int_equal(etl_owners_pid(&o, 0, 600), 0);    /* the idle thread */
    assert_int_equal(etl_owners_pid(&o, 15, 600), ETL_PID_UNKNOWN);
    assert_int_equal(etl_owners_pid(&o, 21, 600), ETL_PID_UNKNOWN);
    assert_int_equal(etl_owners_pid(&o, 9, 600), ETL_PID_UNKNOWN);
    assert_int_equal(etl_owners_process_name(&o, 1, 50), a);
    assert_int_equal(etl_owners_process_name(&o, 1, 999), a);
    assert_int_equal(etl_owners_process_name(&o, 1, 1000), b);
    assert_int_equal(etl_owners_process_name(&o, 2, 1000), 0);
    assert_int_equal(etl_owners_thread_name_of(&o, 10, 1), n2);
    assert_int_equal(etl_owners_thread_name_of(&o, 10, 3), 0); /* another thread with the same id */
    assert_int_equal(etl_owners_thread_name_of(&o, 11, 1), 0);
    etl_owners_free(&o);

    /* Nothing at all. */
    etl_owners_init(&o, &names);
    etl_owners_seal(&o);
    assert_int_equal(etl_owners_pid(&o, 10, 1), ETL_PID_UNKNOWN);
    assert_int_equal(etl_owners_pid(&o, 0, 1), 0);
    assert_int_equal(etl_owners_process_name(&o, 1, 1), 0);
    etl_owners_free(&o);
    etl_strtab_free(&names);
}

/* ------------------------------------------------------------------ attach */

typedef struct closed {
    uint32_t n, walked, frames;
    uint64_t last_frame;
} closed;

static etl_status on_close(void *ctx, const etl_attach_event *ev, const uint64_t *frames, uint32_t n, bool walked)
{
    closed *c = ctx;
    (void)ev;
    c->n++;
    c->walked += walked;
    c->frames += n;
    if (n) c->last_frame = frames[n - 1];
    return ETL_OK;
}

/* A plain walk (StackWalk/Stack, 64-bit) of (tid, ts) in process pid with one frame, on cpu. */
static etl_record plain_walk_in(uint8_t payload[24], uint64_t ts, uint32_t tid, uint32_t pid, uint64_t frame,
                                uint16_t cpu)
{
    memcpy(payload, &ts, 8);
    memcpy(payload + 8, &pid, 4);
    memcpy(payload + 12, &tid, 4);
    memcpy(payload + 16, &frame, 8);
    etl_record r = {0};
    r.payload = (etl_span){payload, 24};
    r.pointer_size = 8;
    r.cpu = cpu;
    r.hook = ETL_HOOK_STACKWALK;
    return r;
}

/* The same in process 4 (no user part: its kernel part completes it). */
static etl_record plain_walk(uint8_t payload[24], uint64_t ts, uint32_t tid, uint64_t frame, uint16_t cpu)
{
    return plain_walk_in(payload, ts, tid, 4, frame, cpu);
}

/*
 * A second kernel part of a sample that waits for its user part (a damaged walk repeating another's
 * event) is refused and counted, never taken for the user part (explore9 F5, for the profile); the
 * real user part then completes the stack.
 */
static void test_attach_repeated_kernel_part(void **state)
{
    (void)state;
    etl_stack_keys keys;
    etl_stack_keys_init(&keys);
    assert_int_equal(etl_stack_keys_seal(&keys), ETL_OK);
    etl_seqtab raw;
    etl_seqtab_init(&raw);
    closed c = {0};
    etl_attach a;
    assert_int_equal(etl_attach_init(&a, &raw, &keys, on_close, &c), ETL_OK);
    const uint64_t T = 7000, K = 0xfffff80000001000ull, U = 0x7ff600001000ull;
    etl_attach_event ev = {T, 50, 1, 100, {0, 0}, 0, false};
    assert_int_equal(etl_attach_event_add(&a, &ev), ETL_OK);
    uint8_t p[24];
    etl_record r = plain_walk_in(p, T, 50, 100, K, 1); /* its kernel part: it waits for the user part */
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T)), ETL_OK);
    assert_int_equal(c.n, 0);
    r = plain_walk_in(p, T, 50, 100, K + 0x40, 1); /* another kernel part naming it */
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T + 1)), ETL_OK);
    assert_int_equal(c.n, 0);
    assert_int_equal(a.stats.walks_repeated, 1);
    r = plain_walk_in(p, T, 50, 100, U, 2); /* the user part, on another CPU */
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T + 2)), ETL_OK);
    assert_int_equal(c.n, 1);
    assert_int_equal(c.frames, 2);
    assert_int_equal(c.last_frame, U);
    etl_attach_free(&a);
    etl_seqtab_free(&raw);
    etl_stack_keys_free(&keys);
}

/*
 * The walks of an event announced before the last ETL_ATTACH_RECENT (their refusal filter
 * then asks the waiting events' counts, not the recent ones) still find it: events of
 * threads that never get a walk wait on, thousands of them, while newer ones come; one
 * announced out of time order and one at UINT64_MAX too. Walks of times nothing waits at
 * are refused, before the ring turned and after.
 */
static void attach_older_than_recent(bool top_first)
{
    etl_stack_keys keys;
    etl_stack_keys_init(&keys);
    assert_int_equal(etl_stack_keys_seal(&keys), ETL_OK);
    etl_seqtab raw;
    etl_seqtab_init(&raw);
    closed c = {0};
    etl_attach a;
    assert_int_equal(etl_attach_init(&a, &raw, &keys, on_close, &c), ETL_OK);
    const uint64_t K = 0xfffff80000001000ull;
    uint8_t p[24];
    etl_record r;
    const uint32_t N = 3 * ETL_ATTACH_RECENT; /* one event per thread: no queue overflows */
    etl_attach_event top = {UINT64_MAX, 1, 1, 4, {0, 0}, 0, false};
    if (top_first) assert_int_equal(etl_attach_event_add(&a, &top), ETL_OK);
    for (uint32_t i = 0; i < N; i++) {
        etl_attach_event ev = {1000 + 10 * (uint64_t)i, 100 + i, 1, 4, {0, 0}, 0, false};
        assert_int_equal(etl_attach_event_add(&a, &ev), ETL_OK);
        if (i == N / 2) { /* out of time order: older than every event of the ring */
            etl_attach_event back = {500, 99, 1, 4, {0, 0}, 0, false};
            assert_int_equal(etl_attach_event_add(&a, &back), ETL_OK);
        }
    }
    for (uint64_t ts = 1001; ts < 1000 + 10 * (uint64_t)N; ts += 10) { /* no event at these times */
        r = plain_walk(p, ts, 100 + (uint32_t)(ts - 1000) / 10, K, 1);
        assert_false(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
    }
    for (uint32_t i = 0; i < N; i += 7) { /* the oldest first, the newest last */
        r = plain_walk(p, 1000 + 10 * (uint64_t)i, 100 + i, K + i, 2);
        assert_true(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
        assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, 1000 + 10 * (uint64_t)i)),
                         ETL_OK);
        assert_int_equal(c.last_frame, K + i);
    }
    uint32_t walked = c.walked;
    r = plain_walk(p, 500, 99, K + 1, 2);
    assert_true(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, 500)), ETL_OK);
    assert_int_equal(c.walked, walked + 1);
    if (top_first) {
        r = plain_walk(p, UINT64_MAX, 1, K + 2, 2);
        assert_true(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
        assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, UINT64_MAX)), ETL_OK);
        assert_int_equal(c.walked, walked + 2);
        assert_int_equal(c.last_frame, K + 2);
    }
    assert_int_equal(etl_attach_finish(&a), ETL_OK);
    assert_int_equal(c.n, N + 1 + top_first);
    etl_attach_free(&a);
    etl_seqtab_free(&raw);
    etl_stack_keys_free(&keys);
}

static void test_attach_older_than_recent(void **state)
{
    (void)state;
    attach_older_than_recent(false);
    attach_older_than_recent(true); /* the event at UINT64_MAX leaves the ring first */
}

/*
 * Events are found by (thread, time), the idle thread's by CPU too, whatever else
 * waits: 300 events at one time (more than a timestamp's count holds), walks for
 * each, then walks of events no longer waiting (refused, counted) and of times
 * nothing ever waited at.
 */
static void test_attach_many_at_one_time(void **state)
{
    (void)state;
    etl_stack_keys keys;
    etl_stack_keys_init(&keys);
    assert_int_equal(etl_stack_keys_seal(&keys), ETL_OK);
    etl_seqtab raw;
    etl_seqtab_init(&raw);
    closed c = {0};
    etl_attach a;
    assert_int_equal(etl_attach_init(&a, &raw, &keys, on_close, &c), ETL_OK);
    const uint64_t T = 5000, K = 0xfffff80000001000ull;
    for (uint32_t tid = 0; tid < 300; tid++) {
        etl_attach_event ev = {T, tid ? tid : 0, tid ? 1 : 3, 4, {0, 0}, 0, false};
        assert_int_equal(etl_attach_event_add(&a, &ev), ETL_OK);
    }
    etl_attach_event idle2 = {T, 0, 2, 0, {0, 0}, 0, false}; /* the idle thread on another CPU */
    assert_int_equal(etl_attach_event_add(&a, &idle2), ETL_OK);
    uint8_t p[24];
    etl_record r = plain_walk(p, T, 0, K, 5); /* TID 0 on CPU 5: no idle event waits there */
    assert_false(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
    for (uint32_t tid = 299; tid > 0; tid--) {
        r = plain_walk(p, T, tid, K + tid, 7); /* a thread's walk on any CPU */
        assert_true(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
        assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T)), ETL_OK);
        assert_int_equal(c.last_frame, K + tid);
    }
    r = plain_walk(p, T, 0, K, 3);
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T)), ETL_OK);
    assert_int_equal(c.n, 300);
    assert_int_equal(c.walked, 300);
    assert_int_equal(c.frames, 300);
    uint64_t other = a.stats.walks_other;
    r = plain_walk(p, T, 17, K, 1); /* closed: no longer waits */
    assert_false(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T)), ETL_OK);
    for (uint64_t ts = 1; ts < 4096; ts++) { /* no event at these times */
        r = plain_walk(p, ts, 1, K, 1);
        assert_false(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
    }
    assert_int_equal(a.stats.walks_other, other + 2 + 4095);
    r = plain_walk(p, T, 0, K + 2, 2); /* the idle thread's event on CPU 2 still waits */
    assert_true(etl_attach_wanted(&a, &r, ETL_HOOK_STACKWALK));
    assert_int_equal(etl_attach_walk(&a, &r, ETL_HOOK_STACKWALK, etl_stack_pos_of(&r, T)), ETL_OK);
    assert_int_equal(c.n, 301);
    assert_int_equal(c.last_frame, K + 2);
    etl_attach_event late = {T + 1, 9, 1, 4, {0, 0}, 0, false};
    assert_int_equal(etl_attach_event_add(&a, &late), ETL_OK);
    assert_int_equal(etl_attach_finish(&a), ETL_OK); /* closes it with no walk */
    assert_int_equal(c.n, 302);
    assert_int_equal(c.walked, 301);
    etl_attach_free(&a);
    etl_seqtab_free(&raw);
    etl_stack_keys_free(&keys);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_seqtab_identity),    cmocka_unit_test(test_seqtab_growth),
        cmocka_unit_test(test_strtab),             cmocka_unit_test(test_strtab_from_itself),
        cmocka_unit_test(test_stack_keys),
        cmocka_unit_test(test_stack_keys_parts),
        cmocka_unit_test(test_attach_repeated_kernel_part),
        cmocka_unit_test(test_stack_key_ties),         cmocka_unit_test(test_images_lifetimes),
        cmocka_unit_test(test_images_kernel_overlap), cmocka_unit_test(test_images_many),
        cmocka_unit_test(test_images_hostile),
        cmocka_unit_test(test_images_impossible_size), cmocka_unit_test(test_images_unload_only),
        cmocka_unit_test(test_images_dcstart_of_live_load),
        cmocka_unit_test(test_owners),
        cmocka_unit_test(test_attach_many_at_one_time),
        cmocka_unit_test(test_attach_older_than_recent),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

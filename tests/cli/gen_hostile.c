/*
 * gen_hostile.c DIR - writes the crafted traces of the hostile-input suite
 * (hostile.sh) into DIR. Each is small and costs a reader that trusts it
 * seconds or gigabytes; each has a benign "-control" twin of the same shape
 * where the cost comparison needs one. Buffers and records are laid out by
 * tests/unit/etlbuild.h (from the spec's offsets); only the compression and
 * the group-mask bytes come from the library.
 *
 *   wpp-guids.etl      60,000 WPP records whose GUIDs differ only in Data4[0..6] (issue 12 #3)
 *   threads.etl        65,535 Thread/Start v3 events, thread ids multiples of 65,536 (#4)
 *   bomb-records.etl   10 compressed buffers, each claiming 64 MiB of 8-byte records (#5)
 *   bomb-ff.etl        1,000 compressed buffers, each claiming 64 MiB of 0xFF (#5)
 *   cpus-128.etl       128 CPUs, one tiny buffer each, a 16 MiB session BufferSize (#6)
 *   hold-queue.etl     16 CPUs of compressed 64 KiB records in a compact-switch session,
 *                      no batch ever: convert --cswitch full holds them all (#7)
 *   tid-reuse.etl      one compressed buffer: one TID started, run and ended 200,000 times
 *                      (a reused TID's instances were looked up linearly: issue 18 #3)
 *   storms/            the same in bulk, too many events for every command to read in time:
 *     start-storm.etl    8 compressed buffers of identical Thread/Start records of one TID,
 *                        22.4 M (each Start made an instance: issue 18 #4)
 *     instance-storm.etl 8 compressed buffers of one TID started, run and ended, 4.2 M times
 *                        (past the model's instance limit: issue 18 #4)
 *   spin-locks.etl     1,048,576 SpinLock events, each of its own lock address (issue 18 #7)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "etlbuild.h"
#include "etlkit/compress.h"
#include "etlkit/kernel.h"

static const char *dir;

static void save(const char *name, const eb_file *f)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *fp = fopen(path, "wb");
    if (!fp || fwrite(f->p, 1, f->n, fp) != f->n || fclose(fp) != 0) {
        perror(path);
        exit(1);
    }
}

/* Buffer 0 (b0size bytes): the logfile header claiming bufsize, and the header extension when gm is given. */
static void header(eb_file *f, uint32_t bufsize, uint32_t nproc, bool compressed, const etl_groupmask *gm,
                   uint32_t b0size)
{
    eb_lfh h = eb_lfh_default();
    h.buffer_size = bufsize;
    h.nproc = nproc;
    if (compressed) h.log_file_mode |= 0x04000000u;
    eb_init(f);
    eb_rec r;
    eb_rec_lfh(&r, &h);
    eb_begin(f, &(eb_bufopt){.size = b0size, .type = 4, .state = compressed ? 3 /* Plain LZ77 */ : 0});
    eb_add_rec(f, &r);
    if (gm) {
        uint8_t ext[ETL_GROUPMASK_SIZE];
        size_t n = 0;
        etl_groupmask_encode(gm, ext, sizeof ext, &n);
        eb_kernel k = {.htype = 0x02, .version_word = 2, .hook = 0x0005, .ts = h.ts, .payload = ext, .payload_n = n};
        eb_rec_kernel(&r, &k);
        eb_add_rec(f, &r);
    }
    eb_end(f);
}

/* Records of fixed size n, filled by fill(i, rec), packed into 64 KiB buffers on CPU 0. */
static void packed(eb_file *f, size_t count, size_t n, void (*fill)(size_t i, eb_rec *r, int control), int control)
{
    size_t seq = 1, used = 0x10000;
    for (size_t i = 0; i < count; i++) {
        if (used + ((n + 7) & ~(size_t)7) > 0x10000) {
            if (seq > 1) eb_end(f);
            eb_begin(f, &(eb_bufopt){.size = 0x10000, .seq = seq++, .cpu = 0});
            used = 0x48;
        }
        eb_rec r;
        fill(i, &r, control);
        eb_add_rec(f, &r);
        used += (n + 7) & ~(size_t)7;
    }
    eb_end(f);
}

static void wpp_guid(size_t i, eb_rec *r, int control)
{
    eb_msg m = {.number = 1, .options = 0x2};
    m.guid = (eb_guid){.d1 = 0x1234567, .d2 = 0x89ab, .d3 = 0xcdef};
    if (control) {
        m.guid.d1 = (uint32_t)i;
    } else {
        m.guid.d4[0] = (uint8_t)i;
        m.guid.d4[1] = (uint8_t)(i >> 8);
        m.guid.d4[2] = (uint8_t)(i >> 16);
    }
    eb_rec_msg(r, &m);
}

static void thread_start(size_t i, eb_rec *r, int control)
{
    uint8_t pl[72] = {0};
    uint32_t tid = control ? (uint32_t)(i + 1) * 4 : (uint32_t)(i + 1) << 16;
    eb_w32(pl, 4);        /* ProcessId */
    eb_w32(pl + 4, tid);  /* TThreadId */
    pl[68] = 8;           /* BasePriority */
    eb_kernel k = {.htype = 0x02, .version_word = 3, .hook = 0x0501, .tid = tid, .pid = 4,
                   .ts = 2000000 + i, .payload = pl, .payload_n = sizeof pl};
    eb_rec_kernel(r, &k);
}

/* A compressed buffer of cpu whose event data is raw (claimed: Offset = 0x48 + raw_n). */
static void compressed_buffer(eb_file *f, const uint8_t *z, size_t zn, size_t raw_n, uint16_t cpu, uint64_t seq)
{
    eb_begin(f, &(eb_bufopt){.size = (uint32_t)(0x48 + zn), .seq = seq, .cpu = cpu, .extra_flags = 0x40});
    memcpy(f->p + f->cur + 0x48, z, zn);
    eb_put32(f, f->cur + 0x04, (uint32_t)(0x48 + raw_n));
    eb_put32(f, f->cur + 0x30, (uint32_t)(0x48 + raw_n));
}

static uint8_t *compress_all(const uint8_t *raw, size_t n, size_t *zn)
{
    size_t cap = etl_xpress_compress_bound(n);
    uint8_t *z = malloc(cap);
    if (!z || etl_xpress_compress(raw, n, z, cap, zn) != ETL_OK) {
        fprintf(stderr, "gen_hostile: compression failed\n");
        exit(1);
    }
    return z;
}

static void bombs(void)
{
    size_t n = (64u << 20) - 0x48;
    uint8_t *raw = malloc(n);
    if (!raw) exit(1);
    /* 8-byte WPP records with no option: the smallest record there is. */
    for (size_t o = 0; o + 8 <= n; o += 8) {
        eb_w16(raw + o, 8);
        raw[o + 2] = 0;
        raw[o + 3] = EB_FLAGS_WPP;
        eb_w32(raw + o + 4, 1);
    }
    size_t zn;
    uint8_t *z = compress_all(raw, n, &zn);
    eb_file f;
    header(&f, 0x10000, 1, true, NULL, 0x10000);
    for (unsigned i = 0; i < 10; i++) compressed_buffer(&f, z, zn, n, 0, i + 1);
    save("bomb-records.etl", &f);
    eb_free(&f);
    free(z);

    memset(raw, 0xFF, n);
    z = compress_all(raw, n, &zn);
    header(&f, 0x10000, 1, true, NULL, 0x10000);
    for (unsigned i = 0; i < 1000; i++) compressed_buffer(&f, z, zn, n, 0, i + 1);
    save("bomb-ff.etl", &f);
    eb_free(&f);
    free(z);
    free(raw);
}

static void cpus_128(void)
{
    eb_file f;
    eb_rec r;
    header(&f, 16u << 20, 128, false, NULL, 0x200); /* claims 16 MiB; the buffers are 0x200 */
    for (uint16_t c = 0; c < 128; c++) {
        eb_begin(&f, &(eb_bufopt){.size = 0x200, .seq = c + 1u, .cpu = c});
        eb_rec_sys64_tag(&r, 0x0A00, 100 + c, 1000010u + c, c);
        eb_add_rec(&f, &r);
        eb_end(&f);
    }
    save("cpus-128.etl", &f);
    eb_free(&f);
}

static void hold_queue(void)
{
    /* 16 MiB of the largest PERFINFO records (Size is a u16: 0xFFF8), all at one time. */
    size_t rec = 0xFFF8, per = ((16u << 20) - 0x48) / rec, n = per * rec;
    uint8_t *raw = calloc(1, n);
    if (!raw) exit(1);
    for (size_t i = 0; i < per; i++) {
        uint8_t *p = raw + i * rec; /* 0xFFF8 is 8-aligned: no padding between them */
        eb_w16(p, 2);
        p[2] = 0x11; /* PERFINFO64 */
        p[3] = EB_FLAGS_TRACE;
        eb_w16(p + 4, (uint16_t)rec);
        eb_w16(p + 6, 0x0A00);
        eb_w64(p + 8, 3000000);
    }
    size_t zn;
    uint8_t *z = compress_all(raw, n, &zn);
    etl_groupmask gm;
    memset(&gm, 0, sizeof gm);
    etl_groupmask_set(&gm, ETL_PERF_CONTEXT_SWITCH);
    etl_groupmask_set(&gm, ETL_PERF_COMPACT_CSWITCH);
    eb_file f;
    header(&f, 16u << 20, 16, true, &gm, 0x1000);
    uint64_t seq = 1;
    for (unsigned b = 0; b < 5; b++)
        for (uint16_t c = 0; c < 16; c++) compressed_buffer(&f, z, zn, n, c, seq++);
    save("hold-queue.etl", &f);
    eb_free(&f);
    free(z);
    free(raw);
}

/* A Thread event of tid in process 4, the short form (v1, PERFINFO64, {ProcessId, ThreadId}): 24 bytes. */
static size_t thread_rec(uint8_t *out, uint16_t hook, uint32_t tid, uint64_t ts)
{
    uint8_t pl[8];
    eb_w32(pl, 4);
    eb_w32(pl + 4, tid);
    eb_rec r;
    eb_kernel k = {.htype = 0x11, .version_word = 1, .hook = hook, .ts = ts, .payload = pl, .payload_n = sizeof pl};
    eb_rec_kernel(&r, &k);
    memcpy(out, r.b, r.n);
    return r.n;
}

/* A CSwitch v2 (PERFINFO64, 24 bytes): 40 bytes. old_state 5 is Waiting, 4 Terminated. */
static size_t cswitch_rec(uint8_t *out, uint32_t new_tid, uint32_t old_tid, uint8_t old_state, uint64_t ts)
{
    uint8_t pl[24] = {0};
    eb_w32(pl, new_tid);
    eb_w32(pl + 4, old_tid);
    pl[8] = 8;
    pl[9] = 8;
    pl[0x0E] = old_state;
    eb_rec r;
    eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = 0x0524, .ts = ts, .payload = pl, .payload_n = sizeof pl};
    eb_rec_kernel(&r, &k);
    memcpy(out, r.b, r.n);
    return r.n;
}

/* nbuf compressed buffers of CPU 0, each expanding to raw (n bytes), in a session of 64 MiB buffers. */
static void compressed_file(const char *name, const uint8_t *raw, size_t n, unsigned nbuf)
{
    size_t zn;
    uint8_t *z = compress_all(raw, n, &zn);
    eb_file f;
    header(&f, 64u << 20, 1, true, NULL, 0x1000);
    for (unsigned i = 0; i < nbuf; i++) compressed_buffer(&f, z, zn, n, 0, i + 1);
    save(name, &f);
    eb_free(&f);
    free(z);
}

/*
 * One TID (8) started, switched in, switched out terminated and ended, `cycles` times
 * in a buffer, all at one time (so that every cycle is the same bytes).
 */
static size_t reuse_cycles(uint8_t *raw, size_t cycles)
{
    size_t o = 0;
    for (size_t i = 0; i < cycles; i++) {
        o += thread_rec(raw + o, 0x0501, 8, 2000000);
        o += cswitch_rec(raw + o, 8, 0, 2, 2000000);
        o += cswitch_rec(raw + o, 0, 8, 4, 2000000);
        o += thread_rec(raw + o, 0x0502, 8, 2000000);
    }
    return o;
}

static void tid_storms(void)
{
    size_t cap = (64u << 20) - 0x48;
    uint8_t *raw = malloc(cap);
    char sub[4096];
    snprintf(sub, sizeof sub, "%s/storms", dir);
    if (!raw || (mkdir(sub, 0777) != 0 && errno != EEXIST)) exit(1);
    compressed_file("tid-reuse.etl", raw, reuse_cycles(raw, 200000), 1);
    /* 128 bytes a cycle: 524,287 a buffer, 4.2 M in 8 buffers. */
    compressed_file("storms/instance-storm.etl", raw, reuse_cycles(raw, cap / 128), 8);
    size_t o = 0;
    while (o + 24 <= cap) o += thread_rec(raw + o, 0x0501, 8, 2000000);
    compressed_file("storms/start-storm.etl", raw, o, 8); /* 22.4 M Starts */
    free(raw);
}

/* 2^20 SpinLock events (PERFINFO64 v2, x64) at one time, lock addresses all different, the rest alike. */
static void spin_locks(void)
{
    size_t n = 1u << 20, per = 0;
    uint8_t *raw = malloc(64u << 20);
    if (!raw) exit(1);
    eb_file f;
    header(&f, 64u << 20, 1, true, NULL, 0x1000);
    uint64_t seq = 1;
    for (size_t i = 0; i < n; i++) {
        etl_spinlock l;
        memset(&l, 0, sizeof l);
        l.spin_lock_address = 0xffff800000000000ull + (uint64_t)i * 64;
        l.caller_address = 0xfffff80000100000ull;
        l.acquire_time = 1000;
        l.release_time = 1100;
        l.wait_time_in_cycles = 50;
        l.spin_count = 1;
        l.thread_id = 8;
        l.irql = 2;
        l.has_reserved = true;
        uint8_t pl[64];
        size_t len;
        if (etl_spinlock_encode(&l, 8, pl, sizeof pl, &len) != ETL_OK) exit(1);
        eb_rec r;
        eb_kernel k = {.htype = 0x11, .version_word = 2, .hook = 0x0529, .ts = 2000000, .payload = pl,
                       .payload_n = len};
        eb_rec_kernel(&r, &k);
        memcpy(raw + per, r.b, r.n);
        per += (r.n + 7) & ~(size_t)7;
        if (per + 128 > (16u << 20) || i + 1 == n) { /* 16 MiB buffers */
            size_t zn;
            uint8_t *z = compress_all(raw, per, &zn);
            compressed_buffer(&f, z, zn, per, 0, seq++);
            free(z);
            per = 0;
        }
    }
    save("spin-locks.etl", &f);
    eb_free(&f);
    free(raw);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_hostile DIR\n");
        return 64;
    }
    dir = argv[1];
    eb_file f;
    for (int control = 0; control < 2; control++) {
        header(&f, 0x10000, 1, false, NULL, 0x10000);
        packed(&f, 60000, 24, wpp_guid, control);
        save(control ? "wpp-guids-control.etl" : "wpp-guids.etl", &f);
        eb_free(&f);
        header(&f, 0x10000, 1, false, NULL, 0x10000);
        packed(&f, 65535, 104, thread_start, control);
        save(control ? "threads-control.etl" : "threads.etl", &f);
        eb_free(&f);
    }
    bombs();
    cpus_128();
    hold_queue();
    tid_storms();
    spin_locks();
    return 0;
}

/*
 * test_kernel_image_id_samples.c - the image-identity events and the image events
 * of every real sample, through etl_event_decode.
 *
 * For every sample in ../shared/samples: each record of the ImageID provider
 * (b3e675d7-...) decodes, as many per opcode as the independent decoder lists in
 * ../shared/expected, and encodes back to its original bytes; so does each
 * Image/HypercallPage (0x1422). On perfview-x64-compressed.etl, what the fields
 * say must agree with the kernel's own image events: every ImageID and DbgID
 * names the (process, base) of an image event, with the header's process;
 * ImageID's size is the image's up to page rounding and its TimeDateStamp the
 * image's where that one has it; every PDB name ends in .pdb with an age and a
 * GUID; each FileVersion is followed by the ImageID of its image; the RSDS at
 * Image/KernelBase names the kernel's PDB. On the Vista sample, the classic Image
 * GUID's FULL_HEADER32 records decode as image events of their header's process
 * with .dll/.exe/.sys file names.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>
#include "testutil.h"
#include "etlkit/etlkit.h"

enum { NOPS = 5 };
static const unsigned opcodes[NOPS] = {0x00, 0x20, 0x24, 0x25, 0x40};
static const char image_id_provider[] = "b3e675d7-2554-4f18-830b-2762732560de";
static const char image_group[] = "2cb15d1d-5fc1-11d2-abe1-00a0c911f518";

static int op_index(long op)
{
    for (int i = 0; i < NOPS; i++)
        if ((long)opcodes[i] == op) return i;
    return -1;
}

/* From the independent decoder: ImageID records per opcode, the hook 0x1422 ones, the classic Image GUID's. */
typedef struct counts {
    unsigned long op[NOPS], other_ops, hypercall, image_guid;
} counts;

static void expected_counts(const char *name, counts *c)
{
    char path[1024], line[1 << 16];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/expected/%s.events.jsonl.gz", name);
    gzFile gz = gzopen(path, "rb");
    assert_non_null(gz);
    while (gzgets(gz, line, sizeof line)) {
        const char *h = strstr(line, "\"hook\":");
        if (h && strtol(h + 7, NULL, 10) == 0x1422) c->hypercall++;
        if (strstr(line, image_group)) c->image_guid++;
        if (!strstr(line, image_id_provider)) continue;
        const char *o = strstr(line, "\"opcode\":");
        assert_non_null(o);
        int i = op_index(strtol(o + 9, NULL, 10));
        if (i >= 0) c->op[i]++;
        else c->other_ops++;
    }
    gzclose(gz);
}

/* An image event's identity: (process, base) sorted, with what the ImageID events must agree with. */
typedef struct image_key {
    uint32_t pid;
    uint64_t base, size;
    uint32_t time_date_stamp;
} image_key;

typedef struct image_set {
    image_key *k;
    size_t n, cap;
} image_set;

static int cmp_key(const void *a, const void *b)
{
    const image_key *x = a, *y = b;
    if (x->pid != y->pid) return x->pid < y->pid ? -1 : 1;
    return x->base < y->base ? -1 : x->base > y->base;
}

static void add_image(image_set *s, const etl_image *im)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 256;
        s->k = realloc(s->k, s->cap * sizeof *s->k);
        assert_non_null(s->k);
    }
    image_key k = {im->process_id, im->image_base, im->image_size, im->time_date_stamp};
    s->k[s->n++] = k;
}

/* The first image event of (pid, base), or NULL; its equals follow it in the array. */
static const image_key *find_image(const image_set *s, uint32_t pid, uint64_t base)
{
    image_key k = {pid, base, 0, 0};
    const image_key *f = s->n ? bsearch(&k, s->k, s->n, sizeof k, cmp_key) : NULL;
    while (f && f > s->k && !cmp_key(f - 1, &k)) f--;
    return f;
}

static bool ends_with(const uint8_t *p, size_t n, const char *tail, unsigned unit)
{
    size_t t = strlen(tail);
    if (n < t * unit) return false;
    p += n - t * unit;
    for (size_t i = 0; i < t; i++) {
        uint8_t c = p[i * unit];
        if (c >= 'A' && c <= 'Z') c = (uint8_t)(c - 'A' + 'a');
        if (c != (uint8_t)tail[i] || (unit == 2 && p[i * unit + 1])) return false;
    }
    return true;
}

static uint8_t enc[1 << 16];

static void same_bytes(const etl_record *rec, etl_status st, size_t len)
{
    if (st != ETL_OK || len != rec->payload.n || memcmp(enc, rec->payload.p, len))
        fail_msg("opcode %u at buffer %u +0x%x: re-encoded %zu bytes (%s) differ from the %zu of the payload",
                 rec->opcode, rec->buffer_index, rec->offset, len, etl_status_str(st), rec->payload.n);
}

typedef struct walk_result {
    counts n;
    image_set images;
    /* Checked after the walk, against every image event of the file. */
    struct ident {
        uint8_t opcode;
        uint32_t pid, header_pid, time_date_stamp;
        uint64_t base, size;
    } *ids;
    size_t nids, cap;
    unsigned long pdb_names, file_versions_paired, images_named;
    uint64_t kernel_base;
    char kernel_pdb[64];
    uint64_t rsds_bases[4096];
    char rsds_names[4096][64];
    size_t nrsds;
} walk_result;

static void add_ident(walk_result *w, uint8_t op, uint32_t pid, uint32_t header_pid, uint64_t base, uint64_t size,
                      uint32_t tds)
{
    if (w->nids == w->cap) {
        w->cap = w->cap ? 2 * w->cap : 1024;
        w->ids = realloc(w->ids, w->cap * sizeof *w->ids);
        assert_non_null(w->ids);
    }
    struct ident id = {op, pid, header_pid, tds, base, size};
    w->ids[w->nids++] = id;
}

static void walk(const char *name, walk_result *w)
{
    char path[1024];
    snprintf(path, sizeof path, ETLKIT_SHARED_DIR "/samples/%s", name);
    etl_reader *r;
    etl_diag d;
    assert_int_equal(etl_reader_open(path, NULL, &r, &d), ETL_OK);
    etl_iter *it;
    assert_int_equal(etl_iter_open(r, ETL_ORDER_FILE, &it), ETL_OK);
    etl_record rec;
    etl_event ev;
    size_t len;
    /* The FileVersion waiting for its ImageID. */
    bool fv_open = false;
    uint32_t fv_size = 0, fv_tds = 0, fv_pid = 0;
    uint64_t fv_ts = 0;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        bool id_provider = (rec.has & ETL_REC_PROVIDER) && !memcmp(&rec.provider, etl_image_id_guid(), 16);
        etl_status st = etl_event_decode(&rec, &ev);
        if (!id_provider) {
            if (ev.kind == ETL_EVENT_IMAGE) {
                if (st != ETL_OK) fail_msg("image event at buffer %u +0x%x: %s", rec.buffer_index, rec.offset,
                                           etl_status_str(st));
                add_image(&w->images, &ev.u.image);
                if (rec.htype == ETL_HTYPE_FULL_HEADER32 || rec.htype == ETL_HTYPE_FULL_HEADER64) {
                    w->n.image_guid++;
                    /* A classic-GUID image event: its header's process, a file name of an image. */
                    const etl_kstr *fn = &ev.u.image.file_name;
                    assert_true(fn->terminated);
                    assert_int_equal(ev.u.image.process_id, rec.pid);
                    if (ends_with(fn->text.p, fn->text.n, ".dll", 2) || ends_with(fn->text.p, fn->text.n, ".exe", 2) ||
                        ends_with(fn->text.p, fn->text.n, ".sys", 2))
                        w->images_named++;
                    st = etl_image_encode(&ev.u.image, rec.version, rec.pointer_size, enc, sizeof enc, &len);
                    same_bytes(&rec, st, len);
                }
            } else if (ev.kind == ETL_EVENT_IMAGE_HYPERCALL_PAGE) {
                assert_int_equal(st, ETL_OK);
                w->n.hypercall++;
                /* A kernel-space address. */
                assert_true(rec.pointer_size == 8 ? ev.u.hypercall_page.hypercall_page_va >> 63
                                                  : ev.u.hypercall_page.hypercall_page_va >> 31);
                st = etl_image_hypercall_page_encode(&ev.u.hypercall_page, rec.pointer_size, enc, sizeof enc, &len);
                same_bytes(&rec, st, len);
            } else if (ev.kind == ETL_EVENT_IMAGE_KERNEL_BASE && st == ETL_OK) {
                w->kernel_base = ev.u.kernel_base.image_base;
            }
            continue;
        }
        int i = op_index(rec.opcode);
        if (i < 0) {
            w->n.other_ops++;
            assert_int_equal(st, ETL_END);
            continue;
        }
        if (st != ETL_OK)
            fail_msg("opcode %u at buffer %u +0x%x (%zu bytes): %s", rec.opcode, rec.buffer_index, rec.offset,
                     rec.payload.n, etl_status_str(st));
        w->n.op[i]++;
        unsigned ps = rec.pointer_size;
        if (fv_open) {
            /* The FileVersion's image: the ImageID right after it, same time, process, size and stamp. */
            assert_int_equal(ev.kind, ETL_EVENT_IMAGE_ID);
            assert_true(rec.ts == fv_ts && rec.pid == fv_pid);
            assert_true(ev.u.image_id.image_size == fv_size && ev.u.image_id.time_date_stamp == fv_tds);
            w->file_versions_paired++;
            fv_open = false;
        }
        switch (ev.kind) {
        case ETL_EVENT_IMAGE_ID: {
            const etl_image_id *id = &ev.u.image_id;
            assert_true(id->original_file_name.terminated && id->original_file_name.text.n >= 2);
            add_ident(w, rec.opcode, id->process_id, rec.pid, id->image_base, id->image_size, id->time_date_stamp);
            st = etl_image_id_encode(id, ps, enc, sizeof enc, &len);
            break;
        }
        case ETL_EVENT_IMAGE_DBGID_NONE:
        case ETL_EVENT_IMAGE_DBGID_RSDS:
        case ETL_EVENT_IMAGE_DBGID_ILRSDS: {
            const etl_image_dbgid *g = &ev.u.dbgid;
            assert_int_equal(g->has_rsds, ev.kind != ETL_EVENT_IMAGE_DBGID_NONE);
            if (g->has_rsds) {
                static const etl_guid zero;
                assert_true(g->pdb_file_name.terminated);
                assert_true(g->age >= 1);
                assert_true(memcmp(&g->guid_sig, &zero, sizeof zero));
                if (ends_with(g->pdb_file_name.text.p, g->pdb_file_name.text.n, ".pdb", 1)) w->pdb_names++;
                if (ev.kind == ETL_EVENT_IMAGE_DBGID_RSDS && w->nrsds < 4096 && g->pdb_file_name.text.n < 64) {
                    w->rsds_bases[w->nrsds] = g->image_base;
                    memcpy(w->rsds_names[w->nrsds], g->pdb_file_name.text.p, g->pdb_file_name.text.n);
                    w->rsds_names[w->nrsds++][g->pdb_file_name.text.n] = 0;
                }
            }
            add_ident(w, rec.opcode, g->process_id, rec.pid, g->image_base, 0, 0);
            st = etl_image_dbgid_encode(g, rec.opcode, ps, enc, sizeof enc, &len);
            break;
        }
        case ETL_EVENT_IMAGE_FILE_VERSION: {
            const etl_image_file_version *v = &ev.u.file_version;
            for (unsigned s = 0; s < ETL_IMAGE_FILE_VERSION_STRINGS; s++) assert_true(v->strings[s].terminated);
            fv_open = true;
            fv_size = v->image_size;
            fv_tds = v->time_date_stamp;
            fv_ts = rec.ts;
            fv_pid = rec.pid;
            st = etl_image_file_version_encode(v, enc, sizeof enc, &len);
            break;
        }
        default:
            fail_msg("opcode %u decoded as kind %d", rec.opcode, ev.kind);
        }
        same_bytes(&rec, st, len);
    }
    assert_false(fv_open);
    etl_iter_close(it);
    etl_reader_close(r);
    if (w->images.n) qsort(w->images.k, w->images.n, sizeof *w->images.k, cmp_key);
}

static void check_counts(const char *name, const walk_result *w)
{
    counts want = {0};
    expected_counts(name, &want);
    for (int i = 0; i < NOPS; i++) {
        if (w->n.op[i] || want.op[i])
            print_message("%s: ImageID opcode 0x%02x: %lu decoded (independent decoder: %lu)\n", name, opcodes[i],
                          w->n.op[i], want.op[i]);
        assert_int_equal(w->n.op[i], want.op[i]);
    }
    assert_int_equal(w->n.other_ops, want.other_ops);
    assert_int_equal(w->n.hypercall, want.hypercall);
    assert_int_equal(w->n.image_guid, want.image_guid);
}

/* Every identity event names an image event of its process; sizes and stamps agree. */
static void check_identities(const walk_result *w)
{
    unsigned long tds_checked = 0;
    for (size_t i = 0; i < w->nids; i++) {
        const struct ident *id = &w->ids[i];
        assert_int_equal(id->pid, id->header_pid);
        const image_key *k = find_image(&w->images, id->pid, id->base);
        if (!k) fail_msg("opcode 0x%02x: no image event at 0x%llx in process %u", id->opcode,
                         (unsigned long long)id->base, id->pid);
        if (id->opcode != 0x00) continue;
        /* The PE's SizeOfImage, which the kernel maps rounded up to the page. */
        assert_true(((id->size + 0xFFF) & ~(uint64_t)0xFFF) == k->size);
        for (; k < w->images.k + w->images.n && k->pid == id->pid && k->base == id->base; k++) {
            if (!k->time_date_stamp) continue; /* user-space rundowns of this build leave it 0 */
            assert_int_equal(k->time_date_stamp, id->time_date_stamp);
            tds_checked++;
        }
    }
    print_message("%zu identity events on %zu image events; %lu TimeDateStamps compared\n", w->nids, w->images.n,
                  tds_checked);
    assert_true(tds_checked > 0);
}

static void free_result(walk_result *w)
{
    free(w->images.k);
    free(w->ids);
}

static void test_perfview(void **state)
{
    (void)state;
    static walk_result w;
    walk("perfview-x64-compressed.etl", &w);
    check_counts("perfview-x64-compressed.etl", &w);
    assert_int_equal(w.n.op[0], 3590); /* ImageID */
    assert_int_equal(w.n.op[1], 12);   /* DbgID_NONE */
    assert_int_equal(w.n.op[2], 3534); /* DbgID_RSDS */
    assert_int_equal(w.n.op[3], 44);   /* DbgID_ILRSDS */
    assert_int_equal(w.n.op[4], 705);  /* FileVersion */
    assert_int_equal(w.n.hypercall, 1);
    assert_int_equal(w.pdb_names, w.n.op[2] + w.n.op[3]);
    assert_int_equal(w.file_versions_paired, w.n.op[4]);
    check_identities(&w);
    /* The RSDS at the kernel's base names the kernel's PDB. */
    assert_true(w.kernel_base != 0);
    unsigned long at_kernel = 0;
    for (size_t i = 0; i < w.nrsds; i++) {
        if (w.rsds_bases[i] != w.kernel_base) continue;
        at_kernel++;
        assert_true(!strcasecmp(w.rsds_names[i], "ntkrnlmp.pdb") || !strcasecmp(w.rsds_names[i], "ntoskrnl.pdb") ||
                    !strcasecmp(w.rsds_names[i], "ntkrpamp.pdb") || !strcasecmp(w.rsds_names[i], "ntkrnlpa.pdb"));
    }
    assert_true(at_kernel >= 1);
    free_result(&w);
}

static void test_vista(void **state)
{
    (void)state;
    static walk_result w;
    memset(&w, 0, sizeof w);
    walk("syzygy-image-32bit-vista.etl", &w);
    check_counts("syzygy-image-32bit-vista.etl", &w);
    assert_int_equal(w.n.image_guid, 26);
    assert_int_equal(w.images_named, w.n.image_guid);
    free_result(&w);
}

static void test_other_samples(void **state)
{
    (void)state;
    static const char *names[] = {"kernel-shutdown-x64.etl", "gc-threads-x64.etl", "amsi-user-x64.etl",
                                  "lxcore-x64.etl", "perfview-small-32bit.etl", "selfdescribing-x64.etl",
                                  "syzygy-process-32bit.etl"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
        static walk_result w;
        memset(&w, 0, sizeof w);
        walk(names[i], &w);
        check_counts(names[i], &w);
        free_result(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_perfview),
        cmocka_unit_test(test_vista),
        cmocka_unit_test(test_other_samples),
    };
    return cmocka_run_group_tests_name("kernel_image_id_samples", tests, NULL, NULL);
}

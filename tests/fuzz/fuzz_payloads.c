/*
 * fuzz_payloads.c - one libFuzzer target over every payload decoder of
 * etlkit/kernel.h, the profiling ones too (perfinfo, stackwalk, image, image_id). Byte 0
 * picks the codec, byte 1 the version (low nibble, so versions past the newest
 * are tried too) and the pointer size (bit 7); the rest is the payload. When a decode succeeds, the struct is encoded and
 * decoded again: everything the first decode knew must come back unchanged.
 * Strings may come back terminated where the input was cut, and fields the
 * first decode lacked may appear (encoders write the whole layout).
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/kernel.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                                   \
    do {                                                                                           \
        if (!(c)) abort();                                                                         \
    } while (0)

enum { OUT_CAP = 1 << 19 }; /* run.sh gives inputs up to 256 KiB */
static uint8_t out[OUT_CAP];

static bool same_text(const etl_kstr *a, const etl_kstr *b)
{
    return a->text.n == b->text.n && (!a->text.n || !memcmp(a->text.p, b->text.p, a->text.n));
}

static bool same_span(etl_span a, etl_span b)
{
    return a.n == b.n && (!a.n || !memcmp(a.p, b.p, a.n));
}

static void cswitch(etl_span in, unsigned version)
{
    etl_cswitch a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    if (etl_cswitch_decode(in, version, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_cswitch_encode(&a, version, out, OUT_CAP, &n) == ETL_OK);
    CHECK(n == etl_cswitch_size(version) && !memcmp(out, in.p, n));
    CHECK(etl_cswitch_decode((etl_span){out, n}, version, &b) == ETL_OK);
    CHECK(!memcmp(&a, &b, sizeof a));
}

static void spinlock(etl_span in, unsigned ptr_size)
{
    etl_spinlock a, b;
    if (etl_spinlock_decode(in, ptr_size, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_spinlock_encode(&a, ptr_size, out, OUT_CAP, &n) == ETL_OK);
    CHECK(!memcmp(out, in.p, n));
    CHECK(etl_spinlock_decode((etl_span){out, n}, ptr_size, &b) == ETL_OK);
    CHECK(a.spin_lock_address == b.spin_lock_address && a.caller_address == b.caller_address &&
          a.acquire_time == b.acquire_time && a.release_time == b.release_time &&
          a.wait_time_in_cycles == b.wait_time_in_cycles && a.spin_count == b.spin_count &&
          a.thread_id == b.thread_id && a.interrupt_count == b.interrupt_count &&
          a.irql == b.irql && a.acquire_depth == b.acquire_depth && a.flags == b.flags &&
          a.acquire_mode == b.acquire_mode && a.execute_dpc == b.execute_dpc &&
          a.execute_isr == b.execute_isr && a.has_reserved == b.has_reserved &&
          !memcmp(a.reserved, b.reserved, sizeof a.reserved));
    (void)etl_spinlock_hold_cycles(&a);
}

static void spinlock_info(etl_span in)
{
    etl_spinlock_info a, b;
    if (etl_spinlock_info_decode(in, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_spinlock_info_encode(&a, out, OUT_CAP, &n) == ETL_OK);
    CHECK(!memcmp(out, in.p, n));
    CHECK(etl_spinlock_info_decode((etl_span){out, n}, &b) == ETL_OK);
    CHECK(a.spin_lock_spin_threshold == b.spin_lock_spin_threshold &&
          a.spin_lock_acquire_sample_rate == b.spin_lock_acquire_sample_rate &&
          a.spin_lock_contention_sample_rate == b.spin_lock_contention_sample_rate &&
          a.spin_lock_hold_threshold == b.spin_lock_hold_threshold &&
          a.has_hold_threshold == b.has_hold_threshold);
    /* the sampler must run on any config that validates */
    etl_spinlock_cpu_counters per_cpu[2];
    etl_spinlock_sampler s;
    if (etl_spinlock_sampler_init(&s, &a, per_cpu, 2) == ETL_OK)
        for (unsigned i = 0; i < 4; i++)
            (void)etl_spinlock_should_log(&s, i % 3, i < 2 ? 0 : a.spin_lock_spin_threshold,
                                          a.spin_lock_hold_threshold + i);
}

static void ready(etl_span in)
{
    etl_ready_thread a, b;
    if (etl_ready_thread_decode(in, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_ready_thread_encode(&a, out, OUT_CAP, &n) == ETL_OK && n == 8);
    CHECK(!memcmp(out, in.p, n));
    CHECK(etl_ready_thread_decode((etl_span){out, n}, &b) == ETL_OK);
    CHECK(a.thread_id == b.thread_id && a.adjust_reason == b.adjust_reason &&
          a.adjust_increment == b.adjust_increment && a.flags == b.flags &&
          a.reserved == b.reserved);
}

static void groupmask(etl_span in)
{
    etl_groupmask a, b;
    if (etl_groupmask_decode(in, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_groupmask_encode(&a, out, OUT_CAP, &n) == ETL_OK);
    CHECK(etl_groupmask_decode((etl_span){out, n}, &b) == ETL_OK);
    CHECK(!memcmp(&a, &b, sizeof a));
    const char *names[8];
    CHECK(etl_groupmask_names(&a, names, 8) <= 29 * 8);
}

static void thread(etl_span in, unsigned version, unsigned ptr_size)
{
    etl_thread a, b;
    if (etl_thread_decode(in, version, ptr_size, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_thread_encode(&a, version, ptr_size, out, OUT_CAP, &n) == ETL_OK);
    CHECK(etl_thread_decode((etl_span){out, n}, version, ptr_size, &b) == ETL_OK);
    CHECK((a.known & ~b.known) == 0 && a.version == b.version);
    CHECK(a.process_id == b.process_id && a.thread_id == b.thread_id);
    if (a.known & ETL_THR_STACKS)
        CHECK(a.stack_base == b.stack_base && a.stack_limit == b.stack_limit &&
              a.user_stack_base == b.user_stack_base && a.user_stack_limit == b.user_stack_limit &&
              a.start_address == b.start_address && a.win32_start_address == b.win32_start_address);
    if (a.known & ETL_THR_WAIT_MODE) CHECK(a.wait_mode == b.wait_mode);
    if (a.known & ETL_THR_TEB)
        CHECK(a.teb_base == b.teb_base && a.sub_process_tag == b.sub_process_tag);
    if (a.known & ETL_THR_PRIORITIES)
        CHECK(a.base_priority == b.base_priority && a.page_priority == b.page_priority &&
              a.io_priority == b.io_priority && a.flags == b.flags);
    if (a.known & ETL_THR_NAME)
        CHECK(same_text(&a.thread_name, &b.thread_name) && b.thread_name.terminated);
}

static void setname(etl_span in)
{
    etl_thread_setname a, b;
    if (etl_thread_setname_decode(in, &a) != ETL_OK) return;
    size_t n;
    CHECK(etl_thread_setname_encode(&a, out, OUT_CAP, &n) == ETL_OK);
    CHECK(etl_thread_setname_decode((etl_span){out, n}, &b) == ETL_OK);
    CHECK(a.process_id == b.process_id && a.thread_id == b.thread_id &&
          same_text(&a.thread_name, &b.thread_name) && b.thread_name.terminated);
}

static void process(etl_span in, unsigned version, unsigned ptr_size)
{
    etl_process a, b;
    if (etl_process_decode(in, version, ptr_size, &a) != ETL_OK) return;
    size_t n;
    etl_status st = etl_process_encode(&a, version, ptr_size, out, OUT_CAP, &n);
    if (st == ETL_E_RANGE && !a.user_sid.n) return; /* no-SID bytes that would read as a SID */
    CHECK(st == ETL_OK);
    CHECK(etl_process_decode((etl_span){out, n}, version, ptr_size, &b) == ETL_OK);
    CHECK((a.known & ~b.known) == 0 && a.version == b.version);
    CHECK(a.process_id == b.process_id && a.parent_id == b.parent_id);
    if (a.known & ETL_PROC_KEY) CHECK(a.unique_process_key == b.unique_process_key);
    if (a.known & ETL_PROC_SESSION)
        CHECK(a.session_id == b.session_id && a.exit_status == b.exit_status);
    if (a.known & ETL_PROC_DTB) CHECK(a.directory_table_base == b.directory_table_base);
    if (a.known & ETL_PROC_FLAGS) CHECK(a.flags == b.flags);
    CHECK(same_span(a.user_sid, b.user_sid));
    if (a.user_sid.n)
        CHECK(a.token_user[0] == b.token_user[0] && a.token_user[1] == b.token_user[1]);
    const etl_kstr *sa[4] = {&a.image_file_name, &a.command_line, &a.package_full_name,
                             &a.application_id};
    const etl_kstr *sb[4] = {&b.image_file_name, &b.command_line, &b.package_full_name,
                             &b.application_id};
    static const uint32_t bits[4] = {ETL_PROC_IMAGE, ETL_PROC_COMMAND_LINE, ETL_PROC_PACKAGE,
                                     ETL_PROC_APP_ID};
    for (unsigned i = 0; i < 4; i++)
        if (a.known & bits[i]) CHECK(same_text(sa[i], sb[i]) && sb[i]->terminated);
    if (a.known & ETL_PROC_EXIT_TIME) CHECK(a.exit_time == b.exit_time);
}

/* SampledProfile and the PMC sample: fixed layouts, so the encoding is the input's prefix. */
static void sampled_profile(etl_span in, unsigned ptr_size)
{
    etl_sampled_profile a, b;
    etl_pmc_sample c, d;
    size_t n;
    if (etl_sampled_profile_decode(in, ptr_size, &a) == ETL_OK) {
        CHECK(etl_sampled_profile_encode(&a, ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(n == ptr_size + 8u && n <= in.n && !memcmp(out, in.p, n));
        CHECK(etl_sampled_profile_decode((etl_span){out, n}, ptr_size, &b) == ETL_OK);
        CHECK(!memcmp(&a, &b, sizeof a));
    }
    if (etl_pmc_sample_decode(in, ptr_size, &c) == ETL_OK) {
        CHECK(etl_pmc_sample_encode(&c, ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(n == ptr_size + 8u && !memcmp(out, in.p, n));
        CHECK(etl_pmc_sample_decode((etl_span){out, n}, ptr_size, &d) == ETL_OK);
        CHECK(!memcmp(&c, &d, sizeof c));
    }
}

static void profile_interval(etl_span in)
{
    etl_profile_interval a, b;
    if (etl_profile_interval_decode(in, &a) != ETL_OK) return;
    size_t n;
    etl_status st = etl_profile_interval_encode(&a, out, OUT_CAP, &n);
    if (st == ETL_E_RANGE && a.source_name.text.n % 2) return; /* an odd byte before the end */
    CHECK(st == ETL_OK);
    CHECK(etl_profile_interval_decode((etl_span){out, n}, &b) == ETL_OK);
    CHECK(a.source == b.source && a.new_interval == b.new_interval && a.old_interval == b.old_interval);
    CHECK(a.has_name == b.has_name && same_text(&a.source_name, &b.source_name));
}

static uint64_t fz_frames[ETL_STACK_MAX_FRAMES];

static void stackwalk(etl_span in, unsigned ptr_size)
{
    etl_stackwalk a, b;
    if (etl_stackwalk_decode(in, ptr_size, &a) != ETL_OK) return;
    CHECK(a.frame_count <= ETL_STACK_MAX_FRAMES && 16 + (size_t)a.frame_count * ptr_size <= in.n);
    for (uint32_t i = 0; i < a.frame_count; i++) fz_frames[i] = etl_stack_frame(a.frames, ptr_size, i);
    size_t n;
    CHECK(etl_stackwalk_encode(&a, fz_frames, ptr_size, out, OUT_CAP, &n) == ETL_OK);
    CHECK(n == 16 + (size_t)a.frame_count * ptr_size && !memcmp(out, in.p, n));
    CHECK(etl_stackwalk_decode((etl_span){out, n}, ptr_size, &b) == ETL_OK);
    CHECK(a.event_timestamp == b.event_timestamp && a.stack_process == b.stack_process &&
          a.stack_thread == b.stack_thread && a.frame_count == b.frame_count);
}

static void stack_key(etl_span in, unsigned ptr_size)
{
    etl_stack_key_ref a, b;
    etl_stack_key_def c, d;
    size_t n;
    if (etl_stack_key_ref_decode(in, ptr_size, &a) == ETL_OK) {
        CHECK(etl_stack_key_ref_encode(&a, ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(n == 16u + ptr_size && !memcmp(out, in.p, n));
        CHECK(etl_stack_key_ref_decode((etl_span){out, n}, ptr_size, &b) == ETL_OK);
        CHECK(!memcmp(&a, &b, sizeof a));
    }
    if (etl_stack_key_def_decode(in, ptr_size, &c) == ETL_OK) {
        CHECK(c.frame_count <= ETL_STACK_MAX_FRAMES && ptr_size + (size_t)c.frame_count * ptr_size <= in.n);
        for (uint32_t i = 0; i < c.frame_count; i++) fz_frames[i] = etl_stack_frame(c.frames, ptr_size, i);
        CHECK(etl_stack_key_def_encode(&c, fz_frames, ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(n == ptr_size + (size_t)c.frame_count * ptr_size && !memcmp(out, in.p, n));
        CHECK(etl_stack_key_def_decode((etl_span){out, n}, ptr_size, &d) == ETL_OK);
        CHECK(c.stack_key == d.stack_key && c.frame_count == d.frame_count);
    }
}

static void image(etl_span in, unsigned version, unsigned ptr_size)
{
    etl_image a, b;
    etl_image_kernel_base k, l;
    size_t n;
    if (etl_image_kernel_base_decode(in, ptr_size, &k) == ETL_OK) {
        CHECK(etl_image_kernel_base_encode(&k, ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(n == ptr_size && !memcmp(out, in.p, n));
        CHECK(etl_image_kernel_base_decode((etl_span){out, n}, ptr_size, &l) == ETL_OK);
        CHECK(k.image_base == l.image_base);
    }
    etl_image_hypercall_page h, h2;
    if (etl_image_hypercall_page_decode(in, ptr_size, &h) == ETL_OK) {
        CHECK(etl_image_hypercall_page_encode(&h, ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(n == ptr_size && !memcmp(out, in.p, n));
        CHECK(etl_image_hypercall_page_decode((etl_span){out, n}, ptr_size, &h2) == ETL_OK);
        CHECK(h.hypercall_page_va == h2.hypercall_page_va);
    }
    if (etl_image_decode(in, version, ptr_size, &a) != ETL_OK) return;
    etl_status st = etl_image_encode(&a, version, ptr_size, out, OUT_CAP, &n);
    if (st == ETL_E_RANGE && a.file_name.text.n % 2) return; /* an odd byte before the end */
    CHECK(st == ETL_OK);
    size_t fixed = n - a.file_name.text.n - 2;
    CHECK(!memcmp(out, in.p, fixed));
    CHECK(etl_image_decode((etl_span){out, n}, version, ptr_size, &b) == ETL_OK);
    CHECK(a.known == b.known && same_text(&a.file_name, &b.file_name) && b.file_name.terminated);
    CHECK(a.image_base == b.image_base && a.image_size == b.image_size && a.process_id == b.process_id &&
          a.image_checksum == b.image_checksum && a.time_date_stamp == b.time_date_stamp &&
          a.signature_level == b.signature_level && a.signature_type == b.signature_type &&
          a.reserved0 == b.reserved0 && a.default_base == b.default_base &&
          !memcmp(a.reserved, b.reserved, sizeof a.reserved));
}

/* The ImageID provider's events: the fixed part comes back as it was, and every string whole. */
static void image_id(etl_span in, unsigned ptr_size)
{
    size_t n;
    etl_image_id a, b;
    if (etl_image_id_decode(in, ptr_size, &a) == ETL_OK) {
        etl_status st = etl_image_id_encode(&a, ptr_size, out, OUT_CAP, &n);
        if (!(st == ETL_E_RANGE && a.original_file_name.text.n % 2)) { /* an odd byte before the end */
            CHECK(st == ETL_OK);
            CHECK(!memcmp(out, in.p, 2 * (size_t)ptr_size + 8));
            CHECK(etl_image_id_decode((etl_span){out, n}, ptr_size, &b) == ETL_OK);
            CHECK(a.image_base == b.image_base && a.image_size == b.image_size && a.process_id == b.process_id &&
                  a.time_date_stamp == b.time_date_stamp);
            CHECK(same_text(&a.original_file_name, &b.original_file_name) && b.original_file_name.terminated);
        }
    }
    static const unsigned dbgid_ops[3] = {ETL_IMAGE_ID_DBGID_NONE, ETL_IMAGE_ID_DBGID_RSDS,
                                          ETL_IMAGE_ID_DBGID_ILRSDS};
    for (unsigned i = 0; i < 3; i++) {
        etl_image_dbgid c, d;
        if (etl_image_dbgid_decode(in, dbgid_ops[i], ptr_size, &c) != ETL_OK) continue;
        CHECK(etl_image_dbgid_encode(&c, dbgid_ops[i], ptr_size, out, OUT_CAP, &n) == ETL_OK);
        CHECK(!memcmp(out, in.p, ptr_size + 4u + (c.has_rsds ? 20 : 0)));
        CHECK(etl_image_dbgid_decode((etl_span){out, n}, dbgid_ops[i], ptr_size, &d) == ETL_OK);
        CHECK(c.image_base == d.image_base && c.process_id == d.process_id && c.has_rsds == d.has_rsds &&
              !memcmp(&c.guid_sig, &d.guid_sig, sizeof c.guid_sig) && c.age == d.age);
        CHECK(same_text(&c.pdb_file_name, &d.pdb_file_name));
        if (c.has_rsds) CHECK(d.pdb_file_name.terminated);
    }
    etl_image_file_version e, f;
    if (etl_image_file_version_decode(in, &e) == ETL_OK) {
        etl_status st = etl_image_file_version_encode(&e, out, OUT_CAP, &n);
        bool odd = false;
        for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) odd |= e.strings[i].text.n % 2 != 0;
        if (st == ETL_E_RANGE && odd) return;
        CHECK(st == ETL_OK);
        CHECK(!memcmp(out, in.p, 8));
        CHECK(etl_image_file_version_decode((etl_span){out, n}, &f) == ETL_OK);
        CHECK(e.image_size == f.image_size && e.time_date_stamp == f.time_date_stamp);
        for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++)
            CHECK(same_text(&e.strings[i], &f.strings[i]) && f.strings[i].terminated);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > OUT_CAP / 2) return 0;
    unsigned version = data[1] & 0x0F, ptr_size = data[1] & 0x80 ? 8 : 4;
    etl_span in = {data + 2, size - 2};
    switch (data[0] % 16) {
    case 0: cswitch(in, version); break;
    case 1: spinlock(in, ptr_size); break;
    case 2: spinlock_info(in); break;
    case 3: ready(in); break;
    case 4: thread(in, version, ptr_size); break;
    case 5: setname(in); break;
    case 6: process(in, version, ptr_size); break;
    case 8: sampled_profile(in, ptr_size); break;
    case 9: profile_interval(in); break;
    case 10: stackwalk(in, ptr_size); break;
    case 11: stack_key(in, ptr_size); break;
    case 12: image(in, version, ptr_size); break;
    case 13: image_id(in, ptr_size); break;
    default: groupmask(in); break;
    }
    return 0;
}

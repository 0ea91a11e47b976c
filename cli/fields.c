/* fields.c - decoded payloads, named as in the spec, for `etlkit dump`. */
#include <stdio.h>
#include <string.h>
#include "fields.h"
#include "common.h"

/*
 * A name from etlkit's tables: identifiers need no escaping nor quoting, so they skip ln_s's
 * scan. The tables are few and fixed: a name's check is remembered by its address.
 */
static void ln_name(ln_buf *l, const char *key, const char *name)
{
    if (!name) return;
    static _Thread_local struct {
        const char *p;
        size_t n; /* 0: not a plain identifier */
    } seen[64];
    size_t h = ((uintptr_t)name >> 3) & 63, n = 0;
    if (seen[h].p == name) {
        n = seen[h].n;
    } else {
        for (; name[n]; n++) {
            char c = name[n];
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) break;
        }
        if (name[n] || n > 64) n = 0;
        seen[h].p = name;
        seen[h].n = n;
    }
    if (!n) {
        ln_s(l, key, name);
        return;
    }
    ln_key(l, key);
    if (l->n + n + 3 > l->cap) {
        l->cut = 1;
        return;
    }
    char *o = l->b + l->n;
    if (l->json) *o++ = '"';
    memcpy(o, name, n);
    o += n;
    if (l->json) *o++ = '"';
    l->n = (size_t)(o - l->b);
}

static void ln_utf16(ln_buf *l, const char *key, const etl_kstr *s)
{
    static char buf[1 << 16];
    etl_utf16_to_utf8(s->text, buf, sizeof buf);
    ln_s(l, key, buf);
}

/* ANSI bytes: ASCII kept, other bytes read as Latin-1 (the code page is not recorded). */
static void ln_ansi(ln_buf *l, const char *key, const etl_kstr *s)
{
    static char buf[1 << 15];
    etl_latin1_to_utf8(s->text, buf, sizeof buf);
    ln_s(l, key, buf);
}

static void ln_sid(ln_buf *l, const char *key, etl_span sid)
{
    char buf[256];
    if (sid.n < 8) return;
    uint64_t auth = 0;
    for (int i = 2; i < 8; i++) auth = auth << 8 | sid.p[i];
    int n = snprintf(buf, sizeof buf, "S-%u-%llu", sid.p[0], (unsigned long long)auth);
    unsigned count = sid.p[1];
    for (unsigned i = 0; i < count && 8 + 4 * i + 4 <= sid.n && n > 0 && (size_t)n < sizeof buf - 12; i++) {
        const uint8_t *p = sid.p + 8 + 4 * i;
        n += snprintf(buf + n, sizeof buf - (size_t)n, "-%u",
                      (unsigned)(p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24));
    }
    ln_s(l, key, buf);
}

void fields_cswitch(ln_buf *l, const etl_cswitch *sw)
{
    uint32_t k = sw->known;
    if (k & ETL_CSW_NEW_TID) ln_u(l, "NewThreadId", sw->new_tid);
    if (k & ETL_CSW_OLD_TID) ln_u(l, "OldThreadId", sw->old_tid);
    if (k & ETL_CSW_NEW_PRIORITY) ln_i(l, "NewThreadPriority", sw->new_priority);
    if (k & ETL_CSW_OLD_PRIORITY) ln_i(l, "OldThreadPriority", sw->old_priority);
    if (k & ETL_CSW_PREVIOUS_CSTATE)
        ln_u(l, sw->version <= 1 ? "NewThreadQuantum" : "PreviousCState", sw->previous_cstate);
    if (k & ETL_CSW_SPARE_BYTE) ln_u(l, sw->version <= 1 ? "OldThreadQuantum" : "SpareByte", sw->spare_byte);
    if (k & ETL_CSW_WAIT_REASON) {
        ln_u(l, "OldThreadWaitReason", sw->old_wait_reason);
        ln_name(l, "OldThreadWaitReasonName", etl_wait_reason_name(sw->old_wait_reason));
    }
    if (k & ETL_CSW_WAIT_MODE) {
        ln_u(l, "OldThreadWaitMode", sw->old_wait_mode);
        ln_name(l, "OldThreadWaitModeName", etl_processor_mode_name(sw->old_wait_mode));
    }
    if (k & ETL_CSW_STATE) {
        ln_u(l, "OldThreadState", sw->old_state);
        ln_name(l, "OldThreadStateName", etl_thread_state_name(sw->old_state));
    }
    if (k & ETL_CSW_IDEAL_PROCESSOR) ln_u(l, "OldThreadWaitIdealProcessor", sw->old_ideal_processor);
    if (k & ETL_CSW_NEW_WAIT_TIME) ln_u(l, "NewThreadWaitTime", sw->new_wait_time);
    if (k & ETL_CSW_REMAINING_QUANTUM) ln_i(l, "OldThreadRemainingQuantum", sw->old_remaining_quantum);
    if (k & ETL_CSW_FLAGS) {
        ln_u(l, "Flags", sw->flags);
        if (sw->version == 3) {
            ln_u(l, "OldBamEppImportant", sw->old_bam);
            ln_u(l, "NewBamEppImportant", sw->new_bam);
        } else {
            ln_u(l, "OldThreadBamQosLevel", sw->old_bam);
            ln_u(l, "NewThreadBamQosLevel", sw->new_bam);
        }
    }
    if (sw->source == ETL_CSW_SRC_COMPACT) ln_s(l, "Source", "compact");
}

static void fields_batch(ln_buf *l, const etl_event *ev, unsigned bias)
{
    etl_ccswap_walker w = ev->u.batch;
    ln_u(l, "FirstTimeStamp", w.first_time);
    ln_u(l, "TidCount", w.tid_count);
    char buf[512];
    size_t n = 0;
    buf[n++] = '[';
    for (unsigned i = 0; i < w.tid_count; i++) {
        if (i) buf[n++] = ',';
        n += fmt_u64(buf + n, etl_ccswap_tid(&w, i));
    }
    buf[n++] = ']';
    ln_key(l, "TidTable");
    ln_raw(l, buf, n);
    n = 0;
    buf[n++] = '[';
    for (unsigned i = 0; i < w.tid_count; i++) {
        if (i) buf[n++] = ',';
        n += fmt_i64(buf + n, etl_ccswap_base_priority(&w, i));
    }
    buf[n++] = ']';
    ln_key(l, "ThreadBasePriority");
    ln_raw(l, buf, n);
    uint64_t forms[4] = {0}, bad = 0, recs = 0;
    etl_ccswap_record r;
    etl_status st;
    while ((st = etl_ccswap_next(&w, &r)) != ETL_END) {
        if (st == ETL_E_TRUNCATED) {
            bad++;
            break;
        }
        recs++;
        if (st != ETL_OK) bad++;
        forms[r.form & 3]++;
    }
    ln_u(l, "Records", recs);
    ln_u(l, "IdleShort", forms[0]);
    ln_u(l, "Idle", forms[1]);
    ln_u(l, "Lite", forms[2]);
    ln_u(l, "Full", forms[3]);
    if (bad) ln_u(l, "BadRecords", bad);
    ln_u(l, "StateWrBias", bias);
}

/* FrameCount, then the frames: a JSON array of "0x..." strings, or one quoted space-separated text value. */
static void ln_frames(ln_buf *l, const uint8_t *frames, unsigned ptr_size, uint32_t count)
{
    ln_u(l, "FrameCount", count);
    if (l->json) {
        ln_arr(l, "Frames");
        for (uint32_t i = 0; i < count; i++) ln_hex(l, NULL, etl_stack_frame(frames, ptr_size, i));
        ln_arr_end(l);
        return;
    }
    char buf[ETL_STACK_MAX_FRAMES * 19 + 1];
    size_t n = 0;
    for (uint32_t i = 0; i < count && i < ETL_STACK_MAX_FRAMES; i++) {
        if (i) buf[n++] = ' ';
        n += fmt_hex(buf + n, etl_stack_frame(frames, ptr_size, i));
    }
    buf[n] = 0;
    ln_s(l, "Frames", buf);
}

void fields_event(ln_buf *l, const etl_event *ev, unsigned bias)
{
    switch (ev->kind) {
    case ETL_EVENT_CSWITCH:
        fields_cswitch(l, &ev->u.cswitch);
        break;
    case ETL_EVENT_CCSWAP_BATCH:
        fields_batch(l, ev, bias);
        break;
    case ETL_EVENT_SPINLOCK: {
        const etl_spinlock *s = &ev->u.spinlock;
        ln_hex(l, "SpinLockAddress", s->spin_lock_address);
        ln_hex(l, "CallerAddress", s->caller_address);
        ln_u(l, "AcquireTime", s->acquire_time);
        ln_u(l, "ReleaseTime", s->release_time);
        ln_u(l, "HoldTimeInCycles", etl_spinlock_hold_cycles(s));
        ln_u(l, "WaitTimeInCycles", s->wait_time_in_cycles);
        ln_u(l, "SpinCount", s->spin_count);
        ln_u(l, "ThreadId", s->thread_id);
        ln_u(l, "InterruptCount", s->interrupt_count);
        ln_u(l, "Irql", s->irql);
        ln_u(l, "AcquireDepth", s->acquire_depth);
        ln_u(l, "Flags", s->flags);
        ln_u(l, "AcquireMode", s->acquire_mode);
        ln_name(l, "AcquireModeName", etl_spinlock_acquire_mode_name(s->acquire_mode));
        ln_u(l, "ExecuteDpc", s->execute_dpc);
        ln_u(l, "ExecuteIsr", s->execute_isr);
        break;
    }
    case ETL_EVENT_READY_THREAD: {
        const etl_ready_thread *r = &ev->u.ready;
        ln_u(l, "TThreadId", r->thread_id);
        ln_u(l, "AdjustReason", r->adjust_reason);
        ln_name(l, "AdjustReasonName", etl_adjust_reason_name(r->adjust_reason));
        ln_i(l, "AdjustIncrement", r->adjust_increment);
        ln_u(l, "Flags", r->flags);
        ln_u(l, "ExecutingDpc", (r->flags & ETL_READY_EXECUTING_DPC) != 0);
        ln_u(l, "KernelStackNotResident", (r->flags & ETL_READY_KERNEL_STACK_NOT_RESIDENT) != 0);
        ln_u(l, "ProcessOutOfMemory", (r->flags & ETL_READY_PROCESS_OUT_OF_MEMORY) != 0);
        ln_u(l, "DirectSwitchAttempt", (r->flags & ETL_READY_DIRECT_SWITCH_ATTEMPT) != 0);
        break;
    }
    case ETL_EVENT_THREAD: {
        const etl_thread *t = &ev->u.thread;
        ln_u(l, "ProcessId", t->process_id);
        ln_u(l, "TThreadId", t->thread_id);
        if (t->known & ETL_THR_STACKS) {
            ln_hex(l, "StackBase", t->stack_base);
            ln_hex(l, "StackLimit", t->stack_limit);
            ln_hex(l, "UserStackBase", t->user_stack_base);
            ln_hex(l, "UserStackLimit", t->user_stack_limit);
            ln_hex(l, "StartAddr", t->start_address);
            ln_hex(l, "Win32StartAddr", t->win32_start_address);
        }
        if (t->known & ETL_THR_WAIT_MODE) ln_i(l, "WaitMode", t->wait_mode);
        if (t->known & ETL_THR_TEB) {
            ln_hex(l, "TebBase", t->teb_base);
            ln_u(l, "SubProcessTag", t->sub_process_tag);
        }
        if (t->known & ETL_THR_PRIORITIES) {
            ln_u(l, "BasePriority", t->base_priority);
            ln_u(l, "PagePriority", t->page_priority);
            ln_u(l, "IoPriority", t->io_priority);
            ln_u(l, "ThreadFlags", t->flags);
        }
        if (t->known & ETL_THR_NAME) ln_utf16(l, "ThreadName", &t->thread_name);
        break;
    }
    case ETL_EVENT_THREAD_SET_NAME:
        ln_u(l, "ProcessId", ev->u.set_name.process_id);
        ln_u(l, "ThreadId", ev->u.set_name.thread_id);
        ln_utf16(l, "ThreadName", &ev->u.set_name.thread_name);
        break;
    case ETL_EVENT_PROCESS: {
        const etl_process *p = &ev->u.process;
        if (p->known & ETL_PROC_KEY) ln_hex(l, "UniqueProcessKey", p->unique_process_key);
        if (p->known & ETL_PROC_IDS) {
            ln_u(l, "ProcessId", p->process_id);
            ln_u(l, "ParentId", p->parent_id);
        }
        if (p->known & ETL_PROC_SESSION) {
            ln_u(l, "SessionId", p->session_id);
            ln_i(l, "ExitStatus", p->exit_status);
        }
        if (p->known & ETL_PROC_DTB) ln_hex(l, "DirectoryTableBase", p->directory_table_base);
        if (p->known & ETL_PROC_FLAGS) ln_u(l, "Flags", p->flags);
        if ((p->known & ETL_PROC_SID) && p->user_sid.n) ln_sid(l, "UserSID", p->user_sid);
        if (p->known & ETL_PROC_IMAGE) ln_ansi(l, "ImageFileName", &p->image_file_name);
        if (p->known & ETL_PROC_COMMAND_LINE) ln_utf16(l, "CommandLine", &p->command_line);
        if (p->known & ETL_PROC_PACKAGE) ln_utf16(l, "PackageFullName", &p->package_full_name);
        if (p->known & ETL_PROC_APP_ID) ln_utf16(l, "ApplicationId", &p->application_id);
        if (p->known & ETL_PROC_EXIT_TIME) ln_u(l, "ExitTime", p->exit_time);
        break;
    }
    case ETL_EVENT_GROUP_MASK: {
        const etl_groupmask *g = &ev->u.group_mask;
        static const char *keys[8] = {"GroupMask1", "GroupMask2", "GroupMask3", "GroupMask4",
                                      "GroupMask5", "GroupMask6", "GroupMask7", "GroupMask8"};
        for (int i = 0; i < 8; i++) ln_u(l, keys[i], g->masks[i]);
        ln_u(l, "KernelEventVersion", g->kernel_event_version);
        const char *names[256];
        size_t n = etl_groupmask_names(g, names, 256);
        if (n > 256) n = 256;
        ln_key(l, "Flags");
        ln_raw(l, l->json ? "[" : "", l->json ? 1 : 0);
        for (size_t i = 0; i < n; i++) {
            if (i) ln_raw(l, l->json ? "," : "|", 1);
            if (l->json) {
                char t[96];
                size_t k = json_str_buf(t, 0, sizeof t, names[i]);
                ln_raw(l, t, k);
            } else {
                ln_raw(l, names[i], strlen(names[i]));
            }
        }
        if (!l->json && n == 0) ln_raw(l, "-", 1);
        ln_raw(l, l->json ? "]" : "", l->json ? 1 : 0);
        break;
    }
    case ETL_EVENT_SAMPLED_PROFILE: {
        const etl_sampled_profile *s = &ev->u.sample;
        ln_hex(l, "InstructionPointer", s->instruction_pointer);
        ln_u(l, "ThreadId", s->thread_id);
        ln_u(l, "Count", s->count);
        ln_u(l, "ExecutingDpc", s->flags & 1);
        ln_u(l, "ExecutingIsr", (s->flags >> 1) & 1);
        ln_u(l, "Priority", s->flags >> 3);
        ln_u(l, "Rank", s->rank);
        break;
    }
    case ETL_EVENT_PMC_SAMPLE:
        ln_hex(l, "InstructionPointer", ev->u.pmc_sample.instruction_pointer);
        ln_u(l, "ThreadId", ev->u.pmc_sample.thread_id);
        ln_u(l, "ProfileSource", ev->u.pmc_sample.profile_source);
        break;
    case ETL_EVENT_PROFILE_INTERVAL: {
        const etl_profile_interval *iv = &ev->u.interval;
        ln_u(l, "Source", iv->source);
        ln_u(l, "NewInterval", iv->new_interval);
        ln_u(l, "OldInterval", iv->old_interval);
        if (iv->has_name) ln_utf16(l, "SourceName", &iv->source_name);
        break;
    }
    case ETL_EVENT_STACKWALK: {
        const etl_stackwalk *w = &ev->u.stack;
        ln_u(l, "EventTimeStamp", w->event_timestamp);
        ln_u(l, "StackProcess", w->stack_process);
        ln_u(l, "StackThread", w->stack_thread);
        ln_frames(l, w->frames, w->ptr_size, w->frame_count);
        break;
    }
    case ETL_EVENT_STACK_KEY_DEF:
        ln_hex(l, "StackKey", ev->u.key_def.stack_key);
        ln_frames(l, ev->u.key_def.frames, ev->u.key_def.ptr_size, ev->u.key_def.frame_count);
        break;
    case ETL_EVENT_STACK_KEY_REF: {
        const etl_stack_key_ref *r = &ev->u.key_ref;
        ln_u(l, "EventTimeStamp", r->event_timestamp);
        ln_u(l, "StackProcess", r->stack_process);
        ln_u(l, "StackThread", r->stack_thread);
        ln_hex(l, "StackKey", r->stack_key);
        break;
    }
    case ETL_EVENT_IMAGE: {
        const etl_image *im = &ev->u.image;
        ln_hex(l, "ImageBase", im->image_base);
        ln_u(l, "ImageSize", im->image_size);
        ln_u(l, "ProcessId", im->process_id);
        if (im->known & ETL_IMG_V2) {
            ln_u(l, "ImageChecksum", im->image_checksum);
            ln_u(l, "TimeDateStamp", im->time_date_stamp);
            ln_u(l, "SignatureLevel", im->signature_level);
            ln_u(l, "SignatureType", im->signature_type);
            ln_hex(l, "DefaultBase", im->default_base);
        }
        ln_utf16(l, "FileName", &im->file_name);
        break;
    }
    case ETL_EVENT_IMAGE_KERNEL_BASE:
        ln_hex(l, "ImageBase", ev->u.kernel_base.image_base);
        break;
    case ETL_EVENT_IMAGE_HYPERCALL_PAGE:
        ln_hex(l, "HypercallPageVa", ev->u.hypercall_page.hypercall_page_va);
        break;
    case ETL_EVENT_IMAGE_ID: {
        const etl_image_id *id = &ev->u.image_id;
        ln_hex(l, "ImageBase", id->image_base);
        ln_u(l, "ImageSize", id->image_size);
        ln_u(l, "ProcessId", id->process_id);
        ln_u(l, "TimeDateStamp", id->time_date_stamp);
        ln_utf16(l, "OriginalFileName", &id->original_file_name);
        break;
    }
    case ETL_EVENT_IMAGE_DBGID_NONE:
    case ETL_EVENT_IMAGE_DBGID_RSDS:
    case ETL_EVENT_IMAGE_DBGID_ILRSDS: {
        const etl_image_dbgid *d = &ev->u.dbgid;
        ln_hex(l, "ImageBase", d->image_base);
        ln_u(l, "ProcessId", d->process_id);
        if (d->has_rsds) {
            char g[37];
            etl_guid_format(&d->guid_sig, g);
            ln_s(l, "GuidSig", g);
            ln_u(l, "Age", d->age);
            ln_ansi(l, "PdbFileName", &d->pdb_file_name);
        }
        break;
    }
    case ETL_EVENT_IMAGE_FILE_VERSION: {
        const etl_image_file_version *v = &ev->u.file_version;
        ln_u(l, "ImageSize", v->image_size);
        ln_u(l, "TimeDateStamp", v->time_date_stamp);
        /* The strings the payload holds: none after one its end cut. */
        for (unsigned i = 0; i < ETL_IMAGE_FILE_VERSION_STRINGS; i++) {
            if (!v->strings[i].terminated && !v->strings[i].text.n) break;
            ln_utf16(l, etl_image_file_version_key(i), &v->strings[i]);
        }
        break;
    }
    default:
        break;
    }
}

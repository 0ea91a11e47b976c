/*
 * emit.c - the simulator's output: each event's payload through its kernel
 * codec (never by hand), then through the writer with the header type the
 * kernel uses for it, and the matching ground-truth record.
 *
 * Header types and versions, as a Windows 10/11 kernel logger writes them
 * (checked against real traces where we have them):
 *   CSwitch 0x0524          PERFINFO, v2 (< 15063), v3 (< 16299), v4
 *   batch 0x0525            PERFINFO, v2
 *   SpinLock 0x0529         PERFINFO, v2 (Reserved[5] from 6.3)
 *   ReadyThread 0x0532      PERFINFO, v2
 *   SetName 0x0548          PERFINFO, v2
 *   Thread 0x0501..0x0504   SYSTEM, v3 (with ThreadName from 14393); the
 *                           header ids are the creator's (Start), the
 *                           thread's own (End), 0 (rundown)
 *   Process 0x0301/0x0302   SYSTEM, v4 (creator's / exiting thread's ids)
 *   Process 0x0303/0x0304   PERFINFO, v4
 * Events are only written while tracing (not during the warm-up).
 */
#include <string.h>
#include "synth_internal.h"

void synth_fail(synth *s, etl_status st, const char *what)
{
    if (s->err) return;
    s->err = st;
    if (s->diag && !s->diag->msg[0]) {
        s->diag->status = st;
        s->diag->file_offset = UINT64_MAX;
        snprintf(s->diag->msg, sizeof s->diag->msg, "%s: %s", what, etl_status_str(st));
    }
}

bool synth_truth(synth *s, const etl_synth_rec *rec)
{
    if (!s->o.on_truth || s->err) return !s->err;
    if (s->o.on_truth(s->o.truth_ctx, rec)) {
        /* The callback's reason (a write of its own that failed, or a wish to stop) is its to tell: none made up. */
        if (s->diag && !s->diag->msg[0]) {
            s->diag->status = ETL_E_IO;
            s->diag->file_offset = UINT64_MAX;
            snprintf(s->diag->msg, sizeof s->diag->msg, "the run was stopped by on_truth (it returned non-zero); "
                     "no trace is left");
        }
        synth_fail(s, ETL_E_IO, "on_truth");
        return false;
    }
    return true;
}

static void write_event(synth *s, unsigned cpu, uint8_t header, uint8_t version, uint16_t hook,
                        uint32_t tid, uint32_t pid, uint32_t kt, uint32_t ut, uint64_t ts,
                        const uint64_t *pmc, unsigned npmc, const void *payload, size_t len)
{
    if (s->err) return;
    etl_write_event ev;
    memset(&ev, 0, sizeof ev);
    ev.cpu = (uint16_t)cpu;
    ev.header = header;
    ev.version = version;
    ev.hook = hook;
    ev.tid = tid;
    ev.pid = pid;
    ev.kernel_time = kt;
    ev.user_time = ut;
    ev.ts = ts;
    ev.pmc_count = (uint8_t)npmc;
    ev.pmc = npmc ? pmc : NULL;
    ev.payload = payload;
    ev.len = len;
    synth_pipe_write(s->pipe, &ev);
}

void synth_write(synth *s, unsigned cpu, uint8_t header, uint8_t version, uint16_t hook, uint32_t tid,
                 uint32_t pid, uint64_t ts, const void *payload, size_t len)
{
    write_event(s, cpu, header, version, hook, tid, pid, 0, 0, ts, NULL, 0, payload, len);
}

static void encode_failed(synth *s, const char *what)
{
    synth_fail(s, ETL_E_RANGE, what);
}

/* ASCII to UTF-16LE (no terminator: the codecs add it). */
static etl_kstr u16(const char *a, uint8_t *buf, size_t cap)
{
    size_t n = 0;
    for (; *a && n + 2 <= cap; a++) {
        buf[n++] = (uint8_t)*a;
        buf[n++] = 0;
    }
    etl_kstr k = {{buf, n}, true};
    return k;
}

etl_kstr synth_u16(const char *a, uint8_t *buf, size_t cap)
{
    return u16(a, buf, cap);
}

static etl_kstr ansi(const char *a)
{
    etl_kstr k = {{(const uint8_t *)a, strlen(a)}, true};
    return k;
}

/* ---- scheduler events -------------------------------------------------------- */

void synth_emit_cswitch(synth *s, unsigned cpu, const etl_cswitch *cs, const uint64_t *pmc)
{
    uint8_t buf[64];
    size_t len;
    if (etl_cswitch_encode(cs, s->cswitch_version, buf, sizeof buf, &len) != ETL_OK) {
        encode_failed(s, "encoding a CSwitch");
        return;
    }
    write_event(s, cpu, ETL_WH_PERFINFO, (uint8_t)s->cswitch_version, ETL_HOOK_CSWITCH, 0, 0, 0,
                0, cs->ts, pmc, s->o.pmc_count, buf, len);
    s->sum.cswitch_events++;
}

void synth_emit_batch(synth *s, const etl_ccswap_batch *b, uint64_t ts)
{
    write_event(s, b->cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_CSWITCH_BATCH, 0, 0, 0, 0, ts, NULL, 0,
                b->data, b->size);
    scpu *p = &s->cpu[b->cpu];
    s->sum.batches++;
    etl_synth_rec r;
    memset(&r, 0, sizeof r);
    r.type = ETL_SYNTH_REC_BATCH;
    r.u.batch.time = ts;
    r.u.batch.cpu = b->cpu;
    r.u.batch.index = p->batch_index;
    r.u.batch.first_time = b->first_time;
    r.u.batch.last_time = b->last_time;
    r.u.batch.records = b->records;
    r.u.batch.bytes = (uint32_t)b->size;
    r.u.batch.reason = b->reason;
    synth_truth(s, &r);
    p->batch_index++;
    p->batch_records = 0;
}

void synth_emit_ready(synth *s, unsigned cpu, uint64_t ts, const etl_ready_thread *r)
{
    uint8_t buf[16];
    size_t len;
    if (etl_ready_thread_encode(r, buf, sizeof buf, &len) != ETL_OK) {
        encode_failed(s, "encoding a ReadyThread");
        return;
    }
    write_event(s, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_READY_THREAD, 0, 0, 0, 0, ts, NULL, 0, buf,
                len);
    s->sum.ready_events++;
}

void synth_emit_spinlock(synth *s, unsigned cpu, uint64_t ts, const etl_spinlock *l)
{
    uint8_t buf[64];
    size_t len;
    if (etl_spinlock_encode(l, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        encode_failed(s, "encoding a SpinLock");
        return;
    }
    write_event(s, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_SPINLOCK, 0, 0, 0, 0, ts, NULL, 0, buf, len);
    s->sum.spinlock_events++;
}

/* ---- lifetimes ------------------------------------------------------------------ */

static uint8_t truth_state(const sthread *th)
{
    switch (th->state) {
    case TS_READY: return ETL_SYNTH_TS_READY;
    case TS_STANDBY: return ETL_SYNTH_TS_STANDBY;
    case TS_RUN: return ETL_SYNTH_TS_RUNNING;
    case TS_WAIT: return ETL_SYNTH_TS_WAITING;
    }
    return ETL_SYNTH_TS_TERMINATED;
}

static uint8_t life_of(uint16_t hook)
{
    switch (hook & 0xFF) {
    case 0x01: return ETL_SYNTH_LIFE_START;
    case 0x02: return ETL_SYNTH_LIFE_END;
    case 0x03: return ETL_SYNTH_LIFE_DC_START;
    case 0x04: return ETL_SYNTH_LIFE_DC_END;
    }
    return ETL_SYNTH_LIFE_SET_NAME;
}

/* The SYSTEM header's ids and CPU times (clock ticks, a third kernel) of thread h. */
static void header_ids(const synth *s, int32_t h, uint32_t *tid, uint32_t *pid, uint32_t *kt,
                       uint32_t *ut)
{
    *tid = *pid = *kt = *ut = 0;
    if (h < 0) return;
    const sthread *th = &s->th[h];
    *tid = th->tid;
    *pid = s->pr[th->proc].pid;
    uint64_t ticks = th->t_running / s->tick;
    *kt = (uint32_t)(ticks / 3);
    *ut = (uint32_t)(ticks - ticks / 3);
}

static size_t thread_payload(synth *s, etl_thread *t, uint8_t *out, size_t cap)
{
    size_t len;
    unsigned known = ETL_THR_IDS | ETL_THR_STACKS | ETL_THR_TEB | ETL_THR_PRIORITIES;
    if (s->thread_names) known |= ETL_THR_NAME;
    t->known = known;
    if (etl_thread_encode(t, s->thread_version, s->ptr, out, cap, &len) != ETL_OK) {
        encode_failed(s, "encoding a Thread event");
        return 0;
    }
    return len;
}

static void thread_truth(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, uint32_t tid,
                         uint32_t pid, uint32_t htid, uint32_t hpid, int8_t base,
                         const sthread *th, const char *name)
{
    etl_synth_rec r;
    memset(&r, 0, sizeof r);
    r.type = ETL_SYNTH_REC_THREAD;
    etl_synth_thread *t = &r.u.thread;
    t->time = ts;
    t->cpu = (uint16_t)cpu;
    t->event = life_of(hook);
    t->hook = hook;
    t->tid = tid;
    t->pid = pid;
    t->header_tid = htid;
    t->header_pid = hpid;
    t->base_priority = base;
    t->name = name;
    if (th) {
        t->state = truth_state(th);
        if (th->state == TS_WAIT) t->wait_reason = th->wait_reason;
        if (th->state == TS_RUN || th->state == TS_STANDBY) t->on_cpu = th->cpu;
    } else {
        t->state = ETL_SYNTH_TS_RUNNING; /* an idle thread */
        t->on_cpu = (uint16_t)cpu;
    }
    synth_truth(s, &r);
}

void synth_emit_thread(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, uint32_t thread,
                       int32_t hthread)
{
    sthread *th = &s->th[thread];
    uint8_t nb[2 * SYNTH_NAME_MAX], buf[512];
    const char *name = th->name_pending ? "" : th->name;
    etl_thread t;
    memset(&t, 0, sizeof t);
    t.process_id = s->pr[th->proc].pid;
    t.thread_id = th->tid;
    t.stack_base = th->stack_base;
    t.stack_limit = th->stack_limit;
    t.user_stack_base = th->user_stack_base;
    t.user_stack_limit = th->user_stack_limit;
    t.start_address = synth_affinity(s);
    t.win32_start_address = th->win32_start;
    t.teb_base = th->teb;
    t.base_priority = (uint8_t)th->base;
    t.page_priority = 5;
    t.io_priority = 2;
    t.thread_name = u16(name, nb, sizeof nb);
    size_t len = thread_payload(s, &t, buf, sizeof buf);
    if (!len) return;
    uint32_t htid, hpid, kt, ut;
    header_ids(s, hthread, &htid, &hpid, &kt, &ut);
    write_event(s, cpu, ETL_WH_SYSTEM, (uint8_t)s->thread_version, hook, htid, hpid, kt, ut, ts,
                NULL, 0, buf, len);
    s->sum.thread_events++;
    thread_truth(s, cpu, ts, hook, th->tid, t.process_id, htid, hpid, th->base, th, name);
}

void synth_emit_idle_thread(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, unsigned idle_cpu)
{
    uint8_t nb[64], buf[512];
    etl_thread t;
    memset(&t, 0, sizeof t);
    t.stack_base = s->ptr == 8 ? 0xFFFFF8025A607000ull + 0x10000ull * idle_cpu
                               : 0x80F00000u + 0x4000u * idle_cpu;
    t.stack_limit = t.stack_base - (s->ptr == 8 ? 0x7000 : 0x3000);
    t.start_address = idle_cpu < 8 * s->ptr ? 1ull << idle_cpu : 0;
    t.win32_start_address = s->ptr == 8 ? 0xFFFFF8025B81A9F0ull : 0x81A1C3F0u;
    t.page_priority = 5;
    t.thread_name = u16("Idle Thread", nb, sizeof nb);
    size_t len = thread_payload(s, &t, buf, sizeof buf);
    if (!len) return;
    write_event(s, cpu, ETL_WH_SYSTEM, (uint8_t)s->thread_version, hook, 0, 0, 0, 0, ts, NULL, 0,
                buf, len);
    s->sum.thread_events++;
    thread_truth(s, cpu, ts, hook, 0, 0, 0, 0, 0, NULL, s->thread_names ? "Idle Thread" : "");
}

void synth_emit_set_name(synth *s, unsigned cpu, uint64_t ts, uint32_t thread)
{
    sthread *th = &s->th[thread];
    uint8_t nb[2 * SYNTH_NAME_MAX], buf[256];
    size_t len;
    etl_thread_setname n;
    memset(&n, 0, sizeof n);
    n.process_id = s->pr[th->proc].pid;
    n.thread_id = th->tid;
    n.thread_name = u16(th->name, nb, sizeof nb);
    if (etl_thread_setname_encode(&n, buf, sizeof buf, &len) != ETL_OK) {
        encode_failed(s, "encoding a SetName");
        return;
    }
    write_event(s, cpu, ETL_WH_PERFINFO, 2, ETL_HOOK_THREAD_SET_NAME, 0, 0, 0, 0, ts, NULL, 0, buf,
                len);
    s->sum.thread_events++;
    thread_truth(s, cpu, ts, ETL_HOOK_THREAD_SET_NAME, th->tid, n.process_id, 0, 0, th->base, th,
                 th->name);
}

static void process_write(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, etl_process *p,
                          int32_t hthread, const char *image, const char *cmdline)
{
    uint8_t cb[1024], empty[2], buf[2048];
    size_t len;
    p->image_file_name = ansi(image);
    p->command_line = u16(cmdline, cb, sizeof cb);
    p->package_full_name = u16("", empty, sizeof empty);
    p->application_id = p->package_full_name;
    if (etl_process_encode(p, 4, s->ptr, buf, sizeof buf, &len) != ETL_OK) {
        encode_failed(s, "encoding a Process event");
        return;
    }
    uint32_t htid, hpid, kt, ut;
    header_ids(s, hthread, &htid, &hpid, &kt, &ut);
    bool rundown = hook == ETL_HOOK_PROCESS_DC_START || hook == ETL_HOOK_PROCESS_DC_END;
    if (rundown) htid = hpid = kt = ut = 0;
    write_event(s, cpu, rundown ? ETL_WH_PERFINFO : ETL_WH_SYSTEM, 4, hook, htid, hpid, kt, ut, ts,
                NULL, 0, buf, len);
    s->sum.process_events++;

    etl_synth_rec r;
    memset(&r, 0, sizeof r);
    r.type = ETL_SYNTH_REC_PROCESS;
    etl_synth_process *q = &r.u.process;
    q->time = ts;
    q->cpu = (uint16_t)cpu;
    q->event = life_of(hook);
    q->hook = hook;
    q->pid = p->process_id;
    q->parent_pid = p->parent_id;
    q->session_id = p->session_id;
    q->exit_status = p->exit_status;
    q->header_tid = htid;
    q->header_pid = hpid;
    q->image = image;
    q->command_line = cmdline;
    synth_truth(s, &r);
}

void synth_emit_process(synth *s, unsigned cpu, uint64_t ts, uint16_t hook, uint32_t proc,
                        int32_t hthread, int32_t exit_status)
{
    const sproc *pr = &s->pr[proc];
    etl_process p;
    memset(&p, 0, sizeof p);
    p.unique_process_key = pr->key;
    p.process_id = pr->pid;
    p.parent_id = pr->parent_pid;
    p.session_id = pr->session;
    p.exit_status = exit_status;
    p.directory_table_base = pr->dtb;
    /* TOKEN_USER: a pointer to the SID (its low ULONG must not be 0) and Attributes 0. */
    p.token_user[0] = (pr->key & (s->ptr == 8 ? UINT64_MAX : 0xFFFFFFFFu)) + 0x590;
    p.token_user[1] = 0;
    p.user_sid.p = pr->sid;
    p.user_sid.n = pr->sid_len;
    process_write(s, cpu, ts, hook, &p, hthread, synth_image(s, proc), synth_command_line(s, proc));
}

void synth_emit_idle_process(synth *s, unsigned cpu, uint64_t ts, uint16_t hook)
{
    static const uint8_t system_sid[12] = {1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0};
    etl_process p;
    memset(&p, 0, sizeof p);
    p.unique_process_key = s->ptr == 8 ? 0xFFFFF8025C132B00ull : 0x81B2C3C0u;
    p.session_id = UINT32_MAX;
    p.directory_table_base = 0x1AE000;
    p.token_user[0] = s->ptr == 8 ? 0xFFFF8A0001234560ull : 0x8A012340u;
    p.user_sid.p = system_sid;
    p.user_sid.n = sizeof system_sid;
    process_write(s, cpu, ts, hook, &p, -1, "Idle", "");
}

/*
 * facts.c - a trace's facts in one file-order pass (event.h, etl_trace_facts_run): the
 * records by hook, the kernel flags from the header-extension events, the last record's
 * time and the pass's damage counters. What the report page shows beside `info`.
 */
#include <stdlib.h>
#include <string.h>
#include "etlkit/event.h"

etl_status etl_trace_facts_run(etl_reader *r, etl_trace_facts *f)
{
    memset(f, 0, sizeof *f);
    f->by_hook = calloc(65536, sizeof *f->by_hook);
    etl_iter *it = NULL;
    if (!f->by_hook || etl_iter_open(r, ETL_ORDER_FILE, &it) != ETL_OK) {
        etl_trace_facts_free(f);
        return ETL_E_NOMEM;
    }
    etl_record rec;
    while (etl_iter_next(it, &rec) == ETL_OK) {
        f->records++;
        if (rec.has & ETL_REC_HOOK) f->by_hook[rec.hook]++;
        if ((rec.has & ETL_REC_TS) && rec.ts > f->last_ts) f->last_ts = rec.ts;
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook) || (hook != ETL_HOOK_HEADER_EXTENSION && hook != ETL_HOOK_GROUP_MASKS_END))
            continue;
        etl_event ev;
        if (etl_event_decode(&rec, &ev) != ETL_OK || ev.kind != ETL_EVENT_GROUP_MASK) continue;
        f->group_mask_events++;
        for (int i = 0; i < 8; i++) f->flags.masks[i] |= ev.u.group_mask.masks[i];
        if (ev.u.group_mask.kernel_event_version) f->kernel_event_version = ev.u.group_mask.kernel_event_version;
    }
    f->st = *etl_iter_stats(it);
    etl_iter_close(it);
    return ETL_OK;
}

void etl_trace_facts_free(etl_trace_facts *f)
{
    free(f->by_hook);
    f->by_hook = NULL;
}

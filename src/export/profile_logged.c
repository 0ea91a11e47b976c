/*
 * profile_logged.c - whether a trace logs samples or images, from its first
 * records: the exports run the profile pass only then (etlkit/export.h).
 */
#include "etlkit/export.h"
#include "etlkit/event.h"
#include "etlkit/kernel.h"

/* The header extension comes first in every kernel session's file; a few buffers' worth of records is plenty. */
#define LOOK_RECORDS 4096u

bool etl_export_profile_logged(etl_reader *r)
{
    etl_iter *it;
    if (etl_iter_open(r, ETL_ORDER_FILE, &it) != ETL_OK) return true; /* cannot tell: the pass decides */
    etl_record rec;
    bool logged = false;
    for (unsigned n = 0; n < LOOK_RECORDS && etl_iter_next(it, &rec) == ETL_OK; n++) {
        uint16_t hook;
        if (!etl_record_kernel_hook(&rec, &hook)) continue;
        if (hook == ETL_HOOK_HEADER_EXTENSION || hook == ETL_HOOK_GROUP_MASKS_END) {
            etl_groupmask m;
            if (etl_groupmask_decode(rec.payload, &m) != ETL_OK) continue;
            /* An empty mask says nothing (a relogger's, a rundown's): the first one with a flag decides. */
            uint32_t any = 0;
            for (unsigned i = 0; i < 8; i++) any |= m.masks[i];
            if (!any) continue;
            logged = etl_groupmask_test(&m, ETL_PERF_PROFILE) || etl_groupmask_test(&m, ETL_PERF_LOADER);
            break;
        }
        if (hook == ETL_HOOK_SAMPLED_PROFILE || hook == ETL_HOOK_PROCESS_LOAD_IMAGE ||
            hook == ETL_HOOK_IMAGE_DC_START || hook == ETL_HOOK_IMAGE_LOAD) {
            logged = true;
            break;
        }
    }
    etl_iter_close(it);
    return logged;
}

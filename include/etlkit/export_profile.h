/*
 * etlkit/export_profile.h - the sampled profile in the exports: the tables
 * image, stack and sample (SQLite, CSV) and Perfetto callstack samples.
 *
 * The profile is a pass of its own over the trace (etl_profile_run_each), run
 * only when the trace logs samples or images (etl_export_profile_logged: a look
 * at its first records), so a scheduler-only export costs what it did.
 */
#ifndef ETLKIT_EXPORT_PROFILE_H
#define ETLKIT_EXPORT_PROFILE_H

#include "etlkit/export.h"
#include "etlkit/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Whether r logs SampledProfile or Image events: the session's first group
 * mask that is not empty (PROFILE, LOADER), or one of those events among its
 * first 4096 records when no such mask comes before them.
 */
ETL_API bool etl_export_profile_logged(etl_reader *r);

/*
 * Profiles r (the window of x's options) and writes its rows through x: sample
 * (one per SampledProfile, its utid from model's thread instances), then image
 * and stack. ETL_OK; ETL_E_NOMEM, an iterator's error; ETL_E_IO when a sink call
 * failed (etl_export_rows_finish says so too).
 */
ETL_API etl_status etl_export_rows_profile(etl_export_rows *x, etl_reader *r, const etl_sched *model);

/*
 * Perfetto: profiles r (the timeline's window) and writes its samples as
 * PerfSample packets with interned callstacks (mappings, frames, callstacks) on
 * a sequence of their own, for the UI's flame graph. ETL_OK; ETL_E_NOMEM; ETL_E_IO.
 */
ETL_API etl_status etl_timeline_profile(etl_timeline *w, etl_reader *r);

#ifdef __cplusplus
}
#endif
#endif

/*
 * ccswap_tell.c - the damage an expander found in one compact batch, told with the batch's
 * file offset and counted as damage of its buffer, for every reader that expands batches
 * (the scheduler's source and per-CPU runs, dump). A switch lost in a batch is input
 * skipped: exit 3 (README), not a count nobody sees.
 */
#include <stdio.h>
#include "etlkit/ccswap.h"
#include "container/reader_internal.h"

void etl_batch_expand_tell(const etl_batch_expander *x, const etl_batch_expand_stats *before, etl_reader *r,
                           uint32_t buffer_index, size_t pos, etl_stats *dmg)
{
    if (!x || !before || !r || !dmg || buffer_index >= r->nbufs) return;
    const etl_batch_expand_stats *now = &x->stats;
    char what[256];
    if (now->after_written != before->after_written) {
        char t[32], w[32];
        snprintf(what, sizeof what,
                 "its switch at +0x%zx of its data has time %s s, after the batch was written (%s s); the batch's "
                 "switches from there on dropped",
                 x->last_offset, etl_reader_secs(r, x->walk.time, t), etl_reader_secs(r, x->t_written, w));
        dmg->bad_times++;
    } else if (now->truncated != before->truncated) {
        snprintf(what, sizeof what,
                 "its record at +0x%zx of its data runs past the batch's Size; that switch is lost",
                 x->last_offset);
        dmg->bad_records++;
    } else if (now->short_batches != before->short_batches) {
        snprintf(what, sizeof what, "its data (%zu bytes) is shorter than the 0x58-byte batch header; passed over",
                 x->last_offset);
        dmg->bad_records++;
    } else if (now->bad_index != before->bad_index) {
        snprintf(what, sizeof what,
                 "%llu of its records name a TidTable entry past the %u filled ones (the first at +0x%zx of its "
                 "data); their old threads are unknown",
                 (unsigned long long)(now->bad_index - before->bad_index), x->walk.tid_count, x->first_bad_index);
        dmg->bad_records++;
    } else {
        return;
    }
    /* One more damaged part of its buffer, as a bad time in a batch counts one. */
    dmg->bad_buffers++;
    const etl_buf_ent *b = &r->bufs[buffer_index];
    char where[48];
    uint64_t at = etl_buf_record_where(b, pos, where);
    etl_reader_problem(r, dmg, ETL_E_CORRUPT, at, "buffer %u at offset 0x%llx: record at +0x%zx (%s, hook 0x0525, a "
                       "compact batch): %s", b->index, (unsigned long long)b->file_off, pos, where, what);
}

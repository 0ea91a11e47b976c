/*
 * fuzz_sched_stacks.c - the stacks on the scheduler's rows (src/stacks/sched_stacks.c:
 * the first-records check, the image map and the key table, the CSwitch and
 * ReadyThread walks attached and interned, the side table) on arbitrary bytes, then
 * every stack's frames and labels and lookups around every walked time. Nothing may
 * crash, leak or read out of bounds; the counts must agree (walked events at most
 * the events, every frame's image an image of the trace).
 */
#include <stdlib.h>
#include "etlkit/etlkit.h"
#include "etlkit/schedstacks.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    etl_reader *r;
    etl_diag d;
    if (etl_reader_open_memory(data, size, NULL, &r, &d) != ETL_OK) return 0;
    sink += etl_sched_stacks_logged(r);
    etl_sched_stacks *s;
    if (etl_sched_stacks_build(r, &s) != ETL_OK) abort(); /* only out of memory may fail */
    const etl_sched_stacks_stats *st = etl_sched_stacks_stats_get(s);
    if (st->cswitch_walked > st->cswitch_events || st->ready_walked > st->ready_events) abort();
    size_t nimg;
    etl_sched_stacks_images(s, &nimg);
    char label[1200];
    for (uint64_t id = 0; id <= st->stacks; id++) {
        uint32_t n;
        const etl_profile_frame *f = etl_sched_stacks_frames(s, (uint32_t)id, &n);
        if ((id == st->stacks) != (f == NULL) || n > 2 * ETL_STACK_MAX_FRAMES) abort();
        for (uint32_t k = 0; k < n; k++) {
            if (f[k].image != ETL_PROFILE_NONE && f[k].image >= nimg) abort();
            sink += etl_sched_stacks_frame_label(s, &f[k], label, sizeof label);
        }
    }
    for (uint16_t cpu = 0; cpu < 4; cpu++)
        for (int64_t ns = -1; ns < 64; ns++) {
            uint32_t a = etl_sched_stacks_cswitch(s, cpu, ns), b = etl_sched_stacks_ready(s, cpu, ns);
            if ((a != ETL_SCHED_STACK_NONE && a >= st->stacks) || (b != ETL_SCHED_STACK_NONE && b >= st->stacks))
                abort();
        }
    etl_sched_stacks_free(s);
    etl_reader_close(r);
    return 0;
}

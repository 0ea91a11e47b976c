/* timeline_internal.h - what timeline_profile.c needs of a timeline (timeline.c). */
#ifndef ETLKIT_EXPORT_TIMELINE_INTERNAL_H
#define ETLKIT_EXPORT_TIMELINE_INTERNAL_H

#include "etlkit/export.h"

typedef struct etl_timeline_view {
    bool perfetto;      /* the Perfetto format (else ftrace) */
    bool failed;        /* a write failed */
    bool has_range;
    int64_t v0, v1;
    unsigned threads;
    struct etl_symbols *symbols;
} etl_timeline_view;

/* Writes n bytes, one framed Trace.packet, to the timeline's file. */
void etl_timeline_put_packet(etl_timeline *w, const uint8_t *p, size_t n);
void etl_timeline_peek(const etl_timeline *w, etl_timeline_view *v);
/* The profile's pass found the input damaged (etl_timeline_profile_damaged). */
void etl_timeline_profile_damage(etl_timeline *w);

#endif

/*
 * schema_internal.h - what the SQLite sink needs of schema.c besides export.h: the
 * tables each view reads, and the `trace` key that lists the tables an export filled.
 */
#ifndef ETLKIT_EXPORT_SCHEMA_INTERNAL_H
#define ETLKIT_EXPORT_SCHEMA_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include "etlkit/export.h"

/* The `trace` key whose value lists the tables filled, comma-separated in schema order ("trace,slice,enum_name"). */
#define ETL_TRACE_KEY_TABLES "tables"

/* The tables view i of etl_export_views reads (a bit per etl_table_id): it is made only when all were filled. */
uint32_t etl_export_view_reads(size_t i);

/* The tables a `tables` value names (a bit per etl_table_id); 0 when a name is not a table. */
uint32_t etl_export_tables_parse(const char *list);

#endif

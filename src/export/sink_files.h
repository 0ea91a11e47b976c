/*
 * sink_files.h - the files of ours in a CSV or Parquet export folder (OUT): every table in
 * every format etlkit writes there, <table>.csv and <table>.parquet. Over an existing OUT
 * (--force) the sinks replace all of them as one (base/outfile.h, etl_outfile_dir_files), so
 * OUT holds one export, never a mix of two formats; files of other names are the user's.
 */
#ifndef ETLKIT_EXPORT_SINK_FILES_H
#define ETLKIT_EXPORT_SINK_FILES_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "etlkit/export.h"
#include "base/diag.h"
#include "base/platform.h"

enum { ETL_SINK_CSV = 0, ETL_SINK_PARQUET, ETL_SINK_FORMATS };
#define ETL_SINK_FILES (ETL_SINK_FORMATS * ETL_TABLE_COUNT)
_Static_assert(ETL_SINK_FILES <= 32, "a bit per file (outfile.h: dir_files)");

typedef struct etl_sink_files {
    char name[ETL_SINK_FILES][32];     /* "slice.csv": the name and its extension (dir_files' ext is "") */
    const char *names[ETL_SINK_FILES]; /* kept for etl_outfile_dir_files: they must outlive the etl_outfile */
} etl_sink_files;

/* Fills s; returns the bits of the files format writes (a bit per table in tables), for dir_files' ours. */
static inline uint32_t etl_sink_files_init(etl_sink_files *s, unsigned format, uint32_t tables)
{
    static const char *const ext[ETL_SINK_FORMATS] = {".csv", ".parquet"};
    const etl_table_def *t = etl_export_tables();
    for (unsigned f = 0; f < ETL_SINK_FORMATS; f++)
        for (unsigned i = 0; i < ETL_TABLE_COUNT; i++) {
            unsigned k = f * ETL_TABLE_COUNT + i;
            snprintf(s->name[k], sizeof s->name[k], "%s%s", t[i].name, ext[f]);
            s->names[k] = s->name[k];
        }
    return (tables & ((1u << ETL_TABLE_COUNT) - 1)) << (format * ETL_TABLE_COUNT);
}

/*
 * ETL_E_IO when dir is an etlkit dataset (it has _traces/: dataset.c), --force or not: a single
 * export's tables would land among its partitions, and a reader of its top-level files would take them for its own.
 * The message tells the command that adds the trace to it.
 */
static inline etl_status etl_sink_not_dataset(const char *dir, const char *format, const char *input, etl_diag *diag)
{
    size_t n = strlen(dir) + sizeof "/_traces";
    char *p = malloc(n);
    if (!p) {
        etl_diag_set(diag, ETL_E_NOMEM, UINT64_MAX, "out of memory");
        return ETL_E_NOMEM;
    }
    snprintf(p, n, "%s%s_traces", dir, etl_path_sep(dir, NULL));
    etl_file_info fi;
    bool dataset = etl_stat(p, false, &fi) == 0 && fi.is_dir && !fi.is_link;
    free(p);
    if (!dataset) return ETL_OK;
    etl_diag_set(diag, ETL_E_IO, UINT64_MAX, "%s is an etlkit dataset (it has _traces/), not a folder for one export: "
                 "add the trace to it with 'etlkit export %s --dataset --to %s -o %s --resume', or export into "
                 "another folder", dir, input && strcmp(input, "-") != 0 ? input : "FILE", format, dir);
    return ETL_E_IO;
}

#endif

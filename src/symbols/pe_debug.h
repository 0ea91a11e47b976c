/*
 * pe_debug.h - what a symbol path needs of a PE file (a .dll or .exe found in
 * the store): the COFF header's TimeDateStamp, the optional header's
 * SizeOfImage (the store's key) and the CodeView RSDS record of its debug
 * directory (the PDB's GUID, age and name). Every read bounds-checked: the file
 * may be anything.
 */
#ifndef ETLKIT_SYMBOLS_PE_DEBUG_H
#define ETLKIT_SYMBOLS_PE_DEBUG_H

#include <stdbool.h>
#include <stdint.h>
#include "etlkit/base.h"

typedef struct pe_debug {
    uint32_t time_date_stamp, size_of_image;
    bool has_rsds;
    uint8_t guid[16];       /* as the record holds it (Data1..3 little-endian) */
    uint32_t age;
    char pdb[260];          /* the PDB's path as the linker wrote it (cut to fit) */
} pe_debug;

/* ETL_OK; ETL_E_IO (cannot read it); ETL_E_NOT_ETL's cousin ETL_E_CORRUPT: not a PE. */
etl_status pe_debug_read(const char *path, pe_debug *out);

#endif

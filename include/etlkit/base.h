/*
 * etlkit/base.h - status codes, byte spans and diagnostics shared by every stage.
 *
 * Every call that can fail returns an etl_status. Negative values are errors,
 * ETL_OK is success and ETL_END says an iterator is exhausted. Where a call can
 * say more (which buffer, which file offset), it fills an etl_diag.
 */
#ifndef ETLKIT_BASE_H
#define ETLKIT_BASE_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "etlkit/version.h"

/* Every *_free and *_close of the API takes NULL and does nothing (a cleanup path may free what it never made). */

/*
 * Options structs (every etl_*_options): the first member, size_t sz, is set by the caller to sizeof the struct
 * (0 or a NULL struct: every default). The library reads the caller's first sz bytes over its own defaults, so a
 * program built against an older etlkit gets the defaults for the members it does not know. A zeroed struct with sz
 * set takes the defaults too, but for the members whose 0 is a value: profile's pid and tid (0 is Idle: start from
 * etl_profile_options_init), pmc's nkinds (no counter named: start from etl_pmc_options_init), synth's (its init),
 * symbols' lenient (0: a folder that is not there fails the open; NULL options: lenient, as etl_symbols_open for
 * the environment's path).
 *   - sz is a sizeof of some version of the struct. A sz that is not a multiple of size_t's alignment (one that
 *     ends inside a member) is taken down to one: the partial member is not read, never half a pointer.
 *   - A sz larger than this version's (a program built against a newer etlkit): the members this version does not
 *     know are not read, even when they are non-zero (unlike libbpf, which refuses them); a program that needs a
 *     newer member checks etl_version() first.
 *   - The calls that fill a struct (etl_profile_options_init, etl_pmc_options_init, etl_synth_options_init and
 *     synth's _preset, _set, _get) write or read this version's whole struct (sz is not set yet when an init is
 *     called): a program built against an older etlkit that calls them must be rebuilt. The rule above is for
 *     what the runs read (synth's: etl_synth_validate, etl_synth_run).
 */

/* The headers' inline code (the record framer, the clock) uses GCC's and Clang's builtins. */
#if !defined(__GNUC__)
#error "etlkit's headers need GCC or Clang (or a compiler that defines __GNUC__)"
#endif

/*
 * ETL_API marks the public API: libetlkit.so is built with every other symbol
 * hidden, so only what these headers declare is linkable (the static archive
 * keeps everything, for the tool and the tests).
 */
#if defined(__GNUC__) && !defined(_WIN32)
#define ETL_API __attribute__((visibility("default")))
#else
#define ETL_API
#endif

typedef enum etl_status {
    ETL_OK = 0,
    ETL_END = 1,              /* iterator exhausted: not an error */
    ETL_E_IO = -1,            /* open/read/mmap failed (errno kept in the diag) */
    ETL_E_NOMEM = -2,
    ETL_E_NOT_ETL = -3,       /* the file does not start with an ETL logfile header */
    ETL_E_TRUNCATED = -4,     /* a structure runs past the end of its span */
    ETL_E_CORRUPT = -5,       /* a field holds an impossible value */
    ETL_E_UNSUPPORTED = -6,   /* a valid but unimplemented feature (e.g. compression format) */
    ETL_E_INVALID_ARG = -7,   /* the caller passed an invalid value (e.g. below a kernel minimum) */
    ETL_E_RANGE = -8          /* a value does not fit the field it must be encoded into */
} etl_status;

/* The version of the library linked ("0.1.0"): ETLKIT_VERSION_STRING of the headers it was built with. */
ETL_API const char *etl_version(void);

/* A short lowercase name for a status ("ok", "truncated", ...). Never NULL. */
ETL_API const char *etl_status_str(etl_status st);

/* A read-only view of bytes. Never owns its memory. */
typedef struct etl_span {
    const uint8_t *p;
    size_t n;
} etl_span;

/* A problem, with where it was found. file_offset is UINT64_MAX when unknown. */
typedef struct etl_diag {
    etl_status status;
    uint64_t file_offset;
    char msg[256];
} etl_diag;

/* A GUID in its in-memory Windows layout (Data1..3 little-endian on disk). */
typedef struct etl_guid {
    uint32_t data1;
    uint16_t data2;
    uint16_t data3;
    uint8_t data4[8];
} etl_guid;

/* Formats "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lowercase) into out[37]. */
ETL_API void etl_guid_format(const etl_guid *g, char out[37]);

#ifdef __cplusplus
}
#endif
#endif

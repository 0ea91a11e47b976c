/* status.c - names for status codes, GUID formatting and the version linked. */
#include <stdarg.h>
#include <stdio.h>
#include "etlkit/base.h"
#include "base/diag.h"

const char *etl_status_str(etl_status st)
{
    switch (st) {
    case ETL_OK: return "ok";
    case ETL_END: return "end";
    case ETL_E_IO: return "i/o error";
    case ETL_E_NOMEM: return "out of memory";
    case ETL_E_NOT_ETL: return "not an ETL file";
    case ETL_E_TRUNCATED: return "truncated";
    case ETL_E_CORRUPT: return "corrupt";
    case ETL_E_UNSUPPORTED: return "unsupported";
    case ETL_E_INVALID_ARG: return "invalid argument";
    case ETL_E_RANGE: return "out of range";
    }
    return "unknown status";
}

void etl_guid_format(const etl_guid *g, char out[37])
{
    static const char hex[] = "0123456789abcdef";
    uint8_t b[16] = {(uint8_t)(g->data1 >> 24), (uint8_t)(g->data1 >> 16), (uint8_t)(g->data1 >> 8),
                     (uint8_t)g->data1, (uint8_t)(g->data2 >> 8), (uint8_t)g->data2, (uint8_t)(g->data3 >> 8),
                     (uint8_t)g->data3};
    for (int i = 0; i < 8; i++) b[8 + i] = g->data4[i];
    size_t o = 0;
    for (int i = 0; i < 16; i++) {
        if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
        out[o++] = hex[b[i] >> 4];
        out[o++] = hex[b[i] & 15];
    }
    out[o] = 0;
}

void etl_diag_set(etl_diag *d, etl_status st, uint64_t file_offset, const char *fmt, ...)
{
    if (!d) return;
    d->status = st;
    d->file_offset = file_offset;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(d->msg, sizeof d->msg, fmt, ap);
    va_end(ap);
}

const char *etl_version(void) { return ETLKIT_VERSION_STRING; }

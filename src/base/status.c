/* status.c - names for status codes, and GUID formatting. */
#include <stdio.h>
#include "etlkit/base.h"

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
    snprintf(out, 37, "%08x-%04x-%04x-%02x%02x-%02x%02x%02x%02x%02x%02x", (unsigned)g->data1,
             (unsigned)g->data2, (unsigned)g->data3, g->data4[0], g->data4[1], g->data4[2],
             g->data4[3], g->data4[4], g->data4[5], g->data4[6], g->data4[7]);
}

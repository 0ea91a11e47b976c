/* columns.c - see columns.h. */
#include "columns.h"
#include "common.h"

const char *col_u64(char out[32], uint64_t v)
{
    out[fmt_u64(out, v)] = 0;
    return out;
}

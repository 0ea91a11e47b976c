/*
 * out.h - the output writers the subcommands share, all in the library now
 * (src/out): JSON (jw_*, ln_*), tables (tbl_*), CSV fields, numbers.
 */
#ifndef ETLKIT_CLI_OUT_H
#define ETLKIT_CLI_OUT_H

#include "out/csv.h"
#include "out/json.h"
#include "out/num.h"
#include "out/table.h"
#include "out/text.h"

#endif

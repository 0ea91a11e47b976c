/*
 * etlkit.h - the umbrella header: everything a program needs to read and write
 * Windows Event Trace Log files.
 */
#ifndef ETLKIT_H
#define ETLKIT_H

#include "etlkit/base.h"
#include "etlkit/text.h"
#include "etlkit/compress.h"
#include "etlkit/container.h"
#include "etlkit/kernel.h"
#include "etlkit/ccswap.h"
#include "etlkit/event.h"
#include "etlkit/summary.h"

#endif

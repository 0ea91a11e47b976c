/*
 * clock.c - raw timestamps to nanoseconds and UTC, exactly.
 *
 * UTC(ts) = StartTime + (ts - t0) * scale, with t0 the raw time of the logfile
 * header record (kernel-events.md §4). All arithmetic is in 128-bit integers with
 * floor division, so no drift accumulates however long the trace.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "etlkit/container.h"

#define FILETIME_UNIX_EPOCH 116444736000000000LL /* 1970-01-01 in 100 ns since 1601 */

void etl_clock_init(etl_clock *c, const etl_logfile_header *h)
{
    c->type = h->clock_type;
    c->start_time = h->start_time;
    c->t0 = h->header_ts;
    switch (h->clock_type) {
    case ETL_CLOCK_SYSTEM_TIME:
        c->ticks_per_sec = 10000000;
        break;
    case ETL_CLOCK_CPU_CYCLES:
        c->ticks_per_sec = (uint64_t)h->cpu_speed_mhz * 1000000u;
        break;
    default: /* QPC, and raw/unknown types: the performance counter is the best guess */
        c->ticks_per_sec = h->perf_freq;
        break;
    }
    if (c->ticks_per_sec == 0) c->ticks_per_sec = 10000000; /* unusable header: 100 ns ticks */
    c->ns_mul = c->ticks_per_sec <= 1000000000u && 1000000000u % c->ticks_per_sec == 0 ? 1000000000u / c->ticks_per_sec : 0;
    c->ns_div = c->ticks_per_sec % 1000000000u == 0 ? c->ticks_per_sec / 1000000000u : 0;
}

static int64_t floor_div(__int128 a, __int128 b)
{
    __int128 q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) q--;
    if (q > INT64_MAX) return INT64_MAX;
    if (q < INT64_MIN) return INT64_MIN;
    return (int64_t)q;
}

int64_t etl_clock_ticks_to_ns(const etl_clock *c, int64_t ticks)
{
    return floor_div((__int128)ticks * 1000000000, (__int128)c->ticks_per_sec);
}

int64_t etl_clock_ns_exact(const etl_clock *c, uint64_t ts)
{
    __int128 d = (__int128)(int64_t)ts - (__int128)(int64_t)c->t0; /* LARGE_INTEGERs */
    return floor_div(d * 1000000000, (__int128)c->ticks_per_sec);
}

static int64_t sat_add(int64_t a, int64_t b)
{
    if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
    if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
    return a + b;
}

/* StartTime (from the file, any u64) in `unit` per 100 ns, plus the exact offset of ts. */
static int64_t absolute(const etl_clock *c, uint64_t ts, int64_t epoch, int64_t per_100ns)
{
    __int128 d = (__int128)(int64_t)ts - (__int128)(int64_t)c->t0; /* LARGE_INTEGERs */
    __int128 base = ((__int128)c->start_time - epoch) * per_100ns;
    int64_t b = base > INT64_MAX ? INT64_MAX : base < INT64_MIN ? INT64_MIN : (int64_t)base;
    /* |d| < 2^64, so d * 10^9 < 2^94 fits; the sum is saturated, not wrapped. */
    return sat_add(b, floor_div(d * 10000000 * per_100ns, (__int128)c->ticks_per_sec));
}

int64_t etl_clock_filetime(const etl_clock *c, uint64_t ts)
{
    return absolute(c, ts, 0, 1);
}

int64_t etl_clock_unix_ns(const etl_clock *c, uint64_t ts)
{
    return absolute(c, ts, FILETIME_UNIX_EPOCH, 100);
}

/* Civil date from days since 1970-01-01 (Howard Hinnant's algorithm), any range. */
static void civil(int64_t days, int64_t *y, unsigned *m, unsigned *d)
{
    days += 719468;
    int64_t era = (days >= 0 ? days : days - 146096) / 146097;
    unsigned doe = (unsigned)(days - era * 146097);
    unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    unsigned mp = (5 * doy + 2) / 153;
    *d = doy - (153 * mp + 2) / 5 + 1;
    *m = mp < 10 ? mp + 3 : mp - 9;
    *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

static void format_parts(int64_t secs, unsigned frac, int digits, char out[40])
{
    int64_t days = secs >= 0 ? secs / 86400 : (secs - 86399) / 86400;
    int64_t sod = secs - days * 86400;
    int64_t y;
    unsigned mo, d;
    civil(days, &y, &mo, &d);
    char tmp[96]; /* a year of up to 20 digits would not fit out[40]: cut, never overflow */
    snprintf(tmp, sizeof tmp, "%04lld-%02u-%02uT%02u:%02u:%02u.%0*uZ", (long long)y, mo, d,
             (unsigned)(sod / 3600), (unsigned)(sod / 60 % 60), (unsigned)(sod % 60), digits, frac);
    memcpy(out, tmp, 39);
    out[39] = 0;
}

void etl_unix_ns_format(int64_t unix_ns, char out[40])
{
    int64_t secs = unix_ns / 1000000000, rem = unix_ns % 1000000000;
    if (rem < 0) {
        rem += 1000000000;
        secs--;
    }
    format_parts(secs, (unsigned)rem, 9, out);
}

void etl_filetime_format(uint64_t filetime, char out[40])
{
    /* Seconds since 1970 from 100 ns since 1601; unsigned math cannot overflow here. */
    int64_t secs = (int64_t)(filetime / 10000000) - FILETIME_UNIX_EPOCH / 10000000;
    format_parts(secs, (unsigned)(filetime % 10000000), 7, out);
}

const char *etl_clock_type_name(uint32_t t)
{
    switch (t) {
    case ETL_CLOCK_RAW: return "raw";
    case ETL_CLOCK_QPC: return "qpc";
    case ETL_CLOCK_SYSTEM_TIME: return "system-time";
    case ETL_CLOCK_CPU_CYCLES: return "cpu-cycles";
    default: return "unknown";
    }
}

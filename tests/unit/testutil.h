/* testutil.h - small helpers shared by the cmocka unit tests. */
#ifndef ETLKIT_TESTUTIL_H
#define ETLKIT_TESTUTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

/* Parses a hex string ("00ff 1a..", spaces ignored) into out; returns the byte count. */
size_t tu_hex(const char *hex, uint8_t *out, size_t cap);

/* A deterministic PRNG (splitmix64) for seeded round-trip tests. */
uint64_t tu_rand(uint64_t *state);

/*
 * A test's own temporary folder, new and empty: "TEMP/etlkit-NAME-XXXXXX" in buf (n bytes),
 * TEMP the library's (etl_temp_dir: $TMPDIR, /tmp; Windows' own). 0, or -1 when it does not fit
 * or cannot be made. A cmocka group's setup: return tu_tmpdir_make(dir, sizeof dir, "name").
 */
int tu_tmpdir_make(char *buf, size_t n, const char *name);
/*
 * Removes dir and all it holds, folders below too (a symbolic link is removed, never followed),
 * on both systems (no shell: Windows has no rm). 0, or -1 when something is left. Keeps it all
 * when ETLKIT_KEEP_TMP is set, to look at the files after a failure.
 */
int tu_tmpdir_remove(const char *dir);

#ifdef _WIN32
/* The POSIX calls the tests use that Windows (the tests under wine: make test-windows) lacks. */
char *tu_mkdtemp(char *tmpl);
int tu_setenv(const char *name, const char *value, int overwrite);
int tu_unsetenv(const char *name);
#define mkdtemp tu_mkdtemp
#define setenv tu_setenv
#define unsetenv tu_unsetenv
#endif

#endif

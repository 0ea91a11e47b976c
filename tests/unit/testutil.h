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

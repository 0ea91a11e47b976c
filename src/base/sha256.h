/*
 * sha256.h - SHA-256 (FIPS 180-4 §6.2), for the dataset manifest's file digests.
 *
 * Written here rather than linked: no Debian library gives SHA-256 to both the
 * Linux build and the mingw Windows build without a new cross-compiled dependency
 * (OpenSSL, nettle and libgcrypt are not built for mingw by scripts/deps.sh), and
 * the algorithm is a page. tests/unit/test_sha256.c checks it against the FIPS
 * 180-4 examples (one block, two blocks, a million 'a's) and against itself fed in
 * pieces of every size.
 */
#ifndef ETLKIT_SRC_BASE_SHA256_H
#define ETLKIT_SRC_BASE_SHA256_H

#include <stddef.h>
#include <stdint.h>

typedef struct etl_sha256 {
    uint32_t h[8];
    uint64_t len;         /* bytes hashed so far */
    uint8_t buf[64];      /* the block being filled: len % 64 bytes */
} etl_sha256;

void etl_sha256_init(etl_sha256 *s);
void etl_sha256_update(etl_sha256 *s, const void *p, size_t n);
void etl_sha256_final(etl_sha256 *s, uint8_t out[32]);
/* The digest as 64 lowercase hex digits and a NUL. */
void etl_sha256_hex(const uint8_t d[32], char out[65]);
/*
 * The digest of the file at path, read in large pieces; its size into *size.
 * 0, or -1 with errno.
 */
int etl_sha256_file(const char *path, uint8_t out[32], uint64_t *size);

#endif

#ifndef MEDIACACHE_XXHASH_VENDORED_CHECK_H
#define MEDIACACHE_XXHASH_VENDORED_CHECK_H
/* Test-only: the vendored xxHash (Sources/XXHash) compiled on Linux
 * beside the system's libxxhash, under other names, so that the tests
 * can compare the two over random inputs. Nothing here ships. */
#include <stddef.h>
#include <stdint.h>

/* XXH3-128 of `length` bytes at `bytes` with `seed`; high and low halves. */
void vendored_xxh3_128(const void *bytes, size_t length, uint64_t seed, uint64_t *high, uint64_t *low);

/* The same through the streaming API, fed in pieces of `piece` bytes
 * (a piece of 0 means all at once). Returns 0, or -1 when out of memory. */
int vendored_xxh3_128_streaming(const void *bytes, size_t length, size_t piece, uint64_t *high, uint64_t *low);

/* The vendored header's XXH_VERSION_NUMBER (801 for 0.8.1). */
unsigned vendored_xxh_version(void);
#endif

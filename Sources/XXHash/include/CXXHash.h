#ifndef MEDIACACHE_APPLE_CXXHASH_H
#define MEDIACACHE_APPLE_CXXHASH_H
/* The module CXXHash on Apple platforms: xxHash's own C code, compiled by
 * the package Jaesung-Jung/XXHashKit (its C target libxxhash, from
 * Cyan4973/xxHash; see MediaStore.docc/ApplePlatforms.md), under the
 * same `mediacache_` functions that Sources/CXXHash/shim.h declares over
 * the system's libxxhash on Linux. MediaStore hashes through these (here
 * the plain functions: arm64 builds use NEON without dispatching). */
#include <xxhash.h>

static inline XXH64_hash_t mediacache_XXH3_64bits(const void *input, size_t length) {
    return XXH3_64bits(input, length);
}

static inline XXH64_hash_t mediacache_XXH3_64bits_withSeed(const void *input, size_t length, XXH64_hash_t seed) {
    return XXH3_64bits_withSeed(input, length, seed);
}

static inline XXH128_hash_t mediacache_XXH3_128bits_withSeed(const void *input, size_t length, XXH64_hash_t seed) {
    return XXH3_128bits_withSeed(input, length, seed);
}

static inline XXH_errorcode mediacache_XXH3_128bits_update(XXH3_state_t *state, const void *input, size_t length) {
    return XXH3_128bits_update(state, input, length);
}

/* Whether the functions above dispatch (tests). */
static inline int mediacache_XXH3_dispatches(void) { return 0; }
#endif

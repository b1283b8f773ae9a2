#ifndef MEDIACACHE_VENDORED_CXXHASH_H
#define MEDIACACHE_VENDORED_CXXHASH_H
/* The module CXXHash on Apple platforms: xxHash 0.8.1, vendored verbatim
 * in xxhash.h beside this file (BSD 2-Clause; see README "Using it on
 * Apple platforms"). On Linux, Sources/CXXHash maps the system's
 * libxxhash instead; both expose the same declarations, and the same
 * `mediacache_` functions MediaStore hashes through (here the plain ones:
 * arm64 builds use NEON without dispatching). */
#include "xxhash.h"

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

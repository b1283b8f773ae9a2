#ifndef MEDIACACHE_CXXHASH_SHIM_H
#define MEDIACACHE_CXXHASH_SHIM_H
/* The module CXXHash on Linux: the system's libxxhash. On x86-64,
 * Debian's libxxhash also exports the `_dispatch` variants of XXH3, which
 * choose SSE2, AVX2 or AVX-512 for the running CPU (the plain functions
 * are compiled for the x86-64 baseline, SSE2). MediaStore hashes through
 * the `mediacache_` functions below, which take the dispatching variants
 * where they exist: same results, bit for bit (XXH3 does not depend on the
 * vector width), up to twice the speed. Sources/XXHash/include/CXXHash.h
 * declares the same functions on Apple platforms. */
#include <xxhash.h>

#if defined(__x86_64__) && __has_include(<xxh_x86dispatch.h>)
#define XXH_DISPATCH_DISABLE_REPLACE 1
#include <xxh_x86dispatch.h>
#define MEDIACACHE_XXH3_DISPATCH 1
#else
#define MEDIACACHE_XXH3_DISPATCH 0
#endif

static inline XXH64_hash_t mediacache_XXH3_64bits(const void *input, size_t length) {
#if MEDIACACHE_XXH3_DISPATCH
    return XXH3_64bits_dispatch(input, length);
#else
    return XXH3_64bits(input, length);
#endif
}

static inline XXH64_hash_t mediacache_XXH3_64bits_withSeed(const void *input, size_t length, XXH64_hash_t seed) {
#if MEDIACACHE_XXH3_DISPATCH
    return XXH3_64bits_withSeed_dispatch(input, length, seed);
#else
    return XXH3_64bits_withSeed(input, length, seed);
#endif
}

static inline XXH128_hash_t mediacache_XXH3_128bits_withSeed(const void *input, size_t length, XXH64_hash_t seed) {
#if MEDIACACHE_XXH3_DISPATCH
    return XXH3_128bits_withSeed_dispatch(input, length, seed);
#else
    return XXH3_128bits_withSeed(input, length, seed);
#endif
}

static inline XXH_errorcode mediacache_XXH3_128bits_update(XXH3_state_t *state, const void *input, size_t length) {
#if MEDIACACHE_XXH3_DISPATCH
    return XXH3_128bits_update_dispatch(state, input, length);
#else
    return XXH3_128bits_update(state, input, length);
#endif
}

/* Whether the functions above dispatch (tests). */
static inline int mediacache_XXH3_dispatches(void) { return MEDIACACHE_XXH3_DISPATCH; }
#endif

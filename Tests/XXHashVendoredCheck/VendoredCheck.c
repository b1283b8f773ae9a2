/* XXH_INLINE_ALL makes every xxHash function static to this file, so the
 * vendored copy cannot clash with the system libxxhash linked beside it. */
#define XXH_INLINE_ALL
#include "../../Sources/XXHash/include/xxhash.h"
#include "include/XXHashVendoredCheck.h"

void vendored_xxh3_128(const void *bytes, size_t length, uint64_t seed, uint64_t *high, uint64_t *low) {
    XXH128_hash_t hash = XXH3_128bits_withSeed(bytes, length, seed);
    *high = hash.high64;
    *low = hash.low64;
}

int vendored_xxh3_128_streaming(const void *bytes, size_t length, size_t piece, uint64_t *high, uint64_t *low) {
    XXH3_state_t *state = XXH3_createState();
    if (state == NULL) return -1;
    XXH3_128bits_reset(state);
    const unsigned char *cursor = (const unsigned char *)bytes;
    size_t left = length;
    if (piece == 0) piece = length;
    while (left > 0) {
        size_t take = left < piece ? left : piece;
        XXH3_128bits_update(state, cursor, take);
        cursor += take;
        left -= take;
    }
    XXH128_hash_t hash = XXH3_128bits_digest(state);
    XXH3_freeState(state);
    *high = hash.high64;
    *low = hash.low64;
    return 0;
}

unsigned vendored_xxh_version(void) { return XXH_VERSION_NUMBER; }

/* Compiles the vendored xxHash 0.8.1 (include/xxhash.h), as upstream's
 * own xxhash.c does. */
#define XXH_STATIC_LINKING_ONLY
#define XXH_IMPLEMENTATION
#include "include/xxhash.h"

#ifndef MEDIACACHE_VENDORED_CXXHASH_H
#define MEDIACACHE_VENDORED_CXXHASH_H
/* The module CXXHash on Apple platforms: xxHash 0.8.1, vendored verbatim
 * in xxhash.h beside this file (BSD 2-Clause; see README "Using it on
 * Apple platforms"). On Linux, Sources/CXXHash maps the system's
 * libxxhash instead; both expose the same declarations. */
#include "xxhash.h"
#endif

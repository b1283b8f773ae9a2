#ifndef MEDIACACHE_CXXHASH_SHIM_H
#define MEDIACACHE_CXXHASH_SHIM_H
#include <xxhash.h>
#endif

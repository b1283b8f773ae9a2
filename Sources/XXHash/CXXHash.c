/* The shims are static inline in include/CXXHash.h; a C target needs one
 * source file. Compiling the header here also checks that it finds
 * xxhash.h through the XXHash product. */
#include "CXXHash.h"

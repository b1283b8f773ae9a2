#ifndef MEDIACACHE_CLMDB_SHIM_H
#define MEDIACACHE_CLMDB_SHIM_H
#include <lmdb.h>
#endif

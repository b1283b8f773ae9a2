#ifndef MEDIACACHE_CZSTD_SHIM_H
#define MEDIACACHE_CZSTD_SHIM_H
#include <zstd.h>
#endif

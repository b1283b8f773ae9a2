#ifndef MEDIACACHE_CCRYPTO_SHIM_H
#define MEDIACACHE_CCRYPTO_SHIM_H
// OpenSSL 3 libcrypto: EVP AEAD (AES-256-GCM), EVP_KDF (HKDF), EVP_MAC (HMAC), RAND.
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#endif

/// The primitives encryption at rest stands on, taken from the platform's
/// library: CryptoKit on Apple platforms (`CryptoBackend+CryptoKit.swift`),
/// OpenSSL's libcrypto elsewhere (`CryptoBackend+OpenSSL.swift`, the
/// system library Debian's libssl-dev provides, through pkg-config). No
/// primitive is written here; the layer above composes them. The one
/// composition in the backends is `HMACSHA256.expand(info:)`: HKDF-Expand
/// to 32 bytes is a single HMAC (RFC 5869 §2.3), which the OpenSSL
/// backend computes with a keyed context it keeps, checked against
/// libcrypto's own HKDF and RFC 5869 by the known-answer tests.
///
/// **Why AES-256-GCM, HKDF-SHA256 and HMAC-SHA256.** A store written on
/// one platform must read on another (`cachetool` on Linux reads an
/// app's store), so both backends must compute identical bytes with the
/// same algorithms. CryptoKit has `AES.GCM`, `ChaChaPoly`, `HKDF<SHA256>`
/// and `HMAC<SHA256>`; libcrypto 3.0 has all of them (EVP AEAD, HKDF,
/// HMAC). Between the two AEADs, AES-256-GCM: every device that runs the
/// app has AES instructions (Apple silicon, and here AES-NI with PCLMUL),
/// and on this machine `openssl speed -evp` sealed 16 KiB blocks at
/// 2.28 GB/s against 1.80 GB/s for ChaCha20-Poly1305. GCM's 96-bit nonce
/// is used deterministically, which is safe here because every key seals
/// one plaintext only (``StoreEncryption`` says why).
///
/// **Why libcrypto and not libsodium on Linux.** Debian's libsodium 1.0.18
/// has no HKDF (only its own BLAKE2b `crypto_kdf`, which CryptoKit lacks,
/// so both sides would not compute the same keys) and offers AES-256-GCM
/// only on CPUs with AES-NI (`crypto_aead_aes256gcm_is_available()` is
/// false elsewhere, such as on an ARM server without the extension).
/// libcrypto has every algorithm CryptoKit has, on every CPU, and is on
/// every Debian system already.
package enum CryptoPrimitives {
    /// Bytes of an AES-256 key, an HMAC-SHA256 output and an HKDF subkey.
    package static let keySize = 32
    /// Bytes of an AES-GCM nonce (the 96-bit size GCM is defined for).
    package static let nonceSize = 12
    /// Bytes of an AES-GCM tag (the full 128 bits).
    package static let tagSize = 16
}

/// Whether two byte sequences are equal, in time that depends only on
/// their lengths.
func constantTimeEquals(_ a: some Collection<UInt8>, _ b: some Collection<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    var difference: UInt8 = 0
    for (x, y) in zip(a, b) { difference |= x ^ y }
    return difference == 0
}

/// Calls `body` with a pointer to `buffer`'s bytes, never nil: C functions
/// given a null pointer for an empty input may refuse it.
func withNonNullBase<R>(
    _ buffer: UnsafeRawBufferPointer, _ body: (UnsafePointer<UInt8>) throws -> R
) rethrows -> R {
    if let base = buffer.baseAddress {
        return try body(base.assumingMemoryBound(to: UInt8.self))
    }
    var zero: UInt8 = 0
    return try withUnsafePointer(to: &zero) { try body($0) }
}

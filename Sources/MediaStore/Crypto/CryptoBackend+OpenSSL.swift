#if !canImport(CryptoKit)
    internal import CCrypto
    import Foundation
    import MediaSupport

    extension CryptoPrimitives {
        /// The library and version in use, for reports.
        package static var libraryName: String {
            String(cString: OpenSSL_version(OPENSSL_VERSION))
        }

        /// HMAC-SHA256 of `message` under `key` (32 bytes).
        package static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
            guard let context = EVP_MAC_CTX_new(LibCrypto.hmac) else {
                preconditionFailure("libcrypto could not make an HMAC context")
            }
            defer { EVP_MAC_CTX_free(context) }
            var output = [UInt8](repeating: 0, count: keySize)
            var length = 0
            let ok = withNonNullBase(key) { keyBase in
                withNonNullBase(message) { messageBase in
                    let parameters = [
                        OSSL_PARAM_construct_utf8_string(LibCrypto.digestName, LibCrypto.sha256Name, 0),
                        OSSL_PARAM_construct_end(),
                    ]
                    return output.withUnsafeMutableBufferPointer { out in
                        EVP_MAC_init(context, keyBase, key.count, parameters) == 1
                            && EVP_MAC_update(context, messageBase, message.count) == 1
                            && EVP_MAC_final(context, out.baseAddress, &length, keySize) == 1
                    }
                }
            }
            precondition(ok && length == keySize, "libcrypto's HMAC-SHA256 failed")
            return output
        }

        /// HKDF-SHA256 (RFC 5869), extract then expand.
        package static func hkdfSHA256(
            inputKeyMaterial: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
            outputByteCount: Int
        ) -> [UInt8] {
            hkdf(
                mode: EVP_KDF_HKDF_MODE_EXTRACT_AND_EXPAND, key: inputKeyMaterial, salt: salt, info: info,
                outputByteCount: outputByteCount)
        }

        /// HKDF-Expand with SHA-256 (RFC 5869 §2.3), for a key that is
        /// already uniformly random (at least 32 bytes).
        package static func hkdfExpandSHA256(
            pseudoRandomKey: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer, outputByteCount: Int
        ) -> [UInt8] {
            precondition(pseudoRandomKey.count >= keySize, "HKDF-Expand needs a pseudorandom key of 32 bytes or more")
            return hkdf(
                mode: EVP_KDF_HKDF_MODE_EXPAND_ONLY, key: pseudoRandomKey,
                salt: UnsafeRawBufferPointer(start: nil, count: 0),
                info: info, outputByteCount: outputByteCount)
        }

        private static func hkdf(
            mode: Int32, key: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
            outputByteCount: Int
        ) -> [UInt8] {
            precondition(outputByteCount > 0 && outputByteCount <= 255 * keySize, "HKDF output length out of range")
            precondition(info.count <= 1024, "HKDF info too long")
            guard let context = EVP_KDF_CTX_new(LibCrypto.hkdf) else {
                preconditionFailure("libcrypto could not make an HKDF context")
            }
            defer { EVP_KDF_CTX_free(context) }
            var output = [UInt8](repeating: 0, count: outputByteCount)
            var mode = mode
            let ok = withNonNullBase(key) { keyBase in
                withNonNullBase(salt) { saltBase in
                    withNonNullBase(info) { infoBase in
                        withUnsafeMutablePointer(to: &mode) { modePointer in
                            var parameters = [
                                OSSL_PARAM_construct_utf8_string(LibCrypto.digestName, LibCrypto.sha256Name, 0),
                                OSSL_PARAM_construct_int(LibCrypto.modeName, modePointer),
                                OSSL_PARAM_construct_octet_string(
                                    LibCrypto.keyName, UnsafeMutableRawPointer(mutating: keyBase), key.count),
                                OSSL_PARAM_construct_octet_string(
                                    LibCrypto.infoName, UnsafeMutableRawPointer(mutating: infoBase), info.count),
                            ]
                            if !salt.isEmpty {
                                parameters.append(
                                    OSSL_PARAM_construct_octet_string(
                                        LibCrypto.saltName, UnsafeMutableRawPointer(mutating: saltBase), salt.count))
                            }
                            parameters.append(OSSL_PARAM_construct_end())
                            return output.withUnsafeMutableBufferPointer { out in
                                EVP_KDF_derive(context, out.baseAddress, outputByteCount, parameters) == 1
                            }
                        }
                    }
                }
            }
            precondition(ok, "libcrypto's HKDF-SHA256 failed")
            return output
        }

        /// `count` bytes from the library's cryptographically secure
        /// generator.
        package static func randomBytes(_ count: Int) -> [UInt8] {
            precondition(count > 0 && count <= 1 << 20, "random byte count out of range")
            var output = [UInt8](repeating: 0, count: count)
            let ok = output.withUnsafeMutableBufferPointer { RAND_bytes($0.baseAddress, Int32(count)) }
            precondition(ok == 1, "libcrypto's RAND_bytes failed")
            return output
        }
    }

    /// The algorithms, fetched from libcrypto's default provider once per
    /// process (fetching on every use cost more than sealing a 16 KiB
    /// block: 11 µs for an HKDF through `EVP_PKEY_CTX_new_id` against
    /// 2.8 µs with the fetched `EVP_KDF`), and the parameter names as C
    /// strings that live as long as the process. Fetched algorithms are
    /// immutable and may be shared between threads (OpenSSL's
    /// crypto(7), "Fetching algorithms"); nothing here is ever changed.
    private enum LibCrypto {
        nonisolated(unsafe) static let hmac: OpaquePointer = fetched(EVP_MAC_fetch(nil, "HMAC", nil), "HMAC")
        nonisolated(unsafe) static let hkdf: OpaquePointer = fetched(EVP_KDF_fetch(nil, "HKDF", nil), "HKDF")
        nonisolated(unsafe) static let aes256GCM: OpaquePointer = fetched(
            EVP_CIPHER_fetch(nil, "AES-256-GCM", nil), "AES-256-GCM")
        nonisolated(unsafe) static let digestName = cString("digest")
        nonisolated(unsafe) static let sha256Name = cString("SHA256")
        nonisolated(unsafe) static let modeName = cString("mode")
        nonisolated(unsafe) static let keyName = cString("key")
        nonisolated(unsafe) static let saltName = cString("salt")
        nonisolated(unsafe) static let infoName = cString("info")

        private static func fetched(_ algorithm: OpaquePointer?, _ name: String) -> OpaquePointer {
            guard let algorithm else { preconditionFailure("libcrypto has no \(name)") }
            return algorithm
        }

        private static func cString(_ text: String) -> UnsafeMutablePointer<CChar> {
            guard let copy = strdup(text) else { preconditionFailure("out of memory") }
            return copy
        }
    }

    /// HMAC-SHA256 under one key that is used again and again (a store's
    /// subkeys), and HKDF-Expand of that key to 32 bytes. Keeps keyed
    /// libcrypto contexts between calls: making one (fetching the digest,
    /// hashing the key's pads) costs about twice the MAC of a short message
    /// it is then used for; a kept one is reset to the keyed state and
    /// used again. Safe to share between threads: each call takes a
    /// context from a pool of at most ``pooledContexts`` (or makes one)
    /// and gives it back.
    package final class HMACSHA256: Sendable {
        /// Contexts kept at most (one per thread working at once).
        static let pooledContexts = 4
        private let key: [UInt8]
        private let pool: Locked<Pool>

        // Unchecked: the contexts are only touched by the thread that
        // took one out of the pool, or under the pool's lock.
        private struct Pool: @unchecked Sendable {
            var contexts: [OpaquePointer] = []
        }

        package init(key: [UInt8]) {
            precondition(key.count == CryptoPrimitives.keySize, "a store's MAC keys are 32 bytes")
            self.key = key
            pool = Locked(Pool())
        }

        deinit {
            // EVP_MAC_CTX_free overwrites the keyed state before freeing it.
            pool.withLock { pool in
                for context in pool.contexts { EVP_MAC_CTX_free(context) }
                pool.contexts.removeAll()
            }
        }

        /// HMAC-SHA256 of `message`.
        package func authenticationCode(_ message: UnsafeRawBufferPointer) -> [UInt8] {
            mac(message, suffix: nil)
        }

        /// HKDF-Expand (RFC 5869 §2.3) of the key, as the pseudorandom key,
        /// with `info`, to 32 bytes. Its output is the first block alone,
        /// T(1) = HMAC(key, info ‖ 0x01): the same bytes as
        /// ``CryptoPrimitives/hkdfExpandSHA256(pseudoRandomKey:info:outputByteCount:)``
        /// (libcrypto's HKDF) gives for 32 bytes, which the known-answer
        /// tests check; libcrypto 3.0 cannot copy an HKDF context, and
        /// setting one up costs more than the MAC.
        package func expand(info: UnsafeRawBufferPointer) -> [UInt8] {
            var counter: UInt8 = 1
            return withUnsafeBytes(of: &counter) { mac(info, suffix: $0) }
        }

        private func mac(_ message: UnsafeRawBufferPointer, suffix: UnsafeRawBufferPointer?) -> [UInt8] {
            let context = pool.withLock { $0.contexts.popLast() } ?? keyedContext()
            var output = [UInt8](repeating: 0, count: CryptoPrimitives.keySize)
            var length = 0
            // A null key resets the context to its keyed state (EVP_MAC_init(3)).
            let ok = withNonNullBase(message) { messageBase in
                output.withUnsafeMutableBufferPointer { out in
                    EVP_MAC_init(context, nil, 0, nil) == 1
                        && EVP_MAC_update(context, messageBase, message.count) == 1
                        && (suffix.map { suffix in
                            withNonNullBase(suffix) { EVP_MAC_update(context, $0, suffix.count) == 1 }
                        } ?? true)
                        && EVP_MAC_final(context, out.baseAddress, &length, CryptoPrimitives.keySize) == 1
                }
            }
            precondition(ok && length == CryptoPrimitives.keySize, "libcrypto's HMAC-SHA256 failed")
            let kept = pool.withLock { pool in
                guard pool.contexts.count < Self.pooledContexts else { return false }
                pool.contexts.append(context)
                return true
            }
            if !kept { EVP_MAC_CTX_free(context) }
            return output
        }

        private func keyedContext() -> OpaquePointer {
            guard let context = EVP_MAC_CTX_new(LibCrypto.hmac) else {
                preconditionFailure("libcrypto could not make an HMAC context")
            }
            let parameters = [
                OSSL_PARAM_construct_utf8_string(LibCrypto.digestName, LibCrypto.sha256Name, 0),
                OSSL_PARAM_construct_end(),
            ]
            let ok = key.withUnsafeBufferPointer { EVP_MAC_init(context, $0.baseAddress, key.count, parameters) == 1 }
            precondition(ok, "libcrypto could not key HMAC-SHA256")
            return context
        }
    }

    /// AES-256-GCM under one key, with 96-bit nonces and 128-bit tags.
    /// Keeps libcrypto's contexts (the expanded key) between calls, so
    /// sealing or opening the blocks of one chunk sets the key up once.
    /// Not for concurrent use: one per chunk operation.
    package final class AES256GCM {
        private let key: [UInt8]
        private var encryptor: OpaquePointer?
        private var decryptor: OpaquePointer?

        package init(key: [UInt8]) {
            precondition(key.count == CryptoPrimitives.keySize, "AES-256 needs a 32-byte key")
            self.key = key
        }

        deinit {
            EVP_CIPHER_CTX_free(encryptor)
            EVP_CIPHER_CTX_free(decryptor)
        }

        /// A context for `encrypt` (1) or decrypt (0) with the key set.
        private func context(encrypting: Bool) -> OpaquePointer {
            if let existing = encrypting ? encryptor : decryptor { return existing }
            guard let made = EVP_CIPHER_CTX_new() else {
                preconditionFailure("libcrypto could not make a cipher context")
            }
            let ok = key.withUnsafeBufferPointer {
                EVP_CipherInit_ex(made, LibCrypto.aes256GCM, nil, $0.baseAddress, nil, encrypting ? 1 : 0)
            }
            precondition(ok == 1, "libcrypto could not set up AES-256-GCM")
            if encrypting { encryptor = made } else { decryptor = made }
            return made
        }

        /// Feeds `input` (AAD when `output` is nil) in pieces an `Int32` can count.
        private static func update(
            _ context: OpaquePointer, _ input: UnsafeRawBufferPointer, output: UnsafeMutableRawBufferPointer?
        ) -> Bool {
            var offset = 0
            while offset < input.count {
                let piece = min(input.count - offset, 1 << 30)
                var written: Int32 = 0
                let source = input.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
                let destination = output.map {
                    $0.baseAddress!.advanced(by: offset).assumingMemoryBound(to: UInt8.self)
                }
                guard EVP_CipherUpdate(context, destination, &written, source, Int32(piece)) == 1,
                    output == nil || Int(written) == piece
                else { return false }
                offset += piece
            }
            return true
        }

        /// Finishes a GCM operation (GCM writes no bytes there; `scratch`
        /// is where it may, without a heap allocation per block).
        private static func final(
            _ context: OpaquePointer, _ scratch: inout (UInt64, UInt64), _ length: inout Int32
        ) -> Bool {
            withUnsafeMutableBytes(of: &scratch) {
                EVP_CipherFinal_ex(context, $0.baseAddress!.assumingMemoryBound(to: UInt8.self), &length) == 1
            }
        }

        /// Seals `plaintext` into `ciphertext` (the same length) and `tag`
        /// (16 bytes).
        package func seal(
            _ plaintext: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating aad: UnsafeRawBufferPointer,
            ciphertext: UnsafeMutableRawBufferPointer, tag: UnsafeMutableRawBufferPointer
        ) {
            precondition(nonce.count == CryptoPrimitives.nonceSize && tag.count == CryptoPrimitives.tagSize)
            precondition(ciphertext.count == plaintext.count)
            let context = context(encrypting: true)
            var finalLength: Int32 = 0
            var scratch: (UInt64, UInt64) = (0, 0)
            let ok =
                EVP_CipherInit_ex(context, nil, nil, nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), 1)
                == 1
                && Self.update(context, aad, output: nil)
                && Self.update(context, plaintext, output: ciphertext)
                && Self.final(context, &scratch, &finalLength) && finalLength == 0
                && EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, Int32(CryptoPrimitives.tagSize), tag.baseAddress)
                    == 1
            precondition(ok, "libcrypto's AES-256-GCM seal failed")
        }

        /// Opens `ciphertext` with `tag` into `plaintext` (the same
        /// length). False, with `plaintext` zeroed, when authentication
        /// fails: unauthenticated bytes are never left behind.
        package func open(
            _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating aad: UnsafeRawBufferPointer, plaintext: UnsafeMutableRawBufferPointer
        ) -> Bool {
            precondition(nonce.count == CryptoPrimitives.nonceSize && plaintext.count == ciphertext.count)
            guard tag.count == CryptoPrimitives.tagSize else { return false }
            let context = context(encrypting: false)
            var finalLength: Int32 = 0
            var scratch: (UInt64, UInt64) = (0, 0)
            let ok =
                EVP_CipherInit_ex(context, nil, nil, nil, nonce.baseAddress!.assumingMemoryBound(to: UInt8.self), 0)
                == 1
                && Self.update(context, aad, output: nil)
                && Self.update(context, ciphertext, output: plaintext)
                && EVP_CIPHER_CTX_ctrl(
                    context, EVP_CTRL_GCM_SET_TAG, Int32(CryptoPrimitives.tagSize),
                    UnsafeMutableRawPointer(mutating: tag.baseAddress)
                ) == 1
                && Self.final(context, &scratch, &finalLength) && finalLength == 0
            if !ok, let base = plaintext.baseAddress {
                base.initializeMemory(as: UInt8.self, repeating: 0, count: plaintext.count)
            }
            return ok
        }
    }
#endif

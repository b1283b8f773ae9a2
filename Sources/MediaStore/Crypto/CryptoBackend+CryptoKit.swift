#if canImport(CryptoKit)
    internal import CryptoKit
    import Foundation

    extension CryptoPrimitives {
        /// The library in use, for reports.
        package static var libraryName: String { "CryptoKit" }

        /// HMAC-SHA256 of `message` under `key` (32 bytes).
        package static func hmacSHA256(key: UnsafeRawBufferPointer, message: UnsafeRawBufferPointer) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: key)))
        }

        /// HKDF-SHA256 (RFC 5869), extract then expand.
        package static func hkdfSHA256(
            inputKeyMaterial: UnsafeRawBufferPointer, salt: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer,
            outputByteCount: Int
        ) -> [UInt8] {
            precondition(outputByteCount > 0 && outputByteCount <= 255 * keySize, "HKDF output length out of range")
            let derived = HKDF<SHA256>.deriveKey(
                inputKeyMaterial: SymmetricKey(data: inputKeyMaterial), salt: salt, info: info,
                outputByteCount: outputByteCount)
            return derived.withUnsafeBytes { Array($0) }
        }

        /// HKDF-Expand with SHA-256 (RFC 5869 §2.3), for a key that is
        /// already uniformly random (at least 32 bytes).
        package static func hkdfExpandSHA256(
            pseudoRandomKey: UnsafeRawBufferPointer, info: UnsafeRawBufferPointer, outputByteCount: Int
        ) -> [UInt8] {
            precondition(pseudoRandomKey.count >= keySize, "HKDF-Expand needs a pseudorandom key of 32 bytes or more")
            precondition(outputByteCount > 0 && outputByteCount <= 255 * keySize, "HKDF output length out of range")
            let derived = HKDF<SHA256>.expand(
                pseudoRandomKey: pseudoRandomKey, info: info, outputByteCount: outputByteCount)
            return derived.withUnsafeBytes { Array($0) }
        }

        /// `count` bytes from the system's cryptographically secure
        /// generator (a random `SymmetricKey` of that size).
        package static func randomBytes(_ count: Int) -> [UInt8] {
            precondition(count > 0 && count <= 1 << 20, "random byte count out of range")
            return SymmetricKey(size: SymmetricKeySize(bitCount: count * 8)).withUnsafeBytes { Array($0) }
        }
    }

    /// HMAC-SHA256 under one key that is used again and again (a store's
    /// subkeys), and HKDF-Expand of that key to 32 bytes. Safe to share
    /// between threads.
    package final class HMACSHA256: Sendable {
        private let key: SymmetricKey

        package init(key: [UInt8]) {
            precondition(key.count == CryptoPrimitives.keySize, "a store's MAC keys are 32 bytes")
            self.key = SymmetricKey(data: key)
        }

        /// HMAC-SHA256 of `message`.
        package func authenticationCode(_ message: UnsafeRawBufferPointer) -> [UInt8] {
            Array(HMAC<SHA256>.authenticationCode(for: message, using: key))
        }

        /// HKDF-Expand (RFC 5869 §2.3) of the key, as the pseudorandom key,
        /// with `info`, to 32 bytes.
        package func expand(info: UnsafeRawBufferPointer) -> [UInt8] {
            HKDF<SHA256>.expand(pseudoRandomKey: key, info: info, outputByteCount: CryptoPrimitives.keySize)
                .withUnsafeBytes { Array($0) }
        }
    }

    /// AES-256-GCM under one key, with 96-bit nonces and 128-bit tags.
    /// Not for concurrent use: one per chunk operation.
    package final class AES256GCM {
        private let key: SymmetricKey

        package init(key: [UInt8]) {
            precondition(key.count == CryptoPrimitives.keySize, "AES-256 needs a 32-byte key")
            self.key = SymmetricKey(data: key)
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
            do {
                let box = try AES.GCM.seal(
                    plaintext, using: key, nonce: AES.GCM.Nonce(data: nonce), authenticating: aad)
                precondition(box.ciphertext.count == plaintext.count && box.tag.count == CryptoPrimitives.tagSize)
                _ = box.ciphertext.copyBytes(to: ciphertext)
                _ = box.tag.copyBytes(to: tag)
            } catch {
                preconditionFailure("CryptoKit's AES-GCM seal failed: \(error)")
            }
        }

        /// Opens `ciphertext` with `tag` into `plaintext` (the same
        /// length). False, with `plaintext` untouched, when
        /// authentication fails.
        package func open(
            _ ciphertext: UnsafeRawBufferPointer, tag: UnsafeRawBufferPointer, nonce: UnsafeRawBufferPointer,
            authenticating aad: UnsafeRawBufferPointer, plaintext: UnsafeMutableRawBufferPointer
        ) -> Bool {
            precondition(nonce.count == CryptoPrimitives.nonceSize && plaintext.count == ciphertext.count)
            guard tag.count == CryptoPrimitives.tagSize,
                let box = try? AES.GCM.SealedBox(nonce: AES.GCM.Nonce(data: nonce), ciphertext: ciphertext, tag: tag),
                let opened = try? AES.GCM.open(box, using: key, authenticating: aad),
                opened.count == plaintext.count
            else { return false }
            _ = opened.copyBytes(to: plaintext)
            return true
        }
    }
#endif

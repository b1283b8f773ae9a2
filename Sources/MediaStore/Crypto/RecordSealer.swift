import Foundation

/// Seals records and small (inline or packed) values: things whose bytes
/// change while their name stays, so they cannot be sealed convergently.
///
/// Each seal draws a fresh 32-byte random salt and seals under a key for
/// that message alone: HKDF-Expand(record-sealing subkey,
/// `"MediaCache record key v1"` ‖ salt, 32 bytes), AES-256-GCM with an
/// all-zero nonce (each key seals one message) and the associated data
/// `"MediaCache record v1"` ‖ context. The context is what the sealed
/// bytes belong to (such as the keyed index key of a record), so bytes
/// copied under another name fail to open.
///
/// Sealed bytes: salt (32) ‖ ciphertext (the plaintext's length) ‖ tag
/// (16). No nonce-reuse risk needs counting: two seals share a key only if
/// their salts are equal, chance at most n²/2²⁵⁷ over *n* seals (against
/// n²/2⁹⁷ for random 96-bit nonces under one key, which caps a key at
/// about 2³² messages).
package struct RecordSealer: Sendable {
    /// Bytes of the random salt.
    package static let saltSize = 32
    /// Bytes sealing adds to a plaintext.
    package static let overhead = saltSize + CryptoPrimitives.tagSize
    /// The largest plaintext it seals.
    package static let maximumPlaintextCount = 1 << 30

    private static let keyInfoLabel = Array("MediaCache record key v1".utf8)
    private static let aadLabel = Array("MediaCache record v1".utf8)
    private static let nonce = [UInt8](repeating: 0, count: CryptoPrimitives.nonceSize)

    /// The record-sealing subkey, which message keys are expanded from.
    private let subkey: HMACSHA256

    init(subkey: [UInt8]) {
        self.subkey = HMACSHA256(key: subkey)
    }

    /// `plaintext` sealed for `context`, under a fresh salt.
    package func seal(_ plaintext: some ContiguousBytes, context: some ContiguousBytes) -> [UInt8] {
        seal(plaintext, context: context, salt: CryptoPrimitives.randomBytes(Self.saltSize))
    }

    /// `plaintext` sealed for `context` under `salt`: the deterministic
    /// core, for known-answer tests; the store always uses a fresh salt.
    func seal(_ plaintext: some ContiguousBytes, context: some ContiguousBytes, salt: [UInt8]) -> [UInt8] {
        precondition(salt.count == Self.saltSize)
        let cipher = AES256GCM(key: messageKey(salt: salt))
        let aad = context.withUnsafeBytes { Self.aadLabel + $0 }
        return plaintext.withUnsafeBytes { plain in
            precondition(plain.count <= Self.maximumPlaintextCount, "record too large to seal")
            var sealed = salt + [UInt8](repeating: 0, count: plain.count + CryptoPrimitives.tagSize)
            sealed.withUnsafeMutableBytes { out in
                Self.nonce.withUnsafeBytes { nonce in
                    aad.withUnsafeBytes { aadBytes in
                        cipher.seal(
                            plain, nonce: nonce, authenticating: aadBytes,
                            ciphertext: UnsafeMutableRawBufferPointer(
                                rebasing: out[Self.saltSize..<Self.saltSize + plain.count]),
                            tag: UnsafeMutableRawBufferPointer(rebasing: out[(Self.saltSize + plain.count)...]))
                    }
                }
            }
            return sealed
        }
    }

    /// The plaintext of `sealed`, if it was sealed for `context` with this
    /// key. Throws ``SealedDataError/malformedLength(_:)`` when it is
    /// shorter than ``overhead``, ``SealedDataError/authenticationFailed(block:)``
    /// (block 0) when anything in it, or the context, differs.
    package func open(_ sealed: some ContiguousBytes, context: some ContiguousBytes) throws -> [UInt8] {
        let aad = context.withUnsafeBytes { Self.aadLabel + $0 }
        return try sealed.withUnsafeBytes { sealedBytes in
            guard sealedBytes.count >= Self.overhead, sealedBytes.count - Self.overhead <= Self.maximumPlaintextCount
            else { throw SealedDataError.malformedLength(sealedBytes.count) }
            let count = sealedBytes.count - Self.overhead
            let cipher = AES256GCM(key: messageKey(salt: Array(sealedBytes[..<Self.saltSize])))
            var plaintext = [UInt8](repeating: 0, count: count)
            let authentic = plaintext.withUnsafeMutableBytes { out in
                Self.nonce.withUnsafeBytes { nonce in
                    aad.withUnsafeBytes { aadBytes in
                        cipher.open(
                            UnsafeRawBufferPointer(rebasing: sealedBytes[Self.saltSize..<Self.saltSize + count]),
                            tag: UnsafeRawBufferPointer(rebasing: sealedBytes[(Self.saltSize + count)...]),
                            nonce: nonce, authenticating: aadBytes, plaintext: out)
                    }
                }
            }
            guard authentic else { throw SealedDataError.authenticationFailed(block: 0) }
            return plaintext
        }
    }

    private func messageKey(salt: [UInt8]) -> [UInt8] {
        (Self.keyInfoLabel + salt).withUnsafeBytes { subkey.expand(info: $0) }
    }
}

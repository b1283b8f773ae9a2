// A stand-in of the part of Apple's CryptoKit that MediaStore's CryptoKit
// backend uses, with CryptoKit's names and signatures (as Apple documents
// them), computing with the system's libcrypto. Only for
// Tests/CryptoKitCheck: it checks the backend's glue on Linux, not
// CryptoKit. Errors are one stand-in case; the backend never looks inside.
internal import CCrypto
import Foundation

public enum CryptoKitError: Error {
    case standInFailure(String)
}

public protocol HashFunction {
    /// The stand-in's libcrypto digest name.
    static var standInName: String { get }
}

public struct SHA256: HashFunction {
    public static var standInName: String { "SHA256" }
}

public struct SymmetricKeySize: Sendable {
    public let bitCount: Int
    public init(bitCount: Int) {
        precondition(bitCount > 0 && bitCount % 8 == 0)
        self.bitCount = bitCount
    }
}

public struct SymmetricKey: Sendable, ContiguousBytes {
    let bytes: [UInt8]

    public init<D: ContiguousBytes>(data: D) {
        bytes = data.withUnsafeBytes { Array($0) }
    }

    public init(size: SymmetricKeySize) {
        var random = [UInt8](repeating: 0, count: size.bitCount / 8)
        precondition(RAND_bytes(&random, Int32(random.count)) == 1)
        bytes = random
    }

    public var bitCount: Int { bytes.count * 8 }

    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

public struct HashedAuthenticationCode<H: HashFunction>: Sequence, ContiguousBytes {
    let bytes: [UInt8]
    public func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }
    public func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

public struct HMAC<H: HashFunction> {
    public static func authenticationCode<D: DataProtocol>(for data: D, using key: SymmetricKey)
        -> HashedAuthenticationCode<H>
    {
        // One byte more than used, so that no buffer is empty (nil).
        let message = Array(data) + [0]
        let keyBytes = key.bytes + [0]
        var output = [UInt8](repeating: 0, count: 64)
        var length: UInt32 = 0
        let result = CCrypto.HMAC(
            EVP_get_digestbyname(H.standInName), keyBytes, Int32(keyBytes.count - 1), message, message.count - 1,
            &output, &length)
        precondition(result != nil)
        return HashedAuthenticationCode(bytes: Array(output.prefix(Int(length))))
    }
}

public struct HKDF<H: HashFunction> {
    public static func deriveKey<Salt: DataProtocol, Info: DataProtocol>(
        inputKeyMaterial: SymmetricKey, salt: Salt, info: Info, outputByteCount: Int
    ) -> SymmetricKey {
        // RFC 5869 in libcrypto's terms: extract is HMAC(salt, IKM) (a
        // missing salt is HashLen zeros), then expand.
        let saltBytes = Array(salt)
        let prk = HMAC<H>.authenticationCode(
            for: inputKeyMaterial.bytes,
            using: SymmetricKey(data: saltBytes.isEmpty ? [UInt8](repeating: 0, count: 32) : saltBytes))
        return expand(pseudoRandomKey: prk.bytes, info: info, outputByteCount: outputByteCount)
    }

    public static func expand<PRK: ContiguousBytes, Info: DataProtocol>(
        pseudoRandomKey prk: PRK, info: Info?, outputByteCount: Int
    ) -> SymmetricKey {
        let key = SymmetricKey(data: prk)
        let infoBytes = info.map { Array($0) } ?? []
        var output: [UInt8] = []
        var previous: [UInt8] = []
        var counter: UInt8 = 1
        while output.count < outputByteCount {
            previous = Array(HMAC<H>.authenticationCode(for: previous + infoBytes + [counter], using: key))
            output += previous
            counter += 1
        }
        return SymmetricKey(data: Array(output.prefix(outputByteCount)))
    }
}

public enum AES {
    public enum GCM {
        public struct Nonce: Sendable {
            let bytes: [UInt8]
            public init<D: DataProtocol>(data: D) throws {
                guard data.count == 12 else { throw CryptoKitError.standInFailure("nonce size") }
                bytes = Array(data)
            }
        }

        public struct SealedBox: Sendable {
            public let nonce: Nonce
            public let ciphertext: Data
            public let tag: Data

            public init<C: DataProtocol, T: DataProtocol>(nonce: Nonce, ciphertext: C, tag: T) throws {
                guard tag.count == 16 else { throw CryptoKitError.standInFailure("tag size") }
                self.nonce = nonce
                self.ciphertext = Data(ciphertext)
                self.tag = Data(tag)
            }
        }

        public static func seal<Plaintext: DataProtocol, AuthenticatedData: DataProtocol>(
            _ message: Plaintext, using key: SymmetricKey, nonce: Nonce? = nil,
            authenticating authenticatedData: AuthenticatedData
        ) throws -> SealedBox {
            let nonce = try nonce ?? Nonce(data: SymmetricKey(size: SymmetricKeySize(bitCount: 96)).bytes)
            let (output, tag) = try crypt(
                Array(message), key: key, nonce: nonce, aad: Array(authenticatedData), tag: nil)
            return try SealedBox(nonce: nonce, ciphertext: output, tag: tag)
        }

        public static func open<AuthenticatedData: DataProtocol>(
            _ sealedBox: SealedBox, using key: SymmetricKey, authenticating authenticatedData: AuthenticatedData
        ) throws -> Data {
            let (output, _) = try crypt(
                Array(sealedBox.ciphertext), key: key, nonce: sealedBox.nonce, aad: Array(authenticatedData),
                tag: Array(sealedBox.tag))
            return Data(output)
        }

        /// Encrypts (tag nil) or decrypts and verifies `tag`.
        static func crypt(_ input: [UInt8], key: SymmetricKey, nonce: Nonce, aad: [UInt8], tag: [UInt8]?) throws
            -> ([UInt8], [UInt8])
        {
            guard key.bytes.count == 32, let context = EVP_CIPHER_CTX_new() else {
                throw CryptoKitError.standInFailure("key")
            }
            defer { EVP_CIPHER_CTX_free(context) }
            let encrypting: Int32 = tag == nil ? 1 : 0
            var output = [UInt8](repeating: 0, count: input.count)
            var outputTag = tag ?? [UInt8](repeating: 0, count: 16)
            var length: Int32 = 0
            var scratch = [UInt8](repeating: 0, count: 16)
            var ok = EVP_CipherInit_ex(context, EVP_aes_256_gcm(), nil, key.bytes, nonce.bytes, encrypting) == 1
            if ok, !aad.isEmpty { ok = EVP_CipherUpdate(context, nil, &length, aad, Int32(aad.count)) == 1 }
            if ok, !input.isEmpty { ok = EVP_CipherUpdate(context, &output, &length, input, Int32(input.count)) == 1 }
            if ok, tag != nil { ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_SET_TAG, 16, &outputTag) == 1 }
            if ok { ok = EVP_CipherFinal_ex(context, &scratch, &length) == 1 }
            if ok, tag == nil { ok = EVP_CIPHER_CTX_ctrl(context, EVP_CTRL_GCM_GET_TAG, 16, &outputTag) == 1 }
            guard ok else { throw CryptoKitError.standInFailure("authentication") }
            return (output, outputTag)
        }
    }
}

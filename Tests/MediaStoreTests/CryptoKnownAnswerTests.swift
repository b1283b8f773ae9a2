import Foundation
import Testing

@testable import MediaStore

/// Known answers from the algorithms' specifications, run against the
/// primitives the store uses (`CryptoPrimitives`, `AES256GCM`): OpenSSL's
/// libcrypto on Linux, CryptoKit on Apple platforms. A vector typed wrong
/// fails as loudly as a binding that computes something else.
@Suite struct CryptoKnownAnswerTests {
    static func hex(_ text: String) -> [UInt8] {
        let digits = Array(text.utf8)
        precondition(digits.count % 2 == 0)
        return stride(from: 0, to: digits.count, by: 2).map {
            UInt8(String(decoding: digits[$0..<$0 + 2], as: UTF8.self), radix: 16)!
        }
    }

    static func hex(_ bytes: [UInt8]) -> String {
        bytes.map { String(format: "%02x", $0) }.joined()
    }

    // MARK: AES-256-GCM: "The Galois/Counter Mode of Operation" test cases 13–16 (NIST SP 800-38D's reference vectors)

    struct GCMVector: Sendable, CustomStringConvertible {
        let name: String
        let key: String
        let nonce: String
        let plaintext: String
        let aad: String
        let ciphertext: String
        let tag: String
        var description: String { name }
    }

    static let gcmKey = "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308"
    static let gcmPlaintext =
        "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"
        + "1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
    static let gcmVectors = [
        GCMVector(
            name: "13: empty", key: String(repeating: "00", count: 32), nonce: String(repeating: "00", count: 12),
            plaintext: "", aad: "", ciphertext: "", tag: "530f8afbc74536b9a963b4f1c4cb738b"),
        GCMVector(
            name: "14: one zero block", key: String(repeating: "00", count: 32),
            nonce: String(repeating: "00", count: 12), plaintext: String(repeating: "00", count: 16), aad: "",
            ciphertext: "cea7403d4d606b6e074ec5d3baf39d18", tag: "d0d1c8a799996bf0265b98b5d48ab919"),
        GCMVector(
            name: "15: four blocks", key: gcmKey, nonce: "cafebabefacedbaddecaf888",
            plaintext: gcmPlaintext + "1aafd255", aad: "",
            ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
            tag: "b094dac5d93471bdec1a502270e3cc6c"),
        GCMVector(
            name: "16: partial block and AAD", key: gcmKey, nonce: "cafebabefacedbaddecaf888",
            plaintext: gcmPlaintext, aad: "feedfacedeadbeeffeedfacedeadbeefabaddad2",
            ciphertext: "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
                + "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
            tag: "76fc6ece0f4e1768cddf8853bb2d551b"),
    ]

    @Test(arguments: gcmVectors) func aesGCMSeals(_ vector: GCMVector) {
        let cipher = AES256GCM(key: Self.hex(vector.key))
        let plaintext = Self.hex(vector.plaintext)
        var ciphertext = [UInt8](repeating: 0, count: plaintext.count)
        var tag = [UInt8](repeating: 0, count: 16)
        Self.hex(vector.nonce).withUnsafeBytes { nonce in
            Self.hex(vector.aad).withUnsafeBytes { aad in
                plaintext.withUnsafeBytes { plain in
                    ciphertext.withUnsafeMutableBytes { out in
                        tag.withUnsafeMutableBytes {
                            cipher.seal(plain, nonce: nonce, authenticating: aad, ciphertext: out, tag: $0)
                        }
                    }
                }
            }
        }
        #expect(Self.hex(ciphertext) == vector.ciphertext)
        #expect(Self.hex(tag) == vector.tag)
    }

    /// Opens `ciphertext` with `tag`; nil when authentication fails.
    static func open(_ vector: GCMVector, ciphertext: [UInt8], tag: [UInt8], aad: [UInt8]) -> [UInt8]? {
        let cipher = AES256GCM(key: hex(vector.key))
        var plaintext = [UInt8](repeating: 0, count: ciphertext.count)
        let authentic = hex(vector.nonce).withUnsafeBytes { nonce in
            aad.withUnsafeBytes { aadBytes in
                ciphertext.withUnsafeBytes { sealed in
                    tag.withUnsafeBytes { tagBytes in
                        plaintext.withUnsafeMutableBytes {
                            cipher.open(sealed, tag: tagBytes, nonce: nonce, authenticating: aadBytes, plaintext: $0)
                        }
                    }
                }
            }
        }
        return authentic ? plaintext : nil
    }

    @Test(arguments: gcmVectors) func aesGCMOpensAndRefusesEveryFlippedBit(_ vector: GCMVector) {
        let ciphertext = Self.hex(vector.ciphertext)
        let tag = Self.hex(vector.tag)
        let aad = Self.hex(vector.aad)
        #expect(Self.open(vector, ciphertext: ciphertext, tag: tag, aad: aad) == Self.hex(vector.plaintext))
        for bit in 0..<ciphertext.count * 8 {
            var flipped = ciphertext
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(Self.open(vector, ciphertext: flipped, tag: tag, aad: aad) == nil, "ciphertext bit \(bit)")
        }
        for bit in 0..<tag.count * 8 {
            var flipped = tag
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(Self.open(vector, ciphertext: ciphertext, tag: flipped, aad: aad) == nil, "tag bit \(bit)")
        }
        for bit in 0..<aad.count * 8 {
            var flipped = aad
            flipped[bit / 8] ^= 1 << (bit % 8)
            #expect(Self.open(vector, ciphertext: ciphertext, tag: tag, aad: flipped) == nil, "AAD bit \(bit)")
        }
        #expect(Self.open(vector, ciphertext: ciphertext, tag: tag, aad: aad + [0]) == nil, "AAD extended")
    }

    @Test func aesGCMZeroesPlaintextWhenAuthenticationFails() {
        let vector = Self.gcmVectors[3]
        let cipher = AES256GCM(key: Self.hex(vector.key))
        var tag = Self.hex(vector.tag)
        tag[0] ^= 1
        var plaintext = [UInt8](repeating: 0xAA, count: Self.hex(vector.ciphertext).count)
        let authentic = Self.hex(vector.nonce).withUnsafeBytes { nonce in
            Self.hex(vector.aad).withUnsafeBytes { aad in
                Self.hex(vector.ciphertext).withUnsafeBytes { sealed in
                    tag.withUnsafeBytes { tagBytes in
                        plaintext.withUnsafeMutableBytes {
                            cipher.open(sealed, tag: tagBytes, nonce: nonce, authenticating: aad, plaintext: $0)
                        }
                    }
                }
            }
        }
        #expect(!authentic)
        // Neither the decrypted bytes nor anything else is left behind:
        // OpenSSL's are zeroed, CryptoKit never writes.
        #expect(plaintext.allSatisfy { $0 == 0 } || plaintext.allSatisfy { $0 == 0xAA })
        #expect(!plaintext.starts(with: Self.hex(Self.gcmPlaintext).prefix(4)))
    }

    // MARK: HMAC-SHA256: RFC 4231 §4.2–4.8

    static let hmacVectors: [(key: [UInt8], data: [UInt8], mac: String)] = [
        (
            [UInt8](repeating: 0x0B, count: 20), Array("Hi There".utf8),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"
        ),
        (
            Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        ),
        (
            [UInt8](repeating: 0xAA, count: 20), [UInt8](repeating: 0xDD, count: 50),
            "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"
        ),
        (
            Array(1...25), [UInt8](repeating: 0xCD, count: 50),
            "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"
        ),
        // Test case 5 gives only the first 128 bits (checked as a prefix).
        ([UInt8](repeating: 0x0C, count: 20), Array("Test With Truncation".utf8), "a3b6167473100ee06e0c796c2955552b"),
        (
            [UInt8](repeating: 0xAA, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        ),
        (
            [UInt8](repeating: 0xAA, count: 131),
            Array(
                ("This is a test using a larger than block-size key and a larger than block-size data."
                    + " The key needs to be hashed before being used by the HMAC algorithm.").utf8),
            "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"
        ),
    ]

    @Test func hmacSHA256MatchesRFC4231() {
        for (index, vector) in Self.hmacVectors.enumerated() {
            let mac = vector.key.withUnsafeBytes { key in
                vector.data.withUnsafeBytes { CryptoPrimitives.hmacSHA256(key: key, message: $0) }
            }
            #expect(Self.hex(mac).hasPrefix(vector.mac), "RFC 4231 test case \(index + 1)")
            #expect(mac.count == 32)
        }
    }

    // MARK: HKDF-SHA256: RFC 5869 appendix A.1–A.3

    static let hkdfVectors: [(ikm: [UInt8], salt: [UInt8], info: [UInt8], prk: String, okm: String)] = [
        (
            [UInt8](repeating: 0x0B, count: 22), Array(0x00...0x0C), Array(0xF0...0xF9),
            "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5",
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        ),
        (
            Array(0x00...0x4F), Array(0x60...0xAF), Array(0xB0...0xFF),
            "06a6b88c5853361a06104c9ceb35b45cef760014904671014a193f40c15fc244",
            "b11e398dc80327a1c8e7f78c596a49344f012eda2d4efad8a050cc4c19afa97c59045a99cac7827271cb41c65e590e09"
                + "da3275600c2f09b8367793a9aca3db71cc30c58179ec3e87c14c01d5c1f3434f1d87"
        ),
        (
            [UInt8](repeating: 0x0B, count: 22), [], [],
            "19ef24a32c717b167f33a91d6f648bdf96596776afdb6377ac434c1c293ccb04",
            "8da4e775a563c18f715f802a063c5a31b8a11f5c5ee1879ec3454e5f3c738d2d9d201395faa4b61a96c8"
        ),
    ]

    @Test func hkdfSHA256MatchesRFC5869() {
        for (index, vector) in Self.hkdfVectors.enumerated() {
            let okm = Self.hex(vector.okm)
            let derived = vector.ikm.withUnsafeBytes { ikm in
                vector.salt.withUnsafeBytes { salt in
                    vector.info.withUnsafeBytes {
                        CryptoPrimitives.hkdfSHA256(
                            inputKeyMaterial: ikm, salt: salt, info: $0, outputByteCount: okm.count)
                    }
                }
            }
            #expect(derived == okm, "RFC 5869 test case \(index + 1)")
            // Expand alone, from the vector's PRK, gives the same OKM.
            let expanded = Self.hex(vector.prk).withUnsafeBytes { prk in
                vector.info.withUnsafeBytes {
                    CryptoPrimitives.hkdfExpandSHA256(pseudoRandomKey: prk, info: $0, outputByteCount: okm.count)
                }
            }
            #expect(expanded == okm, "RFC 5869 test case \(index + 1), expand only")
        }
    }

    /// The keyed HMAC a store keeps for each subkey: its expand is the
    /// first 32 bytes of each RFC 5869 OKM (T(1) does not depend on the
    /// length asked for), and its MAC is the one-shot HMAC, on every use
    /// of a kept context and from several threads at once.
    @Test func keyedHMACMatchesRFC5869AndTheOneShotMAC() {
        for (index, vector) in Self.hkdfVectors.enumerated() {
            let keyed = HMACSHA256(key: Self.hex(vector.prk))
            let expected = Array(Self.hex(vector.okm).prefix(32))
            for _ in 0..<3 {
                #expect(
                    vector.info.withUnsafeBytes { keyed.expand(info: $0) } == expected,
                    "RFC 5869 test case \(index + 1)")
            }
        }
        let key = (0..<32).map { UInt8($0 &* 7 &+ 1) }
        let keyed = HMACSHA256(key: key)
        let messages = (0..<16).map { length in (0..<length * 37).map { UInt8(truncatingIfNeeded: $0 ^ length) } }
        let expected = messages.map { message in
            key.withUnsafeBytes { k in message.withUnsafeBytes { CryptoPrimitives.hmacSHA256(key: k, message: $0) } }
        }
        let tally = MismatchTally()
        DispatchQueue.concurrentPerform(iterations: 8) { worker in
            for round in 0..<50 {
                let index = (worker + round) % messages.count
                let mac = messages[index].withUnsafeBytes { keyed.authenticationCode($0) }
                tally.record(checked: mac == expected[index])
            }
        }
        #expect(tally.counts == (checked: 400, wrong: 0))
    }

    // MARK: The store's scheme

    /// The scheme's bytes, as its documentation (StoreEncryption,
    /// ChunkSealer, RecordSealer) defines them: these answers were
    /// computed apart from this code, from that description, with Python's
    /// `hmac` (HKDF written out per RFC 5869) and pyca/cryptography's
    /// AESGCM. A store written on one platform must open on the other, so
    /// CryptoKit must give the same, and a change of the format fails here.
    @Test func schemeBytesArePinned() {
        let encryption = StoreEncryption(key: try! StoreKey(bytes: Array(0..<32)))
        #expect(
            Self.hex(StoreEncryption.subkey(try! StoreKey(bytes: Array(0..<32)), .keyCheck))
                == "31ee47a15190aab2ef19669356bf3d2a31967bc0b7258f996411f7c5500496a3")
        #expect(
            Self.hex(encryption.keyCheckValue(storeID: 0x0102_0304_0506_0708))
                == "443f26d81e7f4a5cedb0d5ad42ad7b4100605a7d0de070a0162b409e21eeb240")
        #expect(
            encryption.indexKey(forCacheKey: "https://example.com/a.mp3").description
                == "d9b49022fea5474beef080e71b03afe2")
        let content = Array(0..<40_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        let identity = encryption.chunkIdentity(of: content)
        #expect(identity.description == "b6154739c4c748babc803065b501c196")
        let sealed = encryption.chunkSealer(for: identity).seal(content)
        #expect(Self.hex(Array(sealed.prefix(16))) == "90c9540e6f5554980ae276f4049fb478")
        #expect(Self.hex(Array(sealed.suffix(16))) == "b8c98730489bee94d814245f294422da")
        let record = encryption.recordSealer.seal(
            Array("record".utf8), context: Array("name".utf8), salt: [UInt8](repeating: 7, count: 32))
        #expect(
            Self.hex(record)
                == "070707070707070707070707070707070707070707070707070707070707070715e772d19cdcf3b14a009cb266b643540a9e9a972b78"
        )
    }
}

/// Counts MACs computed on several threads and how many were wrong.
private final class MismatchTally: @unchecked Sendable {
    private let lock = NSLock()
    private var checked = 0
    private var wrong = 0

    func record(checked right: Bool) {
        lock.lock()
        defer { lock.unlock() }
        checked += 1
        if !right { wrong += 1 }
    }

    var counts: (checked: Int, wrong: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (checked, wrong)
    }
}

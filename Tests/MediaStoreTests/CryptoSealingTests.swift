import Foundation
import TestSupport
import Testing

@testable import MediaStore

/// The encryption layer's own guarantees: keyed identities, convergent
/// block sealing that opens any run of blocks alone and refuses every
/// change, records sealed afresh each time, and the key check value.
@Suite struct CryptoSealingTests {
    static let key = try! StoreKey(bytes: Array(0..<32))
    static let otherKey = try! StoreKey(bytes: Array(1...32))
    static let block = ChunkSealer.blockSize

    static func bytes(_ count: Int, seed: UInt64 = 29) -> [UInt8] {
        var generator = SplitMix64(seed: seed)
        return generator.bytes(count)
    }

    static func sealed(_ plaintext: [UInt8], key: StoreKey = key) -> (ContentDigest, [UInt8]) {
        let encryption = StoreEncryption(key: key)
        let identity = encryption.chunkIdentity(of: plaintext)
        return (identity, encryption.chunkSealer(for: identity).seal(plaintext))
    }

    // MARK: Identities and subkeys

    @Test func identitiesAreKeyedAndTellContentApart() {
        let encryption = StoreEncryption(key: Self.key)
        let other = StoreEncryption(key: Self.otherKey)
        let content = Self.bytes(100_000)
        var changed = content
        changed[99_999] ^= 1
        #expect(encryption.chunkIdentity(of: content) == encryption.chunkIdentity(of: content))
        #expect(encryption.chunkIdentity(of: content) != encryption.chunkIdentity(of: changed))
        #expect(encryption.chunkIdentity(of: content) != other.chunkIdentity(of: content))
        // Not the XXH3 digest a plain store uses, which anyone can compute.
        let digest = ContentDigest(of: content)
        #expect(encryption.chunkIdentity(of: content).canonicalBytes != digest.canonicalBytes)
        // Cache keys: another subkey than chunks, so equal bytes get other names.
        let url = "https://media.example.com/track.mp3"
        #expect(encryption.indexKey(forCacheKey: url) == encryption.indexKey(forCacheKey: url))
        #expect(encryption.indexKey(forCacheKey: url) != other.indexKey(forCacheKey: url))
        #expect(encryption.indexKey(forCacheKey: url) != encryption.chunkIdentity(of: Array(url.utf8)))
        #expect(encryption.indexKey(forCacheKey: url) != encryption.indexKey(forCacheKey: url + "?"))
    }

    @Test func identityIsTruncatedHMACSHA256() {
        let encryption = StoreEncryption(key: Self.key)
        let content = Array("MediaCache".utf8)
        let subkey = StoreEncryption.subkey(Self.key, .chunkIdentity)
        let mac = subkey.withUnsafeBytes { key in
            content.withUnsafeBytes { CryptoPrimitives.hmacSHA256(key: key, message: $0) }
        }
        #expect(encryption.chunkIdentity(of: content).canonicalBytes == Array(mac.prefix(16)))
        #expect(ContentDigest(canonical: mac.prefix(16)) == encryption.chunkIdentity(of: content))
    }

    @Test func subkeysDifferPerPurposeAndKey() {
        var seen = Set<[UInt8]>()
        for key in [Self.key, Self.otherKey] {
            for purpose in StoreEncryption.Purpose.allCases {
                let subkey = StoreEncryption.subkey(key, purpose)
                #expect(subkey.count == 32)
                seen.insert(subkey)
            }
        }
        #expect(seen.count == 2 * StoreEncryption.Purpose.allCases.count)
    }

    // MARK: Chunks

    @Test(arguments: [0, 1, 16 * 1024 - 1, 16 * 1024, 16 * 1024 + 1, 100_000, 256 * 1024 - 16])
    func chunksRoundTrip(_ count: Int) throws {
        let plaintext = Self.bytes(count)
        let (identity, sealed) = Self.sealed(plaintext)
        #expect(sealed.count == ChunkSealer.sealedCount(plaintextCount: count))
        #expect(sealed.count == count + 16 * ChunkSealer.blockCount(plaintextCount: count))
        #expect(try ChunkSealer.plaintextCount(sealedCount: sealed.count) == count)
        #expect(try StoreEncryption(key: Self.key).chunkSealer(for: identity).open(sealed) == plaintext)
        if count >= 64 {
            // The plaintext appears nowhere in the sealed bytes.
            #expect(sealed.firstRange(of: plaintext.prefix(32)) == nil)
        }
    }

    @Test func sealingConvergesWithinAKeyOnly() {
        let plaintext = Self.bytes(70_000)
        let (identity, first) = Self.sealed(plaintext)
        let (sameIdentity, second) = Self.sealed(plaintext)
        #expect(identity == sameIdentity)
        #expect(first == second)
        let (otherIdentity, other) = Self.sealed(plaintext, key: Self.otherKey)
        #expect(otherIdentity != identity)
        #expect(other != first)
        // No block's ciphertext is shared across the keys.
        #expect(other.prefix(64) != first.prefix(64))
    }

    @Test func rangesOpenOnlyTheirBlocks() throws {
        let plaintext = Self.bytes(5 * Self.block + 1000)
        let (identity, sealed) = Self.sealed(plaintext)
        let sealer = StoreEncryption(key: Self.key).chunkSealer(for: identity)
        #expect(try sealer.open(sealed, blocks: 2..<3) == Array(plaintext[2 * Self.block..<3 * Self.block]))
        #expect(try sealer.open(sealed, blocks: 5..<6) == Array(plaintext[(5 * Self.block)...]))
        #expect(try sealer.open(sealed, blocks: 1..<4) == Array(plaintext[Self.block..<4 * Self.block]))
        #expect(try sealer.open(sealed, blocks: 3..<3) == [])
        // A damaged block 4 does not stop reading blocks 0–3 or 5: they
        // are authenticated alone, and block 4 is never read for them.
        var damaged = sealed
        damaged[4 * (Self.block + 16) + 100] ^= 0x01
        #expect(try sealer.open(damaged, blocks: 0..<4) == Array(plaintext[..<(4 * Self.block)]))
        #expect(try sealer.open(damaged, blocks: 5..<6) == Array(plaintext[(5 * Self.block)...]))
        #expect(throws: SealedDataError.authenticationFailed(block: 4)) { try sealer.open(damaged, blocks: 3..<5) }
        #expect(throws: SealedDataError.authenticationFailed(block: 4)) { try sealer.open(damaged) }
        #expect(throws: SealedDataError.blocksOutOfRange(5..<7, blockCount: 6)) {
            try sealer.open(sealed, blocks: 5..<7)
        }
        // Byte ranges map to the blocks that hold them.
        #expect(ChunkSealer.blocks(covering: 0..<1) == 0..<1)
        #expect(ChunkSealer.blocks(covering: Self.block - 1..<Self.block + 1) == 0..<2)
        #expect(ChunkSealer.blocks(covering: Self.block..<2 * Self.block) == 1..<2)
        #expect(
            ChunkSealer.plaintextRange(of: 5..<6, plaintextCount: plaintext.count) == 5 * Self.block..<plaintext.count)
    }

    /// A byte range opens exactly its bytes: whole blocks in place, the
    /// blocks cut at either end through a buffer of their own; a damaged
    /// block fails only the ranges that touch it.
    @Test func byteRangesOpenExactlyTheirBytes() throws {
        let plaintext = Self.bytes(5 * Self.block + 1000)
        let (identity, sealed) = Self.sealed(plaintext)
        let sealer = StoreEncryption(key: Self.key).chunkSealer(for: identity)
        func open(_ sealed: [UInt8], _ range: Range<Int>) throws -> [UInt8] {
            // Filled with a marker, so that a byte left unwritten shows.
            var output = [UInt8](repeating: 0xA5, count: range.count)
            try sealed.withUnsafeBytes { sealedBytes in
                try output.withUnsafeMutableBytes { try sealer.open(sealedBytes, range: range, into: $0) }
            }
            return output
        }
        let ranges = [
            0..<plaintext.count, 0..<1, 7..<8, 100..<Self.block, Self.block..<2 * Self.block,
            Self.block - 1..<Self.block + 1, 5..<3 * Self.block + 17, 2 * Self.block + 9..<5 * Self.block,
            3 * Self.block..<plaintext.count, plaintext.count - 1..<plaintext.count, 4 * Self.block..<4 * Self.block,
        ]
        for range in ranges {
            #expect(try open(sealed, range) == Array(plaintext[range]), "\(range)")
        }
        var damaged = sealed
        damaged[2 * (Self.block + 16) + 100] ^= 0x01
        #expect(try open(damaged, 0..<2 * Self.block) == Array(plaintext[..<(2 * Self.block)]))
        #expect(try open(damaged, 3 * Self.block..<plaintext.count) == Array(plaintext[(3 * Self.block)...]))
        #expect(throws: SealedDataError.authenticationFailed(block: 2)) {
            try open(damaged, 2 * Self.block - 1..<2 * Self.block + 1)
        }
        #expect(throws: SealedDataError.authenticationFailed(block: 2)) {
            try open(damaged, 2 * Self.block + 5..<2 * Self.block + 6)
        }
        #expect(throws: SealedDataError.blocksOutOfRange(5..<6, blockCount: 6)) {
            try open(sealed, plaintext.count - 1..<plaintext.count + 1)
        }
    }

    @Test func everyChangedByteFailsItsBlock() throws {
        let plaintext = Self.bytes(2 * Self.block + 300)
        let (identity, sealed) = Self.sealed(plaintext)
        let sealer = StoreEncryption(key: Self.key).chunkSealer(for: identity)
        let stride = Self.block + 16
        // A bit in each block's ciphertext (first, middle, last byte) and tag.
        let positions = [
            0, 5000, Self.block - 1, Self.block, Self.block + 15, stride, stride + Self.block + 15,
            2 * stride, 2 * stride + 299, 2 * stride + 300, sealed.count - 1,
        ]
        for position in positions {
            var damaged = sealed
            damaged[position] ^= 0x80
            let block = position / stride
            #expect(throws: SealedDataError.authenticationFailed(block: block), "byte \(position)") {
                try sealer.open(damaged, blocks: block..<block + 1)
            }
        }
    }

    @Test func swappedTruncatedExtendedOrMovedBlocksFail() throws {
        let plaintext = Self.bytes(3 * Self.block)
        let (identity, sealed) = Self.sealed(plaintext)
        let sealer = StoreEncryption(key: Self.key).chunkSealer(for: identity)
        let stride = Self.block + 16
        // Blocks 0 and 1 swapped.
        let swapped = Array(sealed[stride..<2 * stride] + sealed[..<stride] + sealed[(2 * stride)...])
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try sealer.open(swapped) }
        #expect(throws: SealedDataError.authenticationFailed(block: 1)) { try sealer.open(swapped, blocks: 1..<2) }
        // The last block dropped: what is left is a well-formed two-block
        // chunk whose AAD (length, count) no longer matches.
        let truncated = Array(sealed[..<(2 * stride)])
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try sealer.open(truncated) }
        // A block repeated at the end.
        let extended = sealed + sealed[(2 * stride)...]
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try sealer.open(extended) }
        // The last block shortened by a byte.
        let shortened = Array(sealed.dropLast())
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try sealer.open(shortened, blocks: 0..<1) }
        // A block moved into another chunk at the same position.
        let otherPlaintext = Self.bytes(3 * Self.block, seed: 30)
        let (otherIdentity, otherSealed) = Self.sealed(otherPlaintext)
        let moved = Array(otherSealed[..<stride] + sealed[stride...])
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try sealer.open(moved) }
        // The right bytes opened as another chunk (another key).
        let otherSealer = StoreEncryption(key: Self.key).chunkSealer(for: otherIdentity)
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try otherSealer.open(sealed) }
        // The right chunk under another store key.
        let foreign = StoreEncryption(key: Self.otherKey).chunkSealer(for: identity)
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) { try foreign.open(sealed) }
        #expect(try sealer.open(sealed) == plaintext)
    }

    @Test func malformedLengthsAreRefused() {
        for count in [0, 1, 15, Self.block + 32, 2 * (Self.block + 16) + 16] {
            #expect(throws: SealedDataError.malformedLength(count)) {
                try ChunkSealer.plaintextCount(sealedCount: count)
            }
        }
        let sealer = StoreEncryption(key: Self.key).chunkSealer(for: ContentDigest(high: 1, low: 2))
        #expect(throws: SealedDataError.malformedLength(10)) { try sealer.open([UInt8](repeating: 0, count: 10)) }
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) {
            try sealer.open([UInt8](repeating: 0, count: 16))
        }
    }

    // MARK: Records

    @Test func recordsRoundTripAndAreSealedAfreshEachTime() throws {
        let sealer = StoreEncryption(key: Self.key).recordSealer
        let context = Array("index key".utf8)
        for count in [0, 1, 100, 5000] {
            let plaintext = Self.bytes(count)
            let first = sealer.seal(plaintext, context: context)
            let second = sealer.seal(plaintext, context: context)
            #expect(first.count == count + RecordSealer.overhead)
            #expect(first != second, "a fresh salt each seal")
            #expect(first.prefix(32) != second.prefix(32))
            #expect(try sealer.open(first, context: context) == plaintext)
            #expect(try sealer.open(second, context: context) == plaintext)
        }
    }

    @Test func recordsRefuseAnyChangeAnotherContextOrKey() {
        let sealer = StoreEncryption(key: Self.key).recordSealer
        let context = Array("index key".utf8)
        let sealed = sealer.seal(Self.bytes(40), context: context)
        for position in [0, 31, 32, 50, 71, sealed.count - 1] {
            var damaged = sealed
            damaged[position] ^= 0x04
            #expect(throws: SealedDataError.authenticationFailed(block: 0), "byte \(position)") {
                try sealer.open(damaged, context: context)
            }
        }
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) {
            try sealer.open(sealed, context: Array("other key".utf8))
        }
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) {
            try StoreEncryption(key: Self.otherKey).recordSealer.open(sealed, context: context)
        }
        #expect(throws: SealedDataError.authenticationFailed(block: 0)) {
            try sealer.open(sealed.dropLast(), context: context)
        }
        #expect(throws: SealedDataError.malformedLength(47)) {
            try sealer.open(sealed.prefix(47), context: context)
        }
    }

    // MARK: Key check

    @Test func keyCheckValueRefusesAnotherKey() {
        let encryption = StoreEncryption(key: Self.key)
        let storeID: UInt64 = 0x1234_5678_9ABC_DEF0
        let stored = encryption.keyCheckValue(storeID: storeID)
        #expect(stored.count == 32)
        #expect(StoreEncryption(key: Self.key).checks(stored, storeID: storeID))
        #expect(!StoreEncryption(key: Self.otherKey).checks(stored, storeID: storeID))
        #expect(!StoreEncryption(key: StoreKey.random()).checks(stored, storeID: storeID))
        #expect(!encryption.checks(stored.dropLast(), storeID: storeID))
        #expect(!encryption.checks([], storeID: storeID))
        var flipped = stored
        flipped[31] ^= 1
        #expect(!encryption.checks(flipped, storeID: storeID))
        // Salted with the store's id: another store's value does not pass.
        #expect(!encryption.checks(stored, storeID: storeID ^ 1))
        #expect(encryption.keyCheckValue(storeID: storeID ^ 1) != stored)
        // The check value is none of the subkeys that seal or name things.
        for purpose in StoreEncryption.Purpose.allCases {
            #expect(StoreEncryption.subkey(Self.key, purpose) != stored)
        }
    }
}

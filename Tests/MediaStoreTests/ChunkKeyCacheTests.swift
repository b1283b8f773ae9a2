import Foundation
import TestSupport
import Testing

@testable import MediaStore

/// The encrypted store's cache of derived chunk keys: it hands back the
/// key HKDF derives, derives each key once while it is kept, never holds
/// more than its capacity, and sealers made through it seal and open as
/// sealers that derive their own key do.
@Suite struct ChunkKeyCacheTests {
    static let key = try! StoreKey(bytes: Array(0..<32))

    static func identity(_ index: Int) -> ContentDigest {
        ContentDigest(high: UInt64(index), low: 0x29)
    }

    @Test func derivesEachKeyOnceWhileKept() {
        let cache = ChunkKeyCache(capacity: 4)
        var derived: [ContentDigest] = []
        func key(_ index: Int) -> [UInt8] {
            cache.key(for: Self.identity(index)) { identity in
                derived.append(identity)
                return [UInt8](repeating: UInt8(index), count: 32)
            }
        }
        #expect(key(1) == [UInt8](repeating: 1, count: 32))
        #expect(key(1) == [UInt8](repeating: 1, count: 32))
        #expect(key(2) == [UInt8](repeating: 2, count: 32))
        #expect(derived == [Self.identity(1), Self.identity(2)])
        #expect(cache.count == 2)
    }

    @Test func holdsNoMoreThanItsCapacityAndForgetsTheOldestFirst() {
        let cache = ChunkKeyCache(capacity: 3)
        var derivations = 0
        func key(_ index: Int) -> [UInt8] {
            cache.key(for: Self.identity(index)) { _ in
                derivations += 1
                return [UInt8](repeating: UInt8(index), count: 32)
            }
        }
        for index in 0..<10 {
            _ = key(index)
            #expect(cache.count == min(index + 1, 3))
        }
        #expect(derivations == 10)
        // 7, 8, 9 are kept; 6 was forgotten and is derived again.
        _ = key(9)
        #expect(derivations == 10)
        _ = key(6)
        #expect(derivations == 11)
        #expect(cache.count == 3)
    }

    @Test func cachedSealersMatchSealersThatDeriveTheirOwnKey() throws {
        let encryption = StoreEncryption(key: Self.key)
        let subkey = StoreEncryption.subkey(Self.key, .chunkSealing)
        var generator = SplitMix64(seed: 29)
        let plaintext = generator.bytes(3 * ChunkSealer.blockSize + 100)
        let identity = encryption.chunkIdentity(of: plaintext)
        let direct = ChunkSealer(identity: identity, sealingSubkey: subkey).seal(plaintext)
        let first = encryption.chunkSealer(for: identity).seal(plaintext)
        let second = encryption.chunkSealer(for: identity).seal(plaintext)
        #expect(first == direct)
        #expect(second == direct)
        #expect(try encryption.chunkSealer(for: identity).open(direct) == plaintext)
        #expect(encryption.keptChunkKeyCount == 1)
        for index in 0..<(StoreEncryption.chunkKeyCacheCapacity + 10) {
            _ = encryption.chunkSealer(for: Self.identity(index))
        }
        #expect(encryption.keptChunkKeyCount == StoreEncryption.chunkKeyCacheCapacity)
    }

    @Test func openEachHandsOverOnlyAuthenticBlocksInOrder() throws {
        let encryption = StoreEncryption(key: Self.key)
        var generator = SplitMix64(seed: 30)
        let plaintext = generator.bytes(4 * ChunkSealer.blockSize + 7)
        let identity = encryption.chunkIdentity(of: plaintext)
        let sealer = encryption.chunkSealer(for: identity)
        var sealed = sealer.seal(plaintext)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: ChunkSealer.blockSize, alignment: 16)
        defer { scratch.deallocate() }
        func open(_ blocks: Range<Int>) throws -> ([Int], [UInt8]) {
            var seen: [Int] = []
            var bytes: [UInt8] = []
            try sealed.withUnsafeBytes { sealedBytes in
                try sealer.openEach(sealedBytes, blocks: blocks) { range in
                    UnsafeMutableRawBufferPointer(rebasing: scratch[0..<range.count])
                } opened: { block, piece in
                    seen.append(block)
                    bytes += piece
                }
            }
            return (seen, bytes)
        }
        let (blocks, bytes) = try open(1..<5)
        #expect(blocks == [1, 2, 3, 4])
        #expect(bytes == Array(plaintext[ChunkSealer.blockSize...]))
        // A flipped byte in block 3: blocks 1 and 2 are handed over, 3 is not.
        sealed[3 * (ChunkSealer.blockSize + ChunkSealer.tagSize) + 5] ^= 1
        var handed: [Int] = []
        #expect(throws: SealedDataError.authenticationFailed(block: 3)) {
            try sealed.withUnsafeBytes { sealedBytes in
                try sealer.openEach(sealedBytes, blocks: 1..<5) { range in
                    UnsafeMutableRawBufferPointer(rebasing: scratch[0..<range.count])
                } opened: { block, _ in
                    handed.append(block)
                }
            }
        }
        #expect(handed == [1, 2])
        #expect(throws: SealedDataError.blocksOutOfRange(4..<6, blockCount: 5)) {
            try open(4..<6)
        }
    }
}

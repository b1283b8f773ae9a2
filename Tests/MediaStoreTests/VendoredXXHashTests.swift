import CXXHash
import Foundation
import Testing
import XXHashVendoredCheck

@testable import MediaStore

/// On Apple platforms MediaStore hashes with the xxHash copy vendored in
/// Sources/XXHash; on Linux with the system's libxxhash. These tests
/// compile the vendored copy beside libxxhash (test-only target
/// XXHashVendoredCheck, its functions static to one file) and compare the
/// two over random inputs of every XXH3 length class, seeded and
/// unseeded, one-shot and streamed. A store written on one platform is
/// only readable with the same digests, so they must agree bit for bit.
@Suite struct VendoredXXHashTests {
    /// One pool of random bytes; inputs are slices of it at random offsets.
    static let pool: [UInt8] = {
        var generator = SplitMix64(seed: 0x5EED_0014)
        return generator.bytes(4 << 20)
    }()

    static func system(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> (UInt64, UInt64) {
        let hash = XXH3_128bits_withSeed(bytes.baseAddress, bytes.count, seed)
        return (hash.high64, hash.low64)
    }

    static func vendored(_ bytes: UnsafeRawBufferPointer, seed: UInt64) -> (UInt64, UInt64) {
        var high: UInt64 = 0
        var low: UInt64 = 0
        vendored_xxh3_128(bytes.baseAddress, bytes.count, seed, &high, &low)
        return (high, low)
    }

    /// Hashes `count` random slices with lengths in `lengths` through both
    /// copies; returns the first disagreement, if any.
    static func compare(
        count: Int, lengths: ClosedRange<Int>, seed: UInt64
    ) -> String? {
        var generator = SplitMix64(seed: seed)
        return pool.withUnsafeBytes { pool -> String? in
            for index in 0..<count {
                let length = Int.random(in: lengths, using: &generator)
                let offset = Int.random(in: 0...(pool.count - length), using: &generator)
                // Half unseeded (seed 0, what content digests use), half seeded (key digests).
                let hashSeed = index.isMultiple(of: 2) ? 0 : generator.next()
                let slice = UnsafeRawBufferPointer(rebasing: pool[offset..<offset + length])
                let expected = system(slice, seed: hashSeed)
                let actual = vendored(slice, seed: hashSeed)
                if expected != actual {
                    return
                        "length \(length) offset \(offset) seed \(hashSeed): libxxhash \(expected), vendored \(actual)"
                }
            }
            return nil
        }
    }

    @Test func theVendoredCopyIsXXHash081AsIsTheSystemLibrary() {
        #expect(vendored_xxh_version() == 801)
        #expect(XXH_versionNumber() == 801)
    }

    /// XXH3's code paths: 0–16, 17–128, 129–240 bytes, then the long loop
    /// (stripes and 1 KiB blocks). 1.2 million inputs in all.
    @Test(arguments: [
        (0...16, 400_000), (17...128, 400_000), (129...240, 300_000), (241...4096, 90_000),
        (4097...(256 << 10), 2_000),
    ])
    func oneShotDigestsAgree(lengths: ClosedRange<Int>, count: Int) {
        #expect(Self.compare(count: count, lengths: lengths, seed: UInt64(lengths.lowerBound) &+ 0x14) == nil)
    }

    /// Whole-pool and multi-megabyte inputs, seeded and not.
    @Test func largeInputsAgree() {
        Self.pool.withUnsafeBytes { pool in
            for (length, seed) in [
                (pool.count, UInt64(0)), (pool.count - 1, 0x9E37_79B9), ((1 << 20) + 7, 0), (3 << 20, 1),
            ] {
                let slice = UnsafeRawBufferPointer(rebasing: pool[0..<length])
                #expect(Self.system(slice, seed: seed) == Self.vendored(slice, seed: seed), "length \(length)")
            }
        }
    }

    /// The streaming API (what EntryWriter's content digest uses) fed in
    /// random pieces agrees with the one-shot digest of both copies and
    /// with MediaStore's own StreamingHasher and ContentDigest.
    @Test func streamingDigestsAgree() throws {
        var generator = SplitMix64(seed: 0x57AE_A414)
        try Self.pool.withUnsafeBytes { pool in
            for round in 0..<3_000 {
                let length =
                    round < 2_000
                    ? Int.random(in: 0...600, using: &generator) : Int.random(in: 601...(300 << 10), using: &generator)
                let offset = Int.random(in: 0...(pool.count - length), using: &generator)
                let piece = Int.random(in: 0...max(1, length / 3 + 1), using: &generator)
                let slice = UnsafeRawBufferPointer(rebasing: pool[offset..<offset + length])
                var high: UInt64 = 0
                var low: UInt64 = 0
                try #require(vendored_xxh3_128_streaming(slice.baseAddress, slice.count, piece, &high, &low) == 0)
                let expected = Self.system(slice, seed: 0)
                #expect((high, low) == expected, "length \(length) piece \(piece)")
                let hasher = StreamingHasher()
                var start = 0
                while start < length {
                    let end = piece == 0 ? length : min(length, start + piece)
                    hasher.update(UnsafeRawBufferPointer(rebasing: slice[start..<end]))
                    start = end
                }
                let digest = hasher.finalize()
                #expect(digest == ContentDigest(high: high, low: low), "length \(length) piece \(piece)")
                #expect(ContentDigest(of: Array(slice)) == digest)
            }
        }
    }
}

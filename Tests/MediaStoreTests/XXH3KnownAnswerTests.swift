import CXXHash
import Foundation
import Testing

@testable import MediaStore

/// Stored digests (content digests, key digests in the index, block
/// digests) are XXH3. On Linux MediaStore takes it from the system's
/// libxxhash, on Apple platforms from xxHash's C code as the XXHashKit
/// package compiles it (Sources/XXHash). A store is readable only where
/// both agree bit for bit, so these tests pin the answers: for 1.2 million
/// random inputs in every XXH3 length class, half seeded, a fold of their
/// XXH3-128 and XXH3-64 through MediaStore's `mediacache_` functions, and
/// the same for multi-megabyte inputs, each recorded from Debian's
/// libxxhash 0.8.1. A build whose xxHash computes anything else (another
/// platform's copy, a SIMD path, a future version) fails here.
@Suite struct XXH3KnownAnswerTests {
    /// One pool of random bytes; inputs are slices of it at random offsets.
    static let pool: [UInt8] = {
        var generator = SplitMix64(seed: 0x5EED_0014)
        return generator.bytes(4 << 20)
    }()

    /// FNV-1a over 64-bit words, with a shift: platform-independent and
    /// not XXH3 itself, so a wrong digest changes the fold.
    struct Fold {
        private(set) var value: UInt64 = 0xCBF2_9CE4_8422_2325
        mutating func add(_ word: UInt64) {
            value = (value ^ word) &* 0x0000_0100_0000_01B3
            value ^= value >> 29
        }
        mutating func add(_ hash: XXH128_hash_t) {
            add(hash.high64)
            add(hash.low64)
        }
    }

    /// Folds the XXH3-128 and XXH3-64 of `count` random slices with
    /// lengths in `lengths`.
    static func fold(count: Int, lengths: ClosedRange<Int>, seed: UInt64) -> (UInt64, UInt64) {
        var generator = SplitMix64(seed: seed)
        var fold128 = Fold()
        var fold64 = Fold()
        pool.withUnsafeBytes { pool in
            for index in 0..<count {
                let length = Int.random(in: lengths, using: &generator)
                let offset = Int.random(in: 0...(pool.count - length), using: &generator)
                // Half unseeded (seed 0, what content digests use), half seeded (key digests).
                let hashSeed = index.isMultiple(of: 2) ? 0 : generator.next()
                let start = pool.baseAddress! + offset
                fold128.add(mediacache_XXH3_128bits_withSeed(start, length, hashSeed))
                fold64.add(
                    hashSeed == 0
                        ? mediacache_XXH3_64bits(start, length)
                        : mediacache_XXH3_64bits_withSeed(start, length, hashSeed))
            }
        }
        return (fold128.value, fold64.value)
    }

    /// XXH3's code paths: 0–16, 17–128, 129–240 bytes, then the long loop
    /// (stripes and 1 KiB blocks). 1.2 million inputs in all; the expected
    /// folds (XXH3-128, XXH3-64) were computed with libxxhash 0.8.1.
    @Test(
        arguments: [
            (0...16, 400_000, 0x5599_CCAE_2577_6B65, 0xB3FE_62C4_168B_5B45),
            (17...128, 400_000, 0x7334_DF6C_C731_F7A0, 0x8AF7_4244_5003_591B),
            (129...240, 300_000, 0x5181_BA44_2C8D_5E96, 0x36E4_3D8F_A6EB_9F34),
            (241...4096, 90_000, 0x1D76_EA4D_E3F5_25BF, 0x0F39_E459_76A1_46FB),
            (4097...(256 << 10), 2_000, 0x715A_8A43_A00D_C2CC, 0xD2EB_3964_6053_1DC6),
        ] as [(ClosedRange<Int>, Int, UInt64, UInt64)])
    func oneShotDigestsAreLibxxhashs(lengths: ClosedRange<Int>, count: Int, fold128: UInt64, fold64: UInt64) {
        let (got128, got64) = Self.fold(count: count, lengths: lengths, seed: UInt64(lengths.lowerBound) &+ 0x14)
        #expect(got128 == fold128, "XXH3-128 fold over \(lengths)")
        #expect(got64 == fold64, "XXH3-64 fold over \(lengths)")
    }

    /// Whole-pool and multi-megabyte inputs, seeded and not, one by one;
    /// and the digest of a known text, as `xxh128sum` prints it.
    @Test func largeAndKnownInputs() {
        let cases: [(length: Int, seed: UInt64, digest: ContentDigest)] = [
            (Self.pool.count, 0, ContentDigest(high: 0x238D_BD78_4628_219A, low: 0x873B_9D04_60E6_F58C)),
            (Self.pool.count - 1, 0x9E37_79B9, ContentDigest(high: 0xC2E2_9651_3BAF_79E4, low: 0x38D4_586B_942C_BE77)),
            ((1 << 20) + 7, 0, ContentDigest(high: 0xCB53_AC86_C7EA_B90A, low: 0x10E4_DDCA_8F18_05FF)),
            (3 << 20, 1, ContentDigest(high: 0xB890_D43C_0D45_7390, low: 0x5AFC_D372_808D_B851)),
        ]
        for (length, seed, digest) in cases {
            let got = Self.pool.withUnsafeBytes { pool in
                ContentDigest(of: UnsafeRawBufferPointer(rebasing: pool[0..<length]), seed: seed)
            }
            #expect(got == digest, "length \(length) seed \(seed)")
        }
        // `printf 'The quick brown fox jumps over the lazy dog' | xxh128sum`
        #expect(
            ContentDigest(of: Array("The quick brown fox jumps over the lazy dog".utf8)).hexString
                == "ddd650205ca3e7fa24a1cc2e3a8a7651")
    }

    /// The streaming API (what EntryWriter's content digest uses) fed in
    /// random pieces through MediaStore's StreamingHasher agrees with the
    /// one-shot digest.
    @Test func streamingDigestsEqualOneShotOnes() {
        var generator = SplitMix64(seed: 0x57AE_A414)
        Self.pool.withUnsafeBytes { pool in
            for round in 0..<3_000 {
                let length =
                    round < 2_000
                    ? Int.random(in: 0...600, using: &generator) : Int.random(in: 601...(300 << 10), using: &generator)
                let offset = Int.random(in: 0...(pool.count - length), using: &generator)
                let piece = Int.random(in: 0...max(1, length / 3 + 1), using: &generator)
                let slice = UnsafeRawBufferPointer(rebasing: pool[offset..<offset + length])
                let hasher = StreamingHasher()
                var start = 0
                while start < length {
                    let end = piece == 0 ? length : min(length, start + piece)
                    hasher.update(UnsafeRawBufferPointer(rebasing: slice[start..<end]))
                    start = end
                }
                #expect(hasher.finalize() == ContentDigest(of: slice), "length \(length) piece \(piece)")
            }
        }
    }
}

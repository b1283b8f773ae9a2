import CXXHash
import Foundation
import Testing

@testable import MediaStore

/// MediaStore hashes through `mediacache_XXH3_*` (Sources/CXXHash/shim.h):
/// on x86-64 Linux they call libxxhash's `_dispatch` variants, which pick
/// SSE2, AVX2 or AVX-512 at run time. A digest decides whether stored bytes
/// are accepted, so they must equal the plain functions bit for bit.
@Suite struct HashDispatchTests {
    #if os(Linux) && arch(x86_64)
        @Test func linuxOnX86DispatchesAtRunTime() {
            #expect(mediacache_XXH3_dispatches() == 1)
        }
    #endif

    /// Every XXH3 length class (0–16, 17–128, 129–240, the long loop and
    /// its 1 KiB blocks, multi-megabyte), seeded and not, one-shot and streamed.
    @Test(arguments: [
        (0...16, 20_000), (17...128, 20_000), (129...240, 20_000), (241...4_096, 10_000),
        (4_097...(300 << 10), 300), ((1 << 20)...(3 << 20), 8),
    ])
    func dispatchedDigestsEqualThePlainOnes(lengths: ClosedRange<Int>, count: Int) {
        var generator = SplitMix64(seed: UInt64(lengths.lowerBound) &+ 0xD15)
        let pool = generator.bulkBytes(4 << 20)
        var mismatches: [String] = []
        pool.withUnsafeBytes { pool in
            for index in 0..<count {
                let length = Int.random(in: lengths, using: &generator)
                let offset = Int.random(in: 0...(pool.count - length), using: &generator)
                let seed = index.isMultiple(of: 2) ? 0 : generator.next()
                let slice = UnsafeRawBufferPointer(rebasing: pool[offset..<offset + length])
                let plain128 = XXH3_128bits_withSeed(slice.baseAddress, length, seed)
                let fast128 = mediacache_XXH3_128bits_withSeed(slice.baseAddress, length, seed)
                let plain64 = XXH3_64bits(slice.baseAddress, length)
                let fast64 = mediacache_XXH3_64bits(slice.baseAddress, length)
                // Streamed in two uneven parts, as StreamingHasher feeds it.
                let state = XXH3_createState()!
                XXH3_128bits_reset(state)
                let cut = length / 3
                _ = mediacache_XXH3_128bits_update(state, slice.baseAddress, cut)
                _ = mediacache_XXH3_128bits_update(state, slice.baseAddress.map { $0 + cut }, length - cut)
                let streamed = XXH3_128bits_digest(state)
                XXH3_freeState(state)
                let plainUnseeded = XXH3_128bits(slice.baseAddress, length)
                if plain128.high64 != fast128.high64 || plain128.low64 != fast128.low64 || plain64 != fast64
                    || streamed.high64 != plainUnseeded.high64 || streamed.low64 != plainUnseeded.low64
                {
                    mismatches.append("length \(length) offset \(offset) seed \(seed)")
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}

internal import CXXHash
import Foundation

extension ContentDigest {
    /// The XXH3-128 digest of `bytes`, optionally seeded.
    public init(of bytes: some ContiguousBytes, seed: UInt64 = 0) {
        let hash = bytes.withUnsafeBytes { buffer in
            mediacache_XXH3_128bits_withSeed(buffer.baseAddress, buffer.count, seed)
        }
        self.init(high: hash.high64, low: hash.low64)
    }
}

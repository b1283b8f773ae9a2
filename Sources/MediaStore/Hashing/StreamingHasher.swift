internal import CXXHash
import Foundation

/// Incremental XXH3-128 over bytes fed in pieces.
final class StreamingHasher {
    private let state: OpaquePointer

    init() {
        state = XXH3_createState()
        XXH3_128bits_reset(state)
    }

    deinit {
        XXH3_freeState(state)
    }

    func update(_ bytes: UnsafeRawBufferPointer) {
        guard bytes.count > 0 else { return }
        _ = mediacache_XXH3_128bits_update(state, bytes.baseAddress, bytes.count)
    }

    func update(_ bytes: some ContiguousBytes) {
        bytes.withUnsafeBytes { update($0) }
    }

    func finalize() -> ContentDigest {
        let hash = XXH3_128bits_digest(state)
        return ContentDigest(high: hash.high64, low: hash.low64)
    }
}

#if canImport(CZstd)
    internal import CZstd  // Linux: the system libzstd
#else
    internal import libzstd  // Apple platforms: facebook/zstd's package
#endif

/// zstd compression of one chunk at a time, with a reused context.
///
/// Not thread-safe: the store uses one instance under its writer lock.
/// Decompression is stateless and may run on any thread.
final class ZstdCodec {
    private let context: OpaquePointer
    let level: Int32

    init(level: Int) {
        self.level = Int32(level)
        context = ZSTD_createCCtx()
    }

    deinit {
        ZSTD_freeCCtx(context)
    }

    /// Compresses `input`; returns `nil` when the output would not be
    /// smaller than `limit` bytes (the caller then stores the input raw).
    func compress(_ input: UnsafeRawBufferPointer, limit: Int) -> [UInt8]? {
        guard input.count > 0, limit > 0 else { return nil }
        let capacity = ZSTD_compressBound(input.count)
        var output = [UInt8](repeating: 0, count: capacity)
        let written = output.withUnsafeMutableBytes { out in
            ZSTD_compressCCtx(context, out.baseAddress, capacity, input.baseAddress, input.count, level)
        }
        guard ZSTD_isError(written) == 0, written < limit else { return nil }
        output.removeSubrange(written...)
        return output
    }

    /// Decompresses `input`, which must expand to exactly `expectedCount`
    /// bytes, into `output` (which has room for them).
    static func decompress(
        _ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, expectedCount: Int
    ) -> Bool {
        guard output.count >= expectedCount else { return false }
        let written = ZSTD_decompress(output.baseAddress, expectedCount, input.baseAddress, input.count)
        return ZSTD_isError(written) == 0 && written == expectedCount
    }
}

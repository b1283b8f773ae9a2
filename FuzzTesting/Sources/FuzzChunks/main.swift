import FuzzEntryPoints

/// Stored chunks (header, zstd frame, size caps) as read from disk.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunks(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    StoreFuzzing.decodeChunk(Array(UnsafeRawBufferPointer(start: start, count: count)))
    return 0
}

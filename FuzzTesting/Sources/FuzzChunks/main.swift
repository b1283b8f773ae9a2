import FuzzEntryPoints

/// Stored values as read from disk: chunks (header, zstd frame, size caps)
/// and, from the same bytes, pack rows and pack use rows (store format 4).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzChunks(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    StoreFuzzing.decodeChunk(bytes)
    fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.decodePack(bytes) }
    return 0
}

import FuzzEntryPoints

/// Key files (`cachetool --key-file`) and, from the same bytes, an
/// encrypted store's `encryption` meta row, sealed chunks and sealed
/// records opened under a fixed key.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzKeyFile(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.parseKeyFile(bytes) }
    fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.openSealed(bytes) }
    return 0
}

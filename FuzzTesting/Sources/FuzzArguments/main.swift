import FuzzEntryPoints

/// cachetool's command line: NUL-separated arguments through the
/// table-driven parser and the size, range and expiry parsers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzArguments(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try CacheToolFuzzing.parseArguments(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

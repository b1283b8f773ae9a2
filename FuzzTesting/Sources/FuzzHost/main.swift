import FuzzEntryPoints

/// Arbitrary bytes as a URL host (first line) and an allowlist pattern
/// (second line): `HostClass` against the C library's address parsers.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHost(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try HostFuzzing.classify(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

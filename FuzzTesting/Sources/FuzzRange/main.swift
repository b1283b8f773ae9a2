import FuzzEntryPoints

/// Arbitrary bytes as a `Range` header value for MediaServer: parsing and
/// planning against entries up to `Int.max` long.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRange(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try ServerFuzzing.planRange(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

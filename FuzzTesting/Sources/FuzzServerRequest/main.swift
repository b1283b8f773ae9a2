import FuzzEntryPoints

/// Arbitrary bytes as an HTTP request head for MediaServer: parsing,
/// routing, Range and conditional planning, response-head writing.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzServerRequest(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try ServerFuzzing.parseRequest(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

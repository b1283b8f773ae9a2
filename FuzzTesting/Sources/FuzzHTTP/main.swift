import FuzzEntryPoints

/// What an origin sends: `Content-Range`, `Content-Type`, `Content-Length`,
/// `Cache-Control`, `Expires`, `Date` and `ETag` values, one per line, with
/// the `Range` header rebuilt from a parsed `Content-Range` and the whole
/// input sniffed as a body prefix for its content type.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzHTTP(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try StreamingFuzzing.parseResponse(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

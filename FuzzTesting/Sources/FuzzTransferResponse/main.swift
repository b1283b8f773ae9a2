import FuzzEntryPoints

/// Arbitrary bytes as the response head of a background task's file:
/// whatever `Content-Range`, `Content-Length`, status and file size, an
/// accepted file is exactly the bytes of a range inside the one asked for.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzTransferResponse(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try TransferFuzzing.checkResponse(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

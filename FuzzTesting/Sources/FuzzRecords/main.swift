import FuzzEntryPoints

/// Index records and counters as read from disk; the first byte picks the decoder.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRecords(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    guard let selector = bytes.first else { return 0 }
    let body = Array(bytes.dropFirst())
    switch selector % 3 {
    case 0: fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.decodeRecord(body) }
    case 1: StoreFuzzing.decodeCounters(body)
    default: StoreFuzzing.sniff(body)
    }
    return 0
}

import FuzzEntryPoints

/// The `rekey` meta row of an encrypted store (``RekeyRow``): the new
/// key's check value, the two wrapped keys, the phase and the cursor.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRekeyRow(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = Array(UnsafeRawBufferPointer(start: start, count: count))
    fuzzCrash { () throws(FuzzFailure) in try StoreFuzzing.decodeRekeyRow(bytes) }
    return 0
}

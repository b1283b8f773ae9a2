import FuzzEntryPoints

/// An export's manifest.json: parsing and checking every entry's fields
/// (CacheToolFuzzing.parseImportManifest), with no file read.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzImportManifest(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    fuzzCrash { () throws(FuzzFailure) in
        try CacheToolFuzzing.parseImportManifest(Array(UnsafeRawBufferPointer(start: start, count: count)))
    }
    return 0
}

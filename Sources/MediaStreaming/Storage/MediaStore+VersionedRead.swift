import Foundation
import MediaStore

extension MediaStore {
    /// The bytes of `range` of version `version` of `key`'s entry
    /// (expired or not), read in one call: for a reader that reads a chunk
    /// per ``StoreIO`` call.
    ///
    /// - throws: `StoreError/changedDuringRead(key:)` when the entry is no
    ///   longer that version; the other errors of ``read(forKey:range:includeExpired:)``.
    package func read(forKey key: String, range: Range<Int>, version: UInt64) throws(StoreError) -> Data {
        // A range within one chunk arrives as one slice: keep it as it
        // is (no copy); only a range over several chunks is joined.
        var bytes: Data?
        try forEachSlice(forKey: key, range: range, includeExpired: true, version: version) { slice in
            if bytes == nil { bytes = slice } else { bytes!.append(slice) }
            return true
        }
        return bytes ?? Data()
    }

}

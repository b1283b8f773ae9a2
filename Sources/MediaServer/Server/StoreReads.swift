import Foundation
import MediaStore

/// The reads a server makes of complete store entries on a connection's
/// thread: an entry's info with the head of a body
/// (``MediaStore/infoAndBytes(forKey:from:maxBytes:includeExpired:)``,
/// one read transaction), and a later piece of a body bound to one
/// version (one transaction per 256 KiB). A value handed to the
/// ``Responder``, so that what a request reads can be seen.
struct StoreReads: Sendable {
    /// The entry for `key` and its bytes from `offset`, at most `maxBytes`;
    /// `nil` on a miss (absent or expired).
    var infoAndBytes:
        @Sendable (_ store: MediaStore, _ key: String, _ offset: Int, _ maxBytes: Int) throws(StoreError) ->
            EntryBytes?
    /// The bytes of `range` of version `version` of the entry for `key`,
    /// in order (fewer when a hole stops them).
    var piece:
        @Sendable (_ store: MediaStore, _ key: String, _ range: Range<Int>, _ version: UInt64) throws(StoreError) ->
            [Data]

    /// Straight from the store.
    static let direct = StoreReads(
        infoAndBytes: { store, key, offset, maxBytes throws(StoreError) in
            try store.infoAndBytes(forKey: key, from: offset, maxBytes: maxBytes)
        },
        piece: { store, key, range, version throws(StoreError) in
            var pieces: [Data] = []
            try store.forEachSlice(forKey: key, range: range, version: version) { slice in
                pieces.append(slice)
                return true
            }
            return pieces
        })
}

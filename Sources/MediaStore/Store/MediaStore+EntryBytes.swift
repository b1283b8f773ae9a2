import Foundation

/// An entry's info and the bytes cached from an offset on, read together
/// in one transaction by
/// ``MediaStore/infoAndBytes(forKey:from:maxBytes:includeExpired:)``: both
/// describe the same version of the entry.
public struct EntryBytes: Sendable, Equatable {
    /// The entry as of the read. Its `lastAccess` is as of the last write
    /// (use ``MediaStore/info(forKey:)`` for the current one).
    public var info: EntryInfo
    /// Where ``bytes`` start in the entry.
    public var offset: Int
    /// The bytes cached from ``offset`` on, at most the `maxBytes` asked
    /// for. They stop at the entry's end and at its first hole, and are
    /// empty when ``offset`` is at or past either.
    public var bytes: Data
}

extension MediaStore {
    /// The info of the entry for `key` and its bytes cached from `offset`
    /// on, at most `maxBytes` of them, read in one transaction. For an
    /// answer that needs the entry's fields and the first bytes of its
    /// body at once (a server's response to a request for a stored entry).
    ///
    /// Complete or partial entries alike: the bytes stop at the first hole
    /// after `offset`. The bytes are verified as ``read(forKey:range:includeExpired:)``
    /// verifies them; reading some counts as an access.
    ///
    /// - parameter key: the entry's key.
    /// - parameter offset: the first byte wanted.
    /// - parameter maxBytes: the most bytes to read (0 reads only the info).
    /// - parameter includeExpired: read an expired entry too (for
    ///   revalidation); otherwise an expired entry is a miss.
    /// - returns: `nil` when there is no entry (or it expired, unless `includeExpired`).
    /// - throws: ``StoreError/invalidRange(key:range:length:)`` when
    ///   `offset` or `maxBytes` is negative; ``StoreError/corrupted(key:reason:)``
    ///   when a byte read fails its checksum (the entry is then dropped, so
    ///   the next call misses).
    public func infoAndBytes(forKey key: String, from offset: Int, maxBytes: Int, includeExpired: Bool = false)
        throws(StoreError) -> EntryBytes?
    {
        guard offset >= 0, maxBytes >= 0 else { throw .invalidRange(key: key, range: offset..<offset, length: nil) }
        let (sum, overflow) = offset.addingReportingOverflow(maxBytes)
        let limit = overflow ? Int.max : sum
        let found: (slot: Slot, now: Double, result: EntryBytes)?
        do {
            found = try run {
                try read { transaction -> (slot: Slot, now: Double, result: EntryBytes)? in
                    guard let (slot, record) = try transaction.index.find(key, currentAccess: false),
                        includeExpired || !record.isExpired(at: transaction.now)
                    else { return nil }
                    let end = try transaction.cachedEnd(of: record, from: offset, upTo: limit)
                    let bytes = end > offset ? try transaction.readRange(record, offset..<end) : Data()
                    return (slot, transaction.now, EntryBytes(info: record.info(), offset: offset, bytes: bytes))
                }
            }
        } catch {
            throw dropIfCorrupt(key: key, error)
        }
        guard let found else { return nil }
        if !found.result.bytes.isEmpty { recordAccess(slot: found.slot, at: found.now) }
        return found.result
    }
}

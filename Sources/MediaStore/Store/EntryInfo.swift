import Foundation

/// What the store knows about one entry: a snapshot, not a live view.
public struct EntryInfo: Sendable, Equatable {
    /// The full cache key.
    public var key: String
    /// The total length, when known.
    public var length: Int?
    /// Bytes of the entry currently cached.
    public var cachedBytes: Int
    /// Whether every byte is cached.
    public var isComplete: Bool
    /// XXH3-128 of the whole content (what `xxh128sum` prints); only for
    /// complete entries.
    public var contentDigest: ContentDigest?
    /// Descriptive fields.
    public var metadata: EntryMetadata
    /// When the entry was first written.
    public var created: Date
    /// When it was last read or written (updated in batches).
    public var lastAccess: Date
    /// When it expires; `nil` for never.
    public var expiry: Date?
    /// The caller-defined cost.
    public var cost: Int
    /// Whether anyone holds it (``MediaStore/holders(of:)``): eviction and expiry sweeps skip it.
    public var isPinned: Bool
    /// The chunk size it was cut with.
    public var chunkSize: Int
    /// Chunks currently stored for it (0 for inline values).
    public var chunkCount: Int
    /// Identifies this version of the entry: it changes whenever the
    /// entry is replaced, and stays while holes are filled. Range fills
    /// name it (``MediaStore/write(_:at:forKey:version:)``); pass it to
    /// ``MediaStore/read(forKey:range:includeExpired:version:chunkHandler:)``
    /// to read exactly the version described here, and to `setPinned`,
    /// `setMetadata`, `setExpiry` or `remove` to act on this version only.
    public var version: UInt64

    /// Whether the entry has expired at `date`.
    public func isExpired(at date: Date = Date()) -> Bool {
        guard let expiry else { return false }
        return expiry <= date
    }
}

/// Totals of a store, exact after any crash (kept in the same
/// transactions as the data).
public struct StoreStatistics: Sendable, Equatable {
    /// Entries, complete or partial.
    public var entryCount: Int
    /// Complete entries.
    public var completeCount: Int
    /// Sum of every entry's cached bytes (before dedup and compression).
    public var logicalBytes: Int
    /// Bytes of stored chunks and inline values (after both).
    public var storedBytes: Int
    /// Sum of the uncompressed sizes of the unique chunks.
    public var uniqueChunkBytes: Int
    /// Distinct chunks stored.
    public var chunkCount: Int
    /// Bytes of `data.mdb` in use.
    public var fileBytes: Int
    /// The current map size.
    public var mapSize: Int
    /// Reader slots in use.
    public var readers: Int
    /// The size limit in force (0 = none).
    public var sizeLimit: Int
    /// Entries evicted by limits since the store was created.
    public var evictions: Int

    /// `fileBytes / storedBytes`: how much larger the file is than its live data.
    public var fileToLiveRatio: Double {
        storedBytes == 0 ? 0 : Double(fileBytes) / Double(storedBytes)
    }
}

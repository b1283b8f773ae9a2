import Foundation
import MediaStore

/// The persistent download queue's records, kept in the store itself as
/// one pinned entry that never expires (a few hundred records are a few
/// tens of KiB; each save is one write transaction), so the queue and the
/// bytes it describes live and die together: removing the store removes
/// the queue, and ``load()`` checks every completed record against its
/// entry (media3's index could say "completed" after the cache was
/// cleared).
///
/// Each record is saved with the keys of its entries that were pinned by
/// someone else (the app, another download) when the queue took it, under
/// `keysPinnedElsewhere`, one more field of the record's JSON object (the
/// queue never unpins or removes those; see ``DownloadQueue``), each
/// byte for byte (two keys that are equal `String`s but different bytes
/// are two entries of the store, and two keys here). The field is left
/// out when there are none, so such a record is saved as before.
/// A record saved before the field existed has none: its download owns
/// every pin of its entries, as the queue then assumed (a cancel or
/// remove releases them all). An older version reading a newer index
/// skips the field.
///
/// Blocking: call it from the store's own I/O queue, not the cooperative pool.
public struct DownloadIndex: Sendable {
    /// The entry the records live in.
    public static let key = "mediacache:download-index:v1"

    public let store: MediaStore

    public init(store: MediaStore) { self.store = store }

    /// The records, in queue order, reconciled with the store: a transfer
    /// that was running when the process ended is queued again, and a
    /// completed download whose entry under its cache key is no longer
    /// complete is queued to fetch what is missing (its pin is kept).
    /// ``DownloadQueue/open(cache:configuration:monitor:performers:)``
    /// asks the record's performer which entry that is: an HLS download's
    /// is its master playlist's, under the cache's key policy.
    public func load() throws(DownloadIndexError) -> [DownloadRecord] {
        try loadWithPins().records
    }

    /// ``load()``, and for each record with any, the keys of its entries
    /// pinned elsewhere when the queue took it.
    ///
    /// - parameter isStored: whether a completed download is still all in
    ///   the store, or `nil` to ask whether the entry under its cache key
    ///   is complete (the queue asks an HLS record's performer, which
    ///   checks every resource of its selection).
    func loadWithPins(isStored: (DownloadRecord) -> Bool? = { _ in nil }) throws(DownloadIndexError) -> (
        records: [DownloadRecord], pinnedElsewhere: [UUID: Set<ExactKey>]
    ) {
        let bytes: Data?
        do { bytes = try store.data(forKey: Self.key) } catch { throw .storage(error) }
        guard let bytes else { return ([], [:]) }
        var records: [DownloadRecord]
        var pinnedElsewhere: [UUID: Set<ExactKey>] = [:]
        do {
            let stored = try JSONDecoder().decode([StoredRecord].self, from: bytes)
            records = stored.map(\.record)
            for entry in stored where !entry.keysPinnedElsewhere.isEmpty {
                pinnedElsewhere[entry.record.id] = entry.keysPinnedElsewhere
            }
        } catch {
            throw .unreadable(String(describing: error))
        }
        for index in records.indices {
            var record = records[index]
            do {
                try record.apply(.relaunch)
                if record.status == .completed {
                    let stored = try isStored(record) ?? (store.info(forKey: record.cacheKey)?.isComplete == true)
                    if !stored { try record.apply(.entryLost) }
                }
            } catch let error as StoreError {
                throw .storage(error)
            } catch {
                continue  // .relaunch is taken by every status
            }
            records[index] = record
        }
        return (records.sorted { $0.queueOrder < $1.queueOrder }, pinnedElsewhere)
    }

    /// The downloads, as last saved, whose entries the queue keeps pinned
    /// (all but cancelled ones and removals: ``DownloadRecord/holdsBytes``),
    /// for `OfflineDownloader.release` and `HLSDownloader.release`, which
    /// leave those entries pinned, and for `cachetool rm`, which says so
    /// when it removes one (at its next open, the queue fetches a
    /// completed download's lost entry again). None when there is no index, or one this
    /// version cannot read (no queue can open it either).
    ///
    /// The queue saves a download (queued) before it pins any of its
    /// entries, and unpins them before it saves it cancelled or drops it:
    /// the saved index never says "not held" while the queue holds a pin.
    package func heldRecords() throws(StoreError) -> [DownloadRecord] {
        guard let bytes = try store.data(forKey: Self.key) else { return [] }
        let stored = (try? JSONDecoder().decode([StoredRecord].self, from: bytes)) ?? []
        return stored.map(\.record).filter(\.holdsBytes)
    }

    /// Whether a download the queue holds (``heldRecords()``) has `key` as
    /// its cache key, byte for byte.
    func holdsEntry(_ key: String) throws(StoreError) -> Bool {
        try heldRecords().contains { ExactKey.equal($0.cacheKey, key) }
    }

    /// Replaces the stored records with `records` (one transaction), with
    /// no keys pinned elsewhere.
    public func save(_ records: [DownloadRecord]) throws(DownloadIndexError) {
        try save(records, pinnedElsewhere: [:])
    }

    /// Replaces the stored records with `records` (one transaction), each
    /// with its keys in `pinnedElsewhere`.
    func save(_ records: [DownloadRecord], pinnedElsewhere: [UUID: Set<ExactKey>]) throws(DownloadIndexError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let stored = records.map { StoredRecord(record: $0, keysPinnedElsewhere: pinnedElsewhere[$0.id] ?? []) }
        let bytes: Data
        do { bytes = try encoder.encode(stored) } catch { throw .unreadable(String(describing: error)) }
        do {
            try store.put(bytes, forKey: Self.key, options: WriteOptions(expiry: .never, pinned: true))
        } catch { throw .storage(error) }
    }
}

extension DownloadIndex {
    /// A record as the index saves it: the record's own fields, and in the
    /// same JSON object `keysPinnedElsewhere` (sorted by their bytes; left
    /// out when empty). The keys are ``ExactKey``s, compared by their bytes
    /// as the store compares keys: two canonically equal strings ("café"
    /// with one scalar, and with "e" and a combining accent) are two
    /// entries, and two keys here.
    fileprivate struct StoredRecord: Codable {
        var record: DownloadRecord
        var keysPinnedElsewhere: Set<ExactKey>

        private enum CodingKeys: String, CodingKey {
            case keysPinnedElsewhere
        }

        init(record: DownloadRecord, keysPinnedElsewhere: Set<ExactKey>) {
            self.record = record
            self.keysPinnedElsewhere = keysPinnedElsewhere
        }

        init(from decoder: any Decoder) throws {
            record = try DownloadRecord(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            let keys = try container.decodeIfPresent([String].self, forKey: .keysPinnedElsewhere) ?? []
            keysPinnedElsewhere = Set(keys.map(ExactKey.init))
        }

        func encode(to encoder: any Encoder) throws {
            try record.encode(to: encoder)
            guard !keysPinnedElsewhere.isEmpty else { return }
            // The record's own keyed container: the field joins its fields.
            var container = encoder.container(keyedBy: CodingKeys.self)
            let sorted = keysPinnedElsewhere.map(\.string).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            try container.encode(sorted, forKey: .keysPinnedElsewhere)
        }
    }
}

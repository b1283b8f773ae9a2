import Foundation
import MediaStore
import MediaStreaming

/// The persistent download queue's records, kept in the store itself as
/// one pinned entry that never expires (a few hundred records are a few
/// tens of KiB; each save is one write transaction), so the queue and the
/// bytes it describes live and die together: removing the store removes
/// the queue, and ``load()`` checks every completed record against its
/// entry (media3's index could say "completed" after the cache was
/// cleared).
///
/// Each record is saved with its download's holder
/// (``DownloadQueue/holder(of:)``) in the field `holder`. A record without
/// it has its entries held by `MediaStore.appHolder` (with
/// `keysPinnedElsewhere`: those it did not take itself); the queue adopts
/// them at opening, and saves one whose adoption failed as it was.
///
/// Blocking: call it from the store's own I/O queue, not the cooperative pool.
public struct DownloadIndex: Sendable {
    /// The entry the records live in.
    public static let key = "mediacache:download-index:v1"
    /// The entry whose version marks the queue that saves the index now
    /// (see ``Ownership``).
    static let ownerKey = "mediacache:download-queue-owner:v1"

    /// Which queue saves the index: one queue per store, also when an app
    /// drops a queue and opens another (a save of the dropped one may still
    /// be on its way) or two processes open one each.
    ///
    /// Opening a queue writes the owner entry (``claim(ifIndexAt:)``); each
    /// save (``save(_:unadopted:as:)``) checks in its own transaction that
    /// the entry is still the one its queue wrote, and refuses with
    /// ``DownloadError/superseded`` when a later opening wrote another. The
    /// latest opening wins; nothing an earlier queue saves late overwrites
    /// the index of a later one.
    struct Ownership: Sendable, Equatable {
        /// The version of the owner entry this queue wrote.
        var mark: UInt64
        /// The version of the index this queue last wrote or loaded (`nil`: none).
        var index: UInt64?
    }

    public let store: MediaStore

    public init(store: MediaStore) { self.store = store }

    /// The records, in queue order, reconciled with the store: a transfer
    /// that was running when the process ended is queued again, and a
    /// completed download whose entry under its cache key is no longer
    /// complete is queued to fetch what is missing (its pin is kept).
    /// ``DownloadQueue/open(cache:configuration:monitor:performers:)``
    /// asks the record's performer which entry that is: an HLS download's
    /// is its master playlist's, under the cache's key policy.
    public func load() throws(DownloadError) -> [DownloadRecord] {
        try loadForQueue().records
    }

    /// ``load()``, and the records saved before holds (no `holder`
    /// field), each with the keys it noted as pinned by someone else.
    ///
    /// - parameter isStored: whether a completed download is still all in
    ///   the store, or `nil` to ask whether the entry under its cache key
    ///   is complete (the queue asks an HLS record's performer, which
    ///   checks every resource of its selection).
    ///
    /// - returns: also the version of the index read (`nil`: none), for
    ///   ``claim(ifIndexAt:)``.
    func loadForQueue(isStored: (DownloadRecord) -> Bool? = { _ in nil }) throws(DownloadError) -> (
        records: [DownloadRecord], legacy: [UUID: Set<ExactKey>], version: UInt64?
    ) {
        let bytes: Data?
        let version: UInt64?
        do {
            // The version first: a save between the two reads makes the
            // claim see another version and load again.
            version = try store.info(forKey: Self.key)?.version
            bytes = try store.data(forKey: Self.key)
        } catch {
            throw .store(error)
        }
        guard let bytes else { return ([], [:], version) }
        var records: [DownloadRecord]
        var legacy: [UUID: Set<ExactKey>] = [:]
        do {
            let stored = try JSONDecoder().decode([StoredRecord].self, from: bytes)
            records = stored.map(\.record)
            for entry in stored where entry.holder == nil {
                legacy[entry.record.id] = entry.keysPinnedElsewhere
            }
        } catch {
            throw .index(String(describing: error))
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
                throw .store(error)
            } catch {
                continue  // .relaunch is taken by every status
            }
            records[index] = record
        }
        return (records.sorted { $0.queueOrder < $1.queueOrder }, legacy, version)
    }

    /// The records as last saved, not reconciled with the store (for
    /// `cachetool rm`, which names the download holding an entry). None
    /// when there is no index, or one this version cannot read (no queue
    /// can open it either).
    package func savedRecords() throws(StoreError) -> [DownloadRecord] {
        guard let bytes = try store.data(forKey: Self.key) else { return [] }
        let stored = (try? JSONDecoder().decode([StoredRecord].self, from: bytes)) ?? []
        return stored.map(\.record)
    }

    /// Replaces the stored records with `records` (one transaction), each
    /// with the holder its download holds its entries by.
    public func save(_ records: [DownloadRecord]) throws(DownloadError) {
        try save(records, unadopted: [:])
    }

    /// Makes the caller the owner of the index (see ``Ownership``) if the
    /// index is still at version `indexVersion` (as the caller loaded it).
    ///
    /// - returns: the caller's ownership, or `nil` when the index changed
    ///   since it was loaded (load it again).
    func claim(ifIndexAt indexVersion: UInt64?) throws(DownloadError) -> Ownership? {
        var claimed: Ownership?
        try batch { batch in
            guard try batch.info(forKey: Self.key)?.version == indexVersion else { return }
            try batch.put(Self.ownerValue, forKey: Self.ownerKey, options: WriteOptions(expiry: .never, pinned: true))
            guard let mark = try batch.info(forKey: Self.ownerKey)?.version else { return }
            claimed = Ownership(mark: mark, index: indexVersion)
        }
        return claimed
    }

    /// ``save(_:)`` by the owner `owner`, in one transaction with the check
    /// that it still is the owner (else ``DownloadError/superseded``). An
    /// owner entry removed (with every entry of the store) while the index
    /// is still the one `owner` wrote, or gone too, is written again.
    ///
    /// The records in `unadopted` (saved before holds, their pins not
    /// adopted yet) are saved as before holds: no holder, and the keys
    /// each noted as pinned by someone else.
    ///
    /// - returns: the ownership after the save.
    func save(_ records: [DownloadRecord], unadopted: [UUID: Set<ExactKey>], as owner: Ownership)
        throws(DownloadError) -> Ownership
    {
        let bytes = try encoded(records, unadopted: unadopted)
        var result = owner
        try batch { batch in
            let mark = try batch.info(forKey: Self.ownerKey)?.version
            let index = try batch.info(forKey: Self.key)?.version
            if mark == nil, index == nil || index == owner.index {
                try batch.put(
                    Self.ownerValue, forKey: Self.ownerKey, options: WriteOptions(expiry: .never, pinned: true))
                guard let mark = try batch.info(forKey: Self.ownerKey)?.version else { throw DownloadError.superseded }
                result.mark = mark
            } else if mark != owner.mark {
                throw DownloadError.superseded
            }
            try batch.put(bytes, forKey: Self.key, options: WriteOptions(expiry: .never, pinned: true))
            result.index = try batch.info(forKey: Self.key)?.version
        }
        return result
    }

    /// What the owner entry holds (its version is what counts).
    private static let ownerValue = Data("download queue owner".utf8)

    /// Runs `body` in one write transaction of the store; its own failures keep their type.
    private func batch(_ body: (WriteBatch) throws -> Void) throws(DownloadError) {
        do {
            try store.performBatch(body)
        } catch let error as DownloadError {
            throw error
        } catch let error as StoreError {
            throw .store(error)
        } catch {
            throw .store(.storage(code: -1, message: String(describing: error)))
        }
    }

    /// ``save(_:)``, but the records in `unadopted` (saved before holds,
    /// their pins not adopted yet) are saved as before holds: no holder,
    /// and the keys each noted as pinned by someone else.
    func save(_ records: [DownloadRecord], unadopted: [UUID: Set<ExactKey>]) throws(DownloadError) {
        let bytes = try encoded(records, unadopted: unadopted)
        do {
            try store.put(bytes, forKey: Self.key, options: WriteOptions(expiry: .never, pinned: true))
        } catch { throw .store(error) }
    }

    /// The index's bytes for `records`.
    private func encoded(_ records: [DownloadRecord], unadopted: [UUID: Set<ExactKey>]) throws(DownloadError)
        -> Data
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let stored = records.map { record in
            guard let pinnedElsewhere = unadopted[record.id] else {
                return StoredRecord(record: record, holder: DownloadQueue.holder(of: record.id))
            }
            return StoredRecord(legacy: record, keysPinnedElsewhere: pinnedElsewhere)
        }
        do { return try encoder.encode(stored) } catch { throw .index(String(describing: error)) }
    }
}

extension DownloadIndex {
    /// A record as the index saves it: the record's own fields, and in the
    /// same JSON object `holder`. A record saved before holds has no
    /// `holder`, and may have `keysPinnedElsewhere` (written again only
    /// for such a record, until its pins are adopted).
    fileprivate struct StoredRecord: Codable {
        var record: DownloadRecord
        var holder: String?
        var keysPinnedElsewhere: Set<ExactKey> = []

        private enum CodingKeys: String, CodingKey {
            case holder
            case keysPinnedElsewhere
        }

        init(record: DownloadRecord, holder: String) {
            self.record = record
            self.holder = holder
        }

        init(legacy record: DownloadRecord, keysPinnedElsewhere: Set<ExactKey>) {
            self.record = record
            self.holder = nil
            self.keysPinnedElsewhere = keysPinnedElsewhere
        }

        init(from decoder: any Decoder) throws {
            record = try DownloadRecord(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            holder = try container.decodeIfPresent(String.self, forKey: .holder)
            let keys = try container.decodeIfPresent([String].self, forKey: .keysPinnedElsewhere) ?? []
            keysPinnedElsewhere = Set(keys.map(ExactKey.init))
        }

        func encode(to encoder: any Encoder) throws {
            try record.encode(to: encoder)
            // The record's own keyed container: the field joins its fields.
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(holder, forKey: .holder)
            if !keysPinnedElsewhere.isEmpty {
                try container.encode(keysPinnedElsewhere.map(\.string).sorted(), forKey: .keysPinnedElsewhere)
            }
        }
    }
}

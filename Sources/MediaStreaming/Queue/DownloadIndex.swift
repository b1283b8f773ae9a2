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
/// Blocking: call it from the store's own I/O queue, not the cooperative pool.
public struct DownloadIndex: Sendable {
    /// The entry the records live in.
    public static let key = "mediacache:download-index:v1"

    public let store: MediaStore

    public init(store: MediaStore) { self.store = store }

    /// The records, in queue order, reconciled with the store: a transfer
    /// that was running when the process ended is queued again, and a
    /// completed download whose entry is no longer complete is queued to
    /// fetch what is missing (its pin is kept).
    public func load() throws(DownloadIndexError) -> [DownloadRecord] {
        let bytes: Data?
        do { bytes = try store.data(forKey: Self.key) } catch { throw .storage(error) }
        guard let bytes else { return [] }
        var records: [DownloadRecord]
        do { records = try JSONDecoder().decode([DownloadRecord].self, from: bytes) } catch {
            throw .unreadable(String(describing: error))
        }
        for index in records.indices {
            var record = records[index]
            do {
                try record.apply(.relaunch)
                if record.status == .completed {
                    let info = try store.info(forKey: record.cacheKey)
                    if info?.isComplete != true { try record.apply(.entryLost) }
                }
            } catch let error as StoreError {
                throw .storage(error)
            } catch {
                continue  // .relaunch is taken by every status
            }
            records[index] = record
        }
        return records.sorted { $0.queueOrder < $1.queueOrder }
    }

    /// Replaces the stored records with `records` (one transaction).
    public func save(_ records: [DownloadRecord]) throws(DownloadIndexError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let bytes: Data
        do { bytes = try encoder.encode(records) } catch { throw .unreadable(String(describing: error)) }
        do {
            try store.put(bytes, forKey: Self.key, options: WriteOptions(expiry: .never, pinned: true))
        } catch { throw .storage(error) }
    }
}

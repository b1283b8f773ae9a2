import Foundation
import MediaStore

/// Fetches one kind of queued download for a ``DownloadQueue``: a
/// progressive file (``ProgressiveDownloadPerformer``), an HLS stream
/// (its own performer, registered with the queue). The queue keeps the
/// record, its state and its conditions; the performer only moves bytes.
public protocol DownloadPerformer: Sendable {
    /// The ``DownloadRecord/kind`` it performs (`nil` in a record means
    /// `ProgressiveDownloadPerformer.kind`).
    var kind: String { get }

    /// Fetches every byte of `record` not yet in `cache`'s store, at
    /// `priority` (its transfers yield to higher ones), reporting
    /// (bytes stored, total when known) as it goes. Bytes already stored
    /// are not fetched again, so a download stopped and resumed, or
    /// interrupted by a relaunch, goes on where it was. Cancelling the
    /// calling task stops it and keeps what was stored.
    ///
    /// - returns: the store entries that now hold every byte, to pin.
    func perform(
        _ record: DownloadRecord, in cache: StreamingCache, priority: FetchPriority,
        progress: @escaping @Sendable (_ bytes: Int, _ total: Int?) -> Void
    ) async throws(DownloadFailure) -> [StoredEntry]

    /// The store keys `record`'s bytes live under (held by the download,
    /// removed on remove unless someone else holds them), in the order to
    /// hold them: the queue holds in this order, and removes in the
    /// reverse one. It may read the store (a blocking call): the
    /// queue asks on a dispatch queue of the store's, never on its own
    /// executor or a thread of the concurrency pool.
    func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String]
}

/// One store entry a download filled: its key and the version that holds
/// the bytes (pin exactly that one, never a replacement of it).
public struct StoredEntry: Sendable, Hashable {
    public var key: String
    public var version: UInt64

    public init(key: String, version: UInt64) {
        self.key = key
        self.version = version
    }
}

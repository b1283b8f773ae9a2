import Foundation

/// A ``DownloadPerformer`` whose download is stored under a key of its
/// own rather than its record's ``DownloadRecord/cacheKey``: an HLS
/// asset's master playlist, keyed by the cache's ``CacheKeyPolicy``
/// whatever key the download was queued under.
///
/// When the queue opens, a completed download whose entry under this key
/// is no longer complete is queued again; for other performers, the entry
/// under the record's cache key decides.
protocol CompletionKeyedPerformer: DownloadPerformer {
    /// The key of the entry that holds `record`'s download when it is complete.
    func completionKey(of record: DownloadRecord, in cache: StreamingCache) -> String
}

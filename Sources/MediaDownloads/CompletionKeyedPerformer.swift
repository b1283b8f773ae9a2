import Foundation
import MediaStore
import MediaStreaming

/// A ``DownloadPerformer`` whose download is stored under a key of its
/// own rather than its record's ``DownloadRecord/cacheKey``: an HLS
/// asset's master playlist, keyed by the cache's `CacheKeyPolicy`
/// whatever key the download was queued under.
///
/// The queue takes two downloads of one kind with the same such key for
/// one, and when it opens, asks such a performer whether a completed
/// download is still all in the store (for other performers, the entry
/// under the record's cache key decides): if not, it is queued again.
package protocol CompletionKeyedPerformer: DownloadPerformer {
    /// The key of the entry that holds `record`'s download when it is complete.
    func completionKey(of record: DownloadRecord, in cache: StreamingCache) -> String

    /// Whether all of `record`'s download is complete in `store`.
    /// Blocking: called on the store's read queue.
    func isStored(_ record: DownloadRecord, in cache: StreamingCache, store: MediaStore) -> Bool
}

import Foundation
import MediaStore

/// Told what happens to a ``StreamingItem``; mirrors `CachingPlayerItemDelegate`.
/// Every method has an empty default. Called from the loader's tasks, not
/// the main thread: hop to the main actor for UI work.
public protocol StreamingItemDelegate: AnyObject, Sendable {
    /// Every byte is in the store (`didFinishDownloadingData` / `didFinishDownloadingFileAt`).
    func streamingItem(_ item: StreamingItem, didFinishDownloading entry: EntryInfo?)
    /// Download progress (`didDownloadBytesSoFar:outOf:`).
    func streamingItem(_ item: StreamingItem, didDownloadBytesSoFar bytesDownloaded: Int, outOf bytesExpected: Int)
    /// The content information is known (`playerItemReadyToPlay`).
    func streamingItemReadyToPlay(_ item: StreamingItem)
    /// A request stalled or failed and is retried (`playerItemPlaybackStalled`).
    func streamingItemPlaybackStalled(_ item: StreamingItem)
    /// Downloading failed (`downloadingFailedWith`).
    func streamingItem(_ item: StreamingItem, downloadingFailedWith error: StreamingError)
    /// The item plays without caching (such as one larger than the store's whole limit).
    func streamingItem(_ item: StreamingItem, willPlayWithoutCachingBecause reason: String)
}

extension StreamingItemDelegate {
    public func streamingItem(_ item: StreamingItem, didFinishDownloading entry: EntryInfo?) {}
    public func streamingItem(
        _ item: StreamingItem, didDownloadBytesSoFar bytesDownloaded: Int, outOf bytesExpected: Int
    ) {}
    public func streamingItemReadyToPlay(_ item: StreamingItem) {}
    public func streamingItemPlaybackStalled(_ item: StreamingItem) {}
    public func streamingItem(_ item: StreamingItem, downloadingFailedWith error: StreamingError) {}
    public func streamingItem(_ item: StreamingItem, willPlayWithoutCachingBecause reason: String) {}
}

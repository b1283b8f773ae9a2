import Foundation
import MediaStore
import MediaStreaming

/// How a ``DownloadQueue`` runs its downloads.
public struct DownloadQueueConfiguration: Sendable {
    /// Downloads fetching at once. 2 by default.
    public var maxConcurrentDownloads: Int
    /// Free bytes kept on the store's volume: below it, entries nobody holds
    /// are evicted first, then downloads wait with
    /// ``WaitReason/storageLow(freeBytes:floor:)``. `nil` (the default): no floor.
    public var storageFloor: Int64?
    /// How often conditions that have no change notification (free space,
    /// playback activity for discretionary downloads) are checked again.
    /// 250 ms by default.
    public var pollInterval: Duration
    /// How long no transfer of a player or a preload must have been seen
    /// before discretionary downloads run (so they do not start between two
    /// requests of a player). 1 s by default.
    public var discretionaryQuietPeriod: Duration
    /// Called with each key of a download saved before holds before its
    /// pins are adopted at opening (on the store's write queue): a throw
    /// fails that download's adoption, as a failed store write does (the
    /// seam tests fail it with). `nil` by default.
    package var adoptionHook: (@Sendable (String) throws(StoreError) -> Void)?
    /// Awaited by each save of the download index once it took the
    /// records it saves, before its store write is queued (the seam tests
    /// delay one save with, as the concurrency pool may delay its hop to
    /// the write queue). `nil` by default.
    package var indexSaveHook: (@Sendable () async -> Void)?
    /// Called by each save of the download index on the store's write
    /// queue, before it writes: a throw fails that save, as a failed store
    /// write does (the seam tests fail it with). `nil` by default.
    package var indexWriteHook: (@Sendable () throws(StoreError) -> Void)?
    /// Awaited by each release of downloads' holds (a cancel's) before its
    /// store write is queued (the seam tests delay one with). `nil` by default.
    package var holdsReleaseHook: (@Sendable () async -> Void)?
    /// Awaited by the hold of a run's first bytes (a task of its own)
    /// before it asks the download's keys (the seam tests make that hold
    /// late with). `nil` by default.
    package var runHoldHook: (@Sendable () async -> Void)?
    /// Awaited by each hold of downloads' entries once it chose the
    /// downloads it holds, before it asks their keys (the seam tests hold
    /// a hold there with). `nil` by default.
    package var holdHook: (@Sendable () async -> Void)?
    /// Called with a removed download's holder before the removal's store
    /// work (on the store's write queue): a throw fails that removal, as a
    /// failed store write does (the seam tests fail it with). `nil` by default.
    package var removalHook: (@Sendable (String) throws(StoreError) -> Void)?
    /// Where progressive downloads are transferred: `nil` (the default)
    /// streams them through the cache's loader in the foreground; a
    /// ``BackgroundTransfer`` (on Apple platforms a background
    /// `URLSession`) runs them as download-to-file tasks that go on while
    /// the app is suspended (``BackgroundTransferPerformer``).
    public var backgroundTransfer: (any BackgroundTransfer)?
    /// Connections each progressive download fetches over at once, when
    /// streamed in the foreground (``ProgressiveDownloadPerformer/connections``):
    /// ``ProgressiveDownloadPerformer/defaultConnections`` by default. The
    /// downloads to one host share the cache's connections per host.
    public var connectionsPerDownload: Int = ProgressiveDownloadPerformer.defaultConnections
    /// Told of each background file that could not be imported (it is
    /// fetched again); the queue's `problems()` tells it too.
    public var importFailed: @Sendable (DownloadRecord, TransferImportError) -> Void = { _, _ in }
    /// How often a background task's bytes received are asked for as
    /// progress (``BackgroundTransferPerformer/progressInterval``). 1 s by default.
    public var backgroundProgressInterval: Duration = .seconds(1)

    public init(
        maxConcurrentDownloads: Int = 2, storageFloor: Int64? = nil, pollInterval: Duration = .milliseconds(250),
        discretionaryQuietPeriod: Duration = .seconds(1)
    ) {
        self.maxConcurrentDownloads = max(1, maxConcurrentDownloads)
        self.storageFloor = storageFloor
        self.pollInterval = pollInterval
        self.discretionaryQuietPeriod = discretionaryQuietPeriod
    }
}

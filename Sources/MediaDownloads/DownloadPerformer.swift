import Foundation
import MediaStore
import MediaStreaming

/// Moves the bytes of one kind of download: a progressive file
/// (``ProgressiveDownloadPerformer``), an HLS asset (`HLSDownloadPerformer`).
/// The state and the holds of the result are the download engine's run
/// (of a ``MediaDownload`` or a ``DownloadQueue`` record); the persistence
/// is the queue's.
public protocol DownloadPerformer: Sendable {
    /// The ``DownloadRecord/kind`` it performs (`nil` in a record means
    /// `ProgressiveDownloadPerformer.kind`).
    var kind: String { get }

    /// Fetches every byte of `record` not yet in the context's store, at
    /// the record's priority (its transfers yield to higher ones),
    /// reporting progress to `context` as it goes. Bytes already stored
    /// are not fetched again, so a download stopped and resumed, or
    /// interrupted by a relaunch, goes on where it was. Cancelling the
    /// calling task stops it and keeps what was stored.
    ///
    /// - returns: the store entries that now hold every byte: the caller
    ///   holds exactly these versions by ``DownloadContext/holder``.
    func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError) -> [StoredEntry]

    /// The store keys `record`'s bytes live under (held by the download,
    /// removed on remove unless someone else holds them), in the order to
    /// hold them: the queue holds in this order, and removes in the
    /// reverse one. It may read the store (a blocking call): the
    /// queue asks on a dispatch queue of the store's, never on its own
    /// executor or a thread of the concurrency pool.
    func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String]
}

/// What a ``DownloadPerformer`` is given for one run: the cache, the
/// holder of what it keeps, whether the run still counts, and where its
/// progress goes.
public struct DownloadContext: Sendable {
    /// The cache the bytes go into.
    public let cache: StreamingCache
    /// The store holder of the download: a performer that holds entries
    /// while it runs (an HLS asset's resources) holds them by this one.
    public let holder: String
    private let live: @Sendable () -> Bool
    private let change: @Sendable ((inout DownloadProgress) -> Void) -> Void
    private let tell: @Sendable (any Sendable) -> Void
    private let keepResume: @Sendable (TransferResumeData?) -> Void
    /// Where a performer of many resources (an HLS asset) fetches them as
    /// background tasks: a queue's ``DownloadQueueConfiguration/backgroundTransfer``;
    /// `nil`: in the foreground, through the cache's loader.
    package let background: BackgroundFetch?

    /// - parameters:
    ///   - cache: the cache the bytes go into.
    ///   - holder: the store holder of the download.
    ///   - isLive: whether the run is still the download's latest and
    ///     downloading; called inside store writes that hold.
    ///   - report: applies a change to the run's progress (ignored once the run is stopped).
    public init(
        cache: StreamingCache, holder: String, isLive: @escaping @Sendable () -> Bool,
        report: @escaping @Sendable ((inout DownloadProgress) -> Void) -> Void
    ) {
        self.init(cache: cache, holder: holder, isLive: isLive, report: report, detail: { _ in })
    }

    /// ``init(cache:holder:isLive:report:)`` whose performer's details
    /// (an HLS plan) go to `detail`.
    package init(
        cache: StreamingCache, holder: String, isLive: @escaping @Sendable () -> Bool,
        report: @escaping @Sendable ((inout DownloadProgress) -> Void) -> Void,
        detail: @escaping @Sendable (any Sendable) -> Void,
        keepResumeData: @escaping @Sendable (TransferResumeData?) -> Void = { _ in },
        background: BackgroundFetch? = nil
    ) {
        self.background = background
        self.cache = cache
        self.holder = holder
        self.live = isLive
        self.change = report
        self.tell = detail
        self.keepResume = keepResumeData
    }

    /// Keeps `resumeData` in the download's record (saved in the queue's
    /// index), or drops what it kept (`nil`); also when the run was stopped.
    package func keep(resumeData: TransferResumeData?) { keepResume(resumeData) }

    /// Tells the download's front-end `detail` (what it knows besides progress: an HLS plan).
    package func describe(_ detail: any Sendable) { tell(detail) }

    /// Whether the run still counts: a stopped one holds nothing more
    /// (ask inside the store write that holds).
    public var isLive: @Sendable () -> Bool { live }

    /// Applies `update` to the run's progress and tells its observers.
    public func report(_ update: (inout DownloadProgress) -> Void) { change(update) }

    /// Reports `bytes` stored of `total` (when known).
    public func report(bytes: Int, total: Int?) {
        change { progress in
            progress.bytes = bytes
            if let total { progress.total = total }
        }
    }
}

/// One store entry a download filled: its key and the version that holds
/// the bytes (hold exactly that one, never a replacement of it).
public struct StoredEntry: Sendable, Hashable {
    public var key: String
    public var version: UInt64

    public init(key: String, version: UInt64) {
        self.key = key
        self.version = version
    }
}

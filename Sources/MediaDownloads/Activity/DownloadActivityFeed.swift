import Foundation

/// Feeds a ``DownloadActivityModel`` from a ``DownloadQueue`` and cancels
/// what the activity shows through it: the queue side of the one download
/// activity. Statuses come from ``DownloadQueue/updates()`` (with no
/// bound on the records waiting for this actor, so a burst of changes
/// loses none); progress from there too and, while an
/// activity runs, from the progress of the downloads in flight read every
/// `refreshInterval` (``DownloadQueue/updates()`` tells progress at the
/// queue's polls and saves, not at each step, and an HLS download's
/// record has bytes but no total: its fraction counts resources);
/// cancel-all through ``DownloadQueue/cancel(_:)``.
///
/// ```swift
/// let feed = DownloadActivityFeed(queue: queue) { record in titles[record.id] ?? record.url.lastPathComponent }
/// for await change in await feed.changes() { show(change) }
/// ```
public actor DownloadActivityFeed {
    public nonisolated let queue: DownloadQueue
    private let now: @Sendable () -> Date
    private let title: @Sendable (DownloadRecord) -> String
    private var model = DownloadActivityModel()
    private let refreshInterval: Duration
    private var pump: Task<Void, Never>?
    private var refresher: Task<Void, Never>?
    /// Which ``changes()`` stream is current (an earlier one's records are dropped).
    private var generation = 0
    /// The fractions last read from the runs in flight, by id: an HLS
    /// download counts resources, which its record does not carry.
    private var runFractions: [UUID: Double] = [:]

    /// - parameters:
    ///   - queue: the downloads.
    ///   - now: the clock the activity's start is read from.
    ///   - refreshInterval: how often the downloads' progress is read while
    ///     an activity runs (at least 10 ms).
    ///   - title: what the activity shows for a download (the asset's
    ///     title); the URL's last path component by default.
    public init(
        queue: DownloadQueue, now: @escaping @Sendable () -> Date = { Date() },
        refreshInterval: Duration = .seconds(1),
        title: @escaping @Sendable (DownloadRecord) -> String = { $0.url.lastPathComponent }
    ) {
        self.queue = queue
        self.now = now
        self.refreshInterval = max(refreshInterval, .milliseconds(10))
        self.title = title
    }

    /// What the activity shows as of the changes told so far on the
    /// current ``changes()`` stream: `nil` when none runs (nothing in
    /// flight since its last end, or no stream yet).
    public var state: DownloadActivityState? { model.state }

    /// The activity's changes: first the one for the queue's downloads now
    /// (a start when any is in flight), then one for each change of the
    /// queue's downloads that changes what the activity shows, until the
    /// stream is dropped.
    ///
    /// One consumer: a later call finishes the earlier stream and starts
    /// again from the queue's downloads. A consumer slower than the changes
    /// loses the oldest beyond 256 (each carries the whole state, so an
    /// ``DownloadActivityChange/update(_:)`` may come without its start).
    public func changes() async -> AsyncStream<DownloadActivityChange> {
        pump?.cancel()
        refresher?.cancel()
        generation += 1
        let generation = generation
        model = DownloadActivityModel()
        runFractions = [:]
        let (stream, continuation) = AsyncStream<DownloadActivityChange>.makeStream(
            bufferingPolicy: .bufferingNewest(256))
        // Subscribed and read in one turn of the queue: no change falls between.
        let (updates, downloads) = await Self.subscribe(queue)
        let title = title
        if let change = model.apply(snapshot: downloads.map { .init($0, title: title($0)) }, at: now()) {
            continuation.yield(change)
        }
        pump = Task { [weak self] in
            for await record in updates {
                guard let self, await self.take(record, generation: generation, into: continuation) else { break }
            }
            continuation.finish()
        }
        refresher = Task { [weak self, refreshInterval] in
            while !Task.isCancelled {
                try? await Task.sleep(for: refreshInterval)
                guard let self, await self.refresh(generation: generation, into: continuation) else { break }
            }
        }
        continuation.onTermination = { [weak self] _ in
            Task { await self?.finish(generation) }
        }
        return stream
    }

    /// Cancels every download the activity shows (the model's
    /// ``DownloadActivityModel/cancelAllTargets`` for the queue's downloads
    /// now), in resume order, as ``DownloadQueue/cancel(_:)`` does but in
    /// one pass (one save of the index for all): each then ends with
    /// ``DownloadError/cancelled``, and the queue's `progress` is
    /// cancelled, as by ``DownloadQueue/cancelAll()``. Discretionary
    /// downloads are left alone.
    ///
    /// - returns: each cancel's result; a download that ended or was
    ///   removed in between fails its cancel (and is left as it is).
    public func cancelAll() async -> [UUID: Result<Void, DownloadError>] {
        var current = DownloadActivityModel()
        let title = title
        _ = current.apply(snapshot: await queue.downloads.map { .init($0, title: title($0)) }, at: now())
        return await queue.cancelAll(current.cancelAllTargets)
    }

    /// The fractions of the downloads in flight: from their runs' progress
    /// when it has a total (resources of an HLS plan, or bytes), else from
    /// their records.
    private static func inFlightFractions(_ queue: isolated DownloadQueue) -> [UUID: Double] {
        var fractions: [UUID: Double] = [:]
        for record in queue.downloads where record.status.isActive {
            let progress = queue.runners[record.id]?.snapshot
            fractions[record.id] =
                if let progress, progress.totalResources > 0 || progress.total > 0 {
                    progress.fraction
                } else {
                    DownloadActivityModel.Download(record, title: "").fraction
                }
        }
        return fractions
    }

    /// The queue's updates, unbounded (one save may tell more changes than
    /// ``DownloadQueue/updates()`` buffers, while this actor is busy), and its downloads now.
    private static func subscribe(_ queue: isolated DownloadQueue) -> (AsyncStream<DownloadRecord>, [DownloadRecord]) {
        (queue.updates(bufferingPolicy: .unbounded), queue.downloads)
    }

    /// Applies `record` when `generation` is current; `false` when it is not.
    private func take(
        _ record: DownloadRecord, generation: Int, into continuation: AsyncStream<DownloadActivityChange>.Continuation
    ) -> Bool {
        guard generation == self.generation else { return false }
        var download = DownloadActivityModel.Download(record, title: title(record))
        if record.status.isActive, let fraction = runFractions[record.id] {
            download.fraction = fraction
        } else {
            runFractions[record.id] = nil
        }
        if let change = model.apply(download, at: now()) { continuation.yield(change) }
        return true
    }

    /// Reads the progress of the members in flight when `generation` is
    /// current and an activity runs; `false` when `generation` is not current.
    private func refresh(
        generation: Int, into continuation: AsyncStream<DownloadActivityChange>.Continuation
    ) async -> Bool {
        guard generation == self.generation else { return false }
        guard model.state != nil else { return true }
        let fractions = await Self.inFlightFractions(queue)
        guard generation == self.generation else { return false }
        runFractions = fractions
        if let change = model.refresh(fractions: fractions, at: now()) { continuation.yield(change) }
        return true
    }

    private func finish(_ generation: Int) {
        guard generation == self.generation else { return }
        pump?.cancel()
        refresher?.cancel()
        pump = nil
        refresher = nil
    }
}

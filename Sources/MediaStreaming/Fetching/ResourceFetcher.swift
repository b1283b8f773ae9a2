import Foundation
import MediaStore
import MediaSupport

/// Coordinates everything about one cached resource (one cache key):
/// its content information, its revalidation, and the downloads that
/// fill its holes. Every reader of the key, from any item, goes through
/// the same fetcher, so two players share one download.
///
/// The work is split by concern: ``ResponseValidator`` judges responses
/// (pure), ``DownloadRunner`` moves bytes from the origin (retries, stall
/// watchdog), each download's ``ChunkSink`` writes them to the store
/// through ``StoreIO`` (off the concurrency pool); this actor keeps the
/// resource's state and decides: reads and downloads here, content
/// information in `ResourceFetcher+ContentInformation.swift`, what it does
/// for a running download in `ResourceFetcher+DownloadCoordinator.swift`.
///
/// Store failures: a failed read of the store's state (entry info, cached
/// ranges) fails the reader with ``StreamingError/store(_:)``, except an
/// entry the store cannot read (see `storedInfo()`); that, and a refused
/// write, make the resource play on without caching
/// (``ResourceEvent/cachingSkipped(reason:)``).
actor ResourceFetcher {
    let key: String
    let storeIO: StoreIO
    let configuration: StreamingConfiguration
    let chunkSize: Int
    /// The cache's fetch scheduler (priorities, connections per host).
    nonisolated let scheduler: FetchScheduler
    /// Counters of this resource.
    let statistics = Locked(StreamingStatistics())
    /// Counters of the whole cache, updated alongside.
    private let cacheStatistics: Locked<StreamingStatistics>
    private let runner: DownloadRunner

    // State shared with the extensions in ResourceFetcher+*.swift.
    var information: ContentInformation?
    /// Callers waiting for the content information, by id (a caller that
    /// is cancelled leaves; the probe stops once none is left).
    var infoWaiters: [Int: CheckedContinuation<ContentInformation, any Error>] = [:]
    var nextWaiterID = 0
    var resolving = false
    /// The validators of the version being cached.
    var validators = ResourceValidators()
    /// The store entry version this fetcher serves and fills
    /// (``EntryInfo/version``); `nil` until known or when not caching.
    var entryVersion: UInt64?
    /// Why the resource is played without caching, when it is.
    private(set) var cachingSkipped: String?
    var lease: EntryLease?
    var downloads: [Int: Download] = [:]
    private var nextID = 0
    /// The observers of the resource's events, under a lock of their own:
    /// registering and removing one is synchronous, so
    /// ``ResourceLoader/events()`` registers its stream and arranges its
    /// removal before it returns it.
    private let observation: Locked<Observation>

    /// - parameter unavailable: why the cache's store is unusable, when it
    ///   is; the resource then plays without caching from the start.
    init(
        key: String, storeIO: StoreIO, origin: any Origin, configuration: StreamingConfiguration,
        cacheStatistics: Locked<StreamingStatistics>, scheduler: FetchScheduler, unavailable: String? = nil
    ) {
        self.key = key
        self.scheduler = scheduler
        self.storeIO = storeIO
        self.configuration = configuration
        self.chunkSize = storeIO.store.configuration.chunkSize
        self.cacheStatistics = cacheStatistics
        self.cachingSkipped = unavailable
        self.observation = Locked(Observation(cachingSkipped: unavailable))
        self.runner = DownloadRunner(
            origin: origin, requestBytes: chunkSize * configuration.chunksPerRequest,
            maxRetries: configuration.maxRetries, retryBackoff: configuration.retryBackoff,
            stallTimeout: configuration.stallTimeout)
    }

    var store: MediaStore { storeIO.store }
    var requestBytes: Int { runner.requestBytes }

    // MARK: Observation

    /// The registered observers, and why caching is skipped (told to a new
    /// observer) so that each observer hears of it exactly once.
    struct Observation {
        var nextID = 0
        var handlers: [Int: @Sendable (ResourceEvent) -> Void] = [:]
        var cachingSkipped: String?
    }

    /// Registers `handler` (told at once if caching is skipped); returns its id.
    /// `handler` is called under the observers' lock: it must not call back.
    nonisolated func observe(_ handler: @escaping @Sendable (ResourceEvent) -> Void) -> Int {
        let id = observation.withLock { state in
            state.nextID += 1
            state.handlers[state.nextID] = handler
            if let reason = state.cachingSkipped { handler(.cachingSkipped(reason: reason)) }
            return state.nextID
        }
        configuration.fetcherHooks.observerRegistered.current?()
        return id
    }

    nonisolated func removeObserver(_ id: Int) {
        // Released after the lock: the handler may hold the last reference to a stream.
        let removed = observation.withLock { $0.handlers.removeValue(forKey: id) }
        _ = removed
    }

    /// The observers registered.
    nonisolated var observerCount: Int { observation.withLock { $0.handlers.count } }

    func emit(_ event: ResourceEvent) {
        observation.withLock { state in
            for handler in state.handlers.values { handler(event) }
        }
    }

    func count(_ body: (inout StreamingStatistics) -> Void) {
        statistics.withLock(body)
        cacheStatistics.withLock(body)
    }

    /// Adds `delta` to the reader backlog of this resource and of the cache, keeping the peaks.
    private static func adjustBacklog(_ delta: Int, _ boxes: [Locked<StreamingStatistics>]) {
        for box in boxes {
            box.withLock {
                $0.readerBacklogBytes += delta
                $0.peakReaderBacklogBytes = max($0.peakReaderBacklogBytes, $0.readerBacklogBytes)
            }
        }
    }

    /// Plays the resource without caching from now on (reported once).
    func skipCaching(_ reason: String) {
        for download in downloads.values { download.sink.stopStoring() }
        guard cachingSkipped == nil else { return }
        cachingSkipped = reason
        observation.withLock { state in
            state.cachingSkipped = reason
            for handler in state.handlers.values { handler(.cachingSkipped(reason: reason)) }
        }
    }

    // MARK: Planning reads

    /// Where the bytes from `offset` come from: the store, a running
    /// download (joined), or a new download over the hole at `offset`.
    /// A download runs at the highest `priority` of its readers.
    /// A new download stops at the chunk boundary at or after `until`, when given.
    func plan(
        from offset: Int, url: URL, headers: [String: String], priority: FetchPriority = .playback,
        until: Int? = nil
    ) async throws -> ReadPlan {
        guard let info = information else {
            throw StreamingError.origin(.malformedResponse(reason: "no content information"))
        }
        let length = info.contentLength
        guard offset < length else { return .end }
        var holeEnd = length
        if cachingSkipped == nil {
            let ranges = try await servedRanges()
            // The resource may have changed while the store was read.
            guard information?.contentLength == length else { throw StreamingError.resourceChanged(url: url) }
            if let cached = ranges.first(where: { $0.contains(offset) }), let entryVersion {
                return .store(offset..<cached.upperBound, version: entryVersion)
            }
            if let next = ranges.first(where: { $0.lowerBound > offset }) { holeEnd = next.lowerBound }
        }
        let lookahead = configuration.lookaheadBytes ?? requestBytes
        let joinable = downloads.values.filter {
            !$0.isStopped && $0.bufferStart <= offset && offset < $0.end && offset <= $0.position + lookahead
        }
        if let download = joinable.min(by: { $0.position > $1.position }) {
            return .stream(subscribe(download, from: offset, priority: priority, until: until))
        }
        let start = offset / chunkSize * chunkSize
        if let until { holeEnd = min(holeEnd, max(start + chunkSize, (until + chunkSize - 1) / chunkSize * chunkSize)) }
        for other in downloads.values where !other.isStopped {
            if other.bufferStart > start { holeEnd = min(holeEnd, other.bufferStart) }
            if other.position <= start && start < other.end { other.end = start }
        }
        let download = makeDownload(
            start: start, end: holeEnd, url: url, headers: headers, isProbe: false, priority: priority)
        let stream = subscribe(download, from: offset, priority: priority, until: until)
        launch(download)
        return .stream(stream)
    }

    /// The first byte at or after `offset` that is not in the store; `nil` when none is missing.
    func firstMissingByte(from offset: Int) async throws -> Int? {
        guard let length = information?.contentLength else { return offset }
        var position = offset
        for range in try await servedRanges() where range.contains(position) {
            position = range.upperBound
        }
        return position < length ? position : nil
    }

    /// The cached ranges of the entry version this fetcher serves. When the
    /// entry at the key is another version now (replaced by another
    /// writer), none: the resource plays on uncached.
    private func servedRanges() async throws(StoreError) -> [Range<Int>] {
        guard let version = entryVersion else { return [] }
        let key = self.key
        let ranges = try await storeIO.read { store throws(StoreError) -> [Range<Int>]? in
            guard try store.info(forKey: key)?.version == version else { return nil }
            return try store.cachedRanges(forKey: key)
        }
        guard let ranges else {
            if entryVersion == version {
                entryVersion = nil
                skipCaching("the store entry was replaced by another writer")
            }
            return []
        }
        return ranges
    }

    private func subscribe(_ download: Download, from offset: Int, priority: FetchPriority, until: Int?)
        -> ReaderStream
    {
        let boxes = [statistics, cacheStatistics]
        let channel = ReaderChannel { Self.adjustBacklog($0, boxes) }
        nextID += 1
        let id = nextID
        if offset < download.position { channel.send(download.sink.buffered(from: offset)) }
        download.subscribers[id] = Download.Subscriber(
            offset: max(offset, download.position), channel: channel, priority: priority, until: until)
        download.windingDown = false
        reschedule(download)
        let downloadID = download.id
        return ReaderStream(channel: channel) { [weak self] in
            Task { await self?.unsubscribe(id, from: downloadID) }
        }
    }

    private func unsubscribe(_ id: Int, from downloadID: Int) {
        guard let download = downloads[downloadID] else { return }
        let leaving = download.subscribers.removeValue(forKey: id)
        // Uncached bytes nobody reads are wasted: stop at once. Cached
        // downloads finish their request (the bytes are kept), except for
        // a download or preload that was stopped: it ends at the next chunk
        // boundary (a stopped download fetches nothing more).
        if download.subscribers.isEmpty, !(download.isProbe && information == nil) {
            if cachingSkipped != nil {
                stop(download)
            } else if let leaving, leaving.priority < .playback {
                download.windingDown = true
            }
        }
        reschedule(download)
    }

    // MARK: Downloads

    func makeDownload(
        start: Int, end: Int, url: URL, headers: [String: String], isProbe: Bool, priority: FetchPriority
    ) -> Download {
        nextID += 1
        // A probe fills the version it prepares; other downloads the one served.
        let sink = ChunkSink(
            key: key, start: start, chunkSize: chunkSize, storeIO: storeIO, version: isProbe ? nil : entryVersion,
            isStoring: cachingSkipped == nil)
        let download = Download(
            id: nextID, start: start, end: end, url: url, headers: headers, isProbe: isProbe, sink: sink,
            ticket: scheduler.makeTicket(priority, host: url.host ?? ""))
        downloads[download.id] = download
        return download
    }

    func launch(_ download: Download) {
        let runner = self.runner
        download.task = Task { await runner.run(download, for: self) }
    }

    private func stop(_ download: Download) {
        download.isStopped = true
        download.task?.cancel()
    }

    /// Stops every download (readers fail with `cancelled`).
    func cancelAll() {
        for download in downloads.values {
            stop(download)
            fail(download, .cancelled)
        }
    }

    func fail(_ download: Download, _ error: StreamingError) {
        // A probe abandoned by every waiter was removed already: a newer one may resolve now.
        let isCurrent = downloads.removeValue(forKey: download.id) != nil
        for subscriber in download.subscribers.values { subscriber.channel.finish(throwing: error) }
        download.subscribers = [:]
        if isCurrent && download.isProbe && information == nil { failResolution(error) }
    }

    /// The resource changed at the origin: no old byte may be mixed with
    /// new ones, so the entry is dropped, then every reader fails. Readers
    /// arriving meanwhile wait, and fail alike.
    func contentChanged(_ error: StreamingError) async {
        let version = entryVersion
        information = nil
        entryVersion = nil
        resolving = true
        let stopped = Array(downloads.values)
        for download in stopped {
            stop(download)
            download.sink.stopStoring()
        }
        if let version {
            // Drops the version filled from the old content, not a newer one.
            let key = self.key
            do {
                _ = try await storeIO.write { store throws(StoreError) in
                    try store.remove(forKey: key, version: version)
                }
            } catch {
                switch error {
                case .entryReplaced: break  // a newer version is not ours to drop
                default: skipCaching("the store could not drop the changed entry: \(error)")
                }
            }
        }
        for download in stopped { fail(download, error) }
        emit(.revalidated(changed: true))
        failResolution(error)
    }
}

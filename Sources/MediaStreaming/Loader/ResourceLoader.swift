import Foundation
import MediaStore
import MediaSupport

/// The platform-neutral resource loader: answers ``LoadingRequest``s
/// (AVFoundation's loading requests, modelled) for one URL.
///
/// Cached chunks are answered at once from the store. Holes are fetched
/// from the origin with `Range` requests aligned to chunk boundaries and
/// written to the store while they are answered; bytes travel chunk by
/// chunk, never as the whole file.
///
/// ```swift
/// let loader = cache.loader(for: url)
/// let request = LoadingRequest(contentInformation: true, offset: 0, length: 2) { event in … }
/// loader.shouldWaitForLoading(of: request)   // always true: answered asynchronously
/// ```
public final class ResourceLoader: Sendable {
    /// The URL requested from the origin.
    public let url: URL
    /// The key its bytes are cached under.
    public let cacheKey: String
    /// Headers sent with its origin requests.
    public let headers: [String: String]
    /// The cache it belongs to.
    public let cache: StreamingCache
    let fetcher: ResourceFetcher
    private let tasks = Locked<[ObjectIdentifier: Task<Void, Never>]>([:])
    private let served = Locked(StreamingStatistics())
    private let hooks: LoaderHooks

    init(
        url: URL, cacheKey: String, headers: [String: String], cache: StreamingCache, fetcher: ResourceFetcher,
        hooks: LoaderHooks
    ) {
        self.url = url
        self.cacheKey = cacheKey
        self.headers = headers
        self.cache = cache
        self.fetcher = fetcher
        self.hooks = hooks
    }

    deinit {
        for task in tasks.current.values { task.cancel() }
    }

    /// Bytes this loader gave from the store and from the origin, plus
    /// the resource's origin counters (shared with other loaders of the key).
    public var statistics: StreamingStatistics {
        var result = fetcher.statistics.current
        let mine = served.current
        result.bytesServedFromStore = mine.bytesServedFromStore
        result.bytesServedFromOrigin = mine.bytesServedFromOrigin
        return result
    }

    /// Counts `bytes` of this loader's entry sent from the store by
    /// another path (the server's stored-entry replies), in this loader's
    /// statistics and the cache's, as its own reads are.
    package func countServedFromStore(_ bytes: Int) {
        served.withLock { $0.bytesServedFromStore += bytes }
        cache.statisticsBox.withLock { $0.bytesServedFromStore += bytes }
    }

    /// Starts answering `request`; always returns `true` (the answer comes
    /// through the request's responder). Mirrors
    /// `resourceLoader(_:shouldWaitForLoadingOfRequestedResource:)`.
    @discardableResult
    public func shouldWaitForLoading(of request: LoadingRequest) -> Bool {
        let id = ObjectIdentifier(request)
        // Made and registered under the table's lock: the task cannot
        // unregister itself before it is registered (it would stay there),
        // and a `didCancel(_:)` that comes after this call finds it.
        tasks.withLock { tasks in
            tasks[id] = Task { [self] in
                await self.serve(request)
                _ = self.tasks.withLock { $0.removeValue(forKey: id) }
                self.hooks.taskEnded.current?(request)
            }
        }
        hooks.taskCreated.current?(request)
        return true
    }

    /// The requests whose tasks are registered.
    var registeredRequests: Int { tasks.current.count }

    /// Stops answering `request`. Mirrors `resourceLoader(_:didCancel:)`.
    public func didCancel(_ request: LoadingRequest) {
        request.markCancelled()
        tasks.withLock { $0.removeValue(forKey: ObjectIdentifier(request)) }?.cancel()
    }

    /// The content information, from the store or the origin.
    public func contentInformation() async throws(StreamingError) -> ContentInformation {
        do {
            return try await fetcher.contentInformation(url: url, headers: headers)
        } catch {
            throw StreamingError.wrap(error)
        }
    }

    /// Why this resource is played without caching, if it is.
    public var cachingSkippedReason: String? {
        get async { await fetcher.cachingSkipped }
    }

    /// Events of the resource (ready, caching skipped, retries, progress, complete)
    /// until the returned stream is dropped.
    public func events() -> AsyncStream<ResourceEvent> {
        let (stream, continuation) = AsyncStream<ResourceEvent>.makeStream()
        let fetcher = self.fetcher
        // Registered and its removal arranged before the stream is returned:
        // a stream dropped or cancelled at once unregisters at once (set
        // later, `onTermination` of an ended stream is never called, and
        // the observer stayed registered for the fetcher's lifetime).
        let id = fetcher.observe { continuation.yield($0) }
        continuation.onTermination = { _ in fetcher.removeObserver(id) }
        return stream
    }

    private func serve(_ request: LoadingRequest) async {
        do {
            let info = try await contentInformation()
            try Task.checkCancellation()
            request.contentInformationRequest?.fill(info)
            if let data = request.dataRequest {
                // Overflow-safe: offset and length come from players and servers' clients.
                let (requestedEnd, overflow) = data.requestedOffset.addingReportingOverflow(data.requestedLength)
                let end =
                    data.requestsAllDataToEndOfResource || overflow
                    ? info.contentLength : min(info.contentLength, requestedEnd)
                guard data.requestedOffset >= 0, data.requestedLength >= 0, data.requestedOffset <= info.contentLength
                else {
                    throw StreamingError.outOfRange(offset: data.requestedOffset, length: info.contentLength)
                }
                try await deliver(to: data, until: end)
            }
            try Task.checkCancellation()
            request.finishLoading()
        } catch {
            if request.isCancelled || Task.isCancelled { return }
            request.finishLoading(with: StreamingError.wrap(error))
        }
    }

    /// Gives `data` its bytes from its current offset to `end`.
    private func deliver(to data: DataRequest, until end: Int) async throws {
        var idleRounds = 0
        while data.currentOffset < end {
            try Task.checkCancellation()
            let before = data.currentOffset
            switch try await fetcher.plan(from: before, url: url, headers: headers) {
            case .end:
                return
            case .store(let range, let version):
                do throws(StoreError) {
                    try await readStore(range.lowerBound..<min(range.upperBound, end), version: version, into: data)
                } catch {
                    // Evicted or dropped as corrupt meanwhile: plan again (the hole is refetched).
                    if idleRounds > 3 { throw error }
                }
            case .stream(let stream):
                for try await piece in stream {
                    let wanted = end - data.currentOffset
                    let part = piece.count > wanted ? Data(piece.prefix(wanted)) : piece
                    data.respond(with: part)
                    served.withLock { $0.bytesServedFromOrigin += part.count }
                    cache.statisticsBox.withLock { $0.bytesServedFromOrigin += part.count }
                    if data.currentOffset >= end { return }
                }
            }
            idleRounds = data.currentOffset == before ? idleRounds + 1 : 0
            if idleRounds > 50 {
                throw OriginError.connectionLost(reason: "no progress reading \(url.absoluteString.prefix(200))")
            }
        }
    }

    /// Gives `data` the cached bytes of `range`, a chunk at a time (one
    /// `Data` each), bound to `version`: an entry replaced meanwhile stops
    /// the read (`changedDuringRead`) instead of handing out bytes of
    /// another version. Stops at the next chunk when the task is cancelled.
    ///
    /// The whole range is one trip off the concurrency pool: on
    /// ``StoreIO``'s read queue, the store copies up to 256 KiB of chunks per
    /// short read transaction and the pieces go to `data` from there, as
    /// they come, outside any transaction: no hop back to the pool (two
    /// thread wake-ups) per transaction.
    private func readStore(_ range: Range<Int>, version: UInt64, into data: DataRequest) async throws(StoreError) {
        let key = cacheKey
        let served = self.served
        let total = cache.statisticsBox
        let cancelled = Locked(false)
        let outcome: Result<Void, StoreError> = await withTaskCancellationHandler {
            do throws(StoreError) {
                try await cache.storeIO.read { store throws(StoreError) in
                    try store.forEachSlice(forKey: key, range: range, includeExpired: true, version: version) { piece in
                        guard !cancelled.current else { return false }
                        data.respond(with: piece)
                        served.withLock { $0.bytesServedFromStore += piece.count }
                        total.withLock { $0.bytesServedFromStore += piece.count }
                        return true
                    }
                }
                return .success(())
            } catch {
                return .failure(error)
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
        try outcome.get()
    }

    /// Fetches every missing byte into the store (what ``StreamingItem/download()``
    /// and `OfflineDownloader` do), reporting (cached bytes, length) as it goes.
    /// Already cached chunks are not fetched again; cancelling the calling task stops it.
    ///
    /// With more than one connection, the missing ranges are split into
    /// about equal segments at chunk boundaries, fetched by that many
    /// transfers at once, each in requests of at least 8 MiB (fewer round
    /// trips). Each is admitted by the cache's
    /// ``FetchScheduler`` like any transfer (so never more than its
    /// `connectionsPerHost` at once, and a player takes a connection
    /// first); each request carries the version's validators and writes
    /// into that exact entry version. A segment's transfer refuses a `200`
    /// (the origin ignored `Range`): the rest is then fetched over one
    /// connection, as a single stream reads a `200` on.
    ///
    /// A stored part of an older version (the origin changed while the
    /// download was stopped) is dropped when the first responses tell the
    /// change, before any byte of this call arrived, and the download starts
    /// over on the new version, once. A change told after bytes arrived
    /// fails it with ``StreamingError/resourceChanged(url:)``.
    ///
    /// - returns: the `EntryInfo.version` of the store entry that now
    ///   holds every byte (pin exactly that one: `MediaStore.setPinned(_:forKey:version:)`).
    /// - throws: ``StreamingError``; a resource played without caching cannot be downloaded.
    /// - parameters:
    ///   - priority: what its transfers yield to (``FetchScheduler``): a
    ///     download yields to preloads and players, a preload to players.
    ///   - connections: transfers at once (at most the scheduler's
    ///     `connectionsPerHost`); 1 by default.
    ///   - progress: called with (cached bytes, length) as bytes arrive.
    @discardableResult
    public func downloadAll(
        priority: FetchPriority = .download, connections: Int = 1,
        progress: @Sendable (Int, Int) -> Void = { _, _ in }
    ) async throws(StreamingError) -> UInt64 {
        // The fetcher dropped the old version's entry when it saw the change.
        var startedOver = false
        while true {
            let received = Locked(0)
            do {
                return try await downloadOnce(priority: priority, connections: connections) { bytes, cached, length in
                    received.withLock { $0 += bytes }
                    progress(cached, length)
                }
            } catch {
                guard case .resourceChanged = error, received.current == 0, !startedOver else { throw error }
                startedOver = true
                // A segment may have seen the change before the fetcher was
                // done dropping the old version: asked now, the new pass
                // would be failed with the old version's waiters.
                await fetcher.changeHandled()
            }
        }
    }

    /// One pass of ``downloadAll(priority:connections:progress:)``:
    /// `progress` is told (bytes received now, cached bytes, length).
    private func downloadOnce(
        priority: FetchPriority, connections: Int, progress: @Sendable (Int, Int, Int) -> Void
    ) async throws(StreamingError) -> UInt64 {
        do {
            let info = try await fetcher.contentInformation(url: url, headers: headers, priority: priority)
            let length = info.contentLength
            if let reason = await fetcher.cachingSkipped {
                throw StreamingError.notCacheable(reason: reason)
            }
            let key = cacheKey
            var cached =
                try await cache.storeIO.read { store throws(StoreError) in try store.info(forKey: key) }?.cachedBytes
                ?? 0
            progress(0, cached, length)
            let count = min(max(1, connections), fetcher.scheduler.connectionsPerHost)
            if count > 1 {
                do {
                    try await fetchSegments(connections: count, priority: priority) { bytes in
                        cached = min(length, cached + bytes)
                        progress(bytes, cached, length)
                    }
                } catch StreamingError.origin(.httpStatus(code: 200, _)) {
                    // The origin ignored `Range`: one connection reads on.
                }
            }
            while let hole = try await fetcher.firstMissingByte(from: 0) {
                try Task.checkCancellation()
                guard
                    case .stream(let stream) = try await fetcher.plan(
                        from: hole, url: url, headers: headers, priority: priority)
                else {
                    continue
                }
                for try await piece in stream {
                    cached = min(length, cached + piece.count)
                    progress(piece.count, cached, length)
                }
                try Task.checkCancellation()
                if let reason = await fetcher.cachingSkipped {
                    throw StreamingError.notCacheable(reason: reason)
                }
            }
            guard let version = await fetcher.entryVersion else {
                throw StreamingError.notCacheable(
                    reason: await fetcher.cachingSkipped ?? "the store entry was replaced")
            }
            progress(0, length, length)
            return version
        } catch {
            throw StreamingError.wrap(error)
        }
    }

    /// Bytes a download's segment asks for per request, at least: a
    /// request costs a round trip before its first byte, so on a link of
    /// 2.5 MB/s per connection and 50 ms round trips an 8 MiB request loses
    /// about 1.5% of the connection's time to it (a 1 MiB one about 11%).
    /// A request ended early (outranked, a retry) loses nothing stored.
    static let segmentRequestBytes = 8 << 20

    /// Fetches the missing ranges as segments over `connections`
    /// transfers at once, telling `received` the bytes of each piece (on
    /// the calling task). Ends when every segment was fetched, or throws
    /// the first failure (the other transfers are then left, as a
    /// cancelled download's are).
    private func fetchSegments(
        connections: Int, priority: FetchPriority, received: (Int) -> Void
    ) async throws {
        let fetcher = self.fetcher
        let chunkSize = cache.store.configuration.chunkSize
        let segments = DownloadSegments.split(
            try await fetcher.missingRanges(), connections: connections, chunkSize: chunkSize)
        guard !segments.isEmpty else { return }
        let queue = Locked(segments[...])
        let (url, headers) = (self.url, self.headers)
        let (counts, counter) = AsyncStream<Int>.makeStream()
        async let fetched: Void = {
            defer { counter.finish() }
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<min(connections, segments.count) {
                    group.addTask {
                        while let segment = queue.withLock({ $0.popFirst() }) {
                            try await Self.fetch(
                                segment, fetcher: fetcher, url: url, headers: headers, priority: priority
                            ) { counter.yield($0) }
                        }
                    }
                }
                // The first failure stops the others; a change of the resource
                // is what is told when a segment saw it (the others then fail
                // for it too, or plan against a resource no longer known).
                var failure: (any Error)?
                while let result = await group.nextResult() {
                    guard case .failure(let error) = result else { continue }
                    group.cancelAll()
                    if failure == nil || StreamingError.wrap(error).isResourceChange { failure = error }
                }
                if let failure { throw failure }
            }
        }()
        for await bytes in counts { received(bytes) }
        try await fetched
    }

    /// Fetches what is missing of `segment`, one transfer at a time
    /// (bounded by the segment's end), telling `received` each piece's size.
    private static func fetch(
        _ segment: Range<Int>, fetcher: ResourceFetcher, url: URL, headers: [String: String],
        priority: FetchPriority, received: (Int) -> Void
    ) async throws {
        let requests = SegmentRequests(requestBytes: segmentRequestBytes, refusesWholeBody: true)
        var from = segment.lowerBound
        var idleRounds = 0
        while let hole = try await fetcher.firstMissingByte(from: from), hole < segment.upperBound {
            try Task.checkCancellation()
            if let reason = await fetcher.cachingSkipped { throw StreamingError.notCacheable(reason: reason) }
            if case .stream(let stream) = try await fetcher.plan(
                from: hole, url: url, headers: headers, priority: priority, until: segment.upperBound,
                segment: requests)
            {
                for try await piece in stream { received(piece.count) }
            }
            // A transfer that brought nothing (its readers left it, the
            // store refused) is not asked again forever.
            idleRounds = hole == from ? idleRounds + 1 : 0
            if idleRounds > 50 {
                throw OriginError.connectionLost(reason: "no progress downloading \(url.absoluteString.prefix(200))")
            }
            from = hole
        }
    }
}

extension StreamingError {
    /// Whether it says the resource changed at the origin.
    fileprivate var isResourceChange: Bool {
        if case .resourceChanged = self { return true }
        return false
    }
}

import Foundation
import MediaStore
import MediaSupport

/// Coordinates everything about one cached resource (one cache key):
/// its content information, its revalidation, and the transfers that
/// fill its holes. Every reader of the key, from any item, goes through
/// the same fetcher, so two players share one transfer.
///
/// The work is split by concern: ``ResponseValidator`` judges responses
/// (pure), ``TransferRunner`` moves bytes from the origin (retries, stall
/// watchdog), each transfer's ``ChunkSink`` writes them to the store
/// through ``StoreIO`` (off the concurrency pool); this actor keeps the
/// resource's state and decides: reads and transfers here, content
/// information in `ResourceFetcher+ContentInformation.swift`, what it does
/// for a running transfer in `ResourceFetcher+TransferCoordinator.swift`.
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
    let runner: TransferRunner

    // State shared with the extensions in ResourceFetcher+*.swift.
    var information: ContentInformation?
    /// The change that made the content information unknown, until it is
    /// resolved again: what a read planned meanwhile fails with.
    var change: StreamingError?
    /// Changes being handled (``contentChanged(_:)`` waits for the store).
    private var changesInProgress = 0
    /// Callers of ``changeHandled()`` waiting for those to end.
    private var changeWaiters: [CheckedContinuation<Void, Never>] = []
    /// Callers waiting for the content information, by id (a caller that
    /// is cancelled leaves; the probe stops once none is left).
    var infoWaiters: [Int: CheckedContinuation<ContentInformation, any Error>] = [:]
    var nextWaiterID = 0
    var resolving = false
    /// The validators of the version being cached.
    var validators = ResourceValidators()
    /// The store entry version this fetcher serves and fills
    /// (`EntryInfo/version`); `nil` until known or when not caching.
    var entryVersion: UInt64?
    /// The preparation whose entry this fetcher will serve, while it runs:
    /// the one a probe began last, until it ends, or the content changes
    /// (``EntryPreparation``). Meanwhile ``entryVersion`` is `nil`.
    var entryPreparation: EntryPreparation?
    /// The preparation begun last, current or abandoned: the next one
    /// begins once it has ended (one at a time per entry).
    var lastPreparation: EntryPreparation?
    /// Why the resource is played without caching, when it is.
    private(set) var cachingSkipped: String?
    var lease: EntryLease?
    var transfers: [Int: Transfer] = [:]
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
        self.runner = TransferRunner(
            origin: origin, requestBytes: chunkSize * configuration.chunksPerRequest,
            retryPolicy: configuration.retryPolicy, stallTimeout: configuration.stallTimeout)
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
        for transfer in transfers.values { transfer.sink.stopStoring() }
        guard cachingSkipped == nil else { return }
        cachingSkipped = reason
        observation.withLock { state in
            state.cachingSkipped = reason
            for handler in state.handlers.values { handler(.cachingSkipped(reason: reason)) }
        }
    }

    // MARK: Planning reads

    /// Where the bytes from `offset` come from: the store, a running
    /// transfer (joined), or a new transfer over the hole at `offset`.
    /// A transfer runs at the highest `priority` of its readers.
    /// A new transfer starts at the chunk boundary before `offset`, or at
    /// the end of the short chunk stored there, and stops at `until`, when
    /// given (what it received of its last chunk is stored as a short one).
    /// A reader with `until` has its stream end once it was handed every
    /// byte before `until` and they are stored (or its transfer ended).
    ///
    /// A download's segment (``ResourceLoader/downloadAll(priority:connections:progress:)``)
    /// gives `segment`: the bytes per request of the transfer it starts or
    /// joins (at least), and whether a new transfer refuses a `200`.
    func plan(
        from offset: Int, url: URL, headers: [String: String], priority: FetchPriority = .playback,
        until: Int? = nil, segment: SegmentRequests? = nil
    ) async throws -> ReadPlan {
        guard let info = information else {
            throw change ?? StreamingError.origin(.malformedResponse(reason: "no content information"))
        }
        let length = info.contentLength
        guard offset < length else { return .end }
        var holeEnd = length
        var start = offset / chunkSize * chunkSize
        if cachingSkipped == nil {
            let ranges = try await servedRanges()
            // The resource may have changed while the store was read.
            guard information?.contentLength == length else { throw StreamingError.resourceChanged(url: url) }
            if let cached = ranges.first(where: { $0.contains(offset) }), let entryVersion {
                return .store(offset..<cached.upperBound, version: entryVersion)
            }
            if let next = ranges.first(where: { $0.lowerBound > offset }) { holeEnd = next.lowerBound }
            // A short chunk before `offset` is continued, not fetched again.
            if let short = ranges.last(where: { $0.upperBound > start && $0.upperBound <= offset }) {
                start = short.upperBound
            }
        }
        let lookahead = configuration.lookaheadBytes ?? requestBytes
        let now = ContinuousClock.now
        let joinable = transfers.values.filter {
            !$0.isStopped && !$0.isFailing && $0.bufferStart <= offset && offset < $0.end
                && offset <= $0.position + lookahead
                && isWorthJoining($0, at: offset, now: now)
        }
        if let transfer = joinable.min(by: { $0.position > $1.position }) {
            if let segment, segment.requestBytes > transfer.requestBytes ?? requestBytes {
                transfer.requestBytes = segment.requestBytes
            }
            // A reader that is no segment takes a whole body read on from its
            // start (a download's one connection after its segments were
            // refused one, joining a segment's transfer still running).
            if segment == nil { transfer.refusesWholeBody = false }
            return .stream(subscribe(transfer, from: offset, priority: priority, until: until))
        }
        if let until { holeEnd = min(holeEnd, max(offset + 1, until)) }
        for other in transfers.values where !other.isStopped {
            if other.bufferStart > start { holeEnd = min(holeEnd, other.bufferStart) }
            if other.position <= start && start < other.end { other.end = start }
        }
        let transfer = makeTransfer(
            start: start, end: holeEnd, url: url, headers: headers, isProbe: false, priority: priority)
        if let segment {
            transfer.requestBytes = max(requestBytes, segment.requestBytes)
            transfer.refusesWholeBody = segment.refusesWholeBody
        }
        let stream = subscribe(transfer, from: offset, priority: priority, until: until)
        launch(transfer)
        return .stream(stream)
    }

    /// Whether a reader at `offset` (within the lookahead) waits for
    /// `transfer`: within the chunk's worth of bytes ahead of its position,
    /// always; further, only when the transfer at its measured pace brings
    /// the offset sooner than a request of the reader's own would
    /// (``TransferPace``). A transfer whose pace is not known yet is not
    /// waited for that far ahead: a seek on a slow link would wait for
    /// every byte in between.
    private func isWorthJoining(_ transfer: Transfer, at offset: Int, now: ContinuousClock.Instant) -> Bool {
        let position = transfer.position
        if offset - position <= chunkSize { return true }
        return transfer.pace?.isWorthWaiting(for: offset, position: position, now: now) ?? false
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

    /// The ranges of the resource not in the store (all of it while the
    /// length is unknown: none then).
    func missingRanges() async throws -> [Range<Int>] {
        guard let length = information?.contentLength else { return [] }
        var missing: [Range<Int>] = []
        var position = 0
        for range in try await servedRanges() where range.upperBound > position {
            if range.lowerBound > position { missing.append(position..<min(range.lowerBound, length)) }
            position = max(position, range.upperBound)
        }
        if position < length { missing.append(position..<length) }
        return missing.filter { !$0.isEmpty }
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

    private func subscribe(_ transfer: Transfer, from offset: Int, priority: FetchPriority, until: Int?)
        -> ReaderStream
    {
        let boxes = [statistics, cacheStatistics]
        let channel = ReaderChannel { Self.adjustBacklog($0, boxes) }
        nextID += 1
        let id = nextID
        if offset < transfer.position { channel.send(transfer.sink.buffered(from: offset)) }
        transfer.subscribers[id] = Transfer.Subscriber(
            offset: max(offset, transfer.position), channel: channel, priority: priority, until: until)
        transfer.windingDown = false
        transfer.unreadLimit = nil
        reschedule(transfer)
        let transferID = transfer.id
        return ReaderStream(channel: channel) { [weak self] in
            Task { await self?.unsubscribe(id, from: transferID) }
        }
    }

    /// Reader `id` of the transfer left (its stream was dropped, or its
    /// task cancelled): what the transfer does without it. Told again for
    /// the same reader, it only looks at the transfer again (an uncached
    /// one nobody reads is stopped, as it already was).
    func unsubscribe(_ id: Int, from transferID: Int) {
        guard let transfer = transfers[transferID] else { return }
        let leaving = transfer.subscribers.removeValue(forKey: id)
        // Uncached bytes nobody reads are wasted: stop at once. Cached
        // transfers finish their request (the bytes are kept), but fetch
        // at most about a request's worth more (a later request may be
        // larger), except for a transfer or preload that was stopped: it
        // ends at the next chunk boundary (a stopped transfer fetches
        // nothing more).
        if transfer.subscribers.isEmpty, !(transfer.isProbe && information == nil) {
            if cachingSkipped != nil {
                stop(transfer)
            } else if let leaving, leaving.priority < .playback {
                transfer.windingDown = true
            } else if leaving != nil {
                transfer.unreadLimit = transfer.position + requestBytes
            }
        }
        reschedule(transfer)
    }

    // MARK: Transfers

    func makeTransfer(
        start: Int, end: Int, url: URL, headers: [String: String], isProbe: Bool, priority: FetchPriority
    ) -> Transfer {
        nextID += 1
        // A probe fills the version it prepares; other transfers the one
        // served, or the one being prepared once it exists.
        let preparation = isProbe ? nil : entryPreparation
        let sink = ChunkSink(
            key: key, start: start, chunkSize: chunkSize, storeIO: storeIO,
            version: isProbe || preparation != nil ? nil : entryVersion, isStoring: cachingSkipped == nil)
        let transfer = Transfer(
            id: nextID, start: start, end: end, url: url, headers: headers, isProbe: isProbe, sink: sink,
            ticket: scheduler.makeTicket(priority, host: url.host ?? ""))
        transfer.entryPreparation = preparation
        transfers[transfer.id] = transfer
        return transfer
    }

    func launch(_ transfer: Transfer) {
        let runner = self.runner
        transfer.task = Task { await runner.run(transfer, for: self) }
    }

    private func stop(_ transfer: Transfer) {
        transfer.isStopped = true
        transfer.task?.cancel()
    }

    /// Stops every transfer (readers fail with `cancelled`).
    func cancelAll() {
        for transfer in transfers.values {
            stop(transfer)
            fail(transfer, .cancelled)
        }
    }

    func fail(_ transfer: Transfer, _ error: StreamingError) {
        // A probe abandoned by every waiter was removed already: a newer one may resolve now.
        let isCurrent = transfers.removeValue(forKey: transfer.id) != nil
        for subscriber in transfer.subscribers.values { subscriber.channel.finish(throwing: error) }
        transfer.subscribers = [:]
        if isCurrent && transfer.isProbe && information == nil { failResolution(error) }
    }

    /// Returns once no change of the resource is being handled
    /// (``contentChanged(_:)``): a caller that starts over on the new
    /// version asks after the old one's readers and waiters have failed,
    /// not among them.
    func changeHandled() async {
        guard changesInProgress > 0 else { return }
        await withCheckedContinuation { changeWaiters.append($0) }
    }

    /// The resource changed at the origin: no old byte may be mixed with
    /// new ones, so the entry is dropped, then every reader fails. Readers
    /// arriving meanwhile wait, and fail alike.
    func contentChanged(_ error: StreamingError) async {
        changesInProgress += 1
        defer {
            changesInProgress -= 1
            if changesInProgress == 0 {
                let waiting = changeWaiters
                changeWaiters = []
                for waiter in waiting { waiter.resume() }
            }
        }
        var version = entryVersion
        let preparing = entryPreparation
        information = nil
        change = error
        entryVersion = nil
        // An entry still being prepared is of the old content: it binds
        // nothing when it ends, and is dropped once made (below).
        entryPreparation = nil
        resolving = true
        let stopped = Array(transfers.values)
        for transfer in stopped {
            stop(transfer)
            transfer.stoppedByChange = true
            transfer.sink.stopStoring()
        }
        if let preparing {
            await preparing.done()
            version = version ?? preparing.committed
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
        for transfer in stopped { fail(transfer, error) }
        emit(.revalidated(changed: true))
        failResolution(error)
    }
}

import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// The persistent download queue of a `StreamingCache` (the roles of
/// `AVAssetDownloadURLSession` and media3's `DownloadManager`).
///
/// It runs each download on the engine a ``MediaDownload`` runs on (the
/// states of ``DownloadLifecycle``, numbered runs of a ``DownloadPerformer``,
/// the holds of a completion taken in its store write) and adds what only
/// a queue has: persistence, order and priorities, conditions, a
/// concurrency limit, removal.
///
/// - **Persistent.** Every download is a ``DownloadRecord`` in the
///   ``DownloadIndex`` kept in the cache's own store, saved at each status
///   change. ``open(cache:configuration:monitor:performers:)`` after a
///   relaunch restores them: a transfer that was running is queued again
///   and goes on from the bytes already stored (none is fetched twice);
///   completed downloads stay completed and held.
/// - **Ordered.** Queued downloads start in the order they were enqueued
///   or resumed, at most ``DownloadQueueConfiguration/maxConcurrentDownloads``
///   at once; their transfers run at the record's `FetchPriority` in the
///   cache's `FetchScheduler`, so they yield to players and preloads.
/// - **Conditions.** A download whose ``DownloadConditions`` the
///   ``ConditionsMonitor`` does not meet (or that is discretionary while
///   playback or preloads run, or that would take the volume below the
///   storage floor) waits in ``DownloadStatus/waiting(_:)`` with the
///   reasons, and starts when they are gone.
/// - **Kinds.** Bytes are moved by a ``DownloadPerformer`` per
///   ``DownloadRecord/kind``: ``ProgressiveDownloadPerformer`` built in,
///   others (HLS) registered at opening.
/// - **Background transfers.** With
///   ``DownloadQueueConfiguration/backgroundTransfer`` set, progressive
///   downloads run as download-to-file tasks that go on while the app is
///   suspended (``BackgroundTransferPerformer``), and so do the resources
///   of an HLS download (`HLSDownloadPerformer`); opening the queue
///   adopts the tasks the system still runs and imports what ended
///   meanwhile (see <doc:BackgroundTransfers>).
/// - **Holds.** Each download holds its entries in the store by its own
///   holder, ``holder(of:)`` (`"queue/<id>"`; see `MediaStore.hold(_:by:version:)`),
///   from when it is enqueued or resumed while the queue keeps it: queued,
///   waiting, running, stopped, failed, and **completed**, so an offline
///   download stays until it is removed (as an `AVAssetDownloadTask`'s
///   asset does). ``cancel(_:)`` releases the download's holds (its bytes
///   stay cached, evictable); ``remove(_:)`` releases them and removes
///   every entry of it that nobody else holds. The app's holds
///   (`MediaStore.setPinned`), another download's, an HLS asset's are
///   theirs: the queue never releases them, so an entry two downloads and
///   the app hold stays until the last of them lets it go.
/// - **Records without a holder** (see ``DownloadIndex``) had their
///   entries held by the app: at opening each kept download holds them by
///   its own holder and releases the app's hold it took itself
///   (see `adoptLegacyPins`). A failed adoption is told
///   on ``problems()`` and tried again at the next opening.
/// - **Errors with no caller.** A failed index save, store write or
///   status change of the queue's own work (a download that ended, a
///   scheduling pass, a progress save, a release or removal) is told on
///   ``problems()``, and so is the save of an enqueue (its download is
///   queued all the same); other calls (``stop(_:reason:)``,
///   ``cancel(_:)``…) throw their own.
///
/// ```swift
/// let queue = try await DownloadQueue.open(cache: cache, monitor: SystemConditionsMonitor(volume: store.directory))
/// let record = try await queue.enqueue(albumTrackURL, conditions: .unmetered)
/// for await aggregate in queue.progressUpdates() { print(aggregate.fractionCompleted) }
/// try await queue.completion(of: record.id)
/// ```
public actor DownloadQueue {
    /// The cache downloads go into.
    public nonisolated let cache: StreamingCache
    public nonisolated let configuration: DownloadQueueConfiguration
    /// Supplies the device's state for the downloads' conditions.
    public nonisolated let monitor: any ConditionsMonitor

    let performers: [String: any DownloadPerformer]
    /// Each download's state and runs (the engine, shared with the
    /// in-memory front-ends): its record is the runner's.
    var runners: [UUID: DownloadRunner] = [:]
    /// The downloads taking a slot of ``DownloadQueueConfiguration/maxConcurrentDownloads``:
    /// each started one until the queue stops it or takes in the end of its
    /// run (so observers hear that end before the start it makes room for),
    /// with the number of that run.
    private var slots: [UUID: Int] = [:]
    private var nextOrder: UInt64 = 1
    private var observers: [UUID: AsyncStream<DownloadRecord>.Continuation] = [:]
    let board = DownloadProgressBoard()
    private var loops: [Task<Void, Never>] = []
    private var scheduling = false
    private var scheduleAgain = false
    private var lastProgressSave = ContinuousClock.now
    private var problemObservers: [UUID: AsyncStream<DownloadError>.Continuation] = [:]
    /// Records saved before holds whose pins are not adopted yet (a store
    /// write failed at opening), each with the keys it noted as pinned by
    /// someone else: saved so again, for the next opening to adopt.
    var unadopted: [UUID: Set<ExactKey>] = [:]
    /// Whether ``open(cache:configuration:monitor:performers:)`` restored the queue.
    var isOpen = false
    /// The failures ``report(_:)`` was told of while opening (before anyone could ask for ``problems()``).
    private var openingProblems: [DownloadError] = []
    /// When a player's or a preload's transfer was last seen.
    private var lastHigherPriorityActivity: ContinuousClock.Instant?
    /// Bytes stored at the last save, to save progress only when it moved.
    private var savedBytes: [UUID: Int] = [:]
    /// The number of the latest save of the index begun.
    private var savesBegun: UInt64 = 0
    /// The number of the latest save of the index written (on the store's write queue).
    private let lastSaveWritten = Locked<UInt64>(0)
    /// This queue's claim on the index (each save checks and updates it on the store's write queue).
    private let ownership: Locked<DownloadIndex.Ownership>
    /// Set once a save found a queue opened later over the store: this one
    /// stopped its loops and runs, and saves nothing more.
    private(set) var isSuperseded = false
    /// The downloads that run (queued, waiting, downloading), read by the
    /// background transfer's inbox (its events' handler waits for their deliveries).
    nonisolated let runningDownloads = Locked<Set<UUID>>([])
    /// What the runs of performers of many resources (HLS) fetch with when
    /// ``DownloadQueueConfiguration/backgroundTransfer`` is set.
    private let background: BackgroundFetch?

    private init(
        cache: StreamingCache, configuration: DownloadQueueConfiguration, monitor: any ConditionsMonitor,
        performers: [any DownloadPerformer], ownership: DownloadIndex.Ownership
    ) {
        self.cache = cache
        self.ownership = Locked(ownership)
        self.configuration = configuration
        self.monitor = monitor
        // Import failures go to the configuration's hook and to ``problems()``.
        let reporter = Locked<(@Sendable (DownloadError) -> Void)?>(nil)
        let importFailed: @Sendable (DownloadRecord, TransferImportError) -> Void = {
            [hook = configuration.importFailed] record, error in
            hook(record, error)
            reporter.current?(.transfer("import for \(record.id): \(error)"))
        }
        var byKind: [String: any DownloadPerformer] = [
            ProgressiveDownloadPerformer.kind: configuration.backgroundTransfer.map {
                BackgroundTransferPerformer(
                    transfer: $0, progressInterval: configuration.backgroundProgressInterval,
                    importFailed: importFailed)
            } ?? ProgressiveDownloadPerformer(connections: configuration.connectionsPerDownload)
        ]
        self.background = configuration.backgroundTransfer.map {
            BackgroundFetch(transfer: $0, importFailed: importFailed)
        }
        for performer in performers { byKind[performer.kind] = performer }
        self.performers = byKind
        let report: @Sendable (DownloadError) -> Void = { [weak self] error in
            Task { await self?.report(error) }
        }
        reporter.withLock { $0 = report }
    }

    /// Opens the queue of `cache`'s store: loads the download index
    /// (reconciled with the store: see ``DownloadIndex/load()``), finishes
    /// removals a relaunch interrupted, and starts what may start.
    ///
    /// One queue per store: the latest opening owns the store's index
    /// (``DownloadIndex``). An earlier queue still alive over the same
    /// store (one the app dropped while a save of it was on its way, or
    /// one of another process) finds out at its next save: the save is
    /// refused, ``DownloadError/superseded`` is thrown or told on
    /// ``problems()``, and that queue stops its downloads and saves
    /// nothing more (its records are the later queue's).
    ///
    /// - parameters:
    ///   - cache: the cache downloads go into; its store holds the index.
    ///   - configuration: concurrency, storage floor, polling.
    ///   - monitor: ``SettableConditionsMonitor`` (everything allowed) by
    ///     default; ``SystemConditionsMonitor`` asks the system.
    ///   - performers: performers of other kinds than progressive files.
    /// - throws: ``DownloadError/index(_:)`` when the index cannot be read.
    public static func open(
        cache: StreamingCache, configuration: DownloadQueueConfiguration = DownloadQueueConfiguration(),
        monitor: any ConditionsMonitor = SettableConditionsMonitor(), performers: [any DownloadPerformer] = []
    ) async throws(DownloadError) -> DownloadQueue {
        typealias Loaded = (records: [DownloadRecord], legacy: [UUID: Set<ExactKey>], version: UInt64?)
        var keyed: [String: any CompletionKeyedPerformer] = [:]
        for case let performer as any CompletionKeyedPerformer in performers { keyed[performer.kind] = performer }
        let completionKeyed = keyed
        // Loaded, then claimed if nothing saved the index meanwhile (a
        // queue opened at the same time): else loaded again.
        var attempt = 0
        while true {
            attempt += 1
            let index = try await run(cache.storeIO.read) { store throws(DownloadError) -> Loaded in
                try DownloadIndex(store: store).loadForQueue { record in
                    guard let kind = record.kind, let performer = completionKeyed[kind] else { return nil }
                    return performer.isStored(record, in: cache, store: store)
                }
            }
            let claimed = try await run(cache.storeIO.write) { store throws(DownloadError) in
                try DownloadIndex(store: store).claim(ifIndexAt: index.version)
            }
            guard let ownership = claimed else {
                if attempt < 8 { continue }
                throw .superseded
            }
            let queue = DownloadQueue(
                cache: cache, configuration: configuration, monitor: monitor, performers: performers,
                ownership: ownership)
            try await queue.restore(index.records, legacy: index.legacy)
            // The service's tasks are sorted out before any run lists them.
            await queue.reconcileTransfers()
            await queue.schedule()
            await queue.startLoops()
            return queue
        }
    }

    /// Runs `body` through `perform` (a `StoreIO` call), its failures (a
    /// store's or its own) as a ``DownloadError``.
    private static func run<T: Sendable>(
        _ perform: (@escaping @Sendable (MediaStore) throws(StoreError) -> Result<T, DownloadError>)
            async throws(StoreError) -> Result<T, DownloadError>,
        _ body: @escaping @Sendable (MediaStore) throws(DownloadError) -> T
    ) async throws(DownloadError) -> T {
        let result: Result<T, DownloadError>
        do {
            result = try await perform { store in Result { () throws(DownloadError) in try body(store) } }
        } catch {
            throw .store(error)
        }
        return try result.get()
    }

    deinit {
        for loop in loops { loop.cancel() }
        for runner in runners.values { runner.stopRuns() }
    }

    // MARK: Reading

    /// The records of the downloads, by id (each read from its runner).
    struct Records {
        let runners: [UUID: DownloadRunner]
        subscript(id: UUID) -> DownloadRecord? { runners[id]?.record }
        var values: [DownloadRecord] { runners.values.map(\.record) }
    }

    /// The downloads' records now.
    var records: Records { Records(runners: runners) }

    /// Every download, in queue order.
    public var downloads: [DownloadRecord] { orderedIDs().compactMap { records[$0] } }

    /// The download `id`, if the queue holds it.
    public func download(_ id: UUID) -> DownloadRecord? { records[id] }

    /// Each change of any download (its record after the change), from now
    /// on, until the stream is dropped. A removed download's last record
    /// has ``DownloadStatus/removing``. Bytes that moved are told at each
    /// poll (``DownloadQueueConfiguration/pollInterval``) and with each
    /// save of the index.
    public func updates() -> AsyncStream<DownloadRecord> { updates(bufferingPolicy: .bufferingNewest(256)) }

    /// ``updates()`` buffered by `bufferingPolicy` (the activity feed's
    /// is unbounded: a status it missed would leave a download in flight).
    func updates(bufferingPolicy: AsyncStream<DownloadRecord>.Continuation.BufferingPolicy) -> AsyncStream<
        DownloadRecord
    > {
        let (stream, continuation) = AsyncStream<DownloadRecord>.makeStream(bufferingPolicy: bufferingPolicy)
        let id = UUID()
        observers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        return stream
    }

    private func removeObserver(_ id: UUID) { observers[id] = nil }

    /// Waits until download `id` completes (returns) or fails (throws its
    /// failure; ``DownloadError/cancelled`` when cancelled). A
    /// stopped download is waited for until it is resumed and ends.
    public func completion(of id: UUID) async throws(DownloadError) {
        let stream = updates()
        func verdict(_ record: DownloadRecord?) -> Result<Void, DownloadError>? {
            guard let record else { return .failure(.cancelled) }
            switch record.status {
            case .completed: return .success(())
            case .failed(let failure): return .failure(failure)
            case .removing: return .failure(.cancelled)
            default: return nil
            }
        }
        if let result = verdict(records[id]) { return try result.get() }
        for await record in stream {
            if record.id == id, let result = verdict(record) { return try result.get() }
            // A burst of changes beyond the stream's buffer drops the oldest
            // (the download's own end among them): the record now decides.
            if let result = verdict(records[id]) { return try result.get() }
        }
        throw .cancelled
    }

    /// The current batch's aggregate progress (see ``AggregateDownloadProgress``):
    /// `totalUnitCount` and `completedUnitCount` in bytes, throughput and
    /// estimated time remaining in its `userInfo`; cancelled by ``cancelAll()``.
    /// A new batch (a new `Progress`) starts when a download becomes active
    /// while none was.
    public nonisolated var progress: Progress { board.progress }

    /// The aggregate progress now.
    public nonisolated var aggregateProgress: AggregateDownloadProgress { board.snapshot }

    /// The aggregate progress now, then at each change.
    public nonisolated func progressUpdates() -> AsyncStream<AggregateDownloadProgress> { board.updates() }

    // MARK: Changing

    /// Queues `url` (or returns the download of its cache key the queue
    /// already holds, resumed when stopped or failed).
    ///
    /// The download holds its entries already in the store at once (see
    /// ``holder(of:)``); others' holds on them are theirs, and stay
    /// through ``cancel(_:)`` and ``remove(_:)``.
    ///
    /// A failed save of the index is told on ``problems()``: the download
    /// is queued all the same, and the next save writes it.
    ///
    /// - parameters:
    ///   - url: what to download.
    ///   - cacheKey: its key; the cache's `CacheKeyPolicy` by default.
    ///   - headers: sent with its origin requests.
    ///   - kind: the ``DownloadPerformer`` kind; progressive by default.
    ///   - priority: what its transfers yield to; `FetchPriority/download` by default.
    ///   - conditions: when it may run; anything goes by default.
    /// - returns: its record (status queued, or waiting with the reasons).
    @discardableResult
    public func enqueue(
        _ url: URL, cacheKey: String? = nil, headers: [String: String] = [:], kind: String? = nil,
        priority: FetchPriority = .download, conditions: DownloadConditions = .any
    ) async throws(DownloadError) -> DownloadRecord {
        guard !isSuperseded else { throw .superseded }
        let key = cacheKey ?? cache.cacheKey(for: url)
        let kindName = kind ?? ProgressiveDownloadPerformer.kind
        guard performers[kindName] != nil else { throw .unknownKind(kindName) }
        var record = DownloadRecord(
            url: url, cacheKey: key, headers: headers, kind: kind, priority: priority, conditions: conditions,
            queueOrder: 0)
        if let existing = held(like: record) { return try await reuse(existing) }
        // Bytes so far, from the entry under its cache key; a performer that
        // stores it under another key (HLS) reports its own as it runs.
        var info: EntryInfo?
        if keyedPerformer(of: record) == nil {
            do {
                info = try await cache.storeIO.read { store throws(StoreError) in try store.info(forKey: key) }
            } catch {
                throw .store(error)
            }
        }
        // Another call may have queued the key while the store was read (an
        // actor lets other calls in at an `await`): that one is the download.
        if let existing = held(like: record) { return try await reuse(existing) }
        record.queueOrder = takeOrder()
        if let info {
            record.bytesStored = info.cachedBytes
            record.totalBytes = info.length
        }
        runners[record.id] = runner(of: record)
        board.activate(record.id, bytes: record.bytesStored, total: record.totalBytes)
        // Registered: it is queued (another call may start it at this
        // await), so a failed save is told on `problems()`, not thrown;
        // unless a later queue has the store.
        do throws(DownloadError) {
            try await commit([record.id])
        } catch .superseded {
            throw .superseded
        } catch {
            report(error)
        }
        await holdEntries(of: [record.id])
        await schedule()
        return records[record.id] ?? record
    }

    /// The download the queue holds (not being removed) of the same
    /// performer kind as `record` and the same entry: its cache key, or for
    /// a performer that stores it under a key of its own (HLS: the master
    /// playlist's, under the key policy), that key: one asset queued under
    /// two cache keys is one download (as two, removing one deleted the
    /// asset the other still reported completed). Keys compare by their
    /// bytes, as the store's: two
    /// canonically equal `String`s of different bytes are two entries, and
    /// two downloads (one was taken for the other, and never fetched).
    private func held(like record: DownloadRecord) -> DownloadRecord? {
        let kind = record.kind ?? ProgressiveDownloadPerformer.kind
        let key = entryKey(of: record)
        return records.values.first {
            guard ($0.kind ?? ProgressiveDownloadPerformer.kind) == kind, $0.status != .removing else { return false }
            return ExactKey.equal(entryKey(of: $0), key)
        }
    }

    /// The key of the entry that holds `record`'s download: its cache key,
    /// or what its performer stores it under (``CompletionKeyedPerformer``:
    /// an HLS asset's master playlist, under the key policy).
    func entryKey(of record: DownloadRecord) -> String {
        keyedPerformer(of: record)?.completionKey(of: record, in: cache) ?? record.cacheKey
    }

    /// `record`'s performer when it stores the download under a key of its own.
    func keyedPerformer(of record: DownloadRecord) -> (any CompletionKeyedPerformer)? {
        performers[record.kind ?? ProgressiveDownloadPerformer.kind] as? any CompletionKeyedPerformer
    }

    /// What ``enqueue(_:cacheKey:headers:kind:priority:conditions:)`` returns for a download it
    /// already holds: resumed when stopped or failed.
    private func reuse(_ existing: DownloadRecord) async throws(DownloadError) -> DownloadRecord {
        switch existing.status {
        case .stopped, .failed: try await resume(existing.id)
        default: break
        }
        return records[existing.id] ?? existing
    }

    /// Stops download `id`; ``resume(_:)`` queues it again. Its bytes stay
    /// (held).
    public func stop(_ id: UUID, reason: StopReason = .user) async throws(DownloadError) {
        guard !isSuperseded else { throw .superseded }
        try apply(.stop(reason), to: id)
        board.end(id, as: .stopped, bytes: records[id]?.bytesStored)
        await holdEntries(of: [id])
        try await commit([id])
        await schedule()
    }

    /// Queues a stopped or failed download again, behind the others (the
    /// queue's order is the order of starts and resumes). A cancelled one
    /// holds its entries again.
    public func resume(_ id: UUID) async throws(DownloadError) {
        guard !isSuperseded else { throw .superseded }
        let wasFailed: Bool
        if case .failed = records[id]?.status { wasFailed = true } else { wasFailed = false }
        try apply(.resume, to: id)
        let order = takeOrder()
        runners[id]?.edit { record in
            record.queueOrder = order
            if wasFailed { record.attempts = 0 }
        }
        if let record = records[id] { board.activate(id, bytes: record.bytesStored, total: record.totalBytes) }
        try await commit([id])
        await holdEntries(of: [id])
        await schedule()
    }

    /// Cancels download `id`: it fails with ``DownloadError/cancelled``
    /// and releases its holds (what it fetched stays cached, evictable
    /// unless someone else holds it).
    public func cancel(_ id: UUID) async throws(DownloadError) {
        guard !isSuperseded else { throw .superseded }
        try apply(.cancel, to: id)
        board.end(id, as: .cancelled)
        await releaseHolds(of: [id])
        try await commit([id])
        await schedule()
    }

    /// Cancels every download that has not completed or failed (the role of
    /// `invalidateAndCancel()`): each fails with ``DownloadError/cancelled``
    /// and releases its holds (as ``cancel(_:)``); the batch's ``progress`` is cancelled.
    public func cancelAll() async throws(DownloadError) {
        guard !isSuperseded else { throw .superseded }
        var cancelled: [UUID] = []
        let cancellable: (DownloadStatus) -> Bool = {
            switch $0 {
            case .queued, .waiting, .downloading, .stopped: true
            default: false
            }
        }
        for id in orderedIDs() {
            guard (try? runners[id]?.apply(.cancel, when: cancellable)) == true else { continue }
            slots[id] = nil
            board.end(id, as: .cancelled)
            cancelled.append(id)
        }
        board.cancelBatch()
        await releaseHolds(of: cancelled)
        try await commit(cancelled)
    }

    /// Cancels each of `ids` as ``cancel(_:)`` does, in one pass: one
    /// release of their holds and one save of the index for all of them;
    /// the batch's ``progress`` is cancelled, as by ``cancelAll()``.
    ///
    /// - returns: each cancel's result: a download unknown or past
    ///   cancelling fails its own (and is left as it is); a failed save
    ///   fails each cancelled one's.
    func cancelAll(_ ids: [UUID]) async -> [UUID: Result<Void, DownloadError>] {
        var results: [UUID: Result<Void, DownloadError>] = [:]
        var cancelled: [UUID] = []
        for id in ids {
            do throws(DownloadError) {
                try apply(.cancel, to: id)
                board.end(id, as: .cancelled)
                cancelled.append(id)
            } catch {
                results[id] = .failure(error)
            }
        }
        guard !cancelled.isEmpty else { return results }
        board.cancelBatch()
        await releaseHolds(of: cancelled)
        let saved: Result<Void, DownloadError>
        do throws(DownloadError) {
            try await commit(cancelled)
            saved = .success(())
        } catch {
            saved = .failure(error)
        }
        for id in cancelled { results[id] = saved }
        await schedule()
        return results
    }

    /// Removes download `id` and every entry of it nobody else holds (the
    /// app's, another download's, an HLS asset's stay, held). When that
    /// store work fails (told on ``problems()``), the download stays,
    /// removing, and the next opening finishes the removal.
    public func remove(_ id: UUID) async throws(DownloadError) {
        guard !isSuperseded else { throw .superseded }
        try apply(.remove, to: id)
        try await commit([id])
        await finishRemoval(of: id)
        await schedule()
    }

    /// Changes the conditions of download `id` (checked again at once).
    public func setConditions(_ conditions: DownloadConditions, for id: UUID) async throws(DownloadError) {
        guard !isSuperseded else { throw .superseded }
        guard records[id] != nil else { throw .unknownDownload(id) }
        runners[id]?.edit { $0.conditions = conditions }
        try await commit([id])
        await schedule()
    }

    // MARK: Running

    /// Applies `event` to `id`'s record through ``DownloadLifecycle`` (its
    /// runner: a download no longer downloading stops its run).
    private func apply(_ event: DownloadEvent, to id: UUID) throws(DownloadError) {
        guard let runner = runners[id] else { throw .unknownDownload(id) }
        try runner.apply(event)
        if runner.status != .downloading { slots[id] = nil }
    }

    /// The runner of `record`, new to the queue. Its progress goes to the
    /// batch's; its entries are held as soon as a run has bytes (they may
    /// not have existed at the enqueue; a process killed mid-download
    /// leaves them held for the relaunch): once a run, at its first bytes,
    /// while that run is live (see ``holdEntries(of:forRun:)``).
    func runner(of record: DownloadRecord) -> DownloadRunner {
        let (id, board) = (record.id, board)
        let heldRun = Locked(0)
        // Resume data kept by a run (also a stopped one's, after the stop's save) is saved at once.
        let kept: @Sendable (DownloadRunner) -> Void = { [weak self] _ in
            Task { await self?.commitReporting([]) }
        }
        let changed: @Sendable (DownloadRunner) -> Void = { [weak self] runner in
            self?.noteRunning(id, status: runner.status)
            let progress = runner.snapshot
            guard progress.state == .downloading else { return }
            board.update(id, bytes: progress.bytes, total: progress.total > 0 ? progress.total : nil)
            let run = runner.latestRun
            guard progress.bytes > 0,
                heldRun.withLock({ held in
                    defer { held = max(held, run) }
                    return held < run
                })
            else { return }
            Task { await self?.holdEntries(of: id, forRun: run) }
        }
        return DownloadRunner(record: record, holder: Self.holder(of: id), changed: changed, resumeKept: kept)
    }

    /// The store holder download `id` holds its entries by: `"queue/<id>"`.
    public nonisolated static func holder(of id: UUID) -> String { "queue/\(id.uuidString)" }

    /// The download whose holder (``holder(of:)``) `holder` is, if it is one.
    package nonisolated static func download(ofHolder holder: String) -> UUID? {
        guard holder.hasPrefix("queue/") else { return nil }
        return UUID(uuidString: String(holder.dropFirst("queue/".count)))
    }

    /// Makes later starts and resumes order after `last` (restored records).
    func skipOrders(past last: UInt64) { nextOrder = max(nextOrder, last + 1) }

    private func takeOrder() -> UInt64 {
        defer { nextOrder += 1 }
        return nextOrder
    }

    func orderedIDs() -> [UUID] {
        records.values.sorted { ($0.queueOrder, $0.created) < ($1.queueOrder, $1.created) }.map(\.id)
    }

    private func performer(for record: DownloadRecord) -> (any DownloadPerformer)? {
        performers[record.kind ?? ProgressiveDownloadPerformer.kind]
    }

    /// Starts queued download `id`.
    private func start(_ id: UUID) {
        guard let runner = runners[id] else { return }
        guard let performer = performer(for: runner.record) else {
            applyReporting(.start, to: id)
            applyReporting(.fail(.unsupported("no performer for \(runner.record.kind ?? "?")")), to: id)
            return
        }
        // Progressive downloads have their own performer for it (BackgroundTransferPerformer).
        let background = LaunchReconciliation.hasManyTasks(runner.record) ? background : nil
        // Runs through background tasks name them alike: one at a time.
        if runner.start(
            performer: performer, cache: cache, background: background,
            afterPrevious: configuration.backgroundTransfer != nil,
            ended: { [weak self] run in await self?.ended(id, run: run) })
        {
            slots[id] = runner.latestRun
        }
    }

    /// ``apply(_:to:)`` for the queue's own work: a failure is told on ``problems()``.
    private func applyReporting(_ event: DownloadEvent, to id: UUID) {
        do { try apply(event, to: id) } catch { report(error) }
    }

    /// Run `run` of download `id` completed or failed it (a stopped run's end is not told).
    private func ended(_ id: UUID, run: Int) async {
        if slots[id] == run { slots[id] = nil }
        // Resumed and started again since: the later run tells its own end.
        let status = runners[id]?.latestRun == run ? records[id]?.status : nil
        switch status {
        case .completed:
            board.end(id, as: .completed)
        case .failed:
            runners[id]?.edit { $0.attempts += 1 }
            board.end(id, as: .failed)
            await holdEntries(of: [id])
        default:
            // Resumed, stopped or removed since: that call told the board.
            break
        }
        await commitReporting([id])
        await schedule()
    }

    /// Starts the loops that re-check conditions: on each monitor change,
    /// and every ``DownloadQueueConfiguration/pollInterval`` while downloads are active.
    private func startLoops() {
        let updates = monitor.updates()
        loops.append(
            Task { [weak self] in
                for await _ in updates {
                    guard let self else { return }
                    await self.schedule()
                }
            })
        let interval = configuration.pollInterval
        loops.append(
            Task { [weak self] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    guard let self else { return }
                    await self.tick()
                }
            })
    }

    /// One poll: conditions again, progress to observers, and progress
    /// saved every few seconds.
    private func tick() async {
        guard records.values.contains(where: { $0.status.isActive }) else { return }
        let moved = records.values.filter { $0.status == .downloading && savedBytes[$0.id] != $0.bytesStored }
        if !moved.isEmpty, ContinuousClock.now - lastProgressSave > .seconds(2) {
            // The save tells them (once).
            await commitReporting([])
        } else {
            for record in moved { notify(record) }
        }
        await schedule()
    }

    /// Saves the index and tells observers about `changed`.
    ///
    /// Saves may reach the store's write queue in another order than they
    /// began (each hops through the concurrency pool first): one that finds
    /// a later one written writes nothing, as that one holds all it has.
    func commit(_ changed: [UUID]) async throws(DownloadError) {
        let (list, unadopted) = (downloads, unadopted)
        savesBegun += 1
        let number = savesBegun
        lastProgressSave = .now
        // Observers hear of changes in the order they were made (before the
        // save's await lets another change in): first the bytes that moved
        // since the last save (once marked saved, no poll tells them), then `changed`.
        let told = Set(changed)
        for record in list
        where !told.contains(record.id) && record.status == .downloading && savedBytes[record.id] != record.bytesStored
        {
            notify(record)
        }
        for record in list { savedBytes[record.id] = record.bytesStored }
        for id in changed { if let record = records[id] { notify(record) } }
        if let hook = configuration.indexSaveHook { await hook() }
        guard !isSuperseded else { throw .superseded }
        let saved: Result<Void, DownloadError>
        do {
            saved = try await cache.storeIO.write { [lastSaveWritten, ownership, configuration] store in
                Result<Void, DownloadError> { () throws(DownloadError) in
                    // Writes run one at a time: nothing comes between the check and the mark.
                    guard lastSaveWritten.current < number else { return }
                    do throws(StoreError) { try configuration.indexWriteHook?() } catch { throw .store(error) }
                    let saved = try DownloadIndex(store: store).save(list, unadopted: unadopted, as: ownership.current)
                    ownership.withLock { $0 = saved }
                    lastSaveWritten.withLock { $0 = number }
                }
            }
        } catch {
            saved = .failure(.store(error))
        }
        if case .failure(let error) = saved {
            if error == .superseded { retire() }
            throw error
        }
    }

    /// Stops what this queue runs for good, once a queue opened later over
    /// the same store has the downloads (its records stay as they are: the
    /// newer queue saves them).
    private func retire() {
        guard !isSuperseded else { return }
        isSuperseded = true
        report(.superseded)
        for loop in loops { loop.cancel() }
        loops = []
        for runner in runners.values { runner.stopRuns() }
        slots = [:]
    }

    /// ``commit(_:)`` for the queue's own work, with no caller to throw
    /// to: a failure is told on ``problems()``.
    func commitReporting(_ changed: [UUID]) async {
        // A refusal for a later queue was told once, as this queue retired.
        do { try await commit(changed) } catch  where error != .superseded { report(error) } catch {}
    }

    func notify(_ record: DownloadRecord) {
        for observer in observers.values { observer.yield(record) }
    }

    /// The failures of the queue's own work that no call can throw (see
    /// ``DownloadQueue``, "Errors with no caller"): a save of the index
    /// (``DownloadError/index(_:)``) or a hold, release, removal or
    /// eviction in the store (``DownloadError/store(_:)``), from now on, until
    /// the stream is dropped. Each stream starts with the failures of the
    /// queue's opening (pins of an index saved before holds that could not
    /// be adopted: adopted again at the next opening).
    public func problems() -> AsyncStream<DownloadError> {
        let (stream, continuation) = AsyncStream<DownloadError>.makeStream(bufferingPolicy: .bufferingNewest(64))
        for problem in openingProblems { continuation.yield(problem) }
        let id = UUID()
        problemObservers[id] = continuation
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeProblemObserver(id) }
        }
        return stream
    }

    private func removeProblemObserver(_ id: UUID) { problemObservers[id] = nil }

    /// Tells ``problems()`` observers of `error`.
    func report(_ error: DownloadError) {
        if !isOpen { openingProblems.append(error) }
        for observer in problemObservers.values { observer.yield(error) }
    }

    // MARK: Scheduling

    /// Re-checks every active download's conditions and starts queued ones
    /// in order while slots are free. Passes do not overlap: a call during
    /// one makes it run again.
    func schedule() async {
        guard !isSuperseded else { return }
        if scheduling {
            scheduleAgain = true
            return
        }
        scheduling = true
        repeat {
            scheduleAgain = false
            await schedulePass()
        } while scheduleAgain
        scheduling = false
    }

    private func schedulePass() async {
        let active = orderedIDs().filter { records[$0]?.status.isActive == true }
        guard !active.isEmpty else { return }
        var device = monitor.current
        let storageLow = await checkStorageFloor(&device)
        // Any transfer of a player or a preload, even one held back by its reader.
        let transfers = cache.scheduler.snapshot
        let now = ContinuousClock.now
        if [transfers.busy, transfers.idle, transfers.paused].contains(where: {
            $0[.playback, default: 0] + $0[.preload, default: 0] > 0
        }) {
            lastHigherPriorityActivity = now
        }
        // Quiet for a moment, not between two requests of a player.
        let higherPriorityActive =
            lastHigherPriorityActivity.map {
                now - $0 < configuration.discretionaryQuietPeriod
            } ?? false
        var changed: [UUID] = []
        for id in active {
            guard let record = records[id], let runner = runners[id] else { continue }
            var reasons = record.conditions.unmetReasons(in: device, higherPriorityActive: higherPriorityActive)
            if let storageLow, !reasons.contains(where: { if case .storageLow = $0 { true } else { false } }) {
                reasons.append(storageLow)
            }
            let event: DownloadEvent
            if !reasons.isEmpty {
                if case .waiting(let current) = record.status, current == reasons { continue }
                event = .conditionsUnmet(reasons)
            } else if case .waiting = record.status {
                event = .conditionsMet
            } else {
                continue
            }
            // Only from the status read (a run may have ended it since: that end decides).
            do {
                guard try runner.apply(event, when: { $0 == record.status }) else { continue }
                slots[id] = nil
            } catch {
                report(error)
                continue
            }
            // A halted transfer's bytes stay held (waiting holds them; a
            // cancel or remove meanwhile wins: see holdEntries(of:)).
            if record.status == .downloading { await holdEntries(of: [id]) }
            changed.append(id)
        }
        var free = configuration.maxConcurrentDownloads - slots.count
        for id in active where free > 0 && records[id]?.status == .queued {
            start(id)
            free -= 1
            changed.append(id)
        }
        if !changed.isEmpty { await commitReporting(changed) }
    }
}

import Foundation
import MediaStore

/// Fetches the resources of HLS assets (playlists, segments, init
/// segments, keys) into a ``StreamingCache``'s store, each under its
/// ``HLSResourceKey/storeKey`` (the cache key of its URL, plus its byte
/// range), and reads them back. Shared by the ``HLSDownloader`` and the
/// loopback server (`MediaServer`), so a segment the player asks for while
/// a download runs is fetched once: a fetch already running for a key is
/// joined, and one already stored is read from the store.
///
/// Origin fetches go through the cache's ``FetchScheduler`` (the one the
/// progressive loader and downloader use): a connection per host is
/// admitted first, and between body chunks a fetch waits while a busy
/// transfer of higher priority runs. A download's fetches are
/// ``FetchPriority/download``, a player's (the server's) ``FetchPriority/playback``;
/// a player joining a download's fetch raises it to playback. A fetch
/// preempted by playback (the host's connections were full) starts again
/// once admitted.
///
/// Each resource is fetched whole (its byte range only) and held in memory
/// until stored, so one may be at most ``maxResourceBytes``. Live media
/// playlists (no `EXT-X-ENDLIST`) are passed through without being stored.
public final class HLSResourceStore: Sendable {
    /// The cache whose store, origin and cache-key policy are used.
    public let cache: StreamingCache
    /// The largest resource fetched (64 MiB).
    public static let maxResourceBytes = 64 << 20
    /// By the key's bytes, as the store compares keys (`ExactKey`).
    private let inFlight = Locked<[ExactKey: Flight]>([:])

    /// A fetch running for one key: its task, and the priority and ticket
    /// its scheduled transfer has (raised when a player joins).
    private final class Flight: Sendable {
        let schedule: Locked<(priority: FetchPriority, ticket: FetchTicket?)>
        /// The bytes, and whether they came from the origin (not the store).
        let task = Locked<Task<(data: Data, fetched: Bool), any Error>?>(nil)

        init(_ priority: FetchPriority) { schedule = Locked((priority, nil)) }

        func raise(to priority: FetchPriority, in scheduler: FetchScheduler) {
            let ticket = schedule.withLock { schedule -> FetchTicket? in
                guard priority > schedule.priority else { return nil }
                schedule.priority = priority
                return schedule.ticket
            }
            if let ticket { scheduler.setPriority(priority, for: ticket) }
        }
    }
    private let originRequestCount = Locked(0)
    /// Awaited by ``data(for:metadata:pinned:headers:priority:store:)``
    /// once it found nothing stored, before it fetches or joins a fetch.
    let storeLookGateForTesting = Locked<(@Sendable () async -> Void)?>(nil)
    /// Awaited, with the store key, before a download keeps (pins) a
    /// resource: ``write(_:key:metadata:pinned:)`` pinned, ``keep(_:metadata:)``.
    let keepGateForTesting = Locked<(@Sendable (String) async -> Void)?>(nil)

    private static let registry = Locked<[ObjectIdentifier: WeakStore]>([:])
    private struct WeakStore {
        weak var store: HLSResourceStore?
    }

    private init(cache: StreamingCache) {
        self.cache = cache
    }

    /// The resource store of `cache` (one per cache, made on first use).
    public static func shared(for cache: StreamingCache) -> HLSResourceStore {
        registry.withLock { registry in
            let id = ObjectIdentifier(cache)
            if let existing = registry[id]?.store, existing.cache === cache { return existing }
            registry = registry.filter { $0.value.store != nil }
            let store = HLSResourceStore(cache: cache)
            registry[id] = WeakStore(store: store)
            return store
        }
    }

    /// Requests sent to the origin by this store so far.
    public var originRequests: Int { originRequestCount.current }

    /// The key a resource at `url` (and `byteRange`) is stored under.
    public func resourceKey(for url: URL, byteRange: ByteRange? = nil) -> HLSResourceKey {
        HLSResourceKey(key: cache.cacheKey(for: url), byteRange: byteRange)
    }

    /// The stored bytes of `key`, if the entry is complete (expired ones included).
    public func stored(_ key: HLSResourceKey) async throws(StreamingError) -> Data? {
        do {
            return try await cache.storeIO.read { store throws(StoreError) in
                try store.value(forKey: key.storeKey, includeExpired: true)?.data
            }
        } catch {
            throw .store(error)
        }
    }

    /// The info of `key`'s entry, if any.
    public func info(_ key: HLSResourceKey) async throws(StreamingError) -> EntryInfo? {
        do {
            return try await cache.storeIO.read { store throws(StoreError) in try store.info(forKey: key.storeKey) }
        } catch {
            throw .store(error)
        }
    }

    /// The bytes of `resource`: from the store, else from the origin (then
    /// stored with `metadata`, pinned if `pinned`, unless `store` says not
    /// to). A fetch of the same key already running is joined.
    ///
    /// - Parameters:
    ///   - resource: what to read or fetch.
    ///   - metadata: the entry's metadata if it is fetched and kept.
    ///   - pinned: whether a fetched entry is kept pinned.
    ///   - headers: sent with the origin request.
    ///   - priority: the fetch's priority in the cache's scheduler.
    ///   - shouldStore: decides from the fetched bytes whether to keep them
    ///     (live playlists are not kept).
    /// - Returns: the bytes, and whether this call fetched them from the
    ///   origin (false when read from the store, even if stored after this
    ///   call first looked, or from a fetch another caller started).
    public func data(
        for resource: HLSResource, metadata: EntryMetadata, pinned: Bool = false, headers: [String: String] = [:],
        priority: FetchPriority = .playback, store shouldStore: @escaping @Sendable (Data) -> Bool = { _ in true }
    ) async throws(HLSDownloadError) -> (data: Data, fetched: Bool) {
        try await data(
            for: resource, metadata: metadata, pinned: pinned, headers: headers, priority: priority,
            store: shouldStore, pinWhile: nil)
    }

    /// ``data(for:metadata:pinned:headers:priority:store:)``, storing a
    /// fetched entry only while `live` says so (checked inside the store's
    /// serial write): a download's run that was cancelled or paused stores
    /// and pins nothing more.
    func data(
        for resource: HLSResource, metadata: EntryMetadata, pinned: Bool, headers: [String: String],
        priority: FetchPriority, store shouldStore: @escaping @Sendable (Data) -> Bool,
        pinWhile live: (@Sendable () -> Bool)?
    ) async throws(HLSDownloadError) -> (data: Data, fetched: Bool) {
        do {
            if let data = try await stored(resource.cacheKey) { return (data, false) }
        } catch {
            throw .streaming(error)
        }
        let gate = storeLookGateForTesting.current
        await gate?()
        let key = resource.cacheKey.storeKey
        var attempt = 0
        while true {
            attempt += 1
            let (task, isNew) = inFlight.withLock {
                running -> (Task<(data: Data, fetched: Bool), any Error>, Bool) in
                if let flight = running[ExactKey(key)], let task = flight.task.current {
                    flight.raise(to: priority, in: cache.scheduler)
                    return (task, false)
                }
                let flight = Flight(priority)
                let task = Task<(data: Data, fetched: Bool), any Error> { [self] in
                    defer { _ = inFlight.withLock { $0.removeValue(forKey: ExactKey(key)) } }
                    // Stored between the look above and this fetch's
                    // registration (another caller's fetch ended): read, not fetched.
                    if let data = try await stored(resource.cacheKey) { return (data, false) }
                    let data = try await fetch(resource, headers: headers, flight: flight)
                    if shouldStore(data) {
                        try await write(data, key: key, metadata: metadata, pinned: pinned, pinWhile: live)
                    }
                    return (data, true)
                }
                flight.task.withLock { $0 = task }
                running[ExactKey(key)] = flight
                return (task, true)
            }
            do {
                let result = try await withTaskCancellationHandler {
                    try await task.value
                } onCancel: {
                    // A joined fetch goes on for whoever else waits; an own one stops.
                    if isNew { task.cancel() }
                }
                try Task.checkCancellation()
                return (result.data, isNew && result.fetched)
            } catch {
                let failure = HLSDownloadError.wrap(error)
                // A joined fetch its starter cancelled: start one of our own.
                if failure.isCancellation, !isNew, !Task.isCancelled, attempt < 4 { continue }
                throw failure
            }
        }
    }

    /// Fetches the bytes of `resource` from the origin (no store), as a
    /// transfer of `priority` in the cache's scheduler.
    public func fetch(_ resource: HLSResource, headers: [String: String] = [:], priority: FetchPriority = .playback)
        async throws(HLSDownloadError) -> Data
    {
        try await fetch(resource, headers: headers, flight: Flight(priority))
    }

    private func fetch(_ resource: HLSResource, headers: [String: String], flight: Flight)
        async throws(HLSDownloadError) -> Data
    {
        let attempts = max(1, cache.configuration.maxRetries + 1)
        var lastError: HLSDownloadError = .streaming(.cancelled)
        for attempt in 0..<attempts {
            do {
                return try await scheduled(resource, headers: headers, flight: flight)
            } catch {
                lastError = error
                guard case .streaming(.origin(let origin)) = error, origin.isTransient, attempt + 1 < attempts else {
                    throw error
                }
                try? await Task.sleep(for: .milliseconds(100 << min(attempt, 4)))
            }
        }
        throw lastError
    }

    /// One fetch admitted by the scheduler; again from the start when
    /// playback preempted it.
    private func scheduled(_ resource: HLSResource, headers: [String: String], flight: Flight)
        async throws(HLSDownloadError) -> Data
    {
        let scheduler = cache.scheduler
        while true {
            let ticket = flight.schedule.withLock { schedule -> FetchTicket in
                let ticket = scheduler.makeTicket(schedule.priority, host: resource.url.host ?? "")
                schedule.ticket = ticket
                return ticket
            }
            defer { scheduler.finish(ticket) }
            do {
                try await scheduler.admit(ticket)
            } catch {
                throw .streaming(.cancelled)
            }
            if let data = try await fetchOnce(resource, headers: headers, ticket: ticket) { return data }
        }
    }

    /// The bytes of one origin request; nil when playback preempted it.
    private func fetchOnce(_ resource: HLSResource, headers: [String: String], ticket: FetchTicket)
        async throws(HLSDownloadError) -> Data?
    {
        let range = resource.byteRange.map { $0.range }
        var request = OriginRequest(url: resource.url, range: range)
        request.headers = cache.configuration.headers.merging(headers) { $1 }
        originRequestCount.withLock { $0 += 1 }
        let response: OriginResponse
        do {
            response = try await cache.origin.fetch(request)
        } catch {
            throw .streaming(error == .cancelled ? .cancelled : .origin(error))
        }
        guard response.statusCode == 200 || response.statusCode == 206 else {
            throw .streaming(.origin(.httpStatus(code: response.statusCode, url: resource.url)))
        }
        // A 206 must be the range asked for; a 200 is the whole resource, cut below.
        var skip = 0
        if let range {
            if response.statusCode == 206 {
                guard let received = response.contentRange, received.range == range else {
                    throw .streaming(
                        .origin(
                            .contentRangeMismatch(
                                requested: request.rangeHeader ?? "", received: response.header("Content-Range") ?? ""))
                    )
                }
            } else {
                skip = range.lowerBound
            }
        }
        if let length = response.contentLength, length - skip > Self.maxResourceBytes {
            throw .resourceTooLarge(url: resource.url, bytes: length)
        }
        let wanted = range?.count
        var data = Data()
        do {
            for try await piece in response.body {
                try Task.checkCancellation()
                // Outranked: wait here; preempted: drop this response, start again.
                do {
                    try await cache.scheduler.checkpoint(ticket)
                } catch {
                    if error == .preempted { return nil }
                    throw HLSDownloadError.streaming(.cancelled)
                }
                var piece = piece
                if skip > 0 {
                    let dropped = min(skip, piece.count)
                    piece = piece.dropFirst(dropped)
                    skip -= dropped
                }
                if let wanted, data.count + piece.count >= wanted {
                    data.append(piece.prefix(wanted - data.count))
                    break
                }
                data.append(piece)
                if data.count > Self.maxResourceBytes {
                    throw HLSDownloadError.resourceTooLarge(url: resource.url, bytes: data.count)
                }
            }
        } catch {
            throw HLSDownloadError.wrap(error)
        }
        if let wanted, data.count != wanted {
            throw .streaming(.origin(.truncated(expected: wanted, received: data.count)))
        }
        if wanted == nil, let length = response.contentLength, data.count != length {
            throw .streaming(.origin(.truncated(expected: length, received: data.count)))
        }
        return data
    }

    /// Stores `data` whole under `key`.
    func write(
        _ data: Data, key: String, metadata: EntryMetadata, pinned: Bool, pinWhile live: (@Sendable () -> Bool)? = nil
    ) async throws(StoreError) {
        if pinned, let gate = keepGateForTesting.current { await gate(key) }
        let expiry = cache.configuration.expiry
        try await cache.storeIO.write { store throws(StoreError) in
            // Checked in the store's serial write: a release that cancelled the download first is not undone.
            guard live?() ?? true else { return }
            let options = WriteOptions(expiry: pinned ? .never : expiry, metadata: metadata, pinned: pinned)
            _ = try store.put(data, forKey: key, options: options)
        }
    }

    /// Pins `key`'s entry (and gives it `metadata` and no expiry), as a
    /// download does with a resource the player fetched before it.
    func keep(_ key: String, metadata: EntryMetadata, pinWhile live: (@Sendable () -> Bool)? = nil)
        async throws(StoreError)
    {
        if let gate = keepGateForTesting.current { await gate(key) }
        try await cache.storeIO.write { store throws(StoreError) in
            guard live?() ?? true, let info = try store.info(forKey: key) else { return }
            var merged = metadata
            // The download's fields win (a player's fetch knew less), but an
            // entry another asset keeps stays grouped with it and kept by both.
            merged.userInfo = info.metadata.userInfo.merging(metadata.userInfo) { _, new in new }
            if let assetKey = metadata.userInfo[HLSEntryMetadata.asset] {
                var previous = merged
                previous.userInfo[HLSEntryMetadata.asset] = info.metadata.userInfo[HLSEntryMetadata.asset]
                previous.userInfo[HLSEntryMetadata.keepers] = info.metadata.userInfo[HLSEntryMetadata.keepers]
                merged = HLSEntryMetadata.adding(assetKey, to: previous, wasPinned: info.isPinned)
            }
            if merged.mimeType == nil { merged.mimeType = info.metadata.mimeType }
            try store.setMetadata(merged, forKey: key, version: info.version)
            try store.setExpiry(.never, forKey: key, version: info.version)
            try store.setPinned(true, forKey: key, version: info.version)
        }
    }
}

import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming
import MediaSupport

/// Fetches the resources of HLS assets (playlists, segments, init
/// segments, keys) into a `StreamingCache`'s store, each under its
/// `HLSResourceKey.storeKey` (the cache key of its URL, plus its byte
/// range), and reads them back. The app makes one per cache and gives it
/// to the ``HLSDownloader``s and the loopback server (`MediaServer`), so a
/// segment the player asks for while a download runs is fetched once: a
/// fetch already running for a key is joined, and one already stored is
/// read from the store.
///
/// Origin fetches go through the cache's `FetchScheduler` (the one the
/// progressive loader and downloader use): a connection per host is
/// admitted first, and between body chunks a fetch waits while a busy
/// transfer of higher priority runs. A download's fetches are
/// `FetchPriority/download`, a player's (the server's) `FetchPriority/playback`;
/// a player joining a download's fetch raises it to playback. A fetch
/// preempted by playback (the host's connections were full) starts again
/// once admitted.
///
/// A playlist is read whole into memory (it is parsed), at most
/// `PlaylistLimits.maxBytes`; any other resource (segment, init segment,
/// key) is streamed into the store as it arrives, never held whole, and
/// published once complete. Each is bounded by the cache's
/// `StreamingConfiguration/hlsLimits`: beyond its limit the transfer
/// stops at once (the origin connection is dropped) and nothing of it is
/// stored. Live media playlists (no `EXT-X-ENDLIST`) are passed through
/// without being stored.
public final class HLSResourceStore: Sendable {
    /// The cache whose store, origin and cache-key policy are used.
    public let cache: StreamingCache
    /// The bounds of each resource fetched: the cache's `StreamingConfiguration/hlsLimits`.
    public var limits: HLSLimits { cache.configuration.hlsLimits }
    /// By the key's bytes, as the store compares keys (`ExactKey`).
    private let inFlight = Locked<[ExactKey: Flight]>([:])

    /// A fetch running for one key: its task, and the priority and ticket
    /// its scheduled transfer has (raised when a player joins).
    private final class Flight: Sendable {
        let schedule: Locked<(priority: FetchPriority, ticket: FetchTicket?)>
        /// The resource, and whether it came from the origin (not the store).
        let task = Locked<Task<(outcome: Outcome, fetched: Bool), any Error>?>(nil)

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
    /// The cache's seams for the package's tests: awaited once
    /// ``data(for:metadata:pinned:headers:priority:store:)`` found nothing
    /// stored, and before a download keeps a resource
    /// (``write(_:key:metadata:holder:pinWhile:)`` with a holder,
    /// ``keep(_:metadata:holder:pinWhile:)``).
    let hooks: ResourceStoreHooks

    /// A resource store over `cache`. Make one per cache and pass it to
    /// whatever shares its fetches (the loopback server, the downloaders):
    /// a fetch already running is joined only by users of the same store.
    public init(cache: StreamingCache) {
        self.cache = cache
        self.hooks = cache.configuration.resourceStoreHooks
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
    /// to). A fetch of the same key already running is joined. A resource
    /// other than a playlist is streamed into the store, then read back
    /// whole (at most `HLSLimits/maxResourceBytes`): to serve one in
    /// pieces, use ``resource(for:metadata:pinned:headers:priority:store:)``.
    ///
    /// - Parameters:
    ///   - resource: what to read or fetch.
    ///   - metadata: the entry's metadata if it is fetched and kept.
    ///   - pinned: whether a fetched entry is held by the app (`MediaStore.appHolder`).
    ///   - headers: sent with the origin request.
    ///   - priority: the fetch's priority in the cache's scheduler.
    ///   - shouldStore: decides from a fetched playlist's bytes whether to
    ///     keep them (live playlists are not kept); other resources are
    ///     always kept.
    /// - Returns: the bytes, and whether this call fetched them from the
    ///   origin (false when read from the store, even if stored after this
    ///   call first looked, or from a fetch another caller started).
    public func data(
        for resource: HLSResource, metadata: EntryMetadata, pinned: Bool = false, headers: [String: String] = [:],
        priority: FetchPriority = .playback, store shouldStore: @escaping @Sendable (Data) -> Bool = { _ in true }
    ) async throws(HLSResourceError) -> (data: Data, fetched: Bool) {
        let (outcome, fetched) = try await obtain(
            resource, metadata: metadata, holder: pinned ? MediaStore.appHolder : nil, headers: headers,
            priority: priority, store: shouldStore, pinWhile: nil)
        guard case .body(let body) = outcome else { throw .streaming(.cancelled) }
        switch body {
        case .bytes(let data):
            return (data, fetched)
        case .stored(let info):
            do {
                let key = resource.cacheKey.storeKey
                let data = try await cache.storeIO.read { store throws(StoreError) in
                    try store.read(forKey: key, range: 0..<(info.length ?? 0), version: info.version)
                }
                return (data, fetched)
            } catch {
                throw .streaming(.store(error))
            }
        }
    }

    /// `resource` as ``data(for:metadata:pinned:headers:priority:store:)``
    /// obtains it, without reading a stored one back: a playlist's bytes,
    /// or the complete entry any other resource is in (read it in pieces
    /// with ``read(_:range:version:)``).
    ///
    /// - Parameters:
    ///   - resource: what to read or fetch.
    ///   - metadata: the entry's metadata if it is fetched and kept.
    ///   - pinned: whether a fetched entry is held by the app (`MediaStore.appHolder`).
    ///   - headers: sent with the origin request.
    ///   - priority: the fetch's priority in the cache's scheduler.
    ///   - shouldStore: decides from a fetched playlist's bytes whether to keep them.
    /// - Returns: the body, and whether this call fetched it from the origin.
    public func resource(
        for resource: HLSResource, metadata: EntryMetadata, pinned: Bool = false, headers: [String: String] = [:],
        priority: FetchPriority = .playback, store shouldStore: @escaping @Sendable (Data) -> Bool = { _ in true }
    ) async throws(HLSResourceError) -> (body: HLSResourceBody, fetched: Bool) {
        let (outcome, fetched) = try await obtain(
            resource, metadata: metadata, holder: pinned ? MediaStore.appHolder : nil, headers: headers,
            priority: priority, store: shouldStore, pinWhile: nil)
        guard case .body(let body) = outcome else { throw .streaming(.cancelled) }
        return (body, fetched)
    }

    /// Bytes `range` of version `version` of `key`'s entry (as
    /// ``resource(for:metadata:pinned:headers:priority:store:)`` gave it).
    ///
    /// - Parameters:
    ///   - key: the resource's key.
    ///   - range: the bytes wanted, within the entry.
    ///   - version: the entry's version; another one (the entry was
    ///     replaced or evicted since) throws.
    public func read(_ key: HLSResourceKey, range: Range<Int>, version: UInt64) async throws(StreamingError) -> Data {
        let storeKey = key.storeKey
        do {
            return try await cache.storeIO.read { store throws(StoreError) in
                try store.read(forKey: storeKey, range: range, version: version)
            }
        } catch {
            throw .store(error)
        }
    }

    /// What a fetch of one resource came to: its body, or the bytes of one
    /// fetched and then not kept (the download's run that fetched it stopped).
    enum Outcome: Sendable {
        case body(HLSResourceBody)
        case dropped(bytes: Int)

        /// The bytes of the resource.
        var count: Int {
            switch self {
            case .body(.bytes(let data)): data.count
            case .body(.stored(let info)): info.length ?? info.cachedBytes
            case .dropped(let bytes): bytes
            }
        }
    }

    /// ``resource(for:metadata:pinned:headers:priority:store:)``, storing
    /// a fetched entry (held by `holder`, when given, with no expiry) only
    /// while `live` says so (checked inside the store's serial write): a
    /// download's run that was cancelled or paused stores and holds
    /// nothing more. `fetched` is called once the body of a fetch this
    /// call started is in, before it is published (a run fetches its next
    /// resource while this one waits for the store's commit).
    func obtain(
        _ resource: HLSResource, metadata: EntryMetadata, holder: String?, headers: [String: String],
        priority: FetchPriority, store shouldStore: @escaping @Sendable (Data) -> Bool,
        pinWhile live: (@Sendable () -> Bool)?, fetched: (@Sendable () -> Void)? = nil
    ) async throws(HLSResourceError) -> (outcome: Outcome, fetched: Bool) {
        do {
            if let body = try await storedBody(resource) { return (.body(body), false) }
        } catch {
            throw .streaming(error)
        }
        let gate = hooks.storeLook.current
        await gate?()
        let key = resource.cacheKey.storeKey
        var attempt = 0
        while true {
            attempt += 1
            let (task, isNew) = inFlight.withLock {
                running -> (Task<(outcome: Outcome, fetched: Bool), any Error>, Bool) in
                if let flight = running[ExactKey(key)], let task = flight.task.current {
                    flight.raise(to: priority, in: cache.scheduler)
                    return (task, false)
                }
                let flight = Flight(priority)
                let task = Task<(outcome: Outcome, fetched: Bool), any Error> { [self] in
                    defer { _ = inFlight.withLock { $0.removeValue(forKey: ExactKey(key)) } }
                    // Stored between the look above and this fetch's
                    // registration (another caller's fetch ended): read, not fetched.
                    if let body = try await storedBody(resource) { return (.body(body), false) }
                    let options = WriteOptions(
                        expiry: holder != nil ? .never : cache.configuration.expiry, metadata: metadata)
                    let sink = try await fetch(resource, headers: headers, flight: flight, options: options)
                    fetched?()
                    guard resource.kind.isPlaylist else {
                        if holder != nil, let gate = hooks.keep.current { await gate(key) }
                        guard let info = try await sink.finish(holder: holder, pinWhile: live) else {
                            return (.dropped(bytes: sink.count), true)
                        }
                        return (.body(.stored(info)), true)
                    }
                    let data = sink.bytes
                    if shouldStore(data) {
                        try await write(data, key: key, metadata: metadata, holder: holder, pinWhile: live)
                    }
                    return (.body(.bytes(data)), true)
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
                // A joined fetch whose starter kept nothing: fetch for ourselves.
                if case .dropped = result.outcome, !isNew, attempt < 4 { continue }
                return (result.outcome, isNew && result.fetched)
            } catch {
                let failure = HLSResourceError.wrap(error)
                // A joined fetch its starter cancelled: start one of our own.
                if failure.isCancellation, !isNew, !Task.isCancelled, attempt < 4 { continue }
                throw failure
            }
        }
    }

    /// `resource` as stored: a playlist's bytes, or any other resource's
    /// complete entry; nil when not stored (expired entries count).
    private func storedBody(_ resource: HLSResource) async throws(StreamingError) -> HLSResourceBody? {
        if resource.kind.isPlaylist { return try await stored(resource.cacheKey).map { .bytes($0) } }
        guard let info = try await info(resource.cacheKey), info.isComplete else { return nil }
        return .stored(info)
    }

    /// Fetches the bytes of `resource` from the origin (no store), as a
    /// transfer of `priority` in the cache's scheduler, within the
    /// resource's limit (``limits``).
    public func fetch(_ resource: HLSResource, headers: [String: String] = [:], priority: FetchPriority = .playback)
        async throws(HLSResourceError) -> Data
    {
        let sink = try await fetch(
            resource, headers: headers, flight: Flight(priority), options: WriteOptions(), inMemory: true)
        return sink.bytes
    }

    /// The body of `resource` from the origin, in a sink: held in memory
    /// (a playlist, or `inMemory`) or in a staging entry written with
    /// `options`, to be published by the caller.
    private func fetch(
        _ resource: HLSResource, headers: [String: String], flight: Flight, options: WriteOptions,
        inMemory: Bool? = nil
    ) async throws(HLSResourceError) -> HLSResourceSink {
        let policy = cache.configuration.retryPolicy
        var retry = 0
        while true {
            do {
                return try await scheduled(
                    resource, headers: headers, flight: flight, options: options,
                    inMemory: inMemory ?? resource.kind.isPlaylist)
            } catch {
                retry += 1
                guard case .streaming(let failure) = error, let delay = policy.delay(after: failure, retry: retry)
                else { throw error }
                // Cancelled while it waits: no further attempt.
                do { try await Task.sleep(for: delay) } catch { throw .streaming(.cancelled) }
            }
        }
    }

    /// One fetch admitted by the scheduler; again from the start when
    /// playback preempted it. Whatever an attempt that did not end well
    /// wrote is dropped.
    private func scheduled(
        _ resource: HLSResource, headers: [String: String], flight: Flight, options: WriteOptions, inMemory: Bool
    ) async throws(HLSResourceError) -> HLSResourceSink {
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
            let sink: HLSResourceSink
            do {
                sink = try HLSResourceSink(
                    key: resource.cacheKey.storeKey, inMemory: inMemory, options: options, storeIO: cache.storeIO)
            } catch {
                throw .streaming(.store(error))
            }
            do {
                if try await fetchOnce(resource, headers: headers, ticket: ticket, into: sink) { return sink }
                await sink.cancel()
            } catch {
                await sink.cancel()
                throw error
            }
        }
    }

    /// The failure of `resource` going beyond its limit of `limit` bytes (`bytes` announced or received).
    private func tooLarge(_ resource: HLSResource, bytes: Int, limit: Int) -> HLSResourceError {
        guard resource.kind.isPlaylist else { return .resourceTooLarge(url: resource.url, bytes: bytes, limit: limit) }
        return .playlist(url: resource.url, PlaylistError(line: 0, reason: .tooLarge(.bytes, limit: limit)))
    }

    /// Reads the body of one origin request into `sink`; false when
    /// playback preempted it. Beyond the resource's limit (announced or
    /// received) it throws at once, which drops the response: the origin
    /// transfer is cancelled.
    private func fetchOnce(
        _ resource: HLSResource, headers: [String: String], ticket: FetchTicket, into sink: HLSResourceSink
    ) async throws(HLSResourceError) -> Bool {
        let range = resource.byteRange.map { $0.range }
        let limit = limits.maxBytes(of: resource.kind)
        if let range, range.count > limit { throw tooLarge(resource, bytes: range.count, limit: limit) }
        var request = OriginRequest(url: resource.url, range: range)
        request.headers = cache.configuration.headers.merging(headers) { $1 }
        // The limit bounds the body, so the origin refuses a longer one before reading it, and the network
        // may run ahead of the store up to it. Not for a range: a 200 to it is the whole resource, longer
        // than the range's end, and is cut below once the range is read.
        request.maxBodyBytes = range == nil ? limit : nil
        // Saturating: a limit of Int.max means no limit.
        let (buffered, overflow) = limit.addingReportingOverflow(64 << 10)
        request.maxBufferedBytes = overflow ? .max : buffered
        originRequestCount.withLock { $0 += 1 }
        let response: OriginResponse
        do {
            response = try await cache.origin.fetch(request)
        } catch .bodyTooLarge(let bytes, _) {
            throw tooLarge(resource, bytes: bytes - (range?.lowerBound ?? 0), limit: limit)
        } catch {
            throw .streaming(error == .cancelled ? .cancelled : .origin(error))
        }
        guard response.statusCode == 200 || response.statusCode == 206 else {
            throw .streaming(.origin(.httpStatus(code: response.statusCode, url: resource.url)))
        }
        // A 206 must be the range asked for; a 200 is the whole resource, cut below.
        var skip = 0
        if let range {
            do {
                let body = try ResponseValidator.checkExactRange(response, requested: range, url: resource.url)
                skip = range.lowerBound - body.start
            } catch {
                throw .streaming(error)
            }
        }
        if let length = response.contentLength, length - skip > limit {
            throw tooLarge(resource, bytes: length - skip, limit: limit)
        }
        let wanted = range?.count
        do {
            for try await piece in response.body {
                try Task.checkCancellation()
                // Outranked: wait here; preempted: drop this response, start again.
                do {
                    try await cache.scheduler.checkpoint(ticket)
                } catch {
                    if error == .preempted { return false }
                    throw HLSResourceError.streaming(.cancelled)
                }
                var piece = piece
                if skip > 0 {
                    let dropped = min(skip, piece.count)
                    piece = piece.dropFirst(dropped)
                    skip -= dropped
                }
                if let wanted, sink.count + piece.count >= wanted {
                    try await sink.append(piece.prefix(wanted - sink.count))
                    break
                }
                if sink.count + piece.count > limit {
                    throw tooLarge(resource, bytes: sink.count + piece.count, limit: limit)
                }
                try await sink.append(piece)
            }
        } catch let error as StoreError {
            throw HLSResourceError.streaming(.store(error))
        } catch OriginError.bodyTooLarge(let bytes, _) {
            throw tooLarge(resource, bytes: bytes - (range?.lowerBound ?? 0), limit: limit)
        } catch {
            throw HLSResourceError.wrap(error)
        }
        // A cancelled transfer may end its body early without an error.
        if Task.isCancelled { throw .streaming(.cancelled) }
        if let wanted, sink.count != wanted {
            throw .streaming(.origin(.truncated(expected: wanted, received: sink.count)))
        }
        if wanted == nil, let length = response.contentLength, sink.count != length {
            throw .streaming(.origin(.truncated(expected: length, received: sink.count)))
        }
        return true
    }

    /// Stores `data` whole under `key`, held by `holder` when given (then
    /// with no expiry): the entry and its hold in one commit, made only
    /// while `live` says so (checked in that commit's transaction, under
    /// the store's writer lock: a run stopped by then stores nothing).
    func write(
        _ data: Data, key: String, metadata: EntryMetadata, holder: String?,
        pinWhile live: (@Sendable () -> Bool)? = nil
    ) async throws(StoreError) {
        if holder != nil, let gate = hooks.keep.current { await gate(key) }
        let expiry = cache.configuration.expiry
        try await cache.storeIO.write { store throws(StoreError) in
            // Checked in the store's serial write, and again in the commit's transaction (under the
            // store's writer lock): a release that cancelled the download first is not undone.
            guard live?() ?? true else { return }
            let options = WriteOptions(expiry: holder != nil ? .never : expiry, metadata: metadata)
            guard let holder else {
                try store.put(data, forKey: key, options: options)
                return
            }
            let writer = try store.makeWriter(forKey: key, options: options, expectedLength: data.count)
            try writer.append(data)
            try RunStopped.unlessStopped {
                try writer.finish { batch, info in
                    guard live?() ?? true else { throw RunStopped() }
                    try batch.hold(key, by: holder, version: info.version)
                }
            }
        }
    }

    /// Holds `key`'s entry by `holder` (and gives it `metadata` and no
    /// expiry), as a download does with a resource the player fetched
    /// before it: the three in one commit, made only while `live` says
    /// so (checked in that commit's transaction). An entry someone
    /// already holds stays grouped with its asset (``HLSEntryMetadata/asset``).
    /// An entry already kept so (a resumed download's) costs a read, no commit.
    func keep(
        _ key: String, metadata: EntryMetadata, holder: String, pinWhile live: (@Sendable () -> Bool)? = nil
    ) async throws(StoreError) {
        if let gate = hooks.keep.current { await gate(key) }
        let alreadyKept = try await cache.storeIO.read { store throws(StoreError) in
            guard let info = try store.info(forKey: key), info.expiry == nil,
                Self.kept(info, metadata: metadata) == info.metadata
            else { return false }
            return try store.holders(of: key).contains(holder)
        }
        if alreadyKept { return }
        try await cache.storeIO.write { store throws(StoreError) in
            // Checked in the store's serial write, and again in the commit's transaction.
            guard live?() ?? true else { return }
            try RunStopped.unlessStopped {
                try store.performBatch { batch in
                    guard let info = try batch.info(forKey: key) else { return }
                    let merged = Self.kept(info, metadata: metadata)
                    try batch.setMetadata(merged, forKey: key, version: info.version)
                    try batch.setExpiry(.never, forKey: key, version: info.version)
                    try batch.hold(key, by: holder, version: info.version)
                    // Stopped meanwhile (a release that does not go through the
                    // store's write queue came first): nothing of it is committed.
                    guard live?() ?? true else { throw RunStopped() }
                }
            }
        }
    }

    /// The metadata a kept entry gets: the download's fields win (a
    /// player's fetch knew less), but an entry someone holds stays grouped
    /// with its asset.
    private static func kept(_ info: EntryInfo, metadata: EntryMetadata) -> EntryMetadata {
        var merged = metadata
        merged.userInfo = info.metadata.userInfo.merging(metadata.userInfo) { _, new in new }
        if let assetKey = metadata.userInfo[HLSEntryMetadata.asset] {
            var previous = merged
            previous.userInfo[HLSEntryMetadata.asset] = info.metadata.userInfo[HLSEntryMetadata.asset]
            merged = HLSEntryMetadata.adding(assetKey, to: previous, isHeld: info.isPinned)
        }
        if merged.mimeType == nil { merged.mimeType = info.metadata.mimeType }
        return merged
    }
}

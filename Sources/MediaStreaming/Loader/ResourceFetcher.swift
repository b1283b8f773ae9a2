import Foundation
import MediaStore

/// Coordinates everything about one cached resource (one cache key):
/// its content information, its revalidation, and the downloads that
/// fill its holes. Every reader of the key, from any item, goes through
/// the same fetcher, so two players share one download.
actor ResourceFetcher {
    let key: String
    let store: MediaStore
    let origin: any Origin
    let configuration: StreamingConfiguration
    let chunkSize: Int
    /// Counters of this resource.
    let statistics = Protected(StreamingStatistics())
    /// Counters of the whole cache, updated alongside.
    private let cacheStatistics: Protected<StreamingStatistics>

    private var information: ContentInformation?
    private var infoWaiters: [CheckedContinuation<ContentInformation, any Error>] = []
    private var resolving = false
    private var validators: (etag: String?, lastModified: String?) = (nil, nil)
    /// Why the resource is played without caching, when it is.
    private(set) var cachingSkipped: String?
    private var downloads: [Int: Download] = [:]
    private var nextID = 0
    private var lease: EntryLease?
    /// The store entry version this fetcher serves and fills (see
    /// ``Download/entryVersion``); `nil` until known or when not caching.
    private(set) var entryVersion: UInt64?
    private var observers: [Int: @Sendable (ResourceEvent) -> Void] = [:]

    init(
        key: String, store: MediaStore, origin: any Origin, configuration: StreamingConfiguration,
        cacheStatistics: Protected<StreamingStatistics>
    ) {
        self.key = key
        self.store = store
        self.origin = origin
        self.configuration = configuration
        self.chunkSize = store.configuration.chunkSize
        self.cacheStatistics = cacheStatistics
    }

    var requestBytes: Int { chunkSize * configuration.chunksPerRequest }

    // MARK: Observation

    func observe(_ handler: @escaping @Sendable (ResourceEvent) -> Void) -> Int {
        nextID += 1
        observers[nextID] = handler
        if let cachingSkipped { handler(.cachingSkipped(reason: cachingSkipped)) }
        return nextID
    }

    func removeObserver(_ id: Int) { observers[id] = nil }

    private func emit(_ event: ResourceEvent) {
        for handler in observers.values { handler(event) }
    }

    private func count(_ body: (inout StreamingStatistics) -> Void) {
        statistics.withLock(body)
        cacheStatistics.withLock(body)
    }

    /// Adds `delta` to the reader backlog of this resource and of the cache, keeping the peaks.
    private static func adjustBacklog(_ delta: Int, _ boxes: [Protected<StreamingStatistics>]) {
        for box in boxes {
            box.withLock {
                $0.readerBacklogBytes += delta
                $0.peakReaderBacklogBytes = max($0.peakReaderBacklogBytes, $0.readerBacklogBytes)
            }
        }
    }

    // MARK: Content information

    /// The content information, resolving it first: from the store when a
    /// fresh entry of known length exists (no origin request), otherwise
    /// from the origin (a conditional request for an expired entry).
    func contentInformation(url: URL, headers: [String: String]) async throws -> ContentInformation {
        if var information {
            information.isEntireLengthAvailableOnDemand = cachingSkipped == nil && ((try? store.info(forKey: key))?.isComplete ?? false)
            return information
        }
        if !resolving {
            resolving = true
            startResolving(url: url, headers: headers)
            if let information { return information }
        }
        return try await withCheckedThrowingContinuation { infoWaiters.append($0) }
    }

    private func startResolving(url: URL, headers: [String: String]) {
        if lease == nil { lease = store.lease(forKey: key) }
        let stored = try? store.info(forKey: key)
        if let stored, let length = stored.length, !stored.isExpired(), !configuration.alwaysRevalidate {
            validators = (stored.metadata.etag, stored.metadata.lastModified)
            entryVersion = stored.version
            resolve(ContentInformation(
                mimeType: mimeType(declared: stored.metadata.mimeType, prefix: storedPrefix()),
                contentLength: length, isEntireLengthAvailableOnDemand: stored.isComplete,
                etag: stored.metadata.etag, lastModified: stored.metadata.lastModified))
            return
        }
        let probe = makeDownload(start: 0, end: Int.max, url: url, headers: headers, isProbe: true)
        if let stored, stored.length != nil, stored.metadata.etag != nil || stored.metadata.lastModified != nil {
            probe.ifNoneMatch = stored.metadata.etag
            probe.ifModifiedSince = stored.metadata.lastModified
            count { $0.revalidations += 1 }
        }
        launch(probe)
    }

    private func storedPrefix() -> [UInt8] {
        guard let data = try? store.read(forKey: key, range: 0..<16, includeExpired: true) else { return [] }
        return [UInt8](data)
    }

    private func mimeType(declared: String?, prefix: some Collection<UInt8>) -> String {
        if let declared, !UniformType.isGeneric(declared) { return declared }
        return MediaSniffer.mimeType(of: prefix) ?? declared ?? "application/octet-stream"
    }

    private func resolve(_ info: ContentInformation) {
        information = info
        resolving = false
        let waiters = infoWaiters
        infoWaiters = []
        for waiter in waiters { waiter.resume(returning: info) }
        emit(.ready(info))
    }

    private func failResolution(_ error: StreamingError) {
        resolving = false
        let waiters = infoWaiters
        infoWaiters = []
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// The expiry for an entry written or renewed from `response`.
    private func expiryPolicy(for response: OriginResponse) -> ExpiryPolicy {
        if configuration.honorsCacheControl, let lifetime = response.freshnessLifetime { return .after(lifetime) }
        return configuration.expiry
    }

    // MARK: Planning reads

    /// Where the bytes from `offset` come from: the store, a running
    /// download (joined), or a new download over the hole at `offset`.
    func plan(from offset: Int, url: URL, headers: [String: String]) throws -> ReadPlan {
        guard let info = information else { throw StreamingError.origin(.malformedResponse(reason: "no content information")) }
        let length = info.contentLength
        guard offset < length else { return .end }
        var holeEnd = length
        if cachingSkipped == nil {
            let ranges = try store.cachedRanges(forKey: key)
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
            return .stream(subscribe(download, from: offset))
        }
        let start = offset / chunkSize * chunkSize
        for other in downloads.values where !other.isStopped {
            if other.bufferStart > start { holeEnd = min(holeEnd, other.bufferStart) }
            if other.position <= start && start < other.end { other.end = start }
        }
        let download = makeDownload(start: start, end: holeEnd, url: url, headers: headers, isProbe: false)
        let stream = subscribe(download, from: offset)
        launch(download)
        return .stream(stream)
    }

    /// The first byte at or after `offset` that is not in the store; `nil` when none is missing.
    func firstMissingByte(from offset: Int) throws -> Int? {
        guard let length = information?.contentLength else { return offset }
        var position = offset
        for range in try store.cachedRanges(forKey: key) where range.contains(position) {
            position = range.upperBound
        }
        return position < length ? position : nil
    }

    private func subscribe(_ download: Download, from offset: Int) -> ReaderStream {
        let boxes = [statistics, cacheStatistics]
        let channel = ReaderChannel { Self.adjustBacklog($0, boxes) }
        nextID += 1
        let id = nextID
        if offset < download.position {
            let from = download.buffer.startIndex + (offset - download.bufferStart)
            channel.send(Data(download.buffer[from...]))
        }
        download.subscribers[id] = Download.Subscriber(offset: max(offset, download.position), channel: channel)
        let downloadID = download.id
        return ReaderStream(channel: channel) { [weak self] in
            Task { await self?.unsubscribe(id, from: downloadID) }
        }
    }

    private func unsubscribe(_ id: Int, from downloadID: Int) {
        guard let download = downloads[downloadID] else { return }
        download.subscribers[id] = nil
        // Uncached bytes nobody reads are wasted: stop at once. Cached
        // downloads finish their request (the bytes are kept).
        if download.subscribers.isEmpty, cachingSkipped != nil, !(download.isProbe && information == nil) {
            stop(download)
        }
    }

    // MARK: Downloads

    private func makeDownload(start: Int, end: Int, url: URL, headers: [String: String], isProbe: Bool) -> Download {
        nextID += 1
        let download = Download(id: nextID, start: start, end: end, url: url, headers: headers, isProbe: isProbe)
        download.entryVersion = isProbe || cachingSkipped != nil ? nil : entryVersion
        downloads[download.id] = download
        return download
    }

    private func launch(_ download: Download) {
        download.task = Task { await self.run(download) }
    }

    private func stop(_ download: Download) {
        download.isStopped = true
        download.task?.cancel()
    }

    private func run(_ download: Download) async {
        var failures = 0
        while !download.isStopped && download.position < download.end {
            let resolvingProbe = download.isProbe && information == nil
            if !resolvingProbe && download.subscribers.isEmpty { break }
            download.position = download.bufferStart
            download.buffer.removeAll()
            let requestEnd = download.end == Int.max ? download.position + requestBytes : min(download.end, download.position + requestBytes)
            var request = OriginRequest(url: download.url, range: download.position..<requestEnd, headers: configuration.headers.merging(download.headers) { $1 })
            if resolvingProbe {
                request.ifNoneMatch = download.ifNoneMatch
                request.ifModifiedSince = download.ifModifiedSince
            }
            do {
                try await fetchWithWatchdog(download, request)
                failures = 0
            } catch {
                if download.isStopped { break }
                let failure = StreamingError.wrap(error)
                if case .origin(let originError) = failure, originError.isTransient, failures < configuration.maxRetries {
                    failures += 1
                    count { $0.retries += 1 }
                    emit(.retrying(originError))
                    try? await Task.sleep(for: .milliseconds(20 * failures))
                    continue
                }
                if case .resourceChanged = failure { return contentChanged(failure) }
                return fail(download, failure)
            }
        }
        finish(download)
    }

    private func fetchWithWatchdog(_ download: Download, _ request: OriginRequest) async throws {
        download.lastProgress = .now
        let timeout = configuration.stallTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.fetch(download, request) }
            group.addTask {
                while true {
                    try await Task.sleep(for: .seconds(max(0.01, timeout / 4)))
                    if await self.idleTime(download) > timeout { throw OriginError.stalled(seconds: timeout) }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    private func idleTime(_ download: Download) -> Double {
        if download.waitingForReaders { return 0 }
        let idle = ContinuousClock.now - download.lastProgress
        return Double(idle.components.seconds) + Double(idle.components.attoseconds) / 1e18
    }

    /// Sends one request and feeds its body into `download`.
    private func fetch(_ download: Download, _ request: OriginRequest) async throws {
        count { $0.originRequests += 1 }
        let response = try await origin.fetch(request)
        download.lastProgress = .now
        guard let requested = request.range else { return }
        let bodyStart: Int
        var bodyEnd: Int?
        if download.isProbe && information == nil {
            guard let accepted = try acceptProbe(response, download) else { return }
            (bodyStart, bodyEnd) = accepted
        } else {
            (bodyStart, bodyEnd) = try validate(response, requested: requested, url: download.url)
        }
        // A 200 answer carries the rest of the file: read on rather than re-request.
        let limit = response.statusCode == 200 ? download.end : min(download.end, requested.upperBound)
        var cursor = bodyStart
        for try await piece in response.body {
            download.lastProgress = .now
            count { $0.originBytes += piece.count }
            if let bodyEnd, cursor + piece.count > bodyEnd { throw OriginError.overlong(expected: bodyEnd - bodyStart) }
            let skip = max(0, download.position - cursor)
            let take = min(piece.count, limit - cursor) - skip
            cursor += piece.count
            if take > 0 {
                let from = piece.startIndex + skip
                try await accept(Data(piece[from..<(from + take)]), into: download)
            }
            if download.position >= limit || download.isStopped { return }
        }
        if download.isStopped || Task.isCancelled { return }
        if download.end == Int.max {
            // No length was announced: the end of the body is the end of the resource.
            try await endOfUnknownLength(download, at: cursor)
            return
        }
        let expected = min(limit, bodyEnd ?? limit)
        if download.position < expected {
            throw OriginError.truncated(expected: expected - bodyStart, received: cursor - bodyStart)
        }
    }

    /// Checks a response to a range request of a resource whose content
    /// information is known; returns where its body starts and ends.
    private func validate(_ response: OriginResponse, requested: Range<Int>, url: URL) throws -> (Int, Int?) {
        guard let length = information?.contentLength else { throw OriginError.malformedResponse(reason: "no length") }
        if let etag = response.etag, let known = validators.etag, etag != known {
            throw StreamingError.resourceChanged(url: url)
        }
        switch response.statusCode {
        case 206:
            guard let contentRange = response.contentRange, let range = contentRange.range else {
                throw OriginError.contentRangeMismatch(requested: "\(requested)", received: response.header("Content-Range") ?? "none")
            }
            if let total = contentRange.total, total != length { throw StreamingError.resourceChanged(url: url) }
            guard range.lowerBound == requested.lowerBound, range.upperBound <= requested.upperBound,
                range.upperBound == min(requested.upperBound, length) || range.upperBound % chunkSize == 0
            else {
                throw OriginError.contentRangeMismatch(requested: "\(requested)", received: response.header("Content-Range") ?? "")
            }
            return (range.lowerBound, range.upperBound)
        case 200:
            if let announced = response.contentLength, announced != length {
                throw StreamingError.resourceChanged(url: url)
            }
            return (0, length)
        default:
            throw OriginError.httpStatus(code: response.statusCode, url: url)
        }
    }

    /// Handles the first response for a resource: 304 renews the stored
    /// entry; a changed validator or length drops it; the entry is
    /// prepared (or caching skipped, for one larger than the store).
    private func acceptProbe(_ response: OriginResponse, _ download: Download) throws -> (Int, Int?)? {
        let stored = try? store.info(forKey: key)
        let policy = expiryPolicy(for: response)
        if response.statusCode == 304, let stored, let length = stored.length {
            count { $0.notModified += 1 }
            // Renews exactly the entry the conditional request was about.
            try store.setExpiry(policy, forKey: key, version: stored.version)
            validators = (stored.metadata.etag, stored.metadata.lastModified)
            entryVersion = stored.version
            emit(.revalidated(changed: false))
            download.isStopped = true
            resolve(ContentInformation(
                mimeType: mimeType(declared: stored.metadata.mimeType, prefix: storedPrefix()), contentLength: length,
                isEntireLengthAvailableOnDemand: stored.isComplete, etag: validators.etag, lastModified: validators.lastModified))
            return nil
        }
        let total: Int?
        let bodyStart: Int
        var bodyEnd: Int?
        switch response.statusCode {
        case 206:
            guard let contentRange = response.contentRange, let range = contentRange.range, range.lowerBound == 0,
                let length = contentRange.total
            else {
                throw OriginError.contentRangeMismatch(requested: "bytes=0-", received: response.header("Content-Range") ?? "none")
            }
            total = length
            bodyStart = 0
            bodyEnd = range.upperBound
        case 200:
            total = response.contentLength
            bodyStart = 0
            bodyEnd = total
        default:
            throw OriginError.httpStatus(code: response.statusCode, url: download.url)
        }
        let etag = response.etag
        let lastModified = response.lastModified
        if let stored {
            let old = stored.metadata.etag ?? stored.metadata.lastModified
            let new = etag ?? lastModified
            let changed = (stored.length != nil && total != nil && stored.length != total) || old != new
            if download.ifNoneMatch != nil || download.ifModifiedSince != nil { emit(.revalidated(changed: changed)) }
            if changed {
                try store.remove(forKey: key)
            } else if stored.isExpired() {
                do {
                    try store.setExpiry(policy, forKey: key, version: stored.version)
                } catch {
                    // Replaced meanwhile: prepareEntry below judges the new one.
                    guard case .entryReplaced = error else { throw error }
                }
            }
        }
        validators = (etag, lastModified)
        let metadata = EntryMetadata(mimeType: response.mimeType, etag: etag, lastModified: lastModified)
        do {
            // Kept only when it is the same content (length and validators),
            // otherwise replaced: this download fills exactly that version.
            let prepared = try store.prepareEntry(
                forKey: key, length: total, options: WriteOptions(expiry: policy, metadata: metadata))
            try store.setMetadata(metadata, forKey: key, version: prepared.version)
            entryVersion = prepared.version
            download.entryVersion = prepared.version
        } catch {
            skipCaching(String(describing: error))
        }
        download.end = total ?? Int.max
        download.declaredMIMEType = response.mimeType
        try resolveProbeIfReady(download)
        return (bodyStart, bodyEnd)
    }

    private func skipCaching(_ reason: String) {
        guard cachingSkipped == nil else { return }
        cachingSkipped = reason
        emit(.cachingSkipped(reason: reason))
    }

    /// Resolves the content information once the length is known and the
    /// MIME type is too (declared, or sniffable from the first bytes).
    private func resolveProbeIfReady(_ download: Download) throws {
        guard download.isProbe, information == nil, download.end != Int.max else { return }
        let declared = download.declaredMIMEType
        let sniffable = download.position >= 16 || download.position >= download.end
        guard !UniformType.isGeneric(declared) || sniffable else { return }
        let prefix = download.bufferStart == 0 ? [UInt8](download.buffer.prefix(16)) : storedPrefix()
        let mime = mimeType(declared: declared, prefix: prefix)
        if cachingSkipped == nil, mime != declared, let entryVersion {
            try? store.setMetadata(
                EntryMetadata(mimeType: mime, etag: validators.etag, lastModified: validators.lastModified), forKey: key,
                version: entryVersion)
        }
        let complete = cachingSkipped == nil && ((try? store.info(forKey: key))?.isComplete ?? false)
        resolve(ContentInformation(
            mimeType: mime, contentLength: download.end, isEntireLengthAvailableOnDemand: complete,
            etag: validators.etag, lastModified: validators.lastModified))
    }

    private func endOfUnknownLength(_ download: Download, at length: Int) async throws {
        download.end = length
        try await flush(download)
        if cachingSkipped == nil, let version = download.entryVersion, (try? store.info(forKey: key))?.length == nil {
            // An empty write at the end fixes the length of exactly this version.
            _ = try? store.write(Data(), at: length, forKey: key, version: version)
        }
        try resolveProbeIfReady(download)
    }

    /// Takes received bytes: hands them to subscribers, buffers them, and
    /// writes every whole chunk (and the short last one) to the store.
    private func accept(_ bytes: Data, into download: Download) async throws {
        let pieceStart = download.position
        download.position += bytes.count
        download.buffer.append(bytes)
        for (id, subscriber) in download.subscribers where subscriber.offset < download.position {
            let from = bytes.startIndex + max(0, subscriber.offset - pieceStart)
            subscriber.channel.send(Data(bytes[from...]))
            download.subscribers[id]?.offset = download.position
        }
        try await flush(download)
        try resolveProbeIfReady(download)
        await keepReadersBounded(download)
    }

    /// Back-pressure. A reader more than `readerBufferLimit` behind is let
    /// go when the bytes are cached: it takes what it was handed, then goes
    /// on from the store (where every byte it was handed already is, or is
    /// in this download's buffer, which it rejoins). When they are not
    /// cached, the download stops reading the origin until the reader is
    /// halfway back. Either way, a slow reader costs bounded memory.
    private func keepReadersBounded(_ download: Download) async {
        let limit = configuration.readerBufferLimit
        if cachingSkipped == nil {
            for (id, subscriber) in download.subscribers where subscriber.channel.backlog > limit {
                subscriber.channel.finish()
                download.subscribers[id] = nil
            }
            return
        }
        while !download.isStopped, !Task.isCancelled,
            let lagging = download.subscribers.values.first(where: { $0.channel.backlog > limit })
        {
            download.waitingForReaders = true
            await lagging.channel.waitForBacklog(atMost: limit / 2)
            download.waitingForReaders = false
            download.lastProgress = .now
        }
    }

    private func flush(_ download: Download) async throws {
        while download.buffer.count >= chunkSize || (download.position >= download.end && !download.buffer.isEmpty) {
            let size = min(chunkSize, download.buffer.count)
            let chunk = Data(download.buffer.prefix(size))
            let offset = download.bufferStart
            if cachingSkipped == nil, let version = download.entryVersion {
                do {
                    let info = try await Self.write(chunk, at: offset, key: key, version: version, store: store)
                    count { $0.chunksFetched += 1 }
                    if let length = info.length { emit(.progress(cached: info.cachedBytes, length: length)) }
                    if info.isComplete { emit(.complete) }
                } catch {
                    if case .entryReplaced = error {
                        entryReplaced(download)
                    } else {
                        skipCaching("the store refused a write: \(error)")
                    }
                }
            }
            download.buffer.removeFirst(size)
            download.bufferStart += size
        }
    }

    /// Writes off the actor, so that readers are planned during the commit.
    private nonisolated static func write(
        _ chunk: Data, at offset: Int, key: String, version: UInt64, store: MediaStore
    ) async throws(StoreError) -> EntryInfo {
        try store.write(chunk, at: offset, forKey: key, version: version)
    }

    /// The entry version `download` fills is no longer in the store. Its
    /// bytes are never written into another version: it stops storing
    /// (its readers still get the bytes). When that was the version this
    /// fetcher serves, someone else replaced the entry: the resource is
    /// played on uncached, from the origin only.
    private func entryReplaced(_ download: Download) {
        let version = download.entryVersion
        download.entryVersion = nil
        count { $0.replacedWrites += 1 }
        if version == entryVersion {
            entryVersion = nil
            skipCaching("the store entry was replaced by another writer while it was being filled")
        }
    }

    private func finish(_ download: Download) {
        downloads[download.id] = nil
        for subscriber in download.subscribers.values { subscriber.channel.finish() }
        download.subscribers = [:]
        if download.isProbe && information == nil {
            failResolution(.origin(.connectionLost(reason: "the first response ended before the content was known")))
        }
    }

    private func fail(_ download: Download, _ error: StreamingError) {
        downloads[download.id] = nil
        for subscriber in download.subscribers.values { subscriber.channel.finish(throwing: error) }
        download.subscribers = [:]
        if download.isProbe && information == nil { failResolution(error) }
    }

    /// The resource changed at the origin: no old byte may be mixed with
    /// new ones, so the entry is dropped and every reader fails.
    private func contentChanged(_ error: StreamingError) {
        if let entryVersion {
            // Drops the version filled from the old content, not a newer one.
            _ = try? store.remove(forKey: key, version: entryVersion)
        }
        entryVersion = nil
        information = nil
        for download in downloads.values {
            stop(download)
            fail(download, error)
        }
        emit(.revalidated(changed: true))
        if resolving { failResolution(error) }
    }

    /// Stops every download (readers fail with `cancelled`).
    func cancelAll() {
        for download in downloads.values {
            stop(download)
            fail(download, .cancelled)
        }
    }
}

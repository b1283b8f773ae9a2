import Foundation
import MediaStore

/// What the fetcher does for its downloads' runners: judges responses
/// (``ResponseValidator``), hands bytes to readers and to the download's
/// ``ChunkSink``, keeps slow readers bounded, and ends downloads.
extension ResourceFetcher: DownloadCoordinator {
    func isResolving(_ download: Download) -> Bool { download.isProbe && information == nil }

    func wantedEnd(of download: Download) -> Int? {
        guard !download.subscribers.isEmpty else { return nil }
        let ends = download.subscribers.values.map { subscriber in
            subscriber.until.map { ($0 + chunkSize - 1) / chunkSize * chunkSize } ?? Int.max
        }
        return ends.max()
    }

    func request(for download: Download, range: Range<Int>) -> OriginRequest {
        var request = OriginRequest(
            url: download.url, range: range, headers: configuration.headers.merging(download.headers) { $1 })
        if isResolving(download) {
            request.ifNoneMatch = download.ifNoneMatch
            request.ifModifiedSince = download.ifModifiedSince
        } else {
            request.ifRange = ResponseValidator.ifRange(for: validators)
        }
        return request
    }

    func willSend(_ request: OriginRequest) { count { $0.originRequests += 1 } }

    func accept(_ response: OriginResponse, to requested: Range<Int>, for download: Download) async throws
        -> ExpectedBody?
    {
        if isResolving(download) { return try await acceptFirst(response, requested: requested, download) }
        guard let length = information?.contentLength else { throw OriginError.malformedResponse(reason: "no length") }
        return try ResponseValidator.checkRange(
            response, requested: requested, length: length, validators: validators, chunkSize: chunkSize,
            url: download.url)
    }

    func didReceive(byteCount: Int) { count { $0.originBytes += byteCount } }

    /// Takes received bytes: hands them to subscribers, resolves the
    /// content information once it can, and writes every whole chunk (and
    /// the short last one) to the store.
    func receive(_ bytes: Data, into download: Download) async throws {
        let pieceStart = download.position
        download.sink.append(bytes)
        for (id, subscriber) in download.subscribers where subscriber.offset < download.position {
            let from = bytes.startIndex + max(0, subscriber.offset - pieceStart)
            subscriber.channel.send(Data(bytes[from...]))
            download.subscribers[id]?.offset = download.position
        }
        try await resolveProbeIfReady(download)
        await flush(download)
        await keepReadersBounded(download)
        reschedule(download)
    }

    func bodyEnded(_ download: Download, at length: Int) async throws {
        download.end = length
        await flush(download)
        if download.sink.isStoring, let version = download.sink.version {
            let key = self.key
            do {
                _ = try await storeIO.write { store throws(StoreError) in
                    // A length that is a multiple of the chunk size is not implied by the
                    // writes: an empty write at the end fixes it, in exactly this version.
                    if let stored = try store.info(forKey: key), stored.version == version, stored.length != nil {
                        return stored
                    }
                    return try store.write(Data(), at: length, forKey: key, version: version)
                }
            } catch {
                storeRefused(error, download)
            }
        }
        try await resolveProbeIfReady(download)
    }

    func retrying(_ download: Download, after error: OriginError) {
        count { $0.retries += 1 }
        emit(.retrying(error))
    }

    func failed(_ download: Download, with error: StreamingError) async {
        if case .resourceChanged = error { return await contentChanged(error) }
        fail(download, error)
    }

    func finished(_ download: Download) {
        // A probe abandoned by every waiter was removed already: a newer one may resolve now.
        let isCurrent = downloads.removeValue(forKey: download.id) != nil
        for subscriber in download.subscribers.values { subscriber.channel.finish() }
        download.subscribers = [:]
        if isCurrent && download.isProbe && information == nil {
            failResolution(.origin(.connectionLost(reason: "the first response ended before the content was known")))
        }
    }

    // MARK: Storing and back-pressure

    /// Writes the whole chunks `download` holds, reporting progress.
    private func flush(_ download: Download) async {
        let report = await download.sink.flush(end: download.end)
        for info in report.written {
            count { $0.chunksFetched += 1 }
            if let length = info.length { emit(.progress(cached: info.cachedBytes, length: length)) }
            if info.isComplete { emit(.complete) }
        }
        if let refusal = report.refusal { storeRefused(refusal, download) }
    }

    /// The store refused a write of `download`, which stopped storing.
    /// When the version it filled was replaced and that is the version
    /// this fetcher serves, someone else replaced the entry: the resource
    /// plays on uncached (from the origin only). Any other refusal (full,
    /// too large, damaged) makes it play on uncached too.
    func storeRefused(_ error: StoreError, _ download: Download) {
        download.sink.stopStoring()
        guard case .entryReplaced = error else { return skipCaching("the store refused a write: \(error)") }
        count { $0.replacedWrites += 1 }
        if download.sink.version == entryVersion {
            entryVersion = nil
            skipCaching("the store entry was replaced by another writer while it was being filled")
        }
    }

    /// Back-pressure. A reader more than `readerBufferLimit` behind is let
    /// go when the bytes are cached: it takes what it was handed, then goes
    /// on from the store (where every byte it was handed already is, or is
    /// in this download's buffer, which it rejoins). When they are not
    /// cached, the download stops reading the origin until the reader is
    /// halfway back. Either way, a slow reader costs bounded memory.
    private func keepReadersBounded(_ download: Download) async {
        let limit = configuration.readerBufferLimit
        if download.sink.isStoring {
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
            reschedule(download)
            await lagging.channel.waitForBacklog(atMost: limit / 2)
            download.waitingForReaders = false
            reschedule(download)
            download.lastProgress = .now
        }
    }

    // MARK: Scheduling

    /// Tells the scheduler what `download` runs for now: the highest
    /// priority among its readers (a probe: at least its waiters'; no
    /// reader: a download's, as it only finishes its request), and idle
    /// while it waits for its readers or every reader is more than a
    /// request behind (a paused player: it then holds nothing back).
    func reschedule(_ download: Download) {
        var priority = download.subscribers.values.map(\.priority).max() ?? .download
        if isResolving(download) { priority = max(priority, download.probePriority) }
        // Only a player is ever paused: a preload's or a download's reader
        // behind is a busy machine, not a reason to let others go first.
        let behind =
            priority == .playback && !download.subscribers.isEmpty
            && download.subscribers.values.allSatisfy { $0.channel.backlog > requestBytes }
        let idle = download.waitingForReaders || behind
        if priority != download.scheduledPriority {
            download.scheduledPriority = priority
            scheduler.setPriority(priority, for: download.ticket)
        }
        if idle != download.scheduledIdle {
            download.scheduledIdle = idle
            scheduler.setIdle(idle, for: download.ticket)
        }
    }
}

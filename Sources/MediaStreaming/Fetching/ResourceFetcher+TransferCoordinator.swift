import Foundation
import MediaStore

/// What the fetcher does for its transfers' runners: judges responses
/// (``ResponseValidator``), hands bytes to readers and to the transfer's
/// ``ChunkSink``, keeps slow readers bounded, and ends transfers.
extension ResourceFetcher: TransferCoordinator {
    func isResolving(_ transfer: Transfer) -> Bool { transfer.isProbe && information == nil }

    func wantedEnd(of transfer: Transfer) -> Int? {
        guard !transfer.subscribers.isEmpty else { return nil }
        let ends = transfer.subscribers.values.map { subscriber in subscriber.until ?? Int.max }
        return ends.max()
    }

    func request(for transfer: Transfer, range: Range<Int>) -> OriginRequest {
        var request = OriginRequest(
            url: transfer.url, range: range, headers: configuration.headers.merging(transfer.headers) { $1 })
        if isResolving(transfer) {
            request.ifNoneMatch = transfer.ifNoneMatch
            request.ifModifiedSince = transfer.ifModifiedSince
        } else {
            request.ifRange = ResponseValidator.ifRange(for: validators)
        }
        return request
    }

    func willSend(_ request: OriginRequest) { count { $0.originRequests += 1 } }

    func accept(_ response: OriginResponse, to requested: Range<Int>, for transfer: Transfer) async throws
        -> ExpectedBody?
    {
        if isResolving(transfer) { return try await acceptFirst(response, requested: requested, transfer) }
        guard let length = information?.contentLength else { throw OriginError.malformedResponse(reason: "no length") }
        let body = try ResponseValidator.checkRange(
            response, requested: requested, length: length, validators: validators, chunkSize: chunkSize,
            url: transfer.url)
        // A segment never reads the bytes before it: the origin ignored `Range`.
        if body.isWholeResource && transfer.refusesWholeBody && requested.lowerBound > 0 {
            // Not joined meanwhile: a reader that takes a whole body (a
            // download's one connection reading on) would fail with it.
            transfer.isFailing = true
            throw StreamingError.origin(.httpStatus(code: response.statusCode, url: transfer.url))
        }
        return body
    }

    func didReceive(byteCount: Int) { count { $0.originBytes += byteCount } }

    /// Takes received bytes: hands them to subscribers, resolves the
    /// content information once it can, and writes every whole chunk (and
    /// the short last one) to the store.
    func receive(_ bytes: Data, into transfer: Transfer) async throws {
        let pieceStart = transfer.position
        transfer.sink.append(bytes)
        var leaving: [Int] = []
        for (id, subscriber) in transfer.subscribers where subscriber.offset < transfer.position {
            let from = bytes.startIndex + max(0, subscriber.offset - pieceStart)
            if !subscriber.channel.send(Data(bytes[from...])) { leaving.append(id) }
            transfer.subscribers[id]?.offset = transfer.position
        }
        // A reader that is leaving is let go now, not when its stream is
        // dropped: the transfer winds down from this piece on, however
        // late the drop's own notice runs.
        for id in leaving { unsubscribe(id, from: transfer.id) }
        try await resolveProbeIfReady(transfer)
        await flush(transfer)
        endPrefixReaders(transfer)
        await keepReadersBounded(transfer)
        reschedule(transfer)
    }

    /// Ends the streams of readers that want a prefix only (a preload, a
    /// download's segment) once they were handed every byte of it and it
    /// is stored: a stream that ends has its bytes in the store, so what
    /// its reader looks up next (the store's ranges) finds them, and it
    /// does not read on through a longer transfer it joined.
    private func endPrefixReaders(_ transfer: Transfer) {
        // Bytes before `bufferStart` are written (or dropped when not storing).
        let stored = transfer.sink.bufferStart
        for (id, subscriber) in transfer.subscribers {
            guard let until = subscriber.until, subscriber.offset >= until, stored >= until else { continue }
            subscriber.channel.finish()
            unsubscribe(id, from: transfer.id)
        }
    }

    func bodyEnded(_ transfer: Transfer, at length: Int) async throws {
        transfer.end = length
        await flush(transfer)
        if transfer.sink.isStoring, let version = transfer.sink.version {
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
                storeRefused(error, transfer)
            }
        }
        try await resolveProbeIfReady(transfer)
    }

    func retrying(_ transfer: Transfer, after error: OriginError) {
        count { $0.retries += 1 }
        emit(.retrying(error))
    }

    func failed(_ transfer: Transfer, with error: StreamingError) async {
        transfer.isFailing = true
        await configuration.fetcherHooks.transferFailure.current?()
        if case .resourceChanged = error { return await contentChanged(error) }
        fail(transfer, error)
    }

    func finished(_ transfer: Transfer) {
        // A probe abandoned by every waiter was removed already: a newer one may resolve now.
        let isCurrent = transfers.removeValue(forKey: transfer.id) != nil
        // Stopped by a change of the resource: `contentChanged` fails its
        // readers once the old entry is dropped (a reader whose bytes just
        // ended would plan again against a resource no longer known).
        if transfer.stoppedByChange { return }
        for subscriber in transfer.subscribers.values { subscriber.channel.finish() }
        transfer.subscribers = [:]
        if isCurrent && transfer.isProbe && information == nil {
            failResolution(.origin(.connectionLost(reason: "the first response ended before the content was known")))
        }
    }

    // MARK: Storing and back-pressure

    func keepReceived(_ transfer: Transfer) async {
        // While the length is unknown a short write would fix it there; and
        // bytes of a version not yet known (nor being prepared) have nowhere
        // to go (a retry fetches them again).
        guard transfer.end != Int.max, transfer.sink.isStoring,
            transfer.sink.version != nil || transfer.entryPreparation != nil, !transfer.sink.buffer.isEmpty
        else { return }
        await flush(transfer, end: transfer.position)
    }

    /// Writes the whole chunks `transfer` holds, and the rest from `end`
    /// (its end by default) on, reporting progress. While the entry it
    /// fills is being prepared, bytes short of a whole chunk wait in its
    /// buffer; a whole chunk, or the end, waits for the entry (the transfer
    /// reads no more meanwhile: at most a chunk and a piece are held).
    private func flush(_ transfer: Transfer, end: Int? = nil) async {
        let sink = transfer.sink
        let due =
            sink.buffer.count >= chunkSize - sink.bufferStart % chunkSize || sink.position >= (end ?? transfer.end)
        guard await entryBound(transfer, waiting: due) else { return }
        let report = await sink.flush(end: end ?? transfer.end)
        for info in report.written {
            count { $0.chunksFetched += 1 }
            if let length = info.length { emit(.progress(cached: info.cachedBytes, length: length)) }
            if info.isComplete { emit(.complete) }
        }
        if let refusal = report.refusal { storeRefused(refusal, transfer) }
    }

    /// The store refused a write of `transfer`, which stopped storing.
    /// When the version it filled was replaced and that is the version
    /// this fetcher serves, someone else replaced the entry: the resource
    /// plays on uncached (from the origin only). Any other refusal (full,
    /// too large, damaged) makes it play on uncached too.
    func storeRefused(_ error: StoreError, _ transfer: Transfer) {
        transfer.sink.stopStoring()
        guard case .entryReplaced = error else { return skipCaching("the store refused a write: \(error)") }
        count { $0.replacedWrites += 1 }
        if transfer.sink.version == entryVersion {
            entryVersion = nil
            skipCaching("the store entry was replaced by another writer while it was being filled")
        }
    }

    /// Back-pressure. A reader more than `readerBufferLimit` behind is let
    /// go when the bytes are cached: it takes what it was handed, then goes
    /// on from the store (where every byte it was handed already is, or is
    /// in this transfer's buffer, which it rejoins). When they are not
    /// cached, the transfer stops reading the origin until the reader is
    /// halfway back. Either way, a slow reader costs bounded memory.
    private func keepReadersBounded(_ transfer: Transfer) async {
        let limit = configuration.readerBufferLimit
        if transfer.sink.isStoring {
            for (id, subscriber) in transfer.subscribers where subscriber.channel.backlog > limit {
                subscriber.channel.finish()
                transfer.subscribers[id] = nil
            }
            return
        }
        while !transfer.isStopped, !Task.isCancelled,
            let lagging = transfer.subscribers.values.first(where: { $0.channel.backlog > limit })
        {
            transfer.waitingForReaders = true
            reschedule(transfer)
            await lagging.channel.waitForBacklog(atMost: limit / 2)
            transfer.waitingForReaders = false
            reschedule(transfer)
            transfer.lastProgress = .now
        }
    }

    // MARK: Scheduling

    /// Tells the scheduler what `transfer` runs for now: the highest
    /// priority among its readers (a probe: at least its waiters'; no
    /// reader: a transfer's, as it only finishes its request), and idle
    /// while it waits for its readers or every reader is more than a
    /// request behind (a paused player: it then holds nothing back).
    func reschedule(_ transfer: Transfer) {
        var priority = transfer.subscribers.values.map(\.priority).max() ?? .download
        if isResolving(transfer) { priority = max(priority, transfer.probePriority) }
        // Only a player is ever paused: a preload's or a transfer's reader
        // behind is a busy machine, not a reason to let others go first.
        let behind =
            priority == .playback && !transfer.subscribers.isEmpty
            && transfer.subscribers.values.allSatisfy { $0.channel.backlog > requestBytes }
        let idle = transfer.waitingForReaders || behind
        if priority != transfer.scheduledPriority {
            transfer.scheduledPriority = priority
            scheduler.setPriority(priority, for: transfer.ticket)
        }
        if idle != transfer.scheduledIdle {
            transfer.scheduledIdle = idle
            scheduler.setIdle(idle, for: transfer.ticket)
        }
    }
}

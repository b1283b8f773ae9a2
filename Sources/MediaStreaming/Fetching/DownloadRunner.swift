import Foundation

/// Moves one ``Download``'s bytes from the origin: one `Range` request of
/// at most ``requestBytes`` after another until the download's end,
/// retrying transient failures (``OriginError/isTransient``), and
/// abandoning a response that sends no byte for ``stallTimeout`` seconds
/// (the stall watchdog; waiting for a slow reader is not a stall).
///
/// Retries follow progress: a request makes progress when bytes it brought
/// are kept (a whole chunk, or the rest of the request); one that does not
/// (a short `206`, a dropped connection) is retried after ``retryBackoff``
/// seconds, doubled for each such request in a row, at most 2 s, and the
/// download fails with the last error once ``maxRetries`` requests in a
/// row made none.
///
/// It checks that the body is as long as the response said (``OriginError/overlong(expected:)``,
/// ``OriginError/truncated(expected:received:)``); whether the response is
/// the one asked for is the coordinator's call (``ResponseValidator``).
struct DownloadRunner: Sendable {
    let origin: any Origin
    /// Bytes asked for per request.
    let requestBytes: Int
    /// Retries in a row of requests that made no progress.
    let maxRetries: Int
    /// Seconds before the first retry without progress (doubled for each next one, at most 2 s).
    let retryBackoff: TimeInterval
    /// Seconds without a byte before a response counts as stalled.
    let stallTimeout: TimeInterval

    /// Runs `download` to its end (or until it is stopped, left without
    /// readers, or fails), then tells `coordinator`.
    ///
    /// The transfer is admitted by the coordinator's ``FetchScheduler``
    /// first (a connection to the host), and passes its checkpoint before
    /// every request: while a busy transfer of higher priority runs, it
    /// waits there with no connection open. In the middle of a response it
    /// ends the request at the next chunk boundary once outranked (nothing
    /// buffered is dropped, so no byte is fetched twice) and waits at the
    /// checkpoint; preempted by playback, it ends (its readers plan again).
    func run<Coordinator: DownloadCoordinator>(_ download: Download, for coordinator: isolated Coordinator) async {
        let scheduler = coordinator.scheduler
        let ticket = download.ticket
        defer { scheduler.finish(ticket) }
        do {
            try await scheduler.admit(ticket)
            if download.scheduledIdle { scheduler.setIdle(true, for: ticket) }
        } catch {
            return coordinator.finished(download)
        }
        // Requests in a row that kept no byte.
        var failures = 0
        while !download.isStopped && download.position < download.end {
            if !coordinator.isResolving(download) && download.subscribers.isEmpty { break }
            do { try await scheduler.checkpoint(ticket) } catch { break }
            if download.isStopped { break }
            if !coordinator.isResolving(download) && download.subscribers.isEmpty { break }
            // Readers that want a prefix only (preloads) bound the requests.
            let wanted = coordinator.isResolving(download) ? Int.max : coordinator.wantedEnd(of: download) ?? Int.max
            // A retried request starts again at the first byte not yet stored.
            download.sink.discardBuffer()
            let start = download.position
            if wanted <= start { break }
            let end =
                download.end == Int.max
                ? start + (download.firstRequestBytes ?? requestBytes)
                : min(download.end, start + requestBytes, wanted)
            let request = coordinator.request(for: download, range: start..<end)
            let kept = download.bufferStart
            do {
                try await transferWithWatchdog(download, request, coordinator)
                failures = 0
            } catch {
                if download.isStopped { break }
                // Bytes past the last whole chunk are dropped before the retry: only chunks count.
                if download.bufferStart > kept { failures = 0 }
                let failure = StreamingError.wrap(error)
                if case .origin(let originError) = failure, originError.isTransient, failures < maxRetries {
                    failures += 1
                    coordinator.retrying(download, after: originError)
                    let delay = min(2, retryBackoff * Double(1 << min(failures - 1, 16)))
                    try? await Task.sleep(for: .seconds(delay))
                    continue
                }
                return await coordinator.failed(download, with: failure)
            }
        }
        coordinator.finished(download)
    }

    /// One request, raced against the stall watchdog.
    private func transferWithWatchdog<Coordinator: DownloadCoordinator>(
        _ download: Download, _ request: OriginRequest, _ coordinator: isolated Coordinator
    ) async throws {
        download.lastProgress = .now
        let timeout = stallTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.transfer(download, request, coordinator) }
            group.addTask {
                while true {
                    try await Task.sleep(for: .seconds(max(0.01, timeout / 4)))
                    if await Self.idleTime(of: download, coordinator) > timeout {
                        throw OriginError.stalled(seconds: timeout)
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Seconds since `download` last received a byte; 0 while it waits for a reader.
    private static func idleTime<Coordinator: DownloadCoordinator>(
        of download: Download, _ coordinator: isolated Coordinator
    ) -> Double {
        if download.waitingForReaders { return 0 }
        let idle = ContinuousClock.now - download.lastProgress
        return Double(idle.components.seconds) + Double(idle.components.attoseconds) / 1e18
    }

    /// Sends one request and feeds the part of its body the download
    /// still needs into the coordinator.
    private func transfer<Coordinator: DownloadCoordinator>(
        _ download: Download, _ request: OriginRequest, _ coordinator: isolated Coordinator
    ) async throws {
        coordinator.willSend(request)
        let response = try await origin.fetch(request)
        download.lastProgress = .now
        guard let requested = request.range,
            let body = try await coordinator.accept(response, to: requested, for: download)
        else { return }
        // A 200 answer carries the rest of the file: read on rather than re-request.
        var limit = body.isWholeResource ? download.end : min(download.end, requested.upperBound)
        var cursor = body.start
        for try await piece in response.body {
            download.lastProgress = .now
            coordinator.didReceive(byteCount: piece.count)
            if let end = body.end, cursor + piece.count > end { throw OriginError.overlong(expected: end - body.start) }
            // Another download may have taken over the rest meanwhile.
            limit = min(limit, download.end)
            if download.windingDown || coordinator.scheduler.isOutranked(download.ticket) {
                // Outranked (or left by a stopped download): end the request at the
                // next chunk boundary (nothing is left buffered to drop), then wait
                // at the checkpoint (or end).
                // Every whole chunk this piece completes is kept (less to fetch
                // again), and at least one chunk per response (every request
                // makes progress).
                let chunk = download.sink.chunkSize
                let boundary = max(
                    (download.position + chunk - 1) / chunk, (cursor + piece.count) / chunk, body.start / chunk + 1)
                limit = min(limit, boundary * chunk)
            }
            let skip = max(0, download.position - cursor)
            let take = min(piece.count, limit - cursor) - skip
            cursor += piece.count
            if take > 0 {
                let from = piece.startIndex + skip
                try await coordinator.receive(Data(piece[from..<(from + take)]), into: download)
            }
            if download.position >= min(limit, download.end) || download.isStopped { return }
        }
        if download.isStopped || Task.isCancelled { return }
        if download.end == Int.max {
            // No length was announced: the end of the body is the end of the resource.
            return try await coordinator.bodyEnded(download, at: cursor)
        }
        let expected = min(limit, body.end ?? limit)
        if download.position < expected {
            throw OriginError.truncated(expected: expected - body.start, received: cursor - body.start)
        }
    }
}

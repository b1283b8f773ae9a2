import Foundation
import MediaSupport

/// Moves one ``Transfer``'s bytes from the origin: one `Range` request
/// after another until the transfer's end, of at most ``requestBytes``;
/// for a player, each after one that brought its whole range is
/// ``requestGrowth`` times larger, up to ``maxRequestBytes`` (every
/// request costs a round trip with nothing received: a player that keeps
/// reading gets few of them), retrying transient failures (``OriginError/isTransient``), and
/// abandoning a response that sends no byte for ``stallTimeout`` seconds
/// (the stall watchdog; waiting for a slow reader, or for the store entry
/// its bytes go into, is not a stall).
///
/// Retries follow progress: a request makes progress when bytes it brought
/// are written (a whole chunk, or the rest of the request); one that does not
/// (a short `206`, a dropped connection) counts as a retry of
/// ``retryPolicy``, which says how long to wait, and when the transfer
/// fails with the last error.
///
/// It checks that the body is as long as the response said (``OriginError/overlong(expected:)``,
/// ``OriginError/truncated(expected:received:)``); whether the response is
/// the one asked for is the coordinator's call (``ResponseValidator``).
struct TransferRunner: Sendable {
    let origin: any Origin
    /// Bytes asked for by a transfer's first request.
    let requestBytes: Int
    /// How much larger a request is than the previous one when that one brought its whole range.
    static let requestGrowth = 4
    /// The most bytes one request asks for (``requestGrowth`` × ``requestBytes``):
    /// it bounds the body URLSession buffers for a reader slower than the link.
    var maxRequestBytes: Int {
        requestBytes > Int.max / Self.requestGrowth ? requestBytes : requestBytes * Self.requestGrowth
    }
    /// Retries in a row of requests that made no progress, and their waits.
    let retryPolicy: RetryPolicy
    /// Time without a byte before a response counts as stalled.
    let stallTimeout: Duration

    /// Runs `transfer` to its end (or until it is stopped, left without
    /// readers, or fails), then tells `coordinator`.
    ///
    /// The transfer is admitted by the coordinator's ``FetchScheduler``
    /// first (a connection to the host), and passes its checkpoint before
    /// every request: while a busy transfer of higher priority runs, it
    /// waits there with no connection open. In the middle of a response it
    /// ends the request at the next chunk boundary once outranked (nothing
    /// buffered is dropped, so no byte is fetched twice) and waits at the
    /// checkpoint; preempted by playback, it ends (its readers plan again).
    func run<Coordinator: TransferCoordinator>(_ transfer: Transfer, for coordinator: isolated Coordinator) async {
        let scheduler = coordinator.scheduler
        let ticket = transfer.ticket
        defer { scheduler.finish(ticket) }
        do {
            try await scheduler.admit(ticket)
            if transfer.scheduledIdle { scheduler.setIdle(true, for: ticket) }
        } catch {
            return coordinator.finished(transfer)
        }
        // Requests in a row that kept no byte.
        var failures = 0
        // Bytes the next request asks for.
        var requestSize = requestBytes
        while !transfer.isStopped && transfer.position < transfer.end {
            if !coordinator.isResolving(transfer) && transfer.subscribers.isEmpty { break }
            do { try await scheduler.checkpoint(ticket) } catch { break }
            if transfer.isStopped { break }
            if !coordinator.isResolving(transfer) && transfer.subscribers.isEmpty { break }
            // Readers that want a prefix only (preloads) bound the requests.
            let wanted = coordinator.isResolving(transfer) ? Int.max : coordinator.wantedEnd(of: transfer) ?? Int.max
            // A retried request starts again at the first byte not yet
            // stored: what arrived is kept first, when it can be.
            await coordinator.keepReceived(transfer)
            transfer.sink.discardBuffer()
            let start = transfer.position
            if wanted <= start { break }
            // Only a player's requests grow: a download or a preload yields
            // to players, and what it has in flight when it pauses is dropped.
            let forPlayer = transfer.scheduledPriority == .playback
            // A download's segment asks for its own size (at least 8 MiB).
            let size = forPlayer ? requestSize : (transfer.requestBytes ?? requestBytes)
            let end =
                transfer.end == Int.max
                ? start + (transfer.firstRequestBytes ?? requestBytes)
                : min(transfer.end, start > Int.max - size ? Int.max : start + size, wanted)
            let request = coordinator.request(for: transfer, range: start..<end)
            let kept = transfer.bufferStart
            do {
                try await transferWithWatchdog(transfer, request, coordinator)
                failures = 0
                if forPlayer, transfer.position >= end, end - start >= requestSize {
                    requestSize =
                        requestSize > maxRequestBytes / Self.requestGrowth
                        ? maxRequestBytes : requestSize * Self.requestGrowth
                }
            } catch {
                if transfer.isStopped { break }
                // Bytes past the last whole chunk are dropped before the retry: only chunks count.
                if transfer.bufferStart > kept { failures = 0 }
                let failure = StreamingError.wrap(error)
                if case .origin(let originError) = failure,
                    let delay = retryPolicy.delay(after: failure, retry: failures + 1)
                {
                    failures += 1
                    coordinator.retrying(transfer, after: originError)
                    do {
                        try await Task.sleep(for: delay)
                    } catch {
                        // Cancelled while it waits: no further request; readers hear why.
                        if transfer.isStopped { break }
                        return await coordinator.failed(transfer, with: .cancelled)
                    }
                    continue
                }
                return await coordinator.failed(transfer, with: failure)
            }
        }
        await coordinator.keepReceived(transfer)
        coordinator.finished(transfer)
    }

    /// One request, raced against the stall watchdog.
    private func transferWithWatchdog<Coordinator: TransferCoordinator>(
        _ transfer: Transfer, _ request: OriginRequest, _ coordinator: isolated Coordinator
    ) async throws {
        transfer.lastProgress = .now
        let timeout = stallTimeout
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await self.exchange(transfer, request, coordinator) }
            group.addTask {
                while true {
                    try await Task.sleep(for: max(.milliseconds(10), timeout / 4))
                    if await Self.idleTime(of: transfer, coordinator) > timeout {
                        throw OriginError.stalled(seconds: timeout.inSeconds)
                    }
                }
            }
            try await group.next()
            group.cancelAll()
        }
    }

    /// Time since `transfer` last received a byte; zero while it waits for a reader.
    private static func idleTime<Coordinator: TransferCoordinator>(
        of transfer: Transfer, _ coordinator: isolated Coordinator
    ) -> Duration {
        if transfer.waitingForReaders || transfer.waitingForEntry { return .zero }
        return ContinuousClock.now - transfer.lastProgress
    }

    /// Sends one request and feeds the part of its body the transfer
    /// still needs into the coordinator.
    private func exchange<Coordinator: TransferCoordinator>(
        _ transfer: Transfer, _ request: OriginRequest, _ coordinator: isolated Coordinator
    ) async throws {
        coordinator.willSend(request)
        let sent = ContinuousClock.now
        let response = try await origin.fetch(request)
        let head = ContinuousClock.now
        transfer.lastProgress = head
        guard let requested = request.range,
            let body = try await coordinator.accept(response, to: requested, for: transfer)
        else { return }
        // A 200 answer carries the rest of the file: read on rather than re-request.
        var limit = body.isWholeResource ? transfer.end : min(transfer.end, requested.upperBound)
        transfer.pace = TransferPace(
            headLatency: head - sent, responseStart: head, startPosition: transfer.position, requestEnd: limit)
        var cursor = body.start
        let chunk = transfer.sink.chunkSize
        for try await piece in response.body {
            transfer.lastProgress = .now
            coordinator.didReceive(byteCount: piece.count)
            if let end = body.end, cursor + piece.count > end { throw OriginError.overlong(expected: end - body.start) }
            // Another transfer may have taken over the rest meanwhile.
            limit = min(limit, transfer.end)
            if let unread = transfer.unreadLimit {
                // Its readers left: no further than the chunk boundary after `unread`.
                limit = min(limit, unread > Int.max - chunk ? Int.max : (unread + chunk - 1) / chunk * chunk)
            }
            if transfer.windingDown || coordinator.scheduler.isOutranked(transfer.ticket) {
                // Outranked (or left by a stopped transfer): end the request at the
                // next chunk boundary (nothing is left buffered to drop), then wait
                // at the checkpoint (or end).
                // Every whole chunk this piece completes is kept (less to fetch
                // again), and at least one chunk per response (every request
                // makes progress).
                let boundary = max(
                    (transfer.position + chunk - 1) / chunk, (cursor + piece.count) / chunk, body.start / chunk + 1)
                limit = min(limit, boundary * chunk)
            }
            let skip = max(0, transfer.position - cursor)
            let take = min(piece.count, limit - cursor) - skip
            cursor += piece.count
            if take > 0 {
                let from = piece.startIndex + skip
                try await coordinator.receive(Data(piece[from..<(from + take)]), into: transfer)
            }
            if transfer.position >= min(limit, transfer.end) || transfer.isStopped { return }
        }
        if transfer.isStopped || Task.isCancelled { return }
        if transfer.end == Int.max {
            // No length was announced: the end of the body is the end of the resource.
            return try await coordinator.bodyEnded(transfer, at: cursor)
        }
        let expected = min(limit, body.end ?? limit)
        if transfer.position < expected {
            throw OriginError.truncated(expected: expected - body.start, received: cursor - body.start)
        }
    }
}

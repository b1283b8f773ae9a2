import Foundation
import MediaStore
import MediaStreaming

/// Downloads one file as ``BackgroundTransfer`` tasks, range by range:
/// the queue's progressive performer when
/// ``DownloadQueueConfiguration/backgroundTransfer`` is set.
///
/// A run fetches the first range the store does not hold (so a range
/// already stored is never fetched again), as the task
/// ``TransferIdentifier`` of the download and the range's offset, and
/// imports the file it delivers (like a streamed fill: see ``TransferImportError``); then the
/// next missing range, until the entry is complete. Before it starts a
/// task it takes, in this order:
/// - a delivery of that task already in the ``TransferInbox`` (it ended
///   while the app was not running, or while the download was stopped);
/// - that task if the service still runs it (started before a relaunch):
///   it waits for its end, never starting it twice; the download's other
///   tasks are cancelled;
/// - the record's ``DownloadRecord/resumeData`` when it is that task's.
///
/// A run cancelled because the download stopped (stopped, cancelled,
/// removed) cancels its task and keeps the resume data the service
/// produced in the record; one cancelled while the download still runs
/// (its queue is going away) leaves the task to the service, for the
/// next launch to adopt. A failed task (a transport error) keeps its
/// resume data too and is started again from it after the wait of the
/// cache's `RetryPolicy` (`StreamingConfiguration/retryPolicy`), as many
/// times in a row as it allows (a range imported starts the count
/// again); then the run fails with it. A file that cannot be imported (short, long,
/// a response that is not the range asked for, an entry replaced
/// meanwhile) is reported to ``importFailed`` and fetched again, up to
/// ``importAttempts`` times in a run; then the run fails with it. So do
/// ``importAttempts`` imports that replace the entry holding bytes (its
/// validators changed: an origin whose `ETag` changes at each response
/// would replace it forever).
public struct BackgroundTransferPerformer: DownloadPerformer {
    public var kind: String { ProgressiveDownloadPerformer.kind }

    public let transfer: any BackgroundTransfer
    /// Imports tried in a run before it fails. 3 by default.
    public var importAttempts: Int
    /// Told of each import that failed (the range is fetched again).
    public var importFailed: @Sendable (DownloadRecord, TransferImportError) -> Void
    /// How often the bytes a running task received are asked for, as the
    /// download's progress (the bytes stored plus them). 1 s by default.
    public var progressInterval: Duration

    public init(
        transfer: any BackgroundTransfer, importAttempts: Int = 3, progressInterval: Duration = .seconds(1),
        importFailed: @escaping @Sendable (DownloadRecord, TransferImportError) -> Void = { _, _ in }
    ) {
        self.transfer = transfer
        self.importAttempts = max(1, importAttempts)
        self.progressInterval = max(.milliseconds(10), progressInterval)
        self.importFailed = importFailed
    }

    public func keys(of record: DownloadRecord, in cache: StreamingCache) -> [String] { [record.cacheKey] }

    /// The first range of a resource of length `length` (`nil`: unknown)
    /// not in `stored` (sorted, merged); `nil` when it is all stored. An
    /// unknown end is `Int.max` (and nothing stored at all: the whole
    /// resource, asked for without a range).
    package static func firstMissing(stored: [Range<Int>], length: Int?) -> Range<Int>?? {
        var start = 0
        for range in stored {
            if range.lowerBound > start { return .some(start..<range.lowerBound) }
            start = max(start, range.upperBound)
        }
        if let length { return start < length ? .some(start..<length) : .none }
        return start == 0 ? .some(nil) : .some(start..<Int.max)
    }

    public func perform(_ record: DownloadRecord, context: DownloadContext) async throws(DownloadError)
        -> [StoredEntry]
    {
        let io = context.cache.storeIO
        let key = record.cacheKey
        var resume = record.resumeData
        // Whether the record keeps resume data (dropped once its range is imported).
        var recordResumes = record.resumeData != nil
        var failures = 0
        // Tasks failed in a row (a transport error): retried by the cache's `RetryPolicy`.
        var transportFailures = 0
        // Imports that replaced the entry holding bytes (the origin's
        // validators changed): an origin whose `ETag` changes at each
        // response would replace it forever.
        var replaced = 0
        // Bounded: each pass grows the entry (an import that does not
        // replace it fills at least a chunk of a hole), or counts a failure
        // or a replacement.
        while true {
            if Task.isCancelled { throw .cancelled }
            let (info, stored): (EntryInfo?, [Range<Int>])
            do {
                (info, stored) = try await io.read { store throws(StoreError) in
                    (try store.info(forKey: key), try store.cachedRanges(forKey: key))
                }
            } catch {
                throw .store(error)
            }
            if let info, info.isComplete { return [StoredEntry(key: key, version: info.version)] }
            let storedBytes = stored.reduce(0) { $0 + $1.count }
            let total = info?.length
            context.report(bytes: storedBytes, total: total)
            guard let missing = Self.firstMissing(stored: stored, length: info?.length) else {
                throw .transfer("\(key): no range missing, yet not complete")
            }
            let identifier = TransferIdentifier(download: record.id, offset: missing?.lowerBound ?? 0).description
            let request = TransferRequest(
                identifier: identifier, url: record.url, headers: record.headers, range: missing,
                network: TransferNetworkPolicy(conditions: record.conditions))
            // The task's bytes as progress while it runs.
            let transfer = transfer
            let interval = progressInterval
            let poller = Task {
                while !Task.isCancelled {
                    try? await Task.sleep(for: interval)
                    let task = await transfer.tasks().first { $0.identifier == identifier }
                    guard let task, !Task.isCancelled else { continue }
                    let bytes = storedBytes + max(0, task.bytesReceived)
                    context.report(bytes: total.map { min($0, bytes) } ?? bytes, total: total)
                }
            }
            let ended: TransferCompletion?
            do {
                ended = try await end(of: request, record: record, resume: resume, context: context)
            } catch {
                poller.cancel()
                throw error
            }
            poller.cancel()
            guard let completion = ended else { throw .cancelled }
            resume = nil
            switch completion.outcome {
            case .failed(let reason, let data):
                transfer.inbox.settle(completion)
                let kept = data.flatMap { TransferResumeData(identifier: identifier, data: $0) }
                context.keep(resumeData: kept)
                recordResumes = kept != nil
                // Started again from its resume data after the cache's retry
                // policy's wait, while retries in a row remain.
                transportFailures += 1
                guard let delay = context.cache.configuration.retryPolicy.delay(beforeRetry: transportFailures) else {
                    throw .transfer(reason)
                }
                do { try await Task.sleep(for: delay) } catch { throw .cancelled }
                resume = kept
            case .file(let file, let response):
                let imported: EntryInfo
                do throws(TransferImportError) {
                    imported = try await TransferredFileImporter.importFile(
                        file, request: request, response: response, key: key, io: io)
                    transfer.inbox.settle(completion)
                    transportFailures = 0
                    if recordResumes { context.keep(resumeData: nil) }
                    recordResumes = false
                } catch {
                    transfer.inbox.settle(completion)
                    context.keep(resumeData: nil)
                    recordResumes = false
                    importFailed(record, error)
                    failures += 1
                    if failures >= importAttempts { throw .transfer("import of \(identifier): \(error)") }
                    continue
                }
                if let info, info.cachedBytes > 0, imported.version != info.version {
                    replaced += 1
                    if replaced >= importAttempts {
                        throw .transfer("\(key): replaced \(replaced) times, its content changes at each response")
                    }
                }
            }
        }
    }

    /// The end of `request`'s task: delivered already, or of the task
    /// the service runs, or of one started now. `nil` when the run was
    /// cancelled (the task is cancelled and its resume data kept).
    private func end(
        of request: TransferRequest, record: DownloadRecord, resume: TransferResumeData?, context: DownloadContext
    ) async throws(DownloadError) -> TransferCompletion? {
        let inbox = transfer.inbox
        if let delivered = inbox.takeIfDelivered(request.identifier) { return delivered }
        let running = await transfer.tasks().filter { TransferIdentifier($0.identifier)?.download == record.id }
        // Another range's task of this download (started before a relaunch
        // that changed what is stored), or a second one of this range: not needed now.
        let adopted = running.first { $0.identifier == request.identifier }?.handle
        for other in running where other.handle != adopted { _ = await transfer.cancel(other.handle) }
        let task: TransferTaskHandle
        if let adopted {
            task = adopted
        } else {
            // Delivered while the tasks were listed.
            if let delivered = inbox.takeIfDelivered(request.identifier) { return delivered }
            let data = resume?.identifier == request.identifier ? resume?.data : nil
            task = try await transfer.start(request, resumeData: data)
        }
        if let completion = await inbox.take(request.identifier) { return completion }
        // Cancelled while the download still runs: its owner is going away
        // (the app quits), and the service goes on with the task.
        if context.isLive() { return nil }
        let data = await transfer.cancel(task)
        context.keep(resumeData: data.flatMap { TransferResumeData(identifier: request.identifier, data: $0) })
        return nil
    }
}

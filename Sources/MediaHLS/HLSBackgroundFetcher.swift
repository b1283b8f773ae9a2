import Foundation
import HLSPlaylist
import MediaDownloads
import MediaStore
import MediaStreaming
import MediaSupport

/// Why a delivered file of an HLS resource was not imported: fetched
/// again (``retry(_:)``), or the run fails (``fatal(_:)``: too large).
enum HLSImportFailure: Error, Sendable {
    case retry(TransferImportError)
    case fatal(DownloadError)
}

/// The background tasks of one run of an HLS download (a queue's
/// ``DownloadContext/background``): each resource the store lacks
/// (playlist, segment, init section, key) is one download-to-file task,
/// named by ``BackgroundFetch/identifier(download:key:)`` of the
/// download and the resource's store key, so that a relaunch finds it
/// again. For each resource, in this order, it takes:
/// - its delivery in the ``TransferInbox`` (it ended while the app was
///   not running, or while the download was stopped);
/// - its task if the service runs it (started before a relaunch): it
///   waits for its end, never starting it twice;
/// - else a task started now.
///
/// A failed task is started again (from its resume data) after the
/// cache's `RetryPolicy` wait, while the policy allows retries in a row;
/// a file that cannot be imported is told to `BackgroundFetch/importFailed`
/// and fetched again, up to `BackgroundFetch/importAttempts` times. A run
/// cancelled because its download stopped cancels the task it waits for
/// (and ``cancelAll()`` the run's others), and so does a run that fails;
/// one cancelled while the download still runs (its queue is going
/// away) leaves them to the service, for the next launch.
///
/// A run cancels only the tasks it started or adopted, by their
/// ``TransferTaskHandle``: a run resumed while a stopped one still ends
/// starts tasks of the same names, which the stopped run never touches.
struct HLSBackgroundFetcher: Sendable {
    let fetch: BackgroundFetch
    let record: DownloadRecord
    let context: DownloadContext
    /// The download's tasks the service ran when the run began, by name.
    let adopted: [String: TransferTaskHandle]
    /// The tasks of this run that may still run (started or adopted, not ended).
    private let owned = Locked<Set<TransferTaskHandle>>([])

    /// The fetcher of a run of `record`: lists the tasks the service runs.
    static func begin(_ fetch: BackgroundFetch, record: DownloadRecord, context: DownloadContext) async
        -> HLSBackgroundFetcher
    {
        var adopted: [String: TransferTaskHandle] = [:]
        var duplicates: [TransferTaskHandle] = []
        for task in await fetch.transfer.tasks() where TransferIdentifier(task.identifier)?.download == record.id {
            // One task per resource: the first listed; a second of its name is not needed.
            if adopted[task.identifier] == nil {
                adopted[task.identifier] = task.handle
            } else {
                duplicates.append(task.handle)
            }
        }
        for task in duplicates { _ = await fetch.transfer.cancel(task) }
        return HLSBackgroundFetcher(fetch: fetch, record: record, context: context, adopted: adopted)
    }

    private init(
        fetch: BackgroundFetch, record: DownloadRecord, context: DownloadContext,
        adopted: [String: TransferTaskHandle]
    ) {
        self.fetch = fetch
        self.record = record
        self.context = context
        self.adopted = adopted
        owned.withLock { $0 = Set(adopted.values) }
    }

    /// Cancels `task`, one of this run's.
    private func cancel(_ task: TransferTaskHandle) async {
        _ = await fetch.transfer.cancel(task)
        _ = owned.withLock { $0.remove(task) }
    }

    /// The task of the resource stored under `key`.
    func identifier(of key: String) -> String {
        BackgroundFetch.identifier(download: record.id, key: key).description
    }

    /// The request of `resource`'s task, with `headers`.
    func request(for resource: HLSResource, headers: [String: String]) -> TransferRequest {
        TransferRequest(
            identifier: identifier(of: resource.cacheKey.storeKey), url: resource.url,
            headers: context.cache.configuration.headers.merging(headers) { $1 },
            range: resource.byteRange?.range, network: TransferNetworkPolicy(conditions: record.conditions))
    }

    /// The resource stored under `key` is in the store: a task of it
    /// still running is cancelled, a delivery of it dropped.
    func found(_ key: String) async {
        let identifier = identifier(of: key)
        if let delivered = fetch.transfer.inbox.takeIfDelivered(identifier) { fetch.transfer.inbox.settle(delivered) }
        if let task = adopted[identifier] { await cancel(task) }
    }

    /// Cancels the download's tasks and drops its deliveries that are of
    /// none of `identifiers` (the plan's resources): a relaunch after its
    /// playlists changed.
    func dropStrays(keeping identifiers: Set<String>) async {
        for (name, task) in adopted where !identifiers.contains(name) { await cancel(task) }
        let inbox = fetch.transfer.inbox
        for delivery in inbox.pending
        where TransferIdentifier(delivery)?.download == record.id && !identifiers.contains(delivery) {
            inbox.discard(delivery)
        }
    }

    /// Cancels every task of this run that may still run (it failed).
    func cancelAll() async {
        for task in owned.withLock({ $0 }) { await cancel(task) }
    }

    /// The resource of `request` fetched by a task and imported by `importing`.
    func obtain<Value: Sendable>(
        _ request: TransferRequest,
        importing: (URL, TransferResponse) async throws(HLSImportFailure) -> Value
    ) async throws(DownloadError) -> Value {
        let inbox = fetch.transfer.inbox
        var adopt = adopted[request.identifier]
        var resume: Data?
        var importFailures = 0
        var transportFailures = 0
        while true {
            if Task.isCancelled { throw .cancelled }
            guard let completion = try await end(of: request, adopt: adopt, resume: resume) else { throw .cancelled }
            (adopt, resume) = (nil, nil)
            switch completion.outcome {
            case .failed(let reason, let data):
                inbox.settle(completion)
                transportFailures += 1
                guard let delay = context.cache.configuration.retryPolicy.delay(beforeRetry: transportFailures) else {
                    throw .transfer("\(request.identifier): \(reason)")
                }
                do { try await Task.sleep(for: delay) } catch { throw .cancelled }
                resume = data
            case .file(let file, let response):
                do throws(HLSImportFailure) {
                    let value = try await importing(file, response)
                    inbox.settle(completion)
                    return value
                } catch {
                    inbox.settle(completion)
                    switch error {
                    case .fatal(let failure): throw failure
                    case .retry(let failure):
                        fetch.importFailed(record, failure)
                        importFailures += 1
                        if importFailures >= fetch.importAttempts {
                            throw .transfer("import of \(request.identifier): \(failure)")
                        }
                    }
                }
            }
        }
    }

    /// The end of `request`'s task: delivered already, or of the task the
    /// service runs (`adopt`, adopted when the run began), or of one
    /// started now. `nil` when the run was cancelled (the task too, if the
    /// download stopped).
    private func end(of request: TransferRequest, adopt: TransferTaskHandle?, resume: Data?)
        async throws(DownloadError) -> TransferCompletion?
    {
        let inbox = fetch.transfer.inbox
        let identifier = request.identifier
        if let delivered = inbox.takeIfDelivered(identifier) { return delivered }
        // Still running? (It may have ended, or been cancelled, since the run began.)
        var task: TransferTaskHandle?
        if let adopt, await fetch.transfer.tasks().contains(where: { $0.handle == adopt }) { task = adopt }
        if task == nil {
            // Delivered while the tasks were listed.
            if let delivered = inbox.takeIfDelivered(identifier) { return delivered }
            // A stopped run starts nothing.
            if Task.isCancelled { return nil }
            let started = try await fetch.transfer.start(request, resumeData: resume)
            owned.withLock { _ = $0.insert(started) }
            task = started
        }
        guard let task else { return nil }
        if let completion = await inbox.take(identifier) {
            _ = owned.withLock { $0.remove(task) }
            return completion
        }
        // Cancelled while the download still runs: its owner is going away
        // (the app quits), and the service goes on with the task.
        if context.isLive() { return nil }
        await cancel(task)
        return nil
    }
}

extension HLSResourceStore {
    /// The bytes of a playlist delivered in `file` for `request`, checked
    /// against the response (status, length) and its limit; the file is removed.
    func importPlaylist(_ file: URL, request: TransferRequest, response: TransferResponse, resource: HLSResource)
        throws(HLSImportFailure) -> Data
    {
        defer { try? FileManager.default.removeItem(at: file) }
        let limit = limits.playlist.maxBytes
        let size: Int
        do {
            size = try FileManager.default.attributesOfItem(atPath: file.path)[.size] as? Int ?? 0
        } catch {
            throw .retry(.unreadable(String(describing: error)))
        }
        if size > limit {
            throw .fatal(
                .playlist(
                    url: resource.url,
                    reason: String(describing: PlaylistError(line: 0, reason: .tooLarge(.bytes, limit: limit)))))
        }
        do {
            _ = try TransferredFileImporter.expectation(for: request, response: response, fileSize: size)
        } catch {
            throw .retry(error)
        }
        do {
            let data = try Data(contentsOf: file)
            guard data.count == size else {
                throw HLSImportFailure.retry(.sizeMismatch(expected: size, actual: data.count))
            }
            return data
        } catch let error as HLSImportFailure {
            throw error
        } catch {
            throw .retry(.unreadable(String(describing: error)))
        }
    }

    /// Imports a segment, init section or key delivered in `file` for
    /// `request` the way a streamed fetch stores it: checked against the
    /// response (status, length, the byte range asked for) and its limit,
    /// written into a staging entry in batches (chunked, checksummed),
    /// published with `metadata` and no expiry and held by `holder` in one
    /// store write, only while `live` says so. The file is removed.
    ///
    /// - returns: the entry, `.dropped` when the run stopped meanwhile,
    ///   `nil` when the store holds the resource already (fetched by a
    ///   player meanwhile: the file is not imported).
    func importResource(
        _ file: URL, request: TransferRequest, response: TransferResponse, resource: HLSResource,
        metadata: EntryMetadata, holder: String, pinWhile live: @escaping @Sendable () -> Bool
    ) async throws(HLSImportFailure) -> Outcome? {
        defer { try? FileManager.default.removeItem(at: file) }
        let handle: FileHandle
        let size: Int
        do {
            handle = try FileHandle(forReadingFrom: file)
            size = Int(try handle.seekToEnd())
        } catch {
            throw .retry(.unreadable(String(describing: error)))
        }
        defer { try? handle.close() }
        let expected: TransferredFileImporter.Expectation
        do {
            expected = try TransferredFileImporter.expectation(for: request, response: response, fileSize: size)
        } catch {
            throw .retry(error)
        }
        // The bytes of the file that are the resource.
        var body = 0..<size
        if let asked = resource.byteRange?.range {
            if response.statusCode == 206 {
                guard expected.range == asked else {
                    throw .retry(.contentRange("\(expected.range) is not the range asked for, \(asked)"))
                }
            } else {
                // A 200 to a range is the whole resource: the range is cut from it.
                guard size >= asked.upperBound else {
                    throw .retry(.sizeMismatch(expected: asked.upperBound, actual: size))
                }
                body = asked
            }
        }
        let limit = limits.maxBytes(of: resource.kind)
        if body.count > limit {
            throw .fatal(.resourceTooLarge(url: resource.url, bytes: body.count, limit: limit))
        }
        let key = resource.cacheKey.storeKey
        do {
            if try await info(resource.cacheKey)?.isComplete == true { return nil }
        } catch {
            throw .retry(.unreadable(String(describing: error)))
        }
        let sink: HLSResourceSink
        do {
            sink = try HLSResourceSink(
                key: key, inMemory: false, options: WriteOptions(expiry: .never, metadata: metadata),
                storeIO: cache.storeIO)
        } catch {
            throw .retry(.store(error))
        }
        do {
            try handle.seek(toOffset: UInt64(body.lowerBound))
        } catch {
            await sink.cancel()
            throw .retry(.unreadable(String(describing: error)))
        }
        var remaining = body.count
        while remaining > 0 {
            let piece: Data
            do {
                piece = try handle.read(upToCount: min(remaining, HLSResourceSink.storeBatchBytes)) ?? Data()
            } catch {
                await sink.cancel()
                throw .retry(.unreadable(String(describing: error)))
            }
            // The file shrank while it was read.
            guard !piece.isEmpty else {
                await sink.cancel()
                throw .retry(.sizeMismatch(expected: body.count, actual: body.count - remaining))
            }
            do {
                try await sink.append(piece)
            } catch {
                await sink.cancel()
                throw .retry(.store(error))
            }
            remaining -= piece.count
        }
        if let gate = hooks.keep.current { await gate(key) }
        do {
            guard let info = try await sink.finish(holder: holder, pinWhile: live) else {
                return .dropped(bytes: body.count)
            }
            return .body(.stored(info))
        } catch {
            throw .retry(.store(error))
        }
    }
}

import Foundation
import MediaStore

/// Content information: resolved from a fresh stored entry (no origin
/// request), or from the first response of the origin (the probe), which
/// revalidates an expired entry and prepares the entry new bytes go into.
extension ResourceFetcher {
    /// The content information, resolving it first: from the store when a
    /// fresh entry of known length exists (no origin request), otherwise
    /// from the origin (a conditional request for an expired entry).
    ///
    /// - throws: ``StreamingError``; ``StreamingError/store(_:)`` when the store cannot be read.
    ///
    /// - parameter firstRequestBytes: what the first origin request asks
    ///   for, when it is started by this call (a whole request's worth by default).
    func contentInformation(
        url: URL, headers: [String: String], priority: FetchPriority = .playback, firstRequestBytes: Int? = nil
    ) async throws -> ContentInformation {
        if var information {
            information.isEntireLengthAvailableOnDemand = try await isCompleteInStore()
            return information
        }
        if !resolving {
            resolving = true
            do {
                try await startResolving(
                    url: url, headers: headers, priority: priority, firstRequestBytes: firstRequestBytes)
            } catch {
                let failure = StreamingError.wrap(error)
                failResolution(failure)
                throw failure
            }
            if let information { return information }
        }
        // A player waiting behind a transfer's probe raises it.
        for probe in transfers.values where probe.isProbe && probe.probePriority < priority {
            probe.probePriority = priority
            reschedule(probe)
        }
        nextWaiterID += 1
        let id = nextWaiterID
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { infoWaiters[id] = $0 }
        } onCancel: {
            Task { await self.abandonWait(id) }
        }
    }

    /// The caller waiting as `id` was cancelled: it fails with `cancelled`.
    /// When no caller waits any more, the probe (which has no reader before
    /// the information is known) is stopped: nobody wants its transfer.
    private func abandonWait(_ id: Int) {
        guard let waiter = infoWaiters.removeValue(forKey: id) else { return }
        waiter.resume(throwing: StreamingError.cancelled)
        guard infoWaiters.isEmpty, information == nil else { return }
        for probe in transfers.values where probe.isProbe && probe.subscribers.isEmpty {
            transfers[probe.id] = nil
            probe.isStopped = true
            probe.task?.cancel()
            resolving = false
        }
    }

    private func startResolving(
        url: URL, headers: [String: String], priority: FetchPriority, firstRequestBytes: Int?
    ) async throws(StoreError) {
        if lease == nil { lease = store.lease(forKey: key) }
        let stored = cachingSkipped == nil ? try await storedInfo() : nil
        if let stored, let length = stored.length, !stored.isExpired(), !configuration.alwaysRevalidate {
            validators = ResourceValidators(etag: stored.metadata.etag, lastModified: stored.metadata.lastModified)
            entryVersion = stored.version
            let mime = mimeType(declared: stored.metadata.mimeType, prefix: try await storedPrefix())
            resolve(
                ContentInformation(
                    mimeType: mime, contentLength: length, isEntireLengthAvailableOnDemand: stored.isComplete,
                    etag: stored.metadata.etag, lastModified: stored.metadata.lastModified))
            return
        }
        let probe = makeTransfer(
            start: 0, end: Int.max, url: url, headers: headers, isProbe: true, priority: priority)
        // Exactly what was asked for: once the length is known, a short chunk is stored.
        probe.firstRequestBytes = firstRequestBytes.map { min(requestBytes, max(1, $0)) }
        if let stored, stored.length != nil, stored.metadata.etag != nil || stored.metadata.lastModified != nil {
            probe.ifNoneMatch = stored.metadata.etag
            probe.ifModifiedSince = stored.metadata.lastModified
            count { $0.revalidations += 1 }
        }
        launch(probe)
    }

    /// The stored entry of the key, if any (none when not caching).
    ///
    /// An entry the store cannot read (`corrupted`, `damagedStore`) cannot
    /// be trusted, nor usually removed: the resource then plays from the
    /// origin without caching, and the reason is reported
    /// (``ResourceEvent/cachingSkipped(reason:)``). Any other failure is
    /// thrown, to reach the reader as ``StreamingError/store(_:)``.
    func storedInfo() async throws(StoreError) -> EntryInfo? {
        guard cachingSkipped == nil else { return nil }
        let key = self.key
        do {
            return try await storeIO.read { store throws(StoreError) in try store.info(forKey: key) }
        } catch {
            switch error {
            case .corrupted, .damagedStore:
                skipCaching("the store cannot read this entry: \(error)")
                return nil
            default:
                throw error
            }
        }
    }

    /// Whether every byte of the version this fetcher serves is in the store
    /// (always `false` when not caching).
    private func isCompleteInStore() async throws(StoreError) -> Bool {
        guard cachingSkipped == nil, let version = entryVersion, let info = try await storedInfo() else { return false }
        return info.version == version && info.isComplete
    }

    /// The first bytes of the stored entry, for sniffing its type; empty
    /// when they are not cached.
    private func storedPrefix() async throws(StoreError) -> [UInt8] {
        guard cachingSkipped == nil else { return [] }
        let key = self.key
        do {
            let data = try await storeIO.read { store throws(StoreError) in
                try store.read(forKey: key, range: 0..<16, includeExpired: true)
            }
            return [UInt8](data)
        } catch {
            switch error {
            case .notFound, .rangeNotCached, .invalidRange: return []
            default: throw error
            }
        }
    }

    private func mimeType(declared: String?, prefix: some Collection<UInt8>) -> String {
        if let declared, !UniformType.isGeneric(declared) { return declared }
        return MediaSniffer.mimeType(of: prefix) ?? declared ?? "application/octet-stream"
    }

    private func resolve(_ info: ContentInformation) {
        information = info
        change = nil
        resolving = false
        let waiters = infoWaiters.values
        infoWaiters = [:]
        for waiter in waiters { waiter.resume(returning: info) }
        emit(.ready(info))
    }

    func failResolution(_ error: StreamingError) {
        resolving = false
        let waiters = infoWaiters.values
        infoWaiters = [:]
        for waiter in waiters { waiter.resume(throwing: error) }
    }

    /// The expiry for an entry written or renewed from `response`.
    private func expiryPolicy(for response: OriginResponse) -> ExpiryPolicy {
        if configuration.honorsCacheControl, let lifetime = response.freshnessLifetime { return .after(lifetime) }
        return configuration.expiry
    }

    /// Handles the first response for a resource: 304 renews the stored
    /// entry; a changed validator or length drops it; the entry is
    /// prepared (or caching skipped, for one larger than the store).
    /// Returns where the body lies, or `nil` when there is none to read.
    func acceptFirst(_ response: OriginResponse, requested: Range<Int>, _ transfer: Transfer) async throws
        -> ExpectedBody?
    {
        let first = try ResponseValidator.checkFirst(
            response, requested: requested, conditional: transfer.isConditional, url: transfer.url)
        let stored = cachingSkipped == nil ? try await storedInfo() : nil
        // Stopped while the store was read (abandoned, or the content
        // changed): it prepares and binds nothing.
        if transfer.isStopped { return nil }
        let policy = expiryPolicy(for: response)
        let key = self.key
        switch first {
        case .notModified:
            guard let stored, let length = stored.length else {
                throw StreamingError.origin(.httpStatus(code: 304, url: transfer.url))
            }
            count { $0.notModified += 1 }
            // Renews exactly the entry the conditional request was about.
            let version = stored.version
            try await storeIO.write { store throws(StoreError) in
                try store.setExpiry(policy, forKey: key, version: version)
            }
            validators = ResourceValidators(etag: stored.metadata.etag, lastModified: stored.metadata.lastModified)
            entryVersion = stored.version
            emit(.revalidated(changed: false))
            transfer.isStopped = true
            let mime = mimeType(declared: stored.metadata.mimeType, prefix: try await storedPrefix())
            resolve(
                ContentInformation(
                    mimeType: mime, contentLength: length, isEntireLengthAvailableOnDemand: stored.isComplete,
                    etag: validators.etag, lastModified: validators.lastModified))
            return nil
        case .content(let total, let body, let announced):
            if let stored {
                let action = ResponseValidator.storedEntryAction(
                    storedLength: stored.length,
                    storedValidators: ResourceValidators(
                        etag: stored.metadata.etag, lastModified: stored.metadata.lastModified),
                    storedIsExpired: stored.isExpired(), total: total, validators: announced)
                if transfer.isConditional { emit(.revalidated(changed: action == .replace)) }
                let version = stored.version
                do throws(StoreError) {
                    switch action {
                    case .replace:
                        _ = try await storeIO.write { store throws(StoreError) in
                            try store.remove(forKey: key, version: version)
                        }
                    case .renew:
                        try await storeIO.write { store throws(StoreError) in
                            try store.setExpiry(policy, forKey: key, version: version)
                        }
                    case .keep:
                        break
                    }
                } catch {
                    // Replaced meanwhile: prepareEntry below judges the new one.
                    guard case .entryReplaced = error else { throw error }
                }
            }
            // Stopped while the stored entry was judged: it prepares nothing.
            if transfer.isStopped { return nil }
            validators = announced
            if cachingSkipped == nil {
                let metadata = EntryMetadata(
                    mimeType: response.mimeType, etag: announced.etag, lastModified: announced.lastModified)
                let preparation = beginPreparation(length: total, metadata: metadata, policy: policy, for: transfer)
                // Nothing stored to judge, and a player waits: the first bytes
                // go on to the readers while the entry is made (its commit may
                // wait long on a busy disk); no byte is written before it
                // exists (`entryBound(_:waiting:)`). A download, a preload or
                // a revalidation waits for the entry first. That wait is on
                // the store, not the origin: the stall watchdog does not count it.
                if stored != nil || transfer.probePriority < .playback {
                    transfer.waitingForEntry = true
                    await preparation.done()
                    transfer.waitingForEntry = false
                    transfer.lastProgress = .now
                    // Stopped meanwhile: its preparation bound nothing.
                    if transfer.isStopped { return nil }
                }
            }
            transfer.end = total ?? Int.max
            transfer.declaredMIMEType = response.mimeType
            try await resolveProbeIfReady(transfer)
            return body
        }
    }

    /// Begins preparing the entry `probe`'s first response goes into (kept
    /// when it is the same content, length and validators, otherwise
    /// replaced: the probe fills exactly that version), once the
    /// preparation begun before it has ended. It is the current one from
    /// now on (one before it is abandoned: it binds nothing), and `probe`
    /// holds it (``EntryPreparation``).
    private func beginPreparation(length: Int?, metadata: EntryMetadata, policy: ExpiryPolicy, for probe: Transfer)
        -> EntryPreparation
    {
        let preparation = EntryPreparation()
        let previous = lastPreparation
        preparation.task = Task {
            await self.prepare(
                preparation, after: previous, length: length, metadata: metadata, policy: policy, for: probe)
        }
        entryVersion = nil
        entryPreparation = preparation
        lastPreparation = preparation
        probe.entryPreparation = preparation
        return preparation
    }

    /// Runs `preparation` once `previous` has ended, then ends it.
    private func prepare(
        _ preparation: EntryPreparation, after previous: EntryPreparation?, length: Int?, metadata: EntryMetadata,
        policy: ExpiryPolicy, for probe: Transfer
    ) async {
        await previous?.done()
        await configuration.fetcherHooks.entryPreparation.current?()
        let key = self.key
        let result: Result<UInt64, StoreError>
        do {
            result = .success(
                try await storeIO.write { store throws(StoreError) in
                    let info = try store.prepareEntry(
                        forKey: key, length: length, options: WriteOptions(expiry: policy, metadata: metadata))
                    try store.setMetadata(metadata, forKey: key, version: info.version)
                    return info.version
                })
        } catch {
            result = .failure(error)
        }
        await endPreparation(preparation, result, metadata: metadata, probe: probe)
    }

    /// The end of `preparation`. Still the current one, its probe not
    /// stopped: it binds the version prepared (the probe's sink,
    /// ``entryVersion``), or, refused by the store, makes the resource play
    /// without caching. Otherwise it binds nothing and changes nothing but
    /// its own state (``EntryPreparation``).
    private func endPreparation(
        _ preparation: EntryPreparation, _ result: Result<UInt64, StoreError>, metadata: EntryMetadata,
        probe: Transfer
    ) async {
        let isCurrent = entryPreparation === preparation && !probe.isStopped
        if entryPreparation === preparation { entryPreparation = nil }
        guard isCurrent, case .success(let version) = result else {
            preparation.end(committed: try? result.get(), binding: nil)
            if isCurrent, case .failure(let error) = result { skipCaching(String(describing: error)) }
            return
        }
        entryVersion = version
        probe.sink.version = version
        preparation.end(committed: version, binding: version)
        // A type sniffed from the first bytes meanwhile is stored now.
        if let mime = information?.mimeType, mime != metadata.mimeType { await storeType(mime, of: probe) }
    }

    /// Stores `mime` (sniffed) as the type of the entry `transfer` fills,
    /// once that entry exists (``EntryPreparation`` stores it at its end otherwise).
    private func storeType(_ mime: String, of transfer: Transfer) async {
        guard transfer.sink.isStoring, let version = transfer.sink.version else { return }
        let key = self.key
        let metadata = EntryMetadata(mimeType: mime, etag: validators.etag, lastModified: validators.lastModified)
        do {
            try await storeIO.write { store throws(StoreError) in
                try store.setMetadata(metadata, forKey: key, version: version)
            }
        } catch {
            storeRefused(error, transfer)
        }
    }

    /// Whether `transfer`'s sink may write now: at once unless the entry it
    /// fills is being prepared (``Transfer/entryPreparation``); then once that
    /// is done, waited for when `waiting` (a whole chunk, or the end, is
    /// due), else `false` (its bytes wait in its buffer). A stopped transfer
    /// never waits: what it holds goes unstored. Once the preparation is
    /// done, the sink is bound to the version it bound (none when it was
    /// abandoned: nothing is written), and lets go of it.
    func entryBound(_ transfer: Transfer, waiting: Bool) async -> Bool {
        guard let preparation = transfer.entryPreparation else { return true }
        if !preparation.isDone {
            if transfer.isStopped { return true }
            guard waiting else { return false }
            transfer.waitingForEntry = true
            await preparation.done()
            transfer.waitingForEntry = false
            transfer.lastProgress = .now
        }
        // Looked at again after the wait: only the preparation it still holds is bound.
        if transfer.entryPreparation === preparation {
            transfer.entryPreparation = nil
            transfer.sink.version = preparation.version
        }
        return true
    }

    /// Resolves the content information once the length is known and the
    /// MIME type is too (declared, or sniffable from the first bytes).
    func resolveProbeIfReady(_ transfer: Transfer) async throws {
        guard transfer.isProbe, information == nil, transfer.end != Int.max else { return }
        let declared = transfer.declaredMIMEType
        let sniffable = transfer.position >= 16 || transfer.position >= transfer.end
        guard !UniformType.isGeneric(declared) || sniffable else { return }
        let prefix =
            transfer.bufferStart == 0 ? [UInt8](transfer.sink.buffered(from: 0).prefix(16)) : try await storedPrefix()
        let mime = mimeType(declared: declared, prefix: prefix)
        if mime != declared { await storeType(mime, of: transfer) }
        let complete = try await isCompleteInStore()
        // Resolved meanwhile (or the resource changed): nothing more to do.
        guard information == nil, !transfer.isStopped else { return }
        resolve(
            ContentInformation(
                mimeType: mime, contentLength: transfer.end, isEntireLengthAvailableOnDemand: complete,
                etag: validators.etag, lastModified: validators.lastModified))
    }
}

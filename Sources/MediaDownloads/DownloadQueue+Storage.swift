import Foundation
import MediaStore
import MediaStreaming

/// What the queue does in the store besides the index: restoring after a
/// relaunch, holds, removals, and the free-space floor.
extension DownloadQueue {
    /// Takes the records loaded at opening (`legacy`: those saved before
    /// holds, with the keys each noted as pinned by someone else):
    /// finishes interrupted removals, brings byte counts up to what the
    /// store holds, holds the entries of the downloads it keeps, and saves
    /// the reconciled index. A legacy record whose pins could not be
    /// adopted stays one in the index (one being removed stays too, its
    /// removal left for then), so the next opening adopts it again.
    func restore(_ loaded: [DownloadRecord], legacy: [UUID: Set<ExactKey>]) async throws(DownloadError) {
        for record in loaded { runners[record.id] = runner(of: record) }
        unadopted = await adoptLegacyPins(of: loaded.filter { legacy[$0.id] != nil }, pinnedElsewhere: legacy)
        for record in loaded where record.status == .removing && unadopted[record.id] == nil {
            await finishRemoval(of: record.id)
        }
        let unfinished = loaded.filter { $0.status != .removing && $0.status != .completed }
        // Bytes so far, from the entry under the cache key; a performer that
        // stores the download under another key (HLS) reports its own as it runs.
        let keys = unfinished.map { keyedPerformer(of: $0) == nil ? $0.cacheKey : nil }
        let infos: [EntryInfo?]
        do {
            infos = try await cache.storeIO.read { store throws(StoreError) -> [EntryInfo?] in
                var infos: [EntryInfo?] = []
                for key in keys {
                    infos.append(try key.flatMap { key throws(StoreError) in try store.info(forKey: key) })
                }
                return infos
            }
        } catch {
            throw .store(error)
        }
        for (record, info) in zip(unfinished, infos) {
            guard let info else { continue }
            runners[record.id]?.edit { stored in
                stored.bytesStored = info.cachedBytes
                stored.totalBytes = info.length ?? record.totalBytes
            }
        }
        await holdEntries(of: loaded.filter(\.holdsBytes).map(\.id))
        if let last = loaded.map(\.queueOrder).max() { skipOrders(past: last) }
        for id in orderedIDs() {
            guard let record = records[id], record.status.isActive else { continue }
            board.activate(id, bytes: record.bytesStored, total: record.totalBytes)
        }
        try await commit([])
        isOpen = true
    }

    /// Adopts the pins of `legacy` records (saved before holds; see
    /// ``DownloadQueue``, "Indexes saved before holds"): each that keeps
    /// its entries or is being removed holds them by its own holder, and
    /// the app's hold goes from the keys it pinned itself: not those in
    /// `pinnedElsewhere`, nor an HLS resource an older version recorded as
    /// kept (`hls.keepers`) by an asset none of these downloads is (one
    /// several of them kept is held by each). Such a resource is taken off
    /// these downloads' assets (its `hls.keepers` names the others only),
    /// so the release of the last other asset lets the app's hold go.
    /// Holding first and releasing after, each write on its own, so a
    /// relaunch in between adopts again and loses nothing.
    ///
    /// - returns: the records whose adoption failed (told on
    ///   ``problems()``), each with its `pinnedElsewhere` keys: they stay
    ///   legacy records, adopted again at the next opening.
    func adoptLegacyPins(
        of legacy: [DownloadRecord], pinnedElsewhere: [UUID: Set<ExactKey>]
    ) async -> [UUID: Set<ExactKey>] {
        let adopting = legacy.filter { $0.holdsBytes || $0.status == .removing }
        let keys = await storeKeys(of: adopting)
        guard !keys.isEmpty else { return [:] }
        // The assets these downloads are (an HLS one's master key): a resource
        // only they kept is held by each of them from now on, the app's hold not needed.
        let adopted = Set(adopting.map { ExactKey(entryKey(of: $0)) })
        let hook = configuration.adoptionHook
        var failed: [(id: UUID, error: StoreError)]
        do {
            failed = try await cache.storeIO.write { store throws(StoreError) -> [(id: UUID, error: StoreError)] in
                var failed: [(id: UUID, error: StoreError)] = []
                for (id, keys) in keys {
                    do throws(StoreError) {
                        try Self.adopt(
                            keys, of: id, in: store, adopted: adopted, pinnedElsewhere: pinnedElsewhere[id] ?? [],
                            hook: hook)
                    } catch {
                        failed.append((id, error))
                    }
                }
                return failed
            }
        } catch {
            failed = keys.map { ($0.id, error) }
        }
        if let first = failed.first { report(.store(first.error)) }
        return Dictionary(failed.map { ($0.id, pinnedElsewhere[$0.id] ?? []) }, uniquingKeysWith: { first, _ in first })
    }

    /// ``adoptLegacyPins(of:pinnedElsewhere:)`` of download `id`'s `keys`
    /// (on the store's write queue); `others`: the keys it noted as pinned
    /// by someone else.
    private nonisolated static func adopt(
        _ keys: [String], of id: UUID, in store: MediaStore, adopted: Set<ExactKey>,
        pinnedElsewhere others: Set<ExactKey>,
        hook: (@Sendable (String) throws(StoreError) -> Void)?
    ) throws(StoreError) {
        for key in keys {
            try hook?(key)
            guard let info = try store.info(forKey: key) else { continue }
            try store.hold(key, by: holder(of: id), version: info.version)
            let keepers = LegacyKeepers.of(info.metadata.userInfo)
            let remaining = keepers.filter { !adopted.contains(ExactKey($0)) }
            if !remaining.isEmpty {
                // Kept by other assets too: the app's hold is theirs, and goes with the last of them.
                guard remaining.count < keepers.count else { continue }
                var metadata = info.metadata
                metadata.userInfo[LegacyKeepers.field] = remaining.joined(separator: "\n")
                try store.setMetadata(metadata, forKey: key, version: info.version)
                continue
            }
            guard !others.contains(ExactKey(key)) else { continue }
            try store.release(key, by: MediaStore.appHolder, version: info.version)
        }
    }

    /// Holds the entries of downloads `ids` that exist (partial ones
    /// included) by each one's holder, so eviction keeps a download's
    /// bytes while the queue keeps it. Only downloads that hold bytes when
    /// the hold is written: a cancel or remove meanwhile wins.
    func holdEntries(of ids: [UUID]) async {
        await holdEntries(of: ids) { $0.holdsBytes }
    }

    /// Holds download `id`'s entries for the first bytes of its run `run`,
    /// only while that run is the latest and downloading when the hold is
    /// written. Once the run ended, the call that ended it decided the
    /// holds (a stop or a wait holds, a cancel or a removal releases, a
    /// completion holds what it stored), so a hold whose task runs late
    /// writes nothing: once ``stop(_:reason:)`` returns, none of the
    /// queue's pending work holds the download's entries again (nor over
    /// a queue opened after this one was dropped, and its cancel).
    func holdEntries(of id: UUID, forRun run: Int) async {
        if let hook = configuration.runHoldHook { await hook() }
        await holdEntries(of: [id]) { $0.isLive(run: run) }
    }

    /// Holds the entries of downloads `ids` whose runner `holds` accepts,
    /// both when their keys are asked and when the hold is written.
    private func holdEntries(of ids: [UUID], while holds: @escaping @Sendable (DownloadRunner) -> Bool) async {
        let held = ids.compactMap { self.runners[$0] }.filter(holds).map(\.record)
        if !held.isEmpty, let hook = configuration.holdHook { await hook() }
        let keys = await storeKeys(of: held)
        guard !keys.isEmpty else { return }
        let runners = runners
        do {
            try await cache.storeIO.write { store throws(StoreError) in
                for (id, keys) in keys where runners[id].map(holds) == true {
                    for key in keys {
                        do throws(StoreError) {
                            try store.hold(key, by: Self.holder(of: id))
                        } catch .notFound {
                            // Not stored (yet, or any more): nothing to hold.
                        }
                    }
                }
            }
        } catch {
            report(.store(error))
        }
    }

    /// Releases every hold of downloads `ids` (their entries stay cached,
    /// evictable unless someone else holds them). Only downloads that hold
    /// no bytes when the release is written: one resumed meanwhile keeps
    /// its holds (as ``holdEntries(of:)`` holds only for one that does).
    func releaseHolds(of ids: [UUID]) async {
        guard !ids.isEmpty else { return }
        let runners = runners
        if let hook = configuration.holdsReleaseHook { await hook() }
        do {
            try await cache.storeIO.write { store throws(StoreError) in
                for id in ids where runners[id]?.holdsBytes != true { try store.releaseAll(by: Self.holder(of: id)) }
            }
        } catch {
            report(.store(error))
        }
    }

    /// Removes the entries of removing download `id` that nobody else
    /// holds once its holds are released, then its record. Its
    /// performer's keys go in the reverse of their order (an HLS master
    /// first), then any other entry the download held. When the store
    /// work fails (told on ``problems()``), the record stays, removing,
    /// so the next opening finishes the removal (its holds released then).
    func finishRemoval(of id: UUID) async {
        guard let record = records[id] else { return }
        let keys = await storeKeys(of: [record]).flatMap(\.keys)
        let holder = Self.holder(of: id)
        let hook = configuration.removalHook
        do {
            try await cache.storeIO.write { store throws(StoreError) in
                try hook?(holder)
                let held = try store.keys(heldBy: holder)
                try store.releaseAll(by: holder)
                var seen: Set<ExactKey> = []
                for key in keys.reversed() + held where seen.insert(ExactKey(key)).inserted {
                    guard try store.holders(of: key).isEmpty else { continue }
                    try store.remove(forKey: key)
                }
            }
        } catch {
            report(.store(error))
            return
        }
        runners[id] = nil
        unadopted[id] = nil
        board.forget(id)
        await commitReporting([])
        notify(record)
    }

    /// The store keys of each of `records`, from their performers. Asked
    /// on the store's read queue: a performer may read the store for them
    /// (the HLS one lists the asset's entries), which must not hold this
    /// actor's executor, nor a thread of the concurrency pool.
    func storeKeys(of records: [DownloadRecord]) async -> [(id: UUID, keys: [String])] {
        guard !records.isEmpty else { return [] }
        let asked = records.map { ($0, performers[$0.kind ?? ProgressiveDownloadPerformer.kind]) }
        let cache = cache
        do {
            return try await cache.storeIO.read { _ in
                asked.map { record, performer in
                    (record.id, performer?.keys(of: record, in: cache) ?? [record.cacheKey])
                }
            }
        } catch {
            report(.store(error))
            return []
        }
    }

    /// The room left for the store: free bytes on its volume plus pages
    /// inside its file that evictions freed (LMDB reuses them before it
    /// grows the file); `nil` when the free space is unknown.
    func storageHeadroom(freeBytes: Int64?) async -> Int64? {
        guard let freeBytes else { return nil }
        let statistics: StoreStatistics
        do {
            statistics = try await cache.storeIO.read { store throws(StoreError) in try store.statistics() }
        } catch {
            report(.store(error))
            return freeBytes
        }
        return freeBytes + Int64(max(0, statistics.fileBytes - statistics.storedBytes))
    }

    /// The free-space floor: when the headroom is below it, evicts
    /// entries nobody holds (least recently used first; the queue's own
    /// are held) by the shortfall and looks again; returns the
    /// ``WaitReason/storageLow(freeBytes:floor:)`` downloads wait with when
    /// that was not enough. Sets `device`'s free bytes to the headroom (what
    /// a download's own ``DownloadConditions/minimumFreeBytes`` is checked against).
    func checkStorageFloor(_ device: inout DeviceConditions) async -> WaitReason? {
        guard var headroom = await storageHeadroom(freeBytes: device.freeBytes) else { return nil }
        defer { device.freeBytes = headroom }
        let floors =
            [configuration.storageFloor] + records.values.filter(\.status.isActive).map(\.conditions.minimumFreeBytes)
        guard let floor = floors.compactMap({ $0 }).max(), headroom < floor else { return nil }
        await holdEntries(of: records.values.filter(\.holdsBytes).map(\.id))
        let shortfall = Int(floor - headroom)
        do {
            _ = try await cache.storeIO.write { store throws(StoreError) in
                let stored = try store.statistics().storedBytes
                return try store.evict(toBytes: max(0, stored - shortfall))
            }
        } catch {
            report(.store(error))
        }
        headroom = await storageHeadroom(freeBytes: monitor.current.freeBytes) ?? headroom
        guard let queueFloor = configuration.storageFloor, headroom < queueFloor else { return nil }
        return .storageLow(freeBytes: headroom, floor: queueFloor)
    }
}

extension DownloadRecord {
    /// Whether the queue holds its entries: it will go on, may be resumed, or completed.
    var holdsBytes: Bool {
        switch status {
        case .queued, .waiting, .downloading, .stopped, .completed: true
        case .failed(let failure): failure != .cancelled
        case .removing: false
        }
    }
}

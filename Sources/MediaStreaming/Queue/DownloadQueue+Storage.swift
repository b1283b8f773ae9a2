import Foundation
import MediaStore

/// What the queue does in the store besides the index: restoring after a
/// relaunch, pins, removals, and the free-space floor.
extension DownloadQueue {
    /// Takes the records loaded at opening (with the keys of their entries
    /// pinned elsewhere): finishes interrupted removals, brings byte counts
    /// up to what the store holds, keeps the bytes of unfinished downloads
    /// pinned, and saves the reconciled index.
    func restore(_ loaded: [DownloadRecord], pinnedElsewhere loadedPins: [UUID: Set<ExactKey>])
        async
        throws(DownloadQueueError)
    {
        for record in loaded { records[record.id] = record }
        pinnedElsewhere.withLock { $0 = loadedPins }
        for record in loaded where record.status == .removing { await finishRemoval(of: record.id) }
        let unfinished = loaded.filter { $0.status != .removing && $0.status != .completed }
        // Bytes so far, from the entry under the cache key; a performer that
        // stores the download under another key (HLS) reports its own as it runs.
        let keys = unfinished.map { keyedPerformer(of: $0) == nil ? $0.cacheKey : nil }
        let infos: [EntryInfo?] =
            (try? await cache.storeIO.read { store throws(StoreError) -> [EntryInfo?] in
                var infos: [EntryInfo?] = []
                for key in keys {
                    infos.append(try key.flatMap { key throws(StoreError) in try store.info(forKey: key) })
                }
                return infos
            }) ?? []
        for (record, info) in zip(unfinished, infos) {
            guard let info else { continue }
            records[record.id]?.bytesStored = info.cachedBytes
            records[record.id]?.totalBytes = info.length ?? record.totalBytes
        }
        await pinPartialEntries(of: unfinished.filter(\.holdsBytes).map(\.id))
        if let last = loaded.map(\.queueOrder).max() { skipOrders(past: last) }
        for id in orderedIDs() {
            guard let record = records[id], record.status.isActive else { continue }
            board.activate(id, bytes: record.bytesStored, total: record.totalBytes)
        }
        try await commit([])
        await schedule()
    }

    /// Pins the entries of downloads `ids` that exist (partial ones
    /// included), so eviction keeps a download's bytes while the queue
    /// holds it. A pin it sets is its own, even on a key pinned elsewhere
    /// before (that pin is gone).
    ///
    /// Only downloads the queue holds the bytes of now, and only if it has
    /// not let their pins go by the time the pin is written (see
    /// ``pinReleases``): a cancel during this call (while the keys are
    /// read) used to unpin first, then this pin landed on the cancelled
    /// download's entries, and stayed until the record was removed.
    func pinPartialEntries(of ids: [UUID]) async {
        let held = ids.compactMap { records[$0] }.filter(\.holdsBytes)
        let pinReleases = pinReleases
        let releases = pinReleases.withLock { counts in
            Dictionary(uniqueKeysWithValues: held.map { ($0.id, counts[$0.id, default: 0]) })
        }
        let keys = await storeKeys(of: held)
        guard !keys.isEmpty else { return }
        let pinnedElsewhere = pinnedElsewhere
        _ = try? await cache.storeIO.write { store throws(StoreError) in
            for (id, keys) in keys where pinReleases.withLock({ $0[id, default: 0] }) == releases[id] {
                for key in keys where try store.info(forKey: key)?.isPinned == false {
                    try store.setPinned(true, forKey: key)
                    pinnedElsewhere.withLock { _ = $0[id]?.remove(ExactKey(key)) }
                }
            }
        }
    }

    /// Notes that the queue lets the pins of downloads `ids` go (they are
    /// cancelled or removed), before their release is written: a pin asked
    /// for earlier is then not written (see ``pinReleases``). Called in the
    /// same step as the status change, with no `await` between.
    func notePinsReleased(_ ids: [UUID]) {
        pinReleases.withLock { counts in
            for id in ids { counts[id, default: 0] += 1 }
        }
    }

    /// Unpins the entries of downloads `ids` (they stay cached, evictable),
    /// except those pinned elsewhere and those another download the queue
    /// holds counts on too: only the pins the queue set, and no longer needs.
    func releasePins(of ids: [UUID]) async {
        let released = ids.compactMap { records[$0] }
        let keys = await storeKeys(of: released)
        guard !keys.isEmpty else { return }
        let shared = await handOverSharedPins(of: keys, besides: released)
        let pinnedElsewhere = pinnedElsewhere
        _ = try? await cache.storeIO.write { store throws(StoreError) in
            for (id, keys) in keys {
                let others = pinnedElsewhere.withLock { $0[id] } ?? []
                for key in keys.reversed() where !others.contains(ExactKey(key)) && !shared.contains(ExactKey(key)) {
                    guard try store.info(forKey: key)?.isPinned == true else { continue }
                    try store.setPinned(false, forKey: key)
                }
            }
        }
    }

    /// Removes the entries of removing download `id`, then its record. An
    /// entry pinned elsewhere and still pinned stays, pinned.
    func finishRemoval(of id: UUID) async {
        guard let record = records[id] else { return }
        let keys = await storeKeys(of: [record]).flatMap(\.keys)
        let shared = await handOverSharedPins(of: [(id, keys)], besides: [record])
        let pinnedElsewhere = pinnedElsewhere
        _ = try? await cache.storeIO.write { store throws(StoreError) in
            let others = pinnedElsewhere.withLock { $0[id] } ?? []
            for key in keys.reversed() where !shared.contains(ExactKey(key)) {
                guard let info = try store.info(forKey: key), !(others.contains(ExactKey(key)) && info.isPinned) else {
                    continue
                }
                try store.setPinned(false, forKey: key)
                try store.remove(forKey: key)
            }
        }
        pinnedElsewhere.withLock { $0[id] = nil }
        records[id] = nil
        board.forget(id)
        try? await commit([])
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
        let keys = try? await cache.storeIO.read { _ in
            asked.map { record, performer in
                (record.id, performer?.keys(of: record, in: cache) ?? [record.cacheKey])
            }
        }
        return keys ?? []
    }

    /// Of `released` (the keys of downloads `records`, which let their
    /// pins go), the keys another download the queue holds
    /// (``DownloadRecord/holdsBytes``) counts on too: one stored under the
    /// same entry, as two HLS selections (performer kinds) of one master,
    /// or two records of one asset in an index saved before `enqueue` took
    /// them for one. Those entries stay, pinned; a pin the released
    /// download set is handed over: the other download takes the key off
    /// its keys pinned elsewhere, so that the last of them lets it go.
    func handOverSharedPins(of released: [(id: UUID, keys: [String])], besides records: [DownloadRecord]) async
        -> Set<ExactKey>
    {
        let ids = Set(records.map(\.id))
        let entries = Set(records.map { ExactKey(entryKey(of: $0)) })
        let others = self.records.values.filter {
            !ids.contains($0.id) && $0.holdsBytes && entries.contains(ExactKey(entryKey(of: $0)))
        }
        guard !others.isEmpty else { return [] }
        let held = await storeKeys(of: others).map { (id: $0.id, keys: Set($0.keys.map(ExactKey.init))) }
        var shared: Set<ExactKey> = []
        pinnedElsewhere.withLock { lists in
            for (id, keys) in released {
                let owned = Set(keys.map(ExactKey.init)).subtracting(lists[id] ?? [])
                for other in held {
                    shared.formUnion(other.keys.intersection(keys.map(ExactKey.init)))
                    lists[other.id]?.subtract(owned.intersection(other.keys))
                }
            }
        }
        return shared
    }

    /// The keys of `record`'s entries that are pinned now (on the store's
    /// read queue, as ``storeKeys(of:)``).
    func pinnedKeys(of record: DownloadRecord) async -> Set<ExactKey> {
        let performer = performers[record.kind ?? ProgressiveDownloadPerformer.kind]
        let cache = cache
        let pinned = try? await cache.storeIO.read { store throws(StoreError) -> Set<ExactKey> in
            var pinned: Set<ExactKey> = []
            for key in performer?.keys(of: record, in: cache) ?? [record.cacheKey]
            where try store.info(forKey: key)?.isPinned == true {
                pinned.insert(ExactKey(key))
            }
            return pinned
        }
        return pinned ?? []
    }

    /// The room left for the store: free bytes on its volume plus pages
    /// inside its file that evictions freed (LMDB reuses them before it
    /// grows the file); `nil` when the free space is unknown.
    func storageHeadroom(freeBytes: Int64?) async -> Int64? {
        guard let freeBytes else { return nil }
        let statistics = try? await cache.storeIO.read { store throws(StoreError) in try store.statistics() }
        guard let statistics else { return freeBytes }
        return freeBytes + Int64(max(0, statistics.fileBytes - statistics.storedBytes))
    }

    /// The free-space floor: when the headroom is below it, evicts
    /// unpinned entries (least recently used first; the queue's own are
    /// pinned) by the shortfall and looks again; returns the
    /// ``WaitReason/storageLow(freeBytes:floor:)`` downloads wait with when
    /// that was not enough. Sets `device`'s free bytes to the headroom (what
    /// a download's own ``DownloadConditions/minimumFreeBytes`` is checked against).
    func checkStorageFloor(_ device: inout DeviceConditions) async -> WaitReason? {
        guard var headroom = await storageHeadroom(freeBytes: device.freeBytes) else { return nil }
        defer { device.freeBytes = headroom }
        let floors =
            [configuration.storageFloor] + records.values.filter(\.status.isActive).map(\.conditions.minimumFreeBytes)
        guard let floor = floors.compactMap({ $0 }).max(), headroom < floor else { return nil }
        await pinPartialEntries(of: records.values.filter(\.holdsBytes).map(\.id))
        let shortfall = Int(floor - headroom)
        _ = try? await cache.storeIO.write { store throws(StoreError) in
            let stored = try store.statistics().storedBytes
            return try store.evict(toBytes: max(0, stored - shortfall))
        }
        headroom = await storageHeadroom(freeBytes: monitor.current.freeBytes) ?? headroom
        guard let queueFloor = configuration.storageFloor, headroom < queueFloor else { return nil }
        return .storageLow(freeBytes: headroom, floor: queueFloor)
    }
}

extension DownloadRecord {
    /// Whether the queue keeps its bytes pinned: it will go on, or may be resumed.
    var holdsBytes: Bool {
        switch status {
        case .queued, .waiting, .downloading, .stopped, .completed: true
        case .failed(let failure): failure != .userCancelled
        case .removing: false
        }
    }
}

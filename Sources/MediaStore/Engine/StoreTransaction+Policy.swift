import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension StoreTransaction {
    /// Writes batched access times, oldest first, so LRU order follows reads.
    /// A time no later than the entry's last access is skipped: the entry
    /// was written (or replaced) since that read, in this transaction or
    /// before, and its access must not go back.
    func applyAccessTimes(_ pending: AccessLog) throws {
        // Only the access and LRU rows move; the records stay as written.
        for (slot, time) in pending.latest() {
            guard var record = try index.record(at: slot), time > record.lastAccess else { continue }
            try index.touch(&record, slot: slot, at: time, savingRecord: false)
        }
    }

    /// Evicts least-recently-used entries while a limit is exceeded, down
    /// to the low-water mark. Pinned and in-use entries are skipped.
    func enforceLimits() throws {
        let configuration = configuration
        let overSize = configuration.sizeLimit > 0 && measuredBytes > configuration.sizeLimit
        let overCount = configuration.countLimit > 0 && counters.entryCount > configuration.countLimit
        guard overSize || overCount else { return }
        let ratio = configuration.lowWaterRatio
        let byteTarget = configuration.sizeLimit > 0 ? Int(Double(configuration.sizeLimit) * ratio) : Int.max
        let countTarget = configuration.countLimit > 0 ? Int(Double(configuration.countLimit) * ratio) : Int.max
        try evict(toBytes: byteTarget, count: countTarget)
    }

    /// The bytes the size limit counts (see ``SizeAccounting``).
    var measuredBytes: Int {
        configuration.sizeAccounting == .stored ? counters.storedBytes : counters.logicalBytes
    }

    /// Evicts LRU entries until the measured bytes ≤ `bytes` and entries
    /// ≤ `count`. Returns how many were evicted.
    @discardableResult
    func evict(toBytes bytes: Int, count: Int) throws -> Int {
        var evicted = 0
        var resumeAfter: [UInt8]? = nil
        while measuredBytes > bytes || counters.entryCount > count {
            guard let row = try index.leastRecentlyUsed(after: resumeAfter) else { break }
            resumeAfter = row.key
            guard let record = try index.record(at: row.slot) else {
                try index.deleteStaleLRURow(row)
                continue
            }
            if record.isPinned || context.isInUse(record.key) { continue }
            try removeEntry(record, slot: row.slot)
            removals.append(StoreRemoval(key: record.key, reason: .evicted))
            evicted += 1
        }
        if evicted > 0 { updateCounters { $0.evictions += evicted } }
        return evicted
    }

    /// Removes entries whose expiry is at or before now; returns how many.
    /// Walks the expiry index, so the cost follows the expired count.
    func removeExpired() throws -> Int {
        let limit = EntryIndex.milliseconds(now)
        var removed = 0
        var resumeAfter: [UInt8]? = nil
        while let row = try index.soonestExpiring(after: resumeAfter), row.order <= limit {
            resumeAfter = row.key
            guard let record = try index.record(at: row.slot) else {
                try index.deleteStaleExpiryRow(row)
                continue
            }
            if record.isPinned || context.isInUse(record.key) { continue }
            try removeEntry(record, slot: row.slot)
            removals.append(StoreRemoval(key: record.key, reason: .expired))
            removed += 1
        }
        return removed
    }

    /// Deletes staging records (unfinished streamed writes) whose owner
    /// process is gone, releasing their chunks.
    func removeAbandonedStaging() throws -> Int {
        let abandoned = try index.abandonedStaging { record in
            // EPERM: the owner lives but belongs to another user.
            let owner = record.ownerPID
            let alive = owner > 0 && owner != getpid() && (kill(owner, 0) == 0 || errno == EPERM)
            return !alive
        }
        for (key, record) in abandoned {
            try releaseExtents(entryID: record.entryID)
            try index.deleteStagingRow(key: key)
        }
        return abandoned.count
    }
}

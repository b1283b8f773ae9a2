import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension StoreTransaction {
    /// Writes batched access times, oldest first, so LRU order follows reads.
    func applyAccessTimes(_ pending: [[UInt8]: Double]) throws {
        // Only the access and LRU rows move; the records stay as written.
        for (slot, time) in pending.sorted(by: { $0.value < $1.value }) {
            guard var record = try record(atSlot: slot) else { continue }
            try touch(&record, slot: slot, at: time)
        }
    }

    /// Evicts least-recently-used entries while a limit is exceeded, down
    /// to the low-water mark. Pinned and in-use entries are skipped.
    func enforceLimits() throws {
        let configuration = store.configuration
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
        store.configuration.sizeAccounting == .stored ? counters.storedBytes : counters.logicalBytes
    }

    /// Evicts LRU entries until the measured bytes ≤ `bytes` and entries
    /// ≤ `count`. Returns how many were evicted.
    @discardableResult
    func evict(toBytes bytes: Int, count: Int) throws -> Int {
        var evicted = 0
        var resumeAfter: [UInt8]? = nil
        while measuredBytes > bytes || counters.entryCount > count {
            let cursor = try txn.cursor(db.lru)
            var item = try resumeAfter.map { try cursor.seek(atLeast: $0) } ?? cursor.first()
            if let resume = resumeAfter, item?.key == resume { item = try cursor.next() }
            guard let current = item, current.key.count == 8 + StoreKeys.slotSize else { break }
            resumeAfter = current.key
            let slot = Array(current.key[8...])
            guard let record = try record(atSlot: slot) else {
                try txn.delete(db.lru, key: current.key)  // a stale row
                continue
            }
            if record.isPinned || store.isInUse(record.key) { continue }
            try removeEntry(record, slot: slot)
            removals.append(StoreRemoval(key: record.key, reason: .evicted))
            evicted += 1
        }
        if evicted > 0 { updateCounters { $0.evictions += evicted } }
        return evicted
    }

    /// Removes entries whose expiry is at or before now; returns how many.
    /// Walks the expiry index, so the cost follows the expired count.
    func removeExpired() throws -> Int {
        let limit = Self.milliseconds(now)
        var removed = 0
        var resumeAfter: [UInt8]? = nil
        while true {
            let cursor = try txn.cursor(db.expiry)
            var item = try resumeAfter.map { try cursor.seek(atLeast: $0) } ?? cursor.first()
            if let resume = resumeAfter, item?.key == resume { item = try cursor.next() }
            guard let current = item, current.key.count == 8 + StoreKeys.slotSize,
                StoreKeys.bigEndianUInt64(current.key) <= limit
            else { break }
            resumeAfter = current.key
            let slot = Array(current.key[8...])
            guard let record = try record(atSlot: slot) else {
                try txn.delete(db.expiry, key: current.key)
                continue
            }
            if record.isPinned || store.isInUse(record.key) { continue }
            try removeEntry(record, slot: slot)
            removals.append(StoreRemoval(key: record.key, reason: .expired))
            removed += 1
        }
        return removed
    }

    /// Deletes staging records (unfinished streamed writes) whose owner
    /// process is gone, releasing their chunks.
    func removeAbandonedStaging() throws -> Int {
        let cursor = try txn.cursor(db.staging)
        var abandoned: [([UInt8], EntryRecord)] = []
        var item = try cursor.first()
        while let current = item {
            if let record = current.value.withUnsafeBytes(EntryRecord.decode) {
                // EPERM: the owner lives but belongs to another user.
                let owner = record.ownerPID
                let alive = owner > 0 && owner != getpid() && (kill(owner, 0) == 0 || errno == EPERM)
                if !alive { abandoned.append((current.key, record)) }
            } else {
                try txn.delete(db.staging, key: current.key)
            }
            item = try cursor.next()
        }
        for (key, record) in abandoned {
            try releaseExtents(entryID: record.entryID)
            try txn.delete(db.staging, key: key)
        }
        return abandoned.count
    }
}

extension MediaStore {
    func removeAbandonedStaging() throws {
        let hasStaging = try read { try $0.txn.count(databases.staging) > 0 }
        if hasStaging {
            try write { _ = try $0.removeAbandonedStaging() }
        }
    }
}

import Foundation

extension MediaStore {
    /// The store's totals, read in one short transaction.
    public func statistics() throws(StoreError) -> StoreStatistics {
        try run {
            try read { transaction in
                let counters = transaction.counters
                return StoreStatistics(
                    entryCount: counters.entryCount, completeCount: counters.completeCount,
                    logicalBytes: counters.logicalBytes, storedBytes: counters.storedBytes,
                    uniqueChunkBytes: counters.uniqueChunkBytes, chunkCount: counters.chunkCount,
                    fileBytes: environment.usedBytes(), mapSize: environment.mapSize,
                    readers: environment.readerCount(), sizeLimit: configuration.sizeLimit,
                    evictions: counters.evictions)
            }
        }
    }

    /// Every entry (complete or partial, expired or not), read in bounded
    /// transactions of at most 1,000 records, so a large store is listed
    /// without pinning old pages. Order is the index order, not by key.
    public func entries() throws(StoreError) -> [EntryInfo] {
        var result: [EntryInfo] = []
        var after: Slot? = nil
        while true {
            let batch = try run { try read { try $0.index.records(after: after, limit: 1000) } }
            result.append(contentsOf: batch.map { $0.record.info() })
            guard let last = batch.last, batch.count == 1000 else { return result }
            after = last.slot
        }
    }

    /// Removes every expired entry that is neither pinned nor in use;
    /// returns how many. Its cost grows with what expired, not with the store.
    @discardableResult
    public func removeExpired() throws(StoreError) -> Int {
        try run { try write { try $0.removeExpired() } }
    }

    /// Evicts least-recently-used entries (not pinned, not in use) until
    /// the stored bytes are at most `bytes`; returns how many.
    @discardableResult
    public func evict(toBytes bytes: Int) throws(StoreError) -> Int {
        try run { try write { try $0.evict(toBytes: max(0, bytes), count: Int.max) } }
    }
}

/// What ``MediaStore/verify()`` found.
public struct VerificationReport: Sendable, Equatable {
    /// Entries checked.
    public var entries = 0
    /// Chunk references read and verified.
    public var chunksRead = 0
    /// One line per problem, naming the key or chunk.
    public var problems: [String] = []
    /// Keys whose content is corrupt.
    public var corruptKeys: [String] = []

    /// Whether nothing was wrong.
    public var isClean: Bool { problems.isEmpty }
}

extension MediaStore {
    /// Re-reads everything: every chunk against its checksum, every
    /// complete entry against its content digest, and every reference
    /// count and counter against a recount; and checks that LMDB's two
    /// meta pages are the last two commits (a damaged one makes LMDB open
    /// an older commit, which is consistent in itself).
    /// Changes nothing.
    public func verify() throws(StoreError) -> VerificationReport {
        let metaPageDamage = MetaPageCheck.damage(path: directory.appendingPathComponent("data.mdb").path)
        return try run {
            try read { transaction in
                var report = VerificationReport()
                if let metaPageDamage { report.problems.append(metaPageDamage) }
                var references: [Slot: Int] = [:]
                var packReferences: [UInt64: PackUse] = [:]
                var recount = StoreCounters()
                let records = try transaction.index.allRecords()
                for (slot, record) in records {
                    report.entries += 1
                    recount.entryCount += 1
                    recount.logicalBytes += record.cachedBytes
                    if record.isComplete { recount.completeCount += 1 }
                    // During a rekey an entry not yet moved is under the old key's index key.
                    if transaction.context.keyDigest(record.key) != slot.digest
                        && transaction.index.replacedKeyDigest?(record.key) != slot.digest
                    {
                        report.problems.append("\(record.key): stored under the wrong slot")
                    }
                    if record.isPacked {
                        recount.storedBytes += record.unchunkedLength
                        packReferences[record.packID, default: PackUse(liveCount: 0, liveBytes: 0, payloadBytes: 0)]
                            .liveCount += 1
                        packReferences[record.packID]!.liveBytes += record.unchunkedLength
                        let problem = try transaction.packs.withValue(
                            id: record.packID, offset: record.packOffset, length: record.unchunkedLength
                        ) { value -> String? in
                            guard let value else { return "its pack is missing or damaged" }
                            return record.isComplete && ContentDigest(of: value) != record.digest
                                ? "packed bytes do not match the content digest" : nil
                        }
                        if let problem {
                            report.problems.append("\(record.key): \(problem)")
                            report.corruptKeys.append(record.key)
                        }
                        continue
                    }
                    if record.isInline {
                        recount.storedBytes += record.inlineBytes.count
                        if record.isComplete && ContentDigest(of: record.inlineBytes) != record.digest {
                            report.problems.append("\(record.key): inline bytes do not match the content digest")
                            report.corruptKeys.append(record.key)
                        }
                        continue
                    }
                    try verifyChunks(of: record, in: transaction, references: &references, report: &report)
                }
                let staging = try transaction.index.stagingEntryIDs()
                for id in staging {
                    for (_, extent) in try transaction.extents.rows(entryID: id) {
                        references[extent.chunk, default: 0] += 1
                    }
                }
                try verifyHolds(transaction, records: records, report: &report)
                try verifyChunkTable(transaction, references: references, recount: &recount, report: &report)
                try verifyPackTable(transaction, references: packReferences, report: &report)
                let counters = transaction.counters
                for (name, stored, actual) in [
                    ("entries", counters.entryCount, recount.entryCount),
                    ("complete entries", counters.completeCount, recount.completeCount),
                    ("logical bytes", counters.logicalBytes, recount.logicalBytes),
                    ("stored bytes", counters.storedBytes, recount.storedBytes),
                    ("chunks", counters.chunkCount, recount.chunkCount),
                ] where stored != actual {
                    report.problems.append("counter \(name) is \(stored), recount says \(actual)")
                }
                return report
            }
        }
    }

    /// Every hold row names an entry that carries the pinned flag, every
    /// pinned entry has a hold row, and `heldBy` mirrors `holds`.
    private func verifyHolds(
        _ transaction: StoreTransaction, records: [(slot: Slot, record: EntryRecord)], report: inout VerificationReport
    ) throws {
        guard transaction.db.holds != nil else { return }
        var held: Set<Slot> = []
        for row in try transaction.holds.allRows() {
            guard let slot = row.slot else {
                report.problems.append("a hold row with a malformed entry slot")
                continue
            }
            held.insert(slot)
        }
        for (slot, record) in records where record.isPinned != held.contains(slot) {
            report.problems.append(
                record.isPinned ? "\(record.key): pinned, but nobody holds it" : "\(record.key): held, but not pinned")
        }
        let slots = Set(records.map(\.slot))
        for slot in held where !slots.contains(slot) { report.problems.append("a hold of \(slot), which has no entry") }
        if try !transaction.holds.mirrorMatches() { report.problems.append("heldBy does not mirror holds") }
    }

    private func verifyChunks(
        of record: EntryRecord, in transaction: StoreTransaction, references: inout [Slot: Int],
        report: inout VerificationReport
    ) throws {
        let hasher = StreamingHasher()
        var bytes = 0
        var corrupt = false
        let extents = try transaction.extents.rows(entryID: record.entryID)
        if extents.count != record.presentChunks {
            report.problems.append("\(record.key): \(extents.count) chunks stored, record says \(record.presentChunks)")
        }
        for (index, extent) in extents {
            references[extent.chunk, default: 0] += 1
            report.chunksRead += 1
            do {
                let raw = try transaction.chunks.read(extent.chunk, trusting: false)
                if raw.count != extent.length { throw ChunkFault.checksum }
                hasher.update(raw)
                bytes += raw.count
            } catch {
                report.problems.append("\(record.key): chunk \(index): \(error)")
                corrupt = true
            }
        }
        if record.isComplete && !corrupt {
            if bytes != record.length || hasher.finalize() != record.digest {
                report.problems.append("\(record.key): content does not match its digest")
                corrupt = true
            }
        }
        if corrupt { report.corruptKeys.append(record.key) }
    }

    /// Checks every pack's directory and use row against the records that
    /// name it (`references`: live values and bytes per pack).
    private func verifyPackTable(
        _ transaction: StoreTransaction, references: [UInt64: PackUse], report: inout VerificationReport
    ) throws {
        var packCount = 0
        try transaction.packs.forEach { id, entries, use in
            packCount += 1
            guard let id else { return report.problems.append("a packs row with a key that is no pack id") }
            guard let entries else { return report.problems.append("pack \(id): unreadable directory") }
            guard let use else { return report.problems.append("pack \(id): no use row") }
            let expected = references[id] ?? PackUse(liveCount: 0, liveBytes: 0, payloadBytes: 0)
            if use.liveCount != expected.liveCount || use.liveBytes != expected.liveBytes {
                report.problems.append(
                    "pack \(id): use says \(use.liveCount) values, \(use.liveBytes) bytes live; records name \(expected.liveCount), \(expected.liveBytes) bytes"
                )
            }
            if entries.count < expected.liveCount {
                report.problems.append(
                    "pack \(id): \(entries.count) values in its directory, \(expected.liveCount) records")
            }
        }
        let useRows = try transaction.packs.useRowCount()
        if useRows != packCount { report.problems.append("\(useRows) pack use rows for \(packCount) packs") }
    }

    private func verifyChunkTable(
        _ transaction: StoreTransaction, references: [Slot: Int], recount: inout StoreCounters,
        report: inout VerificationReport
    ) throws {
        try transaction.chunks.forEachStored { key, storedSize in
            recount.chunkCount += 1
            recount.storedBytes += storedSize
            let slot = Slot(key)
            let stored = try slot.map { try transaction.chunks.referenceCount($0) } ?? 0
            let expected = slot.flatMap { references[$0] } ?? 0
            if stored != expected {
                report.problems.append(
                    "chunk \(key.prefix(16).map { String(format: "%02x", $0) }.joined()): reference count \(stored), \(expected) references"
                )
            }
        }
        for (chunk, _) in references where try !transaction.chunks.contains(chunk) {
            report.problems.append("a referenced chunk is missing")
        }
    }
}

extension MediaStore {
    /// Deletes the unfinished streamed writes of processes that are gone
    /// (a read first, so that a store without any takes no write).
    func removeAbandonedStaging() throws {
        let hasStaging = try read { try $0.index.stagingCount() > 0 }
        if hasStaging {
            try write { _ = try $0.removeAbandonedStaging() }
        }
    }
}

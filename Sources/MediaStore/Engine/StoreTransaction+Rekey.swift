import Foundation

/// One bounded step of a rekey, in this transaction: unfinished streamed
/// writes first (their chunks, then their records), then the entries in
/// `keys` in slot order, each moved whole (its chunks sealed again and
/// renamed under the new keys, shared ones once, then its record moved
/// to its new index key). The caller commits the step with the progress
/// it returns in the meta row `rekey` (``RekeyRow``), so a crash between
/// steps loses nothing and the next step resumes after the last entry
/// done.
///
/// Whatever is already under the new keys is left alone: what was
/// written since the rekey started, and an entry or chunk a step moved
/// before a crash (steps are idempotent). A chunk that opens under
/// neither key, or is missing, makes its entry corrupt: the entry is
/// dropped, as a read would.
extension StoreTransaction {
    /// How much one step may do.
    struct RekeyLimits {
        /// Entries (or staged writes) looked at.
        var entries: Int
        /// Plaintext bytes of chunks sealed again.
        var bytes: Int
    }

    /// Thrown by a step in a store instance that does not hold both keys
    /// of the rekey under way.
    struct RekeyKeysUnknown: Error {}

    /// What one step did.
    struct RekeyStepResult {
        var entriesMoved = 0
        var chunksResealed = 0
        var bytesResealed = 0
        var entriesDropped = 0
        /// Whether nothing is left under the replaced keys: the caller
        /// ends the rekey in this transaction.
        var isFinished = false
    }

    /// Records the start of a rekey: the meta row `rekey`, and the format
    /// marked ``StoreFormat/rekeyingVersion``.
    func startRekey(_ row: RekeyRow) throws {
        guard try txn.value(db.meta, key: RekeyRow.key) == nil else {
            throw StoreError.damagedStore(reason: "a rekey row appeared while the store was open")
        }
        try txn.put(db.meta, key: RekeyRow.key, value: row.encode())
        try txn.put(
            db.meta, key: Array("format".utf8), value: StoreFormat.encoded(version: StoreFormat.rekeyingVersion))
    }

    /// The meta row `rekey`, when a rekey is under way.
    func rekeyRow() throws -> RekeyRow? {
        guard let bytes = try txn.value(db.meta, key: RekeyRow.key) else { return nil }
        guard let row = RekeyRow(bytes) else {
            throw StoreError.damagedStore(reason: "the rekey row has an unknown scheme or size")
        }
        return row
    }

    /// Does one step of the rekey recorded in the meta row `rekey` and
    /// saves its progress there; the step that finds nothing left under
    /// the old key ends the rekey: the new key's check value replaces the
    /// old one's, the row is deleted and the format marked 6 again, so the
    /// old key opens the store no more. A store whose row is gone (another process ended the rekey)
    /// reports a finished step.
    func rekeyStep(limits: RekeyLimits) throws -> RekeyStepResult {
        guard let bytes = try txn.value(db.meta, key: RekeyRow.key) else {
            var result = RekeyStepResult()
            result.isFinished = true
            return result
        }
        guard var row = RekeyRow(bytes) else {
            throw StoreError.damagedStore(reason: "the rekey row has an unknown scheme or size")
        }
        // A rekey this store instance does not hold both keys of (one it
        // did not see start): it cannot move anything.
        guard context.encryption?.replaced != nil else { throw RekeyKeysUnknown() }
        let result = try rekeyStep(&row, limits: limits)
        if result.isFinished {
            try txn.put(
                db.meta, key: EncryptionRow.key, value: EncryptionRow(keyCheckValue: row.newKeyCheckValue).encode())
            try txn.delete(db.meta, key: RekeyRow.key)
            try txn.put(
                db.meta, key: Array("format".utf8), value: StoreFormat.encoded(version: StoreFormat.encryptedVersion))
        } else {
            try txn.put(db.meta, key: RekeyRow.key, value: row.encode())
        }
        return result
    }

    /// Does one step of the rekey recorded in `row` and advances it.
    func rekeyStep(_ row: inout RekeyRow, limits: RekeyLimits) throws -> RekeyStepResult {
        var result = RekeyStepResult()
        switch row.phase {
        case .staging:
            if try moveStaging(&row, limits: limits, &result) {
                row.phase = .entries
                row.cursor = []
            }
        case .entries:
            result.isFinished = try moveEntries(&row, limits: limits, &result)
        }
        return result
    }

    /// The rows of `database` after `cursor`, at most `limit`.
    private func rows(of database: LMDBDatabase, after cursor: [UInt8], limit: Int) throws -> [(
        key: [UInt8], value: [UInt8]
    )] {
        let lmdbCursor = try txn.cursor(database)
        // The smallest key above `cursor` is `cursor` ‖ 0.
        var item = try cursor.isEmpty ? lmdbCursor.first() : lmdbCursor.seek(atLeast: cursor + [0])
        var rows: [(key: [UInt8], value: [UInt8])] = []
        while let current = item, rows.count < limit {
            rows.append((current.key, Array(current.value)))
            item = try lmdbCursor.next()
        }
        return rows
    }

    /// Moves staged writes; true when none is left.
    private func moveStaging(_ row: inout RekeyRow, limits: RekeyLimits, _ result: inout RekeyStepResult) throws
        -> Bool
    {
        let batch = try rows(of: db.staging, after: row.cursor, limit: max(1, limits.entries))
        for (key, value) in batch {
            guard result.bytesResealed < limits.bytes || result.entriesMoved == 0 else { return false }
            if key.count == 8,
                let record = value.withUnsafeBytes({
                    index.records.decode($0, context: RecordCodec.context(stagingKey: key))
                })
            {
                if try moveChunks(entryID: record.entryID, &result) {
                    try index.saveStaging(record)
                } else {
                    try releaseExtents(entryID: record.entryID)
                    try index.deleteStagingRow(key: key)
                    result.entriesDropped += 1
                }
                result.entriesMoved += 1
            }
            row.cursor = key
        }
        return batch.count < max(1, limits.entries)
    }

    /// Moves entries in `keys`; true when none is left.
    private func moveEntries(_ row: inout RekeyRow, limits: RekeyLimits, _ result: inout RekeyStepResult) throws
        -> Bool
    {
        let batch = try rows(of: db.keys, after: row.cursor, limit: max(1, limits.entries))
        for (key, value) in batch {
            guard result.bytesResealed < limits.bytes || result.entriesMoved == 0 else { return false }
            row.cursor = key
            // A row that opens under neither key is left as it is: no key reads it.
            guard let slot = Slot(key),
                let record = value.withUnsafeBytes({
                    index.records.decode($0, context: RecordCodec.context(slot: slot))
                })
            else { continue }
            if context.keyDigest(record.key) == slot.digest {
                // Under the new keys already; so are its chunks (see the type's notes).
                continue
            }
            result.entriesMoved += 1
            guard try moveChunks(entryID: record.entryID, &result) else {
                try removeEntry(record, slot: slot)
                result.entriesDropped += 1
                continue
            }
            let target = try index.locateUnderCurrentKeys(record.key)
            if target.found != nil {
                // A newer entry for the key is under the new keys already.
                try removeEntry(record, slot: slot)
                continue
            }
            try index.move(record, from: slot, to: target.free)
        }
        return batch.count < max(1, limits.entries)
    }

    /// Seals every chunk of an entry that is under the replaced keys again
    /// under the current ones (sharing one already there) and points the
    /// entry's extents at them. False when a chunk is missing or opens
    /// under neither key: the entry is corrupt.
    private func moveChunks(entryID: UInt64, _ result: inout RekeyStepResult) throws -> Bool {
        for (position, extent) in try extents.rows(entryID: entryID) {
            let opened: (bytes: [UInt8], isCurrent: Bool)
            do {
                opened = try chunks.openGeneration(extent.chunk)
            } catch is ChunkFault {
                return false
            }
            if opened.isCurrent { continue }
            var compress = false
            let moved = try opened.bytes.withUnsafeBytes { try chunks.store($0, compress: &compress) }
            try extents.put(ExtentRow(chunk: moved, length: extent.length), entryID: entryID, index: position)
            try chunks.release(extent.chunk)
            // Shared with a chunk sealed before: renamed, not sealed again.
            if try chunks.referenceCount(moved) == 1 { result.chunksResealed += 1 }
            result.bytesResealed += opened.bytes.count
        }
        return true
    }
}

import Foundation

/// Holds: an entry is kept (never evicted, never removed by an expiry
/// sweep) while at least one named holder holds it. Each owner — a
/// download queue's download, an HLS asset, the app — holds and releases
/// only its own, so no caller has to guess whose a pin is. Holder names
/// are short strings the caller chooses (`"queue/<id>"`, `"hls/<asset>"`);
/// ``appHolder`` is the app's, and ``setPinned(_:forKey:version:)`` holds
/// and releases for it.
///
/// A hold belongs to the entry version it was given to: an entry replaced
/// by other content (a put, a prepare of another length or validator, a
/// finished streamed write, a removal) starts with no holders, except the
/// app's when the write asked for ``WriteOptions/pinned``.
extension MediaStore {
    /// The holder of ``setPinned(_:forKey:version:)`` and ``WriteOptions/pinned``.
    public static let appHolder = "app"

    /// Holds `key`'s entry for `holder`.
    ///
    /// - parameter key: the entry's key.
    /// - parameter holder: 1–200 UTF-8 bytes, no control characters.
    /// - parameter version: when given, the entry must still be that
    ///   ``EntryInfo/version``, otherwise ``StoreError/entryReplaced(key:expected:found:)``.
    /// - returns: whether `holder` did not hold it already.
    /// - throws: ``StoreError/notFound(key:)`` when there is no entry;
    ///   ``StoreError/invalidHolder(_:)`` for a name outside the rules.
    @discardableResult
    public func hold(_ key: String, by holder: String, version: UInt64? = nil) throws(StoreError) -> Bool {
        let name = try Self.holderBytes(holder)
        return try run { try write { try $0.hold(key, by: name, version: version) } }
    }

    /// Releases `holder`'s hold on `key`'s entry. An entry nobody holds any
    /// more is evictable again.
    ///
    /// - parameter key: the entry's key.
    /// - parameter holder: the name given to ``hold(_:by:version:)``.
    /// - parameter version: when given and the entry is another version (or
    ///   gone), nothing changes: that version's holds went with it.
    /// - returns: whether `holder` held it.
    @discardableResult
    public func release(_ key: String, by holder: String, version: UInt64? = nil) throws(StoreError) -> Bool {
        let name = try Self.holderBytes(holder)
        return try run { try write { try $0.release(key, by: name, version: version) } }
    }

    /// Releases every hold of `holder`, in one transaction.
    ///
    /// - parameter holder: the name given to ``hold(_:by:version:)``.
    /// - returns: how many entries it held.
    @discardableResult
    public func releaseAll(by holder: String) throws(StoreError) -> Int {
        let name = try Self.holderBytes(holder)
        return try run {
            try write { transaction in
                let slots = try transaction.holds.slots(heldBy: name)
                for slot in slots {
                    _ = try transaction.holds.remove(name, from: slot)
                    if let record = try transaction.index.record(at: slot) {
                        try transaction.settleHoldFlag(record, slot: slot)
                    }
                }
                return slots.count
            }
        }
    }

    /// Who holds `key`'s entry, sorted; empty when nobody does or there is no entry.
    ///
    /// - parameter key: the entry's key.
    public func holders(of key: String) throws(StoreError) -> [String] {
        try run {
            try read { transaction in
                guard let (slot, record) = try transaction.index.find(key, currentAccess: false) else { return [] }
                return try transaction.holderNames(of: record, slot: slot)
            }
        }
    }

    /// The keys of the entries `holder` holds, sorted.
    ///
    /// - parameter holder: the name given to ``hold(_:by:version:)``.
    public func keys(heldBy holder: String) throws(StoreError) -> [String] {
        let name = try Self.holderBytes(holder)
        return try run {
            try read { transaction in
                let slots = try transaction.holds.slots(heldBy: name)
                return try slots.compactMap { try transaction.index.record(at: $0)?.key }.sorted()
            }
        }
    }

    static func holderBytes(_ holder: String) throws(StoreError) -> [UInt8] {
        guard let bytes = HoldTable.validated(holder) else { throw .invalidHolder(holder) }
        return bytes
    }
}

extension StoreTransaction {
    var holds: HoldTable { HoldTable(txn: txn, db: db) }

    /// ``MediaStore/hold(_:by:version:)`` in this write transaction, for
    /// the holder name `name` (validated); returns whether it was new.
    func hold(_ key: String, by name: [UInt8], version: UInt64?) throws -> Bool {
        var added = false
        try updateRecord(forKey: key, version: version) { transaction, record, slot in
            added = try transaction.holds.add(name, to: slot)
            guard !record.isPinned else { return }
            record.isPinned = true
            try transaction.index.touch(&record, slot: slot, at: transaction.now)
        }
        return added
    }

    /// ``MediaStore/release(_:by:version:)`` in this write transaction, for
    /// the holder name `name` (validated); returns whether it held the entry.
    func release(_ key: String, by name: [UInt8], version: UInt64?) throws -> Bool {
        guard let (slot, found) = try index.find(key), version == nil || found.entryID == version else { return false }
        guard try holds.remove(name, from: slot) else { return false }
        try settleHoldFlag(found, slot: slot)
        return true
    }

    /// Clears the record's pinned flag when its last hold went (and puts it back in the LRU order).
    func settleHoldFlag(_ record: EntryRecord, slot: Slot) throws {
        guard record.isPinned, try holds.holders(of: slot).isEmpty else { return }
        var record = record
        record.isPinned = false
        try index.touch(&record, slot: slot, at: now)
        try index.save(record, at: slot)
    }

    /// The holder names of an entry; a pinned entry of a store without
    /// hold tables (format 4, read-only) is held by the app.
    func holderNames(of record: EntryRecord, slot: Slot) throws -> [String] {
        guard db.holds != nil else { return record.isPinned ? [MediaStore.appHolder] : [] }
        return try holds.holders(of: slot).map { String(decoding: $0, as: UTF8.self) }.sorted()
    }
}

extension HoldTable {
    static let appHolderBytes = Array(MediaStore.appHolder.utf8)

    /// Gives every pinned entry of an older store the app's hold (the
    /// upgrade to format 5, in the opening transaction).
    static func migratePinnedFlags(_ txn: LMDBTransaction, _ db: StoreDatabases) throws {
        let cursor = try txn.cursor(db.keys)
        var pinned: [Slot] = []
        var item = try cursor.first()
        while let current = item {
            if let slot = Slot(current.key), let record = current.value.withUnsafeBytes(EntryRecord.decode),
                record.isPinned
            {
                pinned.append(slot)
            }
            item = try cursor.next()
        }
        let table = HoldTable(txn: txn, db: db)
        for slot in pinned { _ = try table.add(appHolderBytes, to: slot) }
    }
}

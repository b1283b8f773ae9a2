import Foundation

extension MediaStore {
    /// Stores `value` whole under `key`, replacing any entry there.
    ///
    /// Values up to ``StoreConfiguration/inlineLimit`` live in the index
    /// record; larger ones are cut into chunks, shared with any identical
    /// chunk already stored. Values above 16 MiB are streamed in through an
    /// ``EntryWriter`` so that no transaction grows unbounded.
    ///
    /// - throws: ``StoreError/entryTooLarge(key:size:limit:)`` when the
    ///   value exceeds the whole size limit; ``StoreError/diskFull``.
    @discardableResult
    public func put(_ value: some ContiguousBytes, forKey key: String, options: WriteOptions = WriteOptions())
        throws(StoreError) -> EntryInfo
    {
        let count = value.withUnsafeBytes { $0.count }
        try checkFits(key: key, size: count)
        if count > Self.singleTransactionBytes {
            let writer = try makeWriter(forKey: key, options: options, expectedLength: count)
            try writer.append(value)
            return try writer.finish()
        }
        // In use while written: the limits it triggers must not evict it.
        markInUse(key)
        defer { unmarkInUse(key) }
        return try run { try write { try $0.putWhole(value, forKey: key, options: options) } }
    }

    func checkFits(key: String, size: Int) throws(StoreError) {
        try Self.checkFits(key: key, size: size, configuration: configuration)
    }

    /// Throws ``StoreError/entryTooLarge(key:size:limit:)`` when a value of
    /// `size` bytes cannot fit within the whole size limit.
    static func checkFits(key: String, size: Int, configuration: StoreConfiguration) throws(StoreError) {
        if configuration.sizeLimit > 0 && size > configuration.sizeLimit {
            throw .entryTooLarge(key: key, size: size, limit: configuration.sizeLimit)
        }
    }

    /// The whole value of a complete, unexpired entry, or `nil` on a miss
    /// (absent, expired or still partial).
    ///
    /// - throws: ``StoreError/corrupted(key:reason:)`` when a chunk fails
    ///   its checksum; the entry is then dropped, so the next call misses.
    public func data(forKey key: String) throws(StoreError) -> Data? {
        try readWhole(forKey: key, includeExpired: false) { _, data in data }
    }

    /// The whole value of a complete entry and when it expires, read in one
    /// transaction; `nil` when absent or partial, and when expired unless
    /// `includeExpired`. Counts as an access. Lighter than
    /// ``entry(forKey:includeExpired:)`` when only the expiry is needed.
    public func value(forKey key: String, includeExpired: Bool = false) throws(StoreError) -> (
        data: Data, expiry: Date?
    )? {
        try readWhole(forKey: key, includeExpired: includeExpired) { record, data in
            (data, record.expiryDate)
        }
    }

    /// The info and whole value of a complete entry, read in one
    /// transaction; `nil` when absent or partial, and when expired unless
    /// `includeExpired`. Counts as an access. The info's `lastAccess` is
    /// as of the last write (use ``info(forKey:)`` for the current one).
    public func entry(forKey key: String, includeExpired: Bool = false) throws(StoreError) -> (
        info: EntryInfo, data: Data
    )? {
        try readWhole(forKey: key, includeExpired: includeExpired) { record, data in (record.info(), data) }
    }

    /// Reads a complete entry whole and shapes the result with `make`.
    private func readWhole<R>(
        forKey key: String, includeExpired: Bool, _ make: (EntryRecord, Data) -> R
    ) throws(StoreError) -> R? {
        let found: (slot: Slot, now: Double, result: R)?
        do {
            found = try run {
                try read { transaction -> (slot: Slot, now: Double, result: R)? in
                    guard let (slot, record) = try transaction.index.find(key, currentAccess: false), record.isComplete,
                        includeExpired || !record.isExpired(at: transaction.now)
                    else { return nil }
                    let data = try transaction.readRange(record, 0..<(record.length ?? 0))
                    return (slot, transaction.now, make(record, data))
                }
            }
        } catch {
            throw dropIfCorrupt(key: key, error)
        }
        guard let found else { return nil }
        recordAccess(slot: found.slot, at: found.now)
        return found.result
    }

    /// Everything known about the entry for `key`, complete or partial,
    /// expired or not; `nil` when there is none. Does not count as an access.
    public func info(forKey key: String) throws(StoreError) -> EntryInfo? {
        try run { try read { try $0.index.find(key)?.record.info() } }
    }

    /// Whether a complete, unexpired entry exists for `key`.
    public func contains(_ key: String) throws(StoreError) -> Bool {
        guard let info = try info(forKey: key) else { return false }
        return info.isComplete && !info.isExpired()
    }

    /// Removes the entry for `key`; returns whether there was one.
    ///
    /// - parameter key: the entry's key.
    /// - parameter version: when given, only that ``EntryInfo/version`` is
    ///   removed; a newer entry (or none) throws
    ///   ``StoreError/entryReplaced(key:expected:found:)`` and is left alone.
    @discardableResult
    public func remove(forKey key: String, version: UInt64? = nil) throws(StoreError) -> Bool {
        try run {
            try write { transaction in
                if let version {
                    let (slot, record) = try transaction.findEntry(key, version: version)
                    try transaction.removeEntry(record, slot: slot)
                    return true
                }
                guard let (slot, record) = try transaction.index.find(key) else { return false }
                try transaction.removeEntry(record, slot: slot)
                return true
            }
        }
    }

    /// Removes every entry. Unfinished streamed writes carry on.
    public func removeAll() throws(StoreError) {
        try run {
            try write { transaction in
                for (slot, record) in try transaction.index.allRecords() {
                    try transaction.removeEntry(record, slot: slot)
                }
            }
        }
    }

    /// Pins or unpins an entry for the app: holds it by ``appHolder`` or
    /// releases that hold (see ``hold(_:by:version:)``). An entry another
    /// holder holds stays kept after the app unpins it.
    ///
    /// - parameter pinned: whether the app holds the entry.
    /// - parameter key: the entry's key.
    /// - parameter version: when given, the entry must still be that
    ///   ``EntryInfo/version`` (e.g. the one a download filled), otherwise
    ///   ``StoreError/entryReplaced(key:expected:found:)`` is thrown and
    ///   nothing changes.
    public func setPinned(_ pinned: Bool, forKey key: String, version: UInt64? = nil) throws(StoreError) {
        _ = try exchangePinned(pinned, forKey: key, version: version)
    }

    /// ``setPinned(_:forKey:version:)`` that returns whether the app held
    /// the entry before, read in the same write transaction.
    package func exchangePinned(_ pinned: Bool, forKey key: String, version: UInt64? = nil) throws(StoreError)
        -> Bool
    {
        var previous = false
        try updateRecord(forKey: key, version: version) { transaction, record, slot in
            if pinned {
                previous = try !transaction.holds.add(HoldTable.appHolderBytes, to: slot)
                guard !record.isPinned else { return }
                record.isPinned = true
                try transaction.index.touch(&record, slot: slot, at: transaction.now)
            } else {
                previous = try transaction.holds.remove(HoldTable.appHolderBytes, from: slot)
                guard record.isPinned, try transaction.holds.holders(of: slot).isEmpty else { return }
                record.isPinned = false
                try transaction.index.touch(&record, slot: slot, at: transaction.now)
            }
        }
        return previous
    }

    /// Replaces the metadata (MIME type, validators, user fields) of an entry.
    ///
    /// - parameter metadata: the new metadata, replacing all of the old.
    /// - parameter key: the entry's key.
    /// - parameter version: when given, the entry must still be that
    ///   ``EntryInfo/version``, otherwise ``StoreError/entryReplaced(key:expected:found:)``.
    public func setMetadata(_ metadata: EntryMetadata, forKey key: String, version: UInt64? = nil) throws(StoreError) {
        try updateRecord(forKey: key, version: version) { _, record, _ in record.metadata = metadata }
    }

    /// Sets when an entry expires (`.default` applies the configured lifetime from now).
    ///
    /// - parameter expiry: the new expiry.
    /// - parameter key: the entry's key.
    /// - parameter version: when given, the entry must still be that
    ///   ``EntryInfo/version`` (e.g. the one a 304 answer revalidated),
    ///   otherwise ``StoreError/entryReplaced(key:expected:found:)``.
    public func setExpiry(_ expiry: ExpiryPolicy, forKey key: String, version: UInt64? = nil) throws(StoreError) {
        try updateRecord(forKey: key, version: version) { transaction, record, slot in
            let date = expiry.resolve(
                now: Date(timeIntervalSince1970: transaction.now), defaultLifetime: configuration.defaultLifetime)
            try transaction.index.setExpiry(&record, slot: slot, to: date)
        }
    }

    func updateRecord(
        forKey key: String, version: UInt64? = nil,
        _ body: (StoreTransaction, inout EntryRecord, Slot) throws -> Void
    ) throws(StoreError) {
        try run {
            try write { transaction in try transaction.updateRecord(forKey: key, version: version, body) }
        }
    }

    /// Drops the entry of a ``StoreError/corrupted(key:reason:)`` read, so
    /// that corrupt bytes are never served, and passes the error on.
    func dropIfCorrupt(key: String, _ error: StoreError) -> StoreError {
        if case .corrupted = error { _ = try? remove(forKey: key) }
        return error
    }
}

extension StoreTransaction {
    /// ``MediaStore/updateRecord(forKey:version:_:)`` in this write transaction.
    func updateRecord(
        forKey key: String, version: UInt64?, _ body: (StoreTransaction, inout EntryRecord, Slot) throws -> Void
    ) throws {
        let (slot, found): (Slot, EntryRecord)
        if let version {
            (slot, found) = try findEntry(key, version: version)
        } else {
            guard let entry = try index.find(key) else { throw StoreError.notFound(key: key) }
            (slot, found) = entry
        }
        var record = found
        try body(self, &record, slot)
        try index.save(record, at: slot)
    }
}

extension EntryRecord {
    func isExpired(at time: Double) -> Bool {
        guard let expiry else { return false }
        return expiry <= time
    }
}

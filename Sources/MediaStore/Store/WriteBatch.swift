import Foundation

/// Puts, removes, holds and releases, metadata and expiry changes applied
/// together in one transaction: all or none, one commit (one disk flush)
/// for the lot. Made by
/// ``MediaStore/performBatch(_:)``, and by ``EntryWriter/finish(with:)``
/// (with the streamed entry published in the same transaction).
///
/// ```swift
/// try store.performBatch { batch in
///     for (key, value) in thumbnails { try batch.put(value, forKey: key) }
/// }
/// ```
public final class WriteBatch {
    private let transaction: StoreTransaction

    init(transaction: StoreTransaction) {
        self.transaction = transaction
    }

    /// Stores a whole value under `key` (at most 16 MiB; stream larger ones).
    @discardableResult
    public func put(_ value: some ContiguousBytes, forKey key: String, options: WriteOptions = WriteOptions()) throws
        -> EntryInfo
    {
        let count = value.withUnsafeBytes { $0.count }
        try MediaStore.checkFits(key: key, size: count, configuration: transaction.configuration)
        guard count <= MediaStore.singleTransactionBytes else {
            throw StoreError.entryTooLarge(key: key, size: count, limit: MediaStore.singleTransactionBytes)
        }
        return try transaction.putWhole(value, forKey: key, options: options)
    }

    /// Holds `key`'s entry for `holder`, as ``MediaStore/hold(_:by:version:)``
    /// does, in the batch's transaction.
    ///
    /// - returns: whether `holder` did not hold it already.
    @discardableResult
    public func hold(_ key: String, by holder: String, version: UInt64? = nil) throws -> Bool {
        try transaction.hold(key, by: MediaStore.holderBytes(holder), version: version)
    }

    /// Releases `holder`'s hold on `key`'s entry, as
    /// ``MediaStore/release(_:by:version:)`` does, in the batch's transaction.
    ///
    /// - returns: whether `holder` held it.
    @discardableResult
    public func release(_ key: String, by holder: String, version: UInt64? = nil) throws -> Bool {
        try transaction.release(key, by: MediaStore.holderBytes(holder), version: version)
    }

    /// The info of `key`'s entry as the batch's transaction sees it (what
    /// the batch did so far included), or `nil` when there is none.
    public func info(forKey key: String) throws -> EntryInfo? {
        try transaction.index.find(key)?.record.info()
    }

    /// Replaces the metadata of `key`'s entry, as
    /// ``MediaStore/setMetadata(_:forKey:version:)`` does, in the batch's transaction.
    ///
    /// - throws: ``StoreError/notFound(key:)`` when there is no entry, and
    ///   ``StoreError/entryReplaced(key:expected:found:)`` when `version`
    ///   is given and the entry is another one.
    public func setMetadata(_ metadata: EntryMetadata, forKey key: String, version: UInt64? = nil) throws {
        try transaction.updateRecord(forKey: key, version: version) { _, record, _ in record.metadata = metadata }
    }

    /// Sets when `key`'s entry expires, as
    /// ``MediaStore/setExpiry(_:forKey:version:)`` does, in the batch's transaction.
    ///
    /// - throws: ``StoreError/notFound(key:)`` when there is no entry, and
    ///   ``StoreError/entryReplaced(key:expected:found:)`` when `version`
    ///   is given and the entry is another one.
    public func setExpiry(_ expiry: ExpiryPolicy, forKey key: String, version: UInt64? = nil) throws {
        try transaction.updateRecord(forKey: key, version: version) { transaction, record, slot in
            let date = expiry.resolve(
                now: Date(timeIntervalSince1970: transaction.now),
                defaultLifetime: transaction.configuration.defaultLifetime)
            try transaction.index.setExpiry(&record, slot: slot, to: date)
        }
    }

    /// Removes the entry for `key`; returns whether there was one.
    @discardableResult
    public func remove(forKey key: String) throws -> Bool {
        guard let (slot, record) = try transaction.index.find(key) else { return false }
        try transaction.removeEntry(record, slot: slot)
        return true
    }
}

extension MediaStore {
    /// Runs `body` with a ``WriteBatch`` and commits everything it did in
    /// one transaction. If `body` throws, nothing is written.
    ///
    /// `body` may run more than once when the map has to grow, so it must
    /// only talk to the batch.
    ///
    /// - throws: what `body` threw (its own error, unchanged), or a
    ///   ``StoreError``.
    public func performBatch(_ body: (WriteBatch) throws -> Void) throws {
        var bodyError: (any Error)?
        do {
            try run {
                try write { transaction in
                    do {
                        try body(WriteBatch(transaction: transaction))
                    } catch let error as StoreError {
                        throw error
                    } catch let error as LMDBError {
                        throw error
                    } catch {
                        bodyError = error
                        throw error
                    }
                }
            }
        } catch {
            if let bodyError { throw bodyError }
            throw error
        }
    }
}

/// The store's totals (``StoreCounters``) as one transaction sees and
/// changes them. Shared by the parts of a ``StoreTransaction``; written
/// back by its commit when changed.
final class CounterLedger {
    private let txn: LMDBTransaction
    private let meta: LMDBDatabase
    private var loaded: StoreCounters?
    private(set) var changed = false

    private static let key = Array("counters".utf8)

    /// - parameter strict: read the counters now and fail on an unreadable
    ///   record (a write commits the counters it read: an unreadable record
    ///   must stop it rather than be replaced by zeros).
    init(txn: LMDBTransaction, meta: LMDBDatabase, strict: Bool) throws {
        self.txn = txn
        self.meta = meta
        if strict { loaded = try read() }
    }

    /// The totals as of this transaction (read on first use by readers; a
    /// reader that cannot decode them sees zeros).
    var current: StoreCounters {
        if let loaded { return loaded }
        let counters = (try? read()) ?? StoreCounters()
        loaded = counters
        return counters
    }

    func update(_ body: (inout StoreCounters) -> Void) {
        var updated = current
        body(&updated)
        loaded = updated
        changed = true
    }

    /// Writes the totals back when they changed.
    func save() throws {
        if changed { try txn.put(meta, key: Self.key, value: current.encode()) }
    }

    private func read() throws -> StoreCounters {
        try txn.withValue(meta, key: Self.key) { buffer in
            guard let buffer else { return StoreCounters() }
            guard let counters = StoreCounters.decode(buffer) else {
                throw StoreError.damagedStore(reason: "the store's counters record is unreadable")
            }
            return counters
        }
    }
}

/// The packs of one transaction (store format 4): small whole values
/// stored several to a `packs` row, with each pack's use in `packUse`.
/// A write transaction fills one ``OpenPack`` at a time, written when
/// full and at commit; a pack whose live bytes fall under half its
/// payload is named for compaction, which the transaction performs (it
/// needs the index to repoint records). Knows nothing of entries beyond
/// the owner slots in a pack's directory.
struct PackStore {
    let txn: LMDBTransaction
    let db: StoreDatabases
    /// The write transaction's pack state; `nil` in read transactions.
    let state: PackState?

    /// The size of a full pack row: 16 pages of 4 KiB less LMDB's
    /// 16-byte overflow page header, so full packs waste no page.
    static let rowCapacity = 16 * 4096 - 16
    /// Values of at most this many bytes stay inline in their record: a
    /// pack would save little and cost a second lookup.
    static let inlineMaximum = 128
    /// The largest value that is packed (a quarter of a pack).
    static let packedMaximum = rowCapacity / 4

    /// Whether a whole value of `length` bytes that is not chunked goes into a pack.
    static func packs(length: Int) -> Bool {
        length > inlineMaximum && length <= packedMaximum
    }

    /// Mutable state of a write transaction's packs.
    final class PackState {
        var open: OpenPack?
        /// The id the next pack takes; read from `packs` on first use.
        var nextID: UInt64?
        /// Packs under half full, to compact before commit.
        var compactionCandidates: Set<UInt64> = []
    }

    private func databases() throws -> (packs: LMDBDatabase, use: LMDBDatabase) {
        guard let packs = db.packs, let use = db.packUse else {
            throw StoreError.damagedStore(reason: "a record names a pack, but the store has no packs")
        }
        return (packs, use)
    }

    private func writeState() -> PackState {
        guard let state else { preconditionFailure("packs are written only in write transactions") }
        return state
    }

    /// Stores `bytes` in the open pack (opening one, or writing a full one
    /// first); returns where the value is.
    func append(_ bytes: UnsafeRawBufferPointer, owner: Slot) throws -> (id: UInt64, offset: Int) {
        let state = writeState()
        if let open = state.open, !open.fits(bytes.count, capacity: Self.rowCapacity) {
            try write(open)
            state.open = nil
        }
        let open: OpenPack
        if let current = state.open {
            open = current
        } else {
            open = OpenPack(id: try takeID(state))
            state.open = open
        }
        return (open.id, open.append(bytes, owner: owner))
    }

    private func takeID(_ state: PackState) throws -> UInt64 {
        let id: UInt64
        if let next = state.nextID {
            id = next
        } else {
            let last = try txn.cursor(try databases().packs).lastKey()
            id = last.map { StoreKeys.bigEndianUInt64($0) &+ 1 } ?? 1
        }
        state.nextID = id &+ 1
        return id
    }

    /// Writes a pack row and its use row; a pack with nothing live is dropped.
    private func write(_ open: OpenPack) throws {
        guard open.liveCount > 0 else { return }
        let (packs, use) = try databases()
        let key = StoreKeys.pack(open.id)
        try open.payload.withUnsafeBytes { payload in
            try txn.putReserved(packs, key: key, count: open.rowSize, append: true) { out in
                PackLayout.write(entries: open.entries, payload: payload, into: out)
            }
        }
        try txn.put(use, key: key, value: open.use.encode(), append: true)
    }

    /// Writes the open pack (at commit).
    func flush() throws {
        guard let state, let open = state.open else { return }
        state.open = nil
        try write(open)
    }

    /// Calls `body` with the `length` bytes at `offset` of pack `id`, or
    /// `nil` when the pack is missing or damaged or the range is outside it.
    func withValue<R>(
        id: UInt64, offset: Int, length: Int, _ body: (UnsafeRawBufferPointer?) throws -> R
    ) throws -> R {
        if let open = state?.open, open.id == id { return try open.withValue(offset: offset, length: length, body) }
        return try txn.withValue(try databases().packs, key: StoreKeys.pack(id)) { row in
            try body(row.flatMap { PackLayout.value(in: $0, offset: offset, length: length) })
        }
    }

    /// A value of pack `id` of `length` bytes is no longer referenced: the
    /// pack is deleted with its last value, and named for compaction when
    /// less than half of it is live.
    func release(id: UInt64, length: Int) throws {
        let state = writeState()
        if let open = state.open, open.id == id {
            open.release(length: length)
            return
        }
        let (packs, useDatabase) = try databases()
        let key = StoreKeys.pack(id)
        guard var use = try txn.withValue(useDatabase, key: key, { $0.flatMap(PackUse.init) }) else { return }
        use.liveCount = max(0, use.liveCount - 1)
        use.liveBytes = max(0, use.liveBytes - length)
        if use.liveCount == 0 {
            try txn.delete(packs, key: key)
            try txn.delete(useDatabase, key: key)
            state.compactionCandidates.remove(id)
            return
        }
        try txn.put(useDatabase, key: key, value: use.encode())
        if use.wantsCompaction { state.compactionCandidates.insert(id) }
    }

    /// The packs named for compaction so far, forgotten by the state.
    func takeCompactionCandidates() -> [UInt64] {
        let state = writeState()
        defer { state.compactionCandidates = [] }
        return state.compactionCandidates.sorted()
    }

    /// The use row of pack `id`, if it has one.
    func use(_ id: UInt64) throws -> PackUse? {
        try txn.withValue(try databases().use, key: StoreKeys.pack(id)) { $0.flatMap(PackUse.init) }
    }

    /// The directory of pack `id` with a copy of each value; `nil` when the
    /// pack is missing or damaged.
    func contents(_ id: UInt64) throws -> [(entry: PackLayout.Entry, bytes: [UInt8])]? {
        try txn.withValue(try databases().packs, key: StoreKeys.pack(id)) { row in
            guard let row, let entries = PackLayout.entries(of: row) else { return nil }
            return entries.map { entry in (entry, [UInt8](row[entry.offset..<(entry.offset + entry.length)])) }
        }
    }

    /// Replaces the use row of pack `id`.
    func setUse(_ use: PackUse, of id: UInt64) throws {
        try txn.put(try databases().use, key: StoreKeys.pack(id), value: use.encode())
    }

    /// Deletes pack `id` and its use row.
    func delete(_ id: UInt64) throws {
        let (packs, use) = try databases()
        try txn.delete(packs, key: StoreKeys.pack(id))
        try txn.delete(use, key: StoreKeys.pack(id))
    }

    /// Calls `body` with every stored pack's id, its row (`nil` entries
    /// when the row is not a pack) and its use row, in id order.
    func forEach(_ body: (_ id: UInt64?, _ entries: [PackLayout.Entry]?, _ use: PackUse?) throws -> Void) throws {
        guard let packs = db.packs, let useDatabase = db.packUse else { return }
        let cursor = try txn.cursor(packs)
        var key = try cursor.firstKey()
        while let current = key {
            let id = current.count == 8 ? StoreKeys.bigEndianUInt64(current) : nil
            let entries = try txn.withValue(packs, key: current) { $0.flatMap(PackLayout.entries(of:)) }
            let use = try txn.withValue(useDatabase, key: current) { $0.flatMap(PackUse.init) }
            try body(id, entries, use)
            key = try cursor.nextKey()
        }
    }

    /// How many use rows there are (each must belong to a pack).
    func useRowCount() throws -> Int {
        guard let use = db.packUse else { return 0 }
        return try txn.count(use)
    }
}

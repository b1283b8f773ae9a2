/// The pack a write transaction is filling: its values gathered in memory
/// and written as one `packs` row when it is full or the transaction
/// commits, so a batch of small puts writes each page once.
final class OpenPack {
    let id: UInt64
    private(set) var entries: [PackLayout.Entry] = []
    private(set) var payload: [UInt8] = []
    private(set) var liveCount = 0
    private(set) var liveBytes = 0

    init(id: UInt64) {
        self.id = id
    }

    /// Whether a value of `length` bytes still fits in a row of `capacity` bytes.
    func fits(_ length: Int, capacity: Int) -> Bool {
        PackLayout.size(count: entries.count + 1, payload: payload.count + length) <= capacity
    }

    /// Appends a value owned by `owner`; returns its offset in the row.
    func append(_ bytes: UnsafeRawBufferPointer, owner: Slot) -> Int {
        let offset = PackLayout.headerSize + payload.count
        payload.append(contentsOf: bytes)
        entries.append(PackLayout.Entry(owner: owner, offset: offset, length: bytes.count))
        liveCount += 1
        liveBytes += bytes.count
        return offset
    }

    /// The value at `offset` of the row, `nil` when out of range.
    func withValue<R>(offset: Int, length: Int, _ body: (UnsafeRawBufferPointer?) throws -> R) rethrows -> R {
        let start = offset - PackLayout.headerSize
        guard start >= 0, length >= 0, start <= payload.count - length else { return try body(nil) }
        return try payload.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)])) }
    }

    /// A value of the pack is no longer referenced.
    func release(length: Int) {
        liveCount -= 1
        liveBytes -= length
    }

    /// The row's use as it is written.
    var use: PackUse { PackUse(liveCount: liveCount, liveBytes: liveBytes, payloadBytes: payload.count) }

    /// The row's size.
    var rowSize: Int { PackLayout.size(count: entries.count, payload: payload.count) }
}

/// The totals kept in `meta` under `counters`, updated in the same
/// transaction as the data they count.
package struct StoreCounters: Equatable {
    var entryCount = 0
    var completeCount = 0
    var logicalBytes = 0
    var storedBytes = 0
    var uniqueChunkBytes = 0
    var chunkCount = 0
    var nextEntryID: UInt64 = 1
    var accessTick: UInt64 = 0
    var evictions = 0

    func encode() -> [UInt8] {
        var writer = ByteWriter(capacity: 80)
        for value in [entryCount, completeCount, logicalBytes, storedBytes, uniqueChunkBytes, chunkCount] {
            writer.writeVarint(UInt64(max(0, value)))
        }
        writer.writeVarint(nextEntryID)
        writer.writeVarint(accessTick)
        writer.writeVarint(UInt64(max(0, evictions)))
        return writer.bytes
    }

    package static func decode(_ buffer: UnsafeRawBufferPointer) -> StoreCounters? {
        var reader = ByteReader(buffer)
        do {
            var counters = StoreCounters()
            var values = [Int]()
            for _ in 0..<6 {
                let value = try reader.readVarint()
                guard value <= UInt64(Int.max) else { return nil }
                values.append(Int(value))
            }
            counters.entryCount = values[0]
            counters.completeCount = values[1]
            counters.logicalBytes = values[2]
            counters.storedBytes = values[3]
            counters.uniqueChunkBytes = values[4]
            counters.chunkCount = values[5]
            counters.nextEntryID = try reader.readVarint()
            counters.accessTick = try reader.readVarint()
            counters.evictions = Int(clamping: try reader.readVarint())
            return counters
        } catch {
            return nil
        }
    }
}

extension StoreTransaction {
    /// Before commit: compacts the packs that fell under half live, then
    /// writes the open pack — unless it holds a single live value, which
    /// goes back inline into its record: a transaction of one small put
    /// then writes what it wrote before packs existed (one record), not
    /// three rows in three databases, and its reads need one lookup.
    func finishPacks() throws {
        guard let state = packs.state else { return }
        for id in packs.takeCompactionCandidates() { try compactPack(id) }
        if let open = state.open, open.liveCount == 1 {
            for entry in open.entries {
                guard var record = try index.record(at: entry.owner), record.isPacked, record.packID == open.id,
                    record.packOffset == entry.offset
                else { continue }
                try open.withValue(offset: entry.offset, length: entry.length) { value in
                    guard let value else { return }
                    record.inlineBytes = [UInt8](value)
                    record.flags.remove(.packed)
                    record.flags.insert(.inline)
                    (record.packID, record.packOffset) = (0, 0)
                    try index.save(record, at: entry.owner)
                    open.release(length: entry.length)
                }
            }
        }
        try packs.flush()
    }

    /// Moves the live values of pack `id` into the open pack, repoints
    /// their records and deletes the pack. A value is live when the record
    /// at its owner slot still names this pack, offset and length; a
    /// record that names the pack but is not in its directory (a damaged
    /// directory) keeps pointing at it and fails its next read, which
    /// drops the entry: nothing is returned that was not verified.
    func compactPack(_ id: UInt64) throws {
        guard var use = try packs.use(id), use.wantsCompaction, let contents = try packs.contents(id) else { return }
        var moved = 0
        var movedBytes = 0
        for (entry, bytes) in contents {
            guard var record = try index.record(at: entry.owner), record.isPacked, record.packID == id,
                record.packOffset == entry.offset, record.unchunkedLength == entry.length
            else { continue }
            (record.packID, record.packOffset) = try bytes.withUnsafeBytes {
                try packs.append($0, owner: entry.owner)
            }
            try index.save(record, at: entry.owner)
            moved += 1
            movedBytes += entry.length
        }
        guard moved < use.liveCount else { return try packs.delete(id) }
        // Records that name the pack but were not found in its directory
        // (a damaged directory) would be left dangling: keep the pack for
        // them, counting only what is still live in it.
        use.liveCount -= moved
        use.liveBytes = max(0, use.liveBytes - movedBytes)
        try packs.setUse(use, of: id)
    }
}

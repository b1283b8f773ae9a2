import Foundation

extension StoreTransaction {
    /// The bytes of `range` of an entry, verified chunk by chunk (block by
    /// block where a chunk has a ``BlockDigests`` table).
    ///
    /// - throws: ``StoreError/rangeNotCached(key:missing:)`` at the first
    ///   hole, ``StoreError/corrupted(key:reason:)`` on a bad chunk.
    func readRange(_ record: EntryRecord, _ range: Range<Int>) throws -> Data {
        if range.isEmpty { return Data() }
        if record.isPacked { return try readPacked(record, range) }
        if record.isInline {
            // Inline values carry no chunk checksum; their content digest is one.
            if let digest = record.digest, ContentDigest(of: record.inlineBytes) != digest {
                throw StoreError.corrupted(key: record.key, reason: "the inline value fails its checksum")
            }
            guard range.lowerBound >= 0, range.upperBound <= record.inlineBytes.count else {
                throw StoreError.corrupted(key: record.key, reason: "the inline value is shorter than its length")
            }
            // Copied straight into the Data (not through a generic sequence).
            return record.inlineBytes.withUnsafeBytes {
                Data(bytes: $0.baseAddress! + range.lowerBound, count: range.count)
            }
        }
        if let data = try readRangeInParallel(record, range) { return data }
        // Every byte is written below, so skip Data(count:)'s zero fill.
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: range.count, alignment: 16)
        var handedOver = false
        defer { if !handedOver { out.deallocate() } }
        let chunkSize = record.chunkSize
        var position = range.lowerBound
        while position < range.upperBound {
            let index = position / chunkSize
            let chunkStart = index * chunkSize
            guard let extent = try extents.row(entryID: record.entryID, index: index) else {
                throw StoreError.rangeNotCached(key: record.key, missing: chunkStart..<(chunkStart + chunkSize))
            }
            let from = position - chunkStart
            let to = min(extent.length, range.upperBound - chunkStart)
            guard from < to else {
                throw StoreError.rangeNotCached(key: record.key, missing: position..<range.upperBound)
            }
            do {
                let target = position - range.lowerBound
                try chunks.read(
                    extent.chunk, length: extent.length, part: from..<to,
                    into: UnsafeMutableRawBufferPointer(rebasing: out[target..<target + (to - from)]))
            } catch let fault as ChunkFault {
                throw StoreError.corrupted(key: record.key, reason: fault.description + " (chunk \(index))")
            }
            position = chunkStart + to
        }
        handedOver = true
        return Data(
            bytesNoCopy: out.baseAddress!, count: range.count,
            deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Where the bytes of `record` cached without a hole from `offset` on
    /// end, at most at `limit` and at the entry's known length; `offset`
    /// when there are none. Looks at the extents only for a partial entry
    /// (one row per chunk up to `limit`).
    func cachedEnd(of record: EntryRecord, from offset: Int, upTo limit: Int) throws -> Int {
        let known = record.length ?? (record.isUnchunked ? record.unchunkedLength : nil)
        let end = min(limit, known ?? limit)
        guard offset < end else { return offset }
        if record.isUnchunked || record.isComplete || known == record.cachedBytes { return end }
        let chunkSize = record.chunkSize
        var position = offset
        while position < end {
            let index = position / chunkSize
            guard let extent = try extents.row(entryID: record.entryID, index: index) else { break }
            let stored = index * chunkSize + extent.length
            // A short chunk's bytes end before the next chunk: a hole follows them.
            guard stored > position else { break }
            position = min(end, stored)
        }
        return position
    }

    /// A range of a packed value, after checking the whole value against
    /// the record's content digest (a packed value is at most
    /// ``PackStore/packedMaximum`` bytes).
    private func readPacked(_ record: EntryRecord, _ range: Range<Int>) throws -> Data {
        try packs.withValue(id: record.packID, offset: record.packOffset, length: record.unchunkedLength) { value in
            guard let value else {
                throw StoreError.corrupted(key: record.key, reason: "the pack holding the value is missing or damaged")
            }
            if let digest = record.digest, ContentDigest(of: value) != digest {
                throw StoreError.corrupted(key: record.key, reason: "the packed value fails its checksum")
            }
            return Data(UnsafeRawBufferPointer(rebasing: value[range]))
        }
    }
}

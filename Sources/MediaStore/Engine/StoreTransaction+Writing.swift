import Foundation

extension StoreTransaction {
    /// Stores a whole value (inline or chunked) under `key`, replacing
    /// any entry there, within this transaction.
    func putWhole(_ value: some ContiguousBytes, forKey key: String, options: WriteOptions) throws -> EntryInfo {
        let configuration = configuration
        return try value.withUnsafeBytes { buffer in
            var record = newRecord(key: key, options: options, length: buffer.count)
            record.digest = ContentDigest(of: buffer)
            record.isComplete = true
            record.cachedBytes = buffer.count
            let expiry = options.expiry.resolve(
                now: Date(timeIntervalSince1970: now), defaultLifetime: configuration.defaultLifetime)
            // An encrypted store packs nothing: its small values live
            // inline, sealed with their record.
            if buffer.count <= configuration.inlineLimit && PackStore.packs(length: buffer.count)
                && context.encryption == nil
            {
                return try insert(record, expiry: expiry, packing: buffer).info()
            }
            if buffer.count <= configuration.inlineLimit {
                record.flags.insert(.inline)
                record.inlineBytes = [UInt8](buffer)
            } else {
                var compress = !MediaSniffer.isCompressedMedia(buffer.prefix(16))
                var index = 0
                var offset = 0
                while offset < buffer.count {
                    let end = min(offset + configuration.chunkSize, buffer.count)
                    let chunk = UnsafeRawBufferPointer(rebasing: buffer[offset..<end])
                    try putPiece(chunk, entryID: record.entryID, index: index, compress: &compress)
                    index += 1
                    offset = end
                }
                record.presentChunks = index
            }
            return try insert(record, expiry: expiry).info()
        }
    }

    /// Stores the chunks of `bytes` at `offset` into `record` and saves it.
    ///
    /// `offset` is a chunk boundary, or within the bytes of a chunk already
    /// stored (the write continues it). On an entry of known length the
    /// write may end anywhere within it: a chunk it leaves short holds a
    /// prefix of that chunk's bytes, and a later write continues or
    /// replaces it.
    func fill(_ record: inout EntryRecord, slot: Slot, bytes: UnsafeRawBufferPointer, at offset: Int) throws {
        let key = record.key
        let chunkSize = record.chunkSize
        let end = offset + bytes.count
        let misaligned = StoreError.misalignedWrite(key: key, offset: offset, count: bytes.count, chunkSize: chunkSize)
        guard offset >= 0 else { throw misaligned }
        if offset % chunkSize != 0 {
            // Only a stored chunk reaching `offset` is continued (bytes it
            // holds already are kept), and only in an entry of known length.
            let row = try extents.row(entryID: record.entryID, index: offset / chunkSize)
            guard record.length != nil, let row, row.length >= offset % chunkSize else { throw misaligned }
        }
        if let length = record.length {
            guard end <= length else { throw StoreError.lengthMismatch(key: key, expected: length, actual: end) }
        } else if end % chunkSize != 0 || bytes.isEmpty {
            // A short final piece, or an empty write at the end: the length is now known.
            if let lastIndex = try extents.lengths(entryID: record.entryID).last?.index, lastIndex * chunkSize >= end {
                throw StoreError.lengthMismatch(key: key, expected: (lastIndex + 1) * chunkSize, actual: end)
            }
            record.length = end
        }
        guard !bytes.isEmpty else { return try finishFill(&record, slot: slot) }
        // Skip zstd for media that announces itself as compressed, and for
        // the rest of an entry once a chunk of it did not compress.
        var compress =
            !MediaSniffer.isCompressedMedia(offset == 0 ? Array(bytes.prefix(16)) : [])
            && !record.flags.contains(.compressedMedia)
        var position = 0
        while position < bytes.count {
            let index = (offset + position) / chunkSize
            let within = (offset + position) % chunkSize
            let stop = min(position + chunkSize - within, bytes.count)
            let piece = UnsafeRawBufferPointer(rebasing: bytes[position..<stop])
            try fillChunk(&record, index: index, at: within, with: piece, compress: &compress)
            position = stop
        }
        if !compress { record.flags.insert(.compressedMedia) }
        try finishFill(&record, slot: slot)
    }

    /// Stores `piece` at `within` of chunk `index`: a new chunk, or a
    /// longer one in place of a short chunk (its first `within` verified
    /// bytes, then `piece`). A chunk already as long is kept.
    private func fillChunk(
        _ record: inout EntryRecord, index: Int, at within: Int, with piece: UnsafeRawBufferPointer,
        compress: inout Bool
    ) throws {
        let existing = try extents.row(entryID: record.entryID, index: index)
        let have = existing?.length ?? 0
        let newLength = within + piece.count
        guard newLength > have else { return }
        if let existing {
            if within > 0 {
                var joined = [UInt8]()
                joined.reserveCapacity(newLength)
                do {
                    try chunks.withVerified(existing.chunk) { joined.append(contentsOf: $0.prefix(within)) }
                } catch let fault as ChunkFault {
                    throw StoreError.corrupted(key: record.key, reason: fault.description + " (chunk \(index))")
                }
                joined.append(contentsOf: piece)
                try joined.withUnsafeBytes {
                    try putPiece($0, entryID: record.entryID, index: index, compress: &compress)
                }
            } else {
                try putPiece(piece, entryID: record.entryID, index: index, compress: &compress)
            }
            try chunks.release(existing.chunk)
            record.presentChunks -= 1
            record.cachedBytes -= have
        } else {
            try putPiece(piece, entryID: record.entryID, index: index, compress: &compress)
        }
        record.presentChunks += 1
        record.cachedBytes += newLength
        updateCounters { $0.logicalBytes += newLength - have }
    }

    /// Completes the entry when no hole is left, touches and saves it.
    private func finishFill(_ record: inout EntryRecord, slot: Slot) throws {
        // Every chunk holds a prefix of its bytes, so all are there, whole,
        // exactly when their lengths add up to the entry's.
        if !record.isComplete, let total = record.totalChunks, record.presentChunks == total,
            record.cachedBytes == record.length
        {
            let hasher = StreamingHasher()
            for index in 0..<total {
                guard let extent = try extents.row(entryID: record.entryID, index: index) else { return }
                do {
                    try chunks.withVerified(extent.chunk) { hasher.update($0) }
                } catch let fault as ChunkFault {
                    throw StoreError.corrupted(key: record.key, reason: fault.description)
                }
            }
            record.digest = hasher.finalize()
            record.isComplete = true
            updateCounters { $0.completeCount += 1 }
        }
        try index.touch(&record, slot: slot, at: now)
        try index.save(record, at: slot)
    }

    /// Sets the length of an entry whose length was unknown.
    func setLength(_ length: Int, forKey key: String) throws -> EntryRecord {
        guard let (slot, found) = try index.find(key) else { throw StoreError.notFound(key: key) }
        var record = found
        record.length = length
        try finishFill(&record, slot: slot)
        return record
    }

    /// Whether `prepareEntry` may keep `record` for content of `length`
    /// and `metadata`'s validators: the same content, as far as known.
    func canReuse(_ record: EntryRecord, length: Int?, metadata: EntryMetadata) throws -> Bool {
        guard !record.isUnchunked, !record.isExpired(at: now) else { return false }
        if let etag = metadata.etag, record.metadata.etag != etag { return false }
        if let lastModified = metadata.lastModified, record.metadata.lastModified != lastModified { return false }
        guard let length, record.length != length else { return true }
        guard record.length == nil, record.cachedBytes <= length else { return false }
        // Chunks of an entry of unknown length are whole (a short one fixes
        // the length), so each must end within the new length.
        guard let last = try extents.lengths(entryID: record.entryID).last else { return true }
        return (last.index + 1) * record.chunkSize <= length
    }
}

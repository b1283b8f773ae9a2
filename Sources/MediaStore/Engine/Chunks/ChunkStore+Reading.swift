import Foundation

extension ChunkStore {
    /// Reads and verifies a chunk: its header, its decompression and its
    /// digest (the slot's first 16 bytes) must all agree.
    ///
    /// - parameter trusting: whether a chunk this store instance already
    ///   verified where it sits may skip hashing (``VerifiedChunks``);
    ///   `verify()` passes `false`.
    func read(_ slot: Slot, trusting: Bool = true) throws -> [UInt8] {
        try withVerified(slot, trusting: trusting) { [UInt8]($0) }
    }

    /// Calls `body` with a chunk's verified raw bytes, without copying
    /// them when the chunk is stored raw (the buffer is then the map
    /// itself, valid only inside `body`). In a read transaction, a chunk
    /// this store instance verified before at the same address and length
    /// is not hashed again unless `trusting` is `false` (see ``VerifiedChunks``).
    ///
    /// `trusting: false` (``MediaStore/verify()``) also checks a format-3
    /// chunk's block digest table against its bytes, so a damaged table is
    /// reported even though the chunk's own digest still matches.
    ///
    /// - throws: ``ChunkFault`` when the chunk is missing or bad, or what
    ///   `body` threw.
    func withVerified<R>(_ slot: Slot, trusting: Bool = true, _ body: (UnsafeRawBufferPointer) throws -> R) throws
        -> R
    {
        try txn.withValue(db.chunks, key: slot) { buffer in
            guard let buffer else { throw ChunkFault.missing }
            let digest = slot.digest
            guard let value = ChunkValue(buffer) else { throw ChunkFault.header }
            if let encryption {
                return try Self.openSealed(value, slot: slot, encryption).withUnsafeBytes(body)
            }
            guard value.header.codec != .sealed else { throw ChunkFault.header }
            // Only a read transaction's buffers are the map (a write
            // transaction's own pages are copies until it commits).
            let memory = txn.isReadOnly ? verified : nil
            let trusted = trusting && memory?.contains(slot: slot, digest: digest, payload: buffer) == true
            if value.header.codec == .raw {
                if !trusted {
                    guard ContentDigest(of: value.payload) == digest else { throw ChunkFault.checksum }
                    if !trusting, let blocks = value.blocks,
                        blocks.verify(value.payload, blocks: 0..<blocks.count) == nil
                    {
                        throw ChunkFault.blockTable
                    }
                    memory?.insert(slot: slot, digest: digest, payload: buffer)
                }
                return try body(value.payload)
            }
            let raw = try Self.decode(value, expected: trusted ? nil : digest)
            if !trusted { memory?.insert(slot: slot, digest: digest, payload: buffer) }
            return try raw.withUnsafeBytes(body)
        }
    }

    /// Calls `body` with the bytes `part` of a chunk of `length` raw bytes,
    /// verified, in one or more consecutive pieces, each with its offset
    /// in `part`. When `part` is not the whole chunk, a raw chunk with a
    /// ``BlockDigests`` table hashes only the blocks `part` touches that
    /// this store instance has not verified where they are
    /// (``VerifiedChunks``), and hands each block's piece to `body` right
    /// after hashing it, while its bytes are in the CPU's cache. Any other
    /// read is verified against the whole chunk's digest, as
    /// ``withVerified(_:trusting:_:)`` does, and handed over in one piece.
    ///
    /// - throws: ``ChunkFault`` when the chunk is missing or bad (also when
    ///   its raw length is not `length`), or what `body` threw.
    func withVerified(
        _ slot: Slot, length: Int, part: Range<Int>,
        _ body: (_ piece: UnsafeRawBufferPointer, _ offset: Int) throws -> Void
    ) throws {
        precondition(!part.isEmpty && part.upperBound <= length)
        try txn.withValue(db.chunks, key: slot) { buffer in
            guard let buffer else { throw ChunkFault.missing }
            let digest = slot.digest
            guard let value = ChunkValue(buffer) else { throw ChunkFault.header }
            guard value.header.rawLength == length else { throw ChunkFault.length }
            if let encryption { return try Self.openSealed(value, slot: slot, encryption, part: part, body) }
            guard value.header.codec != .sealed else { throw ChunkFault.header }
            let memory = txn.isReadOnly ? verified : nil
            let known = memory?.verifiedBlocks(slot: slot, digest: digest, payload: buffer) ?? 0
            if known == .max {
                if value.header.codec == .raw {
                    return try body(UnsafeRawBufferPointer(rebasing: value.payload[part]), 0)
                }
                let raw = try Self.decode(value, expected: nil)
                return try raw.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[part]), 0) }
            }
            if let blocks = value.blocks, part.count < length {
                var checked: UInt64 = 0
                defer {
                    if checked != 0 {
                        memory?.insert(slot: slot, digest: digest, payload: buffer, blocks: checked, of: blocks.all)
                    }
                }
                for block in blocks.blocks(covering: part) {
                    let bit: UInt64 = 1 << UInt64(block)
                    if known & bit == 0 {
                        guard blocks.verify(value.payload, blocks: block..<(block + 1)) != nil else {
                            throw ChunkFault.checksum
                        }
                        checked |= bit
                    }
                    let from = max(part.lowerBound, block << blocks.shift)
                    let to = min(part.upperBound, (block + 1) << blocks.shift)
                    try body(UnsafeRawBufferPointer(rebasing: value.payload[from..<to]), from - part.lowerBound)
                }
                return
            }
            if value.header.codec == .raw {
                guard ContentDigest(of: value.payload) == digest else { throw ChunkFault.checksum }
                memory?.insert(slot: slot, digest: digest, payload: buffer)
                return try body(UnsafeRawBufferPointer(rebasing: value.payload[part]), 0)
            }
            let raw = try Self.decode(value, expected: digest)
            memory?.insert(slot: slot, digest: digest, payload: buffer)
            try raw.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[part]), 0) }
        }
    }

    /// Every block of a chunk of an encrypted store, authenticated and
    /// opened (a chunk that is not sealed is refused: an encrypted store
    /// holds no other).
    static func openSealed(_ value: ChunkValue, slot: Slot, _ encryption: StoreEncryption) throws(ChunkFault)
        -> [UInt8]
    {
        guard value.header.codec == .sealed, slot.ordinal == 0 else { throw .header }
        // During a rekey a chunk not yet moved is sealed under the replaced key.
        let opened = encryption.firstOpening { try? $0.chunkSealer(for: slot.digest).open(value.payload) }
        guard let opened else { throw .checksum }
        return opened.value
    }

    /// The plaintext of the sealed chunk at `slot` and whether it is sealed
    /// under the store's current keys (`false`: under the keys a rekey
    /// under way replaces).
    func openGeneration(_ slot: Slot) throws -> (bytes: [UInt8], isCurrent: Bool) {
        guard let encryption else { throw ChunkFault.header }
        return try txn.withValue(db.chunks, key: slot) { buffer in
            guard let buffer else { throw ChunkFault.missing }
            guard let value = ChunkValue(buffer), value.header.codec == .sealed, slot.ordinal == 0 else {
                throw ChunkFault.header
            }
            let opened = encryption.firstOpening { try? $0.chunkSealer(for: slot.digest).open(value.payload) }
            guard let opened else { throw ChunkFault.checksum }
            return (opened.value, opened.isCurrent)
        }
    }

    /// Calls `body` with the bytes `part` of a sealed chunk, block by
    /// block, each authenticated and opened right before it is handed
    /// over; only the blocks `part` touches are opened.
    static func openSealed(
        _ value: ChunkValue, slot: Slot, _ encryption: StoreEncryption, part: Range<Int>,
        _ body: (_ piece: UnsafeRawBufferPointer, _ offset: Int) throws -> Void
    ) throws {
        guard value.header.codec == .sealed, slot.ordinal == 0 else { throw ChunkFault.header }
        let length = value.header.rawLength
        let block = UnsafeMutableRawBufferPointer.allocate(byteCount: ChunkSealer.blockSize, alignment: 16)
        defer { block.deallocate() }
        // During a rekey a chunk not yet moved is sealed under the replaced
        // key: its first block fails under the new one before anything is
        // handed over, and the next generation is tried.
        var delivered = false
        do {
            try openSealed(
                value, sealer: encryption.chunkSealer(for: slot.digest), length: length, part: part, block: block
            ) { piece, offset in
                delivered = true
                try body(piece, offset)
            }
        } catch is SealedDataError {
            guard !delivered, let replaced = encryption.replaced else { throw ChunkFault.checksum }
            do {
                try openSealed(
                    value, sealer: replaced.chunkSealer(for: slot.digest), length: length, part: part, block: block,
                    body)
            } catch is SealedDataError {
                throw ChunkFault.checksum
            }
        }
    }

    private static func openSealed(
        _ value: ChunkValue, sealer: ChunkSealer, length: Int, part: Range<Int>,
        block: UnsafeMutableRawBufferPointer,
        _ body: (_ piece: UnsafeRawBufferPointer, _ offset: Int) throws -> Void
    ) throws {
        try sealer.openEach(value.payload, blocks: ChunkSealer.blocks(covering: part)) { range in
            UnsafeMutableRawBufferPointer(rebasing: block[0..<range.count])
        } opened: { index, plaintext in
            let range = ChunkSealer.plaintextRange(of: index..<index + 1, plaintextCount: length)
            let from = max(part.lowerBound, range.lowerBound)
            let to = min(part.upperBound, range.upperBound)
            try body(
                UnsafeRawBufferPointer(rebasing: plaintext[(from - range.lowerBound)..<(to - range.lowerBound)]),
                from - part.lowerBound)
        }
    }

    /// Whether the stored chunk value decodes to exactly `bytes` (raw
    /// chunks are compared in place, without a copy).
    static func value(_ stored: UnsafeRawBufferPointer, holds bytes: UnsafeRawBufferPointer) -> Bool {
        guard let value = ChunkValue(stored), value.header.rawLength == bytes.count else { return false }
        if bytes.isEmpty { return true }
        if value.header.codec == .raw {
            return memcmp(value.payload.baseAddress!, bytes.baseAddress!, bytes.count) == 0
        }
        guard let raw = try? decode(value, expected: nil) else { return false }
        return raw.withUnsafeBytes { memcmp($0.baseAddress!, bytes.baseAddress!, bytes.count) == 0 }
    }

    /// Decodes a stored chunk value into its raw bytes, checking `expected`
    /// and the value's block digest table, when it has one.
    package static func decode(_ stored: UnsafeRawBufferPointer, expected: ContentDigest?) throws(ChunkFault) -> [UInt8]
    {
        guard let value = ChunkValue(stored) else { throw .header }
        if let blocks = value.blocks, blocks.verify(value.payload, blocks: 0..<blocks.count) == nil {
            throw .blockTable
        }
        return try decode(value, expected: expected)
    }

    static func decode(_ value: ChunkValue, expected: ContentDigest?) throws(ChunkFault) -> [UInt8] {
        let header = value.header
        var raw: [UInt8]
        switch header.codec {
        case .raw:
            raw = [UInt8](value.payload)
        case .zstd:
            guard header.rawLength <= 1 << 30 else { throw .header }
            raw = [UInt8](repeating: 0, count: header.rawLength)
            let ok = raw.withUnsafeMutableBytes {
                ZstdCodec.decompress(value.payload, into: $0, expectedCount: header.rawLength)
            }
            guard ok else { throw .decompression }
        case .sealed:
            // Opened only with the store's keys (``openSealed(_:slot:_:)``).
            throw .header
        }
        if let expected, ContentDigest(of: raw) != expected { throw .checksum }
        return raw
    }
}

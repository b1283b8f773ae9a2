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

    /// Copies the bytes `part` of a chunk of `length` raw bytes, verified,
    /// into `output` (`part.count` bytes). When `part` is not the whole
    /// chunk, a raw chunk with a ``BlockDigests`` table hashes only the
    /// blocks `part` touches that this store instance has not verified
    /// where they are (``VerifiedChunks``), and copies each block's piece
    /// right after hashing it, while its bytes are in the CPU's cache. Any
    /// other read of a plain store is verified against the whole chunk's
    /// digest, as ``withVerified(_:trusting:_:)`` does. In an encrypted
    /// store the blocks `part` touches are authenticated and opened
    /// straight into `output` (``ChunkSealer/open(_:range:into:)``).
    ///
    /// - throws: ``ChunkFault`` when the chunk is missing or bad (also when
    ///   its raw length is not `length`); then `output` holds nothing usable.
    func read(_ slot: Slot, length: Int, part: Range<Int>, into output: UnsafeMutableRawBufferPointer) throws {
        precondition(!part.isEmpty && part.upperBound <= length && output.count == part.count)
        func copy(_ piece: UnsafeRawBufferPointer, at offset: Int) {
            UnsafeMutableRawBufferPointer(rebasing: output[offset..<offset + piece.count]).copyMemory(from: piece)
        }
        try txn.withValue(db.chunks, key: slot) { buffer in
            guard let buffer else { throw ChunkFault.missing }
            let digest = slot.digest
            guard let value = ChunkValue(buffer) else { throw ChunkFault.header }
            guard value.header.rawLength == length else { throw ChunkFault.length }
            if let encryption { return try Self.openSealed(value, slot: slot, encryption, part: part, into: output) }
            guard value.header.codec != .sealed else { throw ChunkFault.header }
            let memory = txn.isReadOnly ? verified : nil
            let known = memory?.verifiedBlocks(slot: slot, digest: digest, payload: buffer) ?? 0
            if known == .max {
                if value.header.codec == .raw {
                    return copy(UnsafeRawBufferPointer(rebasing: value.payload[part]), at: 0)
                }
                let raw = try Self.decode(value, expected: nil)
                return raw.withUnsafeBytes { copy(UnsafeRawBufferPointer(rebasing: $0[part]), at: 0) }
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
                    copy(UnsafeRawBufferPointer(rebasing: value.payload[from..<to]), at: from - part.lowerBound)
                }
                return
            }
            if value.header.codec == .raw {
                guard ContentDigest(of: value.payload) == digest else { throw ChunkFault.checksum }
                memory?.insert(slot: slot, digest: digest, payload: buffer)
                return copy(UnsafeRawBufferPointer(rebasing: value.payload[part]), at: 0)
            }
            let raw = try Self.decode(value, expected: digest)
            memory?.insert(slot: slot, digest: digest, payload: buffer)
            raw.withUnsafeBytes { copy(UnsafeRawBufferPointer(rebasing: $0[part]), at: 0) }
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

    /// Opens the bytes `part` of a sealed chunk straight into `output`:
    /// only the blocks `part` touches are authenticated and opened.
    static func openSealed(
        _ value: ChunkValue, slot: Slot, _ encryption: StoreEncryption, part: Range<Int>,
        into output: UnsafeMutableRawBufferPointer
    ) throws(ChunkFault) {
        guard value.header.codec == .sealed, slot.ordinal == 0 else { throw .header }
        // During a rekey a chunk not yet moved is sealed under the replaced
        // key: it fails under the new one (nothing is handed over before
        // every block is open), and the next generation is tried.
        let opened = encryption.firstOpening { keys -> Bool? in
            do {
                try keys.chunkSealer(for: slot.digest).open(value.payload, range: part, into: output)
                return true
            } catch {
                return nil
            }
        }
        guard opened != nil else { throw .checksum }
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

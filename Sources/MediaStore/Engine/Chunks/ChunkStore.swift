import Foundation
import MediaSupport

/// The content-addressed chunks of one transaction: chunk values in
/// `chunks` under the ``Slot`` of their content's digest, shared between
/// entries with a reference count in `refs`, zstd-compressed when that
/// pays, and verified against their digest when read (once per store
/// instance and place in the map: ``VerifiedChunks``). Knows nothing
/// of entries.
///
/// In an encrypted store a chunk's slot is its keyed identity
/// (``StoreEncryption/chunkIdentity(of:)``, ordinal 0: a MAC under a
/// secret key is not collided by chance or on purpose, so equal
/// identities are equal bytes and nothing is compared), its bytes are
/// sealed (``ChunkSealer``, ``ChunkHeader/Codec/sealed``, not compressed)
/// and every read authenticates the blocks it returns.
package struct ChunkStore {
    let txn: LMDBTransaction
    let db: StoreDatabases
    let counters: CounterLedger
    let codec: Locked<ZstdCodec>
    /// zstd's level; 0 stores every chunk raw.
    let compressionLevel: Int
    /// The chunks this store instance verified: consulted and filled by
    /// reads in read transactions, told about deleted chunks.
    let verified: VerifiedChunks
    /// The keys of an encrypted store; `nil` for a plain one.
    let encryption: StoreEncryption?

    /// Stores one chunk (or shares an identical stored one) and returns
    /// its slot, holding one new reference.
    ///
    /// - parameter compress: whether to try zstd. Set to `false` when the
    ///   attempt saved too little, so that the caller skips the attempt
    ///   for the rest of an entry whose first chunk did not compress.
    func store(_ bytes: UnsafeRawBufferPointer, compress: inout Bool) throws -> Slot {
        if let encryption { return try storeSealed(bytes, encryption) }
        let digest = ContentDigest(of: bytes)
        let first = Slot(digest, ordinal: 0)
        let cursor = try txn.cursor(db.chunks)
        var candidate = try cursor.seekKey(atLeast: first.bytes)
        var nextOrdinal: UInt16 = 0
        while let current = candidate, first.sharesDigest(with: current) {
            guard let slot = Slot(current) else {
                candidate = try cursor.nextKey()
                continue
            }
            // Share only after the bytes compare equal: XXH3 is not
            // collision-resistant, and one URL must never get another's bytes.
            let same = try txn.withValue(db.chunks, key: slot) { stored in
                stored.map { Self.value($0, holds: bytes) } ?? false
            }
            if same {
                try addReference(slot, delta: 1)
                return slot
            }
            nextOrdinal = slot.ordinal &+ 1
            candidate = try cursor.nextKey()
        }
        let slot = Slot(digest, ordinal: nextOrdinal)
        let attempt = compress && compressionLevel > 0 && bytes.count >= 64
        let compressed =
            attempt ? codec.withLock { $0.compress(bytes, limit: bytes.count - bytes.count / 33) } : nil
        if attempt && compressed == nil { compress = false }
        let header = ChunkValue.header(
            codec: compressed == nil ? .raw : .zstd, rawLength: bytes.count,
            storedLength: compressed?.count ?? bytes.count)
        let total = ChunkValue.size(header)
        try txn.putReserved(db.chunks, key: slot, count: total) { out in
            if let compressed {
                compressed.withUnsafeBytes { ChunkValue.write(header, payload: $0, into: out) }
            } else {
                ChunkValue.write(header, payload: bytes, into: out)
            }
        }
        try txn.put(db.refs, key: slot, value: ChunkReferences(count: 1).encode())
        counters.update {
            $0.chunkCount += 1
            $0.storedBytes += total
            $0.uniqueChunkBytes += bytes.count
        }
        return slot
    }

    /// Stores one chunk of an encrypted store sealed under its keyed
    /// identity (or shares the one stored under it).
    private func storeSealed(_ bytes: UnsafeRawBufferPointer, _ encryption: StoreEncryption) throws -> Slot {
        precondition(bytes.count <= ChunkSealer.maximumPlaintextCount, "chunk too large to seal")
        let identity = encryption.chunkIdentity(of: bytes)
        let slot = Slot(identity, ordinal: 0)
        if try contains(slot) {
            try addReference(slot, delta: 1)
            return slot
        }
        let header = ChunkHeader(
            codec: .sealed, rawLength: bytes.count,
            storedLength: ChunkSealer.sealedCount(plaintextCount: bytes.count))
        let total = ChunkValue.size(header)
        try txn.putReserved(db.chunks, key: slot, count: total) { out in
            header.encode(into: out)
            encryption.chunkSealer(for: identity).seal(
                bytes, into: UnsafeMutableRawBufferPointer(rebasing: out[ChunkHeader.size...]))
        }
        try txn.put(db.refs, key: slot, value: ChunkReferences(count: 1).encode())
        counters.update {
            $0.chunkCount += 1
            $0.storedBytes += total
            $0.uniqueChunkBytes += bytes.count
        }
        return slot
    }

    /// How many extent rows point at the chunk (0 when it is unknown).
    func referenceCount(_ slot: Slot) throws -> Int {
        try txn.withValue(db.refs, key: slot) { ChunkReferences($0).count }
    }

    func addReference(_ slot: Slot, delta: Int) throws {
        let count = try referenceCount(slot) + delta
        try txn.put(db.refs, key: slot, value: ChunkReferences(count: count).encode())
    }

    /// Drops one reference; deletes the chunk when none is left.
    func release(_ slot: Slot) throws {
        let count = try referenceCount(slot)
        if count > 1 {
            try txn.put(db.refs, key: slot, value: ChunkReferences(count: count - 1).encode())
            return
        }
        let size = try txn.withValue(db.chunks, key: slot) { buffer -> (stored: Int, raw: Int)? in
            guard let buffer else { return nil }
            return (buffer.count, ChunkValue(buffer)?.header.rawLength ?? 0)
        }
        try txn.delete(db.refs, key: slot)
        if let size {
            verified.forget(slot: slot)
            try txn.delete(db.chunks, key: slot)
            counters.update {
                $0.chunkCount -= 1
                $0.storedBytes -= size.stored
                $0.uniqueChunkBytes -= size.raw
            }
        }
    }

    /// Whether a chunk is stored at `slot`.
    func contains(_ slot: Slot) throws -> Bool {
        try txn.withValue(db.chunks, key: slot) { $0 != nil }
    }

    /// Calls `body` with every stored chunk's slot (`nil` for a key that
    /// is not one) and the size of its stored value, in slot order.
    func forEachStored(_ body: (_ key: [UInt8], _ storedSize: Int) throws -> Void) throws {
        let cursor = try txn.cursor(db.chunks)
        var item = try cursor.first()
        while let current = item {
            try body(current.key, current.value.count)
            item = try cursor.next()
        }
    }
}

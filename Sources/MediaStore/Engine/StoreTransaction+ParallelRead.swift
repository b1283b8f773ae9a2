import Dispatch
import Foundation
import MediaSupport

extension StoreTransaction {
    /// Reads of at least this many bytes verify and copy their chunks on
    /// more than one core.
    static let parallelReadBytes = 1 << 20

    /// `range` of a chunked entry, its chunks verified (unless this store
    /// instance already verified them, see ``VerifiedChunks``) and copied
    /// by up to ``parallelWorkers`` threads; `nil` when the read is not for
    /// this path (small, in a write transaction, a compressed chunk, one
    /// core), which ``readRange(_:_:)`` then does chunk by chunk. In an
    /// encrypted store the workers authenticate and open the blocks of
    /// each sealed chunk the range touches, straight into the output.
    ///
    /// The chunks are looked up on the calling thread (the transaction's);
    /// the workers only hash and copy bytes of the map, which stay valid
    /// until the read transaction ends, after they are done.
    func readRangeInParallel(_ record: EntryRecord, _ range: Range<Int>) throws -> Data? {
        let workers = Self.parallelWorkers
        guard txn.isReadOnly, workers > 1, range.count >= Self.parallelReadBytes, !record.isUnchunked else {
            return nil
        }
        let chunkSize = record.chunkSize
        let first = range.lowerBound / chunkSize
        let last = (range.upperBound - 1) / chunkSize
        var pieces: [Piece] = []
        pieces.reserveCapacity(last - first + 1)
        for index in first...last {
            let chunkStart = index * chunkSize
            guard let extent = try extents.row(entryID: record.entryID, index: index) else {
                throw StoreError.rangeNotCached(key: record.key, missing: chunkStart..<(chunkStart + chunkSize))
            }
            let piece = try txn.withValue(db.chunks, key: extent.chunk) { buffer -> Piece? in
                guard let buffer else {
                    throw StoreError.corrupted(key: record.key, reason: "a chunk is missing (chunk \(index))")
                }
                let digest = extent.chunk.digest
                guard let value = ChunkValue(buffer) else {
                    throw StoreError.corrupted(key: record.key, reason: "a chunk header is invalid (chunk \(index))")
                }
                let sealed = chunks.encryption != nil
                // Anything else (compressed, or not sealed in an encrypted store) goes chunk by chunk.
                guard value.header.codec == (sealed ? .sealed : .raw) else { return nil }
                guard value.header.rawLength == extent.length else {
                    throw StoreError.corrupted(key: record.key, reason: "chunk \(index) has the wrong length")
                }
                let from = max(range.lowerBound, chunkStart) - chunkStart
                let to = min(range.upperBound - chunkStart, value.header.rawLength)
                // A short chunk before the end of the range leaves a hole after it.
                guard from < to, chunkStart + to == min(range.upperBound, chunkStart + chunkSize) else {
                    throw StoreError.rangeNotCached(
                        key: record.key, missing: (chunkStart + max(from, to))..<range.upperBound)
                }
                return Piece(
                    index: index, slot: extent.chunk, digest: digest, stored: buffer, payload: value.payload,
                    from: from, to: to, target: chunkStart + from - range.lowerBound,
                    trusted: !sealed && chunks.verified.contains(slot: extent.chunk, digest: digest, payload: buffer),
                    length: value.header.rawLength)
            }
            guard let piece else { return nil }  // compressed: the chunk-by-chunk path decodes it
            pieces.append(piece)
        }
        let out = UnsafeMutableRawBufferPointer.allocate(byteCount: range.count, alignment: 16)
        let output = Output(buffer: out)
        let queue = PieceQueue(count: pieces.count)
        let all = pieces
        let encryption = chunks.encryption
        DispatchQueue.concurrentPerform(iterations: min(workers, pieces.count)) { _ in
            // Each thread takes the next piece until none is left, so a
            // thread the system runs late (other processes on the cores)
            // holds up at most the one piece it took.
            while let position = queue.next() {
                let piece = all[position]
                if let encryption {
                    // During a rekey a chunk not yet moved is sealed under the replaced key.
                    let opened = encryption.firstOpening {
                        Self.openSealed(piece, $0, into: output.buffer) ? true : nil
                    }
                    if opened == nil { queue.fail(piece.index) }
                    continue
                }
                if !piece.trusted && ContentDigest(of: piece.payload) != piece.digest {
                    queue.fail(piece.index)
                    continue
                }
                UnsafeMutableRawBufferPointer(rebasing: output.buffer[piece.target...])
                    .copyMemory(from: UnsafeRawBufferPointer(rebasing: piece.payload[piece.from..<piece.to]))
            }
        }
        if let index = queue.failedChunk {
            out.deallocate()
            throw StoreError.corrupted(key: record.key, reason: "a chunk fails its checksum (chunk \(index))")
        }
        for piece in pieces where !piece.trusted && encryption == nil {
            chunks.verified.insert(slot: piece.slot, digest: piece.digest, payload: piece.stored)
        }
        return Data(
            bytesNoCopy: out.baseAddress!, count: range.count,
            deallocator: .custom { pointer, _ in pointer.deallocate() })
    }

    /// Opens the blocks of a sealed chunk that `piece` wants straight into
    /// its part of `output` (``ChunkSealer/open(_:range:into:)``). False
    /// when a block fails authentication.
    static func openSealed(
        _ piece: Piece, _ encryption: StoreEncryption, into output: UnsafeMutableRawBufferPointer
    ) -> Bool {
        let target = UnsafeMutableRawBufferPointer(
            rebasing: output[piece.target..<piece.target + (piece.to - piece.from)])
        do {
            try encryption.chunkSealer(for: piece.digest).open(
                piece.payload, range: piece.from..<piece.to, into: target)
        } catch {
            return false
        }
        return true
    }

    /// Threads a large read uses: the cores, at most 4.
    static let parallelWorkers = min(4, ProcessInfo.processInfo.activeProcessorCount)

    /// The pieces of a parallel read, handed out one at a time to the
    /// threads that copy or open them, in order, and the lowest index of
    /// the chunks found bad; once one is, no piece is handed out.
    final class PieceQueue: Sendable {
        private struct State: Sendable {
            var next = 0
            var failed: Int?
        }
        private let state = Locked(State())
        private let count: Int

        init(count: Int) {
            self.count = count
        }

        /// The position of the next piece to work on; `nil` when every
        /// piece was handed out or a chunk was found bad.
        func next() -> Int? {
            state.withLock { state in
                guard state.failed == nil, state.next < count else { return nil }
                defer { state.next += 1 }
                return state.next
            }
        }

        /// Records that chunk `index` is bad.
        func fail(_ index: Int) {
            state.withLock { $0.failed = min($0.failed ?? index, index) }
        }

        /// The lowest index of a chunk found bad, if any.
        var failedChunk: Int? { state.withLock { $0.failed } }
    }

    /// The output buffer of a parallel read.
    // Unchecked: each worker writes its own, disjoint part of it.
    struct Output: @unchecked Sendable {
        let buffer: UnsafeMutableRawBufferPointer
    }

    /// One stored chunk of a parallel read (raw, or sealed in an encrypted
    /// store): where its bytes are in the map, which of them the read wants
    /// and where they go.
    // Unchecked: the buffers point into the map of a read transaction that
    // outlives every worker; the workers only read them.
    struct Piece: @unchecked Sendable {
        var index: Int
        var slot: Slot
        var digest: ContentDigest
        var stored: UnsafeRawBufferPointer
        var payload: UnsafeRawBufferPointer
        var from: Int
        var to: Int
        var target: Int
        var trusted: Bool
        /// The chunk's plaintext length (for a sealed chunk's blocks).
        var length: Int
    }
}

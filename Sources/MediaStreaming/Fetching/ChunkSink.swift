import Foundation
import MediaStore

/// Where a transfer's bytes go on their way to the store: buffered up to
/// chunk boundaries, then written a whole chunk at a time, through
/// ``StoreIO``; what is left when the transfer ends (the resource's last
/// chunk, a preload's prefix, a transfer its readers left) is written as a
/// short chunk. The first chunk continues a short one when the transfer
/// starts at its end.
///
/// Bound to one version of the entry (`EntryInfo/version`, from the
/// `prepareEntry` or stored entry the transfer started from): its bytes
/// are never written into another version. Once the store refuses a
/// write (`StoreError/entryReplaced(key:expected:found:)` when that
/// version is gone), the sink stops storing and only drops the bytes it
/// has handed on (the transfer keeps feeding its readers).
///
/// Only touched on its transfer's ``ResourceFetcher``'s executor (hence
/// unchecked; its async methods inherit the caller's isolation); a write in
/// flight keeps the buffer intact until it returns.
final class ChunkSink: @unchecked Sendable {
    /// What one flush did.
    struct Report {
        /// The entry after each chunk written, in order.
        var written: [EntryInfo] = []
        /// Why the sink stopped storing during this flush, if it did.
        var refusal: StoreError?
    }

    let key: String
    let chunkSize: Int
    private let storeIO: StoreIO
    /// The entry version written into; `nil` until one is known (nothing is stored meanwhile).
    var version: UInt64?
    /// Whether bytes are still written to the store.
    private(set) var isStoring: Bool
    /// The offset of `buffer`'s first byte (a chunk boundary, or the end of
    /// a short chunk stored): bytes before it were written (or dropped, when
    /// not storing).
    private(set) var bufferStart: Int
    /// Received bytes not yet written as a whole chunk.
    private(set) var buffer = Data()

    init(key: String, start: Int, chunkSize: Int, storeIO: StoreIO, version: UInt64?, isStoring: Bool) {
        self.key = key
        self.bufferStart = start
        self.chunkSize = chunkSize
        self.storeIO = storeIO
        self.version = version
        self.isStoring = isStoring
    }

    /// One past the last byte received.
    var position: Int { bufferStart + buffer.count }

    /// Takes the next received bytes (at ``position``).
    func append(_ bytes: Data) { buffer.append(bytes) }

    /// Forgets the bytes not yet written (a retried request starts again at ``bufferStart``).
    func discardBuffer() { buffer.removeAll() }

    /// Stops writing to the store for good.
    func stopStoring() { isStoring = false }

    /// The buffered bytes from resource offset `offset` on (a reader joining mid-chunk).
    func buffered(from offset: Int) -> Data {
        Data(buffer[(buffer.startIndex + (offset - bufferStart))...])
    }

    /// Writes every whole chunk buffered, and the rest too when `end` (the
    /// end of what the transfer fetches, or ``position`` to keep every
    /// byte received) has been reached: the store keeps that rest as a
    /// short chunk, which a later transfer continues.
    ///
    /// Runs on the caller's executor (the fetcher's), before and after each
    /// write: as a plain `nonisolated async` method it ran on the global
    /// pool, so it trimmed the buffer and moved `bufferStart` on another
    /// thread while the fetcher let a reader join the transfer, and
    /// ``buffered(from:)`` read past the buffer's end (a crash).
    func flush(end: Int, isolation: isolated (any Actor)? = #isolation) async -> Report {
        var report = Report()
        // Up to the next chunk boundary (the first piece continues a short
        // chunk when the transfer started at its end).
        while case let toBoundary = chunkSize - bufferStart % chunkSize,
            buffer.count >= toBoundary || (position >= end && !buffer.isEmpty)
        {
            let size = min(toBoundary, buffer.count)
            let offset = bufferStart
            if isStoring, let version {
                let chunk = Data(buffer.prefix(size))
                do {
                    report.written.append(try await write(chunk, at: offset, version: version))
                } catch {
                    isStoring = false
                    report.refusal = error
                }
            }
            buffer.removeFirst(size)
            bufferStart += size
        }
        return report
    }

    private func write(
        _ chunk: Data, at offset: Int, version: UInt64, isolation: isolated (any Actor)? = #isolation
    ) async throws(StoreError) -> EntryInfo {
        let key = self.key
        return try await storeIO.write { store throws(StoreError) in
            try store.write(chunk, at: offset, forKey: key, version: version)
        }
    }
}

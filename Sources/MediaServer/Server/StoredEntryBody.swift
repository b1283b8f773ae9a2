import Foundation
import MediaStore
import MediaStreaming

/// A body read straight from a complete store entry on the connection's
/// thread, a piece at a time: the path of a request whose bytes are all
/// cached, with no hand-off to the loader's tasks. Bound to one version of
/// the entry (a replaced entry fails the read, never mixes two contents)
/// and leased while it is sent (not evicted meanwhile).
final class StoredEntryBody: BodyStream, @unchecked Sendable {
    private let store: MediaStore
    private let key: String
    private let version: UInt64
    private let range: Range<Int>
    private let piece: Int
    private let lease: EntryLease
    private let served: @Sendable (Int) -> Void
    private let lock = NSLock()
    private var offset: Int
    private var cancelled = false

    /// - parameters:
    ///   - piece: the most bytes one ``next(until:)`` reads.
    ///   - served: told the byte count of each piece read (the loader's statistics).
    init(
        store: MediaStore, key: String, version: UInt64, range: Range<Int>, piece: Int,
        served: @escaping @Sendable (Int) -> Void
    ) {
        self.store = store
        self.key = key
        self.version = version
        self.range = range
        self.piece = max(1, piece)
        self.offset = range.lowerBound
        self.lease = store.lease(forKey: key)
        self.served = served
    }

    func start() {}

    func next(until deadline: Date) -> BodyStep {
        let wanted = lock.withLock { () -> Range<Int>? in
            guard !cancelled, offset < range.upperBound else { return nil }
            return offset..<min(range.upperBound, offset + piece)
        }
        guard let wanted else { return lock.withLock { cancelled } ? .failed(.cancelled) : .end }
        var pieces: [Data] = []
        do {
            try store.forEachSlice(forKey: key, range: wanted, version: version) { slice in
                pieces.append(slice)
                return true
            }
        } catch {
            return .failed(.store(error))
        }
        let count = pieces.reduce(0) { $0 + $1.count }
        guard count == wanted.count else {
            return .failed(.store(.rangeNotCached(key: key, missing: (wanted.lowerBound + count)..<wanted.upperBound)))
        }
        lock.withLock { offset = wanted.upperBound }
        served(count)
        return .data(pieces)
    }

    func cancel() {
        lock.withLock { cancelled = true }
    }
}

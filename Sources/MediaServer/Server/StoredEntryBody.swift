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
    private let reads: StoreReads
    private let lease: EntryLease
    private let served: @Sendable (Int) -> Void
    private let lock = NSLock()
    private var offset: Int
    /// The first bytes of the range, read with the entry's info: the first piece.
    private var head: Data?
    private var cancelled = false

    /// - parameters:
    ///   - piece: the most bytes one ``next(until:)`` reads.
    ///   - head: bytes of version `version` from the start of `range` on,
    ///     already read (at most `range.count` of them are sent).
    ///   - reads: how the pieces after `head` are read.
    ///   - served: told the byte count of each piece read (the loader's statistics).
    init(
        store: MediaStore, key: String, version: UInt64, range: Range<Int>, piece: Int, head: Data? = nil,
        reads: StoreReads = .direct, served: @escaping @Sendable (Int) -> Void
    ) {
        self.store = store
        self.key = key
        self.version = version
        self.range = range
        self.piece = max(1, piece)
        self.reads = reads
        self.offset = range.lowerBound
        self.head = head.flatMap { $0.isEmpty ? nil : $0.prefix(range.count) }
        self.lease = store.lease(forKey: key)
        self.served = served
    }

    func start() {}

    /// What ``next(until:)`` does next.
    private enum Step {
        case stop
        case send(Data)
        case read(Range<Int>)
    }

    func next(until deadline: Date) -> BodyStep {
        let step = lock.withLock { () -> Step in
            guard !cancelled, offset < range.upperBound else { return .stop }
            if let head {
                self.head = nil
                offset += head.count
                return .send(head)
            }
            return .read(offset..<min(range.upperBound, offset + piece))
        }
        let wanted: Range<Int>
        switch step {
        case .stop:
            return lock.withLock { cancelled } ? .failed(.cancelled) : .end
        case .send(let bytes):
            served(bytes.count)
            return .data([bytes])
        case .read(let range):
            wanted = range
        }
        let pieces: [Data]
        do {
            pieces = try reads.piece(store, key, wanted, version)
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

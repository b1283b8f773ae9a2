import Foundation
import MediaDownloads
import MediaStore
import MediaStreaming

/// Where the body of one origin request for an HLS resource goes: a
/// playlist is held in memory (it is parsed whole, and bounded by
/// `PlaylistLimits.maxBytes`); any other resource is streamed into a
/// staging entry of the store (an `EntryWriter`), up to
/// ``storeBatchBytes`` at a time, and published only by
/// ``finish(holder:pinWhile:)``: a refused or cancelled transfer leaves
/// nothing in the store.
///
/// Used by one fetch at a time (hence unchecked); its store calls run one
/// at a time, on the lanes beside the store's write queue
/// (`StoreIO.writeBeside`: they write only this sink's entry), so that the
/// publishes of segments fetched at once share the store's commits. The
/// pieces of the body are kept as they arrive (not copied together) and
/// handed to the writer in one store call once they would pass
/// ``storeBatchBytes``; the last of them go with the publish, so a
/// resource of at most ``storeBatchBytes`` costs one store call and one
/// commit.
final class HLSResourceSink: @unchecked Sendable {
    /// Bytes gathered before they are handed to the store's writer (the
    /// memory a sink holds beyond its writer's, at most this plus one piece).
    static let storeBatchBytes = 1 << 20

    private let storeIO: StoreIO
    private var writer: EntryWriter?
    /// Pieces not handed to the writer yet, and their bytes.
    private var pending: [Data] = []
    private var pendingBytes = 0
    /// The whole body, when held in memory.
    private(set) var bytes = Data()
    /// Body bytes taken so far.
    private(set) var count = 0
    private let inMemory: Bool
    private let key: String

    /// A sink for a resource under `key`: in memory when `inMemory`,
    /// else into a new entry of the store written with `options`.
    init(key: String, inMemory: Bool, options: WriteOptions, storeIO: StoreIO) throws(StoreError) {
        self.storeIO = storeIO
        self.inMemory = inMemory
        self.key = key
        if !inMemory { writer = try storeIO.store.makeWriter(forKey: key, options: options) }
    }

    deinit { writer?.cancel() }

    /// Takes the next bytes of the body.
    func append(_ piece: Data) async throws(StoreError) {
        count += piece.count
        if inMemory {
            bytes.append(piece)
            return
        }
        guard !piece.isEmpty else { return }
        if pendingBytes + piece.count > Self.storeBatchBytes { try await handOn() }
        pending.append(piece)
        pendingBytes += piece.count
    }

    /// Hands the pending pieces to the writer (one store call).
    private func handOn() async throws(StoreError) {
        guard !pending.isEmpty else { return }
        let batch = takePending()
        try await storeIO.writeBeside { [self] _ throws(StoreError) in
            guard let writer else { throw StoreError.writerClosed }
            for piece in batch { try writer.append(piece) }
        }
    }

    private func takePending() -> [Data] {
        defer {
            pending = []
            pendingBytes = 0
        }
        return pending
    }

    /// Publishes the stored entry, held by `holder` when given, in one
    /// store commit, when `live` still says so (checked inside that
    /// commit's transaction, under the store's writer lock: a release
    /// that stopped the run first is not undone); `nil` when held in
    /// memory or not kept (then nothing is published).
    ///
    /// The entry it returns is committed with its hold
    /// (`EntryWriter.finish(with:)`: the last bytes, the entry and the
    /// hold in one synced commit, shared with the store's writes that
    /// arrived meanwhile): a resource reported stored is durable, as far
    /// as the store's commits are (see `EntryWriter.finish()` for what an
    /// operating-system crash may undo).
    func finish(holder: String?, pinWhile live: (@Sendable () -> Bool)?) async throws(StoreError) -> EntryInfo? {
        guard !inMemory else { return nil }
        let last = takePending()
        // Beside the write queue: the publishes of the segments fetched at
        // once share commits (they depend on no other write's order; the
        // run's stop is checked in the commit's transaction).
        return try await storeIO.writeBeside { [self] _ throws(StoreError) -> EntryInfo? in
            guard let writer else { throw StoreError.writerClosed }
            self.writer = nil
            guard live?() ?? true else {
                writer.cancel()
                return nil
            }
            do throws(StoreError) {
                for piece in last { try writer.append(piece) }
            } catch {
                writer.cancel()
                throw error
            }
            guard let holder else { return try writer.finish() }
            let key = key
            return try RunStopped.unlessStopped {
                try writer.finish { batch, info in
                    guard live?() ?? true else { throw RunStopped() }
                    try batch.hold(key, by: holder, version: info.version)
                }
            }
        }
    }

    /// Drops what was written (nothing is published).
    func cancel() async {
        pending = []
        pendingBytes = 0
        bytes = Data()
        guard writer != nil else { return }
        await storeIO.writeQuietly { [self] _ in
            writer?.cancel()
            writer = nil
        }
    }
}

/// Thrown inside a store transaction whose download run stopped: nothing
/// of that transaction is committed.
struct RunStopped: Error {
    /// Runs a store commit whose transaction `body` may stop with
    /// ``RunStopped`` (through `EntryWriter.finish(with:)` or
    /// `MediaStore.performBatch(_:)`, which throw their body's error
    /// unchanged): its value, or `nil` when the run stopped and nothing
    /// was committed.
    @discardableResult
    static func unlessStopped<T>(_ body: () throws -> T) throws(StoreError) -> T? {
        do {
            return try body()
        } catch let error as StoreError {
            throw error
        } catch {
            // The bodies throw nothing else: the run stopped, nothing was committed.
            return nil
        }
    }
}

extension StoreIO {
    /// Runs a store call that cannot fail on the write queue.
    func writeQuietly(_ body: @escaping @Sendable (MediaStore) -> Void) async {
        _ = try? await write { store throws(StoreError) in body(store) }
    }
}

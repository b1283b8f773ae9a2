import Dispatch
import Foundation
import Testing

@testable import MediaStore
@testable import MediaStreaming

/// Store calls leave the concurrency pool; sinks fill exactly their entry version.
@Suite("Store I/O and chunk sinks")
struct StoreIOTests {
    static let chunkSize = 16 * 1024

    /// A fresh store in a temporary directory, removed afterwards.
    private func withStore<T>(_ body: (MediaStore) async throws -> T) async throws -> T {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("storeio-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 16 << 20)
        )
        return try await body(store)
    }

    private static func currentRole() -> String? {
        DispatchQueue.getSpecific(key: StoreIO.queueRole)
    }

    private static func bytes(_ count: Int, seed: UInt8) -> Data {
        Data((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31) &+ seed })
    }

    @Test("Reads and writes run on StoreIO's own queues, and store errors keep their type")
    func queuesAndErrors() async throws {
        try await withStore { store in
            let io = StoreIO(store: store)
            #expect(Self.currentRole() == nil)
            let readRole = try await io.read { _ in Self.currentRole() }
            let writeRole = try await io.write { _ in Self.currentRole() }
            #expect(readRole == "reads")
            #expect(writeRole == "writes")
            do throws(StoreError) {
                _ = try await io.read { store throws(StoreError) in try store.read(forKey: "missing", range: 0..<1) }
                Issue.record("a read of a missing key succeeded")
            } catch {
                #expect(error == .notFound(key: "missing"))
            }
        }
    }

    @Test("A sink writes whole chunks, then the short last one, into its version")
    func sinkFillsItsVersion() async throws {
        try await withStore { store in
            let content = Self.bytes(40_000, seed: 1)
            let prepared = try store.prepareEntry(forKey: "k", length: content.count)
            let sink = ChunkSink(
                key: "k", start: 0, chunkSize: Self.chunkSize, storeIO: StoreIO(store: store),
                version: prepared.version,
                isStoring: true)
            sink.append(content.prefix(20_000))
            let first = await sink.flush(end: content.count)
            #expect(first.written.count == 1 && first.refusal == nil)
            #expect(sink.bufferStart == Self.chunkSize)
            #expect(sink.buffered(from: 18_000) == content[18_000..<20_000])
            sink.append(content.suffix(from: 20_000))
            let rest = await sink.flush(end: content.count)
            #expect(rest.written.count == 2)
            #expect(rest.written.last?.isComplete == true)
            #expect(try store.read(forKey: "k", range: 0..<content.count) == content)
        }
    }

    @Test("A sink whose entry was replaced stops storing: nothing lands in the new version")
    func sinkStopsOnReplacement() async throws {
        try await withStore { store in
            let old = Self.bytes(40_000, seed: 1)
            let prepared = try store.prepareEntry(forKey: "k", length: old.count)
            let sink = ChunkSink(
                key: "k", start: 0, chunkSize: Self.chunkSize, storeIO: StoreIO(store: store),
                version: prepared.version,
                isStoring: true)
            let replacement = try store.prepareEntry(forKey: "k", length: 41_000)
            #expect(replacement.version != prepared.version)
            sink.append(old.prefix(2 * Self.chunkSize))
            let report = await sink.flush(end: old.count)
            guard case .entryReplaced = report.refusal else {
                Issue.record("expected entryReplaced, got \(String(describing: report.refusal))")
                return
            }
            #expect(report.written.isEmpty)
            #expect(!sink.isStoring)
            // Later chunks are dropped without a write.
            sink.append(old.suffix(from: 2 * Self.chunkSize))
            let after = await sink.flush(end: old.count)
            #expect(after.written.isEmpty && after.refusal == nil)
            #expect(sink.position == old.count && sink.buffer.isEmpty)
            #expect(try store.cachedRanges(forKey: "k").isEmpty)
            #expect(try store.info(forKey: "k")?.version == replacement.version)
        }
    }

    /// The actor that owns a sink in ``flushRunsOnTheCallersExecutor()``.
    private actor Owner {
        let sink: ChunkSink
        init(sink: ChunkSink) { self.sink = sink }

        /// A flush called from this actor, as the fetcher calls it.
        func flush(end: Int) async -> ChunkSink.Report { await sink.flush(end: end) }

        /// Blocks the calling thread (and so the actor running on it).
        private static func block(seconds: Double) { Thread.sleep(forTimeInterval: seconds) }

        /// Starts a flush whose write waits for the store's writer lock
        /// (held by the test until `release` runs), then holds this actor
        /// for 300 ms after releasing the lock: the sink's state seen at
        /// the start and at the end of that hold.
        func flushWhileHeld(release: @Sendable () -> Void, end: Int) async throws
            -> (before: (Int, Int), after: (Int, Int), report: ChunkSink.Report)
        {
            let sink = self.sink
            let flushing = Task { await self.flush(end: end) }
            // The actor is free meanwhile: the flush starts and its write waits for the lock.
            try await Task.sleep(for: .milliseconds(200))
            let before = (sink.bufferStart, sink.buffer.count)
            release()
            Self.block(seconds: 0.3)  // the write ends meanwhile; this actor stays busy
            let after = (sink.bufferStart, sink.buffer.count)
            return (before, after, await flushing.value)
        }
    }

    /// A sink's state changes only on its owner's executor: a flush called
    /// from the fetcher trims its buffer there after each write. As a plain
    /// `nonisolated async` method it trimmed on the global pool while the
    /// fetcher let a reader join, and `buffered(from:)` read past the
    /// buffer's end (queue-app crashed 2 runs in 20).
    @Test("A flush changes the sink only on its caller's executor")
    func flushRunsOnTheCallersExecutor() async throws {
        try await withStore { store in
            let content = Self.bytes(2 * Self.chunkSize, seed: 3)
            let prepared = try store.prepareEntry(forKey: "k", length: content.count)
            let sink = ChunkSink(
                key: "k", start: 0, chunkSize: Self.chunkSize, storeIO: StoreIO(store: store),
                version: prepared.version, isStoring: true)
            sink.append(content)
            let entered = DispatchSemaphore(value: 0)
            let gate = DispatchSemaphore(value: 0)
            let holder = Thread {
                try? store.performBatch { _ in
                    entered.signal()
                    gate.wait()
                }
            }
            holder.start()
            #expect(entered.wait(timeout: .now() + 10) == .success, "the writer lock was never taken")
            let result = try await Owner(sink: sink).flushWhileHeld(release: { gate.signal() }, end: content.count)
            #expect(result.before == (0, content.count), "the flush ran before the writer lock was released")
            #expect(result.after == result.before, "the sink changed while its owner was busy")
            #expect(result.report.written.count == 2 && sink.bufferStart == content.count)
            #expect(try store.read(forKey: "k", range: 0..<content.count) == content)
        }
    }

    @Test("Writes beside the write queue that overlap share one store commit, each returning after it")
    func writesBesideShareCommits() async throws {
        try await withStore { store in
            let io = StoreIO(store: store)
            // The writer held inside a batch, on a thread of its own, until released.
            let inside = DispatchSemaphore(value: 0)
            let release = DispatchSemaphore(value: 0)
            Thread {
                try? store.performBatch { batch in
                    try batch.put(Data("holder".utf8), forKey: "holder")
                    inside.signal()
                    release.wait()
                }
            }.start()
            await Task.detached { inside.wait() }.value
            let before = store.environment.lastTransactionID
            let count = StoreIO.laneCount
            let results = Task {
                try await withThrowingTaskGroup(of: (Int, String?, Data?).self) { group in
                    for index in 0..<count {
                        group.addTask {
                            try await io.writeBeside { store throws(StoreError) in
                                try store.put(Self.bytes(3_000 + index, seed: UInt8(index)), forKey: "k\(index)")
                                // Returned: its commit has ended, so a reader sees it.
                                return (index, Self.currentRole(), try store.data(forKey: "k\(index)"))
                            }
                        }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // Every lane's put waits behind the held writer, in one group.
            let deadline = ContinuousClock.now + .seconds(30)
            while store.writeGroups.waiting < count && ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(2))
            }
            #expect(store.writeGroups.waiting == count)
            release.signal()
            let written = try await results.value
            #expect(written.count == count)
            for (index, role, data) in written {
                #expect(role == "writes")
                #expect(data == Self.bytes(3_000 + index, seed: UInt8(index)))
            }
            // The held batch's commit, then one commit for all the puts.
            #expect(store.environment.lastTransactionID - before == 2)
        }
    }
}

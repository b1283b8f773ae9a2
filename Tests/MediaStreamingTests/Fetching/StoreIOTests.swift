import Dispatch
import Foundation
import MediaStore
import Testing

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
}

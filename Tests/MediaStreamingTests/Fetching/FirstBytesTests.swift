import Foundation
import Testing

@testable import MediaStore
@testable import MediaStreaming

/// When a player's first bytes reach it: as soon as the origin sent them,
/// whatever else the first response sets in motion.
@Suite("First bytes")
struct FirstBytesTests {
    static let chunkSize = 16 * 1024

    private func makeStore() throws -> (MediaStore, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "first-bytes-\(UUID().uuidString)")
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: Self.chunkSize, initialMapSize: 16 << 20)
        )
        return (store, directory)
    }

    @Test("An origin that sends a first piece and holds: the reader has that piece before the hold ends")
    func firstPieceBeforeTheRest() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 777, seed: 27)
        // 8 KiB pieces: the first is half a chunk, and a fraction of the request.
        let origin = FakeOrigin(serving: content, holdFirstBody: true)
        let cache = StreamingCache(
            store: store, origin: origin, configuration: StreamingConfiguration(chunksPerRequest: 4))
        let loader = cache.loader(for: URL(string: "https://origin.example/first-piece.bin")!)
        let play = PlayerSimulator(loader: loader).start(contentInformation: true, offset: 0, length: nil)
        await eventually("the first piece reached the reader while the origin held the rest") {
            play.received >= 8192
        }
        #expect(play.state.withLock { $0.outcome.data } == content.prefix(8192))
        #expect(play.state.withLock { $0.outcome.finished } == false)
        origin.releaseFirstBody()
        let outcome = await play.outcome()
        #expect(outcome.error == nil)
        #expect(outcome.data == content)
    }

    @Test(
        "A store slow to prepare the first response's entry: the first bytes reach the reader before it is ready, and are stored after"
    )
    func firstBytesBeforeTheEntryIsPrepared() async throws {
        let (store, directory) = try makeStore()
        defer { try? FileManager.default.removeItem(at: directory) }
        let content = FakeOrigin.content(count: 5 * Self.chunkSize + 1234, seed: 41)
        let gate = AsyncGate()
        let configuration = StreamingConfiguration(chunksPerRequest: 4)
        configuration.fetcherHooks.entryPreparation.withLock { $0 = { await gate.pass() } }
        let origin = FakeOrigin(serving: content)
        let cache = StreamingCache(store: store, origin: origin, configuration: configuration)
        let url = URL(string: "https://origin.example/first-play.bin")!
        let loader = cache.loader(for: url)
        let player = PlayerSimulator(loader: loader)
        // The first chunk (two pieces): all of it arrives before the entry exists.
        let wanted = Self.chunkSize
        let first = player.start(contentInformation: true, offset: 0, length: wanted)
        await gate.arrived()
        await eventually("the first bytes reached the reader while the entry was being prepared") {
            first.received >= wanted
        }
        #expect(try store.info(forKey: loader.cacheKey) == nil)
        gate.open()
        let opening = await first.outcome()
        #expect(opening.error == nil)
        #expect(opening.information?.contentLength == content.count)
        #expect(opening.data == content.prefix(wanted))
        // What arrived before the entry existed was stored once it did:
        // the whole resource comes from the origin exactly once.
        let whole = await player.load(offset: 0, length: nil)
        #expect(whole.data == content)
        await eventually("the entry is complete") {
            (try? store.info(forKey: loader.cacheKey))??.isComplete == true
        }
        #expect(try store.read(forKey: loader.cacheKey, range: 0..<content.count) == content)
        #expect(origin.bodyBytes(for: url) == content.count)
    }
}

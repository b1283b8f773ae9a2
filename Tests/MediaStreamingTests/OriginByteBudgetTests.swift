import Foundation
import MediaStore
import Testing

@testable import MediaStreaming

/// What a preload and a player that jumps around cost at the origin, with
/// the default chunk size (261,988 bytes), counted by an in-memory
/// ``FakeOrigin``: no byte fetched that the store does not keep.
@Suite("Origin byte budget", .timeLimit(.minutes(1)))
struct OriginByteBudgetTests {
    /// A store with the default chunk size and a cache over it, fed by `origin`.
    private static func makeCache(
        _ origin: FakeOrigin, configuration: StreamingConfiguration = StreamingConfiguration()
    )
        throws -> (StreamingCache, MediaStore, URL)
    {
        let directory = temporaryPath("origin-budget")
        let store = try MediaStore(directory: directory, configuration: StoreConfiguration(initialMapSize: 64 << 20))
        return (StreamingCache(store: store, origin: origin, configuration: configuration), store, directory)
    }

    @Test("A preload of 10 s fetches at most 1.2× the bytes the prefix needs, and stores them")
    func preloadFetchesThePrefixNotItsChunks() async throws {
        var needed = 0
        var fetched = 0
        var perTrack: [String] = []
        for name in ["cbr.mp3", "vbr.mp3", "track.m4a", "tail-moov.m4a", "track.flac"] {
            let data = try Fixtures.data("Preload/\(name)")
            let origin = FakeOrigin(serving: data)
            let (cache, store, directory) = try Self.makeCache(origin)
            defer { try? FileManager.default.removeItem(at: directory) }
            let url = URL(string: "https://origin.example/\(name)")!
            let prefix = try await Preloader(cache: cache).preload(url, duration: 10).completion()
            #expect(prefix > 0 && prefix <= data.count)
            // The prefix is stored, byte for byte.
            #expect(try store.read(forKey: url.absoluteString, range: 0..<prefix) == data[0..<prefix])
            needed += prefix
            fetched += origin.bodyBytes
            perTrack.append("\(name): \(origin.bodyBytes) for \(prefix) \(origin.rangeHeaders)")
        }
        #expect(Double(fetched) <= 1.2 * Double(needed), "\(fetched) bytes fetched for \(needed) needed: \(perTrack)")
    }

    @Test(
        "A cold play that reads the head, jumps to the tail and back fetches at most 1.02× the file",
        arguments: [(1_500_000, 40_000), (1_500_000, nil), (2_200_000, 40_000)] as [(Int, Int?)])
    func jumpAwayKeepsWhatArrived(size: Int, tailLength: Int?) async throws {
        // The tail index of an M4A is read after a part of the head.
        let content = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        let origin = FakeOrigin(serving: content, pieceDelay: .milliseconds(1))
        let (cache, store, directory) = try Self.makeCache(origin)
        defer { try? FileManager.default.removeItem(at: directory) }
        let loader = cache.loader(for: URL(string: "https://origin.example/tail-index.m4a")!)
        let player = PlayerSimulator(loader: loader)
        let opening = await player.load(contentInformation: true, offset: 0, length: 2)
        #expect(opening.information?.contentLength == content.count)
        // The head, until a part of a chunk past the first arrived; then the jump.
        let head = player.start(offset: 0, length: nil)
        await head.waitFor(bytes: 300_000)
        player.cancel(head)
        let tailStart = content.count - 40_000
        let tail = await player.load(offset: tailStart, length: tailLength)
        #expect(tail.data == content[tailStart...])
        // Back to where the head stopped, to the end.
        let resumeAt = head.received
        let rest = await player.load(offset: resumeAt, length: nil)
        #expect(rest.data == content[resumeAt...])
        try await Self.expectStored(content, store, loader.cacheKey)
        #expect(
            Double(origin.bodyBytes) <= 1.02 * Double(content.count),
            "\(origin.bodyBytes) bytes fetched for a \(content.count)-byte file: \(origin.rangeHeaders)")
    }

    @Test("A response dropped mid-chunk: the bytes that arrived are kept, the retry asks for the rest only")
    func aDroppedResponseKeepsWhatArrived() async throws {
        let content = Data((0..<1_500_000).map { UInt8(truncatingIfNeeded: $0 &* 17 &+ 3) })
        // The first response breaks 138,012 bytes into the second chunk.
        let origin = FakeOrigin(serving: content, fault: .dropAfter(bytes: 400_000), times: 1)
        let (cache, store, directory) = try Self.makeCache(origin)
        defer { try? FileManager.default.removeItem(at: directory) }
        let loader = cache.loader(for: URL(string: "https://origin.example/dropped.m4a")!)
        let (_, played, _) = try await PlayerSimulator(loader: loader).play()
        #expect(played == content)
        try await Self.expectStored(content, store, loader.cacheKey)
        #expect(origin.injected == 1)
        #expect(
            origin.bodyBytes <= content.count + 16_384,
            "\(origin.bodyBytes) bytes fetched for a \(content.count)-byte file: \(origin.rangeHeaders)")
    }

    /// Waits until the entry is complete (the last chunk is written just
    /// after its bytes are handed on), then compares it with `content`.
    private static func expectStored(_ content: Data, _ store: MediaStore, _ key: String) async throws {
        for _ in 0..<500 where try store.info(forKey: key)?.isComplete != true {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(try store.read(forKey: key, range: 0..<content.count) == content)
    }
}

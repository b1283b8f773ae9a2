import Foundation
import MediaStore
import MediaSupport
import Testing

@testable import MediaStreaming

/// A loader serving a cached entry hands it out chunk by chunk from the
/// store's read queue, in order, and stops at the next chunk once the
/// request is cancelled.
@Suite("Resource loader serving from the store", .timeLimit(.minutes(2)))
struct ResourceLoaderStoreServeTests {
    static let chunks = 64
    static let url = URL(string: "http://origin.invalid/served.bin")!

    /// A cache holding all of a `chunks`-chunk resource whose every byte
    /// tells its offset, and that resource.
    func cachedResource() async throws -> (TestCache, Data) {
        let body = Data(
            (0..<(Self.chunks * TestCache.chunkSize)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8) })
        let test = try TestCache(origin: FakeOrigin(serving: body))
        let (_, played, _) = try await test.player(Self.url).play()
        #expect(played == body)
        #expect(try await test.waitUntilComplete(Self.url))
        test.freshCache()  // no loader state left from the first play
        return (test, body)
    }

    @Test func aCachedRangeArrivesChunkByChunkInOrder() async throws {
        let (test, body) = try await cachedResource()
        let offset = 3 * TestCache.chunkSize + 100
        let outcome = await test.player(Self.url).load(offset: offset, length: nil)
        #expect(outcome.error == nil)
        #expect(outcome.data == body[offset...])
        #expect(test.cache.statistics.originBytes == 0)
    }

    @Test func aCancelWhileServingFromTheStoreStopsAtTheNextChunk() async throws {
        let (test, _) = try await cachedResource()
        let loader = test.cache.loader(for: Self.url)
        let pieces = Locked<[Int]>([])
        let ended = Locked(false)
        let request = Locked<LoadingRequest?>(nil)
        let loading = LoadingRequest(contentInformation: false, offset: 0) { event in
            switch event {
            case .data(let data):
                let first = pieces.withLock { pieces in
                    pieces.append(data.count)
                    return pieces.count == 1
                }
                // As AVFoundation does on a seek, from inside the first answer.
                if first, let request = request.current { loader.didCancel(request) }
            case .finished, .failed: ended.withLock { $0 = true }
            case .contentInformation: break
            }
        }
        request.withLock { $0 = loading }
        #expect(loader.shouldWaitForLoading(of: loading))
        // The first answer comes however loaded the machine (500 ms were
        // once not enough in CI); after it, nothing more.
        await eventually("the first answer") { !pieces.current.isEmpty }
        try await Task.sleep(for: .milliseconds(500))
        #expect(pieces.current == [TestCache.chunkSize], "the cancelled request got more than its first chunk")
        #expect(!ended.current)
    }
}

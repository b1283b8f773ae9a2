import Foundation
import MediaStreaming
import Testing

/// A loading request whose offset and length reach past 64 bits (a
/// server's client or a player asked for them) is answered `outOfRange`
/// or clamped to the end, never trapped on.
@Suite("Loading request bounds")
struct LoadingRequestBoundsTests {
    /// The events one request gets until it finishes (at most 30 s: a loaded machine).
    func events(_ cache: StreamingCache, _ url: URL, offset: Int, length: Int?) async -> [String] {
        let loader = cache.loader(for: url)
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let request = LoadingRequest(contentInformation: true, offset: offset, length: length) { event in
            switch event {
            case .contentInformation: continuation.yield("information")
            case .data(let data): continuation.yield("data \(data.count)")
            case .finished:
                continuation.yield("finished")
                continuation.finish()
            case .failed(let error):
                continuation.yield("failed \(error)")
                continuation.finish()
            }
        }
        loader.shouldWaitForLoading(of: request)
        let timeout = Task {
            try await Task.sleep(for: .seconds(30))
            continuation.finish()
        }
        defer { timeout.cancel() }
        return await stream.reduce(into: []) { $0.append($1) }
    }

    @Test func offsetsAndLengthsAtTheBoundary() async throws {
        let content = Data(repeating: 7, count: 40_000)
        let test = try TestCache(origin: FakeOrigin(serving: content))
        let url = URL(string: "https://example.com/a.bin")!
        let huge = await events(test.cache, url, offset: Int.max - 1, length: 5)
        #expect(huge.first == "information")
        #expect(huge.last?.hasPrefix("failed") == true, "\(huge)")
        let overflowing = await events(test.cache, url, offset: 39_990, length: Int.max)
        #expect(overflowing.last == "finished", "\(overflowing)")
        #expect(overflowing.filter { $0.hasPrefix("data") } == ["data 10"], "clamped to the end: \(overflowing)")
        let negative = await events(test.cache, url, offset: -5, length: 10)
        #expect(negative.last?.hasPrefix("failed") == true, "\(negative)")
    }
}

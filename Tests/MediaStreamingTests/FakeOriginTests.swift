import Foundation
import MediaStreaming
import Testing

/// The tests' fake origin keeps its word: what the tests built on it rely on.
@Suite("Fake origin", .timeLimit(.minutes(1)))
struct FakeOriginTests {
    static let url = URL(string: "https://example.invalid/fake")!

    /// All of `response`'s body, or `nil` when it does not end within `limit`.
    static func body(of response: OriginResponse, within limit: Duration) async throws -> Data? {
        try await withThrowingTaskGroup(of: Data?.self) { group in
            group.addTask {
                var bytes = Data()
                for try await piece in response.body { bytes += piece }
                return bytes
            }
            group.addTask {
                try await Task.sleep(for: limit)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    @Test("reset() forgets the records, not which request was the first: a later one is not held as first")
    func resetKeepsTheFirstRequest() async throws {
        let content = FakeOrigin.content(count: 64, seed: 3)
        let origin = FakeOrigin(versions: [.init(bytes: content)], pieceSize: 16, holdFirstBody: true)
        let held = try await origin.fetch(OriginRequest(url: Self.url))
        #expect(origin.requestCount == 1)

        origin.reset()
        #expect(origin.requestCount == 0 && origin.requests.isEmpty && origin.bodyBytes == 0)
        let next = try await origin.fetch(OriginRequest(url: Self.url))
        #expect(origin.requestCount == 1, "a request after the reset is recorded")
        let nextBody = try await Self.body(of: next, within: .seconds(5))
        #expect(nextBody == content, "the request after the reset was held as a first one")

        origin.releaseFirstBody()
        #expect(try await Self.body(of: held, within: .seconds(5)) == content, "the first body goes on")
    }
}

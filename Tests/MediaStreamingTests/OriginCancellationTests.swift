import Foundation
import MediaStore
import MediaStreaming
import MediaSupport
import Testing

/// `HTTPOrigin.fetch` ends with `.cancelled` however early its task is
/// cancelled. URLSession on Linux never calls back for a data task that was
/// cancelled before it was resumed and resumed after: a fetch whose task was
/// cancelled just before it started hung forever (an HLS download paused and
/// resumed at once hung 1 run in 8 that way, its resumed fetch joined to the
/// cancelled one).
@Suite("HTTPOrigin cancellation")
struct OriginCancellationTests {
    /// Starts `body` on its own task and waits up to 10 s for it to end;
    /// returns how it ended, or `nil` when it did not (the task is left behind).
    static func outcome(of body: @escaping @Sendable () async throws(OriginError) -> OriginResponse) async throws
        -> Result<Int, OriginError>?
    {
        let ended = Locked<Result<Int, OriginError>?>(nil)
        Task {
            do throws(OriginError) {
                let response = try await body()
                ended.withLock { $0 = .success(response.statusCode) }
            } catch {
                ended.withLock { $0 = .failure(error) }
            }
        }
        for _ in 0..<200 {
            if let result = ended.current { return result }
            try await Task.sleep(for: .milliseconds(50))
        }
        return ended.current
    }

    @Test func aFetchWhoseTaskIsCancelledBeforeItStartsEndsCancelled() async throws {
        let origin = HTTPOrigin(timeout: .seconds(5))
        for _ in 0..<20 {
            let result = try await Self.outcome {
                () async throws(OriginError) -> OriginResponse in
                withUnsafeCurrentTask { $0?.cancel() }
                return try await origin.fetch(OriginRequest(url: URL(string: "http://127.0.0.1:9/never")!))
            }
            let ended = try #require(result, "the fetch of a cancelled task never ended")
            #expect(ended == .failure(.cancelled))
        }
    }
}

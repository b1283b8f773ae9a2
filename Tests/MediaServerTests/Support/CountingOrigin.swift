import Foundation
import MediaStreaming

/// Wraps an origin, counting requests and body bytes (the tests' own
/// count of what reached the origin), and optionally slowing each body
/// piece so that downloads last long enough for clients to overlap.
final class CountingOrigin: Origin, @unchecked Sendable {
    let base: any Origin
    let delayPerPiece: Duration
    private let lock = NSLock()
    private var requestCount = 0
    private var byteCount = 0
    private var recorded: [OriginRequest] = []

    init(_ base: any Origin = HTTPOrigin(timeout: 10), delayPerPiece: Duration = .zero) {
        self.base = base
        self.delayPerPiece = delayPerPiece
    }

    var requests: Int { lock.withLock { requestCount } }
    var bytes: Int { lock.withLock { byteCount } }
    var rangeHeaders: [String] { lock.withLock { recorded.compactMap(\.rangeHeader) } }
    /// Each request's URL path and `Range` header (`/a.ts bytes=0-9`), in order.
    var requestedResources: [String] {
        lock.withLock { recorded.map { $0.url.path + ($0.rangeHeader.map { " " + $0 } ?? "") } }
    }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        lock.withLock {
            requestCount += 1
            recorded.append(request)
        }
        var response = try await base.fetch(request)
        let body = response.body
        let delay = delayPerPiece
        let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = Task {
            do {
                for try await piece in body {
                    self.lock.withLock { self.byteCount += piece.count }
                    if delay > .zero { try await Task.sleep(for: delay) }
                    continuation.yield(piece)
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        response.body = stream
        return response
    }
}

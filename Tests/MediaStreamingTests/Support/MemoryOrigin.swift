import Foundation
import MediaStreaming

/// An origin serving one resource from memory (ranges, `ETag`, the body
/// in small pieces): for fetcher tests that need no nginx.
final class MemoryOrigin: Origin, @unchecked Sendable {
    private let lock = NSLock()
    private var bytes: Data
    private var etag: String
    private var served = 0
    private let pieceDelay: Duration
    /// Whether the first request's body waits after its first piece (until ``releaseFirstBody()``).
    private var holdingFirstBody: Bool

    /// - parameter pieceDelay: a pause before each 8 KiB piece of a body (a slow network).
    /// - parameter holdFirstBody: the first request's body stops after its
    ///   first piece until ``releaseFirstBody()``: a request still running,
    ///   however slow the machine.
    init(_ bytes: Data, etag: String = "\"v1\"", pieceDelay: Duration = .zero, holdFirstBody: Bool = false) {
        self.bytes = bytes
        self.etag = etag
        self.pieceDelay = pieceDelay
        self.holdingFirstBody = holdFirstBody
    }

    /// Lets the first request's body go on.
    func releaseFirstBody() {
        lock.withLock { holdingFirstBody = false }
    }

    /// Requests answered so far.
    var requests: Int { lock.withLock { served } }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        let (content, tag, first) = lock.withLock { () -> (Data, String, Bool) in
            served += 1
            return (bytes, etag, served == 1)
        }
        var headers = ["Content-Type": "application/octet-stream", "ETag": tag]
        var status = 200
        var body = content
        if let range = request.range {
            let end = min(range.upperBound, content.count)
            guard range.lowerBound < content.count else {
                return OriginResponse(
                    statusCode: 416, headers: ["Content-Range": "bytes */\(content.count)"],
                    body: AsyncThrowingStream { $0.finish() })
            }
            status = 206
            body = content.subdata(in: range.lowerBound..<end)
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(end - 1)/\(content.count)"
        }
        headers["Content-Length"] = "\(body.count)"
        let pieces = stride(from: 0, to: body.count, by: 8192).map { body.subdata(in: $0..<min($0 + 8192, body.count)) }
        let delay = pieceDelay
        return OriginResponse(
            statusCode: status, headers: headers,
            body: AsyncThrowingStream { continuation in
                let task = Task {
                    for (index, piece) in pieces.enumerated() {
                        if delay > .zero { try? await Task.sleep(for: delay) }
                        while first && index == 1 && !Task.isCancelled && self.lock.withLock({ self.holdingFirstBody })
                        {
                            try? await Task.sleep(for: .milliseconds(1))
                        }
                        if Task.isCancelled { break }
                        continuation.yield(piece)
                    }
                    continuation.finish()
                }
                continuation.onTermination = { _ in task.cancel() }
            })
    }
}

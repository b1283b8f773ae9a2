import Foundation
import MediaStreaming

/// An origin that misbehaves on purpose, in front of a real one, for the
/// first `times` requests (then behaves, so retries can succeed).
final class FaultOrigin: Origin, @unchecked Sendable {
    enum Fault: Sendable {
        /// Answers 200 with the whole body to a range request.
        case ignoreRange
        /// Answers 200 with the whole body, no Content-Length (chunked).
        case noLength
        /// Shifts Content-Range (and the bytes) by this many bytes.
        case wrongContentRange(shift: Int)
        /// Drops the connection after this many body bytes.
        case dropAfter(bytes: Int)
        /// Sends this many body bytes, then nothing more (never ends).
        case stallAfter(bytes: Int)
        /// Answers with this status and no body.
        case status(Int)
        /// Announces a different ETag (the resource "changed").
        case changedETag
        /// Waits this long before passing on each body piece (a slow network).
        case throttle(milliseconds: Int)
    }

    let base: any Origin
    let fault: Fault
    private let lock = NSLock()
    private var remaining: Int
    private(set) var faultsInjected = 0

    init(_ base: any Origin, fault: Fault, times: Int = .max) {
        self.base = base
        self.fault = fault
        self.remaining = times
    }

    var injected: Int { lock.withLock { faultsInjected } }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        let inject = lock.withLock { () -> Bool in
            guard remaining > 0 else { return false }
            remaining -= 1
            faultsInjected += 1
            return true
        }
        guard inject else { return try await base.fetch(request) }
        switch fault {
        case .ignoreRange, .noLength:
            var whole = request
            whole.range = nil
            var response = try await base.fetch(whole)
            var headers = response.headers
            headers["content-range"] = nil
            if case .noLength = fault { headers["content-length"] = nil }
            response = OriginResponse(statusCode: 200, headers: headers, body: response.body)
            return response
        case .wrongContentRange(let shift):
            var shifted = request
            if let range = request.range {
                shifted.range =
                    (range.lowerBound + shift)..<(range.upperBound == Int.max ? Int.max : range.upperBound + shift)
            }
            return try await base.fetch(shifted)
        case .dropAfter(let limit):
            var response = try await base.fetch(request)
            response.body = relay(response.body) { piece, offset in
                if offset + piece.count <= limit { return piece }
                if offset >= limit { throw OriginError.connectionLost(reason: "injected drop") }
                return piece.prefix(limit - offset)
            }
            return response
        case .stallAfter(let limit):
            var response = try await base.fetch(request)
            response.body = relay(response.body) { piece, offset in
                if offset + piece.count <= limit { return piece }
                if offset < limit { return piece.prefix(limit - offset) }
                try await Task.sleep(for: .seconds(3600))
                return nil
            }
            return response
        case .status(let code):
            let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
            continuation.yield(Data("error".utf8))
            continuation.finish()
            return OriginResponse(
                statusCode: code, headers: ["Content-Type": "text/plain", "Content-Length": "5"], body: body)
        case .throttle(let milliseconds):
            var response = try await base.fetch(request)
            response.body = relay(response.body) { piece, _ in
                try await Task.sleep(for: .milliseconds(milliseconds))
                return piece
            }
            return response
        case .changedETag:
            let response = try await base.fetch(request)
            var headers = response.headers
            headers["etag"] = "\"changed-\(UUID().uuidString)\""
            return OriginResponse(statusCode: response.statusCode, headers: headers, body: response.body)
        }
    }
}

import Foundation
import MediaStreaming

/// Wraps an origin and records every request and every body byte it
/// passes on: the tests' independent count of what the loader asked for.
final class RecordingOrigin: Origin, @unchecked Sendable {
    struct Record: Sendable {
        var request: OriginRequest
        var status: Int
    }

    let base: any Origin
    private let lock = NSLock()
    private var records: [Record] = []
    private var bytes = 0
    private var bytesByURL: [URL: Int] = [:]

    init(_ base: any Origin = HTTPOrigin(timeout: 10)) { self.base = base }

    var requests: [Record] { lock.withLock { records } }
    var bodyBytes: Int { lock.withLock { bytes } }
    /// Requests that were not conditional probes answered 304.
    var rangeHeaders: [String] { requests.compactMap { $0.request.rangeHeader } }

    /// Body bytes passed on for `url`.
    func bodyBytes(for url: URL) -> Int { lock.withLock { bytesByURL[url, default: 0] } }

    private func add(_ count: Int, for url: URL) {
        lock.withLock {
            bytes += count
            bytesByURL[url, default: 0] += count
        }
    }

    func reset() {
        lock.withLock {
            records = []; bytes = 0; bytesByURL = [:]
        }
    }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        let response = try await base.fetch(request)
        lock.withLock { records.append(Record(request: request, status: response.statusCode)) }
        var counted = response
        let url = request.url
        counted.body = relay(response.body, counter: { [weak self] count in self?.add(count, for: url) })
        return counted
    }
}

/// Re-streams `body`, calling `counter` with each piece's size; stopping
/// the new stream stops the old one.
func relay(
    _ body: AsyncThrowingStream<Data, any Error>,
    transform: @escaping @Sendable (Data, Int) async throws -> Data? = { data, _ in data },
    counter: @escaping @Sendable (Int) -> Void = { _ in }
) -> AsyncThrowingStream<Data, any Error> {
    let (stream, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
    let task = Task {
        do {
            var offset = 0
            for try await piece in body {
                counter(piece.count)
                guard let out = try await transform(piece, offset) else { break }
                offset += piece.count
                if !out.isEmpty { continuation.yield(out) }
            }
            continuation.finish()
        } catch {
            continuation.finish(throwing: error)
        }
    }
    continuation.onTermination = { _ in task.cancel() }
    return stream
}

import Foundation
import MediaStreaming

/// An in-memory origin whose one resource changes (bytes, length,
/// validator) when told to. A response already under way keeps sending
/// the version it started with, as a real server streaming the old file
/// does; it can be held after some bytes until ``release(_:)``, so that a
/// test decides what happens meanwhile.
final class ChangingOrigin: Origin, @unchecked Sendable {
    struct Version: Sendable {
        var bytes: Data
        var etag: String?
    }

    private let lock = NSLock()
    private let versions: [Version]
    private var current = 0
    private var holdAfter: [Int: Int]
    private var sent: [Int] = []

    /// `holdAfter`: responses of version `index` stop after sending
    /// `holdAfter[index]` body bytes until ``release(_:)``.
    init(_ versions: [Version], holdAfter: [Int: Int] = [:]) {
        self.versions = versions
        self.holdAfter = holdAfter
        self.sent = versions.map { _ in 0 }
    }

    /// From now on, requests get version `index`.
    func change(to index: Int) { lock.withLock { current = index } }

    /// Lets held responses of version `index` go on.
    func release(_ index: Int) { lock.withLock { holdAfter[index] = nil } }

    /// Body bytes sent so far of version `index`.
    func bytesSent(of index: Int) -> Int { lock.withLock { sent[index] } }

    func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        let index = lock.withLock { current }
        let version = versions[index]
        let total = version.bytes.count
        var headers = ["Content-Type": "audio/mpeg", "Accept-Ranges": "bytes"]
        if let etag = version.etag { headers["ETag"] = etag }
        let status: Int
        let range: Range<Int>
        if let requested = request.range {
            guard requested.lowerBound < total else {
                headers["Content-Range"] = "bytes */\(total)"
                return OriginResponse(statusCode: 416, headers: headers, body: Self.body([]))
            }
            range = requested.lowerBound..<min(requested.upperBound, total)
            status = 206
            headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"
        } else {
            range = 0..<total
            status = 200
        }
        headers["Content-Length"] = "\(range.count)"
        let pieces = stride(from: range.lowerBound, to: range.upperBound, by: 4_096).map {
            version.bytes[$0..<min(range.upperBound, $0 + 4_096)]
        }
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = Task {
            var count = 0
            for piece in pieces {
                while let limit = self.lock.withLock({ self.holdAfter[index] }), count >= limit {
                    try? await Task.sleep(for: .milliseconds(2))
                    if Task.isCancelled { return continuation.finish(throwing: CancellationError()) }
                }
                if Task.isCancelled { return continuation.finish(throwing: CancellationError()) }
                continuation.yield(Data(piece))
                count += piece.count
                self.lock.withLock { self.sent[index] += piece.count }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return OriginResponse(statusCode: status, headers: headers, body: body)
    }

    private static func body(_ bytes: [UInt8]) -> AsyncThrowingStream<Data, any Error> {
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        if !bytes.isEmpty { continuation.yield(Data(bytes)) }
        continuation.finish()
        return body
    }

    /// Bytes that differ between seeds at nearly every offset (SplitMix64).
    static func content(count: Int, seed: UInt64) -> Data {
        var state = seed &* 0x2545_F491_4F6C_DD1D
        var words = [UInt64](repeating: 0, count: (count + 7) / 8)
        for index in words.indices {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            words[index] = (z ^ (z >> 31)).littleEndian
        }
        return words.withUnsafeBytes { Data($0.prefix(count)) }
    }
}

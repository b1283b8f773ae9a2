import Foundation
import MediaStreaming

/// The tests' one fake origin: a real origin behind it, or resources held
/// in memory, with every request and body byte recorded, faults injected
/// on demand, bodies slowed or held. Each test turns on what it needs.
///
/// - Backend: ``init(_:fault:times:pieceDelay:)`` passes requests to
///   another origin (an `HTTPOrigin` on a loopback nginx by default);
///   ``init(versions:pieceSize:pieceDelay:holdFirstBody:holdAfter:)``
///   answers from memory (ranges, `ETag`, `416`), one version at a time
///   (``change(to:)``); a response under way keeps the version it started.
/// - Records: ``requestCount`` and ``requestedResources`` count requests
///   as they arrive; ``requests`` holds those answered, with their status;
///   ``bodyBytes`` counts the body bytes passed on.
/// - Faults: the first `times` requests misbehave as ``Fault`` says, then
///   the origin behaves (so retries can succeed).
package final class FakeOrigin: Origin, @unchecked Sendable {
    /// One version of the in-memory resource.
    package struct Version: Sendable {
        package var bytes: Data
        package var etag: String?
        package var contentType: String

        package init(bytes: Data, etag: String? = "\"v1\"", contentType: String = "application/octet-stream") {
            self.bytes = bytes
            self.etag = etag
            self.contentType = contentType
        }
    }

    /// A misbehaviour of the first `times` requests.
    package enum Fault: Sendable {
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
    }

    /// A request answered, with the status it got.
    package struct Record: Sendable {
        package var request: OriginRequest
        package var status: Int
    }

    private enum Backend {
        case origin(any Origin)
        case memory(versions: [Version], pieceSize: Int)
    }

    private let backend: Backend
    private let fault: Fault?
    private let pieceDelay: Duration
    private let lock = NSLock()
    private var faultsLeft: Int
    private var faultCount = 0
    private var arrived: [OriginRequest] = []
    /// Whether a request came (``reset()`` does not forget it: the first request is the first ever).
    private var anyArrived = false
    private var records: [Record] = []
    private var bytes = 0
    private var bytesByURL: [URL: Int] = [:]
    private var bodiesSending = 0
    // The in-memory backend's state.
    private var current = 0
    private var holdingFirstBody: Bool
    private var holdAfter: [Int: Int]
    private var sent: [Int]

    /// In front of `base`.
    /// - parameter fault: what the first `times` requests suffer; none by default.
    /// - parameter pieceDelay: a pause before passing on each body piece (a slow network).
    package init(
        _ base: any Origin = HTTPOrigin(timeout: .seconds(10)), fault: Fault? = nil, times: Int = .max,
        pieceDelay: Duration = .zero
    ) {
        backend = .origin(base)
        self.fault = fault
        faultsLeft = fault == nil ? 0 : times
        self.pieceDelay = pieceDelay
        holdingFirstBody = false
        holdAfter = [:]
        sent = []
    }

    /// Serving `versions` from memory, the first one until ``change(to:)``.
    /// - parameter pieceSize: the bytes of each body piece.
    /// - parameter pieceDelay: a pause before each body piece (a slow network).
    /// - parameter holdFirstBody: the first request's body stops after its first piece until
    ///   ``releaseFirstBody()``: a request still running, however slow the machine.
    /// - parameter holdAfter: responses of version `index` stop after `holdAfter[index]` body
    ///   bytes until ``release(_:)``.
    package init(
        versions: [Version], pieceSize: Int = 8192, pieceDelay: Duration = .zero, holdFirstBody: Bool = false,
        holdAfter: [Int: Int] = [:], fault: Fault? = nil, times: Int = .max
    ) {
        backend = .memory(versions: versions, pieceSize: max(1, pieceSize))
        self.fault = fault
        faultsLeft = fault == nil ? 0 : times
        self.pieceDelay = pieceDelay
        holdingFirstBody = holdFirstBody
        self.holdAfter = holdAfter
        sent = versions.map { _ in 0 }
    }

    /// Serving `bytes` from memory, one version.
    package convenience init(
        serving bytes: Data, etag: String? = "\"v1\"", pieceDelay: Duration = .zero, holdFirstBody: Bool = false,
        fault: Fault? = nil, times: Int = .max
    ) {
        self.init(
            versions: [Version(bytes: bytes, etag: etag)], pieceDelay: pieceDelay, holdFirstBody: holdFirstBody,
            fault: fault, times: times)
    }

    // MARK: Records

    /// Requests received so far (answered or not).
    package var requestCount: Int { lock.withLock { arrived.count } }
    /// Each request's URL path and `Range` header (`/a.ts bytes=0-9`), in the order they came.
    package var requestedResources: [String] {
        lock.withLock { arrived.map { $0.url.path + ($0.rangeHeader.map { " " + $0 } ?? "") } }
    }
    /// Requests answered, in order, with their status.
    package var requests: [Record] { lock.withLock { records } }
    /// The `Range` headers of the requests answered.
    package var rangeHeaders: [String] { requests.compactMap { $0.request.rangeHeader } }
    /// Body bytes passed on so far.
    package var bodyBytes: Int { lock.withLock { bytes } }
    /// Body bytes passed on for `url`.
    package func bodyBytes(for url: URL) -> Int { lock.withLock { bytesByURL[url, default: 0] } }
    /// Response bodies still being sent: not yet at their end, nor
    /// dropped by their reader (a body's bytes are counted as sent even
    /// while its reader has not taken them, as on a network).
    package var openBodies: Int { lock.withLock { bodiesSending } }
    /// Faults injected so far.
    package var injected: Int { lock.withLock { faultCount } }

    /// Forgets the records: what ``requestCount``, ``requestedResources``,
    /// ``requests`` and the body byte counts say. The origin's behaviour
    /// goes on as it was: the faults left, the memory backend's state, and
    /// which request was the first (``releaseFirstBody()`` is still what a
    /// held first body waits for; no later request is held as a first one).
    package func reset() {
        lock.withLock {
            arrived = []
            records = []
            bytes = 0
            bytesByURL = [:]
        }
    }

    // MARK: The in-memory backend

    /// From now on, requests get version `index`.
    package func change(to index: Int) { lock.withLock { current = index } }
    /// Lets held responses of version `index` go on.
    package func release(_ index: Int) { lock.withLock { holdAfter[index] = nil } }
    /// Lets the first request's body go on.
    package func releaseFirstBody() { lock.withLock { holdingFirstBody = false } }
    /// Body bytes sent so far of version `index`.
    package func bytesSent(of index: Int) -> Int { lock.withLock { sent[index] } }

    // MARK: Answering

    package func fetch(_ request: OriginRequest) async throws(OriginError) -> OriginResponse {
        let (inject, isFirst) = lock.withLock { () -> (Bool, Bool) in
            arrived.append(request)
            let isFirst = !anyArrived
            anyArrived = true
            guard faultsLeft > 0 else { return (false, isFirst) }
            faultsLeft -= 1
            faultCount += 1
            return (true, isFirst)
        }
        var response = try await answer(request, fault: inject ? fault : nil, isFirst: isFirst)
        lock.withLock { records.append(Record(request: request, status: response.statusCode)) }
        let url = request.url
        let delay = pieceDelay
        lock.withLock { bodiesSending += 1 }
        let counted = Self.relay(
            response.body, ended: { [weak self] in self?.lock.withLock { self?.bodiesSending -= 1 } }
        ) {
            [weak self] piece, _ in
            if delay > .zero, case .origin = self?.backend { try await Task.sleep(for: delay) }
            self?.lock.withLock {
                self?.bytes += piece.count
                self?.bytesByURL[url, default: 0] += piece.count
            }
            return piece
        }
        response.body = counted
        return response
    }

    /// The backend's answer, with `fault` applied.
    private func answer(_ request: OriginRequest, fault: Fault?, isFirst: Bool) async throws(OriginError)
        -> OriginResponse
    {
        guard let fault else { return try await base(request, isFirst: isFirst) }
        switch fault {
        case .ignoreRange, .noLength:
            var whole = request
            whole.range = nil
            let response = try await base(whole, isFirst: isFirst)
            var headers = response.headers
            // `OriginResponse` lowercases header names.
            headers["content-range"] = nil
            if case .noLength = fault { headers["content-length"] = nil }
            return OriginResponse(statusCode: 200, headers: headers, body: response.body)
        case .wrongContentRange(let shift):
            var shifted = request
            if let range = request.range {
                shifted.range =
                    (range.lowerBound + shift)..<(range.upperBound == Int.max ? Int.max : range.upperBound + shift)
            }
            return try await base(shifted, isFirst: isFirst)
        case .dropAfter(let limit):
            var response = try await base(request, isFirst: isFirst)
            response.body = Self.relay(response.body) { piece, offset in
                if offset + piece.count <= limit { return piece }
                if offset >= limit { throw OriginError.connectionLost(reason: "injected drop") }
                return piece.prefix(limit - offset)
            }
            return response
        case .stallAfter(let limit):
            var response = try await base(request, isFirst: isFirst)
            response.body = Self.relay(response.body) { piece, offset in
                if offset + piece.count <= limit { return piece }
                if offset < limit { return piece.prefix(limit - offset) }
                try await Task.sleep(for: .seconds(3600))
                return nil
            }
            return response
        case .status(let code):
            return OriginResponse(
                statusCode: code, headers: ["Content-Type": "text/plain", "Content-Length": "5"],
                body: Self.body([Data("error".utf8)]))
        case .changedETag:
            let response = try await base(request, isFirst: isFirst)
            var headers = response.headers
            headers["etag"] = "\"changed-\(UUID().uuidString)\""
            return OriginResponse(statusCode: response.statusCode, headers: headers, body: response.body)
        }
    }

    private func base(_ request: OriginRequest, isFirst: Bool) async throws(OriginError) -> OriginResponse {
        switch backend {
        case .origin(let origin): try await origin.fetch(request)
        case .memory(let versions, let pieceSize):
            memory(request, versions: versions, pieceSize: pieceSize, isFirst: isFirst)
        }
    }

    /// The in-memory answer: `206` to a range, `416` past the end, `200` to the whole.
    private func memory(_ request: OriginRequest, versions: [Version], pieceSize: Int, isFirst: Bool) -> OriginResponse
    {
        let index = lock.withLock { current }
        let version = versions[index]
        let total = version.bytes.count
        var headers = ["Content-Type": version.contentType, "Accept-Ranges": "bytes"]
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
        let pieces = stride(from: range.lowerBound, to: range.upperBound, by: pieceSize).map {
            Data(version.bytes[$0..<min(range.upperBound, $0 + pieceSize)])
        }
        let delay = pieceDelay
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        let task = Task {
            var count = 0
            for (number, piece) in pieces.enumerated() {
                if delay > .zero { try? await Task.sleep(for: delay) }
                while !Task.isCancelled, self.isHeld(version: index, first: isFirst && number == 1, after: count) {
                    try? await Task.sleep(for: .milliseconds(1))
                }
                if Task.isCancelled { return continuation.finish(throwing: CancellationError()) }
                continuation.yield(piece)
                count += piece.count
                self.lock.withLock { self.sent[index] += piece.count }
            }
            continuation.finish()
        }
        continuation.onTermination = { _ in task.cancel() }
        return OriginResponse(statusCode: status, headers: headers, body: body)
    }

    private func isHeld(version: Int, first: Bool, after count: Int) -> Bool {
        lock.withLock {
            if first && holdingFirstBody { return true }
            if let limit = holdAfter[version], count >= limit { return true }
            return false
        }
    }

    private static func body(_ pieces: [Data]) -> AsyncThrowingStream<Data, any Error> {
        let (body, continuation) = AsyncThrowingStream<Data, any Error>.makeStream()
        for piece in pieces where !piece.isEmpty { continuation.yield(piece) }
        continuation.finish()
        return body
    }

    /// Re-streams `body` through `transform` (a piece and its body offset;
    /// `nil` ends the body), a piece each time its reader asks: nothing is
    /// sent ahead of the reader (a network's window bounds that to a few
    /// pieces), so what the counts say was sent is what the reader took,
    /// however late it runs. Dropping the new stream drops the old one;
    /// `ended` is told once, at the body's end, failure or drop.
    private static func relay(
        _ body: AsyncThrowingStream<Data, any Error>, ended: @escaping @Sendable () -> Void = {},
        _ transform: @escaping @Sendable (Data, Int) async throws -> Data?
    ) -> AsyncThrowingStream<Data, any Error> {
        let source = RelaySource(body, transform: transform, ended: ended)
        return AsyncThrowingStream { try await source.next() }
    }

    /// The state of one relayed body, read by one reader at a time (the
    /// stream's iterator).
    // Unchecked: only the stream's single reader calls `next()`, one call at a time.
    private final class RelaySource: @unchecked Sendable {
        private var iterator: AsyncThrowingStream<Data, any Error>.AsyncIterator
        private let transform: @Sendable (Data, Int) async throws -> Data?
        private let ended: @Sendable () -> Void
        private var offset = 0
        private var done = false

        init(
            _ body: AsyncThrowingStream<Data, any Error>,
            transform: @escaping @Sendable (Data, Int) async throws -> Data?,
            ended: @escaping @Sendable () -> Void
        ) {
            iterator = body.makeAsyncIterator()
            self.transform = transform
            self.ended = ended
        }

        func next() async throws -> Data? {
            guard !done else { return nil }
            do {
                while let piece = try await iterator.next() {
                    guard let out = try await transform(piece, offset) else { break }
                    offset += piece.count
                    if !out.isEmpty { return out }
                }
            } catch {
                end()
                throw error
            }
            end()
            return nil
        }

        private func end() {
            guard !done else { return }
            done = true
            ended()
        }

        deinit { end() }
    }

    /// Bytes that differ between seeds at nearly every offset (SplitMix64):
    /// a byte's value says which content it belongs to.
    package static func content(count: Int, seed: UInt64) -> Data {
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

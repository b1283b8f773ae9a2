import Foundation
import HLSPlaylist
import MediaHLS
import MediaStore
import MediaStreaming
import MediaSupport

/// Turns each request of a server into a ``Response`` (routing,
/// authorisation, HLS decisions, status mapping); the connection only
/// reads requests and writes what it is given. No socket here: a response
/// whose head waits on the origin is a ``PendingResponse``, a body that
/// comes in pieces a ``BodyStream``, and the connection waits for them
/// with its own deadlines while it watches its client.
///
/// The decisions that need no origin are pure static functions
/// (``Router/decide(_:)``, ``mediaResponse(to:origin:information:body:)``,
/// ``hlsResponse(to:route:outcome:stored:)``, the status mappings), tested
/// without sockets.
struct Responder: Sendable {
    /// What the connection does with a request.
    enum Reply: Sendable {
        /// Write this response now.
        case now(Response)
        /// Wait for the response (on the origin), then write it.
        case later(PendingResponse)
    }

    /// Why a streamed body gave no first byte (the head is not sent yet).
    enum FirstBytesFailure: Sendable {
        case failed(StreamingError)
        /// The stream ended before its first byte.
        case ended
        /// No byte within ``MediaServerConfiguration/originWaitTimeout``.
        case timedOut
    }

    let router: Router
    /// Where local URLs (in rewritten playlists) point.
    let address: LocalAddress
    /// Loaders of recently played origins, shared by the requests of a player.
    let loaders: LoaderPool
    let hls: HLSResponder
    /// Bytes of one response held for a slow client (``MediaServerConfiguration/responseBufferBytes``).
    let responseBufferBytes: Int
    /// The types sniffed from complete entries answered from the store
    /// (the server's, kept across its restarts).
    var sniffedTypes = SniffedTypes()
    /// How complete entries are read from the store.
    var storeReads = StoreReads.direct

    /// The reply to `request`.
    func respond(to request: HTTPRequest) -> Reply {
        let method = request.method
        switch router.decide(request) {
        case .ping:
            return .now(.text(status: 200, "ok", method: method, report: .quiet))
        case .refuse(let status, let reason, let closes, let allow):
            return .now(
                .refusal(
                    status, reason, method: method, extra: allow.map { [("Allow", $0)] } ?? [],
                    closesConnection: closes))
        case .media(let origin):
            let loader = loaders.loader(for: origin)
            if let response = storedMedia(request, origin: origin, loader: loader) { return .now(response) }
            return .later(media(request, origin: origin, loader: loader))
        case .hls(let route):
            return .later(hls(request, route: route))
        }
    }

    // MARK: Media

    /// Waits for the content information, then plans. When the bytes wanted
    /// are known before the length (``likelyBody(_:)``), one loading request
    /// asks for the information and those bytes at once.
    private func media(_ request: HTTPRequest, origin: URL, loader: ResourceLoader) -> PendingResponse {
        let highWater = responseBufferBytes
        let timeout = Response.refusal(
            504, "the origin gave no content information in time", method: request.method)
        guard let guess = Self.likelyBody(request) else {
            let wait = BlockingWait { () async throws(StreamingError) -> ContentInformation in
                try await loader.contentInformation()
            }
            return PendingResponse(
                timeout: timeout,
                wait: { deadline in
                    wait.wait(until: deadline).map { information in
                        Self.mediaResponse(to: request, origin: origin, information: information) { range in
                            BodyPump(loader: loader, range: range, highWater: highWater)
                        }
                    }
                }, abandon: { wait.abandon() })
        }
        let speculative = BodyPump(loader: loader, range: guess, highWater: highWater, withInformation: true)
        speculative.start()
        return PendingResponse(
            timeout: timeout,
            wait: { deadline in
                speculative.waitForInformation(until: deadline).map { information in
                    let response = Self.mediaResponse(to: request, origin: origin, information: information) {
                        range in
                        range == speculative.body
                            ? speculative : BodyPump(loader: loader, range: range, highWater: highWater)
                    }
                    if case .stream(let stream, _) = response.body, stream === speculative {
                    } else {
                        speculative.cancel()
                    }
                    return response
                }
            }, abandon: { speculative.cancel() })
    }

    /// The answer to a media `request` whose entry is complete in the store
    /// and fresh (used as it is, like the loader does): the content
    /// information from the entry, the body read from it on the calling
    /// thread. The entry and the head of the body most likely asked for
    /// (``likelyBody(_:)``; else the bytes a generic type is sniffed from)
    /// are read in one transaction, so that a small range needs no other.
    /// `nil` when the loader must answer (a miss, a partial or expired
    /// entry, a cache that always revalidates, an unusable store, bytes
    /// that fail their check: the store drops that entry).
    private func storedMedia(_ request: HTTPRequest, origin: URL, loader: ResourceLoader) -> Response? {
        let cache = loaders.cache
        guard cache.storeOpeningError == nil, !cache.configuration.alwaysRevalidate else { return nil }
        let store = cache.store
        let key = loader.cacheKey
        let piece = responseBufferBytes
        let guess = Self.likelyBody(request)
        let reads = storeReads
        guard
            let read = try? reads.infoAndBytes(
                store, key, guess?.lowerBound ?? 0, guess.map { min(piece, $0.count) } ?? Self.sniffedBytes),
            read.info.isComplete, let length = read.info.length, !read.info.isExpired()
        else { return nil }
        let entry = read.info
        var mime = entry.metadata.mimeType
        if UniformType.isGeneric(mime) {
            // As the loader does: sniffed from the first bytes, else as declared (once per entry version).
            let declared = mime
            if let known = sniffedTypes.type(forKey: key, version: entry.version, declared: declared) {
                mime = known
            } else {
                let wanted = min(Self.sniffedBytes, length)
                let prefix: Data
                if read.offset == 0 && read.bytes.count >= wanted {
                    prefix = read.bytes.prefix(wanted)
                } else {
                    guard let pieces = try? reads.piece(store, key, 0..<wanted, entry.version) else { return nil }
                    prefix = pieces.reduce(Data(), +)
                }
                let sniffed = MediaSniffer.mimeType(of: prefix) ?? declared ?? "application/octet-stream"
                sniffedTypes.remember(sniffed, forKey: key, version: entry.version, declared: declared)
                mime = sniffed
            }
        }
        let information = ContentInformation(
            mimeType: mime ?? "application/octet-stream", contentLength: length, isEntireLengthAvailableOnDemand: true,
            etag: entry.metadata.etag, lastModified: entry.metadata.lastModified)
        return Self.mediaResponse(to: request, origin: origin, information: .success(information)) { range in
            StoredEntryBody(
                store: store, key: key, version: entry.version, range: range, piece: piece,
                head: range.lowerBound == read.offset ? read.bytes : nil, reads: reads,
                served: { loader.countServedFromStore($0) })
        }
    }

    /// The first bytes of an entry the type of a generic one is sniffed from.
    static let sniffedBytes = 16

    /// The answer to a media `request` once the content information (or
    /// the failure to get it) is in hand: planned by ``ResponsePlanner``,
    /// its body (if any) from `body`. Pure apart from `body`.
    static func mediaResponse(
        to request: HTTPRequest, origin: URL, information: Result<ContentInformation, StreamingError>,
        body: (Range<Int>) -> any BodyStream
    ) -> Response {
        let method = request.method
        let info: ContentInformation
        switch information {
        case .success(let value):
            info = value
        case .failure(let error):
            let (status, reason) = status(for: error)
            return .refusal(status, reason, method: method)
        }
        let representation = Representation(
            length: info.contentLength, mimeType: info.mimeType, etag: info.etag, lastModified: info.lastModified)
        let plan = ResponsePlanner.plan(method: method, request: request, representation: representation)
        guard let range = plan.body, !range.isEmpty else {
            return Response(
                head: plan.head, body: .message(method == "HEAD" ? Data() : Data(plan.message)),
                report: .served(origin: origin))
        }
        return Response(
            head: plan.head, body: .stream(body(range), length: range.count), report: .served(origin: origin))
    }

    /// The body a `GET` most likely gets, when it is known without the
    /// length: everything (no `Range`), or one `a-b` or `a-` range. `nil`
    /// for `HEAD`, suffix or several ranges, a first byte past every end,
    /// and conditional requests.
    static func likelyBody(_ request: HTTPRequest) -> Range<Int>? {
        guard request.method == "GET",
            ["If-None-Match", "If-Match", "If-Modified-Since"].allSatisfy({ request.header($0) == nil })
        else { return nil }
        guard let header = request.header("Range") else { return 0..<Int.max }
        guard let set = ByteRangeSet.parse(header) else { return 0..<Int.max }
        return set.bytesKnownBeforeLength
    }

    // MARK: HLS

    /// A playlist is read (or fetched) whole and rewritten; anything else is
    /// fetched into the store first, then sent from its entry in pieces of
    /// at most ``MediaServerConfiguration/responseBufferBytes``.
    private func hls(_ request: HTTPRequest, route: HLSRoute) -> PendingResponse {
        let hls = self.hls
        let address = self.address
        let piece = responseBufferBytes
        let wait = BlockingWait { () async throws(HLSResourceError) -> HLSAnswer in
            let (body, key, mimeType) = try await hls.response(for: route, address: address)
            return HLSAnswer(body: body, key: key, mimeType: mimeType)
        }
        return PendingResponse(
            timeout: .refusal(504, "the origin sent no HLS resource in time", method: request.method),
            wait: { deadline in
                wait.wait(until: deadline).map { outcome in
                    Self.hlsResponse(to: request, route: route, outcome: outcome) { key, version, range in
                        StoredBody(resources: hls.resources, key: key, version: version, range: range, piece: piece)
                    }
                }
            }, abandon: { wait.abandon() })
    }

    /// What the HLS responder gave for a route.
    struct HLSAnswer: Sendable {
        var body: HLSResourceBody
        var key: HLSResourceKey
        var mimeType: String
    }

    /// The answer to an HLS `request` once its resource (or the failure to
    /// get it) is in hand; a stored entry's bytes come from `stored`
    /// (key, entry version, range). Pure apart from `stored`.
    static func hlsResponse(
        to request: HTTPRequest, route: HLSRoute, outcome: Result<HLSAnswer, HLSResourceError>,
        stored: (HLSResourceKey, UInt64, Range<Int>) -> any BodyStream
    ) -> Response {
        let method = request.method
        let answer: HLSAnswer
        switch outcome {
        case .success(let value):
            answer = value
        case .failure(let error):
            let (status, reason) = status(for: error)
            return .refusal(status, reason, method: method)
        }
        let length: Int
        switch answer.body {
        case .bytes(let data): length = data.count
        case .stored(let info): length = info.length ?? info.cachedBytes
        }
        let plan = ResponsePlanner.plan(
            method: method, request: request, representation: Representation(length: length, mimeType: answer.mimeType))
        guard let range = plan.body, method != "HEAD", !range.isEmpty else {
            return Response(
                head: plan.head, body: .message(method == "HEAD" ? Data() : Data(plan.message)),
                report: .served(origin: route.origin))
        }
        switch answer.body {
        case .bytes(let data):
            let slice = data[data.startIndex + range.lowerBound..<data.startIndex + range.upperBound]
            return Response(head: plan.head, body: .bytes(Data(slice)), report: .served(origin: route.origin))
        case .stored(let info):
            return Response(
                head: plan.head, body: .stream(stored(answer.key, info.version, range), length: range.count),
                report: .served(origin: route.origin))
        }
    }

    // MARK: Statuses

    /// The answer when a streamed body gives no first byte (its head is not sent yet).
    static func firstBytesMissing(_ failure: FirstBytesFailure, method: String) -> Response {
        switch failure {
        case .failed(let error):
            let (status, reason) = status(for: error)
            return .refusal(status, reason, method: method)
        case .ended:
            return .refusal(502, "the origin ended the body before its first byte", method: method)
        case .timedOut:
            return .refusal(504, "the origin sent no byte of the body in time", method: method)
        }
    }

    /// The status a loader failure is answered with, before any body byte.
    static func status(for error: StreamingError) -> (Int, String) {
        switch error {
        case .origin(let origin):
            switch origin {
            case .httpStatus(let code, _) where code >= 400 && code < 500 && code != 416:
                return (code, "the origin answered \(code)")
            case .httpStatus(let code, _):
                return (502, "the origin answered \(code)")
            case .stalled:
                return (504, "the origin sent nothing in time")
            case .cancelled:
                return (503, "cancelled")
            default:
                return (502, "origin failure: \(String(describing: origin).prefix(160))")
            }
        case .store:
            return (500, "store failure")
        case .resourceChanged:
            return (502, "the resource changed at the origin while being read")
        case .outOfRange:
            return (416, "out of range")
        case .notCacheable(let reason):
            return (502, "not cacheable: \(reason.prefix(160))")
        case .cancelled:
            return (503, "cancelled")
        }
    }

    /// The status an HLS resource failure is answered with.
    static func status(for error: HLSResourceError) -> (Int, String) {
        switch error {
        case .streaming(let streaming): status(for: streaming)
        case .resourceTooLarge(_, _, let limit): (502, "resource too large (over \(limit) bytes)")
        default: (502, "\(String(describing: error).prefix(160))")
        }
    }
}

extension WaitStep {
    /// The value, if done, transformed by `transform`.
    func map<T>(_ transform: (Value) -> T) -> WaitStep<T> {
        switch self {
        case .done(let value): .done(transform(value))
        case .stopped: .stopped
        case .pending: .pending
        }
    }
}

/// The bytes `range` of version `version` of an HLS entry, read from the
/// store a piece of at most `piece` bytes at a time (what one response holds).
final class StoredBody: BodyStream, @unchecked Sendable {
    private let resources: HLSResourceStore
    private let key: HLSResourceKey
    private let version: UInt64
    private let range: Range<Int>
    private let piece: Int
    private let lock = NSLock()
    /// The next byte to read, and the read under way.
    private var offset: Int
    private var reading: (wanted: Range<Int>, wait: BlockingWait<Data, StreamingError>)?
    private var cancelled = false

    init(resources: HLSResourceStore, key: HLSResourceKey, version: UInt64, range: Range<Int>, piece: Int) {
        self.resources = resources
        self.key = key
        self.version = version
        self.range = range
        self.piece = max(1, piece)
        self.offset = range.lowerBound
    }

    func start() {}

    func next(until deadline: Date) -> BodyStep {
        let current = lock.withLock { () -> (Range<Int>, BlockingWait<Data, StreamingError>)? in
            guard !cancelled, offset < range.upperBound else { return nil }
            if let reading { return reading }
            let wanted = offset..<min(range.upperBound, offset + piece)
            let (resources, key, version) = (self.resources, self.key, self.version)
            let wait = BlockingWait { () async throws(StreamingError) -> Data in
                try await resources.read(key, range: wanted, version: version)
            }
            reading = (wanted, wait)
            return (wanted, wait)
        }
        guard let (wanted, wait) = current else {
            return lock.withLock { cancelled } ? .failed(.cancelled) : .end
        }
        switch wait.wait(until: deadline) {
        case .pending:
            return .pending
        case .stopped:
            return .failed(.cancelled)
        case .done(.failure(let error)):
            return .failed(error)
        case .done(.success(let data)):
            guard data.count == wanted.count else {
                return .failed(.origin(.truncated(expected: wanted.count, received: data.count)))
            }
            lock.withLock {
                reading = nil
                offset = wanted.upperBound
            }
            return .data([data])
        }
    }

    func cancel() {
        let wait = lock.withLock { () -> BlockingWait<Data, StreamingError>? in
            cancelled = true
            defer { reading = nil }
            return reading?.wait
        }
        wait?.abandon()
    }
}

import Foundation
import HLSPlaylist
import MediaStore
import Testing

@testable import MediaHLS
@testable import MediaStreaming

/// HLS resources from a hostile origin: a segment or key beyond its
/// limit (``HLSLimits``), announced or not, is refused, its transfer
/// stopped at once (the origin sees the client go) and nothing of it
/// stored; one within the limit is streamed into the store, never held
/// whole in memory.
@Suite("Hostile origin: HLS resource limits", .serialized, .timeLimit(.minutes(1)))
struct HLSResourceLimitTests {
    /// Bytes an origin may push beyond the limit before it sees the client
    /// go: the socket buffers of both ends and the pieces in flight.
    static let slack = 16 << 20
    /// The most anonymous memory the process may grow by while the fetches run.
    static let memoryBound = 100 << 20
    /// What each origin connection had sent when it ended, by path.
    final class Sent: @unchecked Sendable {
        private let lock = NSLock()
        private var bytes: [String: Int] = [:]

        func record(_ path: String, _ count: Int) { lock.withLock { bytes[path] = count } }
        var all: [String: Int] { lock.withLock { bytes } }
    }

    /// A cache over a fresh store whose origin is an `HTTPOrigin`, as the
    /// server's and `hls-get`'s are (no relay between it and the fetch).
    static func cache(_ limits: HLSLimits = HLSLimits()) throws -> (TestCache, StreamingCache) {
        let test = try TestCache()
        // A timeout no other suite uses: a URLSession of its own (origins
        // share one per timeout), so transfers it fails to cancel stay off
        // other suites' connections.
        let cache = StreamingCache(
            store: test.store, origin: HTTPOrigin(timeout: .seconds(4.75)),
            configuration: StreamingConfiguration(
                retryPolicy: RetryPolicy(maxRetries: 0), stallTimeout: .seconds(5), hlsLimits: limits))
        return (test, cache)
    }

    /// What the origin and the process see after a refusal: the body is
    /// dropped at once (this layer's part, asserted strictly above), but
    /// `HTTPOrigin` has no back-pressure (FoundationNetworking reads ahead
    /// of the reader, into memory) and FoundationNetworking may lose the
    /// cancel of a task dropped right after its head or while other tasks
    /// of its session run, so the transfer may go on to its end.
    static func originSide(_ body: () throws -> Void) {
        withKnownIssue("HTTPOrigin: no back-pressure; lost cancels (FoundationNetworking)", isIntermittent: true) {
            try body()
        }
    }

    static func resource(_ kind: HLSResourceKind, _ url: URL, in resources: HLSResourceStore) -> HLSResource {
        HLSResource(kind: kind, url: url, cacheKey: resources.resourceKey(for: url), playlistURL: nil)
    }

    /// Fetches each of `resources` at once; the failure of each (nil when it succeeded).
    static func fetchAll(_ list: [HLSResource], from resources: HLSResourceStore) async -> [HLSResourceError?] {
        await withTaskGroup(of: HLSResourceError?.self) { group in
            for resource in list {
                group.addTask {
                    do throws(HLSResourceError) {
                        _ = try await resources.resource(for: resource, metadata: EntryMetadata())
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            var failures: [HLSResourceError?] = []
            for await failure in group { failures.append(failure) }
            return failures
        }
    }

    @Test("A key announcing 1 GiB is refused before its body; the origin sees its client go")
    func announcedHugeKey() async throws {
        let sent = Sent()
        let origin = try ScriptedOrigin { request, reply in
            guard reply.head(status: 200, headers: ["Content-Length": "\(1 << 30)"]) else { return }
            // Announces 1 GiB; sends at most 256 MiB (a bounded test), as fast as taken.
            reply.flood(total: 256 << 20)
            sent.record(request.path, reply.sentBytes)
        }
        defer { origin.stop() }
        let (test, cache) = try Self.cache()
        let resources = HLSResourceStore(cache: cache)
        let key = Self.resource(.key, origin.url("/key.bin"), in: resources)
        let (failures, growth) = await ResidentMemory.peakGrowth { await Self.fetchAll([key], from: resources) }
        let limit = HLSLimits().maxKeyBytes
        guard case .resourceTooLarge(_, let bytes, let refusedAt)? = failures.first else {
            Issue.record("expected resourceTooLarge, got \(failures)")
            return
        }
        #expect(bytes == 1 << 30 && refusedAt == limit)
        #expect(try test.store.entries().isEmpty)
        await eventually("the origin connection ended") { sent.all.count == 1 }
        Self.originSide {
            #expect((sent.all.first?.value ?? .max) <= limit + Self.slack, "\(sent.all)")
            #expect(growth < Self.memoryBound, "grew by \(growth >> 20) MiB")
        }
    }

    @Test("A segment streaming 256 MiB without a length stops at the 64 MiB limit; nothing is kept")
    func unannouncedHugeSegment() async throws {
        let sent = Sent()
        let origin = try ScriptedOrigin { request, reply in
            guard reply.head(status: 200) else { return }
            reply.flood(total: 256 << 20)
            sent.record(request.path, reply.sentBytes)
        }
        defer { origin.stop() }
        let (test, cache) = try Self.cache()
        let resources = HLSResourceStore(cache: cache)
        let segment = Self.resource(.segment, origin.url("/segment.ts"), in: resources)
        let (failures, growth) = await ResidentMemory.peakGrowth { await Self.fetchAll([segment], from: resources) }
        let limit = HLSLimits().maxResourceBytes
        guard case .resourceTooLarge(_, let bytes, let refusedAt)? = failures.first else {
            Issue.record("expected resourceTooLarge, got \(failures)")
            return
        }
        #expect(bytes > limit && bytes <= limit + (1 << 20) && refusedAt == limit)
        #expect(try test.store.entries().isEmpty)
        await eventually("the origin connection ended") { sent.all.count == 1 }
        Self.originSide {
            #expect((sent.all.first?.value ?? .max) <= limit + Self.slack, "\(sent.all)")
            // Held whole, the segment is 64 MiB and more; streamed into the store, a few MiB.
            #expect(growth < 40 << 20, "grew by \(growth >> 20) MiB")
        }
    }

    @Test("Four segments streaming 64 MiB at once are each refused at a 16 MiB limit; nothing is kept")
    func unannouncedSegmentsAtOnce() async throws {
        let sent = Sent()
        let origin = try ScriptedOrigin { request, reply in
            guard reply.head(status: 200) else { return }
            reply.flood(total: 64 << 20)
            sent.record(request.path, reply.sentBytes)
        }
        defer { origin.stop() }
        let limit = 16 << 20
        let (test, cache) = try Self.cache(HLSLimits(maxResourceBytes: limit))
        let resources = HLSResourceStore(cache: cache)
        let segments = (0..<4).map { Self.resource(.segment, origin.url("/segment\($0).ts"), in: resources) }
        let (failures, growth) = await ResidentMemory.peakGrowth { await Self.fetchAll(segments, from: resources) }
        for failure in failures {
            guard case .resourceTooLarge(_, let bytes, let refusedAt)? = failure else {
                Issue.record("expected resourceTooLarge, got \(String(describing: failure))")
                continue
            }
            #expect(bytes > limit && bytes <= limit + (1 << 20) && refusedAt == limit)
        }
        #expect(try test.store.entries().isEmpty)
        await eventually("every origin connection ended") { sent.all.count == 4 }
        Self.originSide {
            for (path, bytes) in sent.all { #expect(bytes <= limit + Self.slack, "\(path): \(bytes) bytes sent") }
            #expect(growth < 40 << 20, "grew by \(growth >> 20) MiB")
        }
    }

    @Test("A 206 with another range than asked is refused at once; nothing is kept")
    func wrongContentRange() async throws {
        let sent = Sent()
        let origin = try ScriptedOrigin { request, reply in
            let headers = ["Content-Range": "bytes 0-\((64 << 20) - 1)/\(1 << 30)", "Content-Length": "\(64 << 20)"]
            guard reply.head(status: 206, headers: headers) else { return }
            reply.flood(total: 64 << 20)
            sent.record(request.path, reply.sentBytes)
        }
        defer { origin.stop() }
        let (test, cache) = try Self.cache()
        let resources = HLSResourceStore(cache: cache)
        let url = origin.url("/ranged.ts")
        let resource = HLSResource(
            kind: .segment, url: url, byteRange: ByteRange(offset: 1000, length: 5000),
            cacheKey: resources.resourceKey(for: url, byteRange: ByteRange(offset: 1000, length: 5000)),
            playlistURL: nil)
        let failures = await Self.fetchAll([resource], from: resources)
        guard case .streaming(.origin(.contentRangeMismatch))? = failures.first else {
            Issue.record("expected contentRangeMismatch, got \(failures)")
            return
        }
        #expect(try test.store.entries().isEmpty)
        await eventually("the origin connection ended") { sent.all.count == 1 }
        Self.originSide { #expect((sent.all.first?.value ?? .max) <= Self.slack, "\(sent.all)") }
    }

    @Test("A fetch cancelled mid-transfer stops the origin's transfer; nothing is kept")
    func cancelledMidTransfer() async throws {
        let sent = Sent()
        let origin = try ScriptedOrigin { request, reply in
            guard reply.head(status: 200, headers: ["Content-Length": "\(32 << 20)"]) else { return }
            reply.flood(total: 1 << 20)
            // The rest only once the client went (or 5 s passed).
            reply.pause(5)
            reply.flood(total: 31 << 20)
            sent.record(request.path, reply.sentBytes)
        }
        defer { origin.stop() }
        let (test, cache) = try Self.cache()
        let resources = HLSResourceStore(cache: cache)
        let resource = Self.resource(.segment, origin.url("/cancelled.ts"), in: resources)
        let fetching = Task { await Self.fetchAll([resource], from: resources) }
        await eventually("the origin was asked") { !origin.requests(to: "/cancelled.ts").isEmpty }
        try await Task.sleep(for: .milliseconds(100))
        fetching.cancel()
        let failures = await fetching.value
        #expect(failures.first??.isCancellation == true, "\(failures)")
        await eventually("the origin connection ended") { sent.all.count == 1 }
        #expect((sent.all.first?.value ?? .max) < 32 << 20)
        #expect(try test.store.entries().isEmpty)
    }

    @Test("A 20 MiB segment is streamed into the store byte-exact, never held whole")
    func segmentUnderTheLimit() async throws {
        let length = 20 << 20
        let origin = try ScriptedOrigin { request, reply in
            guard reply.head(status: 200, headers: ["Content-Length": "\(length)"]) else { return }
            var offset = 0
            while offset < length {
                let count = min(1 << 20, length - offset)
                guard reply.send(SelfDescribingBytes.bytes(offset..<offset + count, seed: 7)) else { return }
                offset += count
            }
        }
        defer { origin.stop() }
        let (_, cache) = try Self.cache()
        let resources = HLSResourceStore(cache: cache)
        let resource = Self.resource(.segment, origin.url("/big.ts"), in: resources)
        let (outcome, growth) = try await ResidentMemory.peakGrowth {
            try await resources.resource(for: resource, metadata: EntryMetadata())
        }
        guard case .stored(let info) = outcome.body else {
            Issue.record("expected a stored entry, got \(outcome.body)")
            return
        }
        #expect(outcome.fetched && info.length == length && info.isComplete)
        #expect(growth < 10 << 20, "grew by \(growth >> 20) MiB")
        var offset = 0
        while offset < length {
            let range = offset..<min(length, offset + (1 << 20))
            let piece = try await resources.read(resource.cacheKey, range: range, version: info.version)
            #expect(SelfDescribingBytes.matches(piece, at: offset, seed: 7), "bytes \(range)")
            offset = range.upperBound
        }
    }

    @Test("Limits of Int.max (no limit) fetch a segment and a playlist: the buffering bound above them saturates")
    func limitsOfIntMax() async throws {
        let playlist = Data("#EXTM3U\n#EXT-X-TARGETDURATION:4\n#EXTINF:4,\ns.ts\n#EXT-X-ENDLIST\n".utf8)
        let segment = Data((0..<5_000).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        let origin = try ScriptedOrigin { request, reply in
            reply.respond(body: request.path.hasSuffix(".m3u8") ? playlist : segment)
        }
        defer { origin.stop() }
        let (_, cache) = try Self.cache(HLSLimits(maxResourceBytes: .max, playlist: PlaylistLimits(maxBytes: .max)))
        let resources = HLSResourceStore(cache: cache)
        let fetched = try await resources.data(
            for: Self.resource(.segment, origin.url("/s.ts"), in: resources), metadata: EntryMetadata())
        #expect(fetched.data == segment)
        let list = try await resources.data(
            for: Self.resource(.mediaPlaylist, origin.url("/p.m3u8"), in: resources), metadata: EntryMetadata())
        #expect(list.data == playlist)
    }

    @Test("A byte-range segment answered with a 200 of the whole file gets the bytes of its range")
    func byteRangeAnsweredWholeIsCut() async throws {
        let file = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        // An origin that ignores Range: the whole file, 200.
        let origin = try ScriptedOrigin { _, reply in reply.respond(body: file) }
        defer { origin.stop() }
        let (_, cache) = try Self.cache()
        let resources = HLSResourceStore(cache: cache)
        let url = origin.url("/all.ts")
        let range = try #require(ByteRange(offset: 1_000, length: 5_000))
        let resource = HLSResource(
            kind: .segment, url: url, byteRange: range,
            cacheKey: HLSResourceKey(key: resources.resourceKey(for: url).key, byteRange: range), playlistURL: nil)
        let fetched = try await resources.data(for: resource, metadata: EntryMetadata())
        #expect(fetched.data == file[1_000..<6_000])
    }
}

import Foundation
import HLSPlaylist
import MediaStore
import MediaStreaming
import TestSupport
import Testing

@testable import MediaHLS
@testable import MediaServer

/// A media request whose entry is complete and fresh in the store is
/// answered at once, its body read from the entry on the connection's
/// thread (no loader task); anything else waits for the loader.
@Suite struct StoredMediaReplyTests {
    static let origin = URL(string: "https://cdn.example.com/a/stored.mp3")!

    /// A responder over a store in `directory`, with `configuration`.
    static func responder(
        _ store: MediaStore, configuration: StreamingConfiguration = StreamingConfiguration(),
        cache given: StreamingCache? = nil
    ) -> Responder {
        let cache = given ?? StreamingCache(store: store, origin: HTTPOrigin(), configuration: configuration)
        let permissions = OriginPermissions(allowlist: OriginAllowlist(), mintedBudget: 1 << 20)
        let router = ResponderTests.router()
        router.permissions.mint(origin)
        return Responder(
            router: router,
            address: LocalAddress(host: "127.0.0.1", port: ResponderTests.port, secret: ResponderTests.secret),
            loaders: LoaderPool(cache: cache),
            hls: HLSResponder(
                resources: HLSResourceStore(cache: cache), rewriteBudget: 1 << 20, permissions: permissions,
                activity: ServerActivity()),
            responseBufferBytes: 1 << 16)
    }

    static func get(_ range: String? = nil) -> HTTPRequest {
        ResponderTests.request(ResponderTests.mediaPath(origin), range.map { [("Range", $0)] } ?? [])
    }

    /// Stores `bytes` for ``origin`` (the default cache key) in chunks of 16 KiB, `complete` or with a hole.
    static func store(_ bytes: Data, complete: Bool = true, expiry: ExpiryPolicy = .never) throws -> (MediaStore, URL) {
        let directory = temporaryPath("stored-reply")
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16_384, initialMapSize: 64 << 20))
        let options = WriteOptions(
            expiry: expiry, metadata: EntryMetadata(mimeType: "audio/mpeg", etag: "\"v1\""))
        let version = try store.prepareEntry(forKey: origin.absoluteString, length: bytes.count, options: options)
            .version
        try store.write(bytes[0..<16_384], at: 0, forKey: origin.absoluteString, version: version)
        if complete {
            try store.write(bytes[16_384...], at: 16_384, forKey: origin.absoluteString, version: version)
        }
        return (store, directory)
    }

    @Test func aCompleteEntryIsAnsweredAtOnceFromTheStore() throws {
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let (store, directory) = try Self.store(bytes)
        defer { try? FileManager.default.removeItem(at: directory) }
        let cache = StreamingCache(store: store, origin: HTTPOrigin())
        guard case .now(let response) = Self.responder(store, cache: cache).respond(to: Self.get("bytes=20000-89999")),
            case .stream(let stream, let length) = response.body
        else {
            Issue.record("a cached range is not answered at once with a body")
            return
        }
        #expect(response.status == 206 && length == 70_000)
        #expect(response.head.value("Content-Range") == "bytes 20000-89999/100000")
        #expect(response.head.value("Content-Type") == "audio/mpeg")
        var body = Data()
        stream.start()
        loop: while true {
            switch stream.next(until: Date() + 1) {
            case .data(let pieces): body.append(contentsOf: pieces.reduce(Data(), +))
            case .end: break loop
            case .failed(let error):
                Issue.record("the stored body failed: \(error)")
                break loop
            case .pending:
                Issue.record("a stored body waited")
                break loop
            }
        }
        #expect(body == bytes[20_000..<90_000])
        // Counted as bytes served from the store, as the loader's own reads are.
        #expect(cache.statistics.bytesServedFromStore == 70_000)
        #expect(cache.statistics.bytesServedFromOrigin == 0)
    }

    @Test func aPartialOrExpiredEntryOrARevalidatingCacheWaitsForTheLoader() throws {
        let bytes = Data(repeating: 5, count: 40_000)
        let (partial, partialDirectory) = try Self.store(bytes, complete: false)
        defer { try? FileManager.default.removeItem(at: partialDirectory) }
        if case .now = Self.responder(partial).respond(to: Self.get("bytes=0-99")) {
            Issue.record("a partial entry was answered from the store")
        }
        let (expired, expiredDirectory) = try Self.store(bytes, expiry: .at(Date(timeIntervalSinceNow: -10)))
        defer { try? FileManager.default.removeItem(at: expiredDirectory) }
        if case .now = Self.responder(expired).respond(to: Self.get("bytes=0-99")) {
            Issue.record("an expired entry was answered from the store")
        }
        let (fresh, freshDirectory) = try Self.store(bytes)
        defer { try? FileManager.default.removeItem(at: freshDirectory) }
        let revalidating = Self.responder(fresh, configuration: StreamingConfiguration(alwaysRevalidate: true))
        if case .now = revalidating.respond(to: Self.get("bytes=0-99")) {
            Issue.record("a cache that always revalidates answered from the store")
        }
    }

    @Test func aReplacedEntryFailsTheBodyInsteadOfMixingVersions() throws {
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        let (store, directory) = try Self.store(bytes)
        defer { try? FileManager.default.removeItem(at: directory) }
        guard case .now(let response) = Self.responder(store).respond(to: Self.get()),
            case .stream(let stream, _) = response.body
        else {
            Issue.record("a cached entry is not answered at once with a body")
            return
        }
        guard case .data(let first) = stream.next(until: Date() + 1) else {
            Issue.record("no first piece")
            return
        }
        #expect(first.reduce(0) { $0 + $1.count } == 1 << 16)
        try store.put(Data(repeating: 9, count: 100_000), forKey: Self.origin.absoluteString)
        guard case .failed = stream.next(until: Date() + 1) else {
            Issue.record("the body went on after its entry was replaced")
            return
        }
    }
}

/// The type of a complete entry stored as generic is sniffed from its
/// first bytes once per entry version: a replaced entry is sniffed again.
@Suite struct StoredMediaSniffingTests {
    /// Stores `bytes` as a complete entry of ``StoredMediaReplyTests/origin`` declared `application/octet-stream`.
    static func storeGeneric(_ bytes: Data, in store: MediaStore) throws {
        let key = StoredMediaReplyTests.origin.absoluteString
        let options = WriteOptions(
            expiry: .never, metadata: EntryMetadata(mimeType: "application/octet-stream", etag: "\"v\(bytes.count)\""))
        let version = try store.prepareEntry(forKey: key, length: bytes.count, options: options).version
        try store.write(bytes, at: 0, forKey: key, version: version)
    }

    static func contentType(_ responder: Responder) -> String? {
        guard case .now(let response) = responder.respond(to: StoredMediaReplyTests.get("bytes=0-1")) else {
            return nil
        }
        return response.head.value("Content-Type")
    }

    @Test func aGenericEntryIsSniffedOncePerVersion() throws {
        let directory = temporaryPath("stored-sniff")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try MediaStore(
            directory: directory, configuration: StoreConfiguration(chunkSize: 16_384, initialMapSize: 64 << 20))
        let responder = StoredMediaReplyTests.responder(store)
        try Self.storeGeneric(Data("ID3".utf8) + Data(repeating: 0x11, count: 40_000), in: store)
        #expect(Self.contentType(responder) == "audio/mpeg")
        #expect(responder.sniffedTypes.count == 1)
        #expect(Self.contentType(responder) == "audio/mpeg")
        // Replaced by other bytes (a new version): sniffed again, never the old version's type.
        try Self.storeGeneric(Data("fLaC".utf8) + Data(repeating: 0x22, count: 30_000), in: store)
        #expect(Self.contentType(responder) == "audio/flac")
        #expect(responder.sniffedTypes.count == 1)
    }

    @Test func theKnownTypesAreBounded() {
        let types = SniffedTypes(capacity: 3)
        for index in 0..<10 { types.remember("audio/mpeg", forKey: "k\(index)", version: 1, declared: nil) }
        #expect(types.count <= 3)
        #expect(types.type(forKey: "k9", version: 1, declared: nil) == "audio/mpeg")
        #expect(types.type(forKey: "k9", version: 2, declared: nil) == nil)
        #expect(types.type(forKey: "k9", version: 1, declared: "text/plain") == nil)
    }
}

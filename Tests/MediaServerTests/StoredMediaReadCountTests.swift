import Foundation
import MediaStore
import MediaStreaming
import TestSupport
import Testing

@testable import MediaServer

/// A request for a complete stored entry reads the entry's info and the
/// head of its body in one read of the store (one transaction): a small
/// range needs no other read; a longer one reads its later pieces bound
/// to the same version.
@Suite struct StoredMediaReadCountTests {
    /// The store reads a responder made, by kind.
    final class Counts: @unchecked Sendable {
        private let lock = NSLock()
        private var heads = 0
        private var pieces = 0

        var current: (heads: Int, pieces: Int) { lock.withLock { (heads, pieces) } }

        /// ``StoreReads/direct``, counted.
        var reads: StoreReads {
            StoreReads(
                infoAndBytes: { store, key, offset, maxBytes throws(StoreError) in
                    self.lock.withLock { self.heads += 1 }
                    return try StoreReads.direct.infoAndBytes(store, key, offset, maxBytes)
                },
                piece: { store, key, range, version throws(StoreError) in
                    self.lock.withLock { self.pieces += 1 }
                    return try StoreReads.direct.piece(store, key, range, version)
                })
        }
    }

    /// The body `response` streams, read to its end.
    static func drain(_ response: Response) -> Data? {
        guard case .stream(let stream, _) = response.body else { return nil }
        var body = Data()
        stream.start()
        while true {
            switch stream.next(until: Date() + 1) {
            case .data(let pieces): body.append(contentsOf: pieces.reduce(Data(), +))
            case .end: return body
            case .failed, .pending: return nil
            }
        }
    }

    @Test(arguments: [
        // (Range header, body expected, reads of later pieces expected); 64 KiB pieces.
        ("bytes=0-1", 0..<2, 0),
        ("bytes=99990-", 99_990..<100_000, 0),
        ("bytes=1000-66535", 1_000..<66_536, 0),
        ("bytes=20000-89999", 20_000..<90_000, 1),
        ("bytes=-10", 99_990..<100_000, 1),
    ])
    func aStoredRequestReadsTheStoreOnceForItsHead(range: String, expected: Range<Int>, laterPieces: Int) throws {
        let bytes = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) })
        let (store, directory) = try StoredMediaReplyTests.store(bytes)
        defer { try? FileManager.default.removeItem(at: directory) }
        let counts = Counts()
        var responder = StoredMediaReplyTests.responder(store)
        responder.storeReads = counts.reads
        guard case .now(let response) = responder.respond(to: StoredMediaReplyTests.get(range)) else {
            Issue.record("a cached range is not answered at once")
            return
        }
        #expect(response.status == 206)
        #expect(Self.drain(response) == bytes[expected])
        #expect(counts.current == (1, laterPieces))
    }

    @Test func aHeadRequestReadsTheStoreOnce() throws {
        let (store, directory) = try StoredMediaReplyTests.store(Data(repeating: 1, count: 40_000))
        defer { try? FileManager.default.removeItem(at: directory) }
        let counts = Counts()
        var responder = StoredMediaReplyTests.responder(store)
        responder.storeReads = counts.reads
        let request = ResponderTests.request(ResponderTests.mediaPath(StoredMediaReplyTests.origin), method: "HEAD")
        guard case .now(let response) = responder.respond(to: request) else {
            Issue.record("a HEAD of a cached entry is not answered at once")
            return
        }
        #expect(response.status == 200 && response.head.value("Content-Length") == "40000")
        #expect(counts.current == (1, 0))
    }
}

import Foundation
import MediaStore
import MediaStreaming
import TestSupport
import Testing

/// A fast origin and a reader that stops or falls behind: the bytes
/// buffered in the process stay bounded (the transfer ends once the
/// reader is ``OriginLimits/bufferedBodyBytes`` behind, and the reader
/// gets a typed error after what was buffered); a reader that keeps up
/// gets every byte.
@Suite("Hostile origin: a reader falling behind the body")
struct SlowReaderTests {
    /// Resident memory of this process, in bytes (`/proc/self/statm`).
    static func residentBytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { throw FixtureFailure(message: "statm: \(text)") }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// The origin sends its body in pieces of this size, each one byte repeated.
    static let piece = 64 << 10

    /// The byte at `offset` of the origin's body: the index of its piece, modulo 251.
    static func byte(at offset: Int) -> UInt8 { UInt8((offset / piece) % 251) }

    /// An origin sending `length` bytes as fast as the client takes them,
    /// at most 64 KiB a millisecond (a 500 Mbit/s link); `sent` counts them.
    ///
    /// Not faster: FoundationNetworking hands every piece libcurl reads to
    /// the delegate queue without back-pressure, so an origin that outruns
    /// that queue (a loopback one at full speed) is read ahead of the
    /// check by as much as the queue lags.
    static func origin(length: Int, sent: Locked<Int>) throws -> ScriptedOrigin {
        try ScriptedOrigin { _, reply in
            guard reply.head(status: 200, headers: ["Content-Length": String(length)]) else { return }
            var offset = 0
            while offset < length {
                let count = min(piece, length - offset)
                guard reply.send(Data(repeating: byte(at: offset), count: count)), reply.pause(0.001) else { return }
                offset += count
                sent.withLock { $0 = offset }
            }
        }
    }

    @Test func aStoppedReaderEndsTheTransferWithMemoryBounded() async throws {
        let sent = Locked(0)
        let length = 256 << 20
        let origin = try Self.origin(length: length, sent: sent)
        defer { origin.stop() }
        let before = try Self.residentBytes()
        let client = HTTPOrigin(timeout: 10, limits: OriginLimits(bufferedBodyBytes: 4 << 20))
        let response = try await client.fetch(OriginRequest(url: origin.url("/fast")))
        var iterator = response.body.makeAsyncIterator()
        var received = try await iterator.next()?.count ?? 0
        // The reader stops: the transfer ends once it is 4 MiB behind.
        for _ in 0..<500 where origin.openConnections > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(origin.openConnections == 0)
        let growth = try Self.residentBytes() - before
        #expect(sent.current < 48 << 20, "the origin sent \(sent.current >> 20) MiB to a stopped reader")
        #expect(growth < 64 << 20, "resident memory grew \(growth >> 20) MiB")
        // The reader gets what was buffered, then the typed error.
        var failure: (any Error)?
        do {
            while let piece = try await iterator.next() { received += piece.count }
        } catch {
            failure = error
        }
        guard case .readerTooSlow(let buffered) = failure as? OriginError else {
            Issue.record("expected readerTooSlow, got \(String(describing: failure)) after \(received) bytes")
            return
        }
        #expect(buffered <= 4 << 20)
        #expect(received <= 5 << 20)
    }

    @Test func aReaderThatKeepsUpGetsEveryByteInOrder() async throws {
        let sent = Locked(0)
        let length = 24 << 20
        let origin = try Self.origin(length: length, sent: sent)
        defer { origin.stop() }
        let client = HTTPOrigin(timeout: 10, limits: OriginLimits(bufferedBodyBytes: 2 << 20))
        let response = try await client.fetch(OriginRequest(url: origin.url("/all")))
        var offset = 0
        var mismatches = 0
        for try await piece in response.body {
            // The first and last byte of every piece: a piece lost, repeated or reordered shows.
            if let first = piece.first, let last = piece.last,
                first != Self.byte(at: offset) || last != Self.byte(at: offset + piece.count - 1)
            {
                mismatches += 1
            }
            offset += piece.count
        }
        #expect(offset == length)
        #expect(mismatches == 0)
    }
}

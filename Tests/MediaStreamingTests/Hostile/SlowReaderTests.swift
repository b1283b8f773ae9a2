import Foundation
import MediaStore
import MediaStreaming
import MediaSupport
import TestSupport
import Testing

/// A fast origin and a reader that stops or falls behind: the bytes
/// buffered in the process stay bounded (the transfer ends once the
/// reader is ``OriginLimits/bufferedBodyBytes`` behind, and the reader
/// gets a typed error after what was buffered); a reader that asks again
/// from where it got to gets every byte, in order.
@Suite("Hostile origin: a reader falling behind the body")
struct SlowReaderTests {
    /// Resident memory of this process, in bytes (`/proc/self/statm`).
    static func residentBytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { throw FixtureFailure(message: "statm: \(text)") }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// A session of its own (origins share one per timeout): these transfers
    /// do not hold up the callbacks of other suites' origins, nor theirs these.
    static let timeout: TimeInterval = 7

    /// The origin sends its body in pieces of this size, each one byte repeated.
    static let piece = 64 << 10

    /// The byte at `offset` of the origin's body: the index of its piece, modulo 251.
    static func byte(at offset: Int) -> UInt8 { UInt8((offset / piece) % 251) }

    /// An origin sending `length` bytes (from the start of a `Range`) as fast
    /// as the client takes them, at most 64 KiB every `pause` seconds (by
    /// default a millisecond: a 500 Mbit/s link); `sent` counts them.
    ///
    /// Not faster: FoundationNetworking hands every piece libcurl reads to
    /// the delegate queue without back-pressure, so an origin that outruns
    /// that queue (a loopback one at full speed) is read ahead of the
    /// check by as much as the queue lags.
    static func origin(length: Int, sent: Locked<Int>, pause: Double = 0.001) throws -> ScriptedOrigin {
        try ScriptedOrigin { request, reply in
            var offset = request.range?.lowerBound ?? 0
            var headers = ["Content-Length": String(length - offset)]
            if request.range != nil { headers["Content-Range"] = "bytes \(offset)-\(length - 1)/\(length)" }
            guard reply.head(status: request.range == nil ? 200 : 206, headers: headers) else { return }
            while offset < length {
                // To the end of its piece: a range may start inside one.
                let count = min(piece - offset % piece, length - offset)
                guard reply.send(Data(repeating: byte(at: offset), count: count)), reply.pause(pause) else { return }
                offset += count
                sent.withLock { $0 = offset }
            }
        }
    }

    @Test func aStoppedReaderEndsTheTransferWithMemoryBounded() async throws {
        let sent = Locked(0)
        let length = 256 << 20
        // 16 MiB/s: the bytes the delegate queue's lag lets through (seen
        // up to 1.3 s under load) stay under the bound below, while a
        // transfer that does not end would still be sending at the check.
        let origin = try Self.origin(length: length, sent: sent, pause: 0.004)
        defer { origin.stop() }
        let before = try Self.residentBytes()
        let client = HTTPOrigin(timeout: .seconds(Self.timeout), limits: OriginLimits(bufferedBodyBytes: 4 << 20))
        let response = try await client.fetch(OriginRequest(url: origin.url("/fast")))
        var iterator = response.body.makeAsyncIterator()
        var received = try await iterator.next()?.count ?? 0
        // The reader stops: the transfer ends once it is 4 MiB behind.
        for _ in 0..<800 where origin.openConnections > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(origin.openConnections == 0)
        let growth = try Self.residentBytes() - before
        #expect(sent.current < 48 << 20, "the origin sent \(sent.current >> 20) MiB to a stopped reader")
        // The whole process: suites running alongside allocate too (up to
        // 120 MiB seen); the 256 MiB body held would be over it.
        #expect(growth < 192 << 20, "resident memory grew \(growth >> 20) MiB")
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

    @Test func aSlowReaderGoesOnByAskingAgainFromWhereItGotTo() async throws {
        let sent = Locked(0)
        let length = 24 << 20
        let origin = try Self.origin(length: length, sent: sent)
        defer { origin.stop() }
        let client = HTTPOrigin(timeout: .seconds(Self.timeout), limits: OriginLimits(bufferedBodyBytes: 1 << 20))
        var offset = 0
        var mismatches = 0
        var pieces = 0
        var endedTooSlow = 0
        while offset < length, origin.requests.count < 100 {
            let response = try await client.fetch(
                OriginRequest(url: origin.url("/all"), range: offset == 0 ? nil : offset..<length))
            do {
                for try await piece in response.body {
                    // The first and last byte of every piece: a piece lost, repeated or reordered shows.
                    if let first = piece.first, let last = piece.last,
                        first != Self.byte(at: offset) || last != Self.byte(at: offset + piece.count - 1)
                    {
                        mismatches += 1
                    }
                    offset += piece.count
                    pieces += 1
                    // A slow reader: now and then it falls behind.
                    if pieces % 32 == 0 { try await Task.sleep(for: .milliseconds(50)) }
                }
            } catch OriginError.readerTooSlow(let buffered) {
                #expect(buffered <= 1 << 20)
                endedTooSlow += 1
            }
        }
        #expect(offset == length)
        #expect(mismatches == 0)
        // Every request brings what was buffered (about 1 MiB) at least.
        #expect(origin.requests.count == endedTooSlow + 1)
        #expect(origin.requests.count <= 26)
    }
}

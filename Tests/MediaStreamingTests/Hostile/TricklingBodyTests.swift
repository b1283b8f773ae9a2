import Foundation
import TestSupport
import Testing

@testable import MediaStreaming

/// An origin that trickles its body (never idle, never useful) is cut off
/// by the low-speed limit with a typed error; one that sends fast enough
/// is not.
@Suite("Hostile origin: trickling body")
struct TricklingBodyTests {
    /// 1,000 bytes a second averaged over 1 s.
    static let limits = OriginLimits(lowSpeedBytesPerSecond: 1000, lowSpeedWindow: .seconds(1))
    /// A session of its own (origins share one per timeout): the callbacks
    /// of other suites' transfers do not delay these.
    static let timeout: TimeInterval = 9

    /// An origin that announces `length` bytes and sends `piece` bytes every 100 ms until the client goes.
    static func origin(length: Int, piece: Int) throws -> ScriptedOrigin {
        try ScriptedOrigin { request, reply in
            let range = request.range.map { $0.lowerBound..<min($0.upperBound, length) } ?? 0..<length
            var headers = ["Content-Type": "audio/mpeg", "ETag": "\"v1\"", "Content-Length": String(range.count)]
            if request.range != nil {
                headers["Content-Range"] = "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(length)"
            }
            guard reply.head(status: request.range == nil ? 200 : 206, headers: headers) else { return }
            var sent = 0
            while sent < range.count, reply.pause(0.1) {
                let count = min(piece, range.count - sent)
                guard reply.send(Data(repeating: 0x5A, count: count)) else { return }
                sent += count
            }
        }
    }

    static func seconds(since start: ContinuousClock.Instant) -> Double {
        let elapsed = ContinuousClock.now - start
        return Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    }

    @Test func aBodyOfOneByteEvery100msFailsTooSlowWithinTwoSeconds() async throws {
        let origin = try Self.origin(length: 10_000, piece: 1)
        defer { origin.stop() }
        let response = try await HTTPOrigin(timeout: .seconds(Self.timeout), limits: Self.limits).fetch(
            OriginRequest(url: origin.url("/t")))
        let start = ContinuousClock.now
        var received = 0
        var failure: (any Error)?
        do {
            for try await piece in response.body { received += piece.count }
        } catch {
            failure = error
        }
        let elapsed = Self.seconds(since: start)
        guard case .tooSlow(let bytes, let seconds) = failure as? OriginError else {
            Issue.record("expected tooSlow, got \(String(describing: failure)) after \(received) bytes")
            return
        }
        #expect(bytes < 1000 && seconds >= 1)
        // About 1.1 s alone; the full parallel run on a busy machine stretches
        // every test (to 25 s here). Without the limit: 1,000 s.
        #expect(elapsed < 120, "failed after \(elapsed) s")
        // The transfer was cancelled: the origin sees its client go.
        for _ in 0..<300 where origin.openConnections > 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(origin.openConnections == 0)
    }

    @Test func aBodyFastEnoughIsNotCutOff() async throws {
        // 1,000 bytes every 100 ms (10,000 B/s) for 2.5 s: three windows,
        // each ten times the limit (a busy machine delays the origin's pieces).
        let origin = try Self.origin(length: 25_000, piece: 1000)
        defer { origin.stop() }
        let response = try await HTTPOrigin(timeout: .seconds(Self.timeout), limits: Self.limits).fetch(
            OriginRequest(url: origin.url("/f")))
        var received = 0
        for try await piece in response.body { received += piece.count }
        #expect(received == 25_000)
    }

    @Test func thePlayerGetsTooSlowThroughTheLoader() async throws {
        let origin = try Self.origin(length: 100_000, piece: 1)
        defer { origin.stop() }
        let cache = try TestCache(
            configuration: StreamingConfiguration(
                chunksPerRequest: 2, retryPolicy: RetryPolicy(maxRetries: 0), stallTimeout: .seconds(10)),
            origin: HTTPOrigin(timeout: .seconds(Self.timeout), limits: Self.limits))
        let start = ContinuousClock.now
        let outcome = await cache.player(origin.url("/slow.mp3")).load(contentInformation: true, offset: 0, length: nil)
        let elapsed = Self.seconds(since: start)
        guard case .origin(.tooSlow) = outcome.error else {
            Issue.record("expected tooSlow, got \(String(describing: outcome.error))")
            return
        }
        // About 1.1 s alone (see above).
        #expect(elapsed < 120, "failed after \(elapsed) s")
    }
}

/// The low-speed meter on its own, on a made-up clock.
@Suite("Body speed meter")
struct BodySpeedMeterTests {
    static let start = ContinuousClock.now

    static func at(_ seconds: Double) -> ContinuousClock.Instant { start + .milliseconds(Int(seconds * 1000)) }

    @Test func aWindowBelowTheLimitTrips() {
        var meter = BodySpeedMeter(
            limits: OriginLimits(lowSpeedBytesPerSecond: 1000, lowSpeedWindow: .seconds(1)), now: Self.start)
        for tenth in 1..<10 { #expect(meter.received(1, at: Self.at(Double(tenth) / 10)) == nil) }
        let slow = meter.received(1, at: Self.at(1.0))
        #expect(slow?.bytes == 10)
    }

    @Test func windowsAboveTheLimitNeverTrip() {
        var meter = BodySpeedMeter(
            limits: OriginLimits(lowSpeedBytesPerSecond: 1000, lowSpeedWindow: .seconds(1)), now: Self.start)
        for tenth in 1...100 { #expect(meter.received(150, at: Self.at(Double(tenth) / 10)) == nil) }
    }

    @Test func zeroTurnsTheCheckOff() {
        var meter = BodySpeedMeter(
            limits: OriginLimits(lowSpeedBytesPerSecond: 0, lowSpeedWindow: .seconds(1)), now: Self.start)
        #expect(meter.received(1, at: Self.at(100)) == nil)
    }
}

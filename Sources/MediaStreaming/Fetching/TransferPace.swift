import Foundation

/// How fast a running transfer goes, measured on its current response:
/// what decides whether a reader ahead of it waits for it or asks the
/// origin for its bytes itself. Pure.
///
/// Waiting costs the time the transfer takes to reach the reader's offset
/// at its measured rate, plus a round trip when the offset lies past the
/// end of its current request (it must ask again). A request of the
/// reader's own costs about two round trips: the transfer holds its
/// connection, so the request goes on a new one (a handshake, then the
/// request). The round trip is the time the transfer's request took to
/// bring its response head.
struct TransferPace: Sendable, Equatable {
    /// From sending the request to its response head.
    var headLatency: Duration
    /// When the response head came, and the transfer's position then.
    var responseStart: ContinuousClock.Instant
    var startPosition: Int
    /// One past the last byte the current request asks for.
    var requestEnd: Int

    /// Bytes per second received since the head, once the body has run for
    /// at least a round trip and brought a byte; `nil` before (too early to tell).
    func bytesPerSecond(position: Int, now: ContinuousClock.Instant) -> Double? {
        let elapsed = (now - responseStart).inSeconds
        let received = position - startPosition
        guard received > 0, elapsed > 0, now - responseStart >= headLatency else { return nil }
        return Double(received) / elapsed
    }

    /// Whether a reader at `offset` gets its first byte sooner by waiting
    /// for the transfer (now at `position`) than by a request of its own;
    /// `nil` when the pace is not known yet.
    func isWorthWaiting(for offset: Int, position: Int, now: ContinuousClock.Instant) -> Bool? {
        let gap = offset - position
        if gap <= 0 { return true }
        guard let rate = bytesPerSecond(position: position, now: now) else { return nil }
        let latency = headLatency.inSeconds
        let waiting = Double(gap) / rate + (offset >= requestEnd ? latency : 0)
        return waiting <= 2 * latency
    }
}

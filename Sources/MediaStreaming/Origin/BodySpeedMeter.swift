import Foundation
import MediaSupport

/// Judges a body's speed against ``OriginLimits/lowSpeedBytesPerSecond``:
/// the bytes received since the window opened, averaged once the window
/// has passed; then a new window opens (``restart(at:)``, also when the
/// response head arrives).
struct BodySpeedMeter: Sendable {
    let bytesPerSecond: Int
    let window: TimeInterval
    private var start: ContinuousClock.Instant
    private var bytes = 0

    init(limits: OriginLimits, now: ContinuousClock.Instant) {
        self.bytesPerSecond = limits.lowSpeedBytesPerSecond
        self.window = limits.lowSpeedWindow.inSeconds
        self.start = now
    }

    /// Opens a new window at `now`.
    mutating func restart(at now: ContinuousClock.Instant) {
        start = now
        bytes = 0
    }

    /// Counts `count` bytes received at `now`; returns the bytes and
    /// seconds of a window that passed below the limit, else `nil`.
    mutating func received(_ count: Int, at now: ContinuousClock.Instant) -> (bytes: Int, seconds: Double)? {
        bytes += count
        guard bytesPerSecond > 0 else { return nil }
        let elapsed = now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        guard seconds >= window else { return nil }
        if Double(bytes) < Double(bytesPerSecond) * seconds { return (bytes, seconds) }
        restart(at: now)
        return nil
    }
}

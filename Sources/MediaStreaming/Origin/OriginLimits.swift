import Foundation

/// The bounds an ``HTTPOrigin`` holds every response body to: a minimum
/// speed (an origin trickling bytes is never idle, so an idle timeout
/// alone never ends it) and the bytes buffered for a reader that does not
/// keep up.
///
/// ```swift
/// let origin = HTTPOrigin(limits: OriginLimits(lowSpeedBytesPerSecond: 4096, lowSpeedWindow: .seconds(20)))
/// ```
public struct OriginLimits: Sendable, Equatable {
    /// The low-speed limit, like curl's `--speed-limit`: a body that brings
    /// fewer than this many bytes a second on average over
    /// ``lowSpeedWindow`` fails with ``OriginError/tooSlow(bytes:seconds:)``
    /// and its transfer is cancelled. 0 turns the check off.
    ///
    /// 1,024 by default: a quarter of a 32 kbit/s audio stream, and far
    /// below the slowest mobile link that can play anything (GPRS carries
    /// 4–5 KiB/s), so only an origin that is stuck or hostile trips it.
    public var lowSpeedBytesPerSecond: Int
    /// The time the average speed is taken over, like curl's `--speed-time`.
    /// 30 s by default: long enough to ride out a tunnel or a cell handover.
    public var lowSpeedWindow: Duration
    /// Bytes of one body received from the network and not yet taken by
    /// its reader. Past it the transfer is cancelled and the body ends,
    /// after the bytes already buffered, with
    /// ``OriginError/readerTooSlow(bufferedBytes:)`` (transient: the
    /// reader asks again from where it got to). 4 MiB by default: seconds
    /// of a 1080p stream, and four of a loader's requests (1 MiB each).
    ///
    /// FoundationNetworking cannot pause a transfer (`suspend()` drops the
    /// connection and `resume()` sends the request again), hence no
    /// pausing. It also hands every piece it reads to the session's
    /// delegate queue without back-pressure: an origin faster than that
    /// queue (a loopback one at full speed) is read ahead of this check by
    /// as much as the queue lags.
    public var bufferedBodyBytes: Int

    /// - parameter lowSpeedBytesPerSecond: the minimum average speed of a body (0: none).
    /// - parameter lowSpeedWindow: the time that speed is averaged over (at least 1 ms).
    /// - parameter bufferedBodyBytes: the bytes buffered per body for a reader that does not keep up.
    public init(
        lowSpeedBytesPerSecond: Int = 1024, lowSpeedWindow: Duration = .seconds(30), bufferedBodyBytes: Int = 4 << 20
    ) {
        self.lowSpeedBytesPerSecond = max(0, lowSpeedBytesPerSecond)
        self.lowSpeedWindow = max(.milliseconds(1), lowSpeedWindow)
        self.bufferedBodyBytes = max(1, bufferedBodyBytes)
    }
}

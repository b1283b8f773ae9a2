/// When an origin request that failed is tried again, and after how long:
/// the one retry policy of a cache's transfers and HLS resource fetches.
///
/// Only transient failures are retried (``isTransient(_:)``), at most
/// ``maxRetries`` times in a row; the wait before retry `n` is
/// ``initialBackoff`` doubled `n - 1` times, at most ``maxBackoff``. Pure.
public struct RetryPolicy: Sendable, Equatable {
    /// Retries in a row of requests that failed transiently. A transfer
    /// counts only requests that brought no byte it keeps (one that brings
    /// some starts the count again). 2 by default.
    public var maxRetries: Int
    /// The wait before the first retry. 50 ms by default.
    public var initialBackoff: Duration
    /// The longest wait before a retry. 2 s by default.
    public var maxBackoff: Duration

    public init(maxRetries: Int = 2, initialBackoff: Duration = .milliseconds(50), maxBackoff: Duration = .seconds(2)) {
        self.maxRetries = max(0, maxRetries)
        self.initialBackoff = max(.zero, initialBackoff)
        self.maxBackoff = max(.zero, maxBackoff)
    }

    /// No retry at all.
    public static let never = RetryPolicy(maxRetries: 0)

    /// The wait before retry number `retry` (1 for the first), or `nil`
    /// when `retry` is past ``maxRetries``.
    public func delay(beforeRetry retry: Int) -> Duration? {
        guard retry >= 1, retry <= maxRetries else { return nil }
        // Doubled one step at a time and only while under the cap: a
        // product past the cap could overflow `Duration` and trap.
        var wait = min(initialBackoff, maxBackoff)
        var doublings = retry - 1
        while doublings > 0, wait > .zero, wait < maxBackoff {
            wait = wait > maxBackoff / 2 ? maxBackoff : wait * 2
            doublings -= 1
        }
        return wait
    }

    /// The wait before retry number `retry` after `error`, or `nil` when
    /// the request fails now: `error` is not transient or the retries are spent.
    public func delay(after error: StreamingError, retry: Int) -> Duration? {
        Self.isTransient(error) ? delay(beforeRetry: retry) : nil
    }

    /// Whether `error` may pass when the request is sent again: an origin
    /// failure that is transient (``OriginError/isTransient``: a dropped
    /// connection, a stall, a slow or truncated body, 5xx, 408, 429).
    /// Store failures, cancellation, a changed resource or a refused
    /// response are not.
    public static func isTransient(_ error: StreamingError) -> Bool {
        if case .origin(let origin) = error { return origin.isTransient }
        return false
    }
}

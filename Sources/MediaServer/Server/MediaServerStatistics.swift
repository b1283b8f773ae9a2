/// Counters of a ``MediaServer`` since it was made.
public struct MediaServerStatistics: Sendable, Equatable {
    /// Connections accepted (served or refused).
    public var connectionsAccepted = 0
    /// Connections answered 503 because ``MediaServerConfiguration/maxConnections`` were open.
    public var connectionsRefused = 0
    /// Connections open now.
    public var activeConnections = 0
    /// Requests parsed (any status).
    public var requests = 0
    /// Requests answered 2xx or 304.
    public var successes = 0
    /// Requests answered 4xx (bad request, forbidden, not allowed, too large, timeouts…).
    public var clientErrors = 0
    /// Requests answered 5xx (origin failures mapped to 502/504, limits to 503).
    public var serverErrors = 0
    /// Media body bytes written to clients.
    public var bodyBytesSent = 0
    /// Responses cut short after the body began (client gone or too slow, or an origin failure).
    public var responsesCut = 0
    /// Times the listening socket was found dead and opened again.
    public var listenerRestarts = 0
    /// Waits on the origin that passed ``MediaServerConfiguration/originWaitTimeout``
    /// (answered 504 before the head, cut short after).
    public var originWaitsTimedOut = 0
    /// Connections whose client hung up while they waited on the origin (the loading was cancelled).
    public var clientsGoneWhileWaiting = 0

    public init() {}
}

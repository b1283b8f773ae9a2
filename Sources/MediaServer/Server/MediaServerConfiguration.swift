import Foundation

/// How a ``MediaServer`` listens and what it accepts.
public struct MediaServerConfiguration: Sendable {
    /// Where the server listens.
    public enum Binding: Sendable, Equatable {
        /// `127.0.0.1` only: other machines cannot connect. The default.
        case loopback
        /// Every interface (`0.0.0.0`), for AirPlay receivers or other devices
        /// on the LAN. **Risk:** anyone on the network who learns a minted URL
        /// (it carries the secret) can read those resources through this
        /// device; the secret and the allowlist still apply. Opt in only while
        /// such a receiver plays, and stop the server after.
        case allInterfaces
    }

    /// The port; 0 (the default) lets the OS choose one. After a restart of
    /// the listening socket the server keeps the port it first got.
    public var port: Int
    public var binding: Binding
    /// The host written into minted URLs (`127.0.0.1` by default; a LAN
    /// address with ``Binding/allInterfaces``).
    public var advertisedHost: String
    /// Origins the server may fetch besides the URLs it minted, and that a
    /// playlist's URIs on other origins than its own must match. Empty by
    /// default (minted URLs and their playlists' own origins only).
    public var allowlist: OriginAllowlist
    /// Request line, head and header-count bounds (414/431 beyond them).
    public var limits: HTTPLimits
    /// Connections served at once; one more is answered 503 and closed.
    /// 64 by default. With ``responseBufferBytes`` and ``limits`` it bounds
    /// the memory clients can make the server hold (``clientMemoryBound``).
    public var maxConnections: Int
    /// How long a kept-alive connection may sit idle between requests before it is closed. 30 s by default.
    public var idleTimeout: Duration
    /// How long a client has from the first byte of a request to the end of
    /// its head (the slowloris guard): 408 and closed after. 10 s by default.
    public var requestTimeout: Duration
    /// How long a client may take no byte of a response before it is let go
    /// (a paused player reconnects with a `Range` when it resumes). 30 s by default.
    public var sendTimeout: Duration
    /// Bytes of one response held for a client that has not taken them;
    /// beyond this the server stops asking the loader for more until the
    /// client has taken three quarters of them (bounded memory per connection).
    /// 1 MiB by default, at least 16 KiB.
    public var responseBufferBytes: Int
    /// How long a connection waits on the origin, each time it waits: for the
    /// content information, for the first byte of a body, then between body
    /// bytes. 30 s by default. When it expires before the response head went
    /// out, the answer is `504 Gateway Timeout`; after, the connection
    /// closes (the body is cut short). Either way the loading is cancelled.
    /// Meanwhile the connection watches its client: one that hangs up frees
    /// its slot at once.
    public var originWaitTimeout: Duration
    /// The secret in every local URL's path; random (128 bits) when `nil`.
    /// Give the same one across launches only if minted URLs must outlive the process.
    public var secret: String?
    /// Bytes of rewritten HLS playlists the server keeps (each entry costs
    /// its input and output playlists; least recently used dropped first;
    /// a playlist pair larger than this is not kept). 8 MiB by default.
    public var hlsRewriteCacheBytes: Int
    /// Bytes of origin URLs the server remembers having minted local URLs
    /// for (every URI of every playlist it rewrote): the older half is
    /// forgotten when full, and a local URL whose origin was forgotten gets
    /// 403 until its playlist is served again. 16 MiB by default (about a
    /// dozen playlists of 20,000 segments).
    public var mintedURLBytes: Int
    /// Seams of the listening socket, for the package's tests of its restart; none by default.
    package var listenerHooks = ListenerHooks()
    /// Seams of each connection, for the package's tests; none by default.
    package var connectionHooks = ConnectionHooks()

    public init(
        port: Int = 0, binding: Binding = .loopback, advertisedHost: String = "127.0.0.1",
        allowlist: OriginAllowlist = OriginAllowlist(), limits: HTTPLimits = HTTPLimits(), maxConnections: Int = 64,
        idleTimeout: Duration = .seconds(30), requestTimeout: Duration = .seconds(10),
        sendTimeout: Duration = .seconds(30), responseBufferBytes: Int = 1 << 20,
        originWaitTimeout: Duration = .seconds(30), secret: String? = nil,
        hlsRewriteCacheBytes: Int = 8 << 20, mintedURLBytes: Int = 16 << 20
    ) {
        self.port = port
        self.binding = binding
        self.advertisedHost = advertisedHost
        self.allowlist = allowlist
        self.limits = limits
        self.maxConnections = max(1, maxConnections)
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.sendTimeout = sendTimeout
        self.responseBufferBytes = max(16 << 10, responseBufferBytes)
        self.originWaitTimeout = max(.zero, originWaitTimeout)
        self.secret = secret
        self.hlsRewriteCacheBytes = max(0, hlsRewriteCacheBytes)
        self.mintedURLBytes = max(2, mintedURLBytes)
    }

    /// The most bytes of response bodies and request heads all clients
    /// together can make the server hold: per connection, twice
    /// ``responseBufferBytes`` (what waits for the client, and what the
    /// loader hands over meanwhile), one 256 KiB store read, a request head
    /// (``HTTPLimits/maxHeadBytes`` plus one 16 KiB socket read), times
    /// ``maxConnections``. Nothing else a client sends grows with its requests.
    public var clientMemoryBound: Int {
        let perConnection = 2 * responseBufferBytes + (256 << 10) + limits.maxHeadBytes + (16 << 10)
        return maxConnections.multipliedReportingOverflow(by: perConnection).overflow
            ? Int.max : maxConnections * perConnection
    }
}

/// Seams of a server's listening socket: called, when set, at the points
/// tests of the restart need to see or steer (the package's tests only).
package struct ListenerHooks: Sendable {
    /// Called with each listening socket opened: at ``MediaServer/start()`` and at every restart.
    package var opened: (@Sendable (ListeningSocket) -> Void)?
    /// Called after each close(2) of a listening socket, with its descriptor.
    package var closed: (@Sendable (ListeningSocket, Int32) -> Void)?
    /// Asked before a restart opens a new listening socket: `false` fails
    /// that open as if the port were taken.
    package var mayReopen: (@Sendable () -> Bool)?
    /// Called on the accepting thread just before a restarted listening socket is installed.
    package var willInstall: (@Sendable () -> Void)?

    package init() {}
}

/// Seams of a server's connections: called, when set, on a connection's
/// thread at the points the package's tests need to steer.
package struct ConnectionHooks: Sendable {
    /// Called before each request is answered (a responder slow to answer).
    package var willAnswer: (@Sendable () -> Void)?

    package init() {}
}

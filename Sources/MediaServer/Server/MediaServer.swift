import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A loopback HTTP/1.1 server that plays a `StreamingCache` to any
/// player (ffmpeg, VLC, mpv, GStreamer, a web view, AVPlayer for HLS…).
///
/// Every byte goes through the cache's `ResourceLoader`s, as a
/// `StreamingItem`'s do: clients and items share one download per
/// resource, seeks into holes fetch only the hole, and the cache-key
/// policy, MIME sniffing, revalidation and oversize rule all hold.
///
/// ```swift
/// let server = MediaServer(cache: cache)
/// try server.start()                                   // 127.0.0.1, a free port
/// let local = server.url(for: URL(string: "https://cdn.example.com/a.mp3")!)
/// // hand `local` to any player; it may seek with Range requests
/// server.stop()
/// ```
///
/// Security: it listens on `127.0.0.1` unless told otherwise; every local
/// URL carries a random secret (requests without it get 403); a request
/// whose `Host` is not the server's gets 421 (``HostCheck``); it fetches
/// only URLs it minted with ``url(for:)`` or that match the
/// ``MediaServerConfiguration/allowlist`` (others get 403); a playlist's
/// URIs are minted only on the playlist's own origin or when the allowlist
/// allows them (a multi-CDN master needs each CDN in the list); redirects
/// are judged hop by hop by the cache's `HTTPOrigin`, which should be built
/// with ``OriginAllowlist/redirectPolicy(maxRedirects:)`` (as `cachetool
/// serve` does); request heads, header counts, slow or idle clients and
/// connections are bounded (414, 431, 408, 503). Threads: one accepting, one per connection (blocking
/// socket I/O stays off Swift's cooperative pool). A running server is kept
/// alive by its threads: call ``stop()`` to end it.
public final class MediaServer: Sendable {
    /// The cache bytes are played from.
    public let cache: StreamingCache
    public let configuration: MediaServerConfiguration
    /// The secret in every local URL's path.
    public let secret: String

    // Unchecked: only used inside `state`'s lock; `Thread` and the sockets are not Sendable.
    private struct State: @unchecked Sendable {
        var listener: ListeningSocket?
        var port: Int?
        var running = false
        var acceptThread: Thread?
        var connections: [ObjectIdentifier: Connection] = [:]
        var minted: MintedOrigins
    }

    private let state: Locked<State>
    private let counters = Locked(MediaServerStatistics())
    private let observers = Locked<(next: Int, all: [Int: AsyncStream<MediaServerEvent>.Continuation])>((0, [:]))
    /// Signalled when the accept thread ends.
    private let acceptEnded = NSCondition()
    /// Signalled when the accept thread installs a new listening socket.
    private let listenerChanged = NSCondition()
    /// Loaders of recently played origins, shared by the requests of a player.
    let loaders: LoaderPool
    /// Where HLS resources are read and kept (shared with the cache's ``HLSDownloader``s).
    let hlsResources: HLSResourceStore
    /// Playlists served lately, by local path: the bytes read and their rewriting.
    let hlsRewrites: RewriteCache
    /// Called after each close(2) of a listening socket (set before ``start()``).
    let listenerClosedForTesting = Locked<(@Sendable (ListeningSocket, Int32) -> Void)?>(nil)
    /// How many of the next restarts' listening sockets fail to open (as when the port is taken).
    let failingListenerOpensForTesting = Locked(0)
    /// Called on the accepting thread just before a restarted listening socket is installed.
    let willInstallListenerForTesting = Locked<(@Sendable () -> Void)?>(nil)

    public init(cache: StreamingCache, configuration: MediaServerConfiguration = MediaServerConfiguration()) {
        self.cache = cache
        self.hlsResources = HLSResourceStore.shared(for: cache)
        self.configuration = configuration
        self.secret = configuration.secret ?? Self.randomSecret()
        self.loaders = LoaderPool(cache: cache)
        self.hlsRewrites = RewriteCache(budget: configuration.hlsRewriteCacheBytes)
        self.state = Locked(State(minted: MintedOrigins(budget: configuration.mintedURLBytes)))
    }

    private static func randomSecret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }
            .map { String(repeating: "0", count: 16 - $0.count) + $0 }.joined()
    }

    deinit {
        stop()
    }

    // MARK: Lifecycle

    /// Starts listening (on the configured port, 0 for one the OS picks;
    /// after a ``stop()``, on the port it had). Does nothing if running.
    ///
    /// - throws: ``MediaServerError`` when the port cannot be bound.
    public func start() throws(MediaServerError) {
        guard secret.utf8.allSatisfy({ HTTPRequestParser.isTokenByte($0) && !"!#$%&'*+.^`|~".utf8.contains($0) }),
            !secret.isEmpty
        else { throw .invalidSecret }
        signal(SIGPIPE, SIG_IGN)
        let port = state.withLock { $0.running ? nil : ($0.port ?? configuration.port) }
        guard let port else { return }
        let listener = try listen(on: port)
        let thread = Thread { [self] in acceptLoop() }
        thread.name = "MediaServer accept"
        state.withLock {
            $0.listener = listener
            $0.port = listener.port
            $0.running = true
            $0.acceptThread = thread
        }
        thread.start()
        HLSLoopback.register(ObjectIdentifier(self), cache: cache) { [weak self] url in
            guard let self, self.isRunning else { return nil }
            return self.hlsURL(for: url)
        }
        emit(.started(port: listener.port))
    }

    /// Binds `port`. A given port taken by someone else (`EADDRINUSE`) is
    /// tried again every 50 ms for up to 2 s: after a ``stop()``, the
    /// port the minted URLs name may be held for a moment by a client
    /// connection's ephemeral port (a restart failed so in CI).
    private func listen(on port: Int) throws(MediaServerError) -> ListeningSocket {
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            do {
                return try ListeningSocket(
                    port: port, allInterfaces: configuration.binding == .allInterfaces,
                    closedForTesting: listenerClosedForTesting.current)
            } catch .cannotListen(_, let reason)
                where port != 0 && reason == String(cString: strerror(EADDRINUSE)) && ContinuousClock.now < deadline
            {
                usleep(50_000)
            }
        }
    }

    /// Stops listening, ends every connection and the loading requests they
    /// wait on, and returns once the accepting thread is gone. Minted URLs
    /// work again after ``start()`` (same port, same secret).
    public func stop() {
        let (wasRunning, connections) = state.withLock { state -> (Bool, [Connection]) in
            let was = state.running
            state.running = false
            return (was, Array(state.connections.values))
        }
        guard wasRunning else { return }
        HLSLoopback.unregister(ObjectIdentifier(self))
        for connection in connections { connection.abort() }
        acceptEnded.lock()
        while state.current.acceptThread != nil { _ = acceptEnded.wait(until: Date() + 0.05) }
        acceptEnded.unlock()
        // Connections end on their threads; wait a little for them.
        for _ in 0..<200 where !state.current.connections.isEmpty {
            for connection in state.current.connections.values { connection.abort() }
            usleep(5_000)
        }
        loaders.removeAll()
        emit(.stopped)
    }

    /// Whether it is accepting connections.
    public var isRunning: Bool { state.current.running }

    /// The port it listens on (`nil` before the first ``start()``).
    public var port: Int? { state.current.port }

    /// `http://host:port` of this server.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://\(configuration.advertisedHost):\($0)") }
    }

    /// The URL a player should open for `originURL`: the server's address,
    /// its secret, the origin URL (encoded) and its file name. The origin
    /// is allowed from now on. Call after ``start()`` (the port is in it).
    /// An HLS playlist (`.m3u8`, `.m3u`) gets its ``hlsURL(for:)``.
    public func url(for originURL: URL) -> URL {
        if ["m3u8", "m3u"].contains(originURL.pathExtension.lowercased()) { return hlsURL(for: originURL) }
        mint(originURL)
        let port = self.port ?? configuration.port
        return URL(
            string: "http://\(configuration.advertisedHost):\(port)" + ServerRoute.path(for: originURL, secret: secret))!
    }

    /// Checks the listening socket and opens it again on the same port if
    /// the OS closed it (iOS does in the background); call it when the app
    /// returns to the foreground. The accepting thread notices on its own
    /// within a fraction of a second and opens it again (it alone does, so
    /// a socket is never closed twice): this waits for that, up to about
    /// 2 s. Returns whether it listens.
    @discardableResult
    public func ensureListening() -> Bool {
        let deadline = Date() + 2
        listenerChanged.lock()
        defer { listenerChanged.unlock() }
        while true {
            guard let listener = state.withLock({ $0.running ? $0.listener : nil }) else { return false }
            if listener.isListening { return true }
            guard Date() < deadline else { return false }
            _ = listenerChanged.wait(until: min(deadline, Date() + 0.05))
        }
    }

    // MARK: Observation

    /// Counters since the server was made.
    public var statistics: MediaServerStatistics {
        var result = counters.current
        result.activeConnections = state.current.connections.count
        return result
    }

    /// Events from now until the returned stream is dropped.
    public func events() -> AsyncStream<MediaServerEvent> {
        let (stream, continuation) = AsyncStream<MediaServerEvent>.makeStream(bufferingPolicy: .bufferingNewest(1024))
        let id = observers.withLock { observers -> Int in
            observers.next += 1
            observers.all[observers.next] = continuation
            return observers.next
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.observers.withLock { $0.all.removeValue(forKey: id) }
        }
        return stream
    }

    func emit(_ event: MediaServerEvent) {
        for continuation in observers.current.all.values { continuation.yield(event) }
    }

    func count(_ body: (inout MediaServerStatistics) -> Void) { counters.withLock(body) }

    // MARK: Internals

    /// Allows `origin` from now on.
    func mint(_ origin: URL) {
        state.withLock { $0.minted.insert(origin.absoluteString) }
    }

    /// Whether `origin` may be fetched: minted by ``url(for:)`` or allowlisted.
    /// A minted one asked for is minted again: what players use stays (a VOD
    /// playlist is served once, its segments asked for over the whole play).
    func isAllowed(_ origin: URL) -> Bool {
        let url = origin.absoluteString
        let minted = state.withLock { state -> Bool in
            guard state.minted.contains(url) else { return false }
            state.minted.insert(url)
            return true
        }
        return minted || configuration.allowlist.allows(origin)
    }

    /// Why `origin` is not allowed, for the 403 a player gets.
    func refusal(of origin: URL) -> String {
        let host = HostClass(url: origin)
        if host.isPublic {
            return "origin not allowed: \(WebOrigin(origin)?.description ?? "?") is not in the allowlist"
        }
        return "origin not allowed: \(host) not named by the allowlist (host and port)"
    }

    /// The `Host` check of every request (the advertised host and port, and loopback names on loopback).
    var hostCheck: HostCheck {
        HostCheck(
            advertisedHost: configuration.advertisedHost, port: port ?? configuration.port,
            loopbackOnly: configuration.binding == .loopback)
    }

    /// Bytes of minted origin URLs remembered (at most ``MediaServerConfiguration/mintedURLBytes``).
    var mintedBytes: Int { state.withLock { $0.minted.bytes } }

    func connectionEnded(_ connection: Connection) {
        state.withLock { _ = $0.connections.removeValue(forKey: ObjectIdentifier(connection)) }
    }

    /// Shuts the listening socket down as the OS does when it reclaims it (tests of the restart).
    func breakListenerForTesting() {
        state.current.listener?.breakListening()
    }

    /// The accepting thread: the only one that waits on listening sockets
    /// and closes them (restarts included).
    private func acceptLoop() {
        defer {
            let listener = state.withLock { state -> ListeningSocket? in
                defer {
                    state.listener = nil
                    state.acceptThread = nil
                }
                return state.listener
            }
            listener?.close()
            acceptEnded.lock()
            acceptEnded.broadcast()
            acceptEnded.unlock()
        }
        while let listener = state.withLock({ $0.running ? $0.listener : nil }) {
            switch listener.accept(waiting: 200) {
            case .none:
                continue
            case .connection(let descriptor):
                admit(descriptor)
            case .dead:
                guard state.current.running else { return }
                if !restartListener(replacing: listener) { usleep(200_000) }
            }
        }
    }

    /// Opens a new listening socket on the same port in place of `old`
    /// (on the accepting thread only). `old` is closed once the new one is
    /// installed, or first when it may still hold the port; when the server
    /// stopped meanwhile, the accept loop closes it on its way out.
    private func restartListener(replacing old: ListeningSocket) -> Bool {
        let port = old.port
        var opened = openListener(port: port)
        if opened == nil {
            // The old one may still hold the port: close it and try once more.
            old.close()
            opened = openListener(port: port)
        }
        guard let fresh = opened else { return false }
        willInstallListenerForTesting.current?()
        let installed = state.withLock { state -> Bool in
            guard state.running, state.listener === old else { return false }
            state.listener = fresh
            return true
        }
        guard installed else {
            fresh.close()
            return false
        }
        old.close()
        count { $0.listenerRestarts += 1 }
        listenerChanged.lock()
        listenerChanged.broadcast()
        listenerChanged.unlock()
        emit(.listenerRestarted(port: fresh.port))
        return true
    }

    /// A new listening socket on `port`, or `nil` when it cannot be bound.
    private func openListener(port: Int) -> ListeningSocket? {
        let failing = failingListenerOpensForTesting.withLock { failing -> Bool in
            guard failing > 0 else { return false }
            failing -= 1
            return true
        }
        if failing { return nil }
        return try? ListeningSocket(
            port: port, allInterfaces: configuration.binding == .allInterfaces,
            closedForTesting: listenerClosedForTesting.current)
    }

    private func admit(_ descriptor: Int32) {
        count { $0.connectionsAccepted += 1 }
        let connection = Connection(descriptor: descriptor, server: self)
        let admitted = state.withLock { state -> Bool in
            guard state.running, state.connections.count < configuration.maxConnections else { return false }
            state.connections[ObjectIdentifier(connection)] = connection
            return true
        }
        guard admitted else {
            count {
                $0.connectionsRefused += 1
                $0.serverErrors += 1
            }
            emit(.refused(status: 503, reason: "too many connections"))
            connection.refuseAtOnce(503, "too many connections", extra: [("Retry-After", "1")])
            return
        }
        let thread = Thread { connection.run() }
        thread.name = "MediaServer connection"
        thread.stackSize = 512 << 10
        thread.start()
    }
}

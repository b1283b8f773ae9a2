import Foundation
import MediaHLS
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
/// let resources = HLSResourceStore(cache: cache)       // one per cache, shared with downloads
/// let server = MediaServer(resources: resources)
/// try server.start()                                   // 127.0.0.1, a free port
/// let local = server.url(for: URL(string: "https://cdn.example.com/a.mp3")!)
/// // hand `local` to any player; it may seek with Range requests
/// let downloader = HLSDownloader(resources: resources) // shares the server's HLS fetches
/// server.stop()
/// ```
///
/// It is the app's `PlaylistLocalizer`: give it to a `CachingAVPlayerItem`
/// so that HLS plays through it.
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
/// connections are bounded (414, 431, 408, 503). Threads: one per
/// connection (blocking socket I/O stays off Swift's cooperative pool); the
/// thread that accepts a connection hands accepting over to another and
/// serves it; a thread whose connection ended waits up to 10 s to accept or
/// serve again (``stop()`` ends the waiting ones). A running server is kept
/// alive by its threads: call ``stop()`` to end it.
///
/// Inside, a connection only moves bytes: each request goes to a
/// `Responder` (routing, the `Host` check and the secret, the allowlist,
/// HLS, status mapping), made at ``start()`` with what it needs (the
/// loaders, the HLS responder and its rewrite cache, the origins minted);
/// no part calls back into the server. No process-wide signal disposition
/// is changed: every socket write passes `MSG_NOSIGNAL` (`SO_NOSIGPIPE` on
/// Apple platforms), so a client that hangs up never raises `SIGPIPE`.
public final class MediaServer: PlaylistLocalizer, Sendable {
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
        /// Whether the accepting thread runs.
        var accepting = false
        /// Wakes the accepting thread (``stop()``, ``ensureListening()``).
        var wake: WakeSignal?
        var connections: [ObjectIdentifier: Connection] = [:]
    }

    private let state = Locked(State())
    /// Held for the whole of a ``start()`` or ``stop()``: a start waits until
    /// a stop under way has seen its accepting thread end (that thread
    /// would otherwise take the new socket, and its end the new state).
    private let lifecycle = NSLock()
    /// Broadcast when the accepting thread ends, a listening socket is installed, or a connection ends.
    private let changed = NSCondition()
    /// Counters and observers.
    private let activity = ServerActivity()
    /// The threads connections run on (a finished connection's thread waits a while for the next).
    private let threads = ConnectionThreads()
    /// Loaders of recently played origins, shared by the requests of a player.
    let loaders: LoaderPool
    /// The types sniffed from complete entries answered from the store.
    let sniffedTypes = SniffedTypes()
    /// The routes of recently requested targets.
    let routes = RouteCache()
    /// The origins minted and the allowlist.
    let permissions: OriginPermissions
    /// The HLS responder (with the rewrite cache).
    let hls: HLSResponder

    /// A server over `resources`' cache, fetching and keeping HLS resources
    /// through `resources` (give the same store to the app's `HLSDownloader`s
    /// and `HLSDownloadPerformer`s: a resource the player and a download both
    /// want is fetched once).
    public init(resources: HLSResourceStore, configuration: MediaServerConfiguration = MediaServerConfiguration()) {
        let cache = resources.cache
        self.cache = cache
        self.configuration = configuration
        self.secret = configuration.secret ?? Self.randomSecret()
        self.loaders = LoaderPool(cache: cache)
        self.permissions = OriginPermissions(
            allowlist: configuration.allowlist, mintedBudget: configuration.mintedURLBytes)
        self.hls = HLSResponder(
            resources: resources, rewriteBudget: configuration.hlsRewriteCacheBytes, permissions: permissions,
            activity: activity)
    }

    /// A server over `cache` with an HLS resource store of its own (see
    /// ``init(resources:configuration:)`` to share one with downloads).
    public convenience init(
        cache: StreamingCache, configuration: MediaServerConfiguration = MediaServerConfiguration()
    ) {
        self.init(resources: HLSResourceStore(cache: cache), configuration: configuration)
    }

    /// Where HLS resources are fetched and kept.
    public var resources: HLSResourceStore { hls.resources }

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
    /// Safe to call while a ``stop()`` on another thread runs: it starts
    /// once that stop has returned.
    ///
    /// - throws: ``MediaServerError`` when the port cannot be bound.
    public func start() throws(MediaServerError) {
        lifecycle.lock()
        defer { lifecycle.unlock() }
        guard secret.utf8.allSatisfy({ HTTPRequestParser.isTokenByte($0) && !"!#$%&'*+.^`|~".utf8.contains($0) }),
            !secret.isEmpty
        else { throw .invalidSecret }
        let port = state.withLock { $0.running ? nil : ($0.port ?? configuration.port) }
        guard let port else { return }
        let listener = try listen(on: port)
        guard let wake = WakeSignal() else {
            listener.close()
            throw .cannotListen(port: port, reason: String(cString: strerror(errno)))
        }
        let context = connectionContext(port: listener.port)
        state.withLock {
            $0.listener = listener
            $0.port = listener.port
            $0.running = true
            $0.accepting = true
            $0.wake = wake
        }
        threads.run { [self] in accept(wake: wake, context: context) }
        activity.emit(.started(port: listener.port))
    }

    /// What each connection is given: a responder for the server listening on `port`, and the bounds.
    private func connectionContext(port: Int) -> ConnectionContext {
        let router = Router(
            secret: secret,
            hostCheck: HostCheck(
                advertisedHost: configuration.advertisedHost, port: port,
                loopbackOnly: configuration.binding == .loopback),
            permissions: permissions, routes: routes)
        let responder = Responder(
            router: router, address: LocalAddress(host: configuration.advertisedHost, port: port, secret: secret),
            loaders: loaders, hls: hls, responseBufferBytes: configuration.responseBufferBytes,
            sniffedTypes: sniffedTypes)
        return ConnectionContext(
            responder: responder, activity: activity, limits: configuration.limits,
            requestTimeout: configuration.requestTimeout,
            idleTimeout: configuration.idleTimeout,
            sendTimeout: configuration.sendTimeout,
            originWaitTimeout: configuration.originWaitTimeout, hooks: configuration.connectionHooks)
    }

    /// Binds `port`. A given port taken by someone else (`EADDRINUSE`) is
    /// tried again every 50 ms for up to 2 s: after a ``stop()``, the
    /// port the minted URLs name may be held for a moment by a client
    /// connection's ephemeral port (a restart failed so in CI); nothing
    /// signals when it is free.
    private func listen(on port: Int) throws(MediaServerError) -> ListeningSocket {
        let deadline = ContinuousClock.now + .seconds(2)
        while true {
            do {
                let listener = try ListeningSocket(
                    port: port, allInterfaces: configuration.binding == .allInterfaces,
                    closed: configuration.listenerHooks.closed)
                configuration.listenerHooks.opened?(listener)
                return listener
            } catch .cannotListen(_, let reason)
                where port != 0 && reason == String(cString: strerror(EADDRINUSE)) && ContinuousClock.now < deadline
            {
                usleep(50_000)
            }
        }
    }

    /// Stops listening, ends every connection and the loading requests they
    /// wait on, and returns once the accepting thread is gone and the
    /// connections have ended (up to 2 s for them; one still on its thread
    /// after that is aborted and no longer counted, neither in
    /// ``statistics`` nor against ``MediaServerConfiguration/maxConnections``
    /// after a ``start()``). Minted URLs work again after ``start()`` (same
    /// port, same secret). A ``start()`` on another thread meanwhile waits for it.
    public func stop() {
        lifecycle.lock()
        defer { lifecycle.unlock() }
        let (wasRunning, connections, wake) = state.withLock { state -> (Bool, [Connection], WakeSignal?) in
            let was = state.running
            state.running = false
            return (was, Array(state.connections.values), state.wake)
        }
        guard wasRunning else { return }
        for connection in connections { connection.abort() }
        wake?.signal()
        // Aborted, each connection ends on its thread at once (its waits are woken).
        let deadline = Date() + 2
        changed.lock()
        while state.current.accepting { changed.wait() }
        while !state.current.connections.isEmpty, changed.wait(until: deadline) {}
        changed.unlock()
        state.withLock {
            $0.wake = nil
            // Aborted, but still on their threads: they end on their own and are not this run's.
            $0.connections = [:]
        }
        threads.endIdle()
        loaders.removeAll()
        activity.emit(.stopped)
    }

    /// Whether it is accepting connections.
    public var isRunning: Bool { state.current.running }

    /// The port it listens on (`nil` before the first ``start()``).
    public var port: Int? { state.current.port }

    /// `http://host:port` of this server.
    public var baseURL: URL? {
        port.flatMap { URL(string: "http://\(configuration.advertisedHost):\($0)") }
    }

    /// Where local URLs point now (the configured port before the first ``start()``).
    private var address: LocalAddress {
        LocalAddress(host: configuration.advertisedHost, port: port ?? configuration.port, secret: secret)
    }

    /// The URL a player should open for `originURL`: the server's address,
    /// its secret, the origin URL (encoded) and its file name. The origin
    /// is allowed from now on. Call after ``start()`` (the port is in it).
    /// An HLS playlist (`.m3u8`, `.m3u`) gets its ``hlsURL(for:)``.
    public func url(for originURL: URL) -> URL {
        if ["m3u8", "m3u"].contains(originURL.pathExtension.lowercased()) { return hlsURL(for: originURL) }
        permissions.mint(originURL)
        return address.url(forMedia: originURL)
    }

    /// The URL a player should open for the HLS playlist `originURL` (a
    /// master playlist or a lone media playlist): playlists are served with
    /// every URI rewritten to a local URL of this server, segments, keys and
    /// init segments from the store or the origin (then kept). The origin is
    /// allowed from now on. Call after ``start()``.
    public func hlsURL(for originURL: URL) -> URL {
        localURL(for: HLSRoute(origin: originURL, kind: .masterPlaylist))
    }

    /// The local URL of the HLS playlist `url` when this server runs over
    /// `cache` (``hlsURL(for:)``); `nil` otherwise.
    public func localURL(forPlaylist url: URL, cache: StreamingCache) -> URL? {
        guard cache === self.cache, isRunning else { return nil }
        return hlsURL(for: url)
    }

    /// The local URL of `route`; its origin is allowed from now on.
    func localURL(for route: HLSRoute) -> URL {
        permissions.mint(route.origin)
        return address.url(for: route)
    }

    /// Checks the listening socket and opens it again on the same port if
    /// the OS closed it (iOS does in the background); call it when the app
    /// returns to the foreground. It wakes the accepting thread, which looks
    /// at once and opens it again (it alone does, so a socket is never
    /// closed twice), and waits for that, up to about 2 s. Returns whether it listens.
    @discardableResult
    public func ensureListening() -> Bool {
        let deadline = Date() + 2
        state.current.wake?.signal()
        changed.lock()
        defer { changed.unlock() }
        while true {
            guard let listener = state.withLock({ $0.running ? $0.listener : nil }) else { return false }
            if listener.isListening { return true }
            guard changed.wait(until: deadline) else {
                return state.withLock { $0.running ? $0.listener : nil }?.isListening ?? false
            }
        }
    }

    // MARK: Observation

    /// Counters since the server was made.
    public var statistics: MediaServerStatistics {
        var result = activity.statistics
        result.activeConnections = state.current.connections.count
        return result
    }

    /// Events from now until the returned stream is dropped.
    public func events() -> AsyncStream<MediaServerEvent> {
        activity.events()
    }

    // MARK: Accepting

    /// Accepting, on a connection thread: the accepting thread is the only
    /// one that waits on listening sockets and closes them (restarts
    /// included). It waits for a connection or `wake`, and looks every 200 ms
    /// whether the socket still listens (the OS may reclaim it without
    /// waking the wait). The connection it admits it serves itself: it hands
    /// accepting over to another thread (a waiting one, usually) before the
    /// connection first waits or answers (``Connection/run(handingOff:)``),
    /// so a request already there is read without a wake-up of a second
    /// thread, and one still on its way comes while the hand-over happens.
    /// When the server stops, it closes the listening socket and ends.
    private func accept(wake: WakeSignal, context: ConnectionContext) {
        guard let (connection, id) = acceptUntilAdmitted(wake: wake, context: context) else {
            let listener = state.withLock { state -> ListeningSocket? in
                defer { state.listener = nil }
                return state.listener
            }
            listener?.close()
            broadcast { $0.accepting = false }
            return
        }
        serve(connection, id: id) { [self] in
            acceptWaiting(context: context)
            threads.run { [self] in accept(wake: wake, context: context) }
        }
    }

    /// Accepts the connections already waiting (a burst: a player opening
    /// several), at most ``MediaServerConfiguration/maxConnections``, each
    /// served on a thread of its own; on the accepting thread, as it hands
    /// accepting over (after its own connection's first read, not before).
    private func acceptWaiting(context: ConnectionContext) {
        guard let listener = state.withLock({ $0.running ? $0.listener : nil }) else { return }
        for _ in 0..<configuration.maxConnections {
            guard let descriptor = listener.acceptPending() else { return }
            guard let (connection, id) = admit(descriptor, context: context) else { continue }
            threads.run { [self] in serve(connection, id: id, handingOff: nil) }
        }
    }

    /// Accepts until a connection is admitted (refused ones are answered
    /// here); `nil` once the server stopped.
    private func acceptUntilAdmitted(
        wake: WakeSignal, context: ConnectionContext
    ) -> (Connection, ObjectIdentifier)? {
        while let listener = state.withLock({ $0.running ? $0.listener : nil }) {
            switch listener.accept(waiting: 200, wake: wake) {
            case .none, .woken:
                continue
            case .connection(let descriptor):
                if let admitted = admit(descriptor, context: context) { return admitted }
            case .dead:
                guard state.current.running else { return nil }
                if !restartListener(replacing: listener) { _ = wake.wait(milliseconds: 200) }
            }
        }
        return nil
    }

    /// Changes `state` and wakes whoever waits on ``changed``.
    private func broadcast(_ change: (inout State) -> Void) {
        state.withLock(change)
        changed.lock()
        changed.broadcast()
        changed.unlock()
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
        configuration.listenerHooks.willInstall?()
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
        activity.count { $0.listenerRestarts += 1 }
        broadcast { _ in }
        activity.emit(.listenerRestarted(port: fresh.port))
        return true
    }

    /// A new listening socket on `port`, or `nil` when it cannot be bound.
    private func openListener(port: Int) -> ListeningSocket? {
        let hooks = configuration.listenerHooks
        if let mayReopen = hooks.mayReopen, !mayReopen() { return nil }
        guard
            let listener = try? ListeningSocket(
                port: port, allInterfaces: configuration.binding == .allInterfaces, closed: hooks.closed)
        else { return nil }
        hooks.opened?(listener)
        return listener
    }

    /// The connection on `descriptor` with its slot taken; `nil` when it was
    /// refused (503, over ``MediaServerConfiguration/maxConnections``, or
    /// the server stopped).
    private func admit(_ descriptor: Int32, context: ConnectionContext) -> (Connection, ObjectIdentifier)? {
        activity.count { $0.connectionsAccepted += 1 }
        let connection = Connection(descriptor: descriptor, context: context)
        let id = ObjectIdentifier(connection)
        let admitted = state.withLock { state -> Bool in
            guard state.running, state.connections.count < configuration.maxConnections else { return false }
            state.connections[id] = connection
            return true
        }
        guard admitted else {
            let refusal = Response.refusal(503, "too many connections", method: "GET", extra: [("Retry-After", "1")])
            activity.count { $0.connectionsRefused += 1 }
            activity.countAnswer(status: 503)
            activity.emit(.refused(status: 503, reason: "too many connections"))
            connection.refuseAtOnce(refusal)
            return nil
        }
        return (connection, id)
    }

    /// Serves an admitted connection to its end on the calling thread, then
    /// frees its slot; `handOff` (accepting, given to another thread) runs
    /// before the connection first waits or answers.
    private func serve(_ connection: Connection, id: ObjectIdentifier, handingOff handOff: (@Sendable () -> Void)?) {
        connection.run(handingOff: handOff)
        // The slot is free before the client sees the close.
        broadcast { _ = $0.connections.removeValue(forKey: id) }
        connection.close()
    }
}

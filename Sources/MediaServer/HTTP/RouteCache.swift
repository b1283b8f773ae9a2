import MediaSupport

/// The routes of the request targets a server answered lately: a player
/// asks for one local URL many times (probing, seeking), and decoding its
/// origin URL is most of a request's routing. Only media and HLS routes
/// are kept (what a player repeats; only a target carrying the secret has
/// one), at most `capacity` targets (each within
/// ``HTTPLimits/maxRequestLineBytes``); when full, it starts over. A cached route is the one
/// ``ServerRoute/resolve(_:secret:)`` gives (it is pure): what the
/// request may do is still decided on each request (the `Host`, the
/// allowlist).
final class RouteCache: Sendable {
    private let routes = Locked<[Key: ServerRoute]>([:])
    private let capacity: Int

    init(capacity: Int = 64) {
        self.capacity = max(1, capacity)
    }

    /// ``ServerRoute/resolve(_:secret:)`` of `target`, kept when it is a media or HLS route.
    func route(of target: String, secret: String) -> ServerRoute {
        let key = Key(target: target, secret: secret)
        if let known = routes.withLock({ $0[key] }) { return known }
        let route = ServerRoute.resolve(target, secret: secret)
        switch route {
        case .media, .hls:
            routes.withLock { routes in
                if routes.count >= capacity { routes.removeAll(keepingCapacity: true) }
                routes[key] = route
            }
        case .ping, .forbidden, .notFound, .badTarget:
            break
        }
        return route
    }

    /// The targets kept.
    var count: Int { routes.withLock { $0.count } }

    /// A target with the secret it was resolved for: a route is never given for another secret.
    private struct Key: Hashable {
        var target: String
        var secret: String
    }
}

import Foundation

/// The first decision on every request of a server, before anything is
/// fetched: the method, the `Host` check (DNS rebinding), the secret and
/// the route, and whether the origin may be fetched. No I/O.
struct Router: Sendable {
    /// What a request leads to.
    enum Decision: Sendable, Equatable {
        /// `/ping`: 200, no secret needed.
        case ping
        /// Refused with `status` and `reason` before anything is fetched;
        /// `closesConnection` when the connection must end after it (a bad
        /// target, a misdirected or malformed `Host`); `allow` is the `Allow` field of a 405.
        case refuse(status: Int, reason: String, closesConnection: Bool, allow: String?)
        /// A media resource of this origin URL, allowed.
        case media(URL)
        /// An HLS resource, allowed.
        case hls(HLSRoute)
    }

    /// The secret every local URL carries.
    let secret: String
    /// The `Host` values accepted.
    let hostCheck: HostCheck
    /// The origins that may be fetched.
    let permissions: OriginPermissions
    /// The routes of recent targets (the server's, kept across its restarts).
    var routes = RouteCache()

    /// The decision on `request`.
    func decide(_ request: HTTPRequest) -> Decision {
        guard request.method == "GET" || request.method == "HEAD" else {
            return .refuse(status: 405, reason: "only GET and HEAD", closesConnection: false, allow: "GET, HEAD")
        }
        switch hostCheck.check(request) {
        case .accepted:
            break
        case .misdirected(let reason):
            return .refuse(status: 421, reason: reason, closesConnection: true, allow: nil)
        case .malformed(let reason):
            return .refuse(status: 400, reason: reason, closesConnection: true, allow: nil)
        }
        switch routes.route(of: request.target, secret: secret) {
        case .ping:
            return .ping
        case .badTarget:
            return .refuse(status: 400, reason: "the target must be a path", closesConnection: true, allow: nil)
        case .forbidden:
            return .refuse(status: 403, reason: "forbidden", closesConnection: false, allow: nil)
        case .notFound:
            return .refuse(status: 404, reason: "not a local URL of this server", closesConnection: false, allow: nil)
        case .media(let origin):
            guard permissions.isAllowed(origin) else {
                return .refuse(
                    status: 403, reason: permissions.refusal(of: origin), closesConnection: false, allow: nil)
            }
            return .media(origin)
        case .hls(let route):
            guard permissions.isAllowed(route.origin) else {
                return .refuse(
                    status: 403, reason: permissions.refusal(of: route.origin), closesConnection: false, allow: nil)
            }
            return .hls(route)
        }
    }
}

import Foundation

/// Which redirects an ``HTTPOrigin`` follows, judged hop by hop.
///
/// Every hop (`from` → `to`) must pass ``allows``, and a request follows at
/// most ``maxRedirects`` of them; a refused hop or one too many fails the
/// request with ``OriginError/redirectRefused(from:to:)`` or
/// ``OriginError/tooManyRedirects(limit:url:)`` before any body is read.
/// Whatever the policy, a hop to another origin (scheme, host, port:
/// ``WebOrigin``) carries no caller header — no `Authorization`,
/// `Cookie`, `Proxy-Authorization`, nor any header of
/// ``HTTPOrigin/headers`` or ``OriginRequest/headers`` — only the range,
/// validators and `Accept-Encoding`; a hop back to the first URL's origin
/// carries them again.
///
/// ```swift
/// // Follow only hops that stay on the same origin or go to cdn.example.com:
/// let policy = RedirectPolicy.sameOrigin(or: { $0.host == "cdn.example.com" })
/// let origin = HTTPOrigin(redirects: policy)
/// ```
public struct RedirectPolicy: Sendable {
    /// Redirects one request follows at most (5 by default); 0 follows none.
    public var maxRedirects: Int
    /// Whether the hop from `from` to `to` may be followed (`from` is the
    /// URL that answered with the redirect; it passed this check itself).
    public var allows: @Sendable (_ from: URL, _ to: URL) -> Bool

    /// - parameter maxRedirects: hops one request follows at most (default 5).
    /// - parameter allows: the check of each hop; by default any `http` or `https` URL.
    public init(
        maxRedirects: Int = 5,
        allows: @escaping @Sendable (_ from: URL, _ to: URL) -> Bool = { _, to in WebOrigin(to) != nil }
    ) {
        self.maxRedirects = max(0, maxRedirects)
        self.allows = allows
    }

    /// Any `http`/`https` hop, up to 5, without caller headers across origins.
    public static let standard = RedirectPolicy()

    /// Hops to an `http`/`https` URL that stay on the origin of the URL they
    /// leave, or whose target passes `check` (an allowlist), up to `maxRedirects`.
    ///
    /// - parameter check: whether a URL on another origin may be reached.
    /// - parameter maxRedirects: hops one request follows at most (default 5).
    public static func sameOrigin(
        or check: @escaping @Sendable (URL) -> Bool, maxRedirects: Int = 5
    ) -> RedirectPolicy {
        RedirectPolicy(maxRedirects: maxRedirects) { from, to in
            WebOrigin(to) != nil && (WebOrigin.same(from, to) || check(to))
        }
    }
}

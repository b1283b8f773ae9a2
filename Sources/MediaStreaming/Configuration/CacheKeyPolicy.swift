import Foundation

/// Maps a request URL to the key its bytes are cached under.
///
/// The default is the URL itself. Signed URLs carry a token that changes
/// with every session; ``droppingQueryItems(_:)`` removes such items so
/// `…/a.mp3?token=1` and `…/a.mp3?token=2` share one entry.
public struct CacheKeyPolicy: Sendable {
    private let transform: @Sendable (URL) -> String

    /// A policy from any function of the URL.
    public init(_ transform: @escaping @Sendable (URL) -> String) {
        self.transform = transform
    }

    /// The key for `url`.
    public func key(for url: URL) -> String { transform(url) }

    /// The URL's absolute string, unchanged.
    public static let url = CacheKeyPolicy { $0.absoluteString }

    /// The URL without the named query items (case-sensitive names);
    /// the other items keep their order. A query left empty is removed.
    public static func droppingQueryItems(_ names: Set<String>) -> CacheKeyPolicy {
        CacheKeyPolicy { url in
            guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false),
                let items = components.queryItems
            else { return url.absoluteString }
            let kept = items.filter { !names.contains($0.name) }
            components.queryItems = kept.isEmpty ? nil : kept
            return components.url?.absoluteString ?? url.absoluteString
        }
    }
}

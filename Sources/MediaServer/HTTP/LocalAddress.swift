import Foundation

/// Where a server's local URLs point: the advertised host, the port and
/// the secret. Pure.
struct LocalAddress: Sendable, Equatable {
    var host: String
    var port: Int
    var secret: String

    /// `http://host:port` followed by `path`.
    func url(path: String) -> URL {
        URL(string: "http://\(host):\(port)" + path)!
    }

    /// The local URL of the media resource `origin`.
    func url(forMedia origin: URL) -> URL {
        url(path: ServerRoute.path(for: origin, secret: secret))
    }

    /// The local URL of the HLS resource `route`.
    func url(for route: HLSRoute) -> URL {
        url(path: route.path(secret: secret))
    }
}

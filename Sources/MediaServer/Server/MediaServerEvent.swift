import Foundation

/// What a ``MediaServer`` tells its observers (``MediaServer/events()``).
public enum MediaServerEvent: Sendable, Equatable {
    /// Listening on this port.
    case started(port: Int)
    /// The listening socket died (the OS reclaimed it) and was opened again on the same port.
    case listenerRestarted(port: Int)
    /// A media request was answered: the origin URL, the status, the body bytes sent,
    /// and whether the whole body went out (`false`: the client left or the origin failed mid-body).
    case served(origin: URL, status: Int, bytes: Int, complete: Bool)
    /// A request was refused before any media byte: the status and a short reason.
    case refused(status: Int, reason: String)
    /// A playlist URI was not minted (its local URL answers 403): it is on
    /// another origin than its playlist and the allowlist does not allow it.
    case playlistURIRefused(playlist: URL, uri: URL, reason: String)
    /// Every connection and download ended.
    case stopped
}

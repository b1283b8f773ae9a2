import Foundation
import MediaStore
import MediaStreaming
import MediaSupport

/// The origin URLs a server minted local URLs for (the ones it may fetch),
/// bounded by bytes: kept in two generations; once the newer holds half
/// of ``budget``, the older is forgotten and the newer takes its place. A
/// URL minted again (its playlist served again, or itself asked for) joins the newer
/// generation, so what players use now stays; a local URL of a playlist
/// not served for long may be forgotten (403 until it is served again).
struct MintedOrigins: Sendable {
    /// The most bytes of URLs remembered.
    let budget: Int
    private var newer: Set<String> = []
    private var older: Set<String> = []
    private var newerBytes = 0
    private var olderBytes = 0

    init(budget: Int) { self.budget = max(2, budget) }

    /// Remembers `url`.
    mutating func insert(_ url: String) {
        guard !newer.contains(url) else { return }
        if newerBytes + url.utf8.count > budget / 2 {
            older = newer
            olderBytes = newerBytes
            newer = []
            newerBytes = 0
        }
        newer.insert(url)
        newerBytes += url.utf8.count
    }

    /// Whether `url` is remembered.
    func contains(_ url: String) -> Bool { newer.contains(url) || older.contains(url) }

    /// Bytes of the URLs remembered.
    var bytes: Int { newerBytes + olderBytes }
}

/// Which origin URLs a server may fetch: those it minted a local URL for
/// (remembered within a byte budget, see ``MintedOrigins``) and those its
/// ``OriginAllowlist`` allows. Shared by the server (which mints) and its
/// responder (which checks, and mints a playlist's URIs).
final class OriginPermissions: Sendable {
    let allowlist: OriginAllowlist
    private let minted: Locked<MintedOrigins>

    init(allowlist: OriginAllowlist, mintedBudget: Int) {
        self.allowlist = allowlist
        self.minted = Locked(MintedOrigins(budget: mintedBudget))
    }

    /// Allows `origin` from now on.
    func mint(_ origin: URL) {
        minted.withLock { $0.insert(origin.absoluteString) }
    }

    /// Whether `origin` may be fetched: minted or allowlisted. A minted
    /// one asked for is minted again: what players use stays (a VOD
    /// playlist is served once, its segments asked for over the whole play).
    func isAllowed(_ origin: URL) -> Bool {
        let url = origin.absoluteString
        let isMinted = minted.withLock { minted -> Bool in
            guard minted.contains(url) else { return false }
            minted.insert(url)
            return true
        }
        return isMinted || allowlist.allows(origin)
    }

    /// Why `origin` is not allowed, for the 403 a player gets.
    func refusal(of origin: URL) -> String {
        let host = HostClass(url: origin)
        if host.isPublic {
            return "origin not allowed: \(WebOrigin(origin)?.description ?? "?") is not in the allowlist"
        }
        return "origin not allowed: \(host) not named by the allowlist (host and port)"
    }

    /// Bytes of minted origin URLs remembered (at most the budget).
    var mintedBytes: Int { minted.current.bytes }
}

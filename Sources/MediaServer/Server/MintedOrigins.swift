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

/// What an HLS resource is cached under: the cache key of its URL (after
/// the cache-key policy, so signed-URL tokens can be dropped) and its byte
/// range, so that the segments of a single-file playlist, which share one
/// URL, are distinct entries.
public struct HLSResourceKey: Sendable, Hashable, CustomStringConvertible {
    /// The cache key of the URL.
    public let key: String
    /// The sub-range of the URL's resource; nil for all of it.
    public let byteRange: ByteRange?

    public init(key: String, byteRange: ByteRange? = nil) {
        self.key = key
        self.byteRange = byteRange
    }

    /// One string for the store: `key` alone for a whole resource, else
    /// `key` then ` bytes=FIRST-LAST` (inclusive, as in a Range header).
    /// The space cannot occur in a URL, so no URL key collides with it.
    public var storeKey: String {
        guard let byteRange else { return key }
        return "\(key) bytes=\(byteRange.offset)-\(byteRange.end - 1)"
    }

    public var description: String { storeKey }
}

/// Bounds on what a client may send, so a hostile or broken client costs
/// bounded memory and time.
public struct HTTPLimits: Sendable, Equatable {
    /// Longest request line (method, target, version). Longer: 414.
    public var maxRequestLineBytes: Int
    /// Longest request head (request line and every header). Longer: 431.
    public var maxHeadBytes: Int
    /// Most header fields. More: 431.
    public var maxHeaderCount: Int

    public init(maxRequestLineBytes: Int = 8192, maxHeadBytes: Int = 16384, maxHeaderCount: Int = 64) {
        self.maxRequestLineBytes = max(16, maxRequestLineBytes)
        self.maxHeadBytes = max(self.maxRequestLineBytes, maxHeadBytes)
        self.maxHeaderCount = max(1, maxHeaderCount)
    }
}

import MediaStreaming

extension ContentRange {
    /// The header value: `bytes first-last/total`, or `bytes */total` for a 416
    /// (`*` for an unknown total). Parses back to `self` with `ContentRange/init(header:)`.
    public var headerValue: String {
        let total = self.total.map(String.init) ?? "*"
        guard let range, !range.isEmpty else { return "bytes */\(total)" }
        return "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(total)"
    }
}

/// A video resolution, `WIDTHxHEIGHT` in a playlist.
public struct Resolution: Sendable, Hashable, CustomStringConvertible {
    public let width: Int
    public let height: Int

    public init(width: Int, height: Int) {
        self.width = width
        self.height = height
    }

    /// Parses `1280x720`; nil for anything else.
    init?(parsing text: Substring) {
        let parts = text.split(separator: "x", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, let width = ByteRange.decimalInteger(parts[0]),
            let height = ByteRange.decimalInteger(parts[1])
        else { return nil }
        self.init(width: width, height: height)
    }

    public var description: String { "\(width)x\(height)" }
}

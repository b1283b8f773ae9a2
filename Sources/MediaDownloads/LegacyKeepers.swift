import MediaStreaming

/// The `userInfo` list of the HLS assets that kept an entry, written by
/// versions before store holds (one asset key a line); a queue adopting
/// such an entry's pins reads and shortens it.
package enum LegacyKeepers {
    /// The `userInfo` field.
    package static let field = "hls.keepers"

    /// The asset keys `userInfo` lists; empty on an entry written since holds.
    package static func of(_ userInfo: [String: String]) -> [String] {
        userInfo[field].map { $0.split(separator: "\n").map(String.init) } ?? []
    }
}

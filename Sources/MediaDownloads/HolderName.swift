import Foundation
import MediaStore
import MediaStreaming

/// Builds the store holder names (`MediaStore/hold(_:by:version:)`) of
/// the owners in this module: `"<kind>/<name>"`, the name as it is when
/// the whole fits the store's rules (1–200 UTF-8 bytes, no control
/// characters), else `"<kind>/#"` and the XXH3-128 of the name's bytes in
/// hex: a long or odd cache key still gives one stable holder.
package enum HolderName {
    /// The longest holder name the store takes, in UTF-8 bytes.
    static let maxBytes = 200

    /// The holder named `name` of kind `kind`.
    package static func make(_ kind: String, _ name: String) -> String {
        let plain = kind + "/" + name
        let fits =
            plain.utf8.count <= maxBytes && !name.isEmpty
            && !plain.unicodeScalars.contains { $0.properties.generalCategory == .control }
        if fits { return plain }
        return kind + "/#" + ContentDigest(of: Array(name.utf8)).hexString
    }
}

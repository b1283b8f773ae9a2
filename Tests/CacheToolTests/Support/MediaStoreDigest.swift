import Foundation
import MediaStore

/// The content digest (XXH3-128, as `xxh128sum` prints it) of bytes.
enum MediaStoreDigest {
    static func hex(_ data: Data) -> String {
        ContentDigest(of: data).hexString
    }
}

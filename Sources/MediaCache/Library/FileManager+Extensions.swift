import Foundation

extension FileManager {
    /// The sum of the sizes of the regular files under `url` (logical bytes,
    /// not allocated blocks); `nil` when it cannot be listed (hyperoslo/Cache helper).
    public func sizeOfDirectory(at url: URL) -> Int? {
        guard
            let enumerator = enumerator(
                at: url, includingPropertiesForKeys: [.fileSizeKey, .isRegularFileKey], options: [])
        else { return nil }
        var total = 0
        for case let file as URL in enumerator {
            guard let values = try? file.resourceValues(forKeys: [.fileSizeKey, .isRegularFileKey]),
                values.isRegularFile == true
            else { continue }
            total += values.fileSize ?? 0
        }
        return total
    }
}

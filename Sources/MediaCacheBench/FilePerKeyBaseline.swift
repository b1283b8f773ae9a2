import Foundation

/// The `file-per-key` baseline: how common Swift disk caches work. One
/// file per key in one folder, named by a hash of the key, written with
/// `Data.write(to:options: .atomic)` and read with `Data(contentsOf:)`.
final class FilePerKeyBaseline {
    let directory: URL

    init(directory: URL) throws {
        self.directory = directory
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    /// The file for `key`: 128 bits of FNV-1a over its UTF-8, in hex.
    func url(forKey key: String) -> URL {
        var low: UInt64 = 0xCBF2_9CE4_8422_2325
        var high: UInt64 = 0x6C62_272E_07BB_0142
        for byte in key.utf8 {
            low = (low ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
            high = (high ^ UInt64(byte)) &* 0x0000_0100_0000_01B3 &+ 0x9E37_79B9
        }
        return directory.appendingPathComponent(Self.hex(high) + Self.hex(low), isDirectory: false)
    }

    func set(_ value: Data, forKey key: String) throws {
        try value.write(to: url(forKey: key), options: .atomic)
    }

    func data(forKey key: String) -> Data? {
        try? Data(contentsOf: url(forKey: key))
    }

    func remove(forKey key: String) {
        try? FileManager.default.removeItem(at: url(forKey: key))
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}

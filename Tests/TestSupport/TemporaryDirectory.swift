import Foundation

/// A fresh, not yet created, path under the temporary directory (the
/// caller creates and removes it).
public func temporaryPath(_ label: String) -> URL {
    FileManager.default.temporaryDirectory.appendingPathComponent("mediacache-\(label)-\(UUID().uuidString)")
}

/// A fresh temporary directory, created at once and removed by `remove()`
/// (explicitly, so it can never go while a test still uses its path).
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(_ label: String) throws {
        url = temporaryPath(label)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The path of `name` inside the directory.
    public func path(_ name: String) -> String { url.appendingPathComponent(name).path }

    public func remove() { try? FileManager.default.removeItem(at: url) }
}

/// A fresh, not yet created, directory (in /dev/shm when it is writable,
/// for speed), removed when the object goes. Keep it alive for as long as
/// its path is used (`withExtendedLifetime`, or use it after the work).
public final class ScratchDirectory: Sendable {
    public let url: URL

    public init(_ label: String = "tests") {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let parent = FileManager.default.isWritableFile(atPath: shm.path) ? shm : FileManager.default.temporaryDirectory
        url = parent.appendingPathComponent("mediacache-\(label)-\(UUID().uuidString)", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

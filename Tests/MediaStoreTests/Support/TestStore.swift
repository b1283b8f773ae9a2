import Foundation

@testable import MediaStore

/// A store in a fresh temporary directory, removed on deinit.
final class TestStore {
    let directory: URL
    private(set) var store: MediaStore!

    init(configuration: StoreConfiguration = StoreConfiguration(initialMapSize: 64 << 20), parent: URL? = nil) throws {
        directory = (parent ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("mediastore-test-\(UUID().uuidString)")
        store = try MediaStore(directory: directory, configuration: configuration)
    }

    /// A store on `/dev/shm` where it exists, so that thousands of
    /// commits do not wait for the disk.
    static func inMemoryFileSystem(configuration: StoreConfiguration) throws -> TestStore {
        let shm = URL(fileURLWithPath: "/dev/shm")
        let parent = FileManager.default.isWritableFile(atPath: shm.path) ? shm : nil
        return try TestStore(configuration: configuration, parent: parent)
    }

    /// Closes and reopens the store (the same path, a new environment).
    func reopen(configuration: StoreConfiguration? = nil) throws {
        let configuration = configuration ?? store.configuration
        store.close()
        store = try MediaStore(directory: directory, configuration: configuration)
    }

    deinit {
        store = nil
        try? FileManager.default.removeItem(at: directory)
    }
}

import Foundation

@testable import MediaStore

/// A store in a fresh temporary directory, removed on deinit.
///
/// With `MEDIACACHE_TEST_ENCRYPTION=1` in the environment (`Tools/test`
/// runs the store's suites a second time so) every test store is
/// encrypted unless its configuration says otherwise: the suites that
/// hold for any store then run over an encrypted one.
final class TestStore {
    let directory: URL
    private(set) var store: MediaStore!

    /// Whether this run's test stores are encrypted.
    static let encryptsByDefault = ProcessInfo.processInfo.environment["MEDIACACHE_TEST_ENCRYPTION"] == "1"
    /// The key of this run's encrypted test stores.
    static let defaultKey = try! StoreKey(bytes: [UInt8](repeating: 0x5A, count: StoreKey.byteCount))

    /// `exactly`: the configuration as given, plain in an encrypted run too.
    init(
        configuration: StoreConfiguration = StoreConfiguration(initialMapSize: 64 << 20), parent: URL? = nil,
        exactly: Bool = false
    ) throws {
        directory = (parent ?? FileManager.default.temporaryDirectory)
            .appendingPathComponent("mediastore-test-\(UUID().uuidString)")
        store = try MediaStore(
            directory: directory, configuration: exactly ? configuration : Self.withDefaultEncryption(configuration))
    }

    /// The store at `directory`, opened as a ``TestStore`` opens its own
    /// (encrypted with ``defaultKey`` in an encrypted run).
    static func open(directory: URL, configuration: StoreConfiguration) throws -> MediaStore {
        try MediaStore(directory: directory, configuration: withDefaultEncryption(configuration))
    }

    /// `configuration`, encrypted with ``defaultKey`` in an encrypted run.
    static func withDefaultEncryption(_ configuration: StoreConfiguration) -> StoreConfiguration {
        guard encryptsByDefault, configuration.encryption == nil else { return configuration }
        var encrypted = configuration
        encrypted.encryption = .init(key: defaultKey)
        return encrypted
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
        let configuration = configuration.map(Self.withDefaultEncryption) ?? store.configuration
        store.close()
        store = try MediaStore(directory: directory, configuration: configuration)
    }

    deinit {
        store = nil
        try? FileManager.default.removeItem(at: directory)
    }
}

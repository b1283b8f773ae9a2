import Foundation
import MediaStore
import MediaStreaming
@_exported import StreamingTestSupport
@_exported import TestSupport

/// A store with 16 KiB chunks (so the small fixtures span many chunks)
/// in a fresh temporary directory, and a streaming cache over it whose
/// origin (a ``FakeOrigin``) records every request. Removed on deinit.
final class TestCache: @unchecked Sendable {
    static let chunkSize = 16 * 1024
    let directory: URL
    let origin: FakeOrigin
    let storeConfiguration: StoreConfiguration
    let configuration: StreamingConfiguration
    private(set) var store: MediaStore!
    private(set) var cache: StreamingCache!

    init(
        sizeLimit: Int = 0, accounting: SizeAccounting = .stored,
        configuration: StreamingConfiguration = StreamingConfiguration(chunksPerRequest: 2, stallTimeout: .seconds(2)),
        origin: (any Origin)? = nil
    ) throws {
        directory = temporaryPath("streaming-test")
        storeConfiguration = StoreConfiguration(
            sizeLimit: sizeLimit, sizeAccounting: accounting, chunkSize: Self.chunkSize, initialMapSize: 64 << 20)
        self.configuration = configuration
        // A fake origin already records; any other is put behind one.
        self.origin = (origin as? FakeOrigin) ?? FakeOrigin(origin ?? HTTPOrigin(timeout: .seconds(10)))
        store = try MediaStore(directory: directory, configuration: storeConfiguration)
        cache = StreamingCache(store: store, origin: self.origin, configuration: configuration)
    }

    /// Simulates an app relaunch: a new cache over the store reopened.
    /// Every loader of the old cache must be gone (their tasks end soon after).
    func relaunch() async throws {
        cache = nil
        store = nil
        for attempt in 0... {
            do {
                store = try MediaStore(directory: directory, configuration: storeConfiguration)
                break
            } catch {
                if attempt > 200 { throw error }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        cache = StreamingCache(store: store, origin: origin, configuration: configuration)
    }

    /// A new cache over the same store and origin (a new session: no
    /// content information remembered in memory).
    func freshCache(configuration: StreamingConfiguration? = nil) {
        cache = StreamingCache(store: store, origin: origin, configuration: configuration ?? self.configuration)
    }

    /// Whether every cached byte of `url` equals `original`.
    func cachedBytesMatch(_ url: URL, _ original: Data) throws -> Bool {
        let key = cache.cacheKey(for: url)
        for range in try store.cachedRanges(forKey: key) {
            guard range.upperBound <= original.count else { return false }
            if try store.read(forKey: key, range: range, includeExpired: true) != original[range] { return false }
        }
        return true
    }

    func player(_ url: URL, cacheKey: String? = nil) -> PlayerSimulator {
        PlayerSimulator(loader: cache.loader(for: url, cacheKey: cacheKey))
    }

    /// Waits (up to 5 s) until `url`'s entry is complete: a reader may get
    /// its last bytes a moment before the download commits them.
    func waitUntilComplete(_ url: URL) async throws -> Bool {
        for _ in 0..<500 {
            if try store.info(forKey: cache.cacheKey(for: url))?.isComplete == true { return true }
            try await Task.sleep(for: .milliseconds(10))
        }
        return false
    }

    /// The bytes of `url`'s entry read back from the store.
    func storedBytes(of url: URL) throws -> Data {
        let key = cache.cacheKey(for: url)
        guard let length = try store.info(forKey: key)?.length else { throw FixtureFailure(message: "no entry") }
        return try store.read(forKey: key, range: 0..<length, includeExpired: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }
}

extension Array where Element == Range<Int> {
    /// Total bytes covered.
    var byteCount: Int { reduce(0) { $0 + $1.count } }
}

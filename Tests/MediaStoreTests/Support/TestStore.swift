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

/// Deterministic pseudo-random bytes (SplitMix64), reproducible by seed.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func bytes(_ count: Int) -> [UInt8] {
        var result = [UInt8](repeating: 0, count: count)
        var index = 0
        while index < count {
            let value = next()
            for shift in stride(from: 0, to: 64, by: 8) where index < count {
                result[index] = UInt8(truncatingIfNeeded: value >> UInt64(shift))
                index += 1
            }
        }
        return result
    }
}

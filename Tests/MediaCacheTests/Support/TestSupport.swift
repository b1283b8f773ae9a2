import Foundation
@_exported import TestSupport

@testable import MediaCache

struct User: Codable, Equatable, Sendable {
    var firstName: String
    var lastName: String
}

/// Collects observer events.
final class Recorder<Event>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Event] = []

    func append(_ event: Event) {
        lock.lock()
        storage.append(event)
        lock.unlock()
    }

    var events: [Event] {
        lock.lock()
        defer { lock.unlock() }
        return storage
    }
}

func makeStorage<Value>(
    in directory: ScratchDirectory, name: String = "Cache", diskExpiry: Expiry = .never, maxSize: UInt = 0,
    memoryConfig: MemoryConfig = MemoryConfig(), transformer: Transformer<Value>
) throws -> Storage<String, Value> {
    try Storage<String, Value>(
        diskConfig: DiskConfig(name: name, expiry: diskExpiry, maxSize: maxSize, directory: directory.url),
        memoryConfig: memoryConfig, transformer: transformer)
}

func isNotFound(_ body: () throws -> Void) -> Bool {
    do {
        try body()
        return false
    } catch let error as StorageError {
        return error == .notFound
    } catch {
        return false
    }
}
